//! `endurance`: a write workload to steady state, then a measured interval whose wear rate
//! (block erases and percentage used per host byte, from the drive's own erase counters)
//! projects how much the drive can be written before the average block reaches its rated
//! P/E cycles, in TB, drive writes per day and years at a duty cycle.
//!
//! The JEDEC enterprise workload (JESD219, 2010) is 100% random writes with its transfer-size
//! mix (512 B 4%, 1 KiB to 3.5 KiB 1% each, 4 KiB 67%, 8 KiB 10%, 16 KiB 7%, 32 KiB 3%,
//! 64 KiB 3%) over the whole user LBA range, skewed so that the first 5% of the LBAs take 50%
//! of the accesses, the next 15% take 30% and the remaining 80% take 20% (as summarised in
//! Seagate's "SSD Endurance" article on tomshardware.com, "Endurance Workloads").

use flashlab_device::{DeviceConfig, HealthLog, Model};
use flashlab_engine::{SeedTree, NS_PER_S};
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};
use serde_json::json;

use flashlab_kit::grids::{values, Cols, GridSpec};
use flashlab_kit::lengths::RoundLength;
use flashlab_kit::session::Session;
use flashlab_kit::steady::{check_window, steady_state, SteadyRule};
use flashlab_kit::steps::{
    bw_bytes_per_s, iops, job_text, measure, per_job_bytes, purge_and_fill, qd_jobs, result_value,
    round_split, steady_chart, FILL_STEPS,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::Dim;
use flashlab_kit::{
    Axis, Chart, Coord, Measure, Phase, Series, SteadyReport, SuiteError, SuiteOptions, Unit,
};

/// fio's bssplit for the JESD219 enterprise transfer sizes (sizes in bytes, shares in %).
pub const JEDEC_BSSPLIT: &str =
    "512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3";
/// fio's zoned distribution for the JESD219 enterprise LBA skew.
pub const JEDEC_ZONES: &str = "zoned:50/5:30/15:20/80";

const SECONDS_PER_DAY: f64 = 86_400.0;
const DAYS_PER_YEAR: f64 = 365.25;

/// What the endurance suite writes.
#[derive(Debug, Clone, PartialEq)]
pub enum EnduranceWorkload {
    /// JESD219 enterprise: random writes, its size mix and LBA skew.
    JedecEnterprise,
    /// 4 KiB uniformly random writes.
    Random4k,
    /// 128 KiB sequential writes.
    Sequential,
    /// A user's fio job file (its text; `name` names it in errors). Each round runs it as
    /// written: its own size, io_size or runtime sets the round length.
    Job { name: String, text: String },
}

impl EnduranceWorkload {
    pub fn name(&self) -> &str {
        match self {
            EnduranceWorkload::JedecEnterprise => "jedec-enterprise",
            EnduranceWorkload::Random4k => "random-4k",
            EnduranceWorkload::Sequential => "sequential",
            EnduranceWorkload::Job { name, .. } => name,
        }
    }

    /// A built-in workload by name, or `None` (the caller may then read a job file).
    pub fn builtin(name: &str) -> Option<Self> {
        match name {
            "jedec-enterprise" => Some(EnduranceWorkload::JedecEnterprise),
            "random-4k" => Some(EnduranceWorkload::Random4k),
            "sequential" => Some(EnduranceWorkload::Sequential),
            _ => None,
        }
    }

    /// The job text of one step; `lines` set its length (ignored for a user's job file).
    fn text(&self, step: &str, qd: u32, jobs: u32, lines: &[String]) -> String {
        match self {
            EnduranceWorkload::JedecEnterprise => {
                let mut l = lines.to_vec();
                l.push(format!("bssplit={JEDEC_BSSPLIT}"));
                l.push(format!("random_distribution={JEDEC_ZONES}"));
                job_text(step, "randwrite", "4k", qd, jobs, &l)
            }
            EnduranceWorkload::Random4k => job_text(step, "randwrite", "4k", qd, jobs, lines),
            EnduranceWorkload::Sequential => job_text(step, "write", "128k", qd, jobs, lines),
            EnduranceWorkload::Job { text, .. } => text.clone(),
        }
    }
}

/// Options of the `endurance` suite.
#[derive(Debug, Clone, PartialEq)]
pub struct EnduranceOptions {
    pub workload: EnduranceWorkload,
    /// Share of the day the drive writes at the measured rate (0 to 1].
    pub duty_cycle: f64,
    /// Length of the measured interval after steady state (default half the user capacity).
    pub measure: RoundLength,
    /// After the measured interval, go on writing rounds until the drive turns read-only
    /// (blocks failing with wear), at most [`WEAR_OUT_LIMIT`] times its rated TBW.
    pub until_read_only: bool,
    /// At the end, read the whole drive, leave it unpowered this many days, and read it again
    /// (retention of the worn drive's data: read retries, data lost).
    pub power_off_days: Option<f64>,
    /// The power-off temperature (°C; None: the drive's `nand.retention_temperature_c`).
    pub storage_c: Option<f64>,
}

/// The wear-out run stops, not reached, after this many times the rated TBW (from the P/E
/// rating and the measured WA) of host writes.
pub const WEAR_OUT_LIMIT: f64 = 10.0;

/// NVMe's available spare threshold the health log warns below (percent).
const SPARE_WARNING_PERCENT: f64 = 10.0;

impl Default for EnduranceOptions {
    fn default() -> Self {
        Self {
            workload: EnduranceWorkload::JedecEnterprise,
            duty_cycle: 1.0,
            measure: RoundLength::CapacityFraction(0.5),
            until_read_only: false,
            power_off_days: None,
            storage_c: None,
        }
    }
}

// `endurance`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct EnduranceArgs {
    /// endurance: jedec-enterprise, random-4k, sequential or a fio job file.
    #[arg(long, default_value = "jedec-enterprise")]
    workload: String,
    /// endurance: share of the day spent writing at the measured rate (0 to 1).
    #[arg(long, default_value_t = 1.0)]
    duty_cycle: f64,
    /// endurance: the measured interval after steady state: a share of the capacity, a size
    /// or a simulated time.
    #[arg(long, default_value = "50%")]
    measure: String,
    /// endurance: after the measured interval, write rounds until the drive turns read-only
    /// (its blocks failing with wear: nand.grown_bad_at_rated), at most 10x its rated TBW.
    /// Lower nand.pe_cycles to get there in minutes.
    #[arg(long)]
    until_read_only: bool,
    /// endurance: at the end, read the whole drive, leave it unpowered this many days and
    /// read it again (power-off retention of the worn drive's data).
    #[arg(long)]
    power_off_days: Option<f64>,
    /// endurance: the power-off temperature in °C (default: the drive's
    /// nand.retention_temperature_c).
    #[arg(long)]
    storage_temp: Option<f64>,
}

