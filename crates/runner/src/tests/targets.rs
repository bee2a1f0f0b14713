//! Where I/O goes and what it carries: a slice of a larger drive scaled back, jobs routed
//! to targets by filename, and the data content writes carry.

use super::*;

/// Run `jobs` on `dev` as a slice of a larger drive.
fn run_scaled(
    jobs: Vec<JobSpec>,
    dev: &mut FakeDevice,
    scale: crate::SliceScale,
) -> flashlab_report::RunResult {
    let options = RunOptions::new(1, "fake")
        .with_host(crate::host::HostModel::Off)
        .with_scale(scale);
    crate::run_jobs(&file(jobs), dev, &options, &mut |_| {}).expect("run")
}

fn fill_then_random_writes() -> Vec<JobSpec> {
    let fill = {
        let mut j = JobSpec::new("fill", 1);
        j.io.rw = RwPattern::Write;
        j.block.bs = std::array::from_fn(|_| flashlab_workload::BlockSize::Fixed(128 * 1024));
        j.engine.iodepth = 8;
        j.target.size = Some(SizeSpec::Fraction(1.0));
        j
    };
    let random = {
        let mut j = timed("random", 8, 400 * NS_PER_MS);
        j.io.rw = RwPattern::RandWrite;
        j.control.stonewall = true;
        j
    };
    vec![fill, random]
}

#[test]
fn a_capacity_slice_reports_what_the_full_drive_does() {
    // Same bandwidth, 1/16 of the capacity: the slice's figures, scaled back, are the full
    // drive's (this fake device has no state, so they should agree closely).
    let link = Some(1_000_000_000);
    let mut full_dev = FakeDevice::new(50 * NS_PER_US);
    full_dev.link_bytes_per_s = link;
    let full = run_scaled(
        fill_then_random_writes(),
        &mut full_dev,
        crate::SliceScale::FULL,
    );
    let mut slice_dev = FakeDevice::new(50 * NS_PER_US);
    slice_dev.link_bytes_per_s = link;
    slice_dev.capacity_bytes = GIB / 16;
    let slice = run_scaled(
        fill_then_random_writes(),
        &mut slice_dev,
        crate::SliceScale::new(16.0, 1.0),
    );
    assert_near(
        (slice_dev.kinds[1] * 16) as f64,
        full_dev.kinds[1] as f64,
        0.01,
        "1/16 of the I/Os",
    );
    let (f, s) = (&full.jobs[0], &slice.jobs[0]);
    assert_eq!(
        s.io_bytes(1),
        GIB,
        "a size=100% fill writes the whole drive"
    );
    assert_eq!(s.io_bytes(1), f.io_bytes(1));
    assert_eq!(s.total_ios(1), f.total_ios(1));
    assert_near(
        s.runtime_ms(1) as f64,
        f.runtime_ms(1) as f64,
        0.01,
        "fill runtime",
    );
    assert_near(
        s.bw_bytes_per_s(1) as f64,
        f.bw_bytes_per_s(1) as f64,
        0.01,
        "fill bw",
    );
    let (f, s) = (&full.jobs[1], &slice.jobs[1]);
    assert_eq!(s.runtime_ms(1), 400, "the runtime as written");
    assert_near(s.iops(1), f.iops(1), 0.01, "random write iops");
    assert_near(
        s.io_bytes(1) as f64,
        f.io_bytes(1) as f64,
        0.01,
        "random bytes",
    );
    assert_eq!(s.clat_ns(1).unwrap().min, f.clat_ns(1).unwrap().min);
    assert_near(
        full.elapsed_s as f64,
        slice.elapsed_s as f64,
        0.0,
        "elapsed",
    );
    let scale = &slice.flashlab["scale"];
    assert_eq!(scale["capacity_factor"], 16.0);
    assert_eq!(
        scale["jobs"][1]["changed"]["runtime"]["simulated"],
        25_000_000
    );
    assert!(
        full.flashlab.get("scale").is_none(),
        "nothing to say at full scale"
    );
}

