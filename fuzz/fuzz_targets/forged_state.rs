//! A drive state someone forged: a real state of a small drive with fields rewritten and its
//! checksum made valid again. Loading it must give a drive that runs 200 I/Os, or a refusal;
//! never a panic, an overflow or a loop (`flashlab_device::forged`).
//! Run with `cargo fuzz run forged_state` from the repository root (docs/fuzzing.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    flashlab_device::forged::load_forged(data);
});
