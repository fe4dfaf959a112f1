//! The session actor: owns a live conversation, takes `Op`s, runs turns, emits `Event`s.
//! This file builds a session and holds its state; the op loop (`ops`), a model turn
//! (`turn`), the message history (`history`), running a turn while ops arrive (`drive`),
//! the answers to ops between turns (`handlers`), the structured planner's side
//! (`planning`) and its steps run side by side (`parallel`) live in the modules below.

use std::path::PathBuf;
use std::sync::Arc;

use atto_llm::ModelClient;
use atto_policy::gate::{Grant, PermissionSetting};
use atto_protocol::{AgentMode, Event, Message, PermissionMode, ReasoningEffort};
use atto_store::Store;
use atto_tools::{Sandbox, ToolRegistry};
use tokio::sync::mpsc;

use crate::audit::Audit;
use crate::checkpoints::SessionCheckpoints;
use crate::correction::diagnosis::Tally;
use crate::gatekeeper::{GateSetup, Gatekeeper, GrantTable};
use crate::learning::{LearningHelpfulTool, Learnings, ProposeLearningTool};
use crate::limits::Limits;
use crate::plan_queue::PlanQueue;
use crate::prompt::{self, ProjectInstructions, PromptInputs};
use crate::recorder::Recorder;
use crate::subagents::{
    Approvals, CallAuthority, SessionTree, SharedAuthority, SpawnAgentTool, Spawner,
    SubagentSettings, TreePosition, budget,
};
use crate::threads::Threads;
use atto_planner::plan::Planner;
use atto_planner::plan::report::StepResultTool;
use atto_planner::work::{GoalsAndTasks, SharedGoalsAndTasks, WorkTool};
use atto_protocol::AgentHandle;

mod agents;
mod choose_model;
mod compaction;
mod configure;
mod drive;
mod external;
mod handlers;
mod history;
mod ops;
mod parallel;
mod planning;
mod rewind;
mod step_quality;
mod turn;

/// What a session is made of.
#[derive(Clone)]
pub struct SessionOptions {
    /// Session id, shown in events.
    pub session_id: String,
    /// Canonical workspace root.
    pub workspace: PathBuf,
    /// The model client (with retries applied).
    pub client: Arc<dyn ModelClient>,
    /// The tools offered to the model.
    pub tools: ToolRegistry,
    /// Per-turn bounds.
    pub limits: Limits,
    /// Project instructions to put in the system prompt.
    pub instructions: Vec<ProjectInstructions>,
    /// The permission mode (and codewhale's `never`).
    pub permission: PermissionSetting,
    /// Config rules and stored grants.
    pub grants: Vec<Grant>,
    /// The database for grants and the audit log; `None` runs without them (warned).
    pub store: Option<Store>,
    /// The OS sandbox for commands; `None` where the kernel offers none (then WARN
    /// commands always ask). Never applied in yolo mode.
    pub sandbox: Option<Arc<Sandbox>>,
    /// Trust mode at start: file tools may reach outside the workspace.
    pub trust: bool,
    /// Absolute directories whose writes always ask (atto's own config and data).
    pub protected_dirs: Vec<String>,
    /// The history of a resumed session; `None` starts a new session (recorded in the
    /// store when there is one).
    pub resume: Option<Vec<Message>>,
    /// The thread a resumed session continues in; `None` for its first thread.
    pub thread: Option<String>,
    /// The agent mode the session starts in.
    pub mode: AgentMode,
    /// File checkpoints of the workspace; `None` runs without them (said at start).
    pub checkpoints: Option<Arc<atto_checkpoint::Checkpoints>>,
    /// How the structured planner starts (`/auto-rollback` and `/auto-plan` change it).
    pub planner: atto_planner::plan::Settings,
    /// How long an approval waits for its answer before it counts as "no"; `None` waits
    /// as long as the session lives.
    pub approval_deadline: Option<std::time::Duration>,
    /// Exact commands the user allowed to re-run without the sandbox, unasked.
    pub unsandboxed_commands: Vec<String>,
    /// Said once the session has started (e.g. which saved modes a resume restored).
    pub start_notices: Vec<String>,
    /// Why `sandbox` is `None` outside yolo (the kernel's or the setup's words).
    pub sandbox_off_reason: Option<String>,
    /// How subagents are budgeted and bounded, with the session-wide caps.
    pub subagents: SubagentSettings,
    /// How turns choose their model (`/model`, `--model auto`).
    pub models: crate::models::ModelSettings,
    /// How the session recalls and proposes learnings.
    pub learning: crate::learning::LearningSettings,
    /// The context windows and when to compact.
    pub context: crate::context::ContextSettings,
    /// Tools that arrive while the session runs (MCP servers); `None`: built-ins only.
    pub external_tools: Option<Arc<dyn atto_tools::ToolSource>>,
}

