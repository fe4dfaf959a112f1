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

/// One process's script: write its file, run a command that appends to the trial's shared
/// log and writes its own file, edit its file, answer.
fn script(n: usize, tag: &str) -> Script {
    let file = format!("{tag}-f{n}.txt");
    Script {
        replies: vec![
            calls(vec![call(
                "write_file",
                json!({"path": file, "content": format!("process {n}\n")}),
            )]),
            calls(vec![call(
                "bash",
                json!({"command": format!("echo {n} >> {tag}.log && echo ran > {tag}-c{n}.txt")}),
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
            "stream-json",
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
                .block_on(ScriptedServer::start(script(n, tag)))
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
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let last = stdout.lines().last().unwrap_or("");
            let result: Value =
                serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
            let id = result["session_id"].as_str().unwrap_or("").to_owned();
            (out, id)
        })
        .collect()
}

/// Everything one process did is on record: session, audit rows, checkpoints.
fn assert_recorded(env: &Env, workspace: &Path, out: &Output, id: &str, n: usize, tag: &str) {
    // What the run said: stderr, and every call that did not end ok.
    let failed_calls: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.contains("\"tool_call_")
                || l.contains("\"warning\"")
                || l.contains("\"retry\"")
                || l.contains("\"error\"")
        })
        .map(str::to_owned)
        .collect();
    let err = format!("{}{}", stderr(out), failed_calls.join("\n"));
    assert_eq!(out.status.code(), Some(0), "process {n}: {err}");
    assert!(
        !failed_calls
            .iter()
            .any(|l| l.contains("tool_call_finished") && !l.contains("\"status\":\"ok\"")),
        "process {n}: a call failed: {err}"
    );
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
            "process {n}: no checkpoint before {tool}:\n{rows}\nthe run said: {err}"
        );
    }
    let file = workspace.join(format!("{tag}-f{n}.txt"));
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
            assert_recorded(&env, &workspace, out, id, n, &tag);
        }
        let log = std::fs::read_to_string(workspace.join(format!("{tag}.log"))).unwrap();
        assert_eq!(log.lines().count(), PROCESSES, "{log}");
        // Each process's checkpoint before its first write restores the workspace to that
        // moment, and the safety checkpoint that restore names brings everything back.
        let all_done = snapshot(&workspace);
        for (n, (_, id)) in runs.iter().enumerate() {
            let list =
                crate::common::run_line_session(&env, "m", &["-r", id], "/restore list 50\n");
            let rows = stderr(&list);
            let wanted = format!("undoes write_file {tag}-f{n}.txt");
            let checkpoint = rows
                .lines()
                .find(|l| l.contains(&wanted))
                .and_then(|l| l.split_whitespace().next())
                .unwrap_or_else(|| panic!("process {n}: no row for {wanted}:\n{rows}"))
                .to_owned();
            let restored = crate::common::run_line_session(
                &env,
                "m",
                &["-r", id],
                &format!("/restore {checkpoint}\n"),
            );
            let said = stderr(&restored);
            assert!(
                !workspace.join(format!("{tag}-f{n}.txt")).exists(),
                "process {n}: /restore {checkpoint} did not go back before its write: {said}"
            );
            let safety = said
                .split("/restore ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or_else(|| panic!("process {n}: no safety checkpoint named: {said}"))
                .to_owned();
            crate::common::run_line_session(
                &env,
                "m",
                &["-r", id],
                &format!("/restore {safety}\n"),
            );
            assert_eq!(
                snapshot(&workspace),
                all_done,
                "process {n}: the safety restore"
            );
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
                .block_on(ScriptedServer::start(script(n, "pair")))
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
        std::fs::read_to_string(repo.join("pair-f0.txt")).unwrap(),
        "edited 0\n"
    );
    assert_eq!(
        std::fs::read_to_string(other.join("pair-f1.txt")).unwrap(),
        "edited 1\n"
    );
}

#[test]
fn a_process_killed_mid_run_holds_no_one_up() {
    let mut env = Env::new();
    let workspace = env.repo();
    // The victim's first reply is slow: it is killed while it waits with its session open.
    let mut slow = script(0, "victim");
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

/// Every file of the workspace but `.git`, with its contents.
fn snapshot(workspace: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(workspace).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git" || !entry.file_type().unwrap().is_file() {
            continue;
        }
        files.push((name, std::fs::read(entry.path()).unwrap()));
    }
    files.sort();
    files
}
