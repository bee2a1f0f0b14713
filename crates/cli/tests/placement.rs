//! NVMe Flexible Data Placement from fio's job options: a two-stream flash cache through one
//! handle and through a handle per stream, the FDP counters in JSON and normal output, and
//! the errors for placement a drive cannot take.

mod common;
use common::*;

/// The tiny test drive with FDP: two handles, power-loss protection, no SLC cache.
const FDP: &[&str] = &[
    "--set",
    "fdp.enabled=true",
    "--set",
    "fdp.handles=2",
    "--set",
    "buffer.plp=true",
    "--set",
    "slc_cache.dynamic=false",
];

/// Small objects written at random over a tenth of the drive, large ones appended to a log
/// over the rest, through placement ID indices `small` and `log`.
fn cache_jobs(small: u32, log: u32) -> String {
    format!(
        "[global]\nioengine=io_uring\niodepth=16\nfdp=1\n\
         [small]\nrw=randwrite\nbs=4k\noffset=0\nsize=10%\nio_size=2g\nfdp_pli={small}\n\
         [log]\nrw=write\nbs=128k\noffset=10%\nsize=90%\nio_size=18g\nplids={log}\n"
    )
}

fn run_on_fdp(name: &str, text: &str, format: &str, extra: &[&str]) -> std::process::Output {
    let path = job_file(name, text);
    let mut args = vec![
        "run",
        path.as_str(),
        "--device",
        "tiny-test-1gb",
        "--output-format",
        format,
    ];
    args.extend_from_slice(FDP);
    args.extend_from_slice(extra);
    flashlab(&args)
}

fn fdp_of(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(o)).expect("JSON");
    doc["flashlab"]["device_counters"]["fdp"].clone()
}

#[test]
fn a_handle_per_stream_lowers_dlwa_and_each_handle_counts_its_own() {
    let one = fdp_of(&run_on_fdp("fdp-one.fio", &cache_jobs(0, 0), "json", &[]));
    let two = fdp_of(&run_on_fdp("fdp-two.fio", &cache_jobs(0, 1), "json", &[]));
    let dlwa = |f: &serde_json::Value| f["dlwa"].as_f64().unwrap();
    assert!(
        dlwa(&two) - 1.0 < (dlwa(&one) - 1.0) * 0.7,
        "one handle {}, two {}",
        dlwa(&one),
        dlwa(&two)
    );
    for f in [&one, &two] {
        let mbmw = f["mbmw"].as_f64().unwrap();
        let hbmw = f["hbmw"].as_f64().unwrap();
        assert!((mbmw / hbmw - dlwa(f)).abs() < 1e-9);
        assert_eq!(hbmw as u64, 20 << 30, "every host byte counted once");
    }
    // One handle took everything; with two, each its own stream's bytes.
    let host =
        |f: &serde_json::Value, h: usize| f["ruh"][h]["host_bytes_written"].as_u64().unwrap();
    assert_eq!((host(&one, 0), host(&one, 1)), (20 << 30, 0));
    assert_eq!((host(&two, 0), host(&two, 1)), (2 << 30, 18 << 30));
    assert_eq!(two["ruh"][1]["attributes"], "host_specified");
    assert_eq!(one["ruh"][1]["attributes"], "unused");
}

