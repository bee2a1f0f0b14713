//! Victim selection policies. Each choice does bounded work: greedy reads the lowest
//! non-empty bucket; cost-benefit scores a few blocks from the lowest few buckets.

use crate::blocks::{BlockTable, Class};
use crate::config::VictimPolicy;
use crate::lists::NIL;

/// Chooses which closed block of a class to empty next.
pub(crate) trait VictimSelector {
    /// A closed block of `class`, or None when there is none. `now_seq` is the host write
    /// sequence number (the age clock).
    fn select(&self, blocks: &mut BlockTable, class: Class, now_seq: u64) -> Option<u32>;
}

/// The block with the fewest valid IUs; among equals, the one that reached that count first.
pub(crate) struct Greedy;

impl VictimSelector for Greedy {
    fn select(&self, blocks: &mut BlockTable, class: Class, _now_seq: u64) -> Option<u32> {
        let v = blocks.min_bucket(class)?;
        Some(blocks.bucket_head(class, v))
    }
}

/// Maximises `age * (1 - u) / (2 u)` (benefit: free space times how long it stays free;
/// cost: read and rewrite the valid part), over at most `BUCKETS` non-empty buckets from the
/// lowest and `PER_BUCKET` blocks of each, so a choice costs O(1) apart from skipping empty
/// buckets (amortised like greedy's).
pub(crate) struct CostBenefit {
    pub ius_per_block: u32,
}

const BUCKETS: u32 = 8;
const PER_BUCKET: u32 = 4;
/// Empty buckets scanned past the first non-empty one before giving up.
const SCAN_LIMIT: u32 = 64;

impl VictimSelector for CostBenefit {
    fn select(&self, blocks: &mut BlockTable, class: Class, now_seq: u64) -> Option<u32> {
        let lo = blocks.min_bucket(class)?;
        let cap = f64::from(self.ius_per_block);
        let mut best = (f64::NEG_INFINITY, NIL);
        let mut seen_buckets = 0;
        let hi = (lo + SCAN_LIMIT).min(self.ius_per_block);
        for v in lo..=hi {
            let mut b = blocks.bucket_head(class, v);
            if b == NIL {
                continue;
            }
            if v == 0 {
                // Nothing to copy: no other block can beat it.
                return Some(b);
            }
            let u = f64::from(v) / cap;
            let mut n = 0;
            while b != NIL && n < PER_BUCKET {
                let age = (now_seq - blocks.close_seq[b as usize].min(now_seq) + 1) as f64;
                let score = age * (1.0 - u) / (2.0 * u);
                // Strictly greater: ties keep the earlier (lower-valid, older) block.
                if score > best.0 {
                    best = (score, b);
                }
                b = blocks.next_in_bucket(b);
                n += 1;
            }
            seen_buckets += 1;
            if seen_buckets == BUCKETS {
                break;
            }
        }
        Some(best.1)
    }
}

pub(crate) fn selector(policy: VictimPolicy, ius_per_block: u32) -> Box<dyn VictimSelector> {
    match policy {
        VictimPolicy::Greedy => Box::new(Greedy),
        VictimPolicy::CostBenefit => Box::new(CostBenefit { ius_per_block }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::Pool;
    use crate::config::{tests::small, Geometry};

    /// Three closed blocks (16 IUs each): `valid` and `close_seq` as given.
    fn setup(spec: &[(u32, u64)]) -> (BlockTable, Vec<u32>) {
        let mut t = BlockTable::new(&Geometry::new(&small()).unwrap());
        let mut ids = Vec::new();
        for &(valid, seq) in spec {
            let b = t.take_free(Pool::Native, 0, false).unwrap();
            for _ in 0..16 {
                t.add_valid(b);
            }
            t.close(b, seq);
            for _ in valid..16 {
                t.dec_valid(b);
            }
            ids.push(b);
        }
        (t, ids)
    }

    #[test]
    fn greedy_takes_the_emptiest() {
        let (mut t, ids) = setup(&[(9, 0), (4, 50), (12, 10)]);
        assert_eq!(Greedy.select(&mut t, Class::Native, 100), Some(ids[1]));
        assert_eq!(Greedy.select(&mut t, Class::SlcDynamic, 100), None);
    }

    #[test]
    fn cost_benefit_prefers_old_cold_blocks() {
        // Block 0: 6/16 valid, closed long ago; block 1: 4/16 valid, closed just now.
        let (mut t, ids) = setup(&[(6, 0), (4, 990)]);
        let cb = CostBenefit { ius_per_block: 16 };
        assert_eq!(cb.select(&mut t, Class::Native, 1000), Some(ids[0]));
        // With equal ages it agrees with greedy.
        let (mut t, ids) = setup(&[(6, 0), (4, 0)]);
        assert_eq!(cb.select(&mut t, Class::Native, 1000), Some(ids[1]));
        // An empty block wins outright.
        let (mut t, ids) = setup(&[(6, 0), (0, 999)]);
        assert_eq!(cb.select(&mut t, Class::Native, 1000), Some(ids[1]));
    }
}
