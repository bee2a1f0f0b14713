//! System descriptions: a TOML file naming drives (by preset, with `set` overrides), RAID
//! sets, cache tiers and shared links, wired together by name.
//!
//! ```toml
//! name = "two-drive-raid0"
//! [drive.a]
//! preset = "tiny-test-1gb"
//! [drive.b]
//! preset = "tiny-test-1gb"
//! set = { "buffer.plp" = true }
//! [raid.array]
//! level = 0
//! chunk = "128KiB"
//! members = ["a", "b"]
//! [link.uplink]
//! kind = "pcie-gen4-x8"
//! devices = ["b"]
//! ```
//! Everything is checked before anything is built; each error names the file and line, the
//! key and what would be valid.

use std::collections::BTreeMap;

use flashlab_device::provenance::{read_provenance, set_keys};
use flashlab_device::units::{parse_bytes_per_s, parse_size, parse_time_ns};
use flashlab_device::{ConfigError, DeviceConfig, LinkKind};
use serde::Deserialize;

use crate::cache::{CacheMode, CacheParams, Eviction, Promote};
use crate::drives::{HddDrive, HddSpec, XpointDrive, XpointSpec};
use crate::raid::{HostCache, ParityStrategy, RaidLevel, RaidParams};

/// A system description that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SystemError {
    #[error("unknown system {name:?}: not a system preset and not a readable .toml file; presets: {presets}")]
    UnknownSystem { name: String, presets: String },
    #[error("{path}: cannot read: {message}")]
    Io { path: String, message: String },
    #[error("{origin}: {message}")]
    Parse { origin: String, message: String },
    #[error("{origin}: {key} = {value}: {message}; valid: {valid}")]
    Invalid {
        origin: String,
        key: String,
        value: String,
        message: String,
        valid: String,
    },
    #[error(
        "{origin}: {component} refers to `{name}`, which is not defined{hint}; defined: {known}"
    )]
    UnknownComponent {
        origin: String,
        component: String,
        name: String,
        hint: String,
        known: String,
    },
    #[error("{origin}: components form a cycle: {path}")]
    Cycle { origin: String, path: String },
    #[error("{origin}: `{name}` is used by both {first} and {second}; a device can sit in one place only")]
    Shared {
        origin: String,
        name: String,
        first: String,
        second: String,
    },
    #[error("{origin}: {message}")]
    Root { origin: String, message: String },
    /// The drive's own error is the message, not a cause to print again after it.
    #[error("{origin}: drive `{name}`: {error}")]
    Drive {
        origin: String,
        name: String,
        error: Box<ConfigError>,
    },
}

/// A checked component, ready to build.
#[derive(Debug, Clone, PartialEq)]
pub enum ComponentSpec {
    Ssd(Box<DeviceConfig>),
    Hdd(HddSpec),
    Xpoint(XpointSpec),
    Raid {
        params: RaidParams,
        members: Vec<String>,
    },
    Cache {
        params: CacheParams,
        cache: String,
        backing: String,
    },
}

/// A checked shared link.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    pub bytes_per_s: u64,
    pub latency_ns: u64,
    pub devices: Vec<String>,
}

