//! fio's completion-latency histogram log (`write_hist_log`, `log_hist_msec`,
//! `log_hist_coarseness`): `<prefix>_clat_hist.<job>.log`, one line per direction and
//! window of `log_hist_msec`, `time_ms, ddir, bs, ` then fio's 1,856 latency bins (summed
//! in groups of `2^coarseness`). A line holds the completions of its window: fio keeps a
//! copy of the cumulative histogram at each window's end and prints the difference from the
//! previous copy. A window closes with the first completion at least `log_hist_msec` after
//! the previous close, which is stamped with that completion's time and block size; no
//! partial window is written at the end, as fio writes none.
//!
//! Memory: the windows in progress take 3 × 1,856 counts; closed windows keep only their
//! non-zero bins, at most [`MAX_HIST_BINS`] per log (8 MiB, and 24 MiB of window records at
//! the most); windows past
//! that are counted in [`HistLog::dropped`] and not written.

use std::fmt::Write as _;
use std::path::Path;

use crate::histogram::{plat_val_to_idx, PLAT_NR};

/// Most non-zero bins one histogram log keeps.
pub const MAX_HIST_BINS: usize = 1 << 20;

/// Largest `log_hist_coarseness` (fio's limit).
pub const MAX_HIST_COARSENESS: u8 = 6;

/// One closed window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HistEntry {
    time_ms: u64,
    ddir: u8,
    bs: u32,
    /// Its bins in `HistLog::bins`.
    first: u32,
    len: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HistLog {
    pub prefix: String,
    pub msec: u64,
    pub coarseness: u8,
    /// Per direction: completions of the window in progress, per bin.
    window: Vec<u32>,
    /// Per direction: when the last window closed (fio's `hist_last`; 0 = not yet set).
    last_ms: [u64; 3],
    entries: Vec<HistEntry>,
    /// Non-zero bins of the closed windows: (bin, count).
    bins: Vec<(u16, u32)>,
    /// Windows not kept because the log reached [`MAX_HIST_BINS`].
    pub dropped: u64,
}

impl HistLog {
    pub fn new(prefix: &str, msec: u64, coarseness: u8) -> HistLog {
        HistLog {
            prefix: prefix.to_string(),
            msec,
            coarseness: coarseness.min(MAX_HIST_COARSENESS),
            window: vec![0; 3 * PLAT_NR],
            last_ms: [0; 3],
            entries: Vec::new(),
            bins: Vec::new(),
            dropped: 0,
        }
    }

    /// Forget everything (statistics restart).
    pub fn reset(&mut self) {
        self.window.fill(0);
        self.last_ms = [0; 3];
        self.entries.clear();
        self.bins.clear();
        self.dropped = 0;
    }

    /// A completion of direction `ddir` and `bs` bytes with completion latency `clat_ns`,
    /// `elapsed_ms` after statistics started.
    pub fn add(&mut self, elapsed_ms: u64, clat_ns: u64, ddir: usize, bs: u64) {
        let row = &mut self.window[ddir * PLAT_NR..(ddir + 1) * PLAT_NR];
        let b = &mut row[plat_val_to_idx(clat_ns)];
        *b = b.saturating_add(1);
        if self.last_ms[ddir] == 0 {
            self.last_ms[ddir] = elapsed_ms;
        }
        let this_window = elapsed_ms.saturating_sub(self.last_ms[ddir]);
        if this_window < self.msec {
            return;
        }
        let first = self.bins.len();
        let nonzero = row.iter().filter(|&&c| c > 0).count();
        if first + nonzero > MAX_HIST_BINS {
            self.dropped += 1;
        } else {
            self.bins.extend(
                row.iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(|(i, &c)| (i as u16, c)),
            );
            self.entries.push(HistEntry {
                time_ms: elapsed_ms,
                ddir: ddir as u8,
                bs: bs.min(u32::MAX as u64) as u32,
                first: first as u32,
                len: nonzero as u32,
            });
        }
        row.fill(0);
        // The next window is measured from the nominal end of this one, as fio keeps it.
        self.last_ms[ddir] = elapsed_ms - (this_window - self.msec);
    }

    /// Times become the full drive's, counts its share (a slice's results scaled back).
    pub fn scale_back(&mut self, time_factor: f64, count_factor: f64) {
        for e in &mut self.entries {
            e.time_ms = (e.time_ms as f64 * time_factor).round() as u64;
        }
        for (_, c) in &mut self.bins {
            *c = (*c as f64 * count_factor).round().min(u32::MAX as f64) as u32;
        }
    }

