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
//! **Scan.** One thread: directories in an order unrelated to the one they were created in
//! (Windows enumerates by name), for each its index block, then each file's MFT page (unless
//! the previous file's record is on the page just read) and its data front to back, fragment
//! by fragment, in reads of the host's read size ([`ScanHost::read_bytes`], default 64 KiB)
//! with up to [`ScanHost::qd`] of a file's reads in flight (default 1: one request at a
//! time). Metadata reads and files follow one another: a file's reads are done before the
//! next file opens. Each file also costs the host its time per file (open, close, the
//! scanning engine's look-up and setup; default 50 µs, an assumption of the order of Windows'
//! file calls, a few dozen µs each (G. Szorc, "Surprisingly Slow", 2021): an option of the
//! host, [`ScanHost::file_ns`]).
//!
//! **Host.** Two behaviours of the scanning host are options ([`ScanHost`]), not part of any
//! device: what the host keeps of the file system's metadata ([`MetadataCache`]: Windows'
//! cache manager keeps the MFT and directory index pages it read in memory, and its standby
//! list keeps them after the scan; a reboot empties it), and whether the scanner skips files
//! it scanned before and that have not changed since (ESET's Smart optimization, on by
//! default: "files which have already been scanned are not scanned repeatedly (unless they
//! have been modified)", ESET Mail Security 4.2 manual §4.1.7.6; a skipped file costs its
//! open and the look-up, no data read). File data is not
//! kept by the host: each pass reads the data a pass after a reboot reads.
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
/// Default host read size and time per file.
pub(crate) const READ_BYTES: u64 = 64 << 10;
pub(crate) const HOST_FILE_NS: u64 = 50_000;
/// Most reads of one file the scanner keeps in flight (a SATA disk's NCQ depth).
pub(crate) const MAX_QD: u32 = 32;
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
    /// Of `time_ns`, the time spent waiting for the device (the rest is the host's per-file
    /// time).
    pub storage_ns: SimTime,
    pub reads: u64,
    pub read_bytes: u64,
    /// Files whose data the pass read (the others were skipped as scanned before).
    pub files_read: u64,
}

/// What the host keeps of the file system's metadata (MFT records, directory index blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetadataCache {
    /// Nothing: every directory's index block and MFT pages are read from the device.
    None,
    /// Kept within a pass, gone before the next (a reboot between the passes).
    Pass,
    /// Kept within and between passes (the standby list of a system not rebooted).
    Kept,
}

impl MetadataCache {
    pub(crate) fn name(self) -> &'static str {
        match self {
            MetadataCache::None => "none",
            MetadataCache::Pass => "pass",
            MetadataCache::Kept => "kept",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<MetadataCache> {
        match s {
            "none" => Some(MetadataCache::None),
            "pass" => Some(MetadataCache::Pass),
            "kept" => Some(MetadataCache::Kept),
            _ => None,
        }
    }
}

/// The scanning host's behaviours (see the module's header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanHost {
    pub metadata: MetadataCache,
    /// A pass after the first skips every file (unchanged since it was scanned).
    pub skip_unchanged: bool,
    /// Host time per file, scanned or skipped (open, close, the engine's look-up).
    pub file_ns: u64,
    /// Bytes of a file's data one read asks for (whole clusters).
    pub read_bytes: u64,
    /// Reads of one file in flight at once, 1 to [`MAX_QD`] (and at most the device's
    /// queue depth).
    pub qd: u32,
}

/// The scanner's reads of one pass: the clock, what it waits for and what it read. Up to
/// `qd` reads are in flight; a wait moves the clock to the earliest completion.
struct Reads<'a> {
    dev: &'a mut dyn BlockDevice,
    p: ScanPass,
    t: SimTime,
    inflight: [SimTime; MAX_QD as usize],
    n: usize,
    qd: usize,
}

