//! The drive description: TOML sections, their keys (one table documents them all), loading
//! presets or files, `--set` overrides and located errors.

use serde::{Deserialize, Serialize};

use crate::values::Bandwidth;
use crate::values::{Energy, PageTime, Power, ScaleSetting, Size, Time, TransferRate};

mod keys;

pub use keys::{key_table_markdown, nearest, valid_keys, KeyDoc, KEYS, SECTIONS};

/// The whole drive description, as written in a preset or a user's TOML file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Namespace sizes (empty: one namespace of the whole user capacity).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<Size>,
    #[serde(default)]
    pub capacity: CapacitySection,
    pub nand: NandSection,
    #[serde(default)]
    pub ftl: FtlSection,
    #[serde(default)]
    pub slc_cache: SlcSection,
    #[serde(default)]
    pub buffer: BufferSection,
    #[serde(default)]
    pub link: LinkSection,
    #[serde(default)]
    pub controller: ControllerSection,
    #[serde(default)]
    pub scheduler: SchedulerSection,
    /// The conditions the drive's published four corners were measured at.
    #[serde(default, skip_serializing_if = "SpecSection::is_empty")]
    pub spec: SpecSection,
    #[serde(default)]
    pub power: PowerSection,
    /// NVMe Flexible Data Placement (left out of the resolved description when at its
    /// defaults, so drives without it describe themselves as they always did).
    #[serde(default, skip_serializing_if = "FdpSection::is_default")]
    pub fdp: FdpSection,
    #[serde(default)]
    pub sim: SimSection,
    /// Zoned namespace (NVMe ZNS); absent or disabled: a conventional drive.
    #[serde(default, skip_serializing_if = "ZnsSection::is_off")]
    pub zns: ZnsSection,
}

/// NVMe Flexible Data Placement (TP4146): reclaim units, reclaim unit handles and the
/// placement identifiers writes carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdpSection {
    #[serde(default)]
    pub enabled: bool,
    /// Reclaim unit handles (placement identifiers 0 to handles - 1).
    #[serde(default = "default_fdp_handles")]
    pub handles: u32,
    #[serde(default = "default_reclaim_groups")]
    pub reclaim_groups: u32,
    /// Reclaim unit size; absent: one erase block per (die, plane), a superblock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ru_bytes: Option<Size>,
    #[serde(default)]
    pub handle_type: FdpHandleType,
    /// The handles the host's jobs can write, when the runner knows them from the job file
    /// (not a key): a slice is sized with these handles' open blocks held, as a handle the
    /// host never writes opens no reclaim unit on the drive. `None`: every handle.
    #[serde(skip)]
    pub written_handles: Option<u32>,
}

fn default_fdp_handles() -> u32 {
    8
}
fn default_reclaim_groups() -> u32 {
    1
}

impl Default for FdpSection {
    fn default() -> Self {
        Self {
            enabled: false,
            handles: default_fdp_handles(),
            reclaim_groups: default_reclaim_groups(),
            ru_bytes: None,
            handle_type: FdpHandleType::default(),
            written_handles: None,
        }
    }
}

impl FdpSection {
    pub fn is_default(&self) -> bool {
        *self == FdpSection::default()
    }
}

/// NVMe's reclaim unit handle types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FdpHandleType {
    #[default]
    InitiallyIsolated,
    PersistentlyIsolated,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySection {
    /// Host-visible capacity; absent: raw × (1 − spare_factor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<Size>,
    /// (raw − user) / raw, used when `user` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spare_factor: Option<f64>,
    #[serde(default = "default_logical_block")]
    pub logical_block: Size,
}

fn default_logical_block() -> Size {
    Size(512)
}

