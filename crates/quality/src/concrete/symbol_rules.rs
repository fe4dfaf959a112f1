//! Whether the symbols that should survive the work did. Two rules:
//!
//! - A symbol a file had before the work must still be there, in that file or another
//!   modified one (moved), unless the task asks for it to go ("remove `foo`", "rename
//!   `foo` to `bar`"). A task that asks for removals without naming them ("remove dead
//!   code") only keeps the symbols it names.
//! - A symbol the task asks for ("add `validate_email()`", the new name of a rename)
//!   must be defined in a modified or target file, unless a modified file is in a
//!   language this crate does not parse (it may live there).
//!
//! Cost follows the change, not the files: only the part of a file a change touched
//! (`region`) is parsed, before and after, the after incrementally from the before. A
//! whole file is parsed only to settle a symbol that seems gone, and only when its name
//! still appears in that file's text.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::Path;

use super::brackets::{Dialect, scan};
use super::named::TaskSymbols;
use super::region;
use super::symbols::{
    Lang, SymbolMap, bare, contains_word, parse_full, parse_pair, symbol_lang, symbols_of,
};
use super::{Located, MAX_READ, finding, locate, read_capped};
use crate::{Finding, QualityTask};

/// Most symbol findings reported; the rest are counted, up to [`MAX_COUNTED`].
const MAX_FINDINGS: usize = 20;

/// Most symbol findings looked for: each costs a look through every modified file.
const MAX_COUNTED: usize = 100;

/// Most target files read for the symbols a task asks for.
const MAX_TARGETS: usize = 50;

/// A modified source file, as the concrete checks read it.
pub(super) struct Source<'a> {
    /// Workspace-relative path.
    pub rel: &'a str,
    /// Its language.
    pub lang: Lang,
    /// Its text after the work.
    pub text: String,
    /// Its top-level declaration lines (empty: it is not cut).
    pub lines: Vec<usize>,
}

/// Whether a language this crate does not parse is among the modified files.
#[derive(Debug, Clone, Copy)]
pub(super) struct Coverage {
    /// A modified source file is in a language without a parser here.
    pub unparsed_code: bool,
}

/// A file whose whole text is parsed only when needed.
struct File<'a> {
    rel: &'a str,
    lang: Lang,
    text: &'a str,
    parsed: OnceCell<Option<(SymbolMap, bool)>>,
}

impl<'a> File<'a> {
    fn new(rel: &'a str, lang: Lang, text: &'a str) -> File<'a> {
        File {
            rel,
            lang,
            text,
            parsed: OnceCell::new(),
        }
    }

    /// Whether the file may define `name`: a qualified name (`Class.method`) exactly, a
    /// bare one as anything of that name. A file whose tree has errors may define any
    /// name its text contains.
    fn may_define(&self, name: &str) -> bool {
        if !contains_word(self.text, bare(name)) {
            return false;
        }
        let parsed = self.parsed.get_or_init(|| parse_full(self.lang, self.text));
        let Some((symbols, has_error)) = parsed else {
            return true;
        };
        *has_error
            || symbols.contains_key(name)
            || (!name.contains('.') && symbols.keys().any(|k| bare(k) == name))
    }
}

