//! `atto swarm` when things go wrong: a worker killed by SIGKILL, the coordinator killed
//! or interrupted and resumed, the token cap, a model's circuit breaker, backoff, and a
//! question left open when stdin closes.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script, ScriptUsage};
use serde_json::{Value, json};

use crate::common::{Env, events, of_type, stderr};
use crate::repo_trust::trust;
use crate::swarm::{
    decomposition, finished, report_json, run, stuck_project, swarm, swarm_with, task_report, when,
    worker, write,
};

/// A task's worker turn whose first reply is held 5 s (the run is stopped meanwhile),
/// then a quick one for the retry.
fn slow_then_quick(id: &str, file: &str, content: &str) -> Vec<Reply> {
    let mut replies = worker(id, "implement", vec![write(file, content)], "Done.");
    replies[0].delay_ms = 5_000;
    replies.extend(worker(id, "implement", vec![write(file, content)], "Done."));
    replies
}

#[test]
fn a_worker_killed_by_sigkill_is_detected_and_its_task_retried_through_the_template() {
    let mut env = Env::new();
    // The launch template is a wrapper script: the coordinator depends on nothing else.
    // Its first launch kills itself with SIGKILL; later ones run the real worker.
    let wrapper = env.dir.path().join("launch.sh");
    let log = env.dir.path().join("launches.log");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$@\" >> {log}\nif [ ! -e {log}.once ]; then touch {log}.once; kill -9 $$; fi\nexec \"$@\"\n",
            log = log.display()
        ),
    )
    .unwrap();
    env.write(
        ".atto/swarm.yaml",
        &format!(
            "swarm:\n  quality_gates: false\n  worker_command: [\"sh\", \"{}\", \"{{atto}}\", \"exec\", \"{{args}}\"]\n",
            wrapper.display()
        ),
    );
    trust(&env, ".atto/swarm.yaml");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["hello.py"],
         "description": "Create hello.py that prints hello world when it is run with python from the command line."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("hello.py", "print('hello world')\n")],
        "Done.",
    ));
    env.serve(Script::new(replies));
    let out = run(&env, &["--yes", "say hello"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    let retrying = of_type(&ev, "swarm.task.retrying");
    assert_eq!(retrying.len(), 1, "{ev:?}");
    assert!(
        retrying[0]["reason"]
            .as_str()
            .unwrap()
            .contains("killed by signal 9"),
        "{}",
        retrying[0]
    );
    let launches = std::fs::read_to_string(&log).unwrap();
    assert_eq!(launches.lines().count(), 2, "{launches}");
    assert!(
        launches.contains("exec --output-format stream-json --input-format stream-json"),
        "{launches}"
    );
    assert_eq!(env.read("hello.py"), "print('hello world')\n");
    // A worker killed by a signal taught nothing about the task: no lesson from it.
    let lessons: Vec<_> = of_type(&ev, "swarm.notice")
        .into_iter()
        .filter(|n| {
            n["text"]
                .as_str()
                .unwrap_or_default()
                .starts_with("proposed learning #")
        })
        .collect();
    assert!(lessons.is_empty(), "{lessons:?}");
}

fn wait_for(
    child: &mut Child,
    deadline: Duration,
    mut until: impl FnMut(&Value) -> bool,
) -> Vec<Value> {
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
    while start.elapsed() < deadline {
        let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            let stop = until(&v);
            seen.push(v);
            if stop {
                return seen;
            }
        }
    }
    panic!("timed out; saw {seen:?}");
}

