// Tests may unwrap: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Many atto processes on one database: opening a fresh file at the same moment and writing
//! sessions, messages, grants and audit rows concurrently (threads with their own
//! connections, which SQLite locks like processes, and real child processes); a database
//! held past the bound fails a write clearly and in time, having written nothing; a process
//! killed with a write lock held blocks no one.
//!
//! The child processes are this test binary run again on [`child_process`], told what to do
//! through environment variables.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use atto_store::{AuditEntry, NewGrant, NewSession, OpenOptions, Store, StoreErrorKind};
use rusqlite::Connection;

/// What a child process does (`writer` or `holder`); unset outside a child.
const ROLE: &str = "ATTO_STORE_TEST_ROLE";
/// The database a child works on.
const DB: &str = "ATTO_STORE_TEST_DB";
/// The writer's number, naming its rows.
const NUMBER: &str = "ATTO_STORE_TEST_NUMBER";
/// When writers start, in unix ms, so they all open the file at once.
const START_AT: &str = "ATTO_STORE_TEST_START_AT";

const MESSAGES: i64 = 15;

fn audit_entry(session: &str, at: i64) -> AuditEntry {
    AuditEntry {
        at,
        session_id: Some(session.to_owned()),
        workspace: Some("/w".to_owned()),
        tool: "write_file".to_owned(),
        target: Some("a.txt".to_owned()),
        decision: "allow".to_owned(),
        outcome: Some("auto".to_owned()),
        decided_by: "test".to_owned(),
        mode: None,
    }
}

/// What one `atto exec` does to the store, roughly: open, start a session, then per turn a
/// message and an audit row, a grant, and a fork at the end (a fork reads before it writes).
fn work_like_one_run(path: &Path, name: &str) -> Result<(), String> {
    let store = Store::open(path).map_err(|e| format!("{name}: open: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        store
            .create_session(NewSession {
                id: name.to_owned(),
                workspace: "/w".to_owned(),
                provider: None,
                model: None,
                spawned_by: None,
            })
            .await
            .map_err(|e| format!("{name}: create: {e}"))?;
        for seq in 1..=MESSAGES {
            store
                .append_message(name, seq, format!("{{\"n\":{seq}}}"), None)
                .await
                .map_err(|e| format!("{name}: message {seq}: {e}"))?;
            store
                .audit(audit_entry(name, seq))
                .await
                .map_err(|e| format!("{name}: audit {seq}: {e}"))?;
        }
        store
            .add_grant(NewGrant {
                rule: format!("bash({name})"),
                decision: "allow".to_owned(),
                scope: "project".to_owned(),
                project: Some("/w".to_owned()),
            })
            .await
            .map_err(|e| format!("{name}: grant: {e}"))?;
        Ok::<(), String>(())
    })?;
    store
        .fork_session_blocking(name, &format!("{name}-fork"), None)
        .map_err(|e| format!("{name}: fork: {e}"))?;
    Ok(())
}

/// Everything `n` runs named `{prefix}{i}` wrote must be there.
fn assert_all_written(path: &Path, prefix: &str, n: usize) {
    let conn = Connection::open(path).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let n = i64::try_from(n).unwrap();
    assert_eq!(count("SELECT count(*) FROM sessions"), 2 * n);
    assert_eq!(count("SELECT count(*) FROM messages"), 2 * n * MESSAGES);
    assert_eq!(count("SELECT count(*) FROM audit_log"), n * MESSAGES);
    assert_eq!(count("SELECT count(*) FROM remembered_permissions"), n);
    for i in 0..n {
        let mine: i64 = conn
            .query_row(
                "SELECT count(*) FROM messages WHERE thread_id = ?1",
                [format!("{prefix}{i}")],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(mine, MESSAGES, "run {i}");
    }
}

#[test]
fn many_stores_opening_a_fresh_database_at_once_all_write_everything() {
    const RUNS: usize = 8;
    // Collisions depend on timing; a few rounds make a lost race show up reliably.
    for round in 0..20 {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("atto.db");
        let barrier = Arc::new(Barrier::new(RUNS));
        let runs: Vec<_> = (0..RUNS)
            .map(|i| {
                let (path, barrier) = (path.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    work_like_one_run(&path, &format!("t{i}"))
                })
            })
            .collect();
        let failed: Vec<String> = runs
            .into_iter()
            .filter_map(|run| run.join().unwrap().err())
            .collect();
        assert!(failed.is_empty(), "round {round}: {failed:#?}");
        assert_all_written(&path, "t", RUNS);
    }
}

fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// This test binary, run again on [`child_process`] in `role`.
fn child(role: &str, path: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child_process", "--exact", "--ignored", "--nocapture"])
        .env(ROLE, role)
        .env(DB, path);
    cmd
}

