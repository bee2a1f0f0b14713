//! A link several devices sit behind (a chipset uplink, a PCIe switch, an HBA): the data of
//! every device behind it crosses it, one transfer at a time per direction.
//!
//! Each direction is a timeline of booked intervals. A transfer books the earliest gap at or
//! after the time its data is ready: reads book their window when the drive sends the data,
//! which may lie far ahead of the submission (a hard disk's read), so a FIFO busy-until time
//! would make every later transfer wait behind it. Transfers cut through: a write's data
//! reaches the drive while it is still crossing the link, so a transfer costs the link time,
//! not the link time plus the drive's own link time.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use flashlab_engine::time::transfer_ns;
use flashlab_engine::{BlockDevice, Completion, DeviceError, IoKind, IoRequest, SimTime};
use serde_json::json;

use crate::counters::{CacheCounters, RaidCounters};
use crate::Component;

/// Booked intervals kept at most; beyond, the oldest are forgotten (they lie in the past of
/// every device that still submits, so nothing can book before them anyway).
const MAX_INTERVALS: usize = 4096;

/// Booked `[start, end)` intervals of one direction, sorted and disjoint.
#[derive(Debug, Default)]
struct Timeline {
    busy: VecDeque<(u64, u64)>,
}

flashlab_engine::impl_state!(Timeline { busy });

impl Timeline {
    /// What [`Timeline::book`] leaves: at most [`MAX_INTERVALS`] intervals, each within
    /// itself, in order without overlap, all before 2^62 ns.
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        if self.busy.len() > MAX_INTERVALS {
            return Err(format!(
                "holds {} booked intervals (valid: at most {MAX_INTERVALS})",
                self.busy.len()
            ));
        }
        let mut prev_end = 0;
        for &(s, e) in &self.busy {
            if s < prev_end || e < s || e > limit {
                return Err(format!(
                    "books [{s}, {e}) ns after an interval ending at {prev_end} ns (valid: in order, not overlapping, before 2^62 ns)"
                ));
            }
            prev_end = e;
        }
        Ok(())
    }
}

impl Timeline {
    /// Book `dur_ns` at the earliest gap starting at or after `earliest_ns`; returns the start.
    fn book(&mut self, earliest_ns: u64, dur_ns: u64) -> u64 {
        while self
            .busy
            .front()
            .is_some_and(|&(_, e)| e + 1_000_000_000 < earliest_ns)
        {
            // Intervals a second in the past of a new booking cannot matter any more.
            self.busy.pop_front();
        }
        let mut at = earliest_ns;
        let mut idx = self.busy.len();
        for (i, &(s, e)) in self.busy.iter().enumerate() {
            if e <= at {
                continue;
            }
            if s >= at + dur_ns {
                idx = i;
                break;
            }
            at = at.max(e);
        }
        let end = at + dur_ns;
        // Merge with touching neighbours to keep the list short.
        let touches_prev = idx > 0 && self.busy[idx - 1].1 == at;
        let touches_next = idx < self.busy.len() && self.busy[idx].0 == end;
        match (touches_prev, touches_next) {
            (true, true) => {
                self.busy[idx - 1].1 = self.busy[idx].1;
                self.busy.remove(idx);
            }
            (true, false) => self.busy[idx - 1].1 = end,
            (false, true) => self.busy[idx].0 = at,
            (false, false) => self.busy.insert(idx, (at, end)),
        }
        if self.busy.len() > MAX_INTERVALS {
            self.busy.pop_front();
        }
        at
    }
}

/// The shared state of one link.
#[derive(Debug)]
pub struct SharedLink {
    name: String,
    bytes_per_s: u64,
    latency_ns: u64,
    /// 0: towards the devices (writes), 1: towards the host (reads).
    dirs: [Timeline; 2],
    bytes: [u64; 2],
    busy_ns: [u64; 2],
    /// Time transfers waited for the link beyond the moment their data was ready.
    wait_ns: u64,
}

// A link shared by several ports is saved with each (the same values loaded again).
flashlab_engine::impl_state!(SharedLink {
    dirs, bytes, busy_ns, wait_ns
} skip { name, bytes_per_s, latency_ns } check SharedLink::check_loaded);

impl SharedLink {
    pub fn new(name: &str, bytes_per_s: u64, latency_ns: u64) -> Rc<RefCell<SharedLink>> {
        Rc::new(RefCell::new(SharedLink {
            name: name.to_string(),
            bytes_per_s: bytes_per_s.max(1),
            latency_ns,
            dirs: Default::default(),
            bytes: [0; 2],
            busy_ns: [0; 2],
            wait_ns: 0,
        }))
    }

