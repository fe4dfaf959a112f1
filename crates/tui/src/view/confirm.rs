//! The question Tab asks before YOLO, drawn over the transcript like the other dialogs:
//! what YOLO gives up, and the three ways out.

use atto_protocol::{AgentMode, PermissionMode};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::App;
use crate::view::text::wrap;

/// Draws the YOLO question centred in `area` while it is open.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    if !app.yolo_confirm_open() || area.width < 4 || area.height < 3 {
        return;
    }
    let theme = app.theme();
    let outer_w = area.width.min(60);
    let inner_w = usize::from(outer_w - 2).max(1);
    let warning = [Span::raw(
        "YOLO runs every command and edit without asking, and commands run without the OS sandbox.",
    )];
    let mut body = wrap(&warning, inner_w, &[], &[]);
    body.push(Line::default());
    let key = |k: &'static str| Span::styled(k, theme.key());
    let legend = [
        key("y"),
        Span::raw(" enter YOLO  "),
        key("Tab"),
        Span::raw(" skip to PLAN  "),
        key("Esc"),
        Span::raw(" stay in BUILD"),
    ];
    body.extend(wrap(&legend, inner_w, &[], &[]));
    let title = Line::from(vec![
        Span::styled(
            " YOLO ",
            theme.mode_badge(AgentMode::Build, PermissionMode::Yolo),
        ),
        Span::raw(" enter YOLO? "),
    ]);
    super::popup(frame, area, outer_w, title, body, theme);
}
