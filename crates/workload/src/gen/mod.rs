//! The I/O generator: turns one clone of a [`JobSpec`] into the sequence of I/Os it issues
//! (direction, offset, length). Timing (iodepth, rate, think time) belongs to the runner.
//!
//! fio's semantics, summarised:
//! - the region is `offset + clone_index × offset_increment` for `size` bytes (default: to
//!   the end of the device); percentages are of the device;
//! - sequential patterns advance one cursor per direction and wrap at the end of the region;
//!   `write:4k` skips 4k after every I/O;
//! - uniform random I/O visits every block of the region once per pass (fio's random map)
//!   unless `norandommap`; skewed distributions draw independently;
//! - the budget is `io_size` (default `size`; a percentage is of the region) × `loops` bytes
//!   of the job's main directions (reads and writes, or trims for trim-only jobs), capped by
//!   `number_ios`; `time_based` ignores the byte budget and never ends;
//! - `zonemode=strided` (fio's `setup_strided_zone_mode`): the I/O stays in a zone of
//!   `zonerange` bytes from the region's start, sequential I/O wrapping at its end and random
//!   I/O drawn inside it (the random map restarting every `zonerange` bytes), until
//!   `zonesize` bytes are done; then the zone moves `zonerange + zoneskip` bytes on, back to
//!   the region's start once it would start past the device's end. `size` is then a byte
//!   count, not a span: the walk runs over the rest of the device, as fio's does.

mod dist;

use flashlab_engine::{IoKind, RngStream, SeedTree};

use crate::job::{BlockSize, JobSpec, RandomDistribution, RwPattern, RwSequencer, SizeSpec};
use dist::{Normal, Pareto, Permutation, Zipf, Zones};

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeneratedIo {
    pub kind: IoKind,
    pub offset_bytes: u64,
    pub len_bytes: u64,
}

/// A job that cannot run on the given device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error("job {job}: the device reports {capacity_bytes} bytes with {logical_block_bytes}-byte logical blocks; both must be above 0 and the capacity a multiple of the block")]
    BadDevice {
        job: String,
        capacity_bytes: u64,
        logical_block_bytes: u64,
    },
    #[error("job {job}: region at byte {offset_bytes} of {len_bytes} bytes runs past the end of the device ({capacity_bytes} bytes); lower offset/size/offset_increment")]
    RegionPastEnd {
        job: String,
        offset_bytes: u64,
        len_bytes: u64,
        capacity_bytes: u64,
    },
    #[error("job {job}: region at byte {offset_bytes} holds no complete {block_bytes}-byte block; raise size or lower bs")]
    RegionTooSmall {
        job: String,
        offset_bytes: u64,
        block_bytes: u64,
    },
    #[error("job {job}: {what} is {bytes} bytes, not a multiple of the device's {logical_block_bytes}-byte logical block")]
    Misaligned {
        job: String,
        what: &'static str,
        bytes: u64,
        logical_block_bytes: u64,
    },
    #[error("job {job}: {why}")]
    Zones { job: String, why: String },
    #[error(
        "job {job}: zoned_abs zones cover {zones_bytes} bytes but the region holds {region_bytes}"
    )]
    ZonesPastRegion {
        job: String,
        zones_bytes: u64,
        region_bytes: u64,
    },
}

/// Block sizes of one direction, ready to draw from.
#[derive(Debug, Clone)]
enum SizeGen {
    Fixed(u64),
    /// `min × (1 + below(count))`.
    Multiples {
        min: u64,
        count: u64,
    },
    /// (size, cumulative percent).
    Split(Vec<(u64, u32)>),
}

impl SizeGen {
    fn new(bs: &BlockSize) -> Self {
        match bs {
            BlockSize::Fixed(s) => SizeGen::Fixed(*s),
            BlockSize::Range { min, max } => SizeGen::Multiples {
                min: *min,
                count: (max / min).max(1),
            },
            BlockSize::Split(split) => {
                let mut cum = 0;
                SizeGen::Split(
                    split
                        .iter()
                        .map(|&(s, w)| {
                            cum += w;
                            (s, cum)
                        })
                        .collect(),
                )
            }
        }
    }

