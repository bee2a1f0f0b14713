//! The SNIA PTS steady-state rule, as a pure function of the tracked values of each round.
//!
//! Over a measurement window of the last `window` rounds, the tracked value is steady when
//! - its range (max − min) is at most `max_range_fraction` of the window's mean, and
//! - the least-squares line through the window moves by at most `max_excursion_fraction` of
//!   the mean from the window's first round to its last (|slope| × (window − 1)).

/// The parameters of the rule; [`SteadyRule::SNIA_PTS`] is the standard one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyRule {
    /// Rounds in the measurement window.
    pub window: usize,
    /// Largest allowed range of the window, as a fraction of its mean.
    pub max_range_fraction: f64,
    /// Largest allowed excursion of the fitted line across the window, as a fraction of the mean.
    pub max_excursion_fraction: f64,
}

impl SteadyRule {
    /// SNIA PTS: 5 rounds, range ≤ 20 % and slope excursion ≤ 10 % of the mean.
    pub const SNIA_PTS: SteadyRule = SteadyRule {
        window: 5,
        max_range_fraction: 0.20,
        max_excursion_fraction: 0.10,
    };
}

/// The rule applied to one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowCheck {
    pub mean: f64,
    /// max − min over the window.
    pub range: f64,
    /// |slope| × (rounds − 1) of the least-squares line.
    pub excursion: f64,
    pub steady: bool,
}

/// Apply `rule` to exactly these values (one window). An empty window, a non-positive mean or a
/// non-finite value is never steady: a drive that did nothing is not in a steady state.
pub fn check_window(values: &[f64], rule: &SteadyRule) -> WindowCheck {
    let n = values.len();
    if n == 0 {
        return WindowCheck {
            mean: 0.0,
            range: 0.0,
            excursion: 0.0,
            steady: false,
        };
    }
    let nf = n as f64;
    let mean = values.iter().sum::<f64>() / nf;
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let range = max - min;
    // Least squares over x = 0..n-1: slope = Σ(x−x̄)(y−ȳ) / Σ(x−x̄)².
    let x_mean = (nf - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in values.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let excursion = slope.abs() * (nf - 1.0);
    let finite = values.iter().all(|v| v.is_finite());
    let steady = finite
        && mean > 0.0
        && range <= rule.max_range_fraction * mean
        && excursion <= rule.max_excursion_fraction * mean;
    WindowCheck {
        mean,
        range,
        excursion,
        steady,
    }
}

/// The verdict over all rounds so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyVerdict {
    /// The round (from 1) whose window first met the rule; `None`: not reached.
    pub round: Option<usize>,
    /// The window that met the rule, or the last full window when none did (`None` when there
    /// are fewer rounds than the window).
    pub window: Option<WindowCheck>,
}

impl SteadyVerdict {
    pub fn reached(&self) -> bool {
        self.round.is_some()
    }
}

/// Check every window ending at round `window`, `window + 1`, … and report the first steady
/// one. Rounds are numbered from 1.
pub fn steady_state(values: &[f64], rule: &SteadyRule) -> SteadyVerdict {
    let w = rule.window.max(1);
    let mut last = None;
    for end in w..=values.len() {
        let check = check_window(&values[end - w..end], rule);
        if check.steady {
            return SteadyVerdict {
                round: Some(end),
                window: Some(check),
            };
        }
        last = Some(check);
    }
    SteadyVerdict {
        round: None,
        window: last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: SteadyRule = SteadyRule::SNIA_PTS;

    #[test]
    fn flat_values_are_steady_at_the_first_full_window() {
        let v = [100.0; 7];
        let verdict = steady_state(&v, &RULE);
        assert_eq!(verdict.round, Some(5));
        let w = verdict.window.unwrap();
        assert_eq!(w.mean, 100.0);
        assert_eq!(w.range, 0.0);
        assert_eq!(w.excursion, 0.0);
    }

    #[test]
    fn falling_then_flat_is_steady_once_the_window_leaves_the_fall() {
        // A fresh-drive cliff: high IOPS, then GC brings it down to ~100.
        let v = [
            400.0, 300.0, 200.0, 120.0, 104.0, 100.0, 98.0, 101.0, 99.0, 100.0,
        ];
        let verdict = steady_state(&v, &RULE);
        // Window 5..=9 = [104, 100, 98, 101, 99]: range 6, tiny slope.
        assert_eq!(verdict.round, Some(9));
        assert!(verdict.reached());
    }

    #[test]
    fn fewer_rounds_than_the_window_is_not_steady_and_has_no_window() {
        let verdict = steady_state(&[100.0; 4], &RULE);
        assert_eq!(verdict.round, None);
        assert_eq!(verdict.window, None);
        assert!(!verdict.reached());
    }

    #[test]
    fn a_wide_range_is_not_steady() {
        // Mean 100, range 30 > 20: fails on the range even though the trend is flat.
        let c = check_window(&[85.0, 115.0, 100.0, 115.0, 85.0], &RULE);
        assert_eq!(c.mean, 100.0);
        assert_eq!(c.range, 30.0);
        assert!(c.excursion < 1e-9);
        assert!(!c.steady);
    }

    #[test]
    fn a_steady_drift_fails_on_the_slope_alone() {
        // Range 12 ≤ 20 % of 100, but the line climbs 12 across the window > 10 %.
        let c = check_window(&[94.0, 97.0, 100.0, 103.0, 106.0], &RULE);
        assert!((c.range - 12.0).abs() < 1e-9);
        assert!((c.excursion - 12.0).abs() < 1e-9);
        assert!(!c.steady);
        // Half the drift passes both.
        let c = check_window(&[97.0, 98.5, 100.0, 101.5, 103.0], &RULE);
        assert!((c.excursion - 6.0).abs() < 1e-9);
        assert!(c.steady);
    }

    #[test]
    fn limits_are_inclusive() {
        // Range exactly 20 % of the mean, no trend (the extremes in the middle).
        let c = check_window(&[90.0, 110.0, 100.0, 110.0, 90.0], &RULE);
        assert!((c.range - 20.0).abs() < 1e-9);
        assert!(c.excursion < 1e-9);
        assert!(c.steady);
    }

    #[test]
    fn zero_or_non_finite_values_are_never_steady() {
        assert!(!check_window(&[0.0; 5], &RULE).steady);
        assert!(!check_window(&[100.0, 100.0, f64::NAN, 100.0, 100.0], &RULE).steady);
        assert!(!check_window(&[], &RULE).steady);
    }

    #[test]
    fn never_settling_reports_the_last_window() {
        let v: Vec<f64> = (0..25)
            .map(|i| if i % 2 == 0 { 50.0 } else { 150.0 })
            .collect();
        let verdict = steady_state(&v, &RULE);
        assert_eq!(verdict.round, None);
        let w = verdict.window.unwrap();
        assert_eq!(w.range, 100.0);
        assert!(!w.steady);
    }
}
