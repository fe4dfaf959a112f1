//! The structured planner's vocabulary: a task plan of numbered steps with dependencies,
//! how each step stands, and what became of it. Plan mode's queue of proposed changes is
//! a different thing (core's `plan_queue.rs`).

use serde::{Deserialize, Serialize};

/// A plan for one task, drafted by the model and refined by the user before it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskPlan {
    /// Plan id.
    pub id: String,
    /// The request it plans for.
    pub task: String,
    /// What the plan sets out to do, in one line.
    pub intent: String,
    /// How risky the model judges the whole change.
    pub risk: RiskLevel,
    /// The model's estimate of the whole run, in seconds.
    pub estimated_duration_secs: u64,
    /// The steps, in the order they are numbered and run when ready.
    pub steps: Vec<PlanStep>,
    /// Where the plan stands.
    pub status: TaskPlanStatus,
}

impl TaskPlan {
    /// One line per step: number, kind, description, dependencies, complexity, budget,
    /// status. The plan block lists them; a revision's diff is taken on them.
    pub fn step_lines(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|s| {
                let deps: Vec<String> = s
                    .dependencies
                    .iter()
                    .filter_map(|d| self.steps.iter().find(|o| &o.id == d))
                    .map(|o| o.number.to_string())
                    .collect();
                let after = if deps.is_empty() {
                    String::new()
                } else {
                    format!(" (after {})", deps.join(", "))
                };
                let status = match s.status {
                    StepStatus::Pending => String::new(),
                    StepStatus::Skipped => " [skipped]".to_owned(),
                    other => format!(" [{}]", other.as_str()),
                };
                let decision = s
                    .decision
                    .as_ref()
                    .map(|d| format!(" — decide: {} ({})", d.question, d.options.join(" / ")))
                    .unwrap_or_default();
                format!(
                    "{}. [{}] {}{after} · complexity {} · {} tokens{decision}{status}",
                    s.number,
                    s.kind.name(),
                    s.description,
                    s.complexity,
                    s.token_budget
                )
            })
            .collect()
    }
}

/// One step of a task plan (the plan-mode seed's "Plan Step Schema").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    /// Stable id; dependencies name steps by it.
    pub id: String,
    /// 1-based position, for display and for edits ("remove step 4").
    pub number: u32,
    /// What to do.
    pub description: String,
    /// Ids of the steps that must be completed or skipped first.
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// Estimated complexity, 1 (trivial) to 5 (hard).
    pub complexity: u8,
    /// Tokens the step may use; the step fails when it needs more.
    pub token_budget: u64,
    /// What kind of work it is.
    pub kind: StepKind,
    /// Workspace-relative files it expects to touch.
    #[serde(default)]
    pub files: Vec<String>,
    /// A question the user answers before the step runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionPoint>,
    /// Where the step stands.
    #[serde(default)]
    pub status: StepStatus,
    /// The file checkpoint taken before it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<u32>,
    /// What came of it: the model's summary, or why it failed or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// A step that pauses for the user's choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionPoint {
    /// What to decide.
    pub question: String,
    /// The choices offered.
    pub options: Vec<String>,
    /// The option the user chose, once chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
}

/// The kind tag of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepKind {
    /// Read and understand code.
    Analyze,
    /// Look things up beyond the code at hand.
    Research,
    /// Decide on a design.
    Design,
    /// Write new code.
    Implement,
    /// Restructure existing code.
    Refactor,
    /// Write or run tests.
    Test,
    /// Check the result (build, lint, review).
    Validate,
    /// Write documentation.
    Document,
}

impl StepKind {
    /// The name of a kind as shown and as the model writes it (`IMPLEMENT`).
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Analyze => "ANALYZE",
            StepKind::Research => "RESEARCH",
            StepKind::Design => "DESIGN",
            StepKind::Implement => "IMPLEMENT",
            StepKind::Refactor => "REFACTOR",
            StepKind::Test => "TEST",
            StepKind::Validate => "VALIDATE",
            StepKind::Document => "DOCUMENT",
        }
    }
}

/// How risky a plan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    /// Small, easily undone.
    Low,
    /// Touches several files or behaviour others rely on.
    Medium,
    /// Broad or hard to undo.
    High,
}

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not run yet.
    #[default]
    Pending,
    /// Running now.
    InProgress,
    /// Done.
    Completed,
    /// It failed.
    Failed,
    /// Not run: the user skipped it, or a step it depends on failed.
    Skipped,
}

impl StepStatus {
    /// The snake_case name, one word.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::InProgress => "in_progress",
            StepStatus::Completed => "completed",
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
        }
    }
}

/// Where a task plan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskPlanStatus {
    /// Drafted; waits for the user to refine, approve or reject it.
    AwaitingConfirmation,
    /// Approved; its steps are running.
    Running,
    /// Every step completed or was skipped.
    Completed,
    /// A step failed (the rest ran or the plan stopped, per `auto_rollback_on_failure`).
    Failed,
    /// The user stopped it while it ran.
    Cancelled,
    /// The user rejected it.
    Rejected,
}

/// Who revised a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevisionSource {
    /// atto's edit parser understood the request.
    Parser,
    /// The model rewrote the plan.
    Model,
}

/// One step's outcome, for the summary at the end of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepOutcome {
    /// The step's number.
    pub number: u32,
    /// What it was to do.
    pub description: String,
    /// How it ended (`pending`: the plan stopped before it).
    pub status: StepStatus,
    /// The summary, or why it failed or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}