impl Reads<'_> {
    /// Submit a read now, after waiting for one in flight if `qd` are.
    fn start(&mut self, offset: u64, len: u64) -> Result<(), DeviceError> {
        if self.n == self.qd {
            self.wait_one();
        }
        let done = self
            .dev
            .submit(self.t, &IoRequest::read(offset, len))?
            .done_ns;
        self.inflight[self.n] = done;
        self.n += 1;
        self.p.reads += 1;
        self.p.read_bytes += len;
        Ok(())
    }

    /// Wait for the earliest read in flight.
    fn wait_one(&mut self) {
        let Some((i, &done)) = self.inflight[..self.n]
            .iter()
            .enumerate()
            .min_by_key(|&(_, d)| *d)
        else {
            return;
        };
        if done > self.t {
            self.p.storage_ns += done - self.t;
            self.t = done;
        }
        self.n -= 1;
        self.inflight[i] = self.inflight[self.n];
    }

    /// Wait for every read in flight.
    fn drain(&mut self) {
        while self.n > 0 {
            self.wait_one();
        }
    }

    /// One read, waited for.
    fn read(&mut self, offset: u64, len: u64) -> Result<(), DeviceError> {
        self.start(offset, len)?;
        self.drain();
        Ok(())
    }
}

/// The host's memory of earlier reads: which MFT pages and index blocks it holds, and
/// whether a pass already scanned the set. Bounded by the set (a bit per MFT page and per
/// directory).
#[derive(Debug, Clone, Default)]
pub(crate) struct HostState {
    mft_pages: Vec<u64>,
    index_blocks: Vec<u64>,
    passes: u32,
}

fn bit(v: &[u64], i: usize) -> bool {
    v[i / 64] >> (i % 64) & 1 == 1
}

