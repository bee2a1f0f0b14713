//! fio's submission and completion batches (`iodepth_batch_submit`,
//! `iodepth_batch_complete_min`, `iodepth_batch_complete_max`), as `do_io` runs them:
//! - I/Os are queued and handed to the engine every `iodepth_batch_submit` of them
//!   (`td_io_queue` → `td_io_commit`, which counts them in the "IO depths" distribution at
//!   the depth of the moment); before fio waits for a completion, the engine is handed what
//!   is still queued (`td_io_getevents` commits first). With no host time the device sees
//!   every I/O when it is drawn either way: only the distributions change.
//! - Once the queue is full (`wait_for_completions`), fio waits for
//!   `min(iodepth_batch_complete_min, depth)` completions (0 counts as 1), reaps what has
//!   completed up to `iodepth_batch_complete_max` (at least the minimum), and repeats until
//!   the depth is at `iodepth_low` or below. Completions not reaped keep their slot.
//! - A clone not waiting on a full queue (thinking, rate-limited) reaps each completion as
//!   it comes, as fio's quiesce does; one out of work reaps all of its last I/Os in one call.

use flashlab_workload::JobSpec;

use super::sink::Sink;

/// What a clone with batches may do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gate {
    /// Issue the next I/O.
    Issue,
    /// The wait that followed a full queue just ended: issue, after fio's think-time check.
    Reaped,
    /// Wait for completions.
    Wait,
}

#[derive(Debug, Clone)]
pub(super) struct Batch {
    /// fio's `iodepth_batch` after `fixup_options` (0 or above iodepth: iodepth).
    submit: u32,
    /// `iodepth_batch_complete_min` (0 counts as 1 when waiting).
    reap_min: u32,
    /// `iodepth_batch_complete_max` after `fixup_options` (at least the minimum).
    reap_max: u32,
    /// Completed I/Os not yet reaped: they still hold their slots.
    unreaped: u32,
    /// Waiting on a full queue (`wait_for_completions`).
    waiting: bool,
    /// The minimum of the current wait, fixed when it began.
    wait_min: u32,
    /// fio's `io_u_queued`: I/Os counted towards the next `td_io_commit`. A commit made by
    /// `td_io_getevents` does not reset it, so it may carry I/Os already handed over.
    queued: u32,
    /// I/Os queued but not yet handed to the engine.
    uncommitted: u32,
}

impl Batch {
    /// The job's batches, or None when they change nothing (fio's defaults, or a depth of
    /// one): such a job keeps the one-at-a-time path.
    pub(super) fn new(spec: &JobSpec) -> Option<Batch> {
        let iodepth = spec.engine.iodepth.max(1);
        let submit = match spec.engine.iodepth_batch_submit {
            0 => iodepth,
            s => s.min(iodepth),
        };
        let reap_min = spec.engine.iodepth_batch_complete_min;
        let reap_max = spec.engine.iodepth_batch_complete_max.max(reap_min);
        let wait_min = reap_min.clamp(1, iodepth);
        if submit == 1 && wait_min == 1 && reap_max.min(iodepth) <= 1 {
            return None;
        }
        Some(Batch {
            submit,
            reap_min,
            reap_max,
            unreaped: 0,
            waiting: false,
            wait_min: 1,
            queued: 0,
            uncommitted: 0,
        })
    }

    /// fio's `cur_depth`: I/Os holding a slot, in flight or completed and not reaped.
    pub(super) fn depth(&self, in_flight: u32) -> u32 {
        in_flight + self.unreaped
    }

    /// An I/O was queued; the clone now has `in_flight` in flight, this one included.
    pub(super) fn queued(&mut self, in_flight: u32, stats: Option<&mut Sink>) {
        self.queued += 1;
        self.uncommitted += 1;
        if self.queued >= self.submit {
            if let Some(s) = stats {
                s.record_commit(self.depth(in_flight), self.queued);
                if self.uncommitted > 0 {
                    s.record_submit_call(self.uncommitted);
                }
            }
            self.queued = 0;
            self.uncommitted = 0;
        }
    }

    /// The clone stops issuing for now: the engine is handed what is queued.
    pub(super) fn flush(&mut self, stats: Option<&mut Sink>) {
        if self.uncommitted > 0 {
            if let Some(s) = stats {
                s.record_submit_call(self.uncommitted);
            }
            self.uncommitted = 0;
        }
    }

    /// One of the clone's I/Os completed; `in_flight` are still in flight. A clone `ending`
    /// (out of work or stopped) reaps all its I/Os in one call, as fio does after its loop.
    pub(super) fn completed(&mut self, in_flight: u32, ending: bool, stats: Option<&mut Sink>) {
        if self.waiting || (ending && in_flight > 0) {
            self.unreaped += 1;
        } else {
            let n = self.unreaped + 1;
            self.unreaped = 0;
            if let Some(s) = stats {
                s.record_reap_call(n);
            }
        }
    }

    /// Reap what the current wait allows; say whether the clone may issue.
    pub(super) fn gate(
        &mut self,
        in_flight: u32,
        iodepth: u32,
        iodepth_low: u32,
        mut stats: Option<&mut Sink>,
    ) -> Gate {
        let mut reaped = false;
        loop {
            let depth = self.depth(in_flight);
            if self.waiting {
                // io_u_queued_complete caps the minimum at the depth.
                let need = self.wait_min.min(depth);
                if need == 0 {
                    self.waiting = false;
                    reaped = true;
                } else if self.unreaped < need {
                    return Gate::Wait;
                } else {
                    // td_io_getevents: at most max (capped at the depth), never below min.
                    let most = self.reap_max.min(depth).max(need);
                    let r = self.unreaped.min(most);
                    self.unreaped -= r;
                    if let Some(s) = stats.as_deref_mut() {
                        s.record_reap_call(r);
                    }
                    if depth - r <= iodepth_low {
                        self.waiting = false;
                        reaped = true;
                    }
                    continue;
                }
            }
            if depth >= iodepth {
                if depth == 0 {
                    return Gate::Wait;
                }
                self.flush(stats.as_deref_mut());
                self.waiting = true;
                self.wait_min = self.reap_min.clamp(1, depth);
                continue;
            }
            return if reaped { Gate::Reaped } else { Gate::Issue };
        }
    }
}
