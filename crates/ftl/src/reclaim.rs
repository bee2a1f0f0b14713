//! Emptying blocks: garbage collection of native blocks, folding SLC blocks into native ones,
//! and the background work loop. All relocation reads each page holding valid data, rewrites
//! the valid IUs through a relocation stream and erases the source block.

use crate::alloc::{StreamId, STREAMS};
use crate::blocks::{BlockState, Class, Pool};
use crate::config::GcUnit;
use crate::gc::{Greedy, VictimSelector};
use crate::lists::NIL;
use crate::mapping::INVALID;
use crate::prefetch::prefetch_read;
use crate::{Ftl, Lpn, NandOp, NandOpKind, OpCause, Ppa};

/// A GC victim from the unit with the fewest free blocks may free `1 / SPREAD_SLACK_DIVISOR`
/// less than the policy's pick.
const SPREAD_SLACK_DIVISOR: u32 = 8;

/// A unit down to this many free blocks gets the next victim whatever it frees: the next
/// stream to open a block there takes its last one.
const LAST_FREE_BLOCKS: u32 = 1;

/// How many victim pages ahead of the copy in progress relocation starts loading the L2P
/// entries of their IUs. Counted in pages, not IUs: a page's copies cost about the same
/// whatever it holds (a NAND read, its IUs' programs), so this keeps the loads the same time
/// ahead. Eight pages (32 IUs of 16 KiB pages) keep the 16 GiB write benchmark with 16 KiB
/// pages 7% faster than eight IUs would; with 4 KiB pages, 32 or 64 IUs ahead gain nothing
/// over 8 (BENCHMARKS.md, "Constants chosen by measurement").
const RELOCATION_PREFETCH_PAGES: u32 = 8;

/// Most IUs per page whose live IUs relocation gathers into a fixed array (a 64 KiB page of
/// 4 KiB IUs); pages of more IUs take the same steps one slot at a time.
const GATHER_IUS: usize = 16;

/// A block of the SLC stripe being folded ([`Ftl::fold_stripe`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FoldMember {
    pub block: u32,
    /// IUs moved out of it so far.
    pub moved: u32,
    /// A host page not yet programmed shadows a copy in it.
    pub shadows: bool,
    /// First IU of its last page folded as part of a sequential run, else [`NIL`].
    pub run_lpn: Lpn,
}

impl FoldMember {
    fn new(block: u32) -> Self {
        Self {
            block,
            moved: 0,
            shadows: false,
            run_lpn: NIL,
        }
    }
}

/// The read of `ius` live IUs in page `page` of victim `block`.
#[inline(always)]
fn victim_read(cause: OpCause, block: u32, page: u32, ius: u32, slc: bool) -> NandOp {
    NandOp {
        kind: NandOpKind::Read,
        cause,
        block,
        page,
        ius,
        slc,
    }
}

/// Pages a plane's fold buffer holds for its die's multi-plane program
/// ([`Ftl::gather_die_programs`]).
pub(crate) const HELD_PER_PLANE: usize = 4;

/// The fold's programs held per unit (plane) until their die has one for each plane, oldest
/// first; empty between folds. Sized once, [`HELD_PER_PLANE`] per unit.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeldPrograms {
    /// Unit `u`'s held programs are `ops[u * HELD_PER_PLANE..][..len[u]]`.
    ops: Vec<NandOp>,
    len: Vec<u8>,
}

impl HeldPrograms {
    pub(crate) fn new(units: usize) -> Self {
        HeldPrograms {
            ops: vec![NandOp::default(); units * HELD_PER_PLANE],
            len: vec![0; units],
        }
    }

    fn push(&mut self, unit: usize, op: NandOp) {
        let n = self.len[unit] as usize;
        debug_assert!(n < HELD_PER_PLANE);
        self.ops[unit * HELD_PER_PLANE + n] = op;
        self.len[unit] += 1;
    }

    /// Place the oldest held program of each of a die's planes (`die`: its units) at `w`,
    /// in plane order; returns the slot after them.
    fn place_heads(
        &mut self,
        ops: &mut [NandOp],
        mut w: usize,
        die: std::ops::Range<usize>,
    ) -> usize {
        for unit in die {
            let n = self.len[unit] as usize;
            if n == 0 {
                continue;
            }
            let q = &mut self.ops[unit * HELD_PER_PLANE..unit * HELD_PER_PLANE + n];
            ops[w] = q[0];
            w += 1;
            q.copy_within(1.., 0);
            self.len[unit] -= 1;
        }
        w
    }
}

impl Ftl {
    /// Least free space a reclaim must win back from a victim: one IU with PLP; without it a
    /// whole page, since relocation may pad its last page.
    fn min_gain(&self) -> u32 {
        if self.cfg.power_loss_protection {
            1
        } else {
            self.geo.ius_per_page
        }
    }

    /// Free native blocks needed before optional work (folding, wear levelling) may take
    /// blocks: relocating one block can open a fresh block on every unit.
    pub(crate) fn optional_work_floor(&self) -> u32 {
        self.geo.reserve_blocks + self.geo.units + 1
    }

    /// Reclaim until more than the reserve of native blocks is free (or nothing is reclaimable).
    pub(crate) fn foreground_reclaim(&mut self, ops: &mut Vec<NandOp>) {
        while self.blocks.free_count(Pool::Native) <= self.geo.reserve_blocks {
            if !self.reclaim_one(ops) {
                break;
            }
        }
    }

    /// Empty the one block that frees native space most cheaply: the GC victim chosen by the
    /// policy, or a dynamic SLC block to fold (it frees a whole native block for at most
    /// `1 / bits_per_cell` of a block of copying). Returns false if no block is worth it.
    pub(crate) fn reclaim_one(&mut self, ops: &mut Vec<NandOp>) -> bool {
        let cap = self.geo.data_ius_per_block;
        let min_gain = self.min_gain();
        let worth = |valid: u32| cap - valid >= min_gain;
        let mut gc = self
            .selector
            .select(&mut self.blocks, Class::Native, self.seq);
        if gc.is_some_and(|b| !worth(self.blocks.info[b as usize].valid)) {
            // The policy's pick gains too little; the emptiest block gains the most.
            gc = Greedy
                .select(&mut self.blocks, Class::Native, self.seq)
                .filter(|&b| worth(self.blocks.info[b as usize].valid));
        }
        if let (Some(g0), false) = (gc, self.superblock_gc()) {
            // A superblock frees a block on every unit; a lone block only on its own.
            gc = Some(self.spread_victim(g0));
        }
        let fold = Greedy
            .select(&mut self.blocks, Class::SlcDynamic, self.seq)
            .filter(|&b| worth(self.blocks.info[b as usize].valid));
        let (victim, cause, dest) = match (gc, fold) {
            (Some(g), Some(f)) => {
                // Copies per freed IU: valid / (cap - valid); compare without dividing.
                let (vg, vf) = (
                    u64::from(self.blocks.info[g as usize].valid),
                    u64::from(self.blocks.info[f as usize].valid),
                );
                if vf * (u64::from(cap) - vg) < vg * (u64::from(cap) - vf) {
                    (f, OpCause::SlcFold, StreamId::Fold)
                } else {
                    (g, OpCause::Gc, StreamId::Gc)
                }
            }
            (Some(g), None) => (g, OpCause::Gc, StreamId::Gc),
            (None, Some(f)) => (f, OpCause::SlcFold, StreamId::Fold),
            (None, None) => return false,
        };
        if cause == OpCause::SlcFold {
            self.fold_stripe(victim, ops);
        } else if self.superblock_gc() {
            self.relocate_superblock(victim, ops);
        } else {
            self.relocate(victim, cause, dest, ops);
        }
        true
    }

