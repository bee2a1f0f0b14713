//! Drives as components: an SSD from the device crate, a hard disk and a 3D XPoint drive
//! from the media models, each with its host interface.

use std::collections::VecDeque;

use flashlab_device::units::{parse_bytes_per_s, parse_size, parse_time_ns};
use flashlab_device::zoned::{ZoneModel, ZonedPart, Zones, MAX_ZONES};
use flashlab_device::{LinkKind, Ssd};
use flashlab_engine::time::transfer_ns;
use flashlab_engine::{
    not_zoned, BlockDevice, Completion, DeviceError, IoKind, IoRequest, RngStream, SeedTree,
    SimTime, ZoneGeometry, ZoneOp,
};
use flashlab_media::hdd::{Hdd, HddParams};
use flashlab_media::xpoint::{Xpoint, XpointParams};
use serde::Deserialize;
use serde_json::json;

use crate::Component;

/// An SSD built by the device crate.
pub struct SsdNode {
    pub(crate) name: String,
    pub(crate) ssd: Ssd,
}

flashlab_engine::impl_state!(SsdNode { ssd } skip { name });

impl BlockDevice for SsdNode {
    fn capacity_bytes(&self) -> u64 {
        self.ssd.capacity_bytes()
    }
    fn logical_block_bytes(&self) -> u64 {
        self.ssd.logical_block_bytes()
    }
    fn queue_depth_limit(&self) -> u32 {
        self.ssd.queue_depth_limit()
    }
    fn compresses_data(&self) -> bool {
        self.ssd.compresses_data()
    }
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        self.ssd.submit(now_ns, req)
    }
    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        self.ssd.idle(from_ns, until_ns)
    }
    fn prefetch(&self, req: &IoRequest, stage: flashlab_engine::PrefetchStage) {
        self.ssd.prefetch(req, stage)
    }
}

impl Component for SsdNode {
    fn counters_json(&self) -> serde_json::Value {
        json!({"name": self.name, "kind": "ssd", "model": self.ssd.name(), "counters": self.ssd.counters_json()})
    }
    fn format(&mut self, at_ns: SimTime) {
        self.ssd.format(at_ns)
    }
    fn ssd(&self) -> Option<&Ssd> {
        Some(&self.ssd)
    }
}

/// A hard disk description (TOML, human units). Figures and their sources live in the presets.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HddSpec {
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub capacity: String,
    pub rpm: u32,
    pub cylinders: u32,
    pub outer_rate: String,
    pub inner_rate: String,
    pub track_to_track: String,
    pub average_seek: String,
    pub full_stroke: String,
    pub cache: String,
    pub read_ahead: String,
    /// Segments of the read buffer (streams it keeps at once); 1 when not given.
    #[serde(default = "one")]
    pub read_segments: u32,
    /// The head reads the sectors passing under it while waiting for the requested one.
    #[serde(default)]
    pub pre_read: bool,
    #[serde(default = "yes")]
    pub write_cache: bool,
    pub interface: String,
    pub command_overhead: String,
    #[serde(default = "ncq")]
    pub queue_depth: u32,
    /// Host-managed SMR zones (`[zoned]`); none on a conventional disk.
    #[serde(default)]
    pub zoned: Option<HddZonedSpec>,
}

/// A host-managed SMR disk's zones (ZBC/ZAC), the keys named as the SSD's `[zns]` ones where
/// they mean the same.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HddZonedSpec {
    #[serde(default)]
    pub enabled: bool,
    pub zone_size: String,
    /// Zones at the start of the disk without a write pointer (random writes allowed).
    #[serde(default)]
    pub conventional_zones: u32,
    #[serde(default)]
    pub max_open_zones: u32,
    #[serde(default)]
    pub max_active_zones: u32,
    /// What a zone reset (or finish) takes beyond the command: the drive updates its zone
    /// metadata, the media is not touched.
    #[serde(default = "zero_time")]
    pub reset_time: String,
}

fn zero_time() -> String {
    "0ns".into()
}

