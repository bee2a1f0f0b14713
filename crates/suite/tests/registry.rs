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

/// Identical drives are told apart on the progress display as in the report: `NAME#1`,
/// `NAME#2`, each at its own index.
#[test]
fn identical_drives_report_progress_under_their_own_names() {
    let config = flashlab_device::load_device_config("tiny-test-1gb", &[]).unwrap();
    let heard = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let report = run_suite_drives_with(
        suite("qos").unwrap(),
        &[SuiteTarget::Drive(Box::new(config))],
        2,
        &crate::common::short_options(10 * flashlab_engine::NS_PER_MS),
        &|i, p| {
            heard.lock().unwrap().insert((i, p.device.to_string()));
        },
    )
    .unwrap();
    let heard: Vec<(usize, String)> = heard.into_inner().unwrap().into_iter().collect();
    assert_eq!(
        heard,
        [
            (0, "tiny-test-1gb#1".to_string()),
            (1, "tiny-test-1gb#2".to_string())
        ]
    );
    let names: Vec<&str> = report.devices.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(
        names,
        ["tiny-test-1gb#1", "tiny-test-1gb#2", "tiny-test-1gb#all"]
    );
}