    fn min(&self) -> u64 {
        match self {
            SizeGen::Fixed(s) => *s,
            SizeGen::Multiples { min, .. } => *min,
            SizeGen::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(0),
        }
    }

    fn sizes(&self) -> Vec<u64> {
        match self {
            SizeGen::Fixed(s) => vec![*s],
            SizeGen::Multiples { min, count } => vec![*min, min * count],
            SizeGen::Split(v) => v.iter().map(|e| e.0).collect(),
        }
    }

    #[inline]
    fn draw(&self, rng: &mut RngStream) -> u64 {
        match self {
            SizeGen::Fixed(s) => *s,
            SizeGen::Multiples { min, count } => min * (1 + rng.below(*count)),
            SizeGen::Split(v) => {
                let total = v.last().map_or(100, |e| e.1.max(1));
                let r = rng.below(u64::from(total)) as u32;
                v.iter().find(|e| r < e.1).map_or(v[0].0, |e| e.0)
            }
        }
    }
}

/// Where random offsets come from, in units of `unit_bytes` within the region.
#[derive(Debug, Clone)]
enum OffsetGen {
    /// Uniform with fio's random map: `perm(next)` for next = 0..n, re-keyed every pass.
    Map {
        perm: Permutation,
        next: u64,
    },
    Uniform,
    /// A skewed rank, scattered over the region by a fixed bijection.
    Zipf(Zipf, Permutation),
    Pareto(Pareto, Permutation),
    Normal(Normal),
    Zoned(Zones),
}

/// fio's `zonemode=strided` walk: where the job's zone is and what it has done there.
#[derive(Debug, Clone, Copy)]
struct Strided {
    /// `zonesize`: bytes done in a zone before the next.
    size: u64,
    /// `zonerange`: the zone's length, the span the offsets are drawn in.
    range: u64,
    /// `zoneskip`: bytes between one zone's end and the next one's start.
    skip: u64,
    /// The zone's start, relative to the region's start.
    base: u64,
    /// Bytes from the region's start to the device's end: a zone starting there wraps.
    span_end: u64,
    /// Bytes done in the zone (fio's `zone_bytes`).
    done: u64,
    time_based: bool,
}

/// The I/O stream of one clone of a job.
#[derive(Debug, Clone)]
pub struct IoGenerator {
    pattern: RwPattern,
    /// Decided once from `pattern`: the direction of every I/O when it has one (None for
    /// read/write mixes), random offsets, and trimwrite pairs.
    fixed_kind: Option<IoKind>,
    random: bool,
    pair: bool,
    region_start: u64,
    region_len: u64,
    /// Where offsets are drawn: the region, or with `zonemode=strided` the zone's range.
    span: u64,
    strided: Option<Strided>,
    logical_block_bytes: u64,
    sizes: [SizeGen; 3],
    align: [u64; 3],
    rwmixread: u64,
    /// `percentage_random` per direction (100: every I/O of a random job at a random offset).
    random_percent: [u64; 3],
    /// Sequential position per direction, relative to the region start (in a random job with
    /// `percentage_random`, just past the direction's last I/O).
    cursor: [u64; 3],
    skip_bytes: u64,
    unit_bytes: u64,
    units: u64,
    offsets: OffsetGen,
    seq_count: u32,
    sequencer: RwSequencer,
    /// I/Os left that follow the last random draw, and where the next one goes.
    run_left: u32,
    run_offset: u64,
    /// The write half of a trimwrite pair.
    pending_write: Option<(u64, u64)>,
    /// Decided once: every I/O is one direction's fixed-size block at a unit-aligned draw
    /// of the random map (`rw=randread` or `randwrite` with one `bs`), so `next_io` skips the
    /// choices that cannot change.
    plain_map: Option<PlainMap>,
    count_trims: bool,
    budget_bytes: Option<u64>,
    /// Bytes of one loop (`io_size`, or the region), rounded down to whole logical blocks.
    loop_bytes: u64,
    issued_bytes: u64,
    max_ios: Option<u64>,
    issued_ios: u64,
    rng_ddir: RngStream,
    rng_bs: RngStream,
    rng_offset: RngStream,
    rng_map: RngStream,
    /// Draws whether an I/O of a random job is random (`percentage_random` below 100 only).
    rng_random: RngStream,
}

