//! Small helpers every tool shares: argument parsing, reading a call's target for its
//! description, running blocking I/O off the async runtime, and truncating long text. Nothing tool-specific lives here.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _};

use crate::{ToolContext, ToolError};

/// Deserializes a tool's arguments, naming the offending field on error.
pub(crate) fn parse_args<T: DeserializeOwned>(args: serde_json::Value) -> Result<T, ToolError> {
    if !args.is_object() {
        return Err(ToolError::InvalidArguments(format!(
            "arguments must be a JSON object, got {}",
            json_kind(&args)
        )));
    }
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ToolError::InvalidArguments(inner.to_string())
        } else {
            ToolError::InvalidArguments(format!("field `{path}`: {inner}"))
        }
    })
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Accepts an optional non-negative integer given as a number or a numeric string
/// (models often quote numbers).
pub(crate) fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(u64),
        Float(f64),
        Text(String),
    }
    match Option::<Raw>::deserialize(d)? {
        None => Ok(None),
        Some(Raw::Int(n)) => Ok(Some(n)),
        Some(Raw::Float(f)) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => {
            // Checked above: non-negative, integral and in range.
            Ok(Some(f as u64))
        }
        Some(Raw::Text(s)) if s.trim().is_empty() => Ok(None),
        Some(Raw::Text(s)) => {
            s.trim().parse().map(Some).map_err(|_| {
                D::Error::custom(format!("expected a non-negative integer, got {s:?}"))
            })
        }
        Some(Raw::Float(f)) => Err(D::Error::custom(format!(
            "expected a non-negative integer, got {f}"
        ))),
    }
}

/// Accepts an optional boolean given as a bool or as "true"/"false".
pub(crate) fn lenient_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Bool(bool),
        Text(String),
    }
    match Option::<Raw>::deserialize(d)? {
        None => Ok(None),
        Some(Raw::Bool(b)) => Ok(Some(b)),
        Some(Raw::Text(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(Some(true)),
            "false" | "" => Ok(Some(false)),
            _ => Err(D::Error::custom(format!(
                "expected true or false, got {s:?}"
            ))),
        },
    }
}

/// Runs blocking file-system work on tokio's blocking pool, refusing to start when the
/// call is already cancelled and turning a panic into `ToolError::Internal`.
pub(crate) async fn blocking<T, F>(ctx: &ToolContext, f: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => Err(ToolError::Internal("the tool panicked".into())),
        Err(_) => Err(ToolError::Cancelled),
    }
}

/// A string argument of a call, empty when it is missing: what a call's title shows.
pub(crate) fn arg<'a>(args: &'a serde_json::Value, key: &str) -> &'a str {
    args.get(key)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
}

/// A string argument as it stands in a call's one-line title: control characters and line
/// separators (a newline in a path or pattern) are shown escaped, so a title is one line and
/// a second line cannot pass for another call in an approval.
pub(crate) fn title_arg(args: &serde_json::Value, key: &str) -> String {
    one_line(arg(args, key))
}

/// `text` with its control characters and line separators escaped (`\r` for a carriage
/// return, which would send a terminal back over what stands before it).
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A string argument of a call as its target (`Tool::target`); `None` when it is missing.
pub(crate) fn target(args: &serde_json::Value, key: &str) -> Option<String> {
    args.get(key)
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

/// Cuts `line` to at most `max` chars, with a marker saying how long it was.
pub(crate) fn truncate_line(line: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(line),
        Some((cut, _)) => std::borrow::Cow::Owned(format!(
            "{} [... line truncated, {} chars in all]",
            &line[..cut],
            line.chars().count()
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_title_is_one_line_whatever_the_arguments_hold() {
        let cases = [
            ("edit_file", json!({"path": "a.rs\nRun `rm -rf ~`"})),
            ("read_file", json!({"path": "a\rb"})),
            ("write_file", json!({"path": "x\u{2028}y\n"})),
            ("delete_file", json!({"path": "\nz"})),
            ("grep", json!({"pattern": "a\nb"})),
            ("glob", json!({"pattern": "*\n*"})),
            ("list_files", json!({"path": "d\n"})),
            ("bash", json!({"command": "ls\nrm -rf ~"})),
            ("bash", json!({"command": "ls\r\u{2028}rm -rf ~"})),
        ];
        for (tool, args) in &cases {
            let title = crate::title_of(tool, args);
            assert_eq!(title.lines().count(), 1, "{tool}: {title:?}");
            assert!(!title.contains(['\r', '\u{2028}']), "{tool}: {title:?}");
        }
        // What was on the next line is shown, not hidden (commands show their first line;
        // their approval shows the whole command).
        let edit = crate::title_of("edit_file", &cases[0].1);
        assert!(edit.contains("rm -rf"), "{edit}");
    }

    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct Args {
        #[allow(dead_code, reason = "only deserialization is tested")]
        path: String,
        #[serde(default, deserialize_with = "lenient_u64")]
        limit: Option<u64>,
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse_args::<Args>(json!({"path": 5}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`path`"), "{e}");
        let e = parse_args::<Args>(json!({})).unwrap_err().to_string();
        assert!(e.contains("missing field `path`"), "{e}");
        let e = parse_args::<Args>(json!(null)).unwrap_err().to_string();
        assert!(e.contains("JSON object"), "{e}");
        let e = parse_args::<Args>(json!({"path": "a", "limit": "x"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`limit`"), "{e}");
    }

    #[test]
    fn numbers_may_be_quoted_and_stray_fields_pass() {
        let a: Args = parse_args(json!({"path": "a", "limit": "12", "extra": 1})).unwrap();
        assert_eq!(a.limit, Some(12));
        let a: Args = parse_args(json!({"path": "a", "limit": 3.0})).unwrap();
        assert_eq!(a.limit, Some(3));
        let a: Args = parse_args(json!({"path": "a", "limit": null})).unwrap();
        assert_eq!(a.limit, None);
    }

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate_line("abc", 3), "abc");
        let t = truncate_line("ééééé", 2);
        assert!(t.starts_with("éé [... line truncated, 5 chars"), "{t}");
    }
}
