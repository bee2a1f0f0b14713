//! A drive's state file (`docs/state.md`): the header names the drive's configuration by a
//! hash of its resolved model and carries the seed the drive was built with; the body is the
//! drive's [`State`] in one section.

use std::io::{Read, Write};

use flashlab_engine::state::{checksum_of, StateHeader};
use flashlab_engine::{SeedTree, SimTime, State, StateError, StateReader, StateWriter};

use super::Ssd;
use crate::config::DeviceConfig;
use crate::model::Model;

/// The header's `kind` for a single drive.
pub const DRIVE_STATE_KIND: &str = "drive";

/// Hash of a resolved drive model: every figure the simulation is built from (a state loads
/// only into a drive built from the same).
/// The drive's identity in a state file: its model, and a zoned drive's zones.
fn model_hash(model: &Model, zoned: Option<&crate::zoned::ZoneModel>) -> u64 {
    match zoned {
        None => checksum_of(format!("{model:?}").as_bytes()),
        Some(z) => checksum_of(format!("{model:?} {z:?}").as_bytes()),
    }
}

/// Hash of the drive `config` describes, as a state file's header carries it.
pub fn drive_config_hash(config: &DeviceConfig) -> Result<u64, StateError> {
    let err = |e| {
        StateError::Device(crate::ConfigError::from_key_error(config.name.clone(), e).to_string())
    };
    let model = config.resolve().map_err(err)?;
    let zoned = config.zone_model(&model).map_err(err)?;
    Ok(model_hash(&model, zoned.as_ref()))
}

impl Ssd {
    /// Writes the drive's state; `clock_ns` is the drive time where the next run starts.
    /// Returns the bytes written.
    pub fn save_state(&self, out: impl Write, clock_ns: SimTime) -> Result<u64, StateError> {
        let header = StateHeader {
            kind: DRIVE_STATE_KIND.to_string(),
            config_hash: model_hash(&self.model, self.zoned.0.as_ref().map(|z| &z.model)),
            device_seed: self._seeds.master_seed(),
            clock_ns,
        };
        // What would not load is not saved: a drive time past the bound, most likely.
        self.check_loaded()
            .map_err(|e| StateError::Device(format!("{e}; no state saved")))?;
        let mut w = StateWriter::new(out, &header);
        w.section("drive", |w| State::save(self, w));
        w.finish()
    }

    /// What the drive's own fields say, once its parts loaded (each checked its own): every
    /// clock and busy-until time before 2^62 ns, the namespaces where the configuration
    /// puts them, the timed workload's start within what the drive did so far, blocks to
    /// refresh or found unreadable blocks of the drive, none twice.
    pub(super) fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let clocks = [
            ("clock", self.clock_ns),
            ("aging", self.aging_ns),
            ("last completion", self.last_done_ns),
            ("busy-until", self.busy_until_ns),
            ("controller's next command", self.ctrl_next_ns),
            ("background cursor", self.bg_cursor_ns),
            ("next background GC", self.busy_gc_next_ns),
            ("last host program", self.host_program_done_ns),
            ("internal data", self.internal_data_ns),
        ];
        if let Some((name, t)) = clocks.iter().find(|(_, t)| *t > limit) {
            return Err(format!(
                "the drive's {name} time is {t} ns (valid: at most 2^62 ns, the time a run reaches)"
            ));
        }
        let mut at = 0u64;
        for (i, (&start, &bytes)) in self
            .ns_start_bytes
            .iter()
            .zip(&self.model.namespace_bytes)
            .enumerate()
        {
            if start != at {
                return Err(format!(
                    "the drive's namespace {} starts at byte {start} where this configuration starts it at {at}",
                    i + 1
                ));
            }
            at += bytes;
        }
        let blocks = self.written_aging_ns.len();
        let mut seen = vec![false; blocks];
        for &b in &self.refresh_queue {
            match seen.get_mut(b as usize) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(format!(
                        "the drive's refresh queue names block {b} twice or past its end (valid: each of the {blocks} blocks at most once)"
                    ))
                }
            }
        }
        let t = &self.timed;
        if t.start_ns > self.clock_ns
            || !(t.erase_avg.is_finite() && t.erase_avg >= 0.0)
            || t.read_commands > self.host.read_commands
            || t.write_commands > self.host.write_commands
        {
            return Err(format!(
                "the drive's timed workload started at {} ns, wear {}, after {} reads and {} writes (valid: by the clock {} ns, a finite wear, at most the {} reads and {} writes so far)",
                t.start_ns, t.erase_avg, t.read_commands, t.write_commands, self.clock_ns,
                self.host.read_commands, self.host.write_commands
            ));
        }
        if self.unreadable.is_some_and(|b| b as usize >= blocks) {
            return Err(format!(
                "the drive's unreadable block is past its {blocks} blocks"
            ));
        }
        Ok(())
    }

    /// Builds the drive `config` describes and loads a state of `total_bytes` into it: the
    /// drive and the drive time where the next run starts. Refuses a state of another kind
    /// of device, of another configuration, of another format version, or damaged.
    pub fn load_state(
        config: &DeviceConfig,
        input: impl Read,
        total_bytes: u64,
    ) -> Result<(Ssd, SimTime), StateError> {
        let (mut r, header) = StateReader::new(input, total_bytes)?;
        check_kind(&header, DRIVE_STATE_KIND)?;
        let expected = drive_config_hash(config)?;
        if header.config_hash != expected {
            return Err(StateError::Config {
                found: header.config_hash,
                expected,
            });
        }
        let mut ssd = Ssd::new(config, SeedTree::new(header.device_seed))
            .map_err(|e| StateError::Device(e.to_string()))?;
        r.section("drive", |r| State::load(&mut ssd, r))?;
        r.finish()?;
        Ok((ssd, header.clock_ns))
    }

    /// Whether a state of this header loads into this drive: a drive's, of this drive's
    /// configuration and seed.
    pub fn check_state_header(&self, header: &StateHeader) -> Result<(), StateError> {
        check_kind(header, DRIVE_STATE_KIND)?;
        let expected = model_hash(&self.model, self.zoned.0.as_ref().map(|z| &z.model));
        if header.config_hash != expected {
            return Err(StateError::Config {
                found: header.config_hash,
                expected,
            });
        }
        let seed = self._seeds.master_seed();
        if header.device_seed != seed {
            return Err(StateError::Device(format!(
                "the state was saved from a drive of seed {}, this drive's is {seed}",
                header.device_seed
            )));
        }
        Ok(())
    }

    /// Loads a state into this drive, which must be one built with the state's seed: what
    /// [`Ssd::load_state`] gives, without a second drive in memory while the state reads (a
    /// precondition cache entry of a large drive). The header is checked first (kind,
    /// configuration, seed) and a state it refuses leaves the drive untouched;
    /// an error once the body began to load leaves the drive unusable (verify the file with
    /// [`flashlab_engine::state::verify`] first). Returns the drive time where the
    /// next run starts.
    pub fn load_state_in_place(
        &mut self,
        input: impl Read,
        total_bytes: u64,
    ) -> Result<SimTime, StateError> {
        let (mut r, header) = StateReader::new(input, total_bytes)?;
        self.check_state_header(&header)?;
        r.section("drive", |r| State::load(self, r))?;
        r.finish()?;
        Ok(header.clock_ns)
    }
}

/// The header's kind must be `expected`.
pub fn check_kind(header: &StateHeader, expected: &str) -> Result<(), StateError> {
    if header.kind != expected {
        return Err(StateError::Kind {
            found: header.kind.clone(),
            expected: expected.to_string(),
        });
    }
    Ok(())
}
