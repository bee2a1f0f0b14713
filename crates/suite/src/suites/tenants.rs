//! Suites of many tenants on one drive, and of power states:
//!
//! - `write-pressure`: a rate-limited writer and 4 KiB random reads at a small depth, the
//!   writer's target raised step by step until the drive cannot keep up; the reads' latency
//!   against the write bandwidth achieved;
//! - `noisy-neighbor`: a drive split into namespaces, writers on half of them, 4 KiB random
//!   readers on the others; the quiet readers' latency alone and with the neighbours busy;
//! - `power`: short four corners in each power state of the drive: average and peak power,
//!   performance per watt, and whether every 1-second average kept under the state's cap.
//!
//! The ceiling, the interference and the watts are whatever the drive's dies, buffer, garbage
//! collection and power calendar make of the workload: nothing here knows what they should be.

use flashlab_device::{DeviceConfig, Ssd};
use flashlab_engine::{BlockDevice, SeedTree, NS_PER_S};
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};
use serde_json::json;

use flashlab_kit::error::device_error;
use flashlab_kit::grids::{spaced, Cols, GridSpec, P99, P99_9, P99_99, P99_9999};
use flashlab_kit::measure::write_size_label;
use flashlab_kit::measure::{LocalAxis, LocalCoord};
use flashlab_kit::options::PreconditionKind;
use flashlab_kit::session::Session;
use flashlab_kit::steps::{
    bw_bytes_per_s, iops, measure, qd_jobs, result_value, uniform_random_line, RAMP_NS,
    UNIFORM_RANDOM,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::Dim;
use flashlab_kit::SuiteOptions;
use flashlab_kit::{Axis, Chart, Coord, Measure, Series, SuiteError, Unit};

/// Most rate steps of one write size: bounds a sweep on a drive that never falls behind.
pub const MAX_STEPS: usize = 200;
/// A step whose writer achieves less than this share of its target ends the sweep.
const KEEP_UP_SHARE: f64 = 0.95;
/// Measured time of each step when `--runtime` is not given.
const STEP_NS: u64 = 10 * NS_PER_S;
/// Idle time (whole drive) between preconditioning and the first measurement.
const SETTLE_NS: u64 = 5 * NS_PER_S;
/// Namespaces the noisy-neighbor suite splits a drive without namespaces into.
const NEIGHBOR_NAMESPACES: u64 = 6;
/// Percentiles of the write-pressure reads and their key suffixes.
const PRESSURE_PERCENTILES: [(f64, &str); 4] = [
    (50.0, "p50"),
    (99.0, "p99"),
    (99.9, "p99_9"),
    (99.99, "p99_99"),
];
/// Percentiles of the noisy-neighbor readers.
const NEIGHBOR_PERCENTILES: [(f64, &str); 2] = [(99.99, "p99_99"), (99.9999, "p99_9999")];

/// Options of the write-pressure and noisy-neighbor suites.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantOptions {
    /// Write sizes of the write-pressure sweep, one sweep each.
    pub write_bs_bytes: Vec<u64>,
    /// First write-bandwidth target, and the step between targets (bytes/s).
    pub start_bytes_per_s: u64,
    pub step_bytes_per_s: u64,
    /// Read share (percent) of the noisy neighbours' 4 KiB random mix (0: writes only).
    pub neighbor_rwmixread: u32,
}

impl Default for TenantOptions {
    fn default() -> Self {
        Self {
            write_bs_bytes: vec![8 << 10, 16 << 10],
            start_bytes_per_s: 100_000_000,
            step_bytes_per_s: 50_000_000,
            neighbor_rwmixread: 30,
        }
    }
}

// `write-pressure`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct WritePressureArgs {
    /// write-pressure: write sizes, one sweep each, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "8k,16k")]
    write_bs: Vec<String>,
    /// write-pressure: first write-bandwidth target (100MB = 10^8 bytes/s).
    #[arg(long, default_value = "100MB")]
    start: String,
    /// write-pressure: step between write-bandwidth targets.
    #[arg(long, default_value = "50MB")]
    step: String,
}

impl WritePressureArgs {
    fn apply(&self, t: &mut TenantOptions) -> Result<(), SuiteError> {
        t.write_bs_bytes = self
            .write_bs
            .iter()
            .map(|b| flashlab_kit::parse_size("--write-bs", b))
            .collect::<Result<_, _>>()?;
        t.start_bytes_per_s = flashlab_kit::parse_size("--start", &self.start)?;
        t.step_bytes_per_s = flashlab_kit::parse_size("--step", &self.step)?;
        Ok(())
    }
}

// `noisy-neighbor`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct NoisyNeighborArgs {
    /// noisy-neighbor: read share (percent) of the neighbours' 4 KiB random mix (0: writes).
    #[arg(long, default_value_t = 30)]
    neighbor_rwmixread: u32,
}

