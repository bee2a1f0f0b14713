//! The host-facing operations: write (with read-modify-write for partial IUs and shadowing of
//! previous copies without PLP), read, trim, flush, power loss and format.

use crate::alloc::{Stream, StreamId, NO_UNDO, STREAMS};
use crate::blocks::Pool;
use crate::config::Geometry;
use crate::lists::NIL;
use crate::mapping::UNMAPPED;
use crate::prefetch::prefetch_read;
use crate::{Ftl, FtlCounters, Lpn, NandOp, NandOpKind, OpCause, ReadLocation};

pub(crate) fn fresh_streams(g: &Geometry) -> [Stream; 4] {
    let s = |cause| Stream::new(g.units, g.ius_per_page, cause);
    // Indexed by StreamId: host, GC, SLC, fold.
    [
        s(OpCause::HostWrite),
        s(OpCause::Gc),
        s(OpCause::HostWrite),
        s(OpCause::SlcFold),
    ]
}

impl Ftl {
    /// Host write of IUs `[first, first + count)`. `head_partial` / `tail_partial`: the first /
    /// last IU is only partly written, so its old contents must be read first (RMW) if mapped.
    /// Appends the NAND operations it causes (including foreground GC) to `ops`.
    /// `version` tags the data when `track_versions` is on.
    ///
    /// Panics if the range runs past `user_ius` (the device checks ranges first).
    pub fn write(
        &mut self,
        first: Lpn,
        count: u32,
        head_partial: bool,
        tail_partial: bool,
        version: u32,
        ops: &mut Vec<NandOp>,
    ) {
        self.write_with(
            first,
            count,
            (head_partial, tail_partial),
            version,
            ops,
            None::<&fn(u32) -> u64>,
        );
    }

    /// [`Self::write`], but each new host page goes to the unit, among the next few in
    /// stripe order, whose work ends soonest: `free_at_ns(block)` is when the (die, plane)
    /// holding `block` can start a program, as the caller (the device) sees it. Equal times
    /// keep stripe order, so on an idle drive this is [`Self::write`].
    #[allow(clippy::too_many_arguments)]
    pub fn write_placed(
        &mut self,
        first: Lpn,
        count: u32,
        head_partial: bool,
        tail_partial: bool,
        version: u32,
        ops: &mut Vec<NandOp>,
        free_at_ns: impl Fn(u32) -> u64,
    ) {
        self.write_with(
            first,
            count,
            (head_partial, tail_partial),
            version,
            ops,
            Some(&free_at_ns),
        );
    }

    fn write_with<F: Fn(u32) -> u64>(
        &mut self,
        first: Lpn,
        count: u32,
        (head_partial, tail_partial): (bool, bool),
        version: u32,
        ops: &mut Vec<NandOp>,
        free_at_ns: Option<&F>,
    ) {
        self.assert_range(first, count);
        for i in 0..count {
            let partial = (i == 0 && head_partial) || (i + 1 == count && tail_partial);
            self.write_one(first + i, partial, version, ops, free_at_ns);
        }
        self.after_op();
    }

    #[inline]
    fn assert_range(&self, first: Lpn, count: u32) {
        assert!(
            u64::from(first) + u64::from(count) <= u64::from(self.geo.user_ius),
            "IU range {first}+{count} runs past the {} user IUs",
            self.geo.user_ius
        );
    }

