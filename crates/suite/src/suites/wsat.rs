//! `wsat`: SNIA PTS write saturation. Purge, then 4 KiB random writes over the whole drive
//! until `write_multiple` × the user capacity has been written, measured in intervals. The
//! fresh-out-of-box plateau, the cliff when the free pool runs out and the steady level after
//! it are whatever the FTL's garbage collection makes of the writes: nothing here knows where
//! they should be.

use flashlab_report::DDIR_WRITE;
use serde_json::json;

use flashlab_kit::lengths::RoundLength;
use flashlab_kit::session::{wa_between, wa_over_reclaims, Session};
use flashlab_kit::steady::{check_window, SteadyRule};
use flashlab_kit::steps::{iops, job_text, measure, per_job_bytes, qd_jobs, timed_share};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::{Axis, Chart, Coord, Measure, Series, SuiteError, SuiteOptions, Unit};

/// Most intervals a run may take: bounds a run whose intervals are far too short.
pub const MAX_INTERVALS: usize = 10_000;

/// Options of the `wsat` suite.
#[derive(Debug, Clone, PartialEq)]
pub struct WsatOptions {
    /// Host data to write, in multiples of the user capacity (SNIA PTS: 4).
    pub write_multiple: f64,
}

impl Default for WsatOptions {
    fn default() -> Self {
        Self {
            write_multiple: 4.0,
        }
    }
}

// `wsat`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct WsatArgs {
    /// wsat: host data to write, in multiples of the user capacity (SNIA PTS: 4).
    #[arg(long, default_value_t = 4.0)]
    write_multiple: f64,
}

/// The measured interval is the shared `--interval` ([`SuiteOptions::interval`]).
impl flashlab_kit::options::OwnOptions for WsatOptions {
    fn validate(&self, common: &SuiteOptions) -> Result<(), SuiteError> {
        let m = self.write_multiple;
        if !(m.is_finite() && m > 0.0 && m <= 100.0) {
            return Err(SuiteError::BadOption {
                option: "--write-multiple",
                value: m.to_string(),
                valid: "a multiple of the user capacity above 0 and at most 100".into(),
            });
        }
        if let RoundLength::CapacityFraction(f) = common.interval {
            if m / f > MAX_INTERVALS as f64 {
                return Err(SuiteError::BadOption {
                    option: "--interval",
                    value: format!("{}%", f * 100.0),
                    valid: format!(
                        "at least {:.4}% (at most {MAX_INTERVALS} intervals for --write-multiple {m})",
                        m / MAX_INTERVALS as f64 * 100.0
                    ),
                });
            }
        }
        Ok(())
    }
}

impl WsatOptions {
    pub(crate) fn to_json(&self, interval: RoundLength) -> serde_json::Value {
        json!({
            "write_multiple": self.write_multiple,
            "interval": interval.describe(),
        })
    }
}

/// One measured interval.
#[derive(Debug, Clone, Copy, Default)]
struct Point {
    /// Simulated time of the whole drive since the purge ended, at the interval's end.
    end_ns: f64,
    /// Host bytes written since the purge (whole drive), at the interval's end.
    written_bytes: f64,
    iops: f64,
    wa: f64,
}

flashlab_engine::impl_state!(Point {
    end_ns,
    written_bytes,
    iops,
    wa
});

/// The purge and the intervals as the precondition cache keeps them: every interval's
/// point, the run's write amplification as a whole and over the final window, and the host
/// bytes written.
#[derive(Debug, Default)]
struct Saturation {
    points: Vec<Point>,
    total_wa: f64,
    steady_wa: f64,
    written_bytes: f64,
}

flashlab_engine::impl_state!(Saturation {
    points,
    total_wa,
    steady_wa,
    written_bytes
} check Saturation::check_loaded);

impl Saturation {
    /// At most [`MAX_INTERVALS`] intervals, every figure finite and not negative.
    fn check_loaded(&self) -> Result<(), String> {
        if self.points.len() > MAX_INTERVALS {
            return Err(format!(
                "the cached saturation run holds {} intervals (valid: at most {MAX_INTERVALS})",
                self.points.len()
            ));
        }
        let mut figures = vec![self.total_wa, self.steady_wa, self.written_bytes];
        for p in &self.points {
            figures.extend([p.end_ns, p.written_bytes, p.iops, p.wa]);
        }
        flashlab_kit::steps::check_figures("the cached saturation run's figures", &figures)
    }
}

