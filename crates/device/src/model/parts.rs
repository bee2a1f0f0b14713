//! The checked parts of a device description that [`DeviceConfig::resolve`] assembles into a
//! [`Model`](super::Model): the NAND part, the host side (interface, controller, buffers,
//! scheduler, power), the capacity and the slice to simulate. Each check's error names its
//! key; they run in the order of the description's sections.

use flashlab_media::{CellTimings, NandGeometry, Retention, SchedulerConfig};

use super::slice::{bad_blocks_of, FtlSpares, Slice, SlicePlan};
use super::{fraction, key_err, memory_estimate_bytes, range_u32, KeyError, PowerModel};
use crate::config::{DeviceConfig, RetentionClass};
use crate::controller::{ControllerModel, MAX_CORES};
use crate::link::{LinkKind, LINK_KINDS};
use crate::readbuf::STREAMS;
use crate::reserve::{native_slc_streams, steady_held_blocks};
use crate::units::{format_size, format_time};
use crate::values::{size_text, ScaleSetting};

/// The NAND part at full size.
pub(super) struct NandParts {
    pub cell_name: &'static str,
    pub bits: u32,
    pub full: NandGeometry,
    pub timings: CellTimings,
    /// Share of native blocks set aside for bad blocks.
    pub bad_fraction: f64,
    pub grown_bad_at_rated: f64,
    pub grown_bad_shape: f64,
    pub retention: Retention,
    /// The power-off temperature retention is reported at, in °C.
    pub retention_storage_c: f64,
}

/// The host side of the whole drive, before any slice takes its share.
pub(super) struct HostParts {
    pub iu: u64,
    pub lb: u64,
    pub link: LinkKind,
    pub efficiency: f64,
    pub queue_depth: u32,
    pub full_controller: ControllerModel,
    pub gc_busy_share: f64,
    pub dyn_fraction: f64,
    pub buffer: u64,
    pub read_buffer: u64,
    pub read_ahead: u64,
    /// The smallest read buffer the read-ahead streams can work with.
    pub min_read_buffer: u64,
    pub scheduler: SchedulerConfig,
    pub power: PowerModel,
    pub max_memory: u64,
}

/// The whole drive's capacity: what its blocks hold and how much of it the host sees.
pub(super) struct CapacityParts {
    pub block_bytes: u64,
    pub slc_block_bytes: u64,
    pub full_static_blocks: u64,
    pub full_bad_blocks: u64,
    pub full_native_blocks: u64,
    pub parity_stripe: u32,
    /// IUs of a block that hold data (parity pages left out).
    pub data_ipb: u64,
    pub spares: FtlSpares,
    /// The user capacity before namespaces take their part.
    pub drive_user: u64,
    /// Namespace sizes (empty: one namespace of the whole user capacity).
    pub full_namespaces: Vec<u64>,
    /// What the FTL maps: the user capacity, or the namespaces' sum.
    pub full_user: u64,
}

impl DeviceConfig {
    /// Free blocks at or below which foreground GC runs on `units` (die, plane) units.
    pub(super) fn fg_for(&self, units: u64) -> u64 {
        self.ftl
            .gc_foreground_free_blocks
            .map_or(2 * units, u64::from)
    }

