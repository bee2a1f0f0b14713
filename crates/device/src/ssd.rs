//! The SSD as a [`BlockDevice`]: host link, controller, write buffer, FTL and NAND timing.
//!
//! Time flows one way. A request is accepted by the controller (an IOPS ceiling spaces
//! commands), pays the per-command overhead, moves its data over the host link (FIFO per
//! direction; SATA shares one direction), and touches NAND through the FTL's operations,
//! which the timing model places on channels and dies. Writes complete once buffered (a FUA
//! write or a flush on a drive without PLP waits until the data is programmed); the buffer
//! frees space only when programs complete, so a drive writing faster than its NAND can
//! program stalls its host: steady-state write throughput comes out of the model.

use flashlab_engine::time::transfer_ns;
use flashlab_engine::{
    BlockDevice, Completion, DeviceError, IoKind, IoRequest, PrefetchStage, RngStream, SeedTree,
    SimTime,
};
use flashlab_ftl::{data_pages, Ftl, NandOp, NandOpKind, OpCause, ReadLocation};
use flashlab_media::power::{EnergyMeter, METER_WINDOW_NS};
use flashlab_media::{Channel, ChannelMerge, NandTiming};
use serde_json::json;

use crate::buffer::{BufferError, WriteBuffer};
use crate::config::{DeviceConfig, HostAllocation};
use crate::controller::{Controller, Direction};
use crate::error::ConfigError;
use crate::mapcache::{Lookup, MapCache};
use crate::model::{Model, ScaleInfo};
use crate::pacing::{
    internal_queue_gain_ius, internal_queue_victims, is_internal, is_taken, InternalQueue,
};
use crate::readbuf::{ReadAhead, ReadBuffer};
use namespace::{resolve_namespace, translate, Namespace, NamespaceError};

mod internal;
pub(crate) mod namespace;
mod read;
mod report;
mod state;
mod untimed;
mod write;
mod zoned;

pub use state::{check_kind, drive_config_hash, DRIVE_STATE_KIND};
pub use untimed::Untimed;

/// Longest a request may wait for buffer space, and longest queue of reserved NAND work,
/// before the drive reports that it cannot make progress.
pub const MAX_WAIT_NS: u64 = 30 * 1_000_000_000;

/// Smallest unit a host read moves over a flash channel: a 4 KiB sector with its ECC
/// codeword (LDPC codewords cover 1-4 KiB of data on current NAND; reads of a larger IU fetch
/// only the codewords asked for).
const READ_UNIT_BYTES: u64 = 4096;

/// A page read — (block, page, slc, bytes) — and the codewords `[from, to)` it brings into
/// the read buffer.
type BufferedRead = ((u32, u32, bool, u64), u64, u64);

#[derive(Debug, Default, Clone, Copy)]
struct HostCounters {
    read_commands: u64,
    write_commands: u64,
    trim_commands: u64,
    flush_commands: u64,
    bytes_read: u64,
    bytes_written: u64,
    buffer_wait_ns: u64,
    /// IUs of host reads served by the read buffer, and IUs read ahead.
    read_buffer_hit_ius: u64,
    read_ahead_ius: u64,
}

impl HostCounters {
    /// One command of the host's, with the bytes it reads or writes.
    #[inline(always)]
    fn count(&mut self, req: &IoRequest) {
        match req.kind {
            IoKind::Read => {
                self.read_commands += 1;
                self.bytes_read += req.len_bytes;
            }
            IoKind::Write => {
                self.write_commands += 1;
                self.bytes_written += req.len_bytes;
            }
            IoKind::Trim => self.trim_commands += 1,
            IoKind::Flush => self.flush_commands += 1,
        }
    }
}

flashlab_engine::impl_state!(HostCounters {
    read_commands,
    write_commands,
    trim_commands,
    flush_commands,
    bytes_read,
    bytes_written,
    buffer_wait_ns,
    read_buffer_hit_ius,
    read_ahead_ius,
});

/// Intel's timed-workload endurance indicators (SMART attributes E2h-E4h of its SATA drives,
/// e.g. the DC S3700 product specification, section 5.4.1): a host resets a timer, runs a
/// workload for at least an hour, and reads the media wear it caused (as a percentage of the
/// rated P/E cycles, in 1/1024ths) and its share of reads, without waiting for the wear
/// indicator's whole percents to move. The starting point of the current timer loop.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TimedWorkload {
    start_ns: u64,
    erase_avg: f64,
    read_commands: u64,
    write_commands: u64,
}

flashlab_engine::impl_state!(TimedWorkload {
    start_ns,
    erase_avg,
    read_commands,
    write_commands
});

/// Power over an interval, from [`Ssd::power_summary`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerSummary {
    pub average_w: f64,
    /// Highest 1-second average.
    pub peak_w: f64,
    /// Whole 1-second windows in the interval.
    pub windows: usize,
}

