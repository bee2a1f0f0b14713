//! Preconditioning at the speed of the mapping (docs/explain-preconditioning.md): the suites'
//! fills, and each random-write round but its measured end, run without the timing model by
//! default, and what is measured after them is held to what the timed path
//! (`--timed-precondition`) gives. For the suites whose preconditioning is
//! the shared one (purge, two 128 KiB sequential passes, 4 KiB random rounds to the SNIA
//! steady state), `endurance` (the same fill, then rounds of the JEDEC mix) and `wsat`
//! (its intervals split as the rounds), on the default drive, the D5-P5430 15.36 TB and the
//! PM981a, each as a slice:
//! every IOPS and bandwidth within 2%, every write amplification within 1%, every latency
//! within 5%.
//!
//! The rounds are the suites' own (a quarter of the capacity, to steady state). A figure
//! measured in a short window after the rounds moves with the seed by more than those
//! tolerances on the timed path alone, so `qos` is measured for 5 s and over three seeds, and
//! its figures' means are compared (the window and seed counts: docs/explain-preconditioning.md).

use crate::common::{self, run_on_device};
use flashlab_device::{load_device_config, DeviceConfig};
use flashlab_engine::NS_PER_S;
use flashlab_suite::{DeviceReport, Measure, StepKind, SuiteOptions, Unit};

/// The drives and the slices they run as (`sim.scale`, and `sim.die_cut`): the default drive
/// and the PM981a at the smallest slices that keep every die (70 and 112 blocks per plane;
/// the PM981a's user data allow no smaller), the D5-P5430 15.36 TB on one channel of its 16
/// (8 of 128 dies, 1/1000 of the drive): every die kept needs 64 of its 4,200 blocks per
/// plane, a 233 GB model, minutes of CPU per run. Both paths run on the same slice.
const DRIVES: [(&str, &str, &str); 3] = [
    ("generic-tlc-256gb", "0.1", "refuse"),
    ("solidigm-d5-p5430-15.36tb", "0.001", "allow"),
    ("samsung-pm981a-256gb", "0.16", "refuse"),
];

/// `four-corners` measures after the fill (sequential and random reads and writes) and at the
/// steady state the rounds reach; `qos` the latency percentiles of a mix on the steady drive.
/// `precondition` measures what `four-corners`' rounds measure. `endurance` runs rounds of
/// its own workload (the JEDEC mix), split as the shared ones, then measures the write IOPS
/// and write amplification of half a capacity more.
/// `wsat` writes its intervals split as the rounds are (its first parts untimed, its ends
/// measured), from a purged drive with no fill.
const SUITES: [&str; 4] = ["four-corners", "qos", "endurance", "wsat"];

