//! Tool calls as compact cards: tool, target, status (a command that exited non-zero says
//! "exit N", read from the bash tool's "exit code: N" line), duration, the change a file
//! tool makes as a coloured diff, and the first lines of output, folded.

use atto_protocol::{ToolCallStatus, ToolKind};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::duration;
use crate::highlight::diff_style;
use crate::view::Theme;
use crate::view::text::{sanitize, truncate, wrap};

/// Output lines of a tool card shown while folded.
const OUTPUT_FOLD: usize = 4;
/// Diff lines of a tool card shown while folded.
const DIFF_FOLD: usize = 12;

/// A tool call as a compact card.
#[derive(Debug, Clone)]
pub(crate) struct ToolCard {
    pub call_id: String,
    pub name: String,
    /// What the tool does, as it describes itself (commands are `Execute`).
    pub kind: ToolKind,
    /// Path or command: what the call acts on.
    pub target: String,
    /// For file edits: the change as diff lines (`+`, `-`, ` `, `@@`).
    pub diff: Vec<String>,
    /// `None` while running.
    pub status: Option<ToolCallStatus>,
    pub duration_ms: u64,
    pub output: Vec<String>,
    pub sandboxed: Option<bool>,
    pub expanded: bool,
}

impl ToolCard {
    pub fn new(call_id: &str, name: &str, kind: ToolKind, arguments: &Value) -> ToolCard {
        ToolCard {
            call_id: call_id.to_owned(),
            name: sanitize(name).into_owned(),
            kind,
            target: sanitize(&call_target(arguments)).into_owned(),
            diff: edit_diff(arguments),
            status: None,
            duration_ms: 0,
            output: Vec::new(),
            sandboxed: None,
            expanded: false,
        }
    }

    pub(super) fn foldable(&self) -> bool {
        self.output.len() > OUTPUT_FOLD || self.diff.len() > DIFF_FOLD
    }
}

/// The first line of the bash tool's result: "exit code: 127", "exit code: 137 (killed by
/// signal 9)", "exit code: unknown".
const EXIT_MARKER: &str = "exit code: ";

/// A command that ran but exited non-zero: "exit 127" ("exit ?" when the code is not
/// known). `None` for other tools and for exit 0, which read "ok".
fn failed_exit(card: &ToolCard) -> Option<String> {
    if card.kind != ToolKind::Execute || card.status != Some(ToolCallStatus::Ok) {
        return None;
    }
    let rest = card.output.first()?.strip_prefix(EXIT_MARKER)?;
    let code = rest.split_whitespace().next().unwrap_or("");
    match code.parse::<i64>() {
        Ok(0) => None,
        Ok(code) => Some(format!("exit {code}")),
        Err(_) => Some("exit ?".to_owned()),
    }
}

fn status_label(card: &ToolCard, theme: Theme) -> Span<'static> {
    if let Some(exit) = failed_exit(card) {
        return Span::styled(exit, theme.warn());
    }
    let (text, style) = match card.status {
        None => ("running…", theme.dim()),
        Some(ToolCallStatus::Ok) => ("ok", theme.ok()),
        Some(ToolCallStatus::Error) => ("error", theme.error()),
        Some(ToolCallStatus::InvalidArguments) => ("not run: invalid arguments", theme.error()),
        Some(ToolCallStatus::Cancelled) => ("cancelled", theme.warn()),
        Some(ToolCallStatus::Denied) => ("denied", theme.error()),
        Some(ToolCallStatus::Queued) => ("queued for approval", theme.warn()),
    };
    Span::styled(text, style)
}

pub(super) fn render_card(
    card: &ToolCard,
    width: usize,
    theme: Theme,
    out: &mut Vec<Line<'static>>,
) {
    let mut head = vec![
        Span::styled("● ", theme.marker()),
        Span::styled(card.name.clone(), theme.tool()),
    ];
    if !card.target.is_empty() {
        head.push(Span::raw(format!(" {}", card.target)));
    }
    head.push(Span::styled(" · ", theme.dim()));
    head.push(status_label(card, theme));
    if card.status.is_some() {
        head.push(Span::styled(
            format!(" · {}", duration(card.duration_ms)),
            theme.dim(),
        ));
    }
    if card.sandboxed == Some(false) {
        head.push(Span::styled(" · unsandboxed", theme.warn()));
    }
    out.extend(wrap(&head, width, &[], &[Span::raw("  ")]));
    let fold = |len: usize, limit: usize| if card.expanded { len } else { len.min(limit) };
    let shown = fold(card.diff.len(), DIFF_FOLD);
    for line in &card.diff[..shown] {
        let spans = [Span::styled(line.clone(), diff_style(line, theme))];
        out.extend(wrap(&spans, width, &[Span::raw("  ")], &[Span::raw("  ")]));
    }
    more(card.diff.len() - shown, theme, out);
    let shown = fold(card.output.len(), OUTPUT_FOLD);
    let gutter = [Span::styled("  │ ", theme.marker())];
    for line in &card.output[..shown] {
        let spans = [Span::styled(line.clone(), theme.dim())];
        out.extend(wrap(&spans, width, &gutter, &gutter));
    }
    more(card.output.len() - shown, theme, out);
}

