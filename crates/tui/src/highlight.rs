//! Syntax colouring for code blocks and diffs: a small per-line tokenizer (keywords,
//! strings, comments, numbers) for Rust, Python, JavaScript/TypeScript, shell and JSON,
//! and unified-diff line colours. Deliberately not a parser: it must be cheap enough to
//! run on every streamed frame, and a wrong colour is harmless.

use ratatui::style::Style;
use ratatui::text::Span;

use crate::view::Theme;

/// A language the highlighter knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    Js,
    Shell,
    Json,
}

impl Lang {
    /// The language of a fence info string (`rust`, `py`, `tsx`, `bash`…), if known.
    pub fn from_info(info: &str) -> Option<Lang> {
        let tag = info
            .split(|c: char| c == ',' || c.is_whitespace())
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        Some(match tag.as_str() {
            "rust" | "rs" => Lang::Rust,
            "python" | "py" | "python3" => Lang::Python,
            "js" | "javascript" | "jsx" | "ts" | "typescript" | "tsx" | "mjs" => Lang::Js,
            "sh" | "bash" | "shell" | "zsh" | "console" => Lang::Shell,
            "json" | "jsonc" => Lang::Json,
            _ => return None,
        })
    }

    fn keywords(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &[
                "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else",
                "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match",
                "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct",
                "super", "trait", "true", "type", "unsafe", "use", "where", "while",
            ],
            Lang::Python => &[
                "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
                "del", "elif", "else", "except", "False", "finally", "for", "from", "global", "if",
                "import", "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise",
                "return", "True", "try", "while", "with", "yield",
            ],
            Lang::Js => &[
                "async",
                "await",
                "break",
                "case",
                "catch",
                "class",
                "const",
                "continue",
                "default",
                "delete",
                "do",
                "else",
                "export",
                "extends",
                "false",
                "finally",
                "for",
                "from",
                "function",
                "if",
                "import",
                "in",
                "instanceof",
                "interface",
                "let",
                "new",
                "null",
                "return",
                "switch",
                "this",
                "throw",
                "true",
                "try",
                "type",
                "typeof",
                "undefined",
                "var",
                "void",
                "while",
                "yield",
            ],
            Lang::Shell => &[
                "case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function",
                "if", "in", "local", "return", "then", "until", "while",
            ],
            Lang::Json => &["true", "false", "null"],
        }
    }

    fn line_comment(self) -> Option<&'static str> {
        match self {
            Lang::Rust | Lang::Js => Some("//"),
            Lang::Python | Lang::Shell => Some("#"),
            Lang::Json => None,
        }
    }

    fn block_comments(self) -> bool {
        matches!(self, Lang::Rust | Lang::Js)
    }
}

/// Carries block-comment state from one line of a code block to the next.
#[derive(Debug, Default, Clone, Copy)]
pub struct State {
    in_block_comment: bool,
}

/// Colours one line of code. `lang` `None` draws it in the code style.
pub fn code_line(
    line: &str,
    lang: Option<Lang>,
    state: &mut State,
    theme: Theme,
) -> Vec<Span<'static>> {
    let Some(lang) = lang else {
        return vec![Span::styled(line.to_owned(), theme.code())];
    };
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut push = |text: &str, style: Style| {
        if text.is_empty() {
            return;
        }
        match spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => spans.push(Span::styled(text.to_owned(), style)),
        }
    };
    let mut rest = line;
    while !rest.is_empty() {
        let (len, style) = token(rest, lang, state, theme);
        push(&rest[..len], style);
        rest = &rest[len..];
    }
    spans
}

