//! Storage systems as trees of [`BlockDevice`]s: RAID sets, cache tiers and shared links over
//! SSDs, hard disks and 3D XPoint drives, described in TOML.
//!
//! ```no_run
//! use flashlab_system::{load_system_config, System};
//! let cfg = load_system_config("workstation-raid0").unwrap();
//! let mut sys = System::build(&cfg, flashlab_engine::SeedTree::new(1)).unwrap();
//! println!("{}", sys.counters_json());
//! ```

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, Completion, DeviceError, IoRequest, SeedTree, SimTime};
use serde_json::json;

pub mod cache;
pub mod config;
mod counters;
pub mod drives;
pub mod forged;
pub mod keys;
pub mod link;
pub mod raid;
#[cfg(test)]
mod test_devices;

pub use cache::{CacheMode, CacheParams, CacheTier, Eviction, Promote};
pub use config::{
    drive_preset_names, is_system, load_system_config, parse_system_config, preset_source,
    system_preset_names, unknown_device_message, ComponentSpec, LinkSpec, SystemConfig,
    SystemError,
};
pub use counters::{BackgroundDoneCounters, CacheCounters, RaidCounters, SystemCounters};
pub use keys::{KeyKind, SystemKey, SYSTEM_KEYS};
pub use link::{LinkPort, SharedLink};
pub use raid::{HostCache, ParityStrategy, Raid, RaidLevel, RaidParams};

/// A node of a system tree: a block device that reports its counters.
pub trait Component: BlockDevice + flashlab_engine::State {
    /// This node's counters, with its children's nested.
    fn counters_json(&self) -> serde_json::Value;
    /// This node's counters when it is a RAID set (behind a link or not).
    fn raid_counters(&self) -> Option<RaidCounters> {
        None
    }
    /// The counters of every cache tier in this subtree, depth first.
    fn cache_counters(&self, _out: &mut Vec<CacheCounters>) {}
    /// The RAID set of this name in this subtree (for failure, rebuild and shutdown events).
    fn raid_mut(&mut self, _name: &str) -> Option<&mut Raid> {
        None
    }
    /// Counters of the shared links in this subtree, each once.
    fn links(&self, _out: &mut Vec<serde_json::Value>) {}
    /// Secure erase of this subtree at `at_ns`: every SSD erased with nothing mapped, caches
    /// emptied. Hard disks and XPoint drives keep no state a format would change, so by
    /// default nothing happens. Counters keep counting.
    fn format(&mut self, _at_ns: SimTime) {}
    /// The SSD this node is, when it is one (behind a link or not): its FTL's internals.
    fn ssd(&self) -> Option<&Ssd> {
        None
    }
}

/// A built system: its root component.
pub struct System {
    name: String,
    description: String,
    root: Box<dyn Component>,
    /// Hash of the configuration built from, and the seed: what a state file names.
    config_hash: u64,
    seed: u64,
}

/// The header's `kind` for a storage system.
pub const SYSTEM_STATE_KIND: &str = "system";

/// Hash of a system's configuration, as a state file's header carries it: the whole
/// description, its drives' descriptions included.
pub fn system_config_hash(cfg: &SystemConfig) -> u64 {
    flashlab_engine::state::checksum_of(format!("{cfg:?}").as_bytes())
}

impl System {
    /// Build every component of a checked description. Drives get their random streams from
    /// `seeds.child("drive").child(name)`, so adding a drive does not change the others.
    pub fn build(cfg: &SystemConfig, seeds: SeedTree) -> Result<System, SystemError> {
        let links: BTreeMap<&String, Rc<RefCell<SharedLink>>> = cfg
            .links
            .iter()
            .map(|(n, l)| (n, SharedLink::new(n, l.bytes_per_s, l.latency_ns)))
            .collect();
        let root = build_node(cfg, &cfg.root, &links, &seeds)?;
        Ok(System {
            name: cfg.name.clone(),
            description: cfg.description.clone(),
            root,
            config_hash: system_config_hash(cfg),
            seed: seeds.master_seed(),
        })
    }

