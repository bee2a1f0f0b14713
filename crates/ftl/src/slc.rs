//! SLC cache routing: host writes go to SLC-mode blocks (static ones first, then free native
//! blocks in SLC mode within the dynamic limit) while there is room, and bypass to native
//! blocks once the cache is exhausted. Folding back to native blocks lives in `reclaim`.

use crate::alloc::StreamId;
use crate::blocks::{Class, Pool};
use crate::gc::{Greedy, VictimSelector};
use crate::lists::NIL;
use crate::{Ftl, NandOp, NandOpKind, OpCause};

impl Ftl {
    pub(crate) fn slc_cache_enabled(&self) -> bool {
        self.geo.static_slc_blocks > 0 || self.cfg.slc.dynamic
    }

    /// The stream a host IU goes to. If it is the SLC stream, its current page is started.
    #[inline]
    pub(crate) fn route_host_write(&mut self) -> StreamId {
        let st = &self.streams[StreamId::Slc as usize];
        // An exhausted cache (no open SLC block, none to take) is the common case on a full
        // drive: answer it without walking the units.
        if self.slc_cache_enabled()
            && (st.cur_block != NIL
                || ((st.open_count > 0 || self.slc_block_available())
                    && self.start_page(StreamId::Slc)))
        {
            StreamId::Slc
        } else {
            StreamId::Host
        }
    }

    /// While the dynamic cache's blocks hold more room than its limit allows (the drive
    /// filled with user data since they were taken), fold its emptiest closed block back into
    /// native blocks. Firmware shrinks a dynamic cache as the free space it is carved from
    /// runs out, so a sequential fill folds the cache's data over the course of the fill, at
    /// a bounded cost per host write, rather than leaving it all to fold on the next writes
    /// once no native block is left (TechPowerUp's whole-drive fills show the drives moving
    /// data out of SLC while they fill). One block per host IU written at most.
    #[inline]
    pub(crate) fn shrink_dynamic_slc(&mut self, ops: &mut Vec<NandOp>) {
        if self.blocks.dynamic_slc_blocks() < 2 || !self.dynamic_slc_over_limit() {
            return;
        }
        if let Some(b) = Greedy.select(&mut self.blocks, Class::SlcDynamic, self.seq) {
            self.relocate(b, OpCause::SlcFold, StreamId::Fold, ops);
        }
    }

