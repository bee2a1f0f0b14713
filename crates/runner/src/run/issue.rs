//! Issuing I/O: how many a clone may have in flight (depth, batches, rate, think time, verify)
//! and handing each to the device, or to the host queue when the device is full.

use super::*;

impl<'a, 'd, T: Targets + ?Sized> Runner<'a, 'd, T> {
    /// Issue as many I/Os as the clone's depth, rate and think time allow.
    pub(super) fn try_issue(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        self.issue_more(i, now)
    }

    /// [`Runner::try_issue`], inlined where a completion frees a slot: that is once per I/O.
    #[inline(always)]
    pub(super) fn issue_more(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        if self.clones[i].simple {
            return self.issue_simple(i, now);
        }
        let result = self.issue_while_allowed(i, now);
        let c = &mut self.clones[i];
        if let Some(b) = c.batch.as_mut() {
            // fio hands the engine what it queued before it waits.
            b.flush(c.stats.as_mut().filter(|_| c.window.measuring));
        }
        result
    }

    /// [`Runner::issue_while_allowed`] for a `simple` clone, the common case: with no rate
    /// limit, think time, fsync, FUA, batches or verify, nothing is held back (`draw.held`
    /// stays empty), the clone never thinks, and each I/O is the generator's next.
    #[inline(always)]
    pub(super) fn issue_simple(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        loop {
            let c = &mut self.clones[i];
            debug_assert!(c.think.state == Think::Running && c.draw.held.is_none());
            let blocked = c.life.issues_nothing() || c.in_flight >= c.iodepth;
            if c.held_by_depth(blocked) {
                return Ok(());
            }
            if c.flush.pending {
                c.flush.pending = false;
                self.issue(i, IoRequest::flush(), now)?;
                continue;
            }
            if c.life.exhausted() {
                return Ok(());
            }
            let Some(io) = c.next_generated() else {
                if c.exhaust() {
                    continue;
                }
                return Ok(());
            };
            c.issued_bytes += io.len_bytes;
            let req = c.request(&io, false);
            self.prefetch_next(i);
            self.issue(i, req, now)?;
        }
    }

    /// Tell the device where clone `i`'s next I/Os will go (a hint: it may start loading the
    /// map entry of the one after next and what the next one updates). A verifying clone
    /// replays from the I/O drawn ahead at each loop, so it draws only one.
    #[inline(always)]
    pub(super) fn prefetch_next(&mut self, i: usize) {
        let c = &mut self.clones[i];
        let target = c.target;
        if c.verify.is_some() {
            if let Some(next) = c.draw_ahead() {
                let next = *next;
                let req = c.request(&next, false);
                self.device.prefetch(target, &req, PrefetchStage::Map);
            }
            return;
        }
        let (next, after) = c.draw_two_ahead();
        if let Some(after) = after {
            self.device
                .prefetch(target, &c.request(&after, false), PrefetchStage::Map);
        }
        if let Some(next) = next {
            self.device
                .prefetch(target, &c.request(&next, false), PrefetchStage::Update);
        }
    }

    /// Issue clone `i`'s I/Os, one at a time, while its batch, depth, think time, flow and
    /// rate allow (the general case; [`Runner::issue_simple`] is the common one).
    #[inline(always)]
    pub(super) fn issue_while_allowed(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        loop {
            if !self.may_issue(i, now)? {
                return Ok(());
            }
            let c = &mut self.clones[i];
            if c.flush.pending {
                c.flush.pending = false;
                self.issue(i, IoRequest::flush(), now)?;
                continue;
            }
            let io = match self.draw(i, now) {
                Drawn::Io(io) => io,
                Drawn::Again => continue,
                Drawn::Stop => return Ok(()),
            };
            let Some((io, fua)) = self.pace(i, io, now)? else {
                return Ok(());
            };
            let io = if self.zbd_jobs.is_empty() {
                io
            } else {
                match self.zbd_adjust(i, io, now)? {
                    Ok(io) => io,
                    // fio counts a skipped I/O as done and draws the next.
                    Err(true) => continue,
                    // fio's end of a zoned job: no zone it may use has room (or data).
                    Err(false) if self.clones[i].exhaust() => continue,
                    Err(false) => return Ok(()),
                }
            };
            let c = &mut self.clones[i];
            c.issued_bytes += io.len_bytes;
            let req = c.request(&io, fua);
            let req = c.place(req);
            if let Some(guard) = c.overlap_guard.as_mut() {
                guard.push((io.offset_bytes, io.offset_bytes + io.len_bytes));
            }
            // A clone choosing directions at issue time draws nothing ahead (the prefetch
            // is only a hint to the device).
            if !c.choose_ddir {
                self.prefetch_next(i);
            }
            self.issue(i, req, now)?;
            if self.clones[i].think.on {
                self.think_after_issue(i, now)?;
            }
        }
    }

