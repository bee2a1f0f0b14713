//! A one-line progress display on standard error. The wall clock lives here only: it throttles
//! redraws and never touches the simulation.

use std::io::Write;
use std::time::{Duration, Instant};

use flashlab_runner::Progress;

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

#[cfg(test)]
mod tests {
    use super::*;

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
