//! From a description to the numbers the simulator uses: validated geometry and timings,
//! the simulated slice (scale), the FTL configuration and the derived figures of `describe`.

use flashlab_ftl::{FtlConfig, GcConfig, GcUnit, SlcConfig, VictimPolicy, WearOut};
use flashlab_media::{
    CellTimings, MediaEnergy, NandGeometry, Retention, SchedulerConfig, ThermalModel,
};

use crate::config::{
    DeviceConfig, GcPolicy, GcUnitKind, HostAllocation, RetentionClass, SlcWhenFull,
    DEFAULT_ARRAY_POWER_UW,
};
use crate::controller::ControllerModel;
use crate::link::LinkKind;
use crate::units::{format_decimal, format_size, format_time};
use crate::values::{energy_text, power_text, size_text};
use flashlab_engine::WriteWindow;

pub use crate::error::KeyError;
pub use crate::reserve::{held_back_blocks, native_slc_streams, steady_held_blocks};

mod describe;
mod parts;
mod slice;

use parts::{CapacityParts, HostParts, NandParts};
use slice::Slice;

fn key_err(key: &str, value: impl ToString, message: &str, valid: impl ToString) -> KeyError {
    KeyError {
        key: key.to_string(),
        value: value.to_string(),
        message: message.to_string(),
        valid: valid.to_string(),
    }
}

fn range_u32(key: &str, v: u32, lo: u32, hi: u32) -> Result<u32, KeyError> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(key_err(key, v, "out of range", format!("{lo} to {hi}")))
    }
}

fn fraction(key: &str, v: f64, lo_open: bool, lo: f64, hi: f64) -> Result<f64, KeyError> {
    let ok = v.is_finite() && if lo_open { v > lo } else { v >= lo } && v <= hi;
    if ok {
        Ok(v)
    } else {
        let l = if lo_open { "(" } else { "[" };
        Err(key_err(key, v, "out of range", format!("{l}{lo}, {hi}]")))
    }
}

/// The power model: energies, controller power and the power state in force.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerModel {
    pub energy: MediaEnergy,
    pub host_pj_per_byte: u64,
    pub active_uw: u64,
    pub idle_uw: u64,
    /// Caps of the power states (None: uncapped).
    pub states_uw: Vec<Option<u64>>,
    pub state: usize,
    /// The drive's temperature and the power it throttles to (None: no thermal model).
    pub thermal: Option<(ThermalModel, u64)>,
}

impl PowerModel {
    /// Cap of the state in force.
    pub fn cap_uw(&self) -> Option<u64> {
        self.states_uw[self.state]
    }

    /// What the media may use under the cap: the cap less idle and active controller power.
    pub fn media_budget_uw(&self) -> Option<u64> {
        self.cap_uw()
            .map(|c| c.saturating_sub(self.idle_uw + self.active_uw))
    }
}

/// Namespaces a drive may have (NVMe allows more; 1,024 covers real drives' limits).
pub const MAX_NAMESPACES: usize = 1024;

/// How the simulated drive relates to the described one.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleInfo {
    /// Full capacity / simulated capacity (1.0 = full scale).
    pub capacity_factor: f64,
    /// Full die count / simulated die count (1.0 = every die simulated).
    pub die_factor: f64,
    pub note: String,
    /// The smallest `sim.scale` whose slice keeps every die (`None` when none is valid).
    pub all_dies_scale: Option<f64>,
    /// `sim.die_cut = "allow"`: runs may use a slice that cuts dies.
    pub die_cut_allowed: bool,
}

/// Bytes of model memory for a mapping of this size: L2P 4 B per user IU, P2L 4 B per raw IU,
/// ~32 B of per-block state. (The GC pacing queue's ring, which depends on the units and
/// the reserve rather than the capacity, is added beside it: `pacing::internal_queue_bytes`.)
pub fn memory_estimate_bytes(user_ius: u64, raw_ius: u64, blocks: u64) -> u64 {
    4 * user_ius + 4 * raw_ius + 32 * blocks
}

/// Smallest map cache, in translation pages: fewer would make CLOCK's choice meaningless and
/// a few concurrent commands evict each other's pages.
pub const MIN_MAP_CACHE_PAGES: u64 = 16;

/// Bytes of one map entry (a 32-bit physical IU address).
pub const MAP_ENTRY_BYTES: u64 = 4;

/// A map paged through a DRAM cache (`controller.map_cache` smaller than the map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapCacheModel {
    /// The drive's DRAM for the map, and the whole map's size.
    pub full_cache_bytes: u64,
    pub full_map_bytes: u64,
    /// Translation pages of the slice (one IU of entries each) and the slots caching them.
    pub pages: u32,
    pub slots: u32,
    /// Map entries per translation page (IU / 4 bytes).
    pub entries_per_page: u32,
    /// First logical IU the FTL holds translation pages in: the host's IUs end there.
    pub first_lpn: u32,
}

