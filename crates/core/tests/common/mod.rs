//! What the session-level tests share: scripted replies, a temp workspace with a scripted
//! model server, and a session started against them with everything allowed.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use atto_core::{AgentHandle, Limits, SessionOptions, spawn_session};
use atto_llm::{ClientOptions, ResolvedProvider, RetryPolicy, Wire};
use atto_protocol::{Event, FinalResult};
use atto_testkit::{Reply, Script, ScriptToolCall, ScriptedServer};
use atto_tools::ToolRegistry;
use serde_json::Value;

pub fn call(name: &str, arguments: Value) -> ScriptToolCall {
    ScriptToolCall {
        id: None,
        name: name.into(),
        arguments,
        raw_arguments: None,
    }
}

pub fn calls(c: Vec<ScriptToolCall>) -> Reply {
    Reply {
        tool_calls: c,
        ..Reply::default()
    }
}

pub fn text(t: &str) -> Reply {
    Reply {
        text: Some(t.into()),
        ..Reply::default()
    }
}

pub struct Fixture {
    pub _dir: tempfile::TempDir,
    pub workspace: std::path::PathBuf,
    pub server: ScriptedServer,
}

pub async fn fixture(replies: Vec<Reply>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    let server = ScriptedServer::start(Script {
        replies,
        ..Script::default()
    })
    .await
    .unwrap();
    Fixture {
        _dir: dir,
        workspace,
        server,
    }
}

pub fn start(f: &Fixture, tools: ToolRegistry, limits: Limits) -> AgentHandle {
    // These tests are about the engine, not the gate: everything is allowed.
    let yolo = atto_policy::gate::PermissionSetting {
        mode: atto_protocol::PermissionMode::Yolo,
        deny_asks: false,
    };
    start_gated(f, tools, limits, yolo, Vec::new())
}

/// [`start`] with a permission setting and grants, no sandbox and no store.
pub fn start_gated(
    f: &Fixture,
    tools: ToolRegistry,
    limits: Limits,
    permission: atto_policy::gate::PermissionSetting,
    grants: Vec<atto_policy::gate::Grant>,
) -> AgentHandle {
    spawn_session(options(f, tools, limits, permission, grants))
}

/// The options [`start_gated`] starts a session with.
pub fn options(
    f: &Fixture,
    tools: ToolRegistry,
    limits: Limits,
    permission: atto_policy::gate::PermissionSetting,
    grants: Vec<atto_policy::gate::Grant>,
) -> SessionOptions {
    let provider = ResolvedProvider {
        name: "testkit".into(),
        base_url: format!("{}/v1", f.server.base_url()),
        wire: Wire::Chat,
        model: "m".into(),
        api_key: None,
        api_key_env: None,
    };
    let options = ClientOptions {
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        },
        ..ClientOptions::default()
    };
    SessionOptions {
        session_id: "test".into(),
        workspace: f.workspace.clone(),
        client: atto_llm::connect(&provider, options).unwrap(),
        tools,
        limits,
        instructions: Vec::new(),
        permission,
        grants,
        store: None,
        sandbox: None,
        trust: false,
        protected_dirs: Vec::new(),
        resume: None,
        thread: None,
        mode: atto_protocol::AgentMode::Build,
        checkpoints: None,
        planner: atto_core::planner::Settings::default(),
        approval_deadline: None,
        unsandboxed_commands: Vec::new(),
        start_notices: Vec::new(),
        sandbox_off_reason: None,
        subagents: atto_core::subagents::SubagentSettings::default(),
        models: atto_core::models::ModelSettings::default(),
        learning: atto_core::LearningSettings::default(),
        context: atto_core::ContextSettings::default(),
        external_tools: None,
    }
}

/// Events up to and including the next TurnCompleted.
pub async fn turn_events(handle: &mut AgentHandle) -> (Vec<Event>, FinalResult) {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), handle.next_event())
            .await
            .expect("no event within 30 s")
            .expect("session ended early");
        if let Event::TurnCompleted { result, .. } = &event {
            let result = result.clone();
            seen.push(event);
            return (seen, result);
        }
        seen.push(event);
    }
}
