//! The TUI's state: folds `Event`s into what the screen shows. No I/O, no terminal.
//!
//! Owns the transcript, the status-line facts (usage, goals, pending-plan count), the data
//! behind each panel (the structured planner's task plan among them, steps kept live by
//! the step events; the subagents and the agents panel's selection, `agents`), the
//! approval or plan decision being asked, and the scroll positions of the transcript, the
//! approval dialog and the open panel; what Tab does to the mode (`mode`) and what is
//! known of the sandbox (`sandbox`). Key handling lives in `keys`; drawing in `view`.

mod agents;
mod calls;
mod changes;
mod learning;
mod mode;
mod notes;
mod planner;
mod reduce;
mod rewind;
mod sandbox;
mod steps;
mod swarm;

pub use agents::{Subagent, short_id};
pub(crate) use reduce::permission_name;
pub use rewind::{RewindDialog, SCOPES, scope_label};
pub use sandbox::SandboxState;
pub use swarm::{Intervention, Phase, Retry, Swarm, SwarmBudget, SwarmTaskRow};

#[cfg(test)]
mod planner_tests;
#[cfg(test)]
mod tests;

use atto_protocol::{
    AgentMode, ApprovalRequest, CheckpointInfo, Goal, GrantInfo, PendingPlan, PermissionMode,
    ProposedChange, TaskPlan, ThreadInfo,
};

use crate::transcript::{Kind, Transcript};
use crate::view::Theme;

/// What the status line knows before any event: from the session's configuration.
#[derive(Debug, Clone)]
pub struct AppInfo {
    pub provider: String,
    pub model: String,
    pub mode: AgentMode,
    pub permission: PermissionMode,
    /// Whether start-up found an OS sandbox it could use. Only `false` is believed (the
    /// status line says "sandbox off"); `true` shows "sandbox ?" until the session says.
    pub sandbox: bool,
    pub workspace: String,
    /// The file or command a proposed change is about, read from its arguments: the
    /// binary passes the engine's reading, which knows every tool's arguments.
    pub change_target: fn(&ProposedChange) -> String,
}

/// A side or bottom panel; each shows the same data its slash command answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    /// The pending plan (`/show-plan`).
    Plan,
    /// Goals and tasks (`/goals`).
    Tasks,
    /// The thread tree (`/threads`).
    Threads,
    /// File checkpoints (`/restore list`).
    Checkpoints,
    /// Grants (`/grants`).
    Grants,
    /// The subagents (`/agents`), one selectable row each.
    Agents,
    /// One subagent's transcript as far as this front end has it (Enter in `Agents`).
    Agent,
    /// The session's swarm: its task tree, workers, retries and budget (`/swarm`, F3).
    Swarm,
}

/// An approval being asked, drawn as an overlay.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalDialog {
    pub request: ApprovalRequest,
    /// `Some` while the user types a "no" reason or edits the command.
    pub input: Option<DialogInput>,
    /// The swarm task whose worker asks (answered with `SwarmInput::Approval`, yes or no
    /// only); `None` for the session's own calls.
    pub swarm_task: Option<String>,
}

/// Text typed inside the approval dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogInput {
    /// The reason told to the model with a "no".
    Reason(String),
    /// The command to run instead.
    Edit(String),
}

/// A plan step waiting for the user's choice (`plan_decision_required`), drawn as an
/// overlay. Answer with `Op::PlanDecision` built from `App::decision_choice`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionDialog {
    /// The step's number.
    pub number: u32,
    /// What to decide.
    pub question: String,
    /// The choices, in the order offered.
    pub options: Vec<String>,
    /// Index into `options` of the highlighted choice.
    pub selected: usize,
}

/// Tokens and cost summed over the session's `Usage` events.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    /// Every token billed: input, output, cache reads and writes.
    pub tokens: u64,
    /// Dollars of the calls whose price is known.
    pub cost_usd: f64,
    /// Whether some call's price was unknown.
    pub cost_unknown: bool,
    /// Prompt size of the last call: how much context the conversation fills.
    pub context_tokens: u64,
    /// The context window of the model in use, once the session said it (`None`: unknown).
    pub context_window: Option<u64>,
}

