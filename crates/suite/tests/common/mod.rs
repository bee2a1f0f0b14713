//! Options that make every suite short on a small drive, shared by the tests that run them
//! all: measured steps and rounds of `step_ns`, the rest as small as each suite allows.

use flashlab_engine::{NS_PER_MS, NS_PER_S};
use flashlab_suite::{RoundLength, SuiteOptions};

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
