//! Walks a tree-sitter-bash tree and turns it into judged segments.
//!
//! Owns the *structure*: lists, pipelines, subshells, substitutions, simple
//! commands and recursive parsing of code strings (`bash -c`, `eval`), with
//! bounds on nesting. Redirections and here-docs are in `redirect`,
//! assignments and functions in `defs`. What one command means is decided in
//! `command` (wrappers, shells) and `rules` (per-program tables); this module
//! only links what it learns across segments, e.g. `curl … | sh`; what
//! earlier words tell later commands (variables, xargs input, here-strings)
//! is in `feeds`.

use std::ops::Range;

use tree_sitter::{Node, Parser};

use super::block;
use super::builtins;
use super::command::{self, Judge, XargsPlan};
use super::patterns;
use super::words::{self, Word};
use super::{BashRisk, Segment};

/// How many code strings deep (`bash -c "bash -c '…'"`) we follow.
const MAX_PARSE_DEPTH: usize = 6;
/// How deep the syntax tree may nest before we stop and call it WARN; keeps
/// the recursive walk far from the stack limit on hostile input.
pub(super) const MAX_NODE_NEST: usize = 120;
/// Segment text is for people; a huge here-doc need not be repeated whole.
const MAX_SEGMENT_TEXT: usize = 400;

/// A segment plus the facts other segments need (pipeline linking).
#[derive(Debug, Clone)]
pub(crate) struct Seg {
    pub seg: Segment,
    /// Downloads from the network (curl, wget …).
    pub fetch: bool,
    /// Decodes data (base64 -d, xxd -r …): obfuscation when piped to a shell.
    pub decode: bool,
    /// A shell or interpreter that reads its program from standard input.
    pub stdin_code: bool,
    /// The program is a shell (bash, sh …), so a here-doc it reads is code.
    pub shell: bool,
    /// Text this segment passes down a pipeline when it is known: the output
    /// of `echo`/`printf` with static words, or a here-doc it reads (a
    /// superset of what a filter such as `cat` or `grep` prints).
    pub feeds: Option<String>,
    /// How many command substitutions deep this segment runs.
    pub level: usize,
    /// An interpreter reading its program from standard input (`python3 -`).
    pub stdin_lang: Option<String>,
    /// `xargs CMD`: judged again with the words a pipeline feeds it.
    pub xargs: Option<XargsPlan>,
}

/// How many `;` or line ends from the end a command with a parse error is cut at to find
/// the longest prefix that parses cleanly.
const MAX_PREFIX_TRIES: usize = 32;

/// Walks trees and collects segments; one walker per `classify` call.
pub(crate) struct Walker<'p> {
    pub(super) parser: &'p mut Parser,
    pub(super) depth: usize,
    pub(super) nest: usize,
    pub(super) level: usize,
    pub segs: Vec<Seg>,
    /// Set after `cd` to a protected directory (`cd /`, `cd ~`): relative
    /// deletes such as `rm -rf *` then hit that directory.
    pub cwd_protected: Option<String>,
    /// Names of functions defined in this command: calling them runs a body
    /// that was already judged.
    pub functions: Vec<String>,
    /// How many redirections so far wrote into a protected directory; a
    /// segment whose redirections raise it is a protected write.
    pub protected_redirects: usize,
    /// The text of the last here-string (`<<< 'code'`) seen, for the
    /// command that reads it.
    pub herestring: Option<String>,
    /// Values of variables set earlier in this command line (`x=/; rm -rf
    /// $x`, `for d in / …`), the most dangerous one per name.
    pub vars: Vec<(String, String)>,
}

/// Parses and walks `command`, returning its segments in order.
pub(crate) fn segments_of(parser: &mut Parser, command: &str) -> Vec<Segment> {
    let mut w = Walker {
        parser,
        depth: 0,
        nest: 0,
        level: 0,
        segs: Vec::new(),
        cwd_protected: None,
        functions: Vec::new(),
        protected_redirects: 0,
        herestring: None,
        vars: Vec::new(),
    };
    w.walk_source(command);
    w.segs.into_iter().map(|s| s.seg).collect()
}

