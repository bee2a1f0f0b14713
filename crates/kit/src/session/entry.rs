//! A session's steps as the precondition cache keeps them (`flashlab_cache`): every record
//! field by field, floats by their bits, so a restored step reports and draws what the run
//! did.

use flashlab_cache::{corrupt, get_opt_str, get_str, put_opt_str, put_str, SessionRecord};
use flashlab_device::HealthLog;
use flashlab_engine::{State, StateError, StateReader, StateWriter};

use crate::measure::{Coord, LocalAxis, LocalCoord, Measure, LOCAL_WORDS};
use crate::record::{DirectionFigures, JobFigures, StepKind, StepRecord};
use crate::Unit;

/// The steps a checkpoint recorded, as an entry holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedSteps(pub Vec<StepRecord>);

impl SessionRecord for CachedSteps {
    /// The axes of the suite's own the steps' coordinates may lie on.
    type Context = [&'static LocalAxis];

    fn put(&self, w: &mut StateWriter<'_>) {
        w.put_len(self.0.len());
        for s in &self.0 {
            put_step(w, s);
        }
    }

    fn get(r: &mut StateReader<'_>, axes: &[&'static LocalAxis]) -> Result<Self, StateError> {
        let n = r.get_len(16)?;
        (0..n)
            .map(|_| get_step(r, axes))
            .collect::<Result<_, _>>()
            .map(CachedSteps)
    }
}

const STEP_KINDS: [StepKind; 4] = [
    StepKind::Purge,
    StepKind::Job,
    StepKind::Idle,
    StepKind::Driven,
];
const UNITS: [Unit; 7] = [
    Unit::BytesPerS,
    Unit::Iops,
    Unit::Ns,
    Unit::Count,
    Unit::Ratio,
    Unit::Bytes,
    Unit::Percent,
];

fn index_of<T: PartialEq>(all: &[T], v: &T) -> u8 {
    all.iter().position(|x| x == v).unwrap_or(0) as u8
}

fn from_index<T: Copy>(all: &[T], i: u8, what: &str) -> Result<T, StateError> {
    all.get(usize::from(i))
        .copied()
        .ok_or_else(|| corrupt(format!("{what} {i}")))
}

/// Most distinct names (measure families and named coordinates) read back from cache files in
/// one process: each is kept for the process's life, as the names a suite spells are.
const MAX_INTERNED_NAMES: usize = 4096;

/// The `&'static str` a measure's family or named coordinate needs, for a name read back from a
/// cache file. Each distinct name is allocated once; a file that names more than
/// [`MAX_INTERNED_NAMES`] is refused as corrupt rather than grow memory without bound.
fn intern(name: String) -> Result<&'static str, StateError> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&kept) = names.get(&name) {
        return Ok(kept);
    }
    if names.len() >= MAX_INTERNED_NAMES {
        return Err(corrupt(format!(
            "more than {MAX_INTERNED_NAMES} distinct measure names"
        )));
    }
    let kept: &'static str = Box::leak(name.clone().into_boxed_str());
    names.insert(name, kept);
    Ok(kept)
}

fn tagged(w: &mut StateWriter<'_>, tag: u8, v: u64) {
    w.put_u8(tag);
    w.put_u64(v);
}

fn put_coord(w: &mut StateWriter<'_>, c: &Coord) {
    match *c {
        Coord::Depth(v) => tagged(w, 0, v.into()),
        Coord::Block(v) => tagged(w, 1, v),
        Coord::SeqBlock(v) => tagged(w, 2, v),
        Coord::Transfer(v) => tagged(w, 3, v),
        Coord::WriteSize(v) => tagged(w, 4, v),
        Coord::Mix(v) => tagged(w, 5, v.into()),
        Coord::Percentile(v) => tagged(w, 6, v.to_bits()),
        Coord::Round(v) => tagged(w, 7, v.into()),
        Coord::Interval(v) => tagged(w, 8, v.into()),
        Coord::Step(v) => tagged(w, 9, v.into()),
        Coord::Load(v) => tagged(w, 10, v.into()),
        Coord::Pass(v) => tagged(w, 11, v.into()),
        Coord::Compressible(v) => tagged(w, 12, v.into()),
        Coord::Dirty(v) => tagged(w, 14, v),
        Coord::Idle(v) => tagged(w, 15, v),
        Coord::Op(v) => tagged(w, 17, v.to_bits()),
        Coord::RunTime(v) => tagged(w, 18, v),
        Coord::Namespace(v) => tagged(w, 20, v.into()),
        Coord::PowerState(v) => tagged(w, 22, v.into()),
        Coord::Profile(v) => {
            w.put_u8(23);
            put_str(w, v);
        }
        Coord::Test(v) => {
            w.put_u8(24);
            put_str(w, v);
        }
        Coord::Phase(v) => {
            w.put_u8(25);
            put_str(w, v);
        }
        Coord::Local(c) => {
            w.put_u8(26);
            put_str(w, c.axis.name);
            for word in c.words {
                w.put_u64(word);
            }
        }
    }
}

