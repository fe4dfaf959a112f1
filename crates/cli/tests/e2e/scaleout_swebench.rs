//! `atto swebench run --launcher slurm|ssh`: four instances, each one Slurm job on the real
//! three-node cluster (`scripts/slurm-up.sh`) or one connection to a host of the real sshd
//! (`scripts/sshd-up.sh`), each agent working in a clone on its node and its work coming
//! back through git; every prediction must apply to a fresh checkout and fix the bug.
//! SKIPPED without the engine, except under `CI=true`.

use std::path::Path;
use std::process::Command;

use atto_testkit::{Reply, Script};
use serde_json::json;

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

/// A committed project whose `add` subtracts; returns the commit.
fn buggy_repo(dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "calc"]);
    git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn four_instances_run_as_slurm_jobs_and_their_patches_fix_the_bug() {
    let test = "four_instances_run_as_slurm_jobs_and_their_patches_fix_the_bug";
    if std::env::var("ATTO_SLURM").as_deref() != Ok("1") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "ATTO_SLURM is not set under CI: scripts/test.sh must start Slurm"
        );
        atto_testkit::skipped(
            test,
            "ATTO_SLURM is not set (scripts/slurm-up.sh start, as root)",
        );
        return;
    }
    four_instances(&["--launcher", "slurm"]);
}

#[test]
fn four_instances_run_over_ssh_and_their_patches_fix_the_bug() {
    if !crate::scaleout::engine(
        "ATTO_SSHD",
        "four_instances_run_over_ssh_and_their_patches_fix_the_bug",
        "scripts/sshd-up.sh setup && scripts/sshd-up.sh start",
    ) {
        return;
    }
    let config = crate::scaleout::ssh_config();
    four_instances(&[
        "--launcher",
        "ssh",
        "--host",
        "build-a",
        "--host",
        "build-b",
        "--host",
        "build-c",
        "--ssh-config",
        &config,
    ]);
}

/// Runs four instances with `launcher` (the flags that place them) and checks every
/// prediction fixes the bug and every instance's work came back as its own branch.
fn four_instances(launcher: &[&str]) {
    let mut env = Env::new();
    let repos = env.dir.path().join("repos");
    let mut rows = Vec::new();
    let mut replies = Vec::new();
    for k in 1..=4 {
        let base = buggy_repo(&repos.join(format!("r{k}")));
        let issue = format!("ISSUE-{k}: add(2, 3) returns -1");
        rows.push(
            json!({"instance_id": format!("acme__r{k}-{k}"), "repo": format!("acme/r{k}"),
                   "base_commit": base, "problem_statement": issue, "hints_text": ""})
            .to_string(),
        );
        // Each run's replies: the edit by its issue, the answer by the edit's call id.
        let mut edit = calls(vec![call(
            "edit_file",
            json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        )]);
        edit.when = Some(format!("ISSUE-{k}:"));
        let mut done = Reply::text("Fixed add.");
        done.when = Some(format!("call_{}_0", 2 * k - 1));
        replies.extend([edit, done]);
    }
    env.serve(Script {
        replies,
        ..Script::default()
    });
    let tasks = env.dir.path().join("tasks.jsonl");
    std::fs::write(&tasks, rows.join("\n") + "\n").unwrap();
    let preds = env.dir.path().join("predictions.jsonl");
    let out = env
        .atto()
        .args([
            "swebench",
            "run",
            "--base-url",
            &env.base("chat"),
            "--model",
            "m",
        ])
        .args(["--dataset", tasks.to_str().unwrap()])
        .args(["--repos", repos.to_str().unwrap()])
        .args(["--predictions", preds.to_str().unwrap()])
        .args(["--workers", "4", "--timeout", "120"])
        .args(launcher)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&preds).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    for row in &rows {
        let patch = row["model_patch"].as_str().unwrap();
        assert!(patch.contains("+    return a + b"), "{row}");
        let k = row["instance_id"]
            .as_str()
            .unwrap()
            .rsplit('-')
            .next()
            .unwrap();
        // The patch applies to the instance's repository at its base.
        let fresh = env.dir.path().join(format!("fresh{k}"));
        git(
            env.dir.path(),
            &[
                "clone",
                "-q",
                repos.join(format!("r{k}")).to_str().unwrap(),
                fresh.to_str().unwrap(),
            ],
        );
        std::fs::write(fresh.join("p.diff"), patch).unwrap();
        git(&fresh, &["apply", "p.diff"]);
        assert!(
            std::fs::read_to_string(fresh.join("calc.py"))
                .unwrap()
                .contains("a + b")
        );
    }
    // Each instance's work came back as a branch of its own.
    for k in 1..=4 {
        let refs = git(
            &repos.join(format!("r{k}")),
            &["for-each-ref", "--format=%(refname)", "refs/atto/swarm"],
        );
        assert_eq!(
            refs,
            format!("refs/atto/swarm/swebench/acme__r{k}-{k}/attempt-1")
        );
    }
}
