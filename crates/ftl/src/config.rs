//! Configuration and the geometry derived from it (validated once, so the hot paths can
//! trust every number).

/// Which closed block garbage collection empties next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VictimPolicy {
    /// The block with the fewest valid IUs (least copying now).
    Greedy,
    /// Benefit/cost with age (Rosenblum & Ousterhout): old, mostly invalid blocks first.
    CostBenefit,
}

/// What garbage collection empties at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcUnit {
    /// One (die, plane) unit's block: the victim's reads all go to one die.
    Block,
    /// The victim block's superblock: the blocks its stream opened together, one per unit,
    /// emptied page row by page row (each page of every block before the next page of any),
    /// so relocation reads and copies spread over every die (an open-channel FTL's "line",
    /// Linux pblk; see docs/explain-gc.md, "Block size and one-die victims").
    Superblock,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GcConfig {
    pub policy: VictimPolicy,
    pub unit: GcUnit,
    /// Foreground GC runs while free blocks are at or below this many.
    pub foreground_free_blocks: u32,
    /// Background (idle) GC works until this many blocks are free.
    pub background_free_blocks: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SlcConfig {
    /// Blocks permanently in SLC mode, outside user capacity (0 = none).
    pub static_blocks: u32,
    /// Use free native blocks in SLC mode while free space allows.
    pub dynamic: bool,
    /// Share of the native capacity not holding user data that may run in SLC mode (the
    /// cache holds `1 / bits_per_cell` of that).
    pub dynamic_max_fraction: f64,
    /// A full cache folds its oldest data into native blocks while the host writes and
    /// keeps taking host writes in SLC mode (each page past the cache: an SLC program, an
    /// SLC read and a native program); off, host writes past a full cache go straight to
    /// native blocks and the cache folds in idle time.
    pub fold_when_full: bool,
}

impl SlcConfig {
    /// No SLC cache: every write goes to native blocks.
    pub const NONE: SlcConfig = SlcConfig {
        static_blocks: 0,
        dynamic: false,
        dynamic_max_fraction: 0.0,
        fold_when_full: false,
    };
}

/// How native blocks wear out. A block's erase can fail (the block is retired and one of the
/// bad-block reserve of its unit takes its place) with the probability a Weibull life in
/// erase cycles gives it: the share of blocks failed by `n` erases is
/// `1 - exp(-lambda (n / rated)^shape)`, with `lambda` set so that `failed_at_rated` of them
/// have failed at the rated cycles. Whether an erase fails is a hash of the seed, the block
/// and its erase count, so runs are reproducible and independent of every other draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WearOut {
    /// Rated P/E cycles of the native cells.
    pub rated_pe_cycles: u32,
    /// Share of native blocks expected to have failed at the rated cycles (0: none ever fail).
    pub failed_at_rated: f64,
    /// Weibull shape: above 1 failures gather towards wear-out (1: a constant rate per erase).
    pub shape: f64,
    pub seed: u64,
}

impl WearOut {
    /// Blocks never fail.
    pub const NEVER: WearOut = WearOut {
        rated_pe_cycles: 1,
        failed_at_rated: 0.0,
        shape: 1.0,
        seed: 0,
    };

    /// Cumulative hazard `-ln(1 - F(n))` after `n` erases.
    fn hazard(&self, n: u32) -> f64 {
        let lambda = -(1.0 - self.failed_at_rated).ln();
        lambda * (f64::from(n) / f64::from(self.rated_pe_cycles)).powf(self.shape)
    }

