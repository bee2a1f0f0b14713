//! The built-in suites, a module each (with the modules only one suite or family uses).

pub(crate) mod app_profiles;
pub(crate) mod basic;
pub(crate) mod cache_passes;
pub(crate) mod client;
pub(crate) mod client_options;
pub(crate) mod endurance;
pub(crate) mod file_scan;
pub(crate) mod oltp;
pub(crate) mod opsweep;
pub(crate) mod placement;
pub(crate) mod pts;
pub(crate) mod raid_scaling;
pub(crate) mod randread_qd_sweep;
pub(crate) mod recovery;
pub(crate) mod showdown;
pub(crate) mod sustained;
pub(crate) mod tenants;
pub(crate) mod wsat;
