//! The `oltp` suite (docs/reviews.md §3: "a MySQL OLTP workload (sysbench) on 16 VMs: transactions
//! per second and 99th-percentile latency").
//!
//! fio cannot run it: a transaction is a chain of dependent I/Os, and its latency is the
//! chain's. So the suite drives the device itself, closed loop, one event per I/O in time
//! order, with the storage traffic of sysbench's `oltp_read_write` on InnoDB:
//!
//! - each VM owns an equal share of the span (a virtual disk): its redo log at the start, the
//!   doublewrite buffer after it, the tablespace in the rest;
//! - each sysbench thread runs transactions back to back: [`READS_PER_TXN`] 16 KiB page reads
//!   at random places of the tablespace (buffer-pool misses), one after another, then the
//!   commit: a [`LOG_WRITE_BYTES`] append to the redo log and a flush
//!   (`innodb_flush_log_at_trx_commit = 1`); the transaction's latency runs from its first read
//!   to the flush's completion;
//! - each commit leaves [`DIRTY_PAGES_PER_TXN`] dirty pages; each VM's page cleaner writes them
//!   back in batches of up to [`CLEANER_BATCH`] pages: the batch to the doublewrite buffer
//!   (one sequential write), a flush, then every page to its place at once (asynchronous I/O).
//!
//! Where TPS peaks and how long the tail is come from the drive: its dies, buffer, flushes and
//! garbage collection under the cleaners' writes. The counts per transaction are estimates
//! (below, with their reasoning); the review's configuration (buffer pool, table size, threads)
//! is not published.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flashlab_engine::{BlockDevice, DeviceError, IoRequest, RngStream, SimTime, NS_PER_S};

use flashlab_kit::session::Session;
use flashlab_kit::steps::measure;
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::{Axis, Chart, Coord, Series, SuiteError, SuiteOptions, Unit};

/// InnoDB's page size (the default `innodb_page_size`).
const PAGE_BYTES: u64 = 16 << 10;
/// Page reads per transaction. `oltp_read_write` runs 10 point selects and 4 range selects of
/// 100 rows; on a table several times the buffer pool, most point selects miss (estimate: 8 of
/// the 14 queries read one page from the drive; ranges are mostly one leaf page).
pub const READS_PER_TXN: u32 = 8;
/// Redo log written per commit: the transaction's two updates, a delete and an insert take
/// well under a kilobyte of redo; InnoDB writes whole 512-byte log blocks and, with group
/// commit absent, each commit rewrites the last partly filled block (estimate: 4 KiB, the
/// drive's logical block of most preset drives, so no read-modify-write of the log).
pub const LOG_WRITE_BYTES: u64 = 4096;
/// Pages a transaction dirties: the rows of its two updates, its delete and its insert, each
/// on its own page at random (secondary-index pages are left out: estimate).
pub const DIRTY_PAGES_PER_TXN: u32 = 4;
/// Pages a page cleaner writes per batch: InnoDB's doublewrite buffer holds 2 × 64 pages
/// (`innodb_doublewrite_pages`, 64 by default on 8.0.20+ for one batch).
pub const CLEANER_BATCH: u32 = 64;
/// Redo log of one VM, at most (the share of its disk it may take is 1/16).
const LOG_MAX_BYTES: u64 = 1 << 30;
/// Warm-up before the measured window: threads start together, so the first transactions
/// and the cleaners' first batches are not typical.
pub const RAMP_NS: u64 = 2 * NS_PER_S;
/// Measured window when `--runtime` is not given.
pub const WINDOW_NS: u64 = 10 * NS_PER_S;
/// Most transaction latencies one run keeps (memory bound: 8 bytes each).
const MAX_SAMPLES: usize = 20_000_000;

/// Options of the oltp suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OltpOptions {
    /// Virtual machines, each with its own share of the span and its own MySQL.
    pub vms: u32,
    /// sysbench threads per VM.
    pub threads: u32,
}

impl Default for OltpOptions {
    fn default() -> Self {
        Self {
            vms: 16,
            threads: 8,
        }
    }
}

