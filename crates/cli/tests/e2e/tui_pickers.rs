//! The session pickers in the terminal UI: a bare `atto -r` lists this workspace's
//! sessions and resumes the one chosen; `atto fork` with no id copies the one chosen and
//! continues in the copy, leaving the original as it was.

use crate::common::Env;
use crate::tui_harness::{Tmux, atto_line, start_atto, user_messages};
use atto_testkit::Reply;

/// A first session told a number and answered, then left; `next` is served for the
/// session the test goes on with. Returns the shell's window and the session id shown.
fn first_session(env: &mut Env, next: &str) -> (Tmux, String) {
    let tmux = start_atto(
        env,
        vec![Reply::text("first answer"), Reply::text(next)],
        &[],
    );
    tmux.line("remember the number 7");
    let screen = tmux.wait_for("first answer");
    let session = screen
        .split_whitespace()
        .skip_while(|w| *w != "session")
        .nth(1)
        .unwrap()
        .to_owned();
    tmux.exit_and_check_shell();
    (tmux, session)
}

/// Runs atto with `args` from the shell, expects the picker titled `title` to list the
/// first session, and picks it; returns the screen once its composer is up.
fn pick_the_first_session(tmux: &Tmux, env: &Env, args: &[&str], title: &str) -> String {
    tmux.line(&atto_line(env, args));
    let picker = tmux.wait_for(title);
    assert!(picker.contains("remember the number 7"), "{picker}");
    tmux.keys(&["Enter"]);
    tmux.wait_for(atto_tui::PLACEHOLDER)
}

/// The model's next request carried the first session's conversation.
fn assert_the_model_saw_the_first_session(env: &Env) {
    let sent = user_messages(env, 1);
    assert!(
        sent.iter().any(|m| m.contains("remember the number 7")),
        "{sent:?}"
    );
}

#[test]
fn bare_resume_opens_a_picker_of_this_workspaces_sessions() {
    let mut env = Env::new();
    let (tmux, session) = first_session(&mut env, "resumed answer");
    pick_the_first_session(&tmux, &env, &["-r"], "Resume a session");
    tmux.line("what was it?");
    tmux.wait_for("resumed answer");
    // The model saw the earlier conversation: the session really was resumed.
    assert_the_model_saw_the_first_session(&env);
    assert!(tmux.screen().contains(&session), "{}", tmux.screen());
    tmux.exit_and_check_shell();
}

#[test]
fn fork_with_no_id_picks_a_session_copies_it_and_continues_in_the_copy() {
    let mut env = Env::new();
    let (tmux, original) = first_session(&mut env, "forked answer");
    let screen = pick_the_first_session(&tmux, &env, &["fork"], "Fork a session");
    assert!(screen.contains("forked"), "{screen}");
    tmux.line("what was it?");
    tmux.wait_for("forked answer");
    // The copy carries the conversation, under a new session id.
    assert_the_model_saw_the_first_session(&env);
    // The notice names the original (the session shown before) and the new copy.
    let screen = tmux.screen();
    let notice = &screen[screen.find("forked ").unwrap()..];
    let from = notice["forked ".len()..].split_whitespace().next().unwrap();
    let into = notice[notice.find(" into ").unwrap() + 6..]
        .split(';')
        .next()
        .unwrap();
    assert!(from.starts_with(&original), "{screen}");
    assert_ne!(from, into, "{screen}");
    tmux.exit_and_check_shell();
    // The original still has only its own two messages: the fork did not touch it.
    let out = env
        .atto()
        .args(["sessions", "show", from])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(shown.contains("first answer"), "{shown}{err}");
    assert!(!shown.contains("forked answer"), "{shown}");
}

/// A reply that writes `content` to `path`.
fn writes_text(path: &str, content: &str) -> Reply {
    crate::common::calls(vec![crate::common::call(
        "write_file",
        serde_json::json!({"path": path, "content": content}),
    )])
}

#[test]
fn esc_esc_opens_the_rewind_picker_and_both_puts_back_the_files_and_the_prompt() {
    let mut env = Env::new();
    let tmux = start_atto(
        &mut env,
        vec![
            writes_text("a.txt", "one\n"),
            Reply::text("wrote one"),
            writes_text("a.txt", "two\n"),
            Reply::text("wrote two"),
            Reply::text("answered the edit"),
        ],
        &["--permission", "yolo"],
    );
    tmux.line("make it one");
    tmux.wait_for("wrote one");
    tmux.line("make it two");
    // Esc would cancel a running turn: wait for the second one to end.
    tmux.wait("the second turn ended", |s| {
        s.matches("done · ").count() == 2
    });
    assert_eq!(env.read("a.txt"), "two\n");

    tmux.keys(&["Escape"]);
    tmux.keys(&["Escape"]);
    let picker = tmux.wait_for("Go back to just before which prompt?");
    assert!(picker.contains("1. make it one"), "{picker}");
    assert!(picker.contains("2. make it two"), "{picker}");
    // The newest prompt is highlighted; Enter chooses it, then what goes back.
    tmux.keys(&["Enter"]);
    let scopes = tmux.wait_for("Prompt 2: what goes back?");
    assert!(scopes.contains("conversation only"), "{scopes}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("rewound the conversation and the files to just before prompt 2");
    assert_eq!(env.read("a.txt"), "one\n");
    // The composer holds the prompt: what is typed now is added to it, and the model sees
    // the first exchange and the edited prompt only.
    tmux.type_text(", edited");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answered the edit");
    let sent = user_messages(&env, 4);
    assert!(sent[0].starts_with("make it one"), "{sent:?}");
    assert!(sent[1].starts_with("make it two, edited"), "{sent:?}");
    assert_eq!(sent.len(), 2, "{sent:?}");
    tmux.exit_and_check_shell();
}
