//! Per-block state: free pools per (die, plane) unit, open/closed state, valid counts, erase
//! counts and the victim buckets (closed blocks listed by valid count, one bucket array per
//! block class), all in flat arrays.

use crate::config::Geometry;
use crate::lists::{Lists, NIL};
use flashlab_media::FastDiv;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockState {
    Free,
    /// Held by a stream, being filled page by page.
    Open,
    /// Full; listed in its class's victim bucket.
    Closed,
    /// Being emptied by GC, folding or wear levelling; in no list.
    Reclaiming,
    /// Set aside for bad blocks: never used, in no list.
    Bad,
    /// Failed in use (an erase failed): never used again, in no list.
    Retired,
}

flashlab_engine::impl_state_enum!(BlockState {
    Free,
    Open,
    Closed,
    Reclaiming,
    Bad,
    Retired
});

/// Which bucket array a closed block is listed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Native = 0,
    /// A native block temporarily used in SLC mode.
    SlcDynamic = 1,
    SlcStatic = 2,
}

/// Which end of a free list a block is taken from. The host stream takes the block freed
/// longest ago; relocation streams take the one freed last. Relocation plans a victim's erase
/// ahead of the device carrying it out (the device spreads that work over host writes), and
/// its own writes queue behind that erase anyway; the host's next block is then one whose
/// erase has long been done, so host writes do not wait for queued relocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FreeEnd {
    Oldest,
    Newest,
}

/// Which free pool a block returns to when erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pool {
    Native = 0,
    Static = 1,
}

/// Per-block state used on the per-IU paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockInfo {
    /// Valid IUs.
    pub valid: u32,
    /// Pages handed out (programmed or being filled).
    pub wp: u32,
    /// Pages programmed; page `p` is durable iff `p < programmed`.
    pub programmed: u32,
    pub state: BlockState,
    /// In SLC mode (static SLC blocks always, native blocks while used as dynamic cache).
    pub slc: bool,
    pub is_static: bool,
    /// Released by relocation, erase not yet carried out by the device (see
    /// [`BlockTable::take_free_at`]).
    pub erase_pending: bool,
}

flashlab_engine::impl_state!(BlockInfo {
    valid,
    wp,
    programmed,
    state,
    slc,
    is_static,
    erase_pending
});

impl Default for BlockInfo {
    fn default() -> Self {
        BlockInfo::FREE
    }
}

impl BlockInfo {
    const FREE: BlockInfo = BlockInfo {
        valid: 0,
        wp: 0,
        programmed: 0,
        state: BlockState::Free,
        slc: false,
        is_static: false,
        erase_pending: false,
    };
}

pub(crate) struct BlockTable {
    units: u32,
    blocks_per_unit: u32,
    /// Divides by `blocks_per_unit` (GC walks call `unit_of` per visited block).
    unit_div: FastDiv,
    pages_per_block: u32,
    slc_pages_per_block: u32,
    ius_per_block: u32,
    /// The fields a host write, an invalidation or a read touches, together in one
    /// 16-byte record per block: one cache line instead of one per field.
    pub info: Vec<BlockInfo>,
    pub erase_count: Vec<u32>,
    /// Host write sequence when the block closed (its age, for cost-benefit).
    pub close_seq: Vec<u64>,
    /// Order in which blocks were last released (emptied): erases are carried out in this
    /// order, so among blocks whose erase is pending the earliest released is erased first.
    release_seq: Vec<u64>,
    releases: u64,
    lists: Lists,
    free: [u32; 2],
    dyn_slc: u32,
    /// No bucket below this is non-empty (per class); only ever too low, never too high.
    min_hint: [u32; 3],
    /// Per unit, blocks of the bad-block reserve not yet in use: the unit's lowest
    /// `reserve_left` blocks (a replacement is taken from the top of them).
    reserve_left: Vec<u32>,
    /// Blocks retired in use, and those of them no reserve block replaced.
    retired: u32,
    retired_unreplaced: u32,
    /// Per block, the next and the previous block of its SLC stripe: the SLC blocks the
    /// cache's stream opened together, one per unit, whose pages hold data written together
    /// (a superblock). A circular list; a block in no stripe links to itself.
    stripe_next: Vec<u32>,
    stripe_prev: Vec<u32>,
    /// A block of the stripe the SLC stream opens its blocks into, or [`NIL`].
    stripe_open: u32,
    /// Per native write stream (by stream index), a block of the superblock it opens its
    /// blocks into, or [`NIL`]; used only when GC empties superblocks.
    native_stripe_open: [u32; NATIVE_STRIPE_STREAMS],
}

