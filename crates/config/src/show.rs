//! `atto config show`: one row per schema key, with the value in effect, or its default,
//! and where it came from. It prints nothing; the binary lays the rows out.

use std::collections::BTreeMap;

use crate::layers::Loaded;
use crate::schema::KEYS;

/// One key as `atto config show` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The key's dotted name.
    pub key: &'static str,
    /// The value in effect, or the default.
    pub value: String,
    /// `flag`, `profile NAME`, `config PATH` or `default`.
    pub origin: String,
}

/// A row as `atto config show` prints it: the keys in one column as wide as the longest.
impl std::fmt::Display for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = KEYS.iter().map(|k| k.name.len()).max().unwrap_or(24);
        write!(
            f,
            "{:<width$} {:<28} ({})",
            self.key, self.value, self.origin
        )
    }
}

/// Every key of the schema, in its order; `flags` maps a key to the value a flag gave it.
pub fn rows(loaded: &Loaded, flags: &BTreeMap<&str, String>) -> Vec<Row> {
    KEYS.iter()
        .map(|key| {
            let (value, origin) = loaded.origin(key, flags.get(key.name).map(String::as_str));
            Row {
                key: key.name,
                value: value.unwrap_or_else(|| key.default.to_owned()),
                origin,
            }
        })
        .collect()
}
