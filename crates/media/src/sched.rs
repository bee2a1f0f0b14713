//! Die scheduling that can reorder: read priority and program/erase suspend.
//!
//! Without these features a die (or plane) is a single busy-until time (see `timing`). With
//! them, each unit keeps the array operations reserved on it that have not finished yet, in
//! time order, so that a read can be placed
//! - before programs and erases that are queued but have not started (read priority): it goes
//!   after the operation running when it arrives and after reads already waiting, and the
//!   queued work behind it moves later by the time the read takes;
//! - inside a program or erase that is running (suspend): the operation stops after the
//!   suspend latency, the read runs, and the rest of the operation resumes afterwards with a
//!   resume overhead. An operation is suspended at most `max_suspends_per_op` times, and a
//!   resumed one runs for at least its array time over `max_suspends_per_op` before it is
//!   suspended again (firmware guarantees the operation progress rather than letting the
//!   first reads use every suspension): a read waits for that much of it at most, where a
//!   bare count let the reads after the last suspension wait for the whole rest of a 10 ms
//!   QLC erase. Reads arriving while an operation is suspended join the reads already
//!   served in that suspension (no second suspend). With `suspend_budget`, the time an
//!   operation's suspensions add to it must also fit the idle time its unit had before it:
//!   a die that programs back to back (the write rate near what it can program) keeps
//!   programming, and its reads wait for the program running.
//!
//! Work moved later keeps the completion time it was given when it was scheduled: the model
//! answers each submission once and does not revisit earlier answers. The die's occupancy is
//! exact (everything after an inserted read moves), so throughput, queueing and the tail of
//! later operations are right; only the buffer release of a program that a read overtook
//! comes a read time early.
//!
//! Without read priority a die is still no unbounded FIFO: firmware sends each die at most
//! a few operations ahead of the one it runs ([`FIRMWARE_AHEAD_OPS`]) and keeps the rest in
//! its own queues, from which a host read goes to the die as soon as it arrives. A read so
//! waits for the running operation and those already sent, never for the whole backlog of
//! programs a write buffer can hold (hundreds of milliseconds on a large drive).
//!
//! Host reads go before internal reads (garbage collection, folding) that are waiting: the
//! FTL hands over a whole victim's reads at once, and a host read queued behind them would
//! wait for all of them.
//!
//! Each unit keeps at most [`QUEUE_CAP`] entries in a ring; beyond that, two neighbours of
//! the same kind merge (the latest such pair with no idle time between them, else the latest
//! such pair, else the last two), so a long run of queued programs or internal reads becomes
//! one longer entry whose operations a read can still tell apart. Nothing allocates after
//! construction.
//!
//! A unit's entries stay in the slots they were put in; a ring of slot numbers gives their
//! order, so placing a read or merging a pair moves bytes of it rather than entries. An
//! entry holds its time as the idle time before it and its length: a read's push of later
//! work changes only the idle times that absorb it (found with a bit mask of the entries
//! that have idle time before them), not each entry that follows on at once. The ends of
//! the entries before the last one placed are kept beside them (work placed at a position
//! moves only what follows it), so a read finds the first entry not over by its time with a
//! binary search. Bit masks by position hold each entry's kind: a read finds the end of the
//! reads waiting ahead of it, and a merge the latest pair of one kind with no idle time
//! between them, with one count of zeros.

use flashlab_engine::state::{State, StateError, StateReader, StateWriter};

/// Unfinished array operations kept per unit.
pub const QUEUE_CAP: usize = 64;

/// Operations a controller has sent to a die beyond the one running: a read arriving
/// without read priority waits for these and no more. Flash controllers keep a short
/// command queue per die (a cache program or read needs one command queued behind the
/// running one, and firmware issues the next as each completes); two is an estimate.
pub const FIRMWARE_AHEAD_OPS: u32 = 2;

/// How a die orders its work. All off: first come, first served, no suspension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedulerConfig {
    /// Reads go before queued (not yet started) programs and erases on their die.
    pub read_priority: bool,
    /// A read arriving during a program suspends it.
    pub program_suspend: bool,
    /// A read arriving during an erase suspends it.
    pub erase_suspend: bool,
    /// From the suspend command until the die can read.
    pub suspend_latency_ns: u64,
    /// Extra array time a resumed operation needs (it redoes part of a step).
    pub resume_overhead_ns: u64,
    /// Suspensions of one operation at most; further reads wait for it.
    pub max_suspends_per_op: u32,
    /// A program stops only at the end of a step (an ISPP pulse and its verify): the steps
    /// fall every this much from the start of the program (0: anywhere).
    pub program_suspend_step_ns: u64,
    /// An erase stops only at the end of a step (an erase pulse and its verify), every
    /// this much from its start (0: anywhere).
    pub erase_suspend_step_ns: u64,
    /// Suspensions of a program or erase fit its die's slack: the time they add to it (each
    /// read and resume overhead) stays within the idle time the die had before the
    /// operation started. A die that runs its programs back to back has none, and its
    /// reads wait for the operation running.
    pub suspend_budget: bool,
}

/// What a host read waited for before its die read it, by cause (index into
/// [`WAIT_CAUSES`]): the wait is split among the work ahead of it, so the parts add up to
/// its whole wait.
pub mod wait {
    /// Host reads ahead of it on its die (running, queued, or served in the same
    /// suspension).
    pub const HOST_READS: usize = 0;
    /// Internal reads (garbage collection, folding, wear levelling) running or ahead.
    pub const INTERNAL_READS: usize = 1;
    /// Programs it did not suspend (suspend off, the operation at its cap of suspensions or
    /// out of its die's slack, or sent to the die ahead of it).
    pub const PROGRAMS: usize = 2;
    /// Erases it did not suspend.
    pub const ERASES: usize = 3;
    /// A program or erase running on to its suspension for a read that came earlier.
    pub const SUSPENDING: usize = 4;
    /// Its own suspension: a resumed operation's progress before it may stop again and the
    /// end of the step running.
    pub const SUSPEND_STEP: usize = 5;
    /// Its own suspension: the suspend latency.
    pub const SUSPEND_LATENCY: usize = 6;
    /// A die without a reordering scheduler: work of any kind booked ahead of it.
    pub const DIE_BUSY: usize = 7;
    /// The channel, after its array read: other transfers booked on it.
    pub const CHANNEL: usize = 8;
    /// The power cap's budget (every operation waits for it alike).
    pub const POWER_CAP: usize = 9;
}

/// Names of the wait causes, as the device's counters report them.
pub const WAIT_CAUSES: [&str; 10] = [
    "host_reads",
    "internal_reads",
    "programs",
    "erases",
    "suspending",
    "suspend_step",
    "suspend_latency",
    "die_busy",
    "channel",
    "power_cap",
];

/// Waits of one read by cause (ns).
pub type Waits = [u64; WAIT_CAUSES.len()];

impl SchedulerConfig {
    /// Whether dies need their queues (anything but plain FIFO).
    pub fn reorders(&self) -> bool {
        self.read_priority || self.program_suspend || self.erase_suspend
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A host read.
    Read,
    /// A read for garbage collection, folding or wear levelling.
    InternalRead,
    Program,
    Erase,
    /// The part of a program or erase before its suspension point: not suspendable again.
    Suspending,
}

flashlab_engine::impl_state_enum!(Kind {
    Read,
    InternalRead,
    Program,
    Erase,
    Suspending
});

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub start_ns: u64,
    pub end_ns: u64,
    pub kind: Kind,
    pub suspends: u32,
    /// Operations merged into this entry (1 unless the ring overflowed).
    pub ops: u32,
    /// Least time a resumed program or erase runs before its next suspension: its array
    /// time over `max_suspends_per_op`.
    pub quantum_ns: u32,
    /// Idle time of the unit before a program or erase started (the end of the unit's
    /// previous work to its start; `u32::MAX` ns at most): what its suspensions may add
    /// to it under `suspend_budget`.
    pub slack_ns: u32,
}

flashlab_engine::impl_state!(Entry {
    start_ns,
    end_ns,
    kind,
    suspends,
    ops,
    quantum_ns,
    slack_ns
});

impl Default for Entry {
    fn default() -> Self {
        EMPTY
    }
}

const EMPTY: Entry = Entry {
    start_ns: 0,
    end_ns: 0,
    kind: Kind::Read,
    suspends: 0,
    ops: 1,
    quantum_ns: 0,
    slack_ns: 0,
};

/// What placing a read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadPlacement {
    pub start_ns: u64,
    /// Kind of the operation suspended for it, if any.
    pub suspended: Option<Kind>,
    /// What it waited for from `earliest_ns` to `start_ns`, by cause.
    pub waits: Waits,
}

/// An entry as its ring keeps it: its place in time as the idle time before it and its
/// length, so that work moved later changes only the idle time that absorbs the move, and
/// the entries in a run that follows on at once are not touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    /// Idle time from the end of the entry before it (0 for the first entry: the ring's
    /// `start_ns` is its start).
    gap_ns: u64,
    dur_ns: u64,
    /// The entry's end, while the slot's position is below the ring's `settled`: the
    /// ends rise, so the first entry not over by a time is a binary search among them.
    end_ns: u64,
    ops: u32,
    quantum_ns: u32,
    slack_ns: u32,
    /// Suspensions so far (`max_suspends_per_op` is at most 255, as the configuration
    /// bounds it).
    suspends: u16,
    kind: Kind,
}

