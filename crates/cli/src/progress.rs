//! Progress on standard error: a line redrawn in place on a terminal, or a plain line every
//! interval for logs (`--progress`, and fio's `--eta*` on `flashlab fio`). The wall clock
//! lives here only: it paces the display and estimates the time left, and never touches the
//! simulation, standard output or a result file.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use flashlab_runner::Progress;
use flashlab_suite::{SuiteProgress, SuiteShare};

/// A redrawn line is redrawn at most this often (fio's smallest `--eta-interval`).
const REDRAW_EVERY: Duration = Duration::from_millis(250);

/// Plain lines come this often unless `--progress-interval` says otherwise.
pub const DEFAULT_LINE_EVERY: Duration = Duration::from_secs(10);

/// The longest interval taken: a day (a longer one would print nothing a run could wait for).
const MAX_INTERVAL: Duration = Duration::from_secs(86_400);

/// `--progress`: when progress is shown.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum When {
    /// A redrawn line on a terminal; elsewhere a plain line every interval.
    #[default]
    Auto,
    /// As auto, and off a terminal also a line when the run starts and when it ends, so a
    /// run shorter than the interval logs its progress too.
    Always,
    /// No progress.
    Never,
}

/// `--progress` and `--progress-interval`, shared by `run`, `replay` and `suite`.
#[derive(clap::Args, Debug, Clone)]
pub struct ProgressArgs {
    /// Progress on standard error (never on standard output or in result files): auto (a
    /// redrawn line on a terminal, elsewhere a plain line every --progress-interval with the
    /// step, share done, simulated time and an estimate of the time left), always (as auto,
    /// plus a first and a last line off a terminal) or never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = When::Auto)]
    pub progress: When,
    /// Wall time between plain progress lines: 10 (seconds), 10s, 500ms, 2m, 1h.
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = parse_interval)]
    pub progress_interval: Duration,
}

impl ProgressArgs {
    pub fn settings(&self) -> Settings {
        Settings::new(self.progress, self.progress_interval)
    }
}

/// How a display draws, for a terminal and for anything else (a file, a pipe, a CI log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Off,
    /// One line redrawn in place, at most this often.
    Redraw(Duration),
    /// A plain line every `every`; with `bookends` also one at the start and one at the end.
    Lines {
        every: Duration,
        bookends: bool,
    },
}

/// The display a command's options ask for, before knowing where standard error goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub terminal: Style,
    pub other: Style,
}

impl Default for Settings {
    fn default() -> Self {
        Self::new(When::Auto, DEFAULT_LINE_EVERY)
    }
}

impl Settings {
    /// `--progress WHEN --progress-interval EVERY`.
    pub fn new(when: When, every: Duration) -> Self {
        let lines = |bookends| Style::Lines { every, bookends };
        match when {
            When::Auto => Self {
                terminal: Style::Redraw(REDRAW_EVERY),
                other: lines(false),
            },
            When::Always => Self {
                terminal: Style::Redraw(REDRAW_EVERY),
                other: lines(true),
            },
            When::Never => Self {
                terminal: Style::Off,
                other: Style::Off,
            },
        }
    }

    /// fio's `--eta=WHEN` (auto: on a terminal only, fio's default; always: elsewhere too;
    /// never), `--eta-interval=TIME` (how often the estimate is updated: the redraw's pace,
    /// and the lines' off a terminal) and `--eta-newline=TIME` (a new line every TIME
    /// instead of redrawing one).
    pub fn fio(eta: When, interval: Option<Duration>, newline: Option<Duration>) -> Self {
        let redraw = Style::Redraw(interval.unwrap_or(REDRAW_EVERY).max(REDRAW_EVERY));
        let terminal = match newline {
            Some(every) => Style::Lines {
                every,
                bookends: false,
            },
            None => redraw,
        };
        let other = Style::Lines {
            every: newline.or(interval).unwrap_or(DEFAULT_LINE_EVERY),
            bookends: false,
        };
        match eta {
            When::Auto => Self {
                terminal,
                other: Style::Off,
            },
            When::Always => Self { terminal, other },
            When::Never => Self {
                terminal: Style::Off,
                other: Style::Off,
            },
        }
    }

    /// The style for standard error as it is.
    pub fn style(&self) -> Style {
        if std::io::stderr().is_terminal() {
            self.terminal
        } else {
            self.other
        }
    }
}

