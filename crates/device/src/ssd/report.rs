//! What the drive reports about itself: its counters and NVMe-style health log, its power
//! (per command, per window), the memory it holds, and why it refuses writes once worn out.

use super::*;
use crate::health::{HealthLog, ThermalLog};
use flashlab_media::power::MAX_METER_WINDOWS;

impl Ssd {
    /// Charge a command's host transfer and the controller's active time it adds.
    pub(super) fn meter_command(&mut self, accepted_ns: u64, done_ns: u64, req: &IoRequest) {
        let p = &self.model.power;
        if matches!(req.kind, IoKind::Read | IoKind::Write) {
            let pj = req.len_bytes * p.host_pj_per_byte;
            self.host_pj += pj;
            self.host_meter.charge(accepted_ns, pj);
        }
        let from = accepted_ns.max(self.busy_until_ns);
        if done_ns > from {
            self.busy_until_ns = done_ns;
            // Spread over the metering windows the span crosses (usually one).
            let mut t = from;
            while t < done_ns {
                let end = ((t / METER_WINDOW_NS + 1) * METER_WINDOW_NS).min(done_ns);
                // µW × ns / 1000 = pJ.
                let pj = p.active_uw * (end - t) / 1_000;
                self.active_pj += pj;
                self.active_meter.charge(t, pj);
                t = end;
            }
        }
    }

    /// Average and peak power (watts) of the whole drive over the metering windows that lie
    /// within `[from_ns, until_ns)`, and the number of those windows (1 s each). Energy of
    /// a simulated slice is scaled to the whole drive.
    pub fn power_summary(&self, from_ns: u64, until_ns: u64) -> PowerSummary {
        let w = self.power_windows_w();
        let first = from_ns.div_ceil(METER_WINDOW_NS) as usize;
        let last = ((until_ns / METER_WINDOW_NS) as usize).min(w.len());
        let s = w.get(first..last).unwrap_or(&[]);
        PowerSummary {
            average_w: if s.is_empty() {
                0.0
            } else {
                s.iter().sum::<f64>() / s.len() as f64
            },
            peak_w: s.iter().copied().fold(0.0, f64::max),
            windows: s.len(),
        }
    }

    /// Whole-drive power per metering window from time 0 up to the end of known activity
    /// (the last window may be partial: its average is over its own length). As the meters
    /// keep at most [`MAX_METER_WINDOWS`] windows (later energy joins the last one), so does
    /// this: the last window then runs to the end, and a run of years of simulated time
    /// reports a bounded list instead of allocating one entry per second.
    fn power_windows_w(&self) -> Vec<f64> {
        let end = self.last_done_ns.max(self.media.all_idle_ns()).max(1);
        let n = (end.div_ceil(METER_WINDOW_NS) as usize).min(MAX_METER_WINDOWS);
        let factor = self.model.scale.die_factor;
        let media = self.media.energy().map(|(w, _)| w).unwrap_or(&[]);
        let host = self.host_meter.windows_pj();
        let active = self.active_meter.windows_pj();
        let idle_w = self.model.power.idle_uw as f64 * 1e-6;
        (0..n)
            .map(|i| {
                let len_ns = if i + 1 == n {
                    end - i as u64 * METER_WINDOW_NS
                } else {
                    METER_WINDOW_NS
                };
                let pj = (media.get(i).copied().unwrap_or(0) + host.get(i).copied().unwrap_or(0))
                    as f64
                    * factor
                    + active.get(i).copied().unwrap_or(0) as f64;
                idle_w + pj * 1e-12 / (len_ns as f64 * 1e-9)
            })
            .collect()
    }

