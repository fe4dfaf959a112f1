//! Learning events as text: proposals (with how to review them), changes, the learnings a
//! turn recalled, and `/learnings` answers.

use atto_present::learning as present;
use atto_protocol::{Event, LearningStatus};

/// The text for a learning event; `None` for other events.
pub(super) fn text(event: &Event) -> Option<String> {
    let lines = match event {
        Event::LearningProposed { learning } => {
            let mut lines = vec![present::proposed_line(learning)];
            if learning.status == LearningStatus::Proposed {
                lines.push(format!("  {}", present::REVIEW_HINT));
            }
            lines
        }
        Event::LearningUpdated { learning } => vec![present::updated_line(learning)],
        Event::LearningsUsed { learnings, .. } => vec![present::used_line(learnings)],
        Event::LearningList {
            learnings,
            detailed,
        } => present::list_lines(learnings, *detailed),
        _ => return None,
    };
    Some(lines.iter().map(|l| format!("{l}\n")).collect())
}
