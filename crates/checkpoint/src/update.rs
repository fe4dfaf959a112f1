//! Recording a snapshot from the watcher's list of changed paths (see `watch`): the private
//! index, known to hold the tree of this handle's last snapshot, is updated at those paths
//! only, so the cost follows what changed rather than the size of the workspace. git stays
//! the judge of what a snapshot holds: which of the paths it tracks, and which new files no
//! ignore rule covers. This module does not decide when the watcher's answer is good enough
//! (`watch` and `record` do) and never walks the workspace.

use crate::error::CheckpointError;
use crate::git::Git;
use crate::record::State;
use crate::{Checkpoints, walk};

/// Above this many new files, `ls-files` (whose cost is index entries × paths named) costs
/// more than a walk.
const MAX_NEW_FILES: usize = 64;

/// What a tree holds at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// A file or a symbolic link.
    File,
    /// Nothing.
    Nothing,
    /// A directory or a submodule.
    Other,
}

/// Which watcher named the changed paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// This process's own (see `watch`).
    Process,
    /// The watch daemon (see `daemon`).
    Daemon,
}

impl Source {
    /// How a snapshot's `scan` names it.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Source::Process => "watcher",
            Source::Daemon => "watch daemon",
        }
    }
}

/// The workspace as a snapshot saw it.
#[derive(Debug, Clone)]
pub(crate) struct Base {
    pub(crate) tree: String,
    pub(crate) empty_dirs: Vec<Vec<u8>>,
}

/// What recording from the watcher's paths yields.
pub(crate) enum Watched {
    /// The workspace now, how many paths were looked at, and which watcher named them.
    Recorded(Base, usize, Source),
    /// The watcher cannot answer; walk, for this reason.
    Walk(String),
}

impl Checkpoints {
    /// The workspace from a watcher's list of changed paths — this process's own, or the
    /// watch daemon's (see `link`) — when one has a list and this handle's last snapshot (or
    /// the daemon's record) is what they changed.
    pub(crate) fn watched(&self, state: &mut State) -> Result<Watched, CheckpointError> {
        let (paths, source) = match self.changed(state) {
            Ok(found) => found,
            Err(why) => return Ok(Watched::Walk(why)),
        };
        let Some(base) = state.base.clone() else {
            return Ok(Watched::Walk("no snapshot to compare with".into()));
        };
        if paths.is_empty() {
            return Ok(Watched::Recorded(base, 0, source));
        }
        let names: Vec<Vec<u8>> = paths.iter().map(|p| walk::relative_bytes(p)).collect();
        if names.iter().any(|n| n.contains(&b'\n')) {
            return Ok(Watched::Walk("a changed path holds a newline".into()));
        }
        // The private index must hold the base tree before paths are updated in it.
        if state.index_tree.as_deref() != Some(base.tree.as_str()) || !self.git.has_index() {
            state.index_tree = None;
            self.git.run(&["read-tree", &base.tree])?;
            state.index_tree = Some(base.tree.clone());
        }
        // Which paths the base tree holds: those go to `update-index` as they are (changed
        // or removed). git matches pathspecs against every index entry, so naming many paths
        // to `ls-files` costs entries × paths; a tree lookup costs only the paths.
        let mut update: Vec<u8> = Vec::new();
        let mut new_files: Vec<&std::path::Path> = Vec::new();
        for ((path, name), kind) in paths
            .iter()
            .zip(&names)
            .zip(self.kinds_in(&base.tree, &names)?)
        {
            match kind {
                Held::File => {
                    update.extend_from_slice(name);
                    update.push(0);
                }
                Held::Nothing => match self.workspace.join(path).symlink_metadata() {
                    Ok(m) if m.is_dir() => {
                        return Ok(Watched::Walk("a directory stands at a changed path".into()));
                    }
                    Ok(_) => new_files.push(path),
                    // Created and removed since: nothing to record.
                    Err(_) => {}
                },
                Held::Other => {
                    return Ok(Watched::Walk("a changed path was a directory".into()));
                }
            }
        }
        // New files: git says which no ignore rule covers (a few; many go to a walk).
        if new_files.len() > MAX_NEW_FILES {
            return Ok(Watched::Walk("too many new files to name".into()));
        }
        if !new_files.is_empty() {
            let mut args: Vec<std::ffi::OsString> = [
                "--literal-pathspecs",
                "ls-files",
                "-z",
                "--others",
                "--exclude-standard",
                "--",
            ]
            .map(Into::into)
            .to_vec();
            args.extend(new_files.iter().map(|p| p.as_os_str().to_owned()));
            let listed = self.git.run(&args)?;
            if crate::git::split_nul_bytes(&listed)
                .iter()
                .any(|e| e.ends_with(b"/"))
            {
                return Ok(Watched::Walk("a nested repository appeared".into()));
            }
            update.extend_from_slice(&listed);
        }
        if update.is_empty() {
            return Ok(Watched::Recorded(base, paths.len(), source));
        }
        let listed = update;
        state.index_tree = None;
        let updated = self.git.run_with_input(
            &["update-index", "-z", "--add", "--remove", "--stdin"],
            Some(&listed),
        );
        match updated {
            Ok(_) => {}
            // A path git will not update in place (a file that became a directory without
            // the watcher seeing it): git changed nothing; the walk and `add -A` sort it out.
            Err(CheckpointError::GitFailed { .. }) => {
                return Ok(Watched::Walk("git could not update a changed path".into()));
            }
            Err(e) => return Err(e),
        }
        let tree = self.git.line(&["write-tree"])?;
        state.index_tree = Some(tree.clone());
        let empty_dirs = self.empty_dirs_after(&base, &tree, &names)?;
        Ok(Watched::Recorded(
            Base { tree, empty_dirs },
            paths.len(),
            source,
        ))
    }

