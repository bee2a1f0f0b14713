//! The built-in test suites: a sequence of fio-style jobs run on one device instance (state
//! carries over, so a preconditioned drive stays preconditioned) and a rule for what to
//! measure. The suites are data plus a little logic, the same for every device. Each is a
//! module under `src/suites/` (its options, steps, results, grids, axes and charts), listed
//! once in the registry ([`SUITES`], `src/suites/mod.rs`); `docs/suites.md` describes them. What they are made of (sessions,
//! measures, grids, charts, reports, shared options) is `flashlab-kit`, which names none of
//! them; this crate hands it the registry ([`REGISTRY`]).

mod preconditioner;
mod registry;
mod suites;

use suites::{
    app_profiles, basic, cache_passes, client, endurance, oltp, opsweep, placement, raid_scaling,
    randread_qd_sweep, recovery, sustained, tenants, wsat,
};

pub use app_profiles::{
    app_profile, app_profile_names, past_peak, split_load, AppProfile, AppProfileOptions,
    ProfileGroup, APP_PROFILES,
};
pub use basic::QosOptions;
pub use cache_passes::CachePassesOptions;
pub use client::{DesktopOptions, TransferSweepOptions};
pub use endurance::{EnduranceOptions, EnduranceWorkload};
pub use oltp::{
    run_workload as run_oltp_workload, OltpOptions, OltpPoint, CLEANER_BATCH, DIRTY_PAGES_PER_TXN,
    LOG_WRITE_BYTES, READS_PER_TXN,
};
pub use opsweep::OpSweepOptions;
pub use placement::{PlacementOptions, Windows as PlacementWindows};
pub use preconditioner::SuitePreconditioner;
pub use raid_scaling::{LinkChoice, RaidScalingOptions};
pub use randread_qd_sweep::RandreadQdSweepOptions;
pub use recovery::{RecoveryOptions, RecoveryVariant};
pub use registry::{
    check_options_given, help_without_suites, local_axis, option_reference, option_table,
    options_from_pairs, options_of, own_options, render_json, run, suite, suite_names,
    suite_options, with_suite_options, REGISTRY,
};
pub use sustained::SustainedOptions;
pub use tenants::TenantOptions;
pub use wsat::WsatOptions;

pub use flashlab_kit::output::{is_outdir_file, write_outdir};
pub use flashlab_kit::rescale::{answer_keeping_scale, slice_shape};
pub use flashlab_kit::{
    aggregate_drives, aggregate_name, check_window, drive_name, drive_seed, grid_titles,
    parse_size, parse_time, render_csv, render_figures_svg, render_html, render_html_with,
    render_table, render_tidy_csv, steady, steady_state, AfterStep, Axis, Chart, ClientOptions,
    Cols, Coord, DesktopProfile, DeviceReport, DeviceRun, Dim, DirectionFigures, DriveState,
    GridSpec, JobFigures, LocalAxis, LocalCoord, Measure, NamedTargets, On, OptionRow, OptionScope,
    Outcome, OwnOptions, OwnOptionsSet, Phase, PreconditionKind, PreconditionOptions, Ran,
    RealError, RealOptions, RealTarget, Registry, RoundLength, RunsOn, Series, Session, StateCache,
    SteadyReport, SteadyRule, SteadyVerdict, StepKind, StepRecord, Suite, SuiteDevice, SuiteError,
    SuiteFigures, SuiteKind, SuiteOptionArgs, SuiteOptions, SuiteProgress, SuiteReport, SuiteShare,
    SuiteTarget, TargetKind, Unit, WindowCheck, DEFAULT_MAX_CACHE_BYTES, DEFAULT_MAX_IDLE_NS,
    LOCAL_WORDS, MAX_DRIVES, PRECONDITION_STEP,
};
pub use suites::SUITES;
