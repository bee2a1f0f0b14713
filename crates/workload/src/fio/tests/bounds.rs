//! Bounds on what a job file can make flashlab read or hold: included devices, file sizes,
//! jobs and clones, durations, and the size of messages.

use super::*;

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flashlab-fio-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_included_device_is_refused_naming_the_include_line() {
    for dev in ["/dev/zero", "/dev/urandom", "/"] {
        let e = parse(&format!("[j]\nrw=read\nsize=1m\ninclude {dev}\n")).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.fio", 4), "{e}");
        assert!(
            matches!(&e.kind, ParseErrorKind::Io { message, .. } if message.contains("not a regular file or a pipe")),
            "{e}"
        );
    }
}

#[test]
fn job_files_are_bounded_each_and_together() {
    let big = scratch("big.fio", &"#\n".repeat(600_000));
    let e = parse_file(&big).unwrap_err();
    assert!(e.to_string().contains("larger than 1048576 bytes"), "{e}");
    let part = scratch("part.fio", &"#\n".repeat(450_000));
    let includes: String = (0..5)
        .map(|_| format!("include {}\n", part.display()))
        .collect();
    let main = scratch("main.fio", &format!("[j]\nrw=read\nsize=1m\n{includes}"));
    let e = parse_file(&main).unwrap_err();
    assert_eq!(e.line, 8, "the fifth include passes 4 MiB: {e}");
    assert!(
        e.to_string()
            .contains("all job files and includes together"),
        "{e}"
    );
}

#[test]
fn jobs_with_their_clones_are_capped() {
    let e = kind("[j]\nnumjobs=65536\n");
    assert!(
        matches!(
            e,
            ParseErrorKind::TooManyJobs {
                limit: MAX_JOBS,
                ..
            }
        ),
        "{e}"
    );
    assert!(parse("[a]\nnumjobs=4000\n[b]\nnumjobs=96\n").is_ok());
    let e = parse("[a]\nnumjobs=4000\n[b]\nnumjobs=97\n").unwrap_err();
    assert_eq!(e.line, 4, "{e}");
    let many: String = (0..5_000).map(|i| format!("[j{i}]\n")).collect();
    let e = parse(&many).unwrap_err();
    assert_eq!(e.line, 4_097, "{e}");
}

#[test]
fn a_huge_unknown_key_gets_no_suggestion_and_a_short_message() {
    let key = "x".repeat(2_000_000);
    let start = std::time::Instant::now();
    let e = parse(&format!("[j]\n{key}=1\n")).unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert!(
        matches!(
            &e.kind,
            ParseErrorKind::UnknownOption {
                suggestion: None,
                ..
            }
        ),
        "{e:.200}"
    );
    let msg = e.to_string();
    assert!(msg.len() < 300 && msg.contains('…'), "{msg}");
    // Short mistakes still get their suggestion.
    assert!(kind("[j]\niodepht=4\n")
        .to_string()
        .contains("did you mean iodepth"));
    // Echoed values and lines are cut as well.
    let value = "9".repeat(10_000);
    assert!(
        parse(&format!("[j]\nbs={value}q\n"))
            .unwrap_err()
            .to_string()
            .len()
            < 300
    );
    assert!(parse(&format!("[{value}\n")).unwrap_err().to_string().len() < 300);
}

#[test]
fn durations_past_the_simulated_clock_are_refused_where_written() {
    for option in ["runtime", "ramp_time", "startdelay", "thinktime"] {
        let e = parse(&format!("[j]\n{option}=100000d\n")).unwrap_err();
        assert_eq!(e.line, 2, "{option}: {e}");
        assert!(e.to_string().contains("at most 53375d"), "{option}: {e}");
        assert!(
            parse(&format!("[j]\n{option}=53375d\n")).is_ok(),
            "{option}"
        );
    }
}

#[test]
fn fio_expressions_are_named_as_not_supported() {
    for value in ["$ncpus", "(2*4)", "$mb_memory"] {
        let e = kind(&format!("[j]\nnumjobs={value}\n")).to_string();
        assert!(
            e.contains("expressions") && e.contains("not supported"),
            "{value}: {e}"
        );
    }
    assert!(!kind("[j]\nnumjobs=x\n").to_string().contains("expressions"));
}

#[test]
fn a_distribution_parameter_in_exponent_form_says_so() {
    let e = kind("[j]\nrandom_distribution=zipf:1e300\n").to_string();
    assert!(e.contains("no exponent"), "{e}");
    let e = kind("[j]\nrandom_distribution=zipf:0\n").to_string();
    assert!(e.contains("THETA > 0") && !e.contains("exponent"), "{e}");
}

#[test]
fn ios_in_flight_over_all_jobs_are_capped() {
    assert!(parse("[j]\nioengine=libaio\niodepth=256\nnumjobs=4096\n").is_ok());
    let e = parse("[j]\nioengine=libaio\niodepth=257\nnumjobs=4096\n").unwrap_err();
    assert!(
        matches!(
            e.kind,
            ParseErrorKind::TooManyOutstanding {
                limit: MAX_OUTSTANDING_IOS,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.line, 3, "{e}");
}