/// The one direction and block size of a job on the plain path (see `plain_map`).
#[derive(Debug, Clone, Copy)]
struct PlainMap {
    kind: IoKind,
    len_bytes: u64,
}

fn resolve(spec: SizeSpec, capacity: u64, lba: u64) -> u64 {
    match spec {
        SizeSpec::Bytes(b) => b,
        SizeSpec::Fraction(f) => ((f.clamp(0.0, 1.0) * capacity as f64) as u64) / lba * lba,
    }
}

/// The alignment of each direction's offsets (`blockalign`, by default its smallest block),
/// once every block size and alignment the job uses is checked against the device's block.
fn block_alignment(
    job: &JobSpec,
    dirs: [bool; 3],
    sizes: &[SizeGen; 3],
    lba: u64,
) -> Result<[u64; 3], JobError> {
    const WHAT_BS: [&str; 3] = ["bs for reads", "bs for writes", "bs for trims"];
    const WHAT_ALIGN: [&str; 3] = [
        "blockalign for reads",
        "blockalign for writes",
        "blockalign for trims",
    ];
    let misaligned = |what, bytes| JobError::Misaligned {
        job: job.id.name.clone(),
        what,
        bytes,
        logical_block_bytes: lba,
    };
    let mut align = [lba; 3];
    for d in 0..3 {
        if !dirs[d] {
            continue;
        }
        if let Some(&bad) = sizes[d].sizes().iter().find(|&&s| s == 0 || s % lba != 0) {
            return Err(misaligned(WHAT_BS[d], bad));
        }
        align[d] = job.block.block_align_bytes[d].unwrap_or(sizes[d].min());
        if align[d] % lba != 0 {
            return Err(misaligned(WHAT_ALIGN[d], align[d]));
        }
    }
    Ok(align)
}

/// The region clone `clone_index` works on, (offset_bytes, len_bytes): `offset`,
/// `offset_increment` and `size` resolved against the device, checked to fit it and to hold
/// one block.
fn job_region(
    job: &JobSpec,
    clone_index: u32,
    capacity: u64,
    lba: u64,
    dirs: [bool; 3],
    sizes: &[SizeGen; 3],
    align: &[u64; 3],
) -> Result<(u64, u64), JobError> {
    let misaligned = |what, bytes| JobError::Misaligned {
        job: job.id.name.clone(),
        what,
        bytes,
        logical_block_bytes: lba,
    };
    // fio aligns an offset given as a percentage to the minimum block size (its
    // `offset_align` default), so `offset=25%` never splits the job's blocks; a given
    // `offset_align` aligns it up instead.
    let pct_align = (0..3)
        .filter(|&d| dirs[d])
        .map(|d| align[d])
        .min()
        .unwrap_or(lba);
    let resolve_offset = |spec: SizeSpec| match spec {
        SizeSpec::Fraction(_) if job.target.offset_align_bytes > 0 => {
            // Past the end when it cannot be aligned: refused below with the region.
            resolve(spec, capacity, lba)
                .checked_next_multiple_of(job.target.offset_align_bytes)
                .unwrap_or(u64::MAX)
        }
        SizeSpec::Fraction(_) => resolve(spec, capacity, lba) / pct_align * pct_align,
        SizeSpec::Bytes(_) => resolve(spec, capacity, lba),
    };
    let offset = resolve_offset(job.target.offset).saturating_add(
        u64::from(clone_index).saturating_mul(resolve_offset(job.target.offset_increment)),
    );
    if offset % lba != 0 {
        return Err(misaligned("the region offset", offset));
    }
    let len = match job.target.size {
        Some(s) if !job.target.fill_device => resolve(s, capacity, lba),
        _ => capacity.saturating_sub(offset),
    };
    if offset >= capacity || offset.saturating_add(len) > capacity {
        return Err(JobError::RegionPastEnd {
            job: job.id.name.clone(),
            offset_bytes: offset,
            len_bytes: len,
            capacity_bytes: capacity,
        });
    }
    let region_len = len / lba * lba;
    let active = || (0..3).filter(|&d| dirs[d]);
    let min_bs = active().map(|d| sizes[d].min()).min().unwrap_or(lba);
    if region_len < min_bs {
        return Err(JobError::RegionTooSmall {
            job: job.id.name.clone(),
            offset_bytes: offset,
            block_bytes: min_bs,
        });
    }
    Ok((offset, region_len))
}

