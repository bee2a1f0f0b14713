//! Options the client benchmarks (`transfer-sweep`, `desktop`, `compression-sweep`) share with
//! cache-passes and raid-scaling: test region, CrystalDiskMark profile, the state the drive is
//! put in first. Their own options are in their module (`suites/client.rs`).

use flashlab_engine::NS_PER_S;

use crate::SuiteError;

/// Which CrystalDiskMark 8 test set `desktop` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DesktopProfile {
    /// SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1.
    Default,
    /// SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1.
    Nvme,
}

impl DesktopProfile {
    pub const ALL: [DesktopProfile; 2] = [DesktopProfile::Default, DesktopProfile::Nvme];

    pub fn name(self) -> &'static str {
        match self {
            DesktopProfile::Default => "default",
            DesktopProfile::Nvme => "nvme",
        }
    }

    pub fn from_name(name: &str) -> Result<Self, SuiteError> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| SuiteError::BadOption {
                option: "--profile",
                value: name.to_string(),
                valid: "default or nvme".into(),
            })
    }
}

/// The state the drive is put in before a client benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriveState {
    /// Purged: nothing mapped, every block erased (a new drive).
    Fresh,
    /// Purged, then every LBA written once sequentially (a drive in use, nearly full).
    Full,
}

impl DriveState {
    pub const ALL: [DriveState; 2] = [DriveState::Fresh, DriveState::Full];

    pub fn name(self) -> &'static str {
        match self {
            DriveState::Fresh => "fresh",
            DriveState::Full => "full",
        }
    }

    pub fn from_name(name: &str) -> Result<Self, SuiteError> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| SuiteError::BadOption {
                option: "--state",
                value: name.to_string(),
                valid: "fresh or full".into(),
            })
    }
}

/// Smallest transfer a job may ask for: one 512-byte sector.
pub const MIN_TRANSFER_BYTES: u64 = 512;
/// Largest transfer size of the sweep: bounds the memory a single request describes.
pub const MAX_TRANSFER_BYTES: u64 = 1 << 30;
/// Most runs per desktop test.
pub const MAX_RUNS: u32 = 100;
/// Longest idle interval between desktop tests (CrystalDiskMark offers up to 10 min).
pub const MAX_INTERVAL_NS: u64 = 3600 * NS_PER_S;

/// What the client benchmarks share with cache-passes and raid-scaling (`--size`,
/// `--profile`, `--state`); each reads those it needs (`docs/suites.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
    /// Test region of the sweep, test file of desktop (`None`: 256 MiB and 1 GiB).
    pub size_bytes: Option<u64>,
    pub profile: DesktopProfile,
    /// The states `--state` names, in order: one, or both (fresh, then full). The client
    /// suites put the drive in the first; raid-scaling tests its members in each.
    pub states: Vec<DriveState>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            size_bytes: None,
            profile: DesktopProfile::Default,
            states: vec![DriveState::Fresh],
        }
    }
}

impl ClientOptions {
    /// The state the client suites put the drive in first.
    pub fn state(&self) -> DriveState {
        self.states.first().copied().unwrap_or(DriveState::Fresh)
    }

    /// `--state`: fresh, full, or both (fresh, then full).
    pub fn parse_states(text: &str) -> Result<Vec<DriveState>, SuiteError> {
        match text {
            "both" => Ok(vec![DriveState::Fresh, DriveState::Full]),
            s => Ok(vec![DriveState::from_name(s)?]),
        }
    }

    /// Every option in range, or the first one that is not.
    pub fn validate(&self) -> Result<(), SuiteError> {
        if let Some(size) = self.size_bytes {
            if size < 4096 || !size.is_multiple_of(MIN_TRANSFER_BYTES) {
                return Err(SuiteError::BadOption {
                    option: "--size",
                    value: size.to_string(),
                    valid: "at least 4 KiB, in whole 512-byte sectors".into(),
                });
            }
        }
        if self.states.is_empty() {
            return Err(SuiteError::BadOption {
                option: "--state",
                value: String::new(),
                valid: "fresh, full or both".into(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{DesktopOptions, TransferSweepOptions};
    use crate::lengths::{parse_size, parse_time};
    use crate::options::OwnOptions;
    use crate::SuiteOptions;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for p in DesktopProfile::ALL {
            assert_eq!(DesktopProfile::from_name(p.name()).unwrap(), p);
        }
        for s in DriveState::ALL {
            assert_eq!(DriveState::from_name(s.name()).unwrap(), s);
        }
        let msg = DesktopProfile::from_name("sata").unwrap_err().to_string();
        assert!(msg.contains("--profile") && msg.contains("nvme"), "{msg}");
        let msg = DriveState::from_name("used").unwrap_err().to_string();
        assert!(
            msg.contains("--state") && msg.contains("fresh or full"),
            "{msg}"
        );
    }

    #[test]
    fn sizes_and_times_parse_and_name_their_option() {
        assert_eq!(parse_size("--size", "256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("--min-bs", "512").unwrap(), 512);
        let msg = parse_size("--max-bs", "5s").unwrap_err().to_string();
        assert!(msg.contains("--max-bs") && msg.contains("64MiB"), "{msg}");
        assert_eq!(parse_time("--test-interval", "0").unwrap(), 0);
        assert_eq!(parse_time("--test-interval", "5s").unwrap(), 5 * NS_PER_S);
        let msg = parse_time("--test-interval", "4KiB")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("--test-interval"), "{msg}");
    }

    #[test]
    fn validate_names_the_option_out_of_range() {
        let common = SuiteOptions::default();
        assert!(ClientOptions::default().validate().is_ok());
        assert!(TransferSweepOptions::default().validate(&common).is_ok());
        assert!(DesktopOptions::default().validate(&common).is_ok());
        let sweep = |min_bs_bytes, max_bs_bytes| {
            TransferSweepOptions {
                min_bs_bytes,
                max_bs_bytes,
            }
            .validate(&common)
        };
        let desktop = |runs, interval_ns| DesktopOptions { runs, interval_ns }.validate(&common);
        let size = ClientOptions {
            size_bytes: Some(1000),
            ..Default::default()
        };
        for (result, option) in [
            (sweep(1000, 64 << 20), "--min-bs"),
            (sweep(8192, 4096), "--max-bs"),
            (size.validate(), "--size"),
            (desktop(0, 0), "--runs"),
            (desktop(1, 2 * MAX_INTERVAL_NS), "--test-interval"),
        ] {
            let msg = result.unwrap_err().to_string();
            assert!(msg.contains(option), "{msg}");
        }
    }

    #[test]
    fn state_both_is_fresh_then_full() {
        assert_eq!(
            ClientOptions::parse_states("both").unwrap(),
            vec![DriveState::Fresh, DriveState::Full]
        );
        assert_eq!(
            ClientOptions::parse_states("full").unwrap(),
            vec![DriveState::Full]
        );
        assert!(ClientOptions::parse_states("used").is_err());
    }
}
