//! `placement`: what host data placement buys a flash cache. Two write streams share the
//! drive as a flash cache's two engines do: small objects written at random over a small
//! region (a set-associative cache of 4 KiB buckets) and large objects appended to a log that
//! wraps round (a log-structured cache), with 4 KiB random reads of cached data beside them.
//! The cache uses a share of the drive (its utilisation; the rest is never written), swept
//! from half the drive to all of it. On a drive with Flexible Data Placement the streams are
//! written once through one reclaim unit handle and once through a handle each; on a zoned
//! drive the host places each stream in zones of its own, resetting a zone before it writes
//! it again. Per point: the device-level write amplification (NAND writes per host write),
//! the host's write bandwidth and the reads' latency tail.
//!
//! Nothing here knows the answer: DLWA falls with a handle per stream because the log's
//! reclaim units then hold only log data, which dies whole when the log wraps, and the
//! small objects' units are the only ones garbage collection copies out of.

use flashlab_device::config::DieCut;
use flashlab_device::values::ScaleSetting;
use flashlab_device::{ConfigError, DeviceConfig, Model, Ssd};
use flashlab_engine::{SeedTree, NS_PER_S};
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};
use serde_json::json;

use flashlab_kit::grids::{values, Cols, GridSpec, P99, P99_9};
use flashlab_kit::measure::{LocalAxis, LocalCoord};
use flashlab_kit::session::{wa_between, Session};
use flashlab_kit::steps::measure;
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::FreshDevice;
use flashlab_kit::{Axis, Chart, Coord, Dim, Series, SuiteError, SuiteOptions, Unit};

/// Most utilisation points.
const MAX_POINTS: usize = 16;
/// Queue depth of each stream: a power of two, so a slice with 1/2, 1/4, ... 1/16 of the dies
/// gives each die the queue it has on the drive.
const STREAM_QD: u32 = 16;
/// Size of the small objects' writes and of the reads: CacheLib's default bucket.
const SMALL_BS: u64 = 4096;
/// Size of the log's writes.
const LOG_BS: u64 = 1 << 20;
/// Least zones of each stream on a zoned drive: with one, every zone reset would empty the
/// stream's whole region.
const MIN_STREAM_ZONES: u64 = 2;

/// How the two streams are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Both streams through placement identifier 0: the drive places them together.
    OneHandle,
    /// The small objects through identifier 0, the log through identifier 1.
    PerStream,
    /// A zoned drive: each stream in zones of its own (fio's `zonemode=zbd`).
    Zones,
}

impl Placement {
    fn name(self) -> &'static str {
        match self {
            Placement::OneHandle => "one_handle",
            Placement::PerStream => "per_stream",
            Placement::Zones => "zones",
        }
    }
    /// Reclaim unit handles the placement writes through (a zoned drive has none).
    fn handles(self) -> u32 {
        match self {
            Placement::OneHandle | Placement::Zones => 1,
            Placement::PerStream => 2,
        }
    }
    fn label(self) -> &'static str {
        match self {
            Placement::OneHandle => "one handle",
            Placement::PerStream => "handle per stream",
            Placement::Zones => "zones per stream",
        }
    }
}

/// Options of the `placement` suite.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementOptions {
    /// Shares of the drive's capacity the cache uses (above the small region, at most 1).
    pub utilisations: Vec<f64>,
    /// Share of the drive's capacity the small objects' region takes (CacheLib on FDP: 4%).
    pub small_region: f64,
    /// Share of the host's written bytes that are small objects.
    pub small_writes: f64,
    /// Host write rate of both streams together on the whole drive, bytes/s; `None`: an
    /// eighth of the drive's sequential write bound (so even a DLWA of 4 leaves the media
    /// half its program bandwidth).
    pub write_rate: Option<u64>,
    /// The windows, before the measured one and the measured one.
    pub windows: Windows,
    /// With `sim.scale = "auto"`: the smallest slice holding this many user bytes (and every
    /// die cut the streams' queues share evenly); an explicit `sim.scale` is kept.
    pub slice_bytes: u64,
}

impl Default for PlacementOptions {
    fn default() -> Self {
        Self {
            utilisations: vec![0.5, 0.75, 0.9, 1.0],
            small_region: 0.04,
            small_writes: 0.5,
            write_rate: None,
            windows: Windows::Passes {
                warmup: 3.0,
                measure: 1.0,
            },
            slice_bytes: 32 << 30,
        }
    }
}

