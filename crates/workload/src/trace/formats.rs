//! One parser per trace format: a line in, a request (or nothing, or a reason) out. Column
//! meanings and their sources are in `docs/traces.md`.

use flashlab_engine::IoKind;

use super::{Bad, BlkparseAction, Parsed, TraceFormat, TraceOptions};

const SECTOR_BYTES: u64 = 512;
const NS_PER_US: u64 = 1_000;
const NS_PER_S: u64 = 1_000_000_000;
/// Windows FILETIME counts 100 ns ticks.
const NS_PER_FILETIME_TICK: u64 = 100;

/// What a parser remembers between lines.
#[derive(Debug, Clone)]
pub(crate) struct State {
    format: TraceFormat,
    disksim_unit_ns: u64,
    blkparse_action: BlkparseAction,
    /// fio iolog version from the header line (2 or 3).
    iolog_version: Option<u8>,
    /// fio iolog v2: sum of the `wait` actions so far, the time of the next request.
    iolog_wait_ns: u64,
}

impl State {
    pub fn new(options: &TraceOptions) -> Self {
        Self {
            format: options.format,
            disksim_unit_ns: options.disksim_time_unit.ns(),
            blkparse_action: options.blkparse_action,
            iolog_version: None,
            iolog_wait_ns: 0,
        }
    }
}

pub(crate) fn parse_line(state: &mut State, line: &str, line_no: u64) -> Result<Parsed, Bad> {
    let trimmed = line.trim();
    if state.format == TraceFormat::FioIolog && line_no == 1 {
        return iolog_header(state, trimmed);
    }
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(Parsed::Nothing);
    }
    let csv = matches!(
        state.format,
        TraceFormat::Msr | TraceFormat::Alibaba | TraceFormat::Tencent
    );
    // The CSV formats start every record with a number; a first line starting with a letter
    // is a column header some copies carry.
    if csv && line_no == 1 && trimmed.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Ok(Parsed::Nothing);
    }
    match state.format {
        TraceFormat::Disksim => disksim(state, trimmed),
        TraceFormat::Msr => msr(trimmed),
        TraceFormat::Blkparse => blkparse(state, trimmed),
        TraceFormat::FioIolog => iolog(state, trimmed),
        TraceFormat::Alibaba => alibaba(trimmed),
        TraceFormat::Tencent => tencent(trimmed),
    }
}

fn number(field: &str, what: &str) -> Result<u64, Bad> {
    field
        .trim()
        .parse::<u64>()
        .map_err(|_| Bad::new(format!("{what} (a whole number)"), field))
}

fn times(a: u64, b: u64, what: &str, field: &str) -> Result<u64, Bad> {
    a.checked_mul(b)
        .ok_or_else(|| Bad::new(format!("{what} below 2^64 bytes or ns"), field))
}

/// A decimal number of `unit_ns` units ("12.5" ms) as whole ns, digits below 1 ns dropped.
pub(crate) fn decimal_ns(field: &str, unit_ns: u64, what: &str) -> Result<u64, Bad> {
    let bad = || Bad::new(format!("{what} (a non-negative decimal number)"), field);
    let f = field.trim();
    let (int, frac) = f.split_once('.').unwrap_or((f, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) {
        return Err(bad());
    }
    let whole = if int.is_empty() {
        0
    } else {
        int.parse::<u64>().map_err(|_| bad())?
    };
    let mut ns = whole.checked_mul(unit_ns).ok_or_else(bad)?;
    let mut scale = unit_ns;
    for digit in frac.bytes() {
        scale /= 10;
        if scale == 0 {
            break;
        }
        ns = ns
            .checked_add(u64::from(digit - b'0') * scale)
            .ok_or_else(bad)?;
    }
    Ok(ns)
}

fn columns<'a, const N: usize>(
    fields: impl Iterator<Item = &'a str>,
    line: &str,
    layout: &str,
) -> Result<[&'a str; N], Bad> {
    let mut out = [""; N];
    let mut n = 0;
    for f in fields {
        if n == N {
            return Err(Bad::new(format!("{N} columns: {layout}"), line));
        }
        out[n] = f;
        n += 1;
    }
    if n != N {
        return Err(Bad::new(format!("{N} columns: {layout}"), line));
    }
    Ok(out)
}

/// A request, whose byte range must end within 2^64 bytes: a range that wraps would reach
/// the device as some other, shorter range.
fn request(
    time_ns: u64,
    kind: IoKind,
    offset_bytes: u64,
    len_bytes: u64,
    volume: Option<u64>,
) -> Result<Parsed, Bad> {
    if offset_bytes.checked_add(len_bytes).is_none() {
        return Err(Bad::new(
            "a byte range ending below 2^64 (offset + length)",
            &format!("offset {offset_bytes} + length {len_bytes}"),
        ));
    }
    Ok(Parsed::Request {
        time_ns,
        kind,
        offset_bytes,
        len_bytes,
        volume,
    })
}

