//! A plan directory's outputs read into the figures the fit works on: fio's JSON documents
//! and the bandwidth, IOPS and latency logs, from real fio or the simulator alike. Each
//! file is checked against the plan: present, whole, of the plan's job and capacity.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::plan::{Plan, PlanJob, READ_BLOCKS_KIB, READ_DEPTHS};
use crate::simrun::Outputs;
use crate::FitError;

/// Largest output file read (a per-I/O latency log of the plan's buffer job is ~3 MB).
pub const MAX_OUTPUT_BYTES: u64 = 256 << 20;

/// Where a plan's outputs are: a directory, or a simulated run's files in memory.
pub enum Source<'a> {
    Dir(&'a Path),
    Memory(&'a Outputs),
}

impl Source<'_> {
    fn place(&self, name: &str) -> PathBuf {
        match self {
            Source::Dir(d) => d.join(name),
            Source::Memory(_) => PathBuf::from(name),
        }
    }

    /// The file is there.
    fn has(&self, name: &str) -> bool {
        match self {
            Source::Dir(d) => d.join(name).exists(),
            Source::Memory(m) => m.contains_key(name),
        }
    }

    fn read(&self, name: &str, job: &PlanJob) -> Result<String, FitError> {
        let place = self.place(name);
        let missing = || {
            FitError::bad(
                place.display(),
                format!(
                    "missing: expected the output of the plan's job {} (run {} with fio, or `flashlab fit run`)",
                    job.name, job.file
                ),
            )
        };
        match self {
            Source::Memory(m) => m.get(name).cloned().ok_or_else(missing),
            Source::Dir(_) => {
                if !place.exists() {
                    return Err(missing());
                }
                flashlab_engine::input::read_text(&place, MAX_OUTPUT_BYTES, "a fio output")
                    .map_err(|e| FitError::bad(place.display(), e))
            }
        }
    }
}

/// A bandwidth log read into (time s, bytes/s) samples.
pub type Samples = Vec<(f64, f64)>;

/// What the whole-capacity write shows: the rate in the cache, after it, and where it falls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cliff {
    pub in_cache_bytes_s: f64,
    pub post_cache_bytes_s: f64,
    /// The rate over the last quarter of the write: the drive nearly full, the cache
    /// folding or gone.
    pub late_bytes_s: f64,
    /// Bytes written before the rate falls (the whole write when it never does).
    pub cliff_bytes: f64,
    /// (bytes written, bytes/s) along the write.
    pub series: Samples,
}

/// Every figure of a plan's outputs the fit compares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    pub read_lat_qd1_ns: f64,
    pub write_lat_qd1_ns: f64,
    /// (queue depth, IOPS) of the depth scan.
    pub read_iops: Vec<(u32, f64)>,
    /// (block KiB, bytes/s) of the block-size scan at QD32.
    pub block_bw: Vec<(u32, f64)>,
    pub seq_read_bytes_s: f64,
    pub fill: Cliff,
    /// Bytes the write after idle wrote at the in-cache rate.
    pub recovered_bytes: f64,
    /// Bytes the burst after idle wrote at buffer speed.
    pub buffered_bytes: f64,
    pub beside_read_p99_ns: f64,
    pub beside_read_iops: f64,
    /// The mixed job's IOPS (reads and writes) and read p99.
    pub mixed_iops: f64,
    pub mixed_read_p99_ns: f64,
    /// The shallow mixed job's on the filled drive, before GC.
    pub mixed_filled_iops: f64,
    pub mixed_filled_read_p99_ns: f64,
    /// Bytes of 4 KiB random writes the filled drive took before GC slowed them (the whole
    /// job's when the rate never fell).
    pub gc_onset_bytes: f64,
    pub steady_full_iops: f64,
    pub steady_half_iops: f64,
    /// The chunked random writes' rate (bytes/s) once settled.
    pub chunk_bytes_s: f64,
    /// (bytes written, IOPS) of the steady writes.
    pub steady_full_series: Samples,
    pub steady_half_series: Samples,
    /// Jobs of a partial measurement set with no output: their figures are NaN.
    pub absent: Vec<String>,
}