    /// Whether the erase that brings `block` to `n` erases fails: with the probability that a
    /// block which survived `n - 1` erases fails at the next.
    pub fn erase_fails(&self, block: u32, n: u32) -> bool {
        if self.failed_at_rated <= 0.0 || n == 0 {
            return false;
        }
        let p = -(self.hazard(n - 1) - self.hazard(n)).exp_m1();
        let mut x = self.seed ^ (u64::from(block) << 32 | u64::from(n));
        // splitmix64's finaliser: a well-mixed 64-bit value from (seed, block, count).
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        ((x >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

#[derive(Clone, PartialEq)]
pub struct FtlConfig {
    pub dies: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    /// Pages per block in native mode.
    pub pages_per_block: u32,
    pub ius_per_page: u32,
    /// Bytes per IU (4096, 8192, 16384, 65536).
    pub iu_bytes: u32,
    /// Bits per cell of the native mode (1 SLC, 2 MLC, 3 TLC, 4 QLC). A block in SLC mode
    /// holds `pages_per_block / bits_per_cell` pages.
    pub bits_per_cell: u32,
    /// Host-visible IUs. Everything else is spare area.
    pub user_ius: u64,
    pub gc: GcConfig,
    pub slc: SlcConfig,
    /// Static wear levelling moves cold data when max - min erase count exceeds this (0 = off).
    pub wear_level_threshold: u32,
    /// Die-level parity (RAIN, XOR stripes): one page in every `parity_stripe_pages` of a
    /// block holds parity instead of data, programmed right after the page before it (0 = no
    /// parity). It costs capacity the spare area would otherwise have and a program per
    /// stripe.
    pub parity_stripe_pages: u32,
    /// Native blocks set aside for bad blocks: those bad from the factory and the reserve
    /// that replaces blocks failing in use. Never programmed or erased, so they are no part
    /// of the spare area GC works with (see [`Geometry::is_bad`]). NAND dies carry blocks
    /// beyond their nominal density for this.
    pub bad_blocks: u32,
    /// How native blocks fail with wear, drawing on `bad_blocks`, then on the spare area.
    pub wear_out: WearOut,
    /// With power-loss protection, open pages are programmed on power loss; without it they
    /// are lost (see [`crate::Ftl::power_loss`]).
    pub power_loss_protection: bool,
    /// Keep a version tag per physical IU so tests can check what reads return.
    pub track_versions: bool,
    /// NVMe Flexible Data Placement: reclaim unit handles the host writes through (None: the
    /// drive places all host data in one stream).
    pub fdp: Option<crate::FdpConfig>,
}

// By hand so that a drive without FDP prints as it did before FDP existed: a state file's
// header names its drive by a hash of this text.
impl std::fmt::Debug for FtlConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("FtlConfig");
        d.field("dies", &self.dies)
            .field("planes_per_die", &self.planes_per_die)
            .field("blocks_per_plane", &self.blocks_per_plane)
            .field("pages_per_block", &self.pages_per_block)
            .field("ius_per_page", &self.ius_per_page)
            .field("iu_bytes", &self.iu_bytes)
            .field("bits_per_cell", &self.bits_per_cell)
            .field("user_ius", &self.user_ius)
            .field("gc", &self.gc)
            .field("slc", &self.slc)
            .field("wear_level_threshold", &self.wear_level_threshold)
            .field("parity_stripe_pages", &self.parity_stripe_pages)
            .field("bad_blocks", &self.bad_blocks)
            .field("wear_out", &self.wear_out)
            .field("power_loss_protection", &self.power_loss_protection)
            .field("track_versions", &self.track_versions);
        if let Some(fdp) = &self.fdp {
            d.field("fdp", fdp);
        }
        d.finish()
    }
}

/// Configuration the FTL cannot work with. The message names the option, the value and what
/// would be valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FtlError {
    #[error("{0}")]
    Config(String),
}

/// Open blocks a stream may hold per (die, plane) unit, times the streams that take native
/// blocks (host, GC, fold, dynamic SLC).
pub(crate) const NATIVE_STREAMS: u32 = 4;

/// Numbers derived from an [`FtlConfig`], all checked to fit `u32` addressing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// (die, plane) units: the parallelism allocation stripes over.
    pub units: u32,
    pub blocks_per_unit: u32,
    pub total_blocks: u32,
    pub pages_per_block: u32,
    pub slc_pages_per_block: u32,
    pub ius_per_page: u32,
    /// Physical IUs per native block (parity pages included): the address space.
    pub ius_per_block: u32,
    /// IUs of a native block that hold data (its parity pages left out): what GC can free.
    pub data_ius_per_block: u32,
    pub slc_data_ius_per_block: u32,
    /// Pages per parity stripe, the parity page last (0: no parity).
    pub parity_stripe_pages: u32,
    pub total_ius: u32,
    pub user_ius: u32,
    pub static_slc_blocks: u32,
    /// Blocks set aside for bad blocks (see [`Geometry::is_bad`]).
    pub bad_blocks: u32,
    /// Good blocks outside the static SLC cache.
    pub native_blocks: u32,
    /// Free native blocks at or below which foreground reclaim runs. At least `units + 2`:
    /// relocating one victim may open a fresh block on every unit before the victim is erased.
    pub reserve_blocks: u32,
    pub background_blocks: u32,
    /// Good native blocks the drive needs to keep accepting writes (see
    /// [`crate::Ftl::read_only`]): the user data, the reserve and every stream's open blocks.
    pub min_native_blocks: u32,
}

