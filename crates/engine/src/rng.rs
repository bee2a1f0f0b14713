//! Random streams. One master seed; each component derives its own stream from the seed and a
//! stable path name, so adding a component never perturbs the numbers another one draws.

use rand_core::{RngCore, SeedableRng};

/// Derives independent, reproducible streams from one master seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedTree {
    seed: u64,
}

impl SeedTree {
    pub fn new(master_seed: u64) -> Self {
        Self { seed: master_seed }
    }

    pub fn master_seed(&self) -> u64 {
        self.seed
    }

    /// The sub-tree for a named component (e.g. `"job/3"`, `"device/nand"`).
    pub fn child(&self, name: &str) -> SeedTree {
        SeedTree {
            seed: splitmix64(self.seed ^ fnv1a64(name.as_bytes())),
        }
    }

    /// The sub-tree for an indexed component (e.g. clone 2 of a job).
    pub fn index(&self, i: u64) -> SeedTree {
        SeedTree {
            seed: splitmix64(
                self.seed
                    .wrapping_add(splitmix64(i ^ 0x5851_F42D_4C95_7F2D)),
            ),
        }
    }

    /// A random stream seeded from this node.
    pub fn stream(&self) -> RngStream {
        RngStream::from_seed_u64(self.seed)
    }
}

/// A fast, reproducible random stream: xoshiro256++, seeded as `rand_xoshiro` seeds it
/// (SplitMix64), with its four words held here so that a drive's state file can carry them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RngStream {
    s: [u64; 4],
}

crate::impl_state!(RngStream { s } check RngStream::check_loaded);

impl RngStream {
    /// xoshiro never reaches the all-zero state (it would draw zeros for ever: every
    /// command the same time, every random choice the first), so a file holding it is forged.
    fn check_loaded(&self) -> Result<(), String> {
        if self.s == [0; 4] {
            return Err(
                "a random stream's state is all zeros (xoshiro256++ never reaches it)".into(),
            );
        }
        Ok(())
    }

    pub fn from_seed_u64(seed: u64) -> Self {
        let mut bytes = [0u8; 32];
        rand_xoshiro::SplitMix64::seed_from_u64(seed).fill_bytes(&mut bytes);
        let mut s = [0u64; 4];
        for (word, chunk) in s.iter_mut().zip(bytes.chunks_exact(8)) {
            *word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        }
        if s == [0; 4] {
            // xoshiro's one forbidden state; rand_xoshiro reseeds it the same way.
            return Self::from_seed_u64(0);
        }
        Self { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, n)` without modulo bias worth measuring (Lemire's multiply-shift).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// An exponentially distributed duration of mean `mean_ns`, in integer arithmetic (the
    /// same on every platform, unlike a floating-point logarithm): -log2 of a uniform draw
    /// is its leading zero count plus -log2 of the mantissa in [1/2, 1), taken from a
    /// quadratic; times ln 2 it is an exponential of mean one. Capped at 64 ln 2 (44) means.
    #[inline]
    pub fn exponential_ns(&mut self, mean_ns: u64) -> u64 {
        if mean_ns == 0 {
            return 0;
        }
        let r = self.next_u64();
        let lz = u64::from(r.leading_zeros());
        // The 10 bits after the leading one: the mantissa's position in [1/2, 1).
        let frac = if lz >= 63 { 0 } else { (r << (lz + 1)) >> 54 };
        // -log2 in units of 1/1024, with log2(1 + f) ~ f + 0.34 f (1 - f) (within 0.01);
        // ln 2 = 710/1024 (0.6934).
        let log2_1024 = lz * 1024 + 1024 - frac - ((frac * (1024 - frac) * 348) >> 20);
        ((mean_ns as u128 * log2_1024 as u128 * 710) >> 20) as u64
    }

    /// A controller's time for one command whose mean is `mean_ns`: three quarters fixed,
    /// one quarter exponential. Firmware's path per command varies (a map lookup that
    /// misses the controller's SRAM, arbitration between queues, another core's work on a
    /// shared lock), so no two commands take the same time; the mean is what a preset's
    /// `command_overhead` states. Decoding a page's data is the media's draw, not this.
    #[inline]
    pub fn command_ns(&mut self, mean_ns: u64) -> u64 {
        let varying = mean_ns / 4;
        mean_ns - varying + self.exponential_ns(varying)
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[inline]
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// FNV-1a: a stable hash (std's hasher is randomised per process and must not be used here).
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The all-zero state is refused at load, naming the stream; a drawn-from one loads.
    #[test]
    fn a_forged_all_zero_stream_is_refused_at_load() {
        use crate::state::reload_into;
        let mut drawn = RngStream::from_seed_u64(3);
        drawn.next_u64();
        let mut into = RngStream::from_seed_u64(9);
        reload_into(&drawn, &mut into).unwrap();
        assert_eq!(into, drawn);
        let zero = RngStream { s: [0; 4] };
        let e = reload_into(&zero, &mut into).unwrap_err().to_string();
        assert!(e.contains("random stream's state is all zeros"), "{e}");
    }

    #[test]
    fn the_stream_is_rand_xoshiros_xoshiro256plusplus() {
        use rand_xoshiro::Xoshiro256PlusPlus;
        for seed in [0, 1, 42, u64::MAX] {
            let mut ours = RngStream::from_seed_u64(seed);
            let mut theirs = Xoshiro256PlusPlus::seed_from_u64(seed);
            for _ in 0..1000 {
                assert_eq!(ours.next_u64(), theirs.next_u64());
            }
        }
    }

    #[test]
    fn streams_are_reproducible_and_independent() {
        let t = SeedTree::new(42);
        let a: Vec<u64> = (0..4)
            .map({
                let mut s = t.child("job/0").stream();
                move |_| s.next_u64()
            })
            .collect();
        let mut s2 = SeedTree::new(42).child("job/0").stream();
        assert_eq!(a, (0..4).map(|_| s2.next_u64()).collect::<Vec<_>>());
        let mut s3 = t.child("job/1").stream();
        assert_ne!(a[0], s3.next_u64());
        assert_ne!(t.index(0), t.index(1));
    }

    #[test]
    fn exponential_has_its_mean_and_a_tail() {
        let mut s = RngStream::from_seed_u64(3);
        let n = 200_000u64;
        let draws: Vec<u64> = (0..n).map(|_| s.exponential_ns(1_000)).collect();
        let mean = draws.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 1_000.0).abs() < 30.0, "{mean}");
        // P(X > 4.6 means) = 1% for an exponential.
        let over = draws.iter().filter(|&&d| d > 4_605).count() as f64 / n as f64;
        assert!((over - 0.01).abs() < 0.002, "{over}");
        assert_eq!(s.exponential_ns(0), 0);
    }

    #[test]
    fn below_stays_in_range() {
        let mut s = RngStream::from_seed_u64(1);
        for n in [1u64, 2, 3, 7, 1000, u64::MAX] {
            for _ in 0..1000 {
                assert!(s.below(n) < n);
            }
        }
        let mut s = RngStream::from_seed_u64(9);
        let mean = (0..100_000).map(|_| s.unit_f64()).sum::<f64>() / 100_000.0;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
