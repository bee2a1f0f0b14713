//! Job-file syntax: the reference job file, comments and flags, `kb_base`, environment
//! substitution, includes, every error kind's message, and parsing that never panics.

use proptest::prelude::*;

use super::*;

#[test]
fn mixed_fio_reference_job_file() {
    let f = parse_file(&jobs_dir().join("mixed.fio")).unwrap();
    // Same keys, values and order as fio 3.33 prints under "global options" (fio applies
    // `filename` last, so it comes last).
    assert_eq!(
        f.global_options,
        pairs(&[
            ("size", "64MiB"),
            ("direct", "1"),
            ("ioengine", "io_uring"),
            ("runtime", "2"),
            ("time_based", "1"),
            ("ramp_time", "1"),
            ("group_reporting", "1"),
            ("percentile_list", "50:90:99:99.9:99.99"),
            ("randrepeat", "0"),
            ("norandommap", "1"),
            ("filename", "/data/f.dat"),
        ])
    );
    assert_eq!(f.jobs.len(), 3);

    let mut a = JobSpec::new("rw7030-4k", 14);
    a.id.options_as_written = pairs(&[
        ("rw", "randrw"),
        ("rwmixread", "70"),
        ("bs", "4k"),
        ("iodepth", "16"),
        ("numjobs", "2"),
        ("random_distribution", "zipf:1.2"),
    ]);
    a.target.filename = Some("/data/f.dat".into());
    a.target.size = Some(SizeSpec::Bytes(64_000_000)); // fio's kb_base=1024: MiB is decimal
    a.time.runtime_ns = Some(2_000_000_000);
    a.time.time_based = true;
    a.time.ramp_time_ns = 1_000_000_000;
    a.report.group_reporting = true;
    a.report.percentile_list = vec![50.0, 90.0, 99.0, 99.9, 99.99];
    a.io.randrepeat = false;
    a.io.norandommap = true;
    a.engine.ioengine = "io_uring".into();
    let global = a.clone();
    a.io.rw = RwPattern::RandRw;
    a.io.rwmixread = 70;
    a.engine.iodepth = 16;
    a.control.numjobs = 2;
    a.io.random_distribution = RandomDistribution::Zipf(1.2);
    assert_eq!(f.jobs[0], a);

    let mut b = global.clone();
    b.id.name = "seq128k-write".into();
    b.id.line = 22;
    b.id.options_as_written = pairs(&[
        ("rw", "write"),
        ("bs", "128k"),
        ("iodepth", "4"),
        ("rate", "50m"),
        ("write_bw_log", "samples/logs/seq"),
        ("write_lat_log", "samples/logs/seq"),
        ("write_iops_log", "samples/logs/seq"),
        ("log_avg_msec", "500"),
    ]);
    b.control.stonewall = true;
    b.io.rw = RwPattern::Write;
    b.block.bs = [
        BlockSize::Fixed(131_072),
        BlockSize::Fixed(131_072),
        BlockSize::Fixed(131_072),
    ];
    b.engine.iodepth = 4;
    b.rate.rate_bytes_per_s = [52_428_800; 3];
    b.log.write_bw_log = Some("samples/logs/seq".into());
    b.log.write_lat_log = Some("samples/logs/seq".into());
    b.log.write_iops_log = Some("samples/logs/seq".into());
    b.log.log_avg_msec = 500;
    assert_eq!(f.jobs[1], b);

    let mut c = global;
    c.id.name = "bssplit-zoned".into();
    c.id.line = 33;
    c.id.options_as_written = pairs(&[
        ("rw", "randread"),
        ("bssplit", "4k/50:16k/30:64k/20"),
        ("random_distribution", "zoned:60/10:30/20:8/30:2/40"),
        ("iodepth", "8"),
        ("rate_iops", "2000"),
    ]);
    c.report.new_group = true;
    c.io.rw = RwPattern::RandRead;
    let split = BlockSize::Split(vec![(4096, 50), (16384, 30), (65536, 20)]);
    c.block.bs = [split.clone(), split.clone(), split];
    c.io.random_distribution =
        RandomDistribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (8.0, 30.0), (2.0, 40.0)]);
    c.engine.iodepth = 8;
    c.rate.rate_iops = [2000; 3];
    assert_eq!(f.jobs[2], c);
}