/// Write streams that may open native blocks into superblocks (indexed as the FTL's streams).
pub(crate) const NATIVE_STRIPE_STREAMS: usize = 4;

// Per-block tables, lists and pools; the unit layout is configuration.
flashlab_engine::impl_state!(BlockTable {
    info, erase_count, close_seq, release_seq, releases, lists, free, dyn_slc, min_hint,
    reserve_left, retired, retired_unreplaced, stripe_next, stripe_prev, stripe_open,
    native_stripe_open,
} skip { units, blocks_per_unit, unit_div, pages_per_block, slc_pages_per_block, ius_per_block });

impl BlockTable {
    pub fn new(g: &Geometry) -> BlockTable {
        let n = g.total_blocks;
        let lists = 2 * g.units + 3 * (g.ius_per_block + 1);
        let mut t = BlockTable {
            units: g.units,
            blocks_per_unit: g.blocks_per_unit,
            unit_div: FastDiv::new(g.blocks_per_unit),
            pages_per_block: g.pages_per_block,
            slc_pages_per_block: g.slc_pages_per_block,
            ius_per_block: g.ius_per_block,
            info: vec![BlockInfo::FREE; n as usize],
            erase_count: vec![0; n as usize],
            close_seq: vec![0; n as usize],
            release_seq: vec![0; n as usize],
            releases: 0,
            lists: Lists::new(n, lists),
            free: [0; 2],
            dyn_slc: 0,
            min_hint: [0; 3],
            reserve_left: (0..g.units)
                .map(|u| g.bad_blocks.saturating_sub(u).div_ceil(g.units))
                .collect(),
            retired: 0,
            retired_unreplaced: 0,
            stripe_next: (0..n).collect(),
            stripe_prev: (0..n).collect(),
            stripe_open: NIL,
            native_stripe_open: [NIL; NATIVE_STRIPE_STREAMS],
        };
        for b in 0..n {
            if g.is_bad(b) {
                t.info[b as usize].state = BlockState::Bad;
                continue;
            }
            let st = g.is_static_slc(b);
            t.info[b as usize].is_static = st;
            t.info[b as usize].slc = st;
            t.push_free(b);
        }
        t
    }

    fn pool_of(&self, b: u32) -> Pool {
        if self.info[b as usize].is_static {
            Pool::Static
        } else {
            Pool::Native
        }
    }

    fn free_list(&self, pool: Pool, unit: u32) -> u32 {
        pool as u32 * self.units + unit
    }

    fn bucket(&self, class: Class, valid: u32) -> u32 {
        2 * self.units + class as u32 * (self.ius_per_block + 1) + valid
    }

    fn push_free(&mut self, b: u32) {
        let pool = self.pool_of(b);
        let list = self.free_list(pool, b / self.blocks_per_unit);
        self.lists.push_back(list, b);
        self.free[pool as usize] += 1;
    }

    #[inline]
    pub fn unit_of(&self, b: u32) -> u32 {
        self.unit_div.div(b)
    }

    #[inline]
    pub fn capacity_pages(&self, b: u32) -> u32 {
        self.pages_in_mode(self.info[b as usize].slc)
    }

    /// Pages of a block used in SLC mode (`slc`) or natively.
    #[inline(always)]
    pub fn pages_in_mode(&self, slc: bool) -> u32 {
        if slc {
            self.slc_pages_per_block
        } else {
            self.pages_per_block
        }
    }

    pub fn class(&self, b: u32) -> Class {
        match (self.info[b as usize].slc, self.info[b as usize].is_static) {
            (false, _) => Class::Native,
            (true, false) => Class::SlcDynamic,
            (true, true) => Class::SlcStatic,
        }
    }

    pub fn free_count(&self, pool: Pool) -> u32 {
        self.free[pool as usize]
    }

