//! Preconditioning with the timing model off (`Ssd::untimed`): the same FTL calls as timed
//! host writes, so a sequential fill leaves the same mapping and counts, random writes after
//! it the same write amplification, and the drive runs timed afterwards from a time of the
//! work's order; drives whose state depends on the timing refuse.

mod common;

use common::{fill_sequentially, run_qd, tiny_ssd};
use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, IoRequest, RngStream};

/// Two sequential 128 KiB passes over the drive without timing; returns the end time.
fn untimed_fill(d: &mut Ssd, at_ns: u64) -> u64 {
    let cap = d.capacity_bytes();
    let mut u = d.untimed(at_ns).unwrap();
    for _ in 0..2 {
        let mut off = 0;
        while off < cap {
            let len = (128 << 10).min(cap - off);
            u.write(off, len).unwrap();
            off += len;
        }
    }
    u.finish()
}

fn random_writes(n: u64, ius: u64, seed: u64) -> impl FnMut() -> Option<IoRequest> {
    let mut rng = RngStream::from_seed_u64(seed);
    let mut left = n;
    move || {
        (left > 0).then(|| {
            left -= 1;
            IoRequest::write(rng.below(ius) * 4096, 4096)
        })
    }
}

#[test]
fn an_untimed_fill_leaves_the_timed_fills_mapping_and_counts() {
    let mut timed = tiny_ssd(&[]);
    let t = fill_sequentially(&mut timed, 0);
    fill_sequentially(&mut timed, t);
    let mut fast = tiny_ssd(&[]);
    let end = untimed_fill(&mut fast, 0);
    fast.ftl().check_invariants();
    let (a, b) = (timed.ftl().counters(), fast.ftl().counters());
    assert_eq!(a.host_write_ius, b.host_write_ius);
    assert_eq!(a.nand_write_ius, b.nand_write_ius);
    assert_eq!(a.slc_folded_ius, b.slc_folded_ius);
    assert_eq!(a.gc_copied_ius, b.gc_copied_ius);
    // Both map every IU; the media counted the same programs.
    assert_eq!(timed.ftl().mapped_ius(), fast.ftl().mapped_ius());
    assert_eq!(
        timed.health_log().media_bytes_written,
        fast.health_log().media_bytes_written
    );
    assert!(end > 0, "the clock moved on");
}

#[test]
fn random_writes_after_an_untimed_fill_cost_what_they_cost_after_a_timed_one() {
    let ius = tiny_ssd(&[]).capacity_bytes() / 4096;
    let mut timed = tiny_ssd(&[]);
    let t = fill_sequentially(&mut timed, 0);
    let t = fill_sequentially(&mut timed, t);
    let mut fast = tiny_ssd(&[]);
    let f = untimed_fill(&mut fast, 0);
    let mut figures = Vec::new();
    for (d, start) in [(&mut timed, t), (&mut fast, f)] {
        let before = d.ftl().counters().clone();
        let end = run_qd(d, start, 32, random_writes(2 * ius, ius, 5));
        let after = d.ftl().counters();
        let wa = (after.nand_write_ius - before.nand_write_ius) as f64
            / (after.host_write_ius - before.host_write_ius) as f64;
        let iops = (2 * ius) as f64 / ((end - start) as f64 * 1e-9);
        figures.push((wa, iops));
    }
    let (timed_f, fast_f) = (figures[0], figures[1]);
    assert!(
        (fast_f.0 / timed_f.0 - 1.0).abs() < 0.01,
        "WA {timed_f:?} {fast_f:?}"
    );
    assert!(
        (fast_f.1 / timed_f.1 - 1.0).abs() < 0.02,
        "IOPS {timed_f:?} {fast_f:?}"
    );
}

#[test]
fn untimed_random_writes_reach_the_timed_write_amplification() {
    let ius = tiny_ssd(&[]).capacity_bytes() / 4096;
    let mut timed = tiny_ssd(&[]);
    let t = fill_sequentially(&mut timed, 0);
    let t = fill_sequentially(&mut timed, t);
    let before_timed = timed.ftl().counters().clone();
    run_qd(&mut timed, t, 32, random_writes(2 * ius, ius, 5));
    let mut fast = tiny_ssd(&[]);
    let f = untimed_fill(&mut fast, 0);
    let before_fast = fast.ftl().counters().clone();
    let mut u = fast.untimed(f).unwrap();
    let mut next = random_writes(2 * ius, ius, 5);
    while let Some(r) = next() {
        u.write(r.offset_bytes, r.len_bytes).unwrap();
    }
    u.finish();
    fast.ftl().check_invariants();
    let wa = |d: &Ssd, before: &flashlab_ftl::FtlCounters| {
        let c = d.ftl().counters();
        (c.nand_write_ius - before.nand_write_ius) as f64
            / (c.host_write_ius - before.host_write_ius) as f64
    };
    let (a, b) = (wa(&timed, &before_timed), wa(&fast, &before_fast));
    assert!((b / a - 1.0).abs() < 0.01, "timed {a}, untimed {b}");
}

