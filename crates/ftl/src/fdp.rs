//! NVMe Flexible Data Placement (TP4146, NVMe 2.1): the host tags each write with a
//! placement handle, and the drive writes the data of each handle into reclaim units (RUs)
//! of that handle alone.
//!
//! A reclaim unit handle is a host write stream of its own: one open block per (die, plane)
//! unit, striped like the drive's one host stream, so an RU is the set of erase blocks a
//! handle's stream opens together (`ru_blocks` of them: by default one per unit, a
//! superblock) and no erase block ever holds data of two handles. Garbage collection still
//! empties one erase block at a time, the greedy or cost-benefit victim among all closed
//! blocks; where it writes the copies is what the handle type allows: initially isolated
//! handles share one relocation stream (data of several handles may end up together once
//! moved), persistently isolated handles each have one (moved data stays with its handle).
//!
//! Swapping streams keeps the drive's write path as it is without FDP: the active handle's
//! stream sits in the host stream's slot (and, persistently isolated, the victim's handle's
//! relocation stream in the GC slot), the others wait in `parked`. A write through another
//! handle swaps two small structs.
//!
//! Only with power-loss protection and without an SLC cache: every enterprise drive with
//! FDP has both that way, and neither undo records nor the cache's routing then need to know
//! about handles.

use crate::alloc::{Stream, StreamId};
use crate::lists::NIL;
use crate::{Ftl, NandOp, OpCause};
use flashlab_engine::state::{State, StateError, StateReader, StateWriter};

/// How far garbage collection keeps a handle's data apart (NVMe's reclaim unit handle type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleType {
    /// Data moved by GC may share a reclaim unit with other handles' moved data.
    InitiallyIsolated,
    /// Data moved by GC stays in reclaim units of its own handle.
    PersistentlyIsolated,
}

impl HandleType {
    pub fn name(self) -> &'static str {
        match self {
            HandleType::InitiallyIsolated => "initially_isolated",
            HandleType::PersistentlyIsolated => "persistently_isolated",
        }
    }
}

/// The FTL's FDP configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct FdpConfig {
    /// Reclaim unit handles (placement identifiers 0 to handles - 1).
    pub handles: u32,
    /// Erase blocks per reclaim unit.
    pub ru_blocks: u32,
    pub handle_type: HandleType,
}

/// Most handles: fio addresses at most 128 reclaim unit handles (`FDP_MAX_RUHS`).
pub const MAX_HANDLES: u32 = 128;

/// One handle's usage since format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandleUsage {
    /// IUs the host wrote through the handle.
    pub host_ius: u64,
    /// IUs garbage collection copied out of the handle's reclaim units.
    pub relocated_ius: u64,
    /// IUs garbage collection copied into the handle's reclaim units (persistently isolated
    /// handles only; initially isolated ones share their copies' units).
    pub relocated_in_ius: u64,
    /// Erase blocks the handle's host stream opened (RUs: this over the RU's blocks).
    pub blocks_opened: u64,
    /// Erase blocks of the handle's reclaim units erased.
    pub blocks_erased: u64,
}

flashlab_engine::impl_state!(HandleUsage {
    host_ius,
    relocated_ius,
    relocated_in_ius,
    blocks_opened,
    blocks_erased
});

/// FDP events (NVMe's FDP events log), counted since the drive was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FdpEvents {
    /// A reclaim unit closed before it was fully written (a format with RUs open).
    pub ru_not_fully_written: u64,
    /// Media of a reclaim unit reallocated (an erase block that failed with wear replaced).
    pub media_reallocated: u64,
}

flashlab_engine::impl_state!(FdpEvents {
    ru_not_fully_written,
    media_reallocated
});

/// Owner tag of blocks written by the shared relocation stream of initially isolated
/// handles.
pub(crate) const SHARED: u32 = u32::MAX - 1;

