//! Helpers shared by the raw-socket tests: a fixed-latency device, a server on a Unix socket
//! in the test's target directory, and a client that speaks the protocol in bytes.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use flashlab_engine::{BlockDevice, Completion, DeviceError, IoRequest};
use flashlab_serve::proto::*;
use flashlab_serve::{Finished, Listen, ServeConfig, Server};

/// A 64 MiB device whose every command completes a fixed time after submission.
pub struct Fixed {
    pub latency_ns: u64,
}

impl BlockDevice for Fixed {
    fn capacity_bytes(&self) -> u64 {
        64 << 20
    }
    fn prefetch(&self, _req: &IoRequest, _stage: flashlab_engine::PrefetchStage) {}
    fn submit(&mut self, now_ns: u64, _req: &IoRequest) -> Result<Completion, DeviceError> {
        Ok(Completion {
            accepted_ns: now_ns,
            done_ns: now_ns + self.latency_ns,
        })
    }
}

pub struct TestServer {
    pub path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Finished<Fixed>>>,
}

impl TestServer {
    pub fn start(name: &str, latency_ns: u64, tune: impl FnOnce(&mut ServeConfig)) -> TestServer {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let path = dir.join(format!("serve-{name}-{}.sock", std::process::id()));
        let mut config = ServeConfig::new(Listen::Unix(path.clone()));
        config.export_name = "test-drive".into();
        tune(&mut config);
        let server = Server::bind(Fixed { latency_ns }, config).expect("bind");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || server.run(&flag).expect("run"));
        TestServer {
            path,
            stop,
            thread: Some(thread),
        }
    }

    pub fn connect(&self) -> UnixStream {
        let s = UnixStream::connect(&self.path).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    }

    /// A connection in the transmission phase.
    pub fn client(&self) -> UnixStream {
        let mut s = self.connect();
        hello(&mut s, FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
        let (code, infos) = go(&mut s, b"");
        assert_eq!(code, REP_ACK, "{infos:?}");
        s
    }

    pub fn finish(mut self) -> Finished<Fixed> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().expect("server thread")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

pub fn read_n(s: &mut (impl Read + Write), n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    s.read_exact(&mut v).expect("read");
    v
}

/// Read the server's greeting and send the client flags.
pub fn hello(s: &mut (impl Read + Write), client_flags: u32) {
    let h = read_n(s, 18);
    assert_eq!(be64(&h[0..8]), NBD_MAGIC);
    assert_eq!(be64(&h[8..16]), IHAVEOPT);
    assert_eq!(be16(&h[16..18]), FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);
    s.write_all(&client_flags.to_be_bytes()).unwrap();
}

pub fn send_option(s: &mut (impl Read + Write), option: u32, data: &[u8]) {
    let mut m = Vec::new();
    m.extend_from_slice(&IHAVEOPT.to_be_bytes());
    m.extend_from_slice(&option.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    s.write_all(&m).unwrap();
}

/// One option reply: (option, type, data).
pub fn option_reply(s: &mut (impl Read + Write)) -> (u32, u32, Vec<u8>) {
    let h = read_n(s, 20);
    assert_eq!(be64(&h[0..8]), OPT_REPLY_MAGIC);
    let len = be32(&h[16..20]) as usize;
    (be32(&h[8..12]), be32(&h[12..16]), read_n(s, len))
}

/// NBD_OPT_GO for `name` asking for the name and description: the final reply type and
/// the NBD_REP_INFO payloads before it.
pub fn go(s: &mut (impl Read + Write), name: &[u8]) -> (u32, Vec<Vec<u8>>) {
    let mut d = Vec::new();
    d.extend_from_slice(&(name.len() as u32).to_be_bytes());
    d.extend_from_slice(name);
    d.extend_from_slice(&2u16.to_be_bytes());
    d.extend_from_slice(&INFO_NAME.to_be_bytes());
    d.extend_from_slice(&INFO_DESCRIPTION.to_be_bytes());
    send_option(s, OPT_GO, &d);
    let mut infos = Vec::new();
    loop {
        let (opt, kind, data) = option_reply(s);
        assert_eq!(opt, OPT_GO);
        if kind == REP_INFO {
            infos.push(data);
        } else {
            return (kind, infos);
        }
    }
}

pub fn send_request(
    s: &mut (impl Read + Write),
    kind: u16,
    flags: u16,
    handle: u64,
    offset: u64,
    len: u32,
    data: &[u8],
) {
    let r = Request {
        flags,
        kind,
        handle,
        offset,
        len,
    };
    let mut m = r.encode().to_vec();
    m.extend_from_slice(data);
    s.write_all(&m).unwrap();
}

/// A simple reply: (error, handle, data of `data_len` bytes when no error).
pub fn reply(s: &mut (impl Read + Write), data_len: usize) -> (u32, u64, Vec<u8>) {
    let h = read_n(s, REPLY_BYTES);
    assert_eq!(be32(&h[0..4]), SIMPLE_REPLY_MAGIC);
    let error = be32(&h[4..8]);
    let data = if error == 0 {
        read_n(s, data_len)
    } else {
        Vec::new()
    };
    (error, be64(&h[8..16]), data)
}

pub fn call(
    s: &mut (impl Read + Write),
    kind: u16,
    flags: u16,
    offset: u64,
    len: u32,
    data: &[u8],
) -> (u32, Vec<u8>) {
    send_request(s, kind, flags, 7, offset, len, data);
    let n = if kind == CMD_READ { len as usize } else { 0 };
    let (e, h, d) = reply(s, n);
    assert_eq!(h, 7);
    (e, d)
}

/// True when the server has closed the connection (EOF or reset, not a timeout).
pub fn closed(s: &mut UnixStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = [0u8; 64];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}