/// Where the first construct the parser could not complete starts: an error node, or the
/// node a missing token (a closing quote) was to end. `None` when the tree has no error.
fn first_error(root: Node<'_>) -> Option<usize> {
    // A loop, not recursion: a tree thousands of levels deep must not overflow the stack.
    let mut node = root;
    loop {
        if node.is_error() {
            return Some(node.start_byte());
        }
        if node.is_missing() {
            return Some(node.parent().map_or(node.start_byte(), |p| p.start_byte()));
        }
        let mut cursor = node.walk();
        let next = node.children(&mut cursor).find(|c| c.has_error());
        node = next?;
    }
}

pub(super) fn text<'a>(node: Node<'_>, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

fn clip(s: &str) -> String {
    let s = s.trim();
    if s.len() <= MAX_SEGMENT_TEXT {
        return s.to_string();
    }
    format!("{}…", &s[..s.floor_char_boundary(MAX_SEGMENT_TEXT)])
}

impl Walker<'_> {
    /// Parses a code string (the command itself, or a `bash -c` string) and
    /// judges everything in it.
    pub(crate) fn walk_source(&mut self, code: &str) {
        if self.depth >= MAX_PARSE_DEPTH {
            self.note(
                code,
                BashRisk::Warn,
                "code strings are nested too deeply to analyse",
            );
            if let Some(reason) = block::crude_block(code) {
                self.note(code, BashRisk::Block, &reason);
            }
            return;
        }
        let Some(parsed) = super::parse(self.parser, code) else {
            self.note(code, BashRisk::Warn, "the command could not be parsed");
            return;
        };
        let root = parsed.tree.root_node();
        let src = parsed.text.as_bytes();
        // `nest` is not reset here: nested code strings share one budget.
        self.depth += 1;
        self.walk(root, src);
        self.depth -= 1;
        if root.has_error() {
            self.note(
                code,
                BashRisk::Warn,
                "the command does not parse cleanly, so it cannot be proven read-only",
            );
            // The parser's recovery may hide a destructive command; look at
            // the raw words too.
            if let Some(reason) = block::crude_block(code) {
                self.note(code, BashRisk::Block, &reason);
            }
            // What comes after an error (an unclosed quote swallowing `; z`) can change
            // how the text before it parses: that text is judged on its own as well, so
            // appending to a command never makes it less strict.
            if let Some(before) = first_error(root)
                .and_then(|at| code.get(..at))
                .filter(|b| !b.trim().is_empty())
            {
                // Counted as a nested code string: a text of many errors is judged
                // within the same bounded depth.
                self.depth += 1;
                self.walk_source(before);
                self.depth -= 1;
            }
            // The parser's recovery from a later error can also reach back into text that
            // parsed on its own (an odd backquote re-pairs earlier ones), so the error's start
            // lies before it. The longest prefix that parses cleanly up to a `;` or a line end
            // is judged as well. Only for the command itself: a nested code string has its own
            // error rules, and this bounds the extra parses to `MAX_PREFIX_TRIES`.
            if self.depth == 0
                && let Some(clean) = self.clean_prefix(code)
            {
                self.depth += 1;
                self.walk_source(clean);
                self.depth -= 1;
            }
        }
    }

    /// The longest text before a `;` or a line end of `code` that parses without an error,
    /// trying the last `MAX_PREFIX_TRIES` such places.
    fn clean_prefix<'c>(&mut self, code: &'c str) -> Option<&'c str> {
        code.char_indices()
            .rev()
            .filter(|(_, c)| matches!(c, ';' | '\n'))
            .take(MAX_PREFIX_TRIES)
            .map(|(at, _)| &code[..at])
            .filter(|prefix| !prefix.trim().is_empty())
            .find(|prefix| {
                super::parse(self.parser, prefix)
                    .is_some_and(|parsed| !parsed.tree.root_node().has_error())
            })
    }

    /// Adds a segment that is not a program run (a note about the whole text).
    pub(crate) fn note(&mut self, text: &str, risk: BashRisk, reason: &str) {
        self.segs.push(Seg {
            seg: Segment {
                text: clip(text),
                program: None,
                risk,
                reasons: vec![reason.to_string()],
                ..Segment::default()
            },
            fetch: false,
            decode: false,
            stdin_code: false,
            shell: false,
            feeds: None,
            level: self.level,
            stdin_lang: None,
            xargs: None,
        });
    }

    /// Adds a judged program run.
    pub(crate) fn push_judged(&mut self, text: &str, j: Judge) -> usize {
        self.segs.push(Seg {
            seg: Segment {
                text: clip(text),
                program: j.program,
                risk: j.risk,
                reasons: j.reasons,
                command: j.argv.map(|a| a.join(" ")).unwrap_or_default(),
                invocation: j.invocation.unwrap_or_default(),
                protected_write: j.protected_write,
            },
            fetch: j.fetch,
            decode: j.decode,
            stdin_code: j.stdin_code,
            shell: j.shell,
            feeds: j.output,
            level: self.level,
            stdin_lang: j.stdin_lang,
            xargs: j.xargs,
        });
        self.segs.len() - 1
    }

    pub(super) fn walk(&mut self, node: Node<'_>, src: &[u8]) {
        if self.nest >= MAX_NODE_NEST {
            self.note(
                text(node, src),
                BashRisk::Warn,
                "the command is nested too deeply to analyse",
            );
            return;
        }
        self.nest += 1;
        match node.kind() {
            "command" => self.command(node, src),
            "redirected_statement" => self.redirected(node, src),
            "pipeline" => {
                let mut cursor = node.walk();
                let stages: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                let ranges = stages.iter().map(|s| self.walk_range(*s, src)).collect();
                self.link_pipeline(ranges);
            }
            "function_definition" => self.function(node, src),
            "for_statement" => {
                self.loop_variable(node, src);
                self.children(node, src);
            }
            "variable_assignment" => self.assignment(node, src, None),
            "declaration_command" | "unset_command" => self.declaration(node, src),
            "test_command" => {
                let (risk, reason) = match self.test_subscript(node, src, 0) {
                    Some(reason) => (BashRisk::Warn, reason),
                    None => (BashRisk::Safe, "[[ … ]] only tests a condition".to_string()),
                };
                self.note(text(node, src), risk, &reason);
                self.children(node, src);
            }
            "compound_statement" if text(node, src).starts_with("((") => {
                self.arithmetic(node, src);
                self.children(node, src);
            }
            "command_substitution" | "process_substitution" => {
                self.note(
                    text(node, src),
                    BashRisk::Warn,
                    "uses the output of a command substitution",
                );
                self.substitution(node, src);
            }
            "comment" | "heredoc_start" | "heredoc_end" => {}
            _ => self.children(node, src),
        }
        self.nest -= 1;
    }

    pub(super) fn children(&mut self, node: Node<'_>, src: &[u8]) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in kids {
            self.walk(child, src);
        }
    }

    pub(super) fn walk_range(&mut self, node: Node<'_>, src: &[u8]) -> Range<usize> {
        let start = self.segs.len();
        self.walk(node, src);
        start..self.segs.len()
    }

    /// Walks the statements inside `$(…)`, backticks or `<(…)`.
    pub(super) fn substitution(&mut self, node: Node<'_>, src: &[u8]) {
        self.level += 1;
        self.children(node, src);
        self.level -= 1;
    }

    /// Walks every substitution nested anywhere inside a word (also inside
    /// arithmetic and subscripts); true if there was one.
    pub(super) fn substitutions_in(&mut self, node: Node<'_>, src: &[u8]) -> bool {
        if self.nest >= MAX_NODE_NEST {
            self.note(
                text(node, src),
                BashRisk::Warn,
                "the command is nested too deeply to analyse",
            );
            return false;
        }
        if matches!(node.kind(), "command_substitution" | "process_substitution") {
            self.substitution(node, src);
            return true;
        }
        if node.kind() == "arithmetic_expansion" {
            self.arithmetic(node, src);
        }
        if node.named_child_count() == 0 {
            return false;
        }
        self.nest += 1;
        let mut found = false;
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in kids {
            found |= self.substitutions_in(child, src);
        }
        self.nest -= 1;
        found
    }

    /// `$((x))`, `(( x ))`: a variable read in arithmetic has its value
    /// evaluated as an expression, so it is judged as code that may run.
    fn arithmetic(&mut self, node: Node<'_>, src: &[u8]) {
        let t = text(node, src);
        match builtins::arithmetic_reads(t) {
            Some(name) => self.note(t, BashRisk::Warn, &builtins::arithmetic_reason(name)),
            None => self.note(t, BashRisk::Safe, "only does arithmetic on numbers"),
        }
    }

    /// `[[ -v 'a[$(id)]' ]]`: the subscript of a `-v` operand is evaluated
    /// as arithmetic.
    fn test_subscript(&self, node: Node<'_>, src: &[u8], nest: usize) -> Option<String> {
        if nest >= MAX_NODE_NEST {
            return Some("the test is nested too deeply to analyse".to_string());
        }
        if node.kind() == "unary_expression"
            && node
                .child_by_field_name("operator")
                .is_some_and(|o| text(o, src) == "-v")
        {
            let count = node.named_child_count();
            let operand = node.named_child(count.saturating_sub(1))?;
            return builtins::subscript_risk(&words::eval(operand, src).text);
        }
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        kids.into_iter()
            .find_map(|k| self.test_subscript(k, src, nest + 1))
    }

    /// `curl … | sh`, `base64 -d | bash`, `cat <<EOF | bash`,
    /// `echo 'rm -rf /' | sh`.
    pub(super) fn link_pipeline(&mut self, ranges: Vec<Range<usize>>) {
        for (i, range) in ranges.iter().enumerate().skip(1) {
            for idx in range.clone() {
                if let Some(plan) = self.segs[idx].xargs.clone() {
                    let fed: Vec<String> = ranges[..i]
                        .iter()
                        .flat_map(|r| r.clone())
                        .filter_map(|u| self.segs[u].feeds.clone())
                        .collect();
                    self.rejudge_xargs(idx, &plan, &fed);
                }
                if !self.segs[idx].stdin_code {
                    continue;
                }
                let upstream: Vec<usize> = ranges[..i].iter().flat_map(|r| r.clone()).collect();
                let fetch = upstream.iter().any(|&u| self.segs[u].fetch);
                let decode = upstream.iter().any(|&u| self.segs[u].decode);
                let seg = &mut self.segs[idx].seg;
                if fetch {
                    raise(seg, BashRisk::Block, "runs code fetched from the network");
                }
                if decode {
                    raise(seg, BashRisk::Block, "runs decoded (obfuscated) code");
                }
                if self.segs[idx].shell {
                    let bodies: Vec<String> = upstream
                        .iter()
                        .filter_map(|&u| self.segs[u].feeds.clone())
                        .collect();
                    for body in bodies {
                        self.walk_source(&body);
                    }
                }
            }
        }
    }

    fn command(&mut self, node: Node<'_>, src: &[u8]) {
        let start = self.segs.len();
        let hits = self.protected_redirects;
        let mut floor: Vec<(BashRisk, String)> = Vec::new();
        let words = self.command_words(node, src, &mut floor);
        let subst = start..self.segs.len();
        let cmd_text = text(node, src);
        if words.is_empty() {
            let mut j = Judge::safe(None, "only sets shell variables for this line");
            for (risk, reason) in floor {
                j.raise(risk, &reason);
            }
            j.protected_write |= self.protected_redirects > hits;
            self.push_judged(cmd_text, j);
            return;
        }
        let words = expand_braces(words::split_ifs(self.known_vars(words)));
        let mut j = command::judge(self, &words);
        j.invocation = Some(invocation(&words, j.argv.as_deref()));
        if words.iter().any(|w| w.has_subst) {
            j.raise(
                BashRisk::Warn,
                "uses the output of a command substitution as an argument",
            );
        }
        if j.code_runner {
            if self.segs[subst.clone()].iter().any(|s| s.fetch) {
                j.raise(BashRisk::Block, "runs code fetched from the network");
            }
            if self.segs[subst].iter().any(|s| s.decode) {
                j.raise(BashRisk::Block, "runs decoded (obfuscated) code");
            }
        }
        for (risk, reason) in floor {
            j.raise(risk, &reason);
        }
        j.protected_write |= self.protected_redirects > hits;
        let idx = self.push_judged(cmd_text, j);
        if let Some(h) = self.herestring.take() {
            self.run_input(&[idx], &h);
        }
    }

    /// Walks a simple command's parts: returns its words as written, and
    /// adds to `floor` what its assignments and redirections risk.
    fn command_words(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        floor: &mut Vec<(BashRisk, String)>,
    ) -> Vec<Word> {
        let mut words: Vec<Word> = Vec::new();
        let mut cursor = node.walk();
        let kids: Vec<(Option<&str>, Node<'_>)> = node
            .children(&mut cursor)
            .enumerate()
            .map(|(i, c)| (node.field_name_for_child(i as u32), c))
            .collect();
        let mut last_end: Option<usize> = None;
        for (field, child) in kids {
            match (field, child.kind()) {
                (_, "variable_assignment") => {
                    self.assignment(child, src, Some(&mut *floor));
                }
                (Some("redirect"), _) | (_, "file_redirect" | "herestring_redirect") => {
                    if let Some(f) = self.redirect(child, src) {
                        floor.push(f);
                    }
                }
                (Some("name" | "argument"), _) => {
                    let mut w = words::eval(child, src);
                    w.has_subst |= self.substitutions_in(child, src);
                    if text(child, src).contains("@P}") {
                        floor.push((
                            BashRisk::Warn,
                            "prompt expansion (${x@P}) runs command substitutions stored in a variable"
                                .into(),
                        ));
                    }
                    // The grammar sometimes splits one shell word in two
                    // (`rm$IFS-rf$IFS/`); with no space between, bash sees one.
                    match words.last_mut() {
                        Some(prev) if last_end == Some(child.start_byte()) => words::join(prev, w),
                        _ => words.push(w),
                    }
                    last_end = Some(child.end_byte());
                }
                (_, "subshell") => self.walk(child, src),
                _ => {}
            }
        }
        words
    }
}

