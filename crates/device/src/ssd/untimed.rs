//! Preconditioning at the speed of the mapping: host writes and trims given to the FTL with
//! the timing model off. A precondition exists to leave the drive in a state (the map, valid
//! counts, free blocks, wear, the SLC cache's contents), and for writes that arrive back to
//! back that state is the FTL's alone: the FTL plans every host program, GC victim, fold and
//! erase when a write reaches it, whatever the dies are doing. So the same FTL calls run here
//! in the order the host gives them, and what the timed path adds (dies, channels, the host
//! link, the controller) is skipped. Two things the timed path does decide the FTL's state
//! and are kept: the pacing queue, which holds internal work (and so the erase of a block
//! relocation emptied, which a stream's next block must not be waiting for) by counts of
//! host programs, not by time; and the end of back-to-back writes, where the write buffer
//! is full and the dies have its programs still to do. The operations are still counted by
//! the media, so the drive's counters and health log read as after a timed precondition.
//!
//! Where the timing changes the state the drive refuses ([`Ssd::untimed_refusal`]) and the
//! caller runs the timed path.

use super::*;
use flashlab_engine::time::transfer_ns;
use flashlab_engine::UntimedIo;
use flashlab_media::MediaOpKind;
use std::collections::VecDeque;

/// Writes and trims on a drive whose timing model is off, from [`Ssd::untimed`]; the timing
/// goes back on with [`Untimed::finish`].
pub struct Untimed<'a> {
    ssd: &'a mut Ssd,
    start_ns: SimTime,
    /// Array time of every operation counted so far, summed over the dies' units.
    array_ns: u64,
    /// The operations of the last write buffer's worth of host data (its page programs and
    /// the work carried out among them), in order, not yet counted: at the end they go to
    /// the dies ([`Untimed::finish`]).
    tail: VecDeque<NandOp>,
    /// Bytes of host data the tail's programs carry.
    tail_host_bytes: u64,
    /// Operations a release takes off the pacing queue, before they are carried out.
    released: Vec<NandOp>,
}

impl Ssd {
    /// Why this drive's state after host writes depends on when its operations run, if it
    /// does: then preconditioning must be timed.
    pub fn untimed_refusal(&self) -> Option<&'static str> {
        if matches!(self.model.host_allocation, HostAllocation::LeastBusy) {
            Some("host writes go to the die free soonest (ftl.host_allocation), so where data lands depends on the dies' timing")
        } else if self.model.gc_busy_share > 0.0 {
            Some("GC runs beside host commands for a share of the time (ftl.gc_background_busy_share), so how much it collects depends on time")
        } else if self.model.compression_unit_bytes.is_some() {
            Some("compressed writes (controller.compression_granule) are not modelled without timing")
        } else if self.zoned.0.is_some() || self.ftl.fdp_enabled() {
            Some("zoned and FDP placement are not modelled without timing")
        } else {
            None
        }
    }

    /// The drive with its timing model off from `at_ns` (or once the work it already has is
    /// done), or why its state would depend on the timing ([`Self::untimed_refusal`]).
    /// Internal work queued for pacing stays queued, as it would for a timed write.
    pub fn untimed(&mut self, at_ns: SimTime) -> Result<Untimed<'_>, &'static str> {
        if let Some(why) = self.untimed_refusal() {
            return Err(why);
        }
        let start_ns = at_ns
            .max(self.last_done_ns)
            .max(self.media.all_idle_ns())
            .max(self.ctrl_next_ns);
        // While jobs are compressed, a window of writes holds the buffer at its capacity share
        // only so that its first fill, at the link's speed, does not weigh in what it
        // measures (`Model::buffer_depth_kept`). Nothing is measured here, so the buffer
        // keeps its full depth and the writes leave it full at that depth, as long timed
        // writes do: timed writes that go on with them (`Ssd::continue_writes`) start with
        // no first fill to weigh.
        if self.compresses_time {
            self.buffer.set_limit(self.model.buffer_bytes);
        }
        Ok(Untimed {
            ssd: self,
            start_ns,
            array_ns: 0,
            tail: VecDeque::new(),
            tail_host_bytes: 0,
            released: Vec::new(),
        })
    }
}

/// I/Os [`Untimed::run`] draws ahead of the one it gives the FTL. A random write's map entry
/// and its old copy's reverse-map entry and block counters are lines of tables far larger
/// than the caches; drawn ahead, they load while earlier writes are given to the FTL instead
/// of one after another. The map entry is hinted [`MAP_AHEAD`] I/Os ahead and the old copy,
/// found through that entry, [`UPDATE_AHEAD`] ahead.
const MAP_AHEAD: usize = 8;
const UPDATE_AHEAD: usize = 4;

