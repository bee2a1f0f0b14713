//! `recovery`: how much garbage collection a dirty drive still owes, and how much of it idle
//! time pays back.
//!
//! - `dirty` (the Intel SSD 710 review's sequence): purge, one sequential fill, 4 KiB random
//!   writes for each `dirty` length, then 128 KiB sequential write and read probes; idle time
//!   (the drive's background GC runs, `BlockDevice::idle`) and the same probes again.
//! - `hir` (SNIA PTS host idle recovery): preconditioning to steady state, then for each
//!   idle length bursts of 4 KiB random writes separated by that much idle time, each wait
//!   state followed by continuous writes that return the drive to its baseline.

use flashlab_engine::NS_PER_S;
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};
use serde_json::json;

use flashlab_kit::grids::{spaced, values, Cols, GridSpec};
use flashlab_kit::measure::time_label;
use flashlab_kit::measure::{LocalAxis, LocalCoord};
use flashlab_kit::session::Session;
use flashlab_kit::steps::{
    bw_bytes_per_s, iops, job_text, measure, purge_and_fill, qd_jobs, random_write_rounds,
    steady_chart, steady_iops,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::Dim;
use flashlab_kit::{Axis, Chart, Coord, Measure, Series, SuiteError, SuiteOptions, Unit};

const NS_PER_MIN: u64 = 60 * NS_PER_S;
/// Most HIR bursts per wait state and most list entries: bounds the run.
pub const MAX_BURSTS: u32 = 10_000;
const MAX_LIST: usize = 32;

/// Which recovery test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryVariant {
    Dirty,
    Hir,
}

impl RecoveryVariant {
    pub fn name(self) -> &'static str {
        match self {
            RecoveryVariant::Dirty => "dirty",
            RecoveryVariant::Hir => "hir",
        }
    }

    pub fn parse(text: &str) -> Result<Self, SuiteError> {
        match text {
            "dirty" => Ok(RecoveryVariant::Dirty),
            "hir" => Ok(RecoveryVariant::Hir),
            _ => Err(SuiteError::BadOption {
                option: "--variant",
                value: text.to_string(),
                valid: "dirty or hir".into(),
            }),
        }
    }
}

/// Options of the `recovery` suite (simulated times of the whole drive).
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryOptions {
    pub variant: RecoveryVariant,
    /// dirty: lengths of the random-write phase; each runs from a fresh purge and fill.
    pub dirty_ns: Vec<u64>,
    /// dirty: cumulative idle times after which the probes run again, ascending.
    pub idle_ns: Vec<u64>,
    /// dirty: length of each sequential probe.
    pub probe_ns: u64,
    /// hir: bursts per wait state.
    pub hir_bursts: u32,
    /// hir: length of one burst of random writes.
    pub hir_burst_ns: u64,
    /// hir: idle time after each burst, in multiples of the burst length, one wait state each.
    pub hir_idle_multiples: Vec<u32>,
    /// hir: continuous random writes after each wait state (return to baseline).
    pub hir_baseline_ns: u64,
}

impl Default for RecoveryOptions {
    fn default() -> Self {
        Self {
            variant: RecoveryVariant::Dirty,
            dirty_ns: vec![20 * NS_PER_MIN],
            idle_ns: vec![30 * NS_PER_MIN],
            probe_ns: 30 * NS_PER_S,
            // SNIA PTS-E runs 360 bursts and 1800 s baselines; shorter defaults keep a run of
            // the default drive to minutes (docs/suites.md).
            hir_bursts: 60,
            hir_burst_ns: 5 * NS_PER_S,
            hir_idle_multiples: vec![1, 2, 3, 5, 10],
            hir_baseline_ns: 300 * NS_PER_S,
        }
    }
}

