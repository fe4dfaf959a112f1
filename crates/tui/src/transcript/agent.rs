//! Subagents in the transcript: one line when a child starts (who, its role, its budget,
//! its task) and one when it ends (how, tokens of budget, cost, time, and why atto
//! stopped it when it did). Nested children are indented by depth. What a child is doing
//! now and its report live in the agents panel (`/agents`), not here.

use atto_protocol::SubagentInfo;
use ratatui::text::{Line, Span};

use super::duration;
use crate::app::short_id;
use crate::status::tokens;
use crate::view::Theme;
use crate::view::text::{sanitize, wrap};

/// A subagent's start or end, as said at the time.
#[derive(Debug)]
pub(crate) struct SubagentNote {
    /// Short id.
    id: String,
    role: &'static str,
    depth: u32,
    moment: Moment,
}

#[derive(Debug)]
enum Moment {
    Started {
        budget: u64,
        task: String,
        files: Vec<String>,
    },
    Finished {
        status: String,
        tokens_used: u64,
        budget: u64,
        cost_usd: Option<f64>,
        elapsed_ms: u64,
        forced_stop: Option<String>,
    },
}

impl SubagentNote {
    pub fn started(agent: &SubagentInfo, files: &[String]) -> SubagentNote {
        SubagentNote::new(
            agent,
            Moment::Started {
                budget: agent.budget_tokens,
                task: one_line(&agent.task),
                files: files.iter().map(|f| sanitize(f).into_owned()).collect(),
            },
        )
    }

    pub fn finished(agent: &SubagentInfo, forced_stop: Option<&str>) -> SubagentNote {
        SubagentNote::new(
            agent,
            Moment::Finished {
                status: sanitize(&agent.status).into_owned(),
                tokens_used: agent.tokens_used,
                budget: agent.budget_tokens,
                cost_usd: agent.cost_usd,
                elapsed_ms: agent.elapsed_ms,
                forced_stop: forced_stop.map(one_line),
            },
        )
    }

    fn new(agent: &SubagentInfo, moment: Moment) -> SubagentNote {
        SubagentNote {
            id: sanitize(short_id(&agent.id)).into_owned(),
            role: agent.role.as_str(),
            depth: agent.depth,
            moment,
        }
    }
}

/// "$0.0012", or "cost unknown" when a price was not known (never $0).
pub(crate) fn cost(cost_usd: Option<f64>) -> String {
    cost_usd.map_or_else(|| "cost unknown".to_owned(), |c| format!("${c:.4}"))
}

/// How a subagent's status word is coloured.
pub(crate) fn status_style(status: &str, theme: Theme) -> ratatui::style::Style {
    match status {
        "running" => theme.user(),
        "completed" => theme.ok(),
        "failed" => theme.error(),
        _ => theme.warn(),
    }
}

pub(super) fn render(
    note: &SubagentNote,
    width: usize,
    theme: Theme,
    out: &mut Vec<Line<'static>>,
) {
    let indent = "  ".repeat(note.depth.saturating_sub(1) as usize);
    let lead = [Span::raw(indent.clone())];
    let hang = [Span::raw(format!("{indent}  "))];
    let who = Span::styled(format!("subagent {}", note.id), theme.tool());
    let role = Span::styled(format!(" ({})", note.role), theme.dim());
    match &note.moment {
        Moment::Started {
            budget,
            task,
            files,
        } => {
            let mut spans = vec![
                Span::styled("◇ ", theme.marker()),
                who,
                role,
                Span::styled(
                    format!(" started · {} tokens · ", tokens(*budget)),
                    theme.dim(),
                ),
                Span::raw(task.clone()),
            ];
            if !files.is_empty() {
                spans.push(Span::styled(
                    format!(" · may change {}", files.join(", ")),
                    theme.dim(),
                ));
            }
            out.extend(wrap(&spans, width, &lead, &hang));
        }
        Moment::Finished {
            status,
            tokens_used,
            budget,
            cost_usd,
            elapsed_ms,
            forced_stop,
        } => {
            let spans = [
                Span::styled("◆ ", theme.marker()),
                who,
                role,
                Span::raw(" "),
                Span::styled(status.clone(), status_style(status, theme)),
                Span::styled(
                    format!(
                        " · {} of {} tokens · {} · {}",
                        tokens(*tokens_used),
                        tokens(*budget),
                        cost(*cost_usd),
                        duration(*elapsed_ms)
                    ),
                    theme.dim(),
                ),
            ];
            out.extend(wrap(&spans, width, &lead, &hang));
            if let Some(why) = forced_stop {
                let spans = [Span::styled(
                    format!("stopped by atto: {why}"),
                    theme.warn(),
                )];
                out.extend(wrap(&spans, width, &hang, &hang));
            }
            if note.depth == 1 {
                let spans = [Span::styled(
                    "its report: /agents, then Enter on its row",
                    theme.dim(),
                )];
                out.extend(wrap(&spans, width, &hang, &hang));
            }
        }
    }
}

/// `text` cleaned and on one line.
fn one_line(text: &str) -> String {
    sanitize(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
