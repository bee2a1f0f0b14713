//! Run-loop tests against a fake device with fixed latencies and an optional bandwidth limit,
//! so the expected numbers follow from arithmetic. The device and shared helpers are here,
//! the tests by theme in the submodules.

use std::collections::BTreeSet;

use flashlab_engine::{
    time::transfer_ns, BlockDevice, Completion, DeviceError, IoKind, IoRequest, SimTime, NS_PER_MS,
    NS_PER_S, NS_PER_US,
};
use flashlab_workload::{JobFile, JobSpec, RateProcess, RwPattern, SizeSpec, ThinkBlocks};

use crate::run::{run_with_summaries, CloneSummary};
use crate::{RunError, RunOptions};

mod errors;
mod pacing;
mod phases;
mod queue;
mod steady;
mod targets;
mod verify;

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
    /// Byte ranges in the device with their completion times, and how many submissions
    /// overlapped one of them.
    ranges_in_device: Vec<(SimTime, u64, u64)>,
    overlapping_submits: u64,
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
            ranges_in_device: Vec::new(),
            overlapping_submits: 0,
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

    fn prefetch(&self, _req: &IoRequest, _stage: flashlab_engine::PrefetchStage) {}
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
        self.ranges_in_device.retain(|r| r.0 > now_ns);
        if req.len_bytes > 0 {
            let (lo, hi) = (req.offset_bytes, req.offset_bytes + req.len_bytes);
            if self
                .ranges_in_device
                .iter()
                .any(|&(_, a, b)| a < hi && lo < b)
            {
                self.overlapping_submits += 1;
            }
            self.ranges_in_device.push((done_ns, lo, hi));
        }
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
    {
        let mut j = JobSpec::new(name, 1);
        j.io.rw = RwPattern::RandRead;
        j
    }
}

fn timed(name: &str, iodepth: u32, runtime_ns: SimTime) -> JobSpec {
    {
        let mut j = spec(name);
        j.engine.iodepth = iodepth;
        j.time.runtime_ns = Some(runtime_ns);
        j.time.time_based = true;
        j
    }
}

fn file(jobs: Vec<JobSpec>) -> JobFile {
    JobFile {
        path: "test.fio".into(),
        global_options: vec![],
        jobs,
        includes: Vec::new(),
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
    let (result, summaries) = run_with_summaries(
        &file(jobs),
        dev,
        &RunOptions::new(seed, "fake").with_host(crate::host::HostModel::Off),
    )
    .expect("run");
    assert!(!dev.out_of_order, "submissions went back in time");
    (result, summaries)
}

fn assert_near(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance * expected,
        "{what}: {actual} not within {tolerance} of {expected}"
    );
}

fn job_json(result: &flashlab_report::RunResult, job: usize) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&flashlab_report::render_json(result, false)).unwrap();
    v["jobs"][job].clone()
}
