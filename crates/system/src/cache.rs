//! A cache tier: a fast device in front of a slow one (3D XPoint or flash in front of a hard
//! disk). The tier has the backing device's capacity; the cache device holds copies of
//! `line_bytes` lines of it, valid and dirty per 4 KiB sector, and a metadata region (one
//! record per line) at its start that is written when a line is promoted or becomes dirty.
//!
//! - Admission: a line is promoted on a read miss and/or a write, optionally only once it
//!   was asked for `admit_after` times (a one-off scan does not flush hot data out), and not
//!   while the host streams sequentially beyond `sequential_bypass_bytes` (the backing
//!   device streams well on its own). A read miss copies either its whole line (the backing
//!   device reads the line) or only the sectors the host read ([`Promote`]).
//! - Eviction: least recently used, or segmented LRU (new lines on probation; a second hit
//!   protects them), which keeps frequently used lines through scans.
//! - Write-through writes both devices; write-back writes the cache and flushes dirty lines
//!   to the backing device in idle time, or when a dirty line is evicted.
//!
//! Dependent operations (promote after reading the backing device, write back after reading
//! the cache) are submitted at once and pushed back in time as in the RAID module.
//!
//! What Intel documents of its caching driver (Rapid Storage Technology's Smart Response,
//! which Optane Memory's caching continues) and these rules follow: caching is by block
//! (LBA), not by file (PC Perspective, "Intel Smart Response Technology: SSD Caching on Z68
//! Tested", 2011); a block is cached once it has been read from the disk, so a first read is
//! no faster than the disk alone and the second and later ones are (Tom's Hardware, "The Intel
//! Z68 Express Review", 2011, p. 3:
//! <https://www.tomshardware.com/reviews/intel-z68-express-smart-response-technology-ssd-caching,2938-3.html>);
//! both reads and writes are cached, write-through ("enhanced") or write-back ("maximized")
//! (AnandTech, "Intel Z68 Chipset & Smart Response Technology (SSD Caching) Review", 2011:
//! <https://www.anandtech.com/show/4329/intel-z68-chipset-smart-response-technology-ssd-caching-review>).
//! That a first read is no faster than the disk alone also says what a read miss copies: only
//! what was read ([`Promote::Read`]); a whole-line fill would serve the first read of the
//! sectors next to a miss from the cache. The line size, the sequential-bypass length and the
//! eviction order are not published; the presets' values are choices their files state.

use std::collections::HashMap;

use flashlab_engine::{BlockDevice, Completion, DeviceError, IoKind, IoRequest, SimTime};

use crate::counters::{with_fields, CacheCounters};
use crate::Component;

const SECTOR: u64 = 4096;
const NONE: u32 = u32::MAX;

/// Which lines leave the cache first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eviction {
    Lru,
    /// Segmented LRU: probation and protected segments.
    Frequency,
}

/// What a read miss that is admitted copies to the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Promote {
    /// The whole line: the backing device reads the line, and the sectors around the ones
    /// asked for are cached before anyone reads them.
    Line,
    /// Only the sectors the host read: a sector is cached once it has been read from the
    /// backing device, and a first read is never served by the cache.
    Read,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheMode {
    WriteThrough,
    WriteBack,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CacheParams {
    pub line_bytes: u64,
    pub mode: CacheMode,
    pub admit_read_miss: bool,
    /// What an admitted read miss copies to the cache.
    pub promote: Promote,
    pub admit_write: bool,
    /// Accesses a line needs before it is promoted (1: on the first miss).
    pub admit_after: u32,
    /// Sequential runs longer than this bypass the cache (0: never).
    pub sequential_bypass_bytes: u64,
    pub eviction: Eviction,
    pub metadata_bytes_per_line: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    tag: u64,
    valid: u64,
    dirty: u64,
    prev: u32,
    next: u32,
    /// 0 free, 1 probation, 2 protected.
    seg: u8,
}

flashlab_engine::impl_state!(Slot {
    tag,
    valid,
    dirty,
    prev,
    next,
    seg
});

#[derive(Debug, Clone, Copy, Default)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
}

