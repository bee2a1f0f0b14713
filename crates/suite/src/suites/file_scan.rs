//! A full antivirus scan of a desktop volume, for `cache-passes` (docs/reviews.md §4): every
//! file of a file set read once, front to back, with the file system's metadata reads before
//! it. The set is generated from the suite's seed; the scan is driven request by request on
//! the device (no fio job describes it).
//!
//! **Sizes.** File sizes by count follow the hybrid model of Agrawal, Arpaci-Dusseau and
//! Arpaci-Dusseau, "Generating Realistic Impressions for File-System Benchmarking", FAST 2009
//! (fitted to the Windows desktop file systems of Agrawal et al., "A Five-Year Study of
//! File-System Metadata", FAST 2007): a lognormal body (ln bytes: μ 9.48, σ 2.46; median
//! ~13 KB) and, for 6 files in 100,000, a Pareto tail from 512 MiB with shape 0.91. About ten
//! files per directory (Impressions' 10.2).
//!
//! **Layout (NTFS).** 4 KiB clusters; one 1 KiB MFT record per file, records in creation
//! order in an MFT zone at the start of the region (NTFS reserves 12.5 % of a volume for it);
//! a file of at most 700 bytes lives inside its record and has no data clusters; each
//! directory has one 4 KiB index block ($I30) before its files. A used volume's free space is
//! in holes: data is allocated front to back, a file that outgrows its hole continues in the
//! next one (a fragment), and the gaps between holes hold other data. The hole and gap sizes
//! (exponential, mean 8 MiB each: the volume half full where the set lies) are assumptions,
//! not measured figures.
//!
//! **Scan.** One thread, one request at a time: directories in an order unrelated to the one
//! they were created in (Windows enumerates by name), for each its index block, then each
//! file's MFT page (unless the previous file's record is on the page just read) and its data
//! in 64 KiB reads, fragment by fragment. Each file also costs the host 50 µs (open, close,
//! the engine's setup: an assumption). No host file cache: each pass reads what a pass after
//! a reboot reads.
//!
//! **Bounds.** At most [`MAX_FILES`] files and [`MAX_EXTENTS`] fragments (16 bytes each), no
//! file above [`MAX_FILE_BYTES`], the set within the region the caller gives.

use flashlab_engine::{BlockDevice, DeviceError, IoRequest, RngStream, SimTime};

const CLUSTER: u64 = 4096;
const MFT_RECORD_BYTES: u64 = 1024;
/// Largest file whose data NTFS keeps inside its 1 KiB MFT record.
const RESIDENT_BYTES: u64 = 700;
/// Impressions' lognormal body of file sizes by count (ln bytes) and its weight.
const LN_MU: f64 = 9.48;
const LN_SIGMA: f64 = 2.46;
const BODY_WEIGHT: f64 = 0.99994;
/// Impressions' Pareto tail: scale and shape.
const TAIL_MIN_BYTES: f64 = (512u64 << 20) as f64;
const TAIL_SHAPE: f64 = 0.91;
/// Files per directory: uniform over 1..=19, mean 10 (Impressions: 10.2).
const MAX_FILES_PER_DIR: u64 = 19;
/// Mean free hole and mean gap of other data between holes (assumptions, see the header).
const HOLE_MEAN_BYTES: u64 = 8 << 20;
const GAP_MEAN_BYTES: u64 = 8 << 20;
/// Host read size and host time per file.
pub(crate) const READ_BYTES: u64 = 64 << 10;
pub(crate) const HOST_FILE_NS: u64 = 50_000;
/// Bounds of one set.
pub(crate) const MAX_FILES: usize = 1 << 20;
pub(crate) const MAX_EXTENTS: usize = 1 << 21;
pub(crate) const MAX_FILE_BYTES: u64 = 4 << 30;

#[derive(Debug, Clone, Copy)]
struct File {
    /// Byte offset of the 4 KiB MFT page holding the file's record.
    mft_page: u64,
    first_extent: u32,
    extents: u32,
}

#[derive(Debug, Clone, Copy)]
struct Extent {
    offset: u64,
    /// Bytes the host reads (the file's bytes in it, rounded up to clusters).
    len: u64,
}

#[derive(Debug, Clone, Copy)]
struct Dir {
    index_block: u64,
    first_file: u32,
    files: u32,
}

/// A generated file set and the order a scan visits its directories in.
#[derive(Debug, Clone)]
pub(crate) struct FileSet {
    files: Vec<File>,
    extents: Vec<Extent>,
    dirs: Vec<Dir>,
    scan_order: Vec<u32>,
    /// Files in the order the scan opens them within each directory (by name, unrelated to
    /// the order they were created and allocated in).
    file_order: Vec<u32>,
    /// Sum of the files' sizes.
    pub data_bytes: u64,
    /// Where the layout ends (the region used: MFT zone, data, gaps).
    pub end_bytes: u64,
}

