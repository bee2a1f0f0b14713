//! Block I/O traces: streaming readers for the common text formats, and the mapping of a
//! trace's addresses onto a simulated device.
//!
//! A [`TraceReader`] reads one line at a time into a reused buffer of at most
//! [`MAX_TRACE_LINE_BYTES`], so memory stays bounded whatever the trace's length or its
//! lines' (a longer line, or one that is not UTF-8 text, is malformed). Each line becomes a [`TraceRecord`] (time, direction, byte
//! range, device or volume) or an error naming the file, the line and what was expected;
//! with [`TraceOptions::skip_bad_lines`] malformed lines are counted and skipped instead.
//! The column meaning of every format, with its source, is in `docs/traces.md`.

mod formats;
mod remap;
pub mod sample;

#[cfg(test)]
mod tests;

use std::io::BufRead;

use flashlab_engine::input::{excerpt, read_line_bounded, LineRead, MAX_TRACE_LINE_BYTES};
use flashlab_engine::IoKind;

pub use remap::{Remap, RemapError, Remapper};

/// A trace file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// DiskSim ASCII, as distributed with MQSim: `time device sector size_sectors flags`.
    Disksim,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// blkparse's default text output (Q or D events).
    Blkparse,
    /// fio's `write_iolog` output, version 2 or 3.
    FioIolog,
    /// Alibaba block traces: `device_id,opcode,offset,length,timestamp`.
    Alibaba,
    /// Tencent CBS: `Timestamp,Offset,Size,IOType,VolumeID`.
    Tencent,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 6] = [
        TraceFormat::Disksim,
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::FioIolog,
        TraceFormat::Alibaba,
        TraceFormat::Tencent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Disksim => "disksim",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::FioIolog => "fio-iolog",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Tencent => "tencent",
        }
    }

    pub fn from_name(name: &str) -> Option<TraceFormat> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether records name a device or volume that `--volume` can select.
    pub fn has_volume(self) -> bool {
        !matches!(self, TraceFormat::Blkparse | TraceFormat::FioIolog)
    }
}

impl std::fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Unit of a time column whose unit the format leaves to the producer (DiskSim ASCII: the
/// original DiskSim writes milliseconds, MQSim's traces nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    S,
}

impl TimeUnit {
    pub fn ns(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
        }
    }

    pub fn from_name(name: &str) -> Option<TimeUnit> {
        match name {
            "ns" => Some(TimeUnit::Ns),
            "us" => Some(TimeUnit::Us),
            "ms" => Some(TimeUnit::Ms),
            "s" => Some(TimeUnit::S),
            _ => None,
        }
    }
}

/// Which blkparse action marks a request: `Q` (queued by the block layer) or `D` (issued to
/// the driver). A full trace has both for every request; replaying both would double it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlkparseAction {
    Queue,
    Dispatch,
}

/// How to read a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceOptions {
    pub format: TraceFormat,
    /// Keep only requests of this device / disk / volume (formats that name one).
    pub volume: Option<u64>,
    /// Skip and count malformed lines instead of failing on the first.
    pub skip_bad_lines: bool,
    /// Stop after this many requests (after filtering).
    pub max_requests: Option<u64>,
    /// Unit of the DiskSim time column.
    pub disksim_time_unit: TimeUnit,
    pub blkparse_action: BlkparseAction,
}

impl TraceOptions {
    pub fn new(format: TraceFormat) -> Self {
        Self {
            format,
            volume: None,
            skip_bad_lines: false,
            max_requests: None,
            disksim_time_unit: TimeUnit::Ns,
            blkparse_action: BlkparseAction::Dispatch,
        }
    }
}

/// One request of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// Line of the trace file, from 1.
    pub line: u64,
    /// The trace's own clock in ns (its origin is the format's: epoch, start of capture…).
    pub time_ns: u64,
    pub kind: IoKind,
    pub offset_bytes: u64,
    /// 0 only for flushes.
    pub len_bytes: u64,
}

/// Why a trace cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{file}: {error}")]
    Io {
        file: String,
        #[source]
        error: std::io::Error,
    },
    #[error("{file}:{line}: {format} trace: expected {expected}, found '{found}' (--skip-bad-lines skips such lines)")]
    Malformed {
        file: String,
        line: u64,
        format: TraceFormat,
        expected: String,
        found: String,
    },
    #[error("{file}: --volume {volume}: the {format} format names no device or volume; valid only with disksim, msr, alibaba or tencent")]
    NoVolumes {
        file: String,
        format: TraceFormat,
        volume: u64,
    },
}

