//! `op-sweep`: capacity for performance. For each fraction, a fresh drive whose user capacity
//! is cut by that fraction of the drive's own (`capacity.user`, what a vendor tool's
//! "set max LBA" does), preconditioned, then random-write runs: the extra spare area's effect
//! on IOPS, write amplification and endurance comes out of the FTL's garbage collection.

use flashlab_device::values::Size;
use flashlab_device::{ConfigError, DeviceConfig, Model, Ssd};
use flashlab_engine::{SeedTree, NS_PER_S};
use flashlab_report::DDIR_WRITE;
use serde_json::json;

use flashlab_kit::grids::{op_label, Cols, GridSpec};
use flashlab_kit::measure::{minutes_label, pct_label};
use flashlab_kit::session::{wa_over_reclaims, Session};
use flashlab_kit::steps::{
    iops, job_text, measure, purge_and_fill, qd_jobs, random_write_rounds_counted, steady_iops,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::Dim;
use flashlab_kit::FreshDevice;
use flashlab_kit::{Axis, Chart, Coord, Measure, Series, SuiteError, SuiteOptions, Unit};

const NS_PER_MIN: u64 = 60 * NS_PER_S;
const MAX_LIST: usize = 32;

/// Options of the `op-sweep` suite.
#[derive(Debug, Clone, PartialEq)]
pub struct OpSweepOptions {
    /// Extra spare area as fractions of the drive's user capacity (0 to below 1).
    pub fractions: Vec<f64>,
    /// Random-write preconditioning time (whole drive); `None`: rounds to steady state.
    pub precondition_ns: Option<u64>,
    /// Lengths of the measured random-write runs, run one after another.
    pub run_ns: Vec<u64>,
    /// Length of a random-write run on the drive just purged (every block empty: no garbage
    /// collection until the flash is written once), after the others; `None`: none.
    pub fresh_ns: Option<u64>,
}

impl Default for OpSweepOptions {
    fn default() -> Self {
        Self {
            fractions: vec![0.0, 0.1, 0.25],
            precondition_ns: None,
            // The D5-P5430 review ran 10 minutes and 2 hours; shorter defaults keep the sweep
            // of the default drive to minutes (docs/suites.md).
            run_ns: vec![2 * NS_PER_MIN, 10 * NS_PER_MIN],
            fresh_ns: None,
        }
    }
}

// `op-sweep`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct OpSweepArgs {
    /// op-sweep: extra spare area as fractions of the user capacity, comma-separated.
    #[arg(long = "op", value_delimiter = ',', default_value = "0,0.1,0.25")]
    op: Vec<f64>,
    /// op-sweep: minutes of random-write preconditioning; default: rounds to steady state.
    #[arg(long)]
    precondition_minutes: Option<f64>,
    /// op-sweep: minutes of each measured random-write run, comma-separated (review: 10,120).
    #[arg(long, value_delimiter = ',', default_value = "2,10")]
    run_minutes: Vec<f64>,
    /// op-sweep: minutes of random writes on each drive purged again after its runs (the
    /// review's fresh drive: 10); default: none.
    #[arg(long)]
    fresh_minutes: Option<f64>,
}

impl OpSweepArgs {
    fn apply(&self, o: &mut OpSweepOptions) -> Result<(), SuiteError> {
        use flashlab_kit::options::minutes_ns;
        o.fractions = self.op.clone();
        o.precondition_ns = self
            .precondition_minutes
            .map(|m| minutes_ns("--precondition-minutes", &[m]).map(|v| v[0]))
            .transpose()?;
        o.run_ns = minutes_ns("--run-minutes", &self.run_minutes)?;
        o.fresh_ns = self
            .fresh_minutes
            .map(|m| minutes_ns("--fresh-minutes", &[m]).map(|v| v[0]))
            .transpose()?;
        Ok(())
    }
}

impl flashlab_kit::options::OwnOptions for OpSweepOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        OpSweepOptions::validate(self)
    }
}

