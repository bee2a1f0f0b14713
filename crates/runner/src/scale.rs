//! Running a job file against a proportional slice of a drive as if it were the whole drive.
//!
//! The slice keeps `1/capacity_factor` of the drive's capacity and `1/die_factor` of its
//! dies. Each job is shrunk so that it does to the slice what it would do to the drive:
//! - byte quantities tied to capacity (absolute `size`, `offset`, `offset_increment`,
//!   `io_size`, `zoned_abs` zone sizes) and `number_ios` are divided by the capacity factor,
//!   rounded to whole blocks (percentages already follow the capacity);
//! - with fewer dies, `iodepth` is divided by the die factor (at least 1), so each die sees
//!   the same queue; the ratio actually applied is the job's *throughput factor* `L`, and
//!   `rate`/`rate_iops` are divided by it too;
//! - time budgets (`runtime`, `ramp_time`, `startdelay`) are multiplied by `L / capacity_factor`,
//!   so the job writes the same fraction of the drive in its budget: the slice moves `1/L` of
//!   the drive's bytes per second into `1/capacity_factor` of its capacity. A phase of only
//!   time-based read jobs changes nothing on the drive and keeps its time, for more samples;
//!   so does every time-based phase of a run that measures a steady state
//!   ([`TimedPhases::KeepTime`]); `log_avg_msec` follows (to whole simulated ms, at least 1);
//! - `thinktime` is a per-I/O pause and stays.
//!
//! Results come back per job with [`flashlab_report::ScaleBack`]: time × `capacity_factor / L`
//! (× 1 for a phase that kept its time), bytes and I/O counts × `capacity_factor` (× `L`),
//! bandwidth and IOPS × `L`, latencies unchanged.

use flashlab_report::ScaleBack;
use flashlab_workload::{BlockSize, JobFile, JobSpec, RandomDistribution, SizeSpec};
use serde_json::{json, Map, Value};

/// How the simulated drive relates to the drive described (both factors ≥ 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SliceScale {
    /// Full user capacity / simulated user capacity.
    pub capacity_factor: f64,
    /// Full die count / simulated die count.
    pub die_factor: f64,
    /// The drive's owner accepted a die cut (`sim.die_cut = "allow"`): without it,
    /// [`die_cut_refusal`] refuses every die cut.
    pub die_cut_allowed: bool,
}

impl SliceScale {
    /// The whole drive is simulated.
    pub const FULL: SliceScale = SliceScale {
        capacity_factor: 1.0,
        die_factor: 1.0,
        die_cut_allowed: false,
    };

    /// The arithmetic of a slice, its die cut accepted (as by `sim.die_cut = "allow"`); a
    /// drive's slice says whether it is with [`SliceScale::of_drive`].
    pub fn new(capacity_factor: f64, die_factor: f64) -> Self {
        Self {
            capacity_factor,
            die_factor,
            die_cut_allowed: true,
        }
    }

    /// A drive's slice, with its `sim.die_cut` setting: the one rule `run`, `fio`,
    /// `replay`, suites, sweeps and the Python package share.
    pub fn of_drive(capacity_factor: f64, die_factor: f64, die_cut_allowed: bool) -> Self {
        Self {
            capacity_factor,
            die_factor,
            die_cut_allowed,
        }
    }

    pub fn is_full(&self) -> bool {
        self.capacity_factor == 1.0 && self.die_factor == 1.0
    }

    pub(crate) fn is_valid(&self) -> bool {
        let ok = |f: f64| f.is_finite() && f >= 1.0;
        ok(self.capacity_factor) && ok(self.die_factor)
    }

    /// The one-line statement printed before normal results, e.g. `simulated as a 1/16
    /// slice (capacity); figures scaled to the full drive`.
    pub fn summary(&self) -> String {
        let what = if self.die_factor > 1.0 {
            format!(
                "capacity, and 1/{} of the dies",
                trim_factor(self.die_factor)
            )
        } else {
            "capacity".to_string()
        };
        format!(
            "simulated as a 1/{} slice ({what}); figures scaled to the full drive",
            trim_factor(self.capacity_factor)
        )
    }
}

