//! Values with their own small grammar: `rw=`, `bsrange=`, `bssplit=`,
//! `random_distribution=` and `percentile_list=`.

use super::value::{parse_amount, parse_bytes, parse_f64, parse_int, split_ddir, Amount};
use crate::job::{BlockSize, RandomDistribution, RwPattern};

/// `rw=randread:8` -> (pattern, suffix after the colon, if any).
pub(crate) fn parse_rw(text: &str) -> Result<(RwPattern, Option<&str>), String> {
    let (name, suffix) = match text.split_once(':') {
        Some((n, s)) => (n.trim(), Some(s.trim())),
        None => (text.trim(), None),
    };
    let pattern = RwPattern::NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| *p)
        .ok_or_else(|| {
            let names: Vec<&str> = RwPattern::NAMES.iter().map(|(n, _)| *n).collect();
            format!(
                "one of {}, optionally followed by :N{}",
                names.join(", "),
                flashlab_engine::input::did_you_mean(name, names.iter().copied())
            )
        })?;
    Ok((pattern, suffix))
}

/// `bsrange=1k-4k` (also `1k:4k`), per direction.
pub(crate) fn parse_bsrange(text: &str, kb_base: u64) -> Result<[Option<BlockSize>; 3], String> {
    let expected = "min-max block sizes per direction, e.g. 4k-64k or 4k-16k,8k-32k";
    let mut out: [Option<BlockSize>; 3] = [None, None, None];
    for (slot, part) in out.iter_mut().zip(split_ddir(text)?) {
        let Some(part) = part else { continue };
        let (a, b) = part
            .split_once('-')
            .or_else(|| part.split_once(':'))
            .ok_or_else(|| expected.to_string())?;
        let a = parse_bytes(a, kb_base).map_err(|_| expected.to_string())?;
        let b = parse_bytes(b, kb_base).map_err(|_| expected.to_string())?;
        let (min, max) = (a.min(b), a.max(b));
        if min == 0 {
            return Err("block sizes above 0".into());
        }
        *slot = Some(if min == max {
            BlockSize::Fixed(min)
        } else {
            BlockSize::Range { min, max }
        });
    }
    Ok(out)
}

/// `bssplit=4k/50:16k/30:64k/20`, per direction with `,`. Entries without a weight share
/// what the others leave of 100%, as in fio.
pub(crate) fn parse_bssplit(text: &str, kb_base: u64) -> Result<[Option<BlockSize>; 3], String> {
    let expected =
        "size/percent entries separated by ':' (e.g. 4k/50:16k/30:64k/20), per direction with ','";
    let mut out: [Option<BlockSize>; 3] = [None, None, None];
    for (slot, part) in out.iter_mut().zip(split_ddir(text)?) {
        let Some(part) = part else { continue };
        let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
        for e in part.split(':') {
            let (size, weight) = match e.split_once('/') {
                Some((s, w)) => (s, Some(w)),
                None => (e, None),
            };
            let size = parse_bytes(size, kb_base).map_err(|_| expected.to_string())?;
            if size == 0 {
                return Err("block sizes above 0".into());
            }
            let weight = match weight {
                Some(w) if !w.trim().is_empty() => {
                    Some(parse_int(w, 1000, 0, 100).map_err(|_| expected.to_string())? as u32)
                }
                _ => None,
            };
            entries.push((size, weight));
        }
        let given: u32 = entries.iter().filter_map(|e| e.1).sum();
        let missing = entries.iter().filter(|e| e.1.is_none()).count() as u32;
        if given > 100 || (missing == 0 && given != 100) {
            return Err(format!(
                "weights that add up to 100 (these add up to {given})"
            ));
        }
        let share = (100 - given).checked_div(missing).unwrap_or(0);
        let mut split: Vec<(u64, u32)> = entries
            .iter()
            .map(|(s, w)| (*s, w.unwrap_or(share)))
            .collect();
        // Integer division may leave a few percent over: give them to the last entry without
        // a weight so the split still adds up to 100.
        let total: u32 = split.iter().map(|e| e.1).sum();
        if total < 100 {
            if let Some(i) = entries.iter().rposition(|e| e.1.is_none()) {
                split[i].1 += 100 - total;
            }
        }
        split.retain(|e| e.1 > 0);
        *slot = Some(BlockSize::Split(split));
    }
    Ok(out)
}

const DISTRIBUTIONS: &str = "random, zipf:THETA, pareto:H, normal:SIGMA_PERCENT, \
zoned:ACCESS%/RANGE%:..., zoned_abs:ACCESS%/SIZE:...";

