//! A suite on devices given by name, run again on a larger slice when the slice it was given
//! would change its figures: a die cut a step's job would feel ([`RunError::DieCut`]), or a
//! capacity cut the suite refuses ([`SuiteError::SliceCut`]). The one path the `flashlab
//! suite` command and the Python package take ([`crate::On::Named`]), so both give the same report for the same
//! request.

use flashlab_device::values::ScaleSetting;
use flashlab_device::DeviceConfig;
use flashlab_runner::{RunError, FAITHFUL_BLOCKS_PER_PLANE};

use crate::{SuiteError, SuiteReport, SuiteTarget};

/// Devices as named (a preset or a description file), each loaded with `overrides`: what a
/// run on a larger slice loads again, with `sim.scale` added to the overrides.
#[derive(Debug, Clone)]
pub struct NamedTargets {
    /// As given (`--device`): a preset name or a file's path.
    pub names: Vec<String>,
    /// Device key overrides of every drive (`--set`); a system takes none.
    pub overrides: Vec<(String, String)>,
    /// `names` loaded, in order.
    pub targets: Vec<SuiteTarget>,
}

/// Runs the suite fresh once more at most per kind of refusal: a die cut, then a capacity cut
/// (a drive on the slice that keeps the answer first back on its `"auto"` slice).
const MAX_RUNS: usize = 4;

/// Relative slack under which a drive's slice counts as already large enough (the scale a
/// slice is built at is its block count's share, a hair off the `sim.scale` asked for).
const SCALE_SLACK: f64 = 1e-6;

/// `run_drives` on `named`'s targets (each as `drives` identical drives); when the run is
/// refused because a drive's slice would change a figure, the drives whose slice is too
/// small are loaded again at the smallest `sim.scale` that keeps the figures
/// (`named.targets` then holds them), the run starts over, the device reports' scale note
/// says why and so does a line on standard error. A refusal that no larger slice answers (a system, a drive already whole)
/// is returned as the error it is.
///
/// For a suite that does not size its slice itself and no `sim.scale` among the
/// overrides, a drive of more blocks per plane than a faithful slice needs runs first on the
/// smallest slice that keeps the answer ([`answer_keeping_scale`]) rather than whole or on
/// the largest slice that fits `sim.max_memory`; for a suite with a
/// [`crate::Suite::slice_caution`], only a drive too large to simulate whole does. A drive
/// that runs on a slice hears the caution before the run, and its report keeps it.
pub fn keeping_figures(
    named: &mut NamedTargets,
    drives: usize,
    kind: crate::SuiteKind,
    run_drives: &dyn Fn(&[SuiteTarget]) -> Result<SuiteReport, SuiteError>,
) -> Result<SuiteReport, SuiteError> {
    let answer_slice = !kind.sizes_its_slice();
    let caution = kind.slice_caution();
    let count = named.targets.len();
    // Per target: the `sim.scale` it is loaded at beyond the overrides, and why.
    let mut scales: Vec<Option<f64>> = vec![None; count];
    let mut notes: Vec<Vec<String>> = vec![Vec::new(); count];
    // Per target: the drive as `"auto"` loads it, where it runs on a smaller slice.
    let mut auto_slices = if answer_slice {
        answer_slices(named, caution.is_none(), &mut notes)
    } else {
        vec![None; count]
    };
    let mut reasons: Vec<String> = vec![String::new(); count];
    let mut said = Vec::new();
    say_slice_notes(named, caution, &mut said);
    let mut outcome = run_drives(&named.targets);
    for _ in 1..MAX_RUNS {
        let Some(refusal) = refusal(&outcome) else {
            break;
        };
        let mut changed = false;
        let mut reverted = Vec::new();
        for (i, target) in named.targets.iter().enumerate() {
            let SuiteTarget::Drive(config) = target else {
                continue;
            };
            let Ok(model) = config.resolve() else {
                continue;
            };
            let simulated = 1.0 / model.scale.capacity_factor;
            let (scale, reason, note, line) = match &refusal {
                Refusal::Dies(why) => {
                    let Some(all_dies) = model.scale.all_dies_scale else {
                        continue;
                    };
                    if model.scale.die_factor <= 1.0 {
                        continue;
                    }
                    (
                        all_dies,
                        format!(
                            "the slice keeps 1/{:.2} of the dies, and {why}",
                            model.scale.die_factor
                        ),
                        format!("every die simulated: no die cut, as {why}"),
                        format!(
                            "no die cut: {why}; simulated with every die (sim.scale={all_dies})"
                        ),
                    )
                }
                Refusal::Capacity { why, scale } => {
                    if simulated >= scale * (1.0 - SCALE_SLACK) {
                        continue;
                    }
                    if let Some(auto) = auto_slices[i].take() {
                        // The suite's own rule wants more than the smallest slice: back
                        // to the one it ran on before, which its rule was sized against.
                        eprintln!(
                            "{}: no capacity cut: {why}; simulated at sim.scale=auto",
                            named.names[i]
                        );
                        notes[i] = vec![format!(
                            "no capacity cut, as {why}: simulated at sim.scale=auto"
                        )];
                        reverted.push((i, auto));
                        changed = true;
                        continue;
                    }
                    (
                        *scale,
                        format!("no capacity cut, as {why}"),
                        format!("no capacity cut, as {why}: simulated at sim.scale={scale}"),
                        format!("no capacity cut: {why}; simulated at sim.scale={scale}"),
                    )
                }
            };
            if scales[i].is_some_and(|s| s >= scale) {
                continue;
            }
            scales[i] = Some(scale);
            notes[i].push(note);
            reasons[i] = reason;
            eprintln!("{}: {line}", named.names[i]);
            changed = true;
        }
        if !changed {
            break;
        }
        for (i, auto) in reverted {
            named.targets[i] = SuiteTarget::Drive(auto);
        }
        reload_at(named, &scales, &reasons)?;
        say_slice_notes(named, caution, &mut said);
        outcome = run_drives(&named.targets);
    }
    let mut report = outcome?;
    if let Some(caution) = caution {
        for (i, target) in named.targets.iter().enumerate() {
            if matches!(target, SuiteTarget::Drive(config) if is_sliced(config)) {
                notes[i].push(caution.to_string());
            }
        }
    }
    add_scale_notes(&mut report, &notes, drives);
    Ok(report)
}

