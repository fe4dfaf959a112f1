//! Shared helpers for the binary's end-to-end tests: a temporary git workspace, a
//! scripted model server, and running the real `atto` binary with a clean environment.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use atto_testkit::{RecordedRequest, Reply, Script, ScriptToolCall, ScriptedServer};
use serde_json::Value;

pub struct Env {
    pub dir: tempfile::TempDir,
    pub runtime: tokio::runtime::Runtime,
    pub server: Option<ScriptedServer>,
}

impl Env {
    /// A temp dir holding `home/` (config) and `repo/` (a git repository).
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home/.config/atto")).unwrap();
        std::fs::create_dir_all(dir.path().join("repo")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let ok = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path().join("repo"))
            .status()
            .unwrap();
        assert!(ok.success());
        // Fast retries so fault tests take milliseconds.
        std::fs::write(
            dir.path().join("home/.config/atto/config.toml"),
            "[retry]\nmax_attempts = 4\nbase_delay_ms = 1\nmax_delay_ms = 5\n",
        )
        .unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        Env {
            dir,
            runtime,
            server: None,
        }
    }

    pub fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.repo().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.repo().join(rel)).unwrap()
    }

    pub fn serve(&mut self, script: Script) -> String {
        let server = self
            .runtime
            .block_on(ScriptedServer::start(script))
            .unwrap();
        let url = server.base_url();
        self.server = Some(server);
        url
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.as_ref().unwrap().requests()
    }

    /// `atto` with HOME and XDG_CONFIG_HOME in the temp dir and no API keys set.
    pub fn atto(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_atto"));
        cmd.current_dir(self.repo());
        for (key, _) in std::env::vars() {
            if key.ends_with("_API_KEY") || key.starts_with("ATTO_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", self.dir.path().join("home"));
        cmd.env("ATTO_HOME", self.dir.path().join("home/atto-data"));
        // The sandbox lets commands write to the temp dir: keep it apart from the rest of
        // this test's directory, so "outside" really is outside.
        cmd.env("TMPDIR", self.dir.path().join("tmp"));
        cmd.env("XDG_CONFIG_HOME", self.dir.path().join("home/.config"));
        cmd.stdin(std::process::Stdio::null());
        cmd
    }

    /// The scripted server's base URL for `wire`.
    pub fn base(&self, wire: &str) -> String {
        let base = self.server.as_ref().unwrap().base_url();
        if wire == "anthropic" {
            base
        } else {
            format!("{base}/v1")
        }
    }

    /// `atto exec <flags> --base-url <chat wire> --model m <task>` against the
    /// scripted server.
    pub fn exec_with(&self, flags: &[&str], task: &str) -> Command {
        let mut cmd = self.atto();
        cmd.arg("exec")
            .args(flags)
            .args(["--base-url", &self.base("chat"), "--model", "m", task]);
        cmd
    }

    /// `atto exec --permission auto-safe --output-format stream-json` against the
    /// scripted server with `wire`.
    pub fn exec(&self, wire: &str, task: &str) -> Output {
        self.atto()
            .args([
                "exec",
                "--permission",
                "auto-safe",
                "--output-format",
                "stream-json",
            ])
            .args(["--base-url", &self.base(wire), "--wire", wire])
            .args(["--model", "scripted-model", task])
            .output()
            .unwrap()
    }
}

/// The stream-json lines of a run, parsed.
pub fn events(output: &Output) -> Vec<Value> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad json line {l:?}: {e}")))
        .collect()
}

pub fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A tool call for a scripted reply.
pub fn call(name: &str, arguments: Value) -> ScriptToolCall {
    ScriptToolCall {
        id: None,
        name: name.to_owned(),
        arguments,
        raw_arguments: None,
    }
}

/// A reply that makes `calls` and says nothing.
pub fn calls(calls: Vec<ScriptToolCall>) -> Reply {
    Reply {
        tool_calls: calls,
        ..Reply::default()
    }
}

/// The line session against the scripted server (chat wire) as `model`, with `args`
/// after those; stdin, stdout and stderr piped.
pub fn spawn_line_session(env: &Env, model: &str, args: &[&str]) -> Child {
    env.atto()
        .args(["--base-url", &env.base("chat"), "--model", model])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// [`spawn_line_session`] fed `lines` on stdin, run until stdin ends; asserts it exits 0.
pub fn run_line_session(env: &Env, model: &str, args: &[&str], lines: &str) -> Output {
    feed_to_the_end(spawn_line_session(env, model, args), lines)
}

/// Writes `lines` to `child`'s stdin and closes it, waits for it to exit and asserts it
/// exited 0. Written from a thread: a long script may not fit the pipe's buffer.
pub fn feed_to_the_end(mut child: Child, lines: &str) -> Output {
    use std::io::Write as _;
    let mut stdin = child.stdin.take().unwrap();
    let lines = lines.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(lines.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

/// Runs the line session (`--permission auto-safe`, chat wire) with `lines` on stdin;
/// asserts it exits 0 and returns stderr, where command answers and progress go.
pub fn line_session(env: &Env, lines: &str) -> String {
    stderr(&run_line_session(
        env,
        "m",
        &["--permission", "auto-safe"],
        lines,
    ))
}

/// The tool results atto sent in request `n` of the scripted server (chat wire).
pub fn tool_results(env: &Env, n: usize) -> Vec<String> {
    env.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

/// A reply that writes "x" to `path`.
pub fn writes(path: &str) -> Reply {
    calls(vec![call(
        "write_file",
        serde_json::json!({"path": path, "content": "x\n"}),
    )])
}
