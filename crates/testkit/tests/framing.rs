//! SSE framing options: split chunks, line endings, keepalives, missing final newline.

// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use atto_testkit::{LineEnding, Reply, Script, StreamOptions};
use common::{events, parse_sse, post, start};

const TEXT: &str = "héllo wörld — 🦀🦀 ünïcode";

fn script(options: StreamOptions) -> Script {
    Script {
        replies: vec![Reply::text(TEXT)],
        options,
    }
}

fn anthropic_text(evs: &[common::Event]) -> String {
    evs.iter()
        .filter_map(|e| e.json()["delta"]["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn chunk_bytes_splits_utf8_characters_across_chunks() {
    let server = start(script(StreamOptions {
        chunk_bytes: Some(3),
        ..StreamOptions::default()
    }))
    .await;
    let resp = post(&server, "/v1/messages", r#"{"stream":true}"#).await;
    assert!(resp.chunks.len() > 50);
    assert!(resp.chunks.iter().all(|c| !c.is_empty() && c.len() <= 3));
    let split_chars = resp
        .chunks
        .iter()
        .filter(|c| std::str::from_utf8(c).is_err())
        .count();
    assert!(
        split_chars > 0,
        "some chunk must end inside a multi-byte character"
    );
    assert_eq!(anthropic_text(&events(&resp)), TEXT);
}

#[tokio::test]
async fn crlf_and_cr_line_endings() {
    for (ending, sep) in [(LineEnding::Crlf, "\r\n\r\n"), (LineEnding::Cr, "\r\r")] {
        let server = start(script(StreamOptions {
            line_ending: ending,
            ..StreamOptions::default()
        }))
        .await;
        let resp = post(&server, "/v1/responses", r#"{"stream":true}"#).await;
        let text = resp.text();
        assert!(text.starts_with("event: response.created"));
        assert!(text.contains(sep));
        if ending == LineEnding::Cr {
            assert!(!text.contains('\n'), "CR mode must not send LF");
        } else {
            assert_eq!(text.matches('\r').count(), text.matches('\n').count());
        }
        let evs = events(&resp);
        let deltas: String = evs
            .iter()
            .filter(|e| e.name.as_deref() == Some("response.output_text.delta"))
            .map(|e| e.json()["delta"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(deltas, TEXT);
    }
}

#[tokio::test]
async fn keepalive_comments_between_events() {
    let server = start(script(StreamOptions {
        keepalive_comments: true,
        ..StreamOptions::default()
    }))
    .await;
    let resp = post(&server, "/v1/chat/completions", r#"{"stream":true}"#).await;
    let text = resp.text();
    let evs = events(&resp);
    assert_eq!(text.matches(": keepalive\n").count(), evs.len() - 1);
    assert!(!text.starts_with(':'));
}

#[tokio::test]
async fn no_trailing_newline_leaves_last_event_unterminated() {
    let server = start(script(StreamOptions {
        no_trailing_newline: true,
        ..StreamOptions::default()
    }))
    .await;
    let resp = post(&server, "/v1/messages", r#"{"stream":true}"#).await;
    assert!(resp.complete);
    let text = resp.text();
    assert!(text.ends_with("data: {\"type\":\"message_stop\"}\n"));
    let (evs, pending) = parse_sse(&text);
    assert_eq!(evs.last().unwrap().name.as_deref(), Some("message_delta"));
    assert_eq!(pending.unwrap().name.as_deref(), Some("message_stop"));
    assert_eq!(anthropic_text(&evs), TEXT);
}
