//! fio's verify read-back: its order (by offset or as written), loops, runtimes, lost data,
//! refused combinations, `verify_backlog`, and time-based verify jobs.

use super::*;

/// Runs `text` on a fake device that keeps every request; returns the run (or its error) and
/// the (kind index, offset) of each request in submission order.
fn run_logged(
    text: &str,
    lost_offset_bytes: Option<u64>,
) -> (
    Result<flashlab_report::RunResult, RunError>,
    Vec<(usize, u64)>,
) {
    let file = flashlab_workload::parse_str(text, "t.fio", &|_| None).expect("job file");
    let mut dev = FakeDevice::new(20 * NS_PER_US);
    dev.submitted = Some(Vec::new());
    dev.lost_offset_bytes = lost_offset_bytes;
    let result = crate::run_jobs(
        &file,
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    );
    (result, dev.submitted.take().unwrap_or_default())
}

/// Offsets of the requests of one kind index.
fn offsets_of(log: &[(usize, u64)], kind: usize) -> Vec<u64> {
    log.iter().filter(|e| e.0 == kind).map(|e| e.1).collect()
}

/// Directions as runs: (kind index, count) for each stretch of one kind.
fn runs_of(log: &[(usize, u64)]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &(k, _) in log {
        match runs.last_mut() {
            Some((last, n)) if *last == k => *n += 1,
            _ => runs.push((k, 1)),
        }
    }
    runs
}

/// fio's verify phase: after the writes, each block written is read back; sequential writes
/// in offset order, random writes with the random map in the order written (fio's list).
#[test]
fn verify_reads_back_sequential_writes_by_offset_and_random_ones_as_written() {
    let (run, log) = run_logged(
        "[j]\nioengine=libaio\nrw=write\nsize=256k\nverify=crc32c\niodepth=4\n",
        None,
    );
    let run = run.expect("run");
    assert_eq!(runs_of(&log), vec![(1, 64), (0, 64)]);
    assert_eq!(offsets_of(&log, 0), offsets_of(&log, 1));
    let job = &run.jobs[0];
    assert_eq!((job.total_ios(0), job.total_ios(1)), (64, 64));
    assert_eq!(job.io_bytes(0), 256 * 1024);

    let (run, log) = run_logged("[j]\nrw=randwrite\nsize=256k\nverify=md5\n", None);
    run.expect("run");
    assert_eq!(runs_of(&log), vec![(1, 64), (0, 64)]);
    let (w, r) = (offsets_of(&log, 1), offsets_of(&log, 0));
    assert_eq!(r, w, "issue order");
    let mut sorted = w.clone();
    sorted.sort_unstable();
    assert_ne!(w, sorted, "the writes were random");
}

/// Without the random map (norandommap, a skewed distribution, lfsr) fio keeps the writes by
/// offset, a later write to a block replacing the earlier one: each block written is read
/// back once, in offset order.
#[test]
fn verify_without_a_random_map_reads_each_block_once_by_offset() {
    for extra in [
        "norandommap",
        "random_distribution=zipf:1.2",
        "random_generator=lfsr",
    ] {
        let text = format!("[j]\nrw=randwrite\nsize=256k\nio_size=512k\nverify=crc32c\n{extra}\n");
        let text = if extra == "norandommap" {
            text
        } else {
            text.replace("io_size=512k\n", "")
        };
        let (run, log) = run_logged(&text, None);
        run.expect("run");
        let (w, r) = (offsets_of(&log, 1), offsets_of(&log, 0));
        let distinct: BTreeSet<u64> = w.iter().copied().collect();
        // lfsr, like the random map, visits each block once; the others overwrite some.
        let lfsr = extra.contains("lfsr");
        assert_eq!(
            distinct.len() < w.len(),
            !lfsr,
            "{extra}: blocks overwritten"
        );
        assert_eq!(r, distinct.into_iter().collect::<Vec<_>>(), "{extra}");
        assert_eq!(runs_of(&log).len(), 2, "{extra}: writes, then reads");
    }
}

/// Each loop writes and then reads back; do_verify=0 and a reading job issue no reads of
/// their own.
#[test]
fn verify_reads_back_after_every_loop_and_not_with_do_verify_off() {
    let (run, log) = run_logged(
        "[j]\nrw=randwrite\nsize=128k\nloops=3\nverify=crc32c\nend_fsync=1\n",
        None,
    );
    run.expect("run");
    // Each loop's writes, its end_fsync (kind 3), then its reads.
    assert_eq!(
        runs_of(&log),
        vec![
            (1, 32),
            (3, 1),
            (0, 32),
            (1, 32),
            (3, 1),
            (0, 32),
            (1, 32),
            (3, 1),
            (0, 32)
        ]
    );
    let (w, r) = (offsets_of(&log, 1), offsets_of(&log, 0));
    assert_eq!(r, w, "each loop reads back its own writes in order");

    let (run, log) = run_logged(
        "[j]\nrw=write\nsize=128k\nverify=crc32c\ndo_verify=0\n",
        None,
    );
    assert_eq!(run.expect("run").jobs[0].total_ios(0), 0);
    assert_eq!(runs_of(&log), vec![(1, 32)]);
    let (run, log) = run_logged("[j]\nrw=randread\nsize=128k\nverify=crc32c\n", None);
    assert_eq!(run.expect("run").jobs[0].total_ios(0), 32);
    assert_eq!(runs_of(&log), vec![(0, 32)]);
}

