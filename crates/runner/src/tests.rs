//! Run-loop tests against a fake device with fixed latencies and an optional bandwidth limit,
//! so the expected numbers follow from arithmetic.

use std::collections::BTreeSet;

use flashlab_engine::{
    time::transfer_ns, BlockDevice, Completion, DeviceError, IoKind, IoRequest, SimTime, NS_PER_MS,
    NS_PER_S, NS_PER_US,
};
use flashlab_workload::{JobFile, JobSpec, RateProcess, RwPattern, SizeSpec, ThinkBlocks};

use crate::run::{run_with_summaries, CloneSummary};
use crate::{RunError, RunOptions};

const GIB: u64 = 1 << 30;

/// A device whose every I/O takes a fixed time per kind, optionally behind a serial link of
/// limited bandwidth. It checks that submissions arrive in time order.
struct FakeDevice {
    capacity_bytes: u64,
    /// Read, write, trim, flush.
    latency_ns: [SimTime; 4],
    /// Time the device takes to accept a command (fio's slat).
    accept_ns: SimTime,
    link_bytes_per_s: Option<u64>,
    link_free_ns: SimTime,
    qd_limit: u32,
    last_submit_ns: SimTime,
    out_of_order: bool,
    in_device: Vec<SimTime>,
    max_in_device: usize,
    idle_ns: SimTime,
    kinds: [u64; 4],
    /// Refuse writes as a read-only drive once this many were accepted.
    read_only_after_writes: Option<u64>,
    /// Every (kind index, compressible percent) submitted.
    compressible_seen: BTreeSet<(usize, u8)>,
    /// Every (kind index, offset) submitted, in order, when kept.
    submitted: Option<Vec<(usize, u64)>>,
    /// Reads at this offset fail as data past its retention.
    lost_offset_bytes: Option<u64>,
}

impl FakeDevice {
    fn new(latency_ns: SimTime) -> Self {
        Self {
            capacity_bytes: GIB,
            latency_ns: [latency_ns; 4],
            accept_ns: 500,
            link_bytes_per_s: None,
            link_free_ns: 0,
            qd_limit: u32::MAX,
            last_submit_ns: 0,
            out_of_order: false,
            in_device: Vec::new(),
            max_in_device: 0,
            idle_ns: 0,
            kinds: [0; 4],
            read_only_after_writes: None,
            compressible_seen: BTreeSet::new(),
            submitted: None,
            lost_offset_bytes: None,
        }
    }
}

impl BlockDevice for FakeDevice {
    fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    fn logical_block_bytes(&self) -> u64 {
        4096
    }

    fn queue_depth_limit(&self) -> u32 {
        self.qd_limit
    }

    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        if now_ns < self.last_submit_ns {
            self.out_of_order = true;
        }
        self.last_submit_ns = now_ns;
        if req.kind != IoKind::Flush {
            if req.len_bytes == 0 {
                return Err(DeviceError::Empty);
            }
            if req.offset_bytes + req.len_bytes > self.capacity_bytes {
                return Err(DeviceError::OutOfRange {
                    offset_bytes: req.offset_bytes,
                    len_bytes: req.len_bytes,
                    capacity_bytes: self.capacity_bytes,
                });
            }
        }
        if req.kind == IoKind::Write && self.read_only_after_writes == Some(self.kinds[1]) {
            return Err(DeviceError::ReadOnly {
                reason: "worn out".into(),
            });
        }
        if req.kind == IoKind::Read && self.lost_offset_bytes == Some(req.offset_bytes) {
            return Err(DeviceError::Uncorrectable {
                reason: "past its retention".into(),
            });
        }
        let k = match req.kind {
            IoKind::Read => 0,
            IoKind::Write => 1,
            IoKind::Trim => 2,
            IoKind::Flush => 3,
        };
        self.kinds[k] += 1;
        if let Some(log) = self.submitted.as_mut() {
            log.push((k, req.offset_bytes));
        }
        self.compressible_seen.insert((k, req.compressible_percent));
        let mut ready = now_ns;
        if let Some(bw) = self.link_bytes_per_s {
            if req.len_bytes > 0 {
                let start = now_ns.max(self.link_free_ns);
                self.link_free_ns = start + transfer_ns(req.len_bytes, bw);
                ready = self.link_free_ns;
            }
        }
        let done_ns = ready + self.latency_ns[k];
        self.in_device.retain(|&d| d > now_ns);
        self.in_device.push(done_ns);
        self.max_in_device = self.max_in_device.max(self.in_device.len());
        Ok(Completion {
            accepted_ns: now_ns + self.accept_ns.min(self.latency_ns[k]),
            done_ns,
        })
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        assert!(until_ns > from_ns);
        self.idle_ns += until_ns - from_ns;
    }
}

fn spec(name: &str) -> JobSpec {
    JobSpec {
        rw: RwPattern::RandRead,
        ..JobSpec::new(name, 1)
    }
}

fn timed(name: &str, iodepth: u32, runtime_ns: SimTime) -> JobSpec {
    JobSpec {
        iodepth,
        runtime_ns: Some(runtime_ns),
        time_based: true,
        ..spec(name)
    }
}

