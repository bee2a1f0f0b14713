//! `flashlab fit SET.toml`: a drive fitted to published figures. The repository's set of
//! the Samsung PM981a fits, gives a preset that runs, whose keys fitted to a figure say
//! `published` with that figure's source and whose other keys say why they stay at the
//! class's values; a set with bad input is refused with exit 2 naming its file and line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn flashlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("flashlab runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fit-published");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

fn set_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../jobs/fit-published/samsung-pm981a-256gb.toml")
}

/// The preset runs as any drive file does, its reads at the fitted drive's rate.
fn runs(preset: &Path) {
    let run = flashlab(&[
        "fio",
        "--device",
        preset.to_str().unwrap(),
        "--name=r",
        "--ioengine=libaio",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=32",
        "--size=1%",
        "--number_ios=20000",
        "--output-format=json",
    ]);
    assert!(run.status.success(), "{}", text(&run));
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let iops = doc["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!(iops > 50_000.0, "{iops}");
}

#[test]
fn a_published_set_fits_to_a_preset_whose_keys_cite_their_figures() {
    let preset = scratch("pm981a.toml");
    let set = set_path();
    let out = flashlab(&[
        "fit",
        set.to_str().unwrap(),
        "--output",
        preset.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Published against fitted\n"), "{said}");
    let defaults = said
        .lines()
        .find_map(|l| l.strip_prefix("At class defaults: "))
        .unwrap_or_else(|| panic!("no class defaults line: {said}"));
    for key in ["nand.t_prog", "nand.t_read", "nand.blocks_per_plane"] {
        assert!(defaults.contains(key), "{key} not in {defaults}");
    }
    assert!(!defaults.contains("nand.slc_t_prog"), "{defaults}");

    let text_of = std::fs::read_to_string(&preset).unwrap();
    let table: toml::Table = toml::from_str(&text_of).unwrap();
    assert_eq!(table["capacity"]["user"].as_str(), Some("256000000000B"));
    let prov = table["provenance"].as_table().unwrap();
    let set_text = std::fs::read_to_string(&set).unwrap();
    let sources: Vec<&str> = set_text
        .lines()
        .filter_map(|l| l.strip_prefix("source = \""))
        .map(|s| s.trim_end_matches('"'))
        .collect();
    assert_eq!(sources.len(), 4);
    for (key, source) in [
        ("nand.slc_t_prog", sources[0]),
        ("slc_cache.static", sources[1]),
        ("nand.channels", sources[2]),
        ("nand.dies_per_channel", sources[2]),
    ] {
        let entry = prov
            .get(key)
            .or_else(|| {
                prov.get("slc_cache.dynamic_max_fraction")
                    .filter(|_| key == "slc_cache.static")
            })
            .unwrap_or_else(|| panic!("no provenance of {key}"));
        let figure = entry["figure"].as_str().unwrap_or_default();
        assert_eq!(entry["kind"].as_str(), Some("fitted"), "{key}");
        assert!(figure.contains("published: "), "{key}: {figure}");
        assert!(figure.contains(source), "{key}: {figure} lacks {source}");
    }
    let t_prog = prov["nand.t_prog"].as_table().unwrap();
    assert_eq!(t_prog["kind"].as_str(), Some("default"));
    assert!(t_prog["reason"]
        .as_str()
        .unwrap()
        .contains("no published figure of seq-fill post-cache rate"));

    runs(&preset);
}

#[test]
fn a_bad_set_is_refused_naming_its_file_and_line() {
    let good = std::fs::read_to_string(set_path()).unwrap();
    for (name, from, to, expect) in [
        (
            "unlike.toml",
            "depth = 32\nstate = \"full\"\nsource = \"the workstation design study of docs/reviews.md section 5, full drive, ~140K",
            "depth = 128\nstate = \"full\"\nsource = \"the workstation design study of docs/reviews.md section 5, full drive, ~140K",
            ":41: depth 128: randread-qd32 is a random read of 4 KiB at 32 I/Os in flight on a full drive; a figure of another condition is not a measurement of the job",
        ),
        (
            "unit.toml",
            "unit = \"GB\"",
            "unit = \"GiB\"",
            ":26: unit \"GiB\": seq-fill cache size is in GB",
        ),
        (
            "job.toml",
            "job = \"seq-read\"",
            "job = \"seq-reed\"",
            ":46: job \"seq-reed\": a published figure is of one of the plan's jobs",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let path = scratch(name);
        std::fs::write(&path, good.replacen(from, to, 1)).unwrap();
        let out = flashlab(&[
            "fit",
            path.to_str().unwrap(),
            "--output",
            scratch("never.toml").to_str().unwrap(),
        ]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        let want = format!("flashlab: error: {}{expect}", path.display());
        assert!(said.contains(&want), "{said}\nwanted: {want}");
        assert!(!scratch("never.toml").exists());
    }
}
