//! The floor: a minimal page-mapped FTL with greedy GC and nothing else (no dies, streams per
//! unit, SLC, undo records or ops), used to measure how fast the bare mapping work can go.
//! A benchmark of the full model is judged against it.

use crate::mapping::large_table;
use flashlab_engine::RngStream;

const NIL: u32 = u32::MAX;

/// L2P and P2L, per-block valid counts, closed blocks bucketed by valid count (intrusive
/// lists), one open block for host writes and one for GC copies.
pub struct FloorFtl {
    ipb: u32,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    head: Vec<u32>,
    min_bucket: u32,
    free: Vec<u32>,
    open: [u32; 2],
    wp: [u32; 2],
    host_writes: u64,
    nand_writes: u64,
}

impl FloorFtl {
    /// `blocks` blocks of `ius_per_block` IUs for `user_ius` logical IUs. Needs at least four
    /// blocks of spare (two open, one free for GC, one to gain).
    pub fn new(user_ius: u32, blocks: u32, ius_per_block: u32) -> Option<FloorFtl> {
        if u64::from(blocks) * u64::from(ius_per_block)
            < u64::from(user_ius) + 4 * u64::from(ius_per_block)
            || u64::from(blocks) * u64::from(ius_per_block) >= u64::from(NIL)
        {
            return None;
        }
        let mut f = FloorFtl {
            ipb: ius_per_block,
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
            open: [NIL; 2],
            wp: [0; 2],
            host_writes: 0,
            nand_writes: 0,
        };
        f.open = [f.free.pop()?, f.free.pop()?];
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
        let closed = b != self.open[0] && b != self.open[1];
        if closed {
            self.unlink(b);
        }
        self.valid[b as usize] -= 1;
        if closed {
            self.link(b);
        }
        self.p2l[ppa as usize] = NIL;
    }

    /// Append `lpn` to open block `k` (0 host, 1 GC).
    fn append(&mut self, k: usize, lpn: u32) {
        if self.wp[k] == self.ipb {
            let full = self.open[k];
            self.link(full);
            self.open[k] = self.free.pop().expect("floor FTL ran out of free blocks");
            self.wp[k] = 0;
        }
        let b = self.open[k];
        let ppa = b * self.ipb + self.wp[k];
        self.wp[k] += 1;
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
        while self.free.len() < 2 {
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
        let mut f = FloorFtl::new(self.user_ius, self.blocks, self.ius_per_block)
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
}