    #[inline]
    fn write_one<F: Fn(u32) -> u64>(
        &mut self,
        lpn: Lpn,
        partial: bool,
        version: u32,
        ops: &mut Vec<NandOp>,
        free_at_ns: Option<&F>,
    ) {
        if self.blocks.free_count(Pool::Native) <= self.geo.reserve_blocks {
            self.foreground_reclaim(ops);
        }
        // Wear levelling has work only with a queue or after enough erases: skip the call.
        if self.wl_queue_len > 0 || self.erases_since_wl >= self.wl_interval {
            self.maybe_wear_level(ops);
        }
        // Before the IU's old copy is looked up: a fold may move it.
        self.shrink_dynamic_slc(ops);
        self.recycle_static_slc(ops);
        if self.cfg.slc.fold_when_full {
            self.fold_full_slc(ops);
        }
        let old = self.map.l2p[lpn as usize];
        if partial && old != UNMAPPED && !self.is_pending(old) {
            let (block, page, _) = self.split(old);
            ops.push(NandOp {
                kind: NandOpKind::Read,
                cause: OpCause::ReadModifyWrite,
                block,
                page,
                ius: 1,
                slc: self.blocks.info[block as usize].slc,
            });
            self.counters.rmw_reads += 1;
            self.counters.nand_read_pages += 1;
        }
        let s = match free_at_ns {
            None => self.route_host_write(),
            Some(free_at_ns) => self.route_host_write_placed(free_at_ns),
        };
        let Some((ppa, slot)) = self.next_slot(s) else {
            panic!(
                "FTL invariant broken: no free block for a host write ({} free, reserve {})",
                self.blocks.free_count(Pool::Native),
                self.geo.reserve_blocks
            );
        };
        if self.cfg.power_loss_protection {
            if old != UNMAPPED {
                self.invalidate(old);
            }
        } else {
            // Keep the last durable copy valid until this page is programmed.
            let mut prev = old;
            if old != UNMAPPED && self.is_pending(old) {
                let (ps, pslot) = self.pending_record(old);
                prev = self.streams[ps as usize].undo[pslot as usize].prev;
                self.streams[ps as usize].undo[pslot as usize] = NO_UNDO;
                self.invalidate(old);
            } else if let Some(p) = self.take_trim_record(lpn) {
                // A compressed unit not yet committed (see `write_compressed`): its durable
                // fallback is the record's copy, and an uncommitted copy is dropped.
                if old != UNMAPPED {
                    self.invalidate(old);
                }
                prev = p;
            }
            self.streams[s as usize].undo[slot as usize] = crate::alloc::Undo { lpn, prev };
        }
        self.map.fill_slot(ppa, lpn, version);
        self.map.l2p[lpn as usize] = ppa;
        if old == UNMAPPED {
            self.map.mapped += 1;
        }
        self.counters.host_write_ius += 1;
        if s == StreamId::Slc {
            self.counters.slc_write_ius += 1;
        }
        self.seq += 1;
        self.finish_slot(s, ops);
    }

    /// Host write of one compression unit: the `span` IUs from `first` hold data that a
    /// compressing controller stored in `stored` IUs (1 to `span`), the rest of the unit
    /// deallocated. With `partial` the host wrote only part of the unit, so its old contents
    /// are read first (every page holding a mapped IU of it) to be merged and compressed
    /// again.
    ///
    /// Without PLP the deallocation is not durable before the stored IUs are: until their
    /// page is programmed the old copies of the deallocated IUs stay valid (a trim record of
    /// the stream), and a power loss maps them back, so the unit reads as its old data
    /// rather than torn.
    #[allow(clippy::too_many_arguments)]
    pub fn write_compressed<F: Fn(u32) -> u64>(
        &mut self,
        first: Lpn,
        stored: u32,
        span: u32,
        partial: bool,
        version: u32,
        ops: &mut Vec<NandOp>,
        free_at_ns: Option<&F>,
    ) {
        assert!(
            (1..=span).contains(&stored),
            "a compression unit of {span} IUs stores 1 to {span} of them, not {stored}"
        );
        self.assert_range(first, span);
        if partial {
            self.read_unit_for_merge(first, span, ops);
        }
        // Without PLP a unit is committed with its last granule's page: one programmed
        // earlier keeps the unit's records (`program_page`).
        if !self.cfg.power_loss_protection {
            self.unit_in_progress = (first, span);
        }
        for i in 0..stored {
            if i + 1 == stored {
                self.unit_in_progress = (0, 0);
            }
            self.write_one(first + i, false, version, ops, free_at_ns);
        }
        // The host wrote the whole unit's data (write amplification is of the host's bytes).
        self.counters.host_write_ius += u64::from(span - stored);
        self.counters.compression_saved_ius += u64::from(span - stored);
        let head = self.map.l2p[(first + stored - 1) as usize];
        // The stream whose unprogrammed page holds the new data, if it is not durable yet.
        let waiting = (!self.cfg.power_loss_protection && self.is_pending(head))
            .then(|| self.pending_record(head).0);
        for lpn in first + stored..first + span {
            self.deallocate_behind(lpn, waiting);
        }
        self.after_op();
    }

