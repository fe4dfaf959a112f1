//! Changing the workspace for a restore, one path at a time, without git: a file or symbolic
//! link is written to a temporary sibling and renamed over the path (so a symbolic link
//! standing there is replaced, never followed), an executable bit is set from the entry's
//! mode, and nothing is ever written through a parent that is a symbolic link. Each step
//! reports its own failure, so a restore knows exactly which paths it changed. What to do,
//! and in which order, is decided in `restore`.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::git::path_of;
use crate::plan::{Blob, Kind};

/// Writes entries into one workspace, with object contents read beforehand.
pub(crate) struct Writer<'a> {
    pub(crate) workspace: &'a Path,
    pub(crate) contents: &'a HashMap<String, Result<Vec<u8>, String>>,
}

impl Writer<'_> {
    /// Makes workspace path `path` hold `to` (`None`: nothing). `from` is what the restore
    /// found there: when only the executable bit differs, the file is not rewritten.
    pub(crate) fn put(
        &self,
        path: &[u8],
        from: Option<&Blob>,
        to: Option<&Blob>,
    ) -> Result<(), String> {
        let rel = path_of(path);
        let full = self.workspace.join(&rel);
        self.no_link_above(&rel)?;
        let Some(to) = to else {
            return self.remove(&full);
        };
        if let Some(from) = from
            && from.oid == to.oid
            && from.kind != Kind::Symlink
            && to.kind != Kind::Symlink
            && full.symlink_metadata().is_ok_and(|m| m.is_file())
        {
            return set_executable(&full, to.kind == Kind::Executable);
        }
        let content = match self.contents.get(&to.oid) {
            Some(Ok(content)) => content,
            Some(Err(reason)) => return Err(reason.clone()),
            None => return Err(format!("object {} was not read", to.oid)),
        };
        let parent = full.parent().unwrap_or(self.workspace);
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create directory {}: {e}", parent.display()))?;
        if full.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            // A directory holding nothing a snapshot records (only ignored files) stays.
            std::fs::remove_dir(&full).map_err(|e| {
                format!("a directory stands there and cannot be removed ({e}); it may hold ignored files")
            })?;
        }
        let tmp = parent.join(format!(
            ".atto-restore-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let written =
            write_entry(&tmp, to.kind, content).and_then(|()| std::fs::rename(&tmp, &full));
        written.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            e.to_string()
        })
    }

    /// Removes the file or link at `full`, then the directories that leaves empty.
    fn remove(&self, full: &Path) -> Result<(), String> {
        match full.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Ok(m) if m.is_dir() => {
                return Err("a directory stands where the checkpoint has no file".into());
            }
            _ => {}
        }
        std::fs::remove_file(full).map_err(|e| e.to_string())?;
        let mut dir = full.parent();
        while let Some(d) = dir {
            if d == self.workspace
                || !d.starts_with(self.workspace)
                || std::fs::remove_dir(d).is_err()
            {
                break;
            }
            dir = d.parent();
        }
        Ok(())
    }

    /// Fails when a directory on the way to `rel` is a symbolic link: writing there would
    /// change files outside the path (possibly outside the workspace).
    fn no_link_above(&self, rel: &Path) -> Result<(), String> {
        let mut at = PathBuf::from(self.workspace);
        let parts: Vec<Component<'_>> = rel.components().collect();
        for part in parts.iter().take(parts.len().saturating_sub(1)) {
            at.push(part);
            match at.symlink_metadata() {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(format!(
                        "{} is a symbolic link; nothing is written through it",
                        at.display()
                    ));
                }
                Ok(_) => {}
                Err(_) => return Ok(()),
            }
        }
        Ok(())
    }
}

#[cfg(unix)]
fn write_entry(tmp: &Path, kind: Kind, content: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if kind == Kind::Symlink {
        return std::os::unix::fs::symlink(path_of(content), tmp);
    }
    // As git checks files out: the umask decides the rest of the mode.
    let mode = if kind == Kind::Executable {
        0o777
    } else {
        0o666
    };
    let mut file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(tmp)?;
    file.write_all(content)
}

/// Without symbolic links or modes: a link is written as a file holding its target, as git
/// does with `core.symlinks=false`.
#[cfg(not(unix))]
fn write_entry(tmp: &Path, _kind: Kind, content: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(tmp)?;
    file.write_all(content)
}

#[cfg(unix)]
fn set_executable(full: &Path, executable: bool) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = full.metadata().map_err(|e| e.to_string())?.permissions();
    let mode = perms.mode();
    // Executable wherever readable, as git's 755 under the user's umask.
    perms.set_mode(if executable {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    });
    std::fs::set_permissions(full, perms).map_err(|e| e.to_string())
}

#[cfg(not(unix))]
fn set_executable(_full: &Path, _executable: bool) -> Result<(), String> {
    Ok(())
}