impl Figures {
    /// Every figure unmeasured (NaN), as a job absent from a partial set leaves its own.
    pub fn unmeasured() -> Figures {
        let n = f64::NAN;
        Figures {
            read_lat_qd1_ns: n,
            write_lat_qd1_ns: n,
            seq_read_bytes_s: n,
            fill: Cliff {
                in_cache_bytes_s: n,
                post_cache_bytes_s: n,
                late_bytes_s: n,
                cliff_bytes: n,
                series: Vec::new(),
            },
            recovered_bytes: n,
            buffered_bytes: n,
            beside_read_p99_ns: n,
            beside_read_iops: n,
            mixed_iops: n,
            mixed_read_p99_ns: n,
            mixed_filled_iops: n,
            mixed_filled_read_p99_ns: n,
            gc_onset_bytes: n,
            steady_full_iops: n,
            steady_half_iops: n,
            chunk_bytes_s: n,
            ..Figures::default()
        }
    }
}

/// Reads the outputs of `plan` from `dir`.
pub fn read_outputs(dir: &Path, plan: &Plan) -> Result<Figures, FitError> {
    read_from(&Source::Dir(dir), plan)
}

/// Reads the outputs of `plan` from `dir`, of which some jobs may be absent (no JSON
/// document): their figures stay unmeasured (NaN) and [`Figures::absent`] names them. A
/// job whose JSON is there must be whole, with its logs.
pub fn read_partial(dir: &Path, plan: &Plan) -> Result<Figures, FitError> {
    read_set(&Source::Dir(dir), plan, true)
}

/// Reads the outputs of a simulated run of `plan` from `source`: a job the plan lacks or
/// the run left out is absent, as [`read_partial`] reads a directory.
pub fn read_simulated(source: &Source<'_>, plan: &Plan) -> Result<Figures, FitError> {
    read_set(source, plan, true)
}

/// Reads the outputs of `plan` from `source`.
pub fn read_from(source: &Source<'_>, plan: &Plan) -> Result<Figures, FitError> {
    read_set(source, plan, false)
}

fn read_set(source: &Source<'_>, plan: &Plan, partial: bool) -> Result<Figures, FitError> {
    let absent = std::cell::RefCell::new(Vec::new());
    let doc = |name: &str| -> Result<Option<(Value, &PlanJob)>, FitError> {
        let Some(job) = plan.job(name) else {
            // A simulated run of a plan with jobs left out (the fit's screening).
            if partial {
                absent.borrow_mut().push(name.to_string());
                return Ok(None);
            }
            return Err(FitError::failed(format!("the plan has no job {name}")));
        };
        let file = &job.outputs[0];
        if partial && !source.has(file) {
            absent.borrow_mut().push(name.to_string());
            return Ok(None);
        }
        let text = source.read(file, job)?;
        let value = parse_doc(&text, &source.place(file), job)?;
        Ok(Some((value, job)))
    };
    let mut f = Figures::unmeasured();
    if let Some((d, _)) = doc("randread-qd1")? {
        f.read_lat_qd1_ns = dir_figure(&d, "read", &["clat_ns", "mean"]);
    }
    if let Some((d, _)) = doc("qd1-write")? {
        f.write_lat_qd1_ns = dir_figure(&d, "write", &["clat_ns", "mean"]);
    }
    for qd in READ_DEPTHS {
        let d = doc(&format!("randread-qd{qd}"))?;
        let iops = d.map_or(f64::NAN, |(d, _)| dir_figure(&d, "read", &["iops"]));
        f.read_iops.push((qd, iops));
    }
    for kib in READ_BLOCKS_KIB {
        let d = doc(&format!("randread-bs{kib}k"))?;
        let bw = d.map_or(f64::NAN, |(d, _)| dir_figure(&d, "read", &["bw_bytes"]));
        f.block_bw.push((kib, bw));
    }
    if let Some((d, _)) = doc("seq-read")? {
        f.seq_read_bytes_s = dir_figure(&d, "read", &["bw_bytes"]);
    }
    read_writes(source, &doc, &mut f)?;
    f.absent = absent.into_inner();
    Ok(f)
}

