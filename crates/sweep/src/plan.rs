//! A sweep plan: what to run (a fio job file), the settings that stay fixed, and the axes
//! whose values vary, combined as a full grid or zipped. Read with `toml_edit` so that the
//! axes keep the order they are written in (the grid's first axis varies slowest) and every
//! error names the plan's line.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use flashlab_host::Preconditioner;

use crate::{read_bounded, PlanError, MAX_PLAN_BYTES};

/// Most values one axis may hold, a range's included.
pub const MAX_AXIS_VALUES: usize = 10_000;
/// Most points a plan may have: every point's result is one file in the output directory.
pub const MAX_POINTS: u64 = 1_000_000;

/// How the axes combine into points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Every combination; the first axis written varies slowest.
    Grid,
    /// The n-th value of every axis together; all axes have the same length.
    Zip,
}

/// What an axis sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisKind {
    /// The drive or system: a preset name or a TOML file (relative to the plan).
    Device,
    /// The master seed (replicates).
    Seed,
    /// A device key, as `--set KEY=VALUE`.
    Set(String),
    /// A job-file variable, read by the job file as `${NAME}` (fio's own substitution).
    Env(String),
}

/// One value of an axis and the line it is written on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisValue {
    pub text: String,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct Axis {
    /// As written in the plan: `device`, `seed`, `set.KEY` or `env.NAME`; the column name
    /// in the tidy table.
    pub name: String,
    pub kind: AxisKind,
    pub line: usize,
    pub values: Vec<AxisValue>,
}

/// The workload every point runs.
#[derive(Debug, Clone)]
pub struct JobSource {
    /// The job file as the plan names it (relative to the plan's directory).
    pub path: PathBuf,
    /// Its text, read once when the plan is read.
    pub text: String,
    pub line: usize,
}

/// `[precondition]`: every point's drive is preconditioned as `flashlab suite precondition`
/// preconditions one before the job runs on it; the table's keys are that suite's options.
#[derive(Debug, Clone)]
pub struct Precondition {
    /// The suite options, as written: (long name, value).
    pub options: Vec<(String, AxisValue)>,
    pub line: usize,
}

impl Precondition {
    /// The options as a [`flashlab_host::Preconditioner`] takes them.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.options
            .iter()
            .map(|(k, v)| (k.clone(), v.text.clone()))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    /// The plan file, as given (messages name it).
    pub file: String,
    pub job: JobSource,
    pub combine: Combine,
    /// Fixed settings: `device`, `seed`, `[set]` and `[env]` outside the axes.
    pub device: Option<AxisValue>,
    pub seed: u64,
    pub set: Vec<(String, AxisValue)>,
    pub env: Vec<(String, AxisValue)>,
    pub axes: Vec<Axis>,
    /// Preconditioning before every point's job (`None`: the job runs on a fresh drive).
    pub precondition: Option<Precondition>,
}

/// One point's settings, resolved: what a run needs, and where each came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    pub index: u64,
    /// The axis values of this point, in axis order: (axis name, value).
    pub settings: Vec<(String, AxisValue)>,
    /// The device name or file (files resolved against the plan's directory).
    pub device: String,
    pub device_line: Option<usize>,
    pub seed: u64,
    /// Device overrides: fixed ones first, then the axes', in order.
    pub set: Vec<(String, AxisValue)>,
    pub env: Vec<(String, AxisValue)>,
}

impl Plan {
    /// Read and check a plan file (bounded to [`MAX_PLAN_BYTES`]).
    pub fn read(path: &Path) -> Result<Plan, PlanError> {
        let file = path.display().to_string();
        let text = read_bounded(path, MAX_PLAN_BYTES).map_err(|message| PlanError {
            file: file.clone(),
            line: 0,
            message,
        })?;
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        Plan::parse(&file, &text, &dir)
    }

