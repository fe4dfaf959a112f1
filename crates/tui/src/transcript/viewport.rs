//! The transcript's viewport: which lines a screen of a given height shows, `scroll` lines
//! up from the bottom, and scroll anchoring.
//!
//! At the bottom (`scroll == 0`) the view follows new output. Scrolled up, it stays on the
//! line the user is reading: the top line is remembered at each draw (`Anchor`), and at
//! the next draw the offset grows by whatever was added below it (new entries, a streaming
//! answer, a tool card that finished), counted in `new_lines` for the "↓ N new lines"
//! marker. Rendering goes from the bottom up and stops once the viewport is filled, so old
//! entries cost nothing until scrolled to.

use ratatui::text::Line;

use super::Transcript;
use crate::view::Theme;

/// Where the top visible line was at the last draw while scrolled up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Anchor {
    /// Width it was rendered at; line positions mean nothing at another width.
    width: usize,
    /// The entry holding the top line, and the line's index among that entry's lines.
    entry: usize,
    line: usize,
    /// Lines from the top line to the end of the transcript then.
    below: usize,
    /// The offset drawn with; the difference to the offset now is the user's scrolling.
    scroll: usize,
}

impl Transcript {
    /// Lines added below the viewport since the user scrolled up (0 when following).
    pub fn new_lines(&self) -> usize {
        self.new_lines
    }

