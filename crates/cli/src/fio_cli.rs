//! `flashlab fio`: a fio command line (`--name=JOB --rw=randread --bs=4k ...`) run as fio 3.33
//! runs it, on a simulated drive. The jobs go through the job-file parser; this module only
//! splits the arguments the way fio's getopt does and handles fio's own run options.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::anyhow;
use flashlab_workload::{CommandLine, CommandLineItem, ParseErrorKind};

use crate::{
    bad_input, load_run_target, progress, run_parsed, Failure, OutputFormats, Target, DEFAULT_SEED,
};

#[derive(clap::Args, Debug)]
pub struct FioArgs {
    /// flashlab's --device NAME|FILE.toml, --set KEY=VALUE (repeatable), --seed N,
    /// --load-state FILE, --save-state FILE, --progress WHEN, --progress-interval TIME and
    /// --threads N and --untimed JOB[,JOB] (as `flashlab run`), then
    /// fio's arguments as fio takes them: --OPTION=VALUE or --OPTION VALUE, --name=JOB to
    /// start a job (options before the first --name are global), job files, and fio's
    /// --output-format, --output, --minimal, --section, --parse-only, and --eta=WHEN,
    /// --eta-interval=TIME, --eta-newline=TIME for the progress line on standard error.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<String>,
}

/// fio 3.33's job options that take an optional argument (its `FIO_OPT_STR_SET` type): written
/// bare they leave the next argument alone, while every other option takes the next argument
/// as its value (`fio --direct --bs=4k` sets direct to "--bs=4k" and fails). Found by running
/// `fio --parse-only --name=a --OPTION` for every option flashlab knows: these alone pass.
const BARE_FLAGS: &[&str] = &[
    "exitall",
    "exitall_on_error",
    "group_reporting",
    "new_group",
    "norandommap",
    "refill_buffers",
    "stonewall",
    "thread",
    "time_based",
    "wait_for_previous",
    "zero_buffers",
];

/// fio's own run options that flashlab does not carry out: refused by name, not taken for
/// unknown job options.
const REFUSED_RUN_OPTIONS: &[(&str, &str)] = &[
    ("debug", "debug tracing of fio's internals"),
    ("merge-blktrace-only", "merges blktrace files"),
    (
        "bandwidth-log",
        "writes aggregate bandwidth logs; use write_bw_log= in a job",
    ),
    (
        "append-terse",
        "deprecated in fio; use --output-format=normal,terse",
    ),
    ("cpuclock-test", "tests the host's CPU clock"),
    ("crctest", "tests the host's checksum speed"),
    (
        "cmdhelp",
        "fio's option help; `flashlab fio-options` lists flashlab's",
    ),
    ("enghelp", "fio's engine help"),
    ("showcmd", "converts job files to command lines"),
    ("readonly", "a safety check for real devices"),
    ("alloc-size", "fio's shared memory pools"),
    ("warnings-fatal", "fio's parser warnings"),
    ("max-jobs", "fio's process limit"),
    ("server", "fio's client/server mode"),
    ("daemonize", "fio's client/server mode"),
    ("client", "fio's client/server mode"),
    ("remote-config", "fio's client/server mode"),
    ("idle-prof", "host CPU idleness"),
    ("inflate-log", "decompresses fio logs"),
    ("trigger-file", "runs host commands"),
    ("trigger-timeout", "runs host commands"),
    ("trigger", "runs host commands"),
    ("trigger-remote", "runs host commands"),
    ("aux-path", "fio's state files"),
];

