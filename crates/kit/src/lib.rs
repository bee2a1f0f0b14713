//! What every built-in suite is made of, naming none of them: a [`Session`] of fio-style
//! steps on one device (a simulated drive, a system, or real storage through fio) whose state
//! carries over from step to step, measures and the axes they lie on, grids, charts and the
//! reports' renderings, the options many suites share, the steady-state rule, and the one
//! entry point that runs a suite on its targets ([`run()`]). A suite is a type implementing
//! [`Suite`]; the suites and their [`Registry`] are in `flashlab-suite`, and
//! `docs/suites.md` describes them.
//!
//! Every suite runs on a single drive or on a whole system ([`SuiteTarget`]); those that read
//! FTL internals need a drive.
//!
//! Each job runs through `flashlab_host::run_on` (the path `run` and `fio` take), so every
//! step has an ordinary fio result. Simulated time keeps running from one step to the next
//! (`docs/suites.md`).
//!
//! Key types: [`Session`] (the steps of one device: [`Session::job`], [`Session::purge`],
//! [`Session::idle`], and the readings between them), [`Measure`] (one figure, placed by
//! [`Coord`]s on the axes of [`Dim`]), [`GridSpec`] (how a report lays measures out),
//! [`SuiteOptions`], [`Suite`] and [`Registry`], and [`run()`] with the [`On`] it runs on.
//! `flashlab-kit`'s `examples/` hold a suite of one's own run through [`run()`]
//! (`custom_suite.rs`), a drive described in TOML run with a fio job (`custom_drive.rs`),
//! and a simulation driven from Rust (`drive_from_rust.rs`).
//!
//! A session of two steps on the tiny test drive: a fio job and idle time, the drive's clock
//! and state carrying over from one to the next:
//!
//! ```rust
//! use flashlab_device::{load_device_config, Ssd};
//! use flashlab_engine::{SeedTree, NS_PER_MS};
//! use flashlab_kit::steps::{iops, measure};
//! use flashlab_kit::{Session, SuiteOptions, Unit};
//! use flashlab_report::DDIR_WRITE;
//!
//! let config = load_device_config("tiny-test-1gb", &[]).unwrap();
//! let mut ssd = Ssd::new(&config, SeedTree::new(1)).unwrap();
//! let options = SuiteOptions::default();
//! let mut progress = |_: &flashlab_kit::SuiteProgress| {};
//! let mut s = Session::new(&mut ssd, "tiny-test-1gb", &options, &mut progress);
//!
//! // 1,024 random 4 KiB writes at queue depth 4; the step's figure is its write IOPS.
//! let job = "[w]\nrw=randwrite\nbs=4k\niodepth=4\nsize=4m\n";
//! let run = s.job("random-writes", job, &|run| {
//!     vec![measure("iops", Unit::Iops, iops(run, DDIR_WRITE))]
//! })
//! .unwrap();
//! assert_eq!(run.jobs[0].total_ios(DDIR_WRITE), 1024);
//! assert!(iops(&run, DDIR_WRITE) > 0.0);
//! assert_eq!(s.counters().host_write_ius, 1024);
//!
//! // Idle time moves the session's clock on by exactly that much.
//! let after_job_ns = s.now_ns();
//! assert!(after_job_ns > 0);
//! s.idle("rest", 5 * NS_PER_MS);
//! assert_eq!(s.now_ns(), after_job_ns + 5 * NS_PER_MS);
//! ```

pub mod args;
pub mod charts;
pub mod client_options;
pub mod device;
pub mod error;
pub mod format;
pub mod grids;
pub mod html;
pub mod layout;
pub mod lengths;
pub mod measure;
pub mod option_table;
pub mod options;
pub mod output;
pub mod real;
pub mod record;
pub mod registry;
pub mod rescale;
pub mod run;
pub mod session;
pub mod steady;
pub mod steps;
pub mod suite;

pub use args::SuiteOptionArgs;
pub use client_options::{ClientOptions, DesktopProfile, DriveState};
pub use device::{SuiteDevice, SuiteTarget};
pub use error::SuiteError;
pub use flashlab_cache::{FreshDevice, StateCache, DEFAULT_MAX_CACHE_BYTES};
pub use flashlab_report::chart::{Axis, Chart, Series, Unit};
pub use grids::{Cols, GridSpec};
pub use html::{render_figures_svg, render_html, render_html_with};
pub use layout::grid_titles;
pub use lengths::{parse_size, parse_time, RoundLength};
pub use measure::{Coord, Dim, LocalAxis, LocalCoord, Measure, Phase, LOCAL_WORDS};
pub use option_table::{option_reference, option_table, OptionRow, OptionScope};
pub use options::{OwnOptions, OwnOptionsSet, PreconditionKind, PreconditionOptions, SuiteOptions};
pub use output::{render_csv, render_table, render_tidy_csv};
pub use real::{RealError, RealOptions, RealTarget, TargetKind, DEFAULT_MAX_IDLE_NS};
pub use record::{
    DirectionFigures, JobFigures, SteadyReport, StepKind, StepRecord, SuiteProgress, SuiteShare,
};
pub use registry::Registry;
pub use rescale::NamedTargets;
pub use run::{
    aggregate_drives, aggregate_name, drive_name, drive_seed, run, DeviceRun, On, Ran, MAX_DRIVES,
};
pub use session::{AfterStep, Session, PRECONDITION_STEP};
pub use steady::{check_window, steady_state, SteadyRule, SteadyVerdict, WindowCheck};
pub use suite::{DeviceReport, Outcome, RunsOn, Suite, SuiteFigures, SuiteKind, SuiteReport};
