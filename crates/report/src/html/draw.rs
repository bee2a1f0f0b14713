//! One [`Figure`] as an SVG document, drawn with `plotters`.
//!
//! Every drawable data point is a `<circle>` and nothing else in the SVG is: the page's check
//! script (and a reader of the file) can count what was drawn against the root's
//! `data-points`. Log axes are drawn as linear axes over log10 values (see [`super::axis`]),
//! so every chart has the same coordinate type.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{self, AxisPlan, Tick};
use super::{escape, Figure, FigureKind};

/// Size of the whole SVG when the legend sits on the right.
const WIDTH_PX: u32 = 820;
const PLOT_HEIGHT_PX: u32 = 400;
/// Legend entries are this far apart.
const LEGEND_ROW_PX: i32 = 20;
/// Series names longer than this put the legend under the plot, where it has the full width.
const LEGEND_RIGHT_MAX_CHARS: usize = 30;
/// Average glyph width of the 13 px sans-serif labels, for layout only.
const CHAR_PX: f64 = 7.2;
/// plotters writes a text size of `size / 1.24` px; these give 12.5 px tick labels and
/// 14 px axis titles.
const TICK_FONT: f64 = 15.5;
const TITLE_FONT: f64 = 17.36;
const MARKER_RADIUS_PX: u32 = 3;
/// Share of a category's width its bars fill together.
const BAR_GROUP_WIDTH: f64 = 0.8;
/// plotters size of point and bar labels (11 px).
const LABEL_FONT: f64 = 13.6;

/// Tableau 10: distinct hues that stay apart for common colour-vision deficiencies.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];
const BAND_GREY: RGBColor = RGBColor(0x80, 0x80, 0x80);
const AXIS_COLOUR: RGBColor = RGBColor(0x55, 0x55, 0x55);
const TEXT_COLOUR: RGBColor = RGBColor(0x33, 0x33, 0x33);
const GRID_COLOUR: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const MINOR_GRID_COLOUR: RGBColor = RGBColor(0xef, 0xef, 0xef);

/// The colour of series `i`; past the palette, hues repeat with hollow markers.
fn colour(i: usize) -> (RGBColor, bool) {
    (PALETTE[i % PALETTE.len()], i < PALETTE.len())
}

/// A chart ready to draw: both axes planned, points in plot space, split into runs of
/// drawable points (a value that cannot be drawn breaks the line rather than being joined
/// over).
struct Prepared {
    x: AxisPlan,
    y: AxisPlan,
    /// Per series: runs of consecutive drawable points.
    runs: Vec<Vec<Vec<(f64, f64)>>>,
    /// Plot-space rectangles to shade.
    bands: Vec<Shade>,
    points: usize,
    kind: FigureKind,
    /// Number of series, for the width of each bar in a group.
    series: usize,
    /// Per series, the label of each placed point (parallel to the flattened runs).
    labels: Vec<Vec<String>>,
    /// Per series, whether it is secondary (dashed, hollow, outlined).
    secondary: Vec<bool>,
    /// Per series, its palette index.
    colour: Vec<usize>,
}

/// A shaded band in plot space: its x range, its lane of the y range, its colour.
struct Shade {
    x: (f64, f64),
    y: (f64, f64),
    colour: RGBColor,
}

/// The x axis of a figure with named positions: exactly those ticks, with half a category
/// of room at each end for bars, or the usual margin for lines.
fn named_x_plan(fig: &Figure) -> AxisPlan {
    let positions: Vec<f64> = fig.x_ticks.iter().map(|t| t.0).collect();
    let (lo, hi) = positions
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let pad = match fig.kind {
        FigureKind::Bars => 0.5,
        FigureKind::Lines => ((hi - lo) * 0.04).max(0.05),
    };
    AxisPlan {
        log: false,
        divisor: 1.0,
        title: fig.chart.x.label.clone(),
        lo: lo - pad,
        hi: hi + pad,
        ticks: fig
            .x_ticks
            .iter()
            .map(|(pos, label)| Tick {
                pos: *pos,
                label: label.clone(),
            })
            .collect(),
        minor: Vec::new(),
    }
}