impl flashlab_kit::options::OwnOptions for TenantOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        TenantOptions::validate(self)
    }
}

impl TenantOptions {
    pub fn validate(&self) -> Result<(), SuiteError> {
        let bad = |option: &'static str, value: String, valid: &str| {
            Err(SuiteError::BadOption {
                option,
                value,
                valid: valid.into(),
            })
        };
        if self.write_bs_bytes.is_empty()
            || self
                .write_bs_bytes
                .iter()
                .any(|&b| b == 0 || b % 4096 != 0 || b > 16 << 20)
        {
            return bad(
                "--write-bs",
                format!("{:?}", self.write_bs_bytes),
                "one or more sizes, multiples of 4 KiB up to 16 MiB (8k,16k)",
            );
        }
        if let Some((i, b)) = flashlab_kit::options::repeated(&self.write_bs_bytes, |&b| b) {
            return Err(flashlab_kit::options::repeated_error(
                "--write-bs",
                b.to_string(),
                i,
            ));
        }
        if self.start_bytes_per_s == 0 {
            return bad("--start", "0".into(), "a bandwidth above zero (100MB)");
        }
        if self.step_bytes_per_s == 0 {
            return bad("--step", "0".into(), "a bandwidth above zero (50MB)");
        }
        if self.neighbor_rwmixread > 100 {
            return bad(
                "--neighbor-rwmixread",
                self.neighbor_rwmixread.to_string(),
                "a percentage from 0 to 100",
            );
        }
        Ok(())
    }

    /// The options as the JSON report states them, with what preconditioning ran and the
    /// span the tests ran on (`suite` holds both).
    pub(crate) fn to_json(&self, suite: &SuiteOptions) -> serde_json::Value {
        let p = &suite.precondition;
        let precondition = match p.kind {
            PreconditionKind::Pts => PTS_PRECONDITION.to_string(),
            PreconditionKind::Showdown => super::showdown::describe(p, suite),
        };
        json!({
            "write_bs_bytes": self.write_bs_bytes,
            "start_bytes_per_s": self.start_bytes_per_s,
            "step_bytes_per_s": self.step_bytes_per_s,
            "read_qd": suite.read_qd,
            "neighbor_rwmixread": self.neighbor_rwmixread,
            "precondition": format!("{precondition}; {} s idle", SETTLE_NS / NS_PER_S),
            "preconditioning": p.to_json(),
        })
    }
}

/// Measured time and ramp of a time-based step: a ramp of at most a second, and never more
/// than half the measured time, so short test runs stay short.
fn step_lines(runtime_ns: u64) -> String {
    let ramp_ns = RAMP_NS.min(runtime_ns / 2);
    format!("time_based=1\nramp_time={ramp_ns}ns\nruntime={runtime_ns}ns\n")
}

fn percentile_list(p: &[(f64, &str)]) -> String {
    p.iter()
        .map(|(q, _)| q.to_string())
        .collect::<Vec<_>>()
        .join(":")
}

/// The reads of the job called `job`: IOPS, mean completion latency and one measure per
/// percentile.
fn read_latency(run: &RunResult, job: &str, percentiles: &[(f64, &str)]) -> Vec<Measure> {
    let mut m = Vec::new();
    let Some(j) = run.jobs.iter().find(|j| j.jobname() == job) else {
        return m;
    };
    m.push(measure("read_iops", Unit::Iops, j.iops(DDIR_READ)));
    if let Some(clat) = j.clat_ns(DDIR_READ) {
        m.push(measure("read_lat_avg_ns", Unit::Ns, clat.mean));
    }
    let pcts = j.clat_percentiles_ns(DDIR_READ);
    for &(p, _) in percentiles {
        if let Some(&(_, v)) = pcts.iter().find(|(q, _)| (q - p).abs() < 1e-9) {
            m.push(measure("read_lat_ns", Unit::Ns, v as f64).col(Coord::Percentile(p)));
        }
    }
    m
}

/// The read latency figure a series names by `key`: `avg`, or a percentile's (`p99_9`).
fn read_lat(key: &str, percentiles: &[(f64, &str)]) -> (&'static str, Option<Coord>) {
    match percentiles.iter().find(|(_, k)| *k == key) {
        Some(&(p, _)) => ("read_lat_ns", Some(Coord::Percentile(p))),
        None => ("read_lat_avg_ns", None),
    }
}

/// The value of the figure a power step measured (no row).
fn value(m: &[Measure], family: &str) -> Option<f64> {
    result_value(m, family, &[], None)
}

/// What `--precondition pts` does here, for the JSON report.
const PTS_PRECONDITION: &str = "purge; 128 KiB sequential writes over twice the capacity \
(QD32); 4 KiB random-write rounds (--round, --qd x --jobs) until the SNIA steady-state rule \
holds or --max-rounds";

