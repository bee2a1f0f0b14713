//! `flashlab suite --report`: the HTML report as a reader gets it. A short qos run on two tiny
//! drives writes the page; headless Chromium opens it, and the test checks that the page
//! logged nothing to the console (no script error, nothing blocked by its
//! Content-Security-Policy) and that every chart drew every point the suite measured.
//!
//! Without a Chromium on PATH the browser test prints a notice and passes, unless
//! `FLASHLAB_REQUIRE_BROWSER=1` (CI sets it), when it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{flashlab, stderr, stdout};
use serde_json::Value;

const DEVICE: &str = "tiny-test-1gb";
/// Long enough for a cold browser start on a loaded machine, short enough to notice a hang.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// A second tiny drive whose name needs escaping everywhere it appears.
fn odd_device() -> (String, String) {
    let name = r#"tiny <b> & "c""#;
    let text = include_str!("../../../presets/tiny-test-1gb.toml")
        .replace("name = \"tiny-test-1gb\"", r#"name = "tiny <b> & \"c\"""#)
        .replace("t_read = \"50us\"", "t_read = \"70us\"");
    assert!(
        text.contains("70us") && text.contains("<b>"),
        "preset changed"
    );
    let path = scratch("report-odd-device.toml");
    std::fs::write(&path, text).unwrap();
    (name.to_string(), path.to_string_lossy().into_owned())
}

/// Run a short qos suite on `devices`, writing the report to `report`; the suite's JSON.
fn qos_with_report(devices: &[&str], report: &Path) -> Value {
    let report = report.to_string_lossy().into_owned();
    let mut args = vec!["suite", "qos", "--depths", "1,8", "--runtime", "200ms"];
    for d in devices {
        args.extend(["--device", d]);
    }
    args.extend(["--report", &report, "--output-format", "json"]);
    let out = flashlab(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("suite JSON parses")
}

/// The points a chart or figure of the JSON can draw: finite, and positive on a log axis
/// (x only when its positions are not named).
fn drawable_points(c: &Value) -> usize {
    let named = c["x_ticks"].as_array().is_some_and(|t| !t.is_empty());
    let (xlog, ylog) = (c["x"]["log"] == true && !named, c["y"]["log"] == true);
    c["series"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["points"].as_array().unwrap())
        .filter(|p| match (p[0].as_f64(), p[1].as_f64()) {
            (Some(x), Some(y)) => (!xlog || x > 0.0) && (!ylog || y > 0.0),
            _ => false,
        })
        .count()
}

/// The report's figures (`figures` of the suite JSON) by id, with the points each can draw.
fn figure_points(doc: &Value) -> Vec<(String, usize)> {
    doc["figures"]
        .as_array()
        .expect("the suite JSON lists its figures")
        .iter()
        .map(|f| (f["id"].as_str().unwrap().to_string(), drawable_points(f)))
        .collect()
}

/// Per chart id (first-seen order), the points a chart can draw: finite, and positive on a
/// log axis, summed over the devices; then the report's figures.
fn expected_points(doc: &Value) -> Vec<(String, usize)> {
    let mut out = chart_points(doc);
    out.extend(figure_points(doc));
    out
}

/// [`expected_points`] of the suites' own charts only.
fn chart_points(doc: &Value) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    // A chart's series with the same points as one already drawn are drawn once (the
    // page names them together), across the devices of the page.
    let mut drawn: Vec<(String, &Value)> = Vec::new();
    for d in doc["devices"].as_array().unwrap() {
        for c in d["charts"].as_array().unwrap() {
            let (xlog, ylog) = (c["x"]["log"] == true, c["y"]["log"] == true);
            let id = c["id"].as_str().unwrap().to_string();
            let mut fresh = Vec::new();
            for s in c["series"].as_array().unwrap() {
                let points = &s["points"];
                let empty = points.as_array().is_none_or(|p| p.is_empty());
                if empty || !drawn.iter().any(|(i, p)| *i == id && *p == points) {
                    drawn.push((id.clone(), points));
                    fresh.push(s);
                }
            }
            let n = fresh
                .iter()
                .flat_map(|s| s["points"].as_array().unwrap())
                .filter(|p| match (p[0].as_f64(), p[1].as_f64()) {
                    (Some(x), Some(y)) => (!xlog || x > 0.0) && (!ylog || y > 0.0),
                    _ => false,
                })
                .count();
            match out.iter_mut().find(|(i, _)| *i == id) {
                Some((_, total)) => *total += n,
                None => out.push((id, n)),
            }
        }
    }
    out
}

/// `html` without the build's commit after the version ("Made by flashlab 0.1.0 (commit
/// abc) on ..."): the commit changes with every build, the rest of the line does not.
fn without_commit(html: &str) -> String {
    match html.find(" (commit ") {
        Some(at) => match html[at..].find(')') {
            Some(end) => format!("{}{}", &html[..at], &html[at + end + 1..]),
            None => html.to_string(),
        },
        None => html.to_string(),
    }
}

fn find_browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// The browser to check reports in; without one, a notice and `None` (the test passes),
/// unless `FLASHLAB_REQUIRE_BROWSER=1`, when it fails.
fn browser_or_skip() -> Option<PathBuf> {
    let browser = find_browser();
    if browser.is_none() {
        if std::env::var("FLASHLAB_REQUIRE_BROWSER").as_deref() == Ok("1") {
            panic!("FLASHLAB_REQUIRE_BROWSER=1 but no chromium on PATH");
        }
        eprintln!("SKIPPED: no chromium on PATH; the HTML report was not checked in a browser");
    }
    browser
}

/// Load `page` in headless Chromium: the DOM after its scripts ran, and the browser's log.
fn load_in_browser(browser: &Path, page: &Path) -> (String, String) {
    // Tests run on parallel threads of one process: each load gets its own profile and
    // files (a profile two browsers share makes the second exit with "profile in use").
    static LOADS: AtomicUsize = AtomicUsize::new(0);
    let id = format!(
        "{}-{}",
        std::process::id(),
        LOADS.fetch_add(1, Ordering::Relaxed)
    );
    let profile = scratch(&format!("report-chromium-profile-{id}"));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let dom_path = scratch(&format!("report-dom-{id}.html"));
    let log_path = scratch(&format!("report-browser-{id}.log"));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&dom_path).unwrap())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .expect("the browser starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the browser did not finish within {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let dom = std::fs::read_to_string(&dom_path).unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    let _ = std::fs::remove_file(&dom_path);
    let _ = std::fs::remove_file(&log_path);
    assert!(status.success(), "browser exited with {status}: {log}");
    (dom, log)
}

