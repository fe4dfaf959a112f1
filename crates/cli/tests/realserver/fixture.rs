//! The real server (started and stopped through `scripts/realserver.sh`, one at a time)
//! and a throwaway workspace whose config points `atto` at it.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

/// One llama-server at a time: it uses both cores, and the chroot's mounts are shared.
static SERIAL: Mutex<()> = Mutex::new(());

/// The prompt that makes the tiny model emit one `bash` call (with `TOOLS=1`).
pub const TOOL_PROMPT: &str = "Reply with exactly this and nothing else:\n<tool_call>\n\
     {\"name\": \"bash\", \"arguments\": {\"command\": \"echo run >> log.txt\"}}\n</tool_call>";

pub const WIRES: [&str; 3] = ["chat", "responses", "anthropic"];

/// How to start the server.
#[derive(Clone, Copy)]
pub struct ServerOptions {
    /// The Hermes-style template that turns a copied `<tool_call>` into real tool calls.
    pub tools: bool,
    /// Context size in tokens.
    pub ctx: u32,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            tools: false,
            ctx: 8192,
        }
    }
}

/// A running llama-server on a free port; stopped on drop (also when the test panics).
pub struct Server {
    pub port: u16,
    // Dropped after `Drop::drop` has stopped the server: the next test waits until then.
    _serial: MutexGuard<'static, ()>,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/realserver.sh")
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl Server {
    /// Starts the server, or returns `None` (after saying SKIPPED) when it is not set up.
    /// Under `CI=true` a server that is not set up fails the test.
    pub fn start(options: ServerOptions) -> Option<Server> {
        if std::env::var("ATTO_REALSERVER").as_deref() != Ok("1") {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "ATTO_REALSERVER is not set under CI: scripts/test.sh must set up the real \
                 server (scripts/realserver.sh setup) before the tests"
            );
            eprintln!("SKIPPED: real server not set up (run scripts/realserver.sh setup)");
            return None;
        }
        let serial = SERIAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let port = free_port();
        let server = Server {
            port,
            _serial: serial,
        };
        let out = server
            .script("start")
            .env("TOOLS", if options.tools { "1" } else { "0" })
            .env("CTX", options.ctx.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the real server did not start on {port}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Some(server)
    }

    fn script(&self, command: &str) -> Command {
        let mut cmd = Command::new("bash");
        cmd.arg(script()).arg(command);
        cmd.env("PORT", self.port.to_string());
        cmd
    }

    /// Kills the server process outright (SIGKILL), as a crash would.
    pub fn kill(&self) {
        let out = self.script("pid").output().unwrap();
        let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        assert!(out.status.success() && !pid.is_empty(), "no server pid");
        let status = Command::new("kill").args(["-9", &pid]).status().unwrap();
        assert!(status.success());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.script("stop").output();
    }
}

/// Limits written to the workspace's config.
#[derive(Clone, Copy)]
pub struct Limits {
    pub max_rounds: u32,
    pub max_output_tokens: u32,
}

/// A temp dir with `home/` (config pointing at the server) and `repo/` (a git repository).
pub struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    pub fn new(server: &Server, limits: Limits) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home/.config/atto", "repo", "tmp"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let ok = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path().join("repo"))
            .status()
            .unwrap();
        assert!(ok.success());
        // A provider table without api_key_env: llama-server needs no key. Retries are
        // fast and few so that fault tests take seconds.
        let config = format!(
            "provider = \"local\"\nmodel = \"smollm2\"\n\n\
             [providers.local]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire = \"chat\"\n\n\
             [limits]\nmax_rounds = {rounds}\nmax_output_tokens = {tokens}\n\n\
             [retry]\nmax_attempts = 2\nbase_delay_ms = 1\nmax_delay_ms = 5\n",
            port = server.port,
            rounds = limits.max_rounds,
            tokens = limits.max_output_tokens,
        );
        std::fs::write(dir.path().join("home/.config/atto/config.toml"), config).unwrap();
        Workspace { dir }
    }

    pub fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
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
        let home = self.dir.path().join("home");
        cmd.env("HOME", &home);
        cmd.env("ATTO_HOME", home.join("atto-data"));
        cmd.env("XDG_CONFIG_HOME", home.join(".config"));
        cmd.env("TMPDIR", self.dir.path().join("tmp"));
        cmd.stdin(Stdio::null());
        cmd
    }

    /// `atto exec --wire WIRE --output-format FORMAT [extra] PROMPT`.
    pub fn exec_command(&self, wire: &str, format: &str, extra: &[&str], prompt: &str) -> Command {
        let mut cmd = self.atto();
        cmd.args(["exec", "--wire", wire, "--output-format", format])
            .args(extra)
            .arg(prompt);
        cmd
    }

    pub fn exec(&self, wire: &str, format: &str, extra: &[&str], prompt: &str) -> Output {
        run_bounded(self.exec_command(wire, format, extra, prompt))
    }
}

/// Runs `cmd` to the end, killing it if it runs past two minutes.
pub fn run_bounded(mut cmd: Command) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    wait_bounded(child, Duration::from_secs(120))
}

/// Waits for `child` (stdout/stderr piped), killing it after `limit`.
pub fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let id = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        if rx.recv_timeout(limit).is_err() {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
        }
    });
    let started = Instant::now();
    let _ = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    let _ = tx.send(());
    assert!(
        started.elapsed() < limit,
        "atto ran past {limit:?} and was killed; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Reads stream-json lines from `child`'s stdout on a thread, handing each over as it arrives.
pub fn stream_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The stream-json lines of a run, parsed.
pub fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad json line {l:?}: {e}")))
        .collect()
}

pub fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

/// The last line, which must be the `result`.
pub fn result(events: &[Value]) -> &Value {
    let last = events.last().expect("no events");
    assert_eq!(last["type"], "result", "last line: {last}");
    last
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Everything a run said, for failure messages.
pub fn transcript(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        stderr(out)
    )
}
