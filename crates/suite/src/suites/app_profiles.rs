//! The `app-profiles` suite: database, virtual-desktop and Iometer server workloads (the fio job templates
//! in `jobs/profiles/`) run at rising load on a preconditioned device, each profile's curve of
//! IOPS against average latency up to the highest load, the way storage reviews chart SQL,
//! Oracle and VDI profiles.
//!
//! A point is one fio job: the template with `iodepth`, `numjobs`, `ramp_time` and `runtime`
//! appended. Every load runs: a review publishes a profile's peak as the IOPS and latency at
//! the most load it ran (`top_*`). The knee (`knee_*`) is the point of most IOPS up to the
//! first point whose IOPS grow by less than `peak_gain_percent` over the previous one while
//! the average latency grows (more outstanding I/O only queues longer). Where the knee lies is
//! whatever the device's dies, buffer and garbage collection make of the mix: nothing here
//! knows.

use flashlab_engine::NS_PER_S;
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};
use serde_json::json;

use flashlab_kit::grids::{spaced, Cols, GridSpec, P99};
use flashlab_kit::options::PreconditionKind;
use flashlab_kit::session::Session;
use flashlab_kit::steps::{iops, measure, steady_chart, steady_iops, RAMP_NS, UNIFORM_RANDOM};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::Dim;
use flashlab_kit::{Axis, Chart, Coord, Measure, Series, SuiteError, Unit};

/// A family of profiles drawn on one chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileGroup {
    Sql,
    Oracle,
    VdiFullClone,
    VdiLinkedClone,
    /// Iometer's access patterns (database, file server, web server, workstation).
    Iometer,
}

impl ProfileGroup {
    pub const ALL: [ProfileGroup; 5] = [
        ProfileGroup::Sql,
        ProfileGroup::Oracle,
        ProfileGroup::VdiFullClone,
        ProfileGroup::VdiLinkedClone,
        ProfileGroup::Iometer,
    ];

    /// Stable key: the chart id is `app-profiles-<id>`.
    pub fn id(self) -> &'static str {
        match self {
            ProfileGroup::Sql => "sql",
            ProfileGroup::Oracle => "oracle",
            ProfileGroup::VdiFullClone => "vdi-full",
            ProfileGroup::VdiLinkedClone => "vdi-linked",
            ProfileGroup::Iometer => "iometer",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            ProfileGroup::Sql => "SQL Server OLTP profiles",
            ProfileGroup::Oracle => "Oracle RDBMS profiles",
            ProfileGroup::VdiFullClone => {
                "VDI full-clone profiles (boot, initial login, Monday login)"
            }
            ProfileGroup::VdiLinkedClone => {
                "VDI linked-clone profiles (boot, initial login, Monday login)"
            }
            ProfileGroup::Iometer => {
                "Iometer patterns (database, file server, web server, workstation)"
            }
        }
    }
}

/// One application profile: an ordinary fio job file with one job section, last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppProfile {
    pub name: &'static str,
    pub group: ProfileGroup,
    /// The file's text as shipped in `jobs/profiles/<name>.fio` (compiled in, so the suite
    /// does not depend on the working directory).
    pub job_text: &'static str,
}

macro_rules! profile {
    ($name:literal, $group:expr) => {
        AppProfile {
            name: $name,
            group: $group,
            job_text: include_str!(concat!("../../../../jobs/profiles/", $name, ".fio")),
        }
    };
}