/// The FTL's FDP state; `on` false (and every table empty) without FDP.
#[derive(Default)]
pub(crate) struct Fdp {
    pub on: bool,
    pub persistent: bool,
    pub handles: u32,
    pub ru_blocks: u32,
    /// The handle whose host stream sits in the host stream's slot.
    pub active: u32,
    /// Each handle's host stream while another is active (the active one's entry is a
    /// placeholder).
    pub parked: Vec<Stream>,
    /// Persistently isolated: the handle whose relocation stream sits in the GC slot.
    pub gc_active: u32,
    /// Persistently isolated: each handle's relocation stream while another is active.
    pub parked_gc: Vec<Stream>,
    /// Per block: the handle whose data the block holds (or last held), [`SHARED`] for
    /// blocks of the shared relocation stream, [`NIL`] for blocks never opened.
    pub owner: Vec<u32>,
    pub usage: Vec<HandleUsage>,
    /// IUs copied into the shared relocation stream (initially isolated).
    pub shared_relocated_ius: u64,
    pub events: FdpEvents,
}

impl Fdp {
    pub fn new(cfg: Option<&FdpConfig>, units: u32, ius_per_page: u32, blocks: u32) -> Fdp {
        let Some(c) = cfg else {
            return Fdp::default();
        };
        let persistent = c.handle_type == HandleType::PersistentlyIsolated;
        let streams = |n: u32, cause| {
            (0..n)
                .map(|_| Stream::new(units, ius_per_page, cause))
                .collect()
        };
        Fdp {
            on: true,
            persistent,
            handles: c.handles,
            ru_blocks: c.ru_blocks,
            active: 0,
            parked: streams(c.handles, OpCause::HostWrite),
            gc_active: 0,
            parked_gc: streams(if persistent { c.handles } else { 0 }, OpCause::Gc),
            owner: vec![NIL; blocks as usize],
            usage: vec![HandleUsage::default(); c.handles as usize],
            shared_relocated_ius: 0,
            events: FdpEvents::default(),
        }
    }
}

// Without FDP nothing is written, so a drive without it saves the bytes it always did.
impl State for Fdp {
    fn save(&self, w: &mut StateWriter<'_>) {
        if !self.on {
            return;
        }
        self.active.save(w);
        self.parked.save(w);
        self.gc_active.save(w);
        self.parked_gc.save(w);
        self.owner.save(w);
        self.usage.save(w);
        self.shared_relocated_ius.save(w);
        self.events.save(w);
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        if !self.on {
            return Ok(());
        }
        self.active.load(r)?;
        self.parked.load(r)?;
        self.gc_active.load(r)?;
        self.parked_gc.load(r)?;
        self.owner.load(r)?;
        self.usage.load(r)?;
        self.shared_relocated_ius.load(r)?;
        self.events.load(r)
    }
}

/// What the drive reports of FDP ([`Ftl::fdp_report`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FdpReport {
    pub handles: u32,
    pub ru_blocks: u32,
    pub handle_type: HandleType,
    pub usage: Vec<HandleUsage>,
    /// Per handle: IUs its current reclaim unit can still take (NVMe's RUAMW).
    pub ru_available_ius: Vec<u64>,
    pub shared_relocated_ius: u64,
    pub events: FdpEvents,
}

impl Ftl {
    /// Whether the drive places data by FDP handles.
    #[inline]
    pub fn fdp_enabled(&self) -> bool {
        self.fdp.on
    }

    /// The next `ius` host IUs go through reclaim unit handle `handle` (below the
    /// configuration's `handles`; the device checks placement identifiers first).
    #[inline]
    pub fn use_handle(&mut self, handle: u32, ius: u32) {
        debug_assert!(self.fdp.on && handle < self.fdp.handles);
        if handle != self.fdp.active {
            self.swap_host_stream(handle);
        }
        self.fdp.usage[handle as usize].host_ius += u64::from(ius);
    }