    /// With every static SLC block in use, erase one whose data the host has overwritten
    /// entirely, so the cache takes writes again. Such a block costs an erase and no copy,
    /// so firmware recycles it at once, busy or not, rather than leaving the cache exhausted
    /// until idle time folds it (a second sequential pass over a full drive overwrites the
    /// first pass's cached data block by block). Folding a block that still holds data waits
    /// for idle time, as before.
    #[inline]
    pub(crate) fn recycle_stale_static_slc(&mut self, ops: &mut Vec<NandOp>) {
        if self.geo.static_slc_blocks == 0 || self.blocks.free_count(Pool::Static) > 0 {
            return;
        }
        let b = self.blocks.bucket_head(Class::SlcStatic, 0);
        if b == NIL {
            return;
        }
        self.blocks.begin_reclaim(b);
        ops.push(NandOp {
            kind: NandOpKind::Erase,
            cause: OpCause::SlcFold,
            block: b,
            page: 0,
            ius: 0,
            slc: true,
        });
        self.erase_emptied(b);
        self.counters.erases += 1;
        self.erases_since_wl = self.erases_since_wl.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use crate::config::tests::small;
    use crate::{Ftl, ReadLocation};

    #[test]
    fn static_cache_fills_then_bypasses_then_folds_when_idle() {
        let mut c = small();
        c.slc.static_blocks = 2; // 2 blocks x 4 SLC pages x 2 IUs = 16 IUs of cache
        c.user_ius = 1200;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..40 {
            ftl.write(lpn, 1, false, false, lpn, &mut ops);
        }
        assert_eq!(ftl.counters().slc_write_ius, 16);
        assert!(ops
            .iter()
            .filter(|o| o.kind == crate::NandOpKind::Program)
            .all(|o| o.slc == (o.block % 64 == 63)));
        match ftl.read(3) {
            ReadLocation::Nand { slc: true, .. } => {}
            other => panic!("expected an SLC hit, got {other:?}"),
        }
        assert_eq!(ftl.counters().slc_read_hits, 1);
        ops.clear();
        while ftl.background_step(&mut ops) {}
        assert_eq!(ftl.counters().slc_folded_ius, 16);
        assert!(ops.iter().any(|o| o.cause == crate::OpCause::SlcFold
            && o.kind == crate::NandOpKind::Erase
            && o.slc));
        assert!(matches!(ftl.read(3), ReadLocation::Nand { slc: false, .. }));
        for lpn in 0..40 {
            assert_eq!(ftl.read_version(lpn), Some(lpn));
        }
        // The cache is empty again and takes new writes.
        ftl.write(100, 1, false, false, 7, &mut ops);
        assert_eq!(ftl.counters().slc_write_ius, 17);
        ftl.check_invariants();
    }

    #[test]
    fn dynamic_cache_puts_at_most_its_fraction_of_free_native_blocks_in_slc_mode() {
        // 128 native blocks of 16 IUs (MLC), 8 IUs each in SLC mode. At 0.25 of the room not
        // holding user data, an empty drive turns ~0.25 x 128 blocks to SLC mode (28, as the
        // cached data takes its own share), a 224-IU cache; comparing SLC IUs with native IUs
        // took 37 blocks.
        let mut c = small();
        c.slc.dynamic = true;
        c.slc.dynamic_max_fraction = 0.25;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        // Up to the first write the cache no longer takes (later writes shrink it, as the
        // room it is carved from fills).
        for lpn in 0..600 {
            let cached = ftl.counters().slc_write_ius;
            ftl.write(lpn, 1, false, false, 1, &mut ops);
            if ftl.counters().slc_write_ius == cached {
                break;
            }
        }
        let blocks = ftl.slc_blocks_in_use();
        assert!((26..=32).contains(&blocks), "{blocks} blocks in SLC mode");
        let slc_ius = ftl.counters().slc_write_ius;
        assert!((26 * 8..=32 * 8).contains(&slc_ius), "{slc_ius} IUs cached");
        ftl.check_invariants();
    }

    #[test]
    fn dynamic_cache_shrinks_as_the_drive_fills() {
        let mut c = small();
        c.slc.dynamic = true;
        c.slc.dynamic_max_fraction = 0.5;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        // Empty drive: the first writes land in SLC mode.
        ftl.write(0, 8, false, false, 1, &mut ops);
        assert_eq!(ftl.counters().slc_write_ius, 8);
        assert!(ftl.slc_blocks_in_use() >= 1);
        // Fill the drive: eventually writes bypass the cache.
        for lpn in 8..1400 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
        }
        let slc_before = ftl.counters().slc_write_ius;
        assert!(slc_before < 1400, "cache never bypassed");
        for lpn in 0..100 {
            ftl.write(lpn, 1, false, false, 2, &mut ops);
        }
        assert!(ftl.counters().slc_write_ius - slc_before < 100);
        ftl.check_invariants();
    }

    #[test]
    fn static_cache_overwritten_whole_takes_writes_again_while_busy() {
        let mut c = small();
        c.slc.static_blocks = 2; // 16 IUs of cache, as above
        c.user_ius = 1200;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..40 {
            ftl.write(lpn, 1, false, false, 0, &mut ops);
        }
        assert_eq!(ftl.counters().slc_write_ius, 16);
        // A second pass, with no idle time: once the cached IUs 0..16 are overwritten, the
        // cache's blocks hold nothing and take the pass's next writes.
        for lpn in 0..40 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
        }
        assert_eq!(ftl.counters().slc_folded_ius, 0);
        assert!(ftl.counters().slc_write_ius > 16, "{:?}", ftl.counters());
        assert!(ops
            .iter()
            .any(|o| o.kind == crate::NandOpKind::Erase && o.slc));
        for lpn in 0..40 {
            assert_eq!(ftl.read_version(lpn), Some(1));
        }
        ftl.check_invariants();
    }

    #[test]
    fn a_fill_folds_the_dynamic_cache_down_to_its_shrinking_limit() {
        let mut c = small();
        c.slc.dynamic = true;
        c.slc.dynamic_max_fraction = 0.2;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..200 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
        }
        let early = ftl.slc_blocks_in_use();
        assert!(early >= 10, "{early} blocks in SLC mode");
        for lpn in 200..1400 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
        }
        // Full: the limit is a fifth of the native room left over, a few blocks; the cache's
        // data was folded during the fill, not left for the next writes.
        assert!(ftl.counters().slc_folded_ius > 0);
        assert!(!ftl.dynamic_slc_over_limit());
        let left = ftl.slc_blocks_in_use();
        assert!(
            left * 2 < early,
            "{left} of {early} blocks still in SLC mode"
        );
        for lpn in 0..1400 {
            assert_eq!(ftl.read_version(lpn), Some(1));
        }
        ftl.check_invariants();
    }
}
