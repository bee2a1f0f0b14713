//! fio's verify phase (`verify=`, `do_verify=1`) for a write or randwrite job: each loop
//! writes its `io_size`, waits for those writes (and `end_fsync`), then reads back what it
//! wrote at the job's `iodepth`; the reads are the job's reads. fio logs each write as it
//! issues it (`log_io_piece`): in a list, read back in issue order, when the file has a
//! random map (random offsets, no `norandommap`, the uniform distribution, not `lfsr`);
//! otherwise in a tree by offset where a later write to a block replaces the earlier one,
//! read back in offset order, each block once.
//!
//! Neither needs a log per write here. Issue order is the generator's own sequence, so a copy
//! of the generator taken where the loop began replays it. Offset order is a bitmap of the
//! blocks written (one block size, aligned writes): one bit per block of the region, at most
//! [`MAX_LOGGED_BLOCKS`].
//!
//! `verify_backlog=N` reads back while writing, as fio 3.33's `check_verify` in `get_io_u`:
//! before each write, if writes are logged and not yet read back (`io_hist_len`), a batch
//! running or a multiple of N of them logged (after a write) starts `verify_backlog_batch`
//! reads (N when 0), each the oldest logged write (or the lowest offset). A batch ends early
//! when nothing is left to read and goes on after the next write, in the next loop too. The
//! check comes before fio looks for a write, so a batch due after the loop's last write reads
//! before the loop ends on finding no write; the verify phase reads the rest.
//! The backlog reads take the write phase's time: fio 3.33 adds `do_io`'s time to reads only
//! for jobs that read (`td_read`), so the read runtime is the verify phase's alone.

use flashlab_engine::{IoKind, SimTime};
use flashlab_workload::{BlockSize, GeneratedIo, IoGenerator, JobSpec, RandomDistribution};

use super::JobClone;

/// Most blocks a bitmap of written blocks covers: 2^29 bits, 64 MiB, a 2 TiB region of 4 KiB
/// blocks. A job whose region holds more is refused.
pub(crate) const MAX_LOGGED_BLOCKS: u64 = 1 << 29;

