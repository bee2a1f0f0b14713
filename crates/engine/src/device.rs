//! The one host-facing trait. A drive, a namespace, a RAID set, a cache tier: everything a
//! workload can target is a [`BlockDevice`], so systems compose as trees.
//!
//! The contract is submission-ordered: a device is handed requests in non-decreasing time
//! order and answers each with the simulated time at which it completes. Internally a device
//! may keep queues and background work; it only ever moves forward in time.

use crate::SimTime;

/// What a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoKind {
    Read,
    Write,
    /// Deallocate (TRIM / NVMe Deallocate): the range no longer holds data.
    Trim,
    /// Make every completed write durable (a no-op on a drive with power-loss protection).
    Flush,
}

impl IoKind {
    /// fio's data-direction index: read 0, write 1, trim 2 (flush is counted with writes).
    pub fn ddir(self) -> usize {
        match self {
            IoKind::Read => 0,
            IoKind::Write | IoKind::Flush => 1,
            IoKind::Trim => 2,
        }
    }
}

/// One host request. Offsets and lengths are bytes; devices check alignment to their logical
/// block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoRequest {
    pub kind: IoKind,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Force unit access: the write completes only once durable on media.
    pub fua: bool,
    /// Share of a write's data a compressor can remove, in percent: 0 for random data (fio's
    /// default buffers), 100 for zeros (`zero_buffers`); fio's `buffer_compress_percentage`.
    /// Only a drive that compresses (`controller.compression_granule`) sees a difference.
    pub compressible_percent: u8,
    /// NVMe Flexible Data Placement: the placement identifier a write carries (a drive
    /// without FDP, or a write without one, places it with the drive's default handle).
    pub placement: Option<u16>,
}

impl IoRequest {
    pub fn read(offset_bytes: u64, len_bytes: u64) -> Self {
        Self {
            kind: IoKind::Read,
            offset_bytes,
            len_bytes,
            fua: false,
            compressible_percent: 0,
            placement: None,
        }
    }
    pub fn write(offset_bytes: u64, len_bytes: u64) -> Self {
        Self {
            kind: IoKind::Write,
            offset_bytes,
            len_bytes,
            fua: false,
            compressible_percent: 0,
            placement: None,
        }
    }
    pub fn trim(offset_bytes: u64, len_bytes: u64) -> Self {
        Self {
            kind: IoKind::Trim,
            offset_bytes,
            len_bytes,
            fua: false,
            compressible_percent: 0,
            placement: None,
        }
    }
    /// This write with data a compressor can shrink by `percent` (clamped to 100).
    pub fn with_compressible_percent(mut self, percent: u8) -> Self {
        self.compressible_percent = percent.min(100);
        self
    }
    pub fn flush() -> Self {
        Self {
            kind: IoKind::Flush,
            offset_bytes: 0,
            len_bytes: 0,
            fua: false,
            compressible_percent: 0,
            placement: None,
        }
    }

    /// Whether a device of `capacity_bytes` with `block_bytes` logical blocks can take this
    /// request: a flush always; anything else must be non-empty, inside the device and
    /// aligned to the block. Every device checks with this one rule.
    #[inline]
    pub fn check_range(&self, capacity_bytes: u64, block_bytes: u64) -> Result<(), DeviceError> {
        if self.kind == IoKind::Flush {
            return Ok(());
        }
        if self.len_bytes == 0 {
            return Err(DeviceError::Empty);
        }
        if self
            .offset_bytes
            .checked_add(self.len_bytes)
            .is_none_or(|e| e > capacity_bytes)
        {
            return Err(DeviceError::OutOfRange {
                offset_bytes: self.offset_bytes,
                len_bytes: self.len_bytes,
                capacity_bytes,
            });
        }
        // Block sizes are powers of two in practice: a mask, not two divisions.
        let misaligned = if block_bytes.is_power_of_two() {
            (self.offset_bytes | self.len_bytes) & (block_bytes - 1) != 0
        } else {
            !self.offset_bytes.is_multiple_of(block_bytes)
                || !self.len_bytes.is_multiple_of(block_bytes)
        };
        if misaligned {
            return Err(DeviceError::Misaligned {
                offset_bytes: self.offset_bytes,
                len_bytes: self.len_bytes,
                block_bytes,
            });
        }
        Ok(())
    }
}

