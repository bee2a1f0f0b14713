use super::*;

/// A forgery: what the refusal must say, and the edit.
type Forge<'a, T> = (&'a str, &'a dyn Fn(&mut T));

#[test]
fn routes_every_block_to_its_die_or_plane_and_channel() {
    for multi_plane in [false, true] {
        let g = geometry(multi_plane);
        let t = NandTiming::new(g, timings());
        for b in 0..g.blocks() as u32 {
            let (die, plane) = g.locate(b);
            let unit = if multi_plane {
                die * g.planes_per_die + plane
            } else {
                die
            };
            let want = (unit as usize, g.channel_of_die(die) as usize);
            assert_eq!(t.unit_and_channel(b), want, "block {b}");
        }
    }
}

const US: u64 = 1_000;

/// The geometry tests' small drive (16 KiB in 16.384 us over the channel: easy numbers).
fn geometry(multi_plane: bool) -> NandGeometry {
    NandGeometry {
        multi_plane,
        ..crate::geometry::tests::small()
    }
}

fn timings() -> CellTimings {
    CellTimings {
        t_read_ns: 50 * US,
        t_prog_ns: 600 * US,
        t_erase_ns: 3_000 * US,
        slc_t_read_ns: 30 * US,
        slc_t_prog_ns: 200 * US,
    }
}

fn op(kind: MediaOpKind, block: u32, bytes: u64, slc: bool) -> MediaOp {
    MediaOp {
        kind,
        block,
        page: 0,
        bytes,
        slc,
        host: false,
    }
}

const XFER: u64 = 16_384;

#[test]
fn read_is_array_then_transfer() {
    let mut m = NandTiming::new(geometry(true), timings());
    assert_eq!(
        m.schedule(&op(MediaOpKind::Read, 0, 16384, false), 100),
        100 + 50 * US + XFER
    );
    // SLC-mode block uses the SLC read time.
    let mut m = NandTiming::new(geometry(true), timings());
    assert_eq!(
        m.schedule(&op(MediaOpKind::Read, 0, 16384, true), 0),
        30 * US + XFER
    );
    assert_eq!(m.counters().reads, 1);
    assert_eq!(m.counters().bytes_read, 16384);
}

#[test]
fn program_is_transfer_then_array_and_erase_is_array_only() {
    let mut m = NandTiming::new(geometry(true), timings());
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0),
        XFER + 600 * US
    );
    // A second program on the same plane: its transfer overlaps the first's array time
    // (cache register), its array part waits for the plane.
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 1, 16384, false), 0),
        XFER + 1200 * US
    );
    // Erase on the same plane queues behind both programs.
    assert_eq!(
        m.schedule(&op(MediaOpKind::Erase, 2, 0, false), 0),
        XFER + 4200 * US
    );
    // A read on that plane waits for the erase (no suspend).
    assert_eq!(
        m.schedule(&op(MediaOpKind::Read, 3, 4096, false), 10),
        XFER + 4250 * US + 4096
    );
    assert_eq!(m.counters().programs, 2);
    assert_eq!(m.counters().erases, 1);
}

#[test]
fn dies_on_one_channel_share_the_transfer() {
    let mut m = NandTiming::new(geometry(true), timings());
    // Blocks 0 (die 0) and 40 (die 2) are both on channel 0; block 20 (die 1) on channel 1.
    assert_eq!(m.geometry().locate(40), (2, 0));
    let a = m.schedule(&op(MediaOpKind::Read, 0, 16384, false), 0);
    let b = m.schedule(&op(MediaOpKind::Read, 40, 16384, false), 0);
    let c = m.schedule(&op(MediaOpKind::Read, 20, 16384, false), 0);
    assert_eq!(a, 50 * US + XFER);
    // Array reads run in parallel; the second transfer waits for the channel.
    assert_eq!(b, 50 * US + 2 * XFER);
    // Other channel: no wait.
    assert_eq!(c, 50 * US + XFER);
}

