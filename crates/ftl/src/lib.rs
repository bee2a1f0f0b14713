//! The flash translation layer, without time: mapping at an indirection unit (IU), block
//! allocation, garbage collection, the SLC cache, wear levelling, TRIM and format.
//!
//! The FTL decides *which* NAND operations happen; the device decides *when* (it schedules the
//! emitted [`NandOp`]s on dies and channels). Keeping time out of here keeps the FTL testable
//! on its own and lets the same logic drive a timing-free floor benchmark ([`floor`]).
//!
//! Modules: `config` (options, derived geometry), `mapping` (L2P / P2L), `blocks` (free pools,
//! valid counts, victim buckets), `alloc` (write streams striped over dies), `gc` (victim
//! policies), `reclaim` (GC, SLC folding, background work), `slc` (cache routing), `wear`
//! (static wear levelling), `host` (the host-facing operations), `check` (invariants).
//!
//! Durability model: with power-loss protection everything acknowledged survives power loss.
//! Without it, host IUs still in an unprogrammed page are lost and read as their previous
//! durable copy, which stays valid (shadowed, with an undo record) until that page is
//! programmed. TRIM is durable at once. Relocation (GC, folding, wear levelling) without PLP
//! programs its last partial page before erasing the source block, so it never loses data.
//!
//! Key types: [`FtlConfig`] (geometry, spare area, [`GcConfig`], [`SlcConfig`], wear), the
//! [`Ftl`] built from it, the [`NandOp`]s each host operation appends for the device to
//! schedule, [`ReadLocation`] (where a read finds an IU) and [`FtlCounters`] (host and NAND
//! traffic, from which write amplification comes).
//!
//! A tiny FTL: fill it, overwrite part of it until garbage collection has to run, trim a
//! range, and check the mapping and block invariants after each step:
//!
//! ```rust
//! use flashlab_ftl::{
//!     Ftl, FtlConfig, GcConfig, GcUnit, ReadLocation, SlcConfig, VictimPolicy, WearOut,
//! };
//!
//! let config = FtlConfig {
//!     dies: 2,
//!     planes_per_die: 1,
//!     blocks_per_plane: 64,
//!     pages_per_block: 8,
//!     ius_per_page: 2,
//!     iu_bytes: 4096,
//!     bits_per_cell: 2,
//!     // 1400 of the 2048 IUs are the host's; the rest is spare area for GC.
//!     user_ius: 1400,
//!     gc: GcConfig {
//!         policy: VictimPolicy::Greedy,
//!         unit: GcUnit::Block,
//!         foreground_free_blocks: 2,
//!         background_free_blocks: 8,
//!     },
//!     slc: SlcConfig::NONE,
//!     wear_level_threshold: 0,
//!     parity_stripe_pages: 0,
//!     bad_blocks: 0,
//!     wear_out: WearOut::NEVER,
//!     power_loss_protection: true,
//!     track_versions: true,
//!     fdp: None,
//! };
//! let mut ftl = Ftl::new(config).unwrap();
//! let mut ops = Vec::new();
//!
//! // Fill every host IU once (version 1), eight IUs per write.
//! for first in (0..1400).step_by(8) {
//!     ftl.write(first, 8, false, false, 1, &mut ops);
//! }
//! ftl.check_invariants();
//! assert_eq!(ftl.mapped_ius(), 1400);
//!
//! // Overwrite a scattered quarter of the IUs three times, a different quarter each time
//! // (versions 2 to 4): more than the spare area holds, so GC must free blocks, moving the
//! // valid IUs that still share them with invalid ones.
//! for version in 2..=4 {
//!     for lpn in (0..1400).step_by(4) {
//!         ftl.write((lpn + version) % 1400, 1, false, false, version, &mut ops);
//!     }
//! }
//! ftl.check_invariants();
//! let c = ftl.counters();
//! assert_eq!(c.host_write_ius, 1400 + 3 * 350);
//! assert!(c.gc_copied_ius > 0);
//! assert!(c.write_amplification() > 1.0);
//! // A read finds the newest copy.
//! assert_eq!(ftl.read_version(4), Some(4));
//! assert_eq!(ftl.read_version(5), Some(1));
//!
//! // TRIM unmaps at once: the range reads as never written.
//! ftl.trim(0, 100);
//! ftl.check_invariants();
//! assert_eq!(ftl.mapped_ius(), 1300);
//! assert!(matches!(ftl.read(50), ReadLocation::Unmapped));
//! ```

