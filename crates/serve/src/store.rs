//! Where served data lives: sparse in memory in fixed-size chunks under a byte budget, or in a
//! sparse file. Both read zeroes where nothing was written or where data was trimmed.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bytes per memory chunk: a 4 KiB random write costs one chunk, not a larger unit.
pub const CHUNK_BYTES: usize = 4096;
/// Bookkeeping charged per chunk on top of its data (map entry, allocator header).
pub const CHUNK_OVERHEAD_BYTES: u64 = 64;
const CHUNK_COST_BYTES: u64 = CHUNK_BYTES as u64 + CHUNK_OVERHEAD_BYTES;

/// Why a data operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the write needs {needed_bytes} bytes of memory but the limit is {limit_bytes} bytes (--max-memory; or serve from a sparse file with --backing)")]
    NoSpace { needed_bytes: u64, limit_bytes: u64 },
    #[error("backing file: {0}")]
    Io(#[from] io::Error),
}

/// Why a backing file cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum BackingError {
    #[error("{0}")]
    Io(io::Error),
    #[error("{0}")]
    Unusable(String),
    #[error("locked by another process")]
    Locked,
}

fn file_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The data of the export.
#[derive(Debug)]
pub enum Store {
    Memory(MemStore),
    File(FileStore),
}

impl Store {
    pub fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        match self {
            Store::Memory(m) => {
                m.read(offset, buf);
                Ok(())
            }
            Store::File(f) => f.read(offset, buf),
        }
    }

    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        match self {
            Store::Memory(m) => m.write(offset, data),
            Store::File(f) => f.write(offset, data),
        }
    }

    /// Make `len` bytes at `offset` read as zeroes (TRIM, WRITE_ZEROES), releasing space.
    pub fn zero(&mut self, offset: u64, len: u64) -> Result<(), StoreError> {
        match self {
            Store::Memory(m) => {
                m.zero(offset, len);
                Ok(())
            }
            Store::File(f) => f.zero(offset, len),
        }
    }

    /// Make completed writes durable.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        match self {
            Store::Memory(_) => Ok(()),
            Store::File(f) => f.flush(),
        }
    }

    /// Heap bytes held for data (0 for a file).
    pub fn memory_bytes(&self) -> u64 {
        match self {
            Store::Memory(m) => m.memory_bytes(),
            Store::File(_) => 0,
        }
    }
}

/// Sparse in-memory data: only chunks holding non-zero data are allocated.
#[derive(Debug)]
pub struct MemStore {
    chunks: BTreeMap<u64, Box<[u8]>>,
    limit_bytes: u64,
}

/// The pieces of `[offset, offset + len)` cut at chunk boundaries: (chunk index, offset
/// within the chunk, bytes, offset within the range).
fn pieces(offset: u64, len: u64) -> impl Iterator<Item = (u64, usize, usize, usize)> {
    let chunk = CHUNK_BYTES as u64;
    let end = offset + len;
    let mut pos = offset;
    std::iter::from_fn(move || {
        if pos >= end {
            return None;
        }
        let index = pos / chunk;
        let within = (pos % chunk) as usize;
        let n = (CHUNK_BYTES - within).min((end - pos) as usize);
        let item = (index, within, n, (pos - offset) as usize);
        pos += n as u64;
        Some(item)
    })
}

impl MemStore {
    pub fn new(limit_bytes: u64) -> MemStore {
        MemStore {
            chunks: BTreeMap::new(),
            limit_bytes,
        }
    }

    pub fn memory_bytes(&self) -> u64 {
        self.chunks.len() as u64 * CHUNK_COST_BYTES
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    pub fn read(&self, offset: u64, buf: &mut [u8]) {
        for (index, within, n, at) in pieces(offset, buf.len() as u64) {
            let dst = &mut buf[at..at + n];
            match self.chunks.get(&index) {
                Some(c) => dst.copy_from_slice(&c[within..within + n]),
                None => dst.fill(0),
            }
        }
    }

    /// All or nothing: a write that would exceed the budget changes nothing.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        // Zero data in an absent chunk stays a hole, so it costs nothing.
        let new_chunks = pieces(offset, data.len() as u64)
            .filter(|&(index, _, n, at)| {
                !self.chunks.contains_key(&index) && data[at..at + n].iter().any(|&b| b != 0)
            })
            .count() as u64;
        let needed_bytes = self.memory_bytes() + new_chunks * CHUNK_COST_BYTES;
        if new_chunks > 0 && needed_bytes > self.limit_bytes {
            return Err(StoreError::NoSpace {
                needed_bytes,
                limit_bytes: self.limit_bytes,
            });
        }
        for (index, within, n, at) in pieces(offset, data.len() as u64) {
            let src = &data[at..at + n];
            let zero = src.iter().all(|&b| b == 0);
            if zero && n == CHUNK_BYTES {
                self.chunks.remove(&index);
                continue;
            }
            match self.chunks.get_mut(&index) {
                Some(c) => c[within..within + n].copy_from_slice(src),
                None if zero => {}
                None => {
                    let mut c = vec![0u8; CHUNK_BYTES].into_boxed_slice();
                    c[within..within + n].copy_from_slice(src);
                    self.chunks.insert(index, c);
                }
            }
        }
        Ok(())
    }