    /// Closed windows.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The file name fio gives this log for job number `job_index`.
    pub fn file_name(&self, job_index: u32) -> String {
        format!("{}_clat_hist.{}.log", self.prefix, job_index)
    }

    /// The file name of a log the jobs share (fio's `per_job_logs=0`).
    pub fn shared_file_name(&self) -> String {
        format!("{}_clat_hist.log", self.prefix)
    }

    /// The file's contents.
    pub fn render(&self) -> String {
        let stride = 1usize << self.coarseness;
        let columns = PLAT_NR / stride;
        let mut s = String::with_capacity(self.entries.len() * (columns * 3 + 24));
        let mut row = vec![0u64; columns];
        for e in &self.entries {
            row.fill(0);
            let bins = &self.bins[e.first as usize..(e.first + e.len) as usize];
            for &(i, c) in bins {
                row[i as usize / stride] += u64::from(c);
            }
            let _ = write!(s, "{}, {}, {}", e.time_ms, e.ddir, e.bs);
            for c in &row {
                let _ = write!(s, ", {c}");
            }
            s.push('\n');
        }
        s
    }

    /// Write the log under `dir` (the prefix may contain directories, created as needed).
    pub fn write(&self, dir: &Path, job_index: u32) -> std::io::Result<()> {
        crate::log_file::write_file(dir, &self.file_name(job_index), &self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::plat_idx_to_val;

    fn fields(line: &str) -> Vec<u64> {
        line.split(", ").map(|f| f.parse().unwrap()).collect()
    }

    #[test]
    fn a_line_per_window_with_that_window_s_completions() {
        let mut h = HistLog::new("h", 500, 0);
        // Window 1 (from the first completion at 1 ms): three I/Os, closed at 501 ms.
        h.add(1, 10_000, 0, 4096);
        h.add(200, 10_000, 0, 4096);
        h.add(501, 2_000_000, 0, 4096);
        // Writes keep windows of their own.
        h.add(600, 50_000, 1, 8192);
        // Window 2 of reads: one I/O, closed at 1001 ms (a window from 501).
        h.add(1001, 10_000, 0, 4096);
        // Never closed: not written.
        h.add(1100, 10_000, 0, 4096);
        let text = h.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let (a, b) = (fields(lines[0]), fields(lines[1]));
        assert_eq!(a.len(), 3 + PLAT_NR);
        assert_eq!(&a[..3], &[501, 0, 4096]);
        assert_eq!(a[3 + plat_val_to_idx(10_000)], 2);
        assert_eq!(a[3 + plat_val_to_idx(2_000_000)], 1);
        assert_eq!(a[3..].iter().sum::<u64>(), 3);
        assert_eq!(&b[..3], &[1001, 0, 4096]);
        assert_eq!(b[3..].iter().sum::<u64>(), 1);
        assert_eq!(h.file_name(1), "h_clat_hist.1.log");
        // The bins are fio's: the value a bin stands for falls back in it.
        let i = plat_val_to_idx(2_000_000);
        assert_eq!(plat_val_to_idx(plat_idx_to_val(i)), i);
    }

    #[test]
    fn coarseness_sums_neighbouring_bins() {
        let mut h = HistLog::new("h", 0, 2);
        h.add(5, 10_000, 0, 4096);
        h.add(6, 10_001, 0, 4096);
        let text = h.render();
        let rows: Vec<Vec<u64>> = text.lines().map(fields).collect();
        // A window of 0 ms closes with every completion.
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].len(), 3 + PLAT_NR / 4);
        assert_eq!(rows[0][3 + plat_val_to_idx(10_000) / 4], 1);
    }

    #[test]
    fn the_log_is_bounded_and_scales_back() {
        let mut h = HistLog::new("h", 0, 0);
        for t in 1..=(MAX_HIST_BINS as u64 + 5) {
            h.add(t, 1_000, 0, 512);
        }
        assert_eq!(h.len(), MAX_HIST_BINS);
        assert_eq!(h.dropped, 5);
        let mut h = HistLog::new("h", 100, 0);
        h.add(1, 1_000, 1, 512);
        h.add(101, 1_000, 1, 512);
        h.scale_back(4.0, 4.0);
        let row = fields(h.render().lines().next().unwrap());
        assert_eq!((row[0], row[3 + plat_val_to_idx(1_000)]), (404, 8));
    }
}
