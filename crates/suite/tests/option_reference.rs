//! docs/suite-options.md is the suites' option definitions rendered: it cannot name an option,
//! a default or a meaning the command does not have. `FLASHLAB_UPDATE_DOCS=1` rewrites it.

use std::path::PathBuf;

use flashlab_suite::{option_reference, option_table, options_from_pairs, options_of, OptionScope};

fn page() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/suite-options.md")
}

#[test]
fn the_reference_page_is_the_definitions() {
    let want = option_reference();
    if std::env::var_os("FLASHLAB_UPDATE_DOCS").is_some() {
        std::fs::write(page(), &want).expect("write docs/suite-options.md");
        return;
    }
    let have = std::fs::read_to_string(page()).expect("read docs/suite-options.md");
    if have != want {
        let first = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "docs/suite-options.md differs from the definitions from line {}: rerun with \
             FLASHLAB_UPDATE_DOCS=1\n have: {:?}\n want: {:?}",
            first + 1,
            have.lines().nth(first),
            want.lines().nth(first)
        );
    }
}

/// The table lists exactly the options the command lets the suite take: the refusal of
/// another suite's option and the table read the same definitions.
#[test]
fn each_suite_table_is_what_the_suite_accepts() {
    for &kind in flashlab_suite::SUITES {
        let table = option_table(kind);
        let mut listed: Vec<String> = table.iter().map(|r| r.long.clone()).collect();
        let mut accepted = options_of(kind);
        listed.sort();
        accepted.sort();
        assert_eq!(listed, accepted, "{}", kind.name());
        for row in &table {
            assert!(
                !row.help.trim().is_empty(),
                "{} --{}",
                kind.name(),
                row.long
            );
            // A default the table shows is one the suite accepts as a value.
            if let (Some(default), Some(_)) = (&row.default, &row.value) {
                options_from_pairs(kind.name(), &[(row.long.clone(), default.clone())])
                    .unwrap_or_else(|e| panic!("{} --{} {default}: {e}", kind.name(), row.long));
            }
        }
        assert!(
            table
                .iter()
                .any(|r| r.scope == OptionScope::Every && r.long == "seed"),
            "{}: --seed",
            kind.name()
        );
    }
}

/// An option of another suite is in neither its table nor its accepted set.
#[test]
fn another_suites_option_is_not_listed() {
    let qos = flashlab_suite::suite("qos").unwrap();
    let wsat = flashlab_suite::suite("wsat").unwrap();
    assert!(option_table(qos).iter().any(|r| r.long == "rwmixread"));
    assert!(!option_table(wsat).iter().any(|r| r.long == "rwmixread"));
    assert!(!option_table(wsat).iter().any(|r| r.long == "runtime"));
    assert!(options_from_pairs("wsat", &[("rwmixread".into(), "50".into())]).is_err());
}