    pub(super) fn nand_parts(&self) -> Result<NandParts, KeyError> {
        let n = &self.nand;
        let cell = n.cell.cell_type();
        let bits = cell.bits_per_cell();
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
        let timings = self.nand_timings(cell)?;
        let pe_cycles = n.pe_cycles.unwrap_or(n.cell.default_pe_cycles());
        range_u32("nand.pe_cycles", pe_cycles, 1, 10_000_000)?;
        let bad_fraction = fraction(
            "nand.bad_block_reserve",
            n.bad_block_reserve,
            false,
            0.0,
            0.2,
        )?;
        let grown_bad_at_rated = fraction(
            "nand.grown_bad_at_rated",
            n.grown_bad_at_rated,
            false,
            0.0,
            0.5,
        )?;
        let grown_bad_shape =
            fraction("nand.grown_bad_shape", n.grown_bad_shape, false, 0.5, 10.0)?;
        let full = NandGeometry {
            channels,
            dies_per_channel: dpc,
            planes_per_die: planes,
            blocks_per_plane: bpp,
            pages_per_block: ppb,
            page_bytes: page,
            channel_bytes_per_s: n.channel_rate.0 * n.bus_width_bits as u64 / 8,
            multi_plane: n.multi_plane,
            independent_plane_reads: n.independent_plane_reads,
            independent_plane_programs: n.independent_plane_programs,
            pe_cycles,
        };
        let (retention, storage_c) = self.retention_parts()?;
        Ok(NandParts {
            retention,
            retention_storage_c: storage_c,
            cell_name: cell.name(),
            bits,
            full,
            timings,
            bad_fraction,
            grown_bad_at_rated,
            grown_bad_shape,
        })
    }

    /// The cell's timings (the cell type's defaults where a key is unset), each in range.
    fn nand_timings(&self, cell: flashlab_media::CellType) -> Result<CellTimings, KeyError> {
        let n = &self.nand;
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
        Ok(timings)
    }

    /// Data retention (the class's figures where a key is unset) and the temperature data
    /// is stored at, each in range.
    fn retention_parts(&self) -> Result<(Retention, f64), KeyError> {
        let n = &self.nand;
        let class = match n.retention_class {
            RetentionClass::Client => Retention::CLIENT,
            RetentionClass::Enterprise => Retention::ENTERPRISE,
        };
        let at_rated_days = n.retention_at_rated_days.unwrap_or(class.at_rated_days);
        if !(0.01..=100_000.0).contains(&at_rated_days) {
            return Err(key_err(
                "nand.retention_at_rated_days",
                at_rated_days,
                "out of range",
                "0.01 to 100000 days",
            ));
        }
        let at_tenth_rated_days = n.retention_at_tenth_rated_days;
        if !(at_rated_days..=1_000_000.0).contains(&at_tenth_rated_days) {
            return Err(key_err(
                "nand.retention_at_tenth_rated_days",
                at_tenth_rated_days,
                "retention cannot grow with wear",
                format!("{at_rated_days} (nand.retention_at_rated_days) to 1000000 days"),
            ));
        }
        let storage_c = n.retention_temperature_c.unwrap_or(class.reference_c);
        if !(-40.0..=125.0).contains(&storage_c) {
            return Err(key_err(
                "nand.retention_temperature_c",
                storage_c,
                "out of range",
                "-40 to 125 (°C)",
            ));
        }
        let retention = Retention {
            at_rated_days,
            at_tenth_rated_days,
            reference_c: class.reference_c,
        };
        Ok((retention, storage_c))
    }

    pub(super) fn host_parts(
        &self,
        page: u64,
        timings: &CellTimings,
    ) -> Result<HostParts, KeyError> {
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
        let full_controller = self.controller_parts()?;
        let gc_busy_share = fraction(
            "ftl.gc_background_busy_share",
            self.ftl.gc_background_busy_share,
            false,
            0.0,
            1.0,
        )?;
        let dyn_fraction = fraction(
            "slc_cache.dynamic_max_fraction",
            self.slc_cache.dynamic_max_fraction,
            false,
            0.0,
            1.0,
        )?;
        let (buffer, read_buffer, read_ahead, min_read_buffer) = self.buffer_parts(page)?;
        let scheduler = self.scheduler_parts()?;
        let power = self.power_model(timings)?;
        let max_memory = self.sim.max_memory.0;
        if max_memory < (16 << 20) {
            return Err(key_err(
                "sim.max_memory",
                size_text(max_memory),
                "too small",
                "at least 16MiB",
            ));
        }
        Ok(HostParts {
            iu,
            lb,
            link,
            efficiency,
            queue_depth,
            full_controller,
            gc_busy_share,
            dyn_fraction,
            buffer,
            read_buffer,
            read_ahead,
            min_read_buffer,
            scheduler,
            power,
            max_memory,
        })
    }

