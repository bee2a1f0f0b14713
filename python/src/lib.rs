//! The native half of the `flashlab` Python package: the same library calls the `flashlab`
//! command makes, with the GIL released while a simulation runs. The Python half
//! (flashlab/__init__.py) gives them typed signatures and turns JSON into dicts and tables.

use std::path::Path;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

fn bad_input(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}

/// Run fio job text on a device; the fio JSON document as text.
#[pyfunction]
#[pyo3(signature = (job, device=None, overrides=Vec::new(), seed=1, job_name=String::from("<job>"), untimed=Vec::new()))]
fn run_json(
    py: Python<'_>,
    job: String,
    device: Option<String>,
    overrides: Vec<(String, String)>,
    seed: u64,
    job_name: String,
    untimed: Vec<String>,
) -> PyResult<String> {
    let device = device.unwrap_or_else(|| flashlab_device::DEFAULT_DEVICE.to_string());
    py.detach(move || {
        let env = |name: &str| std::env::var(name).ok();
        let jobs = flashlab_workload::parse_str(&job, &job_name, &env).map_err(bad_input)?;
        let simulated = flashlab_host::simulate(&jobs, &device, &overrides, seed, &untimed)
            .map_err(|(is_bad_input, message)| {
                if is_bad_input {
                    bad_input(message)
                } else {
                    PyRuntimeError::new_err(message)
                }
            })?;
        if let Some(errors) = simulated.io_errors {
            return Err(PyRuntimeError::new_err(errors));
        }
        let mut result = simulated.result;
        // What made the result, as the command's JSON has it.
        let described = device_provenance(&device, simulated.device_config)?;
        if let serde_json::Value::Object(extra) = &mut result.flashlab {
            extra.insert("provenance".into(), provenance(&overrides, vec![described]));
        }
        Ok(flashlab_report::render_json(&result, false))
    })
}

/// The provenance the command's JSON carries: the build, the overrides as `KEY=VALUE` and
/// each device.
fn provenance(
    overrides: &[(String, String)],
    devices: Vec<serde_json::Value>,
) -> serde_json::Value {
    let mut p = flashlab_sweep::provenance();
    p["overrides"] = overrides
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .into();
    p["devices"] = devices.into();
    p
}

/// A device as provenance names it: a drive's resolved configuration, a system's hash.
fn device_provenance(name: &str, config: serde_json::Value) -> PyResult<serde_json::Value> {
    if flashlab_system::is_system(name) {
        let system = flashlab_system::load_system_config(name).map_err(bad_input)?;
        return Ok(system_provenance(&system));
    }
    Ok(serde_json::json!({
        "name": config.get("name").cloned().unwrap_or_default(),
        "config": config,
    }))
}

fn system_provenance(config: &flashlab_system::SystemConfig) -> serde_json::Value {
    serde_json::json!({
        "name": config.name,
        "system_config_hash": format!("{:016x}", flashlab_system::system_config_hash(config)),
    })
}

/// A suite's message in Python's spelling: an option the command spells `--max-rounds` (or
/// `max-rounds`) is the keyword argument `max_rounds`.
fn python_spelling(message: &str) -> String {
    let mut longs: Vec<String> = flashlab_suite::SUITES
        .iter()
        .flat_map(|&k| flashlab_suite::options_of(k))
        .collect();
    longs.sort();
    longs.dedup();
    // Longest first: `--max-rounds` before a `--max` it begins with.
    longs.sort_by_key(|l| std::cmp::Reverse(l.len()));
    let mut out = message.to_string();
    for long in longs {
        let python = long.replace('-', "_");
        out = replace_word(&out, &format!("--{long}"), &python);
        if long.contains('-') {
            out = replace_word(&out, &long, &python);
        }
    }
    out
}

/// `text` with each occurrence of `word` that is not part of a longer name replaced.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let in_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        out.push_str(&rest[..at]);
        let after = rest[at + word.len()..].chars().next();
        let part_of_name = out.chars().last().is_some_and(in_name) || after.is_some_and(in_name);
        out.push_str(if part_of_name { word } else { with });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// An unknown suite with the nearest name and the list, as the command says it.
fn check_suite_name(name: &str) -> PyResult<()> {
    if flashlab_suite::suite(name).is_ok() {
        return Ok(());
    }
    let names: Vec<&str> = flashlab_suite::SUITES.iter().map(|k| k.name()).collect();
    Err(bad_input(format!(
        "unknown suite '{}'{}; valid suites: {}",
        flashlab_engine::input::excerpt(name),
        flashlab_engine::input::did_you_mean(name, names.iter().copied()),
        names.join(", ")
    )))
}

/// A device that does not load: an unknown name with the nearest preset, as the command
/// says it.
fn device_error(e: flashlab_device::ConfigError) -> PyErr {
    match e {
        flashlab_device::ConfigError::UnknownDevice { name, .. } => {
            bad_input(flashlab_system::unknown_device_message(&name))
        }
        e => bad_input(e),
    }
}