impl Default for SliceScale {
    fn default() -> Self {
        Self::FULL
    }
}

/// `16` for 16.0 (and for 16.00002: capacities are whole IUs, so factors are rarely exact),
/// `21.88` for 21.875.
fn trim_factor(f: f64) -> String {
    if (f - f.round()).abs() < 0.005 {
        format!("{}", f.round() as u64)
    } else {
        format!("{f:.2}")
    }
}

/// What a slice does to the time budget of a time-based phase (jobs between stonewalls, each
/// with `runtime`, none bounded by `io_size` or `number_ios`) that writes or trims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimedPhases {
    /// Compressed like every other phase, so the slice writes the same share of itself as
    /// the drive does: right wherever the drive's state moves during the phase (caches
    /// filling, a fresh drive reaching steady state).
    #[default]
    Compress,
    /// Kept as on the drive. For runs that measure a drive already in its steady state
    /// (the `qos` suite's windows), where there is no state to keep in step: a compressed
    /// window is as short as `1/capacity_factor` of the drive's and measures the transient at
    /// its start (work the previous step left queued on the dies, the write buffer filling)
    /// with `1/capacity_factor` of the latency samples for its tail.
    KeepTime,
}

/// Why the die cut of `scale` would change a job of `file`'s figures, or `None` when it
/// keeps every job's: a die cut keeps a job's figures only where each remaining die sees the
/// queue it sees on the drive, i.e. the job's `iodepth` divided by the die factor is whole.
/// A shallower queue (QD1, a depth the factor does not divide) would put the work the whole
/// drive spreads over all its dies (a 1 MiB read's pages, its link transfer) on fewer dies
/// and a narrower link: SEQ1M Q1T1 on a quarter of the dies reads at about a quarter of the
/// drive's rate.
///
/// Even where every die sees the drive's queue, a die cut changes random writes, whose
/// garbage collection runs on fewer dies (8 of the D5-P5430 15.36 TB's 128 dies write 4 KiB
/// at random 5-12% below the slice that keeps them all; docs/scale.md): unless the drive's
/// owner accepted that (`sim.die_cut = "allow"`), a job that writes at random is refused.
pub fn die_cut_refusal(file: &JobFile, scale: SliceScale) -> Option<String> {
    let d = scale.die_factor;
    if d <= 1.0 {
        return None;
    }
    let unshared = file.jobs.iter().find_map(|job| {
        let depth = job.engine.iodepth.max(1);
        let slice_depth = ((depth as f64 / d).round() as u32).max(1);
        let shared = depth as f64 / slice_depth as f64;
        ((shared - d).abs() > 1e-9 * d).then(|| {
            format!(
                "job '{}' runs at iodepth {depth}, which 1/{} of the dies cannot share (at \
                 iodepth {slice_depth} each die would see {:.2}x the drive's load)",
                job.id.name,
                trim_factor(d),
                d / shared
            )
        })
    });
    unshared.or_else(|| {
        if scale.die_cut_allowed {
            return None;
        }
        let writer = file
            .jobs
            .iter()
            .find(|job| job.io.rw.is_random() && job.io.rw.directions()[1])?;
        Some(format!(
            "job '{}' writes at random, which 1/{} of the dies do at another rate than the \
             drive (garbage collection on fewer dies: 5-12% low on 8 of 128), and \
             sim.die_cut is not \"allow\"",
            writer.id.name,
            trim_factor(d)
        ))
    })
}

/// What a slice does to a job's byte quantities (`size`, `offset`, `offset_increment`,
/// `io_size`, `zoned_abs` zones) and `number_ios`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RegionSizes {
    /// Divided by the capacity factor: places and amounts on the drive stay the same share
    /// of the slice.
    #[default]
    Scale,
    /// Kept as given. For a client benchmark's test file (ATTO's 256 MB, CrystalDiskMark's
    /// 1 GiB), sized without regard to the drive's capacity: what it meets is the drive's
    /// DRAM write buffer, read-ahead and read buffer, which a slice keeps at full size, so a
    /// test file cut to `1/capacity_factor` would fit in the write buffer where the drive's
    /// does not. The caller makes sure the region is a small part of the slice.
    Keep,
}