pub(crate) fn run(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let w = opts.own::<WsatOptions>();
    s.require_ftl("wsat")?;
    let capacity = s.full_capacity_bytes() as f64;
    let target = w.write_multiple * capacity;
    let (qd, jobs) = qd_jobs(opts);
    let planned = match opts.interval {
        RoundLength::TimeNs(_) => None,
        RoundLength::Bytes(b) => Some((target / b as f64).ceil() as usize),
        RoundLength::CapacityFraction(f) => Some((w.write_multiple / f).ceil() as usize),
    };
    let plan = plan_intervals(s, opts, capacity);
    // The whole write stream is the drive's write saturation (a workload-dependent
    // preconditioning) and its measurement at once: the precondition cache keeps the drive at
    // its end and every interval's figures, so a repeat on the same drive reads them back.
    let head = format!(
        "wsat: purge 'purge', then intervals of {:?}, {} planned, until {:?} x capacity \
         is written",
        opts.interval,
        planned.map_or("none".to_string(), |n| n.to_string()),
        w.write_multiple,
    );
    let timed = job_text("wsat-NNN", "randwrite", "4k", qd, jobs, &plan.timed_lines);
    let untimed = |step: &str, bytes: u64| {
        job_text(step, "randwrite", "4k", qd, 1, &[untimed_line(bytes)])
    };
    let recipe = match plan.untimed_bytes {
        None => format!("{head}:\n{timed}"),
        Some((before, after)) => format!(
            "{head}; the first timed whole:\n{}each after it without timing:\n{}then \
             timed:\n{timed}then without timing:\n{}",
            job_text("wsat-001", "randwrite", "4k", qd, jobs, &plan.whole_lines),
            untimed("wsat-NNN-untimed", before),
            untimed("wsat-NNN-rest-untimed", after),
        ),
    };
    let sat = s.checkpoint(&recipe, |s| saturate(s, &w, target, &plan, planned))?;
    let (results, window) = results(&sat.points, sat.total_wa, sat.steady_wa, sat.written_bytes);
    let charts = charts(&sat.points, window);
    Ok(Outcome {
        steady: None,
        results,
        charts,
    })
}

/// How each interval is written. An interval of a given size leaves the drive in a state its
/// timing does not change, as a preconditioning round does (`flashlab_kit::steps::RoundJobs`):
/// where the drive allows it (`Session::untimed_allowed`), all but its middle
/// (`--round-timed`) runs without the timing model, and the interval's IOPS are its timed
/// middle's. The middle, not the end: where the rate drifts through an interval (a drive
/// still settling), the middle reads the interval's mean and an end would read the drift's
/// last value. The first interval, an interval given as a time, `--timed-precondition` and
/// `--round-timed 100%` are timed whole.
struct Intervals {
    /// Bytes written without timing before and after each timed part, if the interval is
    /// split.
    untimed_bytes: Option<(u64, u64)>,
    /// The job lines of the interval's timed part (the whole interval if it is not split).
    timed_lines: Vec<String>,
    /// The job lines of an interval timed whole: the first, which starts from an idle
    /// drive with an empty write buffer, and whose start (the buffer's first fill) is part of
    /// what it reads, as the fresh drive's figure.
    whole_lines: Vec<String>,
}

/// How `opts`' intervals are written on this drive (`capacity`: the whole drive's bytes).
fn plan_intervals(s: &mut Session, opts: &SuiteOptions, capacity: f64) -> Intervals {
    let jobs = qd_jobs(opts).1;
    let bytes = match opts.interval {
        RoundLength::TimeNs(ns) => {
            let lines = vec!["time_based=1".to_string(), format!("runtime={ns}ns")];
            return Intervals {
                untimed_bytes: None,
                timed_lines: lines.clone(),
                whole_lines: lines,
            };
        }
        RoundLength::Bytes(b) => b,
        RoundLength::CapacityFraction(f) => (capacity * f).round() as u64,
    };
    let whole_lines = vec![format!("io_size={}", per_job_bytes(bytes, jobs))];
    match split_bytes(s, opts, bytes) {
        Some((timed, before, after)) => Intervals {
            untimed_bytes: Some((before, after)),
            timed_lines: vec![format!("io_size={timed}")],
            whole_lines,
        },
        None => Intervals {
            untimed_bytes: None,
            timed_lines: whole_lines.clone(),
            whole_lines,
        },
    }
}

fn untimed_line(bytes: u64) -> String {
    format!("io_size={bytes}")
}

