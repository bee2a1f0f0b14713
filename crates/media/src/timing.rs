//! When NAND operations finish: busy-until times per die (or plane), booked intervals per
//! channel.
//!
//! A die (or plane) is FIFO: an operation starts on it no earlier than the end of the
//! previous reservation on it. A channel books each transfer into its earliest free gap (see
//! `channel`), since a transfer that must wait for a busy die should not hold up transfers of
//! the other dies on the channel. The model follows cache-register operation, which current NAND
//! supports and controllers use:
//! - read: the array works (tR), then the data moves out over the channel; the die is free
//!   again once the array part is done (the data waits in the cache register);
//! - program: data moves in over the channel into the cache register, then the array works
//!   (tPROG) once the die is free;
//! - erase: array only.
//!
//! Nothing allocates after construction.

use crate::channel::{Channel, ChannelMerge};
use crate::power::{EnergyMeter, EnergyTotals, MediaEnergy, PowerCap};
use crate::sched::{wait, Kind, SchedulerConfig, UnitQueues, Waits, WAIT_CAUSES};
use crate::thermal::{Thermal, ThermalModel, ThermalState};
use crate::variation::{OpDraw, OpKindDraw, OpVariation};
use crate::{CellTimings, FastDiv, NandGeometry};
use flashlab_engine::time::transfer_ns;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaOpKind {
    Read = 0,
    Program = 1,
    Erase = 2,
}

/// One operation on one page (or block, for erase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaOp {
    pub kind: MediaOpKind,
    /// Global block id (see [`NandGeometry::locate`]).
    pub block: u32,
    /// Page within the block (reads on parts without independent plane reads pair by it).
    pub page: u32,
    /// Bytes moved over the channel (0 for erase).
    pub bytes: u64,
    /// The block is used in SLC mode.
    pub slc: bool,
    /// A read for a host command (under read priority it passes internal reads).
    pub host: bool,
}

/// Channel booking lanes (see [`Channel::book_in_lane`]): a read's transfer is wished for
/// when its die's queue has read it, often far ahead; a program's is wished for about now.
const READ_LANE: usize = 0;
const PROGRAM_LANE: usize = 1;

/// Cumulative activity, for utilisation and energy estimates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MediaCounters {
    pub reads: u64,
    pub programs: u64,
    pub erases: u64,
    pub bytes_read: u64,
    pub bytes_programmed: u64,
    /// Sum of array busy time over all dies/planes.
    pub array_busy_ns: u64,
    /// Sum of busy time over all channels.
    pub channel_busy_ns: u64,
    /// Programs suspended for a read (each suspension counted).
    pub program_suspends: u64,
    /// Erases suspended for a read.
    pub erase_suspends: u64,
    /// Reads that joined a read of another plane of their die as one multi-plane read
    /// (die-level reads only).
    pub paired_reads: u64,
    /// Programs that joined a program of another plane of their die as one multi-plane
    /// program (die-level programs only).
    pub paired_programs: u64,
    /// Programs of native (not SLC-mode) pages.
    pub native_programs: u64,
    /// Of [`Self::paired_programs`], those of native pages.
    pub paired_native_programs: u64,
    /// Array reads for host commands.
    pub host_reads: u64,
    /// What those reads waited for, summed by cause (ns; [`crate::sched::WAIT_CAUSES`]).
    pub host_read_wait_ns: Waits,
    /// Of those reads, how many waited for each cause at all.
    pub host_reads_waiting: Waits,
}

/// Operation classes: kind and SLC mode, `kind * 2 + slc`. An operation's array time and
/// energy depend on its class only, so the per-operation bookkeeping is one count per class
/// and the totals (array busy time, energy by kind) are products taken when asked.
const CLASSES: usize = 6;

#[inline(always)]
fn class_of(kind: MediaOpKind, slc: bool) -> usize {
    kind as usize * 2 + usize::from(slc)
}

/// Energy metering of the media.
#[derive(Debug, Clone)]
struct MediaPower {
    energy: MediaEnergy,
    /// Array energy per operation class.
    array_pj: [u64; CLASSES],
    cap_pj_per_byte: u64,
    meter: EnergyMeter,
    /// Operations per class and bytes moved when metering (re)started: the energy totals
    /// count what came after.
    ops_base: [u64; CLASSES],
    bytes_base: u64,
    cap: Option<PowerCap>,
}

flashlab_engine::impl_state!(MediaPower {
    meter, ops_base, bytes_base, cap
} skip { energy, array_pj, cap_pj_per_byte });

/// Timing state of all dies and channels.
#[derive(Debug, Clone)]
pub struct NandTiming {
    geometry: NandGeometry,
    timings: CellTimings,
    channels: Vec<Channel>,
    /// One entry per plane when multi-plane is on, else per die.
    unit_free_ns: Vec<u64>,
    /// Block id to global plane index, without a divide per operation.
    plane_of_block: FastDiv,
    /// Per global plane: (index into `unit_free_ns`, channel).
    plane_route: Vec<(u32, u32)>,
    /// Array time per operation class (the average, see `variation`).
    array_ns: [u64; CLASSES],
    /// How each operation's time departs from its class's average (None: every operation
    /// of a class takes its average).
    variation: Option<OpVariation>,
    /// Channel time per transfer of whole 4 KiB units, by the count of units (a relocation
    /// read moves its page's live IUs, one to a page's worth, and its programs a whole
    /// page: a single remembered size missed on most operations with pages of several IUs).
    xfer_by_4k: [u64; XFER_4K_SIZES],
    /// Channel time of the last other transfer size asked for.
    xfer_memo: (u64, u64),
    /// The latest of all free times (they only grow, so a running max; asked every command).
    all_free_ns: u64,
    /// Energy metering and power cap (None: not metered).
    power: Option<MediaPower>,
    /// A power cap is set (checked on every operation).
    capped: bool,
    /// Per-unit queues when the scheduler may reorder (None: plain FIFO busy-until times).
    /// With die-level reads the queues are per die (see `die_queues`).
    queues: Option<UnitQueues>,
    /// Units are planes but a read holds its whole die (see
    /// [`NandGeometry::independent_plane_reads`]).
    die_reads: bool,
    /// Die-level reads under a reordering scheduler: one queue per die holds every
    /// operation of the die (a part that reads and programs its planes only together is
    /// busy as a whole, as an ONFI LUN without independent plane operations is), and each
    /// plane's free time follows its die's queue.
    die_queues: bool,
    /// With die-level reads: per die, the multi-plane read placed last (empty otherwise).
    die_groups: Vec<ReadGroup>,
    /// With die queues: per die, what the read of its group waited for, by cause (a read
    /// joining the group waits for the same; empty otherwise).
    die_group_waits: Vec<Waits>,
    /// Units are planes but a program holds its whole die (see
    /// [`NandGeometry::independent_plane_programs`]); under a reordering scheduler it sits
    /// in every plane's queue.
    die_programs: bool,
    /// With die-level programs: per die and cell mode (index `die * 2 + slc`), the
    /// multi-plane program of that mode placed last (empty otherwise). One per mode, so a
    /// program pairs with the die's open group of its own mode when a program of the other
    /// mode was placed in between (a fold's native programs among the host's SLC ones).
    program_groups: Vec<ReadGroup>,
    /// Per plane unit with die-level programs: its die and its plane within the die (a
    /// load instead of a division per program; empty otherwise).
    die_plane_of_unit: Vec<(u32, u32)>,
    /// No operation is placed before this any more (the host's latest submission).
    floor_ns: u64,
    /// What the channels may forget (reservations ended by then, see
    /// [`Channel::forget_before`]), applied to a channel when it next books rather than to
    /// every channel on every submission: the same state wherever a booking looks. None
    /// after a reset, until the next submission.
    forget_ns: Option<u64>,
    /// Operations per class.
    ops: [u64; CLASSES],
    /// Bytes moved per kind (read, program, erase).
    bytes: [u64; 3],
    channel_busy_ns: u64,
    program_suspends: u64,
    erase_suspends: u64,
    /// Reads that joined another plane's read of their die (no array time of their own).
    paired_reads: u64,
    /// Programs that joined another plane's program of their die.
    paired_programs: u64,
    /// Of those, programs of native pages.
    paired_native_programs: u64,
    /// Host reads and their waits by cause (see [`MediaCounters`]).
    host_reads: u64,
    host_read_wait_ns: Waits,
    host_reads_waiting: Waits,
}