    /// Zero a range, visiting only the chunks that exist (a TRIM of gigabytes over a sparse
    /// store costs what it frees).
    pub fn zero(&mut self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let chunk = CHUNK_BYTES as u64;
        let end = offset.saturating_add(len);
        let mut next = offset / chunk;
        let last = (end - 1) / chunk;
        while next <= last {
            let Some((&index, _)) = self.chunks.range(next..=last).next() else {
                break;
            };
            let start = (index * chunk).max(offset);
            let stop = ((index + 1) * chunk).min(end);
            if stop - start == chunk {
                self.chunks.remove(&index);
            } else if let Some(c) = self.chunks.get_mut(&index) {
                let a = (start - index * chunk) as usize;
                let b = (stop - index * chunk) as usize;
                c[a..b].fill(0);
            }
            next = index + 1;
        }
    }
}

/// Data in a sparse file of the export's size: trims punch holes where the file system can.
#[derive(Debug)]
pub struct FileStore {
    file: File,
    path: PathBuf,
}

/// Bytes zeroed per write when the file system cannot punch holes.
const ZERO_STEP_BYTES: usize = 64 * 1024;

impl FileStore {
    /// Open or create `path` and lock it (an advisory `flock`, held while the store lives).
    /// A regular file shorter than `size_bytes` is extended sparsely; a longer one keeps its
    /// length and only its first `size_bytes` are served. A block device must hold
    /// `size_bytes`. Anything else (a directory, a FIFO, a character device, a file that
    /// cannot take the size, such as those under /proc) is refused before anything is served.
    pub fn open(path: &Path, size_bytes: u64) -> Result<FileStore, BackingError> {
        use std::os::unix::fs::FileTypeExt;
        use std::os::unix::io::AsRawFd;
        if let Ok(meta) = std::fs::metadata(path) {
            let kind = meta.file_type();
            if !(kind.is_file() || kind.is_block_device()) {
                return Err(BackingError::Unusable(format!(
                    "is {}; expected a regular file (created if missing) or a block device",
                    file_kind(&kind)
                )));
            }
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(BackingError::Io)?;
        // SAFETY: flock on a descriptor this function owns; it blocks nothing (LOCK_NB).
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            return Err(if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                BackingError::Locked
            } else {
                BackingError::Io(e)
            });
        }
        let meta = file.metadata().map_err(BackingError::Io)?;
        let usable_bytes = if meta.file_type().is_block_device() {
            use std::io::{Seek, SeekFrom};
            (&file).seek(SeekFrom::End(0)).map_err(BackingError::Io)?
        } else {
            if meta.len() < size_bytes {
                file.set_len(size_bytes).map_err(BackingError::Io)?;
            }
            file.metadata().map_err(BackingError::Io)?.len()
        };
        if usable_bytes < size_bytes {
            return Err(BackingError::Unusable(format!(
                "holds {usable_bytes} bytes and cannot hold the drive's {size_bytes} (a special file, or a device too small)"
            )));
        }
        let store = FileStore {
            file,
            path: path.to_path_buf(),
        };
        // Both ends must be readable: a file system that accepts the size but fails reads
        // would otherwise turn every request into an I/O error.
        let mut byte = [0u8; 1];
        for at in [0, size_bytes.saturating_sub(1)] {
            store
                .file
                .read_exact_at(&mut byte, at)
                .map_err(|e| BackingError::Unusable(format!("cannot be read at byte {at}: {e}")))?;
        }
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        Ok(self.file.read_exact_at(buf, offset)?)
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        self.file.write_all_at(data, offset).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOSPC) {
                StoreError::NoSpace {
                    needed_bytes: data.len() as u64,
                    limit_bytes: 0,
                }
            } else {
                StoreError::Io(e)
            }
        })
    }

    fn zero(&self, offset: u64, len: u64) -> Result<(), StoreError> {
        if self.punch_hole(offset, len) {
            return Ok(());
        }
        let zeroes = [0u8; ZERO_STEP_BYTES];
        let mut pos = offset;
        let end = offset + len;
        while pos < end {
            let n = ((end - pos) as usize).min(ZERO_STEP_BYTES);
            self.file.write_all_at(&zeroes[..n], pos)?;
            pos += n as u64;
        }
        Ok(())
    }

    #[cfg(target_os = "linux")]
    fn punch_hole(&self, offset: u64, len: u64) -> bool {
        use std::os::fd::AsRawFd;
        let (Ok(off), Ok(n)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
            return false;
        };
        // SAFETY: fallocate only reads its integer arguments; the descriptor is owned by
        // `self.file` and open for writing.
        let rc = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                off,
                n,
            )
        };
        rc == 0
    }

    #[cfg(not(target_os = "linux"))]
    fn punch_hole(&self, _offset: u64, _len: u64) -> bool {
        false
    }

    fn flush(&self) -> Result<(), StoreError> {
        Ok(self.file.sync_data()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read_vec(s: &mut Store, offset: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0xee; len];
        s.read(offset, &mut v).unwrap();
        v
    }

    #[test]
    fn unwritten_reads_zero_and_written_data_reads_back_across_chunks() {
        let mut s = Store::Memory(MemStore::new(1 << 20));
        assert_eq!(read_vec(&mut s, 0, 100), vec![0; 100]);
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8 + 1).collect();
        s.write(4000, &data).unwrap();
        assert_eq!(read_vec(&mut s, 4000, data.len()), data);
        // 4000..14000 touches chunks 0..=3.
        assert_eq!(s.memory_bytes(), 4 * CHUNK_COST_BYTES);
    }

    #[test]
    fn zero_writes_and_trims_free_whole_chunks_and_zero_partial_ones() {
        let mut m = MemStore::new(1 << 20);
        m.write(0, &[7u8; 3 * CHUNK_BYTES]).unwrap();
        assert_eq!(m.chunk_count(), 3);
        m.write(0, &[0u8; CHUNK_BYTES]).unwrap();
        assert_eq!(m.chunk_count(), 2);
        m.zero(CHUNK_BYTES as u64 + 10, CHUNK_BYTES as u64 * 10);
        assert_eq!(m.chunk_count(), 1, "chunk 2 fully zeroed, chunk 1 partly");
        let mut buf = vec![1u8; 20];
        m.read(CHUNK_BYTES as u64, &mut buf);
        assert_eq!(&buf[..10], &[7u8; 10]);
        assert_eq!(&buf[10..], &[0u8; 10]);
        // Zero data into a hole allocates nothing.
        m.write(100 * CHUNK_BYTES as u64, &[0u8; 100]).unwrap();
        assert_eq!(m.chunk_count(), 1);
    }

    #[test]
    fn a_write_over_the_memory_limit_fails_whole_and_changes_nothing() {
        let mut m = MemStore::new(2 * CHUNK_COST_BYTES);
        m.write(0, &[1u8; CHUNK_BYTES]).unwrap();
        let e = m
            .write(CHUNK_BYTES as u64, &[2u8; 2 * CHUNK_BYTES])
            .unwrap_err();
        assert!(matches!(e, StoreError::NoSpace { .. }), "{e}");
        assert_eq!(m.chunk_count(), 1);
        let mut buf = vec![9u8; CHUNK_BYTES];
        m.read(CHUNK_BYTES as u64, &mut buf);
        assert!(buf.iter().all(|&b| b == 0));
        // Overwriting allocated chunks needs no new memory.
        m.write(0, &[3u8; CHUNK_BYTES]).unwrap();
        // After a trim there is room again.
        m.zero(0, CHUNK_BYTES as u64);
        m.write(CHUNK_BYTES as u64, &[2u8; 2 * CHUNK_BYTES])
            .unwrap();
    }

    #[test]
    fn file_store_is_sparse_and_trims_read_zero() {
        let dir = std::env::temp_dir().join(format!("flashlab-serve-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("backing.img");
        let _ = std::fs::remove_file(&path);
        let mut s = Store::File(FileStore::open(&path, 1 << 30).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 30);
        s.write(1 << 20, &[5u8; 8192]).unwrap();
        s.zero((1 << 20) + 4096, 4096).unwrap();
        let v = read_vec(&mut s, 1 << 20, 8192);
        assert_eq!(&v[..4096], &[5u8; 4096][..]);
        assert_eq!(&v[4096..], &[0u8; 4096][..]);
        s.flush().unwrap();
        drop(s);
        // Reopening serves the same data.
        let mut s = Store::File(FileStore::open(&path, 1 << 30).unwrap());
        assert_eq!(read_vec(&mut s, 1 << 20, 4096), vec![5u8; 4096]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[derive(Debug, Clone)]
    enum Op {
        Write(u64, usize, u8),
        Zero(u64, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..40_000, 1usize..9000, any::<u8>()).prop_map(|(o, n, b)| Op::Write(o, n, b)),
            (0u64..40_000, 1u64..20_000).prop_map(|(o, n)| Op::Zero(o, n)),
        ]
    }

    proptest! {
        #[test]
        fn memory_store_matches_a_flat_buffer(ops in proptest::collection::vec(op(), 1..40)) {
            let mut m = MemStore::new(u64::MAX);
            let mut flat = vec![0u8; 70_000];
            for op in ops {
                match op {
                    Op::Write(o, n, b) => {
                        m.write(o, &vec![b; n]).unwrap();
                        flat[o as usize..o as usize + n].fill(b);
                    }
                    Op::Zero(o, n) => {
                        m.zero(o, n);
                        flat[o as usize..(o + n) as usize].fill(0);
                    }
                }
            }
            let mut got = vec![0xaa; flat.len()];
            m.read(0, &mut got);
            prop_assert_eq!(&got, &flat);
        }
    }
}
