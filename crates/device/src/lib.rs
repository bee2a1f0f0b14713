//! The SSD as a [`flashlab_engine::BlockDevice`]: a drive description (presets and TOML files
//! with human units), its derived figures, and the simulated drive built from it.
//!
//! ```no_run
//! use flashlab_device::{load_device_config, Ssd, DEFAULT_DEVICE};
//! let cfg = load_device_config(DEFAULT_DEVICE, &[("buffer.plp".into(), "true".into())]).unwrap();
//! println!("{}", cfg.describe());
//! let ssd = Ssd::new(&cfg, flashlab_engine::SeedTree::new(1)).unwrap();
//! ```

mod buffer;
pub mod config;
pub mod controller;
mod error;
pub mod forged;
mod health;
pub mod link;
mod load;
mod mapcache;
pub mod model;
mod pacing;
pub mod provenance;
pub mod readbuf;
mod reserve;
mod ssd;
pub mod units;
pub mod values;
pub mod zoned;

pub use config::{
    key_table_markdown, parse_condition, DeviceConfig, HostAllocation, KeyDoc, SpecCondition,
    SpecState, KEYS,
};
pub use error::ConfigError;
pub use health::{HealthLog, ThermalLog};
pub use link::LinkKind;
pub use load::{load_device_config, load_device_described, parse_device_config, DescribedDevice};
pub use mapcache::MapCacheCounters;
pub use model::{Model, ScaleInfo};
pub use provenance::{DescribedKey, KeyOrigin, Provenance, ProvenanceKind, ProvenanceMap};
pub use ssd::namespace::{resolve_namespace, DriveTargets, Namespace, NamespaceError};
pub use ssd::{check_kind, drive_config_hash, PowerSummary, Ssd, DRIVE_STATE_KIND, MAX_WAIT_NS};

/// The built-in default drive.
pub const DEFAULT_DEVICE: &str = "generic-tlc-256gb";

/// Built-in presets: (name, one-line summary), sorted by name.
pub fn preset_names() -> Vec<(&'static str, String)> {
    let mut v: Vec<(&'static str, String)> = load::PRESETS
        .iter()
        .map(|p| {
            let summary = toml::from_str::<toml::Table>(p.text)
                .ok()
                .and_then(|t| {
                    t.get("description")
                        .and_then(|d| d.as_str())
                        .map(str::to_string)
                })
                .unwrap_or_default();
            (p.name, summary)
        })
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_listed_sorted_with_summaries_and_default_exists() {
        let p = preset_names();
        assert!(p.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(p.iter().any(|(n, _)| *n == DEFAULT_DEVICE));
        assert!(p.iter().all(|(_, s)| !s.is_empty()));
    }
}
