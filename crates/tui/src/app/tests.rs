//! The reducer: usage sums, the pending-plan count, the approval's lifetime.

use atto_protocol::{
    AgentMode, ApprovalRequest, ChangeOutcome, ChangeStatus, Event, FinalResult, PendingPlan,
    PermissionMode, PlanStatus, PlanTally, ProposedChange, ToolCallStatus, TurnStatus, Usage,
};
use serde_json::json;

use super::{App, AppInfo};

/// An app as a session in build mode starts it; the planner's tests use it too.
pub(super) fn app() -> App {
    App::new(AppInfo {
        provider: "p".into(),
        model: "m".into(),
        mode: AgentMode::Build,
        permission: PermissionMode::Interactive,
        sandbox: false,
        workspace: "/w".into(),
        change_target: |change| change.path.clone().unwrap_or_default(),
    })
}

fn usage(input: u64, output: u64, cost: Option<f64>) -> Event {
    Event::Usage {
        model: "m".into(),
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: 10,
            cache_write_tokens: 0,
        },
        cost_usd: cost,
    }
}

#[test]
fn usage_sums_tokens_and_cost_and_remembers_unknown_prices() {
    let mut app = app();
    app.on_event(&usage(100, 20, Some(0.5)));
    app.on_event(&usage(300, 40, Some(0.25)));
    let t = app.totals();
    assert_eq!(t.tokens, 100 + 20 + 10 + 300 + 40 + 10);
    assert!((t.cost_usd - 0.75).abs() < 1e-9);
    assert!(!t.cost_unknown);
    assert_eq!(t.context_tokens, 310);
    app.on_event(&usage(1, 1, None));
    assert!(app.totals().cost_unknown);
}

fn change(order: u32) -> ProposedChange {
    ProposedChange {
        id: format!("c{order}"),
        tool: "write_file".into(),
        args: json!({"path": format!("f{order}.txt")}),
        reason: String::new(),
        order,
        proposed_at: 0,
        tool_call_id: format!("t{order}"),
        path: Some(format!("f{order}.txt")),
        base_hash: None,
        status: ChangeStatus::Pending,
        result: None,
    }
}

fn outcome(order: u32, status: ChangeStatus) -> ChangeOutcome {
    ChangeOutcome {
        order,
        tool: "write_file".into(),
        target: format!("f{order}.txt"),
        status,
        detail: "ok".into(),
    }
}

#[test]
fn pending_plan_count_follows_queue_show_and_decide() {
    let mut app = app();
    app.on_event(&Event::ChangeQueued { change: change(1) });
    app.on_event(&Event::ChangeQueued { change: change(2) });
    app.on_event(&Event::ChangeQueued { change: change(3) });
    assert_eq!(app.pending_changes(), 3);
    // Decided before the plan was ever shown: counted from the outcomes; a conflict stays.
    app.on_event(&Event::PlanDecided {
        status: PlanStatus::PartiallyApproved,
        outcomes: vec![
            outcome(1, ChangeStatus::Applied),
            outcome(2, ChangeStatus::Conflict),
        ],
        tally: PlanTally::default(),
    });
    assert_eq!(app.pending_changes(), 2);
    // `/show-plan` is the truth.
    let mut done = change(1);
    done.status = ChangeStatus::Applied;
    app.on_event(&Event::Plan {
        plan: Some(PendingPlan {
            id: "p".into(),
            task: "t".into(),
            created_at: 0,
            updated_at: 0,
            proposed_changes: vec![done, change(2), change(3)],
            exploration_summary: String::new(),
            status: PlanStatus::PartiallyApproved,
            session_id: "s".into(),
        }),
        previews: vec![String::new(); 3],
    });
    assert_eq!(app.pending_changes(), 2);
    app.on_event(&Event::ChangeQueued { change: change(4) });
    assert_eq!(app.pending_changes(), 3);
    assert_eq!(app.plan().0.map(|p| p.proposed_changes.len()), Some(4));
    app.on_event(&Event::PlanDecided {
        status: PlanStatus::PartiallyApproved,
        outcomes: vec![outcome(2, ChangeStatus::Rejected)],
        tally: PlanTally::default(),
    });
    assert_eq!(app.pending_changes(), 2);
    app.on_event(&Event::PlanDecided {
        status: PlanStatus::Approved,
        outcomes: vec![
            outcome(3, ChangeStatus::Applied),
            outcome(4, ChangeStatus::Applied),
        ],
        tally: PlanTally::default(),
    });
    assert_eq!(app.pending_changes(), 0);
    app.on_event(&Event::Plan {
        plan: None,
        previews: vec![],
    });
    assert_eq!(app.pending_changes(), 0);
}

