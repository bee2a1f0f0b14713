//! How long one NAND operation takes: the class's average array time, shaped by the page's
//! type within its word line and varied from one operation to the next, and the error
//! decoder's iterations of a read.
//!
//! A preset's `t_read` and `t_prog` are averages over a word line's pages (see
//! [`crate::CellTimings`]); a real die takes each page type its own time, and the same page
//! its own time on each operation:
//! - **Page type.** A page's read senses the cells at as many reference voltages as its
//!   bits change across the cell's states, so tR grows with the sensing count of the page's
//!   type under the part's Gray code. Each sense adds about what the fixed part of a read
//!   (precharge, setup, register transfer) costs, so a type's tR is taken proportional to
//!   its sensing count plus one. Codes: MLC 1-2 (lower, upper); 3D TLC 2-3-2 (lower,
//!   middle, upper); 3D QLC 4-4-4-3. The factors average to 1 over the word line, so the
//!   class's throughput keeps its average. Programs: a 2D MLC word line is written in two
//!   passes, the lower page in ~0.4 ms and the upper in ~2.2 ms ([`crate::cell`]'s MLC
//!   figures); 3D TLC and QLC write a word line's pages in one shot, so their pages share
//!   one average.
//! - **Operation to operation.** The rest of tR "randomly varies from one read of the same
//!   page to another" (S. Bates, PMC-Sierra, "Latency in LDPC-based Next-Generation SSD
//!   Controllers", 2014: MLC tR 60 us minimum, 80 typical, 120 maximum); a program's
//!   time follows how many program-and-verify pulses its cells need, which differs from
//!   page to page and cycle to cycle (Renice NAND tester page-program traces, 2022). Both
//!   are drawn uniformly within a class's spread (estimates within those ranges).
//! - **Decoding.** An LDPC decoder iterates until the codeword checks: 1 us per iteration,
//!   1 at least, 4 typical, 20 at most (Bates, as above). The iterations past the first
//!   are drawn from a geometric distribution with the class's mean, capped at the
//!   maximum; data in SLC-mode blocks carries far fewer raw errors and decodes in about
//!   one (estimate). The decoder works after the data has crossed the channel, so its time
//!   delays the read's completion without holding the die.
//!
//! Every draw is a hash of the run's seed, the page's address and the class's operation
//! count: the same run gives the same times on any thread count, and nothing allocates.

use crate::CellType;

/// Iterations an LDPC decode takes at most (Bates, 2014).
pub const DECODE_MAX_ITERATIONS: u32 = 20;

/// Page types of a word line: at most four (QLC).
const PAGE_TYPES: usize = 4;

/// One decode iteration (Bates, 2014: a decoder of 1 us per iteration).
const DECODE_ITERATION_NS: u64 = 1_000;

/// Mean decode iterations past the first of native-mode data (Bates, 2014: 4 typical)
/// and of SLC-mode data (estimate), in thousandths.
const DECODE_EXTRA_MILLI: [u64; 2] = [3_000, 300];

/// Half-width of the operation-to-operation spread of reads and programs, in thousandths of
/// the page type's time: within Bates' 60-120 us around 80 us of tR once the page type's
/// share is taken out, and within the program-time scatter of the Renice traces
/// (estimates).
const READ_SPREAD_MILLI: u64 = 100;
const PROGRAM_SPREAD_MILLI: u64 = 150;

/// Array time and decode time per operation, drawn deterministically (see the module).
#[derive(Debug, Clone)]
pub struct OpVariation {
    seed: u64,
    /// Pages per word line in native mode.
    page_types: u32,
    /// `ceil(2^64 / page_types)`, for [`Self::page_type`].
    page_type_magic: u64,
    /// Per page type: read and program time in thousandths of the class's average.
    read_milli: [u64; PAGE_TYPES],
    program_milli: [u64; PAGE_TYPES],
    /// Per mode (native, SLC): `P(extra iterations >= k)` for k = 1.., scaled to 2^32.
    decode_tail: [[u64; DECODE_MAX_ITERATIONS as usize - 1]; 2],
}

