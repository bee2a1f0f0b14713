//! The drive's NVMe-style health log as a typed record: what suites read and what the fio
//! JSON's `"flashlab"` object shows under `"health"` (serialized field by field, in order).

use serde::{Deserialize, Serialize};

/// The health log at one moment (`Ssd::health_log`). Counters count since the drive was
/// built; wear and spare follow the FTL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

impl HealthLog {
    /// The log's numeric figures in the order its JSON shows them, each with its unit (`B`,
    /// `ns`, `%`, `days`, `C` or none); flags (read-only, throttling) are not figures.
    pub fn figures(&self) -> Vec<(&'static str, f64, &'static str)> {
        let mut figures = vec![
            ("data_units_read", self.data_units_read as f64, ""),
            ("data_units_written", self.data_units_written as f64, ""),
            ("host_read_commands", self.host_read_commands as f64, ""),
            ("host_write_commands", self.host_write_commands as f64, ""),
            ("host_trim_commands", self.host_trim_commands as f64, ""),
            ("host_flush_commands", self.host_flush_commands as f64, ""),
            ("percentage_used", self.percentage_used as f64, "%"),
            ("critical_warning", self.critical_warning as f64, ""),
            ("available_spare", self.available_spare as f64, ""),
            (
                "available_spare_threshold",
                self.available_spare_threshold as f64,
                "",
            ),
            (
                "bad_block_reserve_blocks",
                self.bad_block_reserve_blocks as f64,
                "",
            ),
            (
                "bad_block_reserve_left_blocks",
                self.bad_block_reserve_left_blocks as f64,
                "",
            ),
            ("grown_bad_blocks", self.grown_bad_blocks as f64, ""),
            ("media_bytes_written", self.media_bytes_written as f64, ""),
            ("nand_bytes_written", self.nand_bytes_written as f64, ""),
            ("erase_count_min", self.erase_count_min as f64, ""),
            ("erase_count_avg", self.erase_count_avg, ""),
            ("erase_count_max", self.erase_count_max as f64, ""),
            (
                "power_off_retention_days",
                self.power_off_retention_days,
                "days",
            ),
            (
                "power_off_retention_temperature_c",
                self.power_off_retention_temperature_c,
                "C",
            ),
            ("read_retries", self.read_retries as f64, ""),
            ("media_errors", self.media_errors as f64, ""),
            ("refreshed_blocks", self.refreshed_blocks as f64, ""),
            (
                "timed_workload_media_wear",
                self.timed_workload_media_wear as f64,
                "",
            ),
            (
                "timed_workload_host_reads_percent",
                self.timed_workload_host_reads_percent as f64,
                "%",
            ),
            (
                "timed_workload_minutes",
                self.timed_workload_minutes as f64,
                "",
            ),
            ("free_blocks", self.free_blocks as f64, ""),
            ("write_amplification", self.write_amplification, ""),
            ("slc_write_ius", self.slc_write_ius as f64, ""),
            ("slc_read_hits", self.slc_read_hits as f64, ""),
            ("slc_folded_ius", self.slc_folded_ius as f64, ""),
            ("gc_copied_ius", self.gc_copied_ius as f64, ""),
            ("rmw_reads", self.rmw_reads as f64, ""),
            ("buffer_wait_ns", self.buffer_wait_ns as f64, "ns"),
            ("buffer_used_bytes", self.buffer_used_bytes as f64, "B"),
            ("read_buffer_hit_ius", self.read_buffer_hit_ius as f64, ""),
            ("read_ahead_ius", self.read_ahead_ius as f64, ""),
        ];
        if let Some(t) = &self.thermal {
            figures.extend([
                ("temperature_c", t.temperature_c, "C"),
                ("max_temperature_c", t.max_temperature_c, "C"),
                (
                    "thermal_throttle_transitions",
                    t.thermal_throttle_transitions as f64,
                    "",
                ),
                ("thermal_throttle_time_s", t.thermal_throttle_time_s, ""),
            ]);
        }
        figures
    }
}

/// NVMe's composite temperature and thermal management counters, in °C and seconds of the
/// whole drive (as of the latest submission).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ThermalLog {
    pub temperature_c: f64,
    pub max_temperature_c: f64,
    pub thermal_throttling: bool,
    pub thermal_throttle_transitions: u64,
    pub thermal_throttle_time_s: f64,
}

// The precondition cache keeps each step's log (typed, field by field, every field listed so
// a field the log gains is in its encoding too).
flashlab_engine::impl_state!(default HealthLog { data_units_read, data_units_written, host_read_commands, host_write_commands, host_trim_commands, host_flush_commands, percentage_used, critical_warning, available_spare, available_spare_threshold, bad_block_reserve_blocks, bad_block_reserve_left_blocks, grown_bad_blocks, read_only, media_bytes_written, nand_bytes_written, erase_count_min, erase_count_avg, erase_count_max, power_off_retention_days, power_off_retention_temperature_c, read_retries, media_errors, refreshed_blocks, timed_workload_media_wear, timed_workload_host_reads_percent, timed_workload_minutes, free_blocks, write_amplification, slc_write_ius, slc_read_hits, slc_folded_ius, gc_copied_ius, rmw_reads, buffer_wait_ns, buffer_used_bytes, read_buffer_hit_ius, read_ahead_ius, thermal });
flashlab_engine::impl_state!(default ThermalLog { temperature_c, max_temperature_c, thermal_throttling, thermal_throttle_transitions, thermal_throttle_time_s });