#[test]
fn multi_plane_runs_planes_concurrently_otherwise_the_die_serialises() {
    // Blocks 0 and 10 are planes 0 and 1 of die 0.
    let mut mp = NandTiming::new(geometry(true), timings());
    mp.schedule(&op(MediaOpKind::Erase, 0, 0, false), 0);
    assert_eq!(
        mp.schedule(&op(MediaOpKind::Erase, 10, 0, false), 0),
        3_000 * US
    );
    let mut sp = NandTiming::new(geometry(false), timings());
    sp.schedule(&op(MediaOpKind::Erase, 0, 0, false), 0);
    assert_eq!(
        sp.schedule(&op(MediaOpKind::Erase, 10, 0, false), 0),
        6_000 * US
    );
    assert_eq!(sp.all_idle_ns(), 6_000 * US);
    assert_eq!(sp.max_backlog_ns(1_000 * US), 5_000 * US);
    sp.reset(7_000 * US);
    assert_eq!(
        sp.schedule(&op(MediaOpKind::Erase, 0, 0, false), 0),
        10_000 * US
    );
}

#[test]
fn without_independent_plane_reads_a_read_holds_its_whole_die() {
    // Blocks 0 and 10 are planes 0 and 1 of die 0; block 20 is die 1 (other channel).
    let per_die = die_level();
    let mut dr = NandTiming::new(per_die, timings());
    let mut ip = NandTiming::new(geometry(true), timings());
    for m in [&mut dr, &mut ip] {
        m.schedule(&op(MediaOpKind::Read, 0, 4096, false), 0);
    }
    // The other plane's read of another page address waits for the first tR only on
    // die-level reads.
    let other_page = MediaOp {
        page: 1,
        ..op(MediaOpKind::Read, 10, 4096, false)
    };
    assert_eq!(dr.schedule(&other_page, 0), 100 * US + 4096);
    assert_eq!(ip.schedule(&other_page, 0), 50 * US + 2 * 4096);
    // Another die is not held.
    assert_eq!(
        dr.schedule(&op(MediaOpKind::Read, 20, 4096, false), 0),
        50 * US + 4096
    );
    // Programs stay per plane, but a read waits for every plane of its die and holds
    // them all: a program on plane 0 delays a read on plane 1, and a program on plane 1
    // issued after that read starts when the read ends.
    let mut dr = NandTiming::new(per_die, timings());
    dr.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    assert_eq!(
        dr.schedule(&op(MediaOpKind::Program, 11, 16384, false), 0),
        2 * XFER + 600 * US
    );
    assert_eq!(
        dr.schedule(&op(MediaOpKind::Read, 12, 4096, false), 0),
        2 * XFER + 650 * US + 4096
    );
    assert_eq!(
        dr.schedule(&op(MediaOpKind::Program, 1, 16384, false), 0),
        2 * XFER + 1250 * US
    );
    assert_eq!(dr.all_idle_ns(), 2 * XFER + 1250 * US);
}

fn die_level() -> NandGeometry {
    NandGeometry {
        independent_plane_reads: false,
        ..geometry(true)
    }
}

#[test]
fn same_page_reads_on_a_dies_planes_share_one_array_read() {
    // Blocks 0 and 10 are planes 0 and 1 of die 0, both on channel 0.
    let mut m = NandTiming::new(die_level(), timings());
    assert_eq!(m.read(0, 7, 16384, false, true, 0).0, 50 * US + XFER);
    // Same page address on the other plane, issued together: one tR, then its own
    // transfer after the first on the shared channel.
    assert_eq!(m.read(10, 7, 16384, false, true, 0).0, 50 * US + 2 * XFER);
    assert_eq!(m.counters().paired_reads, 1);
    assert_eq!(m.counters().reads, 2);
    // The next pair waits for the first tR only once.
    assert_eq!(m.read(10, 8, 4096, false, true, 0).0, 100 * US + 4096);
    assert_eq!(m.read(0, 8, 4096, false, true, 0).0, 100 * US + 2 * 4096);
    assert_eq!(m.counters().paired_reads, 2);
    assert_eq!(m.all_idle_ns(), 100 * US + 2 * 4096);
}

