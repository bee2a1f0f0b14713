//! Forged drive states: a real state of a small drive with fields rewritten and its checksum
//! made valid again, as someone could hand over. Loading one must end in a drive that runs
//! or in a refusal, never a panic or a loop (`docs/state.md`, "What loading checks"). The
//! fuzz target `forged_state` and the unit test below drive [`load_forged`].

use std::sync::OnceLock;

use flashlab_engine::state::checksum_of;
use flashlab_engine::{BlockDevice, IoRequest, SeedTree, ZoneOp};

use crate::{DeviceConfig, Ssd};

/// Bytes of one edit in [`load_forged`]'s input: offset (u32), how (u8), value (u64).
pub const EDIT_BYTES: usize = 13;

/// Drives forgeries start from, each `tiny-test-1gb` with what its parts need in use:
/// 0 as it is, 1 zoned (zones empty, open either way, closed and full, at the open and
/// active limits),
/// 2 with FDP (four handles written through), 3 with a power cap and a thermal model hot
/// enough to throttle.
pub const DRIVE_BASES: usize = 4;

/// The `--set` settings of base `kind`.
fn settings(kind: usize) -> Vec<(String, String)> {
    let pairs: &[(&str, &str)] = match kind {
        0 => &[],
        1 => &[
            ("zns.enabled", "true"),
            ("zns.max_open_zones", "3"),
            ("zns.max_active_zones", "5"),
        ],
        2 => &[
            ("fdp.enabled", "true"),
            ("fdp.handles", "4"),
            // Each handle keeps its own reclaim units open: FDP needs more spare.
            ("capacity.user", "900MB"),
            ("buffer.plp", "true"),
            ("slc_cache.dynamic", "false"),
        ],
        _ => &[
            // The controller's 3 W alone hold it at 90 °C: a little media work throttles.
            ("power.states", "[\"6W\"]"),
            ("power.thermal_resistance_c_per_w", "20"),
            ("power.thermal_time_constant", "1s"),
            ("power.throttle_c", "90.6"),
            ("power.resume_c", "90.3"),
            ("power.throttle_power", "3.5W"),
        ],
    };
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A step of a linear congruential stream (the workloads need no quality, only repeats).
fn step(x: &mut u64) -> u64 {
    *x = x
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *x
}

/// `n` I/Os from `now`: writes of 4 KiB to 1 MiB over the whole drive and trims (with
/// placement identifiers on an FDP drive); on a zoned drive appends, reads and zone
/// commands. Returns the time after the last.
fn workload(ssd: &mut Ssd, n: u64, mut now: u64, seed: u64) -> u64 {
    let cap = ssd.capacity_bytes();
    let fdp = ssd.ftl().fdp_enabled();
    let mut x = seed;
    for i in 0..n {
        let r = step(&mut x);
        let len = 4096u64 << ((r >> 60) % 9);
        let done = if let Some(g) = ssd.zones() {
            let zone = ((r >> 8) % u64::from(g.zones.min(8))) as u32;
            let zone_at = u64::from(zone) * g.zone_bytes;
            match i % 11 {
                3 => ssd.zone_command(now, ZoneOp::Close, zone).ok(),
                5 => ssd.zone_command(now, ZoneOp::Open, zone).ok(),
                7 if (r >> 40).is_multiple_of(4) => ssd.zone_command(now, ZoneOp::Reset, zone).ok(),
                8 => ssd.zone_command(now, ZoneOp::Finish, zone).ok(),
                9 => ssd.submit(now, &IoRequest::read(zone_at, 16384)).ok(),
                _ => ssd
                    .zone_append(now, zone, len.min(256 << 10))
                    .ok()
                    .map(|(c, _)| c),
            }
        } else {
            let off = (((r >> 8) % (cap / 4096)) * 4096).min(cap - len);
            let mut req = match i % 5 {
                4 => IoRequest::trim(off, len),
                2 if n < 1000 => IoRequest::read(off, len.min(65536)),
                _ => IoRequest::write(off, len),
            };
            if fdp && req.kind == flashlab_engine::IoKind::Write {
                req.placement = Some(((r >> 20) % 4) as u16);
            }
            ssd.submit(now, &req).ok()
        };
        if let Some(c) = done {
            now = now.max(c.done_ns.saturating_sub(50_000));
        }
        now += 2_000;
    }
    if ssd.zones().is_some() && n >= 1000 {
        // Every zone state at the end: zones 0 and 1 closed for others, 2 and 3 implicitly
        // open, 4 explicitly, at the open and active limits.
        for zone in 0..5 {
            let _ = ssd.zone_command(now, ZoneOp::Reset, zone);
        }
        for zone in 0..4 {
            let _ = ssd.zone_append(now, zone, 4096);
        }
        let _ = ssd.zone_command(now, ZoneOp::Open, 4);
        now += 1_000_000;
    }
    now
}

/// Base `kind` ([`DRIVE_BASES`]): its configuration and a saved state after 3000 I/Os
/// (every map, list and queue in use).
fn base(kind: usize) -> &'static (DeviceConfig, Vec<u8>) {
    static BASES: [OnceLock<(DeviceConfig, Vec<u8>)>; DRIVE_BASES] =
        [const { OnceLock::new() }; DRIVE_BASES];
    BASES[kind].get_or_init(|| {
        let config = crate::load_device_config("tiny-test-1gb", &settings(kind))
            .expect("a preset with valid settings");
        let mut ssd = Ssd::new(&config, SeedTree::new(11)).expect("builds");
        let now = workload(&mut ssd, 3000, 0, 0x9E37_79B9_7F4A_7C15);
        let mut bytes = Vec::new();
        ssd.save_state(&mut bytes, now).expect("saves");
        (config, bytes)
    })
}

