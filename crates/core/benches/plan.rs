//! Plan mode through the session engine: what queueing a proposed change costs the turn
//! (argument checks, the mode and the gate, the pending view and edit preview, the change,
//! the audit entry and the tool result each committed to the store), what `/show-plan`
//! costs for 200 changes (every diff against the pending view), and approving all 200.
//! Targets: queue ≤ 1 ms per change, show-plan ≤ 50 ms.
//!
//! A scripted model makes 200 write_file/edit_file calls in one reply over a 20-file temp
//! workspace, edits chained so each applies to the file as the earlier queued changes
//! leave it; the store is a real database in a temp dir. Plain `main`, no harness:
//! `cargo bench -p atto-core --bench plan`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use atto_core::{AgentHandle, Limits, SessionOptions, spawn_session};
use atto_llm::{ClientOptions, ResolvedProvider, Wire};
use atto_protocol::{AgentMode, ChangeStatus, Event, Op, PlanSelection};
use atto_store::Store;
use atto_testkit::{Reply, Script, ScriptToolCall, ScriptedServer};
use atto_tools::ToolRegistry;
use serde_json::json;

const FILES: usize = 20;
/// Changes per file: ten, so 200 in all.
const ROUNDS: usize = 10;
const CHANGES: usize = FILES * ROUNDS;
/// `/show-plan` timings taken; the median is reported.
const SHOWS: usize = 10;
/// The round that rewrites each file whole instead of editing it.
const REWRITE_ROUND: usize = 5;
/// No single event is awaited longer than this.
const WAIT: Duration = Duration::from_secs(120);

fn path(file: usize) -> String {
    format!("src/module_{file:02}.rs")
}

/// File `file` with its counter at `count`: ~100 lines, ~3 KB, like a small source file.
fn content(file: usize, count: usize) -> String {
    let mut text =
        format!("//! Module {file}.\n\npub fn run() -> u32 {{\n    let count = {count};\n");
    for line in 0..96 {
        text.push_str(&format!(
            "    let value_{line} = helper_{file}({line}) + count; // step {line} of module {file}\n"
        ));
    }
    text.push_str("    count\n}\n");
    text
}

/// Round `round` on `file`: the counter goes from `round` to `round + 1`, by an edit (which
/// only applies to the file as the earlier queued changes leave it) or a whole rewrite.
fn change(file: usize, round: usize) -> ScriptToolCall {
    let arguments = if round == REWRITE_ROUND {
        json!({"path": path(file), "content": content(file, round + 1)})
    } else {
        json!({
            "path": path(file),
            "old_string": format!("let count = {round};"),
            "new_string": format!("let count = {};", round + 1),
        })
    };
    ScriptToolCall {
        id: None,
        name: if round == REWRITE_ROUND {
            "write_file"
        } else {
            "edit_file"
        }
        .to_owned(),
        arguments,
        raw_arguments: None,
    }
}

async fn next(handle: &mut AgentHandle) -> Event {
    tokio::time::timeout(WAIT, handle.next_event())
        .await
        .expect("no event within the wait bound")
        .expect("the session ended early")
}

/// The 20 files under `root`, counters at 0; returns the root canonical, as sessions use it.
fn workspace(root: &Path) -> PathBuf {
    std::fs::create_dir_all(root.join("src")).unwrap();
    for file in 0..FILES {
        std::fs::write(root.join(path(file)), content(file, 0)).unwrap();
    }
    root.canonicalize().unwrap()
}

