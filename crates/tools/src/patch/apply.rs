//! What a patch makes of the files it touches, computed in memory: the `apply_patch`
//! tool writes the result, plan mode previews it.
//!
//! Chunks are located the way Codex does (`seek_sequence`): the `@@` context line first,
//! then the old lines after it, trying an exact match, then one ignoring trailing
//! whitespace, then one ignoring surrounding whitespace; `*** End of File` pins the old
//! lines to the end. Unlike Codex, a chunk without an `@@` line that matches several
//! places is refused instead of applied at the first. Reading and writing files is the
//! caller's business.

use super::parse::{PatchChunk, PatchOp, parse_patch};
use crate::ToolError;

/// Line numbers listed for an ambiguous chunk.
const MAX_LISTED: usize = 10;

/// What a patch makes of the files it touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchPlan {
    /// Every file touched, in the order the patch first touches it.
    pub files: Vec<FileChange>,
    /// One line per operation: `A path`, `M path`, `D path` or `R old -> new`.
    pub summary: Vec<String>,
}

/// One file's text before and after a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path as the caller keys it.
    pub path: String,
    /// The text before; `None` when the file did not exist.
    pub before: Option<String>,
    /// The text after; `None` when the patch deletes (or moves away) the file.
    pub after: Option<String>,
}

/// What `apply_patch` would make of the files its `input` touches, without touching the
/// disk. `read` gives a file's current text by the path as the patch writes it (`None`
/// for a file that does not exist); plan mode passes the files as they will be after
/// the changes already queued. Errors are the ones `apply_patch` would report.
pub fn preview_patch(
    input: &str,
    mut read: impl FnMut(&str) -> Result<Option<String>, ToolError>,
) -> Result<PatchPlan, ToolError> {
    let ops = parse_patch(input)?;
    plan(&ops, &mut read)
}

fn failed(reason: String) -> ToolError {
    ToolError::PatchFailed {
        reason,
        stale_file: None,
    }
}

/// Applies `ops` in order to the files `read` gives, in memory.
pub(crate) fn plan(
    ops: &[PatchOp],
    read: &mut dyn FnMut(&str) -> Result<Option<String>, ToolError>,
) -> Result<PatchPlan, ToolError> {
    let mut files: Vec<FileChange> = Vec::new();
    let mut slot = |files: &mut Vec<FileChange>, path: &str| -> Result<usize, ToolError> {
        if let Some(i) = files.iter().position(|f| f.path == path) {
            return Ok(i);
        }
        let before = read(path)?;
        files.push(FileChange {
            path: path.to_owned(),
            after: before.clone(),
            before,
        });
        Ok(files.len() - 1)
    };
    let mut summary: Vec<String> = Vec::new();
    for op in ops {
        let line = match op {
            PatchOp::Add { path, content } => {
                let i = slot(&mut files, path)?;
                files[i].after = Some(content.clone());
                format!("A {path}")
            }
            PatchOp::Delete { path } => {
                let i = slot(&mut files, path)?;
                if files[i].after.take().is_none() {
                    return Err(failed(format!("cannot delete {path}: it does not exist")));
                }
                format!("D {path}")
            }
            PatchOp::Update {
                path,
                move_to,
                chunks,
            } => {
                let i = slot(&mut files, path)?;
                let Some(text) = &files[i].after else {
                    return Err(failed(format!(
                        "cannot update {path}: it does not exist. Use `*** Add File: {path}` \
                         to create it"
                    )));
                };
                let new = apply_chunks(path, text, chunks)?;
                match move_to {
                    Some(dest) if dest != path => {
                        let j = slot(&mut files, dest)?;
                        files[i].after = None;
                        files[j].after = Some(new);
                        format!("R {path} -> {dest}")
                    }
                    _ => {
                        files[i].after = Some(new);
                        format!("M {path}")
                    }
                }
            }
        };
        if !summary.contains(&line) {
            summary.push(line);
        }
    }
    Ok(PatchPlan { files, summary })
}

/// Where a run of lines matched.
enum Seek {
    None,
    One(usize),
    /// Every start, in order (at least two).
    Many(Vec<usize>),
}