fn file(jobs: Vec<JobSpec>) -> JobFile {
    JobFile {
        path: "test.fio".into(),
        global_options: vec![],
        jobs,
    }
}

fn run(jobs: Vec<JobSpec>, dev: &mut FakeDevice) -> Vec<CloneSummary> {
    run_seeded(jobs, dev, 1).1
}

fn run_seeded(
    jobs: Vec<JobSpec>,
    dev: &mut FakeDevice,
    seed: u64,
) -> (flashlab_report::RunResult, Vec<CloneSummary>) {
    let (result, summaries) =
        run_with_summaries(&file(jobs), dev, &RunOptions::new(seed, "fake")).expect("run");
    assert!(!dev.out_of_order, "submissions went back in time");
    (result, summaries)
}

fn assert_near(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance * expected,
        "{what}: {actual} not within {tolerance} of {expected}"
    );
}

#[test]
fn iops_scale_with_queue_depth_until_the_bandwidth_limit() {
    // 100 us per I/O: each slot completes 1,000 I/Os in 100 ms.
    for qd in [1u32, 4, 16] {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let s = run(vec![timed("qd", qd, 100 * NS_PER_MS)], &mut dev);
        assert_near(s[0].measured_ios[0] as f64, qd as f64 * 1000.0, 0.01, "ios");
        assert_eq!(dev.max_in_device, qd as usize);
    }
    // 400 MB/s caps 4 KiB reads at 97,656 IOPS, well below 32 / 100 us.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    dev.link_bytes_per_s = Some(400_000_000);
    let s = run(vec![timed("bw", 32, 100 * NS_PER_MS)], &mut dev);
    assert_near(
        s[0].measured_ios[0] as f64,
        9765.6,
        0.02,
        "bandwidth-bound ios",
    );
}

#[test]
fn device_queue_limit_holds_the_rest_in_the_host_queue() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    dev.qd_limit = 4;
    let (result, s) = run_seeded(vec![timed("q", 16, 100 * NS_PER_MS)], &mut dev, 1);
    assert_eq!(dev.max_in_device, 4);
    assert_near(s[0].measured_ios[0] as f64, 4000.0, 0.01, "ios");
    // Waiting in the host queue counts as completion latency: slat stays the device's
    // acceptance cost, and total latency is four device round trips.
    let job = &result.jobs[0];
    let slat = job.slat_ns(0).expect("slat");
    assert_eq!((slat.min, slat.max), (500, 500));
    assert_near(job.lat_ns(0).unwrap().mean, 400_000.0, 0.01, "lat");
    assert_near(job.clat_ns(0).unwrap().mean, 399_500.0, 0.01, "clat");
}

#[test]
fn linear_rate_hits_the_target_per_clone() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        numjobs: 2,
        rate_bytes_per_s: [4 << 20; 3],
        ..timed("rate", 4, NS_PER_S)
    };
    let (result, s) = run_seeded(vec![job], &mut dev, 1);
    for c in &s {
        // 4 MiB/s of 4 KiB = 1,024 I/Os per second, each clone.
        assert_near(c.measured_ios[0] as f64, 1024.0, 0.002, "ios per clone");
        assert_eq!(c.late_ios, 0);
    }
    let rate = &result.flashlab["rate"];
    assert_eq!(rate.as_array().unwrap().len(), 2);
    assert_eq!(rate[0]["directions"]["read"]["met"], true);
    assert!(rate[0]["directions"].get("write").is_none());
    // The device sat idle between paced I/Os.
    assert!(dev.idle_ns > NS_PER_S / 2, "idle {}", dev.idle_ns);
}

#[test]
fn a_mixed_job_issues_the_other_direction_while_one_is_ahead_of_its_rate() {
    // fio's rate_ddir: each direction of a rate-limited randrw job meets its own limit,
    // whatever the mix draws (70 % reads here, limited to 500 and 100 IOPS).
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        rw: RwPattern::RandRw,
        rwmixread: 70,
        rate_iops: [500, 100, 0],
        ..timed("mixed", 4, 2 * NS_PER_S)
    };
    let s = run(vec![job], &mut dev);
    assert_near(s[0].measured_ios[0] as f64, 1000.0, 0.01, "reads");
    assert_near(s[0].measured_ios[1] as f64, 200.0, 0.01, "writes");
    // Only writes limited: reads are not held back by the writes' pace (before, a drawn
    // write waited and the reads with it, ~14 reads per paced write).
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        rw: RwPattern::RandRw,
        rwmixread: 50,
        rate_iops: [0, 100, 0],
        ..timed("writes-limited", 4, NS_PER_S)
    };
    let s = run(vec![job], &mut dev);
    assert_near(s[0].measured_ios[1] as f64, 100.0, 0.02, "writes");
    // Four at a time for 100 us each: ~40,000 I/Os in the second, nearly all reads.
    assert!(
        s[0].measured_ios[0] > 30_000,
        "reads {}",
        s[0].measured_ios[0]
    );
}

