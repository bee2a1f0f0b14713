//! Building blocks of random offsets: a memory-free random permutation (fio's random map
//! without the map) and the skewed distributions of `random_distribution=`. All are O(1) per
//! draw and allocate only at construction.

use flashlab_engine::RngStream;

/// A pseudo-random bijection of `[0, n)`: a keyed mixing function over the smallest
/// power-of-two domain holding `n` (at least 4), with cycle walking to stay inside `[0, n)`.
/// Walking `index = 0, 1, ..., n-1` through it visits every block exactly once, in a random
/// order, with no per-block memory.
///
/// Each step is invertible modulo 2^k (`k` the domain's bits): XOR or addition of a key,
/// multiplication by an odd constant (carries move every bit's influence upwards) and
/// `x ^= x >> s` with `s` about k/2 (moves the high bits' influence back down). Four keyed
/// multiply / xorshift rounds (three left pairs of draws measurably uneven on power-of-two
/// sizes); the keys, drawn afresh for every pass, pick the order. The domain is below 2n, so a draw
/// costs fewer than two evaluations on average.
#[derive(Debug, Clone)]
pub(crate) struct Permutation {
    n: u64,
    shift: u32,
    mask: u64,
    keys: [u64; 4],
}

/// Odd multipliers (the finalisers of MurmurHash3 and SplitMix64). Masked to `k` bits they
/// stay odd, so each multiplication is a bijection modulo 2^k.
const MIX: [u64; 3] = [
    0xFF51_AFD7_ED55_8CCD,
    0xC4CE_B9FE_1A85_EC53,
    0x94D0_49BB_1331_11EB,
];

impl Permutation {
    pub(crate) fn new(n: u64, rng: &mut RngStream) -> Self {
        debug_assert!(n > 0);
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let mut p = Self {
            n,
            shift: bits.div_ceil(2),
            mask: u64::MAX >> (64 - bits),
            keys: [0; 4],
        };
        p.rekey(rng);
        p
    }

    /// A fresh order for the next pass.
    pub(crate) fn rekey(&mut self, rng: &mut RngStream) {
        for k in &mut self.keys {
            *k = rng.next_u64() & self.mask;
        }
    }

    /// A bijection of `[0, 2^k)`: only the shifts need their input masked, since the low `k`
    /// bits of a sum or product depend only on the low `k` bits of its operands.
    #[inline]
    fn encrypt(&self, x: u64) -> u64 {
        let (m, s, k) = (self.mask, self.shift, &self.keys);
        let mut x = (x ^ k[0]).wrapping_mul(MIX[0]) & m;
        x ^= x >> s;
        x = x.wrapping_add(k[1]).wrapping_mul(MIX[1]) & m;
        x ^= x >> s;
        x = x.wrapping_add(k[2]).wrapping_mul(MIX[2]) & m;
        x ^= x >> s;
        x = x.wrapping_add(k[3]).wrapping_mul(MIX[0]) & m;
        x ^= x >> s;
        x
    }

    /// The image of `index` (< n); also < n.
    #[inline]
    pub(crate) fn map(&self, index: u64) -> u64 {
        debug_assert!(index < self.n);
        // The domain is below 2n (or 4 for n <= 2), so the walk takes fewer than two steps
        // on average; it ends because `encrypt` permutes the domain and `index` is in range.
        let mut y = self.encrypt(index);
        while y >= self.n {
            y = self.encrypt(y);
        }
        y
    }
}

/// Zipf over ranks `1..=n` with exponent `theta` (fio's `zipf:θ`), drawn by rejection-
/// inversion (Hörmann & Derflinger, 1996): exact for any θ > 0, θ ≠ 1, O(1) expected per
/// draw and no table of size n.
#[derive(Debug, Clone)]
pub(crate) struct Zipf {
    n: f64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    pub(crate) fn new(n: u64, theta: f64) -> Self {
        let mut z = Self {
            n: n as f64,
            exponent: theta,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n + 0.5);
        z.s = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    /// ∫ x^-θ, shifted so H(1) = 0: ((x^(1-θ)) - 1) / (1-θ), computed stably.
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - self.exponent) * lx) * lx
    }

    fn h_integral_inv(&self, y: f64) -> f64 {
        let t = (y * (1.0 - self.exponent)).max(-1.0);
        (ln1p_over_x(t) * y).exp()
    }

    /// A rank in `0..n` (0 is the most popular).
    pub(crate) fn sample(&self, rng: &mut RngStream) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit_f64() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }
}

fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// fio's `pareto:h`: rank = (n-1) · u^(ln h / ln(1-h)), so that a fraction h of the ranks
/// receives a fraction 1-h of the draws (h = 0.2: the 80/20 rule).
#[derive(Debug, Clone)]
pub(crate) struct Pareto {
    n: u64,
    power: f64,
}