/// Adds each target's `notes` to the scale note of its devices' reports: one per drive, and
/// with several drives their aggregate.
fn add_scale_notes(report: &mut SuiteReport, notes: &[Vec<String>], drives: usize) {
    let per_target = if drives <= 1 { 1 } else { drives + 1 };
    for (i, device) in report.devices.iter_mut().enumerate() {
        let Some(added) = notes.get(i / per_target).filter(|n| !n.is_empty()) else {
            continue;
        };
        let added = added.join("; ");
        device.scale_note = Some(match device.scale_note.take() {
            Some(s) => format!("{s}; {added}"),
            None => added,
        });
    }
}

/// Loads each drive of `named` with a scale in `scales` again at that `sim.scale` beside
/// the overrides (`reasons`: why, for the error where it does not load).
fn reload_at(
    named: &mut NamedTargets,
    scales: &[Option<f64>],
    reasons: &[String],
) -> Result<(), SuiteError> {
    for (i, scale) in scales.iter().enumerate() {
        let Some(scale) = scale else { continue };
        if !matches!(named.targets[i], SuiteTarget::Drive(_)) {
            continue;
        }
        let mut overrides = named.overrides.clone();
        overrides.push(("sim.scale".to_string(), scale.to_string()));
        let name = &named.names[i];
        let config = flashlab_device::load_device_config(name, &overrides).map_err(|e| {
            SuiteError::Rescaled {
                device: name.clone(),
                why: reasons[i].clone(),
                scale: *scale,
                error: e.to_string(),
            }
        })?;
        named.targets[i] = SuiteTarget::Drive(Box::new(config));
    }
    Ok(())
}

