//! The terminal UI through the front door: the real binary in a real terminal (tmux, on a
//! private server socket per test), a scripted model, keys sent as a user types them and
//! the screen read back. Covers a streamed answer, Tab to Plan mode, a queued write shown
//! and approved, an approval answered with A, Esc cancelling a turn, the terminal coming
//! back after exit, and bad input (a tiny window, a 1 MB paste, invalid UTF-8 in tool
//! output, an unknown command).

use std::time::{Duration, Instant};

use std::process::Command;

use atto_testkit::Reply;
use serde_json::json;

use crate::common::{Env, call, calls};
use crate::tui_harness::{WAIT, start_atto, tool_results, user_messages};

/// A reply that runs `command` with bash, then one that says `answer`.
fn bash_then(command: &str, answer: &str) -> Vec<Reply> {
    vec![
        calls(vec![call("bash", json!({ "command": command }))]),
        Reply::text(answer),
    ]
}

/// A reply that says `text` after `delay_ms`.
fn slow(text: &str, delay_ms: u64) -> Reply {
    Reply {
        delay_ms,
        ..Reply::text(text)
    }
}

#[test]
fn a_prompt_streams_its_answer_and_exit_restores_the_terminal() {
    let mut env = Env::new();
    let tmux = start_atto(
        &mut env,
        vec![Reply::text(
            "## Result\n\nThe answer is **forty-two**.\n\n- first point\n- second point\n",
        )],
        &[],
    );
    tmux.line("what is the answer?");
    let screen = tmux.wait_for("The answer is forty-two");
    assert!(screen.contains("what is the answer?"), "{screen}");
    assert!(screen.contains("second point"), "{screen}");
    // The engine appends the mode to the prompt; the typed text comes first.
    let sent = user_messages(&env, 0);
    assert!(
        sent.last().unwrap().starts_with("what is the answer?"),
        "{sent:?}"
    );
    tmux.exit_and_check_shell();
}

#[test]
fn tab_cycles_to_plan_mode_and_the_status_line_says_so() {
    let mut env = Env::new();
    let tmux = start_atto(&mut env, vec![Reply::text("ok")], &[]);
    assert!(
        tmux.status_line().contains("BUILD"),
        "{}",
        tmux.status_line()
    );
    // Build → YOLO asks first: Tab opens the question, y confirms.
    tmux.keys(&["Tab"]);
    tmux.wait("the YOLO question", |screen| screen.contains("enter YOLO?"));
    assert!(
        tmux.status_line().contains("BUILD"),
        "{}",
        tmux.status_line()
    );
    tmux.keys(&["y"]);
    tmux.wait("YOLO in the status line", |_| {
        tmux.status_line().contains("YOLO")
    });
    // Leaving YOLO does not ask: YOLO → Plan.
    tmux.keys(&["Tab"]);
    tmux.wait("PLAN in the status line", |_| {
        tmux.status_line().contains("PLAN")
    });
    // Tab with text typed does not switch modes.
    tmux.type_text("draft");
    tmux.keys(&["Tab"]);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        tmux.status_line().contains("PLAN"),
        "{}",
        tmux.status_line()
    );
    tmux.exit_and_check_shell();
}