#[test]
fn syntax_comments_whitespace_flags_and_aliases() {
    let f = parse(
        "# whole-line comment\n\
         ; another\n\
         \n\
         [global]\n  bs = 8k ; trailing\n\
         time_based\n\
         [one]\n\
         readwrite=randrw:4   # trailing\n\
         rwmixwrite=30\n\
         blocksize=,16k\n\
         wait_for_previous\n\
         io_limit=1m\n\
         runtime=1500ms\n\
         thinktime=20\n\
         rate=1m,2m\n\
         rate_iops=,500,\n\
         offset=10%\n\
         [global]\n\
         iodepth=4\n\
         ioengine=libaio\n\
         [two]\n\
         name=renamed\n\
         write_lat_log\n",
    )
    .unwrap();
    let one = &f.jobs[0];
    assert_eq!(one.id.name, "one");
    assert_eq!(one.io.rw, RwPattern::RandRw);
    assert_eq!(one.io.rw_sequence_count, 4);
    assert_eq!(one.io.rwmixread, 70);
    assert_eq!(
        one.block.bs,
        [
            BlockSize::Fixed(8192),
            BlockSize::Fixed(16384),
            BlockSize::Fixed(16384)
        ]
    );
    assert!(one.control.stonewall && one.time.time_based);
    assert_eq!(one.target.io_size, Some(SizeSpec::Bytes(1 << 20)));
    assert_eq!(one.time.runtime_ns, Some(1_500_000_000));
    assert_eq!(one.rate.thinktime_ns, 20_000);
    assert_eq!(one.rate.rate_bytes_per_s, [1 << 20, 2 << 20, 2 << 20]);
    assert_eq!(one.rate.rate_iops, [0, 500, 0]);
    assert_eq!(one.target.offset, SizeSpec::Fraction(0.1));
    assert_eq!(
        one.engine.iodepth, 1,
        "a later [global] applies only to later jobs"
    );
    // Bare flags are not in fio's JSON option lists; aliases print as the canonical name.
    assert!(one
        .id
        .options_as_written
        .iter()
        .all(|(k, _)| k != "stonewall"));
    assert_eq!(
        one.id.options_as_written[0],
        ("rw".to_string(), "randrw:4".to_string())
    );
    assert_eq!(
        f.global_options,
        pairs(&[("bs", "8k"), ("iodepth", "4"), ("ioengine", "libaio")])
    );
    let two = &f.jobs[1];
    assert_eq!((two.id.name.as_str(), two.engine.iodepth), ("renamed", 4));
    assert_eq!(two.log.write_lat_log.as_deref(), Some("renamed"));
    assert_eq!(two.block.bs[0], BlockSize::Fixed(8192));
}

#[test]
fn kb_base_applies_before_sizes_whatever_the_order() {
    let f = parse("[j]\nsize=1m\nkb_base=1000\nbs=4KiB\n").unwrap();
    assert_eq!(f.jobs[0].target.size, Some(SizeSpec::Bytes(1_000_000)));
    assert_eq!(f.jobs[0].block.bs[0], BlockSize::Fixed(4096));
}

#[test]
fn env_substitution() {
    let env = |n: &str| (n == "BS").then(|| "64k".to_string());
    let f = parse_str("[j]\nbs=${BS}\n", "t.fio", &env).unwrap();
    assert_eq!(f.jobs[0].block.bs[1], BlockSize::Fixed(65536));
    assert_eq!(f.jobs[0].id.options_as_written, pairs(&[("bs", "64k")]));
    let e = parse_str("[j]\nsize=${SIZE}\n", "t.fio", &env).unwrap_err();
    assert_eq!(
        e.kind,
        ParseErrorKind::UnsetEnv {
            name: "SIZE".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "t.fio:2: environment variable SIZE is not set (used as ${SIZE})"
    );
    assert_eq!(kind("[j]\nsize=${SIZE\n"), ParseErrorKind::UnterminatedEnv);
}

#[test]
fn includes_are_relative_to_the_including_file() {
    let f = parse_file(&jobs_dir().join("include_main.fio")).unwrap();
    assert_eq!(f.jobs.len(), 1);
    assert_eq!(f.jobs[0].io.rw, RwPattern::RandWrite);
    assert_eq!(f.jobs[0].block.bs[0], BlockSize::Fixed(16384));
    assert_eq!(f.global_options, pairs(&[("bs", "16k"), ("size", "1g")]));

    let e = parse_file(&jobs_dir().join("include_cycle_a.fio")).unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::IncludeCycle { .. }), "{e}");
    assert!(
        e.file.ends_with("include_cycle_b.fio") && e.line == 1,
        "{e}"
    );

    let e = parse_str("include nowhere.fio\n", "/nonexistent/t.fio", &no_env).unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::Io { .. }), "{e}");
}

