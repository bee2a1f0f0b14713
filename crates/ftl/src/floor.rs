//! The floor: a minimal page-mapped FTL with greedy GC and nothing else (no dies, SLC, undo
//! records, ops or timing), used to measure how fast the bare mapping work can go. A
//! benchmark of the full model is judged against it.
//!
//! Its plain layout has one open block for host writes and one for GC copies. A drive keeps
//! an open block per stream on every plane and a reserve of free blocks, space that holds no
//! victim, so at the same spare it copies more per host write than the plain floor (WA 6.5
//! against 4.9 with 16 KiB pages on 32 planes at 7% spare). [`FloorLayout::striped`] gives the
//! floor the same open blocks and reserve, so that it does the same mapping work as the drive
//! it is compared with, in the same tight loop.

use crate::mapping::large_table;
use flashlab_engine::RngStream;

const NIL: u32 = u32::MAX;
/// `prev` of an open block: it is in no bucket (read where a closed block's unlink reads it).
const OPEN: u32 = NIL - 1;

/// Where the floor writes: open blocks per stream and free blocks kept back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloorLayout {
    /// Open blocks of each stream (host, GC); the stream moves to its next open block after
    /// every page, as a drive stripes pages over its planes.
    pub open_blocks_per_stream: u32,
    /// IUs written to an open block before the stream moves on.
    pub ius_per_page: u32,
    /// GC runs while no more than this many blocks are free.
    pub reserve_free_blocks: u32,
}

impl FloorLayout {
    /// One open block per stream, GC when a single free block is left.
    pub const PLAIN: FloorLayout = FloorLayout {
        open_blocks_per_stream: 1,
        ius_per_page: 1,
        reserve_free_blocks: 1,
    };

    /// A drive's layout: an open block per stream on each of `planes`, pages of
    /// `ius_per_page` IUs striped over them, `reserve_free_blocks` kept free.
    pub fn striped(planes: u32, ius_per_page: u32, reserve_free_blocks: u32) -> FloorLayout {
        FloorLayout {
            open_blocks_per_stream: planes.max(1),
            ius_per_page: ius_per_page.max(1),
            reserve_free_blocks: reserve_free_blocks.max(1),
        }
    }
}

/// One stream's open blocks, written a run of IUs at a time in turn. Every open block gets
/// the same run in each round, so all are written to the same offset: one offset stands for
/// all, and the blocks fill, and are replaced, in the same round.
struct Stream {
    open: Vec<u32>,
    cursor: usize,
    /// Offset in its block of the run being written.
    offset: u32,
    /// In this round each open block is full when its turn comes, and is replaced.
    replacing: bool,
    /// The open block being written, and its next PPA.
    block: u32,
    ppa: u32,
    /// Writes left in the current run.
    left: u32,
}
/// L2P and P2L, per-block valid counts, closed blocks bucketed by valid count (intrusive
/// lists), open blocks for host writes and for GC copies. `STRIPED`: several open blocks per
/// stream, which turn after every page; the plain floor (one each) is compiled apart so that
/// its loop stays as tight as the layout allows.
pub struct FloorFtl<const STRIPED: bool = false> {
    ipb: u32,
    /// IUs a stream writes to an open block before it turns to the next: a page where it
    /// has several open blocks, the whole block where it has one.
    run: u32,
    reserve: usize,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    head: Vec<u32>,
    min_bucket: u32,
    free: Vec<u32>,
    streams: [Stream; 2],
    host_writes: u64,
    nand_writes: u64,
}

impl FloorFtl<false> {
    /// `blocks` blocks of `ius_per_block` IUs for `user_ius` logical IUs, one open block per
    /// stream. Needs at least four blocks of spare (two open, one free for GC, one to gain).
    pub fn new(user_ius: u32, blocks: u32, ius_per_block: u32) -> Option<FloorFtl> {
        FloorFtl::with_layout(user_ius, blocks, ius_per_block, FloorLayout::PLAIN)
    }
}