#[test]
fn report_opens_in_a_browser_without_errors_and_draws_every_point() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let (odd_name, odd_path) = odd_device();
    let page = scratch("report-qos.html");
    let doc = qos_with_report(&[DEVICE, &odd_path], &page);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("tiny &lt;b&gt; &amp; &quot;c&quot;"));
    assert!(!html.contains(&odd_name), "device name not escaped");

    let (dom, log) = load_in_browser(&browser, &page);
    let console: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");

    let at = dom
        .find("id=\"chart-check\"")
        .expect("check output in the DOM");
    let tag_start = dom[..at].rfind('<').unwrap();
    let tag_end = at + dom[at..].find('>').unwrap();
    let tag = &dom[tag_start..tag_end];
    let body = &dom[tag_end + 1..tag_end + dom[tag_end..].find("</output>").unwrap()];
    assert!(tag.contains("data-status=\"ok\""), "{tag}\n{body}");

    let expected = expected_points(&doc);
    // qos draws the steady rounds, IOPS and read latency against depth; the report adds
    // latency against IOPS per depth, the latency percentiles and their distribution.
    let ids: Vec<&str> = expected.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "steady-rounds",
            "qos-iops",
            "qos-read-latency",
            "latency-iops-4k-randrw-70-30",
            "latency-percentiles-at-each-queue-depth-4k-randrw-70-30",
            "latency-cdf-at-each-queue-depth-4k-randrw-70-30"
        ]
    );
    assert!(
        tag.contains(&format!("data-charts=\"{}\"", expected.len())),
        "{tag}"
    );
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{body}");
    for (id, n) in &expected {
        assert!(*n > 0, "{id} has nothing to draw");
        let want = format!("{id} {n}/{n} ok");
        assert!(lines.contains(&want.as_str()), "{want} not in {body}");
    }
    // 2 devices × 3 series × 2 depths on the IOPS chart; 2 devices × (mean, p99) × 2
    // depths against IOPS; a percentile line per device and depth, the median and 4 tail
    // percentiles each.
    assert!(lines.contains(&"qos-iops 12/12 ok"), "{body}");
    assert!(
        lines.contains(&"latency-iops-4k-randrw-70-30 8/8 ok"),
        "{body}"
    );
    assert!(
        lines.contains(&"latency-percentiles-at-each-queue-depth-4k-randrw-70-30 20/20 ok"),
        "{body}"
    );
    // The page names the slice only where there is one.
    assert!(!html.contains("simulated as a slice"));
}

