//! The cost of one MCP tool call through atto's client over the server's own time.
//!
//! The server is `bench/mcp_fake_server.py` (answers at once). "Its own time" is a bare
//! JSON-RPC round trip with the same server: a request line written to its stdin and the
//! answer line read back, nothing else. atto's path is `McpHub::call`: the server's state
//! check, rmcp's request (progress token, cancellation on drop), the timeout, and the
//! result rendered as text. Reports p50 and p90 of each over N calls and the difference
//! of the medians. Target: overhead <= 1 ms p50.
//!
//! Run: `cargo bench -p atto-mcp --bench call` (N = 2000, or the first argument).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use atto_mcp::{HubOptions, McpHub};
use atto_tools::CancellationToken;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn fake_server() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/mcp_fake_server.py")
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

async fn raw(n: usize) -> Vec<Duration> {
    let mut child = tokio::process::Command::new("python3")
        .arg(fake_server())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut exchange = async |msg: serde_json::Value| {
        stdin
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        lines.next_line().await.unwrap().unwrap()
    };
    exchange(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        let answer = exchange(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": "tool_00", "arguments": {"text": "ping"}}}),
        )
        .await;
        samples.push(started.elapsed());
        assert!(answer.contains("ping"));
    }
    samples
}

async fn through_atto(n: usize) -> Vec<Duration> {
    let text = format!(
        "[mcp_servers.bench]\ncommand = \"python3\"\nargs = [{:?}]\n",
        fake_server().display().to_string()
    );
    #[derive(serde::Deserialize)]
    struct File {
        mcp_servers: std::collections::BTreeMap<String, atto_mcp::RawServer>,
    }
    let file: File = toml::from_str(&text).unwrap();
    let servers = atto_mcp::from_tables(&file.mcp_servers, "bench").unwrap();
    let logs = tempfile::tempdir().unwrap();
    let hub = McpHub::new(HubOptions {
        servers,
        untrusted: Vec::new(),
        workspace: std::env::temp_dir(),
        log_dir: logs.path().to_path_buf(),
    });
    let cancel = CancellationToken::new();
    hub.start();
    hub.settle(&cancel).await;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let (text, error) = hub
            .call("bench", "tool_00", json!({"text": "ping"}), &cancel)
            .await
            .unwrap();
        samples.push(started.elapsed());
        assert!(!error && text == "ping", "{text}");
    }
    hub.shutdown();
    samples
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Warm both paths (python's first calls are slower), then measure.
    runtime.block_on(raw(50));
    let mut bare = runtime.block_on(raw(n));
    let mut atto = runtime.block_on(through_atto(n));
    let (b50, b90) = (percentile(&mut bare, 0.5), percentile(&mut bare, 0.9));
    let (a50, a90) = (percentile(&mut atto, 0.5), percentile(&mut atto, 0.9));
    let overhead = a50.saturating_sub(b50);
    println!("MCP call, {n} calls each (bench/mcp_fake_server.py over stdio)");
    println!(
        "  server's own round trip   p50 {:>8.3} ms   p90 {:>8.3} ms",
        ms(b50),
        ms(b90)
    );
    println!(
        "  through atto (McpHub)     p50 {:>8.3} ms   p90 {:>8.3} ms",
        ms(a50),
        ms(a90)
    );
    println!(
        "  atto's overhead p50       {:>8.3} ms   target <= 1 ms   {}",
        ms(overhead),
        if overhead <= Duration::from_millis(1) {
            "ok"
        } else {
            "OVER"
        }
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
