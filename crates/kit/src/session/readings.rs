//! What a suite reads of the session's device and clock: time, the FTL's and the drive's
//! counters, capacity, and what a drive does when powered off.

use super::*;

impl<'a> Session<'a> {
    /// The drive's clock: simulated ns since the suite started on this device (on a drive
    /// loaded from a saved state, since that drive's time 0).
    pub fn now_ns(&self) -> SimTime {
        self.now_ns
    }

    /// Simulated time of the whole drive: on a slice, time runs `capacity_factor /
    /// die_factor` faster than the slice's clock (the runner's scaling of time budgets,
    /// `docs/scale.md`).
    pub fn drive_ns(&self, slice_ns: SimTime) -> f64 {
        slice_ns as f64 * self.scale.capacity_factor / self.scale.die_factor
    }

    /// An error unless the device has an FTL to read: `suite` reads its internals. Suites
    /// call it first; the readers below then never see a device without one.
    pub fn require_ftl(&self, suite: &'static str) -> Result<(), SuiteError> {
        let ftl = match &self.drive {
            Drive::Sim(dev) => dev.ftl(),
            Drive::Real(_) | Drive::Described(_) => None,
        };
        match ftl {
            Some(_) => Ok(()),
            None => Err(SuiteError::NoFtl {
                device: self.device.clone(),
                suite,
                one_ssd: true,
            }),
        }
    }

    /// The FTL's counters now (cumulative since the last purge); zero without an FTL.
    pub fn counters(&self) -> FtlCounters {
        match &self.drive {
            Drive::Sim(ssd) => ssd.ftl().map(|f| f.counters().clone()).unwrap_or_default(),
            Drive::Real(_) | Drive::Described(_) => FtlCounters::default(),
        }
    }

    /// Blocks erased in [`WA_RECLAIM_CYCLES`] GC cycles: the host stream fills a block on every
    /// (die, plane) unit per cycle and each victim frees one block (0 without an FTL).
    pub fn wa_window_reclaims(&self) -> u64 {
        match &self.drive {
            Drive::Sim(ssd) => ssd.ftl().map_or(0, |f| {
                let c = f.config();
                WA_RECLAIM_CYCLES * u64::from(c.dies) * u64::from(c.planes_per_die)
            }),
            Drive::Real(_) | Drive::Described(_) => 0,
        }
    }

    /// Bytes of host data the drive's static SLC cache holds when full, the whole drive's
    /// (0 without an FTL or a static cache).
    pub fn static_slc_bytes(&self) -> u64 {
        match &self.drive {
            Drive::Sim(ssd) => ssd.ftl().map_or(0, |f| {
                (f.static_slc_bytes() as f64 * self.scale.capacity_factor).round() as u64
            }),
            Drive::Real(_) | Drive::Described(_) => 0,
        }
    }

    /// Free native blocks now (0 without an FTL).
    pub fn free_blocks(&self) -> u32 {
        match &self.drive {
            Drive::Sim(ssd) => ssd.ftl().map_or(0, Ftl::free_blocks),
            Drive::Real(_) | Drive::Described(_) => 0,
        }
    }

    /// Erase counts of the good blocks (all zero without an FTL).
    pub fn erase_count_summary(&self) -> EraseSummary {
        match &self.drive {
            Drive::Sim(ssd) => ssd
                .ftl()
                .map_or(EraseSummary::default(), Ftl::erase_count_summary),
            Drive::Real(_) | Drive::Described(_) => EraseSummary::default(),
        }
    }

    /// A single drive sits unpowered `days` at `storage_c` (`Ssd::power_off`); false on a
    /// device that is not one.
    pub fn power_off(&mut self, days: f64, storage_c: f64) -> bool {
        self.announce("power-off");
        match &mut self.drive {
            Drive::Sim(dev) => dev
                .as_ssd_mut()
                .map(|ssd| ssd.power_off(days, storage_c))
                .is_some(),
            Drive::Real(_) | Drive::Described(_) => false,
        }
    }

    /// Reset a single drive's timed-workload indicators (`Ssd::reset_timed_workload`); false
    /// on a device that has none.
    pub fn reset_timed_workload(&mut self) -> bool {
        // The drive changes outside a step: no cache key describes it any more.
        self.cache = None;
        match &mut self.drive {
            Drive::Sim(dev) => dev.as_ssd_mut().map(Ssd::reset_timed_workload).is_some(),
            Drive::Real(_) | Drive::Described(_) => false,
        }
    }

    /// The drive's health log now; None on a system or real storage.
    pub fn health_log(&self) -> Option<HealthLog> {
        match &self.drive {
            Drive::Sim(dev) => dev.health_log(),
            Drive::Real(_) | Drive::Described(_) => None,
        }
    }

    /// The system's RAID and cache counters now (nothing on a drive or real storage).
    pub fn system_counters(&self) -> SystemCounters {
        match &self.drive {
            Drive::Sim(dev) => dev.system_counters(),
            Drive::Real(_) | Drive::Described(_) => SystemCounters::default(),
        }
    }

    /// The conditions the drive's published figures were measured at, where it records
    /// them (a drive's `[spec]`; nothing on real storage or a system).
    pub fn spec(&self) -> flashlab_device::config::SpecSection {
        match &self.drive {
            Drive::Sim(dev) => dev.spec().cloned().unwrap_or_default(),
            Drive::Described(c) => c.spec.clone(),
            Drive::Real(_) => Default::default(),
        }
    }

    /// The drive's counters and health log as in the fio JSON's `"flashlab"` object.
    pub fn counters_json(&self) -> serde_json::Value {
        match &self.drive {
            Drive::Sim(ssd) => ssd.counters_json(),
            Drive::Real(_) | Drive::Described(_) => serde_json::Value::Null,
        }
    }

    pub fn scale(&self) -> SliceScale {
        self.scale
    }

    /// User bytes of the whole drive (not of the slice simulated).
    pub fn full_capacity_bytes(&self) -> u64 {
        match &self.drive {
            Drive::Sim(ssd) => {
                (ssd.capacity_bytes() as f64 * self.scale.capacity_factor).round() as u64
            }
            Drive::Real(t) => t.size_bytes(),
            Drive::Described(_) => 0,
        }
    }

    /// Capacity of what is simulated: the slice's on a slice, else the drive's.
    pub fn simulated_capacity_bytes(&self) -> u64 {
        match &self.drive {
            Drive::Sim(ssd) => ssd.capacity_bytes(),
            Drive::Real(t) => t.size_bytes(),
            Drive::Described(_) => 0,
        }
    }
}
