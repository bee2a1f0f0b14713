//! The oltp suite's workload: transactions of dependent I/Os on a drive, their rate and
//! latency, and what a volatile write cache does to commits.

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::{SeedTree, NS_PER_S};
use flashlab_suite::{run_oltp_workload, OltpPoint, READS_PER_TXN};

fn tiny(sets: &[(&str, &str)]) -> Ssd {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cfg = load_device_config("tiny-test-1gb", &sets).unwrap();
    Ssd::new(&cfg, SeedTree::new(3)).unwrap()
}

/// The tiny drive with `plp`, programs fast enough that the page cleaners' writes do not
/// bound the transactions, written once end to end (so page reads go to NAND).
fn drive(plp: bool) -> Ssd {
    let plp = plp.to_string();
    let mut d = tiny(&[
        ("buffer.plp", plp.as_str()),
        ("slc_cache.dynamic", "false"),
        ("nand.t_prog", "\"100us\""),
    ]);
    let cap = flashlab_engine::BlockDevice::capacity_bytes(&d);
    let mut t = 0;
    let mut off = 0;
    while off < cap {
        let len = (1u64 << 20).min(cap - off);
        let req = flashlab_engine::IoRequest::write(off, len);
        t = flashlab_engine::BlockDevice::submit(&mut d, t, &req)
            .unwrap()
            .done_ns;
        off += len;
    }
    d
}

/// The workload for 2 s after the drive's fill.
fn run(d: &mut Ssd, vms: u32, threads: u32) -> OltpPoint {
    let span = flashlab_engine::BlockDevice::capacity_bytes(d);
    let mut rng = SeedTree::new(9).stream();
    let mut shifted = Later {
        d,
        at_ns: 100 * NS_PER_S,
    };
    run_oltp_workload(&mut shifted, span, vms, threads, 2 * NS_PER_S, &mut rng)
        .unwrap()
        .0
}

/// The drive seen from a clock that starts at `at_ns`.
struct Later<'a> {
    d: &'a mut Ssd,
    at_ns: u64,
}

impl flashlab_engine::BlockDevice for Later<'_> {
    fn capacity_bytes(&self) -> u64 {
        self.d.capacity_bytes()
    }
    fn logical_block_bytes(&self) -> u64 {
        self.d.logical_block_bytes()
    }
    fn prefetch(&self, req: &flashlab_engine::IoRequest, stage: flashlab_engine::PrefetchStage) {
        self.d.prefetch(req, stage)
    }
    fn submit(
        &mut self,
        now_ns: u64,
        req: &flashlab_engine::IoRequest,
    ) -> Result<flashlab_engine::Completion, flashlab_engine::DeviceError> {
        let c = self.d.submit(now_ns + self.at_ns, req)?;
        Ok(flashlab_engine::Completion {
            accepted_ns: c.accepted_ns - self.at_ns,
            done_ns: c.done_ns - self.at_ns,
        })
    }
}

#[test]
fn transactions_follow_their_reads_and_commits() {
    let one = run(&mut drive(true), 2, 1);
    let p = &one.lat_pct_ns;
    assert!(one.tps > 0.0);
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    // A transaction waits for its page reads one after another: at least the tiny drive's
    // 50 us array read each.
    assert!(p[0] >= f64::from(READS_PER_TXN) * 50e3, "{p:?}");
    // One thread per VM is a closed loop of one transaction: rate × latency = threads.
    let in_flight = one.tps * one.lat_avg_ns / 1e9;
    assert!((in_flight - 2.0).abs() < 0.05, "{in_flight}");
    // More threads: more transactions, each slower as they queue on the same dies.
    let more = run(&mut drive(true), 2, 8);
    // Measured 233.5 → 309 TPS: a page cleaner's program holds its whole die, so reads of
    // either plane wait for it (283 → 488 while planes programmed on their own).
    assert!(more.tps > 1.2 * one.tps, "{} → {} TPS", one.tps, more.tps);
    assert!(more.lat_avg_ns > one.lat_avg_ns);
    // The page cleaners write back what the commits dirtied.
    assert!(more.page_writes_per_s > 0.0);
}

#[test]
fn commits_wait_for_a_volatile_write_cache() {
    // Without power-loss protection a commit's flush programs what the drive buffered (its
    // open pages, padded); with it the flush costs nothing. One transaction at a time, so
    // each flush is on its commit's path: measured 222.5 TPS with, 212.0 without. (With two
    // VMs the difference is within what the order of programs and reads on the dies moves
    // either way: 233.5 with, 235.5 without, once a program holds its whole die.)
    let with = run(&mut drive(true), 1, 1);
    let without = run(&mut drive(false), 1, 1);
    assert!(
        without.lat_avg_ns > with.lat_avg_ns && without.tps < with.tps,
        "{} vs {} ns, {} vs {} TPS",
        without.lat_avg_ns,
        with.lat_avg_ns,
        without.tps,
        with.tps
    );
}
