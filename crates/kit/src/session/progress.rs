//! What a session tells the progress display: the steps a suite planned, and the share of
//! them done.

use super::*;

impl<'a> Session<'a> {
    /// The suite will run `steps` more steps on this device, among them `round_runs` runs
    /// of repeated rounds counted at their most: progress reports the share of these steps
    /// done as the suite's.
    pub fn plan_steps(&mut self, steps: usize, round_runs: usize) {
        self.plan = Some(StepPlan {
            first: self.started_steps,
            steps: steps.max(1),
            round_runs,
        });
    }

    /// A run of repeated rounds ended short of its most: the plan loses the `unrun_steps`
    /// of the rounds not run.
    pub fn rounds_ended(&mut self, unrun_steps: usize) {
        if let Some(plan) = &mut self.plan {
            plan.steps = plan.steps.saturating_sub(unrun_steps).max(1);
            plan.round_runs = plan.round_runs.saturating_sub(1);
        }
    }

    /// The share of the suite done `step_fraction` into the current step, and what it is a
    /// share of: the suite's own span where it sets one, else its planned steps.
    pub fn suite_share(&self, step_fraction: f64) -> (Option<f64>, SuiteShare) {
        if let Some((a, b)) = self.suite_span {
            return (Some(a + (b - a) * step_fraction), SuiteShare::Work);
        }
        match self.plan {
            Some(p) => {
                let done = self.started_steps.saturating_sub(p.first + 1) as f64 + step_fraction;
                let basis = SuiteShare::Steps {
                    rounds_at_most: p.round_runs > 0,
                };
                (Some((done / p.steps as f64).min(1.0)), basis)
            }
            None => (None, SuiteShare::Work),
        }
    }

    /// Tell the progress display that `step` starts.
    pub fn announce(&mut self, step: &str) {
        // A step outside a cached checkpoint: the device no longer stands where a cache key
        // describes it.
        self.cache = None;
        self.started_steps += 1;
        let (suite_fraction, suite_basis) = self.suite_share(0.0);
        let p = SuiteProgress {
            device: &self.device,
            step,
            step_number: self.started_steps,
            step_started: true,
            round: self.round.map(|r| r.0),
            max_rounds: self.round.and_then(|r| r.1),
            sim_ns: self.now_ns,
            step_fraction: 0.0,
            suite_fraction,
            suite_basis,
        };
        (self.progress)(&p);
    }
}