impl OpVariation {
    /// The class's variation for `cell`, its draws seeded by `seed`.
    pub fn for_cell(cell: CellType, seed: u64) -> Self {
        let (read_senses, program_milli): (&[u64], &[u64]) = match cell {
            CellType::Slc => (&[1], &[1_000]),
            // Lower page ~0.4 ms, upper ~2.2 ms of a 1.3 ms average (cell.rs).
            CellType::Mlc => (&[1, 2], &[308, 1_692]),
            CellType::Tlc => (&[2, 3, 2], &[1_000, 1_000, 1_000]),
            CellType::Qlc => (&[4, 4, 4, 3], &[1_000, 1_000, 1_000, 1_000]),
        };
        let n = read_senses.len() as u64;
        let total: u64 = read_senses.iter().map(|s| s + 1).sum();
        let mut read_milli = [1_000; PAGE_TYPES];
        let mut prog = [1_000; PAGE_TYPES];
        for (i, s) in read_senses.iter().enumerate() {
            read_milli[i] = (s + 1) * 1_000 * n / total;
            prog[i] = program_milli[i];
        }
        Self {
            seed,
            page_types: n as u32,
            page_type_magic: (u64::MAX / n).wrapping_add(1),
            read_milli,
            program_milli: prog,
            decode_tail: DECODE_EXTRA_MILLI.map(geometric_tail),
        }
    }

    /// The page type of `page` (its index within the word line) in native mode:
    /// `page % page_types` by a multiply (Lemire, Kaser and Kurz, "Faster remainder by
    /// direct computation", 2019), exact for any 32-bit page, without a divide on every
    /// operation.
    #[inline(always)]
    fn page_type(&self, page: u32) -> usize {
        let low = self.page_type_magic.wrapping_mul(u64::from(page));
        ((u128::from(low) * u128::from(self.page_types)) >> 64) as usize
    }

    /// The draw of the `nth` operation of `class` on `page` of `block`.
    #[inline(always)]
    fn draw(&self, class: usize, block: u32, page: u32, nth: u64) -> u64 {
        let at = (u64::from(block) << 32) | u64::from(page);
        mix(self.seed ^ mix(at) ^ mix((nth << 3) | class as u64))
    }

    /// The array time of an operation whose class averages `average_ns` (see the module):
    /// `slc` for a block in SLC mode (one page type).
    #[inline(always)]
    pub fn array_ns(&self, op: OpDraw, average_ns: u64) -> u64 {
        let (type_milli, spread) = match op.kind {
            OpKindDraw::Read if op.slc => (1_000, READ_SPREAD_MILLI),
            OpKindDraw::Read => (self.read_milli[self.page_type(op.page)], READ_SPREAD_MILLI),
            OpKindDraw::Program if op.slc => (1_000, PROGRAM_SPREAD_MILLI),
            OpKindDraw::Program => (
                self.program_milli[self.page_type(op.page)],
                PROGRAM_SPREAD_MILLI,
            ),
            OpKindDraw::Erase => return average_ns,
        };
        let u = self.draw(op.class, op.block, op.page, op.nth) as u32;
        // Uniform in [1 - spread, 1 + spread] of the type's time, in thousandths.
        let jitter = 1_000 - spread + ((u64::from(u) * (2 * spread + 1)) >> 32);
        average_ns * type_milli / 1_000 * jitter / 1_000
    }

    /// The decoder's time for a read (see the module).
    #[inline(always)]
    pub fn decode_ns(&self, op: OpDraw) -> u64 {
        let u = self.draw(op.class, op.block, op.page, op.nth) >> 32;
        // The tail falls with k, so the iterations past the first are the thresholds above
        // `u`; counted without a branch per threshold, which a random `u` would mispredict.
        let tail = &self.decode_tail[usize::from(op.slc)];
        let extra: u64 = tail.iter().map(|&p| u64::from(u < p)).sum();
        (1 + extra) * DECODE_ITERATION_NS
    }
}

/// What a draw depends on: the operation's kind, class, mode and address and how many of
/// its class came before it.
#[derive(Debug, Clone, Copy)]
pub struct OpDraw {
    pub kind: OpKindDraw,
    pub class: usize,
    pub slc: bool,
    pub block: u32,
    pub page: u32,
    pub nth: u64,
}

/// The kind of operation drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKindDraw {
    Read,
    Program,
    Erase,
}

/// `P(X >= k)` for k = 1..DECODE_MAX_ITERATIONS-1 of a geometric X with mean
/// `mean_milli / 1000`, scaled to 2^32 (computed once; the draws compare integers).
fn geometric_tail(mean_milli: u64) -> [u64; DECODE_MAX_ITERATIONS as usize - 1] {
    let m = mean_milli as f64 / 1_000.0;
    let q = m / (1.0 + m);
    let mut p = 1.0;
    std::array::from_fn(|_| {
        p *= q;
        (p * 4_294_967_296.0) as u64
    })
}

