//! `atto acp` driven by the official ACP TypeScript client (`@agentclientprotocol/sdk`,
//! installed by scripts/test.sh into `target/peers/acp-npm`): `client.mjs` starts the
//! real binary against the scripted model server, runs a scenario, and reports every
//! update, permission request and response it received, which the tests assert on
//! together with the files and the store. Bad input is written raw (`raw.rs`), since the
//! SDK only sends well-formed messages.

mod agents;
mod flows;
mod mcp;
mod plan;
mod raw;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Env, stderr};

/// The SDK's package directory, where scripts/test.sh installs it.
fn sdk_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/peers/acp-npm/node_modules/@agentclientprotocol/sdk")
}

/// Whether node and the SDK are here; when not, the test is reported as skipped, or
/// fails under CI, where scripts/test.sh must have installed them.
pub(crate) fn have_client(test: &str) -> bool {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let sdk = sdk_dir().join("package.json").is_file();
    if node && sdk {
        return true;
    }
    let what = if node {
        "the npm package @agentclientprotocol/sdk (target/peers/acp-npm)"
    } else {
        "node"
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what} is missing under CI: scripts/test.sh must install it"
    );
    atto_testkit::skipped(&format!("e2e acp::{test}"), &format!("{what} is missing"));
    false
}

/// What the client saw.
pub(crate) struct Seen {
    pub entries: Vec<Value>,
}

impl Seen {
    /// The `session/update` payloads, in order.
    pub fn updates(&self) -> Vec<&Value> {
        self.entries
            .iter()
            .filter(|e| e["kind"] == "update")
            .map(|e| &e["params"]["update"])
            .collect()
    }

    /// The updates of one kind (`agent_message_chunk`, `tool_call` …).
    pub fn updates_of(&self, kind: &str) -> Vec<&Value> {
        self.updates()
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The text of every chunk of one kind, joined.
    pub fn text_of(&self, kind: &str) -> String {
        self.updates_of(kind)
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap_or(""))
            .collect()
    }

    /// Step `n`'s result, failing the test (with everything seen) when it errored.
    pub fn result(&self, n: usize) -> &Value {
        let entry = self.step(n);
        assert_eq!(
            entry["kind"],
            "result",
            "step {n}: {entry}\n{}",
            self.dump()
        );
        &entry["result"]
    }

    /// Step `n`'s error.
    pub fn error(&self, n: usize) -> &Value {
        let entry = self.step(n);
        assert_eq!(entry["kind"], "error", "step {n}: {entry}\n{}", self.dump());
        &entry["error"]
    }

    fn step(&self, n: usize) -> &Value {
        self.entries
            .iter()
            .find(|e| e["step"] == n && (e["kind"] == "result" || e["kind"] == "error"))
            .unwrap_or_else(|| panic!("no answer to step {n}:\n{}", self.dump()))
    }

    /// The permission requests, in order.
    pub fn permissions(&self) -> Vec<&Value> {
        self.entries
            .iter()
            .filter(|e| e["kind"] == "permission")
            .map(|e| &e["params"])
            .collect()
    }

    /// How atto exited once the client closed its stdin.
    pub fn exit(&self) -> &Value {
        self.entries
            .iter()
            .find(|e| e["kind"] == "exit")
            .unwrap_or_else(|| panic!("no exit:\n{}", self.dump()))
    }

    pub fn dump(&self) -> String {
        self.entries
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs `atto acp <flags>` (chat wire, model `m`, against the scripted server) under the
/// TypeScript client with `scenario` (`steps`, `permissions`; `cwd` defaults to the repo).
pub(crate) fn run(env: &Env, flags: &[&str], mut scenario: Value) -> Seen {
    if scenario.get("cwd").is_none() {
        scenario["cwd"] = json!(env.repo());
    }
    let mut args = vec!["acp", "--base-url"];
    let base = env.base("chat");
    args.push(&base);
    args.extend(["--model", "m"]);
    args.extend(flags);
    let mut cmd = Command::new("node");
    cmd.arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/acp/client.mjs"));
    let atto = env.atto();
    for (key, value) in atto.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    cmd.current_dir(env.repo())
        .env("ACP_SDK", sdk_dir())
        .env("ATTO_BIN", env!("CARGO_BIN_EXE_atto"))
        .env("ACP_ARGS", serde_json::to_string(&args).unwrap())
        .env("ACP_SCENARIO", scenario.to_string());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let entries: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .collect();
    let seen = Seen { entries };
    assert_eq!(
        out.status.code(),
        Some(0),
        "client failed; stderr:\n{}\nseen:\n{}",
        stderr(&out),
        seen.dump()
    );
    assert_eq!(
        seen.exit()["code"],
        0,
        "atto acp did not exit cleanly; stderr:\n{}",
        stderr(&out)
    );
    seen
}

/// The steps that open a session: `initialize`, `session/new`.
pub(crate) fn opening() -> Vec<Value> {
    vec![json!({"op": "initialize"}), json!({"op": "new"})]
}

/// A prompt step.
pub(crate) fn prompt(text: &str) -> Value {
    json!({"op": "prompt", "text": text})
}

/// Rows of one column from the session database.
pub(crate) fn query(env: &Env, sql: &str) -> Vec<String> {
    let db = env.dir.path().join("home/atto-data/atto.db");
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}
