//! The option table's entries, and how each simulated option's value lands in the job:
//! the parsing helpers the entries share, one closure per option.

use super::*;

use flashlab_engine::NS_PER_S;

use crate::fio::complex::{
    parse_bsrange, parse_bssplit, parse_distribution, parse_percentiles, parse_rw,
    percentile_precision,
};
use crate::fio::value::{
    parse_bool, parse_bytes, parse_f64, parse_int, parse_time_ns, split_ddir, TimeUnit,
};
use crate::job::{
    BlockSize, ExitWhat, RateProcess, RwSequencer, SizeSpec, SteadyMetric, SteadyState,
    ThinkBlocks, FIO_ENGINES,
};

/// An `ioengine` value: one of fio's engines, `external:PATH` or a library's path (fio loads
/// both), else refused with the nearest engine.
fn engine_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if FIO_ENGINES.contains(&name) || name.starts_with("external:") || name.contains('/') {
        return Ok(name.to_string());
    }
    let hint = flashlab_engine::input::did_you_mean(name, FIO_ENGINES.iter().copied());
    Err(format!(
        "one of fio's I/O engines (libaio, io_uring, psync, sync, ...; `fio --enghelp` lists them) or external:PATH{hint}"
    ))
}

/// fio 3.33's `verify=` methods (`0` is none); each only sets how a block is checked.
const VERIFY_METHODS: &[&str] = &[
    "0",
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha512",
    "sha256",
    "sha1",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
    "pattern",
    "null",
];

/// fio judges `latency_target` on the total latency `disable_lat` stops measuring.
const LAT_TARGET_WITHOUT_LAT: &str = "no latency_target with disable_lat=1 (fio then judges the target on latencies it does not measure; not simulated)";

/// A value the table's generic check guarantees is present.
fn val(v: Option<&str>) -> Result<&str, String> {
    v.ok_or_else(|| "a value".to_string())
}

fn flag(v: Option<&str>) -> Result<bool, String> {
    v.map_or(Ok(true), parse_bool)
}

/// A size or a percentage (`parse_amount`), or a number of zones (`128z`, fio's sizes in zones).
fn size_spec_z(v: Option<&str>, b: &Builder) -> Result<SizeSpec, String> {
    crate::zoned::size_in_zones(val(v)?, b.kb_base, &b.spec.zoned)
}

/// The flow options' hook: each goes to [`crate::flow::FlowOptions::set`] by name.
fn flow(b: &mut Builder, name: &str, v: Option<&str>) -> Result<(), String> {
    b.spec.flow.set(name, val(v)?, b.kb_base)
}

/// The zoned options' hook: each goes to [`crate::zoned::ZonedOptions::set`] by name.
fn zoned(b: &mut Builder, name: &str, v: Option<&str>) -> Result<(), String> {
    b.spec.zoned.set(name, val(v)?, b.kb_base)
}

