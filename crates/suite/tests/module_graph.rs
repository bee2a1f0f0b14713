//! The modules of the suites' crate and of the kit import each other without a circle: a module's `crate::` paths (in
//! `use` lines and in code, tests left out) are its arrows, a name `lib.rs` re-exports points
//! at the module that defines it, and `lib.rs` itself (the registry) is a module whose arrows
//! are the names its own code uses. A circle is a set of modules each reachable from the
//! others; this fails listing every one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = "crate";

/// Every source file under `dir` with its module path (`session`, `suites::basic`).
fn modules(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let name = |s: &str| {
            if prefix.is_empty() {
                s.to_string()
            } else {
                format!("{prefix}::{s}")
            }
        };
        if path.is_dir() {
            modules(&path, &name(&stem), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let module = match stem.as_str() {
                "lib" => ROOT.to_string(),
                "mod" => prefix.to_string(),
                _ => name(&stem),
            };
            out.insert(module, path);
        }
    }
}

/// The code of a file without its tests, comments and string-free enough for paths: every
/// line up to `#[cfg(test)]`, comment lines dropped.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The paths of a use tree after `prefix::` (`a::B`, `{a::B, c}`), each as its segments.
fn use_paths(s: &str) -> Vec<Vec<String>> {
    let s = s.trim_start();
    if let Some(inner) = s.strip_prefix('{') {
        // Split the braced list at its top level.
        let mut out = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.extend(use_paths(&inner[start..i]));
                    return out;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(use_paths(&inner[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        return out;
    }
    let first = ident(s);
    if first.is_empty() {
        return Vec::new();
    }
    let rest = &s[first.len()..];
    match rest.strip_prefix("::") {
        Some(tail) => {
            let subs = use_paths(tail);
            if subs.is_empty() {
                // `a::*`
                return vec![vec![first.to_string()]];
            }
            subs.into_iter()
                .map(|mut p| {
                    p.insert(0, first.to_string());
                    p
                })
                .collect()
        }
        None => vec![vec![first.to_string()]],
    }
}

/// What `lib.rs` makes of a name: the modules it declares under `suites` and imports
/// (`use suites::{basic, ...}`), and the items it re-exports (`pub use session::Session`).
struct Root {
    aliases: BTreeMap<String, String>,
    reexports: BTreeMap<String, String>,
    /// Items another crate defines (`pub use flashlab_report::chart::Unit`): no arrow.
    external: BTreeSet<String>,
}

fn root(lib: &str, mods: &BTreeMap<String, PathBuf>) -> Root {
    let mut aliases = BTreeMap::new();
    let mut reexports = BTreeMap::new();
    let mut external = BTreeSet::new();
    for stmt in lib.split(';') {
        let s = stmt.trim();
        let (public, tree) = if let Some(t) = s.strip_prefix("pub use ") {
            (true, t)
        } else if let Some(t) = s.strip_prefix("use ") {
            (false, t)
        } else {
            continue;
        };
        for path in use_paths(tree) {
            let Some(first) = path.first() else { continue };
            if first == "suites" && path.len() == 2 && !public {
                aliases.insert(path[1].clone(), format!("suites::{}", path[1]));
            } else if public && mods.contains_key(first) || aliases.contains_key(first) {
                let module = aliases.get(first).cloned().unwrap_or(first.clone());
                let item = path.last().unwrap().clone();
                reexports.insert(item, module);
            } else if public {
                external.insert(path.last().unwrap().clone());
            }
        }
    }
    // `pub use x::{a as b}` is not used in the crate; a re-export of a re-export neither.
    Root {
        aliases,
        reexports,
        external,
    }
}

impl Root {
    /// The module a `crate::` path starting with `segments` lies in (none: another crate's).
    fn resolve(&self, segments: &[String], mods: &BTreeMap<String, PathBuf>) -> Option<String> {
        let first = &segments[0];
        if self.external.contains(first) {
            return None;
        }
        Some(self.resolve_here(segments, mods))
    }

    fn resolve_here(&self, segments: &[String], mods: &BTreeMap<String, PathBuf>) -> String {
        let first = &segments[0];
        if first == "suites" {
            if let Some(second) = segments.get(1) {
                return format!("suites::{second}");
            }
        }
        if let Some(m) = self.aliases.get(first) {
            return m.clone();
        }
        if mods.contains_key(first) {
            return first.clone();
        }
        self.reexports
            .get(first)
            .cloned()
            .unwrap_or_else(|| ROOT.to_string())
    }
}

/// Each module's arrows to the other modules.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut mods = BTreeMap::new();
    modules(src, "", &mut mods);
    let lib = code(&mods[ROOT]);
    let root = root(&lib, &mods);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &mods {
        let text = code(path);
        let mut to = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            for p in use_paths(&text[i + "crate::".len()..]) {
                to.extend(root.resolve(&p, &mods));
            }
        }
        if module == ROOT {
            // The registry's own code names modules and re-exported items directly.
            let own: String = lib
                .split(';')
                .filter(|s| {
                    let s = s.trim();
                    !(s.starts_with("use ") || s.starts_with("pub use ") || s.contains("mod "))
                })
                .collect::<Vec<_>>()
                .join(";");
            let mut rest = own.as_str();
            while let Some(i) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
                let word = ident(&rest[i..]);
                let after = &rest[i + word.len()..];
                if after.starts_with("::") && (mods.contains_key(word) || word == "suites") {
                    to.extend(root.resolve(&[word.to_string()], &mods));
                } else if let Some(m) = root.aliases.get(word).filter(|_| after.starts_with("::")) {
                    to.insert(m.clone());
                } else if let Some(m) = root.reexports.get(word) {
                    to.insert(m.clone());
                }
                rest = &rest[i + word.len().max(1)..];
            }
        }
        to.remove(module);
        edges.insert(module.clone(), to);
    }
    edges
}

/// The sets of two or more modules that reach each other (Tarjan's strongly connected
/// components; the crate's graph is small enough to visit recursively).
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.g.contains_key(w) {
                continue;
            }
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The suites' crate and the kit's: each crate's modules.
#[test]
fn modules_import_each_other_without_a_circle() {
    for dir in ["src", "../kit/src"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        no_circle(&graph(&src));
    }
}

fn no_circle(g: &BTreeMap<String, BTreeSet<String>>) {
    assert!(g.len() >= 20, "{:?}", g.keys());
    let found = circles(g);
    let arrows: Vec<String> = found
        .iter()
        .flat_map(|c| {
            c.iter().flat_map(|m| {
                g[m].iter()
                    .filter(|to| c.contains(to))
                    .map(move |to| format!("{m} -> {to}"))
            })
        })
        .collect();
    assert!(
        found.is_empty(),
        "circles: {found:?}\narrows inside them:\n{}",
        arrows.join("\n")
    );
}

#[test]
fn a_circle_is_found() {
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&g), vec![vec!["a", "b", "c"]]);
    let paths = use_paths("{a::B, c::{d, e::F}, g}");
    assert!(paths.contains(&vec!["a".to_string(), "B".to_string()]));
    assert!(paths.contains(&vec!["c".to_string(), "e".to_string(), "F".to_string()]));
    assert!(paths.contains(&vec!["g".to_string()]));
}
