//! The parsed bash command classifier: SAFE / WARN / BLOCK with reasons.
//!
//! A command is parsed with tree-sitter-bash and every segment that would run
//! (pipeline stages, list members, subshells, substitutions, `bash -c` strings,
//! the commands behind wrappers such as `sudo`, `xargs` or `find -exec`) is
//! judged on its own; the verdict is the worst segment. Anything this module
//! cannot prove read-only is at least WARN. It owns no permission logic: what a
//! risk *means* in a given mode is decided elsewhere in atto-policy.

mod block;
mod builtins;
mod changers;
mod command;
mod defs;
mod feeds;
mod find;
mod git;
mod interp;
mod launchers;
mod listings;
mod option_lists;
mod options;
mod patterns;
mod protected;
mod redirect;
mod rules;
mod scripts;
mod targets;
mod testcmd;
mod walk;
mod words;
mod wrappers;

use std::cell::RefCell;

use serde::{Deserialize, Serialize};
use tree_sitter::{Parser, Tree};

pub use targets::write_targets;
pub use testcmd::is_test_command;

/// Commands longer than this are not analysed (WARN): nobody types them, and
/// a bound keeps the classifier's cost predictable.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// How risky running a bash command is. Ordered: the verdict is the worst
/// segment.
/// The default is WARN: what has not been judged is not proven read-only.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum BashRisk {
    /// Provably read-only.
    Safe,
    /// May change files, state or the network, runs project code, or could
    /// not be proven read-only.
    #[default]
    Warn,
    /// Destroys the system or disk, or runs remote/obfuscated code blindly.
    Block,
}

impl BashRisk {
    /// The upper-case name used in JSON and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BashRisk::Safe => "SAFE",
            BashRisk::Warn => "WARN",
            BashRisk::Block => "BLOCK",
        }
    }
}

/// One executed command, after unwrapping wrappers such as `sudo` or `env`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// The source text of the segment (including its redirections).
    pub text: String,
    /// The normalised program name (`/bin/rm` → `rm`), when there is one.
    pub program: Option<String>,
    /// How risky this segment is on its own.
    pub risk: BashRisk,
    /// Human sentences explaining the risk ("rm deletes files").
    pub reasons: Vec<String>,
    /// The command that actually runs, wrappers (`sudo`, `env`, `nice` …)
    /// dropped: program name normalised (`/usr/bin/git` → `git`), words
    /// unquoted and joined by single spaces. Empty for notes that are not a
    /// program run. Deny and ask rules match it as well as `text`.
    #[serde(default)]
    pub command: String,
    /// The whole invocation, wrappers included, normalised the same way
    /// (`sudo git push --force`). Allow rules match it as well as `text`, so
    /// normalisation never widens a grant past a wrapper.
    #[serde(default)]
    pub invocation: String,
    /// Writes into a protected directory (`.git/`, `.atto/`) or configures
    /// git to run a program: the gate asks in every mode but yolo.
    #[serde(default)]
    pub protected_write: bool,
}

/// The classification of a whole command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The worst segment's risk.
    pub risk: BashRisk,
    /// The reasons of the worst segments, deduplicated.
    pub reasons: Vec<String>,
    /// Every judged segment, in source order.
    pub segments: Vec<Segment>,
    /// Some segment writes into a protected directory or configures git to
    /// run a program (see `Segment::protected_write`).
    #[serde(default)]
    pub protected_write: bool,
}

thread_local! {
    /// One parser per thread: creating a parser per call would dominate the
    /// cost of classifying a short command.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's bash parser, creating it on first use.
/// Returns `None` only if the grammar cannot be loaded.
pub(crate) fn with_parser<R>(f: impl FnOnce(&mut Parser) -> R) -> Option<R> {
    PARSER.with(|cell| {
        // A re-entrant call (never expected) gets a fresh parser rather than a
        // panic from a double borrow.
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return new_parser().map(|mut p| f(&mut p));
        };
        if slot.is_none() {
            *slot = new_parser();
        }
        slot.as_mut().map(f)
    })
}

