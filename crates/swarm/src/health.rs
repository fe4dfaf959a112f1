//! The seed's HealthMonitor: a circuit breaker per model. Three failures of a model within
//! [`FAILURE_WINDOW_MS`] trip its breaker (health 0, no new dispatches); it recovers by
//! itself, [`RECOVERY_PER_PERIOD`] health per [`RECOVERY_PERIOD_MS`] without a failure, and
//! lets dispatches through again (half-open) from [`HALF_OPEN_HEALTH`]. A success then closes
//! it; a failure trips it again at once. Recovered to full health, the trip is forgotten.
//!
//! Time is passed in (milliseconds from any fixed origin), so the monitor never reads a clock
//! and tests drive it with a fake one. It decides nothing about retries or which task runs;
//! the scheduler asks it which model may take a dispatch, and when one next can.

use std::collections::{HashMap, VecDeque};

/// Failures older than this do not count towards a trip.
pub const FAILURE_WINDOW_MS: u64 = 60_000;

/// Failures within the window that trip the breaker.
pub const TRIP_FAILURES: usize = 3;

/// A tripped model regains [`RECOVERY_PER_PERIOD`] health per full period of this length
/// without a failure.
pub const RECOVERY_PERIOD_MS: u64 = 60_000;

/// Health regained per idle period (5 per minute, as in the seed).
pub const RECOVERY_PER_PERIOD: u8 = 5;

/// Health from which a tripped model takes dispatches again (half-open): five idle minutes.
pub const HALF_OPEN_HEALTH: u8 = 25;

/// Full health: a closed breaker, or a tripped one that recovered all the way.
pub const FULL_HEALTH: u8 = 100;

/// A breaker tripped or closed, for `swarm.model.health`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthChange {
    /// The model.
    pub model: String,
    /// Whether dispatches to it are now stopped.
    pub tripped: bool,
    /// Its health afterwards, 0–100.
    pub health: u8,
}

/// Why a tripped model takes no dispatches, and until when: what the user is told while
/// the swarm waits for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pause {
    /// When it takes dispatches again (half-open), in the monitor's milliseconds.
    pub until_ms: u64,
    /// Failures since it was last healthy (the ones that tripped it and any since).
    pub failures: usize,
    /// What its latest failure said.
    pub last_error: String,
}

/// The circuit breakers of every model seen so far; models never seen are healthy.
#[derive(Debug, Default)]
pub struct HealthMonitor {
    models: HashMap<String, ModelHealth>,
}

#[derive(Debug, Default)]
struct ModelHealth {
    /// Failures while closed, oldest first, pruned to the window.
    failures: VecDeque<u64>,
    /// When tripped: the time of its latest failure (the trip or one since), from which
    /// recovery counts.
    tripped_since: Option<u64>,
    /// Failures since the model was last healthy, counted for the user (not for the trip).
    failures_seen: usize,
    /// What its latest failure said.
    last_error: String,
}

/// Where a breaker stands at a given time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Dispatches go through.
    Closed,
    /// Tripped, no dispatches; recovery has reached the given health.
    Open(u8),
    /// Tripped, recovered enough to take dispatches (but not all the way); a success
    /// closes it, a failure trips it again.
    HalfOpen(u8),
}

impl ModelHealth {
    fn phase(&self, now_ms: u64) -> Phase {
        let Some(since) = self.tripped_since else {
            return Phase::Closed;
        };
        let periods = now_ms.saturating_sub(since) / RECOVERY_PERIOD_MS;
        let health = periods
            .saturating_mul(u64::from(RECOVERY_PER_PERIOD))
            .min(u64::from(FULL_HEALTH));
        // At most FULL_HEALTH, so it fits.
        let health = u8::try_from(health).unwrap_or(FULL_HEALTH);
        if health >= FULL_HEALTH {
            // Recovered all the way: the trip is forgotten.
            Phase::Closed
        } else if health >= HALF_OPEN_HEALTH {
            Phase::HalfOpen(health)
        } else {
            Phase::Open(health)
        }
    }
}

