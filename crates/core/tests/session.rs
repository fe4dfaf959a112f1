//! The session actor through its handle, against the scripted model server: ordering of
//! events, cancellation, limits, and a tool that panics.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use atto_core::Limits;
use atto_protocol::{DangerLevel, Event, Op, ToolCallStatus, TurnStatus};
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry};
use serde_json::{Value, json};

mod common;

use common::{call, calls, fixture, start, start_gated, text, turn_events};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_kills_a_running_command_and_the_session_stays_usable() {
    let f = fixture(vec![
        calls(vec![call(
            "bash",
            json!({"command": "echo $$ > pid.txt; sleep 30; echo done > after.txt"}),
        )]),
        text("second turn works"),
    ])
    .await;
    let mut handle = start(&f, ToolRegistry::builtin(), Limits::default());
    handle.submit(Op::UserInput { text: "run".into() }).unwrap();
    // Wait for the command to start, then interrupt.
    loop {
        if let Some(Event::ToolCallStarted { .. }) = handle.next_event().await {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    handle.submit(Op::Interrupt).unwrap();
    let (events, result) = turn_events(&mut handle).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel was not prompt"
    );
    assert_eq!(result.status, TurnStatus::Cancelled);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ToolCallFinished {
            status: ToolCallStatus::Cancelled,
            ..
        }
    )));
    let pid: i32 = std::fs::read_to_string(f.workspace.join("pid.txt"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let alive = std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(!alive, "the shell {pid} survived the cancel");
    assert!(!f.workspace.join("after.txt").exists());

    handle
        .submit(Op::UserInput {
            text: "again".into(),
        })
        .unwrap();
    let (_, result) = turn_events(&mut handle).await;
    assert_eq!(result.status, TurnStatus::Completed);
    assert_eq!(result.text, "second turn works");
    // The cancelled call still got a result, so the second request is well-formed.
    let reqs = f.server.requests();
    let tool_msgs = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(tool_msgs, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_limit_stops_the_turn() {
    let looping = || calls(vec![call("list_files", json!({}))]);
    let f = fixture(vec![looping(), looping(), looping(), text("never")]).await;
    let limits = Limits {
        max_rounds: 2,
        ..Limits::default()
    };
    let mut handle = start(&f, ToolRegistry::builtin(), limits);
    handle.submit(Op::UserInput { text: "go".into() }).unwrap();
    let (_, result) = turn_events(&mut handle).await;
    assert_eq!(result.status, TurnStatus::LimitReached);
    assert_eq!(result.rounds, 2);
    assert!(result.error.unwrap().contains("round limit"));
    assert_eq!(f.server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_keep_call_order_and_unknown_tools_are_refused() {
    let f = fixture(vec![
        calls(vec![
            call("read_file", json!({"path": "a.txt"})),
            call("no_such_tool", json!({})),
            call("read_file", json!({"path": "b.txt"})),
        ]),
        text("ok"),
    ])
    .await;
    std::fs::write(f.workspace.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(f.workspace.join("b.txt"), "beta\n").unwrap();
    let mut handle = start(&f, ToolRegistry::builtin(), Limits::default());
    handle.submit(Op::UserInput { text: "go".into() }).unwrap();
    let (_, result) = turn_events(&mut handle).await;
    assert_eq!(result.status, TurnStatus::Completed);
    let reqs = f.server.requests();
    let tools: Vec<&Value> = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tools.len(), 3);
    assert!(tools[0]["content"].as_str().unwrap().contains("alpha"));
    assert!(
        tools[1]["content"]
            .as_str()
            .unwrap()
            .contains("unknown tool 'no_such_tool'")
    );
    assert!(tools[2]["content"].as_str().unwrap().contains("beta"));
}

/// A tool that panics, to prove a crashing tool cannot take the session down.
struct Panics;

impl Tool for Panics {
    fn name(&self) -> &'static str {
        "explode"
    }
    fn description(&self) -> &'static str {
        "panics"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }
    fn mutates(&self, _args: &Value) -> bool {
        false
    }
    fn run<'a>(
        &'a self,
        _args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { panic!("boom") })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tool_becomes_an_error_result() {
    let f = fixture(vec![
        calls(vec![call("explode", json!({}))]),
        text("recovered"),
    ])
    .await;
    let mut tools = ToolRegistry::builtin();
    tools.register(Arc::new(Panics));
    let mut handle = start(&f, tools, Limits::default());
    handle.submit(Op::UserInput { text: "go".into() }).unwrap();
    let (events, result) = turn_events(&mut handle).await;
    assert_eq!(result.status, TurnStatus::Completed);
    assert_eq!(result.text, "recovered");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ToolCallFinished { status: ToolCallStatus::Error, summary, .. } if summary.contains("crashed")
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_limit_cancels_a_running_command() {
    let f = fixture(vec![
        calls(vec![call("bash", json!({"command": "sleep 30"}))]),
        text("never"),
    ])
    .await;
    let limits = Limits {
        max_duration: Some(Duration::from_millis(500)),
        ..Limits::default()
    };
    let mut handle = start(&f, ToolRegistry::builtin(), limits);
    let started = std::time::Instant::now();
    handle.submit(Op::UserInput { text: "go".into() }).unwrap();
    let (_, result) = turn_events(&mut handle).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(result.status, TurnStatus::LimitReached);
    assert!(result.error.unwrap().contains("time limit"));
}

/// Without an OS sandbox, WARN commands ask even in auto-safe — unless the user granted
/// them: a rule from the config (no store id) counts as a grant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_sandbox_a_granted_warn_command_runs_unasked() {
    let f = fixture(vec![
        calls(vec![call("bash", json!({"command": "touch granted"}))]),
        text("done"),
    ])
    .await;
    let grant = atto_policy::gate::Grant {
        id: None,
        rule: atto_policy::gate::Rule::parse("bash(touch granted)").unwrap(),
        action: atto_policy::gate::Action::Allow,
        origin: "user config".into(),
    };
    let permission = atto_policy::gate::PermissionSetting {
        mode: atto_protocol::PermissionMode::AutoSafe,
        deny_asks: false,
    };
    let mut handle = start_gated(
        &f,
        ToolRegistry::builtin(),
        Limits::default(),
        permission,
        vec![grant],
    );
    handle
        .submit(Op::UserInput {
            text: "touch it".into(),
        })
        .unwrap();
    let (events, result) = turn_events(&mut handle).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequired(_))),
        "a granted command asked: {events:?}"
    );
    assert_eq!(result.status, TurnStatus::Completed);
    assert!(f.workspace.join("granted").exists());
}

