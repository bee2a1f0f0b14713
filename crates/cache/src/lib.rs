//! The precondition cache (`docs/state.md`, "Precondition cache"): a device as its
//! preconditioning left it, with the session's record of the steps that made it, kept in a
//! directory so the next run on the same device, recipe and seed starts from there instead of
//! preconditioning again. This crate is the storage: keys, entry files, locks and eviction;
//! what a session records is its owner's ([`SessionRecord`]).
//!
//! An entry is one file, `<key>.state`: a u64 (little-endian) giving the length of the
//! session part, the session part (a state stream of kind [`STEPS_KIND`]: the key text, the
//! count of steps started, the session's record and the checkpoint's value), then the
//! device's own state file (`Ssd::save_state`, `System::save_state`). Both parts carry their
//! checksum; an entry that does not read back whole, whose kind is of another entry format,
//! or whose key text differs from the one asked for, is not used.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flashlab_device::{DeviceConfig, Ssd};
use flashlab_engine::state::{checksum_of, StateHeader};
use flashlab_engine::{SimTime, State, StateError, StateReader, StateWriter};
use flashlab_system::{System, SystemConfig};

/// Where the cache lives and which build fills it.
#[derive(Debug, Clone, PartialEq)]
pub struct StateCache {
    pub dir: PathBuf,
    /// Identifies the simulator build: part of every key, so a build never reads another's
    /// entries (its model may differ). The CLI uses a hash of its executable.
    pub build_id: u64,
    /// Bound on the directory's entries, in bytes: after a write, the least recently used
    /// entries are removed until the rest fit (the entry just written is kept).
    pub max_bytes: u64,
}

/// Default bound on the cache directory's entries: at default settings an entry is about a
/// model of at most `sim.max_memory` (3 GiB), and the largest suite keeps six
/// (`op-sweep`: a fill and rounds for each of three spare points, 19.3 GB on the 15.36 TB
/// D5-P5430), which a bound below that would evict while the suite runs.
pub const DEFAULT_MAX_CACHE_BYTES: u64 = 32 << 30;

/// `kind` of the session part's header, with the entry format's version: an entry of
/// another format is refused by its kind before any of it is read, and made again.
pub const STEPS_KIND: &str = "suite-steps-2";
/// Largest session part read: step records are job texts and fio JSON of tens of steps.
const MAX_STEPS_PART_BYTES: u64 = 256 << 20;
/// Longest string a session part may hold (a step's fio JSON).
pub const MAX_TEXT_BYTES: usize = 64 << 20;

/// A device a session built fresh from its description: what a cached state loads into.
#[derive(Debug, Clone)]
pub enum FreshDevice {
    Drive(Box<DeviceConfig>),
    System(Box<SystemConfig>),
}

impl FreshDevice {
    /// The description's part of the key: the kind and the configuration hash the state
    /// file checks.
    fn key_text(&self) -> Result<String, StateError> {
        Ok(match self {
            FreshDevice::Drive(c) => {
                format!("drive {:016x}", flashlab_device::drive_config_hash(c)?)
            }
            FreshDevice::System(c) => {
                format!("system {:016x}", flashlab_system::system_config_hash(c))
            }
        })
    }
}

/// A session's place in the cache: the key of the state it stands in (a fresh device, or
/// the end of the cached checkpoints so far).
#[derive(Debug, Clone)]
pub struct Chain {
    pub cache: StateCache,
    pub device: FreshDevice,
    /// Every input that made the device's state so far, as text; its hash names the entry.
    pub key_text: String,
}

impl Chain {
    /// The chain of a device built fresh with `device_seed`, for a session named `name`
    /// whose steps derive their streams from `suite_seed`.
    pub fn fresh(
        cache: &StateCache,
        device: FreshDevice,
        device_seed: u64,
        suite_seed: u64,
        name: &str,
        compressible_percent: Option<u8>,
    ) -> Option<Chain> {
        let device_text = device.key_text().ok()?;
        let key_text = format!(
            "flashlab {} build {:016x}\n{device_text} seed {device_seed}\nsession '{name}' seed {suite_seed} compressible {compressible_percent:?}\n",
            env!("CARGO_PKG_VERSION"),
            cache.build_id,
        );
        Some(Chain {
            cache: cache.clone(),
            device,
            key_text,
        })
    }

    /// The chain after a checkpoint described by `recipe`.
    pub fn then(&self, recipe: &str) -> Chain {
        Chain {
            key_text: format!("{}{recipe}\n", self.key_text),
            ..self.clone()
        }
    }

