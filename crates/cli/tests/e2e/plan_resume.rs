//! A plan across processes: a pending plan survives SIGKILL and resumes approvable with
//! the same changes in the same order; a decision made before exit still reaches the model
//! after resume; the first command after resuming prints its own answer, not just the
//! resume notice.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use atto_testkit::Reply;
use serde_json::Value;

use crate::common::{Env, of_type, stderr};
use crate::plan_mode::{
    bash, calls, decided, delete, edit, expect, files, json_session, last_user, serve, session,
    shown_changes, write,
};

#[test]
fn a_plan_survives_sigkill_and_resumes_approvable() {
    let mut env = Env::new();
    env.write("keep.txt", "keep\n");
    env.write("edit.txt", "before\n");
    env.write("gone.txt", "bye\n");
    serve(
        &mut env,
        vec![
            calls(
                "Four changes.",
                vec![
                    write("new.txt", "new\n"),
                    edit("edit.txt", "before", "after"),
                    bash("echo x > cmd.txt"),
                    delete("gone.txt"),
                ],
            ),
            Reply::text("Queued four."),
            Reply::text("Thanks."),
        ],
    );
    let before = files(&env);
    let mut child = env
        .atto()
        .args([
            "--permission",
            "auto-safe",
            "--wire",
            "chat",
            "--mode",
            "plan",
        ])
        .args(["--base-url", &env.base("chat"), "--model", "m"])
        .args(["--output-format", "stream-json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // stdin stays open: the session waits for more input while the plan is pending.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"make four changes\n").unwrap();
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Value>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(event) = serde_json::from_str(&line)
                && tx.send(event).is_err()
            {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while !seen.iter().any(|e: &Value| e["type"] == "turn_completed") {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(event) => seen.push(event),
            Err(_) => panic!("no turn_completed before the deadline: {seen:#?}"),
        }
    }
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    drop(stdin);
    reader.join().unwrap();
    let queued: Vec<(String, u64)> = of_type(&seen, "change_queued")
        .iter()
        .map(|e| {
            (
                e["change"]["id"].as_str().unwrap().to_owned(),
                e["change"]["order"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(queued.len(), 4, "{seen:#?}");
    assert_eq!(
        files(&env),
        before,
        "killed with a pending plan: nothing applied"
    );

    let (events, out) = json_session(&env, &["-c"], "/show-plan\n/approve\nall done?\n");
    let err = stderr(&out);
    let notices = of_type(&events, "notice");
    assert!(
        notices
            .iter()
            .any(|n| n["message"].as_str().unwrap().contains("4 change(s)")),
        "{events:#?}"
    );
    let shown: Vec<(String, u64)> = shown_changes(&events)
        .iter()
        .map(|c| {
            assert_eq!(c["status"], "pending");
            (
                c["id"].as_str().unwrap().to_owned(),
                c["order"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shown, queued, "{err}");
    let applied: Vec<(u64, String)> = (1..=4).map(|o| (o, "applied".to_owned())).collect();
    assert_eq!(decided(&events, 0), applied, "{err}");
    assert_eq!(
        files(&env),
        expect(&[
            ("cmd.txt", "x\n"),
            ("edit.txt", "after\n"),
            ("keep.txt", "keep\n"),
            ("new.txt", "new\n"),
        ])
    );
    let told = last_user(&env.requests().last().unwrap().body);
    assert!(told.contains("[PLAN REVIEW]"), "{told}");
    assert!(
        told.contains("change 4 (delete_file gone.txt): applied"),
        "{told}"
    );
}

#[test]
fn a_decision_made_before_exit_reaches_the_model_after_resume() {
    let mut env = Env::new();
    serve(
        &mut env,
        vec![
            calls("One file.", vec![write("a.txt", "alpha\n")]),
            Reply::text("Queued."),
            Reply::text("Continuing."),
        ],
    );
    session(&env, &["--mode", "plan"], "make a\n/approve\n");
    assert_eq!(env.read("a.txt"), "alpha\n");
    // The model's history says the write was queued and "has NOT been applied"; only the
    // review note tells it otherwise, so that note must survive the process.
    session(&env, &["-c"], "next step\n");
    let told = last_user(&env.requests().last().unwrap().body);
    assert!(
        told.contains("[PLAN REVIEW]") && told.contains("change 1 (write_file a.txt): applied"),
        "the model never hears that its change was applied: {told}"
    );
}

#[test]
fn the_first_command_after_resuming_a_pending_plan_prints_its_own_answer() {
    let mut env = Env::new();
    serve(
        &mut env,
        vec![
            calls("One file.", vec![write("a.txt", "alpha\n")]),
            Reply::text("Queued."),
        ],
    );
    session(&env, &["--mode", "plan"], "make a\n");
    // Resumed with a pending plan, atto announces it; that notice is not the answer to the
    // command typed next.
    let out = session(&env, &["-c"], "/approve\n");
    assert_eq!(env.read("a.txt"), "alpha\n");
    let err = stderr(&out);
    assert!(
        err.contains("1. write_file a.txt: applied") && err.contains("plan closed: 1 applied"),
        "/approve ran but its outcome was never shown: {err}"
    );
}