    fn power_json(&self) -> serde_json::Value {
        let p = &self.model.power;
        let end = self.last_done_ns.max(self.media.all_idle_ns());
        let factor = self.model.scale.die_factor;
        let totals = self.media.energy().map(|(_, t)| t).unwrap_or_default();
        let j = |pj: u64| pj as f64 * 1e-12 * factor;
        let idle_j = p.idle_uw as f64 * 1e-6 * end as f64 * 1e-9;
        let parts = [
            j(totals.read_pj),
            j(totals.program_pj),
            j(totals.erase_pj),
            j(totals.channel_pj),
            j(self.host_pj),
            self.active_pj as f64 * 1e-12,
        ];
        let energy_j = idle_j + parts.iter().sum::<f64>();
        let windows = self.power_windows_w();
        json!({
            "state": p.state,
            "cap_w": p.cap_uw().map(|c| c as f64 * 1e-6),
            "cap_window_ns": flashlab_media::power::CAP_WINDOW_NS,
            "duration_ns": end,
            "energy_j": energy_j,
            "average_w": if end == 0 { 0.0 } else { energy_j / (end as f64 * 1e-9) },
            "peak_w": windows.iter().copied().fold(0.0, f64::max),
            "window_ns": METER_WINDOW_NS,
            "windows_w": windows,
            "energy_by_part_j": {
                "idle": idle_j,
                "nand_read": parts[0],
                "nand_program": parts[1],
                "nand_erase": parts[2],
                "nand_channel": parts[3],
                "host_transfer": parts[4],
                "controller_active": parts[5],
            },
        })
    }

    /// Estimated heap memory of the model (mapping tables per the FTL's layout, plus the
    /// device's own structures). A function of the drive's state alone, so that a drive
    /// loaded from a saved state reports what the same drive run to that point does: tables
    /// that grow are counted by length, and the operations scratch vector (its capacity is the
    /// largest command's operations so far, a few KiB) is left out.
    pub fn memory_bytes(&self) -> u64 {
        self.model.memory_bytes
            + (self.media.memory_bytes() + self.buffer.memory_bytes()) as u64
            // The pacing queue's ring is in the model's estimate (it decides the slice); its
            // per-block erase records are not.
            + (self.internal.memory_bytes() - self.internal.ring_bytes()) as u64
            + self.readbuf.memory_bytes() as u64
            // The controller's energy meters grow with simulated time (8 bytes per window).
            + (self.host_meter.memory_bytes() + self.active_meter.memory_bytes()) as u64
            // The aging clock of each block's data, and the blocks queued for refresh.
            + self.written_aging_ns.capacity() as u64 * 8
            + self.refresh_queue.len() as u64 * 4
    }

    /// Why the drive refuses writes: its blocks have failed beyond what the spare can take.
    pub(super) fn read_only_error(&self) -> DeviceError {
        let w = self.ftl.wear_state();
        DeviceError::ReadOnly {
            reason: format!(
                "{} blocks failed with wear (erase counts average {:.0} of {} rated P/E cycles); \
                 the bad-block reserve is used up and {} good native blocks are left, fewer than \
                 the {} that garbage collection needs beside the user data",
                w.retired_blocks,
                self.ftl.erase_count_summary().avg(),
                self.model.geometry.pe_cycles,
                w.good_native_blocks,
                w.min_native_blocks
            ),
        }
    }

    /// The drive sits unpowered for `days` at `storage_c` after a clean shutdown (NVMe's
    /// shutdown notification: everything acknowledged is on NAND). Its data ages as much as
    /// `days` at the retention's reference temperature scaled by Arrhenius's law; reads of it
    /// afterwards may need retries, and data past its retention time is lost (see
    /// `flashlab_media::retention`). The power-on clock does not move.
    pub fn power_off(&mut self, days: f64, storage_c: f64) {
        let r = &self.model.retention;
        let reference_days =
            days.max(0.0) / flashlab_media::retention::time_factor(r.reference_c, storage_c);
        self.aging_ns = self
            .aging_ns
            .saturating_add((reference_days * 86_400e9).min(u64::MAX as f64 / 2.0) as u64);
        // Powered on again, the firmware looks for aged data once the host leaves it idle; the
        // drive starts out at the temperature of the air around it.
        self.refresh_pending = true;
        self.media.cool();
        self.bg_done = false;
    }

