//! The symbols a task names and what it asks of them, read from its description and
//! acceptance criteria without a model: "add `validate_email()`" wants it defined,
//! "remove `old_api`" lets it go, "rename `load` to `read_config`" both, and "remove dead
//! code" asks for removals without naming them. Words, not grammar: a verb governs the
//! names that follow it until a preposition, a new phrase or a few plain words.

use std::collections::BTreeSet;

use super::symbols::MAX_NAME;
use crate::QualityTask;
use crate::preflight::{head, listed};

/// Bytes of a description or criterion read.
const MAX_TEXT: usize = 64 * 1024;

/// The symbols a task names, read from its description and acceptance criteria.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskSymbols {
    /// Every symbol named.
    pub mentioned: BTreeSet<String>,
    /// Asked for as a function, class or type ("add `foo()`", "add a `Foo` class").
    pub wanted: BTreeSet<String>,
    /// Named as something to remove or rename away.
    pub removed: BTreeSet<String>,
    /// Renames the task asks for, old name then new: the new name is wanted when the old
    /// one was a symbol.
    pub renamed: Vec<(String, String)>,
    /// The task asks for removals without naming what ("remove dead code").
    pub removal_unspecified: bool,
}

/// Where a named symbol stands in a clause.
#[derive(Clone, PartialEq, Eq)]
enum Mode {
    /// Not the object of a verb that matters.
    Free,
    /// After a creation verb.
    Create,
    /// After a removal verb (`renaming` for rename/replace); `named` once a symbol came.
    Remove {
        renaming: bool,
        named: Option<String>,
    },
    /// After the "to" of a rename: the new name of `from`.
    RenameTo { from: Option<String> },
}

/// Words that say a name is a function, class or type.
const DEFINERS: &str = "class classes struct enum trait interface type def fn function functions \
    method methods helper helpers decorator component hook constructor";

impl TaskSymbols {
    /// Reads what `task` names. A symbol is a backticked identifier, a call
    /// (`name(`), a `snake_case` name, or a CamelCase name after `class`/`struct`/….
    /// Only names shown to be functions, classes or types (a call, or a word like
    /// "function" next to them) are wanted: "add `timeout` to the config" may mean a
    /// field.
    pub fn from_task(task: &QualityTask) -> TaskSymbols {
        let mut out = TaskSymbols::default();
        out.read(&task.description, false);
        for criterion in &task.acceptance {
            out.read(criterion, true);
        }
        out
    }

    fn read(&mut self, text: &str, acceptance: bool) {
        let text = head(text, MAX_TEXT);
        let mut reader = Reader {
            out: self,
            acceptance,
            mode: Mode::Free,
            gap: 0,
            joined: false,
            pending: None,
        };
        for token in tokens(text) {
            match token {
                Token::Break => reader.phrase_break(),
                Token::Symbol { name, callable } => reader.symbol(name, callable),
                Token::Word(word) => reader.word(&word.to_ascii_lowercase()),
            }
        }
        reader.out.end_removal(&reader.mode);
    }

    fn end_removal(&mut self, mode: &Mode) {
        if let Mode::Remove { named: None, .. } = mode {
            self.removal_unspecified = true;
        }
    }
}

const CREATE: &str = "add adds adding create creates implement implements write writes \
    define defines introduce introduces generate build";
const CONTAIN: &str = "contain contains export exports expose exposes has have";
const REMOVE: &str = "remove removes removing delete deletes deleting drop drops eliminate \
    inline";
const RENAME: &str = "rename renames renaming replace replaces replacing";
const BLOCK: &str = "to with into from in using for by of on via like inside within after \
    before call calls calling use uses that which so";
const LIGHT: &str = "a an the new and or also both called named";

/// One text being read, token by token: which verb governs the names that follow.
struct Reader<'s> {
    out: &'s mut TaskSymbols,
    /// An acceptance criterion: "contains `x`" asks for `x` there.
    acceptance: bool,
    mode: Mode,
    /// Plain words since the verb or the last name.
    gap: usize,
    /// The last word was "and", "or" or "then".
    joined: bool,
    /// A name asked for without evidence yet that it is a function or a type.
    pending: Option<String>,
}