/// Where an interval of `bytes` is split: the bytes each job writes timed, and the bytes
/// written without timing before and after them (more than none in all), or `None` to time
/// it whole.
///
/// A drive with a static SLC cache writes random data through it in cycles of its size (the
/// host fills it, folds free its blocks), and its rate rises and falls with the cycle; a timed
/// middle shorter than two cycles reads a phase of it (the PM981a's 4 GB cache against 2 GB
/// middles of its 10 GB intervals: single intervals up to 23% off, the steady window +3.4%).
/// Such intervals are timed whole.
fn split_bytes(s: &mut Session, opts: &SuiteOptions, bytes: u64) -> Option<(u64, u64, u64)> {
    if opts.round_timed_percent >= 100 || !s.untimed_allowed() {
        return None;
    }
    let middle_bytes = u128::from(bytes) * u128::from(opts.round_timed_percent) / 100;
    if middle_bytes < 2 * u128::from(s.static_slc_bytes()) {
        return None;
    }
    let (timed, untimed) = timed_share(opts, bytes)?;
    let before = untimed / 2 / 4096 * 4096;
    Some((timed, before, untimed - before))
}

/// Purge, then write `target` bytes (whole drive) in intervals as `plan` writes them
/// (`planned` of them, when the interval is a size).
fn saturate(
    s: &mut Session,
    w: &WsatOptions,
    target: f64,
    plan: &Intervals,
    planned: Option<usize>,
) -> Result<Saturation, SuiteError> {
    let opts = s.opts();
    s.purge("purge")?;
    let (qd, jobs) = qd_jobs(opts);
    if planned.is_some_and(|n| n > MAX_INTERVALS) {
        return Err(too_many_intervals(w, opts.interval));
    }
    let start_ns = s.now_ns();
    // The drive's time since the purge at the last interval's end. A split interval lasts
    // its I/Os at its timed middle's rate: the untimed parts move the drive's clock by the
    // least time their work needs, not the time it would take.
    let mut elapsed_ns = 0.0;
    let first = s.counters();
    // Every interval's start, for WA windows reaching back over whole GC cycles.
    let mut starts = vec![first.clone()];
    let reclaims = s.wa_window_reclaims();
    let mut points: Vec<Point> = Vec::new();
    let mut written = 0.0;
    // A planned count is exact: whole-block io_size rounding must not add a sliver interval.
    while planned.map_or(written < target, |n| points.len() < n) {
        let i = points.len() + 1;
        if i > MAX_INTERVALS {
            return Err(too_many_intervals(w, opts.interval));
        }
        s.round = Some((i, planned));
        let step_bytes = match opts.interval {
            RoundLength::TimeNs(_) => 0.0,
            _ => target / planned.unwrap_or(1) as f64,
        };
        s.suite_span = Some((written / target, ((written + step_bytes) / target).min(1.0)));
        let name = format!("wsat-{i:03}");
        let mut untimed_written = 0u64;
        let mut untimed_part = |s: &mut Session, step: String, bytes: u64, which: &str| {
            if bytes == 0 {
                return Ok(());
            }
            let what = format!(
                "{which} of interval {i} without timing: 4 KiB random writes, as the job \
                 gives them"
            );
            let text = job_text(&step, "randwrite", "4k", qd, 1, &[untimed_line(bytes)]);
            untimed_written += s.untimed_job(&step, &what, &text)?;
            Ok::<(), SuiteError>(())
        };
        let split = plan.untimed_bytes.filter(|_| i > 1);
        if let Some((before, _)) = split {
            untimed_part(s, format!("{name}-untimed"), before, "the part before the middle")?;
            s.continue_writes();
        }
        let timed_start_ns = s.now_ns();
        let lines = if split.is_some() {
            &plan.timed_lines
        } else {
            &plan.whole_lines
        };
        let text = job_text(&name, "randwrite", "4k", qd, jobs, lines);
        let run = s.job(&name, &text, &|run| {
            vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
        })?;
        let bytes: u64 = run.jobs.iter().map(|j| j.io_bytes(DDIR_WRITE)).sum();
        if bytes == 0 {
            // A time-based interval too short for one write would never finish the run.
            return Err(too_many_intervals(w, opts.interval));
        }
        let timed_ns = s.drive_ns(s.now_ns() - timed_start_ns);
        if let Some((_, after)) = split {
            untimed_part(s, format!("{name}-rest-untimed"), after, "the part after the middle")?;
        }
        written += (bytes + untimed_written) as f64;
        elapsed_ns = match split {
            None => s.drive_ns(s.now_ns() - start_ns),
            Some(_) => elapsed_ns + timed_ns * (bytes + untimed_written) as f64 / bytes as f64,
        };
        let now = s.counters();
        points.push(Point {
            end_ns: elapsed_ns,
            written_bytes: written,
            iops: iops(&run, DDIR_WRITE),
            wa: wa_over_reclaims(&starts, &now, reclaims),
        });
        starts.push(now);
    }
    let end = starts.last().unwrap_or(&first);
    let total_wa = wa_between(&first, end);
    // The final window as a whole, reaching back over earlier intervals when it holds too few
    // GC cycles; `starts[i]` is the start of interval `i`.
    let first_in_window = points.len() - final_window(&points).len();
    let steady_wa = wa_over_reclaims(&starts[..=first_in_window], end, reclaims);
    Ok(Saturation {
        points,
        total_wa,
        steady_wa,
        written_bytes: written,
    })
}