/// SplitMix64's finaliser: a well-spread 64-bit hash of `z`.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(kind: OpKindDraw, slc: bool, page: u32, nth: u64) -> OpDraw {
        OpDraw {
            kind,
            class: 0,
            slc,
            block: 7,
            page,
            nth,
        }
    }

    #[test]
    fn page_types_keep_the_class_average() {
        for cell in CellType::ALL {
            let v = OpVariation::for_cell(cell, 1);
            let n = v.page_types as usize;
            let reads: u64 = v.read_milli[..n].iter().sum();
            let programs: u64 = v.program_milli[..n].iter().sum();
            // Rounding down loses at most one thousandth per type.
            assert!((n as u64 * 1_000 - reads) < n as u64, "{cell}: {reads}");
            assert_eq!(programs, n as u64 * 1_000, "{cell}");
        }
        let tlc = OpVariation::for_cell(CellType::Tlc, 1);
        assert!(tlc.read_milli[1] > tlc.read_milli[0] && tlc.read_milli[0] == tlc.read_milli[2]);
    }

    #[test]
    fn page_types_by_multiply_are_the_remainder() {
        for cell in CellType::ALL {
            let v = OpVariation::for_cell(cell, 1);
            let edges = [u32::MAX, u32::MAX - 1, u32::MAX - 2, 1 << 31, (1 << 31) - 1];
            for page in (0..10_000).chain(edges) {
                assert_eq!(
                    v.page_type(page),
                    (page % v.page_types) as usize,
                    "{cell} {page}"
                );
            }
        }
    }

    #[test]
    fn decode_tails_fall_so_a_count_is_the_first_threshold_passed() {
        let v = OpVariation::for_cell(CellType::Tlc, 1);
        for tail in &v.decode_tail {
            assert!(tail.windows(2).all(|w| w[0] >= w[1]), "{tail:?}");
        }
    }

    #[test]
    fn times_spread_continuously_around_the_average() {
        let v = OpVariation::for_cell(CellType::Tlc, 42);
        let avg = 600_000;
        let times: Vec<u64> = (0..30_000)
            .map(|i| v.array_ns(draw(OpKindDraw::Program, false, i as u32, i), avg))
            .collect();
        let mean = times.iter().sum::<u64>() / times.len() as u64;
        assert!(mean.abs_diff(avg) < avg / 100, "mean {mean}");
        let (lo, hi) = (times.iter().min().unwrap(), times.iter().max().unwrap());
        assert!(
            *lo >= avg * 85 / 100 && *hi <= avg * 115 / 100,
            "{lo}..{hi}"
        );
        // No comb: every 1% bin of the range is hit.
        let mut bins = [0u32; 30];
        for t in &times {
            bins[((t - lo) * 29 / (hi - lo)) as usize] += 1;
        }
        assert!(bins.iter().all(|&b| b > 0), "{bins:?}");
        // Erases keep their average.
        assert_eq!(v.array_ns(draw(OpKindDraw::Erase, false, 0, 3), 9), 9);
    }

    #[test]
    fn decode_iterations_follow_the_published_range() {
        let v = OpVariation::for_cell(CellType::Tlc, 3);
        let n = 100_000;
        let ns: Vec<u64> = (0..n)
            .map(|i| v.decode_ns(draw(OpKindDraw::Read, false, 5, i)))
            .collect();
        let mean = ns.iter().sum::<u64>() as f64 / n as f64 / 1_000.0;
        assert!((3.8..4.2).contains(&mean), "mean iterations {mean}");
        assert!(ns.iter().all(|&t| (1_000..=20_000).contains(&t)));
        assert!(ns.contains(&20_000) && ns.contains(&1_000));
        let slc: u64 = (0..n)
            .map(|i| v.decode_ns(draw(OpKindDraw::Read, true, 5, i)))
            .sum();
        assert!(slc < n * 1_400, "SLC data decodes in about one iteration");
    }

    #[test]
    fn draws_repeat_for_the_same_seed_and_differ_across_seeds() {
        let (a, b) = (
            OpVariation::for_cell(CellType::Qlc, 9),
            OpVariation::for_cell(CellType::Qlc, 10),
        );
        let op = draw(OpKindDraw::Read, false, 3, 77);
        assert_eq!(a.array_ns(op, 120_000), a.clone().array_ns(op, 120_000));
        let differ = (0..100)
            .filter(|&i| {
                let op = draw(OpKindDraw::Read, false, 3, i);
                a.array_ns(op, 120_000) != b.array_ns(op, 120_000)
            })
            .count();
        assert!(differ > 90, "{differ}");
    }
}