impl OpSweepOptions {
    pub fn validate(&self) -> Result<(), SuiteError> {
        if self.fractions.is_empty()
            || self.fractions.len() > MAX_LIST
            || self
                .fractions
                .iter()
                .any(|f| !(f.is_finite() && *f >= 0.0 && *f < 0.95))
        {
            return Err(SuiteError::BadOption {
                option: "--op",
                value: format!("{:?}", self.fractions),
                valid:
                    "1 to 32 fractions of the user capacity from 0 to below 0.95, e.g. 0,0.1,0.25"
                        .into(),
            });
        }
        if let Some((i, f)) = flashlab_kit::options::repeated(&self.fractions, |&f| pct_label(f)) {
            return Err(flashlab_kit::options::repeated_error(
                "--op",
                f.to_string(),
                i,
            ));
        }
        if self.precondition_ns == Some(0) {
            return Err(SuiteError::BadOption {
                option: "--precondition-minutes",
                value: "0".into(),
                valid: "a time above zero; leave it out for rounds to steady state".into(),
            });
        }
        if self.fresh_ns == Some(0) {
            return Err(SuiteError::BadOption {
                option: "--fresh-minutes",
                value: "0".into(),
                valid: "a time above zero; leave it out for no fresh-drive run".into(),
            });
        }
        if self.run_ns.is_empty() || self.run_ns.len() > MAX_LIST || self.run_ns.contains(&0) {
            return Err(SuiteError::BadOption {
                option: "--run-minutes",
                value: format!("{:?}", self.run_ns),
                valid: "1 to 32 lengths above zero, e.g. 10,120".into(),
            });
        }
        if let Some((i, ns)) =
            flashlab_kit::options::repeated(&self.run_ns, |&ns| minutes_label(ns))
        {
            return Err(flashlab_kit::options::repeated_error(
                "--run-minutes",
                (ns as f64 / NS_PER_MIN as f64).to_string(),
                i,
            ));
        }
        Ok(())
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        json!({
            "fractions": self.fractions,
            "precondition_ns": self.precondition_ns,
            "run_ns": self.run_ns,
            "fresh_ns": self.fresh_ns,
        })
    }
}

/// What one fraction measured.
struct FractionOutcome {
    extra_pct: f64,
    steady_iops: Option<f64>,
    /// Per run: IOPS and WA.
    runs: Vec<(f64, f64)>,
    /// IOPS of the fresh drive's run.
    fresh_iops: Option<f64>,
}

pub(crate) fn run(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let config = s.require_config("op-sweep")?;
    let o = opts.own::<OpSweepOptions>();
    let invalid = |c: &DeviceConfig, origin: String, e: flashlab_device::model::KeyError| {
        SuiteError::Device {
            device: c.name.clone(),
            error: Box::new(ConfigError::Invalid {
                origin,
                key: e.key,
                value: e.value,
                message: e.message,
                valid: e.valid,
            }),
        }
    };
    let base = config
        .resolve()
        .map_err(|e| invalid(config, config.name.clone(), e))?;
    let (qd, jobs) = qd_jobs(opts);
    // The drive of fraction `k`: its description and resolved model.
    let drive = |k: usize| {
        let f = o.fractions[k];
        // Whole IUs, as the drive would round a max-LBA setting.
        let iu = base.iu_bytes;
        let user = ((base.full_user_bytes as f64 * (1.0 - f)) as u64) / iu * iu;
        let mut c = config.clone();
        c.capacity.user = Some(Size(user));
        c.capacity.spare_factor = None;
        let origin = format!("--op {f} (capacity.user = {user} bytes)");
        let model = c.resolve().map_err(|e| invalid(&c, origin.clone(), e))?;
        Ok((c, model))
    };
    let seeds = SeedTree::new(opts.seed).child("device");
    let build = |k: usize| {
        let (c, _) = drive(k)?;
        let ssd = Ssd::new(&c, seeds).map_err(|error| SuiteError::Device {
            device: c.name.clone(),
            error: Box::new(error),
        })?;
        Ok((ssd, FreshDevice::Drive(Box::new(c)), seeds.master_seed()))
    };
    // Every fraction's drive is independent of the others': they run on threads of their
    // own, and their results come back in fraction order.
    let ran = s.on_fresh_devices(o.fractions.len(), opts.threads, &[], &build, &|k, s| {
        let f = o.fractions[k];
        let label = format!("op{}", pct_label(f));
        // Every fraction runs the same step names, so the same random offsets: the drives
        // differ only in their spare area.
        let (steady, runs, fresh) = fraction_steps(s, opts, &o, k, qd, jobs)?;
        for step in &mut s.steps {
            step.name = format!("{label}-{}", step.name);
        }
        Ok((steady, runs, fresh))
    })?;
    let mut results = Vec::new();
    let mut outcomes = Vec::new();
    for ((k, &f), (steady, runs, fresh)) in o.fractions.iter().enumerate().zip(ran) {
        let (_, model) = drive(k)?;
        results.extend(fraction_results(&base, &model, f, steady, &runs, &o.run_ns));
        if let Some(v) = fresh {
            results.push(measure("fresh_write_iops", Unit::Iops, v).under(&[Coord::Op(f)]));
        }
        outcomes.push(FractionOutcome {
            extra_pct: f * 100.0,
            steady_iops: steady,
            runs,
            fresh_iops: fresh,
        });
    }
    let charts = charts(&outcomes, &o.run_ns);
    Ok(Outcome {
        steady: None,
        results,
        charts,
    })
}

/// What one fraction's drive measured: its steady IOPS (none with a fixed precondition
/// time), each run's IOPS and WA, and the fresh drive's IOPS.
type FractionRan = (Option<f64>, Vec<(f64, f64)>, Option<f64>);