/// Where the job's random offsets come from (`random_distribution`, `norandommap`), over
/// `units` units of `unit_bytes` in a region of `region_len` bytes.
fn offset_gen(
    job: &JobSpec,
    units: u64,
    unit_bytes: u64,
    region_len: u64,
    rng_map: &mut RngStream,
    scramble: &mut RngStream,
) -> Result<OffsetGen, JobError> {
    Ok(match &job.io.random_distribution {
        RandomDistribution::Random if job.io.norandommap => OffsetGen::Uniform,
        RandomDistribution::Random => OffsetGen::Map {
            perm: Permutation::new(units, rng_map),
            next: 0,
        },
        RandomDistribution::Zipf(theta) => {
            OffsetGen::Zipf(Zipf::new(units, *theta), Permutation::new(units, scramble))
        }
        RandomDistribution::Pareto(h) => {
            OffsetGen::Pareto(Pareto::new(units, *h), Permutation::new(units, scramble))
        }
        RandomDistribution::Normal(sigma) => OffsetGen::Normal(Normal::new(units, *sigma)),
        RandomDistribution::Zoned(zones) => {
            let mut start_pct = 0.0;
            let table: Vec<(f64, u64, u64)> = zones
                .iter()
                .map(|&(access, range)| {
                    let first = (start_pct / 100.0 * units as f64) as u64;
                    start_pct += range;
                    let end = ((start_pct / 100.0 * units as f64) as u64).min(units);
                    // A zone too small for one unit still gets one, so its share of
                    // accesses is not silently moved elsewhere.
                    let first = first.min(units - 1);
                    (access, first, end.saturating_sub(first).max(1))
                })
                .collect();
            OffsetGen::Zoned(Zones::new(&table))
        }
        RandomDistribution::ZonedAbs(zones) => {
            let total: u64 = zones.iter().map(|z| z.1).sum();
            if total > region_len {
                return Err(JobError::ZonesPastRegion {
                    job: job.id.name.clone(),
                    zones_bytes: total,
                    region_bytes: region_len,
                });
            }
            let mut first = 0;
            let table: Vec<(f64, u64, u64)> = zones
                .iter()
                .map(|&(access, bytes)| {
                    let n = (bytes / unit_bytes).max(1);
                    let z = (access, first.min(units - 1), n);
                    first += n;
                    z
                })
                .collect();
            OffsetGen::Zoned(Zones::new(&table))
        }
    })
}

/// The plain path (see `PlainMap`): a random job of one direction and one block size on
/// fio's random map, whose every I/O is the map's next unit.
fn plain_map(
    job: &JobSpec,
    fixed_kind: Option<IoKind>,
    offsets: &OffsetGen,
    pair: bool,
    sizes: &[SizeGen; 3],
    align: &[u64; 3],
    unit_bytes: u64,
) -> Option<PlainMap> {
    let all_random = job.io.percentage_random.iter().all(|&p| p >= 100);
    match (fixed_kind, &offsets, pair, job.io.rw_sequence_count) {
        (Some(kind), OffsetGen::Map { .. }, false, 0 | 1)
            if job.io.rw.is_random() && all_random =>
        {
            let d = kind.ddir();
            match sizes[d] {
                SizeGen::Fixed(len_bytes) if align[d] == unit_bytes => {
                    Some(PlainMap { kind, len_bytes })
                }
                _ => None,
            }
        }
        _ => None,
    }
}

