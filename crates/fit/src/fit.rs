//! The fit: closed forms give a first drive from the measured figures; the simulator, run
//! on the plan as a forward model, refines it. Each refinement step simulates the plan on a
//! candidate, compares its figures with the measured ones and moves each parameter by the
//! figure it governs (a latency by the difference, a rate or a size by the ratio).
//! Candidates of every structure (dynamic or static cache, direct or folding, read priority
//! or not) run on threads; the best two go on. The same figures give the same drive.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::measure::{read_simulated, Figures, Source};
use crate::params::{class, Cache, Params};
use crate::plan::{Plan, BEFORE_FILL_BYTES};
use crate::simrun::run_plan;
use crate::FitError;

/// How a fit runs.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// Seed of every forward-model simulation.
    pub seed: u64,
    /// Refinement steps of every candidate before the best two are kept.
    pub first_steps: u32,
    /// Further steps of the best two.
    pub more_steps: u32,
    /// Threads the candidates run on.
    pub threads: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            seed: 1,
            first_steps: 2,
            more_steps: 6,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// One compared figure: which job, what, measured and fitted, and whether the fit used it.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    pub job: String,
    pub figure: String,
    pub measured: f64,
    pub fitted: f64,
    /// The fit moved a parameter by it (false: a held-out job).
    pub used: bool,
}

impl Compared {
    /// Relative error of the fitted figure (NaN when either is missing).
    pub fn error(&self) -> f64 {
        (self.fitted - self.measured) / self.measured
    }
}

/// A fit's result.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub params: Params,
    /// The closed forms' drive, before refinement.
    pub initial: Params,
    pub measured: Figures,
    /// The plan simulated on the fitted drive.
    pub simulated: Figures,
    pub compared: Vec<Compared>,
    /// Every candidate's label and best error (mean |log ratio| of the used figures).
    pub candidates: Vec<(String, f64)>,
    /// Forward-model simulations run.
    pub simulations: u32,
}

impl Fitted {
    /// Mean absolute relative error of the used (`true`) or held-out (`false`) figures.
    pub fn mean_error(&self, used: bool) -> f64 {
        let e: Vec<f64> = self
            .compared
            .iter()
            .filter(|c| c.used == used && c.error().is_finite())
            .map(|c| c.error().abs())
            .collect();
        e.iter().sum::<f64>() / e.len().max(1) as f64
    }
}

/// Fits a drive to `measured`, the outputs of `plan`.
pub fn fit(plan: &Plan, measured: &Figures, options: &FitOptions) -> Result<Fitted, FitError> {
    let plan = &measured_prefix(plan, measured);
    let initial = closed_form(plan.capacity_bytes, measured)?.loadable();
    // The split needs both mixed jobs: before GC and during it.
    let split_measured = ["mixed-qd4", "mixed-qd16"]
        .iter()
        .all(|job| !measured.absent.iter().any(|j| j == job));
    let fill_measured = finite(measured.fill.post_cache_bytes_s).is_some();
    let mut candidates: Vec<Candidate> = structures(&initial, split_measured, fill_measured)
        .into_iter()
        .map(|(label, p)| Candidate::new(label, p))
        .collect();
    let mut simulations = 0;
    let mut refused = None;
    let screen = screening_plan(plan);
    for step in 0..options.first_steps {
        // Past the first step, only the structures still near the best go on screening.
        let best = candidates
            .iter()
            .map(|c| c.best_error)
            .fold(f64::INFINITY, f64::min);
        let screened: Vec<usize> = (0..candidates.len())
            .filter(|&i| step == 0 || screens_on(candidates[i].best_error, best))
            .collect();
        let mut going: Vec<Candidate> = screened.iter().map(|&i| candidates[i].clone()).collect();
        step_all(&mut going, &screen, measured, options, &mut refused)?;
        simulations += going.len() as u32;
        for (i, c) in screened.into_iter().zip(going) {
            candidates[i] = c;
        }
    }
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| {
        candidates[a]
            .best_error
            .total_cmp(&candidates[b].best_error)
    });
    let mut kept: Vec<Candidate> = order
        .iter()
        .take(KEPT)
        .map(|&i| candidates[i].clone().with_full_plan())
        .collect();
    for _ in 0..options.more_steps {
        step_all(&mut kept, plan, measured, options, &mut refused)?;
        simulations += kept.len() as u32;
    }
    let best = kept
        .iter()
        .min_by(|a, b| a.best_error.total_cmp(&b.best_error))
        .ok_or_else(|| FitError::failed("no candidate drive"))?;
    let (params, simulated) = best.best.clone().ok_or_else(|| match refused {
        Some(e) => FitError::failed(format!(
            "no candidate drive could be simulated from these figures; the first refused: {e}"
        )),
        None => FitError::failed("no candidate drive was simulated"),
    })?;
    let mut labels: Vec<(String, f64)> = candidates
        .iter()
        .map(|c| (c.label.clone(), c.best_error))
        .collect();
    for k in &kept {
        match labels.iter_mut().find(|l| l.0 == k.label) {
            Some(l) => l.1 = k.best_error,
            None => labels.push((k.label.clone(), k.best_error)),
        }
    }
    Ok(Fitted {
        compared: compare(measured, &simulated),
        params,
        initial,
        measured: measured.clone(),
        simulated,
        candidates: labels,
        simulations,
    })
}

