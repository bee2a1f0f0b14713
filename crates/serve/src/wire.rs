//! The server's side of the NBD conversation as pure functions of bytes: the handshake and
//! the validation of transmission-phase requests. They take any `Read + Write`, so the
//! connection threads run them on sockets and the fuzzer on plain buffers.

use std::io::{self, Read, Write};
use std::time::Duration;

use crate::proto::{self, Request};

/// Options one handshake may send before it is cut off.
pub const MAX_OPTIONS: u32 = 1024;
/// Largest option payload accepted (export names are at most 4096 bytes).
pub const MAX_OPTION_BYTES: u32 = 8192;
/// Bytes of an unknown export name repeated in the error reply.
const ECHO_NAME_BYTES: usize = 256;
/// Buffer for discarding a refused write's payload.
const DISCARD_BYTES: usize = 64 * 1024;

/// What every connection needs to know about the export and its limits.
#[derive(Debug, Clone)]
pub struct Export {
    pub name: String,
    pub description: String,
    pub size_bytes: u64,
    pub min_block_bytes: u32,
    pub preferred_block_bytes: u32,
    pub max_request_bytes: u32,
    pub strict_alignment: bool,
    pub max_in_flight_requests: usize,
    pub max_in_flight_bytes: u64,
    pub handshake_timeout: Duration,
}

/// How the handshake ended.
pub enum Negotiated {
    Transmission,
    /// The client aborted, or asked for an export that does not exist.
    Closed,
}

pub fn handshake(stream: &mut (impl Read + Write), export: &Export) -> io::Result<Negotiated> {
    let mut hello = [0u8; 18];
    hello[0..8].copy_from_slice(&proto::NBD_MAGIC.to_be_bytes());
    hello[8..16].copy_from_slice(&proto::IHAVEOPT.to_be_bytes());
    hello[16..18]
        .copy_from_slice(&(proto::FLAG_FIXED_NEWSTYLE | proto::FLAG_NO_ZEROES).to_be_bytes());
    stream.write_all(&hello)?;
    let client_flags = proto::read_u32(stream)?;
    if client_flags & !(proto::FLAG_C_FIXED_NEWSTYLE | proto::FLAG_C_NO_ZEROES) != 0 {
        return Err(protocol_error(format!(
            "unknown client flags {client_flags:#x}"
        )));
    }
    let no_zeroes = client_flags & proto::FLAG_C_NO_ZEROES != 0;
    for _ in 0..MAX_OPTIONS {
        let magic = proto::read_u64(stream)?;
        if magic != proto::IHAVEOPT {
            return Err(protocol_error(format!("bad option magic {magic:#x}")));
        }
        let option = proto::read_u32(stream)?;
        let len = proto::read_u32(stream)?;
        if len > MAX_OPTION_BYTES {
            return Err(protocol_error(format!(
                "option {option} carries {len} bytes (limit {MAX_OPTION_BYTES})"
            )));
        }
        let mut data = vec![0u8; len as usize];
        stream.read_exact(&mut data)?;
        match option {
            proto::OPT_EXPORT_NAME => {
                if !export.knows(&data) {
                    // This option cannot carry an error: the protocol says to disconnect.
                    return Ok(Negotiated::Closed);
                }
                let mut reply = Vec::with_capacity(10 + 124);
                reply.extend_from_slice(&export.size_bytes.to_be_bytes());
                reply.extend_from_slice(&proto::TRANSMISSION_FLAGS.to_be_bytes());
                if !no_zeroes {
                    reply.extend_from_slice(&[0u8; 124]);
                }
                stream.write_all(&reply)?;
                return Ok(Negotiated::Transmission);
            }
            proto::OPT_ABORT => {
                // The client may already have gone; its ACK is a courtesy.
                let _ = proto::write_option_reply(stream, option, proto::REP_ACK, &[]);
                return Ok(Negotiated::Closed);
            }
            proto::OPT_LIST => {
                if len != 0 {
                    proto::write_option_reply(
                        stream,
                        option,
                        proto::REP_ERR_INVALID,
                        b"NBD_OPT_LIST takes no data",
                    )?;
                    continue;
                }
                let mut entry = Vec::with_capacity(4 + export.name.len());
                entry.extend_from_slice(&(export.name.len() as u32).to_be_bytes());
                entry.extend_from_slice(export.name.as_bytes());
                proto::write_option_reply(stream, option, proto::REP_SERVER, &entry)?;
                proto::write_option_reply(stream, option, proto::REP_ACK, &[])?;
            }
            proto::OPT_INFO | proto::OPT_GO => {
                if info_reply(stream, option, &data, export)? && option == proto::OPT_GO {
                    return Ok(Negotiated::Transmission);
                }
            }
            _ => {
                proto::write_option_reply(
                    stream,
                    option,
                    proto::REP_ERR_UNSUP,
                    b"option not supported",
                )?;
            }
        }
    }
    Err(protocol_error(format!("more than {MAX_OPTIONS} options")))
}

