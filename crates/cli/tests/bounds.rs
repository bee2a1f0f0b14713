//! Hostile and mistaken inputs through the binary: every read, allocation and queue sized by
//! input has a stated bound (docs/limits.md), and going past one is bad input (exit 2) with
//! a short message naming the limit, never memory growing until the machine runs out.
//!
//! Each run here is under an address-space limit, so a build without these bounds fails the
//! test (an allocation refused) instead of exhausting the machine.

mod common;
use common::{job_file, stderr};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Address space a test run may use (KiB for `ulimit -v`): the bounded runs need a few
/// hundred MB.
const RUN_LIMIT_KIB: u64 = 3 << 20;

/// Run `flashlab` with `args` in the scratch directory under [`RUN_LIMIT_KIB`].
fn bounded(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {RUN_LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("the flashlab binary runs")
}

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Exit 2, and stderr (returned) is short: the input is never echoed whole.
fn bad_input(out: &Output) -> String {
    let e = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {e}");
    assert!(e.len() < 1_000, "{} bytes of message: {e:.300}", e.len());
    e
}

fn run(job: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", job, "--device", "tiny-test-1gb"];
    args.extend_from_slice(extra);
    bounded(&args)
}

#[test]
fn includes_of_devices_are_refused_before_reading() {
    for dev in ["/dev/zero", "/dev/urandom"] {
        let job = job_file(
            "include-dev.fio",
            &format!("[j]\nrw=read\nsize=1m\ninclude {dev}\n"),
        );
        let e = bad_input(&run(&job, &[]));
        assert!(
            e.contains("include-dev.fio:4") && e.contains(dev) && e.contains("character device"),
            "{e}"
        );
    }
    let e = bad_input(&bounded(&["run", "/dev/zero"]));
    assert!(
        e.contains("/dev/zero") && e.contains("character device"),
        "{e}"
    );
    let e = bad_input(&bounded(&["run", "/"]));
    assert!(e.contains("directory"), "{e}");
}

#[test]
fn a_drive_description_linked_to_a_device_is_refused() {
    let link = scratch("zero-link.toml");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let out = bounded(&["run", &job, "--device", link.to_str().unwrap()]);
    let e = bad_input(&out);
    assert!(
        e.contains("zero-link.toml") && e.contains("character device"),
        "{e}"
    );
}

#[test]
fn files_past_their_size_limit_are_refused() {
    // An included file over the 1 MiB job-file limit.
    let big = scratch("big-include.fio");
    std::fs::write(&big, "# padding\n".repeat(120_000)).unwrap();
    let job = job_file(
        "includes-big.fio",
        &format!("[j]\nrw=read\nsize=1m\ninclude {}\n", big.display()),
    );
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("larger than 1048576 bytes"), "{e}");
    // Includes of one small file add up: 4 MiB over all of them.
    let part = scratch("part.fio");
    std::fs::write(&part, "# padding\n".repeat(90_000)).unwrap();
    let many: String = (0..6)
        .map(|_| format!("include {}\n", part.display()))
        .collect();
    let job = job_file(
        "includes-many.fio",
        &format!("[j]\nrw=read\nsize=1m\n{many}"),
    );
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("all job files and includes together"), "{e}");
    // A drive description over 1 MiB.
    let toml = scratch("big-drive.toml");
    std::fs::write(&toml, "# padding\n".repeat(120_000)).unwrap();
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let e = bad_input(&bounded(&["run", &job, "--device", toml.to_str().unwrap()]));
    assert!(e.contains("larger than 1048576 bytes"), "{e}");
}

#[test]
fn a_huge_unknown_key_is_answered_at_once_and_not_echoed() {
    let key = "k".repeat(900_000);
    let job = job_file("huge-key.fio", &format!("[j]\nrw=read\n{key}=1\n"));
    let start = Instant::now();
    let e = bad_input(&run(&job, &[]));
    assert!(
        e.contains("unknown fio option kkkk") && e.contains('…'),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    let toml = scratch("huge-key.toml");
    std::fs::write(&toml, format!("name = \"x\"\n[nand]\n{key} = 1\n")).unwrap();
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let e = bad_input(&bounded(&["run", &job, "--device", toml.to_str().unwrap()]));
    assert!(e.contains("unknown key") && e.contains('…'), "{e}");
}

#[test]
fn jobs_and_clones_are_capped_at_4096() {
    let job = job_file("numjobs.fio", "[j]\nrw=read\nsize=4k\nnumjobs=65536\n");
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("numjobs.fio:4") && e.contains("4096"), "{e}");
    let sections: String = (0..5_000)
        .map(|i| format!("[j{i}]\nrw=read\nsize=4k\n"))
        .collect();
    let job = job_file("sections.fio", &sections);
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("job j4096") && e.contains("4096"), "{e}");
    // Clones of several sections count together.
    let job = job_file(
        "clones.fio",
        "[global]\nrw=read\nsize=4k\n[a]\nnumjobs=4000\n[b]\nnumjobs=97\n",
    );
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("clones.fio:7") && e.contains("job b"), "{e}");
}