    /// Free native blocks on `unit`.
    fn free_on_unit(&self, unit: u32) -> u32 {
        self.lists.len(self.free_list(Pool::Native, unit))
    }

    /// The unit with the fewest free native blocks, the first such from `from` on in unit
    /// order (so ties rotate as `from` does), and that count. O(units): asked once per victim.
    pub fn neediest_unit(&self, from: u32) -> (u32, u32) {
        let mut best = (u32::MAX, from);
        let mut u = from;
        for _ in 0..self.units {
            let free = self.free_on_unit(u);
            if free < best.0 {
                best = (free, u);
            }
            u = if u + 1 == self.units { 0 } else { u + 1 };
        }
        (best.1, best.0)
    }

    /// Native blocks currently used in SLC mode.
    pub fn dynamic_slc_blocks(&self) -> u32 {
        self.dyn_slc
    }

    /// Take a free block of `pool`, preferably on `unit` (FIFO per unit, which spreads wear),
    /// else from the next unit that has one. `slc_mode` opens a native block in SLC mode.
    #[cfg(test)]
    pub fn take_free(&mut self, pool: Pool, unit: u32, slc_mode: bool) -> Option<u32> {
        self.take_free_at(pool, unit, slc_mode, FreeEnd::Oldest)
    }

    /// [`Self::take_free`] from either end of the unit's free list.
    pub fn take_free_at(
        &mut self,
        pool: Pool,
        unit: u32,
        slc_mode: bool,
        end: FreeEnd,
    ) -> Option<u32> {
        if self.free[pool as usize] == 0 {
            return None;
        }
        let units = self.units;
        let list = |k: u32| pool as u32 * units + (unit + k) % units;
        let b = match (0..units).find_map(|k| self.take_ready(list(k), end)) {
            Some(b) => b,
            None => {
                // Every oldest free block still waits for its erase: take the one released
                // first, on any unit (its erase is the next the device carries out, so the
                // wait is the shortest).
                let b = (0..units)
                    .map(|k| self.lists.head(list(k)))
                    .filter(|&h| h != NIL)
                    .min_by_key(|&h| self.release_seq[h as usize])?;
                self.lists.remove(b);
                b
            }
        };
        self.claim_free(pool, b, slc_mode);
        Some(b)
    }

    /// A free block of `pool` on `unit` itself that a stream can program at once (see
    /// [`Self::take_ready`]); `None` if the unit has none.
    pub fn take_free_on_unit(
        &mut self,
        pool: Pool,
        unit: u32,
        slc_mode: bool,
        end: FreeEnd,
    ) -> Option<u32> {
        let b = self.take_ready(pool as u32 * self.units + unit, end)?;
        self.claim_free(pool, b, slc_mode);
        Some(b)
    }

    /// Take off free list `list` the block a stream can program at once: the oldest if its
    /// erase is done, or (`FreeEnd::Newest`, relocation streams, whose programs queue behind
    /// the erase anyway) the newest.
    fn take_ready(&mut self, list: u32, end: FreeEnd) -> Option<u32> {
        match end {
            FreeEnd::Oldest => {
                let h = self.lists.head(list);
                if h == NIL || self.info[h as usize].erase_pending {
                    return None;
                }
                self.lists.remove(h);
                Some(h)
            }
            FreeEnd::Newest => self.lists.pop_back(list),
        }
    }

    /// Bookkeeping of a free block just taken off its list: it becomes open.
    fn claim_free(&mut self, pool: Pool, b: u32, slc_mode: bool) {
        self.free[pool as usize] -= 1;
        let i = b as usize;
        debug_assert_eq!(self.info[i].state, BlockState::Free);
        self.info[i].state = BlockState::Open;
        if pool == Pool::Native && slc_mode {
            self.info[i].slc = true;
            self.dyn_slc += 1;
        }
    }

    /// A full open block becomes a GC / fold candidate.
    pub fn close(&mut self, b: u32, seq: u64) {
        let i = b as usize;
        debug_assert_eq!(self.info[i].state, BlockState::Open);
        self.info[i].state = BlockState::Closed;
        self.close_seq[i] = seq;
        let (class, v) = (self.class(b), self.info[i].valid);
        self.lists.push_back(self.bucket(class, v), b);
        let h = &mut self.min_hint[class as usize];
        *h = (*h).min(v);
    }