    #[cold]
    fn swap_host_stream(&mut self, handle: u32) {
        let host = StreamId::Host as usize;
        let active = self.fdp.active as usize;
        std::mem::swap(&mut self.streams[host], &mut self.fdp.parked[active]);
        std::mem::swap(
            &mut self.streams[host],
            &mut self.fdp.parked[handle as usize],
        );
        self.fdp.active = handle;
    }

    fn swap_gc_stream(&mut self, handle: u32) {
        let gc = StreamId::Gc as usize;
        let active = self.fdp.gc_active as usize;
        std::mem::swap(&mut self.streams[gc], &mut self.fdp.parked_gc[active]);
        std::mem::swap(
            &mut self.streams[gc],
            &mut self.fdp.parked_gc[handle as usize],
        );
        self.fdp.gc_active = handle;
    }

    /// Whether `page_global` is the unprogrammed current page of a parked stream.
    pub(crate) fn parked_page_pending(&self, page_global: u32) -> bool {
        let f = &self.fdp;
        let parked = |v: &[Stream], active: u32| {
            v.iter()
                .enumerate()
                .any(|(h, st)| h as u32 != active && st.cur_page_global == page_global)
        };
        parked(&f.parked, f.active) || parked(&f.parked_gc, f.gc_active)
    }

    /// Stream `s` took block `b`: note whose data it holds.
    #[inline]
    pub(crate) fn fdp_opened(&mut self, s: StreamId, b: u32) {
        let owner = match s {
            StreamId::Host => {
                self.fdp.usage[self.fdp.active as usize].blocks_opened += 1;
                self.fdp.active
            }
            _ if self.fdp.persistent => self.fdp.gc_active,
            _ => SHARED,
        };
        self.fdp.owner[b as usize] = owner;
    }

    /// Relocation is about to empty block `b` through the GC stream: count the copies
    /// against its handle and, persistently isolated, write them through that handle's
    /// relocation stream.
    pub(crate) fn fdp_relocating(&mut self, b: u32) {
        let owner = self.fdp.owner[b as usize];
        let valid = u64::from(self.blocks.info[b as usize].valid);
        if let Some(u) = self.fdp.usage.get_mut(owner as usize) {
            u.relocated_ius += valid;
        }
        if self.fdp.persistent {
            // A block no handle wrote (never the case once written) goes with handle 0.
            let h = if owner < self.fdp.handles { owner } else { 0 };
            if h != self.fdp.gc_active {
                self.swap_gc_stream(h);
            }
            self.fdp.usage[h as usize].relocated_in_ius += valid;
        } else {
            self.fdp.shared_relocated_ius += valid;
        }
    }

    /// Block `b` of a reclaim unit was erased (`retired`: its erase failed and the unit's
    /// reserve replaced it, NVMe's media reallocated event).
    pub(crate) fn fdp_erased(&mut self, b: u32, retired: bool) {
        let owner = self.fdp.owner[b as usize];
        if let Some(u) = self.fdp.usage.get_mut(owner as usize) {
            u.blocks_erased += 1;
        }
        if retired && owner != NIL {
            self.fdp.events.media_reallocated += 1;
        }
    }

    /// Pad the current pages of the parked streams (flush).
    pub(crate) fn pad_parked(&mut self, ops: &mut Vec<NandOp>) {
        for h in 0..self.fdp.handles {
            if h != self.fdp.active {
                let host = StreamId::Host as usize;
                std::mem::swap(&mut self.streams[host], &mut self.fdp.parked[h as usize]);
                self.pad_stream(StreamId::Host, ops);
                std::mem::swap(&mut self.streams[host], &mut self.fdp.parked[h as usize]);
            }
            if self.fdp.persistent && h != self.fdp.gc_active {
                let gc = StreamId::Gc as usize;
                std::mem::swap(&mut self.streams[gc], &mut self.fdp.parked_gc[h as usize]);
                self.pad_stream(StreamId::Gc, ops);
                std::mem::swap(&mut self.streams[gc], &mut self.fdp.parked_gc[h as usize]);
            }
        }
    }

