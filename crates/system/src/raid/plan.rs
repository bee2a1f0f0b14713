//! Where a host request's pieces go: the layout of each level, copies and degraded
//! members, the parity write strategy, and issuing the planned member I/Os.

use flashlab_engine::{Completion, DeviceError, IoKind, IoRequest};

use super::{Background, BgKind, ParityStrategy, Part, Raid, RaidLevel};

impl Raid {
    /// Parity members of `row` (RAID 5/6): left-symmetric rotation.
    pub(super) fn parity_members(&self, row: u64) -> (usize, Option<usize>) {
        let n = self.n() as u64;
        let p = (n - 1 - row % n) as usize;
        let q = (self.p.level == RaidLevel::Raid6).then(|| (p + 1) % self.n());
        (p, q)
    }

    /// Member holding data chunk `idx` of `row` (RAID 5/6).
    pub(super) fn data_member(&self, row: u64, idx: usize) -> usize {
        let (p, _) = self.parity_members(row);
        (p + self.p.level.parities() + idx) % self.n()
    }

    /// The member is missing for this member offset (failed, or not yet rebuilt there).
    fn missing(&self, m: usize, member_off: u64) -> bool {
        if !self.failed[m] {
            return false;
        }
        match self.bg {
            Some(Background {
                kind: BgKind::Rebuild(r),
                pos,
                ..
            }) if r == m => member_off >= pos,
            _ => true,
        }
    }

    /// Writes go to a member that is present or being rebuilt.
    fn writable(&self, m: usize) -> bool {
        !self.failed[m]
            || matches!(self.bg, Some(Background { kind: BgKind::Rebuild(r), .. }) if r == m)
    }

    fn push(list: &mut Vec<Part>, p: Part) {
        // Merge with a part that ends where this one starts on the same member.
        if let Some(q) = list.iter_mut().rev().take(8).find(|q| {
            q.member == p.member
                && q.write == p.write
                && q.offset + q.len == p.offset
                && q.parity == p.parity
        }) {
            q.len += p.len;
            return;
        }
        list.push(p);
    }

    /// Choose a copy to read from among `copies`: the least busy one present.
    fn pick_copy(&self, copies: impl Iterator<Item = usize>, member_off: u64) -> Option<usize> {
        copies
            .filter(|&m| !self.missing(m, member_off))
            .min_by_key(|&m| (self.last_done_ns[m], self.member_reads[m]))
    }

    /// Plan the member I/Os of a host read or write of `[off, off+len)` into `reads` then
    /// `writes` (writes depend on the reads).
    pub(super) fn plan(&mut self, kind: IoKind, off: u64, len: u64) {
        let chunk = self.p.chunk_bytes;
        let d = self.data_disks() as u64;
        let row_bytes = chunk * d;
        let end = off + len;
        let mut row = off / row_bytes;
        while row * row_bytes < end {
            let row_start = row * row_bytes;
            let a = off.max(row_start) - row_start;
            let b = end.min(row_start + row_bytes) - row_start;
            self.plan_row(kind, row, a, b);
            row += 1;
        }
    }

    /// Plan `[a, b)` bytes of row `row` (offsets within the row's data).
    pub(super) fn plan_row(&mut self, kind: IoKind, row: u64, a: u64, b: u64) {
        let chunk = self.p.chunk_bytes;
        let base = row * chunk;
        let write = kind == IoKind::Write;
        let trim = kind == IoKind::Trim;
        let part = |m: usize, s: u64, l: u64, write: bool| Part {
            member: m,
            offset: base + s,
            len: l,
            write,
            parity: false,
        };
        let first = (a / chunk) as usize;
        let last = ((b - 1) / chunk) as usize;
        let span = |idx: usize| {
            let s = (idx as u64 * chunk).max(a) - idx as u64 * chunk;
            let e = ((idx as u64 + 1) * chunk).min(b) - idx as u64 * chunk;
            (s, e - s)
        };
        match self.p.level {
            RaidLevel::Raid0 | RaidLevel::Raid1 | RaidLevel::Raid10 => {
                for idx in first..=last {
                    let (s, l) = span(idx);
                    let copies: (usize, usize) = match self.p.level {
                        RaidLevel::Raid0 => (idx, idx + 1),
                        RaidLevel::Raid1 => (0, self.n()),
                        _ => (2 * idx, 2 * idx + 2),
                    };
                    if write || trim {
                        for m in copies.0..copies.1 {
                            if self.writable(m) {
                                Self::push(&mut self.writes, part(m, s, l, true));
                            }
                        }
                    } else if let Some(m) = self.pick_copy(copies.0..copies.1, base + s) {
                        Self::push(&mut self.reads, part(m, s, l, false));
                    }
                }
            }
            RaidLevel::Raid5 | RaidLevel::Raid6 => {
                self.plan_parity_row(kind, row, first, last, &span)
            }
        }
    }