impl TraceError {
    /// The line a malformed-line error points at.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Malformed { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// What a line turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A request, with the device or volume it names (if the format has one).
    Request {
        time_ns: u64,
        kind: IoKind,
        offset_bytes: u64,
        len_bytes: u64,
        volume: Option<u64>,
    },
    /// A line without a request (comment, header, another action, file management).
    Nothing,
    /// The trace's requests are over (blkparse's closing summary).
    End,
}

/// Why one line is malformed: what was expected, and the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bad {
    pub expected: String,
    pub found: String,
}

impl Bad {
    pub fn new(expected: impl Into<String>, found: &str) -> Self {
        // Long garbage (a binary file read as text) is cut for the message.
        Self {
            expected: expected.into(),
            found: excerpt(found).into_owned(),
        }
    }
}

/// Counts kept while reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceCounts {
    pub lines: u64,
    pub requests: u64,
    pub skipped_bad_lines: u64,
    /// Requests of other devices or volumes (`--volume`).
    pub filtered: u64,
    /// Reads and writes of zero bytes, which no device accepts: dropped.
    pub zero_length: u64,
    /// First malformed line skipped, for the report.
    pub first_bad_line: Option<u64>,
}

/// Bytes of an unreadable line shown in its message (cut further to whole characters).
const MAX_ECHO_BYTES: usize = 256;

/// Streams the requests of a trace, one line at a time.
pub struct TraceReader<R: BufRead> {
    input: R,
    file: String,
    options: TraceOptions,
    buf: Vec<u8>,
    state: formats::State,
    counts: TraceCounts,
    done: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// `file` is the name used in messages.
    pub fn new(
        input: R,
        file: impl Into<String>,
        options: TraceOptions,
    ) -> Result<Self, TraceError> {
        let file = file.into();
        if let (Some(volume), false) = (options.volume, options.format.has_volume()) {
            return Err(TraceError::NoVolumes {
                file,
                format: options.format,
                volume,
            });
        }
        Ok(Self {
            input,
            file,
            state: formats::State::new(&options),
            options,
            buf: Vec::with_capacity(256),
            counts: TraceCounts::default(),
            done: false,
        })
    }

    pub fn counts(&self) -> TraceCounts {
        self.counts
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// The next request, `None` at the end of the trace (or of `max_requests`).
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if self.done
                || self
                    .options
                    .max_requests
                    .is_some_and(|max| self.counts.requests >= max)
            {
                return Ok(None);
            }
            let read = read_line_bounded(&mut self.input, &mut self.buf, MAX_TRACE_LINE_BYTES)
                .map_err(|error| TraceError::Io {
                    file: self.file.clone(),
                    error,
                })?;
            if read == LineRead::End {
                self.done = true;
                return Ok(None);
            }
            self.counts.lines += 1;
            let line_no = self.counts.lines;
            let parsed = if read == LineRead::TooLong {
                Err(Bad::new(
                    format!("a line of at most {MAX_TRACE_LINE_BYTES} bytes"),
                    &String::from_utf8_lossy(&self.buf[..MAX_ECHO_BYTES]),
                ))
            } else {
                match std::str::from_utf8(&self.buf) {
                    Ok(text) => {
                        let text = text.trim_end_matches(['\n', '\r']);
                        formats::parse_line(&mut self.state, text, line_no)
                    }
                    Err(_) => Err(Bad::new(
                        "UTF-8 text",
                        &String::from_utf8_lossy(&self.buf[..self.buf.len().min(MAX_ECHO_BYTES)]),
                    )),
                }
            };
            match parsed {
                Ok(Parsed::Nothing) => {}
                Ok(Parsed::End) => {
                    self.done = true;
                    return Ok(None);
                }
                Ok(Parsed::Request {
                    time_ns,
                    kind,
                    offset_bytes,
                    len_bytes,
                    volume,
                }) => {
                    if let (Some(want), Some(have)) = (self.options.volume, volume) {
                        if want != have {
                            self.counts.filtered += 1;
                            continue;
                        }
                    }
                    if len_bytes == 0 && kind != IoKind::Flush {
                        self.counts.zero_length += 1;
                        continue;
                    }
                    self.counts.requests += 1;
                    return Ok(Some(TraceRecord {
                        line: line_no,
                        time_ns,
                        kind,
                        offset_bytes,
                        len_bytes,
                    }));
                }
                Err(bad) => {
                    if self.options.skip_bad_lines {
                        self.counts.skipped_bad_lines += 1;
                        self.counts.first_bad_line.get_or_insert(line_no);
                        continue;
                    }
                    return Err(TraceError::Malformed {
                        file: self.file.clone(),
                        line: line_no,
                        format: self.options.format,
                        expected: bad.expected,
                        found: bad.found,
                    });
                }
            }
        }
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                // An error ends the stream: the caller reports it once.
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
