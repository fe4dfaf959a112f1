//! The budget of a session tree: the session-wide token and dollar caps, each session's
//! allowance (a child's is carved out of its parent's and the unspent rest handed back),
//! and the check every model call passes *before* it is sent.
//!
//! A call reserves what it could cost: its input, estimated from the request's size and
//! the last call's reported input, plus its output, which atto bounds by setting the
//! request's output limit to what is left. So no call can cross a cap, however many
//! calls run at once anywhere in the tree. What a call really cost replaces its
//! reservation when it ends; a call whose usage the server did not report counts as
//! its reservation (unknown is not free). Every attempt that may have reached the
//! provider counts: a retried attempt, and a call that failed, each cost their input at
//! the model's input price, never nothing. A failed attempt is paid out of its call's
//! reservation's room, and the call is retried only while the reservation still fits
//! beside what was spent: retries cannot cross a cap either.
//!
//! Holds a plain mutex only between awaits, never across one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use atto_llm::{BYTES_PER_TOKEN, cost_usd, total_tokens};
use atto_protocol::Usage;

pub use client::Budgeted;

mod client;

/// The smallest output a call is sent with: below it a reply could not say anything.
const MIN_OUTPUT_TOKENS: u64 = 64;

/// The caps no session of the tree may cross, whatever the nesting.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Caps {
    /// Tokens (input, output and cache, every call of every session).
    pub tokens: Option<u64>,
    /// US dollars.
    pub usd: Option<f64>,
}

/// One session's allowance and spend.
#[derive(Debug, Default)]
struct Node {
    /// Tokens this session (with its children) may use; `None`: only the caps bound it.
    limit: Option<u64>,
    /// Tokens its own calls used, plus what its finished children used.
    used: u64,
    /// Tokens reserved by its calls in flight.
    reserved: u64,
    /// Tokens handed to children still running.
    handed_out: u64,
    /// The input tokens of its last call, and that request's size: the next input is at
    /// least as large, plus what was added since.
    last_input: u64,
    last_bytes: u64,
    /// What its own calls used and cost.
    own_usage: Usage,
    own_cost: Option<f64>,
    /// What its finished children (and theirs) used and cost.
    children_usage: Usage,
    children_cost: Option<f64>,
}

/// What a finished child used, with its own children.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    /// Tokens, every call.
    pub tokens: u64,
    /// Tokens by kind.
    pub usage: Usage,
    /// US dollars; `None` when a price is unknown.
    pub cost: Option<f64>,
}

#[derive(Debug, Default)]
struct State {
    used_tokens: u64,
    reserved_tokens: u64,
    used_usd: f64,
    reserved_usd: f64,
    nodes: HashMap<String, Node>,
}

/// The budget of one session tree, shared by every session in it.
#[derive(Debug)]
pub struct Tree {
    caps: Caps,
    state: Mutex<State>,
}

impl Tree {
    /// A tree whose root session is `root`.
    pub fn new(caps: Caps, root: &str) -> Arc<Tree> {
        let mut state = State::default();
        state.nodes.insert(
            root.to_owned(),
            Node {
                limit: caps.tokens,
                own_cost: Some(0.0),
                children_cost: Some(0.0),
                ..Node::default()
            },
        );
        Arc::new(Tree {
            caps,
            state: Mutex::new(state),
        })
    }

