//! `atto swebench run`: a real repository with a real bug, the scripted model fixing it in
//! a worktree, and the predictions row checked by applying it to a fresh checkout.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use atto_testkit::{Fault, Reply, Script};
use serde_json::{Value, json};

use crate::common::{Env, call, calls, stderr};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A committed Python project whose test fails (`add` subtracts); returns the commit.
fn buggy_repo(dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    if !dir.join(".git").exists() {
        git(dir, &["init", "-q"]);
    }
    let files = [
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        (
            "test_calc.py",
            "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('ok')\n",
        ),
        (".gitignore", "build/\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "calc"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// The model's fix: edit the bug, add a test file, leave an ignored build file behind.
fn fix() -> Vec<Reply> {
    vec![
        calls(vec![
            call(
                "edit_file",
                json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
            ),
            call(
                "write_file",
                json!({"path": "test_more.py", "content": "from calc import add\nassert add(1, 1) == 2\n"}),
            ),
            call(
                "write_file",
                json!({"path": "build/out.txt", "content": "ignored\n"}),
            ),
        ]),
        Reply::text("Fixed add."),
    ]
}

fn swebench(env: &Env, args: &[&str]) -> Output {
    env.atto()
        .args(["swebench", "run", "--base-url", &env.base("chat")])
        .args(["--model", "m"])
        .args(args)
        .output()
        .unwrap()
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Whether `python3 test_calc.py` passes in `dir`.
fn test_passes(dir: &Path) -> bool {
    Command::new("python3")
        .arg("test_calc.py")
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

/// A fresh clone of `repo` at `base` with `patch` applied by `git apply`.
fn apply(env: &Env, repo: &Path, base: &str, patch: &str) -> PathBuf {
    let fresh = env.dir.path().join(format!("fresh-{}", fastrand::u32(..)));
    git(env.dir.path(), &["clone", "-q", path(repo), path(&fresh)]);
    git(&fresh, &["checkout", "-q", base]);
    assert!(!test_passes(&fresh), "the bug is there before the patch");
    let file = env.dir.path().join("patch.diff");
    std::fs::write(&file, patch).unwrap();
    git(&fresh, &["apply", "--check", path(&file)]);
    git(&fresh, &["apply", path(&file)]);
    fresh
}

/// A dataset of `rows` (JSON values or raw lines) in the temp dir.
fn dataset(env: &Env, lines: &[String]) -> PathBuf {
    let file = env.dir.path().join("tasks.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

fn row(id: &str, repo: &str, base: &str) -> String {
    row_with(id, repo, base, "add(2, 3) returns -1 instead of 5")
}

fn row_with(id: &str, repo: &str, base: &str, issue: &str) -> String {
    json!({
        "instance_id": id,
        "repo": repo,
        "base_commit": base,
        "problem_statement": issue,
        "hints_text": "",
    })
    .to_string()
}

#[test]
fn single_instance_patch_applies_and_fixes_the_bug_and_a_rerun_replaces_the_row() {
    let mut env = Env::new();
    let mut replies = fix();
    replies.extend(fix());
    env.serve(Script {
        replies,
        ..Script::default()
    });
    let repo = env.repo();
    let base = buggy_repo(&repo);
    // The user's checkout is dirty: it is only read, and stays as it was.
    std::fs::write(
        repo.join("calc.py"),
        "# mine\ndef add(a, b):\n    return a - b\n",
    )
    .unwrap();
    let issue = env.dir.path().join("issue.md");
    std::fs::write(&issue, "add(2, 3) returns -1 instead of 5").unwrap();
    let preds = env.dir.path().join("out/preds.jsonl");
    let args = |name: &'static str| {
        [
            "--instance-id",
            "acme__calc-1",
            "--issue-file",
            path(&issue),
            "--repo",
            path(&repo),
            "--predictions",
            path(&preds),
            "--model-name",
            name,
        ]
        .map(str::to_owned)
    };
    let out = swebench(&env, &args("first").each_ref().map(String::as_str));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = jsonl(&preds);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["instance_id"], "acme__calc-1");
    assert_eq!(rows[0]["model_name_or_path"], "first");
    let patch = rows[0]["model_patch"].as_str().unwrap();
    assert!(patch.contains("test_more.py"), "new files are in: {patch}");
    assert!(
        !patch.contains("build/out.txt"),
        "ignored files are not: {patch}"
    );
    assert!(
        !patch.contains("# mine"),
        "the user's edits are not: {patch}"
    );
    let fresh = apply(&env, &repo, &base, patch);
    assert!(test_passes(&fresh));

    // The prompt carried the issue and the rules.
    let first = env.requests()[0].body.to_string();
    assert!(
        first.contains("add(2, 3) returns -1 instead of 5"),
        "{first}"
    );
    assert!(
        first.contains("Do not modify or delete existing tests"),
        "{first}"
    );

    // The sidecar: what the run cost, an unknown price staying unknown.
    let meta = jsonl(&env.dir.path().join("out/preds.meta.jsonl"));
    assert_eq!(meta.len(), 1);
    assert_eq!(meta[0]["status"], "completed");
    assert_eq!(meta[0]["exit_code"], 0);
    assert_eq!(meta[0]["base_commit"], base.as_str());
    assert_eq!(meta[0]["rounds"], 2);
    assert_eq!(meta[0]["tokens"], 240);
    assert!(meta[0]["cost_usd"].is_null(), "{}", meta[0]);
    assert!(meta[0]["error"].is_null(), "{}", meta[0]);
    assert_eq!(meta[0]["files_changed"], json!(["calc.py", "test_more.py"]));

    // The user's checkout is as it was, and the worktree is gone.
    assert!(
        std::fs::read_to_string(repo.join("calc.py"))
            .unwrap()
            .starts_with("# mine")
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "M calc.py");
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);

    // The same instance again: its row is replaced, not added.
    let out = swebench(&env, &args("second").each_ref().map(String::as_str));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = jsonl(&preds);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["model_name_or_path"], "second");
    assert_eq!(jsonl(&env.dir.path().join("out/preds.meta.jsonl")).len(), 1);
}

#[test]
fn a_dataset_with_a_bad_line_and_a_missing_repo_still_runs_the_good_instance() {
    let mut env = Env::new();
    env.serve(Script {
        replies: fix(),
        ..Script::default()
    });
    let repos = env.dir.path().join("repos");
    let base = buggy_repo(&repos.join("acme__calc"));
    let tasks = dataset(
        &env,
        &[
            row("acme__calc-1", "acme/calc", &base),
            "{not json".to_owned(),
            row("acme__gone-2", "acme/gone", &base),
        ],
    );
    let preds = env.dir.path().join("predictions.jsonl");
    let out = swebench(
        &env,
        &[
            "--dataset",
            path(&tasks),
            "--repos",
            path(&repos),
            "--predictions",
            path(&preds),
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("tasks.jsonl line 2: not a JSON object"),
        "{err}"
    );
    assert!(
        err.contains("acme__gone-2: no checkout of acme/gone: looked for"),
        "{err}"
    );
    let rows = jsonl(&preds);
    assert_eq!(rows.len(), 1, "only the instance that ran has a row");
    assert_eq!(rows[0]["instance_id"], "acme__calc-1");
    let fresh = apply(
        &env,
        &repos.join("acme__calc"),
        &base,
        rows[0]["model_patch"].as_str().unwrap(),
    );
    assert!(test_passes(&fresh));
    let meta = jsonl(&env.dir.path().join("predictions.meta.jsonl"));
    let gone = meta
        .iter()
        .find(|m| m["instance_id"] == "acme__gone-2")
        .unwrap();
    assert_eq!(gone["status"], "error");
    assert!(
        gone["error"].as_str().unwrap().contains("no checkout"),
        "{gone}"
    );
    // The summary table names every instance.
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("acme__calc-1  completed"), "{table}");
    assert!(table.contains("acme__gone-2  error"), "{table}");
    assert!(table.contains("(line 2)"), "{table}");
}

#[test]
fn an_instance_id_not_in_the_dataset_is_refused() {
    let env = Env::new();
    let tasks = dataset(&env, &[row("acme__calc-1", "acme/calc", "abc")]);
    let out = env
        .atto()
        .args(["swebench", "run", "--dataset", path(&tasks)])
        .args(["--instance-id", "acme__calc-9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("instance acme__calc-9 is not in"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_failed_agent_run_gets_an_empty_row_and_a_sidecar_entry_saying_why() {
    let mut env = Env::new();
    let fault = Reply {
        fault: Some(Fault::Status {
            status: 500,
            body: None,
            retry_after: None,
        }),
        ..Reply::default()
    };
    env.serve(Script {
        replies: vec![fault; 8],
        ..Script::default()
    });
    let repos = env.dir.path().join("repos");
    let base = buggy_repo(&repos.join("calc"));
    let tasks = dataset(&env, &[row("acme__calc-1", "acme/calc", &base)]);
    let preds = env.dir.path().join("predictions.jsonl");
    let out = swebench(
        &env,
        &[
            "--dataset",
            path(&tasks),
            "--repos",
            path(&repos),
            "--predictions",
            path(&preds),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = jsonl(&preds);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["model_patch"], "");
    let meta = jsonl(&env.dir.path().join("predictions.meta.jsonl"));
    assert_eq!(meta[0]["status"], "failed");
    assert_eq!(meta[0]["exit_code"], 75);
    let error = meta[0]["error"].as_str().unwrap();
    assert!(error.contains("500"), "{error}");
}

#[test]
fn instances_already_predicted_are_skipped_unless_forced() {
    let mut env = Env::new();
    env.serve(Script {
        replies: fix(),
        ..Script::default()
    });
    let repos = env.dir.path().join("repos");
    let base = buggy_repo(&repos.join("acme__calc"));
    let tasks = dataset(&env, &[row("acme__calc-1", "acme/calc", &base)]);
    let preds = env.dir.path().join("predictions.jsonl");
    let earlier =
        json!({"instance_id": "acme__calc-1", "model_name_or_path": "old", "model_patch": ""});
    std::fs::write(&preds, format!("{earlier}\n")).unwrap();
    let args = [
        "--dataset",
        path(&tasks),
        "--repos",
        path(&repos),
        "--predictions",
        path(&preds),
    ];
    let out = swebench(&env, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("acme__calc-1: already in"),
        "{}",
        stderr(&out)
    );
    assert!(
        env.requests().is_empty(),
        "no model call for a skipped instance"
    );
    assert_eq!(jsonl(&preds), vec![earlier]);

    let mut forced = args.to_vec();
    forced.push("--force");
    let out = swebench(&env, &forced);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = jsonl(&preds);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["model_name_or_path"], "atto/m");
    assert!(rows[0]["model_patch"].as_str().unwrap().contains("a + b"));
}

#[test]
fn workers_run_instances_side_by_side_each_in_its_own_worktree() {
    let mut env = Env::new();
    // Requests of the two runs interleave: each reply goes to its own run, the first by
    // the issue text, the second by the call id of the first (`call_<reply>_0`).
    let when = |mut reply: Reply, needle: &str| {
        reply.when = Some(needle.to_owned());
        reply
    };
    let [edit, done] = <[Reply; 2]>::try_from(fix()).unwrap();
    env.serve(Script {
        replies: vec![
            when(edit.clone(), "ISSUE-ALPHA"),
            when(done.clone(), "call_1_0"),
            when(edit, "ISSUE-BETA"),
            when(done, "call_3_0"),
        ],
        ..Script::default()
    });
    let repos = env.dir.path().join("repos");
    let alpha = buggy_repo(&repos.join("acme__alpha"));
    let beta = buggy_repo(&repos.join("beta"));
    let tasks = dataset(
        &env,
        &[
            row_with("acme__alpha-1", "acme/alpha", &alpha, "ISSUE-ALPHA"),
            row_with("acme__beta-2", "acme/beta", &beta, "ISSUE-BETA"),
        ],
    );
    let preds = env.dir.path().join("predictions.jsonl");
    let out = swebench(
        &env,
        &[
            "--dataset",
            path(&tasks),
            "--repos",
            path(&repos),
            "--predictions",
            path(&preds),
            "--workers",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = jsonl(&preds);
    assert_eq!(rows.len(), 2);
    for (repo, base) in [("acme__alpha", &alpha), ("beta", &beta)] {
        let id = if repo == "beta" {
            "acme__beta-2"
        } else {
            "acme__alpha-1"
        };
        let row = rows.iter().find(|r| r["instance_id"] == id).unwrap();
        let fresh = apply(
            &env,
            &repos.join(repo),
            base,
            row["model_patch"].as_str().unwrap(),
        );
        assert!(test_passes(&fresh), "{id}");
    }
    assert_eq!(env.requests().len(), 4);
}