/// How long the warm-up and the measured window are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Windows {
    /// In passes: the time in which the log writes its region once over and the small
    /// objects write theirs at least once over (`--warmup-passes`, `--measure-passes`). Both
    /// streams overwrite what they wrote a pass earlier, so the drive's state repeats pass
    /// by pass once the log has wrapped a few times: the steady state is a number of passes,
    /// whatever the utilisation and the streams' shares.
    Passes { warmup: f64, measure: f64 },
    /// In writes of the whole cache's region by both streams together (`--warmup-writes`,
    /// `--measure-writes`): how many passes of the log that is depends on the utilisation.
    RegionWrites { warmup: f64, measure: f64 },
}

// `placement`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct PlacementArgs {
    /// placement: shares of the drive the cache uses, percent, comma-separated.
    #[arg(
        long = "utilisation",
        value_delimiter = ',',
        default_value = "50,75,90,100"
    )]
    utilisation: Vec<f64>,
    /// placement: the small objects' region, percent of the drive.
    #[arg(long = "small-region", default_value = "4")]
    small_region: f64,
    /// placement: the small objects' share of the bytes written, percent.
    #[arg(long = "small-writes", default_value = "50")]
    small_writes: f64,
    /// placement: host write rate of both streams on the whole drive, MB/s; default: an
    /// eighth of the drive's sequential write bound.
    #[arg(long = "write-rate")]
    write_rate: Option<f64>,
    /// placement: passes of the log (each at least one write of the small objects' region)
    /// before the measured window.
    #[arg(long = "warmup-passes", default_value = "3")]
    warmup_passes: f64,
    /// placement: passes of the log in the measured window.
    #[arg(long = "measure-passes", default_value = "1")]
    measure_passes: f64,
    /// placement: instead of passes, times the whole cache's region is written (both
    /// streams together) before the measured window; needs --measure-writes.
    #[arg(long = "warmup-writes", requires = "measure_writes", conflicts_with_all = ["warmup_passes", "measure_passes"])]
    warmup_writes: Option<f64>,
    /// placement: instead of passes, times the cache's region is written in the measured
    /// window; needs --warmup-writes.
    #[arg(long = "measure-writes", requires = "warmup_writes")]
    measure_writes: Option<f64>,
    /// placement: with sim.scale = "auto", the slice's user capacity (at least).
    #[arg(long = "slice", default_value = "32GiB")]
    slice: String,
}

impl PlacementArgs {
    fn apply(&self, o: &mut PlacementOptions) -> Result<(), SuiteError> {
        o.utilisations = self.utilisation.iter().map(|p| p / 100.0).collect();
        o.small_region = self.small_region / 100.0;
        o.small_writes = self.small_writes / 100.0;
        o.write_rate = match self.write_rate {
            None => None,
            Some(mb) if mb.is_finite() && mb > 0.0 && mb < 1e9 => Some((mb * 1e6) as u64),
            Some(mb) => {
                return Err(SuiteError::BadOption {
                    option: "--write-rate",
                    value: mb.to_string(),
                    valid: "a rate in MB/s above zero".into(),
                })
            }
        };
        o.windows = match (self.warmup_writes, self.measure_writes) {
            (Some(warmup), Some(measure)) => Windows::RegionWrites { warmup, measure },
            _ => Windows::Passes {
                warmup: self.warmup_passes,
                measure: self.measure_passes,
            },
        };
        o.slice_bytes = flashlab_kit::lengths::parse_size("--slice", &self.slice)?;
        Ok(())
    }
}

impl flashlab_kit::options::OwnOptions for PlacementOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        PlacementOptions::validate(self)
    }
}

