//! Internal work on the dies: the FTL's operations placed on the media, the pacing queue
//! that spreads relocation over host writes, background work in idle time,
//! busy-time GC beside host commands and the data refresh after a power-off.

use super::*;

/// Background steps per idle window at most (each step is bounded work in the FTL).
const MAX_BACKGROUND_STEPS: u32 = 1_000_000;

impl Ssd {
    /// Give the pending FTL ops to the media from `start_ns`. Internal work goes through the
    /// pacing queue when `defer` (host commands), else straight to the dies (idle-time work,
    /// format). Returns (latest completion of any op given to the dies, latest completion of
    /// an RMW read).
    pub(super) fn schedule_ops(&mut self, start_ns: u64, defer: bool) -> (u64, u64) {
        let mut last = start_ns;
        let mut rmw_done = start_ns;
        // Taken out for the loop: the ops are read while `self` is borrowed mutably.
        let ops = std::mem::take(&mut self.ops);
        // A block's data is as old as the time it was taken to write into (the retention of
        // aged data).
        let aging_now = start_ns + self.aging_ns;
        let written = &mut self.written_aging_ns;
        self.ftl.take_opened(|b| written[b as usize] = aging_now);
        let mut i = 0;
        while i < ops.len() {
            let op = &ops[i];
            if is_internal(op) {
                if defer {
                    // The FTL emits internal work in runs (a victim's reads, programs and
                    // erase): queued with one copy, found as it is copied, when all that
                    // is left fits.
                    let ftl = &self.ftl;
                    let static_slc = |block| ftl.is_static_slc_block(block);
                    if let Some(n) = self.internal.push_internal_prefix(&ops[i..], static_slc) {
                        i += n;
                    } else {
                        let run = &ops[i..];
                        let run = &run[..run.iter().take_while(|o| is_internal(o)).count()];
                        i += run.len();
                        if !self.internal.push_run(run, static_slc) {
                            for op in run {
                                let static_slc = op.kind == NandOpKind::Erase
                                    && self.ftl.is_static_slc_block(op.block);
                                // A full queue gives its oldest operation to the dies to make
                                // room.
                                if self.internal.is_full() {
                                    last = last.max(self.release_internal(1, start_ns));
                                }
                                self.internal.push(*op, static_slc);
                            }
                        }
                    }
                    if self.internal.over_gain() {
                        let due = self.internal.due_for_gain();
                        last = last.max(self.release_internal(due, start_ns));
                    }
                } else {
                    last = last.max(self.issue_internal(op, start_ns));
                    i += 1;
                }
                continue;
            }
            i += 1;
            let bytes = u64::from(op.ius) << self.iu_shift;
            let done = match op.kind {
                NandOpKind::Program => {
                    let host = op.cause == OpCause::HostWrite;
                    if let Some(i) = self.internal.queued_erase(op.block) {
                        last = last.max(self.take_erase(op.block, i, start_ns));
                    }
                    let due = self.internal.due_before_program(op.block, op.ius, host);
                    if due > 0 {
                        last = last.max(self.release_internal(due, start_ns));
                    }
                    let done = self
                        .media
                        .program(op.block, op.page, bytes, op.slc, start_ns);
                    if host {
                        self.buffer
                            .programmed(self.media.unit_of(op.block), done, bytes);
                        self.host_program_done_ns = self.host_program_done_ns.max(done);
                    }
                    done
                }
                NandOpKind::Read => {
                    // A read-modify-write's read holds up its host write (the command
                    // completes when it is done), so the die serves it as a host read:
                    // ahead of the garbage-collection reads waiting there.
                    let (done, _) = self
                        .media
                        .read(op.block, op.page, bytes, op.slc, true, start_ns);
                    if op.cause == OpCause::ReadModifyWrite {
                        rmw_done = rmw_done.max(done);
                    }
                    done
                }
                NandOpKind::Erase => self.media.erase(op.block, op.slc, start_ns),
            };
            last = last.max(done);
        }
        self.ops = ops;
        self.ops.clear();
        self.update_relocated_entries(start_ns);
        (last, rmw_done)
    }