/// Everything the screen shows.
#[derive(Debug)]
pub struct App {
    pub approval: Option<ApprovalDialog>,
    /// A plan step's decision being asked; set on `PlanDecisionRequired`, cleared when a
    /// step starts, completes or fails, or the plan or turn ends.
    pub decision: Option<DecisionDialog>,
    /// The rewind picker (Esc Esc, `/rewind`); set on `PromptList`.
    pub rewind: Option<RewindDialog>,
    pub panel: Option<Panel>,
    pub show_keys: bool,
    /// The "enter YOLO?" question is showing (`mode`).
    yolo_confirm: bool,
    /// What the session has shown of its sandbox (`sandbox`).
    sandbox: SandboxState,
    info: AppInfo,
    theme: Theme,
    transcript: Transcript,
    totals: Totals,
    effort: Option<String>,
    running: bool,
    goals: Vec<Goal>,
    current_goal: Option<String>,
    plan: Option<PendingPlan>,
    previews: Vec<String>,
    /// Open changes of the pending plan; counted from events when the plan itself is not
    /// known yet.
    pending_changes: usize,
    threads: Vec<ThreadInfo>,
    checkpoints: Vec<CheckpointInfo>,
    grants: Vec<GrantInfo>,
    /// Subagents in the order they started (`agents`).
    agents: Vec<Subagent>,
    /// The agents panel's selected row, an index into `agents()`.
    agent_selected: usize,
    /// The subagent whose transcript `Panel::Agent` shows.
    agent_open: Option<String>,
    /// The agents panel scrolls to its selection at the next draw.
    follow_selection: bool,
    /// The structured planner's current task plan, steps updated live by step events.
    task_plan: Option<TaskPlan>,
    /// The step whose decision the engine waits for, also after the dialog was dismissed.
    decision_waiting: Option<u32>,
    /// The step running now and the tokens its turn used so far.
    step_usage: Option<(u32, u64)>,
    /// The swarm started with `/swarm "task"`, running or ended (`swarm`).
    swarm: Option<Swarm>,
    /// Proposed learnings waiting for the learning dialog (`learning`).
    reviews: learning::ReviewQueue,
    /// Lines scrolled up from the bottom; 0 follows new output.
    scroll: usize,
    /// Lines the approval dialog is scrolled down.
    dialog_scroll: usize,
    /// The panel last scrolled and how many lines down; another panel starts at the top.
    panel_scroll: (Option<Panel>, usize),
    page: u16,
}

impl App {
    /// A fresh screen; the theme follows `NO_COLOR`.
    pub fn new(info: AppInfo) -> App {
        App {
            approval: None,
            decision: None,
            rewind: None,
            panel: None,
            show_keys: false,
            yolo_confirm: false,
            sandbox: SandboxState::from_probe(info.sandbox, info.permission),
            info,
            theme: Theme::from_env(),
            transcript: Transcript::default(),
            totals: Totals::default(),
            effort: None,
            running: false,
            goals: Vec::new(),
            current_goal: None,
            plan: None,
            previews: Vec::new(),
            pending_changes: 0,
            threads: Vec::new(),
            checkpoints: Vec::new(),
            grants: Vec::new(),
            agents: Vec::new(),
            agent_selected: 0,
            agent_open: None,
            follow_selection: false,
            task_plan: None,
            decision_waiting: None,
            step_usage: None,
            swarm: None,
            reviews: learning::ReviewQueue::default(),
            scroll: 0,
            dialog_scroll: 0,
            panel_scroll: (None, 0),
            page: 10,
        }
    }

    /// Replaces the theme (tests, or a front end that knows better than the environment).
    pub fn set_theme(&mut self, theme: Theme) {
        if self.theme != theme {
            self.theme = theme;
            self.transcript.invalidate();
        }
    }

    /// The theme in use.
    pub fn theme(&self) -> Theme {
        self.theme
    }

    /// The prompt the user sent (the engine does not echo it).
    pub fn push_user(&mut self, text: &str) {
        self.push(Kind::User(crate::view::text::sanitize(text).into_owned()));
    }

    /// A local message: unknown slash command, "queued", help text.
    pub fn push_notice(&mut self, text: &str) {
        self.push(Kind::Notice(crate::view::text::sanitize(text).into_owned()));
    }

    /// `/help`: the commands and the keys, both in the transcript, where they wrap with
    /// their columns kept and nothing is drawn over them.
    pub fn push_help(&mut self) {
        let commands = atto_present::commands::help();
        let text = format!(
            "commands:\n{}\n\nkeys:\n{}",
            commands.trim_end(),
            crate::view::keys_text()
        );
        self.push_notice(&text);
    }

    /// A local error.
    pub fn push_error(&mut self, text: &str) {
        self.push(Kind::Error(crate::view::text::sanitize(text).into_owned()));
    }

    fn push(&mut self, kind: Kind) {
        self.transcript.push(kind);
    }

    /// Between `TurnStarted` and `TurnCompleted`.
    pub fn turn_running(&self) -> bool {
        self.running
    }

