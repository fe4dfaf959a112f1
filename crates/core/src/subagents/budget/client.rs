//! The model client every session of a tree calls through: each call reserves its bound
//! out of the tree's budget before it is sent, each failed attempt is charged as it
//! happens, and what the call really cost settles its reservation. The arithmetic is the
//! budget's (`budget`); this module only wraps a call in it.

use std::sync::Arc;

use atto_llm::{BoxFuture, ModelClient, ModelError, ModelInfo, ModelRequest, ModelResponse};
use atto_llm::{StreamUpdate, cost_usd};
use atto_protocol::Usage;

use super::{Caps, NextAttempt, Spent, Tree, not_retried};

/// A model client whose every call is checked against the tree's budget first.
pub struct Budgeted {
    inner: Arc<dyn ModelClient>,
    tree: Arc<Tree>,
    node: String,
}

impl Budgeted {
    /// Calls of session `node` through `inner`, within `tree`'s budget.
    pub fn new(inner: Arc<dyn ModelClient>, tree: Arc<Tree>, node: String) -> Self {
        Budgeted { inner, tree, node }
    }
}

impl ModelClient for Budgeted {
    fn info(&self) -> &ModelInfo {
        self.inner.info()
    }

    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest<'a>,
        on_update: &'a mut (dyn FnMut(StreamUpdate) + Send),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let bounded =
                self.tree.caps != Caps::default() || self.tree.spent(&self.node).1.is_some();
            if !bounded {
                return self.inner.stream(req, on_update).await;
            }
            let bytes = req.bytes();
            let reservation = self
                .tree
                .reserve(
                    &self.node,
                    bytes,
                    req.max_output_tokens,
                    &self.inner.info().model,
                )
                .map_err(ModelError::OverBudget)?;
            let mut bounded_req = req.clone();
            bounded_req.max_output_tokens = reservation.output;
            let stop = tokio::sync::Notify::new();
            let mut crossing = None;
            let reply = {
                // Each retried attempt counts the moment it failed, so calls running at
                // once anywhere in the tree see it; a retry that could cross a cap is not
                // announced, and the call is dropped during its wait, before it is sent.
                let mut counting = |update: StreamUpdate| {
                    if crossing.is_some() {
                        return;
                    }
                    if update == StreamUpdate::FailedAttempt
                        && let NextAttempt::WouldCross { spent_usd } =
                            self.tree.charge_failed_attempt(&reservation)
                    {
                        crossing = Some(spent_usd);
                        stop.notify_one();
                        return;
                    }
                    on_update(update);
                };
                let call = self.inner.stream(&bounded_req, &mut counting);
                // The stop is looked at first: the retrying client yields after reporting a
                // failed attempt, so the call is dropped before its next attempt is sent.
                tokio::select! {
                    biased;
                    () = stop.notified() => Err(ModelError::OverBudget(String::new())),
                    reply = call => reply,
                }
            };
            let reply = match (reply, crossing) {
                (Err(ModelError::OverBudget(_)), Some(spent_usd)) => Err(ModelError::OverBudget(
                    not_retried(self.tree.caps, spent_usd),
                )),
                (reply, _) => reply,
            };
            match &reply {
                Ok(response) if response.usage_reported => {
                    let cost = cost_usd(&response.model, &response.usage);
                    reservation.settle(Spent::Reported(&response.usage, cost));
                }
                Ok(_) => {
                    let tokens = reservation.tokens;
                    let unknown = Usage {
                        input_tokens: tokens,
                        ..Usage::default()
                    };
                    reservation.settle(Spent::Reported(&unknown, None));
                }
                Err(err) if err.reached_provider() => reservation.settle(Spent::Failed),
                Err(_) => reservation.settle(Spent::Nothing),
            }
            reply
        })
    }
}
