//! Tools from outside atto (MCP servers) joining a running session: appended to the
//! registry and to the model's tool list as they become available, never inserted, so
//! the prefix the provider cached stays valid; and looked up (waiting a bounded time for
//! a server still starting) when the model calls one that has not arrived yet. Every
//! such call then goes through the orchestrator like a built-in one.

use std::sync::Arc;

use atto_tools::{CancellationToken, Tool};

use super::Session;

/// The first request's size budget: tool schemas that would push past it wait to be
/// found through the source's search tool.
pub(crate) const FIRST_REQUEST_BYTES: usize = 10 * 1024;

/// Bytes kept free under the budget for the prompt and the wire's envelope.
const PROMPT_RESERVE: usize = 1024;

impl Session {
    /// Appends the tools the external source offers now that this session lacks.
    pub(super) fn adopt_external_tools(&mut self) {
        let Some(source) = self.options.external_tools.clone() else {
            return;
        };
        let used = self.system.len()
            + serde_json::to_vec(&self.tool_specs).map_or(0, |v| v.len())
            + PROMPT_RESERVE;
        let room = FIRST_REQUEST_BYTES.saturating_sub(used);
        for tool in source.offered(room) {
            self.adopt(tool);
        }
    }

    /// Finds the tools named in `names` that the session does not have but the external
    /// source claims (a server still starting, a deferred tool called by name, a change
    /// queued for one), so the orchestrator can judge and run them like any other.
    pub(super) async fn resolve_external_tools(
        &mut self,
        names: &[&str],
        cancel: &CancellationToken,
    ) {
        let Some(source) = self.options.external_tools.clone() else {
            return;
        };
        for &name in names {
            if self.options.tools.get(name).is_some() || !source.claims(name) {
                continue;
            }
            if let Some(tool) = source.resolve(name, cancel).await {
                self.adopt(tool);
            }
        }
    }

    /// Registers `tool` and offers it to the model when the mode and this session's
    /// tool list allow (a custom agent's list narrows external tools too).
    fn adopt(&mut self, tool: Arc<dyn Tool>) {
        if self.options.tools.get(tool.name()).is_some() {
            return;
        }
        if let Some(only) = &self.position.tools
            && !only.iter().any(|n| n == tool.name())
        {
            return;
        }
        let empty = serde_json::Value::Object(serde_json::Map::new());
        let writes = tool.mutates(&empty);
        if atto_policy::gate::offered(self.mode, tool.name(), tool.kind(), writes) {
            self.tool_specs.push(atto_protocol::ToolSpec {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: tool.parameters(),
            });
        }
        self.options.tools.register(tool);
    }
}