    /// Parse plan text; `dir` resolves the job file and device files named in it.
    pub fn parse(file: &str, text: &str, dir: &Path) -> Result<Plan, PlanError> {
        let lines = LineIndex::new(text);
        let src = Source {
            file,
            lines: &lines,
        };
        let doc = toml_edit::ImDocument::parse(text).map_err(|e| {
            src.err(
                e.span(),
                format!("not valid TOML: {}", e.message().trim_end()),
            )
        })?;
        let root = doc.as_table();

        let mut job = None;
        let mut combine = Combine::Grid;
        let mut device = None;
        let mut seed = 1;
        let mut set = Vec::new();
        let mut env = Vec::new();
        let mut axes = Vec::new();
        let mut precondition = None;
        for (key, item) in root.iter() {
            let key_span = root.key(key).and_then(|k| k.span());
            let line = key_span.clone().map_or(0, |s| lines.line(s.start));
            match key {
                "job" => job = Some(src.job_source(item, dir, line)?),
                "combine" => combine = src.combine(item)?,
                "device" => {
                    let text = item.as_str().ok_or_else(|| {
                        src.err(item.span(), "device: expected a preset name or a device TOML file, as a string".into())
                    })?;
                    device = Some(AxisValue {
                        text: text.to_string(),
                        line,
                    });
                }
                "seed" => {
                    seed = item
                        .as_integer()
                        .and_then(|v| u64::try_from(v).ok())
                        .ok_or_else(|| {
                            src.err(item.span(), "seed: expected a whole number 0 or above".into())
                        })?;
                }
                "set" => set = src.fixed_values(key, item, &|_, _| Ok(()))?,
                "env" => {
                    env = src.fixed_values(key, item, &|name, line| {
                        check_env_name(name).map_err(|m| src.at(line, m))
                    })?
                }
                "axes" => src.axes(item, &mut axes)?,
                "precondition" => precondition = Some(src.precondition(item, line)?),
                other => {
                    return Err(src.err(
                        key_span,
                        format!(
                            "unknown key {:?}: a plan has job, device, seed, combine, [set], [env], [precondition] and [axes]",
                            crate::shorten(other)
                        ),
                    ))
                }
            }
        }
        let job = job.ok_or_else(|| {
            src.at(
                0,
                "no job: name the fio job file every point runs, e.g. job = \"randwrite.fio\""
                    .into(),
            )
        })?;
        resolve_device_files(dir, device.as_mut(), &mut axes);
        let plan = Plan {
            file: file.to_string(),
            job,
            combine,
            device,
            seed,
            set,
            env,
            axes,
            precondition,
        };
        plan.point_count()?;
        Ok(plan)
    }

    /// Checks `[precondition]`'s options with `pre` (the names and values `flashlab suite
    /// precondition` takes): each on its own line, then together. A plan without one passes.
    pub fn check_precondition(&self, pre: &dyn Preconditioner) -> Result<(), PlanError> {
        let Some(precondition) = &self.precondition else {
            return Ok(());
        };
        let at = |line: usize, message: String| PlanError {
            file: self.file.clone(),
            line,
            message,
        };
        for (name, value) in &precondition.options {
            pre.check(&[(name.clone(), value.text.clone())])
                .map_err(|e| at(value.line, format!("precondition.{name}: {e}")))?;
        }
        pre.check(&precondition.pairs())
            .map_err(|e| at(precondition.line, format!("precondition: {e}")))
    }

    /// How many points the plan has (errors: zipped axes of different lengths, too many).
    pub fn point_count(&self) -> Result<u64, PlanError> {
        let at = |line, message| PlanError {
            file: self.file.clone(),
            line,
            message,
        };
        match self.combine {
            Combine::Grid => {
                let mut count: u64 = 1;
                for axis in &self.axes {
                    count = count
                        .checked_mul(axis.values.len() as u64)
                        .filter(|&c| c <= MAX_POINTS)
                        .ok_or_else(|| {
                            at(
                                axis.line,
                                format!("the grid has more than {MAX_POINTS} points at axes.{}: split the plan", axis.name),
                            )
                        })?;
                }
                Ok(count)
            }
            Combine::Zip => {
                let Some(first) = self.axes.first() else {
                    return Ok(1);
                };
                for axis in &self.axes[1..] {
                    if axis.values.len() != first.values.len() {
                        return Err(at(
                            axis.line,
                            format!(
                                "combine = \"zip\" needs axes of one length: axes.{} has {} values, axes.{} has {}",
                                axis.name,
                                axis.values.len(),
                                first.name,
                                first.values.len()
                            ),
                        ));
                    }
                }
                Ok(first.values.len() as u64)
            }
        }
    }

