//! What a suite run may be told: its seed, the length of a preconditioning round, queue depth,
//! job count, mix and measurement window.

use std::any::Any;
use std::borrow::Cow;

use flashlab_engine::{NS_PER_MS, NS_PER_S};

use crate::client_options::ClientOptions;
pub use crate::lengths::RoundLength;
use crate::SuiteError;

/// How the app-profiles, write-pressure and noisy-neighbor suites precondition the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreconditionKind {
    /// SNIA PTS: purge, 128 KiB sequential fill twice, 4 KiB random-write rounds to steady
    /// state, all over the whole drive.
    Pts,
    /// The enterprise-review recipe (VDbench): purge, the whole surface written with 64 KiB
    /// sequential writes, more 64 KiB sequential writes for a time, then 4 KiB random writes
    /// for a time over the span only.
    Showdown,
}

impl PreconditionKind {
    pub const ALL: [PreconditionKind; 2] = [PreconditionKind::Pts, PreconditionKind::Showdown];

    pub fn name(self) -> &'static str {
        match self {
            PreconditionKind::Pts => "pts",
            PreconditionKind::Showdown => "showdown",
        }
    }

    /// `pts` or `showdown`.
    pub fn parse(text: &str) -> Result<PreconditionKind, SuiteError> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == text.trim())
            .ok_or_else(|| SuiteError::BadOption {
                option: "--precondition",
                value: text.to_string(),
                valid: "pts (purge, 2x sequential fill, random rounds to steady state) or \
                        showdown (purge, 64 KiB surface fill, --seq-time of 64 KiB sequential \
                        writes, --random-time of 4 KiB random writes over --span)"
                    .into(),
            })
    }
}

/// Longest simulated time a preconditioning phase may ask for: a year bounds a run.
pub const MAX_PRECONDITION_NS: u64 = 365 * 86_400 * NS_PER_S;

/// Preconditioning and test region of the app-profiles, write-pressure and noisy-neighbor
/// suites.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreconditionOptions {
    pub kind: PreconditionKind,
    /// The tests' region, as a partition would be: the first `span_percent` % of the LBAs.
    /// The rest keeps what the surface fill wrote and is never trimmed.
    pub span_percent: f64,
    /// showdown: simulated time of 64 KiB sequential writes after the surface fill (0: none).
    pub seq_ns: u64,
    /// showdown: simulated time of 4 KiB random writes over the span.
    pub random_ns: u64,
}

impl Default for PreconditionOptions {
    fn default() -> Self {
        Self {
            kind: PreconditionKind::Pts,
            span_percent: 100.0,
            seq_ns: 3600 * NS_PER_S,
            random_ns: 3600 * NS_PER_S,
        }
    }
}

impl PreconditionOptions {
    /// Parse `--span`: `25` or `25%`.
    pub fn parse_span(text: &str) -> Result<f64, SuiteError> {
        let t = text.trim();
        let v: f64 = t
            .strip_suffix('%')
            .unwrap_or(t)
            .trim()
            .parse()
            .map_err(|_| Self::bad_span(text))?;
        Ok(v)
    }

    fn bad_span(text: &str) -> SuiteError {
        SuiteError::BadOption {
            option: "--span",
            value: text.to_string(),
            valid: "a percentage of the LBAs above 0 and at most 100 (25 or 25%)".into(),
        }
    }

