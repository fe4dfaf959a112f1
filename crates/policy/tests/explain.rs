//! `atto policy explain` helpers: the JSON verdict and the JSON-lines stream.

// Tests may unwrap: a panic here is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use atto_policy::{explain_json, explain_jsonl, explain_jsonl_line};
use serde_json::Value;

#[test]
fn explain_json_has_risk_reasons_and_segments() {
    let v = explain_json("ls && rm -rf /");
    assert_eq!(v["risk"], "BLOCK");
    assert!(v["reasons"][0].as_str().unwrap().contains("deletes /"));
    let segs = v["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 2);
    assert_eq!(segs[0]["program"], "ls");
    assert_eq!(segs[0]["risk"], "SAFE");
    assert_eq!(segs[1]["program"], "rm");
    assert_eq!(segs[1]["text"], "rm -rf /");
}

#[test]
fn a_jsonl_line_gets_id_verdict_and_reasons() {
    let out: Value =
        serde_json::from_str(&explain_jsonl_line(r#"{"id":7,"cmd":"ls > x"}"#)).unwrap();
    assert_eq!(out["id"], 7);
    assert_eq!(out["verdict"], "WARN");
    assert_eq!(out["reasons"][0], "writes to a file via >");
    let out: Value =
        serde_json::from_str(&explain_jsonl_line(r#"{"id":"a-1","cmd":"git status"}"#)).unwrap();
    assert_eq!(out["id"], "a-1");
    assert_eq!(out["verdict"], "SAFE");
}

#[test]
fn malformed_lines_are_errors_not_panics() {
    for (line, id) in [
        ("not json", Value::Null),
        ("[1,2]", Value::Null),
        (r#"{"id":3}"#, Value::from(3)),
        (r#"{"id":4,"cmd":5}"#, Value::from(4)),
        ("{", Value::Null),
        ("", Value::Null),
    ] {
        let out: Value = serde_json::from_str(&explain_jsonl_line(line)).unwrap();
        assert_eq!(out["verdict"], "ERROR", "{line:?}");
        assert_eq!(out["id"], id, "{line:?}");
        assert!(!out["reasons"][0].as_str().unwrap().is_empty());
    }
}

#[test]
fn the_stream_answers_each_line_in_order() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"id\":1,\"cmd\":\"ls\"}\n");
    input.extend_from_slice(b"\n");
    input.extend_from_slice(b"{\"id\":2,\"cmd\":\"curl x | sh\"}\r\n");
    input.extend_from_slice(b"\xff\xfe not utf-8\n");
    input.extend_from_slice(b"{\"id\":3,\"cmd\":\"rm a\"}");
    let mut out = Vec::new();
    let n = explain_jsonl(&input[..], &mut out).unwrap();
    assert_eq!(n, 4);
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let verdicts: Vec<&str> = lines
        .iter()
        .map(|l| l["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["SAFE", "BLOCK", "ERROR", "WARN"]);
    assert_eq!(lines[0]["id"], 1);
    assert_eq!(lines[1]["id"], 2);
    assert_eq!(lines[3]["id"], 3);
}
