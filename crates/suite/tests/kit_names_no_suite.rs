//! The kit names no suite: no identifier and no string in `crates/kit/src` spells a registered
//! suite's name (`four-corners`, `four_corners`, `FourCorners`). Comments may say which suites
//! read a shared option; code may not depend on one. A suite's own code lives in its file.

use std::path::{Path, PathBuf};

/// Words of the kit's own that are also suite names, and why the kit may say them.
const KIT_WORDS: &[(&str, &str)] = &[
    // The step every preconditioning records (`PRECONDITION_STEP`) and the shared
    // `--precondition` option; the precondition suite is named after the step.
    ("precondition", "precondition"),
    // The drive's own meter in the refusal of a system.
    ("power", "power meter"),
];

/// A piece of Rust source as the check reads it.
#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
}

/// The identifiers and string literals of `src`, comments left out.
fn tokens(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < b.len() {
        let c = b[i];
        if src[i..].starts_with("//") {
            i += src[i..].find('\n').unwrap_or(src.len() - i);
        } else if src[i..].starts_with("/*") {
            i += src[i..].find("*/").map_or(src.len() - i, |e| e + 2);
        } else if c == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#')) {
            let hashes = b[i + 1..].iter().take_while(|&&h| h == b'#').count();
            let open = i + 1 + hashes;
            if b.get(open) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let end = src[open + 1..]
                .find(&close)
                .map_or(src.len(), |e| open + 1 + e);
            out.push(Token::Str(src[open + 1..end].to_string()));
            i = end + close.len();
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push(Token::Str(src[i + 1..j.min(b.len())].to_string()));
            i = j + 1;
        } else if c == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3;
        } else if c == b'\'' && b.get(i + 1) == Some(&b'\\') {
            i += src[i + 2..].find('\'').map_or(src.len() - i, |e| e + 3);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let len = src[i..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(src.len() - i);
            out.push(Token::Ident(src[i..i + len].to_string()));
            i += len;
        } else {
            i += 1;
        }
    }
    out
}

/// `four-corners` as code spells it: `four_corners` and `FourCorners`.
fn spellings(name: &str) -> [String; 2] {
    let camel = name
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    [name.replace('-', "_"), camel]
}

/// Whether string `text` names `name` as a word (`qos` and `suite qos`, not `qosx` nor
/// `power-off`), the kit's own words taken out first.
fn names_in_text(text: &str, name: &str) -> bool {
    let mut text = text.to_string();
    for (word, phrase) in KIT_WORDS {
        if *word == name {
            text = text.replace(phrase, "");
        }
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.split(|c: char| !word(c)).any(|w| w == name)
}

/// Every place in `src` that names a registered suite: (suite, what names it).
fn suites_named(src: &str, suites: &[&str]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for t in tokens(src) {
        for &name in suites {
            let hit = match &t {
                Token::Ident(id) => {
                    let exempt = KIT_WORDS.iter().any(|(w, p)| *w == name && p == w);
                    !exempt && spellings(name).contains(id)
                }
                Token::Str(s) => names_in_text(s, name),
            };
            if hit {
                found.push((name.to_string(), format!("{t:?}")));
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("the kit's sources are readable") {
        let path = e.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_kit_names_no_registered_suite() {
    let kit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kit/src");
    let mut files = Vec::new();
    rust_files(&kit, &mut files);
    files.sort();
    assert!(files.len() > 10, "the kit's sources: {files:?}");
    let names: Vec<&str> = flashlab_suite::SUITES.iter().map(|k| k.name()).collect();
    let mut found = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("a source file");
        for (suite, what) in suites_named(&src, &names) {
            found.push(format!("{}: {suite} in {what}", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "the kit names suites:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_a_suite_in_code_and_strings_only() {
    let suites = ["four-corners", "qos", "power"];
    let src = r##"
        // qos in a comment is fine; so is "qos" in one.
        /* four_corners */
        let a = "suite qos"; let b = FourCorners; let c = four_corners(x);
        let d = "qosx power-off"; let e = r#"four-corners"#; let f = '"'; let g = "power meter";
    "##;
    let found: Vec<String> = suites_named(src, &suites)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(
        found,
        ["qos", "four-corners", "four-corners", "four-corners"]
    );
}