/// A simulated SSD.
pub struct Ssd {
    model: Model,
    /// The conditions of the drive's published figures (description only: no model part).
    spec: crate::config::SpecSection,
    ftl: Ftl,
    media: NandTiming,
    buffer: WriteBuffer,
    /// Jobs run compressed by the slice's time factor (`keep_drive_time(false)`): the
    /// buffer's size then follows each window of writes (`write_window`).
    compresses_time: bool,
    /// The next window of writes goes on with the writes just made, which left the buffer
    /// full (`continue_writes`): it keeps the buffer's full depth. Set and taken at one
    /// job's start, so never in a saved state.
    next_window_continues: bool,
    ops: Vec<NandOp>,
    /// Internal work planned by the FTL, not yet given to the dies (see `pacing`).
    internal: InternalQueue,
    /// Earliest time a released internal program has its data (the latest released internal
    /// read's array and transfer time after its release).
    internal_data_ns: u64,
    /// IUs that internal work (GC, folding, wear levelling, refresh) has programmed on the
    /// dies so far: the copies the firmware has handed out, which cost it
    /// `controller.relocation_cpu` each when they go (not when the FTL plans them).
    internal_programmed_ius: u64,
    /// Reserved intervals of the host link per direction (0: host to device, 1: device to
    /// host). Booked into the earliest gap from when the data is ready, not behind the latest
    /// reservation: read data is ready out of submission order, and a FIFO would make every
    /// later read wait for one queued behind a busy die, a wait that grows with the number of
    /// commands in flight (the deeper queue of more dies) rather than with each die's load.
    link: [Channel; 2],
    /// Link time of the last transfer size: (bytes, ns).
    link_memo: (u64, u64),
    /// The controller's data path and firmware cores.
    controller: Controller,
    ctrl_next_ns: u64,
    cmd_spacing_ns: u64,
    /// Latest completion handed to the host: the device is idle after it.
    last_done_ns: u64,
    /// Background work was considered up to here.
    bg_cursor_ns: u64,
    /// The FTL said it has no background work; reset by anything that may create some.
    bg_done: bool,
    /// Earliest start of the next background GC victim beside host commands.
    busy_gc_next_ns: u64,
    /// Latest completion of a program carrying host data (what a flush waits for).
    host_program_done_ns: u64,
    version: u32,
    /// log2 of the IU size (a power of two, which the FTL checks): byte offset to IU by shift,
    /// not by a 64-bit divide on every command.
    iu_shift: u32,
    host: HostCounters,
    /// Latest time the host has shown the drive (a submission or the end of an idle
    /// period): the drive's power-on clock.
    clock_ns: u64,
    /// Aging the data has had beyond the power-on clock, in ns at the retention's reference
    /// temperature: power-off periods (`Ssd::power_off`), scaled by Arrhenius's law.
    aging_ns: u64,
    /// Per block, the aging clock (`clock_ns + aging_ns`) when a stream took it to write into:
    /// its data is at most that old.
    written_aging_ns: Vec<u64>,
    /// A read of the current command found data past its retention (see `Ssd::page_read`).
    unreadable: Option<u32>,
    /// Re-reads of aged data, and reads that failed for good (NVMe: media and data integrity
    /// errors).
    read_retries: u64,
    media_errors: u64,
    /// After a power-off, the firmware scans for aged data once idle (`refresh_pending`) and
    /// rewrites the blocks it found (`refresh_queue`, see `Ssd::refresh_step`).
    refresh_pending: bool,
    refresh_queue: Vec<u32>,
    refreshed_blocks: u64,
    /// Where the timed-workload indicators started (see [`TimedWorkload`]).
    timed: TimedWorkload,
    /// First byte of each namespace in the drive's logical space (one namespace: `[0]`).
    ns_start_bytes: Vec<u64>,
    /// Host counters per namespace.
    ns_host: Vec<HostCounters>,
    /// Controller energy of host transfers (media energy is metered by the media). A slice
    /// moves 1/die_factor of the drive's bytes, so this scales to the whole drive.
    host_meter: EnergyMeter,
    /// Controller energy of active time. The controller is busy for the same time on a slice
    /// as on the whole drive, so this one does not scale with the dies.
    active_meter: EnergyMeter,
    host_pj: u64,
    active_pj: u64,
    /// End of the union of intervals with a command outstanding, so far.
    busy_until_ns: u64,
    /// Recently read codewords and the read-ahead stream detector.
    readbuf: ReadBuffer,
    readahead: ReadAhead,
    /// log2 of the read unit (codeword) size.
    cw_shift: u32,
    /// Translation pages cached in DRAM when the map is paged (`controller.map_cache`).
    mapcache: Option<MapCache>,
    /// Relocation's map updates are being made (see `Ssd::update_relocated_entries`).
    map_updating: bool,
    /// The controller's time per command varies around `command_overhead` (drawn per
    /// command from the device's own stream, so runs repeat).
    command_rng: RngStream,
    /// The zones of a zoned drive (`[zns]`).
    zoned: crate::zoned::ZonedPart,
    _seeds: SeedTree,
}

