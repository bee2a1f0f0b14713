//! A directory of point results → one tidy table: one row per point × job × measure, with
//! every axis, the unit and the value as columns (what pandas, R and spreadsheets pivot).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::SweepError;

/// The columns after the axes' (the first column is `point`).
pub const TIDY_COLUMNS_AFTER_AXES: [&str; 4] = ["job", "measure", "unit", "value"];

/// Most point files `collect` reads; as many as a plan may have.
const MAX_POINT_FILES: usize = crate::MAX_POINTS as usize;
/// Largest point file `collect` reads (a result with json+ bins stays far below).
pub(crate) const MAX_POINT_FILE_BYTES: u64 = 64 << 20;

/// A tidy table: `point`, the axes in plan order, then [`TIDY_COLUMNS_AFTER_AXES`].
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub axes: Vec<String>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub point: u64,
    /// One per axis, in [`Table::axes`] order ("" where a point lacks the axis).
    pub settings: Vec<String>,
    /// The job's name; `device` for the drive's or system's own counters.
    pub job: String,
    pub measure: String,
    pub unit: &'static str,
    pub value: f64,
}

impl Table {
    pub fn columns(&self) -> Vec<String> {
        let mut c = vec!["point".to_string()];
        c.extend(self.axes.iter().cloned());
        c.extend(TIDY_COLUMNS_AFTER_AXES.iter().map(|s| s.to_string()));
        c
    }

    /// RFC 4180 CSV: a header line, then one line per row.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let header: Vec<String> = self.columns().iter().map(|c| csv_field(c)).collect();
        out.push_str(&header.join(","));
        out.push('\n');
        for row in &self.rows {
            let _ = write!(out, "{}", row.point);
            for s in &row.settings {
                let _ = write!(out, ",{}", csv_field(s));
            }
            let _ = writeln!(
                out,
                ",{},{},{},{}",
                csv_field(&row.job),
                csv_field(&row.measure),
                row.unit,
                row.value
            );
        }
        out
    }
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Read every `point-*.json` in `dir`, in point order. Bad input (exit 2), naming the file:
/// a directory that cannot be listed, no point files, two files of one index
/// (`point-7.json` and `point-000007.json`), a file that is not a point result or whose
/// `point` is not the index in its name, files of different plans, and points missing below
/// the highest one or, when the files record their plan's size, after it (with
/// `allow_missing`, those are returned instead, for a warning).
pub fn collect_dir(dir: &Path, allow_missing: bool) -> Result<(Table, Vec<u64>), SweepError> {
    let shown = crate::shorten(&dir.to_string_lossy());
    let bad = |m: String| SweepError::Input(m);
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(bad(format!(
                "{shown} is not a directory: name a sweep's output directory"
            )))
        }
        Err(e) => return Err(bad(format!("cannot read {shown}: {e}"))),
    }
    let files = point_files(dir, &shown)?;
    let mut missing = Vec::new();
    let mut expected = 0u64;
    for (index, _) in &files {
        missing.extend(expected..*index);
        expected = index + 1;
        if missing.len() > MAX_POINT_FILES {
            break;
        }
    }
    let highest = files[files.len() - 1].0;
    let lacking = |missing: &[u64], of: String| {
        bad(format!(
            "{shown} lacks {} point{} {of} (the first: {}): rerun them (flashlab sweep PLAN --resume --outdir DIR) or collect what is there with --allow-missing",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            crate::point_file_name(missing[0])
        ))
    };
    if !missing.is_empty() && !allow_missing {
        return Err(lacking(&missing, format!("below point {highest}")));
    }
    // The plan's size, as every point file of this build records it.
    let mut plan_points: Option<(u64, String)> = None;
    let mut table = Table {
        axes: Vec::new(),
        rows: Vec::new(),
    };
    let mut plan: Option<(Value, String)> = None;
    for (index, path) in files {
        let file = crate::shorten(&path.to_string_lossy());
        let text = crate::read_bounded(&path, MAX_POINT_FILE_BYTES)
            .map_err(|m| bad(crate::shorten(&m)))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| bad(format!("{file}: not a point result: {e}")))?;
        match doc["point"].as_u64() {
            Some(p) if p == index => {}
            Some(p) => {
                return Err(bad(format!(
                    "{file}: it holds point {p}, not the point {index} its name says; rename it to {} or remove it",
                    crate::point_file_name(p)
                )))
            }
            None => return Err(bad(format!("{file}: no point index: not a point result"))),
        }
        match &plan {
            None => plan = Some((doc["plan"].clone(), file.clone())),
            Some((first, first_file)) if *first != doc["plan"] => {
                return Err(bad(format!(
                    "{file}: a point of plan {}, and {first_file} of plan {}: collect one sweep's directory",
                    crate::shorten(&doc["plan"].to_string()),
                    crate::shorten(&first.to_string())
                )))
            }
            Some(_) => {}
        }
        if let Some(count) = doc["plan_points"].as_u64() {
            match &plan_points {
                Some((c, other)) if *c != count => {
                    return Err(bad(format!(
                        "{file}: a point of a plan of {count} points, and {other} of {c}: collect one sweep's directory"
                    )))
                }
                _ if index >= count => {
                    return Err(bad(format!(
                        "{file}: point {index} is past its plan's {count} points (0 to {}): remove it or collect its own sweep's directory",
                        count - 1
                    )))
                }
                Some(_) => {}
                None => plan_points = Some((count, file.clone())),
            }
        }
        add_point(&mut table, index, &doc).map_err(|m| bad(format!("{file}: {m}")))?;
    }
    // Points after the highest one are missing too when the plan's size is known.
    if let Some((count, _)) = plan_points {
        let first = missing.len();
        missing.extend((highest + 1..count).take(MAX_POINT_FILES + 1 - first.min(MAX_POINT_FILES)));
        if missing.len() > first && !allow_missing {
            return Err(lacking(&missing, format!("of its plan's {count}")));
        }
    }
    Ok((table, missing))
}

