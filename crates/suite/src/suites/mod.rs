//! The built-in suites, a module each (with the modules only one suite or family uses), and
//! the registry: the one list of suites, in the order the CLI lists them. Adding a suite is
//! its module here and one line in [`registry!`]'s list below.

use flashlab_kit::SuiteKind;

pub(crate) mod file_scan;
pub(crate) mod showdown;

/// Declares each suite module and lists its suites (unit structs implementing
/// `flashlab_kit::Suite`) in [`SUITES`], module by module in the order given.
macro_rules! registry {
    ($($module:ident: [$($suite:ident),+ $(,)?]),+ $(,)?) => {
        $(pub(crate) mod $module;)+
        /// The built-in suites, in the order the CLI lists them: the one list the CLI, the
        /// options check, the real-storage check, the JSON report and the renderings read.
        pub static SUITES: &[SuiteKind] = &[$($(&$module::$suite),+),+];
    };
}

registry! {
    basic: [Precondition, FourCorners, Qos],
    pts: [PtsIops, PtsThroughput, PtsLatency],
    client: [TransferSweep, Desktop, CompressionSweep],
    wsat: [Wsat],
    recovery: [Recovery],
    opsweep: [OpSweep],
    endurance: [Endurance],
    raid_scaling: [RaidScaling],
    sustained: [SustainedWrite],
    cache_passes: [CachePasses],
    tenants: [WritePressure, NoisyNeighbor, Power],
    app_profiles: [AppProfiles],
    oltp: [Oltp],
    randread_qd_sweep: [RandreadQdSweep],
    placement: [PlacementSuite],
}
