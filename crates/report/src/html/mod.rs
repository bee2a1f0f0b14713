//! A self-contained HTML report: a small page model (title, sections of paragraphs, tables
//! and charts) rendered as one file that needs nothing else. Styles and the check script are
//! inline, fonts are generic families, and a Content-Security-Policy forbids fetching
//! anything, so the page reads the same offline, archived or mailed.
//!
//! Charts are SVG drawn with `plotters` ([`draw`]) and inlined. A tiny inline script counts
//! the markers each chart drew against its `data-points` and writes the result into
//! `<output id="chart-check">` (`data-status="ok"` or `"fail"`), so a headless browser can
//! confirm every chart drew its data.
//!
//! Output is a pure function of the page: no timestamps, nothing from the environment.

mod axis;
pub use axis::value_label;
mod draw;

use std::fmt::Write as _;

use crate::chart::Chart;

/// A whole page.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub title: String,
    /// Paragraphs under the title.
    pub intro: Vec<String>,
    pub sections: Vec<Section>,
    /// A last line, e.g. what made the page.
    pub footer: Option<String>,
}

/// A titled part of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub heading: String,
    pub blocks: Vec<Block>,
}

// A page holds tens of blocks, built once: their size does not matter, boxing would only
// add noise where they are built.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A sub-heading inside a section.
    Heading(String),
    /// Plain text; escaped.
    Paragraph(String),
    Table(Table),
    Figure(Figure),
    /// Blocks folded under a one-line summary the reader opens (`<details>`).
    Details {
        summary: String,
        blocks: Vec<Block>,
    },
}

/// A table of text cells. Cells that read as numbers are right-aligned.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A chart and what the page adds to it: shaded x ranges, a note under it, and how it is
/// drawn (lines or grouped bars, named x positions, labelled points, reference series).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub chart: Chart,
    pub bands: Vec<Band>,
    pub note: Option<String>,
    pub kind: FigureKind,
    /// Named x positions (plot space): when not empty, the x axis shows exactly these ticks
    /// and the chart's x values are drawn as given (a category index, a transformed value).
    pub x_ticks: Vec<(f64, String)>,
    /// Per series, a label beside each point (`labels[s][p]`; missing or empty: none).
    pub labels: Vec<Vec<String>>,
    /// Series drawn as the lighter member of a pair: a target beside a measurement (a
    /// published figure), or a second measure of the same drive (a 99th percentile beside
    /// the mean). Lines are dashed with hollow markers, bars outlined.
    pub secondary: Vec<usize>,
    /// Per series, the palette index of its colour (missing: its own index), so the
    /// series of one drive can share a colour.
    pub colours: Vec<usize>,
}

/// How a [`Figure`]'s series are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FigureKind {
    /// Points joined in x order.
    #[default]
    Lines,
    /// A bar per point, the series side by side at each x (a category index with
    /// [`Figure::x_ticks`] naming the categories).
    Bars,
}

/// A shaded x range of a [`Figure`], named in the legend.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// Inclusive x range, in the chart's x units.
    pub from: f64,
    pub to: f64,
    pub label: String,
    /// Shade in the colour of this series (by index); grey when `None`.
    pub series: Option<usize>,
}

impl Figure {
    /// The chart with its own band (if any), shaded grey and labelled with the x axis.
    pub fn new(chart: Chart) -> Self {
        let bands = chart
            .band
            .map(|(from, to)| Band {
                from,
                to,
                label: band_label(&chart.x.label, from, to),
                series: None,
            })
            .into_iter()
            .collect();
        Figure {
            chart,
            bands,
            note: None,
            kind: FigureKind::Lines,
            x_ticks: Vec::new(),
            labels: Vec::new(),
            secondary: Vec::new(),
            colours: Vec::new(),
        }
    }
}

/// "round 2–6": how a band is named in a legend.
pub fn band_label(x_label: &str, from: f64, to: f64) -> String {
    let (a, b) = (axis::format_tick(from), axis::format_tick(to));
    let range = if a == b { a } else { format!("{a}–{b}") };
    if x_label.is_empty() {
        range
    } else {
        format!("{x_label} {range}")
    }
}

/// Text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One chart as a standalone SVG document: the one the page inlines, under its title.
pub fn render_svg(figure: &Figure) -> String {
    draw::titled_svg(figure)
}

