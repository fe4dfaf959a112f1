//! `apply_patch`: the multi-file edit envelope OpenAI's GPT-5 and Codex models are
//! trained on (`*** Begin Patch` ... `*** End Patch`), applied all or nothing, and which
//! models get it offered (`offers_apply_patch`).
//!
//! Reading the envelope lives in `parse`, computing new file texts in `apply`, writing
//! them with rollback in `write`. This module resolves paths at the workspace boundary
//! (the same `paths::resolve_for` as every file tool), reads the files and reports.
//! Deliberately does not decide which models see the tool: the registry's caller does,
//! with `offers_apply_patch`.

mod apply;
mod parse;
mod write;

use std::collections::HashMap;
use std::fs::{self, Permissions};
use std::path::{Path, PathBuf};

use atto_protocol::DangerLevel;
use serde::Deserialize;
use serde_json::json;

pub use apply::{FileChange, PatchPlan, preview_patch};
pub use parse::{PatchChunk, PatchOp, parse_patch, patch_paths};

use crate::support::{blocking, parse_args};
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, paths};
use write::Target;

/// Applies a patch in the `apply_patch` envelope to several files at once.
#[derive(Debug, Default)]
pub struct ApplyPatchTool;

#[derive(Deserialize)]
struct Args {
    input: String,
}

/// Whether a model is trained on `apply_patch` and should be offered it: OpenAI's GPT-5
/// and Codex families (`gpt-5`, `gpt-5.1-codex`, `codex-mini-latest`), whatever the case
/// and a provider prefix (`openai/gpt-5`) or tag (`gpt-5:latest`).
pub fn offers_apply_patch(model_id: &str) -> bool {
    let id = model_id.trim().to_ascii_lowercase();
    let name = id.rsplit('/').next().unwrap_or(&id);
    let name = name.split(':').next().unwrap_or(name);
    name.starts_with("gpt-5") || name.starts_with("codex")
}

impl Tool for ApplyPatchTool {
    fn name(&self) -> &'static str {
        "apply_patch"
    }

    fn description(&self) -> &'static str {
        "Add, delete, update or move files with a patch (*** Begin Patch ... *** End Patch). \
         Every file changes or none does."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "input": {"type": "string", "description": "The whole patch, from *** Begin Patch to *** End Patch"}
            },
            "required": ["input"]
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
            let ops = parse_patch(&args.input)?;
            // Every path is checked at the boundary before anything is read.
            let mut abs_of: HashMap<String, PathBuf> = HashMap::new();
            let ops = ops
                .into_iter()
                .map(|op| keyed(op, ctx, &mut abs_of))
                .collect::<Result<Vec<_>, _>>()?;
            let ws = ctx.workspace.clone();
            blocking(ctx, move || apply_to_disk(&ws, &ops, &abs_of)).await
        })
    }
}

/// `op` with its paths replaced by their workspace-relative form, so that `a.txt` and
/// `./a.txt` are one file; records where each lives on disk.
fn keyed(
    op: PatchOp,
    ctx: &ToolContext,
    abs_of: &mut HashMap<String, PathBuf>,
) -> Result<PatchOp, ToolError> {
    let mut key = |path: String| -> Result<String, ToolError> {
        let abs = paths::resolve_for(ctx, &path)?;
        let rel = paths::relative(&ctx.workspace, &abs);
        abs_of.insert(rel.clone(), abs);
        Ok(rel)
    };
    Ok(match op {
        PatchOp::Add { path, content } => PatchOp::Add {
            path: key(path)?,
            content,
        },
        PatchOp::Delete { path } => PatchOp::Delete { path: key(path)? },
        PatchOp::Update {
            path,
            move_to,
            chunks,
        } => PatchOp::Update {
            path: key(path)?,
            move_to: move_to.map(&mut key).transpose()?,
            chunks,
        },
    })
}

fn apply_to_disk(
    ws: &Path,
    ops: &[PatchOp],
    abs_of: &HashMap<String, PathBuf>,
) -> Result<ToolOutput, ToolError> {
    let mut modes: HashMap<String, Permissions> = HashMap::new();
    let plan = apply::plan(ops, &mut |rel| {
        let abs = abs_of
            .get(rel)
            .ok_or_else(|| ToolError::Internal(format!("apply_patch lost track of {rel}")))?;
        let (text, mode) = read_current(rel, abs)?;
        if let Some(mode) = mode {
            modes.insert(rel.to_owned(), mode);
        }
        Ok(text)
    })?;
    let targets: Vec<Target> = plan
        .files
        .iter()
        .map(|file| Target {
            abs: abs_of
                .get(&file.path)
                .cloned()
                .unwrap_or_else(|| ws.join(&file.path)),
            before: file.before.clone(),
            after: file.after.clone(),
            mode: modes
                .get(&file.path)
                .or_else(|| moved_from(ops, &file.path).and_then(|src| modes.get(src)))
                .cloned(),
        })
        .collect();
    write::commit(ws, &targets, write::write_one)?;

    let mut content = String::from("Success. Updated the following files:");
    for line in &plan.summary {
        content.push('\n');
        content.push_str(line);
    }
    Ok(ToolOutput {
        content,
        changed_paths: plan
            .files
            .iter()
            .filter(|f| f.before != f.after)
            .map(|f| f.path.clone())
            .collect(),
        ..ToolOutput::default()
    })
}

/// The file a move in `ops` brings to `dest`.
fn moved_from<'a>(ops: &'a [PatchOp], dest: &str) -> Option<&'a str> {
    ops.iter().find_map(|op| match op {
        PatchOp::Update {
            path,
            move_to: Some(to),
            ..
        } if to == dest => Some(path.as_str()),
        _ => None,
    })
}

/// The text of the file at `abs` (`None` when there is none) and its permissions.
fn read_current(rel: &str, abs: &Path) -> Result<(Option<String>, Option<Permissions>), ToolError> {
    let refuse = |why: String| ToolError::PatchFailed {
        reason: format!("{rel} {why}"),
        stale_file: None,
    };
    let meta = match fs::metadata(abs) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, None)),
        Err(e) => return Err(refuse(format!("could not be read: {e}"))),
    };
    if meta.is_dir() {
        return Err(refuse(
            "is a directory; a patch adds, updates and deletes files".into(),
        ));
    }
    if !meta.is_file() {
        return Err(refuse(
            "is not a regular file (a device, socket or pipe); a patch cannot change it".into(),
        ));
    }
    let bytes = fs::read(abs).map_err(|e| refuse(format!("could not be read: {e}")))?;
    match String::from_utf8(bytes) {
        Ok(text) if !text[..text.len().min(8 * 1024)].contains('\0') => {
            Ok((Some(text), Some(meta.permissions())))
        }
        _ => Err(refuse(
            "is not UTF-8 text, so a patch cannot change it; use bash for binary files".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::offers_apply_patch;

    #[test]
    fn which_models_are_offered_apply_patch() {
        let cases = [
            ("gpt-5", true),
            ("gpt-5-mini", true),
            ("gpt-5.1-codex", true),
            ("GPT-5", true),
            ("openai/gpt-5", true),
            ("openrouter/openai/gpt-5.1", true),
            ("codex-mini-latest", true),
            ("gpt-5:latest", true),
            ("gpt-4.1", false),
            ("gpt-4o", false),
            ("o3", false),
            ("claude-sonnet-4-5", false),
            ("anthropic/claude-opus-4", false),
            ("qwen3-coder", false),
            ("my-gpt-5-finetune", false),
            ("", false),
        ];
        for (id, offered) in cases {
            assert_eq!(offers_apply_patch(id), offered, "{id}");
        }
    }
}