#[test]
fn reads_that_cannot_form_a_multi_plane_read_take_a_tr_each() {
    let mut m = NandTiming::new(die_level(), timings());
    // Different page addresses.
    m.read(0, 7, 4096, false, true, 0);
    assert_eq!(m.read(10, 8, 4096, false, true, 0).0, 100 * US + 4096);
    // Same address but one in SLC mode (another array time).
    m.read(0, 9, 4096, false, true, 0);
    assert_eq!(m.read(10, 9, 4096, true, true, 0).0, 180 * US + 4096);
    // Same plane twice.
    m.read(0, 10, 4096, false, true, 0);
    assert_eq!(m.read(1, 10, 4096, false, true, 0).0, 280 * US + 4096);
    // Arriving while the die already runs the read (230 us to 280 us).
    assert_eq!(
        m.read(10, 10, 4096, false, true, 250 * US).0,
        330 * US + 4096
    );
    assert_eq!(m.counters().paired_reads, 0);
    // A program booked on the plane after the read keeps its place: a later read of
    // the same address on that plane does not jump ahead of it.
    let mut m = NandTiming::new(die_level(), timings());
    m.read(0, 3, 4096, false, true, 0);
    let prog_done = m.program(10, 0, 16384, false, 0);
    assert_eq!(prog_done, 50 * US + 600 * US);
    assert_eq!(
        m.read(10, 3, 4096, false, true, 0).0,
        prog_done + 50 * US + 4096
    );
    // Another die is not part of the group.
    let mut m = NandTiming::new(die_level(), timings());
    m.read(0, 3, 4096, false, true, 0);
    assert_eq!(m.read(20, 3, 4096, false, true, 0).0, 50 * US + 4096);
    assert_eq!(m.counters().paired_reads, 0);
}

#[test]
fn planes_that_read_independently_ignore_page_addresses() {
    // Per-plane reads: the page address changes nothing.
    let mut a = NandTiming::new(geometry(true), timings());
    let mut b = NandTiming::new(geometry(true), timings());
    for i in 0..40u32 {
        let (block, at) = ((i * 11) % 80, u64::from(i) * 9 * US);
        let x = a.read(block, 5, 4096, i % 4 == 0, true, at);
        let y = b.read(block, i, 4096, i % 4 == 0, true, at);
        assert_eq!(x, y);
    }
    assert_eq!(a.counters(), b.counters());
    assert_eq!(a.counters().paired_reads, 0);
}

#[test]
fn operations_by_parts_place_as_media_ops_do() {
    let mut parts = NandTiming::new(geometry(false), timings());
    let mut whole = NandTiming::new(geometry(false), timings());
    for i in 0..60u32 {
        let (block, slc, at) = ((i * 13) % 79, i % 3 == 0, u64::from(i) * 7 * US);
        let want = whole.schedule(&op(MediaOpKind::Read, block, 8192, slc), at);
        let (done, latency) = parts.read(block, 0, 8192, slc, false, at);
        assert_eq!(done, want);
        // Its own array and transfer time, whatever it waited for.
        let array = if slc { 30 * US } else { 50 * US };
        assert_eq!(latency, array + 8192);
        let want = whole.schedule(&op(MediaOpKind::Program, block + 1, 16384, slc), at);
        assert_eq!(parts.program(block + 1, 0, 16384, slc, at), want);
        if i % 10 == 0 {
            let want = whole.schedule(&op(MediaOpKind::Erase, block, 0, slc), at);
            assert_eq!(parts.erase(block, slc, at), want);
        }
    }
    assert_eq!(parts.counters(), whole.counters());
}

#[test]
fn fifo_per_resource_never_goes_back_in_time() {
    let mut m = NandTiming::new(geometry(false), timings());
    let mut last = 0;
    for i in 0..100u32 {
        let kind = [MediaOpKind::Read, MediaOpKind::Program, MediaOpKind::Erase][i as usize % 3];
        let done = m.schedule(&op(kind, (i * 7) % 80, 4096, i % 2 == 0), i as u64 * 10);
        assert!(done > i as u64 * 10);
        last = last.max(done);
    }
    assert_eq!(m.all_idle_ns(), last);
}