fn too_many_intervals(w: &WsatOptions, interval: RoundLength) -> SuiteError {
    SuiteError::BadOption {
        option: "--interval",
        value: interval.describe(),
        valid: format!(
            "an interval long enough that {} drive fills take at most {MAX_INTERVALS} intervals",
            w.write_multiple
        ),
    }
}

/// The last intervals, the SNIA window length of them (fewer when the run is shorter).
fn final_window(points: &[Point]) -> &[Point] {
    let n = SteadyRule::SNIA_PTS.window.min(points.len());
    &points[points.len() - n..]
}

/// The results, and the index range of the final window (for the charts' band).
fn results(
    points: &[Point],
    total_wa: f64,
    steady_wa: f64,
    written: f64,
) -> (Vec<Measure>, (usize, usize)) {
    let window = final_window(points);
    let first_in_window = points.len() - window.len();
    let iops_w: Vec<f64> = window.iter().map(|p| p.iops).collect();
    let check = check_window(&iops_w, &SteadyRule::SNIA_PTS);
    let fob = points.first().map_or(0.0, |p| p.iops);
    let min = points.iter().map(|p| p.iops).fold(f64::INFINITY, f64::min);
    let mut m = vec![
        measure("intervals", Unit::Count, points.len() as f64),
        measure("fob_write_iops", Unit::Iops, fob),
        measure(
            "min_write_iops",
            Unit::Iops,
            if min.is_finite() { min } else { 0.0 },
        ),
        measure("steady_write_iops", Unit::Iops, check.mean),
        measure(
            "steady_window_met_rule",
            Unit::Count,
            f64::from(u8::from(check.steady)),
        ),
        measure("steady_write_amplification", Unit::Ratio, steady_wa),
        measure("write_amplification", Unit::Ratio, total_wa),
        measure("host_bytes_written", Unit::Bytes, written),
        measure("nand_bytes_written", Unit::Bytes, written * total_wa),
        measure(
            "sim_time_ns",
            Unit::Ns,
            points.last().map_or(0.0, |p| p.end_ns),
        ),
    ];
    // The cliff: the first interval below halfway from the plateau to the steady level.
    if fob > check.mean {
        let half = (fob + check.mean) / 2.0;
        if let Some(p) = points.iter().find(|p| p.iops < half) {
            m.push(measure("cliff_host_bytes", Unit::Bytes, p.written_bytes));
            m.push(measure("cliff_sim_time_ns", Unit::Ns, p.end_ns));
        }
    }
    for (i, p) in points.iter().enumerate() {
        m.push(measure("write_iops", Unit::Iops, p.iops).under(&[Coord::Interval(i as u32 + 1)]));
    }
    (m, (first_in_window, points.len() - 1))
}

fn charts(points: &[Point], (a, b): (usize, usize)) -> Vec<Chart> {
    let series = |name: &str, x: fn(&Point) -> f64, y: fn(&Point) -> f64| Series {
        name: name.to_string(),
        points: points.iter().map(|p| (x(p), y(p))).collect(),
    };
    let band = |x: fn(&Point) -> f64| points.get(a).zip(points.get(b)).map(|(p, q)| (x(p), x(q)));
    let time = |p: &Point| p.end_ns;
    let written = |p: &Point| p.written_bytes;
    vec![
        Chart {
            id: "wsat-iops-time".into(),
            title: "4 KiB random-write IOPS against simulated time, from a purged drive".into(),
            x: Axis::linear("simulated time", Unit::Ns),
            y: Axis::linear("write IOPS", Unit::Iops),
            series: vec![series("write IOPS", time, |p| p.iops)],
            band: band(time),
        },
        Chart {
            id: "wsat-iops-written".into(),
            title: "4 KiB random-write IOPS against host data written".into(),
            x: Axis::linear("host data written", Unit::Bytes),
            y: Axis::linear("write IOPS", Unit::Iops),
            series: vec![series("write IOPS", written, |p| p.iops)],
            band: band(written),
        },
        Chart {
            id: "wsat-wa-written".into(),
            title: "Write amplification per interval against host data written".into(),
            x: Axis::linear("host data written", Unit::Bytes),
            y: Axis::linear("write amplification", Unit::Ratio),
            series: vec![series("write amplification", written, |p| p.wa)],
            band: band(written),
        },
    ]
}

