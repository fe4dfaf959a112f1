//! Learnings on screen: proposals, changes and what a turn recalled, as transcript lines;
//! `/learnings` answers as a notice; and the review queue behind the learning dialog (Y
//! validates, N rejects, S skips for now). The dialog shows only between turns, when no
//! approval or decision is asked, so it never takes keys typed for something else.

use std::collections::VecDeque;

use atto_present::learning as present;
use atto_protocol::{Event, Learning, LearningStatus};

use super::App;
use crate::transcript::Kind;
use crate::view::text::sanitize;

/// Proposals waiting for the user's word, oldest first.
#[derive(Debug, Default)]
pub(crate) struct ReviewQueue(VecDeque<Learning>);

impl App {
    /// Learning events; `None` for other events.
    pub(super) fn learning_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::LearningProposed { learning } => {
                self.quiet(present::proposed_line(learning));
                if learning.status == LearningStatus::Proposed
                    && !self.reviews.0.iter().any(|l| l.id == learning.id)
                {
                    self.reviews.0.push_back(learning.clone());
                }
            }
            Event::LearningUpdated { learning } => {
                self.reviews.0.retain(|l| l.id != learning.id);
                self.push(Kind::Notice(
                    sanitize(&present::updated_line(learning)).into_owned(),
                ));
            }
            Event::LearningsUsed { learnings, .. } => self.quiet(present::used_line(learnings)),
            Event::LearningList {
                learnings,
                detailed,
            } => {
                let text = present::list_lines(learnings, *detailed).join("\n");
                self.push(Kind::Notice(sanitize(&text).into_owned()));
            }
            _ => return None,
        }
        Some(())
    }

    /// The proposal the learning dialog asks about now: the oldest waiting, between turns
    /// and when nothing else is asked.
    pub fn learning_review(&self) -> Option<&Learning> {
        if self.running || self.approval.is_some() || self.decision.is_some() {
            return None;
        }
        self.reviews.0.front()
    }

    /// Takes the proposal the dialog shows (answered, or skipped for now).
    pub fn take_learning_review(&mut self) -> Option<Learning> {
        // Only the proposal on screen is taken.
        self.learning_review()?;
        self.reviews.0.pop_front()
    }

    /// Proposals waiting, the one shown included.
    pub fn learning_reviews_waiting(&self) -> usize {
        self.reviews.0.len()
    }
}