/// The symbol findings for the modified source files.
pub(super) fn check(
    task: &QualityTask,
    root: &Path,
    sources: &[Source<'_>],
    before: &BTreeMap<String, String>,
    coverage: Coverage,
) -> Vec<Finding> {
    let named = TaskSymbols::from_task(task);
    let files: Vec<File<'_>> = sources
        .iter()
        .map(|s| File::new(s.rel, s.lang, &s.text))
        .collect();
    let mut messages = Vec::new();
    for source in sources {
        let Some(old) = before
            .get(source.rel)
            .filter(|b| b.len() as u64 <= MAX_READ)
        else {
            continue;
        };
        if messages.len() >= MAX_COUNTED {
            break;
        }
        gone(source, old, &named, &files, &mut messages);
    }
    let mut wanted = named.wanted.clone();
    for (from, to) in &named.renamed {
        let was_symbol = sources.iter().any(|s| {
            before.get(s.rel).is_some_and(|old| {
                old.len() as u64 <= MAX_READ
                    && contains_word(old, from)
                    && symbols_of(old, s.lang)
                        .is_some_and(|all| all.iter().any(|sym| bare(&sym.name) == from))
            })
        });
        if was_symbol {
            wanted.insert(to.clone());
        }
    }
    if !coverage.unparsed_code && !files.is_empty() && !wanted.is_empty() {
        let target_texts = target_texts(task, root, sources);
        let targets: Vec<File<'_>> = target_texts
            .iter()
            .map(|(rel, lang, text)| File::new(rel, *lang, text))
            .collect();
        for name in &wanted {
            if files.iter().chain(&targets).any(|f| f.may_define(name)) {
                continue;
            }
            let place = wanted_place(task, &files);
            messages.push((
                place.clone(),
                format!(
                    "`{name}`, which the task asks for, is not defined in {}; define it under \
                     that name",
                    place.as_deref().unwrap_or("any modified file")
                ),
            ));
        }
    }
    let extra = messages.len().saturating_sub(MAX_FINDINGS);
    let at_least = if messages.len() >= MAX_COUNTED {
        "at least "
    } else {
        ""
    };
    let mut findings: Vec<Finding> = messages
        .into_iter()
        .take(MAX_FINDINGS)
        .map(|(file, message)| finding(file, message))
        .collect();
    if extra > 0 {
        findings.push(finding(
            None,
            format!("… and {at_least}{extra} more symbol problems like these"),
        ));
    }
    findings
}

/// The symbols the change to `source` (from `old`) removed without the task asking.
fn gone(
    source: &Source<'_>,
    old: &str,
    named: &TaskSymbols,
    files: &[File<'_>],
    messages: &mut Vec<(Option<String>, String)>,
) {
    let old_lines = Dialect::of(source.rel).map_or_else(Vec::new, |d| scan(old, d).top_level_lines);
    let Some(r) = region::changed(old, &source.text, &old_lines, &source.lines) else {
        return;
    };
    let Some((was, is)) = parse_pair(source.lang, &old[r.before], &source.text[r.after]) else {
        return;
    };
    for (name, kind) in &was {
        if is.contains_key(name) {
            continue;
        }
        if messages.len() >= MAX_COUNTED {
            return;
        }
        let short = bare(name);
        if named.removed.contains(short) || named.removed.contains(name.as_str()) {
            continue;
        }
        if named.removal_unspecified
            && !named.mentioned.contains(short)
            && !named.mentioned.contains(name.as_str())
        {
            continue;
        }
        // A class that is gone is one finding, not one per method.
        if let Some((owner, _)) = name.rsplit_once('.')
            && was.contains_key(owner)
            && !is.contains_key(owner)
        {
            continue;
        }
        // Defined outside the changed part, or moved to another modified file.
        if files.iter().any(|f| f.may_define(name)) {
            continue;
        }
        messages.push((
            Some(source.rel.to_owned()),
            format!(
                "{}: {kind} `{name}` was there before the work and is gone; restore it (the \
                 task does not ask to remove it)",
                source.rel
            ),
        ));
    }
}

/// The text of each target file that was not modified (a symbol the task asks for may
/// already be there), in a language this crate parses.
fn target_texts(
    task: &QualityTask,
    root: &Path,
    sources: &[Source<'_>],
) -> Vec<(String, Lang, String)> {
    let mut out = Vec::new();
    for target in task.target_files.iter().take(MAX_TARGETS) {
        if sources.iter().any(|s| s.rel == target) {
            continue;
        }
        let Some(lang) = symbol_lang(target) else {
            continue;
        };
        let Located::File { path, len } = locate(root, target) else {
            continue;
        };
        if len > MAX_READ {
            continue;
        }
        let Ok(bytes) = read_capped(&path, MAX_READ) else {
            continue;
        };
        if let Ok(text) = String::from_utf8(bytes) {
            out.push((target.clone(), lang, text));
        }
    }
    out
}

/// The file a missing wanted symbol is reported against: a parsed target file, else the
/// only parsed modified file.
fn wanted_place(task: &QualityTask, files: &[File<'_>]) -> Option<String> {
    if let Some(target) = task.target_files.iter().find(|t| symbol_lang(t).is_some()) {
        return Some(target.clone());
    }
    match files {
        [only] => Some(only.rel.to_owned()),
        _ => None,
    }
}