/// The length and style of the token `rest` starts with, a non-empty line's remainder;
/// a block comment's opening or end changes `state`.
fn token(rest: &str, lang: Lang, state: &mut State, theme: Theme) -> (usize, Style) {
    if state.in_block_comment {
        return match rest.find("*/") {
            Some(end) => {
                state.in_block_comment = false;
                (end + 2, theme.comment())
            }
            None => (rest.len(), theme.comment()),
        };
    }
    if lang.line_comment().is_some_and(|c| rest.starts_with(c)) {
        return (rest.len(), theme.comment());
    }
    if lang.block_comments() && rest.starts_with("/*") {
        state.in_block_comment = true;
        return (2, theme.comment());
    }
    let Some(c) = rest.chars().next() else {
        // Only an empty remainder has no first character; it is all there is.
        return (rest.len(), theme.text());
    };
    if c == '"' || c == '\'' || (c == '`' && lang == Lang::Js) {
        // Rust lifetimes ('a) look like char literals; keep them plain.
        let end = string_end(rest, c);
        if c == '\'' && lang == Lang::Rust && end.is_none() {
            return (1, theme.text());
        }
        return (end.unwrap_or(rest.len()), theme.string());
    }
    if c.is_ascii_digit() {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .unwrap_or(rest.len());
        return (end, theme.number());
    }
    if c.is_alphabetic() || c == '_' {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..end];
        let style = if lang.keywords().contains(&word) {
            theme.keyword()
        } else {
            theme.text()
        };
        return (end, style);
    }
    (c.len_utf8(), theme.text())
}

/// Byte offset just past the closing quote, honouring backslash escapes.
fn string_end(text: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return Some(i + c.len_utf8());
        }
    }
    None
}

/// The style of one unified-diff line: `+` added, `-` removed, `@@` hunk header.
pub fn diff_style(line: &str, theme: Theme) -> Style {
    if line.starts_with("+++") || line.starts_with("---") {
        theme.text().add_modifier(ratatui::style::Modifier::BOLD)
    } else if line.starts_with('+') {
        theme.diff_add()
    } else if line.starts_with('-') {
        theme.diff_del()
    } else if line.starts_with("@@") {
        theme.diff_hunk()
    } else {
        theme.text()
    }
}

/// Whether text looks like a unified diff (so previews and subjects get diff colours).
pub fn looks_like_diff(text: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("@@") || l.starts_with("+++ ") || l.starts_with("--- "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn styled(line: &str, lang: Lang) -> Vec<(String, Style)> {
        let mut state = State::default();
        code_line(line, Some(lang), &mut state, Theme::color())
            .into_iter()
            .map(|s| (s.content.into_owned(), s.style))
            .collect()
    }

    #[test]
    fn keywords_strings_and_comments_get_their_styles() {
        let t = Theme::color();
        let spans = styled("let s = \"fn\"; // note", Lang::Rust);
        assert_eq!(spans[0], ("let".into(), t.keyword()));
        assert!(spans.contains(&("\"fn\"".into(), t.string())));
        assert_eq!(spans.last(), Some(&("// note".into(), t.comment())));
        let spans = styled("def f(x): return 42  # answer", Lang::Python);
        assert_eq!(spans[0], ("def".into(), t.keyword()));
        assert!(spans.contains(&("42".into(), t.number())));
    }

    #[test]
    fn block_comments_span_lines() {
        let t = Theme::color();
        let mut state = State::default();
        code_line("a /* b", Some(Lang::Js), &mut state, t);
        let next = code_line("c */ d", Some(Lang::Js), &mut state, t);
        assert_eq!(next[0].content, "c */");
        assert_eq!(next[0].style, t.comment());
    }

    #[test]
    fn fence_tags_and_diff_lines() {
        assert_eq!(Lang::from_info("tsx"), Some(Lang::Js));
        assert_eq!(Lang::from_info("rust,ignore"), Some(Lang::Rust));
        assert_eq!(Lang::from_info("cobol"), None);
        let t = Theme::color();
        assert_eq!(diff_style("+x", t), t.diff_add());
        assert_eq!(diff_style("-x", t), t.diff_del());
        assert_eq!(diff_style("@@ -1 +1 @@", t), t.diff_hunk());
    }
}
