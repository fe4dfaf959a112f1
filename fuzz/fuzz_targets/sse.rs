//! SSE framing: any bytes, fed whole and in pieces cut at fuzzer-chosen points, give the
//! same events, and the decoder holds no more than its limit.
#![no_main]

use atto_llm::sse::{MAX_EVENT_BYTES, SseDecoder, SseEvent};
use libfuzzer_sys::fuzz_target;

fn decode<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> (Vec<SseEvent>, bool, bool) {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    let mut refused = false;
    for piece in pieces {
        if d.feed(piece, &mut out).is_err() {
            refused = true;
            break;
        }
    }
    let discarded = !refused && d.finish(&mut out);
    (out, refused, discarded)
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else {
        return;
    };
    let whole = decode([stream]);
    // Pieces of a fuzzer-chosen size, and one byte at a time (CR/LF and UTF-8 splits).
    let size = usize::from(cut) + 1;
    assert_eq!(whole, decode(stream.chunks(size)), "chunks of {size}");
    assert_eq!(whole, decode(stream.chunks(1)), "bytewise");
    for event in &whole.0 {
        assert!(event.data.len() <= MAX_EVENT_BYTES);
        assert!(
            !event.data.contains('\r'),
            "a line end inside data: {event:?}"
        );
    }
});