/// A checked system description.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemConfig {
    pub name: String,
    pub description: String,
    pub root: String,
    pub components: BTreeMap<String, ComponentSpec>,
    pub links: BTreeMap<String, LinkSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SystemFile {
    name: String,
    #[serde(default)]
    description: String,
    root: Option<String>,
    #[serde(default)]
    drive: BTreeMap<String, DriveEntry>,
    #[serde(default)]
    raid: BTreeMap<String, RaidEntry>,
    #[serde(default)]
    cache: BTreeMap<String, CacheEntry>,
    #[serde(default)]
    link: BTreeMap<String, LinkEntry>,
    /// Where each key came from (metadata: checked, never built from).
    #[serde(default)]
    provenance: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DriveEntry {
    preset: String,
    #[serde(default)]
    set: toml::Table,
}

fn d_chunk() -> String {
    "128KiB".into()
}
fn d_auto() -> String {
    "auto".into()
}
fn d_zero_time() -> String {
    "0ns".into()
}
fn d_one() -> u32 {
    1
}
fn d_bg_rate() -> String {
    "200MB/s".into()
}
fn d_mem_rate() -> String {
    "10GB/s".into()
}
fn d_true() -> bool {
    true
}
fn d_wt() -> String {
    "write-through".into()
}
fn d_line() -> String {
    "64KiB".into()
}
fn d_zero_size() -> String {
    "0".into()
}
fn d_lru() -> String {
    "lru".into()
}
fn d_promote() -> String {
    "line".into()
}
fn d_meta() -> u64 {
    16
}
fn d_latency() -> String {
    "500ns".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RaidEntry {
    level: u32,
    members: Vec<String>,
    #[serde(default = "d_chunk")]
    chunk: String,
    #[serde(default = "d_auto")]
    parity: String,
    #[serde(default = "d_zero_time")]
    cpu_per_io: String,
    #[serde(default = "d_one")]
    cpu_threads: u32,
    #[serde(default = "d_bg_rate")]
    background_rate: String,
    host_cache: Option<HostCacheEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostCacheEntry {
    size: String,
    #[serde(default)]
    plp: bool,
    #[serde(default = "d_mem_rate")]
    bandwidth: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheEntry {
    cache: String,
    backing: String,
    #[serde(default = "d_wt")]
    mode: String,
    #[serde(default = "d_line")]
    line: String,
    #[serde(default = "d_true")]
    admit_read_miss: bool,
    #[serde(default = "d_promote")]
    promote: String,
    #[serde(default = "d_true")]
    admit_write: bool,
    #[serde(default = "d_one")]
    admit_after: u32,
    #[serde(default = "d_zero_size")]
    sequential_bypass: String,
    #[serde(default = "d_lru")]
    eviction: String,
    #[serde(default = "d_meta")]
    metadata_bytes_per_line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkEntry {
    bandwidth: Option<String>,
    kind: Option<String>,
    #[serde(default = "d_latency")]
    latency: String,
    devices: Vec<String>,
}

struct Preset {
    name: &'static str,
    text: &'static str,
}

/// Hard disk and 3D XPoint drive presets (SSD presets come from the device crate).
const DRIVE_PRESETS: &[Preset] = &[
    Preset {
        name: "intel-optane-memory-16gb",
        text: include_str!("../../../presets/systems/drives/intel-optane-memory-16gb.toml"),
    },
    Preset {
        name: "intel-optane-memory-32gb",
        text: include_str!("../../../presets/systems/drives/intel-optane-memory-32gb.toml"),
    },
    Preset {
        name: "toshiba-dt01aca200-2tb",
        text: include_str!("../../../presets/systems/drives/toshiba-dt01aca200-2tb.toml"),
    },
    Preset {
        name: "wd-ultrastar-dc-hc620-14tb",
        text: include_str!("../../../presets/systems/drives/wd-ultrastar-dc-hc620-14tb.toml"),
    },
];

/// System presets.
const SYSTEM_PRESETS: &[Preset] = &[
    Preset {
        name: "optane-16gb-hdd-2tb",
        text: include_str!("../../../presets/systems/optane-16gb-hdd-2tb.toml"),
    },
    Preset {
        name: "optane-32gb-hdd-2tb",
        text: include_str!("../../../presets/systems/optane-32gb-hdd-2tb.toml"),
    },
    Preset {
        name: "hdd-2tb",
        text: include_str!("../../../presets/systems/hdd-2tb.toml"),
    },
    Preset {
        name: "hdd-smr-14tb",
        text: include_str!("../../../presets/systems/hdd-smr-14tb.toml"),
    },
    Preset {
        name: "pcie5-single",
        text: include_str!("../../../presets/systems/pcie5-single.toml"),
    },
    Preset {
        name: "workstation-raid0",
        text: include_str!("../../../presets/systems/workstation-raid0.toml"),
    },
    Preset {
        name: "workstation-raid10",
        text: include_str!("../../../presets/systems/workstation-raid10.toml"),
    },
    Preset {
        name: "workstation-raid5",
        text: include_str!("../../../presets/systems/workstation-raid5.toml"),
    },
    Preset {
        name: "workstation-raid5-wbcache",
        text: include_str!("../../../presets/systems/workstation-raid5-wbcache.toml"),
    },
];

/// Names of the built-in system presets, sorted.
pub fn system_preset_names() -> Vec<&'static str> {
    let mut v: Vec<_> = SYSTEM_PRESETS.iter().map(|p| p.name).collect();
    v.sort();
    v
}

/// Names of the built-in hard disk and 3D XPoint drive presets, sorted.
pub fn drive_preset_names() -> Vec<&'static str> {
    let mut v: Vec<_> = DRIVE_PRESETS.iter().map(|p| p.name).collect();
    v.sort();
    v
}

/// Why `name` names no device (`--device`, a suite's device, Python's `device=`): the preset
/// it most likely meant, then the drive presets and the system presets to choose from.
pub fn unknown_device_message(name: &str) -> String {
    let drives: Vec<&str> = flashlab_device::preset_names()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let systems = system_preset_names();
    let all = drives.iter().chain(systems.iter()).copied();
    format!(
        "unknown device {:?}{}: not a preset name and not a readable .toml file; drives: {}; \
         systems (run, suite, serve): {} (`flashlab devices` describes each)",
        flashlab_engine::input::excerpt(name),
        flashlab_engine::input::did_you_mean(name, all),
        drives.join(", "),
        systems.join(", ")
    )
}

/// A built-in system or hard disk / 3D XPoint drive preset's file (as `presets/...`), text
/// and the depth of its keys (for its `[provenance]`).
pub fn preset_source(name: &str) -> Option<(String, &'static str, usize)> {
    if let Some(p) = SYSTEM_PRESETS.iter().find(|p| p.name == name) {
        return Some((
            format!("presets/systems/{}.toml", p.name),
            p.text,
            SYSTEM_KEY_DEPTH,
        ));
    }
    DRIVE_PRESETS.iter().find(|p| p.name == name).map(|p| {
        (
            format!("presets/systems/drives/{}.toml", p.name),
            p.text,
            DRIVE_FILE_KEY_DEPTH,
        )
    })
}

/// Whether `name_or_path` is a system preset or a file that describes a system (it has a
/// `[drive.*]`, `[raid.*]`, `[cache.*]` or `[link.*]` table) rather than a single drive.
pub fn is_system(name_or_path: &str) -> bool {
    if SYSTEM_PRESETS.iter().any(|p| p.name == name_or_path) {
        return true;
    }
    if !name_or_path.ends_with(".toml") {
        return false;
    }
    // Unreadable (or refused: a device, too large) is no system; the drive loader that
    // reads it next reports why.
    let Ok(text) = read_config(std::path::Path::new(name_or_path)) else {
        return false;
    };
    // A drive description has a `[link]` (its host interface) too; only a system has drives,
    // RAID sets or cache tiers, and never a `[nand]` of its own.
    toml::from_str::<toml::Table>(&text)
        .map(|t| {
            ["drive", "raid", "cache"]
                .iter()
                .any(|k| t.contains_key(*k))
                && !t.contains_key("nand")
        })
        .unwrap_or(false)
}

/// Load a system preset by name or a system file by path.
pub fn load_system_config(name_or_path: &str) -> Result<SystemConfig, SystemError> {
    if let Some(p) = SYSTEM_PRESETS.iter().find(|p| p.name == name_or_path) {
        return parse_system_config(&format!("presets/systems/{}.toml", p.name), p.text);
    }
    let path = std::path::Path::new(name_or_path);
    if !name_or_path.ends_with(".toml") && !path.is_file() {
        return Err(SystemError::UnknownSystem {
            name: name_or_path.to_string(),
            presets: system_preset_names().join(", "),
        });
    }
    let text = read_config(path)?;
    parse_system_config(name_or_path, &text)
}

/// A system or member-drive file's text, bounded as every description is.
fn read_config(path: &std::path::Path) -> Result<String, SystemError> {
    flashlab_engine::input::read_text(
        path,
        flashlab_engine::input::MAX_CONFIG_FILE_BYTES,
        "a system description",
    )
    .map_err(|e| SystemError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// Line of the `[section]` header (or of `key` under it), for error messages.
fn find_line(text: &str, section: &str, key: Option<&str>) -> Option<usize> {
    let mut current = String::new();
    let mut header = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix('[') {
            current = h
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            if current == section {
                header = Some(i + 1);
            }
            continue;
        }
        if current == section {
            if let Some(k) = key {
                let lhs = t.split('=').next().unwrap_or("").trim().trim_matches('"');
                if lhs == k && t.contains('=') {
                    return Some(i + 1);
                }
            }
        }
    }
    header
}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn at(&self, section: &str, key: Option<&str>) -> String {
        match find_line(self.text, section, key) {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.to_string(),
        }
    }
    fn invalid(
        &self,
        section: &str,
        key: &str,
        value: &str,
        message: &str,
        valid: &str,
    ) -> SystemError {
        SystemError::Invalid {
            origin: self.at(section, Some(key)),
            key: format!("{section}.{key}"),
            value: value.to_string(),
            message: message.to_string(),
            valid: valid.to_string(),
        }
    }
    fn size(&self, section: &str, key: &str, v: &str) -> Result<u64, SystemError> {
        parse_size(v).map_err(|e| {
            self.invalid(
                section,
                key,
                v,
                &e.to_string(),
                "a size such as \"128KiB\" or \"2TB\"",
            )
        })
    }
    fn time(&self, section: &str, key: &str, v: &str) -> Result<u64, SystemError> {
        let valid = "a time such as \"2us\" or \"8.5ms\", at most 1000s";
        match parse_time_ns(v) {
            Ok(ns) if ns <= crate::drives::MAX_FIGURE_NS => Ok(ns),
            Ok(_) => Err(self.invalid(section, key, v, "too long", valid)),
            Err(e) => Err(self.invalid(section, key, v, &e.to_string(), valid)),
        }
    }
    fn rate(&self, section: &str, key: &str, v: &str) -> Result<u64, SystemError> {
        match parse_bytes_per_s(v) {
            Ok(r) if r > 0 => Ok(r),
            Ok(_) => Err(self.invalid(section, key, v, "a rate of zero", "a positive rate")),
            Err(e) => Err(self.invalid(
                section,
                key,
                v,
                &e.to_string(),
                "a rate such as \"7.9GB/s\"",
            )),
        }
    }
}

/// `set = {...}` as `--set` style pairs (nested tables become dotted keys).
fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<(String, String)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(sub) => flatten(&key, sub, out),
            toml::Value::String(s) => out.push((key, s.clone())),
            other => out.push((key, other.to_string())),
        }
    }
}