    /// Whether clone `i` may take another I/O now: its batch or depth has room, it is not
    /// thinking, and fio's flow check lets it go.
    #[inline(always)]
    fn may_issue(&mut self, i: usize, now: SimTime) -> Result<bool, RunError> {
        let c = &mut self.clones[i];
        if let Some(b) = c.batch.as_mut() {
            if c.life.issues_nothing() || c.think.state != Think::Running {
                return Ok(false);
            }
            let stats = c.stats.as_mut().filter(|_| c.window.measuring);
            match b.gate(c.in_flight, c.iodepth, c.iodepth_low, stats) {
                Gate::Wait => return Ok(false),
                Gate::Reaped if c.think.after_reap => {
                    // fio checks think time once the reap after the I/O that filled the
                    // queue is over.
                    c.think.after_reap = false;
                    c.think.state = Think::Reaping;
                    self.queue
                        .schedule(now, Event::ThinkCheck { clone: i as u32 })?;
                    return Ok(false);
                }
                Gate::Issue | Gate::Reaped => {}
            }
        } else if c.held_by_depth(
            c.life.issues_nothing() || c.think.state != Think::Running || c.in_flight >= c.iodepth,
        ) {
            return Ok(false);
        }
        // fio's flow check comes before each I/O it takes (not again for one its rate held
        // back, nor once the job has nothing left).
        let c = &self.clones[i];
        Ok(c.flow.is_none()
            || c.draw.held.is_some()
            || c.life.exhausted()
            || self.flow_gate(i, now)?)
    }

    /// Clone `i`'s next I/O: the one its rate or an overlap held back, or a new draw (from
    /// the verify pass, the rate-aware direction choice or the generator).
    #[inline(always)]
    fn draw(&mut self, i: usize, now: SimTime) -> Drawn {
        let c = &mut self.clones[i];
        if let Some(io) = c.draw.held.take() {
            return Drawn::Io(io);
        }
        if c.life.exhausted() {
            return Drawn::Stop;
        }
        let drawn = if c.verify.is_some() {
            match c.next_verifying(now) {
                Next::Io(io) => Some(io),
                Next::Wait => return Drawn::Stop,
                Next::Flush => {
                    c.flush.pending = true;
                    return Drawn::Again;
                }
                Next::Done => None,
            }
        } else if c.choose_ddir {
            // fio's rate_ddir: the direction the mix draws gives way to the other one while
            // it is ahead of its rate and the other is not (or is due sooner).
            let (rate, start) = (&c.rate, c.window.start_ns);
            let other_share = |k| c.generator.mix_percent(k) > 0;
            let write_in_mix = other_share(IoKind::Write);
            let read_in_mix = other_share(IoKind::Read);
            c.generator.next_io_choosing(|kind| {
                rate_direction(rate, start, now, kind, read_in_mix, write_in_mix)
            })
        } else {
            c.next_generated()
        };
        match drawn {
            Some(io) => Drawn::Io(io),
            None if c.exhaust() => Drawn::Again,
            None => Drawn::Stop,
        }
    }