const EMPTY_SLOT: Slot = Slot {
    gap_ns: 0,
    dur_ns: 0,
    end_ns: 0,
    ops: 1,
    quantum_ns: 0,
    slack_ns: 0,
    suspends: 0,
    kind: Kind::Read,
};

/// Index of the mask of entries with idle time before them, after the three kind masks.
const GAPPED: usize = 3;

/// The kind masks' bits for `kind`: a host read stops at mask 0 (anything but a host read),
/// an internal read at masks 1 or 2 (programs, erases, suspending operations), and two
/// neighbours are of one kind where all three agree.
#[inline]
fn kind_bits(kind: Kind) -> [bool; 3] {
    match kind {
        Kind::Read => [false, false, false],
        Kind::InternalRead => [true, false, false],
        Kind::Program => [true, true, false],
        Kind::Erase => [true, true, true],
        Kind::Suspending => [true, false, true],
    }
}

/// One unit's unfinished operations: `QUEUE_CAP` slots that stay where they are put, in
/// time order through a ring of slot numbers (a placed read or a merge moves bytes of
/// `order`, not entries).
#[derive(Debug, Clone)]
struct Ring {
    slots: [Slot; QUEUE_CAP],
    /// From `head` on, the slot of each position.
    order: [u8; QUEUE_CAP],
    /// Bit `s` set where slot `s` holds no entry.
    free: u64,
    /// Start of the entry at position 0 and end of the last (while the ring holds any).
    start_ns: u64,
    end_ns: u64,
    /// Bit `i` of each for the entry at position `i` from the head: its kind (three masks,
    /// [`kind_bits`]) and, at [`GAPPED`], whether it has idle time before it. A read finds
    /// the end of the reads waiting ahead of it from the kinds in one step, the pair that
    /// merges is the highest bit where neighbours agree in kind and no time lies between
    /// them, and a push finds the idle time that absorbs it without looking at the
    /// entries that follow on at once.
    masks: [u64; 4],
    head: u8,
    len: u8,
    /// Positions below this hold their entry's end (`Slot::end_ns`). Work placed at a
    /// position moves only the entries after it, so those before it keep their ends.
    settled: u8,
}

const EMPTY_RING: Ring = Ring {
    slots: [EMPTY_SLOT; QUEUE_CAP],
    order: IDENTITY,
    free: u64::MAX,
    start_ns: 0,
    end_ns: 0,
    masks: [0; 4],
    head: 0,
    len: 0,
    settled: 0,
};

/// The unfinished operations of every unit.
#[derive(Debug, Clone)]
pub(crate) struct UnitQueues {
    cfg: SchedulerConfig,
    rings: Vec<Ring>,
}

/// Saved as rings of entries with their times; the masks follow from the entries and are
/// rebuilt on load.
impl State for UnitQueues {
    fn save(&self, w: &mut StateWriter<'_>) {
        let units = self.rings.len();
        let mut entries = vec![EMPTY; units * QUEUE_CAP];
        for (u, r) in self.rings.iter().enumerate() {
            for (i, e) in r.entries().into_iter().enumerate() {
                entries[u * QUEUE_CAP + ((r.head as usize + i) & MASK)] = e;
            }
        }
        entries.save(w);
        let head: Vec<u8> = self.rings.iter().map(|r| r.head).collect();
        let len: Vec<u8> = self.rings.iter().map(|r| r.len).collect();
        head.save(w);
        len.save(w);
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        let (mut entries, mut head, mut len) =
            (Vec::<Entry>::new(), Vec::<u8>::new(), Vec::<u8>::new());
        entries.load(r)?;
        head.load(r)?;
        len.load(r)?;
        let units = head.len();
        if len.len() != units
            || entries.len() != units * QUEUE_CAP
            || len.iter().any(|&n| n as usize > QUEUE_CAP)
            || head.iter().any(|&h| h as usize >= QUEUE_CAP)
        {
            return Err(StateError::Corrupt {
                what: format!(
                    "die queues: {} entries, {} heads and {} lengths for rings of {QUEUE_CAP}",
                    entries.len(),
                    units,
                    len.len()
                ),
            });
        }
        self.rings = vec![EMPTY_RING; units];
        for unit in 0..units {
            let ring = &entries[unit * QUEUE_CAP..(unit + 1) * QUEUE_CAP];
            let queued: Vec<Entry> = (0..len[unit] as usize)
                .map(|i| ring[(head[unit] as usize + i) & MASK])
                .collect();
            self.check_loaded(unit, &queued)?;
            self.rings[unit].fill(head[unit], &queued);
        }
        Ok(())
    }
}

const MASK: usize = QUEUE_CAP - 1;

/// Slot `i` at position `i` from a head at slot 0.
const IDENTITY: [u8; QUEUE_CAP] = {
    let mut order = [0; QUEUE_CAP];
    let mut i = 0;
    while i < QUEUE_CAP {
        order[i] = i as u8;
        i += 1;
    }
    order
};
const _: () = assert!(QUEUE_CAP.is_power_of_two() && QUEUE_CAP <= 64);

impl Ring {
    #[inline]
    fn n(&self) -> usize {
        self.len as usize
    }

    #[inline]
    fn at(&self, i: usize) -> &Slot {
        &self.slots[self.order[(self.head as usize + i) & MASK] as usize & MASK]
    }

    #[inline]
    fn at_mut(&mut self, i: usize) -> &mut Slot {
        &mut self.slots[self.order[(self.head as usize + i) & MASK] as usize & MASK]
    }

    /// A free slot holding `s`, taken (room was made).
    #[inline]
    fn take_slot(&mut self, s: Slot) -> u8 {
        debug_assert!(self.free != 0);
        let slot = self.free.trailing_zeros() as usize & MASK;
        self.free &= self.free - 1;
        self.slots[slot] = s;
        slot as u8
    }

    /// Set the kind bits of position `i`.
    #[inline]
    fn mark(&mut self, i: usize, kind: Kind) {
        let bit = 1u64 << i;
        for (m, on) in self.masks.iter_mut().zip(kind_bits(kind)) {
            *m = (*m & !bit) | (u64::from(on) << i);
        }
    }

    /// Set position `i`'s idle time before it, and its bit.
    #[inline]
    fn set_gap(&mut self, i: usize, gap_ns: u64) {
        self.at_mut(i).gap_ns = gap_ns;
        let m = &mut self.masks[GAPPED];
        *m = (*m & !(1u64 << i)) | (u64::from(gap_ns > 0) << i);
    }

    /// Open position `p` in the masks (later positions move up one) for an entry of `kind`
    /// with idle time before it or not (`gapped`).
    #[inline]
    fn open_bit(&mut self, p: usize, kind: Kind, gapped: bool) {
        let low = (1u64 << p) - 1;
        let [a, b, c] = kind_bits(kind);
        for (m, on) in self.masks.iter_mut().zip([a, b, c, gapped]) {
            *m = (*m & low) | ((*m & !low) << 1) | (u64::from(on) << p);
        }
    }

    /// Close the masks over the pair at positions `i - 1` and `i` merged into one entry at
    /// `i - 1` (later positions move down one): it takes the kind of the later entry (the
    /// kind masks close position `i - 1`) and the idle time before the earlier one (the
    /// idle-time mask closes position `i`).
    #[inline]
    fn close_merged_bits(&mut self, i: usize) {
        debug_assert!(i >= 1);
        let (kinds, gapped) = self.masks.split_at_mut(GAPPED);
        let low = (1u64 << (i - 1)) - 1;
        for m in kinds {
            *m = (*m & low) | ((*m >> 1) & !low);
        }
        let low = (1u64 << i) - 1;
        gapped[0] = (gapped[0] & low) | ((gapped[0] >> 1) & !low);
    }

    /// Positions where a host read (`host`) or an internal read stops looking for its
    /// place: anything but a host read, or anything but a read.
    #[inline]
    fn read_stops(&self, host: bool) -> u64 {
        if host {
            self.masks[0]
        } else {
            self.masks[1] | self.masks[2]
        }
    }

    /// Bit `i` set where the entry at `i` is of the same kind as the one before it.
    #[inline]
    fn same_kind(&self) -> u64 {
        let k = &self.masks;
        !((k[0] ^ (k[0] << 1)) | (k[1] ^ (k[1] << 1)) | (k[2] ^ (k[2] << 1)))
    }

    /// The entry at position `i` with its times, given the end of the one before it
    /// (`start_ns` for the first, whose gap is 0).
    #[inline]
    fn entry_after(&self, i: usize, prev_end_ns: u64) -> Entry {
        let s = self.at(i);
        let start_ns = prev_end_ns.wrapping_add(s.gap_ns);
        Entry {
            start_ns,
            end_ns: start_ns.wrapping_add(s.dur_ns),
            kind: s.kind,
            suspends: u32::from(s.suspends),
            ops: s.ops,
            quantum_ns: s.quantum_ns,
            slack_ns: s.slack_ns,
        }
    }

    /// End of the entry before position `i` (the ring's start for position 0, whose gap
    /// is 0); `i` is at most `settled`.
    #[inline]
    fn end_before(&self, i: usize) -> u64 {
        debug_assert!(i <= self.settled as usize);
        if i == 0 {
            self.start_ns
        } else {
            self.at(i - 1).end_ns
        }
    }

