//! Die scheduling decides the read tail: QD1 random reads while random writes keep every die
//! programming and garbage collection erasing, with first-come-first-served dies, with read
//! priority, and with program/erase suspend.

mod common;

use flashlab_device::units::grouped;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, RngStream, SeedTree};

/// The tiny drive with 700 MB of its 1.1 GB raw for user data: random writes then reach a
/// steady state within one pass over the drive, garbage collection erasing as they go at a
/// rate the drive sustains. (With the preset's 1 GB, the 9.7% spare makes a steady state of
/// ~2,400 random writes/s, all its dies taken by copies.)
fn ssd(sets: &[(&str, &str)]) -> Ssd {
    let sets: Vec<(String, String)> = [("capacity.user", "700MB")]
        .iter()
        .chain(sets)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cfg = load_device_config("tiny-test-1gb", &sets).unwrap();
    Ssd::new(&cfg, SeedTree::new(7)).unwrap()
}

/// What a mixed run measured.
struct Mixed {
    /// Read latencies, sorted.
    reads_ns: Vec<u64>,
    writes: u64,
    duration_ns: u64,
}

impl Mixed {
    fn percentile(&self, p: f64) -> u64 {
        let i = ((self.reads_ns.len() as f64 * p).ceil() as usize).clamp(1, self.reads_ns.len());
        self.reads_ns[i - 1]
    }
    fn write_iops(&self) -> f64 {
        self.writes as f64 / (self.duration_ns as f64 * 1e-9)
    }
}

/// Fill the drive sequentially and write its capacity again at random, then for
/// `duration_ns` run 4 KiB random writes from `write_qd` writers, each issuing at most one
/// write per `write_gap_ns`, beside one 4 KiB random reader at QD1.
fn mixed(d: &mut Ssd, write_qd: usize, write_gap_ns: u64, duration_ns: u64) -> Mixed {
    let cap = d.capacity_bytes();
    let blocks = cap / 4096;
    let mut t = 0;
    let mut off = 0;
    while off < cap {
        let len = (128 << 10).min(cap - off);
        t = d.submit(t, &IoRequest::write(off, len)).unwrap().done_ns;
        off += len;
    }
    // Then 4 KiB random writes of the capacity: they use up the spare, so garbage collection
    // erases through the measured run (after the fill alone the spare would take the run's
    // writes without one erase).
    let mut pre = RngStream::from_seed_u64(5);
    for _ in 0..blocks {
        let at = pre.below(blocks) * 4096;
        t = d.submit(t, &IoRequest::write(at, 4096)).unwrap().done_ns;
    }
    let start = t + 1_000_000;
    let end = start + duration_ns;
    let mut rng = RngStream::from_seed_u64(11);
    // (time the stream's next request is due, is it the reader)
    let mut due: BinaryHeap<Reverse<(u64, bool)>> =
        (0..write_qd).map(|_| Reverse((start, false))).collect();
    due.push(Reverse((start, true)));
    let mut m = Mixed {
        reads_ns: Vec::new(),
        writes: 0,
        duration_ns,
    };
    while let Some(Reverse((now, reader))) = due.pop() {
        if now >= end {
            continue;
        }
        let at = rng.below(blocks) * 4096;
        let req = if reader {
            IoRequest::read(at, 4096)
        } else {
            IoRequest::write(at, 4096)
        };
        let c = d.submit(now, &req).unwrap();
        if reader {
            m.reads_ns.push(c.done_ns - now);
        } else {
            m.writes += 1;
        }
        let next = if reader {
            c.done_ns
        } else {
            c.done_ns.max(now + write_gap_ns)
        };
        due.push(Reverse((next, reader)));
    }
    m.reads_ns.sort_unstable();
    m
}

const US: u64 = 1_000;
/// Four writers at up to 2,000 writes/s each: most of what the drive sustains (about 12,500
/// random writes/s first come, first served, `suspend_costs_some_write_throughput`).
const WQD: usize = 4;
const WGAP: u64 = 500 * US;
const SCHED: [(&str, &str); 2] = [
    ("scheduler.suspend_latency", "20us"),
    ("scheduler.resume_overhead", "10us"),
];

