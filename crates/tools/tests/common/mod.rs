//! Shared helpers for the integration tests: a temp workspace and a way to call a tool.

#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the helpers"
)]

use std::path::{Path, PathBuf};

use atto_tools::{ToolContext, ToolError, ToolOutput, ToolRegistry};

/// A temporary workspace; removed when dropped.
pub struct Ws {
    _dir: tempfile::TempDir,
    pub ctx: ToolContext,
}

impl Ws {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        Self {
            _dir: dir,
            ctx: ToolContext::new(root),
        }
    }

    pub fn root(&self) -> &Path {
        &self.ctx.workspace
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// Writes `content` to `rel`, creating parent directories.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    /// Calls the built-in tool `name` with `args`.
    pub async fn call(&self, name: &str, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        let tool = ToolRegistry::builtin().get(name).unwrap();
        tool.run(args, &self.ctx).await
    }

    /// Calls a tool that must succeed, returning its text.
    pub async fn ok(&self, name: &str, args: serde_json::Value) -> String {
        match self.call(name, args).await {
            Ok(out) => out.content,
            Err(e) => panic!("{name} failed: {e}"),
        }
    }

    /// Calls a tool that must fail, returning the error.
    pub async fn err(&self, name: &str, args: serde_json::Value) -> ToolError {
        match self.call(name, args).await {
            Ok(out) => panic!("{name} unexpectedly succeeded: {}", out.content),
            Err(e) => e,
        }
    }
}