impl Pareto {
    pub(crate) fn new(n: u64, h: f64) -> Self {
        Self {
            n,
            power: h.ln() / (1.0 - h).ln(),
        }
    }

    pub(crate) fn sample(&self, rng: &mut RngStream) -> u64 {
        let r = ((self.n - 1) as f64 * rng.unit_f64().powf(self.power)) as u64;
        r.min(self.n - 1)
    }
}

/// `normal:σ`: a bell centred on the middle of the region, σ in percent of the region,
/// wrapping at the ends. The normal deviate is the sum of twelve uniforms minus six, which
/// uses only additions and so gives the same numbers on every platform.
#[derive(Debug, Clone)]
pub(crate) struct Normal {
    n: u64,
    sigma_units: f64,
}

impl Normal {
    pub(crate) fn new(n: u64, sigma_percent: f64) -> Self {
        Self {
            n,
            sigma_units: sigma_percent / 100.0 * n as f64,
        }
    }

    pub(crate) fn sample(&self, rng: &mut RngStream) -> u64 {
        let z: f64 = (0..12).map(|_| rng.unit_f64()).sum::<f64>() - 6.0;
        let x = (self.n / 2) as f64 + z * self.sigma_units;
        (x.floor() as i128).rem_euclid(self.n as i128) as u64
    }
}

/// Zones: (cumulative access threshold in parts per billion, first unit, units).
#[derive(Debug, Clone)]
pub(crate) struct Zones {
    zones: Vec<(u64, u64, u64)>,
}

pub(crate) const PPB: u64 = 1_000_000_000;

impl Zones {
    /// `zones`: (percent of accesses, first unit, number of units).
    pub(crate) fn new(zones: &[(f64, u64, u64)]) -> Self {
        let mut cum = 0.0;
        let mut out = Vec::with_capacity(zones.len());
        for &(pct, start, len) in zones {
            cum += pct;
            out.push(((cum / 100.0 * PPB as f64).round() as u64, start, len));
        }
        if let Some(last) = out.last_mut() {
            last.0 = PPB;
        }
        Self { zones: out }
    }

