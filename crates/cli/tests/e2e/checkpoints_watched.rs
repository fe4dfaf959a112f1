//! File checkpoints in a workspace large enough to be watched (a file watcher tells each
//! snapshot after a process's first what changed): every change — by file tool or by a
//! `bash` command that creates, deletes and renames files and directories, or one that
//! overflows the watcher's queue — comes back with `/restore`, with or without git, and the
//! user's `.git` (staged, unstaged and untracked changes and all) is never touched.

use std::collections::BTreeMap;
use std::path::Path;

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, call, line_session};

/// Above the size from which snapshots use the watcher.
const FILES: usize = 1_200;

/// Every file under `dir` (recursively, `.git` included) with its bytes, and every directory.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if path.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn split(t: &BTreeMap<String, Vec<u8>>) -> (BTreeMap<String, Vec<u8>>, BTreeMap<String, Vec<u8>>) {
    t.clone()
        .into_iter()
        .partition(|(k, _)| !k.starts_with(".git"))
}

fn git(env: &Env, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(env.repo())
        .status()
        .unwrap();
    assert!(ok.success(), "git {args:?}");
}

/// A workspace of `FILES` files; with git, committed, then staged, unstaged and untracked
/// changes on top.
fn workspace(env: &Env, with_git: bool) {
    for i in 0..FILES {
        env.write(&format!("src/m{}/f{i}.txt", i % 12), &format!("file {i}\n"));
    }
    env.write(".gitignore", "*.log\n");
    env.write("edited.txt", "original\n");
    env.write("gone.txt", "doomed\n");
    env.write("old_name.txt", "renamed\n");
    env.write("staged.txt", "v1\n");
    if with_git {
        git(env, &["add", "-A"]);
        git(env, &["commit", "-qm", "init"]);
        env.write("staged.txt", "v2 staged\n");
        git(env, &["add", "staged.txt"]);
        env.write("src/m1/f1.txt", "unstaged\n");
        env.write("untracked.txt", "untracked\n");
    } else {
        std::fs::remove_dir_all(env.repo().join(".git")).unwrap();
    }
    env.write("app.log", "the user's log\n");
}

/// One turn: a file tool edit, a command that creates, deletes and renames files and
/// directories, `extra` commands, and a last file tool write.
fn script(extra: &[&str]) -> Script {
    let mut calls = vec![
        call(
            "write_file",
            json!({"path": "edited.txt", "content": "by the agent\n"}),
        ),
        call(
            "bash",
            json!({"command": "echo new > created.txt && rm gone.txt && mv old_name.txt new_name.txt \
                               && mkdir -p made/deep && echo x > made/deep/x.txt && mv src/m2 src/m2b \
                               && echo more >> src/m3/f3.txt && echo log >> app.log"}),
        ),
    ];
    calls.extend(extra.iter().map(|c| call("bash", json!({ "command": c }))));
    calls.push(call(
        "write_file",
        json!({"path": "src/m4/f4.txt", "content": "last\n"}),
    ));
    Script {
        replies: vec![
            Reply {
                text: Some("Changing files.".into()),
                tool_calls: calls,
                ..Reply::default()
            },
            Reply::text("Done."),
        ],
        ..Script::default()
    }
}

/// The side repository of the workspace's checkpoints.
fn side(env: &Env) -> std::path::PathBuf {
    let dir = env.dir.path().join("home/atto-data/checkpoints");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "git"))
        .unwrap()
}