pub(crate) fn parse_distribution(text: &str, kb_base: u64) -> Result<RandomDistribution, String> {
    let t = text.trim();
    if t.contains(',') {
        return Err(
            "one distribution for all directions (per-direction zones are not simulated)".into(),
        );
    }
    let (name, args) = match t.split_once(':') {
        Some((n, a)) => (n.trim(), Some(a)),
        None => (t, None),
    };
    let param = |what: &str, ok: &dyn Fn(f64) -> bool| -> Result<f64, String> {
        let a = args.ok_or_else(|| format!("{name}:{what}"))?;
        if a.contains(':') {
            return Err(format!("{name}:{what} (a centre offset is not simulated)"));
        }
        let v = parse_f64(a).ok_or_else(|| {
            format!("{name}:{what}, written as a plain decimal number such as 1.2 (no exponent)")
        })?;
        if ok(v) {
            Ok(v)
        } else {
            Err(format!("{name}:{what}"))
        }
    };
    match name {
        "random" if args.is_none() => Ok(RandomDistribution::Random),
        "zipf" => Ok(RandomDistribution::Zipf(param(
            "THETA with THETA > 0 and not 1",
            &|v| v > 0.0 && v != 1.0,
        )?)),
        "pareto" => Ok(RandomDistribution::Pareto(param(
            "H with 0 < H < 1",
            &|v| v > 0.0 && v < 1.0,
        )?)),
        "normal" => Ok(RandomDistribution::Normal(param(
            "SIGMA as a percent of the range, 0 < SIGMA <= 100",
            &|v| v > 0.0 && v <= 100.0,
        )?)),
        "zoned" | "zoned_abs" => {
            let args = args.ok_or_else(|| format!("{name}:ACCESS%/RANGE:..."))?;
            let zones = parse_zones(name, args)?;
            if name == "zoned" {
                zoned_ranges(zones)
            } else {
                zoned_abs_sizes(zones, kb_base)
            }
        }
        _ => Err(format!("one of {DISTRIBUTIONS}")),
    }
}

/// The zones of `zoned:` or `zoned_abs:` (`name`) as (access percent, range text), their
/// accesses adding up to 100.
fn parse_zones<'t>(name: &str, args: &'t str) -> Result<Vec<(f64, &'t str)>, String> {
    let mut zones = Vec::new();
    let mut access_total = 0.0;
    // fio stops at the first empty entry (a trailing ':').
    for z in args.split(':').take_while(|z| !z.is_empty()) {
        // fio's zoned: without a range (`20/` or `20`) the range is missing; zoned_abs
        // needs its size.
        let (a, r) = match z.split_once('/') {
            Some(pair) => pair,
            None if name == "zoned" => (z, ""),
            None => {
                return Err(format!("{name} zones as ACCESS/SIZE separated by ':'"));
            }
        };
        let a = parse_f64(a)
            .filter(|v| *v <= 100.0)
            .ok_or_else(|| "zone access percentages from 0 to 100".to_string())?;
        access_total += a;
        zones.push((a, r));
    }
    if (access_total - 100.0).abs() > 1e-9 {
        return Err(format!(
            "zone access percentages that add up to 100 (these add up to {access_total})"
        ));
    }
    Ok(zones)
}

/// `zoned:`'s ranges as percents of the region, a missing one an equal whole share of what
/// the others leave.
fn zoned_ranges(zones: Vec<(f64, &str)>) -> Result<RandomDistribution, String> {
    let mut out = Vec::new();
    let mut range_total = 0.0;
    let mut missing = 0u32;
    for (a, r) in zones {
        // fio's zone_split_ddir: an empty or zero range is missing and gets an
        // equal whole share of what the others leave.
        let r = if r.trim().is_empty() {
            None
        } else {
            Some(parse_f64(r).filter(|v| (0.0..=100.0).contains(v)).ok_or_else(
                || "zone range percentages from 0 to 100 (empty or 0: an equal share of the rest)".to_string(),
            )?)
        }
        .filter(|v| *v > 0.0);
        match r {
            Some(r) => range_total += r,
            None => missing += 1,
        }
        out.push((a, r));
    }
    if range_total > 100.0 + 1e-9 {
        return Err(format!(
            "zone ranges that add up to at most 100% (these add up to {range_total})"
        ));
    }
    // fio divides in whole percents: (100 - given) / missing.
    let share = if missing > 0 {
        ((100.0 - range_total).floor() / missing as f64).floor()
    } else {
        0.0
    };
    if missing > 0 && share <= 0.0 {
        return Err(format!(
            "zone ranges that leave room for the zones without one (these add up to {range_total})"
        ));
    }
    let out = out
        .into_iter()
        .map(|(a, r)| (a, r.unwrap_or(share)))
        .collect();
    Ok(RandomDistribution::Zoned(out))
}

/// `zoned_abs:`'s ranges as sizes in bytes.
fn zoned_abs_sizes(zones: Vec<(f64, &str)>, kb_base: u64) -> Result<RandomDistribution, String> {
    let mut out = Vec::new();
    for (a, r) in zones {
        match parse_amount(r, kb_base, false) {
            Ok(Amount::Bytes(b)) if b > 0 => out.push((a, b)),
            _ => return Err("zone sizes in bytes with k/m/g/t/p suffixes".into()),
        }
    }
    Ok(RandomDistribution::ZonedAbs(out))
}

