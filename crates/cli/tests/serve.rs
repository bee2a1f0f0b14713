//! `flashlab serve` used by real NBD clients: qemu-io, nbdinfo, nbdcopy, qemu-img and fio's
//! nbd engine. Each test skips with a notice when its tool is missing, unless
//! FLASHLAB_REQUIRE_TOOLS=1 (as in CI), where a missing tool fails it.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;

use common::{flashlab, job_file, stderr, stdout};

/// Timing-sensitive: one served drive at a time, so tests do not steal each other's CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// True when every tool is on the PATH; otherwise a notice (or a failure under
/// FLASHLAB_REQUIRE_TOOLS=1).
fn have_tools(tools: &[&str]) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !std::env::split_paths(&path).any(|d| d.join(t).is_file()))
        .collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!(
        "missing {} (apt-get install fio libnbd-bin nbdkit qemu-utils)",
        missing.join(", ")
    );
    assert!(
        std::env::var("FLASHLAB_REQUIRE_TOOLS").as_deref() != Ok("1"),
        "{msg}; FLASHLAB_REQUIRE_TOOLS=1 requires them"
    );
    eprintln!("SKIPPED: {msg}");
    false
}

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// A running `flashlab serve` on a Unix socket.
struct Served {
    child: Child,
    uri: String,
    stats: PathBuf,
}

impl Served {
    fn start(name: &str, extra: &[&str]) -> Served {
        let socket = scratch(&format!("{name}.sock"));
        let stats = scratch(&format!("{name}-stats.json"));
        let _ = std::fs::remove_file(&stats);
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(["serve", "--socket"])
            .arg(&socket)
            .arg("--stats")
            .arg(&stats)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("flashlab serve starts");
        // The URI is printed once the socket listens.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read the URI");
        assert!(line.starts_with("nbd+unix://"), "serve printed '{line}'");
        Served {
            child,
            uri: line.trim().to_string(),
            stats,
        }
    }

    /// SIGTERM, wait, and return the stats JSON and the server's standard error.
    fn stop(self) -> (serde_json::Value, String) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(killed.success());
        let out = self.child.wait_with_output().expect("serve exits");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "serve failed: {err}");
        let text = std::fs::read_to_string(&self.stats).expect("stats written at exit");
        (serde_json::from_str(&text).expect("stats JSON"), err)
    }
}

