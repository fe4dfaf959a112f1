//! Fault injection, recording, routing and exhaustion, over a real socket.

// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use atto_testkit::{Fault, Reply, Script};
use common::{addr, events, parse_sse, post, send_raw, start};
use serde_json::json;

const CHAT_STREAM: &str = r#"{"model":"m","stream":true,"messages":[]}"#;

fn faulty(fault: Fault) -> Reply {
    Reply {
        text: Some("a fairly long answer text".into()),
        fault: Some(fault),
        ..Reply::default()
    }
}

#[tokio::test]
async fn status_fault_consumes_its_entry_and_sends_retry_after() {
    let server = start(Script::new(vec![
        Reply {
            fault: Some(Fault::Status {
                status: 429,
                body: None,
                retry_after: Some("2".into()),
            }),
            ..Reply::default()
        },
        Reply::text("ok"),
        Reply {
            fault: Some(Fault::Status {
                status: 503,
                body: Some("upstream sad".into()),
                retry_after: None,
            }),
            ..Reply::default()
        },
    ]))
    .await;
    let resp = post(&server, "/v1/messages", r#"{"stream":true}"#).await;
    assert_eq!(resp.status, 429);
    assert_eq!(resp.headers["retry-after"], "2");
    let body = resp.json();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "rate_limit_error");

    let evs = events(&post(&server, "/v1/messages", r#"{"stream":true}"#).await);
    let text: String = evs
        .iter()
        .filter_map(|e| e.json()["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "ok");

    let resp = post(&server, "/v1/chat/completions", CHAT_STREAM).await;
    assert_eq!(resp.status, 503);
    assert!(!resp.headers.contains_key("retry-after"));
    assert_eq!(resp.text(), "upstream sad");
    assert_eq!(server.replies_served(), 3);
}

#[tokio::test]
async fn default_openai_error_body() {
    let server = start(Script::new(vec![Reply {
        fault: Some(Fault::Status {
            status: 401,
            body: None,
            retry_after: None,
        }),
        ..Reply::default()
    }]))
    .await;
    let resp = post(&server, "/v1/responses", "{}").await;
    assert_eq!(resp.status, 401);
    let err = &resp.json()["error"];
    assert_eq!(err["code"], "invalid_api_key");
    assert!(err["message"].as_str().unwrap().contains("401"));
}

#[tokio::test]
async fn cut_closes_mid_chunk_after_n_events() {
    let server = start(Script::new(vec![faulty(Fault::Cut { after_events: 2 })])).await;
    let resp = post(&server, "/v1/chat/completions", CHAT_STREAM).await;
    assert_eq!(resp.status, 200);
    assert!(
        !resp.complete,
        "a cut stream must not end with the terminal chunk"
    );
    assert_eq!(
        resp.chunks.len(),
        2,
        "one whole chunk per event before the cut"
    );
    // The arrived bytes hold exactly two complete events plus a dangling partial line.
    let text = resp.text();
    let whole = text.rfind("\n\n").unwrap() + 2;
    let (evs, _) = parse_sse(&text[..whole]);
    assert_eq!(evs.len(), 2);
    assert!(
        text.len() > whole,
        "some bytes of the third event were sent"
    );
    assert!(!text.contains("[DONE]"));
}

#[tokio::test]
async fn cut_non_streaming_sends_short_body() {
    let server = start(Script::new(vec![faulty(Fault::Cut { after_events: 0 })])).await;
    let resp = post(&server, "/v1/messages", "{}").await;
    assert_eq!(resp.status, 200);
    assert!(!resp.complete);
}

#[tokio::test]
async fn error_event_per_wire() {
    let fault = || Fault::ErrorEvent {
        after_events: 3,
        error_type: "overloaded_error".into(),
        message: "Overloaded".into(),
    };
    let server = start(Script::new(vec![
        faulty(fault()),
        faulty(fault()),
        faulty(fault()),
    ]))
    .await;

    let evs = events(&post(&server, "/v1/messages", r#"{"stream":true}"#).await);
    assert_eq!(evs.len(), 4);
    assert_eq!(evs[3].name.as_deref(), Some("error"));
    assert_eq!(
        evs[3].json(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );

    let evs = events(&post(&server, "/v1/responses", r#"{"stream":true}"#).await);
    assert_eq!(evs.len(), 4);
    let failed = evs[3].json();
    assert_eq!(failed["type"], "response.failed");
    assert_eq!(failed["sequence_number"], 3);
    assert_eq!(failed["response"]["status"], "failed");
    assert_eq!(failed["response"]["error"]["message"], "Overloaded");

    let evs = events(&post(&server, "/v1/chat/completions", CHAT_STREAM).await);
    assert_eq!(evs.len(), 4);
    assert_eq!(evs[3].json()["error"]["message"], "Overloaded");
    assert!(evs.iter().all(|e| e.data != "[DONE]"));
}

#[tokio::test]
async fn error_event_non_streaming_is_an_http_error() {
    let server = start(Script::new(vec![faulty(Fault::ErrorEvent {
        after_events: 0,
        error_type: "overloaded_error".into(),
        message: "busy".into(),
    })]))
    .await;
    let resp = post(&server, "/v1/messages", "{}").await;
    assert_eq!(resp.status, 529);
    assert_eq!(resp.json()["error"]["message"], "busy");
}

#[tokio::test]
async fn malformed_chunk_is_inserted_and_stream_continues() {
    let server = start(Script::new(vec![faulty(Fault::MalformedChunk {
        after_events: 1,
    })]))
    .await;
    let evs = events(&post(&server, "/v1/chat/completions", CHAT_STREAM).await);
    assert!(serde_json::from_str::<serde_json::Value>(&evs[0].data).is_ok());
    assert!(
        serde_json::from_str::<serde_json::Value>(&evs[1].data).is_err(),
        "event 1 must be garbage"
    );
    assert!(evs[1].data.starts_with(r#"{"choices":[{"delta":"#));
    let text: String = evs[2..evs.len() - 1]
        .iter()
        .filter_map(|e| {
            e.json()["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "a fairly long answer text");
    assert_eq!(evs.last().unwrap().data, "[DONE]");
}

#[tokio::test]
async fn delay_holds_back_the_headers() {
    let server = start(Script::new(vec![Reply {
        delay_ms: 150,
        ..Reply::text("late")
    }]))
    .await;
    let t = Instant::now();
    let resp = post(&server, "/v1/chat/completions", "{}").await;
    assert!(t.elapsed() >= Duration::from_millis(150));
    assert_eq!(resp.status, 200);
}

#[tokio::test]
async fn exhaustion_answers_400_and_unknown_paths_404() {
    let server = start(Script::new(vec![Reply::text("only")])).await;
    assert_eq!(post(&server, "/v1/messages", "{}").await.status, 200);
    let resp = post(&server, "/v1/messages", "{}").await;
    assert_eq!(resp.status, 400);
    let msg = resp.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        msg.contains("atto-testkit: script exhausted after 1 replies"),
        "{msg}"
    );
    let resp = post(&server, "/v1/chat/completions", "{}").await;
    assert!(
        resp.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exhausted after 1")
    );

    let resp = post(&server, "/v1/models", "{}").await;
    assert_eq!(resp.status, 404);
    assert!(
        resp.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/v1/models")
    );
    assert_eq!(server.replies_served(), 1);
    assert_eq!(
        server.requests().len(),
        4,
        "every request is recorded, even unanswered ones"
    );
}

#[tokio::test]
async fn records_requests_with_headers_and_bodies() {
    let server = start(Script::new(vec![
        Reply::text("a"),
        Reply::text("b"),
        Reply::text("c"),
    ]))
    .await;
    let mut sub = server.subscribe();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    post(
        &server,
        "/v1/messages",
        r#"{"model":"m1","messages":[{"role":"user","content":"hi"}]}"#,
    )
    .await;
    post(
        &server,
        "/v1/chat/completions?api-version=1",
        "not json at all",
    )
    .await;
    // A chunked request body, as some HTTP clients send for streamed uploads.
    let chunked = b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-1\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{\"input\r\n6\r\n\":[1]}\r\n0\r\n\r\n";
    let resp = send_raw(addr(&server), chunked).await;
    assert_eq!(resp.status, 200);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].headers["x-api-key"], "test-key");
    assert_eq!(reqs[0].body["messages"][0]["content"], "hi");
    assert!(reqs[0].received_at_unix_ns >= before);
    assert!(reqs[1].received_at_unix_ns >= reqs[0].received_at_unix_ns);
    assert_eq!(reqs[1].path, "/v1/chat/completions?api-version=1");
    assert_eq!(reqs[1].body, json!("not json at all"));
    assert_eq!(reqs[2].headers["authorization"], "Bearer sk-1");
    assert_eq!(reqs[2].body, json!({"input": [1]}));
    assert_eq!(sub.recv().await.unwrap().path, "/v1/messages");
    assert_eq!(sub.try_recv().unwrap().body, json!("not json at all"));
}

#[tokio::test]
async fn garbage_request_gets_400_without_consuming() {
    let server = start(Script::new(vec![Reply::text("a")])).await;
    let resp = send_raw(addr(&server), b"BLAH\r\n\r\n").await;
    assert_eq!(resp.status, 400);
    assert_eq!(server.replies_served(), 0);
}

#[tokio::test]
async fn shutdown_stops_listening() {
    let server = start(Script::new(vec![])).await;
    let a = addr(&server);
    server.shutdown().await;
    assert!(tokio::net::TcpStream::connect(a).await.is_err());
}

#[tokio::test]
async fn end_early_ends_the_body_cleanly_without_the_terminal_event() {
    let server = start(Script::new(vec![faulty(Fault::EndEarly {
        after_events: Some(2),
    })]))
    .await;
    let resp = post(&server, "/v1/chat/completions", CHAT_STREAM).await;
    assert_eq!(resp.status, 200);
    assert!(resp.complete, "the body ends with its terminating chunk");
    let (evs, rest) = parse_sse(&resp.text());
    assert_eq!(evs.len(), 2);
    assert!(rest.is_none());
    assert!(!resp.text().contains("[DONE]"));

    let server = start(Script::new(vec![faulty(Fault::EndEarly {
        after_events: None,
    })]))
    .await;
    let resp = post(&server, "/v1/chat/completions", CHAT_STREAM).await;
    let (evs, _) = parse_sse(&resp.text());
    assert!(evs.len() > 2, "{evs:?}");
    assert!(
        !resp.text().contains("[DONE]"),
        "only the terminal event is left out"
    );
}

#[tokio::test]
async fn raw_stream_is_sent_verbatim() {
    let body = "event: x\ndata: {\"a\":1}\n\ndata: unterminated";
    let server = start(Script::new(vec![faulty(Fault::RawStream {
        body: body.into(),
    })]))
    .await;
    let resp = post(&server, "/v1/responses", r#"{"stream":true}"#).await;
    assert_eq!(resp.status, 200);
    assert!(resp.complete);
    assert_eq!(resp.headers["content-type"], "text/event-stream");
    assert_eq!(resp.text(), body);
}