    /// The empty directories once files at `changed` were written or removed (no directory
    /// was created or removed: the watcher would have said so). Only the directories above
    /// those files can have changed: each is empty when it is still there and the new tree
    /// holds nothing in it.
    fn empty_dirs_after(
        &self,
        base: &Base,
        tree: &str,
        changed: &[Vec<u8>],
    ) -> Result<Vec<Vec<u8>>, CheckpointError> {
        let mut above: std::collections::BTreeSet<Vec<u8>> = Default::default();
        for path in changed {
            let mut end = path.len();
            while let Some(slash) = path[..end].iter().rposition(|b| *b == b'/') {
                above.insert(path[..slash].to_vec());
                end = slash;
            }
        }
        let mut empty: std::collections::BTreeSet<Vec<u8>> =
            base.empty_dirs.iter().cloned().collect();
        if above.is_empty() {
            return Ok(empty.into_iter().collect());
        }
        let above: Vec<Vec<u8>> = above.into_iter().collect();
        for (dir, held) in above.iter().zip(self.kinds_in(tree, &above)?) {
            let on_disk = self.workspace.join(crate::git::path_of(dir)).is_dir();
            if on_disk && held == Held::Nothing {
                empty.insert(dir.clone());
            } else {
                empty.remove(dir);
            }
        }
        Ok(empty.into_iter().collect())
    }

    /// What `tree` holds at each of `names`, in one `cat-file` process.
    fn kinds_in(&self, tree: &str, names: &[Vec<u8>]) -> Result<Vec<Held>, CheckpointError> {
        kinds_in(&self.git, tree, names)
    }
}

fn kinds_in(git: &Git, tree: &str, names: &[Vec<u8>]) -> Result<Vec<Held>, CheckpointError> {
    let input: Vec<u8> = names
        .iter()
        .flat_map(|name| {
            let mut line = format!("{tree}:").into_bytes();
            line.extend_from_slice(name);
            line.push(b'\n');
            line
        })
        .collect();
    let out = git.run_with_input(&["cat-file", "--batch-check=%(objecttype)"], Some(&input))?;
    let answers: Vec<&[u8]> = out.split(|b| *b == b'\n').take(names.len()).collect();
    if answers.len() != names.len() {
        return Err(CheckpointError::Corrupt {
            what: "cat-file --batch-check output".into(),
            side: git.side().to_path_buf(),
        });
    }
    Ok(answers
        .into_iter()
        .map(|a| match a {
            b"blob" => Held::File,
            _ if a.ends_with(b" missing") => Held::Nothing,
            _ => Held::Other,
        })
        .collect())
}
