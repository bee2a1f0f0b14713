//! Simulated time: integer nanoseconds since the start of a run. No wall clock below the CLI.

/// Nanoseconds since the start of the simulation.
pub type SimTime = u64;

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_S: u64 = 1_000_000_000;

/// Time to move `bytes` over a link of `bytes_per_s`, rounded up so that a transfer never
/// takes zero time and bandwidth is never exceeded.
#[inline]
pub fn transfer_ns(bytes: u64, bytes_per_s: u64) -> u64 {
    debug_assert!(bytes_per_s > 0);
    // Transfers under ~18 GB fit 64-bit arithmetic; a 128-bit division is a slow library call.
    match bytes.checked_mul(NS_PER_S) {
        Some(n) => n.div_ceil(bytes_per_s),
        None => ((bytes as u128 * NS_PER_S as u128).div_ceil(bytes_per_s as u128)) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_rounds_up() {
        assert_eq!(transfer_ns(4096, 4096 * 1_000_000_000), 1);
        assert_eq!(transfer_ns(1, 3), 333_333_334);
        assert_eq!(transfer_ns(1_000_000, 1_000_000_000), 1_000_000);
        // Past the 64-bit product: the 128-bit path gives the same rounding.
        let big = u64::MAX / 1_000;
        assert_eq!(transfer_ns(big, NS_PER_S), big);
        assert_eq!(transfer_ns(big, 3 * NS_PER_S), big.div_ceil(3));
    }
}