#[test]
fn include_depth_is_limited() {
    let dir = std::env::temp_dir().join(format!("flashlab-include-depth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = MAX_INCLUDE_DEPTH + 3;
    for i in 0..n {
        std::fs::write(
            dir.join(format!("d{i}.fio")),
            format!("include d{}.fio\n", i + 1),
        )
        .unwrap();
    }
    std::fs::write(dir.join(format!("d{n}.fio")), "[j]\n").unwrap();
    let e = parse_file(&dir.join("d0.fio")).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        matches!(
            e.kind,
            ParseErrorKind::IncludeTooDeep {
                max_depth: MAX_INCLUDE_DEPTH,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn every_error_kind_names_the_place_and_what_is_valid() {
    let e = parse("[j]\nrw=foo\n").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("t.fio", 2));
    let msg = e.to_string();
    assert!(
        msg.starts_with("t.fio:2: invalid value \"foo\" for rw: expected one of read, write"),
        "{msg}"
    );
    assert!(kind("[j]\nbs=4q\n").to_string().contains("k/m/g/t/p"));
    assert_eq!(
        kind("[j]\niodepht=4\n"),
        ParseErrorKind::UnknownOption {
            option: "iodepht".into(),
            suggestion: Some("iodepth".into())
        }
    );
    assert_eq!(
        kind("[j]\nverify_only=1\n").to_string(),
        "fio option verify_only is not simulated by flashlab (Read back a workload's writes without issuing them)"
    );
    assert_eq!(
        kind("[j]\nbs\n"),
        ParseErrorKind::MissingValue {
            option: "bs".into(),
            example: "4096".into()
        }
    );
    assert_eq!(
        kind("bs=4k\n[j]\n"),
        ParseErrorKind::OutsideSection {
            option: "bs".into()
        }
    );
    assert!(matches!(kind("[j\n"), ParseErrorKind::BadSection { .. }));
    assert!(matches!(kind("[]\n"), ParseErrorKind::BadSection { .. }));
    assert!(matches!(kind("[j]\n= 4\n"), ParseErrorKind::BadLine { .. }));
    assert_eq!(kind("[global]\nbs=4k\n"), ParseErrorKind::NoJobs);
    assert_eq!(kind(""), ParseErrorKind::NoJobs);
    assert!(kind("[j]\ndirect=yes\n").to_string().contains("0 or 1"));
    assert!(kind("[j]\nruntime=10 fortnights\n")
        .to_string()
        .contains("us/usec"));
    assert!(kind("[j]\nrwmixread=101\n")
        .to_string()
        .contains("from 0 to 100"));
    assert!(kind("[j]\npercentage_random=80,101\n")
        .to_string()
        .contains("from 0 to 100"));
    assert!(kind("[j]\nrate_process=bursty\n")
        .to_string()
        .contains("poisson"));
    assert!(kind("[j]\nsize=0\n").to_string().contains("above 0"));
    // A mistyped engine is refused (fio: "engine libaoi not loadable"), with the nearest.
    let engine = kind("[j]\nioengine=libaoi\n").to_string();
    assert!(
        engine.contains("I/O engines") && engine.contains("(did you mean libaio?)"),
        "{engine}"
    );
    for loadable in [
        "libaio",
        "io_uring",
        "windowsaio",
        "external:/opt/e.so",
        "./e.so",
    ] {
        let file = parse(&format!("[j]\nioengine={loadable}\n")).unwrap();
        assert_eq!(file.jobs[0].engine.ioengine, loadable);
    }
    let e = parse_file(std::path::Path::new("/nonexistent/job.fio")).unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::Io { .. }) && e.line == 0);
}

const VALID: &str = include_str!("../../../../../testdata/jobs/mixed.fio");

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text);
    }

    #[test]
    fn mutated_job_files_never_panic(
        edits in proptest::collection::vec((0usize..VALID.len(), 0usize..8, "[ -~\n]{0,6}"), 1..6)
    ) {
        let mut text = VALID.as_bytes().to_vec();
        for (at, del, ins) in edits {
            let at = at.min(text.len());
            let end = (at + del).min(text.len());
            text.splice(at..end, ins.bytes());
        }
        let text = String::from_utf8_lossy(&text);
        if let Ok(f) = parse(&text) {
            prop_assert!(!f.jobs.is_empty());
        }
    }

    #[test]
    fn values_from_fio_vocabulary_never_panic(
        key in prop::sample::select(option_table().iter().map(|o| o.name).collect::<Vec<_>>()),
        value in "[0-9a-zA-Z:/%,.\\-]{0,12}",
    ) {
        let _ = parse(&format!("[j]\n{key}={value}\n"));
    }
}

#[test]
fn unreadable_file_is_named_without_a_line_number() {
    let err = crate::parse_file(std::path::Path::new("/nonexistent/dir/job.fio")).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("/nonexistent/dir/job.fio: cannot read"),
        "{msg}"
    );
}

/// A UTF-8 byte-order mark at the start of a job file is skipped (it once made the first
/// section header an option before any section, with the mark invisible in the message).
#[test]
fn a_byte_order_mark_is_skipped() {
    let with = parse("\u{feff}[j]\nrw=randread\nsize=1m\n").unwrap();
    let without = parse("[j]\nrw=randread\nsize=1m\n").unwrap();
    assert_eq!(with.jobs.len(), 1);
    assert_eq!(with.jobs, without.jobs);
}
