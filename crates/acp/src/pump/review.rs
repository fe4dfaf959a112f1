//! The end of a prompt: its stop reason, and, when plan mode proposed changes, asking
//! the client about each before the prompt is answered.

use agent_client_protocol::Error;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{PromptResponse, StopReason, ToolCallContent};
use atto_protocol::{FinalResult, ProposedChange, TurnStatus};

use super::{Answering, Front, Pump};
use crate::convert;

impl Pump {
    pub(super) fn turn_completed(&mut self, result: FinalResult) {
        let Some(answering) = self.answering.take() else {
            return;
        };
        let responder = match answering {
            Answering::Turn(r) | Answering::Command(r) => r,
            other @ Answering::Review { .. } => {
                self.answering = Some(other);
                return;
            }
        };
        let open: Vec<ProposedChange> = std::mem::take(&mut self.proposed)
            .into_iter()
            .filter(|c| c.status.is_open())
            .collect();
        if !open.is_empty() && result.status == TurnStatus::Completed {
            self.answering = Some(Answering::Review {
                responder,
                result,
                waiting: None,
            });
            // Each question shows its change, over the file as plan mode found it.
            let open: Vec<(ProposedChange, Vec<ToolCallContent>)> = open
                .into_iter()
                .map(|change| {
                    let before = self
                        .calls
                        .get(&change.tool_call_id)
                        .and_then(|c| c.before.as_deref());
                    let diffs = convert::diffs(&self.workspace, &change.args, before);
                    (change, diffs)
                })
                .collect();
            let cx = self.cx.clone();
            let ops = self.ops.clone();
            let front = self.front_tx.clone();
            let session = self.id.clone();
            let deadline = self.deadline;
            tokio::spawn(async move {
                let decisions =
                    crate::permission::review(&cx, &session, &ops, &open, deadline).await;
                let _ = front.send(Front::Reviewed { decisions });
            });
            return;
        }
        self.answer(responder, &result);
    }

    /// A decision op was answered (`plan_decided` or an error).
    pub(super) fn decision_answered(&mut self) {
        if let Some(Answering::Review {
            waiting: Some(n), ..
        }) = &mut self.answering
        {
            *n = n.saturating_sub(1);
        }
        self.finish_review_if_done();
    }

    pub(super) fn finish_review_if_done(&mut self) {
        if matches!(
            self.answering,
            Some(Answering::Review {
                waiting: Some(0),
                ..
            })
        ) && let Some(Answering::Review {
            responder, result, ..
        }) = self.answering.take()
        {
            self.answer(responder, &result);
        }
    }

    pub(super) fn answer(&mut self, responder: Responder<PromptResponse>, result: &FinalResult) {
        let stop = match result.status {
            TurnStatus::Completed => StopReason::EndTurn,
            TurnStatus::Cancelled => StopReason::Cancelled,
            TurnStatus::LimitReached => StopReason::MaxTurnRequests,
            TurnStatus::Failed if self.cancelled => StopReason::Cancelled,
            TurnStatus::Failed => {
                let message = result
                    .error
                    .clone()
                    .unwrap_or_else(|| "the turn failed".to_owned());
                let _ = responder.respond_with_error(Error::internal_error().data(message));
                return;
            }
        };
        self.cancelled = false;
        let _ = responder.respond(PromptResponse::new(stop));
    }
}