    /// Whether GC empties superblocks (`ftl.gc_unit`); FDP keeps its reclaim units'
    /// blocks apart, so with FDP on GC empties blocks.
    #[inline]
    pub(crate) fn superblock_gc(&self) -> bool {
        self.cfg.gc.unit == GcUnit::Superblock && !self.fdp.on
    }

    /// Empty native block `b`, the policy's victim, with the closed blocks of its superblock
    /// (the blocks its stream opened together, one per unit): firmware that writes a stripe
    /// over every die collects it whole, so its relocation reads and copies keep every die
    /// busy instead of queueing a block's reads on one (Linux pblk recycles a line, a block
    /// on every parallel unit, reading it in parallel). Members whose copies would not fit
    /// in the free native blocks beyond one per unit (the relocation stream's next blocks)
    /// are left for later; `b` is emptied whatever. O(units) per superblock to find its
    /// blocks, no allocation (the fold's member list is reused).
    fn relocate_superblock(&mut self, b: u32, ops: &mut Vec<NandOp>) {
        let room_ius = u64::from(
            self.blocks
                .free_count(Pool::Native)
                .saturating_sub(self.geo.units + 1),
        ) * u64::from(self.geo.data_ius_per_block);
        let mut group = self.stripe_group(b, false, room_ius);
        if group.is_empty() {
            self.fold_group = group;
            self.relocate(b, OpCause::Gc, StreamId::Gc, ops);
            return;
        }
        self.relocate_rows(&mut group, ops);
        group.clear();
        self.fold_group = group;
    }

    /// The closed blocks of `b`'s stripe in cell mode `slc` whose valid IUs fit in
    /// `room_ius` with `b`'s, then `b`, in unit order (a block's id orders it by unit: the
    /// order a stream writes a row of pages over the units); empty when no other block
    /// qualifies. The list is the fold's reused member list: the caller hands it back to
    /// `fold_group`, cleared. O(units).
    fn stripe_group(&mut self, b: u32, slc: bool, room_ius: u64) -> Vec<FoldMember> {
        let mut group = std::mem::take(&mut self.fold_group);
        debug_assert!(group.is_empty());
        let mut need_ius = u64::from(self.blocks.info[b as usize].valid);
        let mut m = self.blocks.stripe_next(b);
        while m != b {
            let info = self.blocks.info[m as usize];
            let v = u64::from(info.valid);
            if info.state == BlockState::Closed && info.slc == slc && need_ius + v <= room_ius {
                group.push(FoldMember::new(m));
                need_ius += v;
            }
            m = self.blocks.stripe_next(m);
        }
        if !group.is_empty() {
            group.push(FoldMember::new(b));
            group.sort_unstable_by_key(|f| f.block);
        }
        group
    }

    /// Garbage-collect the native blocks of `group` (closed, of one superblock) as one: page
    /// by page, each page of every block before the next page of any, so the reads go to
    /// every die in turn; then erase them all.
    fn relocate_rows(&mut self, group: &mut [FoldMember], ops: &mut Vec<NandOp>) {
        let (cause, dest) = (OpCause::Gc, StreamId::Gc);
        self.streams[dest as usize].cause = cause;
        for f in group.iter_mut() {
            self.blocks.begin_reclaim(f.block);
            // Relocation writes no host data: the shadowed copies are fixed now.
            f.shadows = self.has_shadows_in(f.block);
        }
        let ipp = self.geo.ius_per_page;
        let pages = self.blocks.pages_in_mode(false);
        let mut reads = 0u64;
        for page in 0..pages {
            for f in group.iter_mut() {
                let first = self.ppa_of(f.block, page, 0);
                let slots = &self.map.p2l[first as usize..(first + ipp) as usize];
                let live = slots.iter().filter(|&&lpn| lpn != INVALID).count() as u32;
                if live == 0 {
                    continue;
                }
                ops.push(victim_read(cause, f.block, page, live, false));
                reads += 1;
                for src in first..first + ipp {
                    let lpn = self.map.p2l[src as usize];
                    if lpn != INVALID {
                        self.relocate_iu(src, lpn, dest, f.shadows, ops);
                    }
                }
                f.moved += live;
            }
        }
        self.counters.nand_read_pages += reads;
        for f in group.iter() {
            let info = &mut self.blocks.info[f.block as usize];
            debug_assert_eq!(
                info.valid, f.moved,
                "block {}: valid count against its P2L",
                f.block
            );
            info.valid -= f.moved;
            self.counters.gc_copied_ius += u64::from(f.moved);
        }
        self.end_relocation_batch();
        if !self.cfg.power_loss_protection {
            // The sources are erased next: their data must be durable elsewhere first.
            self.pad_stream(dest, ops);
        }
        for f in group.iter() {
            self.erase_source(f.block, cause, false, ops);
        }
    }

    /// A victim frees a block on its own unit only, while the host and relocation streams
    /// take blocks from every unit in turn. The victim is therefore taken from the unit with
    /// the fewest free blocks: its block that frees at most an eighth less space than the
    /// policy's pick, or, once that unit is down to its last free block, its emptiest block
    /// whatever it frees. Otherwise a unit whose blocks the policy rarely picks runs out of
    /// free blocks, its stripe slots are passed over and its planes idle while the others
    /// carry its share (a fifth of all plane time on a QLC drive under random writes,
    /// docs/scale.md). Ties go to the units after the last victim's, which spreads the
    /// victims' reads and erases over the dies.
    fn spread_victim(&mut self, pick: u32) -> u32 {
        let units = self.geo.units;
        let (want, want_free) = self.blocks.neediest_unit(self.gc_unit);
        let v = self.blocks.info[pick as usize].valid;
        let chosen = if self.blocks.unit_of(pick) == want {
            pick
        } else {
            let b = if want_free <= LAST_FREE_BLOCKS {
                // Every closed block of the unit is a candidate, the emptiest first; the
                // walk passes the other units' blocks in those buckets (about `units` per
                // block of this unit), once per victim.
                let full = self.geo.data_ius_per_block - 1;
                self.blocks
                    .find_on_unit(Class::Native, want, v, full, u32::MAX)
            } else {
                let slack = (self.geo.data_ius_per_block - v) / SPREAD_SLACK_DIVISOR;
                self.blocks
                    .find_on_unit(Class::Native, want, v, v + slack, 4 * units)
            };
            if b == NIL {
                pick
            } else {
                b
            }
        };
        let u = self.blocks.unit_of(chosen);
        self.gc_unit = if u + 1 == units { 0 } else { u + 1 };
        chosen
    }

