//! A drive of one's own, described in TOML text (the keys of `docs/device-config.md`; a key
//! left out takes the model's default), with a `--set`-style override on top, running a fio
//! job given as text. Prints the job's IOPS and the drive's write amplification.
//!
//! `cargo run -p flashlab-kit --example custom_drive`

use flashlab_device::{parse_device_config, Ssd};
use flashlab_host::{run_jobs, Device};
use flashlab_report::DDIR_WRITE;
use flashlab_workload::parse_str;

/// A small QLC drive: 512 MB for the host on two dies, a quarter of it usable as SLC cache.
const DRIVE: &str = r#"
name = "small-qlc"
description = "A small QLC drive for an example: 512 MB, 2 dies"

[capacity]
user = "512MB"

[nand]
cell = "qlc"
channels = 2
dies_per_channel = 1
page_size = "16KiB"
pages_per_block = 128
blocks_per_plane = 72

[slc_cache]
dynamic = true
dynamic_max_fraction = 0.25
"#;

/// As `--set controller.max_iops=200000` would change it.
const SET: [(&str, &str); 1] = [("controller.max_iops", "200000")];

/// The drive filled sequentially, then overwritten at random across all of it: with the
/// drive full, GC must move valid data to free blocks, so the drive writes more than the host.
const JOB: &str = "[global]
ioengine=libaio
direct=1
size=100%

[fill]
rw=write
bs=1m
iodepth=4

[overwrite]
stonewall
rw=randwrite
bs=4k
iodepth=16
io_size=256m
";

/// The overwrite job's write IOPS and the drive's write amplification after it.
fn run() -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let overrides: Vec<(String, String)> = SET
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let config = parse_device_config("small-qlc.toml", DRIVE, &overrides)?;
    let seed = 1;
    let ssd = Ssd::new(
        &config,
        flashlab_engine::SeedTree::new(seed).child("device"),
    )?;
    let mut device = Device::Drive(Box::new(ssd));
    let file = parse_str(JOB, "overwrite.fio", &|_| None)?;
    let options = device.run_options(seed);
    let outcome = run_jobs(&mut device, 0, &file, &options, &mut |_| {})?;
    let iops = outcome.result.jobs[1].iops(DDIR_WRITE);
    let Device::Drive(ssd) = &device else {
        unreachable!("built as a drive above")
    };
    Ok((iops, ssd.ftl().counters().write_amplification()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (iops, wa) = run()?;
    println!("small-qlc, full, 4 KiB random overwrites at QD16: {iops:.0} IOPS, write amplification {wa:.2}");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_full_drive_overwritten_writes_more_than_the_host_wrote() {
        let (iops, wa) = super::run().unwrap();
        assert!(iops > 0.0);
        assert!(wa > 1.0, "write amplification {wa}");
    }

    #[test]
    fn a_bad_override_names_its_key() {
        let bad = [("controller.max_iop".to_string(), "1".to_string())];
        let e = flashlab_device::parse_device_config("small-qlc.toml", super::DRIVE, &bad);
        assert!(e.unwrap_err().to_string().contains("controller.max_iop"));
    }
}
