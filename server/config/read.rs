//! Settings read as people write them. clap takes every value as text (so
//! it neither stops at the first bad one nor names the flag when the
//! operator set a variable); [`Reader`] reads each one here, notes every
//! problem, and names the setting as it was written: `MAX_CONNECTIONS=abc`
//! from the environment, `--max-connections=abc` from the command line.
//!
//! - An empty value (`SAMPLE_TEAM=` in an environment file, which systemd
//!   passes on as an empty string) means unset: the default applies.
//! - Yes/no settings take `1/0`, `true/false`, `yes/no` and `on/off`, in any
//!   case, as systemd does.
//! - A secret (`hide_env_values` on its flag) is named, never echoed.

use std::collections::{BTreeSet, HashMap};
use std::str::FromStr;
use std::sync::OnceLock;

use clap::{Args, Command};

use super::flags::{Given, ServeArgs};

/// Every problem found in a configuration, in the order a fix needs (a
/// missing file before a setting derived from it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems(pub Vec<String>);

impl std::fmt::Display for Problems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0[..] {
            [one] => f.write_str(one),
            many => {
                write!(f, "{} problems in the configuration:", many.len())?;
                for p in many {
                    write!(f, "\n  - {p}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Problems {}

/// The settings' names as the operator wrote them, outside a [`Reader`].
#[derive(Debug, Clone)]
pub struct SettingNames(Given);

impl SettingNames {
    pub fn of(args: &ServeArgs) -> SettingNames {
        SettingNames(args.given.clone())
    }

    /// `ADDR`, or `--addr` when the command line gave it.
    pub fn name(&self, id: &str) -> String {
        Reader::new(&self.0).name(id)
    }
}

/// What clap says of one setting: its flag, variable, default, and whether
/// it is a secret.
struct Meta {
    long: String,
    env: Option<String>,
    default: Option<String>,
    secret: bool,
}

fn meta(id: &str) -> &'static Meta {
    static METAS: OnceLock<HashMap<String, Meta>> = OnceLock::new();
    let metas = METAS.get_or_init(|| {
        ServeArgs::augment_args(Command::new("serve"))
            .get_arguments()
            .map(|a| {
                let text = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
                let meta = Meta {
                    long: a.get_long().unwrap_or(a.get_id().as_str()).to_owned(),
                    env: a.get_env().map(text),
                    default: a.get_default_values().first().map(|d| text(d)),
                    secret: a.is_hide_env_values_set(),
                };
                (a.get_id().to_string(), meta)
            })
            .collect()
    });
    metas
        .get(id)
        .unwrap_or_else(|| panic!("no setting {id:?} among ServeArgs"))
}

/// Reads the settings of one [`ServeArgs`], noting every problem.
pub struct Reader<'a> {
    given: &'a Given,
    problems: Vec<String>,
    /// The settings with a problem of their own value.
    bad: BTreeSet<&'static str>,
}

/// The value of a field of [`ServeArgs`], by the field's name (clap's id).
macro_rules! setting {
    ($args:expr, $($field:ident).+) => {
        ($crate::config::read::last_ident(stringify!($($field).+)), &$args.$($field).+)
    };
}
pub(crate) use setting;

/// `notion.notion_token` → `notion_token`: clap's id of a flattened field.
pub fn last_ident(path: &'static str) -> &'static str {
    path.rsplit('.').next().unwrap_or(path).trim()
}

/// The values a count may take: from `min` to `max`, and what 0 means
/// where it is allowed with a meaning of its own (`zero`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub min: u64,
    pub max: u64,
    pub zero: Option<&'static str>,
}

impl Bounds {
    /// From `min` to `max`.
    pub const fn between(min: u64, max: u64) -> Bounds {
        Bounds {
            min,
            max,
            zero: None,
        }
    }

    /// From 0, which means `zero`, to `max`.
    pub const fn zero_means(zero: &'static str, max: u64) -> Bounds {
        Bounds {
            min: 0,
            max,
            zero: Some(zero),
        }
    }
}

/// A setting: its id and its value as clap read it.
pub type Setting<'v> = (&'static str, &'v Option<String>);

impl<'a> Reader<'a> {
    pub fn new(given: &'a Given) -> Reader<'a> {
        Reader {
            given,
            problems: Vec::new(),
            bad: BTreeSet::new(),
        }
    }

    /// The setting as the operator wrote it: the flag when it was given,
    /// else its variable.
    pub fn name(&self, id: &str) -> String {
        let m = meta(id);
        match (&m.env, self.given.has(id)) {
            (Some(env), false) => env.clone(),
            _ => format!("--{}", m.long),
        }
    }

    /// The setting and its value, fit for a message (`MAX_CONNECTIONS=abc`);
    /// a secret's name alone.
    pub fn shown(&self, id: &str, value: &str) -> String {
        let m = meta(id);
        if m.secret {
            return self.name(id);
        }
        format!("{}={value}", self.name(id))
    }

    /// Notes a problem (already naming its setting).
    pub fn problem(&mut self, message: impl Into<String>) {
        self.problems.push(message.into());
    }

    /// Notes a problem with the value of `id`: `NAME=value: why`.
    pub fn bad(&mut self, id: &'static str, value: &str, why: impl std::fmt::Display) {
        let message = format!("{}: {why}", self.shown(id, value));
        self.problems.push(message);
        self.bad.insert(id);
    }

    pub fn has_problems(&self) -> bool {
        !self.problems.is_empty()
    }

    /// Whether the value of `id` itself was found wrong (so nothing derived
    /// from it is checked).
    pub fn has_problems_with(&self, id: &str) -> bool {
        self.bad.contains(id)
    }

    pub fn finish(self) -> Problems {
        Problems(self.problems)
    }

    /// The value, or its default when it is unset or empty; None when
    /// neither. Trimmed, but for secrets (whose checks name a stray space or
    /// line break).
    pub fn text(&self, (id, value): Setting<'_>) -> Option<String> {
        let m = meta(id);
        let value = value.as_deref().filter(|v| !v.trim().is_empty());
        match value {
            Some(v) if m.secret => Some(v.to_owned()),
            Some(v) => Some(v.trim().to_owned()),
            None => m.default.clone().filter(|d| !d.is_empty()),
        }
    }

    /// A value parsed as `T`; on a problem (noted as `NAME=value: what`),
    /// `T::default()`, which is never used: the configuration is refused.
    pub fn parse<T: FromStr + Default>(&mut self, setting: Setting<'_>, what: &str) -> T {
        let Some(text) = self.text(setting) else {
            return T::default();
        };
        match text.parse() {
            Ok(v) => v,
            Err(_) => {
                self.bad(setting.0, &text, what);
                T::default()
            }
        }
    }

    /// A count or a length of time: a whole number from `min` to `max`
    /// (both stated in the message of a value outside them, a value too
    /// large for any number included); `T::default()` on a problem, which
    /// is never used: the configuration is refused. The same message for
    /// `check` and `serve`, which both read the settings here.
    pub fn count<T: TryFrom<u64> + Default>(
        &mut self,
        setting: Setting<'_>,
        Bounds { min, max, zero }: Bounds,
    ) -> T {
        let Some(text) = self.text(setting) else {
            return T::default();
        };
        let range = match (min, zero) {
            (0, Some(means)) => format!("a whole number from 0 ({means}) to {max}"),
            _ => format!("a whole number from {min} to {max}"),
        };
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            self.bad(setting.0, &text, format!("not a number ({range})"));
            return T::default();
        }
        // All digits: a value too long for u64 is simply too large.
        let value = text.parse::<u64>().unwrap_or(u64::MAX);
        if value < min || value > max {
            let why = match value < min {
                true => format!("too small: {range}"),
                false => format!("too large: {range}"),
            };
            self.bad(setting.0, &text, why);
            return T::default();
        }
        match T::try_from(value) {
            Ok(v) => v,
            Err(_) => {
                self.bad(setting.0, &text, format!("too large: {range}"));
                T::default()
            }
        }
    }

    /// A yes/no setting.
    pub fn yes_no(&mut self, setting: Setting<'_>) -> bool {
        let Some(text) = self.text(setting) else {
            return false;
        };
        match parse_bool(&text) {
            Some(v) => v,
            None => {
                self.bad(
                    setting.0,
                    &text,
                    "not a yes/no value (use on/off, 1/0, true/false or yes/no)",
                );
                false
            }
        }
    }

    /// One of the values of a clap value enum, in any case.
    pub fn choice<T: clap::ValueEnum + Default>(&mut self, setting: Setting<'_>) -> T {
        let Some(text) = self.text(setting) else {
            return T::default();
        };
        match T::from_str(&text, true) {
            Ok(v) => v,
            Err(_) => {
                let names: Vec<String> = T::value_variants()
                    .iter()
                    .filter_map(|v| v.to_possible_value())
                    .map(|p| p.get_name().to_owned())
                    .collect();
                self.bad(setting.0, &text, format!("not one of {}", names.join(", ")));
                T::default()
            }
        }
    }
}

/// `1/0`, `true/false`, `yes/no`, `on/off`, in any case (systemd's words).
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}
