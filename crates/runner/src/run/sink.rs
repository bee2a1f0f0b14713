//! Where a clone's statistics go: kept by the clone and updated at once (one thread), or
//! sent in order to a second thread that keeps every clone's statistics (`RunOptions::threads`
//! of two or more), so the run loop and the device go on while the latencies are put into
//! histograms and logs.
//!
//! A clone's [`JobStats`] depend on nothing but the calls made on them, in their order, and the
//! run loop reads nothing back from them before the run ends: applying the same calls in the
//! same order on another thread gives the same result, byte for byte. The calls travel in
//! batches of [`BATCH_OPS`] through a channel holding at most [`BATCHES_IN_FLIGHT`]; the
//! batches are allocated once and come back empty, so the memory is bounded and nothing is
//! allocated per I/O. A full channel holds the run loop until the statistics thread catches
//! up.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, SyncSender};

use flashlab_report::{JobResult, JobStats};

/// Calls per batch: enough that a batch's hand-over (a lock and perhaps a wake-up) is small
/// beside the statistics of the I/Os in it, few enough that the bound below stays small.
pub(super) const BATCH_OPS: usize = 4096;
/// Full batches waiting for the statistics thread at most: with the batch being filled and
/// the one being applied, `BATCHES_IN_FLIGHT + 2` batches of `BATCH_OPS` calls (56 bytes
/// each: 1.75 MiB) are all the memory the hand-over takes.
pub(super) const BATCHES_IN_FLIGHT: usize = 6;

/// One call on a clone's statistics.
#[derive(Debug, Clone, Copy)]
enum Op {
    Record {
        ddir: u8,
        issue_ns: u64,
        accepted_ns: u64,
        done_ns: u64,
        bytes: u64,
        offset: u64,
    },
    Sync {
        issue_ns: u64,
        done_ns: u64,
    },
    Depth(u32),
    Commit {
        depth: u32,
        queued: u32,
    },
    SubmitCall(u32),
    ReapCall(u32),
    StartMeasuring(u64),
    PhaseRuntimes([u64; 3]),
    Finish(u64),
}

/// A call and the clone it is for.
type Call = (u32, Op);

// The bound on the hand-over's memory above counts calls of this size.
const _: () = assert!(std::mem::size_of::<Call>() == 56);

/// The run loop's end of the hand-over: the batch being filled.
pub(super) struct Producer {
    batch: Vec<Call>,
    /// Taken by [`close`]: the statistics thread's loop ends when it is dropped.
    full: Option<SyncSender<Vec<Call>>>,
    empty: Receiver<Vec<Call>>,
    /// The statistics thread is gone (it panicked): calls are dropped, and joining it
    /// reports the panic.
    gone: bool,
}

impl Producer {
    #[inline(always)]
    fn push(&mut self, clone: u32, op: Op) {
        self.batch.push((clone, op));
        if self.batch.len() == BATCH_OPS {
            self.hand_over();
        }
    }

    /// Send the batch being filled and take an emptied one (waiting for it when every batch
    /// is full or being applied).
    #[cold]
    #[inline(never)]
    fn hand_over(&mut self) {
        let Some(full) = self.full.as_ref().filter(|_| !self.gone) else {
            self.batch.clear();
            return;
        };
        if self.batch.is_empty() {
            return;
        }
        let next = match self.empty.recv() {
            Ok(b) => b,
            Err(_) => {
                self.gone = true;
                self.batch.clear();
                return;
            }
        };
        let batch = std::mem::replace(&mut self.batch, next);
        if full.send(batch).is_err() {
            self.gone = true;
        }
    }
}

/// The statistics thread's end: every clone's statistics, and the results of those finished.
pub(super) struct Consumer {
    stats: Vec<Option<JobStats>>,
    results: Vec<Option<JobResult>>,
    full: Receiver<Vec<Call>>,
    empty: SyncSender<Vec<Call>>,
}

impl Consumer {
    /// Keep clone `i`'s statistics (none: the clone has none to keep).
    pub(super) fn keep(&mut self, i: usize, stats: Option<JobStats>) {
        self.stats[i] = stats;
    }

    /// Apply batches in order until the run loop closes its end; each clone's result, for
    /// those that finished.
    pub(super) fn run(mut self) -> Vec<Option<JobResult>> {
        while let Ok(mut batch) = self.full.recv() {
            for &(clone, op) in &batch {
                self.apply(clone as usize, op);
            }
            batch.clear();
            // The run loop may have closed its end after its last batch: nothing to return.
            let _ = self.empty.try_send(batch);
        }
        self.results
    }