/// `time device sector size_sectors flags`; bit 0 of the flags set means read.
fn disksim(state: &State, line: &str) -> Result<Parsed, Bad> {
    let [time, device, sector, size, flags] = columns(
        line.split_whitespace(),
        line,
        "time device sector size_in_sectors flags(1 = read, 0 = write)",
    )?;
    let time_ns = decimal_ns(time, state.disksim_unit_ns, "an arrival time")?;
    let volume = number(device, "a device number")?;
    let offset = times(
        number(sector, "a start sector")?,
        SECTOR_BYTES,
        "a start sector",
        sector,
    )?;
    let len = times(
        number(size, "a size in sectors")?,
        SECTOR_BYTES,
        "a size",
        size,
    )?;
    let flags = number(flags, "a request type (1 = read, 0 = write)")?;
    let kind = if flags & 1 == 1 {
        IoKind::Read
    } else {
        IoKind::Write
    };
    request(time_ns, kind, offset, len, Some(volume))
}

/// `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
fn msr(line: &str) -> Result<Parsed, Bad> {
    let [ts, _host, disk, kind, offset, size, _response] = columns(
        line.split(','),
        line,
        "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
    )?;
    let ticks = number(ts, "a Timestamp in 100 ns ticks")?;
    let time_ns = times(ticks, NS_PER_FILETIME_TICK, "a Timestamp", ts)?;
    let volume = number(disk, "a DiskNumber")?;
    let kind = match kind.trim() {
        k if k.eq_ignore_ascii_case("read") => IoKind::Read,
        k if k.eq_ignore_ascii_case("write") => IoKind::Write,
        _ => return Err(Bad::new("a Type of Read or Write", kind)),
    };
    let offset = number(offset, "an Offset in bytes")?;
    let len = number(size, "a Size in bytes")?;
    request(time_ns, kind, offset, len, Some(volume))
}

/// `maj,min cpu seq secs.ns pid action rwbs [sector + count] [process]`.
fn blkparse(state: &State, line: &str) -> Result<Parsed, Bad> {
    // blkparse ends its output with per-CPU and total summaries.
    if line.starts_with("CPU") || line.starts_with("Total") {
        return Ok(Parsed::End);
    }
    const LAYOUT: &str = "an event 'maj,min cpu seq seconds pid action rwbs sector + count'";
    let mut f = line.split_whitespace();
    let dev = f.next().unwrap_or("");
    let valid_dev = dev
        .split_once(',')
        .is_some_and(|(a, b)| number(a, "").is_ok() && number(b, "").is_ok());
    if !valid_dev {
        return Err(Bad::new(LAYOUT, line));
    }
    let (Some(_cpu), Some(_seq), Some(time), Some(_pid), Some(action), Some(rwbs)) =
        (f.next(), f.next(), f.next(), f.next(), f.next(), f.next())
    else {
        return Err(Bad::new(LAYOUT, line));
    };
    let wanted = match state.blkparse_action {
        BlkparseAction::Queue => "Q",
        BlkparseAction::Dispatch => "D",
    };
    if action != wanted {
        return Ok(Parsed::Nothing);
    }
    let time_ns = decimal_ns(time, NS_PER_S, "a time stamp in seconds")?;
    let flush = rwbs.contains('F');
    let kind = if rwbs.contains('D') {
        IoKind::Trim
    } else if rwbs.contains('W') {
        IoKind::Write
    } else if rwbs.contains('R') {
        IoKind::Read
    } else if flush {
        IoKind::Flush
    } else if rwbs.contains('N') {
        // No data transfer (e.g. a passthrough command).
        return Ok(Parsed::Nothing);
    } else {
        return Err(Bad::new("an RWBS field with R, W, D, F or N", rwbs));
    };
    let sector = match f.next() {
        // A flush carries no range ("FWS [kworker]" or "FWS 0 + 0").
        None => None,
        Some(s) if s.starts_with('[') => None,
        Some(s) => Some(s),
    };
    let Some(sector) = sector else {
        if flush {
            return request(time_ns, IoKind::Flush, 0, 0, None);
        }
        return Err(Bad::new("'sector + count' after the RWBS field", line));
    };
    let (Some("+"), Some(count)) = (f.next(), f.next()) else {
        return Err(Bad::new("'sector + count' after the RWBS field", line));
    };
    let offset = times(
        number(sector, "a sector")?,
        SECTOR_BYTES,
        "a sector",
        sector,
    )?;
    let len = times(
        number(count, "a sector count")?,
        SECTOR_BYTES,
        "a count",
        count,
    )?;
    if kind == IoKind::Write && flush && len == 0 {
        return request(time_ns, IoKind::Flush, 0, 0, None);
    }
    request(time_ns, kind, offset, len, None)
}