/// Host link, controller and buffer: the resources all dies share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedResources {
    pub link_raw_bytes_per_s: u64,
    pub link_bytes_per_s: u64,
    pub max_iops: u64,
    pub queue_depth: u32,
    pub buffer_bytes: u64,
    pub read_buffer_bytes: u64,
    pub controller: ControllerModel,
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Everything the simulator needs, validated.
#[derive(Debug, Clone)]
pub struct Model {
    pub name: String,
    pub full: NandGeometry,
    /// The simulated slice (equal to `full` at full scale).
    pub geometry: NandGeometry,
    pub timings: CellTimings,
    pub bits_per_cell: u32,
    pub cell_name: &'static str,
    /// Power-off data retention by wear (`nand.retention_*`).
    pub retention: Retention,
    /// Its JESD218 class.
    pub retention_class: RetentionClass,
    /// The power-off temperature the health log reports retention at, in °C.
    pub retention_storage_c: f64,
    /// Host-visible capacity the FTL maps: all namespaces together.
    pub full_user_bytes: u64,
    /// The drive's user capacity before namespaces (what is not allocated is spare area).
    pub drive_user_bytes: u64,
    /// Size of each namespace on the full drive (one covering everything without `namespaces`).
    pub full_namespace_bytes: Vec<u64>,
    /// Size of each namespace in the simulated slice (sums to at most `user_bytes`).
    pub namespace_bytes: Vec<u64>,
    pub user_bytes: u64,
    /// The FTL's mapping unit: the IU, or on a compressing drive the granule.
    pub iu_bytes: u64,
    /// On a compressing drive (`controller.compression_granule`), the host IU it compresses
    /// into `iu_bytes` granules.
    pub compression_unit_bytes: Option<u64>,
    pub logical_block_bytes: u64,
    pub ftl: FtlConfig,
    /// Static SLC cache of the slice.
    pub static_slc_bytes: u64,
    pub full_static_slc_bytes: u64,
    /// The drive's blocks set aside for bad blocks, in bytes (`nand.bad_block_reserve`).
    pub full_bad_bytes: u64,
    /// The drive's dynamic SLC share of free native capacity (`ftl.slc` holds the slice's).
    pub full_dynamic_slc_fraction: f64,
    pub link: LinkKind,
    /// The slice's share of what the dies share: the full drive's value / die factor (equal to
    /// `full_shared` without a die cut). The device simulates these.
    pub link_raw_bytes_per_s: u64,
    pub link_bytes_per_s: u64,
    /// Per-command latency: not a shared capacity, so never cut.
    pub command_overhead_ns: u64,
    /// Host idle time before background work starts.
    pub background_after_idle_ns: u64,
    /// Share of time background GC may take beside host commands (0: idle time only).
    pub gc_busy_share: f64,
    /// How the FTL places host pages on (die, plane) units.
    pub host_allocation: HostAllocation,
    pub max_iops: u64,
    pub queue_depth: u32,
    /// The write buffer: the dies' share of the drive's.
    pub buffer_bytes: u64,
    /// What the write buffer holds in windows a slice compresses (see `resolve`).
    pub compressed_buffer_bytes: u64,
    /// The slice's read buffer (see `resolve`) and the read-ahead window (per stream, not
    /// cut).
    pub read_buffer_bytes: u64,
    pub read_ahead_bytes: u64,
    /// The paged map (None: the whole map is in DRAM).
    pub map_cache: Option<MapCacheModel>,
    /// The slice's share of the controller's data path and cores.
    pub controller: ControllerModel,
    /// The same resources on the full drive (what `describe` shows).
    pub full_shared: SharedResources,
    pub plp: bool,
    /// How dies order reads against programs and erases.
    pub scheduler: SchedulerConfig,
    pub power: PowerModel,
    pub scale: ScaleInfo,
    pub memory_bytes: u64,
    pub max_memory_bytes: u64,
}

/// The most a compressed window's write buffer may add to it, as a share of what the window
/// writes (see [`Model::buffer_depth_kept`]).
const BUFFER_FIRST_FILL_SHARE: f64 = 0.01;

impl Model {
    /// Whether a window of writes the runner compresses on a slice keeps the write buffer's
    /// full depth (the dies' share, [`Self::buffer_bytes`]) rather than its capacity share
    /// ([`Self::compressed_buffer_bytes`]).
    ///
    /// The capacity share is for the buffer's first fill: an empty buffer takes its size at
    /// the link's speed at a window's start, which a window `1/f` as long would weigh `f`
    /// times more. But the buffer's depth also paces the dies through the whole window (what
    /// the host may write ahead of the programs while GC or folds hold some dies): cut to
    /// the capacity share, a buffer a few programs of every plane deep costs the slice its
    /// steady rate in every window (docs/scale.md, "The write buffer's depth"). So a window
    /// keeps the full depth where the first fill's excess over the capacity share is at most
    /// [`BUFFER_FIRST_FILL_SHARE`] of what the window writes: its bytes, or what the dies
    /// program in its time (native pages on every plane back to back, or the channels' rate
    /// if lower: [`Self::media_bounds`]; writes that GC slows write less, so the first fill
    /// weighs more in them, in proportion to their write amplification).
    pub fn buffer_depth_kept(&self, window: WriteWindow) -> bool {
        let excess = self
            .buffer_bytes
            .saturating_sub(self.compressed_buffer_bytes);
        if excess == 0 {
            return true;
        }
        let written = match window {
            WriteWindow::Bytes(b) => b as f64,
            WriteWindow::Time(ns) => {
                let (_, program_bytes_per_s, _) = Self::media_bounds(&self.geometry, &self.timings);
                program_bytes_per_s * ns as f64 / 1e9
            }
        };
        excess as f64 <= BUFFER_FIRST_FILL_SHARE * written
    }
}

impl DeviceConfig {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Energies (defaults: array power × array time), controller power and power states.
    fn power_model(&self, t: &CellTimings) -> Result<PowerModel, KeyError> {
        let p = &self.power;
        // µW × ns = 10^-15 J: / 1000 gives pJ.
        let by_time = |ns: u64| DEFAULT_ARRAY_POWER_UW * ns / 1_000;
        let energy = MediaEnergy {
            read_pj: p.read_energy.map_or(by_time(t.t_read_ns), |e| e.0),
            program_pj: p.program_energy.map_or(by_time(t.t_prog_ns), |e| e.0),
            erase_pj: p.erase_energy.map_or(by_time(t.t_erase_ns), |e| e.0),
            slc_read_pj: p.slc_read_energy.map_or(by_time(t.slc_t_read_ns), |e| e.0),
            slc_program_pj: p
                .slc_program_energy
                .map_or(by_time(t.slc_t_prog_ns), |e| e.0),
            channel_pj_per_byte: p.channel_energy.0,
        };
        self.check_power_ranges(&energy)?;
        let (idle, active) = (p.idle_power.0, p.active_power.0);
        let mut states_uw = Vec::with_capacity(p.states.len().max(1));
        for text in &p.states {
            states_uw.push(self.power_state_cap(text, &energy, idle + active)?);
        }
        if states_uw.is_empty() {
            states_uw.push(None);
        }
        let state = p.state as usize;
        if state >= states_uw.len() {
            return Err(key_err(
                "power.state",
                p.state,
                "no such power state",
                format!("0 to {}", states_uw.len() - 1),
            ));
        }
        let thermal = self.thermal_model(idle + active)?;
        Ok(PowerModel {
            energy,
            host_pj_per_byte: p.host_energy.0,
            active_uw: active,
            idle_uw: idle,
            states_uw,
            state,
            thermal,
        })
    }