    /// The caps in force.
    pub fn caps(&self) -> Caps {
        self.caps
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves counters that are still sums;
        // going on with them is better than stopping every session of the tree.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Tokens `node` may still use: its own allowance and the tree's cap, whichever is
    /// smaller; `None` when neither bounds it.
    pub fn remaining(&self, node: &str) -> Option<u64> {
        remaining(&self.lock(), self.caps, node)
    }

    /// Tokens `node` has used (with its finished children) and its allowance.
    pub fn spent(&self, node: &str) -> (u64, Option<u64>) {
        let state = self.lock();
        state
            .nodes
            .get(node)
            .map_or((0, None), |n| (n.used + n.reserved, n.limit))
    }

    /// The input tokens a call of `node` whose request is `bytes` long is reserved for:
    /// what the check before each call will count.
    pub fn next_input(&self, node: &str, bytes: u64) -> u64 {
        input_estimate(&self.lock(), node, bytes)
    }

    /// Carves a child's allowance out of `parent`'s: `wanted` if given (it must fit),
    /// else the share of `share`. The parent's remaining budget drops by it until the
    /// child ends.
    pub fn allot(
        &self,
        parent: &str,
        child: &str,
        wanted: Option<u64>,
        share: &Share,
    ) -> Result<u64, String> {
        let mut state = self.lock();
        let left = remaining(&state, self.caps, parent);
        let amount = match (wanted, left) {
            (Some(w), Some(l)) if w > l => {
                return Err(format!(
                    "a budget of {w} tokens was asked for, but only {l} are left to hand out; \
                     ask for {l} or fewer"
                ));
            }
            (Some(w), _) => w,
            (None, left) => share.of(left),
        };
        if amount < share.floor {
            return Err(format!(
                "no budget left for a subagent: {amount} tokens remain and a subagent needs at \
                 least {}; finish the work here or raise --max-budget-tokens",
                share.floor
            ));
        }
        if let Some(p) = state.nodes.get_mut(parent) {
            p.handed_out += amount;
        }
        state.nodes.insert(
            child.to_owned(),
            Node {
                limit: Some(amount),
                own_cost: Some(0.0),
                children_cost: Some(0.0),
                ..Node::default()
            },
        );
        Ok(amount)
    }

    /// Ends `child`: its unspent allowance goes back to `parent`, what it used stays
    /// spent there. Returns what the child (with its own children) used and cost.
    pub fn finish(&self, parent: &str, child: &str) -> Spend {
        let mut state = self.lock();
        let Some(node) = state.nodes.remove(child) else {
            return Spend::default();
        };
        let mut usage = node.own_usage;
        atto_llm::add_usage(&mut usage, &node.children_usage);
        let spend = Spend {
            tokens: node.used,
            usage,
            cost: add_cost(node.own_cost, node.children_cost),
        };
        if let Some(p) = state.nodes.get_mut(parent) {
            p.handed_out = p.handed_out.saturating_sub(node.limit.unwrap_or(0));
            p.used += node.used;
            atto_llm::add_usage(&mut p.children_usage, &spend.usage);
            p.children_cost = add_cost(p.children_cost, spend.cost);
        }
        spend
    }

    /// What `node`'s finished children used and cost, in all.
    pub fn children_spend(&self, node: &str) -> (Usage, Option<f64>) {
        let state = self.lock();
        state
            .nodes
            .get(node)
            .map_or((Usage::default(), Some(0.0)), |n| {
                (n.children_usage, n.children_cost)
            })
    }

    /// Reserves what a call of `node` could cost, or says which budget it would cross.
    /// `bytes` is the request's size; `max_output` what the caller asked for.
    fn reserve(
        self: &Arc<Self>,
        node: &str,
        bytes: u64,
        max_output: u32,
        model: &str,
    ) -> Result<Reservation, String> {
        let mut state = self.lock();
        let left = remaining(&state, self.caps, node);
        let estimate = input_estimate(&state, node, bytes);
        let mut output = u64::from(max_output);
        if let Some(left) = left {
            let room = left.saturating_sub(estimate);
            if room < MIN_OUTPUT_TOKENS.min(output) {
                return Err(over(node_kind(&state, node, self.caps), left, estimate));
            }
            output = output.min(room);
        }
        let mut usd = 0.0;
        // What an attempt that fails costs: its input at the model's price.
        let input_usd = cost_usd(
            model,
            &Usage {
                input_tokens: estimate,
                ..Usage::default()
            },
        );
        if let Some(cap) = self.caps.usd {
            (output, usd) = affordable(&state, cap, model, estimate, output)?;
        }
        let tokens = estimate + output;
        state.reserved_tokens += tokens;
        state.reserved_usd += usd;
        if let Some(n) = state.nodes.get_mut(node) {
            n.reserved += tokens;
        }
        Ok(Reservation {
            tree: Arc::clone(self),
            node: node.to_owned(),
            tokens,
            usd,
            input: estimate,
            input_usd,
            bytes,
            output: u32::try_from(output).unwrap_or(u32::MAX),
            settled: false,
        })
    }

    fn settle(&self, r: &Reservation, spent: Spent<'_>) {
        let mut state = self.lock();
        state.reserved_tokens = state.reserved_tokens.saturating_sub(r.tokens);
        state.reserved_usd = (state.reserved_usd - r.usd).max(0.0);
        if let Some(n) = state.nodes.get_mut(&r.node) {
            n.reserved = n.reserved.saturating_sub(r.tokens);
        }
        match spent {
            Spent::Reported(usage, cost) => {
                let input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
                // Unreported usage counts as its reservation.
                let charge = Charge {
                    tokens: total_tokens(usage),
                    usd: cost.unwrap_or(r.usd),
                    usage: *usage,
                    cost,
                    input,
                };
                charge.add(&mut state, r);
            }
            Spent::Failed => failed_attempt(r).add(&mut state, r),
            Spent::Nothing => {}
        }
    }

    /// Counts one attempt of the call `r` reserved for that failed and is about to be
    /// tried again: its input, at the model's price, on top of what the call itself will
    /// cost. Says whether the next attempt, which may spend the whole reservation, still
    /// fits under every cap.
    fn charge_failed_attempt(&self, r: &Reservation) -> NextAttempt {
        let mut state = self.lock();
        failed_attempt(r).add(&mut state, r);
        let tokens = self
            .caps
            .tokens
            .is_none_or(|cap| state.used_tokens + state.reserved_tokens <= cap);
        let usd = self
            .caps
            .usd
            .is_none_or(|cap| state.used_usd + state.reserved_usd <= cap);
        let own = state.nodes.get(&r.node).is_none_or(|n| {
            n.limit
                .is_none_or(|limit| n.used + n.reserved + n.handed_out <= limit)
        });
        if tokens && usd && own {
            NextAttempt::Fits
        } else {
            NextAttempt::WouldCross {
                spent_usd: state.used_usd,
            }
        }
    }

    /// Tokens used by every call of the tree so far (for tests and the summary).
    pub fn used_tokens(&self) -> u64 {
        self.lock().used_tokens
    }
}

/// Whether a failed call may be tried again within the budget.
#[derive(Debug, Clone, Copy, PartialEq)]
enum NextAttempt {
    Fits,
    /// Another attempt could cross a cap; what the tree has spent in dollars.
    WouldCross {
        spent_usd: f64,
    },
}

/// What one call, or one attempt of it, spent.
enum Spent<'a> {
    /// The server's reported usage, and its cost when the price is known.
    Reported(&'a Usage, Option<f64>),
    /// It failed after the request may have reached the provider.
    Failed,
    /// It was refused before anything was sent.
    Nothing,
}

/// What one attempt adds to the tree's and its session's spend.
struct Charge {
    tokens: u64,
    usd: f64,
    usage: Usage,
    cost: Option<f64>,
    /// Its input tokens, for the estimate of the next call's.
    input: u64,
}

impl Charge {
    fn add(&self, state: &mut State, r: &Reservation) {
        state.used_tokens += self.tokens;
        state.used_usd += self.usd;
        if let Some(n) = state.nodes.get_mut(&r.node) {
            n.used += self.tokens;
            atto_llm::add_usage(&mut n.own_usage, &self.usage);
            n.own_cost = add_cost(n.own_cost, self.cost);
            n.last_input = self.input;
            n.last_bytes = r.bytes;
        }
    }
}

/// A failed attempt of the call `r` reserved for: the server may have read its input, so
/// that counts, at the model's input price (the whole reservation when the price is
/// unknown: unknown is not free).
fn failed_attempt(r: &Reservation) -> Charge {
    Charge {
        tokens: r.input,
        usd: r.input_usd.unwrap_or(r.usd),
        usage: Usage {
            input_tokens: r.input,
            ..Usage::default()
        },
        cost: r.input_usd,
        input: r.input,
    }
}

/// What is reserved for one call in flight.
struct Reservation {
    tree: Arc<Tree>,
    node: String,
    tokens: u64,
    usd: f64,
    input: u64,
    /// Its input at the model's input price; `None` when the price is unknown.
    input_usd: Option<f64>,
    bytes: u64,
    output: u32,
    settled: bool,
}

impl Reservation {
    fn settle(mut self, spent: Spent<'_>) {
        self.settled = true;
        self.tree.settle(&self, spent);
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // A call dropped mid-stream (cancelled) may have been read by the server.
        if !self.settled {
            self.tree.settle(self, Spent::Failed);
        }
    }
}

/// How a child's default allowance is computed: the seed's 15 % of what the parent has
/// left, clamped to 50K–200K, never more than is left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// Fraction of the parent's remaining tokens.
    pub fraction: f64,
    /// Least a child gets (unless less is left).
    pub min: u64,
    /// Most a child gets.
    pub max: u64,
    /// Below this a child is not started at all.
    pub floor: u64,
}