/// The base state's length (for choosing offsets).
pub fn base_len(kind: usize) -> usize {
    base(kind % DRIVE_BASES).1.len()
}

/// `base` with the edits `data` describes ([`EDIT_BYTES`] each: an offset into the state,
/// modulo its length; a width of 1, 2, 4 or 8 bytes and a value kind; the value), its
/// checksum recomputed. Bytes after the last whole edit are ignored.
pub fn forge_bytes(base: &[u8], data: &[u8]) -> Vec<u8> {
    let mut bytes = base.to_vec();
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

/// Base `kind`'s state with the edits `data` describes ([`forge_bytes`]).
pub fn forge(kind: usize, data: &[u8]) -> Vec<u8> {
    forge_bytes(&base(kind % DRIVE_BASES).1, data)
}

/// Loads the forgery of base `kind` that `data` describes ([`forge`]); a drive that loads
/// runs 200 I/Os of its base's kind from its clock. Returns whether it loaded. A panic or a
/// loop here is a state the loader should have refused.
pub fn load_forged(kind: usize, data: &[u8]) -> bool {
    let (config, _) = base(kind % DRIVE_BASES);
    let bytes = forge(kind, data);
    let Ok((mut ssd, clock)) = Ssd::load_state(config, &bytes[..], bytes.len() as u64) else {
        return false;
    };
    workload(&mut ssd, 200, clock, 7919);
    // The reports read every counter.
    let _ = ssd.health_log();
    let _ = ssd.counters_json();
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zoned::ZoneState;

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
            let loaded = std::panic::catch_unwind(|| load_forged(0, &data))
                .unwrap_or_else(|_| panic!("forgery {case} panicked: {data:02x?}"));
            refused += usize::from(!loaded);
        }
        assert!(refused > 100, "only {refused} of 400 forgeries refused");
    }

    /// Forgeries of the zoned, FDP and power-capped drives, 60 each: every one loads and
    /// runs its kind's I/Os (zone commands, placement identifiers, a throttling drive), or
    /// is refused; none panics. The bases themselves load.
    #[test]
    fn forged_zoned_fdp_and_thermal_states_load_and_run_or_are_refused() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for kind in 1..DRIVE_BASES {
            let (config, bytes) = base(kind);
            if let Err(e) = Ssd::load_state(config, &bytes[..], bytes.len() as u64) {
                panic!("base {kind} does not load: {e}");
            }
            let mut refused = 0;
            for case in 0..60 {
                let mut data = Vec::new();
                for _ in 0..1 + step(&mut x) % 3 {
                    data.extend_from_slice(&((step(&mut x) >> 32) as u32).to_le_bytes());
                    data.push((step(&mut x) >> 56) as u8);
                    data.extend_from_slice(&step(&mut x).to_le_bytes());
                }
                let loaded =
                    std::panic::catch_unwind(|| load_forged(kind, &data)).unwrap_or_else(|_| {
                        panic!("forgery {case} of base {kind} panicked: {data:02x?}")
                    });
                refused += usize::from(!loaded);
            }
            assert!(refused > 0, "base {kind}: no forgery refused");
        }
        let (config, bytes) = base(1);
        let (ssd, _) = Ssd::load_state(config, &bytes[..], bytes.len() as u64).unwrap();
        let states: Vec<_> = (0..ssd.zones().unwrap().zones)
            .filter_map(|z| ssd.zone_state(z))
            .collect();
        for s in [
            ZoneState::Empty,
            ZoneState::ImplicitlyOpen,
            ZoneState::ExplicitlyOpen,
            ZoneState::Closed,
            ZoneState::Full,
        ] {
            assert!(states.contains(&s), "no zone {s:?} in the zoned base");
        }
        let (config, bytes) = base(3);
        let (ssd, _) = Ssd::load_state(config, &bytes[..], bytes.len() as u64).unwrap();
        let t = ssd.health_log().thermal.unwrap();
        assert!(t.thermal_throttle_transitions > 0, "{t:?}");
    }

    /// A clock past 2^62 ns (2^64 − 1 looped for ever in a channel's bookkeeping) is refused.
    #[test]
    fn a_clock_past_the_limit_is_refused() {
        let (config, bytes) = base(0);
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

    /// A state whose clock was exactly 2^62 ns loaded and ran, and the state it saved was
    /// then refused as corrupt: what would not load is not saved, and what is saved loads.
    #[test]
    fn a_state_at_the_time_limit_saves_only_what_loads() {
        let (config, bytes) = base(0);
        let at = 8 + 4 + 1 + 5 + 8 + 8;
        let mut b = bytes.clone();
        b[at..at + 8].copy_from_slice(&(1u64 << 62).to_le_bytes());
        let body = b.len() - 8;
        let sum = checksum_of(&b[..body]);
        b[body..].copy_from_slice(&sum.to_le_bytes());
        let (mut ssd, clock) = Ssd::load_state(config, &b[..], b.len() as u64).unwrap();
        assert_eq!(clock, 1 << 62);
        let end = workload(&mut ssd, 50, clock, 7);
        let mut out = Vec::new();
        match ssd.save_state(&mut out, end) {
            Ok(_) => {
                Ssd::load_state(config, &out[..], out.len() as u64).unwrap();
            }
            Err(e) => assert!(e.to_string().contains("no state saved"), "{e}"),
        }
        let e = ssd.save_state(Vec::new(), (1 << 62) + 1).unwrap_err();
        assert!(e.to_string().contains("no state saved"), "{e}");
    }
}
