//! The benchmarks people run on their own drives, measured the way those tools measure:
//! - `transfer-sweep` (after ATTO Disk Benchmark): sequential writes then reads of a small
//!   test region at each power-of-two transfer size, at a fixed queue depth;
//! - `desktop` (after CrystalDiskMark 8): a test file written first, then four tests read and
//!   four written, each a warm-up run plus N measured runs with the best kept, and idle
//!   intervals between tests in which the drive does its background work.
//!
//! Both start from a purged drive, optionally filled (`--state full`), so the same benchmark
//! shows how a new drive and a full one differ (a new drive's SLC cache takes the whole test).

use flashlab_engine::NS_PER_S;
use flashlab_report::{RunResult, DDIR_READ, DDIR_WRITE};
use flashlab_runner::RegionSizes;

use flashlab_kit::charts::{job_steps, label_bars, JobStep};
use flashlab_kit::client_options::{
    DesktopProfile, MAX_INTERVAL_NS, MAX_RUNS, MAX_TRANSFER_BYTES, MIN_TRANSFER_BYTES,
};
use flashlab_kit::grids::{spaced, values, Cols, GridSpec, READ_WRITE_BW_IOPS};
use flashlab_kit::lengths::{parse_size, parse_time};
use flashlab_kit::measure::size_label;
use flashlab_kit::measure::{LocalAxis, LocalCoord, LOCAL_WORDS};
use flashlab_kit::options::OwnOptions;
use flashlab_kit::session::Session;
use flashlab_kit::steps::{
    bw_bytes_per_s, iops, measure, purge_and_fill_with, uniform_random_line, FILL_STEPS,
};
use flashlab_kit::suite::{Outcome, RunsOn, Suite, SuiteFigures};
use flashlab_kit::Dim;
use flashlab_kit::SuiteReport;
use flashlab_kit::{
    Axis, Chart, Coord, DriveState, Measure, Series, SuiteError, SuiteOptions, Unit,
};
use flashlab_report::html::{Figure, FigureKind};

/// ATTO Disk Benchmark's default total length.
const SWEEP_REGION_BYTES: u64 = 256 << 20;
/// ATTO's default queue depth.
const SWEEP_QD: u32 = 4;
/// CrystalDiskMark's default test file.
const DESKTOP_FILE_BYTES: u64 = 1 << 30;
/// CrystalDiskMark's default measure time.
const DESKTOP_MEASURE_NS: u64 = 5 * NS_PER_S;
/// CrystalDiskMark writes its test file in 1 MiB pieces, one at a time.
const TEST_FILE_BS: u64 = 1 << 20;

/// A job over `[0, size_bytes)` of the drive.
fn region_job(
    name: &str,
    rw: &str,
    bs: u64,
    qd: u32,
    jobs: u32,
    size_bytes: u64,
    lines: &[String],
) -> String {
    // DiskSpd, which CrystalDiskMark runs, draws random offsets independently.
    let uniform = uniform_random_line(rw);
    // Both tools run on Windows: their I/O pays Windows' stack (the runner's host model
    // for fio's `windowsaio`, the engine fio uses there).
    let mut t = format!(
        "[global]\nioengine=windowsaio\ndirect=1\ngroup_reporting=1\n\n[{name}]\nrw={rw}\n{uniform}bs={bs}\niodepth={qd}\nnumjobs={jobs}\noffset=0\nsize={size_bytes}\n"
    );
    for l in lines {
        t.push_str(l);
        t.push('\n');
    }
    t
}

/// Purge, and for `full` write every LBA once sequentially.
fn prepare(s: &mut Session, state: DriveState) -> Result<(), SuiteError> {
    match state {
        DriveState::Fresh => s.purge("purge"),
        DriveState::Full => purge_and_fill_with(s, "", "128k", 1),
    }
}

/// The region a client test covers: the asked size, at most the drive, in whole sectors.
fn region_bytes(s: &Session, asked: u64) -> u64 {
    (asked.min(s.full_capacity_bytes()) / 512 * 512).max(512)
}

/// Transfer sizes from `min` to `max` (powers of two), those above `region` clamped to it
/// and measured once.
fn transfer_sizes(min: u64, max: u64, region: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut bs = min;
    while bs <= max {
        let clamped = bs.min(region);
        if sizes.last() != Some(&clamped) {
            sizes.push(clamped);
        }
        bs *= 2;
    }
    sizes
}