/// `percentile_list=50:90:99.9`: up to 20 values in (0, 100].
pub(crate) fn parse_percentiles(text: &str) -> Result<Vec<f64>, String> {
    let expected = "up to 20 percentiles in (0, 100] separated by ':'";
    let list: Option<Vec<f64>> = text
        .split(':')
        .map(|p| parse_f64(p).filter(|v| *v > 0.0 && *v <= 100.0))
        .collect();
    match list {
        Some(l) if !l.is_empty() && l.len() <= 20 => Ok(l),
        _ => Err(expected.to_string()),
    }
}

/// The decimals fio prints percentile labels with: per value, the digits right after its
/// first '.', the most over the list (parse.c counts them as written, so `50.10` asks for
/// 2, `50.` and `5e1` for 0).
pub(crate) fn percentile_precision(text: &str) -> u32 {
    text.split(':')
        .filter_map(|p| p.split_once('.'))
        .map(|(_, frac)| frac.bytes().take_while(u8::is_ascii_digit).count() as u32)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rw_with_suffix() {
        assert_eq!(parse_rw("randread:8"), Ok((RwPattern::RandRead, Some("8"))));
        assert_eq!(parse_rw("readwrite"), Ok((RwPattern::ReadWrite, None)));
        assert!(parse_rw("foo").unwrap_err().contains("randtrimwrite"));
        assert!(parse_rw("randwirte")
            .unwrap_err()
            .ends_with(":N (did you mean randwrite?)"));
    }

    #[test]
    fn bssplit_fills_missing_weights() {
        let s = parse_bssplit("4k/10:64k/50:32k", 1024).unwrap();
        assert_eq!(
            s[0],
            Some(BlockSize::Split(vec![(4096, 10), (65536, 50), (32768, 40)]))
        );
        assert_eq!(s[0], s[2]);
        let s = parse_bssplit("4k/50:8k/50,16k", 1024).unwrap();
        assert_eq!(s[1], Some(BlockSize::Split(vec![(16384, 100)])));
        assert!(parse_bssplit("4k/50:8k/20", 1024)
            .unwrap_err()
            .contains("add up to 70"));
        assert!(parse_bssplit("4q/100", 1024).is_err());
    }

    #[test]
    fn bsrange_orders_bounds() {
        let r = parse_bsrange("16k-4k", 1024).unwrap();
        assert_eq!(
            r[0],
            Some(BlockSize::Range {
                min: 4096,
                max: 16384
            })
        );
        assert!(parse_bsrange("4k", 1024).is_err());
    }

    #[test]
    fn distributions() {
        assert_eq!(
            parse_distribution("zipf:1.2", 1024),
            Ok(RandomDistribution::Zipf(1.2))
        );
        assert_eq!(
            parse_distribution("pareto:0.2", 1024),
            Ok(RandomDistribution::Pareto(0.2))
        );
        assert_eq!(
            parse_distribution("normal:5", 1024),
            Ok(RandomDistribution::Normal(5.0))
        );
        assert_eq!(
            parse_distribution("zoned:60/10:30/20:8/30:2/40", 1024),
            Ok(RandomDistribution::Zoned(vec![
                (60.0, 10.0),
                (30.0, 20.0),
                (8.0, 30.0),
                (2.0, 40.0)
            ]))
        );
        assert_eq!(
            parse_distribution("zoned_abs:60/1g:40/3g", 1024),
            Ok(RandomDistribution::ZonedAbs(vec![
                (60.0, 1 << 30),
                (40.0, 3 << 30)
            ]))
        );
        assert!(parse_distribution("zipf:1", 1024).is_err());
        assert!(parse_distribution("zipf", 1024).is_err());
        assert!(parse_distribution("zipf:1.2:0.5", 1024)
            .unwrap_err()
            .contains("centre"));
        assert!(parse_distribution("zoned:60/10:30/20", 1024)
            .unwrap_err()
            .contains("90"));
        assert!(parse_distribution("uniform", 1024)
            .unwrap_err()
            .contains("zoned_abs"));
    }

    #[test]
    fn percentiles() {
        assert_eq!(parse_percentiles("50:99.9"), Ok(vec![50.0, 99.9]));
        assert!(parse_percentiles("0:50").is_err());
        assert!(parse_percentiles("").is_err());
    }

    #[test]
    fn percentile_precision_counts_written_decimals() {
        for (text, want) in [
            (
                "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99",
                2,
            ),
            ("50:99", 0),
            ("50:99.999", 3),
            ("99.5:50", 1),
            ("50.10:99", 2),
            ("50.:99", 0),
            ("5e1:99", 0),
            ("50.5000000:99", 7),
        ] {
            assert_eq!(percentile_precision(text), want, "{text}");
        }
    }
}
