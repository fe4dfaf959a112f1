//! Retrying a model call: backoff with jitter, `Retry-After`, and the circuit breaker.
//!
//! Owns [`RetryPolicy`] and [`RetryingClient`], the wrapper `connect()` puts around
//! every wire client. A retry re-sends the whole request; the caller learns of it through
//! [`StreamUpdate::Retry`] and discards any partial reply it showed. It does not decide
//! which errors are retryable (`error` does).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use atto_protocol::RetryNotice;

use crate::breaker::{Breaker, Paused};
use crate::wire_log::WireLog;
use crate::{
    BoxFuture, ModelClient, ModelError, ModelInfo, ModelRequest, ModelResponse, StreamUpdate,
};

/// How often and how patiently a failed model call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = no retries).
    pub max_attempts: u32,
    /// Delay after the first failed attempt; doubles each time.
    pub base_delay: Duration,
    /// Longest delay, also the cap on a server's `Retry-After`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Delay before retrying after failed attempt `attempt` (1-based). A server's
    /// `Retry-After` wins (capped at `max_delay`); otherwise exponential backoff plus
    /// up to half a base delay of jitter, so parallel callers do not retry in lockstep.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_delay);
        }
        let factor = 1u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        let backoff = self
            .base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay);
        let half_base = u64::try_from(self.base_delay.as_nanos() / 2).unwrap_or(u64::MAX);
        let jitter = Duration::from_nanos(fastrand::u64(0..=half_base));
        (backoff + jitter).min(self.max_delay)
    }
}