fn drive_spec(
    ctx: &Ctx,
    name: &str,
    d: &DriveEntry,
    base_dir: &std::path::Path,
) -> Result<ComponentSpec, SystemError> {
    let section = format!("drive.{name}");
    let own: Option<(String, String)> = match DRIVE_PRESETS.iter().find(|p| p.name == d.preset) {
        Some(p) => Some((
            format!("presets/systems/drives/{}.toml", p.name),
            p.text.to_string(),
        )),
        None if d.preset.ends_with(".toml") => {
            let path = base_dir.join(&d.preset);
            let text = read_config(&path)?;
            let kind = toml::from_str::<toml::Table>(&text)
                .ok()
                .and_then(|t| t.get("kind").and_then(|k| k.as_str().map(str::to_string)));
            matches!(kind.as_deref(), Some("hdd" | "xpoint"))
                .then(|| (path.display().to_string(), text))
        }
        None => None,
    };
    let Some((file, text)) = own else {
        let mut sets = Vec::new();
        flatten("", &d.set, &mut sets);
        let cfg = flashlab_device::load_device_config(&d.preset, &sets).map_err(|e| {
            // A member may also be a hard disk or a 3D XPoint drive: name those presets too.
            let e = match e {
                ConfigError::UnknownDevice { name, presets } => ConfigError::UnknownDevice {
                    name,
                    presets: format!(
                        "{presets}; hard disk and 3D XPoint presets: {}",
                        drive_preset_names().join(", ")
                    ),
                },
                other => other,
            };
            SystemError::Drive {
                origin: ctx.at(&section, Some("preset")),
                name: name.to_string(),
                error: Box::new(e),
            }
        })?;
        return Ok(ComponentSpec::Ssd(Box::new(cfg)));
    };
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| SystemError::Parse {
        origin: file.clone(),
        message: flashlab_engine::input::tame(e.message()),
    })?;
    let provenance = table.remove("provenance");
    let keys = set_keys(&table, DRIVE_FILE_KEY_DEPTH);
    read_provenance(&file, &text, provenance.as_ref(), &keys).map_err(system_error)?;
    for (k, v) in &d.set {
        table.insert(k.clone(), v.clone());
    }
    let kind = table
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or("")
        .to_string();
    let spec_err = |(key, value, message): (String, String, String)| {
        ctx.invalid(
            &section,
            &format!("set.{key}"),
            &value,
            &message,
            &format!("see {file}"),
        )
    };
    let ser_err = |e: toml::de::Error| SystemError::Parse {
        origin: ctx.at(&section, Some("set")),
        message: format!(
            "drive `{name}` ({}): {}",
            d.preset,
            flashlab_engine::input::tame(e.message().trim())
        ),
    };
    match kind.as_str() {
        "hdd" => {
            let s = HddSpec::deserialize(toml::Value::Table(table)).map_err(ser_err)?;
            HddDrive::from_spec(name, &s).map_err(spec_err)?;
            Ok(ComponentSpec::Hdd(s))
        }
        _ => {
            let s = XpointSpec::deserialize(toml::Value::Table(table)).map_err(ser_err)?;
            XpointDrive::from_spec(name, &s).map_err(spec_err)?;
            Ok(ComponentSpec::Xpoint(s))
        }
    }
}

