//! Options of the client benchmarks (`transfer-sweep`, `desktop`): transfer sizes, test
//! region, runs, the idle interval between tests, the CrystalDiskMark profile and the state
//! the drive is put in first.

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

/// Options of `transfer-sweep` and `desktop`; each reads those it needs (`docs/suites.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
    /// Smallest transfer size of the sweep (a power of two).
    pub min_bs_bytes: u64,
    /// Largest transfer size of the sweep (a power of two).
    pub max_bs_bytes: u64,
    /// Test region of the sweep, test file of desktop (`None`: 256 MiB and 1 GiB).
    pub size_bytes: Option<u64>,
    /// Measured runs per desktop test; the best is reported.
    pub runs: u32,
    /// Idle time between desktop tests.
    pub interval_ns: u64,
    pub profile: DesktopProfile,
    pub state: DriveState,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            min_bs_bytes: 512,
            max_bs_bytes: 64 << 20,
            size_bytes: None,
            runs: 5,
            interval_ns: 5 * NS_PER_S,
            profile: DesktopProfile::Default,
            state: DriveState::Fresh,
        }
    }
}

impl ClientOptions {
    /// Every option in range, or the first one that is not.
    pub fn validate(&self) -> Result<(), SuiteError> {
        let bad = |option: &'static str, value: String, valid: String| {
            Err(SuiteError::BadOption {
                option,
                value,
                valid,
            })
        };
        let range = format!("a power of two from {MIN_TRANSFER_BYTES} to {MAX_TRANSFER_BYTES}");
        for (option, v) in [
            ("--min-bs", self.min_bs_bytes),
            ("--max-bs", self.max_bs_bytes),
        ] {
            if !v.is_power_of_two() || !(MIN_TRANSFER_BYTES..=MAX_TRANSFER_BYTES).contains(&v) {
                return bad(option, v.to_string(), range);
            }
        }
        if self.min_bs_bytes > self.max_bs_bytes {
            return bad(
                "--max-bs",
                self.max_bs_bytes.to_string(),
                format!("at least --min-bs ({})", self.min_bs_bytes),
            );
        }
        if let Some(size) = self.size_bytes {
            if size < 4096 || !size.is_multiple_of(MIN_TRANSFER_BYTES) {
                return bad(
                    "--size",
                    size.to_string(),
                    "at least 4 KiB, in whole 512-byte sectors".into(),
                );
            }
        }
        if self.runs == 0 || self.runs > MAX_RUNS {
            return bad("--runs", self.runs.to_string(), format!("1 to {MAX_RUNS}"));
        }
        if self.interval_ns > MAX_INTERVAL_NS {
            return bad(
                "--test-interval",
                format!("{} ns", self.interval_ns),
                "at most 1 hour".into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lengths::{parse_size, parse_time};

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
        assert!(ClientOptions::default().validate().is_ok());
        let cases: [(ClientOptions, &str); 5] = [
            (
                ClientOptions {
                    min_bs_bytes: 1000,
                    ..Default::default()
                },
                "--min-bs",
            ),
            (
                ClientOptions {
                    min_bs_bytes: 8192,
                    max_bs_bytes: 4096,
                    ..Default::default()
                },
                "--max-bs",
            ),
            (
                ClientOptions {
                    size_bytes: Some(1000),
                    ..Default::default()
                },
                "--size",
            ),
            (
                ClientOptions {
                    runs: 0,
                    ..Default::default()
                },
                "--runs",
            ),
            (
                ClientOptions {
                    interval_ns: 2 * MAX_INTERVAL_NS,
                    ..Default::default()
                },
                "--test-interval",
            ),
        ];
        for (opts, option) in cases {
            let msg = opts.validate().unwrap_err().to_string();
            assert!(msg.contains(option), "{msg}");
        }
    }
}