// The drive's state: everything a run changes. The resolved configuration, the sizes and
// shifts derived from it, the seeds and the scratch list of operations are rebuilt from the
// configuration (`docs/state.md`).
flashlab_engine::impl_state!(Ssd {
    ftl, media, buffer, internal, internal_data_ns, internal_programmed_ius, link, link_memo,
    controller, ctrl_next_ns, last_done_ns, bg_cursor_ns, bg_done, busy_gc_next_ns,
    host_program_done_ns, version, host, clock_ns, aging_ns, written_aging_ns, unreadable,
    read_retries, media_errors, refresh_pending, refresh_queue, refreshed_blocks, timed,
    ns_start_bytes, ns_host, host_meter, active_meter, host_pj, active_pj, busy_until_ns,
    readbuf, readahead, mapcache, command_rng, zoned,
} skip { model, spec, ops, cmd_spacing_ns, iu_shift, cw_shift, map_updating, compresses_time,
    next_window_continues, _seeds }
  fixed { written_aging_ns, ns_start_bytes, ns_host } check Ssd::check_loaded);

/// Available spare (percent) below which the health log raises its critical warning (the
/// threshold NVMe drives commonly report).
const AVAILABLE_SPARE_THRESHOLD: u32 = 10;

impl Ssd {
    /// The conditions the drive's published figures were measured at (its `[spec]`).
    pub fn spec(&self) -> &crate::config::SpecSection {
        &self.spec
    }

    pub fn new(config: &DeviceConfig, seeds: SeedTree) -> Result<Ssd, ConfigError> {
        Self::build(config, seeds, false)
    }

    /// As [`Ssd::new`], with a version tag kept per physical IU (4 bytes each, in the saved
    /// state too) so that a checker can ask which write a read of each IU returns
    /// ([`flashlab_ftl::Ftl::read_version`]; the version counts the drive's write commands).
    pub fn new_tracking_versions(
        config: &DeviceConfig,
        seeds: SeedTree,
    ) -> Result<Ssd, ConfigError> {
        Self::build(config, seeds, true)
    }

    fn build(
        config: &DeviceConfig,
        seeds: SeedTree,
        track_versions: bool,
    ) -> Result<Ssd, ConfigError> {
        let mut model = config
            .resolve()
            .map_err(|e| ConfigError::from_key_error(config.name.clone(), e))?;
        model.ftl.track_versions = track_versions;
        let zone_model = config
            .zone_model(&model)
            .map_err(|e| ConfigError::from_key_error(config.name.clone(), e))?;
        let mut ftl = build_ftl(config, &model, zone_model.is_some(), &seeds)?;
        let mut media = build_media(&model);
        if let Some(cell) = flashlab_media::CellType::parse(model.cell_name) {
            // Each operation's time by page type, from one operation to the next and by
            // decode iterations, drawn from the run's seed (`flashlab_media::variation`).
            let seed = seeds.child("device/media").master_seed();
            media.set_variation(flashlab_media::OpVariation::for_cell(cell, seed));
        }
        let buffer = WriteBuffer::new(model.buffer_bytes, model.iu_bytes, media.units());
        let cmd_spacing_ns = 1_000_000_000u64.div_ceil(model.max_iops);
        ftl.defer_erases();
        ftl.note_opened_blocks();
        if model.map_cache.is_some() {
            ftl.note_relocations();
        }
        let internal = internal_queue(&model, &ftl);
        let total_blocks = ftl.total_blocks() as usize;
        Ok(Ssd {
            spec: config.spec.clone(),
            internal,
            internal_data_ns: 0,
            internal_programmed_ius: 0,
            ftl,
            media,
            buffer,
            compresses_time: false,
            next_window_continues: false,
            // Foreground GC of a large block emits a few thousand ops; sized once.
            ops: Vec::with_capacity(4 * model.geometry.pages_per_block as usize + 64),
            link: [Channel::new(), Channel::new()],
            link_memo: (0, 0),
            controller: Controller::new(model.controller),
            ctrl_next_ns: 0,
            cmd_spacing_ns,
            last_done_ns: 0,
            bg_cursor_ns: 0,
            bg_done: false,
            busy_gc_next_ns: 0,
            host_program_done_ns: 0,
            version: 0,
            iu_shift: model.iu_bytes.trailing_zeros(),
            host: HostCounters::default(),
            clock_ns: 0,
            aging_ns: 0,
            written_aging_ns: vec![0; total_blocks],
            unreadable: None,
            read_retries: 0,
            media_errors: 0,
            refresh_pending: false,
            refresh_queue: Vec::new(),
            refreshed_blocks: 0,
            timed: TimedWorkload::default(),
            ns_start_bytes: model
                .namespace_bytes
                .iter()
                .scan(0u64, |at, &n| {
                    let start = *at;
                    *at += n;
                    Some(start)
                })
                .collect(),
            ns_host: vec![HostCounters::default(); model.namespace_bytes.len()],
            host_meter: EnergyMeter::new(),
            active_meter: EnergyMeter::new(),
            host_pj: 0,
            active_pj: 0,
            busy_until_ns: 0,
            readbuf: ReadBuffer::new(
                (model.read_buffer_bytes / READ_UNIT_BYTES.min(model.iu_bytes)) as usize,
            ),
            readahead: ReadAhead::new(model.read_ahead_bytes),
            cw_shift: READ_UNIT_BYTES.min(model.iu_bytes).trailing_zeros(),
            mapcache: model.map_cache.map(|m| MapCache::new(m.pages, m.slots)),
            map_updating: false,
            command_rng: seeds.child("device/command").stream(),
            zoned: crate::zoned::ZonedPart(zone_model.map(crate::zoned::Zones::new)),
            _seeds: seeds,
            model,
        })
    }

