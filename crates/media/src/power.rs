//! Energy of NAND operations, metered per time window, and a power cap that delays
//! operations so the media's energy per window stays within a budget.
//!
//! Energies are integer picojoules. Each operation's energy (array work plus its channel
//! transfer) is charged to the window of its start. The cap is a calendar of
//! [`CAP_WINDOW_NS`] windows: an operation that would take its window past the budget starts
//! in the first later window with room. Window times only grow, so the calendar is a ring
//! whose past slots are recycled.

use crate::thermal::{Thermal, ThermalState};

/// Length of the windows the power cap budgets (short enough that a 1-second average is
/// within 1% of the cap, long enough to hold thousands of operations).
pub const CAP_WINDOW_NS: u64 = 10_000_000;
/// Windows the cap calendar looks ahead (41 s: more than the NAND backlog the drive allows).
const CAP_WINDOWS: usize = 4096;
/// Length of the metering windows.
pub const METER_WINDOW_NS: u64 = 1_000_000_000;
/// Metering windows kept at most (11.5 days); later energy joins the last window.
pub const MAX_METER_WINDOWS: usize = 1_000_000;

/// Energy of each kind of operation, per page (or block, for erase), on one die or plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MediaEnergy {
    pub read_pj: u64,
    pub program_pj: u64,
    pub erase_pj: u64,
    pub slc_read_pj: u64,
    pub slc_program_pj: u64,
    /// Channel transfer, per byte.
    pub channel_pj_per_byte: u64,
}

/// Energy used so far, by kind (picojoules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EnergyTotals {
    pub read_pj: u64,
    pub program_pj: u64,
    pub erase_pj: u64,
    pub channel_pj: u64,
}

/// Energy per fixed window of time.
#[derive(Debug, Clone, Default)]
pub struct EnergyMeter {
    windows_pj: Vec<u64>,
}

flashlab_engine::impl_state!(EnergyMeter { windows_pj } check EnergyMeter::check_loaded);

impl EnergyMeter {
    /// A meter keeps at most [`MAX_METER_WINDOWS`] windows (later energy joins the last).
    fn check_loaded(&self) -> Result<(), String> {
        if self.windows_pj.len() > MAX_METER_WINDOWS {
            return Err(format!(
                "an energy meter's windows_pj holds {} windows (valid: at most {MAX_METER_WINDOWS}, one a simulated second)",
                self.windows_pj.len()
            ));
        }
        Ok(())
    }

    pub fn new() -> EnergyMeter {
        EnergyMeter {
            windows_pj: vec![0],
        }
    }

    /// Charge `pj` at time `at_ns`.
    #[inline]
    pub fn charge(&mut self, at_ns: u64, pj: u64) {
        // The window is found from the time on each charge (a divide by a constant): starts
        // alternate between neighbouring windows when the dies' backlog spans a boundary,
        // so remembering the last window missed about half the time.
        match self.windows_pj.get_mut((at_ns / METER_WINDOW_NS) as usize) {
            Some(e) => *e = e.saturating_add(pj),
            None => self.charge_new_window(at_ns, pj),
        }
    }

    /// [`Self::charge`] past the windows kept so far.
    #[cold]
    #[inline(never)]
    fn charge_new_window(&mut self, at_ns: u64, pj: u64) {
        let w = ((at_ns / METER_WINDOW_NS) as usize).min(MAX_METER_WINDOWS - 1);
        if w >= self.windows_pj.len() {
            // One slot per simulated second: a rare, bounded growth.
            self.windows_pj.resize(w + 1, 0);
        }
        self.windows_pj[w] = self.windows_pj[w].saturating_add(pj);
    }

    /// Energy per window, from time 0.
    pub fn windows_pj(&self) -> &[u64] {
        &self.windows_pj
    }

    pub fn clear(&mut self) {
        *self = EnergyMeter::new();
    }

    /// Bytes of the windows held. Counted by length, not capacity: the capacity depends on
    /// how the vector grew, so a drive loaded from a saved state would report another
    /// figure than the same drive run to that point.
    pub fn memory_bytes(&self) -> usize {
        self.windows_pj.len() * 8
    }
}

/// A budget of media energy per [`CAP_WINDOW_NS`].
#[derive(Debug, Clone)]
pub struct PowerCap {
    budget_pj: u64,
    used_pj: Vec<u64>,
    /// Absolute index of the earliest window still kept (slot `base % CAP_WINDOWS`).
    base: u64,
    /// The drive's temperature, fed each window's energy once time has passed it, and the
    /// budget while it throttles.
    thermal: Option<(Thermal, u64)>,
}