fn err(option: &str, value: impl std::fmt::Display, valid: &str) -> FtlError {
    FtlError::Config(format!("ftl option `{option}` = {value}: {valid}"))
}

/// The shape of the drive: every dimension set, a supported IU and cell, and a parity
/// stripe that fits a block. Returns the pages of a block in SLC mode.
fn check_shape(c: &FtlConfig) -> Result<u32, FtlError> {
    for (name, v) in [
        ("dies", c.dies),
        ("planes_per_die", c.planes_per_die),
        ("blocks_per_plane", c.blocks_per_plane),
        ("pages_per_block", c.pages_per_block),
        ("ius_per_page", c.ius_per_page),
    ] {
        if v == 0 {
            return Err(err(name, v, "must be at least 1"));
        }
    }
    if c.iu_bytes < 512 || !c.iu_bytes.is_power_of_two() {
        return Err(err(
            "iu_bytes",
            c.iu_bytes,
            "must be a power of two of at least 512 (e.g. 4096, 16384, 65536)",
        ));
    }
    if !(1..=4).contains(&c.bits_per_cell) {
        return Err(err(
            "bits_per_cell",
            c.bits_per_cell,
            "must be 1 (SLC) to 4 (QLC)",
        ));
    }
    let slc_pages_per_block = c.pages_per_block / c.bits_per_cell;
    if slc_pages_per_block == 0 {
        return Err(err(
            "pages_per_block",
            c.pages_per_block,
            &format!("must be at least bits_per_cell ({})", c.bits_per_cell),
        ));
    }
    if c.parity_stripe_pages == 1 || c.parity_stripe_pages > c.pages_per_block {
        return Err(err(
            "parity_stripe_pages",
            c.parity_stripe_pages,
            &format!(
                "must be 0 (no parity) or from 2 to the pages per block ({})",
                c.pages_per_block
            ),
        ));
    }
    Ok(slc_pages_per_block)
}

/// The blocks set aside from native use (the static SLC cache and the bad-block reserve) and
/// the dynamic SLC cache's settings.
fn check_set_aside(c: &FtlConfig, total_blocks: u32) -> Result<(), FtlError> {
    if c.slc.static_blocks >= total_blocks / 2 {
        return Err(err(
            "slc.static_blocks",
            c.slc.static_blocks,
            &format!("must be below half the blocks ({})", total_blocks / 2),
        ));
    }
    let f = c.slc.dynamic_max_fraction;
    if !(0.0..=1.0).contains(&f) {
        return Err(err(
            "slc.dynamic_max_fraction",
            f,
            "must be between 0 and 1",
        ));
    }
    if c.slc.dynamic && c.bits_per_cell == 1 {
        return Err(err(
            "slc.dynamic",
            true,
            "a dynamic SLC cache needs a multi-bit native mode (bits_per_cell 2 to 4)",
        ));
    }
    if u64::from(c.bad_blocks) + u64::from(c.slc.static_blocks) >= u64::from(total_blocks / 2) {
        return Err(err(
            "bad_blocks",
            c.bad_blocks,
            &format!(
                "bad-block reserve and static SLC blocks ({}) together must be below half the blocks ({})",
                c.slc.static_blocks,
                total_blocks / 2
            ),
        ));
    }
    Ok(())
}