    pub fn name(&self) -> &str {
        &self.model.name
    }

    pub fn scale(&self) -> ScaleInfo {
        self.model.scale.clone()
    }

    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }

    /// Namespaces of the drive (1 without a `namespaces` list).
    pub fn namespace_count(&self) -> usize {
        self.ns_start_bytes.len()
    }

    /// Capacity of namespace `index` (0-based) in the simulated drive.
    pub fn namespace_bytes(&self, index: usize) -> u64 {
        self.model.namespace_bytes[index]
    }

    /// Whether the jobs that follow keep the drive's time on a slice (the default: a
    /// system's members, a suite's windows on a steady drive) or are compressed by the
    /// slice's time factor (`flashlab run` and suites scaling a job to the slice): the
    /// write buffer holds the dies' share of the drive's in the first; in the second, its
    /// capacity share (`Model::compressed_buffer_bytes`) until a window of writes says how
    /// long it runs (`write_window`). Data held above the new size stays until its programs
    /// complete.
    pub fn keep_drive_time(&mut self, keep: bool) {
        self.compresses_time = !keep;
        self.buffer.set_limit(if keep {
            self.model.buffer_bytes
        } else {
            self.model.compressed_buffer_bytes
        });
    }

    /// The next phase of writes goes on with the writes just made (the timed part of a
    /// random-write round or interval after its part written without timing, which left the
    /// buffer full at its full depth): it has no first fill, and keeps the full depth
    /// however short it is, as the writes it goes on with would have.
    pub fn continue_writes(&mut self) {
        self.next_window_continues = true;
    }

    /// A phase of writes starts for `window`: while jobs are compressed (`keep_drive_time`),
    /// the buffer keeps its full depth in a window long enough that its first fill weighs
    /// little or that goes on with earlier writes (`continue_writes`), and its capacity
    /// share in a shorter one (`Model::buffer_depth_kept`).
    pub fn write_window(&mut self, window: flashlab_engine::WriteWindow) {
        let continues = std::mem::take(&mut self.next_window_continues);
        if self.compresses_time {
            self.buffer
                .set_limit(if continues || self.model.buffer_depth_kept(window) {
                    self.model.buffer_bytes
                } else {
                    self.model.compressed_buffer_bytes
                });
        }
    }

    /// The namespace fio's `filename=` names (`ns1`, `nvme0n1`, …): its 0-based index, or an
    /// error listing the valid names.
    pub fn resolve_namespace(&self, filename: &str) -> Result<usize, NamespaceError> {
        resolve_namespace(filename, self.namespace_count(), &self.model.name)
    }

    /// Namespace `index` (0-based) as a block device sharing this drive, or None.
    pub fn namespace(&mut self, index: usize) -> Option<Namespace<'_>> {
        (index < self.namespace_count()).then_some(Namespace { ssd: self, index })
    }

    /// Submit a request addressed to namespace `index` (offsets relative to the namespace).
    /// Panics if `index` is not below [`Self::namespace_count`].
    pub fn submit_to(
        &mut self,
        index: usize,
        now_ns: SimTime,
        req: &IoRequest,
    ) -> Result<Completion, DeviceError> {
        let r = translate(
            req,
            self.ns_start_bytes[index],
            self.model.namespace_bytes[index],
        )?;
        self.submit_in(now_ns, &r, index)
    }

    /// [`BlockDevice::prefetch`] for a request addressed to namespace `index` (nothing for
    /// one outside it).
    pub fn prefetch_in(&self, index: usize, req: &IoRequest, stage: PrefetchStage) {
        if let Ok(r) = translate(
            req,
            self.ns_start_bytes[index],
            self.model.namespace_bytes[index],
        ) {
            self.prefetch(&r, stage);
        }
    }

    /// Namespace holding drive byte `offset` (the last one for a flush at 0).
    fn namespace_of(&self, offset: u64) -> usize {
        if self.ns_start_bytes.len() == 1 {
            0
        } else {
            self.ns_start_bytes
                .partition_point(|&s| s <= offset)
                .saturating_sub(1)
        }
    }

    fn link_dir(&self, device_to_host: bool) -> usize {
        usize::from(device_to_host && self.model.link.full_duplex())
    }

    #[inline(always)]
    fn link_transfer(&mut self, start_ns: u64, bytes: u64, device_to_host: bool) -> u64 {
        self.transfer(start_ns, bytes, bytes, device_to_host)
    }

    /// [`Self::link_transfer`] of `bytes` over the link while the controller's data path
    /// streams `path_bytes` (fewer on a compressing drive's writes).
    #[inline(always)]
    fn transfer(
        &mut self,
        start_ns: u64,
        bytes: u64,
        path_bytes: u64,
        device_to_host: bool,
    ) -> u64 {
        if bytes == 0 {
            return start_ns;
        }
        let d = self.link_dir(device_to_host);
        // Command sizes repeat: remember the last one's time instead of dividing again.
        if bytes != self.link_memo.0 {
            self.link_memo = (bytes, transfer_ns(bytes, self.model.link_bytes_per_s));
        }
        // The controller's data path streams the same bytes (a no-op when unlimited): the
        // transfer needs both free at once.
        let dir = if device_to_host {
            Direction::DeviceToHost
        } else {
            Direction::HostToDevice
        };
        let dur = self
            .controller
            .transfer_ns(dir, path_bytes, self.link_memo.1);
        if !self.controller.limits(dir) {
            // Only the link to fit: one search, not a fit and then a booking.
            return self.link[d].book(start_ns, dur) + dur;
        }
        self.link_and_data_path(d, dir, start_ns, dur)
    }

    /// [`Self::link_transfer`] through a data path with a bandwidth of its own: the earliest
    /// start from `start_ns` at which link `d` and the data path are both free for `dur`.
    #[inline(never)]
    fn link_and_data_path(&mut self, d: usize, dir: Direction, start_ns: u64, dur: u64) -> u64 {
        let mut s = start_ns;
        // Each step moves the start to a later reservation's end: it ends.
        loop {
            let on_link = self.link[d].fit(s, dur);
            let both = self.controller.fit(dir, on_link, dur);
            if both == on_link {
                s = both;
                break;
            }
            s = both;
        }
        self.link[d].book(s, dur);
        self.controller.book(dir, s, dur);
        s + dur
    }

    fn check_backlog(&self, now_ns: u64) -> Result<(), DeviceError> {
        for (backlog_ns, what, why) in [
            (
                self.controller.relocation_backlog_ns(now_ns),
                "relocation work queued on the controller's cores",
                "the workload makes GC copy faster than controller.relocation_cpu lets the firmware",
            ),
            (
                self.media.max_backlog_ns(now_ns),
                "NAND work queued",
                "the workload outruns the media",
            ),
        ] {
            if backlog_ns > MAX_WAIT_NS {
                return Err(DeviceError::Stalled {
                    reason: format!(
                        "{what} {:.1} s ahead of the host at {now_ns} ns (limit {} s): {why}",
                        backlog_ns as f64 * 1e-9,
                        MAX_WAIT_NS / 1_000_000_000
                    ),
                });
            }
        }
        Ok(())
    }

    fn accept(&mut self, now_ns: u64) -> u64 {
        let accepted = now_ns.max(self.ctrl_next_ns);
        self.ctrl_next_ns = accepted + self.cmd_spacing_ns;
        accepted
    }

    /// The IUs a trim deallocates: (first, count), or none. Only whole IUs are deallocated;
    /// partial ones keep their data. A compressing drive's IU is its compression unit, whose
    /// data spans its granules.
    fn trim_ius(&self, req: &IoRequest) -> Option<(u32, u32)> {
        let iu = self.model.iu_bytes;
        let unit = self.model.compression_unit_bytes.unwrap_or(iu);
        let first = req.offset_bytes.div_ceil(unit) * (unit / iu);
        let end = (req.offset_bytes + req.len_bytes) / unit * (unit / iu);
        // Lazily: a trim inside one unit has `end` below `first`.
        (end > first).then(|| (first as u32, (end - first) as u32))
    }

    fn check_range(&self, req: &IoRequest) -> Result<(), DeviceError> {
        req.check_range(self.capacity_bytes(), self.model.logical_block_bytes)
    }

    /// Power is lost at `at_ns` and restored at once. With PLP the capacitors program what
    /// the buffer holds; without, buffered data is gone (the FTL rolls those IUs back).
    pub fn power_loss(&mut self, at_ns: u64) {
        self.ops.clear();
        self.ftl.power_loss(&mut self.ops);
        self.drop_internal();
        let resume = if self.model.plp {
            let (last, _) = self.schedule_ops(at_ns, false);
            last.max(at_ns)
        } else {
            self.ops.clear();
            at_ns
        };
        self.media.reset(resume);
        self.buffer.clear(resume);
        for l in &mut self.link {
            l.reset(resume);
        }
        self.readbuf.clear();
        self.readahead.clear();
        // The controller restarts: its open zones are closed (NVMe ZNS's controller level
        // reset), so the open-zone slots they held are free again.
        if let Some(z) = &mut self.zoned.0 {
            z.power_cycle();
        }
        // The cached translation pages were in DRAM (changes not written back are lost with
        // it: the firmware's recovery of the map is not modelled).
        if let Some(c) = &mut self.mapcache {
            c.clear();
        }
        self.controller.reset(resume);
        self.ctrl_next_ns = resume;
        self.last_done_ns = self.last_done_ns.max(resume);
        self.host_program_done_ns = resume;
        self.bg_done = false;
    }

    /// Secure erase at `at_ns`: every block erased, all data unmapped. Returns when done
    /// (the device accepts new commands only then).
    pub fn format(&mut self, at_ns: u64) {
        let start = at_ns.max(self.last_done_ns).max(self.media.all_idle_ns());
        self.ops.clear();
        self.drop_internal();
        self.ftl.format(&mut self.ops);
        let (last, _) = self.schedule_ops(start, false);
        self.buffer.clear(last);
        self.readbuf.clear();
        self.readahead.clear();
        self.ctrl_next_ns = self.ctrl_next_ns.max(last);
        self.last_done_ns = self.last_done_ns.max(last);
        self.host_program_done_ns = last;
        self.host = HostCounters::default();
        // The timer and the wear baseline survive a secure erase, as erase counts do; the
        // command counts restart with the host counters.
        self.timed.read_commands = 0;
        self.timed.write_commands = 0;
        self.clock_ns = self.clock_ns.max(at_ns);
        self.ns_host.fill(HostCounters::default());
        if let Some(c) = &mut self.mapcache {
            c.clear();
            c.counters = Default::default();
        }
        self.bg_done = false;
    }
}