fn prepare(fig: &Figure) -> Prepared {
    let chart = &fig.chart;
    let named = !fig.x_ticks.is_empty();
    let drawable = |p: &(f64, f64)| {
        p.0.is_finite()
            && p.1.is_finite()
            && (named || !chart.x.log || p.0 > 0.0)
            && (!chart.y.log || p.1 > 0.0)
    };
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for s in &chart.series {
        for p in s.points.iter().filter(|p| drawable(p)) {
            xs.push(p.0);
            ys.push(p.1);
        }
    }
    for b in &fig.bands {
        xs.extend([b.from, b.to]);
    }
    // Throughput, IOPS and latency read against zero; an x axis (rounds, depths) does not.
    let x = if named {
        named_x_plan(fig)
    } else {
        axis::plan(&chart.x, &xs, false)
    };
    let y = axis::plan(&chart.y, &ys, true);
    let mut points = 0;
    let mut labels = Vec::with_capacity(chart.series.len());
    let runs = chart
        .series
        .iter()
        .enumerate()
        .map(|(si, s)| {
            let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
            let mut placed_labels = Vec::new();
            for (pi, p) in s.points.iter().enumerate() {
                let placed = drawable(p)
                    .then(|| x.place(p.0).zip(y.place(p.1)))
                    .flatten();
                match placed {
                    Some(q) => {
                        points += 1;
                        placed_labels.push(
                            fig.labels
                                .get(si)
                                .and_then(|l| l.get(pi))
                                .cloned()
                                .unwrap_or_default(),
                        );
                        if let Some(r) = runs.last_mut() {
                            r.push(q);
                        }
                    }
                    None if runs.last().is_some_and(|r| !r.is_empty()) => runs.push(Vec::new()),
                    None => {}
                };
            }
            runs.retain(|r| !r.is_empty());
            labels.push(placed_labels);
            runs
        })
        .collect();
    let min_width = (x.hi - x.lo) * 0.01;
    // Bands of several series each get a lane of the plot's height: overlapping shades
    // would mix into a colour the legend does not show.
    let mut lanes: Vec<usize> = fig.bands.iter().filter_map(|b| b.series).collect();
    lanes.sort_unstable();
    lanes.dedup();
    let lane_h = (y.hi - y.lo) / lanes.len().max(1) as f64;
    let bands = fig
        .bands
        .iter()
        .filter_map(|b| {
            let (a, c) = (x.place(b.from)?, x.place(b.to)?);
            let (a, c) = (a.min(c).max(x.lo), a.max(c).min(x.hi));
            let pad = ((min_width - (c - a)) / 2.0).max(0.0);
            let col = b.series.map_or(BAND_GREY, |i| colour(i).0);
            let (bottom, top) = match b.series.and_then(|i| lanes.iter().position(|&l| l == i)) {
                Some(k) if lanes.len() > 1 => {
                    let k = (lanes.len() - 1 - k) as f64;
                    (y.lo + k * lane_h, y.lo + (k + 1.0) * lane_h)
                }
                _ => (y.lo, y.hi),
            };
            Some(Shade {
                x: (a - pad, c + pad),
                y: (bottom, top),
                colour: col,
            })
        })
        .collect();
    Prepared {
        x,
        y,
        runs,
        bands,
        points,
        kind: fig.kind,
        series: chart.series.len(),
        labels,
        secondary: (0..chart.series.len())
            .map(|i| fig.secondary.contains(&i))
            .collect(),
        colour: (0..chart.series.len())
            .map(|i| fig.colours.get(i).copied().unwrap_or(i))
            .collect(),
    }
}

struct LegendEntry {
    label: String,
    colour: RGBColor,
    filled: bool,
    band: bool,
    /// A bar swatch instead of a line and marker.
    bar: bool,
    /// A dashed line in the swatch.
    dashed: bool,
}

