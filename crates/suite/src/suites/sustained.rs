//! `sustained-write`: sequential writes from a purged device for a set amount of data (default
//! 1.2 × the capacity) or time, measured per interval (`--interval`, shared with wsat).
//! Throughput against time and against data written shows where a drive's SLC cache runs out
//! and, past one capacity, what the drive does once it must reclaim blocks. Works on a drive
//! or a system.

use flashlab_device::ThermalLog;
use flashlab_report::DDIR_WRITE;
use serde_json::{json, Value};

use super::wsat::MAX_INTERVALS;
use flashlab_kit::lengths::RoundLength;
use flashlab_kit::session::Session;
use flashlab_kit::steps::{bw_bytes_per_s, measure, qd_jobs};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::{Axis, Chart, Series, SuiteError, SuiteOptions, Unit};

/// An interval slower than this share of the first one marks where a write cache ran out.
const SLOW_SHARE: f64 = 0.7;

/// Options of the `sustained-write` suite (the interval is wsat's `--interval`).
#[derive(Debug, Clone, PartialEq)]
pub struct SustainedOptions {
    /// Block size of the writes.
    pub bs_bytes: u64,
    /// How much to write: a share of the capacity, bytes or simulated time.
    pub length: RoundLength,
}

impl Default for SustainedOptions {
    fn default() -> Self {
        Self {
            bs_bytes: 128 << 10,
            length: RoundLength::CapacityFraction(1.2),
        }
    }
}

// `sustained-write`'s command-line options (a doc comment would become the command's about).
#[derive(clap::Args, Debug)]
pub struct SustainedArgs {
    /// sustained-write: block size of the writes.
    #[arg(long, default_value = "128KiB")]
    bs: String,
    /// sustained-write: data to write, a share of the capacity (120%) or a size.
    #[arg(long, default_value = "120%")]
    bytes: String,
    /// sustained-write: write for this simulated time instead of --bytes.
    #[arg(long, conflicts_with = "bytes")]
    time: Option<String>,
}

impl SustainedArgs {
    fn apply(&self, o: &mut SustainedOptions) -> Result<(), SuiteError> {
        o.bs_bytes = flashlab_kit::parse_size("--bs", &self.bs)?;
        o.length = match &self.time {
            // parse_time takes 0 (no idle time); a sustained write of no time writes nothing.
            Some(t) => match flashlab_kit::parse_time("--time", t)? {
                0 => {
                    return Err(SuiteError::OptionValue {
                        option: "--time",
                        value: format!("'{t}'"),
                        expected: "expected a time above 0 such as 30s, 10min or 1h".into(),
                    })
                }
                ns => RoundLength::TimeNs(ns),
            },
            None => match RoundLength::parse_for("--bytes", &self.bytes)? {
                RoundLength::TimeNs(_) => {
                    return Err(SuiteError::OptionValue {
                        option: "--bytes",
                        value: format!("'{}'", self.bytes),
                        expected: "expected a share of the capacity (120%) or a size (4GiB); \
                                   use --time for a time"
                            .into(),
                    })
                }
                l => l,
            },
        };
        Ok(())
    }
}

impl flashlab_kit::options::OwnOptions for SustainedOptions {
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        SustainedOptions::validate(self)
    }
}

impl SustainedOptions {
    pub fn validate(&self) -> Result<(), SuiteError> {
        if self.bs_bytes < 512 || !self.bs_bytes.is_multiple_of(512) || self.bs_bytes > 64 << 20 {
            return Err(SuiteError::BadOption {
                option: "--bs",
                value: self.bs_bytes.to_string(),
                valid: "a multiple of 512 bytes up to 64MiB".into(),
            });
        }
        Ok(())
    }

    pub(crate) fn to_json(&self, interval: RoundLength) -> Value {
        json!({
            "bs_bytes": self.bs_bytes,
            "length": self.length.describe(),
            "interval": interval.describe(),
        })
    }
}

fn too_many(what: &str) -> SuiteError {
    SuiteError::BadOption {
        option: "--interval",
        value: what.to_string(),
        valid: format!("an interval giving at most {MAX_INTERVALS} intervals over the run, each long enough for one write"),
    }
}

