//! Steps and measures the suites share: job text, the workload-independent fill, random-write
//! rounds to the SNIA steady state, and the IOPS and bandwidth of a run.

use flashlab_engine::NS_PER_S;
use flashlab_ftl::FtlCounters;
use flashlab_report::{RunResult, DDIR_WRITE};

use crate::lengths::RoundLength;
use crate::session::Session;
use crate::steady::{check_window, steady_state, SteadyRule};
use crate::{Axis, Chart, Coord, Measure, Series, SteadyReport, SuiteError, SuiteOptions, Unit};

/// Queue depth and job count when `--qd`/`--jobs` are not given: QD32 × 1, the depth of SATA
/// NCQ and of client datasheets, deep enough to keep an NVMe drive's dies busy.
pub const DEFAULT_QD: u32 = 32;
pub const DEFAULT_JOBS: u32 = 1;
/// Depth of the workload-independent fill: it only has to write every block, fast.
pub const FILL_QD: u32 = 32;
/// Ramps let queues fill and a write buffer reach its steady level before measuring.
pub const RAMP_NS: u64 = NS_PER_S;

/// Write IOPS per round, the steady window marked.
pub fn steady_chart(st: &SteadyReport) -> Chart {
    let window = SteadyRule::SNIA_PTS.window;
    let band = st
        .verdict
        .round
        .map(|r| ((r + 1 - window) as f64, r as f64));
    Chart {
        id: "steady-rounds".into(),
        title: "4 KiB random-write rounds and the steady-state window".into(),
        x: Axis::linear("round", Unit::Count),
        y: Axis::linear("write IOPS", Unit::Iops),
        series: vec![Series {
            name: "write IOPS".into(),
            points: st
                .rounds_iops
                .iter()
                .enumerate()
                .map(|(i, v)| ((i + 1) as f64, *v))
                .collect(),
        }],
        band,
    }
}

/// The value of `family` at `col` in row `row` among `results`, if measured.
pub fn result_value(
    results: &[Measure],
    family: &str,
    row: &[Coord],
    col: Option<Coord>,
) -> Option<f64> {
    results
        .iter()
        .find(|m| m.is(family, row, col))
        .map(|m| m.value)
}

/// A figure of the whole run or step ([`Measure::new`]).
pub fn measure(family: &'static str, unit: Unit, value: f64) -> Measure {
    Measure::new(family, unit, value)
}

/// Sum over the run's jobs (clones are merged by group_reporting).
pub fn iops(run: &RunResult, ddir: usize) -> f64 {
    run.jobs.iter().map(|j| j.iops(ddir)).sum()
}

pub fn bw_bytes_per_s(run: &RunResult, ddir: usize) -> f64 {
    run.jobs.iter().map(|j| j.bw_bytes_per_s(ddir) as f64).sum()
}

/// The option that makes random offsets uniform with repeats: each drawn independently, so a
/// block may be written again before another is written once. The SNIA PTS's "uniform random",
/// Iometer, VDbench and DiskSpd draw so; fio's default random map instead writes every block
/// once per pass, which leaves whole passes' worth of wholly invalid blocks to greedy GC and
/// makes steady random writes optimistic (docs/explain-gc.md, "Random writes with repeats").
pub const UNIFORM_RANDOM: &str = "norandommap=1";

/// `rw` writes or trims at random offsets (alone or mixed with reads): the jobs whose
/// offsets must be [`UNIFORM_RANDOM`].
pub fn writes_randomly(rw: &str) -> bool {
    matches!(rw, "randwrite" | "randrw" | "randtrim" | "randtrimwrite")
}

/// `norandommap=1` and a line break for a random write or mix, nothing otherwise: the
/// option line a generated job carries after its `rw=`, visible in its `job options`.
pub fn uniform_random_line(rw: &str) -> String {
    if writes_randomly(rw) {
        format!("{UNIFORM_RANDOM}\n")
    } else {
        String::new()
    }
}

