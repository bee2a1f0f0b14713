//! Write streams. Each stream (host, GC, SLC, fold) keeps one open block per (die, plane)
//! unit and fills one page at a time, moving to the next unit after each page so that
//! consecutive pages land on different dies. A page is programmed (a `Program` op) when its
//! last IU is placed; until then it lives in the controller's buffer.

use crate::blocks::{FreeEnd, Pool};
use crate::lists::NIL;
use crate::mapping::UNMAPPED;
use crate::{Ftl, NandOp, NandOpKind, OpCause, Ppa};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamId {
    Host = 0,
    Gc = 1,
    Slc = 2,
    Fold = 3,
}

pub(crate) const STREAMS: [StreamId; 4] =
    [StreamId::Host, StreamId::Gc, StreamId::Slc, StreamId::Fold];

/// Units a placed host page chooses among: the stream's cursor and the next ones in stripe
/// order. A unit behind on its work is passed over while any of these is ahead of it, and the
/// cursor moves on from the unit taken, so a laggard is looked at again within a round of the
/// units. Looking at every unit does no better and costs a probe per unit per page: all 32
/// units of a variant of the default drive gave the same steady random writes as 8 (-0.2%),
/// and on a 16-unit drive 4 to 8 units did best (`BENCHMARKS.md`, "Constants chosen by
/// measurement").
pub(crate) const PLACEMENT_WINDOW: u32 = 8;

/// Without PLP, a host IU in an unprogrammed page shadows its previous durable copy, which
/// stays valid until the page is programmed (so power loss can fall back to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Undo {
    /// [`NIL`] when the slot has no record (superseded, trimmed, or not a host write).
    pub lpn: u32,
    /// The previous durable copy, or [`UNMAPPED`].
    pub prev: Ppa,
}

flashlab_engine::impl_state!(Undo { lpn, prev });

impl Default for Undo {
    fn default() -> Self {
        NO_UNDO
    }
}

pub(crate) const NO_UNDO: Undo = Undo {
    lpn: NIL,
    prev: UNMAPPED,
};

pub(crate) struct Stream {
    /// Open block per unit, or [`NIL`].
    pub open: Vec<u32>,
    /// Entries of `open` that are not [`NIL`].
    pub open_count: u32,
    /// Unit the next page goes to.
    pub cursor: u32,
    /// The page being filled: its unit, block and page index (`cur_block` [`NIL`] if none).
    pub cur_unit: u32,
    pub cur_block: u32,
    pub cur_page: u32,
    /// `cur_block * pages_per_block + cur_page`, or [`NIL`] with no current page.
    pub cur_page_global: u32,
    /// IUs placed in the current page.
    pub fill: u32,
    /// Cause stamped on this stream's programs (GC and wear levelling share a stream).
    pub cause: OpCause,
    /// One record per slot of the current page.
    pub undo: Vec<Undo>,
    /// Deferred records of compressed units (see [`Ftl::write_compressed`]), settled when
    /// this stream's current page, which holds the unit's last stored IU, is programmed: IUs
    /// a unit deallocated (its data took fewer IUs than before; unmapped now) and IUs it
    /// stored in a page programmed before its last one (mapped to that durable copy).
    /// `prev` is the copy a power loss brings back, valid until then ([`UNMAPPED`]: none).
    pub trims: Vec<Undo>,
}

flashlab_engine::impl_state!(Stream {
    open,
    open_count,
    cursor,
    cur_unit,
    cur_block,
    cur_page,
    cur_page_global,
    fill,
    cause,
    undo,
    trims,
});

// A stream of the FDP tables rebuilt on loading, its fields then read from the state.
impl Default for Stream {
    fn default() -> Self {
        Stream::new(0, 0, OpCause::HostWrite)
    }
}

impl Stream {
    pub fn new(units: u32, ius_per_page: u32, cause: OpCause) -> Stream {
        Stream {
            open: vec![NIL; units as usize],
            open_count: 0,
            cursor: 0,
            cur_unit: 0,
            cur_block: NIL,
            cur_page: 0,
            cur_page_global: NIL,
            fill: 0,
            cause,
            undo: vec![NO_UNDO; ius_per_page as usize],
            trims: Vec::new(),
        }
    }
}

impl Ftl {
    #[inline]
    pub(crate) fn ppa_of(&self, block: u32, page: u32, slot: u32) -> Ppa {
        (block * self.geo.pages_per_block + page) * self.geo.ius_per_page + slot
    }

