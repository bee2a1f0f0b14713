//! A parsed fio job, resolved into typed values. The parser fills it; the runner and the I/O
//! generator read it. Units: bytes and nanoseconds.

/// The whole job file after parsing.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    /// Path of the file as given (for messages).
    pub path: String,
    /// The `[global]` options as written, in order, for fio's `"global options"` JSON object.
    pub global_options: Vec<(String, String)>,
    /// Jobs in file order (numjobs clones are *not* expanded here).
    pub jobs: Vec<JobSpec>,
    /// Every file read besides the one at `path`: each `include`'s, and a command line's
    /// job files, as opened (relative to the current directory). Inputs of the run, which
    /// its outputs must not overwrite.
    pub includes: Vec<String>,
}

/// fio's warning for a job whose verify read phase never starts (`log_info`, once per clone).
pub const VERIFY_NEVER_READS_WARNING: &str =
    "fio: verification read phase will never start because write phase uses all of runtime";

/// fio's note (`log_info`, once per clone as it starts) for a job whose synchronous engine
/// caps its depth.
pub const SYNCHRONOUS_DEPTH_NOTE: &str =
    "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1";

/// fio 3.33's engines that complete each I/O inside the submitting call (`FIO_SYNCIO`, and the
/// file and directory operation engines): fio keeps one I/O in flight with them whatever
/// `iodepth` says, and measures no submission latency (the call's whole time is completion
/// latency).
pub const SYNCHRONOUS_ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "mmap",
    "splice",
    "ftruncate",
    "falloc",
    "e4defrag",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "mtd",
    "dev-dax",
    "libpmem",
];

/// fio 3.33's built-in I/O engines (the `ioengine` values its HOWTO lists, platform-specific
/// ones included): a name outside them (and not `external:PATH` or a library's path, which
/// fio loads) is refused as fio refuses it ("engine ... not loadable"), so a mistyped engine
/// does not quietly run as an asynchronous one.
pub const FIO_ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "io_uring",
    "io_uring_cmd",
    "libaio",
    "posixaio",
    "solarisaio",
    "windowsaio",
    "mmap",
    "splice",
    "sg",
    "null",
    "net",
    "netsplice",
    "cpuio",
    "rdma",
    "falloc",
    "ftruncate",
    "e4defrag",
    "rados",
    "rbd",
    "http",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "mtd",
    "dev-dax",
    "external",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "libpmem",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "libzbc",
    "nbd",
    "libcufile",
    "dfs",
    "nfs",
    "exec",
    "xnvme",
    "libblkio",
    "libiscsi",
    "pmemblk",
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
];

impl JobFile {
    pub(crate) fn with_includes(mut self, includes: Vec<String>) -> Self {
        self.includes = includes;
        self
    }

    /// The warnings and notes fio prints while it sets the jobs up, one per clone as fio
    /// checks each: first those of its option fixups (every job's, as fio parses all jobs
    /// before it starts one), then those of each clone's start; the jobs run as fio runs them.
    pub fn fio_warnings(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let clones = |job: &JobSpec| 0..job.control.numjobs.max(1);
        for job in &self.jobs {
            if job.verify_never_reads() {
                out.extend(clones(job).map(|_| VERIFY_NEVER_READS_WARNING));
            }
        }
        for job in &self.jobs {
            if job.engine.iodepth_capped_from.is_some() {
                out.extend(clones(job).map(|_| SYNCHRONOUS_DEPTH_NOTE));
            }
        }
        out
    }
}

/// fio's `rw=` pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwPattern {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    /// `rw`/`readwrite`: sequential mixed.
    ReadWrite,
    /// `randrw`: random mixed.
    RandRw,
    /// `trimwrite`: trim then write the same block.
    TrimWrite,
    /// `randtrimwrite`
    RandTrimWrite,
}

