//! The drive's NVMe-style health log as a typed record: what suites read and what the fio
//! JSON's `"flashlab"` object shows under `"health"` (serialized field by field, in order).

use serde::{Deserialize, Serialize};

/// The health log at one moment (`Ssd::health_log`). Counters count since the drive was
/// built; wear and spare follow the FTL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthLog {
    /// NVMe data units: thousands of 512-byte units, rounded up.
    pub data_units_read: u64,
    pub data_units_written: u64,
    pub host_read_commands: u64,
    pub host_write_commands: u64,
    pub host_trim_commands: u64,
    pub host_flush_commands: u64,
    /// Average erase count over rated P/E cycles, percent, rounded down and capped at 255.
    pub percentage_used: u64,
    /// NVMe's critical warning bits: 0 available spare below its threshold, 2 reliability
    /// degraded (here: the spare is gone), 3 media placed in read-only mode.
    pub critical_warning: u8,
    pub available_spare: u32,
    pub available_spare_threshold: u32,
    pub bad_block_reserve_blocks: u32,
    pub bad_block_reserve_left_blocks: u32,
    pub grown_bad_blocks: u32,
    pub read_only: bool,
    pub media_bytes_written: u64,
    pub nand_bytes_written: u64,
    pub erase_count_min: u32,
    pub erase_count_avg: f64,
    pub erase_count_max: u32,
    /// Power-off data retention at the wear of the most erased block, at the retention
    /// class's storage temperature (`nand.retention_*`).
    pub power_off_retention_days: f64,
    pub power_off_retention_temperature_c: f64,
    /// Reads of data aged by power-off time: re-reads, and reads that failed for good
    /// (NVMe's media and data integrity errors).
    pub read_retries: u64,
    pub media_errors: u64,
    /// Blocks the firmware rewrote after a power-off because their data had aged.
    pub refreshed_blocks: u64,
    /// Intel's timed-workload indicators (SMART E2h, E3h, E4h; see `Ssd::timed_workload`).
    pub timed_workload_media_wear: u64,
    pub timed_workload_host_reads_percent: u64,
    pub timed_workload_minutes: u64,
    pub free_blocks: u32,
    pub write_amplification: f64,
    pub slc_write_ius: u64,
    pub slc_read_hits: u64,
    pub slc_folded_ius: u64,
    pub gc_copied_ius: u64,
    pub rmw_reads: u64,
    pub buffer_wait_ns: u64,
    pub buffer_used_bytes: u64,
    /// The FTL counts these among its host and NAND reads too.
    pub read_buffer_hit_ius: u64,
    pub read_ahead_ius: u64,
    /// A drive with a thermal model: its temperature and throttling.
    #[serde(flatten)]
    pub thermal: Option<ThermalLog>,
}

/// NVMe's composite temperature and thermal management counters, in °C and seconds of the
/// whole drive (as of the latest submission).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThermalLog {
    pub temperature_c: f64,
    pub max_temperature_c: f64,
    pub thermal_throttling: bool,
    pub thermal_throttle_transitions: u64,
    pub thermal_throttle_time_s: f64,
}