    /// Every energy and power of `[power]` within what a drive can draw.
    fn check_power_ranges(&self, energy: &MediaEnergy) -> Result<(), KeyError> {
        for (key, v) in [
            ("power.read_energy", energy.read_pj),
            ("power.program_energy", energy.program_pj),
            ("power.erase_energy", energy.erase_pj),
            ("power.slc_read_energy", energy.slc_read_pj),
            ("power.slc_program_energy", energy.slc_program_pj),
        ] {
            if v > 1_000_000_000_000 {
                return Err(key_err(key, energy_text(v), "out of range", "0pJ to 1J"));
            }
        }
        for (key, v) in [
            ("power.channel_energy", self.power.channel_energy.0),
            ("power.host_energy", self.power.host_energy.0),
        ] {
            if v > 1_000_000 {
                return Err(key_err(
                    key,
                    energy_text(v),
                    "out of range",
                    "0pJ to 1uJ per byte",
                ));
            }
        }
        for (key, v) in [
            ("power.active_power", self.power.active_power.0),
            ("power.idle_power", self.power.idle_power.0),
        ] {
            if v > 1_000_000_000 {
                return Err(key_err(key, power_text(v), "out of range", "0W to 1000W"));
            }
        }
        Ok(())
    }

    /// One `power.states` entry: "none" (no cap) or a cap in µW, which must leave the media
    /// room for at least one operation per window above the controller's `controller_uw`.
    fn power_state_cap(
        &self,
        text: &str,
        energy: &MediaEnergy,
        controller_uw: u64,
    ) -> Result<Option<u64>, KeyError> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let uw = crate::units::parse_power_uw(t).map_err(|e| {
            key_err(
                "power.states",
                text,
                &e.to_string(),
                format!("\"none\" or {}", crate::units::POWER_HELP),
            )
        })?;
        if uw <= controller_uw {
            return Err(key_err(
                "power.states",
                text,
                "a cap at or below idle + active controller power leaves nothing for the media",
                format!("more than {}", power_text(controller_uw)),
            ));
        }
        // The cap admits whole operations per window: a window's budget below one
        // operation would let every operation through over budget.
        let window_ns = flashlab_media::power::CAP_WINDOW_NS;
        // A page's read or program moves the page over the channel; an erase moves
        // nothing.
        let page_pj = [
            energy.read_pj,
            energy.program_pj,
            energy.slc_read_pj,
            energy.slc_program_pj,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
        .saturating_add(
            energy
                .channel_pj_per_byte
                .saturating_mul(self.nand.page_size.0),
        );
        let largest_pj = page_pj.max(energy.erase_pj);
        // pJ per window ÷ window (ns) = mW; × 1000 = µW.
        // Rounded up to whole mW, as a cap is written.
        let least_media_uw = (largest_pj.saturating_mul(1_000))
            .div_ceil(window_ns)
            .div_ceil(1_000)
            * 1_000;
        if uw - controller_uw < least_media_uw {
            return Err(key_err(
                "power.states",
                text,
                &format!(
                    "the media's share of the cap holds less than one operation ({}) per {} ms window, so every operation would exceed it",
                    energy_text(largest_pj),
                    window_ns / 1_000_000
                ),
                format!(
                    "at least {}",
                    power_text(controller_uw + least_media_uw)
                ),
            ));
        }
        Ok(Some(uw))
    }

    /// The thermal model of `power.thermal_*` and the power it throttles to, checked;
    /// `controller_uw` is the idle and active power always counted.
    fn thermal_model(&self, controller_uw: u64) -> Result<Option<(ThermalModel, u64)>, KeyError> {
        let p = &self.power;
        let Some(r) = p.thermal_resistance_c_per_w else {
            return Ok(None);
        };
        let r = fraction("power.thermal_resistance_c_per_w", r, false, 0.1, 100.0)?;
        let tau = p.thermal_time_constant.0;
        if !(1_000_000_000..=3_600_000_000_000).contains(&tau) {
            return Err(key_err(
                "power.thermal_time_constant",
                format_time(tau),
                "out of range",
                "1s to 1h",
            ));
        }
        let ambient = fraction("power.ambient_c", p.ambient_c, false, -20.0, 80.0)?;
        if !(p.throttle_c > ambient && p.throttle_c <= 150.0) {
            return Err(key_err(
                "power.throttle_c",
                p.throttle_c,
                "a drive cannot throttle below the air around it",
                format!("above power.ambient_c ({ambient}), at most 150"),
            ));
        }
        let resume = p.resume_c.unwrap_or(p.throttle_c - 5.0);
        if !(resume >= ambient && resume < p.throttle_c) {
            return Err(key_err(
                "power.resume_c",
                resume,
                "must lie between ambient and the throttle point",
                format!("{ambient} (power.ambient_c) up to below {}", p.throttle_c),
            ));
        }
        let Some(throttle) = p.throttle_power else {
            return Err(key_err(
                "power.throttle_power",
                "absent",
                "required with power.thermal_resistance_c_per_w",
                format!("a power above {}", power_text(controller_uw)),
            ));
        };
        if throttle.0 <= controller_uw {
            return Err(key_err(
                "power.throttle_power",
                power_text(throttle.0),
                "at or below idle + active controller power leaves nothing for the media",
                format!("more than {}", power_text(controller_uw)),
            ));
        }
        let model = ThermalModel {
            resistance_c_per_w: r,
            time_constant_ns: tau as f64,
            ambient_c: ambient,
            throttle_c: p.throttle_c,
            resume_c: resume,
            base_w: controller_uw as f64 * 1e-6,
        };
        Ok(Some((model, throttle.0 - controller_uw)))
    }