#[test]
fn a_die_cut_slice_multiplies_bandwidth_back() {
    // Half the dies: the slice has half the bandwidth, a quarter of the capacity.
    let mut full_dev = FakeDevice::new(50 * NS_PER_US);
    full_dev.link_bytes_per_s = Some(2_000_000_000);
    let full = run_scaled(
        fill_then_random_writes(),
        &mut full_dev,
        crate::SliceScale::FULL,
    );
    let mut slice_dev = FakeDevice::new(50 * NS_PER_US);
    slice_dev.link_bytes_per_s = Some(1_000_000_000);
    slice_dev.capacity_bytes = GIB / 4;
    let slice = run_scaled(
        fill_then_random_writes(),
        &mut slice_dev,
        crate::SliceScale::new(4.0, 2.0),
    );
    // The fill is bandwidth-bound: the slice's half bandwidth, doubled, is the drive's. The
    // random writes are mostly latency-bound at half the depth; the halved link of this fake
    // device adds 2 us to each of them, hence the looser bound.
    for (job, tolerance) in [(0, 0.01), (1, 0.05)] {
        let (f, s) = (&full.jobs[job], &slice.jobs[job]);
        assert_near(
            s.bw_bytes_per_s(1) as f64,
            f.bw_bytes_per_s(1) as f64,
            tolerance,
            "bw",
        );
        assert_near(
            s.io_bytes(1) as f64,
            f.io_bytes(1) as f64,
            tolerance,
            "bytes",
        );
        assert_near(
            s.runtime_ms(1) as f64,
            f.runtime_ms(1) as f64,
            0.01,
            "runtime",
        );
    }
    assert_eq!(slice.jobs[0].io_bytes(1), GIB);
    assert_eq!(
        slice.flashlab["scale"]["jobs"][0]["changed"]["iodepth"]["simulated"],
        4
    );
}

#[test]
fn a_broken_scale_is_bad_input() {
    let mut dev = FakeDevice::new(NS_PER_US);
    let options = RunOptions::new(1, "fake")
        .with_host(crate::host::HostModel::Off)
        .with_scale(crate::SliceScale::new(0.5, 1.0));
    let err = crate::run_jobs(&file(vec![spec("j")]), &mut dev, &options, &mut |_| {})
        .expect_err("a factor below 1");
    assert!(err.is_bad_input());
    assert!(err.to_string().contains("at least 1"), "{err}");
}

/// Two fake devices as the targets `a` and `b`; a job without a filename goes to `a`.
struct TwoTargets {
    devices: [FakeDevice; 2],
    /// Highest byte each target was asked for.
    max_end_bytes: [u64; 2],
}

impl crate::Targets for TwoTargets {
    fn resolve(&self, filename: Option<&str>) -> Result<usize, String> {
        match filename {
            None | Some("a") => Ok(0),
            Some("b") => Ok(1),
            Some(_) => Err("valid names are a, b".into()),
        }
    }
    fn capacity_bytes(&self, target: usize) -> u64 {
        self.devices[target].capacity_bytes
    }
    fn logical_block_bytes(&self) -> u64 {
        4096
    }
    fn queue_depth_limit(&self) -> u32 {
        u32::MAX
    }
    fn submit_to(
        &mut self,
        target: usize,
        now_ns: SimTime,
        req: &IoRequest,
    ) -> Result<Completion, DeviceError> {
        let end = req.offset_bytes + req.len_bytes;
        self.max_end_bytes[target] = self.max_end_bytes[target].max(end);
        self.devices[target].submit(now_ns, req)
    }
    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        for d in &mut self.devices {
            d.idle(from_ns, until_ns);
        }
    }
    fn prefetch(&self, target: usize, req: &IoRequest, stage: flashlab_engine::PrefetchStage) {
        self.devices[target].prefetch(req, stage)
    }
}