    pub fn validate(&self) -> Result<(), SuiteError> {
        let span = self.span_percent;
        if !(span.is_finite() && span > 0.0 && span <= 100.0) {
            return Err(Self::bad_span(&span.to_string()));
        }
        if self.kind == PreconditionKind::Pts && span < 100.0 {
            return Err(SuiteError::BadOption {
                option: "--span",
                value: span.to_string(),
                valid: "100 with --precondition pts (it preconditions the whole drive); a \
                        partition takes --precondition showdown"
                    .into(),
            });
        }
        let time = |option: &'static str, ns: u64, min_ns: u64| {
            if ns < min_ns || ns > MAX_PRECONDITION_NS {
                Err(SuiteError::BadOption {
                    option,
                    value: format!("{ns} ns"),
                    valid: format!(
                        "a simulated time from {} to a year (1h)",
                        if min_ns == 0 { "0" } else { "1ms" }
                    ),
                })
            } else {
                Ok(())
            }
        };
        time("--seq-time", self.seq_ns, 0)?;
        time("--random-time", self.random_ns, NS_PER_MS)?;
        Ok(())
    }

    /// The job line that confines a job to the span (`None` for the whole drive, so jobs
    /// without a partition stay exactly as they were).
    pub fn span_line(&self) -> Option<String> {
        (self.span_percent < 100.0).then(|| format!("size={}%", self.span_percent))
    }

    /// What ran, as the JSON report states it.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "method": self.kind.name(),
            "span_percent": self.span_percent,
        });
        if self.kind == PreconditionKind::Showdown {
            v["seq_time_ns"] = self.seq_ns.into();
            v["random_time_ns"] = self.random_ns.into();
        }
        v
    }
}

/// What every suite takes, what several suites share, and each suite's own options.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteOptions {
    /// Master seed: the device and every step derive their streams from it.
    pub seed: u64,
    /// Length of a random-write preconditioning round.
    pub round: RoundLength,
    /// Rounds before giving up on steady state.
    pub max_rounds: usize,
    /// Percent of each random-write round and of each `wsat` interval (its end) written
    /// through the timing model and measured; the rest is written without it where the
    /// drive's state does not depend on timing ([`crate::Session::untimed_allowed`]). 100:
    /// every round timed whole.
    pub round_timed_percent: u8,
    /// Queue depth of every measured job (`None`: the suite's default).
    pub qd: Option<u32>,
    /// Jobs (fio `numjobs`) of every measured job (`None`: 1).
    pub jobs: Option<u32>,
    /// Measured time of each time-based step (`None`: the step's default).
    pub runtime_ns: Option<u64>,
    /// What the client benchmarks, cache-passes and raid-scaling share: test region or file,
    /// CrystalDiskMark profile and the drive's state first.
    pub client: ClientOptions,
    /// One measured interval of wsat and sustained-write: a share of the capacity, a size or
    /// a simulated time.
    pub interval: RoundLength,
    /// write-pressure: queue depth of the 4 KiB random reader; noisy-neighbor: quiet readers
    /// run at depths 1 to this.
    pub read_qd: u32,
    /// Preconditioning and span of app-profiles, write-pressure, noisy-neighbor and oltp.
    pub precondition: PreconditionOptions,
    /// Share of every write's data a compressor can remove, in percent (`--compressible`;
    /// None: random data, fio's default). Only a compressing drive shows a difference.
    pub compressible_percent: Option<u8>,
    /// Run every preconditioning step through the timing model (`--timed-precondition`);
    /// by default the fills run without it where the drive's state does not depend on it
    /// ([`crate::Session::untimed_allowed`]).
    pub timed_precondition: bool,
    /// Where suites keep and find their drives' preconditioned state (`None`: they
    /// precondition every time). Never changes a figure: a cached preconditioning gives
    /// what running it gives.
    pub state_cache: Option<crate::StateCache>,
    /// Most threads a suite runs its independent drives on (op-sweep's spare points,
    /// placement's points, raid-scaling's sets); 0: as many as the machine has. Never
    /// changes a figure.
    pub threads: usize,
    /// Each suite's own options, by type ([`SuiteOptions::own`]).
    pub own: OwnOptionsSet,
}

/// A suite's own options: the type its `Suite::apply_args` fills from its command-line
/// options and its run reads back with [`SuiteOptions::own`] (the defaults when nobody set
/// them). Each suite module defines its own, so a new suite adds no field here.
pub trait OwnOptions: Any + Clone + Default + PartialEq + std::fmt::Debug + Send + Sync {
    /// Every option in range, or the first one that is not; `common` holds the options every
    /// suite takes and those several share.
    fn validate(&self, _common: &SuiteOptions) -> Result<(), SuiteError> {
        Ok(())
    }
}

