//! Preconditioning at the speed of the mapping: host writes and trims given to the FTL with
//! the timing model off. A precondition exists to leave the drive in a state (the map, valid
//! counts, free blocks, wear, the SLC cache's contents), and for writes that arrive back to
//! back that state is the FTL's alone: the FTL plans every host program, GC victim, fold and
//! erase when a write reaches it, whatever the dies are doing. So the same FTL calls run here
//! in the order the host gives them, and what the timed path adds (dies, channels, the host
//! link, the write buffer, the pacing queue, the controller) is skipped. The operations are
//! still counted by the media, so the drive's counters and health log read as after a timed
//! precondition.
//!
//! Where the timing changes the state the drive refuses ([`Ssd::untimed_refusal`]) and the
//! caller runs the timed path.

use super::*;
use flashlab_media::MediaOpKind;

/// Writes and trims on a drive whose timing model is off, from [`Ssd::untimed`]; the timing
/// goes back on with [`Untimed::finish`].
pub struct Untimed<'a> {
    ssd: &'a mut Ssd,
    start_ns: SimTime,
    /// Array time of every operation so far, summed over the dies' units.
    array_ns: u64,
}

impl Ssd {
    /// Why this drive's state after host writes depends on when its operations run, if it
    /// does: then preconditioning must be timed.
    pub fn untimed_refusal(&self) -> Option<&'static str> {
        if matches!(self.model.host_allocation, HostAllocation::LeastBusy) {
            Some("host writes go to the die free soonest (ftl.host_allocation), so where data lands depends on the dies' timing")
        } else if self.model.gc_busy_share > 0.0 {
            Some("GC runs beside host commands for a share of the time (ftl.gc_background_busy_share), so how much it collects depends on time")
        } else if self.mapcache.is_some() {
            Some("the paged map's write-backs (controller.map_cache) are not modelled without timing")
        } else if self.model.compression_unit_bytes.is_some() {
            Some("compressed writes (controller.compression_granule) are not modelled without timing")
        } else if self.zoned.0.is_some() || self.ftl.fdp_enabled() {
            Some("zoned and FDP placement are not modelled without timing")
        } else if self.model.static_slc_bytes > 0 {
            // What a static cache holds after a fill, and so what a rewrite of the fill's
            // first data finds there, differs between the paths: a full PM981a's first
            // CrystalDiskMark write runs at 563 MB/s after a timed fill and 108 MB/s after
            // an untimed one. Not traced, so such drives fill timed.
            Some("what a static SLC cache (slc_cache.static) holds after a fill is not modelled without timing")
        } else {
            None
        }
    }

    /// The drive with its timing model off from `at_ns` (or once the work it already has is
    /// done), or why its state would depend on the timing ([`Self::untimed_refusal`]).
    /// Internal work still queued for pacing is carried out at once, as the rest will be.
    pub fn untimed(&mut self, at_ns: SimTime) -> Result<Untimed<'_>, &'static str> {
        if let Some(why) = self.untimed_refusal() {
            return Err(why);
        }
        let start_ns = at_ns
            .max(self.last_done_ns)
            .max(self.media.all_idle_ns())
            .max(self.ctrl_next_ns);
        let mut run = Untimed {
            ssd: self,
            start_ns,
            array_ns: 0,
        };
        while let Some(op) = run.ssd.internal.pop() {
            run.settle(&op);
        }
        Ok(run)
    }
}

impl Untimed<'_> {
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
            lpn += n;
        }
        Ok(())
    }

    /// Deallocate the whole IUs of `len_bytes` from `offset_bytes`, as a trim command would.
    pub fn trim(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), DeviceError> {
        let req = IoRequest::trim(offset_bytes, len_bytes);
        let ssd = &mut *self.ssd;
        ssd.check_range(&req)?;
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

    /// The operations the FTL just planned, carried out: counted by the media, erases
    /// reported done, blocks opened marked with the drive's age.
    fn settle_ops(&mut self) {
        let aging_now = self.start_ns + self.ssd.aging_ns;
        let written = &mut self.ssd.written_aging_ns;
        self.ssd
            .ftl
            .take_opened(|b| written[b as usize] = aging_now);
        let ops = std::mem::take(&mut self.ssd.ops);
        for op in &ops {
            self.settle(op);
        }
        self.ssd.ops = ops;
        self.ssd.ops.clear();
    }

    /// One operation carried out at once (as `issue_internal` and `schedule_ops` do it on
    /// the dies, without the dies).
    fn settle(&mut self, op: &NandOp) {
        let ssd = &mut *self.ssd;
        let bytes = u64::from(op.ius) << ssd.iu_shift;
        let kind = match op.kind {
            NandOpKind::Read => MediaOpKind::Read,
            NandOpKind::Program => MediaOpKind::Program,
            NandOpKind::Erase => MediaOpKind::Erase,
        };
        if op.kind == NandOpKind::Program && op.cause == OpCause::HostWrite {
            let unit = ssd.media.unit_of(op.block);
            ssd.buffer.programmed(unit, self.start_ns, bytes);
        }
        if is_internal(op) {
            match op.kind {
                NandOpKind::Program => ssd.internal_programmed_ius += u64::from(op.ius),
                NandOpKind::Erase => ssd.ftl.erase_done(op.block),
                NandOpKind::Read => {}
            }
        }
        self.array_ns += ssd.media.tally_untimed(kind, bytes, op.slc);
    }

    /// Timing back on: everything written is on NAND (open pages stay open, as after timed
    /// writes), and the drive is idle from the returned time. That time is the start plus
    /// the array time of the operations spread evenly over the dies' units: the least the
    /// dies would have needed for the work, so the drive's clocks (power-on time, data age)
    /// move on by a time of the work's order without modelling its queues.
    pub fn finish(self) -> SimTime {
        let ssd = self.ssd;
        let units = ssd.media.units().max(1) as u64;
        let end = self.start_ns + self.array_ns.div_ceil(units);
        // The dies, channels, link, controller and write buffer were given nothing since the
        // start, and everything given before it was done by then: they are free at `end`.
        ssd.readahead.clear();
        ssd.buffer.release_through(end);
        ssd.ctrl_next_ns = ssd.ctrl_next_ns.max(end);
        ssd.last_done_ns = ssd.last_done_ns.max(end);
        ssd.host_program_done_ns = ssd.host_program_done_ns.max(end);
        ssd.clock_ns = ssd.clock_ns.max(end);
        end
    }
}