/// The text `chunks` make of `text` (the file `path`). Every kept line keeps its own line
/// ending (a file may mix CRLF and LF lines); an added line takes the ending of the line
/// it replaces, else of the line before it, else of the line after it. The file ends with
/// a line break.
fn apply_chunks(path: &str, text: &str, chunks: &[PatchChunk]) -> Result<String, ToolError> {
    let file = split_lines(text);
    let lines: Vec<&str> = file.iter().map(|l| l.text).collect();
    let name = |n: usize| {
        if chunks.len() > 1 {
            format!("chunk {} of {}", n + 1, chunks.len())
        } else {
            "the chunk".to_owned()
        }
    };
    let mismatch = |reason: String| ToolError::PatchFailed {
        reason: format!("{path}: {reason}"),
        stale_file: Some(path.to_owned()),
    };
    let mut replacements: Vec<(usize, usize, &[String])> = Vec::new();
    let mut from = 0;
    for (n, chunk) in chunks.iter().enumerate() {
        if let Some(context) = &chunk.context {
            match seek(&lines, std::slice::from_ref(context), from, false) {
                Seek::One(i) => from = i + 1,
                Seek::Many(all) => from = all[0] + 1,
                Seek::None => {
                    return Err(mismatch(format!(
                        "the `@@ {context}` line of {} was not found{}. Copy a line of the \
                         file exactly (read it again with read_file)",
                        name(n),
                        after_line(from)
                    )));
                }
            }
        }
        let mut old = &chunk.old_lines[..];
        let mut new = &chunk.new_lines[..];
        let mut found = seek(&lines, old, from, chunk.end_of_file);
        if matches!(found, Seek::None) && old.last().is_some_and(String::is_empty) {
            // A blank line before the next `@@` is parsed as trailing context.
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            found = seek(&lines, old, from, chunk.end_of_file);
        }
        if old.is_empty() {
            // Only added lines: after the `@@` line, or at the end of the file.
            let at = if chunk.context.is_some() && !chunk.end_of_file {
                from
            } else {
                lines.len()
            };
            replacements.push((at, 0, new));
            continue;
        }
        let start = match found {
            Seek::One(i) => i,
            Seek::Many(all) if chunk.context.is_some() => all[0],
            Seek::Many(all) => return Err(mismatch(many_places(&name(n), &all))),
            Seek::None => {
                let wanted: Vec<String> = old.iter().map(|l| format!("  |{l}")).collect();
                let at_end = if chunk.end_of_file {
                    " at the end of the file"
                } else {
                    ""
                };
                return Err(mismatch(format!(
                    "{} does not match the file: these lines were not found{at_end}{} (not \
                     even ignoring whitespace):\n{}\nRead the file again with read_file and \
                     copy the ` ` and `-` lines exactly",
                    name(n),
                    after_line(from),
                    wanted.join("\n")
                )));
            }
        };
        replacements.push((start, old.len(), new));
        from = start + old.len();
    }
    Ok(splice(&file, text.len(), replacements))
}

/// Why a chunk that matches more than one place (`all`, its starts) was not applied.
fn many_places(chunk: &str, all: &[usize]) -> String {
    let listed: Vec<String> = all
        .iter()
        .take(MAX_LISTED)
        .map(|i| (i + 1).to_string())
        .collect();
    format!(
        "{chunk} matches {} places (lines {}{}). Add an `@@` line naming a line above the \
         change (such as the enclosing function's signature), or more context lines, so that \
         it matches one",
        all.len(),
        listed.join(", "),
        if all.len() > MAX_LISTED { ", ..." } else { "" }
    )
}