/// A parse tree and the text its byte offsets index into.
pub(crate) struct Parsed {
    pub tree: Tree,
    pub text: String,
}

/// Parses `code` with the bash grammar.
///
/// The text gets a trailing newline when it has none: bash reads a command
/// as a line anyway, and tree-sitter-bash takes ~20x longer on a pipeline of
/// three or more stages that ends at end-of-input (90 µs instead of 5 µs).
///
/// tree-sitter-bash's C scanner passes the look-ahead code point to
/// `isdigit()`/`isalpha()`, which is undefined (and crashes) for values
/// above 255, e.g. `{` followed by an emoji. Bash gives every non-ASCII
/// character the same role as a letter, so we parse an ASCII shadow of the
/// text in which each non-ASCII character becomes as many `x` bytes as it has
/// UTF-8 bytes: the byte offsets match, and node text is taken from the
/// original.
pub(crate) fn parse(parser: &mut Parser, code: &str) -> Option<Parsed> {
    let mut text = String::with_capacity(code.len() + 1);
    text.push_str(code);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let tree = if text.is_ascii() {
        parser.parse(&text, None)?
    } else {
        let mut shadow = Vec::with_capacity(text.len());
        for c in text.chars() {
            if c.is_ascii() {
                shadow.push(c as u8);
            } else {
                shadow.extend(std::iter::repeat_n(b'x', c.len_utf8()));
            }
        }
        parser.parse(&shadow, None)?
    };
    Some(Parsed { tree, text })
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// Classifies a bash command line.
pub fn classify(command: &str) -> Verdict {
    if let Some(v) = precheck(command) {
        return v;
    }
    let segments = with_parser(|parser| walk::segments_of(parser, command)).unwrap_or_else(|| {
        vec![Segment {
            text: command.to_string(),
            program: None,
            risk: BashRisk::Warn,
            reasons: vec!["the bash parser could not be loaded".to_string()],
            ..Segment::default()
        }]
    });
    verdict_of(segments)
}

/// Bad or trivial input that is judged without parsing.
fn precheck(command: &str) -> Option<Verdict> {
    let one = |risk: BashRisk, reason: &str| {
        verdict_of(vec![Segment {
            text: preview(command),
            program: None,
            risk,
            reasons: vec![reason.to_string()],
            ..Segment::default()
        }])
    };
    if command.len() > MAX_COMMAND_BYTES {
        return Some(one(
            BashRisk::Warn,
            "the command is longer than 64 KB and was not analysed",
        ));
    }
    if let Some(nul) = command.find('\0') {
        // What a C program (bash, exec) is given ends at the first NUL: judge that part
        // too, so a NUL byte never hides a worse command before it.
        let before = classify(&command[..nul]);
        if before.risk > BashRisk::Warn {
            return Some(before);
        }
        return Some(one(
            BashRisk::Warn,
            "the command contains a NUL byte, which bash would not see the same way",
        ));
    }
    if command.trim().is_empty() {
        return Some(one(BashRisk::Safe, "empty command"));
    }
    None
}

/// A short, safe-to-print head of a huge or binary command.
fn preview(command: &str) -> String {
    command[..command.floor_char_boundary(200)].replace('\0', "\\0")
}

/// Folds segments into a verdict: the worst risk and its reasons.
pub(crate) fn verdict_of(segments: Vec<Segment>) -> Verdict {
    if segments.is_empty() {
        // Only comments or separators: nothing runs.
        return Verdict {
            risk: BashRisk::Safe,
            reasons: vec!["nothing to run".to_string()],
            segments,
            protected_write: false,
        };
    }
    let risk = segments
        .iter()
        .map(|s| s.risk)
        .max()
        .unwrap_or(BashRisk::Safe);
    let mut reasons: Vec<String> = Vec::new();
    for seg in segments.iter().filter(|s| s.risk == risk) {
        for r in &seg.reasons {
            if !reasons.contains(r) {
                reasons.push(r.clone());
            }
        }
    }
    let protected_write = segments.iter().any(|s| s.protected_write);
    Verdict {
        risk,
        reasons,
        segments,
        protected_write,
    }
}