    /// The point at `index` (0-based).
    pub fn point(&self, index: u64) -> Result<Point, PlanError> {
        let count = self.point_count()?;
        if index >= count {
            return Err(PlanError {
                file: self.file.clone(),
                line: 0,
                message: format!(
                    "there is no point {index}: the plan has {count} (0 to {})",
                    count - 1
                ),
            });
        }
        let mut picks = vec![0usize; self.axes.len()];
        match self.combine {
            Combine::Grid => {
                let mut rest = index;
                for (pick, axis) in picks.iter_mut().zip(&self.axes).rev() {
                    let n = axis.values.len() as u64;
                    *pick = (rest % n) as usize;
                    rest /= n;
                }
            }
            Combine::Zip => picks.iter_mut().for_each(|p| *p = index as usize),
        }
        let mut point = Point {
            index,
            settings: Vec::with_capacity(self.axes.len()),
            device: self
                .device
                .as_ref()
                .map_or(flashlab_device::DEFAULT_DEVICE.to_string(), |d| {
                    d.text.clone()
                }),
            device_line: self.device.as_ref().map(|d| d.line),
            seed: self.seed,
            set: self.set.clone(),
            env: self.env.clone(),
        };
        for (axis, &pick) in self.axes.iter().zip(&picks) {
            let value = axis.values[pick].clone();
            match &axis.kind {
                AxisKind::Device => {
                    point.device = value.text.clone();
                    point.device_line = Some(value.line);
                }
                // Checked when the plan was read.
                AxisKind::Seed => point.seed = value.text.parse().unwrap_or_default(),
                AxisKind::Set(key) => point.set.push((key.clone(), value.clone())),
                AxisKind::Env(name) => point.env.push((name.clone(), value.clone())),
            }
            point.settings.push((axis.name.clone(), value));
        }
        Ok(point)
    }

    /// The `--list` text: one line per point, its index and settings.
    pub fn listing(&self) -> Result<String, PlanError> {
        let mut text = String::new();
        for index in 0..self.point_count()? {
            let point = self.point(index)?;
            let _ = write!(text, "{index}");
            for (name, value) in &point.settings {
                let _ = write!(text, "\t{name}={}", value.text);
            }
            text.push('\n');
        }
        Ok(text)
    }
}

impl Point {
    /// The value of `${name}` in the job file at this point.
    pub fn env_value(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.text.clone())
    }

    /// The overrides as `load_device_config` takes them.
    pub fn overrides(&self) -> Vec<(String, String)> {
        self.set
            .iter()
            .map(|(k, v)| (k.clone(), v.text.clone()))
            .collect()
    }
}

fn axis_kind(name: &str) -> Result<AxisKind, String> {
    match name {
        "device" => Ok(AxisKind::Device),
        "seed" => Ok(AxisKind::Seed),
        _ => {
            if let Some(key) = name.strip_prefix("set.") {
                if key.contains('.') {
                    return Ok(AxisKind::Set(key.to_string()));
                }
            }
            if let Some(env) = name.strip_prefix("env.") {
                check_env_name(env)?;
                return Ok(AxisKind::Env(env.to_string()));
            }
            Err(format!(
                "axes.{}: an axis is device, seed, set.SECTION.KEY (a device key, as --set takes) or env.NAME (a job-file ${{NAME}})",
                crate::shorten(name)
            ))
        }
    }
}

fn check_env_name(name: &str) -> Result<(), String> {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(format!(
            "env.{}: a job-file variable's name is letters, digits and '_'",
            crate::shorten(name)
        ))
    }
}