impl PlacementOptions {
    pub fn validate(&self) -> Result<(), SuiteError> {
        let bad = |option: &'static str, value: String, valid: &str| SuiteError::BadOption {
            option,
            value,
            valid: valid.to_string(),
        };
        if !(self.small_region > 0.0 && self.small_region <= 0.5) {
            return Err(bad(
                "--small-region",
                (self.small_region * 100.0).to_string(),
                "a share of the drive above 0 and at most 50 (percent)",
            ));
        }
        if self.utilisations.is_empty()
            || self.utilisations.len() > MAX_POINTS
            || self
                .utilisations
                .iter()
                .any(|u| !(u.is_finite() && *u >= 2.0 * self.small_region && *u <= 1.0))
        {
            return Err(bad(
                "--utilisation",
                self.utilisations
                    .iter()
                    .map(|&u| (u * 100.0).to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                &format!(
                    "1 to {MAX_POINTS} percentages of the drive, each at most 100 and at least twice --small-region ({}), e.g. 50,75,90,100",
                    self.small_region * 100.0
                ),
            ));
        }
        if let Some((i, u)) = flashlab_kit::options::repeated(&self.utilisations, |&u| util_key(u))
        {
            return Err(flashlab_kit::options::repeated_error(
                "--utilisation",
                (u * 100.0).to_string(),
                i,
            ));
        }
        if !(self.small_writes > 0.0 && self.small_writes < 1.0) {
            return Err(bad(
                "--small-writes",
                (self.small_writes * 100.0).to_string(),
                "a share of the bytes written above 0 and below 100 (percent)",
            ));
        }
        let (names, (warmup, measure), unit) = match self.windows {
            Windows::Passes { warmup, measure } => (
                ["--warmup-passes", "--measure-passes"],
                (warmup, measure),
                "passes of the log",
            ),
            Windows::RegionWrites { warmup, measure } => (
                ["--warmup-writes", "--measure-writes"],
                (warmup, measure),
                "region writes",
            ),
        };
        for (option, v) in names.into_iter().zip([warmup, measure]) {
            if !(v.is_finite() && v > 0.0 && v <= 100.0) {
                return Err(bad(
                    option,
                    v.to_string(),
                    &format!("a number of {unit} above 0, at most 100"),
                ));
            }
        }
        if self.slice_bytes < (64 << 20) {
            return Err(bad(
                "--slice",
                self.slice_bytes.to_string(),
                "a size of at least 64MiB",
            ));
        }
        Ok(())
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        json!({
            "utilisations": self.utilisations,
            "small_region": self.small_region,
            "small_writes": self.small_writes,
            "write_rate_bytes_per_s": self.write_rate,
            "windows": match self.windows {
                Windows::Passes { warmup, measure } =>
                    json!({"warmup_passes": warmup, "measure_passes": measure}),
                Windows::RegionWrites { warmup, measure } =>
                    json!({"warmup_writes": warmup, "measure_writes": measure}),
            },
            "slice_bytes": self.slice_bytes,
        })
    }
}

/// A utilisation as a whole number of tenths of a percent (`0.905` → 905).
fn util_key(u: f64) -> u64 {
    (u * 1000.0).round() as u64
}

fn util_text(words: &[u64; 4]) -> String {
    let (whole, tenth) = (words[0] / 10, words[0] % 10);
    if tenth == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{tenth}")
    }
}

/// The cache's share of the drive, in tenths of a percent.
pub(crate) const UTILISATION_AXIS: LocalAxis = LocalAxis {
    name: "utilisation",
    dim: Dim::Load,
    key: |w| format!("util{}", util_text(w).replace('.', "_")),
    value: |w| format!("{}%", util_text(w)),
    tidy: |w| vec![("load", util_text(w))],
};

fn util_coord(u: f64) -> Coord {
    Coord::Local(LocalCoord::new(&UTILISATION_AXIS, [util_key(u), 0, 0, 0]))
}

fn row(p: Placement, u: f64) -> [Coord; 2] {
    [Coord::Phase(p.name()), util_coord(u)]
}

/// The drive the suite runs for a placement writing through `handles` reclaim unit handles:
/// the description as given when it has zones; otherwise with FDP turned on if it is not
/// (with what FDP is modelled with: power-loss protection, no SLC cache, no compression) and
/// with the handles the placement writes through. A handle the host never writes holds no
/// reclaim unit on the drive, so a drive of 8 handles written through 2 is a drive of 2; but
/// a slice's user capacity is sized with every handle's open block held (docs/scale.md,
/// "User capacity keeps the drive's effective spare"), so the 6 unwritten ones would give
/// the slice their blocks as spare the drive does not have.
///
/// On `sim.scale = "auto"` the smallest slice of at least `slice_bytes` that keeps every die,
/// as the small objects' random writes are refused on a die cut (docs/scale.md, "A die cut
/// keeps the answer or is not made"); with `sim.die_cut = "allow"` the smallest whose die
/// cut the streams' queues share evenly. An explicit `sim.scale` is kept.
fn suite_drive(
    config: &DeviceConfig,
    slice_bytes: u64,
    handles: u32,
) -> Result<DeviceConfig, SuiteError> {
    let mut c = config.clone();
    if !c.zns.enabled {
        if !c.fdp.enabled {
            c.fdp.enabled = true;
            c.buffer.plp = true;
            c.slc_cache.dynamic = false;
            c.slc_cache.static_size = flashlab_device::values::Size(0);
            c.controller.compression_granule = None;
        }
        c.fdp.handles = handles;
    }
    let auto = resolve(&c)?;
    if c.sim.scale != ScaleSetting::Auto {
        return Ok(c);
    }
    let auto_share = 1.0 / auto.scale.capacity_factor;
    let share = slice_bytes as f64 / auto.full_user_bytes.max(1) as f64;
    let at = |w: f64| {
        let mut s = c.clone();
        s.sim.scale = ScaleSetting::Fraction((w * 1e4).ceil() / 1e4);
        s.resolve().ok().map(|m| (s, m))
    };
    if c.sim.die_cut != DieCut::Allow {
        // Blocks per plane are cut before dies: every share from the smallest that keeps
        // every die up keeps them.
        let Some(all) = auto.scale.all_dies_scale else {
            return Ok(c);
        };
        let w = all.max(share);
        return Ok(match at(w) {
            Some((s, _)) if w < auto_share => s,
            _ => c,
        });
    }
    let mut w = share;
    while w < auto_share {
        if let Some((s, m)) = at(w) {
            let per_die = f64::from(STREAM_QD) / m.scale.die_factor;
            if m.scale.die_factor <= f64::from(STREAM_QD)
                && (per_die - per_die.round()).abs() < 1e-9
            {
                return Ok(s);
            }
        }
        w *= 1.25;
    }
    Ok(c)
}

