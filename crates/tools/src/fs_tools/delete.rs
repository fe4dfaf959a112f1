//! `delete_file`: remove one file. Directories are refused; removing a tree is a shell
//! command the policy can see for what it is.

use std::path::Path;

use atto_protocol::DangerLevel;
use serde::Deserialize;
use serde_json::json;

use super::{existing_file, human_bytes};
use crate::support::{blocking, parse_args};
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, paths};

/// Deletes a file.
#[derive(Debug, Default)]
pub struct DeleteFileTool;

#[derive(Deserialize)]
struct Args {
    path: String,
}

impl Tool for DeleteFileTool {
    fn name(&self) -> &'static str {
        "delete_file"
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

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            let abs = paths::resolve_for(ctx, &args.path)?;
            let ws = ctx.workspace.clone();
            blocking(ctx, move || delete(&ws, &abs)).await
        })
    }
}

fn delete(ws: &Path, abs: &Path) -> Result<ToolOutput, ToolError> {
    let rel = paths::relative(ws, abs);
    if abs == ws {
        return Err(ToolError::IsDirectory { path: rel });
    }
    let size = existing_file(ws, abs)?.len();
    std::fs::remove_file(abs).map_err(|source| ToolError::Io {
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