mod alloc;
mod blocks;
mod check;
mod config;
mod fdp;
pub mod floor;
mod gc;
mod host;
mod lists;
mod mapping;
mod prefetch;
mod reclaim;
mod slc;
mod wear;
mod zoned;

pub use config::{
    data_pages, FtlConfig, FtlError, GcConfig, GcUnit, SlcConfig, VictimPolicy, WearOut,
};
pub use fdp::{FdpConfig, FdpEvents, FdpReport, HandleType, HandleUsage, MAX_HANDLES};

use alloc::Stream;
use blocks::BlockTable;
use config::Geometry;
use flashlab_media::FastDiv;
use mapping::Mapping;

/// Physical IU address: `(block * pages_per_block + page) * ius_per_page + slot`.
pub type Ppa = u32;
/// Logical IU number: host byte offset / IU size.
pub type Lpn = u32;

/// Two bytes wide: with it a [`NandOp`] has no padding, so a copy of one (the device's
/// pacing queue copies every internal operation into its ring) moves three words rather
/// than each of five fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum NandOpKind {
    Read,
    Program,
    Erase,
}

flashlab_engine::impl_state_enum!(NandOpKind {
    Read,
    Program,
    Erase
});

/// Why an operation happened (for counters and, later, scheduling priority).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpCause {
    HostRead,
    HostWrite,
    /// Reading the old IU for a write smaller than (or misaligned to) the IU.
    ReadModifyWrite,
    /// Garbage collection; also the erases of [`Ftl::format`].
    Gc,
    SlcFold,
    WearLevel,
    /// Rewriting data that has aged towards the end of its retention time (see
    /// [`Ftl::refresh`]).
    Refresh,
    /// A parity page of host data (die-level parity: `FtlConfig::parity_stripe_pages`).
    Parity,
}

flashlab_engine::impl_state_enum!(OpCause {
    HostRead,
    HostWrite,
    ReadModifyWrite,
    Gc,
    SlcFold,
    WearLevel,
    Refresh,
    Parity
});

/// One NAND operation for the device to schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NandOp {
    pub kind: NandOpKind,
    pub cause: OpCause,
    pub block: u32,
    pub page: u32,
    /// IUs moved over the channel (reads: IUs read out; programs: IUs in the page; erase 0).
    pub ius: u32,
    /// The block is in SLC mode (SLC timings apply).
    pub slc: bool,
}

flashlab_engine::impl_state!(NandOp {
    kind,
    cause,
    block,
    page,
    ius,
    slc
});

impl Default for NandOp {
    /// A placeholder (queues are filled with real operations before they are read).
    fn default() -> Self {
        NandOp {
            kind: NandOpKind::Read,
            cause: OpCause::Gc,
            block: 0,
            page: 0,
            ius: 0,
            slc: false,
        }
    }
}

/// Where a logical IU lives, for a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadLocation {
    /// Never written or trimmed: the drive returns zeros without touching NAND.
    Unmapped,
    /// In an open page still held in the controller's buffer.
    Buffered,
    /// On NAND.
    Nand { block: u32, page: u32, slc: bool },
}