fn resolve(c: &DeviceConfig) -> Result<Model, SuiteError> {
    c.resolve().map_err(|e| key_error(c, e))
}

/// A key of the suite's drive its model refuses.
fn key_error(c: &DeviceConfig, e: flashlab_device::model::KeyError) -> SuiteError {
    SuiteError::Device {
        device: c.name.clone(),
        error: Box::new(ConfigError::Invalid {
            origin: c.name.clone(),
            key: e.key,
            value: e.value,
            message: e.message,
            valid: e.valid,
        }),
    }
}

/// One point's job file (without its runtime): the small objects, the log and the reads, on
/// the whole drive's terms (a slice scales the rates and regions).
fn job_file(
    o: &PlacementOptions,
    p: Placement,
    u: f64,
    rate: u64,
    zones: Option<(u64, u32)>,
) -> String {
    let region_pct = |from: f64, to: f64| {
        (
            format!("{:.6}%", from * 100.0),
            format!("{:.6}%", (to - from) * 100.0),
        )
    };
    // The regions as shares of the drive: on a zoned drive whole zones, each range half a
    // zone inside its zone boundaries (fio rounds a zoned range's start up and its end down).
    let (small, log, reads) = match zones {
        None => (
            region_pct(0.0, o.small_region),
            region_pct(o.small_region, u),
            region_pct(0.0, u),
        ),
        Some((z, _)) => {
            let zf = z as f64;
            let k = ((o.small_region * zf).round() as u64).max(MIN_STREAM_ZONES);
            let end = ((u * zf).floor() as u64).max(k + MIN_STREAM_ZONES);
            let at = |zone: f64| (zone / zf).min(1.0);
            (
                region_pct(0.0, at(k as f64 + 0.5)),
                region_pct(at(k as f64 - 0.5), at(end as f64 + 0.5)),
                region_pct(0.0, at(end as f64 + 0.5)),
            )
        }
    };
    let small_rate = (rate as f64 * o.small_writes) as u64;
    let log_rate = rate - small_rate;
    let read_iops = (small_rate / SMALL_BS).max(1);
    let mut t = String::from("[global]\nioengine=libaio\ndirect=1\ntime_based=1\n");
    t.push_str(&format!("iodepth={STREAM_QD}\n"));
    if zones.is_some() {
        t.push_str("zonemode=zbd\n");
    }
    let (small_plid, log_plid) = match p {
        Placement::OneHandle => (Some(0), Some(0)),
        Placement::PerStream => (Some(0), Some(1)),
        Placement::Zones => (None, None),
    };
    let plid = |id: Option<u32>| match id {
        Some(i) => format!("fdp=1\nplids={i}\n"),
        None => String::new(),
    };
    let small_zone_limit = match zones {
        Some((_, max_open)) if max_open > 1 => format!("job_max_open_zones={}\n", max_open - 1),
        _ => String::new(),
    };
    t.push_str(&format!(
        "\n[small-objects]\nrw=randwrite\nnorandommap=1\nbs={SMALL_BS}\noffset={}\nsize={}\nrate={small_rate}\n{}{small_zone_limit}",
        small.0,
        small.1,
        plid(small_plid)
    ));
    t.push_str(&format!(
        "\n[log]\nrw=write\nbs={LOG_BS}\noffset={}\nsize={}\nrate={log_rate}\n{}",
        log.0,
        log.1,
        plid(log_plid)
    ));
    t.push_str(&format!(
        "\n[reads]\nrw=randread\nbs={SMALL_BS}\noffset={}\nsize={}\nrate_iops={read_iops}\n",
        reads.0, reads.1
    ));
    t
}