/// Every shipped profile, in the order the suite runs them by default.
pub const APP_PROFILES: [AppProfile; 16] = [
    profile!("sql", ProfileGroup::Sql),
    profile!("sql-90-10", ProfileGroup::Sql),
    profile!("sql-80-20", ProfileGroup::Sql),
    profile!("oracle", ProfileGroup::Oracle),
    profile!("oracle-90-10", ProfileGroup::Oracle),
    profile!("oracle-80-20", ProfileGroup::Oracle),
    profile!("vdi-full-boot", ProfileGroup::VdiFullClone),
    profile!("vdi-full-login", ProfileGroup::VdiFullClone),
    profile!("vdi-full-monday", ProfileGroup::VdiFullClone),
    profile!("vdi-linked-boot", ProfileGroup::VdiLinkedClone),
    profile!("vdi-linked-login", ProfileGroup::VdiLinkedClone),
    profile!("vdi-linked-monday", ProfileGroup::VdiLinkedClone),
    profile!("iometer-database", ProfileGroup::Iometer),
    profile!("iometer-fileserver", ProfileGroup::Iometer),
    profile!("iometer-webserver", ProfileGroup::Iometer),
    profile!("iometer-workstation", ProfileGroup::Iometer),
];

/// The profile called `name`.
pub fn app_profile(name: &str) -> Option<&'static AppProfile> {
    APP_PROFILES.iter().find(|p| p.name == name)
}

/// The valid profile names, comma-separated.
pub fn app_profile_names() -> String {
    APP_PROFILES
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the suite does before the first point, as the report states it.
pub const PRECONDITION: &str = "purge; 128 KiB sequential writes over twice the capacity \
(QD32); 4 KiB random-write rounds (--round, --qd x --jobs) until the SNIA steady-state rule \
holds or --max-rounds; 5 s idle before each profile";

/// Most load points of one curve: bounds a run.
pub const MAX_LOADS: usize = 64;
/// Most outstanding I/Os of one point.
pub const MAX_LOAD: u32 = 65_536;
/// Measured time of each point when `--runtime` is not given.
const POINT_NS: u64 = 5 * NS_PER_S;
/// Idle time before each profile's first point, so it does not wait for the buffered writes
/// and garbage collection the preconditioning or the previous profile's last (heaviest) point
/// left behind. Sizing studies pause between workloads for the same reason (Dell's VxRail
/// VDbench runs pause 30 minutes before each).
const SETTLE_NS: u64 = 5 * NS_PER_S;

/// Options of the app-profiles suite.
#[derive(Debug, Clone, PartialEq)]
pub struct AppProfileOptions {
    /// Profiles to run, in order.
    pub profiles: Vec<String>,
    /// Outstanding I/Os of each point (queue depth × jobs), ascending.
    pub loads: Vec<u32>,
    /// A curve is past its knee when IOPS grow by less than this (percent) while latency
    /// grows.
    pub peak_gain_percent: f64,
}

impl Default for AppProfileOptions {
    fn default() -> Self {
        Self {
            profiles: APP_PROFILES.iter().map(|p| p.name.to_string()).collect(),
            loads: vec![1, 2, 4, 8, 16, 32, 64, 128, 256],
            peak_gain_percent: 5.0,
        }
    }
}

// `app-profiles`' command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct AppProfileArgs {
    /// app-profiles: profiles to run, comma-separated (default all: sql, sql-90-10,
    /// sql-80-20, oracle, oracle-90-10, oracle-80-20, vdi-full-boot, vdi-full-login,
    /// vdi-full-monday, vdi-linked-boot, vdi-linked-login, vdi-linked-monday,
    /// iometer-database, iometer-fileserver, iometer-webserver, iometer-workstation).
    #[arg(long, value_delimiter = ',')]
    profiles: Vec<String>,
    /// app-profiles: outstanding I/Os of each point (queue depth x --jobs), ascending.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256"
    )]
    loads: Vec<u32>,
    /// app-profiles: a curve's knee is its point of most IOPS up to the first load whose
    /// IOPS grow by less than this percentage over the previous load's while the average
    /// latency grows.
    #[arg(long, default_value_t = 5.0)]
    peak_gain: f64,
}

