//! The logical-to-physical map in too little DRAM: a cache of translation pages.
//!
//! A drive whose DRAM cannot hold the whole map (4 bytes per IU: ~1/1024 of the capacity
//! with 4 KiB IUs) pages it, as DFTL does (Gupta, Kim and Urgaonkar, "DFTL: a Flash
//! Translation Layer Employing Demand-based Selective Caching of Page-level Address
//! Mappings", ASPLOS 2009): the map is cut into translation pages kept in flash, and DRAM
//! caches some of them. A lookup that misses reads its translation page from NAND first; an
//! update dirties the cached page, and evicting a dirty page writes it back to NAND.
//!
//! This module is the DRAM side only: which translation pages are cached, chosen by CLOCK
//! (second chance). The device turns a miss into a NAND read and a dirty eviction into a
//! NAND write; the functional map stays whole in the FTL, so this is a timing and wear
//! model of the firmware's DRAM, not a second map.

/// No slot / no page.
const NONE: u32 = u32::MAX;

/// Flags per slot.
const REFERENCED: u8 = 1;
const DIRTY: u8 = 2;

/// What a lookup did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    Hit,
    /// The page was loaded into a slot; `evicted_dirty` is the changed page it replaced,
    /// which must be written back.
    Miss {
        evicted_dirty: Option<u32>,
    },
}

/// Counters of the map cache (reset by a format, like the FTL's).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MapCacheCounters {
    pub hits: u64,
    pub misses: u64,
    /// Translation pages read from NAND (misses on a page never written need no read).
    pub translation_reads: u64,
    /// Dirty translation pages written back to NAND.
    pub translation_writes: u64,
}

flashlab_engine::impl_state!(MapCacheCounters {
    hits,
    misses,
    translation_reads,
    translation_writes
});

/// CLOCK over translation pages: per page the slot holding it, per slot the page and its
/// referenced and dirty bits. Everything is sized once; a lookup allocates nothing.
#[derive(Debug, Clone)]
pub(crate) struct MapCache {
    /// Per translation page: its slot, or NONE.
    slot_of: Vec<u32>,
    /// Per slot: its page, or NONE while the slot was never filled.
    page_of: Vec<u32>,
    flags: Vec<u8>,
    /// Slots filled so far (filled in order; then CLOCK chooses).
    used: u32,
    hand: u32,
    pub counters: MapCacheCounters,
}

flashlab_engine::impl_state!(MapCache {
    slot_of,
    page_of,
    flags,
    used,
    hand,
    counters
} fixed { slot_of, page_of, flags } check MapCache::check_loaded);

impl MapCache {
    /// A cache of `slots` translation pages out of `pages`.
    pub fn new(pages: u32, slots: u32) -> MapCache {
        assert!(slots > 0, "a map cache needs a slot");
        MapCache {
            slot_of: vec![NONE; pages as usize],
            page_of: vec![NONE; slots as usize],
            flags: vec![0; slots as usize],
            used: 0,
            hand: 0,
            counters: MapCacheCounters::default(),
        }
    }

    /// A loaded cache is one CLOCK could have left: the first `used` slots filled, each
    /// with a page of the map whose entry points back at it, the others empty; no page
    /// cached twice; the hand on a slot; flags only the referenced and dirty bits.
    fn check_loaded(&self) -> Result<(), String> {
        let (pages, slots) = (self.slot_of.len(), self.page_of.len());
        if slots == 0 || self.used as usize > slots || self.hand as usize >= slots {
            return Err(format!(
                "the map cache has {} slots filled and its hand at slot {} of {slots} (valid: at most {slots} filled, the hand below {slots})",
                self.used, self.hand
            ));
        }
        for (s, (&page, &flags)) in self.page_of.iter().zip(&self.flags).enumerate() {
            let filled = s < self.used as usize;
            let back = self.slot_of.get(page as usize).copied();
            if flags & !(REFERENCED | DIRTY) != 0
                || (filled && back != Some(s as u32))
                || (!filled && (page != NONE || flags != 0))
            {
                return Err(format!(
                    "the map cache's slot {s} holds page {page} (flags {flags}) where a slot below {} holds a page of the {pages} whose entry names it, and the others are empty",
                    self.used
                ));
            }
        }
        let mut at = self.slot_of.iter().enumerate();
        if let Some((p, _)) =
            at.find(|&(p, &s)| s != NONE && self.page_of.get(s as usize) != Some(&(p as u32)))
        {
            return Err(format!(
                "the map cache's page {p} names slot {} that does not hold it",
                self.slot_of[p]
            ));
        }
        Ok(())
    }

    pub fn slots(&self) -> u32 {
        self.page_of.len() as u32
    }

    /// Look up translation page `page` (`dirty`: the lookup updates an entry). A miss takes a
    /// free slot, or the first slot the clock hand finds unreferenced, clearing the
    /// referenced bit of each slot it passes (a page used since the hand last passed gets a
    /// second chance).
    #[inline]
    pub fn lookup(&mut self, page: u32, dirty: bool) -> Lookup {
        let mark = REFERENCED | if dirty { DIRTY } else { 0 };
        let s = self.slot_of[page as usize];
        if s != NONE {
            self.flags[s as usize] |= mark;
            self.counters.hits += 1;
            return Lookup::Hit;
        }
        self.counters.misses += 1;
        let n = self.slots();
        let (slot, evicted_dirty) = if self.used < n {
            self.used += 1;
            (self.used - 1, None)
        } else {
            // Ends within two turns: the first turn clears every referenced bit.
            while self.flags[self.hand as usize] & REFERENCED != 0 {
                self.flags[self.hand as usize] &= !REFERENCED;
                self.hand = if self.hand + 1 == n { 0 } else { self.hand + 1 };
            }
            let victim = self.hand;
            self.hand = if victim + 1 == n { 0 } else { victim + 1 };
            let old = self.page_of[victim as usize];
            self.slot_of[old as usize] = NONE;
            let was_dirty = self.flags[victim as usize] & DIRTY != 0;
            if was_dirty {
                self.counters.translation_writes += 1;
            }
            (victim, was_dirty.then_some(old))
        };
        self.page_of[slot as usize] = page;
        self.slot_of[page as usize] = slot;
        self.flags[slot as usize] = mark;
        Lookup::Miss { evicted_dirty }
    }

