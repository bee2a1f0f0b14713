//! SLC cache routing: host writes go to SLC-mode blocks (static ones first, then free native
//! blocks in SLC mode within the dynamic limit) while there is room, and bypass to native
//! blocks once the cache is exhausted. Folding back to native blocks lives in `reclaim`.

use crate::alloc::StreamId;
use crate::blocks::{Class, Pool};
use crate::gc::{Greedy, VictimSelector};
use crate::lists::NIL;
use crate::{Ftl, NandOp, OpCause};

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

    /// While the dynamic cache's blocks take room the user data now needs (the drive filled
    /// since they were put in SLC mode), fold its emptiest closed block back into native
    /// blocks. Firmware carves the dynamic cache out of free user capacity and gives it back
    /// as the drive fills, so a fill folds the cache in its last stretch rather than leaving
    /// the cache's data in the spare area for the next writes to fold: a full drive is then
    /// one state, however it got full. A sustained write that leaves most of the drive
    /// unwritten folds nothing. One block per host IU at most; a test and two compares when
    /// there is nothing to do.
    #[inline]
    pub(crate) fn shrink_dynamic_slc(&mut self, ops: &mut Vec<NandOp>) {
        if !self.dynamic_slc_over_limit()
            || self.blocks.free_count(Pool::Native) <= self.geo.reserve_blocks
        {
            return;
        }
        if let Some(b) = Greedy.select(&mut self.blocks, Class::SlcDynamic, self.seq) {
            self.fold_stripe(b, ops);
        }
    }
    /// Put a static SLC block whose data the host has all overwritten back in the cache
    /// while the host writes, once the cache has no erased block left: it holds nothing, so
    /// it costs an erase and no copy. The static cache's blocks are taken out of the spare
    /// area (the buffer's size follows the spare a capacity has: AnandTech's 840 EVO review;
    /// Samsung gave TurboWrite the over-provisioning the 840 had: notebookitalia.it's 840 EVO
    /// review, from Samsung's 2013 SSD summit), three native blocks' room for one block of
    /// cached data. Kept full of user data, the cache keeps that data out of the native
    /// blocks, which then carry that much less and keep it as room for garbage collection:
    /// the cache costs the spare two thirds of its footprint on TLC. Left emptied until the
    /// host pauses, it would cost the whole footprint just when a full drive's random writes
    /// need the room most. One block per host IU at most; a compare and a list head when
    /// there is nothing to do.
    #[inline]
    pub(crate) fn recycle_static_slc(&mut self, ops: &mut Vec<NandOp>) {
        if self.geo.static_slc_blocks == 0 || self.blocks.free_count(Pool::Static) > 0 {
            return;
        }
        let b = self.blocks.bucket_head(Class::SlcStatic, 0);
        if b != NIL {
            // Nothing to copy: relocation erases it (and keeps a shadowed old copy's undo
            // record pointing at live data, as any reclaim does).
            self.relocate(b, OpCause::SlcFold, StreamId::Fold, ops);
        }
    }

    /// With `slc.fold_when_full`: once the cache has no block left to take, fold its
    /// emptiest closed stripe (dynamic first, [`Ftl::fold_one`]) while the host writes, so
    /// the host's next pages go to the blocks that frees rather than straight to native
    /// blocks. The fold's reads, programs and erases go through the pacing queue between
    /// the host's pages, so past the cache every host page costs an SLC program, an SLC read
    /// and a native program. Samsung's TurboWrite moves the buffer's data to TLC in idle
    /// time or once the buffer is full, which a sustained write larger than the buffer
    /// reaches (PC Perspective, "New Samsung 840 EVO employs TLC and pseudo-SLC TurboWrite
    /// cache", 2013, from Samsung's launch slides), and new writes stream into the buffer
    /// before it is empty (AnandTech, "Samsung SSD 840 EVO Review", 2013). Called before the
    /// host IU is routed, at most one stripe per IU; a test when the cache has room.
    #[inline]
    pub(crate) fn fold_full_slc(&mut self, ops: &mut Vec<NandOp>) {
        if !self.slc_cache_enabled() || self.slc_block_available() {
            return;
        }
        // A stripe's copies need native blocks above the reserve (`Ftl::fold_stripe`): on a
        // full drive garbage collection makes that room first, as it would for host writes
        // straight to native blocks.
        let stripe_blocks = self.geo.units.div_ceil(self.cfg.bits_per_cell.max(1)) + 1;
        while self.blocks.free_count(Pool::Native) <= self.geo.reserve_blocks + stripe_blocks {
            if !self.reclaim_one(ops) {
                break;
            }
        }
        self.fold_one(ops);
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
    fn a_full_cache_that_folds_while_the_host_writes_keeps_taking_host_writes() {
        let mut c = small();
        c.slc.static_blocks = 2; // 16 IUs of cache
        c.slc.fold_when_full = true;
        c.user_ius = 1200;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..40 {
            ftl.write(lpn, 1, false, false, lpn, &mut ops);
        }
        // Every host IU went to SLC: the full cache folded its closed blocks to native ones
        // between them (without the key, 24 of the 40 bypass the cache to native blocks).
        assert_eq!(ftl.counters().slc_write_ius, 40);
        assert!(ftl.counters().slc_folded_ius >= 16);
        assert!(ops.iter().any(|o| o.cause == crate::OpCause::SlcFold
            && o.kind == crate::NandOpKind::Program
            && !o.slc));
        for lpn in 0..40 {
            assert_eq!(ftl.read_version(lpn), Some(lpn));
        }
        ftl.check_invariants();
    }

    #[test]
    fn a_static_block_the_host_overwrote_whole_takes_host_writes_again_without_idle_time() {
        let mut c = small();
        c.slc.static_blocks = 2; // 16 IUs of cache
        c.user_ius = 1200;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..40 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
        }
        assert_eq!(ftl.counters().slc_write_ius, 16);
        // The cache is full of live data: the next writes bypass it to native blocks while
        // they overwrite what it holds, until one of its blocks holds nothing; without idle
        // time, the host writes after that erase it and go to SLC again.
        ops.clear();
        let mut bypassed = 0;
        for lpn in 0..16 {
            let before = ftl.counters().slc_write_ius;
            ftl.write(lpn, 1, false, false, 2, &mut ops);
            bypassed += u32::from(ftl.counters().slc_write_ius == before);
        }
        assert!(bypassed >= 8, "{bypassed} of 16 bypassed the full cache");
        assert!(
            ftl.counters().slc_write_ius > 16,
            "the emptied blocks took no writes"
        );
        let before = ftl.counters().slc_write_ius;
        for lpn in 100..108 {
            ftl.write(lpn, 1, false, false, 3, &mut ops);
        }
        assert_eq!(ftl.counters().slc_write_ius, before + 8);
        let erases: Vec<_> = ops
            .iter()
            .filter(|o| o.kind == crate::NandOpKind::Erase)
            .collect();
        assert!(!erases.is_empty());
        assert!(erases
            .iter()
            .all(|o| o.slc && o.cause == crate::OpCause::SlcFold));
        // Nothing was copied: the emptied blocks were only erased.
        assert_eq!(ftl.counters().slc_folded_ius, 0);
        for lpn in 100..108 {
            assert!(matches!(
                ftl.read(lpn),
                ReadLocation::Nand { slc: true, .. }
            ));
        }
        for lpn in 0..40 {
            assert_eq!(ftl.read_version(lpn), Some(if lpn < 16 { 2 } else { 1 }));
        }
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
        for lpn in 0..600 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
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

    /// A full drive with a static cache (filled twice in order) after three passes of
    /// uniform random writes: (live IUs in the static blocks over the cache's capacity, GC
    /// copies per host IU over the third pass).
    fn full_drive_random_writes(fold_when_full: bool) -> (f64, f64) {
        const STATIC_BLOCKS: u32 = 32;
        let mut c = small();
        c.dies = 1;
        c.planes_per_die = 2;
        c.blocks_per_plane = 128;
        c.pages_per_block = 96;
        c.ius_per_page = 4;
        c.bits_per_cell = 3;
        c.slc.static_blocks = STATIC_BLOCKS; // 128 IUs each in SLC mode: 5% of the user's
        c.slc.fold_when_full = fold_when_full;
        c.user_ius = 78_000;
        c.track_versions = false;
        let n = c.user_ius as u32;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in (0..n).chain(0..n) {
            ftl.write(lpn, 1, false, false, 0, &mut ops);
            ops.clear();
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut before = ftl.counters().clone();
        for pass in 0..3 {
            if pass == 2 {
                before = ftl.counters().clone();
            }
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ftl.write((x % u64::from(n)) as u32, 1, false, false, 0, &mut ops);
                ops.clear();
            }
        }
        let static_blocks = (0..ftl.geo.total_blocks).filter(|&b| ftl.geo.is_static_slc(b));
        let live: u32 = static_blocks
            .map(|b| ftl.blocks.info[b as usize].valid)
            .sum();
        let c = ftl.counters();
        ftl.check_invariants();
        (
            f64::from(live) / f64::from(STATIC_BLOCKS * ftl.geo.slc_data_ius_per_block),
            (c.gc_copied_ius - before.gc_copied_ius) as f64
                / (c.host_write_ius - before.host_write_ius) as f64,
        )
    }

    #[test]
    fn a_cache_folding_while_the_host_writes_stays_live_and_spares_the_native_blocks() {
        // Folding while the host writes, the static cache holds the last writes: nearly all
        // live, data the native blocks need not hold, so GC works with more room. Straight to
        // native blocks, the cache keeps the fill's data while random writes overwrite it a
        // piece at a time; a block is taken back only once wholly overwritten, so the cache
        // drains of live data with no idle time to fold it and GC loses its room.
        let (fold_live, fold_copies) = full_drive_random_writes(true);
        let (direct_live, direct_copies) = full_drive_random_writes(false);
        assert!(fold_live > 0.8, "folding: cache {fold_live:.2} live");
        assert!(direct_live < 0.1, "direct: cache {direct_live:.2} live");
        assert!(
            fold_copies * 1.3 < direct_copies,
            "GC copies per host IU: {fold_copies:.2} folding, {direct_copies:.2} direct"
        );
    }

    #[test]
    fn a_fill_folds_the_dynamic_cache_as_it_takes_the_caches_room() {
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
        // Most of the drive still unwritten: nothing folded.
        for lpn in 200..900 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
        }
        assert_eq!(ftl.counters().slc_folded_ius, 0);
        for lpn in 900..1400 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
        }
        // Full: the cache's data was folded during the fill's last stretch, not left in the
        // spare area for the next writes to fold.
        assert!(ftl.counters().slc_folded_ius > 0);
        assert!(!ftl.dynamic_slc_over_limit());
        assert!(ftl.slc_blocks_in_use() <= 1, "{}", ftl.slc_blocks_in_use());
        for lpn in 0..1400 {
            assert_eq!(ftl.read_version(lpn), Some(1));
        }
        ftl.check_invariants();
    }

    #[test]
    fn a_partial_write_reads_its_old_copy_where_a_fold_moved_it() {
        let mut c = small();
        c.slc.dynamic = true;
        c.slc.dynamic_max_fraction = 0.2;
        c.power_loss_protection = false;
        let mut ftl = Ftl::new(c).unwrap();
        let mut ops = Vec::new();
        for lpn in 0..1300 {
            ftl.write(lpn, 1, false, false, 1, &mut ops);
        }
        // Partial rewrites of the cached data while the fill's last writes fold it: a fold
        // on a rewrite's own call often takes the block holding the IU's old copy (the
        // rewrites leave that block the emptiest).
        let cached: Vec<u32> = (0..1300)
            .filter(|&lpn| matches!(ftl.read(lpn), ReadLocation::Nand { slc: true, .. }))
            .collect();
        assert!(cached.len() > 40, "{} IUs cached", cached.len());
        for (i, &lpn) in cached.iter().enumerate().take(100) {
            ftl.write(lpn, 1, true, true, 2, &mut ops);
            ftl.write(1300 + i as u32, 1, false, false, 2, &mut ops);
        }
        assert!(ftl.counters().slc_folded_ius > 0);
        let rewritten = cached.len().min(100);
        for lpn in 0..1300 {
            let want = if cached[..rewritten].contains(&lpn) {
                2
            } else {
                1
            };
            assert_eq!(ftl.read_version(lpn), Some(want));
        }
        for i in 0..rewritten as u32 {
            assert_eq!(ftl.read_version(1300 + i), Some(2));
        }
        ftl.check_invariants();
    }
}