// By hand, so that a disk without zones prints (and hashes, in its system's configuration
// hash) what it did before zones existed.
impl std::fmt::Debug for HddSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("HddSpec");
        d.field("kind", &self.kind)
            .field("name", &self.name)
            .field("description", &self.description)
            .field("capacity", &self.capacity)
            .field("rpm", &self.rpm)
            .field("cylinders", &self.cylinders)
            .field("outer_rate", &self.outer_rate)
            .field("inner_rate", &self.inner_rate)
            .field("track_to_track", &self.track_to_track)
            .field("average_seek", &self.average_seek)
            .field("full_stroke", &self.full_stroke)
            .field("cache", &self.cache)
            .field("read_ahead", &self.read_ahead)
            .field("read_segments", &self.read_segments)
            .field("pre_read", &self.pre_read)
            .field("write_cache", &self.write_cache)
            .field("interface", &self.interface)
            .field("command_overhead", &self.command_overhead)
            .field("queue_depth", &self.queue_depth);
        if let Some(z) = &self.zoned {
            d.field("zoned", z);
        }
        d.finish()
    }
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn ncq() -> u32 {
    32
}

/// A 3D XPoint drive description.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XpointSpec {
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub capacity: String,
    pub dies: u32,
    pub interleave: String,
    pub t_read: String,
    pub t_write: String,
    pub die_rate: String,
    pub die_write_rate: String,
    pub interface: String,
    pub command_overhead: String,
    pub max_iops: u64,
    #[serde(default = "nvme_qd")]
    pub queue_depth: u32,
    pub endurance: String,
}

fn nvme_qd() -> u32 {
    1024
}

/// Most dies of a 3D XPoint drive: tables are kept per die (Intel's Optane drives have 1
/// to 28 media packages), so the count is bounded before they are made.
pub const MAX_XPOINT_DIES: u32 = 1024;

/// Most commands a second of a 3D XPoint drive: one a nanosecond, the clock's unit.
pub const MAX_XPOINT_IOPS: u64 = 1_000_000_000;

/// Longest time figure of a hard disk or 3D XPoint drive (a seek, a media time, a command's
/// overhead, a zone reset): 1,000 s, far above any drive's, so that times added up in a
/// run stay far below the 2^62 ns a run reaches.
pub const MAX_FIGURE_NS: u64 = 1_000_000_000_000;

/// `v` for `key` when within [`MAX_FIGURE_NS`].
fn figure_time(key: &str, v: &str) -> Result<u64, SpecError> {
    let ns = time(key, v)?;
    if ns > MAX_FIGURE_NS {
        return Err((key.into(), v.into(), "valid: a time from 0 to 1000s".into()));
    }
    Ok(ns)
}

/// A disk's sizes and buffer segments within what holds them: the host's offsets are
/// signed 64-bit, a read-ahead lives in the cache and the cache holds the disk's data (so
/// an offset plus a read-ahead stays within 64 bits).
fn check_disk_sizes(s: &HddSpec, p: &HddParams) -> Result<(), SpecError> {
    for (key, value, bytes, most, what) in [
        (
            "capacity",
            &s.capacity,
            p.capacity_bytes,
            i64::MAX as u64,
            "2^63 - 1 bytes",
        ),
        (
            "cache",
            &s.cache,
            p.cache_bytes,
            p.capacity_bytes,
            "the capacity",
        ),
        (
            "read_ahead",
            &s.read_ahead,
            p.read_ahead_bytes,
            p.cache_bytes,
            "the cache",
        ),
    ] {
        if bytes > most {
            return Err((key.into(), value.clone(), format!("valid: at most {what}")));
        }
    }
    if !(1..=flashlab_media::hdd::MAX_READ_SEGMENTS).contains(&s.read_segments) {
        return Err((
            "read_segments".into(),
            s.read_segments.to_string(),
            format!(
                "valid: 1 to {} (segments of the read buffer)",
                flashlab_media::hdd::MAX_READ_SEGMENTS
            ),
        ));
    }
    Ok(())
}

/// A figure that does not parse: (key, value, what is expected).
pub type SpecError = (String, String, String);

