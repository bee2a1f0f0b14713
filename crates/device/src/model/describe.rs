//! What `flashlab describe` shows: a drive's derived figures (capacities, spare, dies, media
//! and link bandwidth bounds, the model's settings), as text and as JSON.

use serde_json::json;

use super::*;

impl DeviceConfig {
    /// Derived figures as text.
    pub fn describe(&self) -> String {
        let m = match self.resolve() {
            Ok(m) => m,
            Err(e) => {
                return format!(
                    "{}: invalid: {} = {}: {}; valid: {}\n",
                    self.name, e.key, e.value, e.message, e.valid
                )
            }
        };
        let mut s = format!("{}\n", self.name);
        if !self.description.is_empty() {
            s.push_str(&format!("  {}\n", self.description));
        }
        let j = m.derived_json();
        let flat = |v: &serde_json::Value| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        for (section, body) in j.as_object().into_iter().flatten() {
            let Some(obj) = body.as_object() else {
                continue;
            };
            s.push_str(&format!("{section}:\n"));
            for (k, v) in obj {
                if let Some(text) = obj.get(&format!("{k}_text")) {
                    if k.ends_with("_text") {
                        continue;
                    }
                    // The value shows its unit, so a time's name drops it unless another
                    // key of the section has that name.
                    let name = match without_unit(k) {
                        short if obj.contains_key(short) => k.as_str(),
                        short => short,
                    };
                    s.push_str(&format!("  {:<34} {}\n", name, flat(text)));
                } else if !k.ends_with("_text") {
                    s.push_str(&format!("  {:<34} {}\n", k, flat(v)));
                }
            }
        }
        s
    }

    /// Derived figures as JSON (numbers in base units; `_text` twins for people).
    pub fn describe_json(&self) -> serde_json::Value {
        match self.resolve() {
            Ok(m) => {
                let mut v =
                    serde_json::json!({ "name": self.name, "description": self.description });
                if let (Some(o), Some(d)) = (v.as_object_mut(), m.derived_json().as_object()) {
                    for (k, x) in d {
                        o.insert(k.clone(), x.clone());
                    }
                }
                v
            }
            Err(e) => {
                serde_json::json!({ "name": self.name, "error": format!("{} = {}: {}; valid: {}", e.key, e.value, e.message, e.valid) })
            }
        }
    }
}

/// A time key's name without its unit suffix, for the line that shows its value with the
/// unit in words (`t_read_ns` beside "50 us" reads `t_read`); JSON keeps the full name.
fn without_unit(key: &str) -> &str {
    ["_ns", "_days"]
        .iter()
        .find_map(|unit| key.strip_suffix(unit))
        .unwrap_or(key)
}

/// A power-off retention time in days at `temperature_c`, with years or weeks for people.
fn retention_text(days: f64, temperature_c: f64) -> String {
    let (n, unit) = if days >= 365.0 {
        (days / 365.25, "years")
    } else {
        (days / 7.0, "weeks")
    };
    format!(
        "{} days ({n:.1} {unit}) at {} °C",
        trim_float(days),
        trim_float(temperature_c)
    )
}

impl Model {
    /// Media bandwidth bounds of a geometry: (read, program, SLC program) bytes/s, each the
    /// lesser of the array bound (parallel units × page / array time) and the channel bound.
    pub fn media_bounds(g: &NandGeometry, t: &CellTimings) -> (f64, f64, f64) {
        let units = if g.multi_plane { g.planes() } else { g.dies() } as f64;
        let page = g.page_bytes as f64;
        let channels = g.channels as f64 * g.channel_bytes_per_s as f64;
        let bound = |t_ns: u64| (units * page / (t_ns as f64 * 1e-9)).min(channels);
        (
            bound(t.t_read_ns),
            bound(t.t_prog_ns),
            bound(t.slc_t_prog_ns),
        )
    }

    /// The spare area garbage collection works with, as a share of what it is part of: the
    /// data capacity of the blocks not set aside for bad blocks (parity pages left out)
    /// beyond the user data, over that capacity.
    pub fn effective_spare_factor(&self) -> f64 {
        let good_data =
            (self.full.raw_bytes() - self.full_bad_bytes) as f64 * (1.0 - self.parity_share());
        (good_data - self.full_user_bytes as f64) / good_data
    }

