//! `atto swarm` end to end: a real coordinator process, real `atto exec` worker processes
//! speaking stream-json, the scripted model server answering each worker by the task in
//! its prompt, and the real toolchains (python, pytest) in the quality checks.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Output, Stdio};

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use crate::common::{Env, call, events, of_type, stderr};

mod people;
mod worktrees;

/// The marker of a task's worker prompt (every request of that worker contains it).
pub(crate) fn marker(id: &str, kind: &str) -> String {
    format!("## Task {id} ({kind})")
}

pub(crate) fn when(marker: &str, reply: Reply) -> Reply {
    Reply {
        when: Some(marker.to_owned()),
        ..reply
    }
}

/// A worker's turn: one reply of tool calls, then its final answer.
pub(crate) fn worker(
    id: &str,
    kind: &str,
    calls: Vec<atto_testkit::ScriptToolCall>,
    answer: &str,
) -> Vec<Reply> {
    let m = marker(id, kind);
    vec![
        when(
            &m,
            Reply {
                tool_calls: calls,
                ..Reply::default()
            },
        ),
        when(&m, Reply::text(answer)),
    ]
}

pub(crate) fn write(path: &str, content: &str) -> atto_testkit::ScriptToolCall {
    call("write_file", json!({"path": path, "content": content}))
}

pub(crate) fn bash(command: &str) -> atto_testkit::ScriptToolCall {
    call("bash", json!({"command": command}))
}

/// The decomposer's answer.
pub(crate) fn decomposition(tasks: Value) -> Reply {
    when(
        "Split this task into swarm tasks",
        Reply::text(json!({ "tasks": tasks }).to_string()),
    )
}

/// `atto swarm` against the scripted server with auto-safe workers and fast backoff.
pub(crate) fn swarm(env: &Env, args: &[&str]) -> Command {
    swarm_with(env, "auto-safe", 10, args)
}

/// [`swarm`] with another permission mode and a backoff unit of `unit_ms`.
pub(crate) fn swarm_with(env: &Env, permission: &str, unit_ms: u64, args: &[&str]) -> Command {
    let mut cmd = env.atto();
    cmd.arg("swarm")
        .args(["--base-url", &env.base("chat"), "--model", "m"])
        .args(["--permission", permission, "--output-format", "stream-json"])
        .args(["--backoff-unit-ms", &unit_ms.to_string()])
        .args(args);
    cmd
}

pub(crate) fn run(env: &Env, args: &[&str]) -> Output {
    swarm(env, args).output().unwrap()
}

pub(crate) fn finished(ev: &[Value]) -> &Value {
    of_type(ev, "swarm.finished")
        .last()
        .copied()
        .unwrap_or_else(|| panic!("no swarm.finished in {ev:?}"))
}

pub(crate) fn report_json(ev: &[Value]) -> Value {
    let md = finished(ev)["report"].as_str().unwrap().to_owned();
    let json = md.replace("report.md", "report.json");
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

pub(crate) fn task_report<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no task {id} in {report}"))
}

const TEXT_UTILS: &str = "def normalize(text):\n    return ' '.join(text.split())\n";

const TEXT_UTILS_SLUG: &str = "import re\n\n\ndef normalize(text):\n    return ' '.join(text.split())\n\n\ndef slugify(text):\n    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n";

const VALIDATORS: &str = "import re\n\n\nclass ValidationError(ValueError):\n    pass\n\n\ndef validate_email(value):\n    if not re.fullmatch(r'[^@\\s]+@[^@\\s]+\\.[a-z]+', value or ''):\n        raise ValidationError('email: not an address')\n    return value\n";

pub(crate) const COUNTER_BROKEN: &str =
    "def count_words(text):\n    words = text.split()\n      return len(words)\n";

pub(crate) const COUNTER: &str = "def count_words(text):\n    return len(text.split())\n\n\ndef count_lines(text):\n    return len(text.splitlines())\n";