    #[inline]
    fn apply(&mut self, i: usize, op: Op) {
        if let Op::Finish(end_ns) = op {
            let stats = self.stats[i].take().expect("a clone finishes once");
            self.results[i] = Some(stats.finish(end_ns));
            return;
        }
        let s = self.stats[i]
            .as_mut()
            .expect("statistics live until finish");
        match op {
            Op::Record {
                ddir,
                issue_ns,
                accepted_ns,
                done_ns,
                bytes,
                offset,
            } => s.record(ddir as usize, issue_ns, accepted_ns, done_ns, bytes, offset),
            Op::Sync { issue_ns, done_ns } => s.record_sync(issue_ns, done_ns),
            Op::Depth(d) => s.record_depth(d),
            Op::Commit { depth, queued } => s.record_commit(depth, queued),
            Op::SubmitCall(n) => s.record_submit_call(n),
            Op::ReapCall(n) => s.record_reap_call(n),
            Op::StartMeasuring(at_ns) => s.start_measuring(at_ns),
            Op::PhaseRuntimes(us) => s.set_phase_runtimes_us(us),
            Op::Finish(_) => unreachable!("handled above"),
        }
    }
}

/// The hand-over between the run loop and a statistics thread for `clones` clones, whose
/// statistics [`Consumer::keep`] takes.
pub(super) fn pipe(clones: usize) -> (Rc<RefCell<Producer>>, Consumer) {
    let (full_tx, full_rx) = mpsc::sync_channel(BATCHES_IN_FLIGHT);
    let (empty_tx, empty_rx) = mpsc::sync_channel(BATCHES_IN_FLIGHT + 1);
    for _ in 0..BATCHES_IN_FLIGHT + 1 {
        empty_tx
            .try_send(Vec::with_capacity(BATCH_OPS))
            .expect("room for every batch");
    }
    let producer = Producer {
        batch: Vec::with_capacity(BATCH_OPS),
        full: Some(full_tx),
        empty: empty_rx,
        gone: false,
    };
    let consumer = Consumer {
        stats: (0..clones).map(|_| None).collect(),
        results: (0..clones).map(|_| None).collect(),
        full: full_rx,
        empty: empty_tx,
    };
    (Rc::new(RefCell::new(producer)), consumer)
}

/// Send what the batch being filled holds and close the run loop's end: the run loop is
/// done, and the statistics thread ends once it has applied every batch.
pub(super) fn close(producer: &Rc<RefCell<Producer>>) {
    let mut p = producer.borrow_mut();
    p.hand_over();
    p.full = None;
}

/// A clone's statistics: its own, or its part of the hand-over to the statistics thread.
pub(super) enum Sink {
    Here(Box<JobStats>),
    Away {
        clone: u32,
        out: Rc<RefCell<Producer>>,
    },
}

impl Sink {
    #[inline(always)]
    fn send(clone: u32, out: &Rc<RefCell<Producer>>, op: Op) {
        out.borrow_mut().push(clone, op);
    }

    /// [`JobStats::record`].
    #[inline(always)]
    pub(super) fn record(
        &mut self,
        ddir: usize,
        issue_ns: u64,
        accepted_ns: u64,
        done_ns: u64,
        bytes: u64,
        offset: u64,
    ) {
        match self {
            Sink::Here(s) => s.record(ddir, issue_ns, accepted_ns, done_ns, bytes, offset),
            Sink::Away { clone, out } => {
                let op = Op::Record {
                    ddir: ddir as u8,
                    issue_ns,
                    accepted_ns,
                    done_ns,
                    bytes,
                    offset,
                };
                Self::send(*clone, out, op);
            }
        }
    }

    /// [`JobStats::record_sync`].
    pub(super) fn record_sync(&mut self, issue_ns: u64, done_ns: u64) {
        match self {
            Sink::Here(s) => s.record_sync(issue_ns, done_ns),
            Sink::Away { clone, out } => Self::send(*clone, out, Op::Sync { issue_ns, done_ns }),
        }
    }

    /// [`JobStats::record_depth`].
    #[inline(always)]
    pub(super) fn record_depth(&mut self, depth: u32) {
        match self {
            Sink::Here(s) => s.record_depth(depth),
            Sink::Away { clone, out } => Self::send(*clone, out, Op::Depth(depth)),
        }
    }

