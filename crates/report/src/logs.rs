//! fio's bw/iops/lat/clat/slat log files. A log collects entries during the run, either one
//! per I/O (`log_avg_msec = 0`) or one average per window of `log_avg_msec` per direction,
//! and is written as `<prefix>_<type>.<job_index>.log` with lines
//! `time_ms, value, ddir, bs, prio` (windowed entries have `bs = 0`, as fio writes them).
//!
//! With fio's `log_offset` every line also carries the I/O's offset before `prio` (0 for
//! windowed entries, as fio writes them).
//!
//! Memory: a windowed log holds one entry per window and direction. A per-I/O log holds one
//! 32-byte entry per I/O, at most [`MAX_LOG_ENTRIES`] per file (64 MiB); further entries are
//! counted in [`LogSeries::dropped`] and not written.

use std::path::Path;

use crate::stats::IoStat;

/// Most entries one log file keeps in memory.
pub const MAX_LOG_ENTRIES: usize = 1 << 21;

/// Which quantity a log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    /// KiB/s samples (windowed) or per-I/O rates.
    Bw,
    Iops,
    /// Total latency (ns).
    Lat,
    /// Completion latency (ns).
    Clat,
    /// Submission latency (ns).
    Slat,
}

impl LogKind {
    /// The name fio puts between the prefix and the job number.
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
            LogKind::Slat => "slat",
        }
    }
}

/// One line of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogEntry {
    pub time_ms: u64,
    pub value: u64,
    /// The I/O's offset in bytes (per-I/O entries; written with `log_offset`).
    pub offset: u64,
    pub bs: u32,
    pub ddir: u8,
}

/// One log file being collected.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSeries {
    pub kind: LogKind,
    pub prefix: String,
    pub avg_msec: u64,
    /// fio's `log_offset`: lines carry the I/O's offset.
    pub with_offset: bool,
    /// fio's `log_max_value`: a window's line holds its largest sample, not its mean.
    pub log_max: bool,
    pub entries: Vec<LogEntry>,
    /// Entries not kept because the log reached [`MAX_LOG_ENTRIES`].
    pub dropped: u64,
    window: [IoStat; 3],
    window_last_ms: [u64; 3],
}

impl LogSeries {
    pub fn new(kind: LogKind, prefix: &str, avg_msec: u64) -> Self {
        Self {
            kind,
            prefix: prefix.to_string(),
            avg_msec,
            with_offset: false,
            log_max: false,
            entries: Vec::new(),
            dropped: 0,
            window: [IoStat::new(); 3],
            window_last_ms: [0; 3],
        }
    }

    /// Forget everything (the measured interval restarts after ramp_time).
    pub fn reset(&mut self) {
        self.entries.clear();
        self.dropped = 0;
        self.window = [IoStat::new(); 3];
        self.window_last_ms = [0; 3];
    }

    fn push(&mut self, e: LogEntry) {
        if self.entries.len() < MAX_LOG_ENTRIES {
            self.entries.push(e);
        } else {
            self.dropped += 1;
        }
    }

    /// A sample at `elapsed_ms` since the start of measurement. Windowed logs average the
    /// samples of each direction; a window closes with the first sample at least
    /// `avg_msec` after the window began, is stamped with that sample's time, and the next
    /// window starts at the last multiple of `avg_msec` (fio's `add_log_sample`).
    pub fn add(&mut self, elapsed_ms: u64, value: u64, ddir: usize, bs: u64) {
        self.add_at(elapsed_ms, value, ddir, bs, 0);
    }

    /// [`Self::add`] for an I/O at `offset` bytes (kept by per-I/O logs).
    pub fn add_at(&mut self, elapsed_ms: u64, value: u64, ddir: usize, bs: u64, offset: u64) {
        if self.avg_msec == 0 {
            self.push(LogEntry {
                time_ms: elapsed_ms,
                value,
                offset,
                bs: bs.min(u32::MAX as u64) as u32,
                ddir: ddir as u8,
            });
            return;
        }
        self.window[ddir].add(value);
        let last = self.window_last_ms[ddir];
        if elapsed_ms < last || elapsed_ms - last < self.avg_msec {
            return;
        }
        self.flush_window(ddir, elapsed_ms);
        self.window_last_ms[ddir] = elapsed_ms - elapsed_ms % self.avg_msec;
    }

    fn flush_window(&mut self, ddir: usize, elapsed_ms: u64) {
        let w = self.window[ddir];
        if w.samples > 0 {
            // fio rounds the window mean to the nearest integer; with log_max_value it
            // writes the window's largest sample (`__add_stat_to_log`).
            let value = if self.log_max {
                w.max
            } else {
                (w.mean + 0.5) as u64
            };
            self.push(LogEntry {
                time_ms: elapsed_ms,
                value,
                offset: 0,
                bs: 0,
                ddir: ddir as u8,
            });
        }
        self.window[ddir] = IoStat::new();
    }

