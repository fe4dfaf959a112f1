//! A circuit breaker per model endpoint, so a provider that keeps failing is not hammered.
//!
//! Owns the closed → open → half-open → closed state machine and the process-wide
//! registry that shares one breaker per (provider, base URL, model) between every client
//! in the process (subagents, swarm workers). It does not retry or sleep; `retry` asks it
//! before each attempt and reports each outcome. The clock is injectable so tests do not
//! wait a minute.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Characters of the latest failure kept for [`Paused`].
const LAST_CHARS: usize = 200;

/// When the breaker opens and how long it stays open.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BreakerPolicy {
    /// Failures within `window` that open the breaker.
    pub threshold: usize,
    /// How far back failures count.
    pub window: Duration,
    /// Time after the last failure before a trial call is let through.
    pub cooldown: Duration,
}

impl Default for BreakerPolicy {
    fn default() -> Self {
        BreakerPolicy {
            threshold: 3,
            window: Duration::from_secs(60),
            cooldown: Duration::from_secs(60),
        }
    }
}

/// A source of "now", replaceable in tests.
pub(crate) trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

#[derive(Debug)]
enum State {
    /// Calls go through; recent failure times are kept.
    Closed { failures: Vec<Instant> },
    /// Calls fail fast until `cooldown` after the last failure.
    Open { last_failure: Instant },
    /// One trial call is (or was, at `started`) in flight; others fail fast.
    HalfOpen { started: Instant },
}

/// Why calls are refused and for how long, for the caller to tell the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Paused {
    /// Time until a trial call is allowed.
    pub retry_in: Duration,
    /// Failures since the last success.
    pub failures: usize,
    /// What the latest failure said.
    pub last: String,
}

/// What the failures since the last success were, for [`Paused`].
#[derive(Debug, Default)]
struct Streak {
    failures: usize,
    last: String,
}

/// One breaker; cheap to share.
pub(crate) struct Breaker {
    policy: BreakerPolicy,
    clock: Box<dyn Clock>,
    state: Mutex<State>,
    streak: Mutex<Streak>,
}

impl Breaker {
    pub(crate) fn new(policy: BreakerPolicy) -> Breaker {
        Breaker::with_clock(policy, Box::new(SystemClock))
    }

