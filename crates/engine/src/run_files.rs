//! The files of one run, registered before the work: what it reads (a job file and its
//! includes, a device or system description, a loaded state, a trace, a plan, a sweep's
//! point files) and what it writes (results, reports, logs, states, tables). An output that
//! is also an input, or another output, is refused with both named, whatever path names it:
//! the same path, `a/../a`, a symbolic link or a hard link to the same file.
//!
//! A command registers every input and output as soon as it knows them, then does the work
//! and writes each output through the [`OutputFile`] its registration returned:
//!
//! ```no_run
//! # use flashlab_engine::run_files::RunFiles;
//! # use std::path::Path;
//! let mut files = RunFiles::new();
//! files.input("job file", Path::new("w.fio"))?;
//! let report = files.output("--report", Path::new("r.html"))?;
//! // ... the work ...
//! report.write_bytes(b"<html>")?;
//! # Ok::<(), flashlab_engine::output::OutputError>(())
//! ```

use std::path::{Path, PathBuf};

use crate::input::excerpt;
use crate::output::{check_dir, OutputError, OutputFile};

/// Which file a path names: its device and inode when it exists, and its directory
/// (resolved) joined with its name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    inode: Option<(u64, u64)>,
    path: Option<PathBuf>,
}

impl Identity {
    fn of(path: &Path) -> Identity {
        #[cfg(unix)]
        let inode = std::fs::metadata(path).ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        });
        #[cfg(not(unix))]
        let inode = None;
        let resolved = path.file_name().and_then(|name| {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(std::fs::canonicalize(dir).ok()?.join(name))
        });
        Identity {
            inode,
            path: resolved,
        }
    }

    fn same(&self, other: &Identity) -> bool {
        (self.inode.is_some() && self.inode == other.inode)
            || (self.path.is_some() && self.path == other.path)
    }
}

/// Which files of a directory a family takes, by their path relative to it with `/`
/// between names: a sweep's `point-NNNNNN.json`, a suite's `--outdir`
/// `1-tiny-test-1gb/01-fill.json`. Files one directory down are offered too.
pub type NameRule = fn(&str) -> bool;

/// The files under `dir`, and those one directory down, whose relative path `rule` takes.
fn family_members(dir: &Path, rule: NameRule) -> Vec<Identity> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if rule(&name) {
            members.push(Identity::of(&entry.path()));
        }
        if std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()) {
            for inner in std::fs::read_dir(entry.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let rel = format!("{name}/{}", inner.file_name().to_string_lossy());
                if rule(&rel) {
                    members.push(Identity::of(&inner.path()));
                }
            }
        }
    }
    members
}

/// `path`'s place relative to `dir` with `/` between names, when it is under it.
fn relative(path: &Path, dir: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let names: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!names.is_empty()).then(|| names.join("/"))
}

/// One file, or the files of a directory whose names a rule takes.
#[derive(Debug, Clone)]
enum Place {
    File(Identity),
    Family {
        dir: Option<PathBuf>,
        rule: NameRule,
        /// The files there now that the rule takes.
        members: Vec<Identity>,
    },
}

impl Place {
    fn family(dir: &Path, rule: NameRule) -> Place {
        Place::Family {
            dir: std::fs::canonicalize(dir).ok(),
            rule,
            members: family_members(dir, rule),
        }
    }

    /// Whether the file `f` is one of this family's: under its directory where its rule
    /// takes it, or one of its members under another name.
    fn takes(&self, f: &Identity) -> bool {
        match self {
            Place::File(a) => a.same(f),
            Place::Family { dir, rule, members } => {
                let named = match (&f.path, dir) {
                    (Some(p), Some(d)) => relative(p, d).is_some_and(|rel| rule(&rel)),
                    _ => false,
                };
                named || members.iter().any(|m| m.same(f))
            }
        }
    }