fn legend_entries(fig: &Figure) -> Vec<LegendEntry> {
    let mut entries: Vec<LegendEntry> = fig
        .chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (colour, filled) = colour(fig.colours.get(i).copied().unwrap_or(i));
            let filled = filled && !fig.secondary.contains(&i);
            let label = if s.points.is_empty() {
                format!("{} (no data)", s.name)
            } else {
                s.name.clone()
            };
            LegendEntry {
                label,
                colour,
                filled,
                band: false,
                bar: fig.kind == FigureKind::Bars,
                dashed: fig.secondary.contains(&i),
            }
        })
        .collect();
    for b in &fig.bands {
        entries.push(LegendEntry {
            label: b.label.clone(),
            colour: b.series.map_or(BAND_GREY, |i| colour(i).0),
            filled: true,
            band: true,
            bar: false,
            dashed: false,
        });
    }
    entries
}

/// The chart as an SVG document whose root carries `data-chart-id`, `data-series` and
/// `data-points` (the number of points drawn). Never fails: a drawing error becomes an SVG
/// with a message and `data-points="0"`.
pub(crate) fn figure_svg(fig: &Figure) -> String {
    let (svg, points, _) = plain_svg(fig);
    svg.replacen("<svg ", &root_attrs(fig, points), 1)
}

/// Height of the title band over a standalone chart.
const TITLE_BAND_PX: u32 = 30;

/// The chart as a standalone document: [`figure_svg`] under its title, since a file (or the
/// PNG drawn from it) has no page heading to say what it shows.
pub(crate) fn titled_svg(fig: &Figure) -> String {
    let (inner, points, (width, height)) = plain_svg(fig);
    let total = height + TITLE_BAND_PX;
    // The drawing without its root element, moved down under the title.
    let body_from = inner.find('>').map_or(0, |i| i + 1);
    let body_to = inner.rfind("</svg>").unwrap_or(inner.len()).max(body_from);
    format!(
        "{}width=\"{width}\" height=\"{total}\" viewBox=\"0 0 {width} {total}\" xmlns=\"http://www.w3.org/2000/svg\">\n\
         <rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{total}\" fill=\"#FFFFFF\"/>\n\
         <text x=\"12\" y=\"21\" font-family=\"sans-serif\" font-size=\"16\" font-weight=\"bold\" fill=\"#333333\">{}</text>\n\
         <g transform=\"translate(0,{TITLE_BAND_PX})\">{}</g>\n</svg>\n",
        root_attrs(fig, points),
        escape(&fig.chart.title),
        &inner[body_from..body_to],
    )
}

fn root_attrs(fig: &Figure, points: usize) -> String {
    format!(
        "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" data-chart-id=\"{}\" data-series=\"{}\" data-points=\"{points}\" ",
        escape(&fig.chart.title),
        escape(&fig.chart.id),
        fig.chart.series.len(),
    )
}

/// The drawn chart without its data attributes, the points drawn and its size in px.
fn plain_svg(fig: &Figure) -> (String, usize, (u32, u32)) {
    let prepared = prepare(fig);
    let entries = legend_entries(fig);
    let longest = entries
        .iter()
        .map(|e| e.label.chars().count())
        .max()
        .unwrap_or(0);
    let legend_right = longest <= LEGEND_RIGHT_MAX_CHARS;
    let legend_w = (46.0 + longest as f64 * CHAR_PX).ceil() as u32;
    let rows = entries.len() as u32;
    let (width, height) = if legend_right {
        (
            WIDTH_PX,
            PLOT_HEIGHT_PX.max(30 + rows * LEGEND_ROW_PX as u32),
        )
    } else {
        (WIDTH_PX, PLOT_HEIGHT_PX + 16 + rows * LEGEND_ROW_PX as u32)
    };
    let mut svg = String::new();
    let drawn = draw(
        &mut svg,
        (width, height),
        &prepared,
        &entries,
        legend_right.then_some(legend_w),
    );
    match drawn {
        Ok(()) => (svg, prepared.points, (width, height)),
        Err(e) => (
            format!(
                "<svg width=\"{WIDTH_PX}\" height=\"40\" viewBox=\"0 0 {WIDTH_PX} 40\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"25\">chart not drawn: {}</text></svg>",
                escape(&e)
            ),
            0,
            (WIDTH_PX, 40),
        ),
    }
}

