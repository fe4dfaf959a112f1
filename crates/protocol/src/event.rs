//! What the engine tells front ends. The same types are the `stream-json` event lines.

use serde::{Deserialize, Serialize};

use crate::{
    AgentMode, ApprovalRequest, ChangeOutcome, PendingPlan, PermissionMode, PlanStatus,
    ProposedChange, Usage,
};

/// Something that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The session is ready to take prompts.
    SessionStarted {
        /// Session id.
        session_id: String,
        /// Provider name (preset or custom).
        provider: String,
        /// Model id sent to the provider.
        model: String,
        /// Wire protocol: `chat`, `responses` or `anthropic`.
        wire: String,
        /// Workspace root.
        workspace: String,
        /// The agent mode it starts in.
        #[serde(default)]
        mode: AgentMode,
        /// The permission mode it starts in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        permission: Option<crate::PermissionMode>,
        /// Whether commands run under the OS sandbox in this session, as prepared.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<SandboxState>,
    },
    /// A turn began.
    TurnStarted {
        /// 1-based turn number in this session.
        turn: u32,
        /// The agent mode the whole turn runs in.
        #[serde(default)]
        mode: AgentMode,
        /// How complex the prompt looks (the seeds' weighted signals), with the reasons.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        complexity: Option<crate::Complexity>,
        /// The model the turn's requests are sent to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Why that model (`auto: COMPLEX → big-model`, `pinned by /model`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        route: Option<String>,
    },
    /// Answer text streamed from the model.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// Reasoning text streamed from the model.
    ThinkingDelta {
        /// The new text.
        text: String,
    },
    /// A tool call is about to run.
    ToolCallStarted {
        /// Call id from the model.
        call_id: String,
        /// Tool name.
        name: String,
        /// Parsed arguments, or the raw text when they are not valid JSON.
        arguments: serde_json::Value,
        /// What kind of work the tool does, as the tool says (`other` when unknown).
        #[serde(default)]
        kind: crate::ToolKind,
        /// The call in one line, as the tool words it from its arguments.
        #[serde(default)]
        title: String,
    },
    /// A tool call ended (or was never run).
    ToolCallFinished {
        /// Call id from the model.
        call_id: String,
        /// Tool name.
        name: String,
        /// How it ended.
        status: ToolCallStatus,
        /// Wall time spent running it.
        duration_ms: u64,
        /// First part of the output, for display.
        summary: String,
        /// For commands: whether the OS sandbox was applied; absent for other tools.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandboxed: Option<bool>,
        /// For commands: how the command exited (128 + N when killed by signal N).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    /// Tokens and cost of one model call.
    Usage {
        /// Model id.
        model: String,
        /// Token counts of this call.
        usage: Usage,
        /// Cost in US dollars; `None` when the model's price is unknown.
        cost_usd: Option<f64>,
    },
    /// A call waits for the user's answer (`Op::Approval`).
    ApprovalRequired(ApprovalRequest),
    /// Trust mode changed.
    TrustChanged {
        /// Whether file tools may now reach outside the workspace.
        on: bool,
    },
    /// The grants in force, answering `Op::ListGrants`.
    GrantList {
        /// Numbered from 1, in the order the gate sees them.
        grants: Vec<GrantInfo>,
    },
    /// The threads of the session, answering `Op::ListThreads`.
    ThreadList {
        /// Oldest first; `parent` links make the tree.
        threads: Vec<ThreadInfo>,
    },
    /// The session now continues in this thread.
    ThreadSwitched {
        /// The thread.
        thread: ThreadInfo,
    },
    /// This conversation's prompts, oldest first (answers `list_prompts`).
    PromptList {
        /// The prompts.
        prompts: Vec<PromptInfo>,
    },
    /// The session went back to just before prompt `prompt`.
    Rewound {
        /// The prompt's number in `prompt_list`.
        prompt: u32,
        /// What went back.
        scope: crate::RewindScope,
        /// The prompt as typed, to edit and send again.
        text: String,
    },
    /// A short answer to a command that needs no other event ("revoked grant 2").
    Notice {
        /// What happened.
        message: String,
    },
    /// A model call failed and will be retried.
    Retry(RetryNotice),
    /// Something the user should know that does not stop the turn.
    Warning {
        /// What happened.
        message: String,
    },
    /// Something failed; `TurnCompleted` follows if a turn was running.
    Error {
        /// What happened, what was not done, what to do.
        message: String,
    },
    /// The agent mode or the permission mode changed.
    ModeChanged {
        /// The agent mode now.
        mode: AgentMode,
        /// The permission mode now.
        permission: PermissionMode,
    },
    /// Plan mode queued a change instead of running it.
    ChangeQueued {
        /// The change, as stored.
        change: ProposedChange,
    },
    /// The pending plan, for `/show-plan` (`None`: nothing is pending).
    Plan {
        /// The plan with every change, decided ones included.
        plan: Option<PendingPlan>,
        /// Per change, in the same order: a unified diff of what it would do to its file as
        /// it will be by then, or the command it would run.
        previews: Vec<String>,
    },
    /// The user approved or rejected changes; what became of each.
    PlanDecided {
        /// The plan's status afterwards.
        status: PlanStatus,
        /// One entry per decided change, in order.
        outcomes: Vec<ChangeOutcome>,
        /// How many of the plan's changes stand where, after this decision.
        #[serde(default)]
        tally: PlanTally,
    },
    /// The session's goals (answer to `/goal` and `/goals`, and after a goal changes).
    Goals {
        /// Every goal, in creation order.
        goals: Vec<crate::Goal>,
        /// Id of the current goal (the newest open one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        current: Option<String>,
    },
    /// The file checkpoints, newest first (`/restore list`).
    CheckpointList {
        /// The checkpoints.
        checkpoints: Vec<CheckpointInfo>,
    },
    /// Files were brought back to a checkpoint.
    Restored {
        /// The checkpoint restored.
        checkpoint: u32,
        /// The checkpoint of the state just before; restoring it undoes this.
        safety_checkpoint: u32,
        /// Files written back.
        restored: Vec<String>,
        /// Files removed (created after the checkpoint).
        deleted: Vec<String>,
        /// Files left alone because an ignored file stands there now.
        kept: Vec<String>,
    },
    /// A failed call had a better route: the model was told to self-correct.
    CorrectionAttempt {
        /// The tool whose call failed.
        tool: String,
        /// The first line of its error.
        error: String,
        /// The route the model was told to take instead.
        strategy: String,
        /// 1-based number of this attempt within the turn's request.
        attempt: u32,
        /// Attempts allowed per request.
        max: u32,
    },
    /// A call succeeded after a self-correction attempt.
    CorrectionSuccess {
        /// The tool whose call had failed.
        tool: String,
        /// Attempts made for this tool in the turn's request.
        attempts: u32,
    },
    /// Self-correction for the turn's request ran out of attempts; the model was told to stop.
    CorrectionFailed {
        /// The tool whose call failed last.
        tool: String,
        /// Attempts made for the request.
        attempts: u32,
    },
    /// The model drafted a task plan; it waits for refinement, `/approve` or `/reject`.
    PlanGenerated {
        /// The plan.
        plan: crate::TaskPlan,
        /// Model requests it took (1 when the first answer was a valid plan).
        attempts: u32,
    },
    /// No valid plan came back after the bounded re-asks; nothing was planned or run.
    PlanGenerationFailed {
        /// Why the last answer was not accepted.
        error: String,
        /// Model requests made.
        attempts: u32,
    },
    /// An interrupt stopped the planning request under way; nothing was planned or run
    /// (a plan being revised stays as it was).
    PlanGenerationCancelled {
        /// Model requests made, the cancelled one included.
        attempts: u32,
        /// Whether it was a revision of the waiting plan (which is unchanged).
        revision: bool,
    },
    /// The waiting task plan was changed by a refinement.
    PlanRevised {
        /// The plan now.
        plan: crate::TaskPlan,
        /// What the user asked for.
        request: String,
        /// Whether atto's parser or the model made the change.
        source: crate::RevisionSource,
        /// A unified diff of the rendered step list, before to after.
        diff: String,
    },
    /// The task plan waiting for confirmation, for `/show-plan`.
    TaskPlanShown {
        /// The plan.
        plan: crate::TaskPlan,
    },
    /// The user approved the task plan; its steps start.
    PlanConfirmed {
        /// Plan id.
        plan_id: String,
        /// Steps that will run (not skipped).
        steps: u32,
    },
    /// The user rejected the task plan; nothing of it ran.
    PlanRejected {
        /// Plan id.
        plan_id: String,
        /// Why, if the user said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A decision-point step waits for the user's choice (`Op::PlanDecision`).
    PlanDecisionRequired {
        /// The step's number.
        number: u32,
        /// What to decide.
        question: String,
        /// The choices.
        options: Vec<String>,
    },
    /// A plan step began (after its checkpoint).
    PlanStepStarted {
        /// The step's number.
        number: u32,
        /// What it is to do.
        description: String,
        /// The file checkpoint taken before it, when checkpoints are on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checkpoint: Option<u32>,
    },
    /// A plan step finished.
    PlanStepCompleted {
        /// The step's number.
        number: u32,
        /// What the model reported.
        summary: String,
        /// What the quality checks found, when they ran.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quality: Option<crate::QualityCheck>,
    },
    /// A plan step the quality checks did not pass runs again, told why.
    PlanStepRetrying {
        /// The step's number.
        number: u32,
        /// The attempt starting now (2 for the first retry).
        attempt: u32,
        /// Why the last attempt did not pass.
        quality: crate::QualityCheck,
    },
    /// A plan step failed.
    PlanStepFailed {
        /// The step's number.
        number: u32,
        /// Why.
        error: String,
        /// Whether its file changes were rolled back to its checkpoint (and the plan stopped).
        rolled_back: bool,
        /// What the quality checks found, when they failed it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quality: Option<crate::QualityCheck>,
    },
    /// A plan step will not run.
    PlanStepSkipped {
        /// The step's number.
        number: u32,
        /// Why.
        reason: String,
    },
    /// A task plan run ended: each step's outcome.
    PlanSummary {
        /// Plan id.
        plan_id: String,
        /// The plan's status at the end.
        status: crate::TaskPlanStatus,
        /// One per step, in number order.
        outcomes: Vec<crate::StepOutcome>,
    },
    /// The planner's settings, answering `Op::PlannerSettings`.
    PlannerSettingsChanged {
        /// Whether a failed step's files are rolled back and the plan stopped.
        auto_rollback_on_failure: bool,
        /// Whether plain prompts are checked for needing a plan.
        detect: bool,
        /// The complexity score at and above which a detected prompt is planned.
        threshold: f64,
        /// Whether independent steps with disjoint files run together.
        #[serde(default)]
        parallel: bool,
    },
    /// The reasoning effort, answering `Op::SetEffort`.
    EffortChanged {
        /// The effort requests now carry; `None`: the provider's default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effort: Option<crate::ReasoningEffort>,
        /// Whether the model takes an effort; when not, its requests stay unchanged.
        supported: bool,
        /// The model it applies to.
        model: String,
    },
    /// A turn ended.
    TurnCompleted {
        /// 1-based turn number.
        turn: u32,
        /// How it ended and what it cost.
        #[serde(flatten)]
        result: FinalResult,
    },
    /// A subagent started (its budget is taken from its parent's).
    SubagentStarted {
        /// The child.
        #[serde(flatten)]
        agent: crate::SubagentInfo,
        /// Files it may write (writing roles only).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<String>,
    },
    /// A subagent made a model call or started a tool call.
    SubagentProgress {
        /// The child's session id.
        id: String,
        /// Tokens used so far.
        tokens_used: u64,
        /// Tokens it may use.
        budget_tokens: u64,
        /// Milliseconds since it started.
        elapsed_ms: u64,
        /// What it is doing now (`bash: cargo test`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        activity: Option<String>,
    },
    /// A subagent ended; its unspent budget went back to its parent.
    SubagentFinished {
        /// The child, as it ended.
        #[serde(flatten)]
        agent: crate::SubagentInfo,
        /// Why atto stopped it (time, budget, cap), when it did not finish by itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        forced_stop: Option<String>,
        /// Files it changed, from the checkpoints (not from its own claim).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files_modified: Vec<String>,
        /// The closure report the parent receives.
        report: String,
        /// What the quality checks found in its report and files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quality: Option<crate::QualityCheck>,
    },
    /// The subagents of this session, answering `Op::ListAgents`.
    SubagentList {
        /// Oldest first, running and finished.
        agents: Vec<crate::SubagentInfo>,
    },
    /// The model for the following turns changed (`/model`).
    ModelChanged {
        /// The model now used; `auto` when routing.
        model: String,
        /// Whether each turn is routed by its complexity.
        auto: bool,
        /// What the switch costs, e.g. a prompt-cache miss on the next request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// The models this session can use, answering `Op::ListModels`.
    ModelList {
        /// The model the last (or next) turn uses.
        current: String,
        /// Whether turns are routed by complexity.
        auto: bool,
        /// Models known for this session (config, routes, the provider's catalog).
        models: Vec<String>,
        /// The routes `auto` uses.
        routes: Vec<crate::ModelRoute>,
    },
    /// How full the context window is: answering `Op::ShowContext` (`asked`), and after
    /// every model call for status lines.
    ContextReport {
        /// The numbers.
        context: crate::ContextUse,
        /// Whether the user asked (`/context`); otherwise it is for status lines only.
        asked: bool,
    },
    /// The conversation was compacted into a new stored thread version.
    ContextCompacted(crate::Compaction),
    /// Tokens and cost per model, answering `Op::ShowCost`.
    CostReport {
        /// One row per model used, first used first.
        models: Vec<crate::ModelSpend>,
    },
    /// A learning was proposed (and stored): `status` says whether it waits for the user
    /// (`proposed`) or was validated at once (confidence at or above the threshold, or the
    /// user's own `/learn`).
    LearningProposed {
        /// The learning, as stored.
        learning: crate::Learning,
    },
    /// Learnings recalled into this turn's request, as notes after the prompt.
    LearningsUsed {
        /// The turn whose request carries them.
        turn: u32,
        /// The learnings, most confident first.
        learnings: Vec<crate::LearningRef>,
    },
    /// Learnings, answering `/learnings` (a list) or `/learnings show N` (one).
    LearningList {
        /// The learnings, most confident first.
        learnings: Vec<crate::Learning>,
        /// Whether each is to be shown whole (`show`), not as one line.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        detailed: bool,
    },
    /// A learning was validated, rejected, archived, edited or marked helpful.
    LearningUpdated {
        /// The learning now.
        learning: crate::Learning,
    },
    /// An MCP server changed state (started, went down, came back); said once per change.
    McpServerStatus {
        /// The server, with its tools and last error.
        server: crate::McpServerInfo,
    },
    /// An MCP server reported progress on a running call.
    McpProgress {
        /// The server's configured name.
        server: String,
        /// Progress so far.
        progress: f64,
        /// The total, when the server knows it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        /// The server's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The MCP servers, answering `/mcp`.
    McpServers {
        /// Every configured server, in config order.
        servers: Vec<crate::McpServerInfo>,
    },
    /// The session ended; no more events follow.
    SessionEnded,
}

/// One prompt of the conversation as `/rewind` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptInfo {
    /// 1-based, oldest first; what `/rewind N` takes.
    pub number: u32,
    /// The prompt as typed.
    pub text: String,
    /// The checkpoint holding the files as they were before the prompt changed any, when
    /// something changed them since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<u32>,
}

/// One thread as `/threads` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadInfo {
    /// Thread id; the first thread is shown as `main`.
    pub id: String,
    /// The thread it branched from.
    pub parent: Option<String>,
    /// Its label, if any.
    pub label: Option<String>,
    /// Messages in its history (shared and its own).
    pub messages: u64,
    /// Whether the session is in this thread now.
    pub current: bool,
}

/// One grant as `/grants` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrantInfo {
    /// Number for `/grants revoke N`.
    pub number: u32,
    /// `session`, `project`, `user`, or where a config rule came from.
    pub scope: String,
    /// `allow`, `ask` or `deny`.
    pub decision: String,
    /// The rule, e.g. `bash(npm run test:*)`.
    pub rule: String,
    /// When it was created (Unix ms), if known.
    pub created_at: Option<i64>,
    /// When it last decided a call (Unix ms).
    pub last_used_at: Option<i64>,
    /// How many calls it decided.
    pub uses: u64,
    /// Whether `/grants revoke` can remove it (config rules are edited in the config).
    pub revocable: bool,
}

