//! A failed member, its rebuild onto a replacement, and the resync after an unclean
//! shutdown: background work that moves through the members a chunk at a time.

use flashlab_engine::time::transfer_ns;
use flashlab_engine::DeviceError;

use super::{Background, BackgroundDone, BgKind, Part, Raid, RaidLevel};

impl Raid {
    /// Member `i` stops answering: reads of its data are reconstructed from the others.
    pub fn fail_member(&mut self, i: usize) -> Result<(), String> {
        if i >= self.n() {
            return Err(format!("no member {i}; the set has {}", self.n()));
        }
        let tolerated = match self.p.level {
            RaidLevel::Raid0 => 0,
            RaidLevel::Raid1 => self.n() - 1,
            RaidLevel::Raid10 => 1,
            RaidLevel::Raid5 => 1,
            RaidLevel::Raid6 => 2,
        };
        let already = self.failed.iter().filter(|f| **f).count();
        if already + 1 > tolerated {
            return Err(format!(
                "RAID {} of {} members cannot lose {} members",
                self.p.level.number(),
                self.n(),
                already + 1
            ));
        }
        self.failed[i] = true;
        Ok(())
    }

    /// A blank replacement for failed member `i` is inserted at `now_ns`; it is rebuilt in
    /// the background.
    pub fn start_rebuild(&mut self, now_ns: u64, i: usize) -> Result<(), String> {
        if !self.failed.get(i).copied().unwrap_or(false) {
            return Err(format!("member {i} has not failed"));
        }
        self.start_background(now_ns, BgKind::Rebuild(i));
        Ok(())
    }

    /// Power was lost with writes in flight: mirrors and parity may disagree, so the whole
    /// set is resynchronised in the background (a RAID 0 has nothing to resync).
    pub fn unclean_shutdown(&mut self, now_ns: u64) {
        if self.p.level != RaidLevel::Raid0 {
            self.start_background(now_ns, BgKind::Resync);
        }
    }

    fn start_background(&mut self, now_ns: u64, kind: BgKind) {
        self.bg = Some(Background {
            kind,
            pos: 0,
            next_ns: now_ns,
            started_ns: now_ns,
            writes_done_ns: now_ns,
        });
        self.bg_done = None;
    }

    /// The last rebuild or resync, once finished.
    pub fn background_done(&self) -> Option<BackgroundDone> {
        self.bg_done
    }

    /// Progress of a running rebuild or resync (0..1).
    pub fn background_progress(&self) -> Option<f64> {
        self.bg.map(|b| b.pos as f64 / self.member_bytes as f64)
    }

    /// Let background work run until `until_ns` (also done on every submission and idle gap).
    pub fn run_background(&mut self, until_ns: u64) -> Result<(), DeviceError> {
        // Rebuild and resync copies carry no host data content.
        self.data_compressible_percent = 0;
        let mut steps = 0u32;
        while let Some(b) = self.bg {
            if b.next_ns >= until_ns || steps >= 100_000 {
                break;
            }
            steps += 1;
            self.background_step(b)?;
        }
        Ok(())
    }

    fn background_step(&mut self, mut b: Background) -> Result<(), DeviceError> {
        let t = b.next_ns;
        let len = self.p.chunk_bytes.min(self.member_bytes - b.pos);
        let off = b.pos;
        let n = self.n();
        let row = off / self.p.chunk_bytes;
        self.reads.clear();
        self.writes.clear();
        let part = |m: usize, write: bool| Part {
            member: m,
            offset: off,
            len,
            write,
            parity: false,
        };
        match (b.kind, self.p.level) {
            (BgKind::Rebuild(m), RaidLevel::Raid1) => {
                let src = (0..n).find(|&i| i != m && !self.failed[i]).unwrap_or(0);
                self.reads.push(part(src, false));
                self.writes.push(part(m, true));
            }
            (BgKind::Rebuild(m), RaidLevel::Raid10) => {
                self.reads.push(part(m ^ 1, false));
                self.writes.push(part(m, true));
            }
            (BgKind::Rebuild(m), _) => {
                for i in (0..n).filter(|&i| i != m && !self.failed[i]) {
                    self.reads.push(part(i, false));
                }
                self.writes.push(part(m, true));
            }
            (BgKind::Resync, RaidLevel::Raid1) => {
                self.reads.push(part(0, false));
                for i in 1..n {
                    self.writes.push(part(i, true));
                }
            }
            (BgKind::Resync, RaidLevel::Raid10) => {
                for pair in 0..n / 2 {
                    self.reads.push(part(2 * pair, false));
                    self.writes.push(part(2 * pair + 1, true));
                }
            }
            (BgKind::Resync, _) => {
                let (pm, qm) = self.parity_members(row);
                for i in (0..n).filter(|&i| i != pm && Some(i) != qm) {
                    self.reads.push(part(i, false));
                }
                self.writes.push(Part {
                    parity: true,
                    ..part(pm, true)
                });
                if let Some(q) = qm {
                    self.writes.push(Part {
                        parity: true,
                        ..part(q, true)
                    });
                }
            }
        }
        let (reads_done, writes_done) = self.issue(t)?;
        self.c.background_bytes += len;
        b.pos += len;
        b.next_ns = (t + transfer_ns(len, self.p.background_bytes_per_s.max(1)))
            .max(reads_done)
            .max(b.writes_done_ns);
        b.writes_done_ns = writes_done;
        if b.pos >= self.member_bytes {
            if let BgKind::Rebuild(m) = b.kind {
                self.failed[m] = false;
            }
            self.bg_done = Some(BackgroundDone {
                resync: b.kind == BgKind::Resync,
                started_ns: b.started_ns,
                done_ns: writes_done,
            });
            self.bg = None;
        } else {
            self.bg = Some(b);
        }
        Ok(())
    }
}
