//! `randread-qd-sweep`: 4 KiB random reads at each of a list of queue depths after a
//! sequential fill, the curve a drive's random-read datasheet line is one point of: IOPS,
//! mean completion latency and its p99, p99.9 and p99.99 per depth.

use flashlab_engine::NS_PER_S;
use flashlab_report::{RunResult, DDIR_READ};

use flashlab_kit::grids::{values, Cols, GridSpec, P99, P99_9, P99_99};
use flashlab_kit::session::Session;
use flashlab_kit::steps::{
    iops, job_text, measure, purge_and_fill, result_value, timed, DEFAULT_JOBS, FILL_STEPS, RAMP_NS,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::{Axis, Chart, Coord, Dim, Measure, Series, SuiteError, SuiteOptions, Unit};

/// Measured window of each depth when `--runtime` is not given.
const WINDOW_NS: u64 = 5 * NS_PER_S;

/// Depths when `--depths` is not given: powers of two from 1 to 256.
const DEFAULT_DEPTHS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// The read latency percentiles it reports.
const PERCENTILES: [f64; 3] = [99.0, 99.9, 99.99];

/// `randread-qd-sweep` (one registry line in `lib.rs` lists it).
pub(crate) struct RandreadQdSweep;

/// `randread-qd-sweep`'s own options.
#[derive(Debug, Clone, PartialEq)]
pub struct RandreadQdSweepOptions {
    /// Queue depths, one measured step each, in order.
    pub depths: Vec<u32>,
}

impl Default for RandreadQdSweepOptions {
    fn default() -> Self {
        Self {
            depths: DEFAULT_DEPTHS.to_vec(),
        }
    }
}

impl flashlab_kit::options::OwnOptions for RandreadQdSweepOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        let max = flashlab_kit::options::MAX_QD;
        if self.depths.is_empty() {
            return Err(SuiteError::BadOption {
                option: "--depths",
                value: String::new(),
                valid: "at least one queue depth".into(),
            });
        }
        if let Some(&d) = self.depths.iter().find(|&&d| d == 0 || d > max) {
            return Err(SuiteError::BadOption {
                option: "--depths",
                value: d.to_string(),
                valid: format!("depths from 1 to {max}"),
            });
        }
        if let Some((i, d)) = flashlab_kit::options::repeated(&self.depths, |&d| d) {
            return Err(flashlab_kit::options::repeated_error(
                "--depths",
                d.to_string(),
                i,
            ));
        }
        Ok(())
    }
}

impl Suite for RandreadQdSweep {
    fn name(&self) -> &'static str {
        "randread-qd-sweep"
    }
    fn summary(&self) -> &'static str {
        "4 KiB random reads across queue depths after a fill: IOPS, mean and p99-p99.99 latency"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    // `--depths` is the option qos adds; this suite reads it too, with its own default (qos's
    // is filled in when the option is not given, so only a given one is read).
    fn options(&self) -> &'static [&'static str] {
        &["depths"]
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        let given = (m.value_source("depths") == Some(clap::parser::ValueSource::CommandLine))
            .then(|| m.try_get_many::<u32>("depths").ok().flatten())
            .flatten()
            .map(|d| d.copied().collect::<Vec<u32>>());
        *o.own_mut() = RandreadQdSweepOptions {
            depths: given.unwrap_or_else(|| DEFAULT_DEPTHS.to_vec()),
        };
        Ok(())
    }
    fn options_text(&self, o: &SuiteOptions) -> Vec<String> {
        let depths: Vec<String> = o
            .own::<RandreadQdSweepOptions>()
            .depths
            .iter()
            .map(u32::to_string)
            .collect();
        vec![format!("queue depths {}", depths.join(", "))]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[GRID]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        let depths = &opts.own::<RandreadQdSweepOptions>().depths;
        s.plan_steps(FILL_STEPS + depths.len(), 1);
        // Reads of a fresh drive would find no data: fill it first.
        purge_and_fill(s)?;
        let jobs = opts.jobs.unwrap_or(DEFAULT_JOBS);
        let percentiles: Vec<String> = PERCENTILES.iter().map(f64::to_string).collect();
        let mut results = Vec::new();
        for &depth in depths {
            let name = format!("randread-qd{depth}");
            let mut lines = timed(opts.runtime_ns.unwrap_or(WINDOW_NS), RAMP_NS);
            lines.push(format!("percentile_list={}", percentiles.join(":")));
            let text = job_text(&name, "randread", "4k", depth, jobs, &lines);
            let run = s.job(&name, &text, &depth_measures)?;
            let at = [Coord::Depth(depth)];
            results.extend(depth_measures(&run).into_iter().map(|m| m.under(&at)));
        }
        let charts = charts(depths, &results);
        Ok(Outcome {
            steady: None,
            results,
            charts,
        })
    }
}

