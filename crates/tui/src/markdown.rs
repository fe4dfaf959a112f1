//! Markdown to styled, wrapped lines (pulldown-cmark): headings, emphasis, lists, block
//! quotes, inline code, links and fenced code blocks with syntax colours.
//!
//! Also owns `Stream`, which finds where a streaming answer's finished blocks end so the
//! transcript re-renders only the block still growing. Does not sanitize: callers pass
//! text that `view::text::sanitize` already cleaned.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::highlight::{self, Lang};
use crate::view::Theme;
use crate::view::text::wrap;

/// Renders Markdown into lines at most `width` columns wide.
pub fn render(text: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut r = Renderer::new(width, theme);
    let options = Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    r.flush();
    if r.code.is_some() {
        r.end_code();
    }
    r.lines
}

#[derive(Debug)]
enum Container {
    Quote,
    List(Option<u64>),
    /// A list item: its marker, and whether the marker was drawn yet.
    Item {
        marker: String,
        drawn: bool,
    },
}

struct Code {
    lang: Option<Lang>,
    text: String,
}

struct Renderer {
    width: usize,
    theme: Theme,
    lines: Vec<Line<'static>>,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    links: Vec<String>,
    code: Option<Code>,
    need_blank: bool,
}

impl Renderer {
    fn new(width: usize, theme: Theme) -> Self {
        Renderer {
            width,
            theme,
            lines: Vec::new(),
            inline: Vec::new(),
            styles: Vec::new(),
            containers: Vec::new(),
            links: Vec::new(),
            code: None,
            need_blank: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let next = f(self.style());
        self.styles.push(next);
    }

    fn text(&mut self, text: &str, style: Style) {
        self.inline.push(Span::styled(text.to_owned(), style));
    }

    /// Prefixes for the next block's first line and its continuation lines.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let marker = self.theme.marker();
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    first.push(Span::styled("│ ", marker));
                    rest.push(Span::styled("│ ", marker));
                }
                Container::List(_) => {}
                Container::Item { marker: m, drawn } => {
                    let pad = " ".repeat(m.chars().count());
                    if *drawn {
                        first.push(Span::raw(pad.clone()));
                    } else {
                        first.push(Span::styled(m.clone(), marker));
                        *drawn = true;
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn blank_if_needed(&mut self) {
        if self.need_blank && !self.lines.is_empty() {
            let quoted = self
                .containers
                .iter()
                .any(|c| matches!(c, Container::Quote));
            self.lines.push(if quoted {
                Line::from(Span::styled("│", self.theme.marker()))
            } else {
                Line::default()
            });
        }
        self.need_blank = false;
    }

    /// Writes the pending inline text as a wrapped block.
    fn flush(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let (first, rest) = self.prefixes();
        self.lines.extend(wrap(&spans, self.width, &first, &rest));
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some(code) = &mut self.code {
            match event {
                Event::Text(t) => code.text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => self.end_code(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t, self.style()),
            Event::Code(t) => self.text(&t, self.theme.code()),
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t, self.theme.dim()),
            Event::SoftBreak => self.text(" ", self.style()),
            Event::HardBreak => self.text("\n", self.style()),
            Event::Rule => {
                self.flush();
                self.blank_if_needed();
                let rule = "─".repeat(self.width.min(40));
                self.lines
                    .push(Line::from(Span::styled(rule, self.theme.marker())));
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " }, self.style());
            }
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.flush();
                self.blank_if_needed();
            }
            Tag::Heading { level, .. } => self.start_heading(level),
            Tag::BlockQuote(_) => {
                self.flush();
                self.blank_if_needed();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => self.start_code_block(kind),
            Tag::List(start) => {
                self.flush();
                if !self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::Item { .. }))
                {
                    self.blank_if_needed();
                }
                self.containers.push(Container::List(start));
            }
            Tag::Item => self.start_item(),
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.links.push(dest_url.into_string());
                let link = self.theme.link();
                self.push_style(|s| s.patch(link));
            }
            Tag::Image { dest_url, .. } => {
                self.links.push(dest_url.into_string());
                self.text("[image: ", self.theme.dim());
                let dim = self.theme.dim();
                self.push_style(|s| s.patch(dim));
            }
            _ => {}
        }
    }

    /// A heading starts on its own paragraph, its `#`s shown, in the heading style.
    fn start_heading(&mut self, level: HeadingLevel) {
        self.flush();
        self.blank_if_needed();
        let hashes = match level {
            HeadingLevel::H1 => 1,
            HeadingLevel::H2 => 2,
            HeadingLevel::H3 => 3,
            HeadingLevel::H4 => 4,
            HeadingLevel::H5 => 5,
            HeadingLevel::H6 => 6,
        };
        let heading = self.theme.heading();
        self.styles.push(heading);
        self.text(&format!("{} ", "#".repeat(hashes)), heading);
    }

    /// A code block collects its text until it ends, then is drawn highlighted.
    fn start_code_block(&mut self, kind: CodeBlockKind<'_>) {
        self.flush();
        self.blank_if_needed();
        let lang = match kind {
            CodeBlockKind::Fenced(info) => Lang::from_info(&info),
            CodeBlockKind::Indented => None,
        };
        self.code = Some(Code {
            lang,
            text: String::new(),
        });
    }

    /// A list item: its marker is its number in an ordered list, else a bullet.
    fn start_item(&mut self) {
        self.flush();
        let marker = match self.containers.last_mut() {
            Some(Container::List(Some(n))) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => "• ".to_owned(),
        };
        self.containers.push(Container::Item {
            marker,
            drawn: false,
        });
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.need_blank = true;
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.containers.pop();
                self.need_blank = true;
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.links.pop() {
                    let shown: String = self.inline.iter().map(|s| s.content.as_ref()).collect();
                    if !url.is_empty() && !shown.ends_with(&url) {
                        self.text(&format!(" ({url})"), self.theme.dim());
                    }
                }
            }
            TagEnd::Image => {
                self.styles.pop();
                self.links.pop();
                self.text("]", self.theme.dim());
            }
            _ => {}
        }
    }

    fn end_code(&mut self) {
        let Some(code) = self.code.take() else { return };
        let (first, rest) = self.prefixes();
        let mut gutter_first = first;
        gutter_first.push(Span::styled("  ", self.theme.marker()));
        let mut gutter = rest;
        gutter.push(Span::styled("  ", self.theme.marker()));
        let mut state = highlight::State::default();
        let body = code.text.strip_suffix('\n').unwrap_or(&code.text);
        for (i, line) in body.split('\n').enumerate() {
            let spans = highlight::code_line(line, code.lang, &mut state, self.theme);
            let lead = if i == 0 { &gutter_first } else { &gutter };
            self.lines.extend(wrap(&spans, self.width, lead, &gutter));
        }
        self.need_blank = true;
    }
}