// Saved as a struct of `used_pj`, `base` and `thermal` would be; loaded by hand, since the
// throttled budget the file carries beside the temperature is configuration, and must be the
// configuration's.
impl flashlab_engine::State for PowerCap {
    fn save(&self, w: &mut flashlab_engine::StateWriter<'_>) {
        self.used_pj.save(w);
        self.base.save(w);
        self.thermal.save(w);
    }
    fn load(
        &mut self,
        r: &mut flashlab_engine::StateReader<'_>,
    ) -> Result<(), flashlab_engine::StateError> {
        let slots = self.used_pj.len();
        let throttled = self.thermal.as_ref().map(|(_, b)| *b);
        self.used_pj.load(r)?;
        self.base.load(r)?;
        self.thermal.load(r)?;
        self.check_loaded(slots, throttled)
            .map_err(flashlab_engine::StateError::corrupt)
    }
}

impl PowerCap {
    /// A cap letting the media use `budget_uw` microwatts on average over each window.
    pub fn new(budget_uw: u64) -> PowerCap {
        PowerCap {
            budget_pj: Self::window_pj(budget_uw),
            used_pj: vec![0; CAP_WINDOWS],
            base: 0,
            thermal: None,
        }
    }

    /// Throttle to `budget_uw` while `thermal` says the drive is too hot.
    pub fn with_thermal(self, thermal: Thermal, budget_uw: u64) -> PowerCap {
        PowerCap {
            thermal: Some((thermal, Self::window_pj(budget_uw))),
            ..self
        }
    }

    /// A loaded cap is one a run could have left: its calendar of `slots` windows, its
    /// earliest window one a clock before 2^62 ns reaches, the throttled budget the
    /// configuration's (`throttled`) and a temperature the thermal model could reach.
    fn check_loaded(&self, slots: usize, throttled: Option<u64>) -> Result<(), String> {
        if self.used_pj.len() != slots {
            return Err(format!(
                "the power cap's used_pj holds {} windows where this configuration has {slots}",
                self.used_pj.len()
            ));
        }
        let last = flashlab_engine::state::MAX_STATE_TIME_NS / CAP_WINDOW_NS;
        if self.base > last {
            return Err(format!(
                "the power cap's base is window {} (valid: at most {last}, the window of 2^62 ns)",
                self.base
            ));
        }
        let loaded = self.thermal.as_ref().map(|(_, b)| *b);
        if loaded != throttled {
            return Err(format!(
                "the power cap's throttled budget is {loaded:?} pJ a window where this configuration has {throttled:?}"
            ));
        }
        match &self.thermal {
            Some((t, _)) => t.check_loaded(),
            None => Ok(()),
        }
    }

    fn window_pj(budget_uw: u64) -> u64 {
        // µW × 10 ms = 10^4 pJ per µW.
        budget_uw.saturating_mul(CAP_WINDOW_NS / 1_000).max(1)
    }

    /// The budget of a window admitted to now.
    #[inline]
    fn budget_pj(&self) -> u64 {
        match &self.thermal {
            Some((t, throttled)) if t.state().throttled => (*throttled).min(self.budget_pj),
            _ => self.budget_pj,
        }
    }

    /// The drive was powered off: it has cooled to ambient.
    pub fn cool(&mut self) {
        if let Some((t, _)) = &mut self.thermal {
            t.cool();
        }
    }

    /// The temperature so far (None without a thermal model).
    pub fn thermal_state(&self) -> Option<ThermalState> {
        self.thermal.as_ref().map(|(t, _)| t.state())
    }

    /// Nothing starts before `now_ns` any more: recycle earlier windows.
    pub fn advance_to(&mut self, now_ns: u64) {
        let w = now_ns / CAP_WINDOW_NS;
        if w <= self.base {
            return;
        }
        let n = (w - self.base).min(CAP_WINDOWS as u64);
        for i in 0..n {
            let slot = ((self.base + i) % CAP_WINDOWS as u64) as usize;
            if let Some((t, _)) = &mut self.thermal {
                t.step(CAP_WINDOW_NS, self.used_pj[slot]);
            }
            self.used_pj[slot] = 0;
        }
        // Windows past the calendar's reach took no work: the drive only cooled.
        if let Some((t, _)) = &mut self.thermal {
            t.step((w - self.base - n) * CAP_WINDOW_NS, 0);
        }
        self.base = w;
    }

    /// Earliest start at or after `at_ns` whose window has room for `pj`; charges it there.
    /// An operation larger than a whole window's budget takes an empty window.
    pub fn admit(&mut self, at_ns: u64, pj: u64) -> u64 {
        let first = (at_ns / CAP_WINDOW_NS).max(self.base);
        let last = self.base + CAP_WINDOWS as u64 - 1;
        let mut w = first;
        loop {
            let slot = (w % CAP_WINDOWS as u64) as usize;
            let used = self.used_pj[slot];
            if used == 0 || used.saturating_add(pj) <= self.budget_pj() || w == last {
                self.used_pj[slot] = used.saturating_add(pj);
                break;
            }
            w += 1;
        }
        if w == first {
            at_ns.max(w * CAP_WINDOW_NS)
        } else {
            w * CAP_WINDOW_NS
        }
    }

