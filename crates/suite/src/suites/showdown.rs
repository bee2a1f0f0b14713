//! The enterprise reviews' preconditioning (docs/reviews.md §3, run there with VDbench): secure
//! erase; the whole surface written with 64 KiB sequential writes; 64 KiB sequential writes
//! for a time (one hour); then, with the drive partitioned to a share of its capacity, 4 KiB
//! random writes for a time (one hour) over the partition only, before the random workloads.
//!
//! Outside the partition the LBAs keep what the surface fill wrote: a partition is never
//! trimmed, so the drive still holds that data as valid. Those blocks stay full and cold, and
//! the random writes inside the partition get the whole spare area to themselves: their
//! write amplification is that of a drive with far more over-provisioning. Nothing here
//! computes that; it comes out of the FTL's garbage collection.

use flashlab_report::DDIR_WRITE;

use flashlab_kit::options::{PreconditionKind, PreconditionOptions};
use flashlab_kit::session::{wa_over_reclaims, Session};
use flashlab_kit::steady::{check_window, SteadyRule, SteadyVerdict};
use flashlab_kit::steps::{
    bw_bytes_per_s, iops, job_text, measure, purge_and_fill, qd_jobs, random_write_rounds, timed,
    FILL_QD,
};
use flashlab_kit::{Measure, SteadyReport, SuiteError, SuiteOptions, Unit};

/// The random writes run as this many equal segments, so the report can show whether their
/// IOPS levelled off (the SNIA rule over the segments) and take the write amplification of
/// the last ones, where the partition has reached its steady state.
pub(crate) const SEGMENTS: usize = 10;
const _: () = assert!(SEGMENTS >= SteadyRule::SNIA_PTS.window);

/// Transfer size of the surface fill and the sequential writes.
const SEQ_BS: &str = "64k";

/// What the showdown preconditioning does with these options, for the JSON report.
pub(crate) fn describe(p: &PreconditionOptions, opts: &SuiteOptions) -> String {
    let (qd, jobs) = qd_jobs(opts);
    let seconds = |ns: u64| ns as f64 / 1e9;
    let span = if p.span_percent < 100.0 {
        format!("the first {}% of the LBAs", p.span_percent)
    } else {
        "the whole drive".to_string()
    };
    format!(
        "purge; 64 KiB sequential writes over the whole surface (QD{FILL_QD}); {} s of 64 KiB \
         sequential writes (QD{FILL_QD}); {} s of 4 KiB random writes over {span} (QD{qd} x \
         {jobs} jobs) in {SEGMENTS} equal segments; the tests then run on {span}",
        seconds(p.seq_ns),
        seconds(p.random_ns),
    )
}

/// The step names, in order (`seq-64k` only when `--seq-time` is above 0).
pub(crate) fn segment_name(i: usize) -> String {
    format!("span-random-{i:02}")
}