/// `file` with each replacement (start, lines replaced, new lines) made, every line with
/// its ending (see [`apply_chunks`]).
fn splice(
    file: &[Line<'_>],
    len: usize,
    mut replacements: Vec<(usize, usize, &[String])>,
) -> String {
    replacements.sort_by_key(|&(start, _, _)| start);
    let fallback = main_ending(file);
    let mut out: Vec<Line<'_>> = Vec::with_capacity(file.len());
    let mut at = 0;
    for (start, len, new) in replacements {
        out.extend_from_slice(&file[at..start]);
        for (j, added) in new.iter().enumerate() {
            let eol = if j < len {
                file[start + j].eol
            } else if let Some(before) = out.last() {
                before.eol
            } else {
                file.get(start + len).map_or(fallback, |after| after.eol)
            };
            out.push(Line { text: added, eol });
        }
        at = start + len;
    }
    out.extend_from_slice(&file[at..]);
    let mut text = String::with_capacity(len);
    for line in &out {
        text.push_str(line.text);
        // The last line of a file without a final break (or a line placed before it) has
        // no ending of its own: it gets the file's usual one.
        text.push_str(if line.eol.is_empty() {
            fallback
        } else {
            line.eol
        });
    }
    text
}

/// A line of a file: its text, and the ending that followed it (`""` for a last line
/// without one).
#[derive(Clone, Copy)]
struct Line<'a> {
    text: &'a str,
    eol: &'a str,
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (line, tail) = match rest.find('\n') {
            Some(i) => (&rest[..=i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let (text, eol) = if let Some(t) = line.strip_suffix("\r\n") {
            (t, "\r\n")
        } else if let Some(t) = line.strip_suffix('\n') {
            (t, "\n")
        } else {
            (line, "")
        };
        lines.push(Line { text, eol });
        rest = tail;
    }
    lines
}

/// The ending most of the file's lines have (LF for a tie or none).
fn main_ending(lines: &[Line<'_>]) -> &'static str {
    let crlf = lines.iter().filter(|l| l.eol == "\r\n").count();
    let lf = lines.iter().filter(|l| l.eol == "\n").count();
    if crlf > lf { "\r\n" } else { "\n" }
}

fn after_line(from: usize) -> String {
    if from == 0 {
        String::new()
    } else {
        format!(" after line {from}")
    }
}

/// Where `pattern` matches `lines` at or after `from`: exactly, else ignoring trailing
/// whitespace, else ignoring surrounding whitespace; with `eof`, only at the very end.
fn seek(lines: &[&str], pattern: &[String], from: usize, eof: bool) -> Seek {
    let k = pattern.len();
    if k == 0 {
        return Seek::One(from);
    }
    if k > lines.len() || from > lines.len() - k {
        return Seek::None;
    }
    let starts: Vec<usize> = if eof {
        vec![lines.len() - k]
    } else {
        (from..=lines.len() - k).collect()
    };
    let tiers: [fn(&str) -> &str; 3] = [|s| s, str::trim_end, str::trim];
    for norm in tiers {
        let at: Vec<usize> = starts
            .iter()
            .copied()
            .filter(|&i| {
                lines[i..i + k]
                    .iter()
                    .zip(pattern)
                    .all(|(l, p)| norm(l) == norm(p))
            })
            .collect();
        match at.len() {
            0 => continue,
            1 => return Seek::One(at[0]),
            _ => return Seek::Many(at),
        }
    }
    Seek::None
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
    fn tiers_of_matching() {
        let c = [chunk(None, &["b", "c"], &["B"], false)];
        assert_eq!(apply_chunks("f", "a\nb\nc\n", &c).unwrap(), "a\nB\n");
        assert_eq!(apply_chunks("f", "a\nb  \nc\t\n", &c).unwrap(), "a\nB\n");
        assert_eq!(apply_chunks("f", "a\n  b\n  c\n", &c).unwrap(), "a\nB\n");
        // An exact match wins over a looser one elsewhere.
        assert_eq!(
            apply_chunks("f", " b\n c\nb\nc\n", &c).unwrap(),
            " b\n c\nB\n"
        );
    }

    #[test]
    fn line_endings_and_final_newline() {
        let c = [chunk(None, &["b"], &["B", "b2"], false)];
        assert_eq!(
            apply_chunks("f", "a\r\nb\r\n", &c).unwrap(),
            "a\r\nB\r\nb2\r\n"
        );
        assert_eq!(apply_chunks("f", "a\nb", &c).unwrap(), "a\nB\nb2\n");
    }

    #[test]
    fn additions_go_after_the_context_line_or_at_the_end() {
        let c = [chunk(Some("fn a() {"), &[], &["    x();"], false)];
        assert_eq!(
            apply_chunks("f", "fn a() {\n}\nfn b() {\n}\n", &c).unwrap(),
            "fn a() {\n    x();\n}\nfn b() {\n}\n"
        );
        let c = [chunk(None, &[], &["z"], true)];
        assert_eq!(apply_chunks("f", "a\n", &c).unwrap(), "a\nz\n");
    }

    #[test]
    fn preview_follows_earlier_operations() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+one\n*** Update File: a.txt\n\
                     *** Move to: b.txt\n@@\n-one\n+two\n*** End Patch";
        let plan = preview_patch(patch, |_| Ok(None)).unwrap();
        assert_eq!(plan.summary, vec!["A a.txt", "R a.txt -> b.txt"]);
        assert_eq!(
            plan.files,
            vec![
                FileChange {
                    path: "a.txt".into(),
                    before: None,
                    after: None
                },
                FileChange {
                    path: "b.txt".into(),
                    before: None,
                    after: Some("two\n".into())
                },
            ]
        );
    }
}