    #[inline]
    pub fn add_valid(&mut self, b: u32) {
        debug_assert_eq!(self.info[b as usize].state, BlockState::Open);
        self.info[b as usize].valid += 1;
    }

    /// Start loading what [`Self::dec_valid`] of `b` reads first: its counters and its
    /// place in the victim buckets (nothing for a block out of range).
    #[inline]
    pub fn prefetch(&self, b: u32) {
        if let Some(info) = self.info.get(b as usize) {
            crate::prefetch::prefetch_read(info);
            self.lists.prefetch(b);
        }
    }

    #[inline]
    pub fn dec_valid(&mut self, b: u32) {
        let i = b as usize;
        let v = self.info[i].valid - 1;
        self.info[i].valid = v;
        if self.info[i].state == BlockState::Closed {
            let class = self.class(b);
            self.lists.remove(b);
            self.lists.push_back(self.bucket(class, v), b);
            let h = &mut self.min_hint[class as usize];
            *h = (*h).min(v);
        }
    }

    /// Block `b`, just opened by the SLC stream, joins the stripe being opened, or starts the
    /// next one if that stripe has a block on `b`'s unit already. O(units) per block opened.
    pub fn join_stripe(&mut self, b: u32) {
        self.stripe_open = self.joined(self.stripe_open, b);
    }

    /// Block `b`, just opened in native mode by write stream `stream`, joins the superblock
    /// that stream is opening, as [`Self::join_stripe`] does for the SLC stream.
    pub fn join_native_stripe(&mut self, stream: usize, b: u32) {
        self.native_stripe_open[stream] = self.joined(self.native_stripe_open[stream], b);
    }

    /// Link `b` into the stripe of `head` unless it has a block on `b`'s unit; returns the
    /// block of the stripe being opened after that (`b` when it starts a new one).
    fn joined(&mut self, head: u32, b: u32) -> u32 {
        if head != NIL {
            let unit = self.unit_of(b);
            let mut m = head;
            let taken = loop {
                if self.unit_of(m) == unit {
                    break true;
                }
                m = self.stripe_next[m as usize];
                if m == head {
                    break false;
                }
            };
            if !taken {
                // Last in the list: the list keeps the order the blocks were opened in.
                let tail = self.stripe_prev[head as usize];
                self.stripe_next[tail as usize] = b;
                self.stripe_prev[b as usize] = tail;
                self.stripe_next[b as usize] = head;
                self.stripe_prev[head as usize] = b;
                return head;
            }
        }
        b
    }

    /// The next block of `b`'s SLC stripe (`b` itself when it is in none or alone).
    #[inline]
    pub fn stripe_next(&self, b: u32) -> u32 {
        self.stripe_next[b as usize]
    }

    /// An emptied block leaves its stripe.
    fn leave_stripe(&mut self, b: u32) {
        let i = b as usize;
        let (prev, next) = (self.stripe_prev[i], self.stripe_next[i]);
        if next != b {
            self.stripe_next[prev as usize] = next;
            self.stripe_prev[next as usize] = prev;
            self.stripe_next[i] = b;
            self.stripe_prev[i] = b;
        }
        let after = if next == b { NIL } else { next };
        if self.stripe_open == b {
            self.stripe_open = after;
        }
        for open in &mut self.native_stripe_open {
            if *open == b {
                *open = after;
            }
        }
    }

    /// Whether `b` is in no stripe (or alone in its own).
    #[inline]
    pub fn stripe_alone(&self, b: u32) -> bool {
        self.stripe_next[b as usize] == b
    }

    /// Take a closed block out of its bucket to empty it.
    pub fn begin_reclaim(&mut self, b: u32) {
        debug_assert_eq!(self.info[b as usize].state, BlockState::Closed);
        self.lists.remove(b);
        self.info[b as usize].state = BlockState::Reclaiming;
    }

