//! The whole-run checker: a seeded generator of scenarios (a random small drive, then a random
//! mix of reads, writes, trims, flushes, FDP writes, idle gaps, power losses and save/load
//! round trips) run against the drive model with its invariants checked after every step.
//! docs/fuzzing.md says how to run it longer and how to replay a failing seed.
//!
//! Checked after every step: the FTL's own invariants (`Ftl::try_check_invariants`: each
//! mapped IU in exactly one valid physical IU, valid counts, free lists); the version each IU
//! reads back against a shadow map of the versions written (exact with PLP; without it, after
//! a power loss, the last flushed version or one written since); the mapped IU count and the
//! host counters against the shadow; simulated time never going back; the memory estimate
//! unchanged by a save/load round trip and never below the FTL's own tables.

use std::fmt::Write as _;

use flashlab_device::{load_device_config, DeviceConfig, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, SeedTree};

/// Scenarios of a default run (the CI budget: a few seconds of CPU in a debug build).
const DEFAULT_SCENARIOS: u64 = 24;
/// First seed of a default run.
const DEFAULT_SEED: u64 = 1;
/// Steps of one scenario.
const STEPS: u32 = 1500;
/// IUs of each write of the fill that starts a scenario.
const FILL_IUS: u64 = 64;

/// A small deterministic generator (SplitMix64), so that a seed names the same scenario on
/// every machine and build.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A random drive within small bounds, as `--set`-style overrides of `tiny-test-1gb`.
fn random_drive(rng: &mut Rng) -> Vec<(String, String)> {
    let channels = rng.pick(&[1u64, 2]);
    let dies = rng.pick(&[1u64, 2]);
    let planes = rng.pick(&[1u64, 2]);
    let page_kib = rng.pick(&[4u64, 8, 16]);
    let pages_per_block = rng.pick(&[24u64, 48, 96]);
    let user_mib = rng.pick(&[16u64, 32, 48]);
    let spare_percent = rng.pick(&[7u64, 12, 20, 28]);
    let fdp = rng.chance(25);
    let handles = rng.pick(&[1u64, 2, 4]);
    let block_bytes = page_kib * 1024 * pages_per_block;
    let raw = user_mib * (1 << 20) * (100 + spare_percent) / 100;
    // Beyond the spare, a few blocks a plane for the blocks GC keeps free and the open ones.
    // Each FDP handle keeps reclaim units of its own open.
    // A drive of few planes needs more of them each.
    let units = channels * dies * planes;
    let reserve = (6 + if fdp { 2 * handles } else { 0 }).max(24 / units);
    // Background GC starts at 32 free blocks, which must be under half the drive's.
    let blocks_per_plane = (raw.div_ceil(block_bytes * units) + reserve).max(96 / units);
    let plp = fdp || rng.chance(50);
    let slc = !fdp && rng.chance(60);
    let mut sets = vec![
        ("capacity.user", format!("\"{user_mib}MiB\"")),
        ("nand.channels", channels.to_string()),
        ("nand.dies_per_channel", dies.to_string()),
        ("nand.planes_per_die", planes.to_string()),
        ("nand.page_size", format!("\"{page_kib}KiB\"")),
        ("nand.pages_per_block", pages_per_block.to_string()),
        ("nand.blocks_per_plane", blocks_per_plane.to_string()),
        (
            "buffer.size",
            format!("\"{}KiB\"", rng.pick(&[256u64, 1024, 2048])),
        ),
        ("buffer.plp", plp.to_string()),
        ("slc_cache.dynamic", slc.to_string()),
        (
            "ftl.gc_policy",
            format!("\"{}\"", rng.pick(&["greedy", "cost-benefit"])),
        ),
    ];
    if slc {
        let when_full = rng.pick(&["direct", "fold"]);
        sets.push(("slc_cache.when_full", format!("\"{when_full}\"")));
        let fraction = rng.pick(&["0.1", "0.25", "0.5"]);
        sets.push(("slc_cache.dynamic_max_fraction", fraction.to_string()));
    }
    if fdp {
        sets.push(("fdp.enabled", "true".to_string()));
        sets.push(("fdp.handles", handles.to_string()));
    }
    sets.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// One step of a scenario.
#[derive(Debug, Clone, Copy)]
enum Step {
    Read {
        iu: u64,
        ius: u64,
    },
    Write {
        iu: u64,
        ius: u64,
        placement: Option<u16>,
    },
    Trim {
        iu: u64,
        ius: u64,
    },
    Flush,
    /// The host pauses (a rate limit's gap, or think time): the drive works in the background.
    Idle {
        ns: u64,
    },
    PowerLoss,
    SaveLoad,
}

/// A random step over a drive of `ius` IUs with `handles` placement handles; writes favour
/// a hot tenth of the drive so that GC has work.
fn random_step(rng: &mut Rng, ius: u64, handles: u32) -> Step {
    let len = rng.pick(&[1u64, 1, 1, 2, 4, 8, 32]).min(ius);
    let hot = rng.chance(70);
    let span = if hot { (ius / 10).max(len) } else { ius };
    let iu = rng.below(span - len + 1);
    match rng.below(1000) {
        0..=399 => {
            let placement = (handles > 0).then(|| rng.below(u64::from(handles)) as u16);
            Step::Write {
                iu,
                ius: len,
                placement,
            }
        }
        400..=699 => Step::Read { iu, ius: len },
        700..=829 => Step::Trim { iu, ius: len },
        830..=889 => Step::Flush,
        890..=979 => Step::Idle {
            ns: rng.pick(&[10_000u64, 1_000_000, 50_000_000]),
        },
        980..=991 => Step::PowerLoss,
        _ => Step::SaveLoad,
    }
}

/// What the checker expects of each IU: the version a read returns now, and (without PLP)
/// the versions it may fall back to after a power loss.
struct Shadow {
    /// The version last written (None: never written, or trimmed).
    current: Vec<Option<u32>>,
    /// The version known durable (a flush or a trim since), and those written after it.
    durable: Vec<Option<u32>>,
    since: Vec<Vec<u32>>,
    host_write_ius: u64,
    host_trim_ius: u64,
    host_read_ius: u64,
}

impl Shadow {
    fn new(ius: usize) -> Shadow {
        Shadow {
            current: vec![None; ius],
            durable: vec![None; ius],
            since: vec![Vec::new(); ius],
            host_write_ius: 0,
            host_trim_ius: 0,
            host_read_ius: 0,
        }
    }

    fn wrote(&mut self, iu: usize, version: u32) {
        self.current[iu] = Some(version);
        self.since[iu].push(version);
    }

    fn trimmed(&mut self, iu: usize) {
        self.current[iu] = None;
        self.durable[iu] = None;
        self.since[iu].clear();
    }

    fn flushed(&mut self) {
        for iu in 0..self.current.len() {
            self.durable[iu] = self.current[iu];
            self.since[iu].clear();
        }
    }
}

/// The scenario's drive and the checker's view of it.
struct Run {
    config: DeviceConfig,
    seed: u64,
    ssd: Ssd,
    shadow: Shadow,
    iu_bytes: u64,
    /// Drive time of the next submission; never goes back.
    now_ns: u64,
    /// The host's rate limit: the least time between two submissions (0: none).
    pace_ns: u64,
    last_version: u32,
    log: String,
}

impl Run {
    fn new(sets: &[(String, String)], seed: u64) -> Result<Run, String> {
        let config = load_device_config("tiny-test-1gb", sets).map_err(|e| e.to_string())?;
        let ssd =
            Ssd::new_tracking_versions(&config, SeedTree::new(seed)).map_err(|e| e.to_string())?;
        let iu_bytes = u64::from(ssd.ftl().config().iu_bytes);
        let ius = (ssd.capacity_bytes() / iu_bytes) as usize;
        Ok(Run {
            config,
            seed,
            ssd,
            shadow: Shadow::new(ius),
            iu_bytes,
            now_ns: 0,
            pace_ns: 0,
            last_version: 0,
            log: String::new(),
        })
    }

    fn ius(&self) -> u64 {
        self.shadow.current.len() as u64
    }

    /// Submits `req` at the current time; the completion may not come before it.
    fn submit(&mut self, req: &IoRequest) -> Result<u64, String> {
        let c = self
            .ssd
            .submit(self.now_ns, req)
            .map_err(|e| format!("{req:?} refused: {e}"))?;
        if c.done_ns < self.now_ns {
            return Err(format!(
                "{req:?} done at {} before its submission at {}",
                c.done_ns, self.now_ns
            ));
        }
        Ok(c.done_ns)
    }

    /// Carries out `step`; `rng` draws the host's pace.
    fn apply(&mut self, step: Step, rng: &mut Rng) -> Result<(), String> {
        let b = self.iu_bytes;
        let done = match step {
            Step::Read { iu, ius } => {
                self.shadow.host_read_ius += ius;
                self.submit(&IoRequest::read(iu * b, ius * b))?
            }
            Step::Write { iu, ius, placement } => self.write(iu, ius, placement)?,
            Step::Trim { iu, ius } => {
                let done = self.submit(&IoRequest::trim(iu * b, ius * b))?;
                (iu..iu + ius).for_each(|i| self.shadow.trimmed(i as usize));
                self.shadow.host_trim_ius += ius;
                done
            }
            Step::Flush => {
                let done = self.submit(&IoRequest::flush())?;
                self.shadow.flushed();
                done
            }
            Step::Idle { ns } => {
                self.ssd.idle(self.now_ns, self.now_ns + ns);
                self.now_ns + ns
            }
            Step::PowerLoss => return self.power_loss(),
            Step::SaveLoad => return self.save_load(),
        };
        // Half the time the host waits for the completion, else it submits the next command
        // soon after (the drive queues it); a rate limit spaces submissions at least
        // `pace_ns` apart.
        let next = if rng.chance(50) {
            done
        } else {
            self.now_ns + 2_000
        };
        self.now_ns = next.max(self.now_ns + self.pace_ns);
        Ok(())
    }

    /// A write: each of its IUs must then read the write's version, newer than any before.
    fn write(&mut self, iu: u64, ius: u64, placement: Option<u16>) -> Result<u64, String> {
        let b = self.iu_bytes;
        let mut req = IoRequest::write(iu * b, ius * b);
        req.placement = placement;
        let done = self.submit(&req)?;
        let version = self
            .ssd
            .ftl()
            .read_version(iu as u32)
            .ok_or("a written IU unmapped")?;
        if version <= self.last_version {
            return Err(format!(
                "write got version {version} after {}",
                self.last_version
            ));
        }
        self.last_version = version;
        for i in iu..iu + ius {
            self.shadow.wrote(i as usize, version);
        }
        self.shadow.host_write_ius += ius;
        Ok(done)
    }

    /// Power lost and restored: with PLP every IU keeps its last version; without, each
    /// reads its durable version or one written after it, which is then what it holds.
    fn power_loss(&mut self) -> Result<(), String> {
        self.ssd.power_loss(self.now_ns);
        let plp = self.ssd.ftl().config().power_loss_protection;
        for iu in 0..self.shadow.current.len() {
            let got = self.ssd.ftl().read_version(iu as u32);
            let s = &self.shadow;
            let allowed = if plp {
                got == s.current[iu]
            } else {
                got == s.durable[iu] || got.is_some_and(|v| s.since[iu].contains(&v))
            };
            if !allowed {
                return Err(format!(
                    "after power loss IU {iu} reads version {got:?}; last written {:?}, durable {:?}, since {:?}",
                    s.current[iu], s.durable[iu], s.since[iu]
                ));
            }
            self.shadow.current[iu] = got;
        }
        self.shadow.flushed();
        Ok(())
    }

    /// Saves the drive's state and loads it into a new drive of the same configuration and
    /// seed: the clock, the memory estimate and the counters come back as they were.
    fn save_load(&mut self) -> Result<(), String> {
        let mut bytes = Vec::new();
        self.ssd
            .save_state(&mut bytes, self.now_ns)
            .map_err(|e| format!("save: {e}"))?;
        let mut loaded = Ssd::new_tracking_versions(&self.config, SeedTree::new(self.seed))
            .map_err(|e| e.to_string())?;
        let clock = loaded
            .load_state_in_place(&bytes[..], bytes.len() as u64)
            .map_err(|e| format!("load: {e}"))?;
        if clock != self.now_ns {
            return Err(format!(
                "state clock {clock} where it was saved at {}",
                self.now_ns
            ));
        }
        let (before, after) = (self.ssd.memory_bytes(), loaded.memory_bytes());
        if before != after {
            return Err(format!(
                "memory estimate {before} bytes before save, {after} after load"
            ));
        }
        if self.ssd.counters_json() != loaded.counters_json() {
            return Err(format!(
                "counters changed by save/load:\n{}\n{}",
                self.ssd.counters_json(),
                loaded.counters_json()
            ));
        }
        self.ssd = loaded;
        Ok(())
    }

    /// Carries out `step`, then checks every invariant and that time did not go back.
    fn step(&mut self, step: Step, rng: &mut Rng) -> Result<(), String> {
        let before_ns = self.now_ns;
        self.apply(step, rng)?;
        self.check()?;
        if self.now_ns < before_ns {
            return Err(format!(
                "time went back from {before_ns} to {}",
                self.now_ns
            ));
        }
        Ok(())
    }

    /// Every invariant, after a step.
    fn check(&self) -> Result<(), String> {
        let ftl = self.ssd.ftl();
        ftl.try_check_invariants()?;
        let mut mapped = 0u32;
        for (iu, want) in self.shadow.current.iter().enumerate() {
            let got = ftl.read_version(iu as u32);
            if got != *want {
                return Err(format!(
                    "IU {iu} reads version {got:?}, last written {want:?}"
                ));
            }
            mapped += u32::from(got.is_some());
        }
        if ftl.mapped_ius() != mapped {
            return Err(format!(
                "{} IUs mapped, the shadow has {mapped}",
                ftl.mapped_ius()
            ));
        }
        let c = ftl.counters();
        let s = &self.shadow;
        let counted = (c.host_write_ius, c.host_trim_ius, c.host_read_ius);
        let expected = (s.host_write_ius, s.host_trim_ius, s.host_read_ius);
        if counted != expected {
            return Err(format!(
                "host IUs (written, trimmed, read) {counted:?}, expected {expected:?}"
            ));
        }
        // The version tags are the checker's, outside the drive's estimate.
        let f = ftl.config();
        let physical_ius = u64::from(f.dies * f.planes_per_die * f.blocks_per_plane)
            * u64::from(f.pages_per_block * f.ius_per_page);
        let tables = ftl.memory_bytes() - 4 * physical_ius;
        if self.ssd.memory_bytes() < tables {
            return Err(format!(
                "memory estimate {} bytes below the FTL's tables ({tables})",
                self.ssd.memory_bytes()
            ));
        }
        Ok(())
    }
}

/// The drive `sets` describe; where its spare is too small for the FTL's reserve (large
/// blocks on few planes), more blocks a plane until it is enough.
fn build_drive(
    mut sets: Vec<(String, String)>,
    seed: u64,
) -> Result<(Run, Vec<(String, String)>), String> {
    for _ in 0..4 {
        match Run::new(&sets, seed) {
            Ok(run) => return Ok((run, sets)),
            Err(e) if e.contains("too little spare") || e.contains("GC threshold") => {
                let (_, blocks) = sets
                    .iter_mut()
                    .find(|(k, _)| k == "nand.blocks_per_plane")
                    .ok_or("no nand.blocks_per_plane")?;
                let n: u64 = blocks.parse().map_err(|_| "nand.blocks_per_plane")?;
                *blocks = (n + n / 2).to_string();
            }
            Err(e) => return Err(format!("drive {sets:?} refused: {e}")),
        }
    }
    Err(format!("drive {sets:?}: no spare enough"))
}

/// Runs scenario `seed`: a random drive filled to a random share, then `STEPS` random steps,
/// checked after each. Returns the IUs GC copied, or the error with the steps that led to it.
fn scenario(seed: u64) -> Result<u64, String> {
    let mut rng = Rng(seed);
    let sets = random_drive(&mut rng);
    let (mut run, sets) = build_drive(sets, seed)?;
    let handles = run.ssd.placement_handles();
    // No limit, or about 500k, 50k or 2k commands a second.
    run.pace_ns = rng.pick(&[0u64, 0, 2_000, 20_000, 500_000]);
    let fill_ius = run.ius() * rng.pick(&[0u64, 50, 90, 100]) / 100;
    let fill_steps = fill_ius.div_ceil(FILL_IUS);
    for n in 0..fill_steps + u64::from(STEPS) {
        let step = if n < fill_steps {
            let iu = n * FILL_IUS;
            let placement = (handles > 0).then_some(0);
            Step::Write {
                iu,
                ius: FILL_IUS.min(fill_ius - iu),
                placement,
            }
        } else {
            random_step(&mut rng, run.ius(), handles)
        };
        let _ = writeln!(run.log, "{n:4} t={} {step:?}", run.now_ns);
        if let Err(e) = run.step(step, &mut rng) {
            let tail: Vec<&str> = run.log.lines().rev().take(12).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!(
                "step {n} ({step:?}): {e}\ndrive: {sets:?}\nlast steps:\n{}",
                tail.join("\n")
            ));
        }
    }
    Ok(run.ssd.ftl().counters().gc_copied_ius)
}