const TEST_SLUG: &str = "from text_utils import slugify\n\n\ndef test_punctuation_and_case():\n    assert slugify('Hello, World!') == 'hello-world'\n\n\ndef test_surrounding_spaces():\n    assert slugify('  a b  ') == 'a-b'\n";

const TEST_VALIDATORS: &str = "import pytest\n\nfrom validators import ValidationError, validate_email\n\n\ndef test_valid_email():\n    assert validate_email('a@b.io') == 'a@b.io'\n\n\ndef test_invalid_email_raises():\n    with pytest.raises(ValidationError):\n        validate_email('nope')\n";

fn six_tasks() -> Value {
    json!([
        {"id": "task-1", "type": "implement",
         "description": "Add a slugify(text) function to text_utils.py that lowercases the text, replaces runs of non-alphanumeric characters with one hyphen and strips hyphens at both ends.",
         "target_files": ["text_utils.py"]},
        {"id": "task-2", "type": "implement", "description": "Add validation"},
        {"id": "task-3", "type": "implement",
         "description": "Create counter.py with count_words(text) returning the number of whitespace-separated words and count_lines(text) returning the number of lines.",
         "target_files": ["counter.py"]},
        {"id": "task-4", "type": "test", "dependencies": ["task-1"],
         "description": "Write pytest tests for slugify in tests/test_text_utils.py covering punctuation, case and surrounding spaces, and run them with pytest.",
         "target_files": ["tests/test_text_utils.py"]},
        {"id": "task-5", "type": "test", "dependencies": ["task-2"],
         "description": "Write pytest tests for validate_email in tests/test_validators.py covering a valid and an invalid address, and run them with pytest.",
         "target_files": ["tests/test_validators.py"]},
        {"id": "task-6", "type": "document", "dependencies": ["task-1", "task-2", "task-3"],
         "description": "Document slugify, validate_email and count_words in README.md with one short usage example for each of them.",
         "target_files": ["README.md"]}
    ])
}

/// The seed's AFTER shape for the thin task, as the enrichment model answers it.
fn enrichment_reply() -> Reply {
    when(
        "Add validation",
        Reply::text(
            json!({
                "description": "Add input validation in validators.py: a ValidationError exception and validate_email(value) that accepts addresses of the form name@domain.tld and raises ValidationError with the field name in its message otherwise.",
                "target_files": ["validators.py"],
                "acceptance_criteria": ["validate_email raises ValidationError for 'nope'"],
                "technical_constraints": ["Use the stdlib re module, not third-party validators", "ValidationError must include the field name in its message"],
                "modification_instructions": "1. Create validators.py\n2. Add ValidationError and validate_email()",
                "test_expectations": ["test_valid_email passes", "test_invalid_email raises ValidationError"]
            })
            .to_string(),
        ),
    )
}

fn python_project(env: &Env) {
    env.write("text_utils.py", TEXT_UTILS);
    env.write("README.md", "# utils\n");
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  max_workers: 4\n",
    );
}

