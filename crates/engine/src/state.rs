//! Saving and loading a simulated device's whole state (`docs/state.md`).
//!
//! A state file is a header (magic, format version, what kind of device, a hash of the
//! resolved configuration, the device's seed, the drive time at which the next run starts),
//! then named sections, then a checksum of everything before it. Every component implements
//! [`State`]: `save` writes its fields in a fixed order, `load` reads them back *into a
//! component built from the same configuration*, so configuration, trait objects and shared
//! links need no encoding; only what a run changes is written.
//!
//! Integers are little-endian. Slices of plain integers go to and from the file as one block
//! of bytes ([`State::save_slice`]): a 1 TB drive's maps are gigabytes, and element by element
//! they would take longer than the run that made them.
//!
//! Every length read is checked before anything is allocated for it: against the bytes left
//! in the file (an element takes at least [`State::min_bytes`]), and, where the caller knows
//! one, against a bound from the configuration ([`StateReader::len_at_most`]).

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};

/// The first bytes of every state file.
pub const MAGIC: [u8; 8] = *b"FLSTATE\x1a";
/// Latest drive time a state may carry anywhere (its header's clock, a booking's end): the
/// simulated time a run can reach (`docs/limits.md`). A time past it is from no run.
pub const MAX_STATE_TIME_NS: u64 = 1 << 62;

/// Bumped whenever the encoding of any component changes.
pub const FORMAT_VERSION: u32 = 3;

/// Why a state file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a flashlab state file (it does not start with flashlab's state magic)")]
    NotState,
    #[error("state format version {found}; this flashlab reads version {expected} only (save the state again with this version)")]
    Version { found: u32, expected: u32 },
    #[error("the state is of a {found}, not a {expected}")]
    Kind { found: String, expected: String },
    #[error("the state was saved from another device configuration (configuration hash {found:016x}, this configuration's is {expected:016x}); load it with the same --device and --set as when it was saved")]
    Config { found: u64, expected: u64 },
    #[error("the state file is truncated (it ends inside section '{section}')")]
    Truncated { section: String },
    #[error("the state file is corrupt: {what}")]
    Corrupt { what: String },
    #[error("{0}")]
    Device(String),
}

impl StateError {
    /// A state whose bytes are whole but whose meaning is impossible (what names the part).
    pub fn corrupt(what: impl Into<String>) -> StateError {
        StateError::Corrupt { what: what.into() }
    }
}

/// A 64-bit checksum over a byte stream, fed in pieces of any size: four lanes of
/// xor-multiply-rotate over 8-byte words (a change to one word changes its lane's value for
/// good: each step is a bijection), the tail and the length folded in at the end. It guards
/// against damage, not against forgery, at the speed the file is read.
#[derive(Debug, Clone)]
pub struct Checksum {
    lanes: [u64; 4],
    tail: [u8; 32],
    tail_len: usize,
    total_bytes: u64,
}

const K_LANE: u64 = 0x9FB2_1C65_1E98_DF25;
const K_MIX: u64 = 0xC2B2_AE3D_27D4_EB4F;

impl Default for Checksum {
    fn default() -> Self {
        Self::new()
    }
}

impl Checksum {
    pub fn new() -> Self {
        Self {
            lanes: [
                0x243F_6A88_85A3_08D3,
                0x1319_8A2E_0370_7344,
                0xA409_3822_299F_31D0,
                0x082E_FA98_EC4E_6C89,
            ],
            tail: [0; 32],
            tail_len: 0,
            total_bytes: 0,
        }
    }

    /// The checksum of everything `reader` yields (a file: a build's identity), read in
    /// 1 MiB pieces.
    pub fn of_reader(mut reader: impl std::io::Read) -> std::io::Result<u64> {
        let mut sum = Checksum::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                return Ok(sum.finish());
            }
            sum.update(&buf[..n]);
        }
    }

    #[inline]
    fn block(lanes: &mut [u64; 4], block: &[u8]) {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().expect("8-byte chunk"));
            *lane = (*lane ^ w).wrapping_mul(K_LANE).rotate_left(29);
        }
    }

    pub fn update(&mut self, mut bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        if self.tail_len > 0 {
            let take = (32 - self.tail_len).min(bytes.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&bytes[..take]);
            self.tail_len += take;
            bytes = &bytes[take..];
            if self.tail_len < 32 {
                return;
            }
            let tail = self.tail;
            Self::block(&mut self.lanes, &tail);
            self.tail_len = 0;
        }
        let mut blocks = bytes.chunks_exact(32);
        for b in &mut blocks {
            Self::block(&mut self.lanes, b);
        }
        let rest = blocks.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail_len = rest.len();
    }

    pub fn finish(&self) -> u64 {
        let mut h = self.total_bytes.wrapping_mul(K_MIX);
        for lane in self.lanes {
            h = (h ^ mix(lane)).wrapping_mul(K_LANE).rotate_left(31);
        }
        for (i, b) in self.tail[..self.tail_len].iter().enumerate() {
            h = (h ^ (u64::from(*b) << ((i % 8) * 8))).wrapping_mul(K_MIX);
        }
        mix(h)
    }
}

