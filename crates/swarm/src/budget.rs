//! The swarm's cap: tokens and dollars for everything it runs — the coordinator's own
//! model calls (decomposition, enrichment, the judge) and every worker. A worker is given
//! a budget out of what is left before it starts (`atto exec --max-budget-tokens`, which
//! its session enforces before every call) and the coordinator's calls reserve their
//! bound before they are sent, so the sum can never cross the cap.

use std::sync::{Arc, Mutex};

use atto_llm::{
    BoxFuture, ModelClient, ModelError, ModelInfo, ModelRequest, ModelResponse, StreamUpdate,
};
use atto_protocol::Usage;

/// What the swarm may spend, and what it has.
#[derive(Debug, Default)]
struct Spending {
    max_tokens: Option<u64>,
    max_usd: Option<f64>,
    used_tokens: u64,
    used_usd: f64,
    /// Whether every spend had a known price.
    priced: bool,
    reserved_tokens: u64,
    reserved_usd: f64,
}

/// The swarm's budget; shared by the coordinator and its model client.
#[derive(Debug, Clone)]
pub struct SwarmBudget(Arc<Mutex<Spending>>);

/// A part of the budget held for one worker or call until it is settled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reservation {
    /// Tokens held.
    pub tokens: u64,
    /// Dollars held (0 when there is no dollar cap).
    pub usd: f64,
}

impl SwarmBudget {
    /// A budget with these caps, having spent `tokens` / `usd` already (a resumed run).
    pub fn new(
        max_tokens: Option<u64>,
        max_usd: Option<f64>,
        tokens: u64,
        usd: Option<f64>,
    ) -> SwarmBudget {
        SwarmBudget(Arc::new(Mutex::new(Spending {
            max_tokens,
            max_usd,
            used_tokens: tokens,
            used_usd: usd.unwrap_or(0.0),
            priced: usd.is_some(),
            ..Spending::default()
        })))
    }

    fn spending(&self) -> std::sync::MutexGuard<'_, Spending> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The caps.
    pub fn caps(&self) -> (Option<u64>, Option<f64>) {
        let b = self.spending();
        (b.max_tokens, b.max_usd)
    }

    /// Tokens and dollars spent (dollars `None` when a price was unknown).
    pub fn spent(&self) -> (u64, Option<f64>) {
        let b = self.spending();
        (b.used_tokens, b.priced.then_some(b.used_usd))
    }

    /// Tokens neither spent nor held (`None`: no token cap).
    pub fn tokens_left(&self) -> Option<u64> {
        let b = self.spending();
        b.max_tokens
            .map(|max| max.saturating_sub(b.used_tokens + b.reserved_tokens))
    }

    /// Dollars neither spent nor held (`None`: no dollar cap).
    pub fn usd_left(&self) -> Option<f64> {
        let b = self.spending();
        b.max_usd
            .map(|max| (max - b.used_usd - b.reserved_usd).max(0.0))
    }

    /// Holds `tokens` (and `usd`) when that much is left; `Err` says which cap is short.
    pub fn reserve(&self, tokens: u64, usd: f64) -> Result<Reservation, String> {
        let mut b = self.spending();
        if let Some(max) = b.max_tokens {
            let left = max.saturating_sub(b.used_tokens + b.reserved_tokens);
            if tokens > left {
                return Err(format!(
                    "the swarm's token cap ({max}) has {left} tokens left, {tokens} needed"
                ));
            }
        }
        let usd = if let Some(max) = b.max_usd {
            let left = (max - b.used_usd - b.reserved_usd).max(0.0);
            if usd > left {
                return Err(format!(
                    "the swarm's dollar cap (${max:.2}) has ${left:.4} left, ${usd:.4} needed"
                ));
            }
            usd
        } else {
            0.0
        };
        b.reserved_tokens += tokens;
        b.reserved_usd += usd;
        Ok(Reservation { tokens, usd })
    }

    /// Ends a reservation: what was spent is counted, the rest returned. `usd` is `None` when
    /// the price was unknown.
    pub fn settle(&self, reservation: Reservation, tokens: u64, usd: Option<f64>) {
        let mut b = self.spending();
        b.reserved_tokens = b.reserved_tokens.saturating_sub(reservation.tokens);
        b.reserved_usd = (b.reserved_usd - reservation.usd).max(0.0);
        b.used_tokens += tokens;
        match usd {
            Some(c) => b.used_usd += c,
            None => b.priced = false,
        }
    }
}