/// A revocable grant for `bash(touch granted)` (a WARN command: without a sandbox and
/// with asks turned into denials, it runs only while granted), and the setting it needs.
fn touch_grant() -> (
    atto_policy::gate::Grant,
    atto_policy::gate::PermissionSetting,
) {
    let grant = atto_policy::gate::Grant {
        id: None,
        rule: atto_policy::gate::Rule::parse("bash(touch granted)").unwrap(),
        action: atto_policy::gate::Action::Allow,
        origin: "session grant".into(),
    };
    let permission = atto_policy::gate::PermissionSetting {
        mode: atto_protocol::PermissionMode::AutoSafe,
        deny_asks: true,
    };
    (grant, permission)
}

/// The session's answer about a grant (a notice or an error naming one), within 10 s;
/// `None` when none came.
async fn next_notice(handle: &mut atto_core::AgentHandle) -> Option<String> {
    let wait = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match handle.next_event().await {
                Some(Event::Notice { message } | Event::Error { message })
                    if message.contains("grant") =>
                {
                    return Some(message);
                }
                Some(_) => {}
                None => return None,
            }
        }
    });
    wait.await.ok().flatten()
}

/// Grants belong to the whole session tree: a grant the user revoked does not come back
/// in a subagent started afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_grant_stays_revoked_in_a_child_spawned_afterwards() {
    let f = fixture(vec![
        calls(vec![call(
            "spawn_agent",
            json!({"task": "touch the file", "role": "implement"}),
        )]),
        calls(vec![call("bash", json!({"command": "touch granted"}))]),
        text("I was not allowed to touch it"),
        text("the child could not"),
    ])
    .await;
    let (grant, permission) = touch_grant();
    let mut handle = start_gated(
        &f,
        ToolRegistry::builtin(),
        Limits::default(),
        permission,
        vec![grant],
    );
    handle.submit(Op::RevokeGrant { number: 1 }).unwrap();
    let notice = next_notice(&mut handle).await.unwrap_or_default();
    assert!(notice.contains("revoked grant 1"), "{notice}");
    handle
        .submit(Op::UserInput {
            text: "delegate".into(),
        })
        .unwrap();
    let (events, result) = turn_events(&mut handle).await;
    assert_eq!(result.status, TurnStatus::Completed, "{events:?}");
    assert!(
        !f.workspace.join("granted").exists(),
        "the child ran a command under a grant the user had revoked"
    );
}

