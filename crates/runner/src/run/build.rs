//! Building a run: the job file's jobs as clones, in phases (stonewall) and reporting groups,
//! each with its generator, statistics, checks and logs, before any I/O.

use super::*;

impl<'a, 'd, T: Targets + ?Sized> Runner<'a, 'd, T> {
    pub(super) fn new(
        file: &'a JobFile,
        device: &'d mut T,
        options: &'a RunOptions,
        plan: &'a ScalePlan,
    ) -> Result<Self, RunError> {
        let ClonePhases {
            mut clones,
            phases,
            phase_names,
        } = clone_phases(file, &mut *device, options)?;
        let (zbd_devices, zbd_jobs) = zbd_setup(file, &mut *device, &mut clones)?;
        let has_waiters = link_waiters(&mut clones);
        let flows = flow::flow_setup(&mut clones);
        // Every I/O a clone holds is in at most one of: the device, the host queue; a flush
        // adds one. Sizing the host queue for all of them (up to 2^16; the parser bounds the
        // sum at 2^20) means it rarely reallocates.
        let trackers = steady_trackers(file, &mut clones, plan)?;
        check_iologs(file, &clones, plan)?;
        let untimed = untimed_phases(file, &clones, &phases, &zbd_jobs, &*device, options)?;
        let host_capacity: usize = clones.iter().map(|c| c.iodepth as usize + 1).sum();
        let device_limit = device.queue_depth_limit().max(1);
        let slots = host_capacity.min(device_limit as usize);
        let phase_count = phases.len();
        let clones_len = clones.len();
        Ok(Self {
            file,
            device,
            options,
            plan,
            queue: EventQueue::with_limit(options.limits.max_queued_events),
            in_flight: vec![
                InFlight {
                    clone: 0,
                    kind: IoKind::Read,
                    issue_ns: 0,
                    accepted_ns: 0,
                    offset_bytes: 0,
                    len_bytes: 0,
                };
                slots
            ]
            .into_boxed_slice(),
            free_slots: (0..slots as u32).rev().collect(),
            free_len: slots,
            host_queue: VecDeque::with_capacity(host_capacity.min(1 << 16)),
            device_in_flight: 0,
            device_limit,
            clones,
            phases,
            phase_start_ns: vec![0; phase_count],
            phase_writes: vec![None; phase_count + 1],
            phase_names,
            untimed,
            untimed_until_ns: 0,
            current_phase: 0,
            phase_left: 0,
            all_done: false,
            trackers,
            exit_all: false,
            exiting: false,
            has_waiters,
            ready: Vec::new(),
            zbd_devices,
            zbd_jobs,
            flow_retry: Vec::with_capacity(if flows.is_empty() { 0 } else { clones_len }),
            flows,
        })
    }
}

/// The job file's jobs as clones (numjobs each), in their phases (stonewall) and reporting
/// groups.
struct ClonePhases<'a> {
    clones: Vec<JobClone<'a>>,
    /// Each phase's clones: a range of `clones`.
    phases: Vec<(usize, usize)>,
    /// Each phase's jobs' names, for messages.
    phase_names: Vec<String>,
}