    /// (block, page, slot) of a physical IU.
    #[inline]
    pub(crate) fn split(&self, ppa: Ppa) -> (u32, u32, u32) {
        let (page_global, slot) = self.ipp_div.div_rem(ppa);
        let (block, page) = self.ppb_div.div_rem(page_global);
        (block, page, slot)
    }

    /// The IU sits in a page not yet programmed (held in the controller's buffer). Only a
    /// stream's current page is handed out but not programmed, so comparing with those few
    /// pages answers without touching the block's state (a cache miss on a random read).
    #[inline]
    pub(crate) fn is_pending(&self, ppa: Ppa) -> bool {
        let pending = self.page_is_pending(self.ipp_div.div(ppa));
        debug_assert_eq!(pending, {
            let (b, page, _) = self.split(ppa);
            page >= self.blocks.info[b as usize].programmed
        });
        pending
    }

    /// [`Self::is_pending`] of an IU in page `page_global` (its physical IU divided by the
    /// IUs per page), for a caller that needs the page anyway.
    #[inline]
    pub(crate) fn page_is_pending(&self, page_global: u32) -> bool {
        self.streams
            .iter()
            .any(|st| st.cur_page_global == page_global)
            || (self.fdp.on && self.parked_page_pending(page_global))
    }

    /// Whether the SLC stream may turn one more free native block into an SLC block: the
    /// dynamic cache stays within `dynamic_max_fraction` of the free native capacity and never
    /// takes blocks that GC would have to win back.
    pub(crate) fn dynamic_slc_allowed(&self) -> bool {
        if !self.cfg.slc.dynamic {
            return false;
        }
        let g = &self.geo;
        if self.blocks.free_count(Pool::Native) <= g.reserve_blocks + g.units + 1 {
            return false;
        }
        // The fraction is of native capacity not holding user data, counted in native blocks
        // (a block in SLC mode takes a native block's room and holds 1 / bits_per_cell of
        // it): an empty 256 GB TLC drive at 0.1 puts 25.6 GB of blocks in SLC mode, an
        // 8.5 GB cache, as `describe` reports.
        let dyn_blocks = u64::from(self.blocks.dynamic_slc_blocks());
        let good_native = g.native_blocks - self.blocks.retired().1;
        let free_capacity_ius = (u64::from(good_native) * u64::from(g.data_ius_per_block))
            .saturating_sub(u64::from(self.map.mapped));
        let want = (dyn_blocks + 1) * u64::from(g.data_ius_per_block);
        // The user capacity left unwritten must hold a stripe's blocks beyond the cache's:
        // a fold gives back a stripe at once (`Ftl::fold_stripe`), and a cache that took
        // that room again would have its next writes folded as well.
        let stripe_ius = u64::from(g.units) * u64::from(g.data_ius_per_block);
        want + stripe_ius <= self.unwritten_user_ius()
            && (want as f64) <= self.cfg.slc.dynamic_max_fraction * free_capacity_ius as f64
    }

    /// User capacity (IUs) not holding data: the room the dynamic cache's blocks may take.
    /// A block in SLC mode takes a native block's room; past what the user has not written it
    /// would take the spare area, which GC needs.
    #[inline]
    fn unwritten_user_ius(&self) -> u64 {
        u64::from(self.geo.user_ius - self.map.mapped)
    }

    /// Whether the dynamic cache's blocks take more than a block of room beyond the user
    /// capacity not yet written: the data grew into the room they hold.
    #[inline]
    pub(crate) fn dynamic_slc_over_limit(&self) -> bool {
        let dyn_blocks = u64::from(self.blocks.dynamic_slc_blocks());
        dyn_blocks > 1
            && (dyn_blocks - 1) * u64::from(self.geo.data_ius_per_block) > self.unwritten_user_ius()
    }

    /// Whether the SLC stream could take one more block now.
    pub(crate) fn slc_block_available(&self) -> bool {
        self.blocks.free_count(Pool::Static) > 0 || self.dynamic_slc_allowed()
    }