impl EnduranceArgs {
    fn apply(&self, e: &mut EnduranceOptions) -> Result<(), SuiteError> {
        e.workload = workload_arg(&self.workload)?;
        e.duty_cycle = self.duty_cycle;
        e.measure = RoundLength::parse_for("--measure", &self.measure)?;
        e.until_read_only = self.until_read_only;
        e.power_off_days = self.power_off_days;
        e.storage_c = self.storage_temp;
        Ok(())
    }
}

/// `--workload`: a built-in workload's name or a fio job file.
fn workload_arg(text: &str) -> Result<EnduranceWorkload, SuiteError> {
    if let Some(w) = EnduranceWorkload::builtin(text) {
        return Ok(w);
    }
    let bad = |expected: String| SuiteError::OptionValue {
        option: "--workload",
        value: format!("'{text}'"),
        expected,
    };
    let path = std::path::Path::new(text);
    if !(text.ends_with(".fio") || path.is_file()) {
        return Err(bad(
            "expected jedec-enterprise, random-4k, sequential or a fio job file".into(),
        ));
    }
    let job = flashlab_engine::input::read_text(
        path,
        flashlab_engine::input::MAX_JOB_FILE_BYTES,
        "a job file",
    )
    .map_err(|e| bad(format!("cannot read the job file: {e}")))?;
    Ok(EnduranceWorkload::Job {
        name: text.to_string(),
        text: job,
    })
}

impl flashlab_kit::options::OwnOptions for EnduranceOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        EnduranceOptions::validate(self)
    }
}

impl EnduranceOptions {
    pub fn validate(&self) -> Result<(), SuiteError> {
        if !(self.duty_cycle > 0.0 && self.duty_cycle <= 1.0) {
            return Err(SuiteError::BadOption {
                option: "--duty-cycle",
                value: self.duty_cycle.to_string(),
                valid: "a share of the day above 0 and at most 1 (1.0: writing all day)".into(),
            });
        }
        if let Some(d) = self.power_off_days {
            if !(0.0..=36_525.0).contains(&d) {
                return Err(SuiteError::BadOption {
                    option: "--power-off-days",
                    value: d.to_string(),
                    valid: "0 to 36525 days (a century)".into(),
                });
            }
        }
        if let Some(c) = self.storage_c {
            if !(-40.0..=125.0).contains(&c) {
                return Err(SuiteError::BadOption {
                    option: "--storage-temp",
                    value: c.to_string(),
                    valid: "-40 to 125 (°C)".into(),
                });
            }
            if self.power_off_days.is_none() {
                return Err(SuiteError::BadOption {
                    option: "--storage-temp",
                    value: c.to_string(),
                    valid: "only with --power-off-days".into(),
                });
            }
        }
        if let RoundLength::CapacityFraction(f) = self.measure {
            if !(f > 0.0 && f <= 10.0) {
                return Err(SuiteError::BadOption {
                    option: "--measure",
                    value: format!("{}%", f * 100.0),
                    valid: "a percentage above 0 and at most 1000".into(),
                });
            }
        }
        Ok(())
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        json!({
            "workload": self.workload.name(),
            "duty_cycle": self.duty_cycle,
            "measure": self.measure.describe(),
            "until_read_only": self.until_read_only,
            "power_off_days": self.power_off_days,
            "storage_temp_c": self.storage_c,
        })
    }
}

/// The drive's wear at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Wear {
    /// Host bytes written since the suite started (whole drive).
    host_bytes: f64,
    /// NAND bytes programmed since the last purge (whole drive).
    nand_bytes: f64,
    erase_sum: u64,
    erase_min: u32,
    erase_avg: f64,
    erase_max: u32,
    /// Average erase count over rated P/E cycles, in percent (not rounded).
    used_percent: f64,
    /// The health log's percentage used (NVMe: rounded down, capped at 255).
    used_percent_log: f64,
    /// NVMe's available spare (percent): what blocks failing with wear have left of the spare.
    available_spare: f64,
    grown_bad_blocks: u64,
    read_only: bool,
    /// The health log's power-off data retention at the most worn block's wear (days).
    retention_days: f64,
    sim_ns: f64,
}

