use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::job::*;

fn jobs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/jobs")
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn parse(text: &str) -> Result<JobFile, ParseError> {
    parse_str(text, "t.fio", &no_env)
}

fn kind(text: &str) -> ParseErrorKind {
    parse(text).expect_err("expected an error").kind
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

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
    a.options_as_written = pairs(&[
        ("rw", "randrw"),
        ("rwmixread", "70"),
        ("bs", "4k"),
        ("iodepth", "16"),
        ("numjobs", "2"),
        ("random_distribution", "zipf:1.2"),
    ]);
    a.filename = Some("/data/f.dat".into());
    a.size = Some(SizeSpec::Bytes(64_000_000)); // fio's kb_base=1024: MiB is decimal
    a.runtime_ns = Some(2_000_000_000);
    a.time_based = true;
    a.ramp_time_ns = 1_000_000_000;
    a.group_reporting = true;
    a.percentile_list = vec![50.0, 90.0, 99.0, 99.9, 99.99];
    a.randrepeat = false;
    a.norandommap = true;
    let global = a.clone();
    a.rw = RwPattern::RandRw;
    a.rwmixread = 70;
    a.iodepth = 16;
    a.numjobs = 2;
    a.random_distribution = RandomDistribution::Zipf(1.2);
    assert_eq!(f.jobs[0], a);

    let mut b = global.clone();
    b.name = "seq128k-write".into();
    b.line = 22;
    b.options_as_written = pairs(&[
        ("rw", "write"),
        ("bs", "128k"),
        ("iodepth", "4"),
        ("rate", "50m"),
        ("write_bw_log", "samples/logs/seq"),
        ("write_lat_log", "samples/logs/seq"),
        ("write_iops_log", "samples/logs/seq"),
        ("log_avg_msec", "500"),
    ]);
    b.stonewall = true;
    b.rw = RwPattern::Write;
    b.bs = [
        BlockSize::Fixed(131_072),
        BlockSize::Fixed(131_072),
        BlockSize::Fixed(131_072),
    ];
    b.iodepth = 4;
    b.rate_bytes_per_s = [52_428_800; 3];
    b.write_bw_log = Some("samples/logs/seq".into());
    b.write_lat_log = Some("samples/logs/seq".into());
    b.write_iops_log = Some("samples/logs/seq".into());
    b.log_avg_msec = 500;
    assert_eq!(f.jobs[1], b);

    let mut c = global;
    c.name = "bssplit-zoned".into();
    c.line = 33;
    c.options_as_written = pairs(&[
        ("rw", "randread"),
        ("bssplit", "4k/50:16k/30:64k/20"),
        ("random_distribution", "zoned:60/10:30/20:8/30:2/40"),
        ("iodepth", "8"),
        ("rate_iops", "2000"),
    ]);
    c.new_group = true;
    c.rw = RwPattern::RandRead;
    let split = BlockSize::Split(vec![(4096, 50), (16384, 30), (65536, 20)]);
    c.bs = [split.clone(), split.clone(), split];
    c.random_distribution =
        RandomDistribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (8.0, 30.0), (2.0, 40.0)]);
    c.iodepth = 8;
    c.rate_iops = [2000; 3];
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
         [two]\n\
         name=renamed\n\
         write_lat_log\n",
    )
    .unwrap();
    let one = &f.jobs[0];
    assert_eq!(one.name, "one");
    assert_eq!(one.rw, RwPattern::RandRw);
    assert_eq!(one.rw_sequence_count, 4);
    assert_eq!(one.rwmixread, 70);
    assert_eq!(
        one.bs,
        [
            BlockSize::Fixed(8192),
            BlockSize::Fixed(16384),
            BlockSize::Fixed(16384)
        ]
    );
    assert!(one.stonewall && one.time_based);
    assert_eq!(one.io_size, Some(SizeSpec::Bytes(1 << 20)));
    assert_eq!(one.runtime_ns, Some(1_500_000_000));
    assert_eq!(one.thinktime_ns, 20_000);
    assert_eq!(one.rate_bytes_per_s, [1 << 20, 2 << 20, 2 << 20]);
    assert_eq!(one.rate_iops, [0, 500, 0]);
    assert_eq!(one.offset, SizeSpec::Fraction(0.1));
    assert_eq!(
        one.iodepth, 1,
        "a later [global] applies only to later jobs"
    );
    // Bare flags are not in fio's JSON option lists; aliases print as the canonical name.
    assert!(one.options_as_written.iter().all(|(k, _)| k != "stonewall"));
    assert_eq!(
        one.options_as_written[0],
        ("rw".to_string(), "randrw:4".to_string())
    );
    assert_eq!(f.global_options, pairs(&[("bs", "8k"), ("iodepth", "4")]));
    let two = &f.jobs[1];
    assert_eq!((two.name.as_str(), two.iodepth), ("renamed", 4));
    assert_eq!(two.write_lat_log.as_deref(), Some("renamed"));
    assert_eq!(two.bs[0], BlockSize::Fixed(8192));
}