    /// Whether the two places share a file: a family shares with a file it takes, and two
    /// families in one directory with a file there now that both take (the names each
    /// writes are its rule's; two rules of one directory take names apart, as a suite's
    /// `--outdir` tables and its `--figures` charts).
    fn overlaps(&self, other: &Place) -> bool {
        match (self, other) {
            (Place::File(f), place) | (place, Place::File(f)) => place.takes(f),
            (Place::Family { members: a, .. }, Place::Family { members: b, .. }) => {
                a.iter().any(|m| other.takes(m)) || b.iter().any(|m| self.takes(m))
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    output: bool,
    /// The option or role that names it: `--report`, `job file`.
    what: String,
    shown: String,
    place: Place,
}

/// The inputs and outputs of one run (see the module's page).
#[derive(Debug, Clone, Default)]
pub struct RunFiles {
    entries: Vec<Entry>,
}

impl RunFiles {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `path`, which the run reads as its `what` (`job file`, `--load-state`).
    /// A path where nothing is (a preset's name given where a file may be) reads no file
    /// and is not registered.
    pub fn input(&mut self, what: &str, path: &Path) -> Result<(), OutputError> {
        if std::fs::metadata(path).is_err() {
            return Ok(());
        }
        self.add(false, what, path, Place::File(Identity::of(path)))
    }

    /// Registers the files in `dir` whose names `rule` takes as inputs (`what` names them).
    pub fn inputs_in(&mut self, what: &str, dir: &Path, rule: NameRule) -> Result<(), OutputError> {
        self.add(false, what, dir, Place::family(dir, rule))
    }

    /// Checks `path` as an output named by `option` ([`OutputFile::check`]) and registers
    /// it: the handle it returns is the one to write with.
    pub fn output(&mut self, option: &str, path: &Path) -> Result<OutputFile, OutputError> {
        let file = OutputFile::check(option, path)?;
        self.add(true, option, path, Place::File(Identity::of(file.path())))?;
        Ok(file)
    }

    /// Registers the files in `dir` whose names `rule` takes as outputs of `option`, for a
    /// directory its owner checks itself (the precondition cache, which goes without when
    /// its directory cannot be written).
    pub fn claims_in(
        &mut self,
        option: &str,
        dir: &Path,
        rule: NameRule,
    ) -> Result<(), OutputError> {
        self.add(true, option, dir, Place::family(dir, rule))
    }

    /// Checks `dir` as a directory for outputs ([`check_dir`]) and registers the files in
    /// it whose names `rule` takes as outputs of `option`.
    pub fn outputs_in(
        &mut self,
        option: &str,
        dir: &Path,
        rule: NameRule,
    ) -> Result<(), OutputError> {
        check_dir(option, dir)?;
        self.add(true, option, dir, Place::family(dir, rule))
    }

    fn add(
        &mut self,
        output: bool,
        what: &str,
        path: &Path,
        place: Place,
    ) -> Result<(), OutputError> {
        let entry = Entry {
            output,
            what: what.to_string(),
            shown: excerpt(&path.to_string_lossy()).into_owned(),
            place,
        };
        let clash = self
            .entries
            .iter()
            .find(|e| (e.output || output) && e.place.overlaps(&entry.place));
        if let Some(other) = clash {
            let (out, with) = if output {
                (&entry, other)
            } else {
                (other, &entry)
            };
            return Err(OutputError {
                message: format!(
                    "{} {}: it is also the run's {} {}; name another file",
                    out.what, out.shown, with.what, with.shown
                ),
            });
        }
        self.entries.push(entry);
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("flashlab-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_output_naming_an_input_by_any_path_is_refused_with_both_named() {
        let d = dir("names");
        let job = d.join("w.fio");
        std::fs::write(&job, "[j]\n").unwrap();
        let hard = d.join("hard.fio");
        std::fs::hard_link(&job, &hard).unwrap();
        let soft = d.join("soft.fio");
        std::os::unix::fs::symlink(&job, &soft).unwrap();
        let dotted = d.join(".").join("w.fio");
        for alias in [&job, &hard, &soft, &dotted] {
            let mut files = RunFiles::new();
            files.input("job file", &job).unwrap();
            let e = files.output("--report", alias).unwrap_err();
            assert!(e.message.contains("--report"), "{e}");
            assert!(e.message.contains("also the run's job file"), "{e}");
            assert!(e.message.contains("w.fio; name another file"), "{e}");
        }
        // Registered the other way round: the output first.
        let mut files = RunFiles::new();
        files.output("--output", &hard).unwrap();
        let e = files.input("job file", &job).unwrap_err();
        assert!(e.message.starts_with("--output "), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn two_outputs_of_one_new_path_are_refused_and_distinct_ones_pass() {
        let d = dir("outs");
        let mut files = RunFiles::new();
        files.output("--output", &d.join("o.txt")).unwrap();
        files.output("--report", &d.join("r.html")).unwrap();
        let e = files
            .output("write_iolog", &d.join(".").join("o.txt"))
            .unwrap_err();
        assert!(e.message.contains("also the run's --output"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    fn point(name: &str) -> bool {
        name.starts_with("point-") && name.ends_with(".json")
    }

    #[test]
    fn a_family_overlaps_files_it_names_and_links_to_its_members() {
        let d = dir("family");
        std::fs::write(d.join("point-000000.json"), "{}").unwrap();
        let link = d.join("elsewhere.json");
        std::fs::hard_link(d.join("point-000000.json"), &link).unwrap();
        let mut files = RunFiles::new();
        files.inputs_in("point file", &d, point).unwrap();
        for out in [d.join("point-000001.json"), link.clone()] {
            let e = files.clone().output("--csv", &out).unwrap_err();
            assert!(e.message.contains("also the run's point file"), "{e}");
        }
        files.clone().output("--csv", &d.join("t.csv")).unwrap();
        // An output family against an input file in it.
        let mut files = RunFiles::new();
        files.input("job file", &link).unwrap();
        let e = files.outputs_in("--outdir", &d, point).unwrap_err();
        assert!(e.message.contains("--outdir"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    fn outdir(rel: &str) -> bool {
        rel.ends_with(".csv")
            || rel
                .split_once('/')
                .is_some_and(|(_, name)| name.ends_with(".json"))
    }

    fn charts(rel: &str) -> bool {
        rel.ends_with(".svg")
    }

    fn first_device(rel: &str) -> bool {
        rel.starts_with("1-a/")
    }

    #[test]
    fn a_family_takes_files_one_directory_down_and_families_clash_on_a_common_file() {
        let d = dir("deep");
        std::fs::create_dir_all(d.join("1-a")).unwrap();
        let step = d.join("1-a").join("01-x.json");
        std::fs::write(&step, "{}").unwrap();
        let mut files = RunFiles::new();
        files.input("--load-state", &step).unwrap();
        let e = files
            .clone()
            .outputs_in("--outdir", &d, outdir)
            .unwrap_err();
        assert!(e.message.contains("also the run's --load-state"), "{e}");
        // A new file one directory down is taken by its name alone.
        let mut files = RunFiles::new();
        files.outputs_in("--outdir", &d, outdir).unwrap();
        let e = files
            .clone()
            .output("--report", &d.join("1-a").join("02-y.json"))
            .unwrap_err();
        assert!(e.message.contains("also the run's --outdir"), "{e}");
        files.clone().output("--report", &d.join("r.html")).unwrap();
        // Two families of one directory whose rules take names apart share nothing; one
        // that takes a file the other holds clashes.
        files.clone().outputs_in("--figures", &d, charts).unwrap();
        let e = files
            .claims_in("--state-cache", &d, first_device)
            .unwrap_err();
        assert!(e.message.contains("--state-cache"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_absent_input_is_no_file() {
        let d = dir("absent");
        let mut files = RunFiles::new();
        files
            .input("--device", Path::new("tiny-test-1gb-not-a-file"))
            .unwrap();
        files.output("--output", &d.join("o")).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }
}