    /// A free block for stream `s`'s slot on `unit`: with `own_unit`, only one of that unit's
    /// that the stream can program without waiting for a queued erase (relocation streams
    /// excepted: their programs queue behind the erase anyway); otherwise preferably on
    /// `unit`, else from another unit, a block still waiting for its erase last.
    fn alloc_block(&mut self, s: StreamId, unit: u32, own_unit: bool) -> Option<u32> {
        let (pool, slc, end) = match s {
            StreamId::Slc => {
                let b = self
                    .take_block(Pool::Static, unit, true, FreeEnd::Oldest, own_unit)
                    .or_else(|| {
                        if self.dynamic_slc_allowed() {
                            self.take_block(Pool::Native, unit, true, FreeEnd::Oldest, own_unit)
                        } else {
                            None
                        }
                    });
                // The cache's blocks opened together hold data written together: they are
                // folded together (`Ftl::fold_stripe`).
                if let Some(b) = b {
                    self.blocks.join_stripe(b);
                }
                return b;
            }
            StreamId::Host => (Pool::Native, false, FreeEnd::Oldest),
            _ => (Pool::Native, false, FreeEnd::Newest),
        };
        let b = self.take_block(pool, unit, slc, end, own_unit);
        if let (Some(b), true) = (b, self.fdp.on) {
            self.fdp_opened(s, b);
        }
        // A stream's blocks opened together hold data written together: GC empties them
        // together (`Ftl::relocate_superblock`).
        if let (Some(b), true) = (b, self.superblock_gc()) {
            self.blocks.join_native_stripe(s as usize, b);
        }
        b
    }

    #[inline]
    fn take_block(
        &mut self,
        pool: Pool,
        unit: u32,
        slc: bool,
        end: FreeEnd,
        own_unit: bool,
    ) -> Option<u32> {
        let b = if own_unit {
            self.blocks.take_free_on_unit(pool, unit, slc, end)
        } else {
            self.blocks.take_free_at(pool, unit, slc, end)
        };
        if let (Some(b), Some(opened)) = (b, self.opened.as_mut()) {
            opened.push(b);
        }
        b
    }

    /// [`Self::route_host_write`], with the next page of the stream the IU goes to placed by
    /// [`Self::place_next_page`].
    #[inline]
    pub(crate) fn route_host_write_placed(&mut self, free_at_ns: &impl Fn(u32) -> u64) -> StreamId {
        // Routing starts the SLC stream's page itself: place it first, unless the cache is
        // exhausted (the full drive's common case, answered without probing any unit).
        let slc = &self.streams[StreamId::Slc as usize];
        if slc.cur_block == NIL
            && self.slc_cache_enabled()
            && (slc.open_count > 0 || self.slc_block_available())
        {
            self.place_next_page(StreamId::Slc, free_at_ns);
        }
        let s = self.route_host_write();
        if s == StreamId::Host && self.streams[s as usize].cur_block == NIL {
            self.place_next_page(s, free_at_ns);
        }
        s
    }

    /// Point the stream's cursor at the unit, among [`PLACEMENT_WINDOW`] from the cursor on,
    /// whose die can take a program soonest (dynamic page allocation: firmware steers a page
    /// away from a busy die, see `docs/scale.md`). `free_at_ns` is asked with the unit's open
    /// block, whose die the program will use, or the unit's first block. Ties go to the first
    /// unit in stripe order, so with equal times the stream stripes as before.
    fn place_next_page(&mut self, s: StreamId, free_at_ns: &impl Fn(u32) -> u64) {
        let (units, bpu) = (self.geo.units, self.geo.blocks_per_unit);
        let st = &mut self.streams[s as usize];
        let mut u = st.cursor;
        let (mut best_u, mut best_ns) = (u, u64::MAX);
        for _ in 0..PLACEMENT_WINDOW.min(units) {
            let b = st.open[u as usize];
            let t = free_at_ns(if b == NIL { u * bpu } else { b });
            if t < best_ns {
                (best_u, best_ns) = (u, t);
            }
            u = if u + 1 == units { 0 } else { u + 1 };
        }
        st.cursor = best_u;
    }

    /// Start a new page on the stream's next unit that has (or can get) an open block.
    pub(crate) fn start_page(&mut self, s: StreamId) -> bool {
        let si = s as usize;
        debug_assert_eq!(self.streams[si].cur_block, NIL);
        let u = self.streams[si].cursor;
        // Usually the cursor's unit has an open block: no search.
        let b = self.streams[si].open[u as usize];
        if b != NIL {
            self.open_page(si, u, b);
            return true;
        }
        self.start_page_search(s)
    }