fn get_coord(r: &mut StateReader<'_>, axes: &[&'static LocalAxis]) -> Result<Coord, StateError> {
    fn small(r: &mut StateReader<'_>) -> Result<u32, StateError> {
        let v = r.get_u64()?;
        u32::try_from(v).map_err(|_| corrupt(format!("coordinate {v} out of range")))
    }
    Ok(match r.get_u8()? {
        0 => Coord::Depth(small(r)?),
        1 => Coord::Block(r.get_u64()?),
        2 => Coord::SeqBlock(r.get_u64()?),
        3 => Coord::Transfer(r.get_u64()?),
        4 => Coord::WriteSize(r.get_u64()?),
        5 => Coord::Mix(small(r)?),
        6 => Coord::Percentile(f64::from_bits(r.get_u64()?)),
        7 => Coord::Round(small(r)?),
        8 => Coord::Interval(small(r)?),
        9 => Coord::Step(small(r)?),
        10 => Coord::Load(small(r)?),
        11 => Coord::Pass(small(r)?),
        12 => Coord::Compressible(small(r)?),
        14 => Coord::Dirty(r.get_u64()?),
        15 => Coord::Idle(r.get_u64()?),
        17 => Coord::Op(f64::from_bits(r.get_u64()?)),
        18 => Coord::RunTime(r.get_u64()?),
        20 => Coord::Namespace(small(r)?),
        22 => Coord::PowerState(small(r)?),
        23 => Coord::Profile(intern(get_str(r)?)?),
        24 => Coord::Test(intern(get_str(r)?)?),
        25 => Coord::Phase(intern(get_str(r)?)?),
        26 => {
            let name = get_str(r)?;
            let axis = axes
                .iter()
                .copied()
                .find(|a| a.name == name)
                .ok_or_else(|| corrupt(format!("the suite has no axis '{name}'")))?;
            let mut words = [0; LOCAL_WORDS];
            for word in &mut words {
                *word = r.get_u64()?;
            }
            Coord::Local(LocalCoord::new(axis, words))
        }
        t => return Err(corrupt(format!("coordinate tag {t}"))),
    })
}

fn put_measure(w: &mut StateWriter<'_>, m: &Measure) {
    put_str(w, m.family);
    w.put_len(m.row.len());
    for c in &m.row {
        put_coord(w, c);
    }
    match &m.col {
        None => w.put_u8(0),
        Some(c) => {
            w.put_u8(1);
            put_coord(w, c);
        }
    }
    w.put_u8(index_of(&UNITS, &m.unit));
    w.put_u64(m.value.to_bits());
}