/// The drive time of a window of `length` (in the unit of `o.windows`) at utilisation `u` of
/// `capacity` bytes and `rate` bytes/s of both streams: a pass is the longer of the log's
/// time to write its region once (`u` less the small objects' region) and the small
/// objects' time to write theirs once.
fn window_ns(o: &PlacementOptions, u: f64, capacity: u64, rate: u64, length: f64) -> u64 {
    let (cap, rate) = (capacity as f64, rate as f64);
    let secs = match o.windows {
        Windows::Passes { .. } => {
            let log = (u - o.small_region) * cap / (rate * (1.0 - o.small_writes));
            let small = o.small_region * cap / (rate * o.small_writes);
            length * log.max(small)
        }
        Windows::RegionWrites { .. } => u * cap * length / rate,
    };
    (secs * NS_PER_S as f64) as u64
}

/// The job file with its runtime: a window of `length` (see [`window_ns`]).
fn timed_job_file(
    o: &PlacementOptions,
    p: Placement,
    u: f64,
    capacity: u64,
    rate: u64,
    length: f64,
    zones: Option<(u64, u32)>,
) -> String {
    let runtime_ns = window_ns(o, u, capacity, rate, length);
    let text = job_file(o, p, u, rate, zones);
    text.replacen(
        "time_based=1\n",
        &format!("time_based=1\nruntime={}ns\n", runtime_ns.max(1)),
        1,
    )
}

/// What one point measured.
struct PointOutcome {
    dlwa: f64,
    /// With a handle per stream: the small objects' own DLWA, every GC copy counted as
    /// theirs (see [`small_dlwa`]).
    small_dlwa: Option<f64>,
    write_bw: f64,
    read_p99: Option<f64>,
    read_p99_9: Option<f64>,
}

/// The small objects' own device write amplification on a drive where they have a handle of
/// their own: NAND writes per small-object host write, every GC copy of the window counted as
/// theirs, `1 + (dlwa - 1) x (small + log) / small` in the measured window's host bytes.
/// With a handle per stream GC copies (nearly) only their data, the log's reclaim units dying
/// whole, so this is the quantity Allison et al.'s Theorem 1 (EuroSys 2025, §4.2 and
/// Appendix A) models, independent of the share of the bytes the small objects write; the
/// drive's DLWA lies between 1 and it, whatever that share.
fn small_dlwa(run: &RunResult, dlwa: f64) -> Option<f64> {
    let small = run.jobs.first()?.io_bytes(DDIR_WRITE) as f64;
    let log = run.jobs.get(1)?.io_bytes(DDIR_WRITE) as f64;
    (small > 0.0).then(|| 1.0 + (dlwa - 1.0).max(0.0) * (small + log) / small)
}

fn read_percentile(run: &RunResult, p: f64) -> Option<f64> {
    let job = run.jobs.get(2)?;
    job.clat_percentiles_ns(DDIR_READ)
        .iter()
        .find(|(q, _)| (q - p).abs() < 1e-9)
        .map(|&(_, v)| v as f64)
}