    pub(crate) fn with_clock(policy: BreakerPolicy, clock: Box<dyn Clock>) -> Breaker {
        Breaker {
            policy,
            clock,
            state: Mutex::new(State::Closed {
                failures: Vec::new(),
            }),
            streak: Mutex::new(Streak::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves a valid state behind: recover it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn streak(&self) -> std::sync::MutexGuard<'_, Streak> {
        // As with the state: a counter and a text are valid whatever panicked.
        self.streak.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// May a call go out now? `Err` says how long until a trial call is allowed, and why.
    pub(crate) fn admit(&self) -> Result<(), Paused> {
        self.admit_in().map_err(|retry_in| {
            let streak = self.streak();
            Paused {
                retry_in,
                failures: streak.failures,
                last: streak.last.clone(),
            }
        })
    }

    fn admit_in(&self) -> Result<(), Duration> {
        let now = self.clock.now();
        let cooldown = self.policy.cooldown;
        let mut state = self.state();
        match *state {
            State::Closed { .. } => Ok(()),
            State::Open { last_failure } => {
                let waited = now.saturating_duration_since(last_failure);
                if waited >= cooldown {
                    *state = State::HalfOpen { started: now };
                    Ok(())
                } else {
                    Err(cooldown - waited)
                }
            }
            State::HalfOpen { started } => {
                // A trial whose caller vanished (future dropped) must not block the
                // breaker forever: after another cooldown a new trial may go.
                let waited = now.saturating_duration_since(started);
                if waited >= cooldown {
                    *state = State::HalfOpen { started: now };
                    Ok(())
                } else {
                    Err(cooldown - waited)
                }
            }
        }
    }

    /// A call succeeded: the breaker closes.
    pub(crate) fn record_success(&self) {
        *self.state() = State::Closed {
            failures: Vec::new(),
        };
        *self.streak() = Streak::default();
    }

    /// A call failed in a way that points at the provider; `why` is what it said. Returns
    /// whether the breaker is now open (no call will be admitted until the cooldown has
    /// passed).
    pub(crate) fn record_failure(&self, why: &str) -> bool {
        {
            let mut streak = self.streak();
            streak.failures += 1;
            // One line, bounded: it goes into an error message.
            streak.last = why
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(LAST_CHARS)
                .collect();
        }
        let now = self.clock.now();
        let policy = self.policy;
        let mut state = self.state();
        let next = match &mut *state {
            State::Closed { failures } => {
                failures.retain(|t| now.saturating_duration_since(*t) < policy.window);
                failures.push(now);
                if failures.len() >= policy.threshold {
                    Some(State::Open { last_failure: now })
                } else {
                    None
                }
            }
            State::Open { .. } | State::HalfOpen { .. } => Some(State::Open { last_failure: now }),
        };
        if let Some(next) = next {
            *state = next;
        }
        matches!(*state, State::Open { .. })
    }
}

type Registry = Mutex<HashMap<String, Arc<Breaker>>>;

/// The process-wide breaker for one model endpoint.
pub(crate) fn shared(provider: &str, base_url: &str, model: &str) -> Arc<Breaker> {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    let key = format!("{provider}\u{0}{base_url}\u{0}{model}");
    let mut map = REGISTRY
        .get_or_init(Registry::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    map.entry(key)
        .or_insert_with(|| Arc::new(Breaker::new(BreakerPolicy::default())))
        .clone()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A clock tests move by hand.
    #[derive(Clone)]
    pub(crate) struct ManualClock {
        base: Instant,
        offset: Arc<Mutex<Duration>>,
    }

    impl ManualClock {
        pub(crate) fn new() -> ManualClock {
            ManualClock {
                base: Instant::now(),
                offset: Arc::new(Mutex::new(Duration::ZERO)),
            }
        }

        pub(crate) fn advance(&self, by: Duration) {
            *self.offset.lock().unwrap() += by;
        }
    }

    impl Clock for ManualClock {
        fn now(&self) -> Instant {
            self.base + *self.offset.lock().unwrap()
        }
    }

    fn breaker() -> (Breaker, ManualClock) {
        let clock = ManualClock::new();
        let b = Breaker::with_clock(BreakerPolicy::default(), Box::new(clock.clone()));
        (b, clock)
    }

    #[test]
    fn opens_after_three_failures_within_the_window() {
        let (b, clock) = breaker();
        assert!(!b.record_failure("HTTP 500"));
        assert!(!b.record_failure("HTTP 500"));
        assert!(b.admit().is_ok());
        clock.advance(Duration::from_secs(10));
        assert!(b.record_failure("HTTP 500"), "third failure opens it");
        let wait = b.admit().unwrap_err().retry_in;
        assert_eq!(wait, Duration::from_secs(60));
    }

    #[test]
    fn old_failures_fall_out_of_the_window() {
        let (b, clock) = breaker();
        b.record_failure("HTTP 500");
        b.record_failure("HTTP 500");
        clock.advance(Duration::from_secs(61));
        b.record_failure("HTTP 500");
        assert!(b.admit().is_ok());
    }

    #[test]
    fn half_open_after_cooldown_then_success_closes() {
        let (b, clock) = breaker();
        for _ in 0..3 {
            b.record_failure("HTTP 500");
        }
        clock.advance(Duration::from_secs(59));
        assert_eq!(b.admit().unwrap_err().retry_in, Duration::from_secs(1));
        clock.advance(Duration::from_secs(1));
        assert!(b.admit().is_ok(), "trial call let through");
        assert!(b.admit().is_err(), "only one trial at a time");
        b.record_success();
        assert!(b.admit().is_ok());
        assert!(b.admit().is_ok());
    }

    #[test]
    fn failed_trial_reopens_for_a_full_cooldown() {
        let (b, clock) = breaker();
        for _ in 0..3 {
            b.record_failure("HTTP 500");
        }
        clock.advance(Duration::from_secs(60));
        assert!(b.admit().is_ok());
        b.record_failure("HTTP 500");
        assert_eq!(b.admit().unwrap_err().retry_in, Duration::from_secs(60));
    }

    #[test]
    fn abandoned_trial_does_not_block_forever() {
        let (b, clock) = breaker();
        for _ in 0..3 {
            b.record_failure("HTTP 500");
        }
        clock.advance(Duration::from_secs(60));
        assert!(b.admit().is_ok());
        // The trial's future is dropped: no outcome is recorded.
        clock.advance(Duration::from_secs(60));
        assert!(b.admit().is_ok());
    }

    #[test]
    fn registry_shares_per_endpoint() {
        let a = shared("p", "http://x", "m-registry-test");
        let b = shared("p", "http://x", "m-registry-test");
        let c = shared("p", "http://y", "m-registry-test");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
    }

    #[test]
    fn a_pause_says_how_many_failures_and_the_last_one() {
        let (b, _) = breaker();
        b.record_failure("HTTP 502");
        b.record_failure("HTTP 503");
        b.record_failure("HTTP 500: boom");
        let paused = b.admit().unwrap_err();
        assert_eq!(
            (paused.failures, paused.last.as_str()),
            (3, "HTTP 500: boom")
        );
        b.record_success();
        b.record_failure("x");
        assert!(b.admit().is_ok());
    }
}