/// Every preset: (name, kind, summary), drives first.
#[pyfunction]
fn devices() -> PyResult<Vec<(String, String, String)>> {
    let mut all: Vec<(String, String, String)> = flashlab_device::preset_names()
        .into_iter()
        .map(|(n, s)| (n.to_string(), "drive".to_string(), s))
        .collect();
    for name in flashlab_system::system_preset_names() {
        let config = flashlab_system::load_system_config(name)
            .map_err(|e| PyRuntimeError::new_err(format!("built-in system preset {name}: {e}")))?;
        all.push((name.to_string(), "system".to_string(), config.description));
    }
    Ok(all)
}

fn read_plan(plan: &str) -> PyResult<flashlab_sweep::Plan> {
    let plan = flashlab_sweep::Plan::read(Path::new(plan)).map_err(bad_input)?;
    flashlab_sweep::check_plan(&plan, &flashlab_suite::SuitePreconditioner::default())
        .map_err(bad_input)?;
    Ok(plan)
}

/// The plan's points, checked: one list of (axis, value) pairs per point.
#[pyfunction]
fn sweep_points(py: Python<'_>, plan: String) -> PyResult<Vec<Vec<(String, String)>>> {
    py.detach(move || {
        let plan = read_plan(&plan)?;
        let count = plan.point_count().map_err(bad_input)?;
        (0..count)
            .map(|i| {
                let point = plan.point(i).map_err(bad_input)?;
                Ok(point
                    .settings
                    .into_iter()
                    .map(|(name, value)| (name, value.text))
                    .collect())
            })
            .collect()
    })
}

/// Run one point of a plan; its result document as JSON text (as `flashlab sweep --point`
/// writes it). A plan's `[precondition]` keeps its drives in `state_cache` (a directory;
/// `None`: precondition every time).
#[pyfunction]
#[pyo3(signature = (plan, index, state_cache=None))]
fn sweep_run_point(
    py: Python<'_>,
    plan: String,
    index: u64,
    state_cache: Option<String>,
) -> PyResult<String> {
    py.detach(move || {
        let plan = flashlab_sweep::Plan::read(Path::new(&plan)).map_err(bad_input)?;
        let pre = flashlab_suite::SuitePreconditioner {
            cache: state_cache.map(cache_in),
        };
        let doc = flashlab_sweep::run_point(&plan, index, &pre).map_err(|e| {
            if e.is_bad_input() {
                bad_input(e)
            } else {
                PyRuntimeError::new_err(e.to_string())
            }
        })?;
        serde_json::to_string_pretty(&doc).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    })
}

/// The tidy table of point results (JSON texts) as CSV, exactly as `flashlab sweep collect`
/// writes it.
#[pyfunction]
fn sweep_table_csv(py: Python<'_>, docs: Vec<String>) -> PyResult<String> {
    py.detach(move || {
        let docs = docs
            .iter()
            .map(|d| serde_json::from_str(d))
            .collect::<Result<Vec<serde_json::Value>, _>>()
            .map_err(bad_input)?;
        let table = flashlab_sweep::Table::from_docs(&docs).map_err(bad_input)?;
        Ok(table.to_csv())
    })
}