    pub fn reset(&mut self) {
        self.used_pj.fill(0);
    }

    pub fn memory_bytes(&self) -> usize {
        self.used_pj.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_charges_the_window_of_the_time() {
        let mut m = EnergyMeter::new();
        m.charge(10, 5);
        m.charge(999_999_999, 5);
        m.charge(2_500_000_000, 7);
        m.charge(1_000_000_000, 1);
        assert_eq!(m.windows_pj(), &[10, 1, 7]);
    }

    #[test]
    fn cap_moves_work_to_later_windows_with_room() {
        // 1 W: 10 mJ per 10 ms window.
        let mut c = PowerCap::new(1_000_000);
        let mj = 1_000_000_000;
        assert_eq!(c.admit(5, 6 * mj), 5);
        assert_eq!(c.admit(100, 4 * mj), 100);
        // The first window is full: the next starts at 10 ms.
        assert_eq!(c.admit(200, mj), CAP_WINDOW_NS);
        // A later wish in a window with room starts when it wants.
        assert_eq!(c.admit(CAP_WINDOW_NS + 7, 8 * mj), CAP_WINDOW_NS + 7);
        assert_eq!(c.admit(300, 2 * mj), 2 * CAP_WINDOW_NS);
        // Larger than a window's budget: an empty window takes it.
        assert_eq!(c.admit(0, 50 * mj), 3 * CAP_WINDOW_NS);
        c.advance_to(3 * CAP_WINDOW_NS + 1);
        assert_eq!(c.admit(0, mj), 4 * CAP_WINDOW_NS);
        // Recycled slots start empty.
        c.advance_to(10_000 * CAP_WINDOW_NS);
        assert_eq!(c.admit(0, 9 * mj), 10_000 * CAP_WINDOW_NS);
    }

    /// A forged power cap or temperature is refused at load naming the field: a calendar of
    /// another length, a window past 2^62 ns, another throttled budget, a temperature that is
    /// no number, below the air or above its maximum, throttling below the resume point or
    /// without a transition; a meter of more windows than it keeps. A real one loads.
    #[test]
    fn forged_power_and_thermal_states_are_refused_at_load() {
        use crate::thermal::ThermalModel;
        use flashlab_engine::state::reload_into;
        let model = ThermalModel {
            resistance_c_per_w: 5.0,
            time_constant_ns: 1e9,
            ambient_c: 30.0,
            throttle_c: 75.0,
            resume_c: 70.0,
            base_w: 1.0,
        };
        let fresh =
            || PowerCap::new(20_000_000).with_thermal(Thermal::new(model, 1.0, 1.0), 2_000_000);
        let mut c = fresh();
        let mj = 1_000_000_000;
        let mut t = 0;
        while !c.thermal_state().unwrap().throttled {
            c.admit(t, 150 * mj);
            t += CAP_WINDOW_NS;
            c.advance_to(t);
        }
        let mut ok = fresh();
        reload_into(&c, &mut ok).unwrap();
        assert_eq!(ok.thermal_state(), c.thermal_state());
        assert_eq!(ok.admit(t, mj), c.clone().admit(t, mj));
        fn state(f: &mut PowerCap) -> &mut ThermalState {
            &mut f.thermal.as_mut().unwrap().0.state
        }
        type Forge<'a> = (&'a str, &'a dyn Fn(&mut PowerCap));
        let cases: [Forge; 8] = [
            (
                "used_pj holds 4095 windows where this configuration has 4096",
                &|f| {
                    f.used_pj.pop();
                },
            ),
            ("power cap's base is window", &|f| f.base = u64::MAX / 2),
            ("throttled budget", &|f| f.thermal.as_mut().unwrap().1 = 1),
            ("not a finite number", &|f| {
                state(f).temperature_c = f64::NAN
            }),
            ("below ambient", &|f| state(f).temperature_c = 20.0),
            ("above max_temperature_c", &|f| {
                state(f).max_temperature_c = 31.0
            }),
            ("at or below the resume point", &|f| {
                let s = state(f);
                s.temperature_c = 50.0;
            }),
            ("without a transition", &|f| {
                state(f).throttle_transitions = 0
            }),
        ];
        for (want, forge) in cases {
            let mut forged = c.clone();
            forge(&mut forged);
            let e = reload_into(&forged, &mut fresh()).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        let mut m = EnergyMeter::new();
        m.windows_pj = vec![0; MAX_METER_WINDOWS + 1];
        let e = reload_into(&m, &mut EnergyMeter::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("energy meter's windows_pj"), "{e}");
    }
}
