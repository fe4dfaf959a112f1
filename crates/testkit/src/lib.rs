//! `atto-testkit`: a scripted model server for atto's tests, benchmarks and offline demo.
//!
//! A real HTTP/1.1 server on 127.0.0.1 that answers OpenAI Chat Completions
//! (`…/chat/completions`), OpenAI Responses (`…/responses`) and Anthropic Messages
//! (`…/messages`) requests, streamed (SSE over a chunked body) or not, from a [`Script`]
//! consumed one reply per model request. It records every request and can inject faults:
//! HTTP error statuses, delays, streams cut mid-chunk, streams ended cleanly before
//! their terminal event, malformed chunks, mid-stream error events, and recorded
//! event streams replayed verbatim. It does not check what clients send beyond parsing it; tests assert on
//! [`ScriptedServer::requests`].
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use atto_testkit::{Reply, Script, ScriptedServer};
//! let server = ScriptedServer::start(Script::new(vec![Reply::text("hello")])).await?;
//! let url = format!("{}/v1/chat/completions", server.base_url());
//! # let _ = url;
//! // … point a client at `url`, then:
//! assert_eq!(server.replies_served(), 1);
//! # Ok(()) }
//! ```

mod http;
mod script;
mod server;
mod skip;
mod sse;
mod wire;

pub use script::{
    Fault, LineEnding, Reply, Script, ScriptError, ScriptStop, ScriptToolCall, ScriptUsage,
    StreamOptions,
};
pub use server::{RecordedRequest, ScriptedServer};
pub use skip::skipped;
