//! Options of the wsat, recovery and endurance suites, and how they become
//! [`flashlab_suite::SuiteOptions`].

use std::path::Path;

use anyhow::{anyhow, bail};
use flashlab_suite::{
    EnduranceWorkload, PreconditionKind, PreconditionOptions, RecoveryVariant, RoundLength,
    SuiteOptions,
};

const NS_PER_S: f64 = 1e9;
/// Longest simulated time an option may ask for: a year.
const MAX_SECONDS: f64 = 365.0 * 86_400.0;

#[derive(clap::Args, Debug)]
pub struct SuiteTestArgs {
    /// wsat: host data to write, in multiples of the user capacity (SNIA PTS: 4).
    #[arg(long, default_value_t = 4.0)]
    write_multiple: f64,
    /// wsat: one measured interval: a share of the capacity (4% = 1/25), a size (8GiB) or a
    /// simulated time (60s).
    #[arg(long, default_value = "4%")]
    interval: String,
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
    /// endurance: jedec-enterprise, random-4k, sequential or a fio job file.
    #[arg(long, default_value = "jedec-enterprise")]
    workload: String,
    /// endurance: share of the day spent writing at the measured rate (0 to 1).
    #[arg(long, default_value_t = 1.0)]
    duty_cycle: f64,
    /// endurance: the measured interval after steady state: a share of the capacity, a size
    /// or a simulated time.
    #[arg(long, default_value = "100%")]
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
    /// write-pressure: write sizes, one sweep each, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "8k,16k")]
    write_bs: Vec<String>,
    /// write-pressure: first write-bandwidth target (100MB = 10^8 bytes/s).
    #[arg(long, default_value = "100MB")]
    start: String,
    /// write-pressure: step between write-bandwidth targets.
    #[arg(long, default_value = "50MB")]
    step: String,
    /// write-pressure: queue depth of the 4 KiB random reader; noisy-neighbor: quiet readers
    /// run at depths 1 to this.
    #[arg(long, default_value_t = 4)]
    read_qd: u32,
    /// noisy-neighbor: read share (percent) of the neighbours' 4 KiB random mix (0: writes).
    #[arg(long, default_value_t = 30)]
    neighbor_rwmixread: u32,
    /// app-profiles, write-pressure, noisy-neighbor, oltp: `pts` (purge, 2x sequential fill, random
    /// rounds to steady state) or `showdown` (purge, 64 KiB sequential surface fill,
    /// --seq-time of 64 KiB sequential writes, --random-time of 4 KiB random writes over
    /// --span).
    #[arg(long, default_value = "pts")]
    precondition: String,
    /// app-profiles, write-pressure, oltp (--precondition showdown): the tests' partition, the first
    /// PCT% of the LBAs; the rest keeps the surface fill's data; noisy-neighbor: 100 only (its
    /// namespaces divide the drive).
    #[arg(long, default_value = "100", value_name = "PCT")]
    span: String,
    /// --precondition showdown: simulated time of 64 KiB sequential writes after the surface
    /// fill (0: none); on a slice scaled with it (docs/scale.md).
    #[arg(long, default_value = "1h", value_name = "TIME")]
    seq_time: String,
    /// --precondition showdown: simulated time of 4 KiB random writes over --span.
    #[arg(long, default_value = "1h", value_name = "TIME")]
    random_time: String,
}

/// Simulated seconds as ns, or an error naming the option.
fn seconds_ns(option: &str, seconds: f64) -> anyhow::Result<u64> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_SECONDS) {
        bail!("{option} {seconds}: expected a time above 0 and at most a year");
    }
    Ok((seconds * NS_PER_S).round().max(1.0) as u64)
}

fn minutes_ns(option: &str, minutes: &[f64]) -> anyhow::Result<Vec<u64>> {
    minutes
        .iter()
        .map(|&m| {
            seconds_ns(option, m * 60.0).map_err(|_| {
                anyhow!("{option} {m}: expected minutes above 0 and at most a year, e.g. 20,60")
            })
        })
        .collect()
}

/// A length (`4%`, `8GiB`, `60s`) of `option`.
fn length(option: &'static str, text: &str) -> anyhow::Result<RoundLength> {
    Ok(RoundLength::parse_for(option, text)?)
}

fn workload(text: &str) -> anyhow::Result<EnduranceWorkload> {
    if let Some(w) = EnduranceWorkload::builtin(text) {
        return Ok(w);
    }
    let path = Path::new(text);
    if !(text.ends_with(".fio") || path.is_file()) {
        bail!("--workload '{text}': expected jedec-enterprise, random-4k, sequential or a fio job file");
    }
    let job = flashlab_engine::input::read_text(
        path,
        flashlab_engine::input::MAX_JOB_FILE_BYTES,
        "a job file",
    )
    .map_err(|e| anyhow!("--workload '{text}': cannot read the job file: {e}"))?;
    Ok(EnduranceWorkload::Job {
        name: text.to_string(),
        text: job,
    })
}

impl SuiteTestArgs {
    /// Set the options of these suites in `o`; an error is bad input.
    pub fn apply(&self, o: &mut SuiteOptions) -> anyhow::Result<()> {
        o.wsat.write_multiple = self.write_multiple;
        o.wsat.interval = length("--interval", &self.interval)?;
        let r = &mut o.recovery;
        r.variant = RecoveryVariant::parse(&self.variant)?;
        r.dirty_ns = minutes_ns("--dirty-minutes", &self.dirty_minutes)?;
        r.idle_ns = minutes_ns("--idle-minutes", &self.idle_minutes)?;
        r.probe_ns = seconds_ns("--probe-seconds", self.probe_seconds)?;
        r.hir_bursts = self.hir_bursts;
        r.hir_burst_ns = seconds_ns("--hir-burst-seconds", self.hir_burst_seconds)?;
        r.hir_idle_multiples = self.hir_idle_multiples.clone();
        r.hir_baseline_ns = seconds_ns("--hir-baseline-seconds", self.hir_baseline_seconds)?;
        let e = &mut o.endurance;
        e.workload = workload(&self.workload)?;
        e.duty_cycle = self.duty_cycle;
        e.measure = length("--measure", &self.measure)?;
        e.until_read_only = self.until_read_only;
        e.power_off_days = self.power_off_days;
        e.storage_c = self.storage_temp;
        let t = &mut o.tenants;
        t.write_bs_bytes = self
            .write_bs
            .iter()
            .map(|b| flashlab_suite::parse_size("--write-bs", b))
            .collect::<Result<_, _>>()?;
        t.start_bytes_per_s = flashlab_suite::parse_size("--start", &self.start)?;
        t.step_bytes_per_s = flashlab_suite::parse_size("--step", &self.step)?;
        t.read_qd = self.read_qd;
        t.neighbor_rwmixread = self.neighbor_rwmixread;
        o.precondition = PreconditionOptions {
            kind: PreconditionKind::parse(&self.precondition)?,
            span_percent: PreconditionOptions::parse_span(&self.span)?,
            seq_ns: flashlab_suite::parse_time("--seq-time", &self.seq_time)?,
            random_ns: flashlab_suite::parse_time("--random-time", &self.random_time)?,
        };
        Ok(())
    }
}
