//! Blocks a drive keeps out of its user data's reach: the free-block reserve and the open
//! blocks of its write streams. The slice chosen for a scaled run and the pacing queue's size
//! count them with these rules (`held_back_blocks` mirrors the FTL's own geometry check).

/// Blocks the FTL keeps out of the user data's reach on a drive with `units` (die, plane)
/// units: the foreground GC reserve (at least `units + 2`), 2 more, and one open block per
/// unit for each of the 4 native streams (host, GC, fold, dynamic SLC). This mirrors
/// `flashlab_ftl`'s geometry check; a slice must be sized with the same rule the FTL applies.
pub fn held_back_blocks(units: u64, foreground_free_blocks: u64) -> u64 {
    foreground_free_blocks.max(units + 2) + 2 + 4 * units
}

/// Blocks' worth of space out of the data's reach in steady random writing, on average,
/// which a slice must leave the same share of room beside: the free blocks, which sit at the
/// foreground reserve plus one (reclaim runs until more than the reserve is free), and the
/// unwritten half of each native stream's open block on every unit (filled in step across
/// the units: half written on average). Host and GC streams are always open;
/// `slc_streams` more (`native_slc_streams`) are the fold stream of a drive with an SLC
/// cache and the dynamic cache's SLC stream, whose open blocks stay where the last SLC
/// writes and folds left them once free space no longer allows the cache. Counting whole
/// open blocks and 2 blocks over the reserve (as the FTL's acceptance rule must, for its
/// worst case) would hold back a block per unit too many: a slice of 64 blocks per plane
/// would have ~1.5% more effective spare than the drive, and its greedy GC would write ~8%
/// less; leaving out a dynamic cache's two streams would make a slice write ~6% more
/// (docs/scale.md, "Blocks per plane").
pub fn steady_held_blocks(units: u64, foreground_free_blocks: u64, slc_streams: u64) -> u64 {
    foreground_free_blocks.max(units + 2) + 1 + units * (2 + slc_streams) / 2
}

/// Native streams an SLC cache adds (see `steady_held_blocks`): folding into native blocks
/// with any cache, and SLC writes into native blocks with a dynamic one.
pub fn native_slc_streams(static_slc_blocks: u64, dynamic: bool) -> u64 {
    u64::from(static_slc_blocks > 0 || dynamic) + u64::from(dynamic)
}
