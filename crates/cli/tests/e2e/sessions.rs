//! Saved sessions: every message is stored as it happens, and a later run continues the
//! conversation with its whole history.

use atto_testkit::{Reply, Script};

use crate::common::{Env, run_line_session, stderr};

/// What the user typed in each user message of a request: the text before the facts atto
/// appends for the model (the turn facts, then the agent mode, which every message ends with).
fn user_texts(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| {
            let content = m["content"].as_str().unwrap_or_default();
            let (typed, facts) = content.split_once("\n\n<turn_meta>").unwrap();
            assert!(facts.ends_with("[atto] Agent mode: BUILD"), "{facts}");
            typed.to_owned()
        })
        .collect()
}

#[test]
fn exec_continue_resumes_the_latest_session_with_its_history() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![Reply::text("Noted: 42."), Reply::text("It was 42.")],
        ..Script::default()
    });
    let first = env.exec("chat", "Remember the number 42.");
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));

    let list = env.atto().arg("sessions").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(list.contains("Remember the number 42."), "{list}");
    assert!(list.contains("2 messages"), "{list}");
    let id = list.split_whitespace().next().unwrap().to_owned();

    let base = env.base("chat");
    let second = env
        .atto()
        .args(["exec", "--continue", "--base-url", &base, "--model", "m"])
        .arg("Which number was it?")
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let reqs = env.requests();
    let history = user_texts(&reqs[1].body);
    assert_eq!(history, ["Remember the number 42.", "Which number was it?"]);
    let assistant = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["role"] == "assistant" && m["content"] == "Noted: 42.");
    assert!(
        assistant,
        "the earlier reply is part of the resumed history"
    );

    // Both turns are in the same session, visible by id prefix.
    let show = env
        .atto()
        .args(["sessions", "show", &id[..8]])
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(show.contains("> Which number was it?"), "{show}");
    assert!(show.contains("It was 42."), "{show}");
    assert!(show.contains("4 messages"), "{show}");
}

