//! MCP through the front door: the real `@modelcontextprotocol/server-filesystem` (npm,
//! installed by scripts/test.sh under target/peers) configured in `config.toml`, a
//! scripted model calling its tools by their `mcp__server__tool` names. Reads run; a
//! write is queued in plan mode, asks in interactive mode and is refused in review mode;
//! the first request carries the search tool, not the servers' schemas, and stays under
//! 10 KB; `/mcp` lists the server; a project's `.mcp.json` runs only once trusted.

use std::path::PathBuf;

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use crate::common::{Env, call, calls, events, of_type, run_line_session, stderr, tool_results};

/// Where scripts/test.sh installs the MCP servers the tests drive.
pub(crate) fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/peers")
}

/// Whether `path` (under the peers dir) is installed; fails under CI when it is not,
/// says SKIPPED otherwise.
pub(crate) fn have_peer(test: &str, path: &str, what: &str) -> Option<PathBuf> {
    let full = peers().join(path);
    if full.exists() {
        return Some(full);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what} is missing under CI ({} does not exist): scripts/test.sh must install it",
        full.display()
    );
    atto_testkit::skipped(&format!("e2e mcp::{test}"), &format!("{what} is missing"));
    None
}

/// The filesystem server's entry point, or `None` (skipped).
pub(crate) fn filesystem_server(test: &str) -> Option<PathBuf> {
    have_peer(
        test,
        "mcp-npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
        "npm @modelcontextprotocol/server-filesystem",
    )
}

/// Appends `text` to the test's user config.
pub(crate) fn add_config(env: &Env, text: &str) {
    let path = env.dir.path().join("home/.config/atto/config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(text);
    std::fs::write(path, config).unwrap();
}

/// Configures the filesystem server as `fs`, rooted at the repository.
fn with_filesystem(env: &Env, server: &std::path::Path) {
    add_config(
        env,
        &format!(
            "\n[mcp_servers.fs]\ncommand = \"node\"\nargs = [{:?}, {:?}]\n",
            server.display().to_string(),
            env.repo().display().to_string()
        ),
    );
}

/// `atto exec` with `flags`, stream-json out, the task "go".
pub(crate) fn go(env: &Env, flags: &[&str]) -> std::process::Command {
    env.exec_with(
        &[flags, &["--output-format", "stream-json"][..]].concat(),
        "go",
    )
}

fn run(env: &Env, flags: &[&str]) -> std::process::Output {
    go(env, flags).output().unwrap()
}

fn finished<'a>(evs: &'a [Value], name: &str) -> Vec<&'a Value> {
    of_type(evs, "tool_call_finished")
        .into_iter()
        .filter(|e| e["name"] == name)
        .collect()
}

