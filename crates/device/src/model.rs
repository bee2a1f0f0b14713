//! From a description to the numbers the simulator uses: validated geometry and timings,
//! the simulated slice (scale), the FTL configuration and the derived figures of `describe`.

use flashlab_ftl::{FtlConfig, GcConfig, SlcConfig, VictimPolicy};
use flashlab_media::{CellTimings, NandGeometry};

use crate::config::{DeviceConfig, GcPolicy};
use crate::link::{LinkKind, LINK_KINDS};
use crate::units::{format_decimal, format_size, format_time};
use crate::values::{size_text, ScaleSetting};

/// A value that is out of range or inconsistent with another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// Dotted key ("nand.channels").
    pub key: String,
    pub value: String,
    pub message: String,
    pub valid: String,
}

fn key_err(key: &str, value: impl ToString, message: &str, valid: impl ToString) -> KeyError {
    KeyError {
        key: key.to_string(),
        value: value.to_string(),
        message: message.to_string(),
        valid: valid.to_string(),
    }
}

fn range_u32(key: &str, v: u32, lo: u32, hi: u32) -> Result<u32, KeyError> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(key_err(key, v, "out of range", format!("{lo} to {hi}")))
    }
}

fn fraction(key: &str, v: f64, lo_open: bool, lo: f64, hi: f64) -> Result<f64, KeyError> {
    let ok = v.is_finite() && if lo_open { v > lo } else { v >= lo } && v <= hi;
    if ok {
        Ok(v)
    } else {
        let l = if lo_open { "(" } else { "[" };
        Err(key_err(key, v, "out of range", format!("{l}{lo}, {hi}]")))
    }
}

/// How the simulated drive relates to the described one.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleInfo {
    /// Full capacity / simulated capacity (1.0 = full scale).
    pub capacity_factor: f64,
    /// Full die count / simulated die count (1.0 = every die simulated).
    pub die_factor: f64,
    pub note: String,
}

/// Bytes of model memory for a mapping of this size: L2P 4 B per user IU, P2L 4 B per raw IU,
/// ~32 B of per-block state.
pub fn memory_estimate_bytes(user_ius: u64, raw_ius: u64, blocks: u64) -> u64 {
    4 * user_ius + 4 * raw_ius + 32 * blocks
}

/// Everything the simulator needs, validated.
#[derive(Debug, Clone)]
pub struct Model {
    pub name: String,
    pub full: NandGeometry,
    /// The simulated slice (equal to `full` at full scale).
    pub geometry: NandGeometry,
    pub timings: CellTimings,
    pub bits_per_cell: u32,
    pub cell_name: &'static str,
    pub full_user_bytes: u64,
    pub user_bytes: u64,
    pub iu_bytes: u64,
    pub logical_block_bytes: u64,
    pub ftl: FtlConfig,
    pub static_slc_bytes: u64,
    pub link: LinkKind,
    pub link_raw_bytes_per_s: u64,
    pub link_bytes_per_s: u64,
    pub command_overhead_ns: u64,
    pub max_iops: u64,
    pub queue_depth: u32,
    pub buffer_bytes: u64,
    pub plp: bool,
    pub scale: ScaleInfo,
    pub memory_bytes: u64,
    pub max_memory_bytes: u64,
}