fn raid_spec(ctx: &Ctx, name: &str, r: &RaidEntry) -> Result<ComponentSpec, SystemError> {
    let sec = format!("raid.{name}");
    let level = RaidLevel::from_number(r.level).ok_or_else(|| {
        ctx.invalid(
            &sec,
            "level",
            &r.level.to_string(),
            "no such RAID level",
            "0, 1, 5, 6, 10",
        )
    })?;
    level.check_members(r.members.len()).map_err(|m| {
        ctx.invalid(
            &sec,
            "members",
            &format!("{:?}", r.members),
            &m,
            "members per level: RAID 0 1 or more, RAID 1 2 or more, RAID 5 3 or more, RAID 6 4 or more, RAID 10 an even number from 4",
        )
    })?;
    let chunk = ctx.size(&sec, "chunk", &r.chunk)?;
    if chunk < 4096 || !chunk.is_power_of_two() {
        return Err(ctx.invalid(
            &sec,
            "chunk",
            &r.chunk,
            "not a power of two of at least 4KiB",
            "4KiB, 8KiB, ..., 64KiB, 128KiB, 512KiB, ...",
        ));
    }
    let parity = match r.parity.as_str() {
        "auto" => ParityStrategy::Auto,
        "rmw" | "read-modify-write" => ParityStrategy::ReadModifyWrite,
        "rcw" | "reconstruct-write" => ParityStrategy::ReconstructWrite,
        other => {
            return Err(ctx.invalid(
                &sec,
                "parity",
                other,
                "unknown parity strategy",
                "auto, read-modify-write, reconstruct-write",
            ))
        }
    };
    if r.cpu_threads == 0 || r.cpu_threads > 1024 {
        return Err(ctx.invalid(
            &sec,
            "cpu_threads",
            &r.cpu_threads.to_string(),
            "out of range",
            "1 to 1024",
        ));
    }
    let host_cache = match &r.host_cache {
        None => None,
        Some(h) => {
            let hs = format!("{sec}.host_cache");
            let size_bytes = ctx.size(&hs, "size", &h.size)?;
            if size_bytes == 0 {
                return Err(ctx.invalid(
                    &hs,
                    "size",
                    &h.size,
                    "an empty cache",
                    "a size such as \"1GiB\" (leave the table out for no cache)",
                ));
            }
            Some(HostCache {
                size_bytes,
                plp: h.plp,
                bytes_per_s: ctx.rate(&hs, "bandwidth", &h.bandwidth)?,
            })
        }
    };
    Ok(ComponentSpec::Raid {
        params: RaidParams {
            level,
            chunk_bytes: chunk,
            parity,
            cpu_per_io_ns: ctx.time(&sec, "cpu_per_io", &r.cpu_per_io)?,
            cpu_threads: r.cpu_threads,
            host_cache,
            background_bytes_per_s: ctx.rate(&sec, "background_rate", &r.background_rate)?,
        },
        members: r.members.clone(),
    })
}

