//! `--save-state FILE` and `--load-state FILE`: a drive or a system carried from one run to
//! the next (`docs/state.md`). A state that does not fit the device named, or is damaged, is
//! bad input (exit 2) naming the file and what is wrong.

use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use flashlab_device::{DeviceConfig, Ssd};
pub use flashlab_engine::output::OutputFile;
use flashlab_engine::run_files::{NameRule, RunFiles};
use flashlab_engine::{SeedTree, SimTime};
use flashlab_system::{System, SystemConfig};

use crate::{bad_input, run_failed, Failure};

fn open(path: &Path) -> Result<(BufReader<std::fs::File>, u64), Failure> {
    // Checked before opening: opening a FIFO waits for a writer.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(bad_input(anyhow!(
            "--load-state {}: not a regular file; a state loads from the regular file --save-state wrote",
            flashlab_engine::input::excerpt(&path.to_string_lossy())
        )));
    }
    let file = std::fs::File::open(path)
        .map_err(|e| bad_input(anyhow!("--load-state {}: {e}", path.display())))?;
    let meta = file
        .metadata()
        .map_err(|e| bad_input(anyhow!("--load-state {}: {e}", path.display())))?;
    // A state's length is checked against its contents, so only a regular file is read (a
    // FIFO has no length to check).
    if !meta.is_file() {
        return Err(bad_input(anyhow!(
            "--load-state {}: not a regular file; a state loads from the regular file --save-state wrote",
            flashlab_engine::input::excerpt(&path.to_string_lossy())
        )));
    }
    Ok((BufReader::with_capacity(1 << 20, file), meta.len()))
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

/// `path`, named by `option`, checked before the work as a file flashlab may write
/// ([`OutputFile`]): a problem is bad input (exit 2).
pub fn output_file(option: &str, path: &Path) -> Result<OutputFile, Failure> {
    OutputFile::check(option, path).map_err(bad_input)
}

/// The files of one command ([`RunFiles`]): every input and output registered before the
/// work, a collision bad input (exit 2) naming both. A new command registers its files
/// here and writes each output through the handle [`Files::output`] returned.
#[derive(Default)]
pub struct Files(RunFiles);

impl Files {
    pub fn new() -> Self {
        Self::default()
    }

    /// An input the command reads as `what`; none when `path` is `None`.
    pub fn input(&mut self, what: &str, path: Option<&Path>) -> Result<&mut Self, Failure> {
        if let Some(path) = path {
            self.0.input(what, path).map_err(bad_input)?;
        }
        Ok(self)
    }

    /// A job file and every file it included (or a command line's job files).
    pub fn job(&mut self, job_file: &flashlab_workload::JobFile) -> Result<&mut Self, Failure> {
        self.input("job file", Some(Path::new(&job_file.path)))?;
        for path in &job_file.includes {
            self.input("included job file", Some(Path::new(path)))?;
        }
        Ok(self)
    }

    /// The files a family of inputs in `dir` holds (names `rule` takes).
    pub fn inputs_in(&mut self, what: &str, dir: &Path, rule: NameRule) -> Result<(), Failure> {
        self.0.inputs_in(what, dir, rule).map_err(bad_input)
    }

    /// An output checked and registered: the handle to write it with.
    pub fn output(&mut self, option: &str, path: &Path) -> Result<OutputFile, Failure> {
        self.0.output(option, path).map_err(bad_input)
    }

    /// [`Files::output`] of an optional path.
    pub fn output_opt(
        &mut self,
        option: &str,
        path: Option<&Path>,
    ) -> Result<Option<OutputFile>, Failure> {
        path.map(|p| self.output(option, p)).transpose()
    }

    /// A directory of outputs whose names `rule` takes, registered without the checks of
    /// [`Files::outputs_in`]: for the precondition cache, which goes without when its
    /// directory cannot be written.
    pub fn claims_in(&mut self, option: &str, dir: &Path, rule: NameRule) -> Result<(), Failure> {
        self.0.claims_in(option, dir, rule).map_err(bad_input)
    }

    /// A directory of outputs whose names `rule` takes, checked and registered.
    pub fn outputs_in(&mut self, option: &str, dir: &Path, rule: NameRule) -> Result<(), Failure> {
        self.0.outputs_in(option, dir, rule).map_err(bad_input)
    }
}

/// The names `--figures` writes: a chart's SVG and PNG files.
pub fn figure_name(name: &str) -> bool {
    name.ends_with(".svg") || name.ends_with(".png")
}

/// Writes a state with `save` to `file`, by the rule of [`OutputFile::write`]: a temporary
/// file beside it renamed once complete, nothing left behind on failure.
pub fn save(
    file: &OutputFile,
    save: impl FnOnce(&mut BufWriter<std::fs::File>) -> Result<u64, flashlab_engine::StateError>,
) -> Result<(), Failure> {
    file.write(|out| save(out).map(|_| ())).map_err(run_failed)
}