    /// [`Self::start_page`] when the cursor's unit has no open block.
    #[cold]
    fn start_page_search(&mut self, s: StreamId) -> bool {
        let si = s as usize;
        let units = self.geo.units;
        // A unit's stripe slot takes a block of that unit, ready to program. A unit without
        // one is passed over for this page only: a block of another unit in its slot would
        // send a whole block of the slot's pages to that other unit's die, which then does
        // the work of two (while this unit's free blocks wait for their queued erases).
        let mut u = self.streams[si].cursor;
        for _ in 0..units {
            let mut b = self.streams[si].open[u as usize];
            if b == NIL {
                if let Some(nb) = self.alloc_block(s, u, true) {
                    b = nb;
                    self.streams[si].open[u as usize] = nb;
                    self.streams[si].open_count += 1;
                }
            }
            if b != NIL {
                self.open_page(si, u, b);
                return true;
            }
            self.counters.stripe_slots_passed_over += 1;
            u = if u + 1 == units { 0 } else { u + 1 };
        }
        // No unit has a block of its own ready: take the one whose erase comes first.
        let mut u = self.streams[si].cursor;
        // Allocation falls back to any unit, so once it fails it fails for every unit.
        let mut can_alloc = true;
        for _ in 0..units {
            let mut b = self.streams[si].open[u as usize];
            if b == NIL && can_alloc {
                match self.alloc_block(s, u, false) {
                    Some(nb) => {
                        b = nb;
                        self.streams[si].open[u as usize] = nb;
                        self.streams[si].open_count += 1;
                    }
                    None => can_alloc = false,
                }
            }
            if b == NIL {
                u = if u + 1 == units { 0 } else { u + 1 };
                continue;
            }
            self.open_page(si, u, b);
            return true;
        }
        false
    }

    /// Make the next page of open block `b` on unit `u` the stream's current page.
    #[inline]
    fn open_page(&mut self, si: usize, u: u32, b: u32) {
        let page = self.blocks.info[b as usize].wp;
        debug_assert!(page < self.blocks.capacity_pages(b));
        self.blocks.info[b as usize].wp = page + 1;
        let page_global = b * self.geo.pages_per_block + page;
        let st = &mut self.streams[si];
        st.cur_unit = u;
        st.cur_block = b;
        st.cur_page = page;
        st.cur_page_global = page_global;
        st.fill = 0;
    }

    /// Reserve the next IU slot of the stream: (physical address, slot index in the page).
    #[inline]
    pub(crate) fn next_slot(&mut self, s: StreamId) -> Option<(Ppa, u32)> {
        if self.streams[s as usize].cur_block == NIL && !self.start_page(s) {
            return None;
        }
        let st = &self.streams[s as usize];
        let (b, page, slot) = (st.cur_block, st.cur_page, st.fill);
        self.streams[s as usize].fill = slot + 1;
        // Every reserved slot is filled with live data right away by the caller.
        self.blocks.add_valid(b);
        Some((self.ppa_of(b, page, slot), slot))
    }

    /// Program the current page once its last slot is placed.
    #[inline]
    pub(crate) fn finish_slot(&mut self, s: StreamId, ops: &mut Vec<NandOp>) {
        if self.streams[s as usize].fill == self.geo.ius_per_page {
            self.program_page(s, ops);
        }
    }

    /// Program the stream's current page (padding unused slots): emit the op, make shadowed
    /// previous copies invalid, close the block if it is full.
    pub(crate) fn program_page(&mut self, s: StreamId, ops: &mut Vec<NandOp>) {
        let si = s as usize;
        let fill = self.streams[si].fill;
        debug_assert_ne!(self.streams[si].cur_block, NIL);
        // Only host pages carry undo records, and only without PLP.
        let undo = !self.cfg.power_loss_protection && matches!(s, StreamId::Host | StreamId::Slc);
        debug_assert!(
            undo || self.streams[si].undo[..fill as usize]
                .iter()
                .all(|r| r.lpn == NIL)
        );
        let (unit, span) = self.unit_in_progress;
        for slot in 0..if undo { fill as usize } else { 0 } {
            let rec = self.streams[si].undo[slot];
            if rec.lpn != NIL {
                self.streams[si].undo[slot] = NO_UNDO;
                if rec.lpn.wrapping_sub(unit) < span {
                    // Part of a compressed unit that goes on in the next page: committed
                    // only with the unit's last granule (a power loss before then brings
                    // the whole unit back).
                    self.streams[si].trims.push(rec);
                } else if rec.prev != UNMAPPED {
                    self.invalidate(rec.prev);
                }
            }
        }
        if undo && !self.streams[si].trims.is_empty() {
            let (unit, span) = self.unit_in_progress;
            let mut trims = std::mem::take(&mut self.streams[si].trims);
            trims.retain(|rec| {
                // A unit still being placed keeps its records for its last page.
                let keep = rec.lpn.wrapping_sub(unit) < span;
                if !keep && rec.prev != UNMAPPED {
                    self.invalidate(rec.prev);
                }
                keep
            });
            self.streams[si].trims = trims;
        }
        self.emit_program(si, ops);
    }

