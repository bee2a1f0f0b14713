//! Internal work (garbage collection, SLC folding, wear levelling) spread over the host writes
//! it pays for.
//!
//! The FTL plans reclamation a whole victim at a time: when free blocks reach the reserve, one
//! host write may empty a dozen nearly full blocks (thousands of page reads and programs). Given
//! to the dies at once, that work sits in every die's queue ahead of the host's next page
//! programs; the write buffer fills behind it and the host stalls for the whole burst (hundreds
//! of milliseconds on a TLC drive). Firmware instead interleaves: it copies a few pages per
//! host page, at the rate that finishes the victims by the time the host has used the space
//! they free. This queue does that between the FTL and the dies:
//! - internal operations wait here in the order the FTL emitted them;
//! - each host page program releases its share: the queued work divided by the host IUs
//!   still to be written before the space it frees is used (the victims' gain: IUs erased
//!   minus IUs copied);
//! - a host (or flush) program to a block whose erase is still queued sends that erase, and
//!   the queued reads of the block it must follow, to the dies first, ahead of their turn (a
//!   block is never programmed before it is erased); the older queued work stays queued
//!   (releasing all of it would give the dies bursts of thousands of operations on a deep
//!   queue).
//!   Only if queued work programs the block before its erase does everything up to the
//!   erase go;
//! - dies left idle take queued work at once, and while the host is idle it goes to the
//!   dies an operation at a time until the die of the next one is booked to the host's
//!   return (`Ssd::background`), which also queues here what idle work has left then;
//! - the queue is bounded by the free space its work stands for: the firmware can put GC
//!   off only while it has free blocks to write the host's data into, so the queued
//!   victims' gain (IUs their erases free less the IUs their copies fill) is at most the
//!   foreground reserve's IUs; beyond it the oldest operations are released. (A cap counted
//!   in victims would hold 4 times the drive's free-space debt per plane on a slice with a
//!   quarter of the dies.) A fixed ring of operations bounds memory as well.
//!
//! Mapping state is the FTL's and does not wait: the FTL decides as it would without the
//! queue (write amplification is the same); the queue moves only when operations reach the
//! dies.

use flashlab_ftl::{NandOp, NandOpKind, OpCause};

/// Whether an operation is internal work the pacing may hold back.
#[inline]
pub(crate) fn is_internal(op: &NandOp) -> bool {
    matches!(
        op.cause,
        OpCause::Gc | OpCause::SlcFold | OpCause::WearLevel | OpCause::Refresh
    )
}

/// A FIFO of internal operations in a fixed ring (every queued GC read, program and erase
/// passes through it, so pushing and releasing are a store or a load and an index step:
/// no growth check, no `Option` per operation).
#[derive(Debug, Clone)]
pub(crate) struct InternalQueue {
    /// `cap` slots; the queued operations are `len` slots from `head` on, wrapping.
    ring: Vec<NandOp>,
    head: usize,
    len: usize,
    /// Host IUs over which the queued work is still to be spread (the queued victims' gain,
    /// less host IUs written since). Signed: a victim's copies are queued before its erase.
    spread_ius: i64,
    /// Per block: sequence number of its latest queued erase (0: none yet). The erase is
    /// still queued while this is above `released`.
    erase_seq: Vec<u64>,
    /// Per block: whether its queued erase frees a static SLC block (else a native one).
    static_erase: Vec<bool>,
    /// Sequence number of the last operation released (the last one queued is
    /// `released + len`).
    released: u64,
    native_block_ius: i64,
    slc_block_ius: i64,
    /// Gain of the queued operations: IUs their erases free less IUs their programs fill.
    gain_ius: i64,
    /// Most `gain_ius` held before the oldest operations are released.
    max_gain_ius: i64,
    /// Most operations held at once, as of the last release (`peak_len` adds the current).
    peak: usize,
    /// Host programs that waited for a queued erase of their block.
    pub forced_erases: u64,
    /// Host programs that found the spread used up with work still queued.
    pub overdue: u64,
    /// Operations released ahead of their turn for programs to blocks with a queued erase.
    pub ops_released_for_erases: u64,
    /// Slots whose operation was taken out of order (`take`) and not yet passed by the
    /// front: they stay in the ring, marked [`TAKEN`], so the ring stays a plain FIFO.
    taken: usize,
}

// The queued work and the pacing's running figures; block sizes are configuration.
flashlab_engine::impl_state!(InternalQueue {
    ring, head, len, spread_ius, erase_seq, static_erase, released, gain_ius, peak,
    forced_erases, overdue, ops_released_for_erases, taken,
} skip { native_block_ius, slc_block_ius, max_gain_ius }
  fixed { ring, erase_seq, static_erase } check InternalQueue::check_loaded);

/// Operations released by [`InternalQueue::release_unsettled`], oldest first as two runs
/// of the ring, with what their gains need.
pub(crate) struct Released<'a> {
    pub older: &'a [NandOp],
    pub newer: &'a [NandOp],
    static_erase: &'a [bool],
    native_block_ius: i64,
    slc_block_ius: i64,
}

impl Released<'_> {
    /// IUs of free space a released operation's completion wins (an erase) or uses (a
    /// program), as the queue counted them when it was queued.
    #[inline(always)]
    pub fn gain(&self, op: &NandOp) -> i64 {
        op_gain(
            op,
            self.static_erase,
            self.native_block_ius,
            self.slc_block_ius,
        )
    }
}