fn size(key: &str, v: &str) -> Result<u64, SpecError> {
    parse_size(v).map_err(|e| (key.into(), v.into(), e.to_string()))
}
fn time(key: &str, v: &str) -> Result<u64, SpecError> {
    parse_time_ns(v).map_err(|e| (key.into(), v.into(), e.to_string()))
}
fn rate(key: &str, v: &str) -> Result<u64, SpecError> {
    parse_bytes_per_s(v).map_err(|e| (key.into(), v.into(), e.to_string()))
}
fn link(key: &str, v: &str) -> Result<u64, SpecError> {
    let k = LinkKind::parse(v).ok_or_else(|| {
        (
            key.into(),
            v.into(),
            format!("valid: {}", flashlab_device::link::LINK_KINDS),
        )
    })?;
    Ok((k.raw_bytes_per_s() as f64 * k.default_efficiency()) as u64)
}

/// A hard disk behind its SATA link, with NCQ; host-managed SMR when it has zones.
pub struct HddDrive {
    name: String,
    hdd: Hdd,
    zones: ZonedPart,
    /// A zone reset's or finish's time beyond the command (metadata only).
    zone_op_ns: u64,
    link_bytes_per_s: u64,
    overhead_ns: u64,
    queue_depth: u32,
    /// SATA is half duplex: one busy-until time.
    link_free_ns: u64,
    /// (done, offset) of commands the drive holds, for its choice of the next one.
    outstanding: VecDeque<(u64, u64)>,
    queued: Vec<u64>,
    reads: u64,
    writes: u64,
    bytes_read: u64,
    bytes_written: u64,
}

flashlab_engine::impl_state!(HddDrive {
    hdd, link_free_ns, outstanding, queued, reads, writes, bytes_read, bytes_written, zones
} skip { name, link_bytes_per_s, overhead_ns, queue_depth, zone_op_ns } check HddDrive::check_loaded);

/// Commands a SATA drive holds at once (NCQ), the bound of `outstanding`.
const NCQ_SLOTS: usize = 32;

impl HddDrive {
    /// A loaded disk's host side is one a run could have left (the disk itself checked its
    /// own): the link free before 2^62 ns, at most 32 commands held (NCQ), each done before
    /// 2^62 ns at an offset on the disk, at most `queue_depth - 1` choices offered.
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let cap = self.capacity_bytes();
        let bad = |what: String| Err(format!("hard disk '{}': {what}", self.name));
        if self.link_free_ns > limit {
            return bad(format!(
                "link_free_ns is {} ns (valid: at most 2^62 ns, the time a run reaches)",
                self.link_free_ns
            ));
        }
        if self.outstanding.len() > NCQ_SLOTS {
            return bad(format!(
                "outstanding holds {} commands (valid: at most {NCQ_SLOTS}, NCQ's slots)",
                self.outstanding.len()
            ));
        }
        if let Some(&(done, at)) = self
            .outstanding
            .iter()
            .find(|&&(d, o)| d > limit || o >= cap)
        {
            return bad(format!(
                "outstanding holds a command at byte {at} done at {done} ns (valid: below {cap} bytes, before 2^62 ns)"
            ));
        }
        if self.queued.len() >= self.queue_depth as usize || self.queued.iter().any(|&o| o >= cap) {
            return bad(format!(
                "queued offers {} commands or one past byte {cap} (valid: at most {}, queue_depth - 1, on the disk)",
                self.queued.len(),
                self.queue_depth - 1
            ));
        }
        Ok(())
    }

    pub fn from_spec(name: &str, s: &HddSpec) -> Result<HddDrive, SpecError> {
        let p = HddParams {
            capacity_bytes: size("capacity", &s.capacity)?,
            rpm: s.rpm,
            cylinders: s.cylinders,
            outer_bytes_per_s: rate("outer_rate", &s.outer_rate)?,
            inner_bytes_per_s: rate("inner_rate", &s.inner_rate)?,
            track_to_track_ns: figure_time("track_to_track", &s.track_to_track)?,
            average_seek_ns: figure_time("average_seek", &s.average_seek)?,
            full_stroke_ns: figure_time("full_stroke", &s.full_stroke)?,
            cache_bytes: size("cache", &s.cache)?,
            read_ahead_bytes: size("read_ahead", &s.read_ahead)?,
            read_segments: s.read_segments,
            pre_read: s.pre_read,
            write_cache: s.write_cache,
        };
        check_disk_sizes(s, &p)?;
        let hdd = Hdd::new(p).ok_or_else(|| {
            (
                "rpm".into(),
                s.rpm.to_string(),
                "figures must be non-zero, at least 3 cylinders, outer_rate >= inner_rate and track_to_track <= average_seek <= full_stroke".into(),
            )
        })?;
        if !(1..=32).contains(&s.queue_depth) {
            return Err((
                "queue_depth".into(),
                s.queue_depth.to_string(),
                "valid: 1 to 32 (NCQ)".into(),
            ));
        }
        let (zones, zone_op_ns) = match &s.zoned {
            Some(z) if z.enabled => {
                let (zones, ns) = disk_zones(z, hdd.params().capacity_bytes)?;
                (Some(zones), ns)
            }
            _ => (None, 0),
        };
        Ok(HddDrive {
            name: name.to_string(),
            hdd,
            zones: ZonedPart(zones),
            zone_op_ns,
            link_bytes_per_s: link("interface", &s.interface)?,
            overhead_ns: figure_time("command_overhead", &s.command_overhead)?,
            queue_depth: s.queue_depth,
            link_free_ns: 0,
            outstanding: VecDeque::with_capacity(NCQ_SLOTS + 1),
            queued: Vec::with_capacity(32),
            reads: 0,
            writes: 0,
            bytes_read: 0,
            bytes_written: 0,
        })
    }
}