type DocFn<'a> = dyn Fn(&str) -> Result<Option<(Value, &'a PlanJob)>, FitError> + 'a;

fn read_writes<'a>(source: &Source<'_>, doc: &DocFn<'a>, f: &mut Figures) -> Result<(), FitError> {
    let log = |job: &PlanJob, i: usize, d: &Value| -> Result<Samples, FitError> {
        let name = &job.outputs[i];
        let text = source.read(name, job)?;
        let place = source.place(name);
        if text.trim().is_empty() && short_job(d) {
            return Ok(mean_sample(d, &place));
        }
        let samples = parse_log(&text, &place)?;
        match check_covers(&samples, d, &place, job) {
            Err(_) if short_job(d) => Ok(mean_sample(d, &place)),
            covered => covered.map(|()| samples),
        }
    };
    if let Some((d, job)) = doc("seq-fill")? {
        f.fill = cliff(&log(job, 1, &d)?);
    }
    if let Some((d, job)) = doc("idle-recovery")? {
        let threshold = 0.75 * f.fill.in_cache_bytes_s;
        f.recovered_bytes = bytes_above(&log(job, 1, &d)?, threshold);
    }
    if let Some((d, job)) = doc("write-buffer")? {
        f.buffered_bytes = buffered_bytes(source, job, &d)?;
    }
    if let Some((d, _)) = doc("read-under-write")? {
        f.beside_read_p99_ns = dir_figure(&d, "read", &["clat_ns", "percentile", "99.000000"]);
        f.beside_read_iops = dir_figure(&d, "read", &["iops"]);
    }
    if let Some((d, _)) = doc("mixed-qd4")? {
        f.mixed_filled_iops =
            dir_figure(&d, "read", &["iops"]) + dir_figure(&d, "write", &["iops"]);
        f.mixed_filled_read_p99_ns =
            dir_figure(&d, "read", &["clat_ns", "percentile", "99.000000"]);
    }
    if let Some((d, _)) = doc("mixed-qd16")? {
        f.mixed_iops = dir_figure(&d, "read", &["iops"]) + dir_figure(&d, "write", &["iops"]);
        f.mixed_read_p99_ns = dir_figure(&d, "read", &["clat_ns", "percentile", "99.000000"]);
    }
    if let Some((d, job)) = doc("gc-onset")? {
        f.gc_onset_bytes = gc_onset(&log(job, 1, &d)?);
    }
    if let Some((d, job)) = doc("steady-full")? {
        (f.steady_full_iops, f.steady_full_series) = steady(&log(job, 1, &d)?);
    }
    if let Some((d, job)) = doc("steady-half")? {
        (f.steady_half_iops, f.steady_half_series) = steady(&log(job, 1, &d)?);
    }
    // The settling job's output is checked (a set lacking it did not run the measured
    // job on a settled drive), its figures not read.
    doc("chunk-settle")?;
    if let Some((d, _)) = doc("chunk-write")? {
        f.chunk_bytes_s = dir_figure(&d, "write", &["bw_bytes"]);
    }
    Ok(())
}

/// The write-buffer job's bytes written at buffer speed, from its per-I/O latency log, which
/// must hold a latency for (nearly) every write.
fn buffered_bytes(source: &Source<'_>, job: &PlanJob, d: &Value) -> Result<f64, FitError> {
    let clat = parse_log(
        &source.read(&job.outputs[3], job)?,
        &source.place(&job.outputs[3]),
    )?;
    let ios = dir_figure(d, "write", &["total_ios"]);
    if (clat.len() as f64) < ios * 0.99 {
        return Err(FitError::bad(
            source.place(&job.outputs[3]).display(),
            format!(
                "{} latencies for the job's {ios} writes: the log is cut short",
                clat.len()
            ),
        ));
    }
    Ok(buffered_ios(&clat) * 4096.0)
}

