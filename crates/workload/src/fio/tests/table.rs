//! The option table against fio 3.33: its classes, every fio option known, fio's aliases.

use std::path::Path;

use super::*;

#[test]
fn option_table_lists_classes() {
    let t = option_table();
    for (name, class) in [
        ("bs", OptionClass::Simulated),
        ("ioengine", OptionClass::Simulated),
        ("direct", OptionClass::Accepted),
        ("zonemode", OptionClass::Simulated),
        ("cpus_allowed", OptionClass::Accepted),
        ("continue_on_error", OptionClass::NotSimulated),
        ("buffer_compress_percentage", OptionClass::Simulated),
        ("zero_buffers", OptionClass::Simulated),
        ("buffer_pattern", OptionClass::Simulated),
        ("buffer_compress_chunk", OptionClass::Accepted),
        ("refill_buffers", OptionClass::Accepted),
        ("scramble_buffers", OptionClass::Accepted),
        ("dedupe_percentage", OptionClass::NotSimulated),
    ] {
        assert_eq!(
            t.iter().find(|o| o.name == name).map(|o| o.class),
            Some(class),
            "{name}"
        );
    }
}

/// Every option fio 3.33 lists (`fio --cmdhelp=all`, and the libaio and io_uring engine
/// options) is in the table, as simulated, accepted or refused: none is "unknown".
#[test]
fn every_fio_3_33_option_is_known() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fio-3.33-option-names.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let names: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(names.len() >= 232, "{} names", names.len());
    let unknown: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| find_option(n).is_none())
        .collect();
    assert!(unknown.is_empty(), "unknown to flashlab: {unknown:?}");
}

/// fio 3.33's aliases: every `.alias` field of the `fio_options` table in fio's options.c
/// (alias, then the `.name` of its entry), each checked with `fio --parse-only`; every alias
/// in flashlab's table is one of them.
const FIO_ALIASES: &[(&str, &str)] = &[
    ("readwrite", "rw"),
    ("iodepth_batch_submit", "iodepth_batch"),
    ("iodepth_batch_complete", "iodepth_batch_complete_min"),
    ("io_limit", "io_size"),
    ("fill_fs", "fill_device"),
    ("fileoffset", "offset"),
    ("blocksize", "bs"),
    ("blockalign", "ba"),
    ("blocksize_range", "bsrange"),
    ("blocksize_unaligned", "bs_unaligned"),
    ("nr_files", "nrfiles"),
    ("timeout", "runtime"),
    ("iomem", "mem"),
    ("mem_align", "iomem_align"),
    ("ratemin", "rate_min"),
    ("ratecycle", "rate_cycle"),
    ("wait_for_previous", "stonewall"),
    ("disable_bw", "disable_bw_measurement"),
    ("ss", "steadystate"),
    ("ss_dur", "steadystate_duration"),
    ("ss_ramp", "steadystate_ramp_time"),
    // fio 3.35 on (options.c): the data placement options' older spellings.
    ("data_placement", "dataplacement"),
    ("fdp_pli_select", "plid_select"),
    ("fdp_pli", "plids"),
];

#[test]
fn aliases_are_fios() {
    for (alias, name) in FIO_ALIASES {
        let def = find_option(alias).unwrap_or_else(|| panic!("{alias} unknown"));
        let other = find_option(name).unwrap_or_else(|| panic!("{name} unknown"));
        assert!(
            std::ptr::eq(def, other),
            "{alias} and {name} are one option"
        );
    }
    for def in option_table() {
        for alias in def.aliases {
            // flashlab names iodepth_batch_submit and ba by fio's aliases.
            let known = FIO_ALIASES
                .iter()
                .any(|(a, n)| (a == alias && def.matches(n)) || (n == alias && def.matches(a)));
            assert!(known, "{alias} (of {}) is not a fio alias", def.name);
        }
    }
    // `threads` is the tiobench profile's option, not an alias of `thread`.
    assert_ne!(find_option("threads").map(|o| o.name), Some("thread"));
    assert!(find_option("percentiles").is_none());
}
