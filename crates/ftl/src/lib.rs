//! The flash translation layer, without time: mapping at an indirection unit (IU), block
//! allocation, garbage collection, the SLC cache, wear levelling, TRIM and format.
//!
//! The FTL decides *which* NAND operations happen; the device decides *when* (it schedules the
//! emitted [`NandOp`]s on dies and channels). Keeping time out of here keeps the FTL testable
//! on its own and lets the same logic drive a timing-free floor benchmark.
//!
//! API CONTRACT (stub; the implementation fills in the bodies and may add methods).

/// Physical IU address: `(block * pages_per_block + page) * ius_per_page + slot`.
pub type Ppa = u32;
/// Logical IU number: host byte offset / IU size.
pub type Lpn = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VictimPolicy {
    Greedy,
    CostBenefit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GcConfig {
    pub policy: VictimPolicy,
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
    /// Upper bound of the dynamic cache as a fraction of *free* native capacity.
    pub dynamic_max_fraction: f64,
}

#[derive(Debug, Clone, PartialEq)]
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
    /// With power-loss protection, open pages are programmed on power loss; without it they
    /// are lost (see [`Ftl::power_loss`]).
    pub power_loss_protection: bool,
    /// Keep a version tag per physical IU so tests can check what reads return.
    pub track_versions: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NandOpKind {
    Read,
    Program,
    Erase,
}

/// Why an operation happened (for counters and, later, scheduling priority).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpCause {
    HostRead,
    HostWrite,
    /// Reading the old IU for a write smaller than (or misaligned to) the IU.
    ReadModifyWrite,
    Gc,
    SlcFold,
    WearLevel,
}

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

/// Counters, cumulative since format.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FtlCounters {
    pub host_read_ius: u64,
    pub host_write_ius: u64,
    pub host_trim_ius: u64,
    pub nand_read_pages: u64,
    pub nand_program_pages: u64,
    /// IUs programmed to NAND for any reason (host, GC, fold, wear levelling, RMW padding).
    pub nand_write_ius: u64,
    pub erases: u64,
    pub gc_copied_ius: u64,
    pub rmw_reads: u64,
    pub slc_write_ius: u64,
    pub slc_read_hits: u64,
    pub slc_folded_ius: u64,
    pub wear_level_moved_ius: u64,
}

/// The FTL.
pub struct Ftl {
    _private: (),
}

/// Configuration the FTL cannot work with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FtlError {
    #[error("{0}")]
    Config(String),
}

impl Ftl {
    pub fn new(_config: FtlConfig) -> Result<Ftl, FtlError> {
        todo!()
    }

    /// Host write of IUs `[first, first + count)`. `head_partial` / `tail_partial`: the first /
    /// last IU is only partly written, so its old contents must be read first (RMW) if mapped.
    /// Appends the NAND operations it causes (including foreground GC) to `ops`.
    /// `version` tags the data when `track_versions` is on.
    pub fn write(&mut self, _first: Lpn, _count: u32, _head_partial: bool, _tail_partial: bool, _version: u32, _ops: &mut Vec<NandOp>) {
        todo!()
    }

    /// Where IU `lpn` lives (counts the read in the counters).
    pub fn read(&mut self, _lpn: Lpn) -> ReadLocation {
        todo!()
    }

    /// Version tag of the data a read of `lpn` returns (None = unmapped); needs `track_versions`.
    pub fn read_version(&self, _lpn: Lpn) -> Option<u32> {
        todo!()
    }

    /// Deallocate IUs `[first, first + count)`.
    pub fn trim(&mut self, _first: Lpn, _count: u32) {
        todo!()
    }

    /// Program any partly filled open pages (padding them), so everything written is durable.
    pub fn flush(&mut self, _ops: &mut Vec<NandOp>) {
        todo!()
    }

    /// Power is lost. With PLP: as flush. Without: data in unprogrammed open pages is lost and
    /// those IUs read as their previous durable version.
    pub fn power_loss(&mut self, _ops: &mut Vec<NandOp>) {
        todo!()
    }

    /// One bounded step of background work (idle GC toward `background_free_blocks`, SLC
    /// folding, wear levelling). Returns false when there is nothing left to do.
    pub fn background_step(&mut self, _ops: &mut Vec<NandOp>) -> bool {
        todo!()
    }

    /// Secure erase: every IU unmapped, blocks erased (erase counts kept), as fresh.
    pub fn format(&mut self, _ops: &mut Vec<NandOp>) {
        todo!()
    }

    pub fn counters(&self) -> &FtlCounters {
        todo!()
    }

    /// Erase count per block (index = block id).
    pub fn erase_counts(&self) -> &[u32] {
        todo!()
    }

    pub fn free_blocks(&self) -> u32 {
        todo!()
    }

    /// Check every invariant (mapping bijection, valid counts, free lists); panics with a
    /// description on the first violation. Debug builds also call it periodically.
    pub fn check_invariants(&self) {
        todo!()
    }
}