    /// DRAM lost or the map rebuilt (power loss, format): nothing cached.
    pub fn clear(&mut self) {
        self.slot_of.fill(NONE);
        self.page_of.fill(NONE);
        self.flags.fill(0);
        self.used = 0;
        self.hand = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forgery: what the refusal must say, and the edit.
    type Forge<'a, T> = (&'a str, &'a dyn Fn(&mut T));

    /// A forged state with a valid checksum loaded any map cache: a hand or a fill count
    /// past the slots, a slot whose page does not name it, a page cached twice, a table of
    /// another size. Each is refused at load (naming the part), and a real cache loads and
    /// runs.
    #[test]
    fn forged_map_caches_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let mut c = MapCache::new(64, 8);
        for p in 0..20u32 {
            c.lookup(p * 7 % 64, p % 2 == 0);
        }
        let mut ok = MapCache::new(64, 8);
        reload_into(&c, &mut ok).unwrap();
        for p in 0..64 {
            ok.lookup(p, false);
        }
        let cached = c.page_of[0];
        let uncached = (0..64).find(|&p| c.slot_of[p as usize] == NONE).unwrap();
        let cases: [Forge<MapCache>; 7] = [
            ("its hand at slot 8", &|f| f.hand = 8),
            ("9 slots filled", &|f| f.used = 9),
            ("slot 0 holds page", &|f| f.page_of[0] = uncached),
            ("names slot 3", &|f| f.slot_of[uncached as usize] = 3),
            ("slot 1 holds page", &|f| f.page_of[1] = cached),
            ("(flags 4)", &|f| f.flags[2] = 4),
            (
                "slot_of holds 63 entries where this configuration has 64",
                &|f| {
                    f.slot_of.pop();
                },
            ),
        ];
        for (want, forge) in cases {
            let mut forged = c.clone();
            forge(&mut forged);
            let e = reload_into(&forged, &mut MapCache::new(64, 8))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn clock_evicts_the_unreferenced_page_and_gives_referenced_ones_a_second_chance() {
        let mut c = MapCache::new(10, 3);
        for p in 0..3 {
            c.lookup(p, false);
        }
        // Page 3 evicts page 0 (the hand's first slot once all bits are cleared); the bits
        // of 1 and 2 are now clear.
        c.lookup(3, false);
        assert_eq!(c.lookup(1, false), Lookup::Hit);
        // 1 was referenced again, 2 was not: 4 evicts 2.
        c.lookup(4, false);
        assert_eq!(c.lookup(1, false), Lookup::Hit);
        assert_eq!(c.lookup(3, false), Lookup::Hit);
        assert_eq!(c.lookup(4, false), Lookup::Hit);
        assert!(matches!(c.lookup(2, false), Lookup::Miss { .. }));
    }

    #[test]
    fn a_dirty_eviction_is_reported_and_counted_a_clean_one_is_not() {
        let mut c = MapCache::new(10, 2);
        c.lookup(0, true);
        c.lookup(1, false);
        // Both referenced: the hand clears both and evicts page 0, which is dirty.
        assert_eq!(
            c.lookup(2, false),
            Lookup::Miss {
                evicted_dirty: Some(0)
            }
        );
        // Next goes page 1 (clean).
        assert_eq!(
            c.lookup(3, false),
            Lookup::Miss {
                evicted_dirty: None
            }
        );
        assert_eq!(c.counters.translation_writes, 1);
        // A clean page dirtied by a hit is written back when it goes.
        c.lookup(2, true);
        c.lookup(4, false);
        c.lookup(5, false);
        assert_eq!(c.counters.translation_writes, 2);
    }

    #[test]
    fn a_working_set_that_fits_never_misses_after_warm_up() {
        let mut c = MapCache::new(1000, 64);
        let mut x = 7u32;
        for i in 0..100_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            // 64 pages spread over the page numbers.
            let page = ((x >> 8) % 64) * 15;
            let r = c.lookup(page, i % 3 == 0);
            if i >= 10_000 {
                assert_eq!(r, Lookup::Hit, "lookup {i} of page {page}");
            }
        }
        assert_eq!(c.counters.misses, 64);
        assert_eq!(c.counters.translation_writes, 0);
    }

    #[test]
    fn a_working_set_larger_than_the_cache_keeps_missing() {
        let mut c = MapCache::new(1000, 64);
        let mut x = 7u32;
        for _ in 0..10_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            c.lookup((x >> 8) % 1000, true);
        }
        // Uniform over 1000 pages with 64 cached: ~94% miss.
        let share = c.counters.misses as f64 / 10_000.0;
        assert!((0.9..0.97).contains(&share), "{share}");
        assert!(c.counters.translation_writes > 8_000);
    }

    #[test]
    fn clear_forgets_everything() {
        let mut c = MapCache::new(10, 2);
        c.lookup(0, true);
        c.clear();
        assert_eq!(
            c.lookup(0, false),
            Lookup::Miss {
                evicted_dirty: None
            }
        );
    }
}
