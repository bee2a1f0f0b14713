//! The host write-back cache: admission, and the partial rows of RAID 5/6 it holds for a
//! later write to complete (see the parent module's docs).

use flashlab_engine::{DeviceError, IoKind};

use super::{HeldRow, Raid, RaidLevel, HELD_ROWS, MAX_PARTS};

impl Raid {
    /// Room in the host cache for `len` bytes at `t`: when it is there.
    pub(super) fn cache_admit(&mut self, t: u64, len: u64, size: u64) -> Result<u64, DeviceError> {
        while self.cached.front().is_some_and(|&(d, _)| d <= t) {
            let (_, b) = self.cached.pop_front().unwrap_or((0, 0));
            self.cached_bytes -= b;
        }
        let mut at = t;
        while self.cached_bytes + len > size.max(len) {
            let Some((d, b)) = self.cached.pop_front() else {
                // Only held rows are left: write the oldest to make room.
                if self.held.is_empty() {
                    break;
                }
                self.write_held_oldest(at)?;
                continue;
            };
            at = at.max(d);
            self.cached_bytes -= b;
        }
        Ok(at)
    }

    /// Whether writes go through the held rows: a parity level with a host cache.
    pub(super) fn holds_rows(&self) -> bool {
        self.p.host_cache.is_some() && matches!(self.p.level, RaidLevel::Raid5 | RaidLevel::Raid6)
    }

    /// Send the planned member I/Os of data the cache holds at `t`: the cache frees its
    /// bytes once they are on the members. Returns when they are.
    fn issue_cached(&mut self, t: u64, bytes: u64) -> Result<u64, DeviceError> {
        let d = self.issue(t)?.1;
        self.cached.push_back((d, bytes));
        self.cached_bytes += bytes;
        self.cached_last_ns = self.cached_last_ns.max(d);
        Ok(d)
    }

    /// Hold `h` in the cache.
    fn hold(&mut self, h: HeldRow) {
        self.held.push_back(h);
        self.cached_bytes += h.b - h.a;
    }

    /// Take held row `i` out of the cache's held list.
    fn unhold(&mut self, i: usize) -> HeldRow {
        let h = self.held.remove(i).expect("a held row");
        self.cached_bytes -= h.b - h.a;
        h
    }

    /// Write the oldest held row as it stands.
    fn write_held_oldest(&mut self, t: u64) -> Result<u64, DeviceError> {
        if self.held.is_empty() {
            return Ok(t);
        }
        let h = self.unhold(0);
        self.c.held_rows_written_partial += 1;
        self.plan_row(IoKind::Write, h.row, h.a, h.b);
        self.issue_cached(t, h.b - h.a)
    }

    /// Write every held row as it stands (flush, idle host).
    pub(super) fn write_all_held(&mut self, t: u64) -> Result<(), DeviceError> {
        while !self.held.is_empty() {
            self.write_held_oldest(t)?;
        }
        Ok(())
    }

    /// A cached write of `[off, off+len)` at `t` on a parity level: whole rows go to the
    /// members, partial ones join or start held rows (`raid` module docs).
    pub(super) fn write_through_held(
        &mut self,
        t: u64,
        off: u64,
        len: u64,
    ) -> Result<(), DeviceError> {
        let row_bytes = self.p.chunk_bytes * self.data_disks() as u64;
        let end = off + len;
        let (first_row, last_row) = (off / row_bytes, (end - 1) / row_bytes);
        // The rows the write covers whole, with a held part that completes them joined in.
        let mut whole_from = first_row;
        let mut whole_to = last_row + 1;
        let edges = if first_row == last_row { 1 } else { 2 };
        for row in [first_row, last_row].into_iter().take(edges) {
            let row_start = row * row_bytes;
            let a = off.max(row_start) - row_start;
            let b = end.min(row_start + row_bytes) - row_start;
            if a == 0 && b == row_bytes {
                continue;
            }
            let (a, b) = self.join_held(t, row, a, b)?;
            if a == 0 && b == row_bytes {
                continue;
            }
            // Still partial: held, and not one of the whole rows.
            if row == first_row {
                whole_from = row + 1;
            } else {
                whole_to = row;
            }
            if whole_to <= whole_from {
                whole_to = whole_from;
            }
            self.hold(HeldRow { row, a, b });
            if self.held.len() > HELD_ROWS {
                self.write_held_oldest(t)?;
            }
        }
        // Whole rows, in pieces of whole rows so the plan stays bounded (as `submit`); held
        // parts of them (a row first held, then covered whole) are written with them.
        let max_rows = (MAX_PARTS / (2 * self.n())).max(1) as u64;
        let mut row = whole_from;
        while row < whole_to {
            let next = (row + max_rows).min(whole_to);
            for r in row..next {
                if let Some(i) = self.held.iter().position(|h| h.row == r) {
                    self.unhold(i);
                }
            }
            self.plan(IoKind::Write, row * row_bytes, (next - row) * row_bytes);
            self.issue_cached(t, (next - row) * row_bytes)?;
            row = next;
        }
        Ok(())
    }

    /// Bytes `[a, b)` of `row` are written at `t`: a held part of the row that they continue
    /// joins them (taken out of the held list); one they do not continue is written first,
    /// as it stands. Returns the part to write or hold.
    fn join_held(&mut self, t: u64, row: u64, a: u64, b: u64) -> Result<(u64, u64), DeviceError> {
        let Some(i) = self.held.iter().position(|h| h.row == row) else {
            return Ok((a, b));
        };
        let h = self.unhold(i);
        if a <= h.b && h.a <= b {
            let (a, b) = (a.min(h.a), b.max(h.b));
            let row_bytes = self.p.chunk_bytes * self.data_disks() as u64;
            if a == 0 && b == row_bytes {
                self.c.held_rows_completed += 1;
            }
            return Ok((a, b));
        }
        self.c.held_rows_written_partial += 1;
        self.plan_row(IoKind::Write, row, h.a, h.b);
        self.issue_cached(t, h.b - h.a)?;
        Ok((a, b))
    }
}
