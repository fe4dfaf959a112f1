//! `codebase_overview`: a ranked map of the repository — source files with their top-level
//! symbols (Rust, Python, TypeScript/JavaScript, Go, read with tree-sitter), the public
//! surface the code declares first, then the files its references resolve to most — cut
//! to a byte budget, optionally raised toward a focus (words or paths). Read-only.
//!
//! Owns the tool; the incremental index (`index`), the parsing (`parse`), the public
//! surface (`surface`), the reference graph (`graph`) and the ranking (`rank`) live below. The index is cached in memory and under atto's data dir, keyed by
//! each file's size and modification time, so a second call on an unchanged tree parses
//! nothing.

mod graph;
mod index;
mod parse;
mod rank;
mod surface;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use atto_protocol::DangerLevel;
use serde::Deserialize;
use serde_json::json;

use crate::support::{blocking, lenient_u64, parse_args};
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, paths};

/// The map's default size in bytes.
pub const DEFAULT_MAX_BYTES: usize = 8_000;

/// The sizes a call may ask for.
const MIN_BYTES: usize = 1_000;
const MAX_BYTES: usize = 60_000;

/// The ranked repository map.
#[derive(Debug, Default)]
pub struct CodebaseOverviewTool {
    /// Where the index is kept between processes; `None` keeps it in memory only.
    pub cache_dir: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Args {
    path: Option<String>,
    #[serde(default, deserialize_with = "lenient_u64")]
    max_bytes: Option<u64>,
    focus: Option<String>,
}

/// A map with what it was made from: the index, the scope, the budget and the focus.
type LastMap = (Arc<index::Index>, String, usize, String, String);

/// The map of the files under `scope` (relative, `""` for all) of `root`, at most
/// `max_bytes` long, raised toward the files and names `focus` mentions (free text, may be
/// empty): the tool's work, callable without a runtime (benchmarks).
pub fn overview(
    root: &std::path::Path,
    scope: &str,
    max_bytes: usize,
    focus: &str,
    cache_dir: Option<&std::path::Path>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<String, ToolError> {
    let (index, _) = index::build(root, cache_dir, cancel)?;
    // The last map, kept with the index it was made from (held, so never confused with a
    // later index at the same address): an unchanged tree asked the same way is not ranked
    // again.
    static LAST: Mutex<Option<LastMap>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((i, s, b, f, map)) = last.as_ref()
        && Arc::ptr_eq(i, &index)
        && s == scope
        && *b == max_bytes
        && f == focus
    {
        return Ok(map.clone());
    }
    let ready = prepared(&index, scope);
    let map = rank::render_prepared(&index, &ready, scope, max_bytes, &rank::Focus::of(focus));
    *last = Some((
        index,
        scope.to_owned(),
        max_bytes,
        focus.to_owned(),
        map.clone(),
    ));
    Ok(map)
}

/// The ranking inputs of `scope` of `index`, made once per index and scope: a call with a
/// new focus on an unchanged tree reruns PageRank, not the graph.
fn prepared(index: &Arc<index::Index>, scope: &str) -> Arc<rank::Prepared> {
    type Kept = (Arc<index::Index>, String, Arc<rank::Prepared>);
    static KEPT: Mutex<Option<Kept>> = Mutex::new(None);
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((i, s, p)) = kept.as_ref()
        && Arc::ptr_eq(i, index)
        && s == scope
    {
        return Arc::clone(p);
    }
    let ready = Arc::new(rank::prepare(index, scope));
    *kept = Some((Arc::clone(index), scope.to_owned(), Arc::clone(&ready)));
    ready
}

/// Entries a session-start look at the tree visits before it gives up on a map.
const START_WALK_LIMIT: usize = 2_000;

/// The map offered with a session's first prompt, for a repository small enough: `None`
/// when it has no source file or more than `max_files` of them (counted by a walk that
/// stops early, so a large tree costs little).
///
/// It sits before the session's first request, so it costs one walk and the parse of
/// those few files, on this thread, and writes nothing; the index stays in memory for the
/// tool's first call. `focus` (the first prompt, its `@` files) raises what it names.
pub fn start_map(
    root: &std::path::Path,
    max_files: usize,
    max_bytes: usize,
    focus: &str,
) -> Option<String> {
    let mut found: Vec<index::Found> = Vec::new();
    for (n, entry) in crate::search::walk(root, None).enumerate() {
        if n >= START_WALK_LIMIT {
            return None;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = paths::relative(root, entry.path());
        let Some(lang) = parse::Lang::of(&rel) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        if meta.len() > parse::MAX_FILE_BYTES || rel.contains(['\t', '\n']) {
            continue;
        }
        if found.len() == max_files {
            return None;
        }
        let (size, mtime_ns) = index::stat(&meta);
        found.push((rel, entry.into_path(), lang, size, mtime_ns));
    }
    if found.is_empty() {
        return None;
    }
    let index = index::of_files(root, found);
    let ready = rank::prepare(&index, "");
    Some(rank::render_prepared(
        &index,
        &ready,
        "",
        max_bytes,
        &rank::Focus::of(focus),
    ))
}

impl Tool for CodebaseOverviewTool {
    fn name(&self) -> &'static str {
        crate::names::CODEBASE_OVERVIEW
    }

    fn description(&self) -> &'static str {
        "Map of the repository's source files and top-level symbols: its public API and most \
         referenced files first; give a focus (words or paths) to raise one area."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory (default: workspace root)"},
                "max_bytes": {"type": "integer", "description": "Map size (default 8000)"},
                "focus": {"type": "string", "description": "Words or paths of the area to raise (e.g. the task's files or identifiers)"}
            }
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }

    fn mutates(&self, _args: &serde_json::Value) -> bool {
        false
    }

    fn read_only(&self, _args: &serde_json::Value) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            let dir = crate::search::resolve_existing(ctx, args.path.as_deref())?;
            let ws = ctx.workspace.clone();
            let max_bytes = args.max_bytes.map_or(DEFAULT_MAX_BYTES, |n| {
                usize::try_from(n)
                    .unwrap_or(MAX_BYTES)
                    .clamp(MIN_BYTES, MAX_BYTES)
            });
            // The model's focus first, then what the session is working on (the files it
            // changed, the step's files): both raise what they name.
            let focus = match (args.focus, ctx.focus.as_str()) {
                (Some(asked), "") => asked,
                (Some(asked), session) => format!("{asked}\n{session}"),
                (None, session) => session.to_owned(),
            };
            let cancel = ctx.cancel.clone();
            let cache_dir = self.cache_dir.clone();
            blocking(ctx, move || {
                if !dir.is_dir() {
                    return Err(ToolError::NotADirectory {
                        path: paths::relative(&ws, &dir),
                    });
                }
                // The whole workspace is indexed once; a path narrows the map, not the index.
                let (root, scope) = match dir.strip_prefix(&ws) {
                    Ok(rest) if !rest.as_os_str().is_empty() => {
                        (ws.clone(), format!("{}/", rest.display()))
                    }
                    Ok(_) => (ws.clone(), String::new()),
                    Err(_) => (dir.clone(), String::new()),
                };
                overview(
                    &root,
                    &scope,
                    max_bytes,
                    &focus,
                    cache_dir.as_deref(),
                    &cancel,
                )
                .map(ToolOutput::text)
            })
            .await
        })
    }
}