/// A fio JSON document, checked to be of `job`: its job names and, where the job file sets
/// one, its region size (a run of another capacity's plan is refused).
fn parse_doc(text: &str, place: &Path, job: &PlanJob) -> Result<Value, FitError> {
    let start = text.find('{').unwrap_or(0);
    let value: Value = serde_json::from_str(&text[start..]).map_err(|e| {
        FitError::bad(
            place.display(),
            format!(
                "not a whole fio JSON document (line {}: {e}); expected the output of `fio --output-format=json` of {}",
                e.line(),
                job.file
            ),
        )
    })?;
    let jobs = value.get("jobs").and_then(Value::as_array);
    let names: Vec<&str> = jobs
        .into_iter()
        .flatten()
        .filter_map(|j| j.get("jobname").and_then(Value::as_str))
        .collect();
    let expected = expected_sections(job);
    if names != expected {
        return Err(FitError::bad(
            place.display(),
            format!(
                "jobs {names:?}: expected the plan's job {} (jobs {expected:?})",
                job.name
            ),
        ));
    }
    for j in jobs.into_iter().flatten() {
        let size = j.pointer("/job options/size").and_then(Value::as_str);
        let want = option_of(&job.text, "size");
        if let (Some(size), Some(want)) = (size, want) {
            if size != want {
                return Err(FitError::bad(
                    place.display(),
                    format!(
                        "size={size}: the plan's {} has size={want} (a run of a plan for another capacity?)",
                        job.file
                    ),
                ));
            }
        }
    }
    Ok(value)
}

/// The section names of a job file, in order.
fn expected_sections(job: &PlanJob) -> Vec<&str> {
    job.text
        .lines()
        .filter_map(|l| l.strip_prefix('[').and_then(|l| l.strip_suffix(']')))
        .collect()
}

/// The first value of `key=` in job file text.
fn option_of<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
}

/// A figure of direction `dir` summed over a document's jobs (the read-under-write job has
/// one job per direction); NaN when absent, which every comparison then shows.
fn dir_figure(doc: &Value, dir: &str, path: &[&str]) -> f64 {
    let mut total = 0.0;
    let mut found = false;
    for j in doc["jobs"].as_array().into_iter().flatten() {
        let mut v = &j[dir];
        for p in path {
            v = &v[*p];
        }
        if let Some(x) = v.as_f64() {
            if j[dir]["total_ios"].as_f64().unwrap_or(0.0) > 0.0 {
                total += x;
                found = true;
            }
        }
    }
    if found {
        total
    } else {
        f64::NAN
    }
}

/// A fio log (`time ms, value, direction, block size, offset[, priority]`) as (s, value).
pub fn parse_log(text: &str, place: &Path) -> Result<Samples, FitError> {
    let mut samples = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed = (fields.len() >= 4)
            .then(|| {
                Some((
                    fields[0].parse::<u64>().ok()?,
                    fields[1].parse::<u64>().ok()?,
                ))
            })
            .flatten();
        let Some((t_ms, v)) = parsed else {
            return Err(FitError::bad(
                format!("{}:{}", place.display(), i + 1),
                "expected a fio log line `time, value, direction, block size, offset` (the file is cut short or not a fio log)",
            ));
        };
        samples.push((t_ms as f64 / 1000.0, v as f64));
    }
    if samples.is_empty() {
        return Err(FitError::bad(
            place.display(),
            "an empty log: expected fio's log lines",
        ));
    }
    Ok(samples)
}

