//! The transcript: what was said and done, as entries (user prompts, streamed answers,
//! tool cards, notices, the planner's plans and step progress, subagents starting and
//! ending), each rendered to wrapped lines once per width and cached.
//!
//! Only the answer still streaming is re-rendered per frame, and of it only the block
//! still growing (`markdown::Stream`). Which lines a viewport shows, and keeping a
//! scrolled-up view still while output arrives, is `viewport`.

use ratatui::text::{Line, Span};

use crate::markdown::{self, Stream};
use crate::view::Theme;
use crate::view::text::{sanitize, truncate, wrap};

mod agent;
mod card;
mod plan;
mod viewport;

pub(crate) use agent::SubagentNote;
pub(crate) use agent::{cost, status_style};
pub(crate) use card::ToolCard;
use card::render_card;
pub(crate) use plan::{PlanEntry, StepCard, Tone};

/// A streamed answer and the reasoning before it.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub text: String,
    pub thinking: String,
    pub show_thinking: bool,
    stream: Option<StreamCache>,
}

/// The finished blocks of a streaming answer, rendered once.
#[derive(Debug)]
struct StreamCache {
    width: usize,
    stream: Stream,
    stable_end: usize,
    stable: Vec<Line<'static>>,
}

#[derive(Debug)]
pub(crate) enum Kind {
    User(String),
    Assistant(Answer),
    Tool(ToolCard),
    /// A local or engine message worth reading.
    Notice(String),
    /// Secondary facts: retries, mode changes, turn results. Dim one-liners.
    Quiet(String),
    Warning(String),
    Error(String),
    /// The structured planner: plan blocks, revisions, step progress, the summary.
    Plan(PlanEntry),
    /// A subagent started or ended.
    Subagent(SubagentNote),
}

#[derive(Debug)]
struct Entry {
    kind: Kind,
    /// A blank line separates it from the entry before.
    lead_blank: bool,
    cache: Option<(usize, Vec<Line<'static>>)>,
}

/// Every entry of the session, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Transcript {
    entries: Vec<Entry>,
    /// Index of the answer receiving deltas.
    open: Option<usize>,
    /// Where the top visible line was at the last draw while scrolled up.
    anchor: Option<viewport::Anchor>,
    /// Lines added below the viewport since the user scrolled up.
    new_lines: usize,
}

impl Transcript {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn push(&mut self, kind: Kind) {
        self.close();
        // Secondary one-liners (quiet facts, subagents starting and ending) run together.
        let quiet = |kind: &Kind| matches!(kind, Kind::Quiet(_) | Kind::Subagent(_));
        let after_quiet = self.entries.last().is_some_and(|e| quiet(&e.kind));
        let quiet = quiet(&kind);
        let lead_blank = !(self.entries.is_empty() || (quiet && after_quiet));
        self.entries.push(Entry {
            kind,
            lead_blank,
            cache: None,
        });
    }

    /// Ends the streaming answer: it renders whole from now on.
    pub fn close(&mut self) {
        if let Some(i) = self.open.take()
            && let Some(entry) = self.entries.get_mut(i)
        {
            entry.cache = None;
            if let Kind::Assistant(answer) = &mut entry.kind {
                answer.stream = None;
            }
        }
    }

    fn open_answer(&mut self) -> &mut Answer {
        let is_answer = |t: &Transcript, i: usize| {
            matches!(t.entries.get(i).map(|e| &e.kind), Some(Kind::Assistant(_)))
        };
        let i = match self.open {
            Some(i) if is_answer(self, i) => i,
            _ => {
                self.push(Kind::Assistant(Answer::default()));
                self.entries.len() - 1
            }
        };
        self.open = Some(i);
        let entry = &mut self.entries[i];
        entry.cache = None;
        match &mut entry.kind {
            Kind::Assistant(answer) => answer,
            // Just checked or just pushed: always an answer.
            _ => unreachable!("open entry is an answer"),
        }
    }

