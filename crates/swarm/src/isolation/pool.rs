//! Worktrees a swarm keeps between its attempts. Adding a worktree writes every file of the
//! tree and removing it deletes every one: on a large repository most of what an isolated
//! attempt costs the coordinator. So a finished attempt's worktree (one not kept for a
//! person to look at) is parked, and a later attempt gets it back as a new one would be:
//! everything git does not track removed (ignored files and the links to the workspace's
//! ignored directories too), the attempt's snapshot checked out over it (git writes only the
//! files that differ; for a remote attempt, its result instead, once it is back), the links
//! made again, then moved to the attempt's directory. Every
//! git run there goes through the git directory read when the worktree was first made,
//! never through its `.git` file; a worktree that cannot be made ready is removed and a new
//! one made.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{Worktree, create, git, link_ignored, remove, remove_dir, repository_lock};

/// What a worktree taken from the pool is made ready for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    /// A worker: the base checked out over what it held.
    Base,
    /// A remote attempt's result, which is checked out over it (git writes only the files
    /// that differ), so the base is not checked out first: its files are not the base's
    /// until then, and the base's are read from git.
    Result,
}

/// A swarm's parked worktrees.
#[derive(Debug)]
pub struct Pool {
    /// Where parked worktrees wait (beside the attempts' worktrees, never one of them).
    parking: PathBuf,
    /// Parked worktrees at most.
    max: usize,
    parked: Mutex<Vec<Worktree>>,
    /// Parked or being parked: a place is reserved before the move.
    held: AtomicUsize,
    /// Remote attempts' results being checked at once.
    checking: tokio::sync::Semaphore,
}

impl Pool {
    /// A pool parking at most `max` worktrees in `parking`, checking at most as many
    /// remote results at once as the machine has CPUs (and `max`).
    pub fn new(parking: PathBuf, max: usize) -> Pool {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Pool::checking_at_most(parking, max, cpus.min(max).max(1))
    }

    /// [`Pool::new`] checking at most `checks` remote results at once.
    pub fn checking_at_most(parking: PathBuf, max: usize, checks: usize) -> Pool {
        Pool {
            parking,
            max,
            parked: Mutex::new(Vec::new()),
            held: AtomicUsize::new(0),
            checking: tokio::sync::Semaphore::new(checks),
        }
    }

    /// A place to check a remote attempt's result in, held until it is merged: a result
    /// waits while as many as the machine has CPUs are being checked (the checks are CPU
    /// work, and each needs a worktree: a swarm of many remote workers whose results come
    /// back together makes that many, not one per worker).
    pub async fn check_slot(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.checking.acquire().await.ok()
    }

    /// Removes what a coordinator killed before its end left parked.
    pub async fn clear_leftovers(&self, workspace: &Path) {
        let Ok(entries) = std::fs::read_dir(&self.parking) else {
            return;
        };
        for entry in entries.flatten() {
            remove_dir(workspace, &entry.path()).await;
        }
    }

    /// A worktree of `workspace` at `base` in `dir`, `ready` for its attempt: a parked
    /// one made ready and moved there, or a new one.
    pub async fn take(
        &self,
        workspace: &Path,
        base: &str,
        dir: &Path,
        ready: Ready,
    ) -> Result<Worktree, String> {
        match self.take_parked(workspace, base, dir, ready).await {
            Some(taken) => taken,
            None => create(workspace, base, dir).await,
        }
    }

    /// A parked worktree made ready as [`Pool::take`] makes it, or `None` when none is
    /// parked (nothing is created).
    pub async fn take_parked(
        &self,
        workspace: &Path,
        base: &str,
        dir: &Path,
        ready: Ready,
    ) -> Option<Result<Worktree, String>> {
        while let Some(parked) = self.pop() {
            if let Ok(tree) = reuse(workspace, parked, base, dir, ready).await {
                return Some(Ok(tree));
            }
        }
        None
    }

    /// Parks `tree` for a later attempt, or removes it when the pool holds enough.
    pub async fn give_back(&self, workspace: &Path, tree: &Worktree) {
        let reserved = self
            .held
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok();
        if !reserved {
            remove(workspace, tree).await;
            return;
        }
        let to = self.parking.join(uuid::Uuid::new_v4().simple().to_string());
        let moved = std::fs::create_dir_all(&self.parking).is_ok()
            && move_tree(workspace, &tree.dir, &to).await.is_ok();
        if moved {
            let parked = Worktree {
                dir: to,
                base: tree.base.clone(),
                git_dir: tree.git_dir.clone(),
            };
            self.lock().push(parked);
        } else {
            self.held.fetch_sub(1, Ordering::SeqCst);
            remove(workspace, tree).await;
        }
    }

