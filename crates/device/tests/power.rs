//! Power: idle power, energy per operation, per-second windows, and a cap that throttles the
//! media.

mod common;

use flashlab_device::units::grouped;

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, SeedTree};

fn ssd(v: &[(&str, &str)]) -> Ssd {
    let sets: Vec<(String, String)> = v
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cfg = load_device_config("tiny-test-1gb", &sets).unwrap();
    Ssd::new(&cfg, SeedTree::new(9)).unwrap()
}

const S: u64 = 1_000_000_000;

/// Sequential 128 KiB writes at QD8 from `start` for `dur` (one closed loop per slot);
/// returns bytes written.
fn write_for(d: &mut Ssd, start: u64, dur: u64) -> u64 {
    let cap = d.capacity_bytes();
    let mut slots = [start; 8];
    let (mut off, mut bytes) = (0, 0);
    loop {
        let (i, &t) = slots.iter().enumerate().min_by_key(|(_, t)| **t).unwrap();
        if t >= start + dur {
            return bytes;
        }
        let c = d
            .submit(t, &IoRequest::write(off % cap, 128 << 10))
            .unwrap();
        slots[i] = c.done_ns;
        off += 128 << 10;
        bytes += 128 << 10;
    }
}

#[test]
fn an_idle_drive_draws_idle_power_and_work_adds_energy_by_part() {
    let mut d = ssd(&[
        ("power.idle_power", "2W"),
        ("power.active_power", "1W"),
        ("slc_cache.dynamic", "false"),
    ]);
    // Nothing for 2 s, then 3 s of writes.
    let bytes = write_for(&mut d, 2 * S, 3 * S);
    assert!(bytes > 100 << 20);
    let idle = d.power_summary(0, 2 * S);
    assert_eq!(idle.windows, 2);
    assert!((idle.average_w - 2.0).abs() < 1e-9, "{idle:?}");
    let busy = d.power_summary(2 * S, 5 * S);
    assert_eq!(busy.windows, 3);
    // Idle + active (always busy) + programs, channel and host transfers.
    assert!(busy.average_w > 3.0 && busy.average_w < 4.0, "{busy:?}");
    let p = d.counters_json()["power"].clone();
    let parts = &p["energy_by_part_j"];
    let sum: f64 = parts
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((sum - p["energy_j"].as_f64().unwrap()).abs() < 1e-9, "{p}");
    // 600 us tPROG × 50 mW = 30 uJ per 16 KiB page.
    let programs = d.counters_json()["media"]["programs"].as_f64().unwrap();
    let prog_j = parts["nand_program"].as_f64().unwrap();
    assert!(
        (prog_j / programs - 30e-6).abs() < 1e-9,
        "{prog_j} J / {programs}"
    );
    // Host transfer: 150 pJ per byte.
    let host_j = parts["host_transfer"].as_f64().unwrap();
    assert!((host_j - bytes as f64 * 150e-12).abs() < 1e-6, "{host_j}");
    let avg = p["average_w"].as_f64().unwrap();
    let e = p["energy_j"].as_f64().unwrap();
    let dur = p["duration_ns"].as_f64().unwrap() * 1e-9;
    assert!((avg - e / dur).abs() < 1e-9);
    assert!(p["peak_w"].as_f64().unwrap() >= busy.average_w);
    assert!(p["cap_w"].is_null());
}

