//! `flashlab fit`: the measurement plan (`fit plan`), its run on a simulated drive or real
//! storage (`fit run`), and the fit of a drive description to a plan directory's outputs
//! (`fit DIR --output FILE`); see docs/fit.md.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use flashlab_fit::{files, FitError, FitOptions, Plan};

use crate::{bad_input, failure, load_device, run_failed, Failure, DEFAULT_SEED};

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct FitArgs {
    #[command(subcommand)]
    command: Option<FitCommand>,
    /// The plan directory: its manifest and the outputs of its jobs (fio's JSON and logs);
    /// or a file of published figures (docs/fit.md, "Fits from published figures").
    #[arg(required = true)]
    dir: Option<PathBuf>,
    /// Write the fitted drive description here (a preset `--device FILE` runs).
    #[arg(long, required = true)]
    output: Option<PathBuf>,
    /// Also write an HTML report: measured against fitted, each job's error, the held-out
    /// error.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Accept a plan directory holding the outputs of only some jobs: the keys the missing
    /// jobs would identify stay at the class's values, and the fit says which.
    #[arg(long)]
    partial: bool,
    /// Seed of the forward-model simulations.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Threads the candidate drives are simulated on (default: every core).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(clap::Subcommand, Debug)]
enum FitCommand {
    /// Write the measurement plan: fio job files and a manifest, sized for a capacity.
    Plan(PlanArgs),
    /// Run the plan on a simulated drive (--device) or real storage (--target) and write
    /// fio's outputs into the plan directory.
    Run(RunArgs),
}

#[derive(clap::Args, Debug)]
struct PlanArgs {
    /// Directory for the job files and the manifest (made when absent).
    #[arg(long)]
    outdir: PathBuf,
    /// The drive's capacity, e.g. 64GB or 512GiB.
    #[arg(long, default_value = "1GB")]
    capacity: String,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// The plan directory (a plan for the drive's capacity is written there when it has
    /// none).
    #[arg(long)]
    outdir: PathBuf,
    /// A simulated drive: preset name or description file.
    #[arg(long, conflicts_with = "target", required_unless_present = "target")]
    device: Option<String>,
    /// Override a device key of --device, e.g. `--set nand.t_prog=800us`.
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "device")]
    set: Vec<String>,
    /// Real storage: a block device or a file, or an NBD export (`nbd+unix:///?socket=PATH`,
    /// `nbd://HOST:PORT/`, with --target-size) through fio's nbd engine. It destroys its data.
    #[arg(long)]
    target: Option<PathBuf>,
    /// With --target: run on a target that holds a partition table, a file system or
    /// other data.
    #[arg(long, requires = "target")]
    destroy_data: bool,
    /// With --target: create (or resize) a file target to this size, e.g. 4GiB; with an NBD
    /// --target, the export's size.
    #[arg(long, value_name = "SIZE", requires = "target")]
    target_size: Option<String>,
    /// The fio binary --target runs.
    #[arg(long, value_name = "PATH", default_value = "fio")]
    fio: PathBuf,
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
}

fn fit_failure(e: FitError) -> Failure {
    failure(e.bad_input, anyhow!(e.message))
}

pub fn cmd_fit(args: &FitArgs) -> Result<(), Failure> {
    match &args.command {
        Some(FitCommand::Plan(p)) => cmd_plan(p),
        Some(FitCommand::Run(r)) => cmd_run(r),
        None => cmd_fit_dir(args),
    }
}

fn cmd_plan(args: &PlanArgs) -> Result<(), Failure> {
    let bytes = flashlab_device::units::parse_size(&args.capacity)
        .map_err(|e| bad_input(anyhow!("--capacity {}: {e}", args.capacity)))?;
    let plan = Plan::new(bytes).map_err(fit_failure)?;
    files::write_plan(&args.outdir, &plan).map_err(fit_failure)?;
    println!("{}", plan_summary(&plan, &args.outdir));
    Ok(())
}

fn plan_summary(plan: &Plan, dir: &Path) -> String {
    let mut out = format!(
        "Plan for {} bytes in {}: {} jobs, about {} min on a real drive\n",
        plan.capacity_bytes,
        dir.display(),
        plan.jobs.len(),
        plan.est_seconds().div_ceil(60)
    );
    for job in &plan.jobs {
        let destroys = if job.destructive {
            "  destroys data"
        } else {
            ""
        };
        out.push_str(&format!(
            "  {:<18} {:>6} s{destroys}\n",
            job.name, job.est_seconds
        ));
    }
    out.push_str(&format!("Run each in {}: {}", dir.display(), plan.run));
    out
}

fn cmd_run(args: &RunArgs) -> Result<(), Failure> {
    if let Some(target) = &args.target {
        return run_target(args, target);
    }
    let name = args.device.clone().unwrap_or_default();
    let config = load_device(&name, &args.set)?;
    let capacity = flashlab_fit::simrun::user_bytes(&config).map_err(fit_failure)?;
    let plan = plan_for(&args.outdir, capacity, ("--device", Path::new(&name)))?;
    files::check_outputs_absent(&args.outdir, &plan).map_err(fit_failure)?;
    let outputs = flashlab_fit::simrun::run_plan(&config, &plan, args.seed).map_err(fit_failure)?;
    files::write_outputs(&args.outdir, &outputs).map_err(fit_failure)?;
    println!(
        "Ran {} jobs on {name}; {} outputs in {}",
        plan.jobs.len(),
        outputs.len(),
        args.outdir.display()
    );
    Ok(())
}

