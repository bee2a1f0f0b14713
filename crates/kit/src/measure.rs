//! Typed results. A figure is what it measures (`family`, a fixed identifier with its unit
//! last), where in the suite's layout it was measured (`row`: typed axis values such as a
//! queue depth, a block size, a step), and the family's own axis where it has one (`col`: a
//! latency percentile). Grids, charts and the tidy CSV read these fields; the flat key of the
//! JSON report, the CSV and the tables (`qd32_read_lat_p99_9_ns`) is spelt by
//! [`Measure::key`] alone.

use flashlab_engine::NS_PER_S;

use crate::Unit;

const NS_PER_MIN: u64 = 60 * NS_PER_S;

/// A named stage, part or state of a suite's layout that is not a number: an array's state,
/// a phase of a test, before and after a workload.
pub type Phase = &'static str;

/// One value on an axis of a suite's results.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Coord {
    /// Queue depth (`qd32`).
    Depth(u32),
    /// Block size of a random-mix cell, bytes (`4k`).
    Block(u64),
    /// Block size of a sequential test, bytes (`seq_1024k`).
    SeqBlock(u64),
    /// Transfer size of a sweep, bytes (`xfer_64k`).
    Transfer(u64),
    /// Size of the writes of a write-bandwidth sweep, bytes (`bs8k`).
    WriteSize(u64),
    /// Read share of a random mix, percent (`r65w35`).
    Mix(u32),
    /// A latency percentile (`p99_9`).
    Percentile(f64),
    /// Round of a repeated step, from 1 (`round_01`).
    Round(u32),
    /// Measured interval, from 1 (`interval_001`).
    Interval(u32),
    /// Step of a sweep, from 1 (`step001`).
    Step(u32),
    /// Outstanding I/Os of a load point (`load16`).
    Load(u32),
    /// Pass over a cached disk, from 1 (`pass1`).
    Pass(u32),
    /// Share of compressible data, percent (`compress30`).
    Compressible(u32),
    /// Time of random writes before recovery probes, ns (`dirty20min`).
    Dirty(u64),
    /// Idle time so far, ns (`idle30min`).
    Idle(u64),
    /// Extra spare area, a fraction of the user capacity (`op10`).
    Op(f64),
    /// Length of a measured run, ns (`run_2min`).
    RunTime(u64),
    /// A namespace, from 1 (`ns2`).
    Namespace(u32),
    /// A power state (`ps0`).
    PowerState(u32),
    /// An application profile by its name (`sql-90-10` as `sql_90_10`).
    Profile(&'static str),
    /// A test by its name (`seq-write-128k` as `seq_write_128k`).
    Test(&'static str),
    /// A named stage or part.
    Phase(Phase),
    /// A value on an axis one suite defines for itself ([`LocalAxis`]).
    Local(LocalCoord),
}

/// Words of a [`LocalCoord`]'s value: enough for a CrystalDiskMark test (kind, block size,
/// depth, threads).
pub const LOCAL_WORDS: usize = 4;

/// An axis of one suite's own, next to that suite: what it lies on for the grids, and how its
/// values are spelt in the flat key, as a reader reads them, and in the tidy CSV. The shared
/// axes are [`Coord`]'s other variants; a suite lists its own axes ([`crate::Suite::axes`]).
#[derive(Debug)]
pub struct LocalAxis {
    /// Unique among all suites' axes: the precondition cache names the axis by it.
    pub name: &'static str,
    pub dim: Dim,
    /// The value as the flat key spells it (`seq1m_q8t1`).
    pub key: fn(&[u64; LOCAL_WORDS]) -> String,
    /// The value alone, as a reader reads it (`SEQ1M Q8T1`).
    pub value: fn(&[u64; LOCAL_WORDS]) -> String,
    /// The value as tidy CSV cells: (column of [`TIDY_COLUMNS`], value).
    pub tidy: fn(&[u64; LOCAL_WORDS]) -> Vec<(&'static str, String)>,
}

/// A value on a [`LocalAxis`]: the words its functions read.
#[derive(Debug, Clone, Copy)]
pub struct LocalCoord {
    pub axis: &'static LocalAxis,
    pub words: [u64; LOCAL_WORDS],
}

impl LocalCoord {
    pub const fn new(axis: &'static LocalAxis, words: [u64; LOCAL_WORDS]) -> Self {
        LocalCoord { axis, words }
    }
}

/// Axes are the same when their names are: a name is given once.
impl PartialEq for LocalCoord {
    fn eq(&self, other: &Self) -> bool {
        self.axis.name == other.axis.name && self.words == other.words
    }
}

/// The axis a [`Coord`] lies on: a grid selects its rows by their axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    QueueDepth,
    BlockSize,
    ReadPercent,
    Percentile,
    Round,
    Interval,
    Step,
    Load,
    Pass,
    CompressiblePercent,
    Test,
    DirtyTime,
    IdleTime,
    SparePercent,
    RunTime,
    Raid,
    Namespace,
    PowerState,
    Profile,
    Phase,
}

impl Coord {
    pub fn dim(&self) -> Dim {
        match self {
            Coord::Depth(_) => Dim::QueueDepth,
            Coord::Block(_) | Coord::SeqBlock(_) | Coord::Transfer(_) | Coord::WriteSize(_) => {
                Dim::BlockSize
            }
            Coord::Mix(_) => Dim::ReadPercent,
            Coord::Percentile(_) => Dim::Percentile,
            Coord::Round(_) => Dim::Round,
            Coord::Interval(_) => Dim::Interval,
            Coord::Step(_) => Dim::Step,
            Coord::Load(_) => Dim::Load,
            Coord::Pass(_) => Dim::Pass,
            Coord::Compressible(_) => Dim::CompressiblePercent,
            Coord::Test(_) => Dim::Test,
            Coord::Dirty(_) => Dim::DirtyTime,
            Coord::Idle(_) => Dim::IdleTime,
            Coord::Op(_) => Dim::SparePercent,
            Coord::RunTime(_) => Dim::RunTime,
            Coord::Namespace(_) => Dim::Namespace,
            Coord::PowerState(_) => Dim::PowerState,
            Coord::Profile(_) => Dim::Profile,
            Coord::Phase(_) => Dim::Phase,
            Coord::Local(c) => c.axis.dim,
        }
    }

    /// The coordinate as the flat key spells it (`qd32`, `r65w35`, `seq_1024k`).
    pub fn key(&self) -> String {
        match *self {
            Coord::Depth(d) => format!("qd{d}"),
            Coord::Block(b) => size_label(b),
            Coord::SeqBlock(b) => format!("seq_{}", size_label(b)),
            Coord::Transfer(b) => format!("xfer_{}", size_label(b)),
            Coord::WriteSize(b) => format!("bs{}", write_size_label(b)),
            Coord::Mix(r) => format!("r{r}w{}", 100 - r),
            Coord::Percentile(p) => format!("p{p}").replace('.', "_"),
            Coord::Round(r) => format!("round_{r:02}"),
            Coord::Interval(i) => format!("interval_{i:03}"),
            Coord::Step(s) => format!("step{s:03}"),
            Coord::Load(l) => format!("load{l}"),
            Coord::Pass(p) => format!("pass{p}"),
            Coord::Compressible(p) => format!("compress{p}"),
            Coord::Dirty(ns) => format!("dirty{}", time_label(ns)),
            Coord::Idle(ns) => format!("idle{}", time_label(ns)),
            Coord::Op(f) => format!("op{}", pct_label(f)),
            Coord::RunTime(ns) => format!("run_{}", minutes_label(ns)),
            Coord::Namespace(n) => format!("ns{n}"),
            Coord::PowerState(p) => format!("ps{p}"),
            Coord::Profile(name) | Coord::Test(name) => name.replace('-', "_"),
            Coord::Phase(p) => p.to_string(),
            Coord::Local(c) => (c.axis.key)(&c.words),
        }
    }

    /// The value alone, as a reader reads it (`32`, `4k`, `65`, `99.9`, `SEQ1M Q8T1`): the
    /// tidy CSV's cells and the grids' row labels.
    pub fn value(&self) -> String {
        match *self {
            Coord::Depth(n)
            | Coord::Round(n)
            | Coord::Interval(n)
            | Coord::Step(n)
            | Coord::Load(n)
            | Coord::Pass(n)
            | Coord::Compressible(n)
            | Coord::Namespace(n)
            | Coord::PowerState(n)
            | Coord::Mix(n) => n.to_string(),
            Coord::Block(b) | Coord::SeqBlock(b) | Coord::Transfer(b) => size_label(b),
            Coord::WriteSize(b) => write_size_label(b),
            Coord::Percentile(p) => p.to_string(),
            Coord::Dirty(ns) | Coord::Idle(ns) => time_label(ns).replace('_', "."),
            Coord::RunTime(ns) => minutes_label(ns).replace('_', "."),
            Coord::Op(f) => pct_label(f).replace('_', "."),
            Coord::Profile(name) | Coord::Test(name) => name.to_string(),
            Coord::Phase(p) => p.to_string(),
            Coord::Local(c) => (c.axis.value)(&c.words),
        }
    }
}

/// The tidy CSV's axis columns, in their order: each holds a coordinate's value as a
/// number (sizes in bytes, times in ns, shares in percent) or a name.
pub const TIDY_COLUMNS: [&str; 22] = [
    "phase",
    "profile",
    "power_state",
    "raid_level",
    "members",
    "pass",
    "test",
    "namespace",
    "dirty_ns",
    "idle_ns",
    "extra_spare_percent",
    "run_ns",
    "compressible_percent",
    "read_percent",
    "block_bytes",
    "queue_depth",
    "load",
    "round",
    "interval",
    "step",
    "threads",
    "percentile",
];

impl Coord {
    /// The coordinate as tidy CSV cells: (column, value); a test of a desktop benchmark
    /// gives its name, block size, queue depth and threads.
    pub fn tidy(&self) -> Vec<(&'static str, String)> {
        let one = |column: &'static str, value: String| vec![(column, value)];
        match *self {
            Coord::Depth(n) => one("queue_depth", n.to_string()),
            Coord::Block(b) | Coord::SeqBlock(b) | Coord::Transfer(b) | Coord::WriteSize(b) => {
                one("block_bytes", b.to_string())
            }
            Coord::Mix(r) => one("read_percent", r.to_string()),
            Coord::Percentile(p) => one("percentile", p.to_string()),
            Coord::Round(n) => one("round", n.to_string()),
            Coord::Interval(n) => one("interval", n.to_string()),
            Coord::Step(n) => one("step", n.to_string()),
            Coord::Load(n) => one("load", n.to_string()),
            Coord::Pass(n) => one("pass", n.to_string()),
            Coord::Compressible(p) => one("compressible_percent", p.to_string()),
            Coord::Dirty(ns) => one("dirty_ns", ns.to_string()),
            Coord::Idle(ns) => one("idle_ns", ns.to_string()),
            Coord::Op(f) => one(
                "extra_spare_percent",
                ((f * 1000.0).round() / 10.0).to_string(),
            ),
            Coord::RunTime(ns) => one("run_ns", ns.to_string()),
            Coord::Namespace(n) => one("namespace", n.to_string()),
            Coord::PowerState(n) => one("power_state", n.to_string()),
            Coord::Profile(name) => one("profile", name.to_string()),
            Coord::Test(name) => one("test", name.to_string()),
            Coord::Phase(p) => one("phase", p.to_string()),
            Coord::Local(c) => (c.axis.tidy)(&c.words),
        }
    }
}

/// One measured figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// What is measured, units last (`iops`, `read_lat_avg_ns`); a family with its own axis
    /// names it without the axis value (`read_lat_ns` for the read latency percentiles).
    pub family: &'static str,
    /// Where in the suite's layout, outermost first (empty for a figure of the whole run).
    pub row: Vec<Coord>,
    /// The family's own axis value, where it has one (a percentile).
    pub col: Option<Coord>,
    pub unit: Unit,
    pub value: f64,
}

