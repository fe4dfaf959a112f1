//! The line session's review of proposed learnings: after a turn, each learning proposed in
//! it is put to the user with the terminal UI's keys — y validates, n rejects, s skips for
//! now. A line that is none of them skips the rest and is taken as the next prompt, so a
//! script feeding prompts is never derailed by a question it did not expect.

use atto_present::learning as present;
use atto_protocol::AgentHandle;
use atto_protocol::{Event, Learning, LearningCommand, Op};
use tokio::io::{BufReader, Lines, Stdin};

use super::{Answer, LineState, Printer, answer, wait};

/// What the review left behind.
pub(super) enum Reviewed {
    /// Every proposal was answered or skipped.
    Done,
    /// A line that was not an answer: the next prompt or command.
    Next(String),
    /// The session ended.
    Ended,
}

/// Asks about each of `proposals` in turn.
pub(super) async fn review(
    handle: &mut AgentHandle,
    lines: &mut Lines<BufReader<Stdin>>,
    renderer: &mut Printer,
    state: &mut LineState,
    proposals: Vec<Learning>,
) -> Reviewed {
    let ops = handle.op_sender();
    let mut sigint = crate::signal::sigint();
    for learning in proposals {
        eprintln!(
            "  review {} — {}",
            atto_present::clean::visible(&present::proposed_line(&learning)),
            present::REVIEW_KEYS
        );
        let line = match answer(lines, &mut sigint).await {
            Answer::Line(line) => line,
            Answer::Ended | Answer::Interrupted => return Reviewed::Done,
        };
        let id = learning.id;
        let command = match line.trim() {
            "y" | "Y" | "yes" => LearningCommand::Validate { id },
            "n" | "N" | "no" => LearningCommand::Reject { id },
            "s" | "S" | "skip" | "" => continue,
            _ => return Reviewed::Next(line),
        };
        if ops.submit(Op::Learning { command }).is_err() {
            return Reviewed::Ended;
        }
        let answered = wait(handle, lines, renderer, state, |e| {
            matches!(e, Event::LearningUpdated { .. } | Event::Error { .. })
        })
        .await;
        if answered.is_none() {
            return Reviewed::Ended;
        }
    }
    Reviewed::Done
}