    /// Namespace sizes in whole IUs (empty: no namespaces configured), checked against the
    /// drive's user capacity.
    fn namespace_sizes(&self, drive_user: u64, iu: u64) -> Result<Vec<u64>, KeyError> {
        if self.namespaces.len() > MAX_NAMESPACES {
            return Err(key_err(
                "namespaces",
                format!("{} namespaces", self.namespaces.len()),
                "too many",
                format!("at most {MAX_NAMESPACES}"),
            ));
        }
        let mut v = Vec::with_capacity(self.namespaces.len());
        for (i, n) in self.namespaces.iter().enumerate() {
            if n.0 < iu {
                return Err(key_err(
                    "namespaces",
                    size_text(n.0),
                    &format!("namespace {} is smaller than one IU", i + 1),
                    format!("at least {}", size_text(iu)),
                ));
            }
            v.push(n.0 / iu * iu);
        }
        let total: u64 = v.iter().sum();
        if total > drive_user {
            return Err(key_err(
                "namespaces",
                format_size(total),
                "the namespaces together exceed the user capacity",
                format!("a total up to {}", format_size(drive_user)),
            ));
        }
        Ok(v)
    }

    /// The paged map of a slice with `user_ius` of the drive's `full_user_ius` (None when
    /// `controller.map_cache` is absent or holds the whole map). `most_ius`: the most logical
    /// IUs the slice's FTL accepts.
    /// The FTL's mapping unit and, for a compressing drive, the host IU it compresses:
    /// (granule, Some(IU)); else (IU, None).
    fn compression_parts(&self, iu: u64) -> Result<(u64, Option<u64>), KeyError> {
        let Some(granule) = self.controller.compression_granule else {
            return Ok((iu, None));
        };
        let key = "controller.compression_granule";
        let g = granule.0;
        if !g.is_power_of_two() || g < 512 || g > iu / 2 {
            return Err(key_err(
                key,
                size_text(g),
                "not a granule of the IU",
                format!(
                    "a power of two from 512B to half the IU (ftl.iu = {})",
                    size_text(iu)
                ),
            ));
        }
        let slc_cache = self.slc_cache.dynamic || self.slc_cache.static_size.0 > 0;
        // Without PLP a unit's granules could be split between the host and SLC streams'
        // unprogrammed pages, and a power loss would tear it.
        if slc_cache && !self.buffer.plp {
            return Err(key_err(
                key,
                size_text(g),
                "a compressing drive with an SLC cache needs power-loss protection",
                "buffer.plp = true, or no SLC cache (slc_cache.dynamic = false, slc_cache.static = 0B)",
            ));
        }
        if self.controller.map_cache.is_some() {
            return Err(key_err(
                key,
                size_text(g),
                "a paged map (controller.map_cache) of compressed granules is not modelled",
                "no controller.map_cache",
            ));
        }
        if !self.namespaces.is_empty() {
            return Err(key_err(
                key,
                size_text(g),
                "namespaces on a compressing drive are not modelled",
                "no namespaces",
            ));
        }
        Ok((g, Some(iu)))
    }

    fn map_cache_model(
        &self,
        iu: u64,
        full_user_ius: u64,
        user_ius: u64,
        capacity_factor: f64,
        most_ius: u64,
    ) -> Result<Option<MapCacheModel>, KeyError> {
        let Some(cache) = self.controller.map_cache else {
            return Ok(None);
        };
        let cache = cache.0;
        let entries = iu / MAP_ENTRY_BYTES;
        let full_map_bytes = full_user_ius * MAP_ENTRY_BYTES;
        let full_pages = full_user_ius.div_ceil(entries);
        let full_slots = cache / iu;
        if full_slots >= full_pages {
            return Ok(None);
        }
        let valid = || {
            format!(
                "{} ({MIN_MAP_CACHE_PAGES} translation pages of one IU) or more; the whole map is {}",
                size_text(MIN_MAP_CACHE_PAGES * iu),
                format_size(full_map_bytes)
            )
        };
        if full_slots < MIN_MAP_CACHE_PAGES {
            return Err(key_err(
                "controller.map_cache",
                size_text(cache),
                "too small to page the map through",
                valid(),
            ));
        }
        // The slice keeps the drive's ratio of cached to all translation pages.
        let pages = user_ius.div_ceil(entries);
        let slots = ((full_slots as f64 / capacity_factor).round() as u64).min(pages);
        if slots < MIN_MAP_CACHE_PAGES {
            return Err(key_err(
                "controller.map_cache",
                size_text(cache),
                &format!(
                    "the simulated slice (1/{capacity_factor:.2} of the drive) would cache only {slots} translation pages"
                ),
                format!("{}, or a larger sim.scale", valid()),
            ));
        }
        if user_ius + pages > most_ius {
            return Err(key_err(
                "controller.map_cache",
                size_text(cache),
                "the translation pages do not fit in the spare area beside the user data",
                "a drive with more spare area, or no controller.map_cache",
            ));
        }
        Ok(Some(MapCacheModel {
            full_cache_bytes: cache,
            full_map_bytes,
            pages: pages as u32,
            slots: slots as u32,
            entries_per_page: entries as u32,
            first_lpn: user_ius as u32,
        }))
    }

