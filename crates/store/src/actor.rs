//! The store handle: one dedicated thread owns the SQLite connection and runs requests one at
//! a time, in the order they arrive. Async callers await a oneshot reply, so no runtime
//! worker ever waits on disk; CLI code without a runtime uses the blocking twin. This module
//! knows no tables (see `grants`, `audit`) and does not open the database (see `open`).
//!
//! A request that meets another process's lock is run again from the start (see `busy`) until
//! the bound set when opening runs out; then it fails with [`StoreError::Locked`] having
//! changed nothing. Requests hold no transaction between them, so nothing stays locked while
//! atto waits for the model.
//!
//! Reads go through the same thread as writes. That keeps one connection and one order of
//! events; a pool of read connections can be added beside it if reads ever queue behind
//! writes for too long.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use rusqlite::Connection;

use crate::StoreError;
use crate::busy::{self, Patience};
use crate::open::{OpenOptions, open_connection};

/// A request for the writer thread.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// The handle to atto's database. Cheap to clone; every clone talks to the same writer
/// thread. When the last clone is dropped, the writer finishes the requests already queued,
/// closes the database and stops; the drop waits for that, so nothing a caller was told is
/// done is lost on a normal exit.
///
/// A request, once sent, is carried out even if its caller stops waiting for the reply.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// How long one request may wait for other processes.
    patience: Patience,
    /// `None` only while dropping.
    jobs: Option<mpsc::Sender<Job>>,
    /// `None` only while dropping.
    writer: Option<JoinHandle<()>>,
}

impl Store {
    /// Opens (creating if needed) the database at `path` with atto's defaults: a 5 s busy
    /// timeout and a quick integrity check. See [`Store::open_with`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, OpenOptions::default())
    }

    /// Opens the database at `path`: creates its directory (0700) if missing, refuses a file
    /// that is damaged ([`StoreError::Corrupt`]) or from a newer atto
    /// ([`StoreError::NewerSchema`]) without writing to it, then brings the schema up to date
    /// and starts the writer thread.
    pub fn open_with(path: &Path, opts: OpenOptions) -> Result<Store, StoreError> {
        let conn = open_connection(path, &opts)?;
        let (jobs, queue) = mpsc::channel::<Job>();
        let writer = std::thread::Builder::new()
            .name("atto-store".to_owned())
            .spawn(move || serve(conn, &queue))
            .map_err(|e| StoreError::Io {
                path: path.to_path_buf(),
                detail: format!("cannot start the database writer thread: {e}"),
            })?;
        Ok(Store {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                patience: opts.patience(),
                jobs: Some(jobs),
                writer: Some(writer),
            }),
        })
    }

    /// The database file this store was opened on.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the writer thread and awaits its result without blocking the runtime.
    /// `f` runs again if it fails because another process holds the database, so it must
    /// leave nothing behind when it fails: one statement, or one transaction begun
    /// `IMMEDIATE` (see `busy`).
    pub(crate) async fn call<T, F>(&self, mut f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let patience = self.inner.patience;
        self.send(Box::new(move |conn| {
            // The caller may have stopped waiting; the work is done either way.
            let _ = reply.send(busy::retry(conn, patience, &mut f));
        }))?;
        match answer.await {
            Ok(result) => result.map_err(|e| StoreError::from_sqlite(self.path(), e)),
            Err(_) => Err(self.closed()),
        }
    }

    /// Runs `f` on the writer thread and blocks the current thread until it is done. For code
    /// that runs without an async runtime (CLI subcommands); never call it from a runtime
    /// worker. `f` may run more than once, as for [`Store::call`].
    pub(crate) fn call_blocking<T, F>(&self, mut f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnMut(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        // A std channel rather than the oneshot's `blocking_recv`, which panics when a
        // runtime happens to be entered on this thread.
        let (reply, answer) = mpsc::sync_channel(1);
        let patience = self.inner.patience;
        self.send(Box::new(move |conn| {
            let _ = reply.send(busy::retry(conn, patience, &mut f));
        }))?;
        match answer.recv() {
            Ok(result) => result.map_err(|e| StoreError::from_sqlite(self.path(), e)),
            Err(_) => Err(self.closed()),
        }
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        match &self.inner.jobs {
            Some(jobs) => jobs.send(job).map_err(|_| self.closed()),
            None => Err(self.closed()),
        }
    }

    fn closed(&self) -> StoreError {
        StoreError::Closed {
            path: self.inner.path.clone(),
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

/// The writer thread: runs jobs until every sender is gone, then closes the connection
/// (which checkpoints the WAL into the database file).
fn serve(mut conn: Connection, queue: &mpsc::Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        // A panicking job drops its reply sender, so its caller gets `Closed`, and the
        // writer lives on for everyone else. A `Transaction` rolls back as it unwinds; a
        // transaction begun by hand is rolled back here.
        if std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut conn))).is_err()
            && !conn.is_autocommit()
        {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }
    // Errors on close leave nothing to do: every reply has been sent and the WAL is replayed
    // by the next open.
    let _ = conn.close();
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the channel lets the writer drain the queue and stop.
        drop(self.jobs.take());
        if let Some(writer) = self.writer.take() {
            // The last clone may be dropped by a job on the writer thread itself; joining
            // there would wait forever, and the thread stops on its own right after.
            if writer.thread().id() != std::thread::current().id() {
                let _ = writer.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_the_last_clone_finishes_queued_work() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("atto.db");
        let store = Store::open(&path).unwrap();
        let other = store.clone();
        drop(store);
        for i in 0..200 {
            other
                .send(Box::new(move |conn| {
                    conn.execute(
                        "INSERT INTO audit_log (at, tool, decision, decided_by) \
                         VALUES (?1, 'bash', 'allow', 'test')",
                        [i],
                    )
                    .unwrap();
                }))
                .unwrap();
        }
        // No reply was awaited: the drop alone must wait for all 200 inserts.
        drop(other);
        let conn = Connection::open(&path).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM audit_log", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 200);
    }

    #[test]
    fn a_panicking_request_fails_alone_and_rolls_back() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("atto.db")).unwrap();
        let err = store
            .call_blocking(|conn| -> rusqlite::Result<()> {
                conn.execute_batch(
                    "BEGIN; INSERT INTO audit_log (at, tool, decision, decided_by) \
                     VALUES (1, 'bash', 'allow', 'half-done');",
                )?;
                panic!("a bug in a request");
            })
            .unwrap_err();
        assert!(matches!(err, StoreError::Closed { .. }), "{err:?}");
        let n: i64 = store
            .call_blocking(|c| c.query_row("SELECT count(*) FROM audit_log", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 0, "the half-done insert must have been rolled back");
    }
}