/// Counters, cumulative since format (a format resets them; per-block erase counts, the wear,
/// are kept in [`Ftl::erase_counts`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FtlCounters {
    pub host_read_ius: u64,
    pub host_write_ius: u64,
    pub host_trim_ius: u64,
    /// NAND page reads: host reads served from NAND (one per IU), GC / fold / wear-levelling
    /// reads (one per page with valid data) and read-modify-write reads.
    pub nand_read_pages: u64,
    pub nand_program_pages: u64,
    /// IUs programmed to NAND for any reason (host, GC, fold, wear levelling, RMW padding):
    /// every programmed page counts all its IUs, padding included.
    pub nand_write_ius: u64,
    pub erases: u64,
    pub gc_copied_ius: u64,
    /// NAND reads of the old IU for partial-IU writes (none when the old IU is still buffered).
    pub rmw_reads: u64,
    pub slc_write_ius: u64,
    pub slc_read_hits: u64,
    pub slc_folded_ius: u64,
    pub wear_level_moved_ius: u64,
    /// IUs rewritten because their data had aged ([`Ftl::refresh`]).
    pub refreshed_ius: u64,
    /// IUs of host data a compressing controller kept off flash ([`Ftl::write_compressed`]):
    /// `host_write_ius` counts the data as written, `nand_write_ius` what was programmed.
    pub compression_saved_ius: u64,
    /// Parity pages programmed (counted in `nand_program_pages` and `nand_write_ius` too).
    pub parity_program_pages: u64,
    /// Times a write stream passed over a unit whose stripe slot had no block it could
    /// program (no free block on the unit, or only ones whose erase is still queued): that
    /// unit's planes get none of the stream's pages until its turn comes round again.
    pub stripe_slots_passed_over: u64,
}

flashlab_engine::impl_state!(FtlCounters {
    host_read_ius,
    host_write_ius,
    host_trim_ius,
    nand_read_pages,
    nand_program_pages,
    nand_write_ius,
    erases,
    gc_copied_ius,
    rmw_reads,
    slc_write_ius,
    slc_read_hits,
    slc_folded_ius,
    wear_level_moved_ius,
    refreshed_ius,
    compression_saved_ius,
    parity_program_pages,
    stripe_slots_passed_over,
});

impl FtlCounters {
    /// Write amplification: IUs programmed per IU the host wrote (0 before any write).
    pub fn write_amplification(&self) -> f64 {
        if self.host_write_ius == 0 {
            0.0
        } else {
            self.nand_write_ius as f64 / self.host_write_ius as f64
        }
    }
}

/// The FTL.
pub struct Ftl {
    cfg: FtlConfig,
    geo: Geometry,
    blocks: BlockTable,
    map: Mapping,
    /// Indexed by [`alloc::StreamId`].
    streams: [Stream; 4],
    selector: Box<dyn gc::VictimSelector>,
    counters: FtlCounters,
    /// Host IU writes so far: the age clock for cost-benefit.
    seq: u64,
    erases_since_wl: u32,
    /// Erases between wear-levelling checks (each check scans every block).
    wl_interval: u32,
    wl_queue: [u32; wear::WL_BATCH],
    wl_queue_len: usize,
    /// Physical IU to global page, and global page to block: address arithmetic on every I/O
    /// without a divide instruction.
    ipp_div: FastDiv,
    ppb_div: FastDiv,
    /// Logical page to its unit in the stripe folded runs keep (see [`Ftl::aim_at_stripe_slot`]).
    units_div: FastDiv,
    /// A stripe row to its die shift in that stripe.
    dies_div: FastDiv,
    /// The blocks of the SLC stripe being folded, with the IUs moved from each and whether a
    /// host page shadows a copy in it (see [`Ftl::fold_stripe`]); empty between folds. Holds
    /// at most one block per unit, so its capacity is reserved once.
    fold_group: Vec<reclaim::FoldMember>,
    /// The fold's programs held until their die has one for each plane (see
    /// [`Ftl::gather_die_programs`]); empty between folds.
    fold_held: reclaim::HeldPrograms,
    /// The SLC page being folded continues a sequential run, so its copy goes to the unit its
    /// logical address gives ([`Ftl::aim_at_stripe_slot`]).
    relocation_in_lba_order: bool,
    /// How far on the logical page in a folded block's next page may be for the two to be one
    /// run: two stripe rows.
    run_reach_ius: u32,
    /// Unit the next GC victim should come from (see `reclaim`).
    gc_unit: u32,
    /// Debug builds check invariants after the first operation, then at intervals that
    /// double and are never below a quarter of the physical IUs (see `after_op`).
    check_countdown: u64,
    check_interval: u64,
    /// The device carries relocation erases out later and reports each (see
    /// [`Ftl::defer_erases`]).
    erases_deferred: bool,
    /// Blocks taken into a stream since the device last asked (see [`Ftl::note_opened_blocks`]),
    /// or None when nobody asks.
    opened: Option<Vec<u32>>,
    /// The logical IUs relocation moved since the device last asked (see
    /// [`Ftl::note_relocations`]), or None when nobody asks. Emptied by the device after every
    /// operation, so never part of a saved state.
    relocated: Option<Vec<Lpn>>,
    /// The compression unit [`Ftl::write_compressed`] is placing, (first IU, IUs), else
    /// (0, 0): a page programmed meanwhile keeps the unit's records for the unit's last page.
    unit_in_progress: (Lpn, u32),
    /// Flexible Data Placement's handles and counters (see `fdp`); off without FDP.
    fdp: fdp::Fdp,
}

