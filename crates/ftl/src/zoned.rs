//! The counters of a zoned namespace's work. A zoned drive places its data by zone (the
//! device's `zoned` module), so none of it passes through the map; its host writes, programs,
//! reads and erases are counted here with the rest, so write amplification, the erase counts
//! and the health log read the same figures as on a conventional drive.

use crate::{Ftl, FtlConfig, FtlError};

impl Ftl {
    /// The FTL of a zoned drive: its blocks, erase counts and counters, without the map. The
    /// map (an entry per logical and per physical IU: 2 GB on a 1 TB drive) would never be
    /// read, so it is not allocated.
    pub fn new_unmapped(config: FtlConfig) -> Result<Ftl, FtlError> {
        Self::build(config, false)
    }

    /// The host wrote `ius` IUs to zones.
    pub fn count_zoned_write(&mut self, ius: u64) {
        self.counters.host_write_ius += ius;
    }

    /// A page of `ius` IUs of zone data was programmed.
    pub fn count_zoned_program(&mut self, ius: u32) {
        self.counters.nand_program_pages += 1;
        self.counters.nand_write_ius += u64::from(ius);
    }

    /// The host read `ius` IUs of zones, `pages` of them from NAND pages.
    pub fn count_zoned_read(&mut self, ius: u64, pages: u64) {
        self.counters.host_read_ius += ius;
        self.counters.nand_read_pages += pages;
    }

    /// A zone reset erased `block`.
    pub fn count_zoned_erase(&mut self, block: u32) {
        self.counters.erases += 1;
        if let Some(c) = self.blocks.erase_count.get_mut(block as usize) {
            *c += 1;
        }
    }
}
