//! Reading a job file: lines, comments, `include`, `${ENV}`, sections, and applying the option
//! table to build one [`JobSpec`] per job section.

use std::path::{Path, PathBuf};

use super::error::{ParseError, ParseErrorKind};
use super::options::{
    find_option, nearest_option, validate, Builder, OptionClass, OptionDef, OptionType,
};
use crate::job::{JobFile, JobSpec, RandomDistribution, SizeSpec, SYNCHRONOUS_ENGINES};

/// Includes deeper than this are almost certainly a mistake (fio has no limit; a cycle would
/// recurse forever).
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// Most jobs one run holds, numjobs clones counted (fio 3.33 stops at the same number:
/// `REAL_MAX_JOBS` in its fio.h). Each clone keeps its own statistics and generator.
pub const MAX_JOBS: u64 = 4096;

/// Most I/Os the jobs of one run may keep in flight together (iodepth × numjobs, summed):
/// the run keeps a record of each while it waits.
pub const MAX_OUTSTANDING_IOS: u64 = 1 << 20;

/// One meaningful line, after comments, includes and `${ENV}` are resolved.
#[derive(Debug)]
enum Item {
    Section { name: String },
    Opt { key: String, value: Option<String> },
}

#[derive(Debug)]
struct Located {
    file: usize,
    line: usize,
    item: Item,
}

struct Lexer<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    files: Vec<String>,
    /// Files being read, outermost first (cycle detection).
    stack: Vec<PathBuf>,
    items: Vec<Located>,
    /// Bytes of job files read so far (bounded by `MAX_JOB_TOTAL_BYTES`).
    read_bytes: u64,
    /// The files `include` read, in order.
    included: Vec<String>,
}

impl<'a> Lexer<'a> {
    fn new(env: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Lexer {
            env,
            files: Vec::new(),
            stack: Vec::new(),
            items: Vec::new(),
            read_bytes: 0,
            included: Vec::new(),
        }
    }

    fn err(&self, file: usize, line: usize, kind: ParseErrorKind) -> ParseError {
        ParseError {
            file: self.files[file].clone(),
            line,
            kind,
        }
    }

    fn lex(&mut self, text: &str, file_name: &str) -> Result<(), ParseError> {
        let file = self.files.len();
        self.files.push(file_name.to_string());
        // A byte-order mark (Windows editors save one) is no part of the first line: left
        // in, it made `[job]` an option "\u{feff}[job]" before any section.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let t = raw.trim_start();
            // fio ends a line at the first ';' or '#', wherever it is.
            let t = t.find([';', '#']).map_or(t, |cut| &t[..cut]).trim_end();
            if t.is_empty() {
                continue;
            }
            let t = substitute_env(t, self.env).map_err(|k| self.err(file, line, k))?;
            if let Some(rest) = t.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .map(str::trim)
                    .filter(|n| !n.is_empty() && !n.contains(['[', ']']))
                    .ok_or_else(|| {
                        self.err(file, line, ParseErrorKind::BadSection { text: t.clone() })
                    })?;
                self.items.push(Located {
                    file,
                    line,
                    item: Item::Section {
                        name: name.to_string(),
                    },
                });
            } else if let Some(path) = t
                .strip_prefix("include")
                .filter(|r| r.starts_with([' ', '\t']))
            {
                self.include(path.trim(), file, line)?;
            } else {
                let (key, value) = match t.split_once('=') {
                    Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
                    None => (t.as_str(), None),
                };
                if key.is_empty() || key.contains(char::is_whitespace) {
                    return Err(self.err(file, line, ParseErrorKind::BadLine { text: t.clone() }));
                }
                self.items.push(Located {
                    file,
                    line,
                    item: Item::Opt {
                        key: key.to_string(),
                        value,
                    },
                });
            }
        }
        Ok(())
    }

    fn include(&mut self, path: &str, file: usize, line: usize) -> Result<(), ParseError> {
        let including = Path::new(&self.files[file]);
        let target = match including.parent() {
            Some(dir) if Path::new(path).is_relative() => dir.join(path),
            _ => PathBuf::from(path),
        };
        let shown = target.display().to_string();
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            return Err(self.err(
                file,
                line,
                ParseErrorKind::IncludeTooDeep {
                    path: shown,
                    max_depth: MAX_INCLUDE_DEPTH,
                },
            ));
        }
        let canonical = target.canonicalize().unwrap_or_else(|_| target.clone());
        if self.stack.contains(&canonical) {
            return Err(self.err(file, line, ParseErrorKind::IncludeCycle { path: shown }));
        }
        let text = read_job_text(&target, &mut self.read_bytes).map_err(|message| {
            self.err(
                file,
                line,
                ParseErrorKind::Io {
                    path: shown.clone(),
                    message,
                },
            )
        })?;
        self.included.push(shown.clone());
        self.stack.push(canonical);
        let r = self.lex(&text, &shown);
        self.stack.pop();
        r
    }
}