pub(crate) fn run(s: &mut Session) -> Result<Outcome, SuiteError> {
    let opts = s.opts();
    let o = opts.own::<SustainedOptions>();
    s.purge("purge")?;
    let capacity = s.full_capacity_bytes();
    let bs = o.bs_bytes;
    let whole = capacity / bs * bs;
    if whole == 0 {
        return Err(SuiteError::BadOption {
            option: "--bs",
            value: bs.to_string(),
            valid: format!("at most the capacity ({capacity} bytes)"),
        });
    }
    let (target_bytes, target_ns) = match o.length {
        RoundLength::CapacityFraction(f) => ((capacity as f64 * f) as u64, None),
        RoundLength::Bytes(b) => (b, None),
        RoundLength::TimeNs(ns) => (u64::MAX, Some(ns as f64)),
    };
    let interval = opts.interval;
    let (interval_bytes, planned) = interval_plan(interval, capacity, bs, target_bytes, target_ns)?;
    let (qd, jobs) = qd_jobs(opts);
    let start_ns = s.now_ns();
    // Next offset to write (whole-drive bytes, a multiple of bs): intervals continue the
    // stream, wrapping at the end of the device.
    let mut pos = 0u64;
    let wrap_margin = wrap_margin(bs, s.scale().capacity_factor);
    let mut written = 0u64;
    let mut points: Vec<(f64, f64, f64)> = Vec::new();
    let mut temperatures: Vec<(f64, f64)> = Vec::new();
    loop {
        let elapsed = s.drive_ns(s.now_ns() - start_ns);
        // A planned count is exact: rounding intervals to whole blocks must not add a sliver.
        let done = match (target_ns, planned) {
            (Some(t), _) => elapsed >= t,
            (None, Some(n)) => points.len() >= n,
            (None, None) => written >= target_bytes,
        };
        if done {
            break;
        }
        let i = points.len() + 1;
        if i > MAX_INTERVALS {
            return Err(too_many(&interval.describe()));
        }
        s.suite_span = Some(match target_ns {
            Some(t) => (elapsed / t, 1.0f64.min(elapsed / t)),
            None => (
                written as f64 / target_bytes as f64,
                written as f64 / target_bytes as f64,
            ),
        });
        let room = whole - pos;
        let amount = match interval {
            RoundLength::TimeNs(ns) => format!("time_based=1\nruntime={ns}ns"),
            _ => {
                let left = target_bytes.saturating_sub(written).div_ceil(bs) * bs;
                let b = interval_bytes_at(interval_bytes.unwrap_or(bs), room);
                let b = if target_ns.is_none() {
                    b.min(left.max(bs))
                } else {
                    b
                };
                format!("io_size={}", b / u64::from(jobs) / bs * bs)
            }
        };
        let name = format!("write-{i:04}");
        // No `size=`: the region runs from `pos` to the end of the device. On a slice the
        // runner divides `offset` and `size` by the capacity factor and rounds each to whole
        // blocks, so a `size` of the rest of the drive could end a block past the slice's end.
        let text = format!(
            "[global]\nioengine=libaio\ndirect=1\ngroup_reporting=1\n\n[{name}]\nrw=write\nbs={bs}\niodepth={qd}\nnumjobs={jobs}\noffset={pos}\n{amount}\n"
        );
        let run = s.job(&name, &text, &|run| {
            vec![measure(
                "bw_bytes_per_s",
                Unit::BytesPerS,
                bw_bytes_per_s(run, DDIR_WRITE),
            )]
        })?;
        let bytes: u64 = run.jobs.iter().map(|j| j.io_bytes(DDIR_WRITE)).sum();
        if bytes == 0 {
            return Err(too_many(&interval.describe()));
        }
        written += bytes;
        // Past the end a job wraps to its own offset: it ends `bytes` into the region, mod its size.
        pos = (pos + (bytes - 1) % room + 1) / bs * bs;
        if pos + wrap_margin > whole {
            pos = 0;
        }
        points.push((
            s.drive_ns(s.now_ns() - start_ns),
            written as f64,
            bw_bytes_per_s(&run, DDIR_WRITE),
        ));
        // A drive with a thermal model reports its temperature (`power.thermal_*`).
        if let Some(t) = s.health_log().and_then(|h| h.thermal) {
            temperatures.push((s.drive_ns(s.now_ns() - start_ns) / 1e9, t.temperature_c));
        }
    }
    let (mut results, mut charts) = summarise(&points);
    if !temperatures.is_empty() {
        let t = s.health_log().and_then(|h| h.thermal);
        let (thermal, chart) = thermal_results(t, temperatures);
        results.extend(thermal);
        charts.push(chart);
    }
    Ok(Outcome {
        steady: None,
        results,
        charts,
    })
}