    /// Release the `n` oldest queued internal operations at `at_ns`; returns the latest
    /// completion (`at_ns` if none).
    pub(super) fn release_internal(&mut self, n: usize, at_ns: u64) -> u64 {
        // The released operations are read in place from the queue's ring, which needs the
        // queue borrowed apart from the dies and the FTL.
        let Ssd {
            internal,
            media,
            ftl,
            internal_data_ns,
            internal_programmed_ius,
            iu_shift,
            ..
        } = self;
        let released = internal.release_unsettled(n);
        let mut last = at_ns;
        // The queue's gain and taken count settle from the same pass.
        let (mut gain, mut taken) = (0, 0);
        // Every operation is placed from `at_ns` on.
        let pending = media.begin_run(at_ns);
        for run in [released.older, released.newer] {
            for op in run {
                // Slots taken out of order (`take_erase`) already went to the dies.
                if is_taken(op) {
                    taken += 1;
                    continue;
                }
                gain += released.gain(op);
                last = last.max(issue_internal(
                    media,
                    ftl,
                    internal_data_ns,
                    internal_programmed_ius,
                    *iu_shift,
                    op,
                    at_ns,
                ));
            }
        }
        media.end_run(pending);
        internal.settle(gain, taken);
        last
    }

    /// Abandon the internal work not given to the dies yet (power loss, format): the blocks
    /// it would have erased count as erased, as the FTL's state already has them.
    pub(super) fn drop_internal(&mut self) {
        while let Some(op) = self.internal.pop() {
            if op.kind == NandOpKind::Erase {
                self.ftl.erase_done(op.block);
            }
        }
    }

    /// Internal work whose die is idle at `now_ns` starts now: the oldest queued operations,
    /// as long as each one's die has nothing reserved (so host work waits for at most the one
    /// operation each die took).
    pub(super) fn release_to_idle_dies(&mut self, now_ns: u64) {
        while let Some(op) = self.internal.front() {
            if !is_taken(op) && self.media.unit_free_ns(op.block) > now_ns {
                break;
            }
            self.release_internal(1, now_ns);
        }
    }

    /// A program to `block`, whose erase is queued at slot `at` of the pacing queue, is due:
    /// the erase and the queued reads of the block (what the erase must follow) go to the
    /// dies now, out of the queue's order, at `at_ns`; the queue's older work stays queued.
    /// Releasing everything up to the erase instead would give the dies a burst of other
    /// victims' work (thousands of operations when the queue is deep), which a controller
    /// that only needs this block erased does not do. Returns the latest completion (`at_ns`
    /// if nothing went).
    pub(super) fn take_erase(&mut self, block: u32, at: usize, at_ns: u64) -> u64 {
        let Some(from) = self.internal.erase_reads_from(block, at) else {
            // The block was programmed by queued work before its erase: its reads depend on
            // those programs, whose data come from any earlier read.
            return at_ns;
        };
        self.internal.forced_erases += 1;
        let mut last = at_ns;
        // No operation on the block comes before `from`.
        for i in from..=at {
            let op = *self.internal.slot(i);
            if op.block != block || is_taken(&op) {
                continue;
            }
            self.internal.take(i);
            self.internal.ops_released_for_erases += 1;
            last = last.max(issue_internal(
                &mut self.media,
                &mut self.ftl,
                &mut self.internal_data_ns,
                &mut self.internal_programmed_ius,
                self.iu_shift,
                &op,
                at_ns,
            ));
        }
        last
    }

    pub(super) fn issue_internal(&mut self, op: &NandOp, at_ns: u64) -> u64 {
        issue_internal(
            &mut self.media,
            &mut self.ftl,
            &mut self.internal_data_ns,
            &mut self.internal_programmed_ius,
            self.iu_shift,
            op,
            at_ns,
        )
    }