fn die_level_programs() -> NandGeometry {
    NandGeometry {
        independent_plane_programs: false,
        ..geometry(true)
    }
}

#[test]
fn without_independent_plane_programs_a_dies_planes_program_together() {
    // Blocks 0 and 10 are planes 0 and 1 of die 0 on channel 0; block 20 is die 1.
    // Pages for both planes issued together: plane 0's program starts once plane 1's page
    // could have crossed the channel behind it, and plane 1's joins it: one tPROG.
    let mut pair = NandTiming::new(die_level_programs(), timings());
    assert_eq!(
        pair.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0),
        2 * XFER + 600 * US
    );
    assert_eq!(
        pair.schedule(&op(MediaOpKind::Program, 10, 16384, false), 0),
        2 * XFER + 600 * US
    );
    assert_eq!(pair.counters().paired_programs, 1);

    let mut m = NandTiming::new(die_level_programs(), timings());
    let mut ip = NandTiming::new(geometry(true), timings());
    // A page alone on an idle die programs alone; the other plane's page, issued after that
    // program started, waits for its whole tPROG, where planes of their own program at once.
    let late = 3 * XFER;
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0),
        2 * XFER + 600 * US
    );
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 10, 16384, false), late),
        2 * XFER + 1200 * US
    );
    assert_eq!(m.counters().paired_programs, 0);
    ip.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    assert_eq!(
        ip.schedule(&op(MediaOpKind::Program, 10, 16384, false), late),
        late + XFER + 600 * US
    );
    // Plane 0 was free when that program started and its next page is in by then: it
    // joins it as a two-plane program. Plane 1's next page starts the next program, which
    // plane 0's next page joins again: one tPROG per pair of pages.
    let second = 2 * XFER + 1200 * US;
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 0, 16384, false), late),
        second
    );
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 10, 16384, false), late),
        second + 600 * US
    );
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 0, 16384, false), late),
        second + 600 * US
    );
    assert_eq!(m.counters().paired_programs, 2);
    assert_eq!(m.counters().programs, 5);
    let third = second + 600 * US;
    // A plane already in the group starts a new one after it; so does another cell mode.
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 1, 16384, false), late),
        third + 600 * US
    );
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 11, 16384, true), late),
        third + 800 * US
    );
    // The die's program holds reads of every plane; another die is free.
    assert_eq!(
        m.schedule(&op(MediaOpKind::Read, 12, 4096, false), late),
        third + 850 * US + 4096
    );
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 20, 16384, false), 0),
        2 * XFER + 600 * US
    );
    assert_eq!(m.all_idle_ns(), third + 850 * US + 4096);
    assert_eq!(m.counters().paired_programs, 2);
}

/// A native program on plane 0 of die 0, an SLC program queued behind it, then a native
/// program on plane 1 whose data is in before the first one starts: returns the third
/// program's completion.
fn native_slc_native(m: &mut NandTiming) -> u64 {
    m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 1, 16384, true), 0),
        2 * XFER + 800 * US
    );
    m.schedule(&op(MediaOpKind::Program, 10, 16384, false), 0)
}

#[test]
fn a_native_program_queued_after_an_slc_one_pairs_with_the_earlier_native_program() {
    // A fold's native pages among the host's SLC pages: plane 1's native page joins plane
    // 0's native program, not yet started, as one two-plane program, on a FIFO die and on
    // one queue per die under read priority.
    let sched = SchedulerConfig {
        read_priority: true,
        ..SchedulerConfig::default()
    };
    let die_reads = NandGeometry {
        independent_plane_reads: false,
        ..die_level_programs()
    };
    for mut m in [
        NandTiming::new(die_level_programs(), timings()),
        NandTiming::with_scheduler(die_reads, timings(), sched),
    ] {
        assert_eq!(native_slc_native(&mut m), 2 * XFER + 600 * US);
        assert_eq!(m.counters().paired_programs, 1);
        assert_eq!(m.all_idle_ns(), 2 * XFER + 800 * US);
        // The next native page on plane 0 finds its plane booked past the group: a new
        // program behind the SLC one.
        assert_eq!(
            m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0),
            2 * XFER + 1400 * US
        );
        assert_eq!(m.counters().paired_programs, 1);
    }
}

