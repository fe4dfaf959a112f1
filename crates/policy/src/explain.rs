//! `atto policy explain`: the classifier's verdicts as JSON, one command at a
//! time or as a JSON-lines stream for auditing many commands at once.
//!
//! Owns the wire shapes only (`{"risk","reasons","segments"}` and
//! `{"id","verdict","reasons"}` lines); the command-line flags are the cli's.

use std::io::{self, BufRead, BufWriter, Write};

use serde_json::{Value, json};

use crate::bash::{Verdict, classify};

fn verdict_json(v: &Verdict) -> Value {
    let segments: Vec<Value> = v
        .segments
        .iter()
        .map(|s| {
            json!({
                "text": s.text,
                "program": s.program,
                "risk": s.risk.as_str(),
                "reasons": s.reasons,
            })
        })
        .collect();
    json!({
        "risk": v.risk.as_str(),
        "reasons": v.reasons,
        "segments": segments,
    })
}

/// The verdict for `command` as `{"risk","reasons","segments":[…]}`.
pub fn explain_json(command: &str) -> Value {
    verdict_json(&classify(command))
}

fn error_line(id: Value, reason: &str) -> String {
    json!({"id": id, "verdict": "ERROR", "reasons": [reason]}).to_string()
}

/// Answers one `{"id","cmd"}` line with one `{"id","verdict","reasons"}`
/// line (no trailing newline). A malformed line gets verdict `ERROR`; this
/// never panics.
pub fn explain_jsonl_line(line: &str) -> String {
    let parsed: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return error_line(Value::Null, &format!("the line is not valid JSON: {e}")),
    };
    let Value::Object(map) = parsed else {
        return error_line(
            Value::Null,
            "the line is not a JSON object with \"id\" and \"cmd\"",
        );
    };
    let id = map.get("id").cloned().unwrap_or(Value::Null);
    let Some(Value::String(cmd)) = map.get("cmd") else {
        return error_line(id, "the object has no string field \"cmd\"");
    };
    let v = classify(cmd);
    json!({"id": id, "verdict": v.risk.as_str(), "reasons": v.reasons}).to_string()
}

/// Streams `{"id","cmd"}` lines from `input` to verdict lines on `output`.
/// Blank lines are skipped; a line that is not UTF-8 gets an `ERROR` line.
/// Returns how many lines were answered.
pub fn explain_jsonl(mut input: impl BufRead, output: impl Write) -> io::Result<u64> {
    let mut out = BufWriter::new(output);
    let mut buf = Vec::new();
    let mut answered = 0u64;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        let answer = match std::str::from_utf8(&buf) {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => explain_jsonl_line(line.trim_end_matches(['\n', '\r'])),
            Err(_) => error_line(Value::Null, "the line is not valid UTF-8"),
        };
        out.write_all(answer.as_bytes())?;
        out.write_all(b"\n")?;
        answered += 1;
    }
    out.flush()?;
    Ok(answered)
}
