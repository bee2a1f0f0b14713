//! `flashlab`: run fio job files against simulated drives. This binary only glues the library
//! crates together: parse arguments, build the device, run, render.

mod fio_cli;
mod fio_options;
mod progress;
mod replay;
mod serve;
mod state_files;
mod suite_opts;
mod sweep;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use serve::ServeArgs;

/// Seed used when `--seed` is not given: runs are reproducible by default.
const DEFAULT_SEED: u64 = 1;

#[derive(Parser, Debug)]
#[command(
    name = "flashlab",
    version,
    about = "Run fio job files against simulated SSDs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a fio job file against a simulated device.
    Run(RunArgs),
    /// Run a fio command line against a simulated device: `flashlab fio [--device D]
    /// [--set K=V]... [--seed N] --name=JOB --rw=randread ...` (see docs/fio.md).
    Fio(fio_cli::FioArgs),
    /// List the presets: drives, then storage systems, one per line.
    Devices,
    /// Show a device's derived figures (capacities, spare factor, dies, bandwidth bounds).
    Describe(DescribeArgs),
    #[command(about = format!("Run a built-in test suite: {} (see docs/suites.md)", suite_list()))]
    Suite(Box<SuiteArgs>),
    /// Replay a block I/O trace against a simulated device (see docs/traces.md).
    Replay(replay::ReplayArgs),
    /// Serve a simulated drive over NBD to real programs (fio --ioengine=nbd, qemu-io,
    /// nbdcopy) until interrupted; see docs/serve.md.
    Serve(ServeArgs),
    /// List the fio options flashlab simulates, accepts without effect, or refuses.
    FioOptions(fio_options::FioOptionsArgs),
    /// Run a sweep plan's points (all, one with --point, or on -j threads) or `collect` their
    /// results into one tidy table (see docs/sweeps.md).
    Sweep(sweep::SweepArgs),
}

