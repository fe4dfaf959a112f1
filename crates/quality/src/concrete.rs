//! Concrete checks of the files a worker modified, without a model or a subprocess:
//! each exists (unless the task deletes it) and is not empty, `.json` parses, brackets
//! balance in Python and JavaScript/TypeScript (`brackets`), and the symbols that were
//! there before, or that the task names (`named`), still exist after (`symbol_rules`,
//! reading them with tree-sitter in `symbols`, only where a change touched a file:
//! `region`).
//!
//! Owns where a workspace path really points (`locate`): a path or a symlink that
//! leads out of the workspace is reported, never read. Every read is bounded: files past
//! [`MAX_READ`] get the existence check only, and binary files skip the text checks.
//! Does not own compiling the files (that is `compile`) or running the project's tests.

mod brackets;
mod named;
mod region;
mod symbol_rules;
mod symbols;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use atto_relpath::{Globs, Parent, Policy, Start, Whitespace};

use crate::preflight::implies_deletion;
use crate::{Finding, QualityTask, Stage};

pub use brackets::{BracketCount, Dialect, Scan, count_brackets, scan};
pub use named::TaskSymbols;
pub use symbols::{Lang, Symbol, symbol_lang, symbols_of};

/// Largest file the checks read; a larger one is only checked to exist.
pub const MAX_READ: u64 = 2 * 1024 * 1024;

/// Most modified files checked in one call.
const MAX_FILES: usize = 1_000;

/// Most bytes read in one call; files past it are only checked to exist.
const MAX_TOTAL_READ: u64 = 64 * 1024 * 1024;

/// How far opens and closes of one bracket kind may differ before it is a finding
/// (template strings and odd lexing in a valid file stay within it).
const BRACKET_ALLOWANCE: usize = 3;

/// Bytes looked at for a NUL to call a file binary.
const BINARY_PROBE: usize = 8 * 1024;

/// Where a workspace-relative path points, without following it anywhere outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// A regular file in the workspace (maybe through a symlink that stays inside).
    File {
        /// Its real path.
        path: PathBuf,
        /// Its length in bytes.
        len: u64,
    },
    /// A directory.
    Dir,
    /// Nothing there.
    Missing,
    /// A symlink whose target does not exist.
    BrokenLink,
    /// The path, or a symlink on it, leads out of the workspace.
    Outside,
    /// A FIFO, socket or device: never opened (a read could block).
    Special,
    /// The file system refused (permissions …): what it said.
    Unreadable(String),
}

/// Where `rel` (workspace-relative, or absolute inside the workspace) points under
/// `root`, which must be canonical. Only metadata is read, never a file.
pub fn locate(root: &Path, rel: &str) -> Located {
    let Some(clean) = normalize(root, rel) else {
        return Located::Outside;
    };
    if clean.as_os_str().is_empty() {
        return Located::Dir;
    }
    let full = root.join(&clean);
    // A symlinked directory on the way may lead out even when the last part is plain.
    if let Some(parent) = full.parent() {
        match std::fs::canonicalize(parent) {
            Ok(real) if real.starts_with(root) => {}
            Ok(_) => return Located::Outside,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Located::Missing,
            Err(e) => return Located::Unreadable(e.to_string()),
        }
    }
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Located::Missing,
        Err(e) => return Located::Unreadable(e.to_string()),
    };
    if !meta.file_type().is_symlink() {
        return kind_of(full, &meta);
    }
    match std::fs::canonicalize(&full) {
        Ok(target) if target.starts_with(root) => match std::fs::metadata(&target) {
            Ok(meta) => kind_of(target, &meta),
            Err(e) => Located::Unreadable(e.to_string()),
        },
        Ok(_) => Located::Outside,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Located::BrokenLink,
        Err(e) => Located::Unreadable(e.to_string()),
    }
}

fn kind_of(path: PathBuf, meta: &std::fs::Metadata) -> Located {
    if meta.is_file() {
        Located::File {
            path,
            len: meta.len(),
        }
    } else if meta.is_dir() {
        Located::Dir
    } else {
        Located::Special
    }
}