#[test]
fn filename_routes_each_job_to_its_target_with_its_capacity() {
    let mut t = TwoTargets {
        devices: [
            FakeDevice::new(100 * NS_PER_US),
            FakeDevice::new(400 * NS_PER_US),
        ],
        max_end_bytes: [0; 2],
    };
    t.devices[1].capacity_bytes = 64 << 20;
    let mut fast = timed("fast", 1, 100 * NS_PER_MS);
    fast.target.filename = Some("a".into());
    let mut slow = timed("slow", 1, 100 * NS_PER_MS);
    slow.target.filename = Some("b".into());
    let result = crate::run_targets(
        &file(vec![fast, slow]),
        &mut t,
        &RunOptions::new(1, "two").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .expect("run");
    // QD1 at 100 us and 400 us per read (plus 0.5 us acceptance): 1000 and 250 reads in 100 ms.
    assert_near(result.jobs[0].iops(0), 10_000.0, 0.01, "fast target IOPS");
    assert_near(result.jobs[1].iops(0), 2_500.0, 0.01, "slow target IOPS");
    assert!(t.devices[1].kinds[0] > 0 && t.devices[0].kinds[0] > 0);
    // The job on `b` drew offsets within b's 64 MiB, the one on `a` across its 1 GiB.
    assert!(t.max_end_bytes[1] <= 64 << 20);
    assert!(t.max_end_bytes[0] > 64 << 20);
}

#[test]
fn unknown_filename_is_bad_input_naming_the_job_and_valid_names() {
    let mut t = TwoTargets {
        devices: [FakeDevice::new(NS_PER_US), FakeDevice::new(NS_PER_US)],
        max_end_bytes: [0; 2],
    };
    let mut job = timed("tenant", 1, NS_PER_MS);
    job.target.filename = Some("/dev/sdz".into());
    let e = crate::run_targets(
        &file(vec![job]),
        &mut t,
        &RunOptions::new(1, "two").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.is_bad_input());
    let msg = e.to_string();
    assert!(
        msg.contains("tenant") && msg.contains("/dev/sdz") && msg.contains("a, b"),
        "{msg}"
    );
}

/// The job file's buffer options reach the device on every write, and only on writes: reads,
/// trims and flushes carry no data to compress.
#[test]
fn writes_carry_the_jobs_compressible_share_and_nothing_else_does() {
    let run_text = |text: &str| {
        let file = flashlab_workload::parse_str(text, "t.fio", &|_| None).expect("job file");
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        run_with_summaries(
            &file,
            &mut dev,
            &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        )
        .expect("run");
        dev.compressible_seen
    };
    let (read, write, trim, flush) = (0, 1, 2, 3);
    let mixed = run_text(
        "[j]\nrw=randrw\nsize=1m\nfsync=4\nend_fsync=1\nzero_buffers\n\
         buffer_compress_percentage=40\n",
    );
    assert_eq!(mixed, BTreeSet::from([(read, 0), (write, 40), (flush, 0)]));
    let trims = run_text("[j]\nrw=trimwrite\nsize=256k\nbuffer_pattern=0xdeadbeef\n");
    assert_eq!(trims, BTreeSet::from([(write, 100), (trim, 0)]));
    // fio's default: random data, which no compressor shrinks.
    let plain = run_text("[j]\nrw=write\nsize=256k\n");
    assert_eq!(plain, BTreeSet::from([(write, 0)]));
}

/// Runs `text` on a fake device keeping every request: the run (or its error) and the write
/// offsets in MiB, in submission order.
fn writes_mib(text: &str) -> (Result<flashlab_report::RunResult, RunError>, Vec<u64>) {
    let file = flashlab_workload::parse_str(text, "t.fio", &|_| None).expect("job file");
    let mut dev = FakeDevice::new(20 * NS_PER_US);
    dev.submitted = Some(Vec::new());
    let result = crate::run_jobs(
        &file,
        &mut dev,
        &RunOptions::new(1, "fake").with_host(crate::host::HostModel::Off),
        &mut |_| {},
    );
    let log = dev.submitted.take().unwrap_or_default();
    let writes = log.iter().filter(|e| e.0 == 1).map(|e| e.1 >> 20).collect();
    (result, writes)
}

#[test]
fn a_sequential_zbd_job_skips_zoneskip_bytes_after_each_zone_as_fio() {
    // fio 3.33's setup_zbd_zone_mode (its manual says zonemode=zbd ignores zoneskip): a
    // sequential writer fills a zone, then moves a zone and the skip on.
    let job = "[z]\nrw=write\nbs=1m\nzonemode=zbd\nzonesize=4m\nzoneskip=8m\nio_size=12m\n";
    let (r, w) = writes_mib(job);
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(w, [0, 1, 2, 3, 12, 13, 14, 15, 24, 25, 26, 27]);
    // fio's zoneskip in zones: 2z is two zones of zonesize.
    assert_eq!(writes_mib(&job.replace("zoneskip=8m", "zoneskip=2z")).1, w);
    // A random writer ignores it: its writes land in every zone of its 16 MiB.
    let (r, w) = writes_mib(
        &job.replace("rw=write", "rw=randwrite")
            .replace("io_size", "size=16m\nio_size"),
    );
    assert!(r.is_ok(), "{r:?}");
    assert!(w.iter().any(|&m| (4..12).contains(&m)), "{w:?}");
    // fio's checks: a skip of whole zones, for every job.
    let (r, _) = writes_mib(&job.replace("zoneskip=8m", "zoneskip=6m"));
    let e = r.unwrap_err();
    assert!(e.is_bad_input());
    assert!(
        e.to_string()
            .contains("zoneskip 6291456 is not a multiple of the device zone size 4194304"),
        "{e}"
    );
}
