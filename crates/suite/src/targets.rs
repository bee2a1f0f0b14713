//! A drive's namespaces as the runner's [`Targets`]: fio's `filename=` picks one (`ns2`,
//! `/dev/nvme0n2`); a job without a filename, or any job on a drive without namespaces,
//! addresses the whole drive.

use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, Completion, DeviceError, IoRequest, PrefetchStage, SimTime};
use flashlab_runner::Targets;

/// A drive (and its namespaces) seen from a run that starts at 0 while the drive is already
/// at `offset_ns`. Target 0 is the whole drive, target `i + 1` namespace `i`.
pub struct DriveTargets<'a> {
    ssd: &'a mut Ssd,
    offset_ns: SimTime,
    /// Latest drive time seen: submissions, completions, idle periods.
    horizon_ns: SimTime,
}

impl<'a> DriveTargets<'a> {
    /// The drive, its run starting at drive time `offset_ns`.
    pub fn new(ssd: &'a mut Ssd, offset_ns: SimTime) -> Self {
        Self {
            ssd,
            offset_ns,
            horizon_ns: offset_ns,
        }
    }

    /// Latest drive time the run reached.
    pub fn horizon_ns(&self) -> SimTime {
        self.horizon_ns
    }
}

impl Targets for DriveTargets<'_> {
    fn resolve(&self, filename: Option<&str>) -> Result<usize, String> {
        match filename {
            Some(name) if self.ssd.namespace_count() > 1 => self
                .ssd
                .resolve_namespace(name)
                .map(|i| i + 1)
                .map_err(|e| format!("valid names are {}", e.valid)),
            _ => Ok(0),
        }
    }

    fn capacity_bytes(&self, target: usize) -> u64 {
        match target {
            0 => self.ssd.capacity_bytes(),
            t => self.ssd.namespace_bytes(t - 1),
        }
    }

    fn logical_block_bytes(&self) -> u64 {
        self.ssd.logical_block_bytes()
    }

    fn queue_depth_limit(&self) -> u32 {
        self.ssd.queue_depth_limit()
    }

    fn submit_to(
        &mut self,
        target: usize,
        now_ns: SimTime,
        req: &IoRequest,
    ) -> Result<Completion, DeviceError> {
        let at = now_ns + self.offset_ns;
        let c = match target {
            0 => self.ssd.submit(at, req)?,
            t => self.ssd.submit_to(t - 1, at, req)?,
        };
        self.horizon_ns = self.horizon_ns.max(at).max(c.done_ns);
        // A device never answers before the submission, so these do not underflow.
        Ok(Completion {
            accepted_ns: c.accepted_ns - self.offset_ns,
            done_ns: c.done_ns - self.offset_ns,
        })
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        let until = until_ns + self.offset_ns;
        self.ssd.idle(from_ns + self.offset_ns, until);
        self.horizon_ns = self.horizon_ns.max(until);
    }

    fn prefetch(&self, target: usize, req: &IoRequest, stage: PrefetchStage) {
        match target {
            0 => self.ssd.prefetch(req, stage),
            t => self.ssd.prefetch_in(t - 1, req, stage),
        }
    }
}
