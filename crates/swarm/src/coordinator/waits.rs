//! Telling the user that tasks wait for a model whose circuit breaker is open: which
//! model, why, and how long, at once and then every [`WAIT_NOTICE_EVERY_MS`] until it
//! takes dispatches again, so a wait of minutes is never silent. It changes nothing about
//! when tasks are dispatched (the health monitor and the scheduler decide that).

use std::collections::BTreeMap;

use super::Coordinator;
use crate::events::SwarmEvent;
use crate::health::Pause;
use crate::task::TaskStatus;
use crate::text::clip;

/// How often a wait that goes on is announced again (the countdown).
pub(super) const WAIT_NOTICE_EVERY_MS: u64 = 30_000;

/// Characters of a failure kept in the reason.
const REASON_MAX: usize = 240;

impl Coordinator {
    /// Announces the models pending tasks wait for, each when it starts to be waited
    /// for and then every [`WAIT_NOTICE_EVERY_MS`]. Returns when the next announcement
    /// is due, for the loop's sleep.
    pub(super) fn announce_waits(&mut self) -> Option<u64> {
        let now = self.now();
        let mut waiting: BTreeMap<String, Pause> = BTreeMap::new();
        for task in self
            .state
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Pending)
        {
            let model = self.model_for(task);
            if self
                .health
                .pick(&model, &self.config.models.fallback, now)
                .is_some()
            {
                continue;
            }
            if let Some(pause) = self.health.pause(&model, now) {
                waiting.insert(model, pause);
            }
        }
        self.wait_notices.retain(|m, _| waiting.contains_key(m));
        let mut due: Option<u64> = None;
        for (model, pause) in waiting {
            let last = self.wait_notices.get(&model).copied();
            let next = match last {
                Some(at) if now < at.saturating_add(WAIT_NOTICE_EVERY_MS) => {
                    at.saturating_add(WAIT_NOTICE_EVERY_MS)
                }
                _ => {
                    self.emit(SwarmEvent::ModelWaiting {
                        model: model.clone(),
                        wait_seconds: pause.until_ms.saturating_sub(now).div_ceil(1000),
                        reason: reason(&pause),
                    });
                    self.wait_notices.insert(model, now);
                    now.saturating_add(WAIT_NOTICE_EVERY_MS)
                }
            };
            if next < pause.until_ms {
                due = Some(due.map_or(next, |d| d.min(next)));
            }
        }
        due
    }
}

/// `3 failures (last: worker exited 1: HTTP 400)`: what the user needs to judge the wait.
fn reason(pause: &Pause) -> String {
    let last = pause.last_error.lines().next().unwrap_or("").trim();
    format!(
        "{} failure{} (last: {})",
        pause.failures,
        if pause.failures == 1 { "" } else { "s" },
        clip(last, REASON_MAX)
    )
}