/// A linear plot-space coordinate whose grid lines are the plan's ticks (bold, labelled) and
/// minor lines (light), instead of plotters' own choice.
struct Scale {
    lo: f64,
    hi: f64,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl Scale {
    fn new(plan: &AxisPlan) -> Self {
        Scale {
            lo: plan.lo,
            hi: plan.hi,
            major: plan.ticks.iter().map(|t| t.pos).collect(),
            minor: plan.minor.clone(),
        }
    }
}

impl Ranged for Scale {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let share = if span > 0.0 {
            (value - self.lo) / span
        } else {
            0.5
        };
        let px = f64::from(limit.1 - limit.0) * share;
        limit.0 + px.round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.major.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// Smallest gap between two tick labels, px.
const TICK_GAP_PX: f64 = 6.0;

/// The ticks with the labels that would touch a neighbour's left blank (the tick and its
/// grid line stay): kept from the right, where a percentile axis crowds its tail values
/// least and a reader looks for them, so "0" gives way to "50" rather than overprinting it.
fn spaced_labels(ticks: &[Tick], lo: f64, hi: f64, plot_px: f64) -> Vec<Tick> {
    let px_per_unit = if hi > lo { plot_px / (hi - lo) } else { 0.0 };
    let half_w = |t: &Tick| t.label.chars().count() as f64 * CHAR_PX / 2.0;
    let mut order: Vec<usize> = (0..ticks.len()).collect();
    order.sort_by(|&a, &b| ticks[b].pos.total_cmp(&ticks[a].pos));
    let mut kept: Vec<&Tick> = Vec::new();
    let mut out = ticks.to_vec();
    for i in order {
        let t = &ticks[i];
        let clear = kept
            .iter()
            .all(|k| (k.pos - t.pos).abs() * px_per_unit >= half_w(k) + half_w(t) + TICK_GAP_PX);
        if clear || t.label.is_empty() {
            kept.push(t);
        } else {
            out[i].label.clear();
        }
    }
    out
}

fn label_for(ticks: &[Tick], pos: f64) -> String {
    ticks
        .iter()
        .find(|t| (t.pos - pos).abs() < 1e-9)
        .map_or_else(String::new, |t| t.label.clone())
}

fn draw(
    out: &mut String,
    size: (u32, u32),
    p: &Prepared,
    entries: &[LegendEntry],
    legend_right: Option<u32>,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let root = SVGBackend::with_string(out, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (plot_area, legend_area) = match legend_right {
        Some(w) => root.split_horizontally(size.0 - w),
        None => root.split_vertically(PLOT_HEIGHT_PX),
    };
    let tick_font = ("sans-serif", TICK_FONT).into_font().color(&TEXT_COLOUR);
    let title_font = ("sans-serif", TITLE_FONT).into_font().color(&TEXT_COLOUR);
    let widest_y =
        p.y.ticks
            .iter()
            .map(|t| t.label.chars().count())
            .max()
            .unwrap_or(1);
    let y_label_px = (36.0 + widest_y as f64 * CHAR_PX).ceil() as u32;

    let plot_px =
        f64::from(size.0) - f64::from(legend_right.unwrap_or(0)) - f64::from(y_label_px) - 32.0;
    let x_ticks = spaced_labels(&p.x.ticks, p.x.lo, p.x.hi, plot_px);
    let x_range = Scale::new(&p.x);
    let y_range = Scale::new(&p.y);
    let mut chart = ChartBuilder::on(&plot_area)
        .margin_top(16)
        .margin_right(if legend_right.is_some() { 8 } else { 24 })
        .margin_left(8)
        .margin_bottom(4)
        .x_label_area_size(52)
        .y_label_area_size(y_label_px)
        .build_cartesian_2d(x_range, y_range)
        .map_err(|e| err(&e))?;
    let fx = |v: &f64| label_for(&x_ticks, *v);
    let fy = |v: &f64| label_for(&p.y.ticks, *v);
    chart
        .configure_mesh()
        .x_desc(p.x.title.as_str())
        .y_desc(p.y.title.as_str())
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .label_style(tick_font.clone())
        .axis_desc_style(title_font)
        .bold_line_style(GRID_COLOUR)
        .light_line_style(MINOR_GRID_COLOUR)
        .axis_style(AXIS_COLOUR)
        .draw()
        .map_err(|e| err(&e))?;

    for b in &p.bands {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(b.x.0, b.y.0), (b.x.1, b.y.1)],
                b.colour.mix(0.14).filled(),
            )))
            .map_err(|e| err(&e))?;
    }
    if p.kind == FigureKind::Bars {
        draw_bars(&mut chart, p)?;
    }
    if p.kind != FigureKind::Bars {
        draw_lines(&mut chart, p)?;
    }
    draw_legend(&legend_area, entries, legend_right, y_label_px, tick_font)?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