#[test]
fn plan_mode_queues_a_write_shows_its_diff_and_approve_applies_it() {
    let mut env = Env::new();
    env.write("notes.txt", "old line\n");
    let tmux = start_atto(
        &mut env,
        vec![
            calls(vec![call(
                "edit_file",
                json!({"path": "notes.txt", "old_string": "old line", "new_string": "new line"}),
            )]),
            Reply::text("I queued the edit for your approval."),
            Reply::text("Applied."),
        ],
        &["--mode", "plan"],
    );
    tmux.line("change the note");
    tmux.wait_for("queued the edit");
    assert_eq!(
        env.read("notes.txt"),
        "old line\n",
        "plan mode wrote a file"
    );
    // The tool card shows the diff once; the plan panel shows it again.
    let before = tmux.screen().matches("+new line").count();
    tmux.line("/show-plan");
    let screen = tmux.wait("the plan panel's diff", |s| {
        s.matches("+new line").count() > before && s.matches("-old line").count() > before
    });
    assert!(screen.contains("notes.txt"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.line("/approve");
    let start = Instant::now();
    while env.read("notes.txt") != "new line\n" {
        assert!(start.elapsed() < WAIT, "not applied:\n{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.exit_and_check_shell();
}

#[test]
fn an_approval_answered_with_capital_a_saves_a_project_grant() {
    let mut env = Env::new();
    let cmd = "python3 -c 'print(40 + 2)'";
    let tmux = start_atto(
        &mut env,
        bash_then(cmd, "It printed 42."),
        &["--permission", "interactive"],
    );
    tmux.line("run the script");
    // The dialog shows the command, its risk, and the rule "A" would save.
    let screen = tmux.wait_for("WARN");
    assert!(screen.contains("print(40 + 2)"), "{screen}");
    tmux.keys(&["A"]);
    tmux.wait_for("It printed 42.");
    tmux.exit_and_check_shell();
    let grants = env.atto().arg("grants").output().unwrap();
    let grants = String::from_utf8_lossy(&grants.stdout);
    assert!(grants.contains("python3 -c 'print(40 + 2)'"), "{grants}");
    assert!(grants.contains("project"), "{grants}");
}

#[test]
fn esc_cancels_a_running_turn_and_the_session_stays_usable() {
    let mut env = Env::new();
    let tmux = start_atto(
        &mut env,
        vec![
            slow("too late", 30_000),
            Reply::text("second answer arrives"),
        ],
        &[],
    );
    tmux.line("slow question");
    // Wait until the request is in flight, then cancel.
    let start = Instant::now();
    while env.requests().is_empty() {
        assert!(start.elapsed() < WAIT, "no request:\n{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(20));
    }
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("cancelled");
    assert!(!screen.contains("too late"), "{screen}");
    tmux.line("again");
    tmux.wait_for("second answer arrives");
    tmux.exit_and_check_shell();
}

#[test]
fn bad_input_tiny_window_huge_paste_invalid_utf8_and_unknown_command() {
    let mut env = Env::new();
    let tmux = start_atto(
        &mut env,
        bash_then("printf 'bad:\\377\\376:end'", "printed some bytes"),
        &["--permission", "auto-safe"],
    );
    // A 20×5 window: atto keeps running and draws something.
    assert!(
        tmux.tmux(&["resize-window", "-t", "0", "-x", "20", "-y", "5"])
            .status
            .success()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(tmux.alternate_on(), "atto left at 20×5:\n{}", tmux.screen());
    assert!(!tmux.screen().trim().is_empty());
    assert!(
        tmux.tmux(&["resize-window", "-t", "0", "-x", "100", "-y", "30"])
            .status
            .success()
    );
    tmux.wait_for(atto_tui::PLACEHOLDER);
    // 1 MB pasted with bracketed paste: folded in the composer, sent whole.
    let big: String = "0123456789abcdef".repeat(1 << 16);
    let file = env.dir.path().join("paste.txt");
    std::fs::write(&file, &big).unwrap();
    assert!(
        tmux.tmux(&["load-buffer", file.to_str().unwrap()])
            .status
            .success()
    );
    assert!(
        tmux.tmux(&["paste-buffer", "-p", "-t", "0"])
            .status
            .success()
    );
    tmux.wait_for("[pasted 1,048,576 chars]");
    tmux.keys(&["Enter"]);
    // Tool output with invalid UTF-8 shows as a card, and the turn ends.
    tmux.wait_for("printed some bytes");
    let prompt = user_messages(&env, 0);
    assert!(
        prompt.last().unwrap().starts_with(&big),
        "the paste was not sent whole"
    );
    let results = tool_results(&env, 1);
    assert!(
        results
            .iter()
            .any(|r| r.contains("bad:") && r.contains(":end")),
        "{results:?}"
    );
    // An unknown command: one clear line, nothing sent.
    let requests = env.requests().len();
    tmux.line("/frobnicate");
    tmux.wait_for("unknown command /frobnicate");
    assert_eq!(env.requests().len(), requests);
    tmux.exit_and_check_shell();
}

#[test]
fn enter_during_a_turn_queues_the_draft_until_the_turn_ends() {
    let mut env = Env::new();
    let tmux = start_atto(
        &mut env,
        vec![
            slow("slow answer", 1_500),
            Reply::text("answer to the follow-up"),
        ],
        &[],
    );
    tmux.line("first question");
    tmux.line("follow-up question");
    tmux.line("/queue");
    tmux.wait_for("1. follow-up question");
    assert_eq!(
        env.requests().len(),
        1,
        "the draft was sent during the turn"
    );
    tmux.wait_for("answer to the follow-up");
    let sent = user_messages(&env, 1);
    assert!(
        sent.last().unwrap().starts_with("follow-up question"),
        "{sent:?}"
    );
    tmux.exit_and_check_shell();
}

#[test]
fn an_approval_refused_with_a_reason_tells_the_model_why() {
    let mut env = Env::new();
    let tmux = start_atto(
        &mut env,
        bash_then("python3 -c 'print(1)'", "Understood, not running it."),
        &["--permission", "interactive"],
    );
    tmux.line("run it");
    tmux.wait_for("WARN");
    tmux.keys(&["n"]);
    tmux.line("use rg instead");
    tmux.wait_for("Understood, not running it.");
    let results = tool_results(&env, 1);
    assert!(
        results.iter().any(|r| r.contains("use rg instead")),
        "{results:?}"
    );
    tmux.exit_and_check_shell();
}

#[test]
fn sigterm_restores_the_terminal() {
    let mut env = Env::new();
    let tmux = start_atto(&mut env, vec![Reply::text("ok")], &[]);
    let out = tmux.tmux(&["display", "-p", "-t", "0", "#{pane_pid}"]);
    let shell = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let children = Command::new("pgrep").args(["-P", &shell]).output().unwrap();
    let atto = String::from_utf8_lossy(&children.stdout).trim().to_owned();
    assert!(!atto.is_empty(), "atto's pid not found");
    assert!(
        Command::new("kill")
            .args(["-TERM", &atto])
            .status()
            .unwrap()
            .success()
    );
    tmux.wait("the main screen", |_| !tmux.alternate_on());
    tmux.line("echo shell-ok-$((40 + 2))");
    tmux.wait_for("shell-ok-42");
}