/// Bytes of the next interval of `interval` bytes with `room` left before the drive's end.
/// Intervals rounded to whole writes leave a sliver before the end (up to an interval's
/// count of writes, more on a slice, whose capacity in the drive's bytes is not the
/// drive's): the interval before it takes it, rather than an interval of a few
/// milliseconds measuring the work the last one left queued.
fn interval_bytes_at(interval: u64, room: u64) -> u64 {
    let b = interval.min(room);
    if room - b < interval / 2 {
        room
    } else {
        b
    }
}

/// Room a next interval of `bs` writes needs before the end of the drive. On a slice the
/// runner divides `offset` by the capacity factor `f` and rounds it to whole blocks, and the
/// slice's capacity is rounded too: an offset a block from the drive's end can land in the
/// slice's last, partial block. A few blocks of `f` keep it a whole block inside.
fn wrap_margin(bs: u64, f: f64) -> u64 {
    if f > 1.0 {
        bs * (3 * f.ceil() as u64 + 1)
    } else {
        bs
    }
}

/// Bytes per interval (none for timed intervals) and, when the run's length is in bytes, how
/// many intervals it takes; too many intervals is an error naming `--interval`.
fn interval_plan(
    interval: RoundLength,
    capacity: u64,
    bs: u64,
    target_bytes: u64,
    target_ns: Option<f64>,
) -> Result<(Option<u64>, Option<usize>), SuiteError> {
    let interval_bytes = match interval {
        RoundLength::CapacityFraction(f) => Some(((capacity as f64 * f) as u64 / bs * bs).max(bs)),
        RoundLength::Bytes(b) => Some((b / bs * bs).max(bs)),
        RoundLength::TimeNs(_) => None,
    };
    if let Some(b) = interval_bytes {
        if target_ns.is_none() && target_bytes / b > MAX_INTERVALS as u64 {
            return Err(too_many(&interval.describe()));
        }
    }
    let planned = match interval {
        RoundLength::CapacityFraction(f) => Some(target_bytes as f64 / (capacity as f64 * f)),
        RoundLength::Bytes(b) => Some(target_bytes as f64 / b as f64),
        RoundLength::TimeNs(_) => None,
    }
    .map(|n| (n - 1e-9).ceil().max(1.0) as usize);
    Ok((interval_bytes, planned))
}

/// A drive with a thermal model: its hottest temperature and throttling at the end (`t`),
/// and its temperature at the end of each interval (seconds, °C) as a chart.
fn thermal_results(
    t: Option<ThermalLog>,
    temperatures: Vec<(f64, f64)>,
) -> (Vec<flashlab_kit::Measure>, Chart) {
    let results = vec![
        measure(
            "max_temperature_c",
            Unit::Ratio,
            t.map_or(0.0, |t| t.max_temperature_c),
        ),
        measure(
            "thermal_throttle_time_s",
            Unit::Ratio,
            t.map_or(0.0, |t| t.thermal_throttle_time_s),
        ),
        measure(
            "thermal_throttle_transitions",
            Unit::Count,
            t.map_or(0.0, |t| t.thermal_throttle_transitions as f64),
        ),
    ];
    let chart = Chart {
        id: "sustained-temperature".into(),
        title: "Drive temperature at the end of each interval against time".into(),
        x: Axis::linear("time (s)", Unit::Count),
        y: Axis::linear("temperature (°C)", Unit::Ratio),
        series: vec![Series {
            name: "temperature (health log)".into(),
            points: temperatures,
        }],
        band: None,
    };
    (results, chart)
}

