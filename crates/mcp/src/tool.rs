//! MCP tools as atto tools: `McpTool` (one server tool under its `mcp__server__tool`
//! name, its danger from the judged annotations) and `mcp_tool_search`, which finds
//! deferred tools by name and description and makes them callable. Both go through the
//! same gate, audit and plan queue as the built-in tools; neither decides policy.

use std::sync::{Arc, Weak};

use atto_protocol::DangerLevel;
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

use crate::content;
use crate::hub::HubInner;
use crate::judge::Judgement;
use crate::server::{CallError, Server, ToolEntry};

/// One tool of one server.
pub(crate) struct McpTool {
    pub server: Arc<Server>,
    pub entry: ToolEntry,
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.entry.name
    }

    fn description(&self) -> &str {
        &self.entry.description
    }

    fn parameters(&self) -> Value {
        let mut schema = self.entry.schema.clone();
        // The wires want an object schema even when the server leaves the type out.
        if let Value::Object(map) = &mut schema {
            map.entry("type").or_insert_with(|| json!("object"));
        }
        schema
    }

    fn danger(&self) -> DangerLevel {
        self.entry.judgement.danger
    }

    fn mutates(&self, _args: &Value) -> bool {
        !self.entry.judgement.read_only
    }

    /// Read-only only where the judged annotations say so (`readOnlyHint` of a server
    /// atto trusts to tell); a tool's name never makes it so.
    fn read_only(&self, _args: &Value) -> bool {
        self.entry.judgement.read_only
    }

    fn run<'a>(
        &'a self,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            match self
                .server
                .call(&self.entry.remote, args, &ctx.cancel)
                .await
            {
                Ok(result) => {
                    let (text, is_error) = content::render(&result);
                    if is_error {
                        Err(ToolError::Declined(format!(
                            "the MCP tool {} reported an error: {}",
                            self.entry.remote,
                            if text.is_empty() {
                                "(no message)"
                            } else {
                                &text
                            }
                        )))
                    } else {
                        Ok(ToolOutput::text(text))
                    }
                }
                Err(CallError::Cancelled) => Err(ToolError::Cancelled),
                Err(CallError::Failed(message)) => Err(ToolError::Declined(message)),
            }
        })
    }
}

/// An entry for a tool of a server that has not listed its tools (it is down): judged
/// unknown, so it is treated as a write until the server says otherwise.
pub(crate) fn unlisted(name: &str, remote: &str) -> ToolEntry {
    ToolEntry {
        name: name.to_owned(),
        remote: remote.to_owned(),
        description: String::new(),
        schema: json!({"type": "object"}),
        judgement: Judgement {
            danger: DangerLevel::High,
            read_only: false,
        },
        annotations: Vec::new(),
    }
}

/// The name of the search tool.
pub const SEARCH_TOOL: &str = "mcp_tool_search";

/// Finds deferred MCP tools and adds them to the session's tools.
pub(crate) struct SearchTool {
    pub hub: Weak<HubInner>,
    pub description: String,
}

/// Most tools one search returns.
const MAX_FOUND: usize = 8;

impl Tool for SearchTool {
    fn name(&self) -> &str {
        SEARCH_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"]
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }

    fn mutates(&self, _args: &Value) -> bool {
        false
    }

    fn read_only(&self, _args: &Value) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let query = args
                .get("query")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|q| !q.is_empty())
                .ok_or_else(|| {
                    ToolError::InvalidArguments(
                        "`query` (words to look for in tool names and descriptions) is required"
                            .into(),
                    )
                })?;
            let Some(hub) = self.hub.upgrade() else {
                return Err(ToolError::Declined("the MCP servers were shut down".into()));
            };
            let (found, notes) = hub.search(query, MAX_FOUND, &ctx.cancel).await;
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            let mut text = if found.is_empty() {
                format!("No MCP tool matches \"{query}\".")
            } else {
                format!(
                    "{} MCP tool(s) match \"{query}\"; they are now in your tool list and can be \
                     called by name:",
                    found.len()
                )
            };
            for entry in &found {
                text.push_str(&format!(
                    "\n\n{}: {}\nparameters: {}",
                    entry.name, entry.description, entry.schema
                ));
            }
            for note in notes {
                text.push_str(&format!("\n\n{note}"));
            }
            Ok(ToolOutput::text(text))
        })
    }
}