impl DeviceConfig {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Validate and derive the simulated drive.
    pub fn resolve(&self) -> Result<Model, KeyError> {
        let n = &self.nand;
        let cell = n.cell.cell_type();
        let bits = cell.bits_per_cell();
        if self.name.trim().is_empty() {
            return Err(key_err("name", "\"\"", "empty", "a non-empty name"));
        }
        let channels = range_u32("nand.channels", n.channels, 1, 64)?;
        let dpc = range_u32("nand.dies_per_channel", n.dies_per_channel, 1, 64)?;
        let planes = range_u32("nand.planes_per_die", n.planes_per_die, 1, 16)?;
        let bpp = range_u32("nand.blocks_per_plane", n.blocks_per_plane, 8, 1 << 20)?;
        let ppb = range_u32("nand.pages_per_block", n.pages_per_block, bits, 1 << 16)?;
        if ppb % bits != 0 {
            return Err(key_err(
                "nand.pages_per_block",
                ppb,
                "not a multiple of the bits per cell (an SLC-mode block holds pages/bits pages)",
                format!("a multiple of {bits}"),
            ));
        }
        let page = n.page_size.0;
        if !(2048..=(1 << 20)).contains(&page) || !page.is_multiple_of(512) {
            return Err(key_err(
                "nand.page_size",
                size_text(page),
                "out of range",
                "2KiB to 1MiB, a multiple of 512B",
            ));
        }
        if n.bus_width_bits != 8 && n.bus_width_bits != 16 {
            return Err(key_err(
                "nand.bus_width_bits",
                n.bus_width_bits,
                "unsupported",
                "8 or 16",
            ));
        }
        if n.channel_rate.0 < 1_000_000 {
            return Err(key_err(
                "nand.channel_rate",
                n.channel_rate.0,
                "too slow",
                "at least 1MT/s",
            ));
        }
        let d = cell.default_timings();
        let timings = CellTimings {
            t_read_ns: n.t_read.map_or(d.t_read_ns, |t| t.0),
            t_prog_ns: n.t_prog.map_or(d.t_prog_ns, |t| t.0),
            t_erase_ns: n.t_erase.map_or(d.t_erase_ns, |t| t.0),
            slc_t_read_ns: n.slc_t_read.map_or(d.slc_t_read_ns, |t| t.0),
            slc_t_prog_ns: n.slc_t_prog.map_or(d.slc_t_prog_ns, |t| t.0),
        };
        for (key, v) in [
            ("nand.t_read", timings.t_read_ns),
            ("nand.t_prog", timings.t_prog_ns),
            ("nand.t_erase", timings.t_erase_ns),
            ("nand.slc_t_read", timings.slc_t_read_ns),
            ("nand.slc_t_prog", timings.slc_t_prog_ns),
        ] {
            if !(1..=1_000_000_000).contains(&v) {
                return Err(key_err(key, format_time(v), "out of range", "1ns to 1s"));
            }
        }
        let pe_cycles = n.pe_cycles.unwrap_or(n.cell.default_pe_cycles());
        range_u32("nand.pe_cycles", pe_cycles, 1, 10_000_000)?;

        let iu = self.ftl.iu.0;
        if ![4096u64, 8192, 16384, 32768, 65536].contains(&iu)
            || iu > page
            || !page.is_multiple_of(iu)
        {
            return Err(key_err(
                "ftl.iu",
                size_text(iu),
                "unsupported or does not divide the page",
                format!(
                    "4KiB, 8KiB, 16KiB, 32KiB or 64KiB, at most the page size ({})",
                    size_text(page)
                ),
            ));
        }
        let lb = self.capacity.logical_block.0;
        if lb != 512 && lb != 4096 {
            return Err(key_err(
                "capacity.logical_block",
                size_text(lb),
                "unsupported",
                "512B or 4KiB",
            ));
        }
        let link = LinkKind::parse(&self.link.kind)
            .ok_or_else(|| key_err("link.kind", &self.link.kind, "unknown link", LINK_KINDS))?;
        let efficiency = fraction(
            "link.protocol_efficiency",
            self.link
                .protocol_efficiency
                .unwrap_or(link.default_efficiency()),
            true,
            0.0,
            1.0,
        )?;
        let queue_depth = self.controller.queue_depth.unwrap_or(match link {
            LinkKind::Sata { .. } => 32,
            LinkKind::Pcie { .. } => 1024,
        });
        range_u32(
            "controller.queue_depth",
            queue_depth,
            1,
            link.max_queue_depth(),
        )?;
        if self.controller.max_iops == 0 || self.controller.max_iops > 1_000_000_000 {
            return Err(key_err(
                "controller.max_iops",
                self.controller.max_iops,
                "out of range",
                "1 to 1000000000",
            ));
        }
        let dyn_fraction = fraction(
            "slc_cache.dynamic_max_fraction",
            self.slc_cache.dynamic_max_fraction,
            false,
            0.0,
            1.0,
        )?;
        let buffer = self.buffer.size.0;
        if buffer < 4 * page || buffer > (64 << 30) {
            return Err(key_err(
                "buffer.size",
                size_text(buffer),
                "out of range",
                format!("4 pages ({}) to 64GiB", size_text(4 * page)),
            ));
        }
        let max_memory = self.sim.max_memory.0;
        if max_memory < (16 << 20) {
            return Err(key_err(
                "sim.max_memory",
                size_text(max_memory),
                "too small",
                "at least 16MiB",
            ));
        }

        let full = NandGeometry {
            channels,
            dies_per_channel: dpc,
            planes_per_die: planes,
            blocks_per_plane: bpp,
            pages_per_block: ppb,
            page_bytes: page,
            channel_bytes_per_s: n.channel_rate.0 * n.bus_width_bits as u64 / 8,
            multi_plane: n.multi_plane,
            pe_cycles,
        };
        let block_bytes = full.block_bytes();
        let slc_block_bytes = block_bytes / bits as u64;
        let full_static_blocks = self.slc_cache.static_size.0.div_ceil(slc_block_bytes);
        if full_static_blocks >= full.blocks() / 2 {
            return Err(key_err(
                "slc_cache.static",
                size_text(self.slc_cache.static_size.0),
                "takes half the blocks or more",
                format!(
                    "less than {}",
                    format_size(full.blocks() / 2 * slc_block_bytes)
                ),
            ));
        }
        let native_raw = (full.blocks() - full_static_blocks) * block_bytes;
        let full_user = match (self.capacity.user, self.capacity.spare_factor) {
            (Some(_), Some(_)) => {
                return Err(key_err(
                    "capacity.spare_factor",
                    self.capacity.spare_factor.unwrap_or(0.0),
                    "given together with capacity.user",
                    "one of capacity.user or capacity.spare_factor",
                ))
            }
            (Some(u), None) => u.0,
            (None, s) => {
                let s = fraction("capacity.spare_factor", s.unwrap_or(0.07), false, 0.0, 0.9)?;
                (native_raw as f64 * (1.0 - s)) as u64
            }
        } / iu
            * iu;
        // The FTL needs free blocks to garbage-collect into: at least the foreground threshold
        // plus one open block per plane per stream.
        let min_spare_blocks = |planes: u64, fg: u64| fg + 3 * planes;
        let full_fg = self
            .ftl
            .gc_foreground_free_blocks
            .map_or(2 * full.planes() as u64, u64::from);
        let max_user = native_raw
            .saturating_sub(min_spare_blocks(full.planes() as u64, full_fg) * block_bytes);
        if full_user == 0 || full_user > max_user {
            return Err(key_err(
                if self.capacity.user.is_some() {
                    "capacity.user"
                } else {
                    "capacity.spare_factor"
                },
                self.capacity
                    .user
                    .map_or(format!("{:?}", self.capacity.spare_factor), |u| {
                        size_text(u.0)
                    }),
                "leaves too little spare area for garbage collection",
                format!(
                    "a user capacity from {} to {}",
                    size_text(iu),
                    format_size(max_user)
                ),
            ));
        }

        // Scale: which slice of the drive to simulate.
        let full_user_ius = full_user / iu;
        let full_raw_ius = full.raw_bytes() / iu;
        let full_mem = memory_estimate_bytes(full_user_ius, full_raw_ius, full.blocks());
        // Physical IU addresses are u32.
        let ppa_limit = (u32::MAX as u64 - 1) as f64 / full_raw_ius as f64;
        let want = match self.sim.scale {
            ScaleSetting::Auto => (max_memory as f64 / full_mem as f64)
                .min(ppa_limit)
                .min(1.0),
            ScaleSetting::Fraction(f) => {
                let f = fraction("sim.scale", f, true, 0.0, 1.0)?;
                if f > ppa_limit {
                    return Err(key_err(
                        "sim.scale",
                        f,
                        "the slice has more IUs than 32-bit addresses allow",
                        format!("at most {ppa_limit:.4}"),
                    ));
                }
                f
            }
        };
        let mut geometry = full;
        if want < 1.0 {
            let min_bpp = bpp.min(64);
            geometry.blocks_per_plane = ((bpp as f64 * want).floor() as u32).max(min_bpp);
            let left = want * bpp as f64 / geometry.blocks_per_plane as f64;
            if left < 1.0 {
                let dies = ((full.dies() as f64 * left).floor() as u32).max(1);
                if dies >= channels {
                    geometry.dies_per_channel = dies / channels;
                } else {
                    geometry.channels = dies;
                    geometry.dies_per_channel = 1;
                }
            }
        }
        let capacity_factor_raw = full.raw_bytes() as f64 / geometry.raw_bytes() as f64;
        let static_blocks = (full_static_blocks as f64 / capacity_factor_raw).ceil() as u64;
        let user_bytes = if geometry == full {
            full_user
        } else {
            ((full_user as f64 / capacity_factor_raw) as u64) / iu * iu
        };
        let sim_planes = geometry.planes();
        let fg = self.ftl.gc_foreground_free_blocks.unwrap_or(2 * sim_planes);
        let bg = self
            .ftl
            .gc_background_free_blocks
            .unwrap_or(4 * sim_planes)
            .max(fg);
        let sim_native = (geometry.blocks() - static_blocks) * block_bytes;
        if user_bytes + min_spare_blocks(sim_planes as u64, fg as u64) * block_bytes > sim_native {
            return Err(key_err(
                "ftl.gc_foreground_free_blocks",
                fg,
                "leaves too little spare area in the simulated slice",
                format!(
                    "less than {}",
                    (sim_native - user_bytes) / block_bytes - 3 * sim_planes as u64
                ),
            ));
        }
        if bg as u64 >= geometry.blocks() / 2 {
            return Err(key_err(
                "ftl.gc_background_free_blocks",
                bg,
                "out of range",
                format!("less than {}", geometry.blocks() / 2),
            ));
        }
        let user_ius = user_bytes / iu;
        let raw_ius = geometry.raw_bytes() / iu;
        let memory_bytes = memory_estimate_bytes(user_ius, raw_ius, geometry.blocks());
        let capacity_factor = full_user as f64 / user_bytes as f64;
        let die_factor = full.dies() as f64 / geometry.dies() as f64;
        let note = if geometry == full {
            "full scale".to_string()
        } else {
            format!(
                "simulating 1/{capacity_factor:.2} of the drive ({} of {} user capacity): {} of {} blocks per plane, {} of {} dies{}",
                format_size(user_bytes),
                format_size(full_user),
                geometry.blocks_per_plane,
                full.blocks_per_plane,
                geometry.dies(),
                full.dies(),
                if die_factor == 1.0 {
                    "; every die simulated, so bandwidth is at full size"
                } else {
                    "; fewer dies, so media bandwidth is lower than the full drive's"
                }
            )
        };
        let ftl = FtlConfig {
            dies: geometry.dies(),
            planes_per_die: planes,
            blocks_per_plane: geometry.blocks_per_plane,
            pages_per_block: ppb,
            ius_per_page: (page / iu) as u32,
            iu_bytes: iu as u32,
            bits_per_cell: bits,
            user_ius,
            gc: GcConfig {
                policy: match self.ftl.gc_policy {
                    GcPolicy::Greedy => VictimPolicy::Greedy,
                    GcPolicy::CostBenefit => VictimPolicy::CostBenefit,
                },
                foreground_free_blocks: fg,
                background_free_blocks: bg,
            },
            slc: SlcConfig {
                static_blocks: static_blocks as u32,
                dynamic: self.slc_cache.dynamic,
                dynamic_max_fraction: dyn_fraction,
            },
            wear_level_threshold: self.ftl.wear_level_threshold,
            power_loss_protection: self.buffer.plp,
            track_versions: false,
        };
        let link_raw = link.raw_bytes_per_s();
        Ok(Model {
            name: self.name.clone(),
            full,
            geometry,
            timings,
            bits_per_cell: bits,
            cell_name: cell.name(),
            full_user_bytes: full_user,
            user_bytes,
            iu_bytes: iu,
            logical_block_bytes: lb,
            ftl,
            static_slc_bytes: static_blocks * slc_block_bytes,
            link,
            link_raw_bytes_per_s: link_raw,
            link_bytes_per_s: (link_raw as f64 * efficiency) as u64,
            command_overhead_ns: self.controller.command_overhead.0,
            max_iops: self.controller.max_iops,
            queue_depth,
            buffer_bytes: buffer,
            plp: self.buffer.plp,
            scale: ScaleInfo {
                capacity_factor,
                die_factor,
                note,
            },
            memory_bytes,
            max_memory_bytes: max_memory,
        })
    }

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
                    s.push_str(&format!("  {:<34} {}\n", k, flat(text)));
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

