//! Charts as data: what a suite or a run asks a report to draw, with no styling. The HTML
//! report ([`crate::html`]) draws them; the JSON reports carry them as numbers.

/// How a measured value is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    BytesPerS,
    Iops,
    Ns,
    /// A plain number (a round, a count).
    Count,
    /// A dimensionless ratio shown with decimals (write amplification, years, DWPD).
    Ratio,
    /// Bytes (data written, capacity).
    Bytes,
    /// A percentage (0 to 100).
    Percent,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::BytesPerS => "B/s",
            Unit::Iops => "IOPS",
            Unit::Ns => "ns",
            Unit::Count | Unit::Ratio => "",
            Unit::Bytes => "B",
            Unit::Percent => "%",
        }
    }
}

/// One axis of a [`Chart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What is plotted, without the unit (e.g. "queue depth").
    pub label: String,
    pub unit: Unit,
    /// Logarithmic scale (latency percentiles, transfer sizes).
    pub log: bool,
}

impl Axis {
    pub fn linear(label: impl Into<String>, unit: Unit) -> Self {
        Self {
            label: label.into(),
            unit,
            log: false,
        }
    }
    pub fn log(label: impl Into<String>, unit: Unit) -> Self {
        Self {
            label: label.into(),
            unit,
            log: true,
        }
    }
}

/// One line of a [`Chart`]: points in x order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A chart to draw: data only, no styling. Charts with the same `id` on several devices are
/// drawn together for comparison, each series named after its device.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Stable key within the suite, e.g. `steady-rounds`.
    pub id: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// An x range to mark (the steady-state window), inclusive.
    pub band: Option<(f64, f64)>,
}