/// Tracks a streaming Markdown text: where its finished blocks end. A boundary is the start
/// of an unindented line after a blank line, outside any code fence, so the text before it
/// renders the same on its own as it will in the whole.
#[derive(Debug, Default, Clone)]
pub struct Stream {
    scanned: usize,
    in_fence: bool,
    after_blank: bool,
    boundary: usize,
}

impl Stream {
    /// Scans the complete lines added since the last call; returns the boundary (a byte
    /// offset into `text`; 0 when no block is finished yet).
    pub fn advance(&mut self, text: &str) -> usize {
        while let Some(len) = text.get(self.scanned..).and_then(|rest| rest.find('\n')) {
            let line = &text[self.scanned..self.scanned + len];
            let blank = line.trim().is_empty();
            if !self.in_fence && self.after_blank && !blank && !line.starts_with([' ', '\t']) {
                self.boundary = self.scanned;
            }
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                self.in_fence = !self.in_fence;
            }
            self.after_blank = blank;
            self.scanned += len + 1;
        }
        self.boundary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str, width: usize) -> Vec<String> {
        render(text, width, Theme::plain())
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn blocks_render_with_markers_and_spacing() {
        let md = "# Title\n\nSome *text* and `code`.\n\n- one\n- two\n  1. nested\n\n> quoted\n";
        assert_eq!(
            plain(md, 40),
            [
                "# Title",
                "",
                "Some text and code.",
                "",
                "• one",
                "• two",
                "  1. nested",
                "",
                "│ quoted"
            ]
        );
    }

    #[test]
    fn code_blocks_keep_lines_and_colour_keywords() {
        let theme = Theme::color();
        let lines = render("```rust\nfn main() {}\n```\n", 40, theme);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].to_string(), "  fn main() {}");
        assert!(
            lines[0]
                .spans
                .iter()
                .any(|s| s.content == "fn" && s.style == theme.keyword())
        );
    }

    #[test]
    fn stream_boundaries_skip_fences() {
        let mut s = Stream::default();
        let text = "para one\n\n```\ncode\n\nmore\n```\n\nnext\n";
        let b = s.advance(text);
        assert_eq!(&text[b..], "next\n");
        let mut s = Stream::default();
        assert_eq!(s.advance("only one paragraph so far"), 0);
    }
}
