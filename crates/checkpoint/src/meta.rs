//! What a checkpoint records about itself, and where: every snapshot is one commit whose
//! message carries its id, turn, tool, time and note, under `refs/atto/checkpoints/<id>`.
//! Listing therefore needs nothing but the side repository. This module formats and parses
//! those messages and refs; it runs no git command itself.

/// Where snapshot refs live; one ref per snapshot, the id zero-padded so names sort by id.
pub(crate) const REF_PREFIX: &str = "refs/atto/checkpoints/";

/// The `for-each-ref` format that [`parse_refs`] reads: fields split by NUL, records by 0x1e.
pub(crate) const REF_FORMAT: &str =
    "%(refname:lstrip=3)%00%(objectname)%00%(tree)%00%(contents)%1e";

/// The ref name of snapshot `id`.
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
    pub(crate) note: String,
    pub(crate) created_at_ms: i64,
}

/// The commit message for a snapshot.
pub(crate) fn message(id: u32, turn: u32, tool: Option<&str>, note: &str, now_ms: i64) -> String {
    let tool = tool.map(single_line).unwrap_or_default();
    format!(
        "atto checkpoint {id}\n\natto-id: {id}\natto-turn: {turn}\natto-tool: {tool}\natto-time-ms: {now_ms}\n\n{}\n",
        clean_note(note)
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
            let (turn, tool, note, created_at_ms) = parse_message(fields.next()?)?;
            Some(Entry {
                id,
                commit,
                tree,
                turn,
                tool,
                note,
                created_at_ms,
            })
        })
        .collect()
}

fn parse_message(msg: &str) -> Option<(u32, Option<String>, String, i64)> {
    let mut lines = msg.lines();
    // Subject and blank line.
    lines.next()?;
    lines.next()?;
    let (mut turn, mut tool, mut time) = (None, None, None);
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
            _ => {}
        }
    }
    let note = lines.collect::<Vec<_>>().join("\n").trim_end().to_owned();
    Some((turn?, tool?, note, time?))
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
        let msg = message(
            7,
            3,
            Some("write\nfile"),
            "before\x01 edit\nline two",
            1_700,
        );
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
                note: "before edit\nline two".into(),
                created_at_ms: 1_700,
            }]
        );
    }

    #[test]
    fn no_tool_and_empty_note_parse() {
        let msg = message(1, 0, None, "", 5);
        let raw = format!("0000000001\0a\0b\0{msg}\u{1e}\n");
        let e = &parse_refs(raw.as_bytes())[0];
        assert_eq!((e.tool.clone(), e.note.as_str()), (None, ""));
        assert_eq!(ref_name(12), "refs/atto/checkpoints/0000000012");
    }
}