/// The device's answer to a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// When the device accepted the command (after host-side queueing and submission cost):
    /// fio's submission latency ends here.
    pub accepted_ns: SimTime,
    /// When the host sees the completion.
    pub done_ns: SimTime,
}

/// Why a device refused or could not finish a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("request at byte {offset_bytes} of {len_bytes} bytes runs past the end of the device ({capacity_bytes} bytes)")]
    OutOfRange {
        offset_bytes: u64,
        len_bytes: u64,
        capacity_bytes: u64,
    },
    #[error("request at byte {offset_bytes} of {len_bytes} bytes is not aligned to the {block_bytes}-byte logical block")]
    Misaligned {
        offset_bytes: u64,
        len_bytes: u64,
        block_bytes: u64,
    },
    #[error("request of zero bytes")]
    Empty,
    #[error("the device cannot make progress: {reason}")]
    Stalled { reason: String },
    #[error("the device is read-only and refuses writes: {reason}")]
    ReadOnly { reason: String },
    /// The data could not be read back (beyond what error correction recovers).
    #[error("the device could not read the data back: {reason}")]
    Uncorrectable { reason: String },
    /// A write's placement identifier names no reclaim unit handle of the drive.
    #[error("a write carries placement identifier {id}; the drive's are 0 to {last}", last = handles.saturating_sub(1))]
    InvalidPlacement { id: u16, handles: u32 },
    /// A zoned device refused a command that breaks its zones' rules (NVMe ZNS status codes:
    /// a write not at the write pointer, a full zone, too many open or active zones).
    /// `errno` is what Linux returns for the status (EIO, or ETOOMANYREFS for the open and
    /// active zone limits), the error fio reports.
    #[error("{status}: {reason}")]
    Zone {
        status: &'static str,
        errno: i32,
        reason: String,
    },
}

/// Most zones a device may have, a drive's, a disk's or those a job emulates: the zone
/// tables (a state and a write pointer per zone) stay under 10 MB. Ten times the zones of
/// the largest host-managed SMR disks shipped (about 100,000 zones of 256 MiB on a 26 TB
/// disk); a ZNS drive has thousands (3,688 on a 4 TB ZN540).
pub const MAX_ZONES: u64 = 1 << 20;

/// The zones of a zoned device (NVMe Zoned Namespaces): what a host reads from its zone
/// report and identify data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneGeometry {
    /// Distance between zone starts.
    pub zone_bytes: u64,
    /// Writable bytes from a zone's start (at most `zone_bytes`).
    pub capacity_bytes: u64,
    pub zones: u32,
    /// Zones that may be open (implicitly or explicitly) at once; 0: no limit.
    pub max_open: u32,
    /// Zones that may be open or closed at once; 0: no limit.
    pub max_active: u32,
    /// Zones at the start of the address space without a write pointer, written anywhere
    /// (a host-managed SMR disk's conventional zones); 0 on a ZNS drive.
    pub conventional: u32,
}

/// A zone management command (NVMe Zone Management Send).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneOp {
    Open,
    Close,
    Finish,
    Reset,
}

/// How close a hinted request is ([`BlockDevice::prefetch`]). A large drive's write touches
/// two random lines one after the other: its map entry, then (through the entry) its old
/// copy's reverse-map entry and block. Each is loaded a request apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefetchStage {
    /// Two or more requests away: load what finding the request's data needs (its map entry).
    Map,
    /// The next request, already hinted at [`PrefetchStage::Map`]: load what it updates.
    Update,
}

/// What a drive has written since it was made: the host's bytes and the bytes its media
/// programmed for them (the host's data, GC's copies, parity, map pages). Their ratio over
/// an interval is the write amplification of that interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteTotals {
    pub host_bytes: u64,
    pub nand_bytes: u64,
}