impl RwPattern {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Self::RandRead | Self::RandWrite | Self::RandTrim | Self::RandRw | Self::RandTrimWrite
        )
    }

    /// fio's names for `rw=`, with the pattern each means.
    pub const NAMES: [(&'static str, RwPattern); 11] = [
        ("read", RwPattern::Read),
        ("write", RwPattern::Write),
        ("trim", RwPattern::Trim),
        ("randread", RwPattern::RandRead),
        ("randwrite", RwPattern::RandWrite),
        ("randtrim", RwPattern::RandTrim),
        ("rw", RwPattern::ReadWrite),
        ("readwrite", RwPattern::ReadWrite),
        ("randrw", RwPattern::RandRw),
        ("trimwrite", RwPattern::TrimWrite),
        ("randtrimwrite", RwPattern::RandTrimWrite),
    ];

    /// Which data directions (read, write, trim) the pattern issues.
    pub fn directions(self) -> [bool; 3] {
        match self {
            Self::Read | Self::RandRead => [true, false, false],
            Self::Write | Self::RandWrite => [false, true, false],
            Self::Trim | Self::RandTrim => [false, false, true],
            Self::ReadWrite | Self::RandRw => [true, true, false],
            Self::TrimWrite | Self::RandTrimWrite => [false, true, true],
        }
    }
}

/// Block size for one data direction.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockSize {
    Fixed(u64),
    /// `bsrange=min-max`: uniform over multiples of `min` (fio aligns to the minimum).
    Range {
        min: u64,
        max: u64,
    },
    /// `bssplit=4k/50:16k/30:...`: (size, weight in percent); weights sum to 100.
    Split(Vec<(u64, u32)>),
}

pub use crate::fio::value::SizeSpec;

/// fio's `random_distribution=`.
#[derive(Debug, Clone, PartialEq)]
pub enum RandomDistribution {
    Random,
    Zipf(f64),
    Pareto(f64),
    /// Gaussian with the given standard deviation in percent of the range (`normal:5`).
    Normal(f64),
    /// (percent of accesses, percent of range), in order, per fio `zoned:`.
    Zoned(Vec<(f64, f64)>),
    /// (percent of accesses, bytes of range) per fio `zoned_abs:`.
    ZonedAbs(Vec<(f64, u64)>),
}

/// fio's `thinktime_blocks_type`: which count of I/Os `thinktime_blocks` is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkBlocks {
    /// I/Os completed (and reaped), fio's default.
    Complete,
    /// I/Os issued.
    Issue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateProcess {
    Linear,
    Poisson,
}

/// What fio's steady-state detection watches: completed I/Os or bytes per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteadyMetric {
    Iops,
    Bw,
}

/// fio's steady-state job termination: once a second the job's IOPS (or bandwidth) over
/// the last second is recorded; once `duration_s` samples are in, the job stops as soon as
/// the window meets the criterion (every sample within `limit` of the window's mean, or the
/// least-squares slope under `limit`; `percent`: the limit is a share of the mean).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyState {
    pub metric: SteadyMetric,
    /// The criterion is the slope of the window rather than its largest deviation.
    pub slope: bool,
    /// Deviation or slope limit: IOPS, bytes per second, or percent of the mean.
    pub limit: f64,
    pub percent: bool,
    /// `steadystate_duration=` in whole seconds: samples in the window; 0 = off.
    pub duration_s: u32,
    /// `steadystate_ramp_time=`: no samples are taken before this much of the job's time.
    pub ramp_ns: u64,
}

impl Default for SteadyState {
    /// fio's default criterion (`iops:0.01%`), off until a duration is given.
    fn default() -> Self {
        SteadyState {
            metric: SteadyMetric::Iops,
            slope: false,
            limit: 0.01,
            percent: true,
            duration_s: 0,
            ramp_ns: 0,
        }
    }
}

impl SteadyState {
    pub fn enabled(&self) -> bool {
        self.duration_s > 0
    }