fn to_u32(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

fn apply_bs(b: &mut Builder, v: Option<&str>) -> Result<(), String> {
    for (i, part) in split_ddir(val(v)?)?.into_iter().enumerate() {
        if let Some(p) = part {
            let size = parse_bytes(p, b.kb_base)?;
            if size == 0 {
                return Err("a block size above 0".into());
            }
            b.spec.block.bs[i] = BlockSize::Fixed(size);
        }
    }
    Ok(())
}

fn apply_per_ddir_sizes(v: Option<&str>, kb_base: u64, out: &mut [u64; 3]) -> Result<(), String> {
    for (i, part) in split_ddir(val(v)?)?.into_iter().enumerate() {
        if let Some(p) = part {
            out[i] = parse_bytes(p, kb_base)?;
        }
    }
    Ok(())
}

fn apply_rw(b: &mut Builder, v: Option<&str>) -> Result<(), String> {
    let (pattern, suffix) = parse_rw(val(v)?)?;
    b.spec.io.rw = pattern;
    b.spec.io.rw_sequence_count = 1;
    b.spec.io.rw_seq_skip_bytes = 0;
    if let Some(s) = suffix {
        if pattern.is_random() {
            b.spec.io.rw_sequence_count = to_u32(parse_int(s, b.kb_base, 1, u32::MAX as u64)?);
        } else {
            b.spec.io.rw_seq_skip_bytes = parse_bytes(s, b.kb_base)?;
        }
    }
    Ok(())
}

const SYNC_VALUES: &[&str] = &["0", "1", "none", "sync", "dsync"];

pub(super) static OPTIONS: &[OptionDef] = &[
    // --- the job ----------------------------------------------------------------------
    sim("name", &[], OptionType::Str, "", "Name of the job (defaults to the section name)", |b, v| {
        b.name = Some(val(v)?.to_string());
        Ok(())
    }),
    sim("description", &[], OptionType::Str, "", "Text description of the job", |b, v| {
        b.spec.id.description = Some(val(v)?.to_string());
        Ok(())
    }),
    prio(
        sim("filename", &[], OptionType::Str, "", "Device or namespace the job targets", |b, v| {
            b.spec.target.filename = Some(val(v)?.to_string());
            Ok(())
        }),
        -1,
    ),
    prio(
        sim("kb_base", &[], OptionType::Enum(&["1024", "1000"]), "1024", "Unit base of size suffixes (1024: k = 1024 and KiB = 1000, fio's compatibility mode)", |b, v| {
            b.kb_base = match val(v)?.trim() {
                "1024" => 1024,
                "1000" => 1000,
                _ => return Err("1024 or 1000".into()),
            };
            Ok(())
        }),
        1,
    ),
    sim("rw", &["readwrite"], OptionType::Pattern, "read", "I/O pattern: read, write, trim, randread, randwrite, randtrim, rw, randrw, trimwrite, randtrimwrite (optionally :N)", apply_rw),
    sim("rw_sequencer", &[], OptionType::Enum(&["sequential", "identical"]), "sequential", "With rw=randX:N, continue sequentially or repeat the offset for N I/Os", |b, v| {
        b.spec.io.rw_sequencer = match val(v)?.trim() {
            "sequential" => RwSequencer::Sequential,
            "identical" => RwSequencer::Identical,
            _ => return Err("sequential or identical".into()),
        };
        Ok(())
    }),
    sim("bs", &["blocksize"], OptionType::SizePerDirection, "4096", "Block size per direction (read,write,trim)", apply_bs),
    sim("bsrange", &["blocksize_range"], OptionType::SizeRange, "", "Block size range per direction (min-max)", |b, v| {
        for (i, r) in parse_bsrange(val(v)?, b.kb_base)?.into_iter().enumerate() {
            if let Some(r) = r {
                b.spec.block.bs[i] = r;
            }
        }
        Ok(())
    }),
    sim("bssplit", &[], OptionType::SizeSplit, "", "Block size split: size/percent:... per direction", |b, v| {
        for (i, s) in parse_bssplit(val(v)?, b.kb_base)?.into_iter().enumerate() {
            if let Some(s) = s {
                b.spec.block.bs[i] = s;
            }
        }
        Ok(())
    }),
    sim("blockalign", &["ba"], OptionType::SizePerDirection, "", "Offset alignment per direction (default: the block size)", |b, v| {
        for (i, part) in split_ddir(val(v)?)?.into_iter().enumerate() {
            if let Some(p) = part {
                let a = parse_bytes(p, b.kb_base)?;
                if a == 0 {
                    return Err("an alignment above 0".into());
                }
                b.spec.block.block_align_bytes[i] = Some(a);
            }
        }
        Ok(())
    }),
    sim("iodepth", &[], OptionType::Int, "1", "Number of I/Os kept in flight", |b, v| {
        b.spec.engine.iodepth = to_u32(parse_int(val(v)?, b.kb_base, 1, 65_536)?);
        Ok(())
    }),
    sim("iodepth_low", &[], OptionType::Int, "", "Once the queue is full, let it drain to this many I/Os before filling it again (default: iodepth, kept full)", |b, v| {
        b.spec.engine.iodepth_low = Some(to_u32(parse_int(val(v)?, b.kb_base, 0, 65_536)?));
        Ok(())
    }),
    sim("iodepth_batch_submit", &["iodepth_batch"], OptionType::Int, "1", "I/Os queued before fio commits them to the engine (0: iodepth); fio commits what it queued before it waits, so only the IO depths and submit distributions change", |b, v| {
        b.spec.engine.iodepth_batch_submit = to_u32(parse_int(val(v)?, b.kb_base, 0, 65_536)?);
        Ok(())
    }),
    sim("iodepth_batch_complete_min", &["iodepth_batch_complete"], OptionType::Int, "1", "Once the queue is full, wait for this many completions (0 counts as 1) before filling it again", |b, v| {
        b.spec.engine.iodepth_batch_complete_min = to_u32(parse_int(val(v)?, b.kb_base, 0, 65_536)?);
        Ok(())
    }),
    sim("iodepth_batch_complete_max", &[], OptionType::Int, "", "Most completions reaped at a time (default: iodepth_batch_complete_min); completions that arrive together are refilled together up to it", |b, v| {
        b.spec.engine.iodepth_batch_complete_max = to_u32(parse_int(val(v)?, b.kb_base, 0, 65_536)?);
        Ok(())
    }),
    sim("numjobs", &[], OptionType::Int, "1", "Number of clones of this job", |b, v| {
        b.spec.control.numjobs = to_u32(parse_int(val(v)?, b.kb_base, 1, 65_536)?);
        Ok(())
    }),
    sim("rwmixread", &[], OptionType::Percent, "50", "Percent of mixed I/O that is reads", |b, v| {
        b.spec.io.rwmixread = to_u32(parse_int(val(v)?, 1000, 0, 100)?);
        Ok(())
    }),
    sim("percentage_random", &[], OptionType::IntPerDirection, "100", "Percent of a random job's I/Os at random offsets per direction (read,write,trim); the rest continue from the direction's last I/O", |b, v| {
        for (i, part) in split_ddir(val(v)?)?.into_iter().enumerate() {
            if let Some(p) = part {
                b.spec.io.percentage_random[i] = parse_int(p, 1000, 0, 100)? as u8;
            }
        }
        Ok(())
    }),
    sim("rwmixwrite", &[], OptionType::Percent, "50", "Percent of mixed I/O that is writes", |b, v| {
        b.spec.io.rwmixread = 100 - to_u32(parse_int(val(v)?, 1000, 0, 100)?);
        Ok(())
    }),
    sim("size", &[], OptionType::SizeOrPercent, "", "Bytes of the region each clone works on (default: to the end of the device)", |b, v| {
        let s = size_spec_z(v, b)?;
        if s == SizeSpec::Bytes(0) || s == SizeSpec::Fraction(0.0) {
            return Err("a size above 0".into());
        }
        b.spec.target.size = Some(s);
        Ok(())
    }),
    sim("offset", &["fileoffset"], OptionType::SizeOrPercent, "0", "Start of the region", |b, v| {
        b.spec.target.offset = size_spec_z(v, b)?;
        Ok(())
    }),
    sim("offset_increment", &[], OptionType::SizeOrPercent, "0", "Added to offset for each clone (clone index x increment)", |b, v| {
        b.spec.target.offset_increment = size_spec_z(v, b)?;
        Ok(())
    }),
    sim("io_size", &["io_limit"], OptionType::SizeOrPercent, "", "Bytes to transfer (instead of size), or a percentage of size", |b, v| {
        // As in fio, 0 (or 0%) means no limit of its own: the job transfers its region.
        let s = size_spec_z(v, b)?;
        b.spec.target.io_size = (s != SizeSpec::Bytes(0) && s != SizeSpec::Fraction(0.0)).then_some(s);
        Ok(())
    }),
    sim("number_ios", &[], OptionType::Int, "0", "Stop after this many I/Os (0: no limit)", |b, v| {
        b.spec.target.number_ios = Some(parse_int(val(v)?, b.kb_base, 0, u64::MAX)?).filter(|n| *n > 0);
        Ok(())
    }),
    sim("loops", &[], OptionType::Int, "1", "Times the workload is repeated", |b, v| {
        b.spec.control.loops = to_u32(parse_int(val(v)?, b.kb_base, 1, u32::MAX as u64)?);
        Ok(())
    }),
    sim("runtime", &["timeout"], OptionType::Time(TimeUnit::Seconds), "", "Stop the job after this long", |b, v| {
        b.spec.time.runtime_ns = Some(parse_time_ns(val(v)?, TimeUnit::Seconds)?).filter(|t| *t > 0);
        Ok(())
    }),
    sim("time_based", &[], OptionType::Bool, "0", "Repeat the workload until runtime has passed", |b, v| {
        b.spec.time.time_based = flag(v)?;
        Ok(())
    }),
    sim("ramp_time", &[], OptionType::Time(TimeUnit::Seconds), "", "Run this long before measuring", |b, v| {
        b.spec.time.ramp_time_ns = parse_time_ns(val(v)?, TimeUnit::Seconds)?;
        Ok(())
    }),
    sim("steadystate", &["ss"], OptionType::Str, "iops:0.01%", "Steady-state criterion and limit: iops, iops_slope, bw or bw_slope, then `:` and a limit (IOPS, bytes/s, or a percentage of the window's mean); the job stops once its window meets it", |b, v| {
        parse_steadystate(&mut b.spec.steadystate, val(v)?, b.kb_base)
    }),
    sim("steadystate_duration", &["ss_dur"], OptionType::Time(TimeUnit::Seconds), "0", "Rolling window of steady-state samples (one a second); 0 turns detection off", |b, v| {
        let ns = parse_time_ns(val(v)?, TimeUnit::Seconds)?;
        if ns % NS_PER_S != 0 || ns > MAX_STEADY_WINDOW_S * NS_PER_S {
            return Err(format!(
                "a whole number of seconds from 0 to {MAX_STEADY_WINDOW_S} (one sample a second)"
            ));
        }
        b.spec.steadystate.duration_s = (ns / NS_PER_S) as u32;
        Ok(())
    }),
    sim("steadystate_ramp_time", &["ss_ramp"], OptionType::Time(TimeUnit::Seconds), "0", "Run this long before taking steady-state samples", |b, v| {
        b.spec.steadystate.ramp_ns = parse_time_ns(val(v)?, TimeUnit::Seconds)?;
        Ok(())
    }),
    sim("latency_target", &[], OptionType::Time(TimeUnit::Microseconds), "0", "Search the queue depth (1 up to iodepth) for the deepest one whose I/Os meet this total latency", |b, v| {
        let ns = parse_time_ns(val(v)?, TimeUnit::Microseconds)?;
        if ns > 0 && b.spec.report.disable_lat {
            return Err(LAT_TARGET_WITHOUT_LAT.into());
        }
        b.spec.latency.latency_target_ns = ns;
        Ok(())
    }),
    sim("latency_window", &[], OptionType::Time(TimeUnit::Microseconds), "0", "How long each queue depth of the latency-target search runs before it is judged", |b, v| {
        b.spec.latency.latency_window_ns = parse_time_ns(val(v)?, TimeUnit::Microseconds)?;
        Ok(())
    }),
    sim("latency_percentile", &[], OptionType::Str, "100", "Percent of a window's I/Os that must meet latency_target", |b, v| {
        b.spec.latency.latency_percentile = parse_f64(val(v)?)
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| "a percentage above 0 and at most 100 (e.g. 99.9)".to_string())?;
        Ok(())
    }),
    not("latency_run", &[], "Keep adjusting the queue depth after the latency target's depth is found"),
    sim("offset_align", &[], OptionType::Size, "0", "Align an offset given as a percentage up to this many bytes (0: the smallest block size)", |b, v| {
        b.spec.target.offset_align_bytes = parse_bytes(val(v)?, b.kb_base)?;
        Ok(())
    }),
    sim("startdelay", &[], OptionType::Time(TimeUnit::Seconds), "0", "Start the job this long after its phase starts", |b, v| {
        b.spec.time.startdelay_ns = parse_time_ns(val(v)?, TimeUnit::Seconds)?;
        Ok(())
    }),
    // --- pacing ---------------------------------------------------------------------------
    sim("rate", &[], OptionType::SizePerDirection, "", "Bandwidth cap in bytes/s per clone and direction (a mixed job issues the other direction while one is ahead of its cap, as fio)", |b, v| {
        apply_per_ddir_sizes(v, b.kb_base, &mut b.spec.rate.rate_bytes_per_s)
    }),
    sim("rate_iops", &[], OptionType::IntPerDirection, "", "IOPS cap per clone and direction (a mixed job issues the other direction while one is ahead of its cap, as fio)", |b, v| {
        apply_per_ddir_sizes(v, b.kb_base, &mut b.spec.rate.rate_iops)
    }),
    sim("rate_min", &["ratemin"], OptionType::SizePerDirection, "", "Least bandwidth in bytes/s per direction: the job stops with an error (EIO) when a rate_cycle falls below it", |b, v| {
        apply_per_ddir_sizes(v, b.kb_base, &mut b.spec.rate.rate_min_bytes_per_s)
    }),
    sim("rate_iops_min", &[], OptionType::IntPerDirection, "", "Least IOPS per direction: the job stops with an error (EIO) when a rate_cycle falls below it", |b, v| {
        apply_per_ddir_sizes(v, b.kb_base, &mut b.spec.rate.rate_iops_min)
    }),
    sim("rate_cycle", &["ratecycle"], OptionType::Time(TimeUnit::Milliseconds), "1000", "Span rate_min and rate_iops_min are averaged over (bare numbers in milliseconds)", |b, v| {
        let ns = parse_time_ns(val(v)?, TimeUnit::Milliseconds)?;
        if ns == 0 {
            return Err("a duration above 0 (e.g. 1000 for one second)".to_string());
        }
        b.spec.rate.rate_cycle_ns = ns;
        Ok(())
    }),
    sim("rate_process", &[], OptionType::Enum(&["linear", "poisson"]), "linear", "How rate-limited I/Os are spaced", |b, v| {
        b.spec.rate.rate_process = match val(v)?.trim() {
            "linear" => RateProcess::Linear,
            "poisson" => RateProcess::Poisson,
            _ => return Err("linear or poisson".into()),
        };
        Ok(())
    }),
    sim("thinktime", &[], OptionType::Time(TimeUnit::Microseconds), "0", "Pause between I/Os (bare numbers in microseconds)", |b, v| {
        b.spec.rate.thinktime_ns = parse_time_ns(val(v)?, TimeUnit::Microseconds)?;
        Ok(())
    }),
    sim("thinktime_blocks", &[], OptionType::Int, "1", "I/Os between think times (completed or issued: thinktime_blocks_type)", |b, v| {
        b.spec.rate.thinktime_blocks = to_u32(parse_int(val(v)?, b.kb_base, 1, u32::MAX as u64)?);
        b.spec.rate.thinktime_blocks_set = true;
        Ok(())
    }),
    sim("thinktime_blocks_type", &[], OptionType::Enum(&["complete", "issue"]), "complete", "Count completed or issued I/Os for thinktime_blocks", |b, v| {
        b.spec.rate.thinktime_blocks_type = match val(v)?.trim() {
            "complete" => ThinkBlocks::Complete,
            "issue" => ThinkBlocks::Issue,
            _ => return Err("complete or issue".into()),
        };
        Ok(())
    }),
    sim("thinktime_iotime", &[], OptionType::Time(TimeUnit::Seconds), "0", "Think again once this long has passed since the last think time (bare numbers in seconds)", |b, v| {
        b.spec.rate.thinktime_iotime_ns = parse_time_ns(val(v)?, TimeUnit::Seconds)?;
        Ok(())
    }),
    sim("rate_ignore_thinktime", &[], OptionType::Bool, "0", "The rate schedule moves on during think time instead of catching up after it", |b, v| {
        b.spec.rate.rate_ignore_thinktime = flag(v)?;
        Ok(())
    }),
    // --- randomness -------------------------------------------------------------------------
    sim("random_distribution", &[], OptionType::Distribution, "random", "Distribution of random offsets", |b, v| {
        b.spec.io.random_distribution = parse_distribution(val(v)?, b.kb_base)?;
        Ok(())
    }),
    sim("norandommap", &[], OptionType::Bool, "0", "Draw random offsets independently instead of covering every block once per pass", |b, v| {
        b.spec.io.norandommap = flag(v)?;
        Ok(())
    }),
    sim("randrepeat", &[], OptionType::Bool, "1", "Same random sequence on every run", |b, v| {
        b.spec.io.randrepeat = flag(v)?;
        Ok(())
    }),
    sim("randseed", &[], OptionType::Int, "", "Seed of the random streams (overrides the run seed for this job)", |b, v| {
        b.spec.io.randseed = Some(parse_int(val(v)?, b.kb_base, 0, u64::MAX)?);
        Ok(())
    }),
    // --- durability -------------------------------------------------------------------------
    sim("fsync", &[], OptionType::Int, "0", "Flush after every N writes", |b, v| {
        b.spec.sync.fsync_every = to_u32(parse_int(val(v)?, b.kb_base, 0, u32::MAX as u64)?);
        Ok(())
    }),
    sim("fdatasync", &[], OptionType::Int, "0", "Flush after every N writes (a block device's fdatasync, counted apart from fsync)", |b, v| {
        b.spec.sync.fdatasync_every = to_u32(parse_int(val(v)?, b.kb_base, 0, u32::MAX as u64)?);
        Ok(())
    }),
    sim("fsync_on_close", &[], OptionType::Bool, "0", "Flush when the file closes, once the job's I/O is done (the job has one file)", |b, v| {
        b.spec.sync.end_fsync |= flag(v)?;
        Ok(())
    }),
    sim("fill_device", &["fill_fs"], OptionType::Bool, "0", "Write from offset to the end of the device, whatever size says", |b, v| {
        b.spec.target.fill_device = flag(v)?;
        Ok(())
    }),
    sim("end_fsync", &[], OptionType::Bool, "0", "Flush once when the job's I/O is done", |b, v| {
        b.spec.sync.end_fsync = flag(v)?;
        Ok(())
    }),
    sim("sync", &[], OptionType::Enum(SYNC_VALUES), "none", "Synchronous (FUA) writes", |b, v| {
        b.spec.sync.write_fua = match val(v)?.trim() {
            "0" | "none" => false,
            "1" | "sync" | "dsync" => true,
            _ => return Err("one of 0, 1, none, sync, dsync".into()),
        };
        Ok(())
    }),
    // --- data content -----------------------------------------------------------------------
    sim("buffer_compress_percentage", &[], OptionType::Percent, "0", "Writes compress by about this percent (random data plus zeros or buffer_pattern); above 0 it outranks zero_buffers and buffer_pattern", |b, v| {
        let percent = parse_int(val(v)?, 1000, 0, 100)? as u8;
        b.set_buffers(|o| o.compress_percent = percent);
        Ok(())
    }),
    // Accepted rather than simulated: the chunk decides where in a write the compressible
    // data lies, not how much of it there is.
    acc("buffer_compress_chunk", &[], OptionType::Size, "512", "Size of each random-plus-compressible region with buffer_compress_percentage (0: the block size); it moves the compressible data, not its share, so not the simulation"),
    sim("zero_buffers", &[], OptionType::Bool, "0", "Write zeros (compressible 100%) instead of random data, unless buffer_compress_percentage is above 0", |b, v| {
        let zero = flag(v)?;
        b.set_buffers(|o| o.zero_buffers = zero);
        Ok(())
    }),
    sim("buffer_pattern", &[], OptionType::Str, "", "Fill writes with this repeated pattern (a quoted string, 0x hex or a decimal number): compressible 100% unless buffer_compress_percentage is above 0", |b, v| {
        let p = val(v)?.trim();
        if p.is_empty() || p == "\"\"" || p == "''" {
            return Err("a non-empty pattern: a quoted string, 0x hex or a decimal number".into());
        }
        b.set_buffers(|o| o.pattern = true);
        Ok(())
    }),
    // --- reporting --------------------------------------------------------------------------
    sim("group_reporting", &[], OptionType::Bool, "0", "Report clones and jobs of a group together", |b, v| {
        b.spec.report.group_reporting = flag(v)?;
        Ok(())
    }),
    sim("stonewall", &["wait_for_previous"], OptionType::Bool, "0", "Wait for earlier jobs to finish; starts a new group", |b, v| {
        b.spec.control.stonewall = flag(v)?;
        Ok(())
    }),
    sim("new_group", &[], OptionType::Bool, "0", "Start a new reporting group", |b, v| {
        b.spec.report.new_group = flag(v)?;
        Ok(())
    }),
    sim("percentile_list", &[], OptionType::FloatList, "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99", "Completion latency percentiles to report", |b, v| {
        b.spec.report.percentile_list = parse_percentiles(val(v)?)?;
        b.spec.report.percentile_precision = percentile_precision(val(v)?);
        Ok(())
    }),
    sim("write_bw_log", &[], OptionType::LogPrefix, "", "Write a bandwidth log with this prefix", |b, v| {
        b.spec.log.write_bw_log = Some(v.unwrap_or("").to_string());
        Ok(())
    }),
    sim("write_lat_log", &[], OptionType::LogPrefix, "", "Write latency logs with this prefix", |b, v| {
        b.spec.log.write_lat_log = Some(v.unwrap_or("").to_string());
        Ok(())
    }),
    sim("write_iops_log", &[], OptionType::LogPrefix, "", "Write an IOPS log with this prefix", |b, v| {
        b.spec.log.write_iops_log = Some(v.unwrap_or("").to_string());
        Ok(())
    }),
    sim("exitall", &[], OptionType::Bool, "0", "When this job ends, stop the jobs exit_what names", |b, v| {
        b.spec.control.exitall = flag(v)?;
        Ok(())
    }),
    sim("exitall_on_error", &[], OptionType::Bool, "0", "When this job stops at an error, stop the jobs exit_what names", |b, v| {
        b.spec.control.exitall_on_error = flag(v)?;
        Ok(())
    }),
    sim("exit_what", &[], OptionType::Enum(&["group", "stonewall", "all"]), "group", "Which jobs exitall stops: its reporting group, every running job, or all jobs", |b, v| {
        b.spec.control.exit_what = match val(v)?.trim() {
            "group" => ExitWhat::Group,
            "stonewall" => ExitWhat::Stonewall,
            "all" => ExitWhat::All,
            _ => return Err("group, stonewall or all".into()),
        };
        Ok(())
    }),
    sim("disable_lat", &[], OptionType::Bool, "0", "Take no total latency (its line and JSON figures read 0); max_latency and latency_target are then not checked, as in fio. Needs disable_slat=1 set before it (or gtod_reduce): fio 3.33 then measures submission latency from an unset start time, which flashlab does not reproduce", |b, v| {
        let on = flag(v)?;
        if on && !b.spec.report.disable_slat {
            return Err("0, or 1 after disable_slat=1 (with submission latency on, fio 3.33 measures it from a start time it no longer sets; not simulated)".into());
        }
        if on && b.spec.latency.latency_target_ns > 0 {
            return Err(LAT_TARGET_WITHOUT_LAT.into());
        }
        b.spec.report.disable_lat = on;
        Ok(())
    }),
    sim("disable_clat", &[], OptionType::Bool, "0", "Take no completion latency: no clat line, percentiles, latency buckets, clat or histogram log, as in fio", |b, v| {
        b.spec.report.disable_clat = flag(v)?;
        Ok(())
    }),
    sim("disable_slat", &[], OptionType::Bool, "0", "Take no submission latency (its line and JSON figures read 0)", |b, v| {
        let on = flag(v)?;
        if !on && b.spec.report.disable_lat {
            return Err("1 while disable_lat=1 (with submission latency on, fio 3.33 measures it from a start time it no longer sets; not simulated)".into());
        }
        b.spec.report.disable_slat = on;
        Ok(())
    }),
    sim("disable_bw_measurement", &["disable_bw"], OptionType::Bool, "0", "Take no per-I/O bandwidth samples (a bw log with log_avg_msec=0); windowed samples stay, as in fio 3.33", |b, v| {
        b.spec.report.disable_bw = flag(v)?;
        Ok(())
    }),
    sim("gtod_reduce", &[], OptionType::Bool, "0", "Sets disable_lat, disable_clat, disable_slat and disable_bw_measurement and turns latency percentiles off, as fio does (0 changes nothing)", |b, v| {
        if flag(v)? {
            if b.spec.latency.latency_target_ns > 0 {
                return Err(LAT_TARGET_WITHOUT_LAT.into());
            }
            let s = &mut b.spec;
            (s.report.disable_lat, s.report.disable_clat, s.report.disable_slat, s.report.disable_bw) = (true, true, true, true);
            (s.report.clat_percentiles, s.report.lat_percentiles, s.report.slat_percentiles) = (false, false, false);
        }
        Ok(())
    }),
    sim("clat_percentiles", &[], OptionType::Bool, "1", "Report completion latency percentiles", |b, v| {
        b.spec.report.clat_percentiles = flag(v)?;
        Ok(())
    }),
    sim("lat_percentiles", &[], OptionType::Bool, "0", "Report total latency percentiles", |b, v| {
        b.spec.report.lat_percentiles = flag(v)?;
        Ok(())
    }),
    sim("slat_percentiles", &[], OptionType::Bool, "0", "Report submission latency percentiles", |b, v| {
        b.spec.report.slat_percentiles = flag(v)?;
        Ok(())
    }),
    sim("stats", &[], OptionType::Bool, "1", "Report the job's results (0: it runs, and is left out of the output)", |b, v| {
        b.spec.report.stats = flag(v)?;
        Ok(())
    }),
    sim("per_job_logs", &[], OptionType::Bool, "1", "Each clone writes its own log files (0: files named without the job number, shared by the jobs with the same prefix)", |b, v| {
        b.spec.log.per_job_logs = flag(v)?;
        Ok(())
    }),
    sim("log_offset", &[], OptionType::Bool, "0", "Log lines carry the I/O's offset (before prio; 0 in averaged lines)", |b, v| {
        b.spec.log.log_offset = flag(v)?;
        Ok(())
    }),
    sim("bwavgtime", &[], OptionType::Int, "500", "Window in ms of the bandwidth samples behind bw min/max/mean/stddev", |b, v| {
        b.spec.log.bw_avg_ms = Some(parse_int(val(v)?, b.kb_base, 1, u32::MAX as u64)?);
        Ok(())
    }),
    sim("iopsavgtime", &[], OptionType::Int, "500", "Window in ms of the IOPS samples behind iops min/max/mean/stddev", |b, v| {
        b.spec.log.iops_avg_ms = Some(parse_int(val(v)?, b.kb_base, 1, u32::MAX as u64)?);
        Ok(())
    }),
    sim("write_iolog", &[], OptionType::Str, "", "Record the I/Os the job issues as a fio version 3 iolog at this path (flashlab replay --format fio-iolog and fio's read_iolog replay it)", |b, v| {
        let path = val(v)?.trim();
        if path.is_empty() {
            return Err("a file path".to_string());
        }
        b.spec.log.write_iolog = Some(path.to_string());
        Ok(())
    }),
    sim("write_hist_log", &[], OptionType::LogPrefix, "", "Write a completion-latency histogram log (fio's 1,856 bins per window) with this prefix", |b, v| {
        b.spec.log.write_hist_log = Some(v.unwrap_or("").to_string());
        Ok(())
    }),
    sim("log_hist_msec", &[], OptionType::Int, "0", "Window of the histogram log in milliseconds (0: a line per I/O)", |b, v| {
        b.spec.log.log_hist_msec = parse_int(val(v)?, b.kb_base, 0, u64::MAX)?;
        Ok(())
    }),
    sim("log_hist_coarseness", &[], OptionType::Int, "0", "Sum the histogram log's bins in groups of 2^N (N from 0 to 6)", |b, v| {
        b.spec.log.log_hist_coarseness = parse_int(val(v)?, b.kb_base, 0, 6)? as u8;
        Ok(())
    }),
    sim("log_avg_msec", &[], OptionType::Int, "0", "Average log entries over this many milliseconds (0: one per I/O)", |b, v| {
        b.spec.log.log_avg_msec = parse_int(val(v)?, b.kb_base, 0, u64::MAX)?;
        Ok(())
    }),
    sim("log_max_value", &[], OptionType::Bool, "0", "Averaged log windows (log_avg_msec) record the window's largest sample instead of its mean", |b, v| {
        b.spec.log.log_max_value = flag(v)?;
        Ok(())
    }),
    sim("max_latency", &[], OptionType::Str, "", "Largest total latency per direction (read,write,trim; bare numbers in microseconds): a measured I/O over it stops the job with ETIMEDOUT", |b, v| {
        for (i, part) in split_ddir(val(v)?)?.into_iter().enumerate() {
            if let Some(p) = part {
                b.spec.latency.max_latency_ns[i] = parse_time_ns(p, TimeUnit::Microseconds)?;
            }
        }
        Ok(())
    }),
    sim("wait_for", &[], OptionType::Str, "", "Start once every clone of this earlier job is done", |b, v| {
        let name = val(v)?.trim();
        if name.is_empty() {
            return Err("the name of an earlier job".into());
        }
        b.spec.control.wait_for = Some(name.to_string());
        Ok(())
    }),
    sim("filesize", &[], OptionType::Str, "", "Size of the job's region (its file); size then only sets the default io_size", |b, v| {
        let text = val(v)?.trim();
        if text.contains(['-', ':']) {
            return Err("a single size (e.g. 1g); a range of file sizes is not simulated".into());
        }
        let bytes = parse_bytes(text, b.kb_base)?;
        if bytes == 0 {
            return Err("a size above 0".into());
        }
        b.spec.target.filesize = Some(bytes);
        Ok(())
    }),
    // --- accepted: real I/O and presentation only -------------------------------------------
    sim("ioengine", &[], OptionType::Str, "psync", "I/O engine: an asynchronous one (libaio, io_uring) keeps iodepth I/Os in flight; a synchronous one (psync, fio's default) one I/O, with no submission latency, as fio runs it", |b, v| {
        b.spec.engine.ioengine = engine_name(val(v)?)?;
        Ok(())
    }),
    acc("direct", &[], OptionType::Bool, "0", "O_DIRECT (real I/O only; the simulated device has no page cache)"),
    acc("buffered", &[], OptionType::Bool, "1", "Buffered I/O (real I/O only)"),
    acc("thread", &[], OptionType::Bool, "0", "Threads instead of processes (real I/O only)"),
    acc("invalidate", &[], OptionType::Bool, "1", "Drop the page cache first (real I/O only)"),
    acc("numa_cpu_nodes", &[], OptionType::Str, "", "NUMA CPU placement (real I/O only)"),
    acc("numa_mem_policy", &[], OptionType::Str, "", "NUMA memory policy (real I/O only)"),
    acc("hipri", &[], OptionType::Bool, "0", "Polled I/O (real I/O only)"),
    acc("fixedbufs", &[], OptionType::Bool, "0", "Pre-registered buffers (real I/O only)"),
    acc("registerfiles", &[], OptionType::Bool, "0", "Pre-registered files (real I/O only)"),
    acc("sqthread_poll", &[], OptionType::Bool, "0", "Kernel submission polling (real I/O only)"),
    acc("userspace_reap", &[], OptionType::Bool, "0", "Reap completions in user space (real I/O only)"),
    sim("random_generator", &[], OptionType::Enum(&["tausworthe", "lfsr", "tausworthe64"]), "tausworthe", "fio's generator; flashlab draws from its own seeded streams (lfsr keeps no random map, so a verify phase reads back in offset order)", |b, v| {
        let generator = val(v)?;
        if !["tausworthe", "lfsr", "tausworthe64"].contains(&generator) {
            return Err("one of tausworthe, lfsr, tausworthe64".to_string());
        }
        b.spec.io.random_generator_lfsr = generator == "lfsr";
        Ok(())
    }),
    sim("unit_base", &[], OptionType::Enum(&["0", "1", "8"]), "0", "Bandwidths of the normal output's job and group lines in bytes (0, 8) or bits (1), as fio 3.33 (its bw statistics line stays in KiB/s)", |b, v| {
        b.spec.report.unit_base_bits = match val(v)? {
            "0" | "8" => false,
            "1" => true,
            _ => return Err("one of 0, 1, 8".into()),
        };
        Ok(())
    }),
    sim("significant_figures", &[], OptionType::Int, "4", "Digits of the normal output's IOPS, bandwidths and sizes (job, group and steady-state lines); JSON and terse are unchanged, as in fio", |b, v| {
        b.spec.report.significant_figures = parse_int(val(v)?, b.kb_base, 1, 10)? as u8;
        Ok(())
    }),
    sim("unified_rw_reporting", &[], OptionType::Enum(&["none", "mixed", "both", "0", "1", "2"]), "none", "mixed (1): every direction folded into one \"mixed\" direction in the JSON, normal and terse outputs, and MIXED group lines; both (2): the directions, then the fold", |b, v| {
        b.spec.report.unified_rw_reporting = match val(v)? {
            "none" | "0" => 0,
            "mixed" | "1" => 1,
            "both" | "2" => 2,
            _ => return Err("one of none, mixed, both, 0, 1, 2".into()),
        };
        Ok(())
    }),
    acc("log_prio", &[], OptionType::Bool, "0", "Log I/O priorities (presentation)"),
    acc("allow_mounted_write", &[], OptionType::Bool, "0", "Allow writes to a mounted device (real I/O only)"),
    acc("fadvise_hint", &[], OptionType::Str, "1", "posix_fadvise hints (real I/O only)"),
    acc("ioscheduler", &[], OptionType::Str, "", "Kernel I/O scheduler (real I/O only)"),
    acc("nice", &[], OptionType::Int, "0", "Process priority (real I/O only)"),
    acc("prio", &[], OptionType::Int, "", "I/O priority (real I/O only)"),
    acc("prioclass", &[], OptionType::Int, "", "I/O priority class (real I/O only)"),
    acc("lockmem", &[], OptionType::Size, "0", "Lock memory (real I/O only)"),
    acc("pre_read", &[], OptionType::Bool, "0", "Read the file into cache first (real I/O only)"),
    acc("unlink", &[], OptionType::Bool, "0", "Delete files afterwards (real I/O only)"),
    acc("create_on_open", &[], OptionType::Bool, "0", "Create files on open (real I/O only)"),
    acc("fallocate", &[], OptionType::Str, "native", "File preallocation (real I/O only)"),
    acc("refill_buffers", &[], OptionType::Bool, "0", "New data for every write (real I/O only: the bytes change, how compressible they are does not)"),
    acc("scramble_buffers", &[], OptionType::Bool, "1", "Alter a few bytes per 512 of each write against deduplication (real I/O only; the few percent of compressibility this takes from a pattern is not modelled)"),
    // --- verification -----------------------------------------------------------------------
    sim("verify", &[], OptionType::Enum(VERIFY_METHODS), "0", "Read back what a job wrote after each loop's writes (a reading job checks what it reads); the method only sets the check", |b, v| {
        let method = val(v)?;
        if !VERIFY_METHODS.contains(&method) {
            return Err(OptionType::Enum(VERIFY_METHODS).describe());
        }
        if method == "pattern" {
            return Err("a checksum method: verify=pattern checks verify_pattern, which flashlab does not simulate".to_string());
        }
        b.spec.verification.verify = method != "0";
        Ok(())
    }),
    sim("do_verify", &[], OptionType::Bool, "1", "Run the verify phase after the writes (with verify set)", |b, v| {
        b.spec.verification.do_verify = flag(v)?;
        Ok(())
    }),
    sim("verify_backlog", &[], OptionType::Int, "0", "Read back a batch of the writes each time this many are logged and not yet read back (0: only after each loop's writes)", |b, v| {
        b.spec.verification.verify_backlog = parse_int(val(v)?, b.kb_base, 0, u64::from(u32::MAX))?;
        Ok(())
    }),
    sim("verify_backlog_batch", &[], OptionType::Int, "0", "Reads per verify_backlog batch (0: verify_backlog)", |b, v| {
        b.spec.verification.verify_backlog_batch = parse_int(val(v)?, b.kb_base, 0, u64::from(u32::MAX))?;
        Ok(())
    }),
    acc("verify_interval", &[], OptionType::Size, "", "Bytes per verify header (the check's layout, not the I/O)"),
    acc("verify_offset", &[], OptionType::Size, "0", "Where in a block the verify header goes (the check's layout, not the I/O)"),
    acc("verify_fatal", &[], OptionType::Bool, "0", "Stop at the first bad block (a read the drive fails stops the job anyway)"),
    acc("verify_dump", &[], OptionType::Bool, "0", "Dump bad blocks to files (no block is bad without a read the drive fails)"),
    acc("verify_async", &[], OptionType::Int, "0", "Threads checking data (CPU only)"),
    acc("verify_async_cpus", &[], OptionType::Str, "", "CPUs of the checking threads (CPU only)"),
    acc("verify_state_save", &[], OptionType::Bool, "1", "Save the write state at exit (a file, not I/O)"),
    // --- zoned block devices (the options' meaning: crate::zoned) --------------------------
    prio(sim("zonesize", &[], OptionType::Size, "0", "Zone size (zonemode=strided: bytes done in a zone before the next; zonemode=zbd: must equal the drive's; sizes in zones, 128z, use it)", |b, v| zoned(b, "zonesize", v)), 1),
    sim("zonemode", &[], OptionType::Enum(&["none", "strided", "zbd"]), "none", "Zone mode (strided: I/O in one zone of zonerange bytes until zonesize bytes are done, then zonerange + zoneskip on; zbd: writes at write pointers, reads below them)", |b, v| zoned(b, "zonemode", v)),
    sim("zonecapacity", &[], OptionType::Size, "0", "Zone capacity (a zoned drive's own capacity wins)", |b, v| zoned(b, "zonecapacity", v)),
    sim("zoneskip", &[], OptionType::Size, "0", "Bytes skipped after each zone (zonemode=strided; zonemode=zbd: a multiple of the zone size, for sequential jobs; 2z: two zones)", |b, v| {
        // fio takes zoneskip in zones too (FIO_OPT_STR_VAL_ZONE).
        match size_spec_z(v, b)? {
            SizeSpec::Bytes(bytes) => {
                b.spec.zoned.zone_skip = bytes;
                Ok(())
            }
            SizeSpec::Fraction(_) => Err("a size (e.g. 256m) or a number of zones (e.g. 2z)".to_string()),
        }
    }),
    sim("zonerange", &[], OptionType::Size, "0", "Size of a zone (zonemode=strided; 0: zonesize)", |b, v| zoned(b, "zonerange", v)),
    sim("max_open_zones", &[], OptionType::Int, "0", "Zones all jobs write at once (0: the drive's open-zone limit)", |b, v| zoned(b, "max_open_zones", v)),
    sim("job_max_open_zones", &[], OptionType::Int, "0", "Zones one job writes at once (0: no limit)", |b, v| zoned(b, "job_max_open_zones", v)),
    sim("ignore_zone_limits", &[], OptionType::Bool, "0", "Allow max_open_zones above the drive's limit", |b, v| zoned(b, "ignore_zone_limits", v)),
    sim("read_beyond_wp", &[], OptionType::Bool, "0", "Reads may go past a zone's write pointer", |b, v| zoned(b, "read_beyond_wp", v)),
    sim("zone_reset_threshold", &[], OptionType::Str, "1", "Share of the range holding data above which zones are reset", |b, v| zoned(b, "zone_reset_threshold", v)),
    sim("zone_reset_frequency", &[], OptionType::Str, "0", "A zone reset every 1/frequency writes past the threshold", |b, v| zoned(b, "zone_reset_frequency", v)),
    // --- job-weighted flow control (the options' meaning: crate::flow) ----------------------
    sim("flow_id", &[], OptionType::Int, "0", "The flow control group of the job (0: the global one)", |b, v| flow(b, "flow_id", v)),
    sim("flow", &[], OptionType::Int, "0", "Weight in flow control, 0 to 1000: jobs of one flow_id issue I/Os in the ratio of their weights (0: not controlled)", |b, v| flow(b, "flow", v)),
    sim("flow_sleep", &[], OptionType::Int, "0", "Microseconds a job held back by flow control waits (after its I/Os in flight) before it looks again", |b, v| flow(b, "flow_sleep", v)),
    // --- not simulated ----------------------------------------------------------------------
    not("verify_pattern", &[], "Verification pattern (it sets what the writes hold and how they compress)"),
    acc("cpus_allowed", &[], OptionType::CpuList, "", "CPU affinity (real I/O only: the simulation runs on no host CPU, so any CPU numbers are taken)"),
    acc("cpumask", &[], OptionType::CpuMask, "", "CPU affinity mask (real I/O only)"),
    acc("cpus_allowed_policy", &[], OptionType::Enum(&["shared", "split"]), "shared", "How jobs share the cpus_allowed CPUs (real I/O only)"),
    not("read_iolog", &[], "Replay an I/O log (replay one with `flashlab replay LOG --format fio-iolog`)"),
    not("replay_no_stall", &[], "Replay timing"),
    not("exec_prerun", &[], "Run a command before the job"),
    not("exec_postrun", &[], "Run a command after the job"),
    acc("thinktime_spin", &[], OptionType::Time(TimeUnit::Microseconds), "0", "Busy-wait part of thinktime (the host's CPU; the pause the drive sees is thinktime either way)"),
    not("trim_percentage", &[], "Trim after verify"),
    not("trim_backlog", &[], "Trim backlog"),
    not("dedupe_percentage", &[], "Data a deduplicating drive could drop (such a drive is not modelled)"),
    not("nrfiles", &["nr_files"], "Several files per job"),
    acc("directory", &[], OptionType::Str, "", "Directory of the job's files (on a drive the job's file is the drive, or the namespace filename= names)"),
    not("openfiles", &[], "Files open at once"),
    not("file_service_type", &[], "Switching between files"),
    not("continue_on_error", &[], "Keep going after I/O errors"),
    not("create_only", &[], "Only create files"),
    // --- fio 3.33's other options: real I/O or presentation only ------------------------------
    acc("allow_file_create", &[], OptionType::Bool, "1", "Let fio create missing files (real I/O only: the drive exists)"),
    acc("allrandrepeat", &[], OptionType::Bool, "0", "Seed every random stream repeatably (flashlab's streams always come from the run seed)"),
    acc("atomic", &[], OptionType::Bool, "0", "Atomic O_DIRECT writes (real I/O only)"),
    acc("cgroup", &[], OptionType::Str, "", "Run the job in this cgroup (real I/O only)"),
    acc("cgroup_nodelete", &[], OptionType::Bool, "0", "Keep the cgroup afterwards (real I/O only)"),
    acc("cgroup_weight", &[], OptionType::Int, "", "The cgroup's weight (real I/O only)"),
    acc("clocksource", &[], OptionType::Enum(&["gettimeofday", "clock_gettime", "cpu"]), "", "Host clock fio reads (the simulation's clock is exact)"),
    acc("cmd_type", &[], OptionType::Str, "nvme", "io_uring_cmd command set (real I/O only)"),
    acc("create_fsync", &[], OptionType::Bool, "1", "fsync files after creating them (real I/O only: the drive exists)"),
    acc("create_serialize", &[], OptionType::Bool, "1", "Create the jobs' files one after another (real I/O only)"),
    acc("disk_util", &[], OptionType::Bool, "1", "Host disk utilization statistics (presentation flashlab leaves out, as it leaves out disk_util in the JSON)"),
    acc("error_dump", &[], OptionType::Bool, "0", "Print details of each I/O error (diagnostics only; a job stopped by an error reports it)"),
    acc("filename_format", &[], OptionType::Str, "$jobname.$jobnum.$filenum", "Names of the files fio creates (on a drive the job's file is the drive)"),
    acc("force_async", &[], OptionType::Int, "0", "io_uring: submit every Nth request asynchronously (real I/O only)"),
    acc("gid", &[], OptionType::Int, "", "Run the job with this group ID (real I/O only)"),
    acc("gtod_cpu", &[], OptionType::Int, "", "CPU of a dedicated clock thread (real I/O only)"),
    acc("hugepage-size", &[], OptionType::Size, "", "Huge page size for I/O buffers (real I/O only)"),
    acc("io_submit_mode", &[], OptionType::Enum(&["inline", "offload"]), "inline", "Submit I/O from the job or from helper threads (real I/O only)"),
    acc("iomem_align", &["mem_align"], OptionType::Int, "0", "Alignment of I/O buffers in memory (real I/O only)"),
    acc("lockfile", &[], OptionType::Enum(&["none", "exclusive", "readwrite"]), "none", "Lock the file around I/O (real I/O only: one job owns a simulated drive's file lock-free)"),
    acc("log_compression", &[], OptionType::Size, "", "Compress logs in memory in chunks of this size (the files written are the same)"),
    acc("log_compression_cpus", &[], OptionType::Str, "", "CPUs for log compression (real I/O only)"),
    acc("log_entries", &[], OptionType::Int, "1024", "Initial number of log entries in memory (memory only)"),
    acc("mem", &["iomem"], OptionType::Str, "malloc", "Memory backing the I/O buffers (real I/O only)"),
    acc("nonvectored", &[], OptionType::Int, "", "io_uring: non-vectored reads and writes (real I/O only)"),
    acc("nowait", &[], OptionType::Bool, "0", "RWF_NOWAIT on each I/O (real I/O only)"),
    acc("overwrite", &[], OptionType::Bool, "0", "Lay files out before writing them (real I/O only: a drive needs no layout)"),
    acc("softrandommap", &[], OptionType::Bool, "0", "Fall back to norandommap if the random map cannot be allocated (flashlab's always is)"),
    acc("sqthread_poll_cpu", &[], OptionType::Int, "", "io_uring: CPU of the submission polling thread (real I/O only)"),
    acc("uid", &[], OptionType::Int, "", "Run the job with this user ID (real I/O only)"),
    acc("uncached", &[], OptionType::Int, "0", "io_uring: uncached buffered I/O (real I/O only)"),
    acc("unique_filename", &[], OptionType::Bool, "1", "Prefix file names with the client's address (real I/O only)"),
    acc("unlink_each_loop", &[], OptionType::Bool, "0", "Delete files after each loop (real I/O only)"),
    acc("verifysort", &[], OptionType::Str, "", "Deprecated; fio ignores it"),
    acc("verifysort_nr", &[], OptionType::Str, "", "Deprecated; fio ignores it"),
    acc("flow_watermark", &[], OptionType::Str, "", "Deprecated; fio ignores it"),
    // fio's built-in profiles register these; they set only the profile's own settings,
    // used with profile=, which is not simulated (`threads` is tiobench's, not an alias).
    acc("threads", &[], OptionType::Int, "1", "tiobench profile: its number of threads (no effect without profile=tiobench)"),
    acc("block", &[], OptionType::Int, "4k", "tiobench profile: its block size (no effect without profile=tiobench)"),
    acc("numruns", &[], OptionType::Int, "", "tiobench profile: its number of runs (no effect without profile=tiobench)"),
    acc("dir", &[], OptionType::Str, "", "tiobench profile: its directory (no effect without profile=tiobench)"),
    acc("device-names", &[], OptionType::Str, "", "act profile: its devices (no effect without profile=act)"),
    acc("load", &[], OptionType::Int, "", "act profile: its load multiplier (no effect without profile=act)"),
    acc("test-duration", &[], OptionType::Str, "", "act profile: its duration (no effect without profile=act)"),
    acc("threads-per-queue", &[], OptionType::Int, "", "act profile: its threads per queue (no effect without profile=act)"),
    acc("read-req-num-512-blocks", &[], OptionType::Int, "", "act profile: its read size in sectors (no effect without profile=act)"),
    acc("large-block-op-kbytes", &[], OptionType::Int, "", "act profile: its large block size (no effect without profile=act)"),
    acc("prep", &[], OptionType::Bool, "0", "act profile: its preparation pass (no effect without profile=act)"),
    // --- fio 3.33's other options: not simulated -------------------------------------------------
    not("block_error_percentiles", &[], "Trim block error histograms (with trims of verification, not simulated)"),
    not("bs_unaligned", &["blocksize_unaligned"], "Block sizes of a range that are not multiples of its smallest"),
    not("bs_is_seq_rand", &[], "Block sizes per sequential/random instead of per direction"),
    not("cmdprio", &[], "Per-command I/O priorities (fio then reports latencies per priority; the simulated drive has no priority classes)"),
    not("cmdprio_bssplit", &[], "Per-command I/O priorities by block size (latencies reported per priority)"),
    not("cmdprio_class", &[], "Per-command I/O priority class (latencies reported per priority)"),
    not("cmdprio_percentage", &[], "Share of commands with a priority (latencies reported per priority)"),
    not("dedupe_global", &[], "Deduplicated data shared across jobs (a deduplicating drive is not modelled)"),
    not("dedupe_mode", &[], "How deduplicated data is generated (a deduplicating drive is not modelled)"),
    not("dedupe_working_set_percentage", &[], "Working set of deduplicated data (a deduplicating drive is not modelled)"),
    not("experimental_verify", &[], "Verify by replaying the write sequence instead of logging it"),
    not("file_append", &[], "I/O from the end of the file (a drive has no end to append at)"),
    not("ignore_error", &[], "Keep going after the listed I/O errors"),
    not("log_alternate_epoch", &[], "Log times from another clock's epoch (simulated time has no wall clock)"),
    not("log_alternate_epoch_clock_id", &[], "Clock of log_alternate_epoch (simulated time has no wall clock)"),
    not("log_store_compressed", &[], "Logs written compressed"),
    not("log_unix_epoch", &[], "Log times since the Unix epoch (simulated time has no wall clock)"),
    not("merge_blktrace_file", &[], "Merging blktraces (replay traces with `flashlab replay`)"),
    not("merge_blktrace_iters", &[], "Merging blktraces (replay traces with `flashlab replay`)"),
    not("merge_blktrace_scalars", &[], "Merging blktraces (replay traces with `flashlab replay`)"),
    not("opendir", &[], "Every file of a directory tree"),
    not("profile", &[], "fio's built-in profiles (tiobench, act)"),
    not("read_iolog_chunked", &[], "Reading an I/O log in parts (replay one with `flashlab replay LOG --format fio-iolog`)"),
    not("replay_align", &[], "Replay offset alignment (replay I/O logs with `flashlab replay`)"),
    not("replay_redirect", &[], "Replay onto another device (replay I/O logs with `flashlab replay`)"),
    not("replay_scale", &[], "Replay offset scale (replay I/O logs with `flashlab replay`)"),
    not("replay_skip", &[], "Replay without some kinds of I/O (replay I/O logs with `flashlab replay`)"),
    not("replay_time_scale", &[], "Replay time scale (replay I/O logs with `flashlab replay`)"),
    sim("serialize_overlap", &[], OptionType::Bool, "0", "Hold an I/O that overlaps one of the job's I/Os in flight until completions clear it (the queue runs shallower)", |b, v| {
        b.spec.engine.serialize_overlap = flag(v)?;
        Ok(())
    }),
    not("sync_file_range", &[], "sync_file_range() after every N writes"),
    not("trim_backlog_batch", &[], "Trim after verify"),
    not("trim_verify_zero", &[], "Verify that trimmed blocks read back as zeros"),
    not("verify_only", &[], "Read back a workload's writes without issuing them"),
    not("verify_state_load", &[], "Verify up to a saved write state"),
    not("write_barrier", &[], "Barrier writes every N writes"),
    not("write_hint", &[], "Write lifetime hints (the simulated drive has no streams or placement by hint)"),
    // --- data placement (fio 3.34 on; crate::placement) -------------------------------------
    sim("fdp", &[], OptionType::Bool, "0", "Writes carry NVMe Flexible Data Placement identifiers (as dataplacement=fdp); the drive needs fdp.enabled", |b, v| {
        b.spec.placement.fdp = flag(v)?;
        Ok(())
    }),
    sim("dataplacement", &["data_placement"], OptionType::Enum(&["none", "fdp", "streams"]), "none", "Data placement directive of writes: none, or fdp (NVMe Flexible Data Placement); streams is not simulated", |b, v| {
        b.spec.placement.dataplacement_fdp = match val(v)?.trim() {
            "none" => false,
            "fdp" => true,
            "streams" => return Err("none or fdp (the simulated drive has no streams directive; not simulated)".into()),
            _ => return Err("none or fdp".into()),
        };
        Ok(())
    }),
    sim("plid_select", &["fdp_pli_select"], OptionType::Enum(&["roundrobin", "random", "scheme"]), "roundrobin", "How each write picks its placement ID from plids: roundrobin or random (scheme is not simulated)", |b, v| {
        b.spec.placement.select = match val(v)?.trim() {
            "roundrobin" => crate::placement::PlacementSelect::RoundRobin,
            "random" => crate::placement::PlacementSelect::Random,
            "scheme" => return Err("roundrobin or random (scheme, which reads dp_scheme's file, is not simulated)".into()),
            _ => return Err("roundrobin or random".into()),
        };
        Ok(())
    }),
    sim("plids", &["fdp_pli"], OptionType::Str, "", "Placement ID indices (into the drive's list, as nvme fdp status shows it) the job's writes use, e.g. 0,2-3; default all", |b, v| {
        b.spec.placement.ids = crate::placement::parse_ids(val(v)?)?;
        Ok(())
    }),
    not("dp_scheme", &[], "Placement IDs by offset range from a file (plid_select=scheme)"),
];

