//! `flashlab suite`: its command line (the options every suite takes, each suite's own from
//! the registry, real storage), the check that refuses another suite's option, and running a
//! suite on simulated devices, a saved state or real storage, then writing its report.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::parser::ValueSource;
use clap::{ArgMatches, ValueEnum};

use crate::{
    bad_input, cli_command, drive_provenance, failure, load_device, progress, provenance,
    run_failed, state_files, system_provenance, with_provenance, write_output, Failure, StateArgs,
};

/// The suites' names as help text lists them: `a, b, ... or z`.
pub(crate) fn suite_list() -> String {
    let names: Vec<&str> = flashlab_suite::SUITES.iter().map(|k| k.name()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[derive(clap::Args, Debug)]
pub(crate) struct SuiteArgs {
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
    /// Also write every chart of the report as an SVG and a PNG file in this directory (made
    /// if missing), named by the chart's id: `qos-iops.svg`, `qos-iops.png`.
    #[arg(long, value_name = "DIR")]
    figures: Option<PathBuf>,
    /// The options every suite takes and those several share (`--seed`, `--qd`, ...,
    /// `--size`): the suite crate's, which builds them from name/value pairs too. Boxed: the
    /// largest group of options, and clap's variants should stay small.
    #[command(flatten)]
    options: Box<flashlab_suite::SuiteOptionArgs>,
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
    /// Most threads for a suite's independent drives (op-sweep's spare points, placement's
    /// points, raid-scaling's sets); 0: one per core. Results do not depend on it.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0)]
    drive_threads: usize,
    /// Threads for each simulation (`flashlab run --threads`; `--threads` is oltp's):
    /// with 2 or more a run's statistics are kept on a second thread, apart from
    /// --drive-threads (each drive running at once uses up to this many). Results do not
    /// depend on it. Default: the machine's cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=crate::MAX_THREADS))]
    sim_threads: Option<u16>,
}

/// Real storage run through the real fio beside the simulated devices (docs/real.md).
#[derive(clap::Args, Debug)]
pub(crate) struct RealArgs {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SuiteFormat {
    Normal,
    Json,
    TidyCsv,
}

/// Heading of the options several suites read (each option's help names them).
pub(crate) const SHARED_SUITE_OPTIONS: &str = "Options of several suites";
/// Heading of the options that run a suite on real storage.
pub(crate) const REAL_TARGET_OPTIONS: &str = "Real storage (--target)";

/// `flashlab suite` with every suite's options: `flashlab suite --help` lists the options every
/// suite takes first, then each suite's own under a heading with its name (from the registry:
/// what `flashlab_suite::Suite::augment_args` adds and `Suite::options` lists), those several
/// suites read under one heading, and those of real storage under another.
pub(crate) fn suite_command(mut suite: clap::Command) -> clap::Command {
    {
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
    }
}

/// The options of `flashlab suite` that run it on real storage.
pub(crate) const REAL_TARGET_FLAGS: [&str; 5] =
    ["target", "destroy-data", "fio", "target-size", "max-idle"];

/// `flashlab suite NAME ...`: refuse options of other suites, then run it.
pub(crate) fn cmd(args: &SuiteArgs, matches: &ArgMatches) -> Result<(), Failure> {
    check_suite_options(&args.name, matches).and_then(|()| cmd_suite(args, matches))
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
    flashlab_suite::check_options_given(kind, |option| {
        suite.get_arguments().any(|arg| {
            arg.get_long() == Some(option)
                && matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
        })
    })
    .map_err(bad_input)
}

/// The suite options of the command line.
pub(crate) fn suite_options(
    args: &SuiteArgs,
    matches: &ArgMatches,
) -> Result<flashlab_suite::SuiteOptions, Failure> {
    let mut options = args.options.options().map_err(bad_input)?;
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
pub(crate) fn suite_device_names(
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
pub(crate) fn load_target(
    name: &str,
    sets: &[String],
) -> Result<flashlab_suite::SuiteTarget, Failure> {
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
pub(crate) fn open_targets(args: &RealArgs) -> Result<Vec<flashlab_suite::RealTarget>, Failure> {
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

/// The `--report` and `--save-state` files of a suite, registered with its inputs.
pub(crate) struct SuiteFiles {
    report: Option<state_files::OutputFile>,
    save: Option<state_files::OutputFile>,
}

/// Registers a suite's inputs (each `--device` file, `--load-state`, each `--target`) and
/// outputs (`--report`, `--save-state`, the tables and step files of `--outdir`, the charts
/// of `--figures`, the entries of the state cache) before the work: any two naming one file
/// is bad input (exit 2).
fn suite_files(
    args: &SuiteArgs,
    options: &flashlab_suite::SuiteOptions,
) -> Result<SuiteFiles, Failure> {
    let mut files = state_files::Files::new();
    for device in &args.device {
        files.input("--device", Some(Path::new(device)))?;
    }
    files.input("--load-state", args.state.load_state.as_deref())?;
    for target in &args.real.target {
        files.input("--target", Some(target))?;
    }
    let report = files.output_opt("--report", args.report.as_deref())?;
    if report.is_some() {
        state_files::report_date()?;
    }
    let save = files.output_opt("--save-state", args.state.save_state.as_deref())?;
    if let Some(dir) = &args.outdir {
        files.outputs_in("--outdir", dir, flashlab_suite::is_outdir_file)?;
    }
    if let Some(dir) = &args.figures {
        state_files::figures_dir(dir)?;
        files.outputs_in("--figures", dir, state_files::figure_name)?;
    }
    if let Some(cache) = &options.state_cache {
        let rule = flashlab_suite::StateCache::is_entry_name;
        files.claims_in("--state-cache", &cache.dir, rule)?;
    }
    Ok(SuiteFiles { report, save })
}

pub(crate) fn cmd_suite(args: &SuiteArgs, matches: &ArgMatches) -> Result<(), Failure> {
    let kind = flashlab_suite::suite(&args.name)
        .map_err(|e| bad_input(crate::hints::suite_error(&args.name, e)))?;
    let options = suite_options(args, matches)?;
    // A suite's steps reach the runner through the kit and the host crate: they take the
    // threads as the runs' default.
    flashlab_runner::set_default_threads(
        args.sim_threads
            .map_or_else(crate::machine_cores, usize::from),
    );
    // The suite's files are registered before the work: an output not found unwritable
    // after it, nor written over an input or another output.
    let files = suite_files(args, &options)?;
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
        let run = (&names[..], &targets[..], &real_targets[..]);
        return suite_with_state(kind, args, &options, run, files);
    }
    // Drive runs come first, `args.drives` per simulated device (bounded by the library).
    let sim_runs = names.len().saturating_mul(args.drives);
    let display = progress::SuiteProgressLine::new(
        &args.progress.settings(),
        sim_runs.saturating_add(real_targets.len()),
    );
    let progress = |device: usize, p: &flashlab_suite::SuiteProgress| display.update(device, p);
    // A slice that would change a step's figures (a die cut, a capacity cut) is refused, and
    // the drives run again on the smallest slice that keeps them (the suite crate's rule).
    let mut named = flashlab_suite::NamedTargets {
        names: names.clone(),
        overrides: crate::parse_sets(&args.set)?,
        targets,
    };
    let on = flashlab_suite::On::Named {
        targets: &mut named,
        drives: args.drives,
    };
    let mut outcome = flashlab_suite::run(kind, on, &options, &progress).map(|ran| ran.report);
    let targets = named.targets;
    // Real targets run after the simulations, one at a time, so nothing else competes for
    // the CPU while fio measures.
    for (i, target) in real_targets.iter_mut().enumerate() {
        let Ok(report) = &mut outcome else { break };
        let index = sim_runs + i;
        let on = flashlab_suite::On::Real(target);
        match flashlab_suite::run(kind, on, &options, &|_, p| progress(index, p)) {
            Ok(ran) => report.devices.extend(ran.report.devices),
            Err(e) => outcome = Err(e),
        }
    }
    display.finish(outcome.is_ok());
    let report = outcome.map_err(|e| failure(e.is_bad_input(), e))?;
    write_suite_report(args, &targets, &report, files.report.as_ref())
}

/// `flashlab suite … --load-state/--save-state`: the suite on one simulated drive or system,
/// started from a saved state (its clock the first step's start) and/or saved after the last
/// step. Several devices, identical drives, real storage and the suites that build their own
/// drives have no one device to load or save, and are refused.
pub(crate) fn suite_with_state(
    kind: flashlab_suite::SuiteKind,
    args: &SuiteArgs,
    options: &flashlab_suite::SuiteOptions,
    (names, targets, real_targets): (
        &[String],
        &[flashlab_suite::SuiteTarget],
        &[flashlab_suite::RealTarget],
    ),
    files: SuiteFiles,
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
    if kind.targets() == flashlab_suite::RunsOn::Description {
        return Err(bad_input(anyhow!(
            "{flag} does not apply to suite {}: it builds its own drives from the description, so there is no one drive to start from or save",
            kind.name()
        )));
    }
    let load = args.state.load_state.as_deref();
    let display = progress::SuiteProgressLine::new(&args.progress.settings(), 1);
    let progress = |_: usize, p: &flashlab_suite::SuiteProgress| display.update(0, p);
    let name = target.name().to_string();
    let save_to = files.save.as_ref();
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
                &progress,
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
                &progress,
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
    write_suite_report(args, targets, &report, files.report.as_ref())
}

/// How a suite runs on the device `suite_with_state` built: from `start_ns`, `hook` hearing
/// each step's end, and fresh from `fresh` (target, device seed) unless loaded.
pub(crate) fn device_run<'a>(
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
pub(crate) fn suite_from<'a>(
    kind: flashlab_suite::SuiteKind,
    dev: &'a mut dyn flashlab_suite::SuiteDevice,
    name: &'a str,
    run: flashlab_suite::DeviceRun<'a>,
    options: &flashlab_suite::SuiteOptions,
    progress: &(dyn Fn(usize, &flashlab_suite::SuiteProgress) + Sync),
) -> Result<(flashlab_suite::DeviceReport, u64), Failure> {
    let on = flashlab_suite::On::Device { dev, name, run };
    let ran = flashlab_suite::run(kind, on, options, progress)
        .map_err(|e| failure(e.is_bad_input(), e))?;
    ran.into_device().ok_or_else(|| {
        failure(
            false,
            anyhow!("suite {} did not report one device", kind.name()),
        )
    })
}

/// The state at the suite's end into `path` (when `--save-state` gave one); the report on.
pub(crate) fn save_state_to(
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
pub(crate) fn write_suite_report(
    args: &SuiteArgs,
    targets: &[flashlab_suite::SuiteTarget],
    report: &flashlab_suite::SuiteReport,
    report_file: Option<&state_files::OutputFile>,
) -> Result<(), Failure> {
    if let Some(dir) = &args.outdir {
        flashlab_suite::write_outdir(report, dir)
            .with_context(|| format!("writing results under {}", dir.display()))
            .map_err(run_failed)?;
    }
    if let Some(file) = report_file {
        let (command, date) = (state_files::command_line(), state_files::report_date()?);
        let commit = state_files::build_commit();
        let made = flashlab_report::Made {
            command: Some(&command),
            commit: Some(&commit),
            date: date.as_deref(),
        };
        file.write_bytes(flashlab_suite::render_html_with(report, &made).as_bytes())
            .map_err(run_failed)?;
    }
    if let Some(dir) = &args.figures {
        state_files::write_figures(dir, &flashlab_suite::render_figures_svg(report))?;
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

/// `flashlab suite NAME --help` (or `-h`): the help of that suite alone, when `argv` asks
/// for it and names a registered suite; `None` leaves help to clap (`flashlab suite
/// --help` lists every suite's options).
pub(crate) fn named_suite_help(argv: &[std::ffi::OsString]) -> Option<String> {
    if argv.get(1).and_then(|a| a.to_str()) != Some("suite")
        || !argv.iter().any(|a| a == "--help" || a == "-h")
    {
        return None;
    }
    // Parse as clap would, with help taken as a plain flag and errors set aside: the suite's
    // name is then wherever the command line put it.
    let probe = cli_command()
        .mut_subcommand("suite", |s| {
            s.disable_help_flag(true).arg(
                clap::Arg::new("help-probe")
                    .long("help")
                    .short('h')
                    .action(clap::ArgAction::SetTrue),
            )
        })
        .ignore_errors(true);
    let matches = probe.try_get_matches_from(argv).ok()?;
    let name = matches
        .subcommand_matches("suite")?
        .get_one::<String>("name")?;
    let kind = flashlab_suite::suite(name).ok()?;
    Some(suite_help(kind).render_long_help().to_string())
}

/// The suite command narrowed to what `kind` reads: the options of other suites hidden, the
/// real-storage ones too where it runs on simulated devices only, and help texts without
/// the list of suites they are for.
fn suite_help(kind: flashlab_suite::SuiteKind) -> clap::Command {
    let reads = flashlab_suite::options_of(kind);
    let any_suite: Vec<String> = flashlab_suite::with_suite_options(clap::Command::new("suite"))
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    let real = kind.targets() == flashlab_suite::RunsOn::Any;
    let mut cmd = cli_command()
        .find_subcommand("suite")
        .cloned()
        .unwrap_or_else(|| clap::Command::new("suite"));
    let edits: Vec<(String, bool, Option<String>)> = cmd
        .get_arguments()
        .filter_map(|arg| {
            let long = arg.get_long()?;
            let other_suites =
                any_suite.iter().any(|o| o == long) && !reads.iter().any(|r| r == long);
            let hide = other_suites || (!real && REAL_TARGET_FLAGS.contains(&long));
            let help = arg
                .get_help()
                .map(|h| flashlab_suite::help_without_suites(&h.to_string()));
            Some((arg.get_id().to_string(), hide, help))
        })
        .collect();
    for (id, hide, help) in edits {
        cmd = cmd.mut_arg(id, |a| {
            let a = a.hide(hide);
            match help {
                Some(h) => a.help(h.clone()).long_help(h),
                None => a,
            }
        });
    }
    cmd.about(format!("{}: {}", kind.name(), kind.summary()))
        .long_about(None)
        .override_usage(format!("flashlab suite {} [OPTIONS]", kind.name()))
        .mut_arg("name", |a| a.hide(true))
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

    /// The suites an option's help names are those of the registry that read it
    /// (`flashlab_suite::suite_options`): a suite added to the registry, or an option it starts
    /// to read, cannot leave the help naming the old list. An option read through another
    /// (`--seq-time`, help `--precondition showdown: ...`) has that option's suites.
    #[test]
    fn each_options_help_names_the_suites_that_read_it() {
        let command = cli_command();
        let suite = command.find_subcommand("suite").unwrap();
        let options = flashlab_suite::suite_options();
        let readers = |option: &str| -> Vec<&'static str> {
            options
                .iter()
                .find(|(o, _)| o == option)
                .map(|(_, s)| s.clone())
                .unwrap_or_default()
        };
        let names: Vec<&str> = flashlab_suite::SUITES.iter().map(|k| k.name()).collect();
        for (option, suites) in &options {
            let arg = suite
                .get_arguments()
                .find(|a| a.get_long() == Some(option.as_str()))
                .unwrap();
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if let Some(through) = help.strip_prefix("--") {
                let via: String = through
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                let theirs = readers(&via);
                assert!(
                    suites.iter().all(|s| theirs.contains(s)),
                    "--{option} is read by {suites:?}, --{via} by {theirs:?}"
                );
                continue;
            }
            let word = |c: char| c.is_ascii_alphanumeric() || c == '-';
            let named_in = |text: &str| -> Vec<&str> {
                names
                    .iter()
                    .copied()
                    .filter(|n| {
                        text.match_indices(n).any(|(i, _)| {
                            !text[..i].ends_with(word) && !text[i + n.len()..].starts_with(word)
                        })
                    })
                    .collect()
            };
            for s in suites {
                assert!(
                    named_in(&help).contains(s),
                    "--{option}'s help does not name {s}: {help}"
                );
            }
            // The list the help starts with (`qos, randread-qd-sweep: ...`) names readers only;
            // the text after it may use a suite's name as a word ("a power of two").
            let lead = help.split_once(": ").map_or("", |(lead, _)| lead);
            for n in &named_in(lead) {
                assert!(
                    suites.contains(n),
                    "--{option}'s help names {n}, which does not read it: {help}"
                );
            }
        }
    }
}