fn bw_iops(ddir: usize) -> impl Fn(&RunResult) -> Vec<Measure> {
    move |run| {
        vec![
            measure("bw_bytes_per_s", Unit::BytesPerS, bw_bytes_per_s(run, ddir)),
            measure("iops", Unit::Iops, iops(run, ddir)),
        ]
    }
}

pub(crate) fn transfer_sweep(s: &mut Session, opts: &SuiteOptions) -> Result<Outcome, SuiteError> {
    let c = &opts.client;
    let qd = opts.qd.unwrap_or(SWEEP_QD);
    let jobs = opts.jobs.unwrap_or(1);
    let region = region_bytes(s, c.size_bytes.unwrap_or(SWEEP_REGION_BYTES));
    let t = opts.own::<TransferSweepOptions>();
    let passes = transfer_sizes(t.min_bs_bytes, t.max_bs_bytes, region).len() as u64;
    let regions = test_region_sizes(s, region, passes)?;
    prepare(s, c.state())?;
    s.with_region_sizes(regions, |s| sweep(s, opts, region, qd, jobs))
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// The smallest `sim.scale` (to 1e-4) whose slice of a drive of `full_bytes` holds `needed`
/// bytes, or 1 (the whole drive) from half of it on. `sim.scale` cuts raw capacity, and the
/// slice's user capacity is a little under that share of the drive's (its held-back
/// blocks): a tenth more covers it.
pub(crate) fn slice_scale_holding(needed: u64, full_bytes: u64) -> f64 {
    let share = needed as f64 / full_bytes.max(1) as f64 * 1.1;
    if share >= 0.5 {
        1.0
    } else {
        (share * 1e4).ceil() / 1e4
    }
}

/// How a slice treats a benchmark's test region of `region` bytes, written `passes` times
/// over. ATTO's and AS SSD's test regions have a size of their own, not a share of the
/// drive: what they meet is the drive's write buffer, read-ahead and the work a write leaves
/// queued on the dies when the reads start, all of a fixed size or time that the slice keeps.
/// Cut by the capacity factor, the region would take `1/f` of the time to write and read
/// while that fixed part stays (the reads of a 2 GB drive's 64 MiB region at 16 KiB ran at
/// 945 MB/s whole and 573 MB/s on a half slice, cut to 32 MiB). So the region keeps its size,
/// and that holds only while everything written into it is a small part of the slice:
/// otherwise the slice's free space and dynamic SLC cache, which are shares of its capacity,
/// run out after `1/f` of the drive's amount (kept whole on a half slice, a 64 MiB region
/// rewritten 18 times wrote its 512 B pass at 22.5 MB/s whole, 16.1 MB/s on the slice). A
/// slice on which it does not hold is refused, naming the smallest that keeps it.
fn test_region_sizes(s: &Session, region: u64, passes: u64) -> Result<RegionSizes, SuiteError> {
    if s.scale().is_full() {
        return Ok(RegionSizes::Scale);
    }
    let written = region.saturating_mul(passes.max(1));
    let needed = written.saturating_mul(KEPT_REGION_SHARE);
    let slice = s.simulated_capacity_bytes();
    if needed <= slice {
        return Ok(RegionSizes::Keep);
    }
    let scale = slice_scale_holding(needed, s.full_capacity_bytes());
    Err(SuiteError::SliceCut {
        device: s.device().to_string(),
        why: format!(
            "the suite writes its {:.1} MiB test region {passes} times ({:.1} MiB in all), a size of its own rather than a share of the drive, and a slice keeps the figures only where that is at most 1/{KEPT_REGION_SHARE} of it ({:.1} MiB simulated)",
            mib(region),
            mib(written),
            mib(slice),
        ),
        scale,
    })
}

/// A sweep's outcome: its measures and one chart of read and write bandwidth against `x`.
fn read_write_outcome(
    id: &str,
    title: String,
    x: Axis,
    read_pts: Vec<(f64, f64)>,
    write_pts: Vec<(f64, f64)>,
    results: Vec<flashlab_kit::Measure>,
) -> Outcome {
    let chart = Chart {
        id: id.into(),
        title,
        x,
        y: Axis::linear("bandwidth", Unit::BytesPerS),
        series: vec![
            Series {
                name: "read".into(),
                points: read_pts,
            },
            Series {
                name: "write".into(),
                points: write_pts,
            },
        ],
        band: None,
    };
    Outcome {
        steady: None,
        results,
        charts: vec![chart],
    }
}

/// Transfer size of the compression sweep's sequential writes and reads.
const COMPRESSION_BS: u64 = 1 << 20;
/// Its queue depth (one request at a time, as AS SSD's sequential tests).
const COMPRESSION_QD: u32 = 1;
/// Its test file: AS SSD's 1 GiB.
const COMPRESSION_REGION_BYTES: u64 = 1 << 30;
/// The compressible share rises in steps of this many percent, from 0 to 100.
const COMPRESSION_STEP: usize = 10;
/// How many times the test file is written: once per compressible share.
const COMPRESSION_LEVELS: u64 = (100 / COMPRESSION_STEP + 1) as u64;

/// AS SSD's compression benchmark: the test file written sequentially, then read, with data
/// whose compressible share rises from 0 to 100 % in steps of 10 (random data with more and
/// more zeros, as AS SSD fills its blocks). A drive that compresses writes (and reads) faster
/// as the share rises; others give a flat line.
pub(crate) fn compression_sweep(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<Outcome, SuiteError> {
    let c = &opts.client;
    let qd = opts.qd.unwrap_or(COMPRESSION_QD);
    let jobs = opts.jobs.unwrap_or(1);
    let region = region_bytes(s, c.size_bytes.unwrap_or(COMPRESSION_REGION_BYTES));
    let regions = test_region_sizes(s, region, COMPRESSION_LEVELS)?;
    prepare(s, c.state())?;
    s.with_region_sizes(regions, |s| {
        let mut results = Vec::new();
        let (mut read_pts, mut write_pts) = (Vec::new(), Vec::new());
        let bs = COMPRESSION_BS.min(region);
        for percent in (0..=100u32).step_by(COMPRESSION_STEP) {
            // fio reads 0 as "random data" (its default): fresh random buffers then.
            let data = if percent == 0 {
                "refill_buffers=1".to_string()
            } else {
                format!("buffer_compress_percentage={percent}")
            };
            for (rw, ddir, points) in [
                ("write", DDIR_WRITE, &mut write_pts),
                ("read", DDIR_READ, &mut read_pts),
            ] {
                let name = format!("compress{percent}-{rw}");
                let text = region_job(&name, rw, bs, qd, jobs, region, std::slice::from_ref(&data));
                let run = s.job(&name, &text, &bw_iops(ddir))?;
                let bw = bw_bytes_per_s(&run, ddir);
                results.push(
                    measure(rw_bw_family(ddir), Unit::BytesPerS, bw)
                        .under(&[Coord::Compressible(percent)]),
                );
                points.push((f64::from(percent), bw));
            }
        }
        Ok(read_write_outcome(
            "compression-sweep-bw",
            format!(
                "Sequential bandwidth against data compressibility ({} KiB, QD{qd}, {} MiB file)",
                bs >> 10,
                region as f64 / (1u64 << 20) as f64
            ),
            Axis::linear("compressible share of the data, %", Unit::Count),
            read_pts,
            write_pts,
            results,
        ))
    })
}

/// A test region keeps its size on a slice while everything written into it is at most this
/// fraction (as 1/N) of the slice's capacity: the slice's capacity-proportional state (free
/// space, a dynamic SLC cache sized from it, 1/12 of an empty TLC drive at a quarter of its
/// free blocks) then sees it as the drive does, as a small part of itself.
const KEPT_REGION_SHARE: u64 = 16;

/// The bandwidth family of a direction: `read_bw_bytes_per_s` or `write_bw_bytes_per_s`.
pub(crate) fn rw_bw_family(ddir: usize) -> &'static str {
    if ddir == DDIR_WRITE {
        "write_bw_bytes_per_s"
    } else {
        "read_bw_bytes_per_s"
    }
}

/// The IOPS family of a direction: `read_iops` or `write_iops`.
pub(crate) fn rw_iops_family(ddir: usize) -> &'static str {
    if ddir == DDIR_WRITE {
        "write_iops"
    } else {
        "read_iops"
    }
}