/// A host-managed SMR disk's zones from its `[zoned]` keys: as many zones as the capacity
/// holds whole (the host addresses those), each written up to its size (a disk's zone
/// capacity is its size).
fn disk_zones(z: &HddZonedSpec, capacity: u64) -> Result<(Zones, u64), SpecError> {
    let zone_bytes = size("zoned.zone_size", &z.zone_size)?;
    if zone_bytes == 0 || zone_bytes % 4096 != 0 || zone_bytes > capacity {
        return Err((
            "zoned.zone_size".into(),
            z.zone_size.clone(),
            format!("valid: a multiple of 4 KiB, at most the capacity ({capacity} bytes)"),
        ));
    }
    let zones = capacity / zone_bytes;
    if zones > MAX_ZONES {
        let least = capacity.div_ceil(MAX_ZONES).next_multiple_of(4096);
        return Err((
            "zoned.zone_size".into(),
            z.zone_size.clone(),
            format!(
                "the disk would have {zones} zones, more than the {MAX_ZONES} a disk may have; valid: a multiple of 4 KiB from {least} bytes to the capacity ({capacity} bytes)"
            ),
        ));
    }
    // At most MAX_ZONES, which fits.
    let zones = zones as u32;
    if z.conventional_zones >= zones {
        return Err((
            "zoned.conventional_zones".into(),
            z.conventional_zones.to_string(),
            format!(
                "valid: 0 to {} (the disk has {zones} zones; at least one is sequential)",
                zones - 1
            ),
        ));
    }
    for (key, v) in [
        ("zoned.max_open_zones", z.max_open_zones),
        ("zoned.max_active_zones", z.max_active_zones),
    ] {
        if v > zones {
            return Err((
                key.into(),
                v.to_string(),
                format!("valid: 0 (no limit) to {zones}, the disk's zones"),
            ));
        }
    }
    if z.max_active_zones > 0 && z.max_open_zones > z.max_active_zones {
        return Err((
            "zoned.max_open_zones".into(),
            z.max_open_zones.to_string(),
            format!(
                "valid: at most zoned.max_active_zones ({}), as an open zone is active",
                z.max_active_zones
            ),
        ));
    }
    let reset_ns = figure_time("zoned.reset_time", &z.reset_time)?;
    let model = ZoneModel {
        geometry: ZoneGeometry {
            zone_bytes,
            capacity_bytes: zone_bytes,
            zones,
            max_open: z.max_open_zones,
            max_active: z.max_active_zones,
            conventional: z.conventional_zones,
        },
        // The media layout fields place a ZNS drive's zones on its dies; a disk's zones are
        // its LBA ranges, written where the disk model puts them.
        page_bytes: 4096,
        blocks_per_zone: 1,
        units: 1,
        blocks_per_unit: zones,
        keys: "zoned",
    };
    Ok((Zones::new(model), reset_ns))
}