/// A latency as docs/scheduling.md's table shows it: microseconds with a thousands
/// separator below 10 ms, milliseconds to a tenth above.
fn shown(ns: u64) -> String {
    if ns >= 10_000 * US {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else {
        format!("{} us", grouped(ns / US))
    }
}

/// docs/scheduling.md shows `text` (this test's figures): the page says where they come from.
fn page_shows(text: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scheduling.md");
    let page = std::fs::read_to_string(path).expect("docs/scheduling.md");
    assert!(
        page.contains(text),
        "docs/scheduling.md does not show what this test measured; put this in its place:\n{text}"
    );
}

#[test]
fn suspend_keeps_the_read_tail_far_below_program_and_erase_times() {
    // tiny-test-1gb: tR 50 us, tPROG 600 us, tBERS 3.5 ms.
    let fifo = mixed(&mut ssd(&[]), WQD, WGAP, 1_000_000_000);
    let mut all = SCHED.to_vec();
    all.extend([
        ("scheduler.read_priority", "true"),
        ("scheduler.program_suspend", "true"),
        ("scheduler.erase_suspend", "true"),
        ("scheduler.max_suspends_per_op", "255"),
    ]);
    let mut d = ssd(&all);
    let suspend = mixed(&mut d, WQD, WGAP, 1_000_000_000);
    let media = d.counters_json()["media"].clone();
    let mut prio = SCHED.to_vec();
    prio.push(("scheduler.read_priority", "true"));
    let prio_only = mixed(&mut ssd(&prio), WQD, WGAP, 1_000_000_000);

    let (f, p, s) = (
        fifo.percentile(0.9999),
        prio_only.percentile(0.9999),
        suspend.percentile(0.9999),
    );
    for q in [0.99, 0.999, 0.9999] {
        eprintln!(
            "p{q}: fifo {} us, priority {} us, suspend {} us",
            fifo.percentile(q) / US,
            prio_only.percentile(q) / US,
            suspend.percentile(q) / US
        );
    }
    eprintln!(
        "p99.99 read: fifo {} us, priority {} us, suspend {} us; p50 {} / {} / {} us; write IOPS {:.0} / {:.0} / {:.0}; {} reads; suspends {}",
        f / US,
        p / US,
        s / US,
        fifo.percentile(0.5) / US,
        prio_only.percentile(0.5) / US,
        suspend.percentile(0.5) / US,
        fifo.write_iops(),
        prio_only.write_iops(),
        suspend.write_iops(),
        suspend.reads_ns.len(),
        media
    );
    assert!(media["program_suspends"].as_u64().unwrap() > 100, "{media}");
    assert!(media["erase_suspends"].as_u64().unwrap() > 0, "{media}");
    for (dies, m) in [
        ("first come, first served", &fifo),
        ("read priority", &prio_only),
        ("priority + program/erase suspend", &suspend),
    ] {
        page_shows(&format!(
            "| {dies} | {} | {} | {} |",
            shown(m.percentile(0.99)),
            shown(m.percentile(0.999)),
            shown(m.percentile(0.9999))
        ));
    }
    page_shows(&format!(
        "pays the suspend latency: {}.",
        shown(suspend.percentile(0.5))
    ));
    let p999 = |m: &Mixed| m.percentile(0.999);
    // First come, first served: a read waits behind queued programs and erases.
    assert!(p999(&fifo) > 3_500 * US, "fifo p99.9 {}", p999(&fifo));
    // Priority alone: the operation in flight, up to a whole erase (3.5 ms).
    let p = p999(&prio_only);
    assert!(p > 600 * US && p <= 3_600 * US, "priority p99.9 {p}");
    // Suspend: tR + suspend latency + reads ahead, far below one program time.
    assert!(
        p999(&suspend) < 150 * US,
        "suspend p99.9 {}",
        p999(&suspend)
    );
    // The rarest reads wait for a channel full of a garbage-collection burst's transfers,
    // not for a die: still well below first come, first served.
    assert!(s < 3_500 * US && s * 10 < f, "p99.99 suspend {s} fifo {f}");
    assert!(p < f, "p99.99 priority {p} fifo {f}");
}

#[test]
fn suspend_costs_some_write_throughput() {
    let mut all = SCHED.to_vec();
    all.extend([
        ("scheduler.read_priority", "true"),
        ("scheduler.program_suspend", "true"),
        ("scheduler.erase_suspend", "true"),
    ]);
    // Writers as fast as the drive takes them.
    let fifo = mixed(&mut ssd(&[]), WQD, 0, 500_000_000);
    let suspend = mixed(&mut ssd(&all), WQD, 0, 500_000_000);
    let (wf, ws) = (fifo.write_iops(), suspend.write_iops());
    eprintln!("write IOPS: fifo {wf:.0}, suspend {ws:.0}");
    page_shows(&format!(
        "({} to {} per second)",
        grouped(wf.round() as u64),
        grouped(ws.round() as u64)
    ));
    // Resume overheads and reads in the middle of programs take die time from programs.
    assert!(ws < 0.97 * wf && ws > 0.5 * wf, "write IOPS {wf} vs {ws}");
}

#[test]
fn capped_suspensions_make_later_reads_wait() {
    let mut cfg = SCHED.to_vec();
    cfg.extend([
        ("scheduler.read_priority", "true"),
        ("scheduler.program_suspend", "true"),
        ("scheduler.erase_suspend", "true"),
    ]);
    let mut many = cfg.clone();
    many.push(("scheduler.max_suspends_per_op", "255"));
    let mut one = cfg;
    one.push(("scheduler.max_suspends_per_op", "1"));
    let free = mixed(&mut ssd(&many), WQD, WGAP, 300_000_000);
    let capped = mixed(&mut ssd(&one), WQD, WGAP, 300_000_000);
    let (a, b) = (free.percentile(0.999), capped.percentile(0.999));
    assert!(b > 2 * a, "p99.9 with 255 suspends {a}, with 1: {b}");
}

#[test]
fn features_off_is_first_come_first_served_as_before() {
    // The same run with the scheduler section spelled out but off is identical.
    let a = mixed(&mut ssd(&[]), 4, 0, 100_000_000);
    let b = mixed(
        &mut ssd(&[
            ("scheduler.read_priority", "false"),
            ("scheduler.program_suspend", "false"),
            ("scheduler.erase_suspend", "false"),
            ("scheduler.suspend_latency", "1us"),
        ]),
        4,
        0,
        100_000_000,
    );
    assert_eq!(a.reads_ns, b.reads_ns);
    assert_eq!(a.writes, b.writes);
}

#[test]
fn spaced_suspensions_keep_reads_from_waiting_for_a_whole_erase() {
    // A QLC-class 10 ms erase on the tiny drive, suspended at most 8 times: the QD1 reader
    // meets each erase of its plane many times. With a bare count the ninth read waited
    // for the rest of the erase; spaced, a read waits for 10 ms / 8 of it at most.
    let mut cfg = SCHED.to_vec();
    cfg.extend([
        ("nand.t_erase", "10ms"),
        ("scheduler.read_priority", "true"),
        ("scheduler.program_suspend", "true"),
        ("scheduler.erase_suspend", "true"),
        ("scheduler.max_suspends_per_op", "8"),
    ]);
    let mut d = ssd(&cfg);
    let m = mixed(&mut d, WQD, WGAP, 500_000_000);
    let media = d.counters_json()["media"].clone();
    let (p999, max) = (m.percentile(0.999), m.percentile(1.0));
    eprintln!(
        "10 ms erases, 8 suspensions: p50 {} us, p99.9 {} us, max {} us; {} reads; {media}",
        m.percentile(0.5) / US,
        p999 / US,
        max / US,
        m.reads_ns.len()
    );
    assert!(media["erase_suspends"].as_u64().unwrap() > 50, "{media}");
    // A quantum (1.25 ms), the suspend latency, reads ahead and a channel transfer.
    assert!(max < 2_000 * US, "max {max}, p99.9 {p999}");
}