    /// Removes every parked worktree (the swarm's end).
    pub async fn drain(&self, workspace: &Path) {
        while let Some(parked) = self.pop() {
            remove(workspace, &parked).await;
        }
        let _ = std::fs::remove_dir(&self.parking);
    }

    /// How many worktrees are parked.
    pub fn parked(&self) -> usize {
        self.lock().len()
    }

    fn pop(&self) -> Option<Worktree> {
        let parked = self.lock().pop();
        if parked.is_some() {
            self.held.fetch_sub(1, Ordering::SeqCst);
        }
        parked
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Worktree>> {
        // Only pushed to and popped from: a panic elsewhere leaves it whole.
        self.parked.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Makes the parked worktree ready where it is (nothing untracked, `base` checked out
/// unless a result will be, the links made again), then moves it to `dir`. Removed when any step fails.
async fn reuse(
    workspace: &Path,
    parked: Worktree,
    base: &str,
    dir: &Path,
    ready: Ready,
) -> Result<Worktree, String> {
    let made = async {
        parked.git(&["clean", "-q", "-ffdx"], None).await?;
        if ready == Ready::Base {
            parked
                .git(&["checkout", "-q", "-f", "--detach", base], None)
                .await?;
        }
        link_ignored(workspace, &parked.dir).await;
        move_tree(workspace, &parked.dir, dir).await
    }
    .await;
    if let Err(err) = made {
        remove(workspace, &parked).await;
        return Err(err);
    }
    Ok(Worktree {
        dir: dir.to_path_buf(),
        base: base.to_owned(),
        git_dir: parked.git_dir,
    })
}

/// Moves the worktree of `workspace` at `from` to `to` (`git worktree move`, which checks
/// the worktree's `.git` file still names its git directory and refuses it otherwise).
async fn move_tree(workspace: &Path, from: &Path, to: &Path) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let (from, to) = (from.display().to_string(), to.display().to_string());
    let _repository = repository_lock(workspace).await;
    git(workspace, &["worktree", "move", &from, &to], None)
        .await
        .map(drop)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::isolation::tests::repo;
    use crate::isolation::{Change, changes, snapshot};
    use crate::testing::sh;

    fn worktrees(ws: &Path) -> usize {
        let out = std::process::Command::new("git")
            .args(["worktree", "list", "--porcelain"])
            .current_dir(ws)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count()
    }

    #[tokio::test]
    async fn a_parked_worktree_comes_back_as_a_new_one_would() {
        let ws = repo();
        let scratch = tempfile::tempdir().unwrap();
        let pool = Pool::new(scratch.path().join("parked"), 2);
        let base = snapshot(ws.path(), scratch.path()).await.unwrap();
        let first = pool
            .take(ws.path(), &base, &scratch.path().join("t1-1"), Ready::Base)
            .await
            .unwrap();
        // The attempt changes, deletes and adds files, and builds something ignored.
        std::fs::write(first.dir.join("a.txt"), "changed\n").unwrap();
        std::fs::remove_file(first.dir.join("b.txt")).unwrap();
        std::fs::write(first.dir.join("junk.txt"), "junk\n").unwrap();
        std::fs::create_dir(first.dir.join("build")).unwrap();
        std::fs::write(first.dir.join("build/.gitignore"), "*\n").unwrap();
        std::fs::write(first.dir.join("build/out.o"), "o\n").unwrap();
        pool.give_back(ws.path(), &first).await;
        assert_eq!(pool.parked(), 1);
        assert!(!first.dir.exists());

        // The workspace moved on; the next attempt starts from its new snapshot.
        std::fs::write(ws.path().join("a.txt"), "two\n").unwrap();
        let base = snapshot(ws.path(), scratch.path()).await.unwrap();
        let dir = scratch.path().join("t2-1");
        let second = pool
            .take(ws.path(), &base, &dir, Ready::Base)
            .await
            .unwrap();
        assert_eq!(pool.parked(), 0);
        assert_eq!(second.git_dir, first.git_dir, "not the parked worktree");
        assert_eq!(second.dir, dir);
        let read = |rel: &str| std::fs::read_to_string(dir.join(rel)).ok();
        assert_eq!(read("a.txt").as_deref(), Some("two\n"));
        assert_eq!(read("b.txt").as_deref(), Some("keep\n"));
        assert_eq!(read("new.txt").as_deref(), Some("untracked\n"));
        assert_eq!(read("venv/lib.py").as_deref(), Some("lib\n"));
        assert_eq!(read("junk.txt"), None);
        assert!(!dir.join("build").exists());
        assert_eq!(changes(&second, scratch.path()).await.unwrap(), vec![]);
        std::fs::write(dir.join("c.txt"), "c\n").unwrap();
        assert_eq!(
            changes(&second, scratch.path()).await.unwrap(),
            vec![Change::Write("c.txt".into())]
        );
        pool.give_back(ws.path(), &second).await;
        pool.drain(ws.path()).await;
        assert_eq!(worktrees(ws.path()), 1);
        assert!(!scratch.path().join("parked").exists());
    }

    #[tokio::test]
    async fn a_pool_parks_no_more_than_it_holds_nor_a_worktree_pointed_elsewhere() {
        let ws = repo();
        let other = tempfile::tempdir().unwrap();
        sh(other.path(), "git init -q");
        let scratch = tempfile::tempdir().unwrap();
        let pool = Pool::new(scratch.path().join("parked"), 2);
        let base = snapshot(ws.path(), scratch.path()).await.unwrap();
        let mut trees = Vec::new();
        for n in 0..4 {
            let dir = scratch.path().join(format!("t{n}-1"));
            trees.push(
                pool.take(ws.path(), &base, &dir, Ready::Base)
                    .await
                    .unwrap(),
            );
        }
        // The first attempt's worker pointed its worktree's .git file at another repository.
        std::fs::write(
            trees[0].dir.join(".git"),
            format!("gitdir: {}\n", other.path().join(".git").display()),
        )
        .unwrap();
        pool.give_back(ws.path(), &trees[0]).await;
        assert_eq!(pool.parked(), 0, "a worktree pointed elsewhere was parked");
        for tree in &trees[1..] {
            pool.give_back(ws.path(), tree).await;
        }
        assert_eq!(pool.parked(), 2);
        assert!(trees.iter().all(|t| !t.dir.exists()));
        assert_eq!(worktrees(ws.path()), 3);
        pool.drain(ws.path()).await;
        assert_eq!(worktrees(ws.path()), 1);
        sh(other.path(), "test -z \"$(find .git/objects -type f)\"");
    }

    #[tokio::test]
    async fn what_a_killed_coordinator_left_parked_is_cleared() {
        let ws = repo();
        let scratch = tempfile::tempdir().unwrap();
        let base = snapshot(ws.path(), scratch.path()).await.unwrap();
        {
            let pool = Pool::new(scratch.path().join("parked"), 2);
            let tree = pool
                .take(ws.path(), &base, &scratch.path().join("t1-1"), Ready::Base)
                .await
                .unwrap();
            pool.give_back(ws.path(), &tree).await;
            // Dropped without draining, as a killed coordinator leaves it.
        }
        assert_eq!(worktrees(ws.path()), 2);
        let pool = Pool::new(scratch.path().join("parked"), 2);
        pool.clear_leftovers(ws.path()).await;
        assert_eq!(worktrees(ws.path()), 1);
    }

    /// Remote results are checked as many at once as the pool allows: the next waits for a
    /// slot, and gets it when one is given back.
    #[tokio::test]
    async fn results_wait_for_a_slot_to_be_checked_in() {
        let scratch = tempfile::tempdir().unwrap();
        let pool = Pool::checking_at_most(scratch.path().join("parked"), 4, 1);
        let first = pool.check_slot().await.unwrap();
        let waiting =
            tokio::time::timeout(std::time::Duration::from_millis(100), pool.check_slot()).await;
        assert!(waiting.is_err(), "a second slot while one is held");
        drop(first);
        assert!(pool.check_slot().await.is_some());
        // A machine's CPUs, never more than the pool parks, never none.
        let one = Pool::new(scratch.path().join("p1"), 1);
        assert_eq!(one.checking.available_permits(), 1);
    }
}