    /// The agent mode now.
    pub fn mode(&self) -> AgentMode {
        self.info.mode
    }

    /// The permission mode now.
    pub fn permission(&self) -> PermissionMode {
        self.info.permission
    }

    /// The session facts the status line shows.
    pub fn info(&self) -> &AppInfo {
        &self.info
    }

    /// Tokens and cost so far.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Reasoning effort shown in the status line.
    pub fn set_effort(&mut self, effort: Option<String>) {
        self.effort = effort;
    }

    /// Reasoning effort, if set.
    pub fn effort(&self) -> Option<&str> {
        self.effort.as_deref()
    }

    /// Open changes waiting in the pending plan.
    pub fn pending_changes(&self) -> usize {
        self.pending_changes
    }

    /// The pending plan and its previews, as `/show-plan` last answered (updated since).
    pub fn plan(&self) -> (Option<&PendingPlan>, &[String]) {
        (self.plan.as_ref(), &self.previews)
    }

    /// The goals and the current one's id.
    pub fn goals(&self) -> (&[Goal], Option<&str>) {
        (&self.goals, self.current_goal.as_deref())
    }

    /// The current goal, if one is open.
    pub fn current_goal(&self) -> Option<&Goal> {
        let id = self.current_goal.as_deref()?;
        self.goals.iter().find(|g| g.id == id && g.status.is_open())
    }

    /// Threads as `/threads` last answered.
    pub fn threads(&self) -> &[ThreadInfo] {
        &self.threads
    }

    /// Checkpoints as `/restore list` last answered.
    pub fn checkpoints(&self) -> &[CheckpointInfo] {
        &self.checkpoints
    }

    /// Grants as `/grants` last answered.
    pub fn grants(&self) -> &[GrantInfo] {
        &self.grants
    }

    /// Scrolls by `delta` lines, positive going up (towards older output): the approval
    /// dialog while one is open, else the open panel, else the transcript.
    pub fn scroll(&mut self, delta: i32) {
        if self.approval.is_some() {
            // In the dialog, "up" shows earlier lines of what would run.
            self.dialog_scroll = add(self.dialog_scroll, -delta);
            return;
        }
        if self.panel.is_some() {
            // In a panel, "up" shows its earlier lines; the offset counts from its top.
            let offset = add(*self.panel_scroll_mut(), -delta);
            *self.panel_scroll_mut() = offset;
            return;
        }
        self.scroll = add(self.scroll, delta);
    }

    /// Follows new output again.
    pub fn scroll_to_bottom(&mut self) {
        self.scroll = 0;
    }

    /// Lines the transcript is scrolled up from the bottom (0: following new output).
    pub fn scroll_offset(&self) -> usize {
        self.scroll
    }

    /// Lines of output that arrived below the view since the user scrolled up: the
    /// "↓ N new lines" marker.
    pub fn new_lines(&self) -> usize {
        if self.scroll == 0 {
            0
        } else {
            self.transcript.new_lines()
        }
    }

    /// The open panel's scroll offset (lines from its top); another panel starts at 0.
    pub(crate) fn panel_scroll_mut(&mut self) -> &mut usize {
        if self.panel_scroll.0 != self.panel {
            self.panel_scroll = (self.panel, 0);
        }
        &mut self.panel_scroll.1
    }

    /// The open panel's scroll offset, as last clamped by a draw.
    pub fn panel_scroll(&self) -> usize {
        if self.panel_scroll.0 == self.panel {
            self.panel_scroll.1
        } else {
            0
        }
    }

    /// The transcript viewport's height at the last draw, for PgUp/PgDn.
    pub fn page(&self) -> u16 {
        self.page
    }

    /// Expands or collapses the most recent folded tool output (or reasoning).
    pub fn toggle_fold(&mut self) {
        self.transcript.toggle_fold();
    }

    /// Number of transcript entries (for tests and memory checks).
    pub fn entries(&self) -> usize {
        self.transcript.len()
    }

    pub(crate) fn transcript_mut(&mut self) -> (&mut Transcript, &mut usize, Theme) {
        (&mut self.transcript, &mut self.scroll, self.theme)
    }

    pub(crate) fn dialog_scroll_mut(&mut self) -> &mut usize {
        &mut self.dialog_scroll
    }

    pub(crate) fn set_page(&mut self, page: u16) {
        self.page = page;
    }
}

fn add(value: usize, delta: i32) -> usize {
    if delta >= 0 {
        value.saturating_add(delta.unsigned_abs() as usize)
    } else {
        value.saturating_sub(delta.unsigned_abs() as usize)
    }
}
