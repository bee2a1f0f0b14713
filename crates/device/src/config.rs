//! The drive description: TOML sections, their keys (one table documents them all), loading
//! presets or files, `--set` overrides and located errors.

use serde::{Deserialize, Serialize};

use crate::values::Bandwidth;
use crate::values::{Energy, PageTime, Power, ScaleSetting, Size, Time, TransferRate};

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
    #[serde(default)]
    pub power: PowerSection,
    #[serde(default)]
    pub sim: SimSection,
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

/// How the FTL picks the (die, plane) unit of the next host page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostAllocation {
    /// Every unit in turn, whatever work it has queued.
    Striped,
    /// The unit, among the next few in turn, whose die can take a program soonest.
    LeastBusy,
}

/// Which two of a flash channel's reserved transfer intervals merge when it holds more than
/// it keeps (`flashlab_media::ChannelMerge`): a simulator bound, not a drive property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelMergeSetting {
    /// The two earliest (blurs the near future when dies queue reads far ahead).
    Earliest,
    /// The two with the narrowest gap between them (blurs the least free channel time).
    Narrowest,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlSection {
    #[serde(default = "default_iu")]
    pub iu: Size,
    #[serde(default = "default_gc_policy")]
    pub gc_policy: GcPolicy,
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
            read_cpu: zero_time(),
            write_cpu: zero_time(),
            relocation_cpu: zero_time(),
            cores: default_cores(),
            read_buffer: default_read_buffer(),
            read_ahead: default_read_ahead(),
            map_cache: None,
        }
    }
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
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSection {
    #[serde(default = "default_scale")]
    pub scale: ScaleSetting,
    #[serde(default = "default_max_memory")]
    pub max_memory: Size,
    #[serde(default = "default_channel_merge")]
    pub channel_merge: ChannelMergeSetting,
}

/// Narrowest: merging the earliest reservations idles planes behind transfers that are not
/// there (`docs/scale.md`); `earliest` stays to reproduce older results.
fn default_channel_merge() -> ChannelMergeSetting {
    ChannelMergeSetting::Narrowest
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
            channel_merge: default_channel_merge(),
        }
    }
}

/// One documented key.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    /// Section name, "" for top-level keys.
    pub section: &'static str,
    pub key: &'static str,
    pub meaning: &'static str,
    pub unit: &'static str,
    pub default: &'static str,
}

const fn k(
    section: &'static str,
    key: &'static str,
    meaning: &'static str,
    unit: &'static str,
    default: &'static str,
) -> KeyDoc {
    KeyDoc {
        section,
        key,
        meaning,
        unit,
        default,
    }
}