    /// The criterion as fio's JSON `"ss"` names it: `iops_slope:0.300000%`. fio prints
    /// its limit through a single-precision float.
    pub fn describe(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            match self.metric {
                SteadyMetric::Iops => "iops",
                SteadyMetric::Bw => "bw",
            },
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.percent { "%" } else { "" }
        )
    }
}

/// Which jobs `exitall` (and `exitall_on_error`) stop when a job ends (fio's `exit_what`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of the same reporting group.
    Group,
    /// Every job running, after which the next stonewalled jobs start.
    Stonewall,
    /// Every job: nothing later in the file runs.
    All,
}

/// One `[job]` section with `[global]` (and includes) applied, its options grouped as fio's
/// manual groups them: a new option goes into its group (and that group's `Default`, which
/// holds fio's default).
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Name, where it was defined, and the options as written.
    pub id: JobIdentity,
    /// The I/O pattern: direction, mix, randomness (fio's "I/O type").
    pub io: IoType,
    /// Block sizes and their alignment (fio's "Block size").
    pub block: BlockSizes,
    /// The data written (fio's "Buffers and memory").
    pub buffers: Buffers,
    /// Where the job does I/O and how much (fio's "Target file/device" and "I/O size").
    pub target: Target,
    /// The engine and the queue it keeps (fio's "I/O engine" and "I/O depth").
    pub engine: Engine,
    /// How long the job runs (fio's "Time related parameters").
    pub time: Timing,
    /// Rate limits, floors and think time (fio's "I/O rate").
    pub rate: Rate,
    /// Latency targets and limits (fio's "I/O latency").
    pub latency: LatencyLimits,
    /// Flushes and durable writes (fio's `fsync`, `fdatasync`, `end_fsync`, `sync`).
    pub sync: Flushes,
    /// Reading back what was written (fio's "Verification").
    pub verification: Verification,
    /// Clones, loops and how the job starts and stops with others (fio's "Job description"
    /// and "Threads, processes and job synchronization").
    pub control: JobControl,
    /// fio's steady-state detection (`steadystate=`, `ss_dur=`, `ss_ramp=`).
    pub steadystate: SteadyState,
    /// What the job's results report (fio's "Measurements and reporting").
    pub report: Reporting,
    /// The log files the job writes (fio's log options and `write_iolog`).
    pub log: Logging,
    /// fio's zoned block device options (`zonemode=zbd` and the rest).
    pub zoned: crate::zoned::ZonedOptions,
    /// fio's data placement options (NVMe FDP placement identifiers of its writes).
    pub placement: crate::placement::Placement,
    /// fio's job-weighted flow control (`flow_id`, `flow`, `flow_sleep`).
    pub flow: crate::flow::FlowOptions,
}

/// Which job this is and where it was written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobIdentity {
    pub name: String,
    /// Line in the job file where the section starts (for messages).
    pub line: usize,
    /// Where the job was defined when that is not `line` of the run's job file (a fio
    /// command-line argument, or another file of a command line): messages name this.
    pub origin: Option<String>,
    /// fio's data placement options (NVMe FDP placement identifiers of its writes).
    pub placement: crate::placement::Placement,
    /// This section's own options as written (not the globals), for fio's `"job options"`.
    pub options_as_written: Vec<(String, String)>,
    /// `description=` as written.
    pub description: Option<String>,
}

/// fio's "I/O type": the pattern, its mix and how random offsets are drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct IoType {
    pub rw: RwPattern,
    /// `randread:N`: a new random offset every N I/Os (fio's `rw_sequencer`); 1 by default.
    pub rw_sequence_count: u32,
    /// `write:4k` on a sequential pattern: bytes skipped after every I/O (0 by default).
    pub rw_seq_skip_bytes: u64,
    /// What the I/Os between two random draws do (`rw_sequencer=`).
    pub rw_sequencer: RwSequencer,
    /// Percent of mixed I/Os that are reads.
    pub rwmixread: u32,
    /// `percentage_random=` per direction: the share of a random job's I/Os at a random
    /// offset; the others follow the direction's last I/O (100: all random).
    pub percentage_random: [u8; 3],
    pub random_distribution: RandomDistribution,
    pub norandommap: bool,
    pub randrepeat: bool,
    pub randseed: Option<u64>,
    /// `random_generator=lfsr`: fio keeps no random map with it, which decides the order a
    /// verify phase reads back in.
    pub random_generator_lfsr: bool,
}