    pub fn path(&self) -> PathBuf {
        self.cache.dir.join(format!(
            "{:016x}.state",
            checksum_of(self.key_text.as_bytes())
        ))
    }
}

/// A checkpoint's value, kept in the entry beside the steps: any value with a state
/// encoding ([`State`]: numbers, vectors, tuples, structs by `impl_state!`).
pub trait Cached: Sized {
    fn put(&self, w: &mut StateWriter<'_>);
    fn get(r: &mut StateReader<'_>) -> Result<Self, StateError>;
}

impl<T: State + Default> Cached for T {
    fn put(&self, w: &mut StateWriter<'_>) {
        self.save(w);
    }
    fn get(r: &mut StateReader<'_>) -> Result<Self, StateError> {
        let mut value = T::default();
        value.load(r)?;
        Ok(value)
    }
}

/// What a session keeps of a checkpoint beside the device (its steps' records), in the
/// entry's encoding; reading it back may need what the session knows (`Context`).
pub trait SessionRecord: Sized {
    type Context: ?Sized;
    fn put(&self, w: &mut StateWriter<'_>);
    fn get(r: &mut StateReader<'_>, cx: &Self::Context) -> Result<Self, StateError>;
}

/// What a checkpoint recorded in the session: its steps' record, how many steps it started
/// (recorded or not) and the drive time where it ended.
pub struct SessionPart<S> {
    pub steps: S,
    pub started_steps: u64,
    pub end_ns: SimTime,
}

/// A cache entry read back: the session part and the checkpoint's value (the device state
/// went into the device given).
pub struct Entry<S, R> {
    pub session: SessionPart<S>,
    pub value: R,
}

/// A device an entry's state loads into: a drive, a system, or neither (then nothing is
/// loaded).
pub trait LoadTarget {
    fn ssd_mut(&mut self) -> Option<&mut Ssd>;
    fn system_mut(&mut self) -> Option<&mut System>;
}

/// Why an entry was not used.
#[derive(Debug)]
pub enum LoadFailure {
    /// Refused before any of it went into the device: the device is as it was.
    Refused(StateError),
    /// Failed once it began to load into the device, which cannot be used now.
    DeviceLost(StateError),
}

impl From<StateError> for LoadFailure {
    fn from(e: StateError) -> Self {
        LoadFailure::Refused(e)
    }
}

impl From<std::io::Error> for LoadFailure {
    fn from(e: std::io::Error) -> Self {
        LoadFailure::Refused(e.into())
    }
}

/// A refusal: the entry's part `what` is not as written.
pub fn corrupt(what: impl Into<String>) -> StateError {
    StateError::Corrupt { what: what.into() }
}

pub fn put_str(w: &mut StateWriter<'_>, s: &str) {
    w.put_len(s.len());
    w.put_bytes(s.as_bytes());
}

pub fn get_str(r: &mut StateReader<'_>) -> Result<String, StateError> {
    let n = r.len_at_most(1, MAX_TEXT_BYTES)?;
    let mut bytes = vec![0u8; n];
    r.get_bytes(&mut bytes)?;
    String::from_utf8(bytes).map_err(|_| corrupt("a step's text is not UTF-8"))
}

pub fn put_opt_str(w: &mut StateWriter<'_>, s: Option<&str>) {
    match s {
        None => w.put_u8(0),
        Some(s) => {
            w.put_u8(1);
            put_str(w, s);
        }
    }
}

pub fn get_opt_str(r: &mut StateReader<'_>) -> Result<Option<String>, StateError> {
    match r.get_u8()? {
        0 => Ok(None),
        1 => Ok(Some(get_str(r)?)),
        t => Err(corrupt(format!("option tag {t}"))),
    }
}

/// The session part of an entry, as bytes.
fn session_bytes<S: SessionRecord, R: Cached>(
    chain: &Chain,
    part: &SessionPart<S>,
    value: &R,
) -> Result<Vec<u8>, StateError> {
    let mut bytes = Vec::new();
    let header = StateHeader {
        kind: STEPS_KIND.to_string(),
        config_hash: checksum_of(chain.key_text.as_bytes()),
        device_seed: 0,
        clock_ns: part.end_ns,
    };
    let mut w = StateWriter::new(&mut bytes, &header);
    w.section("steps", |w| {
        put_str(w, &chain.key_text);
        w.put_u64(part.started_steps);
        part.steps.put(w);
        value.put(w);
    });
    w.finish()?;
    Ok(bytes)
}

/// The lock of each entry a thread of this process is filling or reading, by path; an entry
/// leaves the table once no thread holds or waits for its lock, so the table holds at most
/// one per thread.
static ENTRY_LOCKS: Mutex<Vec<(PathBuf, Arc<Mutex<()>>)>> = Mutex::new(Vec::new());

/// The lock of the entry at `path`, shared by every thread of this process that asks for it.
/// Held from the look-up to the store, it makes concurrent sessions on the same drive and
/// recipe (a sweep's points run on several threads, a suite's drives) wait for the first to
/// precondition and then load its entry, instead of each running the same preconditioning.
pub fn entry_lock(path: &Path) -> Arc<Mutex<()>> {
    let mut locks = ENTRY_LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    locks.retain(|(_, lock)| Arc::strong_count(lock) > 1);
    if let Some((_, lock)) = locks.iter().find(|(p, _)| p == path) {
        return Arc::clone(lock);
    }
    let lock = Arc::new(Mutex::new(()));
    locks.push((path.to_path_buf(), Arc::clone(&lock)));
    lock
}

/// Longest a session waits for another process filling the same entry: a process that ends
/// releases its lock, so only a stopped or hung one holds it this long.
pub const ENTRY_LOCK_WAIT: Duration = Duration::from_secs(4 * 60 * 60);

/// How often a waiting session tries the lock again.
const LOCK_POLL: Duration = Duration::from_millis(20);

/// The lock file of the entry at `path`: `.<entry name>.lock` beside it, empty. It is never
/// renamed over (the entry is), so every process locks the same file.
fn lock_path(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("entry");
    path.with_file_name(format!(".{name}.lock"))
}

/// Why [`lock_entry_file`] did not lock.
#[derive(Debug)]
pub enum EntryLockError {
    /// Another process held the lock for all of `wait`.
    Busy,
    /// The lock file cannot be made or locked (a file system without locks, a name taken
    /// by something not a regular file).
    Unavailable(std::io::Error),
}

/// The file lock of the entry at `path`, across processes (two `flashlab sweep --point`
/// runs, two suites on the same drive): held from the look-up to the store, as
/// [`entry_lock`] is between threads, it makes a process wait for the one preconditioning
/// the same drive and then load its entry. `on_wait` is called once if the lock is taken;
/// after `wait` the answer is [`EntryLockError::Busy`]. The lock goes with the returned
/// file (when it is dropped, or its process ends).
pub fn lock_entry_file(
    path: &Path,
    wait: Duration,
    on_wait: impl FnOnce(),
) -> Result<std::fs::File, EntryLockError> {
    let unavailable = EntryLockError::Unavailable;
    let lock = lock_path(path);
    if std::fs::symlink_metadata(&lock).is_ok_and(|m| !m.file_type().is_file()) {
        return Err(unavailable(std::io::Error::other(format!(
            "{} is not a regular file",
            lock.display()
        ))));
    }
    if let Some(dir) = lock.parent() {
        std::fs::create_dir_all(dir).map_err(unavailable)?;
    }
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(unavailable)?;
    let start = std::time::Instant::now();
    let mut on_wait = Some(on_wait);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(unavailable(e)),
        }
        if let Some(tell) = on_wait.take() {
            tell();
        }
        let waited = start.elapsed();
        if waited >= wait {
            return Err(EntryLockError::Busy);
        }
        std::thread::sleep(LOCK_POLL.min(wait - waited));
    }
}

/// Writes an entry for `chain`: the session part, then the device's state. Written under a
/// temporary name and renamed, so a reader sees a whole entry or none.
pub fn store<S: SessionRecord, R: Cached>(
    chain: &Chain,
    part: &SessionPart<S>,
    value: &R,
    save_device: impl FnOnce(&mut dyn Write) -> Result<u64, StateError>,
) -> Result<PathBuf, StateError> {
    let path = chain.path();
    std::fs::create_dir_all(&chain.cache.dir)?;
    // Temporary files that interrupted writers left here go first; this one is recorded
    // so that an interrupt of this process removes it (`flashlab_engine::temp`).
    flashlab_engine::temp::remove_stale(&chain.cache.dir);
    let session = session_bytes(chain, part, value)?;
    let tmp = flashlab_engine::temp::name_beside(&path);
    let result = (|| {
        let file = flashlab_engine::temp::begin(&tmp)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&(session.len() as u64).to_le_bytes())?;
        out.write_all(&session)?;
        save_device(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        // Renamed only over an entry's regular file or nothing, never over what is not.
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.file_type().is_file()) {
            return Err(corrupt("its name is taken by something not a regular file"));
        }
        flashlab_engine::temp::end(&tmp, || std::fs::rename(&tmp, &path))?;
        Ok::<(), StateError>(())
    })();
    if result.is_err() {
        flashlab_engine::temp::end(&tmp, || {
            let _ = std::fs::remove_file(&tmp);
        });
    }
    result.map(|()| path)
}

/// The entry of `chain`, its device state loaded into `dev` (a device of the chain's
/// description and seed, as the checkpoints before this one left it): `None` when there is
/// none or `dev` is not of the entry's kind; an error when there is one that cannot be used
/// (damaged, of another key, of another device). The whole entry is checked before any of it
/// goes into `dev`, so a refused entry leaves `dev` as it was.
pub fn load<S: SessionRecord, R: Cached>(
    chain: &Chain,
    cx: &S::Context,
    dev: &mut dyn LoadTarget,
) -> Result<Option<Entry<S, R>>, LoadFailure> {
    let path = chain.path();
    // Opening a FIFO would wait for a writer for ever: only a regular file is read.
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if !meta.file_type().is_file() => {
            return Err(corrupt("it is not a regular file (left alone)").into())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let total = file.metadata()?.len();
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut len = [0u8; 8];
    if total < 8 {
        return Err(corrupt("shorter than its length field").into());
    }
    input.read_exact(&mut len)?;
    let session_len = u64::from_le_bytes(len);
    if session_len > MAX_STEPS_PART_BYTES || session_len > total - 8 {
        return Err(corrupt(format!(
            "its steps part claims {session_len} bytes of {total}"
        ))
        .into());
    }
    let (mut r, header) = StateReader::new((&mut input).take(session_len), session_len)?;
    flashlab_device::check_kind(&header, STEPS_KIND)?;
    let mut read = None;
    r.section("steps", |r| {
        let key_text = get_str(r)?;
        if key_text != chain.key_text {
            return Err(corrupt(
                "it was made for another device, recipe, seed or build (its key differs)",
            ));
        }
        let started_steps = r.get_u64()?;
        let steps = S::get(r, cx)?;
        let value = R::get(r)?;
        read = Some((
            SessionPart {
                steps,
                started_steps,
                end_ns: header.clock_ns,
            },
            value,
        ));
        Ok(())
    })?;
    r.finish()?;
    let (session, value) = read.ok_or_else(|| corrupt("no steps section"))?;
    let device_bytes = total - 8 - session_len;
    let mut whole = std::fs::File::open(&path)?;
    std::io::Seek::seek(&mut whole, std::io::SeekFrom::Start(8 + session_len))?;
    let header = flashlab_engine::state::verify(BufReader::new(whole), device_bytes)?;
    check_clock(header.clock_ns, session.end_ns)?;
    // Read in place: a second device of the same size would double the peak memory of a
    // warm run. The entry is whole and its header fits `dev`, so the load runs to its end
    // unless the file changes meanwhile.
    let lost = LoadFailure::DeviceLost;
    match &chain.device {
        FreshDevice::Drive(_) => match dev.ssd_mut() {
            Some(ssd) => {
                ssd.check_state_header(&header)?;
                ssd.load_state_in_place(input, device_bytes).map_err(lost)?
            }
            None => return Ok(None),
        },
        FreshDevice::System(_) => match dev.system_mut() {
            Some(system) => {
                system.check_state_header(&header)?;
                system
                    .load_state_in_place(input, device_bytes)
                    .map_err(lost)?
            }
            None => return Ok(None),
        },
    };
    Ok(Some(Entry { session, value }))
}

fn check_clock(device_ns: SimTime, session_ns: SimTime) -> Result<(), StateError> {
    if device_ns != session_ns {
        return Err(corrupt(format!(
            "its device clock ({device_ns} ns) and steps ({session_ns} ns) disagree"
        )));
    }
    Ok(())
}

/// Marks an entry as just used (its modification time), for [`trim`]'s least-recently-used
/// order.
pub fn touch(path: &Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

impl StateCache {
    /// Whether `name` (a file of the cache's directory) is an entry's name: the files the
    /// cache writes there, as a command registers them with its other files.
    pub fn is_entry_name(name: &str) -> bool {
        is_entry_name(name)
    }
}

/// Whether `name` is an entry's name as [`Chain::path`] makes it: 16 lowercase hex digits
/// and `.state`.
fn is_entry_name(name: &str) -> bool {
    name.strip_suffix(".state").is_some_and(|hex| {
        hex.len() == 16
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Whether the writer of an entry's temporary file `name` stopped, when `name` is one:
/// [`store`]'s (`flashlab_engine::temp`'s names), or `.<entry>.<pid>-<n>.partial` of an
/// earlier entry format.
fn partial_stopped(name: &str) -> Option<bool> {
    match flashlab_engine::temp::temporary_of(name) {
        Some((entry, stopped)) => is_entry_name(entry).then_some(stopped),
        None => partial_writer(name).map(|pid| !writer_alive(pid)),
    }
}

/// The process id of a temporary file of the earlier form `.<entry>.<pid>-<n>.partial`,
/// when `name` is one.
fn partial_writer(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".partial")?;
    let (entry, writer) = rest.rsplit_once('.')?;
    if !is_entry_name(entry) {
        return None;
    }
    let (pid, serial) = writer.split_once('-')?;
    serial.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether the process `pid` may still be writing: this one, or (where `/proc` tells)
/// one that is running. Without `/proc` every writer counts as alive.
fn writer_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc_root = Path::new("/proc");
    if !proc_root.join("self").exists() {
        return true;
    }
    proc_root.join(pid.to_string()).exists()
}

/// The entry a lock file [`lock_path`] makes belongs to, when `name` is one.
fn locked_entry(name: &str) -> Option<&str> {
    let entry = name.strip_prefix('.')?.strip_suffix(".lock")?;
    is_entry_name(entry).then_some(entry)
}

/// Removes the lock file at `lock` when no process holds it: taken first, so a process
/// filling its entry keeps it. (One that opened it and waits finds its lock on the removed
/// file and may precondition once more beside another; the entries stay whole.)
fn remove_lock_file(lock: &Path) -> bool {
    let Ok(file) = std::fs::File::options().write(true).open(lock) else {
        return false;
    };
    file.try_lock().is_ok() && std::fs::remove_file(lock).is_ok()
}

/// Every entry format's kind starts so: entries of an older format are the cache's too, to
/// be evicted like the others.
const STEPS_KIND_STEM: &str = "suite-steps";

/// Whether the regular file at `path` starts as an entry does: the length of its steps
/// part, then a state header of the cache's steps kind (of any entry format). Only such
/// files are the cache's.
fn has_entry_header(path: &Path) -> bool {
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 8 + 8 + 4 + 1 + STEPS_KIND_STEM.len()];
    if file.read_exact(&mut head).is_err() {
        return false;
    }
    head[8..16] == flashlab_engine::state::MAGIC
        && usize::from(head[20]) >= STEPS_KIND_STEM.len()
        && &head[21..] == STEPS_KIND_STEM.as_bytes()
}

/// What [`trim`] found and did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Trimmed {
    /// Entries removed to fit the bound.
    pub removed_entries: usize,
    /// Temporary files of writers no longer running, removed.
    pub removed_partials: usize,
    /// Names skipped: an entry's name on something that is not a regular file.
    pub skipped: Vec<String>,
    /// Lock files of entries no longer there, removed.
    pub removed_locks: usize,
}

/// Removes the least recently used entries until those left fit `max_bytes`; `keep` is
/// never removed. Only the cache's own files are touched: entries by name and header, and
/// temporary files of its writers; anything else in the directory (a user's `.state` file,
/// notes) is neither counted nor removed. Temporary files of writes under way count toward
/// the bound; those of writers no longer running are removed. An entry's name on something
/// other than a regular file is skipped with a warning.
pub fn trim(dir: &Path, max_bytes: u64, keep: &Path) -> std::io::Result<()> {
    let done = trim_entries(dir, max_bytes, keep)?;
    for name in &done.skipped {
        eprintln!(
            "flashlab: warning: state cache {}: {} is not a regular file; left alone",
            flashlab_engine::input::echo(&dir.to_string_lossy()),
            flashlab_engine::input::excerpt(name)
        );
    }
    if done.removed_partials > 0 {
        eprintln!(
            "flashlab: state cache {}: removed {} unfinished entries of writers that stopped",
            flashlab_engine::input::echo(&dir.to_string_lossy()),
            done.removed_partials
        );
    }
    Ok(())
}

/// [`trim`]'s work, without its messages.
pub fn trim_entries(dir: &Path, max_bytes: u64, keep: &Path) -> std::io::Result<Trimmed> {
    let mut done = Trimmed::default();
    let mut entries = Vec::new();
    let mut locks = Vec::new();
    let mut total = 0u64;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if let Some(entry) = locked_entry(&name) {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                locks.push((dir.join(entry), path));
            }
            continue;
        }
        let writer = partial_stopped(&name);
        if !is_entry_name(&name) && writer.is_none() {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.file_type().is_file() {
            done.skipped.push(name);
            continue;
        }
        if let Some(stopped) = writer {
            if stopped && std::fs::remove_file(&path).is_ok() {
                done.removed_partials += 1;
            } else {
                total += meta.len();
            }
            continue;
        }
        if !has_entry_header(&path) {
            continue;
        }
        total += meta.len();
        if path != keep {
            let used = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
            entries.push((used, meta.len(), path));
        }
    }
    entries.sort();
    for (_, len, path) in entries {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
            done.removed_entries += 1;
        }
    }
    for (entry, lock) in locks {
        if std::fs::symlink_metadata(&entry).is_err() && remove_lock_file(&lock) {
            done.removed_locks += 1;
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's record as this crate's tests keep it: names.
    #[derive(Debug, Clone, PartialEq)]
    struct Names(Vec<String>);

    impl SessionRecord for Names {
        type Context = ();
        fn put(&self, w: &mut StateWriter<'_>) {
            w.put_len(self.0.len());
            for n in &self.0 {
                put_str(w, n);
            }
        }
        fn get(r: &mut StateReader<'_>, _: &()) -> Result<Self, StateError> {
            let n = r.get_len(1)?;
            (0..n)
                .map(|_| get_str(r))
                .collect::<Result<_, _>>()
                .map(Names)
        }
    }

    struct Drive<'a>(&'a mut Ssd);

    impl LoadTarget for Drive<'_> {
        fn ssd_mut(&mut self) -> Option<&mut Ssd> {
            Some(self.0)
        }
        fn system_mut(&mut self) -> Option<&mut System> {
            None
        }
    }

    fn load_into(c: &Chain, ssd: &mut Ssd) -> Result<Option<Entry<Names, Vec<f64>>>, LoadFailure> {
        load::<Names, Vec<f64>>(c, &(), &mut Drive(ssd))
    }

    fn chain(dir: &Path) -> Chain {
        let config = flashlab_device::load_device_config("tiny-test-1gb", &[]).unwrap();
        let cache = StateCache {
            dir: dir.to_path_buf(),
            build_id: 7,
            max_bytes: DEFAULT_MAX_CACHE_BYTES,
        };
        Chain::fresh(
            &cache,
            FreshDevice::Drive(Box::new(config)),
            3,
            1,
            "tiny",
            None,
        )
        .unwrap()
        .then("fill")
    }

    /// Held by the tests that start processes and by the one that checks when a file lock
    /// is free: a process forked while a test holds a lock shares the lock's open file
    /// until it execs, so the lock could stay held for a moment after the test lets go.
    static FORKS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn no_forks() -> std::sync::MutexGuard<'static, ()> {
        FORKS.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("flashlab-cache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn an_entry_reads_back_and_a_damaged_or_foreign_one_is_refused() {
        let dir = temp_dir("roundtrip");
        let c = chain(&dir);
        let FreshDevice::Drive(config) = &c.device else {
            unreachable!()
        };
        let ssd = Ssd::new(config, flashlab_engine::SeedTree::new(3)).unwrap();
        let mut into = Ssd::new(config, flashlab_engine::SeedTree::new(3)).unwrap();
        let part = SessionPart {
            steps: Names(vec!["fill".into(), String::new()]),
            started_steps: 2,
            end_ns: 42,
        };
        assert!(load_into(&c, &mut into).unwrap().is_none());
        let path = store(&c, &part, &vec![1.5, f64::MIN_POSITIVE], |out| {
            ssd.save_state(out, 42)
        })
        .unwrap();
        let e = load_into(&c, &mut into).unwrap().unwrap();
        assert_eq!(e.session.steps, part.steps);
        assert_eq!(e.session.started_steps, 2);
        assert_eq!(e.session.end_ns, 42);
        assert_eq!(e.value, vec![1.5, f64::MIN_POSITIVE]);
        // Another key under this entry's name (a foreign file copied in) is refused.
        let other = c.then("rounds");
        std::fs::copy(&path, other.path()).unwrap();
        let err = format!("{:?}", load_into(&other, &mut into).err().unwrap());
        assert!(err.contains("key differs"), "{err}");
        // One byte changed anywhere is refused, and the drive it was loading into is left
        // as a fresh one: the session preconditions it again.
        let state_of = |ssd: &Ssd| {
            let mut out = Vec::new();
            ssd.save_state(&mut out, 0).unwrap();
            out
        };
        let fresh = state_of(&Ssd::new(config, flashlab_engine::SeedTree::new(3)).unwrap());
        let mut bytes = std::fs::read(&path).unwrap();
        for at in [20, bytes.len() / 2, bytes.len() - 3] {
            bytes[at] ^= 0x40;
            std::fs::write(&path, &bytes).unwrap();
            let mut into = Ssd::new(config, flashlab_engine::SeedTree::new(3)).unwrap();
            assert!(
                matches!(load_into(&c, &mut into), Err(LoadFailure::Refused(_))),
                "byte {at}"
            );
            assert!(
                state_of(&into) == fresh,
                "byte {at}: the drive is not fresh"
            );
            bytes[at] ^= 0x40;
        }
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(load_into(&c, &mut into).is_err());
        assert!(state_of(&into) == fresh);
        // A drive of another seed is not loaded into.
        std::fs::write(&path, &bytes).unwrap();
        let mut other_seed = Ssd::new(config, flashlab_engine::SeedTree::new(4)).unwrap();
        let err = format!("{:?}", load_into(&c, &mut other_seed).err().unwrap());
        assert!(err.contains("seed 3"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file that starts as an entry does (the steps part's length and header), `len`
    /// bytes in all.
    fn entry_bytes(len: usize) -> Vec<u8> {
        let mut session = Vec::new();
        let header = StateHeader {
            kind: STEPS_KIND.to_string(),
            config_hash: 0,
            device_seed: 0,
            clock_ns: 0,
        };
        StateWriter::new(&mut session, &header).finish().unwrap();
        let mut bytes = (session.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(&session);
        bytes.resize(len.max(bytes.len()), 0);
        bytes
    }

    /// An entry's temporary file that an interrupted or killed writer left stayed until
    /// an entry was written whole and the directory trimmed; the next write removes it
    /// first, and a temporary file of a writer still running (this process) stays.
    #[cfg(unix)]
    #[test]
    fn a_write_removes_temporaries_of_stopped_writers_first() {
        let _forks = no_forks();
        let dir = temp_dir("stale");
        std::fs::create_dir_all(&dir).unwrap();
        let c = chain(&dir);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let stopped = child.id();
        child.wait().unwrap();
        // Temporary names of this machine's form: one of this process, one of the stopped.
        let live = flashlab_engine::temp::name_beside(&c.then("other").path());
        let live = live.file_name().unwrap().to_string_lossy().into_owned();
        let stale = live.replace(
            &format!("-{}-", std::process::id()),
            &format!("-{stopped}-"),
        );
        assert_ne!(live, stale);
        assert_eq!(partial_stopped(&live), Some(false));
        assert_eq!(partial_stopped(&stale), Some(true));
        for name in [&live, &stale] {
            std::fs::write(dir.join(name), vec![0u8; 100]).unwrap();
        }
        let ssd = match &c.device {
            FreshDevice::Drive(config) => {
                Ssd::new(config, flashlab_engine::SeedTree::new(3)).unwrap()
            }
            FreshDevice::System(_) => unreachable!(),
        };
        let part = SessionPart {
            steps: Names(vec!["fill".into()]),
            started_steps: 1,
            end_ns: 0,
        };
        let path = store(&c, &part, &vec![1.0], |out| ssd.save_state(out, 0)).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let entry = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut want = vec![live, entry];
        want.sort();
        assert_eq!(left, want);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn trimming_keeps_the_newest_entry_and_the_bound() {
        let dir = temp_dir("trim");
        std::fs::create_dir_all(&dir).unwrap();
        let t0 = std::time::SystemTime::now();
        let name = |i: u64| format!("{i:016x}.state");
        for (i, age_s) in [(0, 30), (1, 20), (2, 10)] {
            let p = dir.join(name(i));
            std::fs::write(&p, entry_bytes(100)).unwrap();
            let f = std::fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(t0 - std::time::Duration::from_secs(age_s))
                .unwrap();
        }
        // A write under way (this process's) counts toward the bound and stays.
        let live = format!(".{}.{}-0.partial", name(9), std::process::id());
        std::fs::write(dir.join(&live), vec![0u8; 40]).unwrap();
        let done = trim_entries(&dir, 150, &dir.join(name(0))).unwrap();
        assert_eq!(done.removed_entries, 2);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [live, name(0)]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Eviction removed every `*.state` in the directory (a user's saved state, a text
    /// file), left dead writers' temporary files for ever, and hung on a FIFO at an
    /// entry's name.
    #[cfg(unix)]
    #[test]
    fn the_cache_touches_only_its_own_files() {
        let _forks = no_forks();
        let dir = temp_dir("own");
        std::fs::create_dir_all(&dir).unwrap();
        let users = [
            "my-precondition.state",
            "notes.state",
            "0123456789abcdef.txt",
        ];
        for u in users {
            std::fs::write(dir.join(u), vec![b'x'; 1000]).unwrap();
        }
        // A user's file under an entry's name but without the cache's header stays too.
        let foreign = "00000000000000aa.state";
        std::fs::write(dir.join(foreign), vec![b'x'; 1000]).unwrap();
        let entry = "00000000000000bb.state";
        std::fs::write(dir.join(entry), entry_bytes(500)).unwrap();
        let keep = "00000000000000cc.state";
        std::fs::write(dir.join(keep), entry_bytes(500)).unwrap();
        // A writer that stopped long ago (pid 0 names no process) left its temporary file.
        let stale = format!(".{keep}.0-3.partial");
        std::fs::write(dir.join(&stale), vec![0u8; 700]).unwrap();
        let fifo = "00000000000000dd.state";
        assert!(std::process::Command::new("mkfifo")
            .arg(dir.join(fifo))
            .status()
            .unwrap()
            .success());
        let done = trim_entries(&dir, 1, &dir.join(keep)).unwrap();
        assert_eq!(done.removed_entries, 1);
        assert_eq!(done.removed_partials, 1);
        assert_eq!(done.skipped, [fifo]);
        for u in users.iter().chain([&foreign, &keep, &fifo]) {
            assert!(
                std::fs::symlink_metadata(dir.join(u)).is_ok(),
                "{u} removed"
            );
        }
        assert!(!dir.join(entry).exists());
        assert!(!dir.join(&stale).exists());
        // Loading the entry at the FIFO's name refuses it at once instead of waiting.
        let mut c = chain(&dir);
        c.cache.dir = dir.clone();
        let mut fifo_chain = c.clone();
        fifo_chain.key_text = String::new();
        let FreshDevice::Drive(config) = &c.device else {
            unreachable!()
        };
        let mut into = Ssd::new(config, flashlab_engine::SeedTree::new(3)).unwrap();
        std::fs::rename(dir.join(fifo), fifo_chain.path()).unwrap();
        let err = format!("{:?}", load_into(&fifo_chain, &mut into).err().unwrap());
        assert!(err.contains("not a regular file"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Two holders of one entry's file lock (two processes; here two open files of one
    /// process, which the lock treats alike): the second is told once that it waits, is
    /// refused after its bound, and locks at once when the first lets go. Trimming removes
    /// the lock file of an entry no longer there, unless it is held.
    #[test]
    fn an_entry_lock_is_waited_for_with_a_bound_and_trimmed_when_free() {
        let _forks = no_forks();
        let dir = temp_dir("lock");
        std::fs::create_dir_all(&dir).unwrap();
        let entry = dir.join("00000000000000ee.state");
        let free = || panic!("a free lock was waited for");
        let held = lock_entry_file(&entry, Duration::ZERO, free).unwrap();
        let mut told = 0;
        let start = std::time::Instant::now();
        let second = lock_entry_file(&entry, Duration::from_millis(100), || told += 1);
        assert!(matches!(second, Err(EntryLockError::Busy)), "{second:?}");
        assert!(start.elapsed() >= Duration::from_millis(100));
        assert_eq!(told, 1);
        let lock = dir.join(".00000000000000ee.state.lock");
        assert_eq!(trim_entries(&dir, 0, &entry).unwrap().removed_locks, 0);
        assert!(lock.exists());
        drop(held);
        drop(lock_entry_file(&entry, Duration::ZERO, free).unwrap());
        assert_eq!(trim_entries(&dir, 0, &entry).unwrap().removed_locks, 1);
        assert!(!lock.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
