//! `spawn_agent`: the model delegates a task to a subagent and gets its closure report
//! as the result. Danger LOW (it asks where a write would ask); a call for a child that
//! writes is a mutating call, so the mode table refuses it outside build mode and it
//! runs alone, never beside another writer.

use std::sync::Arc;

use atto_protocol::{DangerLevel, SpawnRequest};
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
use serde_json::json;

use super::Spawner;

/// The `spawn_agent` tool of one session.
pub(crate) struct SpawnAgentTool {
    pub spawner: Arc<Spawner>,
}

impl SpawnAgentTool {
    fn request(args: serde_json::Value) -> Result<SpawnRequest, ToolError> {
        serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
    }
}

impl Tool for SpawnAgentTool {
    fn name(&self) -> &'static str {
        atto_policy::gate::SPAWN_TOOL
    }

    fn description(&self) -> &'static str {
        "Delegate a self-contained task to a subagent (fresh context, own token budget); \
         returns its closure report. Roles: explore/review read, verify runs tests, implement \
         changes its files."
    }

    fn parameters(&self) -> serde_json::Value {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "All it needs to know."},
                "role": {"type": "string", "enum": ["explore", "review", "implement", "verify"]},
                "files": {"type": "array", "items": {"type": "string"}, "description": "implement: the only files it may change"},
                "model": {"type": "string"},
                "budget_tokens": {"type": "integer"},
                "max_iterations": {"type": "integer"},
                "notes": {"type": "string", "description": "findings to pass on"}
            },
            "required": ["task"],
            "additionalProperties": false
        });
        // Offered only when there are custom agents: no bytes spent on nothing.
        let agents: Vec<String> = self
            .spawner
            .tree
            .settings
            .agents
            .iter()
            .map(|d| format!("{} ({})", d.name, d.description))
            .collect();
        if !agents.is_empty() {
            schema["properties"]["agent"] = json!({
                "type": "string",
                "description": format!("custom agent: {}", agents.join("; "))
            });
        }
        schema
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Low
    }

    /// A child that only reads asks nothing to start: each of its own calls passes its
    /// own gate, in a read-only mode, where it happens. A child that writes or runs the
    /// project's tests (verify) is asked about like any call that may.
    fn danger_of(&self, args: &serde_json::Value) -> DangerLevel {
        if self.spawner.reads_only(&role_request(args)) {
            DangerLevel::Safe
        } else {
            DangerLevel::Low
        }
    }

    fn mutates(&self, args: &serde_json::Value) -> bool {
        self.spawner.writes(&role_request(args))
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let request = Self::request(args)?;
            let outcome = self
                .spawner
                .run(request, &ctx.cancel)
                .await
                .map_err(ToolError::Declined)?;
            Ok(ToolOutput {
                content: outcome.report,
                changed_paths: outcome.files,
                ..ToolOutput::default()
            })
        })
    }
}

/// The parts of a `spawn_agent` call that decide what its child may do: only the role
/// (and a custom agent's); arguments that do not parse are refused when the call runs.
fn role_request(args: &serde_json::Value) -> SpawnRequest {
    SpawnRequest {
        role: args
            .get("role")
            .and_then(|r| serde_json::from_value(r.clone()).ok()),
        agent: args
            .get("agent")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        ..SpawnRequest::default()
    }
}