fn request(call_id: &str) -> ApprovalRequest {
    ApprovalRequest {
        id: "a".into(),
        call_id: call_id.into(),
        tool: "bash".into(),
        kind: atto_protocol::ToolKind::Execute,
        subject: "rm -rf build".into(),
        risk: "WARN".into(),
        reasons: vec![],
        suggested_rule: "bash(rm -rf build)".into(),
        unsandboxed: false,
        protected: false,
        subagent: None,
        arguments: serde_json::Value::Null,
    }
}

fn finished(call_id: &str) -> Event {
    Event::ToolCallFinished {
        call_id: call_id.into(),
        name: "bash".into(),
        status: ToolCallStatus::Ok,
        duration_ms: 5,
        summary: String::new(),
        sandboxed: None,
        exit_code: None,
    }
}

fn completed() -> Event {
    Event::TurnCompleted {
        turn: 1,
        result: FinalResult {
            status: TurnStatus::Cancelled,
            rounds: 1,
            usage: Usage::default(),
            cost_usd: None,
            files_changed: vec![],
            text: String::new(),
            error: None,
            failure: None,
            duration_ms: 1,
        },
    }
}

#[test]
fn approval_is_set_and_cleared_by_its_call_or_the_turn_end() {
    let mut app = app();
    app.on_event(&Event::TurnStarted {
        turn: 1,
        mode: AgentMode::Plan,
        complexity: None,
        model: None,
        route: None,
    });
    assert!(app.turn_running());
    assert_eq!(app.mode(), AgentMode::Plan);
    assert!(app.on_event(&Event::ApprovalRequired(request("c1"))));
    assert_eq!(
        app.approval.as_ref().map(|a| a.request.call_id.as_str()),
        Some("c1")
    );
    // Another call finishing leaves it open.
    app.on_event(&finished("other"));
    assert!(app.approval.is_some());
    app.on_event(&finished("c1"));
    assert!(app.approval.is_none());
    app.on_event(&Event::ApprovalRequired(request("c2")));
    app.on_event(&completed());
    assert!(app.approval.is_none());
    assert!(!app.turn_running());
}

#[test]
fn modes_scroll_and_unshown_events() {
    let mut app = app();
    app.on_event(&Event::ModeChanged {
        mode: AgentMode::Review,
        permission: PermissionMode::Yolo,
    });
    assert_eq!(app.mode(), AgentMode::Review);
    assert_eq!(app.permission(), PermissionMode::Yolo);
    assert!(!app.on_event(&Event::SessionEnded));
    app.scroll(5);
    app.scroll(-2);
    assert_eq!(app.scroll, 3);
    app.scroll(-10);
    assert_eq!(app.scroll, 0);
    app.scroll(4);
    app.scroll_to_bottom();
    assert_eq!(app.scroll, 0);
    let before = app.entries();
    app.push_notice("unknown command /frob: /help lists them");
    app.push_error("boom");
    assert_eq!(app.entries(), before + 2);
}

#[test]
fn the_effort_shown_is_the_one_the_session_confirms() {
    use atto_protocol::ReasoningEffort;
    let mut app = app();
    assert!(app.on_event(&Event::EffortChanged {
        effort: Some(ReasoningEffort::High),
        supported: true,
        model: "gpt-5".into(),
    }));
    assert_eq!(app.effort(), Some("high"));
    // A model that takes none: nothing is shown as set.
    app.on_event(&Event::EffortChanged {
        effort: Some(ReasoningEffort::Low),
        supported: false,
        model: "gpt-4o".into(),
    });
    assert_eq!(app.effort(), None);
    app.on_event(&Event::EffortChanged {
        effort: Some(ReasoningEffort::Medium),
        supported: true,
        model: "gpt-5".into(),
    });
    app.on_event(&Event::EffortChanged {
        effort: None,
        supported: true,
        model: "gpt-5".into(),
    });
    assert_eq!(app.effort(), None);
}