impl IoGenerator {
    /// The generator of clone `clone_index` (0-based) of `job`. Random streams derive from
    /// `seeds` (or from `randseed=` when the job sets it) and differ between clones.
    pub fn new(
        job: &JobSpec,
        clone_index: u32,
        device_capacity_bytes: u64,
        logical_block_bytes: u64,
        seeds: SeedTree,
    ) -> Result<IoGenerator, JobError> {
        let name = || job.id.name.clone();
        let (capacity, lba) = (device_capacity_bytes, logical_block_bytes);
        if capacity == 0 || lba == 0 || capacity % lba != 0 {
            return Err(JobError::BadDevice {
                job: name(),
                capacity_bytes: capacity,
                logical_block_bytes: lba,
            });
        }
        let dirs = job.io.rw.directions();
        let sizes = [
            SizeGen::new(&job.block.bs[0]),
            SizeGen::new(&job.block.bs[1]),
            SizeGen::new(&job.block.bs[2]),
        ];
        let align = block_alignment(job, dirs, &sizes, lba)?;

        let (offset, region_len) =
            job_region(job, clone_index, capacity, lba, dirs, &sizes, &align)?;
        let active = || (0..3).filter(|&d| dirs[d]);
        let unit_bytes = active().map(|d| align[d]).min().unwrap_or(lba);
        let strided = strided_walk(job, offset, capacity, lba, dirs, &sizes)?;
        let span = strided.map_or(region_len, |s| s.range);
        let units = (span / unit_bytes).max(1);

        let base = match job.io.randseed {
            Some(s) => SeedTree::new(s),
            None => seeds,
        }
        .index(u64::from(clone_index));
        let mut rng_map = base.child("map").stream();
        let mut scramble = base.child("scramble").stream();
        let offsets = offset_gen(job, units, unit_bytes, span, &mut rng_map, &mut scramble)?;

        let count_trims = !dirs[0] && !dirs[1];
        // fio takes an `io_size` percentage of the job's region (`size`), not of the device.
        let per_loop = match job.target.io_size {
            Some(SizeSpec::Bytes(b)) => b,
            Some(SizeSpec::Fraction(f)) => (f.clamp(0.0, 1.0) * region_len as f64) as u64,
            None => region_len,
        };
        let budget = per_loop.saturating_mul(u64::from(job.control.loops.max(1))) / lba * lba;
        let fixed_kind = match job.io.rw {
            RwPattern::Read | RwPattern::RandRead => Some(IoKind::Read),
            RwPattern::Write | RwPattern::RandWrite => Some(IoKind::Write),
            RwPattern::Trim
            | RwPattern::RandTrim
            | RwPattern::TrimWrite
            | RwPattern::RandTrimWrite => Some(IoKind::Trim),
            RwPattern::ReadWrite | RwPattern::RandRw => None,
        };
        let pair = matches!(job.io.rw, RwPattern::TrimWrite | RwPattern::RandTrimWrite);
        // The strided walk restarts the random map at each zone: the general path.
        let plain_map = plain_map(job, fixed_kind, &offsets, pair, &sizes, &align, unit_bytes)
            .filter(|_| strided.is_none());
        Ok(IoGenerator {
            pattern: job.io.rw,
            fixed_kind,
            random: job.io.rw.is_random(),
            pair,
            region_start: offset,
            region_len,
            span,
            strided,
            logical_block_bytes: lba,
            sizes,
            align,
            rwmixread: u64::from(job.io.rwmixread.min(100)),
            random_percent: job.io.percentage_random.map(|p| u64::from(p.min(100))),
            cursor: [0; 3],
            skip_bytes: job.io.rw_seq_skip_bytes / lba * lba,
            unit_bytes,
            units,
            offsets,
            seq_count: job.io.rw_sequence_count.max(1),
            sequencer: job.io.rw_sequencer,
            run_left: 0,
            run_offset: 0,
            pending_write: None,
            plain_map,
            count_trims,
            budget_bytes: (!job.time.time_based).then_some(budget.max(lba)),
            loop_bytes: (per_loop / lba * lba).max(lba),
            issued_bytes: 0,
            max_ios: job.target.number_ios,
            issued_ios: 0,
            rng_ddir: base.child("ddir").stream(),
            rng_bs: base.child("bs").stream(),
            rng_offset: base.child("offset").stream(),
            rng_map,
            rng_random: base.child("random").stream(),
        })
    }

    /// The region this clone works on: (offset_bytes, len_bytes).
    pub fn region(&self) -> (u64, u64) {
        (self.region_start, self.region_len)
    }

