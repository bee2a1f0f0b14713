//! Errors that suggest the fix: "did you mean" for devices and suites, every command-line
//! error in flashlab's form (`flashlab: error: --OPTION ...`, exit 2), and suite options a
//! suite does not read refused by name.

mod common;

const JOB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../jobs/randread-4k-qd32.fio"
);
use common::{flashlab, stderr};

/// `args` fail with exit 2 and one `flashlab: error:` line; that line.
fn refused(args: &[&str]) -> String {
    let out = flashlab(args);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
    assert!(e.starts_with("flashlab: error: "), "{args:?}: {e}");
    assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    e
}

#[test]
fn a_mistyped_device_gets_the_nearest_preset_and_both_kinds_listed() {
    for cmd in [
        &["describe", "samsung-pm981a-265gb"][..],
        &["run", JOB, "--device", "samsung-pm981a-265gb"],
        &["suite", "qos", "--device", "workstation-raid6"],
    ] {
        let e = refused(cmd);
        assert!(e.contains("unknown device"), "{e}");
        assert!(e.contains("drives: crucial-t700-2tb"), "{e}");
        assert!(e.contains("systems (run, suite, serve): hdd-2tb"), "{e}");
    }
    let e = refused(&["describe", "samsung-pm981a-265gb"]);
    assert!(e.contains("(did you mean samsung-pm981a-256gb?)"), "{e}");
    let e = refused(&["suite", "qos", "--device", "workstation-raid6"]);
    assert!(e.contains("(did you mean workstation-raid"), "{e}");
    // Nothing near: no guess.
    let e = refused(&["describe", "zzzzzzzzzzzz"]);
    assert!(!e.contains("did you mean"), "{e}");
}

#[test]
fn a_mistyped_suite_gets_the_nearest_suite() {
    let e = refused(&["suite", "four-corner"]);
    assert!(e.contains("(did you mean four-corners?)"), "{e}");
    assert!(e.contains("valid suites: precondition"), "{e}");
}

