//! The server spoken to in raw bytes over a Unix socket: the handshake, every command, and
//! hostile clients (bad magic, unknown options and commands, out-of-range and oversized
//! requests, abrupt disconnects, floods, too many connections), which get an error reply or
//! a closed connection while the server keeps serving others.

mod common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use flashlab_serve::proto::*;
use flashlab_serve::{Listen, ServeConfig, Server};

#[test]
fn go_describes_the_export_and_options_get_fixed_newstyle_replies() {
    let srv = TestServer::start("go", 1000, |c| c.description = "a test drive".into());
    let mut s = srv.connect();
    hello(&mut s, FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
    // Unknown option: an error reply, and the handshake goes on.
    send_option(&mut s, 99, b"xyz");
    assert_eq!(
        option_reply(&mut s),
        (99, REP_ERR_UNSUP, b"option not supported".to_vec())
    );
    // LIST names the export.
    send_option(&mut s, OPT_LIST, &[]);
    let (_, kind, data) = option_reply(&mut s);
    assert_eq!(kind, REP_SERVER);
    assert_eq!(&data[4..], b"test-drive");
    assert_eq!(option_reply(&mut s).1, REP_ACK);
    // Malformed GO data and an unknown export name are errors, not disconnects.
    send_option(&mut s, OPT_GO, &[0, 0, 0, 9, b'a']);
    assert_eq!(option_reply(&mut s).1, REP_ERR_INVALID);
    assert_eq!(go(&mut s, b"other").0, REP_ERR_UNKNOWN);
    let (code, infos) = go(&mut s, b"test-drive");
    assert_eq!(code, REP_ACK);
    let export = infos
        .iter()
        .find(|i| be16(i) == INFO_EXPORT)
        .expect("NBD_INFO_EXPORT");
    assert_eq!(be64(&export[2..10]), 64 << 20);
    let flags = be16(&export[10..12]);
    for f in [
        FLAG_HAS_FLAGS,
        FLAG_SEND_FLUSH,
        FLAG_SEND_FUA,
        FLAG_SEND_TRIM,
        FLAG_SEND_WRITE_ZEROES,
    ] {
        assert_ne!(flags & f, 0, "flag {f:#x} in {flags:#x}");
    }
    let sizes = infos
        .iter()
        .find(|i| be16(i) == INFO_BLOCK_SIZE)
        .expect("NBD_INFO_BLOCK_SIZE");
    assert_eq!(
        (
            be32(&sizes[2..6]),
            be32(&sizes[6..10]),
            be32(&sizes[10..14])
        ),
        (512, 4096, 32 << 20)
    );
    assert!(infos
        .iter()
        .any(|i| be16(i) == INFO_NAME && &i[2..] == b"test-drive"));
    assert!(infos
        .iter()
        .any(|i| be16(i) == INFO_DESCRIPTION && &i[2..] == b"a test drive"));
    // In transmission now.
    assert_eq!(call(&mut s, CMD_FLUSH, 0, 0, 0, &[]).0, 0);
}

#[test]
fn export_name_option_and_abort_work_for_old_clients() {
    let srv = TestServer::start("oldstyle", 1000, |_| {});
    let mut s = srv.connect();
    hello(&mut s, FLAG_C_FIXED_NEWSTYLE);
    send_option(&mut s, OPT_EXPORT_NAME, b"");
    let r = read_n(&mut s, 8 + 2 + 124);
    assert_eq!(be64(&r[0..8]), 64 << 20);
    assert_ne!(be16(&r[8..10]) & FLAG_HAS_FLAGS, 0);
    assert!(r[10..].iter().all(|&b| b == 0));
    assert_eq!(call(&mut s, CMD_READ, 0, 0, 512, &[]), (0, vec![0u8; 512]));
    // ABORT is acknowledged and the connection closed.
    let mut a = srv.connect();
    hello(&mut a, FLAG_C_FIXED_NEWSTYLE);
    send_option(&mut a, OPT_ABORT, &[]);
    assert_eq!(option_reply(&mut a).1, REP_ACK);
    assert!(closed(&mut a));
    // An unknown name with EXPORT_NAME cannot be answered: the connection is closed.
    let mut u = srv.connect();
    hello(&mut u, FLAG_C_FIXED_NEWSTYLE);
    send_option(&mut u, OPT_EXPORT_NAME, b"nope");
    assert!(closed(&mut u));
}

#[test]
fn data_is_kept_across_connections_and_trims_and_write_zeroes_read_zero() {
    let srv = TestServer::start("data", 1000, |_| {});
    let mut a = srv.client();
    let pattern: Vec<u8> = (0..65536u32).map(|i| (i * 7 % 253) as u8 + 1).collect();
    assert_eq!(
        call(&mut a, CMD_WRITE, CMD_FLAG_FUA, 1 << 20, 65536, &pattern).0,
        0
    );
    assert_eq!(call(&mut a, CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    // Another connection sees the data; unaligned reads are served byte-exact.
    let mut b = srv.client();
    assert_eq!(call(&mut b, CMD_READ, 0, 1 << 20, 65536, &[]).1, pattern);
    assert_eq!(
        call(&mut b, CMD_READ, 0, (1 << 20) + 3, 100, &[]).1,
        pattern[3..103].to_vec()
    );
    assert_eq!(call(&mut b, CMD_TRIM, 0, 1 << 20, 4096, &[]).0, 0);
    assert_eq!(
        call(&mut b, CMD_WRITE_ZEROES, 0, (1 << 20) + 8192, 4096, &[]).0,
        0
    );
    assert_eq!(
        call(
            &mut b,
            CMD_WRITE_ZEROES,
            CMD_FLAG_NO_HOLE,
            (1 << 20) + 16384,
            4096,
            &[]
        )
        .0,
        0
    );
    let back = call(&mut a, CMD_READ, 0, 1 << 20, 65536, &[]).1;
    let mut want = pattern.clone();
    want[0..4096].fill(0);
    want[8192..12288].fill(0);
    want[16384..20480].fill(0);
    assert_eq!(back, want);
    send_request(&mut a, CMD_DISC, 0, 1, 0, 0, &[]);
    assert!(closed(&mut a));
    let f = srv.finish();
    assert_eq!(f.stats.sim.writes, 1);
    assert_eq!(f.stats.sim.trims, 1);
    assert_eq!(f.stats.sim.write_zeroes, 2);
    assert_eq!(f.stats.hard_disconnects, 0);
}

#[test]
fn replies_wait_for_the_simulated_completion_times_the_time_scale() {
    // 2 ms simulated at time scale 20: 40 ms real.
    let srv = TestServer::start("timing", 2_000_000, |c| c.time_scale = 20.0);
    let mut s = srv.client();
    let t0 = Instant::now();
    assert_eq!(call(&mut s, CMD_READ, 0, 0, 4096, &[]).0, 0);
    let waited = t0.elapsed();
    assert!(waited >= Duration::from_millis(39), "{waited:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    // Replies come back in completion order, not request order, and match by handle.
    send_request(&mut s, CMD_READ, 0, 1, 0, 512, &[]);
    send_request(&mut s, CMD_FLUSH, 0, 2, 0, 0, &[]);
    let (_, h1, _) = reply(&mut s, 512);
    let (_, h2, _) = reply(&mut s, 0);
    let mut handles = [h1, h2];
    handles.sort();
    assert_eq!(handles, [1, 2]);
}

#[test]
fn bad_handshakes_close_the_connection_and_the_server_stays_up() {
    let srv = TestServer::start("badhello", 1000, |c| {
        c.handshake_timeout = Duration::from_millis(300)
    });
    // Unknown client flags.
    let mut s = srv.connect();
    hello(&mut s, 0x80);
    assert!(closed(&mut s));
    // Wrong option magic.
    let mut s = srv.connect();
    hello(&mut s, FLAG_C_FIXED_NEWSTYLE);
    s.write_all(&[0xde; 16]).unwrap();
    assert!(closed(&mut s));
    // An option claiming 1 GiB of data.
    let mut s = srv.connect();
    hello(&mut s, FLAG_C_FIXED_NEWSTYLE);
    let mut m = IHAVEOPT.to_be_bytes().to_vec();
    m.extend_from_slice(&OPT_GO.to_be_bytes());
    m.extend_from_slice(&(1u32 << 30).to_be_bytes());
    s.write_all(&m).unwrap();
    assert!(closed(&mut s));
    // Silence during the handshake times out.
    let mut s = srv.connect();
    let _ = read_n(&mut s, 18);
    assert!(closed(&mut s));
    // Still serving.
    let mut s = srv.client();
    assert_eq!(call(&mut s, CMD_READ, 0, 0, 4096, &[]).0, 0);
    assert_eq!(srv.finish().stats.hard_disconnects, 4);
}

#[test]
fn bad_requests_get_error_replies_and_the_connection_goes_on() {
    let srv = TestServer::start("badreq", 1000, |_| {});
    let mut s = srv.client();
    // Unknown command, unknown flag.
    assert_eq!(call(&mut s, 42, 0, 0, 512, &[]).0, EINVAL);
    assert_eq!(call(&mut s, CMD_READ, 1 << 9, 0, 512, &[]).0, EINVAL);
    // Past the end: EINVAL for reads and trims, ENOSPC for writes (payload skipped).
    assert_eq!(call(&mut s, CMD_READ, 0, 64 << 20, 512, &[]).0, EINVAL);
    assert_eq!(call(&mut s, CMD_READ, 0, u64::MAX - 10, 512, &[]).0, EINVAL);
    assert_eq!(
        call(&mut s, CMD_TRIM, 0, (64 << 20) - 512, 1024, &[]).0,
        EINVAL
    );
    assert_eq!(
        call(&mut s, CMD_WRITE, 0, (64 << 20) - 512, 1024, &[5u8; 1024]).0,
        ENOSPC
    );
    // Zero length.
    assert_eq!(call(&mut s, CMD_READ, 0, 0, 0, &[]).0, EINVAL);
    // Over the 32 MiB request bound: refused; a write's payload is read and dropped.
    assert_eq!(
        call(&mut s, CMD_READ, 0, 0, (32 << 20) + 512, &[]).0,
        EINVAL
    );
    let big = vec![3u8; (32 << 20) + 512];
    assert_eq!(
        call(&mut s, CMD_WRITE, 0, 0, big.len() as u32, &big).0,
        EINVAL
    );
    // Still in step: nothing of the refused writes landed.
    assert_eq!(
        call(&mut s, CMD_READ, 0, 0, 4096, &[]),
        (0, vec![0u8; 4096])
    );
    // A bad request magic is a hard disconnect.
    s.write_all(&[0x11; REQUEST_BYTES]).unwrap();
    assert!(closed(&mut s));
    let f = srv.finish();
    assert_eq!(f.stats.error_replies, 9);
    assert_eq!(f.stats.sim.writes, 0);
}

#[test]
fn strict_alignment_refuses_misaligned_requests() {
    let srv = TestServer::start("strict", 1000, |c| c.strict_alignment = true);
    let mut s = srv.client();
    assert_eq!(call(&mut s, CMD_READ, 0, 100, 512, &[]).0, EINVAL);
    assert_eq!(call(&mut s, CMD_WRITE, 0, 512, 100, &[1u8; 100]).0, EINVAL);
    assert_eq!(call(&mut s, CMD_READ, 0, 512, 512, &[]).0, 0);
}

#[test]
fn a_client_vanishing_mid_request_leaves_the_server_serving() {
    let srv = TestServer::start("vanish", 1000, |_| {});
    let mut s = srv.client();
    // Half a header, then gone.
    s.write_all(&REQUEST_MAGIC.to_be_bytes()).unwrap();
    drop(s);
    // A write header and part of its data, then gone.
    let mut s = srv.client();
    send_request(&mut s, CMD_WRITE, 0, 1, 0, 1 << 20, &[9u8; 1000]);
    drop(s);
    // Many requests in flight, then gone without reading a reply.
    let mut s = srv.client();
    for h in 0..50 {
        send_request(&mut s, CMD_READ, 0, h, 0, 65536, &[]);
    }
    drop(s);
    let mut s = srv.client();
    assert_eq!(
        call(&mut s, CMD_READ, 0, 0, 4096, &[]),
        (0, vec![0u8; 4096])
    );
    let f = srv.finish();
    assert_eq!(
        f.stats.sim.writes, 0,
        "the partial write never reached the drive"
    );
}

#[test]
fn a_flood_is_held_to_the_in_flight_cap_and_every_request_is_answered() {
    let srv = TestServer::start("flood", 1000, |c| c.max_in_flight_requests = 16);
    let s = srv.client();
    let mut sender = s.try_clone().unwrap();
    const N: u64 = 5000;
    let flood = std::thread::spawn(move || {
        for h in 0..N {
            send_request(&mut sender, CMD_READ, 0, h, (h % 1000) * 4096, 4096, &[]);
        }
    });
    // Let the server fill its budget and our receive buffer before reading anything.
    std::thread::sleep(Duration::from_millis(300));
    let mut r = s;
    let mut seen = vec![false; N as usize];
    for _ in 0..N {
        let (e, h, d) = reply(&mut r, 4096);
        assert_eq!((e, d.len()), (0, 4096));
        assert!(
            !std::mem::replace(&mut seen[h as usize], true),
            "handle {h} answered twice"
        );
    }
    flood.join().unwrap();
    let f = srv.finish();
    assert!(f.stats.max_in_flight <= 16, "{}", f.stats.max_in_flight);
    assert_eq!(f.stats.sim.reads, N);
}

/// At the cap a new client is not refused: it takes the slot of the connection making the
/// least use of it (here the one idle longest), at once.
#[test]
fn a_client_beyond_the_cap_takes_the_slot_of_the_least_used_connection() {
    let srv = TestServer::start("cap", 1000, |c| c.max_connections = 2);
    let mut a = srv.client();
    let mut b = srv.client();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(call(&mut b, CMD_WRITE, 0, 0, 4096, &[2; 4096]).0, 0);
    let started = Instant::now();
    let mut c = srv.connect();
    let mut first = [0u8; 8];
    c.read_exact(&mut first).expect("the new client is greeted");
    let rest = read_n(&mut c, 10);
    assert_eq!(be64(&rest[0..8]), IHAVEOPT);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(closed(&mut a), "the connection idle longest gave its slot");
    assert_eq!(call(&mut b, CMD_READ, 0, 0, 4096, &[]).1, vec![2; 4096]);
    drop(c);
    let f = srv.finish();
    assert_eq!(f.stats.refused_connections, 0);
    assert!(f.stats.evicted_connections >= 1);
}

#[test]
fn writes_beyond_the_memory_budget_get_enospc_and_the_server_stays_up() {
    let srv = TestServer::start("enospc", 1000, |c| c.max_memory_bytes = 20 * 4160);
    let mut s = srv.client();
    let data = vec![1u8; 128 * 1024];
    assert_eq!(
        call(&mut s, CMD_WRITE, 0, 0, data.len() as u32, &data).0,
        ENOSPC
    );
    assert_eq!(call(&mut s, CMD_WRITE, 0, 0, 65536, &data[..65536]).0, 0);
    // Zeroes take no memory, and trimming frees it.
    assert_eq!(
        call(&mut s, CMD_WRITE, 0, 1 << 20, 65536, &[0u8; 65536]).0,
        0
    );
    assert_eq!(call(&mut s, CMD_TRIM, 0, 0, 65536, &[]).0, 0);
    assert_eq!(
        call(&mut s, CMD_WRITE, 0, 65536, 65536, &data[..65536]).0,
        0
    );
    let f = srv.finish();
    assert_eq!(f.stats.sim.no_space_errors, 1);
    assert!(f.stats.sim.peak_store_bytes <= 20 * 4160);
}

#[test]
fn several_connections_at_once_each_read_their_own_data() {
    let srv = TestServer::start("multi", 50_000, |_| {});
    let workers: Vec<_> = (0..4u8)
        .map(|i| {
            let mut s = srv.client();
            std::thread::spawn(move || {
                for round in 0..20u64 {
                    let off = u64::from(i) * (8 << 20) + round * 8192;
                    let data = vec![i + 1; 8192];
                    assert_eq!(call(&mut s, CMD_WRITE, 0, off, 8192, &data).0, 0);
                    assert_eq!(call(&mut s, CMD_READ, 0, off, 8192, &[]).1, data);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let f = srv.finish();
    assert_eq!(f.stats.connections, 4);
    assert_eq!(f.stats.sim.reads, 80);
}

#[test]
fn a_live_socket_is_not_taken_over_and_a_plain_file_is_not_replaced() {
    let srv = TestServer::start("inuse", 1000, |_| {});
    let again = Server::bind(
        Fixed { latency_ns: 1 },
        ServeConfig::new(Listen::Unix(srv.path.clone())),
    );
    assert!(matches!(
        again,
        Err(flashlab_serve::ServeError::SocketInUse { .. })
    ));
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-not-a-socket");
    std::fs::write(&file, b"keep me").unwrap();
    let e = Server::bind(
        Fixed { latency_ns: 1 },
        ServeConfig::new(Listen::Unix(file.clone())),
    )
    .err()
    .unwrap();
    assert!(e.is_bad_input(), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
}

#[test]
fn loopback_tcp_serves_like_a_unix_socket() {
    let config = ServeConfig::new(Listen::Tcp("127.0.0.1:0".parse().unwrap()));
    let server = Server::bind(Fixed { latency_ns: 1000 }, config).expect("bind");
    let uri = server.address().to_string();
    let port = uri.rsplit(':').next().unwrap().to_string();
    assert!(uri.starts_with("nbd://127.0.0.1:") && port != "0", "{uri}");
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::spawn(move || server.run(&flag).expect("run"));
    let mut s = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    hello(&mut s, FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
    assert_eq!(go(&mut s, b"").0, REP_ACK);
    assert_eq!(call(&mut s, CMD_WRITE, 0, 4096, 4096, &[6u8; 4096]).0, 0);
    assert_eq!(
        call(&mut s, CMD_READ, 0, 4096, 4096, &[]),
        (0, vec![6u8; 4096])
    );
    stop.store(true, Ordering::Relaxed);
    let f = thread.join().unwrap();
    assert_eq!((f.stats.sim.reads, f.stats.sim.writes), (1, 1));
}