// Busy-until times, queues, groups, counters and meters; geometry, timings and what is
// derived from them are configuration.
flashlab_engine::impl_state!(NandTiming {
    channels, unit_free_ns, xfer_memo, all_free_ns, power, queues, die_groups,
    die_group_waits, program_groups, floor_ns, forget_ns, ops, bytes, channel_busy_ns, program_suspends,
    erase_suspends, paired_reads, paired_programs, paired_native_programs, host_reads, host_read_wait_ns,
    host_reads_waiting,
} skip {
    geometry, timings, plane_of_block, plane_route, array_ns, variation, xfer_by_4k, capped, die_reads,
    die_queues, die_programs, die_plane_of_unit,
} fixed {
    channels, unit_free_ns, die_groups, die_group_waits, program_groups,
} check NandTiming::check_loaded);

impl NandTiming {
    pub fn new(geometry: NandGeometry, timings: CellTimings) -> Self {
        Self::with_scheduler(geometry, timings, SchedulerConfig::default())
    }

    /// A timing model whose dies order work by `sched` (read priority, suspend).
    pub fn with_scheduler(
        geometry: NandGeometry,
        timings: CellTimings,
        sched: SchedulerConfig,
    ) -> Self {
        let units = if geometry.multi_plane {
            geometry.planes()
        } else {
            geometry.dies()
        };
        let plane_route = (0..geometry.planes())
            .map(|p| {
                let (die, plane) = (p / geometry.planes_per_die, p % geometry.planes_per_die);
                let unit = if geometry.multi_plane {
                    die * geometry.planes_per_die + plane
                } else {
                    die
                };
                (unit, geometry.channel_of_die(die))
            })
            .collect();
        let t = &timings;
        let die_level =
            |independent: bool| geometry.multi_plane && !independent && geometry.planes_per_die > 1;
        let die_reads = die_level(geometry.independent_plane_reads);
        let die_programs = die_level(geometry.independent_plane_programs);
        let die_queues = die_reads && sched.reorders();
        debug_assert!(
            !die_queues || die_programs,
            "die queues need die-level programs"
        );
        Self {
            geometry,
            timings,
            channels: vec![Channel::new(); geometry.channels as usize],
            unit_free_ns: vec![0; units as usize],
            plane_of_block: FastDiv::new(geometry.blocks_per_plane.max(1)),
            plane_route,
            array_ns: [
                t.t_read_ns,
                t.slc_t_read_ns,
                t.t_prog_ns,
                t.slc_t_prog_ns,
                t.t_erase_ns,
                t.t_erase_ns,
            ],
            variation: None,
            xfer_by_4k: std::array::from_fn(|k| {
                channel_ns_at(k as u64 * 4096, geometry.channel_bytes_per_s)
            }),
            xfer_memo: (0, 0),
            all_free_ns: 0,
            queues: sched.reorders().then(|| {
                let queues = if die_queues { geometry.dies() } else { units };
                UnitQueues::new(queues as usize, sched)
            }),
            die_reads,
            die_queues,
            die_group_waits: if die_queues {
                vec![[0; WAIT_CAUSES.len()]; geometry.dies() as usize]
            } else {
                Vec::new()
            },
            die_groups: if die_reads {
                vec![ReadGroup::NONE; geometry.dies() as usize]
            } else {
                Vec::new()
            },
            die_programs,
            die_plane_of_unit: if die_programs {
                (0..units)
                    .map(|u| (u / geometry.planes_per_die, u % geometry.planes_per_die))
                    .collect()
            } else {
                Vec::new()
            },
            program_groups: if die_programs {
                vec![ReadGroup::NONE; 2 * geometry.dies() as usize]
            } else {
                Vec::new()
            },
            floor_ns: 0,
            forget_ns: None,
            power: None,
            capped: false,
            ops: [0; CLASSES],
            bytes: [0; 3],
            channel_busy_ns: 0,
            program_suspends: 0,
            erase_suspends: 0,
            paired_reads: 0,
            paired_programs: 0,
            paired_native_programs: 0,
            host_reads: 0,
            host_read_wait_ns: [0; WAIT_CAUSES.len()],
            host_reads_waiting: [0; WAIT_CAUSES.len()],
        }
    }