/// The suites' names as help text lists them: `a, b, ... or z`.
fn suite_list() -> String {
    let names: Vec<&str> = flashlab_suite::SUITES.iter().map(|k| k.name()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[derive(clap::Args, Debug)]
struct SuiteArgs {
    #[arg(help = format!("The suite: {}", suite_list()))]
    name: String,
    /// A drive or system preset, or a drive or system TOML file; repeat to compare side by
    /// side (they run in parallel). Default: the default preset.
    #[arg(long)]
    device: Vec<String>,
    /// Run every --device as this many identical drives at once (each on its own thread and
    /// seed; reported as NAME#1 … NAME#N plus their aggregate NAME#all). Not --target.
    #[arg(long, default_value_t = 1, value_name = "N")]
    drives: usize,
    /// Override a device key of every device, e.g. `--set nand.pages_per_block=256`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// normal (a table), json, or tidy-csv (one row per device and result, a column per axis:
    /// queue depth, block size, percentile, step...).
    #[arg(long, value_enum, default_value_t = SuiteFormat::Normal)]
    output_format: SuiteFormat,
    /// Also write the fio JSON and job file of every step and a CSV of the results (and its
    /// tidy form) here.
    #[arg(long)]
    outdir: Option<PathBuf>,
    /// Also write a self-contained HTML report (tables and charts) to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Queue depth of the measured jobs and preconditioning rounds (default 32; transfer-sweep
    /// 4; pts-latency and desktop set their own).
    #[arg(long)]
    qd: Option<u32>,
    /// Jobs (fio numjobs) of the measured jobs and preconditioning rounds (default 1).
    #[arg(long)]
    jobs: Option<u32>,
    /// Length of a random-write preconditioning round: a share of the capacity (25%), a
    /// size (4GiB) or a simulated time (60s).
    #[arg(long, default_value = "25%")]
    round: String,
    /// Rounds before giving up on steady state.
    #[arg(long, default_value_t = 25)]
    max_rounds: usize,
    /// Data content of every write: the share a compressor can remove, percent (0-100; fio's
    /// buffer_compress_percentage). Default: random data, as fio writes. Only a compressing
    /// drive (controller.compression_granule) runs differently.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100))]
    compressible: Option<u8>,
    /// Measured time of each time-based step (e.g. 5s); default: the step's own.
    #[arg(long)]
    runtime: Option<String>,
    /// Boxed: the largest group of options, and clap's variants should stay small.
    #[command(flatten)]
    tests: Box<suite_opts::SuiteTestArgs>,
    #[command(flatten)]
    client: ClientArgs,
    #[command(flatten)]
    real: RealArgs,
    /// `--load-state` and `--save-state`: one simulated drive or system only.
    #[command(flatten)]
    state: StateArgs,
    #[command(flatten)]
    progress: progress::ProgressArgs,
    /// With --save-state: save the state right after the step STEP (a step name of the
    /// suite's report, or `precondition`: the end of the suite's preconditioning) instead
    /// of after the last step.
    #[arg(long, value_name = "STEP", requires = "save_state")]
    save_state_after: Option<String>,
    #[command(flatten)]
    cache: state_files::CacheArgs,
    /// Most threads for a suite's independent drives (op-sweep's spare points, raid-scaling's
    /// sets); 0: one per core. Results do not depend on it.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0)]
    drive_threads: usize,
}

/// Real storage run through the real fio beside the simulated devices (docs/real.md).
#[derive(clap::Args, Debug)]
struct RealArgs {
    /// A block device or file to run the suite on with fio; repeat for several. Its data is
    /// overwritten.
    #[arg(long, value_name = "PATH")]
    target: Vec<PathBuf>,
    /// Run on a target even if it holds a partition table, a file system or other data.
    #[arg(long)]
    destroy_data: bool,
    /// The fio binary used for --target.
    #[arg(long, value_name = "PATH", default_value = "fio")]
    fio: PathBuf,
    /// Create (or resize) file targets to this size, e.g. 1GiB; removed again afterwards
    /// when flashlab created them.
    #[arg(long, value_name = "SIZE")]
    target_size: Option<String>,
    /// Longest real sleep of an idle step on a target.
    #[arg(long, default_value = "10s")]
    max_idle: String,
}

/// Options the client benchmarks share with cache-passes and raid-scaling.
#[derive(clap::Args, Debug)]
struct ClientArgs {
    /// transfer-sweep: test region (default 256MiB); desktop, compression-sweep, cache-passes:
    /// test file (default 1GiB).
    #[arg(long)]
    size: Option<String>,
    /// desktop, cache-passes: CrystalDiskMark test set, default or nvme.
    #[arg(long, default_value = "default")]
    profile: String,
    /// transfer-sweep, desktop, compression-sweep, raid-scaling: drive state first, fresh
    /// (purged) or full (purged and filled); raid-scaling also takes both.
    #[arg(long, default_value = "fresh")]
    state: String,
}

fn client_options(args: &ClientArgs) -> Result<flashlab_suite::ClientOptions, Failure> {
    use flashlab_suite::{parse_size, ClientOptions, DesktopProfile};
    Ok(ClientOptions {
        size_bytes: match &args.size {
            Some(text) => Some(parse_size("--size", text).map_err(bad_input)?),
            None => None,
        },
        profile: DesktopProfile::from_name(&args.profile).map_err(bad_input)?,
        states: ClientOptions::parse_states(&args.state).map_err(bad_input)?,
    })
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// The fio job file.
    job: PathBuf,
    /// A preset name (see `flashlab devices`) or a path to a device TOML file.
    #[arg(long)]
    device: Option<String>,
    /// Override a device key by its dotted TOML path, e.g. `--set nand.pages_per_block=256`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// normal, json, json+ or terse; several separated by commas print each, in fio's order
    /// (terse, json, normal).
    #[arg(long, default_value = "normal", value_parser = OutputFormats::parse)]
    output_format: OutputFormats,
    /// Write the results to this file instead of standard output.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Master seed of every random stream of the run.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    #[command(flatten)]
    state: StateArgs,
    #[command(flatten)]
    progress: progress::ProgressArgs,
}

/// `--load-state` and `--save-state` (`docs/state.md`).
#[derive(clap::Args, Debug, Clone, Default)]
struct StateArgs {
    /// Start from the drive or system saved in FILE (by --save-state, with the same --device
    /// and --set), continuing its time, instead of a fresh one.
    #[arg(long, value_name = "FILE")]
    load_state: Option<PathBuf>,
    /// Save the whole drive or system to FILE after the run.
    #[arg(long, value_name = "FILE")]
    save_state: Option<PathBuf>,
}

/// The drive a run goes to and its seed: `run`'s and `fio`'s `--device`, `--set`, `--seed`,
/// and the state it starts from and is saved to.
#[derive(Debug, Clone)]
struct Target {
    device: Option<String>,
    set: Vec<String>,
    seed: u64,
    state: StateArgs,
}

/// The formats a run prints: fio's `--output-format` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct OutputFormats {
    normal: bool,
    json: bool,
    json_plus: bool,
    terse: bool,
}

impl OutputFormats {
    const NORMAL: Self = Self {
        normal: true,
        json: false,
        json_plus: false,
        terse: false,
    };

    /// fio's comma list, e.g. `normal,json`; each format at most once, whatever the order.
    fn parse(text: &str) -> Result<Self, String> {
        let mut formats = Self::default();
        for word in text.split(',') {
            match word.trim() {
                "normal" => formats.normal = true,
                "json" => formats.json = true,
                "json+" => formats.json_plus = true,
                "terse" => formats.terse = true,
                _ => {
                    return Err(format!(
                        "{word:?} is no output format: expected normal, json, json+ or terse, or several separated by commas (normal,json)"
                    ))
                }
            }
        }
        Ok(formats)
    }

    /// What fio 3.33 prints for these formats: terse, then one JSON document (json+ when
    /// both are asked for), then the normal text, whatever order the list gave. `note` is
    /// printed before the normal text (a slice's scale statement).
    fn render(self, run: &flashlab_report::RunResult, note: Option<&str>) -> String {
        let mut text = String::new();
        if self.terse {
            text.push_str(&flashlab_report::render_terse(run));
        }
        if self.json || self.json_plus {
            text.push_str(&flashlab_report::render_json(run, self.json_plus));
        }
        if self.normal {
            if let Some(note) = note {
                text.push_str(&format!("flashlab: {note}\n"));
            }
            text.push_str(&flashlab_report::render_normal(run));
        }
        text
    }
}

#[derive(clap::Args, Debug)]
struct DescribeArgs {
    /// A preset name or a path to a device TOML file.
    device: String,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[arg(long, value_enum, default_value_t = DescribeFormat::Normal)]
    output_format: DescribeFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    Normal,
    Json,
    #[value(name = "json+")]
    JsonPlus,
    // fio's terse format, version 3: one `;`-separated line per job.
    Terse,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DescribeFormat {
    Normal,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SuiteFormat {
    Normal,
    Json,
    TidyCsv,
}

/// Heading of the options several suites read (each option's help names them).
const SHARED_SUITE_OPTIONS: &str = "Options of several suites";
/// Heading of the options that run a suite on real storage.
const REAL_TARGET_OPTIONS: &str = "Real storage (--target)";

/// The command line. `flashlab suite --help` lists the options every suite takes first,
/// then each suite's own under a heading with its name (from the registry: what
/// `flashlab_suite::Suite::augment_args` adds and `Suite::options` lists), those several
/// suites read under one heading, and those of real storage under another.
fn cli_command() -> clap::Command {
    Cli::command().mut_subcommand("suite", |mut suite| {
        for &k in flashlab_suite::SUITES {
            suite = k.augment_args(suite);
        }
        let headings: Vec<(String, String)> = flashlab_suite::suite_options()
            .into_iter()
            .map(|(option, suites)| {
                let heading = match suites.as_slice() {
                    [one] => format!("{one} options"),
                    _ => SHARED_SUITE_OPTIONS.to_string(),
                };
                (option, heading)
            })
            .collect();
        let ids: Vec<(String, String)> = suite
            .get_arguments()
            .filter_map(|arg| {
                let long = arg.get_long()?;
                let heading = match headings.iter().find(|(o, _)| o == long) {
                    Some((_, h)) => h.clone(),
                    None if REAL_TARGET_FLAGS.contains(&long) => REAL_TARGET_OPTIONS.to_string(),
                    None => return None,
                };
                Some((arg.get_id().to_string(), heading))
            })
            .collect();
        for (id, heading) in ids {
            suite = suite.mut_arg(id, |a| a.help_heading(heading));
        }
        suite
    })
}

/// The options of `flashlab suite` that run it on real storage.
const REAL_TARGET_FLAGS: [&str; 5] = ["target", "destroy-data", "fio", "target-size", "max-idle"];

/// A failure and the exit code it maps to.
struct Failure {
    code: u8,
    error: anyhow::Error,
}

/// Exit code 2: the input (job file, device, option) is wrong.
fn bad_input(error: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: 2,
        error: error.into(),
    }
}

/// Exit code 1: the input was fine but the run failed.
fn run_failed(error: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: 1,
        error: error.into(),
    }
}

/// Exit 2 when the input was at fault (the error says so), else 1.
fn failure(is_bad_input: bool, error: impl Into<anyhow::Error>) -> Failure {
    if is_bad_input {
        bad_input(error)
    } else {
        run_failed(error)
    }
}

fn main() -> ExitCode {
    // clap exits with 2 on usage errors, matching our "bad input" code.
    let matches = cli_command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let outcome = match cli.command {
        Command::Run(args) => cmd_run(&args),
        Command::Fio(args) => fio_cli::cmd_fio(&args),
        Command::Devices => cmd_devices(),
        Command::FioOptions(args) => write_output(None, &fio_options::render(&args)),
        Command::Describe(args) => cmd_describe(&args),
        Command::Suite(args) => match matches.subcommand_matches("suite") {
            Some(m) => check_suite_options(&args.name, m).and_then(|()| cmd_suite(&args, m)),
            None => Ok(()),
        },
        Command::Replay(args) => replay::cmd_replay(&args),
        Command::Serve(args) => serve::cmd_serve(&args),
        Command::Sweep(args) => sweep::cmd_sweep(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("flashlab: error: {:#}", failure.error);
            ExitCode::from(failure.code)
        }
    }
}

/// Refuse options given on the command line that the suite does not use (they would be
/// ignored without a word): an option some suite adds or lists among those it reads
/// (`flashlab_suite::suite_options`) applies to those suites only.
fn check_suite_options(name: &str, matches: &ArgMatches) -> Result<(), Failure> {
    let Ok(kind) = flashlab_suite::suite(name) else {
        return Ok(()); // cmd_suite says what is valid.
    };
    let command = cli_command();
    let Some(suite) = command.find_subcommand("suite") else {
        return Ok(());
    };
    for (option, suites) in flashlab_suite::suite_options() {
        let given = suite.get_arguments().any(|arg| {
            arg.get_long() == Some(option.as_str())
                && matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
        });
        if given && !suites.contains(&kind.name()) {
            return Err(bad_input(anyhow!(
                "--{option} does not apply to suite {}: it is for {}",
                kind.name(),
                suites.join(", ")
            )));
        }
    }
    Ok(())
}

/// `KEY=VALUE` pairs of `--set`.
fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>, Failure> {
    sets.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
            _ => Err(bad_input(anyhow!(
                "--set '{}': expected KEY=VALUE with a dotted device key, e.g. --set nand.pages_per_block=256",
                flashlab_engine::input::excerpt(s)
            ))),
        })
        .collect()
}

