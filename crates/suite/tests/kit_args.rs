//! flashlab-kit's `args` module on the registered suites.

use flashlab_suite::*;

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn error(name: &str, p: &[(&str, &str)]) -> String {
    let e = options_from_pairs(name, &pairs(p)).unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    e.to_string()
}

#[test]
fn pairs_give_the_options_the_command_line_gives() {
    let (kind, o) = options_from_pairs(
        "qos",
        &pairs(&[
            ("runtime", "50ms"),
            ("--depths", "1,8"),
            ("rwmixread", "50"),
            ("max_rounds", "7"),
            ("seed", "7"),
        ]),
    )
    .unwrap();
    assert_eq!(kind.name(), "qos");
    assert_eq!(o.runtime_ns, Some(50_000_000));
    assert_eq!(o.max_rounds, 7);
    assert_eq!(o.seed, 7);
    let qos = o.own::<flashlab_suite::QosOptions>();
    assert_eq!(qos.depths, [1, 8]);
    assert_eq!(qos.rwmixread, 50);
    // None given: every default, as `flashlab suite qos` alone.
    let (_, d) = options_from_pairs("qos", &[]).unwrap();
    assert_eq!(
        d.own::<flashlab_suite::QosOptions>().depths,
        [1, 8, 32, 64, 128, 256]
    );
    assert_eq!(d.round, RoundLength::CapacityFraction(0.25));
}

#[test]
fn a_flag_takes_true_or_false() {
    let (_, o) = options_from_pairs("endurance", &pairs(&[("until-read-only", "true")])).unwrap();
    assert!(o.own::<flashlab_suite::EnduranceOptions>().until_read_only);
    let (_, o) = options_from_pairs("endurance", &pairs(&[("until-read-only", "false")])).unwrap();
    assert!(!o.own::<flashlab_suite::EnduranceOptions>().until_read_only);
    let msg = error("endurance", &[("until-read-only", "yes")]);
    assert!(msg.contains("--until-read-only 'yes'") && msg.contains("true or false"));
}

/// Every suite takes `--timed-precondition`; the fills run untimed unless it is given.
#[test]
fn every_suite_takes_timed_precondition() {
    for name in ["four-corners", "wsat", "desktop"] {
        let (_, o) = options_from_pairs(name, &pairs(&[("timed-precondition", "true")])).unwrap();
        assert!(o.timed_precondition, "{name}");
        let (_, o) = options_from_pairs(name, &[]).unwrap();
        assert!(!o.timed_precondition, "{name}");
    }
}

/// `--round-timed` takes a whole percentage, with or without `%`; 20% by default.
#[test]
fn the_timed_share_of_a_round_is_a_whole_percentage() {
    let (_, o) = options_from_pairs("qos", &[]).unwrap();
    assert_eq!(o.round_timed_percent, 20);
    for (text, percent) in [("100%", 100), ("5", 5), (" 35 % ", 35)] {
        let (_, o) = options_from_pairs("qos", &pairs(&[("round-timed", text)])).unwrap();
        assert_eq!(o.round_timed_percent, percent, "{text}");
    }
    for bad in ["0", "101%", "12.5%", "half"] {
        let msg = error("qos", &[("round-timed", bad)]);
        assert_eq!(
            msg,
            format!(
                "--round-timed '{bad}': expected a whole percentage from 1 to 100, such as 20%"
            )
        );
    }
}

#[test]
fn bad_options_name_the_option_and_what_is_valid() {
    let msg = error("qos", &[("no-such-option", "1")]);
    assert!(
        msg.contains("unknown option 'no-such-option' for suite qos"),
        "{msg}"
    );
    assert!(msg.contains("depths") && msg.contains("runtime"), "{msg}");
    // The list is the suite's: another suite's own option is not offered.
    assert!(!msg.contains("until-read-only"), "{msg}");
    // The option's help follows "expected" in the middle of the sentence.
    let msg = error("wsat", &[("max_rounds", "x")]);
    assert_eq!(
        msg,
        "--max-rounds 'x': not a whole number; expected rounds before giving up on steady state"
    );
    let msg = error("qos", &[("depths", "1,x")]);
    assert!(
        msg.starts_with("--depths 'x': not a whole number; expected "),
        "{msg}"
    );
    let msg = error("qos", &[("qd", "deep")]);
    assert!(msg.starts_with("--qd 'deep': not a whole number"), "{msg}");
    let msg = error("qos", &[("compressible", "101")]);
    assert!(msg.starts_with("--compressible '101'"), "{msg}");
    let msg = error("qos", &[("runtime", "0s")]);
    assert!(
        msg.contains("--runtime '0s': expected a time above 0"),
        "{msg}"
    );
    let msg = error("qos", &[("round", "lots")]);
    assert!(msg.contains("--round") && msg.contains("lots"), "{msg}");
    let msg = error("qos", &[("until-read-only", "true")]);
    assert_eq!(
        msg,
        "--until-read-only does not apply to suite qos: it is for endurance"
    );
    let msg = error("wsat", &[("runtime", "1s")]);
    assert!(
        msg.starts_with("--runtime does not apply to suite wsat"),
        "{msg}"
    );
    let msg = error("qos", &[("qd", "4"), ("--qd", "8")]);
    assert!(msg.contains("--qd is given twice"), "{msg}");
    let msg = error("qos", &[("rwmixread", "150")]);
    assert!(msg.contains("rwmixread") && msg.contains("150"), "{msg}");
    let msg = error("four-corner", &[]);
    assert!(msg.contains("unknown suite 'four-corner'"), "{msg}");
}

#[test]
fn every_suite_reads_the_options_every_suite_takes() {
    for &k in SUITES {
        let options = options_of(k);
        assert!(options.iter().any(|o| o == "seed"), "{}", k.name());
        for own in flashlab_suite::own_options(k) {
            assert!(options.contains(&own), "{}: --{own}", k.name());
        }
    }
}
