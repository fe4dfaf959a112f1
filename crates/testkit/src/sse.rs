//! Server-sent events: rendering events with the script's [`StreamOptions`] and writing
//! them as a chunked HTTP body, with stream faults (cut, malformed line, error event)
//! applied at event positions.
//!
//! Owns framing and fault placement, not event content: `wire::*` decides what events a
//! reply becomes and what a malformed or error event looks like for its provider.

use std::io;

use tokio::io::AsyncWrite;

use crate::http::ChunkedWriter;
use crate::script::StreamOptions;

/// One SSE event: an optional `event:` name and a `data:` payload (one line).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SseEvent {
    pub name: Option<String>,
    pub data: String,
}

impl SseEvent {
    /// An event with only a `data:` line.
    pub fn data(data: impl Into<String>) -> SseEvent {
        SseEvent {
            name: None,
            data: data.into(),
        }
    }

    /// An event with `event:` and `data:` lines.
    pub fn named(name: impl Into<String>, data: impl Into<String>) -> SseEvent {
        SseEvent {
            name: Some(name.into()),
            data: data.into(),
        }
    }

    /// The event's text, with or without its terminating blank line.
    fn render(&self, opts: &StreamOptions, terminated: bool) -> String {
        let le = opts.line_ending.as_str();
        let mut out = String::new();
        if let Some(name) = &self.name {
            out.push_str("event: ");
            out.push_str(name);
            out.push_str(le);
        }
        out.push_str("data: ");
        out.push_str(&self.data);
        out.push_str(le);
        if terminated {
            out.push_str(le);
        }
        out
    }
}

/// Render the events into per-event byte blocks, keepalive comments attached in front of
/// every event but the first.
fn render_all(events: &[SseEvent], opts: &StreamOptions) -> Vec<Vec<u8>> {
    let le = opts.line_ending.as_str();
    let last = events.len().saturating_sub(1);
    events
        .iter()
        .enumerate()
        .map(|(i, ev)| {
            let mut text = String::new();
            if opts.keepalive_comments && i > 0 {
                text.push_str(": keepalive");
                text.push_str(le);
                text.push_str(le);
            }
            let terminated = !(opts.no_trailing_newline && i == last);
            text.push_str(&ev.render(opts, terminated));
            text.into_bytes()
        })
        .collect()
}

/// Write `events` as the body of a chunked `text/event-stream` response. With
/// `cut_after`, only that many events are sent before the connection is cut mid-chunk.
pub(crate) async fn write_stream<W: AsyncWrite + Unpin>(
    w: &mut W,
    events: &[SseEvent],
    opts: &StreamOptions,
    cut_after: Option<usize>,
) -> io::Result<()> {
    let blocks = render_all(events, opts);
    let send_count = cut_after.map_or(blocks.len(), |n| n.min(blocks.len()));
    let mut body = ChunkedWriter::start(w, "text/event-stream").await?;
    match opts.chunk_bytes {
        Some(size) => {
            let bytes: Vec<u8> = blocks[..send_count].concat();
            for piece in bytes.chunks(size.max(1)) {
                body.chunk(piece).await?;
            }
        }
        None => {
            for block in &blocks[..send_count] {
                body.chunk(block).await?;
            }
        }
    }
    match cut_after {
        Some(_) => {
            // Announce the next event's chunk but send only half of it, then close: the
            // client gets neither a complete event nor the terminating empty chunk.
            let next = blocks
                .get(send_count)
                .cloned()
                .unwrap_or_else(|| b"data: {\"cut\":".to_vec());
            let half = next.len() / 2;
            body.cut(next.len(), &next[..half]).await
        }
        None => body.finish().await,
    }
}

/// Write `body` verbatim as a chunked `text/event-stream` response, in pieces of
/// `opts.chunk_bytes` when set.
pub(crate) async fn write_raw<W: AsyncWrite + Unpin>(
    w: &mut W,
    body: &[u8],
    opts: &StreamOptions,
) -> io::Result<()> {
    let mut out = ChunkedWriter::start(w, "text/event-stream").await?;
    for piece in body.chunks(opts.chunk_bytes.unwrap_or(body.len()).max(1)) {
        out.chunk(piece).await?;
    }
    out.finish().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::LineEnding;

    fn opts() -> StreamOptions {
        StreamOptions::default()
    }

    #[test]
    fn renders_named_and_data_events() {
        let blocks = render_all(
            &[SseEvent::named("ping", "{}"), SseEvent::data("[DONE]")],
            &opts(),
        );
        assert_eq!(blocks[0], b"event: ping\ndata: {}\n\n");
        assert_eq!(blocks[1], b"data: [DONE]\n\n");
    }

    #[test]
    fn applies_line_endings_keepalives_and_missing_trailing_newline() {
        let o = StreamOptions {
            line_ending: LineEnding::Crlf,
            keepalive_comments: true,
            no_trailing_newline: true,
            chunk_bytes: None,
        };
        let blocks = render_all(&[SseEvent::data("a"), SseEvent::named("e", "b")], &o);
        assert_eq!(blocks[0], b"data: a\r\n\r\n");
        assert_eq!(blocks[1], b": keepalive\r\n\r\nevent: e\r\ndata: b\r\n");
        let cr = StreamOptions {
            line_ending: LineEnding::Cr,
            ..opts()
        };
        assert_eq!(render_all(&[SseEvent::data("a")], &cr)[0], b"data: a\r\r");
    }
}