// `oltp`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct OltpArgs {
    /// oltp: virtual machines, each with its own MySQL on an equal share of the span.
    #[arg(long, default_value_t = 16)]
    vms: u32,
    /// oltp: sysbench threads per VM.
    #[arg(long, default_value_t = 8)]
    threads: u32,
}

impl flashlab_kit::options::OwnOptions for OltpOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        OltpOptions::validate(self)
    }
}

impl OltpOptions {
    pub fn validate(&self) -> Result<(), SuiteError> {
        if !(1..=1024).contains(&self.vms) {
            return Err(SuiteError::BadOption {
                option: "--vms",
                value: self.vms.to_string(),
                valid: "a count from 1 to 1024".into(),
            });
        }
        if !(1..=1024).contains(&self.threads) {
            return Err(SuiteError::BadOption {
                option: "--threads",
                value: self.threads.to_string(),
                valid: "a count from 1 to 1024".into(),
            });
        }
        Ok(())
    }
}

/// One VM's layout and its page cleaner.
struct Vm {
    start: u64,
    log_bytes: u64,
    dw_start: u64,
    data_start: u64,
    data_pages: u64,
    log_cursor: u64,
    dirty_pages: u64,
    cleaner: Cleaner,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cleaner {
    /// Waiting for dirty pages (woken by the next commit).
    Parked,
    /// Writing a batch of this many pages to the doublewrite buffer.
    Doublewrite,
    /// Flushing the doublewrite buffer of a batch.
    Flush(u32),
    /// Writing a batch's pages to their places.
    Pages(u32),
}

/// The outcome of one measured run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OltpPoint {
    pub tps: f64,
    pub lat_avg_ns: f64,
    /// Transaction latency at [`PERCENTILES`], then the maximum.
    pub lat_pct_ns: [f64; 6],
    pub page_writes_per_s: f64,
}

/// Latency percentiles reported (sysbench prints the 95th; the review gives the 99th).
pub const PERCENTILES: [f64; 5] = [50.0, 90.0, 95.0, 99.0, 99.9];

/// Run the workload on `dev` from time 0 for `ramp_ns + window_ns`: `vms` VMs of `threads`
/// threads over the first `span_bytes`. Returns the measured point (TPS of the simulated VMs)
/// and the last submission time.
pub fn run_workload(
    dev: &mut dyn BlockDevice,
    span_bytes: u64,
    vms: u32,
    threads: u32,
    window_ns: u64,
    rng: &mut RngStream,
) -> Result<(OltpPoint, SimTime), DeviceError> {
    let mut v = lay_out_vms(span_bytes, vms);
    let threads_total = (vms * threads) as usize;
    // Per thread: (I/O step within the transaction, the transaction's start).
    let mut th: Vec<(u32, SimTime)> = vec![(0, 0); threads_total];
    let mut events: BinaryHeap<Reverse<(SimTime, u32)>> =
        (0..threads_total as u32).map(|a| Reverse((0, a))).collect();
    let end_ns = RAMP_NS + window_ns;
    let mut lat: Vec<u64> = Vec::new();
    let mut page_writes = 0u64;
    let mut last_submit = 0;
    while let Some(Reverse((t, actor))) = events.pop() {
        if t >= end_ns {
            continue;
        }
        last_submit = t;
        let a = actor as usize;
        if a < threads_total {
            let vm = &mut v[a / threads as usize];
            let (step, start) = &mut th[a];
            if *step == 0 {
                *start = t;
            }
            let req = if *step < READS_PER_TXN {
                let page = rng.below(vm.data_pages.max(1));
                IoRequest::read(vm.data_start + page * PAGE_BYTES, PAGE_BYTES)
            } else if *step == READS_PER_TXN {
                if vm.log_cursor + LOG_WRITE_BYTES > vm.log_bytes {
                    vm.log_cursor = 0;
                }
                let at = vm.start + vm.log_cursor;
                vm.log_cursor += LOG_WRITE_BYTES;
                IoRequest::write(at, LOG_WRITE_BYTES)
            } else {
                IoRequest::flush()
            };
            let done = dev.submit(t, &req)?.done_ns;
            *step += 1;
            if *step == READS_PER_TXN + 2 {
                *step = 0;
                if done >= RAMP_NS && done < end_ns && lat.len() < MAX_SAMPLES {
                    lat.push(done - *start);
                }
                vm.dirty_pages += u64::from(DIRTY_PAGES_PER_TXN);
                if vm.cleaner == Cleaner::Parked {
                    vm.cleaner = Cleaner::Doublewrite;
                    let cleaner = threads_total as u32 + (a / threads as usize) as u32;
                    events.push(Reverse((done, cleaner)));
                }
            }
            events.push(Reverse((done, actor)));
        } else {
            let vm = &mut v[a - threads_total];
            let done = match vm.cleaner {
                Cleaner::Parked => continue,
                Cleaner::Doublewrite => {
                    let batch = vm.dirty_pages.min(u64::from(CLEANER_BATCH)) as u32;
                    if batch == 0 {
                        vm.cleaner = Cleaner::Parked;
                        continue;
                    }
                    vm.dirty_pages -= u64::from(batch);
                    vm.cleaner = Cleaner::Flush(batch);
                    let len = u64::from(batch) * PAGE_BYTES;
                    dev.submit(t, &IoRequest::write(vm.dw_start, len))?.done_ns
                }
                Cleaner::Flush(batch) => {
                    vm.cleaner = Cleaner::Pages(batch);
                    dev.submit(t, &IoRequest::flush())?.done_ns
                }
                Cleaner::Pages(batch) => {
                    let mut last = t;
                    for _ in 0..batch {
                        let page = rng.below(vm.data_pages.max(1));
                        let req = IoRequest::write(vm.data_start + page * PAGE_BYTES, PAGE_BYTES);
                        last = last.max(dev.submit(t, &req)?.done_ns);
                    }
                    if t >= RAMP_NS {
                        page_writes += u64::from(batch);
                    }
                    vm.cleaner = Cleaner::Doublewrite;
                    last
                }
            };
            events.push(Reverse((done, actor)));
        }
    }
    let point = measured_point(lat, page_writes, window_ns);
    Ok((point, last_submit))
}