/// Run the showdown preconditioning. Results: `precondition_rounds` (segments),
/// `precondition_steady` (whether the last segments' IOPS meet the SNIA rule),
/// `steady_write_iops` (their mean), `precondition_surface_bw_bytes_per_s`,
/// `precondition_seq_write_bw_bytes_per_s`, `precondition_random_wa` (over the window).
/// Precondition as `--precondition` says: `pts` (purge, two sequential fills, random-write
/// rounds to the SNIA rule) or the showdown recipe ([`precondition`]); the steady-state
/// report and the measures of what ran.
pub(crate) fn precondition_chosen(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<(SteadyReport, Vec<Measure>), SuiteError> {
    match opts.precondition.kind {
        PreconditionKind::Pts => {
            purge_and_fill(s)?;
            let st = random_write_rounds(s, opts)?;
            let results = round_measures(&st).to_vec();
            Ok((st, results))
        }
        PreconditionKind::Showdown => precondition(s, opts),
    }
}

/// The steps [`precondition_chosen`] runs, the `pts` rounds counted at their most, and how
/// many runs of repeated rounds are among them ([`Session::plan_steps`]).
pub(crate) fn precondition_steps(s: &mut Session, opts: &SuiteOptions) -> (usize, usize) {
    match opts.precondition.kind {
        PreconditionKind::Pts => (
            flashlab_kit::steps::FILL_STEPS
                + opts.max_rounds * flashlab_kit::steps::round_steps(s, opts),
            1,
        ),
        // Purge, surface, the sequential writes when timed, the random segments.
        PreconditionKind::Showdown => (2 + usize::from(opts.precondition.seq_ns > 0) + SEGMENTS, 0),
    }
}

/// How many rounds (or segments) ran and whether the steady-state rule held.
fn round_measures(st: &SteadyReport) -> [Measure; 2] {
    [
        measure(
            "precondition_rounds",
            Unit::Count,
            st.rounds_iops.len() as f64,
        ),
        measure(
            "precondition_steady",
            Unit::Count,
            f64::from(u8::from(st.verdict.round.is_some())),
        ),
    ]
}

pub(crate) fn precondition(
    s: &mut Session,
    opts: &SuiteOptions,
) -> Result<(SteadyReport, Vec<Measure>), SuiteError> {
    let p = &opts.precondition;
    let write_bw = |run: &flashlab_report::RunResult| {
        vec![measure(
            "bw_bytes_per_s",
            Unit::BytesPerS,
            bw_bytes_per_s(run, DDIR_WRITE),
        )]
    };
    s.purge("purge")?;
    // Size-bounded: exactly one pass over every LBA, the partition's surroundings included.
    let text = job_text("surface", "write", SEQ_BS, FILL_QD, 1, &[]);
    let surface = s.job("surface", &text, &write_bw)?;
    let mut results = vec![measure(
        "precondition_surface_bw_bytes_per_s",
        Unit::BytesPerS,
        bw_bytes_per_s(&surface, DDIR_WRITE),
    )];
    if p.seq_ns > 0 {
        // Time-based: the writes wrap at the end of the drive and go on from LBA 0. On a
        // slice the runner shortens the time with the capacity (docs/scale.md), so the slice
        // writes the same share of itself as the drive would.
        let text = job_text("seq-64k", "write", SEQ_BS, FILL_QD, 1, &timed(p.seq_ns, 0));
        let run = s.job("seq-64k", &text, &write_bw)?;
        results.push(measure(
            "precondition_seq_write_bw_bytes_per_s",
            Unit::BytesPerS,
            bw_bytes_per_s(&run, DDIR_WRITE),
        ));
    }
    let (qd, jobs) = qd_jobs(opts);
    let segment_ns = (p.random_ns / SEGMENTS as u64).max(1);
    let mut values = Vec::with_capacity(SEGMENTS);
    let mut counters = Vec::with_capacity(SEGMENTS + 1);
    counters.push(s.counters());
    for i in 1..=SEGMENTS {
        // The last segment takes the remainder, so the segments add up to --random-time.
        let ns = if i == SEGMENTS {
            p.random_ns
                .saturating_sub(segment_ns * (SEGMENTS as u64 - 1))
                .max(1)
        } else {
            segment_ns
        };
        let mut lines = timed(ns, 0);
        lines.extend(p.span_line());
        let name = segment_name(i);
        let text = job_text(&name, "randwrite", "4k", qd, jobs, &lines);
        s.round = Some((i, Some(SEGMENTS)));
        let run = s.job(&name, &text, &|run| {
            vec![measure("write_iops", Unit::Iops, iops(run, DDIR_WRITE))]
        });
        s.round = None;
        values.push(iops(&run?, DDIR_WRITE));
        counters.push(s.counters());
    }
    // The recipe runs for a fixed time rather than until the rule holds, so it is the state
    // it ends in that counts: the rule over the last segments. An earlier window can pass
    // while the writes still land in free blocks, before garbage collection starts.
    let rule = SteadyRule::SNIA_PTS;
    let last = check_window(&values[SEGMENTS - rule.window..], &rule);
    let verdict = SteadyVerdict {
        round: last.steady.then_some(SEGMENTS),
        window: Some(last),
    };
    let st = SteadyReport {
        rounds_iops: values,
        verdict,
    };
    results.extend(round_measures(&st));
    results.push(measure(
        "steady_write_iops",
        Unit::Iops,
        flashlab_kit::steps::steady_iops(&st),
    ));
    // Over the rule's window (the last segments), reaching back over earlier segments when
    // that holds too few GC cycles; 0 on a device without an FTL to count.
    let wa = wa_over_reclaims(
        &counters[..=SEGMENTS - rule.window],
        &counters[SEGMENTS],
        s.wa_window_reclaims(),
    );
    if wa > 0.0 {
        results.push(measure("precondition_random_wa", Unit::Ratio, wa));
    }
    Ok((st, results))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_engine::NS_PER_S;

    #[test]
    fn the_description_names_the_span_and_times() {
        let p = PreconditionOptions {
            kind: PreconditionKind::Showdown,
            span_percent: 25.0,
            seq_ns: 60 * NS_PER_S,
            random_ns: 90 * NS_PER_S,
        };
        let d = describe(&p, &SuiteOptions::default());
        assert!(d.contains("60 s of 64 KiB sequential"), "{d}");
        assert!(
            d.contains("90 s of 4 KiB random writes over the first 25%"),
            "{d}"
        );
        assert!(d.contains("QD32 x 1 jobs"), "{d}");
        let whole = describe(
            &PreconditionOptions {
                span_percent: 100.0,
                ..p
            },
            &SuiteOptions::default(),
        );
        assert!(
            whole.ends_with("the tests then run on the whole drive"),
            "{whole}"
        );
    }

    #[test]
    fn segment_jobs_parse_confined_to_the_span() {
        let p = PreconditionOptions {
            kind: PreconditionKind::Showdown,
            span_percent: 12.5,
            ..Default::default()
        };
        let mut lines = timed(NS_PER_S, 0);
        lines.extend(p.span_line());
        let text = job_text(&segment_name(3), "randwrite", "4k", 32, 1, &lines);
        let file = flashlab_workload::parse_str(&text, "x.fio", &|_| None).unwrap();
        let j = &file.jobs[0];
        assert_eq!(j.id.name, "span-random-03");
        // The later size= wins over job_text's size=100%, as in fio.
        assert_eq!(
            j.target.size,
            Some(flashlab_workload::SizeSpec::Fraction(0.125))
        );
        assert!(j.time.time_based);
    }
}
