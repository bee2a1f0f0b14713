//! Static wear levelling: blocks holding cold data are rarely GC victims, so their erase
//! counts fall behind. When the spread of erase counts exceeds the threshold, the data of the
//! least-erased closed block moves elsewhere so that block re-enters circulation.
//!
//! The check scans every block, so it runs at most once per `wl_interval` erases (amortised
//! O(1) per erase).

use crate::alloc::StreamId;
use crate::blocks::{BlockState, Pool};
use crate::lists::NIL;
use crate::{Ftl, NandOp, OpCause};

/// Cold blocks remembered from one scan, moved one per opportunity (so a scan's cost is
/// shared by up to this many moves).
pub(crate) const WL_BATCH: usize = 8;

impl Ftl {
    /// If due, move one cold block (scanning for candidates when none are queued). Returns
    /// whether it moved one.
    pub(crate) fn maybe_wear_level(&mut self, ops: &mut Vec<NandOp>) -> bool {
        if self.cfg.wear_level_threshold == 0
            // Moving a full block may open a fresh block on every unit before it frees one.
            || self.blocks.free_count(Pool::Native) <= self.geo.units + 1
        {
            return false;
        }
        if self.wl_queue_len == 0 {
            if self.erases_since_wl < self.wl_interval {
                return false;
            }
            self.erases_since_wl = 0;
            self.scan_cold_blocks();
        }
        while self.wl_queue_len > 0 {
            self.wl_queue_len -= 1;
            let b = self.wl_queue[self.wl_queue_len];
            // Still closed native data since the scan (GC may have taken it meanwhile).
            if self.blocks.info[b as usize].state == BlockState::Closed
                && !self.blocks.info[b as usize].slc
            {
                self.relocate(b, OpCause::WearLevel, StreamId::Gc, ops);
                return true;
            }
        }
        false
    }

    /// Rewrite the data of closed block `b` elsewhere (the device found it aging towards the
    /// end of its retention time: the firmware's data refresh), as wear levelling moves a
    /// block. Returns false, doing nothing, if `b` holds no closed data or too few blocks are
    /// free to move a whole block.
    pub fn refresh(&mut self, b: u32, ops: &mut Vec<NandOp>) -> bool {
        let Some(info) = self.blocks.info.get(b as usize) else {
            return false;
        };
        if info.is_static
            || info.state != BlockState::Closed
            || info.valid == 0
            || self.blocks.free_count(Pool::Native) <= self.geo.units + 1
        {
            return false;
        }
        self.relocate(b, OpCause::Refresh, StreamId::Gc, ops);
        self.after_op();
        true
    }

    /// Queue the least-erased closed native blocks whose erase count trails the most-erased
    /// native block by more than the threshold (coldest popped first; ties: lowest id).
    fn scan_cold_blocks(&mut self) {
        // Over the native blocks in service: a retired block's count is history.
        let max = (0..self.geo.total_blocks)
            .filter(|&b| {
                let info = &self.blocks.info[b as usize];
                !info.is_static && info.state != BlockState::Retired
            })
            .map(|b| self.blocks.erase_count[b as usize])
            .max()
            .unwrap_or(0);
        let threshold = self.cfg.wear_level_threshold;
        // Sorted by erase count, descending, so the coldest sits at the end (popped first).
        let mut q = [NIL; WL_BATCH];
        let mut n = 0;
        for b in 0..self.geo.total_blocks {
            let i = b as usize;
            let ec = self.blocks.erase_count[i];
            if self.blocks.info[i].is_static
                || self.blocks.info[i].slc
                || self.blocks.info[i].state != BlockState::Closed
                || max - ec <= threshold
            {
                continue;
            }
            let colder_than = |other: u32| ec < self.blocks.erase_count[other as usize];
            if n == WL_BATCH && !colder_than(q[0]) {
                continue;
            }
            // Drop the warmest when full, then insert keeping the order.
            let mut pos = if n == WL_BATCH {
                q.copy_within(1..WL_BATCH, 0);
                WL_BATCH - 1
            } else {
                n += 1;
                n - 1
            };
            while pos > 0 && !colder_than(q[pos - 1]) {
                q[pos] = q[pos - 1];
                pos -= 1;
            }
            q[pos] = b;
        }
        self.wl_queue = q;
        self.wl_queue_len = n;
    }
}

#[cfg(test)]
mod tests {
    use crate::config::tests::small;
    use crate::Ftl;

    /// Cold data written once, hot data rewritten: without levelling the cold blocks never
    /// erase; with it the spread stays bounded.
    fn spread(threshold: u32) -> (u32, u64) {
        let mut c = small();
        c.wear_level_threshold = threshold;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..1400 {
            ftl.write(lpn, 1, false, false, 0, &mut ops);
        }
        for i in 0..60_000u32 {
            ftl.write(1200 + i % 200, 1, false, false, 1, &mut ops);
        }
        ftl.check_invariants();
        for lpn in 0..1200 {
            assert_eq!(ftl.read_version(lpn), Some(0));
        }
        let ec = ftl.erase_counts();
        (
            ec.iter().max().unwrap() - ec.iter().min().unwrap(),
            ftl.counters().wear_level_moved_ius,
        )
    }

    #[test]
    fn levelling_bounds_the_erase_spread() {
        let (without, moved0) = spread(0);
        let (with, moved) = spread(8);
        assert_eq!(moved0, 0);
        assert!(moved > 0, "spread {with}");
        assert!(without > 50, "spread without levelling: {without}");
        assert!(with <= 8 + 8, "spread with levelling: {with}");
    }
}
