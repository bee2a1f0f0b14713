//! Acceptance tests of the storage systems through the `flashlab` binary (docs/systems.md):
//! the hard disk against its published figures, a hard disk with and without an Optane cache
//! over two passes, and bad system descriptions.

mod common;

use common::{flashlab, job_file, stderr, stdout};
use serde_json::Value;

/// Run one fio job on `device` and return the fio JSON.
fn run_json(name: &str, job: &str, device: &str) -> Value {
    let path = job_file(name, job);
    let out = flashlab(&["run", &path, "--device", device, "--output-format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("fio JSON parses")
}

fn read_iops(doc: &Value) -> f64 {
    doc["jobs"][0]["read"]["iops"].as_f64().unwrap()
}

fn read_bw(doc: &Value) -> f64 {
    doc["jobs"][0]["read"]["bw_bytes"].as_f64().unwrap()
}

fn random_read_job(qd: u32) -> String {
    format!(
        "[global]\nioengine=libaio\ndirect=1\n[r]\nrw=randread\nbs=4k\niodepth={qd}\ntime_based=1\nruntime=20s\n"
    )
}

#[test]
fn hard_disk_random_reads_over_the_whole_surface_fall_in_the_published_bands() {
    // QD1: each read is a seek (8.5 ms average) plus half a turn (4.17 ms at 7,200 rpm) plus
    // 50 us of command and ~20 us of transfer: 12.74 ms, 78.5 IOPS. Hitachi's Deskstar
    // specifications compute their random-read figure the same way (4,096 reads in 55.5 s,
    // 74 IOPS); 7,200 rpm SATA disks are quoted at 75-100 IOPS.
    let qd1 = read_iops(&run_json("hdd-qd1.fio", &random_read_job(1), "hdd-2tb"));
    assert!((70.0..90.0).contains(&qd1), "QD1 {qd1} IOPS");
    // QD32: with 31 commands to choose from the drive takes the one nearest in seek plus
    // rotation. Published full-surface figures for 7,200 rpm desktop disks with NCQ are a
    // few hundred IOPS, about twice QD1 or a little more; the model's choice is ideal (it
    // knows every target's exact positioning time), so it sits at the top of that range.
    let qd32 = read_iops(&run_json("hdd-qd32.fio", &random_read_job(32), "hdd-2tb"));
    assert!((160.0..300.0).contains(&qd32), "QD32 {qd32} IOPS");
    assert!(
        qd32 > 1.8 * qd1 && qd32 < 4.0 * qd1,
        "QD1 {qd1}, QD32 {qd32}"
    );
}

#[test]
fn hard_disk_streams_at_its_outer_and_inner_zone_rates() {
    // Datasheet: up to 210 MB/s sustained (outer zone); the inner zone streams at about half
    // (the preset's 105 MB/s: the inner radius is about half the outer one).
    let seq = |offset: u64| {
        format!("[global]\nioengine=libaio\ndirect=1\n[s]\nrw=read\nbs=1m\niodepth=1\noffset={offset}\nsize=2g\n")
    };
    let outer = read_bw(&run_json("hdd-outer.fio", &seq(0), "hdd-2tb"));
    let inner = read_bw(&run_json(
        "hdd-inner.fio",
        &seq(1_990_000_000_000),
        "hdd-2tb",
    ));
    assert!((outer / 210e6 - 1.0).abs() < 0.03, "outer {outer}");
    assert!((inner / 105e6 - 1.0).abs() < 0.05, "inner {inner}");
}

fn result(dev: &Value, key: &str) -> f64 {
    dev["results"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("no {key} in {}", dev["results"]))
}

#[test]
fn an_optane_cache_makes_the_second_pass_fast_and_the_bare_disk_stays_slow() {
    // The three systems of docs/reviews.md#optane-cache side by side: a 256 MiB desktop test
    // file and a 256 MiB application region (a 90 % read zipf pass at QD4), each run twice.
    let out = flashlab(&[
        "suite",
        "cache-passes",
        "--device",
        "hdd-2tb",
        "--device",
        "optane-16gb-hdd-2tb",
        "--device",
        "optane-32gb-hdd-2tb",
        "--runtime",
        "500ms",
        "--size",
        "256MiB",
        "--app-region",
        "256MiB",
        "--app-time",
        "3s",
        "--scan-set",
        "1GiB",
        // The storage alone: a host that keeps no metadata and a scanner that scans every
        // file each pass (the defaults, the review's host, read nothing on the second pass).
        "--scan-metadata",
        "none",
        "--scan-skip-unchanged",
        "off",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let devs = doc["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 3);
    let (hdd, o16, o32) = (&devs[0], &devs[1], &devs[2]);
    let pass = |d: &Value, p: u32, k: &str| result(d, &format!("pass{p}_{k}"));
    let seq = "desktop_seq1m_q1t1_read_bw_bytes_per_s";
    let rnd1 = "desktop_rnd4k_q1t1_read_iops";
    let rnd32 = "desktop_rnd4k_q32t1_read_iops";

    // The disk alone: the second pass is the first again (within the few % its rotational
    // positions move by).
    for k in [seq, rnd1, rnd32, "app_iops"] {
        let (a, b) = (pass(hdd, 1, k), pass(hdd, 2, k));
        assert!((b / a - 1.0).abs() < 0.12, "hdd {k}: {a} then {b}");
    }
    // Its 4 KiB random reads inside a 256 MiB file: a short seek (~1.1 ms over ~40
    // cylinders) and half a turn (4.17 ms) at QD1, ~190 IOPS; NCQ shrinks the turn at QD32.
    let h1 = pass(hdd, 1, rnd1);
    assert!((160.0..220.0).contains(&h1), "hdd QD1 in 256 MiB: {h1}");
    assert!(pass(hdd, 1, rnd32) > 3.0 * h1);
    // Sequential 1 MiB reads at the outer zone's 210 MB/s.
    assert!((pass(hdd, 1, seq) / 210e6 - 1.0).abs() < 0.05);

    for (d, seq_spec, iops_spec) in [(o16, 900e6, 190_000.0), (o32, 1350e6, 240_000.0)] {
        // First pass: the test file was just written through the cache, long sequential
        // runs bypass it, so reads come from the disk.
        assert!(pass(d, 1, seq) < 1.1 * pass(hdd, 1, seq));
        // Second pass: every read hits; sequential reads run at the Optane's 900 / 1,350
        // MB/s and QD32 random reads at its controller's 190K / 240K IOPS (Intel's spec).
        assert_eq!(pass(d, 2, "desktop_read_hit_ratio"), 1.0);
        let s2 = pass(d, 2, seq);
        assert!((s2 / seq_spec - 1.0).abs() < 0.05, "sequential {s2}");
        let r2 = pass(d, 2, rnd32);
        assert!((r2 / iops_spec - 1.0).abs() < 0.05, "random QD32 {r2}");
        // The application pass: the cache copies what was read, so the Zipf head is cached
        // within the first pass and the second gains only the blocks read again (at least
        // as fast, and far faster than the disk alone).
        let (a1, a2) = (pass(d, 1, "app_iops"), pass(d, 2, "app_iops"));
        assert!(a2 >= a1, "app pass 1 {a1}, pass 2 {a2}");
        assert!(a2 > 3.0 * pass(hdd, 2, "app_iops"));
        assert!(pass(d, 2, "app_read_hit_ratio") > pass(d, 1, "app_read_hit_ratio"));
        // The antivirus scan of 1 GiB of files (about 5,000): the second pass finds the small
        // files and the head of each fragment in the cache, several times faster than the
        // first; the disk alone takes as long both times.
        let (s1, s2) = (
            result(d, "scan_pass1_time_s"),
            result(d, "scan_pass2_time_s"),
        );
        assert!(s2 < s1 / 2.0, "scan pass 1 {s1} s, pass 2 {s2} s");
        let h2 = result(hdd, "scan_pass2_time_s");
        assert!(s2 < h2 / 2.5, "scan pass 2 {s2} s, the disk alone {h2} s");
        assert!(result(d, "scan_pass2_read_hit_ratio") > 0.5);
    }
    let (h1, h2) = (
        result(hdd, "scan_pass1_time_s"),
        result(hdd, "scan_pass2_time_s"),
    );
    assert!((h2 / h1 - 1.0).abs() < 0.05, "hdd scan {h1} s then {h2} s");
    assert!(h1 > 10.0, "1 GiB of files take the disk alone {h1} s");
    // Twice the 3D XPoint dies: the 32 GB module reads sequentially 1.5x as fast.
    let ratio = pass(o32, 2, seq) / pass(o16, 2, seq);
    assert!((ratio - 1.5).abs() < 0.08, "{ratio}");
}

/// Run a job against a system file holding `text`; expect exit 2 and return stderr.
fn refused(file: &str, text: &str) -> String {
    let path = job_file(file, text);
    let job = job_file(
        "sys-small.fio",
        "[global]\nioengine=libaio\ndirect=1\n[r]\nrw=randread\nbs=4k\nsize=16m\n",
    );
    let out = flashlab(&["run", &job, "--device", &path]);
    assert_eq!(out.status.code(), Some(2), "{file}: {}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{file}: {}", stdout(&out));
    let e = stderr(&out);
    assert!(e.contains(&format!("{file}:")), "{file} not named: {e}");
    e
}

#[test]
fn bad_system_descriptions_exit_2_naming_the_line_and_what_is_valid() {
    let drives = "name = \"bad\"\n[drive.a]\npreset = \"tiny-test-1gb\"\n[drive.b]\npreset = \"tiny-test-1gb\"\n";
    // Line numbers: the drives take lines 1-5.
    let e = refused(
        "sys-cycle.toml",
        &format!("{drives}[raid.r]\nlevel = 0\nmembers = [\"a\", \"s\"]\n[raid.s]\nlevel = 0\nmembers = [\"r\"]\n"),
    );
    assert!(e.contains("cycle") && e.contains("r -> s"), "{e}");
    let e = refused(
        "sys-missing.toml",
        &format!("{drives}[raid.r]\nlevel = 0\nmembers = [\"a\", \"b\", \"c\"]\n"),
    );
    assert!(e.contains("sys-missing.toml:8:"), "{e}");
    assert!(
        e.contains("`c`, which is not defined; defined: a, b, r"),
        "{e}"
    );
    let e = refused(
        "sys-raid5.toml",
        &format!("{drives}[raid.r]\nlevel = 5\nmembers = [\"a\", \"b\"]\n"),
    );
    assert!(e.contains("sys-raid5.toml:8: raid.r.members"), "{e}");
    assert!(
        e.contains("RAID 5 needs at least 3 members") && e.contains("RAID 5 3 or more"),
        "{e}"
    );
    let e = refused(
        "sys-preset.toml",
        "name = \"bad\"\n[drive.a]\npreset = \"tiny-test-1gb\"\n[drive.h]\npreset = \"toshiba-dt01aca20\"\n[raid.r]\nlevel = 0\nmembers = [\"a\", \"h\"]\n",
    );
    assert!(e.contains("sys-preset.toml:5:"), "{e}");
    // The valid names once, drive presets and the disk presets both.
    assert!(
        e.contains("samsung-pm981a-256gb") && e.contains("toshiba-dt01aca200-2tb"),
        "{e}"
    );
    assert_eq!(e.matches("unknown device").count(), 1, "{e}");
    let e = refused(
        "sys-link.toml",
        &format!("{drives}[raid.r]\nlevel = 0\nmembers = [\"a\", \"b\"]\n[link.up]\nbandwidth = \"0GB/s\"\ndevices = [\"a\", \"b\"]\n"),
    );
    assert!(
        e.contains("sys-link.toml:10: link.up.bandwidth") && e.contains("valid: a positive rate"),
        "{e}"
    );
}