#[inline]
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(K_MIX);
    x ^= x >> 29;
    x = x.wrapping_mul(K_LANE);
    x ^ (x >> 32)
}

/// The checksum of one byte string (configuration hashes).
pub fn checksum_of(bytes: &[u8]) -> u64 {
    let mut c = Checksum::new();
    c.update(bytes);
    c.finish()
}

/// What a state file says about itself before its sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateHeader {
    /// `"drive"` or `"system"`: what to build before loading.
    pub kind: String,
    /// Hash of the resolved configuration the state belongs to.
    pub config_hash: u64,
    /// The master seed the device was built with (its random streams and per-block draws
    /// derive from it; a loaded device is built with this seed, whatever the run's).
    pub device_seed: u64,
    /// Drive time at which the next run starts (see `docs/state.md`, "The saved point").
    pub clock_ns: u64,
}

/// Longest `kind` name a header may carry.
const MAX_KIND_BYTES: usize = 32;
/// Longest section name.
const MAX_SECTION_NAME_BYTES: usize = 64;
const BUFFER_BYTES: usize = 1 << 20;

/// Streams a state out: a buffer in front of any writer, the checksum kept as bytes go.
/// Write errors are kept (the first one) and reported by [`StateWriter::finish`], so that
/// `save` implementations stay straight-line code.
pub struct StateWriter<'a> {
    out: Box<dyn Write + 'a>,
    buf: Vec<u8>,
    sum: Checksum,
    written_bytes: u64,
    error: Option<std::io::Error>,
}

