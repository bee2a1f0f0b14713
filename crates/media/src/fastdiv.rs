//! Division of `u32` values by a divisor fixed at construction, without a divide instruction.
//!
//! Address arithmetic (block of a physical IU, unit of a block) divides by geometry values
//! known only at run time, on every I/O; a hardware divide costs tens of cycles. This uses the
//! multiply-high method of Lemire, Kaser and Kurz ("Faster Remainder by Direct Computation",
//! 2019): with `m = floor((2^64 - 1) / d) + 1`, `x / d = (m * x) >> 64` for every 32-bit `x`.

/// A divisor with its precomputed multiplier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastDiv {
    d: u32,
    /// `u64::MAX / d + 1`; 0 for `d == 1` (which would need 2^64), handled apart.
    m: u64,
}

impl FastDiv {
    /// Panics if `d` is 0 (geometry is validated before any divider is made).
    pub const fn new(d: u32) -> FastDiv {
        assert!(d > 0, "division by zero");
        let m = if d == 1 { 0 } else { u64::MAX / d as u64 + 1 };
        FastDiv { d, m }
    }

    #[inline]
    pub const fn divisor(&self) -> u32 {
        self.d
    }

    /// `x / d`.
    #[inline]
    pub const fn div(&self, x: u32) -> u32 {
        if self.m == 0 {
            x
        } else {
            ((self.m as u128 * x as u128) >> 64) as u32
        }
    }

    /// `(x / d, x % d)`.
    #[inline]
    pub const fn div_rem(&self, x: u32) -> (u32, u32) {
        let q = self.div(x);
        (q, x - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_hardware_division() {
        let divisors = [
            1u32, 2, 3, 4, 7, 64, 96, 100, 256, 768, 1_000, 1_536, 65_537,
        ];
        let values = [
            0u32,
            1,
            2,
            3,
            63,
            64,
            65,
            1 << 20,
            999_999,
            u32::MAX - 1,
            u32::MAX,
        ];
        for &d in &divisors {
            let f = FastDiv::new(d);
            assert_eq!(f.divisor(), d);
            for &x in &values {
                assert_eq!(f.div_rem(x), (x / d, x % d), "{x} / {d}");
            }
            // Around multiples of d, where rounding errors would show.
            for k in [1u32, 2, 1_000, u32::MAX / d] {
                let x = k * d;
                for y in [x - 1, x, x.saturating_add(1)] {
                    assert_eq!(f.div(y), y / d, "{y} / {d}");
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_u32_by_any_divisor(x: u32, d in 1u32..) {
            proptest::prop_assert_eq!(FastDiv::new(d).div_rem(x), (x / d, x % d));
        }
    }
}