/// A wall-clock interval: a number with `ms`, `s`, `m` or `h`, or a bare number of seconds
/// (fio's rule for times), from 1 ms to a day.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale_s = match unit.trim() {
        "" | "s" => 1.0,
        "ms" | "msec" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    let secs = number
        .parse::<f64>()
        .map(|n| n * scale_s)
        .unwrap_or(f64::NAN);
    let bad = || {
        format!(
            "{:?}: expected a time from 1ms to 24h: a number with ms, s, m or h (a bare number is seconds), e.g. 10, 10s, 500ms, 2m",
            flashlab_engine::input::excerpt(text)
        )
    };
    if !(1e-3..=MAX_INTERVAL.as_secs_f64()).contains(&secs) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// One line of a display, in full (for logs and wide terminals) and short (for a narrow
/// terminal: the figures first, the names and the reasoning behind an estimate dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    full: String,
    short: String,
}

/// At most this many lines, one per device, are redrawn; more devices share one summary line.
const MAX_REDRAWN_LINES: usize = 8;

/// The lines a terminal of `rows` by `cols` shows for `entries`: one per entry, or `summary`
/// alone when they would not fit (at most [`MAX_REDRAWN_LINES`], and two rows left for the
/// command line above), each cut to `cols - 1` columns. The last column stays empty: a
/// terminal that wraps on reaching it would scroll, and the redraw would leave the old line.
fn layout(entries: &[Entry], summary: &Entry, rows: u16, cols: u16) -> Vec<String> {
    let width = usize::from(cols).saturating_sub(1).max(1);
    let lines = usize::from(rows)
        .saturating_sub(2)
        .clamp(1, MAX_REDRAWN_LINES);
    if entries.len() <= lines {
        entries.iter().map(|e| fit(e, width)).collect()
    } else {
        vec![fit(summary, width)]
    }
}

/// `entry` in at most `width` columns: in full if it fits, else short, else the short form
/// cut with an ellipsis.
fn fit(entry: &Entry, width: usize) -> String {
    if console::measure_text_width(&entry.full) <= width {
        entry.full.clone()
    } else {
        console::truncate_str(&entry.short, width, "…").into_owned()
    }
}

/// The lines redrawn in place on a terminal: indicatif draws them (a bar without a bar for
/// each), moves the cursor back over them to redraw and clears them at the end.
struct Screen {
    multi: indicatif::MultiProgress,
    bars: Vec<indicatif::ProgressBar>,
}

impl Screen {
    fn new(target: indicatif::ProgressDrawTarget) -> Self {
        Self {
            multi: indicatif::MultiProgress::with_draw_target(target),
            bars: Vec::new(),
        }
    }

    /// The terminal's size as (rows, cols); 24 by 80 when it does not say.
    fn size() -> (u16, u16) {
        console::Term::stderr()
            .size_checked()
            .filter(|&(rows, cols)| rows > 0 && cols > 0)
            .unwrap_or((24, 80))
    }

