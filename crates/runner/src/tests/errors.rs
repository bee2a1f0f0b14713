//! Errors and stops: devices that never answer, bad input, a write refused mid-run,
//! `exitall` and `exitall_on_error`, and `max_latency`.

use super::*;

#[test]
fn zero_latency_device_is_stopped() {
    let mut dev = FakeDevice::new(0);
    let mut options = RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off);
    options.limits.max_events_at_same_time = 10_000;
    let err = run_with_summaries(&file(vec![timed("z", 1, NS_PER_MS)]), &mut dev, &options)
        .expect_err("a device that takes no time must not hang the run");
    assert!(
        matches!(err, RunError::NoProgress { time_ns: 0, .. }),
        "{err}"
    );
}

#[test]
fn an_io_that_never_completes_is_an_error() {
    let mut dev = FakeDevice::new(2 * 3600 * NS_PER_S);
    let err = run_with_summaries(
        &file(vec![spec("late")]),
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
    )
    .expect_err("error");
    assert!(matches!(err, RunError::BadCompletion { .. }), "{err}");
}

#[test]
fn time_based_without_runtime_is_bad_input() {
    let job = {
        let mut j = spec("forever");
        j.time.time_based = true;
        j
    };
    let err = run_with_summaries(
        &file(vec![job]),
        &mut FakeDevice::new(1000),
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
    )
    .expect_err("error");
    assert!(err.is_bad_input());
    assert_eq!(
        err.to_string(),
        "test.fio:1: job 'forever': time_based needs a runtime (e.g. runtime=60s), or the job never ends"
    );
}

/// A drive that turns read-only stops the job whose write it refuses, as fio stops a job at
/// an I/O error: that job's in-flight I/Os complete and its result carries errno 30; the
/// other jobs run to their end, and the run reports the error with the whole result.
#[test]
fn a_refused_write_stops_its_job_with_an_error_and_the_others_run_on() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    dev.read_only_after_writes = Some(1000);
    let writer = {
        let mut j = timed("w", 8, 100 * NS_PER_MS);
        j.io.rw = RwPattern::RandWrite;
        j
    };
    let reader = timed("r", 4, 100 * NS_PER_MS);
    let err = crate::run_jobs(
        &file(vec![writer, reader]),
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .unwrap_err();
    let RunError::Io { errors, result } = &err else {
        panic!("{err}");
    };
    assert_eq!(errors.len(), 1);
    let e = &errors[0];
    assert_eq!((e.job.as_str(), e.kind, e.errno()), ("w", "write", 30));
    // 1,000 writes at 8 per 100 us: refused at 12.5 ms.
    assert_near(e.time_ns as f64, 12.5e6, 0.01, "time of the refusal");
    assert!(
        err.to_string().contains("job 'w'") && err.to_string().contains("read-only"),
        "{err}"
    );
    assert!(!err.is_bad_input());
    assert_eq!(dev.kinds[1], 1000);
    let (w, r) = (&result.jobs[0], &result.jobs[1]);
    assert_eq!((w.error(), r.error()), (30, 0));
    assert_eq!(w.total_ios(1), 1000);
    // The reader ran its 100 ms: 4 slots of 100 us.
    assert_near(r.total_ios(0) as f64, 4000.0, 0.01, "reads");
    let io_errors = &result.flashlab["io_errors"];
    assert_eq!(io_errors[0]["errno"], 30);
    assert_eq!(io_errors[0]["job"], "w");
}

