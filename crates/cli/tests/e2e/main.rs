//! End-to-end tests of the `atto` binary against the scripted model server: real
//! processes, a real temporary git repository, real tools. One test binary so the
//! suite links once.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp;
mod bad_input;
mod cancel;
mod checkpoints;
mod checkpoints_gc;
mod checkpoints_watched;
mod common;
mod concurrency;
mod context;
mod conveniences;
mod crash;
mod demo;
mod edit_tools;
mod exec_wire;
mod faults;
mod goals;
mod learning;
mod mcp;
mod mcp_faults;
mod mcp_peers;
mod models;
mod new_user;
mod overview;
mod plan_headless;
mod plan_mode;
mod plan_resume;
mod plan_review;
mod planner;
mod planner_decisions;
mod planner_effort;
mod planner_parallel;
mod planner_quality;
mod policy;
mod repo_trust;
mod rewind;
mod sandbox_secrets;
mod scaleout;
mod scaleout_swebench;
mod sessions;
mod subagents;
mod swarm;
mod swarm_faults;
mod swarm_gate;
mod swarm_html;
mod swebench;
mod trust;
mod tui;
mod tui_agents;
mod tui_harness;
mod tui_pickers;
mod tui_planner;
mod tui_swarm;