impl<'a> StateWriter<'a> {
    /// Starts a state: writes the header.
    pub fn new(out: impl Write + 'a, header: &StateHeader) -> StateWriter<'a> {
        let mut w = StateWriter {
            out: Box::new(out),
            buf: Vec::with_capacity(BUFFER_BYTES),
            sum: Checksum::new(),
            written_bytes: 0,
            error: None,
        };
        w.put_bytes(&MAGIC);
        w.put_u32(FORMAT_VERSION);
        let kind = header.kind.as_bytes();
        debug_assert!(kind.len() <= MAX_KIND_BYTES);
        w.put_u8(kind.len().min(MAX_KIND_BYTES) as u8);
        w.put_bytes(&kind[..kind.len().min(MAX_KIND_BYTES)]);
        w.put_u64(header.config_hash);
        w.put_u64(header.device_seed);
        w.put_u64(header.clock_ns);
        // A state past the time a run can reach would be refused when loaded: not written.
        if header.clock_ns > MAX_STATE_TIME_NS {
            w.error = Some(std::io::Error::other(format!(
                "the device's time reached {} ns, past the {MAX_STATE_TIME_NS} ns (2^62) a state can carry; no state saved",
                header.clock_ns
            )));
        }
        w
    }

    fn drain(&mut self) {
        if self.error.is_none() && !self.buf.is_empty() {
            if let Err(e) = self.out.write_all(&self.buf) {
                self.error = Some(e);
            }
        }
        self.buf.clear();
    }

    /// Raw bytes, checksummed. Large pieces bypass the buffer.
    pub fn put_bytes(&mut self, bytes: &[u8]) {
        self.sum.update(bytes);
        self.written_bytes += bytes.len() as u64;
        if self.buf.len() + bytes.len() <= BUFFER_BYTES {
            self.buf.extend_from_slice(bytes);
            return;
        }
        self.drain();
        if bytes.len() >= BUFFER_BYTES / 2 {
            // In pieces of a few MiB: one write of a gigabyte map is no faster, and holds
            // the whole of it in the kernel's dirty pages at once.
            for piece in bytes.chunks(8 * BUFFER_BYTES) {
                if self.error.is_none() {
                    if let Err(e) = self.out.write_all(piece) {
                        self.error = Some(e);
                    }
                }
            }
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    #[inline]
    pub fn put_u8(&mut self, v: u8) {
        self.put_bytes(&[v]);
    }
    #[inline]
    pub fn put_u32(&mut self, v: u32) {
        self.put_bytes(&v.to_le_bytes());
    }
    #[inline]
    pub fn put_u64(&mut self, v: u64) {
        self.put_bytes(&v.to_le_bytes());
    }
    /// A length (of a vector, a queue, a map).
    #[inline]
    pub fn put_len(&mut self, n: usize) {
        self.put_u64(n as u64);
    }

    /// A named section: `body` writes its contents; the name goes before and the byte count
    /// after, so a reader tells which part of the device a damaged or mismatched file breaks.
    pub fn section(&mut self, name: &str, body: impl FnOnce(&mut StateWriter<'a>)) {
        debug_assert!(name.len() <= MAX_SECTION_NAME_BYTES);
        self.put_u8(name.len() as u8);
        self.put_bytes(name.as_bytes());
        let start = self.written_bytes;
        body(self);
        let len = self.written_bytes - start;
        self.put_u64(len);
    }

    /// Appends the checksum and flushes. Returns the bytes written.
    pub fn finish(mut self) -> Result<u64, StateError> {
        let sum = self.sum.finish();
        self.put_bytes(&sum.to_le_bytes());
        self.drain();
        if let Some(e) = self.error.take() {
            return Err(e.into());
        }
        self.out.flush()?;
        Ok(self.written_bytes)
    }
}

/// Reads a state back: checks every length against the bytes left before allocating, and
/// the checksum at the end ([`StateReader::finish`]).
pub struct StateReader<'a> {
    input: Box<dyn Read + 'a>,
    buf: Vec<u8>,
    pos: usize,
    sum: Checksum,
    /// Bytes of the file not yet taken by the caller (the checksum's 8 included).
    left_bytes: u64,
    read_bytes: u64,
    section: String,
}

/// Reads a whole state of `total_bytes` bytes and checks it against its checksum without
/// loading it, so it can be verified before it goes into a device that a failed load would
/// leave half changed: its header.
pub fn verify(input: impl Read, total_bytes: u64) -> Result<StateHeader, StateError> {
    let (mut r, header) = StateReader::new(input, total_bytes)?;
    r.section = "body".to_string();
    let mut scratch = vec![0u8; BUFFER_BYTES];
    while r.left_bytes > 8 {
        let n = (r.left_bytes - 8).min(scratch.len() as u64) as usize;
        r.get_bytes(&mut scratch[..n])?;
    }
    r.finish()?;
    Ok(header)
}

impl<'a> StateReader<'a> {
    /// Opens a state of `total_bytes` bytes and reads its header.
    pub fn new(
        input: impl Read + 'a,
        total_bytes: u64,
    ) -> Result<(StateReader<'a>, StateHeader), StateError> {
        let mut r = StateReader {
            input: Box::new(input),
            buf: Vec::with_capacity(BUFFER_BYTES),
            pos: 0,
            sum: Checksum::new(),
            left_bytes: total_bytes,
            read_bytes: 0,
            section: "header".to_string(),
        };
        let mut magic = [0u8; 8];
        if total_bytes < 8 {
            return Err(StateError::NotState);
        }
        r.get_bytes(&mut magic)?;
        if magic != MAGIC {
            return Err(StateError::NotState);
        }
        let version = r.get_u32()?;
        if version != FORMAT_VERSION {
            return Err(StateError::Version {
                found: version,
                expected: FORMAT_VERSION,
            });
        }
        let kind_len = r.get_u8()? as usize;
        if kind_len > MAX_KIND_BYTES {
            return Err(StateError::corrupt(format!(
                "the header's device kind is {kind_len} bytes long (at most {MAX_KIND_BYTES})"
            )));
        }
        let mut kind = vec![0u8; kind_len];
        r.get_bytes(&mut kind)?;
        let kind = String::from_utf8(kind)
            .map_err(|_| StateError::corrupt("the header's device kind is not text"))?;
        let header = StateHeader {
            kind,
            config_hash: r.get_u64()?,
            device_seed: r.get_u64()?,
            clock_ns: r.get_u64()?,
        };
        if header.clock_ns > MAX_STATE_TIME_NS {
            return Err(StateError::corrupt(format!(
                "its clock is {} ns, past the {MAX_STATE_TIME_NS} ns (2^62) a run can reach",
                header.clock_ns
            )));
        }
        Ok((r, header))
    }

    fn truncated(&self) -> StateError {
        StateError::Truncated {
            section: self.section.clone(),
        }
    }

    /// Bytes left before the checksum.
    pub fn left_bytes(&self) -> u64 {
        self.left_bytes.saturating_sub(8)
    }

    /// Exactly `out.len()` bytes.
    pub fn get_bytes(&mut self, out: &mut [u8]) -> Result<(), StateError> {
        if (out.len() as u64) > self.left_bytes {
            return Err(self.truncated());
        }
        let mut done = 0;
        while done < out.len() {
            if self.pos == self.buf.len() {
                // Large reads go straight to their destination.
                if out.len() - done >= BUFFER_BYTES / 2 {
                    self.input
                        .read_exact(&mut out[done..])
                        .map_err(|e| match e.kind() {
                            std::io::ErrorKind::UnexpectedEof => self.truncated(),
                            _ => StateError::Io(e),
                        })?;
                    break;
                }
                self.buf.resize(BUFFER_BYTES, 0);
                let n = loop {
                    match self.input.read(&mut self.buf) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e.into()),
                    }
                };
                self.buf.truncate(n);
                self.pos = 0;
                if n == 0 {
                    return Err(self.truncated());
                }
            }
            let take = (self.buf.len() - self.pos).min(out.len() - done);
            out[done..done + take].copy_from_slice(&self.buf[self.pos..self.pos + take]);
            self.pos += take;
            done += take;
        }
        self.sum.update(out);
        self.left_bytes -= out.len() as u64;
        self.read_bytes += out.len() as u64;
        Ok(())
    }

    #[inline]
    pub fn get_u8(&mut self) -> Result<u8, StateError> {
        let mut b = [0u8; 1];
        self.get_bytes(&mut b)?;
        Ok(b[0])
    }
    #[inline]
    pub fn get_u32(&mut self) -> Result<u32, StateError> {
        let mut b = [0u8; 4];
        self.get_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    #[inline]
    pub fn get_u64(&mut self) -> Result<u64, StateError> {
        let mut b = [0u8; 8];
        self.get_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// A length of elements that take at least `min_bytes` each: no more than the bytes
    /// left could hold.
    pub fn get_len(&mut self, min_bytes: usize) -> Result<usize, StateError> {
        let n = self.get_u64()?;
        let fits = self.left_bytes() / (min_bytes.max(1) as u64);
        if n > fits {
            return Err(StateError::corrupt(format!(
                "section '{}' claims {n} elements where {} bytes are left (the file is truncated or damaged)",
                self.section,
                self.left_bytes()
            )));
        }
        Ok(n as usize)
    }

    /// A length the configuration bounds by `max` (a queue's capacity, a table's size).
    pub fn len_at_most(&mut self, min_bytes: usize, max: usize) -> Result<usize, StateError> {
        let n = self.get_len(min_bytes)?;
        if n > max {
            return Err(StateError::corrupt(format!(
                "section '{}' holds {n} elements where this configuration has room for {max}",
                self.section
            )));
        }
        Ok(n)
    }

    /// A length the configuration fixes: the file must have exactly `expected`.
    pub fn len_exactly(&mut self, min_bytes: usize, expected: usize) -> Result<(), StateError> {
        let n = self.get_len(min_bytes)?;
        if n != expected {
            return Err(StateError::corrupt(format!(
                "section '{}' holds {n} elements where this configuration has {expected}",
                self.section
            )));
        }
        Ok(())
    }

    /// Reads the section `name` that [`StateWriter::section`] wrote.
    pub fn section(
        &mut self,
        name: &str,
        body: impl FnOnce(&mut StateReader<'a>) -> Result<(), StateError>,
    ) -> Result<(), StateError> {
        let outer = std::mem::replace(&mut self.section, name.to_string());
        let len = self.get_u8()? as usize;
        let mut found = vec![0u8; len.min(MAX_SECTION_NAME_BYTES)];
        if len > MAX_SECTION_NAME_BYTES {
            return Err(StateError::corrupt(format!(
                "a section name of {len} bytes where '{name}' was expected"
            )));
        }
        self.get_bytes(&mut found)?;
        if found != name.as_bytes() {
            return Err(StateError::corrupt(format!(
                "section '{}' where '{name}' was expected",
                String::from_utf8_lossy(&found)
            )));
        }
        let start = self.read_bytes;
        body(self)?;
        let read = self.read_bytes - start;
        let len = self.get_u64()?;
        if len != read {
            return Err(StateError::corrupt(format!(
                "section '{name}' was written as {len} bytes and reads as {read}"
            )));
        }
        self.section = outer;
        Ok(())
    }

    /// Checks the checksum and that nothing follows it.
    pub fn finish(mut self) -> Result<(), StateError> {
        self.section = "checksum".to_string();
        let expected = self.sum.finish();
        let mut b = [0u8; 8];
        self.get_bytes(&mut b)?;
        if u64::from_le_bytes(b) != expected {
            return Err(StateError::corrupt(
                "its checksum does not match its contents",
            ));
        }
        if self.left_bytes != 0 {
            return Err(StateError::corrupt(format!(
                "{} bytes follow its checksum",
                self.left_bytes
            )));
        }
        Ok(())
    }
}

/// Saves `from` as a state file of one section (its checksum valid) and loads that into
/// `into`: what loading makes of a part whatever its fields hold. Tests forge a part's
/// fields and require the load to refuse them.
pub fn reload_into<T: State>(from: &T, into: &mut T) -> Result<(), StateError> {
    let header = StateHeader {
        kind: "drive".into(),
        config_hash: 0,
        device_seed: 0,
        clock_ns: 0,
    };
    let mut bytes = Vec::new();
    let mut w = StateWriter::new(&mut bytes, &header);
    w.section("part", |w| from.save(w));
    w.finish()?;
    let (mut r, _) = StateReader::new(&bytes[..], bytes.len() as u64)?;
    r.section("part", |r| into.load(r))?;
    r.finish()
}

/// A part of a device that a state file carries. `load` reads into a value built from the
/// same configuration as the one saved: sizes the configuration fixes are already right.
pub trait State {
    /// Fewest bytes one value takes in a file (bounds lengths read before allocating).
    fn min_bytes() -> usize
    where
        Self: Sized,
    {
        1
    }

    fn save(&self, w: &mut StateWriter<'_>);
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError>;

    /// A value to load into where the device has none (an `Option` that is `None` in the
    /// device and holds a value in the file). `None`: the value comes only from the
    /// configuration, so a file holding one where the device has none is from another.
    fn fresh() -> Option<Self>
    where
        Self: Sized,
    {
        None
    }

    /// A run of values. Plain integers override these to move the whole slice as bytes.
    fn save_slice(items: &[Self], w: &mut StateWriter<'_>)
    where
        Self: Sized,
    {
        for item in items {
            item.save(w);
        }
    }
    fn load_slice(items: &mut [Self], r: &mut StateReader<'_>) -> Result<(), StateError>
    where
        Self: Sized,
    {
        for item in items {
            item.load(r)?;
        }
        Ok(())
    }
}

/// Integers whose slices go to and from the file as bytes.
macro_rules! state_int {
    ($($t:ty),*) => {$(
        impl State for $t {
            fn min_bytes() -> usize {
                std::mem::size_of::<$t>()
            }
            fn fresh() -> Option<Self> {
                Some(0)
            }
            #[inline]
            fn save(&self, w: &mut StateWriter<'_>) {
                w.put_bytes(&self.to_le_bytes());
            }
            #[inline]
            fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                r.get_bytes(&mut b)?;
                *self = <$t>::from_le_bytes(b);
                Ok(())
            }
            fn save_slice(items: &[Self], w: &mut StateWriter<'_>) {
                #[cfg(target_endian = "little")]
                {
                    // SAFETY: a plain integer slice is initialised memory of exactly
                    // `size_of_val(items)` bytes, in the file's byte order on this target.
                    let bytes = unsafe {
                        std::slice::from_raw_parts(
                            items.as_ptr().cast::<u8>(),
                            std::mem::size_of_val(items),
                        )
                    };
                    w.put_bytes(bytes);
                }
                #[cfg(not(target_endian = "little"))]
                for item in items {
                    item.save(w);
                }
            }
            fn load_slice(items: &mut [Self], r: &mut StateReader<'_>) -> Result<(), StateError> {
                #[cfg(target_endian = "little")]
                {
                    // SAFETY: every bit pattern is a valid value of a plain integer, and the
                    // slice is exactly `size_of_val(items)` bytes of writable memory.
                    let bytes = unsafe {
                        std::slice::from_raw_parts_mut(
                            items.as_mut_ptr().cast::<u8>(),
                            std::mem::size_of_val(items),
                        )
                    };
                    r.get_bytes(bytes)
                }
                #[cfg(not(target_endian = "little"))]
                {
                    for item in items {
                        item.load(r)?;
                    }
                    Ok(())
                }
            }
        }
    )*};
}
state_int!(u8, u16, u32, u64, u128, i8, i16, i32, i64);

impl State for usize {
    fn fresh() -> Option<Self> {
        Some(0)
    }
    fn min_bytes() -> usize {
        8
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        w.put_u64(*self as u64);
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        let v = r.get_u64()?;
        *self = usize::try_from(v)
            .map_err(|_| StateError::corrupt(format!("{v} does not fit this machine's usize")))?;
        Ok(())
    }
}

impl State for bool {
    fn fresh() -> Option<Self> {
        Some(false)
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        w.put_u8(u8::from(*self));
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        *self = match r.get_u8()? {
            0 => false,
            1 => true,
            b => {
                return Err(StateError::corrupt(format!(
                    "{b} where a flag (0 or 1) was expected"
                )))
            }
        };
        Ok(())
    }
}

impl State for f64 {
    fn fresh() -> Option<Self> {
        Some(0.0)
    }
    fn min_bytes() -> usize {
        8
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        w.put_u64(self.to_bits());
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        *self = f64::from_bits(r.get_u64()?);
        Ok(())
    }
}

impl State for f32 {
    fn fresh() -> Option<Self> {
        Some(0.0)
    }
    fn min_bytes() -> usize {
        4
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        w.put_u32(self.to_bits());
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        *self = f32::from_bits(r.get_u32()?);
        Ok(())
    }
}

impl State for () {
    fn save(&self, _: &mut StateWriter<'_>) {}
    fn load(&mut self, _: &mut StateReader<'_>) -> Result<(), StateError> {
        Ok(())
    }
}

impl<T: State, const N: usize> State for [T; N] {
    fn min_bytes() -> usize {
        T::min_bytes() * N
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        T::save_slice(self, w);
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        T::load_slice(self, r)
    }
}

impl<T: State + Default> State for Vec<T> {
    fn min_bytes() -> usize {
        8
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        w.put_len(self.len());
        T::save_slice(self, w);
    }
    fn fresh() -> Option<Self> {
        Some(Vec::new())
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        let n = r.get_len(T::min_bytes())?;
        // Vectors the configuration sizes load in place (their elements may carry
        // configuration of their own); others are rebuilt.
        if n != self.len() {
            self.clear();
            self.resize_with(n, T::default);
        }
        T::load_slice(self, r)
    }
}

impl<T: State + Default> State for VecDeque<T> {
    fn min_bytes() -> usize {
        8
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        w.put_len(self.len());
        let (a, b) = self.as_slices();
        T::save_slice(a, w);
        T::save_slice(b, w);
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        let n = r.get_len(T::min_bytes())?;
        self.clear();
        self.resize_with(n, T::default);
        self.make_contiguous();
        let (a, _) = self.as_mut_slices();
        T::load_slice(a, r)
    }
}

impl<T: State> State for Option<T> {
    fn fresh() -> Option<Self> {
        Some(None)
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        match self {
            None => w.put_u8(0),
            Some(v) => {
                w.put_u8(1);
                v.save(w);
            }
        }
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        match r.get_u8()? {
            // A part only the configuration makes (no fresh value) is not dropped by a file
            // that lacks it: the file is of another configuration.
            0 if self.is_some() && T::fresh().is_none() => {
                return Err(StateError::corrupt(format!(
                    "section '{}' lacks a part this device's configuration has",
                    r.section
                )))
            }
            0 => *self = None,
            1 => {
                if self.is_none() {
                    *self = Some(T::fresh().ok_or_else(|| {
                        StateError::corrupt(format!(
                            "section '{}' holds a part this device's configuration does not have",
                            r.section
                        ))
                    })?);
                }
                if let Some(v) = self {
                    v.load(r)?;
                }
            }
            b => {
                return Err(StateError::corrupt(format!(
                    "{b} where an option's tag (0 or 1) was expected"
                )))
            }
        }
        Ok(())
    }
}

impl<T: State + ?Sized> State for Box<T> {
    fn save(&self, w: &mut StateWriter<'_>) {
        (**self).save(w);
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        (**self).load(r)
    }
}

impl<T: State + ?Sized> State for std::rc::Rc<std::cell::RefCell<T>> {
    fn save(&self, w: &mut StateWriter<'_>) {
        self.borrow().save(w);
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        self.borrow_mut().load(r)
    }
}

/// Saved in key order, so the same state gives the same bytes.
impl<K, V> State for HashMap<K, V>
where
    K: State + Default + Ord + Copy + std::hash::Hash + Eq,
    V: State + Default,
{
    fn min_bytes() -> usize {
        8
    }
    fn save(&self, w: &mut StateWriter<'_>) {
        let mut keys: Vec<&K> = self.keys().collect();
        keys.sort_unstable();
        w.put_len(keys.len());
        for k in keys {
            k.save(w);
            self[k].save(w);
        }
    }
    fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        let n = r.get_len(K::min_bytes() + V::min_bytes())?;
        self.clear();
        self.reserve(n);
        for _ in 0..n {
            let mut k = K::default();
            k.load(r)?;
            let mut v = V::default();
            v.load(r)?;
            self.insert(k, v);
        }
        Ok(())
    }
}

macro_rules! state_tuple {
    ($($n:tt $t:ident),*) => {
        impl<$($t: State),*> State for ($($t,)*) {
            fn min_bytes() -> usize {
        0 $(+ $t::min_bytes())*
    }
            fn fresh() -> Option<Self> {
                Some(($($t::fresh()?,)*))
            }
            fn save(&self, w: &mut StateWriter<'_>) {
                $(self.$n.save(w);)*
            }
            fn load(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
                $(self.$n.load(r)?;)*
                Ok(())
            }
        }
    };
}
state_tuple!(0 A, 1 B);
state_tuple!(0 A, 1 B, 2 C);
state_tuple!(0 A, 1 B, 2 C, 3 D);

/// `State` for a struct by its fields: those listed are saved in order, those after `skip`
/// are configuration (equal in a device built from the same configuration) and are not.
/// Every field must be named one way or the other: a field added to the struct and not here
/// is a compile error, so nothing a run changes is silently left out of a state. A leading
/// `default` makes [`State::fresh`] the type's `Default` (for values that may be absent from
/// the device a state is loaded into, in an `Option`). `fixed { ... }` names saved vectors
/// whose length the configuration sets (a table per block, a ring of a configured size): the
/// file must hold each at the length the device built from the configuration has, or the
/// state is refused (a shorter table would be indexed past its end). A trailing `check PATH`
/// names a `fn(&Self) -> Result<(), String>` run once the fields are loaded: what the bytes
/// mean is checked against the configuration (indices in range, counts that agree), so a
/// forged state with a valid checksum is refused instead of trusted.
#[macro_export]
macro_rules! impl_state {
    (@impl [$($fresh:tt)*] $ty:ident { $($field:ident),* $(,)? } $(skip { $($skip:ident),* $(,)? })? $(fixed { $($fixed:ident),* $(,)? })? $(check $check:path)?) => {
        impl $crate::state::State for $ty {
            fn save(&self, w: &mut $crate::state::StateWriter<'_>) {
                let $ty { $($field,)* $($($skip: _,)*)? } = self;
                $($crate::state::State::save($field, w);)*
            }
            fn load(
                &mut self,
                r: &mut $crate::state::StateReader<'_>,
            ) -> Result<(), $crate::state::StateError> {
                {
                    let $ty { $($field,)* $($($skip: _,)*)? } = self;
                    $(let fixed_lens = [$($fixed.len()),*];)?
                    $($crate::state::State::load($field, r)?;)*
                    $(
                        let names = [$(stringify!($fixed)),*];
                        let loaded = [$($fixed.len()),*];
                        for ((name, want), got) in names.iter().zip(fixed_lens).zip(loaded) {
                            if got != want {
                                return Err($crate::state::StateError::corrupt(format!(
                                    "{}'s {name} holds {got} entries where this configuration has {want}",
                                    stringify!($ty)
                                )));
                            }
                        }
                    )?
                }
                $($check(self).map_err($crate::state::StateError::corrupt)?;)?
                Ok(())
            }
            $($fresh)*
        }
    };
    (default $($rest:tt)*) => {
        $crate::impl_state!(@impl [
            fn fresh() -> Option<Self> {
                Some(Default::default())
            }
        ] $($rest)*);
    };
    ($($rest:tt)*) => {
        $crate::impl_state!(@impl [] $($rest)*);
    };
}

/// `State` for a field-less enum, as its index among the variants listed (all of them).
#[macro_export]
macro_rules! impl_state_enum {
    ($ty:ident { $($variant:ident),+ $(,)? }) => {
        impl $crate::state::State for $ty {
            fn save(&self, w: &mut $crate::state::StateWriter<'_>) {
                const ALL: &[$ty] = &[$($ty::$variant),+];
                let i = ALL.iter().position(|v| v == self).unwrap_or(0);
                w.put_u8(i as u8);
            }
            fn load(
                &mut self,
                r: &mut $crate::state::StateReader<'_>,
            ) -> Result<(), $crate::state::StateError> {
                const ALL: &[$ty] = &[$($ty::$variant),+];
                let i = r.get_u8()? as usize;
                *self = *ALL.get(i).ok_or_else(|| $crate::state::StateError::Corrupt {
                    what: format!("{i} is not a {} (0 to {})", stringify!($ty), ALL.len() - 1),
                })?;
                Ok(())
            }
        }
        // Every variant listed: adding one is a compile error here.
        const _: fn($ty) = |v| match v { $($ty::$variant => {}),+ };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> StateHeader {
        StateHeader {
            kind: "drive".into(),
            config_hash: 7,
            device_seed: 42,
            clock_ns: 123,
        }
    }

    #[derive(Debug, Default, PartialEq)]
    struct Part {
        a: u64,
        big: Vec<u32>,
        q: VecDeque<(u64, u64)>,
        o: Option<u16>,
        flag: bool,
        x: f64,
        config: String,
    }
    impl_state!(default Part { a, big, q, o, flag, x } skip { config });

    fn sample() -> Part {
        let mut q = VecDeque::new();
        q.push_back((1, 2));
        q.push_front((3, 4));
        Part {
            a: 9,
            big: (0..300_000).map(|i| i * 7).collect(),
            q,
            o: Some(5),
            flag: true,
            x: 1.5,
            config: "kept".into(),
        }
    }

    fn save(p: &Part) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = StateWriter::new(&mut out, &header());
        w.section("part", |w| p.save(w));
        w.finish().unwrap();
        out
    }

    fn load(bytes: &[u8]) -> Result<Part, StateError> {
        let (mut r, h) = StateReader::new(bytes, bytes.len() as u64)?;
        if h != header() {
            // The caller compares the header with what it expects.
            return Err(StateError::corrupt("header differs"));
        }
        let mut p = Part {
            config: "kept".into(),
            ..Part::default()
        };
        r.section("part", |r| p.load(r))?;
        r.finish()?;
        Ok(p)
    }

    #[test]
    fn a_saved_part_loads_back_equal() {
        let p = sample();
        let bytes = save(&p);
        assert_eq!(load(&bytes).unwrap(), p);
        assert_eq!(save(&p), bytes, "same state, same bytes");
    }

    #[test]
    fn damage_anywhere_is_refused() {
        let bytes = save(&sample());
        // Every byte of the header and a sample of the body, each flipped in turn.
        for i in (0..64).chain((64..bytes.len()).step_by(997)) {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(load(&bad).is_err(), "flip at byte {i} went unnoticed");
        }
        for n in [0, 7, 20, 60, bytes.len() / 2, bytes.len() - 1] {
            assert!(load(&bytes[..n]).is_err(), "cut at {n} went unnoticed");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(load(&longer), Err(StateError::Corrupt { .. })));
    }

    #[test]
    fn wrong_version_and_magic_say_so() {
        let mut bytes = save(&sample());
        bytes[8] = 9;
        assert!(matches!(
            load(&bytes),
            Err(StateError::Version { found: 9, .. })
        ));
        bytes[0] = b'X';
        assert!(matches!(load(&bytes), Err(StateError::NotState)));
    }

    #[test]
    fn a_huge_length_is_refused_before_allocating() {
        let mut out = Vec::new();
        let mut w = StateWriter::new(&mut out, &header());
        w.section("part", |w| w.put_u64(u64::MAX / 2));
        w.finish().unwrap();
        let (mut r, _) = StateReader::new(&out[..], out.len() as u64).unwrap();
        let mut v: Vec<u64> = Vec::new();
        let e = r.section("part", |r| v.load(r)).unwrap_err();
        assert!(e.to_string().contains("claims"), "{e}");
        assert!(v.capacity() < 1024);
    }

    #[test]
    fn checksum_sees_pieces_as_one_stream() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 31) as u8).collect();
        let whole = checksum_of(&data);
        for cut in [1, 5, 31, 32, 33, 500] {
            let mut c = Checksum::new();
            c.update(&data[..cut]);
            c.update(&data[cut..]);
            assert_eq!(c.finish(), whole, "cut at {cut}");
        }
        let mut other = data.clone();
        other[999] ^= 1;
        assert_ne!(checksum_of(&other), whole);
    }
}
