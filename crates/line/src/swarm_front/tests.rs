//! The swarm front end's text and the questions it asks a person.

use super::text::minutes_seconds;
use super::*;
use atto_protocol::quality::CompileError;

#[test]
fn a_wait_for_a_tripped_model_names_the_model_the_reason_and_the_time_left() {
    let line = text_line(&SwarmEvent::ModelWaiting {
        model: "flaky".into(),
        wait_seconds: 299,
        reason: "3 failures (last: HTTP 400)".into(),
    });
    assert_eq!(
        line.as_deref(),
        Some("model flaky unavailable after 3 failures (last: HTTP 400); retrying in 4m59s")
    );
    assert_eq!(minutes_seconds(45), "45s");
    assert_eq!(minutes_seconds(300), "5m00s");
}

#[test]
fn a_stuck_task_shows_where_its_code_does_not_compile() {
    let line = text_line(&SwarmEvent::InterventionNeeded {
        task_id: "task-1".into(),
        description: "write app.py".into(),
        attempts: 3,
        last_error: "the code does not compile".into(),
        compilation_errors: vec![CompileError {
            file: "app.py".into(),
            line: Some(3),
            message: "SyntaxError: unexpected indent".into(),
            severity: atto_protocol::quality::Severity::Error,
        }],
        failure_mode: "quality".into(),
        model: "m".into(),
    })
    .unwrap_or_default();
    assert!(
        line.contains("\n  app.py:3 — SyntaxError: unexpected indent"),
        "{line}"
    );
}

#[test]
fn a_second_stuck_task_waits_until_the_first_is_answered() {
    let stuck = |id: &str| Question::Intervention { task_id: id.into() };
    let mut q = Questions::default();
    let shown = q.ask(stuck("task-1"), Some("? task-1 is stuck".into()));
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert_eq!(shown[0], "? task-1 is stuck\n");
    assert!(
        shown[1].starts_with("task-1 is stuck. [g]uidance"),
        "{shown:?}"
    );
    // The second one shows nothing while the first waits: not its line, not its prompt.
    assert!(
        q.ask(stuck("task-2"), Some("? task-2 is stuck".into()))
            .is_empty()
    );
    // Not an answer: the first is asked again, its line not repeated.
    let (given, shown) = q.answer("maybe");
    assert_eq!(given, None);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].starts_with("task-1 is stuck."), "{shown:?}");
    let (given, shown) = q.answer("s");
    assert!(
        matches!(&given, Some(SwarmInput::Intervention { task_id, .. }) if task_id == "task-1"),
        "{given:?}"
    );
    assert_eq!(shown[0], "? task-2 is stuck\n");
    assert!(shown[1].starts_with("task-2 is stuck."), "{shown:?}");
}

#[test]
fn a_denied_call_is_named_with_why() {
    let request = atto_protocol::ApprovalRequest {
        id: "a1".into(),
        call_id: "c1".into(),
        tool: "bash".into(),
        kind: atto_protocol::ToolKind::Execute,
        subject: "rm -rf build".into(),
        risk: "BLOCK".into(),
        reasons: vec!["rm deletes files".into()],
        suggested_rule: String::new(),
        unsandboxed: false,
        protected: false,
        subagent: None,
        arguments: serde_json::Value::Null,
    };
    let line = text_line(&SwarmEvent::Permission {
        task_id: "task-1".into(),
        request,
        tier: "auto_denied".into(),
        decision: Some(ApprovalDecision::No {
            reason: Some("destructive commands are denied in a swarm".into()),
        }),
    });
    assert_eq!(
        line.as_deref(),
        Some(
            "⊘ task-1: bash rm -rf build denied (by the swarm's mailbox): destructive \
             commands are denied in a swarm"
        )
    );
}
