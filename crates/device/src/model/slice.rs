//! Cutting a drive too large to map in memory into a proportional slice: fewer blocks per
//! plane and, where needed, fewer dies, with the spare area steady writing sees kept.

use super::*;

/// What the FTL's spare-area rule needs to know besides block counts.
#[derive(Debug, Clone, Copy)]
pub(super) struct FtlSpares {
    pub(super) ius_per_block: u64,
    pub(super) ius_per_page: u64,
    pub(super) plp: bool,
    /// Native streams beyond the FTL's four (FDP's handles), an open block per unit each.
    pub(super) extra_streams: u64,
}

impl FtlSpares {
    /// The most user IUs the FTL accepts (its "too little spare area" check): native capacity
    /// minus the held-back blocks, two pages of in-flight copies, one IU, and without PLP
    /// less than a page of padding per block.
    pub(super) fn max_user_ius(&self, native_blocks: u64, units: u64, fg: u64) -> u64 {
        let held = held_back_blocks(units, fg) + self.extra_streams * units;
        let mut overhead = 2 * self.ius_per_page + held * self.ius_per_block + 1;
        if !self.plp {
            overhead += (self.ius_per_page - 1) * native_blocks;
        }
        (native_blocks * self.ius_per_block).saturating_sub(overhead)
    }
}

/// The simulated slice of a drive.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slice {
    pub(super) geometry: NandGeometry,
    pub(super) static_blocks: u64,
    pub(super) bad_blocks: u64,
    pub(super) user_ius: u64,
    pub(super) fg_blocks: u32,
    pub(super) bg_blocks: u32,
}

impl Slice {
    /// The most user IUs the slice's native blocks hold by the FTL's spare-area rule.
    pub(super) fn max_user_ius(&self, spares: &FtlSpares) -> u64 {
        spares.max_user_ius(
            self.geometry.blocks() - self.static_blocks - self.bad_blocks,
            self.geometry.planes() as u64,
            u64::from(self.fg_blocks),
        )
    }
}

/// How slices of one drive are cut.
pub(super) struct SlicePlan {
    pub(super) full: NandGeometry,
    pub(super) full_static_blocks: u64,
    /// Share of native blocks set aside for bad blocks (`nand.bad_block_reserve`).
    pub(super) bad_fraction: f64,
    pub(super) full_user_ius: u64,
    pub(super) full_held_blocks: u64,
    /// `native_slc_streams` of the drive (a slice keeps its cache, in proportion).
    pub(super) slc_streams: u64,
    /// Streams of FDP handles the drive has and the host does not write (0 without FDP, or
    /// when every handle is written): they open no block on the drive, so the slice's user
    /// capacity leaves them out of its held blocks (`full_held_blocks` and `slc_streams`
    /// count the written handles' only); whether the slice is valid still counts them, as
    /// the FTL must be able to open every handle.
    pub(super) unwritten_streams: u64,
    /// `full_held_blocks` with the unwritten handles' streams too.
    pub(super) full_held_all_blocks: u64,
    pub(super) spares: FtlSpares,
    pub(super) explicit_fg: Option<u32>,
    pub(super) explicit_bg: Option<u32>,
}

/// Blocks per plane a slice keeps before dies are cut (fewer makes GC's block granularity
/// coarse against the reserve).
const MIN_SLICE_BLOCKS_PER_PLANE: u32 = 64;

/// Blocks set aside for bad blocks among `native` blocks at a share of `fraction` (nearest
/// whole block, so a slice keeps the drive's share as closely as its block count allows).
pub fn bad_blocks_of(native: u64, fraction: f64) -> u64 {
    (native as f64 * fraction).round() as u64
}

impl SlicePlan {
    /// Good native blocks of a geometry with `blocks` blocks, `static_blocks` of them static
    /// SLC: (good, bad).
    pub(super) fn good_native(&self, blocks: u64, static_blocks: u64) -> (u64, u64) {
        let native = blocks.saturating_sub(static_blocks);
        let bad = bad_blocks_of(native, self.bad_fraction);
        (native - bad, bad)
    }

    pub(super) fn min_bpp(&self) -> u32 {
        self.full.blocks_per_plane.min(MIN_SLICE_BLOCKS_PER_PLANE)
    }

    /// The geometry simulated for a wanted fraction: blocks per plane are cut first; below
    /// `MIN_SLICE_BLOCKS_PER_PLANE`, whole channels with all their dies (the channel, the
    /// dies on it and its share of the controller go together, so each remaining channel
    /// sees the load it sees on the drive). A cut below one channel would change how many
    /// dies share a channel, so it is refused.
    pub(super) fn geometry(&self, want: f64) -> Result<NandGeometry, String> {
        let full = self.full;
        let mut g = full;
        if want >= 1.0 {
            return Ok(g);
        }
        // The epsilon keeps `b / bpp` (as printed for the smallest valid scale) on `b`.
        let bpp = full.blocks_per_plane;
        g.blocks_per_plane = ((bpp as f64 * want + 1e-9).floor() as u32).max(self.min_bpp());
        let left = want * bpp as f64 / g.blocks_per_plane as f64;
        if left < 1.0 {
            let channels = (full.channels as f64 * left + 1e-9).floor() as u32;
            if channels == 0 {
                return Err(format!(
                    "it needs fewer dies than one channel holds ({} dies); cutting dies on a \
                     channel would change how many dies share it",
                    full.dies_per_channel
                ));
            }
            g.channels = channels;
        }
        Ok(g)
    }