fn cache_spec(ctx: &Ctx, name: &str, c: &CacheEntry) -> Result<ComponentSpec, SystemError> {
    let sec = format!("cache.{name}");
    let mode = match c.mode.as_str() {
        "write-through" => CacheMode::WriteThrough,
        "write-back" => CacheMode::WriteBack,
        other => {
            return Err(ctx.invalid(
                &sec,
                "mode",
                other,
                "unknown mode",
                "write-through, write-back",
            ))
        }
    };
    let eviction = match c.eviction.as_str() {
        "lru" => Eviction::Lru,
        "frequency" | "slru" => Eviction::Frequency,
        other => {
            return Err(ctx.invalid(&sec, "eviction", other, "unknown policy", "lru, frequency"))
        }
    };
    let promote = match c.promote.as_str() {
        "line" => Promote::Line,
        "read" => Promote::Read,
        other => {
            return Err(ctx.invalid(
                &sec,
                "promote",
                other,
                "unknown promotion",
                "line (a read miss copies its whole line), read (only the sectors read)",
            ))
        }
    };
    let line = ctx.size(&sec, "line", &c.line)?;
    if !(4096..=262_144).contains(&line) || !line.is_power_of_two() {
        return Err(ctx.invalid(
            &sec,
            "line",
            &c.line,
            "not a power of two from 4KiB to 256KiB",
            "4KiB ... 256KiB",
        ));
    }
    if c.admit_after == 0 {
        return Err(ctx.invalid(
            &sec,
            "admit_after",
            "0",
            "a line must be asked for at least once",
            "1 or more",
        ));
    }
    if c.metadata_bytes_per_line > 4096 {
        return Err(ctx.invalid(
            &sec,
            "metadata_bytes_per_line",
            &c.metadata_bytes_per_line.to_string(),
            "too large",
            "0 to 4096",
        ));
    }
    Ok(ComponentSpec::Cache {
        params: CacheParams {
            line_bytes: line,
            mode,
            admit_read_miss: c.admit_read_miss,
            promote,
            admit_write: c.admit_write,
            admit_after: c.admit_after,
            sequential_bypass_bytes: ctx.size(&sec, "sequential_bypass", &c.sequential_bypass)?,
            eviction,
            metadata_bytes_per_line: c.metadata_bytes_per_line,
        },
        cache: c.cache.clone(),
        backing: c.backing.clone(),
    })
}

fn link_spec(ctx: &Ctx, name: &str, l: &LinkEntry) -> Result<LinkSpec, SystemError> {
    let sec = format!("link.{name}");
    let bytes_per_s = match (&l.bandwidth, &l.kind) {
        (Some(b), None) => ctx.rate(&sec, "bandwidth", b)?,
        (None, Some(k)) => {
            let kind = LinkKind::parse(k)
                .ok_or_else(|| ctx.invalid(&sec, "kind", k, "unknown link", flashlab_device::link::LINK_KINDS))?;
            (kind.raw_bytes_per_s() as f64 * kind.default_efficiency()) as u64
        }
        _ => {
            return Err(SystemError::Parse {
                origin: ctx.at(&sec, None),
                message: format!("[{sec}] needs exactly one of `bandwidth` (e.g. \"7.9GB/s\") or `kind` (e.g. \"pcie-gen4-x8\")"),
            })
        }
    };
    if l.devices.is_empty() {
        return Err(ctx.invalid(
            &sec,
            "devices",
            "[]",
            "no device behind the link",
            "names of drives or components",
        ));
    }
    Ok(LinkSpec {
        bytes_per_s,
        latency_ns: ctx.time(&sec, "latency", &l.latency)?,
        devices: l.devices.clone(),
    })
}

/// Check a system description held in memory; `file` names it in errors.
pub fn parse_system_config(file: &str, text: &str) -> Result<SystemConfig, SystemError> {
    let ctx = Ctx { file, text };
    let f = read_system_file(file, text)?;
    check_system_provenance(file, text, f.provenance.as_ref())?;
    let base_dir = std::path::Path::new(file)
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .to_path_buf();
    let components = component_specs(&ctx, &f, &base_dir)?;
    let mut links = BTreeMap::new();
    for (n, l) in &f.link {
        links.insert(n.clone(), link_spec(&ctx, n, l)?);
    }
    let known = components.keys().cloned().collect::<Vec<_>>().join(", ");
    let parent = parents(&ctx, &components, &links, &known)?;
    check_cycles(&ctx, &components, &parent)?;
    check_links(&ctx, &components, &links, &known)?;
    let root = find_root(&ctx, f.root.as_ref(), &components, &parent, known)?;
    Ok(SystemConfig {
        name: f.name,
        description: f.description,
        root,
        components,
        links,
    })
}

