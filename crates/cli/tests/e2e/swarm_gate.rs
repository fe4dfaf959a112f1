//! The swarm's checks go through the gate: a repository's own programs (a
//! `node_modules/.bin/tsc`, a `.venv/bin/python`) are not started by the quality checks
//! unasked, and a check command that is neither SAFE nor a known test run is put to the
//! person, whose "no" keeps it from running.

use std::os::unix::fs::PermissionsExt as _;

use atto_testkit::Script;
use serde_json::{Value, json};

use crate::common::{Env, of_type, stderr};
use crate::swarm::{converse_with, decomposition, swarm_with, worker, write};

/// A program the repository carries that leaves `marker` behind when it runs.
fn hostile(env: &Env, name: &str, marker: &str) {
    let marker = env.repo().join(marker);
    env.write(
        name,
        &format!("#!/bin/sh\ntouch '{}'\nexit 0\n", marker.display()),
    );
    let path = env.repo().join(name);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_checks_do_not_run_the_repositorys_own_programs_unasked() {
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    env.write("tsconfig.json", "{}\n");
    hostile(&env, "node_modules/.bin/tsc", "ran-tsc");
    hostile(&env, ".venv/bin/python", "ran-venv-python");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["a.ts", "b.py"],
         "description": "Create a.ts exporting the number one as x, and b.py defining y as two, for the rest of the project to use."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![
            write("a.ts", "export const x: number = 1;\n"),
            write("b.py", "y = 2\n"),
        ],
        "Done.",
    ));
    env.serve(Script::new(replies));
    let cmd = swarm_with(&env, "auto-safe", 10, &["--yes", "add x and y"]);
    let mut asked: Vec<Value> = Vec::new();
    let (seen, _code, err) = converse_with(cmd, |e| {
        if e["type"] == "swarm.permission" && e["tier"] == "asked" {
            asked.push(e.clone());
            vec![
                json!({"type": "approval", "task_id": e["task_id"], "id": e["request"]["id"],
                        "decision": "no", "reason": "not here"})
                .to_string(),
            ]
        } else {
            Vec::new()
        }
    });
    assert!(
        !env.repo().join("ran-venv-python").exists(),
        "a check ran .venv/bin/python\n{err}"
    );
    assert!(
        !env.repo().join("ran-tsc").exists(),
        "a check ran node_modules/.bin/tsc unasked\n{err}\n{seen:?}"
    );
    // The project's type check was put to the person, as the command that would run.
    let subjects: Vec<&str> = asked
        .iter()
        .filter_map(|e| e["request"]["subject"].as_str())
        .collect();
    assert!(
        subjects.iter().any(|s| s.contains("tsc --noEmit")),
        "{subjects:?}\n{:?}",
        of_type(&seen, "swarm.permission")
    );
}

#[test]
fn a_workers_protected_write_reaches_the_person_marked_protected() {
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["hello.py"],
         "description": "Create hello.py that prints hello, and add a pre-commit hook that runs it before every commit."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![
            write("hello.py", "print('hello')\n"),
            write(".git/hooks/pre-commit", "#!/bin/sh\npython3 hello.py\n"),
        ],
        "Done.",
    ));
    env.serve(Script::new(replies));
    let cmd = swarm_with(&env, "interactive", 10, &["--yes", "say hello"]);
    let (seen, code, err) = converse_with(cmd, |e| {
        if e["type"] == "swarm.permission" && e["tier"] == "asked" {
            vec![
                json!({"type": "approval", "task_id": e["task_id"], "id": e["request"]["id"],
                        "decision": "no", "reason": "no hooks"})
                .to_string(),
            ]
        } else {
            Vec::new()
        }
    });
    assert_eq!(code, Some(0), "{err}\n{seen:?}");
    let perms = of_type(&seen, "swarm.permission");
    let hook = perms
        .iter()
        .find(|p| {
            p["request"]["tool"] == "write_file"
                && p["request"]["subject"]
                    .as_str()
                    .is_some_and(|s| s.contains("pre-commit"))
        })
        .unwrap_or_else(|| panic!("no question about the hook: {perms:?}"));
    // The worker's gate marked it, and the mailbox passed it on for that mark.
    assert_eq!(hook["request"]["protected"], true, "{hook}");
    assert_eq!(hook["tier"], "asked", "{hook}");
    let plain = perms
        .iter()
        .find(|p| {
            p["request"]["subject"]
                .as_str()
                .is_some_and(|s| s.contains("hello.py"))
        })
        .unwrap_or_else(|| panic!("no question about hello.py: {perms:?}"));
    assert_eq!(plain["request"].get("protected"), None, "{plain}");
    assert_eq!(plain["tier"], "auto_approved", "{plain}");
    assert!(!env.repo().join(".git/hooks/pre-commit").exists());
}

#[test]
fn on_ask_allow_never_approves_a_workers_protected_write() {
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["hello.py"],
         "description": "Create hello.py that prints hello, and add a pre-commit hook that runs it before every commit."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![
            write("hello.py", "print('hello')\n"),
            write(".git/hooks/pre-commit", "#!/bin/sh\npython3 hello.py\n"),
        ],
        "Done.",
    ));
    env.serve(Script::new(replies));
    // No one to ask: every question follows --on-ask, which says yes to the rest.
    let out = swarm_with(
        &env,
        "interactive",
        10,
        &["--yes", "--on-ask", "allow", "say hello"],
    )
    .stdin(std::process::Stdio::null())
    .output()
    .unwrap();
    let err = stderr(&out);
    assert_eq!(env.read("hello.py"), "print('hello')\n", "{err}");
    assert!(
        !env.repo().join(".git/hooks/pre-commit").exists(),
        "--on-ask allow approved a protected write\n{err}"
    );
}
