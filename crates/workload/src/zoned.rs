//! fio's zone options, kept together as one part of a job ([`crate::JobSpec::zoned`]):
//! `zonemode=zbd` with the zone limits and resets, which the runner carries out
//! (`runner::zbd`: writes moved to a zone's write pointer, reads kept below it, the open-zone
//! limits and the resets), and `zonemode=strided` (`zonesize`, `zonerange`, `zoneskip`),
//! which only moves where a job's I/O goes and which the job's generator carries out
//! (`gen`). A sequential `zonemode=zbd` job's `zoneskip` is the same walk with one zone of
//! the drive's size each time (fio's `setup_zbd_zone_mode`), which the runner sets up once it
//! knows the zones (`IoGenerator::zbd_zone_skip`).

use crate::fio::value::{
    parse_amount, parse_bool, parse_bytes, parse_f64, parse_int, Amount, SizeSpec,
};

/// fio's `zonemode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ZoneMode {
    #[default]
    None,
    /// `zonemode=strided`: the job's I/O stays in one zone of `zonerange` bytes until it has
    /// transferred `zonesize` bytes, then moves `zonerange + zoneskip` bytes on.
    Strided,
    /// `zonemode=zbd`: the target is a zoned block device.
    Zbd,
}

/// fio's largest `max_open_zones` and `job_max_open_zones` (`ZBD_MAX_WRITE_ZONES`).
pub const MAX_WRITE_ZONES: u64 = 4096;

/// The zoned options of a job, as fio 3.x reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ZonedOptions {
    pub mode: ZoneMode,
    /// `zonesize` (0: the device's). With zonemode=zbd it must equal the device's.
    pub zone_size: u64,
    /// `zonecapacity` (0: the zone size); a zoned device's own capacity wins, as in fio.
    pub zone_capacity: u64,
    /// `max_open_zones` (0: the device's limit, or none).
    pub max_open_zones: u32,
    /// `job_max_open_zones` (0: no limit of the job's own).
    pub job_max_open_zones: u32,
    pub ignore_zone_limits: bool,
    /// `zone_reset_threshold`: share of the job's range holding written data above which
    /// zones are reset every `1 / zone_reset_frequency` writes.
    pub zone_reset_threshold: f64,
    pub zone_reset_frequency: f64,
    /// `read_beyond_wp`: reads may go past a zone's write pointer.
    pub read_beyond_wp: bool,
    /// `zonerange` (zonemode=strided; 0: `zonesize`, as fio defaults it).
    pub zone_range: u64,
    /// `zoneskip` (zonemode=strided; with zonemode=zbd, a multiple of the zone size that a
    /// sequential job skips after each zone; ignored with zonemode=none, as fio).
    pub zone_skip: u64,
}

impl ZonedOptions {
    /// Apply zoned option `name` (one of the names the option table routes here).
    pub(crate) fn set(&mut self, name: &str, value: &str, kb_base: u64) -> Result<(), String> {
        match name {
            "zonemode" => {
                self.mode = match value.trim() {
                    "none" => ZoneMode::None,
                    "strided" => ZoneMode::Strided,
                    "zbd" => ZoneMode::Zbd,
                    _ => return Err("none, strided or zbd".to_string()),
                }
            }
            "zonesize" => self.zone_size = parse_bytes(value, kb_base)?,
            "zonecapacity" => self.zone_capacity = parse_bytes(value, kb_base)?,
            "zonerange" => self.zone_range = parse_bytes(value, kb_base)?,
            "zoneskip" => self.zone_skip = parse_bytes(value, kb_base)?,
            "max_open_zones" => {
                self.max_open_zones = parse_int(value, kb_base, 0, MAX_WRITE_ZONES)? as u32
            }
            "job_max_open_zones" => {
                self.job_max_open_zones = parse_int(value, kb_base, 0, MAX_WRITE_ZONES)? as u32
            }
            "ignore_zone_limits" => self.ignore_zone_limits = parse_bool(value)?,
            "read_beyond_wp" => self.read_beyond_wp = parse_bool(value)?,
            "zone_reset_threshold" | "zone_reset_frequency" => {
                let v = parse_f64(value.trim())
                    .filter(|v| (0.0..=1.0).contains(v))
                    .ok_or_else(|| "a decimal from 0 to 1".to_string())?;
                if name == "zone_reset_threshold" {
                    self.zone_reset_threshold = v;
                } else {
                    self.zone_reset_frequency = v;
                }
            }
            _ => return Err(format!("{name} is not a zoned option")),
        }
        Ok(())
    }

