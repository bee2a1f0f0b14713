//! `flashlab`: run fio job files against simulated drives. This binary only glues the library
//! crates together: parse arguments, build the device, run, render.

mod devices;
mod fio_cli;
mod fio_options;
mod fit;
mod fit_published;
mod hints;
mod progress;
mod replay;
mod serve;
mod state_files;
mod suite;
mod sweep;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use flashlab_engine::input::echo;
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
    /// List the presets: drives, then storage systems, one per line; `devices describe NAME`
    /// shows where each key of a drive came from and its validation status.
    Devices(DevicesArgs),
    /// Show a device's derived figures (capacities, spare factor, dies, bandwidth bounds).
    Describe(DescribeArgs),
    #[command(about = format!("Run a built-in test suite: {} (see docs/suites.md)", suite::suite_list()))]
    Suite(Box<suite::SuiteArgs>),
    /// Replay a block I/O trace against a simulated device (see docs/traces.md).
    Replay(replay::ReplayArgs),
    /// Serve a simulated drive over NBD to real programs (fio --ioengine=nbd, qemu-io,
    /// nbdcopy) until interrupted; see docs/serve.md.
    Serve(ServeArgs),
    /// List the fio options flashlab simulates, accepts without effect, or refuses.
    FioOptions(fio_options::FioOptionsArgs),
    /// Measure a drive and fit a model to it: `fit plan` writes the fio job files, `fit
    /// run` runs them, `fit DIR --output FILE` fits a drive description (see docs/fit.md).
    Fit(Box<fit::FitArgs>),
    /// Run a sweep plan's points (all, one with --point, or on -j threads) or `collect` their
    /// results into one tidy table (see docs/sweeps.md).
    Sweep(sweep::SweepArgs),
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
    /// Also write a self-contained HTML report: per job, the logs over time (when the job
    /// writes them), latency percentiles and histogram, a table per direction.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Also write every chart of the report as an SVG and a PNG file in this directory (made
    /// if missing), named by the chart's id.
    #[arg(long, value_name = "DIR")]
    figures: Option<PathBuf>,
    /// Master seed of every random stream of the run.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    #[command(flatten)]
    state: StateArgs,
    #[command(flatten)]
    progress: progress::ProgressArgs,
    #[command(flatten)]
    threads: SimThreadsArgs,
    /// Run these jobs (names, separated by commas) with the drive's timing model off: a
    /// preconditioning job reaches the same state (map, free blocks, wear, cache contents)
    /// at the speed of the mapping. Each must be alone in its phase (stonewall), write or
    /// trim only and end by its size; it is left out of the results and listed under
    /// "flashlab"."untimed_jobs" in the JSON. Refused, with the reason, where the job or the
    /// drive does not allow it (docs/reference.md, `run`).
    #[arg(long, value_name = "JOB[,JOB]", value_delimiter = ',')]
    untimed: Vec<String>,
}

/// `run`'s `--threads`: the threads of one simulation (`fio` takes it among fio's
/// arguments, `suite` as `--sim-threads`).
#[derive(clap::Args, Debug, Clone, Default)]
struct SimThreadsArgs {
    /// Threads for one simulation: with 2 or more the jobs' statistics (latency histograms,
    /// bandwidth and IOPS samples, logs) are kept on a second thread beside the run loop and
    /// the drive; more than 2 are not used. Results do not depend on it. Default: the
    /// machine's cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS))]
    threads: Option<u16>,
}

/// The most `--threads` takes.
const MAX_THREADS: i64 = 1024;

impl SimThreadsArgs {
    /// The threads asked for, or the machine's cores.
    fn resolve(&self) -> usize {
        self.threads.map_or_else(machine_cores, usize::from)
    }
}