    /// Loaded timing is one a run could have left: every free time, the floor and the
    /// channels' horizon before 2^62 ns, the running maximum at least every unit's free
    /// time; a queue per die or per unit as the configuration has them; each multi-plane
    /// group of an operation class, over the die's planes, within itself.
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let latest = self.unit_free_ns.iter().copied().max().unwrap_or(0);
        if latest > self.all_free_ns
            || self.all_free_ns > limit
            || self.floor_ns > limit
            || self.forget_ns.is_some_and(|t| t > limit)
        {
            return Err(format!(
                "the dies' timing: units free up to {latest} ns, all free at {} ns, nothing placed before {} ns, channels forget before {:?} ns (valid: times before 2^62 ns, all free at the latest unit's time or after)",
                self.all_free_ns, self.floor_ns, self.forget_ns
            ));
        }
        if let Some(q) = &self.queues {
            let want = if self.die_queues {
                self.geometry.dies() as usize
            } else {
                self.unit_free_ns.len()
            };
            if q.unit_count() != want {
                return Err(format!(
                    "the dies' scheduler has {} queues where this configuration has {want}",
                    q.unit_count()
                ));
            }
        }
        let planes = 1u64
            .checked_shl(self.geometry.planes_per_die)
            .map_or(u64::MAX, |b| b - 1);
        for g in self.die_groups.iter().chain(&self.program_groups) {
            if usize::from(g.class) >= CLASSES
                || g.planes & !planes != 0
                || g.start_ns > g.done_ns
                || g.done_ns > limit
            {
                return Err(format!(
                    "a die's multi-plane group: class {} over planes {:#x} from {} to {} ns (valid: a class below {CLASSES}, planes within {planes:#x}, start before end before 2^62 ns)",
                    g.class, g.planes, g.start_ns, g.done_ns
                ));
            }
        }
        // Each operation holds its unit for its array time: all of them together fit in the
        // units' time up to 2^62 ns (so the busy-time and energy products cannot overflow).
        let busy: u128 = self
            .ops
            .iter()
            .zip(&self.array_ns)
            .map(|(&n, &t)| u128::from(n) * u128::from(t))
            .sum();
        let room = self.unit_free_ns.len() as u128 * u128::from(limit);
        if busy > room {
            return Err(format!(
                "the dies' operation counts ops {:?} take {busy} ns of array time, more than {} units have up to 2^62 ns",
                self.ops,
                self.unit_free_ns.len()
            ));
        }
        let Some(moved) = self.bytes.iter().try_fold(0u64, |a, &b| a.checked_add(b)) else {
            return Err(format!(
                "the dies' byte counts {:?} add up past 2^64",
                self.bytes
            ));
        };
        if let Some(p) = &self.power {
            if p.ops_base.iter().zip(&self.ops).any(|(b, n)| b > n) || p.bytes_base > moved {
                return Err(format!(
                    "the media energy meter started at ops_base {:?} and bytes_base {} (valid: at most the operations {:?} and bytes {} so far)",
                    p.ops_base, p.bytes_base, self.ops, moved
                ));
            }
        }
        Ok(())
    }

    /// Which reserved intervals the channels merge when they hold too many (before any booking).
    pub fn set_channel_merge(&mut self, merge: ChannelMerge) {
        self.channels = vec![Channel::with_merge(merge); self.channels.len()];
    }

    pub fn geometry(&self) -> &NandGeometry {
        &self.geometry
    }

    pub fn timings(&self) -> &CellTimings {
        &self.timings
    }

    pub fn counters(&self) -> MediaCounters {
        let n = &self.ops;
        MediaCounters {
            reads: n[0] + n[1],
            programs: n[2] + n[3],
            erases: n[4] + n[5],
            bytes_read: self.bytes[0],
            bytes_programmed: self.bytes[1],
            array_busy_ns: n.iter().zip(&self.array_ns).map(|(n, t)| n * t).sum(),
            channel_busy_ns: self.channel_busy_ns,
            program_suspends: self.program_suspends,
            erase_suspends: self.erase_suspends,
            paired_reads: self.paired_reads,
            paired_programs: self.paired_programs,
            native_programs: n[class_of(MediaOpKind::Program, false)],
            paired_native_programs: self.paired_native_programs,
            host_reads: self.host_reads,
            host_read_wait_ns: self.host_read_wait_ns,
            host_reads_waiting: self.host_reads_waiting,
        }
    }

    /// Count a host read's wait of `ns` for `cause`.
    #[inline(always)]
    fn host_wait(&mut self, cause: usize, ns: u64) {
        if ns > 0 {
            self.host_read_wait_ns[cause] += ns;
            self.host_reads_waiting[cause] += 1;
        }
    }

    fn bytes_moved(&self) -> u64 {
        self.bytes.iter().sum()
    }

    /// Meter the energy of every operation from now on; with `cap_budget_uw`, delay
    /// operations so the energy booked per [`crate::power::CAP_WINDOW_NS`] stays within that
    /// average power. The booking counts `cap_pj_per_byte` more per byte an operation moves
    /// (energy spent elsewhere on the same data, such as the host transfer, which the media
    /// must leave room for).
    pub fn set_power(
        &mut self,
        energy: MediaEnergy,
        cap_budget_uw: Option<u64>,
        cap_pj_per_byte: u64,
    ) {
        let e = &energy;
        self.power = Some(MediaPower {
            energy,
            array_pj: [
                e.read_pj,
                e.slc_read_pj,
                e.program_pj,
                e.slc_program_pj,
                e.erase_pj,
                e.erase_pj,
            ],
            cap_pj_per_byte,
            meter: EnergyMeter::new(),
            ops_base: self.ops,
            bytes_base: self.bytes_moved(),
            cap: cap_budget_uw.map(PowerCap::new),
        });
        self.capped = cap_budget_uw.is_some();
    }

    /// Follow the drive's temperature (after [`Self::set_power`]) and throttle the media to
    /// `throttled_budget_uw` while it is too hot (see [`crate::thermal`]); the cap of the
    /// power state, if any, holds otherwise. `time_scale` and `power_scale` turn the simulated
    /// time and media power into the whole drive's.
    pub fn set_thermal(
        &mut self,
        model: ThermalModel,
        time_scale: f64,
        power_scale: f64,
        throttled_budget_uw: u64,
    ) {
        let Some(p) = &mut self.power else {
            return;
        };
        let cap = p.cap.take().unwrap_or_else(|| PowerCap::new(u64::MAX));
        let thermal = Thermal::new(model, time_scale, power_scale);
        p.cap = Some(cap.with_thermal(thermal, throttled_budget_uw));
        self.capped = true;
    }

    /// The drive was powered off: it has cooled to the air around it.
    pub fn cool(&mut self) {
        if let Some(c) = self.power.as_mut().and_then(|p| p.cap.as_mut()) {
            c.cool();
        }
    }

    /// The drive's temperature so far (None without [`Self::set_thermal`]).
    pub fn thermal_state(&self) -> Option<ThermalState> {
        self.power.as_ref()?.cap.as_ref()?.thermal_state()
    }

    /// Media energy per [`crate::power::METER_WINDOW_NS`] window and in total by kind (None
    /// without [`Self::set_power`]).
    pub fn energy(&self) -> Option<(&[u64], EnergyTotals)> {
        let p = self.power.as_ref()?;
        let n: [u64; CLASSES] = std::array::from_fn(|c| self.ops[c] - p.ops_base[c]);
        let a = &p.array_pj;
        let totals = EnergyTotals {
            read_pj: n[0] * a[0] + n[1] * a[1],
            program_pj: n[2] * a[2] + n[3] * a[3],
            erase_pj: n[4] * a[4] + n[5] * a[5],
            channel_pj: (self.bytes_moved() - p.bytes_base) * p.energy.channel_pj_per_byte,
        };
        Some((p.meter.windows_pj(), totals))
    }

    /// Forget the energy used so far (a new measurement starts).
    pub fn clear_energy(&mut self) {
        let (ops, bytes) = (self.ops, self.bytes_moved());
        if let Some(p) = &mut self.power {
            p.meter.clear();
            p.ops_base = ops;
            p.bytes_base = bytes;
        }
    }

    /// Time to move `bytes` over one channel.
    #[inline]
    pub fn channel_ns(&self, bytes: u64) -> u64 {
        if let Some(&ns) = self.xfer_table(bytes) {
            return ns;
        }
        // Callers ask for the size just scheduled (a relocation read's data time): no divide.
        if bytes == self.xfer_memo.0 {
            return self.xfer_memo.1;
        }
        channel_ns_at(bytes, self.geometry.channel_bytes_per_s)
    }

    /// The table's channel time for `bytes`, if it is a size the table holds.
    #[inline(always)]
    fn xfer_table(&self, bytes: u64) -> Option<&u64> {
        if bytes.is_multiple_of(4096) {
            self.xfer_by_4k.get((bytes / 4096) as usize)
        } else {
            None
        }
    }

    #[inline(always)]
    fn unit_and_channel(&self, block: u32) -> (usize, usize) {
        let (unit, ch) = self.plane_route[self.plane_of_block.div(block) as usize];
        (unit as usize, ch as usize)
    }

    /// [`Self::channel_ns`], remembering the last size the table does not hold.
    #[inline(always)]
    fn channel_ns_memo(&mut self, bytes: u64) -> u64 {
        if let Some(&ns) = self.xfer_table(bytes) {
            return ns;
        }
        self.channel_ns_untabled(bytes)
    }

    /// [`Self::channel_ns_memo`] for a size the table does not hold.
    #[inline(never)]
    fn channel_ns_untabled(&mut self, bytes: u64) -> u64 {
        if bytes != self.xfer_memo.0 {
            self.xfer_memo = (
                bytes,
                channel_ns_at(bytes, self.geometry.channel_bytes_per_s),
            );
        }
        self.xfer_memo.1
    }

    /// Reserve the resources `op` needs, starting no earlier than `now_ns`; returns when the
    /// operation is complete (data out on the channel for a read, array done otherwise).
    #[inline(always)]
    pub fn schedule(&mut self, op: &MediaOp, now_ns: u64) -> u64 {
        self.schedule_xfer(op, now_ns).0
    }

    /// [`Self::schedule`], also returning the operation's channel time (a read's latency
    /// needs it: found once, not looked up again).
    #[inline(always)]
    fn schedule_xfer(&mut self, op: &MediaOp, now_ns: u64) -> (u64, u64, u64) {
        let class = class_of(op.kind, op.slc);
        let (array_ns, decode_ns) = self.op_times(op, class);
        let at = if self.capped {
            self.admit_capped(class, op.bytes, now_ns)
        } else {
            now_ns
        };
        let xfer_ns = self.channel_ns_memo(op.bytes);
        if op.host {
            self.host_wait(wait::POWER_CAP, at - now_ns);
        }
        let (done, start) = self.place(op, class, array_ns, xfer_ns, at);
        if let Some(p) = &mut self.power {
            p.meter.charge(
                start,
                p.array_pj[class] + op.bytes * p.energy.channel_pj_per_byte,
            );
        }
        (done + decode_ns, xfer_ns, array_ns + decode_ns)
    }

    /// The array time of `op` of `class` and, for a read, its decoder's time after the
    /// transfer: the class's average and no decode time without [`Self::set_variation`].
    #[inline(always)]
    fn op_times(&self, op: &MediaOp, class: usize) -> (u64, u64) {
        let average_ns = self.array_ns[class];
        let Some(v) = &self.variation else {
            return (average_ns, 0);
        };
        let draw = OpDraw {
            kind: match op.kind {
                MediaOpKind::Read => OpKindDraw::Read,
                MediaOpKind::Program => OpKindDraw::Program,
                MediaOpKind::Erase => OpKindDraw::Erase,
            },
            class,
            slc: op.slc,
            block: op.block,
            page: op.page,
            nth: self.ops[class],
        };
        let decode_ns = if op.kind == MediaOpKind::Read {
            v.decode_ns(draw)
        } else {
            0
        };
        (v.array_ns(draw, average_ns), decode_ns)
    }

    /// Vary each operation's time by its page type, from operation to operation, and by a
    /// read's decode iterations (see [`crate::variation`]).
    pub fn set_variation(&mut self, variation: OpVariation) {
        self.variation = Some(variation);
    }

    /// A read of `bytes` from `block`, as [`Self::schedule`]: (completion, its own latency:
    /// array and transfer time, without any wait). Callers that hold an operation's parts
    /// skip building a [`MediaOp`] and the dispatch on its kind.
    #[inline(always)]
    pub fn read(
        &mut self,
        block: u32,
        page: u32,
        bytes: u64,
        slc: bool,
        host: bool,
        now_ns: u64,
    ) -> (u64, u64) {
        let op = MediaOp {
            kind: MediaOpKind::Read,
            block,
            page,
            bytes,
            slc,
            host,
        };
        let (done, xfer_ns, own_ns) = self.schedule_xfer(&op, now_ns);
        (done, own_ns + xfer_ns)
    }

    /// A program of `bytes` to `page` of `block`, as [`Self::schedule`].
    #[inline(always)]
    pub fn program(&mut self, block: u32, page: u32, bytes: u64, slc: bool, now_ns: u64) -> u64 {
        let op = MediaOp {
            kind: MediaOpKind::Program,
            block,
            page,
            bytes,
            slc,
            host: false,
        };
        self.schedule(&op, now_ns)
    }

    /// An erase of `block`, as [`Self::schedule`].
    #[inline(always)]
    pub fn erase(&mut self, block: u32, slc: bool, now_ns: u64) -> u64 {
        let op = MediaOp {
            kind: MediaOpKind::Erase,
            block,
            page: 0,
            bytes: 0,
            slc,
            host: false,
        };
        self.schedule(&op, now_ns)
    }

    /// Count `op` as carried out without the timing model (a drive preconditioned at the
    /// speed of its mapping): the counters see it as [`Self::schedule`] would, but no die,
    /// channel or power budget is reserved and no energy is metered. Returns its array time,
    /// what it would occupy its die (or plane) for.
    pub fn tally_untimed(&mut self, kind: MediaOpKind, bytes: u64, slc: bool) -> u64 {
        let class = class_of(kind, slc);
        self.ops[class] += 1;
        self.bytes[kind as usize] += bytes;
        self.array_ns[class]
    }

    /// Place `op`, whose transfer takes `xfer_ns` of channel time, from `now_ns`:
    /// (completion, start of its array work).
    #[inline(always)]
    fn place(
        &mut self,
        op: &MediaOp,
        class: usize,
        array_ns: u64,
        xfer_ns: u64,
        now_ns: u64,
    ) -> (u64, u64) {
        let (unit, ch) = self.unit_and_channel(op.block);
        self.ops[class] += 1;
        self.bytes[op.kind as usize] += op.bytes;
        let (done, start) = match op.kind {
            MediaOpKind::Read => {
                let array_done = match self.queues {
                    None if self.die_reads => {
                        let done = self.die_read(unit, op.page, class, array_ns, now_ns);
                        if op.host {
                            let start = done - array_ns;
                            self.host_wait(wait::DIE_BUSY, start.saturating_sub(now_ns));
                        }
                        done
                    }
                    None => {
                        if self.die_programs {
                            // The plane stays FIFO: its next program goes after this read.
                            self.close_program_groups(self.die_plane_of_unit[unit].0 as usize);
                        }
                        let start = now_ns.max(self.unit_free_ns[unit]);
                        let array_done = start + array_ns;
                        self.unit_free_ns[unit] = array_done;
                        if op.host {
                            self.host_wait(wait::DIE_BUSY, start - now_ns);
                        }
                        array_done
                    }
                    Some(_) if self.die_queues => {
                        self.die_queued_read(unit, op.page, class, array_ns, now_ns, op.host)
                    }
                    Some(_) => self.plane_queued_read(unit, array_ns, now_ns, op.host),
                };
                self.channel_busy_ns += xfer_ns;
                let xfer_start = self
                    .channel(ch)
                    .book_in_lane(array_done, xfer_ns, READ_LANE);
                if op.host {
                    self.host_reads += 1;
                    self.host_wait(wait::CHANNEL, xfer_start - array_done);
                }
                (xfer_start + xfer_ns, array_done - array_ns)
            }
            MediaOpKind::Program => {
                self.channel_busy_ns += xfer_ns;
                let data_from = self.program_data_from(unit, class, array_ns, now_ns);
                let xfer_done = self
                    .channel(ch)
                    .book_in_lane(data_from, xfer_ns, PROGRAM_LANE)
                    + xfer_ns;
                let (array_start, done) = match &mut self.queues {
                    _ if self.die_programs => {
                        self.die_program(unit, class, array_ns, xfer_done, xfer_ns)
                    }
                    None => {
                        let start = xfer_done.max(self.unit_free_ns[unit]);
                        (start, start + array_ns)
                    }
                    Some(q) => {
                        let start = q.push(unit, Kind::Program, xfer_done, array_ns, self.floor_ns);
                        (start, start + array_ns)
                    }
                };
                // A program that joined a group placed before the die's last program ends
                // before what the plane has booked since.
                self.unit_free_ns[unit] = self.unit_free_ns[unit].max(done);
                (done, array_start)
            }
            MediaOpKind::Erase => {
                if self.die_programs {
                    // A program of the erased block must not join a group placed before
                    // its erase.
                    self.close_program_groups(self.die_plane_of_unit[unit].0 as usize);
                }
                let start = match &mut self.queues {
                    None => now_ns.max(self.unit_free_ns[unit]),
                    Some(_) if self.die_queues => {
                        let start = self.die_queue_push(unit, Kind::Erase, now_ns, array_ns);
                        return self.finish_die_queued(start, start + array_ns);
                    }
                    Some(q) => q.push(unit, Kind::Erase, now_ns, array_ns, self.floor_ns),
                };
                let done = start + array_ns;
                self.unit_free_ns[unit] = done;
                (done, start)
            }
        };
        self.all_free_ns = self.all_free_ns.max(done);
        (done, start)
    }

    /// When a program of `class` on `unit` submitted at `now_ns` moves its data over the
    /// channel: no earlier than one program time before the die (or plane) can start it.
    /// A die holds one program's data ahead of the one it runs (its cache register, which
    /// frees when the program ahead starts: ONFI cache program); the rest of a write
    /// backlog waits in the controller's buffer, and its data crosses the channel as each
    /// die takes it. Data booked at submission instead would leave the channel free when
    /// the die actually loads it, and a read's transfer would never meet a program's data.
    /// A plane joining the die's multi-plane program that has not started yet moves its
    /// page a program time before that program starts, as the group's first page did.
    #[inline(always)]
    fn program_data_from(&self, unit: usize, class: usize, array_ns: u64, now_ns: u64) -> u64 {
        let starts_ns = if self.die_programs {
            let ppd = self.geometry.planes_per_die as usize;
            let (die, plane) = self.die_plane_of_unit[unit];
            let g = &self.program_groups[program_group_index(die as usize, class)];
            let plane_bit = 1u64.checked_shl(plane).unwrap_or(0);
            if self.joins_program(g, class, plane_bit, g.start_ns, self.unit_free_ns[unit]) {
                g.start_ns
            } else {
                let first = unit - plane as usize;
                latest_free(&self.unit_free_ns[first..first + ppd], now_ns)
            }
        } else {
            self.unit_free_ns[unit]
        };
        now_ns.max(starts_ns.saturating_sub(array_ns))
    }

    /// A read that occupies every plane of the die holding plane `unit` (no independent
    /// plane reads): it starts once all of them are free and holds them all for its tR.
    /// Returns when its array work ends.
    ///
    /// It joins the die's last read as one multi-plane read (one tR for all, each plane's
    /// data then moved on its own) when the ONFI rules for one allow it and the die has
    /// not started it yet: same page address and cell mode, a plane the group does not
    /// read yet, arrived no later than the group starts, and nothing booked on this plane
    /// since (a plane stays FIFO). Reads of one host command arrive together, so a
    /// command's pages at one address on the die's planes read as one.
    #[inline(never)]
    fn die_read(
        &mut self,
        unit: usize,
        page: u32,
        class: usize,
        array_ns: u64,
        now_ns: u64,
    ) -> u64 {
        let ppd = self.geometry.planes_per_die as usize;
        let (die, plane) = (unit / ppd, unit % ppd);
        let plane_bit = 1u64.checked_shl(plane as u32).unwrap_or(0);
        let g = &mut self.die_groups[die];
        if g.page == page && g.takes(class, plane_bit, now_ns, self.unit_free_ns[unit]) {
            g.planes |= plane_bit;
            self.paired_reads += 1;
            return g.done_ns;
        }
        let first = unit - plane;
        let planes = &mut self.unit_free_ns[first..first + ppd];
        let start_ns = planes.iter().fold(now_ns, |t, &f| t.max(f));
        let done_ns = start_ns + array_ns;
        planes.fill(done_ns);
        *g = ReadGroup {
            page,
            class: class as u8,
            planes: plane_bit,
            start_ns,
            done_ns,
        };
        done_ns
    }

    /// A program on plane `unit` whose data is in the page register at `data_ns`, on a part
    /// that programs a die's planes only together: it starts once every plane of the die is
    /// free and holds them all for its tPROG. Returns when its array work starts and ends.
    ///
    /// It joins the die's last program of its cell mode as one multi-plane program (one
    /// tPROG for all) when the die has not started it yet and its data is in by then: same
    /// cell mode, a plane the group does not program yet, and nothing booked on this plane
    /// since (a plane stays FIFO) but programs of the other cell mode and reads that
    /// moved nothing ([`Self::joins_program`]). Firmware builds a multi-plane program from
    /// the pages of one mode it has for the die; the host's SLC pages and a fold's native
    /// pages queued between them do not split the pair. Unlike reads, the page address is
    /// not compared: firmware writes a die's planes as one superpage, which the model's
    /// per-plane write pointers need not mirror.
    #[inline(always)]
    fn die_program(
        &mut self,
        unit: usize,
        class: usize,
        array_ns: u64,
        data_ns: u64,
        xfer_ns: u64,
    ) -> (u64, u64) {
        let ppd = self.geometry.planes_per_die as usize;
        let (die, plane) = self.die_plane_of_unit[unit];
        let (die, plane) = (die as usize, plane as usize);
        let plane_bit = 1u64.checked_shl(plane as u32).unwrap_or(0);
        let gi = program_group_index(die, class);
        if self.joins_program(
            &self.program_groups[gi],
            class,
            plane_bit,
            data_ns,
            self.unit_free_ns[unit],
        ) {
            let g = &mut self.program_groups[gi];
            g.planes |= plane_bit;
            self.paired_programs += 1;
            self.paired_native_programs +=
                u64::from(class == class_of(MediaOpKind::Program, false));
            // One multi-plane program: its planes finish together, in the time drawn for
            // the group.
            return (g.start_ns, g.done_ns);
        }
        let g = &mut self.program_groups[gi];
        let first = unit - plane;
        let planes = &mut self.unit_free_ns[first..first + ppd];
        // The firmware sends a die's planes their pages in plane order and confirms the
        // program with the last: the die starts no earlier than the later planes' pages
        // could have crossed the channel behind this one.
        let gather_ns = (ppd - 1 - plane) as u64 * xfer_ns;
        let start_ns = latest_free(planes, data_ns + gather_ns);
        let done_ns = start_ns + array_ns;
        match &mut self.queues {
            None => set_free(planes, done_ns),
            // One queue for the die: the program goes in once, and every plane is free
            // when the die's queue is.
            Some(q) if self.die_queues => {
                let start = q.push(die, Kind::Program, start_ns, array_ns, self.floor_ns);
                debug_assert_eq!(start, start_ns);
                planes.fill(q.free_ns(die));
            }
            // Under a reordering scheduler every plane's queue holds the program, so reads
            // of any plane of the die wait for it, go before it or suspend it there. A read
            // placed before it on one plane moves only that plane's entry: the die's
            // occupancy is then approximate where the model's plain FIFO is exact.
            Some(q) => {
                for (p, free) in planes.iter_mut().enumerate() {
                    let start = q.push(first + p, Kind::Program, start_ns, array_ns, self.floor_ns);
                    debug_assert_eq!(start, start_ns);
                    *free = q.free_ns(first + p);
                }
            }
        }
        self.all_free_ns = self.all_free_ns.max(done_ns);
        *g = ReadGroup {
            page: PROGRAM_GROUP_OPEN,
            class: class as u8,
            planes: plane_bit,
            start_ns,
            done_ns,
        };
        (start_ns, done_ns)
    }

    /// Whether a program of `class` on the plane `plane_bit`, its data in at `ready_ns`, its
    /// plane free at `plane_free_ns`, joins group `g` (the die's last group of its cell
    /// mode): as [`ReadGroup::takes`], or, when a program of the other mode was placed
    /// since, while the group is still open ([`PROGRAM_GROUP_OPEN`]: no erase on the die
    /// and no read placed before booked work since) and the dies keep their order as placed
    /// (a FIFO die, or one queue per die; per-plane queues may have moved the group on one
    /// plane only).
    #[inline(always)]
    fn joins_program(
        &self,
        g: &ReadGroup,
        class: usize,
        plane_bit: u64,
        ready_ns: u64,
        plane_free_ns: u64,
    ) -> bool {
        g.planes != 0
            && (g.takes(class, plane_bit, ready_ns, plane_free_ns)
                || (g.page == PROGRAM_GROUP_OPEN
                    && (self.queues.is_none() || self.die_queues)
                    && g.class == class as u8
                    && g.planes & plane_bit == 0
                    && plane_bit != 0
                    && ready_ns <= g.start_ns
                    && plane_free_ns > g.done_ns))
    }

    /// No program joins the die's groups past what was placed after them (see
    /// [`Self::joins_program`]); the last group of each mode still takes programs that
    /// find nothing booked on their plane since it.
    #[inline(never)]
    fn close_program_groups(&mut self, die: usize) {
        for g in &mut self.program_groups[2 * die..2 * die + 2] {
            g.page = NO_PAGE;
        }
    }

    /// A read on plane `unit` under a reordering scheduler, the plane's queue its own: it is
    /// placed there, and a multi-plane program it suspends stops on every plane of its die
    /// ([`UnitQueues::suspend_alongside`]). Returns when its array work ends. Out of line:
    /// the plain FIFO path is the usual one.
    #[inline(never)]
    fn plane_queued_read(&mut self, unit: usize, array_ns: u64, now_ns: u64, host: bool) -> u64 {
        let Some(q) = self.queues.as_mut() else {
            unreachable!("a queued read without queues")
        };
        let placed = q.read(unit, now_ns, array_ns, self.floor_ns, host);
        match placed.suspended {
            Some(Kind::Erase) => self.erase_suspends += 1,
            Some(_) => {
                self.program_suspends += 1;
                if self.die_programs {
                    let ppd = self.geometry.planes_per_die as usize;
                    let first = unit - unit % ppd;
                    for other in (first..first + ppd).filter(|&p| p != unit) {
                        q.suspend_alongside(other, placed.start_ns, array_ns, self.floor_ns);
                        self.unit_free_ns[other] = q.free_ns(other);
                        self.all_free_ns = self.all_free_ns.max(self.unit_free_ns[other]);
                    }
                }
            }
            None => {}
        }
        let free = q.free_ns(unit);
        if host {
            for (cause, &ns) in placed.waits.iter().enumerate() {
                self.host_wait(cause, ns);
            }
        }
        self.unit_free_ns[unit] = free;
        self.all_free_ns = self.all_free_ns.max(free);
        placed.start_ns + array_ns
    }

    /// A read on plane `unit` of a part with die-level reads under a reordering scheduler:
    /// its die's queue places it (behind the running operation, reads waiting and what the
    /// die was sent, or inside a suspended program or erase), and a read of the die's other
    /// planes at the same page address arriving before the die starts it joins it as one
    /// multi-plane read, as [`Self::die_read`] pairs them on a FIFO die. Returns when its
    /// array work ends.
    #[inline(never)]
    fn die_queued_read(
        &mut self,
        unit: usize,
        page: u32,
        class: usize,
        array_ns: u64,
        now_ns: u64,
        host: bool,
    ) -> u64 {
        let ppd = self.geometry.planes_per_die as usize;
        let (die, plane) = (unit / ppd, unit % ppd);
        let plane_bit = 1u64.checked_shl(plane as u32).unwrap_or(0);
        let g = &mut self.die_groups[die];
        // Any other read placed on the die replaces its group, and programs and erases go
        // in behind it, so the group's read is where it was placed.
        if g.page == page
            && g.class == class as u8
            && g.planes & plane_bit == 0
            && now_ns <= g.start_ns
        {
            g.planes |= plane_bit;
            self.paired_reads += 1;
            let done_ns = g.done_ns;
            if host {
                // It arrived with the group's read or later: it waits for what that read
                // waited for, less what passed before it arrived (the earliest causes).
                let waits = self.die_group_waits[die];
                let arrived_ns = g.start_ns - waits.iter().sum::<u64>();
                let mut late = now_ns.saturating_sub(arrived_ns);
                for (cause, &ns) in waits.iter().enumerate() {
                    let cut = late.min(ns);
                    late -= cut;
                    self.host_wait(cause, ns - cut);
                }
            }
            return done_ns;
        }
        let Some(q) = self.queues.as_mut() else {
            unreachable!("die queues without queues")
        };
        let first = die * ppd;
        let booked_ns = self.unit_free_ns[first];
        let placed = q.read(die, now_ns, array_ns, self.floor_ns, host);
        if placed.start_ns < booked_ns {
            // Placed before work already booked (read priority, a suspension, a gap): the
            // programs behind it may have moved, and their groups no longer say when they
            // start (see `close_program_groups`; `q` holds `self.queues`).
            for g in &mut self.program_groups[2 * die..2 * die + 2] {
                g.page = NO_PAGE;
            }
        }
        match placed.suspended {
            Some(Kind::Erase) => self.erase_suspends += 1,
            Some(_) => self.program_suspends += 1,
            None => {}
        }
        let free = q.free_ns(die);
        self.unit_free_ns[first..first + ppd].fill(free);
        self.all_free_ns = self.all_free_ns.max(free);
        if host {
            for (cause, &ns) in placed.waits.iter().enumerate() {
                self.host_wait(cause, ns);
            }
        }
        let done_ns = placed.start_ns + array_ns;
        self.die_group_waits[die] = placed.waits;
        self.die_groups[die] = ReadGroup {
            page,
            class: class as u8,
            planes: plane_bit,
            start_ns: placed.start_ns,
            done_ns,
        };
        done_ns
    }

    /// Push a program or erase on plane `unit`'s die queue (die-level reads under a
    /// reordering scheduler): every plane of the die follows the queue's free time.
    /// Returns when its array work starts.
    #[inline(never)]
    fn die_queue_push(&mut self, unit: usize, kind: Kind, earliest_ns: u64, array_ns: u64) -> u64 {
        let ppd = self.geometry.planes_per_die as usize;
        let die = unit / ppd;
        let Some(q) = self.queues.as_mut() else {
            unreachable!("die queues without queues")
        };
        let start = q.push(die, kind, earliest_ns, array_ns, self.floor_ns);
        let free = q.free_ns(die);
        let first = die * ppd;
        self.unit_free_ns[first..first + ppd].fill(free);
        start
    }

    /// The end of an operation placed on a die queue: (completion, start).
    fn finish_die_queued(&mut self, start: u64, done: u64) -> (u64, u64) {
        self.all_free_ns = self.all_free_ns.max(done);
        (done, start)
    }

    /// The power cap's start for an operation of `class` moving `bytes` wanted at `now_ns`.
    #[inline(never)]
    fn admit_capped(&mut self, class: usize, bytes: u64, now_ns: u64) -> u64 {
        match &mut self.power {
            Some(p) => p.admit(class, bytes, now_ns),
            None => now_ns,
        }
    }

    /// No operation will be scheduled before `now_ns` any more (the host's submissions move
    /// forward): bookkeeping of what finished earlier can go.
    #[inline]
    pub fn advance_to(&mut self, now_ns: u64) {
        self.floor_ns = self.floor_ns.max(now_ns);
        if let Some(c) = self.power.as_mut().and_then(|p| p.cap.as_mut()) {
            c.advance_to(now_ns);
        }
        self.forget_ns = Some(self.forget_ns.map_or(now_ns, |f| f.max(now_ns)));
    }

    /// Start a run of operations none of which is placed before `at_ns` (the release of
    /// queued internal work): when that is after the pending forget time, every channel
    /// forgets now what its next booking would have, and the run's bookings skip the check
    /// (none of them can leave an interval ending by then). Returns what [`Self::end_run`]
    /// restores. The same state wherever a booking looks: a channel forgets before its next
    /// booking either way.
    #[inline]
    pub fn begin_run(&mut self, at_ns: u64) -> Option<u64> {
        match self.forget_ns {
            Some(f) if at_ns > f => {
                for c in &mut self.channels {
                    c.forget_before(f);
                }
                self.forget_ns.take()
            }
            _ => None,
        }
    }

    /// End a run begun by [`Self::begin_run`], which returned `pending`.
    #[inline]
    pub fn end_run(&mut self, pending: Option<u64>) {
        if pending.is_some() {
            self.forget_ns = pending;
        }
    }

    /// Channel `ch`, having forgotten what ended before the latest submission.
    #[inline(always)]
    fn channel(&mut self, ch: usize) -> &mut Channel {
        let c = &mut self.channels[ch];
        if let Some(f) = self.forget_ns {
            c.forget_before(f);
        }
        c
    }

    /// When the die (or plane) holding `block` has finished all work reserved on it.
    #[inline]
    pub fn unit_free_ns(&self, block: u32) -> u64 {
        self.unit_free_ns[self.unit_and_channel(block).0]
    }

    /// The die or plane holding `block`, an index below [`Self::units`].
    #[inline]
    pub fn unit_of(&self, block: u32) -> usize {
        self.unit_and_channel(block).0
    }

    /// How many dies (or planes, when multi-plane is on) keep their own busy time.
    pub fn units(&self) -> usize {
        self.unit_free_ns.len()
    }

    /// When every die and channel has finished all reserved work.
    pub fn all_idle_ns(&self) -> u64 {
        debug_assert!(
            self.all_free_ns
                >= self
                    .unit_free_ns
                    .iter()
                    .copied()
                    .chain(self.channels.iter().map(Channel::free_ns))
                    .max()
                    .unwrap_or(0)
        );
        self.all_free_ns
    }

    /// The longest queue of reserved work beyond `now_ns` on any die/plane or channel.
    /// Asked on every host command, so it reads the running maximum without the debug
    /// check of [`Self::all_idle_ns`], which walks every unit and channel.
    pub fn max_backlog_ns(&self, now_ns: u64) -> u64 {
        self.all_free_ns.saturating_sub(now_ns)
    }

    /// Power cycle: work in flight is abandoned and every resource is free from `at_ns`.
    pub fn reset(&mut self, at_ns: u64) {
        self.unit_free_ns.fill(at_ns);
        self.die_groups.fill(ReadGroup::NONE);
        self.program_groups.fill(ReadGroup::NONE);
        if let Some(q) = &mut self.queues {
            q.reset(at_ns);
        }
        for c in &mut self.channels {
            c.reset(at_ns);
        }
        self.forget_ns = None;
        self.all_free_ns = at_ns;
    }

    /// Bytes of heap memory held.
    pub fn memory_bytes(&self) -> usize {
        self.unit_free_ns.capacity() * 8
            + self.queues.as_ref().map_or(0, UnitQueues::memory_bytes)
            + self.power.as_ref().map_or(0, |p| {
                p.meter.memory_bytes() + p.cap.as_ref().map_or(0, PowerCap::memory_bytes)
            })
            + self.plane_route.capacity() * 8
            + (self.die_groups.capacity() + self.program_groups.capacity())
                * std::mem::size_of::<ReadGroup>()
            + self.die_plane_of_unit.capacity() * 8
            + self
                .channels
                .iter()
                .map(Channel::memory_bytes)
                .sum::<usize>()
    }
}

