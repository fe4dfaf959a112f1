//! The layers a setting comes from — a flag, the chosen profile, the config file, the
//! default — and the profile override, both read off the schema table: a profile sets the
//! keys the table marks `profile`, and each value's origin is the first layer holding it.
//! It does not interpret values; [`crate::Config`] is their typed form.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::file::{Config, ConfigError, default_path};
use crate::schema::{KEYS, Key, is_placeholder};

/// The config as loaded: its typed form with the profile applied, and the layers it came
/// from.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The settings, the profile's over the file's.
    pub config: Config,
    /// The agent mode the profile sets (`mode` is a profile key, not a file key).
    pub mode: Option<String>,
    /// The file read, when there was one.
    file: Option<PathBuf>,
    /// The file's tables as written.
    table: Table,
    /// The chosen profile's name and table.
    profile: Option<(String, Table)>,
}

impl Loaded {
    /// Loads `explicit` (which must exist) or the default user config (which may not),
    /// then applies `profile` over it.
    pub fn read(explicit: Option<&Path>, profile: Option<&str>) -> Result<Loaded, ConfigError> {
        let (path, required) = match explicit {
            Some(p) => (p.to_path_buf(), true),
            None => match default_path() {
                Some(p) => (p, false),
                None => return Loaded::default().with_profile(profile, Path::new("")),
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if !required && err.kind() == std::io::ErrorKind::NotFound => {
                return Loaded::default().with_profile(profile, &path);
            }
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        Loaded::parse(&text, &path)?.with_profile(profile, &path)
    }

    /// Parses `text` as the config file at `path`, without a profile.
    pub fn parse(text: &str, path: &Path) -> Result<Loaded, ConfigError> {
        let config = Config::parse(text, path)?;
        let table = text.parse::<Table>().map_err(|err| ConfigError::Parse {
            path: path.to_path_buf(),
            message: crate::file::one_line(&err.to_string()),
        })?;
        Ok(Loaded {
            config,
            mode: None,
            file: Some(path.to_path_buf()),
            table,
            profile: None,
        })
    }

    /// Applies profile `name` (none: nothing) to the file at `path`: every key the schema
    /// lets a profile set that the profile sets replaces the file's.
    pub fn with_profile(mut self, name: Option<&str>, path: &Path) -> Result<Loaded, ConfigError> {
        let Some(name) = name else {
            return Ok(self);
        };
        let Some(profile) = self
            .table
            .get("profiles")
            .and_then(|p| p.get(name))
            .and_then(Value::as_table)
            .cloned()
        else {
            let known: Vec<&str> = self.config.profiles.keys().map(String::as_str).collect();
            return Err(ConfigError::Parse {
                path: self.file.clone().or_else(default_path).unwrap_or_default(),
                message: format!(
                    "there is no profile '{name}' ({})",
                    if known.is_empty() {
                        "no [profiles.NAME] tables are defined".to_owned()
                    } else {
                        format!("defined: {}", known.join(", "))
                    }
                ),
            });
        };
        let mut merged = self.table.clone();
        for key in KEYS.iter().filter(|k| k.set_in.profile) {
            let Some(value) = lookup(&profile, key.name) else {
                continue;
            };
            if key.set_in.user {
                insert(&mut merged, key.name, value.clone());
            } else if key.name == "mode" {
                self.mode = value.as_str().map(str::to_owned);
            }
        }
        self.config = Config::from_table(merged, path)?;
        self.profile = Some((name.to_owned(), profile));
        Ok(self)
    }

    /// Where `key`'s value comes from, and the value as written (several, `NAME=value`,
    /// for a key with a placeholder). `flag` is what a flag gave, if one did.
    pub fn origin(&self, key: &Key, flag: Option<&str>) -> (Option<String>, String) {
        if let Some(value) = flag {
            return (Some(value.to_owned()), "flag".to_owned());
        }
        if let Some((name, profile)) = &self.profile
            && key.set_in.profile
            && let Some(value) = lookup(profile, key.name)
        {
            return (Some(show(value)), format!("profile {name}"));
        }
        let found = matches(&self.table, key.name);
        if !key.set_in.user || found.is_empty() {
            return (None, "default".to_owned());
        }
        let value = if key.is_pattern() {
            found
                .iter()
                .map(|(names, value)| format!("{}={}", names.join("."), show(value)))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            found
                .first()
                .map(|(_, value)| show(value))
                .unwrap_or_default()
        };
        let origin = self.file.as_ref().map_or_else(
            || "config".to_owned(),
            |p| format!("config {}", p.display()),
        );
        (Some(value), origin)
    }
}

/// The value at a dotted path without placeholders.
fn lookup<'a>(table: &'a Table, path: &str) -> Option<&'a Value> {
    let mut segments = path.split('.');
    let mut value = table.get(segments.next()?)?;
    for segment in segments {
        value = value.as_table()?.get(segment)?;
    }
    Some(value)
}

/// Sets the value at a dotted path, making the tables on the way.
fn insert(table: &mut Table, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            table.insert(path.to_owned(), value);
        }
        Some((head, rest)) => {
            let entry = table
                .entry(head.to_owned())
                .or_insert_with(|| Value::Table(Table::new()));
            if let Value::Table(inner) = entry {
                insert(inner, rest, value);
            }
        }
    }
}

/// Every value at a dotted path whose placeholders match any name, with the names they
/// matched, in name order.
fn matches<'a>(table: &'a Table, path: &str) -> Vec<(Vec<&'a str>, &'a Value)> {
    let segments: Vec<&str> = path.split('.').collect();
    let mut found = Vec::new();
    walk(table, &segments, Vec::new(), &mut found);
    found
}