    pub fn text_delta(&mut self, text: &str) {
        self.open_answer().text.push_str(&sanitize(text));
    }

    pub fn thinking_delta(&mut self, text: &str) {
        self.open_answer().thinking.push_str(&sanitize(text));
    }

    pub fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolCard> {
        self.entries
            .iter_mut()
            .rev()
            .find_map(|e| match &mut e.kind {
                Kind::Tool(card) if card.call_id == call_id => {
                    e.cache = None;
                    Some(card)
                }
                _ => None,
            })
    }

    /// The newest card of plan step `number`.
    pub fn step_mut(&mut self, number: u32) -> Option<&mut StepCard> {
        self.entries
            .iter_mut()
            .rev()
            .find_map(|e| match &mut e.kind {
                Kind::Plan(PlanEntry::Step(card)) if card.number == number => {
                    e.cache = None;
                    Some(card)
                }
                _ => None,
            })
    }

    /// Expands or collapses the newest folded tool output or reasoning.
    pub fn toggle_fold(&mut self) -> bool {
        for entry in self.entries.iter_mut().rev() {
            let toggled = match &mut entry.kind {
                Kind::Tool(card) if card.foldable() => {
                    card.expanded = !card.expanded;
                    true
                }
                Kind::Plan(PlanEntry::Step(card)) if card.foldable() => {
                    card.expanded = !card.expanded;
                    true
                }
                Kind::Assistant(answer) if !answer.thinking.is_empty() => {
                    answer.show_thinking = !answer.show_thinking;
                    answer.stream = None;
                    true
                }
                _ => false,
            };
            if toggled {
                entry.cache = None;
                return true;
            }
        }
        false
    }

    /// Drops every cached rendering (the theme changed).
    pub fn invalidate(&mut self) {
        for entry in &mut self.entries {
            entry.cache = None;
            if let Kind::Assistant(answer) = &mut entry.kind {
                answer.stream = None;
            }
        }
    }

    /// Renders entry `i` at `width` (from cache when possible) and returns its lines.
    fn lines(&mut self, i: usize, width: usize, theme: Theme) -> &[Line<'static>] {
        let open = self.open == Some(i);
        let Some(entry) = self.entries.get_mut(i) else {
            return &[];
        };
        if entry.cache.as_ref().is_none_or(|(w, _)| *w != width) {
            let mut lines = Vec::new();
            if entry.lead_blank {
                lines.push(Line::default());
            }
            render_kind(&mut entry.kind, width, theme, open, &mut lines);
            entry.cache = Some((width, lines));
        }
        entry
            .cache
            .as_ref()
            .map_or(&[], |(_, lines)| lines.as_slice())
    }
}

fn render_kind(
    kind: &mut Kind,
    width: usize,
    theme: Theme,
    open: bool,
    out: &mut Vec<Line<'static>>,
) {
    match kind {
        Kind::User(text) => {
            let marker = [Span::styled("› ", theme.user())];
            let spans = [Span::styled(text.clone(), theme.user())];
            out.extend(wrap(&spans, width, &marker, &[Span::raw("  ")]));
        }
        Kind::Assistant(answer) => render_answer(answer, width, theme, open, out),
        Kind::Tool(card) => render_card(card, width, theme, out),
        Kind::Notice(text) => {
            for line in text.split('\n') {
                let indent = " ".repeat(hanging_indent(line, width));
                let spans = [Span::raw(line.to_owned())];
                out.extend(wrap(&spans, width, &[], &[Span::raw(indent)]));
            }
        }
        Kind::Quiet(text) => {
            let spans = [Span::styled(text.clone(), theme.dim())];
            out.extend(wrap(&spans, width, &[], &[]));
        }
        Kind::Warning(text) => {
            let spans = [Span::styled(format!("warning: {text}"), theme.warn())];
            out.extend(wrap(&spans, width, &[], &[Span::raw("  ")]));
        }
        Kind::Error(text) => {
            let spans = [Span::styled(format!("error: {text}"), theme.error())];
            out.extend(wrap(&spans, width, &[], &[Span::raw("  ")]));
        }
        Kind::Plan(entry) => plan::render(entry, width, theme, out),
        Kind::Subagent(note) => agent::render(note, width, theme, out),
    }
}