flashlab_engine::impl_state!(List { head, tail, len });

#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    read_hits: u64,
    read_misses: u64,
    write_hits: u64,
    write_misses: u64,
    promotions: u64,
    bypassed: u64,
    evictions: u64,
    dirty_evictions: u64,
    flushed_lines: u64,
    metadata_writes: u64,
}

flashlab_engine::impl_state!(Counters {
    read_hits,
    read_misses,
    write_hits,
    write_misses,
    promotions,
    bypassed,
    evictions,
    dirty_evictions,
    flushed_lines,
    metadata_writes,
});

/// The tier.
pub struct CacheTier {
    name: String,
    p: CacheParams,
    cache: Box<dyn Component>,
    backing: Box<dyn Component>,
    slots: Vec<Slot>,
    map: HashMap<u64, u32>,
    free: Vec<u32>,
    lists: [List; 2],
    data_start: u64,
    /// Accesses of lines not (yet) cached, for `admit_after`; cleared when it outgrows the
    /// cache (coarse aging, bounded memory).
    seen: HashMap<u64, u32>,
    seq_next: u64,
    seq_run: u64,
    /// Last submission per device: [cache, backing].
    clock_ns: [u64; 2],
    dirty_lines: u64,
    flush_cursor: usize,
    c: Counters,
}

// Both members, the line table, lists and maps; the tier's parameters are configuration.
flashlab_engine::impl_state!(CacheTier {
    cache, backing, slots, free, lists, map, seen, seq_next, seq_run, clock_ns, dirty_lines,
    flush_cursor, c,
} skip { name, p, data_start } fixed { slots } check CacheTier::check_loaded);

impl CacheTier {
    pub fn new(
        name: &str,
        p: CacheParams,
        cache: Box<dyn Component>,
        backing: Box<dyn Component>,
    ) -> Result<CacheTier, String> {
        let l = p.line_bytes;
        if !(SECTOR..=64 * SECTOR).contains(&l) || !l.is_power_of_two() {
            return Err(format!(
                "line = {l} bytes; valid: a power of two from 4KiB to 256KiB"
            ));
        }
        if p.admit_after == 0 {
            return Err("admit_after = 0; valid: 1 or more accesses".into());
        }
        let cap = cache.capacity_bytes();
        let mut n = cap / (l + p.metadata_bytes_per_line);
        let meta = |n: u64| (n * p.metadata_bytes_per_line).div_ceil(SECTOR) * SECTOR;
        while n > 0 && meta(n) + n * l > cap {
            n -= 1;
        }
        if n == 0 || n >= NONE as u64 {
            return Err(format!(
                "a cache device of {cap} bytes holds {n} lines of {l} bytes"
            ));
        }
        let slot = Slot {
            tag: 0,
            valid: 0,
            dirty: 0,
            prev: NONE,
            next: NONE,
            seg: 0,
        };
        let empty = List {
            head: NONE,
            tail: NONE,
            len: 0,
        };
        Ok(CacheTier {
            name: name.to_string(),
            data_start: meta(n),
            slots: vec![slot; n as usize],
            map: HashMap::with_capacity(n as usize),
            free: (0..n as u32).rev().collect(),
            lists: [empty; 2],
            seen: HashMap::new(),
            seq_next: u64::MAX,
            seq_run: 0,
            clock_ns: [0; 2],
            dirty_lines: 0,
            flush_cursor: 0,
            c: Counters::default(),
            p,
            cache,
            backing,
        })
    }

    /// A loaded tier is one its runs could have left (`Err` names the tier).
    fn check_loaded(&self) -> Result<(), String> {
        self.check_lines()
            .map_err(|what| format!("cache tier '{}': {what}", self.name))
    }

