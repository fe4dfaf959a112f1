//! Reading the `apply_patch` envelope into file operations, without touching the disk.
//!
//! The grammar is Codex's (`codex-rs/apply-patch`):
//!
//! ```text
//! patch  := "*** Begin Patch" NL op+ "*** End Patch" NL?
//! op     := "*** Add File: " path NL ("+" line NL)*
//!         | "*** Delete File: " path NL
//!         | "*** Update File: " path NL ("*** Move to: " path NL)? chunk*
//! chunk  := ("@@" | "@@ " context) NL ((" " | "-" | "+") line NL)+ ("*** End of File" NL)?
//! ```
//!
//! Leniencies, as Codex has them: markers may carry surrounding whitespace, the patch may
//! be wrapped in a `<<'EOF'` heredoc, the first chunk of an update may omit its `@@`
//! line, and an empty line inside a chunk is an empty context line (so a blank line
//! before the next `@@` ends up as trailing context, which `apply` may drop). An update needs at least one chunk unless it moves the file.
//! Matching chunks against files is `apply`'s business.

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    /// Create `path` (replacing a file already there) with `content`.
    Add {
        /// The path as the patch gives it.
        path: String,
        /// The whole new text, each line ending in `\n`.
        content: String,
    },
    /// Delete the file `path`.
    Delete {
        /// The path as the patch gives it.
        path: String,
    },
    /// Change `path` by `chunks`, then move it to `move_to` when that is set.
    Update {
        /// The path as the patch gives it.
        path: String,
        /// Where the file moves to (`*** Move to:`).
        move_to: Option<String>,
        /// The changes, in file order.
        chunks: Vec<PatchChunk>,
    },
}

impl PatchOp {
    /// The paths this operation touches, as the patch gives them: the file, and for a
    /// move its destination too.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Self::Add { path, .. } | Self::Delete { path } => vec![path],
            Self::Update { path, move_to, .. } => std::iter::once(path.as_str())
                .chain(move_to.as_deref())
                .collect(),
        }
    }
}

/// One `@@` chunk of an update: `old_lines` are replaced by `new_lines`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchChunk {
    /// The text after `@@ `: a line (usually a signature) above the change that narrows
    /// where it applies.
    pub context: Option<String>,
    /// Context and removed lines, in order.
    pub old_lines: Vec<String>,
    /// Context and added lines, in order.
    pub new_lines: Vec<String>,
    /// `*** End of File`: the old lines end the file.
    pub end_of_file: bool,
}

use crate::ToolError;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// Parses a patch into its file operations, in order, without touching the disk. The
/// error (`ToolError::PatchFailed`) says which line is wrong and how, for the model.
pub fn parse_patch(input: &str) -> Result<Vec<PatchOp>, ToolError> {
    parse(input).map_err(|reason| ToolError::PatchFailed {
        reason: format!("the patch is malformed: {reason}"),
        stale_file: None,
    })
}

fn parse(input: &str) -> Result<Vec<PatchOp>, String> {
    let all: Vec<&str> = input.trim().lines().collect();
    let body = envelope(&all)?;
    let mut ops = Vec::new();
    // Line numbers in messages count from the `*** Begin Patch` line, as 1.
    let mut at = 0;
    while at < body.len() {
        let line_no = at + 2;
        let header = body[at].trim();
        if header.is_empty() {
            at += 1;
            continue;
        }
        if let Some(path) = header.strip_prefix(ADD) {
            let path = path_of(path, line_no)?;
            let mut content = String::new();
            at += 1;
            while let Some(added) = body.get(at).and_then(|l| l.strip_prefix('+')) {
                content.push_str(added);
                content.push('\n');
                at += 1;
            }
            ops.push(PatchOp::Add { path, content });
        } else if let Some(path) = header.strip_prefix(DELETE) {
            ops.push(PatchOp::Delete {
                path: path_of(path, line_no)?,
            });
            at += 1;
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            let path = path_of(path, line_no)?;
            at += 1;
            let mut move_to = None;
            if let Some(dest) = body.get(at).and_then(|l| l.trim().strip_prefix(MOVE)) {
                move_to = Some(path_of(dest, at + 2)?);
                at += 1;
            }
            let (chunks, used) = chunks(&body[at..], at + 2)?;
            at += used;
            if chunks.is_empty() && move_to.is_none() {
                return Err(format!(
                    "line {line_no}: `*** Update File: {path}` has no changes; give `@@` chunks \
                     with ` `, `-` and `+` lines, or leave the file out"
                ));
            }
            ops.push(PatchOp::Update {
                path,
                move_to,
                chunks,
            });
        } else {
            return Err(format!(
                "line {line_no}: `{header}` is not a file operation; expected `{ADD} <path>`, \
                 `{DELETE} <path>` or `{UPDATE} <path>`"
            ));
        }
    }
    if ops.is_empty() {
        return Err("the patch has no file operations".into());
    }
    Ok(ops)
}