fn load_device(name: &str, sets: &[String]) -> Result<flashlab_device::DeviceConfig, Failure> {
    let sets = parse_sets(sets)?;
    flashlab_device::load_device_config(name, &sets).map_err(bad_input)
}

fn cmd_run(args: &RunArgs) -> Result<(), Failure> {
    let job_file = flashlab_workload::parse_file(&args.job).map_err(bad_input)?;
    let target = Target {
        device: args.device.clone(),
        set: args.set.clone(),
        seed: args.seed,
        state: args.state.clone(),
    };
    run_parsed(
        &job_file,
        &target,
        args.output_format,
        args.output.as_deref(),
        &args.progress.settings(),
    )
}

/// The drive or system `--device` names (the default drive without it), with `--set`.
enum LoadedTarget {
    Drive(Box<flashlab_device::DeviceConfig>),
    System(String),
}

fn load_run_target(target: &Target) -> Result<LoadedTarget, Failure> {
    let device_name = target
        .device
        .clone()
        .unwrap_or_else(|| flashlab_device::DEFAULT_DEVICE.to_string());
    if flashlab_system::is_system(&device_name) {
        // A system's own drives carry their overrides (`set = {...}` in the file).
        if !target.set.is_empty() {
            return Err(bad_input(anyhow::anyhow!(
                "--set applies to a single drive; in a system description put overrides in the drive's `set = {{...}}`"
            )));
        }
        return Ok(LoadedTarget::System(device_name));
    }
    Ok(LoadedTarget::Drive(Box::new(load_device(
        &device_name,
        &target.set,
    )?)))
}