impl Measure {
    /// A figure of the whole run (or of one step), without a row.
    pub fn new(family: &'static str, unit: Unit, value: f64) -> Self {
        Measure {
            family,
            row: Vec::new(),
            col: None,
            unit,
            value,
        }
    }

    /// The same figure at `col` on the family's own axis.
    pub fn col(mut self, col: Coord) -> Self {
        self.col = Some(col);
        self
    }

    /// The same figure placed under `outer` (prepended to its row: a step's figures become
    /// the suite's, a drive's a pass's).
    pub fn under(mut self, outer: &[Coord]) -> Self {
        self.row.splice(0..0, outer.iter().copied());
        self
    }

    /// Whether this is `family` at `col` in row `row`.
    pub fn is(&self, family: &str, row: &[Coord], col: Option<Coord>) -> bool {
        self.family == family && self.row == row && self.col == col
    }

    /// The flat key: the row's coordinates, then the family with its own axis value before
    /// the unit (`qd32` + `read_lat_ns` at p99.9 → `qd32_read_lat_p99_9_ns`). The one place
    /// a key is spelt.
    pub fn key(&self) -> String {
        let mut parts: Vec<String> = self.row.iter().map(Coord::key).collect();
        parts.push(match self.col {
            None => self.family.to_string(),
            Some(col) => match self.family.rsplit_once('_') {
                Some((stem, unit)) => format!("{stem}_{}_{unit}", col.key()),
                None => format!("{}_{}", self.family, col.key()),
            },
        });
        parts.join("_")
    }
}