#[test]
fn report_is_deterministic_and_an_unwritable_path_is_named() {
    // The same command (its report path included, which the summary shows) twice.
    let path = scratch("report-a.html");
    qos_with_report(&[DEVICE], &path);
    let a = std::fs::read(&path).unwrap();
    qos_with_report(&[DEVICE], &path);
    let b = std::fs::read(&path).unwrap();
    assert!(a == b, "two runs gave different reports");

    let bad = scratch("no-such-dir/report.html");
    let bad_s = bad.to_string_lossy().into_owned();
    let out = flashlab(&[
        "suite",
        "precondition",
        "--device",
        DEVICE,
        "--max-rounds",
        "5",
        "--report",
        &bad_s,
    ]);
    // Checked before the work: bad input, and nothing ran.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--report") && err.contains(&bad_s) && !err.contains("preconditioning"),
        "{err}"
    );
}

/// A report carries a date only when `SOURCE_DATE_EPOCH` gives one (the reproducible-builds
/// convention), shown in UTC as ISO 8601; without it the same command gives the same bytes.
/// A value that is not whole seconds is refused before the run (exit 2).
#[test]
fn a_report_is_dated_by_source_date_epoch_only() {
    let dir = scratch("dated-report");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let job = dir.join("w.fio");
    std::fs::write(&job, "[w]\nrw=randwrite\nbs=4k\nsize=8m\n").unwrap();
    let page = dir.join("run.html");
    let run = |epoch: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_flashlab"));
        cmd.args(["run", job.to_str().unwrap(), "--device", DEVICE, "--report"])
            .arg(&page)
            .env_remove("SOURCE_DATE_EPOCH");
        if let Some(e) = epoch {
            cmd.env("SOURCE_DATE_EPOCH", e);
        }
        let out = cmd.output().unwrap();
        let html = std::fs::read_to_string(&page).unwrap_or_default();
        let _ = std::fs::remove_file(&page);
        (out, html)
    };
    let (out, undated) = run(None);
    assert!(out.status.success(), "{}", stderr(&out));
    let undated = without_commit(&undated);
    let made = format!("Made by flashlab {} with:", env!("CARGO_PKG_VERSION"));
    assert!(undated.contains(&made), "{undated}");
    let (out, dated) = run(Some("951782400"));
    assert!(out.status.success(), "{}", stderr(&out));
    let dated = without_commit(&dated);
    let made = format!(
        "Made by flashlab {} on 2000-02-29T00:00:00Z with:",
        env!("CARGO_PKG_VERSION")
    );
    assert!(dated.contains(&made), "{dated}");
    assert_eq!(dated.replace(" on 2000-02-29T00:00:00Z", ""), undated);
    let (out, none) = run(Some("yesterday"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("SOURCE_DATE_EPOCH=yesterday: expected whole seconds"));
    assert!(
        none.is_empty() && stdout(&out).is_empty(),
        "{}",
        stdout(&out)
    );
}