/// How each checkpoint looked at the workspace (`atto-scan`), in id order.
fn scans(env: &Env) -> Vec<String> {
    let side = side(env);
    let out = std::process::Command::new("git")
        .arg(format!("--git-dir={}", side.display()))
        .args([
            "for-each-ref",
            "--format=%(contents)",
            "refs/atto/checkpoints/",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("atto-scan: "))
        .map(str::to_owned)
        .collect()
}

/// Runs the turn, checks the changes landed, restores checkpoint 1 and checks the workspace
/// is back, byte for byte, `.git` included; returns the checkpoints' scans.
fn change_then_restore(with_git: bool, extra: &[&str]) -> Vec<String> {
    let mut env = Env::new();
    workspace(&env, with_git);
    let before = tree(&env.repo());
    env.serve(script(extra));
    line_session(&env, "change the files\n");
    assert_eq!(env.read("created.txt"), "new\n");
    assert_eq!(env.read("made/deep/x.txt"), "x\n");
    assert!(!env.repo().join("gone.txt").exists() && !env.repo().join("src/m2").exists());
    let err = line_session(&env, "/restore 1\n");
    assert!(err.contains("restored checkpoint 1"), "{err}");
    let (files, dot_git) = split(&tree(&env.repo()));
    let (files_before, dot_git_before) = split(&before);
    let mut expected = files_before;
    // The ignored log is not the checkpoints' business: the command's line stays.
    expected.insert("app.log".into(), b"the user's log\nlog\n".to_vec());
    assert_eq!(files, expected);
    assert_eq!(
        dot_git, dot_git_before,
        "the user's .git must be byte-identical"
    );
    scans(&env)
}

#[test]
fn restore_after_file_tools_and_a_command_that_moves_things_in_a_git_workspace() {
    let scans = change_then_restore(true, &[]);
    assert!(scans[0].starts_with("walk (first snapshot"), "{scans:?}");
    // The command created and moved directories: the snapshot after it walked; the one
    // before it and the last one came from the watcher.
    assert!(scans[1].starts_with("watcher ("), "{scans:?}");
    assert_eq!(
        scans[2], "walk (a directory was created, removed or moved)",
        "{scans:?}"
    );
    assert!(scans[3].starts_with("watcher ("), "{scans:?}");
}

#[test]
fn restore_after_the_same_turn_in_a_workspace_without_git() {
    let scans = change_then_restore(false, &[]);
    assert!(
        scans.iter().any(|s| s.starts_with("watcher (")),
        "{scans:?}"
    );
}

#[test]
fn restore_after_a_command_that_overflows_the_watcher() {
    // Alternating writes: the kernel merges only identical consecutive events.
    let flood = "python3 -c \"\nfor i in range(20000):\n    open('src/m5/a.txt','w').write(str(i))\n    open('src/m6/b.txt','w').write(str(i))\n\"";
    let scans = change_then_restore(true, &[flood]);
    assert!(
        scans.contains(&"walk (the watcher's event queue overflowed)".to_owned()),
        "{scans:?}"
    );
}

/// One `atto exec` session that writes `text` to `path`.
fn write_in_a_session(env: &mut Env, path: &str, text: &str) {
    env.serve(Script {
        replies: vec![
            Reply {
                text: Some("Writing.".into()),
                tool_calls: vec![call("write_file", json!({"path": path, "content": text}))],
                ..Reply::default()
            },
            Reply::text("Done."),
        ],
        ..Script::default()
    });
    let out = env.exec("chat", "write it");
    assert!(out.status.success(), "{}", crate::common::stderr(&out));
}

#[test]
fn a_later_session_asks_the_watch_daemon_and_its_checkpoints_restore_exactly() {
    let mut env = Env::new();
    workspace(&env, true);
    let before = tree(&env.repo());
    write_in_a_session(&mut env, "edited.txt", "session 1\n");
    // The first session had to walk the workspace and left a watch daemon starting.
    let socket = side(&env).join("atto-watch.sock");
    let start = std::time::Instant::now();
    while !socket.exists() {
        assert!(start.elapsed().as_secs() < 30, "no watch daemon started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The second walks once more (nothing recorded a point of the daemon yet) and records one.
    write_in_a_session(&mut env, "src/m1/f1.txt", "session 2\n");
    env.write("src/m3/f3.txt", "the user, between sessions\n");
    let earlier = scans(&env).len();
    write_in_a_session(&mut env, "src/m4/f4.txt", "session 3\n");
    let third: Vec<String> = scans(&env)[earlier..].to_vec();
    assert!(third[0].starts_with("watch daemon ("), "{third:?}");
    assert!(!third.iter().any(|s| s.starts_with("walk")), "{third:?}");
    assert_eq!(env.read("src/m4/f4.txt"), "session 3\n");

    let out = line_session(&env, "/restore list all 20\n");
    assert!(
        out.contains("src/m3/f3.txt"),
        "the user's edit is in a checkpoint: {out}"
    );
    let err = line_session(&env, "/restore 1\n");
    assert!(err.contains("restored checkpoint 1"), "{err}");
    let (files, dot_git) = split(&tree(&env.repo()));
    let (files_before, dot_git_before) = split(&before);
    assert_eq!(files, files_before);
    assert_eq!(
        dot_git, dot_git_before,
        "the user's .git must be byte-identical"
    );
}
