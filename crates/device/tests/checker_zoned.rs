//! The whole-run checker's zoned scenarios: a random small zoned drive (NVMe ZNS), then a
//! random mix of writes (at the write pointer, and some that break a zone rule), zone
//! appends, reads, zone opens, closes, finishes and resets, flushes, idle gaps, power losses
//! and save/load round trips. A reference model of the zone rules, written here from the
//! NVMe ZNS command set, runs beside the drive; after every step each zone's state and
//! write pointer, the open and active counts, the reset, finish and implicit-close counters
//! and whether each command was taken must agree, and simulated time only advances.
//! docs/fuzzing.md says how to run it longer and how to replay a seed.

use std::fmt::Write as _;

use flashlab_device::zoned::ZoneState;
use flashlab_device::{load_device_config, DeviceConfig, Ssd};
use flashlab_engine::{BlockDevice, IoRequest, SeedTree, ZoneOp};

use crate::checker::{env_u64, Rng};

/// Zoned scenarios of a default run (part of the checker's CI budget).
const DEFAULT_SCENARIOS: u64 = 12;
/// Steps of one scenario.
const STEPS: u32 = 1500;
/// The zones most steps go to, so that zones fill, finish and reset.
const BUSY_ZONES: u64 = 6;

/// A random small zoned drive, as `--set`-style overrides of `tiny-test-1gb`.
fn random_zoned_drive(rng: &mut Rng) -> Vec<(String, String)> {
    let max_open = rng.pick(&[0u64, 1, 2, 3]);
    let max_active = match max_open {
        0 => rng.pick(&[0u64, 0, 4]),
        n => rng.pick(&[0u64, n, n + 2]),
    };
    let (channels, dies, planes) = (
        rng.pick(&[1u64, 2]),
        rng.pick(&[1u64, 2]),
        rng.pick(&[1u64, 2]),
    );
    let page_kib = rng.pick(&[4u64, 8, 16]);
    let pages_per_block = rng.pick(&[24u64, 48, 96]);
    let user_mib = rng.pick(&[16u64, 32]);
    // A third more blocks than the user capacity fills, and a few a plane beyond.
    let block_bytes = page_kib * 1024 * pages_per_block;
    let units = channels * dies * planes;
    // At least 8 zones (a zone is a block on every plane), so the zone limits fit.
    let user_bytes = (user_mib << 20).max(8 * block_bytes * units);
    let blocks_per_plane = user_bytes * 4 / 3 / (block_bytes * units) + 24;
    [
        ("zns.enabled", "true".to_string()),
        ("capacity.user", format!("\"{}KiB\"", user_bytes >> 10)),
        ("nand.channels", channels.to_string()),
        ("nand.dies_per_channel", dies.to_string()),
        ("nand.planes_per_die", planes.to_string()),
        ("nand.page_size", format!("\"{page_kib}KiB\"")),
        ("nand.pages_per_block", pages_per_block.to_string()),
        ("nand.blocks_per_plane", blocks_per_plane.to_string()),
        ("zns.max_open_zones", max_open.to_string()),
        ("zns.max_active_zones", max_active.to_string()),
        ("buffer.plp", rng.chance(50).to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The zone rules, kept apart from the drive's: a state and a write pointer a zone, the
/// implicitly opened zones oldest first, and the counters the drive reports.
#[derive(Debug, Clone, PartialEq)]
struct Reference {
    state: Vec<ZoneState>,
    wp: Vec<u64>,
    implicit: Vec<u32>,
    capacity_bytes: u64,
    max_open: u32,
    max_active: u32,
    resets: u64,
    finishes: u64,
    implicit_closes: u64,
}

fn is_open(s: ZoneState) -> bool {
    matches!(s, ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen)
}

impl Reference {
    fn count(&self, f: impl Fn(ZoneState) -> bool) -> u32 {
        self.state.iter().filter(|&&s| f(s)).count() as u32
    }

    fn open(&self) -> u32 {
        self.count(is_open)
    }

    fn active(&self) -> u32 {
        self.count(|s| is_open(s) || s == ZoneState::Closed)
    }

    fn set(&mut self, zone: u32, to: ZoneState) {
        let from = std::mem::replace(&mut self.state[zone as usize], to);
        if from == ZoneState::ImplicitlyOpen && to != from {
            self.implicit.retain(|&z| z != zone);
        }
        if to == ZoneState::ImplicitlyOpen && from != to {
            self.implicit.push(zone);
        }
    }

    /// Room for `zone` to open: an active slot if it is empty, and an open one, made by
    /// closing the oldest implicitly opened zone when every open slot is taken.
    fn make_open(&mut self, zone: u32) -> bool {
        let s = self.state[zone as usize];
        if is_open(s) {
            return true;
        }
        if s == ZoneState::Empty && self.max_active > 0 && self.active() >= self.max_active {
            return false;
        }
        if self.max_open > 0 && self.open() >= self.max_open {
            let Some(&oldest) = self.implicit.first() else {
                return false;
            };
            self.set(oldest, ZoneState::Closed);
            self.implicit_closes += 1;
        }
        true
    }

    /// A write of `len` bytes at byte `at` of `zone`: taken only at the write pointer of a
    /// zone not full, within its capacity, when the zone can open.
    fn write(&mut self, zone: u32, at: u64, len: u64) -> bool {
        let (s, wp) = (self.state[zone as usize], self.wp[zone as usize]);
        if s == ZoneState::Full || at != wp || at + len > self.capacity_bytes {
            return false;
        }
        if !self.make_open(zone) {
            return false;
        }
        if s != ZoneState::ExplicitlyOpen {
            self.set(zone, ZoneState::ImplicitlyOpen);
        }
        self.wp[zone as usize] = at + len;
        if at + len == self.capacity_bytes {
            self.set(zone, ZoneState::Full);
        }
        true
    }

    fn command(&mut self, op: ZoneOp, zone: u32) -> bool {
        let (s, wp) = (self.state[zone as usize], self.wp[zone as usize]);
        match op {
            ZoneOp::Open => match s {
                ZoneState::ExplicitlyOpen => true,
                ZoneState::Full => false,
                _ => {
                    let ok = self.make_open(zone);
                    if ok {
                        self.set(zone, ZoneState::ExplicitlyOpen);
                    }
                    ok
                }
            },
            ZoneOp::Close => match s {
                ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen => {
                    let to = if wp == 0 {
                        ZoneState::Empty
                    } else {
                        ZoneState::Closed
                    };
                    self.set(zone, to);
                    true
                }
                ZoneState::Closed => true,
                ZoneState::Empty | ZoneState::Full => false,
            },
            ZoneOp::Finish => {
                if s != ZoneState::Full {
                    self.set(zone, ZoneState::Full);
                    self.finishes += 1;
                }
                true
            }
            ZoneOp::Reset => {
                self.set(zone, ZoneState::Empty);
                self.wp[zone as usize] = 0;
                self.resets += 1;
                true
            }
        }
    }

    /// Power lost and back: the controller's reset closes every open zone (NVMe ZNS
    /// command set, zone state machine: a controller level reset takes the opened states
    /// to Closed), one with nothing written to Empty; write pointers stay.
    fn power_cycle(&mut self) {
        for zone in 0..self.state.len() as u32 {
            if is_open(self.state[zone as usize]) {
                let to = if self.wp[zone as usize] == 0 {
                    ZoneState::Empty
                } else {
                    ZoneState::Closed
                };
                self.set(zone, to);
            }
        }
    }
}

/// One step of a zoned scenario.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A write at the zone's write pointer plus `skew` bytes (0 for a legal one).
    Write {
        zone: u32,
        ius: u64,
        skew: i64,
    },
    Append {
        zone: u32,
        ius: u64,
    },
    Read {
        zone: u32,
        ius: u64,
    },
    Command(ZoneOp, u32),
    Flush,
    Idle {
        ns: u64,
    },
    PowerLoss,
    SaveLoad,
}

fn random_step(rng: &mut Rng, zones: u64) -> Step {
    let zone = if rng.chance(85) {
        rng.below(BUSY_ZONES.min(zones))
    } else {
        rng.below(zones)
    } as u32;
    let ius = rng.pick(&[1u64, 1, 2, 4, 8, 32, 64]);
    match rng.below(1000) {
        0..=449 => {
            let skew = if rng.chance(90) {
                0
            } else {
                rng.pick(&[-4096i64, 4096, 8192])
            };
            Step::Write { zone, ius, skew }
        }
        450..=549 => Step::Append { zone, ius },
        550..=699 => Step::Read { zone, ius },
        700..=739 => Step::Command(ZoneOp::Open, zone),
        740..=779 => Step::Command(ZoneOp::Close, zone),
        780..=809 => Step::Command(ZoneOp::Finish, zone),
        810..=879 => Step::Command(ZoneOp::Reset, zone),
        880..=909 => Step::Flush,
        910..=979 => Step::Idle {
            ns: rng.pick(&[10_000u64, 1_000_000, 50_000_000]),
        },
        980..=991 => Step::PowerLoss,
        _ => Step::SaveLoad,
    }
}

/// The scenario's zoned drive and the reference beside it.
struct Run {
    config: DeviceConfig,
    seed: u64,
    ssd: Ssd,
    model: Reference,
    zone_bytes: u64,
    iu_bytes: u64,
    now_ns: u64,
}

impl Run {
    fn new(sets: &[(String, String)], seed: u64) -> Result<Run, String> {
        let config = load_device_config("tiny-test-1gb", sets).map_err(|e| e.to_string())?;
        let ssd = Ssd::new(&config, SeedTree::new(seed)).map_err(|e| e.to_string())?;
        let g = ssd.zones().ok_or("not zoned")?;
        let iu_bytes = u64::from(ssd.ftl().config().iu_bytes);
        let n = g.zones as usize;
        Ok(Run {
            config,
            seed,
            ssd,
            model: Reference {
                state: vec![ZoneState::Empty; n],
                wp: vec![0; n],
                implicit: Vec::new(),
                capacity_bytes: g.capacity_bytes,
                max_open: g.max_open,
                max_active: g.max_active,
                resets: 0,
                finishes: 0,
                implicit_closes: 0,
            },
            zone_bytes: g.zone_bytes,
            iu_bytes,
            now_ns: 0,
        })
    }

    /// Whether the drive took `req`; a completion before its submission is an error.
    fn submit(&mut self, req: &IoRequest) -> Result<Option<u64>, String> {
        match self.ssd.submit(self.now_ns, req) {
            Ok(c) if c.done_ns < self.now_ns => Err(format!(
                "{req:?} done at {} before its submission at {}",
                c.done_ns, self.now_ns
            )),
            Ok(c) => Ok(Some(c.done_ns)),
            Err(_) => Ok(None),
        }
    }

    /// The drive's answer (taken or not) against the reference's.
    fn agree(what: &str, drive: Option<u64>, model: bool) -> Result<Option<u64>, String> {
        if drive.is_some() != model {
            let (d, m) = (drive.is_some(), model);
            return Err(format!(
                "{what}: the drive took it: {d}, the zone rules: {m}"
            ));
        }
        Ok(drive)
    }

    fn apply(&mut self, step: Step, rng: &mut Rng) -> Result<(), String> {
        let b = self.iu_bytes;
        let start = |z: u32| u64::from(z) * self.zone_bytes;
        let done = match step {
            Step::Write { zone, ius, skew } => {
                let wp = self.model.wp[zone as usize];
                let at = wp.saturating_add_signed(skew).min(self.zone_bytes - b);
                let taken = self.submit(&IoRequest::write(start(zone) + at, ius * b))?;
                let model = self.model.write(zone, at, ius * b);
                Self::agree("write", taken, model)?
            }
            Step::Append { zone, ius } => {
                let taken = self
                    .ssd
                    .zone_append(self.now_ns, zone, ius * b)
                    .ok()
                    .map(|(c, _)| c.done_ns);
                let wp = self.model.wp[zone as usize];
                let what = format!(
                    "append to a zone {:?} at byte {wp} of {}",
                    self.model.state[zone as usize], self.model.capacity_bytes
                );
                let model = self.model.write(zone, wp, ius * b);
                Self::agree(&what, taken, model)?
            }
            Step::Read { zone, ius } => {
                let len = (ius * b).min(self.zone_bytes);
                let at = start(zone) + rng.below((self.zone_bytes - len) / b + 1) * b;
                let done = self.submit(&IoRequest::read(at, len))?;
                Self::agree("read", done, true)?
            }
            Step::Command(op, zone) => {
                let taken = self
                    .ssd
                    .zone_command(self.now_ns, op, zone)
                    .ok()
                    .map(|c| c.done_ns);
                let model = self.model.command(op, zone);
                Self::agree(&format!("{op:?}"), taken, model)?
            }
            Step::Flush => self.submit(&IoRequest::flush())?,
            Step::Idle { ns } => {
                self.ssd.idle(self.now_ns, self.now_ns + ns);
                Some(self.now_ns + ns)
            }
            Step::PowerLoss => {
                self.ssd.power_loss(self.now_ns);
                self.model.power_cycle();
                None
            }
            Step::SaveLoad => return self.save_load(),
        };
        if let Some(done) = done {
            self.now_ns = if rng.chance(50) {
                done
            } else {
                self.now_ns + 2_000
            };
        }
        Ok(())
    }

    /// Saves the drive's state and loads it into a new drive of the same configuration
    /// and seed: the clock, every zone and the counters come back as they were.
    fn save_load(&mut self) -> Result<(), String> {
        let mut bytes = Vec::new();
        self.ssd
            .save_state(&mut bytes, self.now_ns)
            .map_err(|e| format!("save: {e}"))?;
        let mut loaded =
            Ssd::new(&self.config, SeedTree::new(self.seed)).map_err(|e| e.to_string())?;
        let clock = loaded
            .load_state_in_place(&bytes[..], bytes.len() as u64)
            .map_err(|e| format!("load: {e}"))?;
        if clock != self.now_ns {
            return Err(format!("state clock {clock}, saved at {}", self.now_ns));
        }
        if self.ssd.counters_json() != loaded.counters_json() {
            return Err("counters changed by save/load".into());
        }
        self.ssd = loaded;
        Ok(())
    }

    /// Every zone and the zone counters against the reference.
    fn check(&self) -> Result<(), String> {
        for (zone, (&state, &wp)) in self.model.state.iter().zip(&self.model.wp).enumerate() {
            let zone = zone as u32;
            let got = (self.ssd.zone_state(zone), self.ssd.zone_write_pointer(zone));
            if got != (Some(state), Some(wp)) {
                return Err(format!(
                    "zone {zone} is {got:?}, the zone rules say {state:?} at byte {wp}"
                ));
            }
        }
        let j = self.ssd.counters_json();
        let z = &j["zns"];
        let m = &self.model;
        let counted = [
            ("open_zones", u64::from(m.open())),
            ("active_zones", u64::from(m.active())),
            ("zone_resets", m.resets),
            ("zone_finishes", m.finishes),
            ("implicit_closes", m.implicit_closes),
        ];
        for (key, want) in counted {
            if z[key].as_u64() != Some(want) {
                return Err(format!("zns.{key} is {}, expected {want}", z[key]));
            }
        }
        Ok(())
    }
}

/// Runs zoned scenario `seed`; returns the zone resets it made, or the error with the
/// steps that led to it.
fn zoned_scenario(seed: u64) -> Result<u64, String> {
    let mut rng = Rng(seed ^ 0x5A0E_D000);
    let sets = random_zoned_drive(&mut rng);
    let mut run = Run::new(&sets, seed).map_err(|e| format!("drive {sets:?} refused: {e}"))?;
    let zones = u64::from(run.ssd.zones().map_or(1, |g| g.zones));
    let mut log = String::new();
    for n in 0..STEPS {
        let step = random_step(&mut rng, zones);
        let _ = writeln!(log, "{n:4} t={} {step:?}", run.now_ns);
        let before_ns = run.now_ns;
        let checked = run.apply(step, &mut rng).and_then(|()| run.check());
        let checked = checked.and_then(|()| match run.now_ns < before_ns {
            true => Err(format!("time went back from {before_ns} to {}", run.now_ns)),
            false => Ok(()),
        });
        if let Err(e) = checked {
            let tail: Vec<&str> = log.lines().rev().take(12).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!(
                "step {n} ({step:?}): {e}\ndrive: {sets:?}\nlast steps:\n{}",
                tail.join("\n")
            ));
        }
    }
    Ok(run.model.resets)
}

/// A power loss left the drive's zones open (and their open-zone slots taken), where the
/// controller's reset closes them.
#[test]
fn seed_1_power_loss_closes_the_open_zones() {
    zoned_scenario(1).unwrap();
}

/// A zone append to a full zone wrote at the next zone's start (the full zone's write
/// pointer), where it is refused ("Zone Is Full").
#[test]
fn seed_2_an_append_to_a_full_zone_is_refused() {
    zoned_scenario(2).unwrap();
}

/// Zoned scenarios from `FLASHLAB_CHECKER_SEED` (default 1), `FLASHLAB_CHECKER_SCENARIOS`
/// of them halved (default `DEFAULT_SCENARIOS`): a failure names its seed.
#[test]
fn random_zoned_runs_keep_the_zone_rules() {
    let first = env_u64("FLASHLAB_CHECKER_SEED", 1);
    let count = std::env::var("FLASHLAB_CHECKER_SCENARIOS")
        .ok()
        .map(|_| env_u64("FLASHLAB_CHECKER_SCENARIOS", 0).div_ceil(2))
        .unwrap_or(DEFAULT_SCENARIOS);
    let start = std::time::Instant::now();
    let mut with_resets = 0;
    for seed in first..first.saturating_add(count) {
        match zoned_scenario(seed) {
            Ok(resets) => with_resets += u64::from(resets > 0),
            Err(e) => panic!(
                "zoned scenario seed {seed} failed: {e}\nreplay: FLASHLAB_CHECKER_SEED={seed} \
                 FLASHLAB_CHECKER_SCENARIOS=1 cargo test -p flashlab-device --test device \
                 checker_zoned"
            ),
        }
    }
    eprintln!(
        "{count} zoned scenarios from seed {first} ({with_resets} with resets): {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(
        count < 4 || with_resets * 2 >= count,
        "{with_resets} of {count} zoned scenarios reset a zone"
    );
}
