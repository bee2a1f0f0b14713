//! The invariant checker: recomputes everything derivable from the maps and compares it with
//! the incremental state. O(physical IUs + blocks); debug builds run it on a doubling schedule.

use crate::alloc::{Stream, StreamId, NO_UNDO};
use crate::blocks::BlockState;
use crate::lists::NIL;
use crate::mapping::{INVALID, UNMAPPED};
use crate::prefetch::prefetch_read;
use crate::Ftl;

/// How many physical IUs ahead the map check fetches the map entry it will read.
const CHECK_AHEAD: usize = 16;

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

impl Ftl {
    /// Check every invariant (mapping bijection, valid counts, free lists); panics with a
    /// description on the first violation. Debug builds also call it periodically.
    pub fn check_invariants(&self) {
        if let Err(e) = self.try_check_invariants() {
            panic!("FTL invariant violated: {e}");
        }
    }

    /// As [`Ftl::check_invariants`], returning the first violation instead of panicking.
    pub fn try_check_invariants(&self) -> Result<(), String> {
        self.check_blocks()?;
        self.check_streams()?;
        self.check_fdp()?;
        self.check_maps()
    }

    /// A loaded FTL describes a possible drive of its configuration: first every table's
    /// length, index and count in range (so the checks after index safely), then every
    /// invariant ([`Ftl::try_check_invariants`]). O(physical IUs + blocks).
    pub fn check_loaded(&self) -> Result<(), String> {
        self.check_ranges()?;
        self.try_check_invariants()
    }

    fn check_ranges(&self) -> Result<(), String> {
        let g = &self.geo;
        let b_t = &self.blocks;
        let blocks = g.total_blocks as usize;
        for (what, len) in [
            ("block records", b_t.info.len()),
            ("erase counts", b_t.erase_count.len()),
            ("close stamps", b_t.close_seq.len()),
        ] {
            ensure!(
                len == blocks,
                "{len} {what} where the drive has {blocks} blocks"
            );
        }
        b_t.check_loaded_ranges()?;
        for (b, info) in b_t.info.iter().enumerate() {
            let cap = b_t.pages_in_mode(info.slc);
            ensure!(
                info.valid <= g.ius_per_block && info.wp <= cap && info.programmed <= info.wp,
                "block {b}: valid {}, wp {}, programmed {} (at most {} IUs and {cap} pages)",
                info.valid,
                info.wp,
                info.programmed,
                g.ius_per_block
            );
        }
        let m = &self.map;
        // A zoned drive's FTL has no map (`Ftl::new_unmapped`; its length is fixed at load).
        let unmapped = m.l2p.is_empty() && m.p2l.is_empty();
        ensure!(
            unmapped || m.l2p.len() == g.user_ius as usize && m.p2l.len() == g.total_ius as usize,
            "maps of {} and {} IUs where the drive has {} and {}",
            m.l2p.len(),
            m.p2l.len(),
            g.user_ius,
            g.total_ius
        );
        ensure!(
            m.versions.is_empty() || m.versions.len() == g.total_ius as usize,
            "{} version tags for {} IUs",
            m.versions.len(),
            g.total_ius
        );
        if let Some(lpn) = m
            .l2p
            .iter()
            .position(|&p| p != UNMAPPED && p >= g.total_ius)
        {
            return Err(format!("IU {lpn} maps past the drive ({})", m.l2p[lpn]));
        }
        if let Some(ppa) = m.p2l.iter().position(|&l| l != INVALID && l >= g.user_ius) {
            return Err(format!(
                "physical IU {ppa} names IU {} past the drive",
                m.p2l[ppa]
            ));
        }
        for (s, _, st) in self.all_streams() {
            self.check_stream_ranges(s, st)?;
        }
        ensure!(
            self.wl_queue_len <= self.wl_queue.len()
                && self.wl_queue[..self.wl_queue_len]
                    .iter()
                    .all(|&b| b < g.total_blocks),
            "wear-levelling queue of {} blocks past its {} or the drive",
            self.wl_queue_len,
            self.wl_queue.len()
        );
        ensure!(
            self.gc_unit < g.units,
            "GC unit {} of {}",
            self.gc_unit,
            g.units
        );
        if let Some(opened) = &self.opened {
            ensure!(
                opened.len() <= blocks && opened.iter().all(|&b| b < g.total_blocks),
                "{} opened blocks, or one past the drive",
                opened.len()
            );
        }
        let (first, n) = self.unit_in_progress;
        ensure!(
            u64::from(first) + u64::from(n) <= u64::from(g.user_ius),
            "a compression unit at IU {first} of {n} IUs past the drive"
        );
        Ok(())
    }

