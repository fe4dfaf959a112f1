//! Owns the one lexical reading of a relative path written in text (a task's target, a plan
//! step's declared file, a worker's report) and the policies its readers put on top of it.
//! Must never touch the file system: a lexical answer says nothing of symlinks, so whoever
//! acts on a path still resolves it beneath the workspace.
//!
//! The reading ([`lexical`]), the same for every reader:
//! - `/` is the only separator; `\` is a character of a name, as on Unix where atto runs.
//! - Empty parts (`a//b`, a trailing `/`) and `.` parts are dropped.
//! - `..` takes away the name before it (`src/../lib` is `lib`); with no name before it,
//!   it climbs above the start and is counted, never dropped.
//! - A leading `/` marks the path rooted; its names then count from `/`.
//! - Glob characters (`*`, `?`, `[`, `{`) stay in the names and mark the path a pattern.
//! - Whitespace is part of a name: trimming is a policy.
//!
//! What a reader accepts is a [`Policy`] over that reading ([`normalize`]): whether text is
//! trimmed, whether a pattern or any `..` is refused, whether the start itself may be named.
//! A path that begins with the reader's root is taken relative to it first; one still rooted
//! after that names something outside and every policy refuses it.

use std::path::Path;

/// The characters that make a path a glob pattern.
pub const GLOB_CHARS: [char; 4] = ['*', '?', '[', '{'];

/// A path read lexically (see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lexical<'a> {
    /// The names left once empty and `.` parts are dropped and each `..` took away the
    /// name before it.
    pub names: Vec<&'a str>,
    /// It began with `/`.
    pub rooted: bool,
    /// `..` parts with no name before them to take away: how far above its start it climbs.
    pub above: usize,
    /// `..` parts that took a name away (`src/../lib` has one).
    pub resolved: usize,
    /// It holds a glob character.
    pub pattern: bool,
}

/// Reads `path` lexically, as the crate docs say.
pub fn lexical(path: &str) -> Lexical<'_> {
    let mut read = Lexical {
        names: Vec::new(),
        rooted: path.starts_with('/'),
        above: 0,
        resolved: 0,
        pattern: path.contains(GLOB_CHARS),
    };
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match read.names.pop() {
                Some(_) => read.resolved += 1,
                None => read.above += 1,
            },
            name => read.names.push(name),
        }
    }
    read
}

/// Surrounding whitespace of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whitespace {
    /// Trimmed: the path is text a model or a person wrote.
    Trim,
    /// Part of the first and last names.
    Keep,
}

/// A path holding glob characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Globs {
    /// Refused: it names no one file and cannot be compared.
    Refuse,
    /// Kept as written.
    Keep,
}

/// A `..` part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// Refused wherever it stands, even when it stays inside (`a/../b`).
    Refuse,
    /// Resolved; refused only when it climbs above the start.
    StayInside,
}

/// A path that names the start itself (`.`, `a/..`, the root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Refused: the reader wants a file or a directory below the start.
    Refuse,
    /// Given as the empty string.
    Allow,
}

/// What a reader accepts, on top of the one lexical reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Whether the text is trimmed.
    pub whitespace: Whitespace,
    /// Whether a pattern is refused.
    pub globs: Globs,
    /// Whether any `..` is refused, or only one that climbs above the start.
    pub parent: Parent,
    /// Whether the start itself may be named.
    pub start: Start,
}

/// `path` as names joined by `/`, relative to `root` (a path that begins with `root` is
/// taken relative to it), or `None` when `policy` refuses it.
pub fn normalize(path: &str, root: &Path, policy: Policy) -> Option<String> {
    let path = match policy.whitespace {
        Whitespace::Trim => path.trim(),
        Whitespace::Keep => path,
    };
    let relative = Path::new(path)
        .strip_prefix(root)
        .ok()
        .and_then(Path::to_str)
        .unwrap_or(path);
    let read = lexical(relative);
    let refused = read.rooted
        || read.above > 0
        || (read.pattern && policy.globs == Globs::Refuse)
        || (read.resolved > 0 && policy.parent == Parent::Refuse)
        || (read.names.is_empty() && policy.start == Start::Refuse);
    (!refused).then(|| read.names.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: Policy = Policy {
        whitespace: Whitespace::Trim,
        globs: Globs::Refuse,
        parent: Parent::Refuse,
        start: Start::Refuse,
    };
    const LENIENT: Policy = Policy {
        whitespace: Whitespace::Keep,
        globs: Globs::Keep,
        parent: Parent::StayInside,
        start: Start::Allow,
    };

    /// A reading with `names` and nothing else marked.
    fn plain(names: &[&'static str]) -> Lexical<'static> {
        Lexical {
            names: names.to_vec(),
            rooted: false,
            above: 0,
            resolved: 0,
            pattern: false,
        }
    }

    #[test]
    fn the_reading_drops_dots_and_empty_parts_and_resolves_inner_parents() {
        let cases = [
            ("src/a.rs", plain(&["src", "a.rs"])),
            ("./src//a.rs/", plain(&["src", "a.rs"])),
            ("a\\b/c", plain(&["a\\b", "c"])),
            (" a /b ", plain(&[" a ", "b "])),
            (
                "src/./../lib/x",
                Lexical {
                    resolved: 1,
                    ..plain(&["lib", "x"])
                },
            ),
            (
                "../a",
                Lexical {
                    above: 1,
                    ..plain(&["a"])
                },
            ),
            (
                "a/../../b",
                Lexical {
                    above: 1,
                    resolved: 1,
                    ..plain(&["b"])
                },
            ),
            (
                "/etc/passwd",
                Lexical {
                    rooted: true,
                    ..plain(&["etc", "passwd"])
                },
            ),
            (
                "src/*.py",
                Lexical {
                    pattern: true,
                    ..plain(&["src", "*.py"])
                },
            ),
        ];
        for (path, expected) in cases {
            assert_eq!(lexical(path), expected, "{path}");
        }
    }

    #[test]
    fn each_policy_field_decides_one_case() {
        let none = Path::new("");
        let cases = [
            // Trimmed, or a name that begins with a space (" .") and ends with one.
            (" ./src/a.rs ", Some("src/a.rs"), Some(" ./src/a.rs ")),
            ("src/*.py", None, Some("src/*.py")),
            ("src/../lib/a.py", None, Some("lib/a.py")),
            ("../a.py", None, None),
            ("a/../../b.py", None, None),
            ("/etc/passwd", None, None),
            ("a/..", None, Some("")),
            ("", None, Some("")),
        ];
        for (path, strict, lenient) in cases {
            assert_eq!(
                normalize(path, none, STRICT).as_deref(),
                strict,
                "strict {path:?}"
            );
            assert_eq!(
                normalize(path, none, LENIENT).as_deref(),
                lenient,
                "lenient {path:?}"
            );
        }
    }

    #[test]
    fn a_path_under_the_root_is_taken_relative_to_it_and_one_elsewhere_is_refused() {
        let root = Path::new("/ws");
        assert_eq!(
            normalize("/ws/src//a.rs", root, STRICT).as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(normalize("/ws", root, LENIENT).as_deref(), Some(""));
        assert_eq!(normalize("/ws", root, STRICT), None);
        assert_eq!(normalize("/other/a.rs", root, LENIENT), None);
        // Taken off before `..` is read: climbing out of the root and back is refused.
        assert_eq!(normalize("/ws/../ws/a.rs", root, LENIENT), None);
        assert_eq!(
            normalize("src/a.rs", root, STRICT).as_deref(),
            Some("src/a.rs")
        );
    }
}