impl Default for IoType {
    fn default() -> Self {
        Self {
            rw: RwPattern::Read,
            rw_sequence_count: 1,
            rw_seq_skip_bytes: 0,
            rw_sequencer: RwSequencer::Sequential,
            rwmixread: 50,
            percentage_random: [100; 3],
            random_distribution: RandomDistribution::Random,
            norandommap: false,
            randrepeat: true,
            randseed: None,
            random_generator_lfsr: false,
        }
    }
}

/// fio's "Block size", indexed by data direction: read, write, trim.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSizes {
    pub bs: [BlockSize; 3],
    /// `blockalign=` per direction; `None` aligns to the direction's smallest block size.
    pub block_align_bytes: [Option<u64>; 3],
}

impl Default for BlockSizes {
    fn default() -> Self {
        Self {
            bs: [
                BlockSize::Fixed(4096),
                BlockSize::Fixed(4096),
                BlockSize::Fixed(4096),
            ],
            block_align_bytes: [None; 3],
        }
    }
}

/// fio's "Buffers and memory": what the written data is like.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Buffers {
    /// Share of each write's data a compressor can remove, in percent (0..=100), from fio's
    /// buffer options as fio fills buffers: `buffer_compress_percentage` when above 0, else
    /// 100 with `buffer_pattern` or `zero_buffers`, else 0 (fio's random data).
    pub compressible_percent: u8,
}

/// fio's "Target file/device" and "I/O size": the region the job works on and how much of
/// it one loop transfers.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// `filename=` as written (selects a namespace or device in later layers).
    pub filename: Option<String>,
    pub size: Option<SizeSpec>,
    pub offset: SizeSpec,
    pub offset_increment: SizeSpec,
    /// `offset_align`: an offset given as a percentage is aligned up to this (0: to the
    /// smallest block size, fio's default).
    pub offset_align_bytes: u64,
    /// `io_size=`: bytes to transfer per loop, or a percentage of the clone's region (fio:
    /// of `size`, not of the device); `None` transfers the region (`io_size=0` or `0%`).
    pub io_size: Option<SizeSpec>,
    pub number_ios: Option<u64>,
    /// `filesize=`: the job's region; `size` then only sets the default `io_size`.
    pub filesize: Option<u64>,
    /// `fill_device`: the region runs from `offset` to the end of the device, whatever `size`.
    pub fill_device: bool,
}

impl Default for Target {
    fn default() -> Self {
        Self {
            filename: None,
            size: None,
            offset: SizeSpec::Bytes(0),
            offset_increment: SizeSpec::Bytes(0),
            offset_align_bytes: 0,
            io_size: None,
            number_ios: None,
            filesize: None,
            fill_device: false,
        }
    }
}