/// The latest of `from` and the free times of a die's planes. Dies have two or four planes
/// almost always: arrays of those lengths compile to straight-line code.
#[inline(always)]
fn latest_free(planes: &[u64], from: u64) -> u64 {
    if let Ok(p) = <&[u64; 4]>::try_from(planes) {
        from.max(p[0]).max(p[1]).max(p[2]).max(p[3])
    } else if let Ok(p) = <&[u64; 2]>::try_from(planes) {
        from.max(p[0]).max(p[1])
    } else {
        planes.iter().fold(from, |t, &f| t.max(f))
    }
}

/// Every plane of a die busy until `until_ns` (straight-line for two or four planes).
#[inline(always)]
fn set_free(planes: &mut [u64], until_ns: u64) {
    if let Ok(p) = <&mut [u64; 4]>::try_from(&mut *planes) {
        *p = [until_ns; 4];
    } else if let Ok(p) = <&mut [u64; 2]>::try_from(&mut *planes) {
        *p = [until_ns; 2];
    } else {
        planes.fill(until_ns);
    }
}

/// Transfer sizes of whole 4 KiB units [`NandTiming`] keeps the channel time of: 0 to 64 KiB.
const XFER_4K_SIZES: usize = 17;

/// Time to move `bytes` over a channel of `bytes_per_s`.
fn channel_ns_at(bytes: u64, bytes_per_s: u64) -> u64 {
    if bytes == 0 {
        0
    } else {
        transfer_ns(bytes, bytes_per_s.max(1))
    }
}

