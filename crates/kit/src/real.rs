//! Suites on real storage: each job step runs through the real fio against a block device or
//! a file, and fio's json+ report is read back into a [`RunResult`], so the suite's measures,
//! tables and charts work unchanged. Purges and idle periods can only be approximated on real
//! hardware; every approximation is noted in the device's report (`docs/real.md`).
//!
//! Safety: a target that looks like it holds data (a partition table or a file-system
//! signature, or a non-empty file flashlab did not create) is refused unless the caller
//! passes `destroy_data`; a mounted, swapped-on or otherwise held block device is always
//! refused.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flashlab_report::{FioJsonError, RunResult};

/// Longest idle period slept by default on a real target: suites ask for minutes of idle
/// time that a simulated drive spends in no wall-clock time.
pub const DEFAULT_MAX_IDLE_NS: u64 = 10_000_000_000;

/// How to reach and treat real targets.
#[derive(Debug, Clone, PartialEq)]
pub struct RealOptions {
    /// The fio binary (a path, or a name looked up in `PATH`).
    pub fio: PathBuf,
    /// Allow overwriting a target that looks like it holds data.
    pub destroy_data: bool,
    /// Create (or resize) a regular-file target to this many bytes.
    pub create_size_bytes: Option<u64>,
    /// Longest real sleep for an idle step.
    pub max_idle_ns: u64,
}

impl Default for RealOptions {
    fn default() -> Self {
        Self {
            fio: PathBuf::from("fio"),
            destroy_data: false,
            create_size_bytes: None,
            max_idle_ns: DEFAULT_MAX_IDLE_NS,
        }
    }
}

/// Why a real target cannot be used or a step on it failed.
#[derive(Debug, thiserror::Error)]
pub enum RealError {
    #[error("target {path}: {error}")]
    Open { path: String, error: std::io::Error },
    #[error("target {path}: not a regular file or a block device")]
    NotFileOrDevice { path: String },
    #[error("target {path} holds {found}; refusing to overwrite it (pass --destroy-data to run on it anyway)")]
    Signature { path: String, found: String },
    #[error("target {path} is in use ({what}); refusing to write to it")]
    InUse { path: String, what: String },
    #[error("target {path} exists and is not empty ({size_bytes} bytes) and flashlab did not create it; pass --destroy-data to overwrite it")]
    NotEmpty { path: String, size_bytes: u64 },
    #[error("target {path} is empty; give its size with --target-size (e.g. 1GiB)")]
    NoSize { path: String },
    #[error("target {path} does not exist; pass --target-size (e.g. 1GiB) to create it")]
    Missing { path: String },
    #[error("--target-size applies to regular files; {path} is a block device")]
    SizeOnDevice { path: String },
    #[error("target {path}: {need_bytes} bytes asked but only {free_bytes} bytes free on its file system")]
    NoSpace {
        path: String,
        need_bytes: u64,
        free_bytes: u64,
    },
    #[error("{what} {path}: {error}")]
    Io {
        what: &'static str,
        path: String,
        error: std::io::Error,
    },
    #[error("cannot run `{command}`: {error} (install fio or pass --fio PATH)")]
    FioMissing {
        command: String,
        error: std::io::Error,
    },
    #[error("`{command}` failed ({status}): {stderr}")]
    FioFailed {
        command: String,
        status: String,
        stderr: String,
    },
    #[error("`{command}`: {error}")]
    FioOutput {
        command: String,
        error: FioJsonError,
    },
    #[error("suite {suite} needs a simulated drive (its internal counters, or drives and systems it builds); on real targets run {on_real}")]
    Unsupported {
        suite: &'static str,
        /// The suites that do run there, from the registry.
        on_real: String,
    },
}

impl RealError {
    /// True when the target or an option is at fault (the CLI exits with 2).
    pub fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            RealError::Io { .. }
                | RealError::FioMissing { .. }
                | RealError::FioFailed { .. }
                | RealError::FioOutput { .. }
        )
    }
}

/// What a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    File,
    BlockDevice,
}