impl BlockDevice for HddDrive {
    fn capacity_bytes(&self) -> u64 {
        match &self.zones.0 {
            Some(z) => z.capacity_bytes(),
            None => self.hdd.params().capacity_bytes / 4096 * 4096,
        }
    }
    fn zones(&self) -> Option<ZoneGeometry> {
        self.zones.0.as_ref().map(Zones::geometry)
    }
    fn zone_write_pointer(&self, zone: u32) -> Option<u64> {
        let z = self.zones.0.as_ref()?;
        (zone < z.geometry().zones).then(|| z.write_pointer(zone))
    }
    /// A zone command changes the disk's zone metadata only: it takes the command overhead
    /// and, for a reset or finish, `zoned.reset_time`; the head does not move.
    fn zone_command(
        &mut self,
        now_ns: SimTime,
        op: ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        let Some(z) = self.zones.0.as_mut() else {
            return Err(not_zoned(op, zone));
        };
        z.command(op, zone)?;
        let extra = match op {
            ZoneOp::Reset | ZoneOp::Finish => self.zone_op_ns,
            ZoneOp::Open | ZoneOp::Close => 0,
        };
        Ok(Completion {
            accepted_ns: now_ns,
            done_ns: now_ns + self.overhead_ns + extra,
        })
    }
    fn queue_depth_limit(&self) -> u32 {
        self.queue_depth
    }
    // A disk has no map whose loads a hint could overlap.
    fn prefetch(&self, _req: &IoRequest, _stage: flashlab_engine::PrefetchStage) {}
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        req.check_range(self.capacity_bytes(), 512)?;
        // A write to a sequential zone must be at its write pointer, before anything happens.
        if let (Some(z), IoKind::Write) = (&mut self.zones.0, req.kind) {
            z.write(req.offset_bytes, req.len_bytes)?;
        }
        while self.outstanding.front().is_some_and(|&(d, _)| d <= now_ns) {
            self.outstanding.pop_front();
        }
        // The other commands' targets stand in for the positions the drive could choose
        // among: random positions, independent of the head. The most recently booked command
        // is not: the head has just read or written its sector (it sits on that cylinder, a
        // turn short of that angle), so it would offer every command a seek-free position
        // and cap each at one revolution (4 KiB random reads over the whole disk came out at
        // 243 IOPS at QD4, three times QD1).
        let last = self.outstanding.len().saturating_sub(1);
        self.queued.clear();
        self.queued.extend(
            self.outstanding
                .iter()
                .take(last)
                .filter(|&&(d, _)| d > now_ns)
                .map(|&(_, o)| o)
                .take(self.queue_depth as usize - 1),
        );
        let t0 = now_ns + self.overhead_ns;
        let x = transfer_ns(req.len_bytes, self.link_bytes_per_s);
        let done = match req.kind {
            IoKind::Read => {
                self.reads += 1;
                self.bytes_read += req.len_bytes;
                let ready = self
                    .hdd
                    .read(t0, req.offset_bytes, req.len_bytes, &self.queued);
                let s = ready.saturating_sub(x).max(self.link_free_ns).max(t0);
                self.link_free_ns = self.link_free_ns.max(s + x);
                (s + x).max(ready)
            }
            IoKind::Write => {
                self.writes += 1;
                self.bytes_written += req.len_bytes;
                let s = t0.max(self.link_free_ns);
                self.link_free_ns = s + x;
                self.hdd.write(
                    s + x,
                    req.offset_bytes,
                    req.len_bytes,
                    &self.queued,
                    req.fua,
                )
            }
            IoKind::Flush => t0.max(self.hdd.flush_done_ns()),
            IoKind::Trim => t0,
        };
        if req.kind == IoKind::Read || req.kind == IoKind::Write {
            if self.outstanding.len() >= NCQ_SLOTS {
                self.outstanding.pop_front();
            }
            self.outstanding.push_back((done, req.offset_bytes));
        }
        Ok(Completion {
            accepted_ns: now_ns,
            done_ns: done,
        })
    }
}

