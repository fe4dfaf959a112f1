//! `plan_step_result`: the tool a plan step's turn reports its outcome with. Offered only
//! in step turns; it changes no file, it only fills the step_report the session reads when the
//! turn ends.

use std::sync::{Arc, Mutex, PoisonError};

use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

/// What the model reported for the running step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepReport {
    /// It said the step failed.
    pub failed: bool,
    /// Its one-line summary or reason.
    pub summary: String,
}

/// The step_report a report lands in, shared by the session and the tool.
pub type ReportSlot = Arc<Mutex<Option<StepReport>>>;

/// Takes the report out of the step_report.
pub fn take(step_report: &ReportSlot) -> Option<StepReport> {
    step_report
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
}

/// The tool as offered to the model in a step's turn.
pub fn spec(step_report: &ReportSlot) -> atto_protocol::ToolSpec {
    let tool = StepResultTool {
        step_report: Arc::clone(step_report),
    };
    atto_protocol::ToolSpec {
        name: NAME.to_owned(),
        description: tool.description().to_owned(),
        parameters: tool.parameters(),
    }
}

/// The tool.
pub struct StepResultTool {
    /// Where reports go.
    pub step_report: ReportSlot,
}

/// The tool's name.
pub const NAME: &str = "plan_step_result";

impl Tool for StepResultTool {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Report how the current plan step ended: completed with a one-line summary, or failed \
         with the reason. Call it once, at the end of the step."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["completed", "failed"]},
                "summary": {"type": "string"}
            },
            "required": ["status", "summary"]
        })
    }

    fn danger(&self) -> atto_protocol::DangerLevel {
        atto_protocol::DangerLevel::Safe
    }

    fn mutates(&self, _args: &Value) -> bool {
        false
    }

    fn run<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let failed = match args.get("status").and_then(Value::as_str) {
                Some("completed") => false,
                Some("failed") => true,
                _ => {
                    return Err(ToolError::InvalidArguments(
                        "`status` must be completed or failed".to_owned(),
                    ));
                }
            };
            let summary = args
                .get("summary")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            *self
                .step_report
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(StepReport { failed, summary });
            Ok(ToolOutput::text(if failed {
                "recorded: the step failed. Stop working on it and end your turn."
            } else {
                "recorded: the step is completed. End your turn."
            }))
        })
    }
}
