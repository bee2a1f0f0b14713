//! What a slice cannot keep of a job file's answers, said before the run (docs/scale.md,
//! "What a slice changes"). Each caution names what the slice changes, by how much where it
//! was measured, and the setting that avoids it.

use flashlab_workload::{JobFile, JobSpec};

use crate::scale::{phases_keeping_time, TimedPhases};

/// Blocks per plane from which greedy GC's choice among a unit's blocks is the drive's
/// within about 1% (docs/scale.md, "Blocks per plane": 4.031 / 4.091 / 4.105 write
/// amplification at 128 / 396 / 1,024 blocks per plane against 3.980 at 64). Random
/// writes right after a fill keep the drive's figure from about there too (the PM981a's
/// `client-full.fio`: -3.9% at 350 blocks per plane, +35% at 224, +33% at 112).
pub const FAITHFUL_BLOCKS_PER_PLANE: u32 = 256;

/// The slice a run uses, as far as the cautions need it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SliceShape {
    /// Full user capacity / simulated user capacity.
    pub capacity_factor: f64,
    /// Full dies / simulated dies.
    pub die_factor: f64,
    /// Blocks per plane of the slice and of the drive.
    pub blocks_per_plane: (u32, u32),
    /// Channels of the slice and of the drive.
    pub channels: (u32, u32),
    /// The smallest `sim.scale` that keeps every die, if any.
    pub all_dies_scale: Option<f64>,
    /// The drive has an SLC cache, whose writes leave folds behind them.
    pub slc_cache: bool,
}

/// The cautions for running `file` on `shape` (none on the whole drive), one sentence each.
pub fn slice_cautions(file: &JobFile, shape: &SliceShape) -> Vec<String> {
    if shape.capacity_factor <= 1.0 && shape.die_factor <= 1.0 {
        return Vec::new();
    }
    let random_writer = file.jobs.iter().find(|j| writes_at_random(j));
    let mut out = Vec::new();
    if let Some(job) = random_writer {
        if shape.die_factor > 1.0 {
            out.push(die_cut_caution(job, shape));
        }
        if let Some(c) = blocks_per_plane_caution(job, shape) {
            out.push(c);
        }
    }
    if let Some(c) = kept_reads_caution(file, shape) {
        out.push(c);
    }
    if let Some(c) = cached_writes_caution(file, shape) {
        out.push(c);
    }
    out
}

fn writes_at_random(job: &JobSpec) -> bool {
    job.io.rw.is_random() && job.io.rw.directions()[1]
}

/// A die cut the drive's owner allowed (`sim.die_cut = "allow"`): GC on fewer dies.
fn die_cut_caution(job: &JobSpec, shape: &SliceShape) -> String {
    let (slice, full) = shape.channels;
    let avoid = shape.all_dies_scale.map_or_else(
        || "no slice keeps every die".to_string(),
        |s| format!("sim.scale={s} keeps every die"),
    );
    format!(
        "job '{}' writes at random on {slice} of the drive's {full} channels: its garbage \
         collection runs on fewer dies (measured 5-12% below the slice with every die on 8 \
         of the D5-P5430's 128 dies, docs/scale.md); {avoid}",
        job.id.name
    )
}

/// Fewer blocks per plane than [`FAITHFUL_BLOCKS_PER_PLANE`]: greedy GC finds emptier
/// victims among fewer blocks, and the GC the pacing queue may put off (the foreground
/// reserve, whole blocks per unit) is a larger share of the slice.
fn blocks_per_plane_caution(job: &JobSpec, shape: &SliceShape) -> Option<String> {
    let what = blocks_per_plane_note(shape)?;
    Some(format!("job '{}' writes at random on {what}", job.id.name))
}

/// What a slice of fewer than [`FAITHFUL_BLOCKS_PER_PLANE`] blocks per plane (and fewer
/// than the drive's) does to random writes, and the `sim.scale` that avoids it, as the end
/// of a sentence whose subject writes at random on the slice; `None` for a slice that keeps
/// them. A suite, whose steps mostly write at random, says it once per drive.
pub fn blocks_per_plane_note(shape: &SliceShape) -> Option<String> {
    let (slice, full) = shape.blocks_per_plane;
    if slice >= full.min(FAITHFUL_BLOCKS_PER_PLANE) {
        return None;
    }
    let keep = (f64::from(FAITHFUL_BLOCKS_PER_PLANE) / f64::from(full.max(1))).min(1.0);
    let avoid = if keep >= 1.0 {
        "sim.scale=1 (the whole drive)".to_string()
    } else {
        format!(
            "sim.scale={:.4} ({FAITHFUL_BLOCKS_PER_PLANE} blocks per plane)",
            (keep * 1e4).ceil() / 1e4
        )
    };
    Some(format!(
        "{slice} of the drive's {full} blocks per plane: its GC works on fewer whole blocks \
         per unit, so random writes run ahead of the drive's, about 3-8% in steady state \
         (docs/scale.md, \"Blocks per plane\") and up to 35% in the transient right after a \
         fill, where the GC work the slice may put off is a fixed number of blocks per unit \
         (\"Deferred GC\"); {avoid} keeps them within a few percent, if it fits \
         sim.max_memory"
    ))
}

