//! `grep`: regex search over files, as `path:line:text`, skipping binary and ignored
//! files. Uses ripgrep's own matcher and searcher crates.

use std::path::Path;

use atto_protocol::{DangerLevel, ToolKind};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks};
use serde::Deserialize;
use serde_json::json;

use super::{PathGlob, for_each_file, resolve_existing};
use crate::beneath::Workspace;
use crate::support::{blocking, lenient_bool, parse_args, target, title_arg, truncate_line};
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, paths};

/// Matches shown before stopping.
const MAX_MATCHES: usize = 200;
/// Characters of a matching line shown.
const MAX_LINE_CHARS: usize = 300;

/// Searches file contents by regex.
#[derive(Debug, Default)]
pub struct GrepTool;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    case_insensitive: Option<bool>,
}

impl Tool for GrepTool {
    fn name(&self) -> &'static str {
        crate::names::GREP
    }

    fn description(&self) -> &'static str {
        "Search file contents with a regex (Rust syntax); prints path:line:text. Skips gitignored and binary files."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression"},
                "path": {"type": "string", "description": "File or directory (default: workspace root)"},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.rs"},
                "case_insensitive": {"type": "boolean"}
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
        format!("Search `{}`", title_arg(args, "pattern"))
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            let matcher = RegexMatcherBuilder::new()
                .case_insensitive(args.case_insensitive.unwrap_or(false))
                .line_terminator(Some(b'\n'))
                .build(&args.pattern)
                .map_err(|e| {
                    ToolError::InvalidArguments(format!("invalid regex {:?}: {e}", args.pattern))
                })?;
            let filter = args.glob.as_deref().map(PathGlob::new).transpose()?;
            let root = resolve_existing(ctx, args.path.as_deref())?;
            let ctx_owned = ctx.clone();
            blocking(ctx, move || {
                let ctx = ctx_owned;
                let ws = &ctx.workspace;
                // The walk finds names; each file is opened beneath the workspace handle,
                // so a directory swapped for a link meanwhile cannot lead a read out.
                let beneath = Workspace::for_ctx(&ctx)?;
                let mut searcher = SearcherBuilder::new()
                    .binary_detection(BinaryDetection::quit(0))
                    .line_number(true)
                    .build();
                let mut out = Vec::new();
                let within = filter.as_ref().and_then(PathGlob::literal_dir);
                for_each_file(&ctx, &root, within, |abs: &Path, rel: &Path| {
                    if filter.as_ref().is_some_and(|g| !g.is_match(rel)) {
                        return true;
                    }
                    let shown = paths::relative(ws, abs);
                    // Unreadable files are skipped, as ripgrep does.
                    let Ok(file) = beneath.open_file(abs) else {
                        return true;
                    };
                    let _ = searcher.search_file(
                        &matcher,
                        &file,
                        sinks::Lossy(|line, text| {
                            let text = text.trim_end_matches(['\n', '\r']);
                            out.push(format!(
                                "{shown}:{line}:{}",
                                truncate_line(text, MAX_LINE_CHARS)
                            ));
                            Ok(out.len() <= MAX_MATCHES)
                        }),
                    );
                    out.len() <= MAX_MATCHES
                })?;
                if out.is_empty() {
                    return Ok(ToolOutput::text(format!("no matches for {}", args.pattern)));
                }
                let capped = out.len() > MAX_MATCHES;
                out.truncate(MAX_MATCHES);
                let mut text = out.join("\n");
                if capped {
                    text.push_str(&format!(
                        "\n(stopped after {MAX_MATCHES} matches; narrow the pattern, path or glob)"
                    ));
                }
                Ok(ToolOutput::text(text))
            })
            .await
        })
    }
}