/// A real block device or file that suites run on through fio.
#[derive(Debug)]
pub struct RealTarget {
    path: PathBuf,
    kind: TargetKind,
    size_bytes: u64,
    ioengine: &'static str,
    direct: bool,
    fio: PathBuf,
    max_idle_ns: u64,
    /// Job files and fio reports of the steps.
    work_dir: PathBuf,
    /// flashlab created the file: it removes it again when done.
    created: bool,
    /// How the run differs from the suite as specified: buffered I/O, approximated steps.
    pub notes: Vec<String>,
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> RealError + 'a {
    move |error| RealError::Io {
        what,
        path: path.display().to_string(),
        error,
    }
}

impl RealTarget {
    /// Check `path` and get it ready: safety checks, size (creating the file when asked),
    /// fio's engine and whether direct I/O works there.
    pub fn open(path: &Path, options: &RealOptions) -> Result<RealTarget, RealError> {
        let shown = path.display().to_string();
        let (kind, created) = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if options.create_size_bytes.is_none() {
                    return Err(RealError::Missing { path: shown });
                }
                (TargetKind::File, true)
            }
            Err(error) => return Err(RealError::Open { path: shown, error }),
            Ok(m) if m.file_type().is_block_device() => (TargetKind::BlockDevice, false),
            Ok(m) if m.is_file() => (TargetKind::File, false),
            Ok(_) => return Err(RealError::NotFileOrDevice { path: shown }),
        };
        if kind == TargetKind::BlockDevice {
            if options.create_size_bytes.is_some() {
                return Err(RealError::SizeOnDevice { path: shown });
            }
            check_not_in_use(path)?;
        }
        if !created {
            let mut f = File::open(path).map_err(|error| RealError::Open {
                path: shown.clone(),
                error,
            })?;
            if let Some(found) = signature(&mut f).map_err(io_err("reading", path))? {
                if !options.destroy_data {
                    return Err(RealError::Signature { path: shown, found });
                }
            }
        }
        let size_bytes = match (kind, options.create_size_bytes) {
            (TargetKind::File, Some(size)) => {
                prepare_file(path, size, created, options.destroy_data)?;
                size
            }
            _ => {
                let mut f = File::open(path).map_err(io_err("opening", path))?;
                let size = f.seek(SeekFrom::End(0)).map_err(io_err("sizing", path))?;
                if size == 0 {
                    return Err(RealError::NoSize { path: shown });
                }
                if kind == TargetKind::File && !options.destroy_data {
                    return Err(RealError::NotEmpty {
                        path: shown,
                        size_bytes: size,
                    });
                }
                size
            }
        };
        let ioengine = pick_engine(&options.fio)?;
        let direct = direct_io_works(path);
        let mut notes = Vec::new();
        if !direct {
            notes.push(
                "direct I/O is not supported here (e.g. tmpfs): jobs ran buffered (direct=0), \
                 so the page cache is measured too"
                    .to_string(),
            );
        }
        if ioengine != "libaio" {
            notes.push(format!(
                "fio has no libaio: jobs ran with ioengine={ioengine}"
            ));
        }
        Ok(RealTarget {
            path: path.to_path_buf(),
            kind,
            size_bytes,
            ioengine,
            direct,
            fio: options.fio.clone(),
            max_idle_ns: options.max_idle_ns,
            work_dir: make_work_dir().map_err(io_err("creating a work directory for", path))?,
            created,
            notes,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn kind(&self) -> TargetKind {
        self.kind
    }
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }
    pub fn ioengine(&self) -> &'static str {
        self.ioengine
    }
    pub fn direct(&self) -> bool {
        self.direct
    }

    /// The name the report shows for this target.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// One line for the report: what the target is and what was approximated.
    pub fn summary(&self) -> String {
        let kind = match self.kind {
            TargetKind::File => "file",
            TargetKind::BlockDevice => "block device",
        };
        let mut s = format!(
            "real {kind} through fio (ioengine={}, direct={}, {} bytes)",
            self.ioengine,
            u8::from(self.direct),
            self.size_bytes
        );
        for n in &self.notes {
            s.push_str("; ");
            s.push_str(n);
        }
        s
    }

    /// The suite's job text made to run on this target: its file, engine and direct flag,
    /// and times in units fio reads (fio takes no `ns` suffix).
    pub fn job_text(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 128);
        let globals = format!(
            "filename={}\nsize={}\n",
            fio_escape(&self.path),
            self.size_bytes
        );
        let mut placed = false;
        for line in text.lines() {
            let t = line.trim();
            let key = t.split('=').next().unwrap_or("").trim();
            match key {
                "ioengine" => out.push_str(&format!("ioengine={}", self.ioengine)),
                "direct" => out.push_str(&format!("direct={}", u8::from(self.direct))),
                "filename" => continue,
                _ => out.push_str(&ns_to_us(line)),
            }
            out.push('\n');
            if t == "[global]" && !placed {
                out.push_str(&globals);
                placed = true;
            }
        }
        if !placed {
            out = format!("[global]\n{globals}\n{out}");
        }
        out
    }

    /// Run one job through fio: the job file and the report stay in the work directory.
    /// Returns the parsed result and fio's JSON as it printed it.
    pub fn run_job(&self, step: &str, text: &str) -> Result<(RunResult, String), RealError> {
        let job = self.work_dir.join(format!("{step}.fio"));
        let out = self.work_dir.join(format!("{step}.json"));
        std::fs::write(&job, self.job_text(text)).map_err(io_err("writing", &job))?;
        let mut cmd = Command::new(&self.fio);
        cmd.arg("--output-format=json+")
            .arg(format!("--output={}", out.display()))
            .arg(&job);
        let command = format!("{cmd:?}").replace('"', "");
        let output = cmd.output().map_err(|error| RealError::FioMissing {
            command: command.clone(),
            error,
        })?;
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        if !output.status.success() {
            return Err(RealError::FioFailed {
                command,
                status: output.status.to_string(),
                stderr,
            });
        }
        let json = std::fs::read_to_string(&out).map_err(io_err("reading", &out))?;
        let run = flashlab_report::parse_fio_json(&json)
            .map_err(|error| RealError::FioOutput { command, error })?;
        Ok((run, json))
    }

    /// Discard the target's data as well as the platform allows; returns what was done.
    pub fn purge(&self) -> String {
        match self.kind {
            TargetKind::File => match punch_hole(&self.path, self.size_bytes) {
                Ok(()) => "purge approximated: the file's blocks were deallocated (hole punched)"
                    .to_string(),
                Err(e) => format!("purge approximated: deallocating the file failed ({e}); no-op"),
            },
            TargetKind::BlockDevice => match Command::new("blkdiscard").arg(&self.path).output() {
                Ok(o) if o.status.success() => {
                    "purge approximated: blkdiscard of the whole device (not a secure erase)"
                        .to_string()
                }
                Ok(o) => format!(
                    "purge was a no-op: blkdiscard failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
                Err(e) => format!("purge was a no-op: blkdiscard unavailable ({e})"),
            },
        }
    }

    /// Sleep for an idle step, at most `max_idle_ns`; returns the ns slept and a note when
    /// cut short.
    pub fn idle(&self, asked_ns: u64) -> (u64, Option<String>) {
        let slept = asked_ns.min(self.max_idle_ns);
        std::thread::sleep(Duration::from_nanos(slept));
        let note = (slept < asked_ns).then(|| {
            format!(
                "idle approximated: slept {:.1} s of the {:.1} s asked (--max-idle)",
                slept as f64 / 1e9,
                asked_ns as f64 / 1e9
            )
        });
        (slept, note)
    }
}