/// The steps on the drive of fraction `k`: fill, precondition, the runs, then the fresh drive.
fn fraction_steps(
    s: &mut Session,
    opts: &SuiteOptions,
    o: &OpSweepOptions,
    k: usize,
    qd: u32,
    jobs: u32,
) -> Result<FractionRan, SuiteError> {
    let n = o.fractions.len() as f64;
    s.suite_span = Some((k as f64 / n, k as f64 / n));
    purge_and_fill(s)?;
    // Window starts for WA (see `wa_over_reclaims`): the end of the fill, each round's
    // start, then each run's start; everything after the fill is the same random-write
    // workload.
    let mut starts = vec![s.counters()];
    let reclaims = s.wa_window_reclaims();
    let steady = match o.precondition_ns {
        None => {
            let (report, round_starts) = random_write_rounds_counted(s, opts)?;
            starts.extend(round_starts);
            Some(steady_iops(&report))
        }
        Some(ns) => {
            let lines = vec!["time_based=1".to_string(), format!("runtime={ns}ns")];
            let text = job_text("precondition", "randwrite", "4k", qd, jobs, &lines);
            s.job("precondition", &text, &|run| {
                vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
            })?;
            None
        }
    };
    let mut runs = Vec::new();
    for &ns in &o.run_ns {
        let name = format!("run-{}", minutes_label(ns));
        let lines = vec!["time_based=1".to_string(), format!("runtime={ns}ns")];
        let text = job_text(&name, "randwrite", "4k", qd, jobs, &lines);
        starts.push(s.counters());
        let run = s.job(&name, &text, &|run| {
            vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
        })?;
        // Whole GC cycles, reaching back over earlier runs and the rounds when the run
        // is shorter (docs/explain-gc.md, "How write amplification is measured").
        let wa = wa_over_reclaims(&starts, &s.counters(), reclaims);
        runs.push((iops(&run, DDIR_WRITE), wa));
    }
    // The fresh drive last: a purge empties it whatever came before, and the
    // preconditioning above stays the precondition cache's first step.
    let fresh = match o.fresh_ns {
        None => None,
        Some(ns) => {
            s.purge("fresh-purge")?;
            let lines = vec!["time_based=1".to_string(), format!("runtime={ns}ns")];
            let text = job_text("fresh", "randwrite", "4k", qd, jobs, &lines);
            let run = s.job("fresh", &text, &|run| {
                vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
            })?;
            Some(iops(&run, DDIR_WRITE))
        }
    };
    Ok((steady, runs, fresh))
}

/// The results of the drive with extra spare `f` (its model `model`, the described drive's
/// `base`): capacity and spare, steady IOPS, each run's IOPS and WA, and the endurance the
/// last run's WA projects.
fn fraction_results(
    base: &Model,
    model: &Model,
    f: f64,
    steady: Option<f64>,
    runs: &[(f64, f64)],
    run_ns: &[u64],
) -> Vec<Measure> {
    let mut results = Vec::new();
    let row = [Coord::Op(f)];
    let lost = base.full_user_bytes.saturating_sub(model.full_user_bytes) as f64;
    let raw = model.full.raw_bytes() as f64;
    results.push(measure("user_bytes", Unit::Bytes, model.full_user_bytes as f64).under(&row));
    results.push(measure("capacity_lost_bytes", Unit::Bytes, lost).under(&row));
    results.push(
        measure(
            "capacity_lost_percent",
            Unit::Percent,
            lost / base.full_user_bytes as f64 * 100.0,
        )
        .under(&row),
    );
    results.push(
        measure(
            "spare_percent_of_raw",
            Unit::Percent,
            (raw - model.full_user_bytes as f64) / raw * 100.0,
        )
        .under(&row),
    );
    // What GC works with: blocks set aside for bad blocks and parity pages left out.
    results.push(
        measure(
            "effective_spare_percent",
            Unit::Percent,
            model.effective_spare_factor() * 100.0,
        )
        .under(&row),
    );
    if let Some(v) = steady {
        results.push(measure("steady_write_iops", Unit::Iops, v).under(&row));
    }
    for (&ns, &(v, wa)) in run_ns.iter().zip(runs) {
        let run = [Coord::Op(f), Coord::RunTime(ns)];
        results.push(measure("write_iops", Unit::Iops, v).under(&run));
        results.push(measure("write_amplification", Unit::Ratio, wa).under(&run));
    }
    // The last (longest) run stands for the fraction's steady state.
    if let Some(&(_, wa)) = runs.last() {
        results.push(measure("write_amplification", Unit::Ratio, wa).under(&row));
        // Host bytes until the average block reaches its rated P/E cycles at this WA:
        // all native blocks in use wear (wear levelling), each host byte costs WA bytes of
        // them; those set aside for bad blocks are never written.
        let native = model.native_raw_bytes();
        let tbw = if wa > 0.0 {
            native as f64 * f64::from(model.full.pe_cycles) / wa
        } else {
            0.0
        };
        results.push(measure("projected_tbw_bytes", Unit::Bytes, tbw).under(&row));
    }
    results
}