/// Bytes as a key part: `512b`, `4k`, `1024k`, `2m` (whole MiB above 1 MiB).
pub fn size_label(bytes: u64) -> String {
    if !bytes.is_multiple_of(1024) {
        format!("{bytes}b")
    } else if bytes > (1 << 20) && bytes.is_multiple_of(1 << 20) {
        format!("{}m", bytes >> 20)
    } else {
        format!("{}k", bytes >> 10)
    }
}

/// Write sizes in MiB from 1 MiB up: `8k`, `1m`.
pub fn write_size_label(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{}m", bytes >> 20)
    } else {
        format!("{}k", bytes >> 10)
    }
}

/// A time as a key part: whole minutes, else minutes or seconds with `_` for the point
/// (`20min`, `1_5min`, `5s`, `0_5s`).
pub fn time_label(ns: u64) -> String {
    if ns.is_multiple_of(NS_PER_MIN) {
        format!("{}min", ns / NS_PER_MIN)
    } else if ns >= NS_PER_MIN {
        format!("{}min", ns as f64 / NS_PER_MIN as f64).replace('.', "_")
    } else {
        format!("{}s", ns as f64 / NS_PER_S as f64).replace('.', "_")
    }
}

/// A fraction as a percentage key part, to a tenth: `0.025` → `2_5`.
pub fn pct_label(f: f64) -> String {
    let p = (f * 1000.0).round() / 10.0;
    format!("{p}").replace('.', "_")
}

