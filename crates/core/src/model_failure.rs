//! Which kind of failure a model error is, for the turn result and exit codes.

use atto_llm::{ModelError, ProviderErrorKind};
use atto_protocol::FailureKind;

/// Config: fix the setup and rerun. Transient: worth retrying later. Request: the
/// provider refused this request for another reason.
pub(crate) fn kind(err: &ModelError) -> FailureKind {
    match err {
        ModelError::Exhausted { last, .. } => kind(last),
        ModelError::Auth { .. } | ModelError::Setup(_) | ModelError::Refused(_) => {
            FailureKind::Config
        }
        ModelError::Provider {
            kind: ProviderErrorKind::Auth,
            ..
        } => FailureKind::Config,
        ModelError::Transport(_)
        | ModelError::Overloaded { .. }
        | ModelError::StreamCut(_)
        | ModelError::Decode(_)
        | ModelError::CircuitOpen { .. } => FailureKind::Transient,
        ModelError::Status { .. } | ModelError::Provider { .. } => {
            if err.is_retryable() {
                FailureKind::Transient
            } else {
                FailureKind::Request
            }
        }
        ModelError::BadRequest { .. }
        | ModelError::ContextTooLong { .. }
        | ModelError::Cancelled
        | ModelError::OverBudget(_) => FailureKind::Request,
    }
}

/// Whether the provider refused for want of quota or credit (a usage limit, not a
/// transient rate limit): HTTP 402, or a 429 / error whose message says quota, billing
/// or credit.
pub(crate) fn is_usage_limit(err: &ModelError) -> bool {
    let says_quota = |message: &str| {
        let m = message.to_ascii_lowercase();
        [
            "quota",
            "billing",
            "credit",
            "insufficient_balance",
            "usage limit",
        ]
        .iter()
        .any(|w| m.contains(w))
    };
    match err {
        ModelError::Exhausted { last, .. } => is_usage_limit(last),
        ModelError::Status { status: 402, .. } => true,
        ModelError::Status {
            status: 429,
            message,
            ..
        } => says_quota(message),
        ModelError::Provider { message, .. } | ModelError::BadRequest { message } => {
            says_quota(message)
        }
        ModelError::Status { .. }
        | ModelError::Transport(_)
        | ModelError::Refused(_)
        | ModelError::Auth { .. }
        | ModelError::ContextTooLong { .. }
        | ModelError::Overloaded { .. }
        | ModelError::StreamCut(_)
        | ModelError::Decode(_)
        | ModelError::CircuitOpen { .. }
        | ModelError::Setup(_)
        | ModelError::Cancelled
        | ModelError::OverBudget(_) => false,
    }
}