/// Each VM's place in the first `span_bytes`: its log, its doublewrite buffer and its data
/// pages, side by side.
fn lay_out_vms(span_bytes: u64, vms: u32) -> Vec<Vm> {
    let vm_bytes = span_bytes / u64::from(vms) / PAGE_BYTES * PAGE_BYTES;
    let log_bytes = (vm_bytes / 16 / PAGE_BYTES * PAGE_BYTES).clamp(PAGE_BYTES, LOG_MAX_BYTES);
    let dw_bytes = u64::from(2 * CLEANER_BATCH) * PAGE_BYTES;
    (0..u64::from(vms))
        .map(|i| {
            let start = i * vm_bytes;
            Vm {
                start,
                log_bytes,
                dw_start: start + log_bytes,
                data_start: start + log_bytes + dw_bytes,
                data_pages: vm_bytes.saturating_sub(log_bytes + dw_bytes) / PAGE_BYTES,
                log_cursor: 0,
                dirty_pages: 0,
                cleaner: Cleaner::Parked,
            }
        })
        .collect()
}

/// The workload's point from its measured transactions' latencies and the cleaners' page
/// writes over the window.
fn measured_point(mut lat: Vec<u64>, page_writes: u64, window_ns: u64) -> OltpPoint {
    let window_s = window_ns as f64 / NS_PER_S as f64;
    lat.sort_unstable();
    let pct = |p: f64| {
        if lat.is_empty() {
            0.0
        } else {
            lat[((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1] as f64
        }
    };
    OltpPoint {
        tps: lat.len() as f64 / window_s,
        lat_avg_ns: if lat.is_empty() {
            0.0
        } else {
            lat.iter().sum::<u64>() as f64 / lat.len() as f64
        },
        lat_pct_ns: [
            pct(PERCENTILES[0] / 100.0),
            pct(PERCENTILES[1] / 100.0),
            pct(PERCENTILES[2] / 100.0),
            pct(PERCENTILES[3] / 100.0),
            pct(PERCENTILES[4] / 100.0),
            lat.last().map_or(0.0, |&m| m as f64),
        ],
        page_writes_per_s: page_writes as f64 / window_s,
    }
}

/// Precondition as the enterprise suites do (`--precondition`), then run the VMs.
pub(crate) fn run(s: &mut Session, opts: &SuiteOptions) -> Result<Outcome, SuiteError> {
    let o = *opts.own::<OltpOptions>();
    // The preconditioning, the settling idle time and the workload.
    let (precondition_steps, round_runs) = super::showdown::precondition_steps(s, opts);
    s.plan_steps(precondition_steps + 2, round_runs);
    let (_, mut results) = super::showdown::precondition_chosen(s, opts)?;
    s.settle("settle", 5 * NS_PER_S);
    // A die cut has 1/k of the drive's dies, link and command rate: it carries 1/k of the VMs
    // (at least one), and their transactions count k times.
    let die_factor = s.scale().die_factor;
    let sim_vms = ((f64::from(o.vms) / die_factor).round() as u32).clamp(1, o.vms);
    let vm_factor = f64::from(o.vms) / f64::from(sim_vms);
    let window_ns = opts.runtime_ns.unwrap_or(WINDOW_NS);
    let span_fraction = opts.precondition.span_percent / 100.0;
    let mut rng = s.stream("oltp");
    let point = s.drive_step("oltp", |dev| {
        let span = (dev.capacity_bytes() as f64 * span_fraction) as u64;
        run_workload(dev, span, sim_vms, o.threads, window_ns, &mut rng)
    })?;
    results.extend([
        measure("tps", Unit::Count, point.tps * vm_factor),
        measure("tps_per_vm", Unit::Count, point.tps / f64::from(sim_vms)),
        measure("lat_avg_ns", Unit::Ns, point.lat_avg_ns),
    ]);
    results.extend(
        PERCENTILES
            .iter()
            .zip(point.lat_pct_ns)
            .map(|(&p, v)| measure("lat_ns", Unit::Ns, v).col(Coord::Percentile(p))),
    );
    results.extend([
        measure("lat_max_ns", Unit::Ns, point.lat_pct_ns[5]),
        measure(
            "page_writes_per_s",
            Unit::Count,
            point.page_writes_per_s * vm_factor,
        ),
    ]);
    let chart = Chart {
        id: "oltp-latency".into(),
        title: format!(
            "sysbench OLTP transaction latency ({} VMs × {} threads)",
            o.vms, o.threads
        ),
        x: Axis::linear("percentile", Unit::Ratio),
        y: Axis::log("transaction latency", Unit::Ns),
        series: vec![Series {
            name: "latency".into(),
            points: PERCENTILES
                .iter()
                .chain(&[100.0])
                .zip(point.lat_pct_ns)
                .map(|(&p, v)| (p, v))
                .collect(),
        }],
        band: None,
    };
    Ok(Outcome {
        steady: None,
        results,
        charts: vec![chart],
    })
}
/// `oltp`: sysbench OLTP in virtual machines.
pub(crate) struct Oltp;

impl Suite for Oltp {
    fn name(&self) -> &'static str {
        "oltp"
    }
    fn summary(&self) -> &'static str {
        "sysbench OLTP (MySQL/InnoDB) in VMs on a preconditioned drive: transactions per second and latency percentiles"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Simulated
    }
    fn options(&self) -> &'static [&'static str] {
        &["precondition", "span", "seq-time", "random-time"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <OltpArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        let a = flashlab_kit::suite::parse_args::<OltpArgs>(m)?;
        *o.own_mut() = OltpOptions {
            vms: a.vms,
            threads: a.threads,
        };
        Ok(())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        let oltp = o.own::<OltpOptions>();
        Some((
            "oltp",
            serde_json::json!({
                "vms": oltp.vms,
                "threads_per_vm": oltp.threads,
                "reads_per_txn": READS_PER_TXN,
                "log_write_bytes": LOG_WRITE_BYTES,
                "dirty_pages_per_txn": DIRTY_PAGES_PER_TXN,
                "cleaner_batch_pages": CLEANER_BATCH,
                "precondition": o.precondition.to_json(),
            }),
        ))
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        run(s, opts)
    }
}