#[test]
fn poisson_rate_hits_the_target_on_average() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        rate_iops: [2000, 0, 0],
        rate_process: RateProcess::Poisson,
        ..timed("poisson", 8, 2 * NS_PER_S)
    };
    let s = run(vec![job], &mut dev);
    assert_near(s[0].measured_ios[0] as f64, 4000.0, 0.05, "poisson ios");
}

#[test]
fn unmet_rate_is_reported() {
    // 10 ms per I/O at depth 1: at most 100 IOPS against a target of 1,000.
    let mut dev = FakeDevice::new(10 * NS_PER_MS);
    let job = JobSpec {
        rate_iops: [1000, 0, 0],
        ..timed("slow", 1, NS_PER_S)
    };
    let (result, s) = run_seeded(vec![job], &mut dev, 1);
    assert!(s[0].late_ios > 0);
    let read = &result.flashlab["rate"][0]["directions"]["read"];
    assert_eq!(read["met"], false);
    assert_near(
        read["achieved_iops"].as_f64().unwrap(),
        100.0,
        0.02,
        "achieved",
    );
}

#[test]
fn ramp_time_is_excluded_and_runtime_respected() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        ramp_time_ns: 50 * NS_PER_MS,
        ..timed("ramp", 1, 100 * NS_PER_MS)
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
    let job = JobSpec {
        runtime_ns: Some(10 * NS_PER_MS),
        ..spec("capped")
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].end_ns, 10 * NS_PER_MS);
    assert_near(s[0].measured_ios[0] as f64, 100.0, 0.01, "ios");
}

#[test]
fn size_budget_ends_the_job() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        size: Some(SizeSpec::Bytes(1 << 20)),
        iodepth: 4,
        ..spec("budget")
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].measured_ios[0], 256);
    assert_eq!(s[0].measured_bytes[0], 1 << 20);
    assert_eq!(s[0].end_ns, 64 * 100 * NS_PER_US);
}

#[test]
fn stonewall_orders_phases_and_new_group_only_regroups() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let a = JobSpec {
        numjobs: 2,
        ..timed("a", 2, 10 * NS_PER_MS)
    };
    let b = JobSpec {
        stonewall: true,
        ..timed("b", 1, 10 * NS_PER_MS)
    };
    let c = JobSpec {
        new_group: true,
        ..timed("c", 1, 5 * NS_PER_MS)
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
    let grouped = JobSpec {
        numjobs: 3,
        group_reporting: true,
        ..timed("g", 1, NS_PER_MS)
    };
    let (result, _) = run_seeded(vec![grouped.clone()], &mut dev, 1);
    assert_eq!(result.jobs.len(), 1);
    // Three clones at depth 1, 10 I/Os each in 1 ms.
    assert_eq!(result.jobs[0].total_ios(0), 30);
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let apart = JobSpec {
        group_reporting: false,
        ..grouped
    };
    let (result, _) = run_seeded(vec![apart], &mut dev, 1);
    assert_eq!(result.jobs.len(), 3);
}

#[test]
fn fsync_sends_a_flush_every_n_writes() {
    let mut dev = FakeDevice::new(20 * NS_PER_US);
    let job = JobSpec {
        rw: RwPattern::Write,
        size: Some(SizeSpec::Bytes(1 << 20)),
        fsync_every: 8,
        iodepth: 4,
        ..spec("fsync")
    };
    let (result, s) = run_seeded(vec![job], &mut dev, 1);
    assert_eq!(s[0].measured_ios[1], 256);
    assert_eq!(s[0].flushes, 32);
    assert_eq!(dev.kinds[3], 32);
    // Flushes are reported as syncs, not as writes.
    assert_eq!(result.jobs[0].total_ios(1), 256);
}

#[test]
fn thinktime_paces_a_deep_queue() {
    // Counting issued I/Os, think 900 us after every one: one I/O per millisecond whatever
    // the depth.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        thinktime_ns: 900 * NS_PER_US,
        thinktime_blocks_type: ThinkBlocks::Issue,
        ..timed("think", 8, 100 * NS_PER_MS)
    };
    let s = run(vec![job], &mut dev);
    assert_near(s[0].measured_ios[0] as f64, 100.0, 0.01, "ios");
    assert_eq!(dev.max_in_device, 1);
    // Counting completed I/Os (fio's default), nothing has completed until the queue is
    // full and reaped; here all eight complete together: eight I/Os per 100 us + 900 us.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        thinktime_ns: 900 * NS_PER_US,
        ..timed("think", 8, 100 * NS_PER_MS)
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].measured_ios[0], 800);
    assert_eq!(dev.max_in_device, 8);
}

/// A size-bound job of `ios` 4 KiB reads that thinks `think_ns` per `blocks`.
fn thinking(iodepth: u32, ios: u64, think_ns: SimTime, blocks: u32, kind: ThinkBlocks) -> JobSpec {
    JobSpec {
        iodepth,
        size: Some(SizeSpec::Bytes(ios * 4096)),
        thinktime_ns: think_ns,
        thinktime_blocks: blocks,
        thinktime_blocks_set: true,
        thinktime_blocks_type: kind,
        ..spec("think")
    }
}