// `recovery`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct RecoveryArgs {
    /// recovery: `dirty` (fill, random writes, sequential probes before and after idle) or
    /// `hir` (SNIA PTS host idle recovery).
    #[arg(long, default_value = "dirty")]
    variant: String,
    /// recovery dirty: minutes of 4 KiB random writes, comma-separated; each from a fresh fill.
    #[arg(long, value_delimiter = ',', default_value = "20")]
    dirty_minutes: Vec<f64>,
    /// recovery dirty: cumulative idle minutes after which the probes run again, ascending.
    #[arg(long, value_delimiter = ',', default_value = "30")]
    idle_minutes: Vec<f64>,
    /// recovery dirty: seconds of each 128 KiB sequential write and read probe.
    #[arg(long, default_value_t = 30.0)]
    probe_seconds: f64,
    /// recovery hir: bursts per wait state (SNIA PTS: 360).
    #[arg(long, default_value_t = 60)]
    hir_bursts: u32,
    /// recovery hir: seconds of random writes per burst (SNIA PTS: 5).
    #[arg(long, default_value_t = 5.0)]
    hir_burst_seconds: f64,
    /// recovery hir: idle time after each burst in multiples of the burst, one wait state
    /// each (SNIA PTS: 1,2,3,5,10).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,5,10")]
    hir_idle_multiples: Vec<u32>,
    /// recovery hir: seconds of continuous writes after each wait state (SNIA PTS: 1800).
    #[arg(long, default_value_t = 300.0)]
    hir_baseline_seconds: f64,
}

impl RecoveryArgs {
    fn apply(&self, r: &mut RecoveryOptions) -> Result<(), SuiteError> {
        use flashlab_kit::options::{minutes_ns, seconds_ns};
        r.variant = RecoveryVariant::parse(&self.variant)?;
        r.dirty_ns = minutes_ns("--dirty-minutes", &self.dirty_minutes)?;
        r.idle_ns = minutes_ns("--idle-minutes", &self.idle_minutes)?;
        r.probe_ns = seconds_ns("--probe-seconds", self.probe_seconds)?;
        r.hir_bursts = self.hir_bursts;
        r.hir_burst_ns = seconds_ns("--hir-burst-seconds", self.hir_burst_seconds)?;
        r.hir_idle_multiples = self.hir_idle_multiples.clone();
        r.hir_baseline_ns = seconds_ns("--hir-baseline-seconds", self.hir_baseline_seconds)?;
        Ok(())
    }
}

impl flashlab_kit::options::OwnOptions for RecoveryOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        RecoveryOptions::validate(self)
    }
}