#[test]
fn an_erase_or_a_read_placed_before_booked_work_closes_the_earlier_program() {
    // An erase on plane 1 after the native program: plane 1's next native page goes after
    // it (it may be the erased block's first page).
    let mut m = NandTiming::new(die_level_programs(), timings());
    m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    m.schedule(&op(MediaOpKind::Program, 1, 16384, true), 0);
    m.schedule(&op(MediaOpKind::Erase, 11, 0, false), 0);
    m.schedule(&op(MediaOpKind::Program, 10, 16384, false), 0);
    assert_eq!(m.counters().paired_programs, 0);
    // A read that read priority places before the queued programs moves them: the group
    // no longer says when its program starts.
    let sched = SchedulerConfig {
        read_priority: true,
        ..SchedulerConfig::default()
    };
    let g = NandGeometry {
        independent_plane_reads: false,
        ..die_level_programs()
    };
    let mut m = NandTiming::with_scheduler(g, timings(), sched);
    m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    m.schedule(&op(MediaOpKind::Program, 1, 16384, true), 0);
    m.read(12, 0, 4096, false, false, 0);
    let done = m.schedule(&op(MediaOpKind::Program, 10, 16384, false), 0);
    assert_eq!(m.counters().paired_programs, 0);
    assert!(done > 2 * XFER + 800 * US, "{done}");
}

#[test]
fn a_plane_busy_with_later_work_does_not_join_an_earlier_program() {
    let mut m = NandTiming::new(die_level_programs(), timings());
    m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    // Plane 0's next page queues behind the first program.
    let second = m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    assert_eq!(second, 2 * XFER + 1200 * US);
    // A read on plane 1 booked after that group: plane 1's next program cannot reach back
    // into the group (the plane stays FIFO), so it programs after the read.
    let read_done = m.schedule(&op(MediaOpKind::Read, 11, 4096, false), 0);
    assert_eq!(read_done, second + 50 * US + 4096);
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 10, 16384, false), 0),
        second + 650 * US
    );
    assert_eq!(m.counters().paired_programs, 0);
}

#[test]
fn under_read_priority_a_dies_program_sits_in_every_planes_queue() {
    let sched = SchedulerConfig {
        read_priority: true,
        ..SchedulerConfig::default()
    };
    let mut m = NandTiming::with_scheduler(die_level_programs(), timings(), sched);
    // Two two-plane programs queue on die 0.
    for _ in 0..2 {
        m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
        m.schedule(&op(MediaOpKind::Program, 10, 16384, false), 0);
    }
    assert_eq!(m.counters().paired_programs, 2);
    let first_done = 2 * XFER + 600 * US;
    assert_eq!(m.all_idle_ns(), first_done + 600 * US);
    // A host read on plane 1 once the first program runs waits for it (it holds plane 1
    // too) and goes before the queued one, which moves later on plane 1's queue.
    assert_eq!(
        m.read(12, 0, 4096, false, true, 40 * US).0,
        first_done + 50 * US + 4096
    );
    // A program of plane 1 starts after everything its plane holds.
    assert_eq!(
        m.schedule(&op(MediaOpKind::Program, 11, 16384, false), 40 * US),
        first_done + 1250 * US
    );
}

