//! `raid-scaling` (docs/reviews.md §5): how RAID levels scale with member count. From one member
//! drive description the suite builds RAID 0 of each asked count, RAID 10 of 4 and RAID 5 of
//! each count from 3, optionally with every member behind one shared uplink, and runs 128 KiB
//! sequential and 4 KiB random writes and reads on each, on fresh and/or full members.
//!
//! Results per state × level × count × test: MB/s (sequential) or IOPS (random), and member
//! I/Os per host I/O, the RAID's cost (2 for a RAID 10 write, about 4 for a RAID 5
//! read-modify-write).

use std::collections::BTreeMap;

use flashlab_device::units::parse_bytes_per_s;
use flashlab_device::values::{ScaleSetting, Size};
use flashlab_device::{DeviceConfig, LinkKind};
use flashlab_engine::{SeedTree, NS_PER_S};
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};
use flashlab_runner::SliceScale;
use flashlab_system::{
    ComponentSpec, LinkSpec, ParityStrategy, RaidLevel, RaidParams, System, SystemConfig,
    SystemCounters,
};
use serde_json::{json, Value};

use flashlab_kit::grids::{spaced, Cols, GridSpec};
use flashlab_kit::measure::{LocalAxis, LocalCoord};
use flashlab_kit::session::Session;
use flashlab_kit::steps::{
    bw_bytes_per_s, iops, job_text, measure, purge_and_fill_with, timed, DEFAULT_QD, RAMP_NS,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::Dim;
use flashlab_kit::FreshDevice;
use flashlab_kit::{
    Axis, Chart, Coord, DriveState, Measure, Series, SuiteError, SuiteOptions, Unit,
};

/// Most members a set may have here: bounds the drives built.
pub const MAX_MEMBERS: u32 = 32;
/// Measured time of each test when `--runtime` is not given.
const TEST_NS: u64 = 5 * NS_PER_S;
/// Latency of the shared uplink (a PCIe switch or chipset hop).
const LINK_LATENCY_NS: u64 = 500;

/// A shared uplink every member sits behind.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkChoice {
    /// As given: a link kind (`pcie-gen4-x4`) or a rate (`7GB/s`).
    pub text: String,
    pub bytes_per_s: u64,
}

impl LinkChoice {
    /// A link kind (usable rate after protocol efficiency) or a bandwidth.
    pub fn parse(text: &str) -> Result<LinkChoice, SuiteError> {
        let bytes_per_s = match LinkKind::parse(text) {
            Some(k) => (k.raw_bytes_per_s() as f64 * k.default_efficiency()) as u64,
            None => parse_bytes_per_s(text).map_err(|e| SuiteError::BadOption {
                option: "--link",
                value: text.to_string(),
                valid: format!(
                    "a link kind (pcie-gen4-x4, sata-6g, ...) or a rate such as 7GB/s ({e})"
                ),
            })?,
        };
        if bytes_per_s == 0 {
            return Err(SuiteError::BadOption {
                option: "--link",
                value: text.to_string(),
                valid: "a rate above zero".into(),
            });
        }
        Ok(LinkChoice {
            text: text.to_string(),
            bytes_per_s,
        })
    }
}

/// Options of the `raid-scaling` suite.
#[derive(Debug, Clone, PartialEq)]
pub struct RaidScalingOptions {
    /// Member counts of RAID 0 (RAID 5 runs those from 3; RAID 10 runs 4 when 4 is listed).
    pub members: Vec<u32>,
    pub chunk_bytes: u64,
    /// Every member behind this shared uplink (`None`: each on its own lanes).
    pub link: Option<LinkChoice>,
    /// The member drive (`--member`, the same as `--device`; `None`: `--device` or
    /// tiny-test-1gb).
    pub member: Option<String>,
}

impl Default for RaidScalingOptions {
    fn default() -> Self {
        Self {
            members: vec![1, 2, 3, 4, 5],
            chunk_bytes: 128 << 10,
            link: None,
            member: None,
        }
    }
}

// `raid-scaling`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub(crate) struct RaidScalingArgs {
    /// raid-scaling: the member drive preset or file (same as --device; default
    /// tiny-test-1gb).
    #[arg(long)]
    member: Option<String>,
    /// raid-scaling: RAID 0 member counts, comma-separated (RAID 5 runs those from 3, RAID 10
    /// runs 4).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5")]
    members: Vec<u32>,
    /// raid-scaling: stripe chunk.
    #[arg(long, default_value = "128KiB")]
    chunk: String,
    /// raid-scaling: put every member behind one shared uplink, a link kind (pcie-gen4-x4)
    /// or a rate (7GB/s).
    #[arg(long)]
    link: Option<String>,
}