/// A model call that will be tried again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryNotice {
    /// 1-based number of the attempt that failed.
    pub attempt: u32,
    /// Attempts allowed in all.
    pub max_attempts: u32,
    /// Wait before the next attempt.
    pub delay_ms: u64,
    /// Why the attempt failed.
    pub reason: String,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// It ran and succeeded.
    Ok,
    /// It ran and failed.
    Error,
    /// Its arguments were invalid or cut off; it was not run.
    InvalidArguments,
    /// The user or a limit cancelled it.
    Cancelled,
    /// Policy refused it; it was not run.
    Denied,
    /// Plan mode queued it as a proposed change; it was not run.
    Queued,
}

/// One file checkpoint, as `/restore list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointInfo {
    /// Its number; `/restore N` takes it.
    pub id: u32,
    /// The turn it was taken in.
    pub turn: u32,
    /// The tool it was taken before, whose changes restoring it undoes (`None`: a turn
    /// boundary or a restore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What it records.
    pub note: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Files changed between it and the next checkpoint: what that tool changed, which
    /// restoring it puts back (empty for the newest).
    pub files_changed: Vec<String>,
    /// The session that took it, when that is not the session listing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_session: Option<String>,
}

/// How a turn (or a whole headless run) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// The model finished.
    Completed,
    /// A model or infrastructure error stopped it.
    Failed,
    /// The user cancelled it.
    Cancelled,
    /// A round, token or time limit stopped it.
    LimitReached,
}

