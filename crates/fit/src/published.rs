//! Published figures of a drive (a review's or a data sheet's) read as a partial measurement
//! set. Each figure names the plan job it is a measurement of and the condition it was
//! measured in (pattern, block size, I/Os in flight, drive state); a figure whose condition
//! is not its job's is refused, since a figure of another condition is not a measurement of
//! the job. Every job without a figure is absent, and every figure of a job that a published
//! set leaves out stays unmeasured (NaN), so the fit uses only what the figures say.
//!
//! The forward model simulates the plan on a slice of the drive (at most [`SLICE_BYTES`]):
//! rates and IOPS are the slice's as they are the drive's (the same dies, the same
//! timings), sizes (the SLC cache) are scaled to the slice, and the fitted drive is
//! scaled back to the published capacity.

use std::path::Path;

use flashlab_device::{Provenance, ProvenanceMap};

use crate::fit::Fitted;
use crate::measure::Figures;
use crate::params::{class, Cache, Params};
use crate::plan::{Plan, READ_BLOCKS_KIB, READ_DEPTHS};
use crate::FitError;

/// The format tag a published set's `format` key must carry.
pub const FORMAT: &str = "flashlab-fit-published 1";
/// Largest published set read.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Most figures a set may hold (the plan has 25 jobs of a few figures each).
pub const MAX_FIGURES: usize = 64;
/// The capacity of the slice the forward model simulates: the plan's whole-capacity jobs
/// on a multi-terabyte drive would take days of simulation.
pub const SLICE_BYTES: u64 = 2 << 30;

/// The drive states a figure may be measured in.
pub const STATES: [&str; 3] = ["fresh", "full", "steady"];

/// What a plan job's figure is and the condition its job measures in.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub job: String,
    pub figure: &'static str,
    pub unit: &'static str,
    pub pattern: &'static str,
    pub block_kib: u32,
    pub depth: u32,
    pub state: &'static str,
}

/// Every (job, figure) a published set may give, with its job's condition.
pub fn accepted() -> Vec<Accepted> {
    let a = |job: String, figure, unit, pattern, block_kib, depth, state| Accepted {
        job,
        figure,
        unit,
        pattern,
        block_kib,
        depth,
        state,
    };
    let fill = |figure, unit| {
        a(
            "seq-fill".into(),
            figure,
            unit,
            "sequential write",
            128,
            32,
            "fresh",
        )
    };
    let mut v = vec![
        fill("in-cache rate", "MB/s"),
        fill("post-cache rate", "MB/s"),
        fill("cache size", "GB"),
        a(
            "qd1-write".into(),
            "IOPS",
            "IOPS",
            "sequential write",
            4,
            1,
            "fresh",
        ),
    ];
    for qd in READ_DEPTHS {
        let job = format!("randread-qd{qd}");
        v.push(a(job, "IOPS", "IOPS", "random read", 4, qd, "full"));
    }
    for kib in READ_BLOCKS_KIB {
        let job = format!("randread-bs{kib}k");
        v.push(a(job, "rate", "MB/s", "random read", kib, 32, "full"));
    }
    v.push(a(
        "seq-read".into(),
        "rate",
        "MB/s",
        "sequential read",
        128,
        32,
        "full",
    ));
    v.push(a(
        "steady-full".into(),
        "IOPS",
        "IOPS",
        "random write",
        4,
        32,
        "steady",
    ));
    v
}

/// One published figure, checked against its job.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub job: String,
    pub figure: String,
    pub value: f64,
    pub unit: String,
    pub source: String,
    /// The set's line of its `[[figure]]`.
    pub line: usize,
}

impl Figure {
    /// "seq-fill in-cache rate 2200 MB/s (source)".
    pub fn text(&self) -> String {
        format!(
            "{} {} {} {} ({})",
            self.job, self.figure, self.value, self.unit, self.source
        )
    }
}

/// A published set: the drive, its capacity and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub drive: String,
    pub capacity_bytes: u64,
    pub figures: Vec<Figure>,
}