impl Reader<'_> {
    /// The end of a sentence or clause: no verb governs what follows.
    fn phrase_break(&mut self) {
        self.out.end_removal(&self.mode);
        self.mode = Mode::Free;
        self.pending = None;
        self.joined = false;
    }

    /// A name, taken as the current verb asks.
    fn symbol(&mut self, name: String, callable: bool) {
        self.out.mentioned.insert(name.clone());
        self.pending = None;
        match &mut self.mode {
            Mode::Create if callable => {
                self.out.wanted.insert(name);
            }
            Mode::Create => self.pending = Some(name),
            Mode::Remove { named, .. } => {
                self.out.removed.insert(name.clone());
                *named = Some(name);
            }
            Mode::RenameTo { from } => {
                if let Some(from) = from.take() {
                    self.out.renamed.push((from, name.clone()));
                }
                if callable {
                    self.out.wanted.insert(name);
                }
            }
            Mode::Free => {}
        }
        self.gap = 0;
        self.joined = false;
    }

    /// A plain word (lowercase): a verb starts a phrase, a preposition or too many plain
    /// words end one.
    fn word(&mut self, word: &str) {
        if let Some(name) = self.pending.take()
            && listed(DEFINERS, word)
        {
            self.out.wanted.insert(name);
        }
        if listed(CREATE, word) || (self.acceptance && listed(CONTAIN, word)) {
            self.out.end_removal(&self.mode);
            self.mode = Mode::Create;
            self.gap = 0;
        } else if listed(REMOVE, word) || listed(RENAME, word) {
            self.out.end_removal(&self.mode);
            self.mode = Mode::Remove {
                renaming: listed(RENAME, word),
                named: None,
            };
            self.gap = 0;
        } else if let (
            Mode::Remove {
                renaming: true,
                named,
            },
            "to" | "with" | "by",
        ) = (&self.mode, word)
        {
            let from = named.clone();
            self.out.end_removal(&self.mode);
            self.mode = Mode::RenameTo { from };
            self.gap = 0;
        } else if listed(BLOCK, word) {
            self.out.end_removal(&self.mode);
            self.mode = Mode::Free;
        } else if !listed(LIGHT, word) && !listed(DEFINERS, word) {
            self.gap += 1;
            // "remove dead code and fix `x`": a plain word after "and" starts a new
            // phrase; only names continue a list ("remove `a` and `b`").
            if self.gap > 3 || self.joined {
                self.out.end_removal(&self.mode);
                self.mode = Mode::Free;
            }
        }
        self.joined = matches!(word, "and" | "or" | "then");
    }
}

enum Token<'a> {
    Word(&'a str),
    /// A name; `callable` when written as a call or right after a word like "function".
    Symbol {
        name: String,
        callable: bool,
    },
    Break,
}

/// File extensions that make a dotted name a path, not a qualified symbol.
const PATH_EXTENSIONS: &str = "py pyi js jsx mjs cjs ts tsx mts cts rs json md toml yaml yml txt \
    go java c h cpp rb php sh css html lock cfg ini sql xml csv";

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && s.len() <= MAX_NAME
}

/// The symbol a backticked span or a dotted word names: its last part, when the whole
/// is a qualified identifier and not a file path.
fn symbol_in(span: &str) -> Option<String> {
    let span = span.trim();
    let span = span.split('(').next().unwrap_or(span).trim_end_matches("!");
    if span.contains(['/', '\\', ' ']) {
        return None;
    }
    let parts: Vec<&str> = span.split("::").flat_map(|p| p.split('.')).collect();
    if parts.len() > 1 && parts.last().is_some_and(|l| listed(PATH_EXTENSIONS, l)) {
        return None;
    }
    let last = parts.last()?;
    parts
        .iter()
        .all(|p| is_identifier(p))
        .then(|| (*last).to_owned())
}

fn tokens(text: &str) -> Vec<Token<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut previous_word = "";
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'`' {
            let rest = &text[i + 1..];
            let end = rest
                .char_indices()
                .take(MAX_NAME)
                .find(|(_, c)| *c == '`' || *c == '\n')
                .map(|(p, _)| p);
            match end {
                Some(end) if rest.as_bytes()[end] == b'`' => {
                    let span = &rest[..end];
                    match symbol_in(span) {
                        Some(name) => out.push(Token::Symbol {
                            name,
                            callable: span.contains('(') || after_definer(previous_word),
                        }),
                        None => out.push(Token::Word("`")),
                    }
                    i += end + 2;
                }
                _ => i += 1,
            }
            continue;
        }
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || matches!(bytes[i], b'_' | b'$')
                    || (matches!(bytes[i], b'.' | b':')
                        && bytes.get(i + 1).is_some_and(|n| {
                            n.is_ascii_alphanumeric() || *n == b'_' || *n == b':'
                        })))
            {
                i += 1;
            }
            let word = &text[start..i];
            let call = bytes.get(i) == Some(&b'(');
            let snake = word.contains('_')
                && !word.contains(['.', ':'])
                && word.bytes().any(|c| c.is_ascii_alphabetic());
            let definer = after_definer(previous_word);
            let camel_after_definer = definer
                && word
                    .bytes()
                    .skip(1)
                    .any(|c| c.is_ascii_uppercase() || c == b'_');
            match (call || snake || camel_after_definer)
                .then(|| symbol_in(word))
                .flatten()
            {
                Some(name) => out.push(Token::Symbol {
                    name,
                    callable: call || definer,
                }),
                None => out.push(Token::Word(word)),
            }
            previous_word = word;
            continue;
        }
        if matches!(b, b'.' | b'!' | b'?' | b';' | b'\n') {
            out.push(Token::Break);
        }
        i += 1;
    }
    out
}

fn after_definer(previous_word: &str) -> bool {
    listed(DEFINERS, &previous_word.to_ascii_lowercase())
}