// Maps, blocks, streams, counters and clocks. The configuration, the geometry, the dividers
// and reaches derived from them and the victim selector (no state of its own: it reads the
// block table) come from the configuration.
flashlab_engine::impl_state!(Ftl {
    blocks, map, streams, counters, seq, erases_since_wl, wl_queue, wl_queue_len, gc_unit,
    relocation_in_lba_order, check_countdown, check_interval, erases_deferred, opened,
    unit_in_progress, fdp,
} skip {
    cfg, geo, selector, wl_interval, ipp_div, ppb_div, units_div, dies_div, fold_group,
    fold_held, run_reach_ius, relocated,
} check Ftl::check_loaded);

/// Wear's toll on the blocks ([`Ftl::wear_state`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WearState {
    /// Blocks whose erase failed, retired for good.
    pub retired_blocks: u32,
    /// Bad-block reserve blocks not yet used as replacements.
    pub reserve_left_blocks: u32,
    /// Native blocks in service (retired ones the reserve could not replace left out).
    pub good_native_blocks: u32,
    /// Good native blocks below which the drive turns read-only.
    pub min_native_blocks: u32,
    /// Remaining spare as a share of the fresh drive's (NVMe's available spare).
    pub available_spare_percent: u32,
    pub read_only: bool,
}

/// Erase counts over the good blocks ([`Ftl::erase_count_summary`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EraseSummary {
    pub min: u32,
    pub max: u32,
    pub sum: u64,
    pub blocks: u32,
}

impl EraseSummary {
    /// Mean erase count of a good block.
    pub fn avg(&self) -> f64 {
        if self.blocks == 0 {
            0.0
        } else {
            self.sum as f64 / f64::from(self.blocks)
        }
    }
}

impl Ftl {
    pub fn new(config: FtlConfig) -> Result<Ftl, FtlError> {
        Self::build(config, true)
    }

    /// An FTL whose map is `mapped` (built) or left empty, for a drive that places its data
    /// by other means (a zoned namespace: [`Ftl::new_unmapped`]).
    fn build(config: FtlConfig, mapped: bool) -> Result<Ftl, FtlError> {
        let geo = Geometry::new(&config)?;
        let blocks = BlockTable::new(&geo);
        let map = if mapped {
            Mapping::new(geo.user_ius, geo.total_ius, config.track_versions)
        } else {
            Mapping::new(0, 0, false)
        };
        let streams = host::fresh_streams(&geo);
        let selector = gc::selector(config.gc.policy, geo.data_ius_per_block);
        // Without wear levelling no check ever runs: an interval no erase count reaches keeps
        // the host path from calling in on every IU.
        let wl_interval = if config.wear_level_threshold == 0 {
            u32::MAX
        } else {
            (geo.total_blocks / 16).max(4)
        };
        let (ipp_div, ppb_div) = (
            FastDiv::new(geo.ius_per_page),
            FastDiv::new(geo.pages_per_block),
        );
        let units_div = FastDiv::new(geo.units);
        let dies_div = FastDiv::new(config.dies);
        let fold_group = Vec::with_capacity(geo.units as usize);
        let fold_held = reclaim::HeldPrograms::new(geo.units as usize);
        let run_reach_ius = 2 * geo.ius_per_page * geo.units;
        let fdp = fdp::Fdp::new(
            config.fdp.as_ref(),
            geo.units,
            geo.ius_per_page,
            geo.total_blocks,
        );
        Ok(Ftl {
            cfg: config,
            geo,
            blocks,
            map,
            streams,
            selector,
            counters: FtlCounters::default(),
            seq: 0,
            erases_since_wl: 0,
            wl_interval,
            wl_queue: [lists::NIL; wear::WL_BATCH],
            wl_queue_len: 0,
            ipp_div,
            ppb_div,
            units_div,
            dies_div,
            fold_group,
            fold_held,
            relocation_in_lba_order: false,
            run_reach_ius,
            gc_unit: 0,
            check_countdown: 1,
            check_interval: 1,
            erases_deferred: false,
            opened: None,
            relocated: None,
            unit_in_progress: (0, 0),
            fdp,
        })
    }

