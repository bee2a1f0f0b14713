//! fio's job-weighted flow control (`flow_id`, `flow`, `flow_sleep`), as fio 3.33 carries it
//! out (`flow.c`): the jobs of one `flow_id` with a weight above 0 share a count of the I/Os
//! they issue (starting at 1), each keeps its own, and a job whose own count is a larger share
//! of the group's than its weight is of the group's weights is held back until it is not.
//! A job with `flow=0` (fio's default) is outside flow control whatever its `flow_id`.
//! The runner carries it out (`runner::run::flow`).

use crate::fio::value::{parse_bytes, parse_int};

/// fio's `FLOW_MAX_WEIGHT`: the largest `flow`.
pub const MAX_WEIGHT: u64 = 1000;

/// A job's flow-control options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowOptions {
    /// `flow_id` (fio's `int`; 0, fio's default, is the global flow).
    pub id: i32,
    /// `flow`: the job's weight, 0 to [`MAX_WEIGHT`] (0: no flow control).
    pub weight: u32,
    /// `flow_sleep` in microseconds: a held job first waits for its I/Os in flight, then
    /// this long, before it looks again (0: it looks again as soon as the group moves).
    pub sleep_us: u32,
}

impl FlowOptions {
    /// The job takes part in flow control.
    pub fn active(&self) -> bool {
        self.weight > 0
    }

    /// Apply flow option `name` (`flow_id`, `flow` or `flow_sleep`).
    pub(crate) fn set(&mut self, name: &str, value: &str, kb_base: u64) -> Result<(), String> {
        match name {
            "flow_id" => {
                let t = value.trim();
                let (neg, digits) = match t.strip_prefix('-') {
                    Some(d) => (true, d),
                    None => (false, t),
                };
                let range = || "an integer from -2147483648 to 2147483647".to_string();
                let v = parse_bytes(digits, kb_base).map_err(|_| range())?;
                let v = if neg { -(v as i128) } else { v as i128 };
                self.id = i32::try_from(v).map_err(|_| range())?;
            }
            // fio 3.33 keeps the weight unsigned and refuses one above 1000 ("max value out
            // of range"); a negative weight (the sign of fio's flow before 3.23) would wrap
            // to a huge weight that turns the group's control off, so it is refused too.
            "flow" => self.weight = parse_int(value, kb_base, 0, MAX_WEIGHT)? as u32,
            "flow_sleep" => {
                self.sleep_us = parse_int(value, kb_base, 0, u64::from(u32::MAX))
                    .map_err(|e| format!("{e} (microseconds)"))?
                    as u32
            }
            _ => return Err(format!("{name} is not a flow option")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_options_parse_as_fio_reads_them() {
        let mut f = FlowOptions::default();
        assert!(!f.active());
        f.set("flow_id", "-7", 1024).unwrap();
        f.set("flow", "8", 1024).unwrap();
        f.set("flow_sleep", "1000", 1024).unwrap();
        assert_eq!(
            f,
            FlowOptions {
                id: -7,
                weight: 8,
                sleep_us: 1000
            }
        );
        assert!(f.active());
        f.set("flow", "1000", 1024).unwrap();
        let e = f.set("flow", "1001", 1024).unwrap_err();
        assert!(e.contains("0 to 1000"), "{e}");
        assert!(f.set("flow", "-1", 1024).is_err());
        assert!(f.set("flow_sleep", "-1", 1024).is_err());
        assert!(f.set("flow_id", "2147483648", 1024).is_err());
        f.set("flow_id", "-2147483648", 1024).unwrap();
        assert_eq!(f.id, i32::MIN);
    }
}