/// How a path a worker reported is read: a report may name `src/../lib/a.py`, and a `..`
/// that stays under the workspace still names a file to check (where a comparison of
/// declared paths, `atto_planner::overlap::DECLARED`, must refuse it); only one that
/// leaves is refused. Names are taken as written, and the workspace itself is a directory.
const REPORTED: Policy = Policy {
    whitespace: Whitespace::Keep,
    globs: Globs::Keep,
    parent: Parent::StayInside,
    start: Start::Allow,
};

/// `rel` as a clean relative path under `root`, or `None` when it leaves it.
pub(crate) fn normalize(root: &Path, rel: &str) -> Option<PathBuf> {
    atto_relpath::normalize(rel, root, REPORTED).map(PathBuf::from)
}

/// Reads at most `max` bytes of `path`.
fn read_capped(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What is wrong with the modified files; `before` holds their text before the work.
pub fn check(
    task: &QualityTask,
    modified: &[String],
    workspace: &Path,
    before: &BTreeMap<String, String>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let root = match std::fs::canonicalize(workspace) {
        Ok(root) => root,
        Err(e) => {
            findings.push(finding(
                None,
                format!(
                    "the workspace {} could not be read ({e}), so the modified files were not \
                     checked",
                    workspace.display()
                ),
            ));
            return findings;
        }
    };
    let deleting = implies_deletion(&task.description);
    let mut seen = BTreeSet::new();
    let mut sources = Vec::new();
    let mut unparsed_code = false;
    let mut budget = MAX_TOTAL_READ;
    for rel in modified.iter().take(MAX_FILES) {
        if !seen.insert(rel.as_str()) {
            continue;
        }
        match locate(&root, rel) {
            Located::File { path, len } => {
                let lang = symbol_lang(rel);
                unparsed_code |= lang.is_none() && is_other_code(rel);
                if let Some((text, lines)) =
                    check_file(rel, &path, len, before, &mut budget, &mut findings)
                    && let Some(lang) = lang
                {
                    sources.push(symbol_rules::Source {
                        rel,
                        lang,
                        text,
                        lines,
                    });
                }
            }
            other => findings.extend(
                not_a_file(rel, other, deleting).map(|message| finding(Some(rel.clone()), message)),
            ),
        }
    }
    findings.extend(symbol_rules::check(
        task,
        &root,
        &sources,
        before,
        symbol_rules::Coverage { unparsed_code },
    ));
    findings
}

/// What is wrong with a modified path that is not a regular file in the workspace;
/// `None` when nothing is (a directory, or a file the task deletes).
fn not_a_file(rel: &str, located: Located, deleting: bool) -> Option<String> {
    match located {
        Located::Missing | Located::BrokenLink if deleting => None,
        Located::Missing | Located::BrokenLink => Some(format!(
            "{rel} is missing: it was modified but no longer exists, and the task does \
             not ask to delete it; restore it"
        )),
        Located::Outside => Some(format!(
            "{rel} leads outside the workspace (a symlink or a path out of it); it was \
             not read. Keep the work inside the workspace"
        )),
        Located::Special => Some(format!(
            "{rel} is not a regular file (a FIFO, socket or device); it was not read"
        )),
        Located::Unreadable(why) => Some(format!(
            "{rel} could not be read ({why}), so it was not checked"
        )),
        Located::Dir | Located::File { .. } => None,
    }
}

/// Checks one regular file; its text and top-level lines when it is a text file small
/// enough to parse.
fn check_file(
    rel: &str,
    path: &Path,
    len: u64,
    before: &BTreeMap<String, String>,
    budget: &mut u64,
    findings: &mut Vec<Finding>,
) -> Option<(String, Vec<usize>)> {
    let was_empty = before.get(rel).is_none_or(|b| b.trim().is_empty());
    let may_be_empty = was_empty && conventionally_empty(rel);
    let empty = || {
        finding(
            Some(rel.to_owned()),
            format!("{rel} is empty; write its content"),
        )
    };
    if len == 0 {
        if !may_be_empty {
            findings.push(empty());
        }
        return None;
    }
    if len > MAX_READ || len > *budget {
        return None;
    }
    *budget -= len;
    let bytes = match read_capped(path, MAX_READ) {
        Ok(bytes) => bytes,
        Err(e) => {
            findings.push(finding(
                Some(rel.to_owned()),
                format!("{rel} could not be read ({e}), so it was not checked"),
            ));
            return None;
        }
    };
    if extension(rel).as_deref() == Some("json") {
        if let Some(f) = check_json(rel, &bytes) {
            findings.push(f);
        }
        return None;
    }
    let probe = &bytes[..bytes.len().min(BINARY_PROBE)];
    if probe.contains(&0) {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    if text.trim().is_empty() {
        if !may_be_empty {
            findings.push(empty());
        }
        return None;
    }
    let mut lines = Vec::new();
    if let Some(dialect) = Dialect::of(rel) {
        let Scan {
            counts,
            top_level_lines,
        } = scan(&text, dialect);
        lines = top_level_lines;
        for c in counts
            .iter()
            .filter(|c| c.opens.abs_diff(c.closes) > BRACKET_ALLOWANCE)
        {
            findings.push(finding(
                Some(rel.to_owned()),
                format!(
                    "{rel} has unbalanced brackets: {} '{}' but {} '{}' (the file may be cut \
                     off or an edit left a block open)",
                    c.opens, c.open, c.closes, c.close
                ),
            ));
        }
    }
    Some((text, lines))
}

/// Files that are empty by convention (package markers and keep-files).
fn conventionally_empty(rel: &str) -> bool {
    let name = rel.rsplit(['/', '\\']).next().unwrap_or(rel);
    matches!(
        name,
        "__init__.py" | "py.typed" | ".gitkeep" | ".keep" | ".nojekyll" | ".gitignore"
    )
}

/// Source files in a language the symbol check does not parse: with one of them
/// changed, a symbol the task names may live there.
fn is_other_code(rel: &str) -> bool {
    matches!(
        extension(rel).as_deref(),
        Some(
            "go" | "java"
                | "kt"
                | "kts"
                | "scala"
                | "c"
                | "h"
                | "cc"
                | "cpp"
                | "hpp"
                | "cs"
                | "rb"
                | "php"
                | "swift"
                | "m"
                | "vue"
                | "svelte"
                | "html"
                | "lua"
                | "dart"
                | "ex"
                | "exs"
                | "zig"
                | "sh"
        )
    )
}

/// The lower-case extension of `rel`.
pub(crate) fn extension(rel: &str) -> Option<String> {
    let name = rel.rsplit(['/', '\\']).next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// The JSON files that allow comments and trailing commas (JSONC).
fn is_jsonc(rel: &str) -> bool {
    let name = rel.rsplit(['/', '\\']).next().unwrap_or(rel);
    (name.starts_with("tsconfig") || name.starts_with("jsconfig"))
        || rel.starts_with(".vscode/")
        || rel.contains("/.vscode/")
        || matches!(
            name,
            "devcontainer.json" | ".devcontainer.json" | ".eslintrc.json"
        )
}

fn check_json(rel: &str, bytes: &[u8]) -> Option<Finding> {
    let parsed = if is_jsonc(rel) {
        serde_json::from_slice::<serde::de::IgnoredAny>(&strip_jsonc(bytes))
    } else {
        serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
    };
    let err = parsed.err()?;
    Some(Finding {
        stage: Stage::Concrete,
        code: None,
        message: format!("{rel} is not valid JSON: {err}"),
        file: Some(rel.to_owned()),
        line: u32::try_from(err.line()).ok().filter(|l| *l > 0),
    })
}

/// JSONC as JSON: comments blanked (newlines kept, so lines still match) and trailing
/// commas before `}` or `]` dropped.
fn strip_jsonc(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
                out.extend_from_slice(&bytes[start..i]);
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                out.extend_from_slice(b"  ");
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    out.push(if bytes[i] == b'\n' { b'\n' } else { b' ' });
                    i += 1;
                }
                out.extend_from_slice(b"  ");
                i += 2;
            }
            b'}' | b']' => {
                if let Some(last) = out.iter().rposition(|b| !b.is_ascii_whitespace())
                    && out[last] == b','
                {
                    out[last] = b' ';
                }
                out.push(bytes[i]);
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// A concrete finding about `file`.
pub(crate) fn finding(file: Option<String>, message: String) -> Finding {
    Finding {
        stage: Stage::Concrete,
        code: None,
        message,
        file,
        line: None,
    }
}

#[cfg(test)]
mod tests;