    /// Die-level parity: the share of every block's pages that holds parity, out of both the
    /// capacity the spare area has and the program bandwidth data gets.
    fn parity_share(&self) -> f64 {
        let ppb = self.ftl.pages_per_block;
        f64::from(ppb - flashlab_ftl::data_pages(ppb, self.ftl.parity_stripe_pages))
            / f64::from(ppb)
    }

    /// The drive's raw bytes in native blocks that take data: the static SLC cache's blocks
    /// and those set aside for bad blocks left out.
    pub fn native_raw_bytes(&self) -> u64 {
        self.full.raw_bytes()
            - self.full_static_slc_bytes * u64::from(self.bits_per_cell)
            - self.full_bad_bytes
    }

    fn derived_json(&self) -> serde_json::Value {
        json!({
            "capacity": self.capacity_json(),
            "nand": self.nand_json(),
            "ftl": self.ftl_json(),
            "bandwidth": self.bandwidth_json(),
            "controller": self.controller_json(),
            "scheduler": self.scheduler_json(),
            "slc_cache": self.slc_cache_json(),
            "power": self.power_json(),
            "sim": self.sim_json(),
        })
    }

    /// What the drive holds: raw, user and spare capacity.
    fn capacity_json(&self) -> serde_json::Value {
        let raw = self.full.raw_bytes();
        let bad = self.full_bad_bytes;
        let spare = (raw as f64 - self.full_user_bytes as f64) / raw as f64;
        let parity_share = self.parity_share();
        let parity_bytes = (raw as f64 * parity_share) as u64;
        let spare_after_parity =
            (raw as f64 - parity_bytes as f64 - self.full_user_bytes as f64) / raw as f64;
        let spare_effective = self.effective_spare_factor();
        json!({
            "raw_bytes": raw, "raw_bytes_text": format_size(raw),
            "drive_user_bytes": self.drive_user_bytes, "drive_user_bytes_text": format_size(self.drive_user_bytes),
            "namespaces": self.full_namespace_bytes.len(),
            "namespace_bytes": self.full_namespace_bytes,
            "user_bytes": self.full_user_bytes, "user_bytes_text": format_size(self.full_user_bytes),
            "spare_factor": (spare * 10000.0).round() / 10000.0,
            "parity_bytes": parity_bytes, "parity_bytes_text": format_size(parity_bytes),
            "spare_factor_after_parity": (spare_after_parity * 10000.0).round() / 10000.0,
            "bad_block_reserve_bytes": bad, "bad_block_reserve_bytes_text": format_size(bad),
            "spare_factor_effective": (spare_effective * 10000.0).round() / 10000.0,
            "logical_block_bytes": self.logical_block_bytes,
        })
    }

    /// The NAND part: geometry, timings, wear and retention.
    fn nand_json(&self) -> serde_json::Value {
        let f = &self.full;
        let stored_at_rated = self.retention.days(1.0, self.retention_storage_c);
        json!({
            "cell": self.cell_name,
            "channels": f.channels,
            "dies": f.dies(),
            "planes": f.planes(),
            "blocks": f.blocks(),
            "page_bytes": f.page_bytes, "page_bytes_text": format_size(f.page_bytes),
            "block_bytes": f.block_bytes(), "block_bytes_text": format_size(f.block_bytes()),
            "t_read_ns": self.timings.t_read_ns, "t_read_ns_text": format_time(self.timings.t_read_ns),
            "t_prog_ns": self.timings.t_prog_ns, "t_prog_ns_text": format_time(self.timings.t_prog_ns),
            "t_erase_ns": self.timings.t_erase_ns, "t_erase_ns_text": format_time(self.timings.t_erase_ns),
            "slc_t_read_ns": self.timings.slc_t_read_ns, "slc_t_read_ns_text": format_time(self.timings.slc_t_read_ns),
            "slc_t_prog_ns": self.timings.slc_t_prog_ns, "slc_t_prog_ns_text": format_time(self.timings.slc_t_prog_ns),
            "pe_cycles": f.pe_cycles,
            "grown_bad_at_rated": self.ftl.wear_out.failed_at_rated,
            "grown_bad_shape": self.ftl.wear_out.shape,
            "retention_class": self.retention_class.name(),
            "retention_at_rated_days": self.retention.at_rated_days,
            "retention_at_rated_days_text": retention_text(self.retention.at_rated_days, self.retention.reference_c),
            "retention_at_tenth_rated_days": self.retention.at_tenth_rated_days,
            "retention_at_tenth_rated_days_text": retention_text(self.retention.at_tenth_rated_days, self.retention.reference_c),
            "retention_temperature_c": self.retention_storage_c,
            "retention_at_rated_stored_days": stored_at_rated,
            "retention_at_rated_stored_days_text": retention_text(stored_at_rated, self.retention_storage_c),
            "multi_plane": f.multi_plane,
            "independent_plane_reads": f.independent_plane_reads,
            "independent_plane_programs": f.independent_plane_programs,
        })
    }