/// The long options of fio 3.33's getopt_long_only: its run options (init.c's `l_opts`), then
/// each entry of its option table by name and alias, then the profiles' options (`size` and
/// `profile` come twice). Grouped by first letter, in fio's order within a letter, which is the
/// order fio lists an ambiguous prefix's possibilities in. Read from fio 3.33 itself: `fio
/// --a=1` lists every long option starting with `a` as a possibility.
const FIO_LONG_OPTIONS: &[&str] = &[
    "append-terse",
    "alloc-size",
    "aux-path",
    "allrandrepeat",
    "atomic",
    "allow_file_create",
    "allow_mounted_write",
    "bandwidth-log",
    "bs",
    "blocksize",
    "ba",
    "blockalign",
    "bsrange",
    "blocksize_range",
    "bssplit",
    "bs_unaligned",
    "blocksize_unaligned",
    "bs_is_seq_rand",
    "buffered",
    "block_error_percentiles",
    "bwavgtime",
    "buffer_pattern",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "block",
    "cmdhelp",
    "client",
    "cpuclock-test",
    "crctest",
    "clocksource",
    "create_serialize",
    "create_fsync",
    "create_on_open",
    "create_only",
    "cpumask",
    "cpus_allowed",
    "cpus_allowed_policy",
    "clat_percentiles",
    "continue_on_error",
    "cgroup",
    "cgroup_nodelete",
    "cgroup_weight",
    "debug",
    "daemonize",
    "description",
    "directory",
    "direct",
    "do_verify",
    "dedupe_percentage",
    "dedupe_global",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "disk_util",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "disable_bw",
    "dir",
    "device-names",
    "enghelp",
    "eta",
    "eta-interval",
    "eta-newline",
    "experimental_verify",
    "exec_prerun",
    "exec_postrun",
    "end_fsync",
    "exitall",
    "exit_what",
    "exitall_on_error",
    "error_dump",
    "filename",
    "filename_format",
    "fill_device",
    "fill_fs",
    "filesize",
    "file_append",
    "fileoffset",
    "file_service_type",
    "fallocate",
    "fadvise_hint",
    "fsync",
    "fdatasync",
    "fsync_on_close",
    "flow_id",
    "flow",
    "flow_watermark",
    "flow_sleep",
    "group_reporting",
    "gtod_reduce",
    "gtod_cpu",
    "gid",
    "help",
    "hugepage-size",
    "inflate-log",
    "idle-prof",
    "ioengine",
    "iodepth",
    "iodepth_batch",
    "iodepth_batch_submit",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "io_submit_mode",
    "io_size",
    "io_limit",
    "iomem",
    "iomem_align",
    "ioscheduler",
    "ignore_zone_limits",
    "invalidate",
    "iopsavgtime",
    "ignore_error",
    "job_max_open_zones",
    "kb_base",
    "latency-log",
    "lockfile",
    "loops",
    "lockmem",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "log_entries",
    "log_avg_msec",
    "log_hist_msec",
    "log_hist_coarseness",
    "log_max_value",
    "log_offset",
    "log_prio",
    "log_compression",
    "log_compression_cpus",
    "log_store_compressed",
    "log_unix_epoch",
    "log_alternate_epoch",
    "log_alternate_epoch_clock_id",
    "lat_percentiles",
    "load",
    "large-block-op-kbytes",
    "minimal",
    "max-jobs",
    "memcpytest",
    "merge-blktrace-only",
    "mem",
    "mem_align",
    "merge_blktrace_file",
    "merge_blktrace_scalars",
    "merge_blktrace_iters",
    "max_open_zones",
    "max_latency",
    "name",
    "number_ios",
    "norandommap",
    "nrfiles",
    "nr_files",
    "numjobs",
    "nice",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "new_group",
    "numruns",
    "output",
    "output-format",
    "opendir",
    "offset",
    "offset_align",
    "offset_increment",
    "openfiles",
    "overwrite",
    "parse-only",
    "profile",
    "percentage_random",
    "percentage_sequential",
    "prio",
    "prioclass",
    "pre_read",
    "per_job_logs",
    "percentile_list",
    "profile",
    "prep",
    "readonly",
    "remote-config",
    "rw",
    "readwrite",
    "rw_sequencer",
    "randrepeat",
    "randseed",
    "random_generator",
    "random_distribution",
    "runtime",
    "ramp_time",
    "read_iolog",
    "read_iolog_chunked",
    "replay_no_stall",
    "replay_redirect",
    "replay_scale",
    "replay_align",
    "replay_time_scale",
    "replay_skip",
    "read_beyond_wp",
    "rwmixread",
    "rwmixwrite",
    "rwmixcycle",
    "rate",
    "rate_min",
    "ratemin",
    "rate_iops",
    "rate_iops_min",
    "rate_process",
    "rate_cycle",
    "ratecycle",
    "rate_ignore_thinktime",
    "refill_buffers",
    "read-req-num-512-blocks",
    "showcmd",
    "section",
    "server",
    "status-interval",
    "serialize_overlap",
    "size",
    "softrandommap",
    "sync_file_range",
    "startdelay",
    "sync",
    "stonewall",
    "stats",
    "scramble_buffers",
    "slat_percentiles",
    "significant_figures",
    "steadystate",
    "ss",
    "steadystate_duration",
    "ss_dur",
    "steadystate_ramp_time",
    "ss_ramp",
    "size",
    "terse-version",
    "trigger-file",
    "trigger-timeout",
    "trigger",
    "trigger-remote",
    "timeout",
    "time_based",
    "trim_percentage",
    "trim_verify_zero",
    "trim_backlog",
    "trim_backlog_batch",
    "thinktime",
    "thinktime_spin",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "thread",
    "threads",
    "test-duration",
    "threads-per-queue",
    "unique_filename",
    "unlink",
    "unlink_each_loop",
    "unified_rw_reporting",
    "uid",
    "unit_base",
    "version",
    "verify_only",
    "verify",
    "verifysort",
    "verifysort_nr",
    "verify_interval",
    "verify_offset",
    "verify_pattern",
    "verify_fatal",
    "verify_dump",
    "verify_async",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_async_cpus",
    "verify_state_load",
    "verify_state_save",
    "warnings-fatal",
    "wait_for",
    "write_barrier",
    "write_iolog",
    "write_hint",
    "wait_for_previous",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "zonemode",
    "zonesize",
    "zonecapacity",
    "zonerange",
    "zoneskip",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "zero_buffers",
];

