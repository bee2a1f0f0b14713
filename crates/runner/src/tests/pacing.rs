//! Pacing: `rate`/`rate_iops` (linear and Poisson, mixed directions, unmet rates) and think
//! time (its blocks, `thinktime_iotime`, `rate_ignore_thinktime`, the ramp).

use super::*;

#[test]
fn linear_rate_hits_the_target_per_clone() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("rate", 4, NS_PER_S);
        j.control.numjobs = 2;
        j.rate.rate_bytes_per_s = [4 << 20; 3];
        j
    };
    let (result, s) = run_seeded(vec![job], &mut dev, 1);
    for c in &s {
        // 4 MiB/s of 4 KiB = 1,024 I/Os per second, each clone.
        assert_near(c.measured_ios[0] as f64, 1024.0, 0.002, "ios per clone");
        assert_eq!(c.late_ios, 0);
    }
    let rate = &result.flashlab["rate"];
    assert_eq!(rate.as_array().unwrap().len(), 2);
    assert_eq!(rate[0]["directions"]["read"]["met"], true);
    assert!(rate[0]["directions"].get("write").is_none());
    // The device sat idle between paced I/Os.
    assert!(dev.idle_ns > NS_PER_S / 2, "idle {}", dev.idle_ns);
}

#[test]
fn a_mixed_job_issues_the_other_direction_while_one_is_ahead_of_its_rate() {
    // fio's rate_ddir: each direction of a rate-limited randrw job meets its own limit,
    // whatever the mix draws (70 % reads here, limited to 500 and 100 IOPS).
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("mixed", 4, 2 * NS_PER_S);
        j.io.rw = RwPattern::RandRw;
        j.io.rwmixread = 70;
        j.rate.rate_iops = [500, 100, 0];
        j
    };
    let s = run(vec![job], &mut dev);
    assert_near(s[0].measured_ios[0] as f64, 1000.0, 0.01, "reads");
    assert_near(s[0].measured_ios[1] as f64, 200.0, 0.01, "writes");
    // Only writes limited: reads are not held back by the writes' pace (before, a drawn
    // write waited and the reads with it, ~14 reads per paced write).
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("writes-limited", 4, NS_PER_S);
        j.io.rw = RwPattern::RandRw;
        j.io.rwmixread = 50;
        j.rate.rate_iops = [0, 100, 0];
        j
    };
    let s = run(vec![job], &mut dev);
    assert_near(s[0].measured_ios[1] as f64, 100.0, 0.02, "writes");
    // Four at a time for 100 us each: ~40,000 I/Os in the second, nearly all reads.
    assert!(
        s[0].measured_ios[0] > 30_000,
        "reads {}",
        s[0].measured_ios[0]
    );
}

#[test]
fn poisson_rate_hits_the_target_on_average() {
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("poisson", 8, 2 * NS_PER_S);
        j.rate.rate_iops = [2000, 0, 0];
        j.rate.rate_process = RateProcess::Poisson;
        j
    };
    let s = run(vec![job], &mut dev);
    assert_near(s[0].measured_ios[0] as f64, 4000.0, 0.05, "poisson ios");
}

#[test]
fn unmet_rate_is_reported() {
    // 10 ms per I/O at depth 1: at most 100 IOPS against a target of 1,000.
    let mut dev = FakeDevice::new(10 * NS_PER_MS);
    let job = {
        let mut j = timed("slow", 1, NS_PER_S);
        j.rate.rate_iops = [1000, 0, 0];
        j
    };
    let (result, s) = run_seeded(vec![job], &mut dev, 1);
    assert!(s[0].late_ios > 0);
    let read = &result.flashlab["rate"][0]["directions"]["read"];
    assert_eq!(read["met"], false);
    assert_near(
        read["achieved_iops"].as_f64().unwrap(),
        100.0,
        0.02,
        "achieved",
    );
}

#[test]
fn thinktime_paces_a_deep_queue() {
    // Counting issued I/Os, think 900 us after every one: one I/O per millisecond whatever
    // the depth.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("think", 8, 100 * NS_PER_MS);
        j.rate.thinktime_ns = 900 * NS_PER_US;
        j.rate.thinktime_blocks_type = ThinkBlocks::Issue;
        j
    };
    let s = run(vec![job], &mut dev);
    assert_near(s[0].measured_ios[0] as f64, 100.0, 0.01, "ios");
    assert_eq!(dev.max_in_device, 1);
    // Counting completed I/Os (fio's default), nothing has completed until the queue is
    // full and reaped; here all eight complete together: eight I/Os per 100 us + 900 us.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("think", 8, 100 * NS_PER_MS);
        j.rate.thinktime_ns = 900 * NS_PER_US;
        j
    };
    let s = run(vec![job], &mut dev);
    assert_eq!(s[0].measured_ios[0], 800);
    assert_eq!(dev.max_in_device, 8);
}

