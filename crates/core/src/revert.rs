//! `revert_turn`: the model's way to do what `/undo` does, when the user asks it to undo an
//! earlier turn's file changes. A mutating tool like any other: it passes the mode table
//! (queued in plan mode, refused in review) and the gate before it runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use atto_checkpoint::Checkpoints;
use atto_protocol::{DangerLevel, ToolKind};
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

/// Restores the files to how they were before an earlier turn.
pub(crate) struct RevertTurnTool {
    checkpoints: Arc<Checkpoints>,
    current_turn: Arc<AtomicU32>,
}

impl RevertTurnTool {
    pub(crate) fn new(checkpoints: Arc<Checkpoints>, current_turn: Arc<AtomicU32>) -> Self {
        Self {
            checkpoints,
            current_turn,
        }
    }
}

impl Tool for RevertTurnTool {
    fn name(&self) -> &'static str {
        "revert_turn"
    }

    fn description(&self) -> &'static str {
        "Undo an earlier turn's file changes, only when the user asks (the current state is \
         saved first, so this can be undone too). Default: the latest earlier turn that \
         changed files."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "turn": {"type": "integer", "description": "The turn whose changes to undo (default: the latest earlier turn that changed files)"}
            }
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Medium
    }

    fn mutates(&self, _args: &Value) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn run<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let checkpoints = Arc::clone(&self.checkpoints);
        let current = self.current_turn.load(Ordering::Relaxed);
        let asked = args.get("turn").and_then(Value::as_u64);
        Box::pin(async move {
            let work = move || -> Result<ToolOutput, ToolError> {
                let failed = |e: atto_checkpoint::CheckpointError| {
                    ToolError::InvalidArguments(e.to_string())
                };
                let turn = match asked {
                    Some(turn) => u32::try_from(turn).map_err(|_| {
                        ToolError::InvalidArguments(format!("there is no turn {turn}"))
                    })?,
                    None => checkpoints
                        .list(usize::MAX)
                        .map_err(failed)?
                        .iter()
                        .map(|s| s.turn)
                        .filter(|t| *t < current)
                        .max()
                        .ok_or_else(|| {
                            ToolError::InvalidArguments(
                                "no earlier turn changed files, so there is nothing to revert"
                                    .into(),
                            )
                        })?,
                };
                let report = checkpoints.undo_last_turn(turn).map_err(failed)?;
                let mut out = format!(
                    "reverted the file changes of turn {turn}: {} file(s) restored, {} removed \
                     (checkpoint {} holds the state before this revert).",
                    report.restored.len(),
                    report.deleted.len(),
                    report.safety_snapshot
                );
                for path in report.restored.iter().take(50) {
                    out.push_str(&format!("\nrestored {path}"));
                }
                for path in report.deleted.iter().take(50) {
                    out.push_str(&format!("\nremoved {path}"));
                }
                let mut changed = report.restored;
                changed.extend(report.deleted);
                Ok(ToolOutput {
                    changed_paths: changed,
                    ..ToolOutput::text(out)
                })
            };
            tokio::task::spawn_blocking(work)
                .await
                .map_err(|e| ToolError::InvalidArguments(format!("revert_turn failed: {e}")))?
        })
    }
}