#[test]
fn kb_base_applies_before_sizes_whatever_the_order() {
    let f = parse("[j]\nsize=1m\nkb_base=1000\nbs=4KiB\n").unwrap();
    assert_eq!(f.jobs[0].size, Some(SizeSpec::Bytes(1_000_000)));
    assert_eq!(f.jobs[0].bs[0], BlockSize::Fixed(4096));
}

#[test]
fn io_size_takes_bytes_or_a_percentage_of_size() {
    let io_size =
        |v: &str| parse(&format!("[j]\nsize=50%\nio_size={v}\n")).map(|f| f.jobs[0].io_size);
    assert_eq!(io_size("1m"), Ok(Some(SizeSpec::Bytes(1 << 20))));
    assert_eq!(io_size("25%"), Ok(Some(SizeSpec::Fraction(0.25))));
    assert_eq!(io_size("100%"), Ok(Some(SizeSpec::Fraction(1.0))));
    assert_eq!(io_size("12.5%"), Ok(Some(SizeSpec::Fraction(0.125))));
    let f = parse("[j]\nio_limit=25%\n").unwrap();
    assert_eq!(f.jobs[0].io_size, Some(SizeSpec::Fraction(0.25)));
    // fio reads 0 and 0% alike as no limit of the job's own: it transfers its region.
    assert_eq!(io_size("0"), Ok(None));
    assert_eq!(io_size("0%"), Ok(None));
    // Above 100% fio refuses io_size ("values greater than 100% aren't supported"); the
    // message is size's.
    for bad in ["101%", "200%"] {
        let io = kind(&format!("[j]\nio_size={bad}\n")).to_string();
        let size = kind(&format!("[j]\nsize={bad}\n")).to_string();
        assert_eq!(io, size.replace("for size", "for io_size"));
        assert!(io.contains("a percentage between 0% and 100%"), "{io}");
    }
    let io = kind("[j]\nio_size=lots\n").to_string();
    assert!(
        io.contains("k/m/g/t/p") && io.contains("or a percentage like 50%"),
        "{io}"
    );
    // The echo of the job's own options keeps the value as written.
    let f = parse("[j]\nio_size=25%\n").unwrap();
    assert!(f.jobs[0]
        .options_as_written
        .contains(&("io_size".to_string(), "25%".to_string())));
}

#[test]
fn sequential_skip_and_random_count() {
    let f = parse("[a]\nrw=write:64k\n[b]\nrw=randread:8\nrw_sequencer=identical\n").unwrap();
    assert_eq!(
        (f.jobs[0].rw_seq_skip_bytes, f.jobs[0].rw_sequence_count),
        (65536, 1)
    );
    assert_eq!(
        (f.jobs[1].rw_seq_skip_bytes, f.jobs[1].rw_sequence_count),
        (0, 8)
    );
    assert_eq!(f.jobs[1].rw_sequencer, RwSequencer::Identical);
}

#[test]
fn env_substitution() {
    let env = |n: &str| (n == "BS").then(|| "64k".to_string());
    let f = parse_str("[j]\nbs=${BS}\n", "t.fio", &env).unwrap();
    assert_eq!(f.jobs[0].bs[1], BlockSize::Fixed(65536));
    assert_eq!(f.jobs[0].options_as_written, pairs(&[("bs", "64k")]));
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
    assert_eq!(f.jobs[0].rw, RwPattern::RandWrite);
    assert_eq!(f.jobs[0].bs[0], BlockSize::Fixed(16384));
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
    let e = parse_file(std::path::Path::new("/nonexistent/job.fio")).unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::Io { .. }) && e.line == 0);
}

