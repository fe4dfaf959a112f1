//! The repository's symbol index, built incrementally: each source file is parsed only
//! when its size or modification time changed since the last build. The index lives in
//! memory for the process and on disk under atto's data dir (one file per workspace), so
//! a second call, in this session or the next, re-parses nothing on an unchanged tree.
//!
//! The disk format is plain lines (`F` file, `S` symbol, `U` uses, `I` import, `E`
//! export, `M` names its module docs mention), written to a temporary
//! file and renamed into place; a file that cannot be read back is ignored and rebuilt.
//! Source files are read beneath a handle of the indexed root, never by name alone.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use tokio_util::sync::CancellationToken;

use super::parse::{self, FileFacts, Lang, Link, Symbol};
use crate::ToolError;
use crate::beneath::Workspace;

/// One file's facts and the stat they were read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub size: u64,
    pub mtime_ns: u128,
    pub facts: FileFacts,
}

/// Every source file of a workspace: path relative to the root → entry.
pub(crate) type Index = HashMap<String, Entry>;

/// How a build went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BuildStats {
    pub files: usize,
    pub parsed: usize,
}

/// The indexes built in this process, by workspace root.
static MEMORY: Mutex<Option<HashMap<PathBuf, Arc<Index>>>> = Mutex::new(None);

fn remembered(root: &Path) -> Option<Arc<Index>> {
    let memory = MEMORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    memory.as_ref()?.get(root).cloned()
}

fn remember(root: &Path, index: Arc<Index>) {
    let mut memory = MEMORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    memory
        .get_or_insert_with(HashMap::new)
        .insert(root.to_path_buf(), index);
}

/// Drops every index held in memory, as a new process starts.
#[cfg(test)]
pub(crate) fn forget_all() {
    let mut memory = MEMORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *memory = None;
}

/// The cache file of `root` in `dir`.
fn cache_file(dir: &Path, root: &Path) -> PathBuf {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in root.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    dir.join(format!("overview-{hash:016x}.idx"))
}

/// The index of `root`, re-parsing only what changed. `cache_dir` keeps it across
/// processes; `None` keeps it in memory only.
pub(crate) fn build(
    root: &Path,
    cache_dir: Option<&Path>,
    cancel: &CancellationToken,
) -> Result<(Arc<Index>, BuildStats), ToolError> {
    let previous = remembered(root).or_else(|| {
        cache_dir
            .and_then(|d| load(&cache_file(d, root)))
            .map(Arc::new)
    });
    let mut stats = BuildStats::default();
    // Files as found now: unchanged ones are taken from `previous` only if something
    // changed, so an unchanged tree costs a walk and no copy.
    let mut unchanged: Vec<String> = Vec::new();
    let mut todo: Vec<(String, PathBuf, Lang, u64, u128)> = Vec::new();
    for (n, entry) in crate::search::walk(root, None).enumerate() {
        if n % 256 == 0 && cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = crate::paths::relative(root, entry.path());
        let Some(lang) = Lang::of(&rel) else { continue };
        if rel.contains(['\t', '\n']) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if meta.len() > parse::MAX_FILE_BYTES {
            continue;
        }
        let (_, mtime_ns) = stat(&meta);
        stats.files += 1;
        match previous.as_ref().and_then(|p| p.get(&rel)) {
            Some(old) if old.size == meta.len() && old.mtime_ns == mtime_ns => unchanged.push(rel),
            _ => todo.push((rel, entry.into_path(), lang, meta.len(), mtime_ns)),
        }
    }
    stats.parsed = todo.len();
    if let Some(previous) = previous
        .as_ref()
        .filter(|p| todo.is_empty() && p.len() == unchanged.len())
    {
        // An index made in memory only (a session's first look) is written once here.
        if let Some(file) = cache_dir.map(|d| cache_file(d, root))
            && !file.exists()
        {
            let _ = save(&file, previous);
        }
        remember(root, Arc::clone(previous));
        return Ok((Arc::clone(previous), stats));
    }
    let mut index = Index::with_capacity(unchanged.len() + todo.len());
    if let Some(previous) = &previous {
        for rel in unchanged {
            if let Some(old) = previous.get(&rel) {
                index.insert(rel, old.clone());
            }
        }
    }
    let beneath = Workspace::open(root)?;
    for (rel, entry) in parse_all(&beneath, todo, cancel)? {
        index.insert(rel, entry);
    }
    let index = Arc::new(index);
    if let Some(dir) = cache_dir {
        // A cache that cannot be written costs the next process a full build, nothing more.
        let _ = save(&cache_file(dir, root), &index);
    }
    remember(root, Arc::clone(&index));
    Ok((index, stats))
}

/// A source file found by a walk: relative path, path, language, size, mtime.
pub(crate) type Found = (String, PathBuf, Lang, u64, u128);

/// The stat of a walked file as the index keys it: size and mtime in nanoseconds.
pub(crate) fn stat(meta: &std::fs::Metadata) -> (u64, u128) {
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    (meta.len(), mtime_ns)
}

/// The index of a few files found already (a session's first look at a small tree),
/// parsed on this thread and kept in memory for `root`, so the tool's first call reuses it.
pub(crate) fn of_files(root: &Path, files: Vec<Found>) -> Arc<Index> {
    let mut index = Index::with_capacity(files.len());
    let beneath = Workspace::open(root).ok();
    for (rel, path, lang, size, mtime_ns) in files {
        let Some(bytes) = beneath.as_ref().and_then(|b| read(b, &path)) else {
            continue;
        };
        let facts = parse::facts(&String::from_utf8_lossy(&bytes), lang).unwrap_or_default();
        index.insert(
            rel,
            Entry {
                size,
                mtime_ns,
                facts,
            },
        );
    }
    let index = Arc::new(index);
    remember(root, Arc::clone(&index));
    index
}

