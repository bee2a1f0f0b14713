//! A state someone forged: a real state of a small drive or system with fields rewritten and
//! its checksum made valid again. Loading it must give a device that runs 200 I/Os, or a
//! refusal; never a panic, an overflow or a loop (`flashlab_device::forged`,
//! `flashlab_system::forged`). The input's length modulo the edit size picks the base: the
//! drives (plain, zoned, FDP, power-capped and throttling), then the systems (a hard disk,
//! an XPoint cache in front of one, a RAID 5 behind a shared link).
//! Run with `cargo fuzz run forged_state` from the repository root (docs/fuzzing.md).
#![no_main]

use flashlab_device::forged::{DRIVE_BASES, EDIT_BYTES};
use flashlab_system::forged::SYSTEM_BASES;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let kind = (data.len() % EDIT_BYTES) % (DRIVE_BASES + SYSTEM_BASES);
    if kind < DRIVE_BASES {
        flashlab_device::forged::load_forged(kind, data);
    } else {
        flashlab_system::forged::load_forged(kind - DRIVE_BASES, data);
    }
});