impl Default for Share {
    fn default() -> Self {
        Share {
            fraction: 0.15,
            min: 50_000,
            max: 200_000,
            floor: 1_000,
        }
    }
}

impl Share {
    /// The allowance for a child whose parent has `left` tokens (`None`: unbounded).
    pub fn of(&self, left: Option<u64>) -> u64 {
        match left {
            None => self.max,
            Some(left) => {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss,
                    reason = "a non-negative fraction of a token count"
                )]
                let share = (left as f64 * self.fraction) as u64;
                share.clamp(self.min, self.max).min(left)
            }
        }
    }
}

/// Under the dollar cap `cap`: how much of `output` a call with `estimate` input tokens
/// can afford, and the dollars to reserve for it. Refused when the model's price is
/// unknown or too little is left.
fn affordable(
    state: &State,
    cap: f64,
    model: &str,
    estimate: u64,
    output: u64,
) -> Result<(u64, f64), String> {
    let cost = |out: u64| {
        cost_usd(
            model,
            &Usage {
                input_tokens: estimate,
                output_tokens: out,
                ..Usage::default()
            },
        )
    };
    let (Some(with_none), Some(per_output)) = (cost(0), cost(1_000_000)) else {
        return Err(format!(
            "not sent: the dollar cap (--max-budget-usd {cap}) cannot be checked \
                 because the price of model {model} is unknown. Use --max-budget-tokens to \
                 cap this model, or a model with a known price"
        ));
    };
    let per_token = (per_output - with_none) / 1_000_000.0;
    let room = cap - state.used_usd - state.reserved_usd - with_none;
    // Token counts stay far below 2^53: the conversions are exact.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked non-negative, bounded by `output`"
    )]
    let affordable = if per_token > 0.0 && room > 0.0 {
        ((room / per_token).floor() as u64).min(output)
    } else if room > 0.0 {
        output
    } else {
        0
    };
    if affordable < MIN_OUTPUT_TOKENS.min(output) {
        return Err(format!(
            "not sent: the next model call could cost more than the ${cap:.2} left \
                 under the dollar cap (${:.4} spent); raise --max-budget-usd to go on",
            state.used_usd
        ));
    }
    #[expect(clippy::cast_precision_loss, reason = "token counts far below 2^53")]
    let usd = with_none + per_token * affordable as f64;
    Ok((affordable, usd))
}