/// The drive's FTL, its wear-out seeded from `seeds`.
fn build_ftl(
    config: &DeviceConfig,
    model: &Model,
    zoned: bool,
    seeds: &SeedTree,
) -> Result<Ftl, ConfigError> {
    let mut ftl_config = model.ftl.clone();
    ftl_config.wear_out.seed = seeds.child("device/wear").master_seed();
    // A zoned drive places data by zone: no map is built (`Model::memory_bytes` leaves
    // it out too).
    let ftl = if zoned {
        Ftl::new_unmapped(ftl_config)
    } else {
        Ftl::new(ftl_config)
    };
    ftl.map_err(|e| ConfigError::Invalid {
        origin: config.name.clone(),
        key: "ftl".to_string(),
        value: String::new(),
        message: e.to_string(),
        valid: "a configuration the FTL accepts".to_string(),
    })
}

/// The NAND timing model of the slice, with its share of the power budget and its thermal
/// model.
fn build_media(model: &Model) -> NandTiming {
    let mut media = NandTiming::with_scheduler(model.geometry, model.timings, model.scheduler);
    // A flash channel's dies book transfers far ahead: keep its near future exact.
    media.set_channel_merge(ChannelMerge::Latest);
    // The slice has 1/die_factor of the dies: its share of the media budget.
    let budget = model
        .power
        .media_budget_uw()
        .map(|b| ((b as f64 / model.scale.die_factor) as u64).max(1));
    // Host transfers are not throttled themselves: the media leaves room for the host
    // transfer of the bytes it moves (GC's bytes never cross the link: a margin).
    media.set_power(model.power.energy, budget, model.power.host_pj_per_byte);
    if let Some((thermal, media_uw)) = model.power.thermal {
        // The slice's clock and power stand for the drive's (see `ScaleInfo`).
        let s = &model.scale;
        media.set_thermal(
            thermal,
            s.capacity_factor / s.die_factor,
            s.die_factor,
            ((media_uw as f64 / s.die_factor) as u64).max(1),
        );
    }
    media
}