flashlab_engine::impl_state!(Wear {
    host_bytes,
    nand_bytes,
    erase_sum,
    erase_min,
    erase_avg,
    erase_max,
    used_percent,
    used_percent_log,
    available_spare,
    grown_bad_blocks,
    read_only,
    retention_days,
    sim_ns,
});

impl Wear {
    /// Intel's media wearout indicator: 100 on a new drive, down to 1 at rated wear.
    fn wearout_indicator(&self) -> f64 {
        (100.0 - self.used_percent).ceil().clamp(1.0, 100.0)
    }
}

struct Drive {
    pe_cycles: f64,
    iu_bytes: f64,
    capacity_factor: f64,
    user_bytes: f64,
    native_raw_bytes: f64,
}

impl Drive {
    fn new(m: &Model) -> Self {
        Self {
            pe_cycles: f64::from(m.full.pe_cycles),
            iu_bytes: m.iu_bytes as f64,
            capacity_factor: m.scale.capacity_factor,
            user_bytes: m.full_user_bytes as f64,
            native_raw_bytes: m.native_raw_bytes() as f64,
        }
    }
}

fn wear(s: &Session, d: &Drive, host_bytes: f64) -> Wear {
    let erases = s.erase_count_summary();
    let avg = erases.avg();
    let health = s.health_log();
    let h = health.as_ref();
    let log = h.map_or(0.0, |h| h.percentage_used as f64);
    let available_spare = h.map_or(0.0, |h| f64::from(h.available_spare));
    let grown_bad_blocks = h.map_or(0, |h| u64::from(h.grown_bad_blocks));
    let read_only = h.is_some_and(|h| h.read_only);
    let retention_days = h.map_or(0.0, |h| h.power_off_retention_days);
    Wear {
        host_bytes,
        nand_bytes: s.counters().nand_write_ius as f64 * d.iu_bytes * d.capacity_factor,
        erase_sum: erases.sum,
        erase_min: erases.min,
        erase_avg: avg,
        erase_max: erases.max,
        used_percent: avg / d.pe_cycles * 100.0,
        used_percent_log: log,
        available_spare,
        grown_bad_blocks,
        read_only,
        retention_days,
        sim_ns: s.drive_ns(s.now_ns()),
    }
}

fn written(run: &RunResult) -> f64 {
    run.jobs.iter().map(|j| j.io_bytes(DDIR_WRITE)).sum::<u64>() as f64
}

/// Build the drive from its description and run the workload on it.
pub(crate) fn run(s: &mut Session) -> Result<Outcome, SuiteError> {
    let config = s.require_config("endurance")?;
    let seeds = SeedTree::new(s.opts().seed).child("device");
    s.on_fresh_drive(config, seeds, &|s| run_on(s, config))
}

/// The steady-state rounds as the precondition cache keeps them: each round's write IOPS
/// and the drive's wear at its end.
#[derive(Default)]
struct Rounds {
    iops: Vec<f64>,
    wear: Vec<Wear>,
}

flashlab_engine::impl_state!(Rounds { iops, wear } check Rounds::check_loaded);

impl Rounds {
    /// A round's wear is taken at its end: as many as rounds, each with finite byte counts,
    /// wear and time (retention may be unbounded on a drive without wear).
    fn check_loaded(&self) -> Result<(), String> {
        flashlab_kit::steps::check_figures("the cached endurance rounds' IOPS", &self.iops)?;
        if self.wear.len() != self.iops.len() {
            return Err(format!(
                "the cached endurance rounds hold {} IOPS figures and {} wear records (valid: one a round)",
                self.iops.len(),
                self.wear.len()
            ));
        }
        for (i, w) in self.wear.iter().enumerate() {
            flashlab_kit::steps::check_figures(
                &format!("the cached endurance round {i}'s wear"),
                &[
                    w.host_bytes,
                    w.nand_bytes,
                    w.erase_avg,
                    w.available_spare,
                    w.sim_ns,
                ],
            )?;
        }
        Ok(())
    }
}