/// Replace every `${NAME}`; an unset variable is an error rather than fio's silent empty
/// string, because a job silently aimed at the wrong size or device is worse.
fn substitute_env(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ParseErrorKind> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(ParseErrorKind::UnterminatedEnv)?;
        let name = &after[..end];
        let value = env(name).ok_or_else(|| ParseErrorKind::UnsetEnv {
            name: name.to_string(),
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Parse a job file from disk; `${ENV}` reads the process environment.
pub fn parse_file(path: &Path) -> Result<JobFile, ParseError> {
    let mut read_bytes = 0;
    let (text, shown) = read_job_file(path, &mut read_bytes)?;
    let mut lexer = Lexer::new(&|name| std::env::var(name).ok());
    lexer.read_bytes = read_bytes;
    lexer.lex_root(&text, &shown)?;
    let Lexer {
        files,
        items,
        included,
        ..
    } = lexer;
    build(&files, &items, &shown, &Sections::default()).map(|j| j.with_includes(included))
}

/// A job file's text, bounded per file and over everything one parse reads
/// (`read_bytes` counts it): a job file is a page of text, and an `include` of a device
/// or of a huge file must not take the machine's memory.
fn read_job_text(path: &Path, read_bytes: &mut u64) -> Result<String, String> {
    use flashlab_engine::input::{self, MAX_JOB_FILE_BYTES, MAX_JOB_TOTAL_BYTES};
    let left = MAX_JOB_TOTAL_BYTES.saturating_sub(*read_bytes);
    let (limit, what) = if left < MAX_JOB_FILE_BYTES {
        (left, "all job files and includes together")
    } else {
        (MAX_JOB_FILE_BYTES, "a job file")
    };
    let text = input::read_text(path, limit, what).map_err(|e| e.to_string())?;
    *read_bytes += text.len() as u64;
    Ok(text)
}

/// A job file's text and the name its messages show.
fn read_job_file(path: &Path, read_bytes: &mut u64) -> Result<(String, String), ParseError> {
    let shown = path.display().to_string();
    let text = read_job_text(path, read_bytes).map_err(|message| ParseError {
        file: shown.clone(),
        line: 0,
        kind: ParseErrorKind::Io {
            path: shown.clone(),
            message,
        },
    })?;
    Ok((text, shown))
}

/// Parse job file text. `file_name` is used in messages and to resolve `include` paths;
/// `env` answers `${NAME}`.
pub fn parse_str(
    text: &str,
    file_name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, ParseError> {
    let mut lexer = Lexer::new(env);
    lexer.lex_root(text, file_name)?;
    let Lexer {
        files,
        items,
        included,
        ..
    } = lexer;
    build(&files, &items, file_name, &Sections::default()).map(|j| j.with_includes(included))
}

/// One job item of a fio command line: `--name=NAME` starts a section (`global` the global
/// one), any other `--option[=value]` belongs to the section before it; options before the
/// first section are global, as fio takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLineItem {
    Section(String),
    Option { key: String, value: Option<String> },
}

/// The jobs of a fio command line: its items, each with the place messages name (such as
/// ``command line, argument 3 `--bs=4q` ``), then its job files, and fio's `--section`.
#[derive(Debug, Clone, Copy)]
pub struct CommandLine<'a> {
    pub items: &'a [(String, CommandLineItem)],
    pub job_files: &'a [PathBuf],
    /// Only these job sections run (fio's `--section`); empty: all of them.
    pub sections: &'a [String],
    /// The name the run reports as its job file (`JobFile::path`).
    pub name: &'a str,
}

/// Parse a fio command line as fio 3.33 does: the command line's jobs first, then the job
/// files' (which start from the command line's global options). Values are taken as given:
/// fio expands `${NAME}` in job files only. Every job carries its `origin`, since its
/// place is not a line of one file.
pub fn parse_command_line(
    command_line: &CommandLine<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, ParseError> {
    let mut lexer = Lexer::new(env);
    let starts_with_section = matches!(
        command_line.items.first(),
        Some((_, CommandLineItem::Section(_)))
    );
    if !command_line.items.is_empty() && !starts_with_section {
        lexer.files.push("command line".to_string());
        lexer.items.push(Located {
            file: 0,
            line: 0,
            item: Item::Section {
                name: "global".to_string(),
            },
        });
    }
    for (place, item) in command_line.items {
        let file = lexer.files.len();
        lexer.files.push(place.clone());
        let item = match item {
            CommandLineItem::Section(name) => Item::Section { name: name.clone() },
            CommandLineItem::Option { key, value } => Item::Opt {
                key: key.clone(),
                value: value.clone(),
            },
        };
        lexer.items.push(Located {
            file,
            line: 0,
            item,
        });
    }
    // fio 3.33 starts every job file after the first from fio's defaults again (not from the
    // global options so far), and stonewalls its first job.
    let mut resets = Vec::new();
    for (i, path) in command_line.job_files.iter().enumerate() {
        let (text, shown) = read_job_file(path, &mut lexer.read_bytes)?;
        lexer.included.push(shown.clone());
        let start = lexer.items.len();
        if i > 0 {
            resets.push(start);
        }
        lexer.stack.clear();
        lexer.lex_root(&text, &shown)?;
        // Options before a file's first section would join the previous section here.
        if let Some(Located {
            file,
            line,
            item: Item::Opt { key, .. },
        }) = lexer.items.get(start)
        {
            return Err(ParseError {
                file: lexer.files[*file].clone(),
                line: *line,
                kind: ParseErrorKind::OutsideSection {
                    option: key.clone(),
                },
            });
        }
    }
    let Lexer {
        files,
        items,
        included,
        ..
    } = lexer;
    let sections = Sections {
        only: command_line.sections,
        origins: true,
        resets: &resets,
    };
    build(&files, &items, command_line.name, &sections).map(|j| j.with_includes(included))
}

/// Which job sections run, and whether jobs record where they were defined.
#[derive(Default)]
struct Sections<'a> {
    /// fio's `--section`: only these (and `global`); empty: every section.
    only: &'a [String],
    origins: bool,
    /// Items at which the global options start again from fio's defaults, and the next job
    /// waits for the ones before it.
    resets: &'a [usize],
}

impl Sections<'_> {
    fn skip(&self, name: &str) -> bool {
        !self.only.is_empty() && name != "global" && !self.only.iter().any(|s| s == name)
    }
}

impl Lexer<'_> {
    fn lex_root(&mut self, text: &str, file_name: &str) -> Result<(), ParseError> {
        let root = Path::new(file_name);
        self.stack
            .push(root.canonicalize().unwrap_or_else(|_| root.to_path_buf()));
        self.lex(text, file_name)
    }
}