/// A model client whose calls are held against the budget before they are sent.
pub struct Capped {
    inner: Arc<dyn ModelClient>,
    budget: SwarmBudget,
    /// The user's output limit (`[limits] max_output_tokens`), lowering every call's.
    max_output: Option<u32>,
    /// Tokens and dollars the calls used, for the swarm's state.
    usage: Mutex<(Usage, Option<f64>)>,
}

impl Capped {
    /// `inner`'s calls, within `budget`.
    pub fn new(inner: Arc<dyn ModelClient>, budget: SwarmBudget) -> Capped {
        Capped {
            inner,
            budget,
            max_output: None,
            usage: Mutex::new((Usage::default(), Some(0.0))),
        }
    }

    /// Every call's output limited to `max` tokens (`None`: the callers' limits).
    pub fn with_output_limit(mut self, max: Option<u32>) -> Capped {
        self.max_output = max;
        self
    }

    /// What the calls so far used (tokens, dollars).
    pub fn used(&self) -> (u64, Option<f64>) {
        let u = self
            .usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (atto_llm::total_tokens(&u.0), u.1)
    }
}

impl ModelClient for Capped {
    fn info(&self) -> &ModelInfo {
        self.inner.info()
    }

    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest<'a>,
        on_update: &'a mut (dyn FnMut(StreamUpdate) + Send),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let limited;
            let req = match self.max_output {
                Some(max) if max < req.max_output_tokens => {
                    let mut lower = req.clone();
                    lower.max_output_tokens = max.max(1);
                    limited = lower;
                    &limited
                }
                _ => req,
            };
            // The input estimated on the generous side, plus the whole output bound.
            let input = req.bytes() / atto_llm::BYTES_PER_TOKEN;
            let bound = input + u64::from(req.max_output_tokens);
            let model = &self.inner.info().model;
            let estimate = Usage {
                input_tokens: input,
                output_tokens: u64::from(req.max_output_tokens),
                ..Usage::default()
            };
            let usd = atto_llm::cost_usd(model, &estimate).unwrap_or(0.0);
            let reservation = self
                .budget
                .reserve(bound, usd)
                .map_err(ModelError::OverBudget)?;
            let reply = self.inner.stream(req, on_update).await;
            match &reply {
                Ok(r) => {
                    let tokens = if r.usage_reported {
                        atto_llm::total_tokens(&r.usage)
                    } else {
                        bound
                    };
                    let cost = if r.usage_reported {
                        atto_llm::cost_usd(&r.model, &r.usage)
                    } else {
                        None
                    };
                    self.budget.settle(reservation, tokens, cost);
                    let mut u = self
                        .usage
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    if r.usage_reported {
                        atto_llm::add_usage(&mut u.0, &r.usage);
                    } else {
                        u.0.input_tokens += bound;
                    }
                    u.1 = match (u.1, cost) {
                        (Some(a), Some(b)) => Some(a + b),
                        _ => None,
                    };
                }
                Err(_) => self.budget.settle(reservation, 0, Some(0.0)),
            }
            reply
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn holds_never_add_up_past_the_cap() {
        let budget = SwarmBudget::new(Some(1000), None, 100, Some(0.0));
        let a = budget.reserve(600, 0.0).unwrap();
        assert!(
            budget.reserve(400, 0.0).is_err(),
            "100 spent + 600 held + 400 > 1000"
        );
        let b = budget.reserve(300, 0.0).unwrap();
        assert_eq!(budget.tokens_left(), Some(0));
        budget.settle(a, 250, Some(0.0));
        assert_eq!(budget.tokens_left(), Some(350));
        budget.settle(b, 300, None);
        assert_eq!(budget.spent(), (650, None));
    }

    #[test]
    fn a_dollar_cap_holds_dollars() {
        let budget = SwarmBudget::new(None, Some(1.0), 0, Some(0.5));
        assert!(budget.reserve(10, 0.6).is_err());
        let h = budget.reserve(10, 0.4).unwrap();
        assert!((budget.usd_left().unwrap() - 0.1).abs() < 1e-9);
        budget.settle(h, 10, Some(0.2));
        assert!((budget.usd_left().unwrap() - 0.3).abs() < 1e-9);
    }
}
