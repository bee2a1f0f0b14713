//! What a suite runs on when it is simulated: a drive or a whole system, behind one trait.

use flashlab_device::{DeviceConfig, HealthLog, Ssd};
use flashlab_engine::{BlockDevice, SimTime};
use flashlab_ftl::Ftl;
use flashlab_runner::SliceScale;
use flashlab_system::{System, SystemConfig, SystemCounters};

/// What a suite needs of the device it runs on beyond block I/O: a purge, counters for the
/// report, how a slice stands for the whole, and (for suites that read them) the FTL's
/// internals. A single drive and a whole system are both suite devices.
pub trait SuiteDevice: BlockDevice {
    /// Secure erase starting at `at_ns`; a flush submitted afterwards completes once the
    /// device takes commands again.
    fn purge_at(&mut self, at_ns: SimTime);
    /// Counters for the fio JSON's `"flashlab"` object.
    fn counters_json(&self) -> serde_json::Value;
    /// The health log of a single drive; a system's are its drives', in its counters tree.
    fn health_log(&self) -> Option<HealthLog> {
        None
    }
    /// What a system's RAID set at the root and its cache tiers counted (nothing for a
    /// drive).
    fn system_counters(&self) -> SystemCounters {
        SystemCounters::default()
    }
    /// How the simulated device stands for the one described.
    fn slice_scale(&self) -> SliceScale;
    /// The FTL of a single drive; `None` on a system that is not one SSD.
    fn ftl(&self) -> Option<&Ftl>;
    /// The drive itself, for what only a drive has (namespaces, its power meter).
    fn as_ssd_mut(&mut self) -> Option<&mut Ssd> {
        None
    }
    /// The conditions of the drive's published figures (a system has none).
    fn spec(&self) -> Option<&flashlab_device::config::SpecSection> {
        None
    }
    /// The system itself (the precondition cache replaces it with a loaded one).
    fn as_system_mut(&mut self) -> Option<&mut System> {
        None
    }
    /// Writes the device's state (`docs/state.md`) with `clock_ns` as its clock.
    fn save_state_to(
        &self,
        _out: &mut dyn std::io::Write,
        _clock_ns: SimTime,
    ) -> Result<u64, flashlab_engine::StateError> {
        Err(flashlab_engine::StateError::Device(
            "this device has no saved state".into(),
        ))
    }
}

impl SuiteDevice for Ssd {
    fn spec(&self) -> Option<&flashlab_device::config::SpecSection> {
        Some(Ssd::spec(self))
    }
    fn purge_at(&mut self, at_ns: SimTime) {
        self.format(at_ns)
    }
    fn counters_json(&self) -> serde_json::Value {
        Ssd::counters_json(self)
    }
    fn health_log(&self) -> Option<HealthLog> {
        Some(Ssd::health_log(self))
    }
    fn slice_scale(&self) -> SliceScale {
        let info = self.scale();
        SliceScale::of_drive(info.capacity_factor, info.die_factor, info.die_cut_allowed)
    }
    fn ftl(&self) -> Option<&Ftl> {
        Some(Ssd::ftl(self))
    }
    fn as_ssd_mut(&mut self) -> Option<&mut Ssd> {
        Some(self)
    }
    fn save_state_to(
        &self,
        out: &mut dyn std::io::Write,
        clock_ns: SimTime,
    ) -> Result<u64, flashlab_engine::StateError> {
        self.save_state(out, clock_ns)
    }
}

impl SuiteDevice for System {
    fn purge_at(&mut self, at_ns: SimTime) {
        self.format(at_ns)
    }
    fn counters_json(&self) -> serde_json::Value {
        System::counters_json(self)
    }
    fn system_counters(&self) -> SystemCounters {
        System::counters(self)
    }
    /// Members run at their own scale and the system's results are its own (docs/systems.md).
    fn slice_scale(&self) -> SliceScale {
        SliceScale::FULL
    }
    fn ftl(&self) -> Option<&Ftl> {
        self.root_ssd().map(Ssd::ftl)
    }
    fn as_system_mut(&mut self) -> Option<&mut System> {
        Some(self)
    }
    fn save_state_to(
        &self,
        out: &mut dyn std::io::Write,
        clock_ns: SimTime,
    ) -> Result<u64, flashlab_engine::StateError> {
        self.save_state(out, clock_ns)
    }
}

/// What a suite runs on: a single drive or a storage system (RAID sets, cache tiers, links).
#[derive(Debug, Clone, PartialEq)]
pub enum SuiteTarget {
    /// Boxed: a drive's description is several times a system's.
    Drive(Box<DeviceConfig>),
    System(SystemConfig),
}

impl SuiteTarget {
    pub fn name(&self) -> &str {
        match self {
            SuiteTarget::Drive(c) => &c.name,
            SuiteTarget::System(c) => &c.name,
        }
    }
}
