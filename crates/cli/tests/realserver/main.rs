//! End-to-end tests of the `atto` binary against a real model server: llama.cpp's
//! `llama-server` with the tiny SmolLM2-135M model, started by `scripts/realserver.sh`.
//! Unlike the scripted server of the `e2e` binary, this peer was written by nobody here:
//! its streams leave fields out, answer 500 for bad tool JSON and die when killed.
//!
//! The tests run one at a time (one server, two threads). Without `ATTO_REALSERVER=1`
//! (set by `scripts/test.sh` once the server is set up) they say SKIPPED and pass,
//! except under `CI=true`, where a missing server is a failure.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod answers;
mod faults;
mod fixture;
mod limits;
mod plain;
mod swarm;
mod tools;
