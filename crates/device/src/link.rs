//! Host links: SATA and PCIe, their line encodings and usable bandwidth.

use std::fmt;

/// The host interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// SATA at 1.5, 3 or 6 Gb/s line rate (`gbit_x10` = 15, 30, 60), 8b/10b encoded.
    Sata { gbit_x10: u32 },
    /// PCIe generation 3, 4 or 5 with 1, 2, 4 or 8 lanes, 128b/130b encoded.
    Pcie { gen: u32, lanes: u32 },
}

pub const LINK_KINDS: &str =
    "sata-1.5g, sata-3g, sata-6g, pcie-gen{3,4,5}-x{1,2,4,8} (e.g. pcie-gen4-x4)";

impl LinkKind {
    pub fn parse(s: &str) -> Option<LinkKind> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "sata-1.5g" => return Some(LinkKind::Sata { gbit_x10: 15 }),
            "sata-3g" => return Some(LinkKind::Sata { gbit_x10: 30 }),
            "sata-6g" => return Some(LinkKind::Sata { gbit_x10: 60 }),
            _ => {}
        }
        let rest = s.strip_prefix("pcie-gen")?;
        let (gen, lanes) = rest.split_once("-x")?;
        let gen: u32 = gen.parse().ok()?;
        let lanes: u32 = lanes.parse().ok()?;
        ((3..=5).contains(&gen) && matches!(lanes, 1 | 2 | 4 | 8))
            .then_some(LinkKind::Pcie { gen, lanes })
    }

    /// Line-coded payload bandwidth before protocol overhead, bytes per second.
    pub fn raw_bytes_per_s(self) -> u64 {
        match self {
            // Line rate × 8/10 (8b/10b) / 8 bits: 6 Gb/s → 600 MB/s.
            LinkKind::Sata { gbit_x10 } => gbit_x10 as u64 * 100_000_000 * 8 / 10 / 8,
            // Per lane: 8, 16, 32 GT/s × 128/130 / 8 bits: Gen4 x4 → 7.877 GB/s.
            LinkKind::Pcie { gen, lanes } => {
                let gt_per_s: u64 = match gen {
                    3 => 8_000_000_000,
                    4 => 16_000_000_000,
                    _ => 32_000_000_000,
                };
                gt_per_s * lanes as u64 * 128 / 130 / 8
            }
        }
    }

    /// Default fraction of the raw bandwidth left for data after protocol overhead.
    pub fn default_efficiency(self) -> f64 {
        match self {
            // FIS headers, handshakes and 8 KiB data FIS limits: real SATA SSDs top out near
            // 550-560 MB/s of the 600 MB/s raw, ~0.93.
            LinkKind::Sata { .. } => 0.93,
            // TLP (~24 bytes header, sequence, LCRC, framing per 256-byte payload) plus DLLP
            // ACK/flow-control traffic: ~0.86 at a 256-byte max payload size.
            LinkKind::Pcie { .. } => 0.86,
        }
    }

    /// Both directions move data at once (PCIe); SATA is half duplex.
    pub fn full_duplex(self) -> bool {
        matches!(self, LinkKind::Pcie { .. })
    }

    /// Commands the device holds at once at most: NCQ's 32 on SATA; NVMe allows 64 Ki.
    pub fn max_queue_depth(self) -> u32 {
        match self {
            LinkKind::Sata { .. } => 32,
            LinkKind::Pcie { .. } => 65_536,
        }
    }
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkKind::Sata { gbit_x10: 15 } => f.write_str("sata-1.5g"),
            LinkKind::Sata { gbit_x10 } => write!(f, "sata-{}g", gbit_x10 / 10),
            LinkKind::Pcie { gen, lanes } => write!(f, "pcie-gen{gen}-x{lanes}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sata_6g_is_600_mb_per_s_raw() {
        let l = LinkKind::parse("sata-6g").unwrap();
        assert_eq!(l.raw_bytes_per_s(), 600_000_000);
        assert_eq!(
            LinkKind::parse("SATA-3G").unwrap().raw_bytes_per_s(),
            300_000_000
        );
        assert_eq!(
            LinkKind::parse("sata-1.5g").unwrap().raw_bytes_per_s(),
            150_000_000
        );
        assert_eq!(l.max_queue_depth(), 32);
        assert!(!l.full_duplex());
    }

    #[test]
    fn pcie_gen4_x4_is_7_88_gb_per_s_raw() {
        let l = LinkKind::parse("pcie-gen4-x4").unwrap();
        let raw = l.raw_bytes_per_s();
        assert!((raw as f64 - 7.877e9).abs() < 1e6, "{raw}");
        assert_eq!(
            LinkKind::parse("pcie-gen3-x4").unwrap().raw_bytes_per_s() * 2,
            raw
        );
        assert_eq!(
            LinkKind::parse("pcie-gen5-x2").unwrap().raw_bytes_per_s(),
            raw
        );
        let eff = raw as f64 * l.default_efficiency();
        assert!((6.7e9..6.8e9).contains(&eff), "{eff}");
    }

    #[test]
    fn parse_and_display_round_trip() {
        for s in [
            "sata-1.5g",
            "sata-3g",
            "sata-6g",
            "pcie-gen3-x1",
            "pcie-gen5-x8",
        ] {
            assert_eq!(LinkKind::parse(s).unwrap().to_string(), s);
        }
        for bad in [
            "sata-12g",
            "pcie-gen6-x4",
            "pcie-gen4-x3",
            "usb",
            "pcie-gen4",
        ] {
            assert_eq!(LinkKind::parse(bad), None, "{bad}");
        }
    }
}
