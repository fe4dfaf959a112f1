//! `write_file`: create or overwrite a whole file, atomically, creating parent
//! directories. Partial edits belong to `edit_file`.

use atto_protocol::{DangerLevel, ToolKind};
use serde::Deserialize;
use serde_json::json;

use super::{as_judged, atomic_write, human_bytes};
use crate::beneath::{Target, Workspace};
use crate::support::{arg, blocking, parse_args, target, title_arg};
use crate::{BoxFuture, FileEffect, Tool, ToolContext, ToolError, ToolOutput};

/// Creates or overwrites a file.
#[derive(Debug, Default)]
pub struct WriteFileTool;

#[derive(Deserialize)]
struct Args {
    path: String,
    content: String,
}

impl Tool for WriteFileTool {
    fn name(&self) -> &'static str {
        crate::names::WRITE_FILE
    }

    fn description(&self) -> &'static str {
        "Create or overwrite a file with the given content; parent directories are created."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace"},
                "content": {"type": "string", "description": "Full new content"}
            },
            "required": ["path", "content"]
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Low
    }

    fn mutates(&self, _args: &serde_json::Value) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn file_effect(&self) -> Option<FileEffect> {
        Some(FileEffect::Write)
    }

    fn target(&self, args: &serde_json::Value) -> Option<String> {
        target(args, "path")
    }

    fn title(&self, args: &serde_json::Value) -> String {
        format!("Write {}", title_arg(args, "path"))
    }

    fn subject(&self, args: &serde_json::Value) -> String {
        let content = arg(args, "content");
        format!(
            "write {} ({} bytes):\n{}",
            arg(args, "path"),
            content.len(),
            content
        )
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
                write(&target, &args.content)
            })
            .await
        })
    }
}

fn write(target: &Target, content: &str) -> Result<ToolOutput, ToolError> {
    let rel = target.rel().to_owned();
    let old_size = target
        .stat()
        .ok()
        .flatten()
        .map(|st| u64::try_from(st.st_size).unwrap_or(0));
    let created = atomic_write(target, content.as_bytes())?;
    let size = human_bytes(content.len() as u64);
    let lines = content.lines().count();
    let summary = match (created, old_size) {
        (true, _) | (false, None) => format!("created {rel} ({size}, {lines} lines)"),
        (false, Some(old)) => format!(
            "overwrote {rel} ({size}, {lines} lines; was {})",
            human_bytes(old)
        ),
    };
    Ok(ToolOutput {
        content: summary,
        changed_paths: vec![rel],
        ..ToolOutput::default()
    })
}
