//! The learning dialog, drawn over the transcript like the other dialogs: a proposed
//! learning (kind, the lesson, its details, who proposed it and how sure they were) and the
//! keys that decide it — y validate, n reject, s skip for now.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use atto_protocol::Learning;

use crate::app::App;
use crate::view::Theme;
use crate::view::text::{sanitize, wrap};

/// Lines of details shown at most.
const DETAIL_LINES: usize = 6;

/// Draws the proposal `app.learning_review()` names, centred in `area`.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(learning) = app.learning_review() else {
        return;
    };
    if area.width < 4 || area.height < 3 {
        return;
    }
    let theme = app.theme();
    let outer_w = area.width.min(90);
    let width = usize::from(outer_w - 2).max(1);
    let mut body = lesson(learning, width, theme);
    let tail = facts_and_keys(app, learning, width, theme);
    // On a short screen the lesson gives way before the keys do.
    let room = usize::from(area.height - 2);
    body.truncate(room.saturating_sub(tail.len()).max(1));
    body.extend(tail);
    if body.len() > room {
        let cut = body.len() - room;
        body.drain(..cut.min(body.len().saturating_sub(1)));
    }
    let title = Line::from(vec![
        Span::styled(" LEARN ", theme.risk("SAFE")),
        Span::raw(format!(
            " keep learning #{} ({})? ",
            learning.id,
            learning.kind.label()
        )),
    ]);
    super::popup(frame, area, outer_w, title, body, theme);
}

/// The lesson and its details (the first few, with where to read the rest).
fn lesson(learning: &Learning, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut body = wrap(
        &[Span::styled(
            sanitize(&learning.description).into_owned(),
            theme.heading(),
        )],
        width,
        &[],
        &[],
    );
    if !learning.details.is_empty() {
        body.push(Line::default());
        let details: Vec<Line<'static>> = learning
            .details
            .lines()
            .flat_map(|l| wrap(&[Span::raw(sanitize(l).into_owned())], width, &[], &[]))
            .collect();
        let cut = details.len() > DETAIL_LINES;
        body.extend(details.into_iter().take(DETAIL_LINES));
        if cut {
            body.push(Line::from(Span::styled(
                format!("… /learnings show {} shows it all", learning.id),
                theme.dim(),
            )));
        }
    }
    body
}

/// Who proposed it, how sure they were and how many more wait, then the keys that decide.
fn facts_and_keys(
    app: &App,
    learning: &Learning,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let mut tail = vec![Line::default()];
    let mut facts = format!(
        "confidence {:.2} · proposed by {}",
        learning.confidence,
        learning.source.as_str().replace('_', " ")
    );
    if let Some(what) = &learning.source_ref {
        facts.push_str(&format!(" ({what})"));
    }
    let waiting = app.learning_reviews_waiting();
    if waiting > 1 {
        facts.push_str(&format!(" · {} more waiting", waiting - 1));
    }
    tail.extend(wrap(
        &[Span::styled(sanitize(&facts).into_owned(), theme.dim())],
        width,
        &[],
        &[],
    ));
    let key = |k: &'static str| Span::styled(k, theme.key());
    let legend = [
        key("y"),
        Span::raw(" validate  "),
        key("n"),
        Span::raw(" reject  "),
        key("s"),
        Span::raw(" skip for now"),
    ];
    tail.extend(wrap(&legend, width, &[], &[]));
    tail
}