    /// The block was erased: count it and return it to its free pool (a dynamic SLC block goes
    /// back to native mode).
    /// `erase_pending`: the device has not carried the erase out yet.
    pub fn release(&mut self, b: u32, erase_pending: bool) {
        let i = b as usize;
        self.info[i].erase_pending = erase_pending;
        self.releases += 1;
        self.release_seq[i] = self.releases;
        debug_assert_eq!(self.info[i].valid, 0, "erasing block {b} with valid data");
        if self.lists.owner(b) != NIL {
            self.lists.remove(b);
        }
        self.leave_stripe(b);
        if self.info[i].slc && !self.info[i].is_static {
            self.info[i].slc = false;
            self.dyn_slc -= 1;
        }
        self.info[i].state = BlockState::Free;
        self.erase_count[i] += 1;
        self.info[i].wp = 0;
        self.info[i].programmed = 0;
        self.push_free(b);
    }

    /// Whether `b` is a block of the bad-block reserve not yet in use.
    pub fn is_reserved(&self, b: u32) -> bool {
        b % self.blocks_per_unit < self.reserve_left[self.unit_of(b) as usize]
    }

    /// An emptied block whose erase failed leaves service for good (its erase counted, as it
    /// was attempted), and the unit's next reserve block, if any, takes its place in the free
    /// pool.
    pub fn retire(&mut self, b: u32) {
        let i = b as usize;
        debug_assert_eq!(self.info[i].valid, 0, "retiring block {b} with valid data");
        debug_assert!(!self.info[i].is_static, "static SLC blocks do not wear out");
        if self.lists.owner(b) != NIL {
            self.lists.remove(b);
        }
        self.leave_stripe(b);
        if self.info[i].slc {
            self.info[i].slc = false;
            self.dyn_slc -= 1;
        }
        self.info[i] = BlockInfo {
            state: BlockState::Retired,
            ..BlockInfo::FREE
        };
        self.erase_count[i] += 1;
        self.retired += 1;
        let unit = self.unit_of(b);
        let left = &mut self.reserve_left[unit as usize];
        if *left == 0 {
            self.retired_unreplaced += 1;
            return;
        }
        *left -= 1;
        let r = unit * self.blocks_per_unit + *left;
        debug_assert_eq!(self.info[r as usize].state, BlockState::Bad);
        self.info[r as usize].state = BlockState::Free;
        self.push_free(r);
    }

    /// Blocks retired in use, and those of them no reserve block replaced.
    pub fn retired(&self) -> (u32, u32) {
        (self.retired, self.retired_unreplaced)
    }

    /// Reserve blocks not yet in use, over all units.
    pub fn reserve_left(&self) -> u32 {
        self.reserve_left.iter().sum()
    }

    /// A fresh table (as [`Self::new`]) that keeps this one's wear: erase counts, retired
    /// blocks and the reserve blocks that replaced them. Erases `erased` (blocks that held
    /// programmed pages) once more, as a secure erase does.
    pub fn renewed(&self, g: &Geometry, erased: impl Fn(u32) -> bool) -> BlockTable {
        let mut t = BlockTable::new(g);
        for b in 0..g.total_blocks {
            let i = b as usize;
            t.erase_count[i] = self.erase_count[i] + u32::from(erased(b));
            let in_service = g.is_bad(b) && !self.is_reserved(b);
            if self.info[i].state == BlockState::Retired {
                if t.lists.owner(b) != NIL {
                    t.lists.remove(b);
                    t.free[Pool::Native as usize] -= 1;
                }
                t.info[i].state = BlockState::Retired;
            } else if in_service {
                t.info[i].state = BlockState::Free;
                t.push_free(b);
            }
        }
        t.reserve_left.clone_from(&self.reserve_left);
        t.retired = self.retired;
        t.retired_unreplaced = self.retired_unreplaced;
        t
    }

    /// Valid count of the emptiest closed block of `class`. Amortised O(1): the hint only
    /// moves up here, and moves down by one per invalidation.
    pub fn min_bucket(&mut self, class: Class) -> Option<u32> {
        let c = class as usize;
        while self.min_hint[c] <= self.ius_per_block {
            if self.lists.len(self.bucket(class, self.min_hint[c])) > 0 {
                return Some(self.min_hint[c]);
            }
            self.min_hint[c] += 1;
        }
        self.min_hint[c] = self.ius_per_block + 1;
        None
    }

    /// First closed block of `class` with `valid` valid IUs, or [`NIL`].
    #[inline]
    pub fn bucket_head(&self, class: Class, valid: u32) -> u32 {
        self.lists.head(self.bucket(class, valid))
    }

