//! `flashlab devices describe NAME|FILE`: a description's keys (an SSD, a system, or a hard
//! disk or 3D XPoint drive), each with its value and where it came from (its `[provenance]`
//! entry), and the preset's validation status: its independent validation rows
//! (jobs/validation/rows.toml) passing or missing, and the figures it was calibrated to
//! (jobs/validation/fitted.toml).

use anyhow::anyhow;
use flashlab_device::provenance::{describe_keys, read_provenance, set_keys};
use flashlab_device::{DescribedKey, KeyOrigin, ProvenanceKind};
use serde_json::json;

use crate::{bad_input, run_failed, Failure};

const ROWS: &str = include_str!("../../../jobs/validation/rows.toml");
const FITTED: &str = include_str!("../../../jobs/validation/fitted.toml");

/// What `describe` shows of a description: an SSD's, a system's or a hard disk or 3D XPoint
/// drive's.
struct Described {
    name: String,
    file: String,
    description: String,
    keys: Vec<DescribedKey>,
}

/// One validation row on the drive (directly or as a member of a system).
struct RowStatus {
    name: String,
    /// The device the row runs on: the preset, or the system it is a member of.
    device: String,
    published: f64,
    unit: String,
    model: f64,
    tolerance: f64,
    /// `None`: within tolerance; `Some(reason)`: a known miss.
    miss: Option<String>,
}

/// One figure the preset was fitted or calibrated to.
struct Calibrated {
    figure: String,
    value: f64,
    unit: String,
    how: String,
}

/// The preset (or system) name of a rows.toml `device` path.
fn device_name(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".toml").unwrap_or(file)
}

/// Whether the device a row runs on is `preset` or a system with it as a drive.
fn runs_on(device: &str, preset: &str) -> bool {
    let name = device_name(device);
    if name == preset {
        return true;
    }
    let Some((_, text, _)) = flashlab_system::preset_source(name) else {
        return false;
    };
    let drives = text
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("drive").and_then(|d| d.as_table()).cloned());
    drives
        .into_iter()
        .flatten()
        .any(|(_, d)| d.get("preset").and_then(|p| p.as_str()) == Some(preset))
}

fn num(t: &toml::Table, key: &str) -> f64 {
    t.get(key)
        .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
        .unwrap_or(f64::NAN)
}

fn text(t: &toml::Table, key: &str) -> String {
    t.get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

/// The rows of `doc`'s `[[run]]` and `[[command]]` entries that run on `preset`.
fn rows_of(doc: &toml::Table, preset: &str) -> Vec<RowStatus> {
    let mut out = Vec::new();
    for group in ["run", "command"] {
        let entries = doc.get(group).and_then(|v| v.as_array());
        for entry in entries.into_iter().flatten().filter_map(|e| e.as_table()) {
            let mut devices: Vec<String> = entry
                .get("devices")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|d| d.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            devices.extend(
                entry
                    .get("device")
                    .and_then(|d| d.as_str())
                    .map(str::to_string),
            );
            let rows = entry.get("row").and_then(|v| v.as_array());
            for device in devices.iter().filter(|d| runs_on(d, preset)) {
                // A run of several devices gives each row's device as its `series`.
                let of_device = |r: &&toml::Table| {
                    devices.len() == 1
                        || r.get("series").and_then(|s| s.as_str()) == Some(device_name(device))
                };
                for row in rows
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.as_table())
                    .filter(of_device)
                {
                    out.push(RowStatus {
                        name: text(row, "name"),
                        device: device_name(device).to_string(),
                        published: num(row, "published"),
                        unit: text(row, "unit"),
                        model: num(row, "model"),
                        tolerance: num(row, "tolerance"),
                        miss: row.get("known_miss").map(|_| {
                            format!(
                                "known miss ({}): {}",
                                text(row, "miss"),
                                text(row, "known_miss")
                            )
                        }),
                    });
                }
            }
        }
    }
    out
}

fn calibrated_of(doc: &toml::Table, preset: &str) -> Vec<Calibrated> {
    let presets = doc.get("preset").and_then(|v| v.as_array());
    presets
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_table())
        .filter(|p| text(p, "name") == preset)
        .flat_map(|p| {
            p.get("fitted")
                .and_then(|f| f.as_array())
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|f| f.as_table().cloned())
        .map(|f| Calibrated {
            figure: text(&f, "figure"),
            value: num(&f, "value"),
            unit: text(&f, "unit"),
            how: text(&f, "how"),
        })
        .collect()
}

fn parse(doc: &str, name: &str) -> Result<toml::Table, Failure> {
    doc.parse()
        .map_err(|e| run_failed(anyhow!("built-in {name} is not valid TOML: {e}")))
}

/// A figure as people read it: thousands separated, three significant digits below 100.
fn figure(x: f64) -> String {
    if x.abs() >= 100.0 {
        let digits = format!("{:.0}", x.abs());
        let mut s = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                s.push(',');
            }
            s.push(c);
        }
        if x < 0.0 {
            s.insert(0, '-');
        }
        s
    } else {
        format!("{}", (x * 100.0).round() / 100.0)
    }
}

