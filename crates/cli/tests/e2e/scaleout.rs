//! Swarm workers beyond this machine, against real engines: a three-node Slurm cluster
//! (`scripts/slurm-up.sh`: munge, slurmctld, slurmd n1-n3) and an OpenSSH server with three
//! host aliases (`scripts/sshd-up.sh`). Each worker gets its base as a git bundle on stdin
//! and sends its branch back on stdout; the coordinator merges it like a local worktree's.
//! The merged result of six tasks must equal the same swarm's run on this machine, even
//! when one remote attempt's job or connection is killed mid-task.
//!
//! Without the engines (no root, no packages) the tests say SKIPPED, except under
//! `CI=true`, where a missing engine fails them.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use crate::common::{Env, events, of_type, stderr};
use crate::repo_trust::trust;
use crate::swarm::{decomposition, finished, swarm, when, worker, write};

/// Whether the engine `flag` names (set by scripts/test.sh once it is up) is there.
pub(crate) fn engine(flag: &str, test: &str, how: &str) -> bool {
    if std::env::var(flag).as_deref() == Ok("1") {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{flag} is not set under CI: scripts/test.sh must start it ({how})"
    );
    atto_testkit::skipped(test, &format!("{flag} is not set ({how}, as root)"));
    false
}

/// Two unchanged lines between any two tasks' lines: a three-way merge keeps edits apart
/// only when context separates them.
const SHARED: &str = "line1\nkeep 1a\nkeep 1b\nline2\nkeep 2a\nkeep 2b\nline3\nkeep 3a\nkeep 3b\n\
                      line4\nkeep 4a\nkeep 4b\nline5\nkeep 5a\nkeep 5b\nline6\n";

/// Six independent tasks; each writes its own file and edits its own line of shared.txt,
/// so every merge back is a real three-way merge of that file.
fn six_tasks(env: &mut Env, slow: Option<&str>) {
    env.write("shared.txt", SHARED);
    let tasks: Vec<Value> = (1..=6)
        .map(|n| {
            json!({"id": format!("task-{n}"), "type": "implement",
                   "target_files": [format!("f{n}.txt")],
                   "description": format!("Write f{n}.txt and mark line {n} of shared.txt as done.")})
        })
        .collect();
    let mut replies = vec![decomposition(Value::Array(tasks))];
    for n in 1..=6 {
        let id = format!("task-{n}");
        if slow == Some(id.as_str()) {
            // Its first attempt waits long on the model: the test kills it meanwhile.
            replies.push(Reply {
                delay_ms: 60_000,
                ..when(&crate::swarm::marker(&id, "implement"), Reply::text("late"))
            });
        }
        replies.extend(worker(
            &id,
            "implement",
            vec![
                write(&format!("f{n}.txt"), &format!("file {n}\n")),
                crate::common::call(
                    "edit_file",
                    json!({"path": "shared.txt", "old_string": format!("line{n}\n"),
                           "new_string": format!("line{n} done\n")}),
                ),
            ],
            "Done.",
        ));
    }
    env.serve(Script::new(replies));
}

/// Waits until the model server has a request of `task`'s worker: the attempt is then
/// mid-task, waiting on its (slow) reply. False after a minute.
fn asked(env: &Env, task: &str) -> bool {
    let marker = crate::swarm::marker(task, "implement");
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if env
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains(&marker))
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The files a six-task run leaves.
fn result(env: &Env) -> Vec<String> {
    let mut files = vec![env.read("shared.txt")];
    files.extend((1..=6).map(|n| env.read(&format!("f{n}.txt"))));
    files
}

fn config(launcher: &str) -> String {
    format!(
        "swarm:\n  quality_gates: false\n  enable_task_enrichment: false\n  \
         isolation: worktree\n  max_workers: 3\n  worker_retries: 2\n  worker_timeout_secs: 120\n{launcher}"
    )
}

/// The reference: the same swarm with local worktrees.
fn local_result() -> Vec<String> {
    let mut env = Env::new();
    six_tasks(&mut env, None);
    env.write(".atto/swarm.yaml", &config(""));
    let out = swarm(&env, &["--yes", "six files"]).output().unwrap();
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    assert_eq!(finished(&ev)["passed"], 6);
    result(&env)
}

