//! fio's data placement for a job's writes (`fdp=1` / `dataplacement=fdp`, `plids`,
//! `plid_select`): each clone cycles through (or draws from) its placement identifiers, as
//! fio's `dp_fill_dspec_data` does per file of a job thread.

use flashlab_engine::{RngStream, SeedTree};
use flashlab_workload::placement::PlacementSelect;
use flashlab_workload::JobSpec;

/// One clone's placement identifiers and where it is in them.
pub(crate) struct DataPlacement {
    /// The drive's placement identifiers the job's `plids` index (all of them by default).
    ids: Vec<u16>,
    next: usize,
    /// `plid_select=random`: the clone's own stream (no other draw moves with it).
    random: Option<RngStream>,
}

impl DataPlacement {
    /// The clone's placement, or None when its writes carry none; Err names the option
    /// and what is valid when the drive cannot take them (`handles`: the drive's
    /// identifiers, 0 without FDP).
    pub(crate) fn new(
        spec: &JobSpec,
        handles: u32,
        seeds: &SeedTree,
    ) -> Result<Option<DataPlacement>, String> {
        let p = &spec.placement;
        if !p.enabled() {
            return Ok(None);
        }
        if handles == 0 {
            return Err(format!(
                "{}: the drive has no Flexible Data Placement (a drive with fdp.enabled = true takes placement identifiers)",
                p.option_name()
            ));
        }
        // The drive reports identifiers 0 to handles - 1 (one reclaim group): index i is
        // identifier i.
        let ids = if p.ids.is_empty() {
            (0..handles.min(u32::from(u16::MAX) + 1))
                .map(|h| h as u16)
                .collect()
        } else {
            if let Some(&bad) = p.ids.iter().find(|&&i| u32::from(i) >= handles) {
                return Err(format!(
                    "plids (fdp_pli) = {bad}: placement ID index out of range; the drive reports {handles} placement IDs (indices 0 to {})",
                    handles - 1
                ));
            }
            p.ids.clone()
        };
        Ok(Some(DataPlacement {
            ids,
            next: 0,
            random: (p.select == PlacementSelect::Random)
                .then(|| seeds.child("placement").stream()),
        }))
    }

    /// The placement identifier of the clone's next write.
    #[inline]
    pub(crate) fn next_id(&mut self) -> u16 {
        let i = match &mut self.random {
            Some(rng) => rng.below(self.ids.len() as u64) as usize,
            None => {
                let i = self.next;
                self.next = if i + 1 == self.ids.len() { 0 } else { i + 1 };
                i
            }
        };
        self.ids[i]
    }
}