    /// Read-modify-write reads of a compression unit: one read per page holding mapped IUs
    /// of it (the IUs of a unit are written together, so mostly one page).
    fn read_unit_for_merge(&mut self, first: Lpn, span: u32, ops: &mut Vec<NandOp>) {
        let mut last_page = u32::MAX;
        for lpn in first..first + span {
            let p = self.map.l2p[lpn as usize];
            if p == UNMAPPED || self.is_pending(p) {
                continue;
            }
            let page_global = self.ipp_div.div(p);
            if page_global == last_page {
                if let Some(op) = ops.last_mut() {
                    op.ius += 1;
                }
                continue;
            }
            last_page = page_global;
            let (block, page) = self.ppb_div.div_rem(page_global);
            ops.push(NandOp {
                kind: NandOpKind::Read,
                cause: OpCause::ReadModifyWrite,
                block,
                page,
                ius: 1,
                slc: self.blocks.info[block as usize].slc,
            });
            self.counters.rmw_reads += 1;
            self.counters.nand_read_pages += 1;
        }
    }

    /// Deallocate `lpn` as part of a compressed write whose data waits in stream `waiting`'s
    /// current page (None: already durable, so the deallocation is durable at once).
    fn deallocate_behind(&mut self, lpn: Lpn, waiting: Option<StreamId>) {
        let cur = self.map.l2p[lpn as usize];
        if cur == UNMAPPED {
            // Nothing mapped; a trim record of an earlier write, if any, stays: neither
            // write is durable yet.
            return;
        }
        let Some(s) = waiting else {
            // As a host trim, without counting one.
            self.trim(lpn, 1);
            self.counters.host_trim_ius -= 1;
            return;
        };
        let mut prev = cur;
        if self.is_pending(cur) {
            let (ps, pslot) = self.pending_record(cur);
            prev = self.streams[ps as usize].undo[pslot as usize].prev;
            self.streams[ps as usize].undo[pslot as usize] = NO_UNDO;
            self.invalidate(cur);
        } else if let Some(p) = self.take_trim_record(lpn) {
            // Stored by an earlier write of the unit not yet committed.
            self.invalidate(cur);
            prev = p;
        }
        if prev != UNMAPPED {
            self.streams[s as usize]
                .trims
                .push(crate::alloc::Undo { lpn, prev });
        }
        self.map.l2p[lpn as usize] = UNMAPPED;
        self.map.mapped -= 1;
    }

    /// Remove the record of `lpn` from the streams' deferred records (see
    /// [`Self::write_compressed`]), returning the copy a power loss would bring back
    /// ([`UNMAPPED`]: none). Without records (every drive that does not compress) no search.
    #[inline]
    fn take_trim_record(&mut self, lpn: Lpn) -> Option<u32> {
        for s in [StreamId::Host, StreamId::Slc] {
            let trims = &mut self.streams[s as usize].trims;
            if let Some(i) = trims.iter().position(|r| r.lpn == lpn) {
                return Some(trims.swap_remove(i).prev);
            }
        }
        None
    }