/// IOPS and read completion latency (mean and percentiles) of one depth's run.
fn depth_measures(run: &RunResult) -> Vec<Measure> {
    let mut m = vec![measure("iops", Unit::Iops, iops(run, DDIR_READ))];
    // One job (clones merged): its latency is the run's.
    let Some(job) = run.jobs.first() else {
        return m;
    };
    if let Some(clat) = job.clat_ns(DDIR_READ) {
        m.push(measure("lat_mean_ns", Unit::Ns, clat.mean));
    }
    let pcts = job.clat_percentiles_ns(DDIR_READ);
    for p in PERCENTILES {
        if let Some(&(_, v)) = pcts.iter().find(|(q, _)| (q - p).abs() < 1e-9) {
            m.push(measure("lat_ns", Unit::Ns, v as f64).col(Coord::Percentile(p)));
        }
    }
    m
}

/// IOPS against queue depth, and latency (mean and percentiles, log scale) against it.
fn charts(depths: &[u32], results: &[Measure]) -> Vec<Chart> {
    let line = |name: &str, family: &str, col: Option<Coord>| Series {
        name: name.to_string(),
        points: depths
            .iter()
            .filter_map(|&d| {
                result_value(results, family, &[Coord::Depth(d)], col).map(|v| (f64::from(d), v))
            })
            .collect(),
    };
    let mut latency = vec![line("mean", "lat_mean_ns", None)];
    for p in PERCENTILES {
        let name = format!("p{p}");
        latency.push(line(&name, "lat_ns", Some(Coord::Percentile(p))));
    }
    vec![
        Chart {
            id: "randread-qd-iops".into(),
            title: "4 KiB random read IOPS against queue depth".into(),
            x: Axis::log("queue depth", Unit::Count),
            y: Axis::linear("IOPS", Unit::Iops),
            series: vec![line("read", "iops", None)],
            band: None,
        },
        Chart {
            id: "randread-qd-latency".into(),
            title: "4 KiB random read latency against queue depth".into(),
            x: Axis::log("queue depth", Unit::Count),
            y: Axis::log("read latency", Unit::Ns),
            series: latency,
            band: None,
        },
    ]
}

const GRID: GridSpec = GridSpec {
    title: "4 KiB random reads per queue depth",
    row_header: "queue depth",
    dims: &[Dim::QueueDepth],
    cols: Cols::Figures(&[
        ("IOPS", "iops", None),
        ("mean", "lat_mean_ns", None),
        ("p99", "lat_ns", P99),
        ("p99.9", "lat_ns", P99_9),
        ("p99.99", "lat_ns", P99_99),
    ]),
    row_label: values,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_depths_are_refused_by_name() {
        let o = SuiteOptions::default();
        for depths in [vec![], vec![0], vec![4, 4]] {
            let e =
                flashlab_kit::options::OwnOptions::validate(&RandreadQdSweepOptions { depths }, &o)
                    .unwrap_err();
            assert!(
                e.is_bad_input() && e.to_string().contains("--depths"),
                "{e}"
            );
        }
    }
}