impl Default for CapacitySection {
    fn default() -> Self {
        Self {
            user: None,
            spare_factor: None,
            logical_block: default_logical_block(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cell {
    Slc,
    Mlc,
    Tlc,
    Qlc,
}

impl Cell {
    pub fn cell_type(self) -> flashlab_media::CellType {
        use flashlab_media::CellType;
        match self {
            Cell::Slc => CellType::Slc,
            Cell::Mlc => CellType::Mlc,
            Cell::Tlc => CellType::Tlc,
            Cell::Qlc => CellType::Qlc,
        }
    }

    /// Rated P/E cycles when a preset does not say: typical consumer-class figures
    /// (SLC 50k-100k, 2D MLC 3k-5k, 3D TLC 1.5k-3k, 3D QLC ~1k).
    pub fn default_pe_cycles(self) -> u32 {
        match self {
            Cell::Slc => 50_000,
            Cell::Mlc => 3_000,
            Cell::Tlc => 3_000,
            Cell::Qlc => 1_000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandSection {
    pub cell: Cell,
    pub channels: u32,
    pub dies_per_channel: u32,
    #[serde(default = "default_planes")]
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_size: Size,
    #[serde(default = "default_channel_rate")]
    pub channel_rate: TransferRate,
    #[serde(default = "default_bus_width")]
    pub bus_width_bits: u32,
    #[serde(default = "default_true")]
    pub multi_plane: bool,
    /// Each plane reads on its own; false: a read occupies its whole die (see
    /// `NandGeometry::independent_plane_reads`).
    #[serde(default = "default_true")]
    pub independent_plane_reads: bool,
    /// Each plane programs on its own; false (default): a program occupies its whole die,
    /// and the die's planes program together (see
    /// `NandGeometry::independent_plane_programs`).
    #[serde(default)]
    pub independent_plane_programs: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_read: Option<PageTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_prog: Option<PageTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_erase: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_t_read: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_t_prog: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pe_cycles: Option<u32>,
    /// Share of the native blocks set aside for bad blocks (see `FtlConfig::bad_blocks`).
    #[serde(default)]
    pub bad_block_reserve: f64,
    /// Share of native blocks whose erase has failed by the rated P/E cycles (see
    /// `flashlab_ftl::WearOut`).
    #[serde(default = "default_grown_bad_at_rated")]
    pub grown_bad_at_rated: f64,
    /// Weibull shape of block failures over erase cycles.
    #[serde(default = "default_grown_bad_shape")]
    pub grown_bad_shape: f64,
    /// The JESD218 class the endurance is rated in: sets the power-off retention the data must
    /// have at the rated P/E cycles, and the temperature it holds at (see
    /// `flashlab_media::Retention`).
    #[serde(default)]
    pub retention_class: RetentionClass,
    /// Days data survive unpowered at `retention_temperature_c` at the rated P/E cycles
    /// (absent: the class's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_at_rated_days: Option<f64>,
    /// The same at a tenth of the rated cycles and below.
    #[serde(default = "default_retention_fresh_days")]
    pub retention_at_tenth_rated_days: f64,
    /// Power-off temperature of both retention figures, and of the health log's (absent: the
    /// class's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_temperature_c: Option<f64>,
}

/// JESD218's SSD application classes, as far as retention goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetentionClass {
    /// 1 year at 30 °C after the rated endurance.
    #[default]
    Client,
    /// 3 months at 40 °C after the rated endurance.
    Enterprise,
}

impl RetentionClass {
    pub fn name(self) -> &'static str {
        match self {
            RetentionClass::Client => "client",
            RetentionClass::Enterprise => "enterprise",
        }
    }
}

/// NAND data sheets quote 10 years of retention at low wear.
fn default_retention_fresh_days() -> f64 {
    3652.5
}

/// NAND data sheets guarantee a minimum of valid blocks over the rated endurance, factory
/// bad blocks included: 4,016 of 4,096 (2.0% bad) on Numonyx's NAND04GW3B2, 3,936 of 4,096
/// (3.9%) on a Micron MLC part. Half of the smaller bound failing in use by the rated cycles
/// is an estimate: parts do better than their guaranteed minimum.
fn default_grown_bad_at_rated() -> f64 {
    0.01
}
/// Wear-out failures gather towards the end of life (shape above 1): with 3, a tenth of the
/// failures expected by the rated cycles have happened at 46% of them, and four times as
/// many at twice the rated cycles as at the rated cycles (estimate).
fn default_grown_bad_shape() -> f64 {
    3.0
}

fn default_planes() -> u32 {
    2
}
fn default_channel_rate() -> TransferRate {
    TransferRate(1_200_000_000)
}
fn default_bus_width() -> u32 {
    8
}
fn default_true() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    Greedy,
    CostBenefit,
}

/// What garbage collection empties at once (`ftl.gc_unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcUnitKind {
    /// One plane's block.
    Block,
    /// The blocks a write stream opened together, one per (die, plane) unit.
    Superblock,
}

/// How the FTL picks the (die, plane) unit of the next host page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostAllocation {
    /// Every unit in turn, whatever work it has queued.
    Striped,
    /// The unit, among the next few in turn, whose die can take a program soonest.
    LeastBusy,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlSection {
    #[serde(default = "default_iu")]
    pub iu: Size,
    #[serde(default = "default_gc_policy")]
    pub gc_policy: GcPolicy,
    #[serde(default = "default_gc_unit")]
    pub gc_unit: GcUnitKind,
    /// Absent: 2 per plane of the (simulated) drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_foreground_free_blocks: Option<u32>,
    /// Absent: 4 per plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_background_free_blocks: Option<u32>,
    #[serde(default = "default_wear_level")]
    pub wear_level_threshold: u32,
    /// Die-level parity (RAIN / XOR stripes): pages per stripe, the last one parity (0: none).
    #[serde(default)]
    pub parity_stripe_pages: u32,
    /// Host idle time before background work (idle GC, folding) starts.
    #[serde(default = "default_background_after_idle")]
    pub background_after_idle: Time,
    /// Share of simulated time background GC may take beside host commands while fewer
    /// blocks than `gc_background_free_blocks` are free (0: only when idle).
    #[serde(default = "default_gc_busy_share")]
    pub gc_background_busy_share: f64,
    #[serde(default = "default_host_allocation")]
    pub host_allocation: HostAllocation,
}

fn default_iu() -> Size {
    Size(4096)
}
fn default_gc_policy() -> GcPolicy {
    GcPolicy::Greedy
}
/// Blocks by default: superblock GC moves the calibration set (docs/explain-gc.md, "Block
/// size and one-die victims").
fn default_gc_unit() -> GcUnitKind {
    GcUnitKind::Block
}
fn default_host_allocation() -> HostAllocation {
    HostAllocation::Striped
}
fn default_wear_level() -> u32 {
    500
}
/// Firmware treats a pause as idle time only once it outlasts the gaps of a busy host (QD1
/// think time, completions held by a shared link: microseconds to a few milliseconds);
/// starting background work in every short gap puts the next command behind it.
fn default_background_after_idle() -> Time {
    Time(10_000_000)
}

/// Off by default: a drive collects garbage beside host commands only where a preset says so
/// (see `docs/calibration.md` for what it does to the presets that set it).
fn default_gc_busy_share() -> f64 {
    0.0
}

impl Default for FtlSection {
    fn default() -> Self {
        Self {
            iu: default_iu(),
            gc_policy: default_gc_policy(),
            gc_unit: default_gc_unit(),
            gc_foreground_free_blocks: None,
            gc_background_free_blocks: None,
            wear_level_threshold: default_wear_level(),
            parity_stripe_pages: 0,
            background_after_idle: default_background_after_idle(),
            gc_background_busy_share: default_gc_busy_share(),
            host_allocation: default_host_allocation(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlcSection {
    /// SLC-mode capacity of blocks kept in SLC mode, outside user capacity.
    #[serde(rename = "static", default = "zero_size")]
    pub static_size: Size,
    #[serde(default)]
    pub dynamic: bool,
    #[serde(default = "default_dynamic_fraction")]
    pub dynamic_max_fraction: f64,
    /// What host writes do once the cache is full (see [`SlcWhenFull`]).
    #[serde(default)]
    pub when_full: SlcWhenFull,
}

/// What a drive does with host writes that find its SLC cache full.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlcWhenFull {
    /// Straight to native blocks; the cache folds in idle time.
    #[default]
    Direct,
    /// Fold the cache's oldest data into native blocks while the host writes and keep
    /// writing the host's data in SLC mode.
    Fold,
}

fn zero_size() -> Size {
    Size(0)
}
fn default_dynamic_fraction() -> f64 {
    0.25
}

impl Default for SlcSection {
    fn default() -> Self {
        Self {
            static_size: zero_size(),
            dynamic: false,
            dynamic_max_fraction: default_dynamic_fraction(),
            when_full: SlcWhenFull::Direct,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSection {
    #[serde(default = "default_buffer")]
    pub size: Size,
    #[serde(default)]
    pub plp: bool,
}

fn default_buffer() -> Size {
    Size(16 << 20)
}

impl Default for BufferSection {
    fn default() -> Self {
        Self {
            size: default_buffer(),
            plp: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSection {
    #[serde(default = "default_link")]
    pub kind: String,
    /// Absent: 0.93 for SATA, 0.86 for PCIe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_efficiency: Option<f64>,
}

fn default_link() -> String {
    "pcie-gen4-x4".to_string()
}

impl Default for LinkSection {
    fn default() -> Self {
        Self {
            kind: default_link(),
            protocol_efficiency: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerSection {
    #[serde(default = "default_overhead")]
    pub command_overhead: Time,
    #[serde(default = "default_max_iops")]
    pub max_iops: u64,
    /// Absent: 32 on SATA (NCQ), 1024 on PCIe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    /// Data path from flash to host (ECC decode, DMA); absent: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bandwidth: Option<Bandwidth>,
    /// Data path from host to flash (DMA, ECC encode, compression); absent: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bandwidth: Option<Bandwidth>,
    /// ECC decoding of data read from cells in their native (multi-bit) mode: every page
    /// such a read moves passes the controller's LDPC decoders at this rate; data read in
    /// SLC mode decodes in fewer iterations and is not held. Absent: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_decode_bandwidth: Option<Bandwidth>,
    /// Firmware time of one read command on one core.
    #[serde(default = "zero_time", skip_serializing_if = "is_zero_time")]
    pub read_cpu: Time,
    /// Firmware time of one write command on one core (map update, buffer management).
    #[serde(default = "zero_time", skip_serializing_if = "is_zero_time")]
    pub write_cpu: Time,
    /// Firmware time per IU moved by GC, folding or wear levelling.
    #[serde(default = "zero_time", skip_serializing_if = "is_zero_time")]
    pub relocation_cpu: Time,
    /// Embedded cores running the firmware's per-command work.
    #[serde(default = "default_cores")]
    pub cores: u32,
    /// DRAM holding recently read codewords and read-ahead data.
    #[serde(default = "default_read_buffer")]
    pub read_buffer: Size,
    /// Bytes read ahead of a detected sequential read stream (0: off).
    #[serde(default = "default_read_ahead")]
    pub read_ahead: Size,
    /// DRAM for the logical-to-physical map; absent: the whole map is in DRAM. Smaller than
    /// the map (4 bytes per IU), the map is paged: translation pages (one IU of entries each)
    /// live in flash and a CLOCK cache of them in DRAM (see `mapcache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_cache: Option<Size>,
    /// The controller compresses each IU of written data and stores it in as many granules
    /// of this size as the compressed data fills (SandForce's DuraWrite); absent: no
    /// compression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_granule: Option<Size>,
}

/// Eight read-ahead windows: each of the detector's four streams keeps its window and the
/// half-window before it in DRAM, and random reads of a drive-sized span almost never hit.
fn default_read_buffer() -> Size {
    Size(2 << 20)
}
/// Enough pages in flight to keep a sequential stream of small reads above QD/tR: 256 KiB is
/// 16 pages of 16 KiB, one per die of a 16-die drive.
fn default_read_ahead() -> Size {
    Size(256 << 10)
}

fn zero_time() -> Time {
    Time(0)
}
fn is_zero_time(t: &Time) -> bool {
    t.0 == 0
}
fn default_cores() -> u32 {
    1
}

fn default_overhead() -> Time {
    Time(5_000)
}
fn default_max_iops() -> u64 {
    1_000_000
}

impl Default for ControllerSection {
    fn default() -> Self {
        Self {
            command_overhead: default_overhead(),
            max_iops: default_max_iops(),
            queue_depth: None,
            read_bandwidth: None,
            write_bandwidth: None,
            native_decode_bandwidth: None,
            read_cpu: zero_time(),
            write_cpu: zero_time(),
            relocation_cpu: zero_time(),
            cores: default_cores(),
            read_buffer: default_read_buffer(),
            read_ahead: default_read_ahead(),
            map_cache: None,
            compression_granule: None,
        }
    }
}

/// The conditions the drive's published four corners were measured at, one per corner:
/// `"<state> QD<depth>x<jobs>"`, the state `fresh` (secure-erased, a test region written
/// once), `full` (every LBA written sequentially) or `steady` (random writes to the steady
/// state). A suite that runs the corners runs each at its depth and jobs; a report shows
/// each published figure with its condition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecSection {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_read: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_write: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rand_read: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rand_write: Option<String>,
}

/// State of a drive a published figure was measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecState {
    Fresh,
    Full,
    Steady,
}

impl SpecState {
    pub fn as_str(self) -> &'static str {
        match self {
            SpecState::Fresh => "fresh",
            SpecState::Full => "full",
            SpecState::Steady => "steady",
        }
    }
}

/// One published figure's measurement condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecCondition {
    pub state: SpecState,
    pub qd: u32,
    pub jobs: u32,
}

impl std::fmt::Display for SpecCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} QD{}x{}", self.state.as_str(), self.qd, self.jobs)
    }
}

/// The form every `spec` key takes, for error messages.
pub const SPEC_CONDITION_FORM: &str =
    "\"<fresh|full|steady> QD<depth>x<jobs>\", depth 1-65536 and jobs 1-256 (\"steady QD64x4\")";

impl SpecSection {
    fn is_empty(&self) -> bool {
        *self == SpecSection::default()
    }

    /// The keys and their values, in corner order (`seq-read-128k`, `seq-write-128k`,
    /// `rand-read-4k`, `rand-write-4k`).
    pub fn keys(&self) -> [(&'static str, &Option<String>); 4] {
        [
            ("spec.seq_read", &self.seq_read),
            ("spec.seq_write", &self.seq_write),
            ("spec.rand_read", &self.rand_read),
            ("spec.rand_write", &self.rand_write),
        ]
    }

    /// The condition of the corner a four-corners step names (`seq-read-128k` …), if the
    /// drive records it. Err: the key and its value, which is not of the form.
    pub fn condition(&self, corner: &str) -> Result<Option<SpecCondition>, (&'static str, String)> {
        let i = match corner {
            "seq-read-128k" => 0,
            "seq-write-128k" => 1,
            "rand-read-4k" => 2,
            "rand-write-4k" => 3,
            _ => return Ok(None),
        };
        let (key, value) = self.keys()[i];
        match value {
            None => Ok(None),
            Some(v) => parse_condition(v).map(Some).ok_or((key, v.clone())),
        }
    }
}

/// `"steady QD64x4"` as a condition.
pub fn parse_condition(text: &str) -> Option<SpecCondition> {
    let mut words = text.split_whitespace();
    let state = match words.next()? {
        "fresh" => SpecState::Fresh,
        "full" => SpecState::Full,
        "steady" => SpecState::Steady,
        _ => return None,
    };
    let depth = words.next()?.strip_prefix("QD")?;
    if words.next().is_some() {
        return None;
    }
    let (qd, jobs) = depth.split_once('x')?;
    let (qd, jobs): (u32, u32) = (qd.parse().ok()?, jobs.parse().ok()?);
    ((1..=65_536).contains(&qd) && (1..=256).contains(&jobs)).then_some(SpecCondition {
        state,
        qd,
        jobs,
    })
}

/// How each die orders its work: read priority and program/erase suspend (all off: first
/// come, first served).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerSection {
    #[serde(default)]
    pub read_priority: bool,
    #[serde(default)]
    pub program_suspend: bool,
    #[serde(default)]
    pub erase_suspend: bool,
    #[serde(default = "default_suspend_latency")]
    pub suspend_latency: Time,
    #[serde(default = "default_resume_overhead")]
    pub resume_overhead: Time,
    #[serde(default = "default_max_suspends")]
    pub max_suspends_per_op: u32,
    /// A program stops for a suspension only at the end of a step (an ISPP pulse and its
    /// verify), every this much from its start (0: anywhere).
    #[serde(default = "zero_time")]
    pub program_suspend_step: Time,
    /// An erase stops only at the end of a step (an erase pulse and its verify).
    #[serde(default = "zero_time")]
    pub erase_suspend_step: Time,
    /// Suspensions of an operation fit the idle time its die had before it (see
    /// `SchedulerConfig::suspend_budget`).
    #[serde(default)]
    pub suspend_budget: bool,
}

fn default_suspend_latency() -> Time {
    Time(20_000)
}
fn default_resume_overhead() -> Time {
    Time(10_000)
}
fn default_max_suspends() -> u32 {
    4
}

impl Default for SchedulerSection {
    fn default() -> Self {
        Self {
            read_priority: false,
            program_suspend: false,
            erase_suspend: false,
            suspend_latency: default_suspend_latency(),
            resume_overhead: default_resume_overhead(),
            max_suspends_per_op: default_max_suspends(),
            program_suspend_step: Time(0),
            erase_suspend_step: Time(0),
            suspend_budget: false,
        }
    }
}

/// Energy per operation and per byte, controller power, and power states with caps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSection {
    /// Absent: `DEFAULT_ARRAY_POWER` × the operation's array time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_energy: Option<Energy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_energy: Option<Energy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_energy: Option<Energy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_read_energy: Option<Energy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_program_energy: Option<Energy>,
    /// Per byte over a flash channel.
    #[serde(default = "default_channel_energy")]
    pub channel_energy: Energy,
    /// Per byte over the host link, including the controller's data path.
    #[serde(default = "default_host_energy")]
    pub host_energy: Energy,
    /// Controller power beyond idle while commands are outstanding.
    #[serde(default = "default_active_power")]
    pub active_power: Power,
    /// Power of the powered-on drive with nothing to do.
    #[serde(default = "default_idle_power")]
    pub idle_power: Power,
    /// Power states: a cap each ("13W") or "none"; empty: one uncapped state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    /// Index into `states` of the state the drive runs in.
    #[serde(default)]
    pub state: u32,
    /// Thermal model (see `flashlab_media::thermal`): absent resistance, none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal_resistance_c_per_w: Option<f64>,
    #[serde(default = "default_thermal_time_constant")]
    pub thermal_time_constant: Time,
    #[serde(default = "default_ambient_c")]
    pub ambient_c: f64,
    #[serde(default = "default_throttle_c")]
    pub throttle_c: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_c: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_power: Option<Power>,
}

fn default_thermal_time_constant() -> Time {
    Time(60_000_000_000)
}
/// Air inside a desktop case near a loaded M.2 slot (estimate).
fn default_ambient_c() -> f64 {
    30.0
}
/// NVMe drives commonly report a warning composite temperature near 80 °C.
fn default_throttle_c() -> f64 {
    80.0
}

/// Array power of a die during an operation when no energy is given: ONFI-class datasheets
/// list ICC 25-50 mA at VCC 2.7-3.6 V for read, program and erase; 50 mW sits in that range
/// for one plane's share of a die (estimate).
pub const DEFAULT_ARRAY_POWER_UW: u64 = 50_000;

fn default_channel_energy() -> Energy {
    // ONFI NV-DDR3 / Toggle I/O at 1.2 V: ~10 pJ/bit including termination (estimate).
    Energy(80)
}
fn default_host_energy() -> Energy {
    // PCIe PHY ~5 pJ/bit plus the controller's data path (DMA, ECC, DRAM) (estimate).
    Energy(150)
}
fn default_active_power() -> Power {
    Power(1_000_000)
}
fn default_idle_power() -> Power {
    Power(2_000_000)
}

impl Default for PowerSection {
    fn default() -> Self {
        Self {
            read_energy: None,
            program_energy: None,
            erase_energy: None,
            slc_read_energy: None,
            slc_program_energy: None,
            channel_energy: default_channel_energy(),
            host_energy: default_host_energy(),
            active_power: default_active_power(),
            idle_power: default_idle_power(),
            states: Vec::new(),
            state: 0,
            thermal_resistance_c_per_w: None,
            thermal_time_constant: default_thermal_time_constant(),
            ambient_c: default_ambient_c(),
            throttle_c: default_throttle_c(),
            resume_c: None,
            throttle_power: None,
        }
    }
}

/// A zoned namespace: the whole drive is one namespace of zones (see `zoned.rs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZnsSection {
    #[serde(default)]
    pub enabled: bool,
    /// Distance between zone starts (default: the zone capacity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_size: Option<Size>,
    /// Writable bytes of a zone (default: a stripe of one erase block per die and plane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_capacity: Option<Size>,
    /// 0: no limit.
    #[serde(default)]
    pub max_open_zones: u32,
    /// 0: no limit.
    #[serde(default)]
    pub max_active_zones: u32,
}

impl ZnsSection {
    /// A section that says nothing (written out of a conventional drive's description).
    pub fn is_off(&self) -> bool {
        *self == ZnsSection::default()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSection {
    #[serde(default = "default_scale")]
    pub scale: ScaleSetting,
    #[serde(default = "default_max_memory")]
    pub max_memory: Size,
    /// Whether a slice may cut dies (docs/scale.md, "A die cut keeps the answer or is not
    /// made"). Written out only when set, so a description's text is what it was.
    #[serde(default, skip_serializing_if = "DieCut::is_refused")]
    pub die_cut: DieCut,
}

/// Whether a run may simulate a slice with fewer dies than the drive (`sim.die_cut`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DieCut {
    /// A die cut changes figures that depend on how many dies share the work: a run
    /// simulates the smallest slice that keeps every die instead, and says why.
    #[default]
    Refuse,
    /// The user accepts a die cut's known errors (docs/scale.md) for its speed; jobs whose
    /// queue the dies left cannot share are refused all the same.
    Allow,
}

impl DieCut {
    fn is_refused(&self) -> bool {
        *self == DieCut::Refuse
    }
}

fn default_scale() -> ScaleSetting {
    ScaleSetting::Auto
}
fn default_max_memory() -> Size {
    Size(3 << 30)
}

impl Default for SimSection {
    fn default() -> Self {
        Self {
            scale: default_scale(),
            max_memory: default_max_memory(),
            die_cut: DieCut::Refuse,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_published_figures_condition_parses_or_names_its_key() {
        use super::{parse_condition, SpecState};
        let c = parse_condition("steady QD64x4").expect("parses");
        assert_eq!((c.state, c.qd, c.jobs), (SpecState::Steady, 64, 4));
        assert_eq!(c.to_string(), "steady QD64x4");
        for bad in [
            "QD64x4",
            "steady QD64",
            "warm QD1x1",
            "full QD0x1",
            "full QD1x1 more",
        ] {
            assert_eq!(parse_condition(bad), None, "{bad}");
        }
        let mut c = crate::load_device_config("tiny-test-1gb", &[]).expect("preset loads");
        c.spec.rand_read = Some("QD256".into());
        let e = c.resolve().expect_err("a bad condition is refused");
        assert_eq!(e.key, "spec.rand_read");
    }

    use super::*;

    #[test]
    fn nearest_key_suggestions() {
        let v = valid_keys("nand");
        assert_eq!(nearest("chanels", &v), Some("channels"));
        assert_eq!(nearest("page_sz", &v), Some("page_size"));
        assert_eq!(nearest("zzzzzzzzzzzz", &v), None);
        assert!(valid_keys("").contains(&"nand"));
        assert!(valid_keys("").contains(&"name"));
    }

    #[test]
    fn every_documented_key_exists_in_the_struct_and_back() {
        // A full description holding every key: deserialising it proves each documented key
        // is a real field (deny_unknown_fields would refuse it otherwise).
        let full = r#"
            name = "x"
            description = "d"
            namespaces = ["400MB", "100MB"]
            [capacity]
            user = "1GB"
            spare_factor = 0.1
            logical_block = "4KiB"
            [nand]
            cell = "tlc"
            channels = 2
            dies_per_channel = 1
            planes_per_die = 2
            blocks_per_plane = 64
            pages_per_block = 192
            page_size = "16KiB"
            channel_rate = "1.2GT/s"
            bus_width_bits = 8
            multi_plane = true
            independent_plane_reads = true
            independent_plane_programs = false
            t_read = "50us"
            t_prog = ["400us", "800us"]
            t_erase = "3ms"
            slc_t_read = "30us"
            slc_t_prog = "200us"
            pe_cycles = 3000
            retention_class = "enterprise"
            retention_at_rated_days = 91
            retention_at_tenth_rated_days = 3652.5
            retention_temperature_c = 40
            [ftl]
            iu = "4KiB"
            gc_policy = "cost-benefit"
            gc_unit = "superblock"
            gc_foreground_free_blocks = 4
            gc_background_free_blocks = 8
            wear_level_threshold = 100
            [slc_cache]
            static = "64MiB"
            dynamic = true
            dynamic_max_fraction = 0.2
            [buffer]
            size = "4MiB"
            plp = true
            [link]
            kind = "sata-6g"
            protocol_efficiency = 0.9
            [controller]
            command_overhead = "3us"
            max_iops = 100000
            queue_depth = 32
            read_bandwidth = "360MB/s"
            write_bandwidth = "2.5Gb/s"
            native_decode_bandwidth = "2.2GB/s"
            read_cpu = "1us"
            write_cpu = "20us"
            relocation_cpu = "2us"
            cores = 2
            map_cache = "64MB"
            compression_granule = "1KiB"
            [scheduler]
            read_priority = true
            program_suspend = true
            erase_suspend = true
            suspend_latency = "15us"
            resume_overhead = "5us"
            max_suspends_per_op = 3
            program_suspend_step = "40us"
            erase_suspend_step = "800us"
            suspend_budget = true
            [spec]
            seq_read = "full QD128x1"
            seq_write = "full QD128x1"
            rand_read = "full QD64x4"
            rand_write = "steady QD64x4"
            [power]
            read_energy = "5uJ"
            program_energy = "60uJ"
            erase_energy = "500uJ"
            slc_read_energy = "2uJ"
            slc_program_energy = "10uJ"
            channel_energy = "80pJ"
            host_energy = "500pJ"
            active_power = "1W"
            idle_power = "5W"
            states = ["none", "13W", "9W"]
            state = 1
            thermal_resistance_c_per_w = 6.5
            thermal_time_constant = "60s"
            ambient_c = 30
            throttle_c = 80
            resume_c = 75
            throttle_power = "6W"
            [fdp]
            enabled = true
            handles = 4
            reclaim_groups = 1
            ru_bytes = "48MiB"
            handle_type = "persistently_isolated"
            [sim]
            scale = 0.5
            max_memory = "1GiB"
            die_cut = "allow"
            [zns]
            enabled = true
            zone_size = "2GiB"
            zone_capacity = "1077MiB"
            max_open_zones = 14
            max_active_zones = 14
        "#;
        let cfg: DeviceConfig = toml::from_str(full).unwrap();
        assert_eq!(cfg.nand.t_prog, Some(PageTime(600_000)));
        assert_eq!(cfg.ftl.gc_policy, GcPolicy::CostBenefit);
        assert_eq!(cfg.ftl.gc_unit, GcUnitKind::Superblock);
        assert_eq!(cfg.controller.read_bandwidth, Some(Bandwidth(360_000_000)));
        // Bits per second are bytes / 8.
        assert_eq!(cfg.controller.write_bandwidth, Some(Bandwidth(312_500_000)));
        assert_eq!(
            cfg.controller.native_decode_bandwidth,
            Some(Bandwidth(2_200_000_000))
        );
        assert_eq!(cfg.controller.write_cpu, Time(20_000));
        assert_eq!(cfg.controller.map_cache, Some(Size(64_000_000)));
        assert_eq!(cfg.controller.compression_granule, Some(Size(1024)));
        // And every key the struct writes back is documented.
        let table: toml::Table = toml::from_str(&toml::to_string(&cfg).unwrap()).unwrap();
        let mut seen = 0;
        for (key, value) in &table {
            match value.as_table() {
                Some(t) => {
                    assert!(SECTIONS.contains(&key.as_str()), "{key}");
                    for sub in t.keys() {
                        assert!(valid_keys(key).contains(&sub.as_str()), "{key}.{sub}");
                        seen += 1;
                    }
                }
                None => {
                    assert!(valid_keys("").contains(&key.as_str()), "{key}");
                    seen += 1;
                }
            }
        }
        assert_eq!(seen, KEYS.len());
    }

    #[test]
    fn readme_documents_every_key() {
        let readme = include_str!("../../../presets/README.md");
        assert!(
            readme.contains(&key_table_markdown()),
            "presets/README.md is out of date; its key table must read:\n{}",
            key_table_markdown()
        );
    }
}