    /// Write one IU of the controller's own metadata (a translation page of a paged map,
    /// kept in logical IUs the device does not expose to the host): placed, relocated and
    /// worn like host data, but counted as NAND writes only, not as host writes.
    pub fn write_metadata(&mut self, lpn: Lpn, ops: &mut Vec<NandOp>) {
        self.assert_range(lpn, 1);
        self.write_one(lpn, false, 0, ops, None::<&fn(u32) -> u64>);
        self.counters.host_write_ius -= 1;
        self.after_op();
    }

    /// Where IU `lpn` lives for a read the host did not ask for (metadata, read-ahead):
    /// [`Self::read`] without counting a host read; a NAND location counts as a NAND page
    /// read.
    #[inline]
    pub fn locate_metadata(&mut self, lpn: Lpn) -> ReadLocation {
        let at = self.read(lpn);
        self.counters.host_read_ius -= 1;
        at
    }

    /// The host stream (host or SLC) and slot whose unprogrammed page holds `ppa`.
    fn pending_record(&self, ppa: u32) -> (StreamId, u32) {
        let (b, _, slot) = self.split(ppa);
        for s in [StreamId::Host, StreamId::Slc] {
            if self.streams[s as usize].cur_block == b {
                return (s, slot);
            }
        }
        panic!("FTL invariant broken: pending IU {ppa} is in no host stream's open page");
    }

    /// Where IU `lpn` lives (counts the read in the counters).
    #[inline(always)]
    pub fn read(&mut self, lpn: Lpn) -> ReadLocation {
        self.assert_range(lpn, 1);
        self.counters.host_read_ius += 1;
        let p = self.map.l2p[lpn as usize];
        if p == UNMAPPED {
            return ReadLocation::Unmapped;
        }
        // One division for both the pending check and the block and page (see `split`).
        let page_global = self.ipp_div.div(p);
        if self.page_is_pending(page_global) {
            return ReadLocation::Buffered;
        }
        debug_assert!(!self.is_pending(p));
        let (block, page) = self.ppb_div.div_rem(page_global);
        // A drive without SLC mode skips the block's record: on a large drive's random reads
        // it is a cache miss of its own, after the map entry's.
        let slc = self.slc_cache_enabled() && self.blocks.info[block as usize].slc;
        self.counters.nand_read_pages += 1;
        if slc {
            self.counters.slc_read_hits += 1;
        }
        ReadLocation::Nand { block, page, slc }
    }

    /// Start loading the map entries of the IUs `[first, first + count)` into the cache (a
    /// hint for an imminent read or write; no effect on any state, and nothing for IUs out of
    /// range). At most [`PREFETCH_IUS`] of them: their entries span at most two lines, the
    /// first's and the last's.
    #[inline]
    pub fn prefetch(&self, first: Lpn, count: u32) {
        let last = first.saturating_add(count.clamp(1, PREFETCH_IUS) - 1);
        for lpn in [first, last] {
            if let Some(entry) = self.map.l2p.get(lpn as usize) {
                prefetch_read(entry);
            }
        }
    }

    /// Start loading the reverse-map entries of the current copies of IUs `[first, first +
    /// count)` (at most [`PREFETCH_IUS`]) and their blocks' counters and bucket links, which
    /// a write of them invalidates: random lines of tables far larger than the caches, one
    /// per IU that random writes left apart. Call it once the map entries themselves are
    /// likely cached (they were [`Self::prefetch`]ed a command earlier) and some work before
    /// the write. No effect on any state.
    #[inline(never)]
    pub fn prefetch_old_copies(&self, first: Lpn, count: u32) {
        let end = first.saturating_add(count.clamp(1, PREFETCH_IUS));
        for lpn in first..end {
            let Some(&old) = self.map.l2p.get(lpn as usize) else {
                return;
            };
            if let Some(entry) = self.map.p2l.get(old as usize) {
                prefetch_read(entry);
                let (block, _, _) = self.split(old);
                self.blocks.prefetch(block);
            }
        }
    }

    /// Version tag of the data a read of `lpn` returns (None = unmapped, or versions are not
    /// tracked).
    pub fn read_version(&self, lpn: Lpn) -> Option<u32> {
        let p = *self.map.l2p.get(lpn as usize)?;
        if p == UNMAPPED || self.map.versions.is_empty() {
            return None;
        }
        Some(self.map.version_at(p))
    }