impl RecoveryOptions {
    pub fn validate(&self) -> Result<(), SuiteError> {
        let bad = |option: &'static str, value: String, valid: &str| {
            Err(SuiteError::BadOption {
                option,
                value,
                valid: valid.to_string(),
            })
        };
        let list = |v: &[u64]| {
            v.iter()
                .map(|ns| format!("{}", *ns as f64 / NS_PER_MIN as f64))
                .collect::<Vec<_>>()
                .join(",")
        };
        if self.dirty_ns.is_empty() || self.dirty_ns.len() > MAX_LIST || self.dirty_ns.contains(&0)
        {
            return bad(
                "--dirty-minutes",
                list(&self.dirty_ns),
                "1 to 32 lengths above zero, e.g. 20,60",
            );
        }
        if let Some((i, ns)) = flashlab_kit::options::repeated(&self.dirty_ns, |&ns| time_label(ns))
        {
            return Err(flashlab_kit::options::repeated_error(
                "--dirty-minutes",
                (ns as f64 / NS_PER_MIN as f64).to_string(),
                i,
            ));
        }
        if self.idle_ns.is_empty()
            || self.idle_ns.len() > MAX_LIST
            || self.idle_ns.contains(&0)
            || self.idle_ns.windows(2).any(|w| w[0] >= w[1])
        {
            return bad(
                "--idle-minutes",
                list(&self.idle_ns),
                "1 to 32 ascending times above zero, e.g. 30 or 5,30",
            );
        }
        if self.probe_ns == 0 {
            return bad("--probe-seconds", "0".into(), "a time above zero, e.g. 30");
        }
        if self.hir_bursts == 0 || self.hir_bursts > MAX_BURSTS {
            return bad(
                "--hir-bursts",
                self.hir_bursts.to_string(),
                "1 to 10000 (SNIA PTS: 360)",
            );
        }
        if self.hir_burst_ns == 0 {
            return bad(
                "--hir-burst-seconds",
                "0".into(),
                "a time above zero (SNIA PTS: 5)",
            );
        }
        if self.hir_idle_multiples.is_empty()
            || self.hir_idle_multiples.len() > MAX_LIST
            || self.hir_idle_multiples.iter().any(|&m| m == 0 || m > 1000)
        {
            return bad(
                "--hir-idle-multiples",
                format!("{:?}", self.hir_idle_multiples),
                "1 to 32 multiples from 1 to 1000 of the burst length (SNIA PTS: 1,2,3,5,10)",
            );
        }
        if let Some((i, m)) = flashlab_kit::options::repeated(&self.hir_idle_multiples, |&m| m) {
            return Err(flashlab_kit::options::repeated_error(
                "--hir-idle-multiples",
                m.to_string(),
                i,
            ));
        }
        if self.hir_baseline_ns == 0 {
            return bad(
                "--hir-baseline-seconds",
                "0".into(),
                "a time above zero (SNIA PTS: 1800)",
            );
        }
        Ok(())
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self.variant {
            RecoveryVariant::Dirty => json!({
                "variant": "dirty",
                "dirty_ns": self.dirty_ns,
                "idle_ns": self.idle_ns,
                "probe_ns": self.probe_ns,
            }),
            RecoveryVariant::Hir => json!({
                "variant": "hir",
                "bursts": self.hir_bursts,
                "burst_ns": self.hir_burst_ns,
                "idle_multiples": self.hir_idle_multiples,
                "baseline_ns": self.hir_baseline_ns,
            }),
        }
    }
}

fn timed_lines(ns: u64) -> Vec<String> {
    vec!["time_based=1".to_string(), format!("runtime={ns}ns")]
}

pub(crate) fn run(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    s.require_ftl("recovery")?;
    match opts.own::<RecoveryOptions>().variant {
        RecoveryVariant::Dirty => {
            let (results, charts) = dirty(s, opts)?;
            Ok(Outcome {
                steady: None,
                results,
                charts,
            })
        }
        RecoveryVariant::Hir => {
            let (results, charts, steady) = hir(s, opts)?;
            Ok(Outcome {
                steady: Some(steady),
                results,
                charts,
            })
        }
    }
}

/// Throughput of one probe: `(idle ns before it, write B/s, read B/s)`.
type Probe = (u64, f64, f64);

