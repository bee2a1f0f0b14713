//! Forged drive states: a real state of a small drive with fields rewritten and its checksum
//! made valid again, as someone could hand over. Loading one must end in a drive that runs
//! or in a refusal, never a panic or a loop (`docs/state.md`, "What loading checks"). The
//! fuzz target `forged_state` and the unit test below drive [`load_forged`].

use std::sync::OnceLock;

use flashlab_engine::state::checksum_of;
use flashlab_engine::{BlockDevice, IoRequest, SeedTree};

use crate::{DeviceConfig, Ssd};

/// Bytes of one edit in [`load_forged`]'s input: offset (u32), how (u8), value (u64).
pub const EDIT_BYTES: usize = 13;

/// The drive forgeries start from: `tiny-test-1gb` after 3000 writes of 4 KiB to 1 MiB over
/// the whole drive (every map, list and queue in use), and its saved state.
fn base() -> &'static (DeviceConfig, Vec<u8>) {
    static BASE: OnceLock<(DeviceConfig, Vec<u8>)> = OnceLock::new();
    BASE.get_or_init(|| {
        let config = crate::load_device_config("tiny-test-1gb", &[]).expect("a preset");
        let mut ssd = Ssd::new(&config, SeedTree::new(11)).expect("builds");
        let cap = ssd.capacity_bytes();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut now = 0;
        for i in 0..3000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 4096u64 << ((x >> 60) % 9);
            let off = ((x >> 8) % (cap / 4096)) * 4096;
            let off = off.min(cap - len);
            let req = if i % 5 == 4 {
                IoRequest::trim(off, len)
            } else {
                IoRequest::write(off, len)
            };
            if let Ok(c) = ssd.submit(now, &req) {
                now = now.max(c.done_ns.saturating_sub(50_000));
            }
            now += 2_000;
        }
        let mut bytes = Vec::new();
        ssd.save_state(&mut bytes, now).expect("saves");
        (config, bytes)
    })
}

/// The base state's length (for choosing offsets).
pub fn base_len() -> usize {
    base().1.len()
}

/// The base state with the edits `data` describes ([`EDIT_BYTES`] each: an offset into the
/// state, modulo its length; a width of 1, 2, 4 or 8 bytes and a value kind; the value), its
/// checksum recomputed.
pub fn forge(data: &[u8]) -> Vec<u8> {
    let mut bytes = base().1.clone();
    let body = bytes.len() - 8;
    for e in data.chunks_exact(EDIT_BYTES) {
        let off = u32::from_le_bytes(e[0..4].try_into().expect("4 bytes")) as usize;
        let how = e[4];
        let v = u64::from_le_bytes(e[5..13].try_into().expect("8 bytes"));
        let width = 1usize << (how & 3);
        let value = match (how >> 2) % 6 {
            0 => v,
            1 => v % 64,
            2 => u64::MAX - v % 4,
            3 => 1 << (v % 64),
            4 => (1 << 62) + v % 4 - 1,
            _ => v % 0x4_0000,
        };
        let at = off % (body - width + 1);
        bytes[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
    }
    let sum = checksum_of(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
    bytes
}

/// Loads the forgery `data` describes ([`forge`]); a drive that loads runs 200 reads,
/// writes and trims from its clock. Returns whether it loaded. A panic or a loop here is a
/// state the loader should have refused.
pub fn load_forged(data: &[u8]) -> bool {
    let (config, _) = base();
    let bytes = forge(data);
    let Ok((mut ssd, clock)) = Ssd::load_state(config, &bytes[..], bytes.len() as u64) else {
        return false;
    };
    let cap = ssd.capacity_bytes();
    let mut now = clock;
    for i in 0..200u64 {
        let off = (i * 7919 * 4096) % cap;
        let req = match i % 3 {
            0 => IoRequest::read(off, 4096),
            1 => IoRequest::write(off, 16384.min(cap - off)),
            _ => IoRequest::trim(off, 4096),
        };
        if let Ok(c) = ssd.submit(now, &req) {
            now = now.max(c.done_ns.saturating_sub(20_000));
        }
        now += 1_000;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 400 forgeries of one to four edits each, from a fixed stream: every one loads and
    /// runs, or is refused; none panics. Before loading checked what the bytes mean, some
    /// panicked (an index out of bounds in the FTL's read path) and most loaded impossible
    /// maps.
    #[test]
    fn forged_states_load_and_run_or_are_refused() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut refused = 0;
        for case in 0..400 {
            let edits = 1 + next() % 4;
            let mut data = Vec::new();
            for _ in 0..edits {
                data.extend_from_slice(&(next() as u32).to_le_bytes());
                data.push(next() as u8);
                data.extend_from_slice(&next().to_le_bytes());
            }
            let loaded = std::panic::catch_unwind(|| load_forged(&data))
                .unwrap_or_else(|_| panic!("forgery {case} panicked: {data:02x?}"));
            refused += usize::from(!loaded);
        }
        assert!(refused > 100, "only {refused} of 400 forgeries refused");
    }

    /// A clock past 2^62 ns (2^64 − 1 looped for ever in a channel's bookkeeping) is refused.
    #[test]
    fn a_clock_past_the_limit_is_refused() {
        let (config, bytes) = base();
        // The header: magic, version, kind length and "drive", configuration hash, seed.
        let at = 8 + 4 + 1 + 5 + 8 + 8;
        for clock in [u64::MAX, (1 << 62) + 1] {
            let mut b = bytes.clone();
            b[at..at + 8].copy_from_slice(&clock.to_le_bytes());
            let body = b.len() - 8;
            let sum = checksum_of(&b[..body]);
            b[body..].copy_from_slice(&sum.to_le_bytes());
            let e = Ssd::load_state(config, &b[..], b.len() as u64)
                .err()
                .unwrap_or_else(|| panic!("a clock of {clock} ns loaded"));
            assert!(e.to_string().contains("2^62"), "{e}");
        }
    }
}