impl RaidScalingArgs {
    fn options(&self) -> Result<RaidScalingOptions, SuiteError> {
        Ok(RaidScalingOptions {
            members: self.members.clone(),
            chunk_bytes: flashlab_kit::parse_size("--chunk", &self.chunk)?,
            link: self.link.as_deref().map(LinkChoice::parse).transpose()?,
            member: self.member.clone(),
        })
    }
}

impl flashlab_kit::options::OwnOptions for RaidScalingOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        RaidScalingOptions::validate(self)
    }
}

impl RaidScalingOptions {
    pub fn validate(&self) -> Result<(), SuiteError> {
        let bad = |option, value: String, valid: &str| {
            Err(SuiteError::BadOption {
                option,
                value,
                valid: valid.into(),
            })
        };
        if self.members.is_empty() || self.members.iter().any(|&m| m == 0 || m > MAX_MEMBERS) {
            return bad(
                "--members",
                format!("{:?}", self.members),
                "member counts from 1 to 32, comma-separated",
            );
        }
        if let Some((i, m)) = flashlab_kit::options::repeated(&self.members, |&m| m) {
            return Err(flashlab_kit::options::repeated_error(
                "--members",
                m.to_string(),
                i,
            ));
        }
        if self.chunk_bytes < 4096 || !self.chunk_bytes.is_power_of_two() {
            return bad(
                "--chunk",
                self.chunk_bytes.to_string(),
                "a power of two of at least 4KiB",
            );
        }
        Ok(())
    }

    /// The options as the JSON report states them, with the states the members are tested
    /// in (`--state`, shared with the client suites).
    pub(crate) fn to_json(&self, states: &[DriveState]) -> Value {
        json!({
            "members": self.members,
            "chunk_bytes": self.chunk_bytes,
            "link": self.link.as_ref().map(|l| json!({"link": l.text, "bytes_per_s": l.bytes_per_s})),
            "states": states.iter().map(|s| s.name()).collect::<Vec<_>>(),
        })
    }

    /// The (level, count) sets to build, in report order.
    fn sets(&self) -> Vec<(RaidLevel, u32)> {
        let mut counts = self.members.clone();
        counts.sort_unstable();
        counts.dedup();
        let mut v: Vec<_> = counts.iter().map(|&n| (RaidLevel::Raid0, n)).collect();
        if counts.contains(&4) {
            v.push((RaidLevel::Raid10, 4));
        }
        v.extend(
            counts
                .iter()
                .filter(|&&n| n >= 3)
                .map(|&n| (RaidLevel::Raid5, n)),
        );
        v
    }
}

/// (state index, test index) -> RAID level -> (member count, figure) points.
type Curves = BTreeMap<(usize, usize), BTreeMap<u32, Vec<(f64, f64)>>>;

/// The four tests: key, fio rw, block size, measured direction, whether IOPS is the figure.
const TESTS: [(&str, &str, &str, usize, bool); 4] = [
    ("seq_write", "write", "128k", DDIR_WRITE, false),
    ("seq_read", "read", "128k", DDIR_READ, false),
    ("rand_write", "randwrite", "4k", DDIR_WRITE, true),
    ("rand_read", "randread", "4k", DDIR_READ, true),
];

/// The families of each test's results, in [`TESTS`] order: its throughput and the member
/// I/Os each host I/O cost.
const TEST_FAMILIES: [(&str, &str); 4] = [
    (
        "seq_write_bw_bytes_per_s",
        "seq_write_member_ios_per_host_io",
    ),
    ("seq_read_bw_bytes_per_s", "seq_read_member_ios_per_host_io"),
    ("rand_write_iops", "rand_write_member_ios_per_host_io"),
    ("rand_read_iops", "rand_read_member_ios_per_host_io"),
];

/// Least memory a member's slice is given (the smallest `sim.max_memory` a drive takes).
const MIN_MEMBER_MEMORY_BYTES: u64 = 16 << 20;

/// The member as every set builds it. A set is one simulated system: with `sim.scale =
/// "auto"` the member's slice is sized so that the largest set's members together fit the
/// member's `sim.max_memory` (at least 16 MiB each), and every set uses that one slice, so
/// counts compare like with like. An explicit `sim.scale` is the member's as given.
pub(crate) fn member_for_sets(member: &DeviceConfig, largest_set: u32) -> DeviceConfig {
    let mut m = member.clone();
    if m.sim.scale == ScaleSetting::Auto {
        let share = m.sim.max_memory.0 / u64::from(largest_set.max(1));
        m.sim.max_memory = Size(share.max(MIN_MEMBER_MEMORY_BYTES));
    }
    m
}

