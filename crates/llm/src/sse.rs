//! Server-sent events decoding: bytes in, `(event, data)` pairs out.
//!
//! Owns the SSE line grammar (LF, CRLF and lone CR line ends, comments, multi-line data).
//! As the standard says, an event is dispatched by the blank line that ends it. A last
//! event without one is dispatched at the end of the stream only when its data is whole
//! JSON (streams recorded from the official SDKs end so after their final event, and the
//! SDKs accept them); anything else is discarded, so a stream cut inside an event never
//! yields a half-received event. It is pure and byte-buffered: a chunk may end
//! anywhere, even inside a UTF-8 character or between the CR and LF of one line end.
//! It does not know what the events mean; `wire::*` interprets them.
//!
//! Cost is linear in the input: every byte is scanned once, and only the unfinished tail
//! of a line is copied between chunks. Memory is bounded: a line or an event's data past
//! [`MAX_EVENT_BYTES`] ends the stream with [`EventTooLarge`] instead of being held.

/// The most bytes one line, or the data of one event, may hold. Model events carry at most
/// one reply (a Responses `response.completed` repeats the whole reply), far below this.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// A line or an event grew past [`MAX_EVENT_BYTES`]; the decoder refuses everything after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a server-sent event grew past the {} MiB limit without ending; the rest of the stream was not read",
    MAX_EVENT_BYTES >> 20
)]
pub struct EventTooLarge;

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, if the event had one.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental SSE decoder; feed it chunks as they arrive, then call [`SseDecoder::finish`].
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// The previous chunk ended with CR: a LF at the start of the next one belongs to it.
    after_cr: bool,
    /// Whether the first line was seen (a UTF-8 BOM is only skipped there).
    started: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    /// A limit was passed: the stream is refused from there on.
    too_large: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Decodes `chunk`, appending every event completed by it to `out`. Fails, now and
    /// for every later chunk, once a line or an event's data passes [`MAX_EVENT_BYTES`].
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), EventTooLarge> {
        if self.too_large {
            return Err(EventTooLarge);
        }
        let fed = self.feed_lines(chunk, out);
        self.too_large = fed.is_err();
        fed
    }

    fn feed_lines(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), EventTooLarge> {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let line = &rest[..end];
            let terminator = rest[end];
            let mut next = end + 1;
            if terminator == b'\r' {
                match rest.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            if self.partial.is_empty() {
                self.line(line, out)?;
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                if whole.len() + line.len() > MAX_EVENT_BYTES {
                    return Err(EventTooLarge);
                }
                whole.extend_from_slice(line);
                self.line(&whole, out)?;
                whole.clear();
                // Keep the allocation for the next split line.
                self.partial = whole;
            }
            rest = &rest[next..];
        }
        if self.partial.len() + rest.len() > MAX_EVENT_BYTES {
            return Err(EventTooLarge);
        }
        self.partial.extend_from_slice(rest);
        Ok(())
    }

    /// Ends the stream. An event still unterminated (no blank line after it) is
    /// appended to `out` when its data is a complete JSON value (or chat's `[DONE]`): the whole event arrived,
    /// only its blank line did not. Anything else unterminated may be cut short and is
    /// discarded. Returns whether anything was discarded.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> bool {
        if !self.partial.is_empty() && !self.too_large {
            let last = std::mem::take(&mut self.partial);
            // `feed` held it, so it is within the limit; so is the data it adds to.
            self.too_large = self.line(&last, out).is_err();
        }
        // Chat Completions ends its stream with the literal `[DONE]`, not JSON.
        let whole_json = self.has_data
            && !self.too_large
            && (self.data == "[DONE]"
                || serde_json::from_str::<serde::de::IgnoredAny>(&self.data).is_ok());
        let discarded = if whole_json {
            self.dispatch(out);
            false
        } else {
            self.has_data || self.event.is_some()
        };
        self.partial.clear();
        self.event = None;
        self.data.clear();
        self.has_data = false;
        self.after_cr = false;
        discarded
    }

    fn line(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), EventTooLarge> {
        if line.len() > MAX_EVENT_BYTES {
            return Err(EventTooLarge);
        }
        if !self.started {
            self.started = true;
            if let Some(stripped) = line.strip_prefix("\u{feff}".as_bytes()) {
                line = stripped;
            }
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return Err(EventTooLarge);
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            // `id:` and `retry:` matter for reconnection, which atto never does: a cut
            // model stream is retried as a whole request.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(input: &[u8]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(input, &mut out).unwrap();
        d.finish(&mut out);
        out
    }

    fn bytewise(input: &[u8]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for b in input {
            d.feed(std::slice::from_ref(b), &mut out).unwrap();
        }
        d.finish(&mut out);
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
        }
    }

    #[test]
    fn utf8_character_split_over_chunks_survives() {
        let input = "data: a€b\n\n".as_bytes();
        assert_eq!(bytewise(input), vec![ev(None, "a€b")]);
        // Split right inside the 3-byte euro sign.
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(&input[..8], &mut out).unwrap();
        assert!(out.is_empty());
        d.feed(&input[8..], &mut out).unwrap();
        assert_eq!(out, vec![ev(None, "a€b")]);
    }

    #[test]
    fn all_line_endings_decode_alike() {
        let lf = "event: x\ndata: 1\n\ndata: 2\n\n";
        let crlf = lf.replace('\n', "\r\n");
        let cr = lf.replace('\n', "\r");
        let want = vec![ev(Some("x"), "1"), ev(None, "2")];
        for input in [lf.to_owned(), crlf, cr] {
            assert_eq!(whole(input.as_bytes()), want, "{input:?}");
            assert_eq!(bytewise(input.as_bytes()), want, "{input:?}");
        }
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(b"data: a\r", &mut out).unwrap();
        d.feed(b"\n\r", &mut out).unwrap();
        d.feed(b"\ndata: b\r\n\r\n", &mut out).unwrap();
        d.finish(&mut Vec::new());
        // Had the LF after the chunk-final CR counted as a second line end, "a" would
        // have been dispatched on its own before the blank line; it is, once, either way,
        // but "b" must not be merged into it.
        assert_eq!(out, vec![ev(None, "a"), ev(None, "b")]);
    }

    #[test]
    fn lone_cr_then_lf_in_next_chunk_does_not_make_a_blank_line() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(b"data: a\r", &mut out).unwrap();
        d.feed(b"\ndata: b\n\n", &mut out).unwrap();
        assert_eq!(out, vec![ev(None, "a\nb")]);
    }

    #[test]
    fn comments_are_ignored_and_do_not_dispatch() {
        let input = b": keepalive\n\ndata: x\n: another\ndata: y\n\n:ping\n\n";
        assert_eq!(whole(input), vec![ev(None, "x\ny")]);
    }

    #[test]
    fn multi_line_data_joined_and_one_leading_space_stripped() {
        let input = b"data:no-space\ndata:  two-spaces\ndata\n\n";
        assert_eq!(whole(input), vec![ev(None, "no-space\n two-spaces\n")]);
    }

    #[test]
    fn last_event_without_its_blank_line_is_dispatched_only_when_whole() {
        assert_eq!(whole(b"data: a\n\ndata: b"), vec![ev(None, "a")]);
        assert_eq!(whole(b"data: a\n"), vec![]);
        assert_eq!(whole(b"data: a\r"), vec![]);
        assert_eq!(
            whole(b"data: a\r\n\r\ndata: [DONE]\r\n"),
            vec![ev(None, "a"), ev(None, "[DONE]")]
        );
        assert_eq!(whole(b"data: a\r\n\r\ndata: [DON"), vec![ev(None, "a")]);
    }

    #[test]
    fn event_name_resets_after_dispatch_and_events_without_data_are_dropped() {
        let input = b"event: a\n\nevent: b\ndata: 1\n\ndata: 2\n\n";
        assert_eq!(whole(input), vec![ev(Some("b"), "1"), ev(None, "2")]);
    }

    #[test]
    fn id_retry_and_unknown_fields_are_ignored() {
        let input = b"id: 7\nretry: 100\nfoo: bar\ndata: x\n\n";
        assert_eq!(whole(input), vec![ev(None, "x")]);
    }

    #[test]
    fn leading_bom_is_skipped() {
        assert_eq!(whole("\u{feff}data: x\n\n".as_bytes()), vec![ev(None, "x")]);
    }

    #[test]
    fn any_chunking_equals_whole_feeding() {
        let input = "event: message_start\r\ndata: {\"t\":\"héllo 👋\"}\r\n\r\n: ka\rdata: x\r\rdata: y\ndata: z\n\ndata: end"
            .as_bytes();
        let want = whole(input);
        assert_eq!(
            want.len(),
            3,
            "the unterminated last event is not dispatched"
        );
        assert_eq!(bytewise(input), want);
        for size in 2..input.len() {
            let mut d = SseDecoder::new();
            let mut out = Vec::new();
            for chunk in input.chunks(size) {
                d.feed(chunk, &mut out).unwrap();
            }
            d.finish(&mut out);
            assert_eq!(out, want, "chunk size {size}");
        }
    }

    #[test]
    fn a_last_event_without_its_blank_line_is_dispatched_when_its_json_is_whole() {
        let input = b"event: message_stop\ndata: {\"type\":\"message_stop\"}";
        let want = vec![ev(Some("message_stop"), "{\"type\":\"message_stop\"}")];
        assert_eq!(whole(input), want);
        assert_eq!(bytewise(input), want);
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(b"data: {\"a\":1}\n", &mut out).unwrap();
        assert!(
            !d.finish(&mut out),
            "a whole event is not reported as discarded"
        );
        assert_eq!(out, vec![ev(None, "{\"a\":1}")]);
    }

    #[test]
    fn a_last_event_cut_inside_its_json_is_discarded() {
        for input in [
            &b"data: {\"type\":\"message_st"[..],
            b"data: {\"a\":1}\ndata: {\"b\"",
            b"event: ping\n",
        ] {
            let mut d = SseDecoder::new();
            let mut out = Vec::new();
            d.feed(input, &mut out).unwrap();
            assert!(d.finish(&mut out), "{:?}", String::from_utf8_lossy(input));
            assert!(out.is_empty(), "{out:?}");
        }
    }

    #[test]
    fn an_event_of_many_short_data_lines_is_refused_at_the_limit_and_after() {
        let line = format!("data: {}\n", "x".repeat(1023));
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let mut refused_at = None;
        for i in 0..(20 << 10) {
            if d.feed(line.as_bytes(), &mut out).is_err() {
                refused_at = Some(i);
                break;
            }
        }
        assert_eq!(refused_at, Some(16 << 10), "refused after 16 MiB of data");
        assert!(d.data.len() <= MAX_EVENT_BYTES);
        assert_eq!(d.feed(b"\n\n", &mut out), Err(EventTooLarge));
        assert!(out.is_empty());
    }
}
