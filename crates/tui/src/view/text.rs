//! Text hygiene and wrapping shared by every drawn surface.
//!
//! `sanitize` makes model and tool text safe to put on the screen: ANSI escape sequences
//! and control characters are removed (a tool cannot move the cursor or recolour the
//! terminal), tabs become spaces and bidi overrides are dropped — core's `clean`, which the
//! line session uses too. `wrap` breaks styled text
//! into lines of a given display width, so heights are known before drawing and only the
//! visible slice is handed to ratatui.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Columns a tab becomes.
const TAB: &str = "    ";

/// Removes escape sequences and control characters (`atto_present::clean::strip`, shared
/// with the line session); tabs become spaces. Newlines are kept. U+FFFD passes through.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    match atto_present::clean::strip(text) {
        Cow::Borrowed(t) if !t.contains('\t') => Cow::Borrowed(t),
        cleaned => Cow::Owned(cleaned.replace('\t', TAB)),
    }
}

/// Display width of a string.
pub fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Cuts `text` to at most `max` columns, ending with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// Wraps styled text into lines of at most `width` columns. `first` prefixes the first
/// line and `rest` every following one (indents, quote bars, gutters). Words move to the
/// next line whole unless longer than a line. Newlines in the text start new lines.
pub fn wrap(
    spans: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut w = Wrapper::new(width, first, rest);
    for span in spans {
        w.push(&span.content, span.style);
    }
    w.finish()
}

struct Wrapper<'p> {
    width: usize,
    rest: &'p [Span<'static>],
    lines: Vec<Line<'static>>,
    line: Vec<Span<'static>>,
    used: usize,
    /// Columns taken by the prefix of the current line.
    prefix: usize,
    /// Spaces seen after the last word: written only if another word follows on the line.
    pending: Option<(String, Style)>,
}

impl<'p> Wrapper<'p> {
    fn new(width: usize, first: &[Span<'static>], rest: &'p [Span<'static>]) -> Self {
        let width = width.max(1);
        let mut w = Wrapper {
            width,
            rest,
            lines: Vec::new(),
            line: Vec::new(),
            used: 0,
            prefix: 0,
            pending: None,
        };
        w.start_line(first);
        w
    }

    fn start_line(&mut self, prefix: &[Span<'static>]) {
        self.line = Vec::with_capacity(prefix.len() + 1);
        self.used = 0;
        for span in prefix {
            let w = width(&span.content);
            // A prefix wider than the line would leave no room: drop it.
            if self.used + w >= self.width {
                break;
            }
            self.used += w;
            self.line.push(span.clone());
        }
        self.prefix = self.used;
    }

    fn break_line(&mut self) {
        self.pending = None;
        let line = std::mem::take(&mut self.line);
        self.lines.push(Line::from(line));
        let rest = self.rest;
        self.start_line(rest);
    }

    fn append(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        self.used += width(text);
        if let Some(last) = self.line.last_mut()
            && last.style == style
        {
            last.content.to_mut().push_str(text);
            return;
        }
        self.line.push(Span::styled(text.to_owned(), style));
    }

    fn push(&mut self, text: &str, style: Style) {
        for (i, part) in text.split('\n').enumerate() {
            if i > 0 {
                self.break_line();
            }
            self.push_words(part, style);
        }
    }

    fn push_words(&mut self, text: &str, style: Style) {
        let mut rest = text;
        while !rest.is_empty() {
            let is_space = rest.starts_with(' ');
            let end = rest
                .find(|c: char| (c == ' ') != is_space)
                .unwrap_or(rest.len());
            let (piece, tail) = rest.split_at(end);
            rest = tail;
            if is_space {
                match &mut self.pending {
                    Some((text, _)) => text.push_str(piece),
                    None => self.pending = Some((piece.to_owned(), style)),
                }
                continue;
            }
            let w = width(piece);
            let gap = self.pending.as_ref().map_or(0, |(t, _)| width(t));
            if self.used + gap + w > self.width && self.used > self.prefix && w <= self.room() {
                self.break_line();
            }
            if let Some((text, style)) = self.pending.take()
                && self.used + width(&text) < self.width
            {
                self.append(&text, style);
            }
            if self.used + w <= self.width {
                self.append(piece, style);
            } else {
                self.push_long(piece, style);
            }
        }
    }

    /// Columns a line has after its continuation prefix.
    fn room(&self) -> usize {
        let prefix: usize = self.rest.iter().map(|s| width(&s.content)).sum();
        self.width.saturating_sub(prefix).max(1)
    }

    /// A word longer than the room left: split it at the line ends.
    fn push_long(&mut self, word: &str, style: Style) {
        let mut chunk = String::new();
        for c in word.chars() {
            let cw = char_width(c);
            if self.used + width(&chunk) + cw > self.width {
                if chunk.is_empty() && self.used == self.prefix {
                    // A character wider than the whole line: show it anyway.
                    chunk.push(c);
                    continue;
                }
                let done = std::mem::take(&mut chunk);
                self.append(&done, style);
                self.break_line();
            }
            chunk.push(c);
        }
        self.append(&chunk, style);
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        let line = std::mem::take(&mut self.line);
        self.lines.push(Line::from(line));
        self.lines
    }
}

/// The lines as plain strings, for tests to compare.
#[cfg(test)]
pub(crate) fn plain(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_removed() {
        let hostile = "\u{1b}[2J\u{1b}[31mred\u{1b}[0m\tx\r\n\u{1b}]0;title\u{7}ok\u{8}\u{202e}!";
        assert_eq!(sanitize(hostile), "red    x\nok!");
        assert_eq!(sanitize("bad \u{fffd} byte"), "bad \u{fffd} byte");
        assert!(matches!(sanitize("clean"), Cow::Borrowed(_)));
    }

    #[test]
    fn wraps_words_and_splits_long_ones() {
        let lines = wrap(&[Span::raw("alpha beta gamma")], 11, &[], &[]);
        assert_eq!(plain(&lines), ["alpha beta", "gamma"]);
        let lines = wrap(
            &[Span::raw("abcdefghij")],
            4,
            &[Span::raw("> ")],
            &[Span::raw("  ")],
        );
        assert_eq!(plain(&lines), ["> ab", "  cd", "  ef", "  gh", "  ij"]);
        let lines = wrap(&[Span::raw("a\nb")], 10, &[], &[]);
        assert_eq!(plain(&lines), ["a", "b"]);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let lines = wrap(&[Span::raw("日本語です")], 4, &[], &[]);
        assert_eq!(plain(&lines), ["日本", "語で", "す"]);
        assert_eq!(truncate("abcdef", 4), "abc…");
    }
}
