//! The host's I/O stack: what an I/O costs between the benchmark and the drive.
//!
//! A benchmark's latency is not the drive's alone. Each I/O passes down the host's stack
//! (the system call or ring submission, the block layer, the NVMe driver writing the
//! submission queue entry and ringing the doorbell) and back up it (the completion entry, an
//! interrupt and its handler, the block layer's completion, waking the waiting thread or
//! posting the event the engine reaps). fio on Linux measures all of it; CrystalDiskMark
//! and DiskSpd on Windows measure Windows' stack, whose I/O manager, StorPort miniport and
//! completion ports cost more per I/O. At QD1 on a fast drive the host is a large part of
//! what the benchmark reports; at depth it overlaps the drive's own time.
//!
//! fio picks the engine per job (`ioengine`, default `psync`), and so does this model: each
//! engine has a profile of fixed submission and completion times plus a spread (scheduling,
//! cache misses, interrupt placement vary per I/O), drawn per I/O from the clone's own
//! seeded stream, exponential above the fixed part.
//!
//! The device is handed the request when the benchmark issues it and the benchmark sees the
//! completion after the host's whole cost: the device's submissions stay in time order
//! across jobs with different engines (a submission delayed per job would not), and at
//! QD1, where the cost matters, the sum is the same. The host's CPU is not a shared
//! server: a job's I/Os do not queue for it, so the model does not cap one job's IOPS at
//! depth (fio jobs on their own cores; `numjobs` spreads them). Trace replay adds none: a
//! block trace's times are the block layer's own, below most of the stack.
//!
//! Figures (estimates per I/O on a current x86 server or desktop core, 4 KiB, interrupts,
//! not polled), set against published measurements:
//! - Linux, io_uring polled with registered buffers reaches 3.4 us average at QD1 on a
//!   second-generation Optane SSD, device included (J. Axboe, linux-block list, 2020-08,
//!   "io_uring and the Linux I/O stack today": 290K IOPS per core at QD1): the stack itself
//!   costs on the order of 1-2 us when nothing sleeps. Interrupt-driven completion adds the
//!   interrupt, the wake-up of the sleeping thread and its return to user space, the cost
//!   "When Poll Is Better than Interrupt" measured (J. Yang, D. Minturn, F. Hady, FAST
//!   2012) and that io_uring and libaio share (D. Didona et al., "Understanding Modern
//!   Storage APIs: A systematic study of libaio, SPDK, and io_uring", SYSTOR 2022).
//! - Intel rates the Optane SSD DC P4800X at under 10 us QD1 4 KiB with fio on Linux, and
//!   AnandTech's Optane Memory review (2017-04) found the Optane Memory slightly faster
//!   than the P4800X at QD1 4 KiB random reads: about 10 us for a drive whose own time is
//!   7 us leaves ~3 us for the host.
//! - psync blocks in `pread`: one system call, one wake-up. libaio pays `io_submit` and
//!   `io_getevents` (two system calls per I/O at QD1). io_uring submits and reaps through
//!   its rings with one `io_uring_enter`. Windows: CrystalDiskMark's RND4K Q1T1 of Optane
//!   drives (~55-60K IOPS, ~17 us, on drives fio measures at ~10 us) puts Windows' stack at
//!   roughly 9-10 us per I/O.

use flashlab_engine::{RngStream, SimTime};

/// A host I/O stack's cost per I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostProfile {
    /// Fixed time from the benchmark's call until the drive is told (fio's slat for an
    /// asynchronous engine).
    pub submit_ns: u64,
    /// Fixed time from the drive's completion until the benchmark has it.
    pub complete_ns: u64,
    /// Mean of the exponential spread added to each I/O's completion path.
    pub spread_ns: u64,
}

impl HostProfile {
    /// No host: the benchmark talks to the drive directly (fio's `null` engine, or a model
    /// of the drive alone).
    pub const NONE: HostProfile = HostProfile {
        submit_ns: 0,
        complete_ns: 0,
        spread_ns: 0,
    };

    /// The profile of fio's `ioengine` (fio's name for it; unknown names and fio's other
    /// synchronous engines take `psync`'s, fio's default).
    pub fn for_engine(ioengine: &str) -> HostProfile {
        let us = |submit: f64, complete: f64, spread: f64| HostProfile {
            submit_ns: (submit * 1_000.0) as u64,
            complete_ns: (complete * 1_000.0) as u64,
            spread_ns: (spread * 1_000.0) as u64,
        };
        match ioengine {
            "null" | "cpuio" => HostProfile::NONE,
            // User-space NVMe drivers poll their completion queues: no interrupt, no
            // system call (SPDK's fio plugins).
            "spdk" | "spdk_bdev" => us(0.3, 0.4, 0.1),
            "io_uring" | "io_uring_cmd" => us(0.9, 1.5, 0.4),
            "libaio" => us(1.1, 1.8, 0.5),
            // Windows' stack as DiskSpd and CrystalDiskMark (which runs DiskSpd) see it.
            "windowsaio" => us(3.5, 5.0, 1.5),
            _ => us(0.8, 1.7, 0.4),
        }
    }

    /// Mean cost of one I/O.
    pub fn mean_ns(&self) -> u64 {
        self.submit_ns + self.complete_ns + self.spread_ns
    }
}

/// Whether runs put the host's stack between the jobs and the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostModel {
    /// Each job pays its engine's profile ([`HostProfile::for_engine`]).
    #[default]
    Engine,
    /// The device alone (tests of the device, benchmarks of the simulator).
    Off,
}

/// One job clone's host: its profile and its own random stream.
#[derive(Debug, Clone)]
pub(crate) struct Host {
    pub profile: HostProfile,
    rng: RngStream,
}

impl Host {
    pub fn new(profile: HostProfile, rng: RngStream) -> Host {
        Host { profile, rng }
    }

    /// Whether the host adds anything.
    #[inline(always)]
    pub fn active(&self) -> bool {
        self.profile != HostProfile::NONE
    }

    /// The host's time for one I/O after the device completes it (completion path plus the
    /// submission the device did not wait for), with its spread.
    #[inline]
    pub fn after_device_ns(&mut self) -> SimTime {
        self.profile.submit_ns
            + self.profile.complete_ns
            + self.rng.exponential_ns(self.profile.spread_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_order_as_their_stacks_do() {
        let m = |e: &str| HostProfile::for_engine(e).mean_ns();
        assert_eq!(m("null"), 0);
        assert!(m("spdk") < m("io_uring"));
        assert!(m("io_uring") < m("psync"));
        assert!(m("psync") < m("libaio"));
        assert!(m("libaio") < m("windowsaio"));
        assert_eq!(
            HostProfile::for_engine("sync"),
            HostProfile::for_engine("psync")
        );
    }

    #[test]
    fn the_spread_is_deterministic_and_around_its_mean() {
        let p = HostProfile::for_engine("libaio");
        let mut a = Host::new(p, RngStream::from_seed_u64(7));
        let mut b = Host::new(p, RngStream::from_seed_u64(7));
        let xs: Vec<u64> = (0..20_000).map(|_| a.after_device_ns()).collect();
        let ys: Vec<u64> = (0..20_000).map(|_| b.after_device_ns()).collect();
        assert_eq!(xs, ys);
        let fixed = p.submit_ns + p.complete_ns;
        assert!(xs.iter().all(|&x| x >= fixed));
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        assert!((mean - p.mean_ns() as f64).abs() < 0.03 * p.mean_ns() as f64);
        assert!(xs.iter().max() > xs.iter().min());
    }
}