/// Run parsed jobs on the target and write the results: `run` and `fio` share this.
/// Every log a job writes goes into a directory that exists: fio creates no directories
/// for its logs, and a mistyped one is better found before the run than after it.
fn check_log_directories(job_file: &flashlab_workload::JobFile) -> Result<(), Failure> {
    for job in &job_file.jobs {
        for (option, prefix) in [
            ("write_bw_log", &job.write_bw_log),
            ("write_lat_log", &job.write_lat_log),
            ("write_iops_log", &job.write_iops_log),
            ("write_hist_log", &job.write_hist_log),
            ("write_iolog", &job.write_iolog),
        ] {
            let Some(prefix) = prefix else { continue };
            let Some(dir) = Path::new(prefix).parent() else {
                continue;
            };
            if dir.as_os_str().is_empty() || dir.is_dir() {
                continue;
            }
            let place = job
                .origin
                .clone()
                .unwrap_or_else(|| format!("{}:{}", job_file.path, job.line));
            return Err(bad_input(anyhow!(
                "{place}: job {}: {option}={prefix}: the directory {} does not exist (fio does not create it); create it or name another",
                job.name,
                dir.display()
            )));
        }
    }
    Ok(())
}

fn run_parsed(
    job_file: &flashlab_workload::JobFile,
    target: &Target,
    formats: OutputFormats,
    output: Option<&Path>,
    progress: &progress::Settings,
) -> Result<(), Failure> {
    // fio prints these with log_info ahead of its results (on stdout with the normal
    // output, on stderr with JSON or terse); here they always go to stderr so the output
    // stays what the format says.
    for warning in job_file.fio_warnings() {
        eprintln!("{warning}");
    }
    check_log_directories(job_file)?;
    let state_out = run_files(job_file, target, output)?;
    let config = match load_run_target(target)? {
        LoadedTarget::System(name) => {
            return run_system(job_file, target, &name, formats, output, progress)
        }
        LoadedTarget::Drive(config) => config,
    };
    let (mut ssd, clock_ns) =
        state_files::drive(&config, target.state.load_state.as_deref(), target.seed)?;

    // A drive too large to simulate whole runs as a slice; the runner shrinks the jobs to it
    // and scales the results back.
    let info = ssd.scale();
    let scale = flashlab_runner::SliceScale::new(info.capacity_factor, info.die_factor);
    let options =
        flashlab_runner::RunOptions::new(target.seed, config.name.clone()).with_scale(scale);
    let mut display = progress::ProgressLine::new(progress);
    // On a drive split into namespaces, fio's filename= picks a job's namespace.
    // A loaded drive's run starts at the drive time its state was saved at.
    let (result, horizon_ns) = if ssd.namespace_count() > 1 {
        let mut targets = flashlab_suite::DriveTargets::new(&mut ssd, clock_ns);
        let r = flashlab_runner::run_targets(job_file, &mut targets, &options, &mut |p| {
            display.update(p)
        });
        (r, targets.horizon_ns())
    } else {
        let mut drive = flashlab_engine::Continued::new(&mut ssd, clock_ns);
        let r =
            flashlab_runner::run_jobs(job_file, &mut drive, &options, &mut |p| display.update(p));
        (r, drive.horizon_ns())
    };
    display.finish();
    let (mut run, io_failure) = completed(result)?;
    // A failed save still lets the results out; it is reported after them.
    let save_failure = state_out
        .as_ref()
        .and_then(|f| state_files::save(f, |out| ssd.save_state(out, horizon_ns)).err());

    // The device's counters (they include its scale) join the run's own flashlab figures,
    // with what made the result.
    if let serde_json::Value::Object(extra) = &mut run.flashlab {
        extra.insert("device_counters".into(), ssd.counters_json());
        extra.insert(
            "provenance".into(),
            provenance(&target.set, vec![drive_provenance(&config)]),
        );
    }

    let note = (!scale.is_full()).then(|| scale.summary());
    write_output(output, &formats.render(&run, note.as_deref()))?;
    // Like fio, log prefixes are paths relative to the current directory.
    flashlab_report::write_logs(&run, Path::new("."))
        .context("writing the log files")
        .map_err(run_failed)?;
    save_failure.or(io_failure).map_or(Ok(()), Err)
}

/// The `--save-state` and `--output` files of a run, checked before it starts (exit 2 when
/// one cannot be written or is also an input of the run): the state's, when saved.
fn run_files(
    job_file: &flashlab_workload::JobFile,
    target: &Target,
    output: Option<&Path>,
) -> Result<Option<state_files::OutputFile>, Failure> {
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    if let Some(p) = &target.state.save_state {
        outputs.push(("--save-state", p));
    }
    if let Some(p) = output {
        outputs.push(("--output", p));
    }
    let mut inputs: Vec<(&str, &Path)> = vec![("job file", Path::new(&job_file.path))];
    if let Some(p) = &target.state.load_state {
        inputs.push(("--load-state", p));
    }
    if let Some(d) = &target.device {
        inputs.push(("--device", Path::new(d)));
    }
    let checked = state_files::check_files(&outputs, &inputs)?;
    Ok(target
        .state
        .save_state
        .as_ref()
        .and(checked.into_iter().next()))
}

