//! flashlab-kit's `options` module on the registered suites.

use flashlab_engine::{NS_PER_MS, NS_PER_S};
use flashlab_kit::options::*;

#[test]
fn round_lengths_parse_with_their_units() {
    assert_eq!(
        RoundLength::parse("25%").unwrap(),
        RoundLength::CapacityFraction(0.25)
    );
    assert_eq!(
        RoundLength::parse("4GiB").unwrap(),
        RoundLength::Bytes(4 << 30)
    );
    assert_eq!(
        RoundLength::parse("1GB").unwrap(),
        RoundLength::Bytes(1_000_000_000)
    );
    assert_eq!(
        RoundLength::parse("512m").unwrap(),
        RoundLength::Bytes(512 << 20)
    );
    assert_eq!(
        RoundLength::parse("60s").unwrap(),
        RoundLength::TimeNs(60 * NS_PER_S)
    );
    assert_eq!(
        RoundLength::parse("2min").unwrap(),
        RoundLength::TimeNs(120 * NS_PER_S)
    );
    assert_eq!(
        RoundLength::parse("1.5s").unwrap(),
        RoundLength::TimeNs(1_500 * NS_PER_MS)
    );
}

#[test]
fn hours_parse() {
    assert_eq!(
        RoundLength::parse("1h").unwrap(),
        RoundLength::TimeNs(3600 * NS_PER_S)
    );
}

#[test]
fn preconditioning_parses_and_names_what_is_wrong() {
    assert_eq!(
        PreconditionKind::parse("showdown").unwrap(),
        PreconditionKind::Showdown
    );
    let e = PreconditionKind::parse("vdbench").unwrap_err().to_string();
    assert!(e.contains("--precondition") && e.contains("pts"), "{e}");
    assert_eq!(PreconditionOptions::parse_span("25").unwrap(), 25.0);
    assert_eq!(PreconditionOptions::parse_span(" 12.5% ").unwrap(), 12.5);
    assert!(PreconditionOptions::parse_span("a quarter").is_err());
    let showdown = PreconditionOptions {
        kind: PreconditionKind::Showdown,
        span_percent: 25.0,
        ..Default::default()
    };
    assert!(showdown.validate().is_ok());
    assert_eq!(showdown.span_line().as_deref(), Some("size=25%"));
    assert_eq!(PreconditionOptions::default().span_line(), None);
    let zero_seq = PreconditionOptions {
        seq_ns: 0,
        ..showdown
    };
    assert!(zero_seq.validate().is_ok(), "0 skips the sequential writes");
    let cases = [
        (
            PreconditionOptions {
                kind: PreconditionKind::Pts,
                ..showdown
            },
            "--precondition showdown",
        ),
        (
            PreconditionOptions {
                span_percent: f64::NAN,
                ..showdown
            },
            "--span",
        ),
        (
            PreconditionOptions {
                random_ns: 0,
                ..showdown
            },
            "--random-time",
        ),
        (
            PreconditionOptions {
                seq_ns: MAX_PRECONDITION_NS + 1,
                ..showdown
            },
            "--seq-time",
        ),
    ];
    for (p, want) in cases {
        let msg = p.validate().unwrap_err().to_string();
        assert!(msg.contains(want), "{msg}");
    }
}