/// Parses a `Retry-After` value: delay seconds or an HTTP date (IMF-fixdate).
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = parse_http_date(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the epoch of an IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_http_date(s: &str) -> Option<u64> {
    let mut it = s.split_ascii_whitespace();
    let _weekday = it.next()?;
    let day: u64 = it.next()?.parse().ok()?;
    let month = match it.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    if it.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::try_from(day).ok()? - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = u64::try_from(era * 146_097 + doe - 719_468).ok()?;
    Some(days * 86_400 + h * 3600 + m * 60 + sec)
}

/// A client that retries retryable failures and consults the circuit breaker.
pub(crate) struct RetryingClient<C> {
    inner: C,
    policy: RetryPolicy,
    breaker: Arc<Breaker>,
    log: Option<Arc<WireLog>>,
}

impl<C: ModelClient> RetryingClient<C> {
    pub(crate) fn new(inner: C, policy: RetryPolicy, breaker: Arc<Breaker>) -> Self {
        RetryingClient {
            inner,
            policy,
            breaker,
            log: None,
        }
    }

    /// Records retries and breaker changes in `log` too.
    pub(crate) fn with_log(mut self, log: Option<Arc<WireLog>>) -> Self {
        self.log = log;
        self
    }

    async fn run(
        &self,
        req: &ModelRequest<'_>,
        on_update: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<ModelResponse, ModelError> {
        let max_attempts = self.policy.max_attempts.max(1);
        let mut failures = Failures {
            max_attempts,
            last: None,
            same_each_time: true,
        };
        for attempt in 1..=max_attempts {
            if let Err(paused) = self.breaker.admit() {
                return Err(self.refused_by_breaker(paused, failures, attempt));
            }
            let err = match self.inner.stream(req, on_update).await {
                Ok(response) => {
                    self.breaker.record_success();
                    return Ok(response);
                }
                Err(err) => failures.reread(err),
            };
            if !err.is_retryable() {
                return Err(err);
            }
            let opened = self.breaker.record_failure(&err.what_happened());
            if opened && let Some(log) = &self.log {
                log.breaker(&self.inner.info().model, "open", &err.what_happened());
            }
            // Once the breaker is open no further attempt would be admitted: stop now
            // rather than announce a retry that cannot happen.
            if attempt == max_attempts || opened {
                return Err(ModelError::Exhausted {
                    attempts: attempt,
                    max_attempts,
                    breaker_opened: opened && attempt < max_attempts,
                    same_each_time: failures.same_each_time,
                    last: Box::new(err),
                });
            }
            self.wait_to_retry(attempt, max_attempts, &err, on_update)
                .await;
            failures.last = Some(err);
        }
        // Unreachable: the loop returns on its last attempt. Kept total without panicking.
        Err(failures.last.unwrap_or(ModelError::Cancelled))
    }

    /// The error of a call the open breaker does not admit at `attempt`.
    fn refused_by_breaker(&self, paused: Paused, failures: Failures, attempt: u32) -> ModelError {
        if let Some(log) = &self.log {
            let detail = format!(
                "call refused; a trial in {} ms",
                paused.retry_in.as_millis()
            );
            log.breaker(&self.inner.info().model, "open", &detail);
        }
        match failures.last {
            // The breaker opened during this call's own retries (another caller
            // may have added the last failure): report the provider's failure,
            // which is what the caller can act on.
            Some(last) => ModelError::Exhausted {
                attempts: attempt - 1,
                max_attempts: failures.max_attempts,
                breaker_opened: true,
                same_each_time: failures.same_each_time,
                last: Box::new(last),
            },
            None => ModelError::CircuitOpen {
                model: self.inner.info().model.clone(),
                retry_in: paused.retry_in,
                failures: paused.failures,
                last: paused.last,
            },
        }
    }

    /// Tells the caller (and the log) of the retry after `err`, then waits the backoff.
    async fn wait_to_retry(
        &self,
        attempt: u32,
        max_attempts: u32,
        err: &ModelError,
        on_update: &mut (dyn FnMut(StreamUpdate) + Send),
    ) {
        let delay = self.policy.delay(attempt, err.retry_after());
        let notice = RetryNotice {
            attempt,
            max_attempts,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            reason: err.to_string(),
        };
        if let Some(log) = &self.log {
            log.retry(attempt, max_attempts, notice.delay_ms, &notice.reason);
        }
        // Budgets count this attempt: the retry must not make it free. The yield lets a
        // caller that drops the call on it (a budget that has no room for another
        // attempt) do so before anything more is sent, even with no delay.
        if err.reached_provider() {
            on_update(StreamUpdate::FailedAttempt);
            tokio::task::yield_now().await;
        }
        on_update(StreamUpdate::Retry(notice));
        tokio::time::sleep(delay).await;
    }
}

/// What the failed attempts of one call have come to so far.
struct Failures {
    max_attempts: u32,
    /// The previous attempt's failure.
    last: Option<ModelError>,
    /// Every failure so far said the same thing.
    same_each_time: bool,
}

impl Failures {
    /// An attempt's failure as the caller should read it, given the ones before it.
    fn reread(&mut self, err: ModelError) -> ModelError {
        let err = match (err, &self.last) {
            // A server that answered the previous attempt and now refuses connections
            // died or is restarting: a network failure, not a wrong URL.
            (ModelError::Refused(url), Some(previous)) => ModelError::Transport(format!(
                "the server at {url} stopped accepting connections (connection refused) \
                 after the previous attempt failed: {}",
                previous.what_happened()
            )),
            (err, _) => err,
        };
        if let Some(previous) = &self.last {
            self.same_each_time &= previous.what_happened() == err.what_happened();
        }
        err
    }
}

impl<C: ModelClient> ModelClient for RetryingClient<C> {
    fn info(&self) -> &ModelInfo {
        self.inner.info()
    }

    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest<'a>,
        on_update: &'a mut (dyn FnMut(StreamUpdate) + Send),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(self.run(req, on_update))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use atto_protocol::{StopReason, Usage};

    use super::*;
    use crate::Wire;
    use crate::breaker::BreakerPolicy;
    use crate::breaker::tests::ManualClock;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        for _ in 0..50 {
            let d1 = p.delay(1, None);
            assert!(d1 >= Duration::from_millis(100) && d1 <= Duration::from_millis(150));
            let d3 = p.delay(3, None);
            assert!(d3 >= Duration::from_millis(400) && d3 <= Duration::from_millis(450));
            assert_eq!(p.delay(40, None), Duration::from_millis(1000));
        }
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(30))),
            Duration::from_millis(1000)
        );
        assert_eq!(p.delay(1, Some(Duration::ZERO)), Duration::ZERO);
    }

    #[test]
    fn retry_after_seconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
        assert_eq!(parse_retry_after(" 7 ", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2000 12:00:00 GMT"),
            Some(951_825_600)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }

    /// A client that replays scripted outcomes.
    struct Scripted {
        info: ModelInfo,
        outcomes: Mutex<Vec<Result<(), ModelError>>>,
        calls: Mutex<u32>,
    }

    impl ModelClient for Scripted {
        fn info(&self) -> &ModelInfo {
            &self.info
        }
        fn stream<'a>(
            &'a self,
            _req: &'a ModelRequest<'a>,
            _on_update: &'a mut (dyn FnMut(StreamUpdate) + Send),
        ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
            *self.calls.lock().unwrap() += 1;
            let next = self.outcomes.lock().unwrap().remove(0);
            Box::pin(async move {
                next.map(|()| ModelResponse {
                    parts: Vec::new(),
                    stop: StopReason::EndTurn,
                    usage: Usage::default(),
                    usage_reported: false,
                    model: "m".into(),
                })
            })
        }
    }

    fn client(outcomes: Vec<Result<(), ModelError>>) -> (RetryingClient<Scripted>, ManualClock) {
        let clock = ManualClock::new();
        let breaker = Arc::new(Breaker::with_clock(
            BreakerPolicy::default(),
            Box::new(clock.clone()),
        ));
        let inner = Scripted {
            info: ModelInfo {
                provider: "p".into(),
                model: "m".into(),
                wire: Wire::Chat,
                base_url: "http://x".into(),
            },
            outcomes: Mutex::new(outcomes),
            calls: Mutex::new(0),
        };
        let policy = RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        };
        (RetryingClient::new(inner, policy, breaker), clock)
    }

    fn request() -> ModelRequest<'static> {
        ModelRequest {
            system: String::new().into(),
            messages: Vec::new().into(),
            tools: Vec::new().into(),
            max_output_tokens: 10,
            effort: None,
            temperature: None,
        }
    }

    fn server_error() -> ModelError {
        ModelError::Status {
            status: 500,
            message: "boom".into(),
            retry_after: None,
        }
    }

    #[tokio::test]
    async fn retries_then_succeeds_with_one_notice_per_retry() {
        let (c, _) = client(vec![
            Err(server_error()),
            Err(ModelError::StreamCut("x".into())),
            Ok(()),
        ]);
        let mut updates = Vec::new();
        let r = c.stream(&request(), &mut |u| updates.push(u)).await;
        assert!(r.is_ok());
        // Each failed attempt is reported as possibly billed, then its retry announced.
        let (notices, failed): (Vec<_>, Vec<_>) = updates
            .into_iter()
            .partition(|u| matches!(u, StreamUpdate::Retry(_)));
        assert_eq!(failed, vec![StreamUpdate::FailedAttempt; 2]);
        assert_eq!(notices.len(), 2);
        let StreamUpdate::Retry(n) = &notices[0] else {
            panic!("{notices:?}")
        };
        assert_eq!((n.attempt, n.max_attempts), (1, 5));
        assert!(n.reason.contains("HTTP 500"), "{}", n.reason);
    }

    #[tokio::test]
    async fn non_retryable_fails_at_once() {
        let (c, _) = client(vec![
            Err(ModelError::BadRequest {
                message: "no".into(),
            }),
            Ok(()),
        ]);
        let mut notices = Vec::new();
        let r = c.stream(&request(), &mut |u| notices.push(u)).await;
        assert!(matches!(r, Err(ModelError::BadRequest { .. })));
        assert!(notices.is_empty());
        assert_eq!(*c.inner.calls.lock().unwrap(), 1);
    }

    #[tokio::test]
    async fn breaker_stops_hammering_and_the_result_stays_retryable() {
        let (c, clock) = client((0..5).map(|_| Err(server_error())).collect());
        let r = c.stream(&request(), &mut |_| {}).await;
        let err = r.unwrap_err();
        assert!(
            matches!(&err, ModelError::Exhausted { attempts: 3, max_attempts: 5, breaker_opened: true, last, .. } if matches!(**last, ModelError::Status { status: 500, .. })),
            "{err:?}"
        );
        // The numbers agree with the retry notices (max 5), and the cut is explained.
        let text = err.to_string();
        assert!(text.contains("3 attempts of 5"), "{text}");
        assert!(text.contains("circuit breaker"), "{text}");
        assert!(err.is_retryable());
        assert_eq!(*c.inner.calls.lock().unwrap(), 3);
        // The next call fails fast without a request.
        let err = c.stream(&request(), &mut |_| {}).await.unwrap_err();
        assert!(matches!(err, ModelError::CircuitOpen { .. }), "{err:?}");
        assert_eq!(*c.inner.calls.lock().unwrap(), 3);
        // It says why and how long: the failures that opened it and the last one's words.
        let text = err.to_string();
        assert!(text.contains("after 3 failures"), "{text}");
        assert!(text.contains("(last: "), "{text}");
        assert!(text.contains("HTTP 500"), "{text}");
        assert!(text.contains("Try again in 60 s"), "{text}");
        // After the cooldown a trial goes through and, failing, reopens the breaker.
        clock.advance(Duration::from_secs(60));
        let err = c.stream(&request(), &mut |_| {}).await.unwrap_err();
        assert!(
            matches!(err, ModelError::Exhausted { attempts: 1, .. }),
            "{err:?}"
        );
        assert_eq!(*c.inner.calls.lock().unwrap(), 4);
    }

    #[tokio::test]
    async fn refused_after_a_lost_connection_is_a_network_failure_and_retried() {
        let (c, _) = client(vec![
            Err(ModelError::StreamCut(
                "the connection was lost after 83 events (9000 bytes) of the reply".into(),
            )),
            Err(ModelError::Refused("http://x/chat/completions".into())),
            Ok(()),
        ]);
        let mut notices = Vec::new();
        let r = c
            .stream(&request(), &mut |u| {
                if matches!(u, StreamUpdate::Retry(_)) {
                    notices.push(u);
                }
            })
            .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(notices.len(), 2);
        let StreamUpdate::Retry(n) = &notices[1] else {
            panic!("{notices:?}")
        };
        assert!(
            n.reason.contains("stopped accepting connections"),
            "{}",
            n.reason
        );
        assert!(n.reason.contains("83 events"), "{}", n.reason);
        assert!(!n.reason.contains("No request was sent"), "{}", n.reason);

        // Refused on the first attempt stays a setup problem, reported at once.
        let (c, _) = client(vec![Err(ModelError::Refused("http://x".into())), Ok(())]);
        let err = c.stream(&request(), &mut |_| {}).await.unwrap_err();
        assert!(matches!(err, ModelError::Refused(_)), "{err:?}");
    }

    #[tokio::test]
    async fn all_attempts_used_gives_exhausted() {
        let mut outcomes: Vec<Result<(), ModelError>> = (0..5)
            .map(|_| Err(ModelError::Transport("refused".into())))
            .collect();
        outcomes.push(Ok(()));
        let (mut c, _) = client(outcomes);
        c.policy.max_attempts = 2;
        let err = c.stream(&request(), &mut |_| {}).await.unwrap_err();
        assert!(
            matches!(err, ModelError::Exhausted { attempts: 2, .. }),
            "{err:?}"
        );
        assert!(err.is_retryable());
    }
}
