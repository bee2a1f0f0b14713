//! NBD wire format: the constants of the fixed-newstyle handshake and of the transmission
//! phase with simple replies, and big-endian encoders/decoders for the fixed-size messages.
//! Values follow the protocol document of the NBD project (`doc/proto.md`).

use std::io::{self, Read, Write};

/// "NBDMAGIC": first 8 bytes the server sends.
pub const NBD_MAGIC: u64 = 0x4e42_444d_4147_4943;
/// "IHAVEOPT": newstyle magic, also the prefix of every option the client sends.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Prefix of every option reply.
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

// Handshake flags (server) and client flags.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

// Transmission flags.
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;

// Option replies.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;
pub const REP_ERR_TOO_BIG: u32 = (1 << 31) + 9;

// Information types of NBD_OPT_INFO / NBD_OPT_GO.
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

// Commands.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_WRITE_ZEROES: u16 = 6;

// Command flags.
pub const CMD_FLAG_FUA: u16 = 1 << 0;
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;

// Error values of simple replies (the protocol fixes them to these Linux errno numbers).
pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const ENOMEM: u32 = 12;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const EOVERFLOW: u32 = 75;
pub const ENOTSUP: u32 = 95;
pub const ESHUTDOWN: u32 = 108;

/// The transmission flags this server offers: every connection shares one store and one
/// device, so flushes are visible across connections (multi-conn is safe).
pub const TRANSMISSION_FLAGS: u16 = FLAG_HAS_FLAGS
    | FLAG_SEND_FLUSH
    | FLAG_SEND_FUA
    | FLAG_SEND_TRIM
    | FLAG_SEND_WRITE_ZEROES
    | FLAG_CAN_MULTI_CONN;

/// Bytes of a request header.
pub const REQUEST_BYTES: usize = 28;
/// Bytes of a simple reply header.
pub const REPLY_BYTES: usize = 16;

/// One transmission-phase request header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub flags: u16,
    pub kind: u16,
    pub handle: u64,
    pub offset: u64,
    pub len: u32,
}

impl Request {
    /// Decode a header; `None` when the magic is wrong.
    pub fn decode(b: &[u8; REQUEST_BYTES]) -> Option<Request> {
        if be32(&b[0..4]) != REQUEST_MAGIC {
            return None;
        }
        Some(Request {
            flags: be16(&b[4..6]),
            kind: be16(&b[6..8]),
            handle: be64(&b[8..16]),
            offset: be64(&b[16..24]),
            len: be32(&b[24..28]),
        })
    }

    pub fn encode(&self) -> [u8; REQUEST_BYTES] {
        let mut b = [0u8; REQUEST_BYTES];
        b[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&self.flags.to_be_bytes());
        b[6..8].copy_from_slice(&self.kind.to_be_bytes());
        b[8..16].copy_from_slice(&self.handle.to_be_bytes());
        b[16..24].copy_from_slice(&self.offset.to_be_bytes());
        b[24..28].copy_from_slice(&self.len.to_be_bytes());
        b
    }
}

/// A simple reply header.
pub fn encode_reply(error: u32, handle: u64) -> [u8; REPLY_BYTES] {
    let mut b = [0u8; REPLY_BYTES];
    b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..16].copy_from_slice(&handle.to_be_bytes());
    b
}

/// Write one option reply (header and data).
pub fn write_option_reply(
    w: &mut impl Write,
    option: u32,
    reply: u32,
    data: &[u8],
) -> io::Result<()> {
    let mut head = [0u8; 20];
    head[0..8].copy_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    head[8..12].copy_from_slice(&option.to_be_bytes());
    head[12..16].copy_from_slice(&reply.to_be_bytes());
    head[16..20].copy_from_slice(&(data.len() as u32).to_be_bytes());
    w.write_all(&head)?;
    w.write_all(data)
}

pub fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

pub fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

pub fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

pub fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

pub fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trips_and_wrong_magic_is_refused() {
        let r = Request {
            flags: CMD_FLAG_FUA,
            kind: CMD_WRITE,
            handle: 0x0102_0304_0506_0708,
            offset: 1 << 40,
            len: 4096,
        };
        let b = r.encode();
        assert_eq!(&b[0..4], &[0x25, 0x60, 0x95, 0x13]);
        assert_eq!(Request::decode(&b), Some(r));
        let mut bad = b;
        bad[0] ^= 1;
        assert_eq!(Request::decode(&bad), None);
    }

    #[test]
    fn magic_numbers_spell_their_ascii_names() {
        assert_eq!(&NBD_MAGIC.to_be_bytes(), b"NBDMAGIC");
        assert_eq!(&IHAVEOPT.to_be_bytes(), b"IHAVEOPT");
    }

    #[test]
    fn option_reply_has_magic_option_type_and_length() {
        let mut v = Vec::new();
        write_option_reply(&mut v, OPT_GO, REP_ERR_UNSUP, b"no").unwrap();
        assert_eq!(be64(&v[0..8]), OPT_REPLY_MAGIC);
        assert_eq!(be32(&v[8..12]), OPT_GO);
        assert_eq!(be32(&v[12..16]), REP_ERR_UNSUP);
        assert_eq!(be32(&v[16..20]), 2);
        assert_eq!(&v[20..], b"no");
    }
}
