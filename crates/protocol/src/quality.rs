//! What the quality pipeline decided about a piece of work, as events carry it.

use serde::{Deserialize, Serialize};

/// The verdict on a plan step, task or subagent report, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QualityCheck {
    /// `pass`, `fail`, `needs_retry` or `intervention`.
    pub verdict: String,
    /// 1–5 (0: no tool calls at all); absent when nothing scored it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// The attempt judged (1 for the first).
    pub attempt: u32,
    /// What was wrong, stage by stage (`compile: a.py:3 — SyntaxError: …`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// The verification checks run (`[tests] PASSED (python3 -m pytest …)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
}
