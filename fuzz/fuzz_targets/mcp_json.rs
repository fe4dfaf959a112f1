//! `.mcp.json` from a cloned repository: servers or a one-line error naming the file or
//! the server, for any text and for JSON built from the format's own keys.
#![no_main]

use std::path::Path;

use arbitrary::Unstructured;
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
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = if mode & 1 == 0 {
        String::from_utf8_lossy(rest).into_owned()
    } else {
        let Ok(value) = atto_fuzz::object(&mut Unstructured::new(rest), WORDS, 0) else {
            return;
        };
        value.to_string()
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
