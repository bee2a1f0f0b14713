//! Budgets, phases and groups: ramp, runtime and size budgets, stonewall phases and
//! reporting groups, seeds, start delays and `wait_for`, what is measured and reported
//! (sample windows, `stats=0`, `disable_clat`), and a property test of size-bound jobs.

use super::*;

#[test]
fn ramp_time_is_excluded_and_runtime_respected() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("ramp", 1, 100 * NS_PER_MS);
        j.time.ramp_time_ns = 50 * NS_PER_MS;
        j
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].measure_start_ns, 50 * NS_PER_MS);
    assert_eq!(s[0].end_ns, 150 * NS_PER_MS);
    assert_near(s[0].measured_ios[0] as f64, 1000.0, 0.002, "measured ios");
    assert_near(dev.kinds[0] as f64, 1500.0, 0.002, "all ios");
}

#[test]
fn runtime_caps_a_job_that_is_not_time_based() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = spec("capped");
        j.time.runtime_ns = Some(10 * NS_PER_MS);
        j
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].end_ns, 10 * NS_PER_MS);
    assert_near(s[0].measured_ios[0] as f64, 100.0, 0.01, "ios");
}

#[test]
fn size_budget_ends_the_job() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = spec("budget");
        j.target.size = Some(SizeSpec::Bytes(1 << 20));
        j.engine.iodepth = 4;
        j
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].measured_ios[0], 256);
    assert_eq!(s[0].measured_bytes[0], 1 << 20);
    assert_eq!(s[0].end_ns, 64 * 100 * NS_PER_US);
}

#[test]
fn stonewall_orders_phases_and_new_group_only_regroups() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let a = {
        let mut j = timed("a", 2, 10 * NS_PER_MS);
        j.control.numjobs = 2;
        j
    };
    let b = {
        let mut j = timed("b", 1, 10 * NS_PER_MS);
        j.control.stonewall = true;
        j
    };
    let c = {
        let mut j = timed("c", 1, 5 * NS_PER_MS);
        j.report.new_group = true;
        j
    };
    let s = run(vec![a, b, c], &mut dev);
    let ids: Vec<(u32, u32, usize)> = s
        .iter()
        .map(|c| (c.job_index, c.groupid, c.phase))
        .collect();
    assert_eq!(ids, vec![(1, 0, 0), (2, 0, 0), (3, 1, 1), (4, 2, 1)]);
    assert_eq!(s[0].start_ns, 0);
    assert_eq!(s[1].start_ns, 0);
    // b waits for both clones of a; c runs beside b.
    assert_eq!(s[2].start_ns, 10 * NS_PER_MS);
    assert_eq!(s[3].start_ns, 10 * NS_PER_MS);
    assert_eq!(s[3].end_ns, 15 * NS_PER_MS);
}

#[test]
fn group_reporting_merges_clones() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let grouped = {
        let mut j = timed("g", 1, NS_PER_MS);
        j.control.numjobs = 3;
        j.report.group_reporting = true;
        j
    };
    let (result, _) = run_seeded(vec![grouped.clone()], &mut dev, 1);
    assert_eq!(result.jobs.len(), 1);
    // Three clones at depth 1, 10 I/Os each in 1 ms.
    assert_eq!(result.jobs[0].total_ios(0), 30);
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let apart = {
        let mut j = grouped;
        j.report.group_reporting = false;
        j
    };
    let (result, _) = run_seeded(vec![apart], &mut dev, 1);
    assert_eq!(result.jobs.len(), 3);
}

#[test]
fn same_seed_same_run_and_seed_matters() {
    let jobs = || {
        vec![{
            let mut j = timed("det", 4, 200 * NS_PER_MS);
            j.rate.rate_iops = [5000, 0, 0];
            j.rate.rate_process = RateProcess::Poisson;
            j.control.numjobs = 2;
            j
        }]
    };
    let (r1, s1) = run_seeded(jobs(), &mut FakeDevice::new(50 * NS_PER_US), 7);
    let (r2, s2) = run_seeded(jobs(), &mut FakeDevice::new(50 * NS_PER_US), 7);
    let (_, s3) = run_seeded(jobs(), &mut FakeDevice::new(50 * NS_PER_US), 8);
    assert_eq!(s1, s2);
    assert_eq!(r1.flashlab, r2.flashlab);
    assert_ne!(s1, s3);
}