impl AppProfileArgs {
    /// Set the suite's options in `a` (checked by `AppProfileOptions::validate`).
    fn apply(&self, a: &mut AppProfileOptions) {
        if !self.profiles.is_empty() {
            a.profiles = self.profiles.iter().map(|p| p.trim().to_string()).collect();
        }
        a.loads = self.loads.clone();
        a.peak_gain_percent = self.peak_gain;
    }
}

impl flashlab_kit::options::OwnOptions for AppProfileOptions {
    fn validate(&self, common: &flashlab_kit::SuiteOptions) -> Result<(), SuiteError> {
        AppProfileOptions::validate(self, common.jobs.unwrap_or(1))
    }
}

impl AppProfileOptions {
    /// Every option in range; `jobs` is the suite's `--jobs` (each load must split evenly).
    pub fn validate(&self, jobs: u32) -> Result<(), SuiteError> {
        let bad = |option: &'static str, value: String, valid: String| {
            Err(SuiteError::BadOption {
                option,
                value,
                valid,
            })
        };
        if self.profiles.is_empty() {
            return bad(
                "--profiles",
                String::new(),
                format!("one or more of {}", app_profile_names()),
            );
        }
        if let Some(p) = self.profiles.iter().find(|p| app_profile(p).is_none()) {
            return bad(
                "--profiles",
                p.clone(),
                format!("unknown profile; valid profiles: {}", app_profile_names()),
            );
        }
        if let Some((i, p)) = self
            .profiles
            .iter()
            .enumerate()
            .find(|(i, p)| self.profiles[..*i].contains(p))
        {
            return bad(
                "--profiles",
                p.clone(),
                format!("each profile once (listed again at position {})", i + 1),
            );
        }
        let loads = || {
            self.loads
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        if self.loads.is_empty()
            || self.loads.len() > MAX_LOADS
            || self.loads.iter().any(|&l| l == 0 || l > MAX_LOAD)
            || self.loads.windows(2).any(|w| w[0] >= w[1])
        {
            return bad(
                "--loads",
                loads(),
                format!(
                    "1 to {MAX_LOADS} outstanding-I/O counts from 1 to {MAX_LOAD}, ascending \
                     (1,2,4,8,16,32,64,128,256)"
                ),
            );
        }
        if let Some(&l) = self.loads.iter().find(|&&l| l % jobs.clamp(1, l) != 0) {
            return bad(
                "--loads",
                l.to_string(),
                format!("loads from {jobs} up must be multiples of --jobs {jobs}"),
            );
        }
        if !(self.peak_gain_percent.is_finite()
            && self.peak_gain_percent >= 0.0
            && self.peak_gain_percent <= 100.0)
        {
            return bad(
                "--peak-gain",
                self.peak_gain_percent.to_string(),
                "a percentage from 0 to 100 (5)".into(),
            );
        }
        Ok(())
    }

    /// The options as the JSON report states them, with what preconditioning ran and the
    /// span the profiles ran on (`suite` holds both).
    pub(crate) fn to_json(&self, suite: &flashlab_kit::SuiteOptions) -> serde_json::Value {
        let p = &suite.precondition;
        let precondition = match p.kind {
            PreconditionKind::Pts => PRECONDITION.to_string(),
            PreconditionKind::Showdown => format!(
                "{}; {} s idle before each profile",
                super::showdown::describe(p, suite),
                SETTLE_NS / NS_PER_S
            ),
        };
        json!({
            "profiles": self.profiles,
            "loads": self.loads,
            "peak_gain_percent": self.peak_gain_percent,
            "precondition": precondition,
            "preconditioning": p.to_json(),
        })
    }
}

/// Jobs and queue depth of a point with `load` outstanding I/Os and at most `jobs` jobs:
/// fewer jobs than I/Os, each at the same depth.
pub fn split_load(load: u32, jobs: u32) -> (u32, u32) {
    let j = jobs.clamp(1, load.max(1));
    (j, load / j)
}

