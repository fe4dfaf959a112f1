use atto_quality::{TaskKind, Verdict};

use super::*;
use crate::task::SwarmStatus;

fn attempt(number: u32, verdict: Option<Verdict>, score: Option<u8>) -> Attempt {
    Attempt {
        number,
        model: "gpt-5-mini".into(),
        verdict,
        score,
        tokens: 600,
        cost_usd: Some(0.01),
        duration_ms: 12_300,
        ..Attempt::default()
    }
}

/// Four tasks: one passed on its second attempt, one failed after it, one skipped because
/// of that, one waiting; an unknown price on the failed one.
fn state() -> SwarmState {
    let mut first_try = attempt(1, Some(Verdict::NeedsRetry), Some(2));
    first_try.failure_mode = Some("quality".into());
    first_try.error = Some("tests fail: test_parse".into());
    first_try.files = vec!["src/a.py".into()];
    let mut second = attempt(2, Some(Verdict::Pass), Some(4));
    second.tokens = 634;
    second.files = vec!["src/a.py".into(), "tests/test_a.py".into()];
    let mut crashed = attempt(1, None, None);
    crashed.failure_mode = Some("error".into());
    crashed.error = Some("worker exited with 101\nthread 'main' panicked".into());
    crashed.cost_usd = None;
    crashed.tokens = 1_000;
    SwarmState {
        id: "sw-0193".into(),
        goal: "Add a parser for the config | with tests".into(),
        workspace: "/w".into(),
        status: SwarmStatus::Finished,
        tasks: vec![
            SwarmTask {
                id: "task-1".into(),
                kind: TaskKind::Implement,
                description: "Write the parser.".into(),
                target_files: vec!["src/a.py".into()],
                status: TaskStatus::Passed,
                attempts: vec![first_try, second],
                ..SwarmTask::default()
            },
            SwarmTask {
                id: "task-2".into(),
                kind: TaskKind::Test,
                description: "Test the parser.".into(),
                dependencies: vec!["task-1".into()],
                target_files: vec!["tests/test_b.py".into()],
                status: TaskStatus::Failed,
                attempts: vec![crashed],
                reason: Some("out of attempts".into()),
                ..SwarmTask::default()
            },
            SwarmTask {
                id: "task-3".into(),
                kind: TaskKind::Document,
                description: "Document it.".into(),
                dependencies: vec!["task-2".into(), "task-1".into()],
                status: TaskStatus::Skipped,
                reason: Some("dependency task-2 failed".into()),
                ..SwarmTask::default()
            },
            SwarmTask {
                id: "task-4".into(),
                kind: TaskKind::Research,
                description: "Survey other parsers.".into(),
                target_files: vec!["a".into(), "b".into(), "c".into(), "d".into()],
                ..SwarmTask::default()
            },
        ],
        coordinator_tokens: 2_000,
        coordinator_cost_usd: Some(0.5),
        created_ms: 1,
        error: None,
    }
}

fn caps() -> Caps {
    Caps {
        max_tokens: Some(100_000),
        max_usd: Some(5.0),
    }
}

#[test]
fn status_lines_show_each_task_indented_by_its_dependencies() {
    let lines = status_lines(&state(), &caps());
    assert_eq!(
        lines,
        [
            "swarm sw-0193 · finished · Add a parser for the config | with tests",
            "✓ task-1 [implement] passed · 2 attempts · score 4 · 1,234 tokens · src/a.py, \
             tests/test_a.py",
            "  ✗ task-2 [test] failed · 1 attempt · 1,000 tokens · tests/test_b.py",
            "    ⊘ task-3 [document] skipped",
            "· task-4 [research] pending · a, b, c +1 more",
            "1 of 4 passed, 1 failed, 1 skipped, 1 unfinished · 4,234 of 100,000 tokens · cost \
             unknown (cap $5.00) · coordinator 2,000 tokens",
        ]
    );
}

#[test]
fn totals_show_known_costs_and_missing_caps() {
    let mut s = state();
    s.tasks[1].attempts[0].cost_usd = Some(0.004);
    let known = status_lines(&s, &caps());
    assert!(
        known
            .last()
            .unwrap()
            .contains("4,234 of 100,000 tokens · $0.52 of $5.00"),
        "{known:?}"
    );
    let uncapped = status_lines(&s, &Caps::default());
    assert!(
        uncapped
            .last()
            .unwrap()
            .contains("4,234 tokens (no cap) · $0.52 (no cap)"),
        "{uncapped:?}"
    );
}

#[test]
fn a_dependency_cycle_does_not_hang_the_status() {
    let mut s = state();
    s.tasks[0].dependencies = vec!["task-3".into(), "nobody".into()];
    let lines = status_lines(&s, &caps());
    assert_eq!(lines.len(), 6);
}