/// Apply the lexed items section by section. Items on line 0 come from a command line: their
/// `files` entry is the argument's place.
fn build(
    files: &[String],
    items: &[Located],
    file_name: &str,
    sections: &Sections<'_>,
) -> Result<JobFile, ParseError> {
    let fresh = || Builder {
        spec: JobSpec::new("global", 0),
        kb_base: 1024,
        name: None,
        buffers: Default::default(),
    };
    let mut global = fresh();
    let mut global_options = Vec::new();
    let mut jobs = Vec::new();
    // Where each job's wait_for= was written (file, line), for messages.
    let mut global_wait_at = None;
    let mut wait_at = Vec::new();
    let mut stonewall_next = false;
    // Jobs with their numjobs clones, each of which the run keeps state for.
    let mut clones: u64 = 0;
    // I/Os all of them may keep in flight (iodepth × numjobs, summed).
    let mut outstanding: u64 = 0;
    let mut i = 0;
    while i < items.len() {
        if sections.resets.contains(&i) {
            global = fresh();
            global_options.clear();
            stonewall_next = true;
        }
        let Located { file, line, item } = &items[i];
        let mut section = match item {
            Item::Section { name } => name.clone(),
            Item::Opt { key, .. } => {
                return Err(ParseError {
                    file: files[*file].clone(),
                    line: *line,
                    kind: ParseErrorKind::OutsideSection {
                        option: key.clone(),
                    },
                })
            }
        };
        let section_line = *line;
        let mut end = i + 1;
        while end < items.len() && matches!(items[end].item, Item::Opt { .. }) {
            end += 1;
        }
        if sections.skip(&section) {
            if section_line != 0 {
                // A job file's skipped section is left out whole, as fio skips its lines.
                i = end;
                continue;
            }
            // fio 3.33 on the command line: after a skipped --name no job is open, so the
            // options up to the next --name go to the global section.
            section = "global".to_string();
        }
        let opts = resolve(&items[i + 1..end], files)?;
        if section == "global" {
            apply(&mut global, &opts, files, &mut global_options)?;
            global_wait_at = written_at(&opts, "wait_for").or(global_wait_at);
        } else {
            let mut b = global.clone();
            b.spec.id.name = section.clone();
            b.spec.id.line = section_line;
            b.spec.control.stonewall |= std::mem::take(&mut stonewall_next);
            if sections.origins {
                b.spec.id.origin = Some(if section_line == 0 {
                    files[*file].clone()
                } else {
                    format!("{}:{section_line}", files[*file])
                });
            }
            let mut written = Vec::new();
            apply(&mut b, &opts, files, &mut written)?;
            let mut spec = b.spec;
            spec.id.options_as_written = written;
            spec.id.name = b.name.unwrap_or(section);
            let at = written_at(&opts, "wait_for").or(global_wait_at);
            spec.control.wait_for_line = at.map_or(0, |(_, line)| line);
            wait_at.push(at.map_or(*file, |(f, _)| f));
            settle_job(&mut spec, &opts, files, *file, section_line)?;
            clones += u64::from(spec.control.numjobs.max(1));
            outstanding +=
                u64::from(spec.control.numjobs.max(1)) * u64::from(spec.engine.iodepth.max(1));
            let counts = (clones, outstanding);
            check_job_bounds(&spec, &opts, files, (*file, section_line), counts)?;
            jobs.push(spec);
        }
        i = end;
    }
    check_wait_for(&mut jobs, &wait_at, files)?;
    if jobs.is_empty() {
        return Err(ParseError {
            file: file_name.to_string(),
            line: 0,
            kind: ParseErrorKind::NoJobs,
        });
    }
    Ok(JobFile {
        path: file_name.to_string(),
        global_options,
        jobs,
        includes: Vec::new(),
    })
}