/// A structure whose screening error is more than this many times the best one's stops
/// screening: a step moves a structure's error by well under this factor (on the tiny
/// drive's plan the second step cut the errors by at most 1.4x), so it could not reach
/// the best three, and the screening's second step costs a third of a fit.
const SCREEN_WITHIN: f64 = 5.0;

/// Whether a structure with screening error `error` takes the next screening step, the
/// best structure's error being `best`.
fn screens_on(error: f64, best: f64) -> bool {
    error.is_finite() && error <= SCREEN_WITHIN * best
}

/// Planes per die the split search tries.
const PLANE_SPLITS: [u32; 3] = [1, 2, 4];
/// Candidates that go on refining after the first steps.
const KEPT: usize = 3;

/// `p`'s parallel units split into dies of `planes` planes each, when they split so. The
/// read IOPS see only dies × planes, but a program holds its whole die and joins the
/// die's planes, so the plan's mixed job and reads beside writes (and the fill's program
/// rates) tell the splits apart; each split is a structure of its own, refined from the
/// closed forms with every other.
fn split(p: &Params, planes: u32) -> Option<Params> {
    let units = p.dies * p.planes;
    (units >= planes).then(|| {
        let mut c = p.clone();
        c.planes = planes;
        c.dies = ((f64::from(units) / f64::from(planes)).round() as u32).max(1);
        c
    })
}

fn split_text(planes: u32) -> String {
    match planes {
        1 => "1 plane per die".into(),
        n => format!("{n} planes per die"),
    }
}

#[derive(Debug, Clone)]
struct Candidate {
    label: String,
    next: Params,
    best: Option<(Params, Figures)>,
    best_error: f64,
    /// The last step's program times, the fill's rates they gave and what the steps so far
    /// tell of how the rates follow the times.
    programs: Option<Newton2>,
    /// The same for the spare and the block, once the steady and chunked writes ran.
    spare_block: Option<Newton2>,
    /// The last step's spare and the steady IOPS it gave.
    spare_iops: Option<(f64, f64)>,
    /// The last step's block (pages) and the chunked writes' rate it gave.
    block_chunk: Option<(f64, f64)>,
}

impl Candidate {
    fn new(label: String, p: Params) -> Self {
        Self {
            label,
            next: p,
            best: None,
            best_error: f64::INFINITY,
            programs: None,
            spare_block: None,
            spare_iops: None,
            block_chunk: None,
        }
    }

    /// The candidate as it goes on to the whole plan: its screening figures lack the
    /// steady jobs, so its best is chosen again among whole-plan runs, which go on from the
    /// parameters the screening's last step gave.
    fn with_full_plan(self) -> Self {
        Self {
            programs: self.programs,
            spare_block: self.spare_block,
            spare_iops: self.spare_iops,
            block_chunk: self.block_chunk,
            ..Self::new(self.label, self.next)
        }
    }
}

/// The plan up to its last job with an output in `measured`: a job's figures depend only
/// on the jobs before it, so the jobs after the last measured one move nothing the fit
/// compares, and a published set (the fill and the reads) skips the steady-state writes
/// that cost most of a plan's simulation. A set with no job measured keeps the plan.
fn measured_prefix(plan: &Plan, measured: &Figures) -> Plan {
    let mut short = plan.clone();
    let is_measured = |name: &str| !measured.absent.iter().any(|a| a == name);
    if let Some(last) = plan.jobs.iter().rposition(|j| is_measured(&j.name)) {
        short.jobs.truncate(last + 1);
    }
    short
}

/// The plan the screening steps simulate: the whole plan less its steady-state random
/// writes (`steady-*`), which come last, write four and a half times the capacity in 4 KiB
/// writes and so cost most of a plan's simulation, yet move only the spare area, which
/// the structures share. The candidates kept after screening run the whole plan.
fn screening_plan(plan: &Plan) -> Plan {
    let mut short = plan.clone();
    short.jobs.retain(|j| !j.name.starts_with("steady-"));
    short
}

