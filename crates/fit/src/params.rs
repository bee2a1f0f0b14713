//! The parameters a fit identifies, and the drive description they make with the class
//! defaults of what the plan cannot identify.

use flashlab_device::DeviceConfig;

use crate::FitError;

/// The class a fitted drive belongs to: the values of what the plan does not identify.
/// They are the generic TLC drive's (`presets/generic-tlc-256gb.toml`), the class the fit
/// assumes.
pub mod class {
    pub const CELL: &str = "tlc";
    pub const BITS_PER_CELL: u64 = 3;
    pub const PAGE_BYTES: u64 = 16 << 10;
    /// Native pages per block at most (a multiple of the bits per cell).
    pub const MAX_PAGES_PER_BLOCK: u64 = 768;
    /// Fewest blocks per plane the fit keeps: enough for the FTL's held-back blocks and
    /// GC's victims on a small drive, few enough that a 1 GB drive's blocks are not a
    /// tenth of the class's.
    pub const MIN_BLOCKS_PER_PLANE: u64 = 64;
    /// Fewest blocks per plane of a fitted block: the FTL's GC thresholds and open blocks
    /// (eight or so per plane) with room for GC's victims.
    pub const MIN_FITTED_BLOCKS_PER_PLANE: u64 = 24;
    /// Smallest block a fitted block shrinks to so that a drive loads at its spare.
    pub const MIN_SHRUNK_PAGES_PER_BLOCK: u64 = 24;
    /// Most a whole number of blocks may round the raw capacity up by, so the fitted spare
    /// is what the description gets.
    pub const MAX_ROUNDING: f64 = 0.005;
    pub const CHANNEL_RATE: &str = "1600MT/s";
    pub const T_ERASE: &str = "3.5ms";
    /// SLC-mode read time over native read time (30 us / 50 us).
    pub const SLC_READ_RATIO: f64 = 0.6;
    pub const PE_CYCLES: u32 = 3000;
    pub const IU: &str = "4KiB";
    pub const GC_POLICY: &str = "greedy";
    pub const LINK: &str = "pcie-gen4-x4";
    pub const MAX_IOPS: u64 = 1_000_000;
    pub const SOURCE: &str = "the TLC class default (presets/generic-tlc-256gb.toml)";
    /// The class's values of what a partial measurement set may leave unmeasured.
    pub const T_READ_NS: u64 = 50_000;
    pub const T_PROG_NS: u64 = 600_000;
    pub const SLC_T_PROG_NS: u64 = 200_000;
    pub const DIES: u32 = 8;
    pub const PLANES: u32 = 4;
    pub const COMMAND_OVERHEAD_NS: u64 = 6_000;
    pub const CACHE_FRACTION: f64 = 0.25;
    pub const BUFFER_BYTES: u64 = 8 << 20;
    /// Spare over user of the model's default `capacity.spare_factor` (0.07 of raw).
    pub const SPARE: f64 = 0.07 / 0.93;
}

/// Where the SLC cache is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cache {
    /// Free native blocks run in SLC mode, at most this share of the free capacity.
    Dynamic { fraction: f64 },
    /// Blocks kept in SLC mode, this many SLC bytes.
    Static { bytes: u64 },
}

/// What a fit identifies of a drive.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub capacity_bytes: u64,
    pub dies: u32,
    pub planes: u32,
    pub t_read_ns: u64,
    pub t_prog_ns: u64,
    pub slc_t_prog_ns: u64,
    pub command_overhead_ns: u64,
    pub cache: Cache,
    /// The cache folds while the host writes past it (`when_full = "fold"`).
    pub fold: bool,
    /// Spare area over the user capacity (raw native / user − 1).
    pub spare: f64,
    pub buffer_bytes: u64,
    pub read_priority: bool,
    /// Native pages per erase block, when fitted (from `gc-onset`); `None` takes the largest
    /// block [`Params::geometry`] allows.
    pub pages_per_block: Option<u64>,
}

/// A time as the description writes it: whole tenths of a microsecond.
pub fn time_text(ns: u64) -> String {
    let tenths = (ns + 50) / 100;
    format!("{}.{}us", tenths / 10, tenths % 10)
}

impl Params {
    /// Channels and dies on each: dies in pairs on a channel when there are four or more.
    pub fn channels(&self) -> (u32, u32) {
        if self.dies >= 4 && self.dies % 2 == 0 {
            (self.dies / 2, 2)
        } else {
            (self.dies, 1)
        }
    }

