//! The one thing a front end holds: a way to send `Op`s and receive `Event`s. Channels
//! only; the session that answers them is atto-core's, which makes these with
//! [`AgentHandle::new`].

use tokio::sync::mpsc;

use crate::{Event, Op};

/// A front end's connection to a running session.
pub struct AgentHandle {
    ops: mpsc::UnboundedSender<Op>,
    events: mpsc::UnboundedReceiver<Event>,
}

/// The session has ended and takes no more ops.
#[derive(Debug, thiserror::Error)]
#[error("the session has ended; start a new one")]
pub struct SessionClosed;

impl AgentHandle {
    /// The handle of a session that reads `ops` and sends `events`.
    pub fn new(ops: mpsc::UnboundedSender<Op>, events: mpsc::UnboundedReceiver<Event>) -> Self {
        Self { ops, events }
    }

    /// Sends an op to the session. Never blocks.
    pub fn submit(&self, op: Op) -> Result<(), SessionClosed> {
        self.ops.send(op).map_err(|_| SessionClosed)
    }

    /// The next event, or `None` once the session has ended and every event was read.
    pub async fn next_event(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    /// A second sender of ops, for a front end that reads events in one task and
    /// sends ops (such as `Interrupt` on Ctrl-C) from another.
    pub fn op_sender(&self) -> OpSender {
        OpSender(self.ops.clone())
    }
}

/// Sends ops to a session; cheap to clone.
#[derive(Clone)]
pub struct OpSender(mpsc::UnboundedSender<Op>);

impl OpSender {
    /// Sends an op to the session. Never blocks.
    pub fn submit(&self, op: Op) -> Result<(), SessionClosed> {
        self.0.send(op).map_err(|_| SessionClosed)
    }
}
