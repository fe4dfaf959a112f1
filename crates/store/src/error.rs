//! `StoreError`: every way the store can fail, each message saying what happened, what was
//! not done and what to do next; and the one place that turns a SQLite error into one of
//! them, and [`StoreErrorKind`], the few classes callers act on. It does not decide whether a
//! caller retries, fails closed or offers to move a file aside — the front ends do, from the
//! kind or the variant.

use std::path::{Path, PathBuf};

use rusqlite::ffi::ErrorCode;

/// An error from the store. The `Display` text is meant for the user as it stands.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Neither `ATTO_HOME`, `XDG_DATA_HOME` nor `HOME` says where the data directory is.
    #[error(
        "cannot tell where atto keeps its data: none of ATTO_HOME, XDG_DATA_HOME or HOME is \
         set; no database was opened. Set ATTO_HOME to a directory atto may write to."
    )]
    NoDataDir,

    /// The data directory could not be created or is not a usable directory.
    #[error(
        "cannot create or use the data directory {}: {source}; no database was opened. Check \
         that it is a directory you can read and write, or set ATTO_HOME to one that is.",
        path.display()
    )]
    Dir {
        /// The directory atto tried to create or use.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },

    /// SQLite could not open or write the file (permissions, read-only file system, ...).
    #[error(
        "cannot open the database {} for reading and writing ({detail}); nothing was read or \
         written. Check the permissions of the file and its directory, or set ATTO_HOME to a \
         directory you can write.",
        path.display()
    )]
    CannotOpen {
        /// The database file.
        path: PathBuf,
        /// SQLite's own words.
        detail: String,
    },

    /// The file is not a database or is damaged.
    #[error(
        "the database {} is damaged or is not an atto database ({detail}); atto did not read \
         or change it. atto can move it aside (renamed to {}.corrupt-<time>, nothing deleted) \
         and start a fresh database; until then it cannot be used.",
        path.display(),
        path.display()
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite or the integrity check reported.
        detail: String,
    },

    /// The database was written by an atto that knows a newer schema.
    #[error(
        "the database {} was written by a newer atto (schema version {found}; this atto knows \
         up to {supported}); atto left it untouched. Upgrade atto to use it.",
        path.display()
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The schema version found in the file.
        found: u32,
        /// The newest schema version this build knows.
        supported: u32,
    },

    /// Another connection kept the database locked for longer than the busy timeout and the
    /// retries after it ([`StoreErrorKind::Unavailable`]).
    #[error(
        "another atto process holds the database {} and did not release it in time; this \
         change or read was not done. Try again in a moment; if it keeps happening, finish or \
         close the other atto session.",
        path.display()
    )]
    Locked {
        /// The database file.
        path: PathBuf,
    },

    /// The disk (or the database's size limit) is full.
    #[error(
        "the disk holding the database {} is full; the last change was not saved (what was \
         saved before is intact). Free some space and try again.",
        path.display()
    )]
    DiskFull {
        /// The database file.
        path: PathBuf,
    },

    /// A read or write of the file failed at the operating-system level.
    #[error(
        "reading or writing the database {} failed ({detail}); the operation was not \
         completed. Check the disk and the file system it lives on, then try again.",
        path.display()
    )]
    Io {
        /// The database file.
        path: PathBuf,
        /// SQLite's own words.
        detail: String,
    },

    /// Moving a damaged database aside failed.
    #[error(
        "cannot move {} aside to {}: {source}; nothing was deleted. Move or rename the file by \
         hand, then start atto again.",
        from.display(),
        to.display()
    )]
    MoveAside {
        /// The file that was to be moved.
        from: PathBuf,
        /// Where it was to go.
        to: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },

    /// Nothing matches what was asked for (a session id, say); the message says what to do.
    #[error("{0}")]
    NotFound(String),

    /// A value handed to the store breaks one of its rules.
    #[error("{what}; nothing was stored. {hint}")]
    Invalid {
        /// What is wrong.
        what: String,
        /// What would be accepted.
        hint: &'static str,
    },

    /// A stored row cannot be turned back into its value (arguments that are not JSON, a
    /// status this atto does not know): the file was edited by hand or written by a faulty
    /// atto. The rest of the database is unaffected.
    #[error(
        "{what} in the database {} cannot be read ({detail}); nothing was changed. The rest \
         of the database is still usable: repair or delete that row with the sqlite3 tool, \
         and if atto wrote it this way, please report it as a bug.",
        path.display()
    )]
    Unreadable {
        /// The database file.
        path: PathBuf,
        /// Which row, in words (e.g. `change 2 (id c-2) of plan p-1`).
        what: String,
        /// What is wrong with it.
        detail: String,
    },

    /// The writer thread failed on this request (a bug) or is gone.
    #[error(
        "the database writer for {} failed on this request or has stopped; the request was \
         not carried out. Restart atto; if it happens again, please report it as a bug.",
        path.display()
    )]
    Closed {
        /// The database file.
        path: PathBuf,
    },

    /// Any other SQLite error: a bug in a query or an unexpected state.
    #[error(
        "database error on {}: {detail}; the operation was not completed. This is likely a bug \
         in atto; please report it.",
        path.display()
    )]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// SQLite's own words.
        detail: String,
    },
}