/// The sweep's steps (see [`transfer_sweep`]).
fn sweep(
    s: &mut Session,
    opts: &SuiteOptions,
    region: u64,
    qd: u32,
    jobs: u32,
) -> Result<Outcome, SuiteError> {
    let c = opts.own::<TransferSweepOptions>();
    let mut results = Vec::new();
    let (mut read_pts, mut write_pts) = (Vec::new(), Vec::new());
    // ATTO writes highly compressible data, which is why compressing (SandForce) drives
    // shone in it; `--compressible` sets other data.
    let data = match opts.compressible_percent {
        None => vec!["zero_buffers=1".to_string()],
        Some(_) => Vec::new(),
    };
    for bs in transfer_sizes(c.min_bs_bytes, c.max_bs_bytes, region) {
        let label = size_label(bs);
        // ATTO writes the region at a transfer size, then reads it back.
        for (rw, ddir, points) in [
            ("write", DDIR_WRITE, &mut write_pts),
            ("read", DDIR_READ, &mut read_pts),
        ] {
            let name = format!("{label}-{rw}");
            let text = region_job(&name, rw, bs, qd, jobs, region, &data);
            let run = s.job(&name, &text, &bw_iops(ddir))?;
            let bw = bw_bytes_per_s(&run, ddir);
            let row = [Coord::Transfer(bs)];
            results.push(measure(rw_bw_family(ddir), Unit::BytesPerS, bw).under(&row));
            results.push(measure(rw_iops_family(ddir), Unit::Iops, iops(&run, ddir)).under(&row));
            points.push((bs as f64, bw));
        }
    }
    Ok(read_write_outcome(
        "transfer-sweep-bw",
        format!(
            "Sequential bandwidth against transfer size (QD{qd}, {} MiB region)",
            region as f64 / (1u64 << 20) as f64
        ),
        Axis::log("transfer size, bytes", Unit::Count),
        read_pts,
        write_pts,
        results,
    ))
}