#[test]
fn list_options_refuse_a_value_twice() {
    // `--depths 8,8` ran QD8 twice and wrote qd8_* twice: the table showed the first
    // run, the JSON the second. Every list option whose entries name results is checked,
    // by the label the results carry (0.1 and 0.1001 are both `op10`).
    let d = SuiteOptions::default();
    let mut depths = d.clone();
    depths.own_mut::<flashlab_suite::QosOptions>().depths = vec![1, 8, 8];
    let mut op = d.clone();
    op.own_mut::<flashlab_suite::OpSweepOptions>().fractions = vec![0.1, 0.1001];
    let mut runs = d.clone();
    runs.own_mut::<flashlab_suite::OpSweepOptions>().run_ns = vec![NS_PER_S * 60, NS_PER_S * 60];
    let mut members = d.clone();
    members
        .own_mut::<flashlab_suite::RaidScalingOptions>()
        .members = vec![2, 2];
    let mut dirty = d.clone();
    dirty.own_mut::<flashlab_suite::RecoveryOptions>().dirty_ns =
        vec![NS_PER_S * 60, NS_PER_S * 60];
    let mut hir = d.clone();
    hir.own_mut::<flashlab_suite::RecoveryOptions>()
        .hir_idle_multiples = vec![1, 1];
    let mut bs = d.clone();
    bs.own_mut::<flashlab_suite::TenantOptions>().write_bs_bytes = vec![8192, 8192];
    for (o, option, position) in [
        (depths, "--depths", 3),
        (op, "--op", 2),
        (runs, "--run-minutes", 2),
        (members, "--members", 2),
        (dirty, "--dirty-minutes", 2),
        (hir, "--hir-idle-multiples", 2),
        (bs, "--write-bs", 2),
    ] {
        let msg = o.validate().unwrap_err().to_string();
        assert!(msg.contains(option), "{msg}");
        assert!(
            msg.contains(&format!("listed again at position {position}")),
            "{msg}"
        );
    }
    assert_eq!(repeated(&[1, 2, 3], |&x| x), None);
}

#[test]
fn bad_round_lengths_say_what_is_valid() {
    for text in ["", "abc", "0s", "-5%", "10 parsecs", "2000%"] {
        let e = RoundLength::parse(text).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("--round"), "{text}: {msg}");
        assert!(msg.contains("percentage"), "{text}: {msg}");
    }
}

#[test]
fn validate_names_the_option_out_of_range() {
    assert!(SuiteOptions::default().validate().is_ok());
    let cases: [(SuiteOptions, &str); 6] = [
        (
            SuiteOptions {
                max_rounds: 4,
                ..Default::default()
            },
            "--max-rounds",
        ),
        (
            SuiteOptions {
                qd: Some(0),
                ..Default::default()
            },
            "--qd",
        ),
        (
            SuiteOptions::default().with(flashlab_suite::QosOptions {
                rwmixread: 101,
                ..Default::default()
            }),
            "--rwmixread",
        ),
        (
            SuiteOptions::default().with(flashlab_suite::QosOptions {
                depths: vec![8, 0],
                ..Default::default()
            }),
            "--depths",
        ),
        (
            SuiteOptions {
                read_qd: 0,
                ..Default::default()
            },
            "--read-qd",
        ),
        (
            SuiteOptions {
                runtime_ns: Some(0),
                ..Default::default()
            },
            "--runtime",
        ),
    ];
    for (opts, option) in cases {
        let msg = opts.validate().unwrap_err().to_string();
        assert!(msg.contains(option), "{msg}");
    }
}

#[test]
fn own_options_read_back_what_was_set_and_default_otherwise() {
    let mut o = SuiteOptions::default();
    assert_eq!(
        *o.own::<flashlab_suite::QosOptions>(),
        flashlab_suite::QosOptions::default()
    );
    o.own_mut::<flashlab_suite::QosOptions>().rwmixread = 50;
    o.own_mut::<flashlab_suite::WsatOptions>().write_multiple = 2.0;
    o.own_mut::<flashlab_suite::QosOptions>().depths = vec![4];
    let q = o.own::<flashlab_suite::QosOptions>();
    assert_eq!((q.rwmixread, q.depths.clone()), (50, vec![4]));
    assert_eq!(o.own::<flashlab_suite::WsatOptions>().write_multiple, 2.0);
    // Equality ignores the order the suites' options were set in, not their values.
    let other = SuiteOptions::default()
        .with(flashlab_suite::WsatOptions {
            write_multiple: 2.0,
        })
        .with(flashlab_suite::QosOptions {
            rwmixread: 50,
            depths: vec![4],
        });
    assert_eq!(o, other);
    assert_ne!(o, other.clone().with(flashlab_suite::QosOptions::default()));
    assert_ne!(o, SuiteOptions::default());
    // A suite's own options are validated with the rest.
    let bad = o.with(flashlab_suite::WsatOptions {
        write_multiple: 0.0,
    });
    let msg = bad.validate().unwrap_err().to_string();
    assert!(msg.contains("--write-multiple"), "{msg}");
}