    /// Pages per block and blocks per plane: a fitted block (at most the one that leaves
    /// `MIN_FITTED_BLOCKS_PER_PLANE` blocks a plane) as whole blocks of the raw capacity, or,
    /// where the block was not measured, the largest block (of whole word lines, at most
    /// the class's) that leaves at least `MIN_BLOCKS_PER_PLANE` blocks for the user data, the
    /// spare area and a static cache, and whose whole blocks hold that within
    /// `MAX_ROUNDING` (a block a little smaller, when the largest would round the spare up
    /// by more). The block is as near the class's as the capacity allows: a small block
    /// erases more often for the same data, which slows a folding cache and lengthens the
    /// read tail beside writes.
    pub fn geometry(&self) -> (u64, u64) {
        let per_plane = self.raw_per_plane_bytes();
        let blocks_of = |ppb: u64| per_plane / (ppb * class::PAGE_BYTES) as f64;
        if let Some(ppb) = self.pages_per_block {
            let ppb = ppb.clamp(class::BITS_PER_CELL, self.max_fitted_pages_per_block());
            return (ppb, (blocks_of(ppb).ceil() as u64).max(8));
        }
        let mut ppb = class::MAX_PAGES_PER_BLOCK;
        while ppb > class::BITS_PER_CELL && blocks_of(ppb) < class::MIN_BLOCKS_PER_PLANE as f64 {
            ppb -= class::BITS_PER_CELL;
        }
        let largest = ppb;
        let fits = |ppb: u64| {
            let exact = blocks_of(ppb);
            exact.ceil() / exact - 1.0 <= class::MAX_ROUNDING
        };
        while ppb > largest / 2 && ppb > class::BITS_PER_CELL && !fits(ppb) {
            ppb -= class::BITS_PER_CELL;
        }
        if !fits(ppb) {
            ppb = largest;
        }
        (ppb, (blocks_of(ppb).ceil() as u64).max(8))
    }

    /// Raw native bytes of each plane: the user capacity, the spare and a static cache.
    fn raw_per_plane_bytes(&self) -> f64 {
        let units = u64::from(self.dies * self.planes);
        let static_native = match self.cache {
            Cache::Static { bytes } => bytes * class::BITS_PER_CELL,
            Cache::Dynamic { .. } => 0,
        };
        let raw = self.capacity_bytes as f64 * (1.0 + self.spare) + static_native as f64;
        raw / units as f64
    }

    /// The largest block of whole word lines, at most the class's, that leaves
    /// `MIN_FITTED_BLOCKS_PER_PLANE` blocks a plane.
    pub fn max_fitted_pages_per_block(&self) -> u64 {
        let most = self.raw_per_plane_bytes()
            / (class::MIN_FITTED_BLOCKS_PER_PLANE * class::PAGE_BYTES) as f64;
        let most = (most as u64).min(class::MAX_PAGES_PER_BLOCK);
        (most - most % class::BITS_PER_CELL).max(class::BITS_PER_CELL)
    }

