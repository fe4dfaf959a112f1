//! Many atto processes at once: eight `atto exec` runs started together in one workspace
//! and data dir (each writes a file, runs a command and edits), three times over, all
//! finish, every session and audit row is stored, every mutating call has a checkpoint of
//! its own session, and each session's last turn can be undone; then two processes that
//! share a data dir but not a workspace; then a process killed with SIGKILL mid-run leaves
//! no lock that holds the others up.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script, ScriptedServer};
use serde_json::{Value, json};

use crate::common::{Env, call, calls, stderr};

/// Processes per trial.
const PROCESSES: usize = 8;

/// One process's script: write its file, run a command that appends to a shared log and
/// its own file, edit its file, answer.
fn script(n: usize) -> Script {
    let file = format!("f{n}.txt");
    Script {
        replies: vec![
            calls(vec![call(
                "write_file",
                json!({"path": file, "content": format!("process {n}\n")}),
            )]),
            calls(vec![call(
                "bash",
                json!({"command": format!("echo {n} >> shared.log && echo ran > c{n}.txt")}),
            )]),
            calls(vec![call(
                "edit_file",
                json!({"path": file, "old_string": "process", "new_string": "edited"}),
            )]),
            Reply::text("done"),
        ],
        ..Script::default()
    }
}

/// `atto exec` in `workspace` against `server`, stream-json, auto-safe; not waited for.
fn spawn(env: &Env, workspace: &Path, server: &ScriptedServer, task: &str) -> Child {
    env.atto()
        .current_dir(workspace)
        .args([
            "exec",
            "--permission",
            "auto-safe",
            "--output-format",
            "json",
        ])
        .args(["--base-url", &format!("{}/v1", server.base_url())])
        .args(["--model", "m", task])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Rows of `sql` (one column) in the test's database, through python's sqlite3.
fn query(env: &Env, sql: &str, arg: &str) -> Vec<String> {
    let db = env.dir.path().join("home/atto-data/atto.db");
    let out = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys\n\
             c=sqlite3.connect(sys.argv[1])\n\
             for r in c.execute(sys.argv[2], (sys.argv[3],)): print(r[0])",
        ])
        .arg(&db)
        .arg(sql)
        .arg(arg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs `PROCESSES` processes at once in `workspace`; returns their outputs and session ids.
fn trial(env: &mut Env, workspace: &Path, tag: &str) -> Vec<(Output, String)> {
    let servers: Vec<ScriptedServer> = (0..PROCESSES)
        .map(|n| {
            env.runtime
                .block_on(ScriptedServer::start(script(n)))
                .unwrap()
        })
        .collect();
    let children: Vec<Child> = servers
        .iter()
        .enumerate()
        .map(|(n, server)| spawn(env, workspace, server, &format!("{tag} task {n}")))
        .collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    outputs
        .into_iter()
        .map(|out| {
            let result: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
            let id = result["session_id"].as_str().unwrap_or("").to_owned();
            (out, id)
        })
        .collect()
}

/// Everything one process did is on record: session, audit rows, checkpoints.
fn assert_recorded(env: &Env, workspace: &Path, out: &Output, id: &str, n: usize) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(0), "process {n}: {err}");
    for word in [
        "not done in time",
        "cannot lock ref",
        "index.lock",
        "are off for this run",
    ] {
        assert!(!err.contains(word), "process {n} lost something: {err}");
    }
    assert_eq!(
        query(env, "select count(*) from sessions where id = ?", id),
        ["1"],
        "process {n}: session not stored"
    );
    let audited = query(env, "select tool from audit_log where session_id = ?", id);
    for tool in ["write_file", "bash", "edit_file"] {
        assert!(
            audited.iter().any(|t| t == tool),
            "process {n}: no audit row for {tool}: {audited:?}"
        );
    }
    // Every mutating call has a checkpoint of this session before it.
    let list = crate::common::run_line_session(env, "m", &["-r", id], "/restore list 50\n");
    let rows = stderr(&list);
    for tool in ["write_file", "bash", "edit_file"] {
        assert!(
            rows.contains(tool),
            "process {n}: no checkpoint before {tool}:\n{rows}"
        );
    }
    let file = workspace.join(format!("f{n}.txt"));
    let listing: Vec<String> = std::fs::read_dir(workspace)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        std::fs::read_to_string(&file).ok(),
        Some(format!("edited {n}\n")),
        "process {n}: {listing:?}\n{err}"
    );
}

#[test]
fn eight_processes_in_one_workspace_lose_nothing_three_times_over() {
    let mut env = Env::new();
    let workspace = env.repo();
    for trial_no in 0..3 {
        let tag = format!("t{trial_no}");
        let started = Instant::now();
        let runs = trial(&mut env, &workspace, &tag);
        // The line sessions below only run slash commands: a server that answers nothing.
        env.serve(Script::default());
        for (n, (out, id)) in runs.iter().enumerate() {
            assert_recorded(&env, &workspace, out, id, n);
        }
        let log = std::fs::read_to_string(workspace.join("shared.log")).unwrap();
        assert_eq!(log.lines().count(), PROCESSES * (trial_no + 1), "{log}");
        // Each session's own last turn can be undone: its files go back to before it.
        for (n, (_, id)) in runs.iter().enumerate() {
            let undo = crate::common::run_line_session(&env, "m", &["-r", id], "/undo\n");
            let err = stderr(&undo);
            assert!(err.contains("undid the file changes"), "process {n}: {err}");
            assert!(
                !workspace.join(format!("c{n}.txt")).exists(),
                "process {n}: its command's file is still there after /undo: {err}"
            );
            // Restored to before the turn: the file did not exist then.
            assert!(!workspace.join(format!("f{n}.txt")).exists(), "process {n}");
        }
        assert!(started.elapsed() < Duration::from_secs(120));
    }
}

#[test]
fn two_processes_share_a_data_dir_but_not_a_workspace() {
    let env = Env::new();
    let other = env.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&other)
            .status()
            .unwrap()
            .success()
    );
    let servers: Vec<ScriptedServer> = (0..2)
        .map(|n| {
            env.runtime
                .block_on(ScriptedServer::start(script(n)))
                .unwrap()
        })
        .collect();
    let repo = env.repo();
    let children = [
        spawn(&env, &repo, &servers[0], "here task 0"),
        spawn(&env, &other, &servers[1], "there task 1"),
    ];
    for (n, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "process {n}: {}", stderr(&out));
    }
    assert_eq!(
        std::fs::read_to_string(repo.join("f0.txt")).unwrap(),
        "edited 0\n"
    );
    assert_eq!(
        std::fs::read_to_string(other.join("f1.txt")).unwrap(),
        "edited 1\n"
    );
}

#[test]
fn a_process_killed_mid_run_holds_no_one_up() {
    let mut env = Env::new();
    let workspace = env.repo();
    // The victim's first reply is slow: it is killed while it waits with its session open.
    let mut slow = script(0);
    slow.replies[1].delay_ms = 5_000;
    let victim_server = env.runtime.block_on(ScriptedServer::start(slow)).unwrap();
    let mut victim = spawn(&env, &workspace, &victim_server, "victim task 0");
    std::thread::sleep(Duration::from_millis(700));
    let _ = victim.kill();
    let _ = victim.wait();
    let started = Instant::now();
    let runs = trial(&mut env, &workspace, "after");
    for (n, (out, _)) in runs.iter().enumerate() {
        assert_eq!(out.status.code(), Some(0), "process {n}: {}", stderr(out));
    }
    // Well within one busy timeout (5 s) beyond the runs' own time.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
}