/// A size-bound job of `ios` 4 KiB reads that thinks `think_ns` per `blocks`.
fn thinking(iodepth: u32, ios: u64, think_ns: SimTime, blocks: u32, kind: ThinkBlocks) -> JobSpec {
    {
        let mut j = spec("think");
        j.engine.iodepth = iodepth;
        j.target.size = Some(SizeSpec::Bytes(ios * 4096));
        j.rate.thinktime_ns = think_ns;
        j.rate.thinktime_blocks = blocks;
        j.rate.thinktime_blocks_set = true;
        j.rate.thinktime_blocks_type = kind;
        j
    }
}

#[test]
fn thinktime_blocks_count_completions_or_issues() {
    // 48 I/Os at depth 4, 100 us each (all in flight complete together), 1 ms think per 6.
    let run_one = |kind| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let s = run(vec![thinking(4, 48, NS_PER_MS, 6, kind)], &mut dev);
        assert_eq!(s[0].measured_ios[0], 48);
        s[0].end_ns - s[0].start_ns
    };
    // Issued: 4, then 2 more and the sixth issued pauses (after the 2 complete): 8 pauses
    // of 2 x 100 us + 1 ms.
    assert_eq!(run_one(ThinkBlocks::Issue), 8 * 1_200 * NS_PER_US);
    // Completed: 4 complete (4 < 6), 4 more are issued, 8 complete: pause; the next pause
    // comes at 16 (8 + 6 = 14 reached only when the next 4 are reaped): 6 pauses.
    assert_eq!(run_one(ThinkBlocks::Complete), 6 * 1_200 * NS_PER_US);
}

#[test]
fn completions_reaped_one_at_a_time_pause_later() {
    // A serial link spaces the completions 10 us apart, so each reap takes one: with 64
    // I/Os at depth 4 and a 10 ms think per 8, the check after the reap of the 8th
    // completion comes when 11 are issued; after the pause the count is 11, the next pause
    // comes at 16, ... at 56; the count reaches only 61 by the last issue: 7 pauses (fio
    // 3.33 with libaio or null: 7 pauses counting completions, 8 counting issues).
    let run_one = |kind| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        dev.link_bytes_per_s = Some(409_600_000);
        let s = run(vec![thinking(4, 64, 10 * NS_PER_MS, 8, kind)], &mut dev);
        assert_eq!(s[0].measured_ios[0], 64);
        s[0].end_ns - s[0].start_ns
    };
    let complete = run_one(ThinkBlocks::Complete);
    assert!(
        (70 * NS_PER_MS..73 * NS_PER_MS).contains(&complete),
        "{complete}"
    );
    let issue = run_one(ThinkBlocks::Issue);
    assert!((80 * NS_PER_MS..83 * NS_PER_MS).contains(&issue), "{issue}");
}

#[test]
fn thinktime_at_depth_one_does_not_depend_on_the_count() {
    let run_one = |kind| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        run(vec![thinking(1, 12, NS_PER_MS, 3, kind)], &mut dev)
    };
    let issue = run_one(ThinkBlocks::Issue);
    assert_eq!(issue, run_one(ThinkBlocks::Complete));
    assert_eq!(issue[0].end_ns - issue[0].start_ns, 4 * 1_300 * NS_PER_US);
}

#[test]
fn thinktime_iotime_thinks_by_time_and_with_blocks_whichever_comes_first() {
    let run_one = |blocks: Option<u32>| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let job = {
            let mut j = timed("iotime", 1, 15 * NS_PER_MS);
            j.rate.thinktime_ns = 500 * NS_PER_US;
            j.rate.thinktime_iotime_ns = NS_PER_MS;
            j.rate.thinktime_blocks = blocks.unwrap_or(1);
            j.rate.thinktime_blocks_set = blocks.is_some();
            j
        };
        run(vec![job], &mut dev)[0].measured_ios[0]
    };
    // 10 I/Os (1 ms), then 0.5 ms of think: 10 periods of 1.5 ms.
    assert_eq!(run_one(None), 100);
    // Every 4 I/Os (0.4 ms) first: 16 periods of 0.9 ms and 4 I/Os of the 17th.
    assert_eq!(run_one(Some(4)), 68);
}

#[test]
fn rate_ignore_thinktime_moves_the_schedule_on() {
    // 1000 IOPS, a 2 ms think after every 10 issued I/Os.
    let run_one = |ignore| {
        let mut dev = FakeDevice::new(100 * NS_PER_US);
        let job = {
            let mut j = timed("rate", 1, 100 * NS_PER_MS);
            j.rate.rate_iops = [1000, 0, 0];
            j.rate.thinktime_ns = 2 * NS_PER_MS;
            j.rate.thinktime_blocks = 10;
            j.rate.thinktime_blocks_type = ThinkBlocks::Issue;
            j.rate.rate_ignore_thinktime = ignore;
            j
        };
        run(vec![job], &mut dev)[0].measured_ios[0] as f64
    };
    // By default the rate catches up after each pause: 1000 IOPS.
    assert_near(run_one(false), 100.0, 0.02, "catching up");
    // Ignoring the pause, the schedule moves on by 2 ms less one I/O (1 ms): 10 I/Os per
    // 11 ms.
    assert_near(run_one(true), 100.0 * 10.0 / 11.0, 0.02, "moving on");
}