/// Answer NBD_OPT_INFO or NBD_OPT_GO; true when the export was described and acknowledged.
fn info_reply(
    stream: &mut impl Write,
    option: u32,
    data: &[u8],
    export: &Export,
) -> io::Result<bool> {
    let parsed = (|| {
        let name_len = proto::be32(data.get(0..4)?) as usize;
        let name = data.get(4..4 + name_len)?;
        let count = proto::be16(data.get(4 + name_len..6 + name_len)?) as usize;
        let rest = data.get(6 + name_len..)?;
        if rest.len() != 2 * count {
            return None;
        }
        let infos: Vec<u16> = rest.chunks(2).map(proto::be16).collect();
        Some((name, infos))
    })();
    let Some((name, infos)) = parsed else {
        proto::write_option_reply(
            stream,
            option,
            proto::REP_ERR_INVALID,
            b"malformed NBD_OPT_INFO/NBD_OPT_GO data",
        )?;
        return Ok(false);
    };
    if !export.knows(name) {
        // The client's name is echoed only in part: the reply stays small whatever it sent.
        let shown = String::from_utf8_lossy(&name[..name.len().min(ECHO_NAME_BYTES)]);
        let more = if name.len() > ECHO_NAME_BYTES {
            "…"
        } else {
            ""
        };
        let msg = format!(
            "no export named '{shown}{more}'; this server has '{}' (or the default, '')",
            export.name
        );
        proto::write_option_reply(stream, option, proto::REP_ERR_UNKNOWN, msg.as_bytes())?;
        return Ok(false);
    }
    let mut info = Vec::with_capacity(16);
    info.extend_from_slice(&proto::INFO_EXPORT.to_be_bytes());
    info.extend_from_slice(&export.size_bytes.to_be_bytes());
    info.extend_from_slice(&proto::TRANSMISSION_FLAGS.to_be_bytes());
    proto::write_option_reply(stream, option, proto::REP_INFO, &info)?;
    // Block sizes are always sent: clients that know them align their requests, which is
    // what a drive needs; the server still accepts unaligned requests unless strict.
    let mut sizes = Vec::with_capacity(14);
    sizes.extend_from_slice(&proto::INFO_BLOCK_SIZE.to_be_bytes());
    sizes.extend_from_slice(&export.min_block_bytes.to_be_bytes());
    sizes.extend_from_slice(&export.preferred_block_bytes.to_be_bytes());
    sizes.extend_from_slice(&export.max_request_bytes.to_be_bytes());
    proto::write_option_reply(stream, option, proto::REP_INFO, &sizes)?;
    for kind in infos {
        let text = match kind {
            proto::INFO_NAME => &export.name,
            proto::INFO_DESCRIPTION => &export.description,
            _ => continue,
        };
        let mut v = Vec::with_capacity(2 + text.len());
        v.extend_from_slice(&kind.to_be_bytes());
        v.extend_from_slice(text.as_bytes());
        proto::write_option_reply(stream, option, proto::REP_INFO, &v)?;
    }
    proto::write_option_reply(stream, option, proto::REP_ACK, &[])?;
    Ok(true)
}