    /// The mapping: its unit, GC and wear-levelling settings.
    fn ftl_json(&self) -> serde_json::Value {
        // A compressing drive maps granules of its host IU.
        let unit = self.compression_unit_bytes.unwrap_or(self.iu_bytes);
        let granules_per_iu = (unit / self.iu_bytes) as u32;
        json!({
            "iu_bytes": unit, "iu_bytes_text": format_size(unit),
            "user_ius": self.full_user_bytes / unit,
            "ius_per_page": self.ftl.ius_per_page / granules_per_iu,
            "compression_granule_bytes": self.compression_unit_bytes.map(|_| self.iu_bytes),
            "compression_granule_bytes_text": self.compression_unit_bytes.map_or("no compression".to_string(), |_| format!("{} ({granules_per_iu} per IU, mapped one by one)", format_size(self.iu_bytes))),
            "gc_policy": format!("{:?}", self.ftl.gc.policy).to_lowercase(),
            "gc_unit": format!("{:?}", self.ftl.gc.unit).to_lowercase(),
            "gc_foreground_free_blocks": self.ftl.gc.foreground_free_blocks,
            "gc_background_free_blocks": self.ftl.gc.background_free_blocks,
            "gc_background_busy_share": self.gc_busy_share,
            "host_allocation": self.host_allocation,
            "wear_level_threshold": self.ftl.wear_level_threshold,
            "parity_stripe_pages": self.ftl.parity_stripe_pages,
        })
    }

    /// Bandwidth bounds of the media, the channels and the host link.
    fn bandwidth_json(&self) -> serde_json::Value {
        let f = &self.full;
        let parity_share = self.parity_share();
        let (rd, pr, slc_pr) = Self::media_bounds(f, &self.timings);
        let channel_bound = f.channels as f64 * f.channel_bytes_per_s as f64;
        // Sequential bounds: media, host link and the controller's data path, the least.
        let ctl = &self.full_shared.controller;
        let link = self.full_shared.link_bytes_per_s as f64;
        let path = |d: usize| ctl.data_bytes_per_s[d].map_or(f64::INFINITY, |b| b as f64);
        let read_bound = rd.min(link).min(path(1));
        let write_bound = (pr * (1.0 - parity_share)).min(link).min(path(0));
        json!({
            "channel_bytes_per_s": channel_bound, "channel_bytes_per_s_text": rate(channel_bound),
            "media_read_bytes_per_s": rd, "media_read_bytes_per_s_text": rate(rd),
            "media_program_bytes_per_s": pr, "media_program_bytes_per_s_text": rate(pr),
            "media_slc_program_bytes_per_s": slc_pr, "media_slc_program_bytes_per_s_text": rate(slc_pr),
            "link": self.link.to_string(),
            "link_raw_bytes_per_s": self.full_shared.link_raw_bytes_per_s, "link_raw_bytes_per_s_text": rate(self.full_shared.link_raw_bytes_per_s as f64),
            "link_bytes_per_s": self.full_shared.link_bytes_per_s, "link_bytes_per_s_text": rate(self.full_shared.link_bytes_per_s as f64),
            "seq_read_bound_bytes_per_s": read_bound, "seq_read_bound_bytes_per_s_text": rate(read_bound),
            "seq_write_bound_bytes_per_s": write_bound, "seq_write_bound_bytes_per_s_text": rate(write_bound),
        })
    }