    /// Hold the ends of the entries below position `to` (at most the length).
    #[inline]
    fn settle(&mut self, to: usize) {
        let from = self.settled as usize;
        if to <= from {
            return;
        }
        let mut t = self.end_before(from);
        for i in from..to {
            let s = self.at_mut(i);
            t += s.gap_ns + s.dur_ns;
            s.end_ns = t;
        }
        self.settled = to as u8;
    }

    /// Positions from `i` on no longer hold their ends.
    #[inline]
    fn unsettle(&mut self, i: usize) {
        self.settled = self.settled.min(i as u8);
    }

    /// Every entry with its times (saving and tests).
    fn entries(&self) -> Vec<Entry> {
        let mut t = self.start_ns;
        (0..self.n())
            .map(|i| {
                let e = self.entry_after(i, t);
                t = e.end_ns;
                e
            })
            .collect()
    }

    /// Hold `entries` (in time order) from slot `head` on.
    fn fill(&mut self, head: u8, entries: &[Entry]) {
        *self = Ring { head, ..EMPTY_RING };
        let mut prev_end = entries.first().map_or(0, |e| e.start_ns);
        self.start_ns = prev_end;
        for (i, e) in entries.iter().enumerate() {
            *self.at_mut(i) = Slot {
                gap_ns: e.start_ns.wrapping_sub(prev_end),
                dur_ns: e.end_ns.wrapping_sub(e.start_ns),
                end_ns: e.end_ns,
                ops: e.ops,
                quantum_ns: e.quantum_ns,
                slack_ns: e.slack_ns,
                suspends: e.suspends.min(u32::from(u16::MAX)) as u16,
                kind: e.kind,
            };
            self.mark(i, e.kind);
            self.masks[GAPPED] |= u64::from(e.start_ns != prev_end) << i;
            prev_end = e.end_ns;
        }
        self.len = entries.len() as u8;
        self.settled = self.len;
        for i in 0..entries.len() {
            self.free &= !(1u64 << ((head as usize + i) & MASK));
        }
        self.end_ns = prev_end;
    }

    /// Forget operations that ended by `now_ns` (nothing will be placed before it any more).
    #[inline]
    fn forget_before(&mut self, now_ns: u64) {
        let n = self.n();
        let (mut k, mut t) = (0, self.start_ns);
        while k < n {
            let s = self.at(k);
            let end = t + s.gap_ns + s.dur_ns;
            if end > now_ns {
                break;
            }
            t = end;
            k += 1;
        }
        if k > 0 {
            if k < n {
                // The new first entry's idle time goes into the ring's start.
                self.start_ns = t + self.at(k).gap_ns;
                self.at_mut(k).gap_ns = 0;
            }
            for j in 0..k {
                self.free |= 1u64 << (self.order[(self.head as usize + j) & MASK] as usize & MASK);
            }
            self.head = ((self.head as usize + k) & MASK) as u8;
            self.len -= k as u8;
            self.settled = self.settled.saturating_sub(k as u8);
            for m in &mut self.masks {
                *m = m.checked_shr(k as u32).unwrap_or(0);
            }
            self.masks[GAPPED] &= !1;
        }
    }

    /// Room for `need` more entries: neighbours merge while the ring is too full.
    fn make_room(&mut self, need: usize) {
        // Where the search for a pair that follows on at once starts: after such a pair
        // merges, the pairs above the merged entry are ones the search passed (the merged
        // entry ends as the later of its pair did).
        let mut top = QUEUE_CAP;
        while self.n() + need > QUEUE_CAP {
            let (i, joined) = self.merge_point(top);
            top = if joined { i - 1 } else { QUEUE_CAP };
            // The pair merges into the earlier entry, in place; the entry after it keeps
            // its idle time (the merged entry ends where the later of the pair did).
            let (a, b) = (*self.at(i - 1), *self.at(i));
            let settled = i < self.settled as usize;
            if !settled {
                self.unsettle(i - 1);
            }
            // Built whole and stored once: field by field, a narrow store (the kind) and a
            // wider load over it (the suspensions beside it) stall the store buffer.
            *self.at_mut(i - 1) = Slot {
                gap_ns: a.gap_ns,
                dur_ns: a.dur_ns + b.gap_ns + b.dur_ns,
                end_ns: if settled { b.end_ns } else { a.end_ns },
                ops: a.ops + b.ops,
                quantum_ns: a.quantum_ns.max(b.quantum_ns),
                // The idle time before the run: its later operations followed on.
                slack_ns: a.slack_ns,
                suspends: a.suspends.max(b.suspends),
                kind: b.kind,
            };
            self.remove_merged(i);
        }
    }

    /// The later of the pair that merges next: the latest pair of the same kind with no idle
    /// time between them, else the latest pair of the same kind, never the running entry
    /// (index 0), else the last two. A merged entry is split by its average operation time
    /// (`split_running`): a pair with idle time between them would make each operation as
    /// long as the idle time over the count (tens of ms on a die booked 100 ms ahead), and a
    /// read that found one running would wait for all of it.
    ///
    /// Pairs whose later entry is above `top` are known not to follow on at once. Returns
    /// the position and whether its pair follows on at once.
    #[inline]
    fn merge_point(&self, top: usize) -> (usize, bool) {
        let n = self.n();
        // Positions 2 ..= `hi`.
        let from_two_to = |hi: usize| {
            if hi < 2 {
                0
            } else {
                (u64::MAX >> (63 - hi)) & !3
            }
        };
        let same = self.same_kind();
        let joined = same & !self.masks[GAPPED] & from_two_to(top.min(n - 1));
        if joined != 0 {
            return (63 - joined.leading_zeros() as usize, true);
        }
        let same = same & from_two_to(n - 1);
        if same != 0 {
            return (63 - same.leading_zeros() as usize, false);
        }
        (n - 1, false)
    }

    /// Drop the entry at position `i`, merged into the one before it (`i` at least 1),
    /// freeing its slot and moving the positions before it back one or those after it
    /// forward one, whichever are fewer.
    #[inline]
    fn remove_merged(&mut self, i: usize) {
        let (n, head) = (self.n(), self.head as usize);
        debug_assert!(i < n);
        self.free |= 1u64 << (self.order[(head + i) & MASK] as usize & MASK);
        if i < n - 1 - i {
            move_up(&mut self.order, head, head + i);
            self.head = ((head + 1) & MASK) as u8;
        } else {
            move_down(&mut self.order, head + i + 1, head + n);
        }
        self.close_merged_bits(i);
        self.len -= 1;
        if i < self.settled as usize {
            self.settled -= 1;
        }
    }

    /// Insert `s` at position `p` in a free slot, moving the positions before it forward one
    /// or those after it back one, whichever are fewer (room was made). The caller keeps
    /// the times around it right.
    fn insert(&mut self, p: usize, s: Slot) {
        let n = self.n();
        debug_assert!(n < QUEUE_CAP && p <= n);
        let head = self.head as usize;
        let slot = self.take_slot(s);
        if p < n - p {
            // Positions `head .. head + p` move down one; counted from one ring further on,
            // so the one before the head is never below zero.
            move_down(&mut self.order, head + QUEUE_CAP, head + QUEUE_CAP + p);
            let new_head = head.wrapping_sub(1) & MASK;
            self.order[(new_head + p) & MASK] = slot;
            self.head = new_head as u8;
        } else {
            move_up(&mut self.order, head + p, head + n);
            self.order[(head + p) & MASK] = slot;
        }
        self.len += 1;
        self.unsettle(p);
        self.open_bit(p, s.kind, s.gap_ns > 0);
    }

    /// Add `s` after the last entry, to start at `start_ns` (no earlier than its end; room
    /// was made): nothing moves, and the masks' bits past the last entry are clear.
    #[inline]
    fn append(&mut self, start_ns: u64, mut s: Slot) {
        let n = self.n();
        debug_assert!(n < QUEUE_CAP);
        if n == 0 {
            self.start_ns = start_ns;
            s.gap_ns = 0;
        } else {
            s.gap_ns = start_ns - self.end_ns;
        }
        self.end_ns = start_ns + s.dur_ns;
        s.end_ns = self.end_ns;
        let slot = self.take_slot(s);
        self.order[(self.head as usize + n) & MASK] = slot;
        self.len += 1;
        if self.settled as usize == n {
            self.settled += 1;
        }
        for (m, on) in self.masks.iter_mut().zip(kind_bits(s.kind)) {
            *m |= u64::from(on) << n;
        }
        self.masks[GAPPED] |= u64::from(s.gap_ns > 0) << n;
    }

    /// The entries from `from` on start `delta_ns` later where they followed on at once:
    /// the first idle times after them absorb the move, and what is left moves the end.
    #[inline]
    fn absorb(&mut self, from: usize, mut delta_ns: u64) {
        self.unsettle(from);
        let mut gapped = self.masks[GAPPED] & u64::MAX.checked_shl(from as u32).unwrap_or(0);
        while delta_ns > 0 && gapped != 0 {
            let j = gapped.trailing_zeros() as usize;
            let s = self.at_mut(j);
            if s.gap_ns > delta_ns {
                s.gap_ns -= delta_ns;
                return;
            }
            delta_ns -= s.gap_ns;
            s.gap_ns = 0;
            self.masks[GAPPED] &= !(1u64 << j);
            gapped &= gapped - 1;
        }
        self.end_ns += delta_ns;
    }

