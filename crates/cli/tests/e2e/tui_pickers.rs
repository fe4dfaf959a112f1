//! The session pickers in the terminal UI: a bare `atto -r` lists this workspace's
//! sessions and resumes the one chosen; `atto fork` with no id copies the one chosen and
//! continues in the copy, leaving the original as it was.

use crate::common::Env;
use crate::tui_harness::{Tmux, serve, user_messages};
use atto_testkit::Reply;

#[test]
fn bare_resume_opens_a_picker_of_this_workspaces_sessions() {
    let mut env = Env::new();
    serve(
        &mut env,
        vec![Reply::text("first answer"), Reply::text("resumed answer")],
    );
    let tmux = Tmux::start(&env);
    tmux.atto(&env, &[]);
    tmux.line("remember the number 7");
    let screen = tmux.wait_for("first answer");
    let session = screen
        .split_whitespace()
        .skip_while(|w| *w != "session")
        .nth(1)
        .unwrap()
        .to_owned();
    tmux.exit_and_check_shell();
    tmux.line(&format!(
        "{} --base-url {} --model scripted-model -r",
        env!("CARGO_BIN_EXE_atto"),
        env.base("chat")
    ));
    let picker = tmux.wait_for("Resume a session");
    assert!(picker.contains("remember the number 7"), "{picker}");
    tmux.keys(&["Enter"]);
    tmux.wait_for(atto_tui::PLACEHOLDER);
    tmux.line("what was it?");
    tmux.wait_for("resumed answer");
    // The model saw the earlier conversation: the session really was resumed.
    let sent = user_messages(&env, 1);
    assert!(
        sent.iter().any(|m| m.contains("remember the number 7")),
        "{sent:?}"
    );
    assert!(tmux.screen().contains(&session), "{}", tmux.screen());
    tmux.exit_and_check_shell();
}

#[test]
fn fork_with_no_id_picks_a_session_copies_it_and_continues_in_the_copy() {
    let mut env = Env::new();
    serve(
        &mut env,
        vec![Reply::text("first answer"), Reply::text("forked answer")],
    );
    let tmux = Tmux::start(&env);
    tmux.atto(&env, &[]);
    tmux.line("remember the number 7");
    let screen = tmux.wait_for("first answer");
    let original = screen
        .split_whitespace()
        .skip_while(|w| *w != "session")
        .nth(1)
        .unwrap()
        .to_owned();
    tmux.exit_and_check_shell();
    tmux.line(&format!(
        "{} fork --base-url {} --model scripted-model",
        env!("CARGO_BIN_EXE_atto"),
        env.base("chat")
    ));
    let picker = tmux.wait_for("Fork a session");
    assert!(picker.contains("remember the number 7"), "{picker}");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for(atto_tui::PLACEHOLDER);
    assert!(screen.contains("forked"), "{screen}");
    tmux.line("what was it?");
    tmux.wait_for("forked answer");
    // The copy carries the conversation, under a new session id.
    let sent = user_messages(&env, 1);
    assert!(
        sent.iter().any(|m| m.contains("remember the number 7")),
        "{sent:?}"
    );
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