/// Starts a session on the current tokio runtime and returns the handle to drive it.
pub fn spawn_session(options: SessionOptions) -> AgentHandle {
    spawn_in(options, None)
}

/// Starts a subagent's session in its parent's tree.
pub(crate) fn spawn_child(
    options: SessionOptions,
    tree: SessionTree,
    position: TreePosition,
) -> AgentHandle {
    spawn_in(options, Some((tree, position)))
}

/// The tree a new root session starts: the budget with its caps, and the template its
/// children are made from (taken before any session-specific tool is added).
fn new_tree(options: &mut SessionOptions) -> (SessionTree, TreePosition) {
    let settings = Arc::new(std::mem::take(&mut options.subagents));
    // Taken before the template: children read the tree's table, never a copy.
    let grants = GrantTable::new(std::mem::take(&mut options.grants), options.store.clone());
    let mut template = options.clone();
    template.resume = None;
    template.start_notices = Vec::new();
    let tree = SessionTree {
        budget: budget::Tree::new(settings.caps, &options.session_id),
        running: Arc::new(tokio::sync::Semaphore::new(settings.max_running.max(1))),
        settings,
        template: Arc::new(template),
        registry: Arc::default(),
        grants,
    };
    let position = TreePosition {
        node: options.session_id.clone(),
        depth: 0,
        parent: None,
        scope: None,
        tools: None,
    };
    (tree, position)
}