/// The machine's cores as the process may use them (1 when that is unknown).
fn machine_cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
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
    /// Threads for the simulation (`--threads`).
    threads: usize,
    /// Jobs run without the timing model (`--untimed`).
    untimed: Vec<String>,
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
                other => {
                    // The valid formats are the option's help, which the message ends with.
                    let hint = flashlab_engine::input::did_you_mean(
                        other,
                        ["normal", "json", "json+", "terse"],
                    );
                    return Err(if text.contains(',') {
                        format!(
                            "{:?} is not an output format{hint}",
                            flashlab_engine::input::excerpt(other)
                        )
                    } else {
                        format!("not an output format{hint}")
                    });
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
#[command(args_conflicts_with_subcommands = true)]
struct DevicesArgs {
    #[command(subcommand)]
    command: Option<DevicesCommand>,
}

#[derive(Subcommand, Debug)]
enum DevicesCommand {
    /// A preset's or drive file's keys with value and provenance (grouped by kind), and
    /// its validation status: independent rows passing or missing, figures it was
    /// calibrated to. Takes drives, storage systems and their hard disk and 3D XPoint drives.
    Describe(DescribeArgs),
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

/// The command line; `flashlab suite`'s options come from the suite registry
/// ([`suite::suite_command`]).
fn cli_command() -> clap::Command {
    Cli::command().mut_subcommand("suite", suite::suite_command)
}

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
    // A usage error is bad input (exit 2), said in flashlab's form; help and version go
    // to standard output as clap prints them.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(help) = suite::named_suite_help(&argv) {
        print!("{help}");
        return ExitCode::SUCCESS;
    }
    let matches = match cli_command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = hints::clap_error(&e, &cli_command());
            eprintln!(
                "flashlab: error: {}",
                flashlab_engine::input::message(&text)
            );
            return ExitCode::from(2);
        }
    };
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // An interrupt removes the temporary files of the writes under way, then ends the
    // process as it would have; `serve` takes the signals itself, to stop and save.
    if !matches!(cli.command, Command::Serve(_)) {
        flashlab_engine::temp::clean_up_on_signals();
        flashlab_engine::temp::end_on_closed_pipes();
    }
    let outcome = match cli.command {
        Command::Run(args) => cmd_run(&args),
        Command::Fio(args) => fio_cli::cmd_fio(&args),
        Command::Devices(DevicesArgs { command: None }) => cmd_devices(),
        Command::Devices(DevicesArgs {
            command: Some(DevicesCommand::Describe(args)),
        }) => devices::describe(
            &args.device,
            &args.set,
            args.output_format == DescribeFormat::Json,
        )
        .and_then(|text| write_output(None, &text)),
        Command::FioOptions(args) => write_output(None, &fio_options::render(&args)),
        Command::Describe(args) => cmd_describe(&args),
        Command::Suite(args) => match matches.subcommand_matches("suite") {
            Some(m) => suite::cmd(&args, m),
            None => Ok(()),
        },
        Command::Replay(args) => replay::cmd_replay(&args),
        Command::Serve(args) => serve::cmd_serve(&args),
        Command::Sweep(args) => sweep::cmd_sweep(&args),
        Command::Fit(args) => fit::cmd_fit(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            // Every error passes here: user text in it is escaped and cut, whatever path
            // made it.
            let text = format!("{:#}", failure.error);
            eprintln!(
                "flashlab: error: {}",
                flashlab_engine::input::message(&text)
            );
            ExitCode::from(failure.code)
        }
    }
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
    flashlab_device::load_device_config(name, &sets).map_err(|e| bad_input(hints::device_error(e)))
}

fn cmd_run(args: &RunArgs) -> Result<(), Failure> {
    let job_file = flashlab_workload::parse_file(&args.job).map_err(bad_input)?;
    let target = Target {
        device: args.device.clone(),
        set: args.set.clone(),
        seed: args.seed,
        state: args.state.clone(),
        threads: args.threads.resolve(),
        untimed: args.untimed.clone(),
    };
    let mut files = state_files::Files::new();
    let report = files.output_opt("--report", args.report.as_deref())?;
    if report.is_some() {
        state_files::report_date()?;
    }
    if let Some(dir) = &args.figures {
        state_files::figures_dir(dir)?;
        files.outputs_in("--figures", dir, state_files::figure_name)?;
    }
    let pages = RunPages {
        report,
        figures: args.figures.as_deref(),
        job_file: &args.job,
    };
    run_parsed_with(
        &job_file,
        &target,
        args.output_format,
        args.output.as_deref(),
        &args.progress.settings(),
        (files, Some(&pages)),
    )
}

/// `run`'s `--report` and `--figures`, and the job file they name.
struct RunPages<'a> {
    report: Option<state_files::OutputFile>,
    figures: Option<&'a Path>,
    job_file: &'a Path,
}

impl RunPages<'_> {
    fn write(&self, run: &flashlab_report::RunResult, device: &str) -> Result<(), Failure> {
        if let Some(file) = &self.report {
            let command = state_files::command_line();
            let date = state_files::report_date()?;
            let job_file = self.job_file.to_string_lossy();
            let commit = state_files::build_commit();
            let cx = flashlab_report::RunContext {
                job_file: &job_file,
                device,
                made: flashlab_report::Made {
                    command: Some(&command),
                    commit: Some(&commit),
                    date: date.as_deref(),
                },
            };
            file.write_bytes(flashlab_report::render_run_html(run, &cx).as_bytes())
                .map_err(run_failed)?;
        }
        if let Some(dir) = self.figures {
            state_files::write_figures(dir, &flashlab_report::render_run_figures_svg(run))?;
        }
        Ok(())
    }
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

