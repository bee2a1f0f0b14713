//! The controller's read buffer and sequential read-ahead on the small test preset.

mod common;

use common::tiny_ssd as ssd;
use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{BlockDevice, IoRequest};

const TINY: &str = "tiny-test-1gb";
/// 5 us command overhead (on average; the controller's time per command varies) + 4 KiB
/// over the 6.77 GB/s PCIe link (no NAND time).
const NO_NAND_4K_NS: f64 = 5_000.0 + 4096.0 / 6.774;
/// The fixed three quarters of the command overhead: no command is faster.
const MIN_COMMAND_NS: f64 = 3_750.0;

/// A latency with no NAND time in it: the command's varying time and the link's transfer.
fn no_nand(l: f64, link_ns: f64) -> bool {
    l >= MIN_COMMAND_NS + link_ns - 1.0 && l < TR_NS
}
/// Less than any array read (tR 50 us native, less in SLC mode), far more than a hit.
const TR_NS: f64 = 20_000.0;

/// Write `bytes` from 0 in 128 KiB writes at QD1 and flush; returns a time well after.
fn fill(d: &mut Ssd, bytes: u64) -> u64 {
    let mut t = 0;
    let mut off = 0;
    while off < bytes {
        t = d
            .submit(t, &IoRequest::write(off, 128 << 10))
            .unwrap()
            .done_ns;
        off += 128 << 10;
    }
    d.submit(t, &IoRequest::flush()).unwrap().done_ns + 1_000_000_000
}

fn lat(d: &mut Ssd, now: u64, req: &IoRequest) -> (f64, u64) {
    let c = d.submit(now, req).unwrap();
    ((c.done_ns - now) as f64, c.done_ns + 10_000)
}

#[test]
fn reads_of_a_codeword_just_read_pay_no_nand_time() {
    let mut d = ssd(&[("controller.read_ahead", "0B")]);
    let mut now = fill(&mut d, 8 << 20);
    let off = 3 << 20;
    let (first, n) = lat(&mut d, now, &IoRequest::read(off, 512));
    now = n;
    assert!(first > TR_NS, "first read {first} ns pays tR");
    // The other seven 512 B sectors of the 4 KiB codeword come from DRAM.
    for i in 1..8 {
        let (l, n) = lat(&mut d, now, &IoRequest::read(off + i * 512, 512));
        now = n;
        assert!(no_nand(l, 512.0 / 6.774), "sector {i}: {l} ns");
    }
    assert_eq!(d.counters_json()["health"]["read_buffer_hit_ius"], 7);
    // A write of the codeword drops it: the next read goes to NAND again (here the write
    // buffer holds the new data, which needs no NAND read either, so trim instead).
    d.submit(now, &IoRequest::trim(off, 4096)).unwrap();
    d.submit(now + 1_000, &IoRequest::write(off, 4096)).unwrap();
    let f = d.submit(now + 2_000, &IoRequest::flush()).unwrap();
    now = f.done_ns + 1_000_000_000;
    let (after, _) = lat(&mut d, now, &IoRequest::read(off, 4096));
    assert!(
        after > TR_NS,
        "read after a rewrite {after} ns must read NAND"
    );
}

#[test]
fn power_loss_and_format_empty_the_buffer() {
    let mut d = ssd(&[("controller.read_ahead", "0B")]);
    let mut now = fill(&mut d, 4 << 20);
    let (_, n) = lat(&mut d, now, &IoRequest::read(1 << 20, 4096));
    let (hit, n) = lat(&mut d, n, &IoRequest::read(1 << 20, 4096));
    assert!(no_nand(hit, NO_NAND_4K_NS - 5_000.0), "hit {hit} ns");
    d.power_loss(n);
    now = n + 1_000_000_000;
    let (miss, _) = lat(&mut d, now, &IoRequest::read(1 << 20, 4096));
    assert!(miss > TR_NS, "after power loss {miss} ns");
}

#[test]
fn sequential_small_reads_find_read_ahead_data() {
    let run = |ahead: &str| {
        let mut d = ssd(&[("controller.read_ahead", ahead)]);
        let mut now = fill(&mut d, 8 << 20);
        let start = now;
        // 4 KiB sequential reads at QD1: 512 of them over 2 MiB.
        let mut worst_late = 0.0f64;
        for i in 0..512u64 {
            let (l, n) = lat(&mut d, now, &IoRequest::read((1 << 20) + i * 4096, 4096));
            if i >= 64 {
                worst_late = worst_late.max(l);
            }
            now = n;
        }
        let ahead = d.counters_json()["health"]["read_ahead_ius"]
            .as_u64()
            .unwrap();
        // The window runs at most 256 KiB past the last read.
        assert!(ahead <= 512 + 64, "{ahead} IUs read ahead");
        (now - start, worst_late)
    };
    let (off_ns, off_worst) = run("0B");
    let (on_ns, on_worst) = run("256KiB");
    // Without read-ahead every read pays tR; with it, the stream runs ahead of the host.
    assert!(off_worst > 50_000.0, "{off_worst}");
    assert!(
        on_ns * 4 < off_ns,
        "read-ahead {on_ns} ns vs none {off_ns} ns"
    );
    // Once the window is ahead, reads find their data in DRAM or nearly there.
    assert!(on_worst < 50_000.0, "worst late read {on_worst} ns");
}

#[test]
fn random_reads_start_no_read_ahead() {
    // Random 4 KiB reads cost the same with read-ahead on or off.
    let run = |ahead: &str| {
        let mut d = ssd(&[("controller.read_ahead", ahead)]);
        let mut now = fill(&mut d, 64 << 20);
        let mut x = 12345u64;
        let mut total = 0.0;
        for _ in 0..300 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let off = (x >> 33) % ((64 << 20) / 4096) * 4096;
            let (l, n) = lat(&mut d, now, &IoRequest::read(off, 4096));
            total += l;
            now = n;
        }
        total
    };
    assert_eq!(run("0B"), run("256KiB"));
}

#[test]
fn read_buffer_keys_are_checked() {
    let bad = |k: &str, v: &str| {
        let sets = vec![(k.to_string(), v.to_string())];
        load_device_config(TINY, &sets).err().map(|e| e.to_string())
    };
    let e = bad("controller.read_buffer", "64KiB").expect("too small for read-ahead");
    assert!(
        e.contains("controller.read_buffer") && e.contains("2MiB"),
        "{e}"
    );
    assert!(
        bad("controller.read_buffer", "0B").is_some(),
        "read-ahead without buffer"
    );
    assert!(bad("controller.read_ahead", "0B").is_none());
}
