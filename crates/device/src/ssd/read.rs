//! The read path: map look-ups (paged map), the write buffer and the controller's read buffer
//! and read-ahead, then NAND page reads of only the codewords asked for.

use super::*;

const NS_PER_DAY: f64 = 86_400e9;

impl Ssd {
    pub(super) fn read(&mut self, t0: u64, req: &IoRequest) -> Result<u64, DeviceError> {
        if let Some(unit) = self.model.compression_unit_bytes {
            return self.read_compressed(t0, req, unit);
        }
        let first = req.offset_bytes >> self.iu_shift;
        let end = req.offset_bytes + req.len_bytes;
        let last = (end - 1) >> self.iu_shift;
        // The data read needs its map entries in DRAM first.
        let t0 = if self.mapcache.is_some() {
            self.map_lookup(t0, first, last, false)?
        } else {
            t0
        };
        if first == last && !self.readbuf.is_enabled() {
            // One IU (the usual small random read) and no read buffer: no page grouping.
            let ready = match self.ftl.read(first as u32) {
                ReadLocation::Nand { block, page, slc } => {
                    let bytes = self.sector_bytes(req.offset_bytes, end);
                    self.page_read(t0, (block, page, slc, bytes)).max(t0)
                }
                ReadLocation::Unmapped | ReadLocation::Buffered => t0,
            };
            self.check_readable(req)?;
            return Ok(self.link_transfer(ready, req.len_bytes, true));
        }
        let ready = if first == last {
            self.read_one_iu(t0, first, req.offset_bytes, end)
        } else {
            self.read_ius(t0, req.offset_bytes, end, first, last)
        };
        self.check_readable(req)?;
        let done = self.link_transfer(ready, req.len_bytes, true);
        if let Some((from, to)) =
            self.readahead
                .observe(req.offset_bytes, end, self.model.user_bytes)
        {
            let t = if self.mapcache.is_some() && to > from {
                let iu_shift = self.iu_shift;
                self.map_lookup(t0, from >> iu_shift, (to - 1) >> iu_shift, false)?
            } else {
                t0
            };
            self.read_ahead(t, from, to);
            // Read-ahead of lost data fails the command that asks for it, not this one.
            self.unreadable = None;
        }
        Ok(done)
    }

    /// [`Self::read`] on a compressing drive: the compressed data of every IU (of
    /// `unit_bytes`) the request touches is read whole, from the granules it was stored in.
    fn read_compressed(
        &mut self,
        t0: u64,
        req: &IoRequest,
        unit_bytes: u64,
    ) -> Result<u64, DeviceError> {
        let from = req.offset_bytes / unit_bytes * unit_bytes;
        let to = (req.offset_bytes + req.len_bytes).next_multiple_of(unit_bytes);
        let (first, last) = (from >> self.iu_shift, (to - 1) >> self.iu_shift);
        let granule = self.model.iu_bytes;
        // Granules of consecutive IUs share pages (each IU's data starts where the previous
        // one's ended): one array read per page, moving the granules asked for. The read
        // buffer and read-ahead, keyed by host address, are not used.
        let mut ready = t0;
        let mut pending: Option<(u32, u32, bool, u64)> = None;
        for lpn in first..=last {
            let ReadLocation::Nand { block, page, slc } = self.ftl.read(lpn as u32) else {
                continue;
            };
            match &mut pending {
                Some((b, p, _, bytes)) if *b == block && *p == page => *bytes += granule,
                _ => {
                    if let Some(read) = pending.take() {
                        ready = ready.max(self.page_read(t0, read));
                    }
                    pending = Some((block, page, slc, granule));
                }
            }
        }
        if let Some(read) = pending {
            ready = ready.max(self.page_read(t0, read));
        }
        self.check_readable(req)?;
        Ok(self.link_transfer(ready, req.len_bytes, true))
    }

    /// An error if a read of this command found its data lost.
    fn check_readable(&mut self, req: &IoRequest) -> Result<(), DeviceError> {
        let Some(block) = self.unreadable.take() else {
            return Ok(());
        };
        self.media_errors += 1;
        let wear = self.ftl.erase_counts()[block as usize];
        Err(DeviceError::Uncorrectable {
            reason: format!(
                "the read of {} bytes at byte {} found block {block} ({wear} erases of {} rated) unpowered past its retention time (nand.retention_*)",
                req.len_bytes, req.offset_bytes, self.model.geometry.pe_cycles
            ),
        })
    }

