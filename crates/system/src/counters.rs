//! Typed counters of a system's RAID sets and cache tiers: what suites read, and what the
//! counters tree (`System::counters_json`) shows for those nodes, serialized field by field
//! with the children's trees added.

use serde::Serialize;

/// A RAID set's counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaidCounters {
    pub name: String,
    /// Always `raid`: how the counters tree tells node kinds apart.
    pub kind: &'static str,
    pub level: u32,
    pub members: usize,
    pub chunk_bytes: u64,
    pub capacity_bytes: u64,
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_other: u64,
    pub member_reads: Vec<u64>,
    pub member_writes: Vec<u64>,
    /// Reads and writes sent to the members, all of them.
    pub member_ios: u64,
    pub parity_reads: u64,
    pub parity_writes: u64,
    pub full_stripe_writes: u64,
    pub read_modify_write_rows: u64,
    pub reconstruct_write_rows: u64,
    pub degraded_reads: u64,
    pub failed_members: Vec<usize>,
    pub background_bytes: u64,
    pub background_progress: Option<f64>,
    pub background_done: Option<BackgroundDoneCounters>,
    pub cpu_busy_ns: u64,
    pub host_cache_wait_ns: u64,
    pub held_rows_completed: u64,
    pub held_rows_written_partial: u64,
}

/// A finished resync or rebuild.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BackgroundDoneCounters {
    /// `resync` or `rebuild`.
    pub kind: &'static str,
    pub started_ns: u64,
    pub done_ns: u64,
    pub duration_ns: u64,
}

/// A cache tier's counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheCounters {
    pub name: String,
    /// Always `cache`: how the counters tree tells node kinds apart.
    pub kind: &'static str,
    pub mode: &'static str,
    pub eviction: &'static str,
    pub line_bytes: u64,
    pub lines: usize,
    pub lines_used: usize,
    pub metadata_bytes: u64,
    pub read_hits: u64,
    pub read_misses: u64,
    pub read_hit_ratio: f64,
    pub write_hits: u64,
    pub write_misses: u64,
    pub promotions: u64,
    pub bypassed: u64,
    pub evictions: u64,
    pub dirty_evictions: u64,
    pub dirty_lines: u64,
    pub flushed_lines: u64,
    pub metadata_writes: u64,
}

/// What a system's RAID sets and caches counted (`System::counters`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SystemCounters {
    /// The RAID set at the root (behind a link or not); None when the root is not one.
    pub root_raid: Option<RaidCounters>,
    /// Every cache tier, depth first.
    pub caches: Vec<CacheCounters>,
}

/// `value` (a serialized node) with `extra` fields appended: the children's trees.
pub(crate) fn with_fields(
    node: &impl Serialize,
    extra: impl IntoIterator<Item = (&'static str, serde_json::Value)>,
) -> serde_json::Value {
    let mut v = serde_json::to_value(node).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        for (k, x) in extra {
            o.insert(k.to_string(), x);
        }
    }
    v
}