    /// Fold the emptiest closed SLC block (dynamic first: folding it also frees a native
    /// block). Returns false if no SLC block is closed.
    pub(crate) fn fold_one(&mut self, ops: &mut Vec<NandOp>) -> bool {
        for class in [Class::SlcDynamic, Class::SlcStatic] {
            if let Some(b) = Greedy.select(&mut self.blocks, class, self.seq) {
                self.fold_stripe(b, ops);
                return true;
            }
        }
        false
    }

    /// Fold closed SLC block `b` together with the closed blocks of its stripe (the SLC
    /// blocks the cache's stream opened together, one per unit): firmware folds a superblock
    /// at a time, in the order it was written, so that data written together (consecutive
    /// logical pages over a die's planes, and over the dies) stay together in native cells.
    /// Folded a block at a time, a block holds every `units`-th logical page, and where its
    /// copies land decides alone which pages share a die. Blocks of the stripe still open,
    /// already folded or being emptied are left out, and so are those whose copies would not
    /// fit in the free native blocks above the reserve (`b` itself is folded whatever, as
    /// a single block would be). O(units) to find the stripe's blocks.
    pub(crate) fn fold_stripe(&mut self, b: u32, ops: &mut Vec<NandOp>) {
        let room_ius = u64::from(
            self.blocks
                .free_count(Pool::Native)
                .saturating_sub(self.geo.reserve_blocks),
        ) * u64::from(self.geo.data_ius_per_block);
        let mut group = self.stripe_group(b, true, room_ius);
        if group.is_empty() {
            self.fold_group = group;
            self.relocate(b, OpCause::SlcFold, StreamId::Fold, ops);
            return;
        }
        self.relocate_stripe(&mut group, ops);
        group.clear();
        self.fold_group = group;
    }

    /// Fold the SLC blocks of `group` (closed, of one stripe) as one: page by page, each page
    /// of every block before the next page of any, so the copies follow the order the data
    /// were written in; then erase them all. The copies of a sequential run go to the units
    /// their logical pages give ([`Self::aim_at_stripe_slot`]).
    fn relocate_stripe(&mut self, group: &mut [FoldMember], ops: &mut Vec<NandOp>) {
        let (cause, dest) = (OpCause::SlcFold, StreamId::Fold);
        self.streams[dest as usize].cause = cause;
        for f in group.iter_mut() {
            self.blocks.begin_reclaim(f.block);
            // Relocation writes no host data: the shadowed copies are fixed now.
            f.shadows = self.has_shadows_in(f.block);
        }
        let ipp = self.geo.ius_per_page;
        let pages = self.blocks.pages_in_mode(true);
        let mut reads = 0u64;
        let copies_from = ops.len();
        for page in 0..pages {
            for f in group.iter_mut() {
                let first = self.ppa_of(f.block, page, 0);
                let slots = &self.map.p2l[first as usize..(first + ipp) as usize];
                let live = slots.iter().filter(|&&lpn| lpn != INVALID).count() as u32;
                if live == 0 {
                    continue;
                }
                ops.push(victim_read(cause, f.block, page, live, true));
                reads += 1;
                let last = page + 1 == pages;
                self.relocation_in_lba_order = live == ipp
                    && if last {
                        // No next page to tell: the run goes on if the block's previous page
                        // was in it and this one is the next logical page of the block's run.
                        self.ends_a_run(first, f.run_lpn)
                    } else {
                        self.continues_a_run(first, false)
                    };
                f.run_lpn = if self.relocation_in_lba_order {
                    self.map.p2l[first as usize]
                } else {
                    NIL
                };
                for src in first..first + ipp {
                    let lpn = self.map.p2l[src as usize];
                    if lpn != INVALID {
                        self.relocate_iu(src, lpn, dest, f.shadows, ops);
                    }
                }
                f.moved += live;
            }
        }
        self.counters.nand_read_pages += reads;
        self.relocation_in_lba_order = false;
        self.gather_die_programs(&mut ops[copies_from..]);
        for f in group.iter() {
            let info = &mut self.blocks.info[f.block as usize];
            debug_assert_eq!(
                info.valid, f.moved,
                "block {}: valid count against its P2L",
                f.block
            );
            info.valid -= f.moved;
            self.counters.slc_folded_ius += u64::from(f.moved);
        }
        if !self.cfg.power_loss_protection {
            // The sources are erased next: their data must be durable elsewhere first.
            self.pad_stream(dest, ops);
        }
        for f in group.iter() {
            self.erase_source(f.block, cause, true, ops);
        }
    }

    /// Give each die the fold's programs in `ops` a multi-plane program at a time: a program
    /// moves later in `ops`, to where its die has one for each of its planes, and the die's
    /// programs then follow one another in plane order, after the reads that feed them.
    /// Firmware copies a folded stripe a multi-plane unit at a time: it reads the pages a
    /// die's planes are to take and sends their programs together. In the order the copies
    /// are made, a die's two pages of one logical superpage come with a source read between
    /// them, or from two source rows (a row of the cache's stripe need not start on a
    /// superpage, and some of its blocks may hold data a stripe older), and a die that
    /// started the first page's program alone cannot add the second. Programs only move
    /// later, so each still follows the reads it needs, and a plane's programs keep their
    /// order. A plane holds at most [`HELD_PER_PLANE`] pages (the fold's buffer): with one
    /// more, its die's oldest held pages go, paired where the die has them. In place,
    /// O(ops).
    pub(crate) fn gather_die_programs(&mut self, ops: &mut [NandOp]) {
        let ppd = self.cfg.planes_per_die as usize;
        if ppd < 2 {
            return;
        }
        let mut held = std::mem::take(&mut self.fold_held);
        // Operations before `w` are placed; held programs stand for the slots from `w` to
        // the one read, so a die's programs always have room where `w` is.
        let mut w = 0;
        for i in 0..ops.len() {
            let op = ops[i];
            if op.kind != NandOpKind::Program {
                ops[w] = op;
                w += 1;
                continue;
            }
            let unit = self.blocks.unit_of(op.block) as usize;
            let die = unit - unit % ppd..unit - unit % ppd + ppd;
            if held.len[unit] as usize == HELD_PER_PLANE {
                w = held.place_heads(ops, w, die.clone());
            }
            held.push(unit, op);
            while held.len[die.clone()].iter().all(|&n| n > 0) {
                w = held.place_heads(ops, w, die.clone());
            }
        }
        for first in (0..held.len.len()).step_by(ppd) {
            while held.len[first..first + ppd].iter().any(|&n| n > 0) {
                w = held.place_heads(ops, w, first..first + ppd);
            }
        }
        debug_assert_eq!(w, ops.len());
        self.fold_held = held;
    }