    /// Every cached line maps to a slot holding it on one of the two lists, a line of the
    /// backing device with dirty sectors among its valid ones; the free slots are the
    /// others, each once; each list walked from its head in its length, linked both ways;
    /// the dirty count, the flush cursor, the access counts and the clocks in range.
    fn check_lines(&self) -> Result<(), String> {
        let n = self.slots.len();
        let lines = self.backing.capacity_bytes() / self.p.line_bytes;
        let sectors = (self.p.line_bytes / SECTOR) as u32;
        let all = u64::MAX >> (64 - sectors);
        // The lowest bad line, so the message does not depend on the map's order.
        let bad = self
            .map
            .iter()
            .filter(|&(&tag, &s)| {
                let slot = self.slots.get(s as usize);
                tag >= lines || !slot.is_some_and(|sl| sl.tag == tag && (1..=2).contains(&sl.seg))
            })
            .min();
        if let Some((tag, s)) = bad {
            return Err(format!(
                "line {tag} maps to slot {s}, which does not hold it (valid: a line below {lines} in one of the {n} slots, on a list)"
            ));
        }
        let mut on_free = vec![false; n];
        for &s in &self.free {
            match on_free.get_mut(s as usize) {
                Some(f) if !*f && self.slots[s as usize].seg == 0 => *f = true,
                _ => {
                    return Err(format!(
                        "free slot {s} is past the {n} slots, listed twice or on a list"
                    ))
                }
            }
        }
        let mut listed = 0usize;
        for (i, l) in self.lists.iter().enumerate() {
            let (mut at, mut prev, mut len) = (l.head, NONE, 0u32);
            while at != NONE {
                let slot = self
                    .slots
                    .get(at as usize)
                    .filter(|sl| usize::from(sl.seg) == i + 1 && sl.prev == prev && len < l.len);
                let Some(slot) = slot else {
                    return Err(format!(
                        "list {} reaches slot {at} after {len} of its {} lines, not linked back or of another list",
                        i + 1,
                        l.len
                    ));
                };
                len += 1;
                prev = at;
                at = slot.next;
            }
            if len != l.len || l.tail != prev {
                return Err(format!(
                    "list {} holds {len} lines ending at slot {prev}; it counts {} ending at {}",
                    i + 1,
                    l.len,
                    l.tail
                ));
            }
            listed += len as usize;
        }
        if listed != self.map.len() || self.map.len() + self.free.len() != n {
            return Err(format!(
                "{} lines cached, {listed} on the lists and {} slots free of {n}",
                self.map.len(),
                self.free.len()
            ));
        }
        let mut dirty = 0u64;
        for (s, sl) in self.slots.iter().enumerate() {
            if sl.seg > 2
                || sl.valid & !all != 0
                || sl.dirty & !sl.valid != 0
                || (sl.seg == 0 && sl.dirty != 0)
            {
                return Err(format!(
                    "slot {s}: segment {}, valid sectors {:#x}, dirty {:#x} (valid: segment 0 to 2, sectors within the line's {sectors}, dirty ones valid, none in a free slot)",
                    sl.seg, sl.valid, sl.dirty
                ));
            }
            dirty += u64::from(sl.dirty != 0);
        }
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        if dirty != self.dirty_lines
            || self.flush_cursor >= n
            || self.seen.len() > 4 * n + 1
            || self.clock_ns.iter().any(|&t| t > limit)
        {
            return Err(format!(
                "{} dirty lines counted where {dirty} are, flush cursor at slot {}, {} access counts, clocks {:?} ns (valid: the count of dirty slots, a slot below {n}, at most {} counts, times before 2^62 ns)",
                self.dirty_lines,
                self.flush_cursor,
                self.seen.len(),
                self.clock_ns,
                4 * n + 1
            ));
        }
        Ok(())
    }

    pub fn lines(&self) -> usize {
        self.slots.len()
    }

