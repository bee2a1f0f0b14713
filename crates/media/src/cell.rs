//! Cell types and their default array timings.

use std::fmt;

/// Bits stored per cell in a block's native mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CellType {
    Slc,
    Mlc,
    Tlc,
    Qlc,
}

/// Array times of one die, per page (program and read) or per block (erase).
///
/// Program and read times are averages over the page types of a word line (lower, upper,
/// extra, top pages differ on MLC/TLC/QLC); each operation's own time departs from the
/// average by its page type and from one operation to the next, keeping the average
/// ([`crate::variation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellTimings {
    /// tR: array to page register, native mode.
    pub t_read_ns: u64,
    /// tPROG: page register to array, native mode (average per page).
    pub t_prog_ns: u64,
    /// tBERS: block erase.
    pub t_erase_ns: u64,
    /// tR of a block used in SLC mode (pSLC on a TLC/QLC die; equals `t_read_ns` on SLC).
    pub slc_t_read_ns: u64,
    /// tPROG of a block used in SLC mode.
    pub slc_t_prog_ns: u64,
}

impl CellType {
    pub const ALL: [CellType; 4] = [CellType::Slc, CellType::Mlc, CellType::Tlc, CellType::Qlc];

    pub fn bits_per_cell(self) -> u32 {
        match self {
            CellType::Slc => 1,
            CellType::Mlc => 2,
            CellType::Tlc => 3,
            CellType::Qlc => 4,
        }
    }

    /// Lower-case name as used in presets ("slc", "mlc", "tlc", "qlc").
    pub fn name(self) -> &'static str {
        match self {
            CellType::Slc => "slc",
            CellType::Mlc => "mlc",
            CellType::Tlc => "tlc",
            CellType::Qlc => "qlc",
        }
    }

    /// Case-insensitive parse of [`CellType::name`].
    pub fn parse(s: &str) -> Option<CellType> {
        CellType::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s.trim()))
    }

    /// Datasheet-class defaults; a preset overrides any of them.
    pub fn default_timings(self) -> CellTimings {
        const US: u64 = 1_000;
        match self {
            // Planar/3D SLC datasheets (e.g. Micron MT29F SLC families, ONFI class parts) list
            // tR 25 us, tPROG 200-250 us typical, tBERS 0.7-2 ms; 3D SLC (Z-NAND, XL-Flash)
            // is faster, but those are separate presets.
            CellType::Slc => CellTimings {
                t_read_ns: 25 * US,
                t_prog_ns: 200 * US,
                t_erase_ns: 1_500 * US,
                slc_t_read_ns: 25 * US,
                slc_t_prog_ns: 200 * US,
            },
            // 2D MLC datasheets of the 20-25 nm generation list tR 50 us, tPROG 1.3 ms
            // typical (average of ~0.4 ms lower and ~2.2 ms upper pages) and tBERS 3 ms.
            // pSLC: lower-page-only times (estimate).
            CellType::Mlc => CellTimings {
                t_read_ns: 50 * US,
                t_prog_ns: 1_300 * US,
                t_erase_ns: 3_000 * US,
                slc_t_read_ns: 35 * US,
                slc_t_prog_ns: 400 * US,
            },
            // 3D TLC (64-176 layers): ISSCC papers and vendor briefs quote tR 45-60 us and a
            // one-shot word-line program of ~1.5-2 ms for three pages, i.e. ~600 us per page;
            // tBERS 3.5 ms is a typical ONFI datasheet figure. pSLC program ~200 us, read ~30 us
            // (estimates from SLC-cache write speeds of TLC drives).
            CellType::Tlc => CellTimings {
                t_read_ns: 50 * US,
                t_prog_ns: 600 * US,
                t_erase_ns: 3_500 * US,
                slc_t_read_ns: 30 * US,
                slc_t_prog_ns: 200 * US,
            },
            // 3D QLC: published 96-176 layer QLC figures give tR 80-160 us and program of a
            // four-page word line in ~6-8 ms, ~1.6-2 ms per page; tBERS ~10 ms. pSLC times as
            // TLC's pSLC with a slower read (estimates).
            CellType::Qlc => CellTimings {
                t_read_ns: 120 * US,
                t_prog_ns: 1_800 * US,
                t_erase_ns: 10_000 * US,
                slc_t_read_ns: 40 * US,
                slc_t_prog_ns: 250 * US,
            },
        }
    }
}

impl fmt::Display for CellType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips_and_rejects_unknown() {
        for c in CellType::ALL {
            assert_eq!(CellType::parse(c.name()), Some(c));
            assert_eq!(CellType::parse(&c.name().to_uppercase()), Some(c));
        }
        assert_eq!(CellType::parse("plc"), None);
    }

    #[test]
    fn slc_mode_is_faster_and_qlc_slower_than_tlc() {
        // 2D MLC defaults are slower per page than 3D TLC (different generations), so only
        // same-generation pairs are ordered.
        let (tlc, qlc) = (
            CellType::Tlc.default_timings(),
            CellType::Qlc.default_timings(),
        );
        assert!(qlc.t_prog_ns > tlc.t_prog_ns && qlc.t_read_ns > tlc.t_read_ns);
        for c in CellType::ALL {
            let t = c.default_timings();
            assert!(t.slc_t_prog_ns <= t.t_prog_ns, "{c}");
            assert!(t.slc_t_read_ns <= t.t_read_ns);
        }
        assert_eq!(CellType::Qlc.bits_per_cell(), 4);
    }
}