    /// Deallocate IUs `[first, first + count)`. Durable at once: a later power loss does not
    /// bring back a trimmed IU's older data.
    pub fn trim(&mut self, first: Lpn, count: u32) {
        self.assert_range(first, count);
        for lpn in first..first + count {
            self.counters.host_trim_ius += 1;
            let cur = self.map.l2p[lpn as usize];
            // A compressed unit's uncommitted change is superseded by a durable trim: its
            // fallback copy goes too.
            if let Some(prev) = self.take_trim_record(lpn) {
                if prev != UNMAPPED {
                    self.invalidate(prev);
                }
            }
            if cur == UNMAPPED {
                continue;
            }
            if !self.cfg.power_loss_protection && self.is_pending(cur) {
                let (s, slot) = self.pending_record(cur);
                let rec = self.streams[s as usize].undo[slot as usize];
                self.streams[s as usize].undo[slot as usize] = NO_UNDO;
                if rec.prev != UNMAPPED {
                    self.invalidate(rec.prev);
                }
            }
            self.invalidate(cur);
            self.map.l2p[lpn as usize] = UNMAPPED;
            self.map.mapped -= 1;
        }
        self.after_op();
    }

    /// Program any partly filled open pages (padding them), so everything written is durable.
    pub fn flush(&mut self, ops: &mut Vec<NandOp>) {
        for s in STREAMS {
            self.pad_stream(s, ops);
        }
        if self.fdp.on {
            self.pad_parked(ops);
        }
        self.after_op();
    }

    /// Power is lost. With PLP: as flush. Without: data in unprogrammed open pages is lost and
    /// those IUs read as their previous durable version (or unmapped if they had none).
    pub fn power_loss(&mut self, ops: &mut Vec<NandOp>) {
        if self.cfg.power_loss_protection {
            self.flush(ops);
            return;
        }
        for s in [StreamId::Host, StreamId::Slc] {
            let (b, page, fill) = {
                let st = &self.streams[s as usize];
                (st.cur_block, st.cur_page, st.fill)
            };
            if b == NIL {
                continue;
            }
            for slot in 0..fill {
                let rec = self.streams[s as usize].undo[slot as usize];
                self.streams[s as usize].undo[slot as usize] = NO_UNDO;
                if rec.lpn == NIL {
                    continue;
                }
                let ppa = self.ppa_of(b, page, slot);
                debug_assert_eq!(self.map.l2p[rec.lpn as usize], ppa);
                self.invalidate(ppa);
                self.map.l2p[rec.lpn as usize] = rec.prev;
                if rec.prev == UNMAPPED {
                    self.map.mapped -= 1;
                }
            }
            // A lost compressed unit comes back whole: the IUs it deallocated, and those it
            // stored in a page programmed before the unit's last one, map to their old copies.
            let trims = std::mem::take(&mut self.streams[s as usize].trims);
            for rec in &trims {
                let cur = self.map.l2p[rec.lpn as usize];
                if cur != UNMAPPED {
                    self.invalidate(cur);
                    self.map.mapped -= 1;
                }
                if rec.prev != UNMAPPED {
                    self.map.mapped += 1;
                }
                self.map.l2p[rec.lpn as usize] = rec.prev;
            }
            // The page was never programmed: it is still erased and is reused from slot 0.
            self.streams[s as usize].fill = 0;
        }
        debug_assert!(
            [StreamId::Gc, StreamId::Fold]
                .iter()
                .all(|&s| self.streams[s as usize].fill == 0),
            "relocation left an unprogrammed page without PLP"
        );
        self.after_op();
    }