fn charts(outcomes: &[FractionOutcome], run_ns: &[u64]) -> Vec<Chart> {
    let mut iops_series = Vec::new();
    if outcomes.iter().all(|o| o.steady_iops.is_some()) {
        iops_series.push(Series {
            name: "preconditioned (steady rounds)".into(),
            points: outcomes
                .iter()
                .filter_map(|o| o.steady_iops.map(|v| (o.extra_pct, v)))
                .collect(),
        });
    }
    if outcomes.iter().all(|o| o.fresh_iops.is_some()) {
        iops_series.push(Series {
            name: "fresh drive".into(),
            points: outcomes
                .iter()
                .filter_map(|o| o.fresh_iops.map(|v| (o.extra_pct, v)))
                .collect(),
        });
    }
    let mut wa_series = Vec::new();
    for (i, &ns) in run_ns.iter().enumerate() {
        let name = format!("{} run", minutes_label(ns).replace('_', "."));
        iops_series.push(Series {
            name: name.clone(),
            points: outcomes
                .iter()
                .map(|o| (o.extra_pct, o.runs[i].0))
                .collect(),
        });
        wa_series.push(Series {
            name,
            points: outcomes
                .iter()
                .map(|o| (o.extra_pct, o.runs[i].1))
                .collect(),
        });
    }
    vec![
        Chart {
            id: "op-sweep-iops".into(),
            title: "4 KiB random-write IOPS against extra spare area".into(),
            x: Axis::linear("extra spare (share of user capacity)", Unit::Percent),
            y: Axis::linear("write IOPS", Unit::Iops),
            series: iops_series,
            band: None,
        },
        Chart {
            id: "op-sweep-wa".into(),
            title: "Write amplification against extra spare area".into(),
            x: Axis::linear("extra spare (share of user capacity)", Unit::Percent),
            y: Axis::linear("write amplification", Unit::Ratio),
            series: wa_series,
            band: None,
        },
    ]
}

/// `op-sweep`: extra spare area against IOPS and wear.
pub(crate) struct OpSweep;

impl Suite for OpSweep {
    fn name(&self) -> &'static str {
        "op-sweep"
    }
    fn summary(&self) -> &'static str {
        "extra spare area: user capacity cut by each fraction, steady random-write IOPS, WA, TBW"
    }
    fn reads_runtime(&self) -> bool {
        false
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Description
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <OpSweepArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        flashlab_kit::suite::parse_args::<OpSweepArgs>(m)?.apply(o.own_mut())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        Some(("op_sweep", o.own::<OpSweepOptions>().to_json()))
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[OP_SWEEP]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        run(s)
    }
}

// The grids it lays its results out in.
const OP_SWEEP: GridSpec = GridSpec {
    title: "Extra spare area: capacity, steady random writes and endurance",
    row_header: "extra spare, % of user capacity",
    dims: &[Dim::SparePercent],
    cols: Cols::Figures(&[
        ("user capacity", "user_bytes", None),
        ("capacity lost", "capacity_lost_percent", None),
        ("effective spare", "effective_spare_percent", None),
        ("steady write IOPS", "steady_write_iops", None),
        ("write amplification", "write_amplification", None),
        ("projected TB written", "projected_tbw_bytes", None),
    ]),
    row_label: op_label,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_key_safe() {
        assert_eq!(pct_label(0.0), "0");
        assert_eq!(pct_label(0.1), "10");
        assert_eq!(pct_label(0.125), "12_5");
        assert_eq!(minutes_label(10 * NS_PER_MIN), "10min");
        assert_eq!(minutes_label(NS_PER_MIN / 2), "0_5min");
    }

    #[test]
    fn options_name_the_bad_one() {
        assert!(OpSweepOptions::default().validate().is_ok());
        for (o, option) in [
            (
                OpSweepOptions {
                    fractions: vec![0.0, 1.0],
                    ..Default::default()
                },
                "--op",
            ),
            (
                OpSweepOptions {
                    run_ns: vec![],
                    ..Default::default()
                },
                "--run-minutes",
            ),
            (
                OpSweepOptions {
                    precondition_ns: Some(0),
                    ..Default::default()
                },
                "--precondition-minutes",
            ),
            (
                OpSweepOptions {
                    fresh_ns: Some(0),
                    ..Default::default()
                },
                "--fresh-minutes",
            ),
        ] {
            let msg = o.validate().unwrap_err().to_string();
            assert!(msg.contains(option), "{msg}");
        }
    }
}