impl WriteTotals {
    /// What was written between `earlier` and `self`.
    pub fn since(self, earlier: WriteTotals) -> WriteTotals {
        WriteTotals {
            host_bytes: self.host_bytes.saturating_sub(earlier.host_bytes),
            nand_bytes: self.nand_bytes.saturating_sub(earlier.nand_bytes),
        }
    }

    /// NAND bytes per host byte (None: the host wrote nothing).
    pub fn write_amplification(self) -> Option<f64> {
        (self.host_bytes > 0).then(|| self.nand_bytes as f64 / self.host_bytes as f64)
    }
}

/// How long a phase of a job file that writes runs, as the runner scaled it for the
/// device: the shortest of its writers' windows. A device that compresses time on a slice
/// sizes its write buffer by it (`Ssd::write_window`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteWindow {
    /// A time-based writer: its ramp and runtime, in the device's time.
    Time(SimTime),
    /// A writer bounded by bytes: what it writes.
    Bytes(u64),
}

/// A simulated (or composed) block device.
pub trait BlockDevice {
    /// Bytes the host can address.
    fn capacity_bytes(&self) -> u64;

    /// Smallest addressable unit (512 or 4096).
    fn logical_block_bytes(&self) -> u64 {
        512
    }

    /// Maximum number of commands the device accepts at once (NCQ 32 on SATA, deep on NVMe).
    /// Hosts queue the rest themselves.
    fn queue_depth_limit(&self) -> u32 {
        u32::MAX
    }

    /// Submit a request at `now_ns` (never earlier than a previous submission).
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError>;

    /// The host has nothing outstanding from `from_ns` until at least `until_ns`; a device
    /// may use the time for background work (garbage collection, SLC folding).
    fn idle(&mut self, _from_ns: SimTime, _until_ns: SimTime) {}

    /// A phase whose jobs write starts, running for `window`. No effect on a device whose
    /// write buffer does not depend on it.
    fn write_window(&mut self, _window: WriteWindow) {}

    /// A hint, with no effect on any result: `req` will probably be submitted soon, at the
    /// `stage` of its approach. A device may start loading what serving it will touch (such
    /// as its map entry, a cache miss on a large drive) so that the loads of queued requests
    /// overlap instead of following one another. Required, so that a wrapper cannot drop the
    /// hint by omission: without it a large drive's random writes run about a third slower.
    fn prefetch(&self, req: &IoRequest, stage: PrefetchStage);

    /// Whether the device compresses what it is written, so that a caller holding real data
    /// should measure it ([`IoRequest::compressible_percent`]).
    fn compresses_data(&self) -> bool {
        false
    }

    /// Placement identifiers the device takes on writes (NVMe Flexible Data Placement's
    /// reclaim unit handles): 0 for a device without FDP. Wrappers forward it.
    fn placement_handles(&self) -> u32 {
        0
    }

    /// The device's zones, if it is zoned.
    fn zones(&self) -> Option<ZoneGeometry> {
        None
    }

    /// Bytes written in zone `zone` (its write pointer from the zone's start; the capacity
    /// for a full zone), if the device is zoned.
    fn zone_write_pointer(&self, _zone: u32) -> Option<u64> {
        None
    }

    /// Carry out zone management command `op` on zone `zone` at `now_ns`.
    fn zone_command(
        &mut self,
        _now_ns: SimTime,
        op: ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        Err(not_zoned(op, zone))
    }

    /// The drive's write totals so far, if it is one drive that counts them (None for a
    /// system of several devices). A run reads them at each phase's start and end, so each
    /// phase has its own write amplification. Wrappers of one drive forward it.
    fn write_totals(&self) -> Option<WriteTotals> {
        None
    }

    /// Why [`BlockDevice::write_untimed`] would be refused, if it would: asked before a run
    /// starts, so that a refusal comes before any I/O.
    fn untimed_refusal(&self) -> Option<String> {
        Some("only a single simulated drive takes writes without its timing model".into())
    }