    #[inline]
    pub fn next_in_bucket(&self, b: u32) -> u32 {
        self.lists.next(b)
    }

    /// The first closed block of `class` on `unit` with `lo..=hi` valid IUs, looking at no
    /// more than `max_visits` blocks (lowest buckets first), or [`NIL`].
    pub fn find_on_unit(&self, class: Class, unit: u32, lo: u32, hi: u32, max_visits: u32) -> u32 {
        let mut visits = 0;
        for v in lo..=hi.min(self.ius_per_block) {
            let mut b = self.bucket_head(class, v);
            while b != NIL {
                if self.unit_of(b) == unit {
                    return b;
                }
                visits += 1;
                if visits == max_visits {
                    return NIL;
                }
                b = self.lists.next(b);
            }
        }
        NIL
    }

    /// For the invariant check: the list a block sits in, and where it should be.
    pub fn listed_correctly(&self, b: u32) -> Result<(), String> {
        let i = b as usize;
        let owner = self.lists.owner(b);
        let want = match self.info[i].state {
            BlockState::Free => self.free_list(self.pool_of(b), self.unit_of(b)),
            BlockState::Closed => self.bucket(self.class(b), self.info[i].valid),
            BlockState::Open | BlockState::Reclaiming | BlockState::Bad | BlockState::Retired => {
                NIL
            }
        };
        if owner != want {
            return Err(format!(
                "block {b} ({:?}, valid {}) is in list {owner}, expected {want}",
                self.info[i].state, self.info[i].valid
            ));
        }
        if self.info[i].state == BlockState::Closed
            && self.info[i].valid < self.min_hint[self.class(b) as usize]
        {
            return Err(format!(
                "block {b} has valid {} below the bucket min hint",
                self.info[i].valid
            ));
        }
        Ok(())
    }

    /// For the invariant check: `b`'s stripe links agree both ways, and a block sharing a
    /// stripe holds or takes data, in the same mode (SLC or native) as its next block.
    pub fn stripe_linked_correctly(&self, b: u32) -> Result<(), String> {
        let i = b as usize;
        let (next, prev) = (self.stripe_next[i], self.stripe_prev[i]);
        if self.stripe_prev[next as usize] != b || self.stripe_next[prev as usize] != b {
            return Err(format!(
                "block {b}: stripe links {prev} <- b -> {next} disagree"
            ));
        }
        let alone = next == b;
        let info = &self.info[i];
        if !alone
            && (info.slc != self.info[next as usize].slc
                || !matches!(
                    info.state,
                    BlockState::Open | BlockState::Closed | BlockState::Reclaiming
                ))
        {
            return Err(format!(
                "block {b} ({:?}, slc {}) shares a stripe with block {next}",
                info.state, info.slc
            ));
        }
        Ok(())
    }

    /// A loaded table's own indices in range: its per-block and per-unit arrays of the
    /// drive's length, stripe links to blocks of the drive, its lists well formed, and its
    /// hints and counts within what the drive holds.
    pub fn check_loaded_ranges(&self) -> Result<(), String> {
        let n = self.info.len();
        let lists = 2 * self.units + 3 * (self.ius_per_block + 1);
        if self.release_seq.len() != n
            || self.stripe_next.len() != n
            || self.stripe_prev.len() != n
            || self.reserve_left.len() != self.units as usize
        {
            return Err(format!(
                "block tables of {}, {}, {} and {} entries for {n} blocks and {} units",
                self.release_seq.len(),
                self.stripe_next.len(),
                self.stripe_prev.len(),
                self.reserve_left.len(),
                self.units
            ));
        }
        let past = |b: u32| b as usize >= n;
        if self
            .stripe_next
            .iter()
            .chain(&self.stripe_prev)
            .any(|&b| past(b))
            || std::iter::once(&self.stripe_open)
                .chain(&self.native_stripe_open)
                .any(|&b| b != NIL && past(b))
        {
            return Err("a stripe link to a block past the drive".into());
        }
        if self.reserve_left.iter().any(|&r| r > self.blocks_per_unit)
            || self.min_hint.iter().any(|&h| h > self.ius_per_block + 1)
            || self.free.iter().any(|&f| f as usize > n)
            || self.dyn_slc as usize > n
        {
            return Err("a block count or hint past the drive's blocks".into());
        }
        self.lists.check_loaded(n as u32, lists)
    }

