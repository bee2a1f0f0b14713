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
#[pyo3(signature = (job, device=None, overrides=Vec::new(), seed=1, job_name=String::from("<job>")))]
fn run_json(
    py: Python<'_>,
    job: String,
    device: Option<String>,
    overrides: Vec<(String, String)>,
    seed: u64,
    job_name: String,
) -> PyResult<String> {
    let device = device.unwrap_or_else(|| flashlab_device::DEFAULT_DEVICE.to_string());
    py.detach(move || {
        let env = |name: &str| std::env::var(name).ok();
        let jobs = flashlab_workload::parse_str(&job, &job_name, &env).map_err(bad_input)?;
        let simulated = flashlab_host::simulate(&jobs, &device, &overrides, seed).map_err(
            |(is_bad_input, message)| {
                if is_bad_input {
                    bad_input(message)
                } else {
                    PyRuntimeError::new_err(message)
                }
            },
        )?;
        if let Some(errors) = simulated.io_errors {
            return Err(PyRuntimeError::new_err(errors));
        }
        Ok(flashlab_report::render_json(&simulated.result, false))
    })
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
    flashlab_sweep::check_plan(&plan).map_err(bad_input)?;
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
/// writes it).
#[pyfunction]
fn sweep_run_point(py: Python<'_>, plan: String, index: u64) -> PyResult<String> {
    py.detach(move || {
        let plan = flashlab_sweep::Plan::read(Path::new(&plan)).map_err(bad_input)?;
        let doc = flashlab_sweep::run_point(&plan, index).map_err(|e| {
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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_points, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run_point, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table_csv, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