    fn unlink(&mut self, s: u32) {
        let Slot {
            prev, next, seg, ..
        } = self.slots[s as usize];
        if seg == 0 {
            return;
        }
        let l = &mut self.lists[seg as usize - 1];
        if prev == NONE {
            l.head = next
        } else {
            self.slots[prev as usize].next = next
        }
        if next == NONE {
            l.tail = prev
        } else {
            self.slots[next as usize].prev = prev
        }
        l.len -= 1;
        let slot = &mut self.slots[s as usize];
        slot.prev = NONE;
        slot.next = NONE;
        slot.seg = 0;
    }

    /// Put `s` at the most recently used end of segment `seg` (1 or 2).
    fn push_mru(&mut self, s: u32, seg: u8) {
        let l = &mut self.lists[seg as usize - 1];
        let old = l.head;
        l.head = s;
        if old == NONE {
            l.tail = s
        } else {
            self.slots[old as usize].prev = s
        }
        l.len += 1;
        let slot = &mut self.slots[s as usize];
        slot.next = old;
        slot.prev = NONE;
        slot.seg = seg;
    }

    fn touch(&mut self, s: u32) {
        let seg = self.slots[s as usize].seg;
        self.unlink(s);
        if self.p.eviction == Eviction::Lru {
            self.push_mru(s, 1);
            return;
        }
        // A hit on probation protects the line; the protected segment keeps 80% of the lines
        // and demotes its least recent to probation.
        let _ = seg;
        self.push_mru(s, 2);
        let max_protected = (self.slots.len() as u32 * 4 / 5).max(1);
        if self.lists[1].len > max_protected {
            let t = self.lists[1].tail;
            self.unlink(t);
            self.push_mru(t, 1);
        }
    }

    fn line_addr(&self, s: u32) -> u64 {
        self.data_start + s as u64 * self.p.line_bytes
    }

    fn dev(&mut self, which: usize, t: u64, req: &IoRequest) -> Result<u64, DeviceError> {
        let t = t.max(self.clock_ns[which]);
        self.clock_ns[which] = t;
        let d = if which == 0 {
            &mut self.cache
        } else {
            &mut self.backing
        };
        Ok(d.submit(t, req)?.done_ns)
    }

    fn metadata_write(&mut self, t: u64, s: u32) -> Result<u64, DeviceError> {
        self.c.metadata_writes += 1;
        let page = s as u64 * self.p.metadata_bytes_per_line / SECTOR * SECTOR;
        self.dev(
            0,
            t,
            &IoRequest::write(page.min(self.data_start.saturating_sub(SECTOR)), SECTOR),
        )
    }

