//! Changing the workspace for a restore, one path at a time, without git and through one
//! handle on the workspace (see `beneath`): every directory on the way is opened without
//! following a symbolic link, so a link swapped into a parent makes the step fail instead of
//! writing outside. A file or symbolic link is written to a temporary sibling and renamed over
//! the path (so a symbolic link standing there is replaced, never followed), and an executable
//! bit is set from the entry's mode. Each step reports its own failure, so a restore knows
//! exactly which paths it changed. What to do, and in which order, is decided in `restore`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use crate::beneath::{Beneath, Missing, Parent, Type};
use crate::git::path_of;
use crate::plan::{Blob, Kind};

/// Writes entries into one workspace, with object contents read beforehand.
pub(crate) struct Writer<'a> {
    pub(crate) ws: &'a Beneath,
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
        let Some(to) = to else {
            return self.remove(&rel);
        };
        if let Some(from) = from
            && from.oid == to.oid
            && from.kind != Kind::Symlink
            && to.kind != Kind::Symlink
            && matches!(self.ws.lstat(&rel), Ok(Type::File { .. }))
        {
            let parent = self.ws.parent(&rel, Missing::Fail).map_err(text)?;
            return parent
                .set_executable(to.kind == Kind::Executable)
                .map_err(text);
        }
        let content = match self.contents.get(&to.oid) {
            Some(Ok(content)) => content,
            Some(Err(reason)) => return Err(reason.clone()),
            None => return Err(format!("object {} was not read", to.oid)),
        };
        let parent = self
            .ws
            .parent(&rel, Missing::Create)
            .map_err(|e| format!("cannot reach the directory of {}: {e}", rel.display()))?;
        if parent.stat().is_ok_and(|t| t == Type::Dir) {
            // A directory holding nothing a snapshot records (only ignored files) stays.
            parent.remove_dir().map_err(|e| {
                format!("a directory stands there and cannot be removed ({e}); it may hold ignored files")
            })?;
        }
        let tmp = OsString::from(format!(
            ".atto-restore-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let written =
            write_entry(&parent, &tmp, to.kind, content).and_then(|()| parent.rename_over(&tmp));
        written.map_err(|e| {
            let _ = parent.remove_file(&tmp);
            e.to_string()
        })
    }

    /// Removes the file or link at `rel`, then the directories that leaves empty.
    fn remove(&self, rel: &Path) -> Result<(), String> {
        let parent = match self.ws.parent(rel, Missing::Fail) {
            Ok(parent) => parent,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e.to_string()),
        };
        match parent.stat() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Ok(Type::Dir) => {
                return Err("a directory stands where the checkpoint has no file".into());
            }
            _ => {}
        }
        parent.remove_file(parent.name).map_err(text)?;
        for dir in rel.ancestors().skip(1) {
            if dir.as_os_str().is_empty() {
                break;
            }
            let removed = self
                .ws
                .parent(dir, Missing::Fail)
                .and_then(|p| p.remove_dir());
            if removed.is_err() {
                break;
            }
        }
        Ok(())
    }
}

fn text(e: std::io::Error) -> String {
    e.to_string()
}

/// Creates `tmp` in `parent` holding the entry: a symbolic link, or a file whose mode is as
/// git checks files out (the umask decides the rest).
fn write_entry(
    parent: &Parent<'_>,
    tmp: &std::ffi::OsStr,
    kind: Kind,
    content: &[u8],
) -> std::io::Result<()> {
    if kind == Kind::Symlink {
        return parent.symlink(content, tmp);
    }
    let mode = if kind == Kind::Executable {
        0o777
    } else {
        0o666
    };
    parent.create_new(tmp, mode)?.write_all(content)
}
