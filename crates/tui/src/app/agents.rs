//! Subagents as the session reports them: each child's facts (from `subagent_started`,
//! `subagent_progress`, `subagent_finished` and the `/agents` answer), the activity lines
//! its progress events carried, its report once it ended, and which one the agents panel
//! has selected or opened. A started or finished child also gets a line in the transcript.
//!
//! The TUI never sees a child's own conversation: the "transcript" the panel opens is what
//! reached this front end (its activity and its report), and says so.

use atto_protocol::{Event, SubagentInfo};

use super::{App, Panel};
use crate::transcript::{Kind, SubagentNote};
use crate::view::text::sanitize;

/// Activity lines kept per subagent; older ones are counted, not kept.
const MAX_ACTIVITY: usize = 200;

/// One subagent as this front end knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Subagent {
    /// Its facts as last reported (tokens, time, status).
    pub info: SubagentInfo,
    /// Files it may write (writing roles only).
    pub files: Vec<String>,
    /// What it did, oldest first: one line per tool call it started (`bash: pytest -q`).
    pub activity: Vec<String>,
    /// Activity lines dropped to keep `activity` at its cap.
    pub activity_dropped: usize,
    /// Why atto stopped it, when it did not finish by itself.
    pub forced_stop: Option<String>,
    /// Files it changed, from the checkpoints.
    pub files_modified: Vec<String>,
    /// The closure report, once it ended.
    pub report: Option<String>,
}

impl Subagent {
    fn new(info: SubagentInfo) -> Subagent {
        Subagent {
            info,
            files: Vec::new(),
            activity: Vec::new(),
            activity_dropped: 0,
            forced_stop: None,
            files_modified: Vec::new(),
            report: None,
        }
    }

    /// Still working.
    pub fn running(&self) -> bool {
        self.info.status == "running"
    }
}

/// The id as shown: the end of a v7 uuid tells siblings apart (the line session's too).
pub fn short_id(id: &str) -> &str {
    id.get(id.len().saturating_sub(8)..).unwrap_or(id)
}

impl App {
    /// Subagent events; `None` for other events.
    pub(super) fn agent_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::SubagentStarted { agent, files } => {
                let child = self.agent_entry(agent);
                child.files = files.iter().map(|f| sanitize(f).into_owned()).collect();
                self.push(Kind::Subagent(SubagentNote::started(agent, files)));
            }
            Event::SubagentProgress {
                id,
                tokens_used,
                budget_tokens,
                elapsed_ms,
                activity,
            } => {
                let child = self.agents.iter_mut().find(|a| a.info.id == *id)?;
                child.info.tokens_used = *tokens_used;
                child.info.budget_tokens = *budget_tokens;
                child.info.elapsed_ms = *elapsed_ms;
                if let Some(line) = activity {
                    if child.activity.len() == MAX_ACTIVITY {
                        child.activity.remove(0);
                        child.activity_dropped += 1;
                    }
                    child.activity.push(sanitize(line).into_owned());
                }
            }
            Event::SubagentFinished {
                agent,
                forced_stop,
                files_modified,
                report,
                ..
            } => {
                let child = self.agent_entry(agent);
                child.forced_stop = forced_stop.as_deref().map(|s| sanitize(s).into_owned());
                child.files_modified = files_modified
                    .iter()
                    .map(|f| sanitize(f).into_owned())
                    .collect();
                child.report = Some(sanitize(report).into_owned());
                // Its question, if one still shows, answers nothing now.
                if self
                    .approval
                    .as_ref()
                    .and_then(|d| d.request.subagent.as_ref())
                    .is_some_and(|tag| tag.id == agent.id)
                {
                    self.approval = None;
                }
                self.push(Kind::Subagent(SubagentNote::finished(
                    agent,
                    forced_stop.as_deref(),
                )));
            }
            Event::SubagentList { agents } => {
                for agent in agents {
                    self.agent_entry(agent);
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// The subagent `info` names, its facts replaced by `info`'s; added when new.
    fn agent_entry(&mut self, info: &SubagentInfo) -> &mut Subagent {
        let mut info = info.clone();
        info.task = sanitize(&info.task).into_owned();
        info.model = sanitize(&info.model).into_owned();
        info.status = sanitize(&info.status).into_owned();
        let at = match self.agents.iter().position(|a| a.info.id == info.id) {
            Some(at) => {
                self.agents[at].info = info;
                at
            }
            None => {
                self.agents.push(Subagent::new(info));
                self.agents.len() - 1
            }
        };
        &mut self.agents[at]
    }

    /// Every subagent of the session, as a tree: each child right below its parent, in
    /// the order they started.
    pub fn agents(&self) -> Vec<&Subagent> {
        let known = |id: &str| self.agents.iter().any(|a| a.info.id == id);
        let mut out = Vec::with_capacity(self.agents.len());
        let mut stack: Vec<&Subagent> = self
            .agents
            .iter()
            .filter(|a| !known(&a.info.parent))
            .rev()
            .collect();
        while let Some(agent) = stack.pop() {
            out.push(agent);
            stack.extend(
                self.agents
                    .iter()
                    .filter(|a| a.info.parent == agent.info.id && a.info.id != agent.info.id)
                    .rev(),
            );
        }
        out
    }

    /// How many subagents are still working.
    pub fn agents_running(&self) -> usize {
        self.agents.iter().filter(|a| a.running()).count()
    }

    /// The row selected in the agents panel (an index into `agents()`).
    pub fn agent_selected(&self) -> usize {
        self.agent_selected.min(self.agents.len().saturating_sub(1))
    }

    /// Moves the agents panel's selection by `delta` rows (positive: down).
    pub fn select_agent(&mut self, delta: i32) {
        let last = self.agents.len().saturating_sub(1);
        self.agent_selected = super::add(self.agent_selected(), delta).min(last);
        self.follow_selection = true;
    }

    /// Opens the selected subagent's transcript in the panel; false when there is none.
    pub fn open_agent(&mut self) -> bool {
        let Some(id) = self
            .agents()
            .get(self.agent_selected())
            .map(|a| a.info.id.clone())
        else {
            return false;
        };
        self.agent_open = Some(id);
        self.panel = Some(Panel::Agent);
        true
    }

    /// The subagent whose transcript the panel shows.
    pub fn opened_agent(&self) -> Option<&Subagent> {
        let id = self.agent_open.as_deref()?;
        self.agents.iter().find(|a| a.info.id == id)
    }

    /// Esc on a panel or the keys overlay: the keys overlay closes first, a subagent's
    /// transcript goes back to the list, any other panel closes.
    pub fn close_overlay(&mut self) {
        if self.show_keys {
            self.show_keys = false;
        } else if self.panel == Some(Panel::Agent) {
            self.panel = Some(Panel::Agents);
            self.follow_selection = true;
        } else {
            self.panel = None;
        }
    }

    /// Whether the panel must scroll to the selected row at the next draw; clears it.
    pub(crate) fn take_follow_selection(&mut self) -> bool {
        std::mem::take(&mut self.follow_selection)
    }
}
