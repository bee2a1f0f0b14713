//! Software RAID 0, 1, 10, 5 and 6 over member devices.
//!
//! A request is cut at chunk boundaries and each piece goes to its member; pieces that are
//! contiguous on one member are merged, as the block layer below md does. The request
//! completes when its last piece does. Layouts: RAID 5 and 6 rotate parity left-symmetric
//! (md's default): row `r` keeps P on member `N-1 - r mod N`, Q on the next one, and the
//! data chunks on the members after them. RAID 10 is the "near 2" layout: mirrored pairs,
//! striped.
//!
//! Parity writes: a write covering every data chunk of a row writes data and parity with no
//! reads (full stripe). Otherwise the set chooses, per row, between read-modify-write (read
//! the old data and parity it replaces: 2·(touched + parities) member I/Os) and
//! reconstruct-write (read the data it does not touch: (data − touched) reads, then
//! touched + parities writes), whichever needs fewer I/Os.
//!
//! Dependent operations: a write that needs data read first is handed to its member at the
//! same time as the reads (members are submission-ordered and cannot be given an earlier
//! time later), and its completion is pushed back by the time the reads took, as if it had
//! been issued after them. The member does the same work either way; only the overlap of a
//! single request's two phases is approximated.
//!
//! With a host write-back cache, RAID 5/6 hold the parts of rows a write leaves incomplete
//! (md's stripe cache delays partial stripes the same way): a later write that continues
//! the held part completes the row, which then goes to the members as one full-stripe write
//! with no reads, so a sequential stream of requests smaller than a row costs no parity
//! reads. A held row is written as it stands (read-modify-write or reconstruct-write) when
//! a write to it does not continue it, when more than [`HELD_ROWS`] rows are held (the
//! oldest), when the cache needs its space, at a flush, and when the host goes idle.
//! Without the cache every write goes to the members at once: its completion is answered at
//! submission, so it cannot wait for writes that have not arrived.
//!
//! Background work (rebuild of a replaced member, resync after an unclean shutdown) moves
//! through the members at a configured rate in steps of one chunk, interleaved with host
//! I/O, so it slows the host and the host slows it.

use std::collections::VecDeque;

use flashlab_engine::time::transfer_ns;
use flashlab_engine::{BlockDevice, Completion, DeviceError, IoKind, IoRequest, SimTime};
use serde_json::json;

use crate::Component;

/// RAID level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaidLevel {
    Raid0,
    Raid1,
    Raid10,
    Raid5,
    Raid6,
}

impl RaidLevel {
    pub fn from_number(n: u32) -> Option<RaidLevel> {
        Some(match n {
            0 => RaidLevel::Raid0,
            1 => RaidLevel::Raid1,
            10 => RaidLevel::Raid10,
            5 => RaidLevel::Raid5,
            6 => RaidLevel::Raid6,
            _ => return None,
        })
    }
    pub fn number(self) -> u32 {
        match self {
            RaidLevel::Raid0 => 0,
            RaidLevel::Raid1 => 1,
            RaidLevel::Raid10 => 10,
            RaidLevel::Raid5 => 5,
            RaidLevel::Raid6 => 6,
        }
    }
    /// Why `members` devices cannot form this level, if they cannot.
    pub fn check_members(self, members: usize) -> Result<(), String> {
        let ok = match self {
            RaidLevel::Raid0 => members >= 1,
            RaidLevel::Raid1 => members >= 2,
            RaidLevel::Raid10 => members >= 4 && members.is_multiple_of(2),
            RaidLevel::Raid5 => members >= 3,
            RaidLevel::Raid6 => members >= 4,
        };
        if ok {
            return Ok(());
        }
        Err(match self {
            RaidLevel::Raid0 => "RAID 0 needs at least 1 member".into(),
            RaidLevel::Raid1 => "RAID 1 needs at least 2 members".into(),
            RaidLevel::Raid10 => {
                format!("RAID 10 needs an even number of members, at least 4 (mirrored pairs); got {members}")
            }
            RaidLevel::Raid5 => {
                format!("RAID 5 needs at least 3 members (2 data + parity); got {members}")
            }
            RaidLevel::Raid6 => {
                format!("RAID 6 needs at least 4 members (2 data + P + Q); got {members}")
            }
        })
    }
    fn parities(self) -> usize {
        match self {
            RaidLevel::Raid5 => 1,
            RaidLevel::Raid6 => 2,
            _ => 0,
        }
    }
}

/// How a partial-stripe parity write is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParityStrategy {
    /// Fewer member I/Os wins; a tie goes to read-modify-write.
    Auto,
    ReadModifyWrite,
    ReconstructWrite,
}

/// A write-back cache in host memory in front of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCache {
    pub size_bytes: u64,
    /// Acknowledged data survives a power loss (battery or flash backed), so a flush does not
    /// wait for the members.
    pub plp: bool,
    /// Memory copy rate.
    pub bytes_per_s: u64,
}