/// One refinement step of every candidate, on `options.threads` threads; each result goes
/// back to its own candidate, so the order threads finish in changes nothing.
fn step_all(
    candidates: &mut [Candidate],
    plan: &Plan,
    measured: &Figures,
    options: &FitOptions,
    refused: &mut Option<FitError>,
) -> Result<(), FitError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Figures, FitError>>>> =
        Mutex::new(vec![None; candidates.len()]);
    let inputs: Vec<Params> = candidates.iter().map(|c| c.next.loadable()).collect();
    std::thread::scope(|s| {
        for _ in 0..options.threads.clamp(1, candidates.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = inputs.get(i) else { break };
                let r = simulate(p, plan, options.seed);
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| FitError::failed("a simulation thread failed"))?;
    for ((c, r), input) in candidates.iter_mut().zip(results).zip(inputs) {
        // A candidate the simulator refuses (a cache too large for its blocks) drops out;
        // the first refusal is kept to say why when every candidate dropped out.
        let figures = match r {
            Some(Ok(f)) => f,
            Some(Err(e)) => {
                refused.get_or_insert(e);
                continue;
            }
            None => continue,
        };
        let e = fit_error(measured, &figures);
        let worse = e >= c.best_error;
        if !worse {
            c.best_error = e;
            c.best = Some((input.clone(), figures.clone()));
        }
        let proposal = propose(c, &input, measured, &figures);
        c.next = match (&c.best, worse) {
            // A step that made the fit worse went too far: the next goes back halfway
            // between the best drive so far and this one (a backtracking line search).
            (Some((best, _)), true) => toward(best, &input, 0.5),
            _ => proposal,
        };
    }
    Ok(())
}

/// The next drive from `input` and what its plan gave: every parameter moved by the figure
/// it governs, the program times together by the fill's rates, the spare and the block
/// together by the steady and chunked writes where both ran (in the screening steps the
/// spare by `gc-onset`'s free bytes and the block by the chunked rate alone).
fn propose(c: &mut Candidate, input: &Params, measured: &Figures, figures: &Figures) -> Params {
    let mut next = refine(input, measured, figures);
    let same_units = next.dies * next.planes == input.dies * input.planes;
    let (slc, tlc) = programs_step(c, input, measured, figures);
    if same_units {
        (next.slc_t_prog_ns, next.t_prog_ns) = (slc, tlc);
    }
    let (spare, steady) = (input.spare, figures.steady_full_iops);
    if finite(steady).is_none() {
        // Without the steady jobs (the screening plan) the spare follows the free bytes
        // `gc-onset` wrote before GC: about the user capacity × the spare's change.
        if let (Some(target), Some(now)) = (
            finite(measured.gc_onset_bytes),
            finite(figures.gc_onset_bytes),
        ) {
            next.spare = spare + (target - now) / input.capacity_bytes as f64;
        }
    } else if let Some(x) = secant(spare, steady, c.spare_iops, measured.steady_full_iops) {
        next.spare = x;
    }
    next.spare = within_step(spare, next.spare).clamp(0.02, 1.0);
    c.spare_iops = Some((spare, steady));
    next.pages_per_block = match chunk_block(c, input, measured, figures) {
        Some(ppb) => Some(ppb),
        None => refine_block(input, &next, measured, figures),
    };
    // With the steady and chunked writes both run, the spare and the block move together.
    if let Some((spare, ppb)) = spare_block_step(c, input, measured, figures) {
        next.spare = spare;
        next.pages_per_block = Some(ppb);
    }
    next
}

/// How far the chunked writes' rate follows the block before a step measures it: between
/// 48- and 96-page blocks at the same spare, with chunks of a third to two thirds of the
/// superblock, it falls by about a third.
const CHUNK_RATE_OVER_BLOCK: f64 = -0.6;

/// The block moved by the chunked writes' rate, where both plans ran them: the rate falls
/// as a superblock holds more chunks, so the step is the measured rate's ratio to the
/// simulated one to the power of the inverse of the rate's elasticity over the block (the
/// secant of this step and the last, or [`CHUNK_RATE_OVER_BLOCK`]), held to
/// [`within_step`], in whole word lines.
fn chunk_block(c: &mut Candidate, p: &Params, m: &Figures, s: &Figures) -> Option<u64> {
    let (target, now) = (finite(m.chunk_bytes_s)?, finite(s.chunk_bytes_s)?);
    let ppb = p.geometry().0 as f64;
    let last = c.block_chunk.replace((ppb, now));
    let elasticity = last
        .and_then(|(b0, r0)| {
            let db = (ppb / b0).ln();
            let e = (now / finite(r0)?).ln() / db;
            (db.abs() > 0.01 && (-4.0..=-0.05).contains(&e)).then_some(e)
        })
        .unwrap_or(CHUNK_RATE_OVER_BLOCK);
    let next = within_step(ppb, ppb * (target / now).powf(1.0 / elasticity));
    let bits = class::BITS_PER_CELL as f64;
    let most = p.max_fitted_pages_per_block() as f64;
    Some(((next / bits).round() * bits).clamp(bits, most) as u64)
}

/// Two parameters moved by two figures together, in logarithms: the last step's parameters
/// and figures, and the Jacobian of the figures over the parameters as the steps so far
/// tell it (Broyden's update of a first guess).
#[derive(Debug, Clone, Copy)]
struct Newton2 {
    params: [f64; 2],
    figures: [f64; 2],
    jacobian: [[f64; 2]; 2],
}

/// The Newton step (in logarithms) of `params` toward `target` from `figures`, with the
/// Jacobian `guess` updated by Broyden's rule from the last step in `state`. A Jacobian
/// learnt near singular, or with a diagonal of the other sign than the guess's (a figure
/// that stopped following its parameter), steps by the guess.
fn newton2(
    state: &mut Option<Newton2>,
    params: [f64; 2],
    figures: [f64; 2],
    target: [f64; 2],
    guess: [[f64; 2]; 2],
) -> [f64; 2] {
    let mut jacobian = guess;
    if let Some(last) = *state {
        jacobian = last.jacobian;
        let dx = [params[0] - last.params[0], params[1] - last.params[1]];
        let df = [figures[0] - last.figures[0], figures[1] - last.figures[1]];
        let norm = dx[0] * dx[0] + dx[1] * dx[1];
        if norm > 1e-6 {
            for (row, d) in jacobian.iter_mut().zip(df) {
                let miss = d - (row[0] * dx[0] + row[1] * dx[1]);
                row[0] += miss * dx[0] / norm;
                row[1] += miss * dx[1] / norm;
            }
        }
    }
    *state = Some(Newton2 {
        params,
        figures,
        jacobian,
    });
    let want = [target[0] - figures[0], target[1] - figures[1]];
    let solve = |[[a, b], [c, d]]: [[f64; 2]; 2]| {
        let det = a * d - b * c;
        let same_sign = a * guess[0][0] > 0.0 && d * guess[1][1] > 0.0;
        (det.abs() > 0.05 * (guess[0][0] * guess[1][1]).abs() && same_sign).then(|| {
            [
                (d * want[0] - b * want[1]) / det,
                (a * want[1] - c * want[0]) / det,
            ]
        })
    };
    solve(jacobian)
        .or_else(|| solve(guess))
        .unwrap_or([0.0, 0.0])
}

/// The SLC and native program times moved by the fill's two rates together. A direct
/// write's in-cache rate goes as 1 / SLC tPROG and its post-cache rate as 1 / tPROG, the
/// first Jacobian; a folding cache couples them (the fold's native programs share the dies
/// with the host's SLC programs, and its post-cache rate pays both), which Broyden's update
/// learns from each step's change. Each step is held to [`within_step`]; a rate not
/// measured leaves its time as it was.
fn programs_step(c: &mut Candidate, p: &Params, m: &Figures, s: &Figures) -> (u64, u64) {
    let (slc0, tlc0) = (p.slc_t_prog_ns as f64, p.t_prog_ns as f64);
    let (Some(rates), Some(target)) = (
        finite(s.fill.in_cache_bytes_s).zip(finite(s.fill.post_cache_bytes_s)),
        finite(m.fill.in_cache_bytes_s).zip(finite(m.fill.post_cache_bytes_s)),
    ) else {
        return (p.slc_t_prog_ns, p.t_prog_ns);
    };
    let [dx0, dx1] = newton2(
        &mut c.programs,
        [slc0.ln(), tlc0.ln()],
        [rates.0.ln(), rates.1.ln()],
        [target.0.ln(), target.1.ln()],
        [[-1.0, 0.0], [0.0, -1.0]],
    );
    let slc = within_step(slc0, slc0 * dx0.exp()).clamp(20_000.0, 5e6);
    let tlc = within_step(tlc0, tlc0 * dx1.exp()).clamp(50_000.0, 20e6);
    (slc as u64, tlc as u64)
}

/// How the steady IOPS and the chunked writes' rate follow the spare and the block, in
/// logarithms, before the steps measure it: greedy GC's IOPS about as the spare and a
/// little against the block (the held-back blocks take their share of it); the chunked rate
/// against the block (between 48- and 96-page blocks at the same spare it falls by about a
/// third) and with the spare.
const SPARE_BLOCK_GUESS: [[f64; 2]; 2] = [[1.0, -0.2], [0.5, -0.6]];

/// The spare and the block moved by the steady IOPS and the chunked writes' rate together
/// (a Newton step with Broyden's update from [`SPARE_BLOCK_GUESS`]), each held to
/// [`within_step`], the block in whole word lines; `None` without both figures measured
/// and simulated.
fn spare_block_step(c: &mut Candidate, p: &Params, m: &Figures, s: &Figures) -> Option<(f64, u64)> {
    let figures = [finite(s.steady_full_iops)?, finite(s.chunk_bytes_s)?];
    let target = [finite(m.steady_full_iops)?, finite(m.chunk_bytes_s)?];
    let ppb = p.geometry().0 as f64;
    let [ds, db] = newton2(
        &mut c.spare_block,
        [p.spare.ln(), ppb.ln()],
        [figures[0].ln(), figures[1].ln()],
        [target[0].ln(), target[1].ln()],
        SPARE_BLOCK_GUESS,
    );
    let spare = within_step(p.spare, p.spare * ds.exp()).clamp(0.02, 1.0);
    let bits = class::BITS_PER_CELL as f64;
    let most = p.max_fitted_pages_per_block() as f64;
    let next = within_step(ppb, ppb * db.exp());
    Some((
        spare,
        ((next / bits).round() * bits).clamp(bits, most) as u64,
    ))
}

/// A parameter's step held to two thirds or three halves of its value: the figures follow
/// their parameters only roughly (a folding cache's rate barely follows tPROG, GC's IOPS
/// follow the spare less the held-back blocks), and a larger step overshoots.
fn within_step(from: f64, to: f64) -> f64 {
    to.clamp(from / 1.5, from * 1.5)
}

/// `from` moved `share` of the way to `to`, geometrically in each continuous parameter; the
/// structure (split, cache kind, fold, read priority) is `from`'s.
fn toward(from: &Params, to: &Params, share: f64) -> Params {
    let mid = |a: f64, b: f64| a * (b / a).powf(share);
    let mid_u = |a: u64, b: u64| mid(a.max(1) as f64, b.max(1) as f64).round() as u64;
    let mut n = from.clone();
    n.t_read_ns = mid_u(from.t_read_ns, to.t_read_ns);
    n.t_prog_ns = mid_u(from.t_prog_ns, to.t_prog_ns);
    n.slc_t_prog_ns = mid_u(from.slc_t_prog_ns, to.slc_t_prog_ns);
    n.command_overhead_ns = mid_u(from.command_overhead_ns, to.command_overhead_ns);
    n.spare = mid(from.spare, to.spare);
    n.buffer_bytes = round_buffer(mid(from.buffer_bytes as f64, to.buffer_bytes as f64));
    n.cache = match (from.cache, to.cache) {
        (Cache::Dynamic { fraction: a }, Cache::Dynamic { fraction: b }) => Cache::Dynamic {
            fraction: mid(a, b),
        },
        (Cache::Static { bytes: a }, Cache::Static { bytes: b }) => Cache::Static {
            bytes: static_bytes(mid(a as f64, b as f64), from),
        },
        (c, _) => c,
    };
    if let (Some(a), Some(b)) = (from.pages_per_block, to.pages_per_block) {
        let bits = class::BITS_PER_CELL as f64;
        n.pages_per_block = Some(((mid(a as f64, b as f64) / bits).round() * bits) as u64);
    }
    n
}

/// The plan simulated on `p`, read back as figures.
/// A plan with jobs left out (the screening plan) reads as a partial set: the jobs it
/// lacks are named in [`Figures::absent`] and compare as unmeasured.
pub fn simulate(p: &Params, plan: &Plan, seed: u64) -> Result<Figures, FitError> {
    let config = p.config()?;
    let outputs = run_plan(&config, plan, seed)?;
    read_simulated(&Source::Memory(&outputs), plan)
}

fn finite(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0).then_some(x)
}