/// Every key a device description may hold. It drives unknown-key errors, `--set` and the
/// table in `presets/README.md`.
pub const KEYS: &[KeyDoc] = &[
    k(
        "",
        "name",
        "Drive name (shown in results)",
        "text",
        "required",
    ),
    k("", "description", "One-line summary", "text", "\"\""),
    k(
        "",
        "namespaces",
        "Namespace sizes, e.g. [\"2TB\", \"2TB\"] (fio filename `ns1`, `ns2`, …); capacity not allocated is spare area",
        "list of sizes",
        "one namespace of all user capacity",
    ),
    k(
        "capacity",
        "user",
        "Host-visible capacity; less than raw leaves more spare area",
        "size",
        "raw × (1 − spare_factor)",
    ),
    k(
        "capacity",
        "spare_factor",
        "(raw − user) / raw, used when `user` is absent",
        "fraction",
        "0.07",
    ),
    k(
        "capacity",
        "logical_block",
        "Logical block size the host addresses",
        "size (512B or 4KiB)",
        "512B",
    ),
    k(
        "nand",
        "cell",
        "Cell type of native blocks",
        "slc, mlc, tlc, qlc",
        "required",
    ),
    k(
        "nand",
        "channels",
        "Flash channels",
        "count 1-64",
        "required",
    ),
    k(
        "nand",
        "dies_per_channel",
        "Dies on each channel",
        "count 1-64",
        "required",
    ),
    k(
        "nand",
        "planes_per_die",
        "Planes per die",
        "count 1-16",
        "2",
    ),
    k(
        "nand",
        "blocks_per_plane",
        "Erase blocks per plane",
        "count ≥ 8",
        "required",
    ),
    k(
        "nand",
        "pages_per_block",
        "Pages per block in native mode (a multiple of bits per cell)",
        "count",
        "required",
    ),
    k(
        "nand",
        "page_size",
        "Data bytes per page",
        "size",
        "required",
    ),
    k(
        "nand",
        "channel_rate",
        "Channel transfer rate (ONFI/Toggle)",
        "MT/s or GT/s",
        "1.2GT/s",
    ),
    k(
        "nand",
        "bus_width_bits",
        "Channel bus width",
        "bits (8 or 16)",
        "8",
    ),
    k(
        "nand",
        "multi_plane",
        "Planes of a die run concurrently",
        "bool",
        "true",
    ),
    k(
        "nand",
        "independent_plane_reads",
        "With multi_plane, each plane reads on its own; false: a read holds its whole die for tR, and reads of one page address on the die's planes issued together pair as one multi-plane read (parts whose multi-plane read needs one page address on every plane)",
        "bool",
        "true",
    ),
    k(
        "nand",
        "t_read",
        "tR per page, native mode; a list per page type is averaged",
        "time or list",
        "by cell type",
    ),
    k(
        "nand",
        "t_prog",
        "tPROG per page, native mode; a list per page type is averaged",
        "time or list",
        "by cell type",
    ),
    k("nand", "t_erase", "tBERS per block", "time", "by cell type"),
    k(
        "nand",
        "slc_t_read",
        "tR of a block in SLC mode",
        "time",
        "by cell type",
    ),
    k(
        "nand",
        "slc_t_prog",
        "tPROG of a block in SLC mode",
        "time",
        "by cell type",
    ),
    k(
        "nand",
        "pe_cycles",
        "Rated program/erase cycles",
        "count",
        "by cell type",
    ),
    k(
        "nand",
        "bad_block_reserve",
        "Share of the native blocks set aside for bad blocks: those bad from the factory and the reserve that replaces blocks failing in use (NVMe's available spare). No data is written to them, so garbage collection's spare area is what the other blocks leave",
        "fraction 0-0.2",
        "0",
    ),
    k(
        "nand",
        "grown_bad_at_rated",
        "Share of the native blocks whose erase has failed by the rated P/E cycles (a Weibull life in erase cycles: a failed block is retired and a block of the bad-block reserve replaces it; once the reserve is used up the spare area shrinks, and the drive turns read-only when too little is left for garbage collection). 0: blocks never fail",
        "fraction 0-0.5",
        "0.01",
    ),
    k(
        "nand",
        "grown_bad_shape",
        "Weibull shape of those failures over erase cycles: 1 a constant rate per erase, above 1 failures gather towards wear-out",
        "0.5-10",
        "3",
    ),
    k(
        "ftl",
        "iu",
        "Indirection unit (mapping granularity)",
        "size (4KiB-64KiB, ≤ page)",
        "4KiB",
    ),
    k(
        "ftl",
        "gc_policy",
        "Garbage-collection victim choice",
        "greedy, cost-benefit",
        "greedy",
    ),
    k(
        "ftl",
        "gc_foreground_free_blocks",
        "Foreground GC runs at or below this many free blocks",
        "blocks",
        "2 per plane",
    ),
    k(
        "ftl",
        "gc_background_free_blocks",
        "Idle GC works until this many blocks are free",
        "blocks",
        "4 per plane",
    ),
    k(
        "ftl",
        "background_after_idle",
        "Host idle time before background work (idle GC, SLC folding) starts",
        "time",
        "10ms",
    ),
    k(
        "ftl",
        "gc_background_busy_share",
        "Share of time background GC may take beside host reads while below gc_background_free_blocks (0: only when idle)",
        "fraction 0-1",
        "0",
    ),
    k(
        "ftl",
        "host_allocation",
        "Unit of the next host page: every (die, plane) in turn, or the one of the next 8 whose die is free soonest",
        "striped, least_busy",
        "striped",
    ),
    k(
        "ftl",
        "parity_stripe_pages",
        "Die-level parity (RAIN, XOR): one page in every N of a block holds parity, programmed after the stripe's data; costs 1/N of the raw capacity and a program per stripe",
        "0 (none) or 2 to pages_per_block",
        "0",
    ),
    k(
        "ftl",
        "wear_level_threshold",
        "Static wear levelling when max − min erase count exceeds this (0 off)",
        "erase cycles",
        "500",
    ),
    k(
        "slc_cache",
        "static",
        "SLC-mode capacity kept permanently, outside user capacity",
        "size",
        "0B",
    ),
    k(
        "slc_cache",
        "dynamic",
        "Use free native blocks in SLC mode",
        "bool",
        "false",
    ),
    k(
        "slc_cache",
        "dynamic_max_fraction",
        "Share of free native capacity that may run in SLC mode (the cache holds 1/bits per cell of it)",
        "fraction 0-1",
        "0.25",
    ),
    k("buffer", "size", "DRAM write buffer", "size", "16MiB"),
    k(
        "buffer",
        "plp",
        "Power-loss protection: buffered writes are durable",
        "bool",
        "false",
    ),
    k(
        "link",
        "kind",
        "Host link",
        "sata-1.5g, sata-3g, sata-6g, pcie-gen{3,4,5}-x{1,2,4,8}",
        "pcie-gen4-x4",
    ),
    k(
        "link",
        "protocol_efficiency",
        "Fraction of encoded bandwidth left after protocol overhead",
        "fraction",
        "0.93 SATA, 0.86 PCIe",
    ),
    k(
        "controller",
        "command_overhead",
        "Controller time per command (firmware, DMA setup)",
        "time",
        "5us",
    ),
    k(
        "controller",
        "max_iops",
        "Command processing ceiling",
        "commands/s",
        "1000000",
    ),
    k(
        "controller",
        "queue_depth",
        "Commands the device holds at once",
        "count",
        "32 SATA, 1024 PCIe",
    ),
    k(
        "controller",
        "read_bandwidth",
        "Data path from flash to host (ECC decode, DMA); host reads stream through it and the link together",
        "bytes/s (GB/s, MB/s)",
        "unlimited",
    ),
    k(
        "controller",
        "write_bandwidth",
        "Data path from host to flash (DMA, ECC encode); host writes stream through it and the link together",
        "bytes/s (GB/s, MB/s)",
        "unlimited",
    ),
    k(
        "controller",
        "read_cpu",
        "Firmware time of one read command on one core (map lookup)",
        "time",
        "0ns",
    ),
    k(
        "controller",
        "write_cpu",
        "Firmware time of one write command on one core (map update, buffer management)",
        "time",
        "0ns",
    ),
    k(
        "controller",
        "relocation_cpu",
        "Firmware time per IU moved by GC, folding or wear levelling; it delays later commands",
        "time",
        "0ns",
    ),
    k(
        "controller",
        "cores",
        "Embedded cores sharing the firmware work (per command, per relocated IU)",
        "count 1-64",
        "1",
    ),
    k(
        "controller",
        "read_buffer",
        "DRAM for data read from NAND, oldest out first: a read whose codewords are all in it costs no NAND read; writes, trims, power loss and format drop them (0B off)",
        "size, 0B or 2×4×read_ahead to 64GiB",
        "2MiB",
    ),
    k(
        "controller",
        "read_ahead",
        "A third read in a row that starts where the previous read of a stream (4 streams) ended makes the drive read up to this much further ahead into the read buffer, in batches of at least half of it (0B off)",
        "size",
        "256KiB",
    ),
    k(
        "controller",
        "map_cache",
        "DRAM for the logical-to-physical map (4 bytes per IU). Smaller than the map, it caches translation pages (one IU of entries each, kept in flash as hidden IUs): a miss reads one from NAND before a read (a write loads it too), evicting a changed one writes it back; scaled with the capacity in a slice",
        "size, at least 16 IUs",
        "the whole map",
    ),
    k(
        "scheduler",
        "read_priority",
        "Reads go before programs and erases queued (not started) on their die",
        "bool",
        "false",
    ),
    k(
        "scheduler",
        "program_suspend",
        "A read arriving during a program suspends it (the program resumes after the read)",
        "bool",
        "false",
    ),
    k(
        "scheduler",
        "erase_suspend",
        "A read arriving during an erase suspends it",
        "bool",
        "false",
    ),
    k(
        "scheduler",
        "suspend_latency",
        "From the suspend command until the die can read (the operation progresses meanwhile)",
        "time",
        "20us",
    ),
    k(
        "scheduler",
        "resume_overhead",
        "Extra array time of a resumed program or erase",
        "time",
        "10us",
    ),
    k(
        "scheduler",
        "max_suspends_per_op",
        "Suspensions of one program or erase at most; later reads wait for it",
        "count 1-255",
        "4",
    ),
    k(
        "power",
        "read_energy",
        "Energy of one page read (array), native mode",
        "energy",
        "50mW × tR",
    ),
    k(
        "power",
        "program_energy",
        "Energy of one page program (array), native mode",
        "energy",
        "50mW × tPROG",
    ),
    k(
        "power",
        "erase_energy",
        "Energy of one block erase",
        "energy",
        "50mW × tBERS",
    ),
    k(
        "power",
        "slc_read_energy",
        "Energy of one page read in SLC mode",
        "energy",
        "50mW × SLC tR",
    ),
    k(
        "power",
        "slc_program_energy",
        "Energy of one page program in SLC mode",
        "energy",
        "50mW × SLC tPROG",
    ),
    k(
        "power",
        "channel_energy",
        "Energy per byte moved over a flash channel",
        "energy",
        "80pJ",
    ),
    k(
        "power",
        "host_energy",
        "Energy per byte over the host link, with the controller's data path",
        "energy",
        "150pJ",
    ),
    k(
        "power",
        "active_power",
        "Controller power beyond idle while commands are outstanding",
        "power",
        "1W",
    ),
    k(
        "power",
        "idle_power",
        "Power of the drive with nothing to do",
        "power",
        "2W",
    ),
    k(
        "power",
        "states",
        "Power states: a cap each (\"13W\") or \"none\"; media work is delayed so every 10 ms stays under the cap",
        "list",
        "[\"none\"]",
    ),
    k(
        "power",
        "state",
        "Power state the drive runs in (index into `states`)",
        "index",
        "0",
    ),
    k(
        "sim",
        "scale",
        "Simulate a proportional slice of the drive: \"auto\" (fit max_memory) or a fraction",
        "auto or 0-1",
        "auto",
    ),
    k(
        "sim",
        "max_memory",
        "Memory budget for the simulated mapping",
        "size",
        "3GiB",
    ),
    k(
        "sim",
        "channel_merge",
        "Which two of a flash channel's 32 kept transfer reservations merge when it has more: the earliest, or the two with the narrowest gap",
        "earliest, narrowest",
        "narrowest",
    ),
];

