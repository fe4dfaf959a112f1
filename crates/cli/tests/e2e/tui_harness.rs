//! The terminal-UI tests' harness: a tmux server of its own per test (private socket),
//! keys sent as a user types them, the screen read back with bounded waits, and the
//! scripted model's requests.

use std::process::Command;
use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script};
use serde_json::Value;

use crate::common::Env;

/// How long a screen may take to show what a test waits for.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// A tmux server of its own with one window running an interactive shell.
pub(crate) struct Tmux {
    socket: String,
    /// The server's socket file, removed with the server.
    socket_path: Option<std::path::PathBuf>,
}

impl Tmux {
    /// A 100×30 window running a plain bash in the test's repository, with the test's
    /// HOME and data dir and nothing of the caller's environment.
    pub(crate) fn start(env: &Env) -> Tmux {
        let socket = format!("atto-test-{}-{}", std::process::id(), random_suffix());
        let mut tmux = Tmux {
            socket,
            socket_path: None,
        };
        let home = env.dir.path().join("home");
        let path = std::env::var("PATH").unwrap_or_default();
        let status = Command::new("tmux")
            .env_clear()
            .env("PATH", path)
            .env("HOME", &home)
            .env("ATTO_HOME", home.join("atto-data"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("TMPDIR", env.dir.path().join("tmp"))
            .env("TERM", "xterm-256color")
            .env("LANG", "C.UTF-8")
            .env("PS1", "$ ")
            .args(["-L", &tmux.socket, "-f", "/dev/null"])
            .args(["new-session", "-d", "-x", "100", "-y", "30", "-c"])
            .arg(env.repo())
            .args(["bash", "--norc", "--noprofile"])
            .status()
            .expect("tmux must be installed (scripts/test.sh installs it)");
        assert!(status.success(), "tmux did not start");
        let path = tmux.tmux(&["display", "-p", "#{socket_path}"]).stdout;
        tmux.socket_path = Some(String::from_utf8_lossy(&path).trim().into());
        tmux
    }

    pub(crate) fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap()
    }

    /// Sends key names (`Enter`, `Escape`, `Tab`, `C-c`, …).
    pub(crate) fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
        // Keys sent back to back can merge into one escape sequence (Esc + x = Alt-x).
        std::thread::sleep(Duration::from_millis(60));
    }

    /// Types `text` literally.
    pub(crate) fn type_text(&self, text: &str) {
        assert!(
            self.tmux(&["send-keys", "-t", "0", "-l", text])
                .status
                .success()
        );
        std::thread::sleep(Duration::from_millis(60));
    }

    /// Types a line and presses Enter.
    pub(crate) fn line(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Enter"]);
    }

    pub(crate) fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "0"]).stdout).into_owned()
    }

    /// Polls the screen until `pred` holds; fails with the screen after `WAIT`.
    pub(crate) fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn wait_for(&self, needle: &str) -> String {
        self.wait(&format!("{needle:?}"), |s| s.contains(needle))
    }

    /// Like `wait_for`, then until two captures 200 ms apart agree: a capture can catch a
    /// frame half written (a dialog's title drawn, its last rows not yet), and what a test
    /// asserts of a whole dialog must be read from the whole frame.
    pub(crate) fn wait_settled(&self, needle: &str) -> String {
        let start = Instant::now();
        let mut screen = self.wait_for(needle);
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let next = self.screen();
            if next == screen || start.elapsed() >= WAIT {
                return next;
            }
            screen = next;
        }
    }

    /// Whether the window shows the alternate screen (a full-screen program is up).
    pub(crate) fn alternate_on(&self) -> bool {
        let out = self.tmux(&["display", "-p", "-t", "0", "#{alternate_on}"]);
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }

    /// Starts atto against the scripted server and waits for its composer.
    pub(crate) fn atto(&self, env: &Env, args: &[&str]) {
        self.line(&atto_line(env, args));
        self.wait_for(atto_tui::PLACEHOLDER);
        assert!(self.alternate_on());
    }

    /// The last line of the screen that is not blank: the status line.
    pub(crate) fn status_line(&self) -> String {
        self.screen()
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_owned()
    }

    /// Leaves atto with `/exit` and checks the shell is back and usable.
    pub(crate) fn exit_and_check_shell(&self) {
        self.keys(&["C-u"]);
        self.line("/exit");
        self.wait("the main screen", |_| !self.alternate_on());
        self.line("echo shell-ok-$((40 + 2))");
        self.wait_for("shell-ok-42");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        if let Some(path) = &self.socket_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn random_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    h.finish()
}

/// The shell line that runs atto with `args` (a subcommand among them goes first)
/// against the scripted server.
pub(crate) fn atto_line(env: &Env, args: &[&str]) -> String {
    let mut line = env!("CARGO_BIN_EXE_atto").to_owned();
    for arg in args {
        line.push(' ');
        line.push_str(arg);
    }
    line.push_str(" --base-url ");
    line.push_str(&env.base("chat"));
    line.push_str(" --model scripted-model");
    line
}

/// Serves `replies`, then starts atto with `args` in a window of its own and waits for
/// its composer.
pub(crate) fn start_atto(env: &mut Env, replies: Vec<Reply>, args: &[&str]) -> Tmux {
    env.serve(Script::new(replies));
    let tmux = Tmux::start(env);
    tmux.atto(env, args);
    tmux
}

/// The text of the user messages the model received in request `n` (chat wire).
pub(crate) fn user_messages(env: &Env, n: usize) -> Vec<String> {
    contents(env, n, "user")
}

/// The tool results atto sent in request `n` (chat wire).
pub(crate) fn tool_results(env: &Env, n: usize) -> Vec<String> {
    contents(env, n, "tool")
}

/// The content of each message with `role` in request `n`, as text.
fn contents(env: &Env, n: usize, role: &str) -> Vec<String> {
    env.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == role)
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}
