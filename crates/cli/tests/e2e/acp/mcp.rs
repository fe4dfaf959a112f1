//! The editor's MCP servers: the ones `session/new` names join the session's MCP client
//! (the real npm filesystem server here), their tools called like any other; a transport
//! atto does not speak is refused by name.

use atto_testkit::{Reply, Script};
use serde_json::json;

use super::{have_client, prompt, run};
use crate::common::{Env, call};

/// The absolute path of `node` (ACP names a stdio server's command by path).
fn node() -> String {
    let out = std::process::Command::new("sh")
        .args(["-c", "command -v node"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn the_editors_mcp_servers_are_tools_of_the_session() {
    if !have_client("the_editors_mcp_servers") {
        return;
    }
    let Some(server) = crate::mcp::filesystem_server("acp_the_editors_mcp_servers") else {
        return;
    };
    let mut env = Env::new();
    env.write("notes.txt", "READ-THROUGH-THE-EDITORS-SERVER\n");
    let notes = env.repo().join("notes.txt");
    env.serve(Script::new(vec![
        Reply {
            text: Some("Reading it through the editor's server.".into()),
            tool_calls: vec![call(
                "mcp__editorfs__read_text_file",
                json!({ "path": notes }),
            )],
            ..Reply::default()
        },
        Reply::text("done"),
    ]));
    let repo = env.repo().display().to_string();
    let steps = vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "mcpServers": [{
            "name": "editorfs", "command": node(),
            "args": [server.display().to_string(), repo], "env": []
        }]}),
        prompt("read the notes"),
        json!({"op": "new", "mcpServers": [{
            "type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []
        }]}),
    ];
    let seen = run(
        &env,
        &["--permission", "auto-safe"],
        json!({ "steps": steps }),
    );
    assert_eq!(seen.result(2)["stopReason"], "end_turn", "{}", seen.dump());
    let calls = seen.updates_of("tool_call");
    assert!(
        calls
            .iter()
            .any(|c| c["title"].as_str().unwrap_or("").contains("editorfs")
                || c["rawInput"].to_string().contains("notes.txt")),
        "{}",
        seen.dump()
    );
    let finished = seen.updates_of("tool_call_update");
    assert!(
        finished
            .iter()
            .any(|u| u.to_string().contains("READ-THROUGH-THE-EDITORS-SERVER")),
        "the file's text came back through the MCP server: {}",
        seen.dump()
    );
    let refused = seen.error(3);
    assert!(refused.to_string().contains("'old' uses SSE"), "{refused}");
}
