//! What the store's integration tests share: a store in a temp dir with two sessions,
//! sessions created from sync code, and tampering with rows behind the store's back.

use std::path::Path;

use atto_store::{NewSession, Store};
use rusqlite::Connection;

pub fn open(path: &Path) -> Store {
    Store::open(path).unwrap()
}

pub fn temp_store() -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(&tmp.path().join("atto.db"));
    for id in ["s1", "s2"] {
        session(&store, id);
    }
    (tmp, store)
}

/// Stores a session. Sessions are created only from async code, so this runs on a thread
/// of its own, where it may block even when called from a `#[tokio::test]`.
pub fn session(store: &Store, id: &str) {
    let (store, id) = (store.clone(), id.to_owned());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime
            .block_on(store.create_session(NewSession {
                id,
                workspace: "/w".to_owned(),
                provider: None,
                model: None,
                spawned_by: None,
            }))
            .unwrap();
    })
    .join()
    .unwrap();
}

/// Opens a second connection on the file, as someone editing it by hand would.
pub fn tamper(path: &Path, sql: &str) {
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "ignore_check_constraints", "ON")
        .unwrap();
    conn.execute_batch(sql).unwrap();
}
