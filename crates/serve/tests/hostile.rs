//! Clients that try to exhaust the server: slow handshakes holding every connection slot
//! (slowloris) and clients that pipeline large READs and never read the replies. A fresh
//! client must still be served, and the payload the server buffers (and so its memory) must
//! stay under the stated budget. Everything runs over a Unix socket, bounded in count and time.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use common::*;
use flashlab_serve::proto::*;

/// A client that completes the handshake and one write-then-read round trip, or says why not.
fn fresh_client_round_trip(srv: &TestServer) -> Result<Duration, String> {
    let start = Instant::now();
    let mut s = srv.connect();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let mut greeting = [0u8; 18];
    s.read_exact(&mut greeting)
        .map_err(|e| format!("no greeting: {e}"))?;
    s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes())
        .unwrap();
    let (code, _) = go(&mut s, b"");
    if code != REP_ACK {
        return Err(format!("NBD_OPT_GO answered {code:#x}"));
    }
    let (e, _) = call(&mut s, CMD_WRITE, 0, 8192, 4096, &[0x5a; 4096]);
    assert_eq!(e, 0);
    let (e, d) = call(&mut s, CMD_READ, 0, 8192, 4096, &[]);
    assert_eq!((e, d), (0, vec![0x5a; 4096]));
    Ok(start.elapsed())
}

/// A connection that has read the greeting and sent one byte of its client flags.
fn slow_starter(srv: &TestServer) -> UnixStream {
    let mut s = srv.connect();
    let mut greeting = [0u8; 18];
    s.read_exact(&mut greeting).unwrap();
    s.write_all(&[0]).unwrap();
    s
}

#[test]
fn a_handshake_trickled_byte_by_byte_is_cut_at_one_deadline() {
    let srv = TestServer::start("trickle", 1000, |c| {
        c.handshake_timeout = Duration::from_secs(1);
    });
    let mut s = slow_starter(&srv);
    let start = Instant::now();
    // Each byte comes well within the timeout; the handshake as a whole does not.
    let flags_rest = [0u8, 0, FLAG_C_FIXED_NEWSTYLE as u8];
    let option = IHAVEOPT.to_be_bytes();
    let trickle: Vec<u8> = flags_rest.iter().chain(option.iter()).copied().collect();
    let mut cut_after = None;
    for &b in &trickle {
        std::thread::sleep(Duration::from_millis(250));
        if s.write_all(&[b]).is_err() {
            cut_after = Some(start.elapsed());
            break;
        }
        s.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        let mut x = [0u8; 1];
        if let Ok(0) = s.read(&mut x) {
            cut_after = Some(start.elapsed());
            break;
        }
    }
    let cut_after = cut_after.expect("a handshake trickled over 2.75 s outlived its 1 s deadline");
    assert!(cut_after < Duration::from_millis(2000), "{cut_after:?}");
    let f = srv.finish();
    assert_eq!(f.stats.hard_disconnects, 1);
}

#[test]
fn slowloris_connections_give_their_slots_to_fresh_clients() {
    const SLOTS: usize = 4;
    let srv = TestServer::start("slowloris", 1000, |c| c.max_connections = SLOTS);
    // Every slot held by a client that will take the whole 10 s handshake deadline.
    let mut slow: Vec<UnixStream> = (0..SLOTS).map(|_| slow_starter(&srv)).collect();
    for round in 0..3 {
        let took = fresh_client_round_trip(&srv)
            .unwrap_or_else(|e| panic!("fresh client {round} was not served: {e}"));
        assert!(took < Duration::from_secs(3), "round {round}: {took:?}");
        // The attacker comes back for the slot it lost.
        slow.push(slow_starter(&srv));
    }
    // The oldest unfinished handshakes were the ones closed.
    for s in slow.iter_mut().take(3) {
        assert!(closed(s));
    }
    let f = srv.finish();
    assert_eq!(f.stats.sim.writes, 3);
    assert!(f.stats.evicted_connections >= 3, "{:?}", f.stats);
}

#[test]
fn the_connection_idle_longest_gives_its_slot_to_a_new_client() {
    let srv = TestServer::start("idle", 1000, |c| c.max_connections = 2);
    let mut idle = srv.client();
    let mut busy = srv.client();
    std::thread::sleep(Duration::from_millis(400));
    // Both have been idle long enough; the one active a moment ago is not chosen.
    let (e, _) = call(&mut busy, CMD_WRITE, 0, 0, 4096, &[1; 4096]);
    assert_eq!(e, 0);
    let took = fresh_client_round_trip(&srv).expect("the fresh client took the idle slot");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(closed(&mut idle), "the idle connection was closed");
    // The other keeps being served.
    let (e, d) = call(&mut busy, CMD_READ, 0, 0, 4096, &[]);
    assert_eq!((e, d), (0, vec![1; 4096]));
    let f = srv.finish();
    assert_eq!(f.stats.evicted_connections, 1);
}

/// Peak resident memory of this process, from /proc.
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/self/status");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