#[test]
fn a_killed_coordinator_resumes_without_rerunning_passed_tasks() {
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["one.py"],
         "description": "Create one.py defining ONE = 1 as a module-level constant for the other modules to import."},
        {"id": "task-2", "type": "implement", "dependencies": ["task-1"], "target_files": ["two.py"],
         "description": "Create two.py defining TWO = ONE + 1, importing ONE from one.py at the top of the module."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("one.py", "ONE = 1\n")],
        "Done.",
    ));
    // task-2's first worker is slow: the coordinator is killed while it runs.
    replies.extend(slow_then_quick(
        "task-2",
        "two.py",
        "from one import ONE\n\nTWO = ONE + 1\n",
    ));
    env.serve(Script::new(replies));
    let mut child = swarm(&env, &["--yes", "one and two"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let seen = wait_for(&mut child, Duration::from_secs(60), |e| {
        e["type"] == "swarm.task.started" && e["task_id"] == "task-2"
    });
    let swarm_id = of_type(&seen, "swarm.started")[0]["swarm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(of_type(&seen, "swarm.task.passed").len(), 1);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The saved state still says running; the dead coordinator's released lock does not.
    let status = env.atto().args(["swarm", "status"]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains(&format!(
            "resume with `atto swarm --resume {}`",
            &swarm_id[..8]
        )),
        "{status}"
    );
    assert!(!status.contains("· running ·"), "{status}");
    let task1_requests = |env: &Env| {
        env.requests()
            .iter()
            .filter(|r| r.body["messages"].to_string().contains("## Task task-1 ("))
            .count()
    };
    let before = task1_requests(&env);

    let out = run(&env, &["--resume", &swarm_id[..8]]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    assert_eq!(of_type(&ev, "swarm.started")[0]["resumed"], true);
    let started: Vec<&Value> = of_type(&ev, "swarm.task.started");
    assert!(
        started.iter().all(|e| e["task_id"] == "task-2"),
        "{started:?}"
    );
    assert_eq!(task1_requests(&env), before, "task-1 ran again");
    assert_eq!(finished(&ev)["passed"], 2);
    assert_eq!(env.read("two.py"), "from one import ONE\n\nTWO = ONE + 1\n");
}

#[test]
fn the_token_cap_is_never_crossed() {
    let mut env = Env::new();
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  enable_task_enrichment: false\n",
    );
    let usage = Some(ScriptUsage {
        input_tokens: 3_000,
        output_tokens: 500,
        ..ScriptUsage::default()
    });
    let tasks: Vec<Value> = (1..=4)
        .map(|i| json!({"id": format!("task-{i}"), "type": "implement", "target_files": [format!("f{i}.py")],
                        "description": format!("Create f{i}.py defining the constant VALUE = {i} for the other modules to import.")}))
        .collect();
    let mut replies = vec![decomposition(Value::Array(tasks))];
    for i in 1..=4 {
        for r in worker(
            &format!("task-{i}"),
            "implement",
            vec![write(&format!("f{i}.py"), &format!("VALUE = {i}\n"))],
            "Done.",
        ) {
            replies.push(Reply { usage, ..r });
        }
    }
    env.serve(Script::new(replies));
    let cap = 20_000u64;
    let out = run(
        &env,
        &[
            "--yes",
            "--max-budget-tokens",
            &cap.to_string(),
            "--max-workers",
            "1",
            "four constants",
        ],
    );
    let ev = events(&out);
    let done = finished(&ev);
    let tokens = done["tokens"].as_u64().unwrap();
    assert!(tokens <= cap, "{tokens} > {cap}: {ev:?}");
    // The cap stopped work: not every task could run.
    let passed = done["passed"].as_u64().unwrap();
    assert!(passed < 4, "{done}");
    assert!(
        ev.iter().any(|e| e.to_string().contains("budget")),
        "nothing said the budget stopped it: {ev:?}"
    );
    for b in of_type(&ev, "swarm.budget") {
        assert!(b["tokens"].as_u64().unwrap() <= cap, "{b}");
    }
}

/// A reply refusing the request outright (HTTP 400: not retried by the worker).
fn refused(marker: &str) -> Reply {
    when(
        marker,
        Reply {
            fault: Some(atto_testkit::Fault::Status {
                status: 400,
                body: None,
                retry_after: None,
            }),
            ..Reply::default()
        },
    )
}

#[test]
fn three_failures_of_a_model_trip_its_breaker_and_the_fallback_takes_over() {
    let mut env = Env::new();
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  worker_retries: 3\n  models:\n    worker: flaky\n    fallback: [m]\n",
    );
    trust(&env, ".atto/swarm.yaml");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["hello.py"],
         "description": "Create hello.py that prints hello world when it is run with python from the command line."}
    ]))];
    for _ in 0..3 {
        replies.push(refused("\"model\":\"flaky\""));
    }
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("hello.py", "print('hello world')\n")],
        "Done.",
    ));
    env.serve(Script::new(replies));
    let out = run(&env, &["--yes", "say hello"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    let health = of_type(&ev, "swarm.model.health");
    assert_eq!(health.len(), 1, "{ev:?}");
    assert_eq!(health[0]["model"], "flaky");
    assert_eq!(health[0]["tripped"], true);
    let models: Vec<&str> = of_type(&ev, "swarm.task.started")
        .iter()
        .map(|e| e["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, vec!["flaky", "flaky", "flaky", "m"]);
    // The tripped breaker came after exactly three failures.
    let trip = ev
        .iter()
        .position(|e| e["type"] == "swarm.model.health")
        .unwrap();
    let failures_before = ev[..trip]
        .iter()
        .filter(|e| e["type"] == "swarm.task.retrying")
        .count();
    assert_eq!(
        failures_before, 2,
        "the third failure trips it before its retry is scheduled"
    );
}

#[test]
fn a_task_waiting_out_its_backoff_does_not_hold_up_the_others() {
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["a.py"],
         "description": "Create a.py defining the constant A = 1 for the other modules of the project to import."},
        {"id": "task-2", "type": "implement", "target_files": ["b.py"],
         "description": "Create b.py defining the constant B = 2 for the other modules of the project to import."}
    ]))];
    replies.push(refused("## Task task-1 ("));
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("a.py", "A = 1\n")],
        "Done.",
    ));
    let mut slow = worker(
        "task-2",
        "implement",
        vec![write("b.py", "B = 2\n")],
        "Done.",
    );
    slow[0].delay_ms = 400;
    replies.extend(slow);
    env.serve(Script::new(replies));
    // One backoff unit of 1.5 s: task-1's retry waits 3 s (plus jitter).
    let out = swarm_with(&env, "auto-safe", 1500, &["--yes", "two constants"])
        .output()
        .unwrap();
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    let retrying = of_type(&ev, "swarm.task.retrying");
    assert_eq!(retrying.len(), 1);
    assert!(
        retrying[0]["delay_ms"].as_u64().unwrap() >= 3000,
        "{}",
        retrying[0]
    );
    let pos = |pred: &dyn Fn(&Value) -> bool| ev.iter().position(pred).unwrap();
    let b_passed = pos(&|e| e["type"] == "swarm.task.passed" && e["task_id"] == "task-2");
    let a_again = pos(&|e| {
        e["type"] == "swarm.task.started" && e["task_id"] == "task-1" && e["attempt"] == 2
    });
    assert!(
        b_passed < a_again,
        "task-2 waited for task-1's backoff: {ev:?}"
    );
}