/// Read-ahead counted the IUs it read as host reads (`ftl.host_read_ius`).
#[test]
fn seed_1336_read_ahead_is_not_a_host_read() {
    scenario(1336).unwrap();
}

pub(crate) fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: expected a whole number")),
        Err(_) => default,
    }
}

/// Scenarios `FLASHLAB_CHECKER_SEED` (default 1) onwards, `FLASHLAB_CHECKER_SCENARIOS` of
/// them (default `DEFAULT_SCENARIOS`); a failure names its seed and the command to replay it.
#[test]
fn random_whole_runs_keep_every_invariant() {
    let first = env_u64("FLASHLAB_CHECKER_SEED", DEFAULT_SEED);
    let count = env_u64("FLASHLAB_CHECKER_SCENARIOS", DEFAULT_SCENARIOS);
    let start = std::time::Instant::now();
    let mut with_gc = 0;
    for seed in first..first.saturating_add(count) {
        match scenario(seed) {
            Ok(gc_copied_ius) => with_gc += u64::from(gc_copied_ius > 0),
            Err(e) => panic!(
                "scenario seed {seed} failed: {e}\nreplay: FLASHLAB_CHECKER_SEED={seed} \
                 FLASHLAB_CHECKER_SCENARIOS=1 cargo test -p flashlab-device --test device checker"
            ),
        }
    }
    eprintln!(
        "{count} scenarios from seed {first} ({with_gc} with GC copies): {:.1} s",
        start.elapsed().as_secs_f64()
    );
    // The scenarios must reach garbage collection, where most of the mapping work is.
    assert!(
        count < 8 || with_gc * 4 >= count,
        "{with_gc} of {count} scenarios ran GC"
    );
}