    fn check_blocks(&self) -> Result<(), String> {
        let b_t = &self.blocks;
        ensure!(
            b_t.counts() == b_t.recount(),
            "free/dynamic counts {:?} != recount {:?}",
            b_t.counts(),
            b_t.recount()
        );
        for b in 0..self.geo.total_blocks {
            let i = b as usize;
            b_t.listed_correctly(b)?;
            b_t.stripe_linked_correctly(b)?;
            ensure!(
                b_t.info[i].slc || b_t.stripe_alone(b) || self.superblock_gc(),
                "native block {b} in a superblock while GC empties single blocks"
            );
            let (wp, prog, cap) = (
                b_t.info[i].wp,
                b_t.info[i].programmed,
                b_t.capacity_pages(b),
            );
            ensure!(
                prog <= wp && wp <= cap,
                "block {b}: programmed {prog}, wp {wp}, capacity {cap}"
            );
            ensure!(
                !b_t.info[i].is_static || b_t.info[i].slc,
                "static SLC block {b} in native mode"
            );
            let owner = self.open_block_owner(b);
            // A reserve block is set aside until it replaces a retired block; then it is a
            // block like any other.
            let reserved = b_t.is_reserved(b);
            ensure!(
                reserved == (b_t.info[i].state == BlockState::Bad),
                "block {b} (in the unused reserve: {reserved}) is {:?}",
                b_t.info[i].state
            );
            ensure!(
                !reserved || self.geo.is_bad(b),
                "block {b} counts as reserve but was never set aside"
            );
            match b_t.info[i].state {
                BlockState::Free => {
                    ensure!(
                        wp == 0 && b_t.info[i].valid == 0,
                        "free block {b} has wp {wp}, valid {}",
                        b_t.info[i].valid
                    );
                    ensure!(
                        owner.is_none(),
                        "free block {b} is also open in stream {owner:?}"
                    );
                }
                BlockState::Open => {
                    ensure!(owner.is_some(), "open block {b} belongs to no stream");
                }
                BlockState::Closed => {
                    ensure!(
                        prog == cap,
                        "closed block {b} has {prog} of {cap} pages programmed"
                    );
                    ensure!(
                        owner.is_none(),
                        "closed block {b} is still open in stream {owner:?}"
                    );
                }
                BlockState::Reclaiming => return Err(format!("block {b} left mid-reclaim")),
                BlockState::Retired => {
                    ensure!(
                        wp == 0 && b_t.info[i].valid == 0 && !b_t.info[i].slc,
                        "retired block {b} has wp {wp}, valid {}",
                        b_t.info[i].valid
                    );
                    ensure!(
                        owner.is_none(),
                        "retired block {b} is open in stream {owner:?}"
                    );
                    ensure!(
                        b_t.erase_count[i] > 0 && !b_t.info[i].is_static,
                        "retired block {b} never failed an erase"
                    );
                }
                BlockState::Bad => {
                    ensure!(
                        wp == 0 && b_t.info[i].valid == 0,
                        "bad block {b} has wp {wp}, valid {}",
                        b_t.info[i].valid,
                    );
                    ensure!(owner.is_none(), "bad block {b} is open in stream {owner:?}");
                    ensure!(
                        b_t.erase_count[i] == 0,
                        "bad block {b} was erased {} times",
                        b_t.erase_count[i]
                    );
                }
            }
        }
        Ok(())
    }