pub(crate) fn run(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let config = s.require_config("placement")?;
    let o = opts.own::<PlacementOptions>();
    // The drive as described, for what every placement shares: its zones, its bounds.
    let drive = suite_drive(config, o.slice_bytes, 2)?;
    let model = resolve(&drive)?;
    let zone_model = drive.zone_model(&model).map_err(|e| key_error(&drive, e))?;
    let placements: &[Placement] = if zone_model.is_some() {
        &[Placement::Zones]
    } else {
        &[Placement::OneHandle, Placement::PerStream]
    };
    let drives = placements
        .iter()
        .map(|&p| suite_drive(config, o.slice_bytes, p.handles()))
        .collect::<Result<Vec<_>, _>>()?;
    let zones = zone_model.map(|z| (u64::from(z.geometry.zones), z.geometry.max_open));
    let rate = o.write_rate.unwrap_or_else(|| {
        let program = Model::media_bounds(&model.full, &model.timings).1;
        let bound = program.min(model.full_shared.link_bytes_per_s as f64);
        ((bound / 8.0) as u64).max(1 << 20)
    });
    let capacity = model.full_user_bytes;
    let points: Vec<(Placement, f64)> = placements
        .iter()
        .flat_map(|&p| o.utilisations.iter().map(move |&u| (p, u)))
        .collect();
    let seeds = SeedTree::new(opts.seed).child("device");
    let build = |k: usize| {
        let p = placements
            .iter()
            .position(|&p| p == points[k].0)
            .unwrap_or(0);
        let drive = &drives[p];
        let ssd = Ssd::new(drive, seeds).map_err(|error| SuiteError::Device {
            device: drive.name.clone(),
            error: Box::new(error),
        })?;
        Ok((
            ssd,
            FreshDevice::Drive(Box::new(drive.clone())),
            seeds.master_seed(),
        ))
    };
    let n = points.len() as f64;
    // A point writes its region's passes at one rate, so a fuller drive's point runs longer
    // (and collects more): on several threads the fullest start first.
    let mut fullest_first: Vec<usize> = (0..points.len()).collect();
    fullest_first.sort_by(|&a, &b| points[b].1.total_cmp(&points[a].1));
    let ran = s.on_fresh_devices(points.len(), opts.threads, &fullest_first, &build, &|k, s| {
        let (p, u) = points[k];
        s.suite_span = Some((k as f64 / n, (k + 1) as f64 / n));
        let label = format!("{}-util{}", p.name(), util_text(&[util_key(u), 0, 0, 0]));
        let (warmup, measured) = match o.windows {
            Windows::Passes { warmup, measure } | Windows::RegionWrites { warmup, measure } => {
                (warmup, measure)
            }
        };
        let warm = timed_job_file(&o, p, u, capacity, rate, warmup, zones);
        s.job(&format!("{label}-warmup"), &warm, &|_| Vec::new())?;
        let before = s.counters();
        let text = timed_job_file(&o, p, u, capacity, rate, measured, zones);
        let run = s.job(&format!("{label}-measured"), &text, &|_| Vec::new())?;
        let after = s.counters();
        let write_bw = run
            .jobs
            .iter()
            .take(2)
            .map(|j| j.bw_bytes_per_s(DDIR_WRITE) as f64)
            .sum();
        let dlwa = wa_between(&before, &after);
        Ok(PointOutcome {
            dlwa,
            small_dlwa: if p == Placement::PerStream {
                small_dlwa(&run, dlwa)
            } else {
                None
            },
            write_bw,
            read_p99: read_percentile(&run, 99.0),
            read_p99_9: read_percentile(&run, 99.9),
        })
    })?;
    let mut results = Vec::new();
    for (&(p, u), out) in points.iter().zip(&ran) {
        let at = row(p, u);
        results.push(measure("dlwa", Unit::Ratio, out.dlwa).under(&at));
        if let Some(v) = out.small_dlwa {
            results.push(measure("small_dlwa", Unit::Ratio, v).under(&at));
        }
        results.push(measure("write_bw_bytes_per_s", Unit::BytesPerS, out.write_bw).under(&at));
        if let Some(v) = out.read_p99 {
            results.push(
                measure("read_lat_ns", Unit::Ns, v)
                    .col(Coord::Percentile(99.0))
                    .under(&at),
            );
        }
        if let Some(v) = out.read_p99_9 {
            results.push(
                measure("read_lat_ns", Unit::Ns, v)
                    .col(Coord::Percentile(99.9))
                    .under(&at),
            );
        }
    }
    let charts = charts(placements, &o.utilisations, &points, &ran);
    Ok(Outcome {
        steady: None,
        results,
        charts,
    })
}

fn charts(
    placements: &[Placement],
    utilisations: &[f64],
    points: &[(Placement, f64)],
    ran: &[PointOutcome],
) -> Vec<Chart> {
    let series = |f: &dyn Fn(&PointOutcome) -> Option<f64>| -> Vec<Series> {
        placements
            .iter()
            .map(|&p| Series {
                name: p.label().to_string(),
                points: utilisations
                    .iter()
                    .filter_map(|&u| {
                        let i = points.iter().position(|&(q, v)| q == p && v == u)?;
                        f(&ran[i]).map(|y| (u * 100.0, y))
                    })
                    .collect(),
            })
            .collect()
    };
    let x = || Axis::linear("cache's share of the drive", Unit::Percent);
    vec![
        Chart {
            id: "placement-dlwa".into(),
            title: "Device write amplification against the cache's share of the drive".into(),
            x: x(),
            y: Axis::linear("DLWA (NAND writes per host write)", Unit::Ratio),
            series: series(&|o| Some(o.dlwa)),
            band: None,
        },
        Chart {
            id: "placement-read-tail".into(),
            title: "4 KiB read latency p99.9 against the cache's share of the drive".into(),
            x: x(),
            y: Axis::log("read latency p99.9", Unit::Ns),
            series: series(&|o| o.read_p99_9),
            band: None,
        },
    ]
}

