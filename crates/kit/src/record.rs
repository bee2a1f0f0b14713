//! What a session records of a device's run: each step, the steady-state rounds, and where
//! the suite is for a progress display.

use flashlab_device::HealthLog;
use flashlab_report::{as_reported, RunResult};
use flashlab_workload::{BlockSize, JobSpec, RwPattern};

use crate::measure::Measure;
use crate::steady::SteadyVerdict;

/// What kind of step ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// A secure erase.
    Purge,
    /// An fio job.
    Job,
    /// The host left the drive idle.
    Idle,
    /// A workload the suite drives itself, one I/O at a time (no fio job describes it).
    Driven,
}

impl StepKind {
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Purge => "purge",
            StepKind::Job => "job",
            StepKind::Idle => "idle",
            StepKind::Driven => "driven",
        }
    }
}

/// What a step did.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// Unique within the device's run, e.g. `round-03`.
    pub name: String,
    pub kind: StepKind,
    /// `None` for a purge or idle time; else the fio job text that ran.
    pub job_text: Option<String>,
    /// The fio JSON of the job (with the device's counters in `"flashlab"`), as `--outdir`
    /// writes it; the program reads the typed fields instead.
    pub fio_json: Option<String>,
    /// What the figures read of a job step: its workload and results, typed.
    pub figures: Option<JobFigures>,
    /// The drive's health log at the step's end (a job or driven step on a simulated drive;
    /// a system's are its drives', in its counters).
    pub health: Option<HealthLog>,
    /// Simulated time (ns since the suite started) at which the step ended.
    pub end_ns: u64,
    pub measures: Vec<Measure>,
}

/// One direction of a job step's results, summed over the step's jobs where a sum means
/// something (I/Os, IOPS, bandwidth); latency is the first job's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirectionFigures {
    pub ios: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub clat_mean_ns: f64,
    /// (percentile, completion latency in ns), ascending; empty when the job reports none.
    pub percentiles: Vec<(f64, f64)>,
}

/// A job step as the figures read it: the workload of its first job, from the parsed job,
/// and the results the run kept.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFigures {
    /// The workload without its depth: `4k randrw 70/30`, or a mix of sizes named by its
    /// job (an application profile's name).
    pub workload: String,
    pub random: bool,
    /// The block size the label names (reads' for a job that reads, else writes'); 0 for a
    /// mix of sizes.
    pub bs_bytes: u64,
    pub iodepth: u32,
    pub numjobs: u32,
    pub read: DirectionFigures,
    pub write: DirectionFigures,
    /// fio's latency distribution of the first job: (upper bound in ns, share of I/Os in
    /// percent).
    pub distribution: Vec<(f64, f64)>,
}

