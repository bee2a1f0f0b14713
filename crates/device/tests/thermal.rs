//! Thermal throttling (`power.thermal_*`): the drive heats with the power it uses, throttles
//! to `power.throttle_power` at `power.throttle_c` and runs at full power again once cooled to
//! `power.resume_c`; the health log reports the temperature and the time spent throttled.

mod common;

use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, IoRequest};

const S: u64 = 1_000_000_000;

/// Sequential 128 KiB writes at QD32 for `secs` simulated seconds, wrapping at the end of
/// the drive; returns bytes written per second, second by second.
fn write_for(d: &mut Ssd, secs: u64) -> Vec<f64> {
    let cap = d.capacity_bytes() / (128 << 10) * (128 << 10);
    let mut at = 0u64;
    let mut per_second = vec![0.0; secs as usize];
    let mut inflight: std::collections::BinaryHeap<std::cmp::Reverse<u64>> =
        (0..32).map(|_| std::cmp::Reverse(0)).collect();
    while let Some(std::cmp::Reverse(t)) = inflight.pop() {
        if t >= secs * S {
            continue;
        }
        let c = d.submit(t, &IoRequest::write(at, 128 << 10)).unwrap();
        at = (at + (128 << 10)) % cap;
        if c.done_ns < secs * S {
            per_second[(c.done_ns / S) as usize] += (128 << 10) as f64;
        }
        inflight.push(std::cmp::Reverse(c.done_ns));
    }
    per_second
}

fn health(d: &Ssd) -> serde_json::Value {
    d.counters_json()["health"].clone()
}

/// The tiny drive (whose writes draw ~0.2 W of media power) with a frugal controller (0.1 W
/// busy) heating 100 °C per watt with a 1 s time constant: 40 °C with its controller busy,
/// past its 50 °C throttle point within a second of writing, then held to 0.15 W.
const HOT: &[(&str, &str)] = &[
    ("power.idle_power", "\"0.05W\""),
    ("power.active_power", "\"0.05W\""),
    ("power.thermal_resistance_c_per_w", "100"),
    ("power.thermal_time_constant", "\"1s\""),
    ("power.ambient_c", "30"),
    ("power.throttle_c", "50"),
    ("power.throttle_power", "\"0.15W\""),
];

#[test]
fn a_hot_drive_throttles_its_writes_and_reports_it() {
    let mut cool = common::tiny_ssd(&[]);
    assert!(health(&cool).get("temperature_c").is_none());
    let free = write_for(&mut cool, 20);

    let mut hot = common::tiny_ssd(HOT);
    // The controller busy and the media idle: 30 + 100 × 0.1 W.
    assert_eq!(health(&hot)["temperature_c"], 40.0);
    let h = health(&hot);
    assert_eq!(h["thermal_throttle_transitions"], 0);
    let throttled = write_for(&mut hot, 20);
    let h = health(&hot);
    assert!(
        h["thermal_throttle_transitions"].as_u64().unwrap() >= 1,
        "{h}"
    );
    assert!(h["thermal_throttle_time_s"].as_f64().unwrap() > 5.0, "{h}");
    // The second half runs throttled: well below the cool drive's pace.
    let half = |v: &[f64]| v[10..].iter().sum::<f64>() / 10.0;
    assert!(
        half(&throttled) < 0.8 * half(&free),
        "{throttled:?} vs {free:?}"
    );
    // The firmware holds the temperature near its throttle point, not at the 30 + 100 × 0.3 W
    // the unthrottled power would reach.
    let max = h["max_temperature_c"].as_f64().unwrap();
    assert!((50.0..53.0).contains(&max), "{max}");
    // A day unpowered: it starts again at the temperature of the air around it.
    hot.power_off(1.0, 25.0);
    assert_eq!(health(&hot)["temperature_c"], 30.0);
    assert_eq!(health(&hot)["thermal_throttling"], false);
}

#[test]
fn a_thermal_description_that_cannot_work_is_refused_with_what_would() {
    use flashlab_device::load_device_config;
    let err = |sets: &[(&str, &str)]| {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        load_device_config("tiny-test-1gb", &sets)
            .map(|_| String::new())
            .unwrap_or_else(|e| e.to_string())
    };
    let r = ("power.thermal_resistance_c_per_w", "5");
    assert!(err(&[r]).contains("power.throttle_power"), "{}", err(&[r]));
    let p = ("power.throttle_power", "\"5W\"");
    assert_eq!(err(&[r, p]), "");
    let e = err(&[r, p, ("power.resume_c", "85")]);
    assert!(
        e.contains("power.resume_c") && e.contains("below 80"),
        "{e}"
    );
    let e = err(&[r, ("power.throttle_power", "\"2W\"")]);
    assert!(e.contains("more than 3W"), "{e}");
    let e = err(&[r, p, ("power.throttle_c", "25")]);
    assert!(e.contains("power.throttle_c"), "{e}");
    let e = err(&[r, p, ("power.thermal_time_constant", "\"10ms\"")]);
    assert!(e.contains("1s to 1h"), "{e}");
}

#[test]
fn health_figures_are_the_numbers_its_json_shows_in_order() {
    for sets in [&[][..], HOT] {
        let mut d = common::tiny_ssd(sets);
        write_for(&mut d, 2);
        let log = d.health_log();
        let json = health(&d);
        let shown: Vec<(&str, f64)> = json
            .as_object()
            .unwrap()
            .iter()
            .filter_map(|(k, v)| v.as_f64().map(|v| (k.as_str(), v)))
            .collect();
        let figures: Vec<(&str, f64)> = log.figures().iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(figures, shown);
        // What a point file holds reads back as the same log.
        let read: flashlab_device::HealthLog = serde_json::from_value(json).unwrap();
        assert_eq!(read, log);
    }
}