    /// The job ended: write out partly filled windows (fio's `finalize_logs`).
    pub fn finalize(&mut self, elapsed_ms: u64) {
        if self.avg_msec == 0 {
            return;
        }
        for ddir in 0..3 {
            self.flush_window(ddir, elapsed_ms);
        }
    }

    /// The file name fio gives this log for job number `job_index`.
    pub fn file_name(&self, job_index: u32) -> String {
        format!("{}_{}.{}.log", self.prefix, self.kind.suffix(), job_index)
    }

    /// The file name of a log the jobs share (fio's `per_job_logs=0`).
    pub fn shared_file_name(&self) -> String {
        format!("{}_{}.log", self.prefix, self.kind.suffix())
    }

    /// The file's contents.
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(self.entries.len() * 24);
        for e in &self.entries {
            use std::fmt::Write as _;
            let _ = if self.with_offset {
                writeln!(
                    s,
                    "{}, {}, {}, {}, {}, 0",
                    e.time_ms, e.value, e.ddir, e.bs, e.offset
                )
            } else {
                writeln!(s, "{}, {}, {}, {}, 0", e.time_ms, e.value, e.ddir, e.bs)
            };
        }
        s
    }

    /// Write the log under `dir` (the prefix may name a directory, which must exist).
    pub fn write(&self, dir: &Path, job_index: u32) -> std::io::Result<()> {
        crate::log_file::write_file(dir, &self.file_name(job_index), &self.render())
    }
}

/// The logs of one job (one clone): fio numbers log files by the clone's job index.
#[derive(Debug, Clone, PartialEq)]
pub struct JobLogs {
    pub job_index: u32,
    pub series: Vec<LogSeries>,
    /// The completion-latency histogram log (`write_hist_log`).
    pub hist: Option<crate::hist_log::HistLog>,
    /// fio's `per_job_logs=0`: the logs go to files named without the job number, which the
    /// jobs writing the same prefix share (in job order).
    pub shared: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_io_log_keeps_every_sample() {
        let mut l = LogSeries::new(LogKind::Clat, "x", 0);
        l.add(0, 250_994, 0, 4096);
        l.add(3, 58_968, 1, 4096);
        assert_eq!(l.render(), "0, 250994, 0, 4096, 0\n3, 58968, 1, 4096, 0\n");
        assert_eq!(l.file_name(1), "x_clat.1.log");
    }

    #[test]
    fn log_offset_adds_the_offset_column() {
        // fio 3.33's per-I/O log with log_offset=1 (reference logs2/lo_clat.1.log).
        let mut l = LogSeries::new(LogKind::Clat, "lo", 0);
        l.with_offset = true;
        l.add_at(0, 235_831, 0, 4096, 3_858_432);
        assert_eq!(l.render(), "0, 235831, 0, 4096, 3858432, 0\n");
        // Windowed entries have no offset of their own: fio writes 0.
        let mut w = LogSeries::new(LogKind::Bw, "lo", 500);
        w.with_offset = true;
        w.add_at(499, 51_559, 1, 131_072, 1 << 20);
        w.add_at(500, 51_559, 1, 131_072, 2 << 20);
        assert_eq!(w.render(), "500, 51559, 1, 0, 0, 0\n");
    }

    #[test]
    fn windowed_log_averages_per_window() {
        let mut l = LogSeries::new(LogKind::Lat, "seq", 500);
        // Window 1: samples at 100, 300 and the closing one at 500.
        l.add(100, 10, 1, 131072);
        l.add(300, 20, 1, 131072);
        l.add(500, 31, 1, 131072);
        // Directions have their own windows: the first read window began at 0.
        l.add(700, 100, 0, 4096);
        // Window 2 of writes began at 500.
        l.add(990, 40, 1, 131072);
        l.add(1003, 50, 1, 131072);
        // A partial window is written when the job ends.
        l.add(1100, 7, 1, 131072);
        l.finalize(1200);
        assert_eq!(
            l.render(),
            "500, 20, 1, 0, 0\n700, 100, 0, 0, 0\n1003, 45, 1, 0, 0\n1200, 7, 1, 0, 0\n"
        );
    }

    #[test]
    fn log_max_value_writes_the_window_maximum() {
        let mut l = LogSeries::new(LogKind::Clat, "j", 100);
        l.log_max = true;
        for (t, v) in [(10, 5), (50, 40), (90, 7), (120, 3)] {
            l.add(t, v, 0, 4096);
        }
        l.finalize(150);
        let got: Vec<(u64, u64)> = l.entries.iter().map(|e| (e.time_ms, e.value)).collect();
        // One window, closed by the sample at 120 ms: its largest sample, not its mean (14).
        assert_eq!(got, vec![(120, 40)]);
    }

    #[test]
    fn per_io_log_is_bounded() {
        let mut l = LogSeries::new(LogKind::Iops, "b", 0);
        for i in 0..(MAX_LOG_ENTRIES as u64 + 10) {
            l.add(i, 1, 0, 512);
        }
        assert_eq!(l.entries.len(), MAX_LOG_ENTRIES);
        assert_eq!(l.dropped, 10);
    }
}
