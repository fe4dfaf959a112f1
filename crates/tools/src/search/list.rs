//! `list_files`: a directory tree two levels deep, directories suffixed with `/`.

use atto_protocol::{DangerLevel, ToolKind};
use serde::Deserialize;
use serde_json::json;

use super::{CANCEL_CHECK_EVERY, resolve_existing, walk};
use crate::beneath::Workspace;
use crate::support::{blocking, parse_args, target, title_arg};
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, paths};

/// Entries listed before stopping.
const MAX_ENTRIES: usize = 500;
/// Levels below the listed directory.
const DEPTH: usize = 2;

/// Lists a directory tree.
#[derive(Debug, Default)]
pub struct ListFilesTool;

#[derive(Deserialize)]
struct Args {
    path: Option<String>,
}

impl Tool for ListFilesTool {
    fn name(&self) -> &'static str {
        crate::names::LIST_FILES
    }

    fn description(&self) -> &'static str {
        "List a directory two levels deep (gitignored files skipped); directories end with /."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory (default: workspace root)"}
            }
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }

    fn mutates(&self, _args: &serde_json::Value) -> bool {
        false
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn read_only(&self, _args: &serde_json::Value) -> bool {
        true
    }

    fn target(&self, args: &serde_json::Value) -> Option<String> {
        target(args, "path")
    }

    fn title(&self, args: &serde_json::Value) -> String {
        match title_arg(args, "path").as_str() {
            "" => "List .".to_owned(),
            path => format!("List {path}"),
        }
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            let root = resolve_existing(ctx, args.path.as_deref())?;
            let ws = ctx.workspace.clone();
            let cancel = ctx.cancel.clone();
            // The walk reads directories by name: a name is shown only if it is beneath the
            // workspace now (see `Workspace::has`).
            let beneath = Workspace::for_ctx(ctx)?;
            blocking(ctx, move || {
                let rel_root = paths::relative(&ws, &root);
                if !root.is_dir() {
                    return Err(ToolError::NotADirectory { path: rel_root });
                }
                let mut lines = Vec::new();
                let mut capped = false;
                for (n, entry) in walk(&root, Some(DEPTH)).enumerate() {
                    if n % CANCEL_CHECK_EVERY == 0 && cancel.is_cancelled() {
                        return Err(ToolError::Cancelled);
                    }
                    let Ok(entry) = entry else { continue };
                    if entry.depth() == 0 {
                        continue;
                    }
                    if lines.len() == MAX_ENTRIES {
                        capped = true;
                        break;
                    }
                    if !beneath.has(entry.path()) {
                        continue;
                    }
                    let mut rel = paths::relative(&ws, entry.path());
                    if entry.file_type().is_some_and(|t| t.is_dir()) {
                        rel.push('/');
                    }
                    lines.push(rel);
                }
                if lines.is_empty() {
                    return Ok(ToolOutput::text(format!("{rel_root}/ is empty")));
                }
                let mut out = lines.join("\n");
                if capped {
                    out.push_str(&format!(
                        "\n(stopped after {MAX_ENTRIES} entries; list a subdirectory or use glob to see more)"
                    ));
                }
                Ok(ToolOutput::text(out))
            })
            .await
        })
    }
}
