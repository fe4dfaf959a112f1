//! Subagents as text: started, what they do, how they ended (with the report of a
//! subagent of this session), and `/agents`.

use std::io::Write;

use atto_protocol::{Event, SubagentInfo};

use super::{TextRenderer, indent};
use atto_present::clean::visible;

/// The id as shown: the end of a v7 uuid tells siblings apart.
pub fn short(id: &str) -> &str {
    id.get(id.len().saturating_sub(8)..).unwrap_or(id)
}

/// One line for a subagent: who, doing what, tokens of budget, time, status.
pub fn line(a: &SubagentInfo) -> String {
    format!(
        "{}{} {:<9} {:<9} {}/{} tokens  {:.1} s  {}  {}",
        "  ".repeat(a.depth.saturating_sub(1) as usize),
        short(&a.id),
        a.role.as_str(),
        a.status,
        a.tokens_used,
        a.budget_tokens,
        std::time::Duration::from_millis(a.elapsed_ms).as_secs_f64(),
        a.cost_usd
            .map_or_else(|| "cost unknown".to_owned(), |c| format!("${c:.4}")),
        visible(&one_line(&a.task, 60)),
    )
}

impl<T: Write, P: Write> TextRenderer<T, P> {
    pub(super) fn write_agents(&mut self, event: &Event) -> std::io::Result<()> {
        self.end_text_line()?;
        match event {
            Event::SubagentStarted { agent, files } => {
                writeln!(
                    self.progress,
                    "subagent {} ({}, depth {}) started with {} tokens: {}{}",
                    short(&agent.id),
                    agent.role.as_str(),
                    agent.depth,
                    agent.budget_tokens,
                    visible(&one_line(&agent.task, 100)),
                    if files.is_empty() {
                        String::new()
                    } else {
                        format!(" (may change {})", visible(&files.join(", ")))
                    }
                )?;
            }
            Event::SubagentProgress {
                id,
                activity: Some(activity),
                ..
            } => {
                writeln!(
                    self.progress,
                    "  subagent {}: {}",
                    short(id),
                    visible(activity)
                )?;
            }
            Event::SubagentFinished {
                agent,
                forced_stop,
                report,
                ..
            } => {
                writeln!(
                    self.progress,
                    "subagent {} {}{}: {} of {} tokens",
                    short(&agent.id),
                    agent.status,
                    forced_stop
                        .as_deref()
                        .map_or_else(String::new, |why| format!(" ({})", visible(why))),
                    agent.tokens_used,
                    agent.budget_tokens,
                )?;
                // The report a person asked for (or the session's own subagent produced).
                if agent.depth == 1 {
                    writeln!(self.progress, "{}", indent(&visible(report)))?;
                }
            }
            Event::SubagentList { agents } if agents.is_empty() => {
                writeln!(self.progress, "no subagents in this session")?;
            }
            Event::SubagentList { agents } => {
                for agent in agents {
                    writeln!(self.progress, "{}", line(agent))?;
                }
            }
            _ => {}
        }
        self.progress.flush()
    }
}

/// `text` on one line, cut at `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}