/// `(dotted name, item, span)` of every leaf of `table`: a quoted `"capacity.spare_factor"`
/// and a dotted `capacity.spare_factor` name the same key. Range tables are leaves.
type Leaf<'a> = (String, &'a toml_edit::Item, Option<Range<usize>>);

fn flatten<'a>(
    table: &'a toml_edit::Table,
    prefix: &str,
    out: &mut Vec<Leaf<'a>>,
) -> Result<(), (Option<Range<usize>>, String)> {
    for (key, item) in table.iter() {
        let name = format!("{prefix}{key}");
        let span = table
            .key(key)
            .and_then(|k| k.span())
            .or_else(|| item.span());
        match item {
            toml_edit::Item::Table(sub) if !is_range(item) => {
                flatten(sub, &format!("{name}."), out)?
            }
            toml_edit::Item::Value(toml_edit::Value::InlineTable(_)) if !is_range(item) => {
                return Err((
                    span,
                    format!(
                        "{}: write the keys of an inline table as dotted keys (a.b = ...) instead",
                        crate::shorten(&name)
                    ),
                ))
            }
            _ => out.push((name, item, span)),
        }
    }
    Ok(())
}

fn table_get<'a>(item: &'a toml_edit::Item, key: &str) -> Option<&'a toml_edit::Value> {
    match item {
        toml_edit::Item::Table(t) => t.get(key)?.as_value(),
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => t.get(key),
        _ => None,
    }
}

/// A key of a range table other than `from`, `to` and `step`.
fn unknown_range_key(item: &toml_edit::Item) -> Option<String> {
    let keys: Vec<String> = match item {
        toml_edit::Item::Table(t) => t.iter().map(|(k, _)| k.to_string()).collect(),
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => {
            t.iter().map(|(k, _)| k.to_string()).collect()
        }
        _ => Vec::new(),
    };
    keys.into_iter()
        .find(|k| !matches!(k.as_str(), "from" | "to" | "step"))
}

fn is_range(item: &toml_edit::Item) -> bool {
    ["from", "to", "step"]
        .iter()
        .any(|k| table_get(item, k).is_some())
}

/// A scalar's text: strings as they are, numbers as Rust prints them (0.07, 4), booleans.
fn scalar_text(item: &toml_edit::Item) -> Option<String> {
    value_text(item.as_value()?)
}

fn value_text(value: &toml_edit::Value) -> Option<String> {
    match value {
        toml_edit::Value::String(s) => Some(s.value().clone()),
        toml_edit::Value::Integer(i) => Some(i.value().to_string()),
        toml_edit::Value::Float(f) => Some(f.value().to_string()),
        toml_edit::Value::Boolean(b) => Some(b.value().to_string()),
        _ => None,
    }
}