type Plot<'a> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<Scale, Scale>>;

/// Each series as a line (dashed for a secondary one) through its points, with the points'
/// markers and labels.
fn draw_lines(chart: &mut Plot<'_>, p: &Prepared) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    for (i, runs) in p.runs.iter().enumerate() {
        let (col, filled) = colour(p.colour[i]);
        let filled = filled && !p.secondary[i];
        for run in runs.iter().filter(|r| r.len() >= 2) {
            if p.secondary[i] {
                chart
                    .draw_series(DashedLineSeries::new(
                        run.iter().copied(),
                        6,
                        4,
                        col.stroke_width(2),
                    ))
                    .map_err(|e| err(&e))?;
            } else {
                chart
                    .draw_series(LineSeries::new(run.iter().copied(), col.stroke_width(2)))
                    .map_err(|e| err(&e))?;
            }
        }
        let marker = if filled {
            col.filled()
        } else {
            col.stroke_width(2)
        };
        chart
            .draw_series(
                runs.iter()
                    .flatten()
                    .map(|&q| Circle::new(q, MARKER_RADIUS_PX, marker)),
            )
            .map_err(|e| err(&e))?;
    }
    draw_point_labels(chart, p)
}

/// Width of a character of the 11 px point labels, px, for layout only.
const LABEL_CHAR_PX: i32 = 7;
const LABEL_HEIGHT_PX: i32 = 12;

/// Each point's label beside it, at the first of four places (right above, right below, left
/// above, left below) that touches no label already placed; a label with no free place is
/// left out rather than printed over another ("QD1" of two drives at one point).
fn draw_point_labels(chart: &mut Plot<'_>, p: &Prepared) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let label_font = ("sans-serif", LABEL_FONT).into_font().color(&TEXT_COLOUR);
    let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
    let mut texts = Vec::new();
    for (i, runs) in p.runs.iter().enumerate() {
        for (&q, l) in runs.iter().flatten().zip(&p.labels[i]) {
            if l.is_empty() {
                continue;
            }
            let (px, py) = chart.backend_coord(&q);
            let w = l.chars().count() as i32 * LABEL_CHAR_PX;
            let spots = [(5, -14), (5, 4), (-5 - w, -14), (-5 - w, 4)];
            let free = spots.into_iter().find(|&(dx, dy)| {
                let b = (px + dx, py + dy, px + dx + w, py + dy + LABEL_HEIGHT_PX);
                placed
                    .iter()
                    .all(|o| b.2 <= o.0 || o.2 <= b.0 || b.3 <= o.1 || o.3 <= b.1)
            });
            if let Some((dx, dy)) = free {
                placed.push((px + dx, py + dy, px + dx + w, py + dy + LABEL_HEIGHT_PX));
                texts.push((q, l.clone(), (dx, dy)));
            }
        }
    }
    chart
        .draw_series(
            texts
                .into_iter()
                .map(|(q, l, off)| EmptyElement::at(q) + Text::new(l, off, label_font.clone())),
        )
        .map_err(|e| err(&e))?;
    Ok(())
}

