//! A hard disk as a function of state and time: seek, rotation, zoned transfer rate, the
//! on-disk cache (read-ahead and write-back) and shortest-positioning-time-first choice among
//! queued commands.
//!
//! Geometry is reduced to what timing needs. The transfer rate falls linearly from the outer
//! to the inner cylinder (zoned recording keeps the linear bit density roughly constant, so
//! bytes per track follow the radius); the bytes of a cylinder are proportional to its rate,
//! which makes the offset → cylinder map the inverse of a quadratic. The angular position of
//! a byte is its place within its track, and the platter's angle at time `t` is
//! `t mod revolution`: both are deterministic, so rotational latency comes out of the
//! positions of consecutive commands and the time between them, not out of a random draw.

use std::collections::VecDeque;

use flashlab_engine::time::transfer_ns;

/// Most segments a read buffer is divided into.
pub const MAX_READ_SEGMENTS: u32 = 64;

/// The figures a hard disk is described by (all integers; the system crate parses the human
/// units).
#[derive(Debug, Clone, PartialEq)]
pub struct HddParams {
    pub capacity_bytes: u64,
    pub rpm: u32,
    /// Cylinders from outer to inner edge (seek distances are counted in them).
    pub cylinders: u32,
    /// Media rate at the outer and the inner edge.
    pub outer_bytes_per_s: u64,
    pub inner_bytes_per_s: u64,
    /// Seek time for one cylinder, for a third of the stroke (the mean distance between two
    /// random positions, which is what "average seek" measures) and for the full stroke.
    pub track_to_track_ns: u64,
    pub average_seek_ns: u64,
    pub full_stroke_ns: u64,
    /// On-disk DRAM buffer; write-back caching holds at most this much not-yet-written data.
    pub cache_bytes: u64,
    /// How far the drive keeps reading past the end of a read while nothing else waits.
    pub read_ahead_bytes: u64,
    /// Segments the read buffer is divided into: the stream being read ahead and the last
    /// streams before it, each keeping `cache_bytes / read_segments` (1: one stream, which
    /// the next read elsewhere replaces).
    pub read_segments: u32,
    /// While it waits for the requested sector to come round, the head reads the track's
    /// sectors passing under it into the segment (read-on-arrival, pre-read), so a read
    /// just before the last one on its track is in the buffer.
    pub pre_read: bool,
    /// Writes complete once in the buffer (the default of desktop drives).
    pub write_cache: bool,
}

/// What the head is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HddOpKind {
    Read,
    Write,
}

/// Cumulative activity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HddCounters {
    pub media_reads: u64,
    pub media_writes: u64,
    pub read_ahead_hits: u64,
    pub seek_ns: u64,
    pub rotation_ns: u64,
    pub transfer_ns: u64,
    /// Commands whose positioning was shortened by choosing among queued commands.
    pub reordered: u64,
}

flashlab_engine::impl_state!(HddCounters {
    media_reads,
    media_writes,
    read_ahead_hits,
    seek_ns,
    rotation_ns,
    transfer_ns,
    reordered
});

/// Bytes the head read past a request, available at a known rate from a known time.
#[derive(Debug, Clone, Copy, Default)]
struct ReadAhead {
    start: u64,
    end: u64,
    /// Time the head was over `start`.
    t0_ns: u64,
    bytes_per_s: u64,
}

flashlab_engine::impl_state!(default ReadAhead { start, end, t0_ns, bytes_per_s });

impl ReadAhead {
    fn at_ns(&self, byte: u64) -> u64 {
        self.t0_ns + transfer_ns(byte - self.start, self.bytes_per_s)
    }
}

/// The disk's mechanical state.
#[derive(Debug, Clone)]
pub struct Hdd {
    p: HddParams,
    rev_ns: u64,
    /// Bytes per cylinder per unit of rate: the cylinder map's constant.
    bytes_per_rate_cyl: f64,
    head_cyl: u32,
    head_free_ns: u64,
    read_ahead: Option<ReadAhead>,
    /// Earlier streams still in the buffer's other segments, oldest first (at most
    /// `read_segments - 1`).
    kept: VecDeque<ReadAhead>,
    /// Bytes one segment keeps.
    segment_bytes: u64,
    /// Buffered writes not yet on the platter: (time written, bytes), in order.
    dirty: VecDeque<(u64, u64)>,
    dirty_bytes: u64,
    last_media_write_ns: u64,
    counters: HddCounters,
}