/// IUs of free space an operation's completion wins (an erase of a block of
/// `native_block_ius`, or `slc_block_ius` if `static_erase` marks it) or uses (a program).
#[inline(always)]
fn op_gain(op: &NandOp, static_erase: &[bool], native_block_ius: i64, slc_block_ius: i64) -> i64 {
    match op.kind {
        NandOpKind::Erase if static_erase[op.block as usize] => slc_block_ius,
        NandOpKind::Erase => native_block_ius,
        NandOpKind::Program => -i64::from(op.ius),
        NandOpKind::Read => 0,
    }
}

/// What a slot holds once its operation was taken out of order: a host cause, which no
/// queued operation has (`is_internal`), and a read, which gains nothing. Marking the slot
/// in place keeps the ring a plain array of operations, with no flag or `Option` per slot
/// for every push and release to carry.
const TAKEN: NandOp = NandOp {
    kind: NandOpKind::Read,
    cause: OpCause::HostWrite,
    block: 0,
    page: 0,
    ius: 0,
    slc: false,
};

/// Whether a slot's operation was taken out of order (release and pop pass over it).
#[inline(always)]
pub(crate) fn is_taken(op: &NandOp) -> bool {
    op.cause == OpCause::HostWrite
}

/// Work still queued when its spread is used up is spread over this many more host programs.
const OVERDUE_SPREAD_PROGRAMS: i64 = 1;

const EMPTY_SLOT: NandOp = NandOp {
    kind: NandOpKind::Read,
    cause: OpCause::Gc,
    block: 0,
    page: 0,
    ius: 0,
    slc: false,
};

impl InternalQueue {
    /// A queue for a drive of `blocks` blocks of `native_block_ius` IUs (`slc_block_ius` in
    /// SLC mode), holding at most `cap` operations and `max_gain_ius` of gain.
    pub fn new(
        blocks: u32,
        native_block_ius: u32,
        slc_block_ius: u32,
        cap: usize,
        max_gain_ius: u64,
    ) -> Self {
        InternalQueue {
            ring: vec![EMPTY_SLOT; cap.max(1)],
            head: 0,
            len: 0,
            spread_ius: 0,
            erase_seq: vec![0; blocks as usize],
            static_erase: vec![false; blocks as usize],
            released: 0,
            native_block_ius: i64::from(native_block_ius),
            slc_block_ius: i64::from(slc_block_ius),
            gain_ius: 0,
            max_gain_ius: i64::try_from(max_gain_ius).unwrap_or(i64::MAX),
            peak: 0,
            forced_erases: 0,
            overdue: 0,
            ops_released_for_erases: 0,
            taken: 0,
        }
    }

    /// A loaded queue is one the FTL's work could have left: its window of the ring in
    /// range, every queued operation internal work (or a taken slot) on a block of the
    /// drive, as many taken slots as it counts, its gain the queued operations' gain; each
    /// block's queued erase where its sequence number says; counts within what a run
    /// reaches (2^62), so no sum overflows.
    fn check_loaded(&self) -> Result<(), String> {
        let (cap, blocks) = (self.ring.len(), self.erase_seq.len());
        let big = 1u64 << 62;
        if self.head >= cap
            || self.len > cap
            || self.taken > self.len
            || self.peak > cap
            || self.released > big
            || self.spread_ius.unsigned_abs() > big
        {
            return Err(format!(
                "the pacing queue holds {} operations ({} taken, at most {} at once) from ring slot {} of {cap}, {} released, {} IUs to spread (valid: a window of the ring, counts below 2^62)",
                self.len, self.taken, self.peak, self.head, self.released, self.spread_ius
            ));
        }
        let (mut gain, mut taken) = (0i64, 0usize);
        for i in 0..self.len {
            let op = self.slot(i);
            if !is_internal(op) && !is_taken(op) || op.block as usize >= blocks {
                return Err(format!(
                    "the pacing queue's operation {i} is a {:?} of block {} for {:?} (valid: internal work on one of the {blocks} blocks)",
                    op.kind, op.block, op.cause
                ));
            }
            taken += usize::from(is_taken(op));
            gain += self.op_gain(op);
        }
        if taken != self.taken || gain != self.gain_ius {
            return Err(format!(
                "the pacing queue counts {} taken slots and {} IUs of gain; its operations have {taken} and {gain}",
                self.taken, self.gain_ius
            ));
        }
        let end = self.released + self.len as u64;
        for (block, &seq) in self.erase_seq.iter().enumerate() {
            if seq <= self.released {
                continue;
            }
            let op = (seq <= end).then(|| self.slot((seq - self.released - 1) as usize));
            if !op.is_some_and(|op| op.kind == NandOpKind::Erase && op.block as usize == block) {
                return Err(format!(
                    "the pacing queue names operation {seq} as block {block}'s queued erase, and it is not (valid: an erase of the block among operations {} to {end})",
                    self.released + 1
                ));
            }
        }
        Ok(())
    }

    /// Operations held now.
    pub fn held(&self) -> usize {
        self.len - self.taken
    }