/// fio's command line takes a unique prefix of a long option (`--runtim=1`, `--group_rep`): the
/// full name, or the candidates when the prefix is ambiguous. getopt_long_only counts every
/// entry, so a name and its alias (`--nr`: nrfiles, nr_files) are ambiguous too, as in fio.
/// Exact names, flashlab's own options and names flashlab knows (an ioengine's options, which
/// fio adds to its long options after `--ioengine`) are taken as they are; abbreviations are
/// matched against fio's own options only.
fn expand_abbreviation(name: &str) -> Result<&str, Vec<&'static str>> {
    if name.is_empty()
        || matches!(
            name,
            "device"
                | "set"
                | "seed"
                | "load-state"
                | "save-state"
                | "progress"
                | "progress-interval"
                | "threads"
                | "untimed"
        )
        || FIO_LONG_OPTIONS.contains(&name)
        || flashlab_workload::fio::find_option(name).is_some()
    {
        return Ok(name);
    }
    let candidates: Vec<&'static str> = FIO_LONG_OPTIONS
        .iter()
        .copied()
        .filter(|o| o.starts_with(name))
        .collect();
    match candidates.as_slice() {
        [] => Ok(name),
        [one] => Ok(one),
        _ => Err(candidates),
    }
}

/// A fio command line taken apart.
struct Parsed {
    target: Target,
    items: Vec<(String, CommandLineItem)>,
    files: Vec<PathBuf>,
    sections: Vec<String>,
    formats: OutputFormats,
    output: Option<PathBuf>,
    parse_only: bool,
    version: bool,
    /// fio's `--eta`, `--eta-interval` and `--eta-newline`.
    eta: progress::When,
    eta_interval: Option<Duration>,
    eta_newline: Option<Duration>,
    /// flashlab's `--progress` and `--progress-interval`, which win over fio's `--eta*`.
    progress: Option<progress::When>,
    progress_interval: Option<Duration>,
}