/// The queue of internal (relocation) work, sized for the most victims GC keeps in hand.
fn internal_queue(model: &Model, ftl: &Ftl) -> InternalQueue {
    let f = &model.ftl;
    // What a victim's erase frees: its data IUs (parity pages hold none).
    let block_ius = data_pages(f.pages_per_block, f.parity_stripe_pages) * f.ius_per_page;
    InternalQueue::new(
        ftl.total_blocks(),
        block_ius,
        data_pages(
            f.pages_per_block / f.bits_per_cell.max(1),
            f.parity_stripe_pages,
        ) * f.ius_per_page,
        (internal_queue_victims(
            u64::from(f.dies) * u64::from(f.planes_per_die),
            u64::from(ftl.total_blocks())
                - u64::from(f.slc.static_blocks)
                - u64::from(ftl.bad_blocks()),
            u64::from(f.gc.foreground_free_blocks),
            u64::from(block_ius),
            f.user_ius,
        ) * (2 * u64::from(f.pages_per_block) + 1)) as usize,
        internal_queue_gain_ius(u64::from(f.gc.foreground_free_blocks), u64::from(block_ius)),
    )
}

impl BlockDevice for Ssd {
    fn capacity_bytes(&self) -> u64 {
        match &self.zoned.0 {
            None => self.model.user_bytes,
            Some(z) => z.capacity_bytes(),
        }
    }

