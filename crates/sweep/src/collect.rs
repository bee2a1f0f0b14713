//! A directory of point results → one tidy table: one row per point × job × measure, with
//! every axis, the unit and the value as columns (what pandas, R and spreadsheets pivot).

use std::fmt::Write as _;
use std::path::Path;

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

/// Read every `point-*.json` in `dir`, in point order.
pub fn collect_dir(dir: &Path) -> Result<Table, SweepError> {
    let io = |e: std::io::Error| SweepError::Io(format!("reading {}: {e}", dir.display()));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(index) = name
            .strip_prefix("point-")
            .and_then(|rest| rest.strip_suffix(".json"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            files.push((index, entry.path()));
            if files.len() > MAX_POINT_FILES {
                return Err(SweepError::Io(format!(
                    "{} holds more than {MAX_POINT_FILES} point files",
                    dir.display()
                )));
            }
        }
    }
    if files.is_empty() {
        return Err(SweepError::Io(format!(
            "{} holds no point results (point-NNNNNN.json): run the sweep into it first",
            dir.display()
        )));
    }
    files.sort();
    let mut table = Table {
        axes: Vec::new(),
        rows: Vec::new(),
    };
    for (index, path) in files {
        let text = crate::read_bounded(&path, MAX_POINT_FILE_BYTES).map_err(SweepError::Io)?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| SweepError::Io(format!("{}: not a point result: {e}", path.display())))?;
        add_point(&mut table, index, &doc)
            .map_err(|m| SweepError::Io(format!("{}: {m}", path.display())))?;
    }
    Ok(table)
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
        if let Some(health) = counters["health"].as_object() {
            // The health log repeats the write amplification given above.
            for (key, v) in health.iter().filter(|(k, _)| *k != "write_amplification") {
                if let Some(v) = v.as_f64() {
                    push("device", key.clone(), health_unit(key), v);
                }
            }
        }
    }
    Ok(())
}

/// fio's `"99.990000"` → `99.99`.
fn percentile_label(key: &str) -> Option<String> {
    let p: f64 = key.parse().ok()?;
    Some(p.to_string())
}

fn health_unit(key: &str) -> &'static str {
    if key.ends_with("_bytes") {
        "B"
    } else if key.ends_with("_ns") {
        "ns"
    } else if key.ends_with("_percent") || key.starts_with("percentage") {
        "%"
    } else if key.ends_with("_days") {
        "days"
    } else if key.ends_with("_c") {
        "C"
    } else {
        ""
    }
}

impl Table {
    /// The table as a Parquet file (one row group; strings as UTF-8, `point` as int64,
    /// `value` as double), for pandas, Polars, R's arrow and DuckDB.
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
        let fields = columns
            .iter()
            .enumerate()
            .map(|(i, name)| match i {
                0 => column(name, Physical::INT64, false),
                i if i == last => column(name, Physical::DOUBLE, false),
                _ => column(name, Physical::BYTE_ARRAY, true),
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
            if index == 0 {
                let v: Vec<i64> = self.rows.iter().map(|r| r.point as i64).collect();
                col.typed::<Int64Type>()
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
