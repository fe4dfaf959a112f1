//! The change a file tool's arguments describe, read from their shape, for the front ends that
//! show it before or while the call runs: a whole `content` to write, or `old_string` /
//! `new_string` pairs (alone or as `edits`). Other arguments describe none.

use serde_json::Value;

/// What a call's arguments would do to its file.
#[derive(Debug, PartialEq, Eq)]
pub enum ArgsChange<'a> {
    /// The file's whole new content.
    Write(&'a str),
    /// Old text replaced by new, in order.
    Replace(Vec<(&'a str, &'a str)>),
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The change `args` describe, if they describe one.
pub fn of(args: &Value) -> Option<ArgsChange<'_>> {
    if let Some(content) = args.get("content").and_then(Value::as_str) {
        return Some(ArgsChange::Write(content));
    }
    match args.get("edits").and_then(Value::as_array) {
        Some(edits) => Some(ArgsChange::Replace(
            edits
                .iter()
                .map(|e| (text(e, "old_string"), text(e, "new_string")))
                .collect(),
        )),
        None if args.get("old_string").is_some() => Some(ArgsChange::Replace(vec![(
            text(args, "old_string"),
            text(args, "new_string"),
        )])),
        None => None,
    }
}