/// The legend: a short line and a square per series (no circles: those are data), a swatch
/// per band, outside the plot so it never covers data.
fn draw_legend(
    legend_area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    entries: &[LegendEntry],
    legend_right: Option<u32>,
    y_label_px: u32,
    tick_font: TextStyle<'_>,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let text_font = tick_font.pos(Pos::new(HPos::Left, VPos::Center));
    let (x0, y0) = match legend_right {
        Some(_) => (4, 30),
        None => (y_label_px as i32 + 8, 16),
    };
    for (n, e) in entries.iter().enumerate() {
        let y = y0 + n as i32 * LEGEND_ROW_PX;
        if e.bar {
            let swatch = if e.filled {
                e.colour.filled()
            } else {
                e.colour.stroke_width(2)
            };
            legend_area
                .draw(&Rectangle::new([(x0 + 5, y - 6), (x0 + 19, y + 6)], swatch))
                .map_err(|e| err(&e))?;
        } else if e.band {
            legend_area
                .draw(&Rectangle::new(
                    [(x0, y - 6), (x0 + 24, y + 6)],
                    e.colour.mix(0.25).filled(),
                ))
                .map_err(|e| err(&e))?;
        } else {
            let segments: &[(i32, i32)] = if e.dashed {
                &[(0, 7), (17, 24)]
            } else {
                &[(0, 24)]
            };
            for &(a, b) in segments {
                legend_area
                    .draw(&PathElement::new(
                        vec![(x0 + a, y), (x0 + b, y)],
                        e.colour.stroke_width(2),
                    ))
                    .map_err(|e| err(&e))?;
            }
            let square = if e.filled {
                e.colour.filled()
            } else {
                e.colour.stroke_width(2)
            };
            legend_area
                .draw(&Rectangle::new([(x0 + 9, y - 3), (x0 + 15, y + 3)], square))
                .map_err(|e| err(&e))?;
        }
        legend_area
            .draw(&Text::new(e.label.clone(), (x0 + 32, y), text_font.clone()))
            .map_err(|e| err(&e))?;
    }
    Ok(())
}

/// Grouped bars: at each category the series side by side, from zero to the value, with the
/// value's label above. Each bar's top carries a zero-radius `<circle>`, so the bars are
/// counted like any chart's points; a reference series is drawn in outline.
fn draw_bars(chart: &mut Plot<'_>, p: &Prepared) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let width = BAR_GROUP_WIDTH / p.series.max(1) as f64;
    let base = 0f64.clamp(p.y.lo, p.y.hi);
    let label_font = ("sans-serif", LABEL_FONT)
        .into_font()
        .color(&TEXT_COLOUR)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    for (i, runs) in p.runs.iter().enumerate() {
        let (col, _) = colour(p.colour[i]);
        let offset = -BAR_GROUP_WIDTH / 2.0 + (i as f64 + 0.5) * width;
        let bars: Vec<(f64, f64)> = runs
            .iter()
            .flatten()
            .map(|&(x, y)| (x + offset, y))
            .collect();
        let style = if p.secondary[i] {
            col.stroke_width(2)
        } else {
            col.filled()
        };
        let half = width * 0.45;
        chart
            .draw_series(
                bars.iter()
                    .map(|&(x, y)| Rectangle::new([(x - half, base), (x + half, y)], style)),
            )
            .map_err(|e| err(&e))?;
        chart
            .draw_series(bars.iter().map(|&q| Circle::new(q, 0, col.filled())))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(
                bars.iter()
                    .zip(&p.labels[i])
                    .filter(|(_, l)| !l.is_empty())
                    .map(|(&q, l)| {
                        EmptyElement::at(q) + Text::new(l.clone(), (0, -3), label_font.clone())
                    }),
            )
            .map_err(|e| err(&e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowded_tick_labels_give_way_from_the_left() {
        let tick = |pos: f64, label: &str| Tick {
            pos,
            label: label.into(),
        };
        // A percentile axis: "0" at 0 and "50" at 0.301 of a 4.5-wide axis over 600 px sit
        // 40 px apart centre to centre, too close for their 7 + 14 px halves plus the gap.
        let ticks = [
            tick(0.0, "0"),
            tick(0.301, "50"),
            tick(1.0, "90"),
            tick(2.0, "99"),
            tick(3.0, "99.9"),
        ];
        let labels: Vec<String> = spaced_labels(&ticks, -0.1, 4.4, 150.0)
            .into_iter()
            .map(|t| t.label)
            .collect();
        assert_eq!(labels, ["", "50", "90", "99", "99.9"]);
        let roomy: Vec<String> = spaced_labels(&ticks, -0.1, 4.4, 2000.0)
            .into_iter()
            .map(|t| t.label)
            .collect();
        assert_eq!(roomy, ["0", "50", "90", "99", "99.9"]);
    }
}