/// The page's check result (`data-status`, one `id drawn/expected ok` line per chart) after
/// Chromium loaded it, with no console message allowed.
fn browser_check(browser: &Path, page: &Path) -> (String, Vec<String>) {
    let (dom, log) = load_in_browser(browser, page);
    let console: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let at = dom
        .find("id=\"chart-check\"")
        .expect("check output in the DOM");
    let tag_start = dom[..at].rfind('<').unwrap();
    let tag_end = at + dom[at..].find('>').unwrap();
    let body = &dom[tag_end + 1..tag_end + dom[tag_end..].find("</output>").unwrap()];
    (
        dom[tag_start..tag_end].to_string(),
        body.lines().map(String::from).collect(),
    )
}

#[test]
fn app_profiles_report_draws_every_curve() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let page = scratch("report-app-profiles.html");
    let out = flashlab(&[
        "suite",
        "app-profiles",
        "--device",
        DEVICE,
        "--profiles",
        "sql,oracle-80-20,vdi-full-login,vdi-linked-boot,iometer-fileserver",
        "--loads",
        "1,4,16",
        "--runtime",
        "200ms",
        "--round",
        "200ms",
        "--max-rounds",
        "5",
        "--report",
        page.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let expected = expected_points(&doc);
    let ids: Vec<&str> = chart_points(&doc)
        .iter()
        .map(|(id, _)| id.as_str())
        .collect::<Vec<_>>()
        .into_iter()
        .map(|id| expected.iter().find(|(e, _)| e == id).unwrap().0.as_str())
        .collect();
    // A latency-against-IOPS curve per profile: its mean and 99th percentile at every load
    // the suite's own chart has (at least two).
    let curves = figure_points(&doc)
        .into_iter()
        .filter(|(id, n)| {
            let own = id
                .strip_prefix("latency-iops-")
                .and_then(|rest| rest.split("-mixed-sizes").next())
                .and_then(|profile| {
                    expected
                        .iter()
                        .find(|(e, _)| profile.starts_with(e.trim_start_matches("app-profiles-")))
                });
            own.is_some_and(|(_, m)| *m >= 2 && *n == 2 * m)
        })
        .count();
    assert_eq!(curves, 5, "{expected:?}");
    assert_eq!(
        ids,
        [
            "steady-rounds",
            "app-profiles-sql",
            "app-profiles-oracle",
            "app-profiles-vdi-full",
            "app-profiles-vdi-linked",
            "app-profiles-iometer"
        ]
    );
    let (tag, lines) = browser_check(&browser, &page);
    assert!(tag.contains("data-status=\"ok\""), "{tag}\n{lines:#?}");
    assert_eq!(lines.len(), expected.len(), "{lines:#?}");
    for (id, n) in &expected {
        assert!(*n >= 2, "{id}: a curve has at least two points");
        let want = format!("{id} {n}/{n} ok");
        assert!(lines.contains(&want), "{want} not in {lines:#?}");
    }
}

/// The wear-out and thermal charts: an endurance run to read-only (power-off retention on a
/// log axis) and a sustained write on a drive that throttles (its temperature per interval).
#[test]
fn wear_out_and_thermal_reports_draw_every_point() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let runs: [(&str, &[&str], &str); 2] = [
        (
            "report-endurance.html",
            &[
                "suite",
                "endurance",
                "--device",
                DEVICE,
                "--set",
                "nand.pe_cycles=30",
                "--set",
                "nand.bad_block_reserve=0.03",
                "--set",
                "capacity.user=900MB",
                "--workload",
                "random-4k",
                "--until-read-only",
            ],
            "endurance-retention",
        ),
        (
            "report-thermal.html",
            &[
                "suite",
                "sustained-write",
                "--device",
                DEVICE,
                "--set",
                "power.idle_power=0.05W",
                "--set",
                "power.active_power=0.05W",
                "--set",
                "power.thermal_resistance_c_per_w=100",
                "--set",
                "power.thermal_time_constant=1s",
                "--set",
                "power.throttle_c=50",
                "--set",
                "power.throttle_power=0.15W",
            ],
            "sustained-temperature",
        ),
    ];
    for (file, args, chart) in runs {
        let page = scratch(file);
        let mut args = args.to_vec();
        let page_s = page.to_string_lossy().into_owned();
        args.extend(["--report", &page_s, "--output-format", "json"]);
        let out = flashlab(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let expected = expected_points(&doc);
        assert!(
            expected.iter().any(|(id, n)| id == chart && *n >= 2),
            "{expected:?}"
        );
        let (tag, lines) = browser_check(&browser, &page);
        assert!(tag.contains("data-status=\"ok\""), "{tag}\n{lines:#?}");
        assert_eq!(lines.len(), expected.len(), "{lines:#?}");
        for (id, n) in &expected {
            let want = format!("{id} {n}/{n} ok");
            assert!(lines.contains(&want), "{want} not in {lines:#?}");
        }
    }
}

/// A page to write, the suite's arguments, and the bar figures it must draw with their bars.
type BarRun = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, usize)],
);

