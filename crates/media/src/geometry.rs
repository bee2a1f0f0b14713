//! How dies, planes, blocks and pages are arranged, and how block ids map onto them.

/// The physical arrangement of a drive's NAND.
///
/// Block ids are global and laid out as `(die * planes_per_die + plane) * blocks_per_plane +
/// index` (the FTL's layout). Die `d` sits on channel `d % channels`, so consecutive dies are
/// on different channels and a stripe over dies uses every channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NandGeometry {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    /// Pages per block in native mode.
    pub pages_per_block: u32,
    pub page_bytes: u64,
    /// Data rate of one channel: transfers per second × bus width in bytes.
    pub channel_bytes_per_s: u64,
    /// Planes of a die run array operations concurrently (otherwise the die serialises them).
    pub multi_plane: bool,
    /// With `multi_plane`, each plane of a die can read on its own (independent plane
    /// reads). Off: a read occupies every plane of its die for tR, as on parts whose
    /// multi-plane read needs the same page address on each plane, which random reads
    /// rarely have. Programs follow `independent_plane_programs`; erases stay per plane.
    pub independent_plane_reads: bool,
    /// With `multi_plane`, each plane of a die can program on its own. Off: a program holds
    /// its whole die for tPROG, and programs of the die's other planes whose data is in
    /// their page registers before it starts join it as one multi-plane program (parts
    /// that program a die's planes only together).
    pub independent_plane_programs: bool,
    /// Rated program/erase cycles per block.
    pub pe_cycles: u32,
}

impl NandGeometry {
    #[inline]
    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }

    #[inline]
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }

    #[inline]
    pub fn blocks(&self) -> u64 {
        self.planes() as u64 * self.blocks_per_plane as u64
    }

    #[inline]
    pub fn block_bytes(&self) -> u64 {
        self.pages_per_block as u64 * self.page_bytes
    }

    /// Raw capacity in native mode.
    #[inline]
    pub fn raw_bytes(&self) -> u64 {
        self.blocks() * self.block_bytes()
    }

    /// `(die, plane)` holding `block`.
    #[inline]
    pub fn locate(&self, block: u32) -> (u32, u32) {
        let unit = block / self.blocks_per_plane;
        (unit / self.planes_per_die, unit % self.planes_per_die)
    }

    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die % self.channels
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn small() -> NandGeometry {
        NandGeometry {
            channels: 2,
            dies_per_channel: 2,
            planes_per_die: 2,
            blocks_per_plane: 10,
            pages_per_block: 64,
            page_bytes: 16384,
            channel_bytes_per_s: 1_000_000_000,
            multi_plane: true,
            independent_plane_reads: true,
            independent_plane_programs: true,
            pe_cycles: 3000,
        }
    }

    #[test]
    fn sizes_and_block_layout() {
        let g = small();
        assert_eq!(g.dies(), 4);
        assert_eq!(g.planes(), 8);
        assert_eq!(g.blocks(), 80);
        assert_eq!(g.raw_bytes(), 80 * 64 * 16384);
        assert_eq!(g.locate(0), (0, 0));
        assert_eq!(g.locate(9), (0, 0));
        assert_eq!(g.locate(10), (0, 1));
        assert_eq!(g.locate(25), (1, 0));
        assert_eq!(g.locate(79), (3, 1));
        assert_eq!(g.channel_of_die(0), 0);
        assert_eq!(g.channel_of_die(1), 1);
        assert_eq!(g.channel_of_die(2), 0);
    }
}
