//! Options that shape a job's I/O: sizes and offsets, buffers, think time, random
//! distributions, depths and batches, verify, latency targets, minimum rates, steady
//! state, exits and waits.

use super::*;

#[test]
fn io_size_takes_bytes_or_a_percentage_of_size() {
    let io_size =
        |v: &str| parse(&format!("[j]\nsize=50%\nio_size={v}\n")).map(|f| f.jobs[0].target.io_size);
    assert_eq!(io_size("1m"), Ok(Some(SizeSpec::Bytes(1 << 20))));
    assert_eq!(io_size("25%"), Ok(Some(SizeSpec::Fraction(0.25))));
    assert_eq!(io_size("100%"), Ok(Some(SizeSpec::Fraction(1.0))));
    assert_eq!(io_size("12.5%"), Ok(Some(SizeSpec::Fraction(0.125))));
    let f = parse("[j]\nio_limit=25%\n").unwrap();
    assert_eq!(f.jobs[0].target.io_size, Some(SizeSpec::Fraction(0.25)));
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
        .id
        .options_as_written
        .contains(&("io_size".to_string(), "25%".to_string())));
}

#[test]
fn sequential_skip_and_random_count() {
    let f = parse("[a]\nrw=write:64k\n[b]\nrw=randread:8\nrw_sequencer=identical\n").unwrap();
    assert_eq!(
        (
            f.jobs[0].io.rw_seq_skip_bytes,
            f.jobs[0].io.rw_sequence_count
        ),
        (65536, 1)
    );
    assert_eq!(
        (
            f.jobs[1].io.rw_seq_skip_bytes,
            f.jobs[1].io.rw_sequence_count
        ),
        (0, 8)
    );
    assert_eq!(f.jobs[1].io.rw_sequencer, RwSequencer::Identical);
}