    /// The drive's name is not empty and every `[spec]` condition reads as one.
    fn check_identity(&self) -> Result<(), KeyError> {
        if self.name.trim().is_empty() {
            return Err(key_err("name", "\"\"", "empty", "a non-empty name"));
        }
        for (key, value) in self.spec.keys() {
            if let Some(v) = value {
                if crate::config::parse_condition(v).is_none() {
                    return Err(key_err(
                        key,
                        format!("{v:?}"),
                        "not a measurement condition",
                        crate::config::SPEC_CONDITION_FORM,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Validate and derive the simulated drive.
    pub fn resolve(&self) -> Result<Model, KeyError> {
        self.check_identity()?;
        let nand = self.nand_parts()?;
        // Every field is `Copy`: `nand` stays whole for `ftl_config`.
        let (full, bits, timings, bad_fraction) =
            (nand.full, nand.bits, nand.timings, nand.bad_fraction);
        let (ppb, page) = (full.pages_per_block, full.page_bytes);
        let host = self.host_parts(page, &timings)?;
        // A compressing drive maps granules: from here on its FTL's IU is the granule.
        let (iu, compression_unit_bytes) = self.compression_parts(host.iu)?;
        let cap = self.capacity_parts(&full, bits, iu, bad_fraction)?;
        let (plan, slice) = self.choose_slice(full, &cap, bad_fraction, iu, host.max_memory)?;
        // Writes may run this far ahead of the firmware's relocation work: one block's IUs.
        let full_shared = self.full_shared(&host, u64::from(ppb) * (page / iu));
        let (dyn_fraction, min_read_buffer) = (host.dyn_fraction, host.min_read_buffer);
        let CapacityParts {
            data_ipb,
            full_namespaces,
            full_user,
            ..
        } = cap;
        let full_user_ius = full_user / iu;
        let geometry = slice.geometry;
        let user_ius = host_user_ius(slice.user_ius, iu, compression_unit_bytes);
        let user_bytes = user_ius * iu;
        let mut memory_bytes = slice_memory_bytes(
            &slice,
            u64::from(ppb),
            data_ipb,
            user_ius,
            iu,
            !self.zns.enabled,
        );
        let capacity_factor = full_user as f64 / user_bytes as f64;
        let namespace_bytes = slice_namespaces(&full_namespaces, user_bytes, full_user, iu)?;
        let die_factor = full.dies() as f64 / geometry.dies() as f64;
        let shared = full_shared.sliced(die_factor, capacity_factor, iu, page, min_read_buffer);
        let compressed_buffer_bytes = compressed_buffer_bytes(
            shared.buffer_bytes,
            (die_factor, capacity_factor),
            2 * u64::from(geometry.planes()) * page * u64::from(bits),
            iu,
        );
        let note = scale_note(
            &full,
            &geometry,
            user_bytes,
            full_user,
            capacity_factor,
            die_factor,
        );
        let raw_factor = full.blocks() as f64 / geometry.blocks() as f64;
        let slc_fraction = sliced_slc_fraction(dyn_fraction, raw_factor, capacity_factor);
        let mut ftl = self.ftl_config(&nand, &slice, iu, user_ius, slc_fraction, cap.parity_stripe);
        ftl.fdp = self.fdp_parts(&full)?;
        let most_ius = slice.max_user_ius(&plan.spares);
        let map_cache =
            self.map_cache_model(iu, full_user_ius, user_ius, capacity_factor, most_ius)?;
        if let Some(m) = &map_cache {
            memory_bytes += m.add_to(&mut ftl);
        }
        let model = Model {
            name: self.name.clone(),
            full,
            geometry,
            timings,
            bits_per_cell: bits,
            cell_name: nand.cell_name,
            retention: nand.retention,
            retention_storage_c: nand.retention_storage_c,
            retention_class: self.nand.retention_class,
            full_user_bytes: full_user,
            drive_user_bytes: cap.drive_user,
            full_namespace_bytes: if full_namespaces.is_empty() {
                vec![full_user]
            } else {
                full_namespaces
            },
            namespace_bytes,
            user_bytes,
            iu_bytes: iu,
            compression_unit_bytes,
            logical_block_bytes: host.lb,
            ftl,
            static_slc_bytes: slice.static_blocks * cap.slc_block_bytes,
            full_static_slc_bytes: cap.full_static_blocks * cap.slc_block_bytes,
            full_bad_bytes: cap.full_bad_blocks * cap.block_bytes,
            full_dynamic_slc_fraction: dyn_fraction,
            link: host.link,
            link_raw_bytes_per_s: shared.link_raw_bytes_per_s,
            link_bytes_per_s: shared.link_bytes_per_s,
            command_overhead_ns: self.controller.command_overhead.0,
            background_after_idle_ns: self.ftl.background_after_idle.0,
            gc_busy_share: host.gc_busy_share,
            host_allocation: self.ftl.host_allocation,
            max_iops: shared.max_iops,
            queue_depth: shared.queue_depth,
            buffer_bytes: shared.buffer_bytes,
            compressed_buffer_bytes,
            read_buffer_bytes: shared.read_buffer_bytes,
            read_ahead_bytes: host.read_ahead,
            map_cache,
            controller: shared.controller,
            full_shared,
            plp: self.buffer.plp,
            scheduler: host.scheduler,
            power: host.power,
            scale: ScaleInfo {
                capacity_factor,
                die_factor,
                note,
                all_dies_scale: plan.smallest_all_dies_scale(),
                die_cut_allowed: self.sim.die_cut == crate::config::DieCut::Allow,
            },
            memory_bytes,
            max_memory_bytes: host.max_memory,
        };
        self.zone_model(&model)?;
        Ok(model)
    }

    /// The zones of a drive with `zns.enabled` (None for a conventional drive), for the
    /// `model` this description resolves to: their size and capacity, how many fit the
    /// (simulated) user capacity, and the erase blocks each takes, striped over the units of
    /// the slice's FTL. A zone's default capacity is a stripe of one block per die and plane
    /// of the whole drive, as a superblock. Kept beside the model rather than in it: the
    /// model's text is a conventional drive's identity in its state files.
    pub fn zone_model(&self, model: &Model) -> Result<Option<crate::zoned::ZoneModel>, KeyError> {
        let (full, ftl, user_bytes, lb) = (
            &model.full,
            &model.ftl,
            model.user_bytes,
            model.logical_block_bytes,
        );
        let z = &self.zns;
        if !z.enabled {
            if !z.is_off() {
                return Err(key_err(
                    "zns.enabled",
                    "false",
                    "zns keys are set on a drive that is not zoned",
                    "zns.enabled = true, or no zns keys",
                ));
            }
            return Ok(None);
        }
        self.check_zoned_conflicts(ftl)?;
        let page = u64::from(ftl.ius_per_page) * u64::from(ftl.iu_bytes);
        let block = u64::from(ftl.pages_per_block) * page;
        let cap = z
            .zone_capacity
            .map_or(u64::from(full.planes()) * full.block_bytes(), |c| c.0);
        let size = z.zone_size.map_or(cap, |s| s.0);
        if cap == 0 || !cap.is_multiple_of(lb) {
            return Err(key_err(
                "zns.zone_capacity",
                cap,
                "not a whole number of logical blocks",
                format!("a multiple of {lb} bytes"),
            ));
        }
        if size < cap || !size.is_multiple_of(lb) {
            return Err(key_err(
                "zns.zone_size",
                size,
                "smaller than the zone capacity or not a whole number of logical blocks",
                format!("a multiple of {lb} bytes, at least zns.zone_capacity ({cap} bytes)"),
            ));
        }
        let units = ftl.dies * ftl.planes_per_die;
        let blocks_per_zone = cap.div_ceil(block);
        let zones = user_bytes / cap;
        let total = u64::from(units) * u64::from(ftl.blocks_per_plane);
        if zones == 0 || zones * blocks_per_zone > total {
            return Err(key_err(
                "zns.zone_capacity",
                cap,
                &format!(
                    "{zones} zones of {blocks_per_zone} erase blocks do not fit the {total} blocks simulated"
                ),
                format!("at most {} bytes, and at least one zone in capacity.user", user_bytes.min(total * block)),
            ));
        }
        check_zone_limits(
            z,
            ZoneSizes {
                size,
                cap,
                zones,
                lb,
                user_bytes,
            },
        )?;
        Ok(Some(crate::zoned::ZoneModel {
            geometry: flashlab_engine::ZoneGeometry {
                zone_bytes: size,
                capacity_bytes: cap,
                zones: zones as u32,
                max_open: z.max_open_zones,
                max_active: z.max_active_zones,
                conventional: 0,
            },
            page_bytes: page,
            blocks_per_zone: blocks_per_zone as u32,
            units,
            blocks_per_unit: ftl.blocks_per_plane,
            keys: "zns",
        }))
    }

    /// Keys a zoned drive cannot have: each names what it conflicts with.
    fn check_zoned_conflicts(&self, ftl: &FtlConfig) -> Result<(), KeyError> {
        let conflicts = [
            (
                "namespaces",
                !self.namespaces.is_empty(),
                "a zoned drive is one namespace",
            ),
            (
                "slc_cache",
                ftl.slc.static_blocks > 0,
                "zones are written in the native cell mode",
            ),
            (
                "nand.bad_block_reserve",
                ftl.bad_blocks > 0,
                "zones take every block",
            ),
            (
                "controller.compression_granule",
                self.controller.compression_granule.is_some(),
                "zones are not compressed",
            ),
            (
                "controller.map_cache",
                self.controller.map_cache.is_some(),
                "a zoned drive maps zones, not IUs",
            ),
            (
                "ftl.parity_stripe_pages",
                ftl.parity_stripe_pages > 0,
                "zones hold no parity pages",
            ),
        ];
        if let Some((key, _, why)) = conflicts.iter().find(|c| c.1) {
            return Err(key_err(
                key,
                "set",
                &format!("not with zns.enabled: {why}"),
                "the key unset, or zns.enabled = false",
            ));
        }
        Ok(())
    }

    /// The whole drive's shared resources (host link, controller, queue, buffers): what a die
    /// cut divides ([`SharedResources::sliced`]). Writes may run `relocation_allowance_ius`
    /// ahead of the firmware's relocation work.
    fn full_shared(&self, host: &HostParts, relocation_allowance_ius: u64) -> SharedResources {
        let link_raw = host.link.raw_bytes_per_s();
        SharedResources {
            link_raw_bytes_per_s: link_raw,
            link_bytes_per_s: (link_raw as f64 * host.efficiency) as u64,
            max_iops: self.controller.max_iops,
            queue_depth: host.queue_depth,
            buffer_bytes: host.buffer,
            read_buffer_bytes: host.read_buffer,
            controller: ControllerModel {
                relocation_allowance_ius,
                ..host.full_controller
            },
        }
    }

    /// The simulated slice's FTL: its geometry and reserves, the SLC cache's share of it
    /// (`slc_fraction`) and the drive's wear-out curve.
    fn ftl_config(
        &self,
        nand: &NandParts,
        slice: &Slice,
        iu: u64,
        user_ius: u64,
        slc_fraction: f64,
        parity_stripe: u32,
    ) -> FtlConfig {
        let (full, geometry) = (&nand.full, &slice.geometry);
        FtlConfig {
            dies: geometry.dies(),
            planes_per_die: full.planes_per_die,
            blocks_per_plane: geometry.blocks_per_plane,
            pages_per_block: full.pages_per_block,
            ius_per_page: (full.page_bytes / iu) as u32,
            iu_bytes: iu as u32,
            bits_per_cell: nand.bits,
            user_ius,
            gc: GcConfig {
                policy: match self.ftl.gc_policy {
                    GcPolicy::Greedy => VictimPolicy::Greedy,
                    GcPolicy::CostBenefit => VictimPolicy::CostBenefit,
                },
                unit: match self.ftl.gc_unit {
                    GcUnitKind::Block => GcUnit::Block,
                    GcUnitKind::Superblock => GcUnit::Superblock,
                },
                foreground_free_blocks: slice.fg_blocks,
                background_free_blocks: slice.bg_blocks,
            },
            slc: SlcConfig {
                static_blocks: slice.static_blocks as u32,
                dynamic: self.slc_cache.dynamic,
                dynamic_max_fraction: slc_fraction,
                fold_when_full: self.slc_cache.when_full == SlcWhenFull::Fold,
            },
            wear_level_threshold: self.ftl.wear_level_threshold,
            parity_stripe_pages: parity_stripe,
            bad_blocks: slice.bad_blocks as u32,
            // The device seeds the failure draw (`Ssd::new`).
            wear_out: WearOut {
                rated_pe_cycles: full.pe_cycles,
                failed_at_rated: nand.grown_bad_at_rated,
                shape: nand.grown_bad_shape,
                seed: 0,
            },
            power_loss_protection: self.buffer.plp,
            track_versions: false,
            fdp: None,
        }
    }
}

impl SharedResources {
    /// The slice's share. Everything the dies share is cut with them, so a die cut is a true
    /// 1/`die_factor` of the drive: whole channels go (dies per channel kept, see
    /// `SlicePlan::slice`), and the host link, the controller's command rate, its queue, its
    /// write buffer and its data path shrink by the same factor.
    fn sliced(
        &self,
        die_factor: f64,
        capacity_factor: f64,
        iu: u64,
        page: u64,
        min_read_buffer: u64,
    ) -> SharedResources {
        let share = |v: u64| ((v as f64 / die_factor).round() as u64).max(1);
        let buffer_bytes = if die_factor == 1.0 {
            self.buffer_bytes
        } else {
            // Whole IUs, and never below the 4 pages the buffer needs to keep programs going.
            (share(self.buffer_bytes) / iu * iu).max(4 * page)
        };
        // The read buffer keeps its share of the drive's capacity, so random reads of a share
        // of the slice hit it as often as on the drive; never below what the read-ahead
        // streams need.
        let read_buffer_bytes = if self.read_buffer_bytes == 0 {
            0
        } else {
            ((self.read_buffer_bytes as f64 / capacity_factor) as u64)
                .max(min_read_buffer)
                .min(self.read_buffer_bytes)
        };
        let c = &self.controller;
        SharedResources {
            link_raw_bytes_per_s: share(self.link_raw_bytes_per_s),
            link_bytes_per_s: share(self.link_bytes_per_s),
            max_iops: share(self.max_iops),
            queue_depth: share(self.queue_depth.into()) as u32,
            buffer_bytes,
            read_buffer_bytes,
            // The slice gets 1/d of the data path, and its cores take d times as long for
            // the same work (1/d of the firmware's rate; core counts stay whole).
            controller: ControllerModel {
                data_bytes_per_s: c.data_bytes_per_s.map(|b| b.map(share)),
                native_decode_bytes_per_s: c.native_decode_bytes_per_s.map(share),
                read_cpu_ns: (c.read_cpu_ns as f64 * die_factor).round() as u64,
                write_cpu_ns: (c.write_cpu_ns as f64 * die_factor).round() as u64,
                relocation_cpu_ns: (c.relocation_cpu_ns as f64 * die_factor).round() as u64,
                cores: c.cores,
                relocation_allowance_ius: c.relocation_allowance_ius,
            },
        }
    }
}

/// What the write buffer holds while a slice compresses the drive's time. A write window
/// that a slice compresses is `1/capacity_factor` of the drive's time (at the drive's rate
/// per die), and an empty buffer takes its whole size at the link's speed at the start of
/// one: kept whole, that burst would weigh `capacity_factor` times more in the slice's window
/// than in the drive's (a 20 ms probe after an idle wrote 52% faster on a half slice). So in
/// such windows the buffer holds its share of the capacity (`factors`: the die and capacity
/// factors), in whole IUs, never below `least_bytes` (two programs of every unit of the
/// slice: one in flight, one filling) nor above the dies' share, which it holds in windows
/// that keep the drive's time (`Ssd::keep_drive_time`).
fn compressed_buffer_bytes(
    buffer_bytes: u64,
    (die_factor, capacity_factor): (f64, f64),
    least_bytes: u64,
    iu: u64,
) -> u64 {
    ((buffer_bytes as f64 * die_factor / capacity_factor) as u64)
        .max(least_bytes)
        .min(buffer_bytes)
        / iu
        * iu
}

/// The IUs the slice's host sees: a compressing drive's host sees whole compression units.
fn host_user_ius(slice_user_ius: u64, iu: u64, compression_unit_bytes: Option<u64>) -> u64 {
    match compression_unit_bytes {
        Some(unit) => slice_user_ius / (unit / iu) * (unit / iu),
        None => slice_user_ius,
    }
}

/// The slice's dynamic SLC share. The cache is a share of free native capacity, which the
/// slice has more of per user byte than the drive (`raw_factor` / `capacity_factor` times, see
/// `SlicePlan::slice`): the share shrinks so the empty slice's cache is 1/capacity_factor of
/// the drive's, and the cliff comes at the same fraction of a fill.
fn sliced_slc_fraction(dyn_fraction: f64, raw_factor: f64, capacity_factor: f64) -> f64 {
    (dyn_fraction * raw_factor / capacity_factor).min(1.0)
}

impl MapCacheModel {
    /// Add the translation pages to `ftl`'s logical IUs (beyond the host's: mapped, written,
    /// relocated and worn by the FTL like data); the model memory their map entries and the
    /// cache's tables take (8 bytes per page, 5 per slot).
    fn add_to(&self, ftl: &mut FtlConfig) -> u64 {
        ftl.user_ius += u64::from(self.pages);
        8 * u64::from(self.pages) + 5 * u64::from(self.slots)
    }
}

/// Bytes of model memory the slice's mapping (none but the block state when the drive is not
/// `mapped`: a zoned drive places its data by zone and builds no map) and its pacing queue's
/// ring take.
fn slice_memory_bytes(
    slice: &Slice,
    pages_per_block: u64,
    data_ius_per_block: u64,
    user_ius: u64,
    iu: u64,
    mapped: bool,
) -> u64 {
    let geometry = &slice.geometry;
    let (map_user, map_raw) = if mapped {
        (user_ius, geometry.raw_bytes() / iu)
    } else {
        (0, 0)
    };
    memory_estimate_bytes(map_user, map_raw, geometry.blocks())
        + crate::pacing::internal_queue_bytes(
            geometry.planes() as u64,
            geometry.blocks() - slice.static_blocks - slice.bad_blocks,
            u64::from(slice.fg_blocks),
            pages_per_block,
            data_ius_per_block,
            user_ius,
        )
}

/// Each namespace's share of the slice, in whole IUs (one namespace of the whole slice when
/// the drive has none).
fn slice_namespaces(
    full_namespaces: &[u64],
    user_bytes: u64,
    full_user: u64,
    iu: u64,
) -> Result<Vec<u64>, KeyError> {
    if full_namespaces.is_empty() {
        return Ok(vec![user_bytes]);
    }
    let v: Vec<u64> = full_namespaces
        .iter()
        .map(|&n| (n as u128 * user_bytes as u128 / full_user as u128) as u64 / iu * iu)
        .collect();
    if v.contains(&0) {
        return Err(key_err(
            "namespaces",
            format!("{} namespaces", v.len()),
            "a namespace would be empty in the simulated slice",
            "larger namespaces, or a larger sim.scale / sim.max_memory",
        ));
    }
    Ok(v)
}

/// How the simulated slice relates to the drive, in words (`ScaleInfo::note`).
fn scale_note(
    full: &NandGeometry,
    geometry: &NandGeometry,
    user_bytes: u64,
    full_user: u64,
    capacity_factor: f64,
    die_factor: f64,
) -> String {
    if geometry == full {
        return "full scale".to_string();
    }
    format!(
        "simulating 1/{capacity_factor:.2} of the drive ({} of {} user capacity): {} of {} blocks per plane, {} of {} dies{}",
        format_size(user_bytes),
        format_size(full_user),
        geometry.blocks_per_plane,
        full.blocks_per_plane,
        geometry.dies(),
        full.dies(),
        if die_factor == 1.0 {
            "; every die simulated, so bandwidth is at full size".to_string()
        } else {
            format!(
                "; {} of {} channels, with the host link, controller IOPS, queue depth and write buffer cut to 1/{} as well",
                geometry.channels,
                full.channels,
                trim_float(die_factor)
            )
        }
    )
}

/// The figures of a zoned drive's layout that its limits are checked against.
struct ZoneSizes {
    size: u64,
    cap: u64,
    zones: u64,
    lb: u64,
    user_bytes: u64,
}

/// The zone count, the span of all zones and the open and active limits, each bounded
/// before a table is sized by them: an error names the key and what would be valid.
fn check_zone_limits(z: &crate::config::ZnsSection, sizes: ZoneSizes) -> Result<(), KeyError> {
    let ZoneSizes {
        size,
        cap,
        zones,
        lb,
        user_bytes,
    } = sizes;
    if zones > crate::zoned::MAX_ZONES {
        return Err(key_err(
            "zns.zone_capacity",
            cap,
            &format!(
                "{zones} zones, more than the {} a drive may have",
                crate::zoned::MAX_ZONES
            ),
            format!(
                "at least {} bytes",
                user_bytes
                    .div_ceil(crate::zoned::MAX_ZONES)
                    .next_multiple_of(lb)
            ),
        ));
    }
    if size
        .checked_mul(zones)
        .is_none_or(|b| b > crate::zoned::MAX_ZONED_BYTES)
    {
        return Err(key_err(
            "zns.zone_size",
            size,
            &format!(
                "{zones} zones of this size span more than {} bytes, the most a host addresses (a signed 64-bit offset)",
                crate::zoned::MAX_ZONED_BYTES
            ),
            format!(
                "a multiple of {lb} bytes from zns.zone_capacity ({cap} bytes) to {}",
                crate::zoned::MAX_ZONED_BYTES / zones / lb * lb
            ),
        ));
    }
    for (key, limit) in [
        ("zns.max_open_zones", z.max_open_zones),
        ("zns.max_active_zones", z.max_active_zones),
    ] {
        if limit as u64 > zones {
            return Err(key_err(
                key,
                limit,
                "more than the drive's zones",
                format!("0 (no limit) to {zones}"),
            ));
        }
    }
    if z.max_active_zones > 0 && z.max_open_zones > z.max_active_zones {
        return Err(key_err(
            "zns.max_open_zones",
            z.max_open_zones,
            "more open zones than active ones (an open zone is active)",
            format!("at most zns.max_active_zones ({})", z.max_active_zones),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{load_device_config, ConfigError, DeviceConfig};

    fn load(sets: &[(&str, &str)]) -> Result<DeviceConfig, ConfigError> {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        load_device_config("tiny-test-1gb", &sets)
    }

    /// A compressed window keeps the buffer's depth unless its first fill would weigh more
    /// than 1% of what the window writes: a minute of writes keeps it, a probe of a few
    /// milliseconds holds the capacity share, and so does a window of a few megabytes.
    #[test]
    fn a_compressed_window_keeps_the_buffers_depth_unless_it_is_short() {
        use flashlab_engine::{WriteWindow, NS_PER_S};
        let sets = vec![("sim.scale".to_string(), "0.3658".to_string())];
        let m = load_device_config("generic-tlc-256gb", &sets)
            .unwrap()
            .resolve()
            .unwrap();
        // 32 planes of 16 KiB pages programmed in 600 us.
        let rate = crate::Model::media_bounds(&m.geometry, &m.timings).1;
        assert!((rate - 32.0 * 16384.0 / 600e-6).abs() < 1.0, "{rate}");
        let excess = m.buffer_bytes - m.compressed_buffer_bytes;
        assert!(
            excess > 0,
            "the slice's capacity share is below the dies' share"
        );
        assert!(m.buffer_depth_kept(WriteWindow::Time(22 * NS_PER_S)));
        assert!(!m.buffer_depth_kept(WriteWindow::Time(7 * NS_PER_S / 1000)));
        // The boundary: the first fill's excess is 1% of the window's native writes.
        let edge_ns = (excess as f64 / 0.01 / rate * 1e9).ceil() as u64;
        assert!(m.buffer_depth_kept(WriteWindow::Time(edge_ns)));
        assert!(!m.buffer_depth_kept(WriteWindow::Time(edge_ns - edge_ns / 100)));
        assert!(m.buffer_depth_kept(WriteWindow::Bytes(100 * excess)));
        assert!(!m.buffer_depth_kept(WriteWindow::Bytes(10 * excess)));
        // The whole drive has no capacity share to hold.
        let whole = load_device_config("generic-tlc-256gb", &[])
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(whole.buffer_bytes, whole.compressed_buffer_bytes);
        assert!(whole.buffer_depth_kept(WriteWindow::Bytes(1)));
    }

    #[test]
    fn die_level_reads_reach_the_geometry_and_refuse_independent_programs_under_reordering() {
        let geometry = |sets: &[(&str, &str)]| load(sets).unwrap().resolve().unwrap().geometry;
        assert!(geometry(&[]).independent_plane_reads);
        let mp = ("nand.multi_plane", "true");
        let off = ("nand.independent_plane_reads", "false");
        assert!(!geometry(&[mp, off]).independent_plane_reads);
        // Die-level reads and programs under read priority: one queue per die.
        let rp = ("scheduler.read_priority", "true");
        assert!(!geometry(&[mp, off, rp]).independent_plane_reads);
        // A die-wide queue cannot let the planes program on their own.
        let own = ("nand.independent_plane_programs", "true");
        match load(&[mp, off, rp, own]) {
            Err(ConfigError::Invalid { key, valid, .. }) => {
                assert_eq!(key, "nand.independent_plane_programs");
                assert!(valid.contains("without reordering"), "{valid}");
            }
            other => panic!("want an invalid-key error, got {other:?}"),
        }
    }
}