/// A die suspends its multi-plane program as a whole: a read on one plane stops the
/// program on every plane, a read of the other plane arriving in that suspension is served
/// in it, and the die's suspensions, not each plane's, meet the cap.
#[test]
fn a_read_suspends_a_dies_multi_plane_program_on_every_plane() {
    let sched = SchedulerConfig {
        read_priority: true,
        program_suspend: true,
        max_suspends_per_op: 1,
        suspend_latency_ns: 10 * US,
        resume_overhead_ns: 5 * US,
        ..SchedulerConfig::default()
    };
    let mut m = NandTiming::with_scheduler(die_level_programs(), timings(), sched);
    m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    m.schedule(&op(MediaOpKind::Program, 10, 16384, false), 0);
    assert_eq!(m.counters().paired_programs, 1);
    let start = 2 * XFER;
    // Plane 0's read once the program runs suspends it: the die reads after the suspend
    // latency.
    let t = start + 100 * US;
    assert_eq!(
        m.read(2, 0, 4096, false, true, t).0,
        t + 10 * US + 50 * US + 4096
    );
    assert_eq!(m.counters().program_suspends, 1);
    // The program ends later by the read and the resume overhead on both planes.
    let end = start + 600 * US + 50 * US + 5 * US;
    assert_eq!(m.unit_free_ns(0), end);
    assert_eq!(m.unit_free_ns(10), end);
    // Plane 1's read arriving while the die is suspended is served in the same suspension:
    // no suspend latency, and the program's part on plane 1 resumes after it.
    assert_eq!(
        m.read(12, 3, 4096, false, true, t + 20 * US).0,
        t + 20 * US + 50 * US + 4096
    );
    assert_eq!(m.counters().program_suspends, 1);
    assert_eq!(m.unit_free_ns(10), end + 10 * US);
    // The die's program was suspended once, its cap: a later read of plane 1 waits for it.
    assert_eq!(
        m.read(12, 4, 4096, false, true, t + 200 * US).0,
        end + 10 * US + 50 * US + 4096
    );
    assert_eq!(m.counters().program_suspends, 1);
}

#[test]
fn die_level_reads_under_read_priority_share_one_queue_per_die() {
    let sched = SchedulerConfig {
        read_priority: true,
        ..SchedulerConfig::default()
    };
    let g = NandGeometry {
        independent_plane_reads: false,
        ..die_level_programs()
    };
    let mut m = NandTiming::with_scheduler(g, timings(), sched);
    // Three two-plane programs queue on die 0.
    for _ in 0..3 {
        m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
        m.schedule(&op(MediaOpKind::Program, 10, 16384, false), 0);
    }
    assert_eq!(m.counters().paired_programs, 3);
    let first_done = 2 * XFER + 600 * US;
    assert_eq!(m.all_idle_ns(), first_done + 1200 * US);
    // A host read of plane 1 once the first program runs waits for it alone, not for the
    // two queued behind it (a FIFO die would hold it to the last).
    assert_eq!(
        m.read(12, 5, 4096, false, true, 40 * US).0,
        first_done + 50 * US + 4096
    );
    // Plane 0's read of the same page address, issued with it, joins it: one tR.
    assert_eq!(
        m.read(2, 5, 4096, false, true, 40 * US).0,
        first_done + 50 * US + 2 * 4096
    );
    assert_eq!(m.counters().paired_reads, 1);
    // The queued programs moved later by the one tR, on both planes of the die.
    assert_eq!(m.all_idle_ns(), first_done + 1250 * US);
    assert_eq!(m.unit_free_ns(0), first_done + 1250 * US);
    assert_eq!(m.unit_free_ns(10), first_done + 1250 * US);
    // Both reads waited for the running program only.
    let c = m.counters();
    assert_eq!(
        c.host_read_wait_ns[wait::PROGRAMS],
        2 * (first_done - 40 * US)
    );
    assert_eq!(c.host_read_wait_ns[wait::DIE_BUSY], 0);
}