#[test]
fn a_closed_loop_depth_beyond_the_host_queue_is_refused() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/sample-disksim.trace"
    );
    let out = bounded(&[
        "replay",
        trace,
        "--format",
        "disksim",
        "--mode",
        "closed",
        "--qd",
        "4294967295",
    ]);
    let e = bad_input(&out);
    assert!(
        e.contains("--qd 4294967295") && e.contains("1048576"),
        "{e}"
    );
    assert!(!e.contains("open-loop"), "{e}");
}

#[test]
fn an_explicit_scale_past_max_memory_is_refused_with_the_largest_that_fits() {
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let out = bounded(&[
        "run",
        &job,
        "--device",
        "solidigm-d5-p5430-30.72tb",
        "--set",
        "sim.scale=0.48",
    ]);
    let e = bad_input(&out);
    assert!(
        e.contains("sim.scale") && e.contains("at most 0.") && e.contains("sim.max_memory"),
        "{e}"
    );
}

#[test]
fn trace_devices_overflowing_ranges_and_non_utf8_lines_are_bad_input() {
    let e = bad_input(&bounded(&["replay", "/dev/zero", "--format", "disksim"]));
    assert!(e.contains("character device"), "{e}");
    let msr = scratch("overflow.msr");
    std::fs::write(
        &msr,
        "128166372003061629,h,0,Write,0,4096,0\n128166372003061630,h,0,Write,18446744073709547520,1048576,0\n",
    )
    .unwrap();
    let e = bad_input(&bounded(&[
        "replay",
        msr.to_str().unwrap(),
        "--format",
        "msr",
    ]));
    assert!(e.contains("overflow.msr:2") && e.contains("2^64"), "{e}");
    let out = bounded(&[
        "replay",
        msr.to_str().unwrap(),
        "--format",
        "msr",
        "--skip-bad-lines",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 malformed lines skipped (first: line 2)")
    );
    let bin = scratch("binary.trace");
    std::fs::write(&bin, b"0 0 0 8 1\n1 0 \xff\xfe 8 1\n").unwrap();
    let e = bad_input(&bounded(&[
        "replay",
        bin.to_str().unwrap(),
        "--format",
        "disksim",
    ]));
    assert!(e.contains("binary.trace:2") && e.contains("UTF-8"), "{e}");
    assert_eq!(e.matches("stream did not contain").count(), 0, "{e}");
}

#[test]
fn huge_durations_are_refused_where_written() {
    for option in ["runtime", "ramp_time", "startdelay"] {
        let job = job_file(
            "long.fio",
            &format!("[j]\nrw=read\nsize=1m\ntime_based=1\n{option}=100000d\n"),
        );
        let e = bad_input(&run(&job, &[]));
        assert!(
            e.contains("long.fio:5") && e.contains("at most 53375d"),
            "{option}: {e}"
        );
    }
}

#[test]
fn fio_expressions_and_exponents_say_what_is_not_supported() {
    for value in ["$ncpus", "(2*4)"] {
        let job = job_file(
            "expr.fio",
            &format!("[j]\nrw=read\nsize=1m\nnumjobs={value}\n"),
        );
        let e = bad_input(&run(&job, &[]));
        assert!(
            e.contains("expressions") && e.contains("not supported"),
            "{value}: {e}"
        );
    }
    let job = job_file(
        "zipf.fio",
        "[j]\nrw=randread\nsize=1m\nrandom_distribution=zipf:1e300\n",
    );
    let e = bad_input(&run(&job, &[]));
    assert!(e.contains("no exponent"), "{e}");
}

#[test]
fn a_log_in_a_missing_directory_is_refused_before_the_run() {
    for option in ["write_bw_log", "write_hist_log", "write_iolog"] {
        let job = job_file(
            "logdir.fio",
            &format!("[j]\nrw=read\nsize=1m\n{option}=no-such-dir/x\n"),
        );
        let e = bad_input(&run(&job, &[]));
        assert!(
            e.contains(&format!("{option}=no-such-dir/x")) && e.contains("does not exist"),
            "{e}"
        );
        assert!(!scratch("no-such-dir").exists());
    }
}

#[test]
fn messages_state_the_value_written() {
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    // The tiny drive with no spare area asked for.
    let preset = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../presets/tiny-test-1gb.toml"
    ))
    .unwrap();
    let toml = scratch("no-spare.toml");
    std::fs::write(
        &toml,
        // The key is gone, so is its provenance entry.
        preset
            .replace("user = \"1GB\"", "spare_factor = 0.0")
            .lines()
            .filter(|l| !l.starts_with("\"capacity.user\" = "))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let e = bad_input(&bounded(&["run", &job, "--device", toml.to_str().unwrap()]));
    assert!(
        e.contains("capacity.spare_factor = 0:") && e.contains("a spare factor of at least 0.0"),
        "{e}"
    );
    let e = bad_input(&bounded(&[
        "run",
        &job,
        "--device",
        "generic-tlc-256gb",
        "--set",
        "power.states=[\"3.0000001W\"]",
    ]));
    assert!(e.contains("whole µW"), "{e}");
}