fn dirty(s: &mut Session, opts: &SuiteOptions) -> Result<(Vec<Measure>, Vec<Chart>), SuiteError> {
    let r = opts.own::<RecoveryOptions>();
    let (qd, jobs) = qd_jobs(opts);
    let mut results = Vec::new();
    let mut curves: Vec<(String, Vec<Probe>)> = Vec::new();
    // purge, fill, random writes, two probes; then per idle time: idle and two probes.
    let steps_per_length = 5 + 3 * r.idle_ns.len();
    for (n, &dirty_ns) in r.dirty_ns.iter().enumerate() {
        let dirty = Coord::Dirty(dirty_ns);
        let label = dirty.key();
        let mut step = 0;
        let mut next = |s: &mut Session| {
            let total = (r.dirty_ns.len() * steps_per_length) as f64;
            let done = (n * steps_per_length + step) as f64;
            s.suite_span = Some((done / total, (done + 1.0) / total));
            step += 1;
        };
        next(s);
        s.purge(&format!("{label}-purge"))?;
        next(s);
        // One sequential pass: every LBA holds data, as after a full-drive copy.
        let fill = job_text(&format!("{label}-fill"), "write", "128k", 32, 1, &[]);
        s.job(&format!("{label}-fill"), &fill, &|run| {
            vec![measure(
                "bw_bytes_per_s",
                Unit::BytesPerS,
                bw_bytes_per_s(run, DDIR_WRITE),
            )]
        })?;
        next(s);
        let name = format!("{label}-randwrite-4k");
        let text = job_text(&name, "randwrite", "4k", qd, jobs, &timed_lines(dirty_ns));
        let run = s.job(&name, &text, &|run| {
            vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
        })?;
        results
            .push(measure("rand_write_iops", Unit::Iops, iops(&run, DDIR_WRITE)).under(&[dirty]));
        let mut probes = Vec::new();
        let mut idle_so_far = 0;
        for idle_total in std::iter::once(0).chain(r.idle_ns.iter().copied()) {
            if idle_total > idle_so_far {
                next(s);
                s.idle(
                    &format!("{label}-idle-{}", time_label(idle_total)),
                    idle_total - idle_so_far,
                );
                idle_so_far = idle_total;
            }
            let row = [dirty, Coord::Idle(idle_total)];
            let at = row[1].key();
            results
                .push(measure("free_blocks", Unit::Count, f64::from(s.free_blocks())).under(&row));
            next(s);
            let w = probe(
                s,
                &format!("{label}-{at}-seq-write-128k"),
                "write",
                r.probe_ns,
            )?;
            next(s);
            let rd = probe(
                s,
                &format!("{label}-{at}-seq-read-128k"),
                "read",
                r.probe_ns,
            )?;
            let (wb, rb) = (
                bw_bytes_per_s(&w, DDIR_WRITE),
                bw_bytes_per_s(&rd, DDIR_READ),
            );
            results.push(measure("seq_write_bw_bytes_per_s", Unit::BytesPerS, wb).under(&row));
            results.push(measure("seq_read_bw_bytes_per_s", Unit::BytesPerS, rb).under(&row));
            probes.push((idle_total, wb, rb));
        }
        if let (Some(first), Some(last)) = (probes.first(), probes.last()) {
            let ratio = |a: f64, b: f64| if a > 0.0 { b / a } else { 0.0 };
            results.push(
                measure("write_recovery_ratio", Unit::Ratio, ratio(first.1, last.1))
                    .under(&[dirty]),
            );
            results.push(
                measure("read_recovery_ratio", Unit::Ratio, ratio(first.2, last.2)).under(&[dirty]),
            );
        }
        curves.push((time_label(dirty_ns).replace('_', "."), probes));
    }
    Ok((results, vec![dirty_chart(&curves)]))
}

/// A 128 KiB sequential probe at QD32 from the start of the drive, measured from its first
/// I/O: the pending GC shows at the start.
fn probe(s: &mut Session, name: &str, rw: &str, ns: u64) -> Result<RunResult, SuiteError> {
    let text = job_text(name, rw, "128k", 32, 1, &timed_lines(ns));
    let ddir = if rw == "read" { DDIR_READ } else { DDIR_WRITE };
    s.job(name, &text, &|run| {
        vec![measure(
            "bw_bytes_per_s",
            Unit::BytesPerS,
            bw_bytes_per_s(run, ddir),
        )]
    })
}

fn dirty_chart(curves: &[(String, Vec<Probe>)]) -> Chart {
    let mut series = Vec::new();
    for (label, probes) in curves {
        series.push(Series {
            name: format!("seq write after {label} random writes"),
            points: probes.iter().map(|p| (p.0 as f64, p.1)).collect(),
        });
        series.push(Series {
            name: format!("seq read after {label} random writes"),
            points: probes.iter().map(|p| (p.0 as f64, p.2)).collect(),
        });
    }
    Chart {
        id: "recovery-throughput".into(),
        title: "128 KiB sequential probes: throughput against idle time before the probe".into(),
        x: Axis::linear("idle time before the probe", Unit::Ns),
        y: Axis::linear("throughput", Unit::BytesPerS),
        series,
        band: None,
    }
}

