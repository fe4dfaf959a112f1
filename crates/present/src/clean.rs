//! Terminal hygiene shared by every front end: nothing the model, a tool or a command
//! prints can move the cursor, recolour the terminal, rewrite a line with a carriage
//! return or reorder text with bidi overrides.
//!
//! Owns: a writer that drops escape sequences and control characters from everything
//! written through it, even when a sequence is split across writes (streamed deltas);
//! [`strip`], the same for one string; and [`visible`], which shows such characters
//! instead of dropping them, for approval prompts where hiding part of a command would be
//! worse than showing odd glyphs.

use std::borrow::Cow;
use std::io::{self, Write};

/// Where the escape-sequence parser is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    /// After ESC.
    Escape,
    /// Inside a CSI sequence, up to its final byte.
    Csi,
    /// Inside an OSC/DCS/SOS/PM/APC string, up to BEL or ST.
    String,
    /// ESC seen inside a string: `\` ends it.
    StringEscape,
    /// One more byte to skip (character-set selection).
    SkipOne,
}

/// A writer that passes text through clean (see the module docs).
pub struct Clean<W: Write> {
    inner: W,
    state: State,
    /// The start of a UTF-8 character split across writes.
    partial: Vec<u8>,
    /// The last character was `\r`: dropped unless `\n` follows (then `\r\n` is `\n`).
    after_cr: bool,
}

impl<W: Write> Clean<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            state: State::Text,
            partial: Vec::new(),
            after_cr: false,
        }
    }

    /// The writer underneath.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// Filters `c`; what survives is appended to `out`.
    fn feed(&mut self, c: char, out: &mut String) {
        match self.state {
            State::Text => match c {
                '\u{1b}' => self.state = State::Escape,
                '\u{9b}' => self.state = State::Csi,
                '\n' | '\t' => out.push(c),
                c if is_hidden(c) => {}
                c => out.push(c),
            },
            State::Escape => {
                self.state = match c {
                    '[' => State::Csi,
                    ']' | 'P' | 'X' | '^' | '_' => State::String,
                    '(' | ')' | '*' | '+' | '#' | '%' => State::SkipOne,
                    _ => State::Text,
                };
            }
            State::Csi => {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    self.state = State::Text;
                }
            }
            State::String => match c {
                '\u{7}' | '\u{9c}' => self.state = State::Text,
                '\u{1b}' => self.state = State::StringEscape,
                _ => {}
            },
            State::StringEscape => self.state = State::Text,
            State::SkipOne => self.state = State::Text,
        }
    }
}

impl<W: Write> Write for Clean<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.partial);
        bytes.extend_from_slice(buf);
        let mut out = String::with_capacity(bytes.len());
        let mut rest: &[u8] = &bytes;
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.feed_str(text, &mut out);
                    rest = &[];
                }
                Err(err) => {
                    let (good, bad) = rest.split_at(err.valid_up_to());
                    // Checked by from_utf8 just above.
                    self.feed_str(std::str::from_utf8(good).unwrap_or_default(), &mut out);
                    match err.error_len() {
                        // An incomplete character at the end: wait for the rest.
                        None => {
                            self.partial = bad.to_vec();
                            rest = &[];
                        }
                        Some(n) => {
                            out.push('\u{fffd}');
                            rest = &bad[n..];
                        }
                    }
                }
            }
        }
        self.inner.write_all(out.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Clean<W> {
    fn feed_str(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            if self.after_cr {
                self.after_cr = false;
                if c == '\n' {
                    out.push('\n');
                    continue;
                }
            }
            if c == '\r' && self.state == State::Text {
                self.after_cr = true;
                continue;
            }
            self.feed(c, out);
        }
    }
}

/// `text` without escape sequences and control characters (newlines and tabs stay; `\r\n`
/// becomes `\n`, a lone `\r` goes); borrowed when there is nothing to remove.
pub fn strip(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut clean = Clean::new(Vec::with_capacity(text.len()));
    // Writing into a Vec cannot fail.
    let _ = clean.write_all(text.as_bytes());
    Cow::Owned(String::from_utf8(clean.into_inner()).unwrap_or_default())
}

/// Characters that must not reach the terminal as they are: controls (but newline and
/// tab) and the bidi controls that can reorder what a line shows.
fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi(c)
}

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// `text` with every control character shown rather than obeyed: ESC as `␛`, a carriage
/// return as `␍`, other C0 controls as their Unicode control pictures, C1 controls and
/// bidi controls as `<U+XXXX>`. Newlines and tabs stay.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            '\u{7f}' => out.push('␡'),
            c @ '\u{0}'..='\u{1f}' => {
                out.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{fffd}'));
            }
            c if c.is_control() || is_bidi(c) => out.push_str(&format!("<U+{:04X}>", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Clean, strip, visible};
    use std::io::Write;

    fn clean(chunks: &[&[u8]]) -> String {
        let mut w = Clean::new(Vec::new());
        for chunk in chunks {
            w.write_all(chunk).unwrap();
        }
        String::from_utf8(w.inner).unwrap()
    }

    #[test]
    fn escapes_and_controls_never_reach_the_terminal() {
        let cases: &[(&[&[u8]], &str)] = &[
            (&[b"plain text\n"], "plain text\n"),
            (&[b"\x1b[31mred\x1b[0m"], "red"),
            (&[b"\x1b[3", b"1mred"], "red"),
            (&[b"\x1b]0;title\x07after"], "after"),
            (&[b"\x1b]8;;http://x\x1b\\link"], "link"),
            (&[b"rm -rf /\r", b"echo safe"], "rm -rf /echo safe"),
            (&[b"line\r\nnext"], "line\nnext"),
            (&["\u{202e}evil".as_bytes()], "evil"),
            (
                &[
                    "caf\u{e9}".as_bytes()[..4].as_ref(),
                    "caf\u{e9}".as_bytes()[4..].as_ref(),
                ],
                "café",
            ),
            (&[b"\xc2\x9b2Jgone"], "gone"),
            (&[b"bad \xff byte"], "bad \u{fffd} byte"),
            (&[b"a\x08b\x07c"], "abc"),
        ];
        for (chunks, want) in cases {
            assert_eq!(clean(chunks), *want, "{chunks:?}");
        }
    }

    #[test]
    fn one_string_is_cleaned_the_same_way() {
        assert_eq!(strip("plain\tline\n"), "plain\tline\n");
        assert!(matches!(strip("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(strip("\u{1b}[31mred\u{1b}[0m\r\nnext\rx"), "red\nnextx");
    }

    #[test]
    fn approval_text_shows_what_it_hides() {
        assert_eq!(visible("rm -rf /\recho ok"), "rm -rf /␍echo ok");
        assert_eq!(visible("a\u{1b}[2Kb"), "a␛[2Kb");
        assert_eq!(visible("x\u{202e}y"), "x<U+202E>y");
        assert_eq!(visible("tab\tnew\nline"), "tab\tnew\nline");
    }
}