fn drive(name: &str, scale: &str, die_cut: &str) -> DeviceConfig {
    let sets = [
        ("sim.scale".to_string(), scale.to_string()),
        ("sim.die_cut".to_string(), format!("\"{die_cut}\"")),
    ];
    load_device_config(name, &sets).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn options(timed: bool, seed: u64, window_ns: u64) -> SuiteOptions {
    let mut o = common::short_options(window_ns);
    o.round = flashlab_suite::RoundLength::CapacityFraction(0.25);
    o.max_rounds = 25;
    o.timed_precondition = timed;
    o.seed = seed;
    // QD32: a depth the D5-P5430's one-channel slice divides among its dies as the drive does.
    o.own_mut::<flashlab_suite::QosOptions>().depths = vec![32];
    // endurance's default interval: half a capacity.
    o.own_mut::<flashlab_suite::EnduranceOptions>().measure =
        flashlab_suite::RoundLength::CapacityFraction(0.5);
    // wsat: two capacities in intervals of 5%, past the cliff into the steady window on
    // the three slices.
    o.own_mut::<flashlab_suite::WsatOptions>().write_multiple = 2.0;
    o.interval = flashlab_suite::RoundLength::CapacityFraction(0.05);
    o
}

/// The seeds and measured window of `suite`. `qos`' 1 s mix after the rounds moves with the
/// seed on the timed path alone by more than the tolerances (the PM981a's QD32 IOPS from
/// 21.7K to 27.9K over six seeds: it folds a static SLC cache while it writes, and a second
/// holds a small part of that cycle; the D5-P5430's read p99.9 from 514 to 831 us, a few
/// hundred reads): 5 s windows and the mean of three seeds hold it to a fraction of them.
/// `endurance`'s write amplification over its half capacity moves with the seed on the timed
/// path alone by more than the tolerance on the D5-P5430's slice (6.27 to 6.43 over four
/// seeds, 64 blocks per plane): its figures are the means of three seeds too.
/// `four-corners`' figures move less than the tolerances with the seed.
fn plan(suite: &str) -> (&'static [u64], u64) {
    match suite {
        "qos" => (&[1, 2, 3], 5 * NS_PER_S),
        "endurance" => (&[1, 2, 3], NS_PER_S),
        _ => (&[1], NS_PER_S),
    }
}

/// What a figure may move by between the two paths, by what it measures; `None`: not a
/// measured figure of the drive (counts of rounds, depths, the steady window's spreads, a
/// single round's IOPS on the way to steady state).
fn tolerance(m: &Measure) -> Option<f64> {
    if m.key().contains("round") || m.family.starts_with("window_") {
        return None;
    }
    // wsat's single intervals on the way, as single rounds, and the lowest of them; and its
    // times since the purge, which a split run estimates from each interval's middle
    // (docs/explain-preconditioning.md).
    let key = m.key();
    if key.starts_with("interval_") || key == "min_write_iops" || key.ends_with("sim_time_ns") {
        return None;
    }
    // Beyond p99.99 a 1 s window holds a handful of reads: the percentile is one sample.
    if let Some(flashlab_suite::Coord::Percentile(p)) = m.col {
        if p > 99.99 {
            return None;
        }
    }
    match m.unit {
        Unit::Iops | Unit::BytesPerS => Some(0.02),
        Unit::Ns => Some(0.05),
        _ if m.family.contains("wa") || m.family.contains("amplification") => Some(0.01),
        _ => None,
    }
}

/// (figure, timed, untimed, allowed) of every figure out of tolerance.
fn misses(timed: &[Measure], fast: &[Measure]) -> Vec<(String, f64, f64, f64)> {
    let mut out = Vec::new();
    for m in timed {
        let Some(tol) = tolerance(m) else { continue };
        let other = fast.iter().find(|f| f.key() == m.key());
        let Some(other) = other else {
            out.push((m.key(), m.value, f64::NAN, tol));
            continue;
        };
        if (other.value - m.value).abs() > tol * m.value.abs() {
            out.push((m.key(), m.value, other.value, tol));
        }
    }
    out
}

/// Every figure of `reports` (one per seed, the same figures) as its mean over them.
fn means(reports: &[DeviceReport]) -> Vec<Measure> {
    let mut out = reports[0].results.clone();
    for m in &mut out {
        let key = m.key();
        let sum: f64 = reports
            .iter()
            .map(|r| {
                let same = r.results.iter().find(|f| f.key() == key);
                same.map_or(f64::NAN, |f| f.value)
            })
            .sum();
        m.value = sum / reports.len() as f64;
    }
    out
}

/// `run` of every item, on two threads taking the next item as each finishes; the results
/// in the items' order.
fn on_two_threads<T: Sync, R: Send>(items: &[T], run: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            done.push((i, run(item)));
        }
        done
    };
    let mut done = std::thread::scope(|s| {
        let other = s.spawn(work);
        let mut done = work();
        done.extend(other.join().expect("a run panicked"));
        done
    });
    done.sort_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Both suites on drive `index` of [`DRIVES`], timed and untimed: every figure out of
