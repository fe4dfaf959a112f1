//! Where the database lives and how a connection to it is opened: the data directory (0700),
//! the checks that refuse a damaged or newer database before anything is written, the
//! connection pragmas, and moving a damaged file aside. It does not know the schema (see
//! `migrate`) nor run queries for callers (see `actor`).
//!
//! Durability: the connection runs in WAL mode with `synchronous=NORMAL`. A committed
//! transaction survives a crash or `kill -9` of atto; only an OS crash or power loss may drop
//! the last few commits. That is enough for grants and the audit log. Writes that must survive
//! power loss too (a session's messages, an approval before its effect runs) can raise it on
//! the writer's connection with `PRAGMA synchronous=FULL`, around those writes or for good.

use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};

use crate::StoreError;
use crate::busy::{self, Patience};
use crate::migrate;

/// The database's file name inside the data directory.
const FILE_NAME: &str = "atto.db";

/// Files SQLite keeps beside the database, moved together with it.
const SIDE_SUFFIXES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// How to open the database. `OpenOptions::default()` is what atto uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenOptions {
    /// How long SQLite waits for another process's lock on one attempt of a request.
    pub busy_timeout: Duration,
    /// How much longer than `busy_timeout` a request keeps retrying (with backoff) when the
    /// database is still held or SQLite gave up without waiting. After `busy_timeout +
    /// busy_retry` in all the request fails with [`StoreError::Locked`], having changed
    /// nothing.
    pub busy_retry: Duration,
    /// Whether to run `PRAGMA quick_check` on open. It reads every page, so its cost grows
    /// with the file: about 4 ms for 1.7 MiB and 23 ms for 17 MiB on the development
    /// machine, against about 0.2 ms for the rest of opening. Once the database holds long
    /// conversations, callers on a tight budget (headless runs) may want
    /// [`IntegrityCheck::Skip`]; damage is then still reported when a query meets it.
    pub integrity_check: IntegrityCheck,
}

/// Which integrity check to run when opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntegrityCheck {
    /// `PRAGMA quick_check`: every page and b-tree is read once; indexes are not compared.
    Quick,
    /// No check on open; damage is still reported as [`StoreError::Corrupt`] when met.
    Skip,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            busy_timeout: Duration::from_millis(5000),
            busy_retry: Duration::from_millis(3000),
            integrity_check: IntegrityCheck::Quick,
        }
    }
}

impl OpenOptions {
    pub(crate) fn patience(&self) -> Patience {
        Patience {
            busy_timeout: self.busy_timeout,
            busy_retry: self.busy_retry,
        }
    }
}

/// Where atto's database lives: `$ATTO_HOME/atto.db`, else `$XDG_DATA_HOME/atto/atto.db`,
/// else `~/.local/share/atto/atto.db`. The directory is created (mode 0700) when missing.
pub fn default_path() -> Result<PathBuf, StoreError> {
    let dir = data_dir(|name| std::env::var_os(name))?;
    ensure_dir(&dir)?;
    Ok(dir.join(FILE_NAME))
}

/// The data directory from the environment, as read through `var`. Empty values count as
/// unset, and a relative `XDG_DATA_HOME` is ignored, as the XDG spec asks.
fn data_dir(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<PathBuf, StoreError> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(home) = set("ATTO_HOME") {
        return Ok(home);
    }
    if let Some(xdg) = set("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return Ok(xdg.join("atto"));
    }
    match set("HOME") {
        Some(home) => Ok(home.join(".local").join("share").join("atto")),
        None => Err(StoreError::NoDataDir),
    }
}

/// Creates `dir` if missing: its parents with the default mode, `dir` itself with 0700 (it
/// holds conversations and grants). An existing directory keeps the mode it has.
pub(crate) fn ensure_dir(dir: &Path) -> Result<(), StoreError> {
    let fail = |source| StoreError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        // Another process created it between the check and here.
        Err(_) if dir.is_dir() => Ok(()),
        Err(e) => Err(fail(e)),
    }
}

/// Opens the database at `path`, refuses it if damaged or newer than this atto, sets the
/// connection up and brings the schema up to date. Other atto processes may be doing the same
/// at the same moment: each step that needs a lock is retried as a whole (see `busy`) until
/// the bound of `opts` runs out.
pub(crate) fn open_connection(path: &Path, opts: &OpenOptions) -> Result<Connection, StoreError> {
    let err = |e| StoreError::from_sqlite(path, e);
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        ensure_dir(dir)?;
    }
    // No SQLITE_OPEN_URI: a path is a path, even one that starts with "file:". Two processes
    // creating the file at once is fine: SQLite creates it empty and the first write makes it
    // a database.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(path, flags).map_err(err)?;
    conn.busy_timeout(opts.busy_timeout).map_err(err)?;
    busy::retry(&mut conn, opts.patience(), |conn| set_up(conn, path, opts)).map_err(err)??;
    Ok(conn)
}