/// One CrystalDiskMark test: sequential or random, block size, queues, threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DesktopTest {
    random: bool,
    bs: u64,
    qd: u32,
    threads: u32,
}

impl DesktopTest {
    const fn new(random: bool, bs: u64, qd: u32, threads: u32) -> Self {
        Self {
            random,
            bs,
            qd,
            threads,
        }
    }

    /// As CrystalDiskMark labels it, e.g. `SEQ1M Q8T1`, `RND4K Q32T16`.
    fn title(&self) -> String {
        self.coord().value()
    }

    /// As a key part, e.g. `seq1m_q8t1`.
    fn key(&self) -> String {
        self.coord().key()
    }

    /// The test as a row of results.
    fn coord(&self) -> Coord {
        Coord::Local(LocalCoord::new(
            &DESKTOP_TEST,
            [
                u64::from(self.random),
                self.bs,
                self.qd.into(),
                self.threads.into(),
            ],
        ))
    }
}

/// A CrystalDiskMark-style test as a row (`seq1m_q8t1`, read `SEQ1M Q8T1`): its words are
/// random (0 or 1), block size in bytes, queue depth and threads.
pub(crate) const DESKTOP_TEST: LocalAxis = LocalAxis {
    name: "desktop-test",
    dim: Dim::Test,
    key: |w| desktop_test_value(w).to_lowercase().replace(' ', "_"),
    value: desktop_test_value,
    tidy: |w| {
        vec![
            ("test", desktop_test_value(w)),
            ("block_bytes", w[1].to_string()),
            ("queue_depth", w[2].to_string()),
            ("threads", w[3].to_string()),
        ]
    },
};

fn desktop_test_value(&[random, bs, qd, threads]: &[u64; LOCAL_WORDS]) -> String {
    let kind = if random != 0 { "RND" } else { "SEQ" };
    let size = if bs >= 1 << 20 {
        format!("{}M", bs >> 20)
    } else {
        format!("{}K", bs >> 10)
    };
    format!("{kind}{size} Q{qd}T{threads}")
}

/// CrystalDiskMark 8's test sets (its settings dialog: the default set and "NVMe SSD").
fn profile_tests(profile: DesktopProfile) -> [DesktopTest; 4] {
    match profile {
        DesktopProfile::Default => [
            DesktopTest::new(false, 1 << 20, 8, 1),
            DesktopTest::new(false, 1 << 20, 1, 1),
            DesktopTest::new(true, 4096, 32, 1),
            DesktopTest::new(true, 4096, 1, 1),
        ],
        DesktopProfile::Nvme => [
            DesktopTest::new(false, 1 << 20, 8, 1),
            DesktopTest::new(false, 128 << 10, 32, 1),
            DesktopTest::new(true, 4096, 32, 16),
            DesktopTest::new(true, 4096, 1, 1),
        ],
    }
}

