//! `apply_patch`: the multi-file edit envelope OpenAI's GPT-5 and Codex models are
//! trained on (`*** Begin Patch` ... `*** End Patch`), applied all or nothing, and which
//! models get it offered (`offers_apply_patch`).
//!
//! Reading the envelope lives in `parse`, computing new file texts in `apply`, writing
//! them with rollback in `write`. This module resolves paths beneath the workspace (the
//! same `beneath::Workspace` as every file tool), reads the files and reports.
//! Deliberately does not decide which models see the tool: the registry's caller does,
//! with `offers_apply_patch`.

mod apply;
mod parse;
mod write;

use std::collections::HashMap;
use std::io::Read as _;

use atto_protocol::{DangerLevel, ToolKind};
use rustix::fs::FileType;
use serde::Deserialize;
use serde_json::json;

pub use apply::{FileChange, PatchPlan, preview_patch};
pub use parse::{PatchChunk, PatchOp, parse_patch, patch_paths};

use crate::beneath::{self, Workspace};
use crate::fs_tools::as_judged;
use crate::support::{blocking, parse_args};
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
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
        crate::names::APPLY_PATCH
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

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn title(&self, _args: &serde_json::Value) -> String {
        "Apply a patch".to_owned()
    }

    /// A patch names its files inside its text.
    fn paths(&self, args: &serde_json::Value) -> Result<Vec<String>, ToolError> {
        patch_paths(
            args.get("input")
                .and_then(serde_json::Value::as_str)
                .unwrap_or(""),
        )
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            let ops = parse_patch(&args.input)?;
            let root = Workspace::for_ctx(ctx)?;
            let judged = ctx.judged_paths.clone();
            blocking(ctx, move || {
                // Every path is resolved by the kernel before anything is read; the files
                // are then read and written through the handles it opened.
                let mut place_of: HashMap<String, beneath::Target> = HashMap::new();
                let ops = ops
                    .into_iter()
                    .map(|op| keyed(op, &root, &mut place_of))
                    .collect::<Result<Vec<_>, _>>()?;
                for place in place_of.values() {
                    as_judged(judged.as_deref(), place)?;
                }
                apply_to_disk(&ops, place_of)
            })
            .await
        })
    }
}

/// `op` with its paths replaced by where the kernel resolved them (workspace-relative),
/// so that `a.txt`, `./a.txt` and `link/../a.txt` are one file; keeps each one's handle.
fn keyed(
    op: PatchOp,
    root: &Workspace,
    place_of: &mut HashMap<String, beneath::Target>,
) -> Result<PatchOp, ToolError> {
    let mut key = |path: String| -> Result<String, ToolError> {
        let place = root.resolve(&path)?;
        let rel = place.rel().to_owned();
        place_of.entry(rel.clone()).or_insert(place);
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
    ops: &[PatchOp],
    mut place_of: HashMap<String, beneath::Target>,
) -> Result<ToolOutput, ToolError> {
    let mut modes: HashMap<String, u32> = HashMap::new();
    let plan = apply::plan(ops, &mut |rel| {
        let place = place_of
            .get(rel)
            .ok_or_else(|| ToolError::Internal(format!("apply_patch lost track of {rel}")))?;
        let (text, mode) = read_current(place)?;
        if let Some(mode) = mode {
            modes.insert(rel.to_owned(), mode);
        }
        Ok(text)
    })?;
    let targets: Vec<Target> = plan
        .files
        .iter()
        .map(|file| {
            let place = place_of.remove(&file.path).ok_or_else(|| {
                ToolError::Internal(format!("apply_patch lost track of {}", file.path))
            })?;
            Ok(Target {
                place,
                before: file.before.clone(),
                after: file.after.clone(),
                mode: modes
                    .get(&file.path)
                    .or_else(|| moved_from(ops, &file.path).and_then(|src| modes.get(src)))
                    .copied(),
            })
        })
        .collect::<Result<_, ToolError>>()?;
    write::commit(&targets, write::write_one)?;

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

/// The text of the file `place` names (`None` when there is none) and its permission
/// bits, read through its resolved handle.
fn read_current(place: &beneath::Target) -> Result<(Option<String>, Option<u32>), ToolError> {
    let rel = place.rel();
    let refuse = |why: String| ToolError::PatchFailed {
        reason: format!("{rel} {why}"),
        stale_file: None,
    };
    let st = match place.stat() {
        Ok(Some(st)) => st,
        Ok(None) => return Ok((None, None)),
        Err(e) => return Err(refuse(format!("could not be read: {e}"))),
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => {
            return Err(refuse(
                "is a directory; a patch adds, updates and deletes files".into(),
            ));
        }
        _ => {
            return Err(refuse(
                "is not a regular file (a device, socket or pipe); a patch cannot change it".into(),
            ));
        }
    }
    let mut bytes = Vec::new();
    place
        .open_read()
        .and_then(|mut file| file.read_to_end(&mut bytes))
        .map_err(|e| refuse(format!("could not be read: {e}")))?;
    match String::from_utf8(bytes) {
        Ok(text) if !text[..text.len().min(8 * 1024)].contains('\0') => {
            Ok((Some(text), Some(st.st_mode & 0o7777)))
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