fn hir(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<(Vec<Measure>, Vec<Chart>, flashlab_kit::SteadyReport), SuiteError> {
    let r = opts.own::<RecoveryOptions>();
    let (qd, jobs) = qd_jobs(opts);
    purge_and_fill(s)?;
    let st = random_write_rounds(s, opts)?;
    // Each burst is a job of its own: with fio's random map each would begin a fresh
    // permutation of the LBAs while a long baseline covers whole ones, and whole permutations
    // give a lower WA than independent draws. The suites' random writes draw independently
    // (`job_text` adds norandommap), which keeps bursts and baselines comparable.
    let text = job_text(
        "hir-baseline",
        "randwrite",
        "4k",
        qd,
        jobs,
        &timed_lines(r.hir_baseline_ns),
    );
    let run = s.job("hir-baseline", &text, &|run| {
        vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
    })?;
    let baseline = iops(&run, DDIR_WRITE);
    let mut results = vec![
        measure("hir_steady_write_iops", Unit::Iops, steady_iops(&st)),
        measure("hir_baseline_iops", Unit::Iops, baseline),
    ];
    let mut series = Vec::new();
    let total = r.hir_idle_multiples.len() as f64 * f64::from(r.hir_bursts);
    for (w, &mult) in r.hir_idle_multiples.iter().enumerate() {
        let idle_ns = r.hir_burst_ns * u64::from(mult);
        let wait = [Coord::Local(LocalCoord::new(&HIR_IDLE, [idle_ns, 0, 0, 0]))];
        let label = format!("hir-idle{}", time_label(idle_ns));
        // Hundreds of bursts: measured, charted, not kept as steps.
        s.record_steps = false;
        let mut points = Vec::with_capacity(r.hir_bursts as usize);
        for b in 1..=r.hir_bursts {
            s.round = Some((b as usize, Some(r.hir_bursts as usize)));
            let done = w as f64 * f64::from(r.hir_bursts) + f64::from(b - 1);
            s.suite_span = Some((done / total, (done + 1.0) / total));
            let name = format!("{label}-burst-{b:04}");
            let text = job_text(
                &name,
                "randwrite",
                "4k",
                qd,
                jobs,
                &timed_lines(r.hir_burst_ns),
            );
            let run = s.job(&name, &text, &|_| Vec::new())?;
            points.push((f64::from(b), iops(&run, DDIR_WRITE)));
            s.idle(&format!("{label}-idle-{b:04}"), idle_ns);
        }
        s.record_steps = true;
        s.round = None;
        let name = format!("{label}-baseline");
        let text = job_text(
            &name,
            "randwrite",
            "4k",
            qd,
            jobs,
            &timed_lines(r.hir_baseline_ns),
        );
        let run = s.job(&name, &text, &|run| {
            vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
        })?;
        let n = points.len() as f64;
        let mean = points.iter().map(|p| p.1).sum::<f64>() / n;
        let max = points.iter().map(|p| p.1).fold(0.0, f64::max);
        results.push(measure("mean_burst_iops", Unit::Iops, mean).under(&wait));
        results.push(measure("max_burst_iops", Unit::Iops, max).under(&wait));
        results.push(
            measure(
                "mean_burst_vs_baseline",
                Unit::Ratio,
                if baseline > 0.0 { mean / baseline } else { 0.0 },
            )
            .under(&wait),
        );
        results.push(measure("baseline_iops", Unit::Iops, iops(&run, DDIR_WRITE)).under(&wait));
        series.push(Series {
            name: format!("idle {}", time_label(idle_ns).replace('_', ".")),
            points,
        });
    }
    let chart = Chart {
        id: "hir-bursts".into(),
        title: "Host idle recovery: 4 KiB random-write IOPS of each burst, one line per idle time"
            .into(),
        x: Axis::linear("burst", Unit::Count),
        y: Axis::linear("write IOPS", Unit::Iops),
        series,
        band: None,
    };
    Ok((results, vec![steady_chart(&st), chart], st))
}

/// `recovery`: a dirty drive recovering during idle time.
pub(crate) struct Recovery;

impl Suite for Recovery {
    fn name(&self) -> &'static str {
        "recovery"
    }
    fn slice_caution(&self) -> Option<&'static str> {
        Some(
            "recovery: idle GC frees blocks up to a count per unit, and the probes after an \
             idle write 1/f of the drive's bytes into them on a slice: the write after a long \
             idle runs high (+21% after 30 min on the default drive's slice of 256 blocks per \
             plane; before the idle within 2.4%)",
        )
    }
    fn summary(&self) -> &'static str {
        "dirty drive: fill, random writes, sequential probes before and after idle (or PTS HIR)"
    }
    fn reads_runtime(&self) -> bool {
        false
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Simulated
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <RecoveryArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        flashlab_kit::suite::parse_args::<RecoveryArgs>(m)?.apply(o.own_mut())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        Some(("recovery", o.own::<RecoveryOptions>().to_json()))
    }
    fn axes(&self) -> &'static [&'static LocalAxis] {
        &[&HIR_IDLE]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[RECOVERY, RECOVERY_HIR]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        run(s)
    }
}