    /// Secure erase: every IU unmapped, every block holding programmed pages erased (erase
    /// counts kept, and incremented for those erases), dynamic SLC blocks back to native mode.
    /// Counters restart from zero after the format.
    pub fn format(&mut self, ops: &mut Vec<NandOp>) {
        for b in 0..self.geo.total_blocks {
            let i = b as usize;
            if self.blocks.info[i].programmed > 0 {
                ops.push(NandOp {
                    kind: NandOpKind::Erase,
                    cause: OpCause::Gc,
                    block: b,
                    page: 0,
                    ius: 0,
                    slc: self.blocks.info[i].slc,
                });
            }
        }
        // Blocks retired in use stay retired (the drive keeps its grown defect list).
        let fresh = self
            .blocks
            .renewed(&self.geo, |b| self.blocks.info[b as usize].programmed > 0);
        self.blocks = fresh;
        self.map.clear();
        if self.fdp.on {
            self.fdp_format();
        }
        self.streams = fresh_streams(&self.geo);
        self.counters = FtlCounters::default();
        self.seq = 0;
        self.erases_since_wl = 0;
        self.wl_queue_len = 0;
        self.after_op();
    }
}

/// Most IUs of one request a prefetch hint loads: a 64 KiB write on a 4 KiB IU, the
/// largest transfer of the JEDEC enterprise mix. Bounds the hint's work on long sequential
/// requests, whose old copies lie together anyway.
pub const PREFETCH_IUS: u32 = 16;

#[cfg(test)]
mod tests {
    use crate::config::tests::small;
    use crate::{Ftl, NandOpKind, ReadLocation};

    /// Compressed writes placed in stripe order.
    const NOT_PLACED: Option<&fn(u32) -> u64> = None;

    /// The small FTL with `ius_per_page`, without PLP, versions tracked.
    fn without_plp(ius_per_page: u32) -> Ftl {
        let mut cfg = small();
        cfg.ius_per_page = ius_per_page;
        cfg.power_loss_protection = false;
        cfg.track_versions = true;
        Ftl::new(cfg).unwrap()
    }

    #[test]
    fn a_compressed_unit_takes_only_the_ius_its_data_needs() {
        let mut cfg = small();
        cfg.ius_per_page = 4;
        let mut ftl = Ftl::new(cfg).unwrap();
        let mut ops = Vec::new();
        let none = NOT_PLACED;
        // Units of 4 IUs: incompressible data fills them, half-compressible data takes 2.
        for unit in 0..8 {
            ftl.write_compressed(unit * 4, 4, 4, false, 1, &mut ops, none);
        }
        for unit in 0..8 {
            ftl.write_compressed(unit * 4, 2, 4, false, 2, &mut ops, none);
        }
        ftl.flush(&mut ops);
        ftl.check_invariants();
        assert_eq!(ftl.mapped_ius(), 16);
        assert_eq!(ftl.read(6), ReadLocation::Unmapped);
        assert!(matches!(ftl.read(5), ReadLocation::Nand { .. }));
        let c = ftl.counters();
        assert_eq!((c.host_write_ius, c.nand_write_ius), (64, 48));
        assert_eq!(c.compression_saved_ius, 16);
        assert!((c.write_amplification() - 0.75).abs() < 1e-12);
        assert_eq!(
            c.host_trim_ius, 0,
            "a compressed write's deallocation is no host trim"
        );
        // Part of unit 1 rewritten: its two stored IUs share a page, read once to merge.
        ops.clear();
        ftl.write_compressed(4, 3, 4, true, 3, &mut ops, none);
        let rmw: Vec<_> = ops
            .iter()
            .filter(|o| o.cause == crate::OpCause::ReadModifyWrite)
            .collect();
        assert_eq!(rmw.len(), 1);
        assert_eq!(rmw[0].ius, 2);
        ftl.check_invariants();
    }

