//! Real MCP servers beyond the filesystem one: npm `@modelcontextprotocol/server-everything`
//! (a long-running tool cancelled with Ctrl-C after its progress notifications, a large
//! result truncated, image content), PyPI `mcp-server-git` and `mcp-server-time` (from the
//! venv scripts/test.sh makes), and `atto mcp serve` driven by the Python `mcp` SDK's
//! client.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use crate::common::{Env, call, calls, events, of_type, stderr, tool_results};
use crate::mcp::{add_config, go, have_peer};

fn with_everything(env: &Env, test: &str) -> bool {
    let Some(server) = have_peer(
        test,
        "mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        "npm @modelcontextprotocol/server-everything",
    ) else {
        return false;
    };
    add_config(
        env,
        &format!(
            "\n[mcp_servers.every]\ncommand = \"node\"\nargs = [{:?}]\n",
            server.display().to_string()
        ),
    );
    true
}

#[test]
fn ctrl_c_cancels_a_long_running_mcp_call_after_its_progress() {
    let mut env = Env::new();
    if !with_everything(&env, "ctrl_c_cancels_a_long_running_mcp_call") {
        return;
    }
    env.serve(Script::new(vec![
        calls(vec![call(
            "mcp__every__trigger-long-running-operation",
            json!({"duration": 60, "steps": 60}),
        )]),
        Reply::text("never"),
    ]));
    let mut child = go(&env, &["--permission", "auto-safe"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    // Wait for the server's second progress report, then press Ctrl-C.
    let mut progress = 0;
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["type"] == "mcp_progress" {
            progress += 1;
            assert_eq!(event["server"], "every");
            assert_eq!(event["total"], 60.0);
        }
        seen.push(event);
        if progress == 2 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "no progress: {seen:?}"
        );
    }
    let ok = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    seen.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "the 60 s operation was not cut short"
    );
    let done: Vec<&Value> = of_type(&seen, "tool_call_finished");
    assert_eq!(done.len(), 1, "{seen:?}");
    assert_eq!(done[0]["status"], "cancelled", "{done:?}");
}

