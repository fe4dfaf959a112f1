//! atto's policy layer. Today it holds the parsed bash command classifier
//! (`bash`), the `atto policy explain` helpers built on it (`explain`), the
//! permission gate (`gate`) and the one protected-path list (`protected`).
//! Permission modes, remembered grants and the sandbox join this crate later;
//! this crate decides, it never runs anything.

pub mod bash;
pub mod explain;
pub mod gate;
pub mod pinned;
pub mod protected;

pub use bash::{BashRisk, Segment, Verdict, classify, is_test_command};
pub use explain::{explain_json, explain_jsonl, explain_jsonl_line};