    /// Emit the program of stream `si`'s current page (its undo records, if any, settled)
    /// and move the stream on. Inlined into relocation's copy loop: its pages carry no undo
    /// records.
    #[inline(always)]
    pub(crate) fn emit_program(&mut self, si: usize, ops: &mut Vec<NandOp>) {
        let st = &mut self.streams[si];
        let (b, page, unit) = (st.cur_block, st.cur_page, st.cur_unit);
        st.cur_block = NIL;
        st.cur_page_global = NIL;
        st.fill = 0;
        self.program_and_advance(si, b, page, unit, ops);
        self.count_programs(1);
    }

    /// `pages` page programs were emitted ([`Self::program_and_advance`] leaves the count
    /// to its caller: relocation's one-IU-page loop counts once per victim).
    #[inline(always)]
    pub(crate) fn count_programs(&mut self, pages: u32) {
        self.counters.nand_program_pages += u64::from(pages);
        self.counters.nand_write_ius += u64::from(pages) * u64::from(self.geo.ius_per_page);
    }

    /// Emit the program of page `page` of stream `si`'s open block `b` on `unit`, move the
    /// stream's cursor past the unit, and close the block once full. The caller counts it
    /// ([`Self::count_programs`]).
    #[inline(always)]
    pub(crate) fn program_and_advance(
        &mut self,
        si: usize,
        b: u32,
        page: u32,
        unit: u32,
        ops: &mut Vec<NandOp>,
    ) {
        // The block's record and the stream are looked up once each (one copy per IU
        // moved runs this with 4 KiB pages).
        let info = &mut self.blocks.info[b as usize];
        let slc = info.slc;
        debug_assert_eq!(info.programmed, page);
        info.programmed = page + 1;
        let pages = self.blocks.pages_in_mode(slc);
        let mut full = page + 1 == pages;
        let st = &mut self.streams[si];
        ops.push(NandOp {
            kind: NandOpKind::Program,
            cause: st.cause,
            block: b,
            page,
            ius: self.geo.ius_per_page,
            slc,
        });
        if !full && self.geo.is_parity_page(page + 1) {
            // The stripe's data pages are all programmed: its parity page follows. Parity of
            // host data is not host data (it releases no buffer space), so it carries its own
            // cause; parity of GC and fold copies is paced with them. Counted here: callers
            // count only their data pages.
            let cause = match st.cause {
                OpCause::HostWrite => OpCause::Parity,
                c => c,
            };
            ops.push(NandOp {
                kind: NandOpKind::Program,
                cause,
                block: b,
                page: page + 1,
                ius: self.geo.ius_per_page,
                slc,
            });
            let info = &mut self.blocks.info[b as usize];
            info.programmed = page + 2;
            info.wp = page + 2;
            full = page + 2 == pages;
            self.count_programs(1);
            self.counters.parity_program_pages += 1;
        }
        let st = &mut self.streams[si];
        st.cursor = if unit + 1 == self.geo.units {
            0
        } else {
            unit + 1
        };
        if full {
            st.open[unit as usize] = NIL;
            st.open_count -= 1;
            self.blocks.close(b, self.seq);
        }
    }

    /// Program a partly filled page of the stream, if any (flush, or relocation end without PLP).
    pub(crate) fn pad_stream(&mut self, s: StreamId, ops: &mut Vec<NandOp>) {
        let st = &self.streams[s as usize];
        if st.cur_block != NIL && st.fill > 0 {
            self.program_page(s, ops);
        }
    }

    /// The copy at `ppa` no longer holds live data.
    #[inline]
    pub(crate) fn invalidate(&mut self, ppa: Ppa) {
        debug_assert_ne!(self.map.p2l[ppa as usize], crate::mapping::INVALID);
        self.map.p2l[ppa as usize] = crate::mapping::INVALID;
        let (b, _, _) = self.split(ppa);
        self.blocks.dec_valid(b);
    }

