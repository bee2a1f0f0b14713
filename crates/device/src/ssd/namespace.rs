//! Namespaces: host-visible slices of one drive that share its media, write buffer, garbage
//! collection and SLC cache.
//!
//! The FTL maps the namespaces back to back (namespace 1 first) in one logical space; a
//! namespace is a window on it. [`Namespace`] is a `BlockDevice` borrowing the drive, so a
//! runner can address each tenant with its own offsets and capacity while every request
//! lands on the same dies. fio's `filename=` names them `ns1`, `ns2`, … (or the Linux device
//! name `/dev/nvme0n1`, `nvme0n2`, …: the number after the last `n`).

use flashlab_engine::{
    BlockDevice, Completion, DeviceError, IoKind, IoRequest, PrefetchStage, SimTime, Targets,
    ZoneGeometry, ZoneOp,
};

use super::Ssd;

/// A filename that names no namespace of the drive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no namespace {name:?} on {device}: valid names are {valid}")]
pub struct NamespaceError {
    pub name: String,
    pub device: String,
    pub valid: String,
}

/// Index (0-based) of the namespace `name` among `count`, or why not.
pub fn resolve_namespace(name: &str, count: usize, device: &str) -> Result<usize, NamespaceError> {
    let t = name.trim();
    let file = t.rsplit('/').next().unwrap_or(t).to_ascii_lowercase();
    let number = if let Some(n) = file.strip_prefix("ns") {
        n.parse::<usize>().ok()
    } else if file.starts_with("nvme") {
        file.rsplit_once('n')
            .and_then(|(_, n)| n.parse::<usize>().ok())
    } else {
        None
    };
    match number {
        Some(n) if (1..=count).contains(&n) => Ok(n - 1),
        _ => Err(NamespaceError {
            name: name.to_string(),
            device: device.to_string(),
            valid: if count == 1 {
                "ns1 (or nvme0n1)".to_string()
            } else {
                format!("ns1 to ns{count} (or nvme0n1 to nvme0n{count})")
            },
        }),
    }
}

/// One namespace of a drive, as a block device.
pub struct Namespace<'a> {
    pub(crate) ssd: &'a mut Ssd,
    pub(crate) index: usize,
}

impl Namespace<'_> {
    pub fn index(&self) -> usize {
        self.index
    }

    /// `ns1`, `ns2`, …
    pub fn name(&self) -> String {
        format!("ns{}", self.index + 1)
    }
}

impl BlockDevice for Namespace<'_> {
    fn capacity_bytes(&self) -> u64 {
        self.ssd.namespace_bytes(self.index)
    }

    fn logical_block_bytes(&self) -> u64 {
        self.ssd.logical_block_bytes()
    }

    fn queue_depth_limit(&self) -> u32 {
        self.ssd.queue_depth_limit()
    }

    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        self.ssd.submit_to(self.index, now_ns, req)
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        self.ssd.idle(from_ns, until_ns)
    }

    fn write_window(&mut self, window: flashlab_engine::WriteWindow) {
        self.ssd.write_window(window)
    }

    fn prefetch(&self, req: &IoRequest, stage: PrefetchStage) {
        self.ssd.prefetch_in(self.index, req, stage)
    }

    fn compresses_data(&self) -> bool {
        self.ssd.compresses_data()
    }

    fn placement_handles(&self) -> u32 {
        self.ssd.placement_handles()
    }
}

/// A request of namespace `ns` (starting at byte `start` of the drive, `len` bytes long) in
/// the drive's logical space, or why it does not fit the namespace.
pub(crate) fn translate(req: &IoRequest, start: u64, len: u64) -> Result<IoRequest, DeviceError> {
    if req.kind == IoKind::Flush {
        return Ok(*req);
    }
    if req
        .offset_bytes
        .checked_add(req.len_bytes)
        .is_none_or(|e| e > len)
    {
        return Err(DeviceError::OutOfRange {
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
            capacity_bytes: len,
        });
    }
    Ok(IoRequest {
        offset_bytes: req.offset_bytes + start,
        ..*req
    })
}

/// A drive and its namespaces as a run's [`Targets`]: fio's `filename=` picks one (`ns2`,
/// `/dev/nvme0n2`); a job without a filename, or any job on a drive without namespaces,
/// addresses the whole drive. Target 0 is the whole drive, target `i + 1` namespace `i`.
/// A run that continues the drive's clock wraps it in [`flashlab_engine::Continued`].
pub struct DriveTargets<'a> {
    ssd: &'a mut Ssd,
}

impl<'a> DriveTargets<'a> {
    pub fn new(ssd: &'a mut Ssd) -> Self {
        Self { ssd }
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
        match target {
            0 => self.ssd.submit(now_ns, req),
            t => self.ssd.submit_to(t - 1, now_ns, req),
        }
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        self.ssd.idle(from_ns, until_ns);
    }

    fn write_window(&mut self, window: flashlab_engine::WriteWindow) {
        self.ssd.write_window(window)
    }

    fn prefetch(&self, target: usize, req: &IoRequest, stage: PrefetchStage) {
        match target {
            0 => self.ssd.prefetch(req, stage),
            t => self.ssd.prefetch_in(t - 1, req, stage),
        }
    }

    fn placement_handles(&self) -> u32 {
        self.ssd.placement_handles()
    }
    fn write_totals(&self) -> Option<flashlab_engine::WriteTotals> {
        self.ssd.write_totals()
    }

    // A zoned drive has one namespace (target 0, the whole drive).
    fn zones(&self, target: usize) -> Option<ZoneGeometry> {
        if target == 0 {
            self.ssd.zones()
        } else {
            None
        }
    }

    fn zone_write_pointer(&self, target: usize, zone: u32) -> Option<u64> {
        if target == 0 {
            self.ssd.zone_write_pointer(zone)
        } else {
            None
        }
    }

    fn zone_command(
        &mut self,
        target: usize,
        now_ns: SimTime,
        op: ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        if target == 0 {
            self.ssd.zone_command(now_ns, op, zone)
        } else {
            Err(flashlab_engine::not_zoned(op, zone))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_indices_and_errors_list_valid_names() {
        assert_eq!(resolve_namespace("ns1", 3, "d"), Ok(0));
        assert_eq!(resolve_namespace("NS3", 3, "d"), Ok(2));
        assert_eq!(resolve_namespace("/dev/nvme0n2", 3, "d"), Ok(1));
        assert_eq!(resolve_namespace("nvme1n3", 3, "d"), Ok(2));
        for bad in ["ns0", "ns4", "disk", "", "nvme0n"] {
            let e = resolve_namespace(bad, 3, "drive").unwrap_err();
            assert!(e.to_string().contains("ns1 to ns3"), "{e}");
            assert!(e.to_string().contains("drive"), "{e}");
        }
        let e = resolve_namespace("ns2", 1, "d").unwrap_err();
        assert!(e.to_string().contains("valid names are ns1"), "{e}");
    }

    #[test]
    fn translation_offsets_and_bounds_requests() {
        let r = translate(&IoRequest::read(4096, 4096), 1 << 20, 8192).unwrap();
        assert_eq!(r.offset_bytes, (1 << 20) + 4096);
        assert!(matches!(
            translate(&IoRequest::write(4096, 8192), 0, 8192),
            Err(DeviceError::OutOfRange {
                capacity_bytes: 8192,
                ..
            })
        ));
        assert_eq!(
            translate(&IoRequest::flush(), 77, 1).unwrap(),
            IoRequest::flush()
        );
    }
}