#[test]
fn startdelay_shifts_the_whole_job() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let late = {
        let mut j = timed("late", 1, 10 * NS_PER_MS);
        j.time.startdelay_ns = 5 * NS_PER_MS;
        j.time.ramp_time_ns = NS_PER_MS;
        j
    };
    let s = run(vec![timed("early", 1, 10 * NS_PER_MS), late], &mut dev);
    assert_eq!(s[1].start_ns, 5 * NS_PER_MS);
    assert_eq!(s[1].measure_start_ns, 6 * NS_PER_MS);
    assert_eq!(s[1].end_ns, 16 * NS_PER_MS);
    assert_near(s[1].measured_ios[0] as f64, 100.0, 0.01, "ios");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the mix of depth, clones, device queue limit, pacing, think time and
        /// flushes, a size-bound job does exactly its I/Os, never overfills the device and
        /// submits in time order.
        #[test]
        fn every_budgeted_io_completes(
            iodepth in 1u32..24,
            numjobs in 1u32..4,
            qd_limit in 1u32..32,
            rate_iops in prop_oneof![Just(0u64), 1_000u64..50_000],
            poisson in any::<bool>(),
            thinktime_us in prop_oneof![Just(0u64), 1u64..200],
            thinktime_blocks in 1u32..6,
            fsync_every in 0u32..5,
            stonewall in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut dev = FakeDevice::new(30 * NS_PER_US);
            dev.qd_limit = qd_limit;
            dev.link_bytes_per_s = Some(2_000_000_000);
            let a = {
                let mut j = spec("a");
                j.io.rw = RwPattern::RandWrite;
                j.target.size = Some(SizeSpec::Bytes(256 << 10));
                j.engine.iodepth = iodepth;
                j.control.numjobs = numjobs;
                j.rate.rate_iops = [rate_iops; 3];
                j.rate.rate_process = if poisson { RateProcess::Poisson } else { RateProcess::Linear };
                j.rate.thinktime_ns = thinktime_us * NS_PER_US;
                j.rate.thinktime_blocks = thinktime_blocks;
                j.sync.fsync_every = fsync_every;
                j
            };
            let b = {
                let mut j = timed("b", 1, 5 * NS_PER_MS);
                j.control.stonewall = stonewall;
                j.engine.iodepth = iodepth.div_ceil(2);
                j
            };
            let (_, s) = run_seeded(vec![a, b], &mut dev, seed);
            prop_assert!(dev.max_in_device <= qd_limit as usize);
            for c in &s[..numjobs as usize] {
                prop_assert_eq!(c.measured_ios[1], 64);
                let flushes = if fsync_every > 0 { 64 / fsync_every as u64 } else { 0 };
                prop_assert_eq!(c.flushes, flushes);
            }
            let b = s.last().unwrap();
            prop_assert_eq!(b.end_ns - b.start_ns, 5 * NS_PER_MS);
            if stonewall {
                let a_end = s[..numjobs as usize].iter().map(|c| c.end_ns).max().unwrap();
                prop_assert!(b.start_ns >= a_end);
            } else {
                prop_assert_eq!(b.start_ns, 0);
            }
        }
    }
}

#[test]
fn bwavgtime_and_iopsavgtime_set_the_sample_windows() {
    let run = |bw_ms: Option<u64>, iops_ms: Option<u64>| {
        let job = {
            let mut j = timed("avg", 1, NS_PER_S);
            j.log.bw_avg_ms = bw_ms;
            j.log.iops_avg_ms = iops_ms;
            j
        };
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let (result, _) = run_seeded(vec![job], &mut dev, 1);
        let j = job_json(&result, 0);
        (
            j["read"]["bw_samples"].as_u64().unwrap(),
            j["read"]["iops_samples"].as_u64().unwrap(),
        )
    };
    // fio's 500 ms by default: two samples in a second.
    assert_eq!(run(None, None), (2, 2));
    assert_eq!(run(Some(100), Some(250)), (10, 4));
}