    fn check_streams(&self) -> Result<(), String> {
        let mut seen = vec![false; self.geo.total_blocks as usize];
        for (s, _, st) in self.all_streams() {
            let open = st.open.iter().filter(|&&b| b != NIL).count() as u32;
            ensure!(
                open == st.open_count,
                "stream {s:?} counts {} open blocks, holds {open}",
                st.open_count
            );
            self.check_open_blocks(s, st, &mut seen)?;
            if st.cur_block != NIL {
                ensure!(
                    st.open[st.cur_unit as usize] == st.cur_block,
                    "stream {s:?} current block not in its slot"
                );
                ensure!(
                    !self.geo.is_parity_page(st.cur_page),
                    "stream {s:?} fills parity page {} of block {}",
                    st.cur_page,
                    st.cur_block
                );
                ensure!(
                    st.fill < self.geo.ius_per_page,
                    "stream {s:?} holds a full unprogrammed page"
                );
            } else {
                ensure!(st.fill == 0, "stream {s:?} has fill without a page");
            }
            self.check_stream_records(s, st)?;
            if !self.cfg.power_loss_protection && matches!(s, StreamId::Gc | StreamId::Fold) {
                ensure!(
                    st.fill == 0,
                    "relocation stream {s:?} left a partial page without PLP"
                );
            }
            let _ = NO_UNDO;
        }
        Ok(())
    }

    /// Stream `s`'s slots, cursors, current page and records all point inside the drive.
    fn check_stream_ranges(&self, s: StreamId, st: &Stream) -> Result<(), String> {
        let g = &self.geo;
        let block_ok = |b: u32| b == NIL || b < g.total_blocks;
        ensure!(
            st.open.len() == g.units as usize && st.open.iter().all(|&b| block_ok(b)),
            "stream {s:?} holds {} open slots (the drive has {} units) or a block past the drive",
            st.open.len(),
            g.units
        );
        ensure!(
            st.undo.len() == g.ius_per_page as usize && st.fill <= g.ius_per_page,
            "stream {s:?} has {} undo records and fill {} for {} IUs a page",
            st.undo.len(),
            st.fill,
            g.ius_per_page
        );
        ensure!(
            st.cursor < g.units && st.cur_unit < g.units,
            "stream {s:?} points at unit {} / {} of {}",
            st.cursor,
            st.cur_unit,
            g.units
        );
        if st.cur_block == NIL {
            ensure!(
                st.cur_page_global == NIL,
                "stream {s:?} has a current page without a block"
            );
        } else {
            ensure!(
                st.cur_block < g.total_blocks
                    && st.cur_page < g.pages_per_block
                    && u64::from(st.cur_page_global)
                        == u64::from(st.cur_block) * u64::from(g.pages_per_block)
                            + u64::from(st.cur_page),
                "stream {s:?}: current page {} of block {} is not on the drive",
                st.cur_page,
                st.cur_block
            );
        }
        for rec in st.undo.iter().chain(&st.trims) {
            ensure!(
                (rec.lpn == NIL || rec.lpn < g.user_ius)
                    && (rec.prev == UNMAPPED || rec.prev < g.total_ius),
                "stream {s:?} keeps a record of IU {} at {} past the drive",
                rec.lpn,
                rec.prev
            );
        }
        ensure!(
            st.trims.iter().all(|r| r.lpn != NIL),
            "stream {s:?} keeps a deferred record of no IU"
        );
        ensure!(
            st.trims.len() <= g.user_ius as usize,
            "stream {s:?} keeps {} deferred records",
            st.trims.len()
        );
        Ok(())
    }

    /// Stream `s`'s open blocks: each open, in one slot of one stream, in the stream's cell
    /// mode, programmed up to its write pointer but for the current page.
    fn check_open_blocks(&self, s: StreamId, st: &Stream, seen: &mut [bool]) -> Result<(), String> {
        for &b in &st.open {
            if b == NIL {
                continue;
            }
            ensure!(!seen[b as usize], "block {b} open in two stream slots");
            seen[b as usize] = true;
            ensure!(
                self.blocks.info[b as usize].state == BlockState::Open,
                "stream {s:?} holds non-open block {b}"
            );
            let slc = self.blocks.info[b as usize].slc;
            ensure!(
                slc == (s == StreamId::Slc),
                "stream {s:?} holds block {b} with slc = {slc}"
            );
            let (wp, prog) = (
                self.blocks.info[b as usize].wp,
                self.blocks.info[b as usize].programmed,
            );
            if b == st.cur_block {
                ensure!(
                    st.cur_page + 1 == wp && prog == st.cur_page,
                    "stream {s:?} page {} of block {b}: wp {wp}, programmed {prog}",
                    st.cur_page
                );
            } else {
                ensure!(
                    prog == wp,
                    "block {b} of stream {s:?} has an unprogrammed page that is not current"
                );
            }
        }
        Ok(())
    }