/// The outcome of a turn, and of a headless run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalResult {
    /// How it ended.
    pub status: TurnStatus,
    /// Model calls made.
    pub rounds: u32,
    /// Tokens used in all.
    pub usage: Usage,
    /// Cost in US dollars; `None` when any call's price is unknown.
    pub cost_usd: Option<f64>,
    /// Workspace-relative paths changed by file tools.
    pub files_changed: Vec<String>,
    /// The model's last answer text.
    pub text: String,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What kind of failure it was, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureKind>,
    /// Wall time.
    pub duration_ms: u64,
}

/// What kind of failure ended a turn; decides the exit code of a headless run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Setup is wrong: credentials, endpoint, model name. Fix the config and rerun.
    Config,
    /// Infrastructure failed (network, provider down after retries); worth retrying later.
    Transient,
    /// The provider refused the request for another reason (bad request, context too long).
    Request,
}

/// Whether a session's commands run sandboxed, as the session prepared it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxState {
    /// The sandbox is prepared and applied to every command.
    pub applied: bool,
    /// What it restricts (applied), or why commands run without it.
    pub detail: String,
    /// Each protection of the sandbox, applied or a gap (empty without a sandbox).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protections: Vec<SandboxProtection>,
}

/// One protection of the OS sandbox, and whether this session's commands have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxProtection {
    /// Which protection.
    pub name: ProtectionName,
    /// Applied to every command.
    pub applied: bool,
    /// Why it is a gap, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
}