/// A system of `n` copies of `member` in a RAID of `level` (one member: the drive alone),
/// every member behind `link` when given.
pub(crate) fn build_config(
    member: &DeviceConfig,
    level: RaidLevel,
    n: u32,
    chunk_bytes: u64,
    link: Option<&LinkChoice>,
) -> SystemConfig {
    let names: Vec<String> = (0..n).map(|i| format!("d{i}")).collect();
    let mut components: BTreeMap<String, ComponentSpec> = names
        .iter()
        .map(|d| (d.clone(), ComponentSpec::Ssd(Box::new(member.clone()))))
        .collect();
    let root = if n == 1 {
        names[0].clone()
    } else {
        components.insert(
            "array".into(),
            ComponentSpec::Raid {
                params: RaidParams {
                    level,
                    chunk_bytes,
                    parity: ParityStrategy::Auto,
                    cpu_per_io_ns: 0,
                    cpu_threads: 1,
                    host_cache: None,
                    background_bytes_per_s: 200_000_000,
                },
                members: names.clone(),
            },
        );
        "array".into()
    };
    let links = link
        .map(|l| {
            BTreeMap::from([(
                "uplink".to_string(),
                LinkSpec {
                    bytes_per_s: l.bytes_per_s,
                    latency_ns: LINK_LATENCY_NS,
                    devices: names.clone(),
                },
            )])
        })
        .unwrap_or_default();
    SystemConfig {
        name: set_label(level, n),
        description: format!("{} of {n} x {}", level_title(level), member.name),
        root,
        components,
        links,
    }
}

fn set_label(level: RaidLevel, n: u32) -> String {
    format!("raid{}-x{n}", level.number())
}

fn level_title(level: RaidLevel) -> String {
    format!("RAID {}", level.number())
}

/// Member I/Os and host I/Os of the RAID at the root (zeros for a lone drive).
fn raid_ios(counters: &SystemCounters) -> (u64, u64) {
    counters
        .root_raid
        .as_ref()
        .map_or((0, 0), |r| (r.member_ios, r.host_reads + r.host_writes))
}