/// True when the curve has passed its peak at `now` after `prev` ((IOPS, average latency)):
/// IOPS grew by less than `gain_percent` while the latency grew.
pub fn past_peak(prev: (f64, f64), now: (f64, f64), gain_percent: f64) -> bool {
    now.0 < prev.0 * (1.0 + gain_percent / 100.0) && now.1 > prev.1
}

/// One point of a curve.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    load: u32,
    iops: f64,
    lat_avg_ns: f64,
    /// The larger of the read and write 99th percentiles (see [`mixed_latency`]).
    lat_p99_ns: f64,
}

/// The knee of a curve: the point of most IOPS up to the first point past the peak
/// ([`past_peak`]), the first of equals (less queueing); and whether a point past it was
/// measured (false: IOPS still rose at the last load, the knee lies further).
fn knee(points: &[Point], gain_percent: f64) -> Option<(Point, bool)> {
    let end = points
        .windows(2)
        .position(|w| {
            past_peak(
                (w[0].iops, w[0].lat_avg_ns),
                (w[1].iops, w[1].lat_avg_ns),
                gain_percent,
            )
        })
        .map(|i| i + 2);
    let upto = &points[..end.unwrap_or(points.len())];
    let best = upto.iter().fold(None::<Point>, |best, p| match best {
        Some(b) if b.iops >= p.iops => Some(b),
        _ => Some(*p),
    })?;
    Some((best, end.is_some()))
}

/// A profile's summary figures: the knee (`knee_*`, `knee_reached`), the highest load
/// (`top_*`: what a review publishes as a profile's peak, the IOPS and latency at the most
/// load it ran) and the number of points.
fn curve_measures(points: &[Point], gain_percent: f64, curve: &[Coord]) -> Vec<Measure> {
    let mut m = Vec::new();
    let (Some((knee, reached)), Some(top)) = (knee(points, gain_percent), points.last()) else {
        return m;
    };
    let families = [
        (knee, ["knee_load", "knee_iops", "knee_lat_avg_ns", "knee_lat_ns"]),
        (*top, ["top_load", "top_iops", "top_lat_avg_ns", "top_lat_ns"]),
    ];
    for (p, [load, iops, avg, p99]) in families {
        m.push(measure(load, Unit::Count, f64::from(p.load)));
        m.push(measure(iops, Unit::Iops, p.iops));
        m.push(measure(avg, Unit::Ns, p.lat_avg_ns));
        m.push(measure(p99, Unit::Ns, p.lat_p99_ns).col(Coord::Percentile(99.0)));
    }
    // 0: IOPS still rose by the gain at the last load (the knee lies further).
    m.push(measure("knee_reached", Unit::Count, f64::from(u8::from(reached))));
    m.push(measure("points", Unit::Count, points.len() as f64));
    m.into_iter().map(|x| x.under(curve)).collect()
}

/// Completion latency over reads and writes: the mean weighted by each direction's I/O
/// count, and the 99th percentile as the larger of the two directions' (an upper bound of
/// the mixed one: at that latency both directions, so their mix, have reached 99 %).
fn mixed_latency(run: &RunResult) -> (Option<f64>, Option<f64>) {
    let Some(job) = run.jobs.first() else {
        return (None, None);
    };
    let (mut sum, mut count, mut p99) = (0.0, 0u64, None::<u64>);
    for ddir in [DDIR_READ, DDIR_WRITE] {
        let n = job.total_ios(ddir);
        if let (Some(c), true) = (job.clat_ns(ddir), n > 0) {
            sum += c.mean * n as f64;
            count += n;
        }
        if let Some(&(_, v)) = job
            .clat_percentiles_ns(ddir)
            .iter()
            .find(|(q, _)| (q - 99.0).abs() < 1e-9)
        {
            p99 = Some(p99.map_or(v, |p| p.max(v)));
        }
    }
    let mean = (count > 0).then(|| sum / count as f64);
    (mean, p99.map(|v| v as f64))
}