fn max_iops(f: &Figures) -> f64 {
    f.read_iops.iter().map(|p| p.1).fold(f64::NAN, f64::max)
}

/// The first drive, from closed forms: tR from the QD1 read latency less the QD1 write
/// latency (both pay the host, the command and the link; the read also tR), parallel units
/// from the saturated read IOPS × tR, program times from the cache's rates (a page per unit
/// per program), the cache size where the rate falls, the spare from greedy GC's write
/// amplification (WA ≈ (1 + ρ) / 2ρ for spare ρ), the buffer from the fast burst. A figure
/// a partial measurement set lacks leaves its parameter at the class's value; a whole set
/// lacking one is refused.
pub fn closed_form(capacity_bytes: u64, m: &Figures) -> Result<Params, FitError> {
    if m.absent.is_empty() {
        for (x, what) in [
            (m.read_lat_qd1_ns, "QD1 read latency (randread-qd1.json)"),
            (m.write_lat_qd1_ns, "QD1 write latency (qd1-write.json)"),
            (max_iops(m), "random-read IOPS (randread-qd*.json)"),
            (m.fill.in_cache_bytes_s, "in-cache write rate (seq-fill)"),
        ] {
            if finite(x).is_none() {
                return Err(FitError::bad(
                    "the plan outputs",
                    format!("no {what} was measured"),
                ));
            }
        }
    }
    let t_read_ns = match (finite(m.read_lat_qd1_ns), finite(m.write_lat_qd1_ns)) {
        (Some(r), Some(w)) => (r - w).max(10_000.0),
        _ => class::T_READ_NS as f64,
    };
    let (dies, planes) = match finite(max_iops(m)) {
        Some(iops) => {
            let units = (iops * t_read_ns / 1e9).round().clamp(1.0, 512.0) as u32;
            let planes = if units % 2 == 0 { 2 } else { 1 };
            ((units / planes).max(1), planes)
        }
        None => (class::DIES, class::PLANES),
    };
    let (t_prog_ns, slc_t_prog_ns) = program_times(f64::from(dies * planes), m);
    // Greedy GC's write amplification at the steady IOPS against the post-cache rate.
    let post = finite(m.fill.post_cache_bytes_s).or(finite(m.fill.in_cache_bytes_s));
    let spare = match (post, finite(m.steady_full_iops)) {
        (Some(post), Some(iops)) => 1.0 / (2.0 * (post / 4096.0 / iops).max(1.05) - 1.0),
        _ => class::SPARE,
    }
    .clamp(0.02, 1.0);
    let raw = capacity_bytes as f64 * (1.0 + spare);
    // The cache held the QD1 write's bytes before the fill began.
    let fraction = match m.fill.cliff_bytes {
        c if c.is_nan() => class::CACHE_FRACTION,
        c => (c.max(0.0) + BEFORE_FILL_BYTES as f64) * class::BITS_PER_CELL as f64 / raw,
    };
    let buffer_bytes = match m.buffered_bytes {
        b if b.is_nan() => class::BUFFER_BYTES,
        b => round_buffer(b.max(0.0)),
    };
    Ok(Params {
        capacity_bytes,
        dies,
        planes,
        t_read_ns: t_read_ns as u64,
        t_prog_ns,
        slc_t_prog_ns,
        command_overhead_ns: finite(m.write_lat_qd1_ns)
            .map_or(class::COMMAND_OVERHEAD_NS, |_| 5_000),
        cache: Cache::Dynamic {
            fraction: fraction.clamp(0.005, 1.0),
        },
        fold: false,
        spare,
        buffer_bytes,
        read_priority: false,
        pages_per_block: None,
    })
}

