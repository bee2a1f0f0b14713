//! A suite of one's own: a type implementing `Suite`, listed in a registry of its own and run
//! through the kit's one entry point (`flashlab_kit::run`) on the tiny test drive. It fills a
//! stretch of the drive, then reads it back at two queue depths, one step each.
//!
//! `cargo run -p flashlab-kit --example custom_suite`

use flashlab_device::load_device_config;
use flashlab_kit::session::Session;
use flashlab_kit::steps::{iops, job_text, measure};
use flashlab_kit::suite::{Outcome, RunsOn, Suite};
use flashlab_kit::{
    render_table, run, Coord, Measure, On, Registry, SuiteError, SuiteOptions, SuiteReport,
    SuiteTarget, Unit,
};
use flashlab_report::DDIR_READ;

/// Queue depths of the read steps.
const DEPTHS: [u32; 2] = [1, 8];

/// The suite: a unit struct, as every built-in one is.
struct FillThenRead;

impl Suite for FillThenRead {
    fn name(&self) -> &'static str {
        "fill-then-read"
    }
    fn summary(&self) -> &'static str {
        "write 16 MiB, then read it back at queue depths 1 and 8"
    }
    fn targets(&self) -> RunsOn {
        RunsOn::Any
    }
    fn run(&self, s: &mut Session) -> Result<Outcome, SuiteError> {
        s.plan_steps(1 + DEPTHS.len(), 1);
        let fill = job_text("fill", "write", "128k", 4, 1, &["size=16m".into()]);
        s.job("fill", &fill, &|_| Vec::new())?;
        let mut results = Vec::new();
        for depth in DEPTHS {
            let name = format!("read-qd{depth}");
            let lines = ["size=16m".to_string(), "io_size=4m".to_string()];
            let text = job_text(&name, "randread", "4k", depth, 1, &lines);
            let read_iops = |run: &_| vec![measure("iops", Unit::Iops, iops(run, DDIR_READ))];
            let run = s.job(&name, &text, &read_iops)?;
            results.extend(
                read_iops(&run)
                    .into_iter()
                    .map(|m| m.under(&[Coord::Depth(depth)])),
            );
        }
        Ok(Outcome {
            steady: None,
            results,
            charts: Vec::new(),
        })
    }
}

static FILL_THEN_READ: FillThenRead = FillThenRead;

/// The registry `run` reads: this one suite, and no options of its own in the JSON report.
static REGISTRY: Registry = Registry {
    suites: &[&FILL_THEN_READ],
    report_options: |_, shared| shared,
};

/// The suite's report on one tiny drive.
fn report() -> Result<SuiteReport, Box<dyn std::error::Error>> {
    let drive = SuiteTarget::Drive(Box::new(load_device_config("tiny-test-1gb", &[])?));
    let on = On::Targets {
        targets: std::slice::from_ref(&drive),
        drives: 1,
    };
    let kind = REGISTRY.suite("fill-then-read")?;
    let ran = run(&REGISTRY, kind, on, &SuiteOptions::default(), &|_, _| {})?;
    Ok(ran.report)
}

/// The read IOPS at each depth, in depth order.
fn read_iops(report: &SuiteReport) -> Vec<(u32, f64)> {
    let results: &[Measure] = &report.devices[0].results;
    DEPTHS
        .iter()
        .filter_map(|&d| {
            let m = results
                .iter()
                .find(|m| m.is("iops", &[Coord::Depth(d)], None))?;
            Some((d, m.value))
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let report = report()?;
    for (depth, value) in read_iops(&report) {
        println!("4 KiB random reads at QD{depth}: {value:.0} IOPS");
    }
    print!("{}", render_table(&report));
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_suite_runs_its_three_steps_and_deeper_queues_read_faster() {
        let report = super::report().unwrap();
        let steps: Vec<&str> = report.devices[0]
            .steps
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(steps, ["fill", "read-qd1", "read-qd8"]);
        let iops = super::read_iops(&report);
        assert_eq!(iops.len(), 2);
        assert!(iops[0].1 > 0.0 && iops[1].1 > iops[0].1, "{iops:?}");
    }
}
