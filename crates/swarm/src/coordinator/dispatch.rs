//! Dispatching: which ready task starts now, on which model (the configured one, or a
//! fallback while its health is tripped) and with which share of what is left of the
//! swarm's budget; and the tasks that can never start (their dispatches spent, their
//! dependencies failed, the budget gone) are failed or skipped. Which tasks are ready is
//! `schedule`'s rule; starting one is `attempt`'s.

use super::{Coordinator, MIN_WORKER_TOKENS};
use crate::budget::Reservation;
use crate::events::SwarmEvent;
use crate::schedule::{self, Limits, Running};
use crate::task::{SwarmTask, TaskStatus};

impl Coordinator {
    /// Fails pending tasks that can never be dispatched again, and skips pending tasks
    /// whose dependencies failed or were skipped.
    pub(super) async fn cascade(&mut self) {
        let max = self.config.max_dispatches_per_task;
        let spent: Vec<String> = self
            .state
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Pending && t.dispatches() >= max)
            .map(|t| t.id.clone())
            .collect();
        for id in spent {
            let reason = format!("reached max_dispatches_per_task ({max})");
            if let Some(t) = self.state.task_mut(&id) {
                t.status = TaskStatus::Failed;
                t.reason = Some(reason.clone());
            }
            self.emit(SwarmEvent::TaskFailed {
                task_id: id,
                attempts: max,
                reason,
            });
        }
        loop {
            let skips = schedule::cascade(&self.state);
            if skips.is_empty() {
                return;
            }
            for (id, reason) in skips {
                self.skip(&id, reason);
            }
            self.save().await;
        }
    }

    pub(super) fn skip(&mut self, id: &str, reason: String) {
        if let Some(task) = self.state.task_mut(id) {
            task.status = TaskStatus::Skipped;
            task.reason = Some(reason.clone());
        }
        self.emit(SwarmEvent::TaskSkipped {
            task_id: id.to_owned(),
            reason,
        });
    }

    pub(super) fn model_for(&self, task: &SwarmTask) -> String {
        let m = &self.config.models;
        if task.kind.is_test() && !m.tester.is_empty() {
            m.tester.clone()
        } else if !m.worker.is_empty() {
            m.worker.clone()
        } else {
            self.deps.default_model.clone()
        }
    }

    /// Starts workers for every task that may start now.
    pub(super) async fn dispatch(&mut self) {
        let now = self.now();
        let running: Vec<Running> = self
            .active
            .keys()
            .filter_map(|id| self.state.task(id))
            .map(Running::of)
            .collect();
        let limits = Limits {
            max_workers: self.config.max_workers as usize,
            max_dispatches: self.config.max_dispatches_per_task,
        };
        let ready = schedule::ready(&self.state, &running, &self.not_before, now, limits);
        let mut changed = false;
        for id in ready {
            let Some(task) = self.state.task(&id).cloned() else {
                continue;
            };
            let preferred = self.model_for(&task);
            let Some(model) = self
                .health
                .pick(&preferred, &self.config.models.fallback, now)
                .map(str::to_owned)
            else {
                continue;
            };
            let Some((reservation, budget_args)) = self.worker_budget() else {
                if self.active.is_empty() {
                    // Nothing running will return budget: the cap is spent for good.
                    let ids: Vec<String> = self
                        .state
                        .tasks
                        .iter()
                        .filter(|t| t.status == TaskStatus::Pending)
                        .map(|t| t.id.clone())
                        .collect();
                    for id in ids {
                        self.skip(&id, "the swarm's budget cap is spent".into());
                    }
                    changed = true;
                }
                break;
            };
            self.start(task, model, reservation, budget_args);
            changed = true;
        }
        if changed {
            self.save().await;
        }
    }

    /// The budget of the next worker, reserved out of the swarm budget, and its flags; `None` when
    /// too little is left.
    fn worker_budget(&self) -> Option<(Reservation, Vec<String>)> {
        let remaining_tasks = self
            .state
            .tasks
            .iter()
            .filter(|t| matches!(t.status, TaskStatus::Pending))
            .count()
            .max(1) as u64;
        let mut args = Vec::new();
        let tokens = match (self.budget.tokens_left(), self.config.worker_max_tokens) {
            (None, None) => 0,
            (None, Some(w)) => w,
            (Some(left), w) => {
                let share = (left / remaining_tasks).max(MIN_WORKER_TOKENS).min(left);
                let t = w.map_or(share, |w| w.min(left));
                if t < MIN_WORKER_TOKENS.min(w.unwrap_or(u64::MAX)) {
                    return None;
                }
                t
            }
        };
        if tokens > 0 {
            args.extend(["--max-budget-tokens".to_owned(), tokens.to_string()]);
        }
        let usd = match self.budget.usd_left() {
            Some(left) => {
                let share = left / remaining_tasks as f64;
                if share <= 0.0 {
                    return None;
                }
                args.extend(["--max-budget-usd".to_owned(), format!("{share:.6}")]);
                share
            }
            None => 0.0,
        };
        let reservation = self.budget.reserve(tokens, usd).ok()?;
        Some((reservation, args))
    }
}