    /// The controller: command rate, data path, cores, buffers and map.
    fn controller_json(&self) -> serde_json::Value {
        let ctl = &self.full_shared.controller;
        let mut v = json!({
            "command_overhead_ns": self.command_overhead_ns, "command_overhead_ns_text": format_time(self.command_overhead_ns),
            "max_iops": self.full_shared.max_iops,
            "queue_depth": self.full_shared.queue_depth,
            "read_bandwidth_bytes_per_s": ctl.data_bytes_per_s[1], "read_bandwidth_bytes_per_s_text": ctl.data_bytes_per_s[1].map_or("unlimited".to_string(), |b| rate(b as f64)),
            "write_bandwidth_bytes_per_s": ctl.data_bytes_per_s[0], "write_bandwidth_bytes_per_s_text": ctl.data_bytes_per_s[0].map_or("unlimited".to_string(), |b| rate(b as f64)),
            "read_cpu_ns": ctl.read_cpu_ns, "read_cpu_ns_text": format_time(ctl.read_cpu_ns),
            "write_cpu_ns": ctl.write_cpu_ns, "write_cpu_ns_text": format_time(ctl.write_cpu_ns),
            "relocation_cpu_ns": ctl.relocation_cpu_ns, "relocation_cpu_ns_text": format_time(ctl.relocation_cpu_ns),
            "cores": ctl.cores,
            "buffer_bytes": self.full_shared.buffer_bytes, "buffer_bytes_text": format_size(self.full_shared.buffer_bytes),
            "read_buffer_bytes": self.full_shared.read_buffer_bytes, "read_buffer_bytes_text": format_size(self.full_shared.read_buffer_bytes),
            "read_ahead_bytes": self.read_ahead_bytes, "read_ahead_bytes_text": format_size(self.read_ahead_bytes),
            "map_bytes": self.full_user_bytes / self.iu_bytes * MAP_ENTRY_BYTES, "map_bytes_text": format_size(self.full_user_bytes / self.iu_bytes * MAP_ENTRY_BYTES),
            "map_cache_bytes": self.map_cache.map(|m| m.full_cache_bytes), "map_cache_bytes_text": self.map_cache.map_or("the whole map".to_string(), |m| format!("{} ({:.1}% of the map, paged)", format_size(m.full_cache_bytes), m.full_cache_bytes as f64 * 100.0 / m.full_map_bytes as f64)),
            "plp": self.plp,
        });
        // Shown only where set, so drives without it describe as before.
        if let (Some(b), Some(o)) = (ctl.native_decode_bytes_per_s, v.as_object_mut()) {
            o.insert("native_decode_bytes_per_s".into(), b.into());
            o.insert(
                "native_decode_bytes_per_s_text".into(),
                rate(b as f64).into(),
            );
        }
        v
    }

    /// The die scheduler: read priority and suspends.
    fn scheduler_json(&self) -> serde_json::Value {
        json!({
            "read_priority": self.scheduler.read_priority,
            "program_suspend": self.scheduler.program_suspend,
            "erase_suspend": self.scheduler.erase_suspend,
            "suspend_latency_ns": self.scheduler.suspend_latency_ns, "suspend_latency_ns_text": format_time(self.scheduler.suspend_latency_ns),
            "resume_overhead_ns": self.scheduler.resume_overhead_ns, "resume_overhead_ns_text": format_time(self.scheduler.resume_overhead_ns),
            "max_suspends_per_op": self.scheduler.max_suspends_per_op,
        })
    }

    /// The SLC cache, static and dynamic.
    fn slc_cache_json(&self) -> serde_json::Value {
        let full_static = self.full_static_slc_bytes;
        let native = self.native_raw_bytes();
        let dyn_slc = if self.ftl.slc.dynamic {
            (native as f64 * self.full_dynamic_slc_fraction / self.bits_per_cell as f64) as u64
        } else {
            0
        };
        json!({
            "static_bytes": full_static, "static_bytes_text": format_size(full_static),
            "dynamic": self.ftl.slc.dynamic,
            "dynamic_max_bytes": dyn_slc, "dynamic_max_bytes_text": format!("{} (empty drive)", format_size(dyn_slc)),
        })
    }