/// 1-based line of the `n`th `[[figure]]` header, or of its `key` when the entry has it.
fn line_of(text: &str, n: Option<usize>, key: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim() == "[[figure]]")
        .collect();
    let (from, to) = match n {
        None => (0, starts.first().copied().unwrap_or(lines.len())),
        Some(n) => match starts.get(n) {
            Some(&s) => (s, starts.get(n + 1).copied().unwrap_or(lines.len())),
            None => return 1,
        },
    };
    let is_key = |l: &str| {
        l.trim_start()
            .strip_prefix(key)
            .is_some_and(|r| r.trim_start().starts_with('='))
    };
    (from..to)
        .find(|&i| is_key(lines[i]))
        .unwrap_or(n.map_or(0, |_| from))
        + 1
}

/// Reads a published set from `path`.
pub fn read_published(path: &Path) -> Result<Published, FitError> {
    let text = flashlab_engine::input::read_text(path, MAX_FILE_BYTES, "a published set")
        .map_err(|e| FitError::bad(path.display(), e))?;
    parse_published(&path.display().to_string(), &text)
}

/// Parses a published set's text; `place` names it in errors.
pub fn parse_published(place: &str, text: &str) -> Result<Published, FitError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        FitError::bad(
            format!("{place}:{line}"),
            format!("not TOML: {}", e.message()),
        )
    })?;
    let bad = |n: Option<usize>, key: &str, msg: String| {
        FitError::bad(format!("{place}:{}", line_of(text, n, key)), msg)
    };
    for key in table.keys() {
        if !["format", "drive", "capacity", "figure"].contains(&key.as_str()) {
            return Err(bad(
                None,
                key,
                format!("{key}: unknown key; a published set has format, drive, capacity and [[figure]] entries"),
            ));
        }
    }
    let string = |t: &toml::Table, n: Option<usize>, key: &str| -> Result<String, FitError> {
        match t.get(key) {
            Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err(bad(n, key, format!("{key}: expected a non-empty string"))),
        }
    };
    let format = string(&table, None, "format")?;
    if format != FORMAT {
        return Err(bad(
            None,
            "format",
            format!("format {format:?}: expected {FORMAT:?}"),
        ));
    }
    let drive = string(&table, None, "drive")?;
    let capacity = string(&table, None, "capacity")?;
    let capacity_bytes = flashlab_device::units::parse_size(&capacity)
        .map_err(|e| bad(None, "capacity", format!("capacity {capacity:?}: {e}")))?;
    Plan::new(capacity_bytes).map_err(|e| bad(None, "capacity", e.message))?;
    let entries = match table.get("figure") {
        Some(toml::Value::Array(a)) if !a.is_empty() => a,
        _ => {
            return Err(bad(
                None,
                "figure",
                "expected [[figure]] entries: a published set gives at least one figure".into(),
            ))
        }
    };
    let figures = parse_figures(entries, text, &bad, &string)?;
    Ok(Published {
        drive,
        capacity_bytes,
        figures,
    })
}

type LineBadFn<'a> = dyn Fn(Option<usize>, &str, String) -> FitError + 'a;

/// The `[[figure]]` entries, each checked, none given twice.
fn parse_figures(
    entries: &[toml::Value],
    text: &str,
    bad: &LineBadFn<'_>,
    string: &StringFn<'_>,
) -> Result<Vec<Figure>, FitError> {
    if entries.len() > MAX_FIGURES {
        return Err(bad(
            Some(MAX_FIGURES),
            "job",
            format!(
                "{} figures: a set holds at most {MAX_FIGURES}",
                entries.len()
            ),
        ));
    }
    let mut figures: Vec<Figure> = Vec::new();
    for (n, entry) in entries.iter().enumerate() {
        let Some(t) = entry.as_table() else {
            return Err(bad(Some(n), "", "expected a [[figure]] table".into()));
        };
        let f = parse_figure(t, n, &|k: &str, m: String| bad(Some(n), k, m), string)?;
        if let Some(d) = figures
            .iter()
            .find(|d| d.job == f.job && d.figure == f.figure)
        {
            return Err(bad(
                Some(n),
                "figure",
                format!(
                    "{} {}: given twice (line {} gives it too); one figure per job's figure",
                    f.job, f.figure, d.line
                ),
            ));
        }
        figures.push(Figure {
            line: line_of(text, Some(n), ""),
            ..f
        });
    }
    Ok(figures)
}

