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
        | ModelError::Cancelled => FailureKind::Request,
    }
}