#[test]
fn buffer_options_resolve_to_a_compressible_share_as_fio_fills_buffers() {
    let percent = |text: &str| parse(text).map(|f| f.jobs[0].buffers.compressible_percent);
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
        f.jobs[0].id.options_as_written,
        pairs(&[
            ("buffer_compress_chunk", "4k"),
            ("buffer_pattern", "0xdeadbeef"),
            ("refill_buffers", "1"),
        ])
    );
    assert_eq!(f.jobs[0].buffers.compressible_percent, 25);
    // Without any of them the job echoes nothing and stays at fio's random data.
    let mut plain = JobSpec::new("j", 1);
    // fio's default engine, psync, is synchronous.
    plain.engine.synchronous = true;
    assert_eq!(parse("[j]\n").unwrap().jobs[0], plain);
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
        j.rate.thinktime_blocks_type,
        ThinkBlocks::Complete,
        "fio's default"
    );
    assert_eq!(
        (j.rate.thinktime_blocks, j.rate.thinktime_blocks_set),
        (1, false)
    );
    assert_eq!(
        (j.rate.thinktime_iotime_ns, j.rate.rate_ignore_thinktime),
        (0, false)
    );
    let j = one(
        "[global]\nthinktime_blocks=8\n[j]\nthinktime=1ms\nthinktime_blocks_type=issue\n\
         thinktime_iotime=9\nrate_ignore_thinktime=1\n",
    )
    .unwrap();
    assert_eq!(j.rate.thinktime_blocks_type, ThinkBlocks::Issue);
    assert_eq!(
        (j.rate.thinktime_blocks, j.rate.thinktime_blocks_set),
        (8, true)
    );
    assert_eq!(
        j.rate.thinktime_iotime_ns, 9_000_000_000,
        "bare numbers are seconds"
    );
    assert!(j.rate.rate_ignore_thinktime);
    assert_eq!(
        one("[j]\nthinktime_iotime=250ms\n")
            .unwrap()
            .rate
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

#[test]
fn percentage_random_is_per_direction() {
    let f = parse("[j]\nrw=randrw\npercentage_random=80\n").unwrap();
    assert_eq!(f.jobs[0].io.percentage_random, [80, 80, 80]);
    let f = parse("[j]\nrw=randrw\npercentage_random=90,20\n").unwrap();
    assert_eq!(f.jobs[0].io.percentage_random, [90, 20, 20]);
    let f = parse("[j]\nrw=randrw\n").unwrap();
    assert_eq!(f.jobs[0].io.percentage_random, [100, 100, 100]);
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
    assert_eq!(j.latency.latency_target_ns, 500_000);
    assert_eq!(j.latency.latency_window_ns, 1_000_000_000);
    assert_eq!(j.latency.latency_percentile, 99.9);
    let j = &parse("[j]\n").unwrap().jobs[0];
    assert_eq!(
        (j.latency.latency_target_ns, j.latency.latency_percentile),
        (0, 100.0)
    );
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
    assert_eq!(j.rate.rate_min_bytes_per_s, [1 << 20, 2 << 20, 2 << 20]);
    assert_eq!(j.rate.rate_iops_min, [0, 500, 500]);
    assert_eq!(j.rate.rate_cycle_ns, 250_000_000);
    assert_eq!(
        parse("[j]\n").unwrap().jobs[0].rate.rate_cycle_ns,
        1_000_000_000
    );
    assert!(kind("[j]\nrate_cycle=0\n").to_string().contains("above 0"));
}

#[test]
fn exitall_options_parse() {
    use crate::ExitWhat;
    let j = &parse("[j]\nexitall\nexitall_on_error=1\nexit_what=stonewall\n")
        .unwrap()
        .jobs[0];
    assert!(j.control.exitall && j.control.exitall_on_error);
    assert_eq!(j.control.exit_what, ExitWhat::Stonewall);
    assert_eq!(
        parse("[j]\n").unwrap().jobs[0].control.exit_what,
        ExitWhat::Group
    );
    assert!(kind("[j]\nexit_what=some\n")
        .to_string()
        .contains("group, stonewall or all"));
}

#[test]
fn iodepth_low_is_a_low_water_mark() {
    assert_eq!(
        parse("[j]\niodepth=16\niodepth_low=4\n").unwrap().jobs[0]
            .engine
            .iodepth_low,
        Some(4)
    );
    assert_eq!(parse("[j]\n").unwrap().jobs[0].engine.iodepth_low, None);
}

#[test]
fn sync_and_fill_options() {
    let j = &parse("[j]\nfdatasync=8\nfsync_on_close=1\nfill_fs=1\n")
        .unwrap()
        .jobs[0];
    assert_eq!(j.sync.fdatasync_every, 8);
    assert!(j.sync.end_fsync && j.target.fill_device);
}

#[test]
fn zoned_distribution_fills_missing_ranges_as_fio() {
    let f = parse("[j]\nrw=randread\nrandom_distribution=zoned:50/5:30/15:20/\n").unwrap();
    assert_eq!(
        f.jobs[0].io.random_distribution,
        RandomDistribution::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)])
    );
    // A zero range is missing too; the rest is shared in whole percents.
    let f = parse("[j]\nrandom_distribution=zoned:40/0:40/0:20/10\n").unwrap();
    assert_eq!(
        f.jobs[0].io.random_distribution,
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
    assert_eq!(f.jobs[0].target.size, Some(SizeSpec::Bytes(1 << 30)));
    assert_eq!(f.jobs[0].target.io_size, Some(SizeSpec::Bytes(4 << 30)));
    let f = parse("[j]\nfilesize=1g\nio_size=2g\nsize=4g\n").unwrap();
    assert_eq!(f.jobs[0].target.io_size, Some(SizeSpec::Bytes(2 << 30)));
    let f = parse("[j]\nfilesize=1g\n").unwrap();
    assert_eq!(
        (f.jobs[0].target.size, f.jobs[0].target.io_size),
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
    assert_eq!(f.jobs[0].control.wait_for, None);
    assert_eq!(f.jobs[1].control.wait_for.as_deref(), Some("a"));
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
    assert!(j.log.log_max_value);
    assert_eq!(j.latency.max_latency_ns, [2_000_000, 500_000, 500_000]);
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
    let flags: Vec<_> = f
        .jobs
        .iter()
        .map(|j| (j.verification.verify, j.verification.do_verify))
        .collect();
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
        (
            "ioengine=libaio\nrw=write\nverify_backlog=8\niodepth=2",
            "iodepth",
        ),
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
    assert_eq!(j.engine.iodepth_batch_submit, 0);
    assert_eq!(j.engine.iodepth_batch_complete_min, 4);
    assert_eq!(j.engine.iodepth_batch_complete_max, 16);
    let d = &parse("[j]\n").unwrap().jobs[0];
    assert_eq!(
        (
            d.engine.iodepth_batch_submit,
            d.engine.iodepth_batch_complete_min,
            d.engine.iodepth_batch_complete_max
        ),
        (1, 1, 0)
    );
    let e = parse("[j]\niodepth_batch_submit=-1\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("iodepth_batch_submit"), "{e}");
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

#[test]
fn a_synchronous_engine_runs_at_depth_one_with_fio_s_note_per_clone() {
    // fio's default engine is psync: a depth above 1 is fio's depth 1, noted per clone.
    let f = parse("[a]\niodepth=8\nnumjobs=4\n[b]\nioengine=libaio\niodepth=8\n[c]\niodepth=1\n[d]\nioengine=pvsync2\niodepth=2\n").unwrap();
    let depth = |j: &JobSpec| {
        (
            j.engine.synchronous,
            j.engine.iodepth,
            j.engine.iodepth_capped_from,
        )
    };
    assert_eq!(depth(&f.jobs[0]), (true, 1, Some(8)));
    assert_eq!(depth(&f.jobs[1]), (false, 8, None));
    assert_eq!(depth(&f.jobs[2]), (true, 1, None));
    assert_eq!(depth(&f.jobs[3]), (true, 1, Some(2)));
    assert_eq!(f.fio_warnings(), vec![SYNCHRONOUS_DEPTH_NOTE; 5]);
    // Set in [global], the engine reaches every job.
    let f = parse("[global]\nioengine=io_uring\n[a]\niodepth=32\n").unwrap();
    assert_eq!(depth(&f.jobs[0]), (false, 32, None));
    assert!(f.fio_warnings().is_empty());
    // fio's option fixups warn before any clone starts: verify's warning comes first.
    let f = parse(
        "[a]\niodepth=4\n[b]\nioengine=libaio\nrw=write\nverify=crc32c\ntime_based=1\nruntime=1\n",
    )
    .unwrap();
    assert_eq!(
        f.fio_warnings(),
        vec![VERIFY_NEVER_READS_WARNING, SYNCHRONOUS_DEPTH_NOTE]
    );
}