type BadFn<'a> = dyn Fn(&str, String) -> FitError + 'a;
type StringFn<'a> = dyn Fn(&toml::Table, Option<usize>, &str) -> Result<String, FitError> + 'a;

const FIGURE_KEYS: [&str; 9] = [
    "job", "figure", "value", "unit", "pattern", "block", "depth", "state", "source",
];

/// One `[[figure]]` entry, its condition checked against its job's.
fn parse_figure(
    t: &toml::Table,
    n: usize,
    bad: &BadFn<'_>,
    string: &StringFn<'_>,
) -> Result<Figure, FitError> {
    if let Some(k) = t.keys().find(|k| !FIGURE_KEYS.contains(&k.as_str())) {
        return Err(bad(
            k,
            format!("{k}: unknown key; a figure has {}", FIGURE_KEYS.join(", ")),
        ));
    }
    let job = string(t, Some(n), "job")?;
    let figure = string(t, Some(n), "figure")?;
    let all = accepted();
    let of_job: Vec<&Accepted> = all.iter().filter(|a| a.job == job).collect();
    if of_job.is_empty() {
        let mut jobs: Vec<&str> = all.iter().map(|a| a.job.as_str()).collect();
        jobs.dedup();
        return Err(bad(
            "job",
            format!(
                "job {job:?}: a published figure is of one of the plan's jobs {}",
                jobs.join(", ")
            ),
        ));
    }
    let Some(a) = of_job.iter().find(|a| a.figure == figure) else {
        let names: Vec<&str> = of_job.iter().map(|a| a.figure).collect();
        return Err(bad(
            "figure",
            format!(
                "figure {figure:?}: {job}'s figures are {}",
                names.join(", ")
            ),
        ));
    };
    let value = match t.get("value") {
        Some(toml::Value::Integer(i)) => *i as f64,
        Some(toml::Value::Float(x)) => *x,
        _ => f64::NAN,
    };
    if !(value.is_finite() && value > 0.0 && value < 1e15) {
        return Err(bad(
            "value",
            "value: expected a positive number".to_string(),
        ));
    }
    let unit = string(t, Some(n), "unit")?;
    if unit != a.unit {
        return Err(bad(
            "unit",
            format!("unit {unit:?}: {job} {figure} is in {}", a.unit),
        ));
    }
    check_condition(t, a, bad, string, n)?;
    Ok(Figure {
        job,
        figure,
        value,
        unit,
        source: string(t, Some(n), "source")?,
        line: 0,
    })
}

/// The figure's condition must be its job's: pattern, block size, I/Os in flight, state.
fn check_condition(
    t: &toml::Table,
    a: &Accepted,
    bad: &BadFn<'_>,
    string: &StringFn<'_>,
    n: usize,
) -> Result<(), FitError> {
    let condition = format!(
        "{} is a {} of {} KiB at {} I/Os in flight on a {} drive",
        a.job, a.pattern, a.block_kib, a.depth, a.state
    );
    let unlike = |key: &str, given: String| {
        bad(
            key,
            format!("{key} {given}: {condition}; a figure of another condition is not a measurement of the job"),
        )
    };
    let pattern = string(t, Some(n), "pattern")?;
    if pattern != a.pattern {
        return Err(unlike("pattern", format!("{pattern:?}")));
    }
    let block = string(t, Some(n), "block")?;
    let block_bytes = flashlab_device::units::parse_size(&block)
        .map_err(|e| bad("block", format!("block {block:?}: {e}")))?;
    if block_bytes != u64::from(a.block_kib) << 10 {
        return Err(unlike("block", format!("{block:?}")));
    }
    let depth = t.get("depth").and_then(toml::Value::as_integer);
    match depth {
        Some(d) if d == i64::from(a.depth) => {}
        Some(d) => return Err(unlike("depth", d.to_string())),
        None => {
            return Err(bad(
                "depth",
                "depth: expected the I/Os in flight, an integer (QD32 x 4 jobs is 128)".into(),
            ))
        }
    }
    let state = string(t, Some(n), "state")?;
    if !STATES.contains(&state.as_str()) {
        return Err(bad(
            "state",
            format!(
                "state {state:?}: expected one of {} (trimmed or new; written once sequentially over the whole capacity; random writes over the whole span until the rate settles)",
                STATES.join(", ")
            ),
        ));
    }
    if state != a.state {
        return Err(unlike("state", format!("{state:?}")));
    }
    Ok(())
}