fn more(hidden: usize, theme: Theme, out: &mut Vec<Line<'static>>) {
    if hidden > 0 {
        out.push(Line::from(Span::styled(
            format!("  … {hidden} more lines (Ctrl-O)"),
            theme.dim(),
        )));
    }
}

/// The most telling argument of a call: the command, path, pattern or URL; else the
/// arguments as compact JSON.
fn call_target(arguments: &Value) -> String {
    let pick = ["command", "path", "pattern", "query", "url"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(Value::as_str));
    let text = match (pick, arguments) {
        (Some(s), _) => s.to_owned(),
        (None, Value::String(raw)) => raw.clone(),
        (None, Value::Object(map)) if map.is_empty() => String::new(),
        (None, other) => other.to_string(),
    };
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let more = lines.count();
    let first = truncate(first, 160);
    if more > 0 {
        format!("{first} (+{more} lines)")
    } else {
        first
    }
}

/// The change a file tool's arguments describe (`atto_present::file_change`), as diff lines.
fn edit_diff(args: &Value) -> Vec<String> {
    use atto_present::file_change::{self, ArgsChange};
    match file_change::of(args) {
        Some(ArgsChange::Write(content)) => {
            sanitize(content).lines().map(|l| format!("+{l}")).collect()
        }
        Some(ArgsChange::Replace(pairs)) => {
            let many = pairs.len() > 1;
            let mut out = Vec::new();
            for (i, (old, new)) in pairs.iter().enumerate() {
                if many {
                    out.push(format!("@@ edit {} of {} @@", i + 1, pairs.len()));
                }
                out.extend(line_diff(&sanitize(old), &sanitize(new)));
            }
            out
        }
        None => Vec::new(),
    }
}

/// A line diff of two snippets, every line kept (snippets are small).
pub(crate) fn line_diff(old: &str, new: &str) -> Vec<String> {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(old, new);
    diff.iter_all_changes()
        .map(|change| {
            let sign = match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            let text = change.value();
            format!("{sign}{}", text.strip_suffix('\n').unwrap_or(text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::text::plain;
    use serde_json::json;

    #[test]
    fn cards_fold_long_output_and_diff_edits() {
        let args = json!({"path": "a.rs", "old_string": "a\nb\n", "new_string": "a\nc\n"});
        let mut card = ToolCard::new("1", "edit_file", ToolKind::Edit, &args);
        assert_eq!(card.diff, [" a", "-b", "+c"]);
        card.status = Some(ToolCallStatus::Ok);
        card.output = (0..9).map(|i| format!("out {i}")).collect();
        let mut lines = Vec::new();
        render_card(&card, 60, Theme::plain(), &mut lines);
        let lines = plain(&lines);
        assert_eq!(lines[0], "● edit_file a.rs · ok · 0 ms");
        assert_eq!(
            lines.last().map(String::as_str),
            Some("  … 5 more lines (Ctrl-O)")
        );
    }

    fn command_card(output: &[&str]) -> String {
        let mut card = ToolCard::new(
            "1",
            "bash",
            ToolKind::Execute,
            &json!({"command": "pytest"}),
        );
        card.status = Some(ToolCallStatus::Ok);
        card.output = output.iter().map(|l| (*l).to_owned()).collect();
        let mut lines = Vec::new();
        render_card(&card, 60, Theme::plain(), &mut lines);
        plain(&lines).swap_remove(0)
    }

    #[test]
    fn a_command_that_exits_non_zero_shows_its_exit_status() {
        let table = [
            (
                &["exit code: 127", "sh: pytest: not found"][..],
                "● bash pytest · exit 127 · 0 ms",
            ),
            (
                &["exit code: 137 (killed by signal 9)"][..],
                "● bash pytest · exit 137 · 0 ms",
            ),
            (&["exit code: unknown"][..], "● bash pytest · exit ? · 0 ms"),
            (&["exit code: 0", "ok"][..], "● bash pytest · ok · 0 ms"),
            // Output that is not the bash tool's marks nothing.
            (&["collected 3 items"][..], "● bash pytest · ok · 0 ms"),
        ];
        for (output, head) in table {
            assert_eq!(command_card(output), head, "{output:?}");
        }
    }

    #[test]
    fn the_exit_status_is_drawn_as_a_warning() {
        let mut card = ToolCard::new("1", "bash", ToolKind::Execute, &json!({"command": "false"}));
        card.status = Some(ToolCallStatus::Ok);
        card.output = vec!["exit code: 1".to_owned()];
        let theme = Theme::color();
        let mut lines = Vec::new();
        render_card(&card, 60, theme, &mut lines);
        let span = lines[0]
            .spans
            .iter()
            .find(|s| s.content == "exit 1")
            .map(|s| s.style);
        assert_eq!(span, Some(theme.warn()));
    }
}
