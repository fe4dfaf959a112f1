//! The file tools (read, write, edit, delete) and what they share: looking up an
//! existing file with a helpful error, and writing a file atomically. Every path is a
//! [`Target`] the kernel resolved beneath the workspace, and every action goes through it.
//!
//! Directory listing and search live in `search`; shell commands in `bash`.

mod delete;
mod edit;
pub(crate) mod matching;
mod read;
mod write;

use std::path::Path;

use rustix::fs::FileType;

pub use delete::DeleteFileTool;
pub use edit::{EditFileTool, preview_edit};
pub use read::ReadFileTool;
pub use write::WriteFileTool;

use crate::beneath::Target;
use crate::{ToolError, paths};

/// The size of the existing regular file `target` names, or the error the model should
/// see: not found (with suggestions), a directory, or not a regular file.
pub(crate) fn existing_file(workspace: &Path, target: &Target) -> Result<u64, ToolError> {
    let rel = target.rel().to_owned();
    match target.stat() {
        Ok(Some(st)) => match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Ok(u64::try_from(st.st_size).unwrap_or(0)),
            FileType::Directory => Err(ToolError::IsDirectory { path: rel }),
            _ => Err(ToolError::Io {
                action: "read",
                path: rel,
                source: std::io::Error::other("not a regular file"),
            }),
        },
        Ok(None) => Err(ToolError::NotFound {
            suggestions: paths::suggest(workspace, target.abs()),
            path: rel,
        }),
        Err(source) => Err(ToolError::Io {
            action: "read",
            path: rel,
            source,
        }),
    }
}

/// Writes `bytes` to `target` atomically, through the directory handle it was resolved
/// to: a temp file in that directory, then a rename. An existing file keeps its
/// permissions. Returns whether the file was created.
pub(crate) fn atomic_write(target: &Target, bytes: &[u8]) -> Result<bool, ToolError> {
    if matches!(target.stat(), Ok(Some(st)) if FileType::from_raw_mode(st.st_mode) == FileType::Directory)
    {
        return Err(ToolError::IsDirectory {
            path: target.rel().to_owned(),
        });
    }
    target
        .write_atomic(bytes, None)
        .map_err(|source| ToolError::Io {
            action: "write",
            path: target.rel().to_owned(),
            source,
        })
}

/// Refuses to act on `target` when the gate judged the call's paths and this is not
/// one of them: the path was resolved again since, and now leads elsewhere.
pub(crate) fn as_judged(judged: Option<&[String]>, target: &Target) -> Result<(), ToolError> {
    match judged {
        Some(judged) if !judged.iter().any(|p| p == target.rel()) => Err(ToolError::Io {
            action: "change",
            path: target.rel().to_owned(),
            source: std::io::Error::other(format!(
                "the path now leads here, not to {} where it was checked (a link changed in \
                 between); nothing was done",
                judged.join(", ")
            )),
        }),
        _ => Ok(()),
    }
}

/// Human-readable byte count ("512 bytes", "3.4 KB").
pub(crate) fn human_bytes(n: u64) -> String {
    const KB: f64 = 1024.0;
    let f = n as f64;
    if n < 1024 {
        format!("{n} bytes")
    } else if f < KB * KB {
        format!("{:.1} KB", f / KB)
    } else {
        format!("{:.1} MB", f / (KB * KB))
    }
}