/// `placement`: a flash cache's two streams, placed together or apart.
pub(crate) struct PlacementSuite;

impl Suite for PlacementSuite {
    fn name(&self) -> &'static str {
        "placement"
    }
    fn summary(&self) -> &'static str {
        "a flash cache's small-object and log streams through one FDP handle, a handle each, or zones: DLWA, write bandwidth, read tail per utilisation"
    }
    fn reads_runtime(&self) -> bool {
        false
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Description
    }
    fn sizes_its_slice(&self) -> bool {
        true
    }
    fn default_devices(&self) -> &'static [&'static str] {
        &["samsung-pm9d3a-7.68tb", "wd-ultrastar-dc-zn540-1tb"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <PlacementArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        flashlab_kit::suite::parse_args::<PlacementArgs>(m)?.apply(o.own_mut())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        Some(("placement", o.own::<PlacementOptions>().to_json()))
    }
    fn options_text(&self, o: &SuiteOptions) -> Vec<String> {
        let p = o.own::<PlacementOptions>();
        let utils: Vec<String> = p
            .utilisations
            .iter()
            .map(|&u| util_text(&[util_key(u), 0, 0, 0]))
            .collect();
        let windows = match p.windows {
            Windows::Passes { warmup, measure } => {
                format!("{warmup} passes of the log before the measured window, {measure} in it")
            }
            Windows::RegionWrites { warmup, measure } => format!(
                "the cache's region written {warmup} times before the measured window, {measure} in it"
            ),
        };
        vec![format!(
            "cache at {}% of the drive; small objects {}% of the drive, {}% of the bytes written; {windows}; a drive without FDP or zones runs with FDP (power-loss protection, no SLC cache); each placement with the handles it writes through",
            utils.join(", "),
            p.small_region * 100.0,
            p.small_writes * 100.0
        )]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[GRID]
    }
    fn axes(&self) -> &'static [&'static LocalAxis] {
        &[&UTILISATION_AXIS]
    }
    fn tracked(&self) -> &'static str {
        "dlwa"
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        run(s)
    }
}