    /// fio's `setup_zbd_zone_mode` for a `zonemode=zbd` job with `zoneskip`: a sequential job
    /// does one zone of `zone_bytes` (its bytes done, or its position at the zone's end) and
    /// then moves `zone_bytes + skip_bytes` on, wrapping to its start past the device's end,
    /// as the strided walk does with the zone as both size and range. A random job ignores
    /// `zoneskip`, as fio. The region must start at a zone's start (the caller checks), on a
    /// device of `capacity_bytes`.
    pub fn zbd_zone_skip(
        &mut self,
        zone_bytes: u64,
        skip_bytes: u64,
        capacity_bytes: u64,
        time_based: bool,
    ) {
        if self.random || skip_bytes == 0 || zone_bytes == 0 {
            return;
        }
        let span_end = capacity_bytes.saturating_sub(self.region_start);
        self.strided = Some(Strided {
            size: zone_bytes,
            range: zone_bytes,
            skip: skip_bytes,
            base: 0,
            span_end,
            done: 0,
            time_based,
        });
        self.span = zone_bytes.min(span_end);
        self.plain_map = None;
    }

    /// Bytes one loop transfers (`io_size`, or the region), in whole logical blocks.
    pub fn loop_bytes(&self) -> u64 {
        self.loop_bytes
    }

    /// Bytes this clone will transfer in total if not time_based (for progress), else None.
    /// With `number_ios` and a single block size the cap is exact; with mixed sizes it is
    /// the byte budget, an upper bound.
    pub fn total_bytes(&self) -> Option<u64> {
        let budget = self.budget_bytes?;
        let fixed = self.counted_fixed_size();
        Some(match (self.max_ios, fixed) {
            (Some(n), Some(bs)) => budget.min(n.saturating_mul(bs)),
            _ => budget,
        })
    }

    fn counted_fixed_size(&self) -> Option<u64> {
        let dirs = self.pattern.directions();
        let mut size = None;
        for (d, sizes) in self.sizes.iter().enumerate() {
            if dirs[d] && (d == 2) == self.count_trims {
                match (sizes, size) {
                    (SizeGen::Fixed(s), None) => size = Some(*s),
                    (SizeGen::Fixed(s), Some(prev)) if *s == prev => {}
                    _ => return None,
                }
            }
        }
        size
    }

    /// Next I/O; None when the I/O budget is spent (size × loops, or io_size, or number_ios),
    /// unless time_based, where it wraps and never ends.
    pub fn next_io(&mut self) -> Option<GeneratedIo> {
        self.next_io_choosing(|kind| kind)
    }

    /// Whether the job mixes reads and writes (`rw=rw`, `randrw`), so that the direction of
    /// its next I/O may be chosen ([`Self::next_io_choosing`]).
    pub fn mixes_directions(&self) -> bool {
        self.fixed_kind.is_none()
    }

    /// The share of the mix, percent, that goes to `kind` (a read or a write).
    pub fn mix_percent(&self, kind: IoKind) -> u64 {
        match (self.fixed_kind, kind) {
            (Some(k), _) => 100 * u64::from(k == kind),
            (None, IoKind::Read) => self.rwmixread,
            (None, IoKind::Write) => 100 - self.rwmixread,
            (None, _) => 0,
        }
    }