fn walk<'a>(
    table: &'a Table,
    segments: &[&str],
    names: Vec<&'a str>,
    found: &mut Vec<(Vec<&'a str>, &'a Value)>,
) {
    let Some((first, rest)) = segments.split_first() else {
        return;
    };
    let entries: Vec<(&'a str, &'a Value)> = if is_placeholder(first) {
        table.iter().map(|(k, v)| (k.as_str(), v)).collect()
    } else {
        table
            .get_key_value(*first)
            .map(|(k, v)| (k.as_str(), v))
            .into_iter()
            .collect()
    };
    for (name, value) in entries {
        let mut names = names.clone();
        if is_placeholder(first) {
            names.push(name);
        }
        if rest.is_empty() {
            found.push((names, value));
        } else if let Value::Table(inner) = value {
            walk(inner, rest, names, found);
        }
    }
}

/// A value on one line: strings as they are, the rest as TOML writes them inline.
fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Table(table) => {
            let entries: Vec<String> = table
                .iter()
                .map(|(k, v)| format!("{k} = {}", inline(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Integer(n) => n.to_string(),
        Value::Float(x) => x.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => d.to_string(),
    }
}

/// A value inside a list or table: strings quoted.
fn inline(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => show(other),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::rows;

    const FILE: &str = "model = \"file-model\"\npermission_mode = \"strict\"\n\
                        [limits]\nmax_rounds = 7\nmax_tokens = 100\n\
                        [mcp_servers.fs]\ncommand = \"npx\"\n\
                        [profiles.p]\nmodel = \"profile-model\"\nmode = \"review\"\n\
                        [profiles.p.limits]\nmax_rounds = 3\n";

    fn loaded(profile: Option<&str>) -> Loaded {
        let path = Path::new("c.toml");
        Loaded::parse(FILE, path)
            .and_then(|l| l.with_profile(profile, path))
            .unwrap()
    }

    #[test]
    fn a_profile_sets_its_keys_over_the_file() {
        let plain = loaded(None);
        assert_eq!(plain.config.model.as_deref(), Some("file-model"));
        assert_eq!(plain.mode, None);
        let p = loaded(Some("p"));
        assert_eq!(p.config.model.as_deref(), Some("profile-model"));
        assert_eq!(p.config.limits.max_rounds, Some(3));
        assert_eq!(p.config.limits.max_tokens, Some(100));
        assert_eq!(p.config.permission_mode.as_deref(), Some("strict"));
        assert_eq!(p.mode.as_deref(), Some("review"));
        let err = Loaded::parse(FILE, Path::new("c.toml"))
            .and_then(|l| l.with_profile(Some("nope"), Path::new("c.toml")))
            .unwrap_err();
        assert!(
            err.to_string().contains("no profile 'nope' (defined: p)"),
            "{err}"
        );
    }

    /// The fuzz target's property over every key of the table and values of every type:
    /// a config, or a one-line error naming the file.
    #[test]
    fn every_key_with_any_value_loads_or_fails_on_one_line() {
        let values = [
            "\"x\"",
            "\"chat\"",
            "0",
            "-1",
            "1.5",
            "nan",
            "true",
            "[]",
            "[\"a\"]",
            "{}",
            "{ model = \"m\" }",
            "1979-05-27",
        ];
        let path = Path::new("c.toml");
        let (mut loaded, mut refused) = (0, 0);
        for key in KEYS {
            let name: Vec<&str> = key
                .name
                .split('.')
                .map(|s| if is_placeholder(s) { "a" } else { s })
                .collect();
            let name = name.join(".");
            for value in values {
                for (text, profile) in [
                    (format!("{name} = {value}\n"), None),
                    (format!("profiles.p.{name} = {value}\n"), Some("p")),
                ] {
                    match Loaded::parse(&text, path).and_then(|l| l.with_profile(profile, path)) {
                        Ok(_) => loaded += 1,
                        Err(e) => {
                            refused += 1;
                            let shown = e.to_string();
                            assert!(
                                shown.starts_with("invalid config c.toml: "),
                                "{text}: {shown}"
                            );
                            assert!(!shown.contains('\n'), "{text}: {shown:?}");
                        }
                    }
                }
            }
        }
        assert!(
            loaded > 100 && refused > 100,
            "{loaded} loaded, {refused} refused"
        );
    }

    #[test]
    fn every_key_is_shown_with_its_origin() {
        let flags = BTreeMap::from([("provider", "flagged".to_owned())]);
        let shown = rows(&loaded(Some("p")), &flags);
        let names: Vec<&str> = shown.iter().map(|r| r.key).collect();
        let all: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
        assert_eq!(names, all);
        let row = |key: &str| shown.iter().find(|r| r.key == key).unwrap().to_string();
        assert!(row("provider").contains("flagged") && row("provider").contains("(flag)"));
        assert!(row("model").contains("profile-model") && row("model").contains("(profile p)"));
        assert!(row("mode").contains("review") && row("mode").contains("(profile p)"));
        assert!(row("limits.max_tokens").contains("100"));
        assert!(row("limits.max_tokens").contains("(config c.toml)"));
        assert!(row("mcp_servers.NAME.command").contains("fs=npx"));
        assert!(
            row("retry.max_attempts").contains("5")
                && row("retry.max_attempts").contains("(default)")
        );
    }
}