#[test]
fn a_power_cap_below_one_operation_per_window_is_refused() {
    let job = job_file("small.fio", "[j]\nrw=read\nsize=1m\n");
    let out = bounded(&[
        "run",
        &job,
        "--device",
        "generic-tlc-256gb",
        "--set",
        "power.active_power=1W",
        "--set",
        "power.idle_power=0W",
        "--set",
        "power.states=[\"1.001W\"]",
    ]);
    let e = bad_input(&out);
    assert!(
        e.contains("less than one operation") && e.contains("at least"),
        "{e}"
    );
}

/// A 120 KB `--set` value came back whole from the device's unit parser (240 KB on stderr),
/// and a terminal escape in a value reached the terminal raw from the TOML parser's
/// message: each quotes at most 80 characters, escaped.
#[test]
fn set_values_are_echoed_cut_and_escaped() {
    let job = job_file("set-echo.fio", "[j]\nrw=read\nsize=1m\n");
    let huge = "9".repeat(120_000);
    for value in [huge.clone(), format!("1{huge}us"), format!("\"{huge}\"")] {
        let set = format!("nand.t_prog={value}");
        let e = bad_input(&run(&job, &["--set", &set]));
        assert!(e.contains("nand.t_prog") && e.contains('…'), "{e}");
    }
    let e = bad_input(&run(&job, &["--set", "nand.cell=x\u{1b}[2J\u{9b}"]));
    assert!(!e.contains('\u{1b}') && !e.contains('\u{9b}'), "{e:?}");
    assert!(e.contains("x\\x1b[2J\\u{9b}"), "{e}");
    let e = bad_input(&run(&job, &["--set", &format!("nand.cell={huge}")]));
    assert!(e.contains('…'), "{e}");
}

