//! `flashlab devices describe`: a drive's keys with value and provenance, grouped by kind,
//! and its validation status, as text and JSON; bad input refused with exit 2.

mod common;
use common::{flashlab, stderr, stdout};

#[test]
fn describe_groups_the_keys_by_provenance_and_shows_the_validation() {
    let o = flashlab(&["devices", "describe", "samsung-pm981a-256gb"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("samsung-pm981a-256gb (presets/samsung-pm981a-256gb.toml)\n"),
        "{text}"
    );
    let keys_line = text.lines().find(|l| l.starts_with("keys: ")).unwrap();
    // The counts per kind add up to the keys.
    let (total, counts) = keys_line["keys: ".len()..].split_once(' ').unwrap();
    let sum: usize = counts
        .trim_matches(['(', ')'])
        .split(", ")
        .map(|c| c.rsplit(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(sum, total.parse::<usize>().unwrap(), "{keys_line}");
    assert!(text.contains("\nfitted ("), "{text}");
    assert!(
        text.contains("  nand.independent_plane_reads = false  fitted: 240K IOPS"),
        "{text}"
    );
    assert!(
        text.contains("\ncap (1):\n  controller.max_iops = 500000  cap: "),
        "{text}"
    );
    assert!(!text.contains("no provenance"), "every preset key has one");
    assert!(
        text.contains("independent rows: 8 passing, 1 failing (known misses)"),
        "{text}"
    );
    assert!(
        text.contains("on workstation-raid0: published 16,700 MB/s"),
        "rows on a system built of the drive: {text}"
    );
    assert!(text.contains("calibrated to (jobs/validation/fitted.toml): 6 figures"));
}

#[test]
fn a_set_key_shows_as_set_on_the_command_line_and_json_carries_the_same() {
    let o = flashlab(&[
        "devices",
        "describe",
        "tiny-test-1gb",
        "--set",
        "nand.t_read=70us",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let keys = j["keys"].as_array().unwrap();
    let t_read = keys.iter().find(|k| k["key"] == "nand.t_read").unwrap();
    assert_eq!(t_read["value"], "\"70us\"");
    assert_eq!(t_read["origin"], "command_line");
    let cell = keys.iter().find(|k| k["key"] == "nand.cell").unwrap();
    assert_eq!(cell["origin"], "recorded");
    assert!(cell["kind"].is_string(), "{cell}");
    assert_eq!(j["counts"]["set on the command line"], 1);
    let counted: u64 = j["counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(counted as usize, keys.len());
    assert_eq!(j["validation"]["rows"], 0, "no row runs on the tiny drive");
}

#[test]
fn bad_input_is_refused_naming_what_is_valid() {
    let o = flashlab(&["devices", "describe", "no-such-drive"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("tiny-test-1gb"), "{}", stderr(&o));
    let o = flashlab(&[
        "devices",
        "describe",
        "workstation-raid0",
        "--set",
        "nand.t_read=70us",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--set changes an SSD's keys"),
        "{}",
        stderr(&o)
    );
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("devices-bad-provenance.toml");
    std::fs::write(
        &file,
        "name = \"x\"\n[nand]\ncell = \"tlc\"\nchannels = 2\ndies_per_channel = 1\n\
         blocks_per_plane = 256\npages_per_block = 192\npage_size = \"16KiB\"\n\
         [provenance]\n\"nand.channels\" = { kind = \"hearsay\", source = \"x\" }\n",
    )
    .unwrap();
    let o = flashlab(&["devices", "describe", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("devices-bad-provenance.toml:10: provenance of `nand.channels`"),
        "{e}"
    );
    assert!(e.contains("unknown kind \"hearsay\""), "{e}");
    // And `devices` alone still lists.
    let o = flashlab(&["devices"]);
    assert!(stdout(&o).starts_with("drives:\n"), "{}", stdout(&o));
}

#[test]
fn systems_and_their_drives_describe_their_keys_and_rows() {
    let o = flashlab(&["devices", "describe", "workstation-raid0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("  raid.array.level = 0  "),
        "a system's keys are dotted to the component: {text}"
    );
    assert!(text.contains("2 independent rows: 2 passing"), "{text}");
    // A run of several systems gives each row to its own device (`series`).
    let o = flashlab(&["devices", "describe", "toshiba-dt01aca200-2tb"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("  rpm = 7200  Toshiba DT01ACA datasheet"),
        "{text}"
    );
    assert!(
        text.contains("5 independent rows: 2 passing, 3 failing"),
        "{text}"
    );
    let o = flashlab(&["devices", "describe", "optane-16gb-hdd-2tb"]);
    let text = stdout(&o);
    assert!(
        text.contains("2 independent rows: 0 passing, 2 failing"),
        "{text}"
    );
    assert!(!text.contains("on optane-32gb-hdd-2tb"), "{text}");
}