    /// The controller's cores, data path and CPU time per command, at full size.
    fn controller_parts(&self) -> Result<ControllerModel, KeyError> {
        let ctl = &self.controller;
        range_u32("controller.cores", ctl.cores, 1, MAX_CORES)?;
        for (key, bw) in [
            ("controller.read_bandwidth", ctl.read_bandwidth),
            ("controller.write_bandwidth", ctl.write_bandwidth),
            (
                "controller.native_decode_bandwidth",
                ctl.native_decode_bandwidth,
            ),
        ] {
            if bw.is_some_and(|b| !(1_000..=1_000_000_000_000).contains(&b.0)) {
                return Err(key_err(
                    key,
                    bw.map_or(0, |b| b.0),
                    "out of range",
                    "1kB/s to 1TB/s, or absent (unlimited)",
                ));
            }
        }
        for (key, t) in [
            ("controller.read_cpu", ctl.read_cpu),
            ("controller.write_cpu", ctl.write_cpu),
            ("controller.relocation_cpu", ctl.relocation_cpu),
        ] {
            if t.0 > 1_000_000_000 {
                return Err(key_err(key, format_time(t.0), "out of range", "0 to 1s"));
            }
        }
        Ok(ControllerModel {
            data_bytes_per_s: [
                ctl.write_bandwidth.map(|b| b.0),
                ctl.read_bandwidth.map(|b| b.0),
            ],
            native_decode_bytes_per_s: ctl.native_decode_bandwidth.map(|b| b.0),
            read_cpu_ns: ctl.read_cpu.0,
            write_cpu_ns: ctl.write_cpu.0,
            relocation_cpu_ns: ctl.relocation_cpu.0,
            cores: ctl.cores,
            // Set with the geometry (`DeviceConfig::resolve`).
            relocation_allowance_ius: 0,
        })
    }

    /// The write buffer, the read buffer and the read-ahead window (with the smallest read
    /// buffer its streams can work with), in bytes.
    fn buffer_parts(&self, page: u64) -> Result<(u64, u64, u64, u64), KeyError> {
        let ctl = &self.controller;
        let buffer = self.buffer.size.0;
        if buffer < 4 * page || buffer > (64 << 30) {
            return Err(key_err(
                "buffer.size",
                size_text(buffer),
                "out of range",
                format!("4 pages ({}) to 64GiB", size_text(4 * page)),
            ));
        }
        let read_buffer = ctl.read_buffer.0;
        let read_ahead = ctl.read_ahead.0;
        // The read buffer's bound over the streams' windows: a larger window fits no buffer.
        let max_read_ahead = (64u64 << 30) / (2 * STREAMS as u64);
        if read_ahead > max_read_ahead {
            return Err(key_err(
                "controller.read_ahead",
                size_text(read_ahead),
                "out of range",
                format!(
                    "0B (off) to {} (a 64GiB read buffer over 2 x {STREAMS} streams)",
                    size_text(max_read_ahead)
                ),
            ));
        }
        // Each stream keeps its window and the half window behind it; a smaller buffer would
        // evict read-ahead data before the host reads it.
        let min_read_buffer = 2 * STREAMS as u64 * read_ahead;
        if read_buffer > (64 << 30) || (read_buffer > 0 && read_buffer < min_read_buffer) {
            return Err(key_err(
                "controller.read_buffer",
                size_text(read_buffer),
                "out of range",
                format!(
                    "0B (off) or {} (2 x {STREAMS} streams x controller.read_ahead) to 64GiB",
                    size_text(min_read_buffer.max(1))
                ),
            ));
        }
        if read_ahead > 0 && read_buffer == 0 {
            return Err(key_err(
                "controller.read_ahead",
                size_text(read_ahead),
                "read-ahead needs a read buffer to hold its data",
                "0B, or a controller.read_buffer of at least 2 x 4 x read_ahead",
            ));
        }
        Ok((buffer, read_buffer, read_ahead, min_read_buffer))
    }