fn run_on(s: &mut Session, config: &DeviceConfig) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let e = opts.own::<EnduranceOptions>();
    let model = config.resolve().map_err(|k| SuiteError::BadOption {
        option: "--device",
        value: config.name.clone(),
        valid: format!("a valid drive ({} = {}: {})", k.key, k.value, k.message),
    })?;
    let d = Drive::new(&model);
    let (qd, jobs) = qd_jobs(opts);
    // A round of a built-in random workload runs all but its end without timing, as the
    // shared rounds do (`flashlab_kit::steps::RoundJobs`): its IOPS are its timed end's, and
    // the untimed part's host bytes count in the wear curve. A sequential round's timed end
    // would start again at the drive's first block, and a user's job sets its own length:
    // those are timed whole.
    let split = match e.workload {
        EnduranceWorkload::JedecEnterprise | EnduranceWorkload::Random4k => round_split(s, opts),
        EnduranceWorkload::Sequential | EnduranceWorkload::Job { .. } => None,
    };
    let round_steps = 1 + usize::from(split.is_some());
    // The wear-out rounds and the reads after power-off run for as long as the drive lets
    // them: the suite's length is known only without them.
    if !e.until_read_only && e.power_off_days.is_none() {
        s.plan_steps(FILL_STEPS + opts.max_rounds * round_steps + 1, 1);
    }
    let mut host = 0.0;
    let mut curve = vec![wear(s, &d, host)];
    let start = curve[0];
    // The fill writes every LBA first, so steady state is the workload's on a full drive.
    purge_and_fill(s)?;
    host += 2.0 * d.user_bytes;
    curve.push(wear(s, &d, host));

    let length = |len: RoundLength| -> Vec<String> {
        match len {
            RoundLength::TimeNs(ns) => vec!["time_based=1".to_string(), format!("runtime={ns}ns")],
            RoundLength::Bytes(b) => vec![format!("io_size={}", per_job_bytes(b, jobs))],
            RoundLength::CapacityFraction(f) => {
                let b = (d.user_bytes * f).round() as u64;
                vec![format!("io_size={}", per_job_bytes(b, jobs))]
            }
        }
    };
    let rule = SteadyRule::SNIA_PTS;
    let timed_lines = match split {
        Some((timed, _)) => vec![format!("io_size={timed}")],
        None => length(opts.round),
    };
    let rounds = steady_rounds(s, &d, split, &timed_lines, host)?;
    if let Some(last) = rounds.wear.last() {
        host = last.host_bytes;
    }
    curve.extend(rounds.wear);
    let values = rounds.iops;
    s.round = None;
    s.rounds_ended(opts.max_rounds.saturating_sub(values.len()) * round_steps);
    let steady = SteadyReport {
        verdict: steady_state(&values, &rule),
        rounds_iops: values,
    };

    let before = *curve.last().unwrap_or(&start);
    // The reviewers' way as well: the drive's timed-workload counters over the interval.
    let timed = s.reset_timed_workload();
    let text = e.workload.text("measure", qd, jobs, &length(e.measure));
    let run = s.job("measure", &text, &|run| {
        vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
    })?;
    host += written(&run);
    let after = wear(s, &d, host);
    curve.push(after);

    let mut results = results(
        &d,
        e.duty_cycle,
        &start,
        &before,
        &after,
        iops(&run, DDIR_WRITE),
    );
    if timed {
        results.extend(timed_workload_measures(
            s.health_log().as_ref(),
            after.host_bytes - before.host_bytes,
        ));
    }
    let mut charts = vec![steady_chart(&steady)];
    if e.until_read_only {
        let rated = value_of(&results, "rated_pe_tbw_bytes");
        let text = |step: &str| e.workload.text(step, qd, jobs, &length(opts.round));
        results.extend(run_to_read_only(s, &d, &text, rated, &mut curve)?);
        charts.push(spare_chart(&curve));
        charts.push(retention_chart(&curve));
    }
    charts.insert(1, wear_chart(&curve));
    if let Some(days) = e.power_off_days {
        let storage_c = e.storage_c.unwrap_or(model.retention_storage_c);
        results.extend(power_off_and_read(s, days, storage_c, qd)?);
    }
    Ok(Outcome {
        steady: Some(steady),
        results,
        charts,
    })
}

/// The rounds that bring the drive to the workload's steady state, each round's write IOPS
/// and the drive's wear at its end (host bytes counted from `start_host`): the precondition
/// cache keeps the drive at their end, with them. `split` is where a round goes untimed
/// ([`round_split`]; `None`: timed whole), `timed_lines` the length of its timed part.
fn steady_rounds(
    s: &mut Session,
    d: &Drive,
    split: Option<(u64, u64)>,
    timed_lines: &[String],
    start_host: f64,
) -> Result<Rounds, SuiteError> {
    let opts = s.opts();
    let e = opts.own::<EnduranceOptions>();
    let (qd, jobs) = qd_jobs(opts);
    let rule = SteadyRule::SNIA_PTS;
    let untimed_text = |step: &str, untimed: u64| {
        e.workload
            .text(step, qd, 1, &[format!("io_size={untimed}")])
    };
    let timed_recipe = e.workload.text("round-NN", qd, jobs, timed_lines);
    let recipe = match split {
        None => format!(
            "endurance rounds of {}, at most {}, to steady write IOPS:\n{timed_recipe}",
            e.workload.name(),
            opts.max_rounds,
        ),
        Some((_, untimed)) => format!(
            "endurance rounds of {}, at most {}, to steady write IOPS; each without \
             timing:\n{}then timed:\n{timed_recipe}",
            e.workload.name(),
            opts.max_rounds,
            untimed_text("round-NN-untimed", untimed)
        ),
    };
    s.checkpoint(&recipe, |s| {
        let mut host = start_host;
        let (mut iops_per_round, mut wear_per_round) = (Vec::new(), Vec::new());
        for r in 1..=opts.max_rounds {
            s.round = Some((r, Some(opts.max_rounds)));
            let name = format!("round-{r:02}");
            if let Some((_, untimed)) = split {
                let first = format!("{name}-untimed");
                let what = format!(
                    "the first {}% of round {r}: the {} workload, as the job gives it",
                    100 - opts.round_timed_percent,
                    e.workload.name()
                );
                host += s.untimed_job(&first, &what, &untimed_text(&first, untimed))? as f64;
                s.continue_writes();
            }
            let text = e.workload.text(&name, qd, jobs, timed_lines);
            let run = s.job(&name, &text, &|run| {
                vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
            })?;
            host += written(&run);
            wear_per_round.push(wear(s, d, host));
            iops_per_round.push(iops(&run, DDIR_WRITE));
            let values = &iops_per_round;
            if values.len() >= rule.window
                && check_window(&values[values.len() - rule.window..], &rule).steady
            {
                break;
            }
        }
        Ok(Rounds {
            iops: iops_per_round,
            wear: wear_per_round,
        })
    })
}

