//! Input builders the fuzz targets share: JSON values drawn from a dictionary of the keys
//! and words a format uses, so the fuzzer reaches a decoder's deep states (valid framing,
//! hostile content) instead of stopping at the parser's first syntax error; and the model
//! stream decoding every wire target runs, with the properties that hold on every wire.
//!
//! It holds no parser of its own: each target calls the product's function.

use arbitrary::{Result, Unstructured};
use atto_llm::{ModelError, ModelResponse, StreamUpdate, Wire};
use atto_protocol::AssistantPart;
use serde_json::{Map, Value};

/// How deep a generated value nests (deeper nesting has its own unit tests).
const MAX_DEPTH: usize = 6;

/// A JSON value whose object keys and many strings come from `words`.
pub fn json(u: &mut Unstructured<'_>, words: &[&str], depth: usize) -> Result<Value> {
    let last = if depth >= MAX_DEPTH { 6 } else { 8 };
    Ok(match u.int_in_range(0..=last)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        // Small numbers: indexes and counts, where off-by-one bugs live.
        2 => Value::from(u.int_in_range(-2i64..=4)?),
        3 => Value::from(u.arbitrary::<i64>()?),
        4 => Value::from(u.arbitrary::<f64>()?),
        5 => Value::String(u.arbitrary()?),
        6 => Value::String(word(u, words)?),
        7 => {
            let n = u.int_in_range(0..=3)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(json(u, words, depth + 1)?);
            }
            Value::Array(items)
        }
        _ => object(u, words, depth + 1)?,
    })
}

/// A JSON object whose keys mostly come from `words`.
pub fn object(u: &mut Unstructured<'_>, words: &[&str], depth: usize) -> Result<Value> {
    let n = u.int_in_range(0..=6)?;
    let mut map = Map::new();
    for _ in 0..n {
        let key = if u.ratio(7, 8)? {
            word(u, words)?
        } else {
            u.arbitrary()?
        };
        map.insert(key, json(u, words, depth)?);
    }
    Ok(Value::Object(map))
}

/// One of `words`.
pub fn word(u: &mut Unstructured<'_>, words: &[&str]) -> Result<String> {
    Ok((*u.choose(words)?).to_owned())
}

/// The text a target reads: the bytes after the first, as text, when the first byte is
/// even (the committed seeds take this form); otherwise what `build` makes of them, so
/// the fuzzer reaches past the parser's first error. `None` when there is no input.
pub fn text(
    data: &[u8],
    build: impl FnOnce(&mut Unstructured<'_>) -> Result<String>,
) -> Option<String> {
    let (&mode, rest) = data.split_first()?;
    if mode & 1 == 0 {
        Some(String::from_utf8_lossy(rest).into_owned())
    } else {
        build(&mut Unstructured::new(rest)).ok()
    }
}

/// A model stream for a wire: either the raw bytes after the first byte (recorded
/// streams seed this form), or, when the first byte is odd, SSE events whose data is JSON
/// built from `words`, sometimes with a raw line between them.
pub fn stream(data: &[u8], words: &[&str]) -> Result<Vec<u8>> {
    let Some((&mode, rest)) = data.split_first() else {
        return Ok(Vec::new());
    };
    if mode & 1 == 0 {
        return Ok(rest.to_vec());
    }
    let mut u = Unstructured::new(rest);
    let mut out = Vec::new();
    let events = u.int_in_range(0..=24)?;
    for _ in 0..events {
        if u.ratio(1, 16)? {
            let raw: &[u8] = u.arbitrary()?;
            out.extend_from_slice(raw);
            out.push(b'\n');
        }
        if u.ratio(1, 2)? {
            out.extend_from_slice(b"event: ");
            out.extend_from_slice(word(&mut u, words)?.as_bytes());
            out.push(b'\n');
        }
        let value = object(&mut u, words, 0)?;
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(value.to_string().as_bytes());
        out.extend_from_slice(b"\n\n");
    }
    if u.ratio(1, 4)? {
        out.extend_from_slice(b"data: [DONE]\n\n");
    }
    Ok(out)
}

/// Decodes `bytes` as a reply on `wire` whole and in `chunk`-byte pieces, and checks what
/// holds for every stream: both agree, and no reply asks for the same tool call twice.
pub fn decode_and_check(wire: Wire, bytes: &[u8], chunk: usize) {
    let whole = atto_llm::fuzzing::decode_stream(wire, std::iter::once(bytes));
    let pieces = atto_llm::fuzzing::decode_stream(wire, bytes.chunks(chunk.max(1)));
    assert_eq!(
        summary(&whole),
        summary(&pieces),
        "decoding depends on where the chunks end"
    );
    if let Ok(reply) = &whole.1 {
        let mut ids: Vec<&str> = reply
            .parts
            .iter()
            .filter_map(|p| match p {
                AssistantPart::ToolCall(call) => Some(call.id.as_str()),
                _ => None,
            })
            .collect();
        let calls = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), calls, "a tool call was yielded twice: {reply:?}");
    }
}

fn summary(decoded: &(Vec<StreamUpdate>, Result<ModelResponse, ModelError>)) -> String {
    format!("{decoded:?}")
}
