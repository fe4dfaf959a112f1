//! Fault handling through the front door: rate limits, dead endpoints, cut streams,
//! bad credentials and broken tool JSON.

use atto_testkit::{Fault, Reply, Script, ScriptStop, ScriptToolCall};
use serde_json::json;

use crate::common::{Env, events, of_type, stderr};

fn text(t: &str) -> Reply {
    Reply {
        text: Some(t.into()),
        ..Reply::default()
    }
}

fn fault(f: Fault) -> Reply {
    Reply {
        fault: Some(f),
        ..Reply::default()
    }
}

fn status(code: u16) -> Fault {
    Fault::Status {
        status: code,
        body: None,
        retry_after: None,
    }
}

#[test]
fn rate_limit_is_retried_and_the_result_is_correct() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            fault(Fault::Status {
                status: 429,
                body: None,
                retry_after: Some("0".into()),
            }),
            text("all good"),
        ],
        ..Script::default()
    });
    let out = env.exec("chat", "hi");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let retries = of_type(&evs, "retry");
    assert_eq!(retries.len(), 1);
    assert!(retries[0]["reason"].as_str().unwrap().contains("429"));
    assert_eq!(evs.last().unwrap()["text"], "all good");
    assert_eq!(env.requests().len(), 2);
}

#[test]
fn server_errors_give_up_with_exit_75() {
    let mut env = Env::new();
    env.serve(Script {
        replies: (0..10).map(|_| fault(status(500))).collect(),
        ..Script::default()
    });
    let out = env.exec("anthropic", "hi");
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    let evs = events(&out);
    let result = evs.last().unwrap();
    assert_eq!(result["status"], "failed");
    assert_eq!(result["failure"], "transient");
    let error = result["error"].as_str().unwrap();
    assert!(error.contains("500"), "{error}");
    // Bounded: the configured 4 attempts (or fewer, if the circuit breaker opened).
    let n = env.requests().len();
    assert!((3..=4).contains(&n), "{n} requests");
}

#[test]
fn cut_stream_is_retried_and_no_half_call_runs() {
    let mut env = Env::new();
    let write = ScriptToolCall {
        id: Some("w1".into()),
        name: "write_file".into(),
        arguments: json!({"path": "out.txt", "content": "complete"}),
        raw_arguments: None,
    };
    let cut_reply = Reply {
        tool_calls: vec![write.clone()],
        fault: Some(Fault::Cut { after_events: 3 }),
        ..Reply::default()
    };
    let good = Reply {
        tool_calls: vec![write],
        ..Reply::default()
    };
    env.serve(Script {
        replies: vec![cut_reply, good, text("wrote it")],
        ..Script::default()
    });
    let out = env.exec("responses", "write out.txt");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(env.read("out.txt"), "complete");
    let evs = events(&out);
    assert_eq!(of_type(&evs, "retry").len(), 1);
    assert_eq!(of_type(&evs, "tool_call_started").len(), 1);
}

#[test]
fn bad_credentials_fail_at_once_and_name_the_variable() {
    let mut env = Env::new();
    let url = env.serve(Script {
        replies: vec![fault(status(401)), text("never")],
        ..Script::default()
    });
    let secret = "sk-test-SECRET-4242";
    let out = env
        .atto()
        .env("OPENAI_API_KEY", secret)
        .args(["exec", "--provider", "openai", "--base-url"])
        .arg(format!("{url}/v1"))
        .args(["--output-format", "stream-json", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(env.requests().len(), 1, "401 must not be retried");
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(all.contains("OPENAI_API_KEY"), "{all}");
    assert!(!all.contains(secret), "the API key leaked: {all}");
    assert_eq!(
        env.requests()[0].headers["authorization"],
        format!("Bearer {secret}")
    );
}

#[test]
fn truncated_tool_json_is_never_executed() {
    let mut env = Env::new();
    let cut = Reply {
        tool_calls: vec![ScriptToolCall {
            id: Some("t1".into()),
            name: "write_file".into(),
            arguments: json!(null),
            raw_arguments: Some(r#"{"path": "half.txt", "content": "abc"#.into()),
        }],
        stop: Some(ScriptStop::MaxTokens),
        ..Reply::default()
    };
    env.serve(Script {
        replies: vec![cut, text("giving up")],
        ..Script::default()
    });
    let out = env.exec("chat", "write half.txt");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.repo().join("half.txt").exists());
    let evs = events(&out);
    let finished = of_type(&evs, "tool_call_finished");
    assert_eq!(finished[0]["status"], "invalid_arguments");
    let reqs = env.requests();
    let fed_back = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(fed_back.contains("cut off"), "{fed_back}");
    assert!(fed_back.contains("not run"), "{fed_back}");
}

#[test]
fn debug_writes_the_wire_log_and_a_failed_run_says_where() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![Reply {
            fault: Some(atto_testkit::Fault::Status {
                status: 400,
                body: Some(r#"{"error":{"message":"model not found: nope"}}"#.into()),
                retry_after: None,
            }),
            ..Reply::default()
        }],
        ..Script::default()
    });
    let out = env
        .atto()
        .env("OPENAI_API_KEY", "sk-test-secret-value")
        .args(["exec", "--debug", "--provider", "openai"])
        .args(["--base-url", &env.base("chat"), "--model", "nope", "hi"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    let path = err
        .lines()
        .find_map(|l| l.strip_prefix("atto: every request and response of this run is in "))
        .unwrap_or_else(|| panic!("no log named: {err}"));
    let log = std::fs::read_to_string(path.trim()).unwrap();
    assert!(log.contains("model not found: nope"), "{log}");
    assert!(log.contains("\"hi"), "the request body is logged: {log}");
    assert!(
        !log.contains("sk-test-secret-value"),
        "the key leaked into the log"
    );
    // Without --debug nothing is written.
    let logs = env.dir.path().join("home/atto-data/logs");
    let before = std::fs::read_dir(&logs).unwrap().count();
    let _ = env.exec("chat", "again");
    assert_eq!(std::fs::read_dir(&logs).unwrap().count(), before);
}