/// What the slice did to one job of the file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JobScale {
    /// Simulated time per full-drive time.
    pub time_factor: f64,
    /// Full-drive throughput per simulated throughput (`L`).
    pub throughput_factor: f64,
    /// The phase keeps its time (time-based reads, or any time-based phase with
    /// [`TimedPhases::KeepTime`]).
    pub kept_time: bool,
    pub back: ScaleBack,
    /// (option, full-drive value, simulated value), in bytes, ns or counts.
    pub changes: Vec<(&'static str, u64, u64)>,
}

impl JobScale {
    const IDENTITY: JobScale = JobScale {
        time_factor: 1.0,
        throughput_factor: 1.0,
        kept_time: false,
        back: ScaleBack::IDENTITY,
        changes: Vec::new(),
    };
}

/// The job file as run on the slice, and each job's factors (in file order).
#[derive(Debug, Clone)]
pub(crate) struct ScalePlan {
    pub scale: SliceScale,
    /// `None` at full scale: the original file runs unchanged.
    pub file: Option<JobFile>,
    pub jobs: Vec<JobScale>,
}

impl ScalePlan {
    pub fn new(
        file: &JobFile,
        scale: SliceScale,
        timed: TimedPhases,
        regions: RegionSizes,
    ) -> Self {
        if scale.is_full() {
            return Self {
                scale,
                file: None,
                jobs: vec![JobScale::IDENTITY; file.jobs.len()],
            };
        }
        let keep = phases_keeping_time(&file.jobs, timed);
        let mut scaled = file.clone();
        let jobs = scaled
            .jobs
            .iter_mut()
            .zip(keep)
            .map(|(spec, keep_time)| scale_job(spec, scale, keep_time, regions))
            .collect();
        Self {
            scale,
            file: Some(scaled),
            jobs,
        }
    }

    /// The file to run: the scaled one, or `original` at full scale.
    pub fn file<'a>(&'a self, original: &'a JobFile) -> &'a JobFile {
        self.file.as_ref().unwrap_or(original)
    }

    /// The `"scale"` member of the `"flashlab"` JSON object.
    pub fn json(&self) -> Value {
        let jobs: Vec<Value> = self
            .file
            .iter()
            .flat_map(|f| f.jobs.iter())
            .zip(self.jobs.iter())
            .map(|(spec, j)| {
                let mut changed = Map::new();
                for (option, full, simulated) in &j.changes {
                    changed.insert(
                        (*option).into(),
                        json!({ "full": full, "simulated": simulated }),
                    );
                }
                json!({
                    "jobname": spec.id.name,
                    "time_factor": j.back.time_factor,
                    "count_factor": j.back.count_factor,
                    "rate_factor": j.back.rate_factor(),
                    "time_kept": j.kept_time,
                    "changed": Value::Object(changed),
                })
            })
            .collect();
        json!({
            "capacity_factor": self.scale.capacity_factor,
            "die_factor": self.scale.die_factor,
            "summary": self.scale.summary(),
            "results": "scaled to the full drive: bytes and I/O counts x count_factor, runtimes and log times x time_factor, bandwidth and IOPS x rate_factor, latencies as simulated; device_counters are those of the simulated slice",
            "jobs": jobs,
        })
    }
}

/// Per job: whether its phase (jobs between stonewalls) keeps its time: it runs for a fixed
/// time and only reads (it changes nothing on the drive, so compressing its time would only
/// cost samples), or writes too with [`TimedPhases::KeepTime`].
pub(crate) fn phases_keeping_time(jobs: &[JobSpec], timed: TimedPhases) -> Vec<bool> {
    let mut keep = vec![false; jobs.len()];
    let mut start = 0;
    for end in 1..=jobs.len() {
        if end == jobs.len() || jobs[end].control.stonewall {
            let all = jobs[start..end].iter().all(|j| {
                let [_, writes, trims] = j.io.rw.directions();
                j.time.time_based
                    && j.time.runtime_ns.is_some()
                    && (timed == TimedPhases::KeepTime || (!writes && !trims))
                    && j.target.io_size.is_none()
                    && j.target.number_ios.is_none()
            });
            keep[start..end].iter_mut().for_each(|k| *k = all);
            start = end;
        }
    }
    keep
}

