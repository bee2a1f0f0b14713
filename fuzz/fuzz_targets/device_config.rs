//! Any bytes given to the drive-description parser, as the TOML file or as a `--set` override,
//! must give a configuration or a typed error, never a panic.
//! Run with `cargo fuzz run device_config` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The first line, when it looks like `key=value`, doubles as a --set override applied to a
    // real preset, so the override path is fuzzed against valid files too.
    let mut overrides = Vec::new();
    if let Some(first) = text.lines().next() {
        if let Some((key, value)) = first.split_once('=') {
            overrides.push((key.trim().to_string(), value.trim().to_string()));
        }
    }
    if let Ok(config) = flashlab_device::parse_device_config("fuzz.toml", &text, &[]) {
        // Deriving the model checks every cross-field rule; it must not panic either.
        let _ = config.describe();
    }
    let _ = flashlab_device::load_device_config(flashlab_device::DEFAULT_DEVICE, &overrides);
});