impl StoreError {
    /// Classifies a SQLite error met while working on the database at `path`.
    pub(crate) fn from_sqlite(path: &Path, err: rusqlite::Error) -> StoreError {
        let path = path.to_path_buf();
        let rusqlite::Error::SqliteFailure(code, message) = &err else {
            return StoreError::Sqlite {
                path,
                detail: err.to_string(),
            };
        };
        let detail = message.clone().unwrap_or_else(|| code.to_string());
        match code.code {
            ErrorCode::DatabaseBusy
            | ErrorCode::DatabaseLocked
            | ErrorCode::FileLockingProtocolFailed => StoreError::Locked { path },
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => {
                StoreError::Corrupt { path, detail }
            }
            ErrorCode::DiskFull => StoreError::DiskFull { path },
            ErrorCode::CannotOpen | ErrorCode::PermissionDenied | ErrorCode::ReadOnly => {
                StoreError::CannotOpen { path, detail }
            }
            ErrorCode::SystemIoFailure | ErrorCode::NoLargeFileSupport => {
                StoreError::Io { path, detail }
            }
            ErrorCode::InternalMalfunction
            | ErrorCode::OperationAborted
            | ErrorCode::OutOfMemory
            | ErrorCode::OperationInterrupted
            | ErrorCode::NotFound
            | ErrorCode::SchemaChanged
            | ErrorCode::TooBig
            | ErrorCode::ConstraintViolation
            | ErrorCode::TypeMismatch
            | ErrorCode::ApiMisuse
            | ErrorCode::AuthorizationForStatementDenied
            | ErrorCode::ParameterOutOfRange
            | ErrorCode::Unknown => StoreError::Sqlite { path, detail },
            // `ErrorCode` is non-exhaustive: a code added by a later SQLite is reported as is.
            _ => StoreError::Sqlite { path, detail },
        }
    }
}

/// What a caller can do about a [`StoreError`], in a few classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// Other atto processes held the database past every wait: nothing was done, and the
    /// same request may succeed later. A run that depends on the store stops here (exit 75,
    /// "try again") rather than go on without its records.
    Unavailable,
    /// The file is damaged, not an atto database, or holds a row this atto cannot read.
    Damaged,
    /// The disk (or the database's size limit) is full.
    Full,
    /// The file was written by a newer atto.
    Newer,
    /// The file or its directory cannot be found, created, read or written.
    Inaccessible,
    /// The request itself was refused (unknown id, invalid value); the store is fine.
    Refused,
    /// A bug in atto or an unexpected SQLite state; the writer may have stopped.
    Bug,
}