/// Results and charts from (end time ns, bytes written, B/s) per interval.
fn summarise(points: &[(f64, f64, f64)]) -> (Vec<flashlab_kit::Measure>, Vec<Chart>) {
    let first = points.first().map_or(0.0, |p| p.2);
    let tail = &points[points.len() - points.len().div_ceil(4).min(points.len())..];
    let sustained = if tail.is_empty() {
        0.0
    } else {
        tail.iter().map(|p| p.2).sum::<f64>() / tail.len() as f64
    };
    // Data written before the first interval that fell below SLOW_SHARE of the first.
    let slow_at = points
        .iter()
        .position(|p| p.2 < first * SLOW_SHARE)
        .map(|i| if i == 0 { 0.0 } else { points[i - 1].1 });
    let total_ns = points.last().map_or(0.0, |p| p.0);
    let total_bytes = points.last().map_or(0.0, |p| p.1);
    let mut results = vec![
        measure("first_interval_bw_bytes_per_s", Unit::BytesPerS, first),
        measure("last_quarter_bw_bytes_per_s", Unit::BytesPerS, sustained),
        measure(
            "min_interval_bw_bytes_per_s",
            Unit::BytesPerS,
            points
                .iter()
                .map(|p| p.2)
                .fold(f64::MAX, f64::min)
                .min(first),
        ),
        measure(
            "average_bw_bytes_per_s",
            Unit::BytesPerS,
            if total_ns > 0.0 {
                total_bytes / (total_ns / 1e9)
            } else {
                0.0
            },
        ),
        measure("written_bytes", Unit::Bytes, total_bytes),
        measure("intervals", Unit::Count, points.len() as f64),
    ];
    if let Some(b) = slow_at {
        results.push(measure("slowdown_at_written_bytes", Unit::Bytes, b));
    }
    let series = |x: fn(&(f64, f64, f64)) -> f64| {
        vec![Series {
            name: "write throughput".into(),
            points: points.iter().map(|p| (x(p), p.2)).collect(),
        }]
    };
    let charts = vec![
        Chart {
            id: "sustained-time".into(),
            title: "Sequential write throughput per interval against time".into(),
            x: Axis::linear("time (s)", Unit::Count),
            y: Axis::linear("throughput", Unit::BytesPerS),
            series: series(|p| p.0 / 1e9),
            band: None,
        },
        Chart {
            id: "sustained-bytes".into(),
            title: "Sequential write throughput per interval against data written".into(),
            x: Axis::linear("written", Unit::Bytes),
            y: Axis::linear("throughput", Unit::BytesPerS),
            series: series(|p| p.1),
            band: None,
        },
    ];
    (results, charts)
}

/// `sustained-write`: throughput over a long sequential write.
pub(crate) struct SustainedWrite;

impl Suite for SustainedWrite {
    fn name(&self) -> &'static str {
        "sustained-write"
    }
    fn slice_caution(&self) -> Option<&'static str> {
        Some(
            "sustained-write: its intervals are shares of the capacity, 1/f as long on a slice, \
             where the folds and GC batches past the SLC cache are of a fixed size: on slices \
             of 256 blocks per plane the slowest interval ran -12% (PM981a) to +6% (SN850, \
             whose GC phase runs 5.6% faster there) and the average -2.2% to +3.8% (the default \
             drive and the T700 within 0.6%)",
        )
    }
    fn summary(&self) -> &'static str {
        "sequential writes from fresh past the capacity: throughput per interval (SLC cache running out)"
    }
    fn reads_runtime(&self) -> bool {
        false
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Simulated
    }
    fn options(&self) -> &'static [&'static str] {
        &["interval"]
    }
    fn augment_args(&self, cmd: clap::Command) -> clap::Command {
        <SustainedArgs as clap::Args>::augment_args(cmd)
    }
    fn apply_args(&self, m: &clap::ArgMatches, o: &mut SuiteOptions) -> Result<(), SuiteError> {
        flashlab_kit::suite::parse_args::<SustainedArgs>(m)?.apply(o.own_mut())
    }
    fn options_json(&self, o: &SuiteOptions) -> Option<(&'static str, serde_json::Value)> {
        Some((
            "sustained_write",
            o.own::<SustainedOptions>().to_json(o.interval),
        ))
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        run(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_kit::steps::result_value;

    #[test]
    fn slowdown_is_where_an_interval_falls_below_the_share_of_the_first() {
        let pts = [
            (1e9, 1000.0, 1000.0),
            (2e9, 1990.0, 990.0),
            (3e9, 2290.0, 300.0),
            (4e9, 2600.0, 310.0),
        ];
        let (r, charts) = summarise(&pts);
        assert_eq!(
            result_value(&r, "slowdown_at_written_bytes", &[], None),
            Some(1990.0)
        );
        assert_eq!(
            result_value(&r, "last_quarter_bw_bytes_per_s", &[], None),
            Some(310.0)
        );
        assert_eq!(
            result_value(&r, "min_interval_bw_bytes_per_s", &[], None),
            Some(300.0)
        );
        assert_eq!(charts.len(), 2);
        // The last interval before the drive's end takes a sliver left after it.
        assert_eq!(interval_bytes_at(100, 1000), 100);
        assert_eq!(interval_bytes_at(100, 149), 149);
        assert_eq!(interval_bytes_at(100, 150), 100);
        assert_eq!(interval_bytes_at(100, 60), 60);
        let (r, _) = summarise(&pts[..2]);
        assert_eq!(
            result_value(&r, "slowdown_at_written_bytes", &[], None),
            None
        );
    }
}