/// fio accounts each phase's time to its direction: the reads' runtime is the read-back's,
/// the writes' the write phase's (20 us per I/O at depth 1 on the fake device).
#[test]
fn verify_phases_count_their_own_runtime() {
    let (run, _) = run_logged("[j]\nrw=write\nsize=4m\nverify=crc32c\n", None);
    let run = run.expect("run");
    let job = &run.jobs[0];
    // 1024 I/Os of 20 us each way: 20.48 ms, rounded up to 21.
    assert_eq!((job.runtime_ms(0), job.runtime_ms(1)), (21, 21));
    assert_near(
        job.iops(0),
        1024.0 / 0.021,
        0.001,
        "read IOPS over the read phase",
    );
}

/// A read-back of data the drive lost fails the job as fio fails a read (EIO), with its
/// results kept.
#[test]
fn verify_read_of_lost_data_stops_the_job_with_eio() {
    let (run, log) = run_logged("[j]\nrw=write\nsize=128k\nverify=crc32c\n", Some(64 * 1024));
    let Err(RunError::Io { errors, result }) = run else {
        panic!("the read of lost data fails the job");
    };
    assert_eq!((errors[0].kind, errors[0].errno()), ("read", 5));
    assert_eq!(result.jobs[0].error(), 5);
    assert_eq!(result.jobs[0].total_ios(0), 16, "the reads before it");
    assert_eq!(offsets_of(&log, 0).len(), 16);
}

/// Verify workloads flashlab cannot reproduce as fio runs them are refused, naming why.
#[test]
fn verify_combinations_not_simulated_are_refused() {
    let file = flashlab_workload::parse_str(
        "[j]\nrw=write\nsize=256k\nio_size=1m\nverify=crc32c\n",
        "t.fio",
        &|_| None,
    )
    .expect("job file");
    let mut dev = FakeDevice::new(NS_PER_US);
    let err = crate::run_jobs(
        &file,
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .expect_err("refused");
    assert!(err.is_bad_input());
    let text = err.to_string();
    assert!(
        text.contains("t.fio:1") && text.contains("io_size"),
        "{text}"
    );
    let file = flashlab_workload::parse_str(
        "[j]\nrw=write\nbsrange=4k-16k\nsize=256k\nverify=crc32c\n",
        "t.fio",
        &|_| None,
    )
    .expect("job file");
    let err = crate::run_jobs(
        &file,
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .expect_err("refused");
    assert!(err.to_string().contains("bsrange"), "{err}");
}

/// verify_backlog reads back while writing as fio 3.33 does (checked with write_iolog): a
/// batch each time a multiple of the backlog is logged, the oldest writes first, the rest in
/// the verify phase; a batch longer than the backlog goes on after each write, into the next
/// loop.
#[test]
fn verify_backlog_interleaves_batches_as_fio() {
    let w = |n| (1, n);
    let r = |n| (0, n);
    let cases: [(&str, Vec<(usize, usize)>); 4] = [
        ("size=256k\nverify_backlog=16", [w(16), r(16)].repeat(4)),
        (
            "size=256k\nverify_backlog=16\nverify_backlog_batch=8",
            [vec![w(16)], [r(8), w(8)].repeat(6), vec![r(16)]].concat(),
        ),
        (
            "size=256k\nverify_backlog=10",
            [[w(10), r(10)].repeat(6), vec![w(4), r(4)]].concat(),
        ),
        (
            "size=64k\nverify_backlog=16\nverify_backlog_batch=24\nloops=2",
            [vec![w(16), r(16)], [w(1), r(1)].repeat(8), vec![w(8), r(8)]].concat(),
        ),
    ];
    for (extra, want) in cases {
        let (run, log) = run_logged(
            &format!("[j]\nrw=randwrite\nverify=crc32c\n{extra}\n"),
            None,
        );
        run.expect("run");
        assert_eq!(runs_of(&log), want, "{extra}");
        // Each read is of the oldest write not yet read.
        assert_eq!(offsets_of(&log, 0), offsets_of(&log, 1), "{extra}");
    }
}

/// The backlog reads take the write phase's time (fio 3.33 adds do_io's time to reads only
/// for reading jobs): the read runtime is the final verify phase's.
#[test]
fn verify_backlog_reads_count_in_the_write_runtime() {
    let (run, _) = run_logged(
        "[j]\nrw=write\nsize=4m\nverify=crc32c\nverify_backlog=10\n",
        None,
    );
    let run = run.expect("run");
    let job = &run.jobs[0];
    assert_eq!((job.total_ios(0), job.total_ios(1)), (1024, 1024));
    // 1024 writes and 1020 backlog reads of 20 us: 40.88 ms; 4 reads in the verify phase.
    assert_eq!((job.runtime_ms(0), job.runtime_ms(1)), (1, 41));
}

/// time_based with verify: fio warns and writes until the runtime is over, reading nothing.
#[test]
fn verify_with_time_based_only_writes() {
    let text = "[j]\nrw=randwrite\nsize=256k\nverify=crc32c\ntime_based\nruntime=10ms\n";
    let file = flashlab_workload::parse_str(text, "t.fio", &|_| None).expect("job file");
    assert_eq!(
        file.fio_warnings(),
        vec![flashlab_workload::VERIFY_NEVER_READS_WARNING]
    );
    let (run, log) = run_logged(text, None);
    let run = run.expect("run");
    assert_eq!(offsets_of(&log, 0).len(), 0);
    assert_eq!(run.jobs[0].total_ios(1), 500);
    assert_eq!(run.jobs[0].runtime_ms(0), 0);
}
