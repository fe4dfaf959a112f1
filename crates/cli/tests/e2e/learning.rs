//! Learnings through the front door, with the real binary, a real database and the
//! scripted model: a command that fails, then a related one that works, becomes a proposed
//! WORKAROUND; the user validates it with Y in the terminal UI (tmux); a later `atto exec`
//! whose prompt matches sends it in its request (asserted on the request body) and names
//! it in a `learnings_used` event, while rejected and archived learnings never reach a
//! request; the line session reviews proposals with y / n / s; `atto learnings` lists,
//! decides, exports and imports (an export, and Attocode's database under `.attocode/`).

use serde_json::{Value, json};

use crate::common::{Env, call, calls, events, line_session, of_type, stderr};
use crate::tui_harness::start_atto;
use atto_testkit::{Reply, Script};

/// A program that does not exist, then a related command that works, then an answer.
fn fail_then_work() -> Vec<Reply> {
    vec![
        calls(vec![call(
            "bash",
            json!({"command": "nosuchtool-xyz notes.txt"}),
        )]),
        calls(vec![call("bash", json!({"command": "cat notes.txt"}))]),
        Reply::text("The notes say hello."),
    ]
}

const LESSON: &str =
    "bash: `cat notes.txt` worked where `nosuchtool-xyz notes.txt` failed (COMMAND_NOT_FOUND)";

/// The last user message of request `n` (chat wire).
fn last_user(env: &Env, n: usize) -> String {
    env.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .next_back()
        .unwrap_or_default()
        .to_owned()
}