/// What one pass read and how long it took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ScanPass {
    pub time_ns: SimTime,
    pub reads: u64,
    pub read_bytes: u64,
}

/// A standard normal deviate from twelve uniforms (Irwin-Hall): only additions, so the same
/// on every platform, and bounded at ±6.
fn normal(rng: &mut RngStream) -> f64 {
    (0..12).map(|_| rng.unit_f64()).sum::<f64>() - 6.0
}

/// `e^x` from additions, multiplications and an exponent built from bits (no libm call whose
/// last digit may differ between platforms). Within 1e-12 relative for |x| < 700.
fn exp(x: f64) -> f64 {
    let y = x * std::f64::consts::LOG2_E;
    let n = y.floor();
    let f = (y - n) * std::f64::consts::LN_2; // in [0, ln 2)
                                              // Taylor series of e^f to the 14th power: the remainder is below 1e-16 on [0, ln 2).
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..=14 {
        term *= f / k as f64;
        sum += term;
    }
    let n = n.clamp(-1022.0, 1023.0) as i64;
    sum * f64::from_bits(((n + 1023) as u64) << 52)
}

/// A file size in bytes from the Impressions model, at most [`MAX_FILE_BYTES`].
fn file_size(rng: &mut RngStream) -> u64 {
    let bytes = if rng.unit_f64() < BODY_WEIGHT {
        exp(LN_MU + LN_SIGMA * normal(rng))
    } else {
        // ln(X / Xm) is exponential with rate `shape`.
        let e = rng.exponential_ns(1 << 20) as f64 / (1u64 << 20) as f64;
        TAIL_MIN_BYTES * exp(e / TAIL_SHAPE)
    };
    (bytes.max(1.0) as u64).min(MAX_FILE_BYTES)
}

/// An exponential size of mean `mean`, whole clusters, at least one.
fn clusters(rng: &mut RngStream, mean: u64) -> u64 {
    (rng.exponential_ns(mean) / CLUSTER).max(1) * CLUSTER
}

/// The volume's space as the allocator walks it: the next free cluster and what is left of
/// its hole.
struct Space {
    cursor: u64,
    hole_left: u64,
}

impl Space {
    /// Allocate `bytes` (whole clusters) at the cursor, across holes, into `out`'s extents.
    fn alloc(&mut self, rng: &mut RngStream, mut bytes: u64, out: &mut Vec<Extent>) {
        while bytes > 0 {
            let take = bytes.min(self.hole_left);
            match out.last_mut() {
                Some(e) if e.offset + e.len == self.cursor => e.len += take,
                _ => out.push(Extent {
                    offset: self.cursor,
                    len: take,
                }),
            }
            self.cursor += take;
            self.hole_left -= take;
            bytes -= take;
            if self.hole_left == 0 {
                self.cursor += clusters(rng, GAP_MEAN_BYTES);
                self.hole_left = clusters(rng, HOLE_MEAN_BYTES);
            }
        }
    }
}

/// Fisher-Yates.
fn shuffle(rng: &mut RngStream, v: &mut [u32]) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