    /// Insert `s` (its gap aside) to start at `start_ns` at position `p`, where the entry
    /// before it ends at `prev_end_ns` (for position 0: the ring's start); entries after it
    /// move later as far as it overlaps them.
    fn place(&mut self, p: usize, prev_end_ns: u64, start_ns: u64, mut s: Slot) {
        let n = self.n();
        let end_ns = start_ns + s.dur_ns;
        let next_start_ns = (p < n).then(|| prev_end_ns + self.at(p).gap_ns);
        if p == 0 {
            self.start_ns = start_ns;
            s.gap_ns = 0;
        } else {
            s.gap_ns = start_ns - prev_end_ns;
        }
        self.insert(p, s);
        if self.settled as usize == p {
            self.at_mut(p).end_ns = end_ns;
            self.settled += 1;
        }
        match next_start_ns {
            None => self.end_ns = end_ns,
            Some(next) if next >= end_ns => self.set_gap(p + 1, next - end_ns),
            Some(next) => {
                self.set_gap(p + 1, 0);
                self.absorb(p + 2, end_ns - next);
            }
        }
    }

    /// If the entry at `i` (starting at `start_ns`) runs at `t_ns` and holds several merged
    /// operations, keep only the ones done or in progress at `t_ns` in it and move the rest
    /// to an entry of their own: a read waits for the operation in progress, not for the
    /// whole run (room was made).
    fn split_running(&mut self, i: usize, start_ns: u64, t_ns: u64) {
        if i >= self.n() {
            return;
        }
        let e = *self.at(i);
        if e.ops < 2 || start_ns > t_ns || t_ns >= start_ns + e.dur_ns {
            return;
        }
        let each_ns = (e.dur_ns / e.ops as u64).max(1);
        let k = ((t_ns - start_ns) / each_ns + 1).min(e.ops as u64) as u32;
        let s = self.at_mut(i);
        // A merged entry keeps the most suspensions of its operations; past the first, the
        // one in progress is a fresh one, never suspended (else a program merged behind a
        // resumed one inherited its used-up suspensions and a read waited for all of it).
        // Past the first, the operation in progress followed the one before it at once.
        if k > 1 {
            s.suspends = 0;
            s.slack_ns = 0;
        }
        if k == e.ops {
            return;
        }
        let cut_ns = k as u64 * each_ns;
        s.dur_ns = cut_ns;
        s.end_ns = start_ns + cut_ns;
        s.ops = k;
        // Both parts' ends are known where the entry's was.
        let settled = self.settled as usize > i;
        self.insert(
            i + 1,
            Slot {
                gap_ns: 0,
                dur_ns: e.dur_ns - cut_ns,
                ops: e.ops - k,
                suspends: 0,
                slack_ns: 0,
                ..e
            },
        );
        if settled {
            self.settled = (i + 2) as u8;
        }
    }
}

impl UnitQueues {
    /// Units with a queue.
    pub fn unit_count(&self) -> usize {
        self.rings.len()
    }

    /// Change the first queued operation of the first unit that has one, as a forged state
    /// would (tests).
    #[cfg(test)]
    pub(crate) fn forge_first_queued(&mut self, forge: impl FnOnce(&mut Entry)) -> bool {
        let Some(r) = self.rings.iter_mut().find(|r| r.len > 0) else {
            return false;
        };
        let mut entries = r.entries();
        forge(&mut entries[0]);
        r.fill(r.head, &entries);
        true
    }

    pub fn new(units: usize, cfg: SchedulerConfig) -> UnitQueues {
        UnitQueues {
            cfg,
            rings: vec![EMPTY_RING; units],
        }
    }

    /// Each loaded entry lies within itself and after the one before it, before 2^62 ns,
    /// stands for at least one operation and is suspended no more than the scheduler
    /// allows.
    fn check_loaded(&self, unit: usize, entries: &[Entry]) -> Result<(), StateError> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let mut prev_end = 0;
        for (i, e) in entries.iter().enumerate() {
            if e.start_ns > e.end_ns
                || e.end_ns > limit
                || e.ops == 0
                || e.suspends > self.cfg.max_suspends_per_op
            {
                return Err(StateError::Corrupt {
                    what: format!(
                        "die queue {unit}'s entry {i}: a {:?} of {} operations from {} to {} ns suspended {} times (valid: start before end before 2^62 ns, at least one operation, at most {} suspensions)",
                        e.kind, e.ops, e.start_ns, e.end_ns, e.suspends, self.cfg.max_suspends_per_op
                    ),
                });
            }
            if e.start_ns < prev_end {
                return Err(StateError::Corrupt {
                    what: format!(
                        "die queue {unit}'s entry {i}: starts at {} ns, before the entry ahead of it ends at {prev_end} ns (valid: entries in time order)",
                        e.start_ns
                    ),
                });
            }
            prev_end = e.end_ns;
        }
        Ok(())
    }

    /// End of the unit's last reservation (0 if none is kept).
    pub fn free_ns(&self, unit: usize) -> u64 {
        let r = &self.rings[unit];
        if r.len == 0 {
            0
        } else {
            r.end_ns
        }
    }

    /// A program or erase of `dur_ns`, first come first served from `earliest_ns`; returns
    /// its start.
    pub fn push(
        &mut self,
        unit: usize,
        kind: Kind,
        earliest_ns: u64,
        dur_ns: u64,
        floor_ns: u64,
    ) -> u64 {
        let max_suspends = self.cfg.max_suspends_per_op;
        let r = &mut self.rings[unit];
        // The end of the unit's previous work (a ring keeps its last entry until the next
        // operation on the unit forgets it); a unit that never worked is idle.
        let prev_end = (r.len > 0).then_some(r.end_ns);
        r.forget_before(floor_ns);
        let free = if r.len > 0 { r.end_ns } else { 0 };
        let start = earliest_ns.max(free);
        let mut slack = prev_end.map_or(u64::from(u32::MAX), |end| start.saturating_sub(end));
        // Queued straight behind a program or erase, it belongs to the same burst of writes
        // (a flush gives a die several pages at once: a TLC word line's pages, a stripe's):
        // the burst shares the idle time before it.
        if slack == 0 && r.len > 0 {
            let last = r.at(r.n() - 1);
            if r.end_ns == start && last.kind != Kind::Read && last.kind != Kind::InternalRead {
                slack = u64::from(last.slack_ns);
            }
        }
        r.make_room(1);
        let quantum = dur_ns / u64::from(max_suspends.max(1));
        r.append(
            start,
            Slot {
                gap_ns: 0,
                dur_ns,
                end_ns: 0,
                ops: 1,
                quantum_ns: quantum.min(u64::from(u32::MAX)) as u32,
                slack_ns: slack.min(u64::from(u32::MAX)) as u32,
                suspends: 0,
                kind,
            },
        );
        start
    }

    /// Place a read of `dur_ns` wanted from `earliest_ns` (`host`: for a host command, else
    /// internal).
    pub fn read(
        &mut self,
        unit: usize,
        earliest_ns: u64,
        dur_ns: u64,
        floor_ns: u64,
        host: bool,
    ) -> ReadPlacement {
        let kind = if host { Kind::Read } else { Kind::InternalRead };
        let cfg = self.cfg;
        let r = &mut self.rings[unit];
        r.forget_before(floor_ns);
        // Merging happens at the tail, before any position is taken: room for a split, the
        // read and a resumed operation.
        r.make_room(3);
        let first = r.first_unfinished(earliest_ns);
        let first_prev_end = r.end_before(first);
        let first_start = if first < r.n() {
            first_prev_end + r.at(first).gap_ns
        } else {
            first_prev_end
        };
        if cfg.read_priority {
            r.split_running(first, first_start, earliest_ns);
        }
        let p = r.read_position(cfg.read_priority, first, first_start, earliest_ns, host);
        // The entry just ahead of the read, and where it ends.
        r.settle(p);
        let (cur, prev_end_ns) = if p > first {
            let e = r.entry_after(p - 1, r.end_before(p - 1));
            (Some(e), e.end_ns)
        } else {
            (None, first_prev_end)
        };
        if let Some(cur) = cur {
            if let Some(placed) = suspend_for(&cfg, r, p, cur, earliest_ns, dur_ns, kind) {
                return placed;
            }
        }
        let start = earliest_ns.max(if p > 0 { prev_end_ns } else { 0 });
        let waits = if host && start > earliest_ns {
            r.waits_before(first, first_prev_end, p, earliest_ns, start)
        } else {
            [0; WAIT_CAUSES.len()]
        };
        r.place(
            p,
            prev_end_ns,
            start,
            Slot {
                gap_ns: 0,
                dur_ns,
                end_ns: 0,
                ops: 1,
                quantum_ns: 0,
                slack_ns: 0,
                suspends: 0,
                kind,
            },
        );
        ReadPlacement {
            start_ns: start,
            suspended: None,
            waits,
        }
    }

    /// A die suspends a multi-plane program as a whole: its planes program together and stop
    /// together (a suspend command stops the die's operation, not one plane's part of it).
    /// A read on another plane of the die suspended the program from `at_ns` (the die can
    /// read from then) for `read_ns`; here the same program's part on `unit` stops at
    /// `at_ns` too, its plane idles while the die reads (where a read of this plane goes,
    /// served in the same suspension) and it resumes with the resume overhead, counted as
    /// suspended once more, so the die's suspensions, not each plane's, meet
    /// `max_suspends_per_op`. Nothing changes if no program of this plane runs through the
    /// suspension's start.
    pub fn suspend_alongside(&mut self, unit: usize, at_ns: u64, read_ns: u64, floor_ns: u64) {
        let cfg = self.cfg;
        let r = &mut self.rings[unit];
        r.forget_before(floor_ns);
        // Room for a split of merged programs and the resumed part.
        r.make_room(2);
        let stop_ns = at_ns.saturating_sub(cfg.suspend_latency_ns);
        let i = r.first_unfinished(stop_ns);
        if i >= r.n() {
            return;
        }
        let start_ns = r.end_before(i) + r.at(i).gap_ns;
        r.split_running(i, start_ns, stop_ns);
        let cur = r.entry_after(i, r.end_before(i));
        if cur.kind != Kind::Program || cur.start_ns > stop_ns || at_ns >= cur.end_ns {
            return;
        }
        r.unsettle(i);
        r.at_mut(i).dur_ns = at_ns - cur.start_ns;
        r.at_mut(i).kind = Kind::Suspending;
        r.mark(i, Kind::Suspending);
        let resumed = Slot {
            gap_ns: read_ns,
            dur_ns: cur.end_ns - at_ns + cfg.resume_overhead_ns,
            end_ns: 0,
            ops: 1,
            quantum_ns: cur.quantum_ns,
            slack_ns: cur.slack_ns,
            // The die's count: the part on the read's plane went to the same count.
            suspends: (cur.suspends + 1).min(cfg.max_suspends_per_op) as u16,
            kind: Kind::Program,
        };
        r.insert(i + 1, resumed);
        // What follows moves later by the read and the resume overhead.
        r.absorb(i + 2, read_ns + cfg.resume_overhead_ns);
    }

    /// Power cycle: work in flight is dropped; every unit is busy until `at_ns` (an entry
    /// nothing can suspend or overtake).
    pub fn reset(&mut self, at_ns: u64) {
        let busy = Entry {
            start_ns: 0,
            end_ns: at_ns,
            kind: Kind::Suspending,
            suspends: 0,
            ops: 1,
            quantum_ns: 0,
            slack_ns: 0,
        };
        for r in &mut self.rings {
            r.fill(0, &[busy]);
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.rings.capacity() * std::mem::size_of::<Ring>()
    }

    #[cfg(test)]
    pub(crate) fn entries_of(&self, unit: usize) -> Vec<Entry> {
        self.rings[unit].entries()
    }
}

