//! Where each key of a description came from: the `[provenance]` table of a preset or a
//! drive file. Its keys are the quoted dotted keys of the description, its values inline
//! tables naming a kind and what that kind needs:
//!
//! ```toml
//! [provenance]
//! "nand.t_read" = { kind = "cited", source = "Samsung V5 announcement: read ~50 us" }
//! "controller.max_iops" = { kind = "cap", figure = "500K IOPS 4 KiB random read (data sheet)" }
//! ```
//!
//! Provenance is metadata: it never reaches the model, the state file's configuration hash
//! or a run's results.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::ConfigError;

/// The kinds of provenance a key can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProvenanceKind {
    /// From a data sheet, paper, review or announcement.
    Cited,
    /// Measured by a job of a measurement plan.
    Measured,
    /// Fitted so that the model meets a published or measured figure.
    Fitted,
    /// Derived from other figures by a stated relation.
    Inferred,
    /// An estimate, with its reasoning.
    Estimate,
    /// The class default, stated.
    Default,
    /// A cap set from a spec figure (the spec is met by the cap, not by a mechanism).
    Cap,
}

impl ProvenanceKind {
    /// Every kind, in the order they are shown.
    pub const ALL: [ProvenanceKind; 7] = [
        ProvenanceKind::Cited,
        ProvenanceKind::Measured,
        ProvenanceKind::Fitted,
        ProvenanceKind::Inferred,
        ProvenanceKind::Estimate,
        ProvenanceKind::Default,
        ProvenanceKind::Cap,
    ];