    /// [`JobStats::record_commit`].
    pub(super) fn record_commit(&mut self, depth: u32, queued: u32) {
        match self {
            Sink::Here(s) => s.record_commit(depth, queued),
            Sink::Away { clone, out } => Self::send(*clone, out, Op::Commit { depth, queued }),
        }
    }

    /// [`JobStats::record_submit_call`].
    pub(super) fn record_submit_call(&mut self, n: u32) {
        match self {
            Sink::Here(s) => s.record_submit_call(n),
            Sink::Away { clone, out } => Self::send(*clone, out, Op::SubmitCall(n)),
        }
    }

    /// [`JobStats::record_reap_call`].
    pub(super) fn record_reap_call(&mut self, n: u32) {
        match self {
            Sink::Here(s) => s.record_reap_call(n),
            Sink::Away { clone, out } => Self::send(*clone, out, Op::ReapCall(n)),
        }
    }

    /// [`JobStats::start_measuring`].
    pub(super) fn start_measuring(&mut self, at_ns: u64) {
        match self {
            Sink::Here(s) => s.start_measuring(at_ns),
            Sink::Away { clone, out } => Self::send(*clone, out, Op::StartMeasuring(at_ns)),
        }
    }

    /// [`JobStats::set_phase_runtimes_us`].
    pub(super) fn set_phase_runtimes_us(&mut self, runtime_us: [u64; 3]) {
        match self {
            Sink::Here(s) => s.set_phase_runtimes_us(runtime_us),
            Sink::Away { clone, out } => Self::send(*clone, out, Op::PhaseRuntimes(runtime_us)),
        }
    }

    /// [`JobStats::finish`]: the result now, or none when the statistics thread has it
    /// (once it has applied every call before this one).
    pub(super) fn finish(self, end_ns: u64) -> Option<JobResult> {
        match self {
            Sink::Here(s) => Some(s.finish(end_ns)),
            Sink::Away { clone, out } => {
                Self::send(clone, &out, Op::Finish(end_ns));
                None
            }
        }
    }

    /// The clone's own statistics, to hand to the statistics thread.
    pub(super) fn take_here(
        &mut self,
        clone: u32,
        out: &Rc<RefCell<Producer>>,
    ) -> Option<JobStats> {
        let away = Sink::Away {
            clone,
            out: Rc::clone(out),
        };
        match std::mem::replace(self, away) {
            Sink::Here(s) => Some(*s),
            Sink::Away { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mixed job's statistics with percentiles of every latency and every log.
    fn stats() -> JobStats {
        let text = "[j]\nrw=randrw\nlat_percentiles=1\nslat_percentiles=1\n\
                    write_lat_log=j\nwrite_bw_log=j\nwrite_iops_log=j\nlog_avg_msec=0\n\
                    write_hist_log=j\n";
        let file = flashlab_workload::parse_str(text, "j.fio", &|_| None).expect("job file");
        super::super::build::job_stats(&file.jobs[0], 0, 1)
    }

    /// The same calls give the same result kept here or sent away, across batch boundaries.
    #[test]
    fn calls_sent_away_give_the_result_kept_here() {
        let mut here = Sink::Here(Box::new(stats()));
        let (out, mut consumer) = pipe(1);
        let mut away = Sink::Here(Box::new(stats()));
        consumer.keep(0, away.take_here(0, &out));
        let worker = std::thread::spawn(move || consumer.run());
        let ios = 3 * BATCH_OPS as u64 + 17;
        for s in [&mut here, &mut away] {
            s.start_measuring(1_000);
            for k in 0..ios {
                let t = 2_000 + k * 7_919;
                s.record_depth((k % 32) as u32 + 1);
                s.record(
                    (k % 2) as usize,
                    t,
                    t + 500,
                    t + 60_000 + k % 977,
                    4096,
                    k * 4096,
                );
            }
        }
        let local = here
            .finish(9_000_000_000)
            .expect("kept statistics finish at once");
        assert!(
            away.finish(9_000_000_000).is_none(),
            "sent away, finished away"
        );
        close(&out);
        let mut results = worker.join().expect("statistics thread");
        let remote = results[0].take().expect("finished away");
        assert_eq!(local.total_ios(0) + local.total_ios(1), ios);
        assert_eq!(format!("{local:?}"), format!("{remote:?}"));
    }
}
