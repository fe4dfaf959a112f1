//! `atto checkpoints list|gc|prune` from outside a session: the side repository's size, a
//! collection that copies in what checkpoints borrow from the user's repository (so they
//! survive it being deleted), and pruning by age.

use std::process::Command;

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, call, line_session};

fn git(env: &Env, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(env.repo())
        .status()
        .unwrap();
    assert!(ok.success());
}

fn checkpoints(env: &Env, args: &[&str]) -> String {
    let out = env.atto().arg("checkpoints").args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn a_collection_keeps_checkpoints_restorable_after_the_users_repository_is_deleted() {
    let mut env = Env::new();
    env.write("kept.txt", "committed\n");
    git(&env, &["add", "-A"]);
    git(&env, &["commit", "-qm", "init"]);
    env.serve(Script {
        replies: vec![
            Reply {
                tool_calls: vec![call(
                    "write_file",
                    json!({"path": "kept.txt", "content": "by the agent\n"}),
                )],
                ..Reply::default()
            },
            Reply::text("Done."),
        ],
        ..Script::default()
    });
    line_session(&env, "change the file\n");
    assert_eq!(env.read("kept.txt"), "by the agent\n");

    let listed = checkpoints(&env, &["list"]);
    assert!(listed.contains("write_file"), "{listed}");
    assert!(listed.contains("side repository"), "{listed}");
    let collected = checkpoints(&env, &["gc"]);
    assert!(collected.contains("dropped 0 checkpoint(s)"), "{collected}");

    std::fs::remove_dir_all(env.repo().join(".git")).unwrap();
    git(&env, &["init", "-q"]);
    let err = line_session(&env, "/restore 1\n");
    assert!(err.contains("restored checkpoint 1"), "{err}");
    assert_eq!(env.read("kept.txt"), "committed\n");

    let pruned = checkpoints(&env, &["prune", "--keep-days", "0"]);
    assert!(pruned.contains("kept 1"), "{pruned}");
}