fn render_answer(
    answer: &mut Answer,
    width: usize,
    theme: Theme,
    open: bool,
    out: &mut Vec<Line<'static>>,
) {
    if !answer.thinking.is_empty() {
        let lines = answer.thinking.trim().lines().count();
        let style = theme.thinking();
        if answer.show_thinking {
            let spans = [Span::styled(answer.thinking.trim().to_owned(), style)];
            out.extend(wrap(
                &spans,
                width,
                &[Span::styled("✻ ", style)],
                &[Span::raw("  ")],
            ));
        } else {
            let last = answer.thinking.trim().lines().last().unwrap_or("");
            let head = format!("✻ thinking · {lines} lines (Ctrl-O) ");
            let room = width.saturating_sub(head.chars().count());
            let mut text = head;
            if open && answer.text.is_empty() {
                text.push_str(&truncate(last, room));
            }
            out.push(Line::from(Span::styled(truncate(&text, width), style)));
        }
    }
    if !open {
        out.extend(markdown::render(&answer.text, width, theme));
        return;
    }
    let cache = answer.stream.get_or_insert_with(|| StreamCache {
        width,
        stream: Stream::default(),
        stable_end: 0,
        stable: Vec::new(),
    });
    if cache.width != width {
        *cache = StreamCache {
            width,
            stream: Stream::default(),
            stable_end: 0,
            stable: Vec::new(),
        };
    }
    let boundary = cache.stream.advance(&answer.text);
    if boundary > cache.stable_end {
        let chunk = &answer.text[cache.stable_end..boundary];
        if !cache.stable.is_empty() {
            cache.stable.push(Line::default());
        }
        cache.stable.extend(markdown::render(chunk, width, theme));
        cache.stable_end = boundary;
    }
    out.extend_from_slice(&cache.stable);
    let tail = markdown::render(&answer.text[cache.stable_end..], width, theme);
    if !cache.stable.is_empty() && !tail.is_empty() {
        out.push(Line::default());
    }
    out.extend(tail);
}

/// Where a wrapped line of a notice goes on: an indented two-column row ("  /mode <name>
/// switch modes", a key and what it does) continues under its second column, another
/// indented line under its own indent. Never past half the width, so the text keeps room.
fn hanging_indent(line: &str, width: usize) -> usize {
    let lead = line.len() - line.trim_start_matches(' ').len();
    if lead == 0 {
        return 0;
    }
    let body = &line[lead..];
    let column = body.find("  ").and_then(|gap| {
        let after = &body[gap..];
        let text = gap + after.len() - after.trim_start_matches(' ').len();
        (text < body.len()).then(|| lead + crate::view::text::width(&body[..text]))
    });
    let indent = column.unwrap_or(lead);
    if indent * 2 > width {
        lead.min(width / 2)
    } else {
        indent
    }
}

/// "1.2 s" or "340 ms".
pub(crate) fn duration(ms: u64) -> String {
    if ms >= 1000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{ms} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::text::plain;

    #[test]
    fn streaming_render_matches_whole_render() {
        let answer =
            "# Plan\n\nFirst paragraph here.\n\n- a\n- b\n\n```rust\nlet x = 1;\n```\n\nDone.";
        let mut t = Transcript::default();
        for chunk in answer.as_bytes().chunks(3) {
            t.text_delta(&String::from_utf8_lossy(chunk));
            let mut scroll = 0;
            t.visible(40, 100, &mut scroll, Theme::plain());
        }
        let mut scroll = 0;
        let streamed = plain(&t.visible(40, 100, &mut scroll, Theme::plain()));
        t.close();
        let whole = plain(&t.visible(40, 100, &mut scroll, Theme::plain()));
        assert_eq!(streamed, whole);
        assert_eq!(whole[0], "# Plan");
    }
}