    /// What fio checks of an I/O before it goes (overlaps, the rate, fsync and FUA, think
    /// time's count): the I/O with its FUA flag, or `None` when it is held back (it waits in
    /// `draw.held`, woken by a completion or by its rate's time).
    #[inline(always)]
    fn pace(
        &mut self,
        i: usize,
        io: GeneratedIo,
        now: SimTime,
    ) -> Result<Option<(GeneratedIo, bool)>, RunError> {
        let c = &mut self.clones[i];
        if c.plain {
            return Ok(Some((io, false)));
        }
        if let Some(guard) = &c.overlap_guard {
            let (lo, hi) = (io.offset_bytes, io.offset_bytes + io.len_bytes);
            if guard.iter().any(|&(a, b)| a < hi && lo < b) {
                // fio reaps a completion and tries the same I/O again: one of this clone's
                // completions brings it back here.
                c.draw.held = Some(io);
                return Ok(None);
            }
        }
        let ddir = io.kind.ddir();
        if c.rate.active && c.rate.limited(ddir) {
            let planned = c.rate.planned_ns(ddir, c.window.start_ns);
            if planned > now {
                c.draw.held = Some(io);
                if c.wake_at != Some(planned) {
                    c.wake_at = Some(planned);
                    self.queue
                        .schedule(planned, Event::Wake { clone: i as u32 })?;
                }
                return Ok(None);
            }
            c.rate
                .note_issue(ddir, io.len_bytes, c.window.start_ns, now);
        }
        let is_write = io.kind == IoKind::Write;
        let sync = &c.spec.sync;
        if is_write && sync.fsync_every > 0 {
            c.flush.writes_since_fsync += 1;
            if c.flush.writes_since_fsync >= sync.fsync_every {
                c.flush.writes_since_fsync = 0;
                c.flush.pending = true;
            }
        }
        if is_write && sync.fdatasync_every > 0 {
            c.flush.writes_since_fdatasync += 1;
            if c.flush.writes_since_fdatasync >= sync.fdatasync_every {
                c.flush.writes_since_fdatasync = 0;
                c.flush.pending = true;
            }
        }
        if c.think.on {
            c.think.issued += 1;
            c.think.ddir = ddir;
        }
        Ok(Some((io, is_write && sync.write_fua)))
    }

    /// fio checks think time after each I/O, once the queue it filled has been reaped.
    #[inline(always)]
    fn think_after_issue(&mut self, i: usize, now: SimTime) -> Result<(), RunError> {
        let c = &mut self.clones[i];
        let depth = c
            .batch
            .as_ref()
            .map_or(c.in_flight, |b| b.depth(c.in_flight));
        if depth >= c.iodepth {
            c.think.after_reap = true;
            Ok(())
        } else {
            self.check_thinktime(i, now)
        }
    }

    /// fio's zone handling of clone `i`'s next I/O (`crate::zbd`): the zone commands it
    /// needs go to the drive at `now`, and the I/O moves where fio moves it (`Err(true)`:
    /// fio skips it; `Err(false)`: the job has nothing more it can do).
    #[cold]
    fn zbd_adjust(
        &mut self,
        i: usize,
        io: GeneratedIo,
        now: SimTime,
    ) -> Result<Result<GeneratedIo, bool>, RunError> {
        let Some(job) = self.zbd_jobs[i].as_mut() else {
            return Ok(Ok(io));
        };
        let dev = &mut self.zbd_devices[job.device];
        let adjusted = dev.adjust(job, io);
        if dev.zoned {
            for action in adjusted.before.into_iter().flatten() {
                let (op, zone) = match action {
                    crate::zbd::ZoneAction::Reset(z) => (ZoneOp::Reset, z),
                    crate::zbd::ZoneAction::Finish(z) => (ZoneOp::Finish, z),
                };
                let target = dev.target;
                let offset_bytes = u64::from(zone) * dev.geometry.zone_bytes;
                if let Err(error) = self.device.zone_command(target, now, op, zone) {
                    return Err(RunError::Device {
                        job: self.clones[i].spec.id.name.clone(),
                        time_ns: now,
                        kind: if op == ZoneOp::Reset {
                            "zone reset"
                        } else {
                            "zone finish"
                        },
                        offset_bytes,
                        error,
                    });
                }
            }
        }
        Ok(adjusted.io.ok_or(adjusted.skip))
    }