    /// Move every valid IU of closed block `b` through stream `dest`, then erase `b`.
    ///
    /// One pass over the victim's P2L: each valid IU is placed in the destination page
    /// directly, and the victim's valid count and the copy counters are settled once at the
    /// end (the victim is in no victim bucket while reclaimed, so nothing reads them before).
    pub(crate) fn relocate(
        &mut self,
        b: u32,
        cause: OpCause,
        dest: StreamId,
        ops: &mut Vec<NandOp>,
    ) {
        self.blocks.begin_reclaim(b);
        if self.fdp.on && dest == StreamId::Gc {
            self.fdp_relocating(b);
        }
        self.streams[dest as usize].cause = cause;
        let slc = self.blocks.info[b as usize].slc;
        let ipp = self.geo.ius_per_page;
        // Relocation writes no host data, so the set of shadowed copies in `b` is fixed now.
        let shadows = self.has_shadows_in(b);
        let mut moved = 0u32;
        let mut reads = 0u64;
        let d = dest as usize;
        let pages = self.blocks.capacity_pages(b);
        let folding = cause == OpCause::SlcFold;
        let ahead_pages = RELOCATION_PREFETCH_PAGES;
        let gather = ipp as usize <= GATHER_IUS;
        let fast = !shadows && gather;
        if fast && ipp == 1 {
            (moved, reads) = self.relocate_whole_pages(b, cause, d, ops);
        } else if fast {
            (moved, reads) = self.relocate_packed(b, cause, d, ops);
        }
        // The live IUs of a page, gathered without a branch per slot (validity is close to
        // random in a victim, so a branch per slot is mispredicted often), when they fit.
        let mut live_lpns = [INVALID; GATHER_IUS];
        let mut live_srcs = [0 as Ppa; GATHER_IUS];
        for page in 0..if fast { 0 } else { pages } {
            let first = self.ppa_of(b, page, 0);
            // Each copy rewrites the L2P entry of its IU, a random line of a table far larger
            // than the caches: start loading the entries of a page a few copies ahead.
            if page + ahead_pages < pages {
                self.prefetch_page_entries(b, page + ahead_pages);
            }
            let live = if gather {
                self.gather_live(first, &mut live_lpns, &mut live_srcs) as u32
            } else {
                let slots = &self.map.p2l[first as usize..(first + ipp) as usize];
                slots.iter().filter(|&&lpn| lpn != INVALID).count() as u32
            };
            if live == 0 {
                continue;
            }
            ops.push(victim_read(cause, b, page, live, slc));
            reads += 1;
            self.relocation_in_lba_order =
                folding && live == ipp && self.continues_a_run(first, page + 1 == pages);
            if gather {
                for k in 0..live as usize {
                    self.relocate_iu(live_srcs[k], live_lpns[k], dest, shadows, ops);
                }
            } else {
                for src in first..first + ipp {
                    let lpn = self.map.p2l[src as usize];
                    if lpn != INVALID {
                        self.relocate_iu(src, lpn, dest, shadows, ops);
                    }
                }
            }
            moved += live;
        }
        self.counters.nand_read_pages += reads;
        self.relocation_in_lba_order = false;
        let info = &mut self.blocks.info[b as usize];
        debug_assert_eq!(info.valid, moved, "block {b}: valid count against its P2L");
        info.valid -= moved;
        let copied = u64::from(moved);
        match cause {
            OpCause::SlcFold => self.counters.slc_folded_ius += copied,
            OpCause::WearLevel => self.counters.wear_level_moved_ius += copied,
            OpCause::Refresh => self.counters.refreshed_ius += copied,
            _ => self.counters.gc_copied_ius += copied,
        }
        self.end_relocation_batch();
        if !self.cfg.power_loss_protection {
            // The source is erased next: its data must be durable elsewhere first.
            self.pad_stream(dest, ops);
        }
        self.erase_source(b, cause, slc, ops);
    }

    /// Erase relocation source `b`, emptied of its valid IUs.
    fn erase_source(&mut self, b: u32, cause: OpCause, slc: bool, ops: &mut Vec<NandOp>) {
        ops.push(NandOp {
            kind: NandOpKind::Erase,
            cause,
            block: b,
            page: 0,
            ius: 0,
            slc,
        });
        self.erase_emptied(b);
        self.counters.erases += 1;
        self.erases_since_wl = self.erases_since_wl.saturating_add(1);
    }

    /// [`Self::relocate`]'s copy loop when a page holds one IU and no copy in the victim is
    /// shadowed: every copy is a whole destination page, placed and programmed at once, so
    /// the stream's current page is never set (the same operations, in the same order, and
    /// the same state as the general loop). Returns (IUs moved, pages read).
    fn relocate_whole_pages(
        &mut self,
        b: u32,
        cause: OpCause,
        d: usize,
        ops: &mut Vec<NandOp>,
    ) -> (u32, u64) {
        debug_assert_eq!(
            self.streams[d].cur_block, NIL,
            "a one-IU page is never left open"
        );
        let slc = self.blocks.info[b as usize].slc;
        let pages = self.blocks.capacity_pages(b);
        let ppb = self.geo.pages_per_block;
        let first = b * ppb;
        let folding = cause == OpCause::SlcFold;
        let (mut moved, mut last, mut programs) = (0u32, None, 0u32);
        for page in 0..pages {
            let src = first + page;
            if page + RELOCATION_PREFETCH_PAGES < pages {
                self.prefetch_copy_entry(self.map.p2l[(src + RELOCATION_PREFETCH_PAGES) as usize]);
            }
            let lpn = self.map.p2l[src as usize];
            if lpn == INVALID {
                continue;
            }
            ops.push(NandOp {
                kind: NandOpKind::Read,
                cause,
                block: b,
                page,
                ius: 1,
                slc,
            });
            moved += 1;
            self.relocation_in_lba_order = folding && self.continues_a_run(src, page + 1 == pages);
            self.aim_at_stripe_slot(d, lpn);
            let u = self.streams[d].cursor;
            let to_block = self.streams[d].open[u as usize];
            if to_block == NIL {
                // No open block on the cursor's unit: the general path opens one (on this
                // unit or the next that can have one) and programs the page.
                self.relocate_iu(src, lpn, STREAMS[d], false, ops);
                last = None;
                continue;
            }
            let info = &mut self.blocks.info[to_block as usize];
            let to_page = info.wp;
            debug_assert_eq!(info.state, crate::blocks::BlockState::Open);
            info.wp = to_page + 1;
            info.valid += 1;
            self.copy_iu(src, lpn, to_block * ppb + to_page, false);
            self.program_and_advance(d, to_block, to_page, u, ops);
            programs += 1;
            last = Some((u, to_page));
        }
        self.count_programs(programs);
        // Every copy's source entry at once (one store per IU in the loop otherwise).
        self.map.p2l[first as usize..(first + pages) as usize].fill(INVALID);
        // The stream's page state as the general loop leaves it: the last page opened, none
        // current.
        if let Some((u, page)) = last {
            let st = &mut self.streams[d];
            st.cur_unit = u;
            st.cur_page = page;
        }
        (moved, u64::from(moved))
    }