    /// The operation `i` slots behind the front ([`TAKEN`] if it was taken).
    #[inline(always)]
    pub fn slot(&self, i: usize) -> &NandOp {
        let mut at = self.head + i;
        if at >= self.ring.len() {
            at -= self.ring.len();
        }
        &self.ring[at]
    }

    /// Take the operation `i` slots behind the front out of order, to give it to the dies
    /// now. The caller keeps the order the operations depend on (see `Ssd::take_erase`);
    /// a queued erase taken here no longer holds back a program to its block.
    pub fn take(&mut self, i: usize) -> NandOp {
        debug_assert!(i < self.len);
        let mut at = self.head + i;
        if at >= self.ring.len() {
            at -= self.ring.len();
        }
        let op = self.ring[at];
        debug_assert!(!is_taken(&op), "slot {i} taken twice");
        self.gain_ius -= self.op_gain(&op);
        if op.kind == NandOpKind::Erase
            && self.erase_seq[op.block as usize] == self.released + i as u64 + 1
        {
            self.erase_seq[op.block as usize] = 0;
        }
        self.ring[at] = TAKEN;
        self.taken += 1;
        op
    }

    /// Most operations held at once.
    pub fn peak_len(&self) -> usize {
        self.peak.max(self.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len == self.taken
    }

    /// No room for another operation: release the oldest one before pushing.
    #[inline(always)]
    pub fn is_full(&self) -> bool {
        self.len == self.ring.len()
    }

    /// The queued work stands for more free space than the firmware can put off: release
    /// the oldest operations until it does not.
    #[inline(always)]
    pub fn over_gain(&self) -> bool {
        self.gain_ius > self.max_gain_ius
    }

    /// Operations to release so that the queue's gain is within its bound: up to and
    /// including the erases whose blocks take it back under (all of them if needed).
    pub fn due_for_gain(&self) -> usize {
        let mut excess = self.gain_ius - self.max_gain_ius;
        let cap = self.ring.len();
        let mut at = self.head;
        let mut n = 0;
        while excess > 0 && n < self.len {
            let op = &self.ring[at];
            excess -= self.op_gain(op);
            n += 1;
            at += 1;
            if at == cap {
                at = 0;
            }
        }
        n
    }

    /// IUs of free space an operation's completion wins (an erase) or uses (a program).
    #[inline(always)]
    fn op_gain(&self, op: &NandOp) -> i64 {
        op_gain(
            op,
            &self.static_erase,
            self.native_block_ius,
            self.slc_block_ius,
        )
    }

    pub fn front(&self) -> Option<&NandOp> {
        if self.len == 0 {
            None
        } else {
            Some(&self.ring[self.head])
        }
    }

    /// Queue an internal operation (`static_slc`: an erase of a static SLC block, which frees
    /// an SLC block; any other erase frees a native block, dynamic SLC blocks included). The
    /// queue must not be full (`is_full`).
    #[inline(always)]
    pub fn push(&mut self, op: NandOp, static_slc: bool) {
        debug_assert!(!self.is_full(), "push to a full pacing queue");
        match op.kind {
            NandOpKind::Erase => {
                self.erase_seq[op.block as usize] = self.released + self.len as u64 + 1;
                self.static_erase[op.block as usize] = static_slc;
                let gain = if static_slc {
                    self.slc_block_ius
                } else {
                    self.native_block_ius
                };
                self.spread_ius += gain;
                self.gain_ius += gain;
            }
            NandOpKind::Program => {
                self.spread_ius -= i64::from(op.ius);
                self.gain_ius -= i64::from(op.ius);
            }
            NandOpKind::Read => {}
        }
        let mut at = self.head + self.len;
        if at >= self.ring.len() {
            at -= self.ring.len();
        }
        self.ring[at] = op;
        self.len += 1;
    }

    /// Queue the internal operations `ops` starts with (up to its first operation that is
    /// not internal work) at once, as `push` one by one would, and return how many; the run
    /// is found while it is copied. Queues nothing and returns None unless all of `ops`
    /// fits (then the caller measures the run and queues it as it fits).
    #[inline(always)]
    pub fn push_internal_prefix(
        &mut self,
        ops: &[NandOp],
        static_slc: impl Fn(u32) -> bool,
    ) -> Option<usize> {
        if ops.len() > self.ring.len() - self.len {
            return None;
        }
        Some(self.push_until_not_internal(ops, static_slc))
    }

    /// Queue a run of internal operations at once, as `push` one by one would
    /// (`static_slc(block)`: whether the block is a static SLC block). Queues nothing and
    /// returns false when they do not all fit.
    #[inline(always)]
    pub fn push_run(&mut self, ops: &[NandOp], static_slc: impl Fn(u32) -> bool) -> bool {
        let cap = self.ring.len();
        if ops.len() > cap - self.len {
            return false;
        }
        debug_assert!(ops.iter().all(is_internal));
        let n = self.push_until_not_internal(ops, static_slc);
        debug_assert_eq!(n, ops.len());
        true
    }

    /// Queue `ops` (which fit) up to the first that is not internal work; returns how many.
    #[inline(always)]
    fn push_until_not_internal(
        &mut self,
        ops: &[NandOp],
        static_slc: impl Fn(u32) -> bool,
    ) -> usize {
        let cap = self.ring.len();
        let mut at = self.head + self.len;
        if at >= cap {
            at -= cap;
        }
        let first_run = ops.len().min(cap - at);
        // Copied in the same pass as the accounting, so each operation is read once.
        let mut seq = self.released + self.len as u64;
        // The spread is only read between runs, so the run's effect is summed apart.
        let mut spread_ius = 0i64;
        let erase_seq = &mut self.erase_seq;
        let static_erase = &mut self.static_erase;
        let (native_ius, slc_ius) = (self.native_block_ius, self.slc_block_ius);
        let mut queue = |slot: &mut NandOp, op: &NandOp| {
            *slot = *op;
            seq += 1;
            match op.kind {
                NandOpKind::Program => spread_ius -= i64::from(op.ius),
                NandOpKind::Erase => {
                    erase_seq[op.block as usize] = seq;
                    let slc = static_slc(op.block);
                    static_erase[op.block as usize] = slc;
                    spread_ius += if slc { slc_ius } else { native_ius };
                }
                NandOpKind::Read => {}
            }
        };
        let (before, from) = self.ring.split_at_mut(at);
        let (head_ops, wrapped_ops) = ops.split_at(first_run);
        let mut n = 0;
        'copy: for (slots, ops) in [(from, head_ops), (before, wrapped_ops)] {
            for (slot, op) in slots.iter_mut().zip(ops) {
                if !is_internal(op) {
                    break 'copy;
                }
                queue(slot, op);
                n += 1;
            }
        }
        // Before the run, spread and gain differ only by host IUs written since.
        self.spread_ius += spread_ius;
        self.gain_ius += spread_ius;
        self.len += n;
        n
    }