/// The plan of `dir`, which must be for `capacity`; written when `dir` has none, after the
/// run's files are registered: `input` (the drive's file or the target), and the plan's
/// job files, manifest and outputs in `dir` (any two naming one file is bad input).
fn plan_for(dir: &Path, capacity: u64, input: (&str, &Path)) -> Result<Plan, Failure> {
    let manifest = dir.join(flashlab_fit::plan::MANIFEST);
    let written = manifest.exists();
    let plan = if written {
        let plan = files::read_plan(dir).map_err(fit_failure)?;
        let want = Plan::new(capacity).map_err(fit_failure)?.capacity_bytes;
        if plan.capacity_bytes != want {
            return Err(bad_input(anyhow!(
                "{}: the plan is for {} bytes, the drive has {want}; write a plan for it in another --outdir",
                manifest.display(),
                plan.capacity_bytes
            )));
        }
        plan
    } else {
        Plan::new(capacity).map_err(fit_failure)?
    };
    flashlab_engine::output::check_dir("--outdir", dir).map_err(bad_input)?;
    let mut run_files = crate::state_files::Files::new();
    run_files.input(input.0, Some(input.1))?;
    run_files.output("--outdir", &manifest)?;
    for job in &plan.jobs {
        run_files.output("--outdir", &dir.join(&job.file))?;
        for name in &job.outputs {
            run_files.output("--outdir", &dir.join(name))?;
        }
    }
    if !written {
        files::write_plan(dir, &plan).map_err(fit_failure)?;
    }
    Ok(plan)
}