// Head position, caches and counters; the drive's parameters are configuration.
flashlab_engine::impl_state!(Hdd {
    head_cyl, head_free_ns, read_ahead, kept, dirty, dirty_bytes, last_media_write_ns, counters
} skip { p, rev_ns, bytes_per_rate_cyl, segment_bytes } check Hdd::check_loaded);

impl Hdd {
    /// `None` if a figure is zero or the seek figures do not increase.
    pub fn new(p: HddParams) -> Option<Hdd> {
        let ok = p.capacity_bytes > 0
            && p.rpm > 0
            && p.cylinders >= 3
            && p.inner_bytes_per_s > 0
            && p.outer_bytes_per_s >= p.inner_bytes_per_s
            && p.track_to_track_ns > 0
            && (1..=MAX_READ_SEGMENTS).contains(&p.read_segments)
            && p.track_to_track_ns <= p.average_seek_ns
            && p.average_seek_ns <= p.full_stroke_ns;
        if !ok {
            return None;
        }
        let rev_ns = 60_000_000_000 / p.rpm as u64;
        let mean_rate = (p.outer_bytes_per_s as f64 + p.inner_bytes_per_s as f64) / 2.0;
        let bytes_per_rate_cyl = p.capacity_bytes as f64 / (p.cylinders as f64 * mean_rate);
        Some(Hdd {
            rev_ns,
            bytes_per_rate_cyl,
            head_cyl: 0,
            head_free_ns: 0,
            read_ahead: None,
            kept: VecDeque::with_capacity(p.read_segments as usize),
            segment_bytes: p.cache_bytes / p.read_segments as u64,
            dirty: VecDeque::with_capacity(64),
            dirty_bytes: 0,
            last_media_write_ns: 0,
            counters: HddCounters::default(),
            p,
        })
    }

    /// A loaded disk is one a run could have left: the head on a cylinder of the disk, every
    /// time before 2^62 ns, each read-ahead stream within the disk at a media rate of the
    /// disk, at most `read_segments - 1` earlier streams, and buffered writes in time order
    /// whose bytes add up to `dirty_bytes`, within the buffer (or one write larger than it).
    fn check_loaded(&self) -> Result<(), String> {
        let limit = flashlab_engine::state::MAX_STATE_TIME_NS;
        let p = &self.p;
        let bad = |what: String| Err(format!("the hard disk's {what}"));
        if self.head_cyl >= p.cylinders {
            return bad(format!(
                "head_cyl is {} (valid: below its {} cylinders)",
                self.head_cyl, p.cylinders
            ));
        }
        if self.head_free_ns > limit || self.last_media_write_ns > limit {
            return bad(format!(
                "head_free_ns {} or last_media_write_ns {} is past 2^62 ns, the time a run reaches",
                self.head_free_ns, self.last_media_write_ns
            ));
        }
        let stream_ok = |ra: &ReadAhead| {
            ra.start <= ra.end
                && ra.end <= p.capacity_bytes
                && ra.t0_ns <= limit
                && (p.inner_bytes_per_s.max(1)..=p.outer_bytes_per_s).contains(&ra.bytes_per_s)
        };
        for (which, ra) in self
            .read_ahead
            .iter()
            .map(|ra| ("read_ahead", ra))
            .chain(self.kept.iter().map(|ra| ("kept read-ahead", ra)))
        {
            if !stream_ok(ra) {
                return bad(format!(
                    "{which} holds bytes {} to {} from {} ns at {} bytes/s (valid: within its {} bytes, before 2^62 ns, at a rate from {} to {})",
                    ra.start, ra.end, ra.t0_ns, ra.bytes_per_s, p.capacity_bytes,
                    p.inner_bytes_per_s, p.outer_bytes_per_s
                ));
            }
        }
        let segments = p.read_segments as usize;
        if self.kept.len() >= segments {
            return bad(format!(
                "kept holds {} earlier streams (valid: at most {}, read_segments - 1)",
                self.kept.len(),
                segments - 1
            ));
        }
        let mut sum = 0u64;
        let mut prev = 0u64;
        for &(t, b) in &self.dirty {
            if t < prev || t > limit || b == 0 || b > p.capacity_bytes {
                return bad(format!(
                    "dirty holds a write of {b} bytes reaching the platter at {t} ns after one at {prev} ns (valid: in time order, before 2^62 ns, 1 byte to the disk's size)"
                ));
            }
            prev = t;
            sum = sum.saturating_add(b);
        }
        if sum != self.dirty_bytes
            || (self.dirty_bytes > p.cache_bytes.max(1) && self.dirty.len() > 1)
        {
            return bad(format!(
                "dirty_bytes is {} for {} buffered writes of {sum} bytes (valid: their sum, at most the {} byte buffer unless one write alone)",
                self.dirty_bytes,
                self.dirty.len(),
                p.cache_bytes
            ));
        }
        Ok(())
    }

