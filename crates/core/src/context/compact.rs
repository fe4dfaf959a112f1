//! Compacting a conversation, as pure functions over its messages: where the verbatim
//! tail starts, the transcript a summariser reads, the compacted conversation's first
//! message (pins, then the summary), and the fallback that elides old tool outputs,
//! oldest first, when there is no usable summary.
//!
//! Nothing here deletes: the caller stores the result as a new thread version and the
//! original messages stay where they were.

use atto_protocol::{AssistantPart, Message};

use super::message_bytes;
use crate::truncate::head_and_tail;

/// How a compacted conversation's first message begins; an earlier compaction is
/// recognised by it.
const MARK: &str = "[atto] The earlier part of this conversation was compacted";

/// Whether a user message's context is a compaction's first message.
pub(crate) fn is_compacted_context(context: &str) -> bool {
    context.starts_with(MARK)
}

/// The context of a compacted conversation's first message: what it replaces, the pins,
/// then the summary (none in the fallback, where the old messages stay with their tool
/// outputs elided).
pub(crate) fn compacted_context(pinned: &str, summary: Option<&str>, replaced: usize) -> String {
    let how = match summary {
        Some(_) => format!(
            "{MARK}: {replaced} older messages are summarised below (the originals are kept in \
             the session store). Everything in <pinned> is current and verbatim; it overrides \
             the summary."
        ),
        None => format!(
            "{MARK}: old tool outputs were elided to make room ({replaced} messages kept, the \
             originals are in the session store). Everything in <pinned> is current and \
             verbatim."
        ),
    };
    match summary {
        Some(summary) => format!(
            "{how}\n{pinned}\n<summary>\n{}\n</summary>",
            as_data(summary.trim())
        ),
        None => format!("{how}\n{pinned}"),
    }
}

/// The summary (the model's words) as data inside its block: the tags that delimit the
/// summary and the pins lose their `<`, so the summary can neither close its block nor
/// open one that would pass for atto's.
fn as_data(summary: &str) -> String {
    const TAGS: [&str; 4] = ["<summary>", "</summary>", "<pinned>", "</pinned>"];
    let mut out = String::with_capacity(summary.len());
    let mut rest = summary;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let is_tag = TAGS.iter().any(|t| {
            tail.get(..t.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(t))
        });
        out.push_str(if is_tag { "&lt;" } else { "<" });
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}

/// The index where the verbatim tail starts: the newest messages that fit in
/// `keep_bytes` (at least the last one), moved back so a tool result is never separated
/// from the call it answers. 0 means there is nothing older to compact.
pub(crate) fn tail_start(history: &[Message], keep_bytes: u64) -> usize {
    let mut start = history.len();
    let mut kept = 0u64;
    while start > 0 {
        let size = message_bytes(&history[start - 1]);
        if kept + size > keep_bytes && start < history.len() {
            break;
        }
        kept += size;
        start -= 1;
    }
    // Tool results belong with the assistant message before them.
    while start > 0 && matches!(history[start], Message::ToolResult(_)) {
        start -= 1;
    }
    start
}

/// The messages in `old` as a transcript for the summariser, at most `max_bytes`: the
/// newest part when it is longer (an earlier compaction's first message, which holds the
/// earlier summary, always leads). Tool outputs are cut to their head and tail.
pub(crate) fn transcript(old: &[Message], max_bytes: usize) -> String {
    let mut entries: Vec<String> = old.iter().map(entry).collect();
    let lead = match old.first() {
        Some(Message::User {
            context: Some(c), ..
        }) if is_compacted_context(c) => Some(entries.remove(0)),
        _ => None,
    };
    let budget = max_bytes.saturating_sub(lead.as_ref().map_or(0, String::len));
    let mut used = 0;
    let mut keep = entries.len();
    while keep > 0 && used + entries[keep - 1].len() < budget {
        used += entries[keep - 1].len();
        keep -= 1;
    }
    let mut out = String::new();
    if let Some(lead) = lead {
        out.push_str(&lead);
    }
    if keep > 0 {
        out.push_str(&format!("[... {keep} older messages not shown ...]\n"));
    }
    for e in &entries[keep..] {
        out.push_str(e);
    }
    out
}

/// One message of a transcript.
fn entry(message: &Message) -> String {
    match message {
        Message::User { text, context } => {
            let context = context.as_deref().unwrap_or("");
            if is_compacted_context(context) {
                format!("EARLIER COMPACTION:\n{context}\n\n")
            } else if text.is_empty() {
                format!("ATTO NOTE: {}\n\n", head_and_tail(context, 600))
            } else {
                format!("USER: {text}\n\n")
            }
        }
        Message::Assistant { parts } => {
            let mut out = String::new();
            for part in parts {
                match part {
                    AssistantPart::Text { text } => out.push_str(&format!("ASSISTANT: {text}\n")),
                    AssistantPart::ToolCall(c) => out.push_str(&format!(
                        "TOOL CALL {}: {}\n",
                        c.name,
                        head_and_tail(&c.arguments, 400)
                    )),
                    AssistantPart::Thinking { .. } | AssistantPart::RedactedThinking { .. } => {}
                }
            }
            out.push('\n');
            out
        }
        Message::ToolResult(r) => format!(
            "TOOL RESULT {}{}:\n{}\n\n",
            r.name,
            if r.is_error { " (error)" } else { "" },
            head_and_tail(&r.content, 800)
        ),
    }
}

