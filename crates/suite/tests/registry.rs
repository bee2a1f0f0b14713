//! The registry: names and lookups, and the entry point's bound on identical drives.

use flashlab_suite::*;

use crate::common::run_suite_drives_with;

#[test]
fn zero_or_too_many_drives_are_a_bad_option() {
    for n in [0, MAX_DRIVES + 1] {
        let e = run_suite_drives_with(
            suite("qos").unwrap(),
            &[],
            n,
            &SuiteOptions::default(),
            &|_, _| {},
        )
        .unwrap_err();
        assert!(e.is_bad_input());
        assert!(e.to_string().contains("drives"), "{e}");
    }
}

#[test]
fn suite_names_round_trip_and_unknown_lists_them() {
    for &k in SUITES {
        assert_eq!(suite(k.name()).unwrap(), k);
        assert!(!k.summary().is_empty(), "{}", k.name());
    }
    let e = suite("four_corners").unwrap_err();
    assert!(e.is_bad_input());
    let msg = e.to_string();
    // Every registered name, in registry order, read from the registry.
    let names: Vec<&str> = SUITES.iter().map(|k| k.name()).collect();
    assert!(names.len() > 20, "{names:?}");
    assert!(msg.contains(&names.join(", ")), "{msg}");
    assert_eq!(suite_names(), names.join(", "));
}