#[test]
fn a_job_with_stats_off_runs_but_is_not_reported() {
    let background = {
        let mut j = timed("noise", 4, NS_PER_S);
        j.report.stats = false;
        j
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let (result, s) = run_seeded(
        vec![timed("measured", 1, NS_PER_S), background],
        &mut dev,
        1,
    );
    assert_eq!(result.jobs.len(), 1);
    assert_eq!(result.jobs[0].jobname(), "measured");
    // It ran all the same.
    assert!(s[1].measured_ios[0] > 30_000, "{:?}", s[1].measured_ios);
}

/// fio's `wait_for`: a job starts once every clone of the named job is done, while the
/// jobs beside it in the phase start at once.
#[test]
fn wait_for_starts_a_job_when_every_clone_of_its_waitee_is_done() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let a = {
        let mut j = timed("a", 1, 10 * NS_PER_MS);
        j.control.numjobs = 2;
        j
    };
    let b = {
        let mut j = timed("b", 1, 5 * NS_PER_MS);
        j.control.wait_for = Some("a".into());
        j
    };
    let c = timed("c", 1, 5 * NS_PER_MS);
    let d = {
        let mut j = timed("d", 1, 5 * NS_PER_MS);
        j.control.wait_for = Some("c".into());
        j.time.startdelay_ns = 8 * NS_PER_MS;
        j
    };
    let s = run(vec![a, b, c, d], &mut dev);
    let starts: Vec<u64> = s.iter().map(|c| c.start_ns).collect();
    // b after both clones of a; d after c, at its startdelay from the phase start.
    assert_eq!(
        starts,
        vec![0, 0, 10 * NS_PER_MS, 0, 8 * NS_PER_MS],
        "start times"
    );
    assert_eq!(s[2].end_ns, 15 * NS_PER_MS);
    assert!(s.iter().all(|c| c.phase == 0));
}

/// fio's `disable_clat`: no completion latency, percentiles or latency buckets; the
/// windowed bandwidth samples stay (fio 3.33 takes those whatever `disable_bw` says).
#[test]
fn disable_clat_takes_no_completion_latency() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("noclat", 1, 2 * NS_PER_S);
        j.report.disable_clat = true;
        j.report.disable_bw = true;
        j
    };
    let (result, _) = run_seeded(vec![job], &mut dev, 1);
    let j = job_json(&result, 0);
    let r = &j["read"];
    assert_eq!(r["clat_ns"]["N"], 0);
    assert!(r["clat_ns"].get("percentile").is_none(), "{r}");
    assert_eq!(r["lat_ns"]["N"], r["total_ios"]);
    assert!(
        j["latency_us"]
            .as_object()
            .unwrap()
            .values()
            .all(|v| v == 0.0),
        "{j}"
    );
    assert!(r["bw_samples"].as_u64().unwrap() > 0, "{r}");
}

/// A device that counts its writes as a drive does: 128 KiB writes program what they carry,
/// smaller ones four times it (a read-modify-write of a larger unit).
struct Counting {
    inner: FakeDevice,
    totals: flashlab_engine::WriteTotals,
}

impl BlockDevice for Counting {
    fn capacity_bytes(&self) -> u64 {
        self.inner.capacity_bytes()
    }
    fn logical_block_bytes(&self) -> u64 {
        self.inner.logical_block_bytes()
    }
    fn prefetch(&self, req: &IoRequest, stage: flashlab_engine::PrefetchStage) {
        self.inner.prefetch(req, stage)
    }
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        if req.kind == IoKind::Write {
            self.totals.host_bytes += req.len_bytes;
            let factor = if req.len_bytes >= 128 * 1024 { 1 } else { 4 };
            self.totals.nand_bytes += factor * req.len_bytes;
        }
        self.inner.submit(now_ns, req)
    }
    fn write_totals(&self) -> Option<flashlab_engine::WriteTotals> {
        Some(self.totals)
    }
}