fn iolog_header(state: &mut State, line: &str) -> Result<Parsed, Bad> {
    state.iolog_version = match line {
        "fio version 2 iolog" => Some(2),
        "fio version 3 iolog" => Some(3),
        _ => {
            return Err(Bad::new(
                "the header 'fio version 2 iolog' or 'fio version 3 iolog' on line 1",
                line,
            ))
        }
    };
    Ok(Parsed::Nothing)
}

/// v2: `file action [offset length]` with `wait` actions; v3: `usec file action [offset length]`.
fn iolog(state: &mut State, line: &str) -> Result<Parsed, Bad> {
    let v3 = state.iolog_version == Some(3);
    let mut f = line.split_whitespace();
    let time_ns = if v3 {
        let t = f.next().unwrap_or("");
        times(
            number(t, "a time stamp in µs")?,
            NS_PER_US,
            "a time stamp",
            t,
        )?
    } else {
        state.iolog_wait_ns
    };
    let (Some(_file), Some(action)) = (f.next(), f.next()) else {
        let layout = if v3 {
            "'usec filename action [offset length]'"
        } else {
            "'filename action [offset length]'"
        };
        return Err(Bad::new(layout, line));
    };
    let mut range = || -> Result<(u64, u64), Bad> {
        let (Some(o), Some(l), None) = (f.next(), f.next(), f.next()) else {
            return Err(Bad::new(
                format!("'{action}' followed by offset and length"),
                line,
            ));
        };
        Ok((
            number(o, "an offset in bytes")?,
            number(l, "a length in bytes")?,
        ))
    };
    let kind = match action {
        "add" | "open" | "close" => return Ok(Parsed::Nothing),
        "wait" if !v3 => {
            let (us, _) = range()?;
            let ns = times(us, NS_PER_US, "a wait", line)?;
            state.iolog_wait_ns = state.iolog_wait_ns.saturating_add(ns);
            return Ok(Parsed::Nothing);
        }
        "sync" | "datasync" => return request(time_ns, IoKind::Flush, 0, 0, None),
        "read" => IoKind::Read,
        "write" => IoKind::Write,
        "trim" => IoKind::Trim,
        _ => {
            return Err(Bad::new(
                "an action: add, open, close, read, write, trim, sync, datasync (v2 also wait)",
                action,
            ))
        }
    };
    let (offset, len) = range()?;
    request(time_ns, kind, offset, len, None)
}

/// `device_id,opcode,offset,length,timestamp` (bytes, µs).
fn alibaba(line: &str) -> Result<Parsed, Bad> {
    let [dev, op, offset, len, ts] = columns(
        line.split(','),
        line,
        "device_id,opcode,offset,length,timestamp",
    )?;
    let volume = number(dev, "a device_id")?;
    let kind = match op.trim() {
        "R" | "r" => IoKind::Read,
        "W" | "w" => IoKind::Write,
        _ => return Err(Bad::new("an opcode R or W", op)),
    };
    let offset = number(offset, "an offset in bytes")?;
    let len = number(len, "a length in bytes")?;
    let time_ns = times(
        number(ts, "a timestamp in µs")?,
        NS_PER_US,
        "a timestamp",
        ts,
    )?;
    request(time_ns, kind, offset, len, Some(volume))
}

/// `Timestamp,Offset,Size,IOType,VolumeID` (s, sectors, sectors, 0 read / 1 write).
fn tencent(line: &str) -> Result<Parsed, Bad> {
    let [ts, offset, size, io_type, volume] = columns(
        line.split(','),
        line,
        "Timestamp,Offset,Size,IOType,VolumeID",
    )?;
    let time_ns = times(
        number(ts, "a Timestamp in seconds")?,
        NS_PER_S,
        "a Timestamp",
        ts,
    )?;
    let offset = times(
        number(offset, "an Offset in sectors")?,
        SECTOR_BYTES,
        "an Offset",
        offset,
    )?;
    let len = times(
        number(size, "a Size in sectors")?,
        SECTOR_BYTES,
        "a Size",
        size,
    )?;
    let kind = match io_type.trim() {
        "0" => IoKind::Read,
        "1" => IoKind::Write,
        _ => return Err(Bad::new("an IOType of 0 (read) or 1 (write)", io_type)),
    };
    let volume = number(volume, "a VolumeID")?;
    request(time_ns, kind, offset, len, Some(volume))
}