#[test]
fn argument_errors_name_the_option_and_its_form() {
    let e = refused(&["suite", "qos", "--depths", "1,x"]);
    assert!(
        e.starts_with("flashlab: error: --depths 'x': not a whole number"),
        "{e}"
    );
    assert!(e.contains("expected queue depths, comma-separated"), "{e}");
    let e = refused(&["suite", "qos", "--output-format", "xml"]);
    assert!(
        e.contains("--output-format 'xml'") && e.contains("one of normal, json, tidy-csv"),
        "{e}"
    );
    let e = refused(&["run", "--seed", "-"]);
    assert!(e.contains("--seed"), "{e}");
    let e = refused(&["suite", "qos", "--bogus"]);
    assert!(e.contains("'--bogus'"), "{e}");
    let e = refused(&["run"]);
    assert!(e.contains("<JOB>"), "{e}");
    // Help is not an error.
    let out = flashlab(&["suite", "--help"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_option_the_suite_does_not_read_is_refused() {
    // The suites that run to a length of their own refuse --runtime; the others read it.
    for suite in [
        "wsat",
        "endurance",
        "recovery",
        "op-sweep",
        "sustained-write",
    ] {
        let e = refused(&["suite", suite, "--runtime", "1s"]);
        assert!(
            e.contains(&format!("--runtime does not apply to suite {suite}")),
            "{e}"
        );
    }
    let e = refused(&["suite", "sustained-write", "--time", "15x"]);
    assert!(e.contains("--time") && e.contains("15m"), "{e}");
}

#[test]
fn a_prefix_of_a_preset_names_the_preset() {
    for cmd in [
        &["describe", "samsung-pm981"][..],
        &["run", JOB, "--device", "samsung-pm981"],
        &["suite", "qos", "--device", "samsung-pm981"],
    ] {
        let e = refused(cmd);
        assert!(e.contains("(did you mean samsung-pm981a-256gb?)"), "{e}");
    }
}

#[test]
fn a_mistyped_fio_value_gets_the_nearest_value() {
    let dir = std::env::temp_dir().join(format!("flashlab-hints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let job = dir.join("typo.fio");
    std::fs::write(&job, "[w]\nrw=randwirte\nbs=4k\nsize=1m\n").unwrap();
    let e = refused(&["run", job.to_str().unwrap(), "--device", "tiny-test-1gb"]);
    assert!(e.contains("typo.fio:2"), "{e}");
    assert!(e.contains("(did you mean randwrite?)"), "{e}");
    assert!(e.contains("randtrimwrite"), "{e}");
    std::fs::write(&job, "[w]\nrw=randwrite\nrate_process=poison\nsize=1m\n").unwrap();
    let e = refused(&["run", job.to_str().unwrap(), "--device", "tiny-test-1gb"]);
    assert!(e.contains("(did you mean poisson?)"), "{e}");
    // A mistyped engine is refused as fio refuses it, not run as an asynchronous one.
    std::fs::write(&job, "[w]\nrw=randwrite\nioengine=libaoi\nsize=1m\n").unwrap();
    let e = refused(&["run", job.to_str().unwrap(), "--device", "tiny-test-1gb"]);
    assert!(e.contains("typo.fio:3"), "{e}");
    assert!(e.contains("(did you mean libaio?)"), "{e}");
    let e = refused(&[
        "fio",
        "--name=w",
        "--rw=randwrite",
        "--ioengine=libaoi",
        "--size=1m",
        "--device=tiny-test-1gb",
    ]);
    assert!(e.contains("(did you mean libaio?)"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_mistyped_output_format_is_named_once_with_the_nearest() {
    let e = refused(&["run", JOB, "--output-format", "jsn"]);
    assert!(
        e.starts_with("flashlab: error: --output-format 'jsn': not an output format (did you mean json?); expected normal, json, json+ or terse"),
        "{e}"
    );
    // The valid formats are listed once.
    assert_eq!(e.matches("terse").count(), 2, "{e}");
    let e = refused(&["run", JOB, "--output-format", "normal,jsn"]);
    assert!(
        e.contains("\"jsn\" is not an output format (did you mean json?)"),
        "{e}"
    );
}

#[test]
fn a_mistyped_value_of_a_listed_choice_gets_the_nearest() {
    let e = refused(&["suite", "qos", "--output-format", "jsn"]);
    assert_eq!(
        e,
        "flashlab: error: --output-format 'jsn': not one of its values; expected one of normal, json, tidy-csv (did you mean json?)\n"
    );
    let e = refused(&["run", JOB, "--progress", "alway"]);
    assert!(
        e.contains("expected one of auto, always, never (did you mean always?)"),
        "{e}"
    );
}

#[test]
fn a_mistyped_option_gets_the_nearest_option() {
    let e = refused(&["suite", "wsat", "--max-round", "3"]);
    assert_eq!(
        e,
        "flashlab: error: unknown option '--max-round' (did you mean --max-rounds?) (`--help` lists the options)\n"
    );
    let e = refused(&["run", JOB, "--devcie", "tiny-test-1gb"]);
    assert!(
        e.contains("unknown option '--devcie' (did you mean --device?)"),
        "{e}"
    );
}

#[test]
fn suite_options_say_what_they_take_without_naming_other_suites() {
    // The form of --depths is its own; another suite's default is no part of it.
    let e = refused(&["suite", "qos", "--depths", "1,x"]);
    assert_eq!(
        e,
        "flashlab: error: --depths 'x': not a whole number; expected queue depths, comma-separated\n"
    );
    // A bare --runtime is seconds, as fio's runtime=15: a typo below it is still refused.
    let e = refused(&["suite", "qos", "--runtime", "15x"]);
    assert!(e.contains("10 (seconds, as fio's runtime=)"), "{e}");
}