/// FDP's settings; returns the streams its handles add to the drive's (each holds an open
/// block per unit): a host stream per handle beyond the first, and, persistently isolated,
/// a relocation stream per handle beyond the first.
fn check_fdp(c: &FtlConfig) -> Result<u32, FtlError> {
    let Some(f) = &c.fdp else {
        return Ok(0);
    };
    if !(1..=crate::MAX_HANDLES).contains(&f.handles) {
        return Err(err(
            "fdp.handles",
            f.handles,
            &format!("must be from 1 to {}", crate::MAX_HANDLES),
        ));
    }
    if f.ru_blocks == 0 {
        return Err(err("fdp.ru_blocks", 0, "must be at least 1"));
    }
    if !c.power_loss_protection {
        return Err(err(
            "fdp.enabled",
            true,
            "FDP is modelled on drives with power-loss protection (set power_loss_protection = true)",
        ));
    }
    if c.slc.static_blocks > 0 || c.slc.dynamic {
        return Err(err(
            "fdp.enabled",
            true,
            "FDP is modelled on drives without an SLC cache (set slc.static_blocks = 0 and slc.dynamic = false)",
        ));
    }
    let per_handle = match f.handle_type {
        crate::HandleType::InitiallyIsolated => 1,
        crate::HandleType::PersistentlyIsolated => 2,
    };
    Ok(per_handle * (f.handles - 1))
}

impl Geometry {
    pub fn new(c: &FtlConfig) -> Result<Geometry, FtlError> {
        let slc_pages_per_block = check_shape(c)?;
        let units = u64::from(c.dies) * u64::from(c.planes_per_die);
        let total_blocks = units * u64::from(c.blocks_per_plane);
        let ius_per_block = u64::from(c.pages_per_block) * u64::from(c.ius_per_page);
        let total_ius = total_blocks * ius_per_block;
        // u32::MAX is the unmapped / invalid sentinel.
        if total_ius >= u64::from(u32::MAX) {
            return Err(err(
                "blocks_per_plane",
                c.blocks_per_plane,
                &format!(
                    "the drive has {total_ius} physical IUs; at most {} fit 32-bit addresses \
                     (use fewer blocks per plane, i.e. a scaled slice)",
                    u32::MAX - 1
                ),
            ));
        }
        if c.user_ius == 0 || c.user_ius >= u64::from(u32::MAX) {
            return Err(err(
                "user_ius",
                c.user_ius,
                "must be between 1 and 4294967294",
            ));
        }
        let (units, total_blocks, ius_per_block) =
            (units as u32, total_blocks as u32, ius_per_block as u32);
        let data_ius_per_block =
            data_pages(c.pages_per_block, c.parity_stripe_pages) * c.ius_per_page;
        check_set_aside(c, total_blocks)?;
        let native_blocks = total_blocks - c.slc.static_blocks - c.bad_blocks;
        let reserve_blocks = c.gc.foreground_free_blocks.max(units + 2);
        let background_blocks = c.gc.background_free_blocks.max(reserve_blocks);
        // Enough spare that reclaim always finds a victim worth its cost: beyond the user data
        // and its in-flight shadow copies, room for the reserve, every stream's open blocks,
        // and (without PLP, where relocation pads its last page) less than a page of padding
        // per block.
        let user_ius = c.user_ius as u32;
        let fdp_streams = check_fdp(c)?;
        let mut need = u64::from(user_ius)
            + 2 * u64::from(c.ius_per_page)
            + u64::from(reserve_blocks + 2 + (NATIVE_STREAMS + fdp_streams) * units)
                * u64::from(data_ius_per_block)
            + 1;
        if !c.power_loss_protection {
            need += u64::from(c.ius_per_page - 1) * u64::from(native_blocks);
        }
        let have = u64::from(native_blocks) * u64::from(data_ius_per_block);
        let min_native_blocks = need.div_ceil(u64::from(data_ius_per_block)) as u32;
        if need > have {
            let most = have.saturating_sub(need - u64::from(user_ius));
            return Err(err(
                "user_ius",
                c.user_ius,
                &format!(
                    "too little spare area: {native_blocks} native blocks of {data_ius_per_block} \
                     data IUs hold at most {most} user IUs with a GC reserve of {reserve_blocks} \
                     blocks"
                ),
            ));
        }
        Ok(Geometry {
            units,
            blocks_per_unit: c.blocks_per_plane,
            total_blocks,
            pages_per_block: c.pages_per_block,
            slc_pages_per_block,
            ius_per_page: c.ius_per_page,
            ius_per_block,
            data_ius_per_block,
            slc_data_ius_per_block: data_pages(slc_pages_per_block, c.parity_stripe_pages)
                * c.ius_per_page,
            parity_stripe_pages: c.parity_stripe_pages,
            total_ius: total_ius as u32,
            user_ius,
            static_slc_blocks: c.slc.static_blocks,
            bad_blocks: c.bad_blocks,
            native_blocks,
            reserve_blocks,
            background_blocks,
            min_native_blocks,
        })
    }