/// The keys grouped by origin, in the order of [`ProvenanceKind::ALL`], then `--set` and
/// keys without provenance.
fn groups(d: &Described) -> Vec<(&'static str, Vec<&DescribedKey>)> {
    let mut names: Vec<&'static str> = ProvenanceKind::ALL.iter().map(|k| k.name()).collect();
    names.push(KeyOrigin::CommandLine.group());
    names.push(KeyOrigin::Unrecorded.group());
    names
        .into_iter()
        .map(|g| {
            (
                g,
                d.keys
                    .iter()
                    .filter(|k| k.origin.group() == g)
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, keys)| !keys.is_empty())
        .collect()
}

fn row_line(r: &RowStatus) -> String {
    let err = (r.model / r.published - 1.0) * 100.0;
    let status = match &r.miss {
        None => format!("pass (±{:.0}%)", r.tolerance * 100.0),
        Some(m) => m.clone(),
    };
    format!(
        "  {} on {}: published {} {}, model {} ({:+.0}%): {}\n",
        r.name,
        r.device,
        figure(r.published),
        r.unit,
        figure(r.model),
        err,
        status
    )
}

fn render_text(d: &Described, rows: &[RowStatus], calibrated: &[Calibrated]) -> String {
    let mut s = format!("{} ({})\n{}\n", d.name, d.file, d.description);
    let groups = groups(d);
    let counts: Vec<String> = groups
        .iter()
        .map(|(g, keys)| format!("{g} {}", keys.len()))
        .collect();
    s.push_str(&format!(
        "\nkeys: {} ({})\n",
        d.keys.len(),
        counts.join(", ")
    ));
    for (g, keys) in &groups {
        s.push_str(&format!("{g} ({}):\n", keys.len()));
        for k in keys {
            let why = match &k.origin {
                KeyOrigin::Recorded(p) => format!("  {}", p.summary()),
                _ => String::new(),
            };
            s.push_str(&format!("  {} = {}{why}\n", k.key, k.value));
        }
    }
    let passing = rows.iter().filter(|r| r.miss.is_none()).count();
    s.push_str(&format!(
        "\nvalidation (jobs/validation/rows.toml): {} independent rows: {passing} passing, {} failing (known misses)\n",
        rows.len(),
        rows.len() - passing
    ));
    for r in rows {
        s.push_str(&row_line(r));
    }
    s.push_str(&format!(
        "calibrated to (jobs/validation/fitted.toml): {} figures\n",
        calibrated.len()
    ));
    for c in calibrated {
        s.push_str(&format!(
            "  {} {} {} ({})\n",
            figure(c.value),
            c.unit,
            c.figure,
            c.how
        ));
    }
    s
}

fn render_json(d: &Described, rows: &[RowStatus], calibrated: &[Calibrated]) -> serde_json::Value {
    let counts: serde_json::Map<String, serde_json::Value> = groups(d)
        .iter()
        .map(|(g, keys)| (g.to_string(), json!(keys.len())))
        .collect();
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            json!({
                "name": r.name, "device": r.device, "published": r.published, "unit": r.unit,
                "model": r.model, "tolerance": r.tolerance, "passing": r.miss.is_none(),
                "known_miss": r.miss,
            })
        })
        .collect();
    let calibrated: Vec<serde_json::Value> = calibrated
        .iter()
        .map(|c| json!({ "figure": c.figure, "value": c.value, "unit": c.unit, "how": c.how }))
        .collect();
    let passing = rows.iter().filter(|r| r["passing"] == true).count();
    json!({
        "name": d.name,
        "file": d.file,
        "description": d.description,
        "counts": counts,
        "keys": d.keys,
        "validation": {
            "rows": rows.len(), "passing": passing, "failing": rows.len() - passing,
            "independent_rows": rows, "calibrated": calibrated,
        },
    })
}

/// A built-in system or hard disk / 3D XPoint drive preset, its keys with their provenance.
fn describe_source(name: &str, sets: &[String]) -> Result<Option<Described>, Failure> {
    let Some((file, source, depth)) = flashlab_system::preset_source(name) else {
        return Ok(None);
    };
    if !sets.is_empty() {
        return Err(bad_input(anyhow!(
            "--set changes an SSD's keys; {name} is a storage system or a hard disk or 3D XPoint drive preset"
        )));
    }
    let table: toml::Table = source
        .parse()
        .map_err(|e| run_failed(anyhow!("built-in {file} is not valid TOML: {e}")))?;
    let provenance = read_provenance(
        &file,
        source,
        table.get("provenance"),
        &set_keys(&table, depth),
    )
    .map_err(|e| run_failed(anyhow!(e)))?;
    Ok(Some(Described {
        name: name.to_string(),
        description: text(&table, "description"),
        keys: describe_keys(&table, depth, &provenance, &[]),
        file,
    }))
}

/// An SSD preset or drive file, with `--set` applied.
fn describe_ssd(name: &str, sets: &[String]) -> Result<Described, Failure> {
    if flashlab_system::is_system(name) {
        return Err(bad_input(anyhow!(
            "{name} is a storage system file; `devices describe` takes a preset of `flashlab devices` or a drive TOML file"
        )));
    }
    let sets = crate::parse_sets(sets)?;
    let d = flashlab_device::load_device_described(name, &sets)
        .map_err(|e| bad_input(crate::hints::device_error(e)))?;
    Ok(Described {
        name: d.config.name,
        file: d.file,
        description: d.config.description,
        keys: d.keys,
    })
}

/// `devices describe`: the text (or JSON) for one preset or drive file.
pub(crate) fn describe(name: &str, sets: &[String], json: bool) -> Result<String, Failure> {
    let d = match describe_source(name, sets)? {
        Some(d) => d,
        None => describe_ssd(name, sets)?,
    };
    // Validation data are a built-in preset's: a file of the same name is another drive.
    let (rows, calibrated) = if d.file.starts_with("presets/") {
        (
            rows_of(&parse(ROWS, "jobs/validation/rows.toml")?, &d.name),
            calibrated_of(&parse(FITTED, "jobs/validation/fitted.toml")?, &d.name),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    if json {
        let mut s = serde_json::to_string_pretty(&render_json(&d, &rows, &calibrated))
            .map_err(|e| run_failed(anyhow!(e)))?;
        s.push('\n');
        Ok(s)
    } else {
        Ok(render_text(&d, &rows, &calibrated))
    }
}
