//! The drive's temperature and thermal throttling.
//!
//! A drive is one lumped heat capacity behind a thermal resistance to the air around it: its
//! temperature moves towards `ambient + resistance × power` with a time constant, window by
//! window of the power cap's calendar, from the energy the media used in each window (once
//! time has passed it, so it is final) and the controller's steady power. Above the throttle
//! temperature the firmware throttles (NVMe's host-controlled or the drive's own thermal
//! management): the media's budget drops to what the throttled power allows, until the drive
//! has cooled to the resume temperature. Work already admitted to later windows keeps its
//! place; what is admitted after the crossing takes the lower budget.

/// Thermal description of a drive (all temperatures in °C).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThermalModel {
    /// Steady-state rise over ambient per watt.
    pub resistance_c_per_w: f64,
    /// Time constant of the rise, in the drive's ns.
    pub time_constant_ns: f64,
    pub ambient_c: f64,
    /// The drive throttles at or above this.
    pub throttle_c: f64,
    /// And stops throttling at or below this.
    pub resume_c: f64,
    /// Power outside the media (controller idle and active), in W, always on.
    pub base_w: f64,
}

/// What the drive's temperature did so far.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThermalState {
    pub temperature_c: f64,
    pub max_temperature_c: f64,
    pub throttled: bool,
    /// Times throttling began (NVMe: thermal management transition count).
    pub throttle_transitions: u64,
    /// Drive ns spent throttled.
    pub throttled_ns: f64,
}

flashlab_engine::impl_state!(ThermalState {
    temperature_c,
    max_temperature_c,
    throttled,
    throttle_transitions,
    throttled_ns
});

/// The temperature, stepped window by window.
#[derive(Debug, Clone)]
pub struct Thermal {
    model: ThermalModel,
    /// Drive ns per simulated ns (a slice's clock runs fast: see the device's scale).
    time_scale: f64,
    /// Drive watts per watt the simulated media uses (a die cut has a share of the dies).
    power_scale: f64,
    pub(crate) state: ThermalState,
}

flashlab_engine::impl_state!(Thermal { state } skip { model, time_scale, power_scale } check Thermal::check_loaded);

impl Thermal {
    pub fn new(model: ThermalModel, time_scale: f64, power_scale: f64) -> Thermal {
        let start = model.ambient_c + model.resistance_c_per_w * model.base_w;
        Thermal {
            model,
            time_scale,
            power_scale,
            state: ThermalState {
                temperature_c: start,
                max_temperature_c: start,
                ..ThermalState::default()
            },
        }
    }

    /// A loaded temperature is one the model reaches: finite, never below the air around
    /// the drive (it moves towards ambient plus a non-negative rise), at most the maximum
    /// so far; a throttled drive is above its resume point and has begun throttling at
    /// least once; time throttled is finite and not negative.
    pub(crate) fn check_loaded(&self) -> Result<(), String> {
        let s = &self.state;
        let m = &self.model;
        let bad = |what: &str| {
            Err(format!(
                "the drive's thermal state: {what} (temperature_c {}, max_temperature_c {}, throttled {}, throttle_transitions {}, throttled_ns {}; ambient {} °C, resume at {} °C)",
                s.temperature_c, s.max_temperature_c, s.throttled, s.throttle_transitions,
                s.throttled_ns, m.ambient_c, m.resume_c
            ))
        };
        if !(s.temperature_c.is_finite()
            && s.max_temperature_c.is_finite()
            && s.throttled_ns.is_finite())
        {
            return bad("a figure that is not a finite number");
        }
        // A step's rounding may leave a drive cooled to ambient a hair below it.
        if s.temperature_c < m.ambient_c - 1e-9 || s.temperature_c > s.max_temperature_c {
            return bad("temperature_c below ambient or above max_temperature_c");
        }
        if s.throttled_ns < 0.0 {
            return bad("throttled_ns below zero");
        }
        if s.throttled && (s.temperature_c <= m.resume_c || s.throttle_transitions == 0) {
            return bad("throttled at or below the resume point, or without a transition");
        }
        Ok(())
    }