    /// A read's or a write's map entries are the cache miss a large drive's host path cannot
    /// avoid, and a write's old copies (found through the entries, one line per IU that
    /// random writes left apart) more: start loading them while earlier requests are
    /// simulated, the entries two requests ahead and the old copies one.
    fn prefetch(&self, req: &IoRequest, stage: PrefetchStage) {
        if self.zoned.0.is_some() {
            // Zones are found by address: there is no map to load.
            return;
        }
        let first = req.offset_bytes >> self.iu_shift;
        let last = (req.offset_bytes + req.len_bytes.max(1) - 1) >> self.iu_shift;
        // The FTL loads at most `PREFETCH_IUS` of them.
        let (lpn, ius) = (
            first as u32,
            (last - first + 1).min(u64::from(u32::MAX)) as u32,
        );
        match (stage, req.kind) {
            (PrefetchStage::Map, IoKind::Read | IoKind::Write) => self.ftl.prefetch(lpn, ius),
            (PrefetchStage::Update, IoKind::Write) => self.ftl.prefetch_old_copies(lpn, ius),
            _ => {}
        }
    }

    fn logical_block_bytes(&self) -> u64 {
        self.model.logical_block_bytes
    }

    fn queue_depth_limit(&self) -> u32 {
        self.model.queue_depth
    }

    fn compresses_data(&self) -> bool {
        self.model.compression_unit_bytes.is_some()
    }

    fn placement_handles(&self) -> u32 {
        self.model.ftl.fdp.as_ref().map_or(0, |f| f.handles)
    }

    /// From the FTL's counters, so that their ratio is the run's `write_amplification`.
    fn write_totals(&self) -> Option<flashlab_engine::WriteTotals> {
        let c = self.ftl.counters();
        Some(flashlab_engine::WriteTotals {
            host_bytes: c.host_write_ius << self.iu_shift,
            nand_bytes: c.nand_write_ius << self.iu_shift,
        })
    }

    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        let ns = self.namespace_of(req.offset_bytes);
        self.submit_in(now_ns, req, ns)
    }

    fn untimed_refusal(&self) -> Option<String> {
        Ssd::untimed_refusal(self).map(str::to_string)
    }

    /// [`Ssd::untimed`]: the FTL takes the writes and trims in order, the dies only the last
    /// write buffer's worth; refused where [`Ssd::untimed_refusal`] says the state would
    /// depend on the timing.
    fn write_untimed(
        &mut self,
        now_ns: SimTime,
        next: &mut dyn FnMut() -> Option<flashlab_engine::UntimedIo>,
    ) -> Result<SimTime, flashlab_engine::UntimedError> {
        let mut run = self
            .untimed(now_ns)
            .map_err(|why| flashlab_engine::UntimedError::Refused(why.to_string()))?;
        run.run(next)?;
        Ok(run.finish())
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        self.clock_ns = self.clock_ns.max(until_ns);
        self.background(from_ns, until_ns);
    }

    fn write_window(&mut self, window: flashlab_engine::WriteWindow) {
        Ssd::write_window(self, window)
    }

    fn zones(&self) -> Option<flashlab_engine::ZoneGeometry> {
        Ssd::zones(self)
    }

    fn zone_write_pointer(&self, zone: u32) -> Option<u64> {
        Ssd::zone_write_pointer(self, zone)
    }

    fn zone_command(
        &mut self,
        now_ns: SimTime,
        op: flashlab_engine::ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        Ssd::zone_command(self, now_ns, op, zone)
    }
}

