//! Ctrl-C as a stream that misses nothing: one listener for as long as the caller keeps the
//! receiver. A `tokio::signal::ctrl_c()` made afresh on each pass of a `select!` loop
//! misses a signal that arrives while the loop body runs (an event being written, an
//! answer being read).

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// Each Ctrl-C from now on, until the receiver is dropped (the listener ends at the next
/// signal after that).
pub fn sigint() -> UnboundedReceiver<()> {
    let (tx, rx) = unbounded_channel();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).is_err() {
                break;
            }
        }
    });
    rx
}