    /// The die scheduler: read priority and program and erase suspends.
    fn scheduler_parts(&self) -> Result<SchedulerConfig, KeyError> {
        let n = &self.nand;
        let sc = &self.scheduler;
        range_u32(
            "scheduler.max_suspends_per_op",
            sc.max_suspends_per_op,
            1,
            255,
        )?;
        for (key, v) in [
            ("scheduler.suspend_latency", sc.suspend_latency.0),
            ("scheduler.resume_overhead", sc.resume_overhead.0),
            ("scheduler.program_suspend_step", sc.program_suspend_step.0),
            ("scheduler.erase_suspend_step", sc.erase_suspend_step.0),
        ] {
            if v > 10_000_000 {
                return Err(key_err(key, format_time(v), "out of range", "0ns to 10ms"));
            }
        }
        let scheduler = SchedulerConfig {
            read_priority: sc.read_priority,
            program_suspend: sc.program_suspend,
            erase_suspend: sc.erase_suspend,
            suspend_latency_ns: sc.suspend_latency.0,
            resume_overhead_ns: sc.resume_overhead.0,
            max_suspends_per_op: sc.max_suspends_per_op,
            program_suspend_step_ns: sc.program_suspend_step.0,
            erase_suspend_step_ns: sc.erase_suspend_step.0,
            suspend_budget: sc.suspend_budget,
        };
        if n.multi_plane
            && !n.independent_plane_reads
            && n.independent_plane_programs
            && scheduler.reorders()
        {
            // With die-wide reads a reordering scheduler keeps one queue per die, which
            // cannot let the die's planes program on their own.
            return Err(key_err(
                "nand.independent_plane_programs",
                "true",
                "not supported with nand.independent_plane_reads = false and \
                 scheduler.read_priority or a suspend",
                "false, or independent plane reads, or a scheduler without reordering",
            ));
        }
        Ok(scheduler)
    }

    pub(super) fn capacity_parts(
        &self,
        full: &NandGeometry,
        bits: u32,
        iu: u64,
        bad_fraction: f64,
    ) -> Result<CapacityParts, KeyError> {
        let (page, ppb) = (full.page_bytes, full.pages_per_block);
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
        let drive_user = self.drive_user_bytes(native_raw, iu)?;
        // The FTL refuses a drive whose spare area cannot hold its GC reserve and open blocks;
        // the same rule (`held_back_blocks`, `ftl_max_user_ius`) bounds the user capacity here
        // so no description is accepted that the FTL would reject later.
        let ipp = page / iu;
        let parity_stripe = self.ftl.parity_stripe_pages;
        if parity_stripe == 1 || parity_stripe > ppb {
            return Err(key_err(
                "ftl.parity_stripe_pages",
                parity_stripe,
                "a parity stripe needs at least one data page and fits in a block",
                format!("0 (no parity) or 2 to nand.pages_per_block ({ppb})"),
            ));
        }
        // What a block holds for data: parity pages take the rest.
        let data_ipb = u64::from(flashlab_ftl::data_pages(ppb, parity_stripe)) * ipp;
        let spares = FtlSpares {
            ius_per_block: data_ipb,
            ius_per_page: ipp,
            plp: self.buffer.plp,
            extra_streams: self.fdp_streams(),
        };
        let full_units = full.planes() as u64;
        let full_bad_blocks = bad_blocks_of(full.blocks() - full_static_blocks, bad_fraction);
        if full_static_blocks + full_bad_blocks >= full.blocks() / 2 {
            return Err(key_err(
                "nand.bad_block_reserve",
                bad_fraction,
                "with the static SLC cache's blocks it takes half the blocks or more",
                format!(
                    "below {:.4} with this static SLC cache",
                    (full.blocks() / 2 - full_static_blocks) as f64
                        / (full.blocks() - full_static_blocks) as f64
                ),
            ));
        }
        let full_native_blocks = full.blocks() - full_static_blocks - full_bad_blocks;
        let max_user =
            spares.max_user_ius(full_native_blocks, full_units, self.fg_for(full_units)) * iu;
        if drive_user == 0 || drive_user > max_user {
            let fits = |handles: u32| {
                let spares = FtlSpares {
                    extra_streams: self.fdp_streams_of(handles),
                    ..spares
                };
                spares.max_user_ius(full_native_blocks, full_units, self.fg_for(full_units)) * iu
                    >= drive_user
            };
            if self.fdp.enabled {
                range_u32(
                    "fdp.handles",
                    self.fdp.handles,
                    1,
                    flashlab_ftl::MAX_HANDLES,
                )?;
            }
            if self.fdp.enabled && drive_user > 0 && !fits(self.fdp.handles) {
                let most = (1..self.fdp.handles).rev().find(|&h| fits(h));
                return Err(key_err(
                    "fdp.handles",
                    self.fdp.handles,
                    "the handles' open blocks (one per die and plane each) leave too few blocks for the user capacity",
                    match most {
                        Some(h) => format!("1 to {h} on this drive"),
                        None => "none fits: a larger drive, or fdp.enabled = false".to_string(),
                    },
                ));
            }
            return Err(self.too_little_spare(max_user, native_raw, iu));
        }
        // Namespaces: the FTL maps only the allocated capacity; the rest is spare area.
        let full_namespaces = self.namespace_sizes(drive_user, iu)?;
        let full_user = if full_namespaces.is_empty() {
            drive_user
        } else {
            full_namespaces.iter().sum()
        };
        Ok(CapacityParts {
            block_bytes,
            slc_block_bytes,
            full_static_blocks,
            full_bad_blocks,
            full_native_blocks,
            parity_stripe,
            data_ipb,
            spares,
            drive_user,
            full_namespaces,
            full_user,
        })
    }

