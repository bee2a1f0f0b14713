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
use flashlab_engine::{BlockDevice, Completion, DeviceError, IoKind, IoRequest, SeedTree, SimTime};
use flashlab_ftl::{data_pages, Ftl, NandOp, NandOpKind, OpCause, ReadLocation};
use flashlab_media::power::{EnergyMeter, METER_WINDOW_NS};
use flashlab_media::{Channel, ChannelMerge, NandTiming};
use serde_json::json;

use crate::buffer::{BufferError, WriteBuffer};
use crate::config::{ChannelMergeSetting, DeviceConfig, HostAllocation};
use crate::controller::{Controller, Direction};
use crate::load::ConfigError;
use crate::mapcache::{Lookup, MapCache};
use crate::model::{Model, ScaleInfo};
use crate::namespace::{resolve_namespace, translate, Namespace, NamespaceError};
use crate::pacing::{is_internal, is_taken, InternalQueue};
use crate::readbuf::{ReadAhead, ReadBuffer};

mod read;
mod report;

/// Longest a request may wait for buffer space, and longest queue of reserved NAND work,
/// before the drive reports that it cannot make progress.
pub const MAX_WAIT_NS: u64 = 30 * 1_000_000_000;

/// Smallest unit a host read moves over a flash channel: a 4 KiB sector with its ECC
/// codeword (LDPC codewords cover 1-4 KiB of data on current NAND; reads of a larger IU fetch
/// only the codewords asked for).
const READ_UNIT_BYTES: u64 = 4096;

/// Free space the pacing queue may put off reclaiming, in IUs: the foreground reserve
/// (`ftl.gc_foreground_free_blocks` blocks). Deferring GC spends free blocks on host data;
/// a firmware that deferred more than its reserve would run out of blocks to write into
/// before the deferred work came back. The reserve is per (die, plane) unit (2 each by
/// default), so a slice with a fraction of the dies defers the same per plane as the drive.
pub(crate) fn internal_queue_gain_ius(foreground_free_blocks: u64, ius_per_block: u64) -> u64 {
    foreground_free_blocks * ius_per_block
}

/// Victims the pacing queue's ring holds: enough for the gain bound with victims of the
/// least gain greedy selection takes on a full drive. Greedy's victim has at least the
/// average invalid share of the data blocks, the drive's effective spare `s` (spare IUs
/// beside the blocks steady writing keeps out of the data's reach, over the data blocks'
/// IUs), so the bound is at most `reserve / s` victims. Victims of less gain (right after
/// a fill, or folds) meet the ring's end first and go to the dies oldest first.
pub(crate) fn internal_queue_victims(
    units: u64,
    native_blocks: u64,
    foreground_free_blocks: u64,
    ius_per_block: u64,
    user_ius: u64,
) -> u64 {
    // Host and GC streams only: an SLC cache's streams move the estimate by under a block
    // per unit, and a ring too short for a burst of small-gain victims releases the oldest.
    let held = crate::model::steady_held_blocks(units, foreground_free_blocks, 0);
    let data_ius = native_blocks.saturating_sub(held) * ius_per_block;
    // The FTL refuses a drive whose data blocks cannot hold the user IUs; at least 1 IU of
    // spare keeps the division defined for any accepted drive.
    let spare_ius = data_ius.saturating_sub(user_ius).max(1);
    let gain = internal_queue_gain_ius(foreground_free_blocks, ius_per_block);
    (gain as u128 * data_ius as u128)
        .div_ceil(spare_ius as u128 * ius_per_block as u128)
        .min(u128::from(native_blocks)) as u64
}

/// Bytes of the pacing queue's ring (sized once: a read and a program per page and an
/// erase for each of `internal_queue_victims`).
pub fn internal_queue_bytes(
    units: u64,
    native_blocks: u64,
    foreground_free_blocks: u64,
    pages_per_block: u64,
    ius_per_block: u64,
    user_ius: u64,
) -> u64 {
    let victims = internal_queue_victims(
        units,
        native_blocks,
        foreground_free_blocks,
        ius_per_block,
        user_ius,
    );
    victims * (2 * pages_per_block + 1) * std::mem::size_of::<NandOp>() as u64
}

/// A page read — (block, page, slc, bytes) — and the codewords `[from, to)` it brings into
/// the read buffer.
type BufferedRead = ((u32, u32, bool, u64), u64, u64);

