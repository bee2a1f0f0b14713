//! What a clone that watches its completions does after each one: steady-state windows,
//! `max_latency`, the latency target's depth search, minimum rates and the overlap guard.

use super::*;

impl<'a, 'd, T: Targets + ?Sized> Runner<'a, 'd, T> {
    /// What a watched clone (steady state, latency target, minimum rates, the overlap
    /// guard) notes and does after an I/O completed.
    #[cold]
    #[inline(never)]
    pub(super) fn watch_completion(&mut self, i: usize, now: SimTime, io: InFlight) {
        if io.kind != IoKind::Flush {
            let c = &mut self.clones[i];
            let ddir = io.kind.ddir();
            c.done_ios[ddir] += 1;
            c.done_bytes[ddir] += io.len_bytes;
            // Out of the guard before the clone issues again (after this returns).
            if let Some(guard) = c.overlap_guard.as_mut() {
                let range = (io.offset_bytes, io.offset_bytes + io.len_bytes);
                if let Some(k) = guard.iter().position(|&r| r == range) {
                    guard.swap_remove(k);
                }
            }
        }
        // fio checks max_latency only on the total latency it measures.
        let spec = self.clones[i].spec;
        if spec.latency.max_latency_ns != [0; 3]
            && !spec.report.disable_lat
            && io.kind != IoKind::Flush
        {
            self.max_latency_completed(i, now, io);
        }
        if self.clones[i].lat_target.is_some() {
            self.lat_target_completed(i, now, io);
        }
        if self.clones[i].min_rate.is_some() && io.kind != IoKind::Flush {
            self.min_rate_completed(i, now, io.kind.ddir());
        }
    }

    /// fio's `max_latency` after one of clone `i`'s I/Os completed: a measured I/O whose
    /// total latency exceeds its direction's limit stops the job with ETIMEDOUT, as
    /// `account_io_completion` does (the I/O itself is counted).
    #[cold]
    #[inline(never)]
    pub(super) fn max_latency_completed(&mut self, i: usize, now: SimTime, io: InFlight) {
        let c = &mut self.clones[i];
        let max_ns = c.spec.latency.max_latency_ns[io.kind.ddir()];
        let latency_ns = now - io.issue_ns;
        let counted = c.window.measuring && now <= c.window.deadline_ns;
        if max_ns == 0 || latency_ns <= max_ns || !counted || c.life.finished() || c.life.failed() {
            return;
        }
        if c.io_error.is_none() {
            c.io_error = Some(JobIoError::failed(
                c.spec.id.name.clone(),
                now,
                io.kind,
                io.offset_bytes,
                JobFailure::MaxLatency { latency_ns, max_ns },
            ));
        }
        c.life.fail();
        self.stop_issuing(i, now);
    }

    /// fio's latency-target search after one of clone `i`'s I/Os completed: the depth it
    /// may use next, a drain before a new window, or the end of the job.
    #[cold]
    #[inline(never)]
    pub(super) fn lat_target_completed(&mut self, i: usize, now: SimTime, io: InFlight) {
        let InFlight {
            kind,
            issue_ns,
            offset_bytes,
            ..
        } = io;
        let c = &mut self.clones[i];
        let Some(lt) = c.lat_target.as_mut() else {
            return;
        };
        if c.life.issues_nothing() {
            return;
        }
        let action = if kind == IoKind::Flush {
            LatAction::Continue
        } else {
            let counted = c.window.measuring && now <= c.window.deadline_ns;
            lt.completed(now, now - issue_ns, counted, c.done_ios.iter().sum())
        };
        match action {
            LatAction::Continue | LatAction::Drain => {}
            LatAction::Done => {
                c.window.deadline_ns = c.window.deadline_ns.min(now);
                c.life.stop();
                self.stop_issuing(i, now);
                return;
            }
            LatAction::Fatal => {
                let target_ns = lt.target_ns();
                if c.io_error.is_none() {
                    c.io_error = Some(JobIoError::failed(
                        c.spec.id.name.clone(),
                        now,
                        kind,
                        offset_bytes,
                        JobFailure::LatencyTarget {
                            latency_ns: now - issue_ns,
                            target_ns,
                        },
                    ));
                }
                c.life.fail();
                self.stop_issuing(i, now);
                return;
            }
        }
        let c = &mut self.clones[i];
        let lt = c.lat_target.as_mut().expect("checked above");
        if !lt.quiescing {
            c.iodepth = lt.depth;
        } else if c.in_flight == 0 {
            let reset = lt.drained(now, c.done_ios.iter().sum());
            c.iodepth = lt.depth;
            // The depth is found: fio restarts the statistics for the final window.
            if reset && c.window.measuring {
                c.start_measuring(now);
            }
        } else {
            // Nothing more is issued until the I/Os in flight have completed.
            c.iodepth = 0;
        }
    }

    /// fio's minimum rates after one of clone `i`'s I/Os of direction `ddir` completed: a
    /// cycle below a minimum stops the job with an I/O error.
    #[cold]
    #[inline(never)]
    pub(super) fn min_rate_completed(&mut self, i: usize, now: SimTime, ddir: usize) {
        let c = &mut self.clones[i];
        if c.life.issues_nothing() {
            return;
        }
        let Some(m) = c.min_rate.as_mut() else {
            return;
        };
        let measuring = c.window.measuring && now <= c.window.deadline_ns;
        let Some(short) = m.check(ddir, now, c.done_bytes[ddir], c.done_ios[ddir], measuring)
        else {
            return;
        };
        // The figures of the drive the slice stands for.
        let rate_factor = self.plan.jobs[c.spec_index].back.rate_factor();
        let c = &mut self.clones[i];
        if c.io_error.is_none() {
            c.io_error = Some(JobIoError::failed(
                c.spec.id.name.clone(),
                now,
                [IoKind::Read, IoKind::Write, IoKind::Trim][ddir],
                0,
                JobFailure::RateMin {
                    bandwidth: short.bandwidth,
                    rate: short.rate * rate_factor,
                    min: (short.min as f64 * rate_factor).round() as u64,
                },
            ));
        }
        c.life.fail();
        self.stop_issuing(i, now);
    }

    /// A steady-state sample: judge the window, and stop the tracker's clones when it is
    /// steady (their runtime ends now, as fio's termination ends the job).
    #[cold]
    pub(super) fn steady_check(&mut self, t: usize, now: SimTime) -> Result<(), RunError> {
        let tracker = &self.trackers[t];
        let members = &tracker.members;
        if members.iter().all(|&i| self.clones[i].life.finished()) {
            self.trackers[t].done = true;
            return Ok(());
        }
        let total = |v: &[u64; 3]| v.iter().sum::<u64>();
        let ios = members
            .iter()
            .map(|&i| total(&self.clones[i].done_ios))
            .sum();
        let bytes = members
            .iter()
            .map(|&i| total(&self.clones[i].done_bytes))
            .sum();
        match self.trackers[t].check(now, ios, bytes) {
            Check::Again => {
                let at = now.saturating_add(self.trackers[t].interval_ns);
                self.queue
                    .schedule(at, Event::SteadyCheck { tracker: t as u32 })?;
            }
            Check::Attained => {
                for k in 0..self.trackers[t].members.len() {
                    let i = self.trackers[t].members[k];
                    let c = &mut self.clones[i];
                    if !c.life.finished() {
                        c.window.deadline_ns = c.window.deadline_ns.min(now);
                        c.life.stop();
                        self.stop_issuing(i, now);
                    }
                }
            }
            Check::Over => {}
        }
        Ok(())
    }
}
