//! Asking the client: `session/request_permission` for an approval the gate wants, and
//! for each change plan mode proposed. Every question has the session's approval
//! deadline; no answer, a cancelled one or a broken client is a "no" (the gate applies
//! the same deadline on its side and audits the answer either way).

use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use atto_protocol::OpSender;
use atto_protocol::{ApprovalDecision, Op, PlanSelection, ProposedChange};

use crate::convert;

/// The client's answer: the option it picked, or why there is none.
enum Answer {
    Picked(String),
    Refused(String),
}

async fn request(
    cx: &ConnectionTo<Client>,
    request: RequestPermissionRequest,
    deadline: Option<Duration>,
) -> Answer {
    let sent = cx.send_request(request).block_task();
    let answered = match deadline {
        Some(limit) => match tokio::time::timeout(limit, sent).await {
            Ok(answered) => answered,
            Err(_) => {
                return Answer::Refused(format!(
                    "the editor did not answer within {} s",
                    limit.as_secs()
                ));
            }
        },
        None => sent.await,
    };
    match answered {
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) => {
                Answer::Picked(selected.option_id.0.to_string())
            }
            RequestPermissionOutcome::Cancelled => {
                Answer::Refused("the prompt was cancelled in the editor".to_owned())
            }
            _ => Answer::Refused("the editor gave an answer atto does not know".to_owned()),
        },
        Err(err) => Answer::Refused(format!("the editor could not be asked ({err})")),
    }
}

/// Asks the client about one approval and returns the decision for the gate.
pub(crate) async fn ask(
    cx: &ConnectionTo<Client>,
    ask: RequestPermissionRequest,
    deadline: Option<Duration>,
) -> ApprovalDecision {
    match request(cx, ask, deadline).await {
        Answer::Picked(option) => convert::decision(&option),
        Answer::Refused(reason) => ApprovalDecision::No {
            reason: Some(reason),
        },
    }
}

/// Asks the client to pick one of `ask`'s options: its id, or `None` without an answer.
pub(crate) async fn choose(
    cx: &ConnectionTo<Client>,
    ask: RequestPermissionRequest,
    deadline: Option<Duration>,
) -> Option<String> {
    match request(cx, ask, deadline).await {
        Answer::Picked(option) => Some(option),
        Answer::Refused(why) => {
            eprintln!("atto acp: no choice made ({why})");
            None
        }
    }
}

/// Asks the client about each proposed change (with its diffs, so the editor shows what
/// it approves), then sends one approve and one reject op
/// for what it decided. The first change without an answer ends the asking: it and the
/// ones after it stay pending in the stored plan, for `/approve` later. Returns how many
/// ops were sent.
pub(crate) async fn review(
    cx: &ConnectionTo<Client>,
    session: &str,
    ops: &OpSender,
    open: &[(ProposedChange, Vec<ToolCallContent>)],
    deadline: Option<Duration>,
) -> usize {
    let mut approved = Vec::new();
    let mut rejected = Vec::new();
    for (change, diffs) in open {
        let options = vec![
            PermissionOption::new(
                "allow_once",
                "Apply this change",
                PermissionOptionKind::AllowOnce,
            ),
            PermissionOption::new(
                "reject_once",
                "Reject this change",
                PermissionOptionKind::RejectOnce,
            ),
        ];
        let mut fields = ToolCallUpdateFields::new().status(ToolCallStatus::Pending);
        if !diffs.is_empty() {
            fields = fields.content(diffs.clone());
        }
        let ask = RequestPermissionRequest::new(
            session.to_owned(),
            ToolCallUpdate::new(change.tool_call_id.clone(), fields),
            options,
        );
        match request(cx, ask, deadline).await {
            Answer::Picked(option) if option == "allow_once" => approved.push(change.order),
            Answer::Picked(_) => rejected.push(change.order),
            // Nobody is deciding (cancelled, no answer, client gone): the rest are not
            // asked either, and every undecided change stays pending.
            Answer::Refused(why) => {
                eprintln!(
                    "atto acp: proposed changes from {} on stay pending: {why}",
                    change.order
                );
                break;
            }
        }
    }
    let mut sent = 0;
    if !approved.is_empty()
        && ops
            .submit(Op::ApprovePlan {
                selection: PlanSelection::Picks { orders: approved },
            })
            .is_ok()
    {
        sent += 1;
    }
    if !rejected.is_empty()
        && ops
            .submit(Op::RejectPlan {
                selection: PlanSelection::Picks { orders: rejected },
                reason: Some("rejected in the editor".to_owned()),
            })
            .is_ok()
    {
        sent += 1;
    }
    sent
}