/// The grouped bars: four corners (sequential and random, read and write per drive) and the
/// desktop tests (read and write figures), each bar a counted point; the suite's own line
/// across the desktop tests is not on the page.
#[test]
fn four_corners_and_desktop_reports_draw_every_bar() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let runs: [BarRun; 2] = [
        (
            "report-four-corners.html",
            &[
                "suite",
                "four-corners",
                "--runtime",
                "200ms",
                "--round",
                "200ms",
                "--max-rounds",
                "6",
            ],
            // 2 drives × (read, write).
            &[
                ("four-corners-sequential-128-kib", 4),
                ("four-corners-random-4-kib", 4),
            ],
        ),
        (
            "report-desktop.html",
            &["suite", "desktop", "--runtime", "100ms", "--runs", "2"],
            // 2 drives × 4 tests.
            &[("desktop-read", 8), ("desktop-write", 8)],
        ),
    ];
    let (_, odd_path) = odd_device();
    for (file, args, bars) in runs {
        let page = scratch(file);
        let page_s = page.to_string_lossy().into_owned();
        let mut args = args.to_vec();
        args.extend(["--device", DEVICE, "--device", &odd_path]);
        args.extend(["--report", &page_s, "--output-format", "json"]);
        let out = flashlab(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let figures = figure_points(&doc);
        for &(id, n) in bars {
            assert!(
                figures.iter().any(|(f, m)| f == id && *m == n),
                "{id}: {n} bars expected in {figures:?}"
            );
            let kind = doc["figures"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["id"] == *id)
                .map(|f| f["kind"].clone());
            assert_eq!(kind, Some(Value::from("bars")));
        }
        let mut expected = expected_points(&doc);
        expected.retain(|(id, _)| id != "desktop-tests");
        let (tag, lines) = browser_check(&browser, &page);
        assert!(tag.contains("data-status=\"ok\""), "{tag}\n{lines:#?}");
        assert_eq!(lines.len(), expected.len(), "{lines:#?}");
        for (id, n) in &expected {
            let want = format!("{id} {n}/{n} ok");
            assert!(lines.contains(&want), "{want} not in {lines:#?}");
        }
    }
}