#[test]
fn ctrl_c_stops_the_workers_and_leaves_a_resumable_swarm() {
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["one.py"],
         "description": "Create one.py defining ONE = 1 as a module-level constant for the other modules to import."}
    ]))];
    replies.extend(slow_then_quick("task-1", "one.py", "ONE = 1\n"));
    env.serve(Script::new(replies));
    let mut child = swarm(&env, &["--yes", "one"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let seen = wait_for(&mut child, Duration::from_secs(60), |e| {
        e["type"] == "swarm.task.activity"
            && e["activity"]
                .as_str()
                .unwrap_or("")
                .starts_with("worker started")
    });
    let swarm_id = of_type(&seen, "swarm.started")[0]["swarm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the workers were not stopped promptly"
    );
    let shown = env
        .atto()
        .args(["swarm", "status", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(report["status"], "interrupted", "{report}");
    assert!(!env.repo().join("one.py").exists());

    let out = run(&env, &["--resume", &swarm_id]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    assert_eq!(finished(&ev)["passed"], 1);
    // The interrupted dispatch did not count against the task.
    let t = task_report(&report_json(&ev), "task-1").clone();
    assert_eq!(t["status"], "passed", "{t}");
}

#[test]
fn a_question_left_when_stdin_closes_is_answered_as_on_ask_says_instead_of_hanging() {
    let mut env = Env::new();
    stuck_project(
        &mut env,
        "swarm:\n  quality_gates: false\n  worker_retries: 0\n  enable_user_intervention: true\n  user_intervention_threshold: 1\n",
        1,
        Vec::new(),
    );
    let mut cmd = swarm(
        &env,
        &["--input-format", "stream-json", "--yes", "make the app"],
    );
    cmd.stdin(Stdio::null());
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let ev = events(&out);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}\n{ev:?}", stderr(&out));
    assert_eq!(of_type(&ev, "swarm.task.intervention_needed").len(), 1);
    let skipped: Vec<&str> = of_type(&ev, "swarm.task.skipped")
        .iter()
        .map(|e| e["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, vec!["task-1", "task-2"], "{ev:?}");
}

#[test]
fn a_worker_that_cannot_start_is_not_held_against_the_model() {
    let mut env = Env::new();
    let missing = env.dir.path().join("no-such-launcher");
    env.write(
        ".atto/swarm.yaml",
        &format!(
            "swarm:\n  quality_gates: false\n  enable_task_enrichment: false\n  worker_retries: 2\n  worker_command: [\"{}\", \"{{args}}\"]\n",
            missing.display()
        ),
    );
    trust(&env, ".atto/swarm.yaml");
    env.serve(Script::new(vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["hello.py"],
         "description": "Create hello.py that prints hello world when it is run with python from the command line."}
    ]))]));
    let out = run(&env, &["--yes", "say hello"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Three launches that never reached the model are not three failures of the model.
    let tripped: Vec<_> = of_type(&ev, "swarm.model.health")
        .into_iter()
        .filter(|h| h["tripped"] == true)
        .collect();
    assert!(tripped.is_empty(), "{tripped:?}");
    let report = report_json(&ev);
    let attempts = task_report(&report, "task-1")["attempt_log"].clone();
    let last = attempts
        .as_array()
        .and_then(|a| a.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["failure_mode"], "start", "{attempts}");
    assert!(
        last["error"]
            .as_str()
            .unwrap_or_default()
            .contains("could not start"),
        "{attempts}"
    );
}

#[test]
fn results_that_cannot_be_fetched_are_retried_and_the_swarm_finishes() {
    let mut env = Env::new();
    // A remote launcher whose first attempts return a corrupt bundle: the coordinator's
    // fetch of each fails, as it did when attempts ended together.
    let wrapper = env.dir.path().join("launch.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\n\"$@\" | sed -E '/attempt-1\"/ s/\"bundle\":\"[^\"]*\"/\"bundle\":\"AAAA\"/'\n",
    )
    .unwrap();
    env.write(
        ".atto/swarm.yaml",
        &format!(
            "swarm:\n  quality_gates: false\n  enable_task_enrichment: false\n  isolation: worktree\n  \
             max_workers: 3\n  launcher: command\n  worker_command: [\"sh\", \"{}\", \"{{atto}}\", \
             \"swarm\", \"worker\", \"--\", \"{{atto}}\", \"exec\", \"{{args}}\"]\n",
            wrapper.display()
        ),
    );
    trust(&env, ".atto/swarm.yaml");
    let ids = ["task-1", "task-2", "task-3"];
    let tasks: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| {
            json!({"id": id, "type": "implement", "target_files": [format!("f{n}.txt")],
                   "description": format!("Write f{n}.txt holding the line done, nothing else in it.")})
        })
        .collect();
    let mut replies = vec![decomposition(Value::Array(tasks))];
    for _ in 0..2 {
        for (n, id) in ids.iter().enumerate() {
            replies.extend(worker(
                id,
                "implement",
                vec![write(&format!("f{n}.txt"), "done\n")],
                "Done.",
            ));
        }
    }
    env.serve(Script::new(replies));
    let mut child = swarm(&env, &["--yes", "three files"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Three lost results must not hold the tasks for minutes behind a tripped breaker.
    let ev = wait_for(&mut child, Duration::from_secs(120), |e| {
        e["type"] == "swarm.finished"
    });
    assert_eq!(child.wait().unwrap().code(), Some(0), "{ev:?}");
    assert_eq!(finished(&ev)["passed"], 3, "{ev:?}");
    let tripped: Vec<_> = of_type(&ev, "swarm.model.health")
        .into_iter()
        .filter(|h| h["tripped"] == true)
        .collect();
    assert!(tripped.is_empty(), "{tripped:?}");
    assert_eq!(of_type(&ev, "swarm.task.retrying").len(), 3, "{ev:?}");
    let report = report_json(&ev);
    for (n, id) in ids.iter().enumerate() {
        let attempts = task_report(&report, id)["attempt_log"].clone();
        assert_eq!(attempts[0]["failure_mode"], "transport", "{attempts}");
        assert!(
            attempts[0]["error"]
                .as_str()
                .unwrap_or_default()
                .contains("could not be fetched"),
            "{attempts}"
        );
        assert_eq!(env.read(&format!("f{n}.txt")), "done\n");
    }
}

#[test]
fn a_wait_for_a_tripped_model_says_how_long_and_why() {
    let mut env = Env::new();
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  enable_task_enrichment: false\n  worker_retries: 5\n  models:\n    worker: flaky\n",
    );
    trust(&env, ".atto/swarm.yaml");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["hello.py"],
         "description": "Create hello.py that prints hello world when it is run with python from the command line."}
    ]))];
    for _ in 0..3 {
        replies.push(refused("\"model\":\"flaky\""));
    }
    env.serve(Script::new(replies));
    // No fallback: the task waits out the breaker, and the user is told so at once.
    let mut child = swarm(&env, &["--yes", "say hello"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let seen = wait_for(&mut child, Duration::from_secs(60), |e| {
        e["type"] == "swarm.model.waiting"
    });
    let _ = child.kill();
    let _ = child.wait();
    let waiting = seen.last().unwrap();
    assert_eq!(waiting["model"], "flaky", "{waiting}");
    let secs = waiting["wait_seconds"].as_u64().unwrap();
    assert!((240..=300).contains(&secs), "{waiting}");
    let reason = waiting["reason"].as_str().unwrap();
    assert!(reason.starts_with("3 failures (last: "), "{reason}");
    assert!(reason.contains("400"), "{reason}");
}
