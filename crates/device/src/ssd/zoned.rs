//! A zoned drive's data path: writes at the write pointer go to their zone's blocks (a page
//! is programmed once the host has filled it, as a conventional stream programs its open
//! page), reads find their page by address, and the zone commands finish (program the last
//! partial page) or reset (erase the zone's blocks). The states and rules are
//! [`crate::zoned::Zones`]'.

use flashlab_engine::{not_zoned, ZoneGeometry, ZoneOp};

use super::*;
use crate::zoned::{ZoneState, ZoneWrite, Zones};

impl Ssd {
    /// The drive's zones, if it is zoned.
    pub fn zones(&self) -> Option<ZoneGeometry> {
        self.zoned.0.as_ref().map(Zones::geometry)
    }

    /// Zone `zone`'s state, if the drive is zoned and has it.
    pub fn zone_state(&self, zone: u32) -> Option<ZoneState> {
        let z = self.zoned.0.as_ref()?;
        (zone < z.geometry().zones).then(|| z.state(zone))
    }

    /// Bytes written in zone `zone` from its start.
    pub fn zone_write_pointer(&self, zone: u32) -> Option<u64> {
        let z = self.zoned.0.as_ref()?;
        (zone < z.geometry().zones).then(|| z.write_pointer(zone))
    }

    /// Zone append at `now_ns`: `len` bytes written at zone `zone`'s write pointer. Returns
    /// the completion and the drive byte the data went to (what NVMe's completion reports).
    pub fn zone_append(
        &mut self,
        now_ns: SimTime,
        zone: u32,
        len: u64,
    ) -> Result<(Completion, u64), DeviceError> {
        let Some(z) = self.zoned.0.as_ref() else {
            return Err(not_zoned(ZoneOp::Open, zone));
        };
        // A zone past the last, or a full one (whose write pointer may be the next zone's
        // start): the zone rules refuse it and name why, before any write is addressed.
        if zone >= z.geometry().zones || z.state(zone) == ZoneState::Full {
            let mut probe = z.clone();
            probe.append(zone, len)?;
        }
        let at = u64::from(zone) * z.geometry().zone_bytes + z.write_pointer(zone);
        let c = self.submit(now_ns, &IoRequest::write(at, len))?;
        Ok((c, at))
    }

    /// A zone management command at `now_ns`. The command takes the controller as any
    /// command does; a finish's program and a reset's erases go to the dies from then on,
    /// and it completes without waiting for them (later work on those dies does).
    pub fn zone_command(
        &mut self,
        now_ns: SimTime,
        op: ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        let Some(z) = self.zoned.0.as_mut() else {
            return Err(not_zoned(op, zone));
        };
        let full_before = z.state(zone.min(z.geometry().zones.saturating_sub(1)));
        let written = z.command(op, zone)?;
        let m = z.model;
        self.media.advance_to(now_ns);
        self.clock_ns = self.clock_ns.max(now_ns);
        let accepted = self.accept(now_ns);
        let t0 = accepted + self.command_rng.command_ns(self.model.command_overhead_ns);
        let partial = written % m.page_bytes;
        let iu = self.model.iu_bytes;
        // The host's bytes of the zone's last page, still in the buffer (a full zone's last
        // page was programmed when it filled or was finished).
        let buffered = if full_before == ZoneState::Full {
            0
        } else {
            partial.next_multiple_of(iu)
        };
        let done = t0;
        match op {
            ZoneOp::Finish if buffered > 0 => {
                let (block, page) = m.locate(zone, written / m.page_bytes);
                self.ops.clear();
                self.push_zone_program(block, page, buffered);
                self.schedule_ops(t0, true);
            }
            ZoneOp::Reset => {
                if buffered > 0 {
                    // The drive drops the data of the unprogrammed page.
                    let (block, _) = m.locate(zone, written / m.page_bytes);
                    let at = self.media.unit_free_ns(block).max(t0);
                    self.buffer
                        .programmed(self.media.unit_of(block), at, buffered);
                }
                let pages = written.div_ceil(m.page_bytes);
                let blocks = pages.min(u64::from(m.blocks_per_zone));
                for k in 0..blocks {
                    let (block, _) = m.locate(zone, k);
                    self.media.erase(block, false, t0);
                    self.ftl.count_zoned_erase(block);
                }
            }
            _ => {}
        }
        self.last_done_ns = self.last_done_ns.max(done);
        Ok(Completion {
            accepted_ns: now_ns,
            done_ns: done,
        })
    }

    /// A host program of `bytes` of zone data to page `page` of `block`.
    fn push_zone_program(&mut self, block: u32, page: u32, bytes: u64) {
        let ius = (bytes >> self.iu_shift) as u32;
        self.ftl.count_zoned_program(ius);
        self.ops.push(NandOp {
            kind: NandOpKind::Program,
            cause: OpCause::HostWrite,
            block,
            page,
            ius,
            slc: false,
        });
    }