    /// Sector bits `[a, b)` bytes of a line.
    fn mask(a: u64, b: u64) -> u64 {
        let first = a / SECTOR;
        let last = b.div_ceil(SECTOR);
        let n = last - first;
        (if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }) << first
    }

    /// Byte span of the set bits of `m`.
    fn span(m: u64) -> (u64, u64) {
        let a = m.trailing_zeros() as u64 * SECTOR;
        let b = (64 - m.leading_zeros()) as u64 * SECTOR;
        (a, b)
    }

    /// Write a dirty slot's dirty sectors back: read the cache, then write the backing device.
    fn write_back(&mut self, t: u64, s: u32) -> Result<u64, DeviceError> {
        let slot = self.slots[s as usize];
        if slot.dirty == 0 {
            return Ok(t);
        }
        let (a, b) = Self::span(slot.dirty);
        let r = self.dev(0, t, &IoRequest::read(self.line_addr(s) + a, b - a))?;
        let w = self.dev(
            1,
            t,
            &IoRequest::write(slot.tag * self.p.line_bytes + a, b - a),
        )?;
        self.slots[s as usize].dirty = 0;
        self.dirty_lines -= 1;
        self.c.flushed_lines += 1;
        Ok(r.max(w + (r - t)))
    }

    /// A slot for line `tag`: a free one, else the victim's (written back first if dirty).
    /// Returns (slot, time its previous content is safe).
    fn allocate(&mut self, t: u64, tag: u64) -> Result<(u32, u64), DeviceError> {
        let (s, ready) = if let Some(s) = self.free.pop() {
            (s, t)
        } else {
            let v = if self.lists[0].tail != NONE {
                self.lists[0].tail
            } else {
                self.lists[1].tail
            };
            self.c.evictions += 1;
            let ready = if self.slots[v as usize].dirty != 0 {
                self.c.dirty_evictions += 1;
                self.write_back(t, v)?
            } else {
                t
            };
            self.unlink(v);
            self.map.remove(&self.slots[v as usize].tag);
            (v, ready)
        };
        self.slots[s as usize].tag = tag;
        self.slots[s as usize].valid = 0;
        self.slots[s as usize].dirty = 0;
        self.push_mru(s, 1);
        self.map.insert(tag, s);
        self.c.promotions += 1;
        Ok((s, ready))
    }

    /// The slot holding line `tag`, allocated if the line is not cached (most recently used
    /// either way).
    fn slot_for(&mut self, t: u64, tag: u64) -> Result<u32, DeviceError> {
        match self.map.get(&tag) {
            Some(&s) => {
                self.touch(s);
                Ok(s)
            }
            None => Ok(self.allocate(t, tag)?.0),
        }
    }

    /// Count an access to an uncached line; true once it qualifies for promotion.
    fn qualifies(&mut self, tag: u64) -> bool {
        if self.p.admit_after <= 1 {
            return true;
        }
        if self.seen.len() > 4 * self.slots.len() {
            self.seen.clear();
        }
        let n = self.seen.entry(tag).or_insert(0);
        *n += 1;
        if *n >= self.p.admit_after {
            self.seen.remove(&tag);
            true
        } else {
            false
        }
    }

    fn read(&mut self, t: u64, off: u64, len: u64, bypass: bool) -> Result<u64, DeviceError> {
        let l = self.p.line_bytes;
        let end = off + len;
        let mut done = t;
        // Misses are read from the backing device in contiguous runs.
        let mut run: Option<(u64, u64)> = None;
        let mut tag = off / l;
        while tag * l < end {
            let a = off.max(tag * l) - tag * l;
            let b = end.min((tag + 1) * l) - tag * l;
            let m = Self::mask(a, b);
            let hit = self
                .map
                .get(&tag)
                .copied()
                .filter(|&s| self.slots[s as usize].valid & m == m);
            if let Some(s) = hit {
                self.c.read_hits += 1;
                self.touch(s);
                done = done.max(self.dev(0, t, &IoRequest::read(self.line_addr(s) + a, b - a))?);
            } else {
                self.c.read_misses += 1;
                let promote = self.p.admit_read_miss && !bypass && self.qualifies(tag);
                if promote && self.p.promote == Promote::Line {
                    // The whole line is read and copied to the cache.
                    let r = self.dev(1, t, &IoRequest::read(tag * l, l))?;
                    done = done.max(r);
                    let s = self.slot_for(t, tag)?;
                    self.dev(0, t, &IoRequest::write(self.line_addr(s), l))?;
                    self.slots[s as usize].valid = u64::MAX >> (64 - l / SECTOR);
                    self.metadata_write(t, s)?;
                } else {
                    if bypass {
                        self.c.bypassed += 1;
                    }
                    let (s, e) = (tag * l + a, tag * l + b);
                    run = match run {
                        Some((rs, re)) if re == s => Some((rs, e)),
                        Some((rs, re)) => {
                            done = done.max(self.dev(1, t, &IoRequest::read(rs, re - rs))?);
                            Some((s, e))
                        }
                        None => Some((s, e)),
                    };
                    if promote {
                        // Only what the host reads is copied: the sectors asked for. The copy
                        // is submitted with the read (as the line fill is) and the host waits
                        // only for the backing device.
                        let s = self.slot_for(t, tag)?;
                        self.dev(0, t, &IoRequest::write(self.line_addr(s) + a, b - a))?;
                        self.slots[s as usize].valid |= m;
                        self.metadata_write(t, s)?;
                    }
                }
            }
            tag += 1;
        }
        if let Some((rs, re)) = run {
            done = done.max(self.dev(1, t, &IoRequest::read(rs, re - rs))?);
        }
        Ok(done)
    }

    fn write(
        &mut self,
        t: u64,
        off: u64,
        len: u64,
        bypass: bool,
        fua: bool,
    ) -> Result<u64, DeviceError> {
        let l = self.p.line_bytes;
        let end = off + len;
        let wb = self.p.mode == CacheMode::WriteBack;
        let mut done = t;
        let mut around = false;
        let mut tag = off / l;
        while tag * l < end {
            let a = off.max(tag * l) - tag * l;
            let b = end.min((tag + 1) * l) - tag * l;
            let m = Self::mask(a, b);
            let slot = match self.map.get(&tag).copied() {
                Some(s) => {
                    self.c.write_hits += 1;
                    self.touch(s);
                    Some((s, t))
                }
                None => {
                    self.c.write_misses += 1;
                    if self.p.admit_write && !bypass && self.qualifies(tag) {
                        Some(self.allocate(t, tag)?)
                    } else {
                        if bypass {
                            self.c.bypassed += 1;
                        }
                        None
                    }
                }
            };
            match slot {
                Some((s, ready)) => {
                    let w = self.dev(0, t, &IoRequest::write(self.line_addr(s) + a, b - a))?;
                    let mut d = w + (ready - t);
                    let sl = &mut self.slots[s as usize];
                    sl.valid |= m;
                    if wb && !fua {
                        let was_clean = sl.dirty == 0;
                        sl.dirty |= m;
                        if was_clean {
                            self.dirty_lines += 1;
                            // The line must be known dirty after a crash before the write is
                            // acknowledged.
                            d = d.max(self.metadata_write(t, s)?);
                        }
                    } else {
                        around = true;
                    }
                    done = done.max(d);
                }
                None => around = true,
            }
            tag += 1;
        }
        if around {
            // Write-through (or not admitted): the backing device gets the whole request.
            let mut req = IoRequest::write(off, len);
            req.fua = fua;
            done = done.max(self.dev(1, t, &req)?);
            if wb {
                // Those sectors are now clean in the cache too.
                let mut tag = off / l;
                while tag * l < end {
                    if let Some(&s) = self.map.get(&tag) {
                        let a = off.max(tag * l) - tag * l;
                        let b = end.min((tag + 1) * l) - tag * l;
                        let sl = &mut self.slots[s as usize];
                        let was = sl.dirty != 0;
                        sl.dirty &= !Self::mask(a, b);
                        if was && sl.dirty == 0 {
                            self.dirty_lines -= 1;
                        }
                    }
                    tag += 1;
                }
            }
        }
        Ok(done)
    }

    /// Flush dirty lines one at a time while the host is idle.
    fn flush_idle(&mut self, from_ns: u64, until_ns: u64) -> Result<(), DeviceError> {
        let mut t = from_ns.max(self.clock_ns[0]).max(self.clock_ns[1]);
        let n = self.slots.len();
        let mut scanned = 0;
        while self.dirty_lines > 0 && t < until_ns && scanned < n {
            let s = self.flush_cursor;
            self.flush_cursor = (self.flush_cursor + 1) % n;
            scanned += 1;
            if self.slots[s].dirty != 0 {
                t = self.write_back(t, s as u32)?;
                scanned = 0;
            }
        }
        Ok(())
    }

    fn check(&self, req: &IoRequest) -> Result<(), DeviceError> {
        req.check_range(self.capacity_bytes(), self.logical_block_bytes())
    }
}