    pub fn params(&self) -> &HddParams {
        &self.p
    }
    pub fn counters(&self) -> HddCounters {
        self.counters
    }
    pub fn revolution_ns(&self) -> u64 {
        self.rev_ns
    }

    /// Media rate at cylinder `c`.
    fn rate_at(&self, c: f64) -> f64 {
        let ro = self.p.outer_bytes_per_s as f64;
        let ri = self.p.inner_bytes_per_s as f64;
        ro - (ro - ri) * c / self.p.cylinders as f64
    }

    /// Cylinder (fractional) holding byte `offset`: the inverse of
    /// `bytes(c) = k · (ro·c − (ro−ri)·c²/2C)`.
    fn cylinder_of(&self, offset: u64) -> f64 {
        let ro = self.p.outer_bytes_per_s as f64;
        let a = (ro - self.p.inner_bytes_per_s as f64) / (2.0 * self.p.cylinders as f64);
        let y = offset as f64 / self.bytes_per_rate_cyl;
        let c = if a <= 0.0 {
            y / ro
        } else {
            (ro - (ro * ro - 4.0 * a * y).max(0.0).sqrt()) / (2.0 * a)
        };
        c.clamp(0.0, (self.p.cylinders - 1) as f64)
    }

    /// Cylinder, media rate and angular position (ns into a revolution) of byte `offset`.
    pub fn locate(&self, offset: u64) -> (u32, u64, u64) {
        let c = self.cylinder_of(offset);
        let rate = self.rate_at(c);
        let track_bytes = rate * self.rev_ns as f64 / 1e9;
        // Bytes from the start of the cylinder, folded into one track.
        let ci = c.floor();
        let ro = self.p.outer_bytes_per_s as f64;
        let a = (ro - self.p.inner_bytes_per_s as f64) / (2.0 * self.p.cylinders as f64);
        let cyl_start = self.bytes_per_rate_cyl * (ro * ci - a * ci * ci);
        let into = (offset as f64 - cyl_start).max(0.0);
        let frac = (into / track_bytes).fract();
        let angle_ns = (frac * self.rev_ns as f64) as u64 % self.rev_ns;
        (ci as u32, rate.max(1.0) as u64, angle_ns)
    }

    /// Seek time over `distance` cylinders: a square root from the track-to-track figure up
    /// to the average at a third of the stroke (the arm accelerates and decelerates), then a
    /// straight line to the full stroke (it coasts at top speed).
    pub fn seek_ns(&self, distance: u32) -> u64 {
        if distance == 0 {
            return 0;
        }
        let third = (self.p.cylinders / 3).max(2) as f64;
        let d = distance as f64;
        let t1 = self.p.track_to_track_ns as f64;
        let ta = self.p.average_seek_ns as f64;
        let tf = self.p.full_stroke_ns as f64;
        let t = if d <= third {
            t1 + (ta - t1) * ((d - 1.0) / (third - 1.0)).sqrt()
        } else {
            let full = self.p.cylinders as f64;
            ta + (tf - ta) * (d - third) / (full - third)
        };
        t as u64
    }