    /// [`Self::write`] on a zoned drive: `zw` is where the zone rules put the write. The
    /// data streams through the buffer as a conventional write's does; each page it fills
    /// (and the last, partial, page of a zone it fills) is programmed to the zone's blocks.
    pub(super) fn write_zoned(
        &mut self,
        t0: u64,
        req: &IoRequest,
        zw: ZoneWrite,
    ) -> Result<u64, DeviceError> {
        let Some(m) = self.zoned.0.as_ref().map(|z| z.model) else {
            return Ok(t0);
        };
        let iu = self.model.iu_bytes;
        let cap = m.geometry.capacity_bytes;
        let page = m.page_bytes;
        self.ftl
            .count_zoned_write((zw.to.next_multiple_of(iu) - zw.from.next_multiple_of(iu)) / iu);
        let chunk = ((self.buffer.capacity_bytes() / 4) / page).max(1) * page;
        let (mut done, mut data_ns) = (t0, t0);
        let mut at = zw.from;
        self.version = self.version.wrapping_add(1);
        while at < zw.to {
            let end = (at + chunk).min(zw.to);
            // A partly written IU took its buffer space when its first bytes came.
            let bytes = end.next_multiple_of(iu) - at.next_multiple_of(iu);
            let admitted = self.admit_to_buffer(
                data_ns,
                bytes,
                |need_bytes| format!("{need_bytes} more"),
                "a write",
            )?;
            self.host.buffer_wait_ns += admitted - data_ns;
            data_ns = self.link_transfer(admitted, end - at, false);
            self.ops.clear();
            for p in at / page..end / page {
                let (block, pg) = m.locate(zw.zone, p);
                self.push_zone_program(block, pg, page);
            }
            if end == cap && !cap.is_multiple_of(page) {
                let (block, pg) = m.locate(zw.zone, cap / page);
                self.push_zone_program(block, pg, (cap % page).next_multiple_of(iu));
            }
            let (_, rmw_done) = self.schedule_ops(data_ns, true);
            done = done.max(data_ns).max(rmw_done);
            at = end;
        }
        let _ = req;
        Ok(done)
    }

    /// [`Self::read`] on a zoned drive: programmed pages are read from NAND (only the
    /// codewords asked for), data of a page still filling comes from the buffer, and what
    /// lies past a zone's write pointer reads as zeros without touching NAND.
    pub(super) fn read_zoned(&mut self, t0: u64, req: &IoRequest) -> u64 {
        let Some(z) = self.zoned.0.as_ref() else {
            return t0;
        };
        let m = z.model;
        let zb = m.geometry.zone_bytes;
        let page = m.page_bytes;
        let mut ready = t0;
        let (mut pages, mut at) = (0, req.offset_bytes);
        let end = req.offset_bytes + req.len_bytes;
        while at < end {
            let (zone, off) = (at / zb, at % zb);
            let zone_end = (zone + 1) * zb;
            let z = self.zoned.0.as_ref().expect("zoned");
            let wp = z.write_pointer(zone as u32);
            // The last partial page of a full zone was programmed when it filled.
            let programmed_to = if z.state(zone as u32) == ZoneState::Full {
                wp.next_multiple_of(page)
            } else {
                wp / page * page
            };
            let to = (end.min(zone_end)) - zone * zb;
            let mut o = off;
            while o < to.min(programmed_to) {
                let p = o / page;
                let page_end = ((p + 1) * page).min(to);
                let (block, pg) = m.locate(zone as u32, p);
                let bytes = self.sector_bytes(o, page_end);
                ready = ready.max(self.page_read(t0, (block, pg, false, bytes)));
                pages += 1;
                o = page_end;
            }
            at = zone_end.min(end);
        }
        let ius = (end.next_multiple_of(self.model.iu_bytes)
            - req.offset_bytes / self.model.iu_bytes * self.model.iu_bytes)
            >> self.iu_shift;
        self.ftl.count_zoned_read(ius, pages);
        ready
    }

    /// The zoned part of the device counters: the zones and what happened to them.
    pub(super) fn zoned_json(&self) -> Option<serde_json::Value> {
        let z = self.zoned.0.as_ref()?;
        let g = z.geometry();
        let (open, active) = z.open_active();
        Some(json!({
            "zones": g.zones,
            "zone_bytes": g.zone_bytes,
            "zone_capacity_bytes": g.capacity_bytes,
            "max_open_zones": g.max_open,
            "max_active_zones": g.max_active,
            "blocks_per_zone": z.model.blocks_per_zone,
            "open_zones": open,
            "active_zones": active,
            "zone_resets": z.resets,
            "zone_finishes": z.finishes,
            "implicit_closes": z.implicit_closes,
        }))
    }
}