impl Published {
    /// The capacity the forward model simulates: the drive's, at most [`SLICE_BYTES`].
    pub fn slice_bytes(&self) -> u64 {
        self.capacity_bytes.min(SLICE_BYTES)
    }

    /// How many of the plan's jobs the figures measure.
    pub fn jobs(&self) -> usize {
        let mut jobs: Vec<&str> = self.figures.iter().map(|f| f.job.as_str()).collect();
        jobs.sort_unstable();
        jobs.dedup();
        jobs.len()
    }

    /// Slice bytes per drive byte.
    fn scale(&self) -> f64 {
        self.slice_bytes() as f64 / self.capacity_bytes as f64
    }

    /// The plan of the slice, whose jobs the forward model runs. Its fill logs the rate
    /// finely enough to see a published cache: the plan's log takes a fixed count of
    /// samples over the capacity, so a cache of a few percent of a fast drive fills within
    /// one or two of them, and the rate before the fall could not be read from the
    /// simulated log. A sixteenth of the cache (published, or the class's) at the published
    /// in-cache rate (or the fastest class rate, 8 GB/s) per sample.
    pub fn plan(&self) -> Result<Plan, FitError> {
        let mut plan = Plan::new(self.slice_bytes())?;
        let published = |figure: &str| {
            self.figures
                .iter()
                .find(|f| f.job == "seq-fill" && f.figure == figure)
                .map(|f| f.value)
        };
        // Unpublished, the cache is the class's share of the slice's free capacity.
        let cache_bytes = published("cache size").map_or(
            class::CACHE_FRACTION * self.slice_bytes() as f64 / class::BITS_PER_CELL as f64,
            |gb| gb * 1e9 * self.scale(),
        );
        let rate_bytes_s = published("in-cache rate").map_or(8e9, |mb_s| mb_s * 1e6);
        let coarse = crate::plan::fill_log_msec(plan.capacity_bytes);
        let msec = ((cache_bytes / rate_bytes_s * 1e3 / 16.0) as u64).clamp(1, coarse);
        if let Some(job) = plan.jobs.iter_mut().find(|j| j.name == "seq-fill") {
            job.text = job.text.replace(
                &format!("log_avg_msec={coarse}\n"),
                &format!("log_avg_msec={msec}\n"),
            );
        }
        Ok(plan)
    }

    /// The figures as the plan's outputs of the slice would give them: sizes scaled to the
    /// slice; every figure not published unmeasured (NaN), every job without one absent.
    pub fn figures(&self, plan: &Plan) -> Figures {
        let mut f = Figures::unmeasured();
        f.read_iops = READ_DEPTHS.iter().map(|&qd| (qd, f64::NAN)).collect();
        f.block_bw = READ_BLOCKS_KIB.iter().map(|&k| (k, f64::NAN)).collect();
        for p in &self.figures {
            let v = p.value;
            match (p.job.as_str(), p.figure.as_str()) {
                ("seq-fill", "in-cache rate") => f.fill.in_cache_bytes_s = v * 1e6,
                ("seq-fill", "post-cache rate") => f.fill.post_cache_bytes_s = v * 1e6,
                ("seq-fill", "cache size") => f.fill.cliff_bytes = v * 1e9 * self.scale(),
                // At one I/O in flight the mean latency is 1 / IOPS (Little's law).
                ("qd1-write", _) => f.write_lat_qd1_ns = 1e9 / v,
                ("seq-read", _) => f.seq_read_bytes_s = v * 1e6,
                ("steady-full", _) => f.steady_full_iops = v,
                (job, _) => set_read(&mut f, job, v),
            }
        }
        f.absent = plan
            .jobs
            .iter()
            .filter(|j| !self.figures.iter().any(|p| p.job == j.name))
            .map(|j| j.name.clone())
            .collect();
        f
    }