/// A replay's queues grow with the requests that wait, up to their bounds: a 1,000-line
/// trace on a 4 GiB drive runs in 64 MiB of address space (it needs about 20 MB of RSS, as
/// `run` of a job on the same drive). Sized up front by the host queue's 2^20-request bound,
/// it took about 175 MB before reading a line, and here it would fail to allocate.
#[test]
fn a_small_replay_holds_little_memory() {
    let mut text = String::new();
    let (mut t, mut x) = (0u64, 12345u64);
    for _ in 0..1000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        t += 1000 + (x >> 40) % 100_000;
        let lba = (x >> 20) % 7_000_000;
        text.push_str(&format!(
            "{t} 0 {lba} {} {}\n",
            8 << ((x >> 8) % 3),
            (x >> 4) & 1
        ));
    }
    let trace = scratch("small-replay.trace");
    std::fs::write(&trace, text).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 65536 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_flashlab"))
        .args(["replay", trace.to_str().unwrap(), "--format", "disksim"])
        .args(["--device", "tiny-test-1gb", "--set", "capacity.user=4GiB"])
        .args(["--set", "nand.blocks_per_plane=352"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("replayed 1000 requests")
            || stderr(&out).contains("replayed 1000 requests"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The values every numeric key meets: the edges of a u64 and no number at all.
const HOSTILE: [&str; 3] = ["9223372036854775808", "18446744073709551615", "nan"];

/// The last number of a key's documented range (`count 1-64`, `days (0.01-100000)`), when
/// its unit states one.
fn documented_bound(unit: &str) -> Option<u64> {
    let (_, rest) = unit.split_once('-')?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Whether a key takes a number (a count, a size, a time, a rate, a fraction...), by the
/// first word of its documented unit.
fn numeric(unit: &str) -> bool {
    let first = unit.split([' ', ',', '(']).next().unwrap_or("");
    let words = [
        "count",
        "size",
        "time",
        "fraction",
        "bytes/s",
        "energy",
        "power",
        "blocks",
        "days",
        "°C",
        "°C/W",
        "MT/s",
        "bits",
        "erase",
        "commands/s",
        "index",
        "as",
        "auto",
        "0",
        "0.5-10",
        "1",
    ];
    words.contains(&first)
}

/// Runs `describe` of `device` with `key=value`: exit 0, or exit 2 with a short message;
/// never an abort or a panic. Returns the message.
fn describe_with(device: &str, key: &str, value: &str) -> (Option<i32>, String) {
    let set = format!("{key}={value}");
    // FDP's keys apply to a drive with FDP on.
    // (as many handles as the small drive holds; the key's own --set comes last and wins)
    let on = if key.starts_with("fdp.") && key != "fdp.enabled" {
        vec![
            "--set",
            "buffer.plp=true",
            "--set",
            "slc_cache.static=0",
            "--set",
            "slc_cache.dynamic=false",
            "--set",
            "fdp.enabled=true",
            "--set",
            "fdp.handles=2",
        ]
    } else {
        Vec::new()
    };
    let mut args = vec!["describe", device];
    args.extend(on);
    args.extend(["--set", &set]);
    let out = bounded(&args);
    let e = stderr(&out);
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "{device} --set {set}: {:?} {e:.600}",
        out.status
    );
    assert!(e.len() < 1_000, "{set}: {} bytes of message", e.len());
    (out.status.code(), e)
}

/// Every numeric key of a drive description (the key table `presets/README.md` is made
/// from) at 0, 1, its documented bound and one past it, 2^63, 2^64-1 and NaN: a value the
/// key cannot take is exit 2 naming the key, and nothing aborts or allocates without bound
/// (the runs are under an address-space limit).
#[test]
fn every_numeric_drive_key_at_its_edges_is_taken_or_refused_naming_it() {
    let mut tried = 0;
    for doc in flashlab_device::KEYS {
        if !numeric(doc.unit) || doc.section.is_empty() {
            continue;
        }
        let key = format!("{}.{}", doc.section, doc.key);
        // Zone keys apply to a zoned drive.
        let device = if doc.section == "zns" {
            "wd-ultrastar-dc-zn540-1tb"
        } else {
            "tiny-test-1gb"
        };
        let mut values: Vec<String> = vec!["0".into(), "1".into()];
        let bound = documented_bound(doc.unit);
        if let Some(b) = bound {
            values.push(b.to_string());
        }
        for value in &values {
            describe_with(device, &key, value);
            tried += 1;
        }
        let past: Vec<String> = bound
            .map(|b| (b + 1).to_string())
            .into_iter()
            .chain(HOSTILE.iter().map(|v| v.to_string()))
            .collect();
        for (i, value) in past.into_iter().enumerate() {
            let (code, e) = describe_with(device, &key, &value);
            tried += 1;
            // One past a count's documented range is refused.
            let beyond = i == 0 && bound.is_some() && doc.unit.starts_with("count");
            assert!(!beyond || code == Some(2), "--set {key}={value} was taken");
            if code == Some(2) {
                assert!(
                    e.contains(&key),
                    "--set {key}={value}: the key is not named: {e}"
                );
            }
        }
    }
    assert!(tried > 300, "{tried} values tried");
}

/// A storage system's drive descriptions: every numeric key of each drive preset a system
/// names (a disk's, its zones', a cache's), set through a system file at 0, 1, 2^63, 2^64-1
/// and NaN, is taken or refused with exit 2 naming the key; nothing aborts.
#[test]
fn every_numeric_system_drive_key_at_its_edges_is_taken_or_refused_naming_it() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/systems/drives");
    let job = scratch("edge-r.fio");
    std::fs::write(&job, "[r]\nrw=read\nbs=4k\nsize=4k\n").unwrap();
    let mut tried = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let preset: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let name = preset["name"].as_str().unwrap().to_string();
        let kind = preset["kind"].as_str().unwrap().to_string();
        let mut keys: Vec<(String, String, toml::Value)> = Vec::new();
        for (k, v) in &preset {
            match v {
                toml::Value::Table(t) => keys.extend(
                    t.iter()
                        .map(|(k2, v2)| (format!("{k}.{k2}"), k2.clone(), v2.clone())),
                ),
                _ => keys.push((k.clone(), k.clone(), v.clone())),
            }
        }
        for (dotted, leaf, value) in keys {
            let unit = match &value {
                toml::Value::Integer(_) | toml::Value::Float(_) => Some(String::new()),
                toml::Value::String(s) if s.starts_with(|c: char| c.is_ascii_digit()) => Some(
                    s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
                        .to_string(),
                ),
                _ => None,
            };
            let Some(unit) = unit else { continue };
            for n in ["0", "1"].iter().chain(HOSTILE.iter()) {
                let value = match value {
                    toml::Value::String(_) => format!("\"{n}{unit}\""),
                    _ => n.to_string(),
                };
                // A table is set whole: its other keys as the preset has them.
                let set = match dotted.split_once('.') {
                    Some((table, _)) => {
                        let keys: Vec<String> = preset[table]
                            .as_table()
                            .unwrap()
                            .iter()
                            .map(|(k, v)| match k == &leaf {
                                true => format!("{k} = {value}"),
                                false => format!("{k} = {v}"),
                            })
                            .collect();
                        format!("{table} = {{ {} }}", keys.join(", "))
                    }
                    None => format!("{leaf} = {value}"),
                };
                let sys = scratch(&format!("edge-{name}.toml"));
                std::fs::write(
                    &sys,
                    format!("name = \"edge\"\n[drive.d]\npreset = \"{name}\"\nset = {{ {set} }}\n"),
                )
                .unwrap();
                let out = bounded(&[
                    "run",
                    job.to_str().unwrap(),
                    "--device",
                    sys.to_str().unwrap(),
                    "--output-format",
                    "terse",
                ]);
                let e = stderr(&out);
                let case = format!("{kind} {name}: {set}");
                assert!(
                    matches!(out.status.code(), Some(0 | 2)),
                    "{case}: {:?} {e:.600}",
                    out.status
                );
                assert!(e.len() < 1_000, "{case}: {} bytes of message", e.len());
                // A string value is read by flashlab, which names the key; a bare integer
                // past 64 bits is refused by the TOML reader, which names the line.
                let named = e.contains(&leaf) || (unit.is_empty() && e.contains(".toml:"));
                if out.status.code() == Some(2) && HOSTILE.contains(n) {
                    assert!(named, "{case}: neither the key nor its line is named: {e}");
                }
                tried += 1;
            }
        }
    }
    assert!(tried > 50, "{tried} values tried");
}

/// An SMR disk with 4 KiB zones (3.4 billion of them) grew to 3.5 GB and aborted on a
/// 27 GB allocation; `zns.zone_size` times the zones wrapped past 2^64 into a tiny drive.
/// Both are bad input naming the key.
#[test]
fn zone_counts_and_zoned_sizes_are_bounded_naming_the_key() {
    let sys = scratch("smr-tiny-zones.toml");
    std::fs::write(
        &sys,
        "name = \"smr\"\n[drive.hdd]\npreset = \"wd-ultrastar-dc-hc620-14tb\"\n\
         set = { zoned = { enabled = true, zone_size = \"4KiB\", conventional_zones = 8 } }\n",
    )
    .unwrap();
    let job = scratch("smr-r.fio");
    std::fs::write(&job, "[r]\nrw=read\nbs=4k\nsize=4k\n").unwrap();
    let started = Instant::now();
    let out = bounded(&[
        "run",
        job.to_str().unwrap(),
        "--device",
        sys.to_str().unwrap(),
    ]);
    let e = bad_input(&out);
    assert!(
        e.contains("zoned.zone_size") && e.contains("zones, more than"),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    for size in [
        "9223372036854775808",
        "2305843009213698048+4096",
        "2305843009213702144",
    ] {
        let set = format!("zns.zone_size={size}");
        let out = bounded(&["describe", "wd-ultrastar-dc-zn540-1tb", "--set", &set]);
        let e = bad_input(&out);
        assert!(e.contains("zns.zone_size"), "{set}: {e}");
    }
}

/// A 5,000-character name that starts with terminal escape codes, given to every option
/// that takes a path or a name: each is refused (or fails) with a short message holding no
/// control character. The job path, `--load-state`, the plan, serve's files, a suite's
/// name and `--state-cache` were echoed raw or whole (up to 18 KB).
#[test]
fn every_path_or_name_option_echoes_a_hostile_name_escaped_and_cut() {
    let name = format!("\x1b]0;owned\x07\x1b[2J{}", "n".repeat(5_000));
    let job = scratch("echo.fio");
    std::fs::write(&job, "[w]\nrw=read\nbs=4k\nsize=4k\n").unwrap();
    let job = job.to_str().unwrap();
    let n = name.as_str();
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", n],
        vec!["run", job, "--device", n],
        vec!["run", job, "--output", n],
        vec!["run", job, "--report", n],
        vec!["run", job, "--figures", n],
        vec!["run", job, "--load-state", n],
        vec!["run", job, "--save-state", n],
        vec!["run", job, "--output-format", n],
        vec!["run", job, "--seed", n],
        vec!["fio", n],
        vec!["fio", "--name=x", "--rw=read", "--size=4k", "--output", n],
        vec!["fio", "--name=x", "--rw=read", "--size=4k", "--device", n],
        vec!["describe", n],
        vec!["suite", n],
        vec!["suite", "four-corners", "--device", n],
        vec!["suite", "four-corners", "--report", n],
        vec!["suite", "four-corners", "--outdir", n],
        vec!["suite", "four-corners", "--load-state", n],
        vec!["suite", "four-corners", "--state-cache-max", n],
        vec!["suite", "qos", "--scan-qd", n],
        vec!["replay", n],
        vec!["replay", job, "--format", n],
        vec!["replay", job, "--output", n],
        vec!["serve", "--socket", n],
        vec!["serve", "--backing", n],
        vec!["serve", "--load-state", n],
        vec!["serve", "--stats", n],
        vec!["serve", "--listen", n],
        vec!["sweep", n],
        vec!["sweep", "collect", n],
        vec!["sweep", "collect", ".", "--csv", n],
    ];
    for args in cases {
        let out = Command::new("timeout")
            .arg("30")
            .arg(env!("CARGO_BIN_EXE_flashlab"))
            .args(&args)
            .current_dir(env!("CARGO_TARGET_TMPDIR"))
            .output()
            .unwrap();
        let shown: Vec<&str> = args
            .iter()
            .map(|a| if *a == n { "NAME" } else { a })
            .collect();
        let e = stderr(&out);
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "{shown:?}: {:?} {e:.300}",
            out.status
        );
        assert!(
            !e.contains('\x1b') && !e.contains('\x07'),
            "{shown:?}: raw escape: {e:.300}"
        );
        assert!(
            e.len() < 1_500,
            "{shown:?}: {} bytes of message: {e:.300}",
            e.len()
        );
    }
}

