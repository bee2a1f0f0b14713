//! fio's job-weighted flow control (`flow_id`, `flow`, `flow_sleep`; fio 3.33's `flow.c`).
//!
//! The clones of the jobs of one `flow_id` with a weight above 0 form a group. The group
//! counts the I/Os its clones pass (from 1, as fio's shared counter starts) and adds up their
//! weights; each clone counts its own. Before each I/O (fio checks at the top of its issue
//! loop, before it takes the next I/O) a clone whose count is a larger share of the group's
//! than its weight is of the total is held back: with `flow_sleep` it waits for its I/Os in
//! flight (fio's quiesce) and then that long before it looks again; without, it looks again
//! as soon as another clone of the group passes (fio spins on the check). Every clone's
//! weight counts from the start, as fio adds each job's at setup; a finished clone takes its
//! count and weight out again, as fio does when it reaps the job.
//!
//! fio compares the two shares as doubles; the integers here compare the same fractions
//! exactly (`count * total > weight * group count`), with no rounding to differ on.

use super::*;

/// Where a clone of a flow group stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FlowState {
    /// It may pass the check.
    Running,
    /// Over its share without `flow_sleep`: it looks again when the group's count moves.
    Held,
    /// Over its share with `flow_sleep`: waiting for its I/Os in flight to complete.
    Draining,
    /// Sleeping `flow_sleep` until its Wake.
    Sleeping,
    /// Finished: its count and weight are out of the group.
    Gone,
}

/// A clone's part in its flow group.
#[derive(Debug, Clone, Copy)]
pub(super) struct FlowMember {
    group: u32,
    weight: u64,
    sleep_ns: u64,
    /// I/Os the clone passed (fio's `td->flow_counter`).
    count: u64,
    pub(super) state: FlowState,
}

/// The clones of one `flow_id`.
#[derive(Debug)]
pub(super) struct FlowGroup {
    /// fio's shared `flow_counter`: 1 plus the I/Os its clones passed.
    counter: u64,
    /// fio's `total_weight`: the weights of the clones not finished.
    total_weight: u64,
    /// Its clones, by index.
    members: Vec<u32>,
    /// Clones in [`FlowState::Held`].
    held: u32,
}