    /// Run background work (idle GC, folding, internal work held back for pacing) in the
    /// window `[from, until)` while the drive has no host work, once the host has been idle
    /// for `ftl.background_after_idle`.
    ///
    /// The firmware keeps every die busy while the host is idle, and yields to the host the
    /// way its scheduler does: idle work goes to the dies a NAND operation at a time. Each
    /// operation goes at `t` and queues behind the work its die already has, so pieces on
    /// different dies run side by side; operations stop being handed out once the die that
    /// would take the next one is booked to the end of the window. A die therefore has at
    /// most one idle-time operation (and the read its data wait for) running past the
    /// window when the host comes back, never the rest of a piece: a fold of a superblock
    /// stripe given whole books tens of milliseconds on every die it touches, which each host
    /// read on those dies then waits for. What a piece has left at the window's end waits in
    /// the pacing queue, in order, for the next idle time or the pacing rules.
    pub(super) fn background(&mut self, from_ns: u64, until_ns: u64) {
        if self.bg_done && self.internal.is_empty() {
            return;
        }
        let t = (from_ns.max(self.last_done_ns) + self.model.background_after_idle_ns)
            .max(self.bg_cursor_ns)
            .max(self.media.all_idle_ns());
        if t >= until_ns {
            return;
        }
        let mut steps = 0;
        // Work held back for pacing goes first; the FTL plans a new piece only once the
        // queue is empty, so the work keeps its order.
        while self.release_before(t, until_ns) && !self.bg_done && steps < MAX_BACKGROUND_STEPS {
            steps += 1;
            self.ops.clear();
            if !self.ftl.background_step(&mut self.ops) && !self.refresh_step() {
                self.bg_done = true;
                break;
            }
            self.place_idle_piece(t, until_ns);
        }
        self.ops.clear();
        self.bg_cursor_ns = t;
    }

    /// Release the pacing queue's oldest operations at `t`, one at a time, while the die of
    /// the next one is free before `until_ns`. Returns whether the queue emptied.
    fn release_before(&mut self, t: u64, until_ns: u64) -> bool {
        while let Some(op) = self.internal.front() {
            if !is_taken(op) && self.media.unit_free_ns(op.block) >= until_ns {
                return false;
            }
            self.release_internal(1, t);
        }
        true
    }

    /// Place a piece of idle work (the internal operations in `self.ops`) from `t`: its
    /// operations go to the dies in order while each one's die is free before `until_ns`;
    /// from the first whose die is not, the rest wait in the pacing queue (the queue is
    /// empty: see [`Self::background`]).
    fn place_idle_piece(&mut self, t: u64, until_ns: u64) {
        let aging_now = t + self.aging_ns;
        let written = &mut self.written_aging_ns;
        self.ftl.take_opened(|b| written[b as usize] = aging_now);
        // Taken out for the loop: the ops are read while `self` is borrowed mutably.
        let ops = std::mem::take(&mut self.ops);
        let mut placed = 0;
        for op in &ops {
            if self.media.unit_free_ns(op.block) >= until_ns {
                break;
            }
            debug_assert!(is_internal(op));
            self.issue_internal(op, t);
            placed += 1;
        }
        let rest = &ops[placed..];
        // Queued without the gain bound's release, which would give the rest to the dies
        // now: host programs release it at the pacing's rate, and any later GC pushed over
        // the bound releases it first.
        if !rest.is_empty() {
            let ftl = &self.ftl;
            if !self
                .internal
                .push_run(rest, |block| ftl.is_static_slc_block(block))
            {
                for op in rest {
                    // A full queue gives its oldest operation to the dies to make room.
                    if self.internal.is_full() {
                        self.release_internal(1, t);
                    }
                    let static_slc =
                        op.kind == NandOpKind::Erase && self.ftl.is_static_slc_block(op.block);
                    self.internal.push(*op, static_slc);
                }
            }
        }
        self.ops = ops;
        self.ops.clear();
    }