    /// [`Self::relocate`]'s copy loop when pages hold several IUs (at most [`GATHER_IUS`])
    /// and no copy in the victim is shadowed: the destination page being filled is kept in
    /// locals (its block, first IU and fill) and written back to the stream, with the
    /// block's valid count, only when the page is programmed or the loop ends. The same
    /// operations, in the same order, and the same state as the general loop. Returns (IUs
    /// moved, pages read).
    fn relocate_packed(
        &mut self,
        b: u32,
        cause: OpCause,
        d: usize,
        ops: &mut Vec<NandOp>,
    ) -> (u32, u64) {
        let slc = self.blocks.info[b as usize].slc;
        let ipp = self.geo.ius_per_page;
        debug_assert!(ipp > 1 && ipp as usize <= GATHER_IUS);
        let pages = self.blocks.capacity_pages(b);
        let folding = cause == OpCause::SlcFold;
        // The destination page: block (NIL for none), its first IU, the IUs placed in it,
        // and how many of those its block's valid count already holds.
        let (mut to_block, mut to_first, mut fill, mut counted) = {
            let st = &self.streams[d];
            let first = if st.cur_block == NIL {
                0
            } else {
                self.ppa_of(st.cur_block, st.cur_page, 0)
            };
            (st.cur_block, first, st.fill, st.fill)
        };
        let mut live_lpns = [INVALID; GATHER_IUS];
        let mut live_srcs = [0 as Ppa; GATHER_IUS];
        let (mut moved, mut reads) = (0u32, 0u64);
        for page in 0..pages {
            let first = self.ppa_of(b, page, 0);
            if page + RELOCATION_PREFETCH_PAGES < pages {
                self.prefetch_page_entries(b, page + RELOCATION_PREFETCH_PAGES);
            }
            let n = self.gather_live(first, &mut live_lpns, &mut live_srcs);
            if n == 0 {
                continue;
            }
            ops.push(victim_read(cause, b, page, n as u32, slc));
            reads += 1;
            self.relocation_in_lba_order =
                folding && n as u32 == ipp && self.continues_a_run(first, page + 1 == pages);
            for (&src, &lpn) in live_srcs[..n].iter().zip(&live_lpns[..n]) {
                if to_block == NIL {
                    self.aim_at_stripe_slot(d, lpn);
                    if !self.start_page(STREAMS[d]) {
                        self.no_block_for_relocation();
                    }
                    let st = &self.streams[d];
                    to_block = st.cur_block;
                    to_first = self.ppa_of(to_block, st.cur_page, 0);
                    (fill, counted) = (0, 0);
                }
                self.copy_iu(src, lpn, to_first + fill, false);
                fill += 1;
                if fill == ipp {
                    // Closing the block (its last page) files it by its valid count.
                    self.blocks.info[to_block as usize].valid += fill - counted;
                    self.streams[d].fill = fill;
                    self.emit_program(d, ops);
                    to_block = NIL;
                }
            }
            moved += n as u32;
        }
        if to_block != NIL {
            self.blocks.info[to_block as usize].valid += fill - counted;
            self.streams[d].fill = fill;
        }
        // Every copy's source entry at once (one store per IU in the loop otherwise).
        let first = self.ppa_of(b, 0, 0);
        self.map.p2l[first as usize..(first + pages * ipp) as usize].fill(INVALID);
        (moved, reads)
    }

    /// The live IUs of the page whose first IU is `first`, into `lpns` and `srcs`, gathered
    /// without a branch per slot (validity is close to random in a victim, so such a branch
    /// is mispredicted often); returns how many. The page holds at most `GATHER_IUS` IUs.
    #[inline(always)]
    fn gather_live(
        &self,
        first: Ppa,
        lpns: &mut [Lpn; GATHER_IUS],
        srcs: &mut [Ppa; GATHER_IUS],
    ) -> usize {
        let slots = &self.map.p2l[first as usize..(first + self.geo.ius_per_page) as usize];
        let mut n = 0;
        for (src, &lpn) in (first..).zip(slots) {
            // `n` stays below the IUs per page, at most `GATHER_IUS`: the mask only drops the
            // bounds check.
            lpns[n & (GATHER_IUS - 1)] = lpn;
            srcs[n & (GATHER_IUS - 1)] = src;
            n += usize::from(lpn != INVALID);
        }
        n
    }

    /// Start loading the L2P entries of the IUs in page `page` of victim `b`.
    #[inline(always)]
    fn prefetch_page_entries(&self, b: u32, page: u32) {
        let first = self.ppa_of(b, page, 0) as usize;
        for &lpn in &self.map.p2l[first..first + self.geo.ius_per_page as usize] {
            self.prefetch_copy_entry(lpn);
        }
    }

    /// Start loading the L2P entry of `lpn`, a victim's slot a few pages ahead of the copy in
    /// progress. An invalid slot loads entry 0: a select, not a branch that validity (close
    /// to random in a victim) would mispredict.
    #[inline(always)]
    fn prefetch_copy_entry(&self, lpn: Lpn) {
        let i = if lpn == INVALID { 0 } else { lpn as usize };
        prefetch_read(&self.map.l2p[i]);
    }

    /// Copy the live IU `lpn` at `src` to the next slot of relocation stream `dest`,
    /// programming the destination page once full (`next_slot` and `finish_slot` for a
    /// relocation stream, inlined: its pages carry no undo records).
    #[inline(always)]
    fn relocate_iu(
        &mut self,
        src: Ppa,
        lpn: Lpn,
        dest: StreamId,
        shadows: bool,
        ops: &mut Vec<NandOp>,
    ) {
        let d = dest as usize;
        if self.streams[d].cur_block == NIL {
            self.aim_at_stripe_slot(d, lpn);
            if !self.start_page(dest) {
                self.no_block_for_relocation();
            }
        }
        let st = &mut self.streams[d];
        let (to_block, to_page, slot) = (st.cur_block, st.cur_page, st.fill);
        st.fill = slot + 1;
        self.blocks.add_valid(to_block);
        let to = self.ppa_of(to_block, to_page, slot);
        self.move_iu(src, lpn, to, shadows);
        if slot + 1 == self.geo.ius_per_page {
            self.emit_program(d, ops);
        }
    }

    /// Whether the SLC page whose first IU is `first` (every IU live) holds one whole
    /// logical page of a sequential run: its IUs are a logical page's, in order, and the
    /// block's next page holds a later logical page within two stripe rows (a sequential
    /// write striped over the units leaves in a unit's block every `units`-th logical page).
    /// Randomly written data almost never does, and is folded striped: placed by address it
    /// would land on units at random, some planes queueing while others idle.
    #[inline(always)]
    fn continues_a_run(&self, first: Ppa, last_page: bool) -> bool {
        let p2l = &self.map.p2l;
        let lpn = p2l[first as usize];
        let ipp = self.geo.ius_per_page;
        // Random data fails at the next page's address (the IU after this page's last, in
        // the same cache line as a rule), before anything is divided or compared slot by slot.
        let next = p2l[(first + ipp) as usize - usize::from(last_page)];
        if last_page
            || lpn == INVALID
            || next == INVALID
            || next <= lpn
            || next - lpn > self.run_reach_ius
        {
            return false;
        }
        self.holds_logical_page(first, lpn)
    }