    /// The map entries of IUs `first..=last` are brought into DRAM from `t0`: a translation
    /// page the map cache misses is read from NAND (a page never written back has no copy
    /// there and costs nothing), and a changed page it evicts is written back through the
    /// write buffer as a write of its hidden IU. Returns when the entries are in DRAM.
    /// `update`: the command changes the entries (a write), which dirties their pages.
    #[inline(never)]
    pub(super) fn map_lookup(
        &mut self,
        t0: u64,
        first: u64,
        last: u64,
        update: bool,
    ) -> Result<u64, DeviceError> {
        let Some(m) = self.model.map_cache else {
            return Ok(t0);
        };
        let shift = m.entries_per_page.trailing_zeros();
        let mut ready = t0;
        for tpage in (first >> shift) as u32..=(last >> shift) as u32 {
            let Some(cache) = self.mapcache.as_mut() else {
                break;
            };
            let Lookup::Miss { evicted_dirty } = cache.lookup(tpage, update) else {
                continue;
            };
            if let Some(old) = evicted_dirty {
                self.write_translation_page(t0, m.first_lpn + old)?;
            }
            if let ReadLocation::Nand { block, page, slc } =
                self.ftl.locate_metadata(m.first_lpn + tpage)
            {
                if let Some(cache) = self.mapcache.as_mut() {
                    cache.counters.translation_reads += 1;
                }
                let done = self.page_read(t0, (block, page, slc, self.model.iu_bytes));
                ready = ready.max(done);
            }
        }
        Ok(ready)
    }

    /// Relocation moved IUs, so their map entries changed: each translation page holding
    /// one is brought into DRAM (read from NAND on a miss, evicting as any look-up does) and
    /// dirtied, once for all the entries of one victim's copies, as DFTL batches a victim's updates per translation page (Gupta, Kim
    /// and Urgaonkar, ASPLOS 2009, section 3.4). The reads start at `t0` beside the copies;
    /// nothing waits for them. Translation pages themselves are found through the directory
    /// kept in DRAM, so moving one costs no look-up.
    pub(super) fn update_relocated_entries(&mut self, t0: u64) {
        let Some(m) = self.model.map_cache else {
            return;
        };
        if self.map_updating {
            // The look-ups below write pages back, which may relocate more: the loop below
            // takes those too.
            return;
        }
        self.map_updating = true;
        let shift = m.entries_per_page.trailing_zeros();
        let mut moved = Vec::new();
        let mut pages = Vec::new();
        loop {
            self.ftl.take_relocated(&mut moved);
            if moved.is_empty() {
                break;
            }
            // A write-back the buffer cannot take stalls the drive; the host write that
            // follows meets the same full buffer and reports it.
            look_up_relocated(&moved, m.first_lpn, shift, &mut pages, |lpn| {
                self.map_lookup(t0, lpn, lpn, true).is_ok()
            });
            moved.clear();
        }
        self.map_updating = false;
    }

    /// Write a translation page (hidden IU `lpn`) back to NAND: it takes write-buffer space
    /// from `t0` and goes to a page program like host data, so it is placed, collected and
    /// worn like data, and counted as a NAND write, not a host write.
    fn write_translation_page(&mut self, t0: u64, lpn: u32) -> Result<(), DeviceError> {
        let iu = self.model.iu_bytes;
        let admitted = self.admit_to_buffer(
            t0,
            iu,
            |need_bytes| format!("a {need_bytes}-byte translation page"),
            "a translation page",
        )?;
        self.bg_done = false;
        self.ftl.write_metadata(lpn, &mut self.ops);
        self.schedule_ops(admitted, true);
        Ok(())
    }

    /// When bytes `[offset, end)` of IU `lpn` are ready for the link, through the read buffer.
    /// The usual small random read: one codeword, looked up and (on a miss) inserted with one
    /// walk of its set; otherwise as [`Self::read_ius`].
    #[inline]
    fn read_one_iu(&mut self, t0: u64, lpn: u64, offset: u64, end: u64) -> u64 {
        let (cw_from, cw_to) = self.codewords(offset, end);
        if cw_to - cw_from != 1 {
            return self.read_ius(t0, offset, end, lpn, lpn);
        }
        let ReadLocation::Nand { block, page, slc } = self.ftl.read(lpn as u32) else {
            return t0;
        };
        match self.readbuf.probe(cw_from) {
            Ok(at) => {
                self.host.read_buffer_hit_ius += 1;
                t0.max(at)
            }
            Err(slot) => {
                let done = self.page_read(t0, (block, page, slc, 1 << self.cw_shift));
                self.readbuf.fill(slot, cw_from, done);
                t0.max(done)
            }
        }
    }