    /// Seek plus rotational wait to reach `offset` with the head leaving at `start_ns`.
    fn positioning(&self, start_ns: u64, offset: u64) -> (u64, u64) {
        let (cyl, _, angle) = self.locate(offset);
        let seek = self.seek_ns(cyl.abs_diff(self.head_cyl));
        let at = start_ns + seek;
        let now_angle = at % self.rev_ns;
        let rot = (angle + self.rev_ns - now_angle) % self.rev_ns;
        (seek, rot)
    }

    /// Latest time a buffered write reaches the platter (what a cache flush waits for).
    pub fn flush_done_ns(&self) -> u64 {
        self.last_media_write_ns
    }

    /// Do one media access starting no earlier than `start_ns`. `queued` are the offsets of
    /// the other commands the drive holds: with them it picks the one closest in positioning
    /// time, so the positioning charged is the least among them (the submission-ordered
    /// contract fixes the order completions are promised in, so the choice shows up as the
    /// shorter service time it buys, not as a different order).
    /// Returns (time the first byte is under the head, end of the transfer).
    fn media(
        &mut self,
        start_ns: u64,
        kind: HddOpKind,
        offset: u64,
        len: u64,
        queued: &[u64],
    ) -> (u64, u64) {
        let start = start_ns.max(self.head_free_ns);
        let (mut seek, mut rot) = self.positioning(start, offset);
        for &q in queued {
            let (s, r) = self.positioning(start, q);
            if s + r < seek + rot {
                seek = s;
                rot = r;
                self.counters.reordered += 1;
            }
        }
        let (cyl, rate, _) = self.locate(offset);
        let xfer = transfer_ns(len, rate);
        let first = start + seek + rot;
        let end = first + xfer;
        self.counters.seek_ns += seek;
        self.counters.rotation_ns += rot;
        self.counters.transfer_ns += xfer;
        match kind {
            HddOpKind::Read => self.counters.media_reads += 1,
            HddOpKind::Write => self.counters.media_writes += 1,
        }
        self.head_cyl = self.locate(offset + len - 1).0.max(cyl);
        self.head_free_ns = end;
        (first, end)
    }

    /// A read of `[offset, offset+len)` issued at `now_ns`. Returns when the last byte is in
    /// the drive's buffer.
    pub fn read(&mut self, now_ns: u64, offset: u64, len: u64, queued: &[u64]) -> u64 {
        // The buffer keeps only the last `cache_bytes` the head streamed past: a stream that
        // comes back to its start (a file read twice) finds it gone.
        let cache_bytes = self.segment_bytes;
        if let Some(ra) = self.read_ahead.as_mut() {
            let kept_from = ra.start.max(ra.end.saturating_sub(cache_bytes));
            if offset >= kept_from && offset + len <= ra.end {
                self.counters.read_ahead_hits += 1;
                let ready = ra.at_ns(offset + len);
                // The head is still streaming along the track: keep reading ahead.
                ra.end = ra.end.max(offset + len + self.p.read_ahead_bytes);
                ra.end = ra.end.min(self.p.capacity_bytes);
                self.head_free_ns = self.head_free_ns.max(ready);
                return ready.max(now_ns);
            }
            // Another command takes the head: read-ahead stops where it got to.
            let t = now_ns.max(self.head_free_ns);
            let reached = ra.start
                + (t.saturating_sub(ra.t0_ns) as u128 * ra.bytes_per_s as u128 / 1_000_000_000)
                    as u64;
            ra.end = ra.end.min(reached.max(ra.start));
            let kept_from = ra.start.max(ra.end.saturating_sub(cache_bytes));
            if offset >= kept_from && offset + len <= ra.end {
                self.counters.read_ahead_hits += 1;
                return now_ns.max(ra.at_ns(offset + len));
            }
        }
        // An earlier stream another segment still holds.
        for seg in &self.kept {
            let kept_from = seg.start.max(seg.end.saturating_sub(cache_bytes));
            if offset >= kept_from && offset + len <= seg.end {
                self.counters.read_ahead_hits += 1;
                return now_ns.max(seg.at_ns(offset + len));
            }
        }
        // The stream stopped above keeps its segment; the oldest segment makes room.
        if self.p.read_segments > 1 {
            if let Some(ra) = self.read_ahead.take() {
                if self.kept.len() + 1 >= self.p.read_segments as usize {
                    self.kept.pop_front();
                }
                self.kept.push_back(ra);
            }
        }
        let rotation_before = self.counters.rotation_ns;
        let (first, end) = self.media(now_ns, HddOpKind::Read, offset, len, queued);
        let rate = self.locate(offset).1;
        // The sectors that passed under the head during the rotational wait: at most the
        // wait's worth, never before the disk's start.
        let pre = if self.p.pre_read {
            let wait = self.counters.rotation_ns - rotation_before;
            ((wait as u128 * rate as u128 / 1_000_000_000) as u64).min(offset) / 512 * 512
        } else {
            0
        };
        self.read_ahead = (self.p.read_ahead_bytes > 0 || pre > 0).then_some(ReadAhead {
            start: offset - pre,
            end: (offset + len + self.p.read_ahead_bytes).min(self.p.capacity_bytes),
            t0_ns: first - transfer_ns(pre, rate),
            bytes_per_s: rate,
        });
        end
    }

