//! `ToolSource`: tools that arrive while a session runs, such as those of MCP servers
//! that finish starting in the background. The session appends what a source offers to
//! its registry (never inserting, so the tool list the model saw stays a prefix of the
//! next one); the source owns how its tools are found, started and called.

use std::sync::Arc;

use atto_protocol::{Event, McpServerInfo};
use tokio::sync::mpsc;

use crate::{BoxFuture, CancellationToken, Tool};

/// External tools a session adopts as they become available.
pub trait ToolSource: Send + Sync {
    /// Every tool the source offers the model now, in a stable order: a tool once
    /// offered stays offered, later ones come after it. `room`: bytes of tool schemas the
    /// session's request may still take; tools that do not fit wait to be found.
    fn offered(&self, room: usize) -> Vec<Arc<dyn Tool>>;
    /// The tool called `name` when the source has one, waiting (a bounded time, or until
    /// `cancel` fires) for a server that is still starting. `None`: the source has no
    /// such tool.
    fn resolve<'a>(
        &'a self,
        name: &'a str,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Arc<dyn Tool>>>;
    /// Whether `name` is one of the source's tools by its spelling (so a call to it waits
    /// for [`Self::resolve`] rather than failing as unknown).
    fn claims(&self, name: &str) -> bool;
    /// The source's status events; the first caller (the root session) gets them.
    fn events(&self) -> Option<mpsc::UnboundedReceiver<Event>>;
    /// The servers behind the tools, as `/mcp` shows them.
    fn servers(&self) -> Vec<McpServerInfo>;
}