    /// `ns` of simulated time in which the media used `media_pj`.
    pub fn step(&mut self, ns: u64, media_pj: u64) {
        if ns == 0 {
            return;
        }
        let m = &self.model;
        let drive_ns = ns as f64 * self.time_scale;
        let media_w = media_pj as f64 * 1e-12 / (ns as f64 * 1e-9) * self.power_scale;
        let target = m.ambient_c + m.resistance_c_per_w * (media_w + m.base_w);
        let s = &mut self.state;
        let before = s.temperature_c;
        s.temperature_c = target + (before - target) * (-drive_ns / m.time_constant_ns).exp();
        s.max_temperature_c = s.max_temperature_c.max(s.temperature_c);
        if s.throttled {
            s.throttled_ns += drive_ns;
        }
        if !s.throttled && s.temperature_c >= m.throttle_c {
            s.throttled = true;
            s.throttle_transitions += 1;
        } else if s.throttled && s.temperature_c <= m.resume_c {
            s.throttled = false;
        }
    }

    pub fn state(&self) -> ThermalState {
        self.state
    }

    /// The drive was off long enough to cool to the air around it.
    pub fn cool(&mut self) {
        self.state.temperature_c = self.model.ambient_c;
        self.state.throttled = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> ThermalModel {
        ThermalModel {
            resistance_c_per_w: 5.0,
            time_constant_ns: 60e9,
            ambient_c: 30.0,
            throttle_c: 75.0,
            resume_c: 70.0,
            base_w: 1.0,
        }
    }

    const MS10: u64 = 10_000_000;
    /// Picojoules of `w` watts for 10 ms.
    fn pj(w: f64) -> u64 {
        (w * 1e-2 * 1e12) as u64
    }

    #[test]
    fn the_drive_settles_at_ambient_plus_resistance_times_power() {
        let mut t = Thermal::new(model(), 1.0, 1.0);
        assert_eq!(t.state().temperature_c, 35.0);
        // 7 W of media for ten time constants: 30 + 5 × 8 = 70 °C, never throttling.
        for _ in 0..60_000 {
            t.step(MS10, pj(7.0));
        }
        let s = t.state();
        assert!((s.temperature_c - 70.0).abs() < 0.01, "{s:?}");
        assert!(!s.throttled && s.throttle_transitions == 0);
        // One time constant covers 1 - 1/e of the way.
        let mut t = Thermal::new(model(), 1.0, 1.0);
        for _ in 0..6_000 {
            t.step(MS10, pj(7.0));
        }
        let want = 70.0 - 35.0 * (-1.0f64).exp();
        assert!((t.state().temperature_c - want).abs() < 0.01);
    }

    #[test]
    fn throttling_starts_at_the_throttle_point_and_ends_once_cooled_to_resume() {
        let mut t = Thermal::new(model(), 1.0, 1.0);
        // 9 W heads for 80 °C: throttles on the way.
        let mut steps = 0;
        while !t.state().throttled {
            t.step(MS10, pj(9.0));
            steps += 1;
        }
        assert!(t.state().temperature_c >= 75.0);
        assert_eq!(t.state().throttle_transitions, 1);
        // ln(45 / 5) time constants from 35 °C to 75 °C on the way to 80.
        let want = (9.0f64).ln() * 6_000.0;
        assert!((f64::from(steps) - want).abs() < 2.0, "{steps} vs {want}");
        // Idle (1 W) cools it: still throttled until 70 °C.
        while t.state().temperature_c > 70.5 {
            t.step(MS10, 0);
            assert!(t.state().throttled);
        }
        while t.state().throttled {
            t.step(MS10, 0);
        }
        assert!(t.state().temperature_c <= 70.0);
        assert!(t.state().throttled_ns > 0.0);
    }

    #[test]
    fn a_drive_powered_off_starts_again_at_ambient() {
        let mut t = Thermal::new(model(), 1.0, 1.0);
        while !t.state().throttled {
            t.step(MS10, pj(9.0));
        }
        t.cool();
        let s = t.state();
        assert_eq!(s.temperature_c, 30.0);
        assert!(!s.throttled && s.throttle_transitions == 1);
    }

    #[test]
    fn a_slice_heats_as_its_drive_does() {
        // A die cut with a quarter of the dies uses a quarter of the power; a capacity slice
        // of a tenth does its work in a tenth of the time: the drive's temperature either way.
        let mut full = Thermal::new(model(), 1.0, 1.0);
        let mut cut = Thermal::new(model(), 1.0, 4.0);
        let mut fast = Thermal::new(model(), 10.0, 1.0);
        for _ in 0..1_000 {
            full.step(MS10, pj(8.0));
            cut.step(MS10, pj(2.0));
        }
        for _ in 0..100 {
            fast.step(MS10, pj(8.0));
        }
        let t = full.state().temperature_c;
        assert!((cut.state().temperature_c - t).abs() < 1e-9);
        assert!((fast.state().temperature_c - t).abs() < 1e-6);
    }
}
