//! Bad input written raw to `atto acp`: malformed JSON, unknown methods, a prompt before
//! `session/new`, and a client that closes stdin mid-turn. Each gets a clear JSON-RPC
//! error or an orderly end; stdout carries nothing but JSON-RPC; the session stays stored.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use super::query;
use crate::common::{Env, call};

/// `atto acp` with pipes, and its stdout lines arriving on a channel.
struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Peer {
    fn start(env: &Env) -> Peer {
        let mut child = env
            .atto()
            .args(["acp", "--base-url", &env.base("chat"), "--model", "m"])
            .args(["--permission", "auto-safe"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Peer {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message that `wanted` accepts; every line must be JSON.
    fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no {what} within 20 s; saw:\n{}", self.seen.join("\n"))
            });
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
            self.seen.push(line);
            if wanted(&value) {
                return value;
            }
        }
    }

    fn response(&mut self, id: u64) -> Value {
        self.wait_for(&format!("response {id}"), |v| v["id"] == id)
    }

    /// Closes stdin and waits (bounded) for the exit code.
    fn close(&mut self) -> i32 {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Whatever came after is still JSON-RPC only.
                while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    serde_json::from_str::<Value>(&line)
                        .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                }
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "atto acp did not exit within 20 s of stdin closing"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn initialize() -> String {
    request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    )
}

#[test]
fn malformed_json_unknown_methods_and_a_prompt_before_session_new_get_clear_errors() {
    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("hello")]));
    let mut peer = Peer::start(&env);
    peer.send("{ this is not json");
    let parse = peer.wait_for("a parse error", |v| v.get("error").is_some());
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    peer.send(&initialize());
    assert_eq!(peer.response(1)["result"]["protocolVersion"], 1);
    peer.send(&request(2, "session/fly", json!({})));
    let unknown = peer.response(2);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let prompt =
        json!({"sessionId": "no-such-session", "prompt": [{"type": "text", "text": "hi"}]});
    peer.send(&request(3, "session/prompt", prompt));
    let early = peer.response(3);
    assert_eq!(early["error"]["code"], -32602, "{early}");
    let data = early["error"]["data"].as_str().unwrap();
    assert!(data.contains("session/new"), "{data}");
    peer.send(&request(
        4,
        "session/new",
        json!({"cwd": "relative/dir", "mcpServers": []}),
    ));
    let relative = peer.response(4);
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
    // Still serving after all that.
    let cwd = env.repo();
    peer.send(&request(
        5,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    ));
    let new = peer.response(5);
    let id = new["result"]["sessionId"].as_str().unwrap().to_owned();
    let prompt = json!({"sessionId": id, "prompt": [{"type": "text", "text": "hi"}]});
    peer.send(&request(6, "session/prompt", prompt));
    assert_eq!(peer.response(6)["result"]["stopReason"], "end_turn");
    assert_eq!(peer.close(), 0);
    assert!(env.requests().len() == 1);
}

#[test]
fn a_client_that_closes_stdin_mid_turn_ends_the_session_and_it_stays_stored() {
    let mut env = Env::new();
    env.write("a.txt", "alpha\n");
    env.serve(Script::new(vec![
        Reply {
            text: Some("reading".into()),
            tool_calls: vec![call("read_file", json!({"path": "a.txt"}))],
            ..Reply::default()
        },
        Reply {
            delay_ms: 30_000,
            ..Reply::text("never seen")
        },
    ]));
    let mut peer = Peer::start(&env);
    peer.send(&initialize());
    peer.response(1);
    let cwd = env.repo();
    peer.send(&request(
        2,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    ));
    let id = peer.response(2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let prompt =
        json!({"sessionId": id, "prompt": [{"type": "text", "text": "read a.txt please"}]});
    peer.send(&request(3, "session/prompt", prompt));
    peer.wait_for("the read's completion", |v| {
        v["params"]["update"]["sessionUpdate"] == "tool_call_update"
            && v["params"]["update"]["status"] == "completed"
    });
    // One prompt at a time: a second one while the first runs is refused, not queued.
    let again = json!({"sessionId": id, "prompt": [{"type": "text", "text": "and this"}]});
    peer.send(&request(4, "session/prompt", again));
    let refused = peer.response(4);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["data"]
            .as_str()
            .unwrap()
            .contains("already running"),
        "{refused}"
    );
    let started = Instant::now();
    assert_eq!(peer.close(), 0);
    assert!(started.elapsed() < Duration::from_secs(15));
    let bodies = query(
        &env,
        &format!(
            "select m.body from messages m join threads t on m.thread_id = t.id \
             where t.session_id = '{id}' order by m.seq"
        ),
    );
    assert!(bodies[0].contains("read a.txt please"), "{bodies:?}");
    assert!(!bodies.iter().any(|b| b.contains("and this")), "{bodies:?}");
    assert!(bodies.iter().any(|b| b.contains("alpha")), "{bodies:?}");
}

/// The client's `cwd` becomes the workspace every file tool and command is confined to:
/// `/`, the home directory (also reached from a directory of a home kept in git), and
/// what holds the home directory are refused, unless the user's config names them.
#[test]
fn session_new_refuses_the_root_and_the_home_directory_as_a_workspace() {
    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("hello")]));
    let home = env.dir.path().join("home").canonicalize().unwrap();
    // A home kept in git: its subdirectories' workspace is the home itself.
    std::fs::create_dir_all(home.join(".git")).unwrap();
    std::fs::create_dir_all(home.join("notes")).unwrap();
    let mut peer = Peer::start(&env);
    peer.send(&initialize());
    peer.response(1);
    let cases = [
        (2, std::path::PathBuf::from("/")),
        (3, home.clone()),
        (4, home.join("notes")),
        (5, home.parent().unwrap().to_path_buf()),
    ];
    for (id, cwd) in &cases {
        peer.send(&request(
            *id,
            "session/new",
            json!({"cwd": cwd, "mcpServers": []}),
        ));
        let refused = peer.response(*id);
        let why = refused["error"]["data"].as_str().unwrap_or_default();
        assert!(
            why.contains("acp_allow_workspaces"),
            "{} was taken as a workspace: {refused}",
            cwd.display()
        );
    }
    // A project stays fine.
    peer.send(&request(
        6,
        "session/new",
        json!({"cwd": env.repo(), "mcpServers": []}),
    ));
    assert!(peer.response(6)["result"]["sessionId"].is_string());
    assert_eq!(peer.close(), 0);

    // The user's config may name the home directory; `/` stays refused unless named too.
    let config = env.dir.path().join("home/.config/atto/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.insert_str(
        0,
        &format!(
            "acp_allow_workspaces = [{:?}]\n",
            home.display().to_string()
        ),
    );
    std::fs::write(&config, text).unwrap();
    let mut peer = Peer::start(&env);
    peer.send(&initialize());
    peer.response(1);
    peer.send(&request(
        2,
        "session/new",
        json!({"cwd": home.join("notes"), "mcpServers": []}),
    ));
    let allowed = peer.response(2);
    assert!(allowed["result"]["sessionId"].is_string(), "{allowed}");
    peer.send(&request(
        3,
        "session/new",
        json!({"cwd": "/", "mcpServers": []}),
    ));
    assert!(peer.response(3).get("error").is_some());
    assert_eq!(peer.close(), 0);
}