    /// The strided walk of a job (`zonemode=strided`): `(zonesize, zonerange, zoneskip)`,
    /// the range defaulting to the size as fio's does. `None` for another mode; an error
    /// naming the option for what fio refuses: no `zonesize` with zonemode=strided, and a
    /// `zonesize` with zonemode=none (fio 3.33's default, which its `fixup_options` refuses
    /// whatever its manual says of the mode ignoring it).
    pub fn strided(&self) -> Result<Option<(u64, u64, u64)>, String> {
        match self.mode {
            ZoneMode::Strided if self.zone_size == 0 => Err(
                "zonemode=strided needs zonesize= (fio: \"--zonesize must be specified when using --zonemode=strided\")"
                    .to_string(),
            ),
            ZoneMode::None if self.zone_size != 0 => Err(format!(
                "zonesize={} needs zonemode=strided or zonemode=zbd (fio: \"--zonemode=none and --zonesize are not compatible\"; zonemode=none is fio's default)",
                self.zone_size
            )),
            ZoneMode::Strided => {
                let range = if self.zone_range == 0 {
                    self.zone_size
                } else {
                    self.zone_range
                };
                Ok(Some((self.zone_size, range, self.zone_skip)))
            }
            _ => Ok(None),
        }
    }
}

/// A size or offset of fio's sizes in zones (`offset=524z`): that many zones of `zonesize`.
/// Other values are read as [`parse_amount`] reads them.
pub(crate) fn size_in_zones(
    value: &str,
    kb_base: u64,
    zoned: &ZonedOptions,
) -> Result<SizeSpec, String> {
    let t = value.trim();
    if let Some(n) = t.strip_suffix('z').or_else(|| t.strip_suffix('Z')) {
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| "a whole number of zones before z (e.g. 128z)".to_string())?;
        if zoned.zone_size == 0 {
            return Err(
                "a size in zones needs zonesize= (flashlab converts zones to bytes when it reads the job)"
                    .to_string(),
            );
        }
        return n
            .checked_mul(zoned.zone_size)
            .map(SizeSpec::Bytes)
            .ok_or_else(|| "a number of zones that fits in 64 bits of bytes".to_string());
    }
    Ok(match parse_amount(t, kb_base, true)? {
        Amount::Bytes(b) => SizeSpec::Bytes(b),
        Amount::Fraction(f) => SizeSpec::Fraction(f),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoned_options_parse_as_fio_reads_them() {
        let mut z = ZonedOptions::default();
        z.set("zonemode", "zbd", 1024).unwrap();
        z.set("zonesize", "256M", 1024).unwrap();
        z.set("max_open_zones", "32", 1024).unwrap();
        z.set("zone_reset_threshold", "0.7", 1024).unwrap();
        z.set("zone_reset_frequency", "0.125", 1024).unwrap();
        assert_eq!(z.mode, ZoneMode::Zbd);
        assert_eq!(z.zone_size, 256 << 20);
        assert_eq!(z.max_open_zones, 32);
        assert_eq!(
            (z.zone_reset_threshold, z.zone_reset_frequency),
            (0.7, 0.125)
        );
        assert!(z.set("zonemode", "striped", 1024).is_err());
        assert!(z.set("max_open_zones", "5000", 1024).is_err());
        assert!(z.set("zone_reset_frequency", "2", 1024).is_err());
        assert_eq!(
            size_in_zones("524z", 1024, &z).unwrap(),
            SizeSpec::Bytes(524 * (256 << 20))
        );
        assert_eq!(
            size_in_zones("1g", 1024, &z).unwrap(),
            SizeSpec::Bytes(1 << 30)
        );
        let e = size_in_zones("8z", 1024, &ZonedOptions::default()).unwrap_err();
        assert!(e.contains("zonesize"), "{e}");
    }
}