/// A run's result, with the failure to report once it is written when jobs stopped at I/O
/// errors (as fio, which prints its results and exits non-zero); any other error at once.
fn completed(
    result: Result<flashlab_report::RunResult, flashlab_runner::RunError>,
) -> Result<(flashlab_report::RunResult, Option<Failure>), Failure> {
    match result {
        Ok(run) => Ok((run, None)),
        Err(flashlab_runner::RunError::Io { errors, result }) => {
            let text = errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            Ok((*result, Some(run_failed(anyhow!(text)))))
        }
        Err(e) => Err(failure(e.is_bad_input(), e)),
    }
}

/// `run` against a system description (RAID, cache tier, links).
fn run_system(
    job_file: &flashlab_workload::JobFile,
    target: &Target,
    name: &str,
    formats: OutputFormats,
    output: Option<&Path>,
    progress: &progress::Settings,
) -> Result<(), Failure> {
    let config = flashlab_system::load_system_config(name).map_err(bad_input)?;
    let (mut system, clock_ns) =
        state_files::system(&config, target.state.load_state.as_deref(), target.seed)?;
    let options = flashlab_runner::RunOptions::new(target.seed, config.name.clone());
    let mut display = progress::ProgressLine::new(progress);
    let mut continued = flashlab_engine::Continued::new(&mut system, clock_ns);
    let result = flashlab_runner::run_jobs(job_file, &mut continued, &options, &mut |p| {
        display.update(p)
    });
    let horizon_ns = continued.horizon_ns();
    display.finish();
    let (mut run, io_failure) = completed(result)?;
    let save_failure = run_files(job_file, target, output)?
        .and_then(|f| state_files::save(&f, |out| system.save_state(out, horizon_ns)).err());
    if let serde_json::Value::Object(extra) = &mut run.flashlab {
        extra.insert("system_counters".into(), system.counters_json());
        extra.insert(
            "provenance".into(),
            provenance(&target.set, vec![system_provenance(&config)]),
        );
    }
    write_output(output, &formats.render(&run, None))?;
    flashlab_report::write_logs(&run, Path::new("."))
        .context("writing the log files")
        .map_err(run_failed)?;
    save_failure.or(io_failure).map_or(Ok(()), Err)
}

fn write_output(path: Option<&Path>, text: &str) -> Result<(), Failure> {
    match path {
        Some(path) => state_files::output_file("--output", path)?
            .write_bytes(text.as_bytes())
            .map_err(run_failed),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("writing to standard output")
                .map_err(run_failed)
        }
    }
}