/// tolerance, as lines.
fn disagreements(index: usize) -> Vec<String> {
    let (name, scale, die_cut) = DRIVES[index];
    let config = drive(name, scale, die_cut);
    let mut failed = Vec::new();
    for suite in SUITES {
        let kind = flashlab_suite::suite(suite).unwrap();
        let (seeds, window_ns) = plan(suite);
        let run = |timed, seed| {
            run_on_device(kind, &config, &options(timed, seed, window_ns))
                .unwrap_or_else(|e| panic!("{suite} on {name}, seed {seed}: {e}"))
        };
        // The runs are independent: two at a time, so that a core is not left idle while
        // this test, among the last of its binary, runs alone.
        let runs: Vec<(bool, u64)> = [true, false]
            .iter()
            .flat_map(|&timed| seeds.iter().map(move |&seed| (timed, seed)))
            .collect();
        let mut reports = on_two_threads(&runs, |&(timed, seed)| run(timed, seed));
        let fast = reports.split_off(seeds.len());
        let timed = reports;
        // The untimed path ran: its fill is a driven step, the timed one's a job.
        let fill_kind =
            |d: &DeviceReport| d.steps.iter().find(|s| s.name == "fill").map(|s| s.kind);
        if suite != "wsat" {
            assert_eq!(
                fill_kind(&timed[0]),
                Some(StepKind::Job),
                "{suite} on {name}"
            );
            assert_eq!(
                fill_kind(&fast[0]),
                Some(StepKind::Driven),
                "{suite} on {name}"
            );
        }
        // So did the rounds' first parts; the timed path's rounds are timed whole.
        let untimed_rounds = |d: &DeviceReport| {
            d.steps
                .iter()
                .filter(|s| s.name.ends_with("-untimed"))
                .count()
        };
        assert_eq!(untimed_rounds(&timed[0]), 0, "{suite} on {name}");
        // wsat times whole the intervals of a drive whose static SLC cache is more than half
        // of an interval's timed middle (the PM981a's 4 GB, 2.6 GB middles here).
        if suite == "wsat" && name == "samsung-pm981a-256gb" {
            assert_eq!(untimed_rounds(&fast[0]), 0, "{suite} on {name}");
        } else {
            assert!(untimed_rounds(&fast[0]) >= 5, "{suite} on {name}");
        }
        let (timed, fast) = (means(&timed), means(&fast));
        for m in &timed {
            if tolerance(m).is_some() {
                // The compared figures (shown with --nocapture).
                let other = fast.iter().find(|f| f.key() == m.key());
                let value = other.map_or(f64::NAN, |f| f.value);
                eprintln!(
                    "{suite} on {name} {}: timed {}, untimed {value}",
                    m.key(),
                    m.value
                );
            }
        }
        for miss in misses(&timed, &fast) {
            failed.push(format!("{suite} on {name}: {miss:?}"));
        }
        failed.extend(page_disagreements(index, suite, &timed, &fast));
    }
    failed
}

/// The page whose tables show what this test measures.
const PAGE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../docs/explain-preconditioning.md"
);

/// The figures of `suite` the page's tables show: (label, result key, how it is printed).
fn page_figures(suite: &str) -> &'static [(&'static str, &'static str, Shown)] {
    match suite {
        "four-corners" => &[("random write", "rand_write_4k_iops", Shown::Iops)],
        "qos" => &[
            ("QD32 mix (3 seeds)", "qd32_iops", Shown::Iops),
            ("read p99.9 (3 seeds)", "qd32_read_lat_p99_9_ns", Shown::Us),
        ],
        "endurance" => &[
            ("write IOPS (3 seeds)", "write_iops", Shown::Iops),
            (
                "write amplification (3 seeds)",
                "write_amplification",
                Shown::Ratio,
            ),
        ],
        "wsat" => &[
            ("steady write", "steady_write_iops", Shown::Iops),
            (
                "steady write amplification",
                "steady_write_amplification",
                Shown::Ratio,
            ),
        ],
        _ => &[],
    }
}