    /// Whether page `page` of a block (in the block's own page numbering, SLC or native)
    /// holds parity: the last page of each stripe.
    #[inline(always)]
    pub fn is_parity_page(&self, page: u32) -> bool {
        self.parity_stripe_pages != 0
            && page % self.parity_stripe_pages == self.parity_stripe_pages - 1
    }

    /// Whether block `b` is one of the static SLC blocks: the highest-numbered blocks of each
    /// unit, spread round-robin so the cache has every unit's parallelism.
    pub fn is_static_slc(&self, b: u32) -> bool {
        let unit = b / self.blocks_per_unit;
        let from_top = self.blocks_per_unit - 1 - b % self.blocks_per_unit;
        let i = u64::from(from_top) * u64::from(self.units) + u64::from(unit);
        i < u64::from(self.static_slc_blocks)
    }

    /// Whether block `b` is set aside for bad blocks: the lowest-numbered blocks of each unit,
    /// spread round-robin, so every unit loses its share (where in a plane a bad block
    /// lies makes no difference to the model; how many each plane has does).
    #[inline]
    pub fn is_bad(&self, b: u32) -> bool {
        let unit = b / self.blocks_per_unit;
        let from_bottom = b % self.blocks_per_unit;
        let i = u64::from(from_bottom) * u64::from(self.units) + u64::from(unit);
        i < u64::from(self.bad_blocks)
    }
}

