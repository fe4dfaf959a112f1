//! JSON, parsed in process without building a tree. Configuration files whose tools read
//! JSON with comments (`tsconfig.json`, `.vscode/settings.json` …) are read that way too:
//! a comment there is not an error.

use std::path::Path;

use serde::de::IgnoredAny;

use super::{Target, error, warning};
use crate::CompileError;

/// Checks one JSON file: at most one finding, the first error with its line.
pub(super) fn check(target: &Target) -> Vec<CompileError> {
    let bytes = match std::fs::read(&target.path) {
        Ok(bytes) => bytes,
        Err(err) => {
            return vec![warning(
                &target.name,
                format!("not checked: it cannot be read ({err})"),
            )];
        }
    };
    check_bytes(&target.name, &bytes).into_iter().collect()
}

/// Checks `bytes` as the JSON file `name`.
pub(super) fn check_bytes(name: &str, bytes: &[u8]) -> Option<CompileError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Some(error(
            name,
            Some(1),
            "invalid JSON: the file starts with a UTF-8 byte order mark, which JSON \
             parsers reject; remove it"
                .to_owned(),
        ));
    }
    let plain = if allows_comments(name) {
        std::borrow::Cow::Owned(strip_comments(bytes))
    } else {
        std::borrow::Cow::Borrowed(bytes)
    };
    // Skimming builds no tree; only a broken file is parsed again, into a tree, for
    // serde_json's more precise messages ("trailing comma" rather than "key must be a
    // string"), unless that parse stops short at its nesting limit.
    let skimmed = serde_json::from_slice::<IgnoredAny>(&plain).err()?;
    let err = match serde_json::from_slice::<serde_json::Value>(&plain) {
        Err(precise) if !precise.to_string().contains("recursion limit") => precise,
        Err(_) | Ok(_) => skimmed,
    };
    let text = err.to_string();
    // serde_json ends every message with " at line L column C"; the line is kept apart.
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let what = text.strip_suffix(&suffix).unwrap_or(&text);
    let line = u32::try_from(err.line()).ok().filter(|l| *l > 0);
    Some(error(
        name,
        line,
        format!("invalid JSON: {what} (column {})", err.column()),
    ))
}

/// Files whose tools read JSON with comments and trailing commas.
fn allows_comments(name: &str) -> bool {
    let path = Path::new(name);
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    let in_dir = |dir: &str| path.components().any(|c| c.as_os_str() == dir);
    file.starts_with("tsconfig")
        || file.starts_with("jsconfig")
        || matches!(
            file,
            ".eslintrc.json" | "devcontainer.json" | ".devcontainer.json" | "turbo.json"
        )
        || in_dir(".vscode")
        || in_dir(".devcontainer")
}

/// JSON with comments made plain: comments and trailing commas become spaces, newlines
/// stay, so lines and columns still point into the file.
pub(super) fn strip_comments(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut i = 0;
    while let Some(at) = next_outside_strings(&out, i) {
        i = at + 1;
        let end = match (out[at], out.get(at + 1)) {
            (b'/', Some(b'/')) => out[at..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(out.len(), |n| at + n),
            (b'/', Some(b'*')) => out[at + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(out.len(), |n| at + 2 + n + 2),
            _ => continue,
        };
        for byte in &mut out[at..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        i = end;
    }
    // Comments gone, a comma followed only by space and a closing bracket is trailing.
    let mut i = 0;
    while let Some(at) = next_outside_strings(&out, i) {
        i = at + 1;
        if out[at] == b',' {
            let next = out[at + 1..].iter().find(|c| !c.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                out[at] = b' ';
            }
        }
    }
    out
}

/// The position of the next byte at or after `from` that is not inside a string (nor its
/// opening quote).
fn next_outside_strings(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            return Some(i);
        }
        i += 1;
        while i < bytes.len() && bytes[i] != b'"' {
            i += if bytes[i] == b'\\' { 2 } else { 1 };
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_their_line() {
        let table = [
            ("a.json", "{\"a\": 1}\n", None),
            ("a.json", "{\n  \"a\": 1,\n}\n", Some((3, "trailing comma"))),
            ("a.json", "{\n\n  \"a\" 1\n}", Some((3, "expected `:`"))),
            ("a.json", "[1, 2]\n[3]", Some((2, "trailing characters"))),
            ("a.json", "", Some((1, "EOF while parsing"))),
            ("a.json", "\u{feff}{}", Some((1, "byte order mark"))),
        ];
        for (name, text, expected) in table {
            let found = check_bytes(name, text.as_bytes());
            match (found, expected) {
                (None, None) => {}
                (Some(e), Some((line, words))) => {
                    assert_eq!(e.line, Some(line), "{text:?}: {e:?}");
                    assert!(e.message.contains(words), "{text:?}: {e:?}");
                    assert_eq!(e.severity, crate::Severity::Error);
                }
                (found, expected) => panic!("{text:?}: {found:?}, expected {expected:?}"),
            }
        }
    }

    #[test]
    fn config_files_may_hold_comments_and_trailing_commas() {
        let text = "{\n  // the compiler\n  \"compilerOptions\": {\n    \"strict\": true, /* yes */\n  },\n  \"url\": \"http://x//y\",\n}\n";
        assert_eq!(check_bytes("tsconfig.json", text.as_bytes()), None);
        assert_eq!(check_bytes(".vscode/settings.json", text.as_bytes()), None);
        let plain = check_bytes("package.json", text.as_bytes()).map(|e| e.line);
        assert_eq!(plain, Some(Some(2)));
        // Still JSON: a missing comma is an error, at its line.
        let broken = "{\n  // c\n  \"a\": 1\n  \"b\": 2\n}\n";
        let found = check_bytes("tsconfig.base.json", broken.as_bytes()).map(|e| e.line);
        assert_eq!(found, Some(Some(4)));
    }

    #[test]
    fn deep_nesting_is_no_error_and_hides_none() {
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert_eq!(check_bytes("deep.json", deep.as_bytes()), None);
        let broken = format!("{}\n{}", "[".repeat(1000), "]".repeat(999));
        let found = check_bytes("deep.json", broken.as_bytes());
        assert_eq!(found.map(|e| e.line), Some(Some(2)));
    }
}
