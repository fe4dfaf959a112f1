//! The clients against atto-testkit's scripted model server: real HTTP, real SSE framing,
//! injected faults. Asserts on replies, updates, errors and on what was sent.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use atto_llm::{
    ClientOptions, ModelClient, ModelError, ModelRequest, ModelResponse, ResolvedProvider,
    RetryPolicy, Secret, StreamUpdate, Wire, WireLog, connect,
};
use atto_protocol::{AssistantPart, Message, StopReason, ToolCall, ToolResult, ToolSpec, Usage};
use atto_testkit::{
    Fault, LineEnding, Reply, Script, ScriptToolCall, ScriptUsage, ScriptedServer, StreamOptions,
};
use serde_json::json;

const WIRES: [Wire; 3] = [Wire::Chat, Wire::Responses, Wire::Anthropic];

fn provider(base_url: &str, wire: Wire, key: Option<&str>) -> ResolvedProvider {
    ResolvedProvider {
        name: "testkit".into(),
        base_url: base_url.into(),
        wire,
        model: "test-model".into(),
        api_key: key.map(Secret::new),
        api_key_env: key.map(|_| "TESTKIT_API_KEY".to_owned()),
    }
}

fn fast_options(max_attempts: u32) -> ClientOptions {
    ClientOptions {
        retry: RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
        },
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    }
}

fn request(messages: Vec<Message>) -> ModelRequest<'static> {
    ModelRequest {
        system: "You are a test.".into(),
        messages: messages.into(),
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }]
        .into(),
        max_output_tokens: 1000,
        effort: None,
        temperature: None,
    }
}

fn user(text: &str) -> Message {
    Message::user(text)
}

async fn run(
    client: &dyn ModelClient,
    req: &ModelRequest<'_>,
) -> (Vec<StreamUpdate>, Result<ModelResponse, ModelError>) {
    let mut updates = Vec::new();
    let result = client.stream(req, &mut |u| updates.push(u)).await;
    (updates, result)
}

fn tool_reply() -> Reply {
    Reply {
        thinking: Some("I should read it.".into()),
        text: Some("Reading the file — ✓ now.".into()),
        tool_calls: vec![
            ScriptToolCall {
                id: Some("call_1".into()),
                name: "read".into(),
                arguments: json!({"path": "src/main.rs", "note": "ünïcødé"}),
                raw_arguments: None,
            },
            ScriptToolCall {
                id: Some("call_2".into()),
                name: "read".into(),
                arguments: json!({"path": "Cargo.toml"}),
                raw_arguments: None,
            },
        ],
        usage: Some(ScriptUsage {
            input_tokens: 120,
            output_tokens: 33,
            cache_read_tokens: 4000,
            cache_write_tokens: 0,
        }),
        ..Reply::default()
    }
}

