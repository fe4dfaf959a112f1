//! JSON-RPC from an editor (`atto acp`): each line read as the ACP connection reads it, its
//! params decoded as the handler's typed request, and atto's handling of them (prompt
//! text, the client's MCP servers, the mode, a permission answer). Beyond no panic: a
//! prompt taken is never blank; a mode set is the one named; only atto's own allow options
//! allow, and only the two "always" options save a grant; every MCP server handed to the
//! starter reads as a server entry and is taken or refused in one line.
#![no_main]

use std::collections::BTreeMap;

use arbitrary::Unstructured;
use atto_acp::fuzzing::{Received, receive};
use atto_protocol::{ApprovalDecision, GrantScope};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

const METHODS: &[&str] = &[
    "initialize",
    "authenticate",
    "session/new",
    "session/load",
    "session/prompt",
    "session/set_mode",
    "session/cancel",
    "session/list",
    "session/resume",
    "_atto/x",
    "",
];

const WORDS: &[&str] = &[
    "protocolVersion",
    "clientCapabilities",
    "sessionId",
    "cwd",
    "/work",
    "relative/dir",
    "mcpServers",
    "name",
    "command",
    "args",
    "env",
    "value",
    "headers",
    "url",
    "type",
    "http",
    "sse",
    "stdio",
    "prompt",
    "text",
    "resource_link",
    "resource",
    "uri",
    "mimeType",
    "blob",
    "image",
    "audio",
    "data",
    "modeId",
    "build",
    "plan",
    "review",
    "debug",
    "outcome",
    "selected",
    "cancelled",
    "optionId",
    "allow_once",
    "allow_session",
    "allow_project",
    "reject_once",
    "_meta",
    " ",
    "",
];

fuzz_target!(|data: &[u8]| {
    let Some(line) = atto_fuzz::text(data, structured) else {
        return;
    };
    match receive(&line) {
        Received::Prompt(Ok(text)) => assert!(!text.trim().is_empty(), "a blank prompt taken"),
        Received::Mode { id, mode: Some(m) } => assert_eq!(m.as_str(), id),
        Received::Permission(Some((option, decision))) => check_decision(&option, &decision),
        Received::Session(Ok(servers)) => check_servers(servers),
        _ => {}
    }
});

/// A request, notification or permission answer whose params are built from the protocol's
/// own keys and words; `session/new` with a list of MCP servers, each with a name of any
/// text (the servers are the deepest params atto reads).
fn structured(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    let mut params = atto_fuzz::object(u, WORDS, 0)?;
    let message = match u.int_in_range(0..=4)? {
        0 => json!({"jsonrpc": "2.0", "method": atto_fuzz::word(u, METHODS)?, "params": params}),
        1 => json!({"jsonrpc": "2.0", "id": 1, "result": params}),
        2 => {
            let mut servers = Vec::new();
            for _ in 0..u.int_in_range(0..=3)? {
                let mut server = atto_fuzz::object(u, WORDS, 2)?;
                if let Some(map) = server.as_object_mut() {
                    let name: String = u.arbitrary()?;
                    map.insert("name".into(), name.into());
                    for key in ["args", "env", "headers"] {
                        if u.ratio(1, 2)? {
                            let list = atto_fuzz::json(u, WORDS, 4)?;
                            map.insert(key.into(), json!([list]));
                        }
                    }
                }
                servers.push(server);
            }
            if let Some(map) = params.as_object_mut() {
                map.insert("cwd".into(), "/work".into());
                map.insert("mcpServers".into(), servers.into());
            }
            json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params})
        }
        _ => {
            json!({"jsonrpc": "2.0", "id": u.int_in_range(0..=3)?, "method": atto_fuzz::word(u, METHODS)?, "params": params})
        }
    };
    Ok(message.to_string())
}

fn check_decision(option: &str, decision: &ApprovalDecision) {
    match decision {
        ApprovalDecision::Yes => assert_eq!(option, "allow_once"),
        ApprovalDecision::Always { scope, rule } => {
            assert!(rule.is_none(), "the editor chose a rule: {rule:?}");
            match scope {
                GrantScope::Session => assert_eq!(option, "allow_session"),
                GrantScope::Project => assert_eq!(option, "allow_project"),
                other => panic!("{option:?} saved a {other:?} grant"),
            }
        }
        ApprovalDecision::No { .. } => {
            assert!(
                !matches!(option, "allow_once" | "allow_session" | "allow_project"),
                "{option:?} refused"
            );
        }
        ApprovalDecision::Edit { .. } => panic!("{option:?} edited the command"),
    }
}

/// What the starter does with the client's servers: each entry read as a server table,
/// then validated as every configured server is.
fn check_servers(servers: BTreeMap<String, Value>) {
    let mut tables = BTreeMap::new();
    for (name, entry) in servers {
        match serde_json::from_value::<atto_mcp::RawServer>(entry.clone()) {
            Ok(raw) => {
                tables.insert(name, raw);
            }
            Err(e) => panic!("atto's own entry for '{name}' does not read back: {e}: {entry}"),
        }
    }
    if let Err(e) = atto_mcp::from_tables(&tables, "the editor's session/new") {
        let shown = e.to_string();
        assert!(!shown.contains('\n'), "a multi-line error: {shown:?}");
    }
}