#[test]
fn large_results_are_truncated_and_images_become_a_note() {
    let mut env = Env::new();
    if !with_everything(&env, "large_results_are_truncated") {
        return;
    }
    let big = "word ".repeat(60_000);
    env.serve(Script::new(vec![
        calls(vec![
            call("mcp__every__echo", json!({ "message": big })),
            call("mcp__every__get-tiny-image", json!({})),
        ]),
        Reply::text("done"),
    ]));
    let out = go(&env, &["--permission", "auto-safe"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&env, 1);
    assert!(results[0].len() < big.len() / 2, "{}", results[0].len());
    assert!(
        results[0].contains("output truncated"),
        "{}",
        &results[0][..200]
    );
    assert!(
        results[1].contains("[image: image/png,") && results[1].contains("not shown"),
        "{}",
        results[1]
    );
    assert!(
        !results[1].contains("iVBOR"),
        "the base64 stays out of the context"
    );
}

#[test]
fn python_git_and_time_servers_answer() {
    let mut env = Env::new();
    let bin = "mcp-venv/bin";
    let (Some(git), Some(time)) = (
        have_peer(
            "python_git_and_time_servers",
            &format!("{bin}/mcp-server-git"),
            "PyPI mcp-server-git",
        ),
        have_peer(
            "python_git_and_time_servers",
            &format!("{bin}/mcp-server-time"),
            "PyPI mcp-server-time",
        ),
    ) else {
        return;
    };
    add_config(
        &env,
        &format!(
            "\n[mcp_servers.git]\ncommand = {:?}\n\n[mcp_servers.time]\ncommand = {:?}\n",
            git.display().to_string(),
            time.display().to_string()
        ),
    );
    env.write("tracked.txt", "x");
    let repo = env.repo().display().to_string();
    env.serve(Script::new(vec![
        calls(vec![
            call("mcp__git__git_status", json!({ "repo_path": repo })),
            call("mcp__time__get_current_time", json!({ "timezone": "UTC" })),
        ]),
        Reply::text("done"),
    ]));
    // Interactive with every question refused: both tools say they are read-only.
    let out = go(&env, &["--permission", "interactive", "--on-ask", "deny"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(of_type(&events(&out), "approval_required").is_empty());
    let results = tool_results(&env, 1);
    assert!(results[0].contains("tracked.txt"), "{}", results[0]);
    assert!(
        results[1].contains("\"timezone\": \"UTC\""),
        "{}",
        results[1]
    );
}

/// The Python client: lists atto's tools, reads a file, asks the classifier, and tries
/// `atto_exec` (off unless the serving user enables it).
const CLIENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            out = {"tools": {t.name: t.annotations.read_only_hint for t in tools}}
            res = await s.call_tool("read_file", {"path": "notes.txt"})
            out["read"] = [res.content[0].text, res.is_error]
            res = await s.call_tool("read_file", {"path": "../outside.txt"})
            out["outside"] = [res.content[0].text, res.is_error]
            res = await s.call_tool("policy_explain", {"command": "rm -rf /"})
            out["explain"] = json.loads(res.content[0].text)["risk"]
            res = await s.call_tool("atto_exec", {"task": "hi"})
            out["exec"] = [res.content[0].text, res.is_error]
            print(json.dumps(out))

asyncio.run(main())
"#;

#[test]
fn atto_mcp_serve_answers_the_python_sdk_client() {
    let Some(python) = have_peer("atto_mcp_serve", "mcp-venv/bin/python", "PyPI mcp (venv)") else {
        return;
    };
    let env = Env::new();
    env.write("notes.txt", "served notes\n");
    std::fs::write(env.dir.path().join("outside.txt"), "secret").unwrap();
    let client = env.dir.path().join("client.py");
    std::fs::write(&client, CLIENT).unwrap();
    // The client starts `atto mcp serve` itself, with the test's environment.
    let base = env.atto();
    let mut cmd = std::process::Command::new(&python);
    cmd.current_dir(env.repo());
    for (key, value) in base.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let out = cmd
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_atto"))
        .args(["mcp", "serve"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["tools"],
        json!({"read_file": true, "list_files": true, "glob": true, "grep": true, "policy_explain": true})
    );
    assert!(answer["read"][0].as_str().unwrap().contains("served notes"));
    assert_eq!(answer["read"][1], false);
    assert_eq!(answer["outside"][1], true, "{answer}");
    assert!(
        answer["outside"][0]
            .as_str()
            .unwrap()
            .contains("outside the workspace")
    );
    assert_eq!(answer["explain"], "BLOCK");
    assert_eq!(answer["exec"][1], true);
    assert!(answer["exec"][0].as_str().unwrap().contains("not enabled"));
}

#[test]
fn a_streamable_http_server_with_a_header_from_the_environment() {
    let Some(server) = have_peer(
        "a_streamable_http_server",
        "mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        "npm @modelcontextprotocol/server-everything",
    ) else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut http = std::process::Command::new("node")
        .arg(&server)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the HTTP server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut env = Env::new();
    add_config(
        &env,
        &format!(
            "\n[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ X-Bench = \"${{MCP_TEST_HEADER}}\" }}\n"
        ),
    );
    env.serve(Script::new(vec![
        calls(vec![call("mcp__web__get-sum", json!({"a": 2, "b": 40}))]),
        Reply::text("done"),
    ]));
    let out = go(&env, &["--permission", "auto-safe"])
        .env("MCP_TEST_HEADER", "yes")
        .output()
        .unwrap();
    let _ = http.kill();
    let _ = http.wait();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&env, 1);
    assert!(results[0].contains("42"), "{results:?}");
    // Without the variable the server is not started, and says why.
    env.serve(Script::new(vec![
        calls(vec![call("mcp__web__get-sum", json!({"a": 2, "b": 40}))]),
        Reply::text("done"),
    ]));
    // (Its tools were never listed, so the call asks; answered yes.)
    let out = go(&env, &["--permission", "interactive", "--on-ask", "allow"])
        .env_remove("MCP_TEST_HEADER")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&env, 1);
    assert!(
        results[0].contains("MCP_TEST_HEADER is not set"),
        "{results:?}"
    );
}

/// The Python client runs a task through `atto_exec`, which the serving user enabled
/// with the mode and permission the task runs under.
const EXEC_CLIENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            exec_tool = tools["atto_exec"]
            res = await s.call_tool("atto_exec", {"task": "say hi"})
            print(json.dumps({
                "params": sorted(exec_tool.input_schema["properties"].keys()),
                "read_only": exec_tool.annotations.read_only_hint,
                "answer": [res.content[0].text, res.is_error],
            }))

asyncio.run(main())
"#;

#[test]
fn atto_exec_runs_a_task_under_the_serving_sides_mode() {
    let Some(python) = have_peer(
        "atto_exec_runs_a_task",
        "mcp-venv/bin/python",
        "PyPI mcp (venv)",
    ) else {
        return;
    };
    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("hello from the served task")]));
    let client = env.dir.path().join("exec_client.py");
    std::fs::write(&client, EXEC_CLIENT).unwrap();
    let base = env.atto();
    let mut cmd = std::process::Command::new(&python);
    cmd.current_dir(env.repo());
    for (key, value) in base.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let url = env.base("chat");
    let out = cmd
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_atto"))
        .args([
            "--base-url",
            &url,
            "--model",
            "m",
            "mcp",
            "serve",
            "--allow-exec",
        ])
        .args(["--exec-mode", "review"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["params"],
        json!(["task"]),
        "the caller sets nothing but the task"
    );
    assert_eq!(answer["read_only"], false);
    assert_eq!(answer["answer"][1], false, "{answer}");
    assert!(
        answer["answer"][0]
            .as_str()
            .unwrap()
            .contains("hello from the served task")
    );
    // The task ran in the mode the serving side chose.
    let system = env.requests()[0].body.to_string();
    assert!(system.contains("REVIEW"), "{system}");
}