impl SchedulerConfig {
    fn suspendable(&self, e: &Entry) -> bool {
        let allowed = match e.kind {
            Kind::Program => self.program_suspend,
            Kind::Erase => self.erase_suspend,
            Kind::Read | Kind::InternalRead | Kind::Suspending => false,
        };
        allowed && e.suspends < self.max_suspends_per_op
    }

    /// Whether one more suspension of `e` for a read of `dur_ns` fits its die's slack (see
    /// [`SchedulerConfig::suspend_budget`]): every suspension so far and this one each add
    /// a read and the resume overhead to the operation (firmware budgets a write's
    /// suspensions by the time left before the die's next write is due: US 10,579,269).
    /// The idle time before the operation stands for that time (a die paced by its writes
    /// has as much slack after an operation as before it), shared by a burst of operations
    /// queued back to back.
    fn within_budget(&self, e: &Entry, dur_ns: u64) -> bool {
        !self.suspend_budget
            || (u64::from(e.suspends) + 1) * (dur_ns + self.resume_overhead_ns)
                <= u64::from(e.slack_ns)
    }
}

/// When `cur` stops for a read arriving at `t_ns`: a resumed operation first makes its
/// quantum of progress, and it stops at the end of the step running.
fn suspend_stop(cfg: &SchedulerConfig, cur: &Entry, t_ns: u64) -> u64 {
    let progress_ns = if cur.suspends > 0 {
        cur.start_ns + u64::from(cur.quantum_ns)
    } else {
        cur.start_ns
    };
    let step_ns = match cur.kind {
        Kind::Erase => cfg.erase_suspend_step_ns,
        _ => cfg.program_suspend_step_ns,
    };
    let ready = t_ns.max(progress_ns);
    // Steps fall at multiples of the step from the entry's start: a resumed operation
    // restarts its step.
    match step_ns {
        0 => ready,
        g => cur.start_ns + (ready - cur.start_ns).div_ceil(g) * g,
    }
}

/// Suspend `cur`, the entry at `p - 1`, for a read of `dur_ns` arriving at `earliest_ns`,
/// if it is running then and may be suspended: the read goes in at `p` and the rest of the
/// operation resumes after it. `None` if the read must wait instead.
fn suspend_for(
    cfg: &SchedulerConfig,
    r: &mut Ring,
    p: usize,
    cur: Entry,
    earliest_ns: u64,
    dur_ns: u64,
    kind: Kind,
) -> Option<ReadPlacement> {
    let running = cur.start_ns <= earliest_ns && earliest_ns < cur.end_ns;
    let stop = suspend_stop(cfg, &cur, earliest_ns);
    let at = stop + cfg.suspend_latency_ns;
    if !(running && cfg.suspendable(&cur) && cfg.within_budget(&cur, dur_ns) && at < cur.end_ns) {
        return None;
    }

    let rest = cur.end_ns - at;
    r.unsettle(p - 1);
    let s = r.at_mut(p - 1);
    s.dur_ns = at - cur.start_ns;
    s.kind = Kind::Suspending;
    r.mark(p - 1, Kind::Suspending);
    let read = Slot {
        gap_ns: 0,
        dur_ns,
        end_ns: 0,
        ops: 1,
        quantum_ns: 0,
        slack_ns: 0,
        suspends: 0,
        kind,
    };
    let resumed = Slot {
        dur_ns: rest + cfg.resume_overhead_ns,
        kind: cur.kind,
        // At most `max_suspends_per_op`, which `suspendable` checked.
        suspends: (cur.suspends + 1).min(u32::from(u16::MAX)) as u16,
        quantum_ns: cur.quantum_ns,
        slack_ns: cur.slack_ns,
        ..read
    };
    r.insert(p, read);
    r.insert(p + 1, resumed);
    // What follows moves later by the read and the resume overhead.
    r.absorb(p + 2, dur_ns + cfg.resume_overhead_ns);
    let mut waits = [0; WAIT_CAUSES.len()];
    if kind == Kind::Read {
        waits[wait::SUSPEND_STEP] = stop - earliest_ns;
        waits[wait::SUSPEND_LATENCY] = cfg.suspend_latency_ns;
    }
    Some(ReadPlacement {
        start_ns: at,
        suspended: Some(cur.kind),
        waits,
    })
}