    fn plan_parity_row(
        &mut self,
        kind: IoKind,
        row: u64,
        first: usize,
        last: usize,
        span: &dyn Fn(usize) -> (u64, u64),
    ) {
        let chunk = self.p.chunk_bytes;
        let base = row * chunk;
        let d = self.data_disks();
        let (pm, qm) = self.parity_members(row);
        let parities: Vec<usize> = std::iter::once(pm).chain(qm).collect();
        let mk = |m: usize, s: u64, l: u64, write: bool, parity: bool| Part {
            member: m,
            offset: base + s,
            len: l,
            write,
            parity,
        };
        if kind != IoKind::Write {
            for idx in first..=last {
                let (s, l) = span(idx);
                let m = self.data_member(row, idx);
                if kind == IoKind::Trim {
                    Self::push(&mut self.writes, mk(m, s, l, true, false));
                } else if !self.missing(m, base + s) {
                    Self::push(&mut self.reads, mk(m, s, l, false, false));
                } else {
                    // Degraded: every other member of the row, data and parity, is read.
                    self.c.degraded_reads += 1;
                    for o in 0..self.n() {
                        if o != m && !self.missing(o, base + s) && Some(o) != qm {
                            Self::push(&mut self.reads, mk(o, s, l, false, o == pm));
                        }
                    }
                }
            }
            return;
        }
        let touched = last - first + 1;
        let pa = (first..=last).map(|i| span(i).0).min().unwrap_or(0);
        let pb = (first..=last)
            .map(|i| span(i).0 + span(i).1)
            .max()
            .unwrap_or(chunk);
        let full = touched == d && pa == 0 && pb == chunk;
        let np = parities.len();
        let degraded = (0..self.n()).any(|m| self.missing(m, base + pa));
        let rmw_ios = 2 * (touched + np);
        let rcw_ios = d - touched + touched + np;
        let use_rmw = !full
            && !degraded
            && match self.p.parity {
                ParityStrategy::Auto => rmw_ios <= rcw_ios,
                ParityStrategy::ReadModifyWrite => true,
                ParityStrategy::ReconstructWrite => false,
            };
        if full {
            self.c.full_stripe_writes += 1;
        } else if use_rmw {
            self.c.rmw_rows += 1;
        } else {
            self.c.reconstruct_rows += 1;
        }
        for idx in first..=last {
            let (s, l) = span(idx);
            let m = self.data_member(row, idx);
            if use_rmw {
                Self::push(&mut self.reads, mk(m, s, l, false, false));
            }
            if self.writable(m) {
                Self::push(&mut self.writes, mk(m, s, l, true, false));
            }
        }
        if !full && !use_rmw {
            for idx in (0..d).filter(|i| !(first..=last).contains(i)) {
                let m = self.data_member(row, idx);
                if !self.missing(m, base + pa) {
                    Self::push(&mut self.reads, mk(m, pa, pb - pa, false, false));
                }
            }
        }
        for &m in &parities {
            if use_rmw {
                Self::push(&mut self.reads, mk(m, pa, pb - pa, false, true));
            }
            if self.writable(m) {
                Self::push(&mut self.writes, mk(m, pa, pb - pa, true, true));
            }
        }
    }

    fn submit_member(&mut self, t: u64, p: Part) -> Result<Completion, DeviceError> {
        let m = p.member;
        let t = t.max(self.clock_ns[m]);
        self.clock_ns[m] = t;
        let req = if p.write {
            IoRequest::write(p.offset, p.len)
                .with_compressible_percent(self.data_compressible_percent)
        } else {
            IoRequest::read(p.offset, p.len)
        };
        let c = self.members[m].submit(t, &req)?;
        self.last_done_ns[m] = self.last_done_ns[m].max(c.done_ns);
        if p.write {
            self.member_writes[m] += 1;
            self.c.parity_writes += u64::from(p.parity);
        } else {
            self.member_reads[m] += 1;
            self.c.parity_reads += u64::from(p.parity);
        }
        Ok(c)
    }

    /// Submit the planned reads then writes at `t`; returns (reads done, all done).
    pub(super) fn issue(&mut self, t: u64) -> Result<(u64, u64), DeviceError> {
        let mut reads_done = t;
        for i in 0..self.reads.len() {
            let p = self.reads[i];
            reads_done = reads_done.max(self.submit_member(t, p)?.done_ns);
        }
        let mut done = reads_done;
        let shift = reads_done - t;
        for i in 0..self.writes.len() {
            let p = self.writes[i];
            let c = self.submit_member(t, p)?;
            // See the `raid` module docs: the write's own duration, after the reads.
            done = done.max(c.done_ns + shift);
        }
        self.reads.clear();
        self.writes.clear();
        Ok((reads_done, done))
    }
}