    /// From now on the erase of a block emptied by relocation is pending until the device
    /// reports it done ([`Ftl::erase_done`]); the host stream takes free blocks whose erase is
    /// done while there are any. A device that spreads relocation over host writes calls this
    /// once, so that host writes do not wait for erases it has not carried out yet.
    pub fn defer_erases(&mut self) {
        self.erases_deferred = true;
    }

    /// From now on note each block a stream takes to write into, for [`Ftl::take_opened`]
    /// (a device that keeps the age of each block's data asks after every operation).
    pub fn note_opened_blocks(&mut self) {
        self.opened.get_or_insert_with(Vec::new);
    }

    /// From now on note the logical IU of every copy relocation makes (GC, folds, wear
    /// levelling, refresh), for [`Ftl::take_relocated`]: a device whose map is paged updates
    /// each copy's map entry in its translation page.
    pub fn note_relocations(&mut self) {
        self.relocated.get_or_insert_with(Vec::new);
    }

    /// The logical IUs relocated since the last call, appended to `out`, each victim's (or
    /// folded stripe's) followed by `u32::MAX`; forgotten after.
    pub fn take_relocated(&mut self, out: &mut Vec<Lpn>) {
        if let Some(moved) = &mut self.relocated {
            out.append(moved);
        }
    }

    /// The blocks taken to write into since the last call, handed to `f`; forgotten after.
    pub fn take_opened(&mut self, mut f: impl FnMut(u32)) {
        if let Some(opened) = &mut self.opened {
            for b in opened.drain(..) {
                f(b);
            }
        }
    }

    /// Whether `block` belongs to the static SLC cache (erasing it frees an SLC block; erasing
    /// any other block frees a native block's worth of space).
    pub fn is_static_slc_block(&self, block: u32) -> bool {
        self.geo.is_static_slc(block)
    }

    /// The device carried out the erase of `block` (issued by relocation).
    pub fn erase_done(&mut self, block: u32) {
        if let Some(b) = self.blocks.info.get_mut(block as usize) {
            b.erase_pending = false;
        }
    }

    pub fn config(&self) -> &FtlConfig {
        &self.cfg
    }

    pub fn counters(&self) -> &FtlCounters {
        &self.counters
    }

    /// Erase count per block (index = block id).
    pub fn erase_counts(&self) -> &[u32] {
        &self.blocks.erase_count
    }

    /// Free native blocks (static SLC blocks not included).
    pub fn free_blocks(&self) -> u32 {
        self.blocks.free_count(blocks::Pool::Native)
    }

    /// Total blocks (all dies and planes), those set aside for bad blocks included.
    pub fn total_blocks(&self) -> u32 {
        self.geo.total_blocks
    }

    /// Whether `block` is out of service: a bad-block reserve block not (yet) in use, or a
    /// block retired in use. Neither holds data or counts among the erase counts.
    pub fn is_bad_block(&self, block: u32) -> bool {
        matches!(
            self.blocks.info[block as usize].state,
            blocks::BlockState::Bad | blocks::BlockState::Retired
        )
    }

    /// Blocks set aside for bad blocks.
    pub fn bad_blocks(&self) -> u32 {
        self.geo.bad_blocks
    }

    /// What wear has cost: blocks retired in use, reserve blocks left, and whether the drive
    /// is read-only.
    pub fn wear_state(&self) -> WearState {
        let (retired, unreplaced) = self.blocks.retired();
        let reserve_left = self.blocks.reserve_left();
        let good_native = self.geo.native_blocks - unreplaced;
        // NVMe's available spare: what is left of the spare that can stand in for failed
        // blocks, the reserve first, then the native blocks beyond what writing needs.
        let slack = |good: u32| good.saturating_sub(self.geo.min_native_blocks);
        let initial = self.geo.bad_blocks + slack(self.geo.native_blocks);
        let left = reserve_left + slack(good_native);
        WearState {
            retired_blocks: retired,
            reserve_left_blocks: reserve_left,
            good_native_blocks: good_native,
            min_native_blocks: self.geo.min_native_blocks,
            // A drive sized to the last block has no spare to lose: whole until a block fails.
            available_spare_percent: if initial == 0 {
                if retired == 0 {
                    100
                } else {
                    0
                }
            } else {
                (u64::from(left) * 100 / u64::from(initial)) as u32
            },
            read_only: self.read_only(),
        }
    }