/// A one-job fio file. `lines` are extra `key=value` options. Random writes and mixes draw
/// their offsets with repeats ([`UNIFORM_RANDOM`]).
pub fn job_text(name: &str, rw: &str, bs: &str, qd: u32, jobs: u32, lines: &[String]) -> String {
    let uniform = uniform_random_line(rw);
    let mut t = format!(
        "[global]\nioengine=libaio\ndirect=1\ngroup_reporting=1\n\n[{name}]\nrw={rw}\n{uniform}bs={bs}\niodepth={qd}\nnumjobs={jobs}\nsize=100%\n"
    );
    for l in lines {
        t.push_str(l);
        t.push('\n');
    }
    t
}

pub fn timed(runtime_ns: u64, ramp_ns: u64) -> Vec<String> {
    vec![
        "time_based=1".into(),
        format!("ramp_time={ramp_ns}ns"),
        format!("runtime={runtime_ns}ns"),
    ]
}

pub fn qd_jobs(opts: &SuiteOptions) -> (u32, u32) {
    (
        opts.qd.unwrap_or(DEFAULT_QD),
        opts.jobs.unwrap_or(DEFAULT_JOBS),
    )
}

/// Purge, then the workload-independent preconditioning: the whole drive written twice with
/// 128 KiB sequential writes, so every block holds data and the FTL's free pool is at its
/// floor.
/// Steps of [`purge_and_fill`] and [`purge_and_fill_with`], for a suite's
/// [`Session::plan_steps`].
pub const FILL_STEPS: usize = 2;

pub fn purge_and_fill(s: &mut Session) -> Result<(), SuiteError> {
    purge_and_fill_with(s, "", "128k", 2)
}

/// Purge, then `loops` sequential passes over the whole drive at block size `bs`. Step names
/// are `{prefix}purge` and `{prefix}fill`. The precondition cache keeps the drive as the
/// fill leaves it.
pub fn purge_and_fill_with(
    s: &mut Session,
    prefix: &str,
    bs: &str,
    loops: u32,
) -> Result<(), SuiteError> {
    let name = format!("{prefix}fill");
    let text = job_text(&name, "write", bs, FILL_QD, 1, &[format!("loops={loops}")]);
    if s.untimed_allowed() {
        let what = format!("{loops} sequential passes of {bs} writes, as the job gives them");
        let recipe = format!("purge '{prefix}purge', then without timing:\n{text}");
        return s.checkpoint(&recipe, |s| {
            s.purge(&format!("{prefix}purge"))?;
            s.untimed_job(&name, &what, &text).map(drop)
        });
    }
    let recipe = format!("purge '{prefix}purge', then fill:\n{text}");
    s.checkpoint(&recipe, |s| purge_then(s, prefix, &name, &text))
}

fn purge_then(s: &mut Session, prefix: &str, name: &str, text: &str) -> Result<(), SuiteError> {
    s.purge(&format!("{prefix}purge"))?;
    s.job(name, text, &|run| {
        vec![measure(
            "bw_bytes_per_s",
            Unit::BytesPerS,
            bw_bytes_per_s(run, DDIR_WRITE),
        )]
    })?;
    Ok(())
}