impl<const STRIPED: bool> FloorFtl<STRIPED> {
    /// As [`FloorFtl::new`] with open blocks and reserve as `layout` says (several open
    /// blocks per stream need `STRIPED`, one needs it unset). Needs spare for the open blocks,
    /// the reserve and two blocks more.
    pub fn with_layout(
        user_ius: u32,
        blocks: u32,
        ius_per_block: u32,
        layout: FloorLayout,
    ) -> Option<Self> {
        let held = 2 * u64::from(layout.open_blocks_per_stream)
            + u64::from(layout.reserve_free_blocks)
            + 1;
        if STRIPED != (layout.open_blocks_per_stream > 1)
            || layout.ius_per_page == 0
            || !ius_per_block.is_multiple_of(layout.ius_per_page)
            || u64::from(blocks) * u64::from(ius_per_block)
                < u64::from(user_ius) + held * u64::from(ius_per_block)
            || u64::from(blocks) * u64::from(ius_per_block) >= u64::from(NIL)
        {
            return None;
        }
        let n = layout.open_blocks_per_stream as usize;
        let run = if n == 1 {
            ius_per_block
        } else {
            layout.ius_per_page
        };
        let stream = || Stream {
            open: vec![NIL; n],
            cursor: 0,
            offset: 0,
            replacing: false,
            block: NIL,
            ppa: 0,
            left: run,
        };
        let mut f = FloorFtl {
            ipb: ius_per_block,
            run,
            reserve: layout.reserve_free_blocks as usize,
            // The maps are backed as the FTL's are (huge pages where the OS allows), so the
            // comparison is of the work done, not of page-table walks.
            l2p: large_table(user_ius as usize, NIL),
            p2l: large_table((blocks * ius_per_block) as usize, NIL),
            valid: vec![0; blocks as usize],
            next: vec![NIL; blocks as usize],
            prev: vec![NIL; blocks as usize],
            head: vec![NIL; ius_per_block as usize + 1],
            min_bucket: 0,
            free: (0..blocks).rev().collect(),
            streams: [stream(), stream()],
            host_writes: 0,
            nand_writes: 0,
        };
        for k in 0..2 {
            for slot in 0..n {
                let b = f.free.pop()?;
                f.prev[b as usize] = OPEN;
                f.streams[k].open[slot] = b;
            }
            let s = &mut f.streams[k];
            s.block = s.open[0];
            s.ppa = s.block * ius_per_block;
        }
        Some(f)
    }

