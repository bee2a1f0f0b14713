//! Finding a description (preset or file), checking its keys, applying `--set` overrides and
//! reporting errors at their place.

use flashlab_engine::input::excerpt;
use serde::Deserialize;

use crate::config::{nearest, valid_keys, DeviceConfig, SECTIONS};
use crate::error::ConfigError;
use crate::key_line::find_key_line;
use crate::provenance::{describe_keys, read_provenance, set_keys, DescribedKey, ProvenanceMap};

/// A built-in preset: name and embedded text.
pub(crate) struct Preset {
    pub name: &'static str,
    pub text: &'static str,
}

pub(crate) const PRESETS: &[Preset] = &[
    Preset {
        name: "crucial-t700-2tb",
        text: include_str!("../../../presets/crucial-t700-2tb.toml"),
    },
    Preset {
        name: "generic-tlc-256gb",
        text: include_str!("../../../presets/generic-tlc-256gb.toml"),
    },
    Preset {
        name: "intel-ssd-320-300gb",
        text: include_str!("../../../presets/intel-ssd-320-300gb.toml"),
    },
    Preset {
        name: "intel-ssd-710-200gb",
        text: include_str!("../../../presets/intel-ssd-710-200gb.toml"),
    },
    Preset {
        name: "intel-x25-e-64gb",
        text: include_str!("../../../presets/intel-x25-e-64gb.toml"),
    },
    Preset {
        name: "kioxia-cd6-r-7.68tb",
        text: include_str!("../../../presets/kioxia-cd6-r-7.68tb.toml"),
    },
    Preset {
        name: "micron-3400-512gb",
        text: include_str!("../../../presets/micron-3400-512gb.toml"),
    },
    Preset {
        name: "micron-7400-pro-7.68tb",
        text: include_str!("../../../presets/micron-7400-pro-7.68tb.toml"),
    },
    Preset {
        name: "micron-p300-200gb",
        text: include_str!("../../../presets/micron-p300-200gb.toml"),
    },
    Preset {
        name: "ocz-vertex-3-240gb",
        text: include_str!("../../../presets/ocz-vertex-3-240gb.toml"),
    },
    Preset {
        name: "samsung-pm981a-256gb",
        text: include_str!("../../../presets/samsung-pm981a-256gb.toml"),
    },
    Preset {
        name: "samsung-pm9a3-7.68tb",
        text: include_str!("../../../presets/samsung-pm9a3-7.68tb.toml"),
    },
    Preset {
        name: "samsung-pm9d3a-7.68tb",
        text: include_str!("../../../presets/samsung-pm9d3a-7.68tb.toml"),
    },
    Preset {
        name: "solidigm-d5-p5316-30.72tb",
        text: include_str!("../../../presets/solidigm-d5-p5316-30.72tb.toml"),
    },
    Preset {
        name: "solidigm-d5-p5430-15.36tb",
        text: include_str!("../../../presets/solidigm-d5-p5430-15.36tb.toml"),
    },
    Preset {
        name: "solidigm-d5-p5430-3.84tb",
        text: include_str!("../../../presets/solidigm-d5-p5430-3.84tb.toml"),
    },
    Preset {
        name: "solidigm-d5-p5430-30.72tb",
        text: include_str!("../../../presets/solidigm-d5-p5430-30.72tb.toml"),
    },
    Preset {
        name: "solidigm-d5-p5430-7.68tb",
        text: include_str!("../../../presets/solidigm-d5-p5430-7.68tb.toml"),
    },
    Preset {
        name: "solidigm-d7-p5520-15.36tb",
        text: include_str!("../../../presets/solidigm-d7-p5520-15.36tb.toml"),
    },
    Preset {
        name: "solidigm-d7-p5520-7.68tb",
        text: include_str!("../../../presets/solidigm-d7-p5520-7.68tb.toml"),
    },
    Preset {
        name: "tiny-test-1gb",
        text: include_str!("../../../presets/tiny-test-1gb.toml"),
    },
    Preset {
        name: "wd-sn850-1tb",
        text: include_str!("../../../presets/wd-sn850-1tb.toml"),
    },
    Preset {
        name: "wd-ultrastar-dc-zn540-1tb",
        text: include_str!("../../../presets/wd-ultrastar-dc-zn540-1tb.toml"),
    },
];