impl FileSet {
    /// Files whose sizes add up to `set_bytes` (the last one cut to fit), laid out from
    /// `region_start` within `region_bytes`; stops early at the region's end or a bound.
    pub(crate) fn generate(
        rng: &mut RngStream,
        set_bytes: u64,
        region_start: u64,
        region_bytes: u64,
    ) -> FileSet {
        let region_end = region_start + region_bytes;
        // The MFT zone: 12.5 % of what the set needs, at least enough for its records.
        let zone = (set_bytes / 8).next_multiple_of(1 << 20).max(1 << 20);
        let max_records = (zone / MFT_RECORD_BYTES) as usize;
        let mut set = FileSet {
            files: Vec::new(),
            extents: Vec::new(),
            dirs: Vec::new(),
            scan_order: Vec::new(),
            file_order: Vec::new(),
            data_bytes: 0,
            end_bytes: region_start + zone,
        };
        let mut space = Space {
            cursor: region_start + zone,
            hole_left: clusters(rng, HOLE_MEAN_BYTES),
        };
        // One file's fragments before they join the set (reused).
        let mut scratch: Vec<Extent> = Vec::new();
        'dirs: while set.data_bytes < set_bytes {
            let n = 1 + rng.below(MAX_FILES_PER_DIR);
            scratch.clear();
            space.alloc(rng, CLUSTER, &mut scratch);
            let dir = Dir {
                index_block: scratch[0].offset,
                first_file: set.files.len() as u32,
                files: 0,
            };
            set.dirs.push(dir);
            for _ in 0..n {
                if set.files.len() >= MAX_FILES.min(max_records)
                    || set.extents.len() >= MAX_EXTENTS
                    || set.data_bytes >= set_bytes
                {
                    break 'dirs;
                }
                let size = file_size(rng).min(set_bytes - set.data_bytes).max(1);
                let first = set.extents.len();
                if size > RESIDENT_BYTES {
                    scratch.clear();
                    space.alloc(rng, size.next_multiple_of(CLUSTER), &mut scratch);
                    if space.cursor > region_end || first + scratch.len() > MAX_EXTENTS {
                        break 'dirs;
                    }
                    set.extents.extend_from_slice(&scratch);
                }
                let record = set.files.len() as u64 * MFT_RECORD_BYTES;
                set.files.push(File {
                    mft_page: region_start + record / CLUSTER * CLUSTER,
                    first_extent: first as u32,
                    extents: (set.extents.len() - first) as u32,
                });
                set.data_bytes += size;
                set.end_bytes = space.cursor;
                set.dirs.last_mut().expect("pushed above").files += 1;
            }
        }
        if set.dirs.last().is_some_and(|d| d.files == 0) {
            set.dirs.pop();
        }
        set.scan_order = (0..set.dirs.len() as u32).collect();
        shuffle(rng, &mut set.scan_order);
        set.file_order = (0..set.files.len() as u32).collect();
        for d in &set.dirs {
            let range = d.first_file as usize..(d.first_file + d.files) as usize;
            shuffle(rng, &mut set.file_order[range]);
        }
        set
    }

    pub(crate) fn files(&self) -> usize {
        self.files.len()
    }

    pub(crate) fn fragments(&self) -> usize {
        self.extents.len()
    }

    /// Read every file once, starting at time 0 on `dev`; returns the pass and the time of
    /// its last completion.
    pub(crate) fn scan(&self, dev: &mut dyn BlockDevice) -> Result<ScanPass, DeviceError> {
        let mut p = ScanPass::default();
        let mut t: SimTime = 0;
        let mut read = |t: &mut SimTime, offset: u64, len: u64| -> Result<(), DeviceError> {
            *t = dev.submit(*t, &IoRequest::read(offset, len))?.done_ns;
            p.reads += 1;
            p.read_bytes += len;
            Ok(())
        };
        for &d in &self.scan_order {
            let dir = self.dirs[d as usize];
            let range = dir.first_file as usize..(dir.first_file + dir.files) as usize;
            read(&mut t, dir.index_block, CLUSTER)?;
            // The directory's records are consecutive: one read of their pages.
            let (a, b) = (self.files[range.start], self.files[range.end - 1]);
            read(&mut t, a.mft_page, b.mft_page + CLUSTER - a.mft_page)?;
            for &i in &self.file_order[range] {
                let f = self.files[i as usize];
                t += HOST_FILE_NS;
                let exts = f.first_extent as usize..(f.first_extent + f.extents) as usize;
                for e in &self.extents[exts] {
                    let mut off = e.offset;
                    while off < e.offset + e.len {
                        let len = READ_BYTES.min(e.offset + e.len - off);
                        read(&mut t, off, len)?;
                        off += len;
                    }
                }
            }
        }
        p.time_ns = t;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_engine::SeedTree;
    use flashlab_system::{load_system_config, System};

    struct Offset<'a> {
        dev: &'a mut System,
        at: u64,
    }
    impl BlockDevice for Offset<'_> {
        fn capacity_bytes(&self) -> u64 {
            self.dev.capacity_bytes()
        }
        fn logical_block_bytes(&self) -> u64 {
            self.dev.logical_block_bytes()
        }
        fn queue_depth_limit(&self) -> u32 {
            self.dev.queue_depth_limit()
        }
        fn prefetch(&self, req: &IoRequest, stage: flashlab_engine::PrefetchStage) {
            self.dev.prefetch(req, stage)
        }
        fn submit(
            &mut self,
            now_ns: SimTime,
            req: &IoRequest,
        ) -> Result<flashlab_engine::Completion, DeviceError> {
            let c = self.dev.submit(now_ns + self.at, req)?;
            Ok(flashlab_engine::Completion {
                accepted_ns: c.accepted_ns - self.at,
                done_ns: c.done_ns - self.at,
            })
        }
        fn idle(&mut self, from_ns: SimTime, until_ns: SimTime) {
            self.dev.idle(from_ns + self.at, until_ns + self.at)
        }
    }

    /// A system of the Optane preset's cache rules with a cache of `cache` bytes.
    fn small_cache(cache: &str) -> System {
        let text = format!(
            r#"name = "small-cache"
[drive.optane]
preset = "intel-optane-memory-16gb"
set = {{ capacity = "{cache}" }}
[drive.hdd]
preset = "toshiba-dt01aca200-2tb"
[cache.tier]
cache = "optane"
backing = "hdd"
mode = "write-back"
line = "64KiB"
admit_read_miss = true
admit_write = true
admit_after = 1
sequential_bypass = "1MiB"
eviction = "frequency"
metadata_bytes_per_line = 16
"#
        );
        let cfg = flashlab_system::parse_system_config("small-cache.toml", &text).unwrap();
        System::build(&cfg, SeedTree::new(7)).unwrap()
    }

    /// Both passes of a `set_bytes` file set on `dev`, the second a minute after the first.
    fn two_passes(dev: &mut System, set_bytes: u64) -> (f64, f64) {
        let cap = dev.capacity_bytes();
        let set = FileSet::generate(&mut SeedTree::new(3).stream(), set_bytes, 0, cap);
        let a = set.scan(dev).unwrap();
        let at = a.time_ns + 60_000_000_000;
        dev.idle(a.time_ns, at);
        let b = set.scan(&mut Offset { dev, at }).unwrap();
        assert_eq!(a.reads, b.reads);
        (a.time_ns as f64 / 1e9, b.time_ns as f64 / 1e9)
    }

    #[test]
    fn a_set_that_fits_the_cache_is_scanned_much_faster_the_second_time() {
        let (a, b) = two_passes(&mut small_cache("512MB"), 96 << 20);
        assert!(b < a / 2.5, "pass 1 {a} s, pass 2 {b} s");
    }

    #[test]
    fn the_disk_alone_takes_as_long_the_second_time() {
        // 96 MiB: more than the disk's 64 MiB buffer keeps.
        let cfg = load_system_config("hdd-2tb").unwrap();
        let mut dev = System::build(&cfg, SeedTree::new(7)).unwrap();
        let (a, b) = two_passes(&mut dev, 96 << 20);
        assert!((b / a - 1.0).abs() < 0.05, "pass 1 {a} s, pass 2 {b} s");
        assert!(
            a > 1.0,
            "96 MiB of files take the disk over a second: {a} s"
        );
    }

    #[test]
    fn a_set_larger_than_the_cache_gains_little_the_second_time() {
        // The set's cached footprint (its small files and the first MiB of each fragment)
        // is about four times the 64 MB cache.
        let (a, b) = two_passes(&mut small_cache("64MB"), 384 << 20);
        assert!(b > 0.8 * a, "pass 1 {a} s, pass 2 {b} s");
        // The same set in front of a cache it fits gains.
        let (c, d) = two_passes(&mut small_cache("1GB"), 384 << 20);
        assert!(d < c / 2.5, "pass 1 {c} s, pass 2 {d} s");
    }

    #[test]
    fn the_set_is_the_seed_s_and_stays_in_its_bounds() {
        let gen = |seed: u64| {
            FileSet::generate(
                &mut SeedTree::new(seed).stream(),
                256 << 20,
                1 << 30,
                8 << 30,
            )
        };
        let (a, b, c) = (gen(1), gen(1), gen(2));
        assert_eq!(a.data_bytes, 256 << 20);
        assert_eq!(
            (a.files(), a.fragments(), a.end_bytes),
            (b.files(), b.fragments(), b.end_bytes)
        );
        assert_ne!((a.files(), a.end_bytes), (c.files(), c.end_bytes));
        assert!(a
            .extents
            .iter()
            .all(|e| e.offset >= 1 << 30 && e.offset + e.len <= a.end_bytes));
        assert!(a.end_bytes <= 9 << 30);
        // Impressions' body: median ~13 KB, so most files are small and a few hold most bytes.
        let mut sizes: Vec<u64> = a
            .files
            .iter()
            .map(|f| {
                a.extents[f.first_extent as usize..][..f.extents as usize]
                    .iter()
                    .map(|e| e.len)
                    .sum()
            })
            .collect();
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        assert!((8 << 10..=24 << 10).contains(&median), "median {median}");
        // A region too small stops the set early instead of passing its end.
        let small = FileSet::generate(&mut SeedTree::new(1).stream(), 256 << 20, 0, 64 << 20);
        assert!(small.data_bytes < 64 << 20 && small.end_bytes <= 64 << 20);
    }

    #[test]
    fn exp_matches_the_library_s() {
        for x in [-20.0, -1.0, 0.0, 0.5, 9.48, 20.0, 40.0] {
            let (a, b) = (exp(x), f64::exp(x));
            assert!((a / b - 1.0).abs() < 1e-12, "{x}: {a} {b}");
        }
    }
}
