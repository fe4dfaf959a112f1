//! Requests from an MCP client to `atto mcp serve` (JSON-RPC lines): decoded as the server
//! decodes them, and `tools/list` and `tools/call` answered by the server's own handler on a
//! real workspace. Beyond no panic: only read-only tools are offered (never `atto_exec`
//! unless the serving user enabled it); a call changes no file of the workspace, never
//! shows a file from outside it (by a relative, absolute or symlinked path), never runs
//! `atto_exec`, and a tool not offered is refused by name.
#![no_main]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use arbitrary::Unstructured;
use atto_mcp::fuzzing::{Answer, answer};
use atto_tools::ToolRegistry;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

/// In a file beside the workspace, never inside it: a result holding it read outside.
const SECRET: &str = "OUTSIDE-THE-WORKSPACE-7f3a";

const METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "initialize",
    "ping",
    "notifications/initialized",
    "resources/list",
];

const TOOLS: &[&str] = &[
    "read_file",
    "list_files",
    "glob",
    "grep",
    "policy_explain",
    "atto_exec",
    "write_file",
    "edit_file",
    "bash",
    "apply_patch",
    "",
];

struct Fixture {
    _dir: PathBuf,
    workspace: PathBuf,
    words: Vec<&'static str>,
    /// What `tools/list` offers.
    offered: Vec<String>,
    runtime: tokio::runtime::Runtime,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("atto-fuzz-mcp-serve-{}", std::process::id()));
        let workspace = dir.join("ws");
        let outside = dir.join("outside");
        let made = std::fs::create_dir_all(workspace.join("src"))
            .and_then(|()| std::fs::create_dir_all(&outside))
            .and_then(|()| std::fs::write(workspace.join("a.rs"), "fn main() {}\n"))
            .and_then(|()| std::fs::write(workspace.join("src/b.rs"), "// b\nlet x = 1;\n"))
            .and_then(|()| std::fs::write(outside.join("secret.txt"), SECRET))
            .and_then(|()| std::os::unix::fs::symlink(&outside, workspace.join("link")));
        if let Err(e) = made {
            panic!("the fixture workspace could not be made: {e}");
        }
        let outside_abs: &'static str = Box::leak(
            outside
                .join("secret.txt")
                .display()
                .to_string()
                .into_boxed_str(),
        );
        let mut words = vec![
            "path",
            "pattern",
            "command",
            "task",
            "offset",
            "limit",
            "include",
            "glob",
            "case_insensitive",
            "a.rs",
            "src/b.rs",
            "src",
            ".",
            "",
            "*",
            "**/*",
            "secret",
            "OUTSIDE",
            "link",
            "link/secret.txt",
            "../outside/secret.txt",
            "../outside",
            "/",
            "/etc/passwd",
            "ls; rm -rf ~",
            "cat a.rs",
        ];
        words.push(outside_abs);
        words.extend_from_slice(TOOLS);
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => panic!("no tokio runtime: {e}"),
        };
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let Answer::Listed(offered) = runtime.block_on(answer(&workspace, list)) else {
            panic!("tools/list is not answered with the tools");
        };
        Fixture {
            _dir: dir,
            workspace,
            words,
            offered,
            runtime,
        }
    })
}

/// Every file under `dir` (not following links) with its bytes.
fn files(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => files(&path, out),
            Ok(_) => {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
            Err(_) => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let fx = fixture();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let line = if mode & 1 == 0 {
        rest.to_vec()
    } else {
        let mut u = Unstructured::new(rest);
        let Ok(line) = structured(&mut u, &fx.words) else {
            return;
        };
        line.into_bytes()
    };
    let mut before = BTreeMap::new();
    files(&fx.workspace, &mut before);
    let answered = fx.runtime.block_on(answer(&fx.workspace, &line));
    let mut after = BTreeMap::new();
    files(&fx.workspace, &mut after);
    assert_eq!(before, after, "a call changed the workspace: {answered:?}");
    match answered {
        Answer::Listed(names) => {
            let registry = ToolRegistry::builtin();
            for name in &names {
                if name == "policy_explain" {
                    continue;
                }
                let Some(tool) = registry.get(name) else {
                    panic!("{name} is offered but is no built-in tool");
                };
                assert!(
                    tool.read_only(&json!({})),
                    "{name} is offered but not read-only"
                );
            }
        }
        Answer::Called { tool, error, text } => {
            // A result may quote the request (a pattern no file matched): only the
            // secret the request did not hold counts as read from outside.
            let asked = String::from_utf8_lossy(&line).contains(SECRET);
            assert!(
                asked || !text.contains(SECRET),
                "{tool} showed a file outside the workspace: {text}"
            );
            if tool == "atto_exec" {
                assert!(
                    error && text.contains("not enabled"),
                    "atto_exec ran: {text}"
                );
            }
            if tool != "atto_exec" && !fx.offered.contains(&tool) {
                assert!(
                    error && text.contains("no tool named"),
                    "{tool:?} ran: {text}"
                );
            }
            if tool == "policy_explain" && !error {
                assert!(
                    serde_json::from_str::<serde_json::Value>(&text).is_ok(),
                    "{text}"
                );
            }
        }
        Answer::NotAMessage | Answer::Other => {}
    }
});

/// A client request whose params are built from the tools' own argument names and paths.
fn structured(u: &mut Unstructured<'_>, words: &[&str]) -> arbitrary::Result<String> {
    let method = atto_fuzz::word(u, METHODS)?;
    let params = if method == "tools/call" && u.ratio(7, 8)? {
        json!({"name": atto_fuzz::word(u, TOOLS)?, "arguments": atto_fuzz::object(u, words, 0)?})
    } else {
        atto_fuzz::object(u, words, 0)?
    };
    let id = u.int_in_range(0..=3)?;
    Ok(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
}