/// Read the whole drive sequentially, leave it unpowered `days` at `storage_c`, and read it
/// again: the read bandwidth before and after, the read retries aged data took per 128 KiB
/// read, and whether data was lost (the read stopped with fio's EIO) and how much was read
/// before; unless data was lost, idle [`REFRESH_IDLE_NS`] and read once more.
fn power_off_and_read(
    s: &mut Session,
    days: f64,
    storage_c: f64,
    qd: u32,
) -> Result<Vec<Measure>, SuiteError> {
    let text = |step: &str| {
        format!("[global]\nioengine=libaio\ndirect=1\n\n[{step}]\nrw=read\nbs=128k\niodepth={qd}\nsize=100%\n")
    };
    let health = |s: &Session, field: fn(&HealthLog) -> u64| {
        s.health_log().map_or(0.0, |h| field(&h) as f64)
    };
    let read_bw = |run: &RunResult| bw_bytes_per_s(run, DDIR_READ);
    let step_measures = |run: &RunResult| {
        vec![measure(
            "read_bw_bytes_per_s",
            Unit::BytesPerS,
            read_bw(run),
        )]
    };
    let before = s.job(
        "read-before-power-off",
        &text("read-before-power-off"),
        &step_measures,
    )?;
    let retries_before = health(s, |h| h.read_retries);
    if !s.power_off(days, storage_c) {
        return Err(SuiteError::BadOption {
            option: "--power-off-days",
            value: days.to_string(),
            valid: "a simulated single drive (not a storage system or a real target)".into(),
        });
    }
    // Data past its retention time: the read stops there, as fio's does.
    let (after, lost) = job_through_io_error(
        s,
        "read-after-power-off",
        &text("read-after-power-off"),
        &step_measures,
    )?;
    let reads_after = after
        .jobs
        .iter()
        .map(|j| j.total_ios(DDIR_READ))
        .sum::<u64>() as f64;
    let retries = health(s, |h| h.read_retries) - retries_before;
    // Left idle, the firmware rewrites the aged data it can still read (data refresh), and a
    // third read shows what that gave back.
    let refreshed_before = health(s, |h| h.refreshed_blocks);
    let after_idle = if lost {
        None
    } else {
        s.idle("idle-after-power-off", REFRESH_IDLE_NS);
        Some(s.job("read-after-idle", &text("read-after-idle"), &step_measures)?)
    };
    let mut m = vec![
        measure("power_off_days", Unit::Ratio, days),
        measure("power_off_temperature_c", Unit::Ratio, storage_c),
        measure(
            "read_bw_before_power_off",
            Unit::BytesPerS,
            read_bw(&before),
        ),
        measure("read_bw_after_power_off", Unit::BytesPerS, read_bw(&after)),
        measure(
            "read_retries_per_command_after_power_off",
            Unit::Ratio,
            if reads_after > 0.0 {
                retries / reads_after
            } else {
                0.0
            },
        ),
        measure(
            "data_lost_after_power_off",
            Unit::Count,
            f64::from(u8::from(lost)),
        ),
        measure(
            "read_bytes_after_power_off",
            Unit::Bytes,
            after
                .jobs
                .iter()
                .map(|j| j.io_bytes(DDIR_READ))
                .sum::<u64>() as f64,
        ),
    ];
    if let Some(run) = after_idle {
        m.push(measure(
            "refreshed_blocks_in_idle",
            Unit::Count,
            health(s, |h| h.refreshed_blocks) - refreshed_before,
        ));
        m.push(measure(
            "read_bw_after_idle",
            Unit::BytesPerS,
            read_bw(&run),
        ));
    }
    Ok(m)
}

/// The idle time after power-on in which the firmware refreshes aged data (the 30 minutes
/// of idle the dirty-drive test of docs/reviews.md §1 gives a drive to recover).
const REFRESH_IDLE_NS: u64 = 30 * 60 * 1_000_000_000;

fn value_of(m: &[Measure], family: &str) -> f64 {
    result_value(m, family, &[], None).unwrap_or(0.0)
}

/// Run job `name` (see [`Session::job`]); a job the drive stopped with an I/O error (a write
/// refused as read-only, data that could not be read back) counts as run as far as it got,
/// as fio's does: its result and `true`.
fn job_through_io_error(
    s: &mut Session,
    name: &str,
    text: &str,
    measures: &dyn Fn(&RunResult) -> Vec<Measure>,
) -> Result<(RunResult, bool), SuiteError> {
    match s.job(name, text, measures) {
        Ok(run) => Ok((run, false)),
        Err(SuiteError::Run {
            device,
            step,
            error,
        }) => match *error {
            flashlab_runner::RunError::Io { result, .. } => Ok((*result, true)),
            other => Err(SuiteError::Run {
                device,
                step,
                error: Box::new(other),
            }),
        },
        Err(other) => Err(other),
    }
}