#[test]
fn many_processes_opening_a_fresh_database_at_once_all_write_everything() {
    const RUNS: usize = 8;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("atto.db");
    let start_at = unix_ms() + 500;
    let children: Vec<_> = (0..RUNS)
        .map(|i| {
            child("writer", &path)
                .env(NUMBER, i.to_string())
                .env(START_AT, start_at.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, run) in children.into_iter().enumerate() {
        let out = run.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "process {i}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_all_written(&path, "p", RUNS);
}

fn short_wait() -> OpenOptions {
    OpenOptions {
        busy_timeout: Duration::from_millis(150),
        busy_retry: Duration::from_millis(100),
        ..OpenOptions::default()
    }
}

fn audit_rows(path: &Path) -> i64 {
    Connection::open(path)
        .unwrap()
        .query_row("SELECT count(*) FROM audit_log", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_database_held_past_the_bound_fails_a_write_in_time_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("atto.db");
    let store = Store::open_with(&path, short_wait()).unwrap();
    let other = Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let started = Instant::now();
    let err = store.audit_blocking(audit_entry("s", 1)).unwrap_err();
    let took = started.elapsed();
    // The busy timeout, then the retries: 250 ms in all, and not much more (the default
    // bound would be 8 s).
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_millis(2500),
        "{took:?}"
    );
    assert!(err.is_unavailable(), "{err:?}");
    assert_eq!(err.kind(), StoreErrorKind::Unavailable);
    let text = err.to_string();
    assert!(
        text.contains("another atto process holds the database")
            && text.contains("was not done")
            && text.contains(&path.display().to_string()),
        "{text}"
    );

    other.execute_batch("COMMIT").unwrap();
    assert_eq!(audit_rows(&path), 0, "the refused write must not have run");
    store.audit_blocking(audit_entry("s", 2)).unwrap();
    assert_eq!(audit_rows(&path), 1);
}

#[test]
fn a_lock_held_longer_than_the_busy_timeout_but_within_the_bound_is_waited_out() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("atto.db");
    let store = Store::open_with(
        &path,
        OpenOptions {
            busy_timeout: Duration::from_millis(100),
            busy_retry: Duration::from_secs(5),
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let holder = {
        let path = path.clone();
        let (held, wait_held) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            let other = Connection::open(&path).unwrap();
            other.execute_batch("BEGIN EXCLUSIVE").unwrap();
            held.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(600));
            other.execute_batch("COMMIT").unwrap();
        });
        wait_held.recv().unwrap();
        holder
    };
    let started = Instant::now();
    store.audit_blocking(audit_entry("s", 1)).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    holder.join().unwrap();
    assert_eq!(audit_rows(&path), 1);
}

#[test]
fn a_connection_dropped_inside_a_write_blocks_no_one() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("atto.db");
    let store = Store::open_with(&path, short_wait()).unwrap();
    let other = Connection::open(&path).unwrap();
    other
        .execute_batch(
            "BEGIN IMMEDIATE; INSERT INTO audit_log (at, tool, decision, decided_by) \
             VALUES (1, 'bash', 'allow', 'never committed');",
        )
        .unwrap();
    drop(other);
    // A lock left behind would make this fail as unavailable after the short bound.
    store.audit_blocking(audit_entry("s", 2)).unwrap();
    assert_eq!(audit_rows(&path), 1);
}

#[test]
fn a_process_killed_holding_the_write_lock_blocks_no_one_past_the_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("atto.db");
    drop(Store::open(&path).unwrap());
    let mut holder = child("holder", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    let holding = lines.any(|line| line.is_ok_and(|l| l == "holding the write lock"));
    assert!(holding, "the child never took the lock");
    // The lock is really held: a short-waiting store cannot write.
    let blocked = Store::open_with(&path, short_wait()).unwrap();
    let err = blocked.audit_blocking(audit_entry("s", 1)).unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");

    holder.kill().unwrap(); // SIGKILL: no rollback, no close
    holder.wait().unwrap();
    let started = Instant::now();
    let store = Store::open(&path).unwrap();
    store.audit_blocking(audit_entry("s", 2)).unwrap();
    let took = started.elapsed();
    assert!(took < OpenOptions::default().busy_timeout, "{took:?}");
    let rows = store.recent_audit_blocking(10).unwrap();
    assert_eq!(rows.len(), 1, "the killed process's write must be gone");
    assert_eq!(rows[0].at, 2);
}

/// Not a test: the body of the child processes above, which run this binary again with
/// `--ignored --exact child_process`. Outside them it has nothing to do.
#[test]
#[ignore = "helper process for the multi-process tests; does nothing when run on its own"]
fn child_process() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let path = PathBuf::from(std::env::var(DB).unwrap());
    match role.as_str() {
        "writer" => {
            let number = std::env::var(NUMBER).unwrap();
            let start_at: u128 = std::env::var(START_AT).unwrap().parse().unwrap();
            let wait = start_at.saturating_sub(unix_ms());
            std::thread::sleep(Duration::from_millis(u64::try_from(wait).unwrap()));
            work_like_one_run(&path, &format!("p{number}")).unwrap();
        }
        "holder" => {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "BEGIN IMMEDIATE; INSERT INTO audit_log (at, tool, decision, decided_by) \
                 VALUES (1, 'bash', 'allow', 'killed before commit');",
            )
            .unwrap();
            println!("holding the write lock");
            std::thread::sleep(Duration::from_secs(60));
        }
        other => panic!("unknown child role {other}"),
    }
}