#[test]
fn an_edit_card_keeps_the_tools_summary_but_not_its_echoed_diff() {
    let mut app = app();
    let edit =
        json!({"path": "main.py", "old_string": "print(\"hi\")", "new_string": "print(\"hello\")"});
    app.on_event(&Event::ToolCallStarted {
        call_id: "e".into(),
        name: "edit_file".into(),
        arguments: edit,
        kind: Default::default(),
        title: String::new(),
    });
    let summary = "edited main.py: 1 replacement\n--- a/main.py\n+++ b/main.py\n@@ -1 +1 @@\n-print(\"hi\")\n+print(\"hello\")\n";
    let event = |status| Event::ToolCallFinished {
        call_id: "e".into(),
        name: "edit_file".into(),
        status,
        duration_ms: 1,
        summary: summary.into(),
        sandboxed: None,
        exit_code: None,
    };
    app.on_event(&event(ToolCallStatus::Ok));
    let card = app.transcript.tool_mut("e").unwrap();
    assert_eq!(card.diff, [r#"-print("hi")"#, r#"+print("hello")"#]);
    assert_eq!(card.output, ["edited main.py: 1 replacement"]);
    // A failed edit keeps everything the tool said.
    app.on_event(&event(ToolCallStatus::Error));
    assert_eq!(app.transcript.tool_mut("e").unwrap().output.len(), 6);
}

fn set_mode(mode: AgentMode, permission: Option<PermissionMode>) -> Option<atto_protocol::Op> {
    Some(atto_protocol::Op::SetMode { mode, permission })
}

fn now_in(app: &mut App, mode: AgentMode, permission: PermissionMode) {
    app.on_event(&Event::ModeChanged { mode, permission });
}

#[test]
fn tab_from_build_asks_before_yolo_and_only_y_enters_it() {
    let mut app = app();
    assert_eq!(app.cycle_mode(), None, "Tab from BUILD sends nothing yet");
    assert!(app.yolo_confirm_open());
    assert_eq!(
        app.confirm_yolo(),
        set_mode(AgentMode::Build, Some(PermissionMode::Yolo))
    );
    assert!(!app.yolo_confirm_open());
    // Asked again: Esc stays in BUILD, Tab goes on to PLAN.
    assert_eq!(app.cycle_mode(), None);
    app.decline_yolo();
    assert!(!app.yolo_confirm_open());
    assert_eq!(app.confirm_yolo(), None, "a closed question enters nothing");
    assert_eq!(app.cycle_mode(), None);
    assert_eq!(app.skip_yolo(), set_mode(AgentMode::Plan, None));
    assert!(!app.yolo_confirm_open());
}

#[test]
fn leaving_yolo_and_the_other_steps_never_ask() {
    let mut app = app();
    now_in(&mut app, AgentMode::Build, PermissionMode::Yolo);
    assert_eq!(app.cycle_mode(), set_mode(AgentMode::Plan, None));
    now_in(&mut app, AgentMode::Plan, PermissionMode::Interactive);
    assert_eq!(app.cycle_mode(), set_mode(AgentMode::Build, None));
    now_in(&mut app, AgentMode::Review, PermissionMode::Strict);
    assert_eq!(app.cycle_mode(), set_mode(AgentMode::Plan, None));
    assert!(!app.yolo_confirm_open());
}

#[test]
fn a_mode_change_from_elsewhere_closes_the_yolo_question() {
    let mut app = app();
    assert_eq!(app.cycle_mode(), None);
    now_in(&mut app, AgentMode::Plan, PermissionMode::Interactive);
    assert!(!app.yolo_confirm_open());
}

fn child(id: &str, parent: &str) -> atto_protocol::SubagentInfo {
    atto_protocol::SubagentInfo {
        id: id.into(),
        parent: parent.into(),
        depth: 1,
        task: "look".into(),
        role: atto_protocol::SubagentRole::Explore,
        model: "m".into(),
        budget_tokens: 1_000,
        tokens_used: 0,
        cost_usd: None,
        elapsed_ms: 0,
        status: "running".into(),
    }
}

fn progress(id: &str, used: u64, activity: Option<String>) -> Event {
    Event::SubagentProgress {
        id: id.into(),
        tokens_used: used,
        budget_tokens: 1_000,
        elapsed_ms: 5,
        activity,
    }
}

#[test]
fn subagent_progress_updates_its_facts_and_keeps_the_newest_activity() {
    let mut app = app();
    // Progress of a child no event announced shows nothing.
    assert!(!app.on_event(&progress("x", 1, None)));
    app.on_event(&Event::SubagentStarted {
        agent: child("x", "s"),
        files: vec![],
    });
    for i in 0..250 {
        assert!(app.on_event(&progress("x", i, Some(format!("bash \u{1b}[31mstep {i}")))));
    }
    let x = app.agents()[0];
    assert_eq!(x.info.tokens_used, 249);
    assert_eq!(x.info.elapsed_ms, 5);
    assert_eq!(x.activity.len(), 200);
    assert_eq!(x.activity_dropped, 50);
    assert_eq!(
        x.activity[0], "bash step 50",
        "escapes removed, oldest dropped"
    );
    assert_eq!(x.activity[199], "bash step 249");
    assert_eq!(app.agents_running(), 1);
}

#[test]
fn the_agents_answer_updates_known_children_and_adds_the_rest_in_tree_order() {
    let mut app = app();
    app.on_event(&Event::SubagentStarted {
        agent: child("a", "s"),
        files: vec!["f.rs".into()],
    });
    let mut a = child("a", "s");
    a.status = "completed".into();
    let mut b = child("b", "a");
    b.depth = 2;
    app.on_event(&Event::SubagentList {
        agents: vec![a, child("c", "s"), b],
    });
    let ids: Vec<&str> = app.agents().iter().map(|x| x.info.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    let a = app.agents()[0];
    assert_eq!(a.info.status, "completed");
    assert_eq!(a.files, ["f.rs"], "what the list does not carry is kept");
    assert_eq!(app.agents_running(), 2);
}