impl Drop for RealTarget {
    fn drop(&mut self) {
        // Best effort: leftovers in the temp dir or a test file are harmless.
        let _ = std::fs::remove_dir_all(&self.work_dir);
        if self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Wall-clock ns since `start`, for the step records of a real target.
pub fn elapsed_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// fio reads `:` in a filename as a separator of several files.
fn fio_escape(path: &Path) -> String {
    path.display().to_string().replace(':', "\\:")
}

/// `key=123ns` → `key=1us` (rounded up): fio has no nanosecond suffix and would misread one.
fn ns_to_us(line: &str) -> String {
    let Some((key, value)) = line.split_once('=') else {
        return line.to_string();
    };
    let v = value.trim();
    match v.strip_suffix("ns").and_then(|n| n.parse::<u64>().ok()) {
        Some(ns) => format!("{key}={}us", ns.div_ceil(1000).max(1)),
        None => line.to_string(),
    }
}

fn make_work_dir() -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "flashlab-real-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Create or resize the file to `size` after checking free space.
fn prepare_file(path: &Path, size: u64, created: bool, destroy: bool) -> Result<(), RealError> {
    let shown = path.display().to_string();
    let current = if created {
        0
    } else {
        std::fs::metadata(path)
            .map_err(io_err("reading", path))?
            .len()
    };
    if current > 0 && !destroy {
        return Err(RealError::NotEmpty {
            path: shown,
            size_bytes: current,
        });
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let free = free_bytes(&dir).map_err(io_err("checking free space of", &dir))?;
    if size.saturating_sub(current) > free {
        return Err(RealError::NoSpace {
            path: shown,
            need_bytes: size,
            free_bytes: free,
        });
    }
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|error| RealError::Open {
            path: shown.clone(),
            error,
        })?;
    f.set_len(size).map_err(io_err("sizing", path))?;
    Ok(())
}

fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: statvfs fills the struct it is given; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

fn punch_hole(path: &Path, size: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let f = OpenOptions::new().write(true).open(path)?;
    // SAFETY: fallocate on an open descriptor; failure is reported through errno.
    let rc = unsafe {
        libc::fallocate(
            f.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            0,
            size as libc::off_t,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    // File systems without hole punching: truncate and extend frees the blocks too.
    f.set_len(0)?;
    f.set_len(size)
}

/// fio's engine list has libaio on Linux builds with it; psync works everywhere.
fn pick_engine(fio: &Path) -> Result<&'static str, RealError> {
    let command = format!("{} --enghelp", fio.display());
    let out = Command::new(fio)
        .arg("--enghelp")
        .output()
        .map_err(|error| RealError::FioMissing {
            command: command.clone(),
            error,
        })?;
    if !out.status.success() {
        return Err(RealError::FioFailed {
            command,
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let list = String::from_utf8_lossy(&out.stdout);
    Ok(if list.lines().any(|l| l.trim() == "libaio") {
        "libaio"
    } else {
        "psync"
    })
}

fn direct_io_works(path: &Path) -> bool {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .is_ok()
}

/// Bytes read from the start of a target to look for signatures (btrfs's is at 64 KiB).
const PROBE_BYTES: usize = 70 * 1024;

/// The first partition-table or file-system signature found in `f`, named.
fn signature(f: &mut File) -> std::io::Result<Option<String>> {
    let mut buf = Vec::with_capacity(PROBE_BYTES);
    f.take(PROBE_BYTES as u64).read_to_end(&mut buf)?;
    Ok(find_signature(&buf))
}

/// Signatures by offset, most specific first (FAT and NTFS boot sectors end in 0x55AA too).
pub fn find_signature(b: &[u8]) -> Option<String> {
    let at = |off: usize, magic: &[u8]| b.get(off..off + magic.len()) == Some(magic);
    let checks: [(bool, &str); 16] = [
        (
            at(0, b"LUKS\xba\xbe"),
            "a LUKS encrypted volume (\"LUKS\\xba\\xbe\" at byte 0)",
        ),
        (at(0, b"XFSB"), "an XFS file system (\"XFSB\" at byte 0)"),
        (
            at(65600, b"_BHRfS_M"),
            "a btrfs file system (\"_BHRfS_M\" at byte 65600)",
        ),
        (
            at(1080, &[0x53, 0xEF]),
            "an ext2/ext3/ext4 file system (magic 0xEF53 at byte 1080)",
        ),
        (
            at(1024, &[0x10, 0x20, 0xF5, 0xF2]),
            "an F2FS file system (magic 0xF2F52010 at byte 1024)",
        ),
        (
            at(4086, b"SWAPSPACE2") || at(4086, b"SWAP-SPACE"),
            "a swap area (\"SWAPSPACE2\" at byte 4086)",
        ),
        (
            at(65526, b"SWAPSPACE2"),
            "a swap area (\"SWAPSPACE2\" at byte 65526)",
        ),
        (at(0, b"hsqs"), "a squashfs image (\"hsqs\" at byte 0)"),
        (
            at(32769, b"CD001"),
            "an ISO 9660 file system (\"CD001\" at byte 32769)",
        ),
        (
            at(512, b"LABELONE"),
            "an LVM physical volume (\"LABELONE\" at byte 512)",
        ),
        (
            at(512, b"EFI PART") || at(4096, b"EFI PART"),
            "a GPT partition table (\"EFI PART\" at byte 512)",
        ),
        (
            at(3, b"NTFS    "),
            "an NTFS file system (\"NTFS\" at byte 3)",
        ),
        (
            at(3, b"EXFAT   "),
            "an exFAT file system (\"EXFAT\" at byte 3)",
        ),
        (
            at(82, b"FAT32") || at(54, b"FAT12") || at(54, b"FAT16"),
            "a FAT file system (\"FAT\" in its boot sector)",
        ),
        (
            at(510, &[0x55, 0xAA]),
            "an MBR partition table (signature 0x55AA at byte 510)",
        ),
        (false, ""),
    ];
    checks
        .iter()
        .find(|(hit, _)| *hit)
        .map(|(_, what)| (*what).to_string())
}

/// Refuse a block device that is mounted (itself or a partition), active swap, or held by
/// another driver (device mapper, RAID).
fn check_not_in_use(path: &Path) -> Result<(), RealError> {
    let shown = path.display().to_string();
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let Some(name) = canon.file_name().map(|n| n.to_string_lossy().to_string()) else {
        return Ok(());
    };
    let sys = Path::new("/sys/class/block").join(&name);
    let mut names = vec![name.clone()];
    if let Ok(entries) = std::fs::read_dir(&sys) {
        let mut parts: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().join("partition").exists())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        parts.sort();
        names.extend(parts);
    }
    let in_use = |what: String| RealError::InUse {
        path: shown.clone(),
        what,
    };
    let dev_name = |source: &str| -> Option<String> {
        let p = std::fs::canonicalize(source).ok()?;
        Some(p.file_name()?.to_string_lossy().to_string())
    };
    for (file, label) in [("/proc/self/mounts", "mounted on"), ("/proc/swaps", "swap")] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines() {
            let mut fields = line.split_whitespace();
            let (Some(source), target) = (fields.next(), fields.next()) else {
                continue;
            };
            if !source.starts_with('/') {
                continue;
            }
            if let Some(n) = dev_name(source) {
                if names.contains(&n) {
                    let at = if label == "swap" {
                        "active swap".to_string()
                    } else {
                        format!("/dev/{n} mounted on {}", target.unwrap_or("?"))
                    };
                    return Err(in_use(at));
                }
            }
        }
    }
    for n in &names {
        let holders = Path::new("/sys/class/block").join(n).join("holders");
        if let Ok(entries) = std::fs::read_dir(&holders) {
            let mut held: Vec<String> = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect();
            held.sort();
            if let Some(h) = held.first() {
                return Err(in_use(format!("/dev/{n} is held by {h}")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(off: usize, magic: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; PROBE_BYTES];
        b[off..off + magic.len()].copy_from_slice(magic);
        b
    }

    #[test]
    fn signatures_are_named() {
        assert_eq!(find_signature(&vec![0u8; PROBE_BYTES]), None);
        let cases: [(usize, &[u8], &str); 7] = [
            (1080, &[0x53, 0xEF], "ext4"),
            (0, b"XFSB", "XFS"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (512, b"EFI PART", "GPT"),
            (510, &[0x55, 0xAA], "MBR"),
        ];
        for (off, magic, name) in cases {
            let found = find_signature(&with(off, magic)).unwrap();
            assert!(found.contains(name), "{name}: {found}");
        }
        // An NTFS boot sector ends in 0x55AA as well: it is named NTFS, not MBR.
        let mut b = with(510, &[0x55, 0xAA]);
        b[3..11].copy_from_slice(b"NTFS    ");
        assert!(find_signature(&b).unwrap().contains("NTFS"));
        // A short file cannot hold signatures past its end.
        assert_eq!(find_signature(&[0u8; 100]), None);
    }

    #[test]
    fn nanosecond_times_become_microseconds() {
        assert_eq!(ns_to_us("runtime=1000000000ns"), "runtime=1000000us");
        assert_eq!(ns_to_us("ramp_time=1500ns"), "ramp_time=2us");
        assert_eq!(ns_to_us("size=100%"), "size=100%");
        assert_eq!(ns_to_us("rw=randrw"), "rw=randrw");
    }
}