/// Reads the coordinator's events in the background, calling `each` with every one as it
/// comes, until it exits or `deadline` passes.
fn watch(mut child: Child, deadline: Duration, mut each: impl FnMut(&Value)) -> (Vec<Value>, bool) {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    each(&v);
                    seen.push(v);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return (seen, false);
        }
    }
    let ok = child.wait().unwrap().success();
    (seen, ok)
}

/// Slurm's job ids and names now.
fn jobs() -> Vec<(String, String)> {
    let out = Command::new("squeue")
        .args(["-h", "-o", "%i %j %T"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.to_owned(), it.next()?.to_owned()))
        })
        .collect()
}

/// Runs six tasks on Slurm and, once task-3's first attempt is mid-task (its worker asked
/// the model), calls `fault` with the swarm id to end that attempt some way; `fault` says
/// whether it found `what` it ends. The swarm must finish as the local run does, with
/// task-3 retried once. `each` sees every event; returns the workspace and the swarm id.
fn six_on_slurm_after(
    what: &str,
    mut fault: impl FnMut(&str) -> bool,
    mut each: impl FnMut(&Value),
) -> (Env, String) {
    let expected = local_result();
    let mut env = Env::new();
    six_tasks(&mut env, Some("task-3"));
    env.write(".atto/swarm.yaml", &config(SLURM));
    trust(&env, ".atto/swarm.yaml");
    let child = swarm(&env, &["--yes", "six files"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut swarm_id = String::new();
    let mut faulted = false;
    let (ev, ok) = watch(child, Duration::from_secs(300), |e| {
        if e["type"] == "swarm.started" {
            swarm_id = e["swarm_id"].as_str().unwrap_or_default().to_owned();
        }
        if !faulted && e["type"] == "swarm.task.started" && e["task_id"] == "task-3" {
            assert!(
                asked(&env, "task-3"),
                "task-3's worker never asked the model"
            );
            faulted = fault(&swarm_id);
        }
        each(e);
    });
    assert!(ok, "the swarm did not finish: {ev:?}");
    assert!(faulted, "{what} was never seen");
    assert_eq!(finished(&ev)["passed"], 6, "{ev:?}");
    let retried: Vec<&Value> = of_type(&ev, "swarm.task.retrying")
        .into_iter()
        .filter(|e| e["task_id"] == "task-3")
        .collect();
    assert_eq!(retried.len(), 1, "{ev:?}");
    assert_eq!(result(&env), expected);
    (env, swarm_id)
}

#[test]
fn six_tasks_on_slurm_merge_like_local_ones_after_a_job_is_cancelled() {
    if !engine(
        "ATTO_SLURM",
        "six_tasks_on_slurm_merge_like_local_ones_after_a_job_is_cancelled",
        "scripts/slurm-up.sh setup && scripts/slurm-up.sh start",
    ) {
        return;
    }
    let mut nodes_seen = std::collections::BTreeSet::new();
    // Once task-3's first job runs, it is cancelled, as an operator or a node failure
    // would.
    let cancel = |swarm_id: &str| {
        let name = format!("atto-{swarm_id}-task-3");
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some((id, _)) = jobs().into_iter().find(|(_, n)| *n == name) {
                let ok = Command::new("scancel").arg(&id).status().unwrap();
                assert!(ok.success());
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    };
    let (env, swarm_id) = six_on_slurm_after("task-3's job in squeue", cancel, |e| {
        if started_pid(e).is_some() {
            let out = Command::new("squeue")
                .args(["-h", "-o", "%j %N"])
                .output()
                .unwrap();
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some((name, node)) = line.split_once(' ')
                    && name.starts_with("atto-")
                    && !node.is_empty()
                {
                    nodes_seen.insert(node.to_owned());
                }
            }
        }
    });
    assert!(nodes_seen.len() >= 2, "jobs ran on {nodes_seen:?}");
    // The work came back through git: every attempt's branch is kept under refs/atto/.
    let refs = Command::new("git")
        .args(["for-each-ref", "--format=%(refname)", "refs/atto/swarm"])
        .current_dir(env.repo())
        .output()
        .unwrap();
    let refs = String::from_utf8_lossy(&refs.stdout);
    assert_eq!(refs.lines().count(), 6, "{refs}");
    assert!(
        refs.contains(&format!("refs/atto/swarm/{swarm_id}/task-3/attempt-2")),
        "{refs}"
    );
}

/// The ssh config scripts/sshd-up.sh wrote.
pub(crate) fn ssh_config() -> String {
    std::env::var("ATTO_SSH_CONFIG").unwrap_or_default()
}

/// The process id in a "worker started (pid N)" activity event.
fn started_pid(e: &Value) -> Option<u32> {
    if e["type"] != "swarm.task.activity" {
        return None;
    }
    e["activity"]
        .as_str()?
        .strip_prefix("worker started (pid ")?
        .strip_suffix(')')?
        .parse()
        .ok()
}

/// A running process's arguments (empty once it is gone). Read for up to a second: a
/// process just spawned has none until its exec completes.
fn cmdline(pid: u32) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            return Vec::new();
        };
        if !raw.is_empty() || Instant::now() > deadline {
            return raw
                .split(|b| *b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn six_tasks_over_ssh_merge_like_local_ones_after_a_connection_is_killed() {
    if !engine(
        "ATTO_SSHD",
        "six_tasks_over_ssh_merge_like_local_ones_after_a_connection_is_killed",
        "scripts/sshd-up.sh setup && scripts/sshd-up.sh start",
    ) {
        return;
    }
    let expected = local_result();
    let mut env = Env::new();
    six_tasks(&mut env, Some("task-3"));
    env.write(
        ".atto/swarm.yaml",
        &config(&format!(
            "  launcher: ssh\n  ssh:\n    hosts: [build-a, build-b, build-c]\n    config: {}\n",
            ssh_config()
        )),
    );
    trust(&env, ".atto/swarm.yaml");
    let child = swarm(&env, &["--yes", "six files"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut killed = false;
    let mut hosts = std::collections::BTreeSet::new();
    let (ev, ok) = watch(child, Duration::from_secs(300), |e| {
        let Some(pid) = started_pid(e) else { return };
        // A quick attempt's ssh may be gone already; task-3's first one waits on the model.
        let words = cmdline(pid);
        if words.first().map(String::as_str) != Some("ssh") {
            return;
        }
        if let Some(host) = ["build-a", "build-b", "build-c"]
            .into_iter()
            .find(|h| words.iter().any(|w| w == h))
        {
            hosts.insert(host);
        }
        // task-3's first connection dies mid-task, as when a host goes away.
        if !killed && e["task_id"] == "task-3" {
            assert!(
                asked(&env, "task-3"),
                "task-3's worker never asked the model"
            );
            let ok = Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap();
            killed = ok.success();
        }
    });
    assert!(ok, "the swarm did not finish: {ev:?}");
    assert!(killed, "task-3's ssh was never seen");
    assert_eq!(finished(&ev)["passed"], 6, "{ev:?}");
    let retried = of_type(&ev, "swarm.task.retrying")
        .into_iter()
        .filter(|e| e["task_id"] == "task-3")
        .count();
    assert_eq!(retried, 1, "{ev:?}");
    assert_eq!(result(&env), expected);
    assert!(hosts.len() >= 2, "attempts went to {hosts:?}");
}

#[test]
fn a_coordinator_killed_mid_swarm_on_slurm_resumes_only_the_unfinished_task() {
    if !engine(
        "ATTO_SLURM",
        "a_coordinator_killed_mid_swarm_on_slurm_resumes_only_the_unfinished_task",
        "scripts/slurm-up.sh setup && scripts/slurm-up.sh start",
    ) {
        return;
    }
    let mut env = Env::new();
    env.write("shared.txt", SHARED);
    let tasks = json!([
        {"id": "task-1", "type": "implement", "target_files": ["f1.txt"],
         "description": "Write f1.txt and mark line 1 of shared.txt as done."},
        {"id": "task-2", "type": "implement", "target_files": ["f2.txt"], "dependencies": ["task-1"],
         "description": "Write f2.txt and mark line 2 of shared.txt as done."}
    ]);
    let mut replies = vec![decomposition(tasks)];
    let work = |n: u32| {
        worker(
            &format!("task-{n}"),
            "implement",
            vec![
                write(&format!("f{n}.txt"), &format!("file {n}\n")),
                crate::common::call(
                    "edit_file",
                    json!({"path": "shared.txt", "old_string": format!("line{n}\n"),
                           "new_string": format!("line{n} done\n")}),
                ),
            ],
            "Done.",
        )
    };
    replies.extend(work(1));
    // task-2's first worker waits long on the model: the coordinator dies meanwhile.
    replies.push(Reply {
        delay_ms: 60_000,
        ..when(
            &crate::swarm::marker("task-2", "implement"),
            Reply::text("late"),
        )
    });
    replies.extend(work(2));
    env.serve(Script::new(replies));
    env.write(".atto/swarm.yaml", &config(SLURM));
    trust(&env, ".atto/swarm.yaml");
    let mut child = swarm(&env, &["--yes", "two files"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut swarm_id = String::new();
    let mut task1_passed = false;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        let Ok(e) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if e["type"] == "swarm.started" {
            swarm_id = e["swarm_id"].as_str().unwrap().to_owned();
        }
        task1_passed |= e["type"] == "swarm.task.passed" && e["task_id"] == "task-1";
        if task1_passed && started_pid(&e).is_some() && e["task_id"] == "task-2" {
            assert!(
                asked(&env, "task-2"),
                "task-2's worker never asked the model"
            );
            break;
        }
    }
    assert!(task1_passed);
    child.kill().unwrap(); // SIGKILL: no chance to stop its workers
    child.wait().unwrap();
    // Its job ends with it: the job's stdin closed, so the worker stopped.
    let name = format!("atto-{swarm_id}-task-2");
    let deadline = Instant::now() + Duration::from_secs(60);
    while jobs().iter().any(|(_, n)| *n == name) {
        assert!(
            Instant::now() < deadline,
            "{name} still runs without its coordinator"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let task1_requests = |env: &Env| {
        env.requests()
            .iter()
            .filter(|r| r.body.to_string().contains("## Task task-1 ("))
            .count()
    };
    let before = task1_requests(&env);
    let out = swarm(&env, &["--resume", &swarm_id[..8]]).output().unwrap();
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    assert!(
        of_type(&ev, "swarm.task.started")
            .iter()
            .all(|e| e["task_id"] == "task-2"),
        "{ev:?}"
    );
    assert_eq!(task1_requests(&env), before, "task-1 ran again");
    // The killed run's worktree of task-2 is in the way of its attempt now: removed, not
    // a failed attempt.
    assert!(of_type(&ev, "swarm.task.retrying").is_empty(), "{ev:?}");
    assert_eq!(finished(&ev)["passed"], 2);
    assert_eq!(env.read("f2.txt"), "file 2\n");
    assert!(
        env.read("shared.txt")
            .starts_with("line1 done\nkeep 1a\nkeep 1b\nline2 done\n")
    );
}

const SLURM: &str =
    "  launcher: slurm\n  slurm:\n    time: \"00:05:00\"\n    cpus_per_task: 1\n    mem: 200M\n";

/// Every atto job Slurm ran while it was polled, by job id: its name and node. Polls
/// `squeue` every 100 ms until `stop` is set.
fn job_nodes(
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<std::collections::BTreeMap<String, (String, String)>> {
    std::thread::spawn(move || {
        let mut seen = std::collections::BTreeMap::new();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok(out) = Command::new("squeue")
                .args(["-h", "-o", "%i %j %N"])
                .output()
            {
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    if let [id, name, node] = line.split_whitespace().collect::<Vec<_>>()[..]
                        && name.starts_with("atto-")
                    {
                        seen.insert(id.to_owned(), (name.to_owned(), node.to_owned()));
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        seen
    })
}

/// One task on an idle cluster, where Slurm would put every job on the same first node:
/// its job is cancelled mid-task, and the retry runs on another node, because the worker
/// named its node first and the coordinator kept the retry off it (`srun --exclude`).
#[test]
fn a_job_lost_on_a_node_is_retried_on_another_node() {
    if !engine(
        "ATTO_SLURM",
        "a_job_lost_on_a_node_is_retried_on_another_node",
        "scripts/slurm-up.sh setup && scripts/slurm-up.sh start",
    ) {
        return;
    }
    let mut env = Env::new();
    let task = json!([{"id": "task-1", "type": "implement", "target_files": ["f1.txt"],
                        "description": "Write f1.txt."}]);
    let mut replies = vec![
        decomposition(task),
        Reply {
            delay_ms: 60_000,
            ..when(
                &crate::swarm::marker("task-1", "implement"),
                Reply::text("late"),
            )
        },
    ];
    let mut retry = worker(
        "task-1",
        "implement",
        vec![write("f1.txt", "file 1\n")],
        "Done.",
    );
    // The retry's job stays in squeue long enough for its node to be seen.
    retry[0].delay_ms = 3_000;
    replies.extend(retry);
    env.serve(Script::new(replies));
    env.write(".atto/swarm.yaml", &config(SLURM));
    trust(&env, ".atto/swarm.yaml");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let poller = job_nodes(stop.clone());
    let child = swarm(&env, &["--yes", "one file"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut swarm_id = String::new();
    let mut cancelled = None;
    let (ev, ok) = watch(child, Duration::from_secs(180), |e| {
        if e["type"] == "swarm.started" {
            swarm_id = e["swarm_id"].as_str().unwrap_or_default().to_owned();
        }
        if cancelled.is_none() && e["type"] == "swarm.task.started" {
            let name = format!("atto-{swarm_id}-task-1");
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if let Some((id, _)) = jobs().into_iter().find(|(_, n)| *n == name) {
                    assert!(
                        asked(&env, "task-1"),
                        "task-1's worker never asked the model"
                    );
                    // Its node is polled by now: the job has run a model request.
                    std::thread::sleep(Duration::from_millis(300));
                    assert!(Command::new("scancel").arg(&id).status().unwrap().success());
                    cancelled = Some(id);
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = poller.join().unwrap();
    assert!(ok, "the swarm did not finish: {ev:?}");
    assert_eq!(finished(&ev)["passed"], 1, "{ev:?}");
    assert_eq!(of_type(&ev, "swarm.task.retrying").len(), 1, "{ev:?}");
    assert_eq!(env.read("f1.txt"), "file 1\n");
    let cancelled = cancelled.expect("task-1's job was never seen in squeue");
    let (_, lost) = &seen[&cancelled];
    // Only this swarm's jobs: the other tests' swarms on the same cluster have a task-1 too.
    let name = format!("atto-{swarm_id}-task-1");
    let retried: Vec<&String> = seen
        .iter()
        .filter(|(id, (job, _))| **id != cancelled && *job == name)
        .map(|(_, (_, node))| node)
        .collect();
    assert_eq!(retried.len(), 1, "jobs seen: {seen:?}");
    assert_ne!(
        retried[0], lost,
        "the retry ran on the node its attempt was lost on"
    );
}

/// The process ids of the workers (`atto exec`) running in Slurm job `job_name`. Each
/// process is read once, without waiting: the machine's other processes come and go.
fn workers_in_job(job_name: &str) -> Vec<u32> {
    let wanted = format!("SLURM_JOB_NAME={job_name}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let has = |pid: u32, file: &str, word: &[u8], at: Option<usize>| {
        std::fs::read(format!("/proc/{pid}/{file}")).is_ok_and(|raw| {
            let mut words = raw.split(|b| *b == 0);
            match at {
                Some(i) => words.nth(i) == Some(word),
                None => words.any(|w| w == word),
            }
        })
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            has(pid, "cmdline", b"exec", Some(1)) && has(pid, "environ", wanted.as_bytes(), None)
        })
        .collect()
}

/// The worker itself SIGKILLed on its node (not `srun`, not the job): it wrote no
/// `result`, so the attempt fails (what the node-side `atto swarm worker` sends back of
/// it is not merged) and is retried, and the merged result equals the local run's.
#[test]
fn six_tasks_on_slurm_merge_like_local_ones_after_a_worker_is_killed_on_its_node() {
    if !engine(
        "ATTO_SLURM",
        "six_tasks_on_slurm_merge_like_local_ones_after_a_worker_is_killed_on_its_node",
        "scripts/slurm-up.sh setup && scripts/slurm-up.sh start",
    ) {
        return;
    }
    let kill = |swarm_id: &str| {
        let pids = workers_in_job(&format!("atto-{swarm_id}-task-3"));
        assert_eq!(pids.len(), 1, "task-3's worker on its node: {pids:?}");
        let ok = Command::new("kill")
            .args(["-KILL", &pids[0].to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        true
    };
    six_on_slurm_after("task-3's worker on its node", kill, |_| {});
}