impl Export {
    /// The empty name is the default export; the device's name is the other spelling.
    fn knows(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
}

pub(crate) fn protocol_error(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// The error a request gets without reaching the device, if any.
pub fn check(req: &Request, export: &Export) -> Option<u32> {
    let known = matches!(
        req.kind,
        proto::CMD_READ
            | proto::CMD_WRITE
            | proto::CMD_FLUSH
            | proto::CMD_TRIM
            | proto::CMD_WRITE_ZEROES
    );
    if !known || req.flags & !(proto::CMD_FLAG_FUA | proto::CMD_FLAG_NO_HOLE) != 0 {
        return Some(proto::EINVAL);
    }
    if req.kind == proto::CMD_FLUSH {
        return None;
    }
    if req.len == 0 {
        return Some(proto::EINVAL);
    }
    let carries_data = matches!(req.kind, proto::CMD_READ | proto::CMD_WRITE);
    if carries_data && req.len > export.max_request_bytes {
        return Some(proto::EINVAL);
    }
    if req
        .offset
        .checked_add(u64::from(req.len))
        .is_none_or(|end| end > export.size_bytes)
    {
        // The protocol asks for ENOSPC on writes past the end and EINVAL otherwise.
        return Some(if req.kind == proto::CMD_WRITE {
            proto::ENOSPC
        } else {
            proto::EINVAL
        });
    }
    let b = u64::from(export.min_block_bytes.max(1));
    if export.strict_alignment
        && (!req.offset.is_multiple_of(b) || !u64::from(req.len).is_multiple_of(b))
    {
        return Some(proto::EINVAL);
    }
    None
}

pub fn discard(stream: &mut impl Read, mut len: u32) -> io::Result<()> {
    let mut sink = [0u8; DISCARD_BYTES];
    while len > 0 {
        let n = (len as usize).min(DISCARD_BYTES);
        stream.read_exact(&mut sink[..n])?;
        len -= n as u32;
    }
    Ok(())
}

/// What the next request on a connection is, once its header has been read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incoming {
    /// A request the device should serve; a WRITE's payload (`len` bytes) follows it.
    Serve(Request),
    /// A request refused without reaching the device; its payload has been skipped.
    Refused(Request, u32),
    /// NBD_CMD_DISC, or the client closed the connection between requests.
    Done,
}

/// Read one request header and validate it. A refused WRITE's payload is read and dropped,
/// so the stream stays in step; an accepted WRITE's payload is left for the caller.
pub fn next_request(stream: &mut impl Read, export: &Export) -> io::Result<Incoming> {
    let mut head = [0u8; proto::REQUEST_BYTES];
    match stream.read_exact(&mut head) {
        Ok(()) => {}
        // The client went away between requests: nothing is owed to anyone.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Incoming::Done),
        Err(e) => return Err(e),
    }
    let Some(req) = Request::decode(&head) else {
        return Err(protocol_error(format!(
            "bad request magic {:#x}",
            proto::be32(&head[0..4])
        )));
    };
    if req.kind == proto::CMD_DISC {
        return Ok(Incoming::Done);
    }
    if let Some(error) = check(&req, export) {
        if req.kind == proto::CMD_WRITE {
            discard(stream, req.len)?;
        }
        return Ok(Incoming::Refused(req, error));
    }
    Ok(Incoming::Serve(req))
}

/// Play `bytes` as everything a client sends on one connection: the handshake, then requests
/// until the bytes run out or the server would close the connection. WRITE payloads are read
/// into a buffer bounded by the request limit, as a connection does. This is the fuzzing
/// entry point; it touches no socket and no device.
pub fn replay_client_bytes(bytes: &[u8]) {
    let export = Export {
        name: "fuzz".into(),
        description: "fuzzed export".into(),
        size_bytes: 1 << 30,
        min_block_bytes: 512,
        preferred_block_bytes: 4096,
        max_request_bytes: 1 << 20,
        strict_alignment: bytes.first().is_some_and(|b| b & 1 != 0),
        max_in_flight_requests: 16,
        max_in_flight_bytes: 1 << 20,
        handshake_timeout: Duration::from_secs(1),
    };
    let mut io = Duplex {
        input: bytes,
        // What the server says is dropped; only the bound on it matters.
        output_bytes: 0,
    };
    match handshake(&mut io, &export) {
        Ok(Negotiated::Transmission) => {}
        Ok(Negotiated::Closed) | Err(_) => return,
    }
    let mut payload = Vec::new();
    loop {
        match next_request(&mut io.input, &export) {
            Ok(Incoming::Serve(req)) => {
                if req.kind == proto::CMD_WRITE {
                    assert!(
                        req.len <= export.max_request_bytes,
                        "{req:?} passed the check"
                    );
                    payload.resize(req.len as usize, 0);
                    if io.input.read_exact(&mut payload).is_err() {
                        return;
                    }
                }
                // A flush's range is not used; every other accepted range is inside the export.
                if req.kind != proto::CMD_FLUSH {
                    let end = req.offset.checked_add(u64::from(req.len));
                    assert!(
                        end.is_some_and(|e| e <= export.size_bytes),
                        "{req:?} passed"
                    );
                }
            }
            Ok(Incoming::Refused(_, error)) => assert_ne!(error, 0),
            Ok(Incoming::Done) | Err(_) => return,
        }
    }
}

/// Reads from a byte slice; counts and drops what is written.
struct Duplex<'a> {
    input: &'a [u8],
    output_bytes: u64,
}

