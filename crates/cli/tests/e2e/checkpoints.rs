//! File checkpoints through the line session: every change the agent makes — by file tool
//! or by command — comes back with `/restore`, a restore can itself be undone, `/undo`
//! takes back a turn, and the user's own `.git` is never touched.

use std::collections::BTreeMap;
use std::path::Path;

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, call, line_session, stderr};

/// Every file under `dir` (recursively, `.git` included) with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn without_git(tree: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    tree.iter()
        .filter(|(k, _)| !k.starts_with(".git/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// One turn that changes a file with write_file, one with bash, creates one and deletes one.
fn changing_script() -> Script {
    Script {
        replies: vec![
            Reply {
                text: Some("Changing four files.".into()),
                tool_calls: vec![
                    call(
                        "write_file",
                        json!({"path": "written.txt", "content": "rewritten\n"}),
                    ),
                    call("bash", json!({"command": "echo by-bash > commanded.txt"})),
                    call(
                        "write_file",
                        json!({"path": "src/created.txt", "content": "new\n"}),
                    ),
                    call("delete_file", json!({"path": "deleted.txt"})),
                ],
                ..Reply::default()
            },
            Reply::text("Done."),
        ],
        ..Script::default()
    }
}

fn seed(env: &Env) {
    env.write("written.txt", "original written\n");
    env.write("commanded.txt", "original commanded\n");
    env.write("deleted.txt", "original deleted\n");
    env.write(".gitignore", "ignored.log\n");
    env.write("ignored.log", "user's log\n");
}

fn commit(env: &Env) {
    for args in [
        vec!["add", "-A"],
        vec![
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
    ] {
        let ok = std::process::Command::new("git")
            .args(&args)
            .current_dir(env.repo())
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

#[test]
fn restore_brings_back_every_change_twice_and_a_restore_can_be_undone() {
    let mut env = Env::new();
    seed(&env);
    commit(&env);
    let before = tree(&env.repo());
    env.serve(changing_script());
    let err = line_session(&env, "change the files\n/restore list\n");
    let changed = tree(&env.repo());
    assert_eq!(
        changed.get("commanded.txt").map(Vec::as_slice),
        Some(&b"by-bash\n"[..])
    );
    assert!(!changed.contains_key("deleted.txt"));
    // One checkpoint before each of the four mutating calls, the first marking the turn.
    // Each row names the call whose changes restoring it undoes, and the files it touched.
    assert!(
        err.contains("turn 1   undoes write_file written.txt (written.txt) and after"),
        "{err}"
    );
    assert!(
        err.contains("undoes bash echo by-bash > commanded.txt (commanded.txt"),
        "{err}"
    );
    assert!(
        err.contains("undoes delete_file deleted.txt (deleted.txt) and after"),
        "{err}"
    );

    // Back to before the turn: all four changes undone; the ignored file is untouched.
    let err = line_session(&env, "/restore 1\n");
    assert!(err.contains("restored checkpoint 1"), "{err}");
    assert_eq!(without_git(&tree(&env.repo())), without_git(&before));
    // Undo that restore with the safety checkpoint it named, then restore again.
    let safety: u32 = err
        .split("/restore ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no safety checkpoint named in {err}"));
    line_session(&env, &format!("/restore {safety}\n"));
    assert_eq!(without_git(&tree(&env.repo())), without_git(&changed));
    line_session(&env, "/restore 1\n");
    assert_eq!(without_git(&tree(&env.repo())), without_git(&before));

    // The user's repository, index included, is byte for byte what it was.
    let git = |t: &BTreeMap<String, Vec<u8>>| {
        t.iter()
            .filter(|(k, _)| k.starts_with(".git/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(git(&tree(&env.repo())), git(&before));
}

#[test]
fn undo_takes_back_the_last_turn_in_a_workspace_without_git() {
    let mut env = Env::new();
    std::fs::remove_dir_all(env.repo().join(".git")).unwrap();
    seed(&env);
    let before = tree(&env.repo());
    env.serve(changing_script());
    let err = line_session(&env, "change the files\n/undo\n");
    assert!(err.contains("undid the file changes of turn 1"), "{err}");
    assert_eq!(tree(&env.repo()), before);
    assert!(!env.repo().join(".git").exists());
    // A fresh session lists its own checkpoints (none) unless asked for all of them.
    let err = line_session(&env, "/restore list 2\n/restore list all 2\n");
    assert!(err.contains("no checkpoints yet"), "{err}");
    assert!(err.contains("end of turn 1  [session "), "{err}");
}

#[test]
fn the_model_can_revert_an_earlier_turn_when_asked() {
    let mut env = Env::new();
    seed(&env);
    commit(&env);
    let before = without_git(&tree(&env.repo()));
    let mut script = changing_script();
    script.replies.push(Reply {
        text: Some("Reverting turn 1 as you asked.".into()),
        tool_calls: vec![call("revert_turn", json!({}))],
        ..Reply::default()
    });
    script.replies.push(Reply::text("Reverted."));
    env.serve(script);
    let err = line_session(&env, "change the files\nundo what you did\n");
    assert!(err.contains("revert_turn"), "{err}");
    assert_eq!(without_git(&tree(&env.repo())), before);
    let reqs = env.requests();
    let last = reqs.last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("reverted the file changes of turn 1"),
        "{last}"
    );
}

/// A reply that writes `content` to a.txt.
fn writes_a(content: &str) -> Reply {
    Reply {
        text: Some("Writing.".into()),
        tool_calls: vec![call(
            "write_file",
            json!({"path": "a.txt", "content": content}),
        )],
        ..Reply::default()
    }
}

#[test]
fn switching_threads_offers_to_move_the_files_with_the_conversation() {
    let mut env = Env::new();
    env.write("a.txt", "start\n");
    env.serve(Script {
        replies: vec![
            writes_a("main\n"),
            Reply::text("ok"),
            writes_a("branch\n"),
            Reply::text("ok"),
        ],
        ..Script::default()
    });
    let err = line_session(
        &env,
        "write main\n/fork \"B\"\nwrite branch\n/switch main\n",
    );
    assert_eq!(env.read("a.txt"), "branch\n");
    let offer = err
        .lines()
        .find(|l| l.contains("brings back the files as thread main left them"))
        .unwrap_or_else(|| panic!("no offer in {err}"));
    let id = offer
        .split("/restore ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    line_session(&env, &format!("/restore {id}\n"));
    assert_eq!(env.read("a.txt"), "main\n");
}

/// The data dir (database and checkpoints) on a tiny tmpfs that fills up: atto says so,
/// does not act without its records (exit 75, the file untouched), and keeps what it had
/// stored. Needs mount rights; skipped otherwise.
#[test]
fn a_full_data_disk_is_reported_and_nothing_runs_unrecorded() {
    let mut env = Env::new();
    env.write("a.txt", "start\n");
    let data = env.dir.path().join("home/atto-data");
    std::fs::create_dir_all(&data).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs"])
        .arg(&data)
        .output();
    match mounted {
        Ok(out) if out.status.success() => {}
        other => {
            atto_testkit::skipped(
                "e2e checkpoints::a_full_data_disk",
                &format!("cannot mount a tmpfs here ({other:?})"),
            );
            return;
        }
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        env.serve(Script {
            replies: vec![
                writes_a("first\n"),
                Reply::text("one"),
                writes_a("second\n"),
                Reply::text("two"),
            ],
            ..Script::default()
        });
        let first = env.exec("chat", "first task");
        assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
        // Fill what is left of the disk.
        let filler = data.join("filler");
        let _ = std::fs::write(&filler, vec![b'x'; 1024 * 1024]);
        let second = env.exec("chat", "second task");
        let err = stderr(&second);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(second.status.code(), Some(75), "{err}");
        assert_eq!(
            env.read("a.txt"),
            "first\n",
            "a write ran without its records"
        );
        let events = crate::common::events(&second);
        let warnings: Vec<String> = events
            .iter()
            .filter(|e| e["type"] == "warning")
            .map(|e| e["message"].to_string())
            .chain(std::iter::once(err.clone()))
            .collect();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("full") || w.contains("No space") || w.contains("disk")),
            "nothing said the disk failed: {warnings:?}"
        );
        // Room again: the first session is still there, intact.
        std::fs::remove_file(&filler).unwrap();
        let list = env.atto().args(["sessions"]).output().unwrap();
        assert_eq!(list.status.code(), Some(0), "{}", stderr(&list));
        assert!(
            String::from_utf8_lossy(&list.stdout).contains("first task"),
            "{}",
            String::from_utf8_lossy(&list.stdout)
        );
    }));
    let _ = std::process::Command::new("umount").arg(&data).status();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