/// A call's input: at least its request's size in tokens, and at least the last call's
/// reported input plus what was added since.
fn input_estimate(state: &State, node: &str, bytes: u64) -> u64 {
    state.nodes.get(node).map_or(bytes / BYTES_PER_TOKEN, |n| {
        (bytes / BYTES_PER_TOKEN)
            .max(n.last_input + bytes.saturating_sub(n.last_bytes) / BYTES_PER_TOKEN)
    })
}

/// What the tree's cap and `node`'s own allowance leave, each `None` when unbounded.
fn lefts(state: &State, caps: Caps, node: &str) -> (Option<u64>, Option<u64>) {
    let tree = caps
        .tokens
        .map(|cap| cap.saturating_sub(state.used_tokens + state.reserved_tokens));
    let own = state.nodes.get(node).and_then(|n| {
        n.limit
            .map(|l| l.saturating_sub(n.used + n.reserved + n.handed_out))
    });
    (tree, own)
}

fn remaining(state: &State, caps: Caps, node: &str) -> Option<u64> {
    match lefts(state, caps, node) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Which budget binds `node`: its own allowance or the session-wide cap.
fn node_kind(state: &State, node: &str, caps: Caps) -> &'static str {
    match lefts(state, caps, node) {
        (Some(t), Some(o)) if o < t => "its own token budget",
        (Some(_), _) => "the session's token cap (--max-budget-tokens)",
        _ => "its own token budget",
    }
}

fn over(which: &str, left: u64, estimate: u64) -> String {
    format!(
        "not sent: the next model call (about {estimate} tokens of input) would cross {which}, \
         which has {left} tokens left"
    )
}

/// Why a failed call was not tried again.
fn not_retried(caps: Caps, spent_usd: f64) -> String {
    let raise = match (caps.usd, caps.tokens) {
        (Some(cap), _) => {
            format!("${spent_usd:.4} of the ${cap:.2} dollar cap is spent; raise --max-budget-usd")
        }
        (None, Some(cap)) => format!(
            "the {cap}-token cap or this session's budget is nearly spent; raise \
             --max-budget-tokens"
        ),
        (None, None) => "this subagent's token budget is nearly spent; give it more".to_owned(),
    };
    format!(
        "the model call failed and was not retried: another attempt could cross the budget \
         ({raise} to go on). Failed attempts count at the model's input price."
    )
}

fn add_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? + b?)
}

#[cfg(test)]
mod tests;
