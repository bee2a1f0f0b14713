//! Options of what a job reports and logs: latency, bandwidth and histogram logs, the I/O
//! log, percentiles, unified reporting, significant figures, and the disabled statistics.

use super::*;

#[test]
fn histogram_log_options() {
    let j = &parse("[jj]\nwrite_hist_log\nlog_hist_msec=1000\nlog_hist_coarseness=3\n")
        .unwrap()
        .jobs[0];
    // A bare prefix is the job name, as for fio's other logs.
    assert_eq!(j.log.write_hist_log.as_deref(), Some("jj"));
    assert_eq!((j.log.log_hist_msec, j.log.log_hist_coarseness), (1000, 3));
    assert!(kind("[j]\nlog_hist_coarseness=7\n")
        .to_string()
        .contains("from 0 to 6"));
}

#[test]
fn write_iolog_takes_a_path_and_read_iolog_points_to_replay() {
    let j = &parse("[j]\nwrite_iolog=out/j.log\n").unwrap().jobs[0];
    assert_eq!(j.log.write_iolog.as_deref(), Some("out/j.log"));
    assert!(kind("[j]\nwrite_iolog=\n")
        .to_string()
        .contains("a file path"));
    assert!(kind("[j]\nread_iolog=a.log\n")
        .to_string()
        .contains("flashlab replay"));
}

#[test]
fn percentile_switches_parse() {
    let j = &parse("[j]\nclat_percentiles=0\nlat_percentiles=1\nslat_percentiles\n")
        .unwrap()
        .jobs[0];
    assert_eq!(
        (
            j.report.clat_percentiles,
            j.report.lat_percentiles,
            j.report.slat_percentiles
        ),
        (false, true, true)
    );
    let d = &parse("[j]\n").unwrap().jobs[0];
    assert_eq!(
        (
            d.report.clat_percentiles,
            d.report.lat_percentiles,
            d.report.slat_percentiles
        ),
        (true, false, false)
    );
}

#[test]
fn log_offset_parses() {
    assert!(parse("[j]\nlog_offset=1\n").unwrap().jobs[0].log.log_offset);
    assert!(!parse("[j]\n").unwrap().jobs[0].log.log_offset);
}

#[test]
fn stats_off_parses() {
    assert!(!parse("[j]\nstats=0\n").unwrap().jobs[0].report.stats);
    assert!(parse("[j]\n").unwrap().jobs[0].report.stats);
}

#[test]
fn per_job_logs_parses() {
    assert!(
        !parse("[j]\nper_job_logs=0\n").unwrap().jobs[0]
            .log
            .per_job_logs
    );
    assert!(parse("[j]\n").unwrap().jobs[0].log.per_job_logs);
}

#[test]
fn gtod_reduce_sets_the_disables_and_disable_lat_needs_disable_slat() {
    let j = &parse("[j]\ngtod_reduce=1\n").unwrap().jobs[0];
    assert!(
        j.report.disable_lat
            && j.report.disable_clat
            && j.report.disable_slat
            && j.report.disable_bw
    );
    assert!(!j.report.clat_percentiles);
    let j = &parse("[j]\ngtod_reduce=0\n").unwrap().jobs[0];
    assert!(!j.report.disable_lat && !j.report.disable_clat && j.report.clat_percentiles);
    let j = &parse("[j]\ndisable_slat=1\ndisable_lat=1\ndisable_bw=1\n")
        .unwrap()
        .jobs[0];
    assert!(
        j.report.disable_lat
            && j.report.disable_slat
            && j.report.disable_bw
            && !j.report.disable_clat
    );
    // fio 3.33 measures submission latency from an unset start time then.
    let e = parse("[j]\ndisable_lat=1\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("disable_slat"), "{e}");
    let e = parse("[j]\ngtod_reduce=1\ndisable_slat=0\n").unwrap_err();
    assert_eq!(e.line, 3);
    let e = parse("[j]\nlatency_target=1ms\ngtod_reduce=1\n").unwrap_err();
    assert!(e.to_string().contains("latency_target"), "{e}");
}

#[test]
fn unified_rw_reporting_takes_fios_names_and_codes() {
    for (v, code) in [
        ("none", 0),
        ("0", 0),
        ("mixed", 1),
        ("1", 1),
        ("both", 2),
        ("2", 2),
    ] {
        let f = parse(&format!("[j]\nunified_rw_reporting={v}\n")).unwrap();
        assert_eq!(f.jobs[0].report.unified_rw_reporting, code, "{v}");
    }
    let e = parse("[j]\nunified_rw_reporting=3\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("none, mixed, both"), "{e}");
}

#[test]
fn significant_figures_and_unit_base_parse() {
    let j = &parse("[j]\nsignificant_figures=6\nunit_base=1\n")
        .unwrap()
        .jobs[0];
    assert_eq!(
        (j.report.significant_figures, j.report.unit_base_bits),
        (6, true)
    );
    let j = &parse("[j]\nunit_base=8\n").unwrap().jobs[0];
    assert_eq!(
        (j.report.significant_figures, j.report.unit_base_bits),
        (4, false)
    );
    let e = parse("[j]\nsignificant_figures=11\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("significant_figures"), "{e}");
    assert!(parse("[j]\nunit_base=2\n").is_err());
}
