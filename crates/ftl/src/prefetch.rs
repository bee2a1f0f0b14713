//! A hint to load memory the next step reads, for the maps and lists whose entries a
//! drive of millions of units touches at random.

#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn prefetch_read<T>(p: &T) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: SSE is part of the x86_64 baseline, and a prefetch of a valid reference never
    // faults and changes no state but the cache.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(p).cast()) };
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(crate) fn prefetch_read<T>(_p: &T) {}