/// Each drive of `named` that `"auto"` would simulate larger than the slice that keeps the
/// answer ([`answer_keeping_scale`]) set to that slice, unless `sim.scale` is among the
/// overrides, with a note and a line on standard error; per target, the drive as it was.
/// Without `slice_whole` (a suite whose figures a capacity slice moves, `slice_caution`) a
/// drive that `"auto"` runs whole stays whole.
fn answer_slices(
    named: &mut NamedTargets,
    slice_whole: bool,
    notes: &mut [Vec<String>],
) -> Vec<Option<Box<DeviceConfig>>> {
    let mut auto = vec![None; named.targets.len()];
    if named.overrides.iter().any(|(k, _)| k == "sim.scale") {
        return auto;
    }
    for (i, target) in named.targets.iter_mut().enumerate() {
        let SuiteTarget::Drive(config) = target else {
            continue;
        };
        let Some(scale) = answer_keeping_scale(config) else {
            continue;
        };
        let auto_is_whole = !is_sliced(config);
        if auto_is_whole && !slice_whole {
            continue;
        }
        auto[i] = Some(config.clone());
        config.sim.scale = ScaleSetting::Fraction(scale);
        let auto_slice = if auto_is_whole {
            "the whole drive"
        } else {
            "the largest that fits sim.max_memory"
        };
        let why = format!(
            "the smallest slice that keeps the answer (every die, at least \
             {FAITHFUL_BLOCKS_PER_PLANE} blocks per plane): simulated at sim.scale={scale} \
             (sim.scale=auto: {auto_slice})"
        );
        eprintln!("{}: {why}", named.names[i]);
        notes[i].push(why);
    }
    auto
}

/// Says on standard error, before a run, what each drive's slice does to random writes
/// (`flashlab_runner::blocks_per_plane_note`: most suites precondition or measure with
/// them) and, on any slice, the suite's `caution`, once per drive and slice (`said`).
fn say_slice_notes(named: &NamedTargets, caution: Option<&str>, said: &mut Vec<String>) {
    for (name, target) in named.names.iter().zip(&named.targets) {
        let SuiteTarget::Drive(config) = target else {
            continue;
        };
        let Ok(model) = config.resolve() else {
            continue;
        };
        let shape = slice_shape(&model);
        let random_writes = flashlab_runner::blocks_per_plane_note(&shape)
            .map(|note| format!("{name}: slice: random writes on {note}"));
        let suite = caution
            .filter(|_| model.scale.capacity_factor > 1.0)
            .map(|c| format!("{name}: slice: {c}"));
        for line in random_writes.into_iter().chain(suite) {
            if !said.contains(&line) {
                eprintln!("{line}");
                said.push(line);
            }
        }
    }
}

/// Whether `config` simulates less than the whole drive's capacity.
fn is_sliced(config: &DeviceConfig) -> bool {
    config
        .resolve()
        .is_ok_and(|m| m.scale.capacity_factor > 1.0)
}

/// Why a run was refused for its slice.
enum Refusal {
    /// A step's job would feel the die cut (why).
    Dies(String),
    /// The suite's figures need a slice of at least `scale`.
    Capacity { why: String, scale: f64 },
}

fn refusal(outcome: &Result<SuiteReport, SuiteError>) -> Option<Refusal> {
    match outcome {
        Err(SuiteError::Run { error, .. }) => match error.as_ref() {
            RunError::DieCut { why } => Some(Refusal::Dies(why.clone())),
            _ => None,
        },
        Err(SuiteError::SliceCut { why, scale, .. }) => Some(Refusal::Capacity {
            why: why.clone(),
            scale: *scale,
        }),
        _ => None,
    }
}

/// The slice `model` simulates, as the runner's cautions read it.
pub fn slice_shape(model: &flashlab_device::Model) -> flashlab_runner::SliceShape {
    flashlab_runner::SliceShape {
        capacity_factor: model.scale.capacity_factor,
        die_factor: model.scale.die_factor,
        blocks_per_plane: (model.geometry.blocks_per_plane, model.full.blocks_per_plane),
        channels: (model.geometry.channels, model.full.channels),
        all_dies_scale: model.scale.all_dies_scale,
        slc_cache: model.ftl.slc.dynamic || model.ftl.slc.static_blocks > 0,
    }
}