/// fio's "I/O engine" and "I/O depth".
#[derive(Debug, Clone, PartialEq)]
pub struct Engine {
    /// fio's `ioengine` as written (fio's default `psync`).
    pub ioengine: String,
    /// Whether the engine is one of [`SYNCHRONOUS_ENGINES`]: the job records no submission
    /// latency, its I/Os' whole time being completion latency. Set by the parser from
    /// `ioengine` (a job built in code runs as an asynchronous engine would).
    pub synchronous: bool,
    pub iodepth: u32,
    /// `iodepth_low`: once the queue is full, refill it only when it has drained to this
    /// many I/Os (None: refill at once, fio's default of `iodepth`).
    pub iodepth_low: Option<u32>,
    /// `iodepth_batch_submit`: I/Os queued before fio commits them to the engine (0: the
    /// whole depth). With no host time it sets only the submit and depth distributions: fio
    /// commits what it queued before it waits for a completion.
    pub iodepth_batch_submit: u32,
    /// `iodepth_batch_complete_min`: completions fio waits for once the queue is full
    /// (0 counts as 1).
    pub iodepth_batch_complete_min: u32,
    /// `iodepth_batch_complete_max`: most completions reaped in one call (0: not set,
    /// `iodepth_batch_complete_min`).
    pub iodepth_batch_complete_max: u32,
    /// The `iodepth` written for a synchronous engine above 1, which fio caps to 1 (so
    /// `iodepth` is 1) but still reports as the latency depth.
    pub iodepth_capped_from: Option<u32>,
    /// fio's `serialize_overlap`: an I/O overlapping one of the job's I/Os in flight waits
    /// for completions until it no longer does.
    pub serialize_overlap: bool,
}

impl Default for Engine {
    fn default() -> Self {
        Self {
            ioengine: "psync".to_string(),
            synchronous: false,
            iodepth: 1,
            iodepth_low: None,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            iodepth_capped_from: None,
            serialize_overlap: false,
        }
    }
}

/// fio's "Time related parameters".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timing {
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    pub ramp_time_ns: u64,
    /// `startdelay=`: the job starts this long after its phase begins.
    pub startdelay_ns: u64,
}

/// fio's "I/O rate": limits and floors per direction (read, write, trim) and think time.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    /// Bytes per second per direction; 0 = unlimited.
    pub rate_bytes_per_s: [u64; 3],
    pub rate_iops: [u64; 3],
    /// `rate_min` / `rate_iops_min` per direction: the job fails (EIO) when a direction's
    /// rate over a `rate_cycle` falls below them; 0 = no floor.
    pub rate_min_bytes_per_s: [u64; 3],
    pub rate_iops_min: [u64; 3],
    /// `rate_cycle`: the span the minimum rates are averaged over.
    pub rate_cycle_ns: u64,
    pub rate_process: RateProcess,
    pub thinktime_ns: u64,
    pub thinktime_blocks: u32,
    /// `thinktime_blocks` was given (fio then checks it alongside `thinktime_iotime`).
    pub thinktime_blocks_set: bool,
    pub thinktime_blocks_type: ThinkBlocks,
    /// `thinktime_iotime`: think again after this much time since the last pause; 0 = off.
    pub thinktime_iotime_ns: u64,
    /// `rate_ignore_thinktime`: the rate schedule moves on by the time spent thinking.
    pub rate_ignore_thinktime: bool,
}

impl Default for Rate {
    fn default() -> Self {
        Self {
            rate_bytes_per_s: [0; 3],
            rate_iops: [0; 3],
            rate_min_bytes_per_s: [0; 3],
            rate_iops_min: [0; 3],
            rate_cycle_ns: 1_000_000_000,
            rate_process: RateProcess::Linear,
            thinktime_ns: 0,
            thinktime_blocks: 1,
            thinktime_blocks_set: false,
            thinktime_blocks_type: ThinkBlocks::Complete,
            thinktime_iotime_ns: 0,
            rate_ignore_thinktime: false,
        }
    }
}

/// fio's "I/O latency": the latency-target search and the per-I/O limit.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyLimits {
    /// fio's latency-target mode: the queue depth is searched (from 1 up to `iodepth`) for
    /// the deepest one whose I/Os meet this total latency; 0 = off.
    pub latency_target_ns: u64,
    /// Each depth is judged over this long.
    pub latency_window_ns: u64,
    /// Share of a window's I/Os that must meet the target (percent).
    pub latency_percentile: f64,
    /// `max_latency=` per direction (read, write, trim) in ns; 0 = none. A measured I/O whose
    /// total latency exceeds it stops the job with fio's ETIMEDOUT.
    pub max_latency_ns: [u64; 3],
}