    /// Writes the state of every component (`docs/state.md`); `clock_ns` is the system time
    /// where the next run starts. Returns the bytes written.
    pub fn save_state(
        &self,
        out: impl std::io::Write,
        clock_ns: SimTime,
    ) -> Result<u64, flashlab_engine::StateError> {
        let header = flashlab_engine::StateHeader {
            kind: SYSTEM_STATE_KIND.to_string(),
            config_hash: self.config_hash,
            device_seed: self.seed,
            clock_ns,
        };
        let mut w = flashlab_engine::StateWriter::new(out, &header);
        w.section("system", |w| self.root.save(w));
        w.finish()
    }

    /// Builds the system `cfg` describes and loads a state of `total_bytes` into it: the
    /// system and the time where the next run starts. Refuses a state of another kind of
    /// device, of another configuration, of another format version, or damaged.
    pub fn load_state(
        cfg: &SystemConfig,
        input: impl std::io::Read,
        total_bytes: u64,
    ) -> Result<(System, SimTime), flashlab_engine::StateError> {
        let (mut r, header) = flashlab_engine::StateReader::new(input, total_bytes)?;
        flashlab_device::check_kind(&header, SYSTEM_STATE_KIND)?;
        let expected = system_config_hash(cfg);
        if header.config_hash != expected {
            return Err(flashlab_engine::StateError::Config {
                found: header.config_hash,
                expected,
            });
        }
        let mut system = System::build(cfg, SeedTree::new(header.device_seed))
            .map_err(|e| flashlab_engine::StateError::Device(e.to_string()))?;
        r.section("system", |r| system.root.load(r))?;
        r.finish()?;
        Ok((system, header.clock_ns))
    }

    /// Whether a state of this header loads into this system: a system's, of this system's
    /// configuration and seed.
    pub fn check_state_header(
        &self,
        header: &flashlab_engine::StateHeader,
    ) -> Result<(), flashlab_engine::StateError> {
        flashlab_device::check_kind(header, SYSTEM_STATE_KIND)?;
        if header.config_hash != self.config_hash {
            return Err(flashlab_engine::StateError::Config {
                found: header.config_hash,
                expected: self.config_hash,
            });
        }
        if header.device_seed != self.seed {
            return Err(flashlab_engine::StateError::Device(format!(
                "the state was saved from a system of seed {}, this system's is {}",
                header.device_seed, self.seed
            )));
        }
        Ok(())
    }

