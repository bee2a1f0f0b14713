//! What a run addresses: one block device, or several that a job picks with fio's
//! `filename=` (the namespaces of a drive).
//!
//! [`crate::run_jobs`] runs against one [`BlockDevice`], where a job's filename means nothing
//! (every job sees the whole device). [`crate::run_targets`] takes a [`Targets`], which turns
//! each job's filename into a target index once, before the run; each I/O then goes to its
//! job's target. The run loop is generic over the two, so the one-device path pays nothing
//! for the other.

use flashlab_engine::{
    BlockDevice, Completion, DeviceError, IoRequest, PrefetchStage, SimTime, ZoneGeometry, ZoneOp,
};

pub use flashlab_engine::Targets;

/// One device: every job addresses all of it, whatever its filename.
pub(crate) struct OneDevice<'d>(pub &'d mut dyn BlockDevice);

impl Targets for OneDevice<'_> {
    #[inline]
    fn resolve(&self, _filename: Option<&str>) -> Result<usize, String> {
        Ok(0)
    }
    #[inline]
    fn capacity_bytes(&self, _target: usize) -> u64 {
        self.0.capacity_bytes()
    }
    #[inline]
    fn logical_block_bytes(&self) -> u64 {
        self.0.logical_block_bytes()
    }
    #[inline]
    fn queue_depth_limit(&self) -> u32 {
        self.0.queue_depth_limit()
    }
    #[inline]
    fn submit_to(
        &mut self,
        _target: usize,
        now_ns: SimTime,
        req: &IoRequest,
    ) -> Result<Completion, DeviceError> {
        self.0.submit(now_ns, req)
    }
    #[inline]
    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        self.0.idle(from_ns, until_ns)
    }
    fn write_window(&mut self, window: flashlab_engine::WriteWindow) {
        self.0.write_window(window)
    }
    #[inline]
    fn prefetch(&self, _target: usize, req: &IoRequest, stage: PrefetchStage) {
        self.0.prefetch(req, stage)
    }
    fn placement_handles(&self) -> u32 {
        self.0.placement_handles()
    }
    fn write_totals(&self) -> Option<flashlab_engine::WriteTotals> {
        self.0.write_totals()
    }
    fn untimed_refusal(&self, _target: usize) -> Option<String> {
        self.0.untimed_refusal()
    }
    fn write_untimed(
        &mut self,
        _target: usize,
        now_ns: SimTime,
        next: &mut dyn FnMut() -> Option<flashlab_engine::UntimedIo>,
    ) -> Result<SimTime, flashlab_engine::UntimedError> {
        self.0.write_untimed(now_ns, next)
    }
    fn zones(&self, _target: usize) -> Option<ZoneGeometry> {
        self.0.zones()
    }
    fn zone_write_pointer(&self, _target: usize, zone: u32) -> Option<u64> {
        self.0.zone_write_pointer(zone)
    }
    fn zone_command(
        &mut self,
        _target: usize,
        now_ns: SimTime,
        op: ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        self.0.zone_command(now_ns, op, zone)
    }
}