/// The reads (or programs) of one die that share one array operation (a multi-plane read
/// or program).
#[derive(Debug, Clone, Copy)]
struct ReadGroup {
    /// Page address every plane of the group reads ([`NO_PAGE`] for no group). Programs,
    /// whose groups mark themselves by their planes, compare no address: theirs is
    /// [`PROGRAM_GROUP_OPEN`] while a program may join past programs of the other cell mode
    /// placed since, [`NO_PAGE`] once an erase or a read placed before booked work closed it.
    page: u32,
    /// Operation class (a multi-plane read is all SLC-mode or all native).
    class: u8,
    /// Planes of the die the group reads, one bit each.
    planes: u64,
    start_ns: u64,
    done_ns: u64,
}

flashlab_engine::impl_state!(ReadGroup {
    page,
    class,
    planes,
    start_ns,
    done_ns
});

impl Default for ReadGroup {
    fn default() -> Self {
        ReadGroup::NONE
    }
}

/// No page has this address: a group that nothing joins.
const NO_PAGE: u32 = u32::MAX;

/// A program group that programs may join past programs of the other cell mode placed
/// since it.
const PROGRAM_GROUP_OPEN: u32 = 0;

/// A die's program group of `class`'s cell mode (`class` is `kind * 2 + slc`).
#[inline(always)]
fn program_group_index(die: usize, class: usize) -> usize {
    2 * die + (class & 1)
}