impl BlockDevice for CacheTier {
    fn capacity_bytes(&self) -> u64 {
        self.backing.capacity_bytes()
    }
    fn logical_block_bytes(&self) -> u64 {
        self.backing
            .logical_block_bytes()
            .max(self.cache.logical_block_bytes())
    }
    fn queue_depth_limit(&self) -> u32 {
        self.backing
            .queue_depth_limit()
            .max(self.cache.queue_depth_limit())
    }

    fn compresses_data(&self) -> bool {
        self.backing.compresses_data() || self.cache.compresses_data()
    }

    // Whether a request goes to the cache or the backing device is decided by the cache's
    // contents at submission: no hint is passed on.
    fn prefetch(&self, _req: &IoRequest, _stage: flashlab_engine::PrefetchStage) {}
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        self.check(req)?;
        let t = now_ns;
        let bypass = if req.kind == IoKind::Read || req.kind == IoKind::Write {
            if req.offset_bytes == self.seq_next {
                self.seq_run += req.len_bytes;
            } else {
                self.seq_run = req.len_bytes;
            }
            self.seq_next = req.offset_bytes + req.len_bytes;
            self.p.sequential_bypass_bytes > 0 && self.seq_run > self.p.sequential_bypass_bytes
        } else {
            false
        };
        let done = match req.kind {
            IoKind::Read => self.read(t, req.offset_bytes, req.len_bytes, bypass)?,
            IoKind::Write => self.write(t, req.offset_bytes, req.len_bytes, bypass, req.fua)?,
            IoKind::Trim => {
                let l = self.p.line_bytes;
                let first = req.offset_bytes.div_ceil(l);
                let end = (req.offset_bytes + req.len_bytes) / l;
                for tag in first..end.max(first) {
                    if let Some(s) = self.map.remove(&tag) {
                        if self.slots[s as usize].dirty != 0 {
                            self.dirty_lines -= 1;
                        }
                        self.slots[s as usize].dirty = 0;
                        self.unlink(s);
                        self.free.push(s);
                    }
                }
                self.dev(1, t, req)?
            }
            IoKind::Flush => {
                let a = self.dev(0, t, req)?;
                a.max(self.dev(1, t, req)?)
            }
        };
        Ok(Completion {
            accepted_ns: now_ns,
            done_ns: done,
        })
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        // An error while flushing shows up on the next host request to the same line.
        let _ = self.flush_idle(from_ns, until_ns);
        let f = from_ns.max(self.clock_ns[0]);
        if f < until_ns {
            self.cache.idle(f, until_ns);
        }
        let f = from_ns.max(self.clock_ns[1]);
        if f < until_ns {
            self.backing.idle(f, until_ns);
        }
    }
}