/// `--state-cache`, `--no-state-cache` and `--state-cache-max`: where suites keep their
/// drives' preconditioned state (`docs/state.md`, "Precondition cache").
#[derive(clap::Args, Debug, Clone)]
pub struct CacheArgs {
    /// Keep and reuse suites' preconditioned drives in DIR (default:
    /// $XDG_CACHE_HOME/flashlab/states, else ~/.cache/flashlab/states).
    #[arg(long, value_name = "DIR", conflicts_with = "no_state_cache")]
    state_cache: Option<PathBuf>,
    /// Precondition every time: no state cache read or written.
    #[arg(long)]
    no_state_cache: bool,
    /// Most bytes the state cache keeps: older entries go first (the newest stays even if
    /// larger). The default holds the six entries of op-sweep at default settings.
    #[arg(long, value_name = "SIZE", default_value = "32GiB")]
    state_cache_max: String,
}

impl CacheArgs {
    /// The cache the options name; `None` with --no-state-cache or when there is no home
    /// for the default one.
    pub fn cache(&self) -> Result<Option<flashlab_suite::StateCache>, Failure> {
        if self.no_state_cache {
            return Ok(None);
        }
        let max_bytes = flashlab_suite::parse_size("--state-cache-max", &self.state_cache_max)
            .map_err(bad_input)?;
        let Some(dir) = self.state_cache.clone().or_else(default_cache_dir) else {
            return Ok(None);
        };
        let Some(build_id) = build_id() else {
            eprintln!(
                "flashlab: warning: the running program cannot be read to identify its build; no state cache"
            );
            return Ok(None);
        };
        Ok(Some(flashlab_suite::StateCache {
            dir,
            build_id,
            max_bytes,
        }))
    }
}

/// `$XDG_CACHE_HOME/flashlab/states` (an absolute `XDG_CACHE_HOME` only, as the XDG base
/// directory rules say), else `$HOME/.cache/flashlab/states`.
fn default_cache_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".cache"))
    })?;
    Some(base.join("flashlab").join("states"))
}

/// Largest program file hashed for its build identity.
const MAX_EXE_BYTES: u64 = 1 << 30;

/// A hash of the running program's file: every change to the simulator changes it, so no
/// build reads what another wrote (the version and commit alone miss uncommitted changes).
fn build_id() -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let file = std::fs::File::open(exe).ok()?;
    if file.metadata().ok()?.len() > MAX_EXE_BYTES {
        return None;
    }
    flashlab_engine::state::Checksum::of_reader(file).ok()
}

/// `--figures DIR` checked before the work: a directory (made when missing, parents too)
/// that takes new files. A file or anything else at the path is bad input (exit 2).
pub fn figures_dir(dir: &Path) -> Result<(), Failure> {
    let shown = flashlab_engine::input::excerpt(&dir.to_string_lossy()).into_owned();
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            return Err(bad_input(anyhow!(
                "--figures {shown}: not a directory; name a directory for the charts' SVG and PNG files (made if missing)"
            )))
        }
        Ok(_) => {}
        Err(_) => std::fs::create_dir_all(dir)
            .map_err(|e| bad_input(anyhow!("--figures {shown}: cannot make the directory: {e}")))?,
    }
    // The directory takes a new file: checked as every output is.
    output_file("--figures", &dir.join("figure.svg")).map(|_| ())
}

/// Each `(id, svg)` as `DIR/<id>.svg` and, drawn from it, `DIR/<id>.png`, written by the
/// rule of every output ([`OutputFile`]).
pub fn write_figures(dir: &Path, figures: &[(String, String)]) -> Result<(), Failure> {
    for (id, svg) in figures {
        output_file("--figures", &dir.join(format!("{id}.svg")))?
            .write_bytes(svg.as_bytes())
            .map_err(run_failed)?;
        let png = flashlab_report::svg_to_png(svg)
            .map_err(|e| run_failed(anyhow!("--figures: chart {id}: {e}")))?;
        output_file("--figures", &dir.join(format!("{id}.png")))?
            .write_bytes(&png)
            .map_err(run_failed)?;
    }
    Ok(())
}

/// The commit the build came from, as the JSON reports' provenance names it, for the line
/// of a page that says what made it.
pub fn build_commit() -> String {
    flashlab_sweep::provenance()["commit"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The date a report shows: `SOURCE_DATE_EPOCH`'s (the reproducible-builds convention:
/// whole seconds since 1970-01-01 00:00:00 UTC), in UTC; none when it is unset or empty, so
/// the same command gives the same bytes. Any other value is bad input.
pub fn report_date() -> Result<Option<String>, Failure> {
    let Some(value) = std::env::var_os("SOURCE_DATE_EPOCH").filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let text = value.to_string_lossy();
    text.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| text.parse::<u64>().ok())
        .flatten()
        .and_then(flashlab_report::utc_date_time)
        .map(Some)
        .ok_or_else(|| {
            bad_input(anyhow!(
                "SOURCE_DATE_EPOCH={}: expected whole seconds since 1970-01-01 00:00:00 UTC, up to 253402300799 (the end of 9999), e.g. SOURCE_DATE_EPOCH=$(date +%s)",
                flashlab_engine::input::excerpt(&text)
            ))
        })
}

/// The command line as a report shows it: `flashlab` and its arguments, each quoted for a
/// POSIX shell when it needs to be (the program's own path is not shown: it says where
/// flashlab was installed, not what it ran).
pub fn command_line() -> String {
    let mut out = String::from("flashlab");
    for a in std::env::args_os().skip(1) {
        let a = a.to_string_lossy();
        out.push(' ');
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
        if plain {
            out.push_str(&a);
        } else {
            out.push('\'');
            out.push_str(&a.replace('\'', r"'\''"));
            out.push('\'');
        }
    }
    out
}