impl Component for HddDrive {
    fn counters_json(&self) -> serde_json::Value {
        let c = self.hdd.counters();
        let mut j = json!({
            "name": self.name,
            "kind": "hdd",
            "reads": self.reads,
            "writes": self.writes,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "media_reads": c.media_reads,
            "media_writes": c.media_writes,
            "read_ahead_hits": c.read_ahead_hits,
            "seek_ns": c.seek_ns,
            "rotation_ns": c.rotation_ns,
            "transfer_ns": c.transfer_ns,
            "reordered": c.reordered,
        });
        if let (Some(z), Some(o)) = (&self.zones.0, j.as_object_mut()) {
            let g = z.geometry();
            let (open, active) = z.open_active();
            o.insert(
                "zoned".into(),
                json!({
                    "zone_size": g.zone_bytes,
                    "zones": g.zones,
                    "conventional_zones": g.conventional,
                    "max_open_zones": g.max_open,
                    "max_active_zones": g.max_active,
                    "open_zones": open,
                    "active_zones": active,
                    "zone_resets": z.resets,
                    "zone_finishes": z.finishes,
                    "implicit_closes": z.implicit_closes,
                }),
            );
        }
        j
    }
}

/// A 3D XPoint drive behind its PCIe link.
pub struct XpointDrive {
    name: String,
    x: Xpoint,
    link_bytes_per_s: u64,
    overhead_ns: u64,
    cmd_spacing_ns: u64,
    ctrl_next_ns: u64,
    queue_depth: u32,
    link_free_ns: [u64; 2],
    endurance_bytes: u64,
    /// The controller's time per command varies around `overhead_ns`.
    command_rng: RngStream,
}

flashlab_engine::impl_state!(XpointDrive {
    x, ctrl_next_ns, link_free_ns, command_rng
} skip { name, link_bytes_per_s, overhead_ns, cmd_spacing_ns, queue_depth, endurance_bytes }
  check XpointDrive::check_loaded);

impl XpointDrive {
    /// A loaded XPoint drive's controller and link are free before 2^62 ns (the media and
    /// the random stream checked their own).
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        if self.ctrl_next_ns > limit || self.link_free_ns.iter().any(|&t| t > limit) {
            return Err(format!(
                "XPoint drive '{}': ctrl_next_ns {} or link_free_ns {:?} is past 2^62 ns, the time a run reaches",
                self.name, self.ctrl_next_ns, self.link_free_ns
            ));
        }
        Ok(())
    }

    pub fn from_spec(name: &str, s: &XpointSpec) -> Result<XpointDrive, SpecError> {
        if s.dies > MAX_XPOINT_DIES {
            return Err((
                "dies".into(),
                s.dies.to_string(),
                format!("valid: 1 to {MAX_XPOINT_DIES}"),
            ));
        }
        let p = XpointParams {
            capacity_bytes: size("capacity", &s.capacity)?,
            dies: s.dies,
            interleave_bytes: size("interleave", &s.interleave)?,
            read_ns: figure_time("t_read", &s.t_read)?,
            write_ns: figure_time("t_write", &s.t_write)?,
            die_bytes_per_s: rate("die_rate", &s.die_rate)?,
            die_write_bytes_per_s: rate("die_write_rate", &s.die_write_rate)?,
        };
        let x = Xpoint::new(p).ok_or_else(|| {
            (
                "dies".into(),
                s.dies.to_string(),
                "dies, interleave and rates must be non-zero".into(),
            )
        })?;
        if s.max_iops == 0 || s.max_iops > MAX_XPOINT_IOPS {
            return Err((
                "max_iops".into(),
                s.max_iops.to_string(),
                format!("valid: 1 to {MAX_XPOINT_IOPS} (a command a nanosecond)"),
            ));
        }
        Ok(XpointDrive {
            name: name.to_string(),
            x,
            link_bytes_per_s: link("interface", &s.interface)?,
            overhead_ns: figure_time("command_overhead", &s.command_overhead)?,
            cmd_spacing_ns: 1_000_000_000 / s.max_iops,
            ctrl_next_ns: 0,
            queue_depth: s.queue_depth.max(1),
            link_free_ns: [0; 2],
            endurance_bytes: size("endurance", &s.endurance)?,
            command_rng: SeedTree::new(1)
                .child("xpoint/command")
                .child(name)
                .stream(),
        })
    }
}

