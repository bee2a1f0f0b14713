//! The suite lists people read are checked against the registry (`flashlab_suite::SUITES`):
//! README.md's `flashlab suite` line and docs/suites.md's list of names each name every suite,
//! and docs/suites.md has a section whose heading names it. A suite added to the registry
//! and not to the docs fails here.

use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text from the line holding `start` up to the line holding `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no '{start}'"));
    let to = from
        + text[from..]
            .find(end)
            .unwrap_or_else(|| panic!("no '{end}'"));
    &text[from..to]
}

/// Whether `text` names `suite` as a whole word (`power` is not `power-states`).
fn names(text: &str, suite: &str) -> bool {
    text.match_indices(suite).any(|(i, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        let before = text[..i].chars().next_back().is_none_or(|c| !word(c));
        let after = text[i + suite.len()..]
            .chars()
            .next()
            .is_none_or(|c| !word(c));
        before && after
    })
}

fn missing(text: &str) -> Vec<&'static str> {
    flashlab_suite::SUITES
        .iter()
        .map(|k| k.name())
        .filter(|n| !names(text, n))
        .collect()
}

#[test]
fn readme_lists_every_suite() {
    let readme = read("README.md");
    let list = between(&readme, "flashlab suite NAME", "--target runs it");
    assert_eq!(missing(list), Vec::<&str>::new(), "README.md's suite list");
}

#[test]
fn suites_doc_lists_every_suite_and_has_a_section_for_each() {
    let doc = read("docs/suites.md");
    let list = between(&doc, "`NAME` is one of", "any other name");
    assert_eq!(missing(list), Vec::<&str>::new(), "docs/suites.md's list");
    let headings: String = doc
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let without: Vec<&str> = flashlab_suite::SUITES
        .iter()
        .map(|k| k.name())
        .filter(|n| !headings.contains(&format!("`{n}`")))
        .collect();
    assert_eq!(without, Vec::<&str>::new(), "docs/suites.md's headings");
}

#[test]
fn the_check_finds_a_missing_name() {
    assert!(names("a, power, b", "power"));
    assert!(!names("power-states", "power"));
    assert!(!names("a, b", "oltp"));
}
