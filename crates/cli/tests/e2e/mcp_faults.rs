//! MCP servers that fail, through the front door: one whose binary does not exist, one
//! that exits at start, one that prints garbage instead of JSON-RPC, one that never
//! answers `tools/list`, one that dies in the middle of a call. Each is a clear one-line
//! message to the model and a status event to the user; the session goes on; the first
//! model request never waits for a server.

use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use crate::common::{Env, call, calls, events, of_type, stderr, tool_results};
use crate::mcp::{add_config, go};

/// A small MCP server in Python that misbehaves as `mode` says: `garbage` answers every
/// request with text that is not JSON-RPC, `silent` never answers `tools/list`, `dies`
/// exits when a tool is called; anything else works.
const FAKE_SERVER: &str = r#"
import json, os, sys
mode = sys.argv[1]
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if mode == "garbage":
        print("Welcome to my server! <html>not json</html>", flush=True)
        continue
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}}})
    elif method == "tools/list":
        if mode == "silent":
            continue
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [{
            "name": "work", "description": "does some work",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True}}]}})
    elif method == "tools/call":
        if mode == "dies-once" and not os.path.exists(sys.argv[2]):
            open(sys.argv[2], "w").close()
            sys.exit(4)
        if mode == "dies":
            sys.stderr.write("fake server: crashing on purpose\n")
            sys.exit(3)
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "content": [{"type": "text", "text": "worked"}]}})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
"#;

fn configure_faults(env: &Env, silent_timeout: u32) {
    let script = env.dir.path().join("fake_server.py");
    std::fs::write(&script, FAKE_SERVER).unwrap();
    let script = script.display().to_string();
    add_config(
        env,
        &format!(
            r#"
[mcp_servers.missing]
command = "/nonexistent/bin/mcp-server"

[mcp_servers.exits]
command = "sh"
args = ["-c", "echo 'fatal: no config' >&2; exit 3"]

[mcp_servers.garbage]
command = "python3"
args = [{script:?}, "garbage"]
startup_timeout = 2

[mcp_servers.silent]
command = "python3"
args = [{script:?}, "silent"]
startup_timeout = {silent_timeout}

[mcp_servers.dies]
command = "python3"
args = [{script:?}, "dies"]
"#
        ),
    );
}

#[test]
fn five_broken_servers_are_five_clear_lines_and_the_session_goes_on() {
    let mut env = Env::new();
    configure_faults(&env, 2);
    let names = ["missing", "exits", "garbage", "silent", "dies"];
    env.serve(Script::new(vec![
        calls(
            names
                .iter()
                .map(|n| call(&format!("mcp__{n}__work"), json!({})))
                .collect(),
        ),
        Reply::text("carried on"),
    ]));
    // A server that never listed its tools cannot vouch for them: each call asks
    // (answered yes here), then reports why it could not run.
    let out = go(&env, &["--permission", "interactive", "--on-ask", "allow"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let results = tool_results(&env, 1);
    assert_eq!(results.len(), 5, "{results:?}");
    let expect = [
        ("missing", "could not start `/nonexistent/bin/mcp-server`"),
        ("exits", "handshake failed"),
        ("garbage", "not JSON-RPC"),
        ("silent", "did not finish starting"),
        ("dies", "stopped during the call"),
    ];
    for ((name, needle), result) in expect.iter().zip(&results) {
        // The server's failure is the first line; self-correction may add its advice
        // below it.
        let line = result.lines().next().unwrap();
        assert!(line.contains(&format!("'{name}'")), "{name}: {result}");
        assert!(line.contains(needle), "{name}: {result}");
    }
    // Each server's failure reached the user as a status event with its error.
    for name in names {
        let down: Vec<&Value> = of_type(&evs, "mcp_server_status")
            .into_iter()
            .filter(|e| e["server"]["name"] == name && e["server"]["state"] == "down")
            .collect();
        assert!(!down.is_empty(), "{name}: {evs:?}");
        let error = down[0]["server"]["last_error"].as_str().unwrap();
        assert!(!error.contains('\n'), "{error}");
    }
    let last = of_type(&evs, "turn_completed");
    assert_eq!(last.last().unwrap()["status"], "completed", "{evs:?}");
    // stderr of the server went to its log file, not the terminal.
    assert!(!stderr(&out).contains("crashing on purpose"));
    let log = env.dir.path().join("home/atto-data/mcp-logs/dies.log");
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("crashing on purpose")
    );
}

#[test]
fn the_first_request_does_not_wait_for_servers() {
    let mut env = Env::new();
    // A server that would hold a waiting session for a minute.
    configure_faults(&env, 60);
    env.serve(Script::new(vec![Reply::text("hello")]));
    let started = Instant::now();
    let out = env
        .exec_with(&["--output-format", "stream-json"], "hi")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Far below the silent server's 60 s start-up bound: nothing waited for it.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(env.requests().len(), 1);
    // The servers still starting when the session ended were killed with it.
    let script = env.dir.path().join("fake_server.py").display().to_string();
    let alive = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .any(|cmd| String::from_utf8_lossy(&cmd).contains(&script))
    };
    let waited = Instant::now();
    while alive() && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(), "an MCP server outlived its session");
}