/// [`OwnOptions`] behind a pointer: what the set stores.
trait AnyOwnOptions: Any + std::fmt::Debug + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn boxed_clone(&self) -> Box<dyn AnyOwnOptions>;
    fn same(&self, other: &dyn AnyOwnOptions) -> bool;
    fn check(&self, common: &SuiteOptions) -> Result<(), SuiteError>;
}

impl<T: OwnOptions> AnyOwnOptions for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn boxed_clone(&self) -> Box<dyn AnyOwnOptions> {
        Box::new(self.clone())
    }
    fn same(&self, other: &dyn AnyOwnOptions) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn check(&self, common: &SuiteOptions) -> Result<(), SuiteError> {
        self.validate(common)
    }
}

/// The suites' own options, at most one value of each type, in the order they were set.
#[derive(Debug, Default)]
pub struct OwnOptionsSet(Vec<Box<dyn AnyOwnOptions>>);

impl Clone for OwnOptionsSet {
    fn clone(&self) -> Self {
        Self(self.0.iter().map(|o| o.boxed_clone()).collect())
    }
}

/// Equal when they hold the same values, whatever the order they were set in.
impl PartialEq for OwnOptionsSet {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .all(|a| other.0.iter().any(|b| a.same(b.as_ref())))
    }
}

impl SuiteOptions {
    /// The suite options of type `T`: those set, else its defaults.
    pub fn own<T: OwnOptions>(&self) -> Cow<'_, T> {
        self.own
            .0
            .iter()
            .find_map(|o| o.as_any().downcast_ref::<T>())
            .map_or_else(|| Cow::Owned(T::default()), Cow::Borrowed)
    }

    /// The suite options of type `T` to change, set to its defaults first if not yet set.
    pub fn own_mut<T: OwnOptions>(&mut self) -> &mut T {
        let at = match self.own.0.iter().position(|o| o.as_any().is::<T>()) {
            Some(i) => i,
            None => {
                self.own.0.push(Box::new(T::default()));
                self.own.0.len() - 1
            }
        };
        self.own.0[at]
            .as_any_mut()
            .downcast_mut::<T>()
            .expect("the entry found holds a T")
    }

    /// These options with the suite options `value` set.
    pub fn with<T: OwnOptions>(mut self, value: T) -> Self {
        *self.own_mut::<T>() = value;
        self
    }
}

/// Most rounds one may ask for: bounds a run that never settles.
pub const MAX_ROUNDS_LIMIT: usize = 1000;
/// Percent of each random-write round written timed by default: enough writes for the
/// round's IOPS to settle (a twentieth of the drive's capacity at the default round of a
/// quarter), while the rest of the round, the part that only moves the drive's state on,
/// runs at the speed of the mapping.
pub const DEFAULT_ROUND_TIMED_PERCENT: u8 = 20;

/// Deepest queue a job may ask for.
pub const MAX_QD: u32 = 65_536;
/// Most jobs a measured step may run.
pub const MAX_JOBS: u32 = 256;

impl Default for SuiteOptions {
    fn default() -> Self {
        Self {
            seed: 1,
            round: RoundLength::CapacityFraction(0.25),
            max_rounds: 25,
            round_timed_percent: DEFAULT_ROUND_TIMED_PERCENT,
            qd: None,
            jobs: None,
            runtime_ns: None,
            client: ClientOptions::default(),
            // 1/25 of the capacity: 100 points over wsat's 4 drive fills.
            interval: RoundLength::CapacityFraction(0.04),
            read_qd: 4,
            precondition: Default::default(),
            compressible_percent: None,
            timed_precondition: false,
            state_cache: None,
            threads: 0,
            own: OwnOptionsSet::default(),
        }
    }
}