    /// A loaded link's bookings are possible ([`Timeline::check_loaded`]) and neither
    /// direction was busy longer than a run lasts (2^62 ns).
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        for (dir, (t, &busy)) in ["to the devices", "to the host"]
            .iter()
            .zip(self.dirs.iter().zip(&self.busy_ns))
        {
            t.check_loaded()
                .map_err(|e| format!("shared link '{}' {dir} {e}", self.name))?;
            if busy > limit {
                return Err(format!(
                    "shared link '{}': busy_ns {dir} is {busy} ns (valid: at most 2^62 ns, the time a run reaches)",
                    self.name
                ));
            }
        }
        Ok(())
    }

    /// Book a transfer of `bytes` in direction `dir` whose data is ready at `ready_ns`;
    /// returns (start, end).
    fn transfer(&mut self, dir: usize, ready_ns: u64, bytes: u64) -> (u64, u64) {
        let dur = transfer_ns(bytes, self.bytes_per_s);
        let s = self.dirs[dir].book(ready_ns, dur);
        self.bytes[dir] += bytes;
        self.busy_ns[dir] += dur;
        self.wait_ns += s - ready_ns;
        (s, s + dur)
    }

    pub fn counters_json(&self) -> serde_json::Value {
        json!({
            "name": self.name,
            "bytes_per_s": self.bytes_per_s,
            "latency_ns": self.latency_ns,
            "bytes_to_devices": self.bytes[0],
            "bytes_to_host": self.bytes[1],
            "busy_ns_to_devices": self.busy_ns[0],
            "busy_ns_to_host": self.busy_ns[1],
            "wait_ns": self.wait_ns,
        })
    }
}

/// One device behind a shared link.
pub struct LinkPort {
    link: Rc<RefCell<SharedLink>>,
    inner: Box<dyn Component>,
    /// The device is handed requests in non-decreasing time.
    last_submit_ns: u64,
}

flashlab_engine::impl_state!(LinkPort {
    link,
    inner,
    last_submit_ns
} check LinkPort::check_loaded);

impl LinkPort {
    /// The device behind the port was last handed a request before 2^62 ns.
    fn check_loaded(&self) -> Result<(), String> {
        if self.last_submit_ns > flashlab_engine::state::MAX_STATE_TIME_NS {
            return Err(format!(
                "a port of shared link '{}': last_submit_ns is {} ns (valid: at most 2^62 ns, the time a run reaches)",
                self.link.borrow().name,
                self.last_submit_ns
            ));
        }
        Ok(())
    }

    pub fn new(link: Rc<RefCell<SharedLink>>, inner: Box<dyn Component>) -> LinkPort {
        LinkPort {
            link,
            inner,
            last_submit_ns: 0,
        }
    }
}

impl BlockDevice for LinkPort {
    fn capacity_bytes(&self) -> u64 {
        self.inner.capacity_bytes()
    }
    fn logical_block_bytes(&self) -> u64 {
        self.inner.logical_block_bytes()
    }
    fn queue_depth_limit(&self) -> u32 {
        self.inner.queue_depth_limit()
    }

    fn compresses_data(&self) -> bool {
        self.inner.compresses_data()
    }

    fn prefetch(&self, req: &IoRequest, stage: flashlab_engine::PrefetchStage) {
        self.inner.prefetch(req, stage)
    }
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        let lat = self.link.borrow().latency_ns;
        match req.kind {
            IoKind::Write => {
                let (s, e) = self.link.borrow_mut().transfer(0, now_ns, req.len_bytes);
                let t = (s + lat).max(self.last_submit_ns);
                self.last_submit_ns = t;
                let c = self.inner.submit(t, req)?;
                Ok(Completion {
                    accepted_ns: c.accepted_ns,
                    done_ns: c.done_ns.max(e + lat) + lat,
                })
            }
            IoKind::Read => {
                let t = (now_ns + lat).max(self.last_submit_ns);
                self.last_submit_ns = t;
                let c = self.inner.submit(t, req)?;
                let mut link = self.link.borrow_mut();
                let dur = transfer_ns(req.len_bytes, link.bytes_per_s);
                let ready = c.done_ns.saturating_sub(dur).max(t);
                let (_, e) = link.transfer(1, ready, req.len_bytes);
                Ok(Completion {
                    accepted_ns: c.accepted_ns,
                    done_ns: c.done_ns.max(e) + lat,
                })
            }
            IoKind::Trim | IoKind::Flush => {
                let t = (now_ns + lat).max(self.last_submit_ns);
                self.last_submit_ns = t;
                let c = self.inner.submit(t, req)?;
                Ok(Completion {
                    accepted_ns: c.accepted_ns,
                    done_ns: c.done_ns + lat,
                })
            }
        }
    }

    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        self.inner.idle(from_ns.max(self.last_submit_ns), until_ns);
    }
}