/// Run a built-in suite, as `flashlab suite NAME --device D ... --option value ...` does:
/// its JSON report (the command's `--output-format json`, provenance first) and its tidy CSV
/// (`--output-format tidy-csv`). `options` are (long name, value) pairs, built into the
/// suite's options by the suite crate from the command's own definitions.
#[pyfunction]
#[pyo3(signature = (name, devices=Vec::new(), overrides=Vec::new(), options=Vec::new(), state_cache=None))]
fn suite_run(
    py: Python<'_>,
    name: String,
    devices: Vec<String>,
    overrides: Vec<(String, String)>,
    options: Vec<(String, String)>,
    state_cache: Option<String>,
) -> PyResult<(String, String)> {
    py.detach(move || {
        check_suite_name(&name)?;
        let (kind, mut options) = flashlab_suite::options_from_pairs(&name, &options)
            .map_err(|e| bad_input(python_spelling(&e.to_string())))?;
        options.state_cache = state_cache.map(cache_in);
        let names = match kind.devices(&options) {
            Some((option, _)) if !devices.is_empty() => {
                return Err(bad_input(format!(
                    "{option} and device both name {}'s {option} drive; give one",
                    kind.name()
                )))
            }
            Some((_, named)) => named,
            None if !devices.is_empty() => devices,
            None => match kind.default_devices() {
                [] => vec![flashlab_device::DEFAULT_DEVICE.to_string()],
                names => names.iter().map(|n| n.to_string()).collect(),
            },
        };
        let mut targets = Vec::with_capacity(names.len());
        for n in &names {
            if flashlab_system::is_system(n) {
                if !overrides.is_empty() {
                    return Err(bad_input(format!(
                        "set applies to a single drive, and '{n}' is a system; in a system description put overrides in the drive's `set = {{...}}`"
                    )));
                }
                let config = flashlab_system::load_system_config(n).map_err(bad_input)?;
                targets.push(flashlab_suite::SuiteTarget::System(config));
            } else {
                let config =
                    flashlab_device::load_device_config(n, &overrides).map_err(device_error)?;
                targets.push(flashlab_suite::SuiteTarget::Drive(Box::new(config)));
            }
        }
        // A slice that would change the suite's figures runs again on one that keeps them,
        // as the command does.
        let mut named = flashlab_suite::NamedTargets {
            names,
            overrides: overrides.clone(),
            targets,
        };
        let on = flashlab_suite::On::Named {
            targets: &mut named,
            drives: 1,
        };
        let report = flashlab_suite::run(kind, on, &options, &|_, _| {})
            .map(|ran| ran.report)
            .map_err(|e| {
                if e.is_bad_input() {
                    bad_input(e)
                } else {
                    PyRuntimeError::new_err(e.to_string())
                }
            })?;
        // The devices as they ran (a drive run again on a larger slice, at that slice).
        let described: Vec<serde_json::Value> = named
            .targets
            .iter()
            .map(|t| match t {
                flashlab_suite::SuiteTarget::System(config) => system_provenance(config),
                flashlab_suite::SuiteTarget::Drive(config) => serde_json::json!({
                    "name": config.name,
                    "config": serde_json::to_value(config).unwrap_or_default(),
                }),
            })
            .collect();
        let provenance = provenance(&overrides, described);
        let rendered: serde_json::Value =
            serde_json::from_str(&flashlab_suite::render_json(&report))
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let mut doc = serde_json::Map::new();
        doc.insert("flashlab".into(), provenance);
        if let serde_json::Value::Object(rest) = rendered {
            doc.extend(rest);
        }
        let json = serde_json::to_string(&doc).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok((json, flashlab_suite::render_tidy_csv(&report)))
    })
}

/// The precondition cache in `dir`, keyed by this build.
fn cache_in(dir: String) -> flashlab_suite::StateCache {
    flashlab_suite::StateCache {
        dir: dir.into(),
        build_id: build_id(),
        max_bytes: flashlab_suite::DEFAULT_MAX_CACHE_BYTES,
    }
}

/// What identifies this build for the precondition cache: a hash of the extension's own
/// file (every change to the simulator changes it), found through the mapping that holds
/// this function's code; the version and commit when it cannot be read.
fn build_id() -> u64 {
    static ID: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *ID.get_or_init(read_build_id)
}

fn read_build_id() -> u64 {
    let here = read_build_id as *const () as usize;
    let from_file = || -> Option<u64> {
        let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
        let path = maps.lines().find_map(|line| {
            let mut fields = line.split_whitespace();
            let (lo, hi) = fields.next()?.split_once('-')?;
            let (lo, hi) = (
                usize::from_str_radix(lo, 16).ok()?,
                usize::from_str_radix(hi, 16).ok()?,
            );
            let path = fields.nth(4)?;
            (lo <= here && here < hi && path.starts_with('/')).then(|| path.to_string())
        })?;
        let file = std::fs::File::open(path).ok()?;
        flashlab_engine::state::Checksum::of_reader(file).ok()
    };
    from_file().unwrap_or_else(|| {
        let mut sum = flashlab_engine::state::Checksum::new();
        sum.update(flashlab_sweep::provenance().to_string().as_bytes());
        sum.finish()
    })
}

/// The options suite `name` takes, from their definitions (as `flashlab suite NAME --help`
/// lists them): `(option, value form, default, help, scope)`, the option in Python's
/// spelling (`max_rounds`), scope `every`, `own` or `shared`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn suite_options(
    name: String,
) -> PyResult<Vec<(String, Option<String>, Option<String>, String, String)>> {
    check_suite_name(&name)?;
    let kind = flashlab_suite::suite(&name).map_err(|e| bad_input(e.to_string()))?;
    Ok(flashlab_suite::option_table(kind)
        .into_iter()
        .map(|row| {
            let scope = match row.scope {
                flashlab_suite::OptionScope::Every => "every",
                flashlab_suite::OptionScope::Own => "own",
                flashlab_suite::OptionScope::Shared => "shared",
            };
            (
                row.long.replace('-', "_"),
                row.value,
                row.default,
                row.help,
                scope.to_string(),
            )
        })
        .collect())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_points, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run_point, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table_csv, m)?)?;
    m.add_function(wrap_pyfunction!(suite_run, m)?)?;
    m.add_function(wrap_pyfunction!(suite_options, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