#[test]
fn markdown_has_title_totals_table_troubles_and_attempts() {
    let md = markdown(&state(), &caps());
    assert!(
        md.starts_with("# Swarm: Add a parser for the config | with tests\n"),
        "{md}"
    );
    assert!(md.contains("`sw-0193` · finished · /w"), "{md}");
    assert!(
        md.contains(
            "1 of 4 passed, 1 failed, 1 skipped, 1 unfinished · 4,234 of 100,000 tokens · cost \
             unknown (cap $5.00) · coordinator 2,000 tokens"
        ),
        "{md}"
    );
    assert!(
        md.contains("| id | kind | status | attempts | score | tokens | cost | files |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| task-1 | implement | passed | 2 | 4 | 1,234 | $0.02 | src/a.py, tests/test_a.py |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| task-2 | test | failed | 1 | — | 1,000 | unknown | — |"),
        "{md}"
    );
    assert!(
        md.contains("| task-4 | research | pending | 0 | — | 0 | $0.00 | — |"),
        "{md}"
    );
    assert!(md.contains("## Skipped and failed"), "{md}");
    assert!(
        md.contains(
            "- **task-2** (failed): out of attempts. Last attempt (1): error — worker exited \
             with 101 …"
        ),
        "{md}"
    );
    assert!(
        md.contains("- **task-3** (skipped): dependency task-2 failed\n"),
        "{md}"
    );
    assert!(md.contains("### task-1 · implement · passed"), "{md}");
    assert!(
        md.contains(
            "- attempt 1 · gpt-5-mini · needs_retry · score 2 · quality · tests fail: \
             test_parse · 600 tokens · 12.3 s"
        ),
        "{md}"
    );
    assert!(
        md.contains("- attempt 2 · gpt-5-mini · pass · score 4 · 634 tokens · 12.3 s"),
        "{md}"
    );
    assert!(
        md.contains("- attempt 1 · gpt-5-mini · not judged · error"),
        "{md}"
    );
    assert!(md.contains("After: task-2, task-1"), "{md}");
    assert!(
        md.contains("### task-4 · research · pending\n\nSurvey other parsers.\n\nNo attempts."),
        "{md}"
    );
    assert!(!md.contains("Stopped:"), "{md}");
}

#[test]
fn markdown_says_why_a_swarm_stopped_and_omits_an_empty_trouble_list() {
    let mut s = state();
    s.status = SwarmStatus::Failed;
    s.error = Some("token budget exhausted".into());
    s.tasks.retain(|t| t.status == TaskStatus::Passed);
    let md = markdown(&s, &caps());
    assert!(md.contains("`sw-0193` · failed · /w"), "{md}");
    assert!(md.contains("Stopped: token budget exhausted"), "{md}");
    assert!(!md.contains("## Skipped and failed"), "{md}");
}

#[test]
fn json_carries_the_same_facts_with_unknown_costs_as_null() {
    let v = json(&state(), &caps());
    assert_eq!(v["swarm_id"], "sw-0193");
    assert_eq!(v["status"], "finished");
    assert_eq!(v["goal"], "Add a parser for the config | with tests");
    let totals = &v["totals"];
    assert_eq!(totals["tasks"], 4);
    assert_eq!(totals["passed"], 1);
    assert_eq!(totals["failed"], 1);
    assert_eq!(totals["skipped"], 1);
    assert_eq!(totals["unfinished"], 1);
    assert_eq!(totals["tokens"], 4_234);
    assert_eq!(totals["max_tokens"], 100_000);
    assert_eq!(totals["cost_usd"], Value::Null);
    assert_eq!(totals["max_usd"], 5.0);
    assert_eq!(totals["coordinator_tokens"], 2_000);
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 4);
    let t1 = &tasks[0];
    assert_eq!(t1["id"], "task-1");
    assert_eq!(t1["kind"], "implement");
    assert_eq!(t1["status"], "passed");
    assert_eq!(t1["attempts"], 2);
    assert_eq!(t1["score"], 4);
    assert_eq!(t1["tokens"], 1_234);
    assert!((t1["cost_usd"].as_f64().unwrap() - 0.02).abs() < 1e-9);
    assert_eq!(t1["files"], json!(["src/a.py", "tests/test_a.py"]));
    assert_eq!(t1["reason"], Value::Null);
    let log = t1["attempt_log"].as_array().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0]["verdict"], "needs_retry");
    assert_eq!(log[0]["failure_mode"], "quality");
    assert_eq!(log[1]["verdict"], "pass");
    assert_eq!(log[1]["duration_ms"], 12_300);
    let t2 = &tasks[1];
    assert_eq!(t2["cost_usd"], Value::Null);
    assert_eq!(t2["reason"], "out of attempts");
    assert_eq!(t2["score"], Value::Null);
    assert_eq!(t2["attempt_log"][0]["verdict"], Value::Null);
    assert_eq!(t2["dependencies"], json!(["task-1"]));
}

#[test]
fn numbers_read_well() {
    eprintln!("{}", markdown(&state(), &caps()));
    eprintln!(
        "{}",
        serde_json::to_string_pretty(&json(&state(), &caps())).unwrap()
    );
    let cases: &[(u64, &str)] = &[
        (0, "0"),
        (999, "999"),
        (1_000, "1,000"),
        (1_234_567, "1,234,567"),
    ];
    for (n, want) in cases {
        assert_eq!(thousands(*n), *want);
    }
    assert_eq!(usd(None), "unknown");
    assert_eq!(usd(Some(0.0)), "$0.00");
    assert_eq!(usd(Some(0.0042)), "$0.0042");
    assert_eq!(usd(Some(1.5)), "$1.50");
    assert_eq!(duration(850), "850 ms");
    assert_eq!(duration(12_345), "12.3 s");
    assert_eq!(duration(125_000), "2 min 5 s");
}

#[test]
fn compile_errors_keep_their_file_and_line() {
    let mut s = state();
    let a = &mut s.tasks[0].attempts[0];
    a.compilation_errors = vec![atto_quality::CompileError {
        file: "src/a.py".into(),
        line: Some(3),
        message: "SyntaxError: unexpected indent".into(),
        severity: atto_quality::Severity::Error,
    }];
    let md = markdown(&s, &caps());
    assert!(
        md.contains("src/a.py:3 — SyntaxError: unexpected indent"),
        "{md}"
    );
    let j = json(&s, &caps());
    let e = &j["tasks"][0]["attempt_log"][0]["compilation_errors"][0];
    assert_eq!(e["file"], "src/a.py", "{j}");
    assert_eq!(e["line"], 3, "{j}");
    assert_eq!(e["message"], "SyntaxError: unexpected indent", "{j}");
}
