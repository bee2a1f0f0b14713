//! The write path: write-buffer admission, host data over the link, the FTL's writes
//! (compressed or not) and programs to make buffered data durable.

use super::*;

impl Ssd {
    /// Buffer space for `bytes` from `t0` (when it is granted), or why the drive stalls: a
    /// buffer that cannot take them (`need` names them) or a wait past [`MAX_WAIT_NS`] (`what`
    /// waited).
    #[inline]
    pub(super) fn admit_to_buffer(
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

    pub(super) fn write(&mut self, t0: u64, req: &IoRequest) -> Result<u64, DeviceError> {
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
        // FDP: the write's reclaim unit handle (the default, 0, without an identifier).
        let handle = if self.ftl.fdp_enabled() {
            let handles = self.model.ftl.fdp.as_ref().map_or(0, |f| f.handles);
            let id = req.placement.unwrap_or(0);
            if u32::from(id) >= handles {
                return Err(DeviceError::InvalidPlacement { id, handles });
            }
            Some(u32::from(id))
        } else {
            None
        };
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
            if let Some(h) = handle {
                self.ftl.use_handle(h, n as u32);
            }
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
    pub(super) fn write_compressed(
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
    pub(super) fn make_durable(&mut self, t0: u64) -> u64 {
        self.ops.clear();
        self.ftl.flush(&mut self.ops);
        let (last, _) = self.schedule_ops(t0, true);
        last.max(self.host_program_done_ns).max(t0)
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