impl Component for LinkPort {
    fn counters_json(&self) -> serde_json::Value {
        let mut v = self.inner.counters_json();
        if let Some(o) = v.as_object_mut() {
            o.insert("behind_link".into(), json!(self.link.borrow().name));
        }
        v
    }
    fn raid_mut(&mut self, name: &str) -> Option<&mut crate::raid::Raid> {
        self.inner.raid_mut(name)
    }
    fn raid_counters(&self) -> Option<RaidCounters> {
        self.inner.raid_counters()
    }
    fn cache_counters(&self, out: &mut Vec<CacheCounters>) {
        self.inner.cache_counters(out)
    }
    fn format(&mut self, at_ns: u64) {
        self.inner.format(at_ns.max(self.last_submit_ns))
    }
    fn ssd(&self) -> Option<&flashlab_device::Ssd> {
        self.inner.ssd()
    }
    fn links(&self, out: &mut Vec<serde_json::Value>) {
        let l = self.link.borrow().counters_json();
        if !out.iter().any(|v| v["name"] == l["name"]) {
            out.push(l);
        }
        self.inner.links(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookings_fill_gaps_and_merge() {
        let mut t = Timeline::default();
        assert_eq!(t.book(100, 10), 100);
        assert_eq!(t.book(0, 10), 0);
        // A gap of 90 between 10 and 100 takes a 50 ns transfer.
        assert_eq!(t.book(5, 50), 10);
        // No gap of 60 before 110: after.
        assert_eq!(t.book(0, 60), 110);
        assert_eq!(t.book(60, 40), 60);
        // 0..170 is now one merged interval.
        assert_eq!(t.busy.len(), 1);
        assert_eq!(t.busy[0], (0, 170));
    }

    #[test]
    fn late_reservation_does_not_block_earlier_gaps() {
        let link = SharedLink::new("l", 1_000_000_000, 0);
        let mut l = link.borrow_mut();
        // A slow device's read far ahead...
        assert_eq!(l.transfer(1, 1_000_000, 1000), (1_000_000, 1_001_000));
        // ...does not delay a fast device's read now.
        assert_eq!(l.transfer(1, 10_000, 1000), (10_000, 11_000));
        assert_eq!(l.transfer(1, 10_500, 1000), (11_000, 12_000));
        assert_eq!(l.wait_ns, 500);
    }

    /// A forged link is refused at load naming the link and the field: bookings out of
    /// order, ending before they start, past 2^62 ns or more than are kept, a direction busy
    /// longer than a run, a port handed a request past 2^62 ns. A real link loads and books
    /// the same.
    #[test]
    fn forged_links_are_refused_at_load() {
        use crate::test_devices::{Forge, Null};
        use flashlab_engine::state::reload_into;
        let fresh = || {
            LinkPort::new(
                SharedLink::new("up", 1_000_000_000, 100),
                Box::new(Null(1 << 30)),
            )
        };
        let mut p = fresh();
        let mut now = 0;
        for i in 0..8u64 {
            let req = if i % 2 == 0 {
                IoRequest::read(i * 4096, 4096)
            } else {
                IoRequest::write(i * 4096, 8192)
            };
            now = p.submit(now, &req).unwrap().done_ns + i * 3_000;
        }
        let mut ok = fresh();
        reload_into(&p, &mut ok).unwrap();
        assert_eq!(ok.link.borrow().dirs[0].busy, p.link.borrow().dirs[0].busy);
        let req = IoRequest::write(0, 4096);
        assert_eq!(ok.submit(now, &req).unwrap(), p.submit(now, &req).unwrap());
        fn busy(f: &mut LinkPort, dir: usize) -> std::cell::RefMut<'_, VecDeque<(u64, u64)>> {
            std::cell::RefMut::map(f.link.borrow_mut(), |l| &mut l.dirs[dir].busy)
        }
        let cases: [Forge<LinkPort>; 6] = [
            ("shared link 'up' to the devices books", &|f| {
                busy(f, 0).swap(0, 1)
            }),
            ("shared link 'up' to the host books", &|f| {
                let mut b = busy(f, 1);
                b[0] = (b[0].1 + 1, b[0].1);
            }),
            ("before 2^62 ns", &|f| {
                busy(f, 1).push_back((1 << 62, u64::MAX))
            }),
            ("holds 4097 booked intervals", &|f| {
                let mut b = busy(f, 0);
                let last = b.back().unwrap().1;
                for i in 0..4097 - b.len() as u64 {
                    b.push_back((last + 10 * i + 1, last + 10 * i + 2));
                }
            }),
            ("busy_ns to the host", &|f| {
                f.link.borrow_mut().busy_ns[1] = u64::MAX
            }),
            ("a port of shared link 'up': last_submit_ns", &|f| {
                f.last_submit_ns = (1 << 62) + 1
            }),
        ];
        for (want, forge) in cases {
            let mut forged = fresh();
            reload_into(&p, &mut forged).unwrap();
            forge(&mut forged);
            let e = reload_into(&forged, &mut fresh()).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