impl BlockDevice for XpointDrive {
    fn capacity_bytes(&self) -> u64 {
        self.x.params().capacity_bytes / 4096 * 4096
    }
    fn queue_depth_limit(&self) -> u32 {
        self.queue_depth
    }
    // The model keeps no map whose loads a hint could overlap.
    fn prefetch(&self, _req: &IoRequest, _stage: flashlab_engine::PrefetchStage) {}
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        req.check_range(self.capacity_bytes(), 512)?;
        let accepted = now_ns.max(self.ctrl_next_ns);
        self.ctrl_next_ns = accepted + self.cmd_spacing_ns;
        let t0 = accepted + self.command_rng.command_ns(self.overhead_ns);
        let x = transfer_ns(req.len_bytes, self.link_bytes_per_s);
        let done = match req.kind {
            IoKind::Read => {
                let ready = self.x.read(t0, req.offset_bytes, req.len_bytes);
                // The link carries the data as it leaves the dies.
                let s = ready.saturating_sub(x).max(self.link_free_ns[1]).max(t0);
                self.link_free_ns[1] = s + x;
                (s + x).max(ready)
            }
            IoKind::Write => {
                let s = t0.max(self.link_free_ns[0]);
                self.link_free_ns[0] = s + x;
                self.x.write(s + x, req.offset_bytes, req.len_bytes)
            }
            // Writes are durable when reported done; nothing to trim (no mapping).
            IoKind::Flush | IoKind::Trim => t0,
        };
        Ok(Completion {
            accepted_ns: accepted,
            done_ns: done,
        })
    }
}