impl CacheTier {
    /// This tier's counters (its devices' are theirs).
    pub fn counters(&self) -> CacheCounters {
        let c = &self.c;
        let ratio = |h: u64, m: u64| {
            if h + m == 0 {
                0.0
            } else {
                h as f64 / (h + m) as f64
            }
        };
        CacheCounters {
            name: self.name.clone(),
            kind: "cache",
            mode: match self.p.mode {
                CacheMode::WriteBack => "write-back",
                CacheMode::WriteThrough => "write-through",
            },
            eviction: match self.p.eviction {
                Eviction::Lru => "lru",
                Eviction::Frequency => "frequency",
            },
            line_bytes: self.p.line_bytes,
            lines: self.slots.len(),
            lines_used: self.map.len(),
            metadata_bytes: self.data_start,
            read_hits: c.read_hits,
            read_misses: c.read_misses,
            read_hit_ratio: ratio(c.read_hits, c.read_misses),
            write_hits: c.write_hits,
            write_misses: c.write_misses,
            promotions: c.promotions,
            bypassed: c.bypassed,
            evictions: c.evictions,
            dirty_evictions: c.dirty_evictions,
            dirty_lines: self.dirty_lines,
            flushed_lines: c.flushed_lines,
            metadata_writes: c.metadata_writes,
        }
    }
}

impl Component for CacheTier {
    fn counters_json(&self) -> serde_json::Value {
        with_fields(
            &self.counters(),
            [
                ("cache_device", self.cache.counters_json()),
                ("backing_device", self.backing.counters_json()),
            ],
        )
    }

    fn cache_counters(&self, out: &mut Vec<CacheCounters>) {
        out.push(self.counters());
        self.cache.cache_counters(out);
        self.backing.cache_counters(out);
    }