/// Idle time after each burst of host idle recovery, ns (`hir_idle5s`): its first word.
pub(crate) const HIR_IDLE: LocalAxis = LocalAxis {
    name: "hir-idle",
    dim: Dim::IdleTime,
    key: |w| format!("hir_idle{}", time_label(w[0])),
    value: |w| time_label(w[0]).replace('_', "."),
    tidy: |w| vec![("idle_ns", w[0].to_string())],
};

// The grids it lays its results out in.
const RECOVERY: GridSpec = GridSpec {
    title: "Sequential probes after random writes and idle time",
    row_header: "random writes, idle",
    dims: &[Dim::DirtyTime, Dim::IdleTime],
    cols: Cols::Figures(&[
        ("free blocks", "free_blocks", None),
        ("sequential write", "seq_write_bw_bytes_per_s", None),
        ("sequential read", "seq_read_bw_bytes_per_s", None),
    ]),
    row_label: spaced,
};

const RECOVERY_HIR: GridSpec = GridSpec {
    title: "Host idle recovery: bursts after each idle time",
    row_header: "idle after each burst",
    dims: &[Dim::IdleTime],
    cols: Cols::Figures(&[
        ("mean burst", "mean_burst_iops", None),
        ("max burst", "max_burst_iops", None),
        ("mean burst / baseline", "mean_burst_vs_baseline", None),
        ("baseline after", "baseline_iops", None),
    ]),
    row_label: values,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_name_the_bad_one() {
        assert!(RecoveryOptions::default().validate().is_ok());
        let cases = [
            (
                RecoveryOptions {
                    idle_ns: vec![30, 5],
                    ..Default::default()
                },
                "--idle-minutes",
            ),
            (
                RecoveryOptions {
                    dirty_ns: vec![],
                    ..Default::default()
                },
                "--dirty-minutes",
            ),
            (
                RecoveryOptions {
                    hir_idle_multiples: vec![0],
                    ..Default::default()
                },
                "--hir-idle-multiples",
            ),
        ];
        for (o, option) in cases {
            let msg = o.validate().unwrap_err().to_string();
            assert!(msg.contains(option), "{msg}");
        }
        assert!(RecoveryVariant::parse("hir").is_ok());
        assert!(RecoveryVariant::parse("x")
            .unwrap_err()
            .to_string()
            .contains("dirty or hir"));
    }
}