/// A time in minutes as a key part: `2min`, `0_5min`.
pub fn minutes_label(ns: u64) -> String {
    format!("{}min", ns as f64 / NS_PER_MIN as f64).replace('.', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_put_rows_first_and_the_families_axis_before_the_unit() {
        let m = Measure::new("read_lat_ns", Unit::Ns, 1.0)
            .col(Coord::Percentile(99.9))
            .under(&[Coord::Depth(32)]);
        assert_eq!(m.key(), "qd32_read_lat_p99_9_ns");
        let m = Measure::new("iops", Unit::Iops, 1.0).under(&[Coord::Mix(65), Coord::Block(4096)]);
        assert_eq!(m.key(), "r65w35_4k_iops");
        let m = Measure::new("write_iops", Unit::Iops, 1.0)
            .under(&[Coord::Op(0.1), Coord::RunTime(2 * NS_PER_MIN)]);
        assert_eq!(m.key(), "op10_run_2min_write_iops");
        assert_eq!(Coord::Profile("sql-90-10").key(), "sql_90_10");
    }

    #[test]
    fn time_labels_are_key_safe() {
        assert_eq!(time_label(20 * NS_PER_MIN), "20min");
        assert_eq!(time_label(90 * NS_PER_S), "1_5min");
        assert_eq!(time_label(5 * NS_PER_S), "5s");
        assert_eq!(time_label(NS_PER_S / 2), "0_5s");
    }
}
