//! fio's `write_iolog`: the I/Os a job issued, as a "fio version 3 iolog" that fio's
//! `read_iolog` (and `flashlab replay --format fio-iolog`) replays: a header line, the
//! file's `add` and `open`, one `usec file action offset length` line per I/O at its issue
//! time (µs since the job started) and the `close` when the job ends.
//!
//! Memory: 24 bytes per I/O, at most [`MAX_IOLOG_ENTRIES`] per log (96 MiB); I/Os past that
//! are counted in [`IoLog::dropped`] and not written (the run reports it).

use std::fmt::Write as _;
use std::path::Path;

/// Most I/Os one iolog keeps.
pub const MAX_IOLOG_ENTRIES: usize = 1 << 22;

/// What an iolog line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoLogAction {
    Read,
    Write,
    Trim,
    Sync,
}

impl IoLogAction {
    fn word(self) -> &'static str {
        match self {
            IoLogAction::Read => "read",
            IoLogAction::Write => "write",
            IoLogAction::Trim => "trim",
            IoLogAction::Sync => "sync",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    time_us: u64,
    offset_bytes: u64,
    len_bytes: u32,
    action: IoLogAction,
}

/// One job's iolog.
#[derive(Debug, Clone, PartialEq)]
pub struct IoLog {
    /// Where it is written (the job's `write_iolog`).
    pub path: String,
    /// The file name the lines name (the job's `filename`, or fio's `jobname.N.0`).
    pub file_name: String,
    entries: Vec<Entry>,
    /// When the job ended, µs after it started (the `close` line).
    pub end_us: u64,
    /// I/Os not kept because the log reached [`MAX_IOLOG_ENTRIES`].
    pub dropped: u64,
}

impl IoLog {
    pub fn new(path: &str, file_name: &str) -> IoLog {
        IoLog {
            path: path.to_string(),
            file_name: file_name.to_string(),
            entries: Vec::new(),
            end_us: 0,
            dropped: 0,
        }
    }

    /// An I/O issued `time_us` after the job started.
    pub fn add(&mut self, time_us: u64, action: IoLogAction, offset_bytes: u64, len_bytes: u64) {
        if self.entries.len() >= MAX_IOLOG_ENTRIES {
            self.dropped += 1;
            return;
        }
        self.entries.push(Entry {
            time_us,
            offset_bytes,
            len_bytes: len_bytes.min(u32::MAX as u64) as u32,
            action,
        });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The file's contents.
    pub fn render(&self) -> String {
        let f = &self.file_name;
        let mut s = String::with_capacity(self.entries.len() * 40 + 64);
        s.push_str("fio version 3 iolog\n");
        let _ = writeln!(s, "0 {f} add");
        let _ = writeln!(s, "0 {f} open");
        for e in &self.entries {
            // fio writes every I/O, a sync too, with an offset and a length.
            let _ = writeln!(
                s,
                "{} {f} {} {} {}",
                e.time_us,
                e.action.word(),
                e.offset_bytes,
                e.len_bytes
            );
        }
        let _ = writeln!(s, "{} {f} close", self.end_us);
        s
    }

    /// Write the log to its path under `dir` (directories created as needed).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        crate::log_file::write_file(dir, &self.path, &self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_version_3_lines() {
        let mut l = IoLog::new("out/trace.log", "rr.0.0");
        l.add(138, IoLogAction::Read, 3_858_432, 4096);
        l.add(531, IoLogAction::Write, 30_076_928, 4096);
        l.add(600, IoLogAction::Sync, 0, 0);
        l.end_us = 1269;
        assert_eq!(
            l.render(),
            "fio version 3 iolog\n0 rr.0.0 add\n0 rr.0.0 open\n138 rr.0.0 read 3858432 4096\n\
             531 rr.0.0 write 30076928 4096\n600 rr.0.0 sync 0 0\n1269 rr.0.0 close\n"
        );
    }

    #[test]
    fn the_log_is_bounded() {
        let mut l = IoLog::new("x", "f");
        for t in 0..(MAX_IOLOG_ENTRIES as u64 + 3) {
            l.add(t, IoLogAction::Read, 0, 512);
        }
        assert_eq!((l.len(), l.dropped), (MAX_IOLOG_ENTRIES, 3));
    }
}