/// A phase of time-based reads keeps the drive's time after a phase the slice compressed:
/// the background work the writes left is `1/f` of the drive's, so the reads meet less of
/// it. Writes leave such work behind where they go through an SLC cache (its folds) or
/// write at random (GC's debt); sequential writes straight to the native blocks leave none.
fn kept_reads_caution(file: &JobFile, shape: &SliceShape) -> Option<String> {
    if shape.capacity_factor <= 1.0 {
        return None;
    }
    let kept = phases_keeping_time(&file.jobs, TimedPhases::Compress);
    let after_writes = (1..file.jobs.len()).find(|&i| {
        let before = &file.jobs[i - 1];
        kept[i]
            && !kept[i - 1]
            && file.jobs[i].control.stonewall
            && before.io.rw.directions()[1]
            && (shape.slc_cache || before.io.rw.is_random())
    })?;
    Some(format!(
        "job '{}' reads for its full time right after writes the slice compressed: the \
         background work those writes left (SLC folds, GC) is 1/{:.2} of the drive's, so \
         the reads meet less of it at their start (+8% on a 200 ms sequential read after a \
         fill, within 2% at 1 s; docs/scale.md); a longer runtime, a startdelay or \
         sim.scale=1 avoids it",
        file.jobs[after_writes].id.name, shape.capacity_factor
    ))
}

/// Sequential writes for a time on a drive with an SLC cache go past the cache on a full
/// drive, where the host's pages are written in SLC and folded: on a slice the answer moves
/// by a few per cent, not monotonically in the slice, as it does with the blocks per plane
/// of a drive built smaller. Written for the first such job.
fn cached_writes_caution(file: &JobFile, shape: &SliceShape) -> Option<String> {
    if shape.capacity_factor <= 1.0 || !shape.slc_cache {
        return None;
    }
    let job = file.jobs.iter().find(|j| {
        let rw = j.io.rw;
        !rw.is_random() && rw.directions()[1] && !rw.directions()[0] && j.time.time_based
    })?;
    Some(format!(
        "job '{}' writes sequentially for a time on a drive with an SLC cache: past the \
         cache, where the drive writes each page in SLC and folds it, a slice moves the \
         answer (the PM981a's 128 KiB overwrite of its full drive wrote 2%, 7% and 3% less \
         on slices of 0.5, 0.32 and 0.16 over 60 s, and 13% less as a drive of the 0.32 \
         slice's 224 blocks per plane: the fold follows the blocks per plane; \
         docs/scale.md); sim.scale=1 avoids it",
        job.id.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    fn file(text: &str) -> JobFile {
        flashlab_workload::parse_str(text, "t.fio", &|_| None).expect("job file")
    }

    const SHAPE: SliceShape = SliceShape {
        capacity_factor: 6.47,
        die_factor: 1.0,
        blocks_per_plane: (112, 700),
        channels: (8, 8),
        all_dies_scale: Some(0.16),
        slc_cache: true,
    };

    #[test]
    fn the_whole_drive_has_no_cautions() {
        let f = file("[w]\nrw=randwrite\n");
        let whole = SliceShape {
            capacity_factor: 1.0,
            blocks_per_plane: (700, 700),
            ..SHAPE
        };
        assert!(slice_cautions(&f, &whole).is_empty());
    }

    #[test]
    fn random_writes_on_few_blocks_per_plane_name_the_slice_that_keeps_them() {
        let f = file("[w]\nrw=randwrite\n");
        let c = slice_cautions(&f, &SHAPE);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(
            c[0].contains("112 of the drive's 700 blocks per plane"),
            "{}",
            c[0]
        );
        assert!(c[0].contains("sim.scale=0.3658"), "{}", c[0]);
        // Sequential writes keep it.
        assert!(slice_cautions(&file("[w]\nrw=write\n"), &SHAPE).is_empty());
    }

    #[test]
    fn a_die_cut_names_the_channels_and_the_slice_with_every_die() {
        let f = file("[w]\nrw=randwrite\n");
        let cut = SliceShape {
            die_factor: 2.0,
            blocks_per_plane: (700, 700),
            channels: (4, 8),
            ..SHAPE
        };
        let c = slice_cautions(&f, &cut);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].contains("4 of the drive's 8 channels"), "{}", c[0]);
        assert!(c[0].contains("sim.scale=0.16 keeps every die"), "{}", c[0]);
    }

    #[test]
    fn reads_that_keep_their_time_after_compressed_writes_are_named() {
        let text =
            "[fill]\nrw=write\nsize=100%\n[r]\nstonewall\nrw=read\ntime_based=1\nruntime=1s\n";
        let c = slice_cautions(&file(text), &SHAPE);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].starts_with("job 'r' reads"), "{}", c[0]);
        // Reads bounded by size are compressed with the writes: nothing to say.
        let sized = "[fill]\nrw=write\nsize=100%\n[r]\nstonewall\nrw=read\nsize=100%\n";
        assert!(slice_cautions(&file(sized), &SHAPE).is_empty());
        // A sequential fill without an SLC cache leaves no background work.
        let no_cache = SliceShape {
            slc_cache: false,
            ..SHAPE
        };
        assert!(slice_cautions(&file(text), &no_cache).is_empty());
    }

    #[test]
    fn sequential_writes_for_a_time_past_an_slc_cache_are_named() {
        let text =
            "[fill]\nrw=write\nsize=100%\n[w]\nstonewall\nrw=write\ntime_based=1\nruntime=10s\n";
        let c = slice_cautions(&file(text), &SHAPE);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].starts_with("job 'w' writes sequentially"), "{}", c[0]);
        assert!(c[0].contains("sim.scale=1 avoids it"), "{}", c[0]);
        // Without a cache, on the whole drive, or bounded by size: nothing to say.
        let no_cache = SliceShape {
            slc_cache: false,
            ..SHAPE
        };
        assert!(slice_cautions(&file(text), &no_cache).is_empty());
        let whole = SliceShape {
            capacity_factor: 1.0,
            blocks_per_plane: (700, 700),
            ..SHAPE
        };
        assert!(slice_cautions(&file(text), &whole).is_empty());
        assert!(slice_cautions(&file("[w]\nrw=write\nsize=100%\n"), &SHAPE).is_empty());
    }
}