/// A point's figures.
fn point_measures(run: &RunResult) -> Vec<Measure> {
    let (r, w) = (iops(run, DDIR_READ), iops(run, DDIR_WRITE));
    let mut m = vec![
        measure("iops", Unit::Iops, r + w),
        measure("read_iops", Unit::Iops, r),
        measure("write_iops", Unit::Iops, w),
    ];
    let (mean, p99) = mixed_latency(run);
    if let Some(v) = mean {
        m.push(measure("lat_avg_ns", Unit::Ns, v));
    }
    if let Some(v) = p99 {
        m.push(measure("lat_ns", Unit::Ns, v).col(Coord::Percentile(99.0)));
    }
    if let Some(job) = run.jobs.first() {
        for (ddir, family) in [
            (DDIR_READ, "read_lat_avg_ns"),
            (DDIR_WRITE, "write_lat_avg_ns"),
        ] {
            if let Some(c) = job.clat_ns(ddir) {
                m.push(measure(family, Unit::Ns, c.mean));
            }
        }
    }
    m
}

/// The template with the point's load and timing appended to its (last) job section, and
/// `span` (a `size=` line confining it to a partition) when the profiles run on one.
fn point_job(
    profile: &AppProfile,
    jobs: u32,
    qd: u32,
    runtime_ns: u64,
    span: Option<&str>,
) -> String {
    // A ramp of at most a second and never over half the window, so short runs stay short.
    let ramp_ns = RAMP_NS.min(runtime_ns / 2);
    // VDbench, whose profiles these are, draws random offsets independently (with repeats);
    // fio's random map would write each block once per pass.
    let mut text = format!(
        "{}\n# load of this point (flashlab app-profiles)\n{UNIFORM_RANDOM}\niodepth={qd}\n\
         numjobs={jobs}\ntime_based=1\nramp_time={ramp_ns}ns\nruntime={runtime_ns}ns\n",
        profile.job_text.trim_end()
    );
    if let Some(line) = span {
        // The job section's size= overrides the template's [global] size=100%; the
        // profile's own layout (a linked clone's replica zone) then lies within the span.
        text.push_str("# the partition the profiles run on\n");
        text.push_str(line);
        text.push('\n');
    }
    text
}

pub(crate) fn run(
    s: &mut Session,
    opts: &flashlab_kit::SuiteOptions,
) -> Result<Outcome, SuiteError> {
    let o = opts.own::<AppProfileOptions>();
    // Every profile settles, then runs all its loads.
    let (precondition_steps, round_runs) = super::showdown::precondition_steps(s, opts);
    s.plan_steps(
        precondition_steps + o.profiles.len() * (1 + o.loads.len()),
        round_runs,
    );
    let (st, mut results) = super::showdown::precondition_chosen(s, opts)?;
    if opts.precondition.kind == PreconditionKind::Pts {
        // The showdown recipe reports it among its own measures.
        results.push(measure("steady_write_iops", Unit::Iops, steady_iops(&st)));
    }
    let span = opts.precondition.span_line();
    let runtime_ns = opts.runtime_ns.unwrap_or(POINT_NS);
    let max_jobs = opts.jobs.unwrap_or(1);
    let mut curves: Vec<(&AppProfile, Vec<Point>)> = Vec::new();
    for name in &o.profiles {
        let profile = app_profile(name).ok_or_else(|| SuiteError::BadOption {
            option: "--profiles",
            value: name.clone(),
            valid: format!("unknown profile; valid profiles: {}", app_profile_names()),
        })?;
        let curve = [Coord::Profile(profile.name)];
        s.settle(&format!("{name}-settle"), SETTLE_NS);
        let mut points: Vec<Point> = Vec::new();
        for &load in &o.loads {
            let (jobs, qd) = split_load(load, max_jobs);
            let step = format!("{name}-load{load}");
            let text = point_job(profile, jobs, qd, runtime_ns, span.as_deref());
            // The drive is steady: on a slice each point keeps the drive's time.
            let run = s.steady_job(&step, &text, &point_measures)?;
            let at = [curve[0], Coord::Load(load)];
            results.extend(point_measures(&run).into_iter().map(|m| m.under(&at)));
            let (mean, p99) = mixed_latency(&run);
            points.push(Point {
                load,
                iops: iops(&run, DDIR_READ) + iops(&run, DDIR_WRITE),
                lat_avg_ns: mean.unwrap_or(0.0),
                lat_p99_ns: p99.unwrap_or(0.0),
            });
        }
        results.extend(curve_measures(&points, o.peak_gain_percent, &curve));
        curves.push((profile, points));
    }
    let mut charts = vec![steady_chart(&st)];
    charts.extend(curve_charts(&curves));
    Ok(Outcome {
        steady: Some(st),
        results,
        charts,
    })
}