    /// A write whose data is in the drive at `now_ns`. Returns when the drive reports it
    /// done: once buffered with the write cache on (after older buffered writes free enough
    /// room), else once on the platter.
    pub fn write(&mut self, now_ns: u64, offset: u64, len: u64, queued: &[u64], fua: bool) -> u64 {
        if let Some(ra) = self.read_ahead {
            if offset < ra.end && offset + len > ra.start {
                self.read_ahead = None;
            }
        }
        self.kept
            .retain(|seg| !(offset < seg.end && offset + len > seg.start));
        while let Some(&(t, b)) = self.dirty.front() {
            if t > now_ns {
                break;
            }
            self.dirty.pop_front();
            self.dirty_bytes -= b;
        }
        let mut admitted = now_ns;
        let cap = self.p.cache_bytes.max(len);
        while self.dirty_bytes + len > cap {
            let Some((t, b)) = self.dirty.pop_front() else {
                break;
            };
            admitted = admitted.max(t);
            self.dirty_bytes -= b;
        }
        let (_, end) = self.media(admitted, HddOpKind::Write, offset, len, queued);
        self.last_media_write_ns = self.last_media_write_ns.max(end);
        if self.p.write_cache && !fua {
            self.dirty.push_back((end, len));
            self.dirty_bytes += len;
            admitted
        } else {
            end
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn params() -> HddParams {
        HddParams {
            capacity_bytes: 2_000_000_000_000,
            rpm: 7200,
            cylinders: 400_000,
            outer_bytes_per_s: 210_000_000,
            inner_bytes_per_s: 105_000_000,
            track_to_track_ns: 1_000_000,
            average_seek_ns: 8_500_000,
            full_stroke_ns: 18_000_000,
            cache_bytes: 64 << 20,
            read_ahead_bytes: 1 << 20,
            read_segments: 1,
            pre_read: false,
            write_cache: true,
        }
    }

    #[test]
    fn seek_curve_passes_through_the_three_figures_and_rises() {
        let h = Hdd::new(params()).unwrap();
        assert_eq!(h.seek_ns(0), 0);
        assert_eq!(h.seek_ns(1), 1_000_000);
        assert!(h.seek_ns(400_000 / 3).abs_diff(8_500_000) < 1_000);
        assert!(h.seek_ns(400_000).abs_diff(18_000_000) < 1_000);
        let mut prev = 0;
        for d in [1, 10, 100, 1_000, 10_000, 100_000, 200_000, 399_999] {
            let t = h.seek_ns(d);
            assert!(t > prev, "{d}: {t}");
            prev = t;
        }
    }

    #[test]
    fn cylinder_map_covers_the_disk_and_rate_falls_inward() {
        let h = Hdd::new(params()).unwrap();
        let (c0, r0, _) = h.locate(0);
        let (cm, rm, _) = h.locate(1_000_000_000_000);
        let (ce, re, _) = h.locate(2_000_000_000_000 - 1);
        assert_eq!(c0, 0);
        assert!(ce >= 399_990, "{ce}");
        // Outer half of the bytes sits on fewer than half the cylinders.
        assert!(cm < 200_000 && cm > 150_000, "{cm}");
        assert!(r0 > rm && rm > re);
        assert_eq!(r0, 210_000_000);
    }

    #[test]
    fn sequential_reads_stream_at_the_media_rate() {
        let mut h = Hdd::new(params()).unwrap();
        let mut t = 0;
        let len = 128 << 10;
        let first = h.read(t, 0, len, &[]);
        t = first;
        for i in 1..200u64 {
            t = h.read(t, i * len, len, &[]);
        }
        let rate = (199 * len) as f64 / ((t - first) as f64 * 1e-9);
        assert!((rate / 210e6 - 1.0).abs() < 0.02, "{rate}");
        assert!(h.counters().read_ahead_hits >= 190);
    }

    /// Media reads of: a stream at 0, a read far away, then the stream's next 64 KiB.
    fn back_to_an_interrupted_stream(segments: u32) -> u64 {
        let mut h = Hdd::new(HddParams {
            read_segments: segments,
            ..params()
        })
        .unwrap();
        let len = 64 << 10;
        let mut t = h.read(0, 0, len, &[]);
        // Long enough for the head to read past the next 64 KiB.
        t += 5_000_000;
        t = h.read(t, 1_000_000_000_000, len, &[]);
        h.read(t, len, len, &[]);
        h.counters().media_reads
    }

    #[test]
    fn a_segmented_buffer_keeps_a_stream_a_read_elsewhere_interrupted() {
        assert_eq!(back_to_an_interrupted_stream(1), 3);
        assert_eq!(back_to_an_interrupted_stream(2), 2);
    }

    #[test]
    fn pre_read_keeps_what_passed_under_the_head_before_the_sector() {
        let media = |pre_read: bool| {
            let mut h = Hdd::new(HddParams {
                pre_read,
                read_ahead_bytes: 0,
                ..params()
            })
            .unwrap();
            // From the outer edge to the middle: a seek, then part of a turn.
            let off = 1_000_000_000_000;
            let t = h.read(0, off, 4096, &[]);
            // The wait covers the 4 KiB before it (27 us at this zone's rate).
            let wait = h.counters().rotation_ns;
            assert!(wait > 100_000, "{wait}");
            // The 4 KiB just before it on its track.
            h.read(t, off - 4096, 4096, &[]);
            h.counters().media_reads
        };
        assert_eq!(media(false), 2);
        assert_eq!(media(true), 1);
    }

    #[test]
    fn a_stream_read_again_from_its_start_goes_back_to_the_platter() {
        let p = params();
        let mut h = Hdd::new(p.clone()).unwrap();
        let len = 1 << 20;
        // Twice the buffer streamed past the head, then the first MiB again.
        let passes = 2 * p.cache_bytes / len;
        let mut t = 0;
        for i in 0..passes {
            t = h.read(t, i * len, len, &[]);
        }
        let media_before = h.counters().media_reads;
        let again = h.read(t, 0, len, &[]);
        assert_eq!(h.counters().media_reads, media_before + 1);
        // A seek back and part of a turn, at least the transfer of the MiB.
        assert!(
            again - t >= 1_000_000_000 * len / p.outer_bytes_per_s,
            "{}",
            again - t
        );
    }

    #[test]
    fn random_reads_cost_seek_plus_half_a_turn_and_queueing_shortens_them() {
        let mut rng = flashlab_engine::SeedTree::new(7).stream();
        let cap = 2_000_000_000_000u64 / 4096;
        let mut run = |qd: usize| {
            let mut h = Hdd::new(HddParams {
                read_ahead_bytes: 0,
                ..params()
            })
            .unwrap();
            let mut t = 0;
            let mut queue: Vec<u64> = (0..qd).map(|_| rng.below(cap) * 4096).collect();
            let n = 400;
            for _ in 0..n {
                let off = queue.remove(0);
                t = h.read(t, off, 4096, &queue);
                queue.push(rng.below(cap) * 4096);
            }
            n as f64 / (t as f64 * 1e-9)
        };
        let qd1 = run(1);
        let qd32 = run(32);
        // 8.5 ms seek + 4.17 ms half a turn: about 79 IOPS at QD1.
        assert!((65.0..95.0).contains(&qd1), "{qd1}");
        assert!(qd32 > 2.0 * qd1, "{qd1} {qd32}");
    }

    #[test]
    fn write_cache_absorbs_a_burst_then_fills() {
        let mut h = Hdd::new(HddParams {
            cache_bytes: 1 << 20,
            ..params()
        })
        .unwrap();
        let cap = 2_000_000_000_000u64 / 4096;
        let mut rng = flashlab_engine::SeedTree::new(3).stream();
        let first = h.write(0, rng.below(cap) * 4096, 4096, &[], false);
        assert_eq!(first, 0);
        let mut t = 0;
        for _ in 0..1000 {
            t = h.write(t, rng.below(cap) * 4096, 4096, &[], false);
        }
        // 256 writes fit; the rest wait for the platter (~12 ms each).
        assert!(t > 700 * 8_000_000, "{t}");
        assert!(h.flush_done_ns() >= t);
        let mut h = Hdd::new(HddParams {
            write_cache: false,
            ..params()
        })
        .unwrap();
        assert!(h.write(0, 1 << 30, 4096, &[], false) > 1_000_000);
    }

    #[test]
    fn bad_figures_are_refused() {
        assert!(Hdd::new(HddParams {
            average_seek_ns: 100,
            ..params()
        })
        .is_none());
        assert!(Hdd::new(HddParams { rpm: 0, ..params() }).is_none());
    }

    /// A forged disk state is refused at load naming the field: the head past the last
    /// cylinder, a time past 2^62 ns, a read-ahead stream past the disk or at a rate the disk
    /// has nowhere, more kept streams than segments, buffered writes out of order or whose
    /// bytes disagree with `dirty_bytes`. A real state loads and runs the same.
    #[test]
    fn forged_disk_states_are_refused_at_load() {
        use flashlab_engine::state::reload_into;
        let fresh = || {
            Hdd::new(HddParams {
                read_segments: 2,
                ..params()
            })
            .unwrap()
        };
        let mut h = fresh();
        let mut t = h.read(0, 0, 65536, &[]);
        t = h.read(t + 5_000_000, 1_000_000_000_000, 65536, &[]);
        for i in 0..4 {
            t = h.write(t, 500_000_000_000 + i * 4096, 4096, &[], false);
        }
        assert!(h.read_ahead.is_some() && h.kept.len() == 1 && h.dirty.len() == 4);
        let mut ok = fresh();
        reload_into(&h, &mut ok).unwrap();
        assert_eq!(
            ok.read(t, 65536, 65536, &[]),
            h.clone().read(t, 65536, 65536, &[])
        );
        type Forge<'a> = (&'a str, &'a dyn Fn(&mut Hdd));
        let cases: [Forge; 7] = [
            ("head_cyl is 400000", &|f| f.head_cyl = 400_000),
            ("head_free_ns", &|f| f.head_free_ns = u64::MAX),
            ("read_ahead holds bytes", &|f| {
                f.read_ahead.as_mut().unwrap().end = 3_000_000_000_000
            }),
            ("kept read-ahead holds", &|f| f.kept[0].bytes_per_s = 0),
            ("kept holds 2 earlier streams", &|f| {
                let k = f.kept[0];
                f.kept.push_back(k);
            }),
            ("dirty holds a write", &|f| f.dirty.swap(0, 3)),
            ("dirty_bytes is", &|f| f.dirty_bytes += 1),
        ];
        for (want, forge) in cases {
            let mut forged = h.clone();
            forge(&mut forged);
            let e = reload_into(&forged, &mut fresh()).unwrap_err().to_string();
            assert!(e.contains("hard disk's") && e.contains(want), "{want}: {e}");
        }
    }
}