pub(crate) fn desktop(s: &mut Session, opts: &SuiteOptions) -> Result<Outcome, SuiteError> {
    let own = opts.own::<DesktopOptions>();
    // The preparation, the test file, every run of every test (reads and writes) and the
    // intervals between tests: what progress counts the suite's share by.
    let prepare_steps = match opts.client.state() {
        DriveState::Fresh => 1,
        DriveState::Full => FILL_STEPS,
    };
    let tests = 2 * profile_tests(opts.client.profile).len();
    let intervals = if own.interval_ns > 0 { tests - 1 } else { 0 };
    s.plan_steps(
        prepare_steps + 1 + tests * (own.runs as usize + 1) + intervals,
        0,
    );
    prepare(s, opts.client.state())?;
    desktop_pass(s, opts, "")
}

/// One CrystalDiskMark run on the device as it is: test file, then every test. Step names
/// start with `prefix`, so passes can follow each other on one device.
pub(crate) fn desktop_pass(
    s: &mut Session,
    opts: &SuiteOptions,
    prefix: &str,
) -> Result<Outcome, SuiteError> {
    let c = &opts.client;
    let own = opts.own::<DesktopOptions>();
    let file = region_bytes(s, c.size_bytes.unwrap_or(DESKTOP_FILE_BYTES));
    let measure_ns = opts.runtime_ns.unwrap_or(DESKTOP_MEASURE_NS);
    let text = region_job(
        &format!("{prefix}test-file"),
        "write",
        TEST_FILE_BS.min(file),
        1,
        1,
        file,
        &[],
    );
    s.job(&format!("{prefix}test-file"), &text, &bw_iops(DDIR_WRITE))?;
    let tests = profile_tests(c.profile);
    let mut results = Vec::new();
    let (mut read_pts, mut write_pts) = (Vec::new(), Vec::new());
    // All reads, then all writes, an interval after every test but the last.
    let order: Vec<(bool, usize)> = [false, true]
        .iter()
        .flat_map(|&w| (0..tests.len()).map(move |i| (w, i)))
        .collect();
    for (n, &(write, i)) in order.iter().enumerate() {
        let t = tests[i];
        let (dir, ddir) = if write {
            ("write", DDIR_WRITE)
        } else {
            ("read", DDIR_READ)
        };
        let rw = match (t.random, write) {
            (false, false) => "read",
            (false, true) => "write",
            (true, false) => "randread",
            (true, true) => "randwrite",
        };
        let lines = vec!["time_based=1".into(), format!("runtime={measure_ns}ns")];
        let mut best: Option<(f64, f64)> = None;
        // Run 0 prepares (CrystalDiskMark discards it); runs 1..=N are measured.
        for run_no in 0..=own.runs {
            let name = format!("{prefix}{}-{dir}-{run_no}", t.key().replace('_', "-"));
            let text = region_job(&name, rw, t.bs, t.qd, t.threads, file, &lines);
            let run = s.job(&name, &text, &bw_iops(ddir))?;
            let (bw, io) = (bw_bytes_per_s(&run, ddir), iops(&run, ddir));
            if run_no > 0 && best.is_none_or(|(b, _)| bw > b) {
                best = Some((bw, io));
            }
        }
        let (bw, io) = best.unwrap_or((0.0, 0.0));
        let row = [t.coord()];
        results.push(measure(rw_bw_family(ddir), Unit::BytesPerS, bw).under(&row));
        results.push(measure(rw_iops_family(ddir), Unit::Iops, io).under(&row));
        let point = ((i + 1) as f64, bw);
        if write {
            write_pts.push(point);
        } else {
            read_pts.push(point);
        }
        if n + 1 < order.len() && own.interval_ns > 0 {
            s.idle(&format!("{prefix}idle-{}", n + 1), own.interval_ns);
        }
    }
    let names: Vec<String> = tests
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{} {}", i + 1, t.title()))
        .collect();
    let chart = Chart {
        id: "desktop-tests".into(),
        title: format!("Best-run bandwidth per test ({})", names.join(", ")),
        x: Axis::linear("test", Unit::Count),
        y: Axis::linear("bandwidth", Unit::BytesPerS),
        series: vec![
            Series {
                name: "read".into(),
                points: read_pts,
            },
            Series {
                name: "write".into(),
                points: write_pts,
            },
        ],
        band: None,
    };
    Ok(Outcome {
        steady: None,
        results,
        charts: vec![chart],
    })
}