impl StoreError {
    /// The class of this error. Every kind but [`StoreErrorKind::Refused`] means the store
    /// could not do what was asked, so whatever must be recorded first (an audit row, a
    /// grant) was not.
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            StoreError::Locked { .. } => StoreErrorKind::Unavailable,
            StoreError::Corrupt { .. } | StoreError::Unreadable { .. } => StoreErrorKind::Damaged,
            StoreError::DiskFull { .. } => StoreErrorKind::Full,
            StoreError::NewerSchema { .. } => StoreErrorKind::Newer,
            StoreError::NoDataDir
            | StoreError::Dir { .. }
            | StoreError::CannotOpen { .. }
            | StoreError::Io { .. }
            | StoreError::MoveAside { .. } => StoreErrorKind::Inaccessible,
            StoreError::NotFound(_) | StoreError::Invalid { .. } => StoreErrorKind::Refused,
            StoreError::Closed { .. } | StoreError::Sqlite { .. } => StoreErrorKind::Bug,
        }
    }

    /// Whether other atto processes held the database past every wait (retry later; exit 75).
    pub fn is_unavailable(&self) -> bool {
        self.kind() == StoreErrorKind::Unavailable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: i32) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    #[test]
    fn sqlite_codes_map_to_the_variants_users_act_on() {
        let p = Path::new("/data/atto.db");
        let cases: &[(i32, &str)] = &[
            (rusqlite::ffi::SQLITE_BUSY, "Locked"),
            (rusqlite::ffi::SQLITE_BUSY_SNAPSHOT, "Locked"),
            (rusqlite::ffi::SQLITE_LOCKED, "Locked"),
            (rusqlite::ffi::SQLITE_PROTOCOL, "Locked"),
            (rusqlite::ffi::SQLITE_CORRUPT, "Corrupt"),
            (rusqlite::ffi::SQLITE_NOTADB, "Corrupt"),
            (rusqlite::ffi::SQLITE_FULL, "DiskFull"),
            (rusqlite::ffi::SQLITE_CANTOPEN, "CannotOpen"),
            (rusqlite::ffi::SQLITE_READONLY, "CannotOpen"),
            (rusqlite::ffi::SQLITE_IOERR_WRITE, "Io"),
            (rusqlite::ffi::SQLITE_CONSTRAINT, "Sqlite"),
        ];
        for (code, want) in cases {
            let got = format!("{:?}", StoreError::from_sqlite(p, failure(*code)));
            assert!(got.starts_with(want), "code {code}: got {got}, want {want}");
            assert!(
                got.contains("/data/atto.db"),
                "code {code}: path missing in {got}"
            );
        }
    }

    #[test]
    fn only_a_held_database_is_unavailable() {
        let p = Path::new("/data/atto.db");
        let cases: &[(i32, StoreErrorKind)] = &[
            (rusqlite::ffi::SQLITE_BUSY, StoreErrorKind::Unavailable),
            (rusqlite::ffi::SQLITE_PROTOCOL, StoreErrorKind::Unavailable),
            (rusqlite::ffi::SQLITE_CORRUPT, StoreErrorKind::Damaged),
            (rusqlite::ffi::SQLITE_FULL, StoreErrorKind::Full),
            (rusqlite::ffi::SQLITE_READONLY, StoreErrorKind::Inaccessible),
            (
                rusqlite::ffi::SQLITE_IOERR_WRITE,
                StoreErrorKind::Inaccessible,
            ),
            (rusqlite::ffi::SQLITE_CONSTRAINT, StoreErrorKind::Bug),
        ];
        for (code, want) in cases {
            let err = StoreError::from_sqlite(p, failure(*code));
            assert_eq!(err.kind(), *want, "code {code}: {err:?}");
            assert_eq!(err.is_unavailable(), *want == StoreErrorKind::Unavailable);
        }
        assert_eq!(
            StoreError::NotFound("x".to_owned()).kind(),
            StoreErrorKind::Refused
        );
    }
}
