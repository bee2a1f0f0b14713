//! Options several suites share, and how they become
//! [`flashlab_suite::SuiteOptions`].

use flashlab_suite::{PreconditionKind, PreconditionOptions, RoundLength, SuiteOptions};

#[derive(clap::Args, Debug)]
pub struct SuiteTestArgs {
    /// wsat, sustained-write: one measured interval: a share of the capacity (4% = 1/25), a
    /// size (8GiB) or a simulated time (60s).
    #[arg(long, default_value = "4%")]
    interval: String,
    /// write-pressure: queue depth of the 4 KiB random reader; noisy-neighbor: quiet readers
    /// run at depths 1 to this.
    #[arg(long, default_value_t = 4)]
    read_qd: u32,
    /// app-profiles, write-pressure, noisy-neighbor, oltp: `pts` (purge, 2x sequential fill, random
    /// rounds to steady state) or `showdown` (purge, 64 KiB sequential surface fill,
    /// --seq-time of 64 KiB sequential writes, --random-time of 4 KiB random writes over
    /// --span).
    #[arg(long, default_value = "pts")]
    precondition: String,
    /// app-profiles, write-pressure, oltp (--precondition showdown): the tests' partition, the first
    /// PCT% of the LBAs; the rest keeps the surface fill's data; noisy-neighbor: 100 only (its
    /// namespaces divide the drive).
    #[arg(long, default_value = "100", value_name = "PCT")]
    span: String,
    /// --precondition showdown: simulated time of 64 KiB sequential writes after the surface
    /// fill (0: none); on a slice scaled with it (docs/scale.md).
    #[arg(long, default_value = "1h", value_name = "TIME")]
    seq_time: String,
    /// --precondition showdown: simulated time of 4 KiB random writes over --span.
    #[arg(long, default_value = "1h", value_name = "TIME")]
    random_time: String,
}

/// A length (`4%`, `8GiB`, `60s`) of `option`.
fn length(option: &'static str, text: &str) -> anyhow::Result<RoundLength> {
    Ok(RoundLength::parse_for(option, text)?)
}

impl SuiteTestArgs {
    /// Set the options of these suites in `o`; an error is bad input.
    pub fn apply(&self, o: &mut SuiteOptions) -> anyhow::Result<()> {
        o.interval = length("--interval", &self.interval)?;
        o.read_qd = self.read_qd;
        o.precondition = PreconditionOptions {
            kind: PreconditionKind::parse(&self.precondition)?,
            span_percent: PreconditionOptions::parse_span(&self.span)?,
            seq_ns: flashlab_suite::parse_time("--seq-time", &self.seq_time)?,
            random_ns: flashlab_suite::parse_time("--random-time", &self.random_time)?,
        };
        Ok(())
    }
}