/// What fio settles of a job once its options are applied: a size given as a percentage, a
/// synchronous engine's depth, the verification it can do, the default names of bare logs.
fn settle_job(
    spec: &mut JobSpec,
    opts: &[Resolved<'_>],
    files: &[String],
    file: usize,
    section_line: usize,
) -> Result<(), ParseError> {
    apply_filesize(spec).map_err(|expected| ParseError {
        file: files[file].clone(),
        line: section_line,
        kind: ParseErrorKind::InvalidValue {
            option: "size".to_string(),
            value: "a percentage".to_string(),
            expected,
        },
    })?;
    // fio runs a synchronous engine's I/Os one at a time, whatever the depth.
    if SYNCHRONOUS_ENGINES.contains(&spec.engine.ioengine.as_str()) {
        spec.engine.synchronous = true;
        if spec.engine.iodepth > 1 {
            spec.engine.iodepth_capped_from = Some(spec.engine.iodepth);
            spec.engine.iodepth = 1;
        }
    }
    if let Err(why) = check_verify(spec) {
        let at = written_at(opts, "verify");
        return Err(ParseError {
            file: files[at.map_or(file, |(f, _)| f)].clone(),
            line: at.map_or(section_line, |(_, line)| line),
            kind: ParseErrorKind::NotSimulated {
                option: "verify".to_string(),
                what: why,
            },
        });
    }
    // A bare `write_bw_log` makes fio use the job name as the prefix.
    for log in [
        &mut spec.log.write_bw_log,
        &mut spec.log.write_lat_log,
        &mut spec.log.write_iops_log,
        &mut spec.log.write_hist_log,
    ] {
        if log.as_deref() == Some("") {
            *log = Some(spec.id.name.clone());
        }
    }
    Ok(())
}

/// The bounds on what a file's jobs keep: `clones` (jobs with their numjobs clones) and
/// `outstanding` (I/Os all of them may have in flight) so far, this job's included. An
/// error names the option's place, else the section's (`file`, `section_line`).
fn check_job_bounds(
    spec: &JobSpec,
    opts: &[Resolved<'_>],
    files: &[String],
    (file, section_line): (usize, usize),
    (clones, outstanding): (u64, u64),
) -> Result<(), ParseError> {
    let place = |at: Option<(usize, usize)>| {
        let (f, line) = at.unwrap_or((file, section_line));
        (files[f].clone(), line)
    };
    if outstanding > MAX_OUTSTANDING_IOS {
        let (file, line) =
            place(written_at(opts, "iodepth").or_else(|| written_at(opts, "numjobs")));
        return Err(ParseError {
            file,
            line,
            kind: ParseErrorKind::TooManyOutstanding {
                job: spec.id.name.clone(),
                limit: MAX_OUTSTANDING_IOS,
            },
        });
    }
    if clones > MAX_JOBS {
        let (file, line) = place(written_at(opts, "numjobs"));
        return Err(ParseError {
            file,
            line,
            kind: ParseErrorKind::TooManyJobs {
                job: spec.id.name.clone(),
                limit: MAX_JOBS,
            },
        });
    }
    Ok(())
}

struct Resolved<'a> {
    def: &'static OptionDef,
    value: Option<&'a str>,
    file: usize,
    line: usize,
}

/// Look every option of a section up in the table, in file order, so the first bad line is
/// the one reported; then order them as fio applies them (by priority, stable).
fn resolve<'a>(items: &'a [Located], files: &[String]) -> Result<Vec<Resolved<'a>>, ParseError> {
    let mut out = Vec::with_capacity(items.len());
    for Located { file, line, item } in items {
        let Item::Opt { key, value } = item else {
            continue;
        };
        let err = |kind| ParseError {
            file: files[*file].clone(),
            line: *line,
            kind,
        };
        let def = find_option(key).ok_or_else(|| {
            err(ParseErrorKind::UnknownOption {
                option: key.clone(),
                suggestion: nearest_option(key).map(str::to_string),
            })
        })?;
        if def.class == OptionClass::NotSimulated {
            return Err(err(ParseErrorKind::NotSimulated {
                option: key.clone(),
                what: def.help.to_string(),
            }));
        }
        if value.is_none() && !def.ty.bare_allowed() {
            let example = if def.default.is_empty() {
                "..."
            } else {
                def.default
            };
            return Err(err(ParseErrorKind::MissingValue {
                option: key.clone(),
                example: example.to_string(),
            }));
        }
        out.push(Resolved {
            def,
            value: value.as_deref(),
            file: *file,
            line: *line,
        });
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.def.priority));
    Ok(out)
}

