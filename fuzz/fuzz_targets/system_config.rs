//! Any bytes given to the storage-system description parser must give a configuration or a
//! typed error naming the file, never a panic.
//! Run with `cargo fuzz run system_config` from the repository root (docs/fuzzing.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // Only parsed and checked: building a system allocates its drives' models, which the
    // parser's own limits bound but which would make each input cost seconds.
    let _ = flashlab_system::parse_system_config("fuzz.toml", &text);
});