    /// One block of the firmware's data refresh, as idle work: after a power-off, the first
    /// idle time scans every block for data past half its retention time and not yet lost
    /// (the share at which reads start needing retries) and queues them; each step rewrites
    /// one. Data already lost is left (reads of it keep failing). Returns whether it moved a
    /// block.
    pub(super) fn refresh_step(&mut self) -> bool {
        if std::mem::take(&mut self.refresh_pending) {
            let now = self.clock_ns + self.aging_ns;
            let r = self.model.retention;
            let pe = f64::from(self.model.geometry.pe_cycles);
            let counts = self.ftl.erase_counts();
            self.refresh_queue = (0..counts.len() as u32)
                .rev()
                .filter(|&b| {
                    let age_days =
                        now.saturating_sub(self.written_aging_ns[b as usize]) as f64 / 86_400e9;
                    let wear = f64::from(counts[b as usize]) / pe;
                    matches!(
                        flashlab_media::retention::read_retries(&r, wear, age_days),
                        Some(n) if n > 0
                    )
                })
                .collect();
        }
        while let Some(b) = self.refresh_queue.pop() {
            if self.ftl.refresh(b, &mut self.ops) {
                self.refreshed_blocks += 1;
                return true;
            }
        }
        false
    }

    /// Background GC beside host commands: while fewer blocks than the background threshold
    /// are free, one victim starts at `now_ns` if the previous one's work allows, and goes to
    /// the dies at once, so the command (and later ones) queue behind its reads, programs and
    /// erase on the dies it touches; the IUs it moves occupy a firmware core like any
    /// relocation. A victim's work, the longer of its span on the dies and its firmware time,
    /// is followed by a pause so that GC takes at most `ftl.gc_background_busy_share` of the
    /// time. Writes do not start it: they pay for their GC through foreground reclaim.
    pub(super) fn busy_gc(&mut self, now_ns: u64) {
        let share = self.model.gc_busy_share;
        if share <= 0.0 || now_ns < self.busy_gc_next_ns || !self.ftl.below_background_threshold() {
            return;
        }
        let moved_before = self.relocated_ius();
        self.ops.clear();
        if !self.ftl.busy_gc_step(&mut self.ops) {
            self.ops.clear();
            return;
        }
        let (end, _) = self.schedule_ops(now_ns, false);
        let moved = self.relocated_ius() - moved_before;
        let cpu_ns = moved * self.model.controller.relocation_cpu_ns;
        let work_ns = (end - now_ns).max(cpu_ns).max(1);
        self.busy_gc_next_ns = now_ns + (work_ns as f64 / share).ceil() as u64;
    }

    /// IUs moved by GC, folding and wear levelling so far.
    pub(super) fn relocated_ius(&self) -> u64 {
        let c = self.ftl.counters();
        c.gc_copied_ius + c.slc_folded_ius + c.wear_level_moved_ius + c.refreshed_ius
    }
}

/// Place one internal operation (`data_ns`: the drive's `internal_data_ns`). An internal
/// program carries data read by the internal reads before it. A real controller lets such
/// reads overtake queued programs, so the program waits for the read's own latency (array +
/// transfer), not for the FIFO queue of the die the victim sits on: waiting for that queue
/// would idle every other die.
// Inlined: one call per internal operation, most from `release_internal`'s loops. A free
// function so those loops can read the operations in place from the pacing queue.
#[inline(always)]
fn issue_internal(
    media: &mut NandTiming,
    ftl: &mut Ftl,
    data_ns: &mut u64,
    programmed_ius: &mut u64,
    iu_shift: u32,
    op: &NandOp,
    at_ns: u64,
) -> u64 {
    let bytes = u64::from(op.ius) << iu_shift;
    match op.kind {
        NandOpKind::Read => {
            let (done, latency_ns) = media.read(op.block, op.page, bytes, op.slc, false, at_ns);
            *data_ns = (*data_ns).max(at_ns + latency_ns);
            done
        }
        NandOpKind::Program => {
            *programmed_ius += u64::from(op.ius);
            media.program(op.block, op.page, bytes, op.slc, at_ns.max(*data_ns))
        }
        NandOpKind::Erase => {
            ftl.erase_done(op.block);
            media.erase(op.block, op.slc, at_ns)
        }
    }
}
