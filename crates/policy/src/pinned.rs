//! A workspace file a trusted program runs (a launch template's script, an MCP server's),
//! pinned to the content the user trusted: workers and servers run outside any sandbox,
//! and the workspace is where sandboxed commands write. Checked at every start, not once
//! at trust, so a file rewritten between two starts is not run.

use std::path::PathBuf;

/// A file and the content it must still have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The file (canonical).
    pub path: PathBuf,
    /// Its trusted content.
    pub content: Vec<u8>,
}

impl Pinned {
    /// Why nothing may start while the file no longer has the trusted content (a removed
    /// file has none): `runner` names what runs it, `not_started` what was held back.
    pub fn changed(&self, runner: &str, not_started: &str) -> Option<String> {
        if std::fs::read(&self.path).ok().as_deref() == Some(self.content.as_slice()) {
            return None;
        }
        Some(format!(
            "{} changed since it was trusted ({runner} runs it); {not_started}. Read it, \
             then `atto trust {}`",
            self.path.display(),
            self.path.display()
        ))
    }
}