/// The state in which the write-pressure and noisy-neighbor figures hold: with
/// `--precondition pts`, purge, sequential fill twice, then random-write rounds to steady
/// state (or `--max-rounds`); with `showdown`, the enterprise reviews' recipe
/// ([`super::showdown`]).
fn precondition(s: &mut Session, opts: &SuiteOptions) -> Result<Vec<Measure>, SuiteError> {
    let results = super::showdown::precondition_chosen(s, opts)?.1;
    // The last round leaves buffered writes and garbage collection behind; the first
    // measurement would wait for them and say nothing about the workload it runs.
    s.settle("settle", SETTLE_NS);
    Ok(results)
}

pub(crate) fn write_pressure(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let t = opts.own::<TenantOptions>();
    let mut results = precondition(s, opts)?;
    let runtime_ns = opts.runtime_ns.unwrap_or(STEP_NS);
    let (write_qd, _) = qd_jobs(opts);
    let pcts = percentile_list(&PRESSURE_PERCENTILES);
    // Both the writer and the reader stay in the partition, when there is one.
    let span = opts
        .precondition
        .span_line()
        .map_or(String::new(), |l| format!("{l}\n"));
    // Per write size: (write bandwidth achieved, read measures) of every step.
    let mut sweeps: Vec<(String, Vec<Point>)> = Vec::new();
    for &bs in &t.write_bs_bytes {
        let bsn = write_size_label(bs);
        let mut points = Vec::new();
        let mut ceiling = 0.0f64;
        let mut reached_end = false;
        for step in 1..=MAX_STEPS {
            let target = t.start_bytes_per_s + (step as u64 - 1).saturating_mul(t.step_bytes_per_s);
            let name = format!("pressure-{bsn}-{step:03}");
            let text = format!(
                "[global]\nioengine=libaio\ndirect=1\n{span}{}\n[writer]\nrw=randwrite\n{UNIFORM_RANDOM}\nbs={bsn}\n\
                 iodepth={write_qd}\nrate={target}\n\n[reader]\nrw=randread\nbs=4k\n\
                 iodepth={}\npercentile_list={pcts}\n",
                step_lines(runtime_ns),
                opts.read_qd
            );
            let waits_before = host_read_waits(&s.counters_json());
            // Each step measures the drive settled at its rate: on a slice it keeps its time.
            let run = s.steady_job(&name, &text, &|run| {
                let mut m = vec![measure(
                    "write_bw_bytes_per_s",
                    Unit::BytesPerS,
                    job_bw(run, "writer"),
                )];
                m.extend(read_latency(run, "reader", &PRESSURE_PERCENTILES));
                m
            })?;
            let achieved = job_bw(&run, "writer");
            let row = [Coord::WriteSize(bs), Coord::Step(step as u32)];
            results.push(
                measure(
                    "target_write_bw_bytes_per_s",
                    Unit::BytesPerS,
                    target as f64,
                )
                .under(&row),
            );
            results.push(measure("write_bw_bytes_per_s", Unit::BytesPerS, achieved).under(&row));
            let reads = read_latency(&run, "reader", &PRESSURE_PERCENTILES);
            results.extend(reads.iter().map(|m| m.clone().under(&row)));
            results.extend(
                wait_measures(&waits_before, &host_read_waits(&s.counters_json()))
                    .into_iter()
                    .map(|m| m.under(&row)),
            );
            points.push((achieved, reads));
            if achieved < KEEP_UP_SHARE * target as f64 {
                reached_end = true;
                break;
            }
            ceiling = ceiling.max(achieved);
        }
        let row = [Coord::WriteSize(bs)];
        results.push(measure("ceiling_write_bw_bytes_per_s", Unit::BytesPerS, ceiling).under(&row));
        // 0: the sweep ran out of steps before the drive fell behind (the ceiling is higher).
        results.push(
            measure(
                "ceiling_found",
                Unit::Count,
                f64::from(u8::from(reached_end)),
            )
            .under(&row),
        );
        sweeps.push((bsn, points));
    }
    let mut series = Vec::new();
    for (bsn, points) in &sweeps {
        let prefixes = ["avg"]
            .into_iter()
            .chain(PRESSURE_PERCENTILES.iter().map(|(_, k)| *k));
        for key in prefixes {
            let (family, col) = read_lat(key, &PRESSURE_PERCENTILES);
            series.push(Series {
                name: format!("{bsn} writes, read {}", key.replace('_', ".")),
                points: points
                    .iter()
                    .filter_map(|(bw, reads)| {
                        result_value(reads, family, &[], col).map(|v| (*bw, v))
                    })
                    .collect(),
            });
        }
    }
    let charts = vec![Chart {
        id: "write-pressure-read-latency".into(),
        title: "4 KiB random-read latency against the write bandwidth achieved".into(),
        x: Axis::linear("write bandwidth", Unit::BytesPerS),
        y: Axis::log("read completion latency", Unit::Ns),
        series,
        band: None,
    }];
    Ok(Outcome {
        steady: None,
        results,
        charts,
    })
}