/// The `point-N.json` files in `dir` (shown as `shown`) by index: at least one, at most
/// [`MAX_POINT_FILES`], one file per index.
/// The point a result file's name (`point-NNNNNN.json`) is of, when it is one.
fn point_index(name: &str) -> Option<u64> {
    name.strip_prefix("point-")
        .and_then(|rest| rest.strip_suffix(".json"))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse::<u64>().ok())
}

/// Whether `name` is a point's result file (`point-NNNNNN.json`): what a sweep writes in
/// its output directory and `collect` reads.
pub fn is_point_file_name(name: &str) -> bool {
    point_index(name).is_some()
}

fn point_files(dir: &Path, shown: &str) -> Result<Vec<(u64, PathBuf)>, SweepError> {
    let bad = |m: String| SweepError::Input(m);
    let io = |e: std::io::Error| bad(format!("cannot read {shown}: {e}"));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(index) = point_index(&name) {
            files.push((index, entry.path()));
            if files.len() > MAX_POINT_FILES {
                return Err(bad(format!(
                    "{shown} holds more than {MAX_POINT_FILES} point files, the most a plan has"
                )));
            }
        }
    }
    if files.is_empty() {
        return Err(bad(format!(
            "{shown} holds no point results (point-NNNNNN.json): run the sweep into it first"
        )));
    }
    files.sort();
    for pair in files.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(bad(format!(
                "{} and {} are both point {}: keep one",
                crate::shorten(&pair[0].1.to_string_lossy()),
                crate::shorten(&pair[1].1.to_string_lossy()),
                pair[0].0
            )));
        }
    }
    Ok(files)
}

impl Table {
    /// The table of point results already in memory (as `run_point` returns them), in the
    /// order given: what `collect_dir` makes of the same results read from files.
    pub fn from_docs<'a>(docs: impl IntoIterator<Item = &'a Value>) -> Result<Table, String> {
        let mut table = Table {
            axes: Vec::new(),
            rows: Vec::new(),
        };
        for doc in docs {
            let index = doc["point"]
                .as_u64()
                .ok_or("no point index: not a point result")?;
            add_point(&mut table, index, doc)?;
        }
        Ok(table)
    }
}

