//! Temporary files beside the files flashlab writes: their names, the ones under way, their
//! removal when the process is interrupted, and the removal of those a stopped process left.
//!
//! A temporary file is named `.<target name>.<host>-<pid>-<serial>.partial` in the target's
//! directory: `<host>` is a hash of the machine's name (a directory may be shared by
//! processes on several machines, whose process ids say nothing here), and the target's
//! name is cut so the whole name stays within a file system's 255 bytes.
//!
//! - [`begin`] makes one and records it; [`end`] forgets it once renamed or removed.
//! - [`clean_up_on_signals`] (called once, before any other thread starts) has SIGINT,
//!   SIGTERM and SIGHUP received by one thread that removes every recorded temporary file,
//!   then ends the process as the signal would have. No handler runs inside a signal: the
//!   removal happens on an ordinary thread.
//! - [`remove_stale`] removes, once per directory and process, the temporary files there of
//!   this machine's processes that are no longer running.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Longest part of a target's name kept in its temporary file's name: with the prefix dot
/// and the suffix (`.<8 hex>-<pid>-<serial>.partial`, at most 50 bytes) the name stays
/// under 255 bytes, the limit of common file systems.
const MAX_NAME_BYTES: usize = 200;

static SERIAL: AtomicU64 = AtomicU64::new(0);

/// Temporary files being written now, removed when a signal ends the process.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Directories already cleared of stale temporary files by this process.
static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// A hash of this machine's name (FNV-1a, 32 bits), as hex: which machine made a
/// temporary file.
fn host_tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| std::fs::read_to_string("/etc/hostname"))
            .unwrap_or_default();
        let mut h: u32 = 0x811c_9dc5;
        for b in name.trim().bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        format!("{h:08x}")
    })
}

/// `name` cut to at most `max` bytes at a character boundary.
fn cut(name: &str, max: usize) -> &str {
    if name.len() <= max {
        return name;
    }
    let mut end = max;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// A temporary file's name beside `target` no one else uses.
pub fn name_beside(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
    let temp = format!(
        ".{}.{}-{}-{serial}.partial",
        cut(&name, MAX_NAME_BYTES),
        host_tag(),
        std::process::id()
    );
    match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(temp),
        _ => PathBuf::from(temp),
    }
}

/// The machine tag and process id of a temporary file's name, when `name` is one.
fn writer_of(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix('.')?.strip_suffix(".partial")?;
    let (_, writer) = rest.rsplit_once('.')?;
    let mut parts = writer.split('-');
    let (host, pid, serial) = (parts.next()?, parts.next()?, parts.next()?);
    let hex = host.len() == 8 && host.bytes().all(|b| b.is_ascii_hexdigit());
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !hex || !digits(pid) || !digits(serial) || parts.next().is_some() {
        return None;
    }
    Some((host, pid.parse().ok()?))
}

/// The target name of a temporary file's name and whether its writer stopped (a process
/// of this machine no longer running), when `name` is one: for a directory's owner that
/// counts or removes temporary files of its own (the precondition cache).
pub fn temporary_of(name: &str) -> Option<(&str, bool)> {
    let (host, pid) = writer_of(name)?;
    let target = name
        .strip_prefix('.')?
        .rsplit_once('.')?
        .0
        .rsplit_once('.')?
        .0;
    Some((target, host == host_tag() && !alive(pid)))
}

/// Whether process `pid` of this machine is running (or cannot be told not to be).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes, once per directory in this process, the temporary files in `dir` that this
/// machine's stopped processes left: the next run writing there clears them.
pub fn remove_stale(dir: &Path) {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let key = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
        if !swept.get_or_insert_with(HashSet::new).insert(key) {
            return;
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((host, pid)) = writer_of(&name) else {
            continue;
        };
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if regular && host == host_tag() && !alive(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Makes the temporary file `path` (which must not exist) and records it, so an interrupt
/// removes it.
pub fn begin(path: &Path) -> std::io::Result<File> {
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    pending.push(path.to_path_buf());
    Ok(file)
}

/// Runs `finish` (the rename or removal of the temporary file `path`) and forgets `path`,
/// with no interrupt's removal between the two.
pub fn end<T>(path: &Path, finish: impl FnOnce() -> T) -> T {
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    let out = finish();
    pending.retain(|p| p != path);
    out
}

/// Ends the process quietly, as other command-line tools do, when it writes to a pipe whose
/// reader has gone (`flashlab ... | head`): SIGPIPE's default action instead of a write
/// error at every print. Not for a server, whose clients may go at any time.
pub fn end_on_closed_pipes() {
    // SAFETY: sets the process's disposition of one signal to its default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Has SIGINT, SIGTERM and SIGHUP taken by one thread that removes the temporary files
/// under way and then ends the process by the same signal. Call it first thing in `main`:
/// the signals are blocked in the calling thread, and threads started later inherit that.
pub fn clean_up_on_signals() {
    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    // SAFETY: the set is initialised by sigemptyset before use; pthread_sigmask only
    // changes this thread's mask.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            let mut signal: libc::c_int = 0;
            // SAFETY: `set` is a valid signal set; sigwait writes the signal taken.
            if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
                continue;
            }
            remove_pending_and_die(signal);
        });
    if spawned.is_err() {
        // SAFETY: as above; without the thread the signals act as they did before.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// Removes every temporary file under way, then ends the process by `signal` (its default
/// action), the lock held so no write renames or starts another meanwhile.
fn remove_pending_and_die(signal: libc::c_int) -> ! {
    let pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    for path in pending.iter() {
        let _ = std::fs::remove_file(path);
    }
    // SAFETY: restores the default action and unblocks the signal in this thread, then
    // raises it here, which ends the process as the signal would have.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    std::process::exit(128 + signal);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_name_keeps_its_temporary_within_255_bytes() {
        let long = "s".repeat(250);
        let temp = name_beside(Path::new(&long));
        let name = temp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.len() <= 255, "{}", name.len());
        assert_eq!(writer_of(&name).map(|w| w.1), Some(std::process::id()));
        let multi = "é".repeat(200);
        let temp = name_beside(Path::new(&multi));
        assert!(temp.as_os_str().len() <= 255);
    }

    #[test]
    fn only_names_of_the_temporary_form_have_a_writer() {
        assert_eq!(
            writer_of(".a.state.0badcafe-12-3.partial"),
            Some(("0badcafe", 12))
        );
        assert_eq!(
            temporary_of(".a.state.0badcafe-12-3.partial").map(|t| t.0),
            Some("a.state")
        );
        for name in [
            "a.state",
            ".a.state.12-3.partial",
            ".a.state.0badcafe-x-3.partial",
            ".a.state.0badcafe-12-3-4.partial",
            ".partial",
        ] {
            assert_eq!(writer_of(name), None, "{name}");
        }
    }

    #[test]
    fn stale_temporaries_of_stopped_processes_go_and_others_stay() {
        let dir = std::env::temp_dir().join(format!("flashlab-temp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A process that has ended: its id is no longer running.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let tag = host_tag();
        let stale = format!(".x.state.{tag}-{dead}-0.partial");
        let mine = format!(".x.state.{tag}-{}-0.partial", std::process::id());
        let other_host = format!(".x.state.00000000-{dead}-0.partial");
        let user = ".x.state.partial".to_string();
        for n in [&stale, &mine, &other_host, &user] {
            std::fs::write(dir.join(n), "x").unwrap();
        }
        remove_stale(&dir);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![mine, other_host, user];
        want.sort();
        assert_eq!(left, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
