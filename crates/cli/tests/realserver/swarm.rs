//! `atto swarm` against the real model: a tiny model cannot write a valid decomposition
//! within a small output limit, so the swarm must fail cleanly — re-asked with the
//! error, a one-line reason, exit 1, its state saved and its report written — and never
//! hang or panic on what a real server sends.

use crate::fixture::{Limits, Server, ServerOptions, Workspace, run_bounded, transcript};

#[test]
fn a_decomposition_the_model_cannot_write_fails_cleanly_and_is_saved() {
    let Some(server) = Server::start(ServerOptions::default()) else {
        return;
    };
    let ws = Workspace::new(
        &server,
        Limits {
            max_rounds: 2,
            max_output_tokens: 24,
        },
    );
    let mut cmd = ws.atto();
    cmd.args([
        "swarm",
        "--yes",
        "--output-format",
        "stream-json",
        "create hello.py that prints hello, and a test for it",
    ]);
    let out = run_bounded(cmd);
    let all = transcript(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}\n{all}")))
        .collect();
    let finished = events
        .iter()
        .find(|e| e["type"] == "swarm.finished")
        .unwrap_or_else(|| panic!("no swarm.finished: {all}"));
    assert_eq!(finished["status"], "failed", "{all}");
    assert!(std::path::Path::new(finished["report"].as_str().unwrap()).exists());
    // The saved state says why.
    let status = run_bounded({
        let mut c = ws.atto();
        c.args(["swarm", "status", "--json"]);
        c
    });
    assert_eq!(status.status.code(), Some(0), "{}", transcript(&status));
    let report: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(report["status"], "failed");
    let error = report["error"].as_str().unwrap_or("");
    assert!(
        error.contains("decomposition"),
        "the reason names the decomposition: {report}"
    );
}