/// Rounds of the workload (`text` gives a round's job) until the drive refuses a write as
/// read-only, or until `limit` x `rated_tbw_bytes` of host writes without that; each round's
/// wear joins `curve`. Returns host bytes written since new (the fill included) at the first
/// grown bad block, at available spare below NVMe's 10% threshold, and at read-only.
fn run_to_read_only(
    s: &mut Session,
    d: &Drive,
    text: &dyn Fn(&str) -> String,
    rated_tbw_bytes: f64,
    curve: &mut Vec<Wear>,
) -> Result<Vec<Measure>, SuiteError> {
    let limit = WEAR_OUT_LIMIT * rated_tbw_bytes;
    let mut host = curve.last().map_or(0.0, |w| w.host_bytes);
    let mut round = 0u32;
    while !curve.last().is_some_and(|w| w.read_only) && host < limit {
        round += 1;
        let name = format!("wear-out-{round:04}");
        // The drive refused a write: the round's result stops there.
        let (run, _) = job_through_io_error(s, &name, &text(&name), &|run| {
            vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
        })?;
        host += written(&run);
        curve.push(wear(s, d, host));
    }
    Ok(wear_out_measures(curve, rated_tbw_bytes))
}

/// Milestones of a wear-out run along `curve` (0 for one not reached).
fn wear_out_measures(curve: &[Wear], rated_tbw_bytes: f64) -> Vec<Measure> {
    let first = |pred: &dyn Fn(&Wear) -> bool| curve.iter().find(|w| pred(w));
    let at = |w: Option<&Wear>| w.map_or(0.0, |w| w.host_bytes);
    let read_only = first(&|w| w.read_only);
    let host_at_read_only = at(read_only);
    vec![
        measure(
            "wear_out_reached",
            Unit::Count,
            f64::from(u8::from(read_only.is_some())),
        ),
        measure(
            "host_bytes_to_first_grown_bad_block",
            Unit::Bytes,
            at(first(&|w| w.grown_bad_blocks > 0)),
        ),
        measure(
            "host_bytes_to_spare_warning",
            Unit::Bytes,
            at(first(&|w| w.available_spare < SPARE_WARNING_PERCENT)),
        ),
        measure("host_bytes_to_read_only", Unit::Bytes, host_at_read_only),
        measure(
            "read_only_over_rated_tbw",
            Unit::Ratio,
            if rated_tbw_bytes > 0.0 {
                host_at_read_only / rated_tbw_bytes
            } else {
                0.0
            },
        ),
        measure(
            "erase_count_avg_at_read_only",
            Unit::Ratio,
            read_only.map_or(0.0, |w| w.erase_avg),
        ),
        measure(
            "grown_bad_blocks_at_read_only",
            Unit::Count,
            read_only.map_or(0.0, |w| w.grown_bad_blocks as f64),
        ),
        measure(
            "power_off_retention_days_at_read_only",
            Unit::Ratio,
            read_only.map_or(0.0, |w| w.retention_days),
        ),
    ]
}

/// What the drive's timed-workload indicators (Intel's SMART E2h-E4h, reset when the measured
/// interval began) say about it, and the endurance a reviewer projects from them: the host
/// bytes of the interval over the share of the rated wear they took. E2h counts whole
/// 1/1024ths of a percent and reads nothing before an hour: `timed_workload_valid` is 0 then,
/// and the wear and projection 0.
fn timed_workload_measures(health: Option<&HealthLog>, host_bytes: f64) -> Vec<Measure> {
    const NOT_YET: f64 = 65535.0;
    let raw = |field: fn(&HealthLog) -> u64| health.map_or(NOT_YET, |h| field(h) as f64);
    let (wear, reads, minutes) = (
        raw(|h| h.timed_workload_media_wear),
        raw(|h| h.timed_workload_host_reads_percent),
        raw(|h| h.timed_workload_minutes),
    );
    let valid = wear != NOT_YET;
    let wear_percent = if valid { wear / 1024.0 } else { 0.0 };
    vec![
        measure("timed_workload_minutes", Unit::Count, minutes),
        measure(
            "timed_workload_valid",
            Unit::Count,
            f64::from(u8::from(valid)),
        ),
        measure(
            "timed_workload_media_wear_percent",
            Unit::Percent,
            wear_percent,
        ),
        measure(
            "timed_workload_host_reads_percent",
            Unit::Percent,
            if valid { reads } else { 0.0 },
        ),
        measure(
            "timed_workload_projected_tbw_bytes",
            Unit::Bytes,
            if wear_percent > 0.0 {
                host_bytes * 100.0 / wear_percent
            } else {
                0.0
            },
        ),
    ]
}

fn retention_chart(curve: &[Wear]) -> Chart {
    Chart {
        id: "endurance-retention".into(),
        title: "Power-off data retention against host data written".into(),
        x: Axis::linear("host data written", Unit::Bytes),
        y: Axis::log("power-off retention (days)", Unit::Ratio),
        series: vec![Series {
            name: "retention at the most worn block (health log)".into(),
            points: curve
                .iter()
                .map(|w| (w.host_bytes, w.retention_days))
                .collect(),
        }],
        band: None,
    }
}

fn spare_chart(curve: &[Wear]) -> Chart {
    Chart {
        id: "endurance-spare".into(),
        title: "Available spare against host data written".into(),
        x: Axis::linear("host data written", Unit::Bytes),
        y: Axis::linear("available spare", Unit::Percent),
        series: vec![Series {
            name: "available spare (health log)".into(),
            points: curve
                .iter()
                .map(|w| (w.host_bytes, w.available_spare))
                .collect(),
        }],
        band: None,
    }
}