fn system(env: &Env, n: usize) -> String {
    env.requests()[n].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `atto learnings ARGS` in the test's home; asserts it exits 0; its stdout.
fn learnings(env: &Env, args: &[&str]) -> String {
    let out = env.atto().arg("learnings").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One `atto exec` of `prompt` against a model that answers "ok"; its events and the
/// request it sent.
fn exec_once(env: &mut Env, prompt: &str) -> (Vec<Value>, String, String) {
    env.serve(Script::new(vec![Reply::text("ok")]));
    let out = env.exec("chat", prompt);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (events(&out), last_user(env, 0), system(env, 0))
}

fn used_ids(events: &[Value]) -> Vec<i64> {
    of_type(events, "learnings_used")
        .iter()
        .flat_map(|e| e["learnings"].as_array().unwrap().clone())
        .map(|l| l["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn learning_a_workaround_validated_with_y_in_the_tui_reaches_a_later_request() {
    let mut env = Env::new();
    env.write("notes.txt", "hello\n");
    let tmux = start_atto(&mut env, fail_then_work(), &["--permission", "auto-safe"]);
    tmux.line("show the notes");
    // The model read the diagnosis; after the turn the dialog asks about the workaround.
    let screen = tmux.wait_for("keep learning #1 (WORKAROUND)?");
    assert!(
        screen.contains("y validate  n reject  s skip for now"),
        "{screen}"
    );
    let flat: String = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("`cat notes.txt` worked where"), "{screen}");
    let sent = crate::tui_harness::tool_results(&env, 1);
    assert!(
        sent[0].contains("[atto] Diagnosis (COMMAND_NOT_FOUND)"),
        "{sent:?}"
    );
    tmux.keys(&["y"]);
    tmux.wait_for("learning #1 is validated");
    tmux.exit_and_check_shell();
    let listed = learnings(&env, &["list"]);
    assert!(
        listed.contains("#1 [validated] WORKAROUND 0.50"),
        "{listed}"
    );

    // A later session whose prompt matches: the learning is in the request, after the
    // prompt and never in the system prompt, and the event names it.
    let (events, user, system) = exec_once(&mut env, "read the notes file");
    assert_eq!(used_ids(&events), [1]);
    let used = &of_type(&events, "learnings_used")[0]["learnings"][0];
    assert_eq!(used["description"], LESSON);
    assert!(
        user.starts_with("read the notes file\n\n<recalled_learnings>\n"),
        "{user}"
    );
    assert!(
        user.contains(&format!("- #1 WORKAROUND (confidence 0.50): {LESSON}")),
        "{user}"
    );
    assert!(user.contains("</recalled_learnings>"), "{user}");
    assert!(!system.contains("recalled_learnings"), "{system}");
    // Query syntax in a prompt is just words.
    let (events, user, _) = exec_once(&mut env, "notes \"unbalanced (NEAR* -x: AND");
    assert_eq!(used_ids(&events), [1], "{user}");
    // A prompt about something else gets nothing.
    let (events, user, _) = exec_once(&mut env, "write a haiku about autumn");
    assert!(used_ids(&events).is_empty());
    assert!(!user.contains("recalled_learnings"), "{user}");

    // Archived: never sent again.
    let archived = learnings(&env, &["archive", "1"]);
    assert!(archived.contains("learning #1 is archived"), "{archived}");
    let (events, user, _) = exec_once(&mut env, "read the notes file");
    assert!(used_ids(&events).is_empty());
    assert!(!user.contains("recalled_learnings"), "{user}");
}

#[test]
fn learning_rejected_and_pending_ones_are_never_sent() {
    let mut env = Env::new();
    env.write("notes.txt", "hello\n");
    env.serve(Script::new(vec![
        calls(vec![call(
            "propose_learning",
            json!({"kind": "gotcha", "description": "The notes file is read with cat", "confidence": 0.5}),
        )]),
        calls(vec![call(
            "propose_learning",
            json!({"kind": "gotcha", "description": "Notes are plain text files", "confidence": 0.6}),
        )]),
        Reply::text("noted"),
    ]));
    let out = env.exec("chat", "look at the notes");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let proposed = of_type(&events(&out), "learning_proposed")
        .iter()
        .map(|e| {
            (
                e["learning"]["id"].as_i64().unwrap(),
                e["learning"]["status"].clone(),
            )
        })
        .collect::<Vec<_>>();
    assert_eq!(proposed, [(1, json!("proposed")), (2, json!("proposed"))]);
    let rejected = learnings(&env, &["reject", "1"]);
    assert!(rejected.contains("learning #1 is rejected"), "{rejected}");
    // #1 rejected, #2 still waiting: neither is sent.
    let (events, user, _) = exec_once(&mut env, "read the notes with cat");
    assert!(used_ids(&events).is_empty());
    assert!(!user.contains("recalled_learnings"), "{user}");
    // Once validated, #2 is.
    learnings(&env, &["validate", "2"]);
    let (events, _, _) = exec_once(&mut env, "read the notes with cat");
    assert_eq!(used_ids(&events), [2]);
    let pending = learnings(&env, &["list", "--status", "rejected"]);
    assert!(pending.contains("#1 [rejected] GOTCHA"), "{pending}");
}

#[test]
fn learning_the_line_session_reviews_proposals_with_y_n_s() {
    let mut env = Env::new();
    env.write("notes.txt", "hello\n");
    env.serve(Script::new(fail_then_work()));
    let err = line_session(&env, "show the notes\ny\n/learnings\n");
    assert!(
        err.contains("review learning #1 proposed (WORKAROUND, confidence 0.50)"),
        "{err}"
    );
    assert!(
        err.contains("y validate · n reject · s skip for now"),
        "{err}"
    );
    assert!(err.contains("learning #1 is validated"), "{err}");
    assert!(err.contains("#1 [validated] WORKAROUND 0.50"), "{err}");

    // A line that is not an answer skips the review and is taken as the next command.
    let mut env = Env::new();
    env.write("notes.txt", "hello\n");
    env.serve(Script::new(fail_then_work()));
    let err = line_session(&env, "show the notes\n/learnings pending\n");
    assert!(err.contains("review learning #1 proposed"), "{err}");
    assert!(err.contains("#1 [proposed] WORKAROUND 0.50"), "{err}");
    assert!(err.contains("/learnings validate N keeps it"), "{err}");
}

#[test]
fn learning_user_lessons_export_import_and_attocode() {
    let mut env = Env::new();
    env.serve(Script::new(vec![]));
    let err = line_session(
        &env,
        "/learn gotcha \"The CI image has no network\"\n/learn Run tests from the repo root\n/learnings helpful 1\n",
    );
    assert!(
        err.contains("learning #1 kept (GOTCHA, validated)"),
        "{err}"
    );
    assert!(
        err.contains("learning #2 kept (BEST_PRACTICE, validated)"),
        "{err}"
    );
    assert!(
        err.contains("learning #1 is validated (confidence 0.95)"),
        "{err}"
    );
    let shown = learnings(&env, &["show", "1"]);
    assert!(
        shown.contains("learning #1 — GOTCHA (validated)"),
        "{shown}"
    );
    assert!(shown.contains("proposed by user"), "{shown}");

    // Export, then import into another user's fresh database.
    let file = env.dir.path().join("team.json");
    learnings(&env, &["export", "-o", file.to_str().unwrap()]);
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(export["format"], "atto.learnings");
    assert_eq!(export["learnings"].as_array().unwrap().len(), 2);
    let other = Env::new();
    std::fs::copy(&file, other.dir.path().join("team.json")).unwrap();
    let out = other
        .atto()
        .args(["learnings", "import"])
        .arg(other.dir.path().join("team.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("imported 2 learning(s)"),
        "{}",
        stderr(&out)
    );
    let listed = learnings(&other, &["list"]);
    assert!(listed.contains("The CI image has no network"), "{listed}");
    // Importing again adds nothing.
    let out = other
        .atto()
        .args(["learnings", "import"])
        .arg(other.dir.path().join("team.json"))
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("imported 0 learning(s)"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("2 already here, skipped"),
        "{}",
        stderr(&out)
    );

    // Attocode's database under .attocode/, in the shape Attocode wrote it.
    std::fs::create_dir_all(other.repo().join(".attocode")).unwrap();
    let db = rusqlite::Connection::open(other.repo().join(".attocode/learnings.db")).unwrap();
    db.execute_batch(
        "CREATE TABLE learnings (id TEXT PRIMARY KEY, created_at REAL NOT NULL,
            updated_at REAL NOT NULL, type TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'proposed',
            description TEXT NOT NULL, details TEXT DEFAULT '', categories TEXT DEFAULT '[]',
            actions TEXT DEFAULT '[]', keywords TEXT DEFAULT '[]', apply_count INTEGER DEFAULT 0,
            help_count INTEGER DEFAULT 0, confidence REAL DEFAULT 0.5,
            source_failure_ids TEXT DEFAULT '[]', user_notes TEXT);
         INSERT INTO learnings VALUES ('learn-9f8e7d6c', 1700000000, 1700000000, 'workaround',
            'validated', 'Use python3 for the scripts', 'python is not installed', '[]',
            '[\"bash\"]', '[\"python\"]', 3, 1, 0.8, '[]', NULL);",
    )
    .unwrap();
    drop(db);
    let out = other
        .atto()
        .args(["learnings", "import", "--attocode"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("imported 1 learning(s) from"),
        "{}",
        stderr(&out)
    );
    let shown = learnings(&other, &["show", "3"]);
    assert!(shown.contains("Use python3 for the scripts"), "{shown}");
    assert!(shown.contains("proposed by import (attocode"), "{shown}");
    assert!(shown.contains("learn-9f8e7d6c"), "{shown}");
    assert!(shown.contains("used 3 · helpful 1"), "{shown}");
    // Bad input is refused with what to do.
    let out = other
        .atto()
        .args(["learnings", "import"])
        .arg(other.repo().join("notes-that-do-not-exist.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("nothing was imported"),
        "{}",
        stderr(&out)
    );
}