    /// The value of a published figure in `f`, figures of the slice, in the figure's unit
    /// for the whole drive.
    pub fn value_in(&self, f: &Figures, job: &str, figure: &str) -> f64 {
        match (job, figure) {
            ("seq-fill", "in-cache rate") => f.fill.in_cache_bytes_s / 1e6,
            ("seq-fill", "post-cache rate") => f.fill.post_cache_bytes_s / 1e6,
            ("seq-fill", "cache size") => f.fill.cliff_bytes / 1e9 / self.scale(),
            ("qd1-write", _) => 1e9 / f.write_lat_qd1_ns,
            ("seq-read", _) => f.seq_read_bytes_s / 1e6,
            ("steady-full", _) => f.steady_full_iops,
            (job, _) => {
                if let Some(qd) = job.strip_prefix("randread-qd") {
                    let qd: u32 = qd.parse().unwrap_or(0);
                    f.read_iops
                        .iter()
                        .find(|x| x.0 == qd)
                        .map_or(f64::NAN, |x| x.1)
                } else {
                    let kib = job.trim_start_matches("randread-bs").trim_end_matches('k');
                    let kib: u32 = kib.parse().unwrap_or(0);
                    f.block_bw
                        .iter()
                        .find(|x| x.0 == kib)
                        .map_or(f64::NAN, |x| x.1 / 1e6)
                }
            }
        }
    }

    /// The fitted slice scaled back to the drive: the capacity, and a static cache's bytes.
    pub fn whole_drive(&self, slice: &Params) -> Params {
        let mut p = slice.clone();
        p.capacity_bytes = self.capacity_bytes;
        if let Cache::Static { bytes } = p.cache {
            let whole = (bytes as f64 / self.scale()) as u64;
            p.cache = Cache::Static {
                bytes: whole & !((1 << 20) - 1),
            };
        }
        p.loadable()
    }
}

/// Fits a drive to a published set: the plan of its slice, the figures as that plan's
/// partial outputs, the fit, and the fitted slice scaled back to the whole drive.
pub fn fit_published(
    set: &Published,
    options: &crate::FitOptions,
) -> Result<(Fitted, Params), FitError> {
    let plan = set.plan()?;
    let measured = set.figures(&plan);
    let fitted = crate::fit(&plan, &measured, options)?;
    let whole = set.whole_drive(&fitted.params);
    Ok((fitted, whole))
}

/// A random-read figure of job `randread-qdN` (IOPS) or `randread-bsNk` (MB/s).
fn set_read(f: &mut Figures, job: &str, v: f64) {
    if let Some(qd) = job
        .strip_prefix("randread-qd")
        .and_then(|q| q.parse::<u32>().ok())
    {
        if qd == 1 {
            // At one I/O in flight the mean latency is 1 / IOPS (Little's law).
            f.read_lat_qd1_ns = 1e9 / v;
        }
        if let Some(x) = f.read_iops.iter_mut().find(|x| x.0 == qd) {
            x.1 = v;
        }
    } else if let Some(kib) = job
        .strip_prefix("randread-bs")
        .and_then(|k| k.strip_suffix('k'))
        .and_then(|k| k.parse::<u32>().ok())
    {
        if let Some(x) = f.block_bw.iter_mut().find(|x| x.0 == kib) {
            x.1 = v * 1e6;
        }
    }
}

/// The published figures a key of [`Params::keys`] is fitted from (job, figure); a job
/// named alone means any of its figures.
fn governing(key: &str) -> &'static [(&'static str, &'static str)] {
    match key {
        "nand.t_read" => &[("randread-qd1", "IOPS")],
        "controller.command_overhead" => &[("qd1-write", "IOPS")],
        "nand.channels" | "nand.dies_per_channel" => &[("randread-qd", "IOPS")],
        "nand.blocks_per_plane" => &[("steady-full", "IOPS")],
        "nand.t_prog" => &[("seq-fill", "post-cache rate")],
        "nand.slc_t_prog" => &[("seq-fill", "in-cache rate")],
        "slc_cache.dynamic_max_fraction" | "slc_cache.static" => &[("seq-fill", "cache size")],
        "slc_cache.when_full" => &[("seq-fill", "post-cache rate")],
        "slc_cache.dynamic" => &[
            ("seq-fill", "in-cache rate"),
            ("seq-fill", "post-cache rate"),
            ("seq-fill", "cache size"),
        ],
        _ => &[],
    }
}

