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
} skip { name, bytes_per_s, latency_ns });

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
});

impl LinkPort {
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
}
