//! Owns: the line session (a prompt per line on stdin, events printed as text or as
//! `atto exec`'s stream-json), the renderings of events it shares with exec, a swarm's front.
//! Must never: depend on an engine crate or decide anything an engine decides; what it must
//! know of tools and settings comes from the binary through [`Facts`] and [`LineSwarm`].
//!
//! The line session holds an `AgentHandle` like every front end: `repl` reads lines and
//! answers prompts (approvals, plan decisions, learning reviews) from stdin, `render` turns
//! events into text and JSON lines, `signal` turns Ctrl-C into a stream nothing is lost from.
//! `swarm_front` is a swarm's side of the same conversation (progress, the plan's y/N,
//! workers' approvals, stuck tasks), for `atto swarm` and `/swarm` in the line session.

pub mod headless;
pub mod render;
pub mod repl;
pub mod signal;
pub mod swarm_front;

pub use headless::{InputFormat, OnAsk, OutputFormat};
pub use render::{Facts, TextRenderer};
pub use repl::{LineFormat, LineSwarm, Options, Outcome, run, run_one};