/// The provenance of a key of a drive fitted to a published set: `fitted`, naming the
/// published figures (with their sources) it was fitted to; a key whose figures were not
/// published a class default naming the plan job that would identify it; the rest as a
/// plan's fit gives them (class defaults the plan cannot identify, inferred keys).
pub fn provenance_of(key: &str, set: &Published, p: &Params, m: &Figures) -> Provenance {
    let wanted = governing(key);
    if wanted.is_empty() {
        return crate::preset::provenance_of(key, p, m);
    }
    let used: Vec<&Figure> = set
        .figures
        .iter()
        .filter(|f| {
            wanted
                .iter()
                .any(|(j, fig)| f.job.starts_with(j) && f.figure == *fig)
        })
        .collect();
    if used.is_empty() {
        let jobs: Vec<String> = wanted
            .iter()
            .map(|(j, fig)| match *j {
                "randread-qd" => format!("randread-qd* {fig}"),
                j => format!("{j} {fig}"),
            })
            .collect();
        return Provenance::Default {
            reason: format!(
                "{}; no published figure of {} (the plan's job would identify it)",
                crate::params::class::SOURCE,
                jobs.join(" or ")
            ),
        };
    }
    let texts: Vec<String> = used.iter().map(|f| f.text()).collect();
    let structure = if key.starts_with("slc_cache.d") || key.starts_with("slc_cache.w") {
        "the structure whose simulated figures are closest to "
    } else {
        ""
    };
    Provenance::Fitted {
        figure: format!("{structure}published: {}", texts.join("; ")),
    }
}

/// The preset of a drive fitted to a published set: its description and provenance.
pub fn preset_toml(set: &Published, fitted: &Fitted, whole: &Params, name: &str) -> String {
    let description = format!(
        "Fitted by flashlab fit to published figures of the {}: {} figures of {} of the plan's jobs",
        set.drive,
        set.figures.len(),
        set.jobs()
    );
    let mut text = format!(
        "# A drive fitted by `flashlab fit` to published figures of the {}. Every key's\n# source is in [provenance]; see docs/fit.md.\n{}",
        set.drive,
        whole.toml(name, &description)
    );
    let map: ProvenanceMap = whole
        .keys()
        .into_iter()
        .map(|(key, _)| {
            let prov = match key.as_str() {
                "capacity.user" => Provenance::Cited {
                    source: format!("the published set's capacity of the {}", set.drive),
                },
                k => provenance_of(k, set, whole, &fitted.measured),
            };
            (key, prov)
        })
        .collect();
    text.push('\n');
    text.push_str(&flashlab_device::provenance::provenance_toml(&map));
    text
}

/// The terminal summary: the fitted parameters, each published figure against the fitted
/// drive's, the jobs no figure measured and the keys left at class defaults.
pub fn render_text(set: &Published, fitted: &Fitted, whole: &Params) -> String {
    let mut out = String::from("Fitted parameters\n");
    let shown = Fitted {
        params: whole.clone(),
        ..fitted.clone()
    };
    for l in crate::report::parameter_lines(&shown) {
        out.push_str(&format!("  {l}\n"));
    }
    out.push_str("\nPublished against fitted\n");
    for f in &set.figures {
        let sim = set.value_in(&fitted.simulated, &f.job, &f.figure);
        let err = (sim - f.value) / f.value;
        let label = format!("{} {}", f.job, f.figure);
        out.push_str(&format!(
            "  {label:<30} {:>9} {:>9} {:<4} {:>+7.1}%\n",
            fmt_value(f.value),
            fmt_value(sim),
            f.unit,
            err * 100.0
        ));
    }
    let defaults: Vec<String> = whole
        .keys()
        .into_iter()
        .filter(|(k, _)| {
            matches!(
                provenance_of(k, set, whole, &fitted.measured),
                Provenance::Default { .. }
            )
        })
        .map(|(k, _)| k)
        .collect();
    out.push_str(&format!(
        "\nNot measured: {}\nAt class defaults: {}\n",
        fitted.measured.absent.join(", "),
        defaults.join(", ")
    ));
    out
}

fn fmt_value(x: f64) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SET: &str = r#"format = "flashlab-fit-published 1"
drive = "a drive"
capacity = "4GB"