/// Every job's clones, each placed in its phase, reporting group and target.
fn clone_phases<'a, T: Targets + ?Sized>(
    file: &'a JobFile,
    device: &mut T,
    options: &RunOptions,
) -> Result<ClonePhases<'a>, RunError> {
    let block_bytes = device.logical_block_bytes();
    let placement_handles = device.placement_handles();
    let job_seeds = SeedTree::new(options.seed).child("job");
    let mut clones = Vec::new();
    let mut phases: Vec<(usize, usize)> = Vec::new();
    let mut phase_names: Vec<String> = Vec::new();
    let mut groupid = 0u32;
    let mut group_members = 0u32;
    for (spec_index, spec) in file.jobs.iter().enumerate() {
        check_bounded(file, spec)?;
        // fio: stonewall and new_group open a new reporting group unless the current
        // one is still empty; stonewall also waits for every earlier job.
        if (spec.control.stonewall || spec.report.new_group) && group_members > 0 {
            groupid += 1;
            group_members = 0;
        }
        check_group_percentiles(file, spec_index, group_members)?;
        if phases.is_empty() || (spec.control.stonewall && !clones.is_empty()) {
            phases.push((clones.len(), clones.len()));
            phase_names.push(String::new());
        }
        let names = phase_names.last_mut().expect("a phase was pushed above");
        if !names.is_empty() {
            names.push_str(", ");
        }
        names.push_str(&spec.id.name);
        let target = device
            .resolve(spec.target.filename.as_deref())
            .map_err(|valid| RunError::Target {
                file: job_place(file, spec),
                line: job_line(spec),
                job: spec.id.name.clone(),
                filename: spec.target.filename.clone().unwrap_or_default(),
                valid,
            })?;
        let capacity_bytes = device.capacity_bytes(target);
        for clone_index in 0..spec.control.numjobs.max(1) {
            let job_index = clones.len() as u32 + 1;
            let seeds = job_seeds.index(job_index as u64);
            let data_placement = placement::DataPlacement::new(spec, placement_handles, &seeds)
                .map_err(|why| RunError::Placement {
                    file: job_place(file, spec),
                    line: job_line(spec),
                    job: spec.id.name.clone(),
                    why,
                })?;
            let mut clone = JobClone::new(
                file,
                spec,
                Placement {
                    spec_index,
                    clone_index,
                    job_index,
                    groupid,
                    phase: phases.len() - 1,
                    target,
                    capacity_bytes,
                    block_bytes,
                },
                seeds,
                options,
            )?;
            if data_placement.is_some() {
                // Each write picks its identifier: the simple issue loop does not.
                clone.simple = false;
                clone.data_placement = data_placement;
            }
            clones.push(clone);
            group_members += 1;
        }
        phases.last_mut().expect("a phase was pushed above").1 = clones.len();
    }
    Ok(ClonePhases {
        clones,
        phases,
        phase_names,
    })
}