    /// For the invariant check: free counts per pool and dynamic SLC count from scratch.
    pub fn recount(&self) -> ([u32; 2], u32) {
        let mut free = [0u32; 2];
        let mut dyn_slc = 0;
        for b in 0..self.info.len() as u32 {
            if self.info[b as usize].state == BlockState::Free {
                free[self.pool_of(b) as usize] += 1;
            }
            if self.info[b as usize].slc && !self.info[b as usize].is_static {
                dyn_slc += 1;
            }
        }
        (free, dyn_slc)
    }

    pub fn counts(&self) -> ([u32; 2], u32) {
        (self.free, self.dyn_slc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::small;

    fn table() -> BlockTable {
        BlockTable::new(&Geometry::new(&small()).unwrap())
    }

    #[test]
    fn take_prefers_the_unit_then_falls_back() {
        let mut t = table();
        assert_eq!(t.free_count(Pool::Native), 128);
        assert_eq!(t.take_free(Pool::Native, 1, false), Some(64));
        assert_eq!(t.take_free(Pool::Native, 0, false), Some(0));
        for _ in 0..63 {
            t.take_free(Pool::Native, 1, false).unwrap();
        }
        // Unit 1 is empty now: unit 0 serves.
        assert_eq!(t.take_free(Pool::Native, 1, false), Some(1));
        assert_eq!(t.take_free(Pool::Static, 0, true), None);
    }

    #[test]
    fn buckets_track_valid_counts_and_min() {
        let mut t = table();
        let a = t.take_free(Pool::Native, 0, false).unwrap();
        let b = t.take_free(Pool::Native, 0, false).unwrap();
        for _ in 0..16 {
            t.add_valid(a);
            t.add_valid(b);
        }
        t.close(a, 1);
        t.close(b, 2);
        assert_eq!(t.min_bucket(Class::Native), Some(16));
        t.dec_valid(b);
        t.dec_valid(b);
        assert_eq!(t.min_bucket(Class::Native), Some(14));
        assert_eq!(t.bucket_head(Class::Native, 14), b);
        t.begin_reclaim(b);
        assert_eq!(t.min_bucket(Class::Native), Some(16));
        for _ in 0..14 {
            t.dec_valid(b);
        }
        t.release(b, false);
        assert_eq!(t.erase_count[b as usize], 1);
        assert_eq!(t.info[b as usize].state, BlockState::Free);
        assert_eq!(t.free_count(Pool::Native), 127);
        for b in 0..128 {
            t.listed_correctly(b).unwrap();
        }
    }

    #[test]
    fn finds_a_nearly_emptiest_block_on_a_unit() {
        let mut t = table();
        // Unit 0: 10 valid; unit 1: 12 valid (16-IU blocks, 64 blocks per unit).
        for (unit, valid) in [(0, 10), (1, 12)] {
            let b = t.take_free(Pool::Native, unit, false).unwrap();
            for _ in 0..valid {
                t.add_valid(b);
            }
            t.close(b, 0);
        }
        assert_eq!(t.find_on_unit(Class::Native, 1, 10, 12, 8), 64);
        assert_eq!(t.find_on_unit(Class::Native, 1, 10, 11, 8), NIL);
        assert_eq!(t.find_on_unit(Class::Native, 0, 10, 16, 8), 0);
        // The visit limit bounds the walk: the unit-1 block is the second one seen.
        assert_eq!(t.find_on_unit(Class::Native, 1, 10, 16, 1), NIL);
    }

    #[test]
    fn dynamic_slc_blocks_return_to_native() {
        let mut t = table();
        let b = t.take_free(Pool::Native, 0, true).unwrap();
        assert!(t.info[b as usize].slc);
        assert_eq!(t.dynamic_slc_blocks(), 1);
        assert_eq!(t.capacity_pages(b), 4);
        assert_eq!(t.class(b), Class::SlcDynamic);
        t.release(b, false);
        assert!(!t.info[b as usize].slc);
        assert_eq!(t.dynamic_slc_blocks(), 0);
    }
}