#[test]
fn exitall_stops_the_group_when_a_job_ends() {
    use flashlab_workload::ExitWhat;
    // A short writer beside a 10 s reader: with exitall the reader stops when the writer
    // is done (100 I/Os at 100 us = 10 ms); without it, it runs its 10 s.
    let jobs = |exitall: bool| {
        let writer = {
            let mut j = spec("w");
            j.io.rw = RwPattern::RandWrite;
            j.target.number_ios = Some(100);
            j.control.exitall = exitall;
            j
        };
        vec![timed("r", 1, 10 * NS_PER_S), writer]
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(jobs(true), &mut dev);
    assert_eq!(s[1].end_ns, 10 * NS_PER_MS);
    assert_eq!(s[0].end_ns, 10 * NS_PER_MS);
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    assert_eq!(run(jobs(false), &mut dev)[0].end_ns, 10 * NS_PER_S);
    // exit_what=all: the jobs after a stonewall never run.
    let first = {
        let mut j = spec("first");
        j.target.number_ios = Some(10);
        j.control.exitall = true;
        j.control.exit_what = ExitWhat::All;
        j
    };
    let later = {
        let mut j = timed("later", 1, NS_PER_S);
        j.control.stonewall = true;
        j
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(vec![first.clone(), later.clone()], &mut dev);
    assert_eq!(s[1].measured_ios, [0; 3]);
    assert_eq!(dev.kinds[0], 10);
    // exit_what=group leaves the next group alone.
    let first = {
        let mut j = first;
        j.control.exit_what = ExitWhat::Group;
        j
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(vec![first, later], &mut dev);
    assert_eq!(s[1].measured_ios[0], 10_000);
}

#[test]
fn exitall_on_error_stops_the_group_when_a_job_fails() {
    let writer = {
        let mut j = timed("w", 1, 10 * NS_PER_S);
        j.io.rw = RwPattern::RandWrite;
        j.control.exitall_on_error = true;
        j
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    dev.read_only_after_writes = Some(50);
    let err = crate::run_jobs(
        &file(vec![timed("r", 1, 10 * NS_PER_S), writer]),
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .unwrap_err();
    let RunError::Io { result, .. } = &err else {
        panic!("the writer stops at the read-only drive: {err}");
    };
    // The reader stopped with the writer, after about 50 writes' time (5 ms), not 10 s.
    let reader = job_json(result, 0);
    assert!(reader["read"]["runtime"].as_u64().unwrap() <= 6, "{reader}");
    assert_eq!(reader["error"], 0);
}

/// fio's `max_latency`: the first measured I/O slower than it stops the job with ETIMEDOUT
/// (110), counted in the results; a limit the I/Os meet changes nothing.
#[test]
fn max_latency_stops_a_job_with_etimedout() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let slow = {
        let mut j = timed("slow", 1, 10 * NS_PER_MS);
        j.latency.max_latency_ns = [50 * NS_PER_US, 0, 0];
        j
    };
    let err = crate::run_jobs(
        &file(vec![slow]),
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .unwrap_err();
    let RunError::Io { errors, result } = &err else {
        panic!("{err}");
    };
    assert_eq!((errors[0].kind, errors[0].errno()), ("read", 110));
    assert!(err.to_string().contains("max_latency"), "{err}");
    assert_eq!(result.jobs[0].error(), 110);
    assert_eq!(result.jobs[0].total_ios(0), 1);
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let met = {
        let mut j = timed("met", 1, 10 * NS_PER_MS);
        j.latency.max_latency_ns = [NS_PER_MS, 0, 0];
        j
    };
    let s = run(vec![met], &mut dev);
    assert_near(s[0].measured_ios[0] as f64, 100.0, 0.01, "ios");
}

/// fio checks `max_latency` inside `if (!td->o.disable_lat)` (`account_io_completion`): a
/// job that measures no total latency runs on past the limit.
#[test]
fn max_latency_is_not_checked_without_total_latency() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let slow = {
        let mut j = timed("slow", 1, 10 * NS_PER_MS);
        j.latency.max_latency_ns = [50 * NS_PER_US, 0, 0];
        j.report.disable_lat = true;
        j.report.disable_slat = true;
        j
    };
    let (result, s) = run_seeded(vec![slow], &mut dev, 1);
    assert_near(s[0].measured_ios[0] as f64, 100.0, 0.01, "ios");
    let j = job_json(&result, 0);
    assert_eq!(j["error"], 0);
    assert_eq!(j["read"]["lat_ns"]["N"], 0);
    assert_eq!(j["read"]["slat_ns"]["N"], 0);
    assert_eq!(j["read"]["clat_ns"]["N"], 100);
}