impl ReadGroup {
    const NONE: ReadGroup = ReadGroup {
        page: NO_PAGE,
        class: 0,
        planes: 0,
        start_ns: 0,
        done_ns: 0,
    };

    /// Whether an operation of `class` on the plane `plane_bit`, ready at `ready_ns`, whose
    /// plane is free at `plane_free_ns`, can join this group: same cell mode, a plane the
    /// group does not cover yet, ready before the die starts it, and nothing booked on its
    /// plane since the group (a plane stays FIFO).
    #[inline(always)]
    fn takes(&self, class: usize, plane_bit: u64, ready_ns: u64, plane_free_ns: u64) -> bool {
        self.class == class as u8
            && self.planes & plane_bit == 0
            && plane_bit != 0
            && ready_ns <= self.start_ns
            && plane_free_ns == self.done_ns
    }
}

impl MediaPower {
    /// The power cap's start for an operation of `class` moving `bytes` wanted at `now_ns`.
    fn admit(&mut self, class: usize, bytes: u64, now_ns: u64) -> u64 {
        let pj = self.array_pj[class]
            + bytes * self.energy.channel_pj_per_byte
            + bytes * self.cap_pj_per_byte;
        match &mut self.cap {
            Some(c) => c.admit(now_ns, pj),
            None => now_ns,
        }
    }
}

#[cfg(test)]
mod tests;