    /// Give the device the host writes and trims `next` yields (kind, offset, length; reads
    /// and flushes are passed over) from `now_ns` with its timing model off, as if they came
    /// back to back: the state they leave (map, valid counts, free blocks, wear, cache
    /// contents) without simulating when each completes. Returns when the last completes,
    /// or why this device cannot: where its state would depend on the timing, or where it
    /// is not one simulated drive. Wrappers of one drive forward it.
    fn write_untimed(
        &mut self,
        _now_ns: SimTime,
        _next: &mut dyn FnMut() -> Option<UntimedIo>,
    ) -> Result<SimTime, UntimedError> {
        Err(UntimedError::Refused(
            "only a single simulated drive takes writes without its timing model".into(),
        ))
    }
}

/// Why [`BlockDevice::write_untimed`] did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UntimedError {
    /// The device cannot take writes without timing: why (its state would depend on the
    /// timing, or it is not one simulated drive). Nothing was written.
    #[error("{0}")]
    Refused(String),
    /// The device refused a write or trim (out of range, read-only, out of space).
    #[error(transparent)]
    Device(#[from] RefusedIo),
}

/// One I/O given to [`BlockDevice::write_untimed`]: its kind, offset and length in bytes.
pub type UntimedIo = (IoKind, u64, u64);

/// The write or trim a device refused while writing without timing, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?} at byte {offset_bytes}: {error}")]
pub struct RefusedIo {
    pub error: DeviceError,
    pub kind: IoKind,
    pub offset_bytes: u64,
}

/// The error of a zone command sent to a device without zones.
pub fn not_zoned(op: ZoneOp, zone: u32) -> DeviceError {
    DeviceError::Zone {
        status: "Invalid Command Opcode",
        errno: 95,
        reason: format!("zone {op:?} of zone {zone} sent to a device without zones"),
    }
}

/// A device seen from a run whose clock starts at 0 while the device is already at
/// `offset_ns` (a device loaded from a state, or one that ran before): submissions are
/// shifted forward and completions back, so a run continues where the last one ended.
/// `horizon_ns` is the latest device time the run reached (submissions, completions, idle
/// periods): where the next run starts. `D` is a reference to the device or a box owning it;
/// a device of several [`Targets`] (a drive's namespaces) continues the same way.
pub struct Continued<D> {
    device: D,
    offset_ns: SimTime,
    horizon_ns: SimTime,
}

impl<D> Continued<D> {
    pub fn new(device: D, offset_ns: SimTime) -> Self {
        Self {
            device,
            offset_ns,
            horizon_ns: offset_ns,
        }
    }

    /// Latest device time the run reached.
    pub fn horizon_ns(&self) -> SimTime {
        self.horizon_ns
    }

    /// The device itself.
    pub fn into_inner(self) -> D {
        self.device
    }
}

impl<D> BlockDevice for Continued<D>
where
    D: std::ops::DerefMut,
    D::Target: BlockDevice,
{
    fn capacity_bytes(&self) -> u64 {
        self.device.capacity_bytes()
    }
    fn logical_block_bytes(&self) -> u64 {
        self.device.logical_block_bytes()
    }
    fn queue_depth_limit(&self) -> u32 {
        self.device.queue_depth_limit()
    }
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        let at = now_ns + self.offset_ns;
        let c = self.device.submit(at, req)?;
        self.horizon_ns = self.horizon_ns.max(at).max(c.done_ns);
        // A device never answers before the submission, so these do not underflow.
        Ok(Completion {
            accepted_ns: c.accepted_ns - self.offset_ns,
            done_ns: c.done_ns - self.offset_ns,
        })
    }
    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        let until = until_ns + self.offset_ns;
        self.device.idle(from_ns + self.offset_ns, until);
        self.horizon_ns = self.horizon_ns.max(until);
    }
    fn write_window(&mut self, window: WriteWindow) {
        self.device.write_window(window)
    }
    fn prefetch(&self, req: &IoRequest, stage: PrefetchStage) {
        self.device.prefetch(req, stage)
    }
    fn compresses_data(&self) -> bool {
        self.device.compresses_data()
    }
    fn placement_handles(&self) -> u32 {
        self.device.placement_handles()
    }
    fn write_totals(&self) -> Option<WriteTotals> {
        self.device.write_totals()
    }
    fn untimed_refusal(&self) -> Option<String> {
        self.device.untimed_refusal()
    }
    fn write_untimed(
        &mut self,
        now_ns: SimTime,
        next: &mut dyn FnMut() -> Option<UntimedIo>,
    ) -> Result<SimTime, UntimedError> {
        let at = now_ns + self.offset_ns;
        let done_ns = self.device.write_untimed(at, next)?.max(at);
        self.horizon_ns = self.horizon_ns.max(done_ns);
        Ok(done_ns - self.offset_ns)
    }

    fn zones(&self) -> Option<ZoneGeometry> {
        self.device.zones()
    }
    fn zone_write_pointer(&self, zone: u32) -> Option<u64> {
        self.device.zone_write_pointer(zone)
    }
    fn zone_command(
        &mut self,
        now_ns: SimTime,
        op: ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        let at = now_ns + self.offset_ns;
        let c = self.device.zone_command(at, op, zone)?;
        self.horizon_ns = self.horizon_ns.max(at).max(c.done_ns);
        Ok(Completion {
            accepted_ns: c.accepted_ns - self.offset_ns,
            done_ns: c.done_ns - self.offset_ns,
        })
    }
}