    /// The oldest operation not taken yet, released.
    pub fn pop(&mut self) -> Option<NandOp> {
        loop {
            let (a, _) = self.release(1);
            match a.first() {
                Some(op) if is_taken(op) => continue,
                found => return found.copied(),
            }
        }
    }

    /// Release the `n` oldest queued operations (all of them if fewer are held); returns
    /// them, oldest first, as two runs of the ring.
    #[inline(always)]
    pub fn release(&mut self, n: usize) -> (&[NandOp], &[NandOp]) {
        let (start, first_run, n) = self.pop_front(n);
        let (mut gain, mut taken) = (0, 0);
        // An emptied queue settles without the sums.
        if self.len > 0 {
            let released = self.ring[start..start + first_run]
                .iter()
                .chain(&self.ring[..n - first_run]);
            // Taken slots are rare (forced erases): most releases count none.
            if self.taken == 0 {
                for op in released {
                    gain += self.op_gain(op);
                }
            } else {
                for op in released {
                    gain += self.op_gain(op);
                    taken += usize::from(is_taken(op));
                }
            }
        }
        self.settle(gain, taken);
        (
            &self.ring[start..start + first_run],
            &self.ring[..n - first_run],
        )
    }

    /// Take the `n` oldest operations (at most all) off the queue's front: returns where
    /// they start in the ring, how many lie before its end, and how many there are. The
    /// slots keep the operations until they are queued over.
    #[inline(always)]
    fn pop_front(&mut self, n: usize) -> (usize, usize, usize) {
        let n = n.min(self.len);
        self.peak = self.peak.max(self.len);
        self.released += n as u64;
        self.len -= n;
        let start = self.head;
        let first_run = n.min(self.ring.len() - start);
        self.head += n;
        if self.head >= self.ring.len() {
            self.head -= self.ring.len();
        }
        (start, first_run, n)
    }

