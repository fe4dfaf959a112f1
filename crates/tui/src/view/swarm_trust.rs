//! The question `/swarm` asks before a swarm file that is not trusted is used, drawn over
//! the transcript like the other dialogs: what is not trusted and where it comes from, the
//! command its workers would start with, the whole text that `y` trusts (as `atto trust`
//! would), and the two answers. Long text gives way before the legend, and says so.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::view::text::wrap;

/// Draws the trust question centred in `area` while it is open.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(question) = app.swarm_trust_question() else {
        return;
    };
    if area.width < 4 || area.height < 3 {
        return;
    }
    let theme = app.theme();
    let outer_w = area.width.min(100);
    let inner_w = usize::from(outer_w - 2).max(1);
    let mut body: Vec<Line<'static>> = Vec::new();
    for line in question {
        body.extend(wrap(&[Span::raw(line.clone())], inner_w, &[], &[]));
    }
    body.push(Line::default());
    let key = |k: &'static str| Span::styled(k, theme.key());
    let legend = wrap(
        &[
            key("y"),
            Span::raw(" trust it as it is now and start  "),
            key("n"),
            Span::raw("/"),
            key("Esc"),
            Span::raw(" start nothing"),
        ],
        inner_w,
        &[],
        &[],
    );
    let room = usize::from(area.height - 2);
    if body.len() + legend.len() > room {
        body.truncate(room.saturating_sub(legend.len() + 1));
        body.push(Line::from(Span::styled(
            "  … (the rest: read the file before answering)",
            theme.dim(),
        )));
    }
    body.extend(legend);
    body.truncate(room.max(1));
    let title = Line::from(vec![
        Span::styled(" TRUST ", theme.risk("WARN")),
        Span::raw(" Trust this swarm file? "),
    ]);
    super::popup(frame, area, outer_w, title, body, theme);
}