    /// Hand a request to the device, or to the host queue when the device is full.
    #[inline(always)]
    pub(super) fn issue(&mut self, i: usize, req: IoRequest, now: SimTime) -> Result<(), RunError> {
        let c = &mut self.clones[i];
        c.in_flight += 1;
        if c.iolog.is_some() {
            c.log_io(&req, now);
        }
        if let Some(b) = c.batch.as_mut() {
            b.queued(c.in_flight, c.stats.as_mut().filter(|_| c.window.measuring));
        } else if c.window.measuring {
            c.stats
                .as_mut()
                .expect("stats live until finish")
                .record_depth(c.in_flight);
        }
        if self.device_in_flight < self.device_limit {
            self.submit(i, req, now, now)
        } else {
            self.host_queue.push_back(Queued {
                clone: i as u32,
                req,
                issue_ns: now,
            });
            Ok(())
        }
    }

    #[inline]
    pub(super) fn drain_host_queue(&mut self, now: SimTime) -> Result<(), RunError> {
        while self.device_in_flight < self.device_limit {
            let Some(q) = self.host_queue.pop_front() else {
                break;
            };
            self.submit(q.clone as usize, q.req, q.issue_ns, now)?;
        }
        Ok(())
    }

    #[inline(always)]
    pub(super) fn submit(
        &mut self,
        i: usize,
        req: IoRequest,
        issue_ns: SimTime,
        now: SimTime,
    ) -> Result<(), RunError> {
        let completion = match self.device.submit_to(self.clones[i].target, now, &req) {
            Ok(c) => c,
            // The job stops with fio's error, as fio stops a job on an I/O error.
            Err(
                error @ (DeviceError::ReadOnly { .. }
                | DeviceError::Uncorrectable { .. }
                | DeviceError::Zone { .. }),
            ) => {
                self.fail_clone(i, now, &req, error);
                return Ok(());
            }
            Err(error) => {
                return Err(RunError::Device {
                    job: self.clones[i].spec.id.name.clone(),
                    time_ns: now,
                    kind: kind_name(req.kind),
                    offset_bytes: req.offset_bytes,
                    error,
                })
            }
        };
        if completion.accepted_ns < now || completion.done_ns < completion.accepted_ns {
            return Err(self.bad_completion(
                i,
                now,
                req.kind,
                completion.done_ns,
                "before the request was submitted or accepted",
            ));
        }
        if completion.done_ns - now > self.options.limits.max_io_latency_ns {
            return Err(self.bad_completion(
                i,
                now,
                req.kind,
                completion.done_ns,
                "later than the I/O latency limit: the I/O never completes",
            ));
        }
        self.device_in_flight += 1;
        // The host's submission path ends slat; the benchmark sees the completion after
        // the host's whole cost (see `crate::host`).
        let host = &mut self.clones[i].host;
        let (submit_ns, host_ns) = if host.active() {
            (host.profile.submit_ns, host.after_device_ns())
        } else {
            (0, 0)
        };
        let io = InFlight {
            clone: i as u32,
            kind: req.kind,
            issue_ns,
            accepted_ns: issue_ns + (completion.accepted_ns - now) + submit_ns,
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
        };
        // The device holds fewer than `device_limit` I/Os and every clone fewer than its
        // depth plus a flush, so a slot is free.
        self.free_len -= 1;
        let slot = self.free_slots[self.free_len];
        self.in_flight[slot as usize] = io;
        self.queue
            .schedule(completion.done_ns + host_ns, Event::Complete { slot })?;
        Ok(())
    }

    /// Built only on the error path, so the per-I/O path does not prepare its fields.
    #[cold]
    pub(super) fn bad_completion(
        &self,
        i: usize,
        now: SimTime,
        kind: IoKind,
        done_ns: SimTime,
        why: &'static str,
    ) -> RunError {
        RunError::BadCompletion {
            job: self.clones[i].spec.id.name.clone(),
            time_ns: now,
            kind: kind_name(kind),
            done_ns,
            why,
        }
    }
}

/// What [`Runner::draw`] gives a clone that may issue.
enum Drawn {
    /// The I/O to check and issue.
    Io(GeneratedIo),
    /// Something changed (a flush became due, the job moved to its next phase): look again.
    Again,
    /// Nothing to issue until an event wakes the clone.
    Stop,
}