    /// Reset the timed-workload indicators now (Intel's SMART EXECUTE OFFLINE IMMEDIATE
    /// subcommand 40h): the timer restarts, and wear and reads count from here.
    pub fn reset_timed_workload(&mut self) {
        self.timed = TimedWorkload {
            start_ns: self.clock_ns,
            erase_avg: self.ftl.erase_count_summary().avg(),
            read_commands: self.host.read_commands,
            write_commands: self.host.write_commands,
        };
    }

    /// The timed-workload indicators as the drive reports them: (E2h media wear in 1/1024ths
    /// of a percent of the rated P/E cycles, E3h host reads as a percentage of read and write
    /// commands, E4h whole minutes since the reset). E2h and E3h read 65535 (FFFFh) until the
    /// timer reaches 60 minutes. Minutes are the whole drive's (a slice's clock runs fast).
    pub fn timed_workload(&self) -> (u64, u64, u64) {
        const NOT_YET: u64 = 0xFFFF;
        let t = &self.timed;
        let s = &self.model.scale;
        let drive_ns =
            self.clock_ns.saturating_sub(t.start_ns) as f64 * s.capacity_factor / s.die_factor;
        let minutes = (drive_ns / 60e9) as u64;
        if minutes < 60 {
            return (NOT_YET, NOT_YET, minutes);
        }
        let pe = f64::from(self.model.geometry.pe_cycles);
        let worn = (self.ftl.erase_count_summary().avg() - t.erase_avg).max(0.0);
        let wear = (worn / pe * 100.0 * 1024.0) as u64;
        let reads = self.host.read_commands.saturating_sub(t.read_commands);
        let writes = self.host.write_commands.saturating_sub(t.write_commands);
        let reads_percent = (reads * 100).checked_div(reads + writes).unwrap_or(0);
        (wear, reads_percent, minutes)
    }

    /// Map cache counters (None: the whole map is in DRAM).
    pub fn map_cache_counters(&self) -> Option<crate::MapCacheCounters> {
        self.mapcache.as_ref().map(|c| c.counters)
    }

    /// The NVMe-style health log now.
    pub fn health_log(&self) -> HealthLog {
        let c = self.ftl.counters();
        let wa = c.write_amplification();
        let erases = self.ftl.erase_count_summary();
        let pe = self.model.geometry.pe_cycles as f64;
        let percentage_used = ((erases.avg() / pe * 100.0).floor() as u64).min(255);
        // Data is only as safe as its most worn block.
        let storage_c = self.model.retention_storage_c;
        let timed = self.timed_workload();
        let wear = self.ftl.wear_state();
        let critical_warning = u8::from(wear.available_spare_percent < AVAILABLE_SPARE_THRESHOLD)
            | u8::from(wear.available_spare_percent == 0) << 2
            | u8::from(wear.read_only) << 3;
        let data_units = |bytes: u64| bytes.div_ceil(512).div_ceil(1000);
        HealthLog {
            data_units_read: data_units(self.host.bytes_read),
            data_units_written: data_units(self.host.bytes_written),
            host_read_commands: self.host.read_commands,
            host_write_commands: self.host.write_commands,
            host_trim_commands: self.host.trim_commands,
            host_flush_commands: self.host.flush_commands,
            percentage_used,
            critical_warning,
            available_spare: wear.available_spare_percent,
            available_spare_threshold: AVAILABLE_SPARE_THRESHOLD,
            bad_block_reserve_blocks: self.ftl.bad_blocks(),
            bad_block_reserve_left_blocks: wear.reserve_left_blocks,
            grown_bad_blocks: wear.retired_blocks,
            read_only: wear.read_only,
            media_bytes_written: self.media.counters().bytes_programmed,
            nand_bytes_written: c.nand_write_ius * self.model.iu_bytes,
            erase_count_min: erases.min,
            erase_count_avg: erases.avg(),
            erase_count_max: erases.max,
            power_off_retention_days: self
                .model
                .retention
                .days(f64::from(erases.max) / pe, storage_c),
            power_off_retention_temperature_c: storage_c,
            read_retries: self.read_retries,
            media_errors: self.media_errors,
            refreshed_blocks: self.refreshed_blocks,
            timed_workload_media_wear: timed.0,
            timed_workload_host_reads_percent: timed.1,
            timed_workload_minutes: timed.2,
            free_blocks: self.ftl.free_blocks(),
            write_amplification: wa,
            slc_write_ius: c.slc_write_ius,
            slc_read_hits: c.slc_read_hits,
            slc_folded_ius: c.slc_folded_ius,
            gc_copied_ius: c.gc_copied_ius,
            rmw_reads: c.rmw_reads,
            buffer_wait_ns: self.host.buffer_wait_ns,
            buffer_used_bytes: self.buffer.used_bytes(),
            read_buffer_hit_ius: self.host.read_buffer_hit_ius,
            read_ahead_ius: self.host.read_ahead_ius,
            thermal: self.media.thermal_state().map(|t| ThermalLog {
                temperature_c: t.temperature_c,
                max_temperature_c: t.max_temperature_c,
                thermal_throttling: t.throttled,
                thermal_throttle_transitions: t.throttle_transitions,
                thermal_throttle_time_s: t.throttled_ns * 1e-9,
            }),
        }
    }

