//! The keys of a system description's own tables (`[raid.NAME]`, its `host_cache`,
//! `[cache.NAME]`, `[link.NAME]`) and of the hard disk and 3D XPoint drive descriptions its
//! drives name: each with what it holds and, for a number, the largest value it takes. A
//! test checks this table against the readers' own field lists, so a key added to a reader
//! and not here fails it; the bounds test of the command line walks it.

/// What a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A whole number (a TOML integer); its largest is the type's when the reader states none.
    Count,
    /// A size in bytes, as text (`"128KiB"`).
    Size,
    /// A time, as text (`"8.5ms"`).
    Time,
    /// A rate in bytes a second, as text (`"200MB/s"`).
    Rate,
    /// Anything else: a name, a list of names, a word, a flag, a table.
    Other,
}

/// One key of a system description or a drive description a system reads.
#[derive(Debug, Clone, Copy)]
pub struct SystemKey {
    /// The table it sits in: `raid`, `raid.host_cache`, `cache`, `link`, `hdd`,
    /// `hdd.zoned` or `xpoint`.
    pub table: &'static str,
    pub key: &'static str,
    pub kind: KeyKind,
    /// The largest value taken, where the reader states one.
    pub max: Option<u64>,
}

const fn k(table: &'static str, key: &'static str, kind: KeyKind, max: Option<u64>) -> SystemKey {
    SystemKey {
        table,
        key,
        kind,
        max,
    }
}

use KeyKind::{Count, Other, Rate, Size, Time};

/// Every key of the tables the module's page names.
pub const SYSTEM_KEYS: &[SystemKey] = &[
    k("raid", "level", Count, Some(10)),
    k("raid", "members", Other, None),
    k("raid", "chunk", Size, None),
    k("raid", "parity", Other, None),
    k("raid", "cpu_per_io", Time, None),
    k("raid", "cpu_threads", Count, Some(1024)),
    k("raid", "background_rate", Rate, None),
    k("raid", "host_cache", Other, None),
    k("raid.host_cache", "size", Size, None),
    k("raid.host_cache", "plp", Other, None),
    k("raid.host_cache", "bandwidth", Rate, None),
    k("cache", "cache", Other, None),
    k("cache", "backing", Other, None),
    k("cache", "mode", Other, None),
    k("cache", "line", Size, Some(262_144)),
    k("cache", "admit_read_miss", Other, None),
    k("cache", "promote", Other, None),
    k("cache", "admit_write", Other, None),
    k("cache", "admit_after", Count, Some(u32::MAX as u64)),
    k("cache", "sequential_bypass", Size, None),
    k("cache", "eviction", Other, None),
    k("cache", "metadata_bytes_per_line", Count, Some(4096)),
    k("link", "bandwidth", Rate, None),
    k("link", "kind", Other, None),
    k("link", "latency", Time, None),
    k("link", "devices", Other, None),
    k("hdd", "kind", Other, None),
    k("hdd", "name", Other, None),
    k("hdd", "description", Other, None),
    k("hdd", "capacity", Size, None),
    k("hdd", "rpm", Count, Some(u32::MAX as u64)),
    k("hdd", "cylinders", Count, Some(u32::MAX as u64)),
    k("hdd", "outer_rate", Rate, None),
    k("hdd", "inner_rate", Rate, None),
    k("hdd", "track_to_track", Time, None),
    k("hdd", "average_seek", Time, None),
    k("hdd", "full_stroke", Time, None),
    k("hdd", "cache", Size, None),
    k("hdd", "read_ahead", Size, None),
    k(
        "hdd",
        "read_segments",
        Count,
        Some(flashlab_media::hdd::MAX_READ_SEGMENTS as u64),
    ),
    k("hdd", "pre_read", Other, None),
    k("hdd", "write_cache", Other, None),
    k("hdd", "interface", Other, None),
    k("hdd", "command_overhead", Time, None),
    k("hdd", "queue_depth", Count, Some(32)),
    k("hdd", "zoned", Other, None),
    k("hdd.zoned", "enabled", Other, None),
    k("hdd.zoned", "zone_size", Size, None),
    k(
        "hdd.zoned",
        "conventional_zones",
        Count,
        Some(u32::MAX as u64),
    ),
    k("hdd.zoned", "max_open_zones", Count, Some(u32::MAX as u64)),
    k(
        "hdd.zoned",
        "max_active_zones",
        Count,
        Some(u32::MAX as u64),
    ),
    k("hdd.zoned", "reset_time", Time, None),
    k("xpoint", "kind", Other, None),
    k("xpoint", "name", Other, None),
    k("xpoint", "description", Other, None),
    k("xpoint", "capacity", Size, None),
    k(
        "xpoint",
        "dies",
        Count,
        Some(crate::drives::MAX_XPOINT_DIES as u64),
    ),
    k("xpoint", "interleave", Size, None),
    k("xpoint", "t_read", Time, None),
    k("xpoint", "t_write", Time, None),
    k("xpoint", "die_rate", Rate, None),
    k("xpoint", "die_write_rate", Rate, None),
    k("xpoint", "interface", Other, None),
    k("xpoint", "command_overhead", Time, None),
    k(
        "xpoint",
        "max_iops",
        Count,
        Some(crate::drives::MAX_XPOINT_IOPS),
    ),
    k("xpoint", "queue_depth", Count, Some(u32::MAX as u64)),
    k("xpoint", "endurance", Size, None),
];

/// The keys of `table`, in the table's order.
pub fn keys_of(table: &str) -> impl Iterator<Item = &'static SystemKey> + '_ {
    SYSTEM_KEYS.iter().filter(move |k| k.table == table)
}