/// Native and SLC program times from the fill's rates, a page per parallel unit per
/// program (a drive whose rate never falls has its cache rate throughout); the class's
/// when the fill was not measured.
fn program_times(units: f64, m: &Figures) -> (u64, u64) {
    let page = class::PAGE_BYTES as f64;
    let Some(in_cache) = finite(m.fill.in_cache_bytes_s) else {
        return (class::T_PROG_NS, class::SLC_T_PROG_NS);
    };
    // A fill whose rate never fell has its cache rate throughout; a set that gives the
    // in-cache rate alone (published figures, no series) leaves the native rate the class's.
    let Some(post) = finite(m.fill.post_cache_bytes_s)
        .or_else(|| (!m.fill.series.is_empty()).then_some(in_cache))
    else {
        let slc = (units * page / in_cache * 1e9).clamp(20_000.0, 5e6) as u64;
        return (class::T_PROG_NS, slc);
    };
    (
        (units * page / post * 1e9).clamp(50_000.0, 20e6) as u64,
        (units * page / in_cache * 1e9).clamp(20_000.0, 5e6) as u64,
    )
}

/// A static cache of about `bytes`, in whole MiB, under the share of the blocks a static
/// cache may take (less than half: its native bytes under the user data and spare).
fn static_bytes(bytes: f64, p: &Params) -> u64 {
    let most = 0.9 * p.capacity_bytes as f64 * (1.0 + p.spare) / class::BITS_PER_CELL as f64;
    (bytes.clamp((1u64 << 20) as f64, most) as u64) & !((1 << 20) - 1)
}