/// 1-based line of byte offset `pos` in `text`.
fn line_of(text: &str, pos: usize) -> usize {
    text[..pos.min(text.len())].matches('\n').count() + 1
}

fn split_key(dotted: &str) -> (&str, &str) {
    match dotted.split_once('.') {
        Some((s, k)) => (s, k),
        None => ("", dotted),
    }
}

/// Refuse keys that are not documented, with the nearest valid one.
fn check_keys(table: &toml::Table, file: &str, text: &str) -> Result<(), ConfigError> {
    let at = |section: &str, key: &str| match find_key_line(text, section, key) {
        Some(l) => format!("{file}:{l}"),
        None => file.to_string(),
    };
    for (key, value) in table {
        let top = valid_keys("");
        if !top.contains(&key.as_str()) {
            return Err(unknown_key(at("", key), key, "", &top));
        }
        if SECTIONS.contains(&key.as_str()) {
            let Some(sub) = value.as_table() else {
                return Err(ConfigError::Parse {
                    origin: at("", key),
                    message: format!("`{key}` is a section: write [{key}] and keys under it"),
                });
            };
            let valid = valid_keys(key);
            for k in sub.keys() {
                if !valid.contains(&k.as_str()) {
                    let origin = match find_key_line(text, key, k) {
                        Some(l) => format!("{file}:{l}"),
                        None => file.to_string(),
                    };
                    return Err(unknown_key(origin, &format!("{key}.{k}"), k, &valid));
                }
            }
        }
    }
    Ok(())
}

fn unknown_key(origin: String, shown: &str, bare: &str, valid: &[&str]) -> ConfigError {
    let bare = if bare.is_empty() { shown } else { bare };
    ConfigError::UnknownKey {
        origin,
        key: shown.to_string(),
        suggestion: nearest(bare, valid).map(str::to_string),
        valid: valid.join(", "),
    }
}

/// A `--set` value: a TOML scalar (or array) if it reads as one, else a string.
fn override_value(value: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {value}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(value.to_string())),
        Err(_) => toml::Value::String(value.to_string()),
    }
}