#[test]
fn normal_output_shows_the_fdp_logs_only_on_a_drive_with_fdp() {
    let with = run_on_fdp("fdp-normal.fio", &cache_jobs(0, 1), "normal", &[]);
    assert!(with.status.success(), "{}", stderr(&with));
    let text = stdout(&with);
    for line in [
        "Host Bytes with Metadata Written (HBMW): 21474836480",
        "Media Bytes with Metadata Written (MBMW): ",
        "Media Bytes Erased (MBE): ",
        "Placement Identifier 1; Reclaim Unit Handle Identifier 1: Attributes: 0x1 (Host Specified)",
        "Reclaim Unit Available Media Writes (RUAMW): ",
        "FDP events (nvme fdp events): RU not fully written: 0, media reallocated: 0",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    let plain = run_job(
        "fdp-plain.fio",
        "[w]\nrw=randwrite\nbs=4k\nio_size=64m\n",
        "tiny-test-1gb",
        "normal,json",
    );
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(!stdout(&plain).contains("FDP"));
    assert!(!stdout(&plain).contains("\"fdp\""));
}

#[test]
fn placement_a_drive_cannot_take_exits_2_naming_the_option() {
    let job = "[w]\nrw=randwrite\nbs=4k\nio_size=4m\nfdp=1\n";
    let o = run_job("fdp-nodrive.fio", job, "tiny-test-1gb", "normal");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fdp=1: the drive has no Flexible Data Placement"),
        "{}",
        stderr(&o)
    );
    let job = "[w]\nrw=randwrite\nbs=4k\nio_size=4m\ndataplacement=fdp\nplids=0,2\n";
    let o = run_on_fdp("fdp-range.fio", job, "normal", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("plids (fdp_pli) = 2: placement ID index out of range"),
        "{}",
        stderr(&o)
    );
    let job = "[w]\nrw=randwrite\nbs=4k\nio_size=4m\nfdp=1\nplid_select=scheme\n";
    let o = run_on_fdp("fdp-scheme.fio", job, "normal", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("plid_select"), "{}", stderr(&o));
    // Device keys: FDP needs power-loss protection.
    let o = flashlab(&[
        "describe",
        "tiny-test-1gb",
        "--set",
        "fdp.enabled=true",
        "--set",
        "fdp.handles=2",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("fdp.enabled = true: FDP is modelled on drives with power-loss protection"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn random_selection_spreads_writes_over_the_jobs_ids_and_repeats_with_the_seed() {
    let job = "[w]\nrw=randwrite\nbs=4k\nio_size=64m\nfdp=1\nfdp_pli_select=random\n";
    let a = run_on_fdp("fdp-random.fio", job, "json", &[]);
    let b = run_on_fdp("fdp-random.fio", job, "json", &[]);
    assert_eq!(stdout(&a), stdout(&b));
    let f = fdp_of(&a);
    let h0 = f["ruh"][0]["host_bytes_written"].as_u64().unwrap();
    let h1 = f["ruh"][1]["host_bytes_written"].as_u64().unwrap();
    assert_eq!(h0 + h1, 64 << 20);
    assert!(h0 > 24 << 20 && h1 > 24 << 20, "{h0} {h1}");
}

/// `flashlab suite placement` on `args`, its JSON results.
fn placement_suite(args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "suite",
        "placement",
        "--no-state-cache",
        "--output-format",
        "json",
    ];
    all.extend_from_slice(args);
    let o = flashlab(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    doc["devices"][0]["results"].clone()
}

#[test]
fn the_placement_suite_lowers_dlwa_with_a_handle_per_stream_at_full_utilisation() {
    // The tiny drive has no FDP: the suite turns it on, with the handles each placement
    // writes through.
    let r = placement_suite(&["--device", "tiny-test-1gb", "--utilisation", "50,100"]);
    // On one thread the points run in their order; on several the fullest start first.
    let one_thread = [
        "--device",
        "tiny-test-1gb",
        "--utilisation",
        "50,100",
        "--drive-threads",
        "1",
    ];
    assert_eq!(placement_suite(&one_thread), r);
    let v = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("no {k} in {r}"));
    // At half the drive, GC finds blocks the streams emptied either way.
    for p in ["one_handle", "per_stream"] {
        assert!(v(&format!("{p}_util50_dlwa")) < 1.05, "{r}");
    }
    // At the whole drive, one handle mixes the log's pages with the small objects' and GC
    // copies them; a handle each leaves it the small objects' units only.
    let (one, per) = (v("one_handle_util100_dlwa"), v("per_stream_util100_dlwa"));
    assert!(one > 2.0 && per < 1.5 && per < one / 2.0, "{r}");
    // The reads wait for less GC.
    assert!(
        v("per_stream_util100_read_lat_p99_9_ns") < v("one_handle_util100_read_lat_p99_9_ns"),
        "{r}"
    );
    // A handle each writes at the suite's rate, as at half the drive; at one handle's steady
    // DLWA (7.6) the tiny drive's two dies cannot program that much, and the host writes less.
    let rate = v("per_stream_util50_write_bw_bytes_per_s");
    assert!(
        (v("per_stream_util100_write_bw_bytes_per_s") - rate).abs() < 0.02 * rate,
        "{r}"
    );
    assert!(
        v("one_handle_util100_write_bw_bytes_per_s") < 0.9 * rate,
        "{r}"
    );
}

#[test]
fn the_placement_suite_on_zones_writes_each_byte_once() {
    let r = placement_suite(&[
        "--device",
        "tiny-test-1gb",
        "--set",
        "zns.enabled=true",
        "--utilisation",
        "100",
    ]);
    let dlwa = r["zones_util100_dlwa"].as_f64().expect("zones row");
    assert!((dlwa - 1.0).abs() < 0.01, "{r}");
    assert!(r.get("one_handle_util100_dlwa").is_none(), "{r}");
}

#[test]
fn on_a_slice_the_fdp_block_says_its_bytes_are_the_slices() {
    let job = "[w]\nrw=randwrite\nbs=4k\nio_size=64m\nfdp=1\n";
    let o = run_on_fdp("fdp-slice.fio", job, "normal", &["--set", "sim.scale=0.8"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("FDP statistics (nvme fdp stats; bytes of the simulated 1/"),
        "{text}"
    );
    // The slice's own bytes: 64 MiB scaled to the slice, not to the drive.
    let hbmw: u64 = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Host Bytes with Metadata Written (HBMW): ")
        })
        .and_then(|v| v.parse().ok())
        .expect("HBMW line");
    assert!(hbmw < 64 << 20, "{hbmw}");
    let whole = run_on_fdp("fdp-whole.fio", job, "normal", &[]);
    assert!(stdout(&whole).contains("FDP statistics (nvme fdp stats):\n"));
}

/// A slice holds open blocks for the handles the jobs write: a handle never written opens no
/// reclaim unit on the drive, so a job through placement ID 0 on a slice of a drive of two
/// handles gets the slice of a drive of one (the same user capacity, hence the same scale),
/// not one with the other handle's blocks as spare the drive does not have.
#[test]
fn a_slice_holds_open_blocks_for_the_handles_the_jobs_write() {
    let scale_of = |handles: &str, job: &str| {
        let path = job_file(&format!("fdp-held-{handles}.fio"), job);
        let o = flashlab(&[
            "run",
            path.as_str(),
            "--device",
            "tiny-test-1gb",
            "--set",
            "fdp.enabled=true",
            "--set",
            &format!("fdp.handles={handles}"),
            "--set",
            "buffer.plp=true",
            "--set",
            "slc_cache.dynamic=false",
            "--set",
            "sim.scale=0.9",
            "--output-format",
            "json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        doc["flashlab"]["scale"]["capacity_factor"]
            .as_f64()
            .expect("capacity factor")
    };
    let one = "[w]\nrw=randwrite\nbs=4k\nio_size=8m\nfdp=1\nplids=0\n";
    let single = scale_of("1", one);
    assert_eq!(scale_of("2", one), single);
    // A job through both handles holds both: less user capacity on the slice.
    let both = "[w]\nrw=randwrite\nbs=4k\nio_size=8m\nfdp=1\n";
    assert!(scale_of("2", both) > single);
}