/// Background steps per idle window at most (each step is bounded work in the FTL).
const MAX_BACKGROUND_STEPS: u32 = 1_000_000;

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
    ftl: Ftl,
    media: NandTiming,
    buffer: WriteBuffer,
    ops: Vec<NandOp>,
    /// Internal work planned by the FTL, not yet given to the dies (see `pacing`).
    internal: InternalQueue,
    /// Earliest time a released internal program has its data (the latest released internal
    /// read's array and transfer time after its release).
    internal_data_ns: u64,
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
    _seeds: SeedTree,
}

/// Available spare (percent) below which the health log raises its critical warning (the
/// threshold NVMe drives commonly report).
const AVAILABLE_SPARE_THRESHOLD: u32 = 10;

impl Ssd {
    pub fn new(config: &DeviceConfig, seeds: SeedTree) -> Result<Ssd, ConfigError> {
        let model = config
            .resolve()
            .map_err(|e| ConfigError::from_key_error(config.name.clone(), e))?;
        let mut ftl_config = model.ftl.clone();
        ftl_config.wear_out.seed = seeds.child("device/wear").master_seed();
        let mut ftl = Ftl::new(ftl_config).map_err(|e| ConfigError::Invalid {
            origin: config.name.clone(),
            key: "ftl".to_string(),
            value: String::new(),
            message: e.to_string(),
            valid: "a configuration the FTL accepts".to_string(),
        })?;
        let mut media = NandTiming::with_scheduler(model.geometry, model.timings, model.scheduler);
        media.set_channel_merge(match model.channel_merge {
            ChannelMergeSetting::Earliest => ChannelMerge::Earliest,
            ChannelMergeSetting::Narrowest => ChannelMerge::Narrowest,
        });
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
        let buffer = WriteBuffer::new(model.buffer_bytes, model.iu_bytes, media.units());
        let cmd_spacing_ns = 1_000_000_000u64.div_ceil(model.max_iops);
        ftl.defer_erases();
        ftl.note_opened_blocks();
        let f = &model.ftl;
        // What a victim's erase frees: its data IUs (parity pages hold none).
        let block_ius = data_pages(f.pages_per_block, f.parity_stripe_pages) * f.ius_per_page;
        let internal = InternalQueue::new(
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
        );
        let total_blocks = ftl.total_blocks() as usize;
        Ok(Ssd {
            internal,
            internal_data_ns: 0,
            ftl,
            media,
            buffer,
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

    /// Give the pending FTL ops to the media from `start_ns`. Internal work goes through the
    /// pacing queue when `defer` (host commands), else straight to the dies (idle-time work,
    /// format). Returns (latest completion of any op given to the dies, latest completion of
    /// an RMW read).
    fn schedule_ops(&mut self, start_ns: u64, defer: bool) -> (u64, u64) {
        let mut last = start_ns;
        let mut rmw_done = start_ns;
        // Taken out for the loop: the ops are read while `self` is borrowed mutably.
        let ops = std::mem::take(&mut self.ops);
        // A block's data is as old as the time it was taken to write into (the retention of
        // aged data).
        let aging_now = start_ns + self.aging_ns;
        let written = &mut self.written_aging_ns;
        self.ftl.take_opened(|b| written[b as usize] = aging_now);
        let mut i = 0;
        while i < ops.len() {
            let op = &ops[i];
            if is_internal(op) {
                if defer {
                    // The FTL emits internal work in runs (a victim's reads, programs and
                    // erase): queued with one copy, found as it is copied, when all that
                    // is left fits.
                    let ftl = &self.ftl;
                    let static_slc = |block| ftl.is_static_slc_block(block);
                    if let Some(n) = self.internal.push_internal_prefix(&ops[i..], static_slc) {
                        i += n;
                    } else {
                        let run = &ops[i..];
                        let run = &run[..run.iter().take_while(|o| is_internal(o)).count()];
                        i += run.len();
                        if !self.internal.push_run(run, static_slc) {
                            for op in run {
                                let static_slc = op.kind == NandOpKind::Erase
                                    && self.ftl.is_static_slc_block(op.block);
                                // A full queue gives its oldest operation to the dies to make
                                // room.
                                if self.internal.is_full() {
                                    last = last.max(self.release_internal(1, start_ns));
                                }
                                self.internal.push(*op, static_slc);
                            }
                        }
                    }
                    if self.internal.over_gain() {
                        let due = self.internal.due_for_gain();
                        last = last.max(self.release_internal(due, start_ns));
                    }
                } else {
                    last = last.max(self.issue_internal(op, start_ns));
                    i += 1;
                }
                continue;
            }
            i += 1;
            let bytes = u64::from(op.ius) << self.iu_shift;
            let done = match op.kind {
                NandOpKind::Program => {
                    let host = op.cause == OpCause::HostWrite;
                    if let Some(i) = self.internal.queued_erase(op.block) {
                        last = last.max(self.take_erase(op.block, i, start_ns));
                    }
                    let due = self.internal.due_before_program(op.block, op.ius, host);
                    if due > 0 {
                        last = last.max(self.release_internal(due, start_ns));
                    }
                    let done = self.media.program(op.block, bytes, op.slc, start_ns);
                    if host {
                        self.buffer
                            .programmed(self.media.unit_of(op.block), done, bytes);
                        self.host_program_done_ns = self.host_program_done_ns.max(done);
                    }
                    done
                }
                NandOpKind::Read => {
                    // A read-modify-write's read holds up its host write (the command
                    // completes when it is done), so the die serves it as a host read:
                    // ahead of the garbage-collection reads waiting there.
                    let (done, _) = self
                        .media
                        .read(op.block, op.page, bytes, op.slc, true, start_ns);
                    if op.cause == OpCause::ReadModifyWrite {
                        rmw_done = rmw_done.max(done);
                    }
                    done
                }
                NandOpKind::Erase => self.media.erase(op.block, op.slc, start_ns),
            };
            last = last.max(done);
        }
        self.ops = ops;
        self.ops.clear();
        (last, rmw_done)
    }

    /// Release the `n` oldest queued internal operations at `at_ns`; returns the latest
    /// completion (`at_ns` if none).
    fn release_internal(&mut self, n: usize, at_ns: u64) -> u64 {
        // The released operations are read in place from the queue's ring, which needs the
        // queue borrowed apart from the dies and the FTL.
        let Ssd {
            internal,
            media,
            ftl,
            internal_data_ns,
            iu_shift,
            ..
        } = self;
        let released = internal.release_unsettled(n);
        let mut last = at_ns;
        // The queue's gain and taken count settle from the same pass.
        let (mut gain, mut taken) = (0, 0);
        // Every operation is placed from `at_ns` on.
        let pending = media.begin_run(at_ns);
        for run in [released.older, released.newer] {
            for op in run {
                // Slots taken out of order (`take_erase`) already went to the dies.
                if is_taken(op) {
                    taken += 1;
                    continue;
                }
                gain += released.gain(op);
                last = last.max(issue_internal(
                    media,
                    ftl,
                    internal_data_ns,
                    *iu_shift,
                    op,
                    at_ns,
                ));
            }
        }
        media.end_run(pending);
        internal.settle(gain, taken);
        last
    }

    /// Abandon the internal work not given to the dies yet (power loss, format): the blocks
    /// it would have erased count as erased, as the FTL's state already has them.
    fn drop_internal(&mut self) {
        while let Some(op) = self.internal.pop() {
            if op.kind == NandOpKind::Erase {
                self.ftl.erase_done(op.block);
            }
        }
    }

    /// Internal work whose die is idle at `now_ns` starts now: the oldest queued operations,
    /// as long as each one's die has nothing reserved (so host work waits for at most the one
    /// operation each die took).
    fn release_to_idle_dies(&mut self, now_ns: u64) {
        while let Some(op) = self.internal.front() {
            if !is_taken(op) && self.media.unit_free_ns(op.block) > now_ns {
                break;
            }
            self.release_internal(1, now_ns);
        }
    }

    /// A program to `block`, whose erase is queued at slot `at` of the pacing queue, is due:
    /// the erase and the queued reads of the block (what the erase must follow) go to the
    /// dies now, out of the queue's order, at `at_ns`; the queue's older work stays queued.
    /// Releasing everything up to the erase instead would give the dies a burst of other
    /// victims' work (thousands of operations when the queue is deep), which a controller
    /// that only needs this block erased does not do. Returns the latest completion (`at_ns`
    /// if nothing went).
    fn take_erase(&mut self, block: u32, at: usize, at_ns: u64) -> u64 {
        let Some(from) = self.internal.erase_reads_from(block, at) else {
            // The block was programmed by queued work before its erase: its reads depend on
            // those programs, whose data come from any earlier read.
            return at_ns;
        };
        self.internal.forced_erases += 1;
        let mut last = at_ns;
        // No operation on the block comes before `from`.
        for i in from..=at {
            let op = *self.internal.slot(i);
            if op.block != block || is_taken(&op) {
                continue;
            }
            self.internal.take(i);
            self.internal.ops_released_for_erases += 1;
            last = last.max(issue_internal(
                &mut self.media,
                &mut self.ftl,
                &mut self.internal_data_ns,
                self.iu_shift,
                &op,
                at_ns,
            ));
        }
        last
    }

    fn issue_internal(&mut self, op: &NandOp, at_ns: u64) -> u64 {
        issue_internal(
            &mut self.media,
            &mut self.ftl,
            &mut self.internal_data_ns,
            self.iu_shift,
            op,
            at_ns,
        )
    }

    fn check_backlog(&self, now_ns: u64) -> Result<(), DeviceError> {
        let backlog = self.media.max_backlog_ns(now_ns);
        if backlog > MAX_WAIT_NS {
            return Err(DeviceError::Stalled {
                reason: format!(
                    "NAND work queued {:.1} s ahead of the host at {} ns (limit {} s): the workload outruns the media",
                    backlog as f64 * 1e-9,
                    now_ns,
                    MAX_WAIT_NS / 1_000_000_000
                ),
            });
        }
        Ok(())
    }

    /// Run background work (idle GC, folding, internal work held back for pacing) in the
    /// window `[from, until)` while the drive has no host work, once the host has been idle
    /// for `ftl.background_after_idle`: each step starts once the previous one is done, and
    /// only steps that start before `until_ns` run.
    fn background(&mut self, from_ns: u64, until_ns: u64) {
        if self.bg_done && self.internal.is_empty() {
            return;
        }
        let t = (from_ns.max(self.last_done_ns) + self.model.background_after_idle_ns)
            .max(self.bg_cursor_ns)
            .max(self.media.all_idle_ns());
        if t >= until_ns {
            return;
        }
        // The firmware keeps every die busy while the host is idle: each piece of work (a
        // victim's reads, programs and erase) goes to the dies at `t`, where its operations
        // queue behind the work each die already has, so victims on different dies run side
        // by side. Work stops being handed out once the die that would start the next piece
        // is booked to the end of the window, so the host finds at most one piece per die
        // still running when it comes back. (Handing out one piece after the previous had
        // ended used one die at a time: a 1/70 slice of the D5-P5430 drained ~300 of 1,800
        // queued victims in 30 idle minutes, and the writes after the idle time paid for
        // the rest.)
        //
        // Work held back for pacing goes first, a victim (up to its erase) at a time.
        while let Some(op) = self.internal.front() {
            if !is_taken(op) && self.media.unit_free_ns(op.block) >= until_ns {
                break;
            }
            while let Some(op) = self.internal.pop() {
                self.issue_internal(&op, t);
                if op.kind == NandOpKind::Erase {
                    break;
                }
            }
        }
        if !self.internal.is_empty() || self.bg_done {
            self.bg_cursor_ns = t;
            return;
        }
        let mut steps = 0;
        while steps < MAX_BACKGROUND_STEPS {
            steps += 1;
            self.ops.clear();
            if !self.ftl.background_step(&mut self.ops) && !self.refresh_step() {
                self.bg_done = true;
                break;
            }
            let Some(first) = self.ops.first() else {
                continue;
            };
            let starts_after_window = self.media.unit_free_ns(first.block) >= until_ns;
            self.schedule_ops(t, false);
            if starts_after_window {
                break;
            }
        }
        self.ops.clear();
        self.bg_cursor_ns = t;
    }

    /// One block of the firmware's data refresh, as idle work: after a power-off, the first
    /// idle time scans every block for data past half its retention time and not yet lost
    /// (the share at which reads start needing retries) and queues them; each step rewrites
    /// one. Data already lost is left (reads of it keep failing). Returns whether it moved a
    /// block.
    fn refresh_step(&mut self) -> bool {
        if std::mem::take(&mut self.refresh_pending) {
            let now = self.clock_ns + self.aging_ns;
            let r = self.model.retention;
            let pe = f64::from(self.model.geometry.pe_cycles);
            let counts = self.ftl.erase_counts();
            self.refresh_queue = (0..counts.len() as u32)
                .rev()
                .filter(|&b| {
                    let age_days =
                        now.saturating_sub(self.written_aging_ns[b as usize]) as f64 / 86_400e9;
                    let wear = f64::from(counts[b as usize]) / pe;
                    matches!(
                        flashlab_media::retention::read_retries(&r, wear, age_days),
                        Some(n) if n > 0
                    )
                })
                .collect();
        }
        while let Some(b) = self.refresh_queue.pop() {
            if self.ftl.refresh(b, &mut self.ops) {
                self.refreshed_blocks += 1;
                return true;
            }
        }
        false
    }

    /// Background GC beside host commands: while fewer blocks than the background threshold
    /// are free, one victim starts at `now_ns` if the previous one's work allows, and goes to
    /// the dies at once, so the command (and later ones) queue behind its reads, programs and
    /// erase on the dies it touches; the IUs it moves occupy a firmware core like any
    /// relocation. A victim's work, the longer of its span on the dies and its firmware time,
    /// is followed by a pause so that GC takes at most `ftl.gc_background_busy_share` of the
    /// time. Writes do not start it: they pay for their GC through foreground reclaim.
    fn busy_gc(&mut self, now_ns: u64) {
        let share = self.model.gc_busy_share;
        if share <= 0.0 || now_ns < self.busy_gc_next_ns || !self.ftl.below_background_threshold() {
            return;
        }
        let moved_before = self.relocated_ius();
        self.ops.clear();
        if !self.ftl.busy_gc_step(&mut self.ops) {
            self.ops.clear();
            return;
        }
        let (end, _) = self.schedule_ops(now_ns, false);
        let moved = self.relocated_ius() - moved_before;
        let cpu_ns = moved * self.model.controller.relocation_cpu_ns;
        let work_ns = (end - now_ns).max(cpu_ns).max(1);
        self.busy_gc_next_ns = now_ns + (work_ns as f64 / share).ceil() as u64;
    }

    /// IUs moved by GC, folding and wear levelling so far.
    fn relocated_ius(&self) -> u64 {
        let c = self.ftl.counters();
        c.gc_copied_ius + c.slc_folded_ius + c.wear_level_moved_ius + c.refreshed_ius
    }

    fn accept(&mut self, now_ns: u64) -> u64 {
        let accepted = now_ns.max(self.ctrl_next_ns);
        self.ctrl_next_ns = accepted + self.cmd_spacing_ns;
        accepted
    }

    fn check_range(&self, req: &IoRequest) -> Result<(), DeviceError> {
        req.check_range(self.model.user_bytes, self.model.logical_block_bytes)
    }

    /// Buffer space for `bytes` from `t0` (when it is granted), or why the drive stalls: a
    /// buffer that cannot take them (`need` names them) or a wait past [`MAX_WAIT_NS`] (`what`
    /// waited).
    #[inline]
    fn admit_to_buffer(
        &mut self,
        t0: u64,
        bytes: u64,
        need: impl Fn(u64) -> String,
        what: &str,
    ) -> Result<u64, DeviceError> {
        let admitted = self.buffer.admit(t0, bytes).map_err(|e| match e {
            BufferError::Deadlock { used_bytes, need_bytes } => DeviceError::Stalled {
                reason: format!(
                    "write buffer of {} bytes holds {used_bytes} bytes not yet assigned to a page program and cannot take {}",
                    self.buffer.capacity_bytes(),
                    need(need_bytes)
                ),
            },
        })?;
        if admitted - t0 > MAX_WAIT_NS {
            return Err(DeviceError::Stalled {
                reason: format!(
                    "{what} waited {:.1} s for write-buffer space (limit {} s): NAND programs are not keeping up",
                    (admitted - t0) as f64 * 1e-9,
                    MAX_WAIT_NS / 1_000_000_000
                ),
            });
        }
        Ok(admitted)
    }

    fn write(&mut self, t0: u64, req: &IoRequest) -> Result<u64, DeviceError> {
        if let Some(unit) = self.model.compression_unit_bytes {
            return self.write_compressed(t0, req, unit);
        }
        let iu = self.model.iu_bytes;
        let first = req.offset_bytes >> self.iu_shift;
        let end = req.offset_bytes + req.len_bytes;
        let last = (end - 1) >> self.iu_shift;
        let head_partial = req.offset_bytes & (iu - 1) != 0;
        let tail_partial = end & (iu - 1) != 0;
        // Large writes stream through the buffer in chunks of a quarter of it (IUs are a
        // power of two: a shift, not a divide per command).
        let chunk_ius = ((self.buffer.capacity_bytes() / 4) >> self.iu_shift).max(1);
        let mut done = t0;
        let mut lpn = first;
        let mut data_ns = t0;
        self.version = self.version.wrapping_add(1);
        while lpn <= last {
            let n = (last - lpn + 1).min(chunk_ius);
            let bytes = n * iu;
            if self.mapcache.is_some() {
                // The entries are loaded before they are updated; the data waits in the
                // buffer meanwhile, so the write's completion does not wait for the load.
                self.map_lookup(data_ns, lpn, lpn + n - 1, true)?;
            }
            let admitted = self.admit_to_buffer(
                data_ns,
                bytes,
                |need_bytes| format!("{need_bytes} more"),
                "a write",
            )?;
            self.host.buffer_wait_ns += admitted - data_ns;
            // Only the host's bytes cross the link (a partial IU is merged in the buffer).
            let chunk_first_byte = (lpn * iu).max(req.offset_bytes);
            let chunk_end_byte = ((lpn + n) * iu).min(end);
            data_ns = self.link_transfer(admitted, chunk_end_byte - chunk_first_byte, false);
            let head = head_partial && lpn == first;
            let tail = tail_partial && lpn + n - 1 == last;
            match self.model.host_allocation {
                HostAllocation::Striped => self.ftl.write(
                    lpn as u32,
                    n as u32,
                    head,
                    tail,
                    self.version,
                    &mut self.ops,
                ),
                HostAllocation::LeastBusy => {
                    // A page's program starts no earlier than its data is in: dies free
                    // before then are equally free, and stripe order breaks the tie.
                    let media = &self.media;
                    self.ftl.write_placed(
                        lpn as u32,
                        n as u32,
                        head,
                        tail,
                        self.version,
                        &mut self.ops,
                        |block| media.unit_free_ns(block).max(data_ns),
                    );
                }
            }
            let (_, rmw_done) = self.schedule_ops(data_ns, true);
            done = done.max(data_ns).max(rmw_done);
            lpn += n;
        }
        Ok(done)
    }

    /// [`Self::write`] on a compressing drive: each IU of `unit_bytes` (a compression unit)
    /// takes as many granules (the FTL's IUs) as its compressed data fills. The buffer and
    /// the controller's write data path carry the compressed bytes, the link the host's.
    fn write_compressed(
        &mut self,
        t0: u64,
        req: &IoRequest,
        unit_bytes: u64,
    ) -> Result<u64, DeviceError> {
        let granule = self.model.iu_bytes;
        let span = unit_bytes / granule;
        let unit_shift = unit_bytes.trailing_zeros();
        let first = req.offset_bytes >> unit_shift;
        let end = req.offset_bytes + req.len_bytes;
        let last = (end - 1) >> unit_shift;
        let head_partial = req.offset_bytes & (unit_bytes - 1) != 0;
        let tail_partial = end & (unit_bytes - 1) != 0;
        let stored = stored_granules(unit_bytes, granule, req.compressible_percent);
        let stored_unit_bytes = stored * granule;
        let chunk_units = (self.buffer.capacity_bytes() / 4 / stored_unit_bytes).max(1);
        let mut done = t0;
        let mut data_ns = t0;
        let mut unit = first;
        self.version = self.version.wrapping_add(1);
        while unit <= last {
            let n = (last - unit + 1).min(chunk_units);
            let admitted = self.admit_to_buffer(
                data_ns,
                n * stored_unit_bytes,
                |need_bytes| format!("{need_bytes} more (compressed)"),
                "a write",
            )?;
            self.host.buffer_wait_ns += admitted - data_ns;
            let host_bytes =
                ((unit + n) * unit_bytes).min(end) - (unit * unit_bytes).max(req.offset_bytes);
            data_ns = self.transfer(admitted, host_bytes, host_bytes * stored / span, false);
            // As `write`: with least-busy allocation a page goes to the die free soonest.
            let media = &self.media;
            let free_at = |block| media.unit_free_ns(block).max(data_ns);
            let placed =
                matches!(self.model.host_allocation, HostAllocation::LeastBusy).then_some(&free_at);
            for u in unit..unit + n {
                let partial = (head_partial && u == first) || (tail_partial && u == last);
                self.ftl.write_compressed(
                    (u * span) as u32,
                    stored as u32,
                    span as u32,
                    partial,
                    self.version,
                    &mut self.ops,
                    placed,
                );
            }
            let (_, rmw_done) = self.schedule_ops(data_ns, true);
            done = done.max(data_ns).max(rmw_done);
            unit += n;
        }
        Ok(done)
    }

    /// Program every open page and wait for all host data to be on NAND.
    fn make_durable(&mut self, t0: u64) -> u64 {
        self.ops.clear();
        self.ftl.flush(&mut self.ops);
        let (last, _) = self.schedule_ops(t0, true);
        last.max(self.host_program_done_ns).max(t0)
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

/// Place one internal operation (`data_ns`: the drive's `internal_data_ns`). An internal
/// program carries data read by the internal reads before it. A real controller lets such
/// reads overtake queued programs, so the program waits for the read's own latency (array +
/// transfer), not for the FIFO queue of the die the victim sits on: waiting for that queue
/// would idle every other die.
// Inlined: one call per internal operation, most from `release_internal`'s loops. A free
// function so those loops can read the operations in place from the pacing queue.
#[inline(always)]
fn issue_internal(
    media: &mut NandTiming,
    ftl: &mut Ftl,
    data_ns: &mut u64,
    iu_shift: u32,
    op: &NandOp,
    at_ns: u64,
) -> u64 {
    let bytes = u64::from(op.ius) << iu_shift;
    match op.kind {
        NandOpKind::Read => {
            let (done, latency_ns) = media.read(op.block, op.page, bytes, op.slc, false, at_ns);
            *data_ns = (*data_ns).max(at_ns + latency_ns);
            done
        }
        NandOpKind::Program => media.program(op.block, bytes, op.slc, at_ns.max(*data_ns)),
        NandOpKind::Erase => {
            ftl.erase_done(op.block);
            media.erase(op.block, op.slc, at_ns)
        }
    }
}

impl BlockDevice for Ssd {
    fn capacity_bytes(&self) -> u64 {
        self.model.user_bytes
    }

    /// A read's or a write's map entry is the one cache miss a large drive's host path cannot
    /// avoid (a write replaces the entry's old copy): start loading it while earlier requests
    /// are simulated.
    fn prefetch(&self, req: &IoRequest) {
        if matches!(req.kind, IoKind::Read | IoKind::Write) {
            self.ftl
                .prefetch((req.offset_bytes >> self.iu_shift) as u32);
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

    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        let ns = self.namespace_of(req.offset_bytes);
        self.submit_in(now_ns, req, ns)
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        self.clock_ns = self.clock_ns.max(until_ns);
        self.background(from_ns, until_ns);
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
        self.check_range(req)?;
        if req.kind == IoKind::Write && self.ftl.read_only() {
            return Err(self.read_only_error());
        }
        if req.kind == IoKind::Write {
            // The write invalidates the old copy of its first IU (the next ones share its
            // line or follow it): load that reverse-map line while the work below runs.
            self.ftl
                .prefetch_old_copy((req.offset_bytes >> self.iu_shift) as u32);
        }
        // Submissions move forward and every operation starts at or after its submission.
        self.media.advance_to(now_ns);
        self.clock_ns = self.clock_ns.max(now_ns);
        for l in &mut self.link {
            l.forget_before(now_ns);
        }
        self.controller.forget_before(now_ns);
        if now_ns > self.last_done_ns {
            self.background(self.last_done_ns, now_ns);
        }
        self.release_to_idle_dies(now_ns);
        let accepted = self.accept(now_ns);
        let mut t0 = accepted + self.model.command_overhead_ns;
        // Firmware work of the command on the controller's cores (none by default).
        if matches!(req.kind, IoKind::Read | IoKind::Write) {
            t0 = self.controller.command(req.kind == IoKind::Write, t0);
        }
        // IUs the FTL moves for this command cost firmware time, if relocation has any.
        let relocation_costs = self.controller.model().relocation_cpu_ns > 0;
        let moved_before = if relocation_costs {
            self.relocated_ius()
        } else {
            0
        };
        if req.kind != IoKind::Write {
            self.busy_gc(accepted);
        }
        let durable = !self.model.plp;
        if matches!(req.kind, IoKind::Write | IoKind::Trim) {
            // Timing state of the old data must not serve a later read.
            let (from, to) = self.codewords(req.offset_bytes, req.offset_bytes + req.len_bytes);
            self.readbuf.invalidate(from, to);
        }
        let done = match req.kind {
            IoKind::Read => {
                self.host.read_commands += 1;
                self.host.bytes_read += req.len_bytes;
                self.read(t0, req)?
            }
            IoKind::Write => {
                self.host.write_commands += 1;
                self.host.bytes_written += req.len_bytes;
                self.bg_done = false;
                let d = self.write(t0, req)?;
                if req.fua && durable {
                    self.make_durable(d)
                } else {
                    d
                }
            }
            IoKind::Trim => {
                self.host.trim_commands += 1;
                self.bg_done = false;
                let iu = self.model.iu_bytes;
                // Only whole IUs are deallocated; partial ones keep their data. A compressing
                // drive's IU is its compression unit, whose data spans its granules.
                let unit = self.model.compression_unit_bytes.unwrap_or(iu);
                let first = req.offset_bytes.div_ceil(unit) * (unit / iu);
                let end = (req.offset_bytes + req.len_bytes) / unit * (unit / iu);
                if end > first {
                    self.ftl.trim(first as u32, (end - first) as u32);
                }
                t0
            }
            IoKind::Flush => {
                self.host.flush_commands += 1;
                if durable {
                    self.make_durable(t0)
                } else {
                    t0
                }
            }
        };
        self.check_backlog(now_ns)?;
        if relocation_costs {
            let moved = self.relocated_ius().saturating_sub(moved_before);
            self.controller.relocated(accepted, moved);
        }
        self.last_done_ns = self.last_done_ns.max(done);
        self.meter_command(accepted, done, req);
        let h = &mut self.ns_host[ns];
        match req.kind {
            IoKind::Read => {
                h.read_commands += 1;
                h.bytes_read += req.len_bytes;
            }
            IoKind::Write => {
                h.write_commands += 1;
                h.bytes_written += req.len_bytes;
            }
            IoKind::Trim => h.trim_commands += 1,
            IoKind::Flush => h.flush_commands += 1,
        }
        // The host's submission ends when the command is in the drive's queue, at once: a
        // command waiting there for the controller to take it (its command rate, `accepted`)
        // is queueing inside the drive, which fio counts as completion latency.
        Ok(Completion {
            accepted_ns: now_ns,
            done_ns: done,
        })
    }
}

/// Granules (1 to `unit_bytes / granule_bytes`) an IU of `unit_bytes` whose data a compressor
/// shrinks by `compressible_percent` fills; data that does not shrink is stored as it is.
fn stored_granules(unit_bytes: u64, granule_bytes: u64, compressible_percent: u8) -> u64 {
    let span = unit_bytes / granule_bytes;
    let kept_bytes = unit_bytes * (100 - u64::from(compressible_percent.min(100))) / 100;
    kept_bytes.div_ceil(granule_bytes).clamp(1, span)
}

#[cfg(test)]
mod compression_tests {
    #[test]
    fn stored_granules_round_up_and_never_exceed_the_unit() {
        use super::stored_granules;
        assert_eq!(stored_granules(4096, 512, 0), 8);
        assert_eq!(stored_granules(4096, 512, 100), 1);
        assert_eq!(stored_granules(4096, 512, 50), 4);
        // 40% off leaves 2,457.6 bytes: five granules.
        assert_eq!(stored_granules(4096, 512, 40), 5);
        assert_eq!(stored_granules(4096, 1024, 99), 1);
    }
}

#[cfg(test)]
mod queue_cap_tests {
    use super::*;

    #[test]
    fn the_pacing_queue_defers_at_most_the_reserve_and_holds_it_in_the_least_gainful_victims() {
        // generic-tlc-256gb: 32 units, 700 blocks each, 768 pages of 4 IUs, 256 GB user, a
        // reserve of 2 blocks per unit: 64 blocks' IUs, and 8.6% effective spare.
        let (units, ipb) = (32, 768 * 4);
        let user_ius = 256_000_000_000 / 4096;
        assert_eq!(internal_queue_gain_ius(64, ipb), 64 * ipb);
        let full = internal_queue_victims(units, units * 700, 64, ipb, user_ius);
        // Half or a quarter of its dies with the same effective spare: the same per unit.
        let half = internal_queue_victims(16, 16 * 700, 32, ipb, user_ius / 2);
        let quarter = internal_queue_victims(8, 8 * 700, 16, ipb, user_ius / 4);
        assert!(full.abs_diff(2 * half) <= 2 && full.abs_diff(4 * quarter) <= 4);
        // A victim gains at most a block, and greedy's gains at least the spare share of one:
        // between the reserve's blocks and the reserve over the spare (8.6%: ~744).
        assert!((64..=64 * 100 / 8).contains(&full), "{full}");
        // tiny-test-1gb: 4 units, 88 blocks of 192 x 4 IUs, 4.8% effective spare: the bound
        // (8 / 0.048 ~ 167 victims) fits in its 352 blocks.
        let tiny = internal_queue_victims(4, 4 * 88, 8, 192 * 4, 1_000_000_000 / 4096);
        assert!((8..4 * 88).contains(&tiny), "{tiny}");
    }
}