/// A job shorter than this may leave its log empty or nearly so: fio logs averaged samples
/// from a helper thread that takes its first well after the job starts (fio 3.33 on a fast
/// target: the first sample of a 20 ms log at 139 ms).
const SHORT_JOB_MS: f64 = 1000.0;

/// The job ran for less than [`SHORT_JOB_MS`] (its longest job's `job_runtime`).
fn short_job(doc: &Value) -> bool {
    let ms = doc["jobs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|j| j["job_runtime"].as_f64())
        .fold(f64::NAN, f64::max);
    ms.is_finite() && ms < SHORT_JOB_MS
}

/// A short job's log in place of what fio logged: one sample at the job's end of its mean
/// write rate from its JSON (KiB/s for a bandwidth log, IOPS for an IOPS log), so the
/// figures read from it are the job's means (a cache the write never left).
fn mean_sample(doc: &Value, place: &Path) -> Samples {
    let bw_log = place.to_string_lossy().contains("_bw.");
    let ms = dir_figure(doc, "write", &["runtime"]);
    let value = if bw_log {
        dir_figure(doc, "write", &["bw_bytes"]) / 1024.0
    } else {
        dir_figure(doc, "write", &["iops"])
    };
    vec![(ms / 1000.0, value)]
}

/// A bandwidth or IOPS log must account for most of its job's I/O: a cut log is refused.
fn check_covers(
    samples: &Samples,
    doc: &Value,
    place: &Path,
    job: &PlanJob,
) -> Result<(), FitError> {
    let bw_log = place.to_string_lossy().contains("_bw.");
    let done = if bw_log {
        dir_figure(doc, "write", &["io_bytes"])
    } else {
        dir_figure(doc, "write", &["total_ios"])
    };
    let scale = if bw_log { 1024.0 } else { 1.0 };
    let mut logged = 0.0;
    let mut prev_t = 0.0;
    for &(t, v) in samples {
        logged += v * scale * (t - prev_t);
        prev_t = t;
    }
    if done.is_finite() && logged < 0.5 * done {
        return Err(FitError::bad(
            place.display(),
            format!(
                "the log accounts for {logged:.0} of the {done:.0} the job {} did: it is cut short",
                job.name
            ),
        ));
    }
    Ok(())
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The cache cliff of a whole-capacity write's bandwidth log (KiB/s samples): the rate in
/// the cache is the mean of those of the first ten samples within three quarters of
/// their second highest (so a burst into the write buffer, a stall at the start while the
/// drive folds or flushes what came before, and the samples past a cache of a few samples
/// all stay out of it); the cliff is where the rate, once at the cache's, first stays
/// under three quarters of it for three samples; the rate after it is the mean of
/// the first half of what follows, the rate of the full drive the mean of the last
/// quarter. A log sample averages its interval, so the cache runs out inside the sample
/// whose rate lies between the two: the cache size counts that sample (and the one before,
/// which may hold the change as well) by the share of its time at the cache's rate, so it
/// is not held to whole samples (a sample of a 1 GB drive's log is a fifth of a small
/// cache).
pub fn cliff(samples: &Samples) -> Cliff {
    let mut series = Vec::with_capacity(samples.len());
    let mut written = 0.0;
    let mut prev_t = 0.0;
    for &(t, kib_s) in samples {
        written += kib_s * 1024.0 * (t - prev_t);
        prev_t = t;
        series.push((written, kib_s * 1024.0));
    }
    let rates: Vec<f64> = series.iter().map(|p| p.1).collect();
    let n = rates.len();
    let in_cache = cache_rate(&rates);
    let late = mean(&rates[n * 3 / 4..]);
    let low = 0.75 * in_cache;
    let reached = rates.iter().position(|&r| r >= low).unwrap_or(0);
    let falls = (reached.max(1)..n).find(|&i| rates[i..].iter().take(3).all(|&r| r < low));
    let Some(at) = falls else {
        return Cliff {
            in_cache_bytes_s: in_cache,
            post_cache_bytes_s: f64::NAN,
            late_bytes_s: late,
            cliff_bytes: written,
            series,
        };
    };
    // The sample the cache ran out in is the first of the fall; the rate after it starts
    // with the next.
    let after = &rates[(at + 1).min(n - 1)..];
    let post = mean(&after[..after.len().div_ceil(2)]);
    let cliff_bytes = cache_bytes(samples, at, in_cache, post);
    Cliff {
        in_cache_bytes_s: in_cache,
        post_cache_bytes_s: post,
        late_bytes_s: late,
        cliff_bytes,
        series,
    }
}

/// The rate of the first samples' plateau: the mean of those of the first ten within
/// three quarters of their second highest, less the highest (a burst into the buffer).
fn cache_rate(rates: &[f64]) -> f64 {
    let first = &rates[..rates.len().min(10)];
    let mut sorted = first.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let Some(&peak) = sorted.get(1).or(sorted.first()) else {
        return f64::NAN;
    };
    let mut plateau: Vec<f64> = first
        .iter()
        .copied()
        .filter(|&r| r >= 0.75 * peak)
        .collect();
    // Less its highest, which may hold a burst into the buffer.
    if plateau.len() > 1 {
        let top = (0..plateau.len())
            .max_by(|&a, &b| plateau[a].total_cmp(&plateau[b]))
            .unwrap_or(0);
        plateau.remove(top);
    }
    mean(&plateau)
}

/// The mean of rates: a log sample holds whole I/Os (a 5 ms sample of 128 KiB writes
/// moves in steps of 26 MB/s), so a rate over many samples is their mean, which the
/// steps average out of, where a median keeps one sample's step.
fn mean(rates: &[f64]) -> f64 {
    if rates.is_empty() {
        return f64::NAN;
    }
    rates.iter().sum::<f64>() / rates.len() as f64
}

/// Bytes written at the cache's rate `in_cache` (bytes/s) before a log (KiB/s) falls at
/// sample `at` to `post`: every sample before `at - 1` whole, samples `at - 1` and `at` by
/// the share of their time at `in_cache` that their mean rate gives.
fn cache_bytes(samples: &Samples, at: usize, in_cache: f64, post: f64) -> f64 {
    let mut bytes = 0.0;
    let mut prev_t = 0.0;
    for (i, &(t, kib_s)) in samples.iter().enumerate().take(at + 1) {
        let (rate, dt) = (kib_s * 1024.0, t - prev_t);
        prev_t = t;
        bytes += if i + 1 < at {
            rate * dt
        } else if in_cache > post {
            ((rate - post) / (in_cache - post)).clamp(0.0, 1.0) * in_cache * dt
        } else {
            0.0
        };
    }
    bytes
}

/// Bytes a bandwidth log (KiB/s) wrote above `threshold` bytes/s before it first fell below.
fn bytes_above(samples: &Samples, threshold: f64) -> f64 {
    let mut written = 0.0;
    let mut prev_t = 0.0;
    for &(t, kib_s) in samples {
        if kib_s * 1024.0 < threshold {
            break;
        }
        written += kib_s * 1024.0 * (t - prev_t);
        prev_t = t;
    }
    written
}

/// Writes of a per-I/O latency log that completed at buffer speed: until the median of a
/// window of 64 is three times that of the first 64.
fn buffered_ios(clat: &Samples) -> f64 {
    const W: usize = 64;
    if clat.len() < 2 * W {
        return clat.len() as f64;
    }
    let lat: Vec<f64> = clat.iter().map(|s| s.1).collect();
    let base = median(&mut lat[..W].to_vec());
    let mut i = W;
    while i + W <= lat.len() {
        if median(&mut lat[i..i + W].to_vec()) > 3.0 * base {
            return i as f64;
        }
        i += W / 4;
    }
    lat.len() as f64
}

/// Samples of the IOPS log that must all lie under a third of the initial rate for GC to
/// have started: the rate before GC dips for a sample or two as the write buffer and the
/// background threshold come and go, and GC's rate is a fraction of it for good.
const GC_ONSET_SAMPLES: usize = 5;

/// Bytes of 4 KiB random writes an IOPS log wrote before GC slowed it: up to the first
/// sample from which [`GC_ONSET_SAMPLES`] samples all lie under a third of the initial rate
/// (the median of the first five); the whole log's bytes when the rate never falls so.
fn gc_onset(iops: &Samples) -> f64 {
    let rates: Vec<f64> = iops.iter().map(|s| s.1).collect();
    let initial = median(&mut rates[..rates.len().min(5)].to_vec());
    let mut written = 0.0;
    let mut prev_t = 0.0;
    for (i, &(t, v)) in iops.iter().enumerate() {
        let window = &rates[i..(i + GC_ONSET_SAMPLES).min(rates.len())];
        if i > 0 && window.iter().all(|&r| r < initial / 3.0) {
            return written;
        }
        written += v * 4096.0 * (t - prev_t);
        prev_t = t;
    }
    written
}

/// The steady IOPS of a random-write IOPS log (the mean of its last third) and the log as
/// (bytes written, IOPS).
fn steady(samples: &Samples) -> (f64, Samples) {
    let mut series = Vec::with_capacity(samples.len());
    let mut written = 0.0;
    let mut prev_t = 0.0;
    for &(t, iops) in samples {
        written += iops * 4096.0 * (t - prev_t);
        prev_t = t;
        series.push((written, iops));
    }
    let tail = &samples[samples.len() * 2 / 3..];
    let mean = tail.iter().map(|s| s.1).sum::<f64>() / tail.len().max(1) as f64;
    (mean, series)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cliff_is_found_where_the_rate_stays_low() {
        let samples: Samples = (1..=30)
            .map(|i| {
                (
                    i as f64 * 0.1,
                    if i <= 10 {
                        300_000.0
                    } else if i <= 25 {
                        100_000.0
                    } else {
                        50_000.0
                    },
                )
            })
            .collect();
        let c = cliff(&samples);
        assert_eq!(c.in_cache_bytes_s, 300_000.0 * 1024.0);
        assert_eq!(c.post_cache_bytes_s, 100_000.0 * 1024.0);
        // The last quarter: three samples at 100,000 KiB/s and five at 50,000.
        assert_eq!(
            c.late_bytes_s,
            (3.0 * 100_000.0 + 5.0 * 50_000.0) / 8.0 * 1024.0
        );
        let expected = 10.0 * 0.1 * 300_000.0 * 1024.0;
        assert!((c.cliff_bytes - expected).abs() < 1.0, "{}", c.cliff_bytes);
    }

    #[test]
    fn a_stall_at_the_start_and_a_short_cache_leave_the_cache_rate_as_it_is() {
        // 5 ms samples: three stalled while the drive folds what came before, a burst into
        // the buffer, five at the cache's 700 MB/s, then 100 MB/s.
        let rates = [50.0, 60.0, 40.0, 900.0, 700.0, 700.0, 710.0, 690.0, 700.0];
        let samples: Samples = rates
            .iter()
            .chain([100.0; 40].iter())
            .enumerate()
            .map(|(i, &mb_s)| ((i + 1) as f64 * 0.005, mb_s * 1e6 / 1024.0))
            .collect();
        let c = cliff(&samples);
        assert!(
            (c.in_cache_bytes_s - 700e6).abs() < 1.0,
            "{}",
            c.in_cache_bytes_s
        );
        assert!((c.post_cache_bytes_s - 100e6).abs() < 1.0);
        // The cliff is after the cache's samples, not in the stall before them.
        assert!(c.cliff_bytes > 5.0 * 0.005 * 690e6, "{}", c.cliff_bytes);
        // A cache of two samples: the rate past it stays out of the cache's.
        let short: Samples = [800.0, 700.0, 700.0]
            .iter()
            .chain([100.0; 40].iter())
            .enumerate()
            .map(|(i, &mb_s)| ((i + 1) as f64 * 0.005, mb_s * 1e6 / 1024.0))
            .collect();
        assert!((cliff(&short).in_cache_bytes_s - 700e6).abs() < 1.0);
    }

    #[test]
    fn a_cache_that_runs_out_inside_a_sample_is_counted_to_within_it() {
        // 0.1 s samples; the cache (300 MiB/s) runs out 0.04 s into the eleventh.
        let samples: Samples = (1..=30)
            .map(|i| {
                let rate = match i {
                    1..=10 => 300_000.0,
                    11 => 0.4 * 300_000.0 + 0.6 * 100_000.0,
                    _ => 100_000.0,
                };
                (i as f64 * 0.1, rate)
            })
            .collect();
        let c = cliff(&samples);
        let expected = 10.4 * 0.1 * 300_000.0 * 1024.0;
        assert!((c.cliff_bytes - expected).abs() < 1e3, "{}", c.cliff_bytes);
    }

    #[test]
    fn a_cut_log_line_names_its_line() {
        let e = parse_log("100, 2000, 1, 0, 0\n200, 20", Path::new("x_bw.1.log")).unwrap_err();
        assert!(e.bad_input);
        assert!(e.message.starts_with("x_bw.1.log:2: "), "{}", e.message);
    }

    /// A fio document of one write job that ran `ms` at `bw` bytes/s.
    fn write_doc(ms: u64, bw: f64) -> Value {
        serde_json::json!({"jobs": [{"jobname": "seq-fill", "job_runtime": ms,
            "write": {"total_ios": 2048, "runtime": ms, "bw_bytes": bw, "iops": bw / 131072.0}}]})
    }

    #[test]
    fn a_short_job_without_log_samples_reads_as_its_mean_rate() {
        // fio 3.33 wrote no bandwidth sample for a 256 MiB fill in 148 ms on a file target.
        let doc = write_doc(148, 2.6e9);
        assert!(short_job(&doc));
        assert!(!short_job(&write_doc(3_000, 2.6e9)));
        let samples = mean_sample(&doc, Path::new("seq-fill_bw.1.log"));
        assert_eq!(samples, vec![(0.148, 2.6e9 / 1024.0)]);
        let c = cliff(&samples);
        assert!((c.in_cache_bytes_s - 2.6e9).abs() < 1.0);
        assert!(c.post_cache_bytes_s.is_nan(), "no cliff is seen in a mean");
        assert!((c.cliff_bytes - 2.6e9 * 0.148).abs() < 1e3);
    }

    #[test]
    fn gc_onset_is_where_the_rate_stays_under_a_third() {
        // 10 ms samples: 20k IOPS with two dips, then 2k IOPS from the 31st on.
        let iops: Samples = (1..=60)
            .map(|i| {
                let r = match i {
                    12 | 13 => 9_000.0,
                    1..=30 => 20_000.0,
                    _ => 2_000.0,
                };
                (i as f64 * 0.01, r)
            })
            .collect();
        let expected = 30.0 * 0.01 * 20_000.0 * 4096.0 - 2.0 * 0.01 * 11_000.0 * 4096.0;
        assert!(
            (gc_onset(&iops) - expected).abs() < 1.0,
            "{}",
            gc_onset(&iops)
        );
        let flat: Samples = (1..=10).map(|i| (i as f64 * 0.01, 20_000.0)).collect();
        assert!((gc_onset(&flat) - 0.1 * 20_000.0 * 4096.0).abs() < 1.0);
    }

    #[test]
    fn buffered_writes_end_where_latency_jumps() {
        let clat: Samples = (0..1000)
            .map(|i| (0.0, if i < 400 { 10.0 } else { 100.0 }))
            .collect();
        let n = buffered_ios(&clat);
        assert!((360.0..=400.0).contains(&n), "{n}");
    }
}