/// An axis's values: a list of scalars, or a range `{ from = A, to = B, step = S }`.
fn axis_values(
    name: &str,
    item: &toml_edit::Item,
    lines: &LineIndex,
) -> Result<Vec<AxisValue>, String> {
    let line_of = |v: &toml_edit::Value| v.span().map_or(0, |s| lines.line(s.start));
    if let Some(array) = item.as_array() {
        if array.len() > MAX_AXIS_VALUES {
            return Err(format!(
                "axes.{name} has {} values, more than {MAX_AXIS_VALUES}",
                array.len()
            ));
        }
        return array
            .iter()
            .map(|v| {
                value_text(v)
                    .map(|text| AxisValue {
                        text,
                        line: line_of(v),
                    })
                    .ok_or_else(|| {
                        format!("axes.{name}: each value is a string, a number or a boolean")
                    })
            })
            .collect();
    }
    let line = item.span().map_or(0, |s| lines.line(s.start));
    let get = |k: &str| table_get(item, k);
    let (Some(from), Some(to), Some(step)) = (get("from"), get("to"), get("step")) else {
        return Err(format!(
            "axes.{name}: expected a list of values [a, b, ...] or a range {{ from = A, to = B, step = S }}"
        ));
    };
    if let Some(key) = unknown_range_key(item) {
        return Err(format!(
            "axes.{name}: unknown key '{}' in a range; valid: from, to, step",
            crate::shorten(&key)
        ));
    }
    let bad = || format!("axes.{name}: a range's from, to and step are numbers, step above 0");
    if let (Some(a), Some(b), Some(s)) = (from.as_integer(), to.as_integer(), step.as_integer()) {
        if s <= 0 {
            return Err(bad());
        }
        // In i128: from i64::MIN to i64::MAX the difference does not fit an i64.
        let count = if b < a {
            0
        } else {
            (i128::from(b) - i128::from(a)) / i128::from(s) + 1
        };
        if count as u128 > MAX_AXIS_VALUES as u128 {
            return Err(format!(
                "axes.{name}: the range has {count} values, more than {MAX_AXIS_VALUES}"
            ));
        }
        return Ok((0..count as i64)
            .map(|i| AxisValue {
                text: (a + i * s).to_string(),
                line,
            })
            .collect());
    }
    let number = |v: &toml_edit::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    let (Some(a), Some(b), Some(s)) = (number(from), number(to), number(step)) else {
        return Err(bad());
    };
    if !(s > 0.0 && a.is_finite() && b.is_finite() && s.is_finite()) {
        return Err(bad());
    }
    // A hair of tolerance so that 0.05..0.25 step 0.05 includes 0.25.
    let count = if b < a {
        0.0
    } else {
        ((b - a) / s + 1e-9).floor() + 1.0
    };
    if count > MAX_AXIS_VALUES as f64 {
        return Err(format!(
            "axes.{name}: the range has {} values, more than {MAX_AXIS_VALUES}",
            crate::shorten(&format!("{count:.3e}"))
        ));
    }
    Ok((0..count as u64)
        .map(|i| AxisValue {
            text: tidy_float(a + i as f64 * s),
            line,
        })
        .collect())
}

/// A range's float at 12 significant digits, so 0.05 + 2 × 0.05 reads 0.15.
fn tidy_float(x: f64) -> String {
    let rounded: f64 = format!("{x:.12e}").parse().unwrap_or(x);
    rounded.to_string()
}

/// Byte offset → 1-based line.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { starts }
    }

    fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

/// Device files are named relative to the plan, as the job file is.
fn resolve_device_files(dir: &Path, device: Option<&mut AxisValue>, axes: &mut [Axis]) {
    let resolve = |v: &mut AxisValue| {
        if v.text.ends_with(".toml") && Path::new(&v.text).is_relative() {
            v.text = dir.join(&v.text).display().to_string();
        }
    };
    if let Some(d) = device {
        resolve(d);
    }
    for axis in axes.iter_mut().filter(|a| a.kind == AxisKind::Device) {
        axis.values.iter_mut().for_each(resolve);
    }
}

/// The plan being parsed, for errors that name its file and line.
struct Source<'a> {
    file: &'a str,
    lines: &'a LineIndex,
}