/// Families of the mean wait of a host read by cause, in the order of the device's
/// `host_read_waits` counters.
const WAIT_FAMILIES: [(&str, &str); 10] = [
    ("host_reads", "read_wait_host_reads_ns"),
    ("internal_reads", "read_wait_internal_reads_ns"),
    ("programs", "read_wait_programs_ns"),
    ("erases", "read_wait_erases_ns"),
    ("suspending", "read_wait_suspending_ns"),
    ("suspend_step", "read_wait_suspend_step_ns"),
    ("suspend_latency", "read_wait_suspend_latency_ns"),
    ("die_busy", "read_wait_die_busy_ns"),
    ("channel", "read_wait_channel_ns"),
    ("power_cap", "read_wait_power_cap_ns"),
];

/// The drive's host array reads and their wait by cause (ns), from its counters (empty
/// off a simulated drive).
fn host_read_waits(counters: &serde_json::Value) -> (f64, Vec<f64>) {
    let media = &counters["media"];
    let reads = media["host_reads"].as_f64().unwrap_or(0.0);
    let waits = WAIT_FAMILIES
        .iter()
        .map(|(cause, _)| {
            media["host_read_waits"][cause]["ns"]
                .as_f64()
                .unwrap_or(0.0)
        })
        .collect();
    (reads, waits)
}

/// What a step's host reads waited for on their dies and channels, per read by cause: the
/// counters' growth over the step (ramp included) over the reads it made.
fn wait_measures(before: &(f64, Vec<f64>), after: &(f64, Vec<f64>)) -> Vec<Measure> {
    let reads = after.0 - before.0;
    if reads <= 0.0 || before.1.len() != after.1.len() {
        return Vec::new();
    }
    WAIT_FAMILIES
        .iter()
        .zip(before.1.iter().zip(&after.1))
        .map(|((_, family), (b, a))| measure(family, Unit::Ns, (a - b) / reads))
        .collect()
}

/// One write-pressure step: write bandwidth achieved and the reads' latency measures.
type Point = (f64, Vec<Measure>);

/// Bandwidth (read plus write) of the job called `job`.
fn job_bw(run: &RunResult, job: &str) -> f64 {
    run.jobs
        .iter()
        .filter(|j| j.jobname() == job)
        .map(|j| (j.bw_bytes_per_s(DDIR_READ) + j.bw_bytes_per_s(DDIR_WRITE)) as f64)
        .sum()
}

/// `config` split into [`NEIGHBOR_NAMESPACES`] equal namespaces when it has none.
fn split_config(config: &DeviceConfig, seeds: &SeedTree) -> Result<DeviceConfig, SuiteError> {
    if !config.namespaces.is_empty() {
        return Ok(config.clone());
    }
    let probe = Ssd::new(config, seeds.child("device")).map_err(|e| device_error(config, e))?;
    let full_bytes = probe.capacity_bytes() as f64 * probe.scale().capacity_factor;
    // Whole MiB, so every namespace stays aligned on a slice too.
    let each = (full_bytes / NEIGHBOR_NAMESPACES as f64 / (1u64 << 20) as f64).floor() as u64;
    let mut c = config.clone();
    c.namespaces = vec![flashlab_device::values::Size(each << 20); NEIGHBOR_NAMESPACES as usize];
    Ok(c)
}

/// Build the noisy-neighbor drive: the namespaces given, or six equal ones.
pub(crate) fn neighbor_config(
    config: &DeviceConfig,
    opts: &SuiteOptions,
) -> Result<DeviceConfig, SuiteError> {
    split_config(config, &SeedTree::new(opts.seed))
}

/// Build the drive with its namespaces (six equal ones unless the description has some) and
/// run the tenants on it.
pub(crate) fn noisy_neighbor(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let config = neighbor_config(s.require_config("noisy-neighbor")?, opts)?;
    // A drive without namespaces has one.
    let count = config.namespaces.len().max(1);
    let seeds = SeedTree::new(opts.seed).child("device");
    s.on_fresh_drive(&config, seeds, &|s| noisy_neighbor_on(s, count))
}

