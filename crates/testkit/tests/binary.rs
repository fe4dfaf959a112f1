//! The `atto-testkit serve` binary as benchmarks run it: a separate process.

// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::send_raw;

#[tokio::test]
async fn serve_prints_address_records_and_stops_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("atto-testkit-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    let record = dir.join("record.jsonl");
    let _ = std::fs::remove_file(&record);
    std::fs::write(&script, r#"{"replies":[{"text":"from the binary"}]}"#).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_atto-testkit"))
        .args(["serve", "--script"])
        .arg(&script)
        .arg("--record")
        .arg(&record)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("bad line {line:?}"));
    let addr = url
        .strip_prefix("http://127.0.0.1:")
        .map(|p| format!("127.0.0.1:{p}"))
        .unwrap();

    let body = r#"{"model":"m","messages":[]}"#;
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let resp = send_raw(addr.parse().unwrap(), req.as_bytes()).await;
    assert_eq!(
        resp.json()["choices"][0]["message"]["content"],
        "from the binary"
    );

    // The record line is flushed as the request arrives.
    let mut recorded = String::new();
    for _ in 0..100 {
        recorded = std::fs::read_to_string(&record).unwrap_or_default();
        if recorded.ends_with('\n') {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lines: Vec<&str> = recorded.lines().collect();
    assert_eq!(lines.len(), 1);
    let rec: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(rec["path"], "/v1/chat/completions");
    assert_eq!(rec["body"]["model"], "m");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut exited = None;
    for _ in 0..100 {
        if let Some(st) = child.try_wait().unwrap() {
            exited = Some(st);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let Some(st) = exited else {
        child.kill().unwrap();
        panic!("binary did not stop on SIGTERM");
    };
    assert!(st.success(), "exit status {st}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_script_fails_with_a_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_atto-testkit"))
        .args(["serve", "--script", "/nonexistent/script.json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read script"));
}