    /// Stream `s`'s undo records (the unprogrammed page's IUs, the copies they shadow) and
    /// deferred trim records, without PLP only.
    fn check_stream_records(&self, s: StreamId, st: &Stream) -> Result<(), String> {
        for (slot, rec) in st.undo.iter().enumerate() {
            let active = rec.lpn != NIL;
            if !active {
                continue;
            }
            ensure!(!self.cfg.power_loss_protection, "undo record with PLP");
            ensure!(
                matches!(s, StreamId::Host | StreamId::Slc),
                "undo record in stream {s:?}"
            );
            ensure!(
                (slot as u32) < st.fill,
                "undo record beyond the fill of stream {s:?}"
            );
            let here = self.ppa_of(st.cur_block, st.cur_page, slot as u32);
            ensure!(
                self.map.l2p[rec.lpn as usize] == here,
                "undo record for IU {} but its L2P is elsewhere",
                rec.lpn
            );
            if rec.prev != UNMAPPED {
                ensure!(
                    self.map.p2l[rec.prev as usize] == rec.lpn,
                    "shadowed copy {} of IU {} is not valid",
                    rec.prev,
                    rec.lpn
                );
                ensure!(
                    !self.is_pending(rec.prev),
                    "shadowed copy {} of IU {} is not durable",
                    rec.prev,
                    rec.lpn
                );
            }
        }
        for rec in &st.trims {
            ensure!(!self.cfg.power_loss_protection, "trim record with PLP");
            ensure!(
                matches!(s, StreamId::Host | StreamId::Slc) && st.cur_block != NIL,
                "trim record in stream {s:?} without an unprogrammed page"
            );
            let cur = self.map.l2p[rec.lpn as usize];
            ensure!(
                cur == UNMAPPED || !self.is_pending(cur),
                "deferred record for IU {} whose data is not durable",
                rec.lpn
            );
            ensure!(
                cur != UNMAPPED || rec.prev != UNMAPPED,
                "deferred record for unmapped IU {} keeps nothing",
                rec.lpn
            );
            ensure!(
                rec.prev == UNMAPPED
                    || (self.map.p2l[rec.prev as usize] == rec.lpn && !self.is_pending(rec.prev)),
                "copy {} kept by the deferred record of IU {} is not valid and durable",
                rec.prev,
                rec.lpn
            );
            ensure!(
                st.trims.iter().filter(|r| r.lpn == rec.lpn).count() == 1,
                "IU {} has two deferred records",
                rec.lpn
            );
        }
        Ok(())
    }

