//! `edit_file`: replace text in an existing file, one edit or an ordered list applied
//! all-or-nothing, answering with a short summary and a small unified diff.
//!
//! Matching rules live in `matching`; this module owns argument shapes, line-ending
//! handling, the atomic write and the report.

use std::path::Path;

use atto_protocol::{DangerLevel, ToolKind};
use serde::Deserialize;
use serde_json::json;

use super::matching;
use super::{as_judged, atomic_write, existing_file, human_bytes};
use crate::beneath::{Target, Workspace};
use crate::support::{arg, blocking, lenient_bool, parse_args, target, title_arg};
use crate::{BoxFuture, FileEffect, Tool, ToolContext, ToolError, ToolOutput};

/// Diff lines shown in the output.
const MAX_DIFF_LINES: usize = 60;

/// Replaces text in a file.
#[derive(Debug, Default)]
pub struct EditFileTool;

#[derive(Deserialize)]
struct Args {
    path: String,
    old_string: Option<String>,
    new_string: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    replace_all: Option<bool>,
    edits: Option<Vec<Edit>>,
}

#[derive(Deserialize)]
struct Edit {
    old_string: String,
    new_string: String,
    #[serde(default, deserialize_with = "lenient_bool")]
    replace_all: Option<bool>,
}

impl Args {
    fn into_edits(self) -> Result<(String, Vec<Edit>), ToolError> {
        let single = self.old_string.is_some() || self.new_string.is_some();
        let edits = match (self.edits, self.old_string, self.new_string) {
            (Some(list), _, _) if single && !list.is_empty() => {
                return Err(ToolError::InvalidArguments(
                    "give either old_string/new_string or edits, not both".into(),
                ));
            }
            (Some(list), _, _) if !list.is_empty() => list,
            (_, Some(old_string), Some(new_string)) => vec![Edit {
                old_string,
                new_string,
                replace_all: self.replace_all,
            }],
            (_, None, _) => {
                return Err(ToolError::InvalidArguments(
                    "missing field `old_string` (or give a non-empty `edits` list)".into(),
                ));
            }
            (_, Some(_), None) => {
                return Err(ToolError::InvalidArguments(
                    "missing field `new_string` (use \"\" to delete the text)".into(),
                ));
            }
        };
        Ok((self.path, edits))
    }
}

impl Tool for EditFileTool {
    fn name(&self) -> &'static str {
        crate::names::EDIT_FILE
    }

    fn description(&self) -> &'static str {
        "Replace exact text in a file. old_string must match one place unless replace_all; \
         `edits` applies several replacements in order, all or nothing."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace"},
                "old_string": {"type": "string", "description": "Exact text to replace; empty creates a new (or fills an empty) file"},
                "new_string": {"type": "string", "description": "Replacement text"},
                "replace_all": {"type": "boolean", "description": "Replace every match (default false)"},
                "edits": {
                    "type": "array",
                    "description": "Several edits instead of old_string/new_string",
                    "items": {
                        "type": "object",
                        "properties": {
                            "old_string": {"type": "string"},
                            "new_string": {"type": "string"},
                            "replace_all": {"type": "boolean"}
                        },
                        "required": ["old_string", "new_string"]
                    }
                }
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
        ToolKind::Edit
    }

    fn file_effect(&self) -> Option<FileEffect> {
        Some(FileEffect::Edit)
    }

    fn target(&self, args: &serde_json::Value) -> Option<String> {
        target(args, "path")
    }

    fn title(&self, args: &serde_json::Value) -> String {
        format!("Edit {}", title_arg(args, "path"))
    }

    /// Each replacement as removed (`-`) and added (`+`) lines.
    fn subject(&self, args: &serde_json::Value) -> String {
        let mut out = format!("edit {}:", arg(args, "path"));
        let mut pair = |old: &str, new: &str| {
            for line in old.lines() {
                out.push_str(&format!("\n-{line}"));
            }
            for line in new.lines() {
                out.push_str(&format!("\n+{line}"));
            }
        };
        match args.get("edits").and_then(serde_json::Value::as_array) {
            Some(edits) => {
                for e in edits {
                    pair(arg(e, "old_string"), arg(e, "new_string"));
                }
            }
            None => pair(arg(args, "old_string"), arg(args, "new_string")),
        }
        out
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let (path, edits) = parse_args::<Args>(args)?.into_edits()?;
            let root = Workspace::for_ctx(ctx)?;
            let judged = ctx.judged_paths.clone();
            blocking(ctx, move || {
                let target = root.resolve(&path)?;
                as_judged(judged.as_deref(), &target)?;
                edit(root.path(), &target, &edits)
            })
            .await
        })
    }
}

