//! The sandbox's own directory for one session, beneath the system temp dir: `tmp/`, the
//! private temp directory commands see at `/tmp` (the only place the no-write sandbox may
//! write), and `empty/`, the empty read-only directory mounted over hidden credential
//! stores. Removed with everything commands left in it when the session's sandbox is
//! dropped. Does not mount anything (the child does).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::SandboxError;

/// One session's sandbox directory; removed on drop.
#[derive(Debug)]
pub(crate) struct SessionDir {
    base: PathBuf,
}

impl SessionDir {
    /// Creates `atto-sandbox-<pid>-<n>` in the system temp dir, private to this user.
    pub(crate) fn create() -> Result<SessionDir, SandboxError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let parent = std::env::temp_dir();
        let parent = parent.canonicalize().unwrap_or(parent);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let base = parent.join(format!("atto-sandbox-{}-{n}", std::process::id()));
        let failed = |path: &Path, source| SandboxError::WritablePath {
            path: path.to_path_buf(),
            source,
        };
        // A leftover of an earlier process with the same pid: ours now.
        if base.exists() {
            std::fs::remove_dir_all(&base).map_err(|e| failed(&base, e))?;
        }
        let dir = SessionDir { base };
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir.base)
            .map_err(|e| failed(&dir.base, e))?;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir.tmp())
            .map_err(|e| failed(&dir.tmp(), e))?;
        std::fs::DirBuilder::new()
            .mode(0o555)
            .create(dir.empty())
            .map_err(|e| failed(&dir.empty(), e))?;
        Ok(dir)
    }

    /// The private temp directory.
    pub(crate) fn tmp(&self) -> PathBuf {
        self.base.join("tmp")
    }

    /// The empty directory hidden paths are covered with.
    pub(crate) fn empty(&self) -> PathBuf {
        self.base.join("empty")
    }
}

impl Drop for SessionDir {
    fn drop(&mut self) {
        // Best effort: a file a command made unremovable stays behind in the temp dir.
        let _ = std::fs::remove_dir_all(&self.base);
    }
}