#[test]
fn thinktime_blocks_count_completions_or_issues() {
    // 48 I/Os at depth 4, 100 us each (all in flight complete together), 1 ms think per 6.
    let run_one = |kind| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let s = run(vec![thinking(4, 48, NS_PER_MS, 6, kind)], &mut dev);
        assert_eq!(s[0].measured_ios[0], 48);
        s[0].end_ns - s[0].start_ns
    };
    // Issued: 4, then 2 more and the sixth issued pauses (after the 2 complete): 8 pauses
    // of 2 x 100 us + 1 ms.
    assert_eq!(run_one(ThinkBlocks::Issue), 8 * 1_200 * NS_PER_US);
    // Completed: 4 complete (4 < 6), 4 more are issued, 8 complete: pause; the next pause
    // comes at 16 (8 + 6 = 14 reached only when the next 4 are reaped): 6 pauses.
    assert_eq!(run_one(ThinkBlocks::Complete), 6 * 1_200 * NS_PER_US);
}

#[test]
fn completions_reaped_one_at_a_time_pause_later() {
    // A serial link spaces the completions 10 us apart, so each reap takes one: with 64
    // I/Os at depth 4 and a 10 ms think per 8, the check after the reap of the 8th
    // completion comes when 11 are issued; after the pause the count is 11, the next pause
    // comes at 16, ... at 56; the count reaches only 61 by the last issue: 7 pauses (fio
    // 3.33 with libaio or null: 7 pauses counting completions, 8 counting issues).
    let run_one = |kind| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        dev.link_bytes_per_s = Some(409_600_000);
        let s = run(vec![thinking(4, 64, 10 * NS_PER_MS, 8, kind)], &mut dev);
        assert_eq!(s[0].measured_ios[0], 64);
        s[0].end_ns - s[0].start_ns
    };
    let complete = run_one(ThinkBlocks::Complete);
    assert!(
        (70 * NS_PER_MS..73 * NS_PER_MS).contains(&complete),
        "{complete}"
    );
    let issue = run_one(ThinkBlocks::Issue);
    assert!((80 * NS_PER_MS..83 * NS_PER_MS).contains(&issue), "{issue}");
}

#[test]
fn thinktime_at_depth_one_does_not_depend_on_the_count() {
    let run_one = |kind| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        run(vec![thinking(1, 12, NS_PER_MS, 3, kind)], &mut dev)
    };
    let issue = run_one(ThinkBlocks::Issue);
    assert_eq!(issue, run_one(ThinkBlocks::Complete));
    assert_eq!(issue[0].end_ns - issue[0].start_ns, 4 * 1_300 * NS_PER_US);
}

#[test]
fn thinktime_iotime_thinks_by_time_and_with_blocks_whichever_comes_first() {
    let run_one = |blocks: Option<u32>| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let job = JobSpec {
            thinktime_ns: 500 * NS_PER_US,
            thinktime_iotime_ns: NS_PER_MS,
            thinktime_blocks: blocks.unwrap_or(1),
            thinktime_blocks_set: blocks.is_some(),
            ..timed("iotime", 1, 15 * NS_PER_MS)
        };
        run(vec![job], &mut dev)[0].measured_ios[0]
    };
    // 10 I/Os (1 ms), then 0.5 ms of think: 10 periods of 1.5 ms.
    assert_eq!(run_one(None), 100);
    // Every 4 I/Os (0.4 ms) first: 16 periods of 0.9 ms and 4 I/Os of the 17th.
    assert_eq!(run_one(Some(4)), 68);
}

#[test]
fn rate_ignore_thinktime_moves_the_schedule_on() {
    // 1000 IOPS, a 2 ms think after every 10 issued I/Os.
    let run_one = |ignore| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let job = JobSpec {
            rate_iops: [1000, 0, 0],
            thinktime_ns: 2 * NS_PER_MS,
            thinktime_blocks: 10,
            thinktime_blocks_type: ThinkBlocks::Issue,
            rate_ignore_thinktime: ignore,
            ..timed("rate", 1, 100 * NS_PER_MS)
        };
        run(vec![job], &mut dev)[0].measured_ios[0] as f64
    };
    // By default the rate catches up after each pause: 1000 IOPS.
    assert_near(run_one(false), 100.0, 0.02, "catching up");
    // Ignoring the pause, the schedule moves on by 2 ms less one I/O (1 ms): 10 I/Os per
    // 11 ms.
    assert_near(run_one(true), 100.0 * 10.0 / 11.0, 0.02, "moving on");
}

#[test]
fn the_ramp_resets_the_think_counts_but_not_the_last_pause() {
    // fio 3.33: after a ramp of 20 pauses of 8 I/Os, 160 + 8 I/Os go before the next pause.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        thinktime_ns: 9_200 * NS_PER_US,
        thinktime_blocks: 8,
        ramp_time_ns: 200 * NS_PER_MS,
        ..timed("ramp", 1, NS_PER_S)
    };
    let s = run(vec![job], &mut dev);
    // 8 I/Os + think take 10 ms: 100 pauses a second, and 160 I/Os (16 ms) without.
    assert_eq!(s[0].measured_ios[0], 160 + (1000 - 16) / 10 * 8 + 8);
}