/// Workload-dependent preconditioning: rounds of 4 KiB random writes until the write IOPS
/// meet the SNIA steady-state rule or `max_rounds` have run. A round's IOPS are those of
/// its timed end ([`RoundJobs`]).
pub fn random_write_rounds(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<SteadyReport, SuiteError> {
    let (recipe, round) = rounds_recipe(s, opts, "");
    let rule = SteadyRule::SNIA_PTS;
    // The precondition cache keeps the drive at the end of the rounds, and their IOPS.
    let values = s.checkpoint(&recipe, |s| {
        rounds_until_steady(s, opts, &round, &rule, None)
    })?;
    Ok(rounds_report(s, opts, &round, values))
}

/// [`random_write_rounds`], with the FTL's counters at the start of each round (kept in the
/// precondition cache too): window starts for [`crate::session::wa_over_reclaims`].
pub fn random_write_rounds_counted(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<(SteadyReport, Vec<FtlCounters>), SuiteError> {
    let (recipe, round) = rounds_recipe(s, opts, "; FTL counters at each round's start");
    let rule = SteadyRule::SNIA_PTS;
    let counted = s.checkpoint(&recipe, |s| {
        let mut starts = Vec::with_capacity(opts.max_rounds);
        let values = rounds_until_steady(s, opts, &round, &rule, Some(&mut starts))?;
        Ok(CountedRounds { values, starts })
    })?;
    Ok((
        rounds_report(s, opts, &round, counted.values),
        counted.starts,
    ))
}

/// How each random-write round is written. A round of a given size leaves the drive in a
/// state its timing does not change (where [`Session::untimed_allowed`]): only its IOPS,
/// the steady-state rule's input, need the timing model. So all but its end
/// ([`SuiteOptions::round_timed_percent`]) runs without it, as the fills do, and the round's
/// IOPS are its timed end's. A round given as a time, a drive that refuses the untimed
/// path, `--timed-precondition` and `--round-timed 100%` time every round whole.
pub struct RoundJobs {
    /// The job lines of the round's first part, written without timing (one job: the
    /// untimed path replays one generator), if the round is split.
    untimed_lines: Option<Vec<String>>,
    /// The job lines of the round's timed part (the whole round if it is not split).
    timed_lines: Vec<String>,
    qd: u32,
    jobs: u32,
}

impl RoundJobs {
    /// Steps each round takes: its untimed part's and its timed part's.
    fn steps(&self) -> usize {
        1 + usize::from(self.untimed_lines.is_some())
    }
}

/// Bytes of a round of a given size (`None` for a round given as a time).
fn round_bytes(s: &Session, opts: &SuiteOptions) -> Option<u64> {
    match opts.round {
        RoundLength::TimeNs(_) => None,
        RoundLength::Bytes(b) => Some(b),
        RoundLength::CapacityFraction(f) => {
            Some((s.full_capacity_bytes() as f64 * f).round() as u64)
        }
    }
}

/// Where a round is split ([`RoundJobs`]): the bytes each job writes timed and the bytes
/// written before them without timing (more than none). For a suite that writes rounds of
/// its own workload, whose offsets do not depend on where the last I/O went (random).
pub fn round_split(s: &mut Session, opts: &SuiteOptions) -> Option<(u64, u64)> {
    let b = round_bytes(s, opts)?;
    if opts.round_timed_percent >= 100 || !s.untimed_allowed() {
        return None;
    }
    timed_share(opts, b)
}

/// `bytes` of random writes split at `--round-timed`: the bytes each job writes timed and
/// the bytes written without timing (more than none), or `None` where nothing is left for
/// the untimed part.
pub fn timed_share(opts: &SuiteOptions, bytes: u64) -> Option<(u64, u64)> {
    let jobs = qd_jobs(opts).1;
    // In u128: a round given in bytes may be any size below 2^64.
    let share = u128::from(bytes) * u128::from(opts.round_timed_percent) / 100;
    let timed = per_job_bytes(share as u64, jobs);
    let untimed = bytes.saturating_sub(timed.saturating_mul(u64::from(jobs))) / 4096 * 4096;
    (untimed > 0).then_some((timed, untimed))
}

/// Steps each random-write round takes on this drive: two where its first part runs
/// without timing ([`RoundJobs`]), else one. For a suite's [`Session::plan_steps`].
pub fn round_steps(s: &mut Session, opts: &SuiteOptions) -> usize {
    1 + usize::from(round_split(s, opts).is_some())
}

/// The rounds' recipe (their cache key; `extra` says what else the cache keeps) and jobs.
fn rounds_recipe(s: &mut Session, opts: &SuiteOptions, extra: &str) -> (String, RoundJobs) {
    let (qd, jobs) = qd_jobs(opts);
    let round = match (opts.round, round_split(s, opts)) {
        (RoundLength::TimeNs(ns), _) => RoundJobs {
            untimed_lines: None,
            timed_lines: vec!["time_based=1".to_string(), format!("runtime={ns}ns")],
            qd,
            jobs,
        },
        (_, Some((timed, untimed))) => RoundJobs {
            untimed_lines: Some(vec![format!("io_size={untimed}")]),
            timed_lines: vec![format!("io_size={timed}")],
            qd,
            jobs,
        },
        (_, None) => RoundJobs {
            untimed_lines: None,
            timed_lines: vec![format!(
                "io_size={}",
                per_job_bytes(round_bytes(s, opts).unwrap_or(0), jobs)
            )],
            qd,
            jobs,
        },
    };
    let timed = job_text("round-NN", "randwrite", "4k", qd, jobs, &round.timed_lines);
    let recipe = match &round.untimed_lines {
        None => format!(
            "random-write rounds, at most {}{extra}:\n{timed}",
            opts.max_rounds
        ),
        Some(lines) => format!(
            "random-write rounds, at most {}{extra}; each without timing:\n{}then timed:\n{timed}",
            opts.max_rounds,
            job_text("round-NN-untimed", "randwrite", "4k", qd, 1, lines)
        ),
    };
    (recipe, round)
}

fn rounds_report(
    s: &mut Session,
    opts: &SuiteOptions,
    round: &RoundJobs,
    values: Vec<f64>,
) -> SteadyReport {
    s.rounds_ended(opts.max_rounds.saturating_sub(values.len()) * round.steps());
    let verdict = steady_state(&values, &SteadyRule::SNIA_PTS);
    SteadyReport {
        rounds_iops: values,
        verdict,
    }
}

/// Rounds' IOPS and the FTL's counters at each round's start, as the precondition cache keeps
/// them.
#[derive(Default)]
struct CountedRounds {
    values: Vec<f64>,
    starts: Vec<FtlCounters>,
}

flashlab_engine::impl_state!(CountedRounds { values, starts } check CountedRounds::check_loaded);

impl CountedRounds {
    /// A round's counters are taken at its start, so there are as many as rounds; a round's
    /// IOPS is a finite figure, not negative.
    fn check_loaded(&self) -> Result<(), String> {
        check_figures("the cached rounds' IOPS", &self.values)?;
        if self.starts.len() != self.values.len() {
            return Err(format!(
                "the cached rounds hold {} IOPS figures and {} round starts (valid: one start a round)",
                self.values.len(),
                self.starts.len()
            ));
        }
        Ok(())
    }
}

/// Figures a suite caches (IOPS, bytes, times) are finite and not negative.
pub fn check_figures(what: &str, figures: &[f64]) -> Result<(), String> {
    match figures.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
        Some(i) => Err(format!(
            "{what}: entry {i} is {} (valid: a finite figure, not negative)",
            figures[i]
        )),
        None => Ok(()),
    }
}

/// Write IOPS of each round, until the last rounds meet `rule` or `max_rounds` have run;
/// `starts` collects the FTL's counters at each round's start.
fn rounds_until_steady(
    s: &mut Session,
    opts: &SuiteOptions,
    round: &RoundJobs,
    rule: &SteadyRule,
    mut starts: Option<&mut Vec<FtlCounters>>,
) -> Result<Vec<f64>, SuiteError> {
    let (qd, jobs) = (round.qd, round.jobs);
    let mut values = Vec::with_capacity(opts.max_rounds);
    for r in 1..=opts.max_rounds {
        if let Some(starts) = starts.as_mut() {
            starts.push(s.counters());
        }
        let name = format!("round-{r:02}");
        if let Some(lines) = &round.untimed_lines {
            let first = format!("{name}-untimed");
            let what = format!(
                "the first {}% of round {r}: 4 KiB random writes, as the job gives them",
                100 - opts.round_timed_percent
            );
            let text = job_text(&first, "randwrite", "4k", qd, 1, lines);
            s.untimed_job(&first, &what, &text)?;
            s.continue_writes();
        }
        let text = job_text(&name, "randwrite", "4k", qd, jobs, &round.timed_lines);
        let run = s.job(&name, &text, &|run| {
            vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
        })?;
        values.push(iops(&run, DDIR_WRITE));
        if values.len() >= rule.window
            && check_window(&values[values.len() - rule.window..], rule).steady
        {
            break;
        }
    }
    Ok(values)
}

/// Bytes each of `jobs` clones writes so that together they write `total` (whole 4 KiB blocks,
/// at least one).
pub fn per_job_bytes(total: u64, jobs: u32) -> u64 {
    (total / u64::from(jobs.max(1)) / 4096).max(1) * 4096
}

/// The mean of the steady window, or of the last rounds when steady state was not reached.
pub fn steady_iops(st: &SteadyReport) -> f64 {
    match st.verdict.window {
        Some(w) => w.mean,
        None if st.rounds_iops.is_empty() => 0.0,
        None => st.rounds_iops.iter().sum::<f64>() / st.rounds_iops.len() as f64,
    }
}

pub fn steady_measures(st: &SteadyReport) -> Vec<Measure> {
    let mut m = vec![
        measure("rounds", Unit::Count, st.rounds_iops.len() as f64),
        measure("steady_write_iops", Unit::Iops, steady_iops(st)),
    ];
    if let Some(w) = st.verdict.window {
        m.push(measure("window_range_iops", Unit::Iops, w.range));
        m.push(measure("window_excursion_iops", Unit::Iops, w.excursion));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_chart_marks_the_window_that_met_the_rule() {
        let st = SteadyReport {
            rounds_iops: vec![9.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0],
            verdict: steady_state(&[9.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0], &SteadyRule::SNIA_PTS),
        };
        let c = steady_chart(&st);
        assert_eq!(c.band, Some((2.0, 6.0)));
        assert_eq!(c.series[0].points.len(), 7);
    }

    #[test]
    fn per_job_bytes_split_in_whole_blocks() {
        assert_eq!(per_job_bytes(1 << 30, 1), 1 << 30);
        assert_eq!(per_job_bytes(1 << 30, 3), 357_912_576);
        assert_eq!(per_job_bytes(100, 4), 4096);
    }

    #[test]
    fn generated_jobs_parse() {
        let text = job_text("x", "randrw", "4k", 8, 2, &timed(2 * NS_PER_S, RAMP_NS));
        let file = flashlab_workload::parse_str(&text, "x.fio", &|_| None).unwrap();
        assert_eq!(file.jobs.len(), 1);
        let j = &file.jobs[0];
        assert_eq!(j.engine.iodepth, 8);
        assert_eq!(j.control.numjobs, 2);
        assert!(j.time.time_based);
        assert_eq!(j.time.runtime_ns, Some(2 * NS_PER_S));
    }

    /// A forged cache entry of counted rounds is refused at load: round starts that do not
    /// match the rounds, an IOPS figure that is no number.
    #[test]
    fn forged_counted_rounds_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let real = || CountedRounds {
            values: vec![10.0, 20.0],
            starts: vec![FtlCounters::default(); 2],
        };
        reload_into(&real(), &mut CountedRounds::default()).unwrap();
        let mut forged = real();
        forged.starts.push(FtlCounters::default());
        let e = reload_into(&forged, &mut CountedRounds::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 IOPS figures and 3 round starts"), "{e}");
        let mut forged = real();
        forged.values[0] = f64::NAN;
        let e = reload_into(&forged, &mut CountedRounds::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("entry 0 is NaN"), "{e}");
    }
}