    /// FTL counters, write amplification, the NVMe-style health log, scale and media activity.
    pub fn counters_json(&self) -> serde_json::Value {
        let c = self.ftl.counters();
        let m = self.media.counters();
        let mut j = json!({
            "device": self.model.name,
            "write_amplification": c.write_amplification(),
            "health": serde_json::to_value(self.health_log()).unwrap_or_default(),
            "ftl": {
                "host_read_ius": c.host_read_ius,
                "host_write_ius": c.host_write_ius,
                "host_trim_ius": c.host_trim_ius,
                "nand_read_pages": c.nand_read_pages,
                "nand_program_pages": c.nand_program_pages,
                "nand_write_ius": c.nand_write_ius,
                "erases": c.erases,
                "gc_copied_ius": c.gc_copied_ius,
                "rmw_reads": c.rmw_reads,
                "slc_write_ius": c.slc_write_ius,
                "slc_read_hits": c.slc_read_hits,
                "slc_folded_ius": c.slc_folded_ius,
                "wear_level_moved_ius": c.wear_level_moved_ius,
                "refreshed_ius": c.refreshed_ius,
                "compression_saved_ius": c.compression_saved_ius,
                "parity_program_pages": c.parity_program_pages,
                "stripe_slots_passed_over": c.stripe_slots_passed_over,
            },
            "media": {
                "reads": m.reads,
                "programs": m.programs,
                "erases": m.erases,
                "bytes_read": m.bytes_read,
                "bytes_programmed": m.bytes_programmed,
                "array_busy_ns": m.array_busy_ns,
                "channel_busy_ns": m.channel_busy_ns,
                "program_suspends": m.program_suspends,
                "erase_suspends": m.erase_suspends,
                // What host reads waited for before and after their array read, by cause:
                // the parts of each read's wait add up to the whole of it.
                "host_reads": m.host_reads,
                "host_read_waits": host_read_waits(&m),
                // Operations that joined another plane's of their die as one multi-plane
                // operation (die-level reads or programs only).
                "paired_reads": m.paired_reads,
                "paired_programs": m.paired_programs,
                "native_programs": m.native_programs,
                "paired_native_programs": m.paired_native_programs,
                // Internal work spread over host writes (see the pacing module).
                "internal_ops_held_peak": self.internal.peak_len(),
                "internal_ops_held": self.internal.held(),
                "host_waits_for_queued_erase": self.internal.forced_erases,
                // Queued operations those programs sent to the dies ahead of their turn.
                "ops_released_for_queued_erases": self.internal.ops_released_for_erases,
                "internal_pacing_overdue": self.internal.overdue,
            },
            "scale": {
                "capacity_factor": self.model.scale.capacity_factor,
                "die_factor": self.model.scale.die_factor,
                "note": self.model.scale.note,
            },
            "namespaces": self.ns_host.iter().enumerate().map(|(i, h)| json!({
                "name": format!("ns{}", i + 1),
                "capacity_bytes": self.model.namespace_bytes[i],
                "host_read_commands": h.read_commands,
                "host_write_commands": h.write_commands,
                "host_trim_commands": h.trim_commands,
                "host_flush_commands": h.flush_commands,
                "bytes_read": h.bytes_read,
                "bytes_written": h.bytes_written,
            })).collect::<Vec<_>>(),
            "power": self.power_json(),
            "memory_bytes": self.memory_bytes(),
        });
        if let (Some(c), Some(mc), Some(o)) =
            (&self.mapcache, self.model.map_cache, j.as_object_mut())
        {
            o.insert(
                "map_cache".to_string(),
                json!({
                    "translation_pages": mc.pages,
                    "slots": mc.slots,
                    "map_cache_hits": c.counters.hits,
                    "map_cache_misses": c.counters.misses,
                    "translation_reads": c.counters.translation_reads,
                    "translation_writes": c.counters.translation_writes,
                }),
            );
        }
        if let (Some(fdp), Some(o)) = (self.fdp_json(), j.as_object_mut()) {
            o.insert("fdp".to_string(), fdp);
        }
        if let (Some(z), Some(o)) = (self.zoned_json(), j.as_object_mut()) {
            o.insert("zns".to_string(), z);
        }
        j
    }