/// The protections of the OS sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProtectionName {
    /// Commands that run unasked (judged SAFE, plan and review modes) cannot write.
    NoWriteUnasked,
    /// `.git`, `.atto`, `.attocode` and atto's own dirs are read-only.
    ReadOnlyDirs,
    /// A protected directory that does not exist yet cannot be created.
    MissingDirs,
    /// Device files cannot be made.
    Devices,
    /// Processes outside the command are invisible (own PID namespace and `/proc`).
    Processes,
    /// A command run by root has no capabilities outside its own user namespace.
    RootCapabilities,
    /// `/tmp` is a private directory of the session.
    PrivateTmp,
    /// The credential stores are hidden.
    HiddenSecrets,
    /// The network is off.
    Network,
}

/// Where a pending plan's changes stand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanTally {
    /// Approved and applied.
    pub applied: u32,
    /// Rejected.
    pub rejected: u32,
    /// Approved but failed.
    pub failed: u32,
    /// Still waiting (conflicts included).
    pub pending: u32,
}

impl PlanTally {
    /// Where `plan`'s changes stand (all zero without a plan).
    pub fn of(plan: Option<&PendingPlan>) -> PlanTally {
        let mut tally = PlanTally::default();
        for change in plan
            .map(|p| p.proposed_changes.as_slice())
            .unwrap_or_default()
        {
            match change.status {
                crate::ChangeStatus::Applied => tally.applied += 1,
                crate::ChangeStatus::Rejected => tally.rejected += 1,
                crate::ChangeStatus::Failed => tally.failed += 1,
                crate::ChangeStatus::Pending | crate::ChangeStatus::Conflict => {
                    tally.pending += 1;
                }
            }
        }
        tally
    }
}