impl Component for XpointDrive {
    fn counters_json(&self) -> serde_json::Value {
        let c = self.x.counters();
        json!({
            "name": self.name,
            "kind": "xpoint",
            "reads": c.reads,
            "writes": c.writes,
            "bytes_read": c.bytes_read,
            "bytes_written": c.bytes_written,
            "endurance_used": c.bytes_written as f64 / self.endurance_bytes.max(1) as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_devices::Forge;
    use flashlab_engine::state::reload_into;

    /// A drive preset's spec, its `[provenance]` (metadata) left out.
    fn spec_of<T: serde::de::DeserializeOwned>(text: &str) -> T {
        let mut table: toml::Table = toml::from_str(text).unwrap();
        table.remove("provenance");
        T::deserialize(toml::Value::Table(table)).unwrap()
    }

    fn hdd() -> HddDrive {
        let text = include_str!("../../../presets/systems/drives/toshiba-dt01aca200-2tb.toml");
        let spec: HddSpec = spec_of(text);
        HddDrive::from_spec("d", &spec).unwrap()
    }

    fn xpoint() -> XpointDrive {
        let text = include_str!("../../../presets/systems/drives/intel-optane-memory-16gb.toml");
        let spec: XpointSpec = spec_of(text);
        XpointDrive::from_spec("x", &spec).unwrap()
    }

    fn smr() -> HddDrive {
        let text = include_str!("../../../presets/systems/drives/wd-ultrastar-dc-hc620-14tb.toml");
        let spec: HddSpec = spec_of(text);
        HddDrive::from_spec("smr", &spec).unwrap()
    }

    /// The HC620 preset: 52,156 zones of 256 MiB, the first 524 conventional. A sequential
    /// zone takes writes at its write pointer only (the error is the zone rules'), a reset
    /// costs the command and the stated metadata time, and the zones reload from a state. A
    /// disk without `[zoned]` has no zones, and its description prints as it did before
    /// zones existed (its system's configuration hash is unchanged).
    #[test]
    fn an_smr_disk_keeps_the_zone_rules() {
        let mut d = smr();
        let g = d.zones().unwrap();
        assert_eq!((g.zones, g.conventional, g.max_open), (52_156, 524, 128));
        assert_eq!(d.capacity_bytes(), 52_156 << 28);
        // Random writes in the conventional zones.
        for i in 0..8u64 {
            d.submit(
                i * 1000,
                &IoRequest::write(((i * 7919) << 16) % (524 << 28), 4096),
            )
            .unwrap();
        }
        let z = 524u64 << 28;
        d.submit(10_000, &IoRequest::write(z, 1 << 20)).unwrap();
        let e = d
            .submit(20_000, &IoRequest::write(z + (2 << 20), 4096))
            .unwrap_err();
        assert!(e.to_string().starts_with("Zone Invalid Write"), "{e}");
        assert_eq!(d.zone_write_pointer(524), Some(1 << 20));
        let c = d.zone_command(30_000, ZoneOp::Reset, 524).unwrap();
        assert_eq!(c.done_ns - 30_000, 50_000 + 100_000);
        assert_eq!(d.zone_write_pointer(524), Some(0));
        assert!(d.zone_command(40_000, ZoneOp::Reset, 3).is_err());
        d.submit(50_000, &IoRequest::write(z, 4096)).unwrap();
        let mut again = smr();
        reload_into(&d, &mut again).unwrap();
        assert_eq!(again.zone_write_pointer(524), Some(4096));
        assert_eq!(d.counters_json()["zoned"]["zone_resets"], 1);

        let plain = hdd();
        assert!(plain.zones().is_none());
        assert!(plain.counters_json().get("zoned").is_none());
        let text = include_str!("../../../presets/systems/drives/toshiba-dt01aca200-2tb.toml");
        let spec: HddSpec = spec_of(text);
        let shown = format!("{spec:?}");
        assert!(shown.ends_with("queue_depth: 32 }"), "{shown}");
        // Zone keys a disk cannot have are refused naming the key.
        let text = include_str!("../../../presets/systems/drives/wd-ultrastar-dc-hc620-14tb.toml");
        let mut spec: HddSpec = spec_of(text);
        spec.zoned.as_mut().unwrap().conventional_zones = 52_156;
        let e = HddDrive::from_spec("smr", &spec).err().unwrap();
        assert_eq!(e.0, "zoned.conventional_zones");
    }

    /// 16 random reads and writes at queue depth 8: commands held, dirty data, streams.
    fn busy<D: BlockDevice>(d: &mut D) -> u64 {
        let cap = d.capacity_bytes() / 4096;
        let mut now = 0;
        for i in 0..16u64 {
            let at = (i * 7919 * 104_729) % cap * 4096;
            let req = if i % 2 == 0 {
                IoRequest::read(at, 8192)
            } else {
                IoRequest::write(at, 4096)
            };
            d.submit(now, &req).unwrap();
            now += 100_000;
        }
        now
    }

    /// A forged hard disk or XPoint drive is refused at load naming the drive and the
    /// field: more commands held than NCQ has, one past the disk or past 2^62 ns, more
    /// choices than the queue depth, a link or controller free past 2^62 ns (the disk's and
    /// the media's own fields have their own tests). Real states load and run the same.
    #[test]
    fn forged_disk_and_xpoint_drives_are_refused_at_load() {
        let mut d = hdd();
        let now = busy(&mut d);
        assert!(d.outstanding.len() > 2);
        let mut ok = hdd();
        reload_into(&d, &mut ok).unwrap();
        let req = IoRequest::read(4096, 4096);
        assert_eq!(ok.submit(now, &req).unwrap(), d.submit(now, &req).unwrap());
        let cases: [Forge<HddDrive>; 4] = [
            ("link_free_ns", &|f| f.link_free_ns = u64::MAX),
            ("outstanding holds 33 commands", &|f| {
                while f.outstanding.len() < 33 {
                    f.outstanding.push_back((0, 0));
                }
            }),
            ("outstanding holds a command at byte", &|f| {
                f.outstanding[0].1 = u64::MAX
            }),
            ("queued offers 32 commands", &|f| f.queued = vec![0; 32]),
        ];
        for (want, forge) in cases {
            let mut forged = hdd();
            busy(&mut forged);
            forge(&mut forged);
            let e = reload_into(&forged, &mut hdd()).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
            assert!(e.contains("hard disk 'd'"), "{e}");
        }

        let mut x = xpoint();
        let now = busy(&mut x);
        let mut ok = xpoint();
        reload_into(&x, &mut ok).unwrap();
        assert_eq!(ok.submit(now, &req).unwrap(), x.submit(now, &req).unwrap());
        let cases: [Forge<XpointDrive>; 2] = [
            ("XPoint drive 'x': ctrl_next_ns", &|f| {
                f.ctrl_next_ns = u64::MAX
            }),
            ("XPoint drive 'x': ctrl_next_ns", &|f| {
                f.link_free_ns[1] = (1 << 62) + 1
            }),
        ];
        for (want, forge) in cases {
            let mut forged = xpoint();
            busy(&mut forged);
            forge(&mut forged);
            let e = reload_into(&forged, &mut xpoint()).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
