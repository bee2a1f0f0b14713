//! `flashlab sweep`: run a plan's points (all, one, or on local threads) and collect their
//! results into one tidy table (docs/sweeps.md).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use flashlab_sweep::{Plan, SweepError};

use super::{bad_input, failure, progress, run_failed, write_output, Failure};

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    collect: Option<SweepCommand>,
    /// The plan (TOML): a fio job file and the axes that vary (docs/sweeps.md).
    #[arg(required = true)]
    plan: Option<PathBuf>,
    /// Print the points, one per line (index, then each axis=value), and run nothing.
    #[arg(long)]
    list: bool,
    /// Run only this point (0-based): one task of a Slurm array or GNU parallel.
    #[arg(long, value_name = "N")]
    point: Option<u64>,
    /// Run the points on N threads of this machine (one simulation each).
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: u32,
    /// Skip points whose result file already exists for this plan and build.
    #[arg(long)]
    resume: bool,
    /// Where each point's result goes (point-NNNNNN.json). Default: sweep-PLAN beside the
    /// current directory's files (PLAN: the plan's file name without .toml).
    #[arg(long, value_name = "DIR")]
    outdir: Option<PathBuf>,
    /// A line on standard error as each point ends, with the points done, the share and an
    /// estimate of the time left: auto (on a terminal, or elsewhere when there are several
    /// points), always, or never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = progress::When::Auto)]
    progress: progress::When,
    /// A plan's `[precondition]` keeps each point's preconditioned drive in the suites'
    /// state cache, so points on the same drive precondition it once.
    #[command(flatten)]
    cache: crate::state_files::CacheArgs,
}

#[derive(clap::Subcommand, Debug)]
enum SweepCommand {
    /// Gather a sweep's point results into one tidy table (one row per point × job ×
    /// measure; every axis, the unit and the value as columns).
    Collect(CollectArgs),
}

#[derive(clap::Args, Debug)]
struct CollectArgs {
    /// The sweep's output directory.
    dir: PathBuf,
    /// Write the table as CSV here (default: standard output when --parquet is not given).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the table as Parquet here.
    #[arg(long, value_name = "FILE")]
    parquet: Option<PathBuf>,
    /// Collect the points that are there when some below the highest are missing (a
    /// warning lists them) instead of refusing the directory.
    #[arg(long)]
    allow_missing: bool,
}

fn sweep_failure(e: SweepError) -> Failure {
    failure(e.is_bad_input(), e)
}

pub fn cmd_sweep(args: &SweepArgs) -> Result<(), Failure> {
    if let Some(SweepCommand::Collect(c)) = &args.collect {
        return cmd_collect(c);
    }
    let Some(plan_path) = &args.plan else {
        return Err(bad_input(anyhow!(
            "sweep: name a plan (flashlab sweep PLAN.toml) or collect a directory (flashlab sweep collect DIR)"
        )));
    };
    let plan = Plan::read(plan_path).map_err(bad_input)?;
    if args.list {
        let pre = flashlab_suite::SuitePreconditioner::default();
        flashlab_sweep::check_plan(&plan, &pre).map_err(bad_input)?;
        return write_output(None, &plan.listing().map_err(bad_input)?);
    }
    let count = plan.point_count().map_err(bad_input)?;
    let points: Vec<u64> = match args.point {
        Some(n) => {
            plan.point(n).map_err(bad_input)?;
            vec![n]
        }
        None => (0..count).collect(),
    };
    let outdir = args
        .outdir
        .clone()
        .unwrap_or_else(|| default_outdir(plan_path));
    // Before any point runs: a file, FIFO or unwritable directory is bad input (exit 2),
    // and so is a point file that is also the plan, its job file or a device's file.
    flashlab_sweep::check_outdir(&outdir).map_err(sweep_failure)?;
    let cache = match plan.precondition {
        Some(_) => args.cache.cache()?,
        None => None,
    };
    let mut files = plan_files(&plan, plan_path)?;
    files.outputs_in("--outdir", &outdir, flashlab_sweep::is_point_file_name)?;
    if let Some(cache) = &cache {
        let rule = flashlab_suite::StateCache::is_entry_name;
        files.claims_in("--state-cache", &cache.dir, rule)?;
    }
    let total = points.len();
    let display = progress::PointsProgress::new(
        match args.progress {
            progress::When::Auto => std::io::stderr().is_terminal() || total > 1,
            progress::When::Always => true,
            progress::When::Never => false,
        },
        total,
    );
    let on_done = |index: u64, what: &str| display.point_done(index, what);
    let pre = flashlab_suite::SuitePreconditioner { cache };
    let summary = flashlab_sweep::run_plan(
        &plan,
        &points,
        &outdir,
        args.jobs as usize,
        args.resume,
        &pre,
        &on_done,
    )
    .map_err(sweep_failure)?;
    eprintln!(
        "flashlab: sweep: {} ran, {} skipped, {} failed; results in {}",
        summary.ran,
        summary.skipped,
        summary.failed.len(),
        outdir.display()
    );
    if summary.failed.is_empty() {
        Ok(())
    } else {
        Err(run_failed(anyhow!("{}", summary.failed.join("\n"))))
    }
}

/// A plan's inputs: the plan, its job file and the device files its points name.
fn plan_files(plan: &Plan, plan_path: &Path) -> Result<crate::state_files::Files, Failure> {
    let dir = flashlab_sweep::plan_dir(plan);
    let mut files = crate::state_files::Files::new();
    files
        .input("plan", Some(plan_path))?
        .input("plan's job file", Some(&dir.join(&plan.job.path)))?;
    let devices = plan.device.iter().chain(
        plan.axes
            .iter()
            .filter(|a| a.name == "device")
            .flat_map(|a| a.values.iter()),
    );
    for device in devices {
        files.input("plan's device", Some(&dir.join(&device.text)))?;
    }
    Ok(files)
}

fn default_outdir(plan: &Path) -> PathBuf {
    let stem = plan
        .file_stem()
        .map_or("plan".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("sweep-{stem}"))
}

fn cmd_collect(args: &CollectArgs) -> Result<(), Failure> {
    // Outputs by the rule of every file flashlab writes, registered before the directory
    // is read: a regular file or nothing, never one of the point files collected.
    let mut files = crate::state_files::Files::new();
    if args.dir.is_dir() {
        files.inputs_in(
            "point files in",
            &args.dir,
            flashlab_sweep::is_point_file_name,
        )?;
    }
    let parquet = files.output_opt("--parquet", args.parquet.as_deref())?;
    let csv = files.output_opt("--csv", args.csv.as_deref())?;
    let (table, missing) =
        flashlab_sweep::collect_dir(&args.dir, args.allow_missing).map_err(sweep_failure)?;
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(10).map(|i| i.to_string()).collect();
        eprintln!(
            "flashlab: warning: sweep collect: {} point{} missing ({}{}); the table holds the others",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if missing.len() > 10 { ", ..." } else { "" }
        );
    }
    if let Some(out) = parquet {
        let bytes = table.to_parquet().map_err(|e| run_failed(anyhow!(e)))?;
        out.write_bytes(&bytes).map_err(run_failed)?;
        if csv.is_none() {
            return Ok(());
        }
    }
    match csv {
        Some(out) => out
            .write_bytes(table.to_csv().as_bytes())
            .map_err(run_failed),
        None => write_output(None, &table.to_csv()),
    }
}
