//! `delete_file`: remove one file. Directories are refused; removing a tree is a shell
//! command the policy can see for what it is.

use std::path::Path;

use atto_protocol::{DangerLevel, ToolKind};
use serde::Deserialize;
use serde_json::json;

use super::{as_judged, existing_file, human_bytes};
use crate::beneath::{Target, Workspace};
use crate::support::{arg, blocking, parse_args, target, title_arg};
use crate::{BoxFuture, FileEffect, Tool, ToolContext, ToolError, ToolOutput};

/// Deletes a file.
#[derive(Debug, Default)]
pub struct DeleteFileTool;

#[derive(Deserialize)]
struct Args {
    path: String,
}

impl Tool for DeleteFileTool {
    fn name(&self) -> &'static str {
        crate::names::DELETE_FILE
    }

    fn description(&self) -> &'static str {
        "Delete a file (not a directory)."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace"}
            },
            "required": ["path"]
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Low
    }

    fn mutates(&self, _args: &serde_json::Value) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Delete
    }

    fn file_effect(&self) -> Option<FileEffect> {
        Some(FileEffect::Delete)
    }

    fn target(&self, args: &serde_json::Value) -> Option<String> {
        target(args, "path")
    }

    fn title(&self, args: &serde_json::Value) -> String {
        format!("Delete {}", title_arg(args, "path"))
    }

    fn subject(&self, args: &serde_json::Value) -> String {
        format!("delete {}", arg(args, "path"))
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            let root = Workspace::for_ctx(ctx)?;
            let judged = ctx.judged_paths.clone();
            blocking(ctx, move || {
                let target = root.resolve(&args.path)?;
                as_judged(judged.as_deref(), &target)?;
                delete(root.path(), &target)
            })
            .await
        })
    }
}

fn delete(ws: &Path, target: &Target) -> Result<ToolOutput, ToolError> {
    let rel = target.rel().to_owned();
    let size = existing_file(ws, target)?;
    target.remove().map_err(|source| ToolError::Io {
        action: "delete",
        path: rel.clone(),
        source,
    })?;
    Ok(ToolOutput {
        content: format!("deleted {rel} ({})", human_bytes(size)),
        changed_paths: vec![rel],
        ..ToolOutput::default()
    })
}