impl Parsed {
    /// The progress display: flashlab's `--progress` when given, else fio's `--eta*` with
    /// fio's meanings (its default, auto, draws on a terminal only).
    fn progress(&self) -> progress::Settings {
        match self.progress {
            Some(when) => progress::Settings::new(
                when,
                self.progress_interval
                    .unwrap_or(progress::DEFAULT_LINE_EVERY),
            ),
            None => progress::Settings::fio(
                self.eta,
                self.eta_interval.or(self.progress_interval),
                self.eta_newline,
            ),
        }
    }
}

/// `command line, argument N `TEXT``: how messages name an argument (counted as fio counts
/// them, the first after `fio` being 1), or the two of an option and its separate value.
fn place(args: &[String], index: usize, with_next: bool) -> String {
    if with_next {
        format!(
            "command line, arguments {}-{} `{} {}`",
            index + 1,
            index + 2,
            args[index],
            args[index + 1]
        )
    } else {
        format!("command line, argument {} `{}`", index + 1, args[index])
    }
}

fn parse_args(args: &[String]) -> Result<Parsed, Failure> {
    let mut parsed = Parsed {
        target: Target {
            device: None,
            set: Vec::new(),
            seed: DEFAULT_SEED,
            state: crate::StateArgs::default(),
            threads: crate::machine_cores(),
            untimed: Vec::new(),
        },
        items: Vec::new(),
        files: Vec::new(),
        sections: Vec::new(),
        formats: OutputFormats::NORMAL,
        output: None,
        parse_only: false,
        version: false,
        eta: progress::When::Auto,
        eta_interval: None,
        eta_newline: None,
        progress: None,
        progress_interval: None,
    };
    let mut only_files = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        // fio reads options with getopt_long_only: `-name=a` is `--name=a`; after `--` and
        // for anything not starting with `-` (or `-` alone), a job file.
        if only_files || arg == "-" || !arg.starts_with('-') {
            parsed.files.push(PathBuf::from(arg));
            i += 1;
            continue;
        }
        if arg == "--" {
            only_files = true;
            i += 1;
            continue;
        }
        let dashes = if arg.starts_with("--") { "--" } else { "-" };
        let body = &arg[dashes.len()..];
        let (name, inline) = match body.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (body, None),
        };
        let name = expand_abbreviation(name).map_err(|candidates| {
            bad_input(anyhow!(
                "{}: {dashes}{name} is ambiguous: it abbreviates {} (fio takes a unique prefix of an option's name)",
                place(args, i, false),
                candidates
                    .iter()
                    .map(|c| format!("{dashes}{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let option = OptionArg { args, name, inline };
        if !flashlab_option(&mut parsed, &option, &mut i)?
            && !run_option(&mut parsed, &option, &mut i)?
        {
            job_option(&mut parsed, &option, &mut i)?;
        }
    }
    Ok(parsed)
}

/// One `-NAME[=VALUE]` argument of a fio command line: the option's full name and the value
/// written after `=`.
struct OptionArg<'a> {
    args: &'a [String],
    name: &'a str,
    inline: Option<String>,
}

impl OptionArg<'_> {
    /// The option's value: after `=`, else the next argument whatever it looks like (as
    /// getopt takes a required argument); with the place naming both. Moves `i` past it.
    fn value(&self, i: &mut usize) -> Result<(String, String), Failure> {
        let (args, name) = (self.args, self.name);
        if let Some(v) = &self.inline {
            *i += 1;
            return Ok((v.clone(), place(args, *i - 1, false)));
        }
        match args.get(*i + 1) {
            Some(v) => {
                *i += 2;
                Ok((v.clone(), place(args, *i - 2, true)))
            }
            None => Err(bad_input(anyhow!(
                "{}: --{name} needs a value (--{name}=VALUE or --{name} VALUE)",
                place(args, *i, false)
            ))),
        }
    }

    /// An option that takes no value: refused with one. Moves `i` past it.
    fn no_value(&self, i: &mut usize) -> Result<(), Failure> {
        if self.inline.is_some() {
            return Err(bad_input(anyhow!(
                "{}: --{} takes no value",
                place(self.args, *i, false),
                self.name
            )));
        }
        *i += 1;
        Ok(())
    }
}

/// flashlab's own options, as in `flashlab run` (fio has none of these names); false for
/// another option.
fn flashlab_option(
    parsed: &mut Parsed,
    option: &OptionArg,
    i: &mut usize,
) -> Result<bool, Failure> {
    match option.name {
        "device" => parsed.target.device = Some(option.value(i)?.0),
        "set" => parsed.target.set.push(option.value(i)?.0),
        "load-state" => parsed.target.state.load_state = Some(option.value(i)?.0.into()),
        "save-state" => parsed.target.state.save_state = Some(option.value(i)?.0.into()),
        "seed" => {
            let (v, at) = option.value(i)?;
            parsed.target.seed = v.parse().map_err(|_| {
                bad_input(anyhow!(
                    "{at}: --seed {:?}: expected a whole number 0 to {}",
                    flashlab_engine::input::excerpt(&v),
                    u64::MAX
                ))
            })?;
        }
        "untimed" => {
            let (v, at) = option.value(i)?;
            for job in v.split(',') {
                if job.is_empty() {
                    return Err(bad_input(anyhow!(
                        "{at}: --untimed {:?}: expected job names separated by commas (--untimed=fill,precondition)",
                        flashlab_engine::input::excerpt(&v)
                    )));
                }
                parsed.target.untimed.push(job.to_string());
            }
        }
        "threads" => {
            let (v, at) = option.value(i)?;
            parsed.target.threads = v
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=crate::MAX_THREADS as usize).contains(n))
                .ok_or_else(|| {
                    bad_input(anyhow!(
                        "{at}: --threads {:?}: expected a whole number 1 to {}",
                        flashlab_engine::input::excerpt(&v),
                        crate::MAX_THREADS
                    ))
                })?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// fio's run options (output, sections, versions, the ETA display); false for a job option.
fn run_option(parsed: &mut Parsed, option: &OptionArg, i: &mut usize) -> Result<bool, Failure> {
    let name = option.name;
    match name {
        // As in fio, the last of --output-format and --minimal wins.
        "output-format" => {
            let (v, at) = option.value(i)?;
            parsed.formats =
                OutputFormats::parse(&v).map_err(|e| {
                    bad_input(anyhow!(
                        "{at}: {e}; expected normal, json, json+ or terse, or several separated by commas (normal,json)"
                    ))
                })?;
        }
        "minimal" => {
            option.no_value(i)?;
            parsed.formats = OutputFormats {
                terse: true,
                ..OutputFormats::default()
            };
        }
        "output" => parsed.output = Some(PathBuf::from(option.value(i)?.0)),
        "section" => parsed.sections.push(option.value(i)?.0),
        "parse-only" => {
            option.no_value(i)?;
            parsed.parse_only = true;
        }
        "version" => {
            option.no_value(i)?;
            parsed.version = true;
        }
        // fio's ETA display is the progress display (wall-clock time, on standard error).
        "eta" => {
            let (v, at) = option.value(i)?;
            parsed.eta = match v.as_str() {
                "always" => progress::When::Always,
                "never" => progress::When::Never,
                "auto" => progress::When::Auto,
                _ => {
                    return Err(bad_input(anyhow!(
                        "{at}: --eta {:?}: expected always, never or auto", flashlab_engine::input::excerpt(&v)
                    )))
                }
            };
        }
        "eta-interval" | "eta-newline" | "progress-interval" => {
            let (v, at) = option.value(i)?;
            let every = progress::parse_interval(&v)
                .map_err(|e| bad_input(anyhow!("{at}: --{name} {e}")))?;
            match name {
                "eta-interval" => parsed.eta_interval = Some(every),
                "eta-newline" => parsed.eta_newline = Some(every),
                _ => parsed.progress_interval = Some(every),
            }
        }
        "progress" => {
            let (v, at) = option.value(i)?;
            parsed.progress = Some(
                <progress::When as clap::ValueEnum>::from_str(&v, false).map_err(|_| {
                    bad_input(anyhow!(
                        "{at}: --progress {:?}: expected auto, always or never", flashlab_engine::input::excerpt(&v)
                    ))
                })?,
            );
        }
        "status-interval" => {
            return Err(bad_input(anyhow!(
                "{}: --status-interval is not carried out by flashlab: fio prints the results so far every interval, flashlab prints them once, at the end of the run",
                place(option.args, *i, false)
            )))
        }
        "terse-version" => {
            let (v, at) = option.value(i)?;
            if v != "3" {
                return Err(bad_input(anyhow!(
                    "{at}: --terse-version {:?}: flashlab writes fio's terse version 3 only", flashlab_engine::input::excerpt(&v)
                )));
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `--name` (a new job) or one of a job's options, kept in order for the job-file parser.
fn job_option(parsed: &mut Parsed, option: &OptionArg, i: &mut usize) -> Result<(), Failure> {
    let (args, name) = (option.args, option.name);
    if name == "name" {
        let (v, at) = option.value(i)?;
        parsed
            .items
            .push((at.clone(), CommandLineItem::Section(v.clone())));
        // fio also sets the job's `name` option, which its JSON lists in the job's
        // options.
        if v != "global" {
            parsed.items.push((
                at,
                CommandLineItem::Option {
                    key: "name".to_string(),
                    value: Some(v),
                },
            ));
        }
        return Ok(());
    }
    if let Some((_, what)) = REFUSED_RUN_OPTIONS.iter().find(|(n, _)| *n == name) {
        return Err(bad_input(anyhow!(
            "{}: --{name} is a fio option flashlab does not carry out ({what})",
            place(args, *i, false)
        )));
    }
    // A bare flag, an unknown option (the parser names it with the nearest known one) or a
    // value given after `=`: one argument; else the next one is the value.
    let bare = option.inline.is_none()
        && (BARE_FLAGS.contains(&name) || flashlab_workload::fio::find_option(name).is_none());
    let (value, at) = if bare {
        *i += 1;
        (None, place(args, *i - 1, false))
    } else {
        let (v, at) = option.value(i)?;
        (Some(v), at)
    };
    parsed.items.push((
        at,
        CommandLineItem::Option {
            key: name.to_string(),
            value,
        },
    ));
    Ok(())
}

pub fn cmd_fio(args: &FioArgs) -> Result<(), Failure> {
    let parsed = parse_args(&args.args)?;
    if parsed.version {
        return crate::write_output(None, &format!("flashlab {}\n", env!("CARGO_PKG_VERSION")));
    }
    if parsed.items.is_empty() && parsed.files.is_empty() {
        return Err(bad_input(anyhow!(
            "no job given: start one with --name=NAME followed by its options (options before the first --name are global), or give a job file"
        )));
    }
    let name = std::iter::once("command line".to_string())
        .chain(parsed.files.iter().map(|f| f.display().to_string()))
        .collect::<Vec<_>>()
        .join(", ");
    let command_line = CommandLine {
        items: &parsed.items,
        job_files: &parsed.files,
        sections: &parsed.sections,
        name: &name,
    };
    let job_file = flashlab_workload::parse_command_line(&command_line, &|n| std::env::var(n).ok())
        .map_err(|e| match e.kind {
            ParseErrorKind::NoJobs if !parsed.sections.is_empty() => bad_input(anyhow!(
                "no job to run: --section {} names none of the jobs",
                parsed.sections.join(", --section ")
            )),
            ParseErrorKind::NoJobs => bad_input(anyhow!(
                "no job given: the options are all global; start a job with --name=NAME before its options"
            )),
            _ => bad_input(e),
        })?;
    // As fio's --parse-only: the jobs (and here the drive) are checked, nothing runs.
    if parsed.parse_only {
        return load_run_target(&parsed.target).map(|_| ());
    }
    run_parsed(
        &job_file,
        &parsed.target,
        parsed.formats,
        parsed.output.as_deref(),
        &parsed.progress(),
    )
}