fn largest_block_bytes(bs: &BlockSize) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range { max, .. } => *max,
        BlockSize::Split(parts) => parts.iter().map(|(b, _)| *b).max().unwrap_or(0),
    }
}

/// Shrink one job for the slice (see the module docs) and return its factors.
fn scale_job(
    spec: &mut JobSpec,
    scale: SliceScale,
    keep_time: bool,
    regions: RegionSizes,
) -> JobScale {
    let f = scale.capacity_factor;
    // What byte quantities and I/O counts are divided by.
    let region_factor = match regions {
        RegionSizes::Scale => f,
        RegionSizes::Keep => 1.0,
    };
    let mut changes: Vec<(&'static str, u64, u64)> = Vec::new();
    scale_regions(spec, region_factor, &mut changes);
    let throughput_factor = scale_queue(spec, scale.die_factor, &mut changes);
    let time_factor = if keep_time {
        1.0
    } else {
        throughput_factor / f
    };
    scale_times(spec, time_factor, &mut changes);
    JobScale {
        time_factor,
        throughput_factor,
        kept_time: keep_time,
        back: ScaleBack {
            time_factor: 1.0 / time_factor,
            count_factor: throughput_factor / time_factor,
        },
        changes,
    }
}

/// Byte quantities and I/O counts divided by `region_factor`, noting each change.
fn scale_regions(
    spec: &mut JobSpec,
    region_factor: f64,
    changes: &mut Vec<(&'static str, u64, u64)>,
) {
    let dirs = spec.io.rw.directions();
    // Sizes stay whole multiples of the largest block the job issues, so a region still
    // holds whole I/Os and offsets stay aligned.
    let align_bytes = (0..3)
        .filter(|&d| dirs[d])
        .map(|d| {
            largest_block_bytes(&spec.block.bs[d]).max(spec.block.block_align_bytes[d].unwrap_or(0))
        })
        .max()
        .unwrap_or(4096)
        .max(1);
    let mut bytes = |option: &'static str, v: u64, at_least_one_block: bool| -> u64 {
        let blocks = (v as f64 / region_factor / align_bytes as f64).round() as u64;
        let min = u64::from(at_least_one_block && v > 0);
        let s = blocks.max(min) * align_bytes;
        if s != v {
            changes.push((option, v, s));
        }
        s
    };
    if let Some(SizeSpec::Bytes(v)) = spec.target.size {
        spec.target.size = Some(SizeSpec::Bytes(bytes("size", v, true)));
    }
    if let SizeSpec::Bytes(v) = spec.target.offset {
        spec.target.offset = SizeSpec::Bytes(bytes("offset", v, false));
    }
    if let SizeSpec::Bytes(v) = spec.target.offset_increment {
        spec.target.offset_increment = SizeSpec::Bytes(bytes("offset_increment", v, true));
    }
    // A percentage `io_size` is of the region, which already follows the slice.
    if let Some(SizeSpec::Bytes(v)) = spec.target.io_size {
        spec.target.io_size = Some(SizeSpec::Bytes(bytes("io_size", v, true)));
    }
    if let RandomDistribution::ZonedAbs(zones) = &mut spec.io.random_distribution {
        for zone in zones.iter_mut() {
            zone.1 = bytes("zoned_abs", zone.1, true);
        }
    }
    if let Some(n) = spec.target.number_ios {
        let s = ((n as f64 / region_factor).round() as u64).max(1);
        if s != n {
            changes.push(("number_ios", n, s));
        }
        spec.target.number_ios = Some(s);
    }
}

/// Fewer dies: the same queue per die, and rates shrunk with the depth. Returns how much
/// less the slice's queue moves (the throughput factor).
fn scale_queue(
    spec: &mut JobSpec,
    die_factor: f64,
    changes: &mut Vec<(&'static str, u64, u64)>,
) -> f64 {
    if die_factor <= 1.0 {
        return 1.0;
    }
    let depth = spec.engine.iodepth.max(1);
    let slice_depth = ((depth as f64 / die_factor).round() as u32).max(1);
    let throughput_factor = depth as f64 / slice_depth as f64;
    if slice_depth != depth {
        changes.push(("iodepth", depth.into(), slice_depth.into()));
    }
    spec.engine.iodepth = slice_depth;
    let mut rates = |name: &'static str, r: &mut [u64; 3]| {
        for v in r.iter_mut().filter(|v| **v > 0) {
            let s = ((*v as f64 / throughput_factor).round() as u64).max(1);
            if s != *v {
                changes.push((name, *v, s));
            }
            *v = s;
        }
    };
    rates("rate", &mut spec.rate.rate_bytes_per_s);
    rates("rate_iops", &mut spec.rate.rate_iops);
    rates("rate_min", &mut spec.rate.rate_min_bytes_per_s);
    rates("rate_iops_min", &mut spec.rate.rate_iops_min);
    throughput_factor
}

/// Spans of the drive's time multiplied by `time_factor`, noting each change.
fn scale_times(spec: &mut JobSpec, time_factor: f64, changes: &mut Vec<(&'static str, u64, u64)>) {
    let mut time = |option: &'static str, v: u64| -> u64 {
        if v == 0 {
            return 0;
        }
        let s = ((v as f64 * time_factor).round() as u64).max(1);
        if s != v {
            changes.push((option, v, s));
        }
        s
    };
    if let Some(v) = spec.time.runtime_ns {
        spec.time.runtime_ns = Some(time("runtime", v));
    }
    spec.time.ramp_time_ns = time("ramp_time", spec.time.ramp_time_ns);
    // Steady-state samples are seconds of the drive: the runner takes them one
    // `time_factor` apart, and their ramp is a span of the drive's time like `ramp_time`.
    spec.steadystate.ramp_ns = time("steadystate_ramp_time", spec.steadystate.ramp_ns);
    spec.time.startdelay_ns = time("startdelay", spec.time.startdelay_ns);
    if spec
        .rate
        .rate_min_bytes_per_s
        .iter()
        .chain(&spec.rate.rate_iops_min)
        .any(|&r| r > 0)
    {
        spec.rate.rate_cycle_ns = time("rate_cycle", spec.rate.rate_cycle_ns);
    }
    // Log windows are spans of the drive's time too; after scaling back, their stamps fall
    // near the multiples of the window asked for (to the nearest simulated ms).
    for (option, ms) in [
        ("log_avg_msec", &mut spec.log.log_avg_msec),
        ("log_hist_msec", &mut spec.log.log_hist_msec),
    ] {
        if *ms > 0 {
            let s = ((*ms as f64 * time_factor).round() as u64).max(1);
            if s != *ms {
                changes.push((option, *ms, s));
            }
            *ms = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan with the default policies: time and sizes follow the capacity.
    fn scaled(file: &JobFile, scale: SliceScale) -> ScalePlan {
        ScalePlan::new(file, scale, TimedPhases::Compress, RegionSizes::Scale)
    }
    use flashlab_workload::RwPattern;

    const GIB: u64 = 1 << 30;
    const S: u64 = 1_000_000_000;

    fn file(jobs: Vec<JobSpec>) -> JobFile {
        JobFile {
            path: "t.fio".into(),
            global_options: Vec::new(),
            jobs,
            includes: Vec::new(),
        }
    }

    fn job(rw: RwPattern) -> JobSpec {
        let mut j = JobSpec::new("j", 1);
        j.io.rw = rw;
        j
    }

    #[test]
    fn capacity_cut_shrinks_bytes_and_time_and_scales_back_exactly() {
        let mut j = job(RwPattern::RandWrite);
        j.target.size = Some(SizeSpec::Bytes(16 * GIB));
        j.target.offset = SizeSpec::Bytes(GIB);
        j.target.io_size = Some(SizeSpec::Bytes(8 * GIB));
        j.time.runtime_ns = Some(60 * S);
        j.time.ramp_time_ns = 4 * S;
        j.log.log_avg_msec = 1000;
        j.rate.thinktime_ns = 1000;
        j.engine.iodepth = 32;
        j.rate.rate_iops = [0, 5000, 0];
        let plan = scaled(&file(vec![j]), SliceScale::new(16.0, 1.0));
        let s = &plan.file.as_ref().unwrap().jobs[0];
        assert_eq!(s.target.size, Some(SizeSpec::Bytes(GIB)));
        assert_eq!(s.target.offset, SizeSpec::Bytes(GIB / 16));
        assert_eq!(s.target.io_size, Some(SizeSpec::Bytes(GIB / 2)));
        assert_eq!(s.time.runtime_ns, Some(60 * S / 16));
        assert_eq!(s.time.ramp_time_ns, S / 4);
        assert_eq!(s.log.log_avg_msec, 63, "1000 ms / 16, to the nearest ms");
        assert_eq!(s.rate.thinktime_ns, 1000, "per-I/O pauses stay");
        assert_eq!(s.engine.iodepth, 32, "every die is simulated: same depth");
        assert_eq!(s.rate.rate_iops, [0, 5000, 0], "same bandwidth: same rate");
        let back = plan.jobs[0].back;
        assert_eq!((back.time_factor, back.count_factor), (16.0, 16.0));
        assert_eq!(back.rate_factor(), 1.0);
        assert!(plan.jobs[0].changes.contains(&("size", 16 * GIB, GIB)));
    }

    #[test]
    fn kept_regions_keep_their_bytes_and_the_clock_still_compresses() {
        let mut j = job(RwPattern::Write);
        j.target.size = Some(SizeSpec::Bytes(256 << 20));
        j.target.offset = SizeSpec::Bytes(GIB);
        j.target.io_size = Some(SizeSpec::Bytes(512 << 20));
        j.target.number_ios = Some(1000);
        j.time.runtime_ns = Some(16 * S);
        let plan = ScalePlan::new(
            &file(vec![j]),
            SliceScale::new(16.0, 1.0),
            TimedPhases::Compress,
            RegionSizes::Keep,
        );
        let s = &plan.file.as_ref().unwrap().jobs[0];
        assert_eq!(s.target.size, Some(SizeSpec::Bytes(256 << 20)));
        assert_eq!(s.target.offset, SizeSpec::Bytes(GIB));
        assert_eq!(s.target.io_size, Some(SizeSpec::Bytes(512 << 20)));
        assert_eq!(s.target.number_ios, Some(1000));
        // Time still follows the capacity: it is not a region.
        assert_eq!(s.time.runtime_ns, Some(S));
        assert_eq!(plan.jobs[0].changes, [("runtime", 16 * S, S)]);
    }

    #[test]
    fn percentages_stay_and_sizes_keep_whole_blocks() {
        let mut j = job(RwPattern::Write);
        j.target.size = Some(SizeSpec::Fraction(0.5));
        j.block.bs[1] = BlockSize::Fixed(128 * 1024);
        j.target.offset_increment = SizeSpec::Bytes(1_000_000);
        j.target.io_size = Some(SizeSpec::Fraction(0.25));
        let plan = scaled(&file(vec![j]), SliceScale::new(3.0, 1.0));
        let s = &plan.file.as_ref().unwrap().jobs[0];
        assert_eq!(s.target.size, Some(SizeSpec::Fraction(0.5)));
        // A percentage io_size is of the region, which is already the slice's: not shrunk twice.
        assert_eq!(s.target.io_size, Some(SizeSpec::Fraction(0.25)));
        assert!(plan.jobs[0].changes.iter().all(|c| c.0 != "io_size"));
        // 1 MB / 3 = 333 kB: the nearest whole number of 128 KiB blocks is 3.
        assert_eq!(s.target.offset_increment, SizeSpec::Bytes(3 * 128 * 1024));
        let mut tiny = job(RwPattern::Write);
        tiny.target.size = Some(SizeSpec::Bytes(4096));
        let plan = scaled(&file(vec![tiny]), SliceScale::new(100.0, 1.0));
        assert_eq!(
            plan.file.as_ref().unwrap().jobs[0].target.size,
            Some(SizeSpec::Bytes(4096)),
            "never below one block"
        );
        // A percentage io_size over a region in bytes: the region shrinks, the share stays.
        let mut j = job(RwPattern::Write);
        j.target.size = Some(SizeSpec::Bytes(16 * GIB));
        j.target.io_size = Some(SizeSpec::Fraction(0.25));
        let plan = scaled(&file(vec![j]), SliceScale::new(16.0, 1.0));
        let s = &plan.file.as_ref().unwrap().jobs[0];
        assert_eq!(s.target.size, Some(SizeSpec::Bytes(GIB)));
        assert_eq!(s.target.io_size, Some(SizeSpec::Fraction(0.25)));
    }

    #[test]
    fn die_cut_divides_depth_and_rates_and_multiplies_rates_back() {
        let mut deep = job(RwPattern::RandRead);
        deep.engine.iodepth = 32;
        deep.time.runtime_ns = Some(8 * S);
        deep.rate.rate_bytes_per_s = [400 << 20, 0, 0];
        let mut qd1 = job(RwPattern::RandRead);
        qd1.engine.iodepth = 1;
        qd1.control.stonewall = true;
        let plan = scaled(&file(vec![deep, qd1]), SliceScale::new(8.0, 4.0));
        let f = plan.file.as_ref().unwrap();
        assert_eq!(f.jobs[0].engine.iodepth, 8);
        assert_eq!(f.jobs[0].rate.rate_bytes_per_s[0], 100 << 20);
        // Time × L / f = 4 / 8: the slice reads at a quarter of the rate into an eighth of
        // the capacity.
        assert_eq!(f.jobs[0].time.runtime_ns, Some(4 * S));
        assert_eq!(plan.jobs[0].back.rate_factor(), 4.0);
        assert_eq!(plan.jobs[0].back.count_factor, 8.0);
        // Depth 1 cannot be cut: the slice's throughput is that of the full drive.
        assert_eq!(f.jobs[1].engine.iodepth, 1);
        assert_eq!(plan.jobs[1].throughput_factor, 1.0);
        assert_eq!(plan.jobs[1].back.rate_factor(), 1.0);
    }

    #[test]
    fn time_based_read_phases_keep_their_time() {
        let mut fill = job(RwPattern::Write);
        fill.target.size = Some(SizeSpec::Fraction(1.0));
        let mut r1 = job(RwPattern::RandRead);
        r1.control.stonewall = true;
        r1.time.time_based = true;
        r1.time.runtime_ns = Some(10 * S);
        let mut r2 = r1.clone();
        r2.control.stonewall = false;
        let mut w = job(RwPattern::RandWrite);
        w.control.stonewall = true;
        w.time.time_based = true;
        w.time.runtime_ns = Some(10 * S);
        let mut r3 = r1.clone();
        r3.control.stonewall = false;
        let (fill_keep, w_keep) = (fill.clone(), w.clone());
        let plan = scaled(&file(vec![fill, r1, r2, w, r3]), SliceScale::new(4.0, 1.0));
        let kept: Vec<bool> = plan.jobs.iter().map(|j| j.kept_time).collect();
        // The last phase mixes a writer with a reader: both share the compressed clock.
        assert_eq!(kept, [false, true, true, false, false]);
        let f = plan.file.as_ref().unwrap();
        assert_eq!(f.jobs[1].time.runtime_ns, Some(10 * S));
        assert_eq!(f.jobs[4].time.runtime_ns, Some(10 * S / 4));
        assert_eq!(plan.jobs[1].back, ScaleBack::IDENTITY);
        // A run measuring a steady state keeps the writing phases' time as well (the fill
        // is bounded by size, not time, and still shrinks with the capacity).
        let mut w = w_keep;
        w.time.ramp_time_ns = S;
        let plan = ScalePlan::new(
            &file(vec![fill_keep, w]),
            SliceScale::new(4.0, 1.0),
            TimedPhases::KeepTime,
            RegionSizes::Scale,
        );
        let kept: Vec<bool> = plan.jobs.iter().map(|j| j.kept_time).collect();
        assert_eq!(kept, [false, true]);
        let f = plan.file.as_ref().unwrap();
        assert_eq!(
            (f.jobs[1].time.runtime_ns, f.jobs[1].time.ramp_time_ns),
            (Some(10 * S), S)
        );
        assert_eq!(plan.jobs[1].back, ScaleBack::IDENTITY);
        assert!(plan.jobs[1].changes.is_empty());
    }

    #[test]
    fn a_die_cut_is_refused_for_a_depth_it_cannot_share() {
        let mut deep = job(RwPattern::Read);
        deep.engine.iodepth = 32;
        let mut shallow = job(RwPattern::Read);
        shallow.engine.iodepth = 1;
        shallow.id.name = "qd1".into();
        let quarter = SliceScale::new(8.0, 4.0);
        assert_eq!(die_cut_refusal(&file(vec![deep.clone()]), quarter), None);
        let why = die_cut_refusal(&file(vec![deep.clone(), shallow.clone()]), quarter)
            .expect("QD1 cannot be shared among a quarter of the dies");
        assert!(why.contains("job 'qd1' runs at iodepth 1"), "{why}");
        // 32 over 1.6 is 20: every die keeps its queue. 4 over 1.6 rounds to 3, not 2.5.
        let fifths = SliceScale::new(8.0, 1.6);
        assert_eq!(die_cut_refusal(&file(vec![deep.clone()]), fifths), None);
        let mut four = deep;
        four.engine.iodepth = 4;
        assert!(die_cut_refusal(&file(vec![four]), fifths).is_some());
        // No die cut, nothing to refuse.
        assert_eq!(
            die_cut_refusal(&file(vec![shallow]), SliceScale::new(8.0, 1.0)),
            None
        );
    }

    #[test]
    fn a_drives_die_cut_is_refused_unless_its_owner_accepts_it() {
        let mut deep = job(RwPattern::RandWrite);
        deep.engine.iodepth = 32;
        let f = file(vec![deep]);
        let why = die_cut_refusal(&f, SliceScale::of_drive(8.0, 4.0, false))
            .expect("a die cut is refused random writes by default");
        assert!(
            why.contains("writes at random") && why.contains("sim.die_cut is not \"allow\""),
            "{why}"
        );
        assert_eq!(
            die_cut_refusal(&f, SliceScale::of_drive(8.0, 4.0, true)),
            None
        );
        // A capacity slice cuts no die: nothing to accept.
        assert_eq!(
            die_cut_refusal(&f, SliceScale::of_drive(8.0, 1.0, false)),
            None
        );
        // Sequential writes and random reads at a depth the dies share keep the cut.
        let mut seq = job(RwPattern::Write);
        seq.engine.iodepth = 32;
        let mut reads = job(RwPattern::RandRead);
        reads.engine.iodepth = 32;
        let f = file(vec![seq, reads]);
        assert_eq!(
            die_cut_refusal(&f, SliceScale::of_drive(8.0, 4.0, false)),
            None
        );
    }

    #[test]
    fn full_scale_is_the_original_file() {
        let f = file(vec![job(RwPattern::Read)]);
        let plan = ScalePlan::new(
            &f,
            SliceScale::FULL,
            TimedPhases::Compress,
            RegionSizes::Scale,
        );
        assert!(plan.file.is_none());
        assert!(std::ptr::eq(plan.file(&f), &f));
        assert_eq!(plan.jobs[0].back, ScaleBack::IDENTITY);
    }

    #[test]
    fn summary_names_the_slice() {
        assert_eq!(
            SliceScale::new(16.0, 1.0).summary(),
            "simulated as a 1/16 slice (capacity); figures scaled to the full drive"
        );
        assert_eq!(
            SliceScale::new(21.875, 2.0).summary(),
            "simulated as a 1/21.88 slice (capacity, and 1/2 of the dies); figures scaled to the full drive"
        );
    }
}