/// The drive to run `job_file` on: `config`, or, where its slice cuts dies and a job's
/// queue cannot be shared among the dies left (`flashlab_runner::die_cut_refusal`), the
/// smallest slice that keeps every die, said on standard error and returned as the JSON
/// member `die_cut_refused`. A slice may cost precision, not the answer: SEQ1M Q1T1 on a
/// quarter of the dies reads at a quarter of the drive's rate. A drive loaded from a state
/// file keeps its slice (the state is the slice's), and the runner refuses the jobs.
fn keep_every_die(
    job_file: &flashlab_workload::JobFile,
    target: &Target,
    config: Box<flashlab_device::DeviceConfig>,
) -> Result<
    (
        Box<flashlab_device::DeviceConfig>,
        Option<serde_json::Value>,
    ),
    Failure,
> {
    if target.state.load_state.is_some() {
        return Ok((config, None));
    }
    let model = config
        .resolve()
        .map_err(|e| bad_input(anyhow!("{} = {}: {}", e.key, e.value, e.message)))?;
    let info = &model.scale;
    let scale = flashlab_runner::SliceScale::of_drive(
        info.capacity_factor,
        info.die_factor,
        info.die_cut_allowed,
    );
    let Some(why) = flashlab_runner::die_cut_refusal(job_file, scale) else {
        return Ok((config, None));
    };
    let Some(all_dies) = info.all_dies_scale else {
        return Ok((config, None));
    };
    let device = target
        .device
        .clone()
        .unwrap_or_else(|| flashlab_device::DEFAULT_DEVICE.to_string());
    let mut sets = target.set.clone();
    sets.push(format!("sim.scale={all_dies}"));
    let kept = load_device(&device, &sets).map_err(|e| {
        bad_input(anyhow!(
            "the slice keeps 1/{:.2} of the dies, and {why}; the smallest slice that keeps every die (sim.scale={all_dies}) does not load either: {}",
            info.die_factor,
            e.error
        ))
    })?;
    eprintln!("flashlab: no die cut: {why}; simulated with every die (sim.scale={all_dies})");
    let refused = serde_json::json!({
        "die_factor": info.die_factor,
        "why": why,
        "simulated_scale": all_dies,
    });
    Ok((Box::new(kept), Some(refused)))
}

/// Run parsed jobs on the target and write the results: `run` and `fio` share this.
/// Every log a job writes goes into a directory that exists: fio creates no directories
/// for its logs, and a mistyped one is better found before the run than after it. Each log
/// file is then registered with the run's files ([`run_files`]).
fn check_log_directories(job_file: &flashlab_workload::JobFile) -> Result<(), Failure> {
    for job in &job_file.jobs {
        for (option, prefix) in [
            ("write_bw_log", &job.log.write_bw_log),
            ("write_lat_log", &job.log.write_lat_log),
            ("write_iops_log", &job.log.write_iops_log),
            ("write_hist_log", &job.log.write_hist_log),
            ("write_iolog", &job.log.write_iolog),
        ] {
            let Some(prefix) = prefix else { continue };
            let Some(dir) = Path::new(prefix).parent() else {
                continue;
            };
            if dir.as_os_str().is_empty() || dir.is_dir() {
                continue;
            }
            let place = job
                .id
                .origin
                .clone()
                .unwrap_or_else(|| format!("{}:{}", job_file.path, job.id.line));
            return Err(bad_input(anyhow!(
                "{place}: job {}: {option}={}: the directory {} does not exist (fio does not create it); create it or name another",
                job.id.name,
                echo(prefix),
                echo(&dir.to_string_lossy())
            )));
        }
    }
    Ok(())
}

/// Every log file the jobs of `job_file` write, with the option and place that name it:
/// a clone's own (its number in the name) or, with per_job_logs=0, one for all clones.
fn log_file_names(job_file: &flashlab_workload::JobFile) -> Vec<(String, &'static str, String)> {
    let mut names = Vec::new();
    let mut job_index = 0u32;
    for job in &job_file.jobs {
        let place = job
            .id
            .origin
            .clone()
            .unwrap_or_else(|| format!("{}:{}", job_file.path, job.id.line));
        let logs = flashlab_report::LogConfig {
            bw_prefix: job.log.write_bw_log.clone(),
            lat_prefix: job.log.write_lat_log.clone(),
            iops_prefix: job.log.write_iops_log.clone(),
            hist_prefix: job.log.write_hist_log.clone(),
            shared_logs: !job.log.per_job_logs,
            ..Default::default()
        };
        let first = job_index + 1;
        job_index = job_index.saturating_add(job.control.numjobs.max(1));
        let iolog = job
            .log
            .write_iolog
            .iter()
            .map(|p| ("write_iolog", p.clone()));
        // Shared logs (per_job_logs=0) have one name for every clone.
        let clones = if logs.shared_logs {
            first..first + 1
        } else {
            first..job_index + 1
        };
        let job_names = clones
            .flat_map(|i| flashlab_report::log_file_names(&logs, i))
            .chain(iolog);
        for (option, name) in job_names {
            names.push((
                format!("{place}: job {}: {option}", job.id.name),
                option,
                name,
            ));
        }
    }
    names
}