fn noisy_neighbor_on(s: &mut Session, count: usize) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let t = opts.own::<TenantOptions>();
    if count < 2 {
        return Err(SuiteError::BadOption {
            option: "--set namespaces",
            value: count.to_string(),
            valid: "a drive with at least two namespaces (or none: the suite makes six)".into(),
        });
    }
    if opts.precondition.span_percent < 100.0 {
        return Err(SuiteError::BadOption {
            option: "--span",
            value: opts.precondition.span_percent.to_string(),
            valid: "100 for noisy-neighbor: its namespaces divide the drive (set their sizes \
                    with --set namespaces=[...])"
                .into(),
        });
    }
    let noisy = count / 2;
    let mut results = precondition(s, opts)?;
    let runtime_ns = opts.runtime_ns.unwrap_or(STEP_NS);
    let (write_qd, _) = qd_jobs(opts);
    let pcts = percentile_list(&NEIGHBOR_PERCENTILES);
    // Quiet reader q (on namespace noisy + q + 1) runs at depth 1 + q mod read_qd.
    let quiet: Vec<(usize, u32)> = (noisy..count)
        .enumerate()
        .map(|(q, ns)| (ns + 1, 1 + (q as u32 % opts.read_qd)))
        .collect();
    let phases = neighbor_phases(&t, write_qd, runtime_ns, noisy, &quiet, &pcts);
    let mut per_phase: Vec<Vec<Measure>> = Vec::new();
    for (phase, text) in &phases {
        let quiet = &quiet;
        // Both phases measure the steady drive: on a slice they keep their time.
        let (_, m) = s.steady(|s| {
            s.job_on_namespaces(phase, text, &|run, _, _, _| {
                let mut m = Vec::new();
                for &(ns, _) in quiet {
                    let at = [Coord::Namespace(ns as u32)];
                    m.extend(
                        read_latency(run, &format!("quiet-ns{ns}"), &NEIGHBOR_PERCENTILES)
                            .into_iter()
                            .map(|x| x.under(&at)),
                    );
                }
                let noisy_iops: f64 = run
                    .jobs
                    .iter()
                    .filter(|j| j.jobname().starts_with("noisy-"))
                    .fold(0.0, |a, j| a + j.iops(DDIR_READ) + j.iops(DDIR_WRITE));
                m.push(measure("neighbour_iops", Unit::Iops, noisy_iops));
                m
            })
        })?;
        for x in &m {
            results.push(x.clone().under(&[Coord::Phase(phase)]));
        }
        per_phase.push(m);
    }
    let keys = neighbor_figures();
    worst_quiet(&mut results, &quiet, &keys, &per_phase);
    let charts = vec![neighbor_chart(&quiet, &keys, &per_phase)];
    Ok(Outcome {
        steady: None,
        results,
        charts,
    })
}