/// `--zipf 1e308` printed its 309 digits back.
#[test]
fn a_huge_number_is_echoed_cut() {
    let out = bounded(&[
        "fio",
        "--name=x",
        "--rw=randread",
        "--size=4k",
        "--random_distribution=zipf:1e308",
    ]);
    let e = bad_input(&out);
    assert!(!e.contains(&"0".repeat(100)), "{e}");
}

/// A zbd job whose block size is above the zone capacity (`bs=2g` on the ZN540's 1,077 MiB
/// zones) did no I/O and exited 0 without a word: no write fits a zone, which fio ends
/// with an error; flashlab refuses the job before it runs, saying why.
#[test]
fn a_zbd_write_larger_than_the_zone_capacity_is_refused() {
    let job = scratch("zbd-big-bs.fio");
    std::fs::write(
        &job,
        "[z]\nrw=write\nzonemode=zbd\nzonesize=2g\nbs=2g\nsize=2z\ndirect=1\n",
    )
    .unwrap();
    let out = bounded(&[
        "run",
        job.to_str().unwrap(),
        "--device",
        "wd-ultrastar-dc-zn540-1tb",
    ]);
    let e = bad_input(&out);
    assert!(e.contains("larger than the zone capacity"), "{e}");
    // Emulated zones are bounded as a drive's are.
    let job = scratch("zbd-tiny-zones.fio");
    std::fs::write(
        &job,
        "[z]\nrw=write\nzonemode=zbd\nzonesize=512\nbs=512\nsize=1m\n",
    )
    .unwrap();
    let e = bad_input(&run(job.to_str().unwrap(), &[]));
    assert!(e.contains("zonesize=512") && e.contains("zones"), "{e}");
}

