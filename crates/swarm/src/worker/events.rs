//! A worker's stream-json events read into its report: the calls it made and how each
//! ended, its approvals (answered by the swarm's rules or passed on), its result.

use atto_protocol::{ApprovalDecision, ApprovalRequest, FinalResult, Op};
use atto_quality::action::ACTION_OUTPUT;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{Message, Report, send_op};
use crate::text::bounded;

pub(super) async fn handle_line(
    value: &Value,
    report: &mut Report,
    pending: &mut Vec<(String, usize)>,
    decide: &(dyn Fn(&ApprovalRequest) -> Option<ApprovalDecision> + Send + Sync),
    messages: &mpsc::UnboundedSender<Message>,
    stdin: &mut Option<tokio::process::ChildStdin>,
) {
    let str_of = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    match value.get("type").and_then(Value::as_str).unwrap_or("") {
        "session_started" => {
            report.session_id = str_of("session_id");
            report.model = str_of("model");
        }
        "tool_call_started" => call_started(value, report, pending, messages),
        "tool_call_finished" => call_finished(value, report, pending),
        "approval_required" => approval(value, decide, messages, stdin).await,
        "result" => {
            if let Ok(result) = serde_json::from_value::<FinalResult>(value.clone()) {
                report.result = Some(result);
            }
        }
        "git_result" => {
            report.returned = serde_json::from_value(value.clone()).ok();
        }
        "worker_node" => {
            report.node =
                serde_json::from_value::<crate::remote::transport::NodeEvent>(value.clone())
                    .ok()
                    .map(|e| e.node)
                    .filter(|n| crate::remote::launcher::valid_host(n));
        }
        _ => {}
    }
}

/// A tool call the worker started: shown as the task's activity, and kept as an action
/// whose output its `tool_call_finished` fills in.
fn call_started(
    value: &Value,
    report: &mut Report,
    pending: &mut Vec<(String, usize)>,
    messages: &mpsc::UnboundedSender<Message>,
) {
    let str_of = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let name = str_of("name").unwrap_or_default();
    let arguments = value.get("arguments").cloned().unwrap_or(Value::Null);
    let command = arguments.get("command").and_then(Value::as_str);
    let what = command
        .map(str::to_owned)
        .or_else(|| {
            arguments
                .get("path")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let _ = messages.send(Message::Activity(bounded(
        &format!("{name}: {}", what.lines().next().unwrap_or("")),
        120,
    )));
    pending.push((str_of("call_id").unwrap_or_default(), report.actions.len()));
    // The tool's own kind, as the worker's event says; an older worker's event does
    // not say, and the built-in tool of that name answers.
    let kind = value
        .get("kind")
        .and_then(|k| serde_json::from_value(k.clone()).ok())
        .unwrap_or_else(|| atto_tools::kind_of(&name));
    report
        .actions
        .push(atto_quality::action::started(name, kind, arguments));
}

/// A tool call the worker finished: its output, exit code and whether it ran at all go on
/// the action its start opened.
fn call_finished(value: &Value, report: &mut Report, pending: &mut Vec<(String, usize)>) {
    let str_of = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let id = str_of("call_id").unwrap_or_default();
    let Some(pos) = pending.iter().position(|(c, _)| *c == id) else {
        return;
    };
    let (_, index) = pending.remove(pos);
    let Some(action) = report.actions.get_mut(index) else {
        return;
    };
    action.output = bounded(&str_of("summary").unwrap_or_default(), ACTION_OUTPUT);
    action.exit_code = value
        .get("exit_code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok());
    action.not_run = not_run(value.get("status"));
    if action.not_run.is_some() {
        action.is_test_run = false;
    }
}

/// The worker's own account of how a call ended: one it never ran is no evidence, whatever
/// its summary says. A status this build does not know is taken as not run.
fn not_run(status: Option<&Value>) -> Option<String> {
    use atto_protocol::ToolCallStatus;
    let status = status
        .cloned()
        .map(serde_json::from_value::<ToolCallStatus>);
    match status {
        Some(Ok(ToolCallStatus::Ok | ToolCallStatus::Error)) => None,
        Some(Ok(ToolCallStatus::Denied)) => Some("denied".into()),
        Some(Ok(ToolCallStatus::Cancelled)) => Some("cancelled".into()),
        Some(Ok(ToolCallStatus::InvalidArguments)) => Some("invalid arguments".into()),
        Some(Ok(ToolCallStatus::Queued)) => Some("queued".into()),
        Some(Err(_)) | None => Some("its status was not reported".into()),
    }
}

/// A worker's approval request: answered at once where the swarm's rules decide it, else
/// passed on to the person.
async fn approval(
    value: &Value,
    decide: &(dyn Fn(&ApprovalRequest) -> Option<ApprovalDecision> + Send + Sync),
    messages: &mpsc::UnboundedSender<Message>,
    stdin: &mut Option<tokio::process::ChildStdin>,
) {
    let Ok(request) = serde_json::from_value::<ApprovalRequest>(value.clone()) else {
        return;
    };
    match decide(&request) {
        Some(decision) => {
            send_op(
                stdin,
                &Op::Approval {
                    id: request.id.clone(),
                    decision: decision.clone(),
                },
            )
            .await;
            let _ = messages.send(Message::Answered(request, decision));
        }
        None => {
            let _ = messages.send(Message::Approval(request));
        }
    }
}
