//! What a front end asks the engine to do.

use serde::{Deserialize, Serialize};

use crate::ApprovalDecision;

/// A request from a front end to the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a turn with this prompt (queued if a turn is running).
    UserInput {
        /// The prompt.
        text: String,
    },
    /// Cancel the running turn; the session stays usable.
    Interrupt,
    /// Answer an `approval_required` event.
    Approval {
        /// The request's id.
        id: String,
        /// The answer.
        #[serde(flatten)]
        decision: ApprovalDecision,
    },
    /// End the session once the ops sent before it are done (send `Interrupt` first to
    /// cancel a running turn).
    Shutdown,
}
