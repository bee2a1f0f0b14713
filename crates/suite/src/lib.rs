//! Built-in test suites: a sequence of fio-style jobs run on one device instance (state carries
//! over, so a preconditioned drive stays preconditioned) and a rule for what to measure. The
//! suites are data plus a little logic, the same for every device. Each is a module under
//! `src/suites/` (its options, steps, results, grids, axes and charts), listed once in
//! [`SUITES`]; `docs/suites.md` describes them.
//!
//! Every suite runs on a single drive or on a whole system ([`SuiteTarget`]); those that read
//! FTL internals need a drive.
//!
//! Each job runs through `flashlab_host::run_on` (the path `run` and `fio` take), so every
//! step has an ordinary fio result. Simulated time keeps running from one step to the next
//! (`docs/suites.md`).

mod args;
mod charts;
mod device;
mod error;
mod format;
mod grids;
mod html;
mod layout;
mod lengths;
mod measure;
mod options;
mod output;
mod preconditioner;
mod real;
mod record;
mod rescale;
mod run;
mod session;
mod state_cache;
pub mod steady;
mod steps;
mod suite;
mod suites;

use suites::{
    app_profiles, basic, cache_passes, client, client_options, endurance, file_scan, oltp, opsweep,
    placement, pts, raid_scaling, randread_qd_sweep, recovery, showdown, sustained, tenants, wsat,
};

pub use app_profiles::{
    app_profile, app_profile_names, past_peak, split_load, AppProfile, AppProfileOptions,
    ProfileGroup, APP_PROFILES,
};
pub use args::{
    check_options_given, options_from_pairs, options_of, with_suite_options, SuiteOptionArgs,
};
pub use cache_passes::CachePassesOptions;
pub use device::SuiteDevice;
pub use error::SuiteError;
pub use oltp::{
    run_workload as run_oltp_workload, OltpOptions, OltpPoint, CLEANER_BATCH, DIRTY_PAGES_PER_TXN,
    LOG_WRITE_BYTES, READS_PER_TXN,
};
pub use preconditioner::SuitePreconditioner;
pub use raid_scaling::{LinkChoice, RaidScalingOptions};
pub use randread_qd_sweep::RandreadQdSweepOptions;
pub use record::{
    DirectionFigures, JobFigures, SteadyReport, StepKind, StepRecord, SuiteProgress, SuiteShare,
};
pub use rescale::{run_suite_keeping_figures, NamedTargets};
pub use run::{
    aggregate_drives, aggregate_name, drive_name, drive_seed, run_on_device, run_on_device_with,
    run_on_real_target, run_on_suite_device, run_on_suite_device_as, run_on_suite_device_at,
    run_on_target_with, run_suite, run_suite_drives_with, run_suite_targets_with, run_suite_with,
    DeviceRun, SuiteTarget, MAX_DRIVES,
};
pub use session::{AfterStep, PRECONDITION_STEP};
pub use state_cache::{StateCache, DEFAULT_MAX_CACHE_BYTES};
pub use sustained::SustainedOptions;

pub use basic::QosOptions;
pub use client::{DesktopOptions, TransferSweepOptions};
pub use client_options::{ClientOptions, DesktopProfile, DriveState};
pub use endurance::{EnduranceOptions, EnduranceWorkload};
pub use flashlab_report::chart::{Axis, Chart, Series, Unit};
pub use grids::{Cols, GridSpec};
pub use html::{render_figures_svg, render_html, render_html_with};
pub use layout::grid_titles;
pub use lengths::{parse_size, parse_time, RoundLength};
pub use measure::{Coord, Dim, LocalAxis, LocalCoord, Measure, Phase, LOCAL_WORDS};
pub use opsweep::OpSweepOptions;
pub use options::{OwnOptions, OwnOptionsSet, PreconditionKind, PreconditionOptions, SuiteOptions};
pub use output::{render_csv, render_json, render_table, render_tidy_csv, write_outdir};
pub use placement::{PlacementOptions, Windows as PlacementWindows};
pub use real::{RealError, RealOptions, RealTarget, TargetKind, DEFAULT_MAX_IDLE_NS};
pub use recovery::{RecoveryOptions, RecoveryVariant};
pub use session::Session;
pub use steady::{check_window, steady_state, SteadyRule, SteadyVerdict, WindowCheck};
pub use suite::{DeviceReport, Outcome, RunsOn, Suite, SuiteFigures, SuiteKind, SuiteReport};
pub use tenants::TenantOptions;
pub use wsat::WsatOptions;

/// The built-in suites, in the order the CLI lists them: the one list the CLI, the options
/// check, the real-storage check, the JSON report and the renderings read. A suite is a module
/// with a unit struct implementing [`Suite`], declared above and listed here.
pub static SUITES: &[SuiteKind] = &[
    &basic::Precondition,
    &basic::FourCorners,
    &basic::Qos,
    &pts::PtsIops,
    &pts::PtsThroughput,
    &pts::PtsLatency,
    &client::TransferSweep,
    &client::Desktop,
    &client::CompressionSweep,
    &wsat::Wsat,
    &recovery::Recovery,
    &opsweep::OpSweep,
    &endurance::Endurance,
    &raid_scaling::RaidScaling,
    &sustained::SustainedWrite,
    &cache_passes::CachePasses,
    &tenants::WritePressure,
    &tenants::NoisyNeighbor,
    &tenants::Power,
    &app_profiles::AppProfiles,
    &oltp::Oltp,
    &randread_qd_sweep::RandreadQdSweep,
    &placement::PlacementSuite,
];