/// What the read-back phase reads.
#[derive(Debug)]
enum ReadBack {
    /// fio's list: the loop's writes in issue order, replayed from a copy of the generator
    /// (and the I/O it had drawn ahead) taken where the loop began.
    Issue {
        first: Option<GeneratedIo>,
        replay: Box<IoGenerator>,
    },
    /// fio's tree: every block written, once, by offset.
    Offset {
        written: Vec<u64>,
        block_bytes: u64,
        region_start_bytes: u64,
        /// The next block to look at.
        next: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Writing,
    /// The loop's writes are issued: wait for them (and `end_fsync`) to complete.
    Draining,
    Reading,
}

/// A verifying clone's state.
#[derive(Debug)]
pub(super) struct Verify {
    phase: Phase,
    loop_bytes: u64,
    loops_left: u32,
    written_bytes: u64,
    /// Writes logged and not yet read back (fio's `io_hist_len`).
    pending: u64,
    /// `verify_backlog` (0: off) and the reads per batch.
    backlog: u64,
    batch_reads: u64,
    /// Reads left in the running backlog batch (fio's `verify_batch`).
    batch_left: u64,
    /// The last I/O issued was a read (fio's `last_ddir`): a batch starts only after a write.
    last_read: bool,
    end_fsync: bool,
    read_back: ReadBack,
    phase_start_ns: SimTime,
    /// Whole µs each direction's phases took (fio's `elapsed_us`), read and write.
    elapsed_us: [u64; 3],
}

/// What a verifying clone does next.
pub(super) enum Next {
    Io(GeneratedIo),
    /// Nothing until an I/O in flight completes.
    Wait,
    /// The loop's `end_fsync`.
    Flush,
    /// Every loop written and read back.
    Done,
}

impl Verify {
    /// The verify state of a clone of `spec` with generator `generator` (not drawn from
    /// yet), or None when the job reads nothing back. Err says why the job cannot be
    /// simulated as fio runs it.
    pub(super) fn new(spec: &JobSpec, generator: &IoGenerator) -> Result<Option<Self>, String> {
        if !spec.verifies_writes() || spec.verify_never_reads() {
            return Ok(None);
        }
        let (region_start_bytes, region_bytes) = generator.region();
        let loop_bytes = generator.loop_bytes();
        let random_map = spec.io.rw.is_random()
            && !spec.io.norandommap
            && spec.io.random_distribution == RandomDistribution::Random
            && !spec.io.random_generator_lfsr;
        // fio stops a verifying job's loop at `size` unless it writes random offsets without
        // a map (`do_io`'s total_bytes).
        if loop_bytes > region_bytes && !(spec.io.rw.is_random() && spec.io.norandommap) {
            return Err(format!(
                "io_size ({loop_bytes} bytes) above the job's region ({region_bytes} bytes) \
                 (fio stops a verifying job's writes at size)"
            ));
        }
        let fixed_bs = match spec.block.bs[1] {
            BlockSize::Fixed(b) => Some(b),
            _ => None,
        };
        if spec.control.loops > 1 && fixed_bs.is_none_or(|b| !loop_bytes.is_multiple_of(b)) {
            return Err(
                "loops above 1 and a loop that is not a whole number of write blocks (one bs)"
                    .to_string(),
            );
        }
        let read_back = if random_map {
            ReadBack::Issue {
                first: None,
                replay: Box::new(generator.clone()),
            }
        } else {
            let Some(b) = fixed_bs else {
                return Err(
                    "bsrange or bssplit on writes read back in offset order (sequential, \
                     norandommap, a skewed distribution or lfsr): one block size is simulated"
                        .to_string(),
                );
            };
            if spec.block.block_align_bytes[1].is_some_and(|a| a != b)
                || !spec.io.rw_seq_skip_bytes.is_multiple_of(b)
                || !loop_bytes.is_multiple_of(b)
            {
                return Err(
                    "writes read back in offset order that are not aligned to the block size \
                     (blockalign, a skip, or io_size not a multiple of bs)"
                        .to_string(),
                );
            }
            let blocks = region_bytes / b;
            if blocks > MAX_LOGGED_BLOCKS {
                return Err(format!(
                    "a region of {blocks} blocks read back in offset order (the bitmap of \
                     written blocks holds at most {MAX_LOGGED_BLOCKS}; use a larger bs or a \
                     smaller size)"
                ));
            }
            ReadBack::Offset {
                written: vec![0; blocks.div_ceil(64) as usize],
                block_bytes: b,
                region_start_bytes,
                next: 0,
            }
        };
        Ok(Some(Verify {
            phase: Phase::Writing,
            loop_bytes,
            loops_left: spec.control.loops.max(1),
            written_bytes: 0,
            pending: 0,
            backlog: spec.verification.verify_backlog,
            batch_reads: if spec.verification.verify_backlog_batch > 0 {
                spec.verification.verify_backlog_batch
            } else {
                spec.verification.verify_backlog
            },
            batch_left: 0,
            last_read: false,
            end_fsync: spec.sync.end_fsync,
            read_back,
            phase_start_ns: 0,
            elapsed_us: [0; 3],
        }))
    }

    /// The job starts at `now`: its first write phase with it.
    pub(super) fn start(&mut self, now: SimTime) {
        self.phase_start_ns = now;
    }

    fn log_write(&mut self, io: &GeneratedIo) {
        self.written_bytes += io.len_bytes;
        self.last_read = false;
        match &mut self.read_back {
            ReadBack::Issue { .. } => self.pending += 1,
            ReadBack::Offset {
                written,
                block_bytes,
                region_start_bytes,
                next,
            } => {
                // Writes here are whole blocks at block offsets (checked in `new`). A block
                // logged again replaces its entry: the count stays.
                let block = (io.offset_bytes - *region_start_bytes) / *block_bytes;
                if let Some(w) = written.get_mut((block / 64) as usize) {
                    if *w & (1 << (block % 64)) == 0 {
                        self.pending += 1;
                    }
                    *w |= 1 << (block % 64);
                }
                // Backlog reads may have passed it (the writes are sequential, so rarely).
                *next = (*next).min(block);
            }
        }
    }