/// Sections in file order.
pub const SECTIONS: &[&str] = &[
    "capacity",
    "nand",
    "ftl",
    "slc_cache",
    "buffer",
    "link",
    "controller",
    "scheduler",
    "power",
    "sim",
];

/// The Markdown table of [`KEYS`] as in `presets/README.md`.
pub fn key_table_markdown() -> String {
    let mut s = String::from("| key | meaning | unit | default |\n|---|---|---|---|\n");
    for d in KEYS {
        let key = if d.section.is_empty() {
            d.key.to_string()
        } else {
            format!("{}.{}", d.section, d.key)
        };
        s.push_str(&format!(
            "| `{key}` | {} | {} | {} |\n",
            d.meaning, d.unit, d.default
        ));
    }
    s
}

/// Keys valid in `section` ("" = top level, where sections count as keys too).
pub fn valid_keys(section: &str) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = KEYS
        .iter()
        .filter(|d| d.section == section)
        .map(|d| d.key)
        .collect();
    if section.is_empty() {
        v.extend_from_slice(SECTIONS);
    }
    v
}

/// The valid key closest to `key` (edit distance ≤ max(2, len/3)), if any.
pub fn nearest<'a>(key: &str, valid: &[&'a str]) -> Option<&'a str> {
    let limit = (key.len() / 3).max(2);
    valid
        .iter()
        .map(|v| (levenshtein(key, v), *v))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
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
            t_read = "50us"
            t_prog = ["400us", "800us"]
            t_erase = "3ms"
            slc_t_read = "30us"
            slc_t_prog = "200us"
            pe_cycles = 3000
            [ftl]
            iu = "4KiB"
            gc_policy = "cost-benefit"
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
            read_cpu = "1us"
            write_cpu = "20us"
            relocation_cpu = "2us"
            cores = 2
            map_cache = "64MB"
            [scheduler]
            read_priority = true
            program_suspend = true
            erase_suspend = true
            suspend_latency = "15us"
            resume_overhead = "5us"
            max_suspends_per_op = 3
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
            [sim]
            scale = 0.5
            max_memory = "1GiB"
        "#;
        let cfg: DeviceConfig = toml::from_str(full).unwrap();
        assert_eq!(cfg.nand.t_prog, Some(PageTime(600_000)));
        assert_eq!(cfg.ftl.gc_policy, GcPolicy::CostBenefit);
        assert_eq!(cfg.controller.read_bandwidth, Some(Bandwidth(360_000_000)));
        // Bits per second are bytes / 8.
        assert_eq!(cfg.controller.write_bandwidth, Some(Bandwidth(312_500_000)));
        assert_eq!(cfg.controller.write_cpu, Time(20_000));
        assert_eq!(cfg.controller.map_cache, Some(Size(64_000_000)));
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