/// The plan through the real fio on `target`, after the checks every real target passes
/// (a partition table, a file system or a file flashlab did not make refused without
/// --destroy-data; a device in use always; its size and access checked before anything
/// runs). Each job runs in the plan directory, so its logs land there as fio names them.
fn run_target(args: &RunArgs, target: &Path) -> Result<(), Failure> {
    if let Some(uri) = nbd_uri(target) {
        return run_nbd(args, uri);
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
        ..flashlab_suite::RealOptions::default()
    };
    let real = flashlab_suite::RealTarget::open(target, &options)
        .map_err(|e| failure(e.is_bad_input(), e))?;
    let plan = plan_for(&args.outdir, real.size_bytes(), ("--target", target))?;
    files::check_outputs_absent(&args.outdir, &plan).map_err(fit_failure)?;
    let work = std::env::temp_dir().join(format!("flashlab-fit-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| run_failed(anyhow!("{}: {e}", work.display())))?;
    let ran = plan
        .jobs
        .iter()
        .try_for_each(|job| fio_job(&real, args, &work, job));
    let _ = std::fs::remove_dir_all(&work);
    ran?;
    println!(
        "Ran {} jobs on {} through fio; outputs in {}",
        plan.jobs.len(),
        target.display(),
        args.outdir.display()
    );
    Ok(())
}

/// The NBD URI a --target names, if it names one.
fn nbd_uri(target: &Path) -> Option<&str> {
    let t = target.to_str()?;
    (t.starts_with("nbd://") || t.starts_with("nbd+unix://")).then_some(t)
}

/// The plan through fio's nbd engine on the export at `uri`. fio cannot look at an export
/// before writing it, so the run needs --destroy-data, and its size from --target-size (or
/// the plan already in --outdir).
fn run_nbd(args: &RunArgs, uri: &str) -> Result<(), Failure> {
    if !args.destroy_data {
        return Err(bad_input(anyhow!(
            "--target {uri}: an NBD export is written without a look at what it holds; pass --destroy-data to run the plan on it"
        )));
    }
    let capacity = match &args.target_size {
        Some(t) => flashlab_suite::parse_size("--target-size", t).map_err(bad_input)?,
        None if args.outdir.join(flashlab_fit::plan::MANIFEST).exists() => {
            files::read_plan(&args.outdir)
                .map_err(fit_failure)?
                .capacity_bytes
        }
        None => {
            return Err(bad_input(anyhow!(
                "--target {uri}: give the export's size with --target-size (e.g. 256MiB)"
            )))
        }
    };
    // A Unix socket's path is an input no output may take; a TCP export has none.
    let socket = uri
        .split_once("socket=")
        .map(|(_, rest)| rest.split('&').next().unwrap_or(rest));
    let plan = plan_for(
        &args.outdir,
        capacity,
        ("--target", Path::new(socket.unwrap_or(uri))),
    )?;
    files::check_outputs_absent(&args.outdir, &plan).map_err(fit_failure)?;
    let work = std::env::temp_dir().join(format!("flashlab-fit-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| run_failed(anyhow!("{}: {e}", work.display())))?;
    let ran = plan.jobs.iter().try_for_each(|job| {
        let text = nbd_job_text(&job.text, uri, plan.capacity_bytes);
        run_fio(args, &work, job, &text)
    });
    let _ = std::fs::remove_dir_all(&work);
    ran?;
    println!(
        "Ran {} jobs on {uri} through fio; outputs in {}",
        plan.jobs.len(),
        args.outdir.display()
    );
    Ok(())
}

/// A plan job's text for fio's nbd engine: the engine and the URI in place of libaio, no
/// direct flag (the engine has no page cache), the export's size for jobs that set none.
fn nbd_job_text(text: &str, uri: &str, size_bytes: u64) -> String {
    let mut out = format!("[global]\nsize={size_bytes}\n\n");
    for line in text.lines() {
        match line.split('=').next().unwrap_or("").trim() {
            "ioengine" => out.push_str(&format!("ioengine=nbd\nuri={uri}")),
            "direct" | "filename" => continue,
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// One plan job through fio: its text made for the target (file, engine, direct I/O where
/// the target takes it), run in the plan directory.
fn fio_job(
    real: &flashlab_suite::RealTarget,
    args: &RunArgs,
    work: &Path,
    job: &flashlab_fit::PlanJob,
) -> Result<(), Failure> {
    let mut text = real.job_text(&job.text);
    if job.name == "trim" && real.kind() == flashlab_suite::TargetKind::File {
        // fio trims a regular file only through its falloc engine (punched holes).
        text = text.replace(&format!("ioengine={}", real.ioengine()), "ioengine=falloc");
    }
    run_fio(args, work, job, &text)
}

/// Runs `text`, the job file of plan job `job`, with fio in the plan directory, so its logs
/// land there as fio names them.
fn run_fio(
    args: &RunArgs,
    work: &Path,
    job: &flashlab_fit::PlanJob,
    text: &str,
) -> Result<(), Failure> {
    let file = work.join(&job.file);
    std::fs::write(&file, text).map_err(|e| run_failed(anyhow!("{}: {e}", file.display())))?;
    let dir = std::fs::canonicalize(&args.outdir)
        .map_err(|e| run_failed(anyhow!("{}: {e}", args.outdir.display())))?;
    let mut cmd = std::process::Command::new(&args.fio);
    cmd.current_dir(&dir)
        .arg("--output-format=json")
        .arg(format!("--output={}", job.outputs[0]))
        .arg(&file);
    eprintln!(
        "flashlab: fit run: {} ({} s on the reference drive)",
        job.name, job.est_seconds
    );
    let out = cmd
        .output()
        .map_err(|e| run_failed(anyhow!("cannot run {}: {e}", args.fio.display())))?;
    if !out.status.success() {
        return Err(run_failed(anyhow!(
            "fio failed on {} ({}): {}",
            job.file,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

fn cmd_fit_dir(args: &FitArgs) -> Result<(), Failure> {
    let (Some(dir), Some(output)) = (&args.dir, &args.output) else {
        return Err(bad_input(anyhow!(
            "flashlab fit DIR --output FILE: both are needed"
        )));
    };
    let mut options = FitOptions {
        seed: args.seed,
        ..FitOptions::default()
    };
    if let Some(t) = args.threads {
        options.threads = t.max(1);
    }
    if dir.is_file() {
        return crate::fit_published::cmd_fit_published(
            dir,
            output,
            args.report.as_deref(),
            &options,
        );
    }
    let plan = files::read_plan(dir).map_err(fit_failure)?;
    let inputs = files::inputs(dir, &plan);
    let input_pairs: Vec<(&str, &Path)> = inputs
        .iter()
        .filter(|p| !args.partial || p.exists())
        .map(|p| ("plan output", p.as_path()))
        .collect();
    let mut outputs: Vec<(&str, &Path)> = vec![("--output", output.as_path())];
    if let Some(r) = &args.report {
        outputs.push(("--report", r.as_path()));
    }
    let mut files = crate::state_files::Files::new();
    for (what, path) in &input_pairs {
        files.input(what, Some(path))?;
    }
    let mut checked = Vec::new();
    for (option, path) in &outputs {
        checked.push(files.output(option, path)?);
    }
    let measured = if args.partial {
        flashlab_fit::measure::read_partial(dir, &plan)
    } else {
        flashlab_fit::read_outputs(dir, &plan)
    }
    .map_err(fit_failure)?;
    let fitted = flashlab_fit::fit(&plan, &measured, &options).map_err(fit_failure)?;
    let name = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fitted".into());
    let preset = flashlab_fit::preset::preset_toml(&fitted, &name);
    checked[0]
        .write_bytes(preset.as_bytes())
        .map_err(run_failed)?;
    if let Some(file) = checked.get(1) {
        let html = flashlab_fit::report::render_html(
            &fitted,
            &dir.to_string_lossy(),
            &output.to_string_lossy(),
        );
        file.write_bytes(html.as_bytes()).map_err(run_failed)?;
    }
    print!("{}", flashlab_fit::report::render_text(&fitted));
    println!("Wrote {}", output.display());
    Ok(())
}