#[derive(Clone, Copy)]
enum Shown {
    Iops,
    Us,
    Ratio,
}

impl Shown {
    fn format(self, value: f64) -> String {
        match self {
            Shown::Iops => format!(
                "{} IOPS",
                flashlab_kit::format::grouped(value.round() as u64)
            ),
            Shown::Us => format!(
                "{} µs",
                flashlab_kit::format::grouped((value / 1e3).round() as u64)
            ),
            Shown::Ratio => format!("{value:.3}"),
        }
    }
}

/// The page's rows for `suite` on drive `index` as this run measured them; each row the
/// page does not show as measured, with the row to put in its place.
fn page_disagreements(
    index: usize,
    suite: &str,
    timed: &[Measure],
    fast: &[Measure],
) -> Vec<String> {
    let (name, scale, _) = DRIVES[index];
    let page = std::fs::read_to_string(PAGE).unwrap();
    let value = |of: &[Measure], key: &str| {
        of.iter()
            .find(|m| m.key() == key)
            .unwrap_or_else(|| panic!("{suite} on {name}: no {key}"))
            .value
    };
    let mut out = Vec::new();
    for &(label, key, shown) in page_figures(suite) {
        let (t, f) = (value(timed, key), value(fast, key));
        let change = format!("{:+.1}%", (f / t - 1.0) * 100.0).replace("-0.0%", "+0.0%");
        let row = format!(
            "| `{name}`, {scale} | `{suite}` {label} | {} | {} | {change} |",
            shown.format(t),
            shown.format(f)
        );
        if !page.contains(&row) {
            out.push(format!(
                "docs/explain-preconditioning.md does not show what was measured; its row:\n{row}"
            ));
        }
    }
    out
}

fn check(index: usize) {
    let failed = disagreements(index);
    assert!(
        failed.is_empty(),
        "(figure, timed, untimed, bound):\n{}",
        failed.join("\n")
    );
}

/// Long (ARCHITECTURE.md, "Tests, and the time CI takes"): `cargo test` leaves them out.
mod long {
    #[test]
    #[ignore = "long: .ci/run runs it (cargo test --workspace -- --ignored long::)"]
    fn the_default_drive_measures_the_same_after_untimed_fills() {
        super::check(0);
    }

    #[test]
    #[ignore = "long: .ci/run runs it (cargo test --workspace -- --ignored long::)"]
    fn the_pm981a_measures_the_same_after_untimed_fills() {
        super::check(2);
    }
}

#[test]
fn the_d5_p5430_measures_the_same_after_untimed_fills() {
    check(1);
}

/// A static SLC cache holds after an untimed fill what it holds after a timed one: the full
/// PM981a's CrystalDiskMark run (`desktop --state full`: a 1 GiB test file rewritten by
/// every write test right after the fill, the first write test running at 563 MB/s where
/// the cache takes the file's rewrites again) measures the same after both fills, every
/// bandwidth and IOPS within 2%.
#[test]
fn the_full_pm981a_runs_crystaldiskmark_the_same_after_untimed_fills() {
    let (name, scale, die_cut) = DRIVES[2];
    let config = drive(name, scale, die_cut);
    let kind = flashlab_suite::suite("desktop").unwrap();
    let run = |timed| {
        let mut o = SuiteOptions {
            runtime_ns: Some(NS_PER_S),
            timed_precondition: timed,
            ..Default::default()
        };
        o.client.states = vec![flashlab_suite::DriveState::Full];
        let d = o.own_mut::<flashlab_suite::DesktopOptions>();
        d.runs = 1;
        d.interval_ns = 0;
        run_on_device(kind, &config, &o).unwrap_or_else(|e| panic!("desktop on {name}: {e}"))
    };
    let (timed, fast) = (run(true), run(false));
    let fill_kind = |d: &DeviceReport| d.steps.iter().find(|s| s.name == "fill").map(|s| s.kind);
    assert_eq!(fill_kind(&fast), Some(StepKind::Driven), "{name}");
    let seq1m = |d: &DeviceReport| {
        let key = "seq1m_q8t1_write_bw_bytes_per_s";
        d.results.iter().find(|m| m.key() == key).map(|m| m.value)
    };
    eprintln!(
        "SEQ1M Q8T1 write: timed {:?}, untimed {:?}",
        seq1m(&timed),
        seq1m(&fast)
    );
    let failed = misses(&timed.results, &fast.results);
    assert!(
        failed.is_empty(),
        "(figure, timed, untimed, bound): {failed:?}"
    );
}

