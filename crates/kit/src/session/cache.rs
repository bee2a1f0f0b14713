//! The precondition cache's part of a session: a device built fresh, and checkpoints an entry
//! of the cache may stand in for.

use std::path::Path;

use super::entry::CachedSteps;
use super::*;
use flashlab_cache::{EntryLockError, LoadTarget};
use flashlab_device::Ssd;
use flashlab_system::System;

impl<'a> Session<'a> {
    /// The device was just built from `device` with `device_seed`: its preconditioning may
    /// come from the precondition cache, when the options name one.
    pub fn fresh_device(&mut self, device: FreshDevice, device_seed: u64) {
        let at_start = self.now_ns == 0 && self.started_steps == 0;
        if let (Some(cache), Drive::Sim(_), true) = (&self.opts.state_cache, &self.drive, at_start)
        {
            self.cache = Chain::fresh(
                cache,
                device,
                device_seed,
                self.opts.seed,
                &self.device,
                self.compressible_percent,
            );
        }
    }

    /// Run `steps`, preconditioning described by `recipe` (every input of the steps that
    /// the session does not already key: their job texts, round rules, options), as a
    /// checkpoint of the precondition cache: on a device built fresh, when every step so far
    /// was a checkpoint too, an entry for the same key stands in for running them (the
    /// device, the steps' records, the clock, and the value they returned); otherwise they
    /// run and their outcome is stored. A damaged or foreign entry is reported on standard
    /// error and replaced. The end of a checkpoint is the step [`PRECONDITION_STEP`] to the
    /// [`AfterStep`] hook.
    pub fn checkpoint<R: Cached>(
        &mut self,
        recipe: &str,
        steps: impl FnOnce(&mut Self) -> Result<R, SuiteError>,
    ) -> Result<R, SuiteError> {
        let out = match self.cache.take() {
            None => steps(self)?,
            Some(chain) => {
                let chain = chain.then(&format!(
                    "{recipe} | recorded {} timed phases {:?} region sizes {:?}",
                    self.record_steps, self.timed_phases, self.region_sizes
                ));
                self.cached_checkpoint(chain, steps)?
            }
        };
        self.step_ended(PRECONDITION_STEP);
        Ok(out)
    }

    /// The entry's file lock ([`state_cache::lock_entry_file`]), waited for with a line on
    /// standard error; `None` where files cannot be locked (the entry is then filled as if no
    /// other process used the cache, with a warning).
    fn lock_entry_file(&self, path: &Path) -> Result<Option<std::fs::File>, SuiteError> {
        let waiting = || {
            eprintln!(
                "flashlab: {}: waiting for another flashlab preconditioning the same drive (state cache entry {})",
                self.device,
                path.display()
            )
        };
        match state_cache::lock_entry_file(path, state_cache::ENTRY_LOCK_WAIT, waiting) {
            Ok(file) => Ok(Some(file)),
            Err(EntryLockError::Busy) => Err(SuiteError::StateCacheBusy {
                device: self.device.clone(),
                path: path.display().to_string(),
                waited_s: state_cache::ENTRY_LOCK_WAIT.as_secs(),
            }),
            Err(EntryLockError::Unavailable(e)) => {
                eprintln!(
                    "flashlab: warning: state cache entry {} cannot be locked ({e}); another process may precondition the same drive meanwhile",
                    path.display()
                );
                Ok(None)
            }
        }
    }

    pub fn cached_checkpoint<R: Cached>(
        &mut self,
        chain: Chain,
        steps: impl FnOnce(&mut Self) -> Result<R, SuiteError>,
    ) -> Result<R, SuiteError> {
        let path = chain.path();
        // Another thread or process filling this entry is waited for: its entry is then
        // loaded here.
        let lock = state_cache::entry_lock(&path);
        let _filling = lock.lock().unwrap_or_else(|e| e.into_inner());
        let _filling_across = self.lock_entry_file(&path)?;
        let loaded = match &mut self.drive {
            Drive::Sim(dev) => {
                state_cache::load::<CachedSteps, R>(&chain, self.axes, &mut Loading(&mut **dev))
            }
            _ => Ok(None),
        };
        match loaded {
            Ok(None) => {}
            Ok(Some(entry)) => {
                let mut part = entry.session;
                self.started_steps += part.started_steps as usize;
                self.now_ns = part.end_ns;
                self.steps.append(&mut part.steps.0);
                state_cache::touch(&path);
                eprintln!(
                    "flashlab: {}: preconditioning from the state cache ({})",
                    self.device,
                    path.display()
                );
                self.cache = Some(chain);
                return Ok(entry.value);
            }
            Err(LoadFailure::Refused(e)) => eprintln!(
                "flashlab: warning: state cache entry {} not used ({e}); preconditioning again",
                path.display()
            ),
            Err(LoadFailure::DeviceLost(e)) => {
                return Err(SuiteError::StateCache {
                    device: self.device.clone(),
                    path: path.display().to_string(),
                    error: e.to_string(),
                })
            }
        }
        let (first_step, started) = (self.steps.len(), self.started_steps);
        let value = steps(self)?;
        let part = SessionPart {
            steps: CachedSteps(self.steps[first_step..].to_vec()),
            started_steps: (self.started_steps - started) as u64,
            end_ns: self.now_ns,
        };
        let Drive::Sim(dev) = &self.drive else {
            return Ok(value);
        };
        let now_ns = self.now_ns;
        let stored =
            state_cache::store(&chain, &part, &value, |out| dev.save_state_to(out, now_ns));
        match stored {
            Ok(path) => {
                if let Err(e) = state_cache::trim(&chain.cache.dir, chain.cache.max_bytes, &path) {
                    eprintln!(
                        "flashlab: warning: state cache {}: {e}",
                        chain.cache.dir.display()
                    );
                }
                self.cache = Some(chain);
            }
            Err(e) => eprintln!(
                "flashlab: warning: state cache entry {} not written: {e}",
                path.display()
            ),
        }
        Ok(value)
    }
}

/// A session's simulated device as the cache loads an entry into it.
struct Loading<'d>(&'d mut dyn SuiteDevice);

impl LoadTarget for Loading<'_> {
    fn ssd_mut(&mut self) -> Option<&mut Ssd> {
        self.0.as_ssd_mut()
    }
    fn system_mut(&mut self) -> Option<&mut System> {
        self.0.as_system_mut()
    }
}