    /// [`Self::release`] for a caller that passes over the released operations anyway: the
    /// queue's gain and taken count are left for [`Self::settle`], which takes the
    /// caller's sums, so the operations are read once rather than twice. Nothing may use
    /// the queue in between.
    /// A release does not end before a fold's program ([`Self::through_programs`]).
    #[inline(always)]
    pub fn release_unsettled(&mut self, n: usize) -> Released<'_> {
        let n = self.through_programs(n);
        let (start, first_run, n) = self.pop_front(n);
        Released {
            older: &self.ring[start..start + first_run],
            newer: &self.ring[..n - first_run],
            static_erase: &self.static_erase,
            native_block_ius: self.native_block_ius,
            slc_block_ius: self.slc_block_ius,
        }
    }

    /// `n`, the operations a release is due to give the dies, extended past the fold
    /// programs queued right behind them (at most all held). The fold queues a die's
    /// programs together, after the reads that feed them (`Ftl::gather_die_programs`): a
    /// release that ended between them would give the die one plane's page to start alone,
    /// its other plane's page a host page later, where firmware sends the die its
    /// multi-plane program with the reads it copies. Extended, a release gives the dies at
    /// most a plane's worth of programs more than its share, which later shares take back
    /// (a share is the queue's length over the spread left).
    #[inline(always)]
    fn through_programs(&self, n: usize) -> usize {
        let mut n = n.min(self.len);
        while n > 0 && n < self.len && {
            let op = self.slot(n);
            op.kind == NandOpKind::Program && op.cause == OpCause::SlcFold
        } {
            n += 1;
        }
        n
    }

    /// Settle a [`Self::release_unsettled`]: `gain`, the released operations' gain
    /// ([`Released::gain`] summed), and `taken`, how many of them were taken slots.
    #[inline(always)]
    pub fn settle(&mut self, gain: i64, taken: usize) {
        if self.len == 0 {
            self.spread_ius = 0;
            self.gain_ius = 0;
            self.taken = 0;
        } else {
            self.gain_ius -= gain;
            self.taken -= taken;
        }
    }

    /// Slot (from the front) of `block`'s queued erase, if it is still queued.
    #[inline(always)]
    pub fn queued_erase(&self, block: u32) -> Option<usize> {
        let seq = self.erase_seq[block as usize];
        (seq > self.released).then(|| (seq - self.released - 1) as usize)
    }

    /// Whether the operations before slot `upto` leave `block`'s erase there free to run
    /// after its own reads alone: none of them programs `block` (a program to it would have
    /// to run before the reads of what it wrote). If so, the slot of the first operation on
    /// `block` not taken yet (`upto` if none comes before): the caller gives the block's
    /// operations to the dies from there, not from the front. A deep queue holds tens of
    /// thousands of operations before an erase and a victim's reads sit in the few hundred
    /// just before it, so the scan for them does not pass the whole queue a second time.
    pub fn erase_reads_from(&self, block: u32, upto: usize) -> Option<usize> {
        debug_assert!(upto < self.len);
        // Slots 0..upto as (at most) two runs of the ring, scanned without a wrap check per
        // slot.
        let start = self.head;
        let first_run = upto.min(self.ring.len() - start);
        let runs = [
            (0, &self.ring[start..start + first_run]),
            (first_run, &self.ring[..upto - first_run]),
        ];
        let mut first = upto;
        for (base, run) in runs {
            for (k, op) in run.iter().enumerate() {
                if op.block == block && !is_taken(op) {
                    if op.kind == NandOpKind::Program {
                        return None;
                    }
                    first = first.min(base + k);
                }
            }
        }
        Some(first)
    }

    /// Operations to release before a program of `ius` IUs to `block`: all up to the block's
    /// queued erase, and for host data (`host`) at least its share of the queue.
    #[inline(always)]
    pub fn due_before_program(&mut self, block: u32, ius: u32, host: bool) -> usize {
        let seq = self.erase_seq[block as usize];
        let forced = if seq > self.released {
            self.forced_erases += 1;
            self.ops_released_for_erases += seq - self.released;
            (seq - self.released) as usize
        } else {
            0
        };
        if !host || self.len == 0 {
            return forced;
        }
        let n = i64::from(ius);
        let len = (self.len - self.taken) as i64;
        // ceil(len * n / spread): the queue is empty when the spread is used up. Should the
        // estimate run out first, the rest is spread over a few more host programs rather
        // than released in one burst.
        if self.spread_ius <= n {
            self.overdue += 1;
        }
        let spread = self.spread_ius.max(n * OVERDUE_SPREAD_PROGRAMS);
        let share = (len * n + spread - 1) / spread;
        self.spread_ius -= n;
        forced.max(share as usize)
    }

    /// Bytes of the ring of queued operations (sized once, at the cap).
    pub fn ring_bytes(&self) -> usize {
        self.ring.capacity() * std::mem::size_of::<NandOp>()
    }

    pub fn memory_bytes(&self) -> usize {
        self.ring.capacity() * std::mem::size_of::<NandOp>()
            + self.erase_seq.capacity() * 8
            + self.static_erase.capacity()
    }
}

/// Free space the pacing queue may put off reclaiming, in IUs: the foreground reserve
/// (`ftl.gc_foreground_free_blocks` blocks). Deferring GC spends free blocks on host data;
/// a firmware that deferred more than its reserve would run out of blocks to write into
/// before the deferred work came back. The reserve is per (die, plane) unit (2 each by
/// default), so a slice with a fraction of the dies defers the same per plane as the drive.
pub(crate) fn internal_queue_gain_ius(foreground_free_blocks: u64, ius_per_block: u64) -> u64 {
    foreground_free_blocks * ius_per_block
}

/// Victims the pacing queue's ring holds: enough for the gain bound with victims of the
/// least gain greedy selection takes on a full drive. Greedy's victim has at least the
/// average invalid share of the data blocks, the drive's effective spare `s` (spare IUs
/// beside the blocks steady writing keeps out of the data's reach, over the data blocks'
/// IUs), so the bound is at most `reserve / s` victims. Victims of less gain (right after
/// a fill, or folds) meet the ring's end first and go to the dies oldest first.
pub(crate) fn internal_queue_victims(
    units: u64,
    native_blocks: u64,
    foreground_free_blocks: u64,
    ius_per_block: u64,
    user_ius: u64,
) -> u64 {
    // Host and GC streams only: an SLC cache's streams move the estimate by under a block
    // per unit, and a ring too short for a burst of small-gain victims releases the oldest.
    let held = crate::reserve::steady_held_blocks(units, foreground_free_blocks, 0);
    let data_ius = native_blocks.saturating_sub(held) * ius_per_block;
    // The FTL refuses a drive whose data blocks cannot hold the user IUs; at least 1 IU of
    // spare keeps the division defined for any accepted drive.
    let spare_ius = data_ius.saturating_sub(user_ius).max(1);
    let gain = internal_queue_gain_ius(foreground_free_blocks, ius_per_block);
    (gain as u128 * data_ius as u128)
        .div_ceil(spare_ius as u128 * ius_per_block as u128)
        .min(u128::from(native_blocks)) as u64
}