/// A tool that waits until the test lets it go, so something can happen while a child
/// runs.
struct Hold {
    entered: Arc<tokio::sync::Notify>,
    release: Arc<tokio::sync::Notify>,
}

impl Tool for Hold {
    fn name(&self) -> &'static str {
        "hold"
    }
    fn description(&self) -> &'static str {
        "waits until released"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }
    fn mutates(&self, _args: &Value) -> bool {
        false
    }
    fn run<'a>(
        &'a self,
        _args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async {
            self.entered.notify_one();
            self.release.notified().await;
            Ok(ToolOutput::text("released"))
        })
    }
}

/// A grant revoked while a subagent works is revoked for that subagent's next call too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_revoked_while_a_child_runs_is_revoked_in_that_child() {
    let f = fixture(vec![
        calls(vec![call(
            "spawn_agent",
            json!({"task": "hold, then touch the file", "role": "implement"}),
        )]),
        calls(vec![call("hold", json!({}))]),
        calls(vec![call("bash", json!({"command": "touch granted"}))]),
        text("I was not allowed to touch it"),
        text("the child could not"),
    ])
    .await;
    let (grant, permission) = touch_grant();
    let entered = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let mut tools = ToolRegistry::builtin();
    tools.register(Arc::new(Hold {
        entered: Arc::clone(&entered),
        release: Arc::clone(&release),
    }));
    let mut handle = start_gated(&f, tools, Limits::default(), permission, vec![grant]);
    handle
        .submit(Op::UserInput {
            text: "delegate".into(),
        })
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), entered.notified())
        .await
        .expect("the child never reached its held call");
    handle.submit(Op::RevokeGrant { number: 1 }).unwrap();
    let notice = next_notice(&mut handle).await;
    release.notify_one();
    assert!(
        notice
            .as_deref()
            .is_some_and(|n| n.contains("revoked grant 1")),
        "the revocation was not answered while the child ran: {notice:?}"
    );
    let (events, result) = turn_events(&mut handle).await;
    assert_eq!(result.status, TurnStatus::Completed, "{events:?}");
    assert!(
        !f.workspace.join("granted").exists(),
        "the running child kept a grant the user had revoked"
    );
}

/// A client for `model` against the fixture's server that tries each call up to five
/// times.
fn retrying_client(f: &common::Fixture, model: &str) -> Arc<dyn atto_llm::ModelClient> {
    let provider = atto_llm::ResolvedProvider {
        name: "testkit".into(),
        base_url: format!("{}/v1", f.server.base_url()),
        wire: atto_llm::Wire::Chat,
        model: model.into(),
        api_key: None,
        api_key_env: None,
    };
    let options = atto_llm::ClientOptions {
        retry: atto_llm::RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        },
        ..atto_llm::ClientOptions::default()
    };
    atto_llm::connect(&provider, options).unwrap()
}

/// Five attempts over two calls (three the provider answered with an error, then two
/// replies) count five times against the dollar cap: each failed attempt at the model's
/// input price for what was sent, never as free, and never folded into the attempt that
/// succeeded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_attempts_of_retried_calls_count_five_times_against_the_dollar_cap() {
    use atto_core::subagents::budget::{Budgeted, Caps, Tree};
    use atto_testkit::{Fault, Reply, ScriptUsage};
    let failed = Reply {
        fault: Some(Fault::Status {
            status: 500,
            body: None,
            retry_after: None,
        }),
        ..Reply::default()
    };
    let answered = Reply {
        usage: Some(ScriptUsage {
            input_tokens: 10_000,
            output_tokens: 10,
            ..ScriptUsage::default()
        }),
        ..text("answered")
    };
    // The circuit breaker allows two failures in a row before the third opens it.
    let replies = vec![
        failed.clone(),
        failed.clone(),
        answered.clone(),
        failed,
        answered,
        text("a third call"),
    ];
    let f = fixture(replies).await;
    // gpt-4o: $2.50 per million input tokens, $10 per million output.
    let client = retrying_client(&f, "gpt-4o");
    let tree = Tree::new(
        Caps {
            tokens: None,
            usd: Some(0.14),
        },
        "root",
    );
    let budgeted = Budgeted::new(client, Arc::clone(&tree), "root".into());
    let system = "x".repeat(30_000);
    let messages = [atto_protocol::Message::user("hi")];
    let request = atto_llm::ModelRequest {
        system: system.as_str().into(),
        messages: messages.as_slice().into(),
        tools: Vec::new().into(),
        max_output_tokens: 100,
        effort: None,
        temperature: None,
    };
    let sent = request.bytes() / atto_llm::BYTES_PER_TOKEN;
    for _ in 0..2 {
        atto_llm::ModelClient::stream(&budgeted, &request, &mut |_| {})
            .await
            .unwrap();
    }
    assert_eq!(f.server.requests().len(), 5);
    assert_eq!(
        tree.used_tokens(),
        3 * sent + 2 * 10_010,
        "the failed attempts were not counted"
    );
    // Counted as two calls: about $0.05 spent, and a third (about $0.026) fits under
    // $0.14. Counted as five attempts: about $0.125, so the third is refused unsent.
    let third = atto_llm::ModelClient::stream(&budgeted, &request, &mut |_| {}).await;
    assert!(
        matches!(&third, Err(atto_llm::ModelError::OverBudget(why)) if why.contains("dollar cap")),
        "{third:?}"
    );
    assert_eq!(f.server.requests().len(), 5, "a call past the cap was sent");
}