/// Longest simulated time an option may ask for: a year, in seconds.
const MAX_OPTION_SECONDS: f64 = 365.0 * 86_400.0;

/// Simulated seconds of `option` as ns, or an error naming the option.
pub fn seconds_ns(option: &'static str, seconds: f64) -> Result<u64, SuiteError> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_OPTION_SECONDS) {
        return Err(SuiteError::OptionValue {
            option,
            value: seconds.to_string(),
            expected: "expected a time above 0 and at most a year".into(),
        });
    }
    Ok((seconds * NS_PER_S as f64).round().max(1.0) as u64)
}

/// Simulated minutes of `option` as ns, or an error naming the option.
pub fn minutes_ns(option: &'static str, minutes: &[f64]) -> Result<Vec<u64>, SuiteError> {
    minutes
        .iter()
        .map(|&m| {
            seconds_ns(option, m * 60.0).map_err(|_| SuiteError::OptionValue {
                option,
                value: m.to_string(),
                expected: "expected minutes above 0 and at most a year, e.g. 20,60".into(),
            })
        })
        .collect()
}

/// The first entry of a list option whose key (what the suite names its results and steps
/// by) an earlier entry already has: `(position from 1, the entry)`. Repeats would run twice
/// and write the same result keys twice (the table shows one run, the JSON the other).
pub fn repeated<T: Clone, K: PartialEq>(list: &[T], key: impl Fn(&T) -> K) -> Option<(usize, T)> {
    let keys: Vec<K> = list.iter().map(&key).collect();
    (1..keys.len())
        .find(|&i| keys[..i].contains(&keys[i]))
        .map(|i| (i + 1, list[i].clone()))
}

/// [`SuiteError::BadOption`] for a repeated entry of `option`.
pub fn repeated_error(option: &'static str, value: String, position: usize) -> SuiteError {
    SuiteError::BadOption {
        option,
        value,
        valid: format!("each value once (listed again at position {position})"),
    }
}

impl SuiteOptions {
    /// Every option in range, or the first one that is not.
    pub fn validate(&self) -> Result<(), SuiteError> {
        let bad = |option: &'static str, value: String, valid: String| {
            Err(SuiteError::BadOption {
                option,
                value,
                valid,
            })
        };
        let window = crate::SteadyRule::SNIA_PTS.window;
        if self.max_rounds < window || self.max_rounds > MAX_ROUNDS_LIMIT {
            return bad(
                "--max-rounds",
                self.max_rounds.to_string(),
                format!("from {window} (the steady-state window) to {MAX_ROUNDS_LIMIT}"),
            );
        }
        if let RoundLength::CapacityFraction(f) = self.round {
            if !(f > 0.0 && f <= 10.0) {
                return bad(
                    "--round",
                    format!("{}%", f * 100.0),
                    "a percentage above 0 and at most 1000".into(),
                );
            }
        }
        if !(1..=100).contains(&self.round_timed_percent) {
            return bad(
                "--round-timed",
                format!("{}%", self.round_timed_percent),
                "a whole percentage from 1 to 100".into(),
            );
        }
        if let Some(qd) = self.qd {
            if qd == 0 || qd > MAX_QD {
                return bad("--qd", qd.to_string(), format!("1 to {MAX_QD}"));
            }
        }
        if let Some(jobs) = self.jobs {
            if jobs == 0 || jobs > MAX_JOBS {
                return bad("--jobs", jobs.to_string(), format!("1 to {MAX_JOBS}"));
            }
        }
        if self.runtime_ns == Some(0) {
            return bad(
                "--runtime",
                "0".into(),
                "a time above zero, e.g. 10s".into(),
            );
        }
        self.client.validate()?;
        if self.read_qd == 0 || self.read_qd > 1024 {
            return bad("--read-qd", self.read_qd.to_string(), "1 to 1024".into());
        }
        self.precondition.validate()?;
        self.own.0.iter().try_for_each(|o| o.check(self))
    }
}