impl Ring {
    /// The first entry not over by `t_ns`, its end held: entries follow one another, so
    /// their ends rise, and a binary search among the settled ones finds it (a ring booked
    /// far ahead holds dozens of entries the floor has not yet forgotten), else a walk on
    /// from them.
    #[inline]
    fn first_unfinished(&mut self, t_ns: u64) -> usize {
        let (n, settled) = (self.n(), self.settled as usize);
        let (mut lo, mut hi) = (0, settled);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.at(mid).end_ns <= t_ns {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo < settled {
            return lo;
        }
        let mut t = self.end_before(settled);
        let mut i = settled;
        while i < n {
            let s = self.at_mut(i);
            t += s.gap_ns + s.dur_ns;
            s.end_ns = t;
            i += 1;
            if t > t_ns {
                self.settled = i as u8;
                return i - 1;
            }
        }
        self.settled = n as u8;
        n
    }

    /// Where a read wanted at `t_ns` goes: `first` is the first entry not over by then,
    /// starting at `first_start_ns`.
    #[inline]
    fn read_position(
        &self,
        priority: bool,
        first: usize,
        first_start_ns: u64,
        t_ns: u64,
        host: bool,
    ) -> usize {
        let n = self.n();
        let mut p = first;
        // The operation running at `t_ns` keeps the die...
        if p < n && first_start_ns <= t_ns {
            p += 1;
        }
        if priority {
            // ...and reads already waiting go first (a host read passes internal ones): the
            // first position from `p` that stops this read, else the end.
            p += ((self.read_stops(host) >> p).trailing_zeros() as usize).min(n - p);
        } else {
            // First come, first served among what the die was sent: past the running
            // operation and `FIRMWARE_AHEAD_OPS` more, the rest waits in the controller.
            let mut ahead = 0;
            while p < n && ahead < FIRMWARE_AHEAD_OPS {
                ahead += self.at(p).ops;
                p += 1;
            }
        }
        p
    }

    /// A read placed at position `p` waited from `from_ns` to `to_ns`: split that time among
    /// the entries `first..p` ahead of it (the one before `first` ending at `prev_end_ns`)
    /// by how much of it each held the unit.
    fn waits_before(
        &self,
        first: usize,
        prev_end_ns: u64,
        p: usize,
        from_ns: u64,
        to_ns: u64,
    ) -> Waits {
        let cause = |kind| match kind {
            Kind::Read => wait::HOST_READS,
            Kind::InternalRead => wait::INTERNAL_READS,
            Kind::Program => wait::PROGRAMS,
            Kind::Erase => wait::ERASES,
            Kind::Suspending => wait::SUSPENDING,
        };
        let mut waits = [0; WAIT_CAUSES.len()];
        if first >= p {
            return waits;
        }
        // The first entry may have started before the read came; the ones after it start
        // after it ends, past `from_ns`, and end by the read's start: their whole length.
        let e = self.entry_after(first, prev_end_ns);
        let (a, b) = (e.start_ns.max(from_ns), e.end_ns.min(to_ns));
        waits[cause(e.kind)] += b.saturating_sub(a);
        // Host reads following on at once (the queue of a die that only reads): their
        // lengths add up to the span from the first entry's end to the read's position,
        // held since the read settled the entries before it.
        let above = |i: usize| u64::MAX.checked_shl(i as u32).unwrap_or(0);
        let between = above(first + 1) & !above(p);
        if (self.masks[0] | self.masks[GAPPED]) & between == 0 {
            waits[wait::HOST_READS] += self.end_before(p) - e.end_ns;
            return waits;
        }
        // Summed in a register by runs of one kind (under read priority the entries ahead
        // of a host read are host reads waiting): one sum in memory per entry would make
        // each addition wait for the last.
        let (mut kind, mut run_ns) = (e.kind, 0);
        for i in first + 1..p {
            let s = self.at(i);
            if s.kind != kind {
                waits[cause(kind)] += run_ns;
                (kind, run_ns) = (s.kind, 0);
            }
            run_ns += s.dur_ns;
        }
        waits[cause(kind)] += run_ns;
        debug_assert!(
            waits.iter().sum::<u64>() <= to_ns - from_ns,
            "the waits ahead of a read exceed its wait"
        );
        waits
    }
}

/// Move the ring's slots `a .. b` (counted on from slot 0, at most one ring further on) up one
/// slot, as block moves: the part past the ring's end first, then the slot that wraps, then
/// the rest.
#[inline]
fn move_up<T: Copy>(ring: &mut [T; QUEUE_CAP], a: usize, b: usize) {
    debug_assert!(a <= b && b - a < QUEUE_CAP && a < 2 * QUEUE_CAP);
    if a >= b {
        return;
    }
    if b < QUEUE_CAP {
        ring.copy_within(a..b, a + 1);
    } else if a >= QUEUE_CAP {
        ring.copy_within(a - QUEUE_CAP..b - QUEUE_CAP, a - QUEUE_CAP + 1);
    } else {
        ring.copy_within(0..b - QUEUE_CAP, 1);
        ring[0] = ring[QUEUE_CAP - 1];
        ring.copy_within(a..QUEUE_CAP - 1, a + 1);
    }
}

/// Move the ring's slots `a .. b` (counted on from slot 0, `a` at least 1 and below two
/// rings) down one slot, as block moves: the part before the ring's end first, then the
/// slot that wraps, then the rest.
#[inline]
fn move_down<T: Copy>(ring: &mut [T; QUEUE_CAP], a: usize, b: usize) {
    debug_assert!(a >= 1 && a <= b && b - a < QUEUE_CAP && b <= 3 * QUEUE_CAP);
    if a >= b {
        return;
    }
    let (a, b) = if a > QUEUE_CAP {
        (a - QUEUE_CAP, b - QUEUE_CAP)
    } else {
        (a, b)
    };
    if b <= QUEUE_CAP {
        ring.copy_within(a..b, a - 1);
    } else if a == QUEUE_CAP {
        ring[QUEUE_CAP - 1] = ring[0];
        ring.copy_within(1..b - QUEUE_CAP, 0);
    } else {
        ring.copy_within(a..QUEUE_CAP, a - 1);
        ring[QUEUE_CAP - 1] = ring[0];
        ring.copy_within(1..b - QUEUE_CAP, 0);
    }
}

#[cfg(test)]
#[path = "sched/tests/ring_reference.rs"]
mod ring_reference;

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    fn cfg(prio: bool, psus: bool, esus: bool) -> SchedulerConfig {
        SchedulerConfig {
            read_priority: prio,
            program_suspend: psus,
            erase_suspend: esus,
            suspend_latency_ns: 20 * US,
            resume_overhead_ns: 10 * US,
            max_suspends_per_op: 2,
            program_suspend_step_ns: 0,
            erase_suspend_step_ns: 0,
            suspend_budget: false,
        }
    }

    fn well_formed(q: &UnitQueues, unit: usize) {
        let e = q.entries_of(unit);
        for w in e.windows(2) {
            assert!(w[0].end_ns <= w[1].start_ns, "{e:?}");
        }
        for x in &e {
            assert!(x.start_ns <= x.end_ns);
        }
        // The read masks describe the entries, and nothing past them.
        let (mut host, mut internal) = (0u64, 0u64);
        for (i, x) in e.iter().enumerate() {
            host |= u64::from(x.kind != Kind::Read) << i;
            internal |= u64::from(!matches!(x.kind, Kind::Read | Kind::InternalRead)) << i;
        }
        let r = &q.rings[unit];
        assert_eq!(
            [r.read_stops(true), r.read_stops(false)],
            [host, internal],
            "{e:?}"
        );
        // The first entry's idle time is in the ring's start, and the ring built afresh
        // from its entries has the same masks and end: every bit of idle time, kind and
        // same-kind neighbours follows the entries.
        if let Some(first) = e.first() {
            assert_eq!(r.at(0).gap_ns, 0);
            assert_eq!(r.start_ns, first.start_ns);
        }
        for (i, x) in e.iter().enumerate().take(r.settled as usize) {
            assert_eq!(r.at(i).end_ns, x.end_ns, "{i}: {e:?}");
        }
        assert!(r.settled <= r.len);
        // Each entry has a slot of its own, and the free slots are the others.
        let used = (0..e.len()).fold(0u64, |m, i| {
            let bit = 1u64 << r.order[(r.head as usize + i) & MASK];
            assert_eq!(m & bit, 0, "slot used twice: {:?}", r.order);
            m | bit
        });
        assert_eq!(r.free, !used);
        let mut fresh = EMPTY_RING;
        fresh.fill(r.head, &e);
        assert_eq!(fresh.masks, r.masks, "{e:?}");
        assert_eq!(q.free_ns(unit), e.last().map_or(0, |l| l.end_ns));
        for i in 1..e.len() {
            let joined = e[i - 1].end_ns == e[i].start_ns && e[i - 1].kind == e[i].kind;
            let bit = r.same_kind() & !r.masks[GAPPED] & (1u64 << i) != 0;
            assert_eq!(bit, joined, "{i}: {e:?}");
        }
    }

    #[test]
    fn read_priority_overtakes_queued_programs_but_not_the_running_one() {
        let mut q = UnitQueues::new(1, cfg(true, false, false));
        assert_eq!(q.push(0, Kind::Program, 0, 1_000 * US, 0), 0);
        assert_eq!(q.push(0, Kind::Program, 0, 1_000 * US, 0), 1_000 * US);
        // A read at 100 us waits for the running program only.
        let r = q.read(0, 100 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, 1_000 * US);
        assert_eq!(r.suspended, None);
        // The queued program moved back by the read.
        assert_eq!(q.free_ns(0), 2_050 * US);
        // A second read queues behind the first, still ahead of the program.
        let r = q.read(0, 200 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, 1_050 * US);
        assert_eq!(q.free_ns(0), 2_100 * US);
        well_formed(&q, 0);
    }

    #[test]
    fn fifo_read_waits_for_the_operations_sent_to_the_die() {
        let mut q = UnitQueues::new(1, cfg(false, true, false));
        q.push(0, Kind::Program, 0, 1_000 * US, 0);
        q.push(0, Kind::Program, 0, 1_000 * US, 0);
        // Suspend is on, but the running program is not the one just ahead of the read.
        let r = q.read(0, 100 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, 2_000 * US);
        assert_eq!(r.suspended, None);
    }

    #[test]
    fn fifo_read_waits_for_a_few_operations_not_the_whole_backlog() {
        let mut q = UnitQueues::new(1, cfg(false, false, true));
        for _ in 0..40 {
            q.push(0, Kind::Program, 0, 1_000 * US, 0);
        }
        // Running program + FIRMWARE_AHEAD_OPS queued ones, then the read.
        let r = q.read(0, 100 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, (1 + FIRMWARE_AHEAD_OPS as u64) * 1_000 * US);
        assert_eq!(q.free_ns(0), 40_050 * US);
        well_formed(&q, 0);
    }

    #[test]
    fn suspend_splits_the_running_program_and_resumes_it_with_overhead() {
        let mut q = UnitQueues::new(1, cfg(true, true, false));
        q.push(0, Kind::Program, 0, 1_000 * US, 0);
        q.push(0, Kind::Erase, 0, 3_000 * US, 0);
        let r = q.read(0, 100 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, 120 * US);
        assert_eq!(r.suspended, Some(Kind::Program));
        let e = q.entries_of(0);
        assert_eq!(e.len(), 4);
        assert_eq!((e[0].end_ns, e[0].kind), (120 * US, Kind::Suspending));
        assert_eq!((e[1].start_ns, e[1].end_ns), (120 * US, 170 * US));
        // 880 us left of the program + 10 us resume overhead.
        assert_eq!((e[2].start_ns, e[2].end_ns), (170 * US, 1_060 * US));
        assert_eq!(e[2].suspends, 1);
        assert_eq!((e[3].start_ns, e[3].end_ns), (1_060 * US, 4_060 * US));
        // A read during the suspension joins it without a second suspend.
        let r = q.read(0, 130 * US, 50 * US, 0, true);
        assert_eq!((r.start_ns, r.suspended), (170 * US, None));
        assert_eq!(q.entries_of(0)[3].suspends, 1);
        well_formed(&q, 0);
        // Erase suspend is off: a read during the erase waits for it.
        let r = q.read(0, 2_000 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, 4_110 * US);
    }