    /// Format: every handle's open reclaim unit is given up (one event each that held data);
    /// usage restarts, the events log stays.
    pub(crate) fn fdp_format(&mut self) {
        let mut open = 0;
        for h in 0..self.fdp.handles {
            let st = if h == self.fdp.active {
                &self.streams[StreamId::Host as usize]
            } else {
                &self.fdp.parked[h as usize]
            };
            open += u64::from(st.open_count > 0);
        }
        let events = FdpEvents {
            ru_not_fully_written: self.fdp.events.ru_not_fully_written + open,
            ..self.fdp.events
        };
        let handles = self.fdp.handles;
        let mut fresh = Fdp::new(
            self.cfg.fdp.as_ref(),
            self.geo.units,
            self.geo.ius_per_page,
            self.geo.total_blocks,
        );
        fresh.events = events;
        debug_assert_eq!(fresh.handles, handles);
        self.fdp = fresh;
    }

    /// Every stream with the role it plays: the four of the drive, then the parked ones.
    pub(crate) fn all_streams(&self) -> Vec<(StreamId, Option<u32>, &Stream)> {
        let mut v: Vec<(StreamId, Option<u32>, &Stream)> = crate::alloc::STREAMS
            .iter()
            .map(|&s| {
                let h = match s {
                    StreamId::Host if self.fdp.on => Some(self.fdp.active),
                    StreamId::Gc if self.fdp.persistent => Some(self.fdp.gc_active),
                    _ => None,
                };
                (s, h, &self.streams[s as usize])
            })
            .collect();
        for (h, st) in self.fdp.parked.iter().enumerate() {
            if h as u32 != self.fdp.active {
                v.push((StreamId::Host, Some(h as u32), st));
            }
        }
        for (h, st) in self.fdp.parked_gc.iter().enumerate() {
            if h as u32 != self.fdp.gc_active {
                v.push((StreamId::Gc, Some(h as u32), st));
            }
        }
        v
    }

    /// FDP's counters and each handle's state, or None without FDP.
    pub fn fdp_report(&self) -> Option<FdpReport> {
        if !self.fdp.on {
            return None;
        }
        let c = self.cfg.fdp.as_ref()?;
        let per_block = u64::from(self.geo.data_ius_per_block);
        let ipp = u64::from(self.geo.ius_per_page);
        let ru_available_ius = (0..self.fdp.handles)
            .map(|h| {
                let st = if h == self.fdp.active {
                    &self.streams[StreamId::Host as usize]
                } else {
                    &self.fdp.parked[h as usize]
                };
                // The unit's blocks not yet opened, and what its open blocks can still take.
                let opened = self.fdp.usage[h as usize].blocks_opened;
                let ru = u64::from(self.fdp.ru_blocks);
                let unopened = (ru - opened % ru) % ru;
                let open: u64 = st
                    .open
                    .iter()
                    .filter(|&&b| b != NIL)
                    .map(|&b| {
                        let info = &self.blocks.info[b as usize];
                        let pages = u64::from(self.blocks.pages_in_mode(info.slc) - info.wp);
                        pages * ipp
                            + if b == st.cur_block {
                                ipp - u64::from(st.fill)
                            } else {
                                0
                            }
                    })
                    .sum();
                unopened * per_block + open
            })
            .collect();
        Some(FdpReport {
            handles: self.fdp.handles,
            ru_blocks: self.fdp.ru_blocks,
            handle_type: c.handle_type,
            usage: self.fdp.usage.clone(),
            ru_available_ius,
            shared_relocated_ius: self.fdp.shared_relocated_ius,
            events: self.fdp.events,
        })
    }

