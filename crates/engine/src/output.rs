//! Writing a file a user names (a state, `--output`, `--stats`, a sweep's point, a report):
//! one rule for all of them, so nothing flashlab did not create is overwritten.
//!
//! - [`OutputFile::check`] runs before the work: the path is a regular file (links
//!   followed) or nothing, and its directory takes a new file. A device, FIFO, socket or
//!   directory at the path, or a link to one or to nothing, is refused.
//! - [`OutputFile::write`] writes a temporary file beside the target and renames it over the
//!   target once complete, after checking again that the target is a regular file or absent
//!   and that no other process wrote it meanwhile. On any failure, and on an interrupt
//!   ([`crate::temp`]), the temporary file is removed: nothing is left behind.
//! - [`RunFiles`](crate::run_files::RunFiles) registers a run's inputs and outputs before the work and refuses any
//!   output that is also an input or another output.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Why a file cannot be written: the option, the path (as an excerpt) and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputError {
    pub message: String,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OutputError {}

/// A checked output path: where the data goes (the link's target when the user named a link
/// to a regular file) and how to name it in messages.
#[derive(Debug, Clone)]
pub struct OutputFile {
    option: String,
    shown: String,
    target: PathBuf,
    /// The target as this process last saw it (when checked, then after each write): a
    /// target another process wrote meanwhile is not replaced.
    seen: std::sync::Arc<std::sync::Mutex<Option<Stamp>>>,
}

/// What a path holds, when it is not something flashlab replaces.
fn refused_kind(t: std::fs::FileType) -> Option<&'static str> {
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// A name beside `target` no one else uses ([`crate::temp::name_beside`]).
fn temp_beside(target: &Path) -> PathBuf {
    crate::temp::name_beside(target)
}

/// What a file was when checked: a file written by another process meanwhile differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified_ns: i128,
}

/// The stamp of the file at `path`, links followed; `None` when nothing is there.
fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let (dev, ino) = {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    };
    #[cfg(not(unix))]
    let (dev, ino) = (0, 0);
    let modified_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    Some(Stamp {
        dev,
        ino,
        len: meta.len(),
        modified_ns,
    })
}

impl OutputFile {
    /// Checks that `path` (named by `option` in messages) can be written by this rule,
    /// without changing it: a regular file that may be opened for writing, or no file, in a
    /// directory where a new file can be made.
    pub fn check(option: &str, path: &Path) -> Result<OutputFile, OutputError> {
        let shown = crate::input::excerpt(&path.to_string_lossy()).into_owned();
        let refuse = |why: String| OutputError {
            message: format!("{option} {shown}: {why}"),
        };
        if path.as_os_str().is_empty() {
            return Err(refuse("an empty path".into()));
        }
        let mut target = path.to_path_buf();
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => match std::fs::metadata(path) {
                Ok(to) => {
                    if let Some(kind) = refused_kind(to.file_type()) {
                        return Err(refuse(format!(
                            "it is a link to {kind}; flashlab writes only regular files (name a new path or a regular file it may replace)"
                        )));
                    }
                    target = std::fs::canonicalize(path).map_err(|e| refuse(e.to_string()))?;
                }
                Err(_) => {
                    return Err(refuse(
                        "it is a link to nothing; name a new path or a regular file".into(),
                    ))
                }
            },
            Ok(meta) => {
                if let Some(kind) = refused_kind(meta.file_type()) {
                    return Err(refuse(format!(
                        "it is {kind}; flashlab writes only regular files (name a new path or a regular file it may replace)"
                    )));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(refuse(e.to_string())),
        }
        if target.exists() {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|e| refuse(format!("cannot be written: {e}")))?;
        }
        // The directory must take a new file (the temporary one): made and removed now.
        let probe = temp_beside(&target);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
        {
            Ok(_) => {
                let _ = std::fs::remove_file(&probe);
            }
            Err(e) => {
                let dir = target
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                return Err(refuse(format!(
                    "cannot create a file in {}: {e}",
                    crate::input::excerpt(&dir.to_string_lossy())
                )));
            }
        }
        let seen = std::sync::Arc::new(std::sync::Mutex::new(stamp(&target)));
        Ok(OutputFile {
            option: option.to_string(),
            shown,
            target,
            seen,
        })
    }

    /// The path the data goes to.
    pub fn path(&self) -> &Path {
        &self.target
    }

    fn fail(&self, why: impl std::fmt::Display) -> OutputError {
        OutputError {
            message: format!("{} {}: {why}", self.option, self.shown),
        }
    }