fn apply_override(table: &mut toml::Table, key: &str, value: &str) -> Result<(), ConfigError> {
    let origin = format!("--set {}", excerpt(&format!("{key}={value}")));
    let (section, name) = split_key(key);
    if section.is_empty() {
        let top = valid_keys("");
        if SECTIONS.contains(&name) {
            return Err(ConfigError::Parse {
                origin,
                message: format!(
                    "`{name}` is a section; set one of its keys: {}",
                    valid_keys(name)
                        .iter()
                        .map(|k| format!("{name}.{k}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        if !top.contains(&name) {
            return Err(unknown_key(origin, key, name, &top));
        }
        table.insert(name.to_string(), override_value(value));
        return Ok(());
    }
    if !SECTIONS.contains(&section) {
        return Err(unknown_key(origin, section, section, SECTIONS));
    }
    let valid = valid_keys(section);
    if !valid.contains(&name) {
        return Err(unknown_key(origin, key, name, &valid));
    }
    let entry = table
        .entry(section.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(t) = entry.as_table_mut() else {
        return Err(ConfigError::Parse {
            origin,
            message: format!("`{section}` is not a section in this file"),
        });
    };
    // The user capacity and the spare factor are two ways to say one thing: an override of
    // either replaces whichever the description gave.
    if section == "capacity" {
        match name {
            "user" => t.remove("spare_factor"),
            "spare_factor" => t.remove("user"),
            _ => None,
        };
    }
    t.insert(name.to_string(), override_value(value));
    Ok(())
}

fn toml_error(origin_file: &str, text: Option<&str>, e: &toml::de::Error) -> ConfigError {
    let origin = match (text, e.span()) {
        (Some(text), Some(span)) => format!("{origin_file}:{}", line_of(text, span.start)),
        _ => origin_file.to_string(),
    };
    ConfigError::Parse {
        origin,
        message: flashlab_engine::input::tame(e.message().trim()),
    }
}

/// Load a preset by name, or a `.toml` file by path, then apply `overrides` (`dotted.key`,
/// `value`) and check the result.
pub fn load_device_config(
    name_or_path: &str,
    overrides: &[(String, String)],
) -> Result<DeviceConfig, ConfigError> {
    let (file, text) = read_description(name_or_path)?;
    parse_device_config(&file, &text, overrides)
}

/// [`load_device_config`] on text already in memory; `file` names it in errors.
pub fn parse_device_config(
    file: &str,
    text: &str,
    overrides: &[(String, String)],
) -> Result<DeviceConfig, ConfigError> {
    parse_described(file, text, overrides).map(|d| d.config)
}

/// A description as loaded, with where each of its keys came from.
#[derive(Debug, Clone)]
pub struct DescribedDevice {
    pub config: DeviceConfig,
    /// The preset's file (`presets/NAME.toml`) or the path given.
    pub file: String,
    /// Every key the description sets (after `--set`), labels (`name`, `description`) aside.
    pub keys: Vec<DescribedKey>,
    /// The description's `[provenance]` table as written.
    pub provenance: ProvenanceMap,
}

/// Depth of a device description's keys: `section.key`.
const DEVICE_KEY_DEPTH: usize = 2;

/// [`load_device_config`], keeping the description's provenance: what `devices describe`
/// shows.
pub fn load_device_described(
    name_or_path: &str,
    overrides: &[(String, String)],
) -> Result<DescribedDevice, ConfigError> {
    let (file, text) = read_description(name_or_path)?;
    parse_described(&file, &text, overrides)
}

/// The file name and text of a preset or a description file.
fn read_description(name_or_path: &str) -> Result<(String, String), ConfigError> {
    if let Some(p) = PRESETS.iter().find(|p| p.name == name_or_path) {
        return Ok((format!("presets/{}.toml", p.name), p.text.to_string()));
    }
    let path = std::path::Path::new(name_or_path);
    let looks_like_file = name_or_path.ends_with(".toml") || path.is_file();
    if !looks_like_file {
        return Err(ConfigError::UnknownDevice {
            name: name_or_path.to_string(),
            presets: PRESETS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    match flashlab_engine::input::read_text(
        path,
        flashlab_engine::input::MAX_CONFIG_FILE_BYTES,
        "a drive description",
    ) {
        Ok(t) => Ok((name_or_path.to_string(), t)),
        Err(e) => Err(ConfigError::Io {
            path: name_or_path.to_string(),
            message: e.to_string(),
        }),
    }
}

/// `text` with its `[provenance]` table's lines blanked (lines keep their numbers), when
/// that leaves exactly the description without it; `None` when the table is written some
/// other way (the description is then read from its parsed form, without line numbers).
fn text_without_provenance(text: &str, rest: &toml::Table) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            inside =
                t.trim_start_matches('[').split(']').next().map(str::trim) == Some("provenance");
        }
        if inside {
            out.push_str(if line.ends_with('\n') { "\n" } else { "" });
        } else {
            out.push_str(line);
        }
    }
    let parsed: toml::Table = toml::from_str(&out).ok()?;
    (parsed == *rest).then_some(out)
}

fn parse_described(
    file: &str,
    text: &str,
    overrides: &[(String, String)],
) -> Result<DescribedDevice, ConfigError> {
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| toml_error(file, Some(text), &e))?;
    let provenance_value = table.remove("provenance");
    check_keys(&table, file, text)?;
    let described_keys = set_keys(&table, DEVICE_KEY_DEPTH);
    let provenance = read_provenance(file, text, provenance_value.as_ref(), &described_keys)?;
    let mut config: DeviceConfig = match provenance_value {
        None => toml::from_str(text).map_err(|e| toml_error(file, Some(text), &e))?,
        Some(_) => match text_without_provenance(text, &table) {
            Some(t) => toml::from_str(&t).map_err(|e| toml_error(file, Some(&t), &e))?,
            None => DeviceConfig::deserialize(toml::Value::Table(table.clone()))
                .map_err(|e| toml_error(file, None, &e))?,
        },
    };
    for (key, value) in overrides {
        apply_override(&mut table, key, value)?;
        // Deserialise after each override so an error names the one that caused it.
        config = DeviceConfig::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
            toml_error(
                &format!("--set {}", excerpt(&format!("{key}={value}"))),
                None,
                &e,
            )
        })?;
    }
    if let Err(e) = config.resolve() {
        let origin = match overrides.iter().rev().find(|(k, _)| *k == e.key) {
            Some((k, v)) => format!("--set {}", excerpt(&format!("{k}={v}"))),
            None => {
                let (section, name) = split_key(&e.key);
                match find_key_line(text, section, name) {
                    Some(l) => format!("{file}:{l}"),
                    None => file.to_string(),
                }
            }
        };
        return Err(ConfigError::from_key_error(origin, e));
    }
    let overridden: Vec<String> = overrides.iter().map(|(k, _)| k.clone()).collect();
    let keys = describe_keys(&table, DEVICE_KEY_DEPTH, &provenance, &overridden);
    Ok(DescribedDevice {
        config,
        file: file.to_string(),
        keys,
        provenance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::{KeyOrigin, Provenance};

    fn set(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn presets_load_and_resolve() {
        for p in PRESETS {
            let c = load_device_config(p.name, &[]).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(c.name, p.name);
            assert!(!c.description.is_empty());
        }
    }

    #[test]
    fn a_spare_factor_override_replaces_the_user_capacity_and_back() {
        let raw = |c: &DeviceConfig| c.resolve().unwrap().drive_user_bytes;
        let given = load_device_config("generic-tlc-256gb", &[]).unwrap();
        assert!(
            given.capacity.user.is_some(),
            "the preset sets capacity.user"
        );
        let c = load_device_config("generic-tlc-256gb", &[set("capacity.spare_factor", "0.2")])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.capacity.user, None);
        assert_eq!(c.capacity.spare_factor, Some(0.2));
        assert!(raw(&c) < raw(&given));
        // And a user capacity given after it replaces the spare factor in turn.
        let c = load_device_config(
            "generic-tlc-256gb",
            &[
                set("capacity.spare_factor", "0.2"),
                set("capacity.user", "200GB"),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.capacity.spare_factor, None);
        assert_eq!(raw(&c), 200_000_000_000 / 4096 * 4096);
        // Both in one description is still refused: the file contradicts itself.
        let preset = PRESETS
            .iter()
            .find(|p| p.name == "generic-tlc-256gb")
            .unwrap();
        let text = preset
            .text
            .replace("user = \"256GB\"", "user = \"256GB\"\nspare_factor = 0.1");
        let e = parse_device_config("t.toml", &text, &[]).unwrap_err();
        assert!(e.to_string().contains("given together"), "{e}");
    }

    #[test]
    fn overrides_change_values_and_accept_any_key() {
        let c = load_device_config(
            "tiny-test-1gb",
            &[
                set("nand.channels", "4"),
                set("buffer.plp", "true"),
                set("nand.t_read", "70us"),
                set("link.kind", "sata-6g"),
                set("nand.t_prog", "[\"1ms\", \"3ms\"]"),
                set("description", "changed"),
            ],
        )
        .unwrap();
        assert_eq!(c.nand.channels, 4);
        assert!(c.buffer.plp);
        assert_eq!(c.nand.t_read.unwrap().0, 70_000);
        assert_eq!(c.nand.t_prog.unwrap().0, 2_000_000);
        assert_eq!(c.link.kind, "sata-6g");
        assert_eq!(c.description, "changed");
    }

    #[test]
    fn override_of_unknown_key_lists_valid_keys() {
        let e = load_device_config("tiny-test-1gb", &[set("nand.chanels", "4")]).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("--set nand.chanels=4: unknown key"),
            "{msg}"
        );
        assert!(msg.contains("did you mean `channels`"), "{msg}");
        assert!(msg.contains("dies_per_channel"), "{msg}");
        let e = load_device_config("tiny-test-1gb", &[set("nan.channels", "4")]).unwrap_err();
        assert!(e.to_string().contains("did you mean `nand`"), "{e}");
        let e = load_device_config("tiny-test-1gb", &[set("nand", "4")]).unwrap_err();
        assert!(e.to_string().contains("nand.channels"), "{e}");
    }

    #[test]
    fn override_with_bad_unit_names_the_option() {
        let e = load_device_config("tiny-test-1gb", &[set("nand.page_size", "16 parsecs")])
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("--set nand.page_size=16 parsecs:"), "{msg}");
        assert!(msg.contains("KiB"), "{msg}");
    }

    #[test]
    fn out_of_range_names_key_and_range() {
        let e = load_device_config("tiny-test-1gb", &[set("nand.channels", "0")]).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("--set nand.channels=0: nand.channels = 0"),
            "{msg}"
        );
        assert!(msg.contains("1 to 64"), "{msg}");
        let e = load_device_config("tiny-test-1gb", &[set("ftl.iu", "3KiB")]).unwrap_err();
        assert!(e.to_string().contains("4KiB, 8KiB, 16KiB"), "{e}");
    }

    const MINI: &str = "name = \"m\"\n[nand]\ncell = \"tlc\"\nchannels = 2\ndies_per_channel = 1\nblocks_per_plane = 256\npages_per_block = 192\npage_size = \"16KiB\"\n";

    #[test]
    fn file_errors_carry_file_and_line() {
        let text = format!("{MINI}chanels = 3\n");
        let e = parse_device_config("my.toml", &text, &[]).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("my.toml:9: unknown key `nand.chanels`"),
            "{msg}"
        );
        assert!(msg.contains("did you mean `channels`"), "{msg}");

        let text = MINI.replace("\"16KiB\"", "\"16 furlongs\"");
        let e = parse_device_config("my.toml", &text, &[]).unwrap_err();
        assert!(e.to_string().starts_with("my.toml:8:"), "{e}");
        assert!(e.to_string().contains("expected a size"), "{e}");

        let text = MINI.replace("channels = 2", "channels = 100");
        let e = parse_device_config("my.toml", &text, &[]).unwrap_err();
        assert!(
            e.to_string().starts_with("my.toml:4: nand.channels = 100"),
            "{e}"
        );

        let e = parse_device_config("my.toml", "name = \"x\"\n[nand\n", &[]).unwrap_err();
        assert!(e.to_string().starts_with("my.toml:2:"), "{e}");

        let text = format!("{MINI}[flt]\niu = \"4KiB\"\n");
        let e = parse_device_config("my.toml", &text, &[]).unwrap_err();
        assert!(e.to_string().contains("did you mean `ftl`"), "{e}");

        let text = MINI.replace("\"tlc\"", "\"plc\"");
        let e = parse_device_config("my.toml", &text, &[]).unwrap_err();
        assert!(e.to_string().contains("qlc"), "{e}");
    }

    #[test]
    fn minimal_file_uses_defaults() {
        let c = parse_device_config("my.toml", MINI, &[]).unwrap();
        assert_eq!(c.nand.planes_per_die, 2);
        assert_eq!(c.ftl.iu.0, 4096);
        assert_eq!(c.link.kind, "pcie-gen4-x4");
    }

    #[test]
    fn unknown_device_lists_presets() {
        let e = load_device_config("no-such-drive", &[]).unwrap_err();
        assert!(e.to_string().contains("generic-tlc-256gb"), "{e}");
        let e = load_device_config("/nonexistent/x.toml", &[]).unwrap_err();
        assert!(matches!(e, ConfigError::Io { .. }), "{e}");
    }

    const WITH_PROVENANCE: &str = "[provenance]\n\"nand.channels\" = { kind = \"cited\", source = \"data sheet\" }\n\"nand.page_size\" = { kind = \"estimate\", reason = \"usual for TLC\" }\n";

    #[test]
    fn provenance_is_read_and_changes_nothing_else() {
        let text = format!("{MINI}{WITH_PROVENANCE}");
        let plain = parse_device_config("my.toml", MINI, &[]).unwrap();
        let d = parse_described("my.toml", &text, &[]).unwrap();
        assert_eq!(d.config, plain, "provenance is metadata");
        assert_eq!(d.provenance.len(), 2);
        let channels = d.keys.iter().find(|k| k.key == "nand.channels").unwrap();
        assert_eq!(channels.value, "2");
        assert_eq!(
            channels.origin,
            KeyOrigin::Recorded(Provenance::Cited {
                source: "data sheet".into()
            })
        );
        let cell = d.keys.iter().find(|k| k.key == "nand.cell").unwrap();
        assert_eq!(cell.origin, KeyOrigin::Unrecorded);
        assert!(
            d.keys.iter().all(|k| k.key != "name"),
            "labels are not keys"
        );
        // The table may come first; an error after it still names its own line.
        let text = format!("name = \"m\"\n{WITH_PROVENANCE}{}", &MINI[11..])
            .replace("\"16KiB\"", "\"16 furlongs\"");
        let e = parse_device_config("my.toml", &text, &[]).unwrap_err();
        assert!(e.to_string().starts_with("my.toml:11:"), "{e}");
    }

    #[test]
    fn a_set_key_is_set_on_the_command_line() {
        let text = format!("{MINI}{WITH_PROVENANCE}");
        let d = parse_described("my.toml", &text, &[set("nand.channels", "4")]).unwrap();
        let channels = d.keys.iter().find(|k| k.key == "nand.channels").unwrap();
        assert_eq!(channels.value, "4");
        assert_eq!(channels.origin, KeyOrigin::CommandLine);
        assert_eq!(channels.origin.group(), "set on the command line");
        let added = parse_described("my.toml", &text, &[set("buffer.plp", "true")]).unwrap();
        let plp = added.keys.iter().find(|k| k.key == "buffer.plp").unwrap();
        assert_eq!(plp.origin, KeyOrigin::CommandLine);
    }

    #[test]
    fn bad_provenance_names_file_line_key_and_what_is_valid() {
        let bad = |entry: &str| {
            let text = format!("{MINI}[provenance]\n{entry}\n");
            parse_device_config("my.toml", &text, &[])
                .unwrap_err()
                .to_string()
        };
        let e = bad("\"nand.chanels\" = { kind = \"cited\", source = \"x\" }");
        assert!(
            e.starts_with("my.toml:10: provenance of `nand.chanels`"),
            "{e}"
        );
        assert!(e.contains("did you mean `nand.channels`"), "{e}");
        // A real key the file does not set has no value to attribute.
        let e = bad("\"nand.t_read\" = { kind = \"cited\", source = \"x\" }");
        assert!(e.contains("a key this file does not set"), "{e}");
        let e = bad("\"nand.channels\" = { kind = \"rumour\", source = \"x\" }");
        assert!(
            e.starts_with("my.toml:10: provenance of `nand.channels`"),
            "{e}"
        );
        assert!(e.contains("unknown kind \"rumour\""), "{e}");
        assert!(e.contains("estimate (reason)"), "{e}");
        let e = bad("\"nand.channels\" = { kind = \"measured\", job = \"j\" }");
        assert!(e.contains("needs `figure`"), "{e}");
        let text = format!("provenance = 3\n{MINI}");
        let e = parse_device_config("my.toml", &text, &[]).unwrap_err();
        assert!(e.to_string().contains("`provenance` is a table"), "{e}");
    }

    #[test]
    fn every_key_of_every_preset_says_where_it_came_from() {
        let mut missing = Vec::new();
        for p in PRESETS {
            let d = load_device_described(p.name, &[]).unwrap_or_else(|e| panic!("{e}"));
            assert!(!d.keys.is_empty(), "{}", p.name);
            for k in &d.keys {
                if k.origin == KeyOrigin::Unrecorded {
                    missing.push(format!("{}: {}", d.file, k.key));
                }
            }
            // And every entry names a key the preset sets (the loader refuses others).
            assert!(d
                .provenance
                .keys()
                .all(|k| d.keys.iter().any(|d| &d.key == k)));
        }
        assert!(
            missing.is_empty(),
            "keys without a [provenance] entry:\n{}",
            missing.join("\n")
        );
    }
}