impl Source<'_> {
    fn at(&self, line: usize, message: String) -> PlanError {
        PlanError {
            file: self.file.to_string(),
            line,
            message,
        }
    }

    fn err(&self, span: Option<Range<usize>>, message: String) -> PlanError {
        self.at(span.map_or(0, |s| self.lines.line(s.start)), message)
    }

    /// `job = "FILE"`: the job file, read relative to the plan.
    fn job_source(
        &self,
        item: &toml_edit::Item,
        dir: &Path,
        line: usize,
    ) -> Result<JobSource, PlanError> {
        let name = scalar_text(item)
            .filter(|_| item.as_str().is_some())
            .ok_or_else(|| {
                self.err(
                    item.span(),
                    "job: expected the path of a fio job file, e.g. job = \"randwrite.fio\"".into(),
                )
            })?;
        let path = PathBuf::from(&name);
        let text = read_bounded(&dir.join(&path), MAX_PLAN_BYTES)
            .map_err(|m| self.err(item.span(), format!("job = {name:?}: {m}")))?;
        Ok(JobSource { path, text, line })
    }

    fn combine(&self, item: &toml_edit::Item) -> Result<Combine, PlanError> {
        match item.as_str() {
            Some("grid") => Ok(Combine::Grid),
            Some("zip") => Ok(Combine::Zip),
            _ => Err(self.err(
                item.span(),
                "combine: expected \"grid\" (every combination) or \"zip\" (the n-th values together)".into(),
            )),
        }
    }

    /// `[set]` or `[env]`: one value per name, each with its line, each name passing `check`.
    fn fixed_values(
        &self,
        key: &str,
        item: &toml_edit::Item,
        check: &dyn Fn(&str, usize) -> Result<(), PlanError>,
    ) -> Result<Vec<(String, AxisValue)>, PlanError> {
        let table = item.as_table().ok_or_else(|| {
            self.err(
                item.span(),
                format!("{key}: expected a table, e.g. [{key}] then KEY = VALUE lines"),
            )
        })?;
        let mut pairs = Vec::new();
        flatten(table, "", &mut pairs).map_err(|(span, m)| self.err(span, format!("{key}.{m}")))?;
        let mut values = Vec::new();
        for (name, value, span) in pairs {
            let text = scalar_text(value).ok_or_else(|| {
                self.err(
                    span.clone(),
                    format!("{key}.{name}: expected one value (a string, number or boolean); put lists under [axes]"),
                )
            })?;
            let line = span.map_or(0, |s| self.lines.line(s.start));
            check(&name, line)?;
            values.push((name, AxisValue { text, line }));
        }
        Ok(values)
    }

    /// `[precondition]`: the precondition suite's options, as written; the preconditioner
    /// a run is given checks them ([`Plan::check_precondition`]).
    fn precondition(&self, item: &toml_edit::Item, line: usize) -> Result<Precondition, PlanError> {
        let options = self.fixed_values("precondition", item, &|name, line| {
            if name == "seed" {
                return Err(self.at(
                    line,
                    "precondition.seed: the preconditioning takes the point's seed (seed = N, or a seed axis)".into(),
                ));
            }
            Ok(())
        })?;
        Ok(Precondition { options, line })
    }

    /// `[axes]`: each axis with its values, checked as it is read.
    fn axes(&self, item: &toml_edit::Item, axes: &mut Vec<Axis>) -> Result<(), PlanError> {
        let table = item.as_table().ok_or_else(|| {
            self.err(
                item.span(),
                "axes: expected a table, e.g. [axes] then NAME = [values]".into(),
            )
        })?;
        let mut pairs = Vec::new();
        flatten(table, "", &mut pairs).map_err(|(span, m)| self.err(span, format!("axes.{m}")))?;
        for (name, value, span) in pairs {
            let line = span.clone().map_or(0, |s| self.lines.line(s.start));
            let at = |message: String| self.at(line, message);
            let kind = axis_kind(&name).map_err(&at)?;
            let values = axis_values(&name, value, self.lines).map_err(&at)?;
            if values.is_empty() {
                return Err(at(format!(
                    "axes.{name} is empty: give it at least one value"
                )));
            }
            if axes.iter().any(|a: &Axis| a.kind == kind) {
                return Err(at(format!("axes.{name} is given twice")));
            }
            if let AxisKind::Seed = kind {
                for v in &values {
                    if v.text.parse::<u64>().is_err() {
                        return Err(self.at(
                            v.line,
                            format!(
                                "axes.seed: {:?} is not a seed: expected a whole number 0 or above",
                                v.text
                            ),
                        ));
                    }
                }
            }
            axes.push(Axis {
                name,
                kind,
                line,
                values,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Plan, PlanError> {
        let dir = std::env::temp_dir().join(format!("flashlab-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("j.fio"), "[j]\nrw=randread\nsize=1m\n").unwrap();
        Plan::parse("plan.toml", text, &dir)
    }

    #[test]
    fn grid_varies_the_first_axis_slowest_in_written_order() {
        let plan = parse(
            "job = \"j.fio\"\n[axes]\nenv.QD = [1, 32]\n\"set.capacity.spare_factor\" = [0.07, 0.15, 0.28]\n",
        )
        .unwrap();
        assert_eq!(plan.point_count().unwrap(), 6);
        let names: Vec<_> = plan.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["env.QD", "set.capacity.spare_factor"]);
        let p = plan.point(4).unwrap();
        assert_eq!(p.env_value("QD").as_deref(), Some("32"));
        assert_eq!(
            p.overrides(),
            [("capacity.spare_factor".into(), "0.15".into())]
        );
        assert_eq!(plan.listing().unwrap().lines().count(), 6);
    }

    #[test]
    fn zip_takes_the_nth_values_and_needs_one_length() {
        let plan = parse(
            "job = \"j.fio\"\ncombine = \"zip\"\n[axes]\nseed = [1, 2]\nenv.X = [\"a\", \"b\"]\n",
        )
        .unwrap();
        assert_eq!(plan.point_count().unwrap(), 2);
        let p = plan.point(1).unwrap();
        assert_eq!((p.seed, p.env_value("X").as_deref()), (2, Some("b")));
        let e =
            parse("job = \"j.fio\"\ncombine = \"zip\"\n[axes]\nseed = [1, 2]\nenv.X = [\"a\"]\n")
                .unwrap_err();
        assert_eq!(e.line, 5, "{e}");
    }

    #[test]
    fn ranges_include_their_end_and_print_tidily() {
        let plan = parse("job = \"j.fio\"\n[axes]\n\"set.capacity.spare_factor\" = { from = 0.05, to = 0.25, step = 0.05 }\nenv.QD = { from = 1, to = 7, step = 2 }\n").unwrap();
        let texts = |i: usize| -> Vec<String> {
            plan.axes[i].values.iter().map(|v| v.text.clone()).collect()
        };
        assert_eq!(texts(0), ["0.05", "0.1", "0.15", "0.2", "0.25"]);
        assert_eq!(texts(1), ["1", "3", "5", "7"]);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("job = \"j.fio\"\n\n[axes]\nenv.QD = []\n").unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.message.contains("empty"), "{e}");
        let e = parse("job = \"j.fio\"\n[axes]\nspare = [1]\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse("job = \"j.fio\"\nbogus = 1\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let e = parse("job = \"j.fio\"\n[axes]\nseed = [1, -2]\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse("[axes]\nseed = [1]\n").unwrap_err();
        assert!(e.message.contains("no job"), "{e}");
        let e = parse("job = \"missing.fio\"\n").unwrap_err();
        assert_eq!(e.line, 1, "{e}");
        let e = parse("job = \"j.fio\"\n[axes\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
    }

    #[test]
    fn a_grid_too_large_is_refused() {
        let values = (0..1000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let text = format!(
            "job = \"j.fio\"\n[axes]\nenv.A = [{values}]\nenv.B = [{values}]\nenv.C = [{values}]\n"
        );
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("more than"), "{e}");
    }
}

#[cfg(test)]
mod range_tests {
    use super::*;

    fn values(text: &str) -> Result<Vec<AxisValue>, String> {
        let src = format!("a = {text}\n");
        let doc: toml_edit::DocumentMut = src.parse().unwrap();
        axis_values("a", &doc["a"], &LineIndex::new(&src))
    }

    /// A range from i64::MIN to i64::MAX said it was empty (its count overflowed), an
    /// unknown key in a range was accepted, and a step of 1e-300 echoed a 300-digit count.
    #[test]
    fn range_counts_and_keys_are_checked() {
        let e = values("{ from = -9223372036854775808, to = 9223372036854775807, step = 1 }")
            .unwrap_err();
        assert!(e.contains("more than"), "{e}");
        let e = values("{ from = 1, to = 3, step = 1, evil = 3 }").unwrap_err();
        assert!(e.contains("unknown key 'evil'"), "{e}");
        let e = values("{ from = 0.0, to = 1.0, step = 1e-300 }").unwrap_err();
        assert!(e.len() < 200, "{e}");
        assert_eq!(values("{ from = 1, to = 3, step = 1 }").unwrap().len(), 3);
    }
}