impl JobFigures {
    /// The figures of a step whose first job is `spec` and whose run gave `run`, at the
    /// precision fio's JSON reports them (the step files' figures); `None` when the run
    /// reports no job.
    pub fn of(spec: &JobSpec, run: &RunResult) -> Option<Self> {
        let first = run.jobs.first()?;
        let direction = |ddir: usize| {
            let job = first;
            let mut percentiles: Vec<(f64, f64)> = if job.reports_clat_percentiles() {
                job.clat_percentiles_ns(ddir)
                    .into_iter()
                    .map(|(p, ns)| (as_reported(p), ns as f64))
                    .collect()
            } else {
                Vec::new()
            };
            percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut d = DirectionFigures {
                ios: job.total_ios(ddir),
                iops: as_reported(job.iops(ddir)),
                bw_bytes_per_s: job.bw_bytes_per_s(ddir) as f64,
                clat_mean_ns: as_reported(job.clat_ns(ddir).map_or(0.0, |s| s.mean)),
                percentiles,
            };
            // Several job entries (no group reporting): their rates add up.
            for other in &run.jobs[1..] {
                d.ios += other.total_ios(ddir);
                d.iops += as_reported(other.iops(ddir));
                d.bw_bytes_per_s += other.bw_bytes_per_s(ddir) as f64;
            }
            d
        };
        let rw = spec.io.rw;
        let rw_name = RwPattern::NAMES
            .iter()
            .find(|(_, p)| *p == rw)
            .map_or("read", |(name, _)| name);
        let reads = rw.directions()[0];
        let [read_bs, write_bs, _] = &spec.block.bs;
        let (size, bs_bytes) = match (read_bs, write_bs) {
            (BlockSize::Split(_), _) | (_, BlockSize::Split(_)) => {
                (format!("{}, mixed sizes,", spec.id.name), 0)
            }
            (r, w) if !reads || r == w => (block_size_label(if reads { r } else { w }), {
                smallest(if reads { r } else { w })
            }),
            (r, w) => (
                format!("{},{}", block_size_label(r), block_size_label(w)),
                smallest(r),
            ),
        };
        let workload = if matches!(rw, RwPattern::ReadWrite | RwPattern::RandRw) {
            let read = spec.io.rwmixread.min(100);
            format!("{size} {rw_name} {read}/{}", 100 - read)
        } else {
            format!("{size} {rw_name}")
        };
        Some(JobFigures {
            workload,
            random: rw.is_random(),
            bs_bytes,
            iodepth: spec.engine.iodepth.max(1),
            numjobs: spec.control.numjobs.max(1),
            read: direction(flashlab_report::DDIR_READ),
            write: direction(flashlab_report::DDIR_WRITE),
            distribution: first
                .latency_distribution()
                .into_iter()
                .map(|(bound, share)| (bound, as_reported(share)))
                .collect(),
        })
    }
}

fn smallest(bs: &BlockSize) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range { min, .. } => *min,
        BlockSize::Split(_) => 0,
    }
}

/// `4k`, `1m`, `4k-16k`: sizes as fio writes them, a whole number of KiB or MiB.
fn block_size_label(bs: &BlockSize) -> String {
    let one = |bytes: u64| match bytes {
        b if b > 0 && b % (1 << 20) == 0 => format!("{}m", b >> 20),
        b if b > 0 && b % (1 << 10) == 0 => format!("{}k", b >> 10),
        b => b.to_string(),
    };
    match bs {
        BlockSize::Fixed(b) => one(*b),
        BlockSize::Range { min, max } => format!("{}-{}", one(*min), one(*max)),
        BlockSize::Split(_) => String::new(),
    }
}

/// The rounds of random writes and their steady-state verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyReport {
    /// The tracked value of every round (write IOPS), round 1 first.
    pub rounds_iops: Vec<f64>,
    pub verdict: SteadyVerdict,
}

/// Where a suite is, for a progress display. Reported when a step starts
/// (`step_started`) and then every so many simulated events while it runs; results never
/// depend on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuiteProgress<'a> {
    pub device: &'a str,
    pub step: &'a str,
    /// Steps started so far on this device, this one included.
    pub step_number: usize,
    /// True on the report that announces the step.
    pub step_started: bool,
    /// Round (from 1) of a repeated step, and the most rounds there may be.
    pub round: Option<usize>,
    pub max_rounds: Option<usize>,
    /// The drive's simulated time since the suite started on it.
    pub sim_ns: u64,
    /// Share of the step done, 0 to 1 (the runner's estimate).
    pub step_fraction: f64,
    /// Share of the whole suite done, when the suite knows its length or planned its steps.
    pub suite_fraction: Option<f64>,
    /// What `suite_fraction` measures.
    pub suite_basis: SuiteShare,
}

/// What a [`SuiteProgress::suite_fraction`] is the share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteShare {
    /// The suite's own measure of its work (bytes written, passes, points).
    Work,
    /// The steps the suite planned, each counted alike; with `rounds_at_most`, repeated
    /// rounds count at their most (steady state may come sooner), so the share is a floor.
    Steps { rounds_at_most: bool },
}
