//! Owns: the line session (a prompt per line on stdin, events printed as text or as
//! `atto exec`'s stream-json) and the text and JSON renderings of events it shares with exec.
//! Must never: depend on an engine crate or decide anything an engine decides; what it must
//! know of tools and settings comes from the binary through [`Facts`] and [`LineSwarm`].
//!
//! The line session holds an `AgentHandle` like every front end: `repl` reads lines and
//! answers prompts (approvals, plan decisions, learning reviews) from stdin, `render` turns
//! events into text and JSON lines, `signal` turns Ctrl-C into a stream nothing is lost from.

pub mod render;
pub mod repl;
pub mod signal;

pub use render::{Facts, TextRenderer};
pub use repl::{LineFormat, LineSwarm, Options, Outcome, run, run_one};
