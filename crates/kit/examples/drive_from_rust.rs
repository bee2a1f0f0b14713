//! Driving a simulation from Rust through `flashlab-host`: `simulate` is `flashlab run` as a
//! call (a fresh drive, a job file, a seed); `run_on` runs a job file on a drive one keeps,
//! from the device time its last run reached, so a second run finds the first one's data.
//!
//! `cargo run -p flashlab-kit --example drive_from_rust`

use flashlab_device::{load_device_config, Ssd};
use flashlab_engine::SeedTree;
use flashlab_host::{run_on, simulate};
use flashlab_report::{DDIR_READ, DDIR_WRITE};
use flashlab_runner::RunOptions;
use flashlab_workload::{parse_str, JobFile};

const SEED: u64 = 7;

/// 8 MiB written sequentially, then read back at random.
const WRITE: &str = "[write]\nrw=write\nbs=128k\niodepth=8\nsize=8m\n";
const READ: &str = "[read]\nrw=randread\nbs=4k\niodepth=16\nsize=8m\nio_size=2m\n";

/// What the example prints: the one-call run's write bandwidth, and the kept drive's read
/// IOPS and device time after each of its two runs.
#[derive(Debug, PartialEq)]
struct Figures {
    write_bytes_per_s: u64,
    read_iops: f64,
    clock_after_write_ns: u64,
    clock_after_read_ns: u64,
}

fn job(text: &str, name: &str) -> Result<JobFile, Box<dyn std::error::Error>> {
    Ok(parse_str(text, name, &|_| None)?)
}

fn figures() -> Result<Figures, Box<dyn std::error::Error>> {
    // One call: a fresh drive from a preset, the job, fio's result.
    let once = simulate(&job(WRITE, "write.fio")?, "tiny-test-1gb", &[], SEED, &[])
        .map_err(|(_, message)| message)?;
    let write_bytes_per_s = once.result.jobs[0].bw_bytes_per_s(DDIR_WRITE);

    // A drive kept across runs: the read finds what the write left, at the time it ended.
    let config = load_device_config("tiny-test-1gb", &[])?;
    let mut ssd = Ssd::new(&config, SeedTree::new(SEED).child("device"))?;
    let options = RunOptions::new(SEED, ssd.name());
    let wrote = run_on(
        &mut ssd,
        0,
        &job(WRITE, "write.fio")?,
        &options,
        &mut |_| {},
    );
    wrote.result?;
    let read = run_on(
        &mut ssd,
        wrote.horizon_ns,
        &job(READ, "read.fio")?,
        &options,
        &mut |_| {},
    );
    let read_iops = read.result?.jobs[0].iops(DDIR_READ);
    Ok(Figures {
        write_bytes_per_s,
        read_iops,
        clock_after_write_ns: wrote.horizon_ns,
        clock_after_read_ns: read.horizon_ns,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let f = figures()?;
    println!(
        "sequential write: {:.1} MB/s",
        f.write_bytes_per_s as f64 / 1e6
    );
    println!("random read after it: {:.0} IOPS", f.read_iops);
    println!(
        "device time: {} ns after the write, {} ns after the read",
        f.clock_after_write_ns, f.clock_after_read_ns
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_move_the_kept_drive_on_and_repeat_byte_for_byte() {
        let f = super::figures().unwrap();
        assert!(f.write_bytes_per_s > 0 && f.read_iops > 0.0, "{f:?}");
        assert!(f.clock_after_read_ns > f.clock_after_write_ns, "{f:?}");
        // Same inputs and seed, same figures.
        assert_eq!(super::figures().unwrap(), f);
    }
}
