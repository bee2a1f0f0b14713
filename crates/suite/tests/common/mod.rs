//! Options that make every suite short on a small drive, shared by the tests that run them
//! all: measured steps and rounds of `step_ns`, the rest as small as each suite allows; and
//! the runs the tests make, through `flashlab_suite::run`.

// Each test binary uses some of these.
#![allow(dead_code)]

use flashlab_device::DeviceConfig;
use flashlab_engine::{NS_PER_MS, NS_PER_S};
use flashlab_suite::{
    DeviceReport, DeviceRun, On, RoundLength, SuiteDevice, SuiteError, SuiteKind, SuiteOptions,
    SuiteProgress, SuiteReport, SuiteTarget,
};

/// Every suite with steps and rounds of `step_ns`.
pub fn short_options(step_ns: u64) -> SuiteOptions {
    let mut o = SuiteOptions {
        runtime_ns: Some(step_ns),
        round: RoundLength::TimeNs(step_ns),
        max_rounds: 5,
        ..Default::default()
    }
    .with(flashlab_suite::QosOptions {
        depths: vec![4],
        ..Default::default()
    });
    o.own_mut::<flashlab_suite::DesktopOptions>().runs = 1;
    o.client.size_bytes = Some(64 << 20);
    o.own_mut::<flashlab_suite::WsatOptions>().write_multiple = 0.1;
    o.interval = RoundLength::CapacityFraction(0.05);
    o.own_mut::<flashlab_suite::RecoveryOptions>().dirty_ns = vec![100 * NS_PER_MS];
    o.own_mut::<flashlab_suite::RecoveryOptions>().idle_ns = vec![NS_PER_S];
    o.own_mut::<flashlab_suite::RecoveryOptions>().probe_ns = 20 * NS_PER_MS;
    o.own_mut::<flashlab_suite::RecoveryOptions>().hir_bursts = 2;
    o.own_mut::<flashlab_suite::RecoveryOptions>().hir_burst_ns = 20 * NS_PER_MS;
    o.own_mut::<flashlab_suite::RecoveryOptions>()
        .hir_idle_multiples = vec![1];
    o.own_mut::<flashlab_suite::RecoveryOptions>()
        .hir_baseline_ns = 40 * NS_PER_MS;
    o.own_mut::<flashlab_suite::OpSweepOptions>().fractions = vec![0.0];
    o.own_mut::<flashlab_suite::OpSweepOptions>()
        .precondition_ns = Some(50 * NS_PER_MS);
    o.own_mut::<flashlab_suite::OpSweepOptions>().run_ns = vec![50 * NS_PER_MS];
    o.own_mut::<flashlab_suite::EnduranceOptions>().measure = RoundLength::CapacityFraction(0.02);
    o.own_mut::<flashlab_suite::RaidScalingOptions>().members = vec![2];
    o.own_mut::<flashlab_suite::SustainedOptions>().length = RoundLength::CapacityFraction(0.05);
    o.own_mut::<flashlab_suite::CachePassesOptions>()
        .app_region_bytes = 64 << 20;
    o.own_mut::<flashlab_suite::CachePassesOptions>().app_ns = 20 * NS_PER_MS;
    o.own_mut::<flashlab_suite::CachePassesOptions>()
        .scan_set_bytes = 16 << 20;
    o.own_mut::<flashlab_suite::TenantOptions>().write_bs_bytes = vec![8 << 10];
    o.own_mut::<flashlab_suite::AppProfileOptions>().profiles =
        vec!["sql".into(), "vdi-full-boot".into()];
    o.own_mut::<flashlab_suite::AppProfileOptions>().loads = vec![1];
    o.precondition.random_ns = 50 * NS_PER_MS;
    o.precondition.seq_ns = 0;
    o
}

/// `kind` on one drive built from `config`, through the entry point every caller takes.
pub fn run_on_device(
    kind: SuiteKind,
    config: &DeviceConfig,
    o: &SuiteOptions,
) -> Result<DeviceReport, SuiteError> {
    run_on_target_with(kind, &SuiteTarget::Drive(Box::new(config.clone())), o)
}

/// `kind` on one drive or system.
pub fn run_on_target_with(
    kind: SuiteKind,
    target: &SuiteTarget,
    o: &SuiteOptions,
) -> Result<DeviceReport, SuiteError> {
    run_suite_drives_with(kind, std::slice::from_ref(target), 1, o, &|_, _| {})
        .map(|mut r| r.devices.remove(0))
}

/// `kind` on every drive of `configs`, each on a thread of its own.
pub fn run_suite_with(
    kind: SuiteKind,
    configs: &[DeviceConfig],
    o: &SuiteOptions,
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
) -> Result<SuiteReport, SuiteError> {
    let targets: Vec<SuiteTarget> = configs
        .iter()
        .map(|c| SuiteTarget::Drive(Box::new(c.clone())))
        .collect();
    run_suite_drives_with(kind, &targets, 1, o, progress)
}

/// `kind` on each target as `drives` identical drives.
pub fn run_suite_drives_with(
    kind: SuiteKind,
    targets: &[SuiteTarget],
    drives: usize,
    o: &SuiteOptions,
    progress: &(dyn Fn(usize, &SuiteProgress) + Sync),
) -> Result<SuiteReport, SuiteError> {
    let on = On::Targets { targets, drives };
    flashlab_suite::run(kind, on, o, progress).map(|ran| ran.report)
}

/// `kind` on a device the test built.
pub fn run_on_suite_device(
    kind: SuiteKind,
    dev: &mut dyn SuiteDevice,
    name: &str,
    o: &SuiteOptions,
) -> Result<DeviceReport, SuiteError> {
    let on = On::Device {
        dev,
        name,
        run: DeviceRun::default(),
    };
    flashlab_suite::run(kind, on, o, &|_, _| {}).map(|mut ran| ran.report.devices.remove(0))
}