/// Depth of a hard disk or 3D XPoint drive file's keys: `key`, or `section.key`.
const DRIVE_FILE_KEY_DEPTH: usize = 2;
/// Depth of a system description's keys: `raid.NAME.key`, `raid.NAME.host_cache.key`.
pub const SYSTEM_KEY_DEPTH: usize = 4;

/// A provenance error of the device crate's reader as a system error.
fn system_error(e: ConfigError) -> SystemError {
    match e {
        ConfigError::Parse { origin, message } => SystemError::Parse { origin, message },
        other => SystemError::Parse {
            origin: String::new(),
            message: other.to_string(),
        },
    }
}

/// The system file's `[provenance]` names keys it sets, each entry valid.
fn check_system_provenance(
    file: &str,
    text: &str,
    provenance: Option<&toml::Value>,
) -> Result<(), SystemError> {
    if provenance.is_none() {
        return Ok(());
    }
    let table: toml::Table = toml::from_str(text).map_err(|e| SystemError::Parse {
        origin: file.to_string(),
        message: flashlab_engine::input::tame(e.message()),
    })?;
    let keys = set_keys(&table, SYSTEM_KEY_DEPTH);
    read_provenance(file, text, provenance, &keys).map_err(system_error)?;
    Ok(())
}

/// The TOML tree of a system description; a syntax error or unknown key names its line.
fn read_system_file(file: &str, text: &str) -> Result<SystemFile, SystemError> {
    toml::from_str(text).map_err(|e| {
        let origin = match e.span() {
            Some(s) => format!(
                "{file}:{}",
                text[..s.start.min(text.len())].matches('\n').count() + 1
            ),
            None => file.to_string(),
        };
        let mut message = flashlab_engine::input::tame(e.message().trim());
        if message.contains("unknown field") && !message.contains("expected") {
            message
                .push_str("; valid tables: [drive.NAME], [raid.NAME], [cache.NAME], [link.NAME]");
        }
        SystemError::Parse { origin, message }
    })
}

/// Every drive, RAID set and cache, checked, under its name (names are shared by the three).
fn component_specs(
    ctx: &Ctx,
    f: &SystemFile,
    base_dir: &std::path::Path,
) -> Result<BTreeMap<String, ComponentSpec>, SystemError> {
    let mut components = BTreeMap::new();
    let mut section_of: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |name: &str,
                   section: String,
                   spec: ComponentSpec,
                   components: &mut BTreeMap<String, ComponentSpec>| {
        if let Some(prev) = section_of.get(name) {
            return Err(SystemError::Parse {
                origin: ctx.at(&section, None),
                message: format!("`{name}` is defined twice ([{prev}] and [{section}]); names are shared by drives, RAID sets and caches"),
            });
        }
        section_of.insert(name.to_string(), section);
        components.insert(name.to_string(), spec);
        Ok(())
    };
    for (n, d) in &f.drive {
        let s = drive_spec(ctx, n, d, base_dir)?;
        add(n, format!("drive.{n}"), s, &mut components)?;
    }
    for (n, r) in &f.raid {
        let s = raid_spec(ctx, n, r)?;
        add(n, format!("raid.{n}"), s, &mut components)?;
    }
    for (n, c) in &f.cache {
        let s = cache_spec(ctx, n, c)?;
        add(n, format!("cache.{n}"), s, &mut components)?;
    }
    Ok(components)
}

/// The table a component is defined in (`raid.NAME`, `cache.NAME`, `drive.NAME`).
fn section(components: &BTreeMap<String, ComponentSpec>, n: &str) -> String {
    match components.get(n) {
        Some(ComponentSpec::Raid { .. }) => format!("raid.{n}"),
        Some(ComponentSpec::Cache { .. }) => format!("cache.{n}"),
        _ => format!("drive.{n}"),
    }
}

/// Each component's parent: every reference exists and every component has at most one
/// parent.
fn parents(
    ctx: &Ctx,
    components: &BTreeMap<String, ComponentSpec>,
    links: &BTreeMap<String, LinkSpec>,
    known: &str,
) -> Result<BTreeMap<String, String>, SystemError> {
    let section = |n: &str| section(components, n);
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    for (n, spec) in components {
        let (key, refs): (&str, Vec<&String>) = match spec {
            ComponentSpec::Raid { members, .. } => ("members", members.iter().collect()),
            ComponentSpec::Cache { cache, backing, .. } => ("cache", vec![cache, backing]),
            _ => continue,
        };
        for r in refs {
            if !components.contains_key(r) {
                let hint = if links.contains_key(r) {
                    format!(" (`{r}` is a link: name the devices behind it here, and list them in [link.{r}] devices)")
                } else {
                    String::new()
                };
                return Err(SystemError::UnknownComponent {
                    origin: ctx.at(&section(n), Some(key)),
                    component: section(n),
                    name: r.clone(),
                    hint,
                    known: known.to_string(),
                });
            }
            if r == n {
                return Err(SystemError::Cycle {
                    origin: ctx.at(&section(n), Some(key)),
                    path: format!("{n} -> {n}"),
                });
            }
            if let Some(first) = parent.get(r) {
                if first != n {
                    return Err(SystemError::Shared {
                        origin: ctx.at(&section(n), Some(key)),
                        name: r.clone(),
                        first: format!("[{}]", section(first)),
                        second: format!("[{}]", section(n)),
                    });
                }
                return Err(SystemError::Invalid {
                    origin: ctx.at(&section(n), Some(key)),
                    key: format!("{}.{key}", section(n)),
                    value: r.clone(),
                    message: "listed twice".into(),
                    valid: "each device once".into(),
                });
            }
            parent.insert(r.clone(), n.clone());
        }
    }
    Ok(parent)
}