#[test]
fn each_phase_reports_what_the_drive_wrote_in_it() {
    let mut dev = Counting {
        inner: FakeDevice::new(100 * NS_PER_US),
        totals: Default::default(),
    };
    let fill = {
        let mut j = JobSpec::new("fill", 1);
        j.io.rw = RwPattern::Write;
        j.block.bs = std::array::from_fn(|_| flashlab_workload::BlockSize::Fixed(128 * 1024));
        j.target.size = Some(SizeSpec::Bytes(8 << 20));
        j
    };
    let small = |name: &str, stonewall: bool| {
        let mut j = JobSpec::new(name, 1);
        j.io.rw = RwPattern::RandWrite;
        j.target.size = Some(SizeSpec::Bytes(1 << 20));
        j.control.stonewall = stonewall;
        j
    };
    let jobs = vec![fill, small("a", true), small("b", false)];
    let options = RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off);
    let result = crate::run_jobs(&file(jobs), &mut dev, &options, &mut |_| {}).expect("run");
    let phases = result.flashlab["phase_writes"]
        .as_array()
        .expect("a drive that counts its writes has phase_writes")
        .clone();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0]["jobs"], "fill");
    assert_eq!(phases[0]["host_write_bytes"], 8u64 << 20);
    assert_eq!(phases[0]["write_amplification"], 1.0);
    // Two jobs in one phase share it: their writes together.
    assert_eq!(phases[1]["jobs"], "a, b");
    assert_eq!(phases[1]["host_write_bytes"], 2u64 << 20);
    assert_eq!(phases[1]["nand_write_bytes"], 8u64 << 20);
    assert_eq!(phases[1]["write_amplification"], 4.0);
    // The whole run's ratio mixes the two: 16 MiB over 10 MiB.
    assert_eq!(dev.totals.write_amplification(), Some(1.6));
}

/// A device that records the windows of writes the runner announces.
struct Windows {
    inner: FakeDevice,
    seen: Vec<flashlab_engine::WriteWindow>,
}

impl BlockDevice for Windows {
    fn capacity_bytes(&self) -> u64 {
        self.inner.capacity_bytes()
    }
    fn prefetch(&self, req: &IoRequest, stage: flashlab_engine::PrefetchStage) {
        self.inner.prefetch(req, stage)
    }
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        self.inner.submit(now_ns, req)
    }
    fn write_window(&mut self, window: flashlab_engine::WriteWindow) {
        self.seen.push(window);
    }
}

#[test]
fn each_phase_of_writes_tells_the_device_its_window() {
    use flashlab_engine::WriteWindow;
    let mut dev = Windows {
        inner: FakeDevice::new(100 * NS_PER_US),
        seen: Vec::new(),
    };
    let sized = |name: &str, bytes: u64, stonewall: bool| {
        let mut j = JobSpec::new(name, 1);
        j.io.rw = RwPattern::Write;
        j.target.size = Some(SizeSpec::Bytes(bytes));
        j.control.stonewall = stonewall;
        j
    };
    let mut long = timed("long", 1, 30 * NS_PER_MS);
    long.io.rw = RwPattern::RandWrite;
    long.time.ramp_time_ns = 10 * NS_PER_MS;
    long.control.stonewall = true;
    let mut short = timed("short", 1, 20 * NS_PER_MS);
    short.io.rw = RwPattern::RandWrite;
    let mut reads = timed("reads", 1, 10 * NS_PER_MS);
    reads.control.stonewall = true;
    let jobs = vec![
        sized("a", 1 << 20, false),
        sized("b", 2 << 20, false),
        long,
        short,
        reads,
    ];
    let options = RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off);
    crate::run_jobs(&file(jobs), &mut dev, &options, &mut |_| {}).expect("run");
    // Writers bounded by bytes: what they write together; time-based ones: the shortest
    // ramp and runtime; a phase of reads says nothing.
    assert_eq!(
        dev.seen,
        vec![
            WriteWindow::Bytes(3 << 20),
            WriteWindow::Time(20 * NS_PER_MS)
        ]
    );
}

#[test]
fn a_device_that_does_not_count_its_writes_has_no_phase_writes() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let (result, _) = run_seeded(vec![timed("r", 1, NS_PER_MS)], &mut dev, 1);
    assert!(result.flashlab.get("phase_writes").is_none());
}