/// `wsat`: write saturation from fresh to steady.
pub(crate) struct Wsat;

impl Suite for Wsat {
    fn name(&self) -> &'static str {
        "wsat"
    }
    fn summary(&self) -> &'static str {
        "write saturation: purge, 4 KiB random writes to 4x capacity, IOPS and WA per interval"
    }
    fn reads_runtime(&self) -> bool {
        false
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Simulated
    }
    fn options(&self) -> &'static [&'static str] {
        &["interval"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <WsatArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        o.own_mut::<WsatOptions>().write_multiple =
            flashlab_kit::suite::parse_args::<WsatArgs>(m)?.write_multiple;
        Ok(())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        Some(("wsat", o.own::<WsatOptions>().to_json(o.interval)))
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        run(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(iops: &[f64]) -> Vec<Point> {
        iops.iter()
            .enumerate()
            .map(|(i, &v)| Point {
                end_ns: (i + 1) as f64 * 1e9,
                written_bytes: (i + 1) as f64 * 100.0,
                iops: v,
                wa: if i < 3 { 1.0 } else { 3.0 },
            })
            .collect()
    }

    fn value(m: &[Measure], key: &str) -> f64 {
        m.iter().find(|x| x.key() == key).unwrap().value
    }

    #[test]
    fn results_find_the_plateau_the_cliff_and_the_steady_window() {
        let p = pts(&[
            900.0, 900.0, 880.0, 300.0, 200.0, 210.0, 205.0, 200.0, 204.0,
        ]);
        let (m, window) = results(&p, 2.5, 3.0, 900.0);
        assert_eq!(window, (4, 8));
        assert_eq!(value(&m, "fob_write_iops"), 900.0);
        assert_eq!(value(&m, "min_write_iops"), 200.0);
        assert!((value(&m, "steady_write_iops") - 203.8).abs() < 1e-9);
        assert_eq!(value(&m, "steady_window_met_rule"), 1.0);
        assert_eq!(value(&m, "steady_write_amplification"), 3.0);
        // Halfway from 900 to ~204 is ~552: interval 4 (400 bytes written) is the first below.
        assert_eq!(value(&m, "cliff_host_bytes"), 400.0);
        assert_eq!(value(&m, "interval_009_write_iops"), 204.0);
        let c = charts(&p, window);
        assert_eq!(c[1].band, Some((500.0, 900.0)));
        assert_eq!(c[0].series[0].points.len(), 9);
    }

    #[test]
    fn options_bound_the_interval_count() {
        use flashlab_kit::options::OwnOptions;
        let common = SuiteOptions::default();
        assert!(WsatOptions::default().validate(&common).is_ok());
        let short = SuiteOptions {
            interval: RoundLength::CapacityFraction(0.0001),
            ..Default::default()
        };
        let msg = WsatOptions::default()
            .validate(&short)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("--interval"), "{msg}");
        let o = WsatOptions {
            write_multiple: 0.0,
        };
        assert!(o
            .validate(&common)
            .unwrap_err()
            .to_string()
            .contains("--write-multiple"));
    }

    /// A forged cache entry of a saturation run is refused at load: more intervals than a
    /// run takes, a figure that is no number or below zero.
    #[test]
    fn forged_saturation_runs_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let real = || Saturation {
            points: pts(&[100.0, 90.0, 80.0, 80.0]),
            total_wa: 2.0,
            steady_wa: 3.0,
            written_bytes: 400.0,
        };
        reload_into(&real(), &mut Saturation::default()).unwrap();
        type Forge<'a> = (&'a str, &'a dyn Fn(&mut Saturation));
        let cases: [Forge; 3] = [
            ("holds 10001 intervals", &|f| {
                f.points = pts(&[1.0; MAX_INTERVALS + 1])
            }),
            ("entry 1 is inf", &|f| f.steady_wa = f64::INFINITY),
            ("entry 5 is -4", &|f| f.points[0].iops = -4.0),
        ];
        for (want, forge) in cases {
            let mut forged = real();
            forge(&mut forged);
            let e = reload_into(&forged, &mut Saturation::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