    /// The power model and, if any, the thermal model.
    fn power_json(&self) -> serde_json::Value {
        json!({
            "read_energy_pj": self.power.energy.read_pj,
            "program_energy_pj": self.power.energy.program_pj,
            "erase_energy_pj": self.power.energy.erase_pj,
            "slc_read_energy_pj": self.power.energy.slc_read_pj,
            "slc_program_energy_pj": self.power.energy.slc_program_pj,
            "channel_energy_pj_per_byte": self.power.energy.channel_pj_per_byte,
            "host_energy_pj_per_byte": self.power.host_pj_per_byte,
            "active_power_w": self.power.active_uw as f64 * 1e-6,
            "idle_power_w": self.power.idle_uw as f64 * 1e-6,
            "states_cap_w": self.power.states_uw.iter().map(|c| c.map(|u| u as f64 * 1e-6)).collect::<Vec<_>>(),
            "state": self.power.state,
            // The thermal model (null: none): its parameters, the steady temperature with
            // the controller busy and the media idle, and the throttled power.
            "thermal_resistance_c_per_w": self.power.thermal.map(|(t, _)| t.resistance_c_per_w),
            "thermal_time_constant_s": self.power.thermal.map(|(t, _)| t.time_constant_ns / 1e9),
            "ambient_c": self.power.thermal.map(|(t, _)| t.ambient_c),
            "controller_busy_temperature_c": self.power.thermal.map(|(t, _)| t.ambient_c + t.resistance_c_per_w * t.base_w),
            "throttle_c": self.power.thermal.map(|(t, _)| t.throttle_c),
            "resume_c": self.power.thermal.map(|(t, _)| t.resume_c),
            "throttle_power_w": self.power.thermal.map(|(t, media_uw)| t.base_w + media_uw as f64 * 1e-6),
        })
    }

    /// The simulated slice and what it costs in memory.
    fn sim_json(&self) -> serde_json::Value {
        let (srd, spr, _) = Self::media_bounds(&self.geometry, &self.timings);
        json!({
            "capacity_factor": self.scale.capacity_factor,
            "die_factor": self.scale.die_factor,
            "simulated_user_bytes": self.user_bytes, "simulated_user_bytes_text": format_size(self.user_bytes),
            "simulated_media_read_bytes_per_s": srd, "simulated_media_read_bytes_per_s_text": rate(srd),
            "simulated_media_program_bytes_per_s": spr, "simulated_media_program_bytes_per_s_text": rate(spr),
            "simulated_link_bytes_per_s": self.link_bytes_per_s, "simulated_link_bytes_per_s_text": rate(self.link_bytes_per_s as f64),
            "simulated_max_iops": self.max_iops,
            "simulated_queue_depth": self.queue_depth,
            // What `run`, `fio`, sweeps and a suite's compressed steps write through
            // (`compressed_buffer_bytes`), and what windows that keep the drive's time do.
            "simulated_run_buffer_bytes": self.compressed_buffer_bytes, "simulated_run_buffer_bytes_text": format_size(self.compressed_buffer_bytes),
            "simulated_buffer_bytes": self.buffer_bytes, "simulated_buffer_bytes_text": format_size(self.buffer_bytes),
            "simulated_read_buffer_bytes": self.read_buffer_bytes, "simulated_read_buffer_bytes_text": format_size(self.read_buffer_bytes),
            "simulated_map_cache_pages": self.map_cache.map(|m| m.slots),
            "simulated_translation_pages": self.map_cache.map(|m| m.pages),
            "memory_bytes": self.memory_bytes, "memory_bytes_text": format_size(self.memory_bytes),
            "max_memory_bytes": self.max_memory_bytes, "max_memory_bytes_text": format_size(self.max_memory_bytes),
            "note": self.scale.note,
        })
    }
}

/// A rate in bytes per second, in decimal units.
fn rate(v: f64) -> String {
    format_decimal(v, "B/s")
}

#[cfg(test)]
mod tests {
    use super::without_unit;

    #[test]
    fn a_time_shown_with_its_unit_in_words_drops_the_unit_suffix() {
        assert_eq!(without_unit("t_read_ns"), "t_read");
        assert_eq!(
            without_unit("retention_at_rated_days"),
            "retention_at_rated"
        );
        assert_eq!(without_unit("user_bytes"), "user_bytes");
        assert_eq!(without_unit("spare_factor"), "spare_factor");
    }

    /// A run on a slice writes through the buffer's capacity share: `describe` shows it.
    #[test]
    fn the_sim_section_shows_the_buffer_a_run_writes_through() {
        let sets = vec![("sim.scale".to_string(), "0.25".to_string())];
        let c = crate::load_device_config("generic-tlc-256gb", &sets).unwrap();
        let m = c.resolve().unwrap();
        let sim = &c.describe_json()["sim"];
        assert_eq!(sim["simulated_run_buffer_bytes"], m.compressed_buffer_bytes);
        assert_eq!(sim["simulated_buffer_bytes"], m.buffer_bytes);
        assert!(m.compressed_buffer_bytes < m.buffer_bytes);
    }
}