/// The controller is one on a die cut as on the whole drive, busy for the same time: its
/// active energy is not multiplied by the die factor as the media's and the host
/// transfers' are (it once was, and a 1/8 cut of a 22 W-capped drive reported 28 W).
#[test]
fn a_die_cut_reports_the_controllers_active_power_once() {
    let sets: Vec<(String, String)> = [
        ("sim.scale", "0.05"),
        ("power.idle_power", "1W"),
        ("power.active_power", "2W"),
        ("slc_cache.dynamic", "false"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let cfg = load_device_config("generic-tlc-256gb", &sets).unwrap();
    let mut d = Ssd::new(&cfg, SeedTree::new(9)).unwrap();
    let c = d.counters_json();
    assert_eq!(c["scale"]["die_factor"], 2.0, "{}", c["scale"]);
    // Eight commands always in flight: the controller is active throughout.
    write_for(&mut d, 0, 2 * S);
    let p = d.counters_json()["power"].clone();
    let secs = p["duration_ns"].as_f64().unwrap() * 1e-9;
    let active_w = p["energy_by_part_j"]["controller_active"].as_f64().unwrap() / secs;
    assert!(
        active_w > 1.9 && active_w <= 2.0 + 1e-9,
        "{active_w} W active: {p}"
    );
    // Every window holds idle + active + the scaled media and host energy, so none is
    // below idle + active while the drive is busy.
    let w = p["windows_w"].as_array().unwrap();
    assert!(w[0].as_f64().unwrap() > 3.0, "{p}");
    let avg = p["average_w"].as_f64().unwrap();
    let parts: f64 = p["energy_by_part_j"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((avg - parts / secs).abs() < 1e-9, "{p}");
}

#[test]
fn a_power_cap_throttles_the_media_and_holds_every_second() {
    let base = [
        ("power.idle_power", "2W"),
        ("power.active_power", "1W"),
        // Program energy large enough that the media dominates: 1 mJ per page.
        ("power.program_energy", "1mJ"),
        ("power.states", "[\"none\", \"5W\"]"),
    ];
    let mut free = ssd(&base);
    let mut capped_sets = base.to_vec();
    capped_sets.push(("power.state", "1"));
    let mut capped = ssd(&capped_sets);
    let (bf, bc) = (
        write_for(&mut free, 0, 4 * S),
        write_for(&mut capped, 0, 4 * S),
    );
    let (pf, pc) = (free.power_summary(S, 4 * S), capped.power_summary(S, 4 * S));
    eprintln!("uncapped {pf:?} {bf} B; capped at 5 W {pc:?} {bc} B");
    assert!(pf.peak_w > 6.0, "{pf:?}");
    assert!(pc.peak_w <= 5.0 * 1.02, "{pc:?}");
    assert!(pc.average_w > 4.5, "{pc:?}");
    // Throughput falls with the power the media may use.
    assert!((bc as f64) < 0.8 * bf as f64, "{bc} vs {bf}");
    assert_eq!(capped.counters_json()["power"]["cap_w"], 5.0);
}

#[test]
fn bad_power_settings_name_the_key() {
    for (k, v, want) in [
        (
            "power.states",
            "[\"none\", \"2.5W\"]",
            "leaves nothing for the media",
        ),
        ("power.states", "[\"fast\"]", "none"),
        ("power.state", "3", "0 to 0"),
        ("power.idle_power", "5 watts", "13W"),
    ] {
        let sets = vec![(k.to_string(), v.to_string())];
        let e = load_device_config("tiny-test-1gb", &sets)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("--set {k}={v}")), "{e}");
        assert!(e.contains(want), "{e}");
    }
}

/// Closed loop at queue depth `qd` from `start` until `start + dur` or until `next` has no
/// more requests; returns the time of the last completion.
fn closed_loop(
    d: &mut Ssd,
    start: u64,
    dur: u64,
    qd: usize,
    mut next: impl FnMut() -> Option<IoRequest>,
) -> u64 {
    let mut slots = vec![start; qd];
    let mut end = start;
    loop {
        let (i, &t) = slots.iter().enumerate().min_by_key(|(_, t)| **t).unwrap();
        if t >= start.saturating_add(dur) {
            return end;
        }
        let Some(req) = next() else {
            return end;
        };
        let c = d.submit(t, &req).unwrap();
        slots[i] = c.done_ns;
        end = end.max(c.done_ns);
    }
}

/// Average power and throughput of one corner.
#[derive(Debug, Clone, Copy)]
struct Corner {
    watts: f64,
    /// Bytes per second.
    bytes_per_s: f64,
}

/// The D5-P5430 15.36 TB's four corners in power state `state` (a slice: every die, 1/65 of
/// the capacity): sequential 128 KiB write at QD32 on the empty drive, then after a full
/// fill sequential 128 KiB read at QD32 and random 4 KiB read at QD256, then random 4 KiB
/// writes at QD32 for twice the capacity (steady state) of which the last 4 s are measured.
/// In that order.
fn d5_p5430_corners(state: u32) -> [Corner; 4] {
    let sets = vec![
        ("sim.scale".to_string(), "0.016".to_string()),
        ("power.state".to_string(), state.to_string()),
    ];
    let cfg = load_device_config("solidigm-d5-p5430-15.36tb", &sets).unwrap();
    let mut d = Ssd::new(&cfg, SeedTree::new(1)).unwrap();
    let cap = d.capacity_bytes();
    let mut rng = flashlab_engine::RngStream::from_seed_u64(4);
    let corner = |d: &Ssd, from: u64, to: u64, bytes: u64| Corner {
        watts: d.power_summary(from, to).average_w,
        bytes_per_s: bytes as f64 / ((to - from) as f64 * 1e-9),
    };
    let seq = |kind: fn(u64, u64) -> IoRequest, bytes: &mut u64, off: &mut u64| {
        let r = kind(*off % cap, 128 << 10);
        *off += 128 << 10;
        *bytes += 128 << 10;
        Some(r)
    };
    let (mut off, mut bytes) = (0u64, 0u64);
    let t0 = S;
    let t = closed_loop(&mut d, t0, 5 * S, 32, || {
        seq(IoRequest::write, &mut bytes, &mut off)
    });
    let seq_write = corner(&d, t0, t, bytes);
    let mut t = t + 1;
    while off < cap {
        let len = (1 << 20).min(cap - off);
        t = d.submit(t, &IoRequest::write(off, len)).unwrap().done_ns;
        off += len;
    }
    let t0 = d.counters_json()["power"]["duration_ns"].as_u64().unwrap() + S;
    let (mut off, mut bytes) = (0u64, 0u64);
    let t = closed_loop(&mut d, t0, 4 * S, 32, || {
        seq(IoRequest::read, &mut bytes, &mut off)
    });
    let seq_read = corner(&d, t0, t, bytes);
    let t0 = t + S;
    let mut bytes = 0u64;
    let t = closed_loop(&mut d, t0, 4 * S, 256, || {
        bytes += 4096;
        Some(IoRequest::read(rng.below(cap / 4096) * 4096, 4096))
    });
    let rand_read = corner(&d, t0, t, bytes);
    let t0 = t + S;
    let mut left = 2 * cap / 4096;
    let t = closed_loop(&mut d, t0, u64::MAX, 32, || {
        left = left.checked_sub(1)?;
        Some(IoRequest::write(rng.below(cap / 4096) * 4096, 4096))
    });
    let t0 = t + 1;
    let mut bytes = 0u64;
    let t = closed_loop(&mut d, t0, 4 * S, 32, || {
        bytes += 4096;
        Some(IoRequest::write(rng.below(cap / 4096) * 4096, 4096))
    });
    let rand_write = corner(&d, t0, t, bytes);
    [seq_read, seq_write, rand_read, rand_write]
}

/// The page whose table shows [`d5_p5430_corners`] in PM0, PM1 and PM2.
const POWER_PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/power.md");

/// docs/power.md's rows of the D5-P5430's corners, as `corners` (PM0, PM1, PM2) measure
/// them, and its sentence on the random write, the check.
fn power_page_lines(corners: &[[Corner; 4]; 3]) -> Vec<String> {
    const ROWS: [(&str, &str); 4] = [
        ("sequential read 128 KiB QD32", "13.3 W"),
        ("sequential write 128 KiB QD32", "20.7 W"),
        ("random read 4 KiB QD256", "14.5 W"),
        ("random write 4 KiB QD32 (steady)", "18.5 W"),
    ];
    let rate = |row: usize, c: Corner| {
        if row < 2 {
            format!("{} MB/s", grouped((c.bytes_per_s / 1e6).round() as u64))
        } else {
            format!(
                "{}K IOPS",
                grouped((c.bytes_per_s / 4096.0 / 1e3).round() as u64)
            )
        }
    };
    let mut lines: Vec<String> = ROWS
        .iter()
        .enumerate()
        .map(|(i, (name, review))| {
            let [pm0, pm1, pm2] = [corners[0][i], corners[1][i], corners[2][i]];
            format!(
                "| {name} | {review} | {:.1} W | {} | {:.1} W, {} | {:.1} W, {} |",
                pm0.watts,
                rate(i, pm0),
                pm1.watts,
                rate(i, pm1),
                pm2.watts,
                rate(i, pm2)
            )
        })
        .collect();
    let w = corners[0][3];
    let iops = w.bytes_per_s / 4096.0;
    lines.push(format!(
        "Random write is the check: {}K IOPS at {:.1} W against the review's 140K at\n18.5 W, \
         i.e. {:.0} uJ per host write",
        (iops / 1e3).round(),
        w.watts,
        w.watts / iops * 1e6
    ));
    lines
}

/// Long (ARCHITECTURE.md, "Tests, and the time CI takes"): `cargo test` leaves it out.
mod long {
    use super::*;

    /// docs/power.md's table of the D5-P5430's corners in its three power states, and the
    /// random write it checks, are what the model draws (three slices of minutes each, two
    /// at a time); a row that drifted fails with the row to put in its place
    /// (`--nocapture` prints every line).
    #[test]
    #[ignore = "long: .ci/run runs it (cargo test --workspace -- --ignored long::)"]
    fn the_power_page_shows_the_d5_p5430_corners_in_each_state() {
        let pm1 = std::thread::spawn(|| d5_p5430_corners(1));
        let pm0 = d5_p5430_corners(0);
        let pm2 = d5_p5430_corners(2);
        let pm1 = pm1.join().expect("the PM1 run panicked");
        let page = std::fs::read_to_string(POWER_PAGE).unwrap();
        let lines = power_page_lines(&[pm0, pm1, pm2]);
        let missing: Vec<&String> = lines.iter().filter(|l| !page.contains(*l)).collect();
        for l in &lines {
            eprintln!("{l}");
        }
        assert!(
            missing.is_empty(),
            "docs/power.md does not show what the model draws; put in place:\n{}",
            missing
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// The meters keep at most a million one-second windows (11.5 days) and put later energy in
/// the last; the reported windows stop there too, the last one running to the end. With one
/// entry per simulated second a 4-year replay (a trace read with the wrong time unit) would
/// build a 2 GB JSON list, and a longer thinktime would abort allocating 43 GB.
#[test]
fn power_windows_stay_bounded_on_runs_of_years() {
    let mut d = ssd(&[("power.idle_power", "2W"), ("power.active_power", "1W")]);
    let day = 86_400 * S;
    d.submit(0, &IoRequest::write(0, 4096)).unwrap();
    let late = d.submit(30 * day, &IoRequest::write(4096, 4096)).unwrap();
    let p = d.counters_json()["power"].clone();
    let w = p["windows_w"].as_array().unwrap();
    assert_eq!(w.len(), 1_000_000);
    let end = p["duration_ns"].as_u64().unwrap();
    assert!(end >= late.done_ns);
    // Every window's average over its length adds up to the run's energy.
    let last_len = (end - 999_999 * S) as f64 * 1e-9;
    let energy: f64 = w[..999_999]
        .iter()
        .map(|v| v.as_f64().unwrap())
        .sum::<f64>()
        + w[999_999].as_f64().unwrap() * last_len;
    let e = p["energy_j"].as_f64().unwrap();
    assert!(
        (energy - e).abs() < 1e-6 * e,
        "{energy} J in windows, {e} J in all"
    );
}

/// The D5-P5430's PM0 is its 25 W write envelope, the same on every capacity. The 15.36 TB
/// writes sequentially at ~20.7 W (the review's figure) and never reaches it; the 30.72 TB
/// has twice the dies and would draw ~35 W programming them all at once. Held to 25 W, its
/// sequential write gains a third over the 15.36 TB's, not the double its dies could
/// program. Slices of one channel (1/16 of the dies) of each, 128 KiB writes at QD32 for
/// 3 s on the empty drive.
#[test]
fn the_d5_p5430_writes_within_its_25w_envelope_on_every_capacity() {
    let mut mb_s = Vec::new();
    for preset in ["solidigm-d5-p5430-15.36tb", "solidigm-d5-p5430-30.72tb"] {
        let sets = vec![("sim.scale".to_string(), "0.001".to_string())];
        let cfg = load_device_config(preset, &sets).unwrap();
        let mut d = Ssd::new(&cfg, SeedTree::new(1)).unwrap();
        let cap = d.capacity_bytes();
        let (mut off, mut bytes) = (0u64, 0u64);
        let t = closed_loop(&mut d, S, 3 * S, 32, || {
            let r = IoRequest::write(off % cap, 128 << 10);
            off += 128 << 10;
            bytes += 128 << 10;
            Some(r)
        });
        let p = d.power_summary(S, t);
        assert!(p.windows >= 2, "{preset}: {p:?}");
        assert!(p.peak_w <= 25.0 * 1.01, "{preset}: {p:?}");
        mb_s.push(bytes as f64 / ((t - S) as f64 * 1e-9) / 1e6);
        if preset.contains("15.36") {
            // Below the envelope: the dies' program time holds it, as calibrated.
            assert!(p.average_w > 19.5 && p.average_w < 22.0, "{preset}: {p:?}");
        } else {
            assert!(p.average_w > 24.0, "{preset}: {p:?}");
        }
    }
    let gain = mb_s[1] / mb_s[0];
    assert!(
        gain > 1.15 && gain < 1.5,
        "30.72 TB / 15.36 TB: {gain:.2} ({mb_s:?})"
    );
}