#[test]
fn clients_that_never_read_their_replies_are_held_to_the_buffer_budget() {
    const MIB: u64 = 1 << 20;
    const BUDGET: u64 = 96 * MIB;
    const HOSTILE: usize = 6;
    let srv = TestServer::start("unread", 1000, |c| {
        c.max_buffer_bytes = BUDGET;
        c.max_in_flight_bytes = 64 * MIB;
    });
    let before = peak_rss_bytes();
    // Each asks for 8 × 32 MiB and reads nothing: 1.5 GiB of replies wanted in all.
    let hostile: Vec<UnixStream> = (0..HOSTILE)
        .map(|_| {
            let mut s = srv.client();
            for h in 0..8u64 {
                send_request(&mut s, CMD_READ, 0, h, (h % 2) * 32 * MIB, 32 << 20, &[]);
            }
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let grown = peak_rss_bytes().saturating_sub(before);
    // The budget, plus the recycled-buffer pool and thread stacks.
    assert!(
        grown < BUDGET + 48 * MIB,
        "resident memory grew by {} MiB with a {} MiB budget",
        grown / MIB,
        BUDGET / MIB
    );
    // A fresh client waits for budget, so the clients that read nothing and hold it are
    // closed after a second each, well before the 10 s stall timeout.
    let took = fresh_client_round_trip(&srv).expect("fresh client served");
    assert!(took < Duration::from_secs(7), "{took:?}");
    drop(hostile);
    let f = srv.finish();
    assert!(
        f.stats.peak_buffered_bytes <= BUDGET,
        "{} bytes buffered",
        f.stats.peak_buffered_bytes
    );
    assert!(f.stats.stalled_connections >= 1, "{:?}", f.stats);
}

/// A fresh client served within `limit`: a client closed at once at the connection cap
/// tries again (as `nbd-client` does), and the time counts from its first try.
fn served_within(srv: &TestServer, limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        if fresh_client_round_trip(srv).is_ok() {
            let took = start.elapsed();
            assert!(took < limit, "a fresh client took {took:?}");
            return took;
        }
        assert!(
            start.elapsed() < limit,
            "a fresh client was not served within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every slot held by a connection that sent a 4 KiB WRITE's header and 100 bytes of its
/// payload: such connections held their slots and every new client was closed for as long
/// as they stayed. A half-sent request gives its slot up at the cap, and is cut at the
/// request deadline.
#[test]
fn half_sent_writes_give_their_slots_to_fresh_clients() {
    const SLOTS: usize = 16;
    let srv = TestServer::start("halfwrite", 1000, |c| {
        c.max_connections = SLOTS;
        c.request_timeout = Duration::from_secs(3);
    });
    let half_write = |srv: &TestServer| {
        let mut s = srv.client();
        send_request(&mut s, CMD_WRITE, 0, 1, 0, 4096, &[7; 100]);
        s
    };
    let mut held: Vec<UnixStream> = (0..SLOTS).map(|_| half_write(&srv)).collect();
    for round in 0..3 {
        let took = served_within(&srv, Duration::from_secs(1));
        eprintln!("round {round}: a fresh client served in {took:?}");
        // The attacker takes the slot back.
        held.push(half_write(&srv));
    }
    // Past the request deadline every half-sent request's connection is closed.
    std::thread::sleep(Duration::from_millis(3500));
    for s in &mut held {
        assert!(closed(s));
    }
    let f = srv.finish();
    assert_eq!(f.stats.sim.writes, 3, "no half-sent WRITE was served");
    assert!(f.stats.evicted_connections >= 3, "{:?}", f.stats);
}

/// Eight connections trickling a 32 MiB WRITE one byte at a time: each took 32 MiB of the
/// 256 MiB buffer budget at its header, so another client's READ waited for as long as they
/// trickled. A WRITE holds budget only for the payload received.
#[test]
fn trickled_writes_hold_no_budget_they_have_not_received() {
    const MIB: u64 = 1 << 20;
    let srv = TestServer::start("tricklewrite", 1000, |_| {});
    let before = peak_rss_bytes();
    let mut trickling: Vec<UnixStream> = (0..8)
        .map(|h| {
            let mut s = srv.client();
            send_request(&mut s, CMD_WRITE, 0, h, 0, 32 << 20, &[1]);
            s
        })
        .collect();
    let start = Instant::now();
    let mut rounds = 0;
    while start.elapsed() < Duration::from_secs(3) {
        for s in &mut trickling {
            let _ = s.write_all(&[1]);
        }
        served_within(&srv, Duration::from_secs(1));
        rounds += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    let grown = peak_rss_bytes().saturating_sub(before);
    assert!(
        grown < 48 * MIB,
        "resident memory grew by {} MiB for eight trickled WRITEs",
        grown / MIB
    );
    drop(trickling);
    let f = srv.finish();
    assert!(rounds >= 3);
    assert!(
        f.stats.peak_buffered_bytes < 4 * MIB,
        "{} bytes of budget taken",
        f.stats.peak_buffered_bytes
    );
}