/// fio's zone handling for the clones of `zonemode=zbd` jobs: one zone state per target
/// (what the drive reports, or zones emulated from the job's options), each clone's range.
/// Such clones take the general issue path, where their I/O is adjusted.
#[allow(clippy::type_complexity)]
fn zbd_setup<T: Targets + ?Sized>(
    file: &JobFile,
    device: &mut T,
    clones: &mut [JobClone<'_>],
) -> Result<(Vec<crate::zbd::ZbdDevice>, Vec<Option<crate::zbd::ZbdJob>>), RunError> {
    use crate::zbd::ZbdDevice;
    let mut devices: Vec<ZbdDevice> = Vec::new();
    if !clones.iter().any(|c| ZbdDevice::wanted(c.spec)) {
        return Ok((devices, Vec::new()));
    }
    let mut jobs = Vec::with_capacity(clones.len());
    for c in clones.iter_mut() {
        if !ZbdDevice::wanted(c.spec) {
            jobs.push(None);
            continue;
        }
        let spec = c.spec;
        let err = |why: String| RunError::Zbd {
            file: job_place(file, spec),
            line: job_line(spec),
            job: spec.id.name.clone(),
            why,
        };
        let d = match devices.iter().position(|d| d.target == c.target) {
            Some(d) => d,
            None => {
                let t = c.target;
                let zones = device.zones(t);
                let dev = ZbdDevice::new(
                    t,
                    zones,
                    |z| device.zone_write_pointer(t, z).unwrap_or(0),
                    &spec.zoned,
                    device.capacity_bytes(t),
                )
                .map_err(err)?;
                devices.push(dev);
                devices.len() - 1
            }
        };
        let job = devices[d].job(d, spec, c.generator.region()).map_err(err)?;
        if spec.zoned.zone_skip > 0 {
            let capacity = device.capacity_bytes(c.target);
            c.generator.zbd_zone_skip(
                devices[d].geometry.zone_bytes,
                spec.zoned.zone_skip,
                capacity,
                spec.time.time_based,
            );
        }
        c.simple = false;
        jobs.push(Some(job));
    }
    Ok((devices, jobs))
}

/// Where a clone goes: its job's and its own index, reporting group, phase and target.
#[derive(Debug, Clone, Copy)]
struct Placement {
    spec_index: usize,
    /// The clone's index among its job's (0-based, fio's numjobs).
    clone_index: u32,
    /// fio's job number (from 1) across the file.
    job_index: u32,
    groupid: u32,
    phase: usize,
    target: usize,
    capacity_bytes: u64,
    block_bytes: u64,
}

impl<'a> JobClone<'a> {
    /// Clone `at.clone_index` of job `spec`: its generator, statistics, checks and logs,
    /// ready to start (a clone that waits for another job is marked by [`link_waiters`]).
    fn new(
        file: &JobFile,
        spec: &'a JobSpec,
        at: Placement,
        seeds: SeedTree,
        options: &RunOptions,
    ) -> Result<Self, RunError> {
        let generator = IoGenerator::new(
            spec,
            at.clone_index,
            at.capacity_bytes,
            at.block_bytes,
            seeds,
        )
        .map_err(|error| RunError::Job {
            file: job_place(file, spec),
            line: job_line(spec),
            job: spec.id.name.clone(),
            error,
        })?;
        let verify = Verify::new(spec, &generator)
            .map_err(|why| RunError::Verify {
                file: job_place(file, spec),
                line: job_line(spec),
                job: spec.id.name.clone(),
                why: format!("verify with {why} is not simulated"),
            })?
            .map(Box::new);
        let mut stats = job_stats(spec, at.groupid, at.job_index);
        let batch = Batch::new(spec);
        if batch.is_some() {
            stats.set_batched();
        }
        let rate = RateState::new(spec, seeds);
        let plain = !rate.active
            && spec.sync.fsync_every == 0
            && spec.sync.fdatasync_every == 0
            && !spec.sync.write_fua
            && spec.rate.thinktime_ns == 0
            && !spec.engine.serialize_overlap;
        let choose_ddir = rate.active && generator.mixes_directions();
        let simple = plain && batch.is_none() && verify.is_none();
        Ok(JobClone {
            spec,
            target: at.target,
            spec_index: at.spec_index,
            job_index: at.job_index,
            groupid: at.groupid,
            phase: at.phase,
            generator,
            stats: Some(Sink::Here(Box::new(stats))),
            result: None,
            extras: None,
            iodepth: spec.engine.iodepth.max(1),
            iodepth_low: iodepth_low(spec),
            draining_to_low: false,
            batch,
            in_flight: 0,
            window: Window {
                start_ns: 0,
                deadline_ns: SimTime::MAX,
                measuring: false,
                measure_start_ns: 0,
                end_ns: 0,
            },
            draw: DrawAhead {
                held: None,
                next: None,
                after_next: None,
                generator_done: false,
            },
            life: Lifecycle::new(false),
            io_error: None,
            wake_at: None,
            think: thinking(spec),
            flush: FlushState {
                writes_since_fsync: 0,
                writes_since_fdatasync: 0,
                pending: false,
                // A verifying job flushes at the end of each loop's writes instead.
                end_sent: verify.is_some(),
                done: 0,
            },
            rate,
            plain,
            host: host_model(spec, options, &seeds),
            overlap_guard: spec
                .engine
                .serialize_overlap
                .then(|| Vec::with_capacity(spec.engine.iodepth.max(1) as usize)),
            simple,
            choose_ddir,
            write_compressible_percent: spec.buffers.compressible_percent,
            issued_bytes: 0,
            done_ios: [0; 3],
            done_bytes: [0; 3],
            steady: None,
            lat_target: None,
            min_rate: None,
            watched: false,
            iolog: iolog(spec, at.clone_index),
            measured_bytes: [0; 3],
            measured_ios: [0; 3],
            waitees: Vec::new(),
            verify,
            data_placement: None,
            flow: None,
            untimed: None,
        })
    }
}

/// fio's fixup_options: an `iodepth_low` of 0 (like unset or above iodepth) keeps the queue
/// full.
fn iodepth_low(spec: &JobSpec) -> u32 {
    spec.engine
        .iodepth_low
        .filter(|&low| low > 0)
        .unwrap_or(spec.engine.iodepth)
        .min(spec.engine.iodepth)
}

/// A clone's thinktime state before its first I/O.
fn thinking(spec: &JobSpec) -> Thinking {
    Thinking {
        state: Think::Running,
        on: spec.rate.thinktime_ns > 0,
        issued: 0,
        completed: 0,
        last_blocks: 0,
        last_ns: 0,
        after_reap: false,
        ddir: 0,
    }
}

/// The host-side cost model of a clone: its ioengine's profile, or none.
fn host_model(spec: &JobSpec, options: &RunOptions, seeds: &SeedTree) -> crate::host::Host {
    crate::host::Host::new(
        match options.host {
            crate::host::HostModel::Engine => {
                crate::host::HostProfile::for_engine(&spec.engine.ioengine)
            }
            crate::host::HostModel::Off => crate::host::HostProfile::NONE,
        },
        seeds.child("host").stream(),
    )
}

/// The clone's `write_iolog`, its lines naming the job's file (or `JOB.CLONE.0`).
fn iolog(spec: &JobSpec, clone_index: u32) -> Option<IoLog> {
    spec.log.write_iolog.as_ref().map(|path| {
        let default_name = format!("{}.{}.0", spec.id.name, clone_index);
        IoLog::new(
            path,
            spec.target.filename.as_deref().unwrap_or(&default_name),
        )
    })
}

/// A time_based job needs a runtime: it would never end.
fn check_bounded(file: &JobFile, spec: &JobSpec) -> Result<(), RunError> {
    if spec.time.time_based && spec.time.runtime_ns.is_none() {
        return Err(RunError::Unbounded {
            file: job_place(file, spec),
            line: job_line(spec),
            job: spec.id.name.clone(),
        });
    }
    Ok(())
}

/// fio 3.33 refuses a group_reporting job whose lat_percentiles differs from the job before
/// it in its group ("lat_percentiles in job: b differs from group"): one group reports one
/// kind of latency percentiles. `group_members`: the jobs before it in its group.
fn check_group_percentiles(
    file: &JobFile,
    spec_index: usize,
    group_members: u32,
) -> Result<(), RunError> {
    let spec = &file.jobs[spec_index];
    if spec.report.group_reporting && group_members > 0 {
        let prev = &file.jobs[spec_index - 1];
        if prev.report.lat_percentiles != spec.report.lat_percentiles {
            return Err(RunError::ReportGroup {
                file: job_place(file, spec),
                line: job_line(spec),
                job: spec.id.name.clone(),
                why: format!(
                    "lat_percentiles={} differs from job '{}' before it in its reporting group (group_reporting): fio refuses such a group; give both the same lat_percentiles, or start a new group (new_group or stonewall)",
                    u8::from(spec.report.lat_percentiles),
                    prev.id.name
                ),
            });
        }
    }
    Ok(())
}

/// A clone's statistics as its job configures them.
pub(super) fn job_stats(spec: &JobSpec, groupid: u32, job_index: u32) -> JobStats {
    let mut stats = JobStats::new(stats_config(spec, groupid, job_index));
    // fio reports the depth written, also when a synchronous engine capped it.
    stats.set_iodepth(
        spec.engine
            .iodepth_capped_from
            .unwrap_or(spec.engine.iodepth)
            .max(1),
    );
    if spec.engine.synchronous {
        stats.set_synchronous();
    }
    stats.set_presentation(
        usize::from(spec.report.significant_figures.clamp(1, 10)),
        spec.report.unit_base_bits,
    );
    stats.set_unified(match spec.report.unified_rw_reporting {
        0 => Unified::None,
        1 => Unified::Mixed,
        _ => Unified::Both,
    });
    stats.set_disabled(Disabled {
        lat: spec.report.disable_lat,
        clat: spec.report.disable_clat,
        slat: spec.report.disable_slat,
        bw: spec.report.disable_bw,
    });
    stats
}

/// fio's wait_for: a job starts only once every clone of the named earlier job has exited
/// (`waitee_running`); the parser has checked that such a job comes first. Marks the clones
/// that wait and their waitees; whether any waits.
fn link_waiters(clones: &mut [JobClone]) -> bool {
    let mut has_waiters = false;
    for w in 0..clones.len() {
        let Some(name) = clones[w].spec.control.wait_for.as_deref() else {
            continue;
        };
        let phase = clones[w].phase;
        let waitees: Vec<usize> = (0..w)
            .filter(|&j| clones[j].phase == phase && clones[j].spec.id.name == name)
            .filter(|&j| clones[j].spec_index != clones[w].spec_index)
            .collect();
        has_waiters |= !waitees.is_empty();
        clones[w].life = Lifecycle::new(!waitees.is_empty());
        clones[w].waitees = waitees;
    }
    has_waiters
}

/// Which phases run without the timing model: those of the jobs `options.untimed_jobs`
/// names, each checked to be one whose I/Os, and so the state they leave, do not depend on
/// time: alone in its phase (one clone, stonewalled from the jobs around it), writing or
/// trimming only, ended by its size (no runtime), with nothing paced, flushed, logged,
/// verified or judged by time or latency.
fn untimed_phases<T: Targets + ?Sized>(
    file: &JobFile,
    clones: &[JobClone],
    phases: &[(usize, usize)],
    zbd_jobs: &[Option<crate::zbd::ZbdJob>],
    device: &T,
    options: &RunOptions,
) -> Result<Vec<bool>, RunError> {
    let mut untimed = vec![false; phases.len()];
    for name in &options.untimed_jobs {
        let Some(first) = clones.iter().position(|c| c.spec.id.name == *name) else {
            let valid: Vec<&str> = file.jobs.iter().map(|j| j.id.name.as_str()).collect();
            return Err(RunError::Untimed {
                file: file.path.clone(),
                line: 0,
                job: name.clone(),
                why: format!("the file has no such job; its jobs: {}", valid.join(", ")),
            });
        };
        let c = &clones[first];
        let spec = c.spec;
        let (lo, hi) = phases[c.phase];
        let why = if hi - lo > 1 {
            Some(if spec.control.numjobs > 1 {
                "it has clones (numjobs above 1); valid: numjobs=1".to_string()
            } else {
                "it runs beside other jobs; valid: stonewall on it and on the job after it"
                    .to_string()
            })
        } else if spec.io.rw.directions()[0] {
            Some("it reads, and reads are measured, never untimed".into())
        } else if spec.time.time_based || spec.time.runtime_ns.is_some() {
            Some("it ends by time (runtime or time_based); valid: a job ended by its size".into())
        } else if spec.time.startdelay_ns > 0 {
            Some("it starts after a delay (startdelay)".into())
        } else if !c.plain {
            Some(
                "its I/Os are paced or flushed (rate, thinktime, fsync, FUA or serialize_overlap)"
                    .into(),
            )
        } else if c.verify.is_some()
            || c.iolog.is_some()
            || c.steady.is_some()
            || spec.latency.latency_target_ns > 0
            || spec.latency.max_latency_ns != [0; 3]
        {
            Some("it verifies, records an iolog, or judges a steady state or its latencies".into())
        } else if spec.log.write_bw_log.is_some()
            || spec.log.write_lat_log.is_some()
            || spec.log.write_iops_log.is_some()
            || spec.log.write_hist_log.is_some()
        {
            Some("it writes logs over time".into())
        } else if c.data_placement.is_some()
            || c.flow.is_some()
            || zbd_jobs.get(first).is_some_and(Option::is_some)
        {
            Some("it writes with placement identifiers, flow control or zones".into())
        } else {
            device
                .untimed_refusal(c.target)
                .map(|why| format!("the device refuses: {why}"))
        };
        if let Some(why) = why {
            return Err(RunError::Untimed {
                file: job_place(file, spec),
                line: job_line(spec),
                job: name.clone(),
                why,
            });
        }
        untimed[c.phase] = true;
    }
    Ok(untimed)
}

/// Every clone writing an iolog writes its own file, and only a drive simulated whole: a
/// slice's offsets and times are not the drive's.
fn check_iologs(file: &JobFile, clones: &[JobClone], plan: &ScalePlan) -> Result<(), RunError> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for c in clones {
        let Some(path) = c.spec.log.write_iolog.as_deref() else {
            continue;
        };
        let bad = |why: String| RunError::Iolog {
            file: job_place(file, c.spec),
            line: job_line(c.spec),
            job: c.spec.id.name.clone(),
            why,
        };
        if !plan.scale.is_full() {
            return Err(bad(format!(
                "write_iolog={path} records I/Os, but the drive runs as a slice (its offsets and times are not the drive's); valid: the drive at full scale (--set sim.scale=1)"
            )));
        }
        if let Some((_, other)) = seen.iter().find(|(p, _)| *p == path) {
            return Err(bad(format!(
                "write_iolog={path} is also written by job '{other}' (or another clone of this job: numjobs); valid: a file of its own for each job, and numjobs=1"
            )));
        }
        seen.push((path, &c.spec.id.name));
    }
    Ok(())
}

