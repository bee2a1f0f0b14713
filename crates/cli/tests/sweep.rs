//! `flashlab sweep`: a 48-point plan (3 spare factors × 2 IUs × 2 cell types × 4 queue
//! depths) run on two threads and point by point gives the same results and the same tidy
//! table; bad plans exit 2 naming the plan's line.

mod common;

use std::path::{Path, PathBuf};

use common::{flashlab, stderr, stdout};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const JOB: &str = "; 4 KiB random writes at the plan's queue depth.
[global]
ioengine=libaio
direct=1
time_based=1
runtime=${RUNTIME}
[randwrite]
rw=randwrite
bs=4k
iodepth=${QD}
size=128m
";

const PLAN: &str = r#"job = "rw.fio"
device = "tiny-test-1gb"
[env]
RUNTIME = "20ms"
[axes]
"set.capacity.spare_factor" = [0.1, 0.2, 0.3]
"set.ftl.iu" = ["4KiB", "16KiB"]
"set.nand.cell" = ["tlc", "qlc"]
env.QD = [1, 4, 16, 32]
"#;

fn write_plan(dir: &Path, plan: &str) -> String {
    std::fs::write(dir.join("rw.fio"), JOB).unwrap();
    let path = dir.join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    path.display().to_string()
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn threads_and_single_points_give_the_same_table() {
    let dir = scratch("sweep-48");
    let plan = write_plan(&dir, PLAN);

    let list = flashlab(&["sweep", &plan, "--list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let lines: Vec<_> = stdout(&list).lines().map(String::from).collect();
    assert_eq!(lines.len(), 48);
    assert_eq!(
        lines[5],
        "5\tset.capacity.spare_factor=0.1\tset.ftl.iu=4KiB\tset.nand.cell=qlc\tenv.QD=4"
    );

    let threads = dir.join("threads");
    let o = flashlab(&[
        "sweep",
        &plan,
        "-j",
        "2",
        "--outdir",
        threads.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("48 ran, 0 skipped, 0 failed"),
        "{}",
        stderr(&o)
    );

    let single = dir.join("single");
    for n in 0..48 {
        let o = flashlab(&[
            "sweep",
            &plan,
            "--point",
            &n.to_string(),
            "--outdir",
            single.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "point {n}: {}", stderr(&o));
    }
    let a = files(&threads);
    assert_eq!(a.len(), 48);
    assert!(
        a == files(&single),
        "point results differ between -j 2 and --point"
    );

    let csv_threads = flashlab(&["sweep", "collect", threads.to_str().unwrap()]);
    let csv_single = flashlab(&["sweep", "collect", single.to_str().unwrap()]);
    assert!(csv_threads.status.success(), "{}", stderr(&csv_threads));
    assert_eq!(stdout(&csv_threads), stdout(&csv_single));
    let table = stdout(&csv_threads);
    let header = table.lines().next().unwrap();
    assert_eq!(
        header,
        "point,set.capacity.spare_factor,set.ftl.iu,set.nand.cell,env.QD,job,measure,unit,value"
    );
    // Every point has its IOPS row, found by its settings.
    let iops = |spare: &str, iu: &str, cell: &str, qd: &str| -> f64 {
        let prefix = format!(",{spare},{iu},{cell},{qd},randwrite,write_iops,IOPS,");
        let line = table
            .lines()
            .find(|l| l.contains(&prefix))
            .unwrap_or_else(|| panic!("no row {prefix}"));
        line.rsplit(',').next().unwrap().parse().unwrap()
    };
    assert_eq!(
        table.lines().filter(|l| l.contains(",write_iops,")).count(),
        48
    );
    assert!(iops("0.3", "4KiB", "tlc", "32") > 0.0);
    // One row per point, job and measure: no measure twice.
    let mut keys: Vec<_> = table
        .lines()
        .skip(1)
        .map(|l| l.rsplit_once(',').unwrap().0.rsplit_once(',').unwrap().0)
        .collect();
    let rows = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(
        keys.len(),
        rows,
        "a measure appears twice for one point and job"
    );
    // Each point's file records the build and the resolved configuration.
    let doc: serde_json::Value = serde_json::from_slice(&a[0].1).unwrap();
    assert_eq!(doc["flashlab"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(doc["flashlab"]["commit"]
        .as_str()
        .is_some_and(|c| !c.is_empty()));
    assert_eq!(doc["device_config"]["capacity"]["spare_factor"], 0.1);
    assert_eq!(doc["overrides"]["ftl.iu"], "4KiB");

    // Parquet: the same rows (checked by size here; pandas reads it in the Python tests).
    let pq = dir.join("t.parquet");
    let o = flashlab(&[
        "sweep",
        "collect",
        threads.to_str().unwrap(),
        "--parquet",
        pq.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&pq).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));

    // --resume skips what exists.
    let o = flashlab(&[
        "sweep",
        &plan,
        "--resume",
        "--outdir",
        single.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("0 ran, 48 skipped"), "{}", stderr(&o));
}

#[test]
fn bad_plans_exit_2_naming_the_line() {
    let dir = scratch("sweep-bad");
    let cases: [(&str, &str, &str); 7] = [
        (
            "job = \"rw.fio\"\n[axes]\n\"set.nand.bogus_key\" = [1, 2]\n",
            "line 3",
            "bogus_key",
        ),
        ("job = \"rw.fio\"\n\n[axes]\nenv.QD = []\n", "line 4", "empty"),
        (
            "job = \"rw.fio\"\n[env]\nRUNTIME = \"1ms\"\n[axes]\nenv.QD = [1]\n\"set.ftl.iu\" = [\"4KiB\",\n  \"3KiB\"]\n",
            "line 7",
            "ftl.iu",
        ),
        ("job = \"rw.fio\"\nspeed = 3\n", "line 2", "unknown key"),
        (
            "job = \"rw.fio\"\n[env]\nRUNTIME = \"1ms\"\nQD = 1\n[axes]\ndevice = [\"tiny-test-1gb\", \"no-such-drive\"]\n",
            "line 6",
            "no-such-drive",
        ),
        ("job = \"rw.fio\"\n[axes]\nenv.QD = [1, 2,, 3]\nseed = [1]\n", "line 3", "TOML"),
        // A variable the job file needs and the plan does not give.
        ("job = \"rw.fio\"\n[axes]\nenv.QD = [1]\n", "line 1", "RUNTIME"),
    ];
    for (plan_text, line, word) in cases {
        let plan = write_plan(&dir, plan_text);
        let o = flashlab(&["sweep", &plan, "--list"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{plan_text}\n{err}");
        assert!(
            err.contains(line) && err.contains(word),
            "{plan_text}\n{err}"
        );
    }
    // Run rather than listed, a bad plan is reported once, not again as its own cause.
    let plan = write_plan(&dir, cases[2].0);
    let outdir = dir.join("bad-run");
    let o = flashlab(&[
        "sweep",
        &plan,
        "--point",
        "1",
        "--outdir",
        outdir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("line 7").count(), 1, "{}", stderr(&o));
    // A point beyond the plan, and collect on an empty directory.
    let plan = write_plan(&dir, PLAN);
    let o = flashlab(&["sweep", &plan, "--point", "48"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("0 to 47"), "{}", stderr(&o));
    let empty = scratch("sweep-empty");
    let o = flashlab(&["sweep", "collect", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no point results"), "{}", stderr(&o));
}

/// `--point N` checked every point of the plan (9.4 s and 301 MB for one task of a
/// 10^6-point plan): a point costs its own settings only, so a plan whose other half is
/// invalid runs its valid points and refuses its invalid ones, each naming the line.
#[test]
fn a_point_checks_its_own_settings_not_the_plans() {
    let dir = scratch("sweep-own-point");
    let plan = write_plan(
        &dir,
        "job = \"rw.fio\"\ndevice = \"tiny-test-1gb\"\n[env]\nRUNTIME = \"1ms\"\n[axes]\n\"set.ftl.iu\" = [\"4KiB\", \"3KiB\"]\nenv.QD = { from = 1, to = 1000, step = 1 }\nseed = { from = 1, to = 500, step = 1 }\n",
    );
    let outdir = dir.join("out");
    let run = |point: &str| {
        flashlab(&[
            "sweep",
            &plan,
            "--point",
            point,
            "--outdir",
            outdir.to_str().unwrap(),
        ])
    };
    let o = run("0");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!files(&outdir).is_empty());
    let o = run("500000");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 6") && stderr(&o).contains("ftl.iu"),
        "{}",
        stderr(&o)
    );
}

/// `flashlab sweep collect DIR | head`: when the reader stops reading, collect stops without
/// a panic or an error message: ended by SIGPIPE, as other Unix tools are, or done if the
/// table fit the pipe before it closed.
#[test]
fn collect_into_a_closed_pipe_exits_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let dir = scratch("sweep-pipe");
    let plan = write_plan(
        &dir,
        &PLAN.replace(
            "\"set.capacity.spare_factor\" = [0.1, 0.2, 0.3]\n\"set.ftl.iu\" = [\"4KiB\", \"16KiB\"]\n\"set.nand.cell\" = [\"tlc\", \"qlc\"]\nenv.QD = [1, 4, 16, 32]",
            "env.QD = [1, 2]",
        ),
    );
    let out = dir.join("points");
    let o = flashlab(&["sweep", &plan, "--outdir", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The whole table, to know the pipe is the only difference.
    let whole = flashlab(&["sweep", "collect", out.to_str().unwrap()]);
    assert!(whole.status.success() && stdout(&whole).lines().count() > 2);
    for read_first in [false, true] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(["sweep", "collect", out.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdout.take().unwrap();
        if read_first {
            // `head -c 1`: one byte read, then the pipe closed.
            let mut byte = [0u8; 1];
            let _ = pipe.read(&mut byte);
        }
        drop(pipe);
        let o = child.wait_with_output().unwrap();
        // SIGPIPE is 13 on Linux.
        assert!(
            (o.status.success() || o.status.signal() == Some(13)) && o.stderr.is_empty(),
            "{:?}: {}",
            o.status,
            stderr(&o)
        );
    }
}

fn mkfifo(p: &Path) {
    assert!(std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success());
}

/// `collect` took a point file whose `point` differs from its name, two files of one point
/// and a missing point without a word (exit 0), and exited 1 on bad input; a file, a FIFO or
/// a path under a file as `--outdir` exited 1 after the plan was read. Each is bad input:
/// exit 2, the file named, before any point runs.
#[test]
fn collect_and_outdir_refuse_bad_input_with_exit_2() {
    let dir = scratch("sweep-collect-bad");
    let plan = write_plan(
        &dir,
        "job = \"rw.fio\"\ndevice = \"tiny-test-1gb\"\n[env]\nRUNTIME = \"2ms\"\n[axes]\nenv.QD = [1, 2, 4]\n",
    );
    let out = dir.join("out");
    let o = flashlab(&["sweep", &plan, "--outdir", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let collect = |extra: &[&str]| {
        let mut args = vec!["sweep", "collect", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        flashlab(&args)
    };
    let whole = collect(&[]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let p = |i: u64| out.join(format!("point-{i:06}.json"));
    let refused = |o: &std::process::Output, words: &[&str]| {
        let err = stderr(o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        for w in words {
            assert!(err.contains(w), "{w}: {err}");
        }
        assert!(stdout(o).is_empty(), "{}", stdout(o));
    };

    // A point file whose `point` is not its name's.
    let one = std::fs::read(p(1)).unwrap();
    std::fs::write(p(1), std::fs::read(p(2)).unwrap()).unwrap();
    refused(&collect(&[]), &["point-000001.json", "holds point 2"]);
    std::fs::write(p(1), &one).unwrap();
    // Two files of one point.
    let dup = out.join("point-1.json");
    std::fs::write(&dup, &one).unwrap();
    refused(&collect(&[]), &["point-1.json", "are both point 1"]);
    std::fs::remove_file(&dup).unwrap();
    // A missing point below the highest: refused, or collected with a warning.
    std::fs::remove_file(p(1)).unwrap();
    refused(&collect(&[]), &["lacks 1 point", "point-000001.json"]);
    let partial = collect(&["--allow-missing"]);
    assert!(partial.status.success(), "{}", stderr(&partial));
    assert!(
        stderr(&partial).contains("1 point missing (1)"),
        "{}",
        stderr(&partial)
    );
    assert!(!stdout(&partial).contains("\n1,"), "{}", stdout(&partial));
    std::fs::write(p(1), &one).unwrap();
    // Not a point result.
    std::fs::write(p(1), "{\"point\": ").unwrap();
    refused(&collect(&[]), &["point-000001.json", "not a point result"]);
    std::fs::write(p(1), &one).unwrap();
    // A file as the directory.
    let o = flashlab(&["sweep", "collect", p(0).to_str().unwrap()]);
    refused(&o, &["point-000000.json", "not a directory"]);

    // Outputs of collect by the rule of every file written: a FIFO or a directory refused
    // before the directory is read, and nothing made beside them.
    let fifo = dir.join("table.csv");
    mkfifo(&fifo);
    refused(
        &collect(&["--csv", fifo.to_str().unwrap()]),
        &["--csv", "a FIFO"],
    );
    refused(
        &collect(&["--parquet", dir.to_str().unwrap()]),
        &["--parquet", "a directory"],
    );
    let csv = dir.join("t.csv");
    let o = collect(&["--csv", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), stdout(&whole));

    // --outdir: a regular file, a FIFO, a path under a file; exit 2 before any point runs.
    let file = dir.join("a-file");
    std::fs::write(&file, "mine").unwrap();
    let under = file.join("sub");
    for (bad, word) in [
        (&file, "a regular file"),
        (&fifo, "a FIFO"),
        (&under, "cannot make the directory"),
    ] {
        let o = flashlab(&["sweep", &plan, "--outdir", bad.to_str().unwrap()]);
        refused(&o, &["--outdir", word]);
        assert!(!stderr(&o).contains("point 0"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

/// A plan of two drives (spare factors) × two queue depths whose points start from a
/// preconditioned drive: the job runs at steady state (garbage collection under way, so the
/// job's own write amplification is well above 1 and falls with spare area), each drive is
/// preconditioned once (the cache holds its state after the first point, and the second
/// loads it), and the results are the same with the cache warm, cold or off.
#[test]
fn preconditioned_points_run_at_steady_state_and_reuse_the_cache() {
    let dir = scratch("sweep-precondition");
    std::fs::write(
        dir.join("rw.fio"),
        "[w]\nrw=randwrite\nbs=4k\niodepth=${QD}\nio_size=64m\n",
    )
    .unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "job = \"rw.fio\"\ndevice = \"tiny-test-1gb\"\n[precondition]\nmax-rounds = 8\n\
         [axes]\n\"set.capacity.spare_factor\" = [0.1, 0.3]\nenv.QD = [1, 32]\n",
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    let cache = dir.join("cache");
    let run = |out: &str, cache_args: &[&str]| {
        let outdir = dir.join(out);
        let mut args = vec![
            "sweep",
            plan,
            "-j",
            "1",
            "--outdir",
            outdir.to_str().unwrap(),
        ];
        args.extend_from_slice(cache_args);
        let o = flashlab(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        outdir
    };
    let cold = run("cold", &["--state-cache", cache.to_str().unwrap()]);
    let entries = cache_entries(&cache);
    assert!(entries > 0, "the cache kept no drive");
    let warm = run("warm", &["--state-cache", cache.to_str().unwrap()]);
    assert_eq!(
        cache_entries(&cache),
        entries,
        "a warm run preconditioned again"
    );
    let off = run("off", &["--no-state-cache"]);
    assert_eq!(files(&cold), files(&warm));
    assert_eq!(files(&cold), files(&off));

    let table = flashlab(&["sweep", "collect", cold.to_str().unwrap()]);
    assert!(table.status.success(), "{}", stderr(&table));
    let value = |point: &str, measure: &str| -> f64 {
        stdout(&table)
            .lines()
            .find(|l| l.starts_with(&format!("{point},")) && l.contains(&format!(",{measure},")))
            .and_then(|l| l.rsplit(',').next())
            .unwrap_or_else(|| panic!("no {measure} of point {point}"))
            .parse()
            .unwrap()
    };
    // Points 0 and 1: spare factor 0.1; 2 and 3: 0.3.
    let (tight, roomy) = (
        value("1", "run_write_amplification"),
        value("3", "run_write_amplification"),
    );
    assert!(
        tight > 2.0 && roomy > 1.1 && tight > roomy * 1.5,
        "{tight} {roomy}"
    );
    assert!(value("3", "write_iops") > value("1", "write_iops") * 1.5);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cold.join("point-000001.json")).unwrap()).unwrap();
    assert_eq!(doc["precondition"]["suite"], "precondition");
    assert_eq!(doc["precondition"]["options"]["max-rounds"], "8");
    assert!(
        doc["precondition"]["steady_round"].as_u64().is_some(),
        "{}",
        doc["precondition"]
    );
}

/// Points that start from the same preconditioned drive (they differ only in the job's
/// queue depth), run at once on two threads with a cold cache: one preconditions while the
/// other waits for its entry and loads it, rather than both preconditioning the same drive.
#[test]
fn concurrent_points_on_one_drive_precondition_it_once() {
    let (plan, cache, outdir) = one_drive_two_depths("sweep-precondition-once", "32m", 8);
    let o = flashlab(&[
        "sweep",
        plan.to_str().unwrap(),
        "-j",
        "2",
        "--outdir",
        outdir.to_str().unwrap(),
        "--state-cache",
        cache.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let loaded = err.matches("preconditioning from the state cache").count();
    let entries = cache_entries(&cache);
    // Each of the precondition's checkpoints was stored by one point and loaded by the other.
    assert!(
        entries > 0 && loaded == entries,
        "{entries} entries, {loaded} loads: {err}"
    );
}

/// A plan of two points on one preconditioned tiny drive (random writes of `io_size` at QD1
/// and QD32, `max_rounds` precondition rounds) in a scratch directory named `name`: the
/// plan's path, an emptied cache directory and the output directory.
fn one_drive_two_depths(name: &str, io_size: &str, max_rounds: u32) -> (PathBuf, PathBuf, PathBuf) {
    let dir = scratch(name);
    std::fs::write(
        dir.join("rw.fio"),
        format!("[w]\nrw=randwrite\nbs=4k\niodepth=${{QD}}\nio_size={io_size}\n"),
    )
    .unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "job = \"rw.fio\"\ndevice = \"tiny-test-1gb\"\n[precondition]\n\
             max-rounds = {max_rounds}\n[axes]\nenv.QD = [1, 32]\n"
        ),
    )
    .unwrap();
    let cache = dir.join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    (plan, cache, dir.join("out"))
}

/// The precondition cache's entries in `dir` (not their lock files).
fn cache_entries(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "state")
        })
        .count()
}

/// Two processes (two `flashlab sweep --point` runs, as GNU parallel starts them) on points
/// of the same preconditioned drive, with a cold cache: one preconditions while the other
/// waits for the entry's file lock and loads what the first stored.
#[test]
fn two_processes_on_one_drive_precondition_it_once() {
    let (plan, cache, outdir) = one_drive_two_depths("sweep-precondition-processes", "8m", 5);
    let spawn = |point: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args([
                "sweep",
                plan.to_str().unwrap(),
                "--point",
                point,
                "--outdir",
            ])
            .arg(&outdir)
            .arg("--state-cache")
            .arg(&cache)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("0"), spawn("1"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(b.status.success(), "{}", stderr(&b));
    let loads = |o: &std::process::Output| {
        stderr(o)
            .matches("preconditioning from the state cache")
            .count()
    };
    let entries = cache_entries(&cache);
    // Each checkpoint was stored by one process and loaded by the other.
    assert!(
        entries > 0 && loads(&a) + loads(&b) == entries,
        "{entries} entries\n{}\n{}",
        stderr(&a),
        stderr(&b)
    );
}

/// `[precondition]` takes the precondition suite's options, checked as the command checks
/// them: a wrong one exits 2 naming the plan's line, the option and what is valid.
#[test]
fn bad_precondition_options_name_the_line_and_the_option() {
    let dir = scratch("sweep-bad-precondition");
    let cases: [(&str, &[&str]); 4] = [
        (
            "[precondition]\nround = \"25%\"\nmax-rounds = 2\n",
            &["line 7", "max-rounds", "from 5"],
        ),
        (
            "[precondition]\nrunds = 3\n",
            &[
                "line 6",
                "unknown option 'runds' for suite precondition",
                "max-rounds",
            ],
        ),
        (
            "[precondition]\ndepths = \"1,2\"\n",
            &["line 6", "--depths does not apply to suite precondition"],
        ),
        (
            "[precondition]\nseed = 3\n",
            &["line 6", "the point's seed"],
        ),
    ];
    for (tail, words) in cases {
        let plan = write_plan(
            &dir,
            &format!("job = \"rw.fio\"\n[env]\nRUNTIME = \"1ms\"\nQD = 1\n{tail}"),
        );
        let o = flashlab(&["sweep", &plan, "--list"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{tail}\n{err}");
        for w in words {
            assert!(err.contains(w), "{tail}: no {w:?} in\n{err}");
        }
    }
}

/// The first sweep of docs/sweeps.md is the example in jobs/sweeps/: each file the page
/// shows is the repository's, byte for byte.
#[test]
fn the_sweeps_page_shows_the_example_files() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let page = std::fs::read_to_string(repo.join("docs/sweeps.md")).unwrap();
    for name in ["spare-cell.toml", "randwrite-4k.fio", "small-drive.toml"] {
        let marker = format!("<!-- docs: file {name} -->\n");
        let at = page
            .find(&marker)
            .unwrap_or_else(|| panic!("the page shows no {name}"));
        let block = &page[at + marker.len()..];
        let body = block.split_once('\n').unwrap().1;
        let shown = &body[..body.find("```").unwrap()];
        let file = std::fs::read_to_string(repo.join("jobs/sweeps").join(name)).unwrap();
        assert_eq!(
            shown, file,
            "docs/sweeps.md's {name} is not jobs/sweeps/{name}"
        );
    }
}

/// Points missing after the highest one went unseen (exit 0, a table short of them): the
/// point files record their plan's size, so `collect` refuses the directory naming the
/// first missing point, `--allow-missing` collects the rest with a warning listing them,
/// and a point past the plan's size or of a plan of another size is refused.
#[test]
fn collect_finds_points_missing_after_the_highest() {
    let dir = scratch("sweep-collect-tail");
    let plan = write_plan(
        &dir,
        "job = \"rw.fio\"\ndevice = \"tiny-test-1gb\"\n[env]\nRUNTIME = \"2ms\"\n[axes]\nenv.QD = [1, 2, 4, 8]\n",
    );
    let out = dir.join("out");
    let o = flashlab(&["sweep", &plan, "--outdir", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let collect = |extra: &[&str]| {
        let mut args = vec!["sweep", "collect", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        flashlab(&args)
    };
    let p = |i: u64| out.join(format!("point-{i:06}.json"));
    let last = std::fs::read(p(3)).unwrap();
    std::fs::remove_file(p(3)).unwrap();
    std::fs::remove_file(p(2)).unwrap();
    let o = collect(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("lacks 2 points of its plan's 4 (the first: point-000002.json)"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());
    let partial = collect(&["--allow-missing"]);
    assert!(partial.status.success(), "{}", stderr(&partial));
    assert!(
        stderr(&partial).contains("2 points missing (2, 3)"),
        "{}",
        stderr(&partial)
    );
    assert!(stdout(&partial).contains("\n1,"), "{}", stdout(&partial));
    // A point past the plan's size: refused, naming the file.
    let text = String::from_utf8(last).unwrap();
    std::fs::write(
        out.join("point-000009.json"),
        text.replacen("\"point\": 3", "\"point\": 9", 1)
            .replacen("\"point\":3", "\"point\":9", 1),
    )
    .unwrap();
    let o = collect(&["--allow-missing"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("point-000009.json: point 9 is past its plan's 4 points"),
        "{}",
        stderr(&o)
    );
}