#[test]
fn the_ramp_resets_the_think_counts_but_not_the_last_pause() {
    // fio 3.33: after a ramp of 20 pauses of 8 I/Os, 160 + 8 I/Os go before the next pause.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let job = {
        let mut j = timed("ramp", 1, NS_PER_S);
        j.rate.thinktime_ns = 9_200 * NS_PER_US;
        j.rate.thinktime_blocks = 8;
        j.time.ramp_time_ns = 200 * NS_PER_MS;
        j
    };
    let s = run(vec![job], &mut dev);
    // 8 I/Os + think take 10 ms: 100 pauses a second, and 160 I/Os (16 ms) without.
    assert_eq!(s[0].measured_ios[0], 160 + (1000 - 16) / 10 * 8 + 8);
}

/// A timed job of flow group `id` with weight `weight` (fio's `flow_id`, `flow`).
fn flowing(name: &str, iodepth: u32, id: i32, weight: u32, sleep_us: u32) -> JobSpec {
    let mut j = timed(name, iodepth, 100 * NS_PER_MS);
    j.flow.id = id;
    j.flow.weight = weight;
    j.flow.sleep_us = sleep_us;
    j
}

#[test]
fn flow_keeps_the_jobs_of_a_flow_id_in_the_ratio_of_their_weights() {
    // Unhindered each job would do 4 I/Os per 100 us; weights 1 and 3 hold the first back
    // to a third of the second, which runs at its own pace.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(
        vec![flowing("a", 4, 0, 1, 0), flowing("b", 4, 0, 3, 0)],
        &mut dev,
    );
    let (a, b) = (s[0].measured_ios[0], s[1].measured_ios[0]);
    assert_eq!(b, 4000);
    assert_near(a as f64, b as f64 / 3.0, 0.002, "a's I/Os");
    // Clones count one by one: two clones of weight 1 and a job of weight 2 go 1:1:2. A
    // job of weight 0 (or of another flow_id) is not held back.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let mut two = flowing("two", 4, 7, 1, 0);
    two.control.numjobs = 2;
    let s = run(
        vec![
            two,
            flowing("w2", 4, 7, 2, 0),
            flowing("free", 4, 7, 0, 0),
            flowing("other", 4, 8, 5, 0),
        ],
        &mut dev,
    );
    let ios: Vec<u64> = s.iter().map(|c| c.measured_ios[0]).collect();
    assert_eq!(ios[2], 4000, "{ios:?}");
    assert_near(ios[0] as f64, 2000.0, 0.002, "first clone");
    assert_near(ios[1] as f64, 2000.0, 0.002, "second clone");
    assert_eq!(&ios[3..], [4000, 4000], "{ios:?}");
}

#[test]
fn flow_sleep_drains_then_sleeps_as_fio_s_example() {
    // fio's examples/flow.fio: weights 1 and 8 at depth 256 with flow_sleep=1000. A job
    // over its share waits for its queue and then 1 ms, so the pair runs far below the
    // device's pace, and 1:8.
    let mut dev = FakeDevice::new(100 * NS_PER_US);
    let s = run(
        vec![
            flowing("job2", 256, 0, 1, 1000),
            flowing("job1", 256, 0, 8, 1000),
        ],
        &mut dev,
    );
    let (a, b) = (s[0].measured_ios[0], s[1].measured_ios[0]);
    assert_near(b as f64 / a as f64, 8.0, 0.01, "job1 / job2");
    assert!(a + b < 256 * 1000, "{a} + {b}");
}

#[test]
fn a_job_flow_holds_back_for_good_is_an_error_naming_it() {
    // fio counts the weights of every job from the start: the second, stonewalled, job
    // keeps the first over its share once it has done one I/O, and fio waits forever.
    let mut a = spec("a");
    a.target.size = Some(SizeSpec::Bytes(1 << 20));
    a.flow.weight = 1;
    let mut b = a.clone();
    b.id.name = "b".into();
    b.control.stonewall = true;
    b.flow.weight = 3;
    let e = run_with_summaries(
        &file(vec![a, b]),
        &mut FakeDevice::new(100 * NS_PER_US),
        &RunOptions::new(1, "fake"),
    )
    .unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("job 'a'") && text.contains("flow=1") && text.contains("flow_id=0"),
        "{text}"
    );
}
