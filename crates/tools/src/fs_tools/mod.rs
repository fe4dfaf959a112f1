//! The file tools (read, write, edit, delete) and what they share: looking up an
//! existing file with a helpful error, and writing a file atomically.
//!
//! Directory listing and search live in `search`; shell commands in `bash`.

mod delete;
mod edit;
mod matching;
mod read;
mod write;

use std::fs;
use std::io::Write as _;
use std::path::Path;

pub use delete::DeleteFileTool;
pub use edit::{EditFileTool, preview_edit};
pub use read::ReadFileTool;
pub use write::WriteFileTool;

use crate::{ToolError, paths};

/// Metadata of the existing regular file at `abs`, or the error the model should see:
/// not found (with suggestions) or a directory.
pub(crate) fn existing_file(workspace: &Path, abs: &Path) -> Result<fs::Metadata, ToolError> {
    let rel = paths::relative(workspace, abs);
    match fs::metadata(abs) {
        Ok(meta) if meta.is_dir() => Err(ToolError::IsDirectory { path: rel }),
        Ok(meta) => Ok(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ToolError::NotFound {
            suggestions: paths::suggest(workspace, abs),
            path: rel,
        }),
        Err(source) => Err(ToolError::Io {
            action: "read",
            path: rel,
            source,
        }),
    }
}

/// Writes `bytes` to `abs` atomically: a temp file in the same directory, then a rename.
/// An existing file keeps its permissions. Returns whether the file was created.
pub(crate) fn atomic_write(workspace: &Path, abs: &Path, bytes: &[u8]) -> Result<bool, ToolError> {
    let rel = paths::relative(workspace, abs);
    let io_err = |action: &'static str| {
        let rel = rel.clone();
        move |source| ToolError::Io {
            action,
            path: rel,
            source,
        }
    };
    let parent = abs
        .parent()
        .ok_or_else(|| ToolError::InvalidArguments(format!("{rel} has no parent directory")))?;
    let existing = match fs::metadata(abs) {
        Ok(meta) if meta.is_dir() => return Err(ToolError::IsDirectory { path: rel }),
        Ok(meta) => Some(meta.permissions()),
        Err(_) => None,
    };
    fs::create_dir_all(parent).map_err(io_err("create the parent directory of"))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".atto-write-")
        .tempfile_in(parent)
        .map_err(io_err("create a temporary file next to"))?;
    tmp.write_all(bytes).map_err(io_err("write"))?;
    tmp.as_file().sync_all().map_err(io_err("write"))?;
    let created = existing.is_none();
    if let Some(perms) = existing {
        fs::set_permissions(tmp.path(), perms).map_err(io_err("set permissions of"))?;
    }
    tmp.persist(abs).map_err(|e| io_err("replace")(e.error))?;
    Ok(created)
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