/// `transfer-sweep`: ATTO-style sequential transfer sizes.
pub(crate) struct TransferSweep;

impl Suite for TransferSweep {
    fn name(&self) -> &'static str {
        "transfer-sweep"
    }
    fn summary(&self) -> &'static str {
        "ATTO-style sequential read/write across transfer sizes (512 B to 64 MiB)"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn options(&self) -> &'static [&'static str] {
        &["size", "state"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <TransferSweepArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        *o.own_mut() = flashlab_kit::suite::parse_args::<TransferSweepArgs>(m)?.options()?;
        Ok(())
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[TRANSFER_SWEEP]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        transfer_sweep(s, opts)
    }
}

/// `desktop`: CrystalDiskMark's test sets.
pub(crate) struct Desktop;

impl Suite for Desktop {
    fn name(&self) -> &'static str {
        "desktop"
    }
    fn slice_caution(&self) -> Option<&'static str> {
        Some(
            "desktop: the test file is cut to 1/f on a slice, and the SLC cache folds in pieces \
             of a fixed size, so a share of the file that the drive folds before the reads can \
             stay in SLC: random reads run high (+11% on the default drive's slice of 256 \
             blocks per plane)",
        )
    }
    fn summary(&self) -> &'static str {
        "CrystalDiskMark 8 test sets on a 1 GiB test file, best of N runs"
    }
    fn report_summary(&self, o: &SuiteOptions) -> String {
        let size = o.client.size_bytes.unwrap_or(DESKTOP_FILE_BYTES);
        format!(
            "CrystalDiskMark 8 test sets on a {} test file, best of N runs",
            flashlab_device::units::format_size(size)
        )
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn options(&self) -> &'static [&'static str] {
        &["size", "profile", "state"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <DesktopArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        *o.own_mut() = flashlab_kit::suite::parse_args::<DesktopArgs>(m)?.options()?;
        Ok(())
    }
    fn axes(&self) -> &'static [&'static LocalAxis] {
        &[&DESKTOP_TEST]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[DESKTOP]
    }
    fn figures(&self, report: &SuiteReport) -> SuiteFigures {
        let figures = desktop_bars(report);
        // On the page the bars stand in for the suite's own chart of the tests.
        let replaces = if figures.is_empty() {
            Vec::new()
        } else {
            vec!["desktop-tests"]
        };
        SuiteFigures { figures, replaces }
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        desktop(s, opts)
    }
}

/// `compression-sweep`: AS SSD-style throughput against compressibility.
pub(crate) struct CompressionSweep;

impl Suite for CompressionSweep {
    fn name(&self) -> &'static str {
        "compression-sweep"
    }
    fn summary(&self) -> &'static str {
        "AS SSD-style sequential write/read of a 1 GiB file against data compressibility (0-100 %)"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn options(&self) -> &'static [&'static str] {
        &["size", "state"]
    }
    fn grids(&self) -> &'static [GridSpec] {
        &[COMPRESSION]
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        let opts = s.opts();
        compression_sweep(s, opts)
    }
}

// The grids it lays its results out in.
const TRANSFER_SWEEP: GridSpec = GridSpec {
    title: "Throughput per transfer size",
    row_header: "transfer size",
    dims: &[Dim::BlockSize],
    cols: Cols::Figures(READ_WRITE_BW_IOPS),
    row_label: values,
};

const DESKTOP: GridSpec = GridSpec {
    title: "Desktop benchmark tests",
    row_header: "test",
    dims: &[Dim::Test],
    cols: Cols::Figures(READ_WRITE_BW_IOPS),
    row_label: spaced,
};

const COMPRESSION: GridSpec = GridSpec {
    title: "Throughput per share of compressible data",
    row_header: "compressible, %",
    dims: &[Dim::CompressiblePercent],
    cols: Cols::Figures(&[
        ("write", "write_bw_bytes_per_s", None),
        ("read", "read_bw_bytes_per_s", None),
    ]),
    row_label: values,
};

/// `transfer-sweep`'s own options: the range of transfer sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferSweepOptions {
    /// Smallest transfer size of the sweep (a power of two).
    pub min_bs_bytes: u64,
    /// Largest transfer size of the sweep (a power of two).
    pub max_bs_bytes: u64,
}

impl Default for TransferSweepOptions {
    fn default() -> Self {
        Self {
            min_bs_bytes: 512,
            max_bs_bytes: 64 << 20,
        }
    }
}

