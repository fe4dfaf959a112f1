//! What a checkpoint records about itself, and where: every snapshot is one commit whose
//! message carries its turn, tool, session, time and note, under `refs/atto/checkpoints/<id>`
//! (the ref name is the id; messages written before sessions were recorded also repeat it).
//! Listing therefore needs nothing but the side repository. This module formats and parses
//! those messages and refs; it runs no git command itself.

/// Where snapshot refs live; one ref per snapshot, the id zero-padded so names sort by id.
pub(crate) const REF_PREFIX: &str = "refs/atto/checkpoints/";

/// The `for-each-ref` format that [`parse_refs`] reads: fields split by NUL, records by 0x1e.
pub(crate) const REF_FORMAT: &str =
    "%(refname:lstrip=3)%00%(objectname)%00%(tree)%00%(contents)%1e";

/// The ref name of snapshot `id`.
/// The highest snapshot id any process has claimed in the side repository at `side`, read
/// from the ref files themselves (loose and packed) without a git process: where the next
/// claim starts, so that writers rarely collide.
pub(crate) fn highest_claimed(side: &std::path::Path) -> Option<u32> {
    let id_of = |name: &str| name.parse::<u32>().ok();
    let loose = std::fs::read_dir(side.join(REF_PREFIX.trim_end_matches('/')))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| id_of(e.file_name().to_str()?));
    let packed_text = std::fs::read_to_string(side.join("packed-refs")).unwrap_or_default();
    let packed = packed_text
        .lines()
        .filter_map(|l| l.split_once(' ')?.1.strip_prefix(REF_PREFIX))
        .filter_map(id_of);
    loose.chain(packed).max()
}

pub(crate) fn ref_name(id: u32) -> String {
    format!("{REF_PREFIX}{id:010}")
}

/// One stored snapshot as read back from the side repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) id: u32,
    pub(crate) commit: String,
    pub(crate) tree: String,
    pub(crate) turn: u32,
    pub(crate) tool: Option<String>,
    /// The session that took it; `None` for snapshots taken before sessions were recorded.
    pub(crate) session: Option<String>,
    pub(crate) note: String,
    pub(crate) created_at_ms: i64,
    /// Directories with no file in the tree (see `walk`), relative, as bytes.
    pub(crate) empty_dirs: Vec<Vec<u8>>,
    /// How the snapshot learned what changed (see [`Message::scan`]); empty for snapshots
    /// recorded before this was.
    pub(crate) scan: String,
}

/// What a snapshot's commit message records besides its tree.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Message<'a> {
    pub(crate) turn: u32,
    pub(crate) tool: Option<&'a str>,
    pub(crate) session: Option<&'a str>,
    pub(crate) note: &'a str,
    pub(crate) now_ms: i64,
    pub(crate) empty_dirs: &'a [Vec<u8>],
    /// How the workspace was looked at: a walk of every file (and why the watcher could not
    /// answer), or the watcher's list of changed paths.
    pub(crate) scan: &'a str,
}

/// The commit message for a snapshot. It holds no id, so one commit can be offered under a
/// new id when another process took the one tried first.
pub(crate) fn message(m: Message<'_>) -> String {
    let tool = m.tool.map(single_line).unwrap_or_default();
    let session = m
        .session
        .map(|s| format!("atto-session: {}\n", single_line(s)))
        .unwrap_or_default();
    let dirs: String = m
        .empty_dirs
        .iter()
        .map(|d| format!("atto-empty-dir: {}\n", escape(d)))
        .collect();
    format!(
        "atto checkpoint\n\natto-turn: {}\natto-tool: {tool}\n{session}{dirs}atto-scan: {}\n\
         atto-time-ms: {}\n\n{}\n",
        m.turn,
        single_line(m.scan),
        m.now_ms,
        clean_note(m.note)
    )
}

/// Parses `for-each-ref --format=REF_FORMAT` output. Records that do not parse are skipped:
/// only this crate writes these refs, so a stray one is not worth failing a listing over.
pub(crate) fn parse_refs(out: &[u8]) -> Vec<Entry> {
    let text = String::from_utf8_lossy(out);
    text.split('\u{1e}')
        .filter_map(|record| {
            let record = record.trim_start_matches('\n');
            let mut fields = record.splitn(4, '\0');
            let id = fields.next()?.parse().ok()?;
            let commit = fields.next()?.to_owned();
            let tree = fields.next()?.to_owned();
            let parsed = parse_message(fields.next()?)?;
            Some(Entry {
                id,
                commit,
                tree,
                turn: parsed.turn,
                tool: parsed.tool,
                session: parsed.session,
                note: parsed.note,
                created_at_ms: parsed.created_at_ms,
                empty_dirs: parsed.empty_dirs,
                scan: parsed.scan,
            })
        })
        .collect()
}