fn apply(
    b: &mut Builder,
    opts: &[Resolved<'_>],
    files: &[String],
    written: &mut Vec<(String, String)>,
) -> Result<(), ParseError> {
    for r in opts {
        let result = match r.def.apply {
            Some(f) => f(b, r.value),
            None => r.value.map_or(Ok(()), |v| validate(r.def, v, b.kb_base)),
        };
        result.map_err(|expected| {
            let value = r.value.unwrap_or("");
            // A mistyped word of a fixed set names the word it most likely meant.
            let hint = match r.def.ty {
                OptionType::Enum(words) => {
                    flashlab_engine::input::did_you_mean(value.trim(), words.iter().copied())
                }
                _ => String::new(),
            };
            ParseError {
                file: files[r.file].clone(),
                line: r.line,
                kind: ParseErrorKind::InvalidValue {
                    option: r.def.name.to_string(),
                    value: value.to_string(),
                    expected: with_expression_note(format!("{expected}{hint}"), value),
                },
            }
        })?;
        // fio's JSON lists options under their canonical name and leaves out bare flags.
        if let Some(v) = r.value {
            written.push((r.def.name.to_string(), v.to_string()));
        }
    }
    Ok(())
}

/// fio evaluates `(2*4)` and `$ncpus`/`$pagesize`/`$mb_memory` in values; flashlab does
/// not, and says so rather than leaving "expected an integer" to puzzle over.
fn with_expression_note(expected: String, value: &str) -> String {
    let v = value.trim();
    if v.starts_with('(') || v.contains('$') {
        format!(
            "{expected} (fio's arithmetic expressions and $ncpus, $pagesize, $mb_memory are not \
             supported: write the value itself)"
        )
    } else {
        expected
    }
}

/// Where the last `name=` option of a section was written: (file index, line).
fn written_at(opts: &[Resolved<'_>], name: &str) -> Option<(usize, usize)> {
    opts.iter()
        .filter(|r| r.def.name == name)
        .max_by_key(|r| (r.file, r.line))
        .map(|r| (r.file, r.line))
}

/// fio's `filesize`: the job's file (its region) has that size, and `size`, the total I/O
/// of a job over its files, only sets the default `io_size` (HOWTO, `filesize`).
fn apply_filesize(spec: &mut JobSpec) -> Result<(), String> {
    let Some(file_bytes) = spec.target.filesize else {
        return Ok(());
    };
    match spec.target.size {
        Some(SizeSpec::Fraction(_)) => {
            return Err(
                "bytes when filesize is given (with filesize, size is the I/O \
                        to do, not a share of the device)"
                    .to_string(),
            )
        }
        Some(bytes @ SizeSpec::Bytes(_)) if spec.target.io_size.is_none() => {
            spec.target.io_size = Some(bytes)
        }
        _ => {}
    }
    spec.target.size = Some(SizeSpec::Bytes(file_bytes));
    Ok(())
}

/// The verify workloads flashlab reproduces: a write or randwrite job reading back each
/// loop's writes once they are done, as fio's `do_verify` phase. Everything that would mix
/// other I/O into that phase, pace it, or end the job on a clock is refused, naming it.
fn check_verify(spec: &JobSpec) -> Result<(), String> {
    if !spec.verification.verify {
        return Ok(());
    }
    let fail = |what: &str| {
        Err(format!(
            "verify with {what} is not simulated; flashlab simulates verify on rw=write or \
             randwrite jobs (the read-back after each loop) and on read-only jobs"
        ))
    };
    let dirs = spec.io.rw.directions();
    if dirs[2] || (dirs[0] && dirs[1]) {
        return fail(&format!("rw={:?} (mixed or trimming patterns)", spec.io.rw).to_lowercase());
    }
    if !spec.verifies_writes() {
        // A reading job checks what it reads, or do_verify=0: no I/O of its own.
        return Ok(());
    }
    if spec.time.time_based {
        if spec.verification.verify_backlog == 0 {
            // fio warns and writes until the runtime is over (`JobFile::fio_warnings`).
            return Ok(());
        }
        return fail("time_based and verify_backlog");
    }
    if spec.verification.verify_backlog > 0 {
        if spec.engine.iodepth > 1 {
            // fio skips a backlog read whose write is still in flight (IP_F_IN_FLIGHT) and
            // issues a write instead: which depends on completion order, not simulated.
            return fail("verify_backlog and iodepth above 1 (fio defers a backlog read while its write is in flight)");
        }
        if spec.io.rw.is_random()
            && (spec.io.norandommap
                || spec.io.random_distribution != RandomDistribution::Random
                || spec.io.random_generator_lfsr)
        {
            return fail(
                "verify_backlog on random writes read back by offset (norandommap, a skewed \
                 distribution or lfsr: each backlog read takes the lowest offset not yet read)",
            );
        }
    }
    if spec.target.number_ios.is_some() {
        return fail("number_ios");
    }
    if spec.time.ramp_time_ns > 0 {
        return fail("ramp_time");
    }
    if spec.rate.rate_bytes_per_s != [0; 3] || spec.rate.rate_iops != [0; 3] {
        return fail("rate or rate_iops (fio does not pace the read phase)");
    }
    if spec.rate.rate_min_bytes_per_s != [0; 3] || spec.rate.rate_iops_min != [0; 3] {
        return fail("rate_min or rate_iops_min");
    }
    if spec.rate.thinktime_ns > 0 {
        return fail("thinktime (fio does not think in the read phase)");
    }
    if spec.latency.latency_target_ns > 0 {
        return fail("latency_target");
    }
    if spec.steadystate.enabled() {
        return fail("steadystate");
    }
    if spec.latency.max_latency_ns != [0; 3] {
        return fail("max_latency");
    }
    Ok(())
}

/// `wait_for=NAME` must name an earlier job (fio's HOWTO: no forward references); a job's
/// own name, as a `[global]` wait_for gives the waitee itself, is ignored, as fio skips it.
fn check_wait_for(
    jobs: &mut [JobSpec],
    wait_at: &[usize],
    files: &[String],
) -> Result<(), ParseError> {
    for k in 0..jobs.len() {
        let Some(name) = jobs[k].control.wait_for.clone() else {
            continue;
        };
        if name == jobs[k].id.name {
            jobs[k].control.wait_for = None;
            continue;
        }
        if !jobs[..k].iter().any(|j| j.id.name == name) {
            return Err(ParseError {
                file: files[wait_at[k]].clone(),
                line: jobs[k].control.wait_for_line,
                kind: ParseErrorKind::InvalidValue {
                    option: "wait_for".to_string(),
                    value: name,
                    expected: "the name of a job defined before this one".to_string(),
                },
            });
        }
    }
    Ok(())
}
