//! Entry point for the fuzz target `acp_jsonrpc` under `fuzz/`: one line from the editor
//! read as the connection reads it, its params decoded as the typed request the handler
//! takes, and what atto's handler makes of them before any session is started or touched
//! (the prompt's text, the client's MCP servers, the mode, a permission answer). The
//! async server itself is not run: its routing only hands these values on.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{
    ClientNotification, ClientRequest, RequestPermissionOutcome, RequestPermissionResponse,
};
use agent_client_protocol::{
    JsonRpcMessage as _, RawJsonRpcMessage, RawJsonRpcParams, RawJsonRpcResponse, TransportFrame,
};
use atto_protocol::{AgentMode, ApprovalDecision};
use serde_json::Value;

use crate::{convert, prompt};

/// What atto does with one line from the editor.
#[derive(Debug)]
pub enum Received {
    /// Not one JSON-RPC message: the connection answers with an error.
    Malformed,
    /// A method atto's handlers do not take, or params that do not decode: the
    /// connection answers with an error and no handler runs.
    Refused,
    /// `session/new` or `session/load`: the MCP servers the starter is given, or the
    /// invalid-params error sent back.
    Session(Result<BTreeMap<String, Value>, String>),
    /// `session/prompt`: the text of the turn, or the invalid-params error sent back.
    Prompt(Result<String, String>),
    /// `session/set_mode`: the mode set, `None` for an id atto refuses.
    Mode { id: String, mode: Option<AgentMode> },
    /// A request or notification atto answers without reading its params further.
    Answered,
    /// A response to `session/request_permission`: the decision the gate is given
    /// (`None`: not a permission answer, so the question counts as unanswered).
    Permission(Option<(String, ApprovalDecision)>),
}

/// Reads `line` as the ACP connection would and runs atto's handling of its params.
pub fn receive(line: &str) -> Received {
    let message = match TransportFrame::parse_json(line) {
        TransportFrame::Single(message) => message,
        _ => return Received::Malformed,
    };
    match message {
        RawJsonRpcMessage::Request(request) => {
            let params = request
                .params
                .map_or(Value::Null, RawJsonRpcParams::into_value);
            match ClientRequest::parse_message(&request.method, &params) {
                Ok(request) => handle(request),
                Err(_) => Received::Refused,
            }
        }
        RawJsonRpcMessage::Notification(notification) => {
            let params = notification
                .params
                .map_or(Value::Null, RawJsonRpcParams::into_value);
            match ClientNotification::parse_message(&notification.method, &params) {
                Ok(_) => Received::Answered,
                Err(_) => Received::Refused,
            }
        }
        RawJsonRpcMessage::Response(RawJsonRpcResponse::Result { result, .. }) => {
            Received::Permission(
                match serde_json::from_value::<RequestPermissionResponse>(result) {
                    Ok(response) => match response.outcome {
                        RequestPermissionOutcome::Selected(selected) => {
                            let option = selected.option_id.0.to_string();
                            let decision = convert::decision(&option);
                            Some((option, decision))
                        }
                        _ => None,
                    },
                    Err(_) => None,
                },
            )
        }
        RawJsonRpcMessage::Response(_) => Received::Permission(None),
    }
}

fn handle(request: ClientRequest) -> Received {
    match request {
        ClientRequest::NewSessionRequest(r) => {
            Received::Session(convert::mcp_servers(&r.mcp_servers))
        }
        ClientRequest::LoadSessionRequest(r) => {
            Received::Session(convert::mcp_servers(&r.mcp_servers))
        }
        ClientRequest::PromptRequest(r) => Received::Prompt(prompt::text(&r.prompt)),
        ClientRequest::SetSessionModeRequest(r) => {
            let id = r.mode_id.0.to_string();
            let mode = convert::mode_from_id(&id);
            Received::Mode { id, mode }
        }
        _ => Received::Answered,
    }
}
