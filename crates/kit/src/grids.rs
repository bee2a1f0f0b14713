//! Results laid out as grids. A suite's results come in families on typed rows: a row per
//! queue depth, block size, step or power state and the same figures in each (IOPS, latency
//! percentiles, bandwidth). The key list keeps every result greppable; a grid shows one
//! family the way reviewers tabulate it (the SNIA PTS IOPS matrix, QoS per queue depth).
//! Grids are data, each suite's in its own module (built from the parts here): the axes of a
//! row, the columns, and how a row is labelled; the rows are found among the results, so a
//! grid follows the options (depths, steps, block sizes) and shows nothing when its family is
//! absent.

use crate::measure::{Coord, Dim, Measure};

/// One family of results as rows and columns (a suite lists its own, [`crate::Suite::grids`]).
pub struct GridSpec {
    pub title: &'static str,
    /// Heading of the row labels' column.
    pub row_header: &'static str,
    /// The axes of a result's row, outermost first: a result belongs when its row lies on
    /// exactly these.
    pub dims: &'static [Dim],
    pub cols: Cols,
    pub row_label: fn(&[Coord]) -> String,
}

/// What the columns of a grid are.
pub enum Cols {
    /// A column per figure: (label, family, the family's own axis value).
    Figures(&'static [(&'static str, &'static str, Option<Coord>)]),
    /// A column per value of the row's first axis, all of one family (the PTS IOPS matrix: a
    /// column per mix, a row per block size).
    First {
        family: &'static str,
        cols: &'static [(&'static str, Coord)],
    },
    /// A row per family, a column per value of the row's one axis (a health log before and
    /// after).
    Families(&'static [(&'static str, Coord)]),
}

/// A grid row: its axis values, or the family a [`Cols::Families`] row shows.
#[derive(Debug, Clone, PartialEq)]
pub enum RowKey {
    Coords(Vec<Coord>),
    Family(&'static str),
}

impl GridSpec {
    /// The row and column (index into the columns) of `m`, if it is one of this family's.
    pub fn place(&self, m: &Measure) -> Option<(RowKey, usize)> {
        if m.row.len() != self.dims.len() || m.row.iter().zip(self.dims).any(|(c, &d)| c.dim() != d)
        {
            return None;
        }
        match self.cols {
            Cols::Figures(cols) => cols
                .iter()
                .position(|&(_, f, c)| m.family == f && m.col == c)
                .map(|i| (RowKey::Coords(m.row.clone()), i)),
            Cols::First { family, cols } => {
                if m.family != family || m.col.is_some() {
                    return None;
                }
                let i = cols.iter().position(|(_, c)| *c == m.row[0])?;
                Some((RowKey::Coords(m.row[1..].to_vec()), i))
            }
            Cols::Families(cols) => {
                if m.col.is_some() {
                    return None;
                }
                let i = cols.iter().position(|(_, c)| *c == m.row[0])?;
                Some((RowKey::Family(m.family), i))
            }
        }
    }

    pub fn col_labels(&self) -> Vec<&'static str> {
        match self.cols {
            Cols::Figures(cols) => cols.iter().map(|c| c.0).collect(),
            Cols::First { cols, .. } | Cols::Families(cols) => cols.iter().map(|c| c.0).collect(),
        }
    }

    pub fn label(&self, row: &RowKey) -> String {
        match row {
            RowKey::Coords(coords) => (self.row_label)(coords),
            RowKey::Family(f) => f.to_string(),
        }
    }
}

/// The row as its key spells it, spaced: `pass1 desktop seq1m q8t1`.
pub fn spaced(row: &[Coord]) -> String {
    row.iter()
        .map(Coord::key)
        .collect::<Vec<_>>()
        .join(" ")
        .replace('_', " ")
}

/// The row's values: `8` for queue depth 8, `4k`.
pub fn values(row: &[Coord]) -> String {
    row.iter().map(Coord::value).collect::<Vec<_>>().join(", ")
}

/// `65/35, 4k`.
pub fn mix_block_label(row: &[Coord]) -> String {
    row.iter()
        .map(|c| match *c {
            Coord::Mix(r) => format!("{r}/{}", 100 - r),
            c => c.value(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Extra spare as its key spells it, without `op`: `10`, `2_5`.
pub fn op_label(row: &[Coord]) -> String {
    row.iter()
        .map(|c| c.key().trim_start_matches("op").to_string())
        .collect()
}

pub const READ_WRITE_BW_IOPS: &[(&str, &str, Option<Coord>)] = &[
    ("read", "read_bw_bytes_per_s", None),
    ("read IOPS", "read_iops", None),
    ("write", "write_bw_bytes_per_s", None),
    ("write IOPS", "write_iops", None),
];

pub const P99: Option<Coord> = Some(Coord::Percentile(99.0));
pub const P99_9: Option<Coord> = Some(Coord::Percentile(99.9));
pub const P99_99: Option<Coord> = Some(Coord::Percentile(99.99));
pub const P99_999: Option<Coord> = Some(Coord::Percentile(99.999));
pub const P99_9999: Option<Coord> = Some(Coord::Percentile(99.9999));