/// Everything a RAID set is configured by.
#[derive(Debug, Clone, PartialEq)]
pub struct RaidParams {
    pub level: RaidLevel,
    pub chunk_bytes: u64,
    pub parity: ParityStrategy,
    /// Host CPU time per host I/O (submission, mapping, parity computation).
    pub cpu_per_io_ns: u64,
    pub cpu_threads: u32,
    pub host_cache: Option<HostCache>,
    /// Rate of rebuild and resync.
    pub background_bytes_per_s: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BgKind {
    Rebuild(usize),
    Resync,
}

#[derive(Debug, Clone, Copy)]
struct Background {
    kind: BgKind,
    /// Member bytes done.
    pos: u64,
    next_ns: u64,
    started_ns: u64,
    /// When the previous step's writes complete: a step starts no earlier, so at most one
    /// step's writes are in flight and a member slower than `background_rate` sets the pace
    /// (otherwise its queue would grow without bound and host I/O would wait behind it).
    writes_done_ns: u64,
}

/// A finished rebuild or resync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackgroundDone {
    pub resync: bool,
    pub started_ns: u64,
    pub done_ns: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    host_reads: u64,
    host_writes: u64,
    host_other: u64,
    parity_reads: u64,
    parity_writes: u64,
    full_stripe_writes: u64,
    rmw_rows: u64,
    reconstruct_rows: u64,
    degraded_reads: u64,
    background_bytes: u64,
    cpu_busy_ns: u64,
    cache_wait_ns: u64,
    /// Held partial rows written as they stood (not completed by a later write).
    held_rows_written_partial: u64,
    /// Held rows that later writes completed into full stripes.
    held_rows_completed: u64,
}

/// A row part the host cache holds for a later write to complete (see the module docs):
/// bytes `[a, b)` of row `row`'s data.
#[derive(Debug, Clone, Copy)]
struct HeldRow {
    row: u64,
    a: u64,
    b: u64,
}

/// Partial rows the host cache holds at most (RAID 5/6). Enough for a few sequential
/// streams; random small writes each hold a row briefly and are written as they stand.
pub const HELD_ROWS: usize = 16;

/// One member I/O of a request.
#[derive(Debug, Clone, Copy)]
struct Part {
    member: usize,
    offset: u64,
    len: u64,
    write: bool,
    /// Reads a parity chunk, or writes one.
    parity: bool,
}

/// The largest number of member I/Os one host request may need; a request that would need
/// more is cut into consecutive pieces of whole rows.
const MAX_PARTS: usize = 4096;

/// A RAID set.
pub struct Raid {
    name: String,
    p: RaidParams,
    members: Vec<Box<dyn Component>>,
    member_bytes: u64,
    block_bytes: u64,
    /// Last submission time per member (members are submission-ordered).
    clock_ns: Vec<u64>,
    last_done_ns: Vec<u64>,
    member_reads: Vec<u64>,
    member_writes: Vec<u64>,
    failed: Vec<bool>,
    /// Data content of the host write being split (its parity is taken to compress alike);
    /// 0 for the set's own reads and rebuild writes.
    data_compressible_percent: u8,
    bg: Option<Background>,
    bg_done: Option<BackgroundDone>,
    cpu_free_ns: Vec<u64>,
    /// Host cache: (member completion, bytes) of data not yet on the members.
    cached: VecDeque<(u64, u64)>,
    cached_bytes: u64,
    cached_last_ns: u64,
    /// Partial rows held in the host cache, oldest first (their bytes count in
    /// `cached_bytes`).
    held: VecDeque<HeldRow>,
    reads: Vec<Part>,
    writes: Vec<Part>,
    c: Counters,
}