    pub(crate) fn sample(&self, rng: &mut RngStream) -> u64 {
        let r = rng.below(PPB);
        let &(_, start, len) = self
            .zones
            .iter()
            .find(|z| r < z.0 && z.2 > 0)
            .unwrap_or_else(|| {
                self.zones
                    .iter()
                    .rev()
                    .find(|z| z.2 > 0)
                    .unwrap_or(&self.zones[0])
            });
        start + rng.below(len.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection_for_awkward_sizes() {
        let mut rng = RngStream::from_seed_u64(7);
        for n in [1u64, 2, 3, 5, 17, 64, 100, 1000, 4097] {
            let p = Permutation::new(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let y = p.map(i);
                assert!(y < n);
                assert!(!seen[y as usize], "n={n}: {y} twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn permutation_order_is_not_the_identity() {
        let mut rng = RngStream::from_seed_u64(1);
        let p = Permutation::new(1 << 16, &mut rng);
        let fixed = (0..1u64 << 16).filter(|&i| p.map(i) == i).count();
        assert!(fixed < 16, "{fixed} fixed points");
    }

    /// Chi-square of the pairs `(order(i), order(i + lag))` over a `grid` × `grid` table of
    /// equal slices of `[0, n)`, for `i` in `0..n - lag`: a random order fills every cell
    /// alike, one with structure between draws crowds some cells.
    fn pair_chi2(n: u64, lag: u64, grid: u64, order: impl Fn(u64) -> u64) -> f64 {
        let mut cells = vec![0u64; (grid * grid) as usize];
        for i in 0..n - lag {
            let (a, b) = (order(i) * grid / n, order(i + lag) * grid / n);
            cells[(a * grid + b) as usize] += 1;
        }
        chi2(&cells)
    }

    /// Chi-square of draws `0..n / 8` of `order` over 64 equal slices of `[0, n)`: the start
    /// of a pass must already cover the device evenly.
    fn prefix_chi2(n: u64, order: impl Fn(u64) -> u64) -> f64 {
        let mut cells = vec![0u64; 64];
        for i in 0..n / 8 {
            cells[(order(i) * 64 / n) as usize] += 1;
        }
        chi2(&cells)
    }

    /// Chi-square of the low 4 bits of consecutive draws (16 × 16 cells): units sharing a
    /// die or channel stripe must not follow each other in a pattern.
    fn low_bits_chi2(n: u64, order: impl Fn(u64) -> u64) -> f64 {
        let mut cells = vec![0u64; 256];
        for i in 0..n - 1 {
            cells[((order(i) & 15) * 16 + (order(i + 1) & 15)) as usize] += 1;
        }
        chi2(&cells)
    }

    fn chi2(cells: &[u64]) -> f64 {
        let total: u64 = cells.iter().sum();
        let expected = total as f64 / cells.len() as f64;
        cells
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    }

    /// Bounds about six standard deviations above a random order's mean: (g-1)^2 = 225
    /// degrees of freedom for the pair tables (both margins are fixed by the bijection), 63
    /// for the prefix.
    const PAIR_CHI2_MAX: f64 = 350.0;
    const PREFIX_CHI2_MAX: f64 = 130.0;

    #[test]
    fn permutation_order_passes_serial_checks() {
        for n in [1u64 << 16, 100_003, 1 << 20] {
            for seed in 0..4 {
                let mut rng = RngStream::from_seed_u64(seed);
                let mut p = Permutation::new(n, &mut rng);
                for pass in 0..2 {
                    let f = |i| p.map(i);
                    for lag in [1, 2, 64] {
                        let c = pair_chi2(n, lag, 16, f);
                        assert!(
                            c < PAIR_CHI2_MAX,
                            "n={n} seed={seed} pass={pass} lag={lag}: {c}"
                        );
                    }
                    let c = prefix_chi2(n, f);
                    assert!(
                        c < PREFIX_CHI2_MAX,
                        "n={n} seed={seed} pass={pass} prefix: {c}"
                    );
                    let c = low_bits_chi2(n, f);
                    assert!(
                        c < PAIR_CHI2_MAX,
                        "n={n} seed={seed} pass={pass} low bits: {c}"
                    );
                    p.rekey(&mut rng);
                }
            }
        }
    }

    /// The checks above reject orders with visible structure.
    #[test]
    fn serial_checks_reject_the_identity_and_a_stride() {
        let n = 100_003;
        let identity = |i: u64| i;
        assert!(pair_chi2(n, 1, 16, identity) > PAIR_CHI2_MAX);
        assert!(prefix_chi2(n, identity) > PREFIX_CHI2_MAX);
        assert!(low_bits_chi2(n, identity) > PAIR_CHI2_MAX);
        // A stride coprime to n is a bijection too, and covers the prefix evenly.
        let stride = |i: u64| i * 7_919 % n;
        assert!(prefix_chi2(n, stride) < PREFIX_CHI2_MAX);
        assert!(pair_chi2(n, 1, 16, stride) > PAIR_CHI2_MAX);
        assert!(low_bits_chi2(n, stride) > PAIR_CHI2_MAX);
    }

    /// Successive passes are different orders.
    #[test]
    fn permutation_rekey_changes_the_order() {
        let mut rng = RngStream::from_seed_u64(4);
        let mut p = Permutation::new(10_000, &mut rng);
        let first: Vec<u64> = (0..10_000).map(|i| p.map(i)).collect();
        p.rekey(&mut rng);
        let same = (0..10_000)
            .filter(|&i| p.map(i) == first[i as usize])
            .count();
        assert!(same < 20, "{same} positions unchanged");
    }

    #[test]
    fn zipf_matches_the_exact_distribution() {
        let n = 1000u64;
        for theta in [0.8, 1.2, 2.0] {
            let z = Zipf::new(n, theta);
            let mut rng = RngStream::from_seed_u64(3);
            let draws = 200_000;
            let mut top10 = 0u64;
            let mut first = 0u64;
            for _ in 0..draws {
                let k = z.sample(&mut rng);
                assert!(k < n);
                top10 += u64::from(k < n / 10);
                first += u64::from(k == 0);
            }
            let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-theta)).collect();
            let total: f64 = w.iter().sum();
            let exp_top10 = w[..(n / 10) as usize].iter().sum::<f64>() / total;
            let got = top10 as f64 / draws as f64;
            assert!(
                (got - exp_top10).abs() < 0.01,
                "θ={theta}: top decile {got} vs {exp_top10}"
            );
            let got_first = first as f64 / draws as f64;
            assert!(
                (got_first - w[0] / total).abs() < 0.01,
                "θ={theta}: rank 1 {got_first}"
            );
        }
    }

    #[test]
    fn pareto_follows_the_h_rule() {
        let p = Pareto::new(10_000, 0.2);
        let mut rng = RngStream::from_seed_u64(5);
        let hot = (0..100_000).filter(|_| p.sample(&mut rng) < 2_000).count();
        assert!((hot as f64 / 100_000.0 - 0.8).abs() < 0.01, "{hot}");
    }

    #[test]
    fn normal_is_centred_with_the_given_spread() {
        let d = Normal::new(10_000, 10.0);
        let mut rng = RngStream::from_seed_u64(9);
        let xs: Vec<f64> = (0..100_000).map(|_| d.sample(&mut rng) as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        assert!((mean - 5_000.0).abs() < 20.0, "{mean}");
        assert!((sd - 1_000.0).abs() < 20.0, "{sd}");
    }
}
