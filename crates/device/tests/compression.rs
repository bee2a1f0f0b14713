//! A compressing controller (`controller.compression_granule`): compressible data takes
//! fewer granules of flash, so it programs less, writes faster where programs are the limit,
//! wears the drive less, and reads back whole.

mod common;

use common::{run_qd, tiny_ssd};
use flashlab_device::Ssd;
use flashlab_engine::{BlockDevice, IoRequest};

/// The tiny drive compressing in 1 KiB granules, no SLC cache (it has no PLP).
fn compressing() -> Ssd {
    tiny_ssd(&[
        ("controller.compression_granule", "\"1KiB\""),
        ("slc_cache.dynamic", "false"),
    ])
}

/// 128 KiB sequential writes over the whole drive at QD32 with data `percent` compressible;
/// returns (MB/s, NAND bytes programmed per host byte).
fn fill(d: &mut Ssd, percent: u8) -> (f64, f64) {
    let cap = d.capacity_bytes();
    let mut off = 0;
    let end = run_qd(d, 0, 32, || {
        (off < cap).then(|| {
            let len = (128 << 10).min(cap - off);
            off += len;
            IoRequest::write(off - len, len).with_compressible_percent(percent)
        })
    });
    let c = d.ftl().counters();
    (
        cap as f64 / end as f64 * 1e3,
        c.nand_write_ius as f64 / c.host_write_ius as f64,
    )
}

#[test]
fn compressible_data_programs_less_and_writes_faster() {
    let (random_mb_s, random_wa) = fill(&mut compressing(), 0);
    let (half_mb_s, half_wa) = fill(&mut compressing(), 50);
    let (zeros_mb_s, zeros_wa) = fill(&mut compressing(), 100);
    // Incompressible data is stored whole; half-compressible in 2 of 4 granules; zeros in 1.
    assert!((random_wa - 1.0).abs() < 0.01, "{random_wa}");
    assert!((half_wa - 0.5).abs() < 0.01, "{half_wa}");
    assert!((zeros_wa - 0.25).abs() < 0.01, "{zeros_wa}");
    // Sequential writes of the tiny drive are program-bound: half the programs, about twice
    // the rate.
    assert!(
        half_mb_s > 1.7 * random_mb_s,
        "{random_mb_s} → {half_mb_s} MB/s"
    );
    assert!(zeros_mb_s > half_mb_s, "{half_mb_s} → {zeros_mb_s} MB/s");
    // A drive that does not compress programs every byte of the same data.
    let (_, plain_wa) = fill(&mut tiny_ssd(&[("slc_cache.dynamic", "false")]), 100);
    assert!((plain_wa - 1.0).abs() < 0.01, "{plain_wa}");
}

#[test]
fn random_overwrites_of_compressible_data_leave_gc_more_room() {
    // Full drive, then 4 KiB random overwrites of twice its capacity: compressed data leaves
    // most of the flash free, so GC copies far less.
    let wa = |percent: u8| {
        let mut d = compressing();
        fill(&mut d, percent);
        let before = d.ftl().counters().clone();
        let ius = d.capacity_bytes() / 4096;
        let mut x = 88_172_645_463_325_252u64;
        let mut n = 0;
        run_qd(&mut d, 10_000_000_000, 32, || {
            n += 1;
            (n <= 2 * ius).then(|| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                IoRequest::write(x % ius * 4096, 4096).with_compressible_percent(percent)
            })
        });
        let c = d.ftl().counters();
        (c.nand_write_ius - before.nand_write_ius) as f64
            / (c.host_write_ius - before.host_write_ius) as f64
    };
    let (random, half) = (wa(0), wa(50));
    assert!(
        random > 2.0,
        "incompressible random overwrites: WA {random}"
    );
    // Half the bytes per write and far less GC: well under half the NAND writes.
    assert!(half < 0.4 * random, "WA {random} → {half}");
}

#[test]
fn a_read_of_a_compressed_iu_reads_its_granules_whatever_part_is_asked() {
    let mut d = compressing();
    // One 4 KiB IU whose data fits one granule, made durable.
    d.submit(
        0,
        &IoRequest::write(8192, 4096).with_compressible_percent(90),
    )
    .unwrap();
    d.submit(1_000_000, &IoRequest::flush()).unwrap();
    let reads = d.ftl().counters().nand_read_pages;
    // The last 512 bytes of the IU live in its first granule: read from NAND, not zeros.
    d.submit(10_000_000, &IoRequest::read(8192 + 3584, 512))
        .unwrap();
    assert_eq!(d.ftl().counters().nand_read_pages, reads + 1);
    // A partial write merges with the unit's old data: one read of its page.
    let rmw = d.ftl().counters().rmw_reads;
    d.submit(
        20_000_000,
        &IoRequest::write(8192, 512).with_compressible_percent(90),
    )
    .unwrap();
    assert_eq!(d.ftl().counters().rmw_reads, rmw + 1);
    // A trim of part of a unit keeps it; of the whole unit, frees it.
    d.submit(30_000_000, &IoRequest::trim(8192, 2048)).unwrap();
    let mapped = d.ftl().mapped_ius();
    assert!(mapped > 0);
    d.submit(40_000_000, &IoRequest::trim(8192, 4096)).unwrap();
    assert_eq!(d.ftl().mapped_ius(), 0);
    d.ftl().check_invariants();
}