/// The smallest `sim.scale` that keeps a suite's answer: every die, and at least
/// [`FAITHFUL_BLOCKS_PER_PLANE`] blocks per plane, from which greedy GC's choice of victims
/// and a fill's transient are the drive's within about 1-4% (docs/scale.md, "Blocks per
/// plane"). More blocks per plane cost memory and time, not figures, so a drive that
/// `sim.scale = "auto"` runs whole is sliced too where it has more. `None` where the
/// drive has no more blocks per plane than that, where its `"auto"` slice is no larger
/// (or cuts dies), or where `sim.scale` is given.
pub fn answer_keeping_scale(config: &DeviceConfig) -> Option<f64> {
    if config.sim.scale != ScaleSetting::Auto {
        return None;
    }
    let model = config.resolve().ok()?;
    let (slice, full) = (&model.geometry, &model.full);
    if slice.channels != full.channels {
        // The auto slice cuts dies already: a slice keeping them all does not fit.
        return None;
    }
    let want = FAITHFUL_BLOCKS_PER_PLANE.min(full.blocks_per_plane);
    if slice.blocks_per_plane <= want {
        return None;
    }
    let all_dies = model.scale.all_dies_scale?;
    let share = f64::from(want) / f64::from(full.blocks_per_plane);
    // Rounded up as `sim.scale` prints (4 decimals), so the slice has `want` blocks or more.
    let scale = ((share * 1e4).ceil() / 1e4).max(all_dies);
    let mut c = config.clone();
    c.sim.scale = ScaleSetting::Fraction(scale);
    let m = c.resolve().ok()?;
    let keeps = m.geometry.channels == full.channels
        && m.geometry.blocks_per_plane >= want
        && m.geometry.blocks_per_plane < slice.blocks_per_plane;
    keeps.then_some(scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_device::load_device_config;

    fn load(name: &str, sets: &[(&str, &str)]) -> DeviceConfig {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        load_device_config(name, &sets).unwrap()
    }

    #[test]
    fn a_sliced_drive_runs_on_the_smallest_slice_that_keeps_the_answer() {
        let drive = load("solidigm-d5-p5430-15.36tb", &[]);
        let auto = drive.resolve().unwrap();
        let scale = answer_keeping_scale(&drive).expect("the auto slice is larger");
        let mut c = drive.clone();
        c.sim.scale = ScaleSetting::Fraction(scale);
        let m = c.resolve().unwrap();
        assert_eq!(m.geometry.channels, m.full.channels);
        assert_eq!(m.geometry.dies_per_channel, m.full.dies_per_channel);
        assert_eq!(m.geometry.blocks_per_plane, FAITHFUL_BLOCKS_PER_PLANE);
        assert!(m.geometry.blocks_per_plane < auto.geometry.blocks_per_plane);
        // A drive that `"auto"` runs whole is sliced as well where it has more blocks per
        // plane than the slice needs; one with fewer runs whole.
        let default_drive = load("generic-tlc-256gb", &[]);
        let whole = default_drive.resolve().unwrap();
        assert_eq!(whole.geometry.blocks_per_plane, whole.full.blocks_per_plane);
        let scale = answer_keeping_scale(&default_drive).expect("700 blocks per plane");
        let mut c = default_drive.clone();
        c.sim.scale = ScaleSetting::Fraction(scale);
        let m = c.resolve().unwrap();
        assert_eq!(m.geometry.blocks_per_plane, FAITHFUL_BLOCKS_PER_PLANE);
        assert_eq!(m.geometry.channels, whole.full.channels);
        assert_eq!(m.geometry.dies_per_channel, whole.full.dies_per_channel);
        assert_eq!(answer_keeping_scale(&load("tiny-test-1gb", &[])), None);
        // A slice the user names is kept.
        let named = load("solidigm-d5-p5430-15.36tb", &[("sim.scale", "0.09")]);
        assert_eq!(answer_keeping_scale(&named), None);
        // An auto slice that is smaller already (a tighter memory budget) is kept.
        let small = load("solidigm-d5-p5430-15.36tb", &[("sim.max_memory", "1GiB")]);
        assert_eq!(answer_keeping_scale(&small), None);
    }
}