/// Every path a patch touches (moves count both ends), in order, each once: what plan
/// mode needs to queue a patch without applying it.
pub fn patch_paths(input: &str) -> Result<Vec<String>, ToolError> {
    let mut paths: Vec<String> = Vec::new();
    for op in parse_patch(input)? {
        for path in op.paths() {
            if !paths.iter().any(|p| p == path) {
                paths.push(path.to_owned());
            }
        }
    }
    Ok(paths)
}

/// The lines between the begin and end markers, also inside a `<<'EOF'` heredoc.
fn envelope<'a>(lines: &'a [&'a str]) -> Result<&'a [&'a str], String> {
    let strict = |lines: &'a [&'a str]| -> Result<&'a [&'a str], String> {
        match lines {
            [first, ..] if first.trim() != BEGIN => Err(format!(
                "the first line must be `{BEGIN}`, not `{}`",
                first.trim()
            )),
            [_, body @ .., last] if last.trim() == END => Ok(body),
            _ => Err(format!(
                "the last line must be `{END}`; the patch may have been cut off"
            )),
        }
    };
    if lines.is_empty() {
        return Err(format!("the patch is empty; it must start with `{BEGIN}`"));
    }
    match strict(lines) {
        Ok(body) => Ok(body),
        Err(e) => match lines {
            [first, inner @ .., last]
                if matches!(first.trim(), "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
                    && last.trim().ends_with("EOF") =>
            {
                strict(inner)
            }
            _ => Err(e),
        },
    }
}

fn path_of(raw: &str, line_no: usize) -> Result<String, String> {
    let path = raw.trim();
    if path.is_empty() {
        return Err(format!("line {line_no}: the file path is missing"));
    }
    Ok(path.to_owned())
}