/// No component is its own ancestor: parents followed upward from every component.
fn check_cycles(
    ctx: &Ctx,
    components: &BTreeMap<String, ComponentSpec>,
    parent: &BTreeMap<String, String>,
) -> Result<(), SystemError> {
    for n in components.keys() {
        let mut path = vec![n.clone()];
        let mut cur = n;
        while let Some(p) = parent.get(cur) {
            if p == n {
                path.push(p.clone());
                path.reverse();
                return Err(SystemError::Cycle {
                    origin: ctx.at(&section(components, n), None),
                    path: path.join(" -> "),
                });
            }
            if path.len() > components.len() {
                break;
            }
            path.push(p.clone());
            cur = p;
        }
    }
    Ok(())
}

/// Every device behind a link exists and sits behind one link only.
fn check_links(
    ctx: &Ctx,
    components: &BTreeMap<String, ComponentSpec>,
    links: &BTreeMap<String, LinkSpec>,
    known: &str,
) -> Result<(), SystemError> {
    let mut behind: BTreeMap<&String, &String> = BTreeMap::new();
    for (ln, l) in links {
        for d in &l.devices {
            if !components.contains_key(d) {
                return Err(SystemError::UnknownComponent {
                    origin: ctx.at(&format!("link.{ln}"), Some("devices")),
                    component: format!("link.{ln}"),
                    name: d.clone(),
                    hint: String::new(),
                    known: known.to_string(),
                });
            }
            if let Some(first) = behind.insert(d, ln) {
                return Err(SystemError::Shared {
                    origin: ctx.at(&format!("link.{ln}"), Some("devices")),
                    name: d.clone(),
                    first: format!("[link.{first}]"),
                    second: format!("[link.{ln}]"),
                });
            }
        }
    }
    Ok(())
}

/// The root of the tree: `root =` when given (a component no other holds, above every
/// other), else the one component without a parent.
fn find_root(
    ctx: &Ctx,
    root: Option<&String>,
    components: &BTreeMap<String, ComponentSpec>,
    parent: &BTreeMap<String, String>,
    known: String,
) -> Result<String, SystemError> {
    let tops: Vec<&String> = components
        .keys()
        .filter(|n| !parent.contains_key(*n))
        .collect();
    let Some(r) = root else {
        return match tops.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(SystemError::Root {
                origin: ctx.file.to_string(),
                message: "no components: define at least one [drive.NAME]".into(),
            }),
            many => Err(SystemError::Root {
                origin: ctx.file.to_string(),
                message: format!(
                    "several components are not part of any other ({}); set `root = \"NAME\"` or use them as members",
                    many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                ),
            }),
        };
    };
    if !components.contains_key(r) {
        return Err(SystemError::UnknownComponent {
            origin: ctx.at("", Some("root")),
            component: "root".into(),
            name: r.clone(),
            hint: String::new(),
            known,
        });
    }
    if let Some(p) = parent.get(r) {
        return Err(SystemError::Root {
            origin: ctx.at("", Some("root")),
            message: format!(
                "root `{r}` is itself a member of [{}]",
                section(components, p)
            ),
        });
    }
    if let Some(other) = tops.iter().find(|t| *t != &r) {
        return Err(SystemError::Root {
            origin: ctx.at(&section(components, other), None),
            message: format!("`{other}` is not part of the tree under root `{r}`; use it as a member or remove it"),
        });
    }
    Ok(r.clone())
}

#[cfg(test)]
mod tests {
    use super::{is_system, parse_system_config};