fn get_measure(
    r: &mut StateReader<'_>,
    axes: &[&'static LocalAxis],
) -> Result<Measure, StateError> {
    let family = intern(get_str(r)?)?;
    let n = r.get_len(1)?;
    let row = (0..n)
        .map(|_| get_coord(r, axes))
        .collect::<Result<_, _>>()?;
    let col = match r.get_u8()? {
        0 => None,
        1 => Some(get_coord(r, axes)?),
        t => return Err(corrupt(format!("option tag {t}"))),
    };
    Ok(Measure {
        family,
        row,
        col,
        unit: from_index(&UNITS, r.get_u8()?, "unit")?,
        value: f64::from_bits(r.get_u64()?),
    })
}

fn put_step(w: &mut StateWriter<'_>, s: &StepRecord) {
    put_str(w, &s.name);
    w.put_u8(index_of(&STEP_KINDS, &s.kind));
    put_opt_str(w, s.job_text.as_deref());
    put_opt_str(w, s.fio_json.as_deref());
    put_figures(w, s.figures.as_ref());
    put_health(w, s.health.as_ref());
    w.put_u64(s.end_ns);
    w.put_len(s.measures.len());
    for m in &s.measures {
        put_measure(w, m);
    }
}

fn get_step(
    r: &mut StateReader<'_>,
    axes: &[&'static LocalAxis],
) -> Result<StepRecord, StateError> {
    let name = get_str(r)?;
    let kind = from_index(&STEP_KINDS, r.get_u8()?, "step kind")?;
    let job_text = get_opt_str(r)?;
    let fio_json = get_opt_str(r)?;
    let figures = get_figures(r)?;
    let health = get_health(r)?;
    let end_ns = r.get_u64()?;
    let n = r.get_len(10)?;
    let measures = (0..n)
        .map(|_| get_measure(r, axes))
        .collect::<Result<_, _>>()?;
    Ok(StepRecord {
        name,
        kind,
        job_text,
        fio_json,
        figures,
        health,
        end_ns,
        measures,
    })
}

/// A step's figures, every float by its bits: a restored step draws what the run drew.
fn put_figures(w: &mut StateWriter<'_>, figures: Option<&JobFigures>) {
    let Some(f) = figures else {
        w.put_u8(0);
        return;
    };
    w.put_u8(1);
    put_str(w, &f.workload);
    w.put_u8(u8::from(f.random));
    w.put_u64(f.bs_bytes);
    w.put_u64(u64::from(f.iodepth));
    w.put_u64(u64::from(f.numjobs));
    for d in [&f.read, &f.write] {
        w.put_u64(d.ios);
        for v in [d.iops, d.bw_bytes_per_s, d.clat_mean_ns] {
            w.put_u64(v.to_bits());
        }
        put_pairs(w, &d.percentiles);
    }
    put_pairs(w, &f.distribution);
}

fn put_pairs(w: &mut StateWriter<'_>, pairs: &[(f64, f64)]) {
    w.put_len(pairs.len());
    for (a, b) in pairs {
        w.put_u64(a.to_bits());
        w.put_u64(b.to_bits());
    }
}

/// The most percentiles or distribution buckets a step's figures hold (fio takes at most 20
/// percentiles; its distribution has 32 bounded buckets).
const MAX_FIGURE_PAIRS: usize = 64;

fn get_pairs(r: &mut StateReader<'_>) -> Result<Vec<(f64, f64)>, StateError> {
    let n = r.get_len(16)?;
    if n > MAX_FIGURE_PAIRS {
        return Err(corrupt(format!(
            "a step's figures hold {n} pairs (at most {MAX_FIGURE_PAIRS})"
        )));
    }
    (0..n)
        .map(|_| Ok((f64::from_bits(r.get_u64()?), f64::from_bits(r.get_u64()?))))
        .collect()
}

fn get_figures(r: &mut StateReader<'_>) -> Result<Option<JobFigures>, StateError> {
    match r.get_u8()? {
        0 => return Ok(None),
        1 => {}
        other => return Err(corrupt(format!("a step's figures flag {other} (0 or 1)"))),
    }
    let workload = get_str(r)?;
    let random = r.get_u8()? != 0;
    let bs_bytes = r.get_u64()?;
    let count = |r: &mut StateReader<'_>, what: &str| {
        u32::try_from(r.get_u64()?).map_err(|_| corrupt(format!("a step's {what} past u32")))
    };
    let iodepth = count(r, "iodepth")?;
    let numjobs = count(r, "numjobs")?;
    let mut dirs = [DirectionFigures::default(), DirectionFigures::default()];
    for d in &mut dirs {
        d.ios = r.get_u64()?;
        d.iops = f64::from_bits(r.get_u64()?);
        d.bw_bytes_per_s = f64::from_bits(r.get_u64()?);
        d.clat_mean_ns = f64::from_bits(r.get_u64()?);
        d.percentiles = get_pairs(r)?;
    }
    let [read, write] = dirs;
    Ok(Some(JobFigures {
        workload,
        random,
        bs_bytes,
        iodepth,
        numjobs,
        read,
        write,
        distribution: get_pairs(r)?,
    }))
}

/// A step's health log, typed: each field in the state encoding, as the device's own state
/// file writes it.
fn put_health(w: &mut StateWriter<'_>, health: Option<&HealthLog>) {
    // As `Option<HealthLog>` saves itself, without a copy of the log.
    match health {
        None => w.put_u8(0),
        Some(h) => {
            w.put_u8(1);
            h.save(w);
        }
    }
}

fn get_health(r: &mut StateReader<'_>) -> Result<Option<HealthLog>, StateError> {
    let mut health: Option<HealthLog> = None;
    health.load(r)?;
    Ok(health)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Dim;
    use flashlab_engine::state::StateHeader;

    fn word(w: &[u64; LOCAL_WORDS]) -> String {
        w[0].to_string()
    }

    fn cells(_: &[u64; LOCAL_WORDS]) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Two axes of a suite's own, as a suite defines them.
    static SIZE: LocalAxis = LocalAxis {
        name: "test-size",
        dim: Dim::Test,
        key: word,
        value: word,
        tidy: cells,
    };
    static SET: LocalAxis = LocalAxis {
        name: "test-set",
        dim: Dim::Test,
        key: word,
        value: word,
        tidy: cells,
    };

    fn steps() -> CachedSteps {
        let config = flashlab_device::load_device_config("tiny-test-1gb", &[]).unwrap();
        let ssd = flashlab_device::Ssd::new(&config, flashlab_engine::SeedTree::new(3)).unwrap();
        CachedSteps(vec![StepRecord {
            name: "fill".into(),
            kind: StepKind::Job,
            job_text: Some("[fill]\nrw=write\n".into()),
            fio_json: None,
            // Floats that print alike in few digits must come back by their bits.
            figures: Some(JobFigures {
                workload: "128k write".into(),
                random: false,
                bs_bytes: 128 << 10,
                iodepth: 32,
                numjobs: 2,
                read: DirectionFigures::default(),
                write: DirectionFigures {
                    ios: 12,
                    iops: 0.1 + 0.2,
                    bw_bytes_per_s: 1e9 / 3.0,
                    clat_mean_ns: 7.5,
                    percentiles: vec![(99.99, 1234.0), (50.0, 17.0)],
                },
                distribution: vec![(2000.0, 33.3), (1e6, 0.01)],
            }),
            health: Some(ssd.health_log()),
            end_ns: 42,
            measures: vec![
                Measure::new("bw_bytes_per_s", Unit::BytesPerS, 0.1 + 0.2),
                // Every kind of coordinate encoding: numbers, floats, fields, names.
                Measure::new("read_lat_ns", Unit::Ns, 7.0)
                    .col(Coord::Percentile(99.9))
                    .under(&[
                        Coord::Phase("fill"),
                        Coord::Op(0.07),
                        Coord::Local(LocalCoord::new(&SIZE, [1, 4096, 1, 1])),
                        Coord::Local(LocalCoord::new(&SET, [5, 4, 0, 0])),
                    ]),
            ],
        }])
    }

    fn written(s: &CachedSteps) -> Vec<u8> {
        let header = StateHeader {
            kind: "test".into(),
            config_hash: 0,
            device_seed: 0,
            clock_ns: 0,
        };
        let mut bytes = Vec::new();
        let mut w = StateWriter::new(&mut bytes, &header);
        w.section("steps", |w| s.put(w));
        w.finish().unwrap();
        bytes
    }

    fn read(bytes: &[u8], axes: &[&'static LocalAxis]) -> Result<CachedSteps, StateError> {
        let (mut r, _) = StateReader::new(bytes, bytes.len() as u64)?;
        let mut out = None;
        r.section("steps", |r| {
            out = Some(CachedSteps::get(r, axes)?);
            Ok(())
        })?;
        r.finish()?;
        out.ok_or_else(|| corrupt("no steps"))
    }

    #[test]
    fn steps_read_back_whole_with_their_health_log_typed() {
        let s = steps();
        let bytes = written(&s);
        assert_eq!(read(&bytes, &[&SIZE, &SET]).unwrap(), s);
        // A coordinate on an axis the suite does not have is refused, not misread.
        let err = read(&bytes, &[&SIZE]).unwrap_err().to_string();
        assert!(err.contains("no axis 'test-set'"), "{err}");
    }
}