/// Back-to-back writes end with the write buffer full and the dies still programming what
/// it holds: after the untimed fill as after the timed one, the buffer holds as much, and a
/// flush at the end waits for those programs for a time of the same order: 19.1 ms
/// untimed, 39.4 ms timed, whose backlog falls unevenly on the dies (the buffer fills with
/// the data of the die furthest behind), where the untimed one's falls evenly.
#[test]
fn the_untimed_end_leaves_the_buffers_programs_as_a_timed_fill_and_repeats() {
    let run = || {
        let mut d = tiny_ssd(&[]);
        let end = untimed_fill(&mut d, 1_000);
        let held = d.health_log().buffer_used_bytes;
        let c = d.submit(end, &IoRequest::flush()).unwrap();
        (end, c.done_ns, held, d.ftl().counters().clone())
    };
    let (end, done, held, counters) = run();
    let mut timed = tiny_ssd(&[]);
    let t = fill_sequentially(&mut timed, 1_000);
    let t = fill_sequentially(&mut timed, t);
    let timed_held = timed.health_log().buffer_used_bytes;
    let timed_wait = timed.submit(t, &IoRequest::flush()).unwrap().done_ns - t;
    assert!(end > 1_000 && done > end);
    assert_eq!(held, timed_held);
    let wait = done - end;
    assert!(
        wait > timed_wait / 3 && wait <= timed_wait,
        "flush {wait} ns untimed, {timed_wait} ns timed"
    );
    assert_eq!(run(), (end, done, held, counters));
}

#[test]
fn drives_whose_state_depends_on_timing_refuse() {
    for (key, value) in [
        ("ftl.host_allocation", "\"least_busy\""),
        ("ftl.gc_background_busy_share", "0.2"),
    ] {
        let mut d = tiny_ssd(&[(key, value)]);
        assert!(d.untimed_refusal().is_some(), "{key}");
        assert!(d.untimed(0).is_err(), "{key}");
    }
    assert!(tiny_ssd(&[]).untimed_refusal().is_none());
}

#[test]
fn the_write_buffer_holds_the_open_pages_data_as_after_timed_writes() {
    // Three IUs: less than a page, so they wait in the buffer for the page's program.
    let mut timed = tiny_ssd(&[]);
    timed.submit(0, &IoRequest::write(0, 3 * 4096)).unwrap();
    let mut fast = tiny_ssd(&[]);
    let mut u = fast.untimed(0).unwrap();
    u.write(0, 3 * 4096).unwrap();
    u.finish();
    let held = |d: &Ssd| d.health_log().buffer_used_bytes;
    assert_eq!(held(&fast), 3 * 4096);
    assert_eq!(held(&fast), held(&timed));
}

/// A stream given to `Untimed::run`, which draws I/Os ahead to hint their map entries, leaves
/// the drive byte for byte as the same writes and trims given one by one; a refused I/O stops
/// the stream and is named with its offset.
#[test]
fn a_stream_drawn_ahead_leaves_the_state_of_writes_given_one_by_one() {
    use flashlab_engine::IoKind;
    let ius = tiny_ssd(&[]).capacity_bytes() / 4096;
    let stream = || {
        let mut writes = random_writes(3 * ius, ius, 9);
        let mut n = 0u64;
        move || {
            n += 1;
            let w = writes()?;
            // Every 97th I/O a trim of 16 KiB, every 89th a read (nothing for the FTL).
            Some(if n.is_multiple_of(97) {
                (IoKind::Trim, w.offset_bytes & !0x3fff, 16 << 10)
            } else if n.is_multiple_of(89) {
                (IoKind::Read, w.offset_bytes, 4096)
            } else {
                (IoKind::Write, w.offset_bytes, w.len_bytes)
            })
        }
    };
    let state = |d: &Ssd, end: u64| {
        let mut bytes = Vec::new();
        d.save_state(&mut bytes, end).unwrap();
        bytes
    };
    let mut one_by_one = tiny_ssd(&[]);
    let mut u = one_by_one.untimed(0).unwrap();
    let mut next = stream();
    while let Some((kind, offset, len)) = next() {
        match kind {
            IoKind::Write => u.write(offset, len).unwrap(),
            IoKind::Trim => u.trim(offset, len).unwrap(),
            _ => {}
        }
    }
    let end_a = u.finish();
    let mut streamed = tiny_ssd(&[]);
    let mut u = streamed.untimed(0).unwrap();
    u.run(&mut stream()).unwrap();
    let end_b = u.finish();
    assert_eq!(end_a, end_b);
    one_by_one.ftl().check_invariants();
    assert!(state(&one_by_one, end_a) == state(&streamed, end_b));

    let cap = streamed.capacity_bytes();
    let mut u = streamed.untimed(end_b).unwrap();
    let mut ios = [(IoKind::Write, 0, 4096), (IoKind::Write, cap, 4096)].into_iter();
    let refused = u.run(&mut || ios.next()).unwrap_err();
    assert_eq!((refused.kind, refused.offset_bytes), (IoKind::Write, cap));
    assert!(refused.to_string().contains(&cap.to_string()), "{refused}");
}