/// Devices a run's jobs may address, numbered from 0, sharing one submission queue (the
/// host's queue-depth limit is the whole set's) and one clock.
pub trait Targets {
    /// The target a job's `filename=` names (`None`: the job has no filename), or a message
    /// saying which names are valid.
    fn resolve(&self, filename: Option<&str>) -> Result<usize, String>;

    /// Bytes the host can address on target `target`.
    fn capacity_bytes(&self, target: usize) -> u64;

    /// Smallest addressable unit (the same on every target).
    fn logical_block_bytes(&self) -> u64;

    /// Commands the set accepts at once.
    fn queue_depth_limit(&self) -> u32;

    /// Submit `req` (offsets relative to the target) at `now_ns`.
    fn submit_to(
        &mut self,
        target: usize,
        now_ns: SimTime,
        req: &IoRequest,
    ) -> Result<Completion, DeviceError>;

    /// Nothing is outstanding on any target from `from_ns` until at least `until_ns`.
    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime);

    /// See [`BlockDevice::write_window`] (the targets share one device).
    fn write_window(&mut self, _window: WriteWindow) {}

    /// See [`BlockDevice::prefetch`].
    fn prefetch(&self, target: usize, req: &IoRequest, stage: PrefetchStage);

    /// See [`BlockDevice::placement_handles`] (the same on every target).
    fn placement_handles(&self) -> u32 {
        0
    }

    /// See [`BlockDevice::zones`].
    fn zones(&self, _target: usize) -> Option<ZoneGeometry> {
        None
    }

    /// See [`BlockDevice::zone_write_pointer`].
    fn zone_write_pointer(&self, _target: usize, _zone: u32) -> Option<u64> {
        None
    }

    /// See [`BlockDevice::zone_command`].
    fn zone_command(
        &mut self,
        _target: usize,
        _now_ns: SimTime,
        op: ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        Err(not_zoned(op, zone))
    }

    /// See [`BlockDevice::write_totals`]: the drive's, whichever target wrote.
    fn write_totals(&self) -> Option<WriteTotals> {
        None
    }

    /// See [`BlockDevice::untimed_refusal`], for target `target`.
    fn untimed_refusal(&self, _target: usize) -> Option<String> {
        Some(
            "a device of several targets (namespaces) takes no writes without its timing model"
                .into(),
        )
    }

    /// See [`BlockDevice::write_untimed`]: to target `target`.
    fn write_untimed(
        &mut self,
        _target: usize,
        _now_ns: SimTime,
        _next: &mut dyn FnMut() -> Option<UntimedIo>,
    ) -> Result<SimTime, UntimedError> {
        Err(UntimedError::Refused(
            "a device of several targets (namespaces) takes no writes without its timing model"
                .into(),
        ))
    }
}

