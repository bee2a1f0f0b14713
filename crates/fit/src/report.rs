//! The fit's report: on the terminal, the fitted parameters and every compared figure with
//! its error, the fitted and held-out errors; as HTML, the same with charts drawn by the
//! report crate (measured against fitted: the cache cliff, IOPS over depth, the
//! random-write settling, and every job's figure).

use flashlab_report::chart::{Axis, Chart, Series, Unit};
use flashlab_report::html::{render_page, Block, Figure, Page, Section, Table};

use crate::fit::{Compared, Fitted};
use crate::measure::Samples;
use crate::params::{time_text, Cache};

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.1}%", x * 100.0)
    } else {
        "n/a".into()
    }
}

fn value(x: f64) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x.abs() >= 1e6 {
        format!("{x:.4e}")
    } else {
        format!("{x:.0}")
    }
}

/// The fitted parameters, one per line.
pub fn parameter_lines(f: &Fitted) -> Vec<String> {
    let p = &f.params;
    let cache = match p.cache {
        Cache::Dynamic { fraction } => {
            format!("dynamic, at most {fraction:.4} of the free capacity")
        }
        Cache::Static { bytes } => format!("static, {} MiB", bytes >> 20),
    };
    vec![
        format!("dies x planes      {} x {}", p.dies, p.planes),
        format!("t_read             {}", time_text(p.t_read_ns)),
        format!("t_prog             {}", time_text(p.t_prog_ns)),
        format!("slc_t_prog         {}", time_text(p.slc_t_prog_ns)),
        format!("command_overhead   {}", time_text(p.command_overhead_ns)),
        format!(
            "SLC cache          {cache}, {}",
            if p.fold { "fold" } else { "direct" }
        ),
        format!("spare              {:.1}% over user", p.spare * 100.0),
        format!("write buffer       {} KiB", p.buffer_bytes >> 10),
        format!(
            "read priority      {}",
            if p.read_priority { "on" } else { "off" }
        ),
    ]
}

fn rows(compared: &[Compared]) -> Vec<Vec<String>> {
    compared
        .iter()
        .map(|c| {
            vec![
                c.job.clone(),
                c.figure.clone(),
                value(c.measured),
                value(c.fitted),
                pct(c.error()),
                if c.used { "fitted" } else { "held out" }.into(),
            ]
        })
        .collect()
}

const HEADER: [&str; 6] = ["job", "figure", "measured", "fitted", "error", "use"];

/// The terminal summary.
pub fn render_text(f: &Fitted) -> String {
    let mut out = String::from("Fitted parameters\n");
    for l in parameter_lines(f) {
        out.push_str(&format!("  {l}\n"));
    }
    out.push_str("\nMeasured against fitted\n");
    let table = rows(&f.compared);
    let mut widths: Vec<usize> = HEADER.iter().map(|h| h.len()).collect();
    for r in &table {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: Vec<String>| {
        let cells: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("  {}\n", cells.join("  ").trim_end())
    };
    out.push_str(&line(HEADER.iter().map(|h| h.to_string()).collect()));
    for r in table {
        out.push_str(&line(r));
    }
    out.push_str(&format!(
        "\nMean error: fitted jobs {:.1}%, held-out jobs {:.1}%\n",
        f.mean_error(true) * 100.0,
        f.mean_error(false) * 100.0
    ));
    if !f.measured.absent.is_empty() {
        out.push_str(&format!(
            "Not measured: {}\nAt class defaults: {}\n",
            f.measured.absent.join(", "),
            crate::preset::unmeasured_keys(&f.params, &f.measured).join(", ")
        ));
    }
    out
}

fn chart(id: &str, title: &str, x: Axis, y: Axis, series: Vec<(&str, Samples)>) -> Block {
    let series = series
        .into_iter()
        .map(|(name, points)| Series {
            name: name.into(),
            points,
        })
        .collect();
    Block::Figure(Figure::new(Chart {
        id: id.into(),
        title: title.into(),
        x,
        y,
        series,
        band: None,
    }))
}

fn charts(f: &Fitted) -> Vec<Block> {
    let (m, s) = (&f.measured, &f.simulated);
    let depth = |v: &[(u32, f64)]| {
        v.iter()
            .map(|&(q, y)| (f64::from(q), y))
            .collect::<Samples>()
    };
    vec![
        chart(
            "cache-cliff",
            "The whole-capacity write (seq-fill): the SLC cache cliff",
            Axis::linear("written", Unit::Bytes),
            Axis::linear("write rate", Unit::BytesPerS),
            vec![
                ("measured", m.fill.series.clone()),
                ("fitted", s.fill.series.clone()),
            ],
        ),
        chart(
            "iops-over-depth",
            "4 KiB random-read IOPS over queue depth",
            Axis::log("queue depth", Unit::Count),
            Axis::linear("IOPS", Unit::Iops),
            vec![
                ("measured", depth(&m.read_iops)),
                ("fitted", depth(&s.read_iops)),
            ],
        ),
        chart(
            "random-write-settling",
            "4 KiB random writes settling (steady-full, steady-half)",
            Axis::linear("written", Unit::Bytes),
            Axis::linear("IOPS", Unit::Iops),
            vec![
                ("measured, full span", m.steady_full_series.clone()),
                ("fitted, full span", s.steady_full_series.clone()),
                ("measured, half span", m.steady_half_series.clone()),
                ("fitted, half span", s.steady_half_series.clone()),
            ],
        ),
        chart(
            "job-errors",
            "Each figure's error, fitted (used) and held out",
            Axis::linear("figure (table order)", Unit::Count),
            Axis::linear("error", Unit::Percent),
            vec![
                ("fitted", errors(&f.compared, true)),
                ("held out", errors(&f.compared, false)),
            ],
        ),
    ]
}

fn errors(compared: &[Compared], used: bool) -> Samples {
    compared
        .iter()
        .enumerate()
        .filter(|(_, c)| c.used == used && c.error().is_finite())
        .map(|(i, c)| (i as f64 + 1.0, c.error() * 100.0))
        .collect()
}

/// The HTML report; `preset` is the written preset's path, `inputs` the plan directory.
pub fn render_html(f: &Fitted, inputs: &str, preset: &str) -> String {
    let params = Table {
        header: vec!["parameter".into(), "value".into()],
        rows: parameter_lines(f)
            .into_iter()
            .map(|l| {
                let (k, v) = l.split_at(19.min(l.len()));
                vec![k.trim().to_string(), v.trim().to_string()]
            })
            .collect(),
    };
    let compared = Table {
        header: HEADER.iter().map(|h| h.to_string()).collect(),
        rows: rows(&f.compared),
    };
    let summary = format!(
        "Mean error: fitted jobs {:.1}%, held-out jobs {:.1}% (the prediction error on jobs the fit did not use). {} forward-model simulations.",
        f.mean_error(true) * 100.0,
        f.mean_error(false) * 100.0,
        f.simulations
    );
    let page = Page {
        title: format!("flashlab fit: {preset}"),
        intro: vec![format!("Fitted to the plan outputs in {inputs}."), summary],
        sections: vec![
            Section {
                heading: "Fitted parameters".into(),
                blocks: vec![Block::Table(params)],
            },
            Section {
                heading: "Measured against fitted".into(),
                blocks: charts(f),
            },
            Section {
                heading: "Every figure".into(),
                blocks: vec![Block::Table(compared)],
            },
        ],
        footer: Some(format!(
            "flashlab {}: the same plan outputs give the same fit.",
            env!("CARGO_PKG_VERSION")
        )),
    };
    render_page(&page)
}