/// Where a job was defined, for messages: its own origin (a command-line argument, a file of
/// a command line) or the job file's path, with `job_line` as the line (0 with an origin).
pub(super) fn job_place(file: &JobFile, spec: &JobSpec) -> String {
    spec.id.origin.clone().unwrap_or_else(|| file.path.clone())
}

pub(super) fn job_line(spec: &JobSpec) -> usize {
    if spec.id.origin.is_some() {
        0
    } else {
        spec.id.line
    }
}

/// Most one-second samples the steady-state windows of a run keep (16 bytes each).
const MAX_STEADY_SAMPLES: u64 = 1 << 22;

/// The steady-state detections the jobs ask for: one per clone, or one per reporting group
/// for clones that report as a group (fio requires their options to agree).
fn steady_trackers(
    file: &JobFile,
    clones: &mut [JobClone],
    plan: &ScalePlan,
) -> Result<Vec<SteadyTracker>, RunError> {
    let mut trackers: Vec<SteadyTracker> = Vec::new();
    let mut window_samples = 0u64;
    // The reporting group being gathered: its id, its first clone, and its tracker if the
    // detection is on.
    let mut group: Option<(u32, usize, Option<usize>)> = None;
    for i in 0..clones.len() {
        let c = &clones[i];
        let ss = c.spec.steadystate;
        let bad = |why: String| RunError::SteadyState {
            file: job_place(file, c.spec),
            line: job_line(c.spec),
            job: c.spec.id.name.clone(),
            why,
        };
        let in_group = c.spec.report.group_reporting;
        match group {
            Some((gid, first, tracker)) if in_group && gid == c.groupid => {
                let first = &clones[first].spec;
                if first.steadystate != ss {
                    return Err(bad(format!(
                        "steadystate options must be the same for every job of a reporting group (group {gid} has those of job '{}')",
                        first.id.name
                    )));
                }
                if let Some(t) = tracker {
                    trackers[t].members.push(i);
                    clones[i].steady = Some(t as u32);
                }
                continue;
            }
            _ => group = None,
        }
        let tracker = if ss.enabled() {
            window_samples += u64::from(ss.duration_s);
            if window_samples > MAX_STEADY_SAMPLES {
                return Err(bad(format!(
                    "the steady-state windows of the run's clones hold more than {MAX_STEADY_SAMPLES} one-second samples ({} MiB); valid: a shorter steadystate_duration, fewer clones, or group_reporting (one window per group)",
                    (MAX_STEADY_SAMPLES * 16) >> 20
                )));
            }
            let scale = &plan.jobs[c.spec_index];
            let tracker =
                SteadyTracker::new(ss, vec![i], scale.time_factor, scale.back.count_factor)
                    .map_err(bad)?;
            clones[i].steady = Some(trackers.len() as u32);
            trackers.push(tracker);
            Some(trackers.len() - 1)
        } else {
            None
        };
        if in_group {
            group = Some((clones[i].groupid, i, tracker));
        }
    }
    Ok(trackers)
}