fn round_buffer(bytes: f64) -> u64 {
    let b = bytes.clamp(256.0 * 1024.0, 1024.0 * 1024.0 * 1024.0) as u64;
    b & !((64 << 10) - 1)
}

/// The structures tried: every split of the parallel units (1, 2 or 4 planes per die),
/// each with both cache kinds, both fold policies, and read priority off and on. Read
/// priority is part of the structure from the start: a drive with it fitted without it
/// first ranks its own split last (the mixed job's read tail is off by a program time).
fn structures(p: &Params, split_measured: bool, fill_measured: bool) -> Vec<(String, Params)> {
    let cliff_bytes = match p.cache {
        Cache::Dynamic { fraction } => {
            fraction * p.capacity_bytes as f64 * (1.0 + p.spare) / class::BITS_PER_CELL as f64
        }
        Cache::Static { bytes } => bytes as f64,
    };
    let mut out = Vec::new();
    // Without the mixed job the split is not identified: the class's planes per die where
    // the units split so, else the closed forms' split.
    let units = p.dies * p.planes;
    let unmeasured = [if units % class::PLANES == 0 {
        class::PLANES
    } else {
        p.planes
    }];
    let splits: &[u32] = if split_measured {
        &PLANE_SPLITS
    } else {
        &unmeasured
    };
    for s in splits.iter().filter_map(|&planes| split(p, planes)) {
        for (dynamic, fold, read_priority) in (0..8).map(|i| (i & 4 == 0, i & 2 != 0, i & 1 != 0)) {
            let mut c = s.clone();
            if !dynamic {
                c.cache = Cache::Static {
                    bytes: static_bytes(cliff_bytes, &c),
                };
            }
            c.fold = fold;
            if fold && fill_measured {
                // The closed forms' tPROG is a direct write's: a page per unit per
                // program past the cache. A folding cache's host data pay an SLC program
                // and then their share of the native one, so its native program is the
                // post-cache page time less the SLC program's.
                c.t_prog_ns = (c.t_prog_ns.saturating_sub(c.slc_t_prog_ns)).max(c.t_prog_ns / 3);
            }
            c.read_priority = read_priority;
            let label = format!(
                "{} cache, {}, read priority {}, {}",
                if dynamic { "dynamic" } else { "static" },
                if fold { "fold" } else { "direct" },
                if read_priority { "on" } else { "off" },
                split_text(c.planes)
            );
            out.push((label, c));
        }
    }
    out
}

/// The figures a fit moves parameters by, as (job, figure, value) in report order; the
/// rest of [`compare`]'s are held out.
fn used_figures(f: &Figures) -> Vec<(&'static str, String, f64)> {
    let mut v = vec![
        ("randread-qd1", "clat mean (ns)".into(), f.read_lat_qd1_ns),
        ("qd1-write", "clat mean (ns)".into(), f.write_lat_qd1_ns),
    ];
    for &(qd, iops) in &f.read_iops {
        v.push(("randread-qd", format!("QD{qd} IOPS"), iops));
    }
    v.extend([
        (
            "seq-fill",
            "in-cache rate (B/s)".into(),
            f.fill.in_cache_bytes_s,
        ),
        (
            "seq-fill",
            "post-cache rate (B/s)".into(),
            f.fill.post_cache_bytes_s,
        ),
        ("seq-fill", "cache size (B)".into(), f.fill.cliff_bytes),
        (
            "seq-fill",
            "full-drive rate (B/s)".into(),
            f.fill.late_bytes_s,
        ),
        (
            "idle-recovery",
            "bytes at in-cache rate".into(),
            f.recovered_bytes,
        ),
        ("write-buffer", "buffered bytes".into(), f.buffered_bytes),
        (
            "read-under-write",
            "read p99 (ns)".into(),
            f.beside_read_p99_ns,
        ),
        ("mixed-qd4", "IOPS".into(), f.mixed_filled_iops),
        (
            "mixed-qd4",
            "read p99 (ns)".into(),
            f.mixed_filled_read_p99_ns,
        ),
        ("mixed-qd16", "IOPS".into(), f.mixed_iops),
        ("mixed-qd16", "read p99 (ns)".into(), f.mixed_read_p99_ns),
        (
            "gc-onset",
            "bytes before the rate falls".into(),
            f.gc_onset_bytes,
        ),
        ("steady-full", "steady IOPS".into(), f.steady_full_iops),
        ("chunk-write", "rate (B/s)".into(), f.chunk_bytes_s),
    ]);
    v
}

fn held_out_figures(f: &Figures) -> Vec<(&'static str, String, f64)> {
    let mut v = Vec::new();
    for &(kib, bw) in &f.block_bw {
        v.push(("randread-bs", format!("{kib} KiB QD32 rate (B/s)"), bw));
    }
    v.extend([
        ("seq-read", "rate (B/s)".into(), f.seq_read_bytes_s),
        ("read-under-write", "read IOPS".into(), f.beside_read_iops),
        ("steady-half", "steady IOPS".into(), f.steady_half_iops),
    ]);
    v
}

