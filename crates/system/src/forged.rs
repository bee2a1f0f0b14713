//! Forged system states: a real state of a small system with fields rewritten and its
//! checksum made valid again ([`flashlab_device::forged::forge_bytes`]). Loading one must end
//! in a system that runs or in a refusal, never a panic or a loop (`docs/state.md`). The
//! fuzz target `forged_state` and the unit test below drive [`load_forged`].

use std::sync::OnceLock;

use flashlab_device::forged::forge_bytes;
use flashlab_engine::{BlockDevice, IoRequest, SeedTree};

use crate::{load_system_config, parse_system_config, System, SystemConfig};

/// Systems forgeries start from: 0 a hard disk alone (`hdd-2tb`); 1 an XPoint cache in
/// front of a hard disk (`optane-16gb-hdd-2tb`); 2 a RAID 5 of three `tiny-test-1gb`
/// drives with a host write-back cache, two of them behind a shared link, one member failed
/// and rebuilding.
pub const SYSTEM_BASES: usize = 3;

const RAID_BEHIND_A_LINK: &str = r#"
name = "forged-raid"
description = "RAID 5 of three tiny drives, two behind a shared link, with a host cache"

[drive.a]
preset = "tiny-test-1gb"
[drive.b]
preset = "tiny-test-1gb"
[drive.c]
preset = "tiny-test-1gb"

[link.up]
kind = "pcie-gen4-x4"
latency = "500ns"
devices = ["b", "c"]

[raid.array]
level = 5
chunk = "64KiB"
members = ["a", "b", "c"]
parity = "auto"
cpu_per_io = "4us"
cpu_threads = 1
background_rate = "200MB/s"
[raid.array.host_cache]
size = "8MiB"
plp = false
bandwidth = "10GB/s"
"#;

fn config(kind: usize) -> SystemConfig {
    match kind {
        0 => load_system_config("hdd-2tb"),
        1 => load_system_config("optane-16gb-hdd-2tb"),
        _ => parse_system_config("forged-raid.toml", RAID_BEHIND_A_LINK),
    }
    .expect("a valid system")
}

/// `n` I/Os from `now` over the first 4 GB (or the whole system if smaller): reads and
/// writes of 4 KiB to 256 KiB, a few repeated so the cache holds lines, and flushes.
fn workload(sys: &mut System, n: u64, mut now: u64, seed: u64) -> u64 {
    let span = sys.capacity_bytes().min(4_000_000_000) / 4096;
    let mut x = seed;
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 4096u64 << ((x >> 60) % 7);
        let block = if i % 4 == 0 {
            (x >> 8) % 64
        } else {
            (x >> 8) % span
        };
        let off = (block * 4096).min((span * 4096).saturating_sub(len));
        let req = match i % 9 {
            8 => IoRequest::flush(),
            k if k % 2 == 0 => IoRequest::read(off, len),
            _ => IoRequest::write(off, len),
        };
        if let Ok(c) = sys.submit(now, &req) {
            now = now.max(c.done_ns.saturating_sub(100_000));
        }
        now += 5_000;
    }
    now
}

/// Base `kind` ([`SYSTEM_BASES`]): its configuration and a saved state after 2000 I/Os.
fn base(kind: usize) -> &'static (SystemConfig, Vec<u8>) {
    static BASES: [OnceLock<(SystemConfig, Vec<u8>)>; SYSTEM_BASES] =
        [const { OnceLock::new() }; SYSTEM_BASES];
    BASES[kind].get_or_init(|| {
        let cfg = config(kind);
        let mut sys = System::build(&cfg, SeedTree::new(5)).expect("builds");
        let mut now = workload(&mut sys, 1000, 0, 0x2545_F491_4F6C_DD1D);
        if let Some(raid) = sys.raid_mut("array") {
            raid.fail_member(1).expect("a RAID 5 survives one failure");
            raid.start_rebuild(now, 1).expect("rebuilds");
        }
        now = workload(&mut sys, 1000, now, 0x9E37_79B9_7F4A_7C15);
        let mut bytes = Vec::new();
        sys.save_state(&mut bytes, now).expect("saves");
        (cfg, bytes)
    })
}

/// Loads the forgery of base `kind` that `data` describes ([`forge_bytes`]); a system that
/// loads runs 200 I/Os from its clock and reports its counters. Returns whether it loaded.
pub fn load_forged(kind: usize, data: &[u8]) -> bool {
    let (cfg, bytes) = base(kind % SYSTEM_BASES);
    let bytes = forge_bytes(bytes, data);
    let Ok((mut sys, clock)) = System::load_state(cfg, &bytes[..], bytes.len() as u64) else {
        return false;
    };
    workload(&mut sys, 200, clock, 7919);
    let _ = sys.counters_json();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Forgeries of each base system, 40 each of one to three edits: every one loads and
    /// runs, or is refused; none panics. The bases load as saved.
    #[test]
    fn forged_system_states_load_and_run_or_are_refused() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for kind in 0..SYSTEM_BASES {
            assert!(load_forged(kind, &[]), "base {kind} does not load");
            let mut refused = 0;
            for case in 0..40 {
                let mut data = Vec::new();
                for _ in 0..1 + next() % 3 {
                    data.extend_from_slice(&(next() as u32).to_le_bytes());
                    data.push(next() as u8);
                    data.extend_from_slice(&next().to_le_bytes());
                }
                let loaded =
                    std::panic::catch_unwind(|| load_forged(kind, &data)).unwrap_or_else(|_| {
                        panic!("forgery {case} of system {kind} panicked: {data:02x?}")
                    });
                refused += usize::from(!loaded);
            }
            assert!(refused > 0, "system {kind}: no forgery refused");
        }
    }
}