/// The suite called `name`, or an error listing the valid names.
pub fn suite(name: &str) -> Result<SuiteKind, SuiteError> {
    SUITES
        .iter()
        .copied()
        .find(|k| k.name() == name)
        .ok_or_else(|| SuiteError::UnknownSuite {
            name: name.to_string(),
            valid: suite_names(),
        })
}

/// The valid suite names, comma-separated.
pub fn suite_names() -> String {
    SUITES
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The axis of some suite's own called `name` ([`Suite::axes`]).
pub fn local_axis(name: &str) -> Option<&'static LocalAxis> {
    SUITES
        .iter()
        .flat_map(|k| k.axes())
        .copied()
        .find(|a| a.name == name)
}

/// The long names of the options a suite adds itself ([`Suite::augment_args`]).
pub fn own_options(k: SuiteKind) -> Vec<String> {
    k.augment_args(clap::Command::new(k.name()))
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}

/// Every option some suite reads, with the suites that read it, in registry order.
pub fn suite_options() -> Vec<(String, Vec<&'static str>)> {
    let mut out: Vec<(String, Vec<&'static str>)> = Vec::new();
    for &k in SUITES {
        let shared = k.options().iter().map(|o| o.to_string());
        for o in own_options(k).into_iter().chain(shared) {
            match out.iter_mut().find(|(name, _)| *name == o) {
                Some((_, suites)) => suites.push(k.name()),
                None => out.push((o, vec![k.name()])),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_engine::SeedTree;

    fn report(results: &[(&'static str, Unit, f64)]) -> DeviceReport {
        DeviceReport {
            device: "d".into(),
            scale_note: None,
            steps: Vec::new(),
            steady: None,
            results: results
                .iter()
                .map(|(name, unit, value)| Measure::new(name, *unit, *value))
                .collect(),
            charts: Vec::new(),
        }
    }

    #[test]
    fn aggregate_sums_throughput_takes_worst_latency_and_drops_the_rest() {
        let a = report(&[
            ("iops", Unit::Iops, 100.0),
            ("bw_bytes_per_s", Unit::BytesPerS, 1e6),
            ("lat_p99_ns", Unit::Ns, 500.0),
            ("waf", Unit::Ratio, 2.0),
            ("only_a_ns", Unit::Ns, 9.0),
        ]);
        let b = report(&[
            ("lat_p99_ns", Unit::Ns, 800.0),
            ("iops", Unit::Iops, 50.0),
            ("bw_bytes_per_s", Unit::BytesPerS, 3e6),
            ("waf", Unit::Ratio, 3.0),
        ]);
        let agg = aggregate_drives("dev", &[a, b]);
        assert_eq!(agg.device, "dev#all");
        let got: Vec<(&str, f64)> = agg.results.iter().map(|m| (m.family, m.value)).collect();
        assert_eq!(
            got,
            [
                ("iops", 150.0),
                ("bw_bytes_per_s", 4e6),
                ("lat_p99_ns", 800.0)
            ]
        );
    }

    #[test]
    fn drive_seeds_keep_drive_one_and_differ_per_drive() {
        assert_eq!(drive_seed(42, 1), 42);
        let seeds: Vec<u64> = (1..=8).map(|d| drive_seed(42, d)).collect();
        for (i, a) in seeds.iter().enumerate() {
            assert!(seeds[i + 1..].iter().all(|b| b != a), "{seeds:?}");
        }
        assert_eq!(
            drive_seed(42, 3),
            SeedTree::new(42).child("drive-3").master_seed()
        );
        assert_ne!(drive_seed(42, 3), drive_seed(43, 3));
    }

    #[test]
    fn zero_or_too_many_drives_are_a_bad_option() {
        for n in [0, MAX_DRIVES + 1] {
            let e = run_suite_drives_with(
                suite("qos").unwrap(),
                &[],
                n,
                &SuiteOptions::default(),
                &|_, _| {},
            )
            .unwrap_err();
            assert!(e.is_bad_input());
            assert!(e.to_string().contains("drives"), "{e}");
        }
    }

    #[test]
    fn suite_names_round_trip_and_unknown_lists_them() {
        for &k in SUITES {
            assert_eq!(suite(k.name()).unwrap(), k);
            assert!(!k.summary().is_empty(), "{}", k.name());
        }
        let e = suite("four_corners").unwrap_err();
        assert!(e.is_bad_input());
        let msg = e.to_string();
        assert!(
            msg.contains(
                "precondition, four-corners, qos, pts-iops, pts-throughput, pts-latency, \
                 transfer-sweep, desktop, compression-sweep, wsat, recovery, op-sweep, endurance, raid-scaling, \
                 sustained-write, cache-passes, write-pressure, noisy-neighbor, power, app-profiles, \
                 oltp, randread-qd-sweep, placement"
            ),
            "{msg}"
        );
    }
}