/// The health log's wear fields, in row `phase` (`before`, `after`).
fn health(phase: Phase, w: &Wear) -> Vec<Measure> {
    let row = [Coord::Phase(phase)];
    [
        measure("percentage_used", Unit::Percent, w.used_percent),
        measure("percentage_used_log", Unit::Percent, w.used_percent_log),
        measure(
            "media_wearout_indicator",
            Unit::Count,
            w.wearout_indicator(),
        ),
        measure("available_spare", Unit::Percent, w.available_spare),
        measure("erase_count_min", Unit::Count, f64::from(w.erase_min)),
        measure("erase_count_avg", Unit::Ratio, w.erase_avg),
        measure("erase_count_max", Unit::Count, f64::from(w.erase_max)),
        measure("power_off_retention_days", Unit::Ratio, w.retention_days),
    ]
    .into_iter()
    .map(|m| m.under(&row))
    .collect()
}

/// Wear rate over the measured interval (`before` → `after`) and what it projects.
fn results(
    d: &Drive,
    duty_cycle: f64,
    start: &Wear,
    before: &Wear,
    after: &Wear,
    measured_iops: f64,
) -> Vec<Measure> {
    let host = after.host_bytes - before.host_bytes;
    let nand = after.nand_bytes - before.nand_bytes;
    let secs = (after.sim_ns - before.sim_ns) / NS_PER_S as f64;
    let wa = if host > 0.0 { nand / host } else { 0.0 };
    // Erases and host bytes of a slice both scale with its capacity: the rate per host byte
    // is the drive's.
    let slice_host = host / d.capacity_factor;
    let erases = after.erase_sum.saturating_sub(before.erase_sum) as f64;
    let erases_per_gb = if slice_host > 0.0 {
        erases / slice_host * 1e9
    } else {
        0.0
    };
    let used_per_tb = if host > 0.0 {
        (after.used_percent - before.used_percent) / (host / 1e12)
    } else {
        0.0
    };
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let tbw = if positive(used_per_tb) {
        100.0 / used_per_tb * 1e12
    } else {
        0.0
    };
    let remaining = if positive(used_per_tb) {
        (100.0 - after.used_percent).max(0.0) / used_per_tb * 1e12
    } else {
        0.0
    };
    let bw = if secs > 0.0 { host / secs } else { 0.0 };
    let per_day = bw * SECONDS_PER_DAY * duty_cycle;
    let rated = if wa > 0.0 {
        d.native_raw_bytes * d.pe_cycles / wa
    } else {
        0.0
    };
    let mut m = vec![
        measure("write_iops", Unit::Iops, measured_iops),
        measure("write_bw_bytes_per_s", Unit::BytesPerS, bw),
        measure("measured_host_bytes", Unit::Bytes, host),
        measure("measured_nand_bytes", Unit::Bytes, nand),
        measure("write_amplification", Unit::Ratio, wa),
        measure("block_erases_per_host_gb", Unit::Ratio, erases_per_gb),
        measure("percentage_used_per_tb", Unit::Ratio, used_per_tb),
        measure("projected_tbw_bytes", Unit::Bytes, tbw),
        measure("rated_pe_tbw_bytes", Unit::Bytes, rated),
        measure("remaining_tbw_bytes", Unit::Bytes, remaining),
        measure(
            "dwpd_at_duty_cycle",
            Unit::Ratio,
            if d.user_bytes > 0.0 {
                per_day / d.user_bytes
            } else {
                0.0
            },
        ),
        measure(
            "years_to_100_percent_used",
            Unit::Ratio,
            if per_day > 0.0 {
                remaining / per_day / DAYS_PER_YEAR
            } else {
                0.0
            },
        ),
        measure(
            "dwpd_for_5_years",
            Unit::Ratio,
            if d.user_bytes > 0.0 {
                tbw / (d.user_bytes * DAYS_PER_YEAR * 5.0)
            } else {
                0.0
            },
        ),
    ];
    m.extend(health("before", start));
    m.extend(health("after", after));
    m
}

fn wear_chart(curve: &[Wear]) -> Chart {
    Chart {
        id: "endurance-wear".into(),
        title: "Percentage used against host data written".into(),
        x: Axis::linear("host data written", Unit::Bytes),
        y: Axis::linear("percentage used", Unit::Percent),
        series: vec![
            Series {
                name: "average erases / rated P/E".into(),
                points: curve
                    .iter()
                    .map(|w| (w.host_bytes, w.used_percent))
                    .collect(),
            },
            Series {
                name: "health log (whole percent)".into(),
                points: curve
                    .iter()
                    .map(|w| (w.host_bytes, w.used_percent_log))
                    .collect(),
            },
        ],
        band: None,
    }
}

/// `endurance`: wear rate and projected endurance of a workload.
pub(crate) struct Endurance;

impl Suite for Endurance {
    fn name(&self) -> &'static str {
        "endurance"
    }
    fn summary(&self) -> &'static str {
        "a workload to steady state, then WA, wear rate, health log and projected TBW/DWPD"
    }
    fn reads_runtime(&self) -> bool {
        false
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Description
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <EnduranceArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        flashlab_kit::suite::parse_args::<EnduranceArgs>(m)?.apply(o.own_mut())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        Some(("endurance", o.own::<EnduranceOptions>().to_json()))
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[ENDURANCE_HEALTH]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        run(s)
    }
}