fn stats_config(spec: &JobSpec, groupid: u32, job_index: u32) -> JobStatsConfig {
    JobStatsConfig {
        jobname: spec.id.name.clone(),
        groupid,
        job_index,
        job_options: spec.id.options_as_written.clone(),
        percentile_list: if spec.report.percentile_list.is_empty() {
            DEFAULT_PERCENTILES.to_vec()
        } else {
            spec.report.percentile_list.clone()
        },
        percentile_precision: spec.report.percentile_precision,
        // fio's fixup_options: a latency not measured has no percentiles.
        percentiles: PercentileKinds {
            clat: spec.report.clat_percentiles && !spec.report.disable_clat,
            lat: spec.report.lat_percentiles && !spec.report.disable_lat,
            slat: spec.report.slat_percentiles && !spec.report.disable_slat,
        },
        logs: LogConfig {
            bw_prefix: spec.log.write_bw_log.clone(),
            lat_prefix: spec.log.write_lat_log.clone(),
            iops_prefix: spec.log.write_iops_log.clone(),
            log_avg_msec: spec.log.log_avg_msec,
            hist_prefix: spec.log.write_hist_log.clone(),
            log_hist_msec: spec.log.log_hist_msec,
            log_hist_coarseness: spec.log.log_hist_coarseness,
            bw_avg_ms: spec.log.bw_avg_ms,
            iops_avg_ms: spec.log.iops_avg_ms,
            log_offset: spec.log.log_offset,
            log_max_value: spec.log.log_max_value,
            shared_logs: !spec.log.per_job_logs,
        },
        description: spec.id.description.clone(),
    }
}
