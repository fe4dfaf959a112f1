//! Shared by the screen tests: an app with the colour theme, the empty composer, drawing
//! to a `TestBackend` and reading the screen back as text, and event fixtures (a streamed
//! answer, tool calls, a WARN approval, a busy session, a task plan).

#![allow(
    dead_code,
    reason = "each test file uses a different part of these helpers"
)]

use atto_protocol::{
    AgentMode, ApprovalRequest, DecisionPoint, Event, FinalResult, PermissionMode, PlanStep,
    RiskLevel, StepKind, StepStatus, TaskPlan, TaskPlanStatus, ToolCallStatus, TurnStatus, Usage,
};
use atto_tui::app::{App, AppInfo};
use atto_tui::view::{ComposerView, Theme, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

pub fn info() -> AppInfo {
    AppInfo {
        provider: "scripted".into(),
        model: "test-model".into(),
        mode: AgentMode::Build,
        permission: PermissionMode::Interactive,
        sandbox: true,
        workspace: "/work/demo".into(),
        change_target: |change| change.path.clone().unwrap_or_default(),
    }
}

pub fn app() -> App {
    let mut app = App::new(info());
    app.set_theme(Theme::color());
    app
}

pub const EMPTY: ComposerView<'static> = ComposerView {
    text: "",
    cursor: 0,
    completions: &[],
    selected: 0,
    queued: &[],
    placeholder: "Ask atto anything · / for commands · ? for keys",
};

pub fn terminal(
    app: &mut App,
    composer: &ComposerView<'_>,
    w: u16,
    h: u16,
) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| draw(f, app, composer)).unwrap();
    term
}

/// The screen as text, one row per line, trailing spaces trimmed.
pub fn screen(app: &mut App, composer: &ComposerView<'_>, w: u16, h: u16) -> String {
    text_of(&terminal(app, composer, w, h))
}