// `transfer-sweep`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub(crate) struct TransferSweepArgs {
    /// transfer-sweep: smallest transfer size (a power of two).
    #[arg(long, default_value = "512")]
    min_bs: String,
    /// transfer-sweep: largest transfer size (a power of two).
    #[arg(long, default_value = "64MiB")]
    max_bs: String,
}

impl TransferSweepArgs {
    pub(crate) fn options(&self) -> Result<TransferSweepOptions, SuiteError> {
        Ok(TransferSweepOptions {
            min_bs_bytes: parse_size("--min-bs", &self.min_bs)?,
            max_bs_bytes: parse_size("--max-bs", &self.max_bs)?,
        })
    }
}

impl OwnOptions for TransferSweepOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        let range = format!("a power of two from {MIN_TRANSFER_BYTES} to {MAX_TRANSFER_BYTES}");
        for (option, v) in [
            ("--min-bs", self.min_bs_bytes),
            ("--max-bs", self.max_bs_bytes),
        ] {
            if !v.is_power_of_two() || !(MIN_TRANSFER_BYTES..=MAX_TRANSFER_BYTES).contains(&v) {
                return Err(SuiteError::BadOption {
                    option,
                    value: v.to_string(),
                    valid: range,
                });
            }
        }
        if self.min_bs_bytes > self.max_bs_bytes {
            return Err(SuiteError::BadOption {
                option: "--max-bs",
                value: self.max_bs_bytes.to_string(),
                valid: format!("at least --min-bs ({})", self.min_bs_bytes),
            });
        }
        Ok(())
    }
}

/// `desktop`'s own options: runs per test and the idle time between tests.
#[derive(Debug, Clone, PartialEq)]
pub struct DesktopOptions {
    /// Measured runs per desktop test; the best is reported.
    pub runs: u32,
    /// Idle time between desktop tests.
    pub interval_ns: u64,
}

impl Default for DesktopOptions {
    fn default() -> Self {
        Self {
            runs: 5,
            interval_ns: 5 * NS_PER_S,
        }
    }
}

// `desktop`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub(crate) struct DesktopArgs {
    /// desktop: measured runs per test; the best is reported.
    #[arg(long, default_value_t = 5)]
    runs: u32,
    /// desktop: idle time between tests (0 for none).
    #[arg(long = "test-interval", default_value = "5s")]
    test_interval: String,
}

impl DesktopArgs {
    pub(crate) fn options(&self) -> Result<DesktopOptions, SuiteError> {
        Ok(DesktopOptions {
            runs: self.runs,
            interval_ns: parse_time("--test-interval", &self.test_interval)?,
        })
    }
}

impl OwnOptions for DesktopOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        if self.runs == 0 || self.runs > MAX_RUNS {
            return Err(SuiteError::BadOption {
                option: "--runs",
                value: self.runs.to_string(),
                valid: format!("1 to {MAX_RUNS}"),
            });
        }
        if self.interval_ns > MAX_INTERVAL_NS {
            return Err(SuiteError::BadOption {
                option: "--test-interval",
                value: format!("{} ns", self.interval_ns),
                valid: "at most 1 hour".into(),
            });
        }
        Ok(())
    }
}

/// CrystalDiskMark's name of a test: `SEQ1M Q8T1`, `RND4K Q32T16`.
fn cdm_name(s: &JobStep) -> String {
    let size = if s.bs_bytes >= 1 << 20 {
        format!("{}M", s.bs_bytes >> 20)
    } else {
        format!("{}K", s.bs_bytes >> 10)
    };
    let kind = if s.random { "RND" } else { "SEQ" };
    format!("{kind}{size} Q{}T{}", s.iodepth, s.numjobs)
}

/// The desktop tests as CrystalDiskMark shows them: per test the best measured run's
/// bandwidth, a figure for reads and one for writes, the drives side by side. A test's first
/// run prepares and is not counted; a step run once (writing the test file) is not a test.
/// Whether a step is a run of a desktop test: named `<test>-read-<n>` or `<test>-write-<n>`,
/// as the desktop suite names them.
fn desktop_run(s: &JobStep) -> bool {
    let mut parts = s.name.rsplitn(3, '-');
    let run = parts.next().unwrap_or("");
    let dir = parts.next().unwrap_or("");
    !run.is_empty() && run.bytes().all(|b| b.is_ascii_digit()) && matches!(dir, "read" | "write")
}