    fn unlink(&mut self, b: u32) {
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p == NIL {
            self.head[self.valid[b as usize] as usize] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
    }

    fn link(&mut self, b: u32) {
        let v = self.valid[b as usize];
        let h = self.head[v as usize];
        self.next[b as usize] = h;
        self.prev[b as usize] = NIL;
        if h != NIL {
            self.prev[h as usize] = b;
        }
        self.head[v as usize] = b;
        self.min_bucket = self.min_bucket.min(v);
    }

    fn invalidate(&mut self, ppa: u32) {
        let b = ppa / self.ipb;
        let closed = self.prev[b as usize] != OPEN;
        if closed {
            self.unlink(b);
        }
        self.valid[b as usize] -= 1;
        if closed {
            self.link(b);
        }
        self.p2l[ppa as usize] = NIL;
    }

    /// [`Self::turn`] out of line: the plain floor turns once per block.
    #[inline(never)]
    fn turn_rarely(&mut self, k: usize) {
        self.turn(k);
    }

    /// Stream `k` turns to its next open block, which it replaces with a free block if full.
    #[inline(always)]
    fn turn(&mut self, k: usize) {
        let (ipb, run) = (self.ipb, self.run);
        let s = &mut self.streams[k];
        s.cursor += 1;
        if s.cursor == s.open.len() {
            s.cursor = 0;
            s.offset += run;
            s.replacing = s.offset == ipb;
            if s.replacing {
                s.offset = 0;
            }
        }
        let slot = s.cursor;
        if s.replacing {
            self.replace(k, slot);
        }
        let s = &mut self.streams[k];
        s.block = s.open[slot];
        s.ppa = s.block * ipb + s.offset;
        s.left = run;
    }

    /// Close open block `slot` of stream `k` and open a free block in its place.
    #[cold]
    fn replace(&mut self, k: usize, slot: usize) {
        let closed = self.streams[k].open[slot];
        let b = self.free.pop().expect("floor FTL ran out of free blocks");
        self.link(closed);
        self.prev[b as usize] = OPEN;
        self.streams[k].open[slot] = b;
    }

    /// Append `lpn` to stream `k` (0 host, 1 GC).
    #[inline]
    fn append(&mut self, k: usize, lpn: u32) {
        if self.streams[k].left == 0 {
            if STRIPED {
                self.turn(k);
            } else {
                self.turn_rarely(k);
            }
        }
        let s = &mut self.streams[k];
        s.left -= 1;
        let ppa = s.ppa;
        s.ppa += 1;
        let b = s.block;
        self.p2l[ppa as usize] = lpn;
        self.l2p[lpn as usize] = ppa;
        self.valid[b as usize] += 1;
        self.nand_writes += 1;
    }

    fn collect(&mut self) {
        while self.head[self.min_bucket as usize] == NIL {
            self.min_bucket += 1;
        }
        let victim = self.head[self.min_bucket as usize];
        self.unlink(victim);
        let base = victim * self.ipb;
        for ppa in base..base + self.ipb {
            let lpn = self.p2l[ppa as usize];
            if lpn != NIL {
                self.p2l[ppa as usize] = NIL;
                self.valid[victim as usize] -= 1;
                self.append(1, lpn);
            }
        }
        self.free.push(victim);
    }

    /// Host write of one IU.
    #[inline]
    pub fn write(&mut self, lpn: u32) {
        while self.free.len() <= self.reserve {
            self.collect();
        }
        let old = self.l2p[lpn as usize];
        if old != NIL {
            self.invalidate(old);
        }
        self.append(0, lpn);
        self.host_writes += 1;
    }

    pub fn host_writes(&self) -> u64 {
        self.host_writes
    }

    pub fn nand_writes(&self) -> u64 {
        self.nand_writes
    }
}

/// "Fill sequentially, then uniform random writes": the workload both floor and full-model
/// benchmarks run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomWriteWorkload {
    pub user_ius: u32,
    pub blocks: u32,
    pub ius_per_block: u32,
    /// Random writes after the fill, in multiples of the user capacity.
    pub random_passes: f64,
    pub seed: u64,
}

impl RandomWriteWorkload {
    /// A drive of `user_bytes` at spare factor `(raw - user) / raw`.
    pub fn new(
        user_bytes: u64,
        iu_bytes: u32,
        spare_factor: f64,
        ius_per_block: u32,
        random_passes: f64,
    ) -> Self {
        let user_ius = (user_bytes / u64::from(iu_bytes)) as u32;
        let raw_ius = f64::from(user_ius) / (1.0 - spare_factor);
        let blocks = (raw_ius / f64::from(ius_per_block)).round() as u32;
        RandomWriteWorkload {
            user_ius,
            blocks,
            ius_per_block,
            random_passes,
            seed: 1,
        }
    }

    /// Feed the workload to `write` (one call per IU).
    pub fn run(&self, mut write: impl FnMut(u32)) {
        for lpn in 0..self.user_ius {
            write(lpn);
        }
        let mut rng = RngStream::from_seed_u64(self.seed);
        let n = (f64::from(self.user_ius) * self.random_passes) as u64;
        for _ in 0..n {
            write(rng.below(u64::from(self.user_ius)) as u32);
        }
    }

    /// Run on the floor FTL; returns its write amplification over the whole run.
    pub fn run_floor(&self) -> f64 {
        self.run_floor_with(FloorLayout::PLAIN)
    }