fn spawn_in(
    mut options: SessionOptions,
    in_tree: Option<(SessionTree, TreePosition)>,
) -> AgentHandle {
    let (tree, position) = match in_tree {
        Some(in_tree) => in_tree,
        None => new_tree(&mut options),
    };
    let models = crate::models::Models::new(
        std::mem::take(&mut options.models),
        Arc::clone(&options.client),
        tree.settings.connect.clone(),
    );
    // Every model call of every session in the tree is checked against its budget first.
    options.client = Arc::new(budget::Budgeted::new(
        Arc::clone(&options.client),
        Arc::clone(&tree.budget),
        position.node.clone(),
    ));
    let (op_tx, op_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    forward_source_events(&options, &ev_tx);
    let session = Session::new(options, tree, position, models, ev_tx);
    tokio::spawn(session.run(op_rx));
    AgentHandle::new(op_tx, ev_rx)
}

/// The external source's status events reach the front end of the first session that
/// takes them (the root).
fn forward_source_events(options: &SessionOptions, ev_tx: &mpsc::UnboundedSender<Event>) {
    if let Some(mut source_events) = options.external_tools.as_ref().and_then(|s| s.events()) {
        // Weak: the front end's event stream still ends when the session does.
        let forward = ev_tx.downgrade();
        tokio::spawn(async move {
            while let Some(event) = source_events.recv().await {
                let Some(sender) = forward.upgrade() else {
                    break;
                };
                if sender.send(event).is_err() {
                    break;
                }
            }
        });
    }
}

/// The session's goals and tasks and its learnings, with the tools that reach them and
/// `revert_turn` registered.
fn register_own_tools(
    options: &mut SessionOptions,
    current_turn: &Arc<std::sync::atomic::AtomicU32>,
    ev_tx: &mpsc::UnboundedSender<Event>,
) -> (SharedGoalsAndTasks, Arc<Learnings>) {
    let work: SharedGoalsAndTasks = Arc::new(tokio::sync::Mutex::new(GoalsAndTasks::new(
        options.store.clone(),
        options.session_id.clone(),
        ev_tx.clone(),
    )));
    for tool in WorkTool::all(&work) {
        options.tools.register(tool);
    }
    let learnings = Learnings::new(
        options.store.clone(),
        options.workspace.display().to_string(),
        options.session_id.clone(),
        options.learning,
        ev_tx.clone(),
    );
    if learnings.active() {
        options.tools.register(Arc::new(ProposeLearningTool {
            learnings: Arc::clone(&learnings),
        }));
        options.tools.register(Arc::new(LearningHelpfulTool {
            learnings: Arc::clone(&learnings),
        }));
    }
    if let Some(checkpoints) = &options.checkpoints {
        options
            .tools
            .register(Arc::new(crate::revert::RevertTurnTool::new(
                Arc::clone(checkpoints),
                Arc::clone(current_turn),
            )));
    }
    (work, learnings)
}

/// The session's authority as children read it and its spawner, with `spawn_agent`
/// offered while the tree may grow deeper; then a custom agent's tool list narrows every
/// tool, atto's own included.
fn offer_spawning(
    options: &mut SessionOptions,
    tree: &SessionTree,
    position: &TreePosition,
    approvals: &Approvals,
    ev_tx: &mpsc::UnboundedSender<Event>,
) -> (SharedAuthority, Arc<Spawner>) {
    let authority: SharedAuthority = Arc::new(std::sync::Mutex::new(CallAuthority {
        mode: options.mode,
        permission: options.permission,
        trust: options.trust,
    }));
    let spawner = Arc::new(Spawner {
        tree: tree.clone(),
        position: position.clone(),
        authority: Arc::clone(&authority),
        approvals: approvals.clone(),
        events: ev_tx.clone(),
    });
    if position.depth < tree.settings.max_depth {
        options.tools.register(Arc::new(SpawnAgentTool {
            spawner: Arc::clone(&spawner),
        }));
    }
    // A custom agent's list narrows every tool, atto's own included.
    if let Some(only) = &position.tools {
        options.tools.retain(|name| only.iter().any(|n| n == name));
    }
    (authority, spawner)
}

/// The recorder of the session's thread, and the history it resumes (empty for a new
/// session).
fn recorder(
    options: &mut SessionOptions,
    ev_tx: &mpsc::UnboundedSender<Event>,
) -> (Recorder, Vec<Message>) {
    let recorder = Recorder::new(
        options.store.clone(),
        options
            .thread
            .clone()
            .unwrap_or_else(|| options.session_id.clone()),
        options.resume.as_ref().map_or(0, Vec::len),
        ev_tx.clone(),
    );
    (recorder, options.resume.take().unwrap_or_default())
}

/// The gate every call of the session passes, deciding by the tree's grants and writing
/// the audit trail.
fn gatekeeper(
    options: &mut SessionOptions,
    grants: GrantTable,
    ev_tx: &mpsc::UnboundedSender<Event>,
    approval_rx: mpsc::UnboundedReceiver<(String, atto_protocol::ApprovalDecision)>,
) -> Gatekeeper {
    let audit = Audit::new(
        options.store.clone(),
        options.session_id.clone(),
        options.workspace.display().to_string(),
        options.permission.mode,
        ev_tx.clone(),
    );
    Gatekeeper::new(
        GateSetup {
            permission: options.permission,
            grants,
            commands_sandboxed: options.sandbox.is_some(),
            workspace: options.workspace.clone(),
            protected_dirs: std::mem::take(&mut options.protected_dirs),
            approval_deadline: options.approval_deadline,
            unsandboxed_commands: std::mem::take(&mut options.unsandboxed_commands),
        },
        audit,
        approval_rx,
    )
}

impl Session {
    /// A session in `tree` at `position`, its tools registered and its prompt written,
    /// resuming `options.resume` when set.
    fn new(
        mut options: SessionOptions,
        tree: SessionTree,
        position: TreePosition,
        models: crate::models::Models,
        ev_tx: mpsc::UnboundedSender<Event>,
    ) -> Session {
        let current_turn = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let (work, learnings) = register_own_tools(&mut options, &current_turn, &ev_tx);
        let (approval_tx, approval_rx) = mpsc::unbounded_channel();
        let approvals = Approvals::new(approval_tx);
        let (authority, spawner) =
            offer_spawning(&mut options, &tree, &position, &approvals, &ev_tx);
        let names = options.tools.names();
        let system = prompt::system_prompt(&PromptInputs {
            workspace: &options.workspace,
            tool_names: &names,
            instructions: &options.instructions,
        });
        let resuming = options.resume.is_some();
        let (recorder, resumed) = recorder(&mut options, &ev_tx);
        let gate = gatekeeper(&mut options, tree.grants.clone(), &ev_tx, approval_rx);
        let plan = PlanQueue::new(
            options.store.clone(),
            options.session_id.clone(),
            options.workspace.clone(),
            ev_tx.clone(),
        );
        let keeper = SessionCheckpoints::new(options.checkpoints.clone(), ev_tx.clone());
        // Offered to the model only in plan steps, so it is registered after the specs are
        // taken; the specs of a step's turn add it.
        let tool_specs = mode_specs(&options.tools, options.mode);
        let mut planner = Planner::new(
            options.store.clone(),
            options.session_id.clone(),
            ev_tx.clone(),
        );
        planner.settings = options.planner;
        options.tools.register(Arc::new(StepResultTool {
            step_report: Arc::clone(&planner.step_report),
        }));
        Session {
            learnings,
            tally: Tally::default(),
            planner,
            keeper,
            work,
            current_turn,
            notes: Vec::new(),
            step_quality: None,
            models,
            turn_effort: None,
            effort: None,
            mode: options.mode,
            base_permission: options.permission,
            plan,
            trust: options.trust,
            gate,
            approvals,
            tree,
            position,
            authority,
            spawner,
            tool_specs,
            system,
            options,
            turns: history::count_turns(&resumed),
            last_input_tokens: None,
            unrun: std::collections::HashMap::new(),
            edited: std::collections::VecDeque::new(),
            compacted_to: 0,
            is_new: !resuming,
            recorder,
            history: resumed,
            events: ev_tx,
        }
    }
}

struct Session {
    options: SessionOptions,
    /// The agent mode turns run in.
    mode: AgentMode,
    /// The permission the session started with, restored when `/mode` leaves yolo.
    base_permission: PermissionSetting,
    /// Plan mode's queue of proposed changes.
    plan: PlanQueue,
    /// File checkpoints.
    keeper: SessionCheckpoints,
    /// The structured planner: settings and the task plan waiting for confirmation.
    planner: Planner,
    /// Tasks and goals.
    work: SharedGoalsAndTasks,
    /// Learnings: recalled into prompts, proposed, reviewed.
    learnings: Arc<Learnings>,
    /// The self-improvement protocol's tallies, lent to each turn.
    tally: Tally,
    /// The turn running now, shared with `revert_turn`.
    current_turn: Arc<std::sync::atomic::AtomicU32>,
    /// Facts for the model's next prompt (files restored under it, ...).
    notes: Vec<String>,
    /// What the quality checks said about the step being settled.
    step_quality: Option<atto_protocol::QualityCheck>,
    /// The models turns can use, and what each was used for.
    models: crate::models::Models,
    /// The effort of the running turn's route (`--model auto`), over `/effort`'s.
    turn_effort: Option<ReasoningEffort>,
    /// The reasoning effort requests carry (`/effort`); `None`: the provider's default.
    effort: Option<ReasoningEffort>,
    /// Whether file tools may reach outside the workspace (`/trust`).
    trust: bool,
    gate: Gatekeeper,
    /// Answers to approval requests, forwarded from the op loop to the running turn (or
    /// to the subagent that asked).
    approvals: Approvals,
    /// The session tree this session belongs to, and its position in it.
    tree: SessionTree,
    position: TreePosition,
    /// What the `spawn_agent` tool reads as this session's mode, permission and trust.
    authority: SharedAuthority,
    /// Starts this session's subagents (`/spawn` and the tool).
    spawner: Arc<Spawner>,
    system: String,
    tool_specs: Vec<atto_protocol::ToolSpec>,
    history: Vec<Message>,
    /// Call id → how a call of the history that never ran ended (denied, cancelled …):
    /// the quality checks must not take its text for evidence.
    unrun: std::collections::HashMap<String, atto_protocol::ToolCallStatus>,
    /// The files this session's calls changed most recently, the latest last (at most
    /// `FOCUS_EDITED`): what it is working on, raised in the repository map (see
    /// [`Session::focus_of`]).
    edited: std::collections::VecDeque<String>,
    turns: u32,
    /// Input tokens the provider reported for the last call (cache included).
    last_input_tokens: Option<u64>,
    /// Request bytes right after the last compaction (0 before any).
    compacted_to: u64,
    /// Whether this session still has to be recorded in the store.
    is_new: bool,
    /// Commits messages to the store.
    recorder: Recorder,
    events: mpsc::UnboundedSender<Event>,
}

impl Session {
    fn emit(&self, event: Event) {
        // A front end that went away no longer needs events; the session still finishes
        // its turn so history stays consistent.
        let _ = self.events.send(event);
    }

    /// The OS sandbox for commands: none in yolo.
    fn command_sandbox(&self) -> Option<Arc<atto_tools::Sandbox>> {
        match self.gate.permission.mode {
            PermissionMode::Yolo => None,
            _ => self.options.sandbox.clone(),
        }
    }

    /// Thread operations on this session's store.
    fn threads(&self) -> Threads<'_> {
        Threads {
            store: self.recorder.store.as_ref(),
            session: &self.options.session_id,
        }
    }
}

/// The tools the model is offered in `mode` (review and debug hide what they would
/// refuse; see `atto_policy::gate::offered`). A mode switch changes this list, which
/// costs one prompt-cache miss on the next request. The plan-step report tool is added
/// only for steps.
pub(crate) fn mode_specs(tools: &ToolRegistry, mode: AgentMode) -> Vec<atto_protocol::ToolSpec> {
    let empty = serde_json::Value::Object(serde_json::Map::new());
    tools
        .specs()
        .into_iter()
        .filter(|spec| spec.name != atto_planner::plan::report::NAME)
        .filter(|spec| {
            let tool = tools.get(&spec.name);
            let writes = tool.as_ref().is_some_and(|t| t.mutates(&empty));
            let kind = tool.map(|t| t.kind()).unwrap_or_default();
            atto_policy::gate::offered(mode, &spec.name, kind, writes)
        })
        .collect()
}