pub(crate) fn run(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let o = opts.own::<RaidScalingOptions>();
    let largest = o.members.iter().copied().max().unwrap_or(1);
    let member = &member_for_sets(s.require_config("raid-scaling")?, largest);
    // Every member is the same slice of its drive, so a set is that slice of the set of
    // whole drives: its jobs are scaled as a drive's (sizes, time, depth), or a half slice
    // would write its smaller SLC cache full in the drive's time and run fresh reads at
    // another depth per die.
    let scale = member.resolve().map_or(SliceScale::FULL, |m| {
        SliceScale::of_drive(
            m.scale.capacity_factor,
            m.scale.die_factor,
            m.scale.die_cut_allowed,
        )
    });
    // `--state` is shared with the client suites; only raid-scaling takes `both`.
    let states = &opts.client.states;
    let sets = o.sets();
    let runtime_ns = opts.runtime_ns.unwrap_or(TEST_NS);
    let ramp_ns = RAMP_NS.min(runtime_ns / 2);
    let qd_per_member = opts.qd.unwrap_or(DEFAULT_QD);
    let jobs = opts.jobs.unwrap_or(1);
    let seeds = SeedTree::new(opts.seed).child("device");
    let build = |k: usize| {
        let (level, n) = sets[k];
        let mut cfg = build_config(member, level, n, o.chunk_bytes, o.link.as_ref());
        // What the members share is cut with their dies, as a drive's link is.
        for link in cfg.links.values_mut() {
            link.bytes_per_s = (link.bytes_per_s as f64 / scale.die_factor).round() as u64;
        }
        let label = set_label(level, n);
        let system = System::build(&cfg, seeds).map_err(|error| SuiteError::System {
            device: format!("{} ({label})", member.name),
            error: Box::new(error),
        })?;
        Ok((
            system,
            FreshDevice::System(Box::new(cfg)),
            seeds.master_seed(),
        ))
    };
    // Every set is a system of its own: the sets run on threads of their own, each keeping
    // its results and curve points, merged in set order.
    let ran = s.on_fresh_devices(sets.len(), opts.threads, &[], &build, &|k, s| {
        let (level, n) = sets[k];
        let label = set_label(level, n);
        s.set_scale(scale);
        let mut results = Vec::new();
        // (state, test) -> level -> points (count, value).
        let mut curves: Curves = BTreeMap::new();
        {
            let total = sets.len() as f64;
            s.suite_span = Some((k as f64 / total, (k + 1) as f64 / total));
            // Every member keeps the same queue: the host's depth grows with the set.
            let qd = qd_per_member
                .saturating_mul(n)
                .min(flashlab_kit::options::MAX_QD);
            for (si, &state) in states.iter().enumerate() {
                let prefix = format!("{label}-{}-", state.name());
                match state {
                    DriveState::Fresh => s.purge(&format!("{prefix}purge"))?,
                    DriveState::Full => purge_and_fill_with(s, &prefix, "128k", 1)?,
                }
                for (ti, &(key, rw, bs, ddir, by_iops)) in TESTS.iter().enumerate() {
                    let name = format!("{prefix}{}", key.replace('_', "-"));
                    let text = job_text(&name, rw, bs, qd, jobs, &timed(runtime_ns, ramp_ns));
                    let (m0, h0) = raid_ios(&s.system_counters());
                    let run: RunResult = s.job(&name, &text, &|run| {
                        vec![if by_iops {
                            measure("iops", Unit::Iops, iops(run, ddir))
                        } else {
                            measure("bw_bytes_per_s", Unit::BytesPerS, bw_bytes_per_s(run, ddir))
                        }]
                    })?;
                    let (m1, h1) = raid_ios(&s.system_counters());
                    let cost = if h1 > h0 {
                        (m1 - m0) as f64 / (h1 - h0) as f64
                    } else {
                        1.0
                    };
                    let row = [
                        Coord::Phase(state.name()),
                        Coord::Local(LocalCoord::new(
                            &RAID_SET,
                            [level.number().into(), n.into(), 0, 0],
                        )),
                    ];
                    let (figure, cost_family) = TEST_FAMILIES[ti];
                    let value = if by_iops {
                        let v = iops(&run, ddir);
                        results.push(measure(figure, Unit::Iops, v).under(&row));
                        v
                    } else {
                        let v = bw_bytes_per_s(&run, ddir);
                        results.push(measure(figure, Unit::BytesPerS, v).under(&row));
                        v
                    };
                    results.push(measure(cost_family, Unit::Ratio, cost).under(&row));
                    curves
                        .entry((si, ti))
                        .or_default()
                        .entry(level.number())
                        .or_default()
                        .push((f64::from(n), value));
                }
            }
        }
        Ok((results, curves))
    })?;
    let (results, curves) = merge_sets(ran);
    let charts = charts(&o, states, &curves);
    Ok(Outcome {
        steady: None,
        results,
        charts,
    })
}

/// The sets' results in set order, and their curve points merged per chart and level.
fn merge_sets(ran: Vec<(Vec<Measure>, Curves)>) -> (Vec<Measure>, Curves) {
    let mut results = Vec::new();
    let mut curves: Curves = BTreeMap::new();
    for (set_results, set_curves) in ran {
        results.extend(set_results);
        for (chart, levels) in set_curves {
            for (level, points) in levels {
                curves
                    .entry(chart)
                    .or_default()
                    .entry(level)
                    .or_default()
                    .extend(points);
            }
        }
    }
    (results, curves)
}

/// One chart per state and test: the figure against member count, a line per level, and the
/// uplink's ceiling as a flat line when there is one.
fn charts(o: &RaidScalingOptions, states: &[DriveState], curves: &Curves) -> Vec<Chart> {
    let xs: Vec<f64> = o.sets().iter().map(|&(_, n)| f64::from(n)).collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    curves
        .iter()
        .map(|(&(si, ti), levels)| {
            let (key, _, bs, _, by_iops) = TESTS[ti];
            let state = states[si].name();
            let mut series: Vec<Series> = levels
                .iter()
                .map(|(&l, pts)| Series {
                    name: format!("RAID {l}"),
                    points: pts.clone(),
                })
                .collect();
            if let Some(link) = &o.link {
                let bs_bytes = if bs == "4k" { 4096.0 } else { 131_072.0 };
                let cap = if by_iops {
                    link.bytes_per_s as f64 / bs_bytes
                } else {
                    link.bytes_per_s as f64
                };
                series.push(Series {
                    name: format!("uplink ceiling ({})", link.text),
                    points: vec![(lo, cap), (hi, cap)],
                });
            }
            let (unit, ylabel) = if by_iops {
                (Unit::Iops, "IOPS")
            } else {
                (Unit::BytesPerS, "throughput")
            };
            Chart {
                id: format!("{state}-{}", key.replace('_', "-")),
                title: format!(
                    "{} {bs} against member count ({state} members)",
                    key.replace('_', " ")
                ),
                x: Axis::linear("members", Unit::Count),
                y: Axis::linear(ylabel, unit),
                series,
                band: None,
            }
        })
        .collect()
}