/// Every figure measured and fitted, the used ones first.
pub fn compare(measured: &Figures, fitted: &Figures) -> Vec<Compared> {
    let mut out = Vec::new();
    for (used, m, f) in [
        (true, used_figures(measured), used_figures(fitted)),
        (false, held_out_figures(measured), held_out_figures(fitted)),
    ] {
        for ((job, figure, mv), (_, _, fv)) in m.into_iter().zip(f) {
            out.push(Compared {
                job: job.to_string(),
                figure,
                measured: mv,
                fitted: fv,
                used,
            });
        }
    }
    out
}

/// Mean over the fitted jobs of each job's mean |ln(simulated / measured)| over the used
/// figures both have; a figure one lacks counts as a factor of two (a job the simulated
/// plan left out counts not at all: every candidate of a step lacks it). Each job weighs the
/// same whatever its figures' count, so the nine points of the depth scan do not outweigh
/// the mixed jobs, the ones that tell how the parallel units split into dies, which weigh
/// [`SPLIT_JOB_WEIGHT`] each.
fn fit_error(measured: &Figures, simulated: &Figures) -> f64 {
    let m = used_figures(measured);
    let s = used_figures(simulated);
    let mut jobs: Vec<(&str, f64, f64)> = Vec::new();
    for ((job, _, mv), (_, _, sv)) in m.iter().zip(&s) {
        if !mv.is_finite() || simulated.absent.iter().any(|a| a == job) {
            continue;
        }
        let e = match (finite(*mv), finite(*sv)) {
            (Some(a), Some(b)) => (b / a).ln().abs(),
            (None, None) => 0.0,
            _ => std::f64::consts::LN_2,
        };
        match jobs.iter_mut().find(|j| j.0 == *job) {
            Some(j) => {
                j.1 += e;
                j.2 += 1.0;
            }
            None => jobs.push((job, e, 1.0)),
        }
    }
    let weight = |job: &str| {
        if job == "mixed-qd4" || job == "mixed-qd16" {
            SPLIT_JOB_WEIGHT
        } else {
            1.0
        }
    };
    let total: f64 = jobs.iter().map(|j| weight(j.0) * j.1 / j.2).sum();
    total / jobs.iter().map(|j| weight(j.0)).sum::<f64>().max(1.0)
}

/// The weight of each mixed job in [`fit_error`], where every other job weighs one: they
/// are the jobs that tell the splits of the parallel units into dies apart, while every
/// split matches the other jobs with its own timings, so at one job's weight among ten a
/// split that misses the mixed job by a fifth can rank above the drive's own.
const SPLIT_JOB_WEIGHT: f64 = 2.0;

/// `value` × `measured / simulated` (both finite), the ratio held to [1/4, 4].
fn by_ratio(value: f64, measured: f64, simulated: f64) -> f64 {
    match (finite(measured), finite(simulated)) {
        (Some(m), Some(s)) => value * (m / s).clamp(0.25, 4.0),
        _ => value,
    }
}

/// One refinement: each parameter moved by the figure it governs.
fn refine(p: &Params, m: &Figures, s: &Figures) -> Params {
    let mut n = p.clone();
    let overhead = p.command_overhead_ns as f64;
    let d_write = m.write_lat_qd1_ns - s.write_lat_qd1_ns;
    let new_overhead = if d_write.is_finite() {
        (overhead + d_write).clamp(500.0, 200_000.0)
    } else {
        overhead
    };
    n.command_overhead_ns = new_overhead as u64;
    let d_read = m.read_lat_qd1_ns - s.read_lat_qd1_ns - (new_overhead - overhead);
    if d_read.is_finite() {
        n.t_read_ns = (p.t_read_ns as f64 + d_read).clamp(5_000.0, 2e6) as u64;
    }
    let units = f64::from(p.dies * p.planes);
    let read_units = by_ratio(units, max_iops(m), max_iops(s));
    let units_new = if (read_units / units - 1.0).abs() > 0.08 {
        read_units.round().clamp(1.0, 512.0)
    } else {
        units
    };
    n.dies = ((units_new / f64::from(p.planes)).round() as u32).max(1);
    // Program rates scale with the units; unmeasured, the class's program times stay.
    let unit_ratio = if m.fill.in_cache_bytes_s.is_nan() {
        1.0
    } else {
        f64::from(n.dies * n.planes) / units
    };
    let slc = by_ratio(
        p.slc_t_prog_ns as f64,
        s.fill.in_cache_bytes_s,
        m.fill.in_cache_bytes_s,
    );
    n.slc_t_prog_ns = (slc * unit_ratio).clamp(20_000.0, 5e6) as u64;
    let tlc = by_ratio(
        p.t_prog_ns as f64,
        s.fill.post_cache_bytes_s,
        m.fill.post_cache_bytes_s,
    );
    n.t_prog_ns = (tlc * unit_ratio).clamp(50_000.0, 20e6) as u64;
    n.cache = refine_cache(p, m, s);
    n.spare = by_ratio(p.spare, m.steady_full_iops, s.steady_full_iops).clamp(0.02, 1.0);
    n.buffer_bytes = round_buffer(by_ratio(
        p.buffer_bytes as f64,
        m.buffered_bytes,
        s.buffered_bytes,
    ));
    n
}