    #[test]
    fn a_lost_compressed_write_leaves_its_unit_whole() {
        let mut ftl = without_plp(8);
        let mut ops = Vec::new();
        let none = NOT_PLACED;
        ftl.write_compressed(0, 4, 4, false, 1, &mut ops, none);
        ftl.write_compressed(4, 4, 4, false, 1, &mut ops, none);
        ftl.flush(&mut ops);
        // Unit 0 rewritten compressed to one IU; the page is not programmed when power fails.
        ftl.write_compressed(0, 1, 4, false, 2, &mut ops, none);
        assert_eq!(ftl.read_version(3), None);
        ftl.check_invariants();
        ftl.power_loss(&mut ops);
        ftl.check_invariants();
        for lpn in 0..4 {
            assert_eq!(ftl.read_version(lpn), Some(1), "IU {lpn}");
        }
        // Again, now programmed before the power loss: the deallocation is durable.
        ftl.write_compressed(0, 1, 4, false, 3, &mut ops, none);
        ftl.flush(&mut ops);
        ftl.power_loss(&mut ops);
        ftl.check_invariants();
        assert_eq!(ftl.read_version(0), Some(3));
        assert_eq!(ftl.read_version(1), None);
        assert_eq!(ftl.mapped_ius(), 5);
    }

    #[test]
    fn a_unit_across_two_pages_is_committed_with_the_second() {
        let mut ftl = without_plp(4);
        let mut ops = Vec::new();
        let none = NOT_PLACED;
        ftl.write_compressed(0, 4, 4, false, 1, &mut ops, none);
        ftl.flush(&mut ops);
        // Three IUs in the open page, then a unit of three: its first IU fills that page
        // (programmed), the other two wait in the next.
        ftl.write(8, 3, false, false, 2, &mut ops);
        ftl.write_compressed(0, 3, 4, false, 3, &mut ops, none);
        assert!(matches!(ftl.read(0), ReadLocation::Nand { .. }));
        assert_eq!(ftl.read(1), ReadLocation::Buffered);
        ftl.check_invariants();
        // IU 0 rewritten on its own before the unit is committed: a power loss still brings
        // the unit back whole, as it was before version 3.
        ftl.write(0, 1, false, false, 4, &mut ops);
        ftl.check_invariants();
        ftl.power_loss(&mut ops);
        ftl.check_invariants();
        for lpn in 0..4 {
            assert_eq!(ftl.read_version(lpn), Some(1), "IU {lpn}");
        }
        // Committed once the page of its last IU is programmed.
        ftl.write_compressed(0, 3, 4, false, 5, &mut ops, none);
        ftl.flush(&mut ops);
        ftl.power_loss(&mut ops);
        ftl.check_invariants();
        let versions: Vec<_> = (0..4).map(|l| ftl.read_version(l)).collect();
        assert_eq!(versions, [Some(5), Some(5), Some(5), None]);
    }

    #[test]
    fn metadata_writes_are_nand_writes_not_host_writes_and_get_relocated() {
        let mut ftl = Ftl::new(small()).unwrap();
        let mut ops = Vec::new();
        // Metadata IU 1399 (the top of the logical space), rewritten among random host writes
        // until GC has run many times: its data stays mapped and readable.
        let mut x = 1u32;
        for round in 0..20_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            ftl.write((x >> 8) % 1399, 1, false, false, round, &mut ops);
            if round % 10 == 0 {
                ftl.write_metadata(1399, &mut ops);
            }
        }
        ftl.flush(&mut ops);
        let c = ftl.counters().clone();
        assert_eq!(c.host_write_ius, 20_000);
        assert!(c.nand_write_ius >= 22_000, "{}", c.nand_write_ius);
        assert!(c.gc_copied_ius > 0);
        assert!(ops.iter().any(|o| o.kind == NandOpKind::Erase));
        let reads_before = ftl.counters().nand_read_pages;
        assert!(matches!(
            ftl.locate_metadata(1399),
            ReadLocation::Nand { .. }
        ));
        assert_eq!(ftl.counters().host_read_ius, c.host_read_ius);
        assert_eq!(ftl.counters().nand_read_pages, reads_before + 1);
        ftl.check_invariants();
    }
}