    /// The drive's user capacity in whole IUs: `capacity.user`, or the native capacity
    /// `native_raw` less `capacity.spare_factor`.
    fn drive_user_bytes(&self, native_raw: u64, iu: u64) -> Result<u64, KeyError> {
        Ok(match (self.capacity.user, self.capacity.spare_factor) {
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
            * iu)
    }

    /// The error for a user capacity above `max_user` (or zero), in the key the description
    /// set it by.
    fn too_little_spare(&self, max_user: u64, native_raw: u64, iu: u64) -> KeyError {
        let valid_users = format!("{} to {}", size_text(iu), format_size(max_user));
        match self.capacity.user {
            Some(u) => key_err(
                "capacity.user",
                size_text(u.0),
                "leaves too little spare area for garbage collection",
                format!("a user capacity from {valid_users}"),
            ),
            None => {
                let least = 1.0 - max_user as f64 / native_raw as f64;
                key_err(
                    "capacity.spare_factor",
                    self.capacity.spare_factor.unwrap_or(0.07),
                    "leaves too little spare area for garbage collection",
                    format!(
                        "a spare factor of at least {:.4} (a user capacity from {valid_users})",
                        (least * 10_000.0).ceil() / 10_000.0
                    ),
                )
            }
        }
    }

    /// The slice of the drive to simulate (`sim.scale`, or what `sim.max_memory` holds).
    pub(super) fn choose_slice(
        &self,
        full: NandGeometry,
        cap: &CapacityParts,
        bad_fraction: f64,
        iu: u64,
        max_memory: u64,
    ) -> Result<(SlicePlan, Slice), KeyError> {
        let CapacityParts {
            full_static_blocks,
            full_native_blocks,
            data_ipb,
            spares,
            full_user,
            ..
        } = *cap;
        let full_units = full.planes() as u64;
        let ppb = full.pages_per_block;
        // Scale: which slice of the drive to simulate.
        let full_user_ius = full_user / iu;
        let full_raw_ius = full.raw_bytes() / iu;
        // A zoned drive builds no map: its memory is the block state.
        let full_mem = if self.zns.enabled {
            memory_estimate_bytes(0, 0, full.blocks())
        } else {
            memory_estimate_bytes(full_user_ius, full_raw_ius, full.blocks())
        };
        // The pacing queue's ring is a fixed cost per unit: a capacity slice keeps all of it
        // and a die cut less, so the mapping gets what the full drive's ring leaves.
        let full_queue = crate::pacing::internal_queue_bytes(
            full_units,
            full_native_blocks,
            self.fg_for(full_units),
            ppb as u64,
            data_ipb,
            full_user_ius,
        );
        // Physical IU addresses are u32.
        let ppa_limit = (u32::MAX as u64 - 1) as f64 / full_raw_ius as f64;
        let want = match self.sim.scale {
            ScaleSetting::Auto => (max_memory.saturating_sub(full_queue) as f64 / full_mem as f64)
                .min(ppa_limit)
                .min(1.0),
            ScaleSetting::Fraction(f) => {
                self.explicit_scale(f, ppa_limit, full_mem, full_queue, max_memory)?
            }
        };
        // FDP's streams hold their open blocks as the cache's do: those of the handles the
        // host writes size the slice's user capacity; every handle's decide whether the FTL
        // takes the slice (`SlicePlan::unwritten_streams`).
        let slc_streams = native_slc_streams(full_static_blocks, self.slc_cache.dynamic)
            + self.fdp_written_streams();
        let unwritten_streams = self.fdp_streams() - self.fdp_written_streams();
        let held = |streams| steady_held_blocks(full_units, self.fg_for(full_units), streams);
        let plan = SlicePlan {
            full,
            full_static_blocks,
            bad_fraction,
            full_user_ius,
            full_held_blocks: held(slc_streams),
            slc_streams,
            unwritten_streams,
            full_held_all_blocks: held(slc_streams + unwritten_streams),
            spares,
            explicit_fg: self.ftl.gc_foreground_free_blocks,
            explicit_bg: self.ftl.gc_background_free_blocks,
        };
        let slice = match plan.slice(want) {
            Ok(s) => s,
            Err(why) => {
                let smallest = plan.smallest_valid_scale();
                return Err(match self.sim.scale {
                    ScaleSetting::Fraction(f) => key_err(
                        "sim.scale",
                        f,
                        &format!("the slice would be refused: {why}"),
                        match smallest {
                            Some(s) if s <= ppa_limit => format!("at least {s:.4} (and at most 1)"),
                            _ => "no slice of this drive is valid".to_string(),
                        },
                    ),
                    ScaleSetting::Auto => key_err(
                        "sim.max_memory",
                        size_text(max_memory),
                        &format!(
                            "the slice that fits (sim.scale {want:.4}) would be refused: {why}"
                        ),
                        match smallest {
                            Some(s) => format!(
                                "at least {} (sim.scale {s:.4})",
                                format_size((full_mem as f64 * s).ceil() as u64 + full_queue)
                            ),
                            None => "no slice of this drive is valid".to_string(),
                        },
                    ),
                });
            }
        };
        Ok((plan, slice))
    }

    /// An explicit `sim.scale` `f`, checked against 32-bit addresses (`ppa_limit`) and the
    /// memory budget: `full_mem` for the whole drive's map plus `full_queue`.
    fn explicit_scale(
        &self,
        f: f64,
        ppa_limit: f64,
        full_mem: u64,
        full_queue: u64,
        max_memory: u64,
    ) -> Result<f64, KeyError> {
        let f = fraction("sim.scale", f, true, 0.0, 1.0)?;
        if f > ppa_limit {
            return Err(key_err(
                "sim.scale",
                f,
                "the slice has more IUs than 32-bit addresses allow",
                format!("at most {ppa_limit:.4}"),
            ));
        }
        // An explicit slice is held to the same memory budget as "auto": raising
        // sim.max_memory is how a user says the machine has the room.
        let need = (full_mem as f64 * f).ceil() as u64 + full_queue;
        if need > max_memory {
            let fits = max_memory.saturating_sub(full_queue) as f64 / full_mem as f64;
            return Err(key_err(
                "sim.scale",
                f,
                &format!(
                    "the slice needs about {} of memory, more than sim.max_memory ({})",
                    format_size(need),
                    size_text(max_memory)
                ),
                format!(
                    "at most {:.4} (what sim.max_memory holds), or sim.max_memory of at least {}",
                    (fits * 10_000.0).floor() / 10_000.0,
                    format_size(need)
                ),
            ));
        }
        Ok(f)
    }
}

impl DeviceConfig {
    /// Native write streams FDP adds to the drive's (each holds an open block per unit): a
    /// host stream per handle beyond the first, and, persistently isolated, a relocation
    /// stream per handle beyond the first. 0 without FDP.
    pub(super) fn fdp_streams(&self) -> u64 {
        self.fdp_streams_of(self.fdp.handles)
    }