    fn derived_json(&self) -> serde_json::Value {
        use serde_json::json;
        let f = &self.full;
        let raw = f.raw_bytes();
        let native = raw
            - (self.static_slc_bytes as f64 * self.scale.capacity_factor) as u64
                * self.bits_per_cell as u64;
        let spare = (raw as f64 - self.full_user_bytes as f64) / raw as f64;
        let (rd, pr, slc_pr) = Self::media_bounds(f, &self.timings);
        let (srd, spr, _) = Self::media_bounds(&self.geometry, &self.timings);
        let channel_bound = f.channels as f64 * f.channel_bytes_per_s as f64;
        let rate = |v: f64| format_decimal(v, "B/s");
        let dyn_slc = if self.ftl.slc.dynamic {
            (native as f64 * self.ftl.slc.dynamic_max_fraction / self.bits_per_cell as f64) as u64
        } else {
            0
        };
        let full_static = (self.static_slc_bytes as f64 * self.scale.capacity_factor) as u64;
        json!({
            "capacity": {
                "raw_bytes": raw, "raw_bytes_text": format_size(raw),
                "user_bytes": self.full_user_bytes, "user_bytes_text": format_size(self.full_user_bytes),
                "spare_factor": (spare * 10000.0).round() / 10000.0,
                "logical_block_bytes": self.logical_block_bytes,
            },
            "nand": {
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
                "multi_plane": f.multi_plane,
            },
            "ftl": {
                "iu_bytes": self.iu_bytes, "iu_bytes_text": format_size(self.iu_bytes),
                "user_ius": self.full_user_bytes / self.iu_bytes,
                "ius_per_page": self.ftl.ius_per_page,
                "gc_policy": format!("{:?}", self.ftl.gc.policy).to_lowercase(),
                "gc_foreground_free_blocks": self.ftl.gc.foreground_free_blocks,
                "gc_background_free_blocks": self.ftl.gc.background_free_blocks,
                "wear_level_threshold": self.ftl.wear_level_threshold,
            },
            "bandwidth": {
                "channel_bytes_per_s": channel_bound, "channel_bytes_per_s_text": rate(channel_bound),
                "media_read_bytes_per_s": rd, "media_read_bytes_per_s_text": rate(rd),
                "media_program_bytes_per_s": pr, "media_program_bytes_per_s_text": rate(pr),
                "media_slc_program_bytes_per_s": slc_pr, "media_slc_program_bytes_per_s_text": rate(slc_pr),
                "link": self.link.to_string(),
                "link_raw_bytes_per_s": self.link_raw_bytes_per_s, "link_raw_bytes_per_s_text": rate(self.link_raw_bytes_per_s as f64),
                "link_bytes_per_s": self.link_bytes_per_s, "link_bytes_per_s_text": rate(self.link_bytes_per_s as f64),
                "seq_read_bound_bytes_per_s": rd.min(self.link_bytes_per_s as f64), "seq_read_bound_bytes_per_s_text": rate(rd.min(self.link_bytes_per_s as f64)),
                "seq_write_bound_bytes_per_s": pr.min(self.link_bytes_per_s as f64), "seq_write_bound_bytes_per_s_text": rate(pr.min(self.link_bytes_per_s as f64)),
            },
            "controller": {
                "command_overhead_ns": self.command_overhead_ns, "command_overhead_ns_text": format_time(self.command_overhead_ns),
                "max_iops": self.max_iops,
                "queue_depth": self.queue_depth,
                "buffer_bytes": self.buffer_bytes, "buffer_bytes_text": format_size(self.buffer_bytes),
                "plp": self.plp,
            },
            "slc_cache": {
                "static_bytes": full_static, "static_bytes_text": format_size(full_static),
                "dynamic": self.ftl.slc.dynamic,
                "dynamic_max_bytes": dyn_slc, "dynamic_max_bytes_text": format!("{} (empty drive)", format_size(dyn_slc)),
            },
            "sim": {
                "capacity_factor": self.scale.capacity_factor,
                "die_factor": self.scale.die_factor,
                "simulated_user_bytes": self.user_bytes, "simulated_user_bytes_text": format_size(self.user_bytes),
                "simulated_media_read_bytes_per_s": srd, "simulated_media_read_bytes_per_s_text": rate(srd),
                "simulated_media_program_bytes_per_s": spr, "simulated_media_program_bytes_per_s_text": rate(spr),
                "memory_bytes": self.memory_bytes, "memory_bytes_text": format_size(self.memory_bytes),
                "max_memory_bytes": self.max_memory_bytes, "max_memory_bytes_text": format_size(self.max_memory_bytes),
                "note": self.scale.note,
            },
        })
    }
}