fn start(workspace: &Path, store: Store, server: &ScriptedServer) -> AgentHandle {
    let provider = ResolvedProvider {
        name: "testkit".into(),
        base_url: format!("{}/v1", server.base_url()),
        wire: Wire::Chat,
        model: "m".into(),
        api_key: None,
        api_key_env: None,
    };
    spawn_session(SessionOptions {
        session_id: "bench".into(),
        workspace: workspace.to_path_buf(),
        client: atto_llm::connect(&provider, ClientOptions::default()).unwrap(),
        tools: ToolRegistry::builtin(),
        limits: Limits::default(),
        instructions: Vec::new(),
        // Interactive, the default: a queued change never asks, so nothing waits on a user.
        permission: atto_policy::gate::PermissionSetting::default(),
        grants: Vec::new(),
        store: Some(store),
        sandbox: None,
        trust: false,
        protected_dirs: Vec::new(),
        resume: None,
        thread: None,
        mode: AgentMode::Plan,
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
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir.path().join("ws"));
    let store = Store::open(&dir.path().join("data/atto.db")).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // Round by round over the files, so consecutive changes touch different files and
        // each file's chain of ten runs through the whole plan.
        let calls = (0..ROUNDS)
            .flat_map(|round| (0..FILES).map(move |file| change(file, round)))
            .collect();
        let server = ScriptedServer::start(Script::new(vec![
            Reply {
                text: Some("Counting up in every module.".into()),
                tool_calls: calls,
                ..Reply::default()
            },
            Reply::text("Queued 200 changes."),
        ]))
        .await
        .unwrap();
        let mut handle = start(&workspace, store, &server);

        handle
            .submit(Op::UserInput {
                text: "count every module up to 10".into(),
            })
            .unwrap();
        let mut first_started = None;
        let mut finished = Vec::with_capacity(CHANGES);
        loop {
            match next(&mut handle).await {
                Event::ToolCallStarted { .. } => {
                    first_started.get_or_insert_with(Instant::now);
                }
                Event::ToolCallFinished { status, name, .. } => {
                    assert_eq!(
                        status,
                        atto_protocol::ToolCallStatus::Queued,
                        "{name} was not queued"
                    );
                    finished.push(Instant::now());
                }
                Event::TurnCompleted { .. } => break,
                _ => {}
            }
        }
        assert_eq!(finished.len(), CHANGES, "every call is queued");
        let first = first_started.unwrap();
        let window = *finished.last().unwrap() - first;
        let mut gaps: Vec<f64> = std::iter::once(first)
            .chain(finished.iter().copied())
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| ms(w[1] - w[0]))
            .collect();
        gaps.sort_by(f64::total_cmp);
        println!(
            "queue ×{CHANGES} (one reply, {FILES} files, chained edits): mean {:.3} ms/change  \
             p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms  (target ≤ 1 ms)",
            ms(window) / CHANGES as f64,
            percentile(&gaps, 0.5),
            percentile(&gaps, 0.99),
            gaps[gaps.len() - 1],
        );

        let mut shows = Vec::with_capacity(SHOWS);
        for _ in 0..SHOWS {
            let started = Instant::now();
            handle.submit(Op::ShowPlan).unwrap();
            loop {
                if let Event::Plan { plan, previews } = next(&mut handle).await {
                    shows.push(ms(started.elapsed()));
                    assert_eq!(plan.unwrap().proposed_changes.len(), CHANGES);
                    assert_eq!(previews.len(), CHANGES);
                    break;
                }
            }
        }
        shows.sort_by(f64::total_cmp);
        println!(
            "/show-plan ({CHANGES} changes, a diff each) ×{SHOWS}: median {:.3} ms  max {:.3} ms  \
             (target ≤ 50 ms)",
            percentile(&shows, 0.5),
            shows[shows.len() - 1],
        );

        let started = Instant::now();
        handle
            .submit(Op::ApprovePlan {
                selection: PlanSelection::All,
            })
            .unwrap();
        let outcomes = loop {
            match next(&mut handle).await {
                Event::PlanDecided { outcomes, .. } => break outcomes,
                Event::Error { message } => panic!("approve refused: {message}"),
                _ => {}
            }
        };
        let approve = started.elapsed();
        assert_eq!(outcomes.len(), CHANGES);
        assert!(
            outcomes.iter().all(|o| o.status == ChangeStatus::Applied),
            "{outcomes:?}"
        );
        for file in 0..FILES {
            let text = std::fs::read_to_string(workspace.join(path(file))).unwrap();
            assert_eq!(text, content(file, ROUNDS), "{}", path(file));
        }
        println!(
            "approve all {CHANGES}: {:.1} ms = {:.3} ms/change (conflict check, gate, tool run)",
            ms(approve),
            ms(approve) / CHANGES as f64,
        );

        handle.submit(Op::Shutdown).unwrap();
        while tokio::time::timeout(WAIT, handle.next_event())
            .await
            .expect("the session did not end")
            .is_some()
        {}
    });
}
