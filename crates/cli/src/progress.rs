//! A one-line progress display on standard error. The wall clock lives here only: it throttles
//! redraws and never touches the simulation.

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use flashlab_runner::Progress;
use flashlab_suite::SuiteProgress;

/// Redraws at most this often.
const REDRAW_EVERY: Duration = Duration::from_millis(250);

pub struct ProgressLine {
    enabled: bool,
    last_draw: Option<Instant>,
    drawn: bool,
}

impl ProgressLine {
    /// `enabled` is false when standard error is not a terminal: then nothing is printed.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            last_draw: None,
            drawn: false,
        }
    }

    pub fn update(&mut self, p: &Progress) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self
            .last_draw
            .is_some_and(|last| now.duration_since(last) < REDRAW_EVERY)
        {
            return;
        }
        self.last_draw = Some(now);
        self.drawn = true;
        let line = format_line(p);
        let mut err = std::io::stderr().lock();
        // `\x1b[K` clears what a longer previous line left behind.
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }

    /// Clear the line so that results start on a clean one.
    pub fn finish(&mut self) {
        if self.enabled && self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

fn format_line(p: &Progress) -> String {
    let secs = p.now_ns as f64 / 1e9;
    format!(
        "[{}/{}] {}: {:5.1}% done, simulated {:.3} s",
        p.phase + 1,
        p.phases,
        p.jobs,
        p.fraction_done * 100.0,
        secs
    )
}

/// What the suite display knows of one device.
#[derive(Debug, Clone)]
struct DeviceState {
    device: String,
    step: String,
    step_number: usize,
    round: Option<usize>,
    max_rounds: Option<usize>,
    sim_ns: u64,
    step_fraction: f64,
    suite_fraction: Option<f64>,
    step_started: Instant,
}

struct Board {
    devices: Vec<Option<DeviceState>>,
    last_draw: Option<Instant>,
    drawn: bool,
}

/// One progress line for a suite on several devices (each on its own thread): per device its
/// step, round, simulated time, share done and an estimate of the wall time left.
pub struct SuiteProgressLine {
    enabled: bool,
    started: Instant,
    board: Mutex<Board>,
}

impl SuiteProgressLine {
    /// `enabled` is false when standard error is not a terminal: then nothing is printed.
    pub fn new(enabled: bool, devices: usize) -> Self {
        Self {
            enabled,
            started: Instant::now(),
            board: Mutex::new(Board {
                devices: vec![None; devices],
                last_draw: None,
                drawn: false,
            }),
        }
    }

    pub fn update(&self, device: usize, p: &SuiteProgress) {
        if !self.enabled {
            return;
        }
        // A display that panicked once draws nothing more; the run goes on.
        let Ok(mut board) = self.board.lock() else {
            return;
        };
        let now = Instant::now();
        if let Some(slot) = board.devices.get_mut(device) {
            let step_started = match slot {
                Some(st) if !p.step_started && st.step_number == p.step_number => st.step_started,
                _ => now,
            };
            *slot = Some(DeviceState {
                device: p.device.to_string(),
                step: p.step.to_string(),
                step_number: p.step_number,
                round: p.round,
                max_rounds: p.max_rounds,
                sim_ns: p.sim_ns,
                step_fraction: p.step_fraction,
                suite_fraction: p.suite_fraction,
                step_started,
            });
        }
        if board
            .last_draw
            .is_some_and(|last| now.duration_since(last) < REDRAW_EVERY)
        {
            return;
        }
        board.last_draw = Some(now);
        board.drawn = true;
        let line = board
            .devices
            .iter()
            .flatten()
            .map(|st| {
                format_device(
                    st,
                    now.duration_since(st.step_started),
                    now.duration_since(self.started),
                )
            })
            .collect::<Vec<_>>()
            .join(" | ");
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }

    /// Clear the line so that results start on a clean one.
    pub fn finish(&self) {
        let drawn = self.board.lock().map(|b| b.drawn).unwrap_or(false);
        if self.enabled && drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

/// Wall time left at this rate, once enough is done to tell.
fn eta(fraction: f64, elapsed: Duration) -> Option<Duration> {
    (0.01..1.0)
        .contains(&fraction)
        .then(|| elapsed.mul_f64((1.0 - fraction) / fraction))
}

fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// `drive: step 7 round-03 (3/25) 45.2%, simulated 12.3 min, ETA 1m05s`; the ETA is the suite's when
/// the suite knows its length, else the step's.
fn format_device(st: &DeviceState, in_step: Duration, in_suite: Duration) -> String {
    let mut out = format!("{}: step {} {}", st.device, st.step_number, st.step);
    match (st.round, st.max_rounds) {
        (Some(r), Some(m)) => out.push_str(&format!(" ({r}/{m})")),
        (Some(r), None) => out.push_str(&format!(" ({r})")),
        _ => {}
    }
    out.push_str(&format!(
        " {:5.1}%, simulated {:.1} min",
        st.step_fraction * 100.0,
        st.sim_ns as f64 / 60e9
    ));
    let left = match st.suite_fraction {
        Some(f) if f >= 0.01 => eta(f, in_suite)
            .map(|d| format!(", suite {:.0}%, ETA {}", f * 100.0, format_duration(d))),
        _ => eta(st.step_fraction, in_step).map(|d| format!(", step ETA {}", format_duration(d))),
    };
    out.push_str(&left.unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_line_shows_step_round_time_and_eta() {
        let st = DeviceState {
            device: "tiny".into(),
            step: "round-03".into(),
            step_number: 5,
            round: Some(3),
            max_rounds: Some(25),
            sim_ns: 90_000_000_000,
            step_fraction: 0.5,
            suite_fraction: None,
            step_started: Instant::now(),
        };
        assert_eq!(
            format_device(&st, Duration::from_secs(10), Duration::from_secs(100)),
            "tiny: step 5 round-03 (3/25)  50.0%, simulated 1.5 min, step ETA 0m10s"
        );
        let st = DeviceState {
            suite_fraction: Some(0.25),
            round: None,
            ..st
        };
        assert_eq!(
            format_device(&st, Duration::from_secs(10), Duration::from_secs(100)),
            "tiny: step 5 round-03  50.0%, simulated 1.5 min, suite 25%, ETA 5m00s"
        );
    }

    #[test]
    fn eta_waits_for_a_measurable_share() {
        assert_eq!(eta(0.001, Duration::from_secs(1)), None);
        assert_eq!(eta(1.0, Duration::from_secs(1)), None);
        assert_eq!(
            eta(0.5, Duration::from_secs(7)),
            Some(Duration::from_secs(7))
        );
        assert_eq!(format_duration(Duration::from_secs(3725)), "1h02m");
    }

    #[test]
    fn a_disabled_display_keeps_no_state() {
        let d = SuiteProgressLine::new(false, 1);
        let p = SuiteProgress {
            device: "d",
            step: "fill",
            step_number: 1,
            step_started: true,
            round: None,
            max_rounds: None,
            sim_ns: 0,
            step_fraction: 0.0,
            suite_fraction: None,
        };
        d.update(0, &p);
        assert!(d.board.lock().unwrap().devices[0].is_none());
    }

    #[test]
    fn line_shows_phase_percent_and_time() {
        let p = Progress {
            now_ns: 1_500_000_000,
            fraction_done: 0.25,
            phase: 0,
            phases: 2,
            jobs: "a, b",
        };
        assert_eq!(
            format_line(&p),
            "[1/2] a, b:  25.0% done, simulated 1.500 s"
        );
    }
}