fn run(cmd: &str, args: &[&str]) -> Output {
    Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

fn ok(o: &Output, what: &str) -> String {
    let text = format!("{}{}", stdout(o), stderr(o));
    assert!(o.status.success(), "{what} failed: {text}");
    text
}

/// A 128 MB drive with the tiny preset's NAND: small enough to fill and garbage-collect in
/// seconds.
const SMALL_DRIVE: [&str; 6] = [
    "--device",
    "tiny-test-1gb",
    "--set",
    "capacity.user=128MB",
    "--set",
    "nand.blocks_per_plane=18",
];

#[test]
fn qemu_io_nbdinfo_and_nbdcopy_read_back_what_was_written() {
    if !have_tools(&["qemu-io", "qemu-img", "nbdinfo", "nbdcopy"]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let srv = Served::start("clients", &SMALL_DRIVE);
    let uri = srv.uri.clone();
    let size = ok(&run("nbdinfo", &["--size", &uri]), "nbdinfo");
    assert_eq!(size.trim(), "128000000");
    // Written by one qemu-io process, read back and checked by another.
    ok(
        &run(
            "qemu-io",
            &[
                "-f",
                "raw",
                &uri,
                "-c",
                "write -P 0xa5 4M 1M",
                "-c",
                "write -z 5M 64k",
            ],
        ),
        "qemu-io write",
    );
    let read = ok(
        &run(
            "qemu-io",
            &[
                "-f",
                "raw",
                &uri,
                "-c",
                "read -P 0xa5 4M 1M",
                "-c",
                "read -P 0 5M 64k",
                "-c",
                "read -P 0 100M 4k",
            ],
        ),
        "qemu-io read",
    );
    assert!(!read.contains("Pattern verification failed"), "{read}");
    // nbdcopy writes a file over the drive's first 8 MiB; qemu-img compares the whole drive
    // with it (the rest must read as zeroes, except the pattern written above).
    let img = scratch("clients-src.img");
    let data: Vec<u8> = (0..8u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(&img, &data).unwrap();
    ok(&run("nbdcopy", &[img.to_str().unwrap(), &uri]), "nbdcopy");
    let back = scratch("clients-back.img");
    ok(
        &run(
            "qemu-img",
            &[
                "convert",
                "-f",
                "raw",
                "-O",
                "raw",
                &uri,
                back.to_str().unwrap(),
            ],
        ),
        "qemu-img convert",
    );
    let got = std::fs::read(&back).unwrap();
    assert_eq!(got.len(), 128_000_000);
    assert!(
        got[..8 << 20] == data[..],
        "the first 8 MiB differ from what nbdcopy wrote"
    );
    assert!(
        got[8 << 20..].iter().all(|&b| b == 0),
        "unwritten space is not zero"
    );
    let _ = std::fs::remove_file(&back);
    let (stats, _) = srv.stop();
    assert_eq!(stats["serve"]["hard_disconnects"], 0);
    assert_eq!(stats["serve"]["error_replies"], 0);
}

/// Mean completion latency (ns) and IOPS of a fio JSON job's reads.
fn read_figures(job: &serde_json::Value) -> (f64, f64) {
    (
        job["read"]["clat_ns"]["mean"].as_f64().unwrap(),
        job["read"]["iops"].as_f64().unwrap(),
    )
}

fn fio_json(o: &Output) -> serde_json::Value {
    let text = stdout(o);
    // fio's nbd engine prints "connected" lines before the JSON.
    let start = text
        .find('{')
        .unwrap_or_else(|| panic!("no JSON from fio: {text}{}", stderr(o)));
    serde_json::from_str(&text[start..]).expect("fio JSON")
}

#[test]
fn fio_random_writes_verify_with_crc32c_after_garbage_collection() {
    if !have_tools(&["fio"]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Without an SLC cache every overwrite lands in TLC blocks that GC must clean, whatever
    // idle time the client leaves.
    let mut args = SMALL_DRIVE.to_vec();
    args.extend(["--set", "slc_cache.dynamic=false"]);
    let srv = Served::start("verify", &args);
    // Two passes over the whole drive in different random orders: the second overwrites
    // blocks the first left partly valid, so GC must relocate data. fio checks every block
    // it wrote after each pass.
    let job = job_file(
        "serve-verify.fio",
        &format!(
            "[global]\nioengine=nbd\nuri={}\nrw=randwrite\nbs=4k\niodepth=16\nverify=crc32c\nverify_fatal=1\nverify_state_save=0\n\n\
             [pass1]\nrandseed=1\n\n[pass2]\nstonewall\nrandseed=2\n",
            srv.uri
        ),
    );
    let o = run("fio", &["--output-format=json", &job]);
    let text = ok(&o, "fio verify");
    let v = fio_json(&o);
    for job in v["jobs"].as_array().unwrap() {
        assert_eq!(job["error"], 0, "{text}");
        // The pass wrote the whole drive and read it all back for verification.
        assert_eq!(job["write"]["io_bytes"], 128_000_000u64, "{text}");
        assert_eq!(job["read"]["io_bytes"], 128_000_000u64, "{text}");
    }
    let (stats, err) = srv.stop();
    eprintln!("{err}");
    // Overwriting a full drive needs garbage collection that relocates still-valid data.
    let ftl = &stats["device_counters"]["ftl"];
    assert!(ftl["gc_copied_ius"].as_u64().unwrap() > 0, "{err}");
    assert!(
        stats["device_counters"]["write_amplification"]
            .as_f64()
            .unwrap()
            > 1.0,
        "{err}"
    );
    assert_eq!(stats["serve"]["error_replies"], 0, "{err}");
}

#[test]
fn fio_random_reads_over_nbd_are_the_simulation_scaled_by_the_time_scale() {
    if !have_tools(&["fio"]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // A large time scale leaves room for a loaded machine's scheduling delays; without an
    // SLC cache no folding runs in the idle gaps a real client leaves between requests, so
    // the drive does the same work as under `flashlab run`.
    const SCALE: f64 = 50.0;
    let drive = [
        "--device",
        "tiny-test-1gb",
        "--set",
        "slc_cache.dynamic=false",
    ];
    let jobs = |engine: &str| {
        format!(
            "[global]\n{engine}\nsize=8m\n\n[fill]\nrw=write\nbs=1m\niodepth=4\n\n\
             [qd1]\nstonewall\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=200\n\n\
             [qd16]\nstonewall\nrw=randread\nbs=4k\niodepth=16\nnumber_ios=2000\n"
        )
    };
    let sim_job = job_file("serve-rr-sim.fio", &jobs("ioengine=libaio\ndirect=1"));
    let mut args = vec!["run", sim_job.as_str(), "--output-format", "json"];
    args.extend(drive);
    let sim = flashlab(&args);
    assert!(sim.status.success(), "{}", stderr(&sim));
    let sim: serde_json::Value = serde_json::from_slice(&sim.stdout).unwrap();

    let mut args = drive.to_vec();
    args.extend(["--time-scale", "50"]);
    let srv = Served::start("rr", &args);
    let nbd_job = job_file(
        "serve-rr-nbd.fio",
        &jobs(&format!("ioengine=nbd\nuri={}", srv.uri)),
    );
    let o = run("fio", &["--output-format=json", &nbd_job]);
    ok(&o, "fio randread");
    let nbd = fio_json(&o);
    let (stats, err) = srv.stop();
    let mut lines = vec![err];
    for (i, name) in [(1, "qd1"), (2, "qd16")] {
        assert_eq!(nbd["jobs"][i]["jobname"], name);
        let (sim_lat, sim_iops) = read_figures(&sim["jobs"][i]);
        let (nbd_lat, nbd_iops) = read_figures(&nbd["jobs"][i]);
        lines.push(format!(
            "{name}: flashlab run {:.1} us {:.0} IOPS; nbd at time scale {SCALE}: {:.1} us {:.1} IOPS real = {:.1} us {:.0} IOPS simulated",
            sim_lat / 1e3, sim_iops, nbd_lat / 1e3, nbd_iops, nbd_lat / SCALE / 1e3, nbd_iops * SCALE
        ));
        // Replies are held until the simulated completion: scaled back, what fio measures
        // is never much below the drive's own latency (arrival patterns differ a little).
        assert!(nbd_lat / SCALE > 0.7 * sim_lat, "{}", lines.join("\n"));
    }
    eprintln!("{}", lines.join("\n"));
    // Depth 16 keeps both dies busy: more IOPS than depth 1, over NBD as in the simulation.
    assert!(
        read_figures(&nbd["jobs"][2]).1 > 1.5 * read_figures(&nbd["jobs"][1]).1,
        "{}",
        lines.join("\n")
    );
    assert!(stats["serve"]["max_in_flight"].as_u64().unwrap() >= 8);
    // The server's share of the transport overhead is measured and reported.
    assert!(stats["serve"]["reply_overhead_mean_ns"].is_u64(), "{stats}");
    assert!(lines[0].contains("transport overhead"), "{}", lines[0]);
}

#[test]
fn serve_refuses_public_addresses_and_bad_options_with_exit_code_2() {
    let o = flashlab(&[
        "serve",
        "--device",
        "tiny-test-1gb",
        "--listen",
        "0.0.0.0:10809",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--listen-any"), "{}", stderr(&o));
    let o = flashlab(&[
        "serve",
        "--device",
        "tiny-test-1gb",
        "--listen",
        "localhost",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = flashlab(&[
        "serve",
        "--device",
        "tiny-test-1gb",
        "--time-scale",
        "0",
        "--socket",
        "/nonexistent/x.sock",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("time scale 0"), "{}", stderr(&o));
    let o = flashlab(&["serve", "--device", "tiny-test-1gb", "--max-memory", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--max-memory"), "{}", stderr(&o));
}

/// `flashlab serve` with `args`, expected to refuse at once: its exit code and standard
/// error, or `None` if it was still running (serving) after 10 s, when it is killed.
fn serve_refusal(args: &[&str]) -> Option<(Option<i32>, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .arg("serve")
        .args(args)
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("flashlab serve starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if child.try_wait().expect("wait").is_some() {
            let out = child.wait_with_output().expect("output");
            return Some((
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into(),
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn unusable_backing_stats_and_socket_paths_are_refused_before_serving() {
    let sock = scratch("refused.sock");
    let s = sock.to_str().unwrap();
    let dir = scratch("");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--backing", "/proc/version"],
            "backing file /proc/version",
        ),
        (&["--backing", dir.to_str().unwrap()], "is a directory"),
        (&["--stats", "/nonexistent-dir/stats.json"], "--stats"),
        (&["--backing", "/dev/null"], "character device"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["--device", "tiny-test-1gb", "--socket", s];
        args.extend_from_slice(extra);
        let (code, err) =
            serve_refusal(&args).unwrap_or_else(|| panic!("{extra:?} was served, not refused"));
        assert_eq!(code, Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    // A socket in a missing directory: exit 2, the cause said once.
    let (code, err) = serve_refusal(&["--socket", "/nonexistent-dir/x.sock"]).expect("refused");
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

#[test]
fn two_servers_cannot_share_one_backing_file() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let backing = scratch("serve-shared.img");
    let _ = std::fs::remove_file(&backing);
    let b = backing.to_str().unwrap();
    let first = Served::start("shared1", &["--device", "tiny-test-1gb", "--backing", b]);
    let sock = scratch("shared2.sock");
    let second = serve_refusal(&[
        "--device",
        "tiny-test-1gb",
        "--backing",
        b,
        "--socket",
        sock.to_str().unwrap(),
    ]);
    first.stop();
    let (code, err) = second.expect("the second server was refused");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("in use by another server"), "{err}");
    let _ = std::fs::remove_file(&backing);
}

#[test]
fn a_backing_file_keeps_the_data_across_server_restarts() {
    if !have_tools(&["qemu-io"]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let backing = scratch("serve-backing.img");
    let _ = std::fs::remove_file(&backing);
    let b = backing.to_str().unwrap();
    let srv = Served::start("backing1", &["--device", "tiny-test-1gb", "--backing", b]);
    ok(
        &run(
            "qemu-io",
            &["-f", "raw", &srv.uri, "-c", "write -P 0x3c 1M 256k"],
        ),
        "qemu-io write",
    );
    srv.stop();
    assert_eq!(std::fs::metadata(&backing).unwrap().len(), 999_997_440);
    let srv = Served::start("backing2", &["--device", "tiny-test-1gb", "--backing", b]);
    ok(
        &run(
            "qemu-io",
            &["-f", "raw", &srv.uri, "-c", "read -P 0x3c 1M 256k"],
        ),
        "qemu-io read",
    );
    srv.stop();
    let _ = std::fs::remove_file(Path::new(&backing));
}

#[test]
fn a_raid_system_is_served_and_reads_back_what_was_written() {
    if !have_tools(&["qemu-io", "nbdinfo"]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let system = scratch("serve-raid1.toml");
    std::fs::write(
        &system,
        "name = \"raid1-pair\"\n\
         [drive.a]\npreset = \"tiny-test-1gb\"\n\
         [drive.b]\npreset = \"tiny-test-1gb\"\n\
         [raid.mirror]\nlevel = 1\nchunk = \"64KiB\"\nmembers = [\"a\", \"b\"]\n",
    )
    .unwrap();
    let srv = Served::start("raid1", &["--device", system.to_str().unwrap()]);
    let uri = srv.uri.clone();
    // A mirror exports one member's capacity in whole chunks.
    let size = ok(&run("nbdinfo", &["--size", &uri]), "nbdinfo");
    assert_eq!(
        size.trim(),
        (1_000_000_000u64 / 65_536 * 65_536).to_string()
    );
    ok(
        &run(
            "qemu-io",
            &["-f", "raw", &uri, "-c", "write -P 0x5a 1M 256k"],
        ),
        "qemu-io write",
    );
    ok(
        &run(
            "qemu-io",
            &["-f", "raw", &uri, "-c", "read -P 0x5a 1M 256k"],
        ),
        "qemu-io read",
    );
    let (stats, err) = srv.stop();
    // Both members took every write: the system's counters show it.
    let text = stats["device_counters"].to_string();
    assert!(text.contains("mirror"), "{text}\n{err}");
    assert!(stats["serve"]["replies"].as_u64().unwrap() >= 2, "{err}");
}