    #[test]
    fn a_suspend_takes_effect_at_the_end_of_the_step_running() {
        let mut c = cfg(true, true, true);
        c.program_suspend_step_ns = 40 * US;
        c.erase_suspend_step_ns = 800 * US;
        let mut q = UnitQueues::new(2, c);
        q.push(0, Kind::Program, 0, 600 * US, 0);
        // A read at 50 us: the step running ends at 80 us, then the suspend latency.
        let r = q.read(0, 50 * US, 50 * US, 0, true);
        assert_eq!((r.start_ns, r.suspended), (100 * US, Some(Kind::Program)));
        assert_eq!(r.waits[wait::SUSPEND_STEP], 30 * US);
        assert_eq!(r.waits[wait::SUSPEND_LATENCY], 20 * US);
        // An erase stops at the end of its 800 us step: a read at 100 us waits 700 us for it.
        q.push(1, Kind::Erase, 0, 3_000 * US, 0);
        let r = q.read(1, 100 * US, 50 * US, 0, true);
        assert_eq!((r.start_ns, r.suspended), (820 * US, Some(Kind::Erase)));
        assert_eq!(r.waits[wait::SUSPEND_STEP], 700 * US);
        // The resumed program runs 150-660 us; its steps fall every 40 us from 150 us. A
        // read at 640 us would stop it at 670 us, after its end: the read waits for it.
        let r = q.read(0, 640 * US, 50 * US, 0, true);
        assert_eq!((r.start_ns, r.suspended), (660 * US, None));
        assert_eq!(r.waits[wait::PROGRAMS], 20 * US);
        well_formed(&q, 0);
        well_formed(&q, 1);
    }

    #[test]
    fn a_reads_wait_is_split_among_the_work_ahead_of_it() {
        // No read priority: the running program, then the two operations sent to the die.
        let mut q = UnitQueues::new(1, cfg(false, false, false));
        q.push(0, Kind::Program, 0, 1_000 * US, 0);
        q.push(0, Kind::Erase, 0, 3_000 * US, 0);
        q.read(0, 0, 60 * US, 0, false);
        let r = q.read(0, 400 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, 4_060 * US);
        assert_eq!(r.waits[wait::PROGRAMS], 600 * US);
        assert_eq!(r.waits[wait::ERASES], 3_000 * US);
        assert_eq!(r.waits[wait::INTERNAL_READS], 60 * US);
        assert_eq!(r.waits.iter().sum::<u64>(), r.start_ns - 400 * US);
        // Read priority: a host read passes the internal read queued, then waits for the
        // host read ahead of it.
        let mut q = UnitQueues::new(1, cfg(true, false, false));
        q.push(0, Kind::Program, 0, 1_000 * US, 0);
        q.read(0, 100 * US, 60 * US, 0, false);
        q.read(0, 100 * US, 50 * US, 0, true);
        let r = q.read(0, 200 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, 1_050 * US);
        assert_eq!(r.waits[wait::PROGRAMS], 800 * US);
        assert_eq!(r.waits[wait::HOST_READS], 50 * US);
        assert_eq!(r.waits[wait::INTERNAL_READS], 0);
        // Internal reads count no waits.
        assert_eq!(
            q.read(0, 200 * US, 50 * US, 0, false).waits,
            [0; WAIT_CAUSES.len()]
        );
    }

    #[test]
    fn a_suspension_fits_the_slack_its_die_had_before_the_operation() {
        let mut c = cfg(true, true, true);
        c.suspend_budget = true;
        c.max_suspends_per_op = 8;
        let mut q = UnitQueues::new(4, c);
        // A unit that never worked is idle: its first program may be suspended.
        q.push(0, Kind::Program, 1_000 * US, 600 * US, 0);
        let r = q.read(0, 1_100 * US, 50 * US, 0, true);
        assert_eq!((r.start_ns, r.suspended), (1_120 * US, Some(Kind::Program)));
        // Back to back after a read: the program started as the read ended, with no
        // slack, and a read during it waits for it, as with suspend off.
        q.read(1, 0, 50 * US, 0, false);
        q.push(1, Kind::Program, 0, 600 * US, 0);
        let r = q.read(1, 150 * US, 50 * US, 0, true);
        assert_eq!((r.start_ns, r.suspended), (650 * US, None));
        assert_eq!(r.waits[wait::PROGRAMS], 500 * US);
        // A program queued straight behind another shares the idle time before their
        // burst (200 us): a suspension fits.
        q.read(3, 0, 50 * US, 0, false);
        q.push(3, Kind::Program, 250 * US, 600 * US, 0);
        q.push(3, Kind::Program, 0, 600 * US, 0);
        let r = q.read(3, 1_000 * US, 50 * US, 0, true);
        assert_eq!(r.suspended, Some(Kind::Program));
        // 150 us of idle time before a program: two suspensions of a 50 us read and a
        // 10 us resume overhead fit (120 us), a third does not.
        q.push(2, Kind::Program, 0, 600 * US, 0);
        q.push(2, Kind::Program, 750 * US, 600 * US, 0);
        let mut t = 800 * US;
        let mut suspended = Vec::new();
        for _ in 0..3 {
            let r = q.read(2, t, 50 * US, t, true);
            suspended.push(r.suspended.is_some());
            t = r.start_ns + 50 * US + 200 * US;
        }
        assert_eq!(suspended, [true, true, false]);
        for u in 0..4 {
            well_formed(&q, u);
        }
        // Without the budget every one of them suspends.
        let mut q = UnitQueues::new(
            1,
            SchedulerConfig {
                suspend_budget: false,
                ..c
            },
        );
        q.read(0, 0, 50 * US, 0, false);
        q.push(0, Kind::Program, 0, 600 * US, 0);
        assert!(q.read(0, 150 * US, 50 * US, 0, true).suspended.is_some());
    }

    #[test]
    fn suspensions_per_operation_are_capped() {
        let mut q = UnitQueues::new(1, cfg(true, false, true));
        q.push(0, Kind::Erase, 0, 3_000 * US, 0);
        let mut t = 100 * US;
        let mut starts = Vec::new();
        let mut suspended = 0;
        for _ in 0..3 {
            let r = q.read(0, t, 50 * US, t, true);
            suspended += usize::from(r.suspended.is_some());
            starts.push(r.start_ns);
            t = r.start_ns + 50 * US + 100 * US;
        }
        assert_eq!(suspended, 2);
        // The second read waits until the resumed erase has run its quantum (3 ms / 2
        // suspensions) and the suspend latency; the third waits for the erase: 3 ms
        // stretched by two suspensions of a 50 us read and a 10 us resume overhead each
        // (the suspend latency is progress).
        assert_eq!(starts, vec![120 * US, 1_690 * US, 3_000 * US + 2 * 60 * US]);
        well_formed(&q, 0);
    }

    #[test]
    fn a_program_merged_behind_a_suspended_one_can_be_suspended() {
        let mut q = UnitQueues::new(1, cfg(true, true, false));
        // A program suspended up to its cap (2), a fresh program behind it, then programs
        // and erases in turn until the ring overflows: the only same-kind neighbours are
        // the resumed program and the fresh one, which merge.
        q.push(0, Kind::Program, 0, 1_000 * US, 0);
        assert!(q.read(0, 100 * US, 50 * US, 0, true).suspended.is_some());
        assert!(q.read(0, 800 * US, 50 * US, 0, true).suspended.is_some());
        q.push(0, Kind::Program, 0, 1_000 * US, 0);
        for i in 0..QUEUE_CAP {
            let kind = if i % 2 == 0 {
                Kind::Erase
            } else {
                Kind::Program
            };
            q.push(0, kind, 0, 1_000 * US, 0);
        }
        let merged = q
            .entries_of(0)
            .into_iter()
            .find(|e| e.kind == Kind::Program && e.ops == 2)
            .expect("the resumed program merged with the fresh one");
        // While the fresh program runs, a read suspends it.
        let t = merged.end_ns - 300 * US;
        let r = q.read(0, t, 50 * US, 0, true);
        assert_eq!(r.suspended, Some(Kind::Program), "{:?}", q.entries_of(0));
        assert_eq!(r.start_ns, t + 20 * US);
        well_formed(&q, 0);
    }

    #[test]
    fn a_read_fits_a_gap_before_a_later_program_without_moving_it() {
        let mut q = UnitQueues::new(1, cfg(true, false, false));
        q.push(0, Kind::Program, 500 * US, 1_000 * US, 0);
        let r = q.read(0, 100 * US, 50 * US, 0, true);
        assert_eq!(r.start_ns, 100 * US);
        assert_eq!(q.free_ns(0), 1_500 * US);
        // Too long for the gap left: the program moves.
        let r = q.read(0, 400 * US, 150 * US, 0, true);
        assert_eq!(r.start_ns, 400 * US);
        assert_eq!(q.free_ns(0), 1_550 * US);
        well_formed(&q, 0);
    }

    #[test]
    fn the_ring_stays_bounded_and_ordered() {
        let mut q = UnitQueues::new(2, cfg(true, true, true));
        let mut t = 0;
        for i in 0..1_000u64 {
            match i % 3 {
                0 => {
                    q.push(1, Kind::Program, t, 700 * US, t);
                }
                1 => {
                    q.push(1, Kind::Erase, t, 2_000 * US, t);
                }
                _ => {
                    q.read(1, t, 60 * US, t, true);
                }
            }
            assert!(q.entries_of(1).len() <= QUEUE_CAP);
            well_formed(&q, 1);
            t += 37 * US;
        }
        assert!(q.entries_of(0).is_empty());
    }