    /// The slice for a wanted fraction, or why the FTL would refuse it.
    ///
    /// User capacity: the slice keeps the full drive's *effective* spare, i.e. the ratio of
    /// user data to the native blocks left after the blocks the FTL holds back in steady
    /// writing, `user / (native - steady_held_blocks)`. The held-back blocks are a fixed count per unit, not a share
    /// of the blocks, so a proportional user capacity would leave a slice less room for GC
    /// than the drive and inflate its write amplification.
    pub(super) fn slice(&self, want: f64) -> Result<Slice, String> {
        let g = self.geometry(want)?;
        let full = self.full;
        let static_blocks = if g == full {
            self.full_static_blocks
        } else {
            (self.full_static_blocks as u128 * g.blocks() as u128).div_ceil(full.blocks() as u128)
                as u64
        };
        let units = g.planes() as u64;
        let fg = self.explicit_fg.map_or(2 * units, u64::from);
        let bg = self.explicit_bg.map_or(4 * units, u64::from).max(fg);
        let (native, bad_blocks) = self.good_native(g.blocks(), static_blocks);
        let (full_native, _) = self.good_native(full.blocks(), self.full_static_blocks);
        let user_with = |streams: u64, full_held: u64| {
            if g == full {
                self.full_user_ius
            } else {
                let room = native.saturating_sub(steady_held_blocks(units, fg, streams)) as u128;
                let full_room = (full_native - full_held) as u128;
                (self.full_user_ius as u128 * room / full_room) as u64
            }
        };
        // Every handle's blocks held, as the FTL checks the slice.
        let user_ius = user_with(
            self.slc_streams + self.unwritten_streams,
            self.full_held_all_blocks,
        );
        let most = self.spares.max_user_ius(native, units, fg);
        if user_ius == 0 || user_ius > most {
            return Err(format!(
                "{native} native blocks hold at most {most} user IUs beside the FTL's {} \
                 held-back blocks (GC reserve and open blocks), and the slice needs {user_ius}",
                held_back_blocks(units, fg)
            ));
        }
        if bg >= g.blocks() / 2 {
            return Err(format!(
                "the background GC threshold of {bg} blocks is half the slice's {} blocks or more",
                g.blocks()
            ));
        }
        // The written handles' blocks held, as the drive holds them; at most what the FTL
        // takes beside every handle's open blocks (a slice too small for that keeps a little
        // more spare than the drive).
        let user_ius = if self.unwritten_streams == 0 {
            user_ius
        } else {
            user_with(self.slc_streams, self.full_held_blocks).min(most)
        };
        Ok(Slice {
            geometry: g,
            static_blocks,
            bad_blocks,
            user_ius,
            fg_blocks: fg as u32,
            bg_blocks: bg as u32,
        })
    }

    /// The smallest `sim.scale` whose slice is valid and keeps every die (blocks per plane
    /// cut, never channels): what a run falls back to when a die cut would change a job's
    /// figures.
    pub(super) fn smallest_all_dies_scale(&self) -> Option<f64> {
        let bpp = self.full.blocks_per_plane;
        (self.min_bpp()..=bpp)
            .map(|b| b as f64 / bpp as f64)
            .map(|w| ((w * 1e4).ceil() / 1e4).min(1.0))
            .find(|&w| {
                self.geometry(w)
                    .is_ok_and(|g| g.channels == self.full.channels)
                    && self.slice(w).is_ok()
            })
    }

    /// The smallest `sim.scale` whose slice is valid. Geometries are discrete: each is first
    /// reached at `channels / full channels × min bpp / bpp` (die cuts) or `bpp / full bpp`.
    pub(super) fn smallest_valid_scale(&self) -> Option<f64> {
        let (bpp, ch) = (self.full.blocks_per_plane, self.full.channels);
        let min_bpp = self.min_bpp();
        let cuts = (1..ch).map(|c| min_bpp as f64 / bpp as f64 * c as f64 / ch as f64);
        let capacity = (min_bpp..=bpp).map(|b| b as f64 / bpp as f64);
        cuts.chain(capacity)
            // Printed with 4 decimals: round up so the printed value is itself valid.
            .map(|w| ((w * 1e4).ceil() / 1e4).min(1.0))
            .find(|&w| self.slice(w).is_ok())
    }
}