/// The chunks of an update, up to the next `***` line; and how many lines they used.
fn chunks(lines: &[&str], first_line_no: usize) -> Result<(Vec<PatchChunk>, usize), String> {
    let mut chunks = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if line.trim().is_empty() {
            at += 1;
            continue;
        }
        if line.starts_with('*') {
            break;
        }
        let line_no = first_line_no + at;
        let trimmed = line.trim();
        let context = if trimmed == "@@" {
            at += 1;
            None
        } else if let Some(context) = line.strip_prefix("@@ ") {
            at += 1;
            Some(context.to_owned())
        } else if chunks.is_empty() {
            None
        } else {
            return Err(format!(
                "line {line_no}: expected an `@@` line to start the next chunk, got `{line}`"
            ));
        };
        let mut chunk = PatchChunk {
            context,
            old_lines: Vec::new(),
            new_lines: Vec::new(),
            end_of_file: false,
        };
        let mut body = 0;
        while let Some(&line) = lines.get(at) {
            if line.trim() == END_OF_FILE {
                chunk.end_of_file = true;
                at += 1;
                break;
            }
            match line.chars().next() {
                None => {
                    chunk.old_lines.push(String::new());
                    chunk.new_lines.push(String::new());
                }
                Some(' ') => {
                    chunk.old_lines.push(line[1..].to_owned());
                    chunk.new_lines.push(line[1..].to_owned());
                }
                Some('-') => chunk.old_lines.push(line[1..].to_owned()),
                Some('+') => chunk.new_lines.push(line[1..].to_owned()),
                Some(_) if body == 0 => {
                    return Err(format!(
                        "line {}: `{line}` starts with neither ` ` (context), `-` (removed) \
                         nor `+` (added)",
                        first_line_no + at
                    ));
                }
                Some(_) => break,
            }
            body += 1;
            at += 1;
        }
        if body == 0 {
            return Err(format!(
                "line {line_no}: this chunk has no ` `, `-` or `+` lines"
            ));
        }
        chunks.push(chunk);
    }
    Ok((chunks, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(context: Option<&str>, old: &[&str], new: &[&str], eof: bool) -> PatchChunk {
        PatchChunk {
            context: context.map(str::to_owned),
            old_lines: old.iter().map(|s| s.to_string()).collect(),
            new_lines: new.iter().map(|s| s.to_string()).collect(),
            end_of_file: eof,
        }
    }

    #[test]
    fn every_operation() {
        let ops = parse_patch(
            "*** Begin Patch\n*** Add File: a/new.txt\n+one\n+\n+two\n*** Delete File: old.txt\n\
             *** Update File: src/x.py\n*** Move to: src/y.py\n@@ def f():\n-    pass\n+    return 1\n\
             \n@@\n ctx\n-x\n+y\n*** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(
            ops,
            vec![
                PatchOp::Add {
                    path: "a/new.txt".into(),
                    content: "one\n\ntwo\n".into()
                },
                PatchOp::Delete {
                    path: "old.txt".into()
                },
                PatchOp::Update {
                    path: "src/x.py".into(),
                    move_to: Some("src/y.py".into()),
                    chunks: vec![
                        chunk(
                            Some("def f():"),
                            &["    pass", ""],
                            &["    return 1", ""],
                            false
                        ),
                        chunk(None, &["ctx", "x"], &["ctx", "y"], true),
                    ],
                },
            ]
        );
        assert_eq!(
            patch_paths(
                "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Delete File: a\n*** End Patch"
            )
            .unwrap(),
            vec!["a", "b"]
        );
    }

    #[test]
    fn leniencies() {
        // Padded markers, a heredoc wrapper, and a first chunk without `@@`.
        let ops = parse_patch(
            "<<'EOF'\n  *** Begin Patch \n*** Update File: f.txt\n import foo\n+bar\n *** End Patch\nEOF\n",
        )
        .unwrap();
        assert_eq!(
            ops,
            vec![PatchOp::Update {
                path: "f.txt".into(),
                move_to: None,
                chunks: vec![chunk(None, &["import foo"], &["import foo", "bar"], false)],
            }]
        );
        // A pure move needs no chunks.
        assert!(
            parse_patch("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch")
                .is_ok()
        );
    }

    #[test]
    fn malformed_envelopes_and_hunks_say_where() {
        let cases = [
            ("", "the patch is empty"),
            (
                "*** Update File: a\n@@\n-x\n+y\n",
                "the first line must be `*** Begin Patch`",
            ),
            (
                "*** Begin Patch\n*** Delete File: a\n",
                "the last line must be `*** End Patch`",
            ),
            ("*** Begin Patch\n*** End Patch", "no file operations"),
            (
                "*** Begin Patch\n*** Frobnicate: a\n*** End Patch",
                "line 2: `*** Frobnicate: a` is not a file operation",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n*** End Patch",
                "line 2: `*** Update File: a` has no changes",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n@@\nx\n*** End Patch",
                "line 4: `x` starts with neither",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n-x\n@@\n*** End Patch",
                "line 5: this chunk has no",
            ),
            (
                "*** Begin Patch\n*** Add File: \n+x\n*** End Patch",
                "line 2: the file path is missing",
            ),
        ];
        for (patch, want) in cases {
            let e = parse_patch(patch).unwrap_err().to_string();
            assert!(e.contains(want), "{patch:?}: {e}");
        }
    }
}