    /// [`Self::next_io`], with the direction the mix draws passed through `choose` before
    /// the I/O's size and offset are drawn for it (fio's `rate_ddir`: a rate-limited mixed
    /// job issues the other direction while the drawn one is ahead of its rate). Jobs that
    /// do not mix reads and writes never call `choose`.
    pub fn next_io_choosing(
        &mut self,
        choose: impl FnOnce(IoKind) -> IoKind,
    ) -> Option<GeneratedIo> {
        if let Some(plain) = self.plain_map {
            return self.next_plain(plain);
        }
        if let Some((offset, len)) = self.pending_write.take() {
            if let Some(s) = &mut self.strided {
                s.done += len;
            }
            return Some(self.count(IoKind::Write, offset, len));
        }
        if self.max_ios.is_some_and(|n| self.issued_ios >= n)
            || self.budget_bytes.is_some_and(|b| self.issued_bytes >= b)
        {
            return None;
        }
        let kind = match self.fixed_kind {
            Some(kind) => kind,
            None => choose(if self.rng_ddir.below(100) < self.rwmixread {
                IoKind::Read
            } else {
                IoKind::Write
            }),
        };
        let pair = self.pair;
        // A trimwrite pair trims and then writes the same write-sized block.
        let ddir = if pair { 1 } else { kind.ddir() };
        if self.strided.is_some() {
            self.strided_step(ddir);
        }
        let mut len = self.sizes[ddir].draw(&mut self.rng_bs);
        if let Some(b) = self.budget_bytes {
            let left = b - self.issued_bytes;
            if len > left {
                len = left.div_ceil(self.logical_block_bytes) * self.logical_block_bytes;
            }
        }
        len = len.min(self.span);
        let rel = if !self.random {
            self.seq_offset(ddir, len)
        } else if self.random_percent[ddir] >= 100 {
            self.random_offset(ddir, len)
        } else if self.rng_random.below(100) < self.random_percent[ddir] {
            // fio's percentage_random: a sequential I/O follows the direction's last one,
            // random or not.
            let at = self.random_offset(ddir, len);
            self.cursor[ddir] = at + len;
            at
        } else {
            self.seq_offset(ddir, len)
        };
        let mut offset = self.region_start + rel;
        if let Some(s) = &mut self.strided {
            offset += s.base;
            if offset - self.region_start + len > s.span_end {
                // Past the device's end: fio is done with the file (time_based starts over).
                if !s.time_based {
                    return None;
                }
                s.base = 0;
                s.done = 0;
                self.cursor = [0; 3];
                offset = self.region_start + rel.min(s.span_end.saturating_sub(len));
            }
            s.done += len;
        }
        if pair {
            self.pending_write = Some((offset, len));
            return Some(GeneratedIo {
                kind: IoKind::Trim,
                offset_bytes: offset,
                len_bytes: len,
            });
        }
        Some(self.count(kind, offset, len))
    }

    /// `next_io` for a job on the plain path: the same steps with the choices decided at
    /// construction left out (a fixed size draws nothing from `rng_bs`, so the streams stay
    /// the same).
    #[inline]
    fn next_plain(&mut self, plain: PlainMap) -> Option<GeneratedIo> {
        if self.max_ios.is_some_and(|n| self.issued_ios >= n)
            || self.budget_bytes.is_some_and(|b| self.issued_bytes >= b)
        {
            return None;
        }
        let mut len = plain.len_bytes;
        if let Some(b) = self.budget_bytes {
            let left = b - self.issued_bytes;
            if len > left {
                len = left.div_ceil(self.logical_block_bytes) * self.logical_block_bytes;
            }
        }
        len = len.min(self.region_len);
        let OffsetGen::Map { perm, next } = &mut self.offsets else {
            // Not reached: the plain path is chosen only with the random map.
            self.plain_map = None;
            return self.next_io();
        };
        if *next == self.units {
            perm.rekey(&mut self.rng_map);
            *next = 0;
        }
        let unit = perm.map(*next);
        *next += 1;
        let mut at = unit * self.unit_bytes;
        if at + len > self.region_len {
            at = (self.region_len - len) / self.unit_bytes * self.unit_bytes;
        }
        Some(self.count(plain.kind, self.region_start + at, len))
    }

    #[inline]
    fn count(&mut self, kind: IoKind, offset_bytes: u64, len_bytes: u64) -> GeneratedIo {
        if (kind == IoKind::Trim) == self.count_trims {
            self.issued_bytes += len_bytes;
            self.issued_ios += 1;
        }
        GeneratedIo {
            kind,
            offset_bytes,
            len_bytes,
        }
    }

    /// Next sequential offset for direction `d`, wrapping like fio when the block would run
    /// past the end of the region.
    fn seq_offset(&mut self, d: usize, len: u64) -> u64 {
        let mut at = self.cursor[d];
        // fio's strided zone wraps once its position reaches the range's end (an I/O may
        // cross it); otherwise a block that would run past the region's end wraps.
        let wrap = match self.strided {
            Some(s) => at >= s.range,
            None => at + len > self.region_len,
        };
        if wrap {
            at = 0;
        }
        self.cursor[d] = at + len + self.skip_bytes;
        at
    }

