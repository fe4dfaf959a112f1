//! `.mcp.json` from a cloned repository: servers or a one-line error naming the file or
//! the server, for any text and for JSON built from the format's own keys.
#![no_main]

use std::path::Path;

use atto_mcp::parse_mcp_json;
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "mcpServers",
    "servers",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "type",
    "stdio",
    "http",
    "sse",
    "streamable-http",
    "headers",
    "timeout",
    "enabled",
    "tools",
    "${HOME}",
    "${X",
    "$HOME",
    "npx",
    "./server",
    "../x",
    "/bin/sh",
    "",
];

fuzz_target!(|data: &[u8]| {
    let Some(text) = atto_fuzz::text(data, |u| Ok(atto_fuzz::object(u, WORDS, 0)?.to_string()))
    else {
        return;
    };
    let path = Path::new("/repo/.mcp.json");
    if let Err(e) = parse_mcp_json(&text, path, "project") {
        let shown = e.to_string();
        assert!(
            shown.contains(".mcp.json") || shown.starts_with("MCP server '"),
            "the error names neither the file nor the server: {shown}"
        );
        assert!(!shown.contains('\n'), "a multi-line error: {shown:?}");
    }
});