/// The rows of one point result.
fn add_point(table: &mut Table, index: u64, doc: &Value) -> Result<(), String> {
    let settings = doc["settings"]
        .as_object()
        .ok_or("no settings: not a point result")?;
    for name in settings.keys() {
        if !table.axes.contains(name) {
            table.axes.push(name.clone());
            for row in &mut table.rows {
                row.settings.push(String::new());
            }
        }
    }
    let values: Vec<String> = table
        .axes
        .iter()
        .map(|a| {
            settings
                .get(a)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let mut push = |job: &str, measure: String, unit: &'static str, value: f64| {
        table.rows.push(Row {
            point: index,
            settings: values.clone(),
            job: job.to_string(),
            measure,
            unit,
            value,
        });
    };
    let jobs = doc["result"]["jobs"]
        .as_array()
        .ok_or("no result.jobs: not a point result")?;
    for job in jobs {
        let name = job["jobname"].as_str().unwrap_or("");
        for dir in ["read", "write", "trim"] {
            let d = &job[dir];
            if d["total_ios"].as_u64().unwrap_or(0) == 0 {
                continue;
            }
            let num = |v: &Value| v.as_f64();
            let measures: [(&str, &'static str, Option<f64>); 6] = [
                ("iops", "IOPS", num(&d["iops"])),
                ("bw", "B/s", num(&d["bw_bytes"])),
                ("io", "B", num(&d["io_bytes"])),
                ("lat_mean", "ns", num(&d["lat_ns"]["mean"])),
                ("clat_mean", "ns", num(&d["clat_ns"]["mean"])),
                ("clat_max", "ns", num(&d["clat_ns"]["max"])),
            ];
            for (measure, unit, value) in measures {
                if let Some(v) = value {
                    push(name, format!("{dir}_{measure}"), unit, v);
                }
            }
            if let Some(p) = d["clat_ns"]["percentile"].as_object() {
                for (pct, v) in p {
                    if let (Some(v), Some(label)) = (v.as_f64(), percentile_label(pct)) {
                        push(name, format!("{dir}_clat_p{label}"), "ns", v);
                    }
                }
            }
        }
    }
    let flashlab = &doc["result"]["flashlab"];
    if let Some(counters) = flashlab
        .get("device_counters")
        .or_else(|| flashlab.get("system_counters"))
    {
        if let Some(wa) = counters["write_amplification"].as_f64() {
            push("device", "write_amplification".into(), "", wa);
        }
        // On a preconditioned drive the counters hold the preconditioning's writes too: the
        // job's own write amplification is that of the writes since it started.
        if let Some(wa) = run_write_amplification(&doc["precondition"], counters) {
            push("device", "run_write_amplification".into(), "", wa);
        }
        // A drive's health log, read as the type it was written from (a system has none).
        if let Some(health) = counters.get("health") {
            let health: flashlab_device::HealthLog = serde_json::from_value(health.clone())
                .map_err(|e| format!("result.flashlab.device_counters.health: {e}"))?;
            // The health log repeats the write amplification given above.
            for (key, v, unit) in health.figures() {
                if key != "write_amplification" {
                    push("device", key.to_string(), unit, v);
                }
            }
        }
    }
    Ok(())
}

/// NAND writes over host writes between the preconditioning's end (`pre`, a point's
/// `precondition` object) and the job's end (`counters`); `None` without a preconditioning
/// or host writes.
fn run_write_amplification(pre: &Value, counters: &Value) -> Option<f64> {
    let before = &pre.get("device_counters")?["ftl"];
    let after = &counters["ftl"];
    let delta = |key: &str| after[key].as_u64()?.checked_sub(before[key].as_u64()?);
    let host = delta("host_write_ius")?;
    (host > 0).then(|| delta("nand_write_ius").map(|nand| nand as f64 / host as f64))?
}

/// fio's `"99.990000"` → `99.99`.
fn percentile_label(key: &str) -> Option<String> {
    let p: f64 = key.parse().ok()?;
    Some(p.to_string())
}

/// How an axis column is typed in Parquet: as numbers when every value is one, so a reader
/// sorts and plots queue depths and spare factors as numbers (the CSV's readers infer this).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AxisKind {
    Int,
    Float,
    Text,
}

impl Table {
    fn axis_kind(&self, axis: usize) -> AxisKind {
        let values = || self.rows.iter().map(|r| r.settings[axis].as_str());
        if self.rows.is_empty() {
            AxisKind::Text
        } else if values().all(|v| v.parse::<i64>().is_ok()) {
            AxisKind::Int
        } else if values().all(|v| v.parse::<f64>().is_ok_and(f64::is_finite)) {
            AxisKind::Float
        } else {
            AxisKind::Text
        }
    }

    /// The table as a Parquet file (one row group; `point` as int64, each axis as int64 or
    /// double when every value is a number and as UTF-8 otherwise, the other strings as
    /// UTF-8, `value` as double), for pandas, Polars, R's arrow and DuckDB.
    pub fn to_parquet(&self) -> Result<Vec<u8>, String> {
        use parquet::basic::{ConvertedType, Repetition, Type as Physical};
        use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
        use parquet::file::properties::WriterProperties;
        use parquet::file::writer::SerializedFileWriter;
        use parquet::schema::types::Type;
        use std::sync::Arc;

        let err = |e: parquet::errors::ParquetError| format!("writing Parquet: {e}");
        let column = |name: &str, physical, text: bool| {
            let builder =
                Type::primitive_type_builder(name, physical).with_repetition(Repetition::REQUIRED);
            let builder = if text {
                builder.with_converted_type(ConvertedType::UTF8)
            } else {
                builder
            };
            builder.build().map(Arc::new)
        };
        let columns = self.columns();
        let last = columns.len() - 1;
        let kinds: Vec<AxisKind> = (0..self.axes.len()).map(|a| self.axis_kind(a)).collect();
        let kind_of = |i: usize| match i {
            i if (1..=self.axes.len()).contains(&i) => kinds[i - 1],
            _ => AxisKind::Text,
        };
        let fields = columns
            .iter()
            .enumerate()
            .map(|(i, name)| match (i, kind_of(i)) {
                (0, _) | (_, AxisKind::Int) => column(name, Physical::INT64, false),
                (i, _) if i == last => column(name, Physical::DOUBLE, false),
                (_, AxisKind::Float) => column(name, Physical::DOUBLE, false),
                (_, AxisKind::Text) => column(name, Physical::BYTE_ARRAY, true),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        let schema = Arc::new(
            Type::group_type_builder("sweep")
                .with_fields(fields)
                .build()
                .map_err(err)?,
        );
        let mut out = Vec::new();
        let mut writer =
            SerializedFileWriter::new(&mut out, schema, Arc::new(WriterProperties::new()))
                .map_err(err)?;
        let mut group = writer.next_row_group().map_err(err)?;
        let text_of = |i: usize, row: &Row| -> ByteArray {
            let axes = self.axes.len();
            let s = match i {
                i if i <= axes => row.settings[i - 1].as_str(),
                i if i == axes + 1 => row.job.as_str(),
                i if i == axes + 2 => row.measure.as_str(),
                _ => row.unit,
            };
            ByteArray::from(s)
        };
        let mut index = 0;
        while let Some(mut col) = group.next_column().map_err(err)? {
            let axis = |r: &Row| -> f64 { r.settings[index - 1].parse().unwrap_or_default() };
            if index == 0 {
                let v: Vec<i64> = self.rows.iter().map(|r| r.point as i64).collect();
                col.typed::<Int64Type>()
                    .write_batch(&v, None, None)
                    .map_err(err)?;
            } else if kind_of(index) == AxisKind::Int {
                // axis_kind checked that every value parses.
                let v: Vec<i64> = self
                    .rows
                    .iter()
                    .map(|r| r.settings[index - 1].parse().unwrap_or_default())
                    .collect();
                col.typed::<Int64Type>()
                    .write_batch(&v, None, None)
                    .map_err(err)?;
            } else if kind_of(index) == AxisKind::Float {
                let v: Vec<f64> = self.rows.iter().map(axis).collect();
                col.typed::<DoubleType>()
                    .write_batch(&v, None, None)
                    .map_err(err)?;
            } else if index == last {
                let v: Vec<f64> = self.rows.iter().map(|r| r.value).collect();
                col.typed::<DoubleType>()
                    .write_batch(&v, None, None)
                    .map_err(err)?;
            } else {
                let v: Vec<ByteArray> = self.rows.iter().map(|r| text_of(index, r)).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&v, None, None)
                    .map_err(err)?;
            }
            col.close().map_err(err)?;
            index += 1;
        }
        group.close().map_err(err)?;
        writer.close().map_err(err)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parquet_types_numeric_axes_as_numbers() {
        use parquet::basic::Type as Physical;
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let row = |point: u64, spare: &str, iu: &str, qd: &str| Row {
            point,
            settings: vec![spare.into(), iu.into(), qd.into()],
            job: "randwrite".into(),
            measure: "write_iops".into(),
            unit: "IOPS",
            value: 1.5,
        };
        let table = Table {
            axes: vec![
                "set.capacity.spare_factor".into(),
                "set.ftl.iu".into(),
                "env.QD".into(),
            ],
            rows: vec![row(0, "0.1", "4KiB", "1"), row(1, "0.2", "16KiB", "32")],
        };
        let path = std::env::temp_dir().join(format!("collect-{}.parquet", std::process::id()));
        std::fs::write(&path, table.to_parquet().unwrap()).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let types: Vec<Physical> = (0..schema.num_columns())
            .map(|i| schema.column(i).physical_type())
            .collect();
        let _ = std::fs::remove_file(&path);
        assert_eq!(
            types,
            [
                Physical::INT64,      // point
                Physical::DOUBLE,     // spare factor
                Physical::BYTE_ARRAY, // IU: "4KiB"
                Physical::INT64,      // QD
                Physical::BYTE_ARRAY,
                Physical::BYTE_ARRAY,
                Physical::BYTE_ARRAY,
                Physical::DOUBLE,
            ]
        );
    }
}
