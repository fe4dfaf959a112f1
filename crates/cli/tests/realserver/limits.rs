//! Replies cut by the output-token limit: a text reply is kept and flagged; a tool call
//! cut mid-arguments is not run, and the session goes on (llama-server answers 500 when
//! the next request carries the truncated arguments verbatim).

use crate::fixture::{
    Limits, Server, ServerOptions, TOOL_PROMPT, WIRES, Workspace, events, of_type, result,
    transcript,
};

#[test]
fn a_text_reply_cut_by_the_output_limit_is_kept_and_flagged() {
    let Some(server) = Server::start(ServerOptions::default()) else {
        return;
    };
    let ws = Workspace::new(
        &server,
        Limits {
            max_rounds: 3,
            max_output_tokens: 5,
        },
    );
    for wire in WIRES {
        let out = ws.exec(
            wire,
            "stream-json",
            &[],
            "Write a long story about a dragon.",
        );
        assert_eq!(out.status.code(), Some(0), "{wire}: {}", transcript(&out));
        let evs = events(&out);
        // llama-server's Responses stream says `completed` even when the limit cut it,
        // so only chat (`finish_reason: length`) and anthropic (`max_tokens`) can flag it.
        if wire != "responses" {
            let warnings = of_type(&evs, "warning");
            assert!(
                warnings
                    .iter()
                    .any(|w| w["message"].as_str().unwrap().contains("cut off")),
                "{wire}: {}",
                transcript(&out)
            );
        }
        let res = result(&evs);
        assert_eq!(res["status"], "completed", "{wire}: {}", transcript(&out));
        assert!(!res["text"].as_str().unwrap().is_empty());
        assert_eq!(
            res["usage"]["output_tokens"],
            5,
            "{wire}: {}",
            transcript(&out)
        );
    }
}

#[test]
fn a_tool_call_cut_by_the_output_limit_is_not_run_and_does_not_wedge_the_session() {
    let Some(server) = Server::start(ServerOptions {
        tools: true,
        ..ServerOptions::default()
    }) else {
        return;
    };
    // 15 tokens end inside the call's arguments.
    let ws = Workspace::new(
        &server,
        Limits {
            max_rounds: 2,
            max_output_tokens: 15,
        },
    );
    for wire in WIRES {
        let out = ws.exec(
            wire,
            "stream-json",
            &["--permission", "auto-safe"],
            TOOL_PROMPT,
        );
        let evs = events(&out);
        let finished = of_type(&evs, "tool_call_finished");
        assert!(!finished.is_empty(), "{wire}: {}", transcript(&out));
        assert_eq!(
            finished[0]["status"],
            "invalid_arguments",
            "{wire}: {}",
            transcript(&out)
        );
        assert!(
            !ws.repo().join("log.txt").exists(),
            "{wire}: a cut call must not run: {}",
            transcript(&out)
        );
        // The next request is one the server accepts: the server never refuses it (the
        // wedge was an HTTP 500 for the cut call's JSON, retried until exit 75). A retry
        // because the server closed an idle kept-alive connection is the transport's, not
        // a refusal, and may happen on any run.
        let refused: Vec<_> = of_type(&evs, "retry")
            .into_iter()
            .filter(|r| r["reason"].as_str().is_some_and(|why| why.contains("HTTP")))
            .collect();
        assert!(refused.is_empty(), "{wire}: {}", transcript(&out));
        let code = out.status.code();
        assert!(
            code == Some(0) || code == Some(1),
            "{wire}: ends cleanly, not {code:?}: {}",
            transcript(&out)
        );
        let res = result(&evs);
        assert_ne!(res["failure"], "transient", "{wire}: {}", transcript(&out));
        if code == Some(1) {
            assert!(
                res["error"].as_str().is_some_and(|e| !e.is_empty())
                    || res["status"] == "limit_reached",
                "{wire}: a failure says why: {}",
                transcript(&out)
            );
        }
    }
}