const STYLE: &str = r#"
:root { color-scheme: light; }
body { margin: 0; background: #f6f6f4; color: #222; font-family: sans-serif; font-size: 15px; line-height: 1.45; }
main { max-width: 960px; margin: 0 auto; padding: 24px 28px 40px; background: #fff; }
h1 { font-size: 26px; margin: 8px 0 6px; }
h2 { font-size: 20px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 16px; margin: 22px 0 8px; }
p { margin: 6px 0 10px; }
.scroll { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-size: 14px; }
th, td { padding: 4px 12px; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid #bbb; background: #fafafa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 18px 0 26px; }
figcaption { font-weight: bold; margin-bottom: 6px; }
figure p.note { color: #555; font-size: 14px; }
svg.chart { display: block; max-width: 100%; height: auto; }
details { margin: 8px 0 14px; }
summary { cursor: pointer; color: #444; }
footer { margin-top: 36px; color: #777; font-size: 13px; }
"#;

/// Counts each chart's markers (`<circle>`s inside its viewBox) against its `data-points`.
const CHECK_SCRIPT: &str = r#"
(function () {
  var out = document.getElementById('chart-check');
  var charts = document.querySelectorAll('svg[data-chart-id]');
  var failed = 0, lines = [];
  for (var i = 0; i < charts.length; i++) {
    var svg = charts[i];
    var want = parseInt(svg.getAttribute('data-points'), 10);
    var box = svg.viewBox.baseVal;
    var marks = svg.querySelectorAll('circle');
    var inside = 0;
    for (var j = 0; j < marks.length; j++) {
      var x = marks[j].cx.baseVal.value, y = marks[j].cy.baseVal.value;
      if (isFinite(x) && isFinite(y) && x >= 0 && x <= box.width && y >= 0 && y <= box.height) {
        inside++;
      }
    }
    var ok = inside === want && marks.length === want;
    if (!ok) { failed++; }
    lines.push(svg.getAttribute('data-chart-id') + ' ' + inside + '/' + want + (ok ? ' ok' : ' FAIL'));
  }
  out.setAttribute('data-charts', String(charts.length));
  out.setAttribute('data-status', failed === 0 ? 'ok' : 'fail');
  out.textContent = lines.join('\n');
})();
"#;

/// Numbers, and the "-" that stands for a missing one, align right.
fn looks_numeric(cell: &str) -> bool {
    let t = cell.trim_start_matches(['-', '+', '≈', ' ']);
    cell == "-" || t.starts_with(|c: char| c.is_ascii_digit())
}

fn render_table(out: &mut String, t: &Table) {
    out.push_str("<div class=\"scroll\"><table>\n");
    if !t.header.is_empty() {
        out.push_str("<thead><tr>");
        for (i, h) in t.header.iter().enumerate() {
            // A column of numbers has its heading over them, on the right.
            let numeric = i > 0
                && !t.rows.is_empty()
                && t.rows
                    .iter()
                    .all(|r| r.get(i).is_some_and(|c| looks_numeric(c)));
            if numeric {
                let _ = write!(out, "<th class=\"num\">{}</th>", escape(h));
            } else {
                let _ = write!(out, "<th>{}</th>", escape(h));
            }
        }
        out.push_str("</tr></thead>\n");
    }
    out.push_str("<tbody>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            // The first column names the row; only the values align as numbers.
            if i > 0 && looks_numeric(cell) {
                let _ = write!(out, "<td class=\"num\">{}</td>", escape(cell));
            } else {
                let _ = write!(out, "<td>{}</td>", escape(cell));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

fn render_figure(out: &mut String, f: &Figure) {
    let _ = writeln!(
        out,
        "<figure id=\"chart-{}\">\n<figcaption>{}</figcaption>",
        escape(&f.chart.id),
        escape(&f.chart.title)
    );
    out.push_str(&draw::figure_svg(f));
    if let Some(note) = &f.note {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    out.push_str("</figure>\n");
}

fn render_block(out: &mut String, b: &Block) {
    match b {
        Block::Heading(h) => {
            let _ = writeln!(out, "<h3>{}</h3>", escape(h));
        }
        Block::Paragraph(p) => {
            let _ = writeln!(out, "<p>{}</p>", escape(p));
        }
        Block::Table(t) => render_table(out, t),
        Block::Figure(f) => render_figure(out, f),
        Block::Details { summary, blocks } => {
            let _ = writeln!(out, "<details>\n<summary>{}</summary>", escape(summary));
            for b in blocks {
                render_block(out, b);
            }
            out.push_str("</details>\n");
        }
    }
}

/// The page as one HTML document.
pub fn render_page(page: &Page) -> String {
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // Nothing may be fetched: the page must be complete in itself.
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape(&page.title));
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>\n<main>");
    let _ = writeln!(out, "<h1>{}</h1>", escape(&page.title));
    for p in &page.intro {
        let _ = writeln!(out, "<p>{}</p>", escape(p));
    }
    for s in &page.sections {
        let _ = writeln!(out, "<section>\n<h2>{}</h2>", escape(&s.heading));
        for b in &s.blocks {
            render_block(&mut out, b);
        }
        out.push_str("</section>\n");
    }
    if let Some(f) = &page.footer {
        let _ = writeln!(out, "<footer>{}</footer>", escape(f));
    }
    out.push_str("<output id=\"chart-check\" hidden></output>\n");
    let _ = writeln!(out, "<script>{CHECK_SCRIPT}</script>");
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests;