impl Read for Duplex<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Duplex<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.output_bytes += buf.len() as u64;
        // Each option's reply is bounded, and so is the number of options.
        assert!(self.output_bytes <= u64::from(MAX_OPTIONS + 1) * 16 * 1024);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(code: u32, data: &[u8]) -> Vec<u8> {
        let mut v = proto::IHAVEOPT.to_be_bytes().to_vec();
        v.extend_from_slice(&code.to_be_bytes());
        v.extend_from_slice(&(data.len() as u32).to_be_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn a_whole_session_replays_from_bytes() {
        let mut b = (proto::FLAG_C_FIXED_NEWSTYLE | proto::FLAG_C_NO_ZEROES)
            .to_be_bytes()
            .to_vec();
        b.extend(option(proto::OPT_LIST, &[]));
        b.extend(option(proto::OPT_GO, &[0, 0, 0, 0, 0, 0]));
        let write = Request {
            flags: 0,
            kind: proto::CMD_WRITE,
            handle: 1,
            offset: 4096,
            len: 8,
        };
        b.extend(write.encode());
        b.extend([7u8; 8]);
        let refused = Request {
            len: 2 << 20,
            ..write
        };
        b.extend(refused.encode());
        let mut input: &[u8] = &b;
        let export_bytes = {
            let mut io = Duplex {
                input,
                output_bytes: 0,
            };
            assert!(matches!(
                handshake(&mut io, &test_export()),
                Ok(Negotiated::Transmission)
            ));
            input = io.input;
            io.output_bytes
        };
        assert!(export_bytes > 0);
        let e = test_export();
        assert_eq!(
            next_request(&mut input, &e).unwrap(),
            Incoming::Serve(write)
        );
        input = &input[8..];
        // Refused for its size; its (absent) payload cannot be skipped, which ends the stream.
        assert!(next_request(&mut input, &e).is_err());
        replay_client_bytes(&b);
    }

    fn test_export() -> Export {
        Export {
            name: "t".into(),
            description: String::new(),
            size_bytes: 1 << 30,
            min_block_bytes: 512,
            preferred_block_bytes: 4096,
            max_request_bytes: 1 << 20,
            strict_alignment: false,
            max_in_flight_requests: 4,
            max_in_flight_bytes: 1 << 20,
            handshake_timeout: Duration::from_secs(1),
        }
    }
}