    /// A backlog read before the next write, if one is due (fio's `check_verify`).
    fn backlog_read(&mut self) -> Option<GeneratedIo> {
        if self.backlog == 0 || self.pending == 0 {
            return None;
        }
        if self.batch_left == 0 {
            if !self.pending.is_multiple_of(self.backlog) || self.last_read {
                return None;
            }
            self.batch_left = self.batch_reads;
        }
        let io = self.next_read()?;
        self.batch_left -= 1;
        self.last_read = true;
        Some(io)
    }

    /// The next read of the logged writes (oldest first, or lowest offset), if any is left.
    fn next_read(&mut self) -> Option<GeneratedIo> {
        if self.pending == 0 {
            return None;
        }
        self.pending -= 1;
        let io = match &mut self.read_back {
            ReadBack::Issue { first, replay } => first.take().or_else(|| replay.next_io())?,
            ReadBack::Offset {
                written,
                block_bytes,
                region_start_bytes,
                next,
            } => {
                let mut word = (*next / 64) as usize;
                let mut bits = written.get(word)? & (!0u64 << (*next % 64));
                while bits == 0 {
                    word += 1;
                    bits = *written.get(word)?;
                }
                let bit = u64::from(bits.trailing_zeros());
                written[word] &= !(1 << bit);
                let block = word as u64 * 64 + bit;
                *next = block + 1;
                GeneratedIo {
                    kind: IoKind::Write,
                    offset_bytes: *region_start_bytes + block * *block_bytes,
                    len_bytes: *block_bytes,
                }
            }
        };
        Some(GeneratedIo {
            kind: IoKind::Read,
            ..io
        })
    }

    /// The phase running at `now` is over: its time counts for its direction.
    fn close_phase(&mut self, now: SimTime) {
        let ddir = if self.phase == Phase::Reading { 0 } else { 1 };
        self.elapsed_us[ddir] += now.saturating_sub(self.phase_start_ns) / 1_000;
        self.phase_start_ns = now;
    }

    /// Each direction's runtime in whole µs once the job ended at `end_ns` (the phase it
    /// ended in counts up to there, as fio adds it after a stop).
    pub(super) fn runtimes_us(&mut self, end_ns: SimTime) -> [u64; 3] {
        self.close_phase(end_ns);
        self.elapsed_us
    }
}

impl JobClone<'_> {
    /// The next step of a verifying clone at `now`: a write of the loop, its end_fsync, a
    /// read back, or a wait for the I/Os in flight between the phases.
    #[cold]
    #[inline(never)]
    pub(super) fn next_verifying(&mut self, now: SimTime) -> Next {
        let Some(mut v) = self.verify.take() else {
            return Next::Done;
        };
        let next = loop {
            match v.phase {
                Phase::Writing => {
                    // fio checks the backlog before it looks for a write, so a batch due
                    // after the loop's last write still reads before the verify phase.
                    if let Some(io) = v.backlog_read() {
                        break Next::Io(io);
                    }
                    if v.written_bytes < v.loop_bytes {
                        if let Some(io) = self.next_generated() {
                            v.log_write(&io);
                            break Next::Io(io);
                        }
                    }
                    v.phase = Phase::Draining;
                    if v.end_fsync {
                        break Next::Flush;
                    }
                }
                Phase::Draining => {
                    if self.in_flight > 0 {
                        break Next::Wait;
                    }
                    v.close_phase(now);
                    v.phase = Phase::Reading;
                }
                Phase::Reading => {
                    if let Some(io) = v.next_read() {
                        break Next::Io(io);
                    }
                    if self.in_flight > 0 {
                        break Next::Wait;
                    }
                    v.close_phase(now);
                    if v.loops_left <= 1 {
                        break Next::Done;
                    }
                    v.loops_left -= 1;
                    // A batch left over goes on in the next loop, as fio keeps `verify_batch`.
                    v.written_bytes = 0;
                    v.phase = Phase::Writing;
                    match &mut v.read_back {
                        ReadBack::Issue { first, replay, .. } => {
                            // The next loop starts with the I/O drawn ahead, if any.
                            *first = self.draw.next;
                            **replay = self.generator.clone();
                        }
                        ReadBack::Offset { next, .. } => *next = 0,
                    }
                }
            }
        };
        self.verify = Some(v);
        next
    }
}