    /// Every open block's state, for the invariant check: (stream, unit) holding each block.
    pub(crate) fn open_block_owner(&self, b: u32) -> Option<(StreamId, u32)> {
        for (s, _, st) in self.all_streams() {
            for (u, &ob) in st.open.iter().enumerate() {
                if ob == b {
                    return Some((s, u as u32));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::config::tests::small;
    use crate::{Ftl, NandOp, NandOpKind, OpCause};

    /// A 4-unit drive (2 dies x 2 planes) with enough spare for GC to run often.
    fn four_units() -> Ftl {
        let mut c = small();
        c.planes_per_die = 2;
        c.blocks_per_plane = 32;
        c.user_ius = 1400;
        Ftl::new(c).unwrap()
    }

    fn host_program_units(ftl: &Ftl, ops: &[NandOp]) -> Vec<u32> {
        ops.iter()
            .filter(|o| o.kind == NandOpKind::Program && o.cause == OpCause::HostWrite)
            .map(|o| o.block / ftl.geo.blocks_per_unit)
            .collect()
    }

    #[test]
    fn equal_free_times_keep_stripe_order() {
        let (mut a, mut b) = (four_units(), four_units());
        let (mut oa, mut ob) = (Vec::new(), Vec::new());
        for i in 0..6000u32 {
            let lpn = i.wrapping_mul(2_654_435_761) % 1400;
            a.write(lpn, 1, false, false, i, &mut oa);
            b.write_placed(lpn, 1, false, false, i, &mut ob, |_| 7);
        }
        assert!(a.counters().gc_copied_ius > 0);
        assert_eq!(oa, ob);
    }

    #[test]
    fn a_busy_unit_gets_few_host_pages_and_gc_still_spreads() {
        let mut ftl = four_units();
        let bpu = ftl.geo.blocks_per_unit;
        let mut ops = Vec::new();
        let (mut pages, mut on_busy) = (0, 0);
        let mut gc_erases = [0u32; 4];
        for i in 0..6000u32 {
            let lpn = i.wrapping_mul(2_654_435_761) % 1400;
            // One unit at a time is far behind (a GC burst), for 100 host IUs each.
            let busy = (i / 100) % 4;
            ops.clear();
            ftl.write_placed(lpn, 1, false, false, i, &mut ops, |b| {
                if b / bpu == busy {
                    1_000_000
                } else {
                    u64::from(i % 7)
                }
            });
            for u in host_program_units(&ftl, &ops) {
                pages += 1;
                on_busy += usize::from(u == busy);
            }
            for o in ops.iter().filter(|o| o.kind == NandOpKind::Erase) {
                gc_erases[(o.block / bpu) as usize] += 1;
            }
        }
        ftl.check_invariants();
        for i in 0..6000u32 {
            let lpn = i.wrapping_mul(2_654_435_761) % 1400;
            assert!(ftl.read_version(lpn).is_some());
        }
        // Striped, a quarter of the pages would land on the busy unit.
        assert!(
            on_busy * 20 < pages,
            "{on_busy} of {pages} host pages on the busy unit"
        );
        // Victims still come from every unit alike.
        let (lo, hi) = (
            gc_erases.iter().min().unwrap(),
            gc_erases.iter().max().unwrap(),
        );
        assert!(
            *lo > 0 && hi - lo <= hi / 4,
            "erases per unit {gc_erases:?}"
        );
    }

    #[test]
    fn placement_holds_the_mapping_under_a_shifting_clock() {
        let mut c = small();
        c.planes_per_die = 2;
        c.blocks_per_plane = 32;
        c.slc.static_blocks = 2;
        c.power_loss_protection = false;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        let mut latest = vec![None; 1400];
        let mut state = 1u64;
        for i in 0..8000u32 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let lpn = ((state >> 33) % 1400) as u32;
            let shift = (state >> 20) as u32;
            ftl.write_placed(lpn, 1, false, false, i, &mut ops, |b| {
                u64::from(b.wrapping_mul(shift) % 97)
            });
            latest[lpn as usize] = Some(i);
            if i % 1000 == 999 {
                ftl.flush(&mut ops);
                ftl.check_invariants();
            }
            ops.clear();
        }
        for (lpn, v) in latest.iter().enumerate() {
            assert_eq!(ftl.read_version(lpn as u32), *v);
        }
    }
}