/// The host IUs each step of `d` wrote, by step name (from the FTL's counters at each step's
/// end).
fn host_ius_by_step(d: &DeviceReport) -> Vec<(String, StepKind, u64)> {
    let mut before = 0;
    let mut out = Vec::new();
    for step in &d.steps {
        let Some(json) = &step.fio_json else { continue };
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let ius = v["flashlab"]["device_counters"]["ftl"]["host_write_ius"]
            .as_u64()
            .unwrap_or_else(|| panic!("{}: no FTL counters", step.name));
        out.push((step.name.clone(), step.kind, ius - before));
        before = ius;
    }
    out
}

/// A round of a given size is written without timing but for its end (`--round-timed`, 20%
/// by default), which is timed and gives the round's IOPS; the two parts write the round's
/// bytes. `--round-timed 100%`, `--timed-precondition` and a round given as a time are timed
/// whole.
#[test]
fn a_rounds_first_part_runs_without_timing_and_its_end_is_measured() {
    let config = load_device_config("tiny-test-1gb", &[]).unwrap();
    let ssd = flashlab_device::Ssd::new(&config, flashlab_engine::SeedTree::new(1)).unwrap();
    let ius = flashlab_engine::BlockDevice::capacity_bytes(&ssd) / 4096;
    let round_ius = (ius as f64 * 0.1).round() as u64;
    let run = |edit: &dyn Fn(&mut SuiteOptions)| {
        let mut o = common::short_options(20 * flashlab_engine::NS_PER_MS);
        o.round = flashlab_suite::RoundLength::CapacityFraction(0.1);
        o.max_rounds = 5;
        edit(&mut o);
        let kind = flashlab_suite::suite("precondition").unwrap();
        run_on_device(kind, &config, &o).unwrap()
    };
    let split = host_ius_by_step(&run(&|_| {}));
    let rounds: Vec<_> = split.iter().filter(|s| s.0.starts_with("round-")).collect();
    assert!(rounds.len() >= 10, "{split:?}");
    for pair in rounds.chunks(2) {
        let [(first, first_kind, first_ius), (end, end_kind, end_ius)] = pair else {
            panic!("{pair:?}")
        };
        assert_eq!(*first, format!("{end}-untimed"));
        assert_eq!((*first_kind, *end_kind), (StepKind::Driven, StepKind::Job));
        // 80% and 20% of the round, each a whole number of 4 KiB writes.
        assert!(first_ius + end_ius == round_ius, "{pair:?}: {round_ius}");
        assert!(end_ius.abs_diff(round_ius / 5) <= 1, "{pair:?}");
    }
    for edit in [
        &(|o: &mut SuiteOptions| o.round_timed_percent = 100) as &dyn Fn(&mut SuiteOptions),
        &|o| o.timed_precondition = true,
        &|o| o.round = flashlab_suite::RoundLength::TimeNs(20 * flashlab_engine::NS_PER_MS),
    ] {
        let whole = host_ius_by_step(&run(edit));
        let rounds: Vec<_> = whole.iter().filter(|s| s.0.starts_with("round-")).collect();
        assert!(!rounds.is_empty());
        assert!(
            rounds
                .iter()
                .all(|s| s.1 == StepKind::Job && !s.0.ends_with("untimed")),
            "{rounds:?}"
        );
    }
}