    /// NVMe's FDP logs as counters (only on a drive with FDP): the statistics log (HBMW,
    /// MBMW, MBE, bytes since format), each handle's usage and status, and the events.
    fn fdp_json(&self) -> Option<serde_json::Value> {
        let r = self.ftl.fdp_report()?;
        let c = self.ftl.counters();
        let iu = self.model.iu_bytes;
        let block = self.model.full.block_bytes();
        let lb = self.model.logical_block_bytes;
        let hbmw = c.host_write_ius * iu;
        let mbmw = c.nand_write_ius * iu;
        let ru_blocks = u64::from(r.ru_blocks);
        let handles: Vec<serde_json::Value> = r
            .usage
            .iter()
            .zip(&r.ru_available_ius)
            .enumerate()
            .map(|(pid, (u, &avail))| {
                json!({
                    "placement_id": pid,
                    "ruh_id": pid,
                    "attributes": if u.host_ius > 0 { "host_specified" } else { "unused" },
                    "host_bytes_written": u.host_ius * iu,
                    "gc_moved_out_bytes": u.relocated_ius * iu,
                    "gc_moved_in_bytes": u.relocated_in_ius * iu,
                    "reclaim_units_used": u.blocks_opened.div_ceil(ru_blocks),
                    "erased_bytes": u.blocks_erased * block,
                    "ruamw_blocks": avail * iu / lb,
                })
            })
            .collect();
        Some(json!({
            "handles": r.handles,
            "reclaim_groups": 1,
            "handle_type": r.handle_type.name(),
            "ru_bytes": ru_blocks * block,
            "hbmw": hbmw,
            "mbmw": mbmw,
            "mbe": c.erases * block,
            "dlwa": if hbmw == 0 { 0.0 } else { mbmw as f64 / hbmw as f64 },
            "shared_gc_bytes": r.shared_relocated_ius * iu,
            "ruh": handles,
            "events": {
                "ru_not_fully_written": r.events.ru_not_fully_written,
                "media_reallocated": r.events.media_reallocated,
            },
        }))
    }
}

/// The host reads' waits by cause: for each, the reads that waited for it and the time they
/// waited in all (ns).
fn host_read_waits(m: &flashlab_media::MediaCounters) -> serde_json::Value {
    let mut o = serde_json::Map::new();
    for (i, name) in flashlab_media::sched::WAIT_CAUSES.iter().enumerate() {
        o.insert(
            (*name).to_string(),
            json!({ "reads": m.host_reads_waiting[i], "ns": m.host_read_wait_ns[i] }),
        );
    }
    serde_json::Value::Object(o)
}