    /// [`Self::fdp_streams`] of the handles the host writes (`fdp.written_handles`, at most
    /// the drive's; every handle when not known): a handle never written opens no reclaim
    /// unit, so its blocks are spare on the drive, and a slice sized with them held would
    /// get spare area the drive does not have.
    pub(super) fn fdp_written_streams(&self) -> u64 {
        let f = &self.fdp;
        self.fdp_streams_of(
            f.written_handles
                .map_or(f.handles, |w| w.clamp(1, f.handles)),
        )
    }

    fn fdp_streams_of(&self, handles: u32) -> u64 {
        let f = &self.fdp;
        if !f.enabled {
            return 0;
        }
        let per_handle = match f.handle_type {
            crate::config::FdpHandleType::InitiallyIsolated => 1,
            crate::config::FdpHandleType::PersistentlyIsolated => 2,
        };
        per_handle * u64::from(handles.saturating_sub(1))
    }

    /// The FTL's FDP settings (None without FDP), each refusal naming its key.
    pub(super) fn fdp_parts(
        &self,
        full: &NandGeometry,
    ) -> Result<Option<flashlab_ftl::FdpConfig>, KeyError> {
        let f = &self.fdp;
        if !f.enabled {
            return Ok(None);
        }
        let handles = range_u32("fdp.handles", f.handles, 1, flashlab_ftl::MAX_HANDLES)?;
        if f.reclaim_groups != 1 {
            return Err(key_err(
                "fdp.reclaim_groups",
                f.reclaim_groups,
                "the model has one reclaim group (every handle's reclaim units span every die)",
                "1",
            ));
        }
        if !self.buffer.plp {
            return Err(key_err(
                "fdp.enabled",
                true,
                "FDP is modelled on drives with power-loss protection",
                "buffer.plp = true",
            ));
        }
        if self.controller.compression_granule.is_some() {
            return Err(key_err(
                "fdp.enabled",
                true,
                "FDP is modelled on drives that do not compress",
                "no controller.compression_granule",
            ));
        }
        if self.slc_cache.static_size.0 > 0 || self.slc_cache.dynamic {
            return Err(key_err(
                "fdp.enabled",
                true,
                "FDP is modelled on drives without an SLC cache",
                "slc_cache.static = \"0\" and slc_cache.dynamic = false",
            ));
        }
        let block = full.block_bytes();
        let ru_blocks = match f.ru_bytes {
            None => full.planes(),
            Some(s) if s.0 >= block && s.0.is_multiple_of(block) && s.0 / block <= 1 << 24 => {
                (s.0 / block) as u32
            }
            Some(s) => {
                return Err(key_err(
                    "fdp.ru_bytes",
                    size_text(s.0),
                    "not a whole number of erase blocks",
                    format!(
                        "a multiple of the erase block ({}), e.g. {} (one per die and plane)",
                        size_text(block),
                        size_text(block * u64::from(full.planes()))
                    ),
                ))
            }
        };
        Ok(Some(flashlab_ftl::FdpConfig {
            handles,
            ru_blocks,
            handle_type: match f.handle_type {
                crate::config::FdpHandleType::InitiallyIsolated => {
                    flashlab_ftl::HandleType::InitiallyIsolated
                }
                crate::config::FdpHandleType::PersistentlyIsolated => {
                    flashlab_ftl::HandleType::PersistentlyIsolated
                }
            },
        }))
    }
}