/// The desktop bars are the table: each bar is its test's figure in the results, the tests
/// in the suite's order on both charts, and the test file written first is not a run of
/// SEQ1M Q1T1.
#[test]
fn desktop_bars_equal_the_table_in_the_suites_order() {
    let out = flashlab(&[
        "suite",
        "desktop",
        "--device",
        DEVICE,
        "--runtime",
        "50ms",
        "--runs",
        "2",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let results = &doc["devices"][0]["results"];
    let order = ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"];
    for dir in ["read", "write"] {
        let id = format!("desktop-{dir}");
        let fig = doc["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id.as_str())
            .unwrap_or_else(|| panic!("no {id} in {doc}"));
        let ticks: Vec<&str> = fig["x_ticks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t[1].as_str().unwrap())
            .collect();
        assert_eq!(ticks, order, "{id}");
        let bars = fig["series"][0]["points"].as_array().unwrap();
        for (i, test) in order.iter().enumerate() {
            let key = format!(
                "{}_{dir}_bw_bytes_per_s",
                test.to_lowercase().replace(' ', "_")
            );
            assert_eq!(bars[i][1], results[&key], "{id} {test}: bar against {key}");
        }
    }
}

/// The page reads as a review: the summary (what ran, on what, with which flashlab and
/// command) before the first chart, the charts before the tables, every result by key last
/// and folded; percentile legends as "p99.9"; the percentile chart starts at the median.
/// Width and height of a PNG file, from its IHDR chunk, after checking its signature.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.len() > 33, "{} bytes: not a PNG", png.len());
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG signature");
    assert_eq!(&png[12..16], b"IHDR", "the first chunk is not IHDR");
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

/// The `width` and `height` attributes of an SVG document's root.
fn svg_size(svg: &str) -> (u32, u32) {
    let root = &svg[..svg.find('>').unwrap()];
    let attr = |name: &str| -> u32 {
        let at = root.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        root[at..at + root[at..].find('"').unwrap()]
            .parse()
            .unwrap()
    };
    (attr("width"), attr("height"))
}

/// `--figures DIR` writes each chart of the page as an SVG file and a PNG drawn from it at
/// twice its size, the same bytes on every run.
#[test]
fn report_summary_comes_first_and_figures_are_written_as_svg_and_png() {
    let page = scratch("report-layout.html");
    let dir = scratch("report-layout-figures");
    let _ = std::fs::remove_dir_all(&dir);
    let (page_s, dir_s) = (
        page.to_string_lossy().into_owned(),
        dir.to_string_lossy().into_owned(),
    );
    let out = flashlab(&[
        "suite",
        "qos",
        "--device",
        DEVICE,
        "--depths",
        "1,8",
        "--runtime",
        "100ms",
        "--report",
        &page_s,
        "--figures",
        &dir_s,
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let at = |needle: &str| {
        html.find(needle)
            .unwrap_or_else(|| panic!("{needle} not in the page"))
    };
    let summary = at("<h2>Summary</h2>");
    let made = at("Made by flashlab ");
    let charts = at("<h2>Charts</h2>");
    let results = at("<h2>Results</h2>");
    let every = at("<h2>Every result by key</h2>\n<details>");
    assert!(summary < made && made < charts && charts < results && results < every);
    assert!(html[made..charts].contains("with: flashlab suite qos --device tiny-test-1gb"));
    // Legends as a reader writes percentiles.
    let drawn = &html[charts..results];
    // (plotters writes a text's content on its own line)
    // (equal lines are drawn once, one legend naming each: "2 series, identical: p99.9, p99.99")
    assert!(drawn.contains("p99.9") && drawn.contains("p99.99"));
    assert!(!drawn.contains("p99_9"), "a key in a legend");
    // Each chart of the page as a file, the same SVG the page inlines.
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mut ids: Vec<String> = expected_points(&doc).into_iter().map(|p| p.0).collect();
    ids.sort();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut want: Vec<String> = ids
        .iter()
        .flat_map(|id| [format!("{id}.png"), format!("{id}.svg")])
        .collect();
    want.sort();
    assert_eq!(files, want);
    for id in &ids {
        let svg = std::fs::read_to_string(dir.join(format!("{id}.svg"))).unwrap();
        let png = std::fs::read(dir.join(format!("{id}.png"))).unwrap();
        let (w, h) = svg_size(&svg);
        assert_eq!(png_size(&png), (2 * w, 2 * h), "{id}.png");
    }
    // The same command draws the same PNG bytes.
    let again = scratch("report-layout-figures-again");
    let _ = std::fs::remove_dir_all(&again);
    let out2 = flashlab(&[
        "suite",
        "qos",
        "--device",
        DEVICE,
        "--depths",
        "1,8",
        "--runtime",
        "100ms",
        "--figures",
        again.to_str().unwrap(),
    ]);
    assert!(out2.status.success(), "{}", stderr(&out2));
    for f in &files {
        let (a, b) = (
            std::fs::read(dir.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
        );
        assert!(a == b, "{f} differs between two runs");
    }
    let tail = std::fs::read_to_string(
        dir.join("latency-percentiles-at-each-queue-depth-4k-randrw-70-30.svg"),
    )
    .unwrap();
    // An exported figure is the page's chart under a band that carries its title.
    let title = "Completion-latency percentiles at each queue depth, 4k randrw 70/30";
    assert!(tail.starts_with("<svg"), "{tail}");
    assert!(
        tail.contains(&format!("fill=\"#333333\">{title}</text>")),
        "{tail}"
    );
    assert!(html.contains(&format!("aria-label=\"{title}\"")));
    // The tail axis begins at the median (fio reports it): its first tick is 50.
    assert!(
        tail.contains(">\n50\n<") && tail.contains(">\n99.99\n<"),
        "{tail}"
    );

    // A file where the directory should be: bad input before the work.
    let out = flashlab(&[
        "suite",
        "qos",
        "--device",
        DEVICE,
        "--depths",
        "1",
        "--figures",
        &page_s,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--figures") && stderr(&out).contains("not a directory"));
}

/// `flashlab run --report` for a plain job file: the summary, per job a table, bandwidth,
/// IOPS and latency over time from its logs, the latency percentiles and histogram; the
/// charts as files with `--figures`; every chart draws every point in Chromium.
#[test]
fn run_report_draws_a_job_files_logs_percentiles_and_histogram() {
    let dir = scratch("run-report");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let job = dir.join("mix.fio");
    std::fs::write(
        &job,
        "[global]\nsize=64m\ntime_based=1\nruntime=500ms\nlog_avg_msec=100\n\
         write_bw_log=mix\nwrite_iops_log=mix\nwrite_lat_log=mix\n\
         [mix]\nrw=randrw\nbs=4k\niodepth=8\n",
    )
    .unwrap();
    let page = dir.join("run.html");
    // Paths as a user in the scratch directory types them; the logs land there.
    let out = flashlab(&[
        "run",
        "run-report/mix.fio",
        "--device",
        DEVICE,
        "--report",
        "run-report/run.html",
        "--figures",
        "run-report/figures",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>Summary</h2>") && html.contains("Job file: run-report/mix.fio."));
    assert!(html.contains("Device: tiny-test-1gb."));
    assert!(html.contains(
        "with: flashlab run run-report/mix.fio --device tiny-test-1gb --report run-report/run.html"
    ));
    let mut files: Vec<String> = std::fs::read_dir(dir.join("figures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for id in [
        "job1-mix-bw-over-time",
        "job1-mix-iops-over-time",
        "job1-mix-lat-over-time",
        "job1-mix-latency-percentiles",
        "job1-mix-latency-histogram",
    ] {
        for ext in ["svg", "png"] {
            let file = format!("{id}.{ext}");
            assert!(files.contains(&file), "{file} not in {files:?}");
        }
        let png = std::fs::read(dir.join("figures").join(format!("{id}.png"))).unwrap();
        assert!(png_size(&png).0 > 0, "{id}.png");
    }
    let svgs = files.iter().filter(|f| f.ends_with(".svg")).count();
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let (tag, lines) = browser_check(&browser, &page);
    assert!(tag.contains("data-status=\"ok\""), "{tag}\n{lines:#?}");
    assert_eq!(lines.len(), svgs, "{lines:#?}");
}