/// The two phases of noisy-neighbor and their job files: the quiet readers alone, then
/// with the noisy namespaces' writers.
fn neighbor_phases(
    t: &TenantOptions,
    write_qd: u32,
    runtime_ns: u64,
    noisy: usize,
    quiet: &[(usize, u32)],
    pcts: &str,
) -> [(&'static str, String); 2] {
    let readers = || {
        quiet
            .iter()
            .map(|(ns, qd)| {
                format!(
                    "[quiet-ns{ns}]\nfilename=ns{ns}\nrw=randread\nbs=4k\niodepth={qd}\n\
                     percentile_list={pcts}\n\n"
                )
            })
            .collect::<String>()
    };
    let global = format!(
        "[global]\nioengine=libaio\ndirect=1\nsize=100%\n{}\n",
        step_lines(runtime_ns)
    );
    let (mix, rw) = if t.neighbor_rwmixread == 0 {
        (String::new(), "randwrite")
    } else {
        (format!("rwmixread={}\n", t.neighbor_rwmixread), "randrw")
    };
    let neighbours = (1..=noisy)
        .map(|ns| {
            format!("[noisy-ns{ns}]\nfilename=ns{ns}\nrw={rw}\n{UNIFORM_RANDOM}\n{mix}bs=4k\niodepth={write_qd}\n\n")
        })
        .collect::<String>();
    [
        ("alone", format!("{global}{}", readers())),
        ("neighbours", format!("{global}{}{neighbours}", readers())),
    ]
}

/// The figures judged per quiet namespace: (family, percentile column).
type QuietFigure = (&'static str, Option<Coord>);

/// Average read latency, then each of [`NEIGHBOR_PERCENTILES`].
fn neighbor_figures() -> Vec<QuietFigure> {
    [("read_lat_avg_ns", None)]
        .into_iter()
        .chain(
            NEIGHBOR_PERCENTILES
                .iter()
                .map(|&(p, _)| ("read_lat_ns", Some(Coord::Percentile(p)))),
        )
        .collect::<Vec<_>>()
}

/// A quiet namespace's value of `family` (at `col`) among a phase's measures.
fn quiet_value(m: &[Measure], ns: usize, family: &str, col: Option<Coord>) -> Option<f64> {
    result_value(m, family, &[Coord::Namespace(ns as u32)], col)
}

/// Worst quiet namespace of each phase, per figure: the tenant that suffers most.
fn worst_quiet(
    results: &mut Vec<Measure>,
    quiet: &[(usize, u32)],
    keys: &[QuietFigure],
    per_phase: &[Vec<Measure>],
) {
    for (&phase, m) in ["alone", "neighbours"].iter().zip(per_phase) {
        for &(family, col) in keys {
            let worst = quiet
                .iter()
                .filter_map(|&(ns, _)| quiet_value(m, ns, family, col))
                .fold(0.0, f64::max);
            let mut w = measure(family, Unit::Ns, worst)
                .under(&[Coord::Phase(phase), Coord::Local(WORST_QUIET)]);
            w.col = col;
            results.push(w);
        }
    }
}

/// Each quiet namespace's read latencies, alone and with busy neighbours.
fn neighbor_chart(
    quiet: &[(usize, u32)],
    keys: &[QuietFigure],
    per_phase: &[Vec<Measure>],
) -> Chart {
    let series = ["alone", "neighbours"]
        .iter()
        .zip(per_phase)
        .flat_map(|(phase, m)| {
            keys.iter().map(move |&(family, col)| {
                // "read lat avg", "read lat p99.99": as the other legends spell them.
                let figure = match col {
                    Some(Coord::Percentile(p)) => format!("read lat p{p}"),
                    _ => {
                        let mut m = measure(family, Unit::Ns, 0.0);
                        m.col = col;
                        m.key().trim_end_matches("_ns").replace('_', " ")
                    }
                };
                Series {
                    name: format!("{phase}: {figure}"),
                    points: quiet
                        .iter()
                        .filter_map(|&(ns, _)| {
                            quiet_value(m, ns, family, col).map(|v| (ns as f64, v))
                        })
                        .collect(),
                }
            })
        })
        .collect();
    Chart {
        id: "noisy-neighbor-read-latency".into(),
        title: "Quiet namespaces' 4 KiB random-read latency, alone and with busy neighbours".into(),
        x: Axis::linear("namespace", Unit::Count),
        y: Axis::log("read completion latency", Unit::Ns),
        series,
        band: None,
    }
}

/// The four corners of the power suite: step, fio rw, block size, direction, queue depth
/// without `--qd` (the data-center four corners' depths: sequential QD128, random QD256, as
/// `jobs/four-corners/enterprise.fio`; a drive with a shallower queue caps them).
const POWER_TESTS: [(&str, &str, &str, usize, u32); 4] = [
    ("seq-read-128k", "read", "128k", DDIR_READ, 128),
    ("seq-write-128k", "write", "128k", DDIR_WRITE, 128),
    ("rand-read-4k", "randread", "4k", DDIR_READ, 256),
    ("rand-write-4k", "randwrite", "4k", DDIR_WRITE, 256),
];
/// Whole power-meter windows each test keeps at least: power is averaged over whole 1-second
/// windows only, and the runner shortens a write step's time on a slice by its time factor.
const POWER_MIN_WINDOWS: u64 = 3;
/// Measured time of each power test when `--runtime` is not given.
const POWER_TEST_NS: u64 = 5 * NS_PER_S;

/// One test's average and peak watts.
type TestWatts = (f64, f64);
/// One power state's figures: (state, cap in watts, per test: average and peak watts).
type StateWatts = (usize, Option<f64>, Vec<TestWatts>);

/// Build a fresh drive per power state and run the tests on each.
pub(crate) fn power(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let config = s.require_config("power")?;
    let states = config.power.states.len().max(1);
    let runtime_ns = opts.runtime_ns.unwrap_or(POWER_TEST_NS);
    let mut results = Vec::new();
    let mut per_state: Vec<StateWatts> = Vec::new();
    for state in 0..states {
        let mut c = config.clone();
        c.power.state = state as u32;
        let cap_w = state_cap_w(config, state)?;
        // Every state starts from the same fresh drive: the same seed, a new instance.
        let seeds = SeedTree::new(opts.seed).child("device");
        let (state_results, watts) = s.on_fresh_drive(&c, seeds, &|s| {
            power_state(s, opts, state, cap_w, runtime_ns)
        })?;
        results.extend(state_results);
        per_state.push((state, cap_w, watts));
    }
    let charts = vec![power_chart(&per_state)];
    Ok(Outcome {
        steady: None,
        results,
        charts,
    })
}

/// The power cap of `state` in watts, from the drive's `power.states` (none: no cap).
fn state_cap_w(config: &DeviceConfig, state: usize) -> Result<Option<f64>, SuiteError> {
    Ok(match config.power.states.get(state).map(|s| s.trim()) {
        None => None,
        Some(t) if t.eq_ignore_ascii_case("none") => None,
        Some(t) => Some(
            flashlab_device::units::parse_power_uw(t).map_err(|e| SuiteError::BadOption {
                option: "power.states",
                value: t.to_string(),
                valid: e.to_string(),
            })? as f64
                / 1e6,
        ),
    })
}

/// The power tests on a fresh drive in power state `state`: their measures, and each test's
/// average and peak watts.
fn power_state(
    s: &mut Session,
    opts: &SuiteOptions,
    state: usize,
    cap_w: Option<f64>,
    runtime_ns: u64,
) -> Result<(Vec<Measure>, Vec<TestWatts>), SuiteError> {
    let mut results = Vec::new();
    let ps = Coord::PowerState(state as u32);
    let prefix = format!("{}_", ps.key());
    purge_and_fill_prefixed(s, &prefix)?;
    let mut watts = Vec::new();
    let mut all_under = true;
    // Simulated time runs this much faster for writes on a slice (`Session::drive_ns`).
    let sc = s.scale();
    let time_factor = (sc.capacity_factor / sc.die_factor).max(1.0);
    for (name, rw, bs, ddir, depth) in POWER_TESTS {
        let step = format!("{prefix}{name}");
        let qd = opts.qd.unwrap_or(depth);
        // Ramp plus the windows, in the whole drive's time (a read step's time is not
        // shortened on a slice). A shorter step would average no whole window and read
        // as 0 W, under any cap.
        let factor = if ddir == DDIR_WRITE { time_factor } else { 1.0 };
        let min_ns = ((POWER_MIN_WINDOWS + 1) * NS_PER_S) as f64 * factor;
        let runtime = runtime_ns.max(min_ns.ceil() as u64);
        let text = format!(
            "[global]\nioengine=libaio\ndirect=1\ngroup_reporting=1\nsize=100%\n{}\n\
             [{name}]\nrw={rw}\n{}bs={bs}\niodepth={qd}\n",
            step_lines(runtime),
            uniform_random_line(rw)
        );
        let (_, m) = s.job_on_namespaces(&step, &text, &|run, ssd, from, until| {
            let p = ssd.power_summary(from, until);
            let perf = if bs == "4k" {
                iops(run, ddir)
            } else {
                bw_bytes_per_s(run, ddir)
            };
            vec![
                measure("avg_power_w", Unit::Ratio, p.average_w),
                measure("peak_power_w", Unit::Ratio, p.peak_w),
                measure("power_windows", Unit::Count, p.windows as f64),
                measure(
                    if bs == "4k" { "iops" } else { "bw_bytes_per_s" },
                    if bs == "4k" {
                        Unit::Iops
                    } else {
                        Unit::BytesPerS
                    },
                    perf,
                ),
            ]
        })?;
        let row = [ps, Coord::Test(name)];
        let avg = value(&m, "avg_power_w").unwrap_or(0.0);
        let peak = value(&m, "peak_power_w").unwrap_or(0.0);
        for x in &m {
            results.push(x.clone().under(&row));
        }
        let (perf_key, perf) = match value(&m, "iops") {
            Some(v) => ("iops_per_w", v),
            None => (
                "mb_per_s_per_w",
                value(&m, "bw_bytes_per_s").unwrap_or(0.0) / 1e6,
            ),
        };
        if avg > 0.0 {
            results.push(measure(perf_key, Unit::Ratio, perf / avg).under(&row));
        }
        if let Some(cap) = cap_w {
            // The meter's windows carry rounding of a few microwatts at most.
            let under = peak <= cap * (1.0 + 1e-9) + 1e-6;
            all_under &= under;
            results.push(
                measure("peak_under_cap", Unit::Count, f64::from(u8::from(under))).under(&row),
            );
        }
        watts.push((avg, peak));
    }
    if let Some(cap) = cap_w {
        results.push(measure("cap_w", Unit::Ratio, cap).under(&[ps]));
        results.push(
            measure(
                "all_peaks_under_cap",
                Unit::Count,
                f64::from(u8::from(all_under)),
            )
            .under(&[ps]),
        );
    }
    Ok((results, watts))
}

/// Each power state's average watts per test.
fn power_chart(per_state: &[StateWatts]) -> Chart {
    let series = per_state
        .iter()
        .map(|(state, cap, w)| Series {
            name: match cap {
                Some(c) => format!("PS{state} (cap {c} W)"),
                None => format!("PS{state} (no cap)"),
            },
            points: w
                .iter()
                .enumerate()
                .map(|(i, (avg, _))| ((i + 1) as f64, *avg))
                .collect(),
        })
        .collect();
    Chart {
        id: "power-watts".into(),
        title: "Average power per test (1 seq read 128k, 2 seq write 128k, 3 rand read 4k, \
                4 rand write 4k) in each power state"
            .into(),
        x: Axis::linear("test", Unit::Count),
        y: Axis::linear("watts", Unit::Ratio),
        series,
        band: None,
    }
}

fn purge_and_fill_prefixed(s: &mut Session, prefix: &str) -> Result<(), SuiteError> {
    flashlab_kit::steps::purge_and_fill_with(s, prefix, "128k", 1)
}

/// `write-pressure`: read latency as rate-limited writes rise.
pub(crate) struct WritePressure;

impl Suite for WritePressure {
    fn name(&self) -> &'static str {
        "write-pressure"
    }
    fn summary(&self) -> &'static str {
        "rate-limited writes raised step by step beside 4 KiB random reads: read tail vs write MB/s"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Simulated
    }
    fn options(&self) -> &'static [&'static str] {
        &["read-qd", "precondition", "span", "seq-time", "random-time"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <WritePressureArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        flashlab_kit::suite::parse_args::<WritePressureArgs>(m)?.apply(o.own_mut())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        Some(("tenants", o.own::<TenantOptions>().to_json(o)))
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[WRITE_PRESSURE]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        write_pressure(s)
    }
}