#[test]
fn filesystem_tools_list_and_read_through_mcp() {
    let Some(server) = filesystem_server("filesystem_tools_list_and_read_through_mcp") else {
        return;
    };
    let mut env = Env::new();
    with_filesystem(&env, &server);
    env.write("notes.txt", "the secret word is heliotrope\n");
    let repo = env.repo().display().to_string();
    env.serve(Script::new(vec![
        calls(vec![
            call("mcp__fs__list_directory", json!({ "path": repo })),
            call(
                "mcp__fs__read_text_file",
                json!({ "path": format!("{repo}/notes.txt") }),
            ),
        ]),
        Reply::text("done"),
    ]));
    // Interactive, and every question answered "no": the reads must not ask.
    let out = run(&env, &["--permission", "interactive", "--on-ask", "deny"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    assert!(of_type(&evs, "approval_required").is_empty(), "{evs:?}");
    let results = tool_results(&env, 1);
    assert!(results[0].contains("[FILE] notes.txt"), "{results:?}");
    assert!(results[1].contains("heliotrope"), "{results:?}");
    // The first request offers the search tool, not the server's schemas, and fits the
    // budget.
    let first = &env.requests()[0];
    let names: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mcp_tool_search"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    let size = serde_json::to_vec(&first.body).unwrap().len();
    assert!(size <= 10 * 1024, "first request is {size} bytes");
    // The server said it started, once.
    let ready: Vec<_> = of_type(&evs, "mcp_server_status")
        .into_iter()
        .filter(|e| e["server"]["state"] == "ready")
        .collect();
    assert_eq!(ready.len(), 1, "{evs:?}");
    assert_eq!(ready[0]["server"]["name"], "fs");
}

#[test]
fn a_write_tool_is_queued_in_plan_mode_asks_in_interactive_and_is_refused_in_review() {
    let Some(server) = filesystem_server("a_write_tool_is_queued_in_plan_mode") else {
        return;
    };
    let write = |env: &Env| {
        call(
            "mcp__fs__write_file",
            json!({ "path": format!("{}/out.txt", env.repo().display()), "content": "x" }),
        )
    };
    // Plan mode: queued as a proposed change, nothing written.
    let mut env = Env::new();
    with_filesystem(&env, &server);
    env.serve(Script::new(vec![
        calls(vec![write(&env)]),
        Reply::text("planned"),
    ]));
    let out = run(&env, &["--mode", "plan"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let queued = of_type(&evs, "change_queued");
    assert_eq!(queued.len(), 1, "{evs:?}");
    assert_eq!(queued[0]["change"]["tool"], "mcp__fs__write_file");
    assert!(!env.repo().join("out.txt").exists());
    // Approved where the server is not configured: nothing runs, the change stays
    // pending with the reason.
    let config = env.dir.path().join("home/.config/atto/config.toml");
    let with_server = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, "").unwrap();
    let unavailable = env
        .atto()
        .args(["plan", "approve", "--session", "latest"])
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        stderr(&unavailable),
        String::from_utf8_lossy(&unavailable.stdout)
    );
    assert!(said.contains("still pending"), "{said}");
    assert!(!env.repo().join("out.txt").exists());
    std::fs::write(&config, with_server).unwrap();
    // Approved from another process, which has not searched for the deferred tool: its
    // server is started and the change applied.
    let approved = env
        .atto()
        .args(["plan", "approve", "--session", "latest"])
        .output()
        .unwrap();
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert_eq!(env.read("out.txt"), "x", "{}", stderr(&approved));

    // Interactive: asked; a "no" leaves the file unwritten, a "yes" writes it.
    for (answer, written) in [("deny", false), ("allow", true)] {
        let mut env = Env::new();
        with_filesystem(&env, &server);
        env.serve(Script::new(vec![
            calls(vec![write(&env)]),
            Reply::text("ok"),
        ]));
        let out = run(&env, &["--permission", "interactive", "--on-ask", answer]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let evs = events(&out);
        let asked = of_type(&evs, "approval_required");
        assert_eq!(asked.len(), 1, "{answer}: {evs:?}");
        assert_eq!(asked[0]["tool"], "mcp__fs__write_file");
        assert_eq!(env.repo().join("out.txt").exists(), written, "{answer}");
    }

    // Review: refused, never asked.
    let mut env = Env::new();
    with_filesystem(&env, &server);
    env.serve(Script::new(vec![
        calls(vec![write(&env)]),
        Reply::text("ok"),
    ]));
    let out = run(&env, &["--mode", "review", "--on-ask", "allow"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    assert!(of_type(&evs, "approval_required").is_empty());
    let done = finished(&evs, "mcp__fs__write_file");
    assert_eq!(done[0]["status"], "denied", "{done:?}");
    assert!(tool_results(&env, 1)[0].contains("REVIEW"));
    assert!(!env.repo().join("out.txt").exists());
}

#[test]
fn a_user_rule_makes_a_read_only_tool_ask_in_either_spelling() {
    let Some(server) = filesystem_server("a_user_rule_makes_a_read_only_tool_ask") else {
        return;
    };
    for rule in ["mcp__fs__read_text_file", "mcp_fs_read_text_file"] {
        let mut env = Env::new();
        with_filesystem(&env, &server);
        add_config(&env, &format!("\n[permissions]\nask = [\"{rule}\"]\n"));
        env.write("a.txt", "a");
        let path = format!("{}/a.txt", env.repo().display());
        env.serve(Script::new(vec![
            calls(vec![call(
                "mcp__fs__read_text_file",
                json!({ "path": path }),
            )]),
            Reply::text("ok"),
        ]));
        let out = run(&env, &["--permission", "interactive", "--on-ask", "deny"]);
        let evs = events(&out);
        assert_eq!(
            of_type(&evs, "approval_required").len(),
            1,
            "{rule}: {evs:?}"
        );
    }
}

#[test]
fn the_search_tool_finds_deferred_tools_and_appends_them() {
    let Some(server) = filesystem_server("the_search_tool_finds_deferred_tools") else {
        return;
    };
    let mut env = Env::new();
    with_filesystem(&env, &server);
    env.serve(Script::new(vec![
        calls(vec![call(
            "mcp_tool_search",
            json!({ "query": "directory tree" }),
        )]),
        Reply::text("found"),
    ]));
    let out = run(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let found = &tool_results(&env, 1)[0];
    assert!(found.contains("mcp__fs__directory_tree"), "{found}");
    assert!(
        found.contains("\"path\""),
        "the schema is in the result: {found}"
    );
    let names = |n: usize| -> Vec<String> {
        env.requests()[n].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (before, after) = (names(0), names(1));
    // Appended, never inserted: the earlier list is a prefix of the later one.
    assert_eq!(&after[..before.len()], &before[..]);
    assert!(after[before.len()..].contains(&"mcp__fs__directory_tree".to_owned()));
}

#[test]
fn slash_mcp_lists_servers_tools_and_annotations() {
    let Some(server) = filesystem_server("slash_mcp_lists_servers") else {
        return;
    };
    let mut env = Env::new();
    with_filesystem(&env, &server);
    add_config(
        &env,
        "\n[mcp_servers.gone]\ncommand = \"/nonexistent/mcp-server\"\n",
    );
    env.serve(Script::new(vec![
        calls(vec![call("mcp_tool_search", json!({ "query": "read" }))]),
        Reply::text("ok"),
    ]));
    // The search waits for both servers to settle, so /mcp after it sees them settled.
    let out = run_line_session(&env, "m", &["--permission", "auto-safe"], "search\n/mcp\n");
    let err = stderr(&out);
    assert!(
        err.contains("fs  ready  14 tools  stdio  config.toml"),
        "{err}"
    );
    assert!(
        err.contains("mcp__fs__read_text_file  safe, read-only"),
        "{err}"
    );
    assert!(err.contains("[readOnlyHint=true"), "{err}");
    assert!(
        err.contains("gone  down  0 tools") && err.contains("No such file or directory"),
        "{err}"
    );
}

#[test]
fn a_project_mcp_json_runs_only_once_trusted_and_trust_is_revocable() {
    let Some(server) = filesystem_server("a_project_mcp_json_runs_only_once_trusted") else {
        return;
    };
    let env = Env::new();
    let mcp_json = json!({"mcpServers": {"pfs": {
        "command": "node",
        "args": [server.display().to_string(), env.repo().display().to_string()]
    }}});
    env.write(".mcp.json", &mcp_json.to_string());
    let list = |env: &Env| {
        let out = env.atto().args(["mcp", "list"]).output().unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr(&out),
        )
    };
    let (out, err) = list(&env);
    assert!(out.contains("pfs  disabled"), "{out}");
    assert!(err.contains("atto mcp trust"), "{err}");
    let trusted = env.atto().args(["mcp", "trust"]).output().unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
    assert!(String::from_utf8_lossy(&trusted.stdout).contains("pfs: node"));
    assert!(list(&env).0.contains("pfs  ready  14 tools"));
    // A changed file needs trust again.
    env.write(".mcp.json", &format!("{mcp_json}\n"));
    assert!(list(&env).0.contains("pfs  disabled"));
    env.atto().args(["mcp", "trust"]).output().unwrap();
    assert!(list(&env).0.contains("pfs  ready"));
    env.atto().args(["mcp", "untrust"]).output().unwrap();
    assert!(list(&env).0.contains("pfs  disabled"));
}

#[test]
fn mcp_serve_takes_the_session_flags_after_serve_and_refuses_what_it_cannot_apply() {
    let env = Env::new();
    let out = env
        .atto()
        .args(["mcp", "serve", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--exec-mode"), "{help}");
    assert!(help.contains("--model"), "{help}");
    // After `serve` as before `mcp`: the model and the mode atto_exec's tasks run with.
    for args in [
        &[
            "mcp",
            "serve",
            "--allow-exec",
            "--mode",
            "plan",
            "--model",
            "m",
        ][..],
        &["--model", "m", "mcp", "serve", "--allow-exec"][..],
    ] {
        let (code, tools, err) = served_tools(&env, args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(tools.contains("atto_exec"), "{args:?}: {tools}\n{err}");
    }
    // What a served task never takes from the command line is refused, saying what does.
    let out = env
        .atto()
        .args(["mcp", "serve", "--allow-exec", "--yolo"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--exec-permission"),
        "{}",
        stderr(&out)
    );
    // Two answers to one question are refused rather than one silently winning.
    let out = env
        .atto()
        .args([
            "mcp",
            "serve",
            "--allow-exec",
            "--mode",
            "build",
            "--exec-mode",
            "plan",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// Runs `atto ARGS` as an MCP server for one `initialize` and one `tools/list`, then
/// closes its stdin: its exit code, what it answered and its stderr.
fn served_tools(env: &Env, args: &[&str]) -> (Option<i32>, String, String) {
    use std::io::Write as _;
    let mut child = env
        .atto()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    // Let it answer before the end of input ends the session.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
    )
}