fn tool_calls(r: &ModelResponse) -> Vec<&ToolCall> {
    r.parts
        .iter()
        .filter_map(|p| match p {
            AssistantPart::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn text(r: &ModelResponse) -> String {
    r.text()
}

async fn round_trip(wire: Wire, options: StreamOptions) {
    let script = Script {
        replies: vec![tool_reply(), Reply::text("All done.")],
        options,
    };
    let server = ScriptedServer::start(script).await.unwrap();
    let client = connect(
        &provider(&server.base_url(), wire, Some("sk-test-123456")),
        fast_options(1),
    )
    .unwrap();
    assert_eq!(client.info().wire, wire);

    let mut req = request(vec![user("read main")]);
    let (updates, result) = run(client.as_ref(), &req).await;
    let first = result.unwrap_or_else(|e| panic!("{wire}: {e}"));
    assert_eq!(first.stop, StopReason::ToolUse, "{wire}");
    assert_eq!(text(&first), "Reading the file — ✓ now.", "{wire}");
    let calls = tool_calls(&first);
    assert_eq!(calls.len(), 2, "{wire}");
    assert_eq!(calls[0].id, "call_1");
    let args: serde_json::Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(
        args,
        json!({"path": "src/main.rs", "note": "ünïcødé"}),
        "{wire}"
    );
    assert_eq!(
        first.usage,
        Usage {
            input_tokens: 120,
            output_tokens: 33,
            cache_read_tokens: 4000,
            cache_write_tokens: 0
        },
        "{wire}"
    );
    let streamed: String = updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Reading the file — ✓ now.", "{wire}");
    assert!(
        updates
            .iter()
            .any(|u| matches!(u, StreamUpdate::Thinking(_))),
        "{wire}: {updates:?}"
    );
    assert!(
        updates.contains(&StreamUpdate::ToolCallBegin {
            id: "call_2".into(),
            name: "read".into()
        }),
        "{wire}"
    );

    // Second turn: the reply and its tool results go back.
    req.messages.to_mut().push(Message::Assistant {
        parts: first.parts.clone(),
    });
    for call in calls {
        req.messages.to_mut().push(Message::ToolResult(ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: format!("contents of {}", call.id),
            is_error: false,
        }));
    }
    let (_, result) = run(client.as_ref(), &req).await;
    let second = result.unwrap();
    assert_eq!(text(&second), "All done.");
    assert_eq!(second.stop, StopReason::EndTurn);

    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    let (path, auth_header, auth_value) = match wire {
        Wire::Chat => (
            "/chat/completions",
            "authorization",
            "Bearer sk-test-123456",
        ),
        Wire::Responses => ("/responses", "authorization", "Bearer sk-test-123456"),
        Wire::Anthropic => ("/v1/messages", "x-api-key", "sk-test-123456"),
    };
    assert!(sent[0].path.ends_with(path), "{wire}: {}", sent[0].path);
    assert_eq!(sent[0].method, "POST");
    let header = |name: &str| {
        sent[0]
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header(auth_header).as_deref(), Some(auth_value), "{wire}");
    if wire == Wire::Anthropic {
        assert_eq!(header("anthropic-version").as_deref(), Some("2023-06-01"));
    }
    assert_eq!(sent[0].body["model"], "test-model");
    assert_eq!(sent[0].body["stream"], true);
    let body = sent[1].body.to_string();
    assert!(
        body.contains("contents of call_1") && body.contains("contents of call_2"),
        "{wire}"
    );
}

#[tokio::test]
async fn each_wire_round_trips_text_and_tool_calls() {
    for wire in WIRES {
        round_trip(wire, StreamOptions::default()).await;
    }
}

#[tokio::test]
async fn each_wire_survives_hostile_framing() {
    for wire in WIRES {
        for line_ending in [LineEnding::Crlf, LineEnding::Cr] {
            let options = StreamOptions {
                line_ending,
                keepalive_comments: true,
                chunk_bytes: Some(3),
                no_trailing_newline: false,
            };
            round_trip(wire, options).await;
        }
    }
}

/// A stream that ends without its wire's terminal event, or with it unterminated (no
/// blank line, so per the SSE standard never dispatched), is a cut stream: retried, and
/// never a success made of whatever text arrived.
#[tokio::test]
async fn streams_ending_before_their_terminal_event_are_cut_and_retried() {
    for wire in WIRES {
        // Everything but the terminal event (text, tool calls, finish reason, usage),
        // then a clean end of the body; the retry gets the whole reply.
        let server = ScriptedServer::start(Script::new(vec![
            Reply {
                fault: Some(Fault::EndEarly { after_events: None }),
                ..tool_reply()
            },
            tool_reply(),
        ]))
        .await
        .unwrap();
        let client = connect(&provider(&server.base_url(), wire, None), fast_options(2)).unwrap();
        let (updates, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
        let r = result.unwrap_or_else(|e| panic!("{wire}: {e}"));
        assert_eq!(tool_calls(&r).len(), 2, "{wire}");
        let notices: Vec<_> = updates
            .iter()
            .filter_map(|u| match u {
                StreamUpdate::Retry(n) => Some(n),
                _ => None,
            })
            .collect();
        assert_eq!(notices.len(), 1, "{wire}: {updates:?}");
        assert!(
            notices[0].reason.contains("cut off") && notices[0].reason.contains("events"),
            "{wire}: {}",
            notices[0].reason
        );

        // Every reply's terminal event lacks its blank line, as streams recorded from the
        // official SDKs' tests end: the event is whole, so the reply is too.
        let unterminated = Script {
            replies: vec![tool_reply(), tool_reply()],
            options: StreamOptions {
                no_trailing_newline: true,
                ..StreamOptions::default()
            },
        };
        let server = ScriptedServer::start(unterminated).await.unwrap();
        let client = connect(&provider(&server.base_url(), wire, None), fast_options(2)).unwrap();
        let (_, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
        let r = result.unwrap_or_else(|e| panic!("{wire}: {e}"));
        assert_eq!(tool_calls(&r).len(), 2, "{wire}");
        assert_eq!(server.requests().len(), 1, "{wire}: not retried");
    }
}

#[tokio::test]
async fn rate_limit_with_retry_after_zero_then_success() {
    for wire in WIRES {
        let server = ScriptedServer::start(Script::new(vec![
            Reply {
                fault: Some(Fault::Status {
                    status: 429,
                    body: None,
                    retry_after: Some("0".into()),
                }),
                ..Reply::default()
            },
            Reply::text("after the wait"),
        ]))
        .await
        .unwrap();
        // A long base delay: only the server's Retry-After: 0 keeps this test fast.
        let mut options = fast_options(3);
        options.retry.base_delay = Duration::from_secs(30);
        options.retry.max_delay = Duration::from_secs(60);
        let client = connect(&provider(&server.base_url(), wire, None), options).unwrap();
        let started = std::time::Instant::now();
        let (updates, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(text(&result.unwrap()), "after the wait", "{wire}");
        let retries: Vec<_> = updates
            .iter()
            .filter_map(|u| match u {
                StreamUpdate::Retry(n) => Some(n),
                _ => None,
            })
            .collect();
        assert_eq!(retries.len(), 1, "{wire}: {updates:?}");
        assert_eq!((retries[0].attempt, retries[0].max_attempts), (1, 3));
        assert_eq!(retries[0].delay_ms, 0);
        assert!(retries[0].reason.contains("429"), "{}", retries[0].reason);
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn server_errors_exhaust_and_stay_retryable() {
    let fail = || {
        Reply {
        fault: Some(Fault::Status {
            status: 500,
            body: Some(
                r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#
                    .into(),
            ),
            retry_after: None,
        }),
        ..Reply::default()
    }
    };
    let server = ScriptedServer::start(Script::new((0..6).map(|_| fail()).collect()))
        .await
        .unwrap();
    let client = connect(
        &provider(&server.base_url(), Wire::Chat, None),
        fast_options(5),
    )
    .unwrap();
    let (updates, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
    let err = result.unwrap_err();
    assert!(err.is_retryable(), "{err:?}");
    // The circuit breaker opens after three failures, before the five attempts are used.
    assert!(
        matches!(&err, ModelError::Exhausted { attempts: 3, max_attempts: 5, breaker_opened: true, last, .. } if matches!(**last, ModelError::Status { status: 500, .. })),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 3);
    // Each retried attempt the server answered is reported as possibly billed, then its
    // retry announced.
    assert_eq!(updates.len(), 4);
    for pair in updates.chunks(2) {
        assert_eq!(pair[0], StreamUpdate::FailedAttempt, "{updates:?}");
        let StreamUpdate::Retry(n) = &pair[1] else {
            panic!("{updates:?}")
        };
        assert_eq!(n.max_attempts, 5);
    }
    // llama.cpp's answer without --jinja: said once, plainly, with why retries stopped.
    let text = err.to_string();
    assert_eq!(
        text.matches("tools param requires --jinja").count(),
        1,
        "{text}"
    );
    assert!(text.contains("3 attempts of 5"), "{text}");
    assert!(text.contains("misconfigured"), "{text}");
    // Further calls fail fast without reaching the server.
    let (_, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
    assert!(
        matches!(result, Err(ModelError::CircuitOpen { .. })),
        "{result:?}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn unauthorized_fails_at_once_with_a_hint_and_no_key() {
    for wire in WIRES {
        let key = "sk-secret-abcdef987654";
        let server = ScriptedServer::start(Script::new(vec![
            Reply {
                fault: Some(Fault::Status {
                    status: 401,
                    body: Some(format!(
                        r#"{{"error":{{"type":"authentication_error","message":"Incorrect API key provided: {key}"}}}}"#
                    )),
                    retry_after: None,
                }),
                ..Reply::default()
            },
            Reply::text("never"),
        ]))
        .await
        .unwrap();
        let client = connect(
            &provider(&server.base_url(), wire, Some(key)),
            fast_options(5),
        )
        .unwrap();
        let (updates, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
        let err = result.unwrap_err();
        assert!(
            matches!(err, ModelError::Auth { status: 401, .. }),
            "{wire}: {err:?}"
        );
        assert!(!err.is_retryable());
        let shown = format!("{err} {err:?}");
        assert!(shown.contains("TESTKIT_API_KEY"), "{shown}");
        assert!(!shown.contains(key), "{shown}");
        assert!(updates.is_empty());
        assert_eq!(server.requests().len(), 1, "{wire}");
    }
}

#[tokio::test]
async fn cut_streams_malformed_chunks_and_error_events_are_retried() {
    let faults = [
        Fault::Cut { after_events: 3 },
        Fault::MalformedChunk { after_events: 2 },
        Fault::ErrorEvent {
            after_events: 2,
            error_type: "overloaded_error".into(),
            message: "busy".into(),
        },
    ];
    for wire in WIRES {
        for fault in &faults {
            let server = ScriptedServer::start(Script::new(vec![
                Reply {
                    fault: Some(fault.clone()),
                    ..tool_reply()
                },
                tool_reply(),
            ]))
            .await
            .unwrap();
            let client =
                connect(&provider(&server.base_url(), wire, None), fast_options(3)).unwrap();
            let (updates, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
            let r = result.unwrap_or_else(|e| panic!("{wire} {fault:?}: {e}"));
            assert_eq!(tool_calls(&r).len(), 2, "{wire} {fault:?}");
            let retries = updates
                .iter()
                .filter(|u| matches!(u, StreamUpdate::Retry(_)))
                .count();
            assert_eq!(retries, 1, "{wire} {fault:?}: {updates:?}");
            assert_eq!(server.requests().len(), 2);
        }
    }
}

#[tokio::test]
async fn cut_tool_arguments_are_never_returned() {
    for wire in WIRES {
        let reply = Reply {
            fault: Some(Fault::Cut { after_events: 6 }),
            ..tool_reply()
        };
        let server = ScriptedServer::start(Script::new(vec![reply]))
            .await
            .unwrap();
        let client = connect(&provider(&server.base_url(), wire, None), fast_options(1)).unwrap();
        let (_, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
        let err = result.unwrap_err();
        assert!(
            matches!(&err, ModelError::Exhausted { last, .. } if matches!(**last, ModelError::StreamCut(_))),
            "{wire}: {err:?}"
        );
        assert!(err.is_retryable());
    }
}

#[tokio::test]
async fn max_tokens_stop_returns_raw_cut_off_arguments() {
    for wire in WIRES {
        let reply = Reply {
            tool_calls: vec![ScriptToolCall {
                id: Some("call_w".into()),
                name: "write".into(),
                arguments: json!(null),
                raw_arguments: Some(r#"{"path":"a.txt","content":"hel"#.into()),
            }],
            stop: Some(atto_testkit::ScriptStop::MaxTokens),
            ..Reply::default()
        };
        let server = ScriptedServer::start(Script::new(vec![reply]))
            .await
            .unwrap();
        let client = connect(&provider(&server.base_url(), wire, None), fast_options(1)).unwrap();
        let (_, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
        let r = result.unwrap_or_else(|e| panic!("{wire}: {e}"));
        assert_eq!(r.stop, StopReason::MaxTokens, "{wire}");
        assert_eq!(
            tool_calls(&r)[0].arguments,
            r#"{"path":"a.txt","content":"hel"#
        );
    }
}

#[tokio::test]
async fn connection_refused_fails_at_once_naming_the_url() {
    // A port that was just free: nothing listens there now. A refusal is deterministic
    // (wrong URL, local server not started), so it is not retried.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let client = connect(&provider(&base, Wire::Chat, None), fast_options(2)).unwrap();
    let (updates, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
    let err = result.unwrap_err();
    assert!(matches!(&err, ModelError::Refused(_)), "{err:?}");
    assert!(!err.is_retryable());
    assert!(err.to_string().contains(&base), "{err}");
    assert!(updates.is_empty(), "no retry announced: {updates:?}");
}

#[tokio::test]
async fn dropping_the_call_cancels_it() {
    let slow = Reply {
        delay_ms: 5_000,
        ..Reply::text("too late")
    };
    let server = ScriptedServer::start(Script::new(vec![slow, Reply::text("fresh")]))
        .await
        .unwrap();
    let client = connect(
        &provider(&server.base_url(), Wire::Chat, None),
        fast_options(1),
    )
    .unwrap();
    let req = request(vec![user("hi")]);
    let timed_out = tokio::time::timeout(Duration::from_millis(200), async {
        let mut sink = |_u: StreamUpdate| {};
        client.stream(&req, &mut sink).await
    })
    .await;
    assert!(timed_out.is_err(), "the slow call was still running");
    // The client stays usable, and the breaker did not count the cancellation.
    let (_, result) = run(client.as_ref(), &req).await;
    assert_eq!(text(&result.unwrap()), "fresh");
}

#[tokio::test]
async fn json_instead_of_a_stream_is_classified_not_retried_blindly() {
    let ok_json = |body: &str| Reply {
        fault: Some(Fault::Status {
            status: 200,
            body: Some(body.to_owned()),
            retry_after: None,
        }),
        ..Reply::default()
    };
    let server = ScriptedServer::start(Script::new(vec![
        ok_json(r#"{"error":{"type":"invalid_request_error","message":"model not found"}}"#),
        ok_json(r#"{"id":"x","choices":[{"message":{"content":"unstreamed"}}]}"#),
    ]))
    .await
    .unwrap();
    let client = connect(
        &provider(&server.base_url(), Wire::Chat, None),
        fast_options(3),
    )
    .unwrap();
    let (_, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, ModelError::Provider { message, .. } if message == "model not found"),
        "{err:?}"
    );
    let (_, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::BadRequest { .. }), "{err:?}");
    assert!(err.to_string().contains("event stream"), "{err}");
    assert_eq!(server.requests().len(), 2, "neither was retried");
}

/// A server that streams part of a reply and then dies (its socket and listener gone):
/// the failure is a lost connection, retried, and reported as such — never as "nothing
/// is listening … no request was sent".
#[tokio::test]
async fn a_server_dying_mid_reply_is_a_lost_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 64 * 1024];
        let _ = socket.read(&mut buf).await.unwrap();
        let mut out = String::from(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        );
        for i in 0..83 {
            let event = format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"
            );
            out.push_str(&format!("{:x}\r\n{event}\r\n", event.len()));
        }
        socket.write_all(out.as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        // The process dies: the connection drops mid-body and nothing listens any more.
        drop(socket);
        drop(listener);
    });
    let client = connect(
        &provider(&format!("http://{addr}"), Wire::Chat, None),
        fast_options(3),
    )
    .unwrap();
    let (updates, result) = run(client.as_ref(), &request(vec![user("hi")])).await;
    server.await.unwrap();
    let err = result.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(&err, ModelError::Exhausted { last, .. } if matches!(**last, ModelError::Transport(_))),
        "{err:?}"
    );
    assert!(err.is_retryable());
    assert!(text.contains("stopped accepting connections"), "{text}");
    assert!(text.contains("83 events"), "{text}");
    assert!(!text.contains("No request was sent"), "{text}");
    let retries = updates
        .iter()
        .filter(|u| matches!(u, StreamUpdate::Retry(_)))
        .count();
    assert_eq!(retries, 2, "{updates:?}");
}

/// With the wire log on, a scripted exchange (a 500, a retry, a streamed reply) is in
/// the file: request URL, headers and body, the response status, every event with its
/// time, the retry and the outcome; the API key value never is.
#[tokio::test]
async fn the_wire_log_records_the_exchange_without_the_key() {
    const KEY: &str = "sk-wirelog-secret-4242";
    let dir = std::env::temp_dir().join(format!("atto-wirelog-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for wire in WIRES {
        let path = dir.join(format!("{wire}.jsonl"));
        let _ = std::fs::remove_file(&path);
        let log = std::sync::Arc::new(WireLog::create(&path).unwrap());
        assert_eq!(log.path(), path.as_path());
        let server = ScriptedServer::start(Script::new(vec![
            Reply {
                fault: Some(Fault::Status {
                    status: 500,
                    body: Some(format!("upstream broke; you sent {KEY}")),
                    retry_after: None,
                }),
                ..Reply::default()
            },
            tool_reply(),
        ]))
        .await
        .unwrap();
        let options = ClientOptions {
            wire_log: Some(log.clone()),
            ..fast_options(3)
        };
        let client = connect(&provider(&server.base_url(), wire, Some(KEY)), options).unwrap();
        let (_, result) = run(client.as_ref(), &request(vec![user("log me please")])).await;
        result.unwrap_or_else(|e| panic!("{wire}: {e}"));

        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(KEY), "{wire}: the key leaked into the log");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let of = |kind: &str| -> Vec<&serde_json::Value> {
            lines.iter().filter(|l| l["kind"] == kind).collect()
        };
        let requests = of("request");
        assert_eq!(requests.len(), 2, "{wire}: {text}");
        assert!(requests[0]["url"].as_str().unwrap().starts_with("http://"));
        assert!(
            requests[0]["body"].to_string().contains("log me please"),
            "{wire}"
        );
        assert_eq!(requests[0]["body"]["model"], "test-model");
        let headers = requests[0]["headers"].as_object().unwrap();
        let credential = headers
            .get("authorization")
            .or_else(|| headers.get("x-api-key"))
            .unwrap_or_else(|| panic!("{wire}: {headers:?}"));
        assert_eq!(credential, "[redacted]");
        let statuses: Vec<_> = of("response").iter().map(|r| r["status"].clone()).collect();
        assert_eq!(statuses, [500, 200], "{wire}");
        assert_eq!(of("error_body").len(), 1, "{wire}");
        assert_eq!(of("retry").len(), 1, "{wire}");
        let events = of("event");
        assert!(events.len() > 5, "{wire}: {text}");
        assert!(events.iter().all(|e| e["ms"].is_u64() && e["call"] == 2));
        assert!(
            events
                .iter()
                .any(|e| e["data"].as_str().unwrap().contains("call_1")),
            "{wire}: the tool call is in the events"
        );
        let ends = of("end");
        assert_eq!(ends.len(), 2, "{wire}");
        assert_eq!(ends[0]["ok"], false);
        assert_eq!(ends[1]["ok"], true);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// llama.cpp's Responses stream replayed over HTTP (no `output_index`, ids only inside
/// `item`): one tool call, run once; and the next request sends a cut-off call's
/// arguments as `{}` on every wire.
#[tokio::test]
async fn llama_cpp_responses_stream_gives_one_call_and_history_stays_valid() {
    let raw = concat!(
        "event: response.created\n",
        r#"data: {"type":"response.created","response":{"id":"resp_l","object":"response","status":"in_progress"}}"#,
        "\n\nevent: response.output_item.added\n",
        r#"data: {"type":"response.output_item.added","item":{"id":"fc_l","type":"function_call","status":"in_progress","arguments":"","call_id":"fc_l","name":"read"}}"#,
        "\n\nevent: response.function_call_arguments.delta\n",
        r#"data: {"type":"response.function_call_arguments.delta","item_id":"fc_l","delta":"{\"path\":\"a\"}"}"#,
        "\n\nevent: response.output_item.done\n",
        r#"data: {"type":"response.output_item.done","item":{"id":"fc_l","type":"function_call","status":"completed","arguments":"{\"path\":\"a\"}","call_id":"fc_l","name":"read"}}"#,
        "\n\nevent: response.completed\n",
        r#"data: {"type":"response.completed","response":{"id":"resp_l","status":"completed","usage":{"input_tokens":5,"output_tokens":3}}}"#,
        "\n\n"
    );
    let server = ScriptedServer::start(Script::new(vec![Reply {
        fault: Some(Fault::RawStream { body: raw.into() }),
        ..Reply::default()
    }]))
    .await
    .unwrap();
    let client = connect(
        &provider(&server.base_url(), Wire::Responses, None),
        fast_options(1),
    )
    .unwrap();
    let r = run(client.as_ref(), &request(vec![user("hi")]))
        .await
        .1
        .unwrap();
    let calls = tool_calls(&r);
    assert_eq!(calls.len(), 1, "{:?}", r.parts);
    assert_eq!(calls[0].arguments, r#"{"path":"a"}"#);

    let cut = Message::Assistant {
        parts: vec![AssistantPart::ToolCall(ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: "{".into(),
        })],
    };
    let result = Message::ToolResult(ToolResult {
        call_id: "c1".into(),
        name: "read".into(),
        content: "the arguments were cut off".into(),
        is_error: true,
    });
    for wire in WIRES {
        let server = ScriptedServer::start(Script::new(vec![Reply::text("ok")]))
            .await
            .unwrap();
        let client = connect(&provider(&server.base_url(), wire, None), fast_options(1)).unwrap();
        let req = request(vec![user("go"), cut.clone(), result.clone()]);
        run(client.as_ref(), &req).await.1.unwrap();
        let body = server.requests()[0].body.to_string();
        assert!(!body.contains(r#""arguments":"{""#), "{wire}: {body}");
        let sent_empty = body.contains(r#""arguments":"{}""#) || body.contains(r#""input":{}"#);
        assert!(sent_empty, "{wire}: {body}");
    }
}