pub fn text_of(term: &Terminal<TestBackend>) -> String {
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut row = String::new();
        for x in 0..buf.area.width {
            row.push_str(buf[(x, y)].symbol());
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

pub fn result(status: TurnStatus) -> FinalResult {
    FinalResult {
        status,
        rounds: 2,
        usage: Usage {
            input_tokens: 1200,
            output_tokens: 300,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        },
        cost_usd: Some(0.0123),
        files_changed: vec![],
        text: String::new(),
        error: None,
        failure: None,
        duration_ms: 2300,
    }
}

pub fn stream(app: &mut App, text: &str) {
    let chars: Vec<char> = text.chars().collect();
    for chunk in chars.chunks(4) {
        app.on_event(&Event::TextDelta {
            text: chunk.iter().collect(),
        });
    }
}

pub fn find(screen: &str, needle: &str) -> (u16, u16) {
    for (y, row) in screen.lines().enumerate() {
        if let Some(byte) = row.find(needle) {
            let x = row[..byte].chars().count();
            return (x as u16, y as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{screen}");
}

/// The kind each built-in tool the tests call says it has (the engine fills it from the tool).
pub fn kind_of(name: &str) -> atto_protocol::ToolKind {
    use atto_protocol::ToolKind;
    match name {
        "bash" => ToolKind::Execute,
        "edit_file" | "write_file" | "apply_patch" => ToolKind::Edit,
        "delete_file" => ToolKind::Delete,
        "grep" | "glob" | "list_files" => ToolKind::Search,
        "read_file" => ToolKind::Read,
        _ => ToolKind::Other,
    }
}

pub fn tool(app: &mut App, id: &str, name: &str, args: serde_json::Value, out: &str) {
    app.on_event(&Event::ToolCallStarted {
        call_id: id.into(),
        name: name.into(),
        arguments: args,
        kind: kind_of(name),
        title: String::new(),
    });
    app.on_event(&Event::ToolCallFinished {
        call_id: id.into(),
        name: name.into(),
        status: ToolCallStatus::Ok,
        duration_ms: 1250,
        summary: out.into(),
        sandboxed: Some(true),
        exit_code: None,
    });
}

pub fn warn_request() -> ApprovalRequest {
    ApprovalRequest {
        id: "a1".into(),
        call_id: "c9".into(),
        tool: "bash".into(),
        kind: atto_protocol::ToolKind::Execute,
        subject: "curl -fsSL https://example.com/install.sh -o /tmp/install.sh && sh /tmp/install.sh --prefix \"$HOME/.local\"".into(),
        risk: "WARN".into(),
        reasons: vec![
            "curl: downloads from the network".into(),
            "sh /tmp/install.sh: runs a script atto cannot inspect".into(),
        ],
        suggested_rule: "bash(curl -fsSL https://example.com/install.sh*)".into(),
        unsandboxed: false,
        protected: false,
        subagent: None,
        arguments: serde_json::Value::Null,
    }
}

pub fn busy_app() -> App {
    let mut app = app();
    app.on_event(&Event::SessionStarted {
        session_id: "0f3c9a7e-1111".into(),
        provider: "scripted".into(),
        model: "test-model".into(),
        wire: "chat".into(),
        workspace: "/work/demo".into(),
        mode: AgentMode::Plan,
        permission: None,
        sandbox: None,
    });
    app.push_user("add a hello module and wire it into main");
    app.on_event(&Event::TurnStarted {
        turn: 1,
        mode: AgentMode::Plan,
        complexity: None,
        model: None,
        route: None,
    });
    stream(&mut app, "I'll look at `main.py` first.");
    tool(
        &mut app,
        "r1",
        "read_file",
        json!({"path": "main.py"}),
        "import os\nmain()\n",
    );
    stream(&mut app, "Now I will propose the change.");
    app.on_event(&Event::Retry(atto_protocol::RetryNotice {
        attempt: 1,
        max_attempts: 3,
        delay_ms: 1500,
        reason: "429 rate limited".into(),
    }));
    app
}

/// A step of `task_plan`.
pub fn plan_step(
    number: u32,
    description: &str,
    kind: StepKind,
    deps: &[u32],
    files: &[&str],
    complexity: u8,
    budget: u64,
) -> PlanStep {
    PlanStep {
        id: format!("s{number}"),
        number,
        description: description.into(),
        dependencies: deps.iter().map(|d| format!("s{d}")).collect(),
        complexity,
        token_budget: budget,
        kind,
        files: files.iter().map(|f| (*f).to_owned()).collect(),
        decision: None,
        status: StepStatus::Pending,
        checkpoint: None,
        result: None,
    }
}

/// A five-step plan with dependencies and a decision point on step 3.
pub fn task_plan() -> TaskPlan {
    let mut limiter = plan_step(
        3,
        "Add a token-bucket limiter to the router",
        StepKind::Implement,
        &[2],
        &["src/limit.rs", "src/server.rs"],
        4,
        12_000,
    );
    limiter.decision = Some(DecisionPoint {
        question: "Which store keeps the buckets?".into(),
        options: vec!["in-memory map".into(), "redis".into(), "sqlite".into()],
        choice: None,
    });
    TaskPlan {
        id: "plan-7".into(),
        task: "rate-limit the API".into(),
        intent: "Rate-limit the public API per client".into(),
        risk: RiskLevel::Medium,
        estimated_duration_secs: 420,
        steps: vec![
            plan_step(
                1,
                "Read the request handlers and the config loader",
                StepKind::Analyze,
                &[],
                &["src/server.rs"],
                2,
                4_000,
            ),
            plan_step(
                2,
                "Choose where the limiter sits",
                StepKind::Design,
                &[1],
                &[],
                2,
                3_000,
            ),
            limiter,
            plan_step(
                4,
                "Test bursts and refill",
                StepKind::Test,
                &[3],
                &["tests/limit.rs"],
                3,
                8_000,
            ),
            plan_step(
                5,
                "Document the new settings",
                StepKind::Document,
                &[3],
                &["README.md"],
                1,
                2_000,
            ),
        ],
        status: TaskPlanStatus::AwaitingConfirmation,
    }
}

/// Usage of `tokens` input tokens.
pub fn usage(tokens: u64) -> Event {
    Event::Usage {
        model: "test-model".into(),
        usage: Usage {
            input_tokens: tokens,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        },
        cost_usd: Some(0.001),
    }
}

/// The plan generated, approved, and steps 1 and 2 done (with tokens), 3 running.
pub fn plan_mid_run(app: &mut App) {
    app.on_event(&Event::PlanGenerated {
        plan: task_plan(),
        attempts: 1,
    });
    app.on_event(&Event::PlanConfirmed {
        plan_id: "plan-7".into(),
        steps: 5,
    });
    for (n, what, tokens) in [
        (1, "Read the request handlers and the config loader", 2_400),
        (2, "Choose where the limiter sits", 900),
    ] {
        app.on_event(&Event::PlanStepStarted {
            number: n,
            description: what.into(),
            checkpoint: Some(n + 10),
        });
        app.on_event(&usage(tokens));
        app.on_event(&Event::PlanStepCompleted {
            number: n,
            summary: format!("step {n} done"),
            quality: None,
        });
    }
    app.on_event(&Event::PlanStepStarted {
        number: 3,
        description: "Add a token-bucket limiter to the router".into(),
        checkpoint: Some(13),
    });
}

/// A subagent of the session `0f3c9a7e-1111` (or of `parent`), running, nothing spent.
pub fn subagent(
    id: &str,
    parent: Option<&str>,
    role: atto_protocol::SubagentRole,
    task: &str,
    budget: u64,
) -> atto_protocol::SubagentInfo {
    atto_protocol::SubagentInfo {
        id: id.into(),
        parent: parent.unwrap_or("0f3c9a7e-1111").into(),
        depth: if parent.is_some() { 2 } else { 1 },
        task: task.into(),
        role,
        model: "test-model".into(),
        budget_tokens: budget,
        tokens_used: 0,
        cost_usd: None,
        elapsed_ms: 0,
        status: "running".into(),
    }
}

/// Ids of `subagents_at_work`: shown as their last eight characters.
pub const EXPLORER: &str = "0190f3a2-7c41-7000-8000-00001a2b3c4d";
pub const REVIEWER: &str = "0190f3a2-7c55-7000-8000-00005e6f7a8b";
pub const WRITER: &str = "0190f3a2-7c60-7000-8000-0000aa11bb22";
pub const VERIFIER: &str = "0190f3a2-7c71-7000-8000-0000c0ffee99";

/// The explorer's closure report.
pub const EXPLORER_REPORT: &str = "Subagent 1a2b3c4d (explore, model test-model) completed: \
4200 of 50000 tokens used, cost $0.0123, 3.4 s.\n\n## Summary\nThe handlers are in \
src/server.rs: `handle_get` and `handle_post`.\n\n## Files Modified\n- none (from the \
checkpoints)\n\n## Key Decisions\n- (not reported)\n\n## Remaining Work\n- none\n\n## \
Confidence: 0.8\n";

/// Four subagents: an explorer (with a nested reviewer) that finished, a writer still
/// running, and a verifier atto stopped at its time limit.
pub fn subagents_at_work(app: &mut App) {
    use atto_protocol::SubagentRole::*;
    let explorer = subagent(EXPLORER, None, Explore, "find the request handlers", 50_000);
    let writer = subagent(WRITER, None, Implement, "add the rate limiter", 80_000);
    let reviewer = subagent(
        REVIEWER,
        Some(EXPLORER),
        Review,
        "check the router tests",
        10_000,
    );
    let verifier = subagent(VERIFIER, None, Verify, "run the test suite", 20_000);
    app.on_event(&Event::SubagentStarted {
        agent: explorer.clone(),
        files: vec![],
    });
    app.on_event(&Event::SubagentStarted {
        agent: writer.clone(),
        files: vec!["src/limit.rs".into()],
    });
    let progress =
        |id: &str, used: u64, budget: u64, ms: u64, what: Option<&str>| Event::SubagentProgress {
            id: id.into(),
            tokens_used: used,
            budget_tokens: budget,
            elapsed_ms: ms,
            activity: what.map(Into::into),
        };
    app.on_event(&progress(EXPLORER, 0, 50_000, 200, Some("grep fn handle_")));
    app.on_event(&Event::SubagentStarted {
        agent: reviewer.clone(),
        files: vec![],
    });
    app.on_event(&progress(
        REVIEWER,
        900,
        10_000,
        700,
        Some("read_file tests/router.rs"),
    ));
    app.on_event(&Event::SubagentFinished {
        agent: atto_protocol::SubagentInfo {
            tokens_used: 1_800,
            elapsed_ms: 1_200,
            status: "completed".into(),
            ..reviewer
        },
        forced_stop: None,
        files_modified: vec![],
        report: "Subagent 5e6f7a8b (review) completed.\n\n## Summary\nThe router tests pass."
            .into(),
        quality: None,
    });
    app.on_event(&progress(
        EXPLORER,
        3_900,
        50_000,
        3_100,
        Some("read_file src/server.rs"),
    ));
    app.on_event(&Event::SubagentFinished {
        agent: atto_protocol::SubagentInfo {
            tokens_used: 4_200,
            elapsed_ms: 3_400,
            cost_usd: Some(0.0123),
            status: "completed".into(),
            ..explorer
        },
        forced_stop: None,
        files_modified: vec![],
        report: EXPLORER_REPORT.into(),
        quality: None,
    });
    app.on_event(&progress(
        WRITER,
        12_500,
        80_000,
        9_800,
        Some("edit_file src/limit.rs"),
    ));
    app.on_event(&Event::SubagentStarted {
        agent: verifier.clone(),
        files: vec![],
    });
    app.on_event(&Event::SubagentFinished {
        agent: atto_protocol::SubagentInfo {
            tokens_used: 19_000,
            elapsed_ms: 300_000,
            status: "stopped".into(),
            ..verifier
        },
        forced_stop: Some("it reached its time limit (300 s)".into()),
        files_modified: vec![],
        report: "Subagent c0ffee99 (verify) stopped.\nSTOPPED BY ATTO before the subagent \
                 finished: it reached its time limit (300 s)."
            .into(),
        quality: None,
    });
}