/// `noisy-neighbor`: quiet namespaces beside busy ones.
pub(crate) struct NoisyNeighbor;

impl Suite for NoisyNeighbor {
    fn name(&self) -> &'static str {
        "noisy-neighbor"
    }
    fn summary(&self) -> &'static str {
        "namespaces: writers on half, 4 KiB readers on the rest; quiet read tail alone vs with neighbours"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Description
    }
    fn options(&self) -> &'static [&'static str] {
        &["read-qd", "precondition", "span", "seq-time", "random-time"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <NoisyNeighborArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        o.own_mut::<TenantOptions>().neighbor_rwmixread =
            flashlab_kit::suite::parse_args::<NoisyNeighborArgs>(m)?.neighbor_rwmixread;
        Ok(())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        Some(("tenants", o.own::<TenantOptions>().to_json(o)))
    }
    fn axes(&self) -> &'static [&'static LocalAxis] {
        &[&WORST_QUIET_AXIS]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[NOISY_NEIGHBOR]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        noisy_neighbor(s)
    }
}

/// `power`: four corners in each power state.
pub(crate) struct Power;

impl Suite for Power {
    fn name(&self) -> &'static str {
        "power"
    }
    fn summary(&self) -> &'static str {
        "four corners in each power state: average and peak watts, performance per watt, caps held"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Description
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[POWER]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        power(s)
    }
}