/// A commit message read back.
struct Parsed {
    turn: u32,
    tool: Option<String>,
    session: Option<String>,
    note: String,
    created_at_ms: i64,
    empty_dirs: Vec<Vec<u8>>,
    scan: String,
}

fn parse_message(msg: &str) -> Option<Parsed> {
    let mut lines = msg.lines();
    // Subject and blank line.
    lines.next()?;
    lines.next()?;
    let (mut turn, mut tool, mut time, mut session) = (None, None, None, None);
    let mut empty_dirs = Vec::new();
    let mut scan = String::new();
    for line in lines.by_ref() {
        if line.is_empty() {
            break;
        }
        let (key, value) = line
            .split_once(": ")
            .unwrap_or((line.trim_end_matches(':'), ""));
        match key {
            "atto-turn" => turn = value.parse().ok(),
            "atto-tool" => tool = Some((!value.is_empty()).then(|| value.to_owned())),
            "atto-time-ms" => time = value.parse().ok(),
            "atto-session" if !value.is_empty() => session = Some(value.to_owned()),
            "atto-empty-dir" => empty_dirs.extend(unescape(value)),
            "atto-scan" => scan = value.to_owned(),
            _ => {}
        }
    }
    let note = lines.collect::<Vec<_>>().join("\n").trim_end().to_owned();
    Some(Parsed {
        turn: turn?,
        tool: tool?,
        session,
        note,
        created_at_ms: time?,
        empty_dirs,
        scan,
    })
}

/// A path as one line of ASCII: `%XX` for every byte but letters, digits and `-._/`.
fn escape(path: &[u8]) -> String {
    path.iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"-._/".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// [`escape`] reversed; `None` for text it cannot have written.
fn unescape(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    (!out.is_empty()).then_some(out)
}

fn single_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_owned()
}

/// Control characters other than newline and tab would break the record format.
fn clean_note(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect::<String>()
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_round_trips_through_ref_format() {
        let msg = message(Message {
            turn: 3,
            tool: Some("write\nfile"),
            session: Some("s-1\n"),
            note: "before\x01 edit\nline two",
            now_ms: 1_700,
            empty_dirs: &[b"empty".to_vec(), b"odd %\n\xff/x".to_vec()],
            scan: "watcher (2 paths)",
        });
        let raw = format!("0000000007\0c0ffee\0beef\0{msg}\u{1e}\n");
        let entries = parse_refs(raw.as_bytes());
        assert_eq!(
            entries,
            vec![Entry {
                id: 7,
                commit: "c0ffee".into(),
                tree: "beef".into(),
                turn: 3,
                tool: Some("write file".into()),
                session: Some("s-1".into()),
                note: "before edit\nline two".into(),
                created_at_ms: 1_700,
                empty_dirs: vec![b"empty".to_vec(), b"odd %\n\xff/x".to_vec()],
                scan: "watcher (2 paths)".into(),
            }]
        );
    }

    #[test]
    fn no_tool_and_empty_note_parse() {
        let msg = message(Message {
            turn: 0,
            tool: None,
            session: None,
            note: "",
            now_ms: 5,
            empty_dirs: &[],
            scan: "",
        });
        let raw = format!("0000000001\0a\0b\0{msg}\u{1e}\n");
        let e = &parse_refs(raw.as_bytes())[0];
        assert_eq!(
            (e.tool.clone(), e.session.clone(), e.note.as_str()),
            (None, None, "")
        );
        assert_eq!(ref_name(12), "refs/atto/checkpoints/0000000012");
    }

    /// Side repositories on users' machines hold messages from before sessions were recorded.
    #[test]
    fn messages_written_by_older_versions_still_parse() {
        let old = "atto checkpoint 4\n\natto-id: 4\natto-turn: 2\natto-tool: bash\natto-time-ms: 9\n\nnote\n";
        let raw = format!("0000000004\0a\0b\0{old}\u{1e}\n");
        let e = &parse_refs(raw.as_bytes())[0];
        assert_eq!((e.id, e.turn, e.session.clone()), (4, 2, None));
        assert_eq!((e.tool.as_deref(), e.note.as_str()), (Some("bash"), "note"));
    }
}