    fn show(&mut self, lines: Vec<String>) {
        while self.bars.len() > lines.len() {
            if let Some(bar) = self.bars.pop() {
                bar.finish_and_clear();
                self.multi.remove(&bar);
            }
        }
        while self.bars.len() < lines.len() {
            let style = indicatif::ProgressStyle::with_template("{msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
            let bar = self
                .multi
                .add(indicatif::ProgressBar::no_length().with_style(style));
            self.bars.push(bar);
        }
        for (bar, line) in self.bars.iter().zip(lines) {
            bar.set_message(line);
        }
    }

    fn clear(&mut self) {
        for bar in self.bars.drain(..) {
            bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}

/// Where the next lines go and when: shared by the run and the suite displays.
struct Pacer {
    style: Style,
    started: Instant,
    last: Option<Instant>,
    /// The redrawn lines, once drawn (cleared at the end).
    screen: Option<Screen>,
}

impl Pacer {
    fn new(style: Style) -> Self {
        Self {
            style,
            started: Instant::now(),
            last: None,
            screen: None,
        }
    }

    fn enabled(&self) -> bool {
        self.style != Style::Off
    }

    /// Whether a line is due at `now`; if so, it counts as drawn.
    fn due(&mut self, now: Instant) -> bool {
        let due = match self.style {
            Style::Off => false,
            Style::Redraw(every) => self.last.is_none_or(|last| now - last >= every),
            Style::Lines { every, bookends } => match self.last {
                None if bookends => true,
                None => now - self.started >= every,
                Some(last) => now - last >= every,
            },
        };
        if due {
            self.last = Some(now);
        }
        due
    }

    /// Shows `entries`: redrawn and fitted to the terminal, or logged in full on one line.
    fn write(&mut self, now: Instant, entries: &[Entry], summary: &Entry) {
        match self.style {
            Style::Off => {}
            Style::Redraw(_) => {
                let (rows, cols) = Screen::size();
                let screen = self
                    .screen
                    .get_or_insert_with(|| Screen::new(indicatif::ProgressDrawTarget::stderr()));
                screen.show(layout(entries, summary, rows, cols));
            }
            Style::Lines { .. } => {
                let line = entries
                    .iter()
                    .map(|e| e.full.as_str())
                    .collect::<Vec<_>>()
                    .join(" | ");
                let mut err = std::io::stderr().lock();
                let _ = writeln!(
                    err,
                    "flashlab: [{}] {line}",
                    format_duration(now - self.started)
                );
                let _ = err.flush();
            }
        }
    }

    /// The end of the run: redrawn lines are cleared so that results start on a clean line;
    /// lines with bookends get their last (`entries`, the state at the end).
    fn finish(&mut self, entries: Option<(Vec<Entry>, Entry)>) {
        match self.style {
            Style::Redraw(_) => {
                if let Some(screen) = self.screen.as_mut() {
                    screen.clear();
                }
            }
            Style::Lines { bookends: true, .. } => {
                if let Some((entries, summary)) = entries {
                    self.write(Instant::now(), &entries, &summary);
                }
            }
            _ => {}
        }
    }
}

/// What the run display last heard, kept for the line at the end.
#[derive(Debug, Clone, Default)]
struct RunState {
    now_ns: u64,
    fraction_done: f64,
    phase: usize,
    phases: usize,
    jobs: String,
}

/// The progress of one run (`run`, `fio`, `replay`): phase, jobs, share done, simulated time
/// and the wall time left.
pub struct ProgressLine {
    pacer: Pacer,
    state: Option<RunState>,
}

impl ProgressLine {
    pub fn new(settings: &Settings) -> Self {
        Self {
            pacer: Pacer::new(settings.style()),
            state: None,
        }
    }

    pub fn update(&mut self, p: &Progress) {
        if !self.pacer.enabled() {
            return;
        }
        let st = self.state.get_or_insert_with(RunState::default);
        if st.jobs.is_empty() || st.phase != p.phase {
            st.jobs = p.jobs.to_string();
        }
        st.now_ns = p.now_ns;
        st.fraction_done = p.fraction_done;
        st.phase = p.phase;
        st.phases = p.phases;
        let now = Instant::now();
        if self.pacer.due(now) {
            let entry = run_entry(st, now - self.pacer.started);
            self.pacer.write(now, std::slice::from_ref(&entry), &entry);
        }
    }

    /// The run is over: clear a redrawn line, or log the last state.
    pub fn finish(&mut self) {
        let elapsed = self.pacer.started.elapsed();
        let entry = self.state.as_ref().map(|st| run_entry(st, elapsed));
        self.pacer.finish(entry.map(|e| (vec![e.clone()], e)));
    }
}

/// The run's line, and its short form with the jobs' names last (a cut takes them first).
fn run_entry(st: &RunState, elapsed: Duration) -> Entry {
    Entry {
        full: format_line(st, elapsed),
        short: format!(
            "[{}/{}] {:.1}%, sim {:.3} s{}: {}",
            st.phase + 1,
            st.phases,
            st.fraction_done * 100.0,
            st.now_ns as f64 / 1e9,
            eta_text(st.fraction_done, elapsed).replace("not yet known", "?"),
            st.jobs
        ),
    }
}

/// `[1/2] a, b:  25.0% done, simulated 1.500 s, ETA 0m03s`.
fn format_line(st: &RunState, elapsed: Duration) -> String {
    let mut line = format!(
        "[{}/{}] {}: {:5.1}% done, simulated {:.3} s",
        st.phase + 1,
        st.phases,
        st.jobs,
        st.fraction_done * 100.0,
        st.now_ns as f64 / 1e9
    );
    line.push_str(&eta_text(st.fraction_done, elapsed));
    line
}

/// `, ETA 1m05s` once enough is done to tell.
fn eta_text(fraction: f64, elapsed: Duration) -> String {
    eta(fraction, elapsed).map_or_else(
        || ", ETA not yet known".to_string(),
        |d| format!(", ETA {}", format_duration(d)),
    )
}

/// What the suite display knows of one device.
#[derive(Debug, Clone)]
struct DeviceState {
    device: String,
    step: String,
    step_number: usize,
    round: Option<usize>,
    max_rounds: Option<usize>,
    sim_ns: u64,
    step_fraction: f64,
    suite_fraction: Option<f64>,
    /// What `suite_fraction` is a share of.
    suite_basis: SuiteShare,
    step_started: Instant,
    /// When the first of the current run of rounds started.
    rounds_started: Option<Instant>,
}

struct Board {
    devices: Vec<Option<DeviceState>>,
    pacer: Pacer,
}

/// One progress line for a suite on several devices (each on its own thread): per device its
/// step, round, simulated time, share done and an estimate of the wall time left.
pub struct SuiteProgressLine {
    board: Mutex<Board>,
}

impl SuiteProgressLine {
    pub fn new(settings: &Settings, devices: usize) -> Self {
        Self {
            board: Mutex::new(Board {
                devices: vec![None; devices],
                pacer: Pacer::new(settings.style()),
            }),
        }
    }

    pub fn update(&self, device: usize, p: &SuiteProgress) {
        // A display that panicked once draws nothing more; the run goes on.
        let Ok(mut board) = self.board.lock() else {
            return;
        };
        if !board.pacer.enabled() {
            return;
        }
        let now = Instant::now();
        if let Some(slot) = board.devices.get_mut(device) {
            let same_step = slot
                .as_ref()
                .is_some_and(|st| !p.step_started && st.step_number == p.step_number);
            let step_started = match slot {
                Some(st) if same_step => st.step_started,
                _ => now,
            };
            let rounds_started = match (slot.as_ref(), p.round) {
                (_, None) => None,
                (Some(st), Some(_)) if st.round.is_some() => st.rounds_started,
                (_, Some(_)) => Some(now),
            };
            *slot = Some(DeviceState {
                device: p.device.to_string(),
                step: p.step.to_string(),
                step_number: p.step_number,
                round: p.round,
                max_rounds: p.max_rounds,
                sim_ns: p.sim_ns,
                step_fraction: p.step_fraction,
                suite_fraction: p.suite_fraction,
                suite_basis: p.suite_basis,
                step_started,
                rounds_started,
            });
        }
        if board.pacer.due(now) {
            let (entries, summary) = board_entries(&board.devices, now, board.pacer.started);
            board.pacer.write(now, &entries, &summary);
        }
    }

    /// The suite is over: clear a redrawn line, or log the last state (every step and the
    /// suite's known share complete when it `succeeded`).
    pub fn finish(&self, succeeded: bool) {
        let Ok(mut board) = self.board.lock() else {
            return;
        };
        if succeeded {
            for st in board.devices.iter_mut().flatten() {
                st.step_fraction = 1.0;
                st.suite_fraction = st.suite_fraction.map(|_| 1.0);
                st.suite_basis = match st.suite_basis {
                    SuiteShare::Steps { .. } => SuiteShare::Steps {
                        rounds_at_most: false,
                    },
                    w => w,
                };
            }
        }
        let now = Instant::now();
        let entries = board
            .devices
            .iter()
            .any(Option::is_some)
            .then(|| board_entries(&board.devices, now, board.pacer.started));
        board.pacer.finish(entries);
    }
}

/// A line for each device that has reported, and the summary that stands for them all when
/// there are too many to redraw: their number and the least advanced one.
fn board_entries(
    devices: &[Option<DeviceState>],
    now: Instant,
    started: Instant,
) -> (Vec<Entry>, Entry) {
    let reported: Vec<&DeviceState> = devices.iter().flatten().collect();
    let entries: Vec<Entry> = reported
        .iter()
        .map(|st| {
            let rounds = st.rounds_started.map(|t| now.duration_since(t));
            format_device(
                st,
                now.duration_since(st.step_started),
                rounds,
                now.duration_since(started),
            )
        })
        .collect();
    let advance = |st: &DeviceState| {
        (
            st.suite_fraction.unwrap_or(0.0),
            st.step_number,
            st.step_fraction,
        )
    };
    let slowest = (0..reported.len()).min_by(|&a, &b| {
        advance(reported[a])
            .partial_cmp(&advance(reported[b]))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let text = match slowest {
        Some(i) => format!(
            "{} devices, least advanced: {}",
            reported.len(),
            entries[i].short
        ),
        None => String::new(),
    };
    let summary = Entry {
        full: text.clone(),
        short: text,
    };
    (entries, summary)
}

/// A sweep's progress: a line as each point ends (points run on several threads), with the
/// points done, the share and the wall time left at the pace so far.
pub struct PointsProgress {
    enabled: bool,
    total: usize,
    started: Instant,
    done: std::sync::atomic::AtomicUsize,
}

impl PointsProgress {
    pub fn new(enabled: bool, total: usize) -> Self {
        Self {
            enabled,
            total,
            started: Instant::now(),
            done: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Point `index` ended (`what`: ran, skipped, failed …).
    pub fn point_done(&self, index: u64, what: &str) {
        let n = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if self.enabled {
            eprintln!(
                "flashlab: sweep point {index}: {what} ({})",
                points_text(n, self.total, self.started.elapsed())
            );
        }
    }
}

/// `3/10, 30%, ETA 0m14s`.
fn points_text(done: usize, total: usize, elapsed: Duration) -> String {
    let f = if total == 0 {
        1.0
    } else {
        done as f64 / total as f64
    };
    format!("{done}/{total}, {:.0}%{}", f * 100.0, eta_text(f, elapsed))
}

/// Wall time left at this rate, once enough is done to tell (1%); none once all is done.
fn eta(fraction: f64, elapsed: Duration) -> Option<Duration> {
    if fraction >= 1.0 {
        return Some(Duration::ZERO);
    }
    (fraction >= 0.01).then(|| elapsed.mul_f64((1.0 - fraction) / fraction))
}

fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// `drive: step 7 round-03 (3/25)  45.2%, simulated 12.3 min, ` then the time left, as well
/// as the device's session knows it:
/// - a suite that measures its own work: `suite 25%, ETA 5m00s`;
/// - a suite that planned its steps: `suite 25% of its steps, ETA ~5m00s`, a guess (steps
///   differ in length); while repeated rounds count at their most, `suite at least 25% of
///   its steps (rounds counted at their most), ETA ~5m00s`;
/// - a run of rounds with a most: `rounds ~12%, ETA ~4m10s (guess: up to 25 rounds)`, an
///   upper bound on the rounds (steady state may come sooner), not counting steps after them;
/// - otherwise the step's own: `ETA at least 0m10s (this step; the suite's length is not
///   known)`.
fn format_device(
    st: &DeviceState,
    in_step: Duration,
    in_rounds: Option<Duration>,
    in_suite: Duration,
) -> Entry {
    let rounds = match (st.round, st.max_rounds) {
        (Some(r), Some(m)) => format!(" ({r}/{m})"),
        (Some(r), None) => format!(" ({r})"),
        _ => String::new(),
    };
    let (left, short_left) = time_left(st, in_step, in_rounds, in_suite);
    Entry {
        full: format!(
            "{}: step {} {}{rounds} {:5.1}%, simulated {:.1} min, {left}",
            st.device,
            st.step_number,
            st.step,
            st.step_fraction * 100.0,
            st.sim_ns as f64 / 60e9
        ),
        short: format!(
            "{}: {} {}{rounds} {:.0}%, {short_left}",
            st.device,
            st.step_number,
            st.step,
            st.step_fraction * 100.0
        ),
    }
}

/// The device line's estimate of the time left, in full and short (`~` a guess, `≥` a lower
/// bound, `?` not yet known).
fn time_left(
    st: &DeviceState,
    in_step: Duration,
    in_rounds: Option<Duration>,
    in_suite: Duration,
) -> (String, String) {
    // `mark`: what the time is (`~` a guess, `at least ` a lower bound).
    let eta_of = |mark: &str, d: Option<Duration>| match d {
        Some(d) => format!("ETA {mark}{}", format_duration(d)),
        None => "ETA not yet known".to_string(),
    };
    let short_eta = |mark: &str, d: Option<Duration>| match d {
        Some(d) => format!("ETA {mark}{}", format_duration(d)),
        None => "ETA ?".to_string(),
    };
    match (st.suite_fraction, st.round, st.max_rounds, in_rounds) {
        (Some(f), ..) => {
            let pct = f * 100.0;
            match st.suite_basis {
                SuiteShare::Work => {
                    let d = eta(f, in_suite);
                    (
                        format!("suite {pct:.0}%, {}", eta_of("", d)),
                        format!("suite {pct:.0}%, {}", short_eta("", d)),
                    )
                }
                SuiteShare::Steps { rounds_at_most } => {
                    let d = eta(f, in_suite);
                    let (least, most) = if rounds_at_most {
                        ("at least ", " (rounds counted at their most)")
                    } else {
                        ("", "")
                    };
                    let floor = if rounds_at_most { "≥" } else { "" };
                    (
                        format!(
                            "suite {least}{pct:.0}% of its steps{most}, {}",
                            eta_of("~", d)
                        ),
                        format!("suite {floor}{pct:.0}%, {}", short_eta("~", d)),
                    )
                }
            }
        }
        (None, Some(r), Some(m), Some(t)) if m > 0 => {
            let f = ((r.saturating_sub(1)) as f64 + st.step_fraction) / m as f64;
            let d = eta(f, t);
            (
                format!(
                    "rounds ~{:.0}%, {} (guess: up to {m} rounds)",
                    f * 100.0,
                    eta_of("~", d)
                ),
                format!("rounds ~{:.0}%, {}", f * 100.0, short_eta("~", d)),
            )
        }
        _ => {
            let d = eta(st.step_fraction, in_step);
            (
                format!(
                    "{} (this step; the suite's length is not known)",
                    eta_of("at least ", d)
                ),
                short_eta("≥", d),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> DeviceState {
        DeviceState {
            device: "tiny".into(),
            step: "round-03".into(),
            step_number: 5,
            round: Some(3),
            max_rounds: Some(25),
            sim_ns: 90_000_000_000,
            step_fraction: 0.5,
            suite_fraction: None,
            suite_basis: SuiteShare::Work,
            step_started: Instant::now(),
            rounds_started: Some(Instant::now()),
        }
    }

    #[test]
    fn suite_line_says_how_it_knows_the_time_left() {
        let secs = Duration::from_secs;
        let st = state();
        // Rounds 1 and 2 and half of 3 of at most 25 took 25 s: 10 s a round.
        assert_eq!(
            format_device(&st, secs(10), Some(secs(25)), secs(100)).full,
            "tiny: step 5 round-03 (3/25)  50.0%, simulated 1.5 min, rounds ~10%, ETA ~3m45s (guess: up to 25 rounds)"
        );
        let known = DeviceState {
            suite_fraction: Some(0.25),
            round: None,
            ..st.clone()
        };
        assert_eq!(
            format_device(&known, secs(10), None, secs(100)).full,
            "tiny: step 5 round-03  50.0%, simulated 1.5 min, suite 25%, ETA 5m00s"
        );
        let floor = DeviceState {
            suite_fraction: Some(0.25),
            suite_basis: SuiteShare::Steps {
                rounds_at_most: true,
            },
            ..st.clone()
        };
        assert_eq!(
            format_device(&floor, secs(10), Some(secs(25)), secs(100)).full,
            "tiny: step 5 round-03 (3/25)  50.0%, simulated 1.5 min, suite at least 25% of its steps (rounds counted at their most), ETA ~5m00s"
        );
        let planned = DeviceState {
            suite_basis: SuiteShare::Steps {
                rounds_at_most: false,
            },
            round: None,
            ..floor
        };
        assert_eq!(
            format_device(&planned, secs(10), None, secs(100)).full,
            "tiny: step 5 round-03  50.0%, simulated 1.5 min, suite 25% of its steps, ETA ~5m00s"
        );
        let unknown = DeviceState {
            round: None,
            max_rounds: None,
            ..st
        };
        assert_eq!(
            format_device(&unknown, secs(10), None, secs(100)).full,
            "tiny: step 5 round-03  50.0%, simulated 1.5 min, ETA at least 0m10s (this step; the suite's length is not known)"
        );
        let starting = DeviceState {
            step_fraction: 0.0,
            ..unknown
        };
        assert!(format_device(&starting, secs(0), None, secs(1))
            .full
            .ends_with("ETA not yet known (this step; the suite's length is not known)"));
    }

    fn width(line: &str) -> usize {
        console::measure_text_width(line)
    }

    #[test]
    fn redrawn_lines_fit_the_terminal_one_per_device_or_a_summary() {
        let secs = Duration::from_secs;
        let device = |name: &str, step_number| DeviceState {
            device: name.into(),
            step_number,
            ..state()
        };
        let entries: Vec<Entry> = ["samsung-pm981a-256gb", "micron-7450-pro-960gb"]
            .iter()
            .map(|n| format_device(&device(n, 7), secs(10), Some(secs(25)), secs(100)))
            .collect();
        assert!(entries.iter().all(|e| width(&e.full) > 100), "{entries:?}");
        let summary = Entry {
            full: "2 devices".into(),
            short: "2 devices".into(),
        };
        // 80 columns: each device on its own line in at most 79 (the last column stays
        // empty), the figures kept and the reasoning dropped.
        let lines = layout(&entries, &summary, 24, 80);
        assert_eq!(
            lines,
            [
                "samsung-pm981a-256gb: 7 round-03 (3/25) 50%, rounds ~10%, ETA ~3m45s",
                "micron-7450-pro-960gb: 7 round-03 (3/25) 50%, rounds ~10%, ETA ~3m45s"
            ]
        );
        // Wide enough: the full lines, unchanged.
        let wide = layout(&entries, &summary, 24, 200);
        assert_eq!(wide, [entries[0].full.clone(), entries[1].full.clone()]);
        // Narrower than the short form: cut with an ellipsis at the width.
        for line in layout(&entries, &summary, 24, 30) {
            assert_eq!(width(&line), 29, "{line}");
            assert!(line.ends_with('…'), "{line}");
        }
        // A single column still draws one character, never an empty or wrapping line.
        assert!(layout(&entries, &summary, 24, 1)
            .iter()
            .all(|l| width(l) == 1));
    }

    #[test]
    fn too_many_devices_for_the_terminal_share_one_summary_line() {
        let secs = Duration::from_secs;
        let devices: Vec<Option<DeviceState>> = (0..12)
            .map(|i| {
                Some(DeviceState {
                    device: format!("drive-{i:02}"),
                    step_fraction: if i == 4 { 0.1 } else { 0.5 },
                    ..state()
                })
            })
            .collect();
        let now = Instant::now();
        let (entries, summary) = board_entries(&devices, now, now - secs(100));
        assert_eq!(entries.len(), 12);
        let lines = layout(&entries, &summary, 24, 80);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("12 devices, least advanced: drive-04: 5 round-03 (3/25) 10%"),
            "{lines:?}"
        );
        assert!(width(&lines[0]) <= 79);
        // Eight fit on a tall terminal, but not on one of five rows (two kept for the prompt).
        let eight = &entries[..8];
        assert_eq!(layout(eight, &summary, 40, 80).len(), 8);
        assert_eq!(layout(&entries[..4], &summary, 5, 80).len(), 1);
        assert_eq!(layout(&entries[..3], &summary, 5, 80).len(), 3);
    }

    #[test]
    fn the_run_line_keeps_its_figures_when_cut() {
        let st = RunState {
            now_ns: 1_500_000_000,
            fraction_done: 0.25,
            phase: 0,
            phases: 2,
            jobs: (0..20)
                .map(|i| format!("job-{i}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let entry = run_entry(&st, Duration::from_secs(3));
        let lines = layout(std::slice::from_ref(&entry), &entry, 24, 80);
        assert_eq!(lines.len(), 1);
        assert_eq!(width(&lines[0]), 79);
        assert!(
            lines[0].starts_with("[1/2] 25.0%, sim 1.500 s, ETA 0m09s: job-0, job-1"),
            "{lines:?}"
        );
    }

    #[test]
    fn eta_waits_for_a_measurable_share() {
        assert_eq!(eta(0.001, Duration::from_secs(1)), None);
        assert_eq!(eta(1.0, Duration::from_secs(1)), Some(Duration::ZERO));
        assert_eq!(
            eta(0.5, Duration::from_secs(7)),
            Some(Duration::from_secs(7))
        );
        assert_eq!(format_duration(Duration::from_secs(3725)), "1h02m");
    }

    #[test]
    fn a_disabled_display_keeps_no_state() {
        let d = SuiteProgressLine::new(&Settings::new(When::Never, DEFAULT_LINE_EVERY), 1);
        let p = SuiteProgress {
            device: "d",
            step: "fill",
            step_number: 1,
            step_started: true,
            round: None,
            max_rounds: None,
            sim_ns: 0,
            step_fraction: 0.0,
            suite_fraction: None,
            suite_basis: SuiteShare::Work,
        };
        d.update(0, &p);
        assert!(d.board.lock().unwrap().devices[0].is_none());
    }

    #[test]
    fn run_line_shows_phase_percent_time_and_eta() {
        let st = RunState {
            now_ns: 1_500_000_000,
            fraction_done: 0.25,
            phase: 0,
            phases: 2,
            jobs: "a, b".into(),
        };
        assert_eq!(
            format_line(&st, Duration::from_secs(3)),
            "[1/2] a, b:  25.0% done, simulated 1.500 s, ETA 0m09s"
        );
        let done = RunState {
            fraction_done: 1.0,
            ..st
        };
        assert!(format_line(&done, Duration::from_secs(3))
            .ends_with("100.0% done, simulated 1.500 s, ETA 0m00s"));
    }

    #[test]
    fn lines_come_every_interval_and_bookends_add_the_first() {
        let every = Duration::from_secs(10);
        let mut plain = Pacer::new(Style::Lines {
            every,
            bookends: false,
        });
        let t0 = plain.started;
        assert!(!plain.due(t0));
        assert!(!plain.due(t0 + Duration::from_secs(9)));
        assert!(plain.due(t0 + Duration::from_secs(10)));
        assert!(!plain.due(t0 + Duration::from_secs(19)));
        assert!(plain.due(t0 + Duration::from_secs(20)));
        let mut logged = Pacer::new(Style::Lines {
            every,
            bookends: true,
        });
        let t0 = logged.started;
        assert!(logged.due(t0));
        assert!(!logged.due(t0 + Duration::from_secs(9)));
        assert!(logged.due(t0 + Duration::from_secs(10)));
        assert!(!Pacer::new(Style::Off).due(t0));
    }

    #[test]
    fn progress_and_fio_eta_options_choose_the_style() {
        let s = Duration::from_secs;
        let auto = Settings::new(When::Auto, s(10));
        assert_eq!(auto.terminal, Style::Redraw(REDRAW_EVERY));
        assert_eq!(
            auto.other,
            Style::Lines {
                every: s(10),
                bookends: false
            }
        );
        assert_eq!(
            Settings::new(When::Always, s(2)).other,
            Style::Lines {
                every: s(2),
                bookends: true
            }
        );
        assert_eq!(Settings::new(When::Never, s(2)).terminal, Style::Off);
        // fio: auto is for a terminal only; always logs elsewhere at --eta-interval.
        let fio_auto = Settings::fio(When::Auto, None, None);
        assert_eq!(fio_auto.other, Style::Off);
        assert_eq!(fio_auto.terminal, Style::Redraw(REDRAW_EVERY));
        let fio_always = Settings::fio(When::Always, Some(s(2)), None);
        assert_eq!(fio_always.terminal, Style::Redraw(s(2)));
        assert_eq!(
            fio_always.other,
            Style::Lines {
                every: s(2),
                bookends: false
            }
        );
        // --eta-newline turns the redrawn line into a line every period.
        let newline = Settings::fio(When::Auto, None, Some(s(5)));
        assert_eq!(
            newline.terminal,
            Style::Lines {
                every: s(5),
                bookends: false
            }
        );
        // Faster than fio's smallest interval is taken as that.
        assert_eq!(
            Settings::fio(When::Auto, Some(Duration::from_millis(10)), None).terminal,
            Style::Redraw(REDRAW_EVERY)
        );
        assert_eq!(
            Settings::fio(When::Never, None, Some(s(5))).terminal,
            Style::Off
        );
    }

    #[test]
    fn sweep_points_show_share_and_eta() {
        assert_eq!(
            points_text(3, 10, Duration::from_secs(6)),
            "3/10, 30%, ETA 0m14s"
        );
        assert_eq!(
            points_text(10, 10, Duration::from_secs(20)),
            "10/10, 100%, ETA 0m00s"
        );
    }

    #[test]
    fn intervals_parse_as_fio_times() {
        assert_eq!(parse_interval("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_interval("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_interval("1h"), Ok(Duration::from_secs(3600)));
        for bad in ["", "0", "fast", "10 parsecs", "2d", "-1", "1e9"] {
            let e = parse_interval(bad).unwrap_err();
            assert!(e.contains("expected a time from 1ms to 24h"), "{bad}: {e}");
        }
    }
}