/// Of the quiet namespaces, the one that fared worst in a figure (`worst_quiet`): an axis of
/// one value.
pub(crate) const WORST_QUIET_AXIS: LocalAxis = LocalAxis {
    name: "worst-quiet-namespace",
    dim: Dim::Namespace,
    key: |_| "worst_quiet".to_string(),
    value: |_| "worst quiet".to_string(),
    tidy: |_| vec![("namespace", "worst_quiet".to_string())],
};
const WORST_QUIET: LocalCoord = LocalCoord::new(&WORST_QUIET_AXIS, [0; 4]);

// The grids it lays its results out in.
const WRITE_PRESSURE: GridSpec = GridSpec {
    title: "Read latency per write-bandwidth step",
    row_header: "write size, step",
    dims: &[Dim::BlockSize, Dim::Step],
    cols: Cols::Figures(&[
        ("target write", "target_write_bw_bytes_per_s", None),
        ("achieved write", "write_bw_bytes_per_s", None),
        ("read IOPS", "read_iops", None),
        ("read avg", "read_lat_avg_ns", None),
        ("p99", "read_lat_ns", P99),
        ("p99.9", "read_lat_ns", P99_9),
        ("p99.99", "read_lat_ns", P99_99),
    ]),
    row_label: spaced,
};

const NOISY_NEIGHBOR: GridSpec = GridSpec {
    title: "Quiet namespaces' reads, alone and beside the neighbours",
    row_header: "phase, namespace",
    dims: &[Dim::Phase, Dim::Namespace],
    cols: Cols::Figures(&[
        ("read IOPS", "read_iops", None),
        ("read avg", "read_lat_avg_ns", None),
        ("p99.99", "read_lat_ns", P99_99),
        ("p99.9999", "read_lat_ns", P99_9999),
    ]),
    row_label: spaced,
};

const POWER: GridSpec = GridSpec {
    title: "Power per test and power state",
    row_header: "state, test",
    dims: &[Dim::PowerState, Dim::Test],
    cols: Cols::Figures(&[
        ("average W", "avg_power_w", None),
        ("peak W", "peak_power_w", None),
        ("throughput", "bw_bytes_per_s", None),
        ("IOPS", "iops", None),
        ("MB/s per W", "mb_per_s_per_w", None),
        ("IOPS per W", "iops_per_w", None),
    ]),
    row_label: spaced,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_name_what_is_out_of_range() {
        assert!(TenantOptions::default().validate().is_ok());
        let cases = [
            (
                TenantOptions {
                    write_bs_bytes: vec![8192, 1000],
                    ..Default::default()
                },
                "--write-bs",
            ),
            (
                TenantOptions {
                    step_bytes_per_s: 0,
                    ..Default::default()
                },
                "--step",
            ),
        ];
        for (o, option) in cases {
            let msg = o.validate().unwrap_err().to_string();
            assert!(msg.contains(option), "{msg}");
        }
        assert_eq!(write_size_label(8192), "8k");
        assert_eq!(write_size_label(1 << 20), "1m");
    }
}
