//! Zoned namespaces end to end: fio's own `examples/zbd-*.fio` job files (in jobs/zbd,
//! unchanged: a drive without namespaces takes any filename) on the ZN540 preset, a
//! sequential write then its rewrite at WA 1.0, and the errors fio and the drive give; the
//! same on the host-managed SMR disk, with its conventional zones.

mod common;

use common::{flashlab, job_file, repo, stderr, stdout};

const ZN540: &str = "wd-ultrastar-dc-zn540-1tb";

fn example(name: &str) -> String {
    repo()
        .join("jobs/zbd")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)))
}

/// The examples' 256 MiB zones on the ZN540's dies.
const ZONES_256M: [&str; 4] = [
    "--set",
    "zns.zone_size=256MiB",
    "--set",
    "zns.zone_capacity=256MiB",
];

#[test]
fn fio_refuses_the_examples_zone_size_on_the_zn540_as_fio_does() {
    for name in [
        "zbd-rand-write-zone-reset-gc.fio",
        "zbd-rand-write.fio",
        "zbd-seq-read.fio",
    ] {
        let o = flashlab(&["run", &example(name), "--device", ZN540]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(
                "job parameter zonesize 268435456 does not match disk zone size 2147483648"
            ),
            "{name}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn the_trim_example_paces_its_trims_with_fio_s_flow() {
    // zbd-rand-write-trim-gc.fio: after the warmup a writer of flow=128 and a trimmer of
    // flow=1 share the global flow, so one 256 MiB trim (a zone reset) comes per 128 writes.
    // Without its group_reporting each job reports apart.
    let text = std::fs::read_to_string(example("zbd-rand-write-trim-gc.fio")).unwrap();
    let path = job_file("zbd-trim-flow.fio", &text.replace("group_reporting\n", ""));
    let mut args = vec!["run", &path, "--device", ZN540, "--output-format", "json"];
    args.extend(ZONES_256M);
    let o = flashlab(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let writes = j["jobs"][1]["write"]["total_ios"].as_u64().unwrap();
    let trims = j["jobs"][2]["trim"]["total_ios"].as_u64().unwrap();
    assert!(trims > 50, "{trims}");
    let ratio = writes as f64 / trims as f64;
    assert!(
        (ratio - 128.0).abs() < 1.3,
        "{writes} writes / {trims} trims = {ratio}"
    );
    // A weight fio refuses (above its 1000) is an error naming the option.
    let path = job_file("zbd-flow-bad.fio", &text.replace("flow=128", "flow=1001"));
    let o = flashlab(&["run", &path, "--device", ZN540]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value \"1001\" for flow: expected an integer from 0 to 1000"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_zone_reset_example_resets_zones_past_its_threshold() {
    let mut args = vec!["run", "--device", ZN540, "--output-format", "json,normal"];
    args.extend(ZONES_256M);
    let file = example("zbd-rand-write-zone-reset-gc.fio");
    args.push(&file);
    let o = flashlab(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let (json_text, normal) = out.split_at(out.rfind("\n}\n").expect("the JSON document") + 3);
    let j: serde_json::Value = serde_json::from_str(json_text).unwrap();
    let job = &j["jobs"][0];
    let resets = job["zone_resets"].as_u64().expect("fio's zone_resets");
    // 40 s of 32 MiB writes over 8 zones of 256 MiB: each zone is filled and reset many
    // times, and the threshold resets come on top of those.
    assert!(resets > 50, "{resets}");
    assert!(
        normal.contains(&format!("; {resets} zone resets")),
        "{normal}"
    );
    // Every write went to its zone's write pointer: the drive refused none.
    assert_eq!(job["error"], 0);
    let c = &j["flashlab"]["device_counters"];
    assert_eq!(c["write_amplification"], 1.0);
    assert_eq!(c["zns"]["zone_resets"].as_u64(), Some(resets));
}

#[test]
fn the_random_write_example_needs_the_drive_s_open_zone_limit_raised() {
    let file = example("zbd-rand-write.fio");
    let mut args = vec!["run", "--device", ZN540];
    args.extend(ZONES_256M);
    args.push(&file);
    let o = flashlab(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("Specified --max_open_zones (32) is larger than max (14)"),
        "{}",
        stderr(&o)
    );
    args.extend([
        "--set",
        "zns.max_open_zones=32",
        "--set",
        "zns.max_active_zones=32",
        "--output-format",
        "json",
    ]);
    let o = flashlab(&args);
    let j = json(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(j["jobs"][0]["error"], 0);
    // Sixteen jobs writing at most 32 zones: the drive never had more open.
    let zns = &j["flashlab"]["device_counters"]["zns"];
    assert!(zns["open_zones"].as_u64().unwrap() <= 32, "{zns}");
    assert_eq!(j["flashlab"]["device_counters"]["write_amplification"], 1.0);
}

#[test]
fn a_sequential_write_and_its_rewrite_write_each_byte_once() {
    // Two loops over 8 zones: the second loop finds them full and fio resets each first.
    let path = job_file(
        "zoned-seq-rewrite.fio",
        "[seq]\nrw=write\nbs=1m\nzonemode=zbd\nsize=8z\nzonesize=2g\nioengine=libaio\niodepth=8\nloops=2\n",
    );
    let o = flashlab(&["run", &path, "--device", ZN540, "--output-format", "json"]);
    let j = json(&o);
    let job = &j["jobs"][0];
    assert_eq!(job["zone_resets"], 8);
    // fio skips the 971 MiB between a zone's capacity and its end: 2 x 8 x 1,077 MiB.
    assert_eq!(job["write"]["io_bytes"], (2 * 8 * 1077u64) << 20);
    let c = &j["flashlab"]["device_counters"];
    assert_eq!(c["write_amplification"], 1.0, "{}", c["ftl"]);
    assert_eq!(c["ftl"]["gc_copied_ius"], 0);
    assert_eq!(c["ftl"]["erases"], 8 * 60);
}

#[test]
fn a_write_off_the_write_pointer_fails_with_fio_s_eio() {
    // Without zonemode=zbd fio sends the random writes as they are: the drive refuses the
    // first one not at its zone's write pointer, and fio stops the job with EIO.
    let o = refused_off_the_pointer(
        ZN540,
        "zoned-random-plain.fio",
        "[plain]\nrw=randwrite\nbs=4k\nsize=4g\nnumber_ios=100\n",
    );
    assert!(stderr(&o).contains("Zone Invalid Write"), "{}", stderr(&o));
}

/// `job` on `device` stops with fio's EIO at its first write off a zone's write pointer
/// (exit 1, job error 5, the drive's "Zone Invalid Write" in the JSON's I/O errors).
fn refused_off_the_pointer(device: &str, name: &str, job: &str) -> std::process::Output {
    let path = job_file(name, job);
    let o = flashlab(&["run", &path, "--device", device, "--output-format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["jobs"][0]["error"], 5);
    let e = j["flashlab"]["io_errors"][0]["error"].as_str().unwrap();
    assert!(
        e.starts_with("Zone Invalid Write: write of 4096 bytes at byte"),
        "{e}"
    );
    o
}

#[test]
fn a_zoned_job_on_a_conventional_drive_needs_fio_s_zone_size() {
    let path = job_file(
        "zoned-on-conventional.fio",
        "[z]\nrw=write\nbs=128k\nzonemode=zbd\nsize=64m\n",
    );
    let o = flashlab(&["run", &path, "--device", "tiny-test-1gb"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("zoned-on-conventional.fio:1: job 'z'"), "{e}");
    assert!(
        e.contains("Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd"),
        "{e}"
    );
    // With zonesize, fio emulates zones: writes at their pointers, resets counted, no
    // zone command to the drive.
    let path = job_file(
        "zoned-emulated.fio",
        "[z]\nrw=write\nbs=128k\nzonemode=zbd\nzonesize=16m\nsize=64m\nloops=2\n",
    );
    let o = flashlab(&[
        "run",
        &path,
        "--device",
        "tiny-test-1gb",
        "--output-format",
        "json",
    ]);
    let j = json(&o);
    assert_eq!(j["jobs"][0]["zone_resets"], 4);
    assert!(j["flashlab"]["device_counters"].get("zns").is_none());
}

#[test]
fn zoned_options_of_a_job_fio_refuses_exit_2_naming_the_option() {
    let path = job_file(
        "zoned-bad-option.fio",
        "[z]\nrw=write\nzonemode=zbd\nzone_reset_frequency=2\n",
    );
    let o = flashlab(&["run", &path, "--device", ZN540]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("zone_reset_frequency"),
        "{}",
        stderr(&o)
    );
}

/// The host-managed SMR disk (WD Ultrastar DC HC620 14 TB: 256 MiB zones, 524 conventional)
/// as a system of one disk.
const SMR: &str = "hdd-smr-14tb";

fn disk(j: &serde_json::Value) -> &serde_json::Value {
    &j["flashlab"]["system_counters"]["root"]
}

#[test]
fn fio_s_zbd_examples_run_on_the_smr_disk_as_written() {
    // fio's examples were written for this disk: 256 MiB zones, sequential from zone 524.
    for name in [
        "zbd-seq-read.fio",
        "zbd-rand-write.fio",
        "zbd-rand-write-zone-reset-gc.fio",
    ] {
        let o = flashlab(&[
            "run",
            &example(name),
            "--device",
            SMR,
            "--output-format",
            "json",
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["jobs"][0]["error"], 0, "{name}");
        let zoned = &disk(&j)["zoned"];
        assert_eq!(zoned["conventional_zones"], 524, "{name}");
        match name {
            // 16 jobs over the whole disk, conventional zones included, at most 32 zones
            // written at once.
            "zbd-rand-write.fio" => {
                assert!(zoned["open_zones"].as_u64().unwrap() <= 32, "{zoned}");
                assert!(j["jobs"][0]["write"]["io_bytes"].as_u64().unwrap() > 1 << 30);
            }
            "zbd-rand-write-zone-reset-gc.fio" => {
                let resets = j["jobs"][0]["zone_resets"].as_u64().unwrap();
                assert!(resets > 8, "{resets}");
                assert_eq!(zoned["zone_resets"].as_u64(), Some(resets));
            }
            // A fresh disk has nothing below its write pointers: fio reads nothing.
            _ => assert_eq!(j["jobs"][0]["read"]["io_bytes"], 0),
        }
    }
    let path = job_file(
        "smr-zone-size.fio",
        "[z]\nrw=write\nzonemode=zbd\nzonesize=128m\nsize=1g\n",
    );
    let o = flashlab(&["run", &path, "--device", SMR]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("job parameter zonesize 134217728 does not match disk zone size 268435456"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_smr_disk_writes_its_zones_at_the_sequential_rate_and_resets_them() {
    // Two loops over 4 zones: the second finds them full and fio resets each first.
    let path = job_file(
        "smr-seq-rewrite.fio",
        "[seq]\nrw=write\nbs=1m\nzonemode=zbd\nzonesize=256m\noffset=524z\nsize=4z\nioengine=libaio\niodepth=8\nloops=2\n",
    );
    let o = flashlab(&["run", &path, "--device", SMR, "--output-format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["jobs"][0]["zone_resets"], 4);
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 2u64 << 30);
    let d = disk(&j);
    assert_eq!(d["zoned"]["zone_resets"], 4);
    // No drive-managed remapping: each host write is one media write, at the outer zones'
    // media rate (246 MB/s).
    assert_eq!(d["media_writes"], d["writes"]);
    let media_s = d["transfer_ns"].as_f64().unwrap() / 1e9;
    let rate = (2u64 << 30) as f64 / media_s / 1e6;
    assert!((rate - 246.0).abs() < 5.0, "{rate} MB/s");
}

#[test]
fn an_smr_disk_refuses_a_write_off_the_pointer_and_takes_random_ones_in_conventional_zones() {
    // Without zonemode=zbd, random writes in the sequential zones: the disk refuses the
    // first one not at its zone's write pointer, as a ZNS drive does.
    refused_off_the_pointer(
        SMR,
        "smr-random-plain.fio",
        "[plain]\nrw=randwrite\nbs=4k\noffset=140660178944\nsize=4g\nnumber_ios=100\n",
    );
    // The same random writes in the first 131 GiB, the conventional zones, run.
    let path = job_file(
        "smr-random-conventional.fio",
        "[conv]\nrw=randwrite\nbs=4k\nsize=131g\nnumber_ios=2000\nioengine=libaio\niodepth=32\n",
    );
    let o = flashlab(&["run", &path, "--device", SMR, "--output-format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["jobs"][0]["error"], 0);
    assert_eq!(disk(&j)["writes"], 2000);
    // A zoned job on the conventional hard disk is refused as on a conventional SSD.
    let path = job_file(
        "hdd-zoned.fio",
        "[z]\nrw=write\nbs=128k\nzonemode=zbd\nsize=64m\n",
    );
    let o = flashlab(&["run", &path, "--device", "hdd-2tb"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd"),
        "{}",
        stderr(&o)
    );
}