    /// FDP's invariants: every open block of a handle's host stream holds that handle's
    /// data, persistently isolated relocation streams likewise, and the tables fit.
    pub(crate) fn check_fdp(&self) -> Result<(), String> {
        let f = &self.fdp;
        if !f.on {
            return Ok(());
        }
        let n = f.handles as usize;
        if f.parked.len() != n
            || f.usage.len() != n
            || f.parked_gc.len() != if f.persistent { n } else { 0 }
            || f.owner.len() != self.geo.total_blocks as usize
            || f.active >= f.handles
            || (f.persistent && f.gc_active >= f.handles)
        {
            return Err(format!(
                "FDP tables do not fit {n} handles and {} blocks",
                self.geo.total_blocks
            ));
        }
        for (s, h, st) in self.all_streams() {
            let Some(h) = h else { continue };
            for &b in st.open.iter().filter(|&&b| b != NIL) {
                let owner = f.owner.get(b as usize).copied().unwrap_or(NIL);
                if owner != h {
                    return Err(format!(
                        "block {b} open in handle {h}'s {s:?} stream holds data of {owner}"
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::small;
    use crate::{FtlConfig, NandOpKind};

    fn fdp(handles: u32, handle_type: HandleType) -> FtlConfig {
        FtlConfig {
            fdp: Some(FdpConfig {
                handles,
                ru_blocks: 2,
                handle_type,
            }),
            ..small()
        }
    }

    /// A flash cache's two streams on one drive: a small region written at random (IUs
    /// 0..hot) and a log over the rest written in order, round and round; the log writes
    /// `log_share` of every 8 IUs. `pid(stream)` is the handle each stream writes through.
    fn cache_workload(ftl: &mut Ftl, writes: u32, hot: u32, pid: impl Fn(usize) -> u32) {
        let user = 1400;
        let mut ops = Vec::new();
        let mut state = 7u64;
        let mut log_at = hot;
        for i in 0..writes {
            let (stream, lpn) = if i % 8 < 6 {
                let l = log_at;
                log_at = if log_at + 1 == user { hot } else { log_at + 1 };
                (1, l)
            } else {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1442695040888963407);
                (0, ((state >> 33) % u64::from(hot)) as u32)
            };
            if ftl.fdp_enabled() {
                ftl.use_handle(pid(stream), 1);
            }
            ftl.write(lpn, 1, false, false, i, &mut ops);
            ops.clear();
        }
    }

    #[test]
    fn a_handle_per_lifetime_lowers_write_amplification() {
        let wa = |handles: u32, pid: fn(usize) -> u32| {
            let mut ftl = Ftl::new(fdp(handles, HandleType::InitiallyIsolated)).unwrap();
            cache_workload(&mut ftl, 40_000, 300, pid);
            ftl.check_invariants();
            ftl.counters().write_amplification()
        };
        let one = wa(2, |_| 0);
        let two = wa(2, |s| s as u32);
        // What GC adds above the host's writes: the log's blocks die whole with two handles.
        assert!(
            two - 1.0 < (one - 1.0) * 0.5,
            "one handle WA {one:.3}, two handles {two:.3}"
        );
        // Without FDP the drive writes as with one handle.
        let mut plain = Ftl::new(small()).unwrap();
        cache_workload(&mut plain, 40_000, 300, |_| 0);
        let none = plain.counters().write_amplification();
        assert!(
            (none - one).abs() < 0.05 * one,
            "no FDP {none:.3}, one handle {one:.3}"
        );
    }

    #[test]
    fn no_block_holds_two_handles_host_data_and_persistent_handles_keep_their_copies() {
        for handle_type in [
            HandleType::InitiallyIsolated,
            HandleType::PersistentlyIsolated,
        ] {
            let mut ftl = Ftl::new(fdp(2, handle_type)).unwrap();
            // Handle 0 writes even IUs, handle 1 odd ones.
            let mut ops = Vec::new();
            let mut state = 3u64;
            for i in 0..30_000u32 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1442695040888963407);
                let lpn = ((state >> 33) % 1400) as u32;
                ftl.use_handle(lpn % 2, 1);
                ftl.write(lpn, 1, false, false, i, &mut ops);
                ops.clear();
                if i % 5000 == 4999 {
                    ftl.check_invariants();
                }
            }
            assert!(ftl.counters().gc_copied_ius > 0);
            let g = &ftl.geo;
            for b in 0..g.total_blocks {
                let owner = ftl.fdp.owner[b as usize];
                let first = ftl.ppa_of(b, 0, 0) as usize;
                let lpns = &ftl.map.p2l[first..first + g.ius_per_block as usize];
                let parities: Vec<u32> = lpns
                    .iter()
                    .filter(|&&l| l != crate::mapping::INVALID)
                    .map(|&l| l % 2)
                    .collect();
                if owner < 2 {
                    assert!(
                        parities.iter().all(|&p| p == owner),
                        "{handle_type:?}: block {b} of handle {owner} holds {parities:?}"
                    );
                } else if owner == SHARED {
                    assert_eq!(handle_type, HandleType::InitiallyIsolated);
                }
            }
            let r = ftl.fdp_report().unwrap();
            let moved: u64 = r.usage.iter().map(|u| u.relocated_ius).sum();
            assert!(moved > 0 && moved <= ftl.counters().gc_copied_ius);
            if handle_type == HandleType::PersistentlyIsolated {
                assert_eq!(r.shared_relocated_ius, 0);
                assert!(r.usage.iter().all(|u| u.relocated_in_ius > 0));
            } else {
                assert!(r.shared_relocated_ius > 0);
            }
        }
    }

    #[test]
    fn flush_programs_every_handles_open_page_and_format_logs_open_units() {
        let mut ftl = Ftl::new(fdp(3, HandleType::PersistentlyIsolated)).unwrap();
        let mut ops = Vec::new();
        for (i, h) in [0u32, 1, 2].into_iter().enumerate() {
            ftl.use_handle(h, 1);
            ftl.write(i as u32 * 10, 1, false, false, 1, &mut ops);
        }
        // Each IU sits in its handle's unprogrammed page.
        assert!(ops.iter().all(|o| o.kind != NandOpKind::Program));
        for i in 0..3u32 {
            assert_eq!(ftl.read(i * 10), crate::ReadLocation::Buffered);
        }
        ftl.flush(&mut ops);
        let programs = ops.iter().filter(|o| o.kind == NandOpKind::Program).count();
        assert_eq!(programs, 3, "{ops:?}");
        ftl.check_invariants();
        ops.clear();
        ftl.format(&mut ops);
        let r = ftl.fdp_report().unwrap();
        assert_eq!(r.events.ru_not_fully_written, 3);
        assert!(r.usage.iter().all(|u| u.host_ius == 0));
        ftl.check_invariants();
    }

    #[test]
    fn fdp_needs_plp_no_slc_cache_and_room_for_its_streams() {
        let mut c = fdp(2, HandleType::InitiallyIsolated);
        c.power_loss_protection = false;
        assert!(Ftl::new(c)
            .err()
            .unwrap()
            .to_string()
            .contains("power_loss_protection"));
        let mut c = fdp(2, HandleType::InitiallyIsolated);
        c.slc.static_blocks = 2;
        assert!(Ftl::new(c).err().unwrap().to_string().contains("SLC"));
        let c = fdp(0, HandleType::InitiallyIsolated);
        assert!(Ftl::new(c)
            .err()
            .unwrap()
            .to_string()
            .contains("fdp.handles"));
        // Each handle's stream holds an open block per unit: 128 handles do not fit.
        let c = fdp(128, HandleType::PersistentlyIsolated);
        assert!(Ftl::new(c).err().unwrap().to_string().contains("spare"));
    }
}
