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

mod background;
mod held;
mod plan;

use std::collections::VecDeque;

use flashlab_engine::time::transfer_ns;
use flashlab_engine::{BlockDevice, Completion, DeviceError, IoKind, IoRequest, SimTime};

use crate::counters::{with_fields, BackgroundDoneCounters, CacheCounters, RaidCounters};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum BgKind {
    Rebuild(usize),
    #[default]
    Resync,
}

impl flashlab_engine::State for BgKind {
    fn save(&self, w: &mut flashlab_engine::StateWriter<'_>) {
        match self {
            BgKind::Rebuild(member) => {
                w.put_u8(0);
                w.put_u64(*member as u64);
            }
            BgKind::Resync => w.put_u8(1),
        }
    }
    fn load(
        &mut self,
        r: &mut flashlab_engine::StateReader<'_>,
    ) -> Result<(), flashlab_engine::StateError> {
        *self = match r.get_u8()? {
            0 => {
                let mut member = 0usize;
                member.load(r)?;
                BgKind::Rebuild(member)
            }
            1 => BgKind::Resync,
            b => {
                return Err(flashlab_engine::StateError::Corrupt {
                    what: format!("{b} is not a RAID background task (0 rebuild, 1 resync)"),
                })
            }
        };
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, Default)]
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

flashlab_engine::impl_state!(default Background {
    kind, pos, next_ns, started_ns, writes_done_ns
});

/// A finished rebuild or resync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BackgroundDone {
    pub resync: bool,
    pub started_ns: u64,
    pub done_ns: u64,
}

flashlab_engine::impl_state!(default BackgroundDone { resync, started_ns, done_ns });

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

flashlab_engine::impl_state!(Counters {
    host_reads,
    host_writes,
    host_other,
    parity_reads,
    parity_writes,
    full_stripe_writes,
    rmw_rows,
    reconstruct_rows,
    degraded_reads,
    background_bytes,
    cpu_busy_ns,
    cache_wait_ns,
    held_rows_written_partial,
    held_rows_completed,
});

/// A row part the host cache holds for a later write to complete (see the module docs):
/// bytes `[a, b)` of row `row`'s data.
#[derive(Debug, Clone, Copy, Default)]
struct HeldRow {
    row: u64,
    a: u64,
    b: u64,
}

flashlab_engine::impl_state!(HeldRow { row, a, b });

/// Partial rows the host cache holds at most (RAID 5/6). Enough for a few sequential
/// streams; random small writes each hold a row briefly and are written as they stand.
pub const HELD_ROWS: usize = 16;

/// One member I/O of a request.
#[derive(Debug, Clone, Copy, Default)]
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

// Members (each saves its own state), per-member clocks, background work, host cache and
// counters. The member list is sized by the configuration; the parts lists are scratch.
impl flashlab_engine::State for Raid {
    fn save(&self, w: &mut flashlab_engine::StateWriter<'_>) {
        let Raid {
            name: _,
            p: _,
            members,
            member_bytes: _,
            block_bytes: _,
            clock_ns,
            last_done_ns,
            member_reads,
            member_writes,
            failed,
            data_compressible_percent,
            bg,
            bg_done,
            cpu_free_ns,
            cached,
            cached_bytes,
            cached_last_ns,
            held,
            reads: _,
            writes: _,
            c,
        } = self;
        w.put_len(members.len());
        for m in members {
            m.save(w);
        }
        clock_ns.save(w);
        last_done_ns.save(w);
        member_reads.save(w);
        member_writes.save(w);
        failed.save(w);
        data_compressible_percent.save(w);
        bg.save(w);
        bg_done.save(w);
        cpu_free_ns.save(w);
        cached.save(w);
        cached_bytes.save(w);
        cached_last_ns.save(w);
        held.save(w);
        c.save(w);
    }
    fn load(
        &mut self,
        r: &mut flashlab_engine::StateReader<'_>,
    ) -> Result<(), flashlab_engine::StateError> {
        let Raid {
            name: _,
            p: _,
            members,
            member_bytes: _,
            block_bytes: _,
            clock_ns,
            last_done_ns,
            member_reads,
            member_writes,
            failed,
            data_compressible_percent,
            bg,
            bg_done,
            cpu_free_ns,
            cached,
            cached_bytes,
            cached_last_ns,
            held,
            reads: _,
            writes: _,
            c,
        } = self;
        r.len_exactly(1, members.len())?;
        for m in members {
            m.load(r)?;
        }
        clock_ns.load(r)?;
        last_done_ns.load(r)?;
        member_reads.load(r)?;
        member_writes.load(r)?;
        failed.load(r)?;
        data_compressible_percent.load(r)?;
        bg.load(r)?;
        bg_done.load(r)?;
        cpu_free_ns.load(r)?;
        cached.load(r)?;
        cached_bytes.load(r)?;
        cached_last_ns.load(r)?;
        held.load(r)?;
        c.load(r)?;
        self.check_loaded().map_err(|what| {
            flashlab_engine::StateError::corrupt(format!("RAID set '{}': {what}", self.name))
        })
    }
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