pub(crate) fn python_ok() -> bool {
    Command::new("python3")
        .args(["-c", "import pytest"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn six_tasks_decomposed_enriched_run_in_parallel_checked_and_retried() {
    if !python_ok() {
        atto_testkit::skipped(
            "six_tasks_decomposed_enriched_run_in_parallel_checked_and_retried",
            "python3 with pytest is not installed (scripts/test.sh installs it)",
        );
        return;
    }
    let mut env = Env::new();
    python_project(&env);
    let mut replies = vec![decomposition(six_tasks()), enrichment_reply()];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("text_utils.py", TEXT_UTILS_SLUG)],
        "Added slugify.",
    ));
    replies.extend(worker(
        "task-2",
        "implement",
        vec![write("validators.py", VALIDATORS)],
        "Added validators.py.",
    ));
    replies.extend(worker(
        "task-3",
        "implement",
        vec![write("counter.py", COUNTER_BROKEN)],
        "Wrote counter.py.",
    ));
    replies.extend(worker(
        "task-3",
        "implement",
        vec![write("counter.py", COUNTER)],
        "Fixed the indentation.",
    ));
    // The first test attempt writes the tests but never runs them (V11).
    replies.extend(worker(
        "task-4",
        "test",
        vec![write("tests/test_text_utils.py", TEST_SLUG)],
        "Wrote the tests.",
    ));
    replies.extend(worker(
        "task-4",
        "test",
        vec![bash("python3 -m pytest -q tests/test_text_utils.py")],
        "2 passed.",
    ));
    replies.extend(worker(
        "task-5",
        "test",
        vec![
            write("tests/test_validators.py", TEST_VALIDATORS),
            bash("python3 -m pytest -q tests/test_validators.py"),
        ],
        "2 passed.",
    ));
    replies.extend(worker(
        "task-6",
        "document",
        vec![write(
            "README.md",
            "# utils\n\n`slugify('Hello World')` gives `hello-world`.\n\n`validate_email('a@b.io')` returns the address.\n\n`count_words('a b')` is 2.\n",
        )],
        "Documented the helpers.",
    ));
    env.serve(Script::new(replies));
    let out = run(
        &env,
        &[
            "--yes",
            "add slugs, validation, a word counter, their tests and docs",
        ],
    );
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));

    // Enrichment turned the thin task into the seed's AFTER shape.
    let enriched = &of_type(&ev, "swarm.enriched")[0];
    assert!(
        enriched["thin"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "task-2"),
        "{enriched}"
    );
    assert!(
        enriched["enriched"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "task-2")
    );
    let plan = &of_type(&ev, "swarm.decomposed")[0]["tasks"];
    let t2 = plan
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "task-2")
        .unwrap();
    assert_eq!(t2["target_files"], json!(["validators.py"]));
    assert!(t2["description"].as_str().unwrap().len() >= 80);
    let criteria = t2["acceptance_criteria"].to_string();
    assert!(
        criteria.contains("File 'validators.py' exists and is non-empty"),
        "{criteria}"
    );
    assert!(
        t2["technical_constraints"]
            .to_string()
            .contains("stdlib re")
    );

    // Workers with disjoint files ran at the same time.
    let first_pass = ev
        .iter()
        .position(|e| e["type"] == "swarm.task.passed")
        .unwrap();
    let started_before: Vec<&str> = ev[..first_pass]
        .iter()
        .filter(|e| e["type"] == "swarm.task.started")
        .map(|e| e["task_id"].as_str().unwrap())
        .collect();
    for id in ["task-1", "task-2", "task-3"] {
        assert!(
            started_before.contains(&id),
            "{id} not started in parallel: {started_before:?}"
        );
    }

    // task-3 failed the compile check and its retry was told where.
    let retrying = of_type(&ev, "swarm.task.retrying");
    let r3: Vec<_> = retrying
        .iter()
        .filter(|e| e["task_id"] == "task-3")
        .collect();
    assert_eq!(r3.len(), 1, "{retrying:?}");
    let retry_prompt = env
        .requests()
        .iter()
        .map(|r| r.body["messages"].to_string())
        .find(|b| b.contains("## Task task-3 (implement)") && b.contains("Previous Attempt"))
        .expect("the retry's request");
    assert!(
        retry_prompt.contains("### Compilation Errors"),
        "{retry_prompt}"
    );
    assert!(retry_prompt.contains("counter.py:3 — "), "{retry_prompt}");

    // task-4's first attempt was rejected by V11, its second passed.
    let checked4: Vec<_> = of_type(&ev, "swarm.task.checked")
        .into_iter()
        .filter(|e| e["task_id"] == "task-4")
        .collect();
    assert_eq!(checked4.len(), 2, "{checked4:?}");
    assert_ne!(checked4[0]["verdict"], "pass");
    assert!(
        checked4[0]["findings"].to_string().contains("V11"),
        "{}",
        checked4[0]
    );
    assert_eq!(checked4[1]["verdict"], "pass");

    // The report says what happened.
    let done = finished(&ev);
    assert_eq!(done["passed"], 6, "{done}");
    assert_eq!(done["failed"], 0);
    let report = report_json(&ev);
    for (id, attempts) in [
        ("task-1", 1),
        ("task-2", 1),
        ("task-3", 2),
        ("task-4", 2),
        ("task-5", 1),
        ("task-6", 1),
    ] {
        let t = task_report(&report, id);
        assert_eq!(t["status"], "passed", "{t}");
        assert_eq!(t["attempts"], attempts, "{t}");
    }
    assert_eq!(env.read("counter.py"), COUNTER);
    let md = std::fs::read_to_string(done["report"].as_str().unwrap()).unwrap();
    assert!(md.contains("task-3"), "{md}");

    // The two tasks that passed only after a retry proposed what fixed them.
    let proposed: Vec<&Value> = of_type(&ev, "swarm.notice")
        .into_iter()
        .filter(|n| {
            n["text"]
                .as_str()
                .unwrap()
                .starts_with("proposed learning #")
        })
        .collect();
    assert_eq!(proposed.len(), 2, "{ev:?}");
    let listed = env
        .atto()
        .args(["learnings", "list", "--status", "proposed"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains("task-3") || listed.contains("counter"),
        "{listed}"
    );

    // `atto swarm status` prints the same headless.
    let status = env.atto().args(["swarm", "status"]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    assert!(text.contains("✓ task-3"), "{text}");
}

/// Two tasks, the second depending on the first; the first's worker writes a broken
/// Python file every time.
pub(crate) fn stuck_project(env: &mut Env, yaml: &str, attempts: usize, extra: Vec<Reply>) {
    env.write(".atto/swarm.yaml", yaml);
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["app.py"],
         "description": "Create app.py with a main() function that prints hello and returns 0, callable from the command line."},
        {"id": "task-2", "type": "document", "dependencies": ["task-1"], "target_files": ["NOTES.md"],
         "description": "Write NOTES.md describing how to run app.py from the command line with one example."}
    ]))];
    for _ in 0..attempts {
        replies.extend(worker(
            "task-1",
            "implement",
            vec![write("app.py", COUNTER_BROKEN)],
            "Wrote app.py.",
        ));
    }
    replies.extend(extra);
    env.serve(Script::new(replies));
}

