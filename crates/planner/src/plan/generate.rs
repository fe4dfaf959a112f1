//! Asking the model for a plan, or for a revised one: a dedicated request (a planning
//! system prompt, no tools, not part of the conversation), its answer validated by
//! `schema`, re-asked a bounded number of times with the exact error
//! (`atto_llm::reask`, which also bounds each request's time). A cancellation token stops
//! it at once. Deliberately knows nothing of the session.

use atto_llm::ModelClient;
use atto_llm::reask::{AskError, Exchange, MAX_REASKS, ask_until_parsed};
use atto_protocol::{ReasoningEffort, TaskPlan, Usage};
use atto_tools::CancellationToken;

use super::schema::{self, MAX_STEPS};

/// What the planner tells the model about the plan JSON.
pub fn system_prompt() -> String {
    let kinds: Vec<&str> = schema::KINDS.iter().map(|(n, _)| *n).collect();
    format!(
        "You are atto's planner. You do not carry out the task: you break it into steps another \
         agent will run one at a time, in dependency order, with the workspace's tools.\n\n\
         Answer with ONE JSON object and nothing else, of this shape:\n\
         {{\"intent\": \"one line: what the plan achieves\",\n \
         \"risk\": \"low\" | \"medium\" | \"high\",\n \
         \"estimated_duration_secs\": 120,\n \
         \"steps\": [{{\"id\": \"s1\", \"description\": \"what to do\", \"dependencies\": [], \
         \"complexity\": 1-5, \"token_budget\": 20000, \"kind\": \"ANALYZE\", \
         \"files\": [\"src/x.rs\"], \"decision\": {{\"question\": \"...\", \"options\": [\"a\", \"b\"]}}}}]}}\n\n\
         Rules: kind is one of {kinds}. dependencies lists ids of earlier steps that must be \
         done first. Omit decision unless the user must choose between real alternatives \
         before the step can run. At most {MAX_STEPS} steps; prefer 3 to 8. No cycles.",
        kinds = kinds.join(", ")
    )
}

/// The first request's user text.
pub fn plan_request(task: &str) -> String {
    format!("Plan this task:\n\n{task}")
}

/// The user text asking to revise `plan` per `request`.
pub fn revision_request(plan: &TaskPlan, request: &str) -> String {
    format!(
        "Here is the current plan for the task \"{}\":\n\n{}\n\nRevise it as the user asks: \
         {request}\n\nAnswer with the complete revised plan as one JSON object of the same \
         shape. Keep the ids of steps you keep; keep \"skipped\": true on skipped steps.",
        plan.task,
        schema::to_model_json(plan)
    )
}

/// How a planning exchange ended.
pub struct Generated {
    /// The plan, or why there is none.
    pub plan: Result<TaskPlan, NoPlan>,
    /// Requests made.
    pub attempts: u32,
    /// Tokens the requests used.
    pub usage: Usage,
}

/// Why a planning exchange gave no plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoPlan {
    /// No valid plan came back: the last error.
    Invalid(String),
    /// The exchange was cancelled (the user interrupted it) before a plan came back.
    Cancelled,
}

/// What one planning exchange asks.
pub struct Ask<'a> {
    /// The first request's user text.
    pub user_text: String,
    /// The task the plan is for.
    pub task: &'a str,
    /// The output limit of each request.
    pub max_output_tokens: u32,
    /// Stops the exchange (the request under way is dropped).
    pub cancel: &'a CancellationToken,
    /// The session's reasoning effort, for models that take one.
    pub effort: Option<ReasoningEffort>,
}

/// Asks `client` with `ask.user_text` until it answers a valid plan for `ask.task`,
/// re-asking at most [`MAX_REASKS`] times with the error.
pub async fn ask(client: &dyn ModelClient, ask: Ask<'_>) -> Generated {
    let Ask {
        user_text,
        task,
        max_output_tokens,
        cancel,
        effort,
    } = ask;
    let system = system_prompt();
    let exchange = Exchange {
        system: &system,
        first: user_text,
        answer: "plan",
        max_output_tokens,
        effort,
        max_reasks: MAX_REASKS,
    };
    let asked = ask_until_parsed(client, exchange, cancel.cancelled(), |text| {
        let id = format!("plan-{}", uuid::Uuid::new_v4().simple());
        schema::parse_plan(text, task, &id)
    })
    .await;
    let plan = asked.value.map_err(|err| match err {
        AskError::Cancelled => NoPlan::Cancelled,
        AskError::Request(err) => NoPlan::Invalid(format!("the model request failed: {err}")),
        AskError::TimedOut(limit) => NoPlan::Invalid(format!(
            "the model did not answer within {}s",
            limit.as_secs()
        )),
        AskError::Invalid(error) => NoPlan::Invalid(error),
    });
    Generated {
        plan,
        attempts: asked.attempts,
        usage: asked.usage,
    }
}
