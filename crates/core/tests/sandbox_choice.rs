//! Which sandbox a command gets, through a scripted session against the real kernel: a
//! command that runs without a question because it was judged SAFE, and every command in
//! plan mode, runs where nothing is writable, so a misjudged one fails with "Read-only
//! file system"; a command a mode or a person let run keeps the workspace writable.
//!
//! The command is one the classifier rightly calls SAFE and that still writes: `git status`
//! in a repository whose own config names an fsmonitor hook, which git runs. What a
//! repository's config makes git do is the sandbox's to contain, not the parser's.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use atto_core::{Limits, spawn_session};
use atto_policy::gate::PermissionSetting;
use atto_protocol::{AgentMode, Event, Op, PermissionMode, ProtectionName, TurnStatus};
use atto_sandbox::{Sandbox, SandboxConfig};
use atto_tools::ToolRegistry;
use serde_json::json;

mod common;

use common::{Fixture, call, calls, fixture, text, turn_events};

const LEAK: &str = "git status --short";

/// A repository whose config runs `.git/fsmon` (it writes `leak.txt`) on `git status`.
fn repository(ws: &Path) {
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(ws)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "init"]);
    std::fs::write(ws.join("f"), "a").unwrap();
    let hook = ws.join(".git/fsmon");
    std::fs::write(&hook, "#!/bin/sh\necho leaked > leak.txt\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(&["config", "core.fsmonitor", ".git/fsmon"]);
}

/// Runs one turn whose model calls `bash` with `command`, in `mode` and `permission`,
/// with the OS sandbox; `None` when this kernel has none. Returns the tool's output.
async fn turn(
    command: &str,
    mode: AgentMode,
    permission: PermissionMode,
) -> Option<(Fixture, String)> {
    let f = fixture(vec![
        calls(vec![call("bash", json!({ "command": command }))]),
        text("done"),
    ])
    .await;
    repository(&f.workspace);
    let config = SandboxConfig {
        writable: vec![f.workspace.clone()],
        ..SandboxConfig::default()
    };
    let Ok(sandbox) = Sandbox::prepare(&config) else {
        eprintln!("SKIPPED: no OS sandbox here");
        return None;
    };
    let mut options = common::options(
        &f,
        ToolRegistry::builtin(),
        Limits::default(),
        PermissionSetting {
            mode: permission,
            deny_asks: true,
        },
        Vec::new(),
    );
    options.sandbox = Some(Arc::new(sandbox));
    options.mode = mode;
    let mut handle = spawn_session(options);
    handle.submit(Op::UserInput { text: "go".into() }).unwrap();
    let (events, result) = turn_events(&mut handle).await;
    assert_eq!(result.status, TurnStatus::Completed, "{events:?}");
    let output = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallFinished { summary, .. } => Some(summary.clone()),
            _ => None,
        })
        .unwrap_or_default();
    Some((f, output))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_safe_judged_command_cannot_write() {
    for (mode, permission) in [
        (AgentMode::Build, PermissionMode::Interactive),
        (AgentMode::Build, PermissionMode::AutoSafe),
        (AgentMode::Plan, PermissionMode::Interactive),
    ] {
        let Some((f, output)) = turn(LEAK, mode, permission).await else {
            return;
        };
        assert!(
            !f.workspace.join("leak.txt").exists(),
            "{mode:?} {permission:?}: a SAFE-judged command wrote the workspace: {output}"
        );
        assert!(
            output.contains("Read-only file system"),
            "{mode:?} {permission:?}: {output}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_the_mode_runs_still_writes_the_workspace() {
    // auto-safe runs WARN commands unasked: they keep the workspace-writable sandbox.
    let Some((f, output)) = turn("touch made", AgentMode::Build, PermissionMode::AutoSafe).await
    else {
        return;
    };
    assert!(f.workspace.join("made").exists(), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_started_lists_each_protection() {
    let f = fixture(vec![text("done")]).await;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    let config = SandboxConfig {
        writable: vec![f.workspace.clone()],
        read_only: vec![f.workspace.join(".git"), f.workspace.join(".atto")],
        hide: vec![home.path().join(".ssh")],
        private_tmp: true,
        ..SandboxConfig::default()
    };
    let Ok(sandbox) = Sandbox::prepare(&config) else {
        eprintln!("SKIPPED: no OS sandbox here");
        return;
    };
    let mut options = common::options(
        &f,
        ToolRegistry::builtin(),
        Limits::default(),
        PermissionSetting {
            mode: PermissionMode::Interactive,
            deny_asks: true,
        },
        Vec::new(),
    );
    options.sandbox = Some(Arc::new(sandbox));
    let mut handle = spawn_session(options);
    let event = tokio::time::timeout(std::time::Duration::from_secs(30), handle.next_event())
        .await
        .unwrap()
        .unwrap();
    let Event::SessionStarted {
        sandbox: Some(state),
        ..
    } = event
    else {
        panic!("first event: {event:?}");
    };
    let status = |name: ProtectionName| {
        state
            .protections
            .iter()
            .find(|p| p.name == name)
            .map(|p| (p.applied, p.gap.clone()))
    };
    // The fixture's workspace lies beneath /tmp: the private /tmp cannot be mounted there
    // and says why; `.git` and `.atto` do not exist, and may be created.
    for name in [
        ProtectionName::NoWriteUnasked,
        ProtectionName::Devices,
        ProtectionName::Processes,
        ProtectionName::RootCapabilities,
        ProtectionName::HiddenSecrets,
        ProtectionName::Network,
        ProtectionName::ReadOnlyDirs,
    ] {
        assert_eq!(status(name), Some((true, None)), "{name:?}: {state:?}");
    }
    for name in [ProtectionName::PrivateTmp, ProtectionName::MissingDirs] {
        let (applied, gap) = status(name).unwrap_or_else(|| panic!("{name:?}: {state:?}"));
        assert!(!applied, "{name:?}: {state:?}");
        assert!(gap.is_some_and(|g| !g.is_empty()), "{name:?}: {state:?}");
    }
}