#[test]
fn bad_compression_settings_name_the_key_and_what_is_valid() {
    let err = |sets: &[(&str, &str)]| {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match flashlab_device::load_device_config("tiny-test-1gb", &sets) {
            Ok(_) => panic!("accepted {sets:?}"),
            Err(e) => e.to_string(),
        }
    };
    let e = err(&[
        ("controller.compression_granule", "\"4KiB\""),
        ("slc_cache.dynamic", "false"),
    ]);
    assert!(
        e.contains("controller.compression_granule") && e.contains("half the IU"),
        "{e}"
    );
    // No PLP and an SLC cache: a unit could be torn between two streams' pages.
    let e = err(&[("controller.compression_granule", "\"1KiB\"")]);
    assert!(e.contains("buffer.plp = true"), "{e}");
}

/// Any mix of writes of any compressibility (partial or whole IUs), reads, trims, flushes,
/// idle time and power loss leaves a compressing drive's FTL consistent, with either host
/// allocation, on a small drive filled first so that GC runs among them.
mod mixed {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Cmd {
        Write {
            sector: u64,
            sectors: u64,
            percent: u8,
        },
        Read {
            sector: u64,
            sectors: u64,
        },
        Trim {
            sector: u64,
            sectors: u64,
        },
        Flush,
        Idle {
            ms: u64,
        },
        PowerLoss,
        /// `n` 128 KiB writes at random places, each of random compressibility.
        Churn {
            seed: u64,
            n: u32,
        },
    }

    /// User capacity of the test drive, in 512-byte sectors (210 MB in whole 4 KiB IUs).
    const SECTORS: u64 = 410_152;

    fn cmd() -> impl Strategy<Value = Cmd> {
        let span = SECTORS - 256;
        prop_oneof![
            6 => (0..span, 1u64..64, 0u8..=100).prop_map(|(sector, sectors, percent)| Cmd::Write { sector, sectors, percent }),
            2 => (0..span, 1u64..64).prop_map(|(sector, sectors)| Cmd::Read { sector, sectors }),
            1 => (0..span, 1u64..256).prop_map(|(sector, sectors)| Cmd::Trim { sector, sectors }),
            1 => Just(Cmd::Flush),
            1 => (1u64..200).prop_map(|ms| Cmd::Idle { ms }),
            1 => Just(Cmd::PowerLoss),
            2 => (any::<u64>(), 200u32..600).prop_map(|(seed, n)| Cmd::Churn { seed, n }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn a_compressing_drive_stays_consistent(
            least_busy in any::<bool>(),
            cmds in proptest::collection::vec(cmd(), 1..120),
        ) {
            let allocation = if least_busy { "\"least_busy\"" } else { "\"striped\"" };
            let mut d = tiny_ssd(&[
                ("controller.compression_granule", "\"1KiB\""),
                ("slc_cache.dynamic", "false"),
                ("ftl.host_allocation", allocation),
                ("nand.blocks_per_plane", "24"),
                ("capacity.user", "\"210MB\""),
            ]);
            prop_assert_eq!(d.capacity_bytes() / 512, SECTORS);
            let (_, _) = fill(&mut d, 0);
            let mut t = 60_000_000_000u64;
            for c in &cmds {
                t += 10_000;
                let req = match *c {
                    Cmd::Write { sector, sectors, percent } => {
                        IoRequest::write(sector * 512, sectors * 512).with_compressible_percent(percent)
                    }
                    Cmd::Read { sector, sectors } => IoRequest::read(sector * 512, sectors * 512),
                    Cmd::Trim { sector, sectors } => IoRequest::trim(sector * 512, sectors * 512),
                    Cmd::Flush => IoRequest::flush(),
                    Cmd::Idle { ms } => {
                        d.idle(t, t + ms * 1_000_000);
                        t += ms * 1_000_000;
                        continue;
                    }
                    Cmd::PowerLoss => {
                        d.power_loss(t);
                        d.ftl().check_invariants();
                        continue;
                    }
                    Cmd::Churn { seed, n } => {
                        let mut x = seed | 1;
                        let chunks = SECTORS / 256;
                        let mut k = 0;
                        t = run_qd(&mut d, t, 8, || {
                            k += 1;
                            (k <= n).then(|| {
                                x ^= x << 13;
                                x ^= x >> 7;
                                x ^= x << 17;
                                // Mostly incompressible, so that the churn fills the
                                // drive's spare and GC runs.
                                let percent = if x % 4 == 0 { (x >> 40) as u8 % 101 } else { 0 };
                                IoRequest::write(x % chunks * 128 * 1024, 128 * 1024)
                                    .with_compressible_percent(percent)
                            })
                        });
                        d.ftl().check_invariants();
                        continue;
                    }
                };
                let done = d.submit(t, &req).unwrap().done_ns;
                prop_assert!(done >= t);
                d.ftl().check_invariants();
            }
            let c = d.ftl().counters();
            // 128 KiB each: past 1,200 of them (150 MiB) the spare is used up.
            let churned: u32 = cmds
                .iter()
                .map(|c| if let Cmd::Churn { n, .. } = c { *n } else { 0 })
                .sum();
            if churned >= 1200 {
                prop_assert!(c.erases > 0, "no GC ran: {c:?}");
            }
        }
    }
}

/// A trim inside one compression unit deallocates nothing and keeps the unit's data (the
/// randomized test found it overflowing its count of units).
#[test]
fn a_trim_inside_one_compression_unit_deallocates_nothing() {
    let mut d = compressing();
    run_qd(&mut d, 0, 1, {
        let mut sent = false;
        move || (!std::mem::replace(&mut sent, true)).then(|| IoRequest::write(0, 4096))
    });
    let before = d.ftl().counters().host_trim_ius;
    run_qd(&mut d, 1_000_000_000, 1, {
        let mut sent = false;
        move || (!std::mem::replace(&mut sent, true)).then(|| IoRequest::trim(512, 1024))
    });
    assert_eq!(d.ftl().counters().host_trim_ius, before);
}
