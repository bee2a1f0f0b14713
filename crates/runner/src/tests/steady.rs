//! Runs that end or adapt on what they measure: fio's steady-state termination, the
//! latency-target depth search, and minimum rates.

use super::*;

/// A job with fio's steady-state detection on the fake device.
fn steady_job(name: &str, ss: flashlab_workload::SteadyState, runtime_s: u64) -> JobSpec {
    {
        let mut j = timed(name, 1, runtime_s * NS_PER_S);
        j.steadystate = ss;
        j
    }
}

fn iops_within(pct: f64, duration_s: u32, ramp_s: u64) -> flashlab_workload::SteadyState {
    flashlab_workload::SteadyState {
        metric: flashlab_workload::SteadyMetric::Iops,
        slope: false,
        limit: pct,
        percent: true,
        duration_s,
        ramp_ns: ramp_s * NS_PER_S,
    }
}

#[test]
fn a_steady_job_stops_once_its_window_meets_the_criterion() {
    // 100 us per I/O at QD1: 10,000 IOPS every second. Samples cover seconds 2-3, 3-4, ...;
    // the fifth fills the window at 7 s, and the job ends there instead of at 60 s.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let (result, s) = run_seeded(
        vec![steady_job("ss", iops_within(1.0, 5, 2), 60)],
        &mut dev,
        1,
    );
    assert_eq!(s[0].end_ns, 7 * NS_PER_S);
    let ss = result.jobs[0].steadystate().expect("a steady-state report");
    assert!(ss.attained);
    assert_eq!(ss.duration_s, 5);
    assert_eq!(ss.iops, [10_000; 5]);
    assert_eq!(ss.bw_bytes_per_s, [10_000 * 4096; 5]);
    assert_eq!(ss.criterion, 0.0);
    assert_eq!(ss.ss, "iops:1.000000%");
    assert_eq!(result.jobs[0].runtime_ms(0), 7_000);
}

#[test]
fn a_job_that_never_meets_the_criterion_runs_its_runtime() {
    // A limit of 0 is never met (the criterion must fall below it).
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let (result, s) = run_seeded(
        vec![steady_job("ss", iops_within(0.0, 3, 0), 10)],
        &mut dev,
        1,
    );
    assert_eq!(s[0].end_ns, 10 * NS_PER_S);
    let ss = result.jobs[0].steadystate().expect("a steady-state report");
    assert!(!ss.attained);
    assert_eq!(ss.iops, [10_000; 3]);
    // Without steadystate_duration there is no detection and no report.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let (result, _) = run_seeded(vec![timed("plain", 1, NS_PER_S)], &mut dev, 1);
    assert!(result.jobs[0].steadystate().is_none());
}

#[test]
fn a_reporting_group_is_judged_on_its_sum_and_stops_together() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = steady_job("grp", iops_within(1.0, 4, 0), 60);
        j.control.numjobs = 2;
        j.report.group_reporting = true;
        j
    };
    let (result, s) = run_seeded(vec![job], &mut dev, 1);
    assert_eq!((s[0].end_ns, s[1].end_ns), (4 * NS_PER_S, 4 * NS_PER_S));
    assert_eq!(result.jobs.len(), 1);
    let ss = result.jobs[0].steadystate().expect("a steady-state report");
    assert!(ss.attained);
    // Both clones' I/Os: 20,000 a second (the first second ends on a completion, which the
    // sample taken at that instant does not count yet).
    assert_eq!(ss.iops.len(), 4);
    for v in &ss.iops {
        assert_near(*v as f64, 20_000.0, 0.001, "group IOPS sample");
    }
}

#[test]
fn steady_state_options_that_differ_in_a_reporting_group_are_bad_input() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let a = {
        let mut j = steady_job("a", iops_within(1.0, 4, 0), 60);
        j.report.group_reporting = true;
        j
    };
    let b = {
        let mut j = steady_job("b", iops_within(2.0, 4, 0), 60);
        j.report.group_reporting = true;
        j
    };
    let err = crate::run_jobs(
        &file(vec![a, b]),
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.is_bad_input());
    let text = err.to_string();
    assert!(
        text.contains("job 'b'") && text.contains("reporting group"),
        "{text}"
    );
}

/// A job searching for the deepest queue that meets `target_us` of total latency.
fn lat_target_job(iodepth: u32, target_us: u64, percentile: f64) -> JobSpec {
    {
        let mut j = timed("lt", iodepth, 10 * NS_PER_S);
        j.latency.latency_target_ns = target_us * NS_PER_US;
        j.latency.latency_window_ns = 10 * NS_PER_MS;
        j.latency.latency_percentile = percentile;
        j
    }
}

