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