impl HealthMonitor {
    /// A monitor that has seen no model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a failed dispatch of `model` at `now_ms`. Returns the change when this
    /// failure tripped the breaker (the third within the window, or any while half-open).
    /// `why` is what the failure said, kept for [`HealthMonitor::pause`].
    pub fn record_failure(&mut self, model: &str, now_ms: u64, why: &str) -> Option<HealthChange> {
        let entry = self.models.entry(model.to_owned()).or_default();
        why.clone_into(&mut entry.last_error);
        match entry.phase(now_ms) {
            Phase::Open(_) => {
                // A dispatch sent before the trip failed late: recovery starts over.
                entry.tripped_since = Some(now_ms);
                entry.failures_seen += 1;
                None
            }
            Phase::HalfOpen(_) => {
                entry.tripped_since = Some(now_ms);
                entry.failures_seen += 1;
                Some(tripped(model))
            }
            Phase::Closed => {
                entry.tripped_since = None;
                entry
                    .failures
                    .retain(|&t| now_ms.saturating_sub(t) <= FAILURE_WINDOW_MS);
                entry.failures.push_back(now_ms);
                entry.failures_seen = entry.failures.len();
                if entry.failures.len() < TRIP_FAILURES {
                    return None;
                }
                entry.failures.clear();
                entry.tripped_since = Some(now_ms);
                Some(tripped(model))
            }
        }
    }

    /// Records a successful dispatch of `model`. Returns the change when it closed a
    /// tripped breaker that was taking dispatches again; otherwise nothing changes (a
    /// success does not forgive recent failures of a closed breaker).
    pub fn record_success(&mut self, model: &str, now_ms: u64) -> Option<HealthChange> {
        let entry = self.models.get_mut(model)?;
        match entry.phase(now_ms) {
            Phase::HalfOpen(_) => {
                entry.tripped_since = None;
                entry.failures.clear();
                Some(HealthChange {
                    model: model.to_owned(),
                    tripped: false,
                    health: FULL_HEALTH,
                })
            }
            Phase::Open(_) | Phase::Closed => None,
        }
    }

    /// Whether `model` may take a dispatch at `now_ms`.
    pub fn available(&self, model: &str, now_ms: u64) -> bool {
        !matches!(self.phase(model, now_ms), Phase::Open(_))
    }

    /// `model`'s health at `now_ms`, 0–100.
    pub fn health(&self, model: &str, now_ms: u64) -> u8 {
        match self.phase(model, now_ms) {
            Phase::Closed => FULL_HEALTH,
            Phase::Open(h) | Phase::HalfOpen(h) => h,
        }
    }

    /// The first available of `preferred` then `fallbacks` (in order), or `None` when every
    /// one is tripped.
    pub fn pick<'a>(
        &self,
        preferred: &'a str,
        fallbacks: &'a [String],
        now_ms: u64,
    ) -> Option<&'a str> {
        std::iter::once(preferred)
            .chain(fallbacks.iter().map(String::as_str))
            .find(|m| self.available(m, now_ms))
    }

    /// When `model` next becomes available (for sleeping the scheduler); `None` if it is
    /// available now.
    pub fn available_at(&self, model: &str, now_ms: u64) -> Option<u64> {
        match self.phase(model, now_ms) {
            Phase::Closed | Phase::HalfOpen(_) => None,
            Phase::Open(_) => {
                let since = self.models.get(model)?.tripped_since?;
                let periods = u64::from(HALF_OPEN_HEALTH.div_ceil(RECOVERY_PER_PERIOD));
                Some(since.saturating_add(periods * RECOVERY_PERIOD_MS))
            }
        }
    }

    /// Why `model` takes no dispatches at `now_ms` and until when; `None` if it takes them.
    pub fn pause(&self, model: &str, now_ms: u64) -> Option<Pause> {
        let until_ms = self.available_at(model, now_ms)?;
        let entry = self.models.get(model)?;
        Some(Pause {
            until_ms,
            failures: entry.failures_seen,
            last_error: entry.last_error.clone(),
        })
    }

    fn phase(&self, model: &str, now_ms: u64) -> Phase {
        self.models
            .get(model)
            .map_or(Phase::Closed, |m| m.phase(now_ms))
    }
}

