//! `flashlab replay`: a block trace against a simulated device, results as `flashlab run`'s.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::ValueEnum;
use flashlab_engine::IoKind;
use flashlab_runner::{ReplayMode, ReplayOptions};
use flashlab_workload::trace::{
    BlkparseAction, Remap, TimeUnit, TraceFormat, TraceOptions, TraceReader,
};

use super::{bad_input, failure, load_device, Failure, OutputFormat, DEFAULT_SEED};
use crate::progress;
use crate::state_files::OutputFile;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Disksim,
    Msr,
    Blkparse,
    FioIolog,
    Alibaba,
    Tencent,
}

impl FormatArg {
    fn format(self) -> TraceFormat {
        match self {
            FormatArg::Disksim => TraceFormat::Disksim,
            FormatArg::Msr => TraceFormat::Msr,
            FormatArg::Blkparse => TraceFormat::Blkparse,
            FormatArg::FioIolog => TraceFormat::FioIolog,
            FormatArg::Alibaba => TraceFormat::Alibaba,
            FormatArg::Tencent => TraceFormat::Tencent,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Issue each request at its timestamp (divided by --speed).
    Open,
    /// Keep --qd requests outstanding, ignoring timestamps.
    Closed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RemapArg {
    Wrap,
    Scale,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TimeUnitArg {
    Ns,
    Us,
    Ms,
    S,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ActionArg {
    #[value(name = "Q")]
    Q,
    #[value(name = "D")]
    D,
}

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// The trace file.
    trace: PathBuf,
    /// The trace's format (columns and units: docs/traces.md).
    #[arg(long, value_enum)]
    format: FormatArg,
    /// A preset name (see `flashlab devices`) or a path to a device TOML file.
    #[arg(long)]
    device: Option<String>,
    /// Override a device key by its dotted TOML path, e.g. `--set nand.pages_per_block=256`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[arg(long, value_enum, default_value_t = ModeArg::Open)]
    mode: ModeArg,
    /// Open loop: replay this many times faster than recorded (default 1).
    #[arg(long)]
    speed: Option<f64>,
    /// Closed loop: requests kept outstanding (default 1).
    #[arg(long)]
    qd: Option<u32>,
    #[arg(long, value_enum, default_value_t = OutputFormat::Normal)]
    output_format: OutputFormat,
    /// Write the results to this file instead of standard output.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Master seed of every random stream of the device.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    #[command(flatten)]
    state: crate::StateArgs,
    #[command(flatten)]
    progress: progress::ProgressArgs,
    /// Skip and count malformed lines instead of stopping at the first.
    #[arg(long)]
    skip_bad_lines: bool,
    /// Replay only the first N requests (after --volume filtering).
    #[arg(long)]
    max_requests: Option<u64>,
    /// Requests beyond the device: wrap (modulo capacity), scale (shrink the trace's range
    /// onto the device) or error.
    #[arg(long, value_enum, default_value_t = RemapArg::Wrap)]
    remap: RemapArg,
    /// Keep only the requests of this device / disk / volume (disksim, msr, alibaba, tencent).
    #[arg(long)]
    volume: Option<u64>,
    /// disksim: unit of the time column (MQSim's traces: ns; the original DiskSim: ms).
    #[arg(long, value_enum, default_value_t = TimeUnitArg::Ns)]
    time_unit: TimeUnitArg,
    /// blkparse: the event that marks a request, Q (queued) or D (issued to the driver).
    #[arg(long, value_enum, default_value_t = ActionArg::D)]
    blkparse_action: ActionArg,
}

fn trace_options(args: &ReplayArgs) -> Result<TraceOptions, Failure> {
    let format = args.format.format();
    if args.time_unit != TimeUnitArg::Ns && format != TraceFormat::Disksim {
        return Err(bad_input(anyhow!(
            "--time-unit applies to --format disksim only; {format} fixes its own unit"
        )));
    }
    if args.blkparse_action != ActionArg::D && format != TraceFormat::Blkparse {
        return Err(bad_input(anyhow!(
            "--blkparse-action applies to --format blkparse only"
        )));
    }
    let mut o = TraceOptions::new(format);
    o.volume = args.volume;
    o.skip_bad_lines = args.skip_bad_lines;
    o.max_requests = args.max_requests;
    o.disksim_time_unit = match args.time_unit {
        TimeUnitArg::Ns => TimeUnit::Ns,
        TimeUnitArg::Us => TimeUnit::Us,
        TimeUnitArg::Ms => TimeUnit::Ms,
        TimeUnitArg::S => TimeUnit::S,
    };
    o.blkparse_action = match args.blkparse_action {
        ActionArg::Q => BlkparseAction::Queue,
        ActionArg::D => BlkparseAction::Dispatch,
    };
    Ok(o)
}

fn mode(args: &ReplayArgs) -> Result<ReplayMode, Failure> {
    match args.mode {
        ModeArg::Open => {
            if args.qd.is_some() {
                return Err(bad_input(anyhow!(
                    "--qd applies to --mode closed; open-loop replay issues requests at their timestamps"
                )));
            }
            Ok(ReplayMode::Open {
                speed: args.speed.unwrap_or(1.0),
            })
        }
        ModeArg::Closed => {
            if args.speed.is_some() {
                return Err(bad_input(anyhow!(
                    "--speed applies to --mode open; closed-loop replay ignores timestamps"
                )));
            }
            Ok(ReplayMode::Closed {
                qd: args.qd.unwrap_or(1),
            })
        }
    }
}

fn open_reader(
    path: &Path,
    options: &TraceOptions,
) -> Result<TraceReader<BufReader<File>>, Failure> {
    // A trace may be any length (it is read a bounded line at a time), but it must end: a
    // device such as /dev/zero is refused.
    let file = flashlab_engine::input::open_input(path, u64::MAX, "a trace")
        .with_context(|| {
            format!(
                "opening the trace {}",
                flashlab_engine::input::excerpt(&path.to_string_lossy())
            )
        })
        .map_err(bad_input)?;
    TraceReader::new(
        BufReader::with_capacity(1 << 16, file),
        path.display().to_string(),
        options.clone(),
    )
    .map_err(bad_input)
}

/// A first pass over the trace: its requests and the highest end offset (for `--remap
/// scale` and the progress display); malformed lines are reported here, before simulating.
fn survey(path: &Path, options: &TraceOptions) -> Result<(u64, u64), Failure> {
    let mut reader = open_reader(path, options)?;
    let mut end_bytes = 0u64;
    while let Some(r) = reader.next_record().map_err(bad_input)? {
        if r.kind != IoKind::Flush {
            end_bytes = end_bytes.max(r.offset_bytes.saturating_add(r.len_bytes));
        }
    }
    Ok((reader.counts().requests, end_bytes))
}

pub fn cmd_replay(args: &ReplayArgs) -> Result<(), Failure> {
    let trace_options = trace_options(args)?;
    let mode = mode(args)?;
    let remap = match args.remap {
        RemapArg::Wrap => Remap::Wrap,
        RemapArg::Scale => Remap::Scale,
        RemapArg::Error => Remap::Error,
    };
    let (state_out, output) = replay_files(args)?;
    let (requests, end_bytes) = survey(&args.trace, &trace_options)?;

    let device_name = args
        .device
        .clone()
        .unwrap_or_else(|| flashlab_device::DEFAULT_DEVICE.to_string());
    let config = load_device(&device_name, &args.set)?;
    let (ssd, clock_ns) =
        crate::state_files::drive(&config, args.state.load_state.as_deref(), args.seed)?;
    let mut device = flashlab_host::Device::Drive(Box::new(ssd));
    let scale = device.slice_scale();

    let trace_name = args.trace.file_name().map_or_else(
        || args.trace.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut options = ReplayOptions::new(args.seed, config.name.clone(), trace_name);
    options.trace_format = trace_options.format.name().to_string();
    options.mode = mode;
    options.remap = remap;
    options.trace_end_bytes = end_bytes;
    options.expected_requests = Some(requests);
    options.scale = scale;

    let mut reader = open_reader(&args.trace, &trace_options)?;
    let mut display = progress::ProgressLine::new(&args.progress.settings());
    // A loaded drive's replay starts at the drive time its state was saved at; one the
    // drive stopped (worn out, read-only) still writes its results, then fails.
    let outcome =
        flashlab_host::replay_trace(&mut device, clock_ns, &mut reader, &options, &mut |p| {
            display.update(p)
        });
    display.finish();
    let outcome = outcome.map_err(|e| failure(e.is_bad_input(), e))?;
    // A failed save still lets the results out; it is reported after them.
    let save_failure = state_out.as_ref().and_then(|f| {
        crate::state_files::save(f, |out| device.save_state(out, outcome.horizon_ns)).err()
    });
    let mut run = outcome.result;
    if let serde_json::Value::Object(extra) = &mut run.flashlab {
        extra.insert(
            "provenance".into(),
            crate::provenance(&args.set, vec![crate::drive_provenance(&config)]),
        );
    }

    let text = match args.output_format {
        OutputFormat::Normal => {
            let mut head = summary_line(&run.flashlab["replay"]);
            if !scale.is_full() {
                head.push_str(&format!("flashlab: {}\n", scale.summary()));
            }
            head + &flashlab_report::render_normal(&run)
        }
        OutputFormat::Json => flashlab_report::render_json(&run, false),
        OutputFormat::JsonPlus => flashlab_report::render_json(&run, true),
        OutputFormat::Terse => flashlab_report::render_terse(&run),
    };
    crate::write_text(output.as_ref(), &text)?;
    match save_failure {
        Some(failure) => Err(failure),
        None => crate::stopped_by_io_errors(outcome.io_errors),
    }
}

/// The `--save-state` and `--output` files, registered with the replay's inputs before it
/// starts (exit 2 when one cannot be written or is the trace, the device's file or the
/// loaded state): `(state, output)`.
fn replay_files(args: &ReplayArgs) -> Result<(Option<OutputFile>, Option<OutputFile>), Failure> {
    let mut files = crate::state_files::Files::new();
    files
        .input("trace", Some(&args.trace))?
        .input("--device", args.device.as_deref().map(Path::new))?
        .input("--load-state", args.state.load_state.as_deref())?;
    let state = files.output_opt("--save-state", args.state.save_state.as_deref())?;
    let output = files.output_opt("--output", args.output.as_deref())?;
    Ok((state, output))
}

/// One line above the fio-style text: what was replayed and how faithfully.
fn summary_line(r: &serde_json::Value) -> String {
    let how = match r["mode"].as_str() {
        Some("open") => format!("open loop at speed {}", r["speed"]),
        _ => format!("closed loop at qd {}", r["qd"]),
    };
    let mut line = format!(
        "flashlab: replayed {} requests of {} ({}), {how}: {} late (max lag {} ns), {} remapped ({}), {} clamped at the end",
        r["requests"], r["trace"].as_str().unwrap_or(""), r["format"].as_str().unwrap_or(""),
        r["late_requests"], r["max_lag_ns"], r["remap"]["moved"],
        r["remap"]["mode"].as_str().unwrap_or(""), r["remap"]["clamped"],
    );
    let skipped = r["lines"]["skipped_bad"].as_u64().unwrap_or(0);
    if skipped > 0 {
        line.push_str(&format!(
            ", {skipped} malformed lines skipped (first: line {})",
            r["lines"]["first_bad"]
        ));
    }
    line.push('\n');
    line
}