    /// The name written in a file.
    pub fn name(self) -> &'static str {
        match self {
            ProvenanceKind::Cited => "cited",
            ProvenanceKind::Measured => "measured",
            ProvenanceKind::Fitted => "fitted",
            ProvenanceKind::Inferred => "inferred",
            ProvenanceKind::Estimate => "estimate",
            ProvenanceKind::Default => "default",
            ProvenanceKind::Cap => "cap",
        }
    }

    /// The kind a file names, if it is one.
    pub fn from_name(name: &str) -> Option<ProvenanceKind> {
        ProvenanceKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Fields an entry of this kind must have.
    pub fn required(self) -> &'static [&'static str] {
        match self {
            ProvenanceKind::Cited => &["source"],
            ProvenanceKind::Measured => &["job", "figure"],
            ProvenanceKind::Fitted | ProvenanceKind::Cap => &["figure"],
            ProvenanceKind::Inferred => &["relation"],
            ProvenanceKind::Estimate | ProvenanceKind::Default => &["reason"],
        }
    }

    /// Fields an entry of this kind may have besides `kind` and the required ones.
    pub fn optional(self) -> &'static [&'static str] {
        match self {
            ProvenanceKind::Inferred => &["from"],
            _ => &[],
        }
    }

    /// The kinds and their fields, as an error message lists them.
    pub fn valid_list() -> String {
        ProvenanceKind::ALL
            .iter()
            .map(|k| {
                let mut fields: Vec<String> = k.required().iter().map(|f| f.to_string()).collect();
                fields.extend(k.optional().iter().map(|f| format!("optional {f}")));
                format!("{} ({})", k.name(), fields.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl std::fmt::Display for ProvenanceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One key's provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Provenance {
    Cited {
        source: String,
    },
    Measured {
        job: String,
        figure: String,
    },
    Fitted {
        figure: String,
    },
    Inferred {
        relation: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        from: Vec<String>,
    },
    Estimate {
        reason: String,
    },
    Default {
        reason: String,
    },
    Cap {
        figure: String,
    },
}

impl Provenance {
    pub fn kind(&self) -> ProvenanceKind {
        match self {
            Provenance::Cited { .. } => ProvenanceKind::Cited,
            Provenance::Measured { .. } => ProvenanceKind::Measured,
            Provenance::Fitted { .. } => ProvenanceKind::Fitted,
            Provenance::Inferred { .. } => ProvenanceKind::Inferred,
            Provenance::Estimate { .. } => ProvenanceKind::Estimate,
            Provenance::Default { .. } => ProvenanceKind::Default,
            Provenance::Cap { .. } => ProvenanceKind::Cap,
        }
    }

    /// The entry's fields in file order, `kind` first.
    fn fields(&self) -> Vec<(&'static str, FieldValue<'_>)> {
        use FieldValue::One;
        let mut v = vec![("kind", One(self.kind().name()))];
        match self {
            Provenance::Cited { source } => v.push(("source", One(source))),
            Provenance::Measured { job, figure } => {
                v.push(("job", One(job)));
                v.push(("figure", One(figure)));
            }
            Provenance::Fitted { figure } | Provenance::Cap { figure } => {
                v.push(("figure", One(figure)))
            }
            Provenance::Inferred { relation, from } => {
                v.push(("relation", One(relation)));
                if !from.is_empty() {
                    v.push(("from", FieldValue::Many(from)));
                }
            }
            Provenance::Estimate { reason } | Provenance::Default { reason } => {
                v.push(("reason", One(reason)))
            }
        }
        v
    }

    /// The entry as an inline TOML table, as a `[provenance]` table holds it.
    pub fn to_inline_toml(&self) -> String {
        let fields: Vec<String> = self
            .fields()
            .into_iter()
            .map(|(name, value)| format!("{name} = {}", value.to_toml()))
            .collect();
        format!("{{ {} }}", fields.join(", "))
    }

    /// One line for people: what the entry says, without the kind.
    pub fn summary(&self) -> String {
        match self {
            Provenance::Cited { source } => source.clone(),
            Provenance::Measured { job, figure } => format!("{figure} (job {job})"),
            Provenance::Fitted { figure } => format!("fitted: {figure}"),
            Provenance::Cap { figure } => format!("cap: {figure}"),
            Provenance::Inferred { relation, from } if from.is_empty() => relation.clone(),
            Provenance::Inferred { relation, from } => {
                format!("{relation} (from {})", from.join(", "))
            }
            Provenance::Estimate { reason } | Provenance::Default { reason } => reason.clone(),
        }
    }

    /// Reads one entry; the error says what is wrong and what would be valid.
    pub fn from_toml(value: &toml::Value) -> Result<Provenance, String> {
        let Some(t) = value.as_table() else {
            return Err(format!(
                "expected an inline table such as {{ kind = \"cited\", source = \"...\" }}, \
                 found {}; valid kinds: {}",
                value.type_str(),
                ProvenanceKind::valid_list()
            ));
        };
        let kind = match t.get("kind") {
            Some(toml::Value::String(s)) => ProvenanceKind::from_name(s).ok_or_else(|| {
                format!(
                    "unknown kind \"{s}\"; valid kinds: {}",
                    ProvenanceKind::valid_list()
                )
            })?,
            Some(other) => return Err(format!("kind is a {}, not a string", other.type_str())),
            None => {
                return Err(format!(
                    "no kind; valid kinds: {}",
                    ProvenanceKind::valid_list()
                ))
            }
        };
        check_fields(kind, t)?;
        let text = |f: &str| -> String {
            t.get(f)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        Ok(match kind {
            ProvenanceKind::Cited => Provenance::Cited {
                source: text("source"),
            },
            ProvenanceKind::Measured => Provenance::Measured {
                job: text("job"),
                figure: text("figure"),
            },
            ProvenanceKind::Fitted => Provenance::Fitted {
                figure: text("figure"),
            },
            ProvenanceKind::Inferred => Provenance::Inferred {
                relation: text("relation"),
                from: from_list(t.get("from")),
            },
            ProvenanceKind::Estimate => Provenance::Estimate {
                reason: text("reason"),
            },
            ProvenanceKind::Default => Provenance::Default {
                reason: text("reason"),
            },
            ProvenanceKind::Cap => Provenance::Cap {
                figure: text("figure"),
            },
        })
    }
}

enum FieldValue<'a> {
    One(&'a str),
    Many(&'a [String]),
}

impl FieldValue<'_> {
    fn to_toml(&self) -> String {
        match self {
            FieldValue::One(s) => toml::Value::String(s.to_string()).to_string(),
            FieldValue::Many(v) => {
                let items: Vec<String> = v
                    .iter()
                    .map(|s| toml::Value::String(s.clone()).to_string())
                    .collect();
                format!("[{}]", items.join(", "))
            }
        }
    }
}

/// Every field present is one the kind knows, every required one is there and none is empty.
fn check_fields(kind: ProvenanceKind, t: &toml::Table) -> Result<(), String> {
    let needs = || {
        let mut all: Vec<&str> = vec!["kind"];
        all.extend(kind.required());
        all.extend(kind.optional());
        all.join(", ")
    };
    for (field, value) in t {
        let known = field == "kind"
            || kind.required().contains(&field.as_str())
            || kind.optional().contains(&field.as_str());
        if !known {
            return Err(format!(
                "`{field}` is not a field of kind \"{kind}\"; its fields: {}",
                needs()
            ));
        }
        let ok = match value {
            toml::Value::String(s) => !s.trim().is_empty(),
            toml::Value::Array(a) if field == "from" => a
                .iter()
                .all(|v| v.as_str().is_some_and(|s| !s.trim().is_empty())),
            _ => false,
        };
        if !ok {
            let what = if field == "from" {
                "a text or a list of texts"
            } else {
                "a text"
            };
            return Err(format!(
                "`{field}` of kind \"{kind}\" must be {what}, not empty"
            ));
        }
    }
    for field in kind.required() {
        if !t.contains_key(*field) {
            return Err(format!(
                "kind \"{kind}\" needs `{field}`; its fields: {}",
                needs()
            ));
        }
    }
    Ok(())
}

fn from_list(v: Option<&toml::Value>) -> Vec<String> {
    match v {
        Some(toml::Value::String(s)) => vec![s.clone()],
        Some(toml::Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The provenance of a description's keys, by dotted key.
pub type ProvenanceMap = BTreeMap<String, Provenance>;

/// Keys that label a description rather than describe it: no provenance is asked of them.
pub const LABEL_KEYS: &[&str] = &["name", "description"];

/// A `[provenance]` table as a file holds it (empty map: empty text).
pub fn provenance_toml(map: &ProvenanceMap) -> String {
    if map.is_empty() {
        return String::new();
    }
    let mut s = String::from("[provenance]\n");
    for (key, p) in map {
        s.push_str(&format!(
            "{} = {}\n",
            toml::Value::String(key.clone()),
            p.to_inline_toml()
        ));
    }
    s
}

/// The dotted keys `table` sets, to `depth` levels: a value at that depth (or a value that
/// is not a table, above it) is one key. A device description is two levels deep
/// (`section.key`), a system description three (`raid.NAME.key`).
pub fn set_keys(table: &toml::Table, depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    collect_keys("", table, depth, &mut out);
    out
}

fn collect_keys(prefix: &str, table: &toml::Table, depth: usize, out: &mut Vec<String>) {
    for (k, v) in table {
        if prefix.is_empty() && k == "provenance" {
            continue;
        }
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(sub) if depth > 1 => collect_keys(&key, sub, depth - 1, out),
            _ => out.push(key),
        }
    }
}

/// Reads the `[provenance]` table of `file` (`text` is its content, for lines): every entry
/// valid and naming a key in `keys` (the keys the file sets).
pub fn read_provenance(
    file: &str,
    text: &str,
    value: Option<&toml::Value>,
    keys: &[String],
) -> Result<ProvenanceMap, ConfigError> {
    let mut map = ProvenanceMap::new();
    let Some(value) = value else {
        return Ok(map);
    };
    let at = |key: &str| match crate::load::find_key_line(text, "provenance", key) {
        Some(l) => format!("{file}:{l}"),
        None => file.to_string(),
    };
    let Some(table) = value.as_table() else {
        return Err(ConfigError::Parse {
            origin: at(""),
            message: "`provenance` is a table: write [provenance] and, under it, \
                      \"section.key\" = { kind = ..., ... } for each key"
                .to_string(),
        });
    };
    for (key, entry) in table {
        if !keys.iter().any(|k| k == key) {
            let valid: Vec<&str> = keys.iter().map(String::as_str).collect();
            return Err(ConfigError::Parse {
                origin: at(key),
                message: format!(
                    "provenance of `{key}`, a key this file does not set{}; keys it sets: {}",
                    match crate::config::nearest(key, &valid) {
                        Some(n) => format!(" (did you mean `{n}`?)"),
                        None => String::new(),
                    },
                    valid.join(", ")
                ),
            });
        }
        let p = Provenance::from_toml(entry).map_err(|message| ConfigError::Parse {
            origin: at(key),
            message: format!("provenance of `{key}`: {message}"),
        })?;
        map.insert(key.clone(), p);
    }
    Ok(map)
}

/// Where one key's value came from, as `devices describe` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "origin", rename_all = "snake_case")]
pub enum KeyOrigin {
    /// The description's `[provenance]` entry.
    Recorded(Provenance),
    /// `--set` on the command line replaced the described value.
    CommandLine,
    /// The description gives no provenance for it.
    Unrecorded,
}

impl KeyOrigin {
    /// The group `describe` shows the key in.
    pub fn group(&self) -> &'static str {
        match self {
            KeyOrigin::Recorded(p) => p.kind().name(),
            KeyOrigin::CommandLine => "set on the command line",
            KeyOrigin::Unrecorded => "no provenance",
        }
    }
}

/// One key of a loaded description: its value (TOML) and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DescribedKey {
    pub key: String,
    pub value: String,
    #[serde(flatten)]
    pub origin: KeyOrigin,
}

/// The keys of `table` (a loaded description after `--set`), each with its origin:
/// `overridden` keys were set on the command line.
pub fn describe_keys(
    table: &toml::Table,
    depth: usize,
    provenance: &ProvenanceMap,
    overridden: &[String],
) -> Vec<DescribedKey> {
    let mut out = Vec::new();
    for key in set_keys(table, depth) {
        if LABEL_KEYS.contains(&key.as_str()) {
            continue;
        }
        let value = lookup(table, &key)
            .map(|v| v.to_string())
            .unwrap_or_default();
        let origin = if overridden.contains(&key) {
            KeyOrigin::CommandLine
        } else {
            match provenance.get(&key) {
                Some(p) => KeyOrigin::Recorded(p.clone()),
                None => KeyOrigin::Unrecorded,
            }
        };
        out.push(DescribedKey { key, value, origin });
    }
    out
}

/// The value at a dotted key as [`set_keys`] made it (a part may itself hold dots only as
/// the last part).
fn lookup<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    if let Some(v) = table.get(key) {
        return Some(v);
    }
    let (head, rest) = key.split_once('.')?;
    lookup(table.get(head)?.as_table()?, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(s: &str) -> Result<Provenance, String> {
        let t: toml::Table = toml::from_str(&format!("e = {s}")).unwrap();
        Provenance::from_toml(&t["e"])
    }

    #[test]
    fn every_kind_reads_and_writes_back() {
        let cases = [
            r#"{ kind = "cited", source = "Samsung V5 announcement: read ~50 us" }"#,
            r#"{ kind = "measured", job = "qd1-read", figure = "read clat mean 61.2 us" }"#,
            r#"{ kind = "fitted", figure = "3,500 MB/s sequential read (data sheet)" }"#,
            r#"{ kind = "inferred", relation = "1 / QD1 IOPS", from = ["qd1-read", "qd1-write"] }"#,
            r#"{ kind = "inferred", relation = "half the outer rate" }"#,
            r#"{ kind = "estimate", reason = "typical of 96-layer TLC" }"#,
            r#"{ kind = "default", reason = "TLC class default" }"#,
            r#"{ kind = "cap", figure = "500K IOPS random read (data sheet)" }"#,
        ];
        for c in cases {
            let p = entry(c).unwrap_or_else(|e| panic!("{c}: {e}"));
            assert_eq!(p.to_inline_toml(), c, "round trip");
            assert_eq!(entry(&p.to_inline_toml()).unwrap(), p);
        }
        let p = entry(r#"{ kind = "inferred", relation = "r", from = "one job" }"#).unwrap();
        assert_eq!(
            p,
            Provenance::Inferred {
                relation: "r".into(),
                from: vec!["one job".into()]
            }
        );
    }

    #[test]
    fn bad_entries_say_what_is_valid() {
        let e = entry(r#"{ kind = "guessed", reason = "x" }"#).unwrap_err();
        assert!(e.contains("unknown kind \"guessed\""), "{e}");
        assert!(e.contains("cited (source)"), "{e}");
        assert!(e.contains("inferred (relation, optional from)"), "{e}");
        let e = entry(r#"{ kind = "measured", job = "j" }"#).unwrap_err();
        assert!(e.contains("needs `figure`"), "{e}");
        let e = entry(r#"{ kind = "cited", reason = "x" }"#).unwrap_err();
        assert!(
            e.contains("`reason` is not a field of kind \"cited\""),
            "{e}"
        );
        let e = entry(r#"{ kind = "cited", source = "  " }"#).unwrap_err();
        assert!(e.contains("not empty"), "{e}");
        let e = entry(r#"{ source = "x" }"#).unwrap_err();
        assert!(e.contains("no kind"), "{e}");
        let e = entry(r#""a data sheet""#).unwrap_err();
        assert!(e.contains("expected an inline table"), "{e}");
        let e = entry(r#"{ kind = "cap", figure = 500000 }"#).unwrap_err();
        assert!(e.contains("must be a text"), "{e}");
    }

    #[test]
    fn the_table_writes_as_it_reads() {
        let mut map = ProvenanceMap::new();
        map.insert(
            "nand.t_read".into(),
            Provenance::Cited {
                source: "a \"quoted\" source".into(),
            },
        );
        map.insert(
            "controller.max_iops".into(),
            Provenance::Cap {
                figure: "1M IOPS".into(),
            },
        );
        let text = provenance_toml(&map);
        let t: toml::Table = toml::from_str(&text).unwrap();
        let keys = vec!["nand.t_read".to_string(), "controller.max_iops".to_string()];
        let back = read_provenance("f.toml", &text, t.get("provenance"), &keys).unwrap();
        assert_eq!(back, map);
        assert_eq!(provenance_toml(&ProvenanceMap::new()), "");
    }

    #[test]
    fn keys_are_found_to_the_given_depth() {
        let t: toml::Table = toml::from_str(
            "name = \"x\"\n[nand]\nt_prog = [\"1ms\", \"2ms\"]\n[drive.a]\npreset = \"p\"\n\
             set = { \"buffer.plp\" = true }\n[provenance]\n\"nand.t_prog\" = {}\n",
        )
        .unwrap();
        let keys = set_keys(&t, 3);
        assert_eq!(
            keys,
            vec!["drive.a.preset", "drive.a.set", "name", "nand.t_prog"]
        );
        let p = ProvenanceMap::new();
        let d = describe_keys(&t, 3, &p, &["drive.a.set".to_string()]);
        assert_eq!(d.len(), 3, "the name is a label");
        assert_eq!(d[0].value, "\"p\"");
        assert_eq!(d[1].origin, KeyOrigin::CommandLine);
        assert_eq!(d[2].value, "[\"1ms\", \"2ms\"]");
        assert_eq!(d[2].origin, KeyOrigin::Unrecorded);
    }
}
