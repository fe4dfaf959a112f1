//! Waiting out other atto processes: which SQLite errors mean "someone else holds the
//! database right now", and retrying a whole request after one of them, with backoff and
//! jitter, until one bound runs out. It does not decide what a request is (see `actor`) nor
//! how a write takes its lock (every write begins `IMMEDIATE`, so its lock is taken, with
//! SQLite's own busy handler, before it reads anything).
//!
//! Why a retry on top of SQLite's busy timeout: SQLite does not always call its busy handler.
//! A connection that changes the journal mode (`PRAGMA journal_mode=WAL` on a new file while
//! another process does the same) or that already read inside a transaction and then wants
//! to write gets `SQLITE_BUSY` at once, because waiting there could deadlock. Retrying the
//! request from the start, after the transaction was rolled back, is always safe: a request
//! that failed with `SQLITE_BUSY` wrote nothing.

use std::time::{Duration, Instant};

use rusqlite::Connection;
use rusqlite::ffi::ErrorCode;

/// How long a request may wait for other processes, in all.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Patience {
    /// What SQLite's busy handler waits on one attempt.
    pub(crate) busy_timeout: Duration,
    /// How much longer than `busy_timeout` retries may go on.
    pub(crate) busy_retry: Duration,
}

impl Patience {
    /// The bound on one request's waiting, from its first attempt to its last.
    pub(crate) fn total(self) -> Duration {
        self.busy_timeout.saturating_add(self.busy_retry)
    }
}

/// Whether `err` says another connection holds the database (or its lock protocol was
/// disturbed mid-way), so the same request may succeed a moment later.
pub(crate) fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(
            ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::FileLockingProtocolFailed
        )
    )
}

/// Runs `f` until it succeeds, fails with something other than [`is_busy`], or the bound of
/// `patience` runs out (then the last busy error is returned). Each attempt's own SQLite wait
/// is cut to the time left, so the whole call never waits much past the bound.
pub(crate) fn retry<T>(
    conn: &mut Connection,
    patience: Patience,
    mut f: impl FnMut(&mut Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let deadline = Instant::now() + patience.total();
    let mut attempt = 0u32;
    loop {
        let result = f(conn);
        let err = match result {
            Err(err) if is_busy(&err) => err,
            done => {
                if attempt > 0 {
                    conn.busy_timeout(patience.busy_timeout)?;
                }
                return done;
            }
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            // Give later requests their full wait again.
            conn.busy_timeout(patience.busy_timeout)?;
            return Err(err);
        }
        std::thread::sleep(pause(attempt).min(left));
        attempt = attempt.saturating_add(1);
        let left = deadline.saturating_duration_since(Instant::now());
        // A zero timeout would turn the handler off; one millisecond keeps it a wait.
        conn.busy_timeout(
            patience
                .busy_timeout
                .min(left)
                .max(Duration::from_millis(1)),
        )?;
    }
}

/// The pause before retry `attempt` (0-based): doubling from 2 ms up to 100 ms, then a random
/// point in its upper half, so processes that collided do not collide again in step.
fn pause(attempt: u32) -> Duration {
    let full = 2u64.saturating_mul(1u64 << attempt.min(6)).min(100);
    let half = full / 2;
    Duration::from_millis(half + jitter() % (full - half + 1))
}

/// A few cheap random bits: the clock's nanoseconds mixed with the thread's identity. Good
/// enough to spread retries; nothing depends on it being unpredictable.
fn jitter() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(nanos);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: i32) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    #[test]
    fn busy_locked_and_protocol_errors_are_retried_others_are_not() {
        let cases = [
            (rusqlite::ffi::SQLITE_BUSY, true),
            (rusqlite::ffi::SQLITE_BUSY_SNAPSHOT, true),
            (rusqlite::ffi::SQLITE_BUSY_RECOVERY, true),
            (rusqlite::ffi::SQLITE_LOCKED, true),
            (rusqlite::ffi::SQLITE_PROTOCOL, true),
            (rusqlite::ffi::SQLITE_CONSTRAINT, false),
            (rusqlite::ffi::SQLITE_CORRUPT, false),
            (rusqlite::ffi::SQLITE_FULL, false),
        ];
        for (code, busy) in cases {
            assert_eq!(is_busy(&failure(code)), busy, "code {code}");
        }
    }

    #[test]
    fn pauses_grow_stay_bounded_and_vary() {
        for attempt in 0..40 {
            let p = pause(attempt);
            assert!(p >= Duration::from_millis(1) && p <= Duration::from_millis(100));
        }
        assert!(pause(0) <= Duration::from_millis(2));
        assert!(pause(10) >= Duration::from_millis(50));
        let seen: std::collections::HashSet<_> = (0..50).map(|_| pause(10)).collect();
        assert!(seen.len() > 1, "no jitter: {seen:?}");
    }

    #[test]
    fn a_busy_request_is_retried_until_it_succeeds() {
        let mut conn = Connection::open_in_memory().unwrap();
        let patience = Patience {
            busy_timeout: Duration::from_millis(50),
            busy_retry: Duration::from_secs(5),
        };
        let mut tries = 0;
        let got = retry(&mut conn, patience, |_| {
            tries += 1;
            if tries < 4 {
                Err(failure(rusqlite::ffi::SQLITE_BUSY))
            } else {
                Ok(tries)
            }
        });
        assert_eq!(got.unwrap(), 4);
    }

    #[test]
    fn retrying_stops_at_the_bound_and_other_errors_are_not_retried() {
        let mut conn = Connection::open_in_memory().unwrap();
        let patience = Patience {
            busy_timeout: Duration::from_millis(40),
            busy_retry: Duration::from_millis(60),
        };
        let started = Instant::now();
        let err = retry(&mut conn, patience, |_| -> rusqlite::Result<()> {
            Err(failure(rusqlite::ffi::SQLITE_BUSY))
        })
        .unwrap_err();
        assert!(is_busy(&err));
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(100) && took < Duration::from_millis(400),
            "{took:?}"
        );

        let mut tries = 0;
        let err = retry(&mut conn, patience, |_| -> rusqlite::Result<()> {
            tries += 1;
            Err(failure(rusqlite::ffi::SQLITE_CONSTRAINT))
        })
        .unwrap_err();
        assert!(!is_busy(&err));
        assert_eq!(tries, 1);
    }
}