impl Untimed<'_> {
    /// Give the FTL every write and trim of `next` in order, until it returns `None` (reads
    /// and flushes have nothing for it). The state left is what [`Self::write`] and
    /// [`Self::trim`] called one by one leave; drawing ahead only hints the map's loads
    /// (`BlockDevice::prefetch`, no effect on any state). A refused I/O stops the stream,
    /// named with its error.
    pub fn run(
        &mut self,
        next: &mut dyn FnMut() -> Option<UntimedIo>,
    ) -> Result<(), flashlab_engine::RefusedIo> {
        let mut ahead = [(IoKind::Flush, 0, 0); MAP_AHEAD];
        let (mut head, mut len) = (0, 0);
        loop {
            while len < MAP_AHEAD {
                let Some(io) = next() else { break };
                self.hint(io, PrefetchStage::Map);
                ahead[(head + len) % MAP_AHEAD] = io;
                len += 1;
            }
            if len == 0 {
                return Ok(());
            }
            if len > UPDATE_AHEAD {
                self.hint(
                    ahead[(head + UPDATE_AHEAD) % MAP_AHEAD],
                    PrefetchStage::Update,
                );
            }
            let (kind, offset_bytes, len_bytes) = ahead[head];
            head = (head + 1) % MAP_AHEAD;
            len -= 1;
            let done = match kind {
                IoKind::Write => self.write(offset_bytes, len_bytes),
                IoKind::Trim => self.trim(offset_bytes, len_bytes),
                IoKind::Read | IoKind::Flush => Ok(()),
            };
            if let Err(error) = done {
                return Err(flashlab_engine::RefusedIo {
                    error,
                    kind,
                    offset_bytes,
                });
            }
        }
    }

    /// Start loading what giving `io` to the FTL will touch (a hint: no effect on state).
    #[inline]
    fn hint(&self, (kind, offset_bytes, len_bytes): UntimedIo, stage: PrefetchStage) {
        if kind == IoKind::Write {
            BlockDevice::prefetch(
                &*self.ssd,
                &IoRequest::write(offset_bytes, len_bytes),
                stage,
            );
        }
    }

    /// The drive's user capacity (every namespace's).
    pub fn capacity_bytes(&self) -> u64 {
        self.ssd.capacity_bytes()
    }

    /// Write `len_bytes` from `offset_bytes` (the drive's logical space), as a host write
    /// command would: the same FTL call per chunk of the write buffer's quarter.
    pub fn write(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        let req = IoRequest::write(offset_bytes, len_bytes);
        let ssd = &mut *self.ssd;
        ssd.check_range(&req)?;
        if ssd.ftl.read_only() {
            return Err(ssd.read_only_error());
        }
        self.release_taken_front();
        let ssd = &mut *self.ssd;
        ssd.host.write_commands += 1;
        ssd.host.bytes_written += len_bytes;
        let ns = ssd.namespace_of(offset_bytes);
        ssd.ns_host[ns].write_commands += 1;
        ssd.ns_host[ns].bytes_written += len_bytes;
        ssd.bg_done = false;
        let (from, to) = ssd.codewords(offset_bytes, offset_bytes + len_bytes);
        ssd.readbuf.invalidate(from, to);
        let iu = ssd.model.iu_bytes;
        let first = offset_bytes >> ssd.iu_shift;
        let end = offset_bytes + len_bytes;
        let last = (end - 1) >> ssd.iu_shift;
        let chunk_ius = ((ssd.buffer.capacity_bytes() / 4) >> ssd.iu_shift).max(1);
        ssd.version = ssd.version.wrapping_add(1);
        let mut lpn = first;
        while lpn <= last {
            let n = (last - lpn + 1).min(chunk_ius);
            let head = offset_bytes & (iu - 1) != 0 && lpn == first;
            let tail = end & (iu - 1) != 0 && lpn + n - 1 == last;
            // The chunk's map entries are loaded before they are updated, as on the timed path.
            self.map_lookup(lpn, lpn + n - 1)?;
            let ssd = &mut *self.ssd;
            // The chunk's data takes buffer space until the page program carrying it is done,
            // which is at once here: what the buffer holds at the end is what the FTL's open
            // pages hold, as after timed writes.
            ssd.admit_to_buffer(
                self.start_ns,
                n << ssd.iu_shift,
                |need_bytes| format!("{need_bytes} more"),
                "a write",
            )?;
            ssd.ops.clear();
            let version = ssd.version;
            ssd.ftl
                .write(lpn as u32, n as u32, head, tail, version, &mut ssd.ops);
            self.settle_ops();
            self.update_relocated_entries();
            lpn += n;
        }
        Ok(())
    }

    /// A paged map's look-up of IUs `first..=last` for an update (`Ssd::map_lookup`): the
    /// same CLOCK steps, a dirty page it evicts written back through the FTL, a translation
    /// page read from NAND counted by the media. Neither depends on the dies' timing: the
    /// cache follows the order of look-ups, the write-back the FTL's placement.
    fn map_lookup(&mut self, first: u64, last: u64) -> Result<(), DeviceError> {
        let Some(m) = self.ssd.model.map_cache else {
            return Ok(());
        };
        let shift = m.entries_per_page.trailing_zeros();
        for tpage in (first >> shift) as u32..=(last >> shift) as u32 {
            let Some(cache) = self.ssd.mapcache.as_mut() else {
                break;
            };
            let Lookup::Miss { evicted_dirty } = cache.lookup(tpage, true) else {
                continue;
            };
            if let Some(old) = evicted_dirty {
                self.write_translation_page(m.first_lpn + old)?;
            }
            let ssd = &mut *self.ssd;
            if let ReadLocation::Nand { slc, .. } = ssd.ftl.locate_metadata(m.first_lpn + tpage) {
                if let Some(cache) = ssd.mapcache.as_mut() {
                    cache.counters.translation_reads += 1;
                }
                let bytes = ssd.model.iu_bytes;
                self.array_ns += ssd.media.tally_untimed(MediaOpKind::Read, bytes, slc);
            }
        }
        Ok(())
    }

    /// A translation page (hidden IU `lpn`) written back (`Ssd::write_translation_page`):
    /// buffer space, the FTL's program, its internal work through the pacing queue.
    fn write_translation_page(&mut self, lpn: u32) -> Result<(), DeviceError> {
        let ssd = &mut *self.ssd;
        let iu = ssd.model.iu_bytes;
        ssd.admit_to_buffer(
            self.start_ns,
            iu,
            |need_bytes| format!("a {need_bytes}-byte translation page"),
            "a translation page",
        )?;
        ssd.bg_done = false;
        // The caller's operations are settled: the list is free for the write-back's.
        ssd.ops.clear();
        ssd.ftl.write_metadata(lpn, &mut ssd.ops);
        self.settle_ops();
        self.update_relocated_entries();
        Ok(())
    }

    /// Relocation moved IUs: their translation pages are looked up and dirtied once per
    /// victim, as `Ssd::update_relocated_entries` does after each command's operations.
    fn update_relocated_entries(&mut self) {
        let Some(m) = self.ssd.model.map_cache else {
            return;
        };
        if self.ssd.map_updating {
            return;
        }
        self.ssd.map_updating = true;
        let shift = m.entries_per_page.trailing_zeros();
        let mut moved = Vec::new();
        let mut pages = Vec::new();
        loop {
            self.ssd.ftl.take_relocated(&mut moved);
            if moved.is_empty() {
                break;
            }
            read::look_up_relocated(&moved, m.first_lpn, shift, &mut pages, |lpn| {
                self.map_lookup(lpn, lpn).is_ok()
            });
            moved.clear();
        }
        self.ssd.map_updating = false;
    }

    /// Deallocate the whole IUs of `len_bytes` from `offset_bytes`, as a trim command would.
    pub fn trim(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        let req = IoRequest::trim(offset_bytes, len_bytes);
        let ssd = &mut *self.ssd;
        ssd.check_range(&req)?;
        self.release_taken_front();
        let ssd = &mut *self.ssd;
        ssd.host.trim_commands += 1;
        let ns = ssd.namespace_of(offset_bytes);
        ssd.ns_host[ns].trim_commands += 1;
        ssd.bg_done = false;
        let (from, to) = ssd.codewords(offset_bytes, offset_bytes + len_bytes);
        ssd.readbuf.invalidate(from, to);
        if let Some((first, count)) = ssd.trim_ius(&req) {
            ssd.ftl.trim(first, count);
        }
        Ok(())
    }

    /// The operations the FTL just planned, carried out as `Ssd::schedule_ops` gives them
    /// to the dies for a host command: host operations at once, internal work through the
    /// pacing queue by the same rules (each host page program releases its share, a program
    /// to a block whose erase is queued sends that erase first, the gain bound and the
    /// ring's size release the oldest). A block emptied by relocation stays erase-pending
    /// until its erase leaves the queue, so the host's streams take the blocks a timed
    /// write would take, and the drive ends with the queue a timed write leaves. Only the
    /// releases to dies that fall idle, which follow the dies' timing, are left out.
    fn settle_ops(&mut self) {
        let aging_now = self.start_ns + self.ssd.aging_ns;
        let written = &mut self.ssd.written_aging_ns;
        self.ssd
            .ftl
            .take_opened(|b| written[b as usize] = aging_now);
        let ops = std::mem::take(&mut self.ssd.ops);
        let mut i = 0;
        while i < ops.len() {
            if is_internal(&ops[i]) {
                while i < ops.len() && is_internal(&ops[i]) {
                    self.queue(&ops[i]);
                    i += 1;
                }
                if self.ssd.internal.over_gain() {
                    let due = self.ssd.internal.due_for_gain();
                    self.release(due);
                }
                continue;
            }
            let op = &ops[i];
            if op.kind == NandOpKind::Program {
                if let Some(at) = self.ssd.internal.queued_erase(op.block) {
                    self.take_erase(op.block, at);
                }
                let host = op.cause == OpCause::HostWrite;
                let due = self.ssd.internal.due_before_program(op.block, op.ius, host);
                if due > 0 {
                    self.release(due);
                }
            }
            self.settle(op);
            i += 1;
        }
        self.ssd.ops = ops;
        self.ssd.ops.clear();
    }

    /// What every command does first on the timed path (`Ssd::release_to_idle_dies`) less
    /// what depends on the dies' timing: the slots at the queue's front whose operations
    /// were taken out of order are passed, each release going on through the fold programs
    /// right behind it. Queued operations whose die is idle would go too; here no die is
    /// taken to be idle.
    fn release_taken_front(&mut self) {
        while self.ssd.internal.front().is_some_and(is_taken) {
            self.release(1);
        }
    }

    /// Queue an internal operation, a full queue giving its oldest one up first.
    fn queue(&mut self, op: &NandOp) {
        if self.ssd.internal.is_full() {
            self.release(1);
        }
        let static_slc = op.kind == NandOpKind::Erase && self.ssd.ftl.is_static_slc_block(op.block);
        self.ssd.internal.push(*op, static_slc);
    }

    /// The `n` oldest queued operations carried out (as `Ssd::release_internal` gives them
    /// to the dies).
    fn release(&mut self, n: usize) {
        let mut out = std::mem::take(&mut self.released);
        let internal = &mut self.ssd.internal;
        let released = internal.release_unsettled(n);
        let (mut gain, mut taken) = (0, 0);
        for run in [released.older, released.newer] {
            for op in run {
                if is_taken(op) {
                    taken += 1;
                } else {
                    gain += released.gain(op);
                    out.push(*op);
                }
            }
        }
        internal.settle(gain, taken);
        for op in &out {
            self.settle(op);
        }
        out.clear();
        self.released = out;
    }

    /// A program to `block`, whose erase is queued at slot `at`, is due: the erase and the
    /// queued reads of the block are carried out now, out of the queue's order (as
    /// `Ssd::take_erase` gives them to the dies).
    fn take_erase(&mut self, block: u32, at: usize) {
        let Some(from) = self.ssd.internal.erase_reads_from(block, at) else {
            return;
        };
        self.ssd.internal.forced_erases += 1;
        for i in from..=at {
            let op = *self.ssd.internal.slot(i);
            if op.block != block || is_taken(&op) {
                continue;
            }
            self.ssd.internal.take(i);
            self.ssd.internal.ops_released_for_erases += 1;
            self.settle(&op);
        }
    }

    /// One operation carried out (as `issue_internal` and `schedule_ops` do it on the dies):
    /// what the FTL and the write buffer see of it at once, its place on the dies once it
    /// leaves the tail ([`Self::trim_tail`]).
    fn settle(&mut self, op: &NandOp) {
        let ssd = &mut *self.ssd;
        let bytes = u64::from(op.ius) << ssd.iu_shift;
        let host_program = op.kind == NandOpKind::Program && op.cause == OpCause::HostWrite;
        if host_program {
            let unit = ssd.media.unit_of(op.block);
            ssd.buffer.programmed(unit, self.start_ns, bytes);
            self.tail_host_bytes += bytes;
        } else if is_internal(op) {
            match op.kind {
                NandOpKind::Program => ssd.internal_programmed_ius += u64::from(op.ius),
                NandOpKind::Erase => ssd.ftl.erase_done(op.block),
                NandOpKind::Read => {}
            }
        }
        self.tail.push_back(*op);
        let limit = ssd.buffer.capacity_bytes();
        self.trim_tail(limit);
    }

    /// Count the tail's oldest operations as carried out without the dies until its
    /// programs carry at most `limit_bytes` of host data.
    fn trim_tail(&mut self, limit_bytes: u64) {
        while self.tail_host_bytes > limit_bytes {
            let Some(op) = self.tail.pop_front() else {
                break;
            };
            let bytes = u64::from(op.ius) << self.ssd.iu_shift;
            if op.kind == NandOpKind::Program && op.cause == OpCause::HostWrite {
                self.tail_host_bytes -= bytes;
            }
            let kind = match op.kind {
                NandOpKind::Read => MediaOpKind::Read,
                NandOpKind::Program => MediaOpKind::Program,
                NandOpKind::Erase => MediaOpKind::Erase,
            };
            self.array_ns += self.ssd.media.tally_untimed(kind, bytes, op.slc);
        }
    }

    /// The tail's operations on the dies, in order: back-to-back writes end with the write
    /// buffer full of data waiting for its programs, which the dies work through after the
    /// last command completes at `end_ns`. The tail's host data arrive over the link at its
    /// rate, the last at `end_ns` (a drive whose link is slower than its dies has little
    /// left to do then); a program starts once its data are in, a relocation's program once
    /// the reads before it have their data, as `issue_internal` has it. Returns when the
    /// last host program is done.
    fn place_tail(&mut self, end_ns: u64) -> u64 {
        let ssd = &mut *self.ssd;
        let link = ssd.model.link_bytes_per_s;
        let mut arrive = end_ns
            .saturating_sub(transfer_ns(self.tail_host_bytes, link))
            .max(self.start_ns);
        let (mut data_ns, mut host_done) = (arrive, end_ns);
        for op in self.tail.drain(..) {
            let bytes = u64::from(op.ius) << ssd.iu_shift;
            match op.kind {
                NandOpKind::Program if op.cause == OpCause::HostWrite => {
                    arrive += transfer_ns(bytes, link);
                    let done = ssd.media.program(op.block, op.page, bytes, op.slc, arrive);
                    host_done = host_done.max(done);
                    if done > end_ns && ssd.buffer.admit(end_ns, bytes).is_ok() {
                        ssd.buffer
                            .programmed(ssd.media.unit_of(op.block), done, bytes);
                    }
                }
                NandOpKind::Program => {
                    ssd.media
                        .program(op.block, op.page, bytes, op.slc, arrive.max(data_ns));
                }
                NandOpKind::Read => {
                    let host = op.cause == OpCause::ReadModifyWrite;
                    let (_, latency_ns) = ssd
                        .media
                        .read(op.block, op.page, bytes, op.slc, host, arrive);
                    data_ns = data_ns.max(arrive + latency_ns);
                }
                NandOpKind::Erase => {
                    ssd.media.erase(op.block, op.slc, arrive);
                }
            }
        }
        self.tail_host_bytes = 0;
        host_done
    }

    /// Timing back on: everything written is on NAND or on its way there (open pages stay
    /// open, as after timed writes). The last command completes at the returned time: the
    /// start plus the array time of the operations before the tail, spread evenly over the
    /// dies' units (the least the dies would have needed for that work, so the drive's
    /// clocks, power-on time and data age, move on by a time of the work's order without
    /// modelling its queues). The tail, the last write buffer's worth of host data beside
    /// what the open pages hold, is still being programmed then, as after timed writes
    /// ([`Self::place_tail`]); the pacing queue keeps what it holds.
    pub fn finish(mut self) -> SimTime {
        // Everything programmed before the tail is done by the start; what the buffer
        // holds beside the tail is the open pages' data.
        self.ssd.buffer.release_through(self.start_ns);
        let room = self
            .ssd
            .buffer
            .capacity_bytes()
            .saturating_sub(self.ssd.buffer.used_bytes());
        self.trim_tail(room);
        let units = self.ssd.media.units().max(1) as u64;
        let end = self.start_ns + self.array_ns.div_ceil(units);
        let host_done = self.place_tail(end);
        let ssd = self.ssd;
        // The link and the controller were given nothing since the start, and everything
        // given before it was done by then: they are free at `end`.
        ssd.readahead.clear();
        ssd.buffer.release_through(end);
        ssd.ctrl_next_ns = ssd.ctrl_next_ns.max(end);
        ssd.last_done_ns = ssd.last_done_ns.max(end);
        ssd.host_program_done_ns = ssd.host_program_done_ns.max(host_done);
        ssd.clock_ns = ssd.clock_ns.max(end);
        end
    }
}
