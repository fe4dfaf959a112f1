//! `/rewind` in the line session: the prompts listed with numbers, then the conversation
//! and the files taken back to just before one, the old conversation kept as a thread.

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::*;

/// What the user typed in each user message of a request (the notes and facts atto adds
/// after a blank line cut off).
fn typed(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| {
            let content = m["content"].as_str().unwrap_or_default();
            content
                .split_once("\n\n")
                .map_or(content, |(typed, _)| typed)
                .to_owned()
        })
        .collect()
}

fn write(path: &str, content: &str) -> Reply {
    calls(vec![call(
        "write_file",
        json!({"path": path, "content": content}),
    )])
}

#[test]
fn rewind_lists_the_prompts_and_takes_conversation_and_files_back_before_one() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            write("a.txt", "one\n"),
            Reply::text("wrote one"),
            write("a.txt", "two\n"),
            Reply::text("wrote two"),
            Reply::text("answered the edit"),
        ],
        ..Script::default()
    });
    let script = "first prompt\n\
                  second prompt\n\
                  /rewind\n\
                  /rewind 2 both\n\
                  second prompt, edited\n\
                  /threads\n";
    let out = run_line_session(&env, "m", &["--permission", "yolo"], script);
    let err = stderr(&out);
    assert!(err.contains("    1  first prompt"), "{err}");
    assert!(err.contains("    2  second prompt"), "{err}");
    assert!(
        err.contains("rewound the conversation and the files to just before prompt 2"),
        "{err}"
    );
    assert!(
        err.contains("edit and send again:\n  second prompt\n"),
        "{err}"
    );
    // The files are as the first prompt left them.
    assert_eq!(env.read("a.txt"), "one\n");
    // The model saw the first exchange and the edited prompt, not the second prompt.
    let reqs = env.requests();
    assert_eq!(
        typed(&reqs.last().unwrap().body),
        ["first prompt", "second prompt, edited"]
    );
    // The model is told the files moved back under it.
    let last = reqs.last().unwrap().body.to_string();
    assert!(
        last.contains("The user restored the workspace files"),
        "{last}"
    );
    // The conversation rewound from stays, as the new version's parent.
    assert!(
        err.contains("\"rewind of main to before prompt 2\""),
        "{err}"
    );
}

#[test]
fn rewind_of_the_conversation_alone_leaves_the_files() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            write("a.txt", "one\n"),
            Reply::text("wrote one"),
            write("a.txt", "two\n"),
            Reply::text("wrote two"),
        ],
        ..Script::default()
    });
    let script = "first prompt\n\
                  second prompt\n\
                  /rewind 1\n\
                  /rewind\n";
    let err = stderr(&run_line_session(
        &env,
        "m",
        &["--permission", "yolo"],
        script,
    ));
    assert!(
        err.contains("rewound the conversation to just before prompt 1"),
        "{err}"
    );
    assert!(err.contains("no prompts in this conversation yet"), "{err}");
    assert_eq!(env.read("a.txt"), "two\n");
}