    #[test]
    fn merging_keeps_idle_time_out_of_merged_programs() {
        // A die booked far ahead (a drive's write buffer and relocation work give it 100 ms
        // of programs): programs back to back, one that waited 40 ms for its data, then more
        // than the ring holds, so entries merge.
        let mut c = cfg(true, true, true);
        c.max_suspends_per_op = 8;
        let mut q = UnitQueues::new(1, c);
        let prog_ns = 2_600 * US;
        let mut t = 0;
        for _ in 0..QUEUE_CAP - 1 {
            t = q.push(0, Kind::Program, 0, prog_ns, 0) + prog_ns;
        }
        let late = q.push(0, Kind::Program, t + 40_000 * US, prog_ns, 0);
        assert_eq!(late, t + 40_000 * US);
        for _ in 0..8 {
            q.push(0, Kind::Program, 0, prog_ns, 0);
        }
        assert!(q.entries_of(0).len() <= QUEUE_CAP);
        well_formed(&q, 0);
        // Host reads every 300 us from the last back-to-back programs to the end: each
        // waits for a suspension or a program's quantum, never for the idle time or a run
        // of programs lumped with it.
        let mut now = t - 10 * prog_ns;
        let mut worst_ns = 0;
        while now < q.free_ns(0) {
            let r = q.read(0, now, 110 * US, now, true);
            worst_ns = worst_ns.max(r.start_ns - now);
            well_formed(&q, 0);
            now += 300 * US;
        }
        assert!(worst_ns < 1_000 * US, "a read waited {worst_ns} ns");
    }

    /// One pseudo-random operation at `t_ns` on one of two units (xorshift state `x`): a
    /// program, an erase, a host read or an internal read. Returns the unit.
    fn random_step(q: &mut UnitQueues, x: &mut u64, t_ns: u64) -> usize {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        let u = (*x & 1) as usize;
        match (*x >> 8) % 8 {
            0 | 1 => {
                q.push(u, Kind::Program, t_ns, 700 * US, t_ns);
            }
            2 => {
                q.push(u, Kind::Erase, t_ns, 3_000 * US, t_ns);
            }
            3 => {
                q.read(u, t_ns, 60 * US, t_ns, true);
            }
            _ => {
                q.read(u, t_ns, 60 * US, t_ns, false);
            }
        }
        u
    }

    #[test]
    fn host_and_internal_reads_find_their_place_among_merged_work() {
        // Programs, erases, host reads and internal reads in a pseudo-random mix, some in
        // bursts, so the ring merges, splits and suspends: the masks follow every change,
        // and a saved and loaded copy carries on alike.
        let mut q = UnitQueues::new(2, cfg(true, true, true));
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut t = 0;
        let mut copy = None;
        for step in 0..4_000u64 {
            let u = random_step(&mut q, &mut x, t);
            well_formed(&q, u);
            if step % 3 == 0 {
                t += 53 * US;
            }
            if step == 2_000 {
                let mut out = Vec::new();
                let header = flashlab_engine::StateHeader {
                    kind: "drive".into(),
                    config_hash: 1,
                    device_seed: 2,
                    clock_ns: t,
                };
                let mut w = StateWriter::new(&mut out, &header);
                w.section("queues", |w| q.save(w));
                w.finish().unwrap();
                let (mut r, _) = StateReader::new(&out[..], out.len() as u64).unwrap();
                let mut loaded = UnitQueues::new(2, cfg(true, true, true));
                r.section("queues", |r| loaded.load(r)).unwrap();
                r.finish().unwrap();
                for u in 0..2 {
                    assert_eq!(loaded.rings[u].masks, q.rings[u].masks);
                    assert_eq!(loaded.entries_of(u), q.entries_of(u));
                }
                copy = Some((loaded, x, t));
            }
        }
        // The loaded copy, given the same second half, ends the same.
        let (mut c, mut y, mut tc) = copy.expect("saved at step 2000");
        for step in 2_001..4_000u64 {
            random_step(&mut c, &mut y, tc);
            if step % 3 == 0 {
                tc += 53 * US;
            }
        }
        for u in 0..2 {
            assert_eq!(c.entries_of(u), q.entries_of(u));
        }
    }

    #[test]
    fn a_read_moves_later_work_as_far_as_it_overlaps() {
        // Against the plain way on a list: insert, then push each later entry past the end of
        // the one before it until one does not overlap. Rings that wrap, gaps of every size.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..2_000 {
            let n = rand(QUEUE_CAP as u64 - 1) as usize;
            let mut t = 0;
            let mut want = Vec::new();
            for _ in 0..n {
                let start = t + rand(3) * rand(100) * US;
                let dur = (1 + rand(50)) * US;
                want.push(Entry {
                    start_ns: start,
                    end_ns: start + dur,
                    kind: [Kind::Read, Kind::InternalRead, Kind::Program][rand(3) as usize],
                    ..EMPTY
                });
                t = start + dur;
            }
            let mut q = UnitQueues::new(1, cfg(true, true, true));
            q.rings[0].fill(rand(QUEUE_CAP as u64) as u8, &want);
            let p = rand(n as u64 + 1) as usize;
            let start = if p > 0 { want[p - 1].end_ns } else { 0 } + rand(2) * rand(30) * US;
            let e = Entry {
                start_ns: start,
                end_ns: start + (1 + rand(200)) * US,
                kind: Kind::InternalRead,
                ..EMPTY
            };
            want.insert(p, e);
            for i in p + 1..want.len() {
                let prev_end = want[i - 1].end_ns;
                if want[i].start_ns >= prev_end {
                    break;
                }
                let shift = prev_end - want[i].start_ns;
                want[i].start_ns += shift;
                want[i].end_ns += shift;
            }
            let r = &mut q.rings[0];
            let prev_end = if p > 0 {
                want[p - 1].end_ns
            } else {
                r.start_ns
            };
            let slot = Slot {
                dur_ns: e.end_ns - e.start_ns,
                kind: e.kind,
                ..EMPTY_SLOT
            };
            r.place(p, prev_end, start, slot);
            assert_eq!(q.entries_of(0), want);
            well_formed(&q, 0);
        }
    }

    /// Pseudo-random operations on the queues and on the rings that keep absolute times
    /// and move every later entry (`ring_reference`): every placement, start and end agrees,
    /// under each scheduler setting, with bursts that fill the rings (merging and
    /// splitting), floors that lag, reads wanted ahead of time and power cycles.
    #[test]
    fn the_queues_place_work_as_rings_of_absolute_times_do() {
        let mut x = 0x5851_f42d_4c95_7f2du64;
        let mut rand = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for setting in 0..32u64 {
            let mut c = cfg(setting & 1 != 0, setting & 2 != 0, setting & 4 != 0);
            c.suspend_budget = setting & 8 != 0;
            if setting & 16 != 0 {
                c.program_suspend_step_ns = 70 * US;
                c.erase_suspend_step_ns = 300 * US;
                c.max_suspends_per_op = 4;
            }
            let mut q = UnitQueues::new(3, c);
            let mut want = ring_reference::UnitQueues::new(3, c);
            let mut t = 0u64;
            // How often the mix reaches a full ring, merged entries and suspensions.
            let (mut full, mut merged, mut suspended) = (0, 0, 0);
            for step in 0..6_000 {
                let u = rand(3) as usize;
                let floor = t.saturating_sub(rand(4) * rand(2_000) * US);
                let ahead = rand(3) * rand(500) * US;
                match rand(16) {
                    0..=4 => {
                        let dur = (200 + rand(1_500)) * US;
                        let burst = if rand(20) == 0 { 40 } else { 1 };
                        for _ in 0..burst {
                            let got = q.push(u, Kind::Program, t + ahead, dur, floor);
                            assert_eq!(got, want.push(u, Kind::Program, t + ahead, dur, floor));
                        }
                    }
                    5 => {
                        let dur = (1_000 + rand(5_000)) * US;
                        let got = q.push(u, Kind::Erase, t + ahead, dur, floor);
                        assert_eq!(got, want.push(u, Kind::Erase, t + ahead, dur, floor));
                    }
                    6..=14 => {
                        let host = rand(2) == 0;
                        let dur = (20 + rand(100)) * US;
                        let burst = if !host && rand(10) == 0 { 20 } else { 1 };
                        for _ in 0..burst {
                            let got = q.read(u, t + ahead, dur, floor, host);
                            assert_eq!(got, want.read(u, t + ahead, dur, floor, host), "{step}");
                            suspended += usize::from(got.suspended.is_some());
                        }
                    }
                    _ => {
                        if rand(50) == 0 {
                            q.reset(t);
                            want.reset(t);
                        }
                    }
                }
                assert_eq!(
                    q.entries_of(u),
                    want.entries_of(u),
                    "setting {setting}, step {step}"
                );
                assert_eq!(q.free_ns(u), want.free_ns(u));
                well_formed(&q, u);
                let e = q.entries_of(u);
                full += usize::from(e.len() >= QUEUE_CAP - 3);
                merged += usize::from(e.iter().any(|x| x.ops > 1));
                t += rand(3) * rand(200) * US;
            }
            assert!(
                full > 100 && merged > 100,
                "setting {setting}: {full} {merged}"
            );
            if c.read_priority && (c.program_suspend || c.erase_suspend) {
                assert!(suspended > 0, "setting {setting}");
            }
        }
    }
}