/// `raid-scaling`: RAID levels against member count.
pub(crate) struct RaidScaling;

impl Suite for RaidScaling {
    fn name(&self) -> &'static str {
        "raid-scaling"
    }
    fn summary(&self) -> &'static str {
        "RAID 0/10/5 of a member drive against member count: sequential and random MB/s, IOPS, member I/Os"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Description
    }
    fn sizes_its_slice(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [&'static str] {
        &["state"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <RaidScalingArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        *o.own_mut() = flashlab_kit::suite::parse_args::<RaidScalingArgs>(m)?.options()?;
        Ok(())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        let own = o.own::<RaidScalingOptions>();
        Some(("raid_scaling", own.to_json(&o.client.states)))
    }
    fn devices(&self, o: &SuiteOptions) -> Option<(&'static str, Vec<String>)> {
        let member = o.own::<RaidScalingOptions>().member.clone()?;
        Some(("member", vec![member]))
    }
    fn axes(&self) -> &'static [&'static LocalAxis] {
        &[&RAID_SET]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[RAID_SCALING]
    }
    fn default_devices(&self) -> &'static [&'static str] {
        &["tiny-test-1gb"]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        run(s)
    }
}

/// A RAID level and its member count (`raid5_x4`), the first two words.
pub(crate) const RAID_SET: LocalAxis = LocalAxis {
    name: "raid-set",
    dim: Dim::Raid,
    key: |w| format!("raid{}_x{}", w[0], w[1]),
    value: |w| format!("RAID {} x{}", w[0], w[1]),
    tidy: |w| {
        vec![
            ("raid_level", w[0].to_string()),
            ("members", w[1].to_string()),
        ]
    },
};

// The grids it lays its results out in.
const RAID_SCALING: GridSpec = GridSpec {
    title: "Array throughput per level and member count",
    row_header: "state, level, members",
    dims: &[Dim::Phase, Dim::Raid],
    cols: Cols::Figures(&[
        ("sequential write", "seq_write_bw_bytes_per_s", None),
        ("sequential read", "seq_read_bw_bytes_per_s", None),
        ("random write IOPS", "rand_write_iops", None),
        ("random read IOPS", "rand_read_iops", None),
    ]),
    row_label: spaced,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_set_of_auto_sized_members_fits_one_drives_memory() {
        let drive = flashlab_device::load_device_config("solidigm-d5-p5430-15.36tb", &[]).unwrap();
        let budget = drive.sim.max_memory.0;
        let member = member_for_sets(&drive, 5);
        assert_eq!(member.sim.max_memory.0, budget / 5);
        let one = member.resolve().unwrap().memory_bytes;
        assert!(5 * one <= budget, "5 x {one} bytes > {budget}");
        // A count whose share is under a drive's least memory gets that least.
        let tiny_share = member_for_sets(&drive, 1000);
        assert_eq!(tiny_share.sim.max_memory.0, MIN_MEMBER_MEMORY_BYTES);
        // An explicit slice is the user's.
        let mut explicit = drive.clone();
        explicit.sim.scale = ScaleSetting::Fraction(0.01);
        assert_eq!(member_for_sets(&explicit, 5), explicit);
    }

    #[test]
    fn sets_cover_raid0_each_count_raid10_of_4_and_raid5_from_3() {
        let o = RaidScalingOptions::default();
        let labels: Vec<String> = o.sets().iter().map(|&(l, n)| set_label(l, n)).collect();
        assert_eq!(
            labels,
            [
                "raid0-x1",
                "raid0-x2",
                "raid0-x3",
                "raid0-x4",
                "raid0-x5",
                "raid10-x4",
                "raid5-x3",
                "raid5-x4",
                "raid5-x5"
            ]
        );
    }

    #[test]
    fn links_parse_as_kinds_or_rates_and_bad_ones_say_what_is_valid() {
        assert_eq!(
            LinkChoice::parse("2GB/s").unwrap().bytes_per_s,
            2_000_000_000
        );
        assert!(LinkChoice::parse("pcie-gen4-x4").unwrap().bytes_per_s > 6_000_000_000);
        let msg = LinkChoice::parse("warp-drive").unwrap_err().to_string();
        assert!(
            msg.contains("--link") && msg.contains("pcie-gen4-x4"),
            "{msg}"
        );
    }
}
