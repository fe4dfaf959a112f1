//! Whether a swarm's coordinator is still alive: it holds an exclusive lock on a file in
//! the swarm's report directory for as long as it runs, and the kernel releases the lock
//! when the process ends however it ends (SIGKILL included). The saved state alone cannot
//! say this: a killed coordinator never writes "interrupted".
//!
//! Owns: the lock file and the question. Does not own: the state or how it is shown.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// The lock file of swarm `id` under `report_dir`.
fn lock_path(report_dir: &Path, id: &str) -> PathBuf {
    report_dir.join(id).join("coordinator.lock")
}

/// Held by a running coordinator; dropping it (or the process ending) releases the lock.
#[derive(Debug)]
pub struct Alive {
    _file: File,
}

/// Takes the lock of swarm `id`; `Err` says why it could not (the swarm is then shown
/// as running only while its state says so).
pub fn hold(report_dir: &Path, id: &str) -> Result<Alive, String> {
    let path = lock_path(report_dir, id);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Alive { _file: file }),
        Err(TryLockError::WouldBlock) => Err(format!(
            "another coordinator is running swarm {id} (it holds {})",
            path.display()
        )),
        Err(TryLockError::Error(e)) => Err(format!("{}: {e}", path.display())),
    }
}

/// Whether some process holds swarm `id`'s lock. No lock file, or one no one holds:
/// no coordinator is running it.
pub fn is_running(report_dir: &Path, id: &str) -> bool {
    let Ok(file) = File::open(lock_path(report_dir, id)) else {
        return false;
    };
    matches!(file.try_lock_shared(), Err(TryLockError::WouldBlock))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_held_lock_says_running_and_a_released_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_running(dir.path(), "s1"));
        let alive = hold(dir.path(), "s1").unwrap();
        assert!(is_running(dir.path(), "s1"));
        assert!(hold(dir.path(), "s1").is_err());
        drop(alive);
        // A process another test forks at this moment holds a copy of the descriptor, and
        // so the lock, until it execs (the descriptor closes on exec): released within
        // moments, not necessarily at once.
        let released = (0..200).any(|_| {
            let free = !is_running(dir.path(), "s1");
            if !free {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            free
        });
        assert!(released, "the lock was still held 2 s after it was dropped");
    }
}