#[test]
fn latency_target_finds_the_deepest_queue_meeting_it_and_reports_its_window() {
    // A 4 KiB transfer takes 10 us on the link and 10 us more in the device: at depth d
    // the link is the bottleneck and an I/O takes about 10 * d us (20 us at depth 1), so
    // 45 us is met up to depth 4. A window that starts after a drain begins with a burst of
    // d I/Os, the last of which waits for the others' transfers: 10 * (d + 1) us.
    let run = |percentile: f64| {
        let mut dev = FakeDevice::new(10 * NS_PER_US);
        dev.link_bytes_per_s = Some(4096 * 100_000);
        let (result, s) = run_seeded(vec![lat_target_job(64, 45, percentile)], &mut dev, 1);
        (job_json(&result, 0), s[0].clone(), dev.max_in_device)
    };
    // 99%: the search goes 1, 2, 4, 8 (miss), 6, 5 (misses), 4 and ends there.
    let (job, s, deepest) = run(99.0);
    assert_eq!(job["latency_depth"], 4);
    assert_eq!(job["latency_target"], 45_000);
    assert_eq!(job["latency_window"], 10_000);
    assert_eq!(deepest, 8);
    // The statistics are those of the final window at the depth found, at the link's 100K
    // IOPS: one I/O of the burst took 50 us, the rest 40 us.
    let p99 = job["read"]["clat_ns"]["percentile"]["99.000000"]
        .as_u64()
        .unwrap();
    let lat_max = job["read"]["lat_ns"]["max"].as_u64().unwrap();
    assert!(
        p99 <= 45_000 && lat_max <= 50_000,
        "p99 {p99}, max {lat_max}"
    );
    assert_near(
        job["read"]["iops"].as_f64().unwrap(),
        100_000.0,
        0.02,
        "iops",
    );
    let measured_ns = s.end_ns - s.measure_start_ns;
    assert!(
        (10 * NS_PER_MS..11 * NS_PER_MS).contains(&measured_ns),
        "{measured_ns}"
    );
    assert!(
        s.end_ns < NS_PER_S,
        "the search ended the job: {}",
        s.end_ns
    );
    // 100%: the burst after the drain fails depth 4 at its first slow I/O, so 3 it is.
    let (job, _, _) = run(100.0);
    assert_eq!(job["latency_depth"], 3);
    assert!(job["read"]["lat_ns"]["max"].as_u64().unwrap() <= 45_000);
}

#[test]
fn latency_target_unmet_at_depth_one_stops_the_job_with_etimedout() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let err = crate::run_jobs(
        &file(vec![lat_target_job(16, 50, 100.0)]),
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .unwrap_err();
    let RunError::Io { errors, result } = &err else {
        panic!("expected a job stopped by its latency target: {err}");
    };
    assert_eq!(errors[0].errno(), 110);
    assert!(
        err.to_string().contains("latency target of 50000 ns"),
        "{err}"
    );
    assert_eq!(job_json(result, 0)["error"], 110);
    // Below 100% a slow window at depth 1 is not fatal: the job stays at depth 1.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let (result, _) = run_seeded(vec![lat_target_job(16, 50, 99.0)], &mut dev, 1);
    let job = job_json(&result, 0);
    assert_eq!(
        (job["latency_depth"].as_u64(), job["error"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(dev.max_in_device, 1);
}

#[test]
fn steady_state_windows_are_bounded() {
    // 65,536 clones each keeping a day of samples would need 90 GB: refused, naming a way out.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = steady_job("many", iops_within(1.0, 86_400, 0), 60);
        j.control.numjobs = 100;
        j
    };
    let err = crate::run_jobs(
        &file(vec![job]),
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.is_bad_input());
    assert!(err.to_string().contains("group_reporting"), "{err}");
}

#[test]
fn a_rate_under_rate_iops_min_stops_the_job_with_eio_after_the_settling_time() {
    // 100 us per I/O at QD1: 10,000 IOPS. After fio's 2 s of settling a cycle starts; the
    // first cycle of 500 ms below 20,000 IOPS stops the job.
    let run = |min: u64| {
        let job = {
            let mut j = timed("floor", 1, 10 * NS_PER_S);
            j.rate.rate_iops_min = [min, 0, 0];
            j.rate.rate_cycle_ns = 500 * NS_PER_MS;
            j
        };
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        crate::run_jobs(
            &file(vec![job]),
            &mut dev,
            &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
            &mut |_| {},
        )
    };
    let err = run(20_000).unwrap_err();
    let RunError::Io { errors, result } = &err else {
        panic!("expected the job stopped by its minimum rate: {err}");
    };
    assert_eq!(errors[0].errno(), 5);
    assert_eq!(errors[0].time_ns, 2_500 * NS_PER_MS);
    assert!(
        err.to_string()
            .contains("rate_iops_min=20000 not met: 10000.0 IOPS of reads"),
        "{err}"
    );
    let job = job_json(result, 0);
    assert_eq!(job["error"], 5);
    assert_eq!(job["read"]["runtime"], 2_500);
    // A minimum the device meets changes nothing.
    let ok = run(9_000).expect("10,000 IOPS meet a 9,000 minimum");
    assert_eq!(job_json(&ok, 0)["read"]["runtime"], 10_000);
}