/// Longest steady-state window (a day of one-second samples): the window is kept in memory.
const MAX_STEADY_WINDOW_S: u64 = 86_400;

/// `steadystate=CRITERION:LIMIT` as fio reads it: the criterion names what is sampled and how
/// it is judged; a limit ending in `%` is a share of the window's mean, otherwise IOPS (a
/// decimal) or bytes per second (a size, `10m`).
fn parse_steadystate(ss: &mut SteadyState, text: &str, kb_base: u64) -> Result<(), String> {
    const VALID: &str =
        "iops, iops_slope, bw or bw_slope, a colon and a limit (e.g. iops_slope:0.3% or bw:10m)";
    let (criterion, limit) = text
        .split_once(':')
        .ok_or_else(|| format!("a limit after the criterion: {VALID}"))?;
    let (metric, slope) = match criterion.trim() {
        "iops" => (SteadyMetric::Iops, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw" => (SteadyMetric::Bw, false),
        "bw_slope" => (SteadyMetric::Bw, true),
        _ => return Err(format!("unknown criterion; valid: {VALID}")),
    };
    let limit = limit.trim();
    let (value, percent) = if let Some(p) = limit.strip_suffix('%') {
        let v = parse_f64(p).ok_or_else(|| format!("a percentage of the mean: {VALID}"))?;
        (v, true)
    } else if metric == SteadyMetric::Iops {
        let v = parse_f64(limit).ok_or_else(|| format!("an IOPS limit: {VALID}"))?;
        (v, false)
    } else {
        (parse_bytes(limit, kb_base)? as f64, false)
    };
    ss.metric = metric;
    ss.slope = slope;
    ss.limit = value;
    ss.percent = percent;
    Ok(())
}