impl Raid {
    /// A set over `members`; each contributes the largest multiple of the chunk that fits
    /// the smallest member.
    pub fn new(
        name: &str,
        p: RaidParams,
        members: Vec<Box<dyn Component>>,
    ) -> Result<Raid, String> {
        p.level.check_members(members.len())?;
        let block_bytes = members
            .iter()
            .map(|m| m.logical_block_bytes())
            .max()
            .unwrap_or(512);
        if p.chunk_bytes == 0 || !p.chunk_bytes.is_multiple_of(block_bytes) {
            return Err(format!(
                "chunk of {} bytes is not a multiple of the members' {block_bytes}-byte logical block",
                p.chunk_bytes
            ));
        }
        let smallest = members
            .iter()
            .map(|m| m.capacity_bytes())
            .min()
            .unwrap_or(0);
        let member_bytes = smallest / p.chunk_bytes * p.chunk_bytes;
        if member_bytes == 0 {
            return Err(format!(
                "members ({smallest} bytes) are smaller than one chunk"
            ));
        }
        if p.cpu_threads == 0 {
            return Err("cpu_threads must be at least 1".into());
        }
        let n = members.len();
        Ok(Raid {
            name: name.to_string(),
            member_bytes,
            block_bytes,
            clock_ns: vec![0; n],
            last_done_ns: vec![0; n],
            member_reads: vec![0; n],
            member_writes: vec![0; n],
            failed: vec![false; n],
            data_compressible_percent: 0,
            bg: None,
            bg_done: None,
            cpu_free_ns: vec![0; p.cpu_threads as usize],
            cached: VecDeque::with_capacity(256),
            cached_bytes: 0,
            cached_last_ns: 0,
            held: VecDeque::with_capacity(HELD_ROWS + 1),
            reads: Vec::with_capacity(64),
            writes: Vec::with_capacity(64),
            c: Counters::default(),
            members,
            p,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    fn n(&self) -> usize {
        self.members.len()
    }
    fn data_disks(&self) -> usize {
        match self.p.level {
            RaidLevel::Raid0 => self.n(),
            RaidLevel::Raid1 => 1,
            RaidLevel::Raid10 => self.n() / 2,
            RaidLevel::Raid5 => self.n() - 1,
            RaidLevel::Raid6 => self.n() - 2,
        }
    }

    /// Member `i` stops answering: reads of its data are reconstructed from the others.
    pub fn fail_member(&mut self, i: usize) -> Result<(), String> {
        if i >= self.n() {
            return Err(format!("no member {i}; the set has {}", self.n()));
        }
        let tolerated = match self.p.level {
            RaidLevel::Raid0 => 0,
            RaidLevel::Raid1 => self.n() - 1,
            RaidLevel::Raid10 => 1,
            RaidLevel::Raid5 => 1,
            RaidLevel::Raid6 => 2,
        };
        let already = self.failed.iter().filter(|f| **f).count();
        if already + 1 > tolerated {
            return Err(format!(
                "RAID {} of {} members cannot lose {} members",
                self.p.level.number(),
                self.n(),
                already + 1
            ));
        }
        self.failed[i] = true;
        Ok(())
    }

    /// A blank replacement for failed member `i` is inserted at `now_ns`; it is rebuilt in
    /// the background.
    pub fn start_rebuild(&mut self, now_ns: u64, i: usize) -> Result<(), String> {
        if !self.failed.get(i).copied().unwrap_or(false) {
            return Err(format!("member {i} has not failed"));
        }
        self.start_background(now_ns, BgKind::Rebuild(i));
        Ok(())
    }

    /// Power was lost with writes in flight: mirrors and parity may disagree, so the whole
    /// set is resynchronised in the background (a RAID 0 has nothing to resync).
    pub fn unclean_shutdown(&mut self, now_ns: u64) {
        if self.p.level != RaidLevel::Raid0 {
            self.start_background(now_ns, BgKind::Resync);
        }
    }

    fn start_background(&mut self, now_ns: u64, kind: BgKind) {
        self.bg = Some(Background {
            kind,
            pos: 0,
            next_ns: now_ns,
            started_ns: now_ns,
            writes_done_ns: now_ns,
        });
        self.bg_done = None;
    }

    /// The last rebuild or resync, once finished.
    pub fn background_done(&self) -> Option<BackgroundDone> {
        self.bg_done
    }

    /// Progress of a running rebuild or resync (0..1).
    pub fn background_progress(&self) -> Option<f64> {
        self.bg.map(|b| b.pos as f64 / self.member_bytes as f64)
    }

    /// Let background work run until `until_ns` (also done on every submission and idle gap).
    pub fn run_background(&mut self, until_ns: u64) -> Result<(), DeviceError> {
        // Rebuild and resync copies carry no host data content.
        self.data_compressible_percent = 0;
        let mut steps = 0u32;
        while let Some(b) = self.bg {
            if b.next_ns >= until_ns || steps >= 100_000 {
                break;
            }
            steps += 1;
            self.background_step(b)?;
        }
        Ok(())
    }

    fn background_step(&mut self, mut b: Background) -> Result<(), DeviceError> {
        let t = b.next_ns;
        let len = self.p.chunk_bytes.min(self.member_bytes - b.pos);
        let off = b.pos;
        let n = self.n();
        let row = off / self.p.chunk_bytes;
        self.reads.clear();
        self.writes.clear();
        let part = |m: usize, write: bool| Part {
            member: m,
            offset: off,
            len,
            write,
            parity: false,
        };
        match (b.kind, self.p.level) {
            (BgKind::Rebuild(m), RaidLevel::Raid1) => {
                let src = (0..n).find(|&i| i != m && !self.failed[i]).unwrap_or(0);
                self.reads.push(part(src, false));
                self.writes.push(part(m, true));
            }
            (BgKind::Rebuild(m), RaidLevel::Raid10) => {
                self.reads.push(part(m ^ 1, false));
                self.writes.push(part(m, true));
            }
            (BgKind::Rebuild(m), _) => {
                for i in (0..n).filter(|&i| i != m && !self.failed[i]) {
                    self.reads.push(part(i, false));
                }
                self.writes.push(part(m, true));
            }
            (BgKind::Resync, RaidLevel::Raid1) => {
                self.reads.push(part(0, false));
                for i in 1..n {
                    self.writes.push(part(i, true));
                }
            }
            (BgKind::Resync, RaidLevel::Raid10) => {
                for pair in 0..n / 2 {
                    self.reads.push(part(2 * pair, false));
                    self.writes.push(part(2 * pair + 1, true));
                }
            }
            (BgKind::Resync, _) => {
                let (pm, qm) = self.parity_members(row);
                for i in (0..n).filter(|&i| i != pm && Some(i) != qm) {
                    self.reads.push(part(i, false));
                }
                self.writes.push(Part {
                    parity: true,
                    ..part(pm, true)
                });
                if let Some(q) = qm {
                    self.writes.push(Part {
                        parity: true,
                        ..part(q, true)
                    });
                }
            }
        }
        let (reads_done, writes_done) = self.issue(t)?;
        self.c.background_bytes += len;
        b.pos += len;
        b.next_ns = (t + transfer_ns(len, self.p.background_bytes_per_s.max(1)))
            .max(reads_done)
            .max(b.writes_done_ns);
        b.writes_done_ns = writes_done;
        if b.pos >= self.member_bytes {
            if let BgKind::Rebuild(m) = b.kind {
                self.failed[m] = false;
            }
            self.bg_done = Some(BackgroundDone {
                resync: b.kind == BgKind::Resync,
                started_ns: b.started_ns,
                done_ns: writes_done,
            });
            self.bg = None;
        } else {
            self.bg = Some(b);
        }
        Ok(())
    }

    /// Parity members of `row` (RAID 5/6): left-symmetric rotation.
    fn parity_members(&self, row: u64) -> (usize, Option<usize>) {
        let n = self.n() as u64;
        let p = (n - 1 - row % n) as usize;
        let q = (self.p.level == RaidLevel::Raid6).then(|| (p + 1) % self.n());
        (p, q)
    }

    /// Member holding data chunk `idx` of `row` (RAID 5/6).
    fn data_member(&self, row: u64, idx: usize) -> usize {
        let (p, _) = self.parity_members(row);
        (p + self.p.level.parities() + idx) % self.n()
    }

    /// The member is missing for this member offset (failed, or not yet rebuilt there).
    fn missing(&self, m: usize, member_off: u64) -> bool {
        if !self.failed[m] {
            return false;
        }
        match self.bg {
            Some(Background {
                kind: BgKind::Rebuild(r),
                pos,
                ..
            }) if r == m => member_off >= pos,
            _ => true,
        }
    }

    /// Writes go to a member that is present or being rebuilt.
    fn writable(&self, m: usize) -> bool {
        !self.failed[m]
            || matches!(self.bg, Some(Background { kind: BgKind::Rebuild(r), .. }) if r == m)
    }

    fn push(list: &mut Vec<Part>, p: Part) {
        // Merge with a part that ends where this one starts on the same member.
        if let Some(q) = list.iter_mut().rev().take(8).find(|q| {
            q.member == p.member
                && q.write == p.write
                && q.offset + q.len == p.offset
                && q.parity == p.parity
        }) {
            q.len += p.len;
            return;
        }
        list.push(p);
    }

    /// Choose a copy to read from among `copies`: the least busy one present.
    fn pick_copy(&self, copies: impl Iterator<Item = usize>, member_off: u64) -> Option<usize> {
        copies
            .filter(|&m| !self.missing(m, member_off))
            .min_by_key(|&m| (self.last_done_ns[m], self.member_reads[m]))
    }

    /// Plan the member I/Os of a host read or write of `[off, off+len)` into `reads` then
    /// `writes` (writes depend on the reads).
    fn plan(&mut self, kind: IoKind, off: u64, len: u64) {
        let chunk = self.p.chunk_bytes;
        let d = self.data_disks() as u64;
        let row_bytes = chunk * d;
        let end = off + len;
        let mut row = off / row_bytes;
        while row * row_bytes < end {
            let row_start = row * row_bytes;
            let a = off.max(row_start) - row_start;
            let b = end.min(row_start + row_bytes) - row_start;
            self.plan_row(kind, row, a, b);
            row += 1;
        }
    }

    /// Plan `[a, b)` bytes of row `row` (offsets within the row's data).
    fn plan_row(&mut self, kind: IoKind, row: u64, a: u64, b: u64) {
        let chunk = self.p.chunk_bytes;
        let base = row * chunk;
        let write = kind == IoKind::Write;
        let trim = kind == IoKind::Trim;
        let part = |m: usize, s: u64, l: u64, write: bool| Part {
            member: m,
            offset: base + s,
            len: l,
            write,
            parity: false,
        };
        let first = (a / chunk) as usize;
        let last = ((b - 1) / chunk) as usize;
        let span = |idx: usize| {
            let s = (idx as u64 * chunk).max(a) - idx as u64 * chunk;
            let e = ((idx as u64 + 1) * chunk).min(b) - idx as u64 * chunk;
            (s, e - s)
        };
        match self.p.level {
            RaidLevel::Raid0 | RaidLevel::Raid1 | RaidLevel::Raid10 => {
                for idx in first..=last {
                    let (s, l) = span(idx);
                    let copies: (usize, usize) = match self.p.level {
                        RaidLevel::Raid0 => (idx, idx + 1),
                        RaidLevel::Raid1 => (0, self.n()),
                        _ => (2 * idx, 2 * idx + 2),
                    };
                    if write || trim {
                        for m in copies.0..copies.1 {
                            if self.writable(m) {
                                Self::push(&mut self.writes, part(m, s, l, true));
                            }
                        }
                    } else if let Some(m) = self.pick_copy(copies.0..copies.1, base + s) {
                        Self::push(&mut self.reads, part(m, s, l, false));
                    }
                }
            }
            RaidLevel::Raid5 | RaidLevel::Raid6 => {
                self.plan_parity_row(kind, row, first, last, &span)
            }
        }
    }

    fn plan_parity_row(
        &mut self,
        kind: IoKind,
        row: u64,
        first: usize,
        last: usize,
        span: &dyn Fn(usize) -> (u64, u64),
    ) {
        let chunk = self.p.chunk_bytes;
        let base = row * chunk;
        let d = self.data_disks();
        let (pm, qm) = self.parity_members(row);
        let parities: Vec<usize> = std::iter::once(pm).chain(qm).collect();
        let mk = |m: usize, s: u64, l: u64, write: bool, parity: bool| Part {
            member: m,
            offset: base + s,
            len: l,
            write,
            parity,
        };
        if kind != IoKind::Write {
            for idx in first..=last {
                let (s, l) = span(idx);
                let m = self.data_member(row, idx);
                if kind == IoKind::Trim {
                    Self::push(&mut self.writes, mk(m, s, l, true, false));
                } else if !self.missing(m, base + s) {
                    Self::push(&mut self.reads, mk(m, s, l, false, false));
                } else {
                    // Degraded: every other member of the row, data and parity, is read.
                    self.c.degraded_reads += 1;
                    for o in 0..self.n() {
                        if o != m && !self.missing(o, base + s) && Some(o) != qm {
                            Self::push(&mut self.reads, mk(o, s, l, false, o == pm));
                        }
                    }
                }
            }
            return;
        }
        let touched = last - first + 1;
        let pa = (first..=last).map(|i| span(i).0).min().unwrap_or(0);
        let pb = (first..=last)
            .map(|i| span(i).0 + span(i).1)
            .max()
            .unwrap_or(chunk);
        let full = touched == d && pa == 0 && pb == chunk;
        let np = parities.len();
        let degraded = (0..self.n()).any(|m| self.missing(m, base + pa));
        let rmw_ios = 2 * (touched + np);
        let rcw_ios = d - touched + touched + np;
        let use_rmw = !full
            && !degraded
            && match self.p.parity {
                ParityStrategy::Auto => rmw_ios <= rcw_ios,
                ParityStrategy::ReadModifyWrite => true,
                ParityStrategy::ReconstructWrite => false,
            };
        if full {
            self.c.full_stripe_writes += 1;
        } else if use_rmw {
            self.c.rmw_rows += 1;
        } else {
            self.c.reconstruct_rows += 1;
        }
        for idx in first..=last {
            let (s, l) = span(idx);
            let m = self.data_member(row, idx);
            if use_rmw {
                Self::push(&mut self.reads, mk(m, s, l, false, false));
            }
            if self.writable(m) {
                Self::push(&mut self.writes, mk(m, s, l, true, false));
            }
        }
        if !full && !use_rmw {
            for idx in (0..d).filter(|i| !(first..=last).contains(i)) {
                let m = self.data_member(row, idx);
                if !self.missing(m, base + pa) {
                    Self::push(&mut self.reads, mk(m, pa, pb - pa, false, false));
                }
            }
        }
        for &m in &parities {
            if use_rmw {
                Self::push(&mut self.reads, mk(m, pa, pb - pa, false, true));
            }
            if self.writable(m) {
                Self::push(&mut self.writes, mk(m, pa, pb - pa, true, true));
            }
        }
    }

    fn submit_member(&mut self, t: u64, p: Part) -> Result<Completion, DeviceError> {
        let m = p.member;
        let t = t.max(self.clock_ns[m]);
        self.clock_ns[m] = t;
        let req = if p.write {
            IoRequest::write(p.offset, p.len)
                .with_compressible_percent(self.data_compressible_percent)
        } else {
            IoRequest::read(p.offset, p.len)
        };
        let c = self.members[m].submit(t, &req)?;
        self.last_done_ns[m] = self.last_done_ns[m].max(c.done_ns);
        if p.write {
            self.member_writes[m] += 1;
            self.c.parity_writes += u64::from(p.parity);
        } else {
            self.member_reads[m] += 1;
            self.c.parity_reads += u64::from(p.parity);
        }
        Ok(c)
    }

    /// Submit the planned reads then writes at `t`; returns (reads done, all done).
    fn issue(&mut self, t: u64) -> Result<(u64, u64), DeviceError> {
        let mut reads_done = t;
        for i in 0..self.reads.len() {
            let p = self.reads[i];
            reads_done = reads_done.max(self.submit_member(t, p)?.done_ns);
        }
        let mut done = reads_done;
        let shift = reads_done - t;
        for i in 0..self.writes.len() {
            let p = self.writes[i];
            let c = self.submit_member(t, p)?;
            // See the module docs: the write's own duration, after the reads.
            done = done.max(c.done_ns + shift);
        }
        self.reads.clear();
        self.writes.clear();
        Ok((reads_done, done))
    }

    fn check(&self, req: &IoRequest) -> Result<(), DeviceError> {
        req.check_range(self.capacity_bytes(), self.block_bytes)
    }

    /// Room in the host cache for `len` bytes at `t`: when it is there.
    fn cache_admit(&mut self, t: u64, len: u64, size: u64) -> Result<u64, DeviceError> {
        while self.cached.front().is_some_and(|&(d, _)| d <= t) {
            let (_, b) = self.cached.pop_front().unwrap_or((0, 0));
            self.cached_bytes -= b;
        }
        let mut at = t;
        while self.cached_bytes + len > size.max(len) {
            let Some((d, b)) = self.cached.pop_front() else {
                // Only held rows are left: write the oldest to make room.
                if self.held.is_empty() {
                    break;
                }
                self.write_held_oldest(at)?;
                continue;
            };
            at = at.max(d);
            self.cached_bytes -= b;
        }
        Ok(at)
    }

    /// Whether writes go through the held rows: a parity level with a host cache.
    fn holds_rows(&self) -> bool {
        self.p.host_cache.is_some() && matches!(self.p.level, RaidLevel::Raid5 | RaidLevel::Raid6)
    }

    /// Send the planned member I/Os of data the cache holds at `t`: the cache frees its
    /// bytes once they are on the members. Returns when they are.
    fn issue_cached(&mut self, t: u64, bytes: u64) -> Result<u64, DeviceError> {
        let d = self.issue(t)?.1;
        self.cached.push_back((d, bytes));
        self.cached_bytes += bytes;
        self.cached_last_ns = self.cached_last_ns.max(d);
        Ok(d)
    }

    /// Hold `h` in the cache.
    fn hold(&mut self, h: HeldRow) {
        self.held.push_back(h);
        self.cached_bytes += h.b - h.a;
    }

    /// Take held row `i` out of the cache's held list.
    fn unhold(&mut self, i: usize) -> HeldRow {
        let h = self.held.remove(i).expect("a held row");
        self.cached_bytes -= h.b - h.a;
        h
    }

    /// Write the oldest held row as it stands.
    fn write_held_oldest(&mut self, t: u64) -> Result<u64, DeviceError> {
        if self.held.is_empty() {
            return Ok(t);
        }
        let h = self.unhold(0);
        self.c.held_rows_written_partial += 1;
        self.plan_row(IoKind::Write, h.row, h.a, h.b);
        self.issue_cached(t, h.b - h.a)
    }

    /// Write every held row as it stands (flush, idle host).
    fn write_all_held(&mut self, t: u64) -> Result<(), DeviceError> {
        while !self.held.is_empty() {
            self.write_held_oldest(t)?;
        }
        Ok(())
    }

    /// A cached write of `[off, off+len)` at `t` on a parity level: whole rows go to the
    /// members, partial ones join or start held rows (module docs).
    fn write_through_held(&mut self, t: u64, off: u64, len: u64) -> Result<(), DeviceError> {
        let row_bytes = self.p.chunk_bytes * self.data_disks() as u64;
        let end = off + len;
        let (first_row, last_row) = (off / row_bytes, (end - 1) / row_bytes);
        // The rows the write covers whole, with a held part that completes them joined in.
        let mut whole_from = first_row;
        let mut whole_to = last_row + 1;
        let edges = if first_row == last_row { 1 } else { 2 };
        for row in [first_row, last_row].into_iter().take(edges) {
            let row_start = row * row_bytes;
            let a = off.max(row_start) - row_start;
            let b = end.min(row_start + row_bytes) - row_start;
            if a == 0 && b == row_bytes {
                continue;
            }
            let (a, b) = self.join_held(t, row, a, b)?;
            if a == 0 && b == row_bytes {
                continue;
            }
            // Still partial: held, and not one of the whole rows.
            if row == first_row {
                whole_from = row + 1;
            } else {
                whole_to = row;
            }
            if whole_to <= whole_from {
                whole_to = whole_from;
            }
            self.hold(HeldRow { row, a, b });
            if self.held.len() > HELD_ROWS {
                self.write_held_oldest(t)?;
            }
        }
        // Whole rows, in pieces of whole rows so the plan stays bounded (as `submit`); held
        // parts of them (a row first held, then covered whole) are written with them.
        let max_rows = (MAX_PARTS / (2 * self.n())).max(1) as u64;
        let mut row = whole_from;
        while row < whole_to {
            let next = (row + max_rows).min(whole_to);
            for r in row..next {
                if let Some(i) = self.held.iter().position(|h| h.row == r) {
                    self.unhold(i);
                }
            }
            self.plan(IoKind::Write, row * row_bytes, (next - row) * row_bytes);
            self.issue_cached(t, (next - row) * row_bytes)?;
            row = next;
        }
        Ok(())
    }

    /// Bytes `[a, b)` of `row` are written at `t`: a held part of the row that they continue
    /// joins them (taken out of the held list); one they do not continue is written first,
    /// as it stands. Returns the part to write or hold.
    fn join_held(&mut self, t: u64, row: u64, a: u64, b: u64) -> Result<(u64, u64), DeviceError> {
        let Some(i) = self.held.iter().position(|h| h.row == row) else {
            return Ok((a, b));
        };
        let h = self.unhold(i);
        if a <= h.b && h.a <= b {
            let (a, b) = (a.min(h.a), b.max(h.b));
            let row_bytes = self.p.chunk_bytes * self.data_disks() as u64;
            if a == 0 && b == row_bytes {
                self.c.held_rows_completed += 1;
            }
            return Ok((a, b));
        }
        self.c.held_rows_written_partial += 1;
        self.plan_row(IoKind::Write, row, h.a, h.b);
        self.issue_cached(t, h.b - h.a)?;
        Ok((a, b))
    }
}

impl BlockDevice for Raid {
    fn capacity_bytes(&self) -> u64 {
        self.member_bytes * self.data_disks() as u64
    }
    fn logical_block_bytes(&self) -> u64 {
        self.block_bytes
    }

    fn compresses_data(&self) -> bool {
        self.members.iter().any(|m| m.compresses_data())
    }

    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        self.check(req)?;
        self.run_background(now_ns)?;
        self.data_compressible_percent = req.compressible_percent;
        // CPU: the least busy thread runs the request's mapping and parity.
        let th = (0..self.cpu_free_ns.len())
            .min_by_key(|&i| self.cpu_free_ns[i])
            .unwrap_or(0);
        let start = now_ns.max(self.cpu_free_ns[th]);
        let t = start + self.p.cpu_per_io_ns;
        self.cpu_free_ns[th] = t;
        self.c.cpu_busy_ns += self.p.cpu_per_io_ns;
        let accepted = start;
        let done = match req.kind {
            IoKind::Flush => {
                self.c.host_other += 1;
                self.write_all_held(t)?;
                let mut d = t;
                for m in 0..self.n() {
                    if self.failed[m] {
                        continue;
                    }
                    let tm = t.max(self.clock_ns[m]);
                    self.clock_ns[m] = tm;
                    d = d.max(self.members[m].submit(tm, req)?.done_ns);
                }
                match self.p.host_cache {
                    Some(hc) if !hc.plp => d.max(self.cached_last_ns),
                    _ => d,
                }
            }
            IoKind::Read | IoKind::Trim | IoKind::Write => {
                match req.kind {
                    IoKind::Read => self.c.host_reads += 1,
                    IoKind::Write => self.c.host_writes += 1,
                    _ => self.c.host_other += 1,
                }
                let (t_members, ack) = match (req.kind, self.p.host_cache) {
                    (IoKind::Write, Some(hc)) => {
                        let at = self.cache_admit(t, req.len_bytes, hc.size_bytes)?;
                        self.c.cache_wait_ns += at - t;
                        (
                            at,
                            Some(at + transfer_ns(req.len_bytes, hc.bytes_per_s.max(1))),
                        )
                    }
                    _ => (t, None),
                };
                if ack.is_some() && self.holds_rows() {
                    self.write_through_held(t_members, req.offset_bytes, req.len_bytes)?;
                    return Ok(Completion {
                        accepted_ns: accepted,
                        done_ns: ack.unwrap_or(t_members),
                    });
                }
                if req.kind == IoKind::Trim {
                    // A trim must not overtake held data of the same blocks.
                    self.write_all_held(t_members)?;
                }
                // Cut very large requests into pieces of whole rows so the plan stays bounded.
                let row_bytes = self.p.chunk_bytes * self.data_disks() as u64;
                let max_rows = (MAX_PARTS / (2 * self.n())).max(1) as u64;
                let piece = row_bytes * max_rows;
                let mut off = req.offset_bytes;
                let end = req.offset_bytes + req.len_bytes;
                let mut d = t_members;
                while off < end {
                    let next = ((off / piece + 1) * piece).min(end);
                    self.plan(req.kind, off, next - off);
                    d = d.max(self.issue(t_members)?.1);
                    off = next;
                }
                match ack {
                    Some(a) => {
                        self.cached.push_back((d, req.len_bytes));
                        self.cached_bytes += req.len_bytes;
                        self.cached_last_ns = self.cached_last_ns.max(d);
                        a
                    }
                    None => d,
                }
            }
        };
        Ok(Completion {
            accepted_ns: accepted,
            done_ns: done,
        })
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        // The host went idle: held rows are written as they stand (md writes delayed
        // stripes out once nothing else is queued). A member error shows up on the next
        // host request, as for background work.
        let _ = self.write_all_held(from_ns);
        let _ = self.run_background(until_ns);
        for m in 0..self.n() {
            let f = from_ns.max(self.clock_ns[m]);
            if f < until_ns {
                self.members[m].idle(f, until_ns);
            }
        }
    }
}

impl Component for Raid {
    fn counters_json(&self) -> serde_json::Value {
        let c = &self.c;
        json!({
            "name": self.name,
            "kind": "raid",
            "level": self.p.level.number(),
            "members": self.n(),
            "chunk_bytes": self.p.chunk_bytes,
            "capacity_bytes": self.capacity_bytes(),
            "host_reads": c.host_reads,
            "host_writes": c.host_writes,
            "host_other": c.host_other,
            "member_reads": self.member_reads,
            "member_writes": self.member_writes,
            "member_ios": self.member_reads.iter().sum::<u64>() + self.member_writes.iter().sum::<u64>(),
            "parity_reads": c.parity_reads,
            "parity_writes": c.parity_writes,
            "full_stripe_writes": c.full_stripe_writes,
            "read_modify_write_rows": c.rmw_rows,
            "reconstruct_write_rows": c.reconstruct_rows,
            "degraded_reads": c.degraded_reads,
            "failed_members": self.failed.iter().enumerate().filter(|(_, f)| **f).map(|(i, _)| i).collect::<Vec<_>>(),
            "background_bytes": c.background_bytes,
            "background_progress": self.background_progress(),
            "background_done": self.bg_done.map(|b| json!({
                "kind": if b.resync { "resync" } else { "rebuild" },
                "started_ns": b.started_ns,
                "done_ns": b.done_ns,
                "duration_ns": b.done_ns - b.started_ns,
            })),
            "cpu_busy_ns": c.cpu_busy_ns,
            "host_cache_wait_ns": c.cache_wait_ns,
            "held_rows_completed": c.held_rows_completed,
            "held_rows_written_partial": c.held_rows_written_partial,
            "children": self.members.iter().map(|m| m.counters_json()).collect::<Vec<_>>(),
        })
    }

    fn raid_mut(&mut self, name: &str) -> Option<&mut Raid> {
        if self.name == name {
            return Some(self);
        }
        self.members.iter_mut().find_map(|m| m.raid_mut(name))
    }

    /// Every member erased; data held in the host cache is dropped with it.
    fn format(&mut self, at_ns: u64) {
        for (i, m) in self.members.iter_mut().enumerate() {
            m.format(at_ns.max(self.clock_ns[i]));
        }
        self.cached.clear();
        self.cached_bytes = 0;
        self.held.clear();
    }

    fn links(&self, out: &mut Vec<serde_json::Value>) {
        for m in &self.members {
            m.links(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Null(u64);
    impl BlockDevice for Null {
        fn capacity_bytes(&self) -> u64 {
            self.0
        }
        fn submit(&mut self, now_ns: SimTime, _: &IoRequest) -> Result<Completion, DeviceError> {
            Ok(Completion {
                accepted_ns: now_ns,
                done_ns: now_ns + 1_000,
            })
        }
    }
    impl Component for Null {
        fn counters_json(&self) -> serde_json::Value {
            json!({})
        }
    }

    fn raid(level: RaidLevel, n: usize) -> Raid {
        let p = RaidParams {
            level,
            chunk_bytes: 4096,
            parity: ParityStrategy::Auto,
            cpu_per_io_ns: 0,
            cpu_threads: 1,
            host_cache: None,
            background_bytes_per_s: 1 << 30,
        };
        let members = (0..n)
            .map(|_| Box::new(Null(1 << 20)) as Box<dyn Component>)
            .collect();
        Raid::new("r", p, members).unwrap()
    }

    #[test]
    fn parity_rotates_left_symmetric_and_data_follows_it() {
        let r = raid(RaidLevel::Raid5, 4);
        // Row 0: P on member 3, data 0, 1, 2; row 1: P on 2, data 3, 0, 1.
        assert_eq!(r.parity_members(0), (3, None));
        assert_eq!(
            (0..3).map(|i| r.data_member(0, i)).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(r.parity_members(1), (2, None));
        assert_eq!(
            (0..3).map(|i| r.data_member(1, i)).collect::<Vec<_>>(),
            [3, 0, 1]
        );
        let r6 = raid(RaidLevel::Raid6, 5);
        assert_eq!(r6.parity_members(0), (4, Some(0)));
        assert_eq!(
            (0..3).map(|i| r6.data_member(0, i)).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(r6.capacity_bytes(), 3 << 20);
    }

    #[test]
    fn write_strategy_follows_io_count() {
        // 6 data disks: one chunk touched, RMW needs 4 I/Os, reconstruct 7.
        let mut r = raid(RaidLevel::Raid5, 7);
        r.plan(IoKind::Write, 0, 4096);
        assert_eq!((r.reads.len(), r.writes.len()), (2, 2));
        r.reads.clear();
        r.writes.clear();
        // Five of six touched: reconstruct reads the one untouched chunk.
        r.plan(IoKind::Write, 0, 5 * 4096);
        assert_eq!((r.reads.len(), r.writes.len()), (1, 6));
        assert_eq!(r.c.rmw_rows, 1);
        assert_eq!(r.c.reconstruct_rows, 1);
    }

    #[test]
    fn member_counts_are_checked_per_level() {
        assert!(RaidLevel::Raid5.check_members(2).is_err());
        assert!(RaidLevel::Raid6.check_members(3).is_err());
        assert!(RaidLevel::Raid10.check_members(5).is_err());
        assert!(RaidLevel::Raid10.check_members(4).is_ok());
        assert!(RaidLevel::Raid1.check_members(1).is_err());
    }
}