#[test]
fn option_table_lists_classes() {
    let t = option_table();
    for (name, class) in [
        ("bs", OptionClass::Simulated),
        ("ioengine", OptionClass::Accepted),
        ("zonemode", OptionClass::NotSimulated),
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

#[test]
fn buffer_options_resolve_to_a_compressible_share_as_fio_fills_buffers() {
    let percent = |text: &str| parse(text).map(|f| f.jobs[0].compressible_percent);
    // fio's default buffers are random data.
    assert_eq!(percent("[j]\nrw=write\n"), Ok(0));
    for n in [0, 1, 50, 100] {
        assert_eq!(
            percent(&format!("[j]\nbuffer_compress_percentage={n}\n")),
            Ok(n)
        );
    }
    assert_eq!(percent("[j]\nzero_buffers\n"), Ok(100));
    assert_eq!(percent("[j]\nzero_buffers=1\n"), Ok(100));
    assert_eq!(percent("[j]\nzero_buffers=0\n"), Ok(0));
    for pattern in ["0xdeadbeef", "\"abcd\"", "'x'", "123", "\"ab\"|0x00"] {
        assert_eq!(
            percent(&format!("[j]\nbuffer_pattern={pattern}\n")),
            Ok(100),
            "{pattern}"
        );
    }
    // A percentage above 0 wins over zeros and a pattern, whatever the order or section.
    for text in [
        "[j]\nzero_buffers\nbuffer_compress_percentage=30\n",
        "[j]\nbuffer_compress_percentage=30\nzero_buffers\n",
        "[j]\nbuffer_pattern=0xaa\nbuffer_compress_percentage=30\n",
        "[j]\nbuffer_compress_percentage=30\nbuffer_pattern=0xaa\nzero_buffers=1\n",
        "[global]\nbuffer_compress_percentage=30\n[j]\nzero_buffers\n",
        "[global]\nzero_buffers\n[j]\nbuffer_compress_percentage=30\n",
    ] {
        assert_eq!(percent(text), Ok(30), "{text}");
    }
    // 0 is fio's "not set": the zeros or the pattern are written as they are.
    assert_eq!(
        percent("[j]\nbuffer_compress_percentage=0\nzero_buffers\n"),
        Ok(100)
    );
    assert_eq!(
        percent("[global]\nbuffer_compress_percentage=60\n[j]\nbuffer_compress_percentage=0\nbuffer_pattern=7\n"),
        Ok(100)
    );
    // A job turns a global's zeros off again.
    assert_eq!(
        percent("[global]\nzero_buffers\n[j]\nzero_buffers=0\n"),
        Ok(0)
    );
    // The chunk places the compressible data without changing its share; fio's 0 is one
    // chunk of the block size. refill_buffers and scramble_buffers change bytes only.
    for text in [
        "[j]\nbuffer_compress_percentage=40\nbuffer_compress_chunk=4k\n",
        "[j]\nbuffer_compress_percentage=40\nbuffer_compress_chunk=0\n",
        "[j]\nbuffer_compress_percentage=40\nrefill_buffers\nscramble_buffers=0\n",
    ] {
        assert_eq!(percent(text), Ok(40), "{text}");
    }
    assert_eq!(percent("[j]\nrefill_buffers=1\nscramble_buffers\n"), Ok(0));
}

#[test]
fn buffer_options_are_echoed_as_written() {
    let f = parse(
        "[global]\nbuffer_compress_percentage=25\n\
         [j]\nbuffer_compress_chunk=4k\nbuffer_pattern=0xdeadbeef\nzero_buffers\nrefill_buffers=1\n",
    )
    .unwrap();
    assert_eq!(
        f.global_options,
        pairs(&[("buffer_compress_percentage", "25")])
    );
    // As for other options, bare flags (zero_buffers) are not in fio's JSON lists.
    assert_eq!(
        f.jobs[0].options_as_written,
        pairs(&[
            ("buffer_compress_chunk", "4k"),
            ("buffer_pattern", "0xdeadbeef"),
            ("refill_buffers", "1"),
        ])
    );
    assert_eq!(f.jobs[0].compressible_percent, 25);
    // Without any of them the job echoes nothing and stays at fio's random data.
    assert_eq!(parse("[j]\n").unwrap().jobs[0], JobSpec::new("j", 1));
}

#[test]
fn buffer_option_errors_name_the_place_and_what_is_valid() {
    for bad in ["101", "1000", "-1", "half"] {
        let e = parse(&format!(
            "[j]\nrw=write\nbuffer_compress_percentage={bad}\n"
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "t.fio:3: invalid value \"{bad}\" for buffer_compress_percentage: \
                 expected an integer from 0 to 100"
            )
        );
    }
    for bad in ["", "\"\"", "''", "  "] {
        let e = parse(&format!("[j]\nbuffer_pattern={bad}\n")).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.fio", 2));
        assert!(
            e.to_string()
                .ends_with("for buffer_pattern: expected a non-empty pattern: a quoted string, 0x hex or a decimal number"),
            "{e}"
        );
    }
    assert_eq!(
        kind("[j]\nbuffer_pattern\n"),
        ParseErrorKind::MissingValue {
            option: "buffer_pattern".into(),
            example: "...".into()
        }
    );
    assert!(kind("[j]\nbuffer_compress_chunk=lots\n")
        .to_string()
        .contains("k/m/g/t/p"));
    for flag in ["zero_buffers", "refill_buffers", "scramble_buffers"] {
        let msg = kind(&format!("[j]\n{flag}=yes\n")).to_string();
        assert!(
            msg.ends_with(&format!("for {flag}: expected 0 or 1")),
            "{msg}"
        );
    }
    // A drive that deduplicates is not modelled, so deduplicable data stays an error.
    let e = parse("[j]\nrw=write\ndedupe_percentage=50\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.fio:3: fio option dedupe_percentage is not simulated by flashlab (Data a deduplicating drive could drop (such a drive is not modelled))"
    );
}

#[test]
fn thinktime_options_parse_as_fio_reads_them() {
    let one = |text: &str| parse(text).map(|f| f.jobs[0].clone());
    let j = one("[j]\nthinktime=1ms\n").unwrap();
    assert_eq!(
        j.thinktime_blocks_type,
        ThinkBlocks::Complete,
        "fio's default"
    );
    assert_eq!((j.thinktime_blocks, j.thinktime_blocks_set), (1, false));
    assert_eq!((j.thinktime_iotime_ns, j.rate_ignore_thinktime), (0, false));
    let j = one(
        "[global]\nthinktime_blocks=8\n[j]\nthinktime=1ms\nthinktime_blocks_type=issue\n\
         thinktime_iotime=9\nrate_ignore_thinktime=1\n",
    )
    .unwrap();
    assert_eq!(j.thinktime_blocks_type, ThinkBlocks::Issue);
    assert_eq!((j.thinktime_blocks, j.thinktime_blocks_set), (8, true));
    assert_eq!(
        j.thinktime_iotime_ns, 9_000_000_000,
        "bare numbers are seconds"
    );
    assert!(j.rate_ignore_thinktime);
    assert_eq!(
        one("[j]\nthinktime_iotime=250ms\n")
            .unwrap()
            .thinktime_iotime_ns,
        250_000_000
    );
    let e = parse("[j]\nthinktime=1ms\nthinktime_blocks_type=completed\n").unwrap_err();
    assert_eq!(e.line, 3);
    let msg = e.to_string();
    assert!(
        msg.starts_with("t.fio:3:")
            && msg.contains("thinktime_blocks_type")
            && msg.contains("complete or issue"),
        "{msg}"
    );
    assert!(kind("[j]\nrate_ignore_thinktime=maybe\n")
        .to_string()
        .contains("0 or 1"));
    assert!(kind("[j]\nthinktime_iotime=soon\n")
        .to_string()
        .contains("thinktime_iotime"));
}

const VALID: &str = include_str!("../../../../testdata/jobs/mixed.fio");

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

#[test]
fn percentage_random_is_per_direction() {
    let f = parse("[j]\nrw=randrw\npercentage_random=80\n").unwrap();
    assert_eq!(f.jobs[0].percentage_random, [80, 80, 80]);
    let f = parse("[j]\nrw=randrw\npercentage_random=90,20\n").unwrap();
    assert_eq!(f.jobs[0].percentage_random, [90, 20, 20]);
    let f = parse("[j]\nrw=randrw\n").unwrap();
    assert_eq!(f.jobs[0].percentage_random, [100, 100, 100]);
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

#[test]
fn steadystate_options_parse_as_fio_reads_them() {
    use crate::{SteadyMetric, SteadyState};
    let ss = |text: &str| parse(text).unwrap().jobs[0].steadystate;
    // Off without a duration, with fio's default criterion.
    assert_eq!(ss("[j]\n"), SteadyState::default());
    assert!(!ss("[j]\nss=iops:5%\n").enabled());
    let s = ss("[j]\nsteadystate=iops_slope:0.3%\nss_dur=60\nss_ramp=10s\n");
    assert_eq!(
        (s.metric, s.slope, s.limit, s.percent),
        (SteadyMetric::Iops, true, 0.3, true)
    );
    assert_eq!((s.duration_s, s.ramp_ns), (60, 10_000_000_000));
    assert_eq!(s.describe(), "iops_slope:0.300000%");
    // A bandwidth limit without % is bytes per second (kb_base 1024).
    let s = ss("[j]\nss=bw:10m\nsteadystate_duration=2m\n");
    assert_eq!(
        (s.metric, s.slope, s.percent),
        (SteadyMetric::Bw, false, false)
    );
    assert_eq!((s.limit, s.duration_s), (10.0 * 1024.0 * 1024.0, 120));
    assert_eq!(ss("[j]\nss=iops:250\nss_dur=5\n").limit, 250.0);
    assert_eq!(
        ss("[j]\nss=bw_slope:1%\nss_dur=5\n").describe(),
        "bw_slope:1.000000%"
    );
}

#[test]
fn bad_steadystate_options_say_what_is_valid() {
    for (text, needle) in [
        ("[j]\nss=iops\n", "a limit after the criterion"),
        ("[j]\nss=lat:5%\n", "unknown criterion"),
        ("[j]\nss=iops:fast\n", "an IOPS limit"),
        ("[j]\nss=iops:x%\n", "a percentage of the mean"),
        ("[j]\nss_dur=1.5\n", "a whole number of seconds"),
        ("[j]\nss_dur=500ms\n", "a whole number of seconds"),
        ("[j]\nss_dur=2d\n", "from 0 to 86400"),
        ("[j]\nss_ramp=soon\n", "us/usec"),
    ] {
        let msg = kind(text).to_string();
        assert!(msg.contains(needle), "{text:?}: {msg}");
    }
}

#[test]
fn latency_target_options_parse_in_microseconds() {
    let j = &parse("[j]\nlatency_target=500\nlatency_window=1s\nlatency_percentile=99.9\n")
        .unwrap()
        .jobs[0];
    assert_eq!(j.latency_target_ns, 500_000);
    assert_eq!(j.latency_window_ns, 1_000_000_000);
    assert_eq!(j.latency_percentile, 99.9);
    let j = &parse("[j]\n").unwrap().jobs[0];
    assert_eq!((j.latency_target_ns, j.latency_percentile), (0, 100.0));
    for bad in ["0", "101", "high"] {
        let msg = kind(&format!("[j]\nlatency_percentile={bad}\n")).to_string();
        assert!(msg.contains("at most 100"), "{bad}: {msg}");
    }
    assert!(kind("[j]\nlatency_run=1\n")
        .to_string()
        .contains("not simulated"));
}

#[test]
fn minimum_rates_parse_per_direction() {
    let j = &parse("[j]\nrate_min=1m,2m\nrate_iops_min=,500\nratecycle=250\n")
        .unwrap()
        .jobs[0];
    assert_eq!(j.rate_min_bytes_per_s, [1 << 20, 2 << 20, 2 << 20]);
    assert_eq!(j.rate_iops_min, [0, 500, 500]);
    assert_eq!(j.rate_cycle_ns, 250_000_000);
    assert_eq!(parse("[j]\n").unwrap().jobs[0].rate_cycle_ns, 1_000_000_000);
    assert!(kind("[j]\nrate_cycle=0\n").to_string().contains("above 0"));
}

#[test]
fn histogram_log_options() {
    let j = &parse("[jj]\nwrite_hist_log\nlog_hist_msec=1000\nlog_hist_coarseness=3\n")
        .unwrap()
        .jobs[0];
    // A bare prefix is the job name, as for fio's other logs.
    assert_eq!(j.write_hist_log.as_deref(), Some("jj"));
    assert_eq!((j.log_hist_msec, j.log_hist_coarseness), (1000, 3));
    assert!(kind("[j]\nlog_hist_coarseness=7\n")
        .to_string()
        .contains("from 0 to 6"));
}

#[test]
fn write_iolog_takes_a_path_and_read_iolog_points_to_replay() {
    let j = &parse("[j]\nwrite_iolog=out/j.log\n").unwrap().jobs[0];
    assert_eq!(j.write_iolog.as_deref(), Some("out/j.log"));
    assert!(kind("[j]\nwrite_iolog=\n")
        .to_string()
        .contains("a file path"));
    assert!(kind("[j]\nread_iolog=a.log\n")
        .to_string()
        .contains("flashlab replay"));
}

#[test]
fn exitall_options_parse() {
    use crate::ExitWhat;
    let j = &parse("[j]\nexitall\nexitall_on_error=1\nexit_what=stonewall\n")
        .unwrap()
        .jobs[0];
    assert!(j.exitall && j.exitall_on_error);
    assert_eq!(j.exit_what, ExitWhat::Stonewall);
    assert_eq!(parse("[j]\n").unwrap().jobs[0].exit_what, ExitWhat::Group);
    assert!(kind("[j]\nexit_what=some\n")
        .to_string()
        .contains("group, stonewall or all"));
}

#[test]
fn iodepth_low_is_a_low_water_mark() {
    assert_eq!(
        parse("[j]\niodepth=16\niodepth_low=4\n").unwrap().jobs[0].iodepth_low,
        Some(4)
    );
    assert_eq!(parse("[j]\n").unwrap().jobs[0].iodepth_low, None);
}

#[test]
fn sync_and_fill_options() {
    let j = &parse("[j]\nfdatasync=8\nfsync_on_close=1\nfill_fs=1\n")
        .unwrap()
        .jobs[0];
    assert_eq!(j.fdatasync_every, 8);
    assert!(j.end_fsync && j.fill_device);
}

#[test]
fn percentile_switches_parse() {
    let j = &parse("[j]\nclat_percentiles=0\nlat_percentiles=1\nslat_percentiles\n")
        .unwrap()
        .jobs[0];
    assert_eq!(
        (j.clat_percentiles, j.lat_percentiles, j.slat_percentiles),
        (false, true, true)
    );
    let d = &parse("[j]\n").unwrap().jobs[0];
    assert_eq!(
        (d.clat_percentiles, d.lat_percentiles, d.slat_percentiles),
        (true, false, false)
    );
}

#[test]
fn log_offset_parses() {
    assert!(parse("[j]\nlog_offset=1\n").unwrap().jobs[0].log_offset);
    assert!(!parse("[j]\n").unwrap().jobs[0].log_offset);
}

#[test]
fn stats_off_parses() {
    assert!(!parse("[j]\nstats=0\n").unwrap().jobs[0].stats);
    assert!(parse("[j]\n").unwrap().jobs[0].stats);
}

#[test]
fn per_job_logs_parses() {
    assert!(!parse("[j]\nper_job_logs=0\n").unwrap().jobs[0].per_job_logs);
    assert!(parse("[j]\n").unwrap().jobs[0].per_job_logs);
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

#[test]
fn zoned_distribution_fills_missing_ranges_as_fio() {
    let f = parse("[j]\nrw=randread\nrandom_distribution=zoned:50/5:30/15:20/\n").unwrap();
    assert_eq!(
        f.jobs[0].random_distribution,
        RandomDistribution::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)])
    );
    // A zero range is missing too; the rest is shared in whole percents.
    let f = parse("[j]\nrandom_distribution=zoned:40/0:40/0:20/10\n").unwrap();
    assert_eq!(
        f.jobs[0].random_distribution,
        RandomDistribution::Zoned(vec![(40.0, 45.0), (40.0, 45.0), (20.0, 10.0)])
    );
    assert!(matches!(
        kind("[j]\nrandom_distribution=zoned:50/100:50/\n"),
        ParseErrorKind::InvalidValue { .. }
    ));
}

#[test]
fn filesize_is_the_region_and_size_the_io() {
    let f = parse("[j]\nsize=4g\nfilesize=1g\n").unwrap();
    assert_eq!(f.jobs[0].size, Some(SizeSpec::Bytes(1 << 30)));
    assert_eq!(f.jobs[0].io_size, Some(SizeSpec::Bytes(4 << 30)));
    let f = parse("[j]\nfilesize=1g\nio_size=2g\nsize=4g\n").unwrap();
    assert_eq!(f.jobs[0].io_size, Some(SizeSpec::Bytes(2 << 30)));
    let f = parse("[j]\nfilesize=1g\n").unwrap();
    assert_eq!(
        (f.jobs[0].size, f.jobs[0].io_size),
        (Some(SizeSpec::Bytes(1 << 30)), None)
    );
    let ParseErrorKind::InvalidValue { expected, .. } = kind("[j]\nfilesize=1g-2g\n") else {
        panic!()
    };
    assert!(expected.contains("single size"), "{expected}");
}

#[test]
fn wait_for_names_an_earlier_job() {
    let f = parse("[global]\nwait_for=a\n[a]\n[b]\n").unwrap();
    // The waitee itself does not wait (fio skips its own name).
    assert_eq!(f.jobs[0].wait_for, None);
    assert_eq!(f.jobs[1].wait_for.as_deref(), Some("a"));
    let e = parse("[b]\nwait_for=a\n[a]\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("wait_for"), "{e}");
    // The message also holds for jobs from the command line and other job files.
    assert!(
        e.to_string().contains("a job defined before this one"),
        "{e}"
    );
}

#[test]
fn new_simulated_options_parse() {
    let f = parse("[j]\nlog_max_value=1\nmax_latency=2ms,500\ndirectory=/tmp\n").unwrap();
    let j = &f.jobs[0];
    assert!(j.log_max_value);
    assert_eq!(j.max_latency_ns, [2_000_000, 500_000, 500_000]);
    assert!(matches!(
        kind("[j]\nlog_unix_epoch=1\n"),
        ParseErrorKind::NotSimulated { .. }
    ));
}

/// verify= and its helpers: the method only sets the check; the combinations flashlab cannot
/// run as fio does are refused at the verify line, naming them.
#[test]
fn verify_options_parse_and_unsupported_combinations_are_refused() {
    let f = parse(
        "[global]\nverify=crc32c\n[w]\nrw=randwrite\nverify_fatal=1\nverify_interval=512\n\
         verify_async=2\nverify_state_save=0\n[r]\nrw=read\ndo_verify=0\n[n]\nverify=0\n",
    )
    .expect("parses");
    let flags: Vec<_> = f.jobs.iter().map(|j| (j.verify, j.do_verify)).collect();
    assert_eq!(flags, vec![(true, true), (true, false), (false, true)]);
    assert!(f.jobs[0].verifies_writes());
    assert!(!f.jobs[1].verifies_writes());
    assert!(kind("[j]\nverify=sha9\n").to_string().contains("xxhash"));
    assert!(kind("[j]\nverify=pattern\n")
        .to_string()
        .contains("verify_pattern"));
    for (combo, named) in [
        ("rw=randrw", "randrw"),
        (
            "rw=write\ntime_based\nruntime=1s\nverify_backlog=8",
            "time_based",
        ),
        ("rw=write\nverify_backlog=8\niodepth=2", "iodepth"),
        (
            "rw=randwrite\nverify_backlog=8\nnorandommap",
            "verify_backlog",
        ),
        ("rw=write\nrate=1m", "rate"),
        ("rw=write\nthinktime=10", "thinktime"),
        ("rw=write\nramp_time=1s", "ramp_time"),
    ] {
        let err = parse(&format!("[j]\n{combo}\nverify=md5\n")).expect_err(combo);
        let text = err.to_string();
        assert!(text.starts_with("t.fio:"), "{text}");
        assert!(
            text.contains(named) && text.contains("not simulated"),
            "{text}"
        );
    }
    // A read-only job checks what it reads: nothing to refuse.
    assert!(parse("[j]\nrw=randread\nverify=md5\nrate=1m\n").is_ok());
}

#[test]
fn iodepth_batch_options_parse_with_their_aliases() {
    let f = parse("[j]\niodepth=32\niodepth_batch=0\niodepth_batch_complete=4\niodepth_batch_complete_max=16\n").unwrap();
    let j = &f.jobs[0];
    assert_eq!(j.iodepth_batch_submit, 0);
    assert_eq!(j.iodepth_batch_complete_min, 4);
    assert_eq!(j.iodepth_batch_complete_max, 16);
    let d = &parse("[j]\n").unwrap().jobs[0];
    assert_eq!(
        (
            d.iodepth_batch_submit,
            d.iodepth_batch_complete_min,
            d.iodepth_batch_complete_max
        ),
        (1, 1, 0)
    );
    let e = parse("[j]\niodepth_batch_submit=-1\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("iodepth_batch_submit"), "{e}");
}

#[test]
fn gtod_reduce_sets_the_disables_and_disable_lat_needs_disable_slat() {
    let j = &parse("[j]\ngtod_reduce=1\n").unwrap().jobs[0];
    assert!(j.disable_lat && j.disable_clat && j.disable_slat && j.disable_bw);
    assert!(!j.clat_percentiles);
    let j = &parse("[j]\ngtod_reduce=0\n").unwrap().jobs[0];
    assert!(!j.disable_lat && !j.disable_clat && j.clat_percentiles);
    let j = &parse("[j]\ndisable_slat=1\ndisable_lat=1\ndisable_bw=1\n")
        .unwrap()
        .jobs[0];
    assert!(j.disable_lat && j.disable_slat && j.disable_bw && !j.disable_clat);
    // fio 3.33 measures submission latency from an unset start time then.
    let e = parse("[j]\ndisable_lat=1\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("disable_slat"), "{e}");
    let e = parse("[j]\ngtod_reduce=1\ndisable_slat=0\n").unwrap_err();
    assert_eq!(e.line, 3);
    let e = parse("[j]\nlatency_target=1ms\ngtod_reduce=1\n").unwrap_err();
    assert!(e.to_string().contains("latency_target"), "{e}");
}

#[test]
fn unified_rw_reporting_takes_fios_names_and_codes() {
    for (v, code) in [
        ("none", 0),
        ("0", 0),
        ("mixed", 1),
        ("1", 1),
        ("both", 2),
        ("2", 2),
    ] {
        let f = parse(&format!("[j]\nunified_rw_reporting={v}\n")).unwrap();
        assert_eq!(f.jobs[0].unified_rw_reporting, code, "{v}");
    }
    let e = parse("[j]\nunified_rw_reporting=3\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("none, mixed, both"), "{e}");
}

#[test]
fn significant_figures_and_unit_base_parse() {
    let j = &parse("[j]\nsignificant_figures=6\nunit_base=1\n")
        .unwrap()
        .jobs[0];
    assert_eq!((j.significant_figures, j.unit_base_bits), (6, true));
    let j = &parse("[j]\nunit_base=8\n").unwrap().jobs[0];
    assert_eq!((j.significant_figures, j.unit_base_bits), (4, false));
    let e = parse("[j]\nsignificant_figures=11\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("significant_figures"), "{e}");
    assert!(parse("[j]\nunit_base=2\n").is_err());
}

#[test]
fn cpu_affinity_is_accepted_when_it_names_cpus() {
    // Host CPU placement changes no simulated I/O: any CPU numbers are taken (fio checks
    // them against the host's), an empty set is not (fio fails to set it).
    for ok in [
        "cpus_allowed=0",
        "cpus_allowed=0,5,8-15",
        "cpus_allowed=128-255",
        "cpumask=34",
        "cpumask=0x22",
        "cpus_allowed_policy=split",
    ] {
        assert!(parse(&format!("[j]\n{ok}\n")).is_ok(), "{ok}");
    }
    for bad in [
        "cpus_allowed=abc",
        "cpus_allowed=3-1",
        "cpus_allowed=1,,2",
        "cpus_allowed=",
        "cpumask=0",
        "cpus_allowed_policy=spread",
    ] {
        let e = parse(&format!("[j]\n{bad}\n")).unwrap_err();
        assert_eq!(e.line, 2, "{bad}");
        assert!(
            matches!(e.kind, ParseErrorKind::InvalidValue { .. }),
            "{bad}: {e}"
        );
    }
}