/// The files of a `run` or `fio` run, registered with its inputs before the work: the
/// handles its outputs are written with.
struct RunOutputs {
    save: Option<state_files::OutputFile>,
    output: Option<state_files::OutputFile>,
    /// Each log file by the name the run's results give it.
    logs: Vec<(String, state_files::OutputFile)>,
}

/// Registers the run's inputs (the job file and its includes, the device's file, the loaded
/// state) and outputs (`--save-state`, `--output`, every log) in `files`, which already
/// holds the command's own (`--report`, `--figures`): any two naming one file is bad input.
fn run_files(
    mut files: state_files::Files,
    job_file: &flashlab_workload::JobFile,
    target: &Target,
    output: Option<&Path>,
) -> Result<RunOutputs, Failure> {
    files
        .job(job_file)?
        .input("--device", target.device.as_deref().map(Path::new))?
        .input("--load-state", target.state.load_state.as_deref())?;
    let save = files.output_opt("--save-state", target.state.save_state.as_deref())?;
    let output = files.output_opt("--output", output)?;
    let mut logs: Vec<(String, state_files::OutputFile)> = Vec::new();
    let mut shared: Vec<(&str, String)> = Vec::new();
    for (place, option, name) in log_file_names(job_file) {
        // Logs of one option shared among jobs (per_job_logs=0) take each job's lines in
        // one file; any other two names of one file collide.
        if shared.iter().any(|(o, n)| *o == option && *n == name) {
            continue;
        }
        let file = files.output(&place, Path::new(&name))?;
        shared.push((option, name.clone()));
        logs.push((name, file));
    }
    Ok(RunOutputs { save, output, logs })
}

fn run_parsed(
    job_file: &flashlab_workload::JobFile,
    target: &Target,
    formats: OutputFormats,
    output: Option<&Path>,
    progress: &progress::Settings,
) -> Result<(), Failure> {
    run_parsed_with(
        job_file,
        target,
        formats,
        output,
        progress,
        (state_files::Files::new(), None),
    )
}

