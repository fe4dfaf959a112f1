//! Entry point for the fuzz target `mcp_serve` under `fuzz/`: one line from an MCP client
//! decoded as `atto mcp serve` decodes it (rmcp's client message), and for `tools/list` and
//! `tools/call` the server's own answer, on a given workspace with `atto_exec` off (as
//! served unless the serving user enables it). The stdio loop itself is rmcp's.

use std::path::Path;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::{Value, json};

use super::{CancellationToken, ServeOptions, Served, served_tools};

/// What the server does with one line.
#[derive(Debug)]
pub enum Answer {
    /// Not a client message: rmcp answers with a parse error and calls no handler.
    NotAMessage,
    /// A message atto's handler leaves to rmcp (initialize, ping, notifications …).
    Other,
    /// `tools/list`: the names offered.
    Listed(Vec<String>),
    /// `tools/call`: the tool asked for and the result's error flag and text.
    Called {
        tool: String,
        error: bool,
        text: String,
    },
}

/// Decodes `line` and answers it as the server would, on `workspace`.
pub async fn answer(workspace: &Path, line: &[u8]) -> Answer {
    let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(line) else {
        return Answer::NotAMessage;
    };
    let served = Served {
        options: ServeOptions {
            workspace: workspace.to_path_buf(),
            exec: None,
        },
        tools: served_tools(),
    };
    let JsonRpcMessage::Request(request) = message else {
        return Answer::Other;
    };
    match request.request {
        ClientRequest::ListToolsRequest(_) => Answer::Listed(
            served
                .listed()
                .into_iter()
                .map(|t| t.name.into_owned())
                .collect(),
        ),
        ClientRequest::CallToolRequest(call) => {
            let args = call.params.arguments.map_or(json!({}), Value::Object);
            let result = served
                .call(&call.params.name, args, CancellationToken::new())
                .await;
            Answer::Called {
                tool: call.params.name.into_owned(),
                error: result.is_error == Some(true),
                text: result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect(),
            }
        }
        _ => Answer::Other,
    }
}