/// A forged state of the dies is refused at load: a free time past 2^62 ns or past the
/// running maximum, a channel table or a die's queue list of another size, a queued
/// operation that ends before it starts or past 2^62 ns, a multi-plane group over planes
/// the die does not have. Real timing loads and runs.
#[test]
fn forged_die_timing_is_refused_at_load() {
    use flashlab_engine::state::reload_into;
    let sched = SchedulerConfig {
        read_priority: true,
        program_suspend: true,
        max_suspends_per_op: 2,
        ..SchedulerConfig::default()
    };
    let g = NandGeometry {
        independent_plane_reads: false,
        ..die_level_programs()
    };
    let fresh = || NandTiming::with_scheduler(g, timings(), sched);
    let mut m = fresh();
    for i in 0..6 {
        m.schedule(&op(MediaOpKind::Program, i % 4 * 10, 16384, false), 0);
        m.read(12 + i % 3, 5, 4096, false, true, 40 * US);
    }
    let mut ok = fresh();
    reload_into(&m, &mut ok).unwrap();
    assert_eq!(ok.all_idle_ns(), m.all_idle_ns());
    ok.read(11, 0, 4096, false, true, 50 * US);
    fn queued(f: &mut NandTiming, forge: impl FnOnce(&mut crate::sched::Entry)) {
        assert!(f.queues.as_mut().unwrap().forge_first_queued(forge));
    }
    let cases: [Forge<NandTiming>; 8] = [
        ("all free at", &|f| f.unit_free_ns[0] = f.all_free_ns + 1),
        ("all free at", &|f| f.all_free_ns = (1 << 62) + 1),
        ("nothing placed before", &|f| f.floor_ns = u64::MAX),
        (
            "channels holds 1 entries where this configuration has 2",
            &|f| {
                f.channels.pop();
            },
        ),
        ("die queue 0's entry 0", &|f| {
            queued(f, |e| e.start_ns = e.end_ns + 1);
        }),
        ("before 2^62", &|f| queued(f, |e| e.end_ns = u64::MAX)),
        ("suspended 3 times", &|f| queued(f, |e| e.suspends = 3)),
        ("multi-plane group", &|f| {
            f.program_groups[0].planes = 1 << 40
        }),
    ];
    for (want, forge) in cases {
        let mut forged = m.clone();
        forge(&mut forged);
        let e = reload_into(&forged, &mut fresh()).unwrap_err().to_string();
        assert!(e.contains(want), "{want}: {e}");
    }
}

#[test]
fn a_programs_data_crosses_the_channel_when_its_die_can_take_it() {
    // Three programs queued on plane 0 of die 0 at once: the first's data moves at once,
    // each later one's a program time before it starts (when the program ahead of it
    // starts and frees the cache register), not all at submission.
    let mut m = NandTiming::new(geometry(true), timings());
    for _ in 0..3 {
        m.schedule(&op(MediaOpKind::Program, 0, 16384, false), 0);
    }
    assert_eq!(m.all_idle_ns(), XFER + 1_800 * US);
    // A host read on die 2 (same channel) whose array read ends as the third program's data
    // starts to move waits for that transfer.
    assert_eq!(m.geometry().locate(40), (2, 0));
    let now = XFER + 550 * US;
    let (done, own) = m.read(40, 0, 4096, false, true, now);
    assert_eq!(own, 50 * US + 4096);
    assert_eq!(done, XFER + 600 * US + XFER + 4096);
    let c = m.counters();
    assert_eq!(c.host_read_wait_ns[wait::CHANNEL], XFER);
    assert_eq!(c.host_reads_waiting[wait::CHANNEL], 1);
}

/// An operation tallied without timing counts as a scheduled one does and reserves nothing.
#[test]
fn untimed_tally_counts_without_reserving() {
    let mut timed = NandTiming::new(geometry(false), timings());
    let mut untimed = NandTiming::new(geometry(false), timings());
    timed.program(0, 0, 16384, false, 0);
    timed.erase(0, true, 0);
    let t_prog = untimed.tally_untimed(MediaOpKind::Program, 16384, false);
    let t_erase = untimed.tally_untimed(MediaOpKind::Erase, 0, true);
    assert_eq!(t_prog, timings().t_prog_ns);
    assert_eq!(t_erase, timings().t_erase_ns);
    let (a, b) = (timed.counters(), untimed.counters());
    assert_eq!((a.programs, a.erases, a.bytes_programmed), (1, 1, 16384));
    assert_eq!((b.programs, b.erases, b.bytes_programmed), (1, 1, 16384));
    assert_eq!(a.array_busy_ns, b.array_busy_ns);
    assert_eq!(untimed.all_idle_ns(), 0);
    assert_eq!(untimed.unit_free_ns(0), 0);
}
