//! The logical-to-physical map at IU granularity and its reverse: two flat `u32` arrays (8
//! bytes per user IU at zero spare, under 10 at 28% spare), plus a version tag per physical IU
//! only when tests ask for it.

use crate::{Lpn, Ppa};

/// L2P entry of an IU that holds no data.
pub(crate) const UNMAPPED: Ppa = u32::MAX;
/// P2L entry of a physical IU that holds no valid data.
pub(crate) const INVALID: Lpn = u32::MAX;

pub(crate) struct Mapping {
    pub l2p: Vec<Ppa>,
    pub p2l: Vec<Lpn>,
    /// Version tag per physical IU (empty unless `track_versions`).
    pub versions: Vec<u32>,
    /// Logical IUs currently mapped.
    pub mapped: u32,
}

// The maps' lengths are the configuration's: the drive's IUs, or none on a zoned drive,
// which builds no map.
flashlab_engine::impl_state!(Mapping {
    l2p,
    p2l,
    versions,
    mapped
} fixed { l2p, p2l, versions });

impl Mapping {
    pub fn new(user_ius: u32, total_ius: u32, track_versions: bool) -> Mapping {
        Mapping {
            l2p: large_table(user_ius as usize, UNMAPPED),
            p2l: large_table(total_ius as usize, INVALID),
            versions: if track_versions {
                vec![0; total_ius as usize]
            } else {
                Vec::new()
            },
            mapped: 0,
        }
    }

    /// Forget everything (format), keeping the allocations.
    pub fn clear(&mut self) {
        self.l2p.fill(UNMAPPED);
        self.p2l.fill(INVALID);
        self.versions.fill(0);
        self.mapped = 0;
    }

    /// Physical IU `ppa` now holds `lpn` (copying the version tag from `from`, if tracked).
    #[inline]
    pub fn fill_slot(&mut self, ppa: Ppa, lpn: Lpn, version: u32) {
        debug_assert_eq!(self.p2l[ppa as usize], INVALID, "PPA {ppa} written twice");
        self.p2l[ppa as usize] = lpn;
        if !self.versions.is_empty() {
            self.versions[ppa as usize] = version;
        }
    }

    #[inline]
    pub fn version_at(&self, ppa: Ppa) -> u32 {
        if self.versions.is_empty() {
            0
        } else {
            self.versions[ppa as usize]
        }
    }

    /// Bytes held by the map (for memory estimates).
    pub fn memory_bytes(&self) -> u64 {
        4 * (self.l2p.len() + self.p2l.len() + self.versions.len()) as u64
    }
}

/// A table of `len` entries set to `fill`, backed by huge pages where the OS allows it.
///
/// The maps are hundreds of megabytes and read at random, one entry per I/O: with 4 KiB pages
/// almost every access also misses the TLB and walks the page tables. Asking for transparent
/// huge pages before the memory is first touched removes most of those walks.
pub(crate) fn large_table(len: usize, fill: u32) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::with_capacity(len);
    advise_huge_pages(v.as_mut_ptr().cast(), len * std::mem::size_of::<u32>());
    v.resize(len, fill);
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len_bytes: usize) {
    const HUGE_PAGE_BYTES: usize = 2 << 20;
    if len_bytes < 2 * HUGE_PAGE_BYTES {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE_BYTES);
    let end = (ptr as usize + len_bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if end > start {
        // SAFETY: [start, end) lies inside the allocation just made for the table and is
        // page-aligned; MADV_HUGEPAGE only changes how the kernel backs it, never its contents.
        // A failure (THP disabled) leaves ordinary pages, which is correct, only slower.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _len_bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_only_when_tracked() {
        let mut m = Mapping::new(10, 20, false);
        m.fill_slot(3, 7, 42);
        assert_eq!(m.p2l[3], 7);
        assert_eq!(m.version_at(3), 0);
        assert_eq!(m.memory_bytes(), 120);
        let mut m = Mapping::new(10, 20, true);
        m.fill_slot(3, 7, 42);
        assert_eq!(m.version_at(3), 42);
        m.clear();
        assert_eq!(m.p2l[3], INVALID);
    }
}