#[test]
fn same_seed_same_run_and_seed_matters() {
    let jobs = || {
        vec![JobSpec {
            rate_iops: [5000, 0, 0],
            rate_process: RateProcess::Poisson,
            numjobs: 2,
            ..timed("det", 4, 200 * NS_PER_MS)
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
fn zero_latency_device_is_stopped() {
    let mut dev = FakeDevice::new(0);
    let mut options = RunOptions::new(1, "fake");
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
        &RunOptions::new(1, "fake"),
    )
    .expect_err("error");
    assert!(matches!(err, RunError::BadCompletion { .. }), "{err}");
}

#[test]
fn time_based_without_runtime_is_bad_input() {
    let job = JobSpec {
        time_based: true,
        ..spec("forever")
    };
    let err = run_with_summaries(
        &file(vec![job]),
        &mut FakeDevice::new(1000),
        &RunOptions::new(1, "fake"),
    )
    .expect_err("error");
    assert!(err.is_bad_input());
    assert_eq!(
        err.to_string(),
        "test.fio:1: job 'forever': time_based needs a runtime (e.g. runtime=60s), or the job never ends"
    );
}

#[test]
fn startdelay_shifts_the_whole_job() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let late = JobSpec {
        startdelay_ns: 5 * NS_PER_MS,
        ramp_time_ns: NS_PER_MS,
        ..timed("late", 1, 10 * NS_PER_MS)
    };
    let s = run(vec![timed("early", 1, 10 * NS_PER_MS), late], &mut dev);
    assert_eq!(s[1].start_ns, 5 * NS_PER_MS);
    assert_eq!(s[1].measure_start_ns, 6 * NS_PER_MS);
    assert_eq!(s[1].end_ns, 16 * NS_PER_MS);
    assert_near(s[1].measured_ios[0] as f64, 100.0, 0.01, "ios");
}

#[test]
fn end_fsync_flushes_once_after_the_last_write() {
    let mut dev = FakeDevice::new(20 * NS_PER_US);
    let job = JobSpec {
        rw: RwPattern::Write,
        size: Some(SizeSpec::Bytes(64 << 10)),
        end_fsync: true,
        ..spec("end")
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].measured_ios[1], 16);
    assert_eq!(s[0].flushes, 1);
    // 16 writes then the flush, one at a time.
    assert_eq!(s[0].end_ns, 17 * 20 * NS_PER_US);
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
            let a = JobSpec {
                rw: RwPattern::RandWrite,
                size: Some(SizeSpec::Bytes(256 << 10)),
                iodepth,
                numjobs,
                rate_iops: [rate_iops; 3],
                rate_process: if poisson { RateProcess::Poisson } else { RateProcess::Linear },
                thinktime_ns: thinktime_us * NS_PER_US,
                thinktime_blocks,
                fsync_every,
                ..spec("a")
            };
            let b = JobSpec {
                stonewall,
                iodepth: iodepth.div_ceil(2),
                ..timed("b", 1, 5 * NS_PER_MS)
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

/// Run `jobs` on `dev` as a slice of a larger drive.
fn run_scaled(
    jobs: Vec<JobSpec>,
    dev: &mut FakeDevice,
    scale: crate::SliceScale,
) -> flashlab_report::RunResult {
    let options = RunOptions::new(1, "fake").with_scale(scale);
    crate::run_jobs(&file(jobs), dev, &options, &mut |_| {}).expect("run")
}

fn fill_then_random_writes() -> Vec<JobSpec> {
    let fill = JobSpec {
        rw: RwPattern::Write,
        bs: std::array::from_fn(|_| flashlab_workload::BlockSize::Fixed(128 * 1024)),
        iodepth: 8,
        size: Some(SizeSpec::Fraction(1.0)),
        ..JobSpec::new("fill", 1)
    };
    let random = JobSpec {
        rw: RwPattern::RandWrite,
        stonewall: true,
        ..timed("random", 8, 400 * NS_PER_MS)
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
    let options = RunOptions::new(1, "fake").with_scale(crate::SliceScale::new(0.5, 1.0));
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
    fast.filename = Some("a".into());
    let mut slow = timed("slow", 1, 100 * NS_PER_MS);
    slow.filename = Some("b".into());
    let result = crate::run_targets(
        &file(vec![fast, slow]),
        &mut t,
        &RunOptions::new(1, "two"),
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
    job.filename = Some("/dev/sdz".into());
    let e = crate::run_targets(
        &file(vec![job]),
        &mut t,
        &RunOptions::new(1, "two"),
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

/// A drive that turns read-only stops the job whose write it refuses, as fio stops a job at
/// an I/O error: that job's in-flight I/Os complete and its result carries errno 30; the
/// other jobs run to their end, and the run reports the error with the whole result.
#[test]
fn a_refused_write_stops_its_job_with_an_error_and_the_others_run_on() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    dev.read_only_after_writes = Some(1000);
    let writer = JobSpec {
        rw: RwPattern::RandWrite,
        ..timed("w", 8, 100 * NS_PER_MS)
    };
    let reader = timed("r", 4, 100 * NS_PER_MS);
    let err = crate::run_jobs(
        &file(vec![writer, reader]),
        &mut dev,
        &RunOptions::new(1, "fake"),
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

/// The job file's buffer options reach the device on every write, and only on writes: reads,
/// trims and flushes carry no data to compress.
#[test]
fn writes_carry_the_jobs_compressible_share_and_nothing_else_does() {
    let run_text = |text: &str| {
        let file = flashlab_workload::parse_str(text, "t.fio", &|_| None).expect("job file");
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        run_with_summaries(&file, &mut dev, &RunOptions::new(1, "fake")).expect("run");
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

/// A job with fio's steady-state detection on the fake device.
fn steady_job(name: &str, ss: flashlab_workload::SteadyState, runtime_s: u64) -> JobSpec {
    JobSpec {
        steadystate: ss,
        ..timed(name, 1, runtime_s * NS_PER_S)
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
    let job = JobSpec {
        numjobs: 2,
        group_reporting: true,
        ..steady_job("grp", iops_within(1.0, 4, 0), 60)
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
    let a = JobSpec {
        group_reporting: true,
        ..steady_job("a", iops_within(1.0, 4, 0), 60)
    };
    let b = JobSpec {
        group_reporting: true,
        ..steady_job("b", iops_within(2.0, 4, 0), 60)
    };
    let err = crate::run_jobs(
        &file(vec![a, b]),
        &mut dev,
        &RunOptions::new(1, "fake"),
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
    JobSpec {
        latency_target_ns: target_us * NS_PER_US,
        latency_window_ns: 10 * NS_PER_MS,
        latency_percentile: percentile,
        ..timed("lt", iodepth, 10 * NS_PER_S)
    }
}

fn job_json(result: &flashlab_report::RunResult, job: usize) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&flashlab_report::render_json(result, false)).unwrap();
    v["jobs"][job].clone()
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
        &RunOptions::new(1, "fake"),
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
    let job = JobSpec {
        numjobs: 100,
        ..steady_job("many", iops_within(1.0, 86_400, 0), 60)
    };
    let err = crate::run_jobs(
        &file(vec![job]),
        &mut dev,
        &RunOptions::new(1, "fake"),
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
        let job = JobSpec {
            rate_iops_min: [min, 0, 0],
            rate_cycle_ns: 500 * NS_PER_MS,
            ..timed("floor", 1, 10 * NS_PER_S)
        };
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        crate::run_jobs(
            &file(vec![job]),
            &mut dev,
            &RunOptions::new(1, "fake"),
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

#[test]
fn exitall_stops_the_group_when_a_job_ends() {
    use flashlab_workload::ExitWhat;
    // A short writer beside a 10 s reader: with exitall the reader stops when the writer
    // is done (100 I/Os at 100 us = 10 ms); without it, it runs its 10 s.
    let jobs = |exitall: bool| {
        let writer = JobSpec {
            rw: RwPattern::RandWrite,
            number_ios: Some(100),
            exitall,
            ..spec("w")
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
    let first = JobSpec {
        number_ios: Some(10),
        exitall: true,
        exit_what: ExitWhat::All,
        ..spec("first")
    };
    let later = JobSpec {
        stonewall: true,
        ..timed("later", 1, NS_PER_S)
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(vec![first.clone(), later.clone()], &mut dev);
    assert_eq!(s[1].measured_ios, [0; 3]);
    assert_eq!(dev.kinds[0], 10);
    // exit_what=group leaves the next group alone.
    let first = JobSpec {
        exit_what: ExitWhat::Group,
        ..first
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(vec![first, later], &mut dev);
    assert_eq!(s[1].measured_ios[0], 10_000);
}

#[test]
fn exitall_on_error_stops_the_group_when_a_job_fails() {
    let writer = JobSpec {
        rw: RwPattern::RandWrite,
        exitall_on_error: true,
        ..timed("w", 1, 10 * NS_PER_S)
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    dev.read_only_after_writes = Some(50);
    let err = crate::run_jobs(
        &file(vec![timed("r", 1, 10 * NS_PER_S), writer]),
        &mut dev,
        &RunOptions::new(1, "fake"),
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

#[test]
fn iodepth_low_lets_the_queue_drain_before_it_is_refilled() {
    // Completions come one per 10 us through a serial link, each 10 us after its transfer.
    // Kept full (the default), 16 I/Os are in the device at every completion; with
    // iodepth_low=4 the queue drains to 4 before 12 more are issued at once, so fewer are
    // in flight on average and each waits less.
    let run = |low: Option<u32>| {
        let mut dev = FakeDevice::new(10 * NS_PER_US);
        dev.link_bytes_per_s = Some(4096 * 100_000);
        let job = JobSpec {
            iodepth_low: low,
            ..timed("low", 16, 100 * NS_PER_MS)
        };
        let (result, _) = run_seeded(vec![job], &mut dev, 1);
        let j = job_json(&result, 0);
        (
            j["read"]["lat_ns"]["mean"].as_f64().unwrap(),
            j["read"]["iops"].as_f64().unwrap(),
        )
    };
    let (full_lat, full_iops) = run(None);
    let (low_lat, low_iops) = run(Some(4));
    assert_near(
        full_lat,
        160_000.0,
        0.05,
        "kept full: 16 I/Os ahead at 10 us each",
    );
    assert!(
        low_lat < 0.75 * full_lat,
        "drained: {low_lat} against {full_lat}"
    );
    // The link stays busy either way (4 in flight cover its 10 us per I/O).
    assert_near(low_iops, full_iops, 0.05, "throughput");
    // iodepth_low = iodepth is the default, and fio takes 0 for it too (fixup_options).
    assert_eq!(run(Some(16)).0, full_lat);
    assert_eq!(run(Some(0)).0, full_lat);
}

/// A 16-deep random-read job on a serial link (one completion per 10 us, each 10 us after
/// its transfer), with fio's batch options: mean total latency, IOPS and the JSON
/// distributions.
fn batched_run(submit: u32, min: u32, max: u32, low: Option<u32>) -> (f64, f64, serde_json::Value) {
    let mut dev = FakeDevice::new(10 * NS_PER_US);
    dev.link_bytes_per_s = Some(4096 * 100_000);
    let job = JobSpec {
        iodepth_batch_submit: submit,
        iodepth_batch_complete_min: min,
        iodepth_batch_complete_max: max,
        iodepth_low: low,
        ..timed("batch", 16, 100 * NS_PER_MS)
    };
    let (result, _) = run_seeded(vec![job], &mut dev, 1);
    let j = job_json(&result, 0);
    (
        j["read"]["lat_ns"]["mean"].as_f64().unwrap(),
        j["read"]["iops"].as_f64().unwrap(),
        j,
    )
}

#[test]
fn iodepth_batch_complete_min_refills_the_queue_in_batches() {
    let (full_lat, full_iops, _) = batched_run(1, 1, 0, None);
    assert_near(
        full_lat,
        160_000.0,
        0.05,
        "kept full: 16 ahead at 10 us each",
    );
    // Once full, fio waits for 4 completions and refills 4 behind the 12 left: they finish
    // 130, 140, 150 and 160 us later.
    let (lat, iops, j) = batched_run(1, 4, 0, None);
    assert_near(lat, 145_000.0, 0.02, "refilled 4 at a time");
    assert_near(iops, full_iops, 0.01, "the link stays busy");
    // Each reap takes 4 (fio's 1-4 bucket); depths 13-15 at commit fall in fio's 8-15
    // bucket, 16 in 16-31: 3 to 1.
    assert_near(
        j["iodepth_level"]["8"].as_f64().unwrap(),
        75.0,
        0.01,
        "IO depths 8",
    );
    assert_near(
        j["iodepth_level"]["16"].as_f64().unwrap(),
        25.0,
        0.01,
        "IO depths 16",
    );
    assert_near(
        j["iodepth_complete"]["4"].as_f64().unwrap(),
        100.0,
        0.01,
        "reaps",
    );
    // Completions come one at a time here, so a larger maximum reaps no more.
    assert_eq!(batched_run(1, 4, 16, None).0, lat);
    // 0 counts as 1: fio's default.
    assert_eq!(batched_run(1, 0, 0, None).0, full_lat);
}

#[test]
fn iodepth_batch_submit_changes_the_distributions_not_the_queue() {
    let (full_lat, _, _) = batched_run(1, 1, 0, None);
    // fio commits what it queued before it waits for a completion: with no host time the
    // device sees each I/O when it is drawn.
    let (lat, _, j) = batched_run(8, 1, 0, None);
    assert_eq!(lat, full_lat);
    // After the first fill, fio's counter of queued I/Os (reset only by a batch commit)
    // commits 8 at a time at depth 16; the engine gets them one per wait.
    assert!(j["iodepth_level"]["16"].as_f64().unwrap() > 99.0, "{j}");
    assert!(j["iodepth_submit"]["4"].as_f64().unwrap() > 99.0, "{j}");
    // Reaping 8 at a time, the engine gets 8 per commit.
    let (_, _, j) = batched_run(8, 8, 0, None);
    assert_near(
        j["iodepth_submit"]["8"].as_f64().unwrap(),
        100.0,
        0.01,
        "submit 8",
    );
    assert!(j["iodepth_complete"]["8"].as_f64().unwrap() > 99.0, "{j}");
    // 0 submits the whole depth at once.
    let (_, _, j) = batched_run(0, 16, 0, None);
    assert_near(
        j["iodepth_submit"]["16"].as_f64().unwrap(),
        100.0,
        0.01,
        "submit 16",
    );
}

#[test]
fn iodepth_batch_complete_min_with_iodepth_low_drains_in_batches() {
    // fio 3.33 with libaio, iodepth=32, iodepth_low=4, iodepth_batch_complete_min=8 printed
    // IO depths 1=3.1%, 2=6.2%, 4=12.5%, 8=25.0%, 16=50.0%, 32=3.1% and complete 8=100%:
    // the queue drains 8 at a time past 4 down to 0, then refills from 1 to 32.
    let mut dev = FakeDevice::new(10 * NS_PER_US);
    dev.link_bytes_per_s = Some(4096 * 100_000);
    let job = JobSpec {
        iodepth_batch_complete_min: 8,
        iodepth_low: Some(4),
        ..timed("batch", 32, 100 * NS_PER_MS)
    };
    let (result, _) = run_seeded(vec![job], &mut dev, 1);
    let j = job_json(&result, 0);
    for (key, pct) in [
        ("1", 3.125),
        ("2", 6.25),
        ("4", 12.5),
        ("8", 25.0),
        ("16", 50.0),
        ("32", 3.125),
    ] {
        assert_near(j["iodepth_level"][key].as_f64().unwrap(), pct, 0.01, key);
    }
    assert_near(
        j["iodepth_complete"]["8"].as_f64().unwrap(),
        100.0,
        0.01,
        "reaps of 8",
    );
}

#[test]
fn fdatasync_flushes_every_n_writes_apart_from_fsync() {
    let job = JobSpec {
        rw: RwPattern::RandWrite,
        number_ios: Some(100),
        fdatasync_every: 10,
        fsync_every: 25,
        ..spec("sync")
    };
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(vec![job], &mut dev);
    // 10 fdatasyncs and 4 fsyncs; at writes 50 and 100 both fall due and one flush serves.
    assert_eq!(dev.kinds[3], 12);
    assert_eq!(s[0].flushes, 12);
}

#[test]
fn bwavgtime_and_iopsavgtime_set_the_sample_windows() {
    let run = |bw_ms: Option<u64>, iops_ms: Option<u64>| {
        let job = JobSpec {
            bw_avg_ms: bw_ms,
            iops_avg_ms: iops_ms,
            ..timed("avg", 1, NS_PER_S)
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
    let background = JobSpec {
        stats: false,
        ..timed("noise", 4, NS_PER_S)
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
    let a = JobSpec {
        numjobs: 2,
        ..timed("a", 1, 10 * NS_PER_MS)
    };
    let b = JobSpec {
        wait_for: Some("a".into()),
        ..timed("b", 1, 5 * NS_PER_MS)
    };
    let c = timed("c", 1, 5 * NS_PER_MS);
    let d = JobSpec {
        wait_for: Some("c".into()),
        startdelay_ns: 8 * NS_PER_MS,
        ..timed("d", 1, 5 * NS_PER_MS)
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

/// fio's `max_latency`: the first measured I/O slower than it stops the job with ETIMEDOUT
/// (110), counted in the results; a limit the I/Os meet changes nothing.
#[test]
fn max_latency_stops_a_job_with_etimedout() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let slow = JobSpec {
        max_latency_ns: [50 * NS_PER_US, 0, 0],
        ..timed("slow", 1, 10 * NS_PER_MS)
    };
    let err = crate::run_jobs(
        &file(vec![slow]),
        &mut dev,
        &RunOptions::new(1, "fake"),
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
    let met = JobSpec {
        max_latency_ns: [NS_PER_MS, 0, 0],
        ..timed("met", 1, 10 * NS_PER_MS)
    };
    let s = run(vec![met], &mut dev);
    assert_near(s[0].measured_ios[0] as f64, 100.0, 0.01, "ios");
}

/// fio checks `max_latency` inside `if (!td->o.disable_lat)` (`account_io_completion`): a
/// job that measures no total latency runs on past the limit.
#[test]
fn max_latency_is_not_checked_without_total_latency() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let slow = JobSpec {
        max_latency_ns: [50 * NS_PER_US, 0, 0],
        disable_lat: true,
        disable_slat: true,
        ..timed("slow", 1, 10 * NS_PER_MS)
    };
    let (result, s) = run_seeded(vec![slow], &mut dev, 1);
    assert_near(s[0].measured_ios[0] as f64, 100.0, 0.01, "ios");
    let j = job_json(&result, 0);
    assert_eq!(j["error"], 0);
    assert_eq!(j["read"]["lat_ns"]["N"], 0);
    assert_eq!(j["read"]["slat_ns"]["N"], 0);
    assert_eq!(j["read"]["clat_ns"]["N"], 100);
}

/// fio's `disable_clat`: no completion latency, percentiles or latency buckets; the
/// windowed bandwidth samples stay (fio 3.33 takes those whatever `disable_bw` says).
#[test]
fn disable_clat_takes_no_completion_latency() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = JobSpec {
        disable_clat: true,
        disable_bw: true,
        ..timed("noclat", 1, 2 * NS_PER_S)
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
    let result = crate::run_jobs(&file, &mut dev, &RunOptions::new(1, "fake"), &mut |_| {});
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
    let (run, log) = run_logged("[j]\nrw=write\nsize=256k\nverify=crc32c\niodepth=4\n", None);
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
    let err = crate::run_jobs(&file, &mut dev, &RunOptions::new(1, "fake"), &mut |_| {})
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
    let err = crate::run_jobs(&file, &mut dev, &RunOptions::new(1, "fake"), &mut |_| {})
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
