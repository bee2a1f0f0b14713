//! Power-off data retention as NAND wears.
//!
//! A cell's charge leaks while the drive is unpowered; the controller's ECC corrects the errors
//! that leakage causes until there are too many. Wear (program/erase cycles) damages the tunnel
//! oxide, so the more a block has been cycled, the sooner its data is lost. JEDEC's JESD218
//! rates an SSD's endurance at the point where its data must still survive a stated time
//! unpowered: a client drive 1 year at 30 °C, an enterprise drive 3 months at 40 °C. NAND data
//! sheets quote 10 years at low wear.
//!
//! The model joins those two points: retention at the reference temperature falls as a power
//! law of wear (erase count over rated P/E cycles) from `at_tenth_rated_days` at a tenth of the
//! rated cycles (held below that) to `at_rated_days` at the rating and on past it. Other storage
//! temperatures scale the time by Arrhenius's law with JESD218's activation energy of 1.1 eV,
//! which halves retention every ~5 °C near room temperature, as JEDEC's table of client
//! retention does (105 weeks at 25 °C, 52 at 30 °C: JC-64.8 presentation, A. Cox, 2015, as
//! reported by AnandTech, "The Truth About SSD Data Retention", 2015). The temperature the data
//! was written at also matters (writing hot anneals the damage; the same table gives an
//! enterprise drive 20 weeks at 25 °C after a cool 40 °C life, where this model, which holds the
//! class's active temperature, gives 101): not modelled.

/// Reading aged data: a page whose data has used more than this share of its retention time
/// needs read retries (estimate: the first half of the retention time leaves ECC margin).
pub const RETRY_FROM_MARGIN: f64 = 0.5;
/// Re-reads at shifted read voltages before the data counts as lost (estimate: NAND
/// read-retry tables hold a handful to a few dozen steps; a controller walks several).
pub const MAX_READ_RETRIES: u32 = 8;

/// JESD218's activation energy for data-retention acceleration, in eV.
pub const RETENTION_ACTIVATION_EV: f64 = 1.1;
const BOLTZMANN_EV_PER_K: f64 = 8.617_333e-5;
const ZERO_C_IN_K: f64 = 273.15;

/// How long data survives without power, by wear and storage temperature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Retention {
    /// Days at `reference_c` for data in blocks cycled to their rated P/E count.
    pub at_rated_days: f64,
    /// Days at `reference_c` at a tenth of the rated cycles (and below).
    pub at_tenth_rated_days: f64,
    /// The power-off temperature both figures hold at, in °C.
    pub reference_c: f64,
}

impl Retention {
    /// JESD218's client class: 1 year at 30 °C at the rated endurance, 10 years at low wear.
    pub const CLIENT: Retention = Retention {
        at_rated_days: 365.0,
        at_tenth_rated_days: 3652.5,
        reference_c: 30.0,
    };
    /// JESD218's enterprise class: 3 months (13 weeks) at 40 °C at the rated endurance.
    pub const ENTERPRISE: Retention = Retention {
        at_rated_days: 91.0,
        at_tenth_rated_days: 3652.5,
        reference_c: 40.0,
    };

    /// Days data written at `wear` (erase count over rated P/E cycles) survives unpowered at
    /// `storage_c`.
    pub fn days(&self, wear: f64, storage_c: f64) -> f64 {
        let slope = (self.at_tenth_rated_days / self.at_rated_days).log10();
        let at_reference = self.at_rated_days * wear.max(0.1).powf(-slope);
        at_reference * time_factor(self.reference_c, storage_c)
    }
}

/// Re-reads a page needs whose data is `age_days` old (at the retention's reference
/// temperature) in a block at `wear`: none while the data has used less than
/// [`RETRY_FROM_MARGIN`] of its retention time, then rising evenly to [`MAX_READ_RETRIES`] as
/// it nears the end of it; `None` once the retention time has passed (the data is lost).
pub fn read_retries(r: &Retention, wear: f64, age_days: f64) -> Option<u32> {
    let margin = age_days / r.days(wear, r.reference_c);
    if margin >= 1.0 {
        return None;
    }
    let past = (margin - RETRY_FROM_MARGIN).max(0.0) / (1.0 - RETRY_FROM_MARGIN);
    Some((past * f64::from(MAX_READ_RETRIES)).ceil() as u32)
}

/// How much longer (below 1: shorter) charge takes to leak at `to_c` than at `from_c`.
pub fn time_factor(from_c: f64, to_c: f64) -> f64 {
    let inverse_k = |c: f64| 1.0 / (c + ZERO_C_IN_K);
    (RETENTION_ACTIVATION_EV / BOLTZMANN_EV_PER_K * (inverse_k(to_c) - inverse_k(from_c))).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_figures_hold_at_the_rating_and_at_a_tenth_of_it() {
        let c = Retention::CLIENT;
        assert!((c.days(1.0, 30.0) - 365.0).abs() < 1e-9);
        assert!((c.days(0.1, 30.0) - 3652.5).abs() < 1e-6);
        // Held below a tenth; falls on past the rating (client: tenfold per decade of wear).
        assert_eq!(c.days(0.01, 30.0), c.days(0.1, 30.0));
        assert!((c.days(10.0, 30.0) / 36.5 - 1.0).abs() < 1e-3);
        let e = Retention::ENTERPRISE;
        assert!((e.days(1.0, 40.0) - 91.0).abs() < 1e-9);
        // Halfway in wear (log scale) is halfway in retention (log scale).
        let mid = e.days(0.1f64.sqrt(), 40.0);
        assert!((mid - (91.0f64 * 3652.5).sqrt()).abs() < 1e-6);
    }

    #[test]
    fn aged_data_needs_retries_past_half_its_retention_and_is_lost_past_all_of_it() {
        let c = Retention::CLIENT;
        // At the rating: 365 days.
        assert_eq!(read_retries(&c, 1.0, 0.0), Some(0));
        assert_eq!(read_retries(&c, 1.0, 182.0), Some(0));
        assert_eq!(read_retries(&c, 1.0, 200.0), Some(1));
        assert_eq!(read_retries(&c, 1.0, 364.0), Some(MAX_READ_RETRIES));
        assert_eq!(read_retries(&c, 1.0, 365.0), None);
        // Less worn blocks keep the same data longer.
        assert_eq!(read_retries(&c, 0.1, 365.0), Some(0));
    }

    #[test]
    fn five_degrees_halve_retention_near_room_temperature_as_jedec_table_does() {
        // JEDEC's client table: 105 weeks at 25 °C, 52 at 30 °C.
        let weeks_at_25 = Retention::CLIENT.days(1.0, 25.0) / 7.0;
        assert!((weeks_at_25 - 105.0).abs() < 2.0, "{weeks_at_25}");
        assert!(time_factor(30.0, 35.0) < 0.52 && time_factor(30.0, 35.0) > 0.48);
        assert!((time_factor(40.0, 40.0) - 1.0).abs() < 1e-12);
        assert!((time_factor(30.0, 40.0) * time_factor(40.0, 30.0) - 1.0).abs() < 1e-12);
    }
}
