//! The SSD as a [`flashlab_engine::BlockDevice`]: a drive description (presets and TOML files
//! with human units), its derived figures, and the simulated drive built from it.
//!
//! Key types: [`DeviceConfig`] (a drive description as read from a preset or a TOML file,
//! after `--set KEY=VALUE` overrides; [`KEYS`] documents every key), [`Model`] (the figures
//! derived from it: geometry, timings, spare area), and [`Ssd`] (the simulated drive: host
//! interface, write buffer, FTL, dies and channels, power and temperature). A drive's
//! configuration comes from [`load_device_config`] (a preset name or a file) or
//! [`parse_device_config`] (TOML text); bad input is a [`ConfigError`] naming the key.
//!
//! The tiny test drive with power-loss protection switched on (as `--set buffer.plp=true`
//! would), and a few I/Os submitted to it directly:
//!
//! ```rust
//! use flashlab_device::{load_device_config, Ssd};
//! use flashlab_engine::{BlockDevice, IoRequest, SeedTree};
//!
//! let overrides = [("buffer.plp".to_string(), "true".to_string())];
//! let config = load_device_config("tiny-test-1gb", &overrides).unwrap();
//! let mut ssd = Ssd::new(&config, SeedTree::new(1)).unwrap();
//! assert_eq!(ssd.name(), "tiny-test-1gb");
//!
//! // Four 16 KiB writes, then read the first back; each completes after it was submitted.
//! let mut now_ns = 0;
//! for i in 0..4 {
//!     let done = ssd.submit(now_ns, &IoRequest::write(i * 16384, 16384)).unwrap();
//!     assert!(done.done_ns > now_ns);
//!     now_ns = done.done_ns;
//! }
//! let read = ssd.submit(now_ns, &IoRequest::read(0, 4096)).unwrap();
//! assert!(read.done_ns > now_ns);
//!
//! // Four writes of four 4 KiB IUs each reached the FTL; the one read, one IU.
//! let counters = ssd.ftl().counters();
//! assert_eq!((counters.host_write_ius, counters.host_read_ius), (16, 1));
//!
//! // A request past the end is refused, not simulated.
//! let past_end = IoRequest::read(ssd.capacity_bytes(), 4096);
//! assert!(ssd.submit(now_ns, &past_end).is_err());
//!
//! // A key that does not exist names itself in the error.
//! let bad = [("buffer.pl".to_string(), "true".to_string())];
//! let error = load_device_config("tiny-test-1gb", &bad).unwrap_err();
//! assert!(error.to_string().contains("buffer.pl"));
//! ```

mod buffer;
pub mod config;
pub mod controller;
mod error;
pub mod forged;
mod health;
mod key_line;
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
pub use ssd::{
    check_kind, drive_config_hash, PowerSummary, Ssd, Untimed, DRIVE_STATE_KIND, MAX_WAIT_NS,
};

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