/// The flow groups of a run's clones, each clone of a job with `flow` above 0 a member of
/// its `flow_id`'s (empty when no job sets `flow`). Such clones take the general issue path,
/// where the check is.
pub(super) fn flow_setup(clones: &mut [JobClone<'_>]) -> Vec<FlowGroup> {
    let mut ids: Vec<i32> = Vec::new();
    let mut groups: Vec<FlowGroup> = Vec::new();
    for (i, c) in clones.iter_mut().enumerate() {
        let f = c.spec.flow;
        if !f.active() {
            continue;
        }
        let g = match ids.iter().position(|&id| id == f.id) {
            Some(g) => g,
            None => {
                ids.push(f.id);
                groups.push(FlowGroup {
                    counter: 1,
                    total_weight: 0,
                    members: Vec::new(),
                    held: 0,
                });
                groups.len() - 1
            }
        };
        groups[g].total_weight += u64::from(f.weight);
        groups[g].members.push(i as u32);
        c.flow = Some(FlowMember {
            group: g as u32,
            weight: u64::from(f.weight),
            sleep_ns: u64::from(f.sleep_us) * 1_000,
            count: 0,
            state: FlowState::Running,
        });
        c.simple = false;
    }
    groups
}

/// fio's test: the clone's share of the group's count is above its weight's share.
fn over_share(m: &FlowMember, g: &FlowGroup) -> bool {
    u128::from(m.count) * u128::from(g.total_weight) > u128::from(m.weight) * u128::from(g.counter)
}

impl<'a, 'd, T: Targets + ?Sized> Runner<'a, 'd, T> {
    /// fio's `flow_threshold_exceeded` for clone `i` before its next I/O: whether it may go
    /// on (the I/O then counts in its group); if not, it is held, or drains and sleeps.
    #[inline(never)]
    pub(super) fn flow_gate(&mut self, i: usize, now: SimTime) -> Result<bool, RunError> {
        let c = &mut self.clones[i];
        let in_flight = c.in_flight;
        let Some(m) = c.flow.as_mut() else {
            return Ok(true);
        };
        let g = &mut self.flows[m.group as usize];
        match m.state {
            FlowState::Sleeping | FlowState::Gone => return Ok(false),
            FlowState::Draining => {}
            FlowState::Running | FlowState::Held if !over_share(m, g) => {
                if m.state == FlowState::Held {
                    g.held -= 1;
                }
                m.state = FlowState::Running;
                m.count += 1;
                g.counter += 1;
                if g.held > 0 {
                    let group = m.group as usize;
                    self.release_held(group);
                }
                return Ok(true);
            }
            FlowState::Running | FlowState::Held if m.sleep_ns == 0 => {
                if m.state == FlowState::Running {
                    m.state = FlowState::Held;
                    g.held += 1;
                }
                return Ok(false);
            }
            FlowState::Running | FlowState::Held => {
                if m.state == FlowState::Held {
                    g.held -= 1;
                }
                m.state = FlowState::Draining;
            }
        }
        // Draining: once nothing is in flight, the clone sleeps `flow_sleep`.
        if in_flight == 0 {
            m.state = FlowState::Sleeping;
            let until = now.saturating_add(m.sleep_ns);
            c.wake_at = Some(until);
            self.queue
                .schedule(until, Event::Wake { clone: i as u32 })?;
        }
        Ok(false)
    }

    /// The held clones of flow group `g` no longer over their share go on (at once, after
    /// the event at hand: [`Runner::retry_flows`]).
    fn release_held(&mut self, g: usize) {
        let group = &mut self.flows[g];
        for &j in &group.members {
            let Some(m) = self.clones[j as usize].flow.as_mut() else {
                continue;
            };
            if m.state == FlowState::Held && !over_share(m, group) {
                m.state = FlowState::Running;
                group.held -= 1;
                self.flow_retry.push(j);
            }
        }
    }

    /// Clone `i` finished: as fio does when it reaps a job, its count and weight leave its
    /// group, which may free the others.
    pub(super) fn flow_exit(&mut self, i: usize) {
        let Some(m) = self.clones[i].flow.as_mut() else {
            return;
        };
        let g = m.group as usize;
        let group = &mut self.flows[g];
        if m.state == FlowState::Held {
            group.held -= 1;
        }
        group.counter -= m.count;
        group.total_weight -= m.weight;
        m.state = FlowState::Gone;
        if group.held > 0 {
            self.release_held(g);
        }
    }

    /// Issue for the clones [`Runner::release_held`] freed (more may be freed meanwhile).
    pub(super) fn retry_flows(&mut self, now: SimTime) -> Result<(), RunError> {
        let mut k = 0;
        while k < self.flow_retry.len() {
            let j = self.flow_retry[k] as usize;
            k += 1;
            if self.clones[j].life.finished() {
                continue;
            }
            self.try_issue(j, now)?;
            self.check_finished(j, now);
        }
        self.flow_retry.clear();
        Ok(())
    }

    /// The run is stuck: the error naming a clone flow control holds back for good (every
    /// other clone of its group is done, or not started and never will be before it ends),
    /// as fio then waits forever; None when no clone is held.
    #[cold]
    pub(super) fn flow_stuck(&self) -> Option<RunError> {
        let c = self
            .clones
            .iter()
            .find(|c| c.flow.is_some_and(|m| m.state == FlowState::Held) && !c.life.finished())?;
        let spec = c.spec;
        Some(RunError::Flow {
            file: build::job_place(self.file, spec),
            line: build::job_line(spec),
            job: spec.id.name.clone(),
            why: format!(
                "flow={} holds the job back in flow_id={} and no other job of that flow issues I/O now (fio counts the weights of every job of the file from the start, stonewalled ones too): fio would wait forever; give the job a runtime, or put the flow's jobs in one phase",
                spec.flow.weight, spec.flow.id
            ),
        })
    }
}