/// Bash brace-expands every unquoted word before the program sees it:
/// `{rm,-rf,/}` becomes three words, `sort {-,}-output=x` gets an option.
fn expand_braces(words: Vec<Word>) -> Vec<Word> {
    let words = expand_name_braces(words);
    let mut out = Vec::with_capacity(words.len());
    for (k, w) in words.into_iter().enumerate() {
        if k == 0 || !w.brace || w.dynamic || !w.text.contains(',') {
            out.push(w);
            continue;
        }
        for alt in patterns::expand_braces(&w.text, 64) {
            out.push(Word {
                text: alt,
                brace: false,
                ..w.clone()
            });
        }
    }
    out
}

/// `{rm,-rf,/}` as a program name is brace-expanded by bash into words.
fn expand_name_braces(mut words: Vec<Word>) -> Vec<Word> {
    let Some(first) = words.first() else {
        return words;
    };
    if first.dynamic || !first.text.contains('{') || !first.text.contains(',') {
        return words;
    }
    let expanded: Vec<Word> = patterns::expand_braces(&first.text, 64)
        .iter()
        .map(|s| Word::literal(s))
        .collect();
    words.splice(0..1, expanded);
    words
}

/// `"/usr/bin/git"  push` → `git push`: the program normalised, words
/// unquoted and single-spaced. Empty when a word is decided at run time: an
/// allow rule must not match a guess.
/// The program behind wrappers (`sudo /usr/bin/git push`) is normalised too
/// when `argv`, the command that runs, ends the line.
fn invocation(words: &[Word], argv: Option<&[String]>) -> String {
    let mut out = String::new();
    if words.iter().any(|w| w.dynamic) {
        return out;
    }
    let inner = argv.and_then(|a| {
        let start = words.len().checked_sub(a.len())?;
        let tail_matches = words[start + 1..]
            .iter()
            .zip(&a[1..])
            .all(|(w, t)| &w.text == t);
        tail_matches.then_some(start)
    });
    for (k, w) in words.iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        if k == 0 || Some(k) == inner {
            out.push_str(&command::normalize_program(&w.text).0);
        } else {
            out.push_str(&w.text);
        }
    }
    out
}

/// Raises a segment's risk and records why.
/// A reason that raises the risk goes first, so the worst reason leads.
pub(crate) fn raise(seg: &mut Segment, risk: BashRisk, reason: &str) {
    command::raise_into(&mut seg.risk, &mut seg.reasons, risk, reason);
}