#[test]
fn a_server_that_died_mid_call_is_started_again_on_the_next_call() {
    let mut env = Env::new();
    let script = env.dir.path().join("fake_server.py");
    std::fs::write(&script, FAKE_SERVER).unwrap();
    let marker = env.dir.path().join("died-once");
    add_config(
        &env,
        &format!(
            "\n[mcp_servers.flaky]\ncommand = \"python3\"\nargs = [{:?}, \"dies-once\", {:?}]\n",
            script.display().to_string(),
            marker.display().to_string()
        ),
    );
    // Different arguments the second time: the same failed call is not repeated.
    let work = |n: u32| calls(vec![call("mcp__flaky__work", json!({ "attempt": n }))]);
    env.serve(Script::new(vec![work(1), work(2), Reply::text("done")]));
    let out = env
        .exec_with(&["--output-format", "stream-json"], "go")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = &tool_results(&env, 1)[0];
    assert!(first.contains("stopped during the call"), "{first}");
    let second = tool_results(&env, 2);
    assert_eq!(second.last().unwrap(), "worked", "{second:?}");
    let evs = events(&out);
    let states: Vec<&str> = of_type(&evs, "mcp_server_status")
        .iter()
        .map(|e| e["server"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["starting", "ready", "down", "starting", "ready"],
        "{evs:?}"
    );
}

#[test]
fn mcp_list_fails_naming_the_servers_down_and_shows_each_as_it_settles() {
    let env = Env::new();
    let script = env.dir.path().join("fake_server.py");
    std::fs::write(&script, FAKE_SERVER).unwrap();
    add_config(
        &env,
        &format!(
            r#"
[mcp_servers.missing]
command = "/nonexistent/bin/mcp-server"

[mcp_servers.silent]
command = "python3"
args = [{:?}, "silent"]
startup_timeout = 2
"#,
            script.display().to_string()
        ),
    );
    let out = env.atto().args(["mcp", "list"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("down: missing, silent") || err.contains("down: silent, missing"),
        "{err}"
    );
    // A progress line per server, the missing one long before the silent one gives up.
    let missing = err.find("missing: down").unwrap_or(usize::MAX);
    let silent = err.find("silent: down").unwrap_or(usize::MAX);
    assert!(missing < silent && silent < usize::MAX, "{err}");
}

#[test]
fn a_missing_server_is_reported_once() {
    let mut env = Env::new();
    add_config(
        &env,
        "\n[mcp_servers.missing]\ncommand = \"/nonexistent/bin/mcp-server\"\n",
    );
    env.serve(Script::new(vec![
        calls(vec![call("mcp__missing__work", json!({}))]),
        calls(vec![call("mcp__missing__work", json!({}))]),
        Reply::text("carried on"),
    ]));
    let out = go(&env, &["--permission", "yolo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let down = of_type(&evs, "mcp_server_status")
        .into_iter()
        .filter(|e| e["server"]["state"] == "down")
        .count();
    assert_eq!(down, 1, "{evs:?}");
}