/// The desktop tests' grouped bars (desktop's [`flashlab_kit::Suite::figures`]).
fn desktop_bars(report: &SuiteReport) -> Vec<Figure> {
    // Only the tests' runs (`<test>-<dir>-<run>`): the test file, written once at 1 MiB and
    // QD1, has SEQ1M Q1T1's shape but is not one of its runs.
    let steps = &job_steps(report)
        .into_iter()
        .filter(desktop_run)
        .collect::<Vec<_>>();
    // Per (device, test, write): the runs' bandwidths in order.
    let runs = |device: usize, test: &str, write: bool| -> Vec<f64> {
        steps
            .iter()
            .filter(|s| s.device == device && cdm_name(s) == test)
            .filter(|s| {
                if write {
                    s.write.ios > 0
                } else {
                    s.read.ios > 0
                }
            })
            .map(|s| {
                if write {
                    s.write.bw_bytes_per_s
                } else {
                    s.read.bw_bytes_per_s
                }
            })
            .collect()
    };
    let mut out = Vec::new();
    for (write, dir) in [(false, "read"), (true, "write")] {
        let mut tests: Vec<String> = Vec::new();
        // In the order the tests ran this direction (the test file is written first).
        for s in steps.iter().filter(|s| {
            if write {
                s.write.ios > 0
            } else {
                s.read.ios > 0
            }
        }) {
            let name = cdm_name(s);
            if !tests.contains(&name)
                && (0..report.devices.len()).any(|d| runs(d, &name, write).len() >= 2)
            {
                tests.push(name);
            }
        }
        if tests.is_empty() {
            continue;
        }
        let mut series = Vec::new();
        for device in 0..report.devices.len() {
            let points: Vec<(f64, f64)> = tests
                .iter()
                .enumerate()
                .filter_map(|(i, t)| {
                    let r = runs(device, t, write);
                    (r.len() >= 2).then(|| {
                        let best = r[1..].iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        (i as f64, best)
                    })
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            series.push(Series {
                name: report.devices[device].device.clone(),
                points,
            });
        }
        let mut fig = Figure::new(Chart {
            id: format!("desktop-{dir}"),
            title: format!("Best-run {dir} bandwidth per test, as CrystalDiskMark shows it"),
            x: Axis::linear("", Unit::Count),
            y: Axis::linear(format!("{dir} bandwidth"), Unit::BytesPerS),
            series,
            band: None,
        });
        fig.kind = FigureKind::Bars;
        fig.x_ticks = tests
            .iter()
            .enumerate()
            .map(|(i, t)| (i as f64, t.clone()))
            .collect();
        label_bars(&mut fig);
        fig.note = Some(
            "The best of each test's measured runs (its first run prepares and is not \
             counted), labelled in the axis's unit (MB/s = 10^6, GB/s = 10^9 bytes per \
             second)."
                .into(),
        );
        out.push(fig);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_sizes_double_and_clamp_to_the_region_once() {
        assert_eq!(
            transfer_sizes(512, 8192, 1 << 20),
            vec![512, 1024, 2048, 4096, 8192]
        );
        assert_eq!(
            transfer_sizes(1 << 20, 64 << 20, 4 << 20),
            vec![1 << 20, 2 << 20, 4 << 20]
        );
        // A region that is not a power of two is the last size.
        assert_eq!(
            transfer_sizes(1 << 20, 8 << 20, 3 << 20),
            vec![1 << 20, 2 << 20, 3 << 20]
        );
    }

    #[test]
    fn profiles_are_crystaldiskmark_8s_sets() {
        let titles = |p| profile_tests(p).map(|t| t.title());
        assert_eq!(
            titles(DesktopProfile::Default),
            ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]
        );
        assert_eq!(
            titles(DesktopProfile::Nvme),
            ["SEQ1M Q8T1", "SEQ128K Q32T1", "RND4K Q32T16", "RND4K Q1T1"]
        );
        assert_eq!(profile_tests(DesktopProfile::Nvme)[2].key(), "rnd4k_q32t16");
    }

    #[test]
    fn region_jobs_parse() {
        let text = region_job(
            "x",
            "randread",
            4096,
            32,
            16,
            1 << 30,
            &["time_based=1".into(), "runtime=5s".into()],
        );
        let file = flashlab_workload::parse_str(&text, "x.fio", &|_| None).unwrap();
        let j = &file.jobs[0];
        assert_eq!(j.control.numjobs, 16);
        assert_eq!(j.engine.iodepth, 32);
    }
}