/// The presets, grouped: single drives (every command takes them) and storage systems (`run`,
/// `suite` and `serve` take them; docs/systems.md), one indented line each under a heading.
fn cmd_devices() -> Result<(), Failure> {
    let drives = flashlab_device::preset_names();
    let systems = flashlab_system::system_preset_names()
        .into_iter()
        .map(|name| {
            flashlab_system::load_system_config(name)
                .map(|c| (name, c.description))
                .map_err(|e| run_failed(anyhow!("built-in system preset {name}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let width = drives
        .iter()
        .map(|(n, _)| n.len())
        .chain(systems.iter().map(|(n, _)| n.len()))
        .max()
        .unwrap_or(0);
    let mut text = String::from("drives:\n");
    for (name, summary) in &drives {
        let marker = if *name == flashlab_device::DEFAULT_DEVICE {
            " (default)"
        } else {
            ""
        };
        text.push_str(&format!("  {name:width$}  {summary}{marker}\n"));
    }
    text.push_str("systems (run, suite and serve; docs/systems.md):\n");
    for (name, summary) in &systems {
        text.push_str(&format!("  {name:width$}  {summary}\n"));
    }
    write_output(None, &text)
}

/// What `run` does with results on this device, when it is simulated as a slice.
fn run_scale_statement(config: &flashlab_device::DeviceConfig) -> Option<String> {
    let model = config.resolve().ok()?;
    let scale =
        flashlab_runner::SliceScale::new(model.scale.capacity_factor, model.scale.die_factor);
    (!scale.is_full()).then(|| scale.summary())
}

/// `describe` derives one SSD's figures; for a storage system it names the system's SSDs
/// (each of which it can describe) and where a system's own figures are.
fn describe_system_refusal(name: &str) -> Failure {
    let ssds = match flashlab_system::load_system_config(name) {
        Ok(config) => config
            .components
            .iter()
            .filter_map(|(id, c)| match c {
                flashlab_system::ComponentSpec::Ssd(d) => Some(format!("{id} ({})", d.name)),
                _ => None,
            })
            .collect::<Vec<_>>(),
        Err(e) => return bad_input(e),
    };
    let drives = if ssds.is_empty() {
        "it has no SSD".to_string()
    } else {
        format!("its SSDs: {}", ssds.join(", "))
    };
    bad_input(anyhow!(
        "{name} is a storage system; `describe` shows one SSD's derived figures ({drives}; describe a preset or drive file by name); a system's figures are in the `system_counters` of `flashlab run --output-format json` against it"
    ))
}

fn cmd_describe(args: &DescribeArgs) -> Result<(), Failure> {
    if flashlab_system::is_system(&args.device) {
        return Err(describe_system_refusal(&args.device));
    }
    let config = load_device(&args.device, &args.set)?;
    let statement = run_scale_statement(&config);
    let text = match args.output_format {
        DescribeFormat::Normal => {
            let mut text = config.describe();
            if let Some(statement) = statement {
                text.push_str(&format!("run: {statement}\n"));
            }
            text
        }
        DescribeFormat::Json => {
            let mut json = config.describe_json();
            if let (Some(statement), Some(sim)) = (
                statement,
                json.get_mut("sim").and_then(|s| s.as_object_mut()),
            ) {
                sim.insert("run".into(), serde_json::Value::String(statement));
            }
            let mut s = serde_json::to_string_pretty(&json).map_err(|e| run_failed(anyhow!(e)))?;
            s.push('\n');
            s
        }
    };
    write_output(None, &text)
}

fn suite_options(
    args: &SuiteArgs,
    matches: &ArgMatches,
) -> Result<flashlab_suite::SuiteOptions, Failure> {
    let round = flashlab_suite::RoundLength::parse(&args.round).map_err(bad_input)?;
    // Only a time above zero is valid: name --runtime and say so, not --round's choices.
    let runtime_ns = match &args.runtime {
        None => None,
        Some(text) => match flashlab_suite::RoundLength::parse_for("--runtime", text) {
            Ok(flashlab_suite::RoundLength::TimeNs(ns)) => Some(ns),
            _ => {
                return Err(bad_input(anyhow!(
                    "--runtime '{text}': expected a time above 0 such as 500ms, 10s or 2min"
                )))
            }
        },
    };
    let mut options = flashlab_suite::SuiteOptions {
        seed: args.seed,
        round,
        max_rounds: args.max_rounds,
        qd: args.qd,
        jobs: args.jobs,
        runtime_ns,
        client: client_options(&args.client)?,
        compressible_percent: args.compressible,
        ..Default::default()
    };
    args.tests.apply(&mut options).map_err(bad_input)?;
    for &k in flashlab_suite::SUITES {
        k.apply_args(matches, &mut options).map_err(bad_input)?;
    }
    options.threads = args.drive_threads;
    // A step inside a cached preconditioning does not run on a warm cache, so saving after
    // one needs the preconditioning to run.
    let inside_precondition = args
        .save_state_after
        .as_deref()
        .is_some_and(|s| s != flashlab_suite::PRECONDITION_STEP);
    // A loaded drive is not a fresh one: the cache does not apply to it.
    if !inside_precondition && args.state.load_state.is_none() {
        options.state_cache = args.cache.cache()?;
    }
    options.validate().map_err(bad_input)?;
    Ok(options)
}

/// The devices a suite runs on: those its own options name (`Suite::devices`), `--device`
/// (repeated), or the suite's default (cache-passes: the hard disk alone and both Optane
/// caches).
fn suite_device_names(
    kind: flashlab_suite::SuiteKind,
    args: &SuiteArgs,
    options: &flashlab_suite::SuiteOptions,
) -> Result<Vec<String>, Failure> {
    if let Some((option, names)) = kind.devices(options) {
        if !args.device.is_empty() {
            return Err(bad_input(anyhow!(
                "--{option} and --device both name {}'s {option} drive; give one",
                kind.name()
            )));
        }
        return Ok(names);
    }
    if !args.device.is_empty() {
        return Ok(args.device.clone());
    }
    Ok(match kind.default_devices() {
        [] => vec![flashlab_device::DEFAULT_DEVICE.to_string()],
        names => names.iter().map(|n| n.to_string()).collect(),
    })
}

/// A drive (preset or file, with `--set`) or a system (preset or file; overrides live in
/// its drives' `set = {...}`, so `--set` is refused).
fn load_target(name: &str, sets: &[String]) -> Result<flashlab_suite::SuiteTarget, Failure> {
    if flashlab_system::is_system(name) {
        if !sets.is_empty() {
            return Err(bad_input(anyhow!(
                "--set applies to a single drive, and '{name}' is a system; in a system description put overrides in the drive's `set = {{...}}`"
            )));
        }
        let config = flashlab_system::load_system_config(name).map_err(bad_input)?;
        return Ok(flashlab_suite::SuiteTarget::System(config));
    }
    Ok(flashlab_suite::SuiteTarget::Drive(Box::new(load_device(
        name, sets,
    )?)))
}

/// Open every `--target` (safety checks, size, fio's engine) before anything runs.
fn open_targets(args: &RealArgs) -> Result<Vec<flashlab_suite::RealTarget>, Failure> {
    if args.target.is_empty() {
        return Ok(Vec::new());
    }
    let options = flashlab_suite::RealOptions {
        fio: args.fio.clone(),
        destroy_data: args.destroy_data,
        create_size_bytes: args
            .target_size
            .as_deref()
            .map(|t| flashlab_suite::parse_size("--target-size", t))
            .transpose()
            .map_err(bad_input)?,
        max_idle_ns: flashlab_suite::parse_time("--max-idle", &args.max_idle).map_err(bad_input)?,
    };
    args.target
        .iter()
        .map(|p| {
            flashlab_suite::RealTarget::open(p, &options).map_err(|e| failure(e.is_bad_input(), e))
        })
        .collect()
}

fn cmd_suite(args: &SuiteArgs, matches: &ArgMatches) -> Result<(), Failure> {
    let kind = flashlab_suite::suite(&args.name).map_err(bad_input)?;
    let options = suite_options(args, matches)?;
    if args.drives == 0 || args.drives > flashlab_suite::MAX_DRIVES {
        return Err(bad_input(anyhow!(
            "--drives {}: identical drives per device, 1 to {}",
            args.drives,
            flashlab_suite::MAX_DRIVES
        )));
    }
    // Real storage (fio) runs beside the simulated devices; with only --target given, no
    // simulated device is added.
    let mut real_targets = open_targets(&args.real)?;
    let names =
        if args.device.is_empty() && kind.devices(&options).is_none() && !real_targets.is_empty() {
            Vec::new()
        } else {
            suite_device_names(kind, args, &options)?
        };
    // --set applies to every device: with several, say which one refused it.
    let targets = names
        .iter()
        .map(|n| {
            load_target(n, &args.set).map_err(|f| match names.len() {
                1 => f,
                _ => Failure {
                    code: f.code,
                    error: f.error.context(format!("--device {n}")),
                },
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if args.state.load_state.is_some() || args.state.save_state.is_some() {
        return suite_with_state(kind, args, &options, &names, &targets, &real_targets);
    }
    // Drive runs come first, `args.drives` per simulated device (bounded by the library).
    let sim_runs = names.len().saturating_mul(args.drives);
    let display = progress::SuiteProgressLine::new(
        &args.progress.settings(),
        sim_runs.saturating_add(real_targets.len()),
    );
    let progress = |device: usize, p: &flashlab_suite::SuiteProgress| display.update(device, p);
    let mut outcome =
        flashlab_suite::run_suite_drives_with(kind, &targets, args.drives, &options, &progress);
    // Real targets run after the simulations, one at a time, so nothing else competes for
    // the CPU while fio measures.
    for (i, target) in real_targets.iter_mut().enumerate() {
        let Ok(report) = &mut outcome else { break };
        let index = sim_runs + i;
        match flashlab_suite::run_on_real_target(kind, target, &options, &mut |p| {
            progress(index, p)
        }) {
            Ok(device) => report.devices.push(device),
            Err(e) => outcome = Err(e),
        }
    }
    display.finish(outcome.is_ok());
    let report = outcome.map_err(|e| failure(e.is_bad_input(), e))?;
    write_suite_report(args, &targets, &report)
}

/// `flashlab suite … --load-state/--save-state`: the suite on one simulated drive or system,
/// started from a saved state (its clock the first step's start) and/or saved after the last
/// step. Several devices, identical drives, real storage and the suites that build their own
/// drives have no one device to load or save, and are refused.
fn suite_with_state(
    kind: flashlab_suite::SuiteKind,
    args: &SuiteArgs,
    options: &flashlab_suite::SuiteOptions,
    names: &[String],
    targets: &[flashlab_suite::SuiteTarget],
    real_targets: &[flashlab_suite::RealTarget],
) -> Result<(), Failure> {
    let flag = if args.state.load_state.is_some() {
        "--load-state"
    } else {
        "--save-state"
    };
    if !real_targets.is_empty() {
        return Err(bad_input(anyhow!(
            "{flag} applies to a simulated drive or system; --target is real storage, whose state is its own"
        )));
    }
    if args.drives != 1 {
        return Err(bad_input(anyhow!(
            "{flag} applies to one simulated drive; --drives {} runs several (give --drives 1)",
            args.drives
        )));
    }
    let [target] = targets else {
        return Err(bad_input(anyhow!(
            "{flag} applies to one simulated drive or system; {} devices given ({}): give one --device",
            names.len(),
            names.join(", ")
        )));
    };
    if kind.targets() == flashlab_suite::Targets::Description {
        return Err(bad_input(anyhow!(
            "{flag} does not apply to suite {}: it builds its own drives from the description, so there is no one drive to start from or save",
            kind.name()
        )));
    }
    let load = args.state.load_state.as_deref();
    let display = progress::SuiteProgressLine::new(&args.progress.settings(), 1);
    let mut progress = |p: &flashlab_suite::SuiteProgress| display.update(0, p);
    let name = target.name().to_string();
    let mut inputs: Vec<(&str, &Path)> = Vec::new();
    if let Some(p) = load {
        inputs.push(("--load-state", p));
    }
    if let Some(p) = &args.report {
        inputs.push(("--report", p));
    }
    let save_file = state_files::state_output(args.state.save_state.as_deref(), &inputs)?;
    let save_to = save_file.as_ref();
    // --save-state-after: the hook saves at every end of the step named (the last one
    // counts); the state at the suite's end is saved only without it.
    let after = args.save_state_after.as_deref();
    let mut saved_after: Result<bool, Failure> = Ok(false);
    let mut hook = |step: &str, dev: &dyn flashlab_suite::SuiteDevice, now_ns: u64| {
        if let (Some(path), true, Ok(_)) = (save_to, after == Some(step), &saved_after) {
            saved_after =
                state_files::save(path, |out| dev.save_state_to(out, now_ns)).map(|()| true);
        }
    };
    let end_save = if after.is_some() { None } else { save_to };
    let device_seed = flashlab_engine::SeedTree::new(options.seed)
        .child("device")
        .master_seed();
    let fresh = load.is_none().then_some((target, device_seed));
    let run = |start_ns, hook| device_run(start_ns, hook, fresh);
    let device = match target {
        flashlab_suite::SuiteTarget::Drive(config) => {
            let (mut ssd, start_ns) = state_files::drive(config, load, options.seed)?;
            let device = suite_from(
                kind,
                &mut ssd,
                &name,
                run(start_ns, &mut hook),
                options,
                &mut progress,
            )?;
            save_state_to(end_save, |out, end_ns| ssd.save_state(out, end_ns), device)?
        }
        flashlab_suite::SuiteTarget::System(config) => {
            let (mut system, start_ns) = state_files::system(config, load, options.seed)?;
            let device = suite_from(
                kind,
                &mut system,
                &name,
                run(start_ns, &mut hook),
                options,
                &mut progress,
            )?;
            save_state_to(
                end_save,
                |out, end_ns| system.save_state(out, end_ns),
                device,
            )?
        }
    };
    display.finish(true);
    if let Some(step) = after {
        if !saved_after? {
            let mut names = vec![flashlab_suite::PRECONDITION_STEP.to_string()];
            names.extend(device.steps.iter().map(|s| s.name.clone()));
            return Err(bad_input(anyhow!(
                "--save-state-after {}: suite {} ran no step of that name on '{name}', so no state was saved; valid steps: {}",
                flashlab_engine::input::excerpt(step),
                kind.name(),
                names.join(", ")
            )));
        }
    }
    let report = flashlab_suite::SuiteReport {
        suite: kind,
        options: options.clone(),
        devices: vec![device],
    };
    write_suite_report(args, targets, &report)
}

/// How a suite runs on the device `suite_with_state` built: from `start_ns`, `hook` hearing
/// each step's end, and fresh from `fresh` (target, device seed) unless loaded.
fn device_run<'a>(
    start_ns: u64,
    hook: flashlab_suite::AfterStep<'a>,
    fresh: Option<(&flashlab_suite::SuiteTarget, u64)>,
) -> flashlab_suite::DeviceRun<'a> {
    let run = flashlab_suite::DeviceRun::starting_at(start_ns).with_after_step(hook);
    match fresh {
        Some((target, seed)) => run.fresh(target, seed),
        None => run,
    }
}

/// One suite on a drive or system that starts at `start_ns` (a loaded state's clock): its
/// report and the time the suite ended.
fn suite_from<'a>(
    kind: flashlab_suite::SuiteKind,
    dev: &'a mut dyn flashlab_suite::SuiteDevice,
    name: &str,
    run: flashlab_suite::DeviceRun<'a>,
    options: &'a flashlab_suite::SuiteOptions,
    progress: &'a mut dyn FnMut(&flashlab_suite::SuiteProgress),
) -> Result<(flashlab_suite::DeviceReport, u64), Failure> {
    flashlab_suite::run_on_suite_device_as(kind, dev, name, run, options, progress)
        .map_err(|e| failure(e.is_bad_input(), e))
}

/// The state at the suite's end into `path` (when `--save-state` gave one); the report on.
fn save_state_to(
    path: Option<&state_files::OutputFile>,
    save: impl FnOnce(
        &mut std::io::BufWriter<std::fs::File>,
        u64,
    ) -> Result<u64, flashlab_engine::StateError>,
    (device, end_ns): (flashlab_suite::DeviceReport, u64),
) -> Result<flashlab_suite::DeviceReport, Failure> {
    if let Some(path) = path {
        state_files::save(path, |out| save(out, end_ns))?;
    }
    Ok(device)
}

/// A suite's report: `--outdir`, `--report` and the table or JSON on standard output.
fn write_suite_report(
    args: &SuiteArgs,
    targets: &[flashlab_suite::SuiteTarget],
    report: &flashlab_suite::SuiteReport,
) -> Result<(), Failure> {
    if let Some(dir) = &args.outdir {
        flashlab_suite::write_outdir(report, dir)
            .with_context(|| format!("writing results under {}", dir.display()))
            .map_err(run_failed)?;
    }
    if let Some(path) = &args.report {
        state_files::output_file("--report", path)?
            .write_bytes(flashlab_suite::render_html(report).as_bytes())
            .map_err(run_failed)?;
    }
    let text = match args.output_format {
        SuiteFormat::Normal => flashlab_suite::render_table(report),
        SuiteFormat::Json => {
            let devices = targets
                .iter()
                .map(|t| match t {
                    flashlab_suite::SuiteTarget::Drive(c) => drive_provenance(c),
                    flashlab_suite::SuiteTarget::System(c) => system_provenance(c),
                })
                .collect();
            with_provenance(
                &flashlab_suite::render_json(report),
                &provenance(&args.set, devices),
            )
        }
        SuiteFormat::TidyCsv => flashlab_suite::render_tidy_csv(report),
    };
    write_output(None, &text)
}

/// What made a result, for its JSON's `"flashlab"` object: the flashlab build (version and
/// commit), the `--set` overrides as given, and each device's resolved configuration.
fn provenance(overrides: &[String], devices: Vec<serde_json::Value>) -> serde_json::Value {
    let mut p = flashlab_sweep::provenance();
    p["overrides"] = overrides.into();
    p["devices"] = devices.into();
    p
}

/// A drive's name and resolved configuration (every key, overrides applied).
fn drive_provenance(config: &flashlab_device::DeviceConfig) -> serde_json::Value {
    serde_json::json!({
        "name": config.name,
        "config": serde_json::to_value(config).unwrap_or(serde_json::Value::Null),
    })
}

/// A system's name and the hash of its resolved description (its drives' included), as its
/// saved states carry it.
fn system_provenance(config: &flashlab_system::SystemConfig) -> serde_json::Value {
    serde_json::json!({
        "name": config.name,
        "system_config_hash": format!("{:016x}", flashlab_system::system_config_hash(config)),
    })
}

/// A suite's JSON report (`text`, an object printed with two-space indents) with
/// `"flashlab": value` as its first member; the rest stays byte for byte as rendered.
fn with_provenance(text: &str, value: &serde_json::Value) -> String {
    let Some(rest) = text.strip_prefix("{\n") else {
        return text.to_string();
    };
    let body =
        serde_json::to_string_pretty(&serde_json::json!({ "flashlab": value })).unwrap_or_default();
    // The one-member object's inside, its lines already indented by two spaces.
    let member = body
        .strip_prefix("{\n")
        .and_then(|b| b.strip_suffix("\n}"))
        .unwrap_or_default();
    format!("{{\n{member},\n{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A suite's option list names options `flashlab suite` has: a misspelt name would leave
    /// the real option unchecked for every suite.
    #[test]
    fn every_suite_option_is_an_option_of_the_command() {
        let command = cli_command();
        let suite = command.find_subcommand("suite").unwrap();
        let longs: Vec<&str> = suite.get_arguments().filter_map(|a| a.get_long()).collect();
        let options = flashlab_suite::suite_options();
        assert!(options.len() > 40, "{options:?}");
        for (option, suites) in options {
            assert!(longs.contains(&option.as_str()), "--{option} of {suites:?}");
        }
    }
}