    fn raid_mut(&mut self, name: &str) -> Option<&mut crate::raid::Raid> {
        match self.cache.raid_mut(name) {
            Some(r) => Some(r),
            None => self.backing.raid_mut(name),
        }
    }

    /// Both devices erased and every line invalid: dirty data is dropped, not written back.
    fn format(&mut self, at_ns: u64) {
        self.cache.format(at_ns.max(self.clock_ns[0]));
        self.backing.format(at_ns.max(self.clock_ns[1]));
        for s in &mut self.slots {
            *s = Slot {
                tag: 0,
                valid: 0,
                dirty: 0,
                prev: NONE,
                next: NONE,
                seg: 0,
            };
        }
        self.map.clear();
        self.free.clear();
        self.free.extend((0..self.slots.len() as u32).rev());
        self.lists = [List {
            head: NONE,
            tail: NONE,
            len: 0,
        }; 2];
        self.seen.clear();
        self.seq_next = u64::MAX;
        self.seq_run = 0;
        self.dirty_lines = 0;
        self.flush_cursor = 0;
    }

    fn links(&self, out: &mut Vec<serde_json::Value>) {
        self.cache.links(out);
        self.backing.links(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_devices::{Forge, Null};

    /// A write-back tier of 16 lines over a 1 GiB device, with some lines written.
    fn tier(writes: u64) -> CacheTier {
        let p = CacheParams {
            line_bytes: 4096,
            mode: CacheMode::WriteBack,
            admit_read_miss: true,
            admit_write: true,
            admit_after: 1,
            sequential_bypass_bytes: 0,
            eviction: Eviction::Frequency,
            metadata_bytes_per_line: 0,
            promote: Promote::Line,
        };
        let mut t =
            CacheTier::new("c", p, Box::new(Null(16 * 4096)), Box::new(Null(1 << 30))).unwrap();
        for i in 0..writes {
            let off = (i * 7919 % 64) * 4096;
            t.submit(i * 10_000, &IoRequest::write(off, 4096)).unwrap();
            t.submit(i * 10_000 + 5_000, &IoRequest::read(off, 4096))
                .unwrap();
        }
        t
    }

    /// A forged cache tier is refused at load (naming the tier): a line mapped to a slot
    /// that does not hold it or past the backing device, a free slot listed twice, a list
    /// that loops or miscounts, a dirty count that disagrees, a flush cursor past the
    /// slots, a slot table of another size. A real tier loads and runs.
    #[test]
    fn forged_cache_tiers_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let mut ok = tier(0);
        reload_into(&tier(40), &mut ok).unwrap();
        assert_eq!(ok.map.len(), 16);
        for i in 0..40 {
            ok.submit(1 << 30, &IoRequest::read(i * 4096, 4096))
                .unwrap();
        }
        let cases: [Forge<CacheTier>; 8] = [
            ("which does not hold it", &|f| {
                let (&tag, _) = f.map.iter().min().unwrap();
                let other = f.map[&tag] ^ 1;
                f.map.insert(tag, other);
            }),
            ("which does not hold it", &|f| {
                let s = f.map.remove(&f.slots[0].tag).unwrap();
                f.slots[s as usize].tag = 1 << 40;
                f.map.insert(1 << 40, s);
            }),
            ("free slot", &|f| f.free.push(3)),
            ("list 1", &|f| {
                let h = f.lists[0].head as usize;
                f.slots[h].next = f.lists[0].head;
            }),
            ("list 2", &|f| f.lists[1].len += 1),
            ("dirty lines counted", &|f| f.dirty_lines += 1),
            ("flush cursor at slot 16", &|f| f.flush_cursor = 16),
            (
                "slots holds 17 entries where this configuration has 16",
                &|f| f.slots.push(Slot::default()),
            ),
        ];
        for (want, forge) in cases {
            let mut forged = tier(40);
            forge(&mut forged);
            let e = reload_into(&forged, &mut tier(0)).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
