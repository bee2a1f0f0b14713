//! `flashlab fio-options`: which fio options flashlab simulates, which it accepts without
//! effect (real I/O or presentation only), and which are errors, read from the one option
//! table the parser uses.

use flashlab_workload::{option_table, OptionClass, OptionDef};

#[derive(clap::Args, Debug)]
pub struct FioOptionsArgs {
    /// Show only the options whose name or alias contains this text.
    pub filter: Option<String>,
}

/// The listing, grouped by what flashlab does with each option.
pub fn render(args: &FioOptionsArgs) -> String {
    let wanted = |o: &OptionDef| match &args.filter {
        None => true,
        Some(f) => {
            let f = f.to_ascii_lowercase();
            o.name.contains(&f) || o.aliases.iter().any(|a| a.contains(&f))
        }
    };
    let mut text = String::new();
    for (class, title) in [
        (OptionClass::Simulated, "simulated"),
        (
            OptionClass::Accepted,
            "accepted without effect on the simulation (real I/O or presentation only)",
        ),
        (
            OptionClass::NotSimulated,
            "not simulated: a job file that uses one is refused",
        ),
    ] {
        let rows: Vec<(String, &OptionDef)> = option_table()
            .iter()
            .filter(|o| o.class == class && wanted(o))
            .map(|o| {
                let mut name = o.name.to_string();
                if !o.aliases.is_empty() {
                    name.push_str(&format!(" ({})", o.aliases.join(", ")));
                }
                (name, o)
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("{title} ({}):\n", rows.len()));
        let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, o) in rows {
            let default = if o.default.is_empty() {
                String::new()
            } else {
                format!(" [default {}]", o.default)
            };
            text.push_str(&format!("  {name:width$}  {}{default}\n", o.help));
        }
    }
    if text.is_empty() {
        if let Some(f) = &args.filter {
            text = format!("no fio option flashlab knows contains {f:?}\n");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_listed_and_a_filter_narrows_it() {
        let all = render(&FioOptionsArgs { filter: None });
        assert!(all.starts_with("simulated ("));
        assert!(all.contains("\naccepted without effect"));
        assert!(all.contains("\nnot simulated: "));
        let lines = all.lines().filter(|l| l.starts_with("  ")).count();
        assert_eq!(lines, option_table().len());
        let ss = render(&FioOptionsArgs {
            filter: Some("steadystate".into()),
        });
        assert!(ss.contains("steadystate (ss)"), "{ss}");
        assert!(!ss.contains("iodepth"));
        let none = render(&FioOptionsArgs {
            filter: Some("no-such".into()),
        });
        assert!(none.starts_with("no fio option"));
    }
}