    /// A loaded set is one its runs could have left: a clock, counter and failure flag per
    /// member and a free time per CPU thread; no more members failed than the level
    /// survives; a rebuild of a failed member within the members' bytes; times before
    /// 2^62 ns; the host cache's bytes those of its pending writes and held rows, held
    /// rows distinct partial rows of the set, none without a host cache.
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let n = self.n();
        let tables = [
            ("member clocks", self.clock_ns.len(), n),
            ("member completions", self.last_done_ns.len(), n),
            ("member reads", self.member_reads.len(), n),
            ("member writes", self.member_writes.len(), n),
            ("failed members", self.failed.len(), n),
            (
                "CPU threads",
                self.cpu_free_ns.len(),
                self.p.cpu_threads as usize,
            ),
        ];
        if let Some((what, got, want)) = tables.iter().find(|(_, got, want)| got != want) {
            return Err(format!("{got} {what} where this configuration has {want}"));
        }
        let failed = self.failed.iter().filter(|f| **f).count();
        let tolerated = match self.p.level {
            RaidLevel::Raid0 => 0,
            RaidLevel::Raid1 => n - 1,
            RaidLevel::Raid10 => 1,
            RaidLevel::Raid5 => 1,
            RaidLevel::Raid6 => 2,
        };
        if failed > tolerated {
            return Err(format!(
                "{failed} failed members (valid: at most {tolerated} for RAID {})",
                self.p.level.number()
            ));
        }
        let times = self
            .clock_ns
            .iter()
            .chain(&self.last_done_ns)
            .chain(&self.cpu_free_ns)
            .chain(self.cached.iter().map(|(t, _)| t))
            .chain([&self.cached_last_ns]);
        if let Some(t) = times.copied().find(|&t| t > limit) {
            return Err(format!("a time of {t} ns (valid: before 2^62 ns)"));
        }
        if let Some(b) = &self.bg {
            let member_ok = match b.kind {
                BgKind::Rebuild(m) => m < n && self.failed[m],
                BgKind::Resync => self.p.level != RaidLevel::Raid0,
            };
            let latest = b.next_ns.max(b.started_ns).max(b.writes_done_ns);
            if !member_ok || b.pos > self.member_bytes || latest > limit {
                return Err(format!(
                    "a {:?} at byte {} of {} by {} ns (valid: a rebuild of a failed member or a resync of a redundant level, within the members' bytes, before 2^62 ns)",
                    b.kind, b.pos, self.member_bytes, latest
                ));
            }
        }
        if self.data_compressible_percent > 100 {
            return Err(format!(
                "data {}% compressible (valid: 0 to 100)",
                self.data_compressible_percent
            ));
        }
        let rows = self.member_bytes / self.p.chunk_bytes;
        let row_bytes = self.p.chunk_bytes * self.data_disks() as u64;
        let mut held_bytes = 0u64;
        for (i, h) in self.held.iter().enumerate() {
            if h.row >= rows
                || h.a >= h.b
                || h.b > row_bytes
                || self.held.iter().take(i).any(|o| o.row == h.row)
            {
                return Err(format!(
                    "a held row {} of bytes {} to {} (valid: one entry per row below {rows}, bytes within its {row_bytes})",
                    h.row, h.a, h.b
                ));
            }
            held_bytes += h.b - h.a;
        }
        let pending = self
            .cached
            .iter()
            .try_fold(held_bytes, |sum, &(_, b)| sum.checked_add(b));
        let cache_ok = self.p.host_cache.is_some()
            || (self.cached.is_empty() && self.held.is_empty() && self.cached_bytes == 0);
        if pending != Some(self.cached_bytes) || self.held.len() > HELD_ROWS || !cache_ok {
            return Err(format!(
                "a host cache holding {} bytes where its {} pending writes and {} held rows hold {pending:?} (valid: the same, at most {HELD_ROWS} held rows, none without a host cache)",
                self.cached_bytes,
                self.cached.len(),
                self.held.len()
            ));
        }
        Ok(())
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
    fn check(&self, req: &IoRequest) -> Result<(), DeviceError> {
        req.check_range(self.capacity_bytes(), self.block_bytes)
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

    // Which member a request reaches, and for parity what it reads first, is decided at
    // submission: no hint is passed on.
    fn prefetch(&self, _req: &IoRequest, _stage: flashlab_engine::PrefetchStage) {}
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

impl Raid {
    /// This set's counters (its members' are theirs).
    pub fn counters(&self) -> RaidCounters {
        let c = &self.c;
        RaidCounters {
            name: self.name.clone(),
            kind: "raid",
            level: self.p.level.number(),
            members: self.n(),
            chunk_bytes: self.p.chunk_bytes,
            capacity_bytes: self.capacity_bytes(),
            host_reads: c.host_reads,
            host_writes: c.host_writes,
            host_other: c.host_other,
            member_reads: self.member_reads.clone(),
            member_writes: self.member_writes.clone(),
            member_ios: self.member_reads.iter().sum::<u64>()
                + self.member_writes.iter().sum::<u64>(),
            parity_reads: c.parity_reads,
            parity_writes: c.parity_writes,
            full_stripe_writes: c.full_stripe_writes,
            read_modify_write_rows: c.rmw_rows,
            reconstruct_write_rows: c.reconstruct_rows,
            degraded_reads: c.degraded_reads,
            failed_members: self
                .failed
                .iter()
                .enumerate()
                .filter(|(_, f)| **f)
                .map(|(i, _)| i)
                .collect(),
            background_bytes: c.background_bytes,
            background_progress: self.background_progress(),
            background_done: self.bg_done.map(|b| BackgroundDoneCounters {
                kind: if b.resync { "resync" } else { "rebuild" },
                started_ns: b.started_ns,
                done_ns: b.done_ns,
                duration_ns: b.done_ns - b.started_ns,
            }),
            cpu_busy_ns: c.cpu_busy_ns,
            host_cache_wait_ns: c.cache_wait_ns,
            held_rows_completed: c.held_rows_completed,
            held_rows_written_partial: c.held_rows_written_partial,
        }
    }
}

impl Component for Raid {
    fn counters_json(&self) -> serde_json::Value {
        let children = self.members.iter().map(|m| m.counters_json()).collect();
        with_fields(
            &self.counters(),
            [("children", serde_json::Value::Array(children))],
        )
    }

    fn raid_counters(&self) -> Option<RaidCounters> {
        Some(self.counters())
    }

    fn cache_counters(&self, out: &mut Vec<CacheCounters>) {
        for m in &self.members {
            m.cache_counters(out);
        }
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

    use crate::test_devices::{Forge, Null};

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

    /// A RAID 5 set of four with a host cache after partial-row writes (rows held) and a
    /// rebuild under way.
    fn busy_raid() -> Raid {
        let mut r = raid(RaidLevel::Raid5, 4);
        r.p.host_cache = Some(HostCache {
            size_bytes: 1 << 20,
            plp: false,
            bytes_per_s: 1 << 30,
        });
        r.fail_member(2).unwrap();
        r.start_rebuild(0, 2).unwrap();
        for i in 0..6u64 {
            r.submit(i * 100, &IoRequest::write(i * 3 * 4096 * 3, 4096))
                .unwrap();
        }
        r
    }

    /// A forged state of a RAID set is refused at load (naming the set): more failed
    /// members than the level survives, a rebuild of a member that is not failed or past
    /// the set, a table of another length, a host cache whose bytes disagree with what it
    /// holds, a row held twice, a time past 2^62 ns. A real set loads and runs.
    #[test]
    fn forged_raid_sets_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let fresh = || {
            let mut r = busy_raid();
            r.format(0);
            r
        };
        let mut ok = fresh();
        reload_into(&busy_raid(), &mut ok).unwrap();
        assert!(!ok.held.is_empty() && ok.bg.is_some());
        ok.submit(10_000, &IoRequest::write(0, 3 * 4096)).unwrap();
        let cases: [Forge<Raid>; 7] = [
            ("2 failed members", &|f| f.failed[0] = true),
            ("Rebuild(7)", &|f| {
                f.bg.as_mut().unwrap().kind = BgKind::Rebuild(7)
            }),
            ("Rebuild(1)", &|f| {
                f.bg.as_mut().unwrap().kind = BgKind::Rebuild(1)
            }),
            ("5 member clocks where this configuration has 4", &|f| {
                f.clock_ns.push(0)
            }),
            ("host cache holding", &|f| f.cached_bytes += 1),
            ("held row", &|f| {
                let h = f.held[0];
                f.held.push_back(h);
                f.cached_bytes += h.b - h.a;
            }),
            ("a time of", &|f| f.cpu_free_ns[0] = u64::MAX),
        ];
        for (want, forge) in cases {
            let mut forged = busy_raid();
            forge(&mut forged);
            let e = reload_into(&forged, &mut fresh()).unwrap_err().to_string();
            assert!(
                e.contains("RAID set 'r'") && e.contains(want),
                "{want}: {e}"
            );
        }
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
