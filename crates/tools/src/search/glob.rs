//! `glob`: files whose paths match a glob pattern, sorted by path.

use atto_protocol::{DangerLevel, ToolKind};
use serde::Deserialize;
use serde_json::json;

use super::{PathGlob, for_each_file, resolve_existing};
use crate::support::{blocking, parse_args, target, title_arg};
use std::path::Path;

use crate::beneath::Workspace;
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, paths};

/// Paths shown before stopping.
const MAX_RESULTS: usize = 500;

/// Finds files by glob pattern.
#[derive(Debug, Default)]
pub struct GlobTool;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    path: Option<String>,
}

impl Tool for GlobTool {
    fn name(&self) -> &'static str {
        crate::names::GLOB
    }

    fn description(&self) -> &'static str {
        "Find files by glob (e.g. src/**/*.rs); a pattern without / matches file names at any depth."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern"},
                "path": {"type": "string", "description": "Directory to search (default: workspace root)"}
            },
            "required": ["pattern"]
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
        target(args, "pattern")
    }

    fn title(&self, args: &serde_json::Value) -> String {
        format!("Find `{}`", title_arg(args, "pattern"))
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            let glob = PathGlob::new(&args.pattern)?;
            let root = resolve_existing(ctx, args.path.as_deref())?;
            let ctx_owned = ctx.clone();
            blocking(ctx, move || {
                let ctx = ctx_owned;
                let ws = &ctx.workspace;
                let mut found = Vec::new();
                for_each_file(&ctx, &root, glob.literal_dir(), |abs, rel| {
                    if glob.is_match(rel) {
                        found.push(paths::relative(ws, abs));
                    }
                    true
                })?;
                found.sort();
                let total = found.len();
                // The walk reads directories by name: a name is shown only if it is beneath
                // the workspace now (see `Workspace::has`).
                let beneath = Workspace::for_ctx(&ctx)?;
                let shown: Vec<String> = found
                    .into_iter()
                    .filter(|rel| beneath.has(Path::new(rel)))
                    .take(MAX_RESULTS)
                    .collect();
                if shown.is_empty() {
                    return Ok(ToolOutput::text(format!(
                        "no files match {} under {}",
                        args.pattern,
                        paths::relative(ws, &root)
                    )));
                }
                let mut out = shown.join("\n");
                if total > MAX_RESULTS {
                    out.push_str(&format!(
                        "\n({total} files match; showing the first {MAX_RESULTS}. Narrow the pattern or path)"
                    ));
                }
                Ok(ToolOutput::text(out))
            })
            .await
        })
    }
}