    /// The lines to show in a viewport `height` rows tall, `scroll` lines up from the
    /// bottom. `scroll` is clamped to the top, and grown by the lines added below the top
    /// line since the last draw when scrolled up. Lines fill from the top when the whole
    /// transcript is shorter than the viewport.
    pub fn visible(
        &mut self,
        width: usize,
        height: usize,
        scroll: &mut usize,
        theme: Theme,
    ) -> Vec<Line<'static>> {
        self.keep_anchor(width, height, scroll, theme);
        let need = scroll.saturating_add(height);
        let mut taken = 0usize;
        let mut first = self.entries.len();
        while first > 0 && taken < need {
            first -= 1;
            taken += self.lines(first, width, theme).len();
        }
        if taken < need {
            *scroll = taken.saturating_sub(height);
        }
        let end = taken - *scroll;
        let start = end.saturating_sub(height);
        let mut out = Vec::with_capacity(end - start);
        let mut pos = 0usize;
        let mut anchor = None;
        for i in first..self.entries.len() {
            let lines = self.cached(i);
            let (lo, hi) = (pos, pos + lines.len());
            pos = hi;
            if hi <= start || lo >= end {
                continue;
            }
            if anchor.is_none() {
                anchor = Some(Anchor {
                    width,
                    entry: i,
                    line: start - lo,
                    below: taken - start,
                    scroll: *scroll,
                });
            }
            let from = start.saturating_sub(lo);
            let to = (end - lo).min(lines.len());
            out.extend_from_slice(&lines[from..to]);
        }
        if *scroll == 0 {
            self.anchor = None;
            self.new_lines = 0;
        } else {
            self.anchor = anchor;
            self.new_lines = self.new_lines.min(*scroll);
        }
        out
    }

    /// Scrolled up: moves `scroll` so the line on top at the last draw stays on top,
    /// keeping whatever the user scrolled since, and counts the lines added below it.
    fn keep_anchor(&mut self, width: usize, height: usize, scroll: &mut usize, theme: Theme) {
        if *scroll == 0 {
            self.anchor = None;
            self.new_lines = 0;
            return;
        }
        let Some(a) = self.anchor else {
            return;
        };
        if a.width != width || a.entry >= self.entries.len() {
            self.anchor = None;
            return;
        }
        let mut below = 0usize;
        for i in a.entry..self.entries.len() {
            let n = self.lines(i, width, theme).len();
            below += if i == a.entry {
                n.saturating_sub(a.line)
            } else {
                n
            };
        }
        self.new_lines += below.saturating_sub(a.below);
        let base = below.saturating_sub(height);
        // What the user scrolled since the last draw, on top of the anchored offset.
        *scroll = if *scroll >= a.scroll {
            base.saturating_add(*scroll - a.scroll)
        } else {
            base.saturating_sub(a.scroll - *scroll)
        };
        if *scroll == 0 {
            // Scrolled back down to the bottom: follow again.
            self.new_lines = 0;
        }
    }

    fn cached(&self, i: usize) -> &[Line<'static>] {
        self.entries
            .get(i)
            .and_then(|e| e.cache.as_ref())
            .map_or(&[], |(_, lines)| lines.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Kind;
    use super::*;
    use crate::view::text::plain;

    fn quiet_lines(t: &mut Transcript, range: std::ops::Range<usize>) {
        for i in range {
            t.push(Kind::Quiet(format!("line {i}")));
        }
    }

    #[test]
    fn visible_takes_the_bottom_slice_and_clamps_scroll() {
        let mut t = Transcript::default();
        quiet_lines(&mut t, 0..10);
        let mut scroll = 0;
        assert_eq!(
            plain(&t.visible(20, 3, &mut scroll, Theme::plain())),
            ["line 7", "line 8", "line 9"]
        );
        let mut scroll = 2;
        assert_eq!(
            plain(&t.visible(20, 3, &mut scroll, Theme::plain())),
            ["line 5", "line 6", "line 7"]
        );
        let mut scroll = 100;
        let top = plain(&t.visible(20, 3, &mut scroll, Theme::plain()));
        assert_eq!(top, ["line 0", "line 1", "line 2"]);
        assert_eq!(scroll, 7);
    }

    #[test]
    fn scrolled_up_the_view_stays_on_the_same_lines_while_output_arrives() {
        let theme = Theme::plain();
        let mut t = Transcript::default();
        quiet_lines(&mut t, 0..10);
        let mut scroll = 2;
        let before = plain(&t.visible(20, 3, &mut scroll, theme));
        assert_eq!(before, ["line 5", "line 6", "line 7"]);
        quiet_lines(&mut t, 10..13);
        // A streaming answer grows too: a blank separator and two lines.
        t.text_delta("streamed\n\nmore");
        let after = plain(&t.visible(20, 3, &mut scroll, theme));
        assert_eq!(after, before, "the lines being read did not move");
        assert_eq!(scroll, 2 + 3 + 4);
        assert_eq!(t.new_lines(), 7);
        // More of the same answer: the count keeps growing, the view stays.
        t.text_delta(" and more\n\nlast");
        assert_eq!(plain(&t.visible(20, 3, &mut scroll, theme)), before);
        assert_eq!(t.new_lines(), 9);
        // The user's own scrolling still moves the view, from the anchored place.
        scroll -= 1;
        assert_eq!(
            plain(&t.visible(20, 3, &mut scroll, theme)),
            ["line 6", "line 7", "line 8"]
        );
        // Back at the bottom it follows new output again, and the marker count resets.
        scroll = 0;
        t.visible(20, 3, &mut scroll, theme);
        assert_eq!(t.new_lines(), 0);
        quiet_lines(&mut t, 13..14);
        assert_eq!(
            plain(&t.visible(20, 3, &mut scroll, theme))
                .last()
                .map(String::as_str),
            Some("line 13")
        );
        assert_eq!(scroll, 0);
    }

    #[test]
    fn new_lines_never_exceed_what_is_below_the_view() {
        let theme = Theme::plain();
        let mut t = Transcript::default();
        quiet_lines(&mut t, 0..10);
        let mut scroll = 1;
        t.visible(20, 3, &mut scroll, theme);
        quiet_lines(&mut t, 10..15);
        t.visible(20, 3, &mut scroll, theme);
        assert_eq!((scroll, t.new_lines()), (6, 5));
        // Scrolling down past the new lines shows them: fewer are left unseen.
        scroll = 2;
        t.visible(20, 3, &mut scroll, theme);
        assert_eq!(t.new_lines(), 2);
    }
}