// The grids it lays its results out in.
const ENDURANCE_HEALTH: GridSpec = GridSpec {
    title: "Health log before and after the workload",
    row_header: "field",
    dims: &[Dim::Phase],
    cols: Cols::Families(&[
        ("before", Coord::Phase("before")),
        ("after", Coord::Phase("after")),
    ]),
    row_label: values,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn w(host: f64, nand: f64, erase_sum: u64, used: f64, sim_s: f64) -> Wear {
        Wear {
            host_bytes: host,
            nand_bytes: nand,
            erase_sum,
            erase_min: 0,
            erase_avg: used * 30.0,
            erase_max: 0,
            used_percent: used,
            used_percent_log: used.floor(),
            available_spare: 100.0,
            grown_bad_blocks: 0,
            read_only: false,
            retention_days: 3652.5,
            sim_ns: sim_s * 1e9,
        }
    }

    fn value(m: &[Measure], key: &str) -> f64 {
        m.iter().find(|x| x.key() == key).unwrap().value
    }

    #[test]
    fn projections_follow_the_wear_rate() {
        let d = Drive {
            pe_cycles: 3000.0,
            iu_bytes: 4096.0,
            capacity_factor: 1.0,
            user_bytes: 1e12,
            native_raw_bytes: 1.1e12,
        };
        let start = w(0.0, 0.0, 0, 0.0, 0.0);
        // 2 TB written in 20,000 s at WA 3: 0.2 % used.
        let before = w(1e12, 3e12, 1000, 0.1, 10_000.0);
        let after = w(3e12, 9e12, 3000, 0.3, 30_000.0);
        let m = results(&d, 0.5, &start, &before, &after, 1.0);
        assert!((value(&m, "write_amplification") - 3.0).abs() < 1e-12);
        assert!((value(&m, "percentage_used_per_tb") - 0.1).abs() < 1e-12);
        // 100 % at 0.1 %/TB: 1000 TB; 970 TB remain after 0.3 %.
        assert!((value(&m, "projected_tbw_bytes") - 1e15).abs() < 1.0);
        assert!((value(&m, "remaining_tbw_bytes") - 0.997e15).abs() < 1.0);
        // 1e8 B/s × 86400 s × 0.5 = 4.32 TB a day on a 1 TB drive.
        assert!((value(&m, "dwpd_at_duty_cycle") - 4.32).abs() < 1e-9);
        let years = 0.997e15 / 4.32e12 / 365.25;
        assert!((value(&m, "years_to_100_percent_used") - years).abs() < 1e-9);
        assert!((value(&m, "rated_pe_tbw_bytes") - 1.1e15).abs() < 1.0);
        assert_eq!(value(&m, "before_media_wearout_indicator"), 100.0);
        assert_eq!(value(&m, "after_media_wearout_indicator"), 100.0);
        assert_eq!(value(&m, "before_available_spare"), 100.0);
        assert_eq!(value(&m, "after_available_spare"), 100.0);
    }

    #[test]
    fn wearout_indicator_counts_down_to_one() {
        assert_eq!(w(0.0, 0.0, 0, 0.0, 0.0).wearout_indicator(), 100.0);
        assert_eq!(w(0.0, 0.0, 0, 1.0, 0.0).wearout_indicator(), 99.0);
        assert_eq!(w(0.0, 0.0, 0, 150.0, 0.0).wearout_indicator(), 1.0);
    }

    #[test]
    fn builtin_workloads_parse_as_fio_jobs() {
        for name in ["jedec-enterprise", "random-4k", "sequential"] {
            let wl = EnduranceWorkload::builtin(name).unwrap();
            let text = wl.text("x", 32, 1, &["io_size=1m".to_string()]);
            let file = flashlab_workload::parse_str(&text, "x.fio", &|_| None).unwrap();
            assert_eq!(file.jobs.len(), 1, "{name}");
        }
        assert!(EnduranceWorkload::builtin("jedec").is_none());
        let o = EnduranceOptions {
            duty_cycle: 0.0,
            ..Default::default()
        };
        assert!(o
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--duty-cycle"));
    }

    /// A forged cache entry of endurance rounds is refused at load: wear records that do
    /// not match the rounds, an IOPS figure that is no number, a wear time below zero.
    #[test]
    fn forged_endurance_rounds_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let real = || Rounds {
            iops: vec![1000.0, 900.0],
            wear: vec![w(1e9, 2e9, 10, 1.0, 1.0), w(2e9, 4e9, 20, 2.0, 2.0)],
        };
        reload_into(&real(), &mut Rounds::default()).unwrap();
        type Forge<'a> = (&'a str, &'a dyn Fn(&mut Rounds));
        let cases: [Forge; 3] = [
            ("2 IOPS figures and 1 wear records", &|f| {
                f.wear.pop();
            }),
            ("rounds' IOPS: entry 1 is NaN", &|f| f.iops[1] = f64::NAN),
            ("round 0's wear: entry 4 is -1", &|f| {
                f.wear[0].sim_ns = -1.0
            }),
        ];
        for (want, forge) in cases {
            let mut forged = real();
            forge(&mut forged);
            let e = reload_into(&forged, &mut Rounds::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
