//! Turns tree-sitter word nodes into the strings bash would pass to a program.
//!
//! Owns quote removal, backslash and `$'…'` decoding, and the *guess* a static
//! reader can make for an expansion (`${IFS}` is a space, `$HOME` is `~`,
//! `$(echo rm)` is `rm`). It does not decide anything: a word that holds an
//! expansion stays marked `dynamic` so the judges can refuse to call it SAFE.

use tree_sitter::Node;

/// Stands in for a word split produced by `$IFS`; split on it after evaluation.
pub(crate) const IFS_MARK: char = '\u{1f}';

/// How deep word evaluation may recurse (strings inside expansions inside
/// strings …) before it gives up and calls the word unknown.
const MAX_WORD_NEST: usize = 64;

/// One shell word as the program would receive it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Word {
    /// The static value, or the best guess when `dynamic`.
    pub text: String,
    /// Contains a parameter expansion, command substitution or arithmetic.
    pub dynamic: bool,
    /// Every dynamic part had a guess, so `text` is what bash would most
    /// plausibly produce.
    pub guessable: bool,
    /// Contains `$(…)`, backticks or `<(…)`/`>(…)`.
    pub has_subst: bool,
    /// Contains an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
    /// Contains an unquoted `{` or `}`, so bash may brace-expand it into
    /// several words (`{-,}-output=x`).
    pub brace: bool,
}

impl Word {
    /// A literal word (used for words we synthesise, e.g. after IFS splitting).
    pub(crate) fn literal(text: &str) -> Self {
        Word {
            text: text.to_string(),
            guessable: true,
            ..Word::default()
        }
    }

    /// True when the word's value is known without running anything.
    pub(crate) fn is_static(&self) -> bool {
        !self.dynamic
    }
}

/// Evaluates one argument-like node.
pub(crate) fn eval(node: Node<'_>, src: &[u8]) -> Word {
    eval_nested(node, src, 0)
}

fn eval_nested(node: Node<'_>, src: &[u8], nest: usize) -> Word {
    let mut w = Word {
        guessable: true,
        ..Word::default()
    };
    eval_into(node, src, &mut w, false, nest);
    w
}

fn text_of<'a>(node: Node<'_>, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

fn eval_into(node: Node<'_>, src: &[u8], w: &mut Word, quoted: bool, nest: usize) {
    if nest > MAX_WORD_NEST {
        w.dynamic = true;
        w.guessable = false;
        return;
    }
    match node.kind() {
        "simple_expansion"
        | "expansion"
        | "command_substitution"
        | "process_substitution"
        | "arithmetic_expansion" => expansion_into(node, src, w, quoted, nest),
        "translated_string" | "string" | "concatenation" | "command_name" => {
            parts_into(node, src, w, quoted, nest)
        }
        _ => literal_into(node, text_of(node, src), w, quoted),
    }
}

/// A word's literal pieces: quote removal and escapes; what is not known to
/// be literal keeps its raw text and marks the word unknown.
fn literal_into(node: Node<'_>, raw: &str, w: &mut Word, quoted: bool) {
    match node.kind() {
        "word" if node.child_count() == 0 => {
            if !quoted && raw.contains(['*', '?', '[']) {
                w.glob |= has_unescaped_glob(raw);
            }
            w.brace |= !quoted && raw.contains(['{', '}']);
            w.text.push_str(&unescape_unquoted(raw));
        }
        "raw_string" => {
            w.text.push_str(
                raw.strip_prefix('\'')
                    .unwrap_or(raw)
                    .strip_suffix('\'')
                    .unwrap_or(raw),
            );
        }
        "string_content" => w.text.push_str(&unescape_double_quoted(raw)),
        "ansi_c_string" => {
            let inner = raw.strip_prefix("$'").unwrap_or(raw);
            let inner = inner.strip_suffix('\'').unwrap_or(inner);
            w.text.push_str(&decode_c_escapes(inner));
        }
        "number" if node.child_count() == 0 => w.text.push_str(raw),
        "brace_expression" | "word" | "extglob_pattern" | "regex" | "test_operator" => {
            w.brace |= !quoted && raw.contains(['{', '}']);
            w.text.push_str(raw)
        }
        _ => {
            // Arrays, subscripts and anything exotic: keep the raw text but do
            // not pretend to know its value.
            w.dynamic = true;
            w.guessable = false;
            w.text.push_str(raw);
        }
    }
}