/// The cache moved by the bytes the fill wrote before its rate fell: those are the cache's
/// bytes less what the plan wrote into it before the fill, an offset a ratio step would
/// scale with the cache, so the step adds the difference (held to a quarter or four times
/// the cache), in cache bytes for a static cache, in its share of the raw capacity for a
/// dynamic one.
fn refine_cache(p: &Params, m: &Figures, s: &Figures) -> Cache {
    let Some(diff) = finite(m.fill.cliff_bytes)
        .zip(finite(s.fill.cliff_bytes))
        .map(|(a, b)| a - b)
    else {
        return p.cache;
    };
    let raw_over_bits = p.capacity_bytes as f64 * (1.0 + p.spare) / class::BITS_PER_CELL as f64;
    let add = |value: f64, by: f64| (value + by).clamp(value / 4.0, value * 4.0);
    match p.cache {
        Cache::Dynamic { fraction } => Cache::Dynamic {
            fraction: add(fraction, diff / raw_over_bits).clamp(0.005, 1.0),
        },
        Cache::Static { bytes } => Cache::Static {
            bytes: static_bytes(add(bytes as f64, diff), p),
        },
    }
}

/// Blocks the FTL holds back, per parallel unit, when background GC starts: its
/// background threshold (four a unit) and every stream's open blocks (four a unit).
const HELD_BLOCKS_PER_UNIT: f64 = 8.0;

/// The block moved by what of `gc-onset` the spare's move from `input` to `next` does not
/// explain. The bytes written before GC starts are the free bytes less the held-back
/// blocks; the free bytes follow the spare (about the user capacity × its change), the
/// held-back bytes the block (held-back blocks × the block's bytes). Greedy GC's steady IOPS
/// follow the same difference, so the spare fitted to them leaves the onset nearly met and
/// the block moves only by what remains, half of it a step, in whole word lines.
/// Unmeasured, the block stays as it was.
fn refine_block(input: &Params, next: &Params, m: &Figures, s: &Figures) -> Option<u64> {
    let (Some(target), Some(now)) = (finite(m.gc_onset_bytes), finite(s.gc_onset_bytes)) else {
        return input.pages_per_block;
    };
    let ppb = input.geometry().0 as f64;
    let units = f64::from(input.dies * input.planes);
    let held_bytes_per_page = HELD_BLOCKS_PER_UNIT * units * class::PAGE_BYTES as f64;
    let expected = now + (next.spare - input.spare) * input.capacity_bytes as f64;
    let step = 0.5 * (expected - target) / held_bytes_per_page;
    let next_ppb = (ppb + step).clamp(ppb / 1.5, ppb * 1.5);
    let bits = class::BITS_PER_CELL as f64;
    let most = input.max_fitted_pages_per_block() as f64;
    Some(((next_ppb / bits).round() * bits).clamp(bits, most) as u64)
}

/// A parameter moved by the figure it governs as far as the figure follows it: the
/// elasticity of the figure over the parameter from this step (`value`, `now`) and the last
/// (`last`), and the step the ratio of the measured figure to the simulated one to the
/// power of its inverse, held to a quarter or four times. A direct write's post-cache rate
/// goes as 1 / tPROG, a folding cache's far less (its SLC programs and reads take their
/// share of each page); greedy GC's IOPS go about as the effective spare, which is the
/// spare less the blocks the FTL holds back, so they follow the whole spare more steeply
/// the larger those blocks. `None` (the ratio step stands) without a last step or when the
/// elasticity is not measurable.
fn secant(value: f64, now: f64, last: Option<(f64, f64)>, measured: f64) -> Option<f64> {
    let (v0, f0) = last?;
    let (target, now, f0) = (finite(measured)?, finite(now)?, finite(f0)?);
    let dv = (value / v0).ln();
    if dv.abs() < 0.01 {
        return None;
    }
    let elasticity = (now / f0).ln() / dv;
    if !(0.05..=4.0).contains(&elasticity.abs()) {
        return None;
    }
    Some(value * (target / now).powf(1.0 / elasticity).clamp(0.25, 4.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(plan: &Plan) -> Vec<&str> {
        plan.jobs.iter().map(|j| j.name.as_str()).collect()
    }

    #[test]
    fn structures_far_from_the_best_stop_screening() {
        assert!(screens_on(0.3, 0.06));
        assert!(screens_on(0.06, 0.06));
        assert!(!screens_on(0.31, 0.06));
        // A structure the simulator refused has no error to go on from.
        assert!(!screens_on(f64::INFINITY, 0.06));
    }

    #[test]
    fn the_forward_model_runs_the_plan_up_to_its_last_measured_job() {
        let plan = Plan::new(1 << 30).unwrap();
        let all = names(&plan);
        let mut measured = Figures::unmeasured();
        // A whole set keeps the whole plan.
        assert_eq!(names(&measured_prefix(&plan, &measured)), all);
        // Jobs absent before the last measured one still run: they make its drive state.
        let last = all.iter().position(|&n| n == "seq-read").unwrap();
        measured.absent = all[last + 1..]
            .iter()
            .chain(&all[..last])
            .filter(|&&n| n != "seq-fill")
            .map(|n| n.to_string())
            .collect();
        assert_eq!(names(&measured_prefix(&plan, &measured)), all[..=last]);
        // A set that measured nothing keeps the plan (and fails the fit's own checks).
        measured.absent = all.iter().map(|n| n.to_string()).collect();
        assert_eq!(names(&measured_prefix(&plan, &measured)), all);
    }
}