    /// Writes the file with `body` into a temporary file beside it, synced, then renamed
    /// over the target (checked again to be a regular file or nothing). On any failure the
    /// temporary file is removed and the target is as it was. A target that another process
    /// made or changed since this one checked or last wrote it is not replaced: concurrent
    /// runs naming one file do not overwrite each other without a word.
    pub fn write<E: std::fmt::Display>(
        &self,
        body: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
    ) -> Result<(), OutputError> {
        if let Some(dir) = self.target.parent() {
            crate::temp::remove_stale(dir);
        }
        let temp = temp_beside(&self.target);
        let file = crate::temp::begin(&temp).map_err(|e| self.fail(e))?;
        let filled = (|| {
            let mut out = BufWriter::with_capacity(1 << 20, file);
            body(&mut out).map_err(|e| self.fail(e))?;
            out.flush().map_err(|e| self.fail(e))?;
            let file = out.into_inner().map_err(|e| self.fail(e.into_error()))?;
            file.sync_all().map_err(|e| self.fail(e))
        })();
        crate::temp::end(&temp, || {
            let result = filled.and_then(|()| self.put_in_place(&temp));
            if result.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
            result
        })
    }

    /// Moves the written `temp` to the target when the target is as this process last saw
    /// it: absent (then only if still absent, atomically), or the same file unchanged.
    fn put_in_place(&self, temp: &Path) -> Result<(), OutputError> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match std::fs::symlink_metadata(&self.target) {
            Ok(meta) => {
                if let Some(kind) = refused_kind(meta.file_type()) {
                    return Err(self.fail(format!("it became {kind} during the run; not replaced")));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.fail(e)),
        }
        let now = stamp(&self.target);
        if now != *seen {
            return Err(self.written_meanwhile());
        }
        if now.is_none() {
            match std::fs::hard_link(temp, &self.target) {
                Ok(()) => {
                    let _ = std::fs::remove_file(temp);
                    *seen = stamp(&self.target);
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(self.written_meanwhile())
                }
                // A file system without links: renamed, as over an existing file.
                Err(_) => {}
            }
        }
        std::fs::rename(temp, &self.target).map_err(|e| self.fail(e))?;
        *seen = stamp(&self.target);
        Ok(())
    }

    fn written_meanwhile(&self) -> OutputError {
        self.fail(
            "another process wrote it while this one ran; not replaced (give each run its own file)",
        )
    }

    /// Writes `bytes` as the whole file ([`OutputFile::write`]).
    pub fn write_bytes(&self, bytes: &[u8]) -> Result<(), OutputError> {
        self.write(|out| out.write_all(bytes))
    }
}

/// Checks that `dir` (named by `option`) is a directory, links followed, made when absent,
/// in which a new file can be made (checked by making and removing one): a regular file, a
/// FIFO, a device or a path under a file is refused with the reason. Run before the work
/// whose files go there.
pub fn check_dir(option: &str, dir: &Path) -> Result<(), OutputError> {
    let shown = crate::input::excerpt(&dir.to_string_lossy()).into_owned();
    let refuse = |why: String| OutputError {
        message: format!("{option} {shown}: {why}"),
    };
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(meta) => {
            let kind = match refused_kind(meta.file_type()) {
                None => "a regular file",
                Some(kind) => kind,
            };
            return Err(refuse(format!(
                "it is {kind}, not a directory; name a directory (made when absent)"
            )));
        }
        // Absent, or a path the system cannot look up (under a file): made, or the reason.
        Err(_) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| refuse(format!("cannot make the directory: {e}")))?;
        }
    }
    let probe = temp_beside(&dir.join("probe"));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        // Another process's probe of the same name (array tasks on other hosts share a
        // directory): the directory takes files.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(refuse(format!("cannot create a file in it: {e}"))),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("flashlab-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn mkfifo(p: &Path) {
        assert!(std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap()
            .success());
    }

    #[test]
    fn fifo_directory_and_links_to_them_are_refused() {
        let d = dir("kinds");
        let fifo = d.join("fifo");
        mkfifo(&fifo);
        let link = d.join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink(d.join("none"), &dangling).unwrap();
        for (p, want) in [
            (&fifo, "a FIFO"),
            (&d, "a directory"),
            (&link, "a link to a FIFO"),
            (&dangling, "a link to nothing"),
        ] {
            let e = OutputFile::check("--save-state", p).unwrap_err();
            assert!(e.message.contains(want), "{e}");
        }
        // Nothing was created beside them.
        let mut names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["dangling", "fifo", "link"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_link_to_a_file_writes_the_file_and_keeps_the_link() {
        let d = dir("link");
        let real = d.join("real");
        std::fs::write(&real, "old").unwrap();
        let link = d.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let out = OutputFile::check("--output", &link).unwrap();
        out.write_bytes(b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_nothing_and_the_old_file_whole() {
        let d = dir("fail");
        let path = d.join("x.state");
        std::fs::write(&path, "old").unwrap();
        let out = OutputFile::check("--save-state", &path).unwrap();
        let e = out
            .write(|w| {
                w.write_all(b"partial")?;
                Err(std::io::Error::other("disk full"))
            })
            .unwrap_err();
        assert!(e.message.contains("disk full"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_missing_directory_is_refused_before_the_work() {
        let e =
            OutputFile::check("--save-state", Path::new("/nonexistent-dir/x.state")).unwrap_err();
        assert!(e.message.contains("cannot create a file in"), "{e}");
    }
}