/// A call's retries stop before another attempt could cross the dollar cap: the failed
/// attempt counted, the retry is not sent, and the spend stays under the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_stop_before_another_attempt_could_cross_the_dollar_cap() {
    use atto_core::subagents::budget::{Budgeted, Caps, Tree};
    use atto_testkit::{Fault, Reply};
    let failed = Reply {
        fault: Some(Fault::Status {
            status: 500,
            body: None,
            retry_after: None,
        }),
        ..Reply::default()
    };
    let f = fixture(vec![failed, text("answered")]).await;
    let client = retrying_client(&f, "gpt-4o");
    // One attempt (about $0.025 in, up to $0.001 out) fits; a second after a failed one
    // would not.
    let tree = Tree::new(
        Caps {
            tokens: None,
            usd: Some(0.04),
        },
        "root",
    );
    let budgeted = Budgeted::new(client, Arc::clone(&tree), "root".into());
    let system = "x".repeat(30_000);
    let messages = [atto_protocol::Message::user("hi")];
    let request = atto_llm::ModelRequest {
        system: system.as_str().into(),
        messages: messages.as_slice().into(),
        tools: Vec::new().into(),
        max_output_tokens: 100,
        effort: None,
        temperature: None,
    };
    let mut retries = 0;
    let reply = atto_llm::ModelClient::stream(&budgeted, &request, &mut |u| {
        if matches!(u, atto_llm::StreamUpdate::Retry(_)) {
            retries += 1;
        }
    })
    .await;
    assert!(
        matches!(&reply, Err(atto_llm::ModelError::OverBudget(why)) if why.contains("not retried")),
        "{reply:?}"
    );
    assert_eq!(
        f.server.requests().len(),
        1,
        "a retry past the cap was sent"
    );
    assert_eq!(retries, 0, "a retry that never came was announced");
    let sent = request.bytes() / atto_llm::BYTES_PER_TOKEN;
    assert_eq!(tree.used_tokens(), sent, "the failed attempt counts, once");
}

/// A subagent's messages are not the user's: its task (the parent model's words, a custom
/// agent's instructions) may say "never", yet a compaction in the subagent pins no user
/// constraint from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_s_compaction_pins_no_user_constraint_from_its_task() {
    let f = fixture(vec![
        calls(vec![call(
            "spawn_agent",
            json!({"task": "Read big.txt. Never run the tests.", "role": "explore"}),
        )]),
        calls(vec![call("read_file", json!({"path": "big.txt"}))]),
        text("The file is long."),
        text("big.txt is long; nothing else to report."),
        text("the child read it"),
    ])
    .await;
    std::fs::write(f.workspace.join("big.txt"), "line of text\n".repeat(4_000)).unwrap();
    let mut options = common::options(
        &f,
        ToolRegistry::builtin(),
        Limits::default(),
        atto_policy::gate::PermissionSetting {
            mode: atto_protocol::PermissionMode::Yolo,
            deny_asks: false,
        },
        Vec::new(),
    );
    options.context.windows.insert("m".into(), 12_000);
    let mut handle = atto_core::spawn_session(options);
    handle
        .submit(Op::UserInput {
            text: "delegate".into(),
        })
        .unwrap();
    let (events, result) = turn_events(&mut handle).await;
    assert_eq!(result.status, TurnStatus::Completed, "{events:?}");
    let bodies: Vec<String> = f
        .server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        bodies.iter().any(|b| b.contains("was compacted")),
        "the subagent never compacted"
    );
    assert!(
        !bodies
            .iter()
            .any(|b| b.contains("User constraints (verbatim)")),
        "the subagent's task was pinned as the user's constraint"
    );
}