fn set_bit(v: &mut [u64], i: usize) {
    v[i / 64] |= 1 << (i % 64);
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

    /// A host state for this set with nothing cached and no pass scanned.
    pub(crate) fn host_state(&self) -> HostState {
        let mft_pages = (self.files.len() as u64 * MFT_RECORD_BYTES).div_ceil(CLUSTER) as usize;
        HostState {
            mft_pages: vec![0; mft_pages.div_ceil(64)],
            index_blocks: vec![0; self.dirs.len().div_ceil(64)],
            passes: 0,
        }
    }

    /// Read every file once, starting at time 0 on `dev`, as `host` scans (its metadata
    /// cache and skipped files in `state`); returns the pass and the time of its last
    /// completion.
    pub(crate) fn scan(
        &self,
        dev: &mut dyn BlockDevice,
        host: ScanHost,
        state: &mut HostState,
    ) -> Result<ScanPass, DeviceError> {
        if host.metadata != MetadataCache::Kept {
            state.mft_pages.fill(0);
            state.index_blocks.fill(0);
        }
        let cache_metadata = host.metadata != MetadataCache::None;
        let skip = host.skip_unchanged && state.passes > 0;
        state.passes += 1;
        let qd = host.qd.clamp(1, MAX_QD).min(dev.queue_depth_limit().max(1)) as usize;
        let read_bytes = host.read_bytes.max(CLUSTER);
        let mut r = Reads {
            dev,
            p: ScanPass::default(),
            t: 0,
            inflight: [0; MAX_QD as usize],
            n: 0,
            qd,
        };
        let mft_start = self.files.first().map_or(0, |f| f.mft_page);
        for &d in &self.scan_order {
            let dir = self.dirs[d as usize];
            let range = dir.first_file as usize..(dir.first_file + dir.files) as usize;
            if !(cache_metadata && bit(&state.index_blocks, d as usize)) {
                r.read(dir.index_block, CLUSTER)?;
                if cache_metadata {
                    set_bit(&mut state.index_blocks, d as usize);
                }
            }
            // The directory's records are consecutive: one read of their pages, less the
            // pages the host holds (a run of held pages splits it).
            let (a, b) = (self.files[range.start], self.files[range.end - 1]);
            let (first, last) = (
                ((a.mft_page - mft_start) / CLUSTER) as usize,
                ((b.mft_page - mft_start) / CLUSTER) as usize,
            );
            let mut run: Option<usize> = None;
            for page in first..=last + 1 {
                let held = page > last || (cache_metadata && bit(&state.mft_pages, page));
                match (run, held) {
                    (None, false) => run = Some(page),
                    (Some(s), true) => {
                        let off = mft_start + s as u64 * CLUSTER;
                        r.read(off, (page - s) as u64 * CLUSTER)?;
                        run = None;
                    }
                    _ => {}
                }
                if cache_metadata && page <= last {
                    set_bit(&mut state.mft_pages, page);
                }
            }
            for &i in &self.file_order[range] {
                let f = self.files[i as usize];
                r.t += host.file_ns;
                if skip {
                    continue;
                }
                r.p.files_read += 1;
                let exts = f.first_extent as usize..(f.first_extent + f.extents) as usize;
                for e in &self.extents[exts] {
                    let mut off = e.offset;
                    while off < e.offset + e.len {
                        let len = read_bytes.min(e.offset + e.len - off);
                        r.start(off, len)?;
                        off += len;
                    }
                }
                r.drain();
            }
        }
        r.p.time_ns = r.t;
        Ok(r.p)
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
promote = "read"
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

    /// A host that keeps nothing and skips nothing: each pass reads what a pass after a
    /// reboot reads, with the scanner's memory of scanned files off.
    const BARE: ScanHost = ScanHost {
        metadata: MetadataCache::None,
        skip_unchanged: false,
        file_ns: HOST_FILE_NS,
        read_bytes: READ_BYTES,
        qd: 1,
    };

    /// Both passes of a `set_bytes` file set on `dev` as `host` scans, the second a minute
    /// after the first.
    fn passes_with(dev: &mut System, set_bytes: u64, host: ScanHost) -> (ScanPass, ScanPass) {
        let cap = dev.capacity_bytes();
        let set = FileSet::generate(&mut SeedTree::new(3).stream(), set_bytes, 0, cap);
        let mut state = set.host_state();
        let a = set.scan(dev, host, &mut state).unwrap();
        let at = a.time_ns + 60_000_000_000;
        dev.idle(a.time_ns, at);
        let b = set.scan(&mut Offset { dev, at }, host, &mut state).unwrap();
        (a, b)
    }

    /// Both passes in seconds, by a host that keeps and skips nothing.
    fn two_passes(dev: &mut System, set_bytes: u64) -> (f64, f64) {
        let (a, b) = passes_with(dev, set_bytes, BARE);
        assert_eq!(a.reads, b.reads);
        (a.time_ns as f64 / 1e9, b.time_ns as f64 / 1e9)
    }

    fn hdd() -> System {
        let cfg = load_system_config("hdd-2tb").unwrap();
        System::build(&cfg, SeedTree::new(7)).unwrap()
    }

    #[test]
    fn metadata_held_by_the_host_is_not_read_again() {
        let (bare, _) = passes_with(&mut hdd(), 96 << 20, BARE);
        let pass = ScanHost {
            metadata: MetadataCache::Pass,
            skip_unchanged: false,
            file_ns: HOST_FILE_NS,
            read_bytes: READ_BYTES,
            qd: 1,
        };
        let (held, _) = passes_with(&mut hdd(), 96 << 20, pass);
        assert_eq!(bare.files_read, held.files_read);
        // A directory's first MFT page is often the last one of the directory created
        // before it: the host reads it once.
        assert!(held.reads < bare.reads, "{held:?} {bare:?}");
        assert!(held.time_ns <= bare.time_ns, "held {held:?} bare {bare:?}");
    }

    #[test]
    fn a_second_pass_that_skips_unchanged_files_reads_only_what_the_host_lacks() {
        let skip = |metadata| ScanHost {
            metadata,
            skip_unchanged: true,
            file_ns: HOST_FILE_NS,
            read_bytes: READ_BYTES,
            qd: 1,
        };
        // Metadata kept: the second pass touches no device at all, only the host's time.
        let (a, b) = passes_with(&mut hdd(), 96 << 20, skip(MetadataCache::Kept));
        assert!(a.files_read > 0 && b.files_read == 0);
        assert_eq!((b.reads, b.storage_ns), (0, 0));
        assert!(b.time_ns > 0 && b.time_ns < a.time_ns / 10, "{a:?} {b:?}");
        // After a reboot the second pass reads the metadata again, not the data.
        let (_, c) = passes_with(&mut hdd(), 96 << 20, skip(MetadataCache::Pass));
        assert!(
            c.reads > 0 && c.storage_ns > 0 && c.files_read == 0,
            "{c:?}"
        );
        assert!(c.read_bytes < a.read_bytes / 4, "{a:?} {c:?}");
    }

    #[test]
    fn a_skipping_second_pass_is_the_hosts_time_per_file() {
        // With the metadata kept and unchanged files skipped, the second pass is the host's
        // time per file over the set's files, whatever that time is.
        for file_ns in [20_000, HOST_FILE_NS, 120_000] {
            let host = ScanHost {
                metadata: MetadataCache::Kept,
                skip_unchanged: true,
                file_ns,
                read_bytes: READ_BYTES,
                qd: 1,
            };
            let mut dev = hdd();
            let cap = dev.capacity_bytes();
            let set = FileSet::generate(&mut SeedTree::new(3).stream(), 96 << 20, 0, cap);
            let (_, b) = passes_with(&mut dev, 96 << 20, host);
            assert_eq!(b.time_ns, set.files.len() as u64 * file_ns, "{b:?}");
        }
    }

    #[test]
    fn the_scanner_s_read_size_and_depth_change_its_reads() {
        // Larger reads: the same bytes in fewer requests. More reads of a file in flight: the
        // disk's queue orders them, and the pass waits less for the same reads.
        let host = |read_bytes, qd| ScanHost {
            read_bytes,
            qd,
            ..BARE
        };
        let (a, _) = passes_with(&mut hdd(), 96 << 20, BARE);
        let (big, _) = passes_with(&mut hdd(), 96 << 20, host(1 << 20, 1));
        assert_eq!(
            (big.read_bytes, big.files_read),
            (a.read_bytes, a.files_read)
        );
        assert!(big.reads < a.reads * 3 / 4, "1 MiB {big:?}, 64 KiB {a:?}");
        let (deep, _) = passes_with(&mut hdd(), 96 << 20, host(READ_BYTES, 8));
        assert_eq!((deep.reads, deep.read_bytes), (a.reads, a.read_bytes));
        assert!(deep.storage_ns < a.storage_ns, "QD8 {deep:?}, QD1 {a:?}");
        // Four-KiB reads one at a time: every cluster its own request, and a turn of the
        // disk lost between requests the buffer does not hold.
        let (small, _) = passes_with(&mut hdd(), 96 << 20, host(4096, 1));
        assert!(small.reads > 4 * a.reads, "4 KiB {small:?}, 64 KiB {a:?}");
        assert!(small.time_ns > a.time_ns, "4 KiB {small:?}, 64 KiB {a:?}");
    }

    #[test]
    fn a_set_that_fits_the_cache_is_scanned_much_faster_the_second_time() {
        let (a, b) = two_passes(&mut small_cache("512MB"), 96 << 20);
        assert!(b < a / 2.0, "pass 1 {a} s, pass 2 {b} s");
    }

    #[test]
    fn the_disk_alone_takes_as_long_the_second_time() {
        // 96 MiB: more than the disk's 64 MiB buffer keeps.
        let (a, b) = two_passes(&mut hdd(), 96 << 20);
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
        // The same set in front of a cache it fits gains more than twice as much.
        let (c, d) = two_passes(&mut small_cache("1GB"), 384 << 20);
        assert!(d < c / 2.0, "pass 1 {c} s, pass 2 {d} s");
        assert!(
            a / b < 0.5 * (c / d),
            "64 MB: pass 1 {a} s, pass 2 {b} s; 1 GB: pass 1 {c} s, pass 2 {d} s"
        );
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