    fn random_offset(&mut self, d: usize, len: u64) -> u64 {
        if self.run_left > 0 {
            self.run_left -= 1;
            let mut at = self.run_offset;
            if at + len > self.span {
                at = 0;
            }
            if self.sequencer == RwSequencer::Sequential {
                self.run_offset = at + len;
            }
            return at;
        }
        let unit = match &mut self.offsets {
            OffsetGen::Map { perm, next } => {
                if *next == self.units {
                    // A pass is complete: start the next one in a new order.
                    perm.rekey(&mut self.rng_map);
                    *next = 0;
                }
                let u = perm.map(*next);
                *next += 1;
                u
            }
            OffsetGen::Uniform => self.rng_offset.below(self.units),
            OffsetGen::Zipf(z, scatter) => scatter.map(z.sample(&mut self.rng_offset)),
            OffsetGen::Pareto(p, scatter) => scatter.map(p.sample(&mut self.rng_offset)),
            OffsetGen::Normal(n) => n.sample(&mut self.rng_offset),
            OffsetGen::Zoned(z) => z.sample(&mut self.rng_offset),
        };
        let a = self.align[d];
        // The unit is the smallest alignment, so a direction aligned to it needs no rounding
        // (and no division).
        let mut at = if a == self.unit_bytes {
            unit * a
        } else {
            unit * self.unit_bytes / a * a
        };
        if at + len > self.span {
            at = (self.span - len) / a * a;
        }
        // Without rw_sequencer's count, no I/O follows the draw (`run_left` stays 0).
        if self.seq_count > 1 {
            self.run_left = self.seq_count - 1;
            self.run_offset = if self.sequencer == RwSequencer::Sequential {
                at + len
            } else {
                at
            };
        }
        at
    }
}

impl IoGenerator {
    /// fio's `setup_strided_zone_mode`, before an I/O of direction `d`: the next zone once
    /// `zonesize` bytes are done (wrapping to the region's start past the device's end), the
    /// zone's start again once the direction's position reaches the range's end, and every
    /// position and the random map back at the zone's start each `zonerange` bytes.
    fn strided_step(&mut self, d: usize) {
        let Some(s) = &mut self.strided else {
            return;
        };
        if s.done >= s.size {
            s.done = 0;
            s.base = s.base.saturating_add(s.range).saturating_add(s.skip);
            if s.base >= s.span_end {
                s.base = 0;
            }
            self.cursor[d] = 0;
        }
        if self.cursor[d] >= s.range {
            self.cursor[d] = 0;
        }
        if s.done % s.range == 0 {
            self.cursor = [0; 3];
            self.run_left = 0;
            if let OffsetGen::Map { perm, next } = &mut self.offsets {
                if *next > 0 {
                    perm.rekey(&mut self.rng_map);
                    *next = 0;
                }
            }
        }
    }
}

/// The strided walk of `job` (`zonemode=strided`) from its region's start `offset`, checked:
/// whole logical blocks, a zone that holds one block and fits the device.
fn strided_walk(
    job: &JobSpec,
    offset: u64,
    capacity: u64,
    lba: u64,
    dirs: [bool; 3],
    sizes: &[SizeGen; 3],
) -> Result<Option<Strided>, JobError> {
    let zones = |why: String| JobError::Zones {
        job: job.id.name.clone(),
        why,
    };
    let Some((size, range, skip)) = job.zoned.strided().map_err(zones)? else {
        return Ok(None);
    };
    for (what, bytes) in [("zonesize", size), ("zonerange", range), ("zoneskip", skip)] {
        if bytes % lba != 0 {
            return Err(JobError::Misaligned {
                job: job.id.name.clone(),
                what,
                bytes,
                logical_block_bytes: lba,
            });
        }
    }
    let span_end = capacity - offset;
    let min_bs = (0..3)
        .filter(|&d| dirs[d])
        .map(|d| sizes[d].min())
        .min()
        .unwrap_or(lba);
    if range < min_bs || range > span_end {
        return Err(zones(format!(
            "zonerange (or zonesize) = {range} bytes: a zone must hold one {min_bs}-byte block and fit between the job's offset ({offset}) and the device's end ({capacity} bytes)"
        )));
    }
    Ok(Some(Strided {
        size,
        range,
        skip,
        base: 0,
        span_end,
        done: 0,
        time_based: job.time.time_based,
    }))
}

#[cfg(test)]
mod tests;