    /// Loads a state into this system, which must be one built with the state's seed: what
    /// [`System::load_state`] gives, without a second system in memory while the state
    /// reads. The header is checked first (kind, configuration, seed) and a
    /// state it refuses leaves the system untouched; an error once the body began to load
    /// leaves the system unusable (verify the file with
    /// [`flashlab_engine::state::verify`] first). Returns the system time where the
    /// next run starts.
    pub fn load_state_in_place(
        &mut self,
        input: impl std::io::Read,
        total_bytes: u64,
    ) -> Result<SimTime, flashlab_engine::StateError> {
        let (mut r, header) = flashlab_engine::StateReader::new(input, total_bytes)?;
        self.check_state_header(&header)?;
        r.section("system", |r| self.root.load(r))?;
        r.finish()?;
        Ok(header.clock_ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Every component's counters (the tree, then the shared links).
    pub fn counters_json(&self) -> serde_json::Value {
        let mut links = Vec::new();
        self.root.links(&mut links);
        json!({
            "system": self.name,
            "capacity_bytes": self.root.capacity_bytes(),
            "root": self.root.counters_json(),
            "links": links,
        })
    }

    /// What the system's RAID set at the root and its cache tiers counted.
    pub fn counters(&self) -> SystemCounters {
        let mut caches = Vec::new();
        self.root.cache_counters(&mut caches);
        SystemCounters {
            root_raid: self.root.raid_counters(),
            caches,
        }
    }

    /// Secure erase of every member at `at_ns` (see [`Component::format`]). A flush
    /// submitted afterwards completes once every drive accepts commands again.
    pub fn format(&mut self, at_ns: SimTime) {
        self.root.format(at_ns)
    }

    /// The SSD at the root, when the system is one drive (a suite that reads FTL internals
    /// needs it).
    pub fn root_ssd(&self) -> Option<&Ssd> {
        self.root.ssd()
    }

    /// The RAID set called `name`.
    pub fn raid_mut(&mut self, name: &str) -> Option<&mut Raid> {
        self.root.raid_mut(name)
    }
}

fn build_error(name: &str, message: String) -> SystemError {
    SystemError::Root {
        origin: name.to_string(),
        message,
    }
}

fn build_node(
    cfg: &SystemConfig,
    name: &str,
    links: &BTreeMap<&String, Rc<RefCell<SharedLink>>>,
    seeds: &SeedTree,
) -> Result<Box<dyn Component>, SystemError> {
    let spec = cfg
        .components
        .get(name)
        .ok_or_else(|| build_error(name, "no such component".into()))?;
    let spec_err = |(k, v, m): drives::SpecError| build_error(name, format!("{k} = {v}: {m}"));
    let node: Box<dyn Component> = match spec {
        ComponentSpec::Ssd(dc) => {
            let ssd =
                Ssd::new(dc, seeds.child("drive").child(name)).map_err(|e| SystemError::Drive {
                    origin: cfg.name.clone(),
                    name: name.to_string(),
                    error: Box::new(e),
                })?;
            Box::new(drives::SsdNode {
                name: name.to_string(),
                ssd,
            })
        }
        ComponentSpec::Hdd(s) => Box::new(drives::HddDrive::from_spec(name, s).map_err(spec_err)?),
        ComponentSpec::Xpoint(s) => {
            Box::new(drives::XpointDrive::from_spec(name, s).map_err(spec_err)?)
        }
        ComponentSpec::Raid { params, members } => {
            let ms = members
                .iter()
                .map(|m| build_node(cfg, m, links, seeds))
                .collect::<Result<Vec<_>, _>>()?;
            Box::new(
                Raid::new(name, params.clone(), ms)
                    .map_err(|m| build_error(&format!("raid.{name}"), m))?,
            )
        }
        ComponentSpec::Cache {
            params,
            cache,
            backing,
        } => {
            let c = build_node(cfg, cache, links, seeds)?;
            let b = build_node(cfg, backing, links, seeds)?;
            Box::new(
                CacheTier::new(name, params.clone(), c, b)
                    .map_err(|m| build_error(&format!("cache.{name}"), m))?,
            )
        }
    };
    for (ln, l) in &cfg.links {
        if l.devices.iter().any(|d| d == name) {
            if let Some(rc) = links.get(ln) {
                return Ok(Box::new(LinkPort::new(rc.clone(), node)));
            }
        }
    }
    Ok(node)
}

impl BlockDevice for System {
    fn capacity_bytes(&self) -> u64 {
        self.root.capacity_bytes()
    }
    fn logical_block_bytes(&self) -> u64 {
        self.root.logical_block_bytes()
    }
    fn queue_depth_limit(&self) -> u32 {
        self.root.queue_depth_limit()
    }
    fn compresses_data(&self) -> bool {
        self.root.compresses_data()
    }
    fn submit(&mut self, now_ns: SimTime, req: &IoRequest) -> Result<Completion, DeviceError> {
        self.root.submit(now_ns, req)
    }
    fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
        self.root.idle(from_ns, until_ns)
    }
    fn prefetch(&self, req: &IoRequest, stage: flashlab_engine::PrefetchStage) {
        self.root.prefetch(req, stage)
    }
    // A zoned drive at the root (a host-managed SMR disk) shows its zones to the host.
    fn zones(&self) -> Option<flashlab_engine::ZoneGeometry> {
        self.root.zones()
    }
    fn zone_write_pointer(&self, zone: u32) -> Option<u64> {
        self.root.zone_write_pointer(zone)
    }
    fn zone_command(
        &mut self,
        now_ns: SimTime,
        op: flashlab_engine::ZoneOp,
        zone: u32,
    ) -> Result<Completion, DeviceError> {
        self.root.zone_command(now_ns, op, zone)
    }
}