const GRID: GridSpec = GridSpec {
    title: "Flash cache streams: device write amplification, write bandwidth and read tail",
    row_header: "placement, cache's share of the drive",
    dims: &[Dim::Phase, Dim::Load],
    cols: Cols::Figures(&[
        ("DLWA", "dlwa", None),
        ("host writes", "write_bw_bytes_per_s", None),
        ("read p99", "read_lat_ns", P99),
        ("read p99.9", "read_lat_ns", P99_9),
    ]),
    row_label: values,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_name_the_bad_one() {
        assert!(PlacementOptions::default().validate().is_ok());
        for (o, option) in [
            (
                PlacementOptions {
                    utilisations: vec![0.05],
                    ..Default::default()
                },
                "--utilisation",
            ),
            (
                PlacementOptions {
                    utilisations: vec![0.5, 0.5],
                    ..Default::default()
                },
                "--utilisation",
            ),
            (
                PlacementOptions {
                    small_writes: 1.0,
                    ..Default::default()
                },
                "--small-writes",
            ),
            (
                PlacementOptions {
                    small_region: 0.0,
                    ..Default::default()
                },
                "--small-region",
            ),
            (
                PlacementOptions {
                    windows: Windows::Passes {
                        warmup: 3.0,
                        measure: 0.0,
                    },
                    ..Default::default()
                },
                "--measure-passes",
            ),
            (
                PlacementOptions {
                    windows: Windows::RegionWrites {
                        warmup: f64::NAN,
                        measure: 1.0,
                    },
                    ..Default::default()
                },
                "--warmup-writes",
            ),
        ] {
            let msg = o.validate().unwrap_err().to_string();
            assert!(msg.contains(option), "{msg}");
        }
    }

    #[test]
    fn the_streams_go_through_their_handles_and_regions() {
        let o = PlacementOptions::default();
        let one = job_file(&o, Placement::OneHandle, 1.0, 1 << 30, None);
        let per = job_file(&o, Placement::PerStream, 1.0, 1 << 30, None);
        assert_eq!(one.matches("plids=0").count(), 2, "{one}");
        assert!(per.contains("plids=0") && per.contains("plids=1"), "{per}");
        assert!(per.contains("offset=4.000000%\nsize=96.000000%"), "{per}");
        let zoned = job_file(&o, Placement::Zones, 0.5, 1 << 30, Some((100, 14)));
        assert!(
            zoned.contains("zonemode=zbd") && !zoned.contains("fdp"),
            "{zoned}"
        );
        // Four zones of small objects, the log from zone 4 to zone 50.
        assert!(
            zoned.contains("offset=0.000000%\nsize=4.500000%"),
            "{zoned}"
        );
        assert!(
            zoned.contains("offset=3.500000%\nsize=47.000000%"),
            "{zoned}"
        );
        assert!(zoned.contains("job_max_open_zones=13"), "{zoned}");
    }

    /// The suite's slice of a large FDP drive is one its jobs run on: the small objects'
    /// random writes are refused on a die cut unless the drive's owner allows it.
    #[test]
    fn the_slice_of_a_large_fdp_drive_keeps_its_jobs() {
        let o = PlacementOptions::default();
        let load = |sets: &[(&str, &str)]| {
            let sets: Vec<(String, String)> = sets
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            flashlab_device::load_device_config("samsung-pm9d3a-7.68tb", &sets).unwrap()
        };
        let refusal = |drive: &DeviceConfig, p: Placement| {
            let m = drive.resolve().unwrap();
            let text = timed_job_file(&o, p, 1.0, m.full_user_bytes, 1 << 30, 1.0, None);
            let file = flashlab_workload::parse_str(&text, "placement.fio", &|_| None).unwrap();
            let scale = flashlab_runner::SliceScale::of_drive(
                m.scale.capacity_factor,
                m.scale.die_factor,
                m.scale.die_cut_allowed,
            );
            (m.scale, flashlab_runner::die_cut_refusal(&file, scale))
        };
        let config = load(&[]);
        for p in [Placement::OneHandle, Placement::PerStream] {
            let drive = suite_drive(&config, o.slice_bytes, p.handles()).unwrap();
            assert_eq!(drive.fdp.handles, p.handles());
            let (scale, why) = refusal(&drive, p);
            assert_eq!(why, None, "{}", scale.note);
            assert_eq!(scale.die_factor, 1.0, "{}", scale.note);
            // Still a slice, not the whole drive nor the preset's own.
            assert!(scale.capacity_factor > 10.0, "{}", scale.note);
        }
        // Allowed by name, the die cut the streams' queues share.
        let allowed = load(&[("sim.die_cut", "allow")]);
        let drive = suite_drive(&allowed, o.slice_bytes, 2).unwrap();
        let (scale, why) = refusal(&drive, Placement::PerStream);
        assert_eq!(why, None, "{}", scale.note);
        assert!(scale.die_factor > 1.0, "{}", scale.note);
        // An explicit scale is the user's.
        let explicit = load(&[("sim.scale", "0.01"), ("sim.die_cut", "allow")]);
        let drive = suite_drive(&explicit, o.slice_bytes, 2).unwrap();
        assert_eq!(drive.sim.scale, ScaleSetting::Fraction(0.01));
    }

    /// A pass is the log's time to write its region once, or the small objects' to write
    /// theirs when that is longer; region writes count the whole cache's region.
    #[test]
    fn windows_count_passes_of_the_log_or_of_the_small_objects() {
        let (cap, rate) = (1u64 << 30, 1u64 << 20);
        let secs = |o: &PlacementOptions, u: f64, n: f64| {
            window_ns(o, u, cap, rate, n) as f64 / NS_PER_S as f64
        };
        let region = |u: f64| u * cap as f64 / rate as f64;
        let o = PlacementOptions::default();
        // Half the bytes to a log over 96% of the drive: 1.92 region writes a pass.
        assert!((secs(&o, 1.0, 1.0) / region(1.0) - 1.92).abs() < 1e-6);
        assert!((secs(&o, 0.5, 3.0) / region(0.5) - 3.0 * 1.84).abs() < 1e-6);
        // With 1% of the bytes, the small objects' 4% of the drive takes longer than the log.
        let few = PlacementOptions {
            small_writes: 0.01,
            ..Default::default()
        };
        assert!((secs(&few, 1.0, 1.0) / region(1.0) - 4.0).abs() < 1e-6);
        let writes = PlacementOptions {
            windows: Windows::RegionWrites {
                warmup: 2.0,
                measure: 1.0,
            },
            ..Default::default()
        };
        assert!((secs(&writes, 0.5, 2.0) / region(0.5) - 2.0).abs() < 1e-6);
    }

    #[test]
    fn utilisation_keys_are_key_safe() {
        let c = util_coord(0.905);
        assert_eq!(c.key(), "util90_5");
        assert_eq!(c.value(), "90.5%");
        assert_eq!(util_coord(1.0).key(), "util100");
    }
}