/// Pages of a `pages`-page block that hold data when every `stripe`-th page holds parity.
pub fn data_pages(pages: u32, stripe: u32) -> u32 {
    pages - pages.checked_div(stripe).unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn small() -> FtlConfig {
        FtlConfig {
            dies: 2,
            planes_per_die: 1,
            blocks_per_plane: 64,
            pages_per_block: 8,
            ius_per_page: 2,
            iu_bytes: 4096,
            bits_per_cell: 2,
            user_ius: 1400,
            gc: GcConfig {
                policy: VictimPolicy::Greedy,
                unit: GcUnit::Block,
                foreground_free_blocks: 2,
                background_free_blocks: 8,
            },
            slc: SlcConfig::NONE,
            wear_level_threshold: 0,
            parity_stripe_pages: 0,
            bad_blocks: 0,
            wear_out: WearOut::NEVER,
            power_loss_protection: true,
            track_versions: true,
            fdp: None,
        }
    }

    #[test]
    fn a_bad_block_reserve_takes_the_lowest_blocks_of_each_unit_from_the_native_pool() {
        let c = FtlConfig {
            bad_blocks: 5,
            ..small()
        };
        let g = Geometry::new(&c).unwrap();
        assert_eq!(g.native_blocks, 128 - 5);
        let bad: Vec<u32> = (0..g.total_blocks).filter(|&b| g.is_bad(b)).collect();
        // Units of 64 blocks: blocks 0-2 of unit 0, 0-1 of unit 1.
        assert_eq!(bad, vec![0, 1, 2, 64, 65]);
        let too_many = FtlConfig {
            bad_blocks: 64,
            ..small()
        };
        let e = Geometry::new(&too_many).unwrap_err().to_string();
        assert!(e.contains("bad_blocks") && e.contains("half"), "{e}");
    }

    #[test]
    fn derives_geometry() {
        let g = Geometry::new(&small()).unwrap();
        assert_eq!(g.units, 2);
        assert_eq!(g.total_blocks, 128);
        assert_eq!(g.ius_per_block, 16);
        assert_eq!(g.slc_data_ius_per_block, 8);
        assert_eq!(g.data_ius_per_block, 16);
        assert_eq!(g.reserve_blocks, 4);
        assert_eq!(g.background_blocks, 8);
    }

    #[test]
    fn rejects_bad_options_by_name() {
        let mut c = small();
        c.iu_bytes = 3000;
        let e = Geometry::new(&c).unwrap_err().to_string();
        assert!(e.contains("iu_bytes") && e.contains("power of two"), "{e}");
        let mut c = small();
        c.user_ius = 2000;
        let e = Geometry::new(&c).unwrap_err().to_string();
        assert!(e.contains("user_ius") && e.contains("spare"), "{e}");
        let mut c = small();
        c.bits_per_cell = 1;
        c.slc.dynamic = true;
        assert!(Geometry::new(&c)
            .unwrap_err()
            .to_string()
            .contains("slc.dynamic"));
        let mut c = small();
        c.blocks_per_plane = 1 << 30;
        assert!(Geometry::new(&c)
            .unwrap_err()
            .to_string()
            .contains("32-bit"));
        let mut c = small();
        c.slc.dynamic_max_fraction = 1.5;
        assert!(Geometry::new(&c).is_err());
    }

    #[test]
    fn parity_pages_come_out_of_each_blocks_data() {
        let mut c = small();
        c.parity_stripe_pages = 4;
        c.user_ius = 1000;
        let g = Geometry::new(&c).unwrap();
        // 8 native pages: 3 and 7 hold parity; 4 SLC pages: 3.
        assert_eq!(g.data_ius_per_block, 12);
        assert_eq!(g.slc_data_ius_per_block, 6);
        assert_eq!(g.ius_per_block, 16);
        let parity: Vec<u32> = (0..8).filter(|&p| g.is_parity_page(p)).collect();
        assert_eq!(parity, vec![3, 7]);
        assert_eq!(data_pages(8, 3), 6);
        assert_eq!(data_pages(8, 0), 8);
        // The same user capacity as without parity no longer fits the spare.
        c.user_ius = 1400;
        let e = Geometry::new(&c).unwrap_err().to_string();
        assert!(e.contains("spare") && e.contains("12 data IUs"), "{e}");
        for bad in [1, 9] {
            c.parity_stripe_pages = bad;
            let e = Geometry::new(&c).unwrap_err().to_string();
            assert!(
                e.contains("parity_stripe_pages") && e.contains("0 (no parity)"),
                "{e}"
            );
        }
    }

    #[test]
    fn static_slc_blocks_spread_over_units() {
        let mut c = small();
        c.slc.static_blocks = 3;
        c.user_ius = 1300;
        let g = Geometry::new(&c).unwrap();
        let stat: Vec<u32> = (0..g.total_blocks)
            .filter(|&b| g.is_static_slc(b))
            .collect();
        assert_eq!(stat, vec![62, 63, 127]);
    }
}