/// The words of an elided tool output.
fn elided(name: &str, bytes: usize) -> String {
    format!(
        "[atto: this output of {name} ({bytes} bytes) was elided to save context; the original \
         is kept in the session store. Run the tool again if you need it.]"
    )
}

/// The fallback: elides tool outputs in `history`, oldest first and never in the last
/// `protect` messages, then cuts old long texts to their head and tail, until the history
/// is at most `target_bytes`. Returns how many messages it changed.
pub(crate) fn elide_oldest(history: &mut [Message], target_bytes: u64, protect: usize) -> usize {
    let mut total: u64 = history.iter().map(message_bytes).sum();
    let end = history.len().saturating_sub(protect);
    let mut changed = 0;
    for message in history[..end].iter_mut() {
        if total <= target_bytes {
            return changed;
        }
        if let Message::ToolResult(r) = message {
            let note = elided(&r.name, r.content.len());
            if note.len() < r.content.len() {
                let before = message_bytes(message);
                if let Message::ToolResult(r) = message {
                    r.content = note;
                }
                total = total - before + message_bytes(message);
                changed += 1;
            }
        }
    }
    const LONG: usize = 2_000;
    for message in history[..end].iter_mut() {
        if total <= target_bytes {
            break;
        }
        let before = message_bytes(message);
        let cut = match message {
            Message::User { text, .. } if text.len() > LONG => {
                *text = head_and_tail(text, LONG);
                true
            }
            Message::Assistant { parts } => {
                let mut any = false;
                for part in parts.iter_mut() {
                    if let AssistantPart::Text { text } = part
                        && text.len() > LONG
                    {
                        *text = head_and_tail(text, LONG);
                        any = true;
                    }
                }
                any
            }
            _ => false,
        };
        if cut {
            total = total - before + message_bytes(message);
            changed += 1;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use atto_protocol::{ToolCall, ToolResult};

    fn call(id: &str) -> Message {
        Message::Assistant {
            parts: vec![AssistantPart::ToolCall(ToolCall {
                id: id.into(),
                name: "bash".into(),
                arguments: "{}".into(),
            })],
        }
    }

    fn result(id: &str, bytes: usize) -> Message {
        Message::ToolResult(ToolResult {
            call_id: id.into(),
            name: "bash".into(),
            content: "x".repeat(bytes),
            is_error: false,
        })
    }

    #[test]
    fn the_tail_never_starts_at_a_tool_result() {
        let history = vec![
            Message::user("go"),
            call("a"),
            result("a", 1000),
            call("b"),
            result("b", 1000),
        ];
        // Room for the last result only: the tail moves back to its call.
        assert_eq!(tail_start(&history, 1100), 3);
        assert_eq!(tail_start(&history, 0), 3);
        assert_eq!(tail_start(&history, u64::MAX), 0);
    }

    #[test]
    fn elision_takes_the_oldest_outputs_first_and_spares_the_tail() {
        let mut history = vec![
            Message::user("go"),
            call("a"),
            result("a", 5000),
            call("b"),
            result("b", 5000),
            call("c"),
            result("c", 5000),
        ];
        let changed = elide_oldest(&mut history, 11_000, 2);
        assert_eq!(changed, 1);
        let Message::ToolResult(a) = &history[2] else {
            panic!()
        };
        assert!(a.content.contains("elided"), "{}", a.content);
        let Message::ToolResult(b) = &history[4] else {
            panic!()
        };
        assert_eq!(b.content.len(), 5000);
        // However tight the target, the protected tail keeps its output.
        elide_oldest(&mut history, 0, 2);
        let Message::ToolResult(c) = &history[6] else {
            panic!()
        };
        assert_eq!(c.content.len(), 5000);
    }

    #[test]
    fn a_long_transcript_keeps_the_earlier_summary_and_the_newest_messages() {
        let first = Message::User {
            text: String::new(),
            context: Some(compacted_context(
                "<pinned>\n</pinned>",
                Some("SUMMARY-1"),
                9,
            )),
        };
        let mut old = vec![first];
        for i in 0..100 {
            old.push(Message::user(format!("prompt number {i}")));
        }
        let t = transcript(&old, 600);
        assert!(t.contains("SUMMARY-1"));
        assert!(t.contains("prompt number 99"));
        assert!(!t.contains("prompt number 1\n"));
        assert!(t.contains("older messages not shown"));
    }
}