/// Expansions and substitutions: the word becomes dynamic, with the guess
/// when there is one.
fn expansion_into(node: Node<'_>, src: &[u8], w: &mut Word, quoted: bool, nest: usize) {
    let raw = text_of(node, src);
    match node.kind() {
        "command_substitution" => {
            w.dynamic = true;
            w.has_subst = true;
            match guess_substitution(node, src, nest) {
                // Unquoted, the output is split into words.
                Some(g) if !quoted => w.text.push_str(&g.replace([' ', '\t', '\n'], "\u{1f}")),
                Some(g) => w.text.push_str(&g),
                None => {
                    w.guessable = false;
                    w.text.push_str(raw);
                }
            }
        }
        "process_substitution" => {
            // The program receives a path such as /dev/fd/63.
            w.dynamic = true;
            w.has_subst = true;
            w.text.push_str("/dev/fd/63");
        }
        "arithmetic_expansion" => {
            w.dynamic = true;
            w.guessable = false;
            w.text.push_str(raw);
        }
        // `simple_expansion` and `expansion`.
        _ => {
            w.dynamic = true;
            match guess_expansion(node, src) {
                Some(g) => w.text.push_str(g),
                None => {
                    w.guessable = false;
                    w.text.push_str(raw);
                }
            }
        }
    }
}

/// Nodes made of parts: strings (`"…"`, `$"…"`) and concatenations.
fn parts_into(node: Node<'_>, src: &[u8], w: &mut Word, quoted: bool, nest: usize) {
    match node.kind() {
        "translated_string" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                eval_into(child, src, w, true, nest + 1);
            }
        }
        "string" => {
            // Text between children (e.g. a newline) is part of the string
            // even when the grammar gives it no node.
            let mut prev = node.start_byte();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if child.start_byte() > prev {
                    let gap = std::str::from_utf8(&src[prev..child.start_byte()]).unwrap_or("");
                    w.text.push_str(&unescape_double_quoted(gap));
                }
                if child.is_named() {
                    eval_into(child, src, w, true, nest + 1);
                } else if child.kind() != "\"" {
                    w.text.push_str(text_of(child, src));
                }
                prev = child.end_byte();
            }
        }
        // `concatenation` and `command_name`.
        _ => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if child.is_named() {
                    eval_into(child, src, w, quoted, nest + 1);
                } else {
                    w.text.push_str(text_of(child, src));
                }
            }
        }
    }
}

fn has_unescaped_glob(raw: &str) -> bool {
    let mut escaped = false;
    for c in raw.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, '*' | '?' | '[') {
            return true;
        }
    }
    false
}

/// `r\m` → `rm`; a backslash-newline disappears.
pub(crate) fn unescape_unquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes only `\\ \" \$ \`` and backslash-newline are escapes.
fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\\' | '"' | '$' | '`') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes the escapes of `$'…'` (and of printf formats): `\x72`, `\162`,
/// `\u0072`, `\n` … so `$'\x72m'` reads as `rm`.
pub(crate) fn decode_c_escapes(raw: &str) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' || i + 1 >= chars.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = chars[i + 1];
        i += 2;
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                i -= 1;
                (8, 3)
            }
            _ => {
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'e' | 'E' => '\u{1b}',
                    'f' => '\u{c}',
                    'v' => '\u{b}',
                    other => other,
                });
                continue;
            }
        };
        let start = i;
        while i < chars.len() && i - start < max && chars[i].is_digit(radix) {
            i += 1;
        }
        let digits: String = chars[start..i].iter().collect();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) => out.push(ch),
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