impl Default for LatencyLimits {
    fn default() -> Self {
        Self {
            latency_target_ns: 0,
            latency_window_ns: 0,
            latency_percentile: 100.0,
            max_latency_ns: [0; 3],
        }
    }
}

/// fio's flush and durability options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Flushes {
    /// `fsync=N`: a flush after every N writes (0 = never).
    pub fsync_every: u32,
    /// `fdatasync=N`: a flush after every N writes, counted apart from `fsync` (a block
    /// device's data and metadata flush alike).
    pub fdatasync_every: u32,
    /// `end_fsync=1`: one flush when the job's I/O is done.
    pub end_fsync: bool,
    /// `fua`/`sync`-style durability on each write (fio's `sync=1` on block devices).
    pub write_fua: bool,
}

/// fio's "Verification".
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    /// `verify=` names a check (any method but `0`): a writing job reads back what it wrote
    /// after each loop's writes, a reading job checks what it reads.
    pub verify: bool,
    /// `do_verify` (on by default): the read-back phase runs when `verify` is set.
    pub do_verify: bool,
    /// `verify_backlog`: once this many writes are logged and not yet read back, reads of
    /// them come between the writes (0: none).
    pub verify_backlog: u64,
    /// `verify_backlog_batch`: reads per backlog batch (0: `verify_backlog`).
    pub verify_backlog_batch: u64,
}

impl Default for Verification {
    fn default() -> Self {
        Self {
            verify: false,
            do_verify: true,
            verify_backlog: 0,
            verify_backlog_batch: 0,
        }
    }
}

/// How many copies of the job run, how often, and how it starts and stops with the others.
#[derive(Debug, Clone, PartialEq)]
pub struct JobControl {
    pub numjobs: u32,
    pub loops: u32,
    pub stonewall: bool,
    /// `wait_for=NAME`: the job starts once every clone of the earlier job NAME is done.
    pub wait_for: Option<String>,
    /// Line of the `wait_for=` option (for messages).
    pub wait_for_line: usize,
    /// `exitall`: when this job ends, stop the others `exit_what` names.
    pub exitall: bool,
    /// `exitall_on_error`: when this job stops at an error, stop the others `exit_what` names.
    pub exitall_on_error: bool,
    pub exit_what: ExitWhat,
}

impl Default for JobControl {
    fn default() -> Self {
        Self {
            numjobs: 1,
            loops: 1,
            stonewall: false,
            wait_for: None,
            wait_for_line: 0,
            exitall: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
        }
    }
}

/// fio's "Measurements and reporting": what the results hold and how they are printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Reporting {
    pub group_reporting: bool,
    pub new_group: bool,
    /// `stats`: the job's results are reported (fio's `stats=0` runs it unreported).
    pub stats: bool,
    pub percentile_list: Vec<f64>,
    /// Decimals of the normal output's percentile labels: fio takes the most digits written
    /// after a decimal point in `percentile_list` (2 for its default list, 0 for `50:99`).
    pub percentile_precision: u32,
    /// fio's `clat_percentiles` (on by default), `lat_percentiles`, `slat_percentiles`:
    /// which latencies report percentiles.
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    /// fio's `disable_lat`, `disable_clat`, `disable_slat`, `disable_bw_measurement`
    /// (`gtod_reduce` sets all four): the latencies and per-I/O bandwidth samples not
    /// collected. Without total latency fio checks neither `max_latency` nor
    /// `latency_target`.
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    /// fio's `significant_figures` (1-10, default 4): digits of the normal output's IOPS,
    /// bandwidth and sizes.
    pub significant_figures: u8,
    /// fio's `unit_base=1`: the normal output's bandwidths in bits (0 and 8: bytes).
    pub unit_base_bits: bool,
    /// fio's `unified_rw_reporting`: 0 none, 1 mixed (one folded `mixed` direction in
    /// place of read, write and trim), 2 both (the directions, then the fold).
    pub unified_rw_reporting: u8,
}

