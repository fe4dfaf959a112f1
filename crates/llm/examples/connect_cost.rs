//! Measures what building a model client costs: `cargo run --release -p atto-llm --example connect_cost`.
//!
//! Prints wall time of `connect()` for http:// and https:// endpoints, of a whole first
//! and second model call against atto-testkit on 127.0.0.1, and for contrast what
//! reqwest's default rustls setup and loading the system roots cost.

use std::time::Instant;

use atto_llm::{ClientOptions, ModelRequest, ResolvedProvider, Secret, Wire, connect};
use atto_protocol::Message;
use atto_testkit::{Reply, Script, ScriptedServer};

fn provider(base_url: &str) -> ResolvedProvider {
    ResolvedProvider {
        name: "bench".into(),
        base_url: base_url.into(),
        wire: Wire::Chat,
        model: "m".into(),
        api_key: Some(Secret::new("sk-bench")),
        api_key_env: Some("BENCH_KEY".into()),
    }
}

fn time<T>(label: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    println!(
        "{label:<48} {:>8.3} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(first_calls())?;
    let _a = time("connect() http, first in process", || {
        connect(&provider("http://127.0.0.1:9/v1"), ClientOptions::default())
    })?;
    let _b = time("connect() http, second", || {
        connect(&provider("http://127.0.0.1:9/v1"), ClientOptions::default())
    })?;
    let _c = time("connect() https (roots load in background)", || {
        connect(
            &provider("https://api.example.com/v1"),
            ClientOptions::default(),
        )
    })?;
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .ok_or("no crypto provider")?;
    time("for contrast: platform verifier (system roots)", || {
        rustls_platform_verifier::Verifier::new(provider)
    })?;
    time("for contrast: reqwest default Client::build()", || {
        reqwest::Client::builder().build()
    })?;
    Ok(())
}

async fn first_calls() -> Result<(), Box<dyn std::error::Error>> {
    let server = ScriptedServer::start(Script::new(vec![
        Reply::text("hello"),
        Reply::text("again"),
    ]))
    .await?;
    let req = ModelRequest {
        system: "system".into(),
        messages: vec![Message::user("hi")].into(),
        tools: Vec::new().into(),
        max_output_tokens: 100,
        effort: None,
        temperature: None,
    };
    let start = Instant::now();
    let client = connect(&provider(&server.base_url()), ClientOptions::default())?;
    client.stream(&req, &mut |_| {}).await?;
    println!(
        "{:<48} {:>8.3} ms",
        "connect() + first call (testkit, new connection)",
        start.elapsed().as_secs_f64() * 1e3
    );
    let start = Instant::now();
    client.stream(&req, &mut |_| {}).await?;
    println!(
        "{:<48} {:>8.3} ms",
        "second call (pooled connection)",
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
