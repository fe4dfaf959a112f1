//! What a restore has to do, read from git: the entries that differ between the tree the
//! workspace holds now (the safety snapshot's) and the target tree, with their modes and
//! object ids, and the contents of the objects to write. Paths stay bytes throughout. This
//! module reads the side repository only; `apply` changes the workspace.

use std::collections::HashMap;

use crate::error::CheckpointError;
use crate::git::Git;

/// One tree entry: a file or a symbolic link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Blob {
    pub(crate) kind: Kind,
    pub(crate) oid: String,
}

/// What git records about an entry besides its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Executable,
    Symlink,
}

/// One path whose entry differs: what the workspace holds (`from`) and what the target
/// holds (`to`); `None` where that side has no such path.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub(crate) path: Vec<u8>,
    pub(crate) from: Option<Blob>,
    pub(crate) to: Option<Blob>,
}

/// The entries differing between trees `from` and `to` (`diff-tree -r -z`, raw format).
/// Nested repositories (gitlinks) are never in a snapshot and are skipped.
pub(crate) fn diff(git: &Git, from: &str, to: &str) -> Result<Vec<Change>, CheckpointError> {
    let out = git.run(&["diff-tree", "-r", "-z", "--no-renames", from, to])?;
    let corrupt = || CheckpointError::Corrupt {
        what: "diff-tree raw output".into(),
        side: git.side().to_path_buf(),
    };
    let mut changes = Vec::new();
    let mut fields = out.split(|b| *b == 0);
    while let Some(head) = fields.next() {
        if head.is_empty() {
            continue;
        }
        // ":<old mode> <new mode> <old oid> <new oid> <status>", then the path.
        let head = std::str::from_utf8(head).map_err(|_| corrupt())?;
        let parts: Vec<&str> = head.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, _status] = parts[..] else {
            return Err(corrupt());
        };
        let path = fields
            .next()
            .filter(|p| !p.is_empty())
            .ok_or_else(corrupt)?;
        let (Some(from), Some(to)) = (blob(old_mode, old_oid), blob(new_mode, new_oid)) else {
            return Err(corrupt());
        };
        if from.is_some() || to.is_some() {
            changes.push(Change {
                path: path.to_vec(),
                from,
                to,
            });
        }
    }
    Ok(changes)
}

/// `Some(None)` for "no entry" (mode 000000) and for a gitlink, `None` for an unknown mode.
#[expect(
    clippy::option_option,
    reason = "absent entry and unparsable mode are different answers"
)]
fn blob(mode: &str, oid: &str) -> Option<Option<Blob>> {
    let kind = match mode {
        "000000" | "160000" => return Some(None),
        "100644" => Kind::File,
        "100755" => Kind::Executable,
        "120000" => Kind::Symlink,
        _ => return None,
    };
    Some(Some(Blob {
        kind,
        oid: oid.to_owned(),
    }))
}

/// The contents of `oids`, read with one `cat-file --batch`. An object the side repository
/// lacks maps to an error message, so the restore fails at that path and not before.
pub(crate) fn contents(
    git: &Git,
    oids: &[&str],
) -> Result<HashMap<String, Result<Vec<u8>, String>>, CheckpointError> {
    let read = contents_in_order(git, oids)?;
    Ok(oids
        .iter()
        .zip(read)
        .map(|(oid, body)| {
            let body = body.ok_or_else(|| {
                format!(
                    "object {oid} is missing from the side repository {}",
                    git.side().display()
                )
            });
            ((*oid).to_owned(), body)
        })
        .collect())
}

/// The contents of `names` (object ids or `rev:path`), in their order, with one
/// `cat-file --batch`; `None` for a name the side repository does not hold.
pub(crate) fn contents_in_order(
    git: &Git,
    names: &[&str],
) -> Result<Vec<Option<Vec<u8>>>, CheckpointError> {
    let mut found = Vec::with_capacity(names.len());
    if names.is_empty() {
        return Ok(found);
    }
    let input: String = names.iter().map(|o| format!("{o}\n")).collect();
    let out = git.run_with_input(&["cat-file", "--batch"], Some(input.as_bytes()))?;
    let corrupt = || CheckpointError::Corrupt {
        what: "cat-file --batch output".into(),
        side: git.side().to_path_buf(),
    };
    let mut rest = out.as_slice();
    while !rest.is_empty() {
        let end = rest.iter().position(|b| *b == b'\n').ok_or_else(corrupt)?;
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        rest = &rest[end + 1..];
        // "<name> missing" (or "ambiguous"), else "<oid> <kind> <size>" and the body.
        let words: Vec<&str> = header.rsplitn(3, ' ').collect();
        match words[..] {
            [_, _] | ["missing", ..] | ["ambiguous", ..] => found.push(None),
            [size, _kind, _oid] => match size.parse::<usize>() {
                Ok(size) => {
                    let body = rest.get(..size).ok_or_else(corrupt)?;
                    found.push(Some(body.to_vec()));
                    rest = rest.get(size + 1..).ok_or_else(corrupt)?;
                }
                Err(_) => found.push(None),
            },
            _ => return Err(corrupt()),
        }
    }
    if found.len() != names.len() {
        return Err(corrupt());
    }
    Ok(found)
}