/// Parses `files` on up to four threads.
/// The bytes of the walked file at `path`, opened beneath `root`'s handle (a directory
/// swapped for a link since the walk cannot lead the read elsewhere).
fn read(root: &Workspace, path: &Path) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    root.open_file(path).ok()?.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn parse_all(
    beneath: &Workspace,
    files: Vec<(String, PathBuf, Lang, u64, u128)>,
    cancel: &CancellationToken,
) -> Result<Vec<(String, Entry)>, ToolError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 4);
    let chunk = files.len().div_ceil(threads).max(1);
    let results: Vec<Vec<(String, Entry)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    let mut out = Vec::with_capacity(part.len());
                    for (rel, path, lang, size, mtime_ns) in part {
                        if cancel.is_cancelled() {
                            break;
                        }
                        let Some(bytes) = read(beneath, path) else {
                            continue;
                        };
                        let text = String::from_utf8_lossy(&bytes);
                        let facts = parse::facts(&text, *lang).unwrap_or_default();
                        out.push((
                            rel.clone(),
                            Entry {
                                size: *size,
                                mtime_ns: *mtime_ns,
                                facts,
                            },
                        ));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    Ok(results.into_iter().flatten().collect())
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn save(path: &Path, index: &Index) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut out = String::with_capacity(index.len() * 256);
    out.push_str("atto-overview 3\n");
    for (rel, e) in index {
        out.push_str(&format!("F\t{rel}\t{}\t{}\n", e.size, e.mtime_ns));
        for s in &e.facts.symbols {
            // Public or not, then the doc comment's lines.
            let flags = format!("{}{}", if s.public { "p" } else { "-" }, s.doc);
            out.push_str(&format!(
                "S\t{}\t{}\t{flags}\t{}\n",
                clean(&s.kind),
                s.line,
                clean(&s.name)
            ));
        }
        for (tag, links) in [("I", &e.facts.imports), ("E", &e.facts.exports)] {
            for l in links {
                out.push_str(&format!("{tag}\t{}\t{}\n", clean(&l.from), clean(&l.name)));
            }
        }
        out.push_str("M\t");
        out.push_str(&e.facts.mentions.join(" "));
        out.push('\n');
        out.push_str("U\t");
        out.push_str(
            &e.facts
                .uses
                .iter()
                .map(|u| clean(u))
                .collect::<Vec<_>>()
                .join(" "),
        );
        out.push('\n');
    }
    let mut tmp = tempfile::NamedTempFile::new_in(path.parent().unwrap_or(Path::new(".")))?;
    tmp.write_all(out.as_bytes())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The space-separated words of a line's last field.
fn words(field: Option<&str>) -> Vec<String> {
    field
        .unwrap_or("")
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The index in `path`; `None` when it is missing or not in this format.
fn load(path: &Path) -> Option<Index> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    if lines.next()? != "atto-overview 3" {
        return None;
    }
    let mut index = Index::new();
    let mut current: Option<(String, Entry)> = None;
    for line in lines {
        let mut parts = line.splitn(5, '\t');
        match parts.next()? {
            "F" => {
                if let Some((rel, e)) = current.take() {
                    index.insert(rel, e);
                }
                let rel = parts.next()?.to_owned();
                let size = parts.next()?.parse().ok()?;
                let mtime_ns = parts.next()?.parse().ok()?;
                current = Some((
                    rel,
                    Entry {
                        size,
                        mtime_ns,
                        facts: FileFacts::default(),
                    },
                ));
            }
            "S" => {
                let (_, e) = current.as_mut()?;
                let kind = parts.next()?.to_owned();
                let line = parts.next()?.parse().ok()?;
                let flags = parts.next()?;
                let name = parts.next()?.to_owned();
                e.facts.symbols.push(Symbol {
                    kind,
                    name,
                    line,
                    public: flags.starts_with('p'),
                    doc: flags.get(1..)?.parse().ok()?,
                });
            }
            tag @ ("I" | "E") => {
                let (_, e) = current.as_mut()?;
                let link = Link {
                    from: parts.next()?.to_owned(),
                    name: parts.next()?.to_owned(),
                };
                if tag == "I" {
                    e.facts.imports.push(link);
                } else {
                    e.facts.exports.push(link);
                }
            }
            "M" => {
                let (_, e) = current.as_mut()?;
                e.facts.mentions = words(parts.next());
            }
            "U" => {
                let (_, e) = current.as_mut()?;
                e.facts.uses = parts
                    .next()
                    .unwrap_or("")
                    .split(' ')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            _ => return None,
        }
    }
    if let Some((rel, e)) = current.take() {
        index.insert(rel, e);
    }
    Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disk_format_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = Index::new();
        index.insert(
            "src/a.rs".into(),
            Entry {
                size: 10,
                mtime_ns: 123,
                facts: FileFacts {
                    symbols: vec![Symbol {
                        kind: "impl".into(),
                        name: "impl Display for A".into(),
                        line: 3,
                        public: false,
                        doc: 3,
                    }],
                    uses: vec!["A".into(), "Display".into()],
                    imports: vec![Link {
                        from: "crate::fmt".into(),
                        name: "Display".into(),
                    }],
                    exports: vec![Link {
                        from: String::new(),
                        name: "a".into(),
                    }],
                    mentions: vec!["A".into(), "spawn".into()],
                },
            },
        );
        let path = dir.path().join("x.idx");
        save(&path, &index).unwrap();
        assert_eq!(load(&path), Some(index));
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(load(&path), None);
    }
}