fn tripped(model: &str) -> HealthChange {
    HealthChange {
        model: model.to_owned(),
        tripped: true,
        health: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: u64 = 1_000;
    const MIN: u64 = 60 * SEC;
    /// Any origin works; not zero, so a bug that treats 0 as "never" shows.
    const T0: u64 = 1_000_000;

    fn trip(h: &mut HealthMonitor, model: &str, at: u64) {
        assert_eq!(h.record_failure(model, at, "boom"), None);
        assert_eq!(h.record_failure(model, at + SEC, "boom"), None);
        assert_eq!(
            h.record_failure(model, at + 2 * SEC, "boom"),
            Some(HealthChange {
                model: model.to_owned(),
                tripped: true,
                health: 0
            })
        );
    }

    #[test]
    fn unknown_models_are_healthy() {
        let h = HealthMonitor::new();
        assert!(h.available("m", T0));
        assert_eq!(h.health("m", T0), 100);
        assert_eq!(h.available_at("m", T0), None);
    }

    #[test]
    fn two_failures_do_not_trip() {
        let mut h = HealthMonitor::new();
        assert_eq!(h.record_failure("m", T0, "boom"), None);
        assert_eq!(h.record_failure("m", T0 + 10 * SEC, "boom"), None);
        assert!(h.available("m", T0 + 10 * SEC));
        assert_eq!(h.health("m", T0 + 10 * SEC), 100);
    }

    #[test]
    fn three_failures_within_a_minute_trip() {
        let mut h = HealthMonitor::new();
        assert_eq!(h.record_failure("m", T0, "boom"), None);
        assert_eq!(h.record_failure("m", T0 + 30 * SEC, "boom"), None);
        let change = h.record_failure("m", T0 + 60 * SEC, "boom");
        assert_eq!(
            change,
            Some(HealthChange {
                model: "m".into(),
                tripped: true,
                health: 0
            })
        );
        assert!(!h.available("m", T0 + 60 * SEC));
        assert_eq!(h.health("m", T0 + 60 * SEC), 0);
        // Other models are unaffected.
        assert!(h.available("other", T0 + 60 * SEC));
    }

    #[test]
    fn three_failures_spread_over_more_than_a_minute_do_not_trip() {
        let mut h = HealthMonitor::new();
        assert_eq!(h.record_failure("m", T0, "boom"), None);
        assert_eq!(h.record_failure("m", T0 + 31 * SEC, "boom"), None);
        assert_eq!(h.record_failure("m", T0 + 62 * SEC, "boom"), None);
        assert!(h.available("m", T0 + 62 * SEC));
        // The first has dropped out of the window, the next two still count.
        assert!(h.record_failure("m", T0 + 70 * SEC, "boom").is_some());
    }

    #[test]
    fn successes_do_not_forgive_recent_failures() {
        let mut h = HealthMonitor::new();
        h.record_failure("m", T0, "boom");
        h.record_failure("m", T0 + SEC, "boom");
        assert_eq!(h.record_success("m", T0 + 2 * SEC), None);
        assert!(h.record_failure("m", T0 + 3 * SEC, "boom").is_some());
    }

    #[test]
    fn a_tripped_model_recovers_five_points_per_idle_minute() {
        let mut h = HealthMonitor::new();
        trip(&mut h, "m", T0);
        let tripped = T0 + 2 * SEC;
        let timeline: &[(u64, u8, bool)] = &[
            (0, 0, false),
            (MIN - 1, 0, false),
            (MIN, 5, false),
            (2 * MIN + 30 * SEC, 10, false),
            (4 * MIN, 20, false),
            (5 * MIN - 1, 20, false),
            (5 * MIN, 25, true),
            (6 * MIN, 30, true),
            (20 * MIN, 100, true),
            (60 * MIN, 100, true),
        ];
        for &(after, health, available) in timeline {
            let now = tripped + after;
            assert_eq!(h.health("m", now), health, "+{after} ms");
            assert_eq!(h.available("m", now), available, "+{after} ms");
        }
    }

    #[test]
    fn a_fully_recovered_model_needs_three_failures_again() {
        let mut h = HealthMonitor::new();
        trip(&mut h, "m", T0);
        let recovered = T0 + 2 * SEC + 20 * MIN;
        assert_eq!(h.record_failure("m", recovered, "boom"), None);
        assert_eq!(h.record_failure("m", recovered + SEC, "boom"), None);
        assert!(h.available("m", recovered + SEC));
        assert_eq!(h.health("m", recovered + SEC), 100);
        assert!(h.record_failure("m", recovered + 2 * SEC, "boom").is_some());
    }

    #[test]
    fn a_late_failure_while_open_restarts_recovery() {
        let mut h = HealthMonitor::new();
        trip(&mut h, "m", T0);
        let tripped = T0 + 2 * SEC;
        assert_eq!(h.record_failure("m", tripped + 3 * MIN, "boom"), None);
        assert_eq!(h.health("m", tripped + 5 * MIN), 10);
        assert!(!h.available("m", tripped + 5 * MIN));
        assert!(h.available("m", tripped + 8 * MIN));
    }

    #[test]
    fn a_success_while_half_open_closes_the_breaker() {
        let mut h = HealthMonitor::new();
        trip(&mut h, "m", T0);
        let half_open = T0 + 2 * SEC + 5 * MIN;
        assert_eq!(
            h.record_success("m", half_open),
            Some(HealthChange {
                model: "m".into(),
                tripped: false,
                health: 100
            })
        );
        assert_eq!(h.health("m", half_open), 100);
        // Closed again: one failure does not trip it.
        assert_eq!(h.record_failure("m", half_open + SEC, "boom"), None);
        assert!(h.available("m", half_open + SEC));
    }

    #[test]
    fn a_success_while_open_changes_nothing() {
        let mut h = HealthMonitor::new();
        trip(&mut h, "m", T0);
        assert_eq!(h.record_success("m", T0 + MIN), None);
        assert!(!h.available("m", T0 + MIN));
    }

    #[test]
    fn a_failure_while_half_open_trips_again_at_once() {
        let mut h = HealthMonitor::new();
        trip(&mut h, "m", T0);
        let half_open = T0 + 2 * SEC + 5 * MIN;
        assert!(h.available("m", half_open));
        assert_eq!(
            h.record_failure("m", half_open, "boom"),
            Some(HealthChange {
                model: "m".into(),
                tripped: true,
                health: 0
            })
        );
        assert!(!h.available("m", half_open));
        assert_eq!(h.health("m", half_open + 4 * MIN), 20);
        assert_eq!(h.available_at("m", half_open), Some(half_open + 5 * MIN));
    }

    #[test]
    fn pick_falls_back_in_order_and_gives_up_when_all_are_tripped() {
        let mut h = HealthMonitor::new();
        let fallbacks = vec!["b".to_owned(), "c".to_owned()];
        assert_eq!(h.pick("a", &fallbacks, T0), Some("a"));
        trip(&mut h, "a", T0);
        assert_eq!(h.pick("a", &fallbacks, T0 + 3 * SEC), Some("b"));
        trip(&mut h, "b", T0);
        assert_eq!(h.pick("a", &fallbacks, T0 + 3 * SEC), Some("c"));
        trip(&mut h, "c", T0);
        assert_eq!(h.pick("a", &fallbacks, T0 + 3 * SEC), None);
        assert_eq!(h.pick("a", &[], T0 + 3 * SEC), None);
        // All three tripped at the same time: the preferred one is back first in order.
        assert_eq!(h.pick("a", &fallbacks, T0 + 2 * SEC + 5 * MIN), Some("a"));
    }

    #[test]
    fn available_at_says_when_a_tripped_model_takes_dispatches_again() {
        let mut h = HealthMonitor::new();
        assert_eq!(h.available_at("m", T0), None);
        trip(&mut h, "m", T0);
        let tripped = T0 + 2 * SEC;
        let back = tripped + 5 * MIN;
        assert_eq!(h.available_at("m", tripped), Some(back));
        assert_eq!(h.available_at("m", tripped + 4 * MIN), Some(back));
        assert!(!h.available("m", back - 1));
        assert!(h.available("m", back));
        assert_eq!(h.available_at("m", back), None);
    }

    #[test]
    fn a_pause_says_until_when_after_how_many_failures_and_the_last_error() {
        let mut h = HealthMonitor::new();
        assert_eq!(h.pause("m", T0), None);
        h.record_failure("m", T0, "HTTP 500");
        h.record_failure("m", T0 + SEC, "HTTP 502");
        h.record_failure("m", T0 + 2 * SEC, "HTTP 503: overloaded");
        let tripped = T0 + 2 * SEC;
        assert_eq!(
            h.pause("m", tripped + MIN),
            Some(Pause {
                until_ms: tripped + 5 * MIN,
                failures: 3,
                last_error: "HTTP 503: overloaded".into(),
            })
        );
        assert_eq!(h.pause("m", tripped + 5 * MIN), None);
        // A success while half-open closes it; the next pause counts afresh.
        h.record_success("m", tripped + 5 * MIN);
        trip(&mut h, "m", tripped + 6 * MIN);
        assert_eq!(h.pause("m", tripped + 7 * MIN).map(|p| p.failures), Some(3));
    }
}
