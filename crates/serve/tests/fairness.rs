//! Fair service at the connection cap: both attacks on the slots at once, while fresh
//! clients come. In a binary of its own, so the attacks' memory does not count against the
//! other tests' measures of the server's growth.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use common::*;
use flashlab_serve::proto::*;

/// A client that completes the handshake and one write-then-read round trip, or says why
/// not.
fn fresh_client_round_trip(srv: &TestServer) -> Result<Duration, String> {
    let start = Instant::now();
    let mut s = attacker(&srv.path).map_err(|e| format!("handshake: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let (e, _) = call(&mut s, CMD_WRITE, 0, 8192, 4096, &[0x5a; 4096]);
    if e != 0 {
        return Err(format!("WRITE answered {e}"));
    }
    let (e, d) = call(&mut s, CMD_READ, 0, 8192, 4096, &[]);
    if (e, &d) != (0, &vec![0x5a; 4096]) {
        return Err(format!("READ answered {e}"));
    }
    Ok(start.elapsed())
}

/// An attacker's connection through the handshake, every error returned (the server may
/// close it at any point to make room).
fn attacker(path: &std::path::Path) -> std::io::Result<UnixStream> {
    let mut s = UnixStream::connect(path)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut greeting = [0u8; 18];
    s.read_exact(&mut greeting)?;
    s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes())?;
    let mut option = Vec::new();
    option.extend_from_slice(&IHAVEOPT.to_be_bytes());
    option.extend_from_slice(&OPT_GO.to_be_bytes());
    option.extend_from_slice(&6u32.to_be_bytes());
    option.extend_from_slice(&[0; 6]);
    s.write_all(&option)?;
    loop {
        let mut head = [0u8; 20];
        s.read_exact(&mut head)?;
        let kind = u32::from_be_bytes(head[12..16].try_into().unwrap());
        let len = u32::from_be_bytes(head[16..20].try_into().unwrap());
        std::io::copy(&mut (&mut s).take(u64::from(len)), &mut std::io::sink())?;
        if kind != REP_INFO {
            return if kind == REP_ACK {
                Ok(s)
            } else {
                Err(std::io::Error::other("refused"))
            };
        }
    }
}

/// A request header and the first `payload` bytes of its payload.
fn attack_request(s: &mut UnixStream, kind: u16, len: u32, payload: usize) -> std::io::Result<()> {
    let r = Request {
        flags: 0,
        kind,
        handle: 1,
        offset: 0,
        len,
    };
    s.write_all(&r.encode())?;
    s.write_all(&vec![9u8; payload])
}

/// Both attacks of the connection slots at once, each from 16 threads on the server's
/// socket: connections that send a 4 KiB WRITE's header and 100 bytes, wait 0.35 s and
/// close, in a loop (all 20 probes were refused), and connections that send two 4 MiB READs,
/// read nothing and reconnect (2 of 25 probes were served). Every fresh client must now
/// be served, at its first try, within 1 s; the attacks stop with the test.
#[test]
fn every_fresh_client_is_served_within_a_second_under_both_slot_attacks() {
    use std::sync::atomic::{AtomicBool, Ordering};
    const THREADS: usize = 16;
    const PROBES: usize = 20;
    let srv = TestServer::start("fair", 1000, |c| c.max_connections = 16);
    let stop = AtomicBool::new(false);
    let path = srv.path.clone();
    let pause = |d: Duration, stop: &AtomicBool| {
        let until = Instant::now() + d;
        while Instant::now() < until && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let worst = std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(mut s) = attacker(&path) {
                        let _ = attack_request(&mut s, CMD_WRITE, 4096, 100);
                        pause(Duration::from_millis(350), &stop);
                    }
                }
            });
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(mut s) = attacker(&path) {
                        let _ = attack_request(&mut s, CMD_READ, 4 << 20, 0);
                        let _ = attack_request(&mut s, CMD_READ, 4 << 20, 0);
                        pause(Duration::from_secs(9), &stop);
                    }
                }
            });
        }
        // The probes stop the attackers however they end, so the test always ends.
        let probed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // Let the attacks fill the slots first.
            std::thread::sleep(Duration::from_millis(500));
            let mut worst = Duration::ZERO;
            let mut failures = Vec::new();
            for probe in 0..PROBES {
                match fresh_client_round_trip(&srv) {
                    Ok(took) if took < Duration::from_secs(1) => worst = worst.max(took),
                    Ok(took) => failures.push(format!("probe {probe}: {took:?}")),
                    Err(e) => failures.push(format!("probe {probe}: {e}")),
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            (worst, failures)
        }));
        stop.store(true, Ordering::Relaxed);
        let (worst, failures) = probed.unwrap_or_else(|p| std::panic::resume_unwind(p));
        assert!(failures.is_empty(), "{failures:?}");
        worst
    });
    eprintln!("{PROBES} probes under both attacks, the slowest served in {worst:?}");
    let f = srv.finish();
    assert_eq!(f.stats.refused_connections, 0, "{:?}", f.stats);
}
