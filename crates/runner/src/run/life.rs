//! Where a job clone is in its life: one state machine in place of a set of flags.

/// A clone's life: it may wait for other jobs (`wait_for`), issues I/O until its generator
/// runs dry, its runtime ends, a job's `exitall` stops it or an I/O fails, and finishes once
/// its I/Os in flight have completed.
///
/// ```text
///            release              exhaust
/// Waiting ──────────▶ Running ──────────▶ Exhausted
///    │ stop              │ stop / fail        │ stop / fail
///    ▼                   ▼                    ▼
/// Waiting{stopped} ─▶ Ending{stopped, failed} ──finish──▶ Finished{stopped, failed}
/// ```
///
/// `stopped` and `failed` are kept apart because both can happen to one clone (a job past
/// its runtime whose last I/O breaks `max_latency`): a stopped clone's run ends at its
/// deadline, a failed one carries its error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// Not started: a job it waits for is still running. `stopped`: an `exitall` has
    /// stopped it already, so it ends as it starts.
    Waiting { stopped: bool },
    /// Issuing I/O (or thinking, or held back by its rate or depth).
    Running,
    /// The generator has nothing more: the clone finishes once what it holds is done.
    Exhausted,
    /// Issues nothing more: its runtime ended or an `exitall` stopped it (`stopped`), or the
    /// device refused an I/O or a limit failed it (`failed`); it finishes once its I/Os in
    /// flight complete.
    Ending { stopped: bool, failed: bool },
    /// Done: its result is made.
    Finished { stopped: bool, failed: bool },
}

impl Lifecycle {
    /// A clone that waits for other jobs first, or one that runs when its phase starts.
    pub(crate) fn new(waits: bool) -> Self {
        if waits {
            Self::Waiting { stopped: false }
        } else {
            Self::Running
        }
    }

    /// The jobs it waited for are done: it may start (an `exitall` may have stopped it).
    pub(crate) fn release(&mut self) {
        if let Self::Waiting { stopped } = *self {
            *self = if stopped {
                Self::Ending {
                    stopped: true,
                    failed: false,
                }
            } else {
                Self::Running
            };
        }
    }

    /// The generator has nothing more (a clone already ending stays so).
    pub(crate) fn exhaust(&mut self) {
        if *self == Self::Running {
            *self = Self::Exhausted;
        }
    }

    /// Its runtime ended, or an `exitall` stopped it.
    pub(crate) fn stop(&mut self) {
        *self = match *self {
            Self::Waiting { .. } => Self::Waiting { stopped: true },
            Self::Running | Self::Exhausted => Self::Ending {
                stopped: true,
                failed: false,
            },
            Self::Ending { failed, .. } => Self::Ending {
                stopped: true,
                failed,
            },
            finished @ Self::Finished { .. } => finished,
        };
    }

    /// An I/O failed (the device refused it, or a latency or rate limit was missed).
    pub(crate) fn fail(&mut self) {
        *self = match *self {
            Self::Waiting { stopped } | Self::Ending { stopped, .. } => Self::Ending {
                stopped,
                failed: true,
            },
            Self::Running | Self::Exhausted => Self::Ending {
                stopped: false,
                failed: true,
            },
            finished @ Self::Finished { .. } => finished,
        };
    }

    /// Its last I/O completed (or it had none left to do).
    pub(crate) fn finish(&mut self) {
        *self = Self::Finished {
            stopped: self.stopped(),
            failed: self.failed(),
        };
    }

    #[inline(always)]
    pub(crate) fn waiting(self) -> bool {
        matches!(self, Self::Waiting { .. })
    }

    #[inline(always)]
    pub(crate) fn exhausted(self) -> bool {
        self == Self::Exhausted
    }

    #[inline(always)]
    pub(crate) fn stopped(self) -> bool {
        matches!(
            self,
            Self::Waiting { stopped: true }
                | Self::Ending { stopped: true, .. }
                | Self::Finished { stopped: true, .. }
        )
    }

    #[inline(always)]
    pub(crate) fn failed(self) -> bool {
        matches!(
            self,
            Self::Ending { failed: true, .. } | Self::Finished { failed: true, .. }
        )
    }

    #[inline(always)]
    pub(crate) fn finished(self) -> bool {
        matches!(self, Self::Finished { .. })
    }

    /// Stopped or failed: no more I/O is issued.
    #[inline(always)]
    pub(crate) fn ending(self) -> bool {
        self.stopped() || self.failed()
    }

    /// Finished, stopped or failed: nothing is issued.
    #[inline(always)]
    pub(crate) fn issues_nothing(self) -> bool {
        self.finished() || self.ending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_stopped_while_waiting_ends_as_it_starts() {
        let mut life = Lifecycle::new(true);
        assert!(life.waiting() && !life.stopped());
        life.stop();
        assert!(life.waiting() && life.stopped() && life.issues_nothing());
        life.release();
        assert_eq!(
            life,
            Lifecycle::Ending {
                stopped: true,
                failed: false
            }
        );
        life.finish();
        assert!(life.finished() && life.stopped() && !life.failed());
    }

    #[test]
    fn stop_and_fail_both_count_and_exhaustion_gives_way_to_them() {
        let mut life = Lifecycle::new(false);
        assert!(!life.issues_nothing());
        life.exhaust();
        assert!(life.exhausted() && !life.ending());
        life.stop();
        life.fail();
        life.exhaust();
        assert_eq!(
            life,
            Lifecycle::Ending {
                stopped: true,
                failed: true
            }
        );
        life.finish();
        assert_eq!(
            life,
            Lifecycle::Finished {
                stopped: true,
                failed: true
            }
        );
        // A finished clone stays finished.
        life.stop();
        life.fail();
        assert!(life.finished());
    }

    #[test]
    fn a_released_clone_runs_and_an_exhausted_one_finishes_unstopped() {
        let mut life = Lifecycle::new(true);
        life.release();
        assert_eq!(life, Lifecycle::Running);
        life.exhaust();
        life.finish();
        assert_eq!(
            life,
            Lifecycle::Finished {
                stopped: false,
                failed: false
            }
        );
    }
}