/// Runs `atto swarm` with stream-json on both ends, answering events with `answer`
/// (the lines it returns are written to stdin) until the run ends.
pub(crate) fn converse(
    env: &Env,
    args: &[&str],
    answer: impl FnMut(&Value) -> Vec<String>,
) -> (Vec<Value>, Option<i32>, String) {
    converse_with(swarm(env, args), answer)
}

/// [`converse`] with the command given.
pub(crate) fn converse_with(
    mut cmd: Command,
    mut answer: impl FnMut(&Value) -> Vec<String>,
) -> (Vec<Value>, Option<i32>, String) {
    let mut child = cmd
        .args(["--input-format", "stream-json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    for line in stdout.lines() {
        let line = line.unwrap();
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        for reply in answer(&event) {
            writeln!(stdin, "{reply}").unwrap();
            stdin.flush().unwrap();
        }
        let end = event["type"] == "swarm.finished";
        seen.push(event);
        if end {
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (seen, out.status.code(), stderr(&out))
}

#[test]
fn the_judge_scores_each_attempt_and_its_feedback_reaches_the_retry() {
    let mut env = Env::new();
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  enable_task_enrichment: false\n  quality_gate_model: m\n",
    );
    crate::repo_trust::trust(&env, ".atto/swarm.yaml");
    let judge = |text: &str| when("Score the work from 1 to 5", Reply::text(text));
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["greet.py"],
         "description": "Create greet.py with greet(name) returning 'Hello, NAME!' with the name capitalised."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write(
            "greet.py",
            "def greet(name):\n    return 'Hello ' + name\n",
        )],
        "Done.",
    ));
    replies.push(judge("SCORE: 2\nFEEDBACK: The greeting lacks the comma and exclamation mark and does not capitalise the name."));
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write(
            "greet.py",
            "def greet(name):\n    return f'Hello, {name.capitalize()}!'\n",
        )],
        "Fixed.",
    ));
    replies.push(judge("SCORE: 4\nFEEDBACK: Correct."));
    env.serve(Script::new(replies));
    let out = run(&env, &["--yes", "greet people"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    let checked = of_type(&ev, "swarm.task.checked");
    let scores: Vec<u64> = checked
        .iter()
        .map(|c| c["score"].as_u64().unwrap())
        .collect();
    assert_eq!(scores, vec![2, 4], "{checked:?}");
    let retry = env
        .requests()
        .iter()
        .map(|r| r.body["messages"].to_string())
        .find(|b| b.contains("## Task task-1 (implement)") && b.contains("Previous Attempt"))
        .expect("the retry's request");
    assert!(retry.contains("### Quality Gate Feedback"), "{retry}");
    assert!(retry.contains("does not capitalise the name"), "{retry}");
    let passed = &of_type(&ev, "swarm.task.passed")[0];
    assert_eq!(passed["score"], 4);
    // The judge's calls are counted with the coordinator's own.
    let report = report_json(&ev);
    assert_eq!(task_report(&report, "task-1")["score"], 4);
    assert!(
        finished(&ev)["tokens"].as_u64().unwrap() >= 4 * 120 + 3 * 120,
        "{}",
        finished(&ev)
    );
}

#[test]
fn without_a_quality_gate_model_no_judge_is_called() {
    let mut env = Env::new();
    // quality_gates is on by default; only a named model brings the judge.
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  enable_task_enrichment: false\n",
    );
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["greet.py"],
         "description": "Create greet.py with greet(name) returning 'Hello, NAME!' with the name capitalised."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write(
            "greet.py",
            "def greet(name):\n    return f'Hello, {name.capitalize()}!'\n",
        )],
        "Done.",
    ));
    env.serve(Script::new(replies));
    let out = run(&env, &["--yes", "greet people"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    let judged = env
        .requests()
        .iter()
        .filter(|r| {
            r.body["messages"]
                .to_string()
                .contains("Score the work from 1 to 5")
        })
        .count();
    assert_eq!(judged, 0, "the judge was called {judged} times");
    assert!(
        of_type(&ev, "swarm.task.checked")
            .iter()
            .all(|c| c["score"].is_null())
    );
}

#[test]
fn a_split_that_fails_says_why_in_the_event_the_terminal_and_status() {
    let mut env = Env::new();
    let cycle = || {
        decomposition(json!([
            {"id": "task-1", "type": "implement", "dependencies": ["task-2"],
             "description": "Create a.py with a function a() returning 1.", "target_files": ["a.py"]},
            {"id": "task-2", "type": "implement", "dependencies": ["task-1"],
             "description": "Create b.py with a function b() returning 2.", "target_files": ["b.py"]}
        ]))
    };
    env.serve(Script::new((0..6).map(|_| cycle()).collect()));
    let out = run(&env, &["--yes", "make a and b"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let done = finished(&ev);
    assert_eq!(done["status"], "failed", "{done}");
    let error = done["error"].as_str().unwrap_or_default();
    assert!(error.contains("cycle"), "{done}");

    // The terminal's text says it too, not only report.md.
    let text = env
        .atto()
        .arg("swarm")
        .args(["--base-url", &env.base("chat"), "--model", "m"])
        .args(["--permission", "auto-safe", "--backoff-unit-ms", "10"])
        .args(["--yes", "make a and b"])
        .output()
        .unwrap();
    let shown = format!("{}{}", String::from_utf8_lossy(&text.stdout), stderr(&text));
    assert!(shown.contains("failed: 0 passed"), "{shown}");
    assert!(shown.contains("the dependencies form a cycle"), "{shown}");

    let status = env.atto().args(["swarm", "status"]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("the dependencies form a cycle"), "{status}");
}

#[test]
fn swarm_help_says_resume_continues_a_saved_swarm() {
    let env = Env::new();
    let out = env.atto().args(["swarm", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let resume = help
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("-r, --resume"))
        .take(3)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(resume.contains("saved swarm"), "{resume}");
    assert!(!resume.to_lowercase().contains("session"), "{resume}");
}