impl<D> Targets for Continued<D>
where
    D: std::ops::DerefMut,
    D::Target: Targets,
{
    fn resolve(&self, filename: Option<&str>) -> Result<usize, String> {
        self.device.resolve(filename)
    }
    fn capacity_bytes(&self, target: usize) -> u64 {
        self.device.capacity_bytes(target)
    }
    fn logical_block_bytes(&self) -> u64 {
        self.device.logical_block_bytes()
    }
    fn queue_depth_limit(&self) -> u32 {
        self.device.queue_depth_limit()
    }
    fn submit_to(
        &mut self,
        target: usize,
        now_ns: SimTime,
        req: &IoRequest,
    ) -> Result<Completion, DeviceError> {
        let at = now_ns + self.offset_ns;
        let c = self.device.submit_to(target, at, req)?;
        self.horizon_ns = self.horizon_ns.max(at).max(c.done_ns);
        // A device never answers before the submission, so these do not underflow.
        Ok(Completion {
            accepted_ns: c.accepted_ns - self.offset_ns,
            done_ns: c.done_ns - self.offset_ns,
        })
    }
    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        let until = until_ns + self.offset_ns;
        self.device.idle(from_ns + self.offset_ns, until);
        self.horizon_ns = self.horizon_ns.max(until);
    }
    fn write_window(&mut self, window: WriteWindow) {
        self.device.write_window(window)
    }
    fn prefetch(&self, target: usize, req: &IoRequest, stage: PrefetchStage) {
        self.device.prefetch(target, req, stage)
    }
    fn placement_handles(&self) -> u32 {
        self.device.placement_handles()
    }
    fn write_totals(&self) -> Option<WriteTotals> {
        self.device.write_totals()
    }
    fn untimed_refusal(&self, target: usize) -> Option<String> {
        self.device.untimed_refusal(target)
    }
    fn write_untimed(
        &mut self,
        target: usize,
        now_ns: SimTime,
        next: &mut dyn FnMut() -> Option<UntimedIo>,
    ) -> Result<SimTime, UntimedError> {
        let at = now_ns + self.offset_ns;
        let done_ns = self.device.write_untimed(target, at, next)?.max(at);
        self.horizon_ns = self.horizon_ns.max(done_ns);
        Ok(done_ns - self.offset_ns)
    }

    fn zones(&self, target: usize) -> Option<ZoneGeometry> {
        self.device.zones(target)
    }
    fn zone_write_pointer(&self, target: usize, zone: u32) -> Option<u64> {
        self.device.zone_write_pointer(target, zone)
    }
    fn zone_command(
        &mut self,
        target: usize,
        now_ns: SimTime,
        op: ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        let at = now_ns + self.offset_ns;
        let c = self.device.zone_command(target, at, op, zone)?;
        self.horizon_ns = self.horizon_ns.max(at).max(c.done_ns);
        Ok(Completion {
            accepted_ns: c.accepted_ns - self.offset_ns,
            done_ns: c.done_ns - self.offset_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_check_takes_flushes_and_fitting_aligned_requests_only() {
        assert_eq!(IoRequest::flush().check_range(0, 512), Ok(()));
        assert_eq!(IoRequest::read(4096, 4096).check_range(8192, 4096), Ok(()));
        assert_eq!(
            IoRequest::read(0, 0).check_range(8192, 512),
            Err(DeviceError::Empty)
        );
        assert!(matches!(
            IoRequest::write(4096, 8192).check_range(8192, 512),
            Err(DeviceError::OutOfRange { .. })
        ));
        assert!(matches!(
            IoRequest::write(u64::MAX, 512).check_range(8192, 512),
            Err(DeviceError::OutOfRange { .. })
        ));
        // Power-of-two blocks take the mask path, others divide: same answers.
        for block in [512u64, 520] {
            assert_eq!(
                IoRequest::read(block, block).check_range(1 << 20, block),
                Ok(())
            );
            assert!(matches!(
                IoRequest::read(block + 8, block).check_range(1 << 20, block),
                Err(DeviceError::Misaligned { .. })
            ));
        }
    }
}