    /// The drive description's keys in section order, each a dotted key and its TOML value.
    pub fn keys(&self) -> Vec<(String, String)> {
        let (channels, per_channel) = self.channels();
        let (ppb, blocks) = self.geometry();
        let q = |s: &str| format!("\"{s}\"");
        let t_read = self.t_read_ns as f64;
        let mut keys: Vec<(&str, String)> = vec![
            ("capacity.user", q(&format!("{}B", self.capacity_bytes))),
            ("nand.cell", q(class::CELL)),
            ("nand.channels", channels.to_string()),
            ("nand.dies_per_channel", per_channel.to_string()),
            ("nand.planes_per_die", self.planes.to_string()),
            (
                "nand.page_size",
                q(&format!("{}KiB", class::PAGE_BYTES >> 10)),
            ),
            ("nand.pages_per_block", ppb.to_string()),
            ("nand.blocks_per_plane", blocks.to_string()),
            ("nand.channel_rate", q(class::CHANNEL_RATE)),
            ("nand.t_read", q(&time_text(self.t_read_ns))),
            ("nand.t_prog", q(&time_text(self.t_prog_ns))),
            ("nand.t_erase", q(class::T_ERASE)),
            (
                "nand.slc_t_read",
                q(&time_text((t_read * class::SLC_READ_RATIO) as u64)),
            ),
            ("nand.slc_t_prog", q(&time_text(self.slc_t_prog_ns))),
            ("nand.pe_cycles", class::PE_CYCLES.to_string()),
            ("ftl.iu", q(class::IU)),
            ("ftl.gc_policy", q(class::GC_POLICY)),
        ];
        match self.cache {
            Cache::Dynamic { fraction } => {
                keys.push(("slc_cache.dynamic", "true".into()));
                keys.push(("slc_cache.dynamic_max_fraction", format!("{fraction:.4}")));
            }
            Cache::Static { bytes } => {
                keys.push(("slc_cache.dynamic", "false".into()));
                keys.push(("slc_cache.static", q(&format!("{}MiB", bytes >> 20))));
            }
        }
        let when_full = if self.fold { "fold" } else { "direct" };
        keys.extend([
            ("slc_cache.when_full", q(when_full)),
            ("buffer.size", q(&format!("{}KiB", self.buffer_bytes >> 10))),
            ("buffer.plp", "false".into()),
            ("link.kind", q(class::LINK)),
            (
                "controller.command_overhead",
                q(&time_text(self.command_overhead_ns)),
            ),
            ("controller.max_iops", class::MAX_IOPS.to_string()),
            ("scheduler.read_priority", self.read_priority.to_string()),
        ]);
        keys.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    /// The description as TOML: `name`, `description`, then a table per section.
    pub fn toml(&self, name: &str, description: &str) -> String {
        let mut text = format!("name = {name:?}\ndescription = {description:?}\n");
        let mut section = String::new();
        for (key, value) in self.keys() {
            let (s, k) = key.split_once('.').unwrap_or(("", &key));
            if s != section {
                text.push_str(&format!("\n[{s}]\n"));
                section = s.to_string();
            }
            text.push_str(&format!("{k} = {value}\n"));
        }
        text
    }

    /// These parameters made to load: the FTL holds back blocks (its GC reserve, a page of
    /// padding per block, the open blocks of every unit) that the fitted effective spare
    /// does not count, so a drive of few, large parallel units with a small measured spare
    /// needs more raw blocks than the spare alone gives. A fitted block shrinks first (by a
    /// quarter, in whole word lines, down to `MIN_SHRUNK_PAGES_PER_BLOCK`): the held-back
    /// blocks are then smaller and the spare the steady state measured stays; then the spare
    /// is raised in steps of 2% of the raw capacity. Parameters that load are returned
    /// unchanged.
    pub fn loadable(&self) -> Params {
        let mut p = self.clone();
        for _ in 0..96 {
            if p.config().is_ok() {
                return p;
            }
            match p.pages_per_block {
                Some(ppb) if ppb > class::MIN_SHRUNK_PAGES_PER_BLOCK => {
                    let ppb = p.geometry().0 * 3 / 4;
                    let ppb = ppb - ppb % class::BITS_PER_CELL;
                    p.pages_per_block = Some(ppb.max(class::MIN_SHRUNK_PAGES_PER_BLOCK));
                }
                _ => p.spare = (1.0 + p.spare) * 1.02 - 1.0,
            }
        }
        self.clone()
    }

    /// The description, loaded as `--device` loads a file.
    pub fn config(&self) -> Result<DeviceConfig, FitError> {
        let text = self.toml("fit-candidate", "");
        flashlab_device::parse_device_config("fit-candidate.toml", &text, &[])
            .map_err(|e| FitError::failed(format!("a candidate drive does not load: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params {
            capacity_bytes: 1 << 30,
            dies: 4,
            planes: 2,
            t_read_ns: 50_000,
            t_prog_ns: 600_000,
            slc_t_prog_ns: 200_000,
            command_overhead_ns: 5_000,
            cache: Cache::Dynamic { fraction: 0.25 },
            fold: false,
            spare: 0.2,
            buffer_bytes: 2 << 20,
            read_priority: false,
            pages_per_block: None,
        }
    }

    #[test]
    fn the_description_loads_with_the_spare_asked() {
        let p = params();
        let config = p.config().unwrap();
        let model = config.resolve().unwrap();
        assert_eq!(model.full_user_bytes, 1 << 30);
        let (ppb, blocks) = p.geometry();
        assert!(blocks >= class::MIN_BLOCKS_PER_PLANE, "{blocks}");
        let raw = (ppb * class::PAGE_BYTES * blocks * 8) as f64;
        let spare = raw / (1u64 << 30) as f64 - 1.0;
        assert!((spare - 0.2).abs() < 0.01, "{spare}");
    }

    #[test]
    fn a_spare_too_small_for_the_ftl_is_raised_until_the_drive_loads() {
        let mut p = params();
        p.capacity_bytes = 256 << 20;
        p.dies = 1;
        p.planes = 1;
        p.spare = 0.045;
        assert!(
            p.config().is_err(),
            "the case needs a spare the FTL refuses"
        );
        let q = p.loadable();
        assert!(q.config().is_ok());
        assert!(q.spare > p.spare && q.spare < 0.3, "{}", q.spare);
        assert_eq!(params().loadable(), params());
    }

    #[test]
    fn times_are_written_in_tenths_of_a_microsecond() {
        assert_eq!(time_text(62_149), "62.1us");
        assert_eq!(time_text(600_000), "600.0us");
    }
}