    /// Whether the page whose first IU is `first` holds logical page `lpn` whole, in order
    /// (`lpn` the first IU of a logical page).
    #[inline(always)]
    fn holds_logical_page(&self, first: Ppa, lpn: Lpn) -> bool {
        let p2l = &self.map.p2l;
        self.ipp_div.div_rem(lpn).1 == 0
            && (1..self.geo.ius_per_page).all(|k| p2l[(first + k) as usize] == lpn + k)
    }

    /// Whether the SLC page whose first IU is `first` (every IU live), its block's last,
    /// holds one whole logical page that follows `prev_lpn`, the first IU of the block's
    /// previous page when that page was part of a run ([`NIL`] otherwise), within two stripe
    /// rows.
    fn ends_a_run(&self, first: Ppa, prev_lpn: Lpn) -> bool {
        let lpn = self.map.p2l[first as usize];
        prev_lpn != NIL
            && lpn != INVALID
            && lpn > prev_lpn
            && lpn - prev_lpn <= self.run_reach_ius
            && self.holds_logical_page(first, lpn)
    }

    /// Before relocation stream `d` starts a page whose first IU is `lpn`: for a folded page
    /// of a sequential run, point its cursor at the unit the logical page has in a stripe
    /// that shifts by one die per row (logical page `p` on unit
    /// `(p + planes_per_die * (p / units)) % units`). Consecutive logical pages then sit on
    /// consecutive units, and those of one logical superpage (`planes_per_die` of them from
    /// a multiple of it) on one die's planes in plane order, where a sequential read reads
    /// them as one multi-plane read; a stripe folded together ([`Self::fold_stripe`]) programs
    /// a row of pages over every unit, a die's planes together. The shift spreads a block
    /// folded on its own (every `units`-th logical page) over every die: unshifted, its
    /// pages would all land on one unit, and a sequential read of the folded drive would
    /// run on one die at a time.
    #[inline(always)]
    fn aim_at_stripe_slot(&mut self, d: usize, lpn: Lpn) {
        if self.relocation_in_lba_order {
            let units = self.units_div.divisor();
            let (row, slot) = self.units_div.div_rem(self.ipp_div.div(lpn));
            let unit = slot + self.cfg.planes_per_die * self.dies_div.div_rem(row).1;
            self.streams[d].cursor = if unit >= units { unit - units } else { unit };
        }
    }

    #[cold]
    fn no_block_for_relocation(&self) -> ! {
        panic!(
            "FTL invariant broken: relocation found no free block ({} free, reserve {})",
            self.blocks.free_count(Pool::Native),
            self.geo.reserve_blocks
        );
    }

    /// Copy the valid IU at `src` (of the block being relocated) to the reserved slot `to`.
    /// The caller settles the source block's valid count.
    #[inline(always)]
    fn move_iu(&mut self, src: Ppa, lpn: Lpn, to: Ppa, shadows: bool) {
        self.copy_iu(src, lpn, to, shadows);
        self.map.p2l[src as usize] = INVALID;
    }

    /// [`Self::move_iu`] without clearing the source's P2L entry: for loops that clear the
    /// victim's whole P2L range once it is emptied.
    #[inline(always)]
    fn copy_iu(&mut self, src: Ppa, lpn: Lpn, to: Ppa, shadows: bool) {
        if let Some(moved) = &mut self.relocated {
            moved.push(lpn);
        }
        let version = self.map.version_at(src);
        self.map.fill_slot(to, lpn, version);
        // A valid copy is the mapped one unless it is shadowed. Without shadows in the victim,
        // skip reading the L2P entry: it is a cache miss per copied IU, and a store alone does
        // not stall.
        if !shadows || self.map.l2p[lpn as usize] == src {
            debug_assert_eq!(self.map.l2p[lpn as usize], src);
            self.map.l2p[lpn as usize] = to;
        } else {
            // A shadowed previous copy (newer data waits in an unprogrammed host page): the
            // undo record follows the move, the map keeps pointing at the new data.
            self.redirect_undo(lpn, src, to);
        }
    }

    /// The copies noted since the last batch end are one victim's (or one folded stripe's):
    /// a device updates their map entries per translation page once per batch.
    fn end_relocation_batch(&mut self) {
        if let Some(moved) = &mut self.relocated {
            if moved.last().is_some_and(|&l| l != INVALID) {
                moved.push(INVALID);
            }
        }
    }

    /// Whether a host stream's open page shadows a copy in block `b` (never with PLP).
    fn has_shadows_in(&self, b: u32) -> bool {
        if self.cfg.power_loss_protection {
            return false;
        }
        [StreamId::Host, StreamId::Slc].iter().any(|&s| {
            let st = &self.streams[s as usize];
            st.undo[..st.fill as usize].iter().any(|r| {
                r.lpn != crate::lists::NIL
                    && r.prev != crate::mapping::UNMAPPED
                    && self.split(r.prev).0 == b
            }) || st
                .trims
                .iter()
                .any(|r| r.prev != crate::mapping::UNMAPPED && self.split(r.prev).0 == b)
        })
    }

    fn redirect_undo(&mut self, lpn: Lpn, from: Ppa, to: Ppa) {
        for s in [StreamId::Host, StreamId::Slc] {
            let st = &mut self.streams[s as usize];
            let fill = st.fill as usize;
            if let Some(rec) = st.undo[..fill]
                .iter_mut()
                .find(|r| r.lpn == lpn && r.prev == from)
            {
                rec.prev = to;
                return;
            }
            if let Some(rec) = st.trims.iter_mut().find(|r| r.lpn == lpn && r.prev == from) {
                rec.prev = to;
                return;
            }
        }
        panic!("FTL invariant broken: P2L of {from} names IU {lpn}, which maps elsewhere and has no undo or trim record");
    }

    /// One bounded step of background work (idle GC toward `background_free_blocks`, SLC
    /// folding, wear levelling). Returns false when there is nothing left to do.
    pub fn background_step(&mut self, ops: &mut Vec<NandOp>) -> bool {
        let did = self.background_work(ops);
        if did {
            self.after_op();
        }
        did
    }

    /// One victim of background GC while the host is busy: reclaim only (no folding or wear
    /// levelling, which wait for idle time), and only while fewer native blocks than the
    /// background threshold are free. Returns false when it did nothing.
    pub fn busy_gc_step(&mut self, ops: &mut Vec<NandOp>) -> bool {
        let did = self.blocks.free_count(Pool::Native) < self.geo.background_blocks
            && self.reclaim_one(ops);
        if did {
            self.after_op();
        }
        did
    }

    /// Whether fewer native blocks than the background GC threshold are free.
    pub fn below_background_threshold(&self) -> bool {
        self.blocks.free_count(Pool::Native) < self.geo.background_blocks
    }