    /// When bytes `[offset, end)` of IUs `first..=last` are ready for the link, through the
    /// read buffer.
    fn read_ius(&mut self, t0: u64, offset: u64, end: u64, first: u64, last: u64) -> u64 {
        let mut ready = t0;
        let iu = self.model.iu_bytes;
        // Consecutive IUs of one page are read with one array read; the codewords it moves
        // ([from, to) in codeword units) go to the read buffer once it is done.
        let mut pending: Option<BufferedRead> = None;
        for lpn in first..=last {
            let from_byte = offset.max(lpn * iu);
            let to_byte = end.min((lpn + 1) * iu);
            let location = self.ftl.read(lpn as u32);
            let ReadLocation::Nand { block, page, slc } = location else {
                continue;
            };
            let (cw_from, cw_to) = self.codewords(from_byte, to_byte);
            if let Some(at) = self.readbuf.all_ready_ns(cw_from, cw_to) {
                self.host.read_buffer_hit_ius += 1;
                // In DRAM (or on its way there): no NAND read. A page read on either side
                // of it still goes as one (re-inserting it keeps its earlier time).
                ready = ready.max(at);
                if let Some(((b, p, _, _), _, to)) = &mut pending {
                    if *b == block && *p == page && *to == cw_from {
                        *to = cw_to;
                    }
                }
                continue;
            }
            // Bytes of this IU the request asks for (whole IUs but at the ends).
            let bytes = (cw_to - cw_from) << self.cw_shift;
            match &mut pending {
                Some(((b, p, _, n), _, to)) if *b == block && *p == page && *to == cw_from => {
                    *n += bytes;
                    *to = cw_to;
                }
                _ => {
                    if let Some(p) = pending.take() {
                        ready = ready.max(self.buffered_page_read(t0, p));
                    }
                    pending = Some(((block, page, slc, bytes), cw_from, cw_to));
                }
            }
        }
        if let Some(p) = pending {
            ready = ready.max(self.buffered_page_read(t0, p));
        }
        ready
    }

    /// Codewords (read units, `[from, to)`) holding bytes `[from_byte, to_byte)`.
    #[inline]
    pub(super) fn codewords(&self, from_byte: u64, to_byte: u64) -> (u64, u64) {
        (
            from_byte >> self.cw_shift,
            (to_byte + (1 << self.cw_shift) - 1) >> self.cw_shift,
        )
    }

    /// A page read whose codewords `[from, to)` stay in the read buffer. These are the reads
    /// of several pages at once (a long command, read-ahead): each goes to its die as part
    /// of a multi-plane read of the data's superpage ([`Self::superpage_address`]).
    fn buffered_page_read(&mut self, t0: u64, (read, from, to): BufferedRead) -> u64 {
        let (block, _, slc, bytes) = read;
        let lpn = (from << self.cw_shift) >> self.iu_shift;
        let done = self.page_read(t0, (block, self.superpage_address(lpn), slc, bytes));
        for cw in from..to {
            self.readbuf.insert(cw, done);
        }
        done
    }

    /// Read whole IUs of bytes `[from, to)` into the read buffer in the background: they use
    /// dies and channels as host reads do, and a host read of them waits for them.
    fn read_ahead(&mut self, t0: u64, from: u64, to: u64) {
        let iu = self.model.iu_bytes;
        let first = from.div_ceil(iu);
        let end = to / iu;
        let mut pending: Option<BufferedRead> = None;
        for lpn in first..end {
            let (cw_from, cw_to) = self.codewords(lpn * iu, (lpn + 1) * iu);
            if self.readbuf.all_ready_ns(cw_from, cw_to).is_some() {
                continue;
            }
            // The host did not ask for it: counted as read ahead, not as a host read.
            let ReadLocation::Nand { block, page, slc } = self.ftl.locate_metadata(lpn as u32)
            else {
                continue;
            };
            self.host.read_ahead_ius += 1;
            match &mut pending {
                Some(((b, p, _, n), _, to)) if *b == block && *p == page && *to == cw_from => {
                    *n += iu;
                    *to = cw_to;
                }
                _ => {
                    if let Some(p) = pending.take() {
                        self.buffered_page_read(t0, p);
                    }
                    pending = Some(((block, page, slc, iu), cw_from, cw_to));
                }
            }
        }
        if let Some(p) = pending {
            self.buffered_page_read(t0, p);
        }
    }

