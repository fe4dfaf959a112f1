//! The clients against exchanges recorded from a live llama.cpp `llama-server`
//! (`tests/fixtures/llama/`, re-recorded by `record.sh` there): a tiny HTTP server
//! replays each recorded response body verbatim, and the test checks the reply the client
//! assembles. Fast, offline, and faithful to a peer nobody here wrote: llama-server leaves
//! out `output_index` on Responses, reports cached prompt tokens, and answers a prompt over
//! its context with its own error type.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use atto_llm::{
    ClientOptions, ModelError, ModelRequest, ModelResponse, ResolvedProvider, RetryPolicy,
    StreamUpdate, Wire, connect,
};
use atto_protocol::{AssistantPart, Message, StopReason, ToolCall, ToolSpec, Usage};
use serde_json::json;

/// A recorded exchange: the request line atto sent and the raw response.
struct Fixture {
    /// `POST /v1/chat/completions` and so on.
    request_line: String,
    status: u16,
    body: Vec<u8>,
}

fn fixture(name: &str) -> Fixture {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama");
    let req = std::fs::read_to_string(dir.join(format!("{name}.req"))).unwrap();
    let resp = std::fs::read(dir.join(format!("{name}.resp"))).unwrap();
    let newline = resp.iter().position(|&b| b == b'\n').unwrap();
    let status_line = std::str::from_utf8(&resp[..newline]).unwrap();
    Fixture {
        request_line: req.lines().next().unwrap().to_owned(),
        status: status_line
            .strip_prefix("HTTP ")
            .unwrap()
            .trim()
            .parse()
            .unwrap(),
        body: resp[newline + 1..].to_vec(),
    }
}

/// Serves `fixture` once on a free port; returns the base URL (with `/v1`) and a handle
/// giving the request line the client sent.
fn serve_once(fixture: Fixture) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request_line = String::new();
        reader.read_line(&mut request_line).unwrap();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let content_type = if fixture.status == 200 {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut stream = stream;
        write!(
            stream,
            "HTTP/1.1 {} X\r\ncontent-type: {content_type}\r\nconnection: close\r\n\r\n",
            fixture.status
        )
        .unwrap();
        stream.write_all(&fixture.body).unwrap();
        stream.flush().unwrap();
        request_line.trim().to_owned()
    });
    (base, handle)
}

fn provider(base_url: &str, wire: Wire) -> ResolvedProvider {
    ResolvedProvider {
        name: "local".into(),
        base_url: base_url.into(),
        wire,
        model: "smollm2".into(),
        api_key: None,
        api_key_env: None,
    }
}

fn options() -> ClientOptions {
    ClientOptions {
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
        },
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    }
}

/// Replays the fixture `name` to a client of `wire`; the request must go where atto sent it.
async fn replay(name: &str, wire: Wire) -> (Vec<StreamUpdate>, Result<ModelResponse, ModelError>) {
    let recorded = fixture(name);
    let expected_line = recorded.request_line.clone();
    let (base, server) = serve_once(recorded);
    let client = connect(&provider(&base, wire), options()).unwrap();
    let req = ModelRequest {
        system: "You are a test.".into(),
        messages: vec![Message::user("hello")].into(),
        tools: vec![ToolSpec {
            name: "bash".into(),
            description: "Run a command".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        }]
        .into(),
        max_output_tokens: 40,
        effort: None,
        temperature: None,
    };
    let mut updates = Vec::new();
    let result = client.stream(&req, &mut |u| updates.push(u)).await;
    let sent_line = server.join().unwrap();
    assert!(
        sent_line.starts_with(&expected_line),
        "{name}: sent {sent_line:?}, recorded {expected_line:?}"
    );
    (updates, result)
}

fn text(r: &ModelResponse) -> String {
    r.text()
}

fn streamed_text(updates: &[StreamUpdate]) -> String {
    updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
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

fn usage(input: u64, output: u64, cache_read: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_write_tokens: 0,
    }
}

async fn text_reply(name: &str, wire: Wire, expected: &str, stop: StopReason, used: Usage) {
    let (updates, result) = replay(name, wire).await;
    let reply = result.unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(text(&reply), expected, "{name}");
    assert_eq!(streamed_text(&updates), expected, "{name}: streamed once");
    assert!(tool_calls(&reply).is_empty(), "{name}");
    assert_eq!(reply.stop, stop, "{name}");
    assert_eq!(reply.usage, used, "{name}");
    assert_eq!(reply.model, "smollm2", "{name}");
}

async fn tool_reply(name: &str, wire: Wire, id: &str, stop: StopReason, used: Usage) {
    let (_, result) = replay(name, wire).await;
    let reply = result.unwrap_or_else(|e| panic!("{name}: {e}"));
    let calls = tool_calls(&reply);
    assert_eq!(calls.len(), 1, "{name}: exactly one call: {calls:?}");
    assert_eq!(calls[0].id, id, "{name}");
    assert_eq!(calls[0].name, "bash", "{name}");
    let args: serde_json::Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(args, json!({"command": "echo run >> log.txt"}), "{name}");
    assert_eq!(text(&reply).trim(), "", "{name}");
    assert_eq!(reply.stop, stop, "{name}");
    assert_eq!(reply.usage, used, "{name}");
}

#[tokio::test]
async fn chat_text_reply_cut_by_the_limit() {
    text_reply(
        "chat-text",
        Wire::Chat,
        "\"This is a classic question in the context of AI and",
        StopReason::MaxTokens,
        usage(82, 12, 492),
    )
    .await;
}

#[tokio::test]
async fn responses_text_reply() {
    // llama-server says `completed` even when the limit cut the reply.
    text_reply(
        "responses-text",
        Wire::Responses,
        "Cette façon c'est en ligne.\n",
        StopReason::EndTurn,
        usage(1, 12, 573),
    )
    .await;
}

#[tokio::test]
async fn anthropic_text_reply() {
    text_reply(
        "anthropic-text",
        Wire::Anthropic,
        "The capital of France is Paris.",
        StopReason::EndTurn,
        usage(1, 8, 573),
    )
    .await;
}

// The three tool replies were cut by the 40-token limit right after one complete call;
// llama-server says so on chat and anthropic, and not on Responses.

#[tokio::test]
async fn chat_tool_call() {
    tool_reply(
        "chat-tool",
        Wire::Chat,
        "RYsO5SxZ3FGwFZviwzxNFs87bcyEzIwE",
        StopReason::MaxTokens,
        usage(519, 40, 0),
    )
    .await;
}

#[tokio::test]
async fn responses_tool_call() {
    tool_reply(
        "responses-tool",
        Wire::Responses,
        "call_GlCaINKgmOQIBpLI0xuTzyzAWzsJWcKg",
        StopReason::ToolUse,
        usage(1, 40, 518),
    )
    .await;
}

#[tokio::test]
async fn anthropic_tool_call() {
    tool_reply(
        "anthropic-tool",
        Wire::Anthropic,
        "xIiF4gGQcD3YMNwIz6NAjCflkKnwr51c",
        StopReason::MaxTokens,
        usage(1, 40, 518),
    )
    .await;
}

#[tokio::test]
async fn a_prompt_over_the_context_is_a_context_overflow() {
    let (_, result) = replay("chat-overflow", Wire::Chat).await;
    match result {
        Err(ModelError::ContextTooLong { message }) => {
            assert!(message.contains("512"), "{message}");
        }
        other => panic!("expected a context overflow, got {other:?}"),
    }
}