/// Applies `edits` to `original` in order, all or nothing: the new text, the number of
/// replacements and notes on fuzzy matches. `rel` names the file in errors.
fn apply_edits(
    rel: &str,
    original: &str,
    edits: &[Edit],
) -> Result<(String, usize, Vec<String>), ToolError> {
    let crlf = original.contains("\r\n");

    let mut text = original.to_owned();
    let mut replacements = 0;
    let mut notes = Vec::new();
    for (n, e) in edits.iter().enumerate() {
        let failed = |reason: String| ToolError::EditFailed {
            path: rel.to_owned(),
            reason: if edits.len() > 1 {
                format!(
                    "edit {} of {} failed, so none were applied: {reason}",
                    n + 1,
                    edits.len()
                )
            } else {
                reason
            },
        };
        if e.old_string.is_empty() {
            text = fill_empty(&text, &e.new_string).map_err(failed)?;
            replacements += 1;
            continue;
        }
        // A model writes "\n"; a CRLF file needs "\r\n" to match and to stay consistent.
        let (old, new) = if crlf && !e.old_string.contains('\r') {
            (to_crlf(&e.old_string), to_crlf(&e.new_string))
        } else {
            (e.old_string.clone(), e.new_string.clone())
        };
        let applied =
            matching::apply(&text, &old, &new, e.replace_all.unwrap_or(false)).map_err(failed)?;
        if let Some((from, to)) = applied.fuzzy_lines {
            let which = if edits.len() > 1 {
                format!("edit {}", n + 1)
            } else {
                "old_string".into()
            };
            notes.push(format!(
                "note: {which} did not match exactly; it matched lines {from}-{to} ignoring whitespace"
            ));
        }
        replacements += applied.replacements;
        text = applied.text;
    }
    Ok((text, replacements, notes))
}

/// The text an empty `old_string` makes: `new` written as given into a file that is
/// empty (or does not exist yet). A file with text has no place for it.
fn fill_empty(text: &str, new: &str) -> Result<String, String> {
    if !text.is_empty() {
        return Err(format!(
            "old_string is empty, which only creates a file or fills an empty one, but this \
             file already has {} of text. Put the exact text to replace in old_string, or use \
             write_file to replace the whole file",
            human_bytes(text.len() as u64)
        ));
    }
    if new.is_empty() {
        return Err(
            "old_string and new_string are both empty; there is nothing to write".to_owned(),
        );
    }
    Ok(new.to_owned())
}

/// What `edit_file` with these arguments would make of a file whose text is `original`,
/// without touching the disk: plan mode uses it to show and check queued edits against a
/// file as it will be. Errors are the ones `edit_file` would report. A file that does not
/// exist yet is previewed as `original == ""`: an empty `old_string` creates it.
pub fn preview_edit(original: &str, args: &serde_json::Value) -> Result<String, ToolError> {
    let (path, edits) = parse_args::<Args>(args.clone())?.into_edits()?;
    apply_edits(&path, original, &edits).map(|(text, _, _)| text)
}

fn edit(ws: &Path, target: &Target, edits: &[Edit]) -> Result<ToolOutput, ToolError> {
    let rel = target.rel().to_owned();
    let creates = edits.first().is_some_and(|e| e.old_string.is_empty());
    let size = match existing_file(ws, target) {
        Ok(size) => size,
        Err(ToolError::NotFound { .. }) if creates => return create(target, edits),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    let read = target
        .open_read()
        .and_then(|mut file| std::io::Read::read_to_end(&mut file, &mut bytes));
    read.map_err(|source| ToolError::Io {
        action: "read",
        path: rel.clone(),
        source,
    })?;
    if bytes[..bytes.len().min(8 * 1024)].contains(&0) {
        return Err(ToolError::Binary { path: rel, size });
    }
    let original =
        String::from_utf8(bytes).map_err(|_| ToolError::NotText { path: rel.clone() })?;
    let (text, replacements, notes) = apply_edits(&rel, &original, edits)?;
    if text == original {
        return Ok(ToolOutput::text(format!(
            "{rel} is unchanged: the edits cancel out"
        )));
    }
    atomic_write(target, text.as_bytes())?;

    let mut out = format!(
        "edited {rel}: {replacements} replacement{}",
        if replacements == 1 { "" } else { "s" }
    );
    for note in &notes {
        out.push('\n');
        out.push_str(note);
    }
    out.push('\n');
    out.push_str(&diff(&rel, &original, &text));
    Ok(ToolOutput {
        content: out,
        changed_paths: vec![rel],
        ..ToolOutput::default()
    })
}

/// A file that does not exist yet, made by edits whose first has an empty `old_string`.
fn create(target: &Target, edits: &[Edit]) -> Result<ToolOutput, ToolError> {
    let rel = target.rel().to_owned();
    let (text, _, notes) = apply_edits(&rel, "", edits)?;
    atomic_write(target, text.as_bytes())?;
    let mut out = format!(
        "created {rel} ({}, {} lines)",
        human_bytes(text.len() as u64),
        text.lines().count()
    );
    for note in &notes {
        out.push('\n');
        out.push_str(note);
    }
    Ok(ToolOutput {
        content: out,
        changed_paths: vec![rel],
        ..ToolOutput::default()
    })
}

/// Bare `\n` line breaks as `\r\n`; breaks that already are `\r\n` stay as they are.
fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// A unified diff with two lines of context, capped at `MAX_DIFF_LINES`.
fn diff(rel: &str, old: &str, new: &str) -> String {
    let text = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{rel}"), &format!("b/{rel}"))
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_DIFF_LINES {
        return text.replace('\r', "");
    }
    let mut out = lines[..MAX_DIFF_LINES].join("\n").replace('\r', "");
    out.push_str(&format!(
        "\n[... diff truncated, {} more lines]\n",
        lines.len() - MAX_DIFF_LINES
    ));
    out
}