/// Bytes of the pacing queue's ring (sized once: a read and a program per page and an
/// erase for each of `internal_queue_victims`).
pub fn internal_queue_bytes(
    units: u64,
    native_blocks: u64,
    foreground_free_blocks: u64,
    pages_per_block: u64,
    ius_per_block: u64,
    user_ius: u64,
) -> u64 {
    let victims = internal_queue_victims(
        units,
        native_blocks,
        foreground_free_blocks,
        ius_per_block,
        user_ius,
    );
    victims * (2 * pages_per_block + 1) * std::mem::size_of::<NandOp>() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forgery: what the refusal must say, and the edit.
    type Forge<'a, T> = (&'a str, &'a dyn Fn(&mut T));

    fn op(kind: NandOpKind, block: u32, ius: u32) -> NandOp {
        NandOp {
            kind,
            cause: OpCause::Gc,
            block,
            page: 0,
            ius,
            slc: false,
        }
    }

    #[test]
    fn a_release_settled_by_the_caller_leaves_the_queue_as_a_release_does() {
        let mut plain = InternalQueue::new(16, 16, 4, 40, u64::MAX);
        let mut settled = plain.clone();
        let state =
            |q: &InternalQueue| (q.len, q.head, q.released, q.gain_ius, q.spread_ius, q.taken);
        for round in 0..30u32 {
            for q in [&mut plain, &mut settled] {
                // Victims on rotating blocks, wrapping the ring.
                while q.len + 7 <= q.ring.len() {
                    let b = (round * 3 + q.len as u32) % 16;
                    victim(q, b, (b + 5) % 16);
                }
                if round % 4 == 1 {
                    q.take(6);
                }
            }
            let n = (round as usize * 5) % 23 + 1;
            let want: Vec<NandOp> = {
                let (a, b) = plain.release(n);
                a.iter().chain(b).copied().collect()
            };
            let r = settled.release_unsettled(n);
            let got: Vec<NandOp> = r.older.iter().chain(r.newer).copied().collect();
            let gain = got.iter().filter(|o| !is_taken(o)).map(|o| r.gain(o)).sum();
            let taken = got.iter().filter(|o| is_taken(o)).count();
            settled.settle(gain, taken);
            assert_eq!(got, want, "round {round}");
            assert_eq!(state(&settled), state(&plain), "round {round}");
        }
    }

    #[test]
    fn a_release_does_not_end_before_a_fold_program() {
        let mut q = InternalQueue::new(16, 16, 4, 40, u64::MAX);
        let fold = |kind, block, ius| NandOp {
            cause: OpCause::SlcFold,
            ..op(kind, block, ius)
        };
        // A die's two planes' pages: their two source reads, then the pair of programs.
        for _ in 0..2 {
            q.push(fold(NandOpKind::Read, 1, 4), false);
            q.push(fold(NandOpKind::Read, 2, 4), false);
            q.push(fold(NandOpKind::Program, 8, 4), false);
            q.push(fold(NandOpKind::Program, 9, 4), false);
        }
        // GC's programs are released as counted.
        q.push(op(NandOpKind::Read, 3, 4), false);
        q.push(op(NandOpKind::Program, 10, 4), false);
        q.push(op(NandOpKind::Program, 11, 4), false);
        let released = |q: &mut InternalQueue, n| {
            let r = q.release_unsettled(n);
            let got: Vec<NandOp> = r.older.iter().chain(r.newer).copied().collect();
            let gain = got.iter().map(|o| r.gain(o)).sum();
            q.settle(gain, 0);
            got.iter().map(|o| o.block).collect::<Vec<_>>()
        };
        assert_eq!(released(&mut q, 1), [1]);
        assert_eq!(released(&mut q, 1), [2, 8, 9]);
        assert_eq!(released(&mut q, 3), [1, 2, 8, 9]);
        assert_eq!(released(&mut q, 2), [3, 10]);
        assert_eq!(released(&mut q, 5), [11]);
        assert!(q.is_empty());
    }

    /// One victim: 3 pages of 4 IUs read and rewritten, then its erase (16-IU blocks: gain 4).
    fn victim(q: &mut InternalQueue, block: u32, dest: u32) {
        for _ in 0..3 {
            assert!(q.push_op(op(NandOpKind::Read, block, 4)).is_none());
            assert!(q.push_op(op(NandOpKind::Program, dest, 4)).is_none());
        }
        assert!(q.push_op(op(NandOpKind::Erase, block, 0)).is_none());
    }

    impl InternalQueue {
        fn push_op(&mut self, op: NandOp) -> Option<NandOp> {
            let out = if self.is_full() { self.pop() } else { None };
            self.push(op, false);
            out
        }
    }

    /// A forged pacing queue is refused at load: a window past the ring, an operation on a
    /// block past the drive or not internal work, counts of gain or taken slots that
    /// disagree with the operations, an erase sequence that names no erase of its block, a
    /// ring of another size. A real queue loads and releases its work.
    #[test]
    fn forged_pacing_queues_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let fresh = || InternalQueue::new(8, 16, 4, 40, u64::MAX);
        let mut q = fresh();
        victim(&mut q, 1, 2);
        victim(&mut q, 3, 2);
        q.pop();
        let mut ok = fresh();
        reload_into(&q, &mut ok).unwrap();
        assert_eq!(ok.queued_erase(3), Some(12));
        while ok.pop().is_some() {}
        let cases: [Forge<InternalQueue>; 7] = [
            ("from ring slot 40 of 40", &|f| f.head = 40),
            ("41 operations", &|f| f.len = 41),
            ("of block 8 for Gc", &|f| f.ring[2].block = 8),
            ("for HostRead", &|f| f.ring[2].cause = OpCause::HostRead),
            ("IUs of gain", &|f| f.gain_ius += 1),
            ("block 5's queued erase", &|f| f.erase_seq[5] = 3),
            (
                "ring holds 39 entries where this configuration has 40",
                &|f| {
                    f.ring.pop();
                },
            ),
        ];
        for (want, forge) in cases {
            let mut forged = q.clone();
            forge(&mut forged);
            let e = reload_into(&forged, &mut fresh()).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn work_is_spread_over_the_host_ius_the_victim_frees() {
        let mut q = InternalQueue::new(8, 16, 4, 100, u64::MAX);
        victim(&mut q, 1, 2);
        assert_eq!(q.held(), 7);
        // Gain 16 - 12 = 4 IUs: a 1-IU host program takes ceil(7/4) = 2, and so on; the
        // fourth host IU empties the queue.
        let mut released = Vec::new();
        for _ in 0..4 {
            let n = q.due_before_program(5, 1, true);
            for _ in 0..n {
                q.pop().unwrap();
            }
            released.push(n);
        }
        assert_eq!(released, vec![2, 2, 2, 1]);
        assert!(q.is_empty());
    }

    #[test]
    fn a_program_to_a_block_with_a_queued_erase_waits_for_it() {
        let mut q = InternalQueue::new(8, 16, 4, 100, u64::MAX);
        victim(&mut q, 1, 2);
        victim(&mut q, 3, 2);
        // Block 3's erase is the 14th operation: a flush program to it releases all 14.
        assert_eq!(q.due_before_program(3, 4, false), 14);
        assert_eq!(q.forced_erases, 1);
        for _ in 0..7 {
            q.pop();
        }
        // Half released: block 1's erase is done, block 3's is 7 operations away.
        assert_eq!(q.due_before_program(1, 4, false), 0);
        assert_eq!(q.due_before_program(3, 4, false), 7);
    }

    #[test]
    fn an_erase_taken_out_of_order_leaves_the_rest_queued_and_skipped_later() {
        let mut q = InternalQueue::new(8, 16, 4, 100, u64::MAX);
        victim(&mut q, 1, 2);
        victim(&mut q, 3, 2);
        assert_eq!(q.queued_erase(3), Some(13));
        // Block 3's reads start at slot 7, after block 1's victim.
        assert_eq!(q.erase_reads_from(3, 13), Some(7));
        // Block 2 is programmed before block 3's erase, so its erase would need more.
        assert_eq!(q.erase_reads_from(2, 13), None);
        // Nothing of block 5 before the slot: from the slot itself.
        assert_eq!(q.erase_reads_from(5, 13), Some(13));
        let gain_before = q.gain_ius;
        let erase = q.take(13);
        assert_eq!((erase.kind, erase.block), (NandOpKind::Erase, 3));
        assert_eq!(q.queued_erase(3), None);
        assert_eq!(q.due_before_program(3, 4, false), 0);
        assert_eq!(q.gain_ius, gain_before - 16);
        assert_eq!(q.held(), 13);
        // The front passes over the taken slot.
        let mut kinds = Vec::new();
        while let Some(op) = q.pop() {
            kinds.push((op.kind, op.block));
        }
        assert_eq!(kinds.len(), 13);
        assert!(!kinds.contains(&(NandOpKind::Erase, 3)));
        assert!(q.is_empty());
        assert_eq!(q.gain_ius, 0);
    }

    #[test]
    fn a_full_queue_releases_its_oldest_operation() {
        let mut q = InternalQueue::new(8, 16, 4, 3, u64::MAX);
        q.push_op(op(NandOpKind::Read, 1, 4));
        q.push_op(op(NandOpKind::Program, 2, 4));
        q.push_op(op(NandOpKind::Read, 1, 4));
        let out = q.push_op(op(NandOpKind::Erase, 1, 0)).unwrap();
        assert_eq!(out.kind, NandOpKind::Read);
        assert_eq!((q.held(), q.peak_len()), (3, 3));
        while q.pop().is_some() {}
        assert!(q.is_empty());
        assert_eq!(q.due_before_program(1, 4, true), 0);
    }

    #[test]
    fn the_queue_defers_at_most_its_gain_bound_and_releases_whole_victims_beyond_it() {
        // Victims of gain 4 (16-IU blocks, 12 IUs copied); a bound of two victims' gain.
        let mut q = InternalQueue::new(8, 16, 4, 100, 8);
        victim(&mut q, 1, 2);
        victim(&mut q, 3, 2);
        assert!(!q.over_gain());
        victim(&mut q, 4, 2);
        assert!(q.over_gain());
        // The oldest victim, up to and including its erase, takes the gain back to 8.
        assert_eq!(q.due_for_gain(), 7);
        q.release(7);
        assert!(!q.over_gain());
        assert_eq!(q.held(), 14);
        // Its reads and programs alone would not: the erase is what frees the space.
        q.release(6);
        assert!(q.over_gain());
        assert_eq!(q.due_for_gain(), 1);
    }

    proptest::proptest! {
        /// Queuing a run at once leaves the queue as pushing it one operation at a time
        /// does, wherever the run starts in the ring (wrapping included); a run that does not
        /// fit is refused and changes nothing.
        #[test]
        fn a_run_queues_as_its_operations_one_by_one(
            cap in 1usize..12,
            before in proptest::collection::vec((0u8..3, 0u32..8, 1u32..5), 0..12),
            released in 0usize..12,
            run in proptest::collection::vec((0u8..3, 0u32..8, 1u32..5), 0..12),
            host_ius in 1u32..4,
            host_at in 0usize..14,
        ) {
            let to_op = |&(k, block, ius): &(u8, u32, u32)| {
                let kind = [NandOpKind::Read, NandOpKind::Program, NandOpKind::Erase][k as usize];
                op(kind, block, ius)
            };
            // Block 6 stands for a static SLC block.
            let static_slc = |block: u32| block == 6;
            let mut a = InternalQueue::new(8, 16, 4, cap, u64::MAX);
            for o in before.iter().map(to_op) {
                if a.is_full() {
                    a.pop();
                }
                a.push(o, o.kind == NandOpKind::Erase && static_slc(o.block));
            }
            a.release(released);
            let mut b = a.clone();
            let mut c = a.clone();
            let run: Vec<NandOp> = run.iter().map(to_op).collect();
            let fits = run.len() <= cap - a.held();
            proptest::prop_assert_eq!(a.push_run(&run, static_slc), fits);
            // The run followed by a host operation (and more internal work after it, not
            // part of the run) queues as the run, when all of it fits.
            let mut tail = run.clone();
            let host = NandOp { cause: OpCause::HostWrite, ..op(NandOpKind::Program, 7, 4) };
            if host_at <= run.len() {
                tail.push(host);
                tail.extend_from_slice(&run[..host_at]);
            }
            let room = cap - c.held();
            match c.push_internal_prefix(&tail, static_slc) {
                Some(n) => {
                    proptest::prop_assert!(tail.len() <= room);
                    proptest::prop_assert_eq!(n, run.len());
                    proptest::prop_assert_eq!(c.held(), a.held());
                    proptest::prop_assert_eq!(c.gain_ius, a.gain_ius);
                    proptest::prop_assert_eq!(c.spread_ius, a.spread_ius);
                    let mut a3 = a.clone();
                    while let Some(x) = c.pop() {
                        proptest::prop_assert_eq!(a3.pop(), Some(x));
                    }
                    proptest::prop_assert!(a3.is_empty());
                }
                None => proptest::prop_assert!(tail.len() > room),
            }
            if fits {
                for &o in &run {
                    b.push(o, o.kind == NandOpKind::Erase && static_slc(o.block));
                }
            }
            proptest::prop_assert_eq!(a.held(), b.held());
            proptest::prop_assert_eq!(a.gain_ius, b.gain_ius);
            proptest::prop_assert_eq!(a.peak_len(), b.peak_len());
            for block in 0..8 {
                let (mut a2, mut b2) = (a.clone(), b.clone());
                proptest::prop_assert_eq!(
                    a2.due_before_program(block, host_ius, true),
                    b2.due_before_program(block, host_ius, true)
                );
            }
            while let Some(x) = b.pop() {
                proptest::prop_assert_eq!(a.pop(), Some(x));
            }
            proptest::prop_assert!(a.is_empty());
        }
    }
}

#[cfg(test)]
mod queue_cap_tests {
    use super::*;

    #[test]
    fn the_pacing_queue_defers_at_most_the_reserve_and_holds_it_in_the_least_gainful_victims() {
        // generic-tlc-256gb: 32 units, 700 blocks each, 768 pages of 4 IUs, 256 GB user, a
        // reserve of 2 blocks per unit: 64 blocks' IUs, and 8.6% effective spare.
        let (units, ipb) = (32, 768 * 4);
        let user_ius = 256_000_000_000 / 4096;
        assert_eq!(internal_queue_gain_ius(64, ipb), 64 * ipb);
        let full = internal_queue_victims(units, units * 700, 64, ipb, user_ius);
        // Half or a quarter of its dies with the same effective spare: the same per unit.
        let half = internal_queue_victims(16, 16 * 700, 32, ipb, user_ius / 2);
        let quarter = internal_queue_victims(8, 8 * 700, 16, ipb, user_ius / 4);
        assert!(full.abs_diff(2 * half) <= 2 && full.abs_diff(4 * quarter) <= 4);
        // A victim gains at most a block, and greedy's gains at least the spare share of one:
        // between the reserve's blocks and the reserve over the spare (8.6%: ~744).
        assert!((64..=64 * 100 / 8).contains(&full), "{full}");
        // tiny-test-1gb: 4 units, 88 blocks of 192 x 4 IUs, 4.8% effective spare: the bound
        // (8 / 0.048 ~ 167 victims) fits in its 352 blocks.
        let tiny = internal_queue_victims(4, 4 * 88, 8, 192 * 4, 1_000_000_000 / 4096);
        assert!((8..4 * 88).contains(&tiny), "{tiny}");
    }
}
