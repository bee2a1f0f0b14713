//! `--save-state FILE` and `--load-state FILE`: a drive or a system carried from one run to
//! the next (`docs/state.md`). A state that does not fit the device named, or is damaged, is
//! bad input (exit 2) naming the file and what is wrong.

use std::io::{BufReader, BufWriter};
use std::path::Path;

use anyhow::anyhow;
use flashlab_device::{DeviceConfig, Ssd};
use flashlab_engine::{SeedTree, SimTime};
use flashlab_system::{System, SystemConfig};

use crate::{bad_input, run_failed, Failure};

fn open(path: &Path) -> Result<(BufReader<std::fs::File>, u64), Failure> {
    let file = std::fs::File::open(path)
        .map_err(|e| bad_input(anyhow!("--load-state {}: {e}", path.display())))?;
    let len = file
        .metadata()
        .map_err(|e| bad_input(anyhow!("--load-state {}: {e}", path.display())))?
        .len();
    Ok((BufReader::with_capacity(1 << 20, file), len))
}

fn refused(path: &Path, e: flashlab_engine::StateError) -> Failure {
    bad_input(anyhow!("--load-state {}: {e}", path.display()))
}

/// The drive `config` describes, loaded from `path` when given (with the drive time where
/// its next run starts), else new with the run's seed at time 0.
pub fn drive(
    config: &DeviceConfig,
    load: Option<&Path>,
    seed: u64,
) -> Result<(Ssd, SimTime), Failure> {
    match load {
        Some(path) => {
            let (input, len) = open(path)?;
            Ssd::load_state(config, input, len).map_err(|e| refused(path, e))
        }
        None => Ok((
            Ssd::new(config, SeedTree::new(seed).child("device")).map_err(bad_input)?,
            0,
        )),
    }
}

/// The system `config` describes, as [`drive`] does for a drive.
pub fn system(
    config: &SystemConfig,
    load: Option<&Path>,
    seed: u64,
) -> Result<(System, SimTime), Failure> {
    match load {
        Some(path) => {
            let (input, len) = open(path)?;
            System::load_state(config, input, len).map_err(|e| refused(path, e))
        }
        None => Ok((
            System::build(config, SeedTree::new(seed).child("device")).map_err(bad_input)?,
            0,
        )),
    }
}

/// Writes a state with `save` to `path` (through a temporary file beside it, renamed once
/// complete, so an interrupted save never leaves a truncated state under the name).
pub fn save(
    path: &Path,
    save: impl FnOnce(&mut BufWriter<std::fs::File>) -> Result<u64, flashlab_engine::StateError>,
) -> Result<(), Failure> {
    let fail =
        |e: &dyn std::fmt::Display| run_failed(anyhow!("--save-state {}: {e}", path.display()));
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = std::path::PathBuf::from(tmp);
    let file = std::fs::File::create(&tmp).map_err(|e| fail(&e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    save(&mut out).map_err(|e| fail(&e))?;
    let file = out.into_inner().map_err(|e| fail(&e.into_error()))?;
    file.sync_all().map_err(|e| fail(&e))?;
    std::fs::rename(&tmp, path).map_err(|e| fail(&e))?;
    Ok(())
}