impl Ssd {
    /// Submit a request in the drive's logical space, counted for namespace `ns`.
    fn submit_in(
        &mut self,
        now_ns: SimTime,
        req: &IoRequest,
        ns: usize,
    ) -> Result<Completion, DeviceError> {
        let zone_write = self.admit_command(req)?;
        self.catch_up_to(now_ns);
        // Copies handed to the dies from here on cost firmware time, if relocation has any.
        let relocation_costs = self.controller.model().relocation_cpu_ns > 0;
        let moved_before = self.internal_programmed_ius;
        self.release_to_idle_dies(now_ns);
        let accepted = self.accept(now_ns);
        let mut t0 = accepted + self.command_rng.command_ns(self.model.command_overhead_ns);
        // Firmware work of the command on the controller's cores (none by default).
        if matches!(req.kind, IoKind::Read | IoKind::Write) {
            t0 = self.controller.command(req.kind == IoKind::Write, t0);
        }
        if req.kind != IoKind::Write {
            self.busy_gc(accepted);
        }
        if matches!(req.kind, IoKind::Write | IoKind::Trim) {
            // Timing state of the old data must not serve a later read.
            let (from, to) = self.codewords(req.offset_bytes, req.offset_bytes + req.len_bytes);
            self.readbuf.invalidate(from, to);
        }
        let done = self.carry_out(t0, req, zone_write)?;
        let done = if relocation_costs {
            let moved = self.internal_programmed_ius - moved_before;
            self.controller.relocated(accepted, moved);
            if req.kind == IoKind::Write {
                self.controller.write_done(done)
            } else {
                done
            }
        } else {
            done
        };
        self.check_backlog(now_ns)?;
        self.last_done_ns = self.last_done_ns.max(done);
        self.meter_command(accepted, done, req);
        self.ns_host[ns].count(req);
        // The host's submission ends when the command is in the drive's queue, at once: a
        // command waiting there for the controller to take it (its command rate, `accepted`)
        // is queueing inside the drive, which fio counts as completion latency.
        Ok(Completion {
            accepted_ns: now_ns,
            done_ns: done,
        })
    }

    /// The checks a command passes before anything happens: its range, a read-only drive,
    /// and for a write to a zone its place by the zone rules (returned).
    #[inline(always)]
    fn admit_command(
        &mut self,
        req: &IoRequest,
    ) -> Result<Option<crate::zoned::ZoneWrite>, DeviceError> {
        self.check_range(req)?;
        if req.kind == IoKind::Write && self.ftl.read_only() {
            return Err(self.read_only_error());
        }
        let zone_write = match &mut self.zoned.0 {
            Some(z) if req.kind == IoKind::Write => Some(z.write(req.offset_bytes, req.len_bytes)?),
            _ => None,
        };
        if req.kind == IoKind::Write && zone_write.is_none() {
            // The write invalidates the old copy of its first IU: load that reverse-map line
            // while the work below runs, for callers that gave no hint a request earlier.
            self.ftl
                .prefetch_old_copies((req.offset_bytes >> self.iu_shift) as u32, 1);
        }
        Ok(zone_write)
    }

    /// The drive's clocks moved to a submission at `now_ns`: submissions move forward and
    /// every operation starts at or after its submission; idle time since the last command
    /// goes to background work.
    #[inline(always)]
    fn catch_up_to(&mut self, now_ns: SimTime) {
        self.media.advance_to(now_ns);
        self.clock_ns = self.clock_ns.max(now_ns);
        for l in &mut self.link {
            l.forget_before(now_ns);
        }
        self.controller.forget_before(now_ns);
        if now_ns > self.last_done_ns {
            // Copies made while the drive idles fit in the cores' idle time: not charged.
            self.background(self.last_done_ns, now_ns);
        }
    }

    /// The command's own work from `t0`, when the controller starts it; returns when it is
    /// done (for a write on a drive without power-loss protection with FUA, durable).
    #[inline(always)]
    fn carry_out(
        &mut self,
        t0: SimTime,
        req: &IoRequest,
        zone_write: Option<crate::zoned::ZoneWrite>,
    ) -> Result<SimTime, DeviceError> {
        let durable = !self.model.plp;
        self.host.count(req);
        Ok(match req.kind {
            IoKind::Read if self.zoned.0.is_some() => self.read_zoned(t0, req),
            IoKind::Read => self.read(t0, req)?,
            IoKind::Write => {
                self.bg_done = false;
                let d = match zone_write {
                    Some(zw) => self.write_zoned(t0, req, zw)?,
                    None => self.write(t0, req)?,
                };
                if req.fua && durable {
                    self.make_durable(d)
                } else {
                    d
                }
            }
            IoKind::Trim => {
                self.bg_done = false;
                // A zoned drive deallocates by zone reset: a deallocation keeps the data.
                if let Some((first, count)) = self.trim_ius(req).filter(|_| self.zoned.0.is_none())
                {
                    self.ftl.trim(first, count);
                }
                t0
            }
            IoKind::Flush if durable => self.make_durable(t0),
            IoKind::Flush => t0,
        })
    }
}