    #[test]
    fn a_drive_file_with_a_host_link_is_not_a_system() {
        let dir = std::env::temp_dir().join(format!("flashlab-is-system-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let drive = dir.join("drive.toml");
        std::fs::write(
            &drive,
            "name = \"d\"\n[nand]\ncell = \"tlc\"\n[link]\nkind = \"pcie-gen4-x4\"\n",
        )
        .unwrap();
        let system = dir.join("system.toml");
        std::fs::write(
            &system,
            "name = \"s\"\n[drive.a]\npreset = \"tiny-test-1gb\"\n",
        )
        .unwrap();
        assert!(!is_system(drive.to_str().unwrap()));
        assert!(is_system(system.to_str().unwrap()));
        assert!(is_system("hdd-2tb"));
        assert!(!is_system("tiny-test-1gb"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    const RAID0: &str = "name = \"r\"\n[drive.a]\npreset = \"tiny-test-1gb\"\n[drive.b]\npreset = \"tiny-test-1gb\"\n[raid.array]\nlevel = 0\nchunk = \"128KiB\"\nmembers = [\"a\", \"b\"]\n";

    #[test]
    fn a_system_file_carries_provenance_as_metadata() {
        let plain = parse_system_config("s.toml", RAID0).unwrap();
        let text = format!(
            "{RAID0}[provenance]\n\"raid.array.chunk\" = {{ kind = \"cited\", source = \"mdadm default\" }}\n"
        );
        let with = parse_system_config("s.toml", &text).unwrap();
        assert_eq!(
            crate::system_config_hash(&plain),
            crate::system_config_hash(&with),
            "provenance changes no state file's configuration check"
        );
        let text = format!(
            "{RAID0}[provenance]\n\"raid.array.chunks\" = {{ kind = \"cited\", source = \"x\" }}\n"
        );
        let e = parse_system_config("s.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.toml:11: provenance of `raid.array.chunks`"),
            "{e}"
        );
        assert!(e.contains("did you mean `raid.array.chunk`"), "{e}");
        let text = format!("{RAID0}[provenance]\n\"raid.array.level\" = {{ kind = \"cap\" }}\n");
        let e = parse_system_config("s.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("kind \"cap\" needs `figure`"), "{e}");
    }

    #[test]
    fn a_drive_file_carries_provenance_as_metadata() {
        let dir = std::env::temp_dir().join(format!("flashlab-drive-prov-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // The preset without a provenance table of its own.
        let hdd = super::DRIVE_PRESETS
            .iter()
            .find(|p| p.name == "toshiba-dt01aca200-2tb")
            .unwrap()
            .text
            .split("[provenance]")
            .next()
            .unwrap();
        let system = "name = \"s\"\n[drive.hdd]\npreset = \"hdd.toml\"\n";
        let build = |provenance: &str| {
            std::fs::write(dir.join("hdd.toml"), format!("{hdd}\n{provenance}")).unwrap();
            parse_system_config(dir.join("s.toml").to_str().unwrap(), system)
        };
        let base = build("").unwrap();
        let with = build("[provenance]\n\"rpm\" = { kind = \"cited\", source = \"data sheet\" }\n");
        assert_eq!(
            crate::system_config_hash(&base),
            crate::system_config_hash(&with.unwrap())
        );
        let e = build("[provenance]\n\"rpms\" = { kind = \"cited\", source = \"x\" }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("provenance of `rpms`"), "{e}");
        assert!(e.contains("did you mean `rpm`"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn every_key_of_every_system_and_drive_preset_says_where_it_came_from() {
        use flashlab_device::provenance::{read_provenance, set_keys, LABEL_KEYS};
        let files = super::SYSTEM_PRESETS
            .iter()
            .map(|p| {
                (
                    format!("presets/systems/{}.toml", p.name),
                    p.text,
                    super::SYSTEM_KEY_DEPTH,
                )
            })
            .chain(super::DRIVE_PRESETS.iter().map(|p| {
                (
                    format!("presets/systems/drives/{}.toml", p.name),
                    p.text,
                    super::DRIVE_FILE_KEY_DEPTH,
                )
            }));
        let mut missing = Vec::new();
        for (file, text, depth) in files {
            let table: toml::Table = toml::from_str(text).unwrap();
            let keys = set_keys(&table, depth);
            let map = read_provenance(&file, text, table.get("provenance"), &keys)
                .unwrap_or_else(|e| panic!("{e}"));
            for k in keys {
                if !LABEL_KEYS.contains(&k.as_str()) && !map.contains_key(&k) {
                    missing.push(format!("{file}: {k}"));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "keys without a [provenance] entry:\n{}",
            missing.join("\n")
        );
    }
}

#[cfg(test)]
mod key_table {
    use super::*;
    use crate::keys::keys_of;

    /// The fields a reader knows, from the error it gives for an unknown one (`expected one
    /// of `a`, `b``): the readers' own list, not one kept by hand.
    fn fields<T: serde::de::DeserializeOwned>() -> Vec<String> {
        let e = match toml::from_str::<T>("no_such_key_here = 1") {
            Err(e) => e.message().to_string(),
            Ok(_) => panic!("an unknown key was taken"),
        };
        let (_, list) = e.split_once("expected").expect(&e);
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_key_table_holds_every_key_each_reader_knows() {
        let tables = [
            ("raid", fields::<RaidEntry>()),
            ("raid.host_cache", fields::<HostCacheEntry>()),
            ("cache", fields::<CacheEntry>()),
            ("link", fields::<LinkEntry>()),
            ("hdd", fields::<HddSpec>()),
            ("hdd.zoned", fields::<crate::drives::HddZonedSpec>()),
            ("xpoint", fields::<XpointSpec>()),
        ];
        let mut all = 0;
        for (table, mut known) in tables {
            let mut listed: Vec<String> = keys_of(table).map(|k| k.key.to_string()).collect();
            known.sort();
            listed.sort();
            assert_eq!(listed, known, "[{table}]");
            all += listed.len();
        }
        assert_eq!(all, crate::keys::SYSTEM_KEYS.len(), "a key of no table");
    }
}