/// `fdp=2` was taken where `fdp=-1` was refused (fio gives every boolean option the range
/// 0 to 1); `fdp.handles=128` said "a user capacity from 4KiB to 0 B", naming the user
/// capacity where the handles' open blocks are at fault.
#[test]
fn fdp_flags_and_handles_say_what_is_valid() {
    for value in ["2", "-1"] {
        let out = bounded(&[
            "fio",
            "--name=x",
            "--rw=write",
            "--size=1m",
            &format!("--fdp={value}"),
            "--device",
            "tiny-test-1gb",
        ]);
        let e = bad_input(&out);
        assert!(e.contains("0 or 1"), "fdp={value}: {e}");
    }
    let out = bounded(&[
        "describe",
        "tiny-test-1gb",
        "--set",
        "fdp.enabled=true",
        "--set",
        "fdp.handles=128",
    ]);
    let e = bad_input(&out);
    assert!(
        e.contains("fdp.handles = 128") && e.contains("1 to "),
        "{e}"
    );
    assert!(!e.contains("to 0 B"), "{e}");
}

/// A system file whose table `table` holds `key = value` (the other keys it needs set to
/// what a working system has): a RAID 5 of three tiny drives with a host cache, an Optane
/// cache over a hard disk, a link in front of a RAID 0 member, a hard disk, a host-managed
/// SMR disk's zones, a 3D XPoint drive.
fn system_with(table: &str, key: &str, value: &str) -> String {
    let tiny = "[drive.a]\npreset = \"tiny-test-1gb\"\n[drive.b]\npreset = \"tiny-test-1gb\"\n\
                [drive.c]\npreset = \"tiny-test-1gb\"\n";
    // The table's own keys first, `key` last: a key given twice is refused by the reader.
    let pairs = |base: &[(&str, &str)], between: &str| -> String {
        let mut pairs: Vec<String> = base
            .iter()
            .filter(|(k, _)| *k != key)
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        pairs.push(format!("{key} = {value}"));
        pairs.join(between)
    };
    let with = |base: &[(&str, &str)]| pairs(base, ", ");
    let lines = |base: &[(&str, &str)]| pairs(base, "\n");
    let body = match table {
        "raid" => format!(
            "{tiny}[raid.r]\n{}\n",
            lines(&[("level", "5"), ("members", "[\"a\", \"b\", \"c\"]")])
        ),
        "raid.host_cache" => format!(
            "{tiny}[raid.r]\nlevel = 5\nmembers = [\"a\", \"b\", \"c\"]\nhost_cache = {{ {} }}\n",
            with(&[("size", "\"64MiB\"")])
        ),
        "cache" => format!(
            "[drive.o]\npreset = \"intel-optane-memory-16gb\"\n[drive.h]\npreset = \"toshiba-dt01aca200-2tb\"\n[cache.t]\n{}\n",
            lines(&[("cache", "\"o\""), ("backing", "\"h\"")])
        ),
        "link" => format!(
            "{tiny}[raid.r]\nlevel = 0\nmembers = [\"a\", \"b\"]\n[link.l]\n{}\n",
            // A link takes its rate from `kind` or `bandwidth`, one of the two.
            match key {
                "bandwidth" => lines(&[("devices", "[\"b\"]")]),
                _ => lines(&[("devices", "[\"b\"]"), ("kind", "\"pcie-gen4-x8\"")]),
            }
        ),
        "hdd" => format!(
            "[drive.h]\npreset = \"toshiba-dt01aca200-2tb\"\nset = {{ {} }}\n",
            with(&[])
        ),
        "hdd.zoned" => format!(
            "[drive.h]\npreset = \"wd-ultrastar-dc-hc620-14tb\"\nset = {{ zoned = {{ {} }} }}\n",
            with(&[("enabled", "true"), ("zone_size", "\"256MiB\"")])
        ),
        "xpoint" => format!(
            "[drive.x]\npreset = \"intel-optane-memory-16gb\"\nset = {{ {} }}\n",
            with(&[])
        ),
        other => panic!("no system for table {other}"),
    };
    format!("name = \"edge\"\n{body}")
}

