//! fio's data placement options (fio 3.34 on: `fdp`, `dataplacement`, `plids`/`fdp_pli`,
//! `plid_select`/`fdp_pli_select`): which NVMe Flexible Data Placement identifiers a job's
//! writes carry. A group of its own in [`crate::JobSpec`] (`placement`).

/// fio's `FIO_MAX_DP_IDS`: a job lists at most this many placement ID indices.
pub const MAX_PLACEMENT_IDS: usize = 16;

/// How a job picks the placement identifier of its next write (fio's `plid_select`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PlacementSelect {
    /// Each write the next identifier of the job's list, from the first again after the last
    /// (fio's default).
    #[default]
    RoundRobin,
    /// A uniformly random identifier of the list for each write.
    Random,
}

/// A job's data placement options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// `fdp=1`.
    pub fdp: bool,
    /// `dataplacement=fdp`.
    pub dataplacement_fdp: bool,
    /// `plids=` / `fdp_pli=`: indices into the placement identifiers the drive reports, in
    /// ascending order as fio sorts them; empty: every identifier the drive reports.
    pub ids: Vec<u16>,
    pub select: PlacementSelect,
}

impl Placement {
    /// Whether the job's writes carry placement identifiers (fio's `dp_type` is FDP).
    pub fn enabled(&self) -> bool {
        self.fdp || self.dataplacement_fdp
    }

    /// The option that turned placement on, for messages.
    pub fn option_name(&self) -> &'static str {
        if self.dataplacement_fdp {
            "dataplacement=fdp"
        } else {
            "fdp=1"
        }
    }
}

/// How many placement identifiers the jobs with these placement options can write through:
/// identifier 0 (NVMe's default handle, which writes without placement take) and every
/// index a job's `plids` lists; `None` when a placing job lists none (it writes through
/// every identifier the drive reports).
pub fn identifiers_written<'a>(jobs: impl IntoIterator<Item = &'a Placement>) -> Option<u32> {
    let mut ids = vec![0u16];
    for p in jobs.into_iter().filter(|p| p.enabled()) {
        if p.ids.is_empty() {
            return None;
        }
        ids.extend_from_slice(&p.ids);
    }
    ids.sort_unstable();
    ids.dedup();
    Some(ids.len() as u32)
}

/// fio's `plids=` list: indices and `low-high` ranges separated by commas, at most
/// [`MAX_PLACEMENT_IDS`] in all, each at most 0xFFFF, sorted.
pub fn parse_ids(text: &str) -> Result<Vec<u16>, String> {
    let valid = "placement ID indices and ranges separated by commas (e.g. 0,2-4), at most 16, each at most 65535";
    let number = |t: &str| -> Result<u64, String> {
        let t = t.trim();
        let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => t.parse().ok(),
        };
        parsed.ok_or_else(|| valid.to_string())
    };
    let mut ids = Vec::new();
    for item in text.trim().split(',') {
        if item.trim().is_empty() {
            return Err(valid.into());
        }
        let (lo, hi) = match item.split_once('-') {
            Some((lo, hi)) => (number(lo)?, number(hi)?),
            None => {
                let n = number(item)?;
                (n, n)
            }
        };
        if lo > hi || hi > 0xFFFF {
            return Err(valid.into());
        }
        for id in lo..=hi {
            if ids.len() == MAX_PLACEMENT_IDS {
                return Err(format!("at most {MAX_PLACEMENT_IDS} IDs (fio's limit)"));
            }
            ids.push(id as u16);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_take_lists_and_ranges_sorted_and_refuse_what_fio_refuses() {
        assert_eq!(parse_ids("3,0-1").unwrap(), vec![0, 1, 3]);
        assert_eq!(parse_ids("0x2").unwrap(), vec![2]);
        assert!(parse_ids("4-2").is_err());
        assert!(parse_ids("65536").is_err());
        assert!(parse_ids("a").is_err());
        assert!(parse_ids("0-16").unwrap_err().contains("16"));
        assert_eq!(parse_ids("0-15").unwrap().len(), 16);
    }

    #[test]
    fn identifiers_written_count_the_default_and_every_listed_one() {
        let placing = |ids: &[u16]| Placement {
            fdp: true,
            ids: ids.to_vec(),
            ..Default::default()
        };
        let plain = Placement::default();
        assert_eq!(identifiers_written([&plain]), Some(1));
        assert_eq!(identifiers_written([&plain, &placing(&[3])]), Some(2));
        assert_eq!(
            identifiers_written([&placing(&[0]), &placing(&[1])]),
            Some(2)
        );
        assert_eq!(identifiers_written([&placing(&[1]), &placing(&[])]), None);
    }
}