    fn check_maps(&self) -> Result<(), String> {
        let m = &self.map;
        let mut valid = vec![0u32; self.geo.total_blocks as usize];
        let mut live = 0u64;
        // Valid IUs whose IU maps back to them: at most one per IU, so when as many IUs are
        // mapped, every mapped IU maps to a valid IU naming it.
        let mut mapped_back = 0u64;
        for (ppa, &lpn) in m.p2l.iter().enumerate() {
            // The map entries this pass reads lie at random on a map of gigabytes: fetched
            // ahead, their misses overlap.
            if let Some(&ahead) = m.p2l.get(ppa + CHECK_AHEAD) {
                if let Some(entry) = m.l2p.get(ahead as usize) {
                    prefetch_read(entry);
                }
            }
            if lpn == INVALID {
                continue;
            }
            let ppa = ppa as u32;
            let (b, page, _) = self.split(ppa);
            ensure!(
                lpn < self.geo.user_ius,
                "P2L of {ppa} names IU {lpn} beyond user capacity"
            );
            ensure!(
                page < self.blocks.info[b as usize].wp,
                "P2L of {ppa} set in an unallocated page"
            );
            ensure!(
                !self.geo.is_parity_page(page),
                "P2L of {ppa} names IU {lpn} in parity page {page} of block {b}"
            );
            ensure!(
                self.blocks.info[b as usize].state != BlockState::Free,
                "valid IU {ppa} in free block {b}"
            );
            if m.l2p[lpn as usize] == ppa {
                mapped_back += 1;
            } else {
                let shadowed = [StreamId::Host, StreamId::Slc].iter().any(|&s| {
                    let st = &self.streams[s as usize];
                    st.undo[..st.fill as usize]
                        .iter()
                        .chain(&st.trims)
                        .any(|r| r.lpn == lpn && r.prev == ppa)
                });
                ensure!(
                    shadowed,
                    "valid IU {ppa} names IU {lpn}, which maps to {} (no undo record)",
                    m.l2p[lpn as usize]
                );
            }
            valid[b as usize] += 1;
            live += 1;
        }
        let mapped = m.l2p.iter().filter(|&&ppa| ppa != UNMAPPED).count() as u32;
        if u64::from(mapped) != mapped_back {
            // A mapped IU that no valid IU names: found and named.
            for (lpn, &ppa) in m.l2p.iter().enumerate() {
                if ppa == UNMAPPED {
                    continue;
                }
                ensure!(
                    ppa < self.geo.total_ius,
                    "IU {lpn} maps past the drive ({ppa})"
                );
                ensure!(
                    m.p2l[ppa as usize] == lpn as u32,
                    "IU {lpn} maps to {ppa} whose P2L is {}",
                    m.p2l[ppa as usize]
                );
            }
            return Err(format!(
                "{mapped} mapped IUs where {mapped_back} valid IUs are mapped back"
            ));
        }
        ensure!(
            mapped == m.mapped,
            "mapped count {} != recount {mapped}",
            m.mapped
        );
        for (b, (have, &want)) in self
            .blocks
            .info
            .iter()
            .map(|i| i.valid)
            .zip(&valid)
            .enumerate()
        {
            ensure!(
                have == want,
                "block {b}: valid count {have}, P2L says {want}"
            );
        }
        let shadows: u64 = [StreamId::Host, StreamId::Slc]
            .iter()
            .flat_map(|&s| {
                let st = &self.streams[s as usize];
                st.undo.iter().chain(&st.trims)
            })
            .filter(|r| r.lpn != NIL && r.prev != UNMAPPED)
            .count() as u64;
        ensure!(
            live == u64::from(mapped) + shadows,
            "{live} valid IUs for {mapped} mapped IUs and {shadows} shadows"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::tests::small;
    use crate::Ftl;

    #[test]
    fn detects_a_corrupted_map() {
        let mut ftl = Ftl::new(small()).unwrap();
        let mut ops = Vec::new();
        ftl.write(0, 4, false, false, 1, &mut ops);
        ftl.check_invariants();
        ftl.map.l2p[2] = ftl.map.l2p[1];
        let e = ftl.try_check_invariants().unwrap_err();
        assert!(e.contains("IU 2"), "{e}");
    }

    /// An IU mapped to a unit that names another IU, which no valid unit's pass sees.
    #[test]
    fn detects_an_iu_mapped_to_another_ius_unit() {
        let mut ftl = Ftl::new(small()).unwrap();
        let mut ops = Vec::new();
        ftl.write(0, 4, false, false, 1, &mut ops);
        ftl.check_invariants();
        ftl.map.l2p[9] = ftl.map.l2p[1];
        let e = ftl.try_check_invariants().unwrap_err();
        assert!(e.contains("IU 9 maps to"), "{e}");
    }

    #[test]
    fn detects_a_wrong_valid_count() {
        let mut ftl = Ftl::new(small()).unwrap();
        let mut ops = Vec::new();
        ftl.write(0, 40, false, false, 1, &mut ops);
        // An open block: its list membership does not depend on the count.
        let b = (0..128)
            .find(|&b| {
                ftl.blocks.info[b].valid > 0
                    && ftl.blocks.info[b].state == crate::blocks::BlockState::Open
            })
            .unwrap();
        ftl.blocks.info[b].valid += 1;
        let e = ftl.try_check_invariants().unwrap_err();
        assert!(e.contains("valid count"), "{e}");
    }
}