    fn background_work(&mut self, ops: &mut Vec<NandOp>) -> bool {
        let free = self.blocks.free_count(Pool::Native);
        if free < self.geo.background_blocks && self.reclaim_one(ops) {
            return true;
        }
        if self.blocks.free_count(Pool::Native) > self.optional_work_floor() && self.fold_one(ops) {
            return true;
        }
        self.maybe_wear_level(ops)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::tests::small;
    use crate::config::{FtlConfig, SlcConfig};
    use crate::{Ftl, NandOpKind, OpCause, ReadLocation};

    #[test]
    fn gc_reads_valid_pages_copies_and_erases() {
        let mut ftl = Ftl::new(small()).unwrap();
        let mut ops = Vec::new();
        for round in 0..6 {
            for lpn in 0..1400 {
                ftl.write(lpn, 1, false, false, round, &mut ops);
            }
        }
        let c = ftl.counters().clone();
        assert!(c.erases > 0 && c.gc_copied_ius < c.host_write_ius);
        let erases = ops.iter().filter(|o| o.kind == NandOpKind::Erase).count() as u64;
        assert_eq!(erases, c.erases);
        let programs = ops.iter().filter(|o| o.kind == NandOpKind::Program).count() as u64;
        assert_eq!(programs, c.nand_program_pages);
        let gc_read_ius: u64 = ops
            .iter()
            .filter(|o| o.kind == NandOpKind::Read && o.cause == OpCause::Gc)
            .map(|o| u64::from(o.ius))
            .sum();
        assert_eq!(gc_read_ius, c.gc_copied_ius);
        assert_eq!(c.nand_write_ius, 2 * c.nand_program_pages);
        assert!(ftl.free_blocks() > 4);
        for lpn in 0..1400 {
            assert_eq!(ftl.read_version(lpn), Some(5));
        }
        ftl.check_invariants();
    }

    #[test]
    fn background_gc_reaches_its_target_then_stops() {
        let mut ftl = Ftl::new(small()).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..1400 {
            ftl.write(lpn, 1, false, false, 0, &mut ops);
        }
        for i in 0..3000u32 {
            ftl.write((i * 7919) % 1400, 1, false, false, 1, &mut ops);
        }
        assert!(ftl.free_blocks() < 8);
        let mut steps = 0;
        while ftl.background_step(&mut ops) {
            steps += 1;
            assert!(steps < 10_000);
        }
        assert!(steps > 0);
        assert!(ftl.free_blocks() >= 8);
        ftl.check_invariants();
    }

    #[test]
    fn busy_gc_reclaims_one_victim_per_step_up_to_the_threshold_only() {
        let mut ftl = Ftl::new(crate::config::tests::small()).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..1400 {
            ftl.write(lpn, 1, false, false, 0, &mut ops);
        }
        for i in 0..3000u32 {
            ftl.write((i * 7919) % 1400, 1, false, false, 1, &mut ops);
        }
        assert!(ftl.below_background_threshold());
        let mut steps = 0;
        loop {
            ops.clear();
            let erases_before = ftl.counters().erases;
            if !ftl.busy_gc_step(&mut ops) {
                break;
            }
            steps += 1;
            assert!(steps < 1000);
            // One victim: its reads and programs, then exactly one erase.
            assert_eq!(ftl.counters().erases, erases_before + 1);
            let erases = ops.iter().filter(|o| o.kind == NandOpKind::Erase).count();
            assert_eq!(erases, 1);
            assert_eq!(ops.last().map(|o| o.kind), Some(NandOpKind::Erase));
        }
        assert!(steps > 0);
        assert!(!ftl.below_background_threshold());
        assert!(ftl.free_blocks() >= 8);
        // At the threshold it does nothing, not even wear levelling or folding.
        ops.clear();
        assert!(!ftl.busy_gc_step(&mut ops) && ops.is_empty());
        ftl.check_invariants();
    }

    /// Eight units (4 dies x 2 planes), TLC with 4 IUs per page and a dynamic SLC cache.
    fn eight_units_with_cache() -> FtlConfig {
        let mut c = small();
        c.dies = 4;
        c.planes_per_die = 2;
        c.blocks_per_plane = 64;
        c.pages_per_block = 24;
        c.ius_per_page = 4;
        c.bits_per_cell = 3;
        c.user_ius = 8 * 64 * 24 * 4 * 80 / 100;
        c.slc = SlcConfig {
            static_blocks: 0,
            dynamic: true,
            dynamic_max_fraction: 0.5,
            fold_when_full: false,
        };
        c
    }

    /// The unit holding each logical page's first IU.
    fn units_of_pages(ftl: &mut Ftl, pages: u32) -> Vec<u32> {
        let bpu = ftl.geo.blocks_per_unit;
        let ipp = ftl.geo.ius_per_page;
        (0..pages)
            .map(|p| match ftl.read(p * ipp) {
                ReadLocation::Nand { block, .. } => block / bpu,
                other => panic!("page {p}: {other:?}"),
            })
            .collect()
    }

    /// Distinct units among each `units` consecutive logical pages, on average.
    fn spread(units_of: &[u32], units: usize) -> f64 {
        let windows: Vec<usize> = units_of
            .chunks_exact(units)
            .map(|w| {
                let mut w = w.to_vec();
                w.sort_unstable();
                w.dedup();
                w.len()
            })
            .collect();
        windows.iter().sum::<usize>() as f64 / windows.len() as f64
    }

    #[test]
    fn folded_sequential_data_stays_spread_over_the_units() {
        let c = eight_units_with_cache();
        let n = c.user_ius as u32 / 4;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..n {
            ftl.write(lpn, 1, false, false, 0, &mut ops);
        }
        ftl.flush(&mut ops);
        // Written through the cache: striped over the units.
        let units = ftl.geo.units as usize;
        let before = units_of_pages(&mut ftl, n / 4);
        assert!(spread(&before, units) > 7.9, "{:?}", &before[..16]);
        while ftl.background_step(&mut ops) {}
        let c = ftl.counters();
        assert_eq!(c.slc_folded_ius, c.slc_write_ius);
        // Folded a block at a time, each block holding every eighth logical page: the copies
        // keep consecutive logical pages on different units (they had collapsed onto one).
        let after = units_of_pages(&mut ftl, n / 4);
        assert!(spread(&after, units) > 7.9, "{:?}", &after[..16]);
        // And a victim's programs still go to every unit, not to one die.
        let fold_units: std::collections::BTreeSet<u32> = ops
            .iter()
            .filter(|o| o.kind == NandOpKind::Program && o.cause == OpCause::SlcFold)
            .map(|o| o.block / ftl.geo.blocks_per_unit)
            .collect();
        assert_eq!(fold_units.len(), units);
        ftl.check_invariants();
        for lpn in 0..n {
            assert_eq!(ftl.read_version(lpn), Some(0));
        }
    }

    /// (block, page, in SLC mode) of each logical page's first IU, for pages `pages`.
    fn places_of_pages(ftl: &mut Ftl, pages: std::ops::Range<u32>) -> Vec<(u32, u32, bool)> {
        let ipp = ftl.geo.ius_per_page;
        pages
            .map(|p| match ftl.read(p * ipp) {
                ReadLocation::Nand { block, page, slc } => (block, page, slc),
                other => panic!("page {p}: {other:?}"),
            })
            .collect()
    }

    /// Logical superpages (a die's planes' worth of consecutive logical pages, from a
    /// multiple of it) not on one die's planes in plane order at one page address.
    fn split_superpages(places: &[(u32, u32, bool)], planes: u32, bpu: u32) -> Vec<usize> {
        places
            .chunks_exact(planes as usize)
            .enumerate()
            .filter(|(_, sp)| {
                let (u0, p0) = (sp[0].0 / bpu, sp[0].1);
                u0 % planes != 0
                    || sp
                        .iter()
                        .enumerate()
                        .any(|(k, &(b, p, _))| b / bpu != u0 + k as u32 || p != p0)
            })
            .map(|(k, _)| k)
            .collect()
    }

    /// The drive of [`eight_units_with_cache`] with its first `n` IUs (`1 / part` of its user
    /// capacity) written in order and flushed, the operations that caused, and `n`.
    fn written_in_order(part: u32) -> (Ftl, Vec<crate::NandOp>, u32) {
        let c = eight_units_with_cache();
        let n = c.user_ius as u32 / part;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..n {
            ftl.write(lpn, 1, false, false, 0, &mut ops);
        }
        ftl.flush(&mut ops);
        (ftl, ops, n)
    }

    #[test]
    fn a_folded_stripe_keeps_each_logical_superpage_on_one_dies_planes() {
        let (mut ftl, mut ops, n) = written_in_order(4);
        let planes = ftl.cfg.planes_per_die;
        ops.clear();
        while ftl.background_step(&mut ops) {}
        let c = ftl.counters();
        assert_eq!(c.slc_folded_ius, c.slc_write_ius);
        let ipp = ftl.geo.ius_per_page;
        let places = places_of_pages(&mut ftl, 0..n / ipp);
        assert!(places.iter().all(|&(_, _, slc)| !slc));
        // Every logical superpage on one die, plane by plane, at one page address: what a
        // sequential read of the folded data reads as one multi-plane read.
        let split = split_superpages(&places, planes, ftl.geo.blocks_per_unit);
        assert!(
            split.is_empty(),
            "{} of {} superpages split, first {:?}",
            split.len(),
            places.len() / planes as usize,
            &split[..split.len().min(8)]
        );
        // Folded a stripe at a time: each row of a stripe's pages is programmed over every
        // unit, consecutive units (a die's planes) one after the other.
        let fold_units: Vec<u32> = ops
            .iter()
            .filter(|o| o.kind == NandOpKind::Program && o.cause == OpCause::SlcFold)
            .map(|o| o.block / ftl.geo.blocks_per_unit)
            .collect();
        let consecutive = fold_units
            .windows(2)
            .filter(|w| w[1] == (w[0] + 1) % ftl.geo.units)
            .count();
        assert!(
            consecutive * 5 >= fold_units.len() * 4,
            "{consecutive} of {} fold programs follow the previous one's unit",
            fold_units.len()
        );
        ftl.check_invariants();
        for lpn in 0..n {
            assert_eq!(ftl.read_version(lpn), Some(0));
        }
    }

    #[test]
    fn a_cache_folding_while_the_host_writes_gives_each_die_its_programs_in_plane_pairs() {
        let mut c = eight_units_with_cache();
        c.slc.fold_when_full = true;
        let n = c.user_ius as u32;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..n {
            ftl.write(lpn, 1, false, false, 0, &mut ops);
        }
        let (bpu, planes) = (ftl.geo.blocks_per_unit, ftl.cfg.planes_per_die);
        let die_plane = |o: &crate::NandOp| {
            let u = o.block / bpu;
            (u / planes, u % planes)
        };
        let is_fold_program =
            |o: &crate::NandOp| o.kind == NandOpKind::Program && o.cause == OpCause::SlcFold;
        // A fold program next to a program of its die's other plane, the pair the die runs
        // as one multi-plane program when both reach it before it starts the first.
        let (mut folds, mut paired) = (0usize, 0usize);
        for (i, o) in ops.iter().enumerate() {
            if !is_fold_program(o) {
                continue;
            }
            folds += 1;
            let (die, plane) = die_plane(o);
            let next_to = |j: usize| {
                ops.get(j).is_some_and(|p| {
                    is_fold_program(p) && die_plane(p).0 == die && die_plane(p).1 != plane
                })
            };
            paired += usize::from(next_to(i + 1) || i > 0 && next_to(i - 1));
        }
        assert!(folds > 1000, "{folds} fold programs");
        assert!(
            paired * 100 >= folds * 95,
            "{paired} of {folds} fold programs next to their die's other plane's"
        );
        ftl.check_invariants();
        for lpn in 0..n {
            assert_eq!(ftl.read_version(lpn), Some(0));
        }
    }

    #[test]
    fn a_fill_through_the_cache_folds_whole_stripes() {
        let (mut ftl, ops, n) = written_in_order(1);
        let planes = ftl.cfg.planes_per_die;
        assert!(ftl.counters().slc_folded_ius > 0);
        let (ipp, bpu) = (ftl.geo.ius_per_page, ftl.geo.blocks_per_unit);
        let places = places_of_pages(&mut ftl, 0..n / ipp);
        // The data the fill's last stretch folded whole logical pages of: the superpages
        // whose every page's first IU heads a page the folds programmed.
        let fold_pages: std::collections::BTreeSet<(u32, u32)> = ops
            .iter()
            .filter(|o| o.cause == OpCause::SlcFold && o.kind == NandOpKind::Program)
            .map(|o| (o.block, o.page))
            .collect();
        let heads_page = |lpn: u32| ftl.split(ftl.map.l2p[lpn as usize]).2 == 0;
        let folded: Vec<(u32, u32, bool)> = places
            .chunks_exact(planes as usize)
            .zip(0..)
            .filter(|(sp, k)| {
                sp.iter().zip(0..).all(|(&(b, p, _), j)| {
                    fold_pages.contains(&(b, p)) && heads_page((k * planes + j) * ipp)
                })
            })
            .flat_map(|(sp, _)| sp.iter().copied())
            .collect();
        let superpages = folded.len() / planes as usize;
        assert!(
            superpages * planes as usize * 8 > places.len(),
            "{superpages} folded"
        );
        let split = split_superpages(&folded, planes, bpu);
        assert!(
            split.len() * 50 <= superpages,
            "{} of {superpages} folded superpages split",
            split.len(),
        );
        ftl.check_invariants();
    }

    #[test]
    fn randomly_written_copies_stay_striped() {
        let mut c = eight_units_with_cache();
        c.slc = SlcConfig::NONE;
        let n = c.user_ius as u32;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        let mut programs = [0u32; 8];
        for i in 0..4 * n {
            ops.clear();
            ftl.write(
                i.wrapping_mul(2_654_435_761) % n,
                1,
                false,
                false,
                i,
                &mut ops,
            );
            for o in ops
                .iter()
                .filter(|o| o.kind == NandOpKind::Program && o.cause == OpCause::Gc)
            {
                programs[(o.block / ftl.geo.blocks_per_unit) as usize] += 1;
            }
        }
        // GC's copies of random data go round the units, page by page: as even as striping.
        let (lo, hi) = (
            programs.iter().min().unwrap(),
            programs.iter().max().unwrap(),
        );
        assert!(
            *lo > 100 && hi - lo <= 2,
            "GC programs per unit {programs:?}"
        );
        ftl.check_invariants();
    }
}
