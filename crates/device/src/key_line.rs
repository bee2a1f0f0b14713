//! Where a key is set in a TOML text, for error messages: the loader's unknown-key errors and
//! the provenance table's checks both point at the line a user wrote.

/// Line where `key` is set in `section` ("" = top level), found by reading the text: good
/// enough for error messages (dotted keys and inline tables fall back to the section).
pub(crate) fn find_key_line(text: &str, section: &str, key: &str) -> Option<usize> {
    let mut current = "";
    let mut section_line = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix('[') {
            current = h.split(']').next().unwrap_or("").trim();
            if current == section {
                section_line = Some(i + 1);
            }
            continue;
        }
        if current == section {
            let k = t.split('=').next().unwrap_or("").trim().trim_matches('"');
            if k == key && t.contains('=') {
                return Some(i + 1);
            }
        }
    }
    section_line
}