    /// Whether so many blocks have failed, beyond the reserve, that the drive can no longer
    /// guarantee room for GC: it then refuses writes (NVMe: media read-only).
    pub fn read_only(&self) -> bool {
        let (_, unreplaced) = self.blocks.retired();
        self.geo.native_blocks - unreplaced < self.geo.min_native_blocks
    }

    /// The erase of emptied block `b`: back to the free pool, or, if the erase fails with
    /// wear, retired (the unit's next reserve block takes its place).
    pub(crate) fn erase_emptied(&mut self, b: u32) {
        let i = b as usize;
        let n = self.blocks.erase_count[i] + 1;
        let fails = !self.blocks.info[i].is_static && self.cfg.wear_out.erase_fails(b, n);
        if self.fdp.on {
            self.fdp_erased(b, fails);
        }
        if fails {
            self.blocks.retire(b);
        } else {
            self.blocks.release(b, self.erases_deferred);
        }
    }

    /// Erase counts of the blocks in service (reserve blocks not in use, never erased, and
    /// blocks retired in use left out):
    /// (min, sum, max, blocks); (0, 0, 0, 0) for a drive without good blocks.
    pub fn erase_count_summary(&self) -> EraseSummary {
        let mut s = EraseSummary {
            min: u32::MAX,
            ..EraseSummary::default()
        };
        for (b, &e) in self.blocks.erase_count.iter().enumerate() {
            if self.is_bad_block(b as u32) {
                continue;
            }
            s.min = s.min.min(e);
            s.max = s.max.max(e);
            s.sum += u64::from(e);
            s.blocks += 1;
        }
        if s.blocks == 0 {
            s.min = 0;
        }
        s
    }

    /// Logical IUs currently mapped.
    pub fn mapped_ius(&self) -> u32 {
        self.map.mapped
    }

    /// Bytes of host data the static SLC cache holds when full.
    pub fn static_slc_bytes(&self) -> u64 {
        u64::from(self.geo.static_slc_blocks)
            * u64::from(self.geo.slc_data_ius_per_block)
            * u64::from(self.cfg.iu_bytes)
    }

    /// Blocks currently in SLC mode holding or taking data (static and dynamic, open or closed).
    pub fn slc_blocks_in_use(&self) -> u32 {
        (0..self.geo.total_blocks)
            .filter(|&b| {
                self.blocks.info[b as usize].slc
                    && self.blocks.info[b as usize].state != blocks::BlockState::Free
            })
            .count() as u32
    }

    /// Bytes of the FTL's tables (map, per-block arrays).
    pub fn memory_bytes(&self) -> u64 {
        // BlockInfo: 16 bytes; erase count, list links (3) and owner: 4 bytes; close_seq and
        // release_seq: 8.
        self.map.memory_bytes()
            + u64::from(self.geo.total_blocks)
                * (std::mem::size_of::<blocks::BlockInfo>() as u64 + 4 * 5 + 2 * 8)
    }

    /// Count an operation; in debug builds check the invariants on a doubling schedule.
    /// A check walks every physical IU, so the interval is at least as many operations as
    /// there are physical IUs: the checks then cost about 1% of a run on any drive (one
    /// per doubling of the run alone would cost a tenth of it on a drive of tens of
    /// millions of IUs).
    fn after_op(&mut self) {
        if cfg!(debug_assertions) {
            self.check_countdown -= 1;
            if self.check_countdown == 0 {
                self.check_invariants();
                let floor = self.map.p2l.len() as u64;
                self.check_interval = self.check_interval.saturating_mul(2).max(floor);
                self.check_countdown = self.check_interval;
            }
        }
    }
}