fn expansion_var<'a>(node: Node<'_>, src: &'a [u8]) -> Option<&'a str> {
    let mut cursor = node.walk();
    let found = node
        .named_children(&mut cursor)
        .find(|c| matches!(c.kind(), "variable_name" | "special_variable_name"));
    found.map(|c| text_of(c, src))
}

/// What a static reader may assume an expansion yields.
fn guess_expansion(node: Node<'_>, src: &[u8]) -> Option<&'static str> {
    let var = expansion_var(node, src)?;
    let op = node
        .child_by_field_name("operator")
        .map(|o| text_of(o, src))
        .unwrap_or("");
    let plain = node.kind() == "simple_expansion" || node.named_child_count() == 1;
    // `${HOME:?}` and `${HOME:-x}` are HOME whenever HOME is set.
    let same = plain || matches!(op, ":?" | "?" | ":-" | "-" | ":=" | "=");
    match var {
        // Any slice or pattern of IFS is still whitespace: it separates words.
        "IFS" => Some("\u{1f}"),
        "HOME" if same => Some("~"),
        "PWD" if same => Some("."),
        // A placeholder user name: `/home/$USER` is some home directory.
        "USER" | "LOGNAME" if same => Some("user"),
        _ => None,
    }
}

/// `$(echo rm)` / `` `printf rm` `` → `rm`; anything else is unknown.
fn guess_substitution(node: Node<'_>, src: &[u8], nest: usize) -> Option<String> {
    let mut cursor = node.walk();
    let mut stmts = node.named_children(&mut cursor);
    let cmd = stmts.next()?;
    if stmts.next().is_some() || cmd.kind() != "command" {
        return None;
    }
    let name = eval_nested(cmd.child_by_field_name("name")?, src, nest + 1);
    if name.dynamic {
        return None;
    }
    let mut args = Vec::new();
    let mut c2 = cmd.walk();
    for arg in cmd.children_by_field_name("argument", &mut c2) {
        let w = eval_nested(arg, src, nest + 1);
        if w.dynamic {
            return None;
        }
        args.push(w.text);
    }
    match name.text.as_str() {
        "echo" => {
            let skip = args
                .iter()
                .take_while(|a| matches!(a.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                .count();
            Some(args[skip..].join(" "))
        }
        "printf" => {
            let (fmt, rest) = args.split_first()?;
            let mut s = decode_c_escapes(fmt);
            for r in rest {
                s = s.replacen("%s", r, 1);
            }
            Some(s.trim_end_matches('\n').to_string())
        }
        _ => None,
    }
}

/// Appends `next` to `prev` when the grammar split one shell word in two.
/// A `$` left dangling at the end of `prev` starts an expansion in `next`.
pub(crate) fn join(prev: &mut Word, next: Word) {
    let dangling = prev.text.ends_with('$')
        && next
            .text
            .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    if dangling {
        prev.text.pop();
        prev.dynamic = true;
        match next.text.strip_prefix("IFS") {
            Some(rest) => {
                prev.text.push(IFS_MARK);
                prev.text.push_str(rest);
            }
            None => {
                prev.guessable = false;
                prev.text.push('$');
                prev.text.push_str(&next.text);
            }
        }
    } else {
        prev.text.push_str(&next.text);
    }
    prev.dynamic |= next.dynamic;
    prev.guessable &= next.guessable;
    prev.has_subst |= next.has_subst;
    prev.glob |= next.glob;
    prev.brace |= next.brace;
}

/// Splits words that hold an `$IFS` guess into separate words, as bash's word
/// splitting would.
pub(crate) fn split_ifs(words: Vec<Word>) -> Vec<Word> {
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        if !w.text.contains(IFS_MARK) {
            out.push(w);
            continue;
        }
        for part in w.text.split(IFS_MARK).filter(|p| !p.is_empty()) {
            out.push(Word {
                text: part.to_string(),
                ..w.clone()
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_c_escapes() {
        assert_eq!(decode_c_escapes(r"\x72m"), "rm");
        assert_eq!(decode_c_escapes(r"\162\155"), "rm");
        assert_eq!(decode_c_escapes(r"a\nb"), "a\nb");
    }
}