    /// Run on the floor FTL laid out as `layout`; returns its write amplification.
    pub fn run_floor_with(&self, layout: FloorLayout) -> f64 {
        if layout.open_blocks_per_stream > 1 {
            self.run_on::<true>(layout)
        } else {
            self.run_on::<false>(layout)
        }
    }

    fn run_on<const STRIPED: bool>(&self, layout: FloorLayout) -> f64 {
        let mut f = FloorFtl::<STRIPED>::with_layout(
            self.user_ius,
            self.blocks,
            self.ius_per_block,
            layout,
        )
        .expect("too little spare for the floor FTL");
        self.run(|lpn| f.write(lpn));
        f.nand_writes() as f64 / f.host_writes() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_rewrites_have_no_amplification() {
        let mut f = FloorFtl::new(1000, 80, 16).unwrap();
        for _ in 0..5 {
            for lpn in 0..1000 {
                f.write(lpn);
            }
        }
        assert_eq!(f.nand_writes(), f.host_writes());
    }

    #[test]
    fn random_writes_amplify_and_keep_the_map_consistent() {
        let w = RandomWriteWorkload {
            user_ius: 4000,
            blocks: 300,
            ius_per_block: 16,
            random_passes: 3.0,
            seed: 5,
        };
        let mut f = FloorFtl::new(w.user_ius, w.blocks, w.ius_per_block).unwrap();
        w.run(|lpn| f.write(lpn));
        let wa = f.nand_writes() as f64 / f.host_writes() as f64;
        assert!(wa > 1.2 && wa < 5.0, "{wa}");
        for lpn in 0..4000u32 {
            assert_eq!(f.p2l[f.l2p[lpn as usize] as usize], lpn);
        }
        assert!(FloorFtl::new(4000, 250, 16).is_none());
    }

    #[test]
    fn a_striped_layout_writes_pages_in_turn_and_holds_its_open_blocks_from_gc() {
        let layout = FloorLayout::striped(4, 2, 3);
        let mut f = FloorFtl::<true>::with_layout(64, 40, 8, layout).unwrap();
        for lpn in 0..16 {
            f.write(lpn);
        }
        // Two IUs (a page) per open block, then the next of the four.
        let block = |f: &FloorFtl<true>, lpn: u32| f.l2p[lpn as usize] / 8;
        for lpn in (0..16).step_by(2) {
            assert_eq!(block(&f, lpn), block(&f, lpn + 1));
            assert_ne!(block(&f, lpn), block(&f, (lpn + 2) % 16));
        }
        assert_eq!(
            block(&f, 0),
            block(&f, 8),
            "back to the first block after four pages"
        );

        let w = RandomWriteWorkload {
            user_ius: 4000,
            blocks: 300,
            ius_per_block: 16,
            random_passes: 3.0,
            seed: 5,
        };
        let plain = w.run_floor();
        let striped = w.run_floor_with(FloorLayout::striped(8, 4, 8));
        // Eight open blocks per stream and eight free hold space no victim offers.
        assert!(striped > plain * 1.1, "striped {striped}, plain {plain}");
        let mut f =
            FloorFtl::<true>::with_layout(4000, 300, 16, FloorLayout::striped(8, 4, 8)).unwrap();
        w.run(|lpn| f.write(lpn));
        for lpn in 0..4000u32 {
            assert_eq!(f.p2l[f.l2p[lpn as usize] as usize], lpn);
        }
        let valid: u32 = f.valid.iter().sum();
        assert_eq!(valid, 4000, "each IU valid in exactly one place");
        // 250 blocks of data; 8 x 2 open, 8 reserve and one more need 25 more.
        let striped = |blocks, ipp| {
            FloorFtl::<true>::with_layout(4000, blocks, 16, FloorLayout::striped(8, ipp, 8))
        };
        assert!(striped(274, 4).is_none());
        assert!(striped(275, 4).is_some());
        assert!(striped(300, 3).is_none(), "a block holds whole pages");
        assert!(
            FloorFtl::<false>::with_layout(4000, 300, 16, FloorLayout::striped(8, 4, 8)).is_none()
        );
    }
}