[[figure]]
job = "seq-fill"
figure = "cache size"
value = 1
unit = "GB"
pattern = "sequential write"
block = "128KiB"
depth = 32
state = "fresh"
source = "a review"

[[figure]]
job = "randread-qd1"
figure = "IOPS"
value = 10000
unit = "IOPS"
pattern = "random read"
block = "4KiB"
depth = 1
state = "full"
source = "a data sheet"
"#;

    fn error(text: &str) -> String {
        let e = parse_published("set.toml", text).unwrap_err();
        assert!(e.bad_input, "{}", e.message);
        e.message
    }

    #[test]
    fn a_set_reads_into_the_slices_figures() {
        let set = parse_published("set.toml", SET).unwrap();
        assert_eq!(set.capacity_bytes, 4_000_000_000);
        assert_eq!(set.figures[1].line, 16);
        let plan = set.plan().unwrap();
        assert_eq!(plan.capacity_bytes, SLICE_BYTES);
        let f = set.figures(&plan);
        let scale = SLICE_BYTES as f64 / 4e9;
        assert!((f.fill.cliff_bytes - 1e9 * scale).abs() < 1.0);
        assert!(f.fill.in_cache_bytes_s.is_nan(), "not published");
        assert_eq!(f.read_lat_qd1_ns, 1e5, "QD1: latency = 1 / IOPS");
        assert_eq!(f.read_iops[0], (1, 10000.0));
        assert!(f.read_iops[1].1.is_nan());
        assert!(f.absent.iter().any(|j| j == "steady-full"));
        assert!(!f
            .absent
            .iter()
            .any(|j| j == "seq-fill" || j == "randread-qd1"));
        assert!((set.value_in(&f, "seq-fill", "cache size") - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_figure_of_another_condition_is_refused_at_its_line() {
        let m = error(&SET.replace("depth = 1\n", "depth = 32\n"));
        assert!(m.starts_with("set.toml:23: depth 32: randread-qd1 is a random read of 4 KiB at 1 I/Os in flight on a full drive"), "{m}");
        let m = error(&SET.replace("state = \"full\"", "state = \"fresh\""));
        assert!(m.starts_with("set.toml:24: state \"fresh\""), "{m}");
        let m = error(&SET.replace("block = \"4KiB\"", "block = \"8KiB\""));
        assert!(m.starts_with("set.toml:22: block"), "{m}");
    }

    #[test]
    fn bad_input_names_its_line_and_what_is_valid() {
        let m = error(&SET.replace("job = \"randread-qd1\"", "job = \"randread-qd3\""));
        assert!(m.starts_with("set.toml:17: job \"randread-qd3\": a published figure is of one of the plan's jobs seq-fill"), "{m}");
        let m = error(&SET.replace("unit = \"GB\"", "unit = \"GiB\""));
        assert!(
            m.starts_with("set.toml:9: unit \"GiB\": seq-fill cache size is in GB"),
            "{m}"
        );
        let m = error(&SET.replace("value = 10000", "value = -1"));
        assert!(m.starts_with("set.toml:19: value"), "{m}");
        let m = error(&SET.replace("source = \"a review\"\n", ""));
        assert!(
            m.starts_with("set.toml:5: source: expected a non-empty string"),
            "{m}"
        );
        let m = error(&SET.replace("capacity = \"4GB\"", "capacity = \"4 parsecs\""));
        assert!(m.starts_with("set.toml:3: capacity"), "{m}");
        let m = error(&SET.replace("format = \"flashlab-fit-published 1\"", "format = \"x\""));
        assert!(m.starts_with("set.toml:1: format \"x\""), "{m}");
        let m = error(&SET.replace("depth = 32\nstate", "depth = 32\ncolour = 1\nstate"));
        assert!(m.starts_with("set.toml:13: colour: unknown key"), "{m}");
        let m = error(&format!("{SET}\n[[figure]\n"));
        assert!(m.starts_with("set.toml:27: not TOML"), "{m}");
        let first: String = SET
            .lines()
            .skip(4)
            .take(11)
            .map(|l| format!("{l}\n"))
            .collect();
        let m = error(&format!("{SET}\n{first}"));
        assert!(m.contains("given twice (line 5 gives it too)"), "{m}");
    }
}
