//! The README's table of variables against the flags: one list, with
//! each flag's default.

use super::*;

/// The README's configuration table and the flags are the same list:
/// every variable a flag reads has a row, with the flag's default (in
/// backticks; `off` for a switch, `empty` for an empty list, a word of
/// its own where the help says how the default is worked out, `unset`
/// for none), and every row is a flag's variable (or `RUST_LOG`, read
/// by the log filter).
#[test]
fn the_readme_lists_every_variable_with_its_default() {
    let readme = include_str!("../../../README.md");
    let table = &readme[readme
        .find("## Configuration")
        .expect("a Configuration section")..];
    let rows: Vec<(String, String)> = table
        .lines()
        .skip_while(|l| !l.starts_with("| Variable"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .flat_map(|l| {
            // A row may name several variables (`TLS_CERT`, `TLS_KEY`).
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let is_variable = |v: &&str| {
                v.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            };
            let names: Vec<&str> = cells[1]
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(is_variable)
                .collect();
            names
                .into_iter()
                .map(|v| (v.to_owned(), cells[2].to_owned()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(rows.len() > 30, "the table is read: {rows:?}");
    let command = Dev::command();
    let mut flags = Vec::new();
    for arg in command.get_arguments() {
        let Some(variable) = arg.get_env().map(|v| v.to_string_lossy().into_owned()) else {
            continue;
        };
        // Hidden: a test hook (compiled in for tests only), not a setting.
        if arg.is_hide_set() {
            continue;
        }
        let Some((_, cell)) = rows.iter().find(|(v, _)| *v == variable) else {
            panic!("README's configuration table has no row for {variable}");
        };
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        let switch = matches!(arg.get_action(), clap::ArgAction::SetTrue);
        match defaults.first().map(String::as_str) {
            _ if switch => assert!(
                cell.starts_with("off"),
                "{variable}: {cell:?} should say off"
            ),
            Some("false" | "off") => assert!(
                cell.starts_with("off"),
                "{variable}: {cell:?} should say off"
            ),
            Some("") => assert_eq!(cell, "empty", "{variable}"),
            Some(default) => assert!(
                cell.contains(&format!("`{default}`")),
                "{variable}: the README says {cell:?}, the flag's default is {default:?}"
            ),
            None if help.contains("[default:") => {
                assert!(
                    cell != "unset" && cell.contains('`'),
                    "{variable}: {cell:?}"
                )
            }
            None => assert_eq!(cell, "unset", "{variable}: a flag with no default"),
        }
        flags.push(variable);
    }
    for (variable, _) in &rows {
        assert!(
            flags.contains(variable) || HELP_AFTER.contains(variable.as_str()),
            "README's configuration table lists {variable}, which `--help` does not"
        );
    }
}