    /// The page address a read of IU `lpn`'s page gives its die for a multi-plane read, which
    /// joins only reads of one address on the die's other planes. Firmware programs a die's
    /// planes as one superpage at one address, and folds or relocates data a superpage at a
    /// time, so the pages written together (consecutive logical pages on a die's planes) stay
    /// at one address wherever they are moved. The FTL's write pointers are per plane and
    /// need not mirror that address (GC copies a block at a time, a stripe folded in part
    /// leaves its units' pointers uneven, a host page steered from a busy die skips a unit),
    /// so the address is the data's: its logical superpage, marked by the top bit apart from
    /// the physical page addresses a single page read gives.
    #[inline]
    fn superpage_address(&self, lpn: u64) -> u32 {
        let g = &self.model.geometry;
        let ius_per_superpage =
            (g.page_bytes >> self.iu_shift).max(1) * u64::from(g.planes_per_die.max(1));
        (1 << 31) | (lpn / ius_per_superpage) as u32 & 0x7fff_ffff
    }

    /// Bytes a read of `[from, to)` (within one IU) moves over the flash channel: the ECC
    /// codewords it touches, not the whole IU. A 4 KiB read of a 64 KiB IU moves 4 KiB.
    #[inline]
    pub(super) fn sector_bytes(&self, from: u64, to: u64) -> u64 {
        let cw = READ_UNIT_BYTES.min(self.model.iu_bytes);
        (to.div_ceil(cw) - from / cw) * cw
    }

    #[inline]
    pub(super) fn page_read(
        &mut self,
        t0: u64,
        (block, page, slc, bytes): (u32, u32, bool, u64),
    ) -> u64 {
        let mut done = self.media.read(block, page, bytes, slc, true, t0).0;
        if !slc {
            // Native-mode data takes the decoders' time of its own (`controller.native_decode_bandwidth`).
            done = self.controller.decode_native(done, bytes);
        }
        if self.aging_ns == 0 {
            // Data that has never sat unpowered is read in one go.
            return done;
        }
        self.aged_page_read(done, (block, page, slc, bytes))
    }

    /// A read of data that has aged through power-off time (see `Ssd::power_off`): re-reads
    /// at shifted read voltages as it nears the end of its retention time, each a read of its
    /// own after the last; past it, the data is lost and the command fails.
    #[inline(never)]
    fn aged_page_read(
        &mut self,
        first_done: u64,
        (block, page, slc, bytes): (u32, u32, bool, u64),
    ) -> u64 {
        let b = block as usize;
        let age_ns = (self.clock_ns + self.aging_ns).saturating_sub(self.written_aging_ns[b]);
        let wear = f64::from(self.ftl.erase_counts()[b]) / f64::from(self.model.geometry.pe_cycles);
        let age_days = age_ns as f64 / NS_PER_DAY;
        match flashlab_media::retention::read_retries(&self.model.retention, wear, age_days) {
            Some(retries) => {
                let mut done = first_done;
                for _ in 0..retries {
                    done = self.media.read(block, page, bytes, slc, true, done).0;
                }
                self.read_retries += u64::from(retries);
                done
            }
            None => {
                self.unreadable.get_or_insert(block);
                first_done
            }
        }
    }
}

/// The translation pages of relocated IUs `moved`, one victim's copies at a time (each batch
/// ends with `u32::MAX`; hidden IUs from `first_lpn` on are translation pages themselves,
/// found through the directory in DRAM): `look_up` on the first IU of each page, once per
/// page and batch, in page order; a failed look-up ends the batch.
pub(super) fn look_up_relocated(
    moved: &[u32],
    first_lpn: u32,
    shift: u32,
    pages: &mut Vec<u32>,
    mut look_up: impl FnMut(u64) -> bool,
) {
    for batch in moved.split(|&l| l == u32::MAX) {
        pages.extend(batch.iter().filter(|&&l| l < first_lpn).map(|l| l >> shift));
        pages.sort_unstable();
        pages.dedup();
        for &p in pages.iter() {
            if !look_up(u64::from(p) << shift) {
                break;
            }
        }
        pages.clear();
    }
}