fn run_parsed_with(
    job_file: &flashlab_workload::JobFile,
    target: &Target,
    formats: OutputFormats,
    output: Option<&Path>,
    progress: &progress::Settings,
    (files, pages): (state_files::Files, Option<&RunPages<'_>>),
) -> Result<(), Failure> {
    // fio prints these with log_info ahead of its results (on stdout with the normal
    // output, on stderr with JSON or terse); here they always go to stderr so the output
    // stays what the format says.
    for warning in job_file.fio_warnings() {
        eprintln!("{warning}");
    }
    check_log_directories(job_file)?;
    let outputs = run_files(files, job_file, target, output)?;
    let state_out = outputs.save.clone();
    let (mut device, clock_ns, described, refused) = open_run_device(job_file, target)?;
    let device_name = described
        .get("name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("the default drive")
        .to_string();
    let mut options = device.run_options(target.seed).with_threads(target.threads);
    options.untimed_jobs = target.untimed.clone();
    let mut display = progress::ProgressLine::new(progress);
    let outcome = flashlab_host::run_jobs(&mut device, clock_ns, job_file, &options, &mut |p| {
        display.update(p)
    });
    display.finish();
    let outcome = outcome.map_err(|e| failure(e.is_bad_input(), e))?;
    if !target.untimed.is_empty() {
        // The text output has no trace of them otherwise: nothing was timed to report.
        eprintln!(
            "flashlab: ran without the timing model (--untimed), so not among the results: {}",
            target.untimed.join(", ")
        );
    }
    // A failed save still lets the results out; it is reported after them.
    let save_failure = state_out
        .as_ref()
        .and_then(|f| state_files::save(f, |out| device.save_state(out, outcome.horizon_ns)).err());
    let mut run = outcome.result;
    // What made the result joins the device's counters and the run's own figures.
    if let serde_json::Value::Object(extra) = &mut run.flashlab {
        extra.insert(
            "provenance".into(),
            provenance(&target.set, vec![described]),
        );
        extra.extend(refused);
    }
    // A drive too large to simulate whole ran as a slice: the text output says so.
    let scale = device.slice_scale();
    let note = (!scale.is_full()).then(|| scale.summary());
    write_text(
        outputs.output.as_ref(),
        &formats.render(&run, note.as_deref()),
    )?;
    // Like fio, log prefixes are paths relative to the current directory; each file is
    // written by the rule of every output (beside it, then renamed over a regular file).
    for log in flashlab_report::log_files(&run) {
        let registered = outputs.logs.iter().find(|(n, _)| *n == log.name);
        let file = match registered {
            Some((_, file)) => file.clone(),
            None => state_files::output_file(log.option, Path::new(&log.name))?,
        };
        file.write_bytes(log.text.as_bytes()).map_err(run_failed)?;
    }
    if let Some(pages) = pages {
        pages.write(&run, &device_name)?;
    }
    match save_failure {
        Some(failure) => Err(failure),
        None => stopped_by_io_errors(outcome.io_errors),
    }
}

/// The drive or system `target` names, loaded from its state file or built fresh, at the
/// device time its run starts, with what the result's provenance says of it.
fn open_run_device(
    job_file: &flashlab_workload::JobFile,
    target: &Target,
) -> Result<
    (
        flashlab_host::Device,
        flashlab_engine::SimTime,
        serde_json::Value,
        serde_json::Map<String, serde_json::Value>,
    ),
    Failure,
> {
    let load = target.state.load_state.as_deref();
    match load_run_target(target)? {
        LoadedTarget::System(name) => {
            let config = flashlab_system::load_system_config(&name).map_err(bad_input)?;
            let (system, clock_ns) = state_files::system(&config, load, target.seed)?;
            let device = flashlab_host::Device::System(Box::new(system));
            Ok((
                device,
                clock_ns,
                system_provenance(&config),
                Default::default(),
            ))
        }
        LoadedTarget::Drive(config) => {
            let (mut config, refused) = keep_every_die(job_file, target, config)?;
            // A slice holds open blocks for the handles the jobs write (docs/placement.md).
            if config.fdp.enabled {
                config.fdp.written_handles = flashlab_workload::placement::identifiers_written(
                    job_file.jobs.iter().map(|j| &j.placement),
                );
            }
            let mut extra = serde_json::Map::new();
            if let Some(refused) = refused {
                extra.insert("die_cut_refused".into(), refused);
            }
            let cautions = say_slice_cautions(job_file, &config);
            if !cautions.is_empty() {
                extra.insert("slice_cautions".into(), cautions.into());
            }
            let (ssd, clock_ns) = state_files::drive(&config, load, target.seed)?;
            let device = flashlab_host::Device::Drive(Box::new(ssd));
            Ok((device, clock_ns, drive_provenance(&config), extra))
        }
    }
}

/// What the drive's slice cannot keep of `job_file`'s answers (`flashlab_runner::
/// slice_cautions`), said on standard error before the run and returned for the JSON.
fn say_slice_cautions(
    job_file: &flashlab_workload::JobFile,
    config: &flashlab_device::DeviceConfig,
) -> Vec<String> {
    let Ok(model) = config.resolve() else {
        return Vec::new();
    };
    let shape = flashlab_suite::slice_shape(&model);
    let cautions = flashlab_runner::slice_cautions(job_file, &shape);
    for caution in &cautions {
        eprintln!("flashlab: slice: {caution}");
    }
    cautions
}

/// A run whose jobs stopped at I/O errors fails once its results are written (as fio,
/// which prints its results and exits non-zero).
fn stopped_by_io_errors(io_errors: Option<String>) -> Result<(), Failure> {
    io_errors.map_or(Ok(()), |text| Err(run_failed(anyhow!(text))))
}

fn write_output(path: Option<&Path>, text: &str) -> Result<(), Failure> {
    let file = path
        .map(|p| state_files::output_file("--output", p))
        .transpose()?;
    write_text(file.as_ref(), text)
}

/// `text` to `file` (checked and registered before the work), or to standard output.
fn write_text(file: Option<&state_files::OutputFile>, text: &str) -> Result<(), Failure> {
    match file {
        Some(file) => file.write_bytes(text.as_bytes()).map_err(run_failed),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                // The reader stopped reading (`| head`) where SIGPIPE does not end the
                // process (serve keeps it ignored): stop without a word.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.context("writing to standard output").map_err(run_failed),
            }
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