/// One chart per group with a profile run: IOPS (x) against average latency (y), a line per
/// profile, points in load order.
fn curve_charts(curves: &[(&AppProfile, Vec<Point>)]) -> Vec<Chart> {
    ProfileGroup::ALL
        .iter()
        .filter(|g| curves.iter().any(|(p, _)| p.group == **g))
        .map(|&g| Chart {
            id: format!("app-profiles-{}", g.id()),
            title: format!(
                "{}: average latency against IOPS, load rising to the highest",
                g.title()
            ),
            x: Axis::linear("IOPS", Unit::Iops),
            y: Axis::linear("average latency", Unit::Ns),
            series: curves
                .iter()
                .filter(|(p, _)| p.group == g)
                .map(|(p, points)| Series {
                    name: p.name.to_string(),
                    points: points.iter().map(|q| (q.iops, q.lat_avg_ns)).collect(),
                })
                .collect(),
            band: None,
        })
        .collect()
}

/// `app-profiles`: application profiles at rising load.
pub(crate) struct AppProfiles;

impl Suite for AppProfiles {
    fn name(&self) -> &'static str {
        "app-profiles"
    }
    fn slice_caution(&self) -> Option<&'static str> {
        Some(
            "app-profiles: a point at a low load holds a few GC batches, and which of them fall \
             in it follows the blocks per plane: points at loads 2-8 move by up to 32% and the \
             highest loads by up to +8% (the default drive's slice of 256 blocks per plane, as \
             a drive built with 256 does)",
        )
    }
    fn summary(&self) -> &'static str {
        "SQL, Oracle, VDI and Iometer profiles at rising load on a preconditioned drive (--precondition pts|showdown): IOPS vs average and p99 latency, the knee and the highest load"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn options(&self) -> &'static [&'static str] {
        &["precondition", "span", "seq-time", "random-time"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <AppProfileArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(
        &self,
        m: &clap::ArgMatches,
        o: &mut flashlab_kit::SuiteOptions,
    ) -> Result<(), SuiteError> {
        flashlab_kit::suite::parse_args::<AppProfileArgs>(m)?.apply(o.own_mut());
        Ok(())
    }
    fn options_json(
        &self,
        o: &flashlab_kit::SuiteOptions,
    ) -> Option<(&'static str, serde_json::Value)> {
        Some(("app_profiles", o.own::<AppProfileOptions>().to_json(o)))
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[APP_PROFILES_GRID, APP_PROFILES_SUMMARY_GRID]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        run(s, opts)
    }
}

// The grids it lays its results out in.
const APP_PROFILES_GRID: GridSpec = GridSpec {
    title: "Application profiles: IOPS against latency per load",
    row_header: "profile, load",
    dims: &[Dim::Profile, Dim::Load],
    cols: Cols::Figures(&[
        ("IOPS", "iops", None),
        ("read IOPS", "read_iops", None),
        ("write IOPS", "write_iops", None),
        ("avg", "lat_avg_ns", None),
        ("p99", "lat_ns", P99),
        ("read avg", "read_lat_avg_ns", None),
        ("write avg", "write_lat_avg_ns", None),
    ]),
    row_label: spaced,
};

const APP_PROFILES_SUMMARY_GRID: GridSpec = GridSpec {
    title: "Application profiles: the knee and the highest load",
    row_header: "profile",
    dims: &[Dim::Profile],
    cols: Cols::Figures(&[
        ("knee load", "knee_load", None),
        ("knee IOPS", "knee_iops", None),
        ("knee avg", "knee_lat_avg_ns", None),
        ("knee p99", "knee_lat_ns", P99),
        ("top load", "top_load", None),
        ("top IOPS", "top_iops", None),
        ("top avg", "top_lat_avg_ns", None),
        ("top p99", "top_lat_ns", P99),
    ]),
    row_label: spaced,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_needs_flat_iops_and_rising_latency() {
        // IOPS doubling: still climbing.
        assert!(!past_peak((100.0, 50.0), (200.0, 52.0), 5.0));
        // 3 % more IOPS at twice the latency: past the peak.
        assert!(past_peak((100.0, 50.0), (103.0, 100.0), 5.0));
        // Fewer IOPS and more latency (a drive falling behind): past the peak.
        assert!(past_peak((100.0, 50.0), (90.0, 120.0), 5.0));
        // Flat IOPS but latency fell (noise): not a peak.
        assert!(!past_peak((100.0, 50.0), (101.0, 49.0), 5.0));
        // With 0 % any rise counts as climbing.
        assert!(!past_peak((100.0, 50.0), (100.5, 60.0), 0.0));
    }

    fn curve(v: &[(u32, f64, f64)]) -> Vec<Point> {
        v.iter()
            .map(|&(load, iops, lat)| Point {
                load,
                iops,
                lat_avg_ns: lat,
                lat_p99_ns: 3.0 * lat,
            })
            .collect()
    }

    #[test]
    fn the_knee_comes_before_the_first_flat_point_and_the_top_is_the_last_load() {
        // Climbing to load 4, flat at 8 (2 % more at twice the latency), higher again at 16.
        let points = curve(&[
            (1, 100.0, 10.0),
            (4, 300.0, 12.0),
            (8, 306.0, 25.0),
            (16, 340.0, 45.0),
            (32, 330.0, 95.0),
        ]);
        let m = curve_measures(&points, 5.0, &[Coord::Profile("sql")]);
        let get = |key: &str| {
            m.iter()
                .find(|x| x.key() == key)
                .unwrap_or_else(|| panic!("{key}"))
                .value
        };
        // The knee is the most IOPS up to the first point past it (load 8's 306).
        assert_eq!(get("sql_knee_load"), 8.0);
        assert_eq!(get("sql_knee_iops"), 306.0);
        assert_eq!(get("sql_knee_lat_avg_ns"), 25.0);
        assert_eq!(get("sql_knee_lat_p99_ns"), 75.0);
        assert_eq!(get("sql_knee_reached"), 1.0);
        // The top is the highest load whatever its IOPS, as a review publishes it.
        assert_eq!(get("sql_top_load"), 32.0);
        assert_eq!(get("sql_top_iops"), 330.0);
        assert_eq!(get("sql_top_lat_avg_ns"), 95.0);
        assert_eq!(get("sql_top_lat_p99_ns"), 285.0);
        assert_eq!(get("sql_points"), 5.0);
    }

    #[test]
    fn a_curve_still_rising_at_its_last_load_has_no_knee_reached() {
        let points = curve(&[(1, 100.0, 10.0), (2, 190.0, 11.0), (4, 350.0, 12.0)]);
        let (k, reached) = knee(&points, 5.0).unwrap();
        assert_eq!((k.load, reached), (4, false));
        assert!(knee(&[], 5.0).is_none());
        assert!(curve_measures(&[], 5.0, &[]).is_empty());
    }

    #[test]
    fn loads_split_into_equal_jobs() {
        assert_eq!(split_load(1, 1), (1, 1));
        assert_eq!(split_load(64, 1), (1, 64));
        assert_eq!(split_load(64, 4), (4, 16));
        assert_eq!(split_load(2, 4), (2, 1));
    }

    #[test]
    fn options_name_what_is_wrong() {
        assert!(AppProfileOptions::default().validate(1).is_ok());
        let cases = [
            (
                AppProfileOptions {
                    profiles: vec!["sql".into(), "mysql".into()],
                    ..Default::default()
                },
                1,
                "valid profiles: sql, sql-90-10",
            ),
            (
                AppProfileOptions {
                    profiles: vec!["sql".into(), "sql".into()],
                    ..Default::default()
                },
                1,
                "each profile once",
            ),
            (
                AppProfileOptions {
                    loads: vec![1, 4, 2],
                    ..Default::default()
                },
                1,
                "ascending",
            ),
            (
                AppProfileOptions {
                    loads: vec![1, 2, 6],
                    ..Default::default()
                },
                4,
                "multiples of --jobs 4",
            ),
            (
                AppProfileOptions {
                    peak_gain_percent: -1.0,
                    ..Default::default()
                },
                1,
                "--peak-gain",
            ),
        ];
        for (o, jobs, want) in cases {
            let e = o.validate(jobs).unwrap_err();
            assert!(e.is_bad_input());
            let msg = e.to_string();
            assert!(msg.contains(want), "{msg}");
        }
    }

    #[test]
    fn charts_group_the_profiles_run() {
        let p = |name| app_profile(name).unwrap();
        let pts = |v: &[(f64, f64)]| {
            v.iter()
                .enumerate()
                .map(|(i, &(iops, lat))| Point {
                    load: 1 << i,
                    iops,
                    lat_avg_ns: lat,
                    lat_p99_ns: 2.0 * lat,
                })
                .collect::<Vec<_>>()
        };
        let curves = vec![
            (p("sql"), pts(&[(10.0, 100.0), (20.0, 110.0)])),
            (p("vdi-linked-boot"), pts(&[(5.0, 90.0)])),
            (p("sql-80-20"), pts(&[(8.0, 120.0)])),
        ];
        let charts = curve_charts(&curves);
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["app-profiles-sql", "app-profiles-vdi-linked"]);
        assert_eq!(charts[0].series.len(), 2);
        assert_eq!(charts[0].series[0].points, [(10.0, 100.0), (20.0, 110.0)]);
        assert_eq!(charts[0].x.unit, Unit::Iops);
        assert_eq!(charts[0].y.unit, Unit::Ns);
    }

    #[test]
    fn point_jobs_parse_with_the_load_appended() {
        for p in &APP_PROFILES {
            let text = point_job(p, 4, 8, 2 * NS_PER_S, None);
            let file = flashlab_workload::parse_str(&text, "p.fio", &|_| None)
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(file.jobs.len(), 1, "{}", p.name);
            let j = &file.jobs[0];
            assert_eq!(j.id.name, p.name);
            assert_eq!(
                j.target.size,
                Some(flashlab_workload::SizeSpec::Fraction(1.0))
            );
            let spanned = point_job(p, 4, 8, 2 * NS_PER_S, Some("size=25%"));
            let file = flashlab_workload::parse_str(&spanned, "p.fio", &|_| None).unwrap();
            assert_eq!(
                file.jobs[0].target.size,
                Some(flashlab_workload::SizeSpec::Fraction(0.25)),
                "{}",
                p.name
            );
            assert_eq!((j.engine.iodepth, j.control.numjobs), (8, 4), "{}", p.name);
            assert_eq!(j.time.runtime_ns, Some(2 * NS_PER_S));
            assert_eq!(j.time.ramp_time_ns, NS_PER_S);
            assert!(j.time.time_based && j.report.group_reporting);
        }
    }
}