#[test]
fn resuming_what_does_not_exist_is_a_one_line_error() {
    let env = Env::new();
    let out = env
        .atto()
        .args([
            "exec",
            "--resume",
            "nope",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .args(["--model", "m", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("no session matches 'nope'"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn fork_copies_a_session_and_export_writes_it() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![Reply::text("First answer."), Reply::text("Forked answer.")],
        ..Script::default()
    });
    let first = env.exec("chat", "Original question");
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let fork = env
        .atto()
        .args(["fork", "--last", "--label", "try B"])
        .output()
        .unwrap();
    assert_eq!(fork.status.code(), Some(0), "{}", stderr(&fork));
    let fork_id = String::from_utf8_lossy(&fork.stdout).trim().to_owned();
    assert!(stderr(&fork).contains("2 messages"), "{}", stderr(&fork));

    let base = env.base("chat");
    let out = env
        .atto()
        .args([
            "exec",
            "--resume",
            &fork_id,
            "--base-url",
            &base,
            "--model",
            "m",
        ])
        .arg("Follow-up in the fork")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        user_texts(&env.requests()[1].body),
        ["Original question", "Follow-up in the fork"]
    );

    // The original is unchanged: still two messages.
    let list = env.atto().arg("sessions").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(list.contains("   2 messages"), "{list}");
    assert!(list.contains("   4 messages"), "{list}");
    // The fork shows its label and where it came from.
    assert!(
        list.contains("[try B] Original question  (fork of "),
        "{list}"
    );
    let json = env
        .atto()
        .args(["sessions", "export", &fork_id, "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(doc["session"]["parent_session"].is_string(), "{doc}");
    assert_eq!(doc["session"]["fork_point"], 2, "{doc}");
    assert_eq!(doc["session"]["label"], "try B");

    let md = env
        .atto()
        .args(["sessions", "export", &fork_id])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("## User\n\nFollow-up in the fork"), "{md}");
    assert!(md.contains("Forked answer."), "{md}");
    let json = env
        .atto()
        .args(["sessions", "export", &fork_id, "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["messages"].as_array().unwrap().len(), 4);
    assert_eq!(doc["session"]["id"], fork_id.as_str());
}

#[test]
fn threads_branch_switch_and_roll_back_without_touching_the_original() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            Reply::text("A1"),
            Reply::text("B1"),
            Reply::text("C1"),
            Reply::text("R1"),
            Reply::text("M2"),
        ],
        ..Script::default()
    });
    let script = "first question\n\
                  /fork \"Try B\"\n\
                  b question\n\
                  /switch main\n\
                  /fork \"Try C\"\n\
                  c question\n\
                  /threads\n\
                  /rollback\n\
                  r question\n\
                  /switch Try B\n\
                  /switch main\n\
                  /threads\n";
    let out = run_line_session(&env, "m", &[], script);
    let err = stderr(&out);
    assert!(err.contains("├── fork-"), "{err}");
    assert!(err.contains("\"Try B\" (4 messages)"), "{err}");
    assert!(err.contains("\"Try C\" (4 messages) ← current"), "{err}");
    assert!(err.contains("main (2 messages) ← current"), "{err}");
    assert!(err.contains("\"rollback of fork-"), "{err}");
    // The label /threads shows switches as the id does.
    assert!(
        err.contains("now in thread fork-") && err.contains("\"Try B\" (4 messages)\n"),
        "{err}"
    );

    // Each branch saw only its own history.
    let reqs = env.requests();
    assert_eq!(user_texts(&reqs[1].body), ["first question", "b question"]);
    assert_eq!(user_texts(&reqs[2].body), ["first question", "c question"]);
    // The rollback went back to C's fork point: C's own messages are not in it.
    assert_eq!(user_texts(&reqs[3].body), ["first question", "r question"]);

    // Resume continues in the current thread (main), whose history is unchanged.
    let out = env
        .exec_with(&["--continue"], "main again")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        user_texts(&env.requests()[4].body),
        ["first question", "main again"]
    );
}

#[test]
fn a_corrupt_database_is_reported_kept_and_can_be_moved_aside() {
    let mut env = Env::new();
    let data = env.dir.path().join("home/atto-data");
    std::fs::create_dir_all(&data).unwrap();
    let db = data.join("atto.db");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();
    env.serve(Script {
        replies: vec![
            Reply::text("ran without the database"),
            Reply::text("fresh"),
        ],
        ..Script::default()
    });

    let out = env.exec("chat", "hello");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert!(err.contains("atto store move-aside"), "{err}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        garbage,
        "the damaged file must be kept as is"
    );

    let moved = env.atto().args(["store", "move-aside"]).output().unwrap();
    assert_eq!(moved.status.code(), Some(0), "{}", stderr(&moved));
    let moved_to = String::from_utf8_lossy(&moved.stdout).trim().to_owned();
    assert_eq!(std::fs::read(&moved_to).unwrap(), garbage);

    let out = env.exec("chat", "hello again");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let list = env.atto().arg("sessions").output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("hello again"));
}

#[test]
fn an_unusable_data_dir_is_reported_and_the_run_goes_on() {
    let mut env = Env::new();
    // A regular file where the data directory should be.
    let blocker = env.dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    env.serve(Script {
        replies: vec![Reply::text("still answered")],
        ..Script::default()
    });
    let out = env
        .atto()
        .env("ATTO_HOME", &blocker)
        .args([
            "exec",
            "--base-url",
            &env.base("chat"),
            "--model",
            "m",
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&blocker.display().to_string()), "{err}");
    assert!(err.contains("are off for this run"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("still answered"));
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "x");
    // Resuming needs the database: a one-line error, exit 2.
    let out = env
        .atto()
        .env("ATTO_HOME", &blocker)
        .args([
            "exec",
            "-c",
            "--base-url",
            &env.base("chat"),
            "--model",
            "m",
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot resume"), "{}", stderr(&out));
}
