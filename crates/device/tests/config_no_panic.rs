//! Drive descriptions come from users: any text, any `--set`, must give a configuration or a
//! located error — never a panic. (The cargo-fuzz target `fuzz/fuzz_targets/device_config.rs`
//! explores the same entry points without bounds; this runs in every test pass.)

use flashlab_device::{load_device_config, parse_device_config, DEFAULT_DEVICE};
use proptest::prelude::*;

const TINY: &str = include_str!("../../../presets/tiny-test-1gb.toml");

/// Keys and values that exercise the unit parsers and the cross-field checks.
const KEYS: &[&str] = &[
    "capacity.user",
    "nand.cell",
    "nand.channels",
    "nand.dies_per_channel",
    "nand.planes_per_die",
    "nand.blocks_per_plane",
    "nand.pages_per_block",
    "nand.page_size",
    "nand.channel_rate",
    "nand.t_prog",
    "ftl.iu",
    "ftl.gc_policy",
    "ftl.gc_unit",
    "ftl.host_allocation",
    "slc_cache.dynamic_max_fraction",
    "buffer.size",
    "link.kind",
    "controller.max_iops",
    "controller.compression_granule",
    "sim.scale",
    "nand",
    "nope.key",
];
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "3",
    "64",
    "4294967296",
    "18446744073709551615",
    "1e308",
    "nan",
    "0.5",
    "\"16KiB\"",
    "\"7.68TB\"",
    "\"1.5us\"",
    "\"qlc\"",
    "\"\"",
    "\"10 furlongs\"",
    "true",
    "\"pcie-gen9-x64\"",
    "[1, 2]",
    "{}",
    "\"0B\"",
    "\"512B\"",
    "\"3KiB\"",
    "\"999999PB\"",
    "\"narrowest\"",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_override_gives_config_or_error(k in 0..KEYS.len(), v in 0..VALUES.len()) {
        let overrides = vec![(KEYS[k].to_string(), VALUES[v].to_string())];
        if let Ok(cfg) = load_device_config(DEFAULT_DEVICE, &overrides) {
            let _ = cfg.describe();
        }
        if let Ok(cfg) = parse_device_config("tiny.toml", TINY, &overrides) {
            let _ = cfg.describe();
        }
    }

    #[test]
    fn mutated_files_give_config_or_error(
        cut in 0..TINY.len(),
        insert in proptest::string::string_regex("[a-z_=\\.\"\\[\\]0-9 \\n#KiBMGTus-]{0,24}").unwrap(),
    ) {
        let mut text = TINY.to_string();
        let at = (0..=cut).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        text.insert_str(at, &insert);
        if let Ok(cfg) = parse_device_config("mutated.toml", &text, &[]) {
            let _ = cfg.describe();
        }
    }

    #[test]
    fn random_text_gives_config_or_error(text in "\\PC{0,200}") {
        let _ = parse_device_config("random.toml", &text, &[]);
    }
}

#[test]
fn errors_name_the_place_and_what_is_valid() {
    let err = load_device_config(
        DEFAULT_DEVICE,
        &[("ftl.gc_polcy".into(), "\"greedy\"".into())],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("ftl.gc_polcy"), "{err}");
    assert!(err.contains("gc_policy"), "suggests the nearest key: {err}");

    let text = TINY.replace("t_prog = \"600us\"", "t_prog = \"600 parsecs\"");
    let err = parse_device_config("bad.toml", &text, &[])
        .unwrap_err()
        .to_string();
    let line = TINY.lines().position(|l| l.starts_with("t_prog")).unwrap() + 1;
    assert!(err.starts_with(&format!("bad.toml:{line}:")), "{err}");
    assert!(err.contains("expected a time"), "says what is valid: {err}");
}

#[test]
fn every_preset_file_is_embedded_and_builds_a_drive_model() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .expect("presets directory")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    on_disk.sort();
    let embedded: Vec<String> = flashlab_device::preset_names()
        .into_iter()
        .map(|(n, _)| n.to_string())
        .collect();
    assert_eq!(embedded, on_disk, "presets/ and the embedded list differ");
    for name in &embedded {
        let cfg = load_device_config(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        cfg.resolve().unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
}