impl Default for Reporting {
    fn default() -> Self {
        Self {
            group_reporting: false,
            new_group: false,
            stats: true,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
            significant_figures: 4,
            unit_base_bits: false,
            unified_rw_reporting: 0,
        }
    }
}

/// fio's log files: bandwidth, latency, IOPS, histogram and I/O logs.
#[derive(Debug, Clone, PartialEq)]
pub struct Logging {
    pub write_bw_log: Option<String>,
    pub write_lat_log: Option<String>,
    pub write_iops_log: Option<String>,
    /// `write_hist_log`: a completion-latency histogram log with this prefix.
    pub write_hist_log: Option<String>,
    /// `write_iolog`: record the I/Os issued, as a fio version 3 iolog at this path.
    pub write_iolog: Option<String>,
    pub log_avg_msec: u64,
    /// `log_hist_msec`: the histogram log's window (0: a line per I/O).
    pub log_hist_msec: u64,
    /// `log_hist_coarseness`: histogram bins summed in groups of `2^coarseness` (0 to 6).
    pub log_hist_coarseness: u8,
    /// `log_max_value=1`: averaged log windows record the window's largest sample.
    pub log_max_value: bool,
    /// `log_offset`: log lines carry the I/O's offset.
    pub log_offset: bool,
    /// `per_job_logs`: each clone writes its own log files (0: the jobs share them).
    pub per_job_logs: bool,
    /// `bwavgtime` / `iopsavgtime` in ms: the bandwidth and IOPS sample windows.
    pub bw_avg_ms: Option<u64>,
    pub iops_avg_ms: Option<u64>,
}

impl Default for Logging {
    fn default() -> Self {
        Self {
            write_bw_log: None,
            write_lat_log: None,
            write_iops_log: None,
            write_hist_log: None,
            write_iolog: None,
            log_avg_msec: 0,
            log_hist_msec: 0,
            log_hist_coarseness: 0,
            log_max_value: false,
            log_offset: false,
            per_job_logs: true,
            bw_avg_ms: None,
            iops_avg_ms: None,
        }
    }
}

/// fio's `rw_sequencer=`: after a random draw with `randread:N`, the next N-1 I/Os either
/// continue sequentially from it or repeat the same offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwSequencer {
    Sequential,
    Identical,
}

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

impl JobSpec {
    /// The job reads back what it writes (fio's verify phase after each loop's writes).
    pub fn verifies_writes(&self) -> bool {
        self.verification.verify && self.verification.do_verify && self.io.rw.directions()[1]
    }

    /// fio 3.33 warns, and never starts the read-back: a `time_based` writer keeps writing
    /// until its runtime is over (`fixup_options`; backlog reads would come while writing).
    pub fn verify_never_reads(&self) -> bool {
        self.verifies_writes() && self.time.time_based && self.verification.verify_backlog == 0
    }

    /// A job with fio's defaults for every option (`rw=read`, `bs=4k`, `iodepth=1`, ...).
    pub fn new(name: impl Into<String>, line: usize) -> Self {
        Self {
            id: JobIdentity {
                name: name.into(),
                line,
                ..JobIdentity::default()
            },
            io: IoType::default(),
            block: BlockSizes::default(),
            buffers: Buffers::default(),
            target: Target::default(),
            engine: Engine::default(),
            time: Timing::default(),
            rate: Rate::default(),
            latency: LatencyLimits::default(),
            sync: Flushes::default(),
            verification: Verification::default(),
            control: JobControl::default(),
            placement: Default::default(),
            steadystate: SteadyState::default(),
            report: Reporting::default(),
            log: Logging::default(),
            zoned: Default::default(),
            flow: Default::default(),
        }
    }
}