/// The values a system key meets, each as TOML: 0, 1, its largest and one past it, 2^63,
/// 2^64-1 and NaN, in the key's own form (a count bare, a size, time or rate as text).
fn system_values(kind: flashlab_system::KeyKind, max: Option<u64>) -> Vec<(String, bool)> {
    use flashlab_system::KeyKind;
    let unit = match kind {
        KeyKind::Count => None,
        KeyKind::Size => Some(""),
        KeyKind::Time => Some("ns"),
        KeyKind::Rate => Some("B/s"),
        KeyKind::Other => return Vec::new(),
    };
    let mut numbers: Vec<(String, bool)> = vec![("0".into(), false), ("1".into(), false)];
    if let Some(m) = max {
        numbers.push((m.to_string(), false));
        numbers.push(((u128::from(m) + 1).to_string(), true));
    }
    numbers.extend(HOSTILE.iter().map(|h| (h.to_string(), true)));
    numbers
        .into_iter()
        .map(|(n, past)| match unit {
            None => (n, past),
            Some(u) => (format!("\"{n}{u}\""), past),
        })
        .collect()
}

/// Every numeric key of a system description's tables and of the hard disk and 3D XPoint
/// drives it names (`flashlab_system::SYSTEM_KEYS`, which a unit test checks against the
/// readers' own field lists): RAID, its host cache, a cache in front of a hard disk, a
/// shared link, the disk's keys and its zones', at 0, 1, its largest and one past it, 2^63,
/// 2^64-1 and NaN. A value run with is taken (the run goes, or stops at the I/O latency
/// limit when the figure leaves the drive too slow to finish one) or refused with exit 2
/// naming the key (or, for a bare integer the TOML reader cannot hold, its line); one past
/// a count's largest is refused; nothing aborts or allocates without bound.
#[test]
fn every_numeric_system_key_at_its_edges_is_taken_or_refused_naming_it() {
    let job = scratch("sys-edge-r.fio");
    std::fs::write(&job, "[r]\nrw=randrw\nbs=4k\nsize=64k\nio_size=64k\n").unwrap();
    // A host-managed disk takes writes at its zones' write pointers only.
    let zoned_job = scratch("sys-edge-w.fio");
    std::fs::write(&zoned_job, "[w]\nrw=write\nbs=4k\nsize=64k\n").unwrap();
    let one_past = |max: Option<u64>| max.map(|m| (u128::from(m) + 1).to_string());
    let mut faults = Vec::new();
    let mut tried = 0;
    for key in flashlab_system::SYSTEM_KEYS {
        for (value, past) in system_values(key.kind, key.max) {
            let text = system_with(key.table, key.key, &value);
            let sys = scratch(&format!("sys-edge-{}-{}.toml", key.table, key.key));
            std::fs::write(&sys, &text).unwrap();
            let job = if key.table == "hdd.zoned" {
                &zoned_job
            } else {
                &job
            };
            let out = bounded(&[
                "run",
                job.to_str().unwrap(),
                "--device",
                sys.to_str().unwrap(),
                "--output-format",
                "terse",
            ]);
            let e = stderr(&out);
            let case = format!("[{}] {} = {value}", key.table, key.key);
            // A legal figure may make a drive too slow for any I/O to finish (a rate of
            // 1 B/s): the run stops at the I/O latency limit with exit 1 (docs/limits.md).
            let too_slow = out.status.code() == Some(1) && e.contains("I/O latency limit");
            let bare = key.kind == flashlab_system::KeyKind::Count;
            let named = e.contains(key.key) || (bare && e.contains(".toml:"));
            let one_past = bare && past && Some(value.as_str()) == one_past(key.max).as_deref();
            let fault = if !matches!(out.status.code(), Some(0 | 2)) && !too_slow {
                Some(format!("{:?} {e:.300}", out.status))
            } else if e.len() >= 1_000 {
                Some(format!("{} bytes of message", e.len()))
            } else if out.status.code() == Some(2) && !named {
                Some(format!("neither the key nor its line is named: {e}"))
            } else if one_past && out.status.code() != Some(2) {
                Some("taken".to_string())
            } else {
                None
            };
            if let Some(f) = fault {
                faults.push(format!("{case}: {f}"));
            }
            tried += 1;
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    assert!(tried > 200, "{tried} values tried");
}

/// The drive keys that hold a list of sizes (`namespaces`): each size at 0, 1, 2^63,
/// 2^64-1 and NaN, and the list at its longest (1,024) and one longer. A value the key
/// cannot take is exit 2 naming the key; nothing aborts.
#[test]
fn every_list_of_sizes_drive_key_at_its_edges_is_taken_or_refused_naming_it() {
    let mut tried = 0;
    for doc in flashlab_device::KEYS
        .iter()
        .filter(|d| d.unit == "list of sizes")
    {
        let key = match doc.section {
            "" => doc.key.to_string(),
            s => format!("{s}.{}", doc.key),
        };
        let one = |size: &str| format!("[\"{size}\"]");
        let many = |n: usize| format!("[{}]", vec!["\"4KiB\""; n].join(","));
        let mut values: Vec<(String, bool)> = ["0", "1"]
            .iter()
            .chain(HOSTILE.iter())
            .map(|v| (one(v), false))
            .collect();
        values.push((many(1024), false));
        values.push((many(1025), true));
        for (value, past) in values {
            let (code, e) = describe_with("tiny-test-1gb", &key, &value);
            assert!(
                !past || code == Some(2),
                "{key} of {} bytes was taken",
                value.len()
            );
            if code == Some(2) {
                assert!(
                    e.contains(&key),
                    "--set {key}={value:.60}: the key is not named: {e}"
                );
            }
            tried += 1;
        }
    }
    assert!(tried >= 7, "{tried} values tried");
}