/// The outer result is SQLite's (retried when busy); the inner one a refusal.
type Outcome<T> = rusqlite::Result<Result<T, StoreError>>;

/// Checks the file, sets the connection up and migrates. Safe to run again after a busy
/// error: every step either only reads or leaves the file as a second run expects it.
fn set_up(conn: &mut Connection, path: &Path, opts: &OpenOptions) -> Outcome<()> {
    // Reads only until the file is known to be ours and sound: the first read of the header
    // is where a file that is not a database fails.
    let found = migrate::schema_version(conn)?;
    if let Err(refusal) = check_version(path, found) {
        return Ok(Err(refusal));
    }
    if opts.integrity_check == IntegrityCheck::Quick
        && let Some(detail) = quick_check(conn)?
    {
        return Ok(Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            detail,
        }));
    }

    // Switching to WAL needs the file to itself for a moment, and SQLite answers busy at once
    // rather than wait for it; a file another process already switched needs nothing.
    // journal_mode answers with the mode in force; a file system without shared memory keeps
    // the rollback journal, which is slower but just as safe, so it is accepted.
    let mode: String = conn.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Another, newer atto may have migrated the file since the first look.
    let migrated = migrate::migrate(conn)?;
    Ok(check_version(path, migrated))
}

/// Refuses a schema version this atto did not write.
fn check_version(path: &Path, found: i64) -> Result<(), StoreError> {
    let Ok(found) = u32::try_from(found) else {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("schema version {found} is not one atto writes"),
        });
    };
    if found > migrate::LATEST {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found,
            supported: migrate::LATEST,
        });
    }
    Ok(())
}

/// Runs `PRAGMA quick_check`; `None` when the database is sound, else what it found.
fn quick_check(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let mut stmt = conn.prepare("PRAGMA quick_check")?;
    let lines = stmt
        .query_map([], |row| row.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    if lines.len() == 1 && lines[0] == "ok" {
        return Ok(None);
    }
    let mut detail = lines.into_iter().take(3).collect::<Vec<_>>().join("; ");
    if detail.is_empty() {
        detail = "integrity check returned nothing".to_owned();
    }
    Ok(Some(format!("integrity check: {detail}")))
}

/// Moves a damaged database out of the way: renames `path` and its `-wal`, `-shm` and
/// `-journal` files to `<path>.corrupt-<unix seconds>` (plus `-N` if that name is taken) and
/// returns the new path of the database. Nothing is deleted. No `Store` may have `path` open.
pub fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = format!("{}.corrupt-{secs}", path.display());
    let taken = |p: &Path| p.exists() || SIDE_SUFFIXES.iter().any(|s| with_suffix(p, s).exists());
    let mut to = PathBuf::from(&base);
    let mut n = 1u32;
    while taken(&to) {
        to = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    let rename = |from: &Path, to: &Path| {
        std::fs::rename(from, to).map_err(|source| StoreError::MoveAside {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
            source,
        })
    };
    // The side files go first: a journal left beside a fresh database would be replayed
    // into it.
    for suffix in SIDE_SUFFIXES {
        let side = with_suffix(path, suffix);
        if side.exists() {
            rename(&side, &with_suffix(&to, suffix))?;
        }
    }
    rename(path, &to)?;
    Ok(to)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::ffi::OsString;

    use super::*;

    fn dir_for(vars: &[(&str, &str)]) -> Result<PathBuf, StoreError> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        data_dir(|name| map.get(name).cloned())
    }

    #[test]
    fn data_dir_follows_atto_home_then_xdg_then_home() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[("ATTO_HOME", "/a"), ("XDG_DATA_HOME", "/x"), ("HOME", "/h")],
                "/a",
            ),
            (&[("XDG_DATA_HOME", "/x"), ("HOME", "/h")], "/x/atto"),
            (&[("HOME", "/h")], "/h/.local/share/atto"),
            (&[("ATTO_HOME", ""), ("HOME", "/h")], "/h/.local/share/atto"),
            (
                &[("XDG_DATA_HOME", "relative"), ("HOME", "/h")],
                "/h/.local/share/atto",
            ),
        ];
        for (vars, want) in cases {
            assert_eq!(dir_for(vars).unwrap(), PathBuf::from(want), "{vars:?}");
        }
        assert!(matches!(dir_for(&[]), Err(StoreError::NoDataDir)));
    }

    #[test]
    fn ensure_dir_creates_the_data_dir_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("share").join("atto");
        ensure_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        ensure_dir(&dir).unwrap();
    }
}
