// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use atto_llm::{ClientOptions, ResolvedProvider, RetryPolicy, Wire};
use atto_testkit::{Reply, Script, ScriptedServer};
use serde_json::json;

use super::*;

const MIN: usize = 80;

/// A model client against a scripted server answering `replies` in order.
async fn scripted(replies: Vec<Reply>) -> (ScriptedServer, Arc<dyn ModelClient>) {
    let server = ScriptedServer::start(Script::new(replies)).await.unwrap();
    let client = atto_llm::connect(
        &ResolvedProvider {
            name: "testkit".into(),
            base_url: server.base_url(),
            wire: Wire::Chat,
            model: "test-model".into(),
            api_key: None,
            api_key_env: None,
        },
        ClientOptions {
            retry: RetryPolicy {
                max_attempts: 1,
                base_delay: Duration::from_millis(1),
                max_delay: Duration::from_millis(5),
            },
            ..ClientOptions::default()
        },
    )
    .unwrap();
    (server, client)
}

fn task(id: &str, kind: TaskKind, description: &str, targets: &[&str]) -> SwarmTask {
    SwarmTask {
        id: id.into(),
        kind,
        description: description.into(),
        target_files: targets.iter().map(|s| (*s).to_owned()).collect(),
        ..SwarmTask::default()
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const USER_PY: &str = "import re


class ValidationError(ValueError):
    pass


class UserCreateRequest:
    def __init__(self, email, password, username):
        self.email = email
        self.password = password
        self.username = username


def create_user(request):
    return request
";

const SEED_DESCRIPTION: &str = "Add input validation to the UserCreateRequest model in \
src/models/user.py. Validate email format using a regex pattern, enforce password minimum \
length of 8 characters, and ensure username contains only alphanumeric characters. Raise \
ValidationError with descriptive messages for each field.";

const SEED_CRITERIA: [&str; 4] = [
    "File 'src/models/user.py' exists and is non-empty",
    "Contains described functions/classes",
    "Imports resolve without errors",
    "No syntax errors in modified files",
];

/// The seed's AFTER task as a model would answer it: fenced, with prose around, and
/// with two paths that leave the workspace.
fn seed_answer() -> Reply {
    let answer = json!({
        "description": SEED_DESCRIPTION,
        "target_files": ["src/models/user.py", "../outside.py", "/etc/passwd"],
        "acceptance_criteria": SEED_CRITERIA,
        "technical_constraints": [
            "Use stdlib re module, not third-party validators",
            "ValidationError must include field name in message"
        ],
        "modification_instructions": "1. Open src/models/user.py\n2. Add validate_email(), \
    validate_password(), validate_username()\n3. Call validators in UserCreateRequest.__post_init__()",
        "test_expectations": [
            "test_valid_email passes",
            "test_invalid_email raises ValidationError"
        ]
    });
    Reply::text(format!(
        "Here is the enriched task:\n```json\n{}\n```\nGood luck.",
        serde_json::to_string_pretty(&answer).unwrap()
    ))
}

/// An answer that makes a thin task rich.
fn good_answer(file: &str) -> Reply {
    Reply::text(
        json!({
            "description": format!("Implement the parser in {file}: read every line, split \
                                    it on commas and return the fields as a list of lists."),
            "target_files": [file],
        })
        .to_string(),
    )
}

#[tokio::test]
async fn the_seeds_thin_task_becomes_the_seeds_enriched_task() {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "src/models/user.py", USER_PY);
    write(ws.path(), "README.md", "# app\n");
    let (server, client) = scripted(vec![seed_answer()]).await;
    let mut tasks = vec![task("task-3", TaskKind::Implement, "Add validation", &[])];

    let report = enrich(&mut tasks, ws.path(), MIN, Some(client.as_ref())).await;

    let t = &tasks[0];
    assert_eq!(t.description, SEED_DESCRIPTION);
    assert_eq!(t.target_files, ["src/models/user.py"]);
    assert_eq!(t.acceptance_criteria, SEED_CRITERIA);
    assert_eq!(
        t.technical_constraints,
        [
            "Use stdlib re module, not third-party validators",
            "ValidationError must include field name in message"
        ]
    );
    assert_eq!(
        t.modification_instructions.as_deref(),
        Some(
            "1. Open src/models/user.py\n2. Add validate_email(), validate_password(), \
             validate_username()\n3. Call validators in UserCreateRequest.__post_init__()"
        )
    );
    assert_eq!(
        t.test_expectations,
        [
            "test_valid_email passes",
            "test_invalid_email raises ValidationError"
        ]
    );
    // The file the model named gets its structures.
    let context = t.code_context.as_deref().unwrap();
    assert!(
        context.starts_with("src/models/user.py: class UserCreateRequest, method"),
        "{context}"
    );
    assert_eq!(
        t.enrichment.as_deref(),
        Some(&*format!(
            "description 14→{} chars, +1 target file, +4 criteria, +2 constraints, \
             instructions, +2 test expectations, code context",
            SEED_DESCRIPTION.chars().count()
        ))
    );
    assert!(thin_reasons(t, MIN).is_empty());

    assert_eq!(report.thin, ["task-3"]);
    assert_eq!(report.enriched, ["task-3"]);
    assert!(report.still_thin.is_empty());
    assert!(!report.redecompose);
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    assert_eq!(
        (report.usage.input_tokens, report.usage.output_tokens),
        (100, 20)
    );
    // The test model has no price.
    assert_eq!(report.cost_usd, None);

    // One bounded, tool-less, low-temperature request, showing the task and the files.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    let temperature = body["temperature"].as_f64().unwrap();
    assert!((temperature - 0.2).abs() < 1e-6, "{body}");
    assert!(body.get("tools").is_none_or(|t| t == &json!([])), "{body}");
    let sent = body.to_string();
    assert!(sent.contains("1200"), "{sent}");
    for part in [
        "## Task task-3 (implement)",
        "Add validation",
        "no target or relevant files",
        "src/models/",
        "README.md",
    ] {
        assert!(sent.contains(part), "{part} missing: {sent}");
    }
}

#[tokio::test]
async fn a_rich_task_is_not_sent_to_the_model() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "src/parse.py",
        "def parse(text):\n    return text\n",
    );
    let (server, client) = scripted(vec![good_answer("x.py")]).await;
    let description = "Implement parse() in src/parse.py so it splits the text on commas \
                       and returns the list of trimmed fields.";
    let mut tasks = vec![task(
        "task-1",
        TaskKind::Implement,
        description,
        &["src/parse.py"],
    )];

    let report = enrich(&mut tasks, ws.path(), MIN, Some(client.as_ref())).await;

    assert!(server.requests().is_empty());
    assert!(report.thin.is_empty());
    assert!(!report.redecompose);
    assert_eq!(report.usage, Usage::default());
    assert_eq!(report.cost_usd, Some(0.0));
    // Steps 2 and 3 still apply to it.
    let t = &tasks[0];
    assert_eq!(t.description, description);
    assert_eq!(
        t.code_context.as_deref(),
        Some("src/parse.py: function parse")
    );
    assert_eq!(
        t.acceptance_criteria[0],
        "File 'src/parse.py' exists and is non-empty"
    );
    assert_eq!(t.enrichment.as_deref(), Some("+4 criteria, code context"));
    assert_eq!(report.enriched, ["task-1"]);
}

#[tokio::test]
async fn the_code_context_lists_the_structures_of_real_files() {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "src/models/user.py", USER_PY);
    write(ws.path(), "docs/notes.txt", "one\ntwo\nthree\n");
    write(ws.path(), "src/empty.py", "import os\n");
    let many: String = (0..45)
        .map(|i| format!("def f{i:02}():\n    pass\n"))
        .collect();
    write(ws.path(), "src/many.py", &many);
    let mut t = task(
        "t",
        TaskKind::Refactor,
        "Refactor the user model",
        &["src/models/user.py", "src/new_file.py", "./src/empty.py"],
    );
    t.relevant_files = vec![
        "docs/notes.txt".into(),
        "src/many.py".into(),
        "src/models/user.py".into(),
    ];
    let mut tasks = vec![t];

    enrich(&mut tasks, ws.path(), MIN, None).await;

    let context = tasks[0].code_context.as_deref().unwrap();
    let lines: Vec<&str> = context.lines().collect();
    assert_eq!(
        lines[0],
        "src/models/user.py: class UserCreateRequest, method UserCreateRequest.__init__, class \
         ValidationError, function create_user"
    );
    // A file that does not exist yet is left out; one listed twice appears once; paths
    // are shown clean.
    assert_eq!(lines[1], "src/empty.py: no classes or functions");
    assert_eq!(lines[2], "docs/notes.txt: 3 lines");
    assert!(lines[3].starts_with("src/many.py: function f00, function f01,"));
    assert!(
        lines[3].ends_with("function f39, … (+5 more)"),
        "{}",
        lines[3]
    );
    assert_eq!(lines.len(), 4, "{context}");
}

#[tokio::test]
async fn the_code_context_stays_within_its_bound() {
    let ws = tempfile::tempdir().unwrap();
    let long: String = (0..40)
        .map(|i| format!("def {}{i}():\n    pass\n", "x".repeat(150)))
        .collect();
    let mut files = Vec::new();
    for i in 0..5 {
        write(ws.path(), &format!("m{i}.py"), &long);
        files.push(format!("m{i}.py"));
    }
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let mut tasks = vec![task("t", TaskKind::Fix, "Fix the modules", &refs)];

    enrich(&mut tasks, ws.path(), MIN, None).await;

    let context = tasks[0].code_context.as_deref().unwrap();
    assert!(context.len() <= MAX_CONTEXT, "{}", context.len());
    assert!(context.starts_with("m0.py: function x"));
    assert!(context.ends_with('…'));
}

#[tokio::test]
async fn paths_leaving_the_workspace_are_ignored() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    write(root.path(), "outside.py", "class Secret:\n    pass\n");
    let outside = root.path().join("outside.py");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, ws.join("link.py")).unwrap();
    let mut t = task("t", TaskKind::Implement, "Implement the secret", &[]);
    t.relevant_files = vec![
        "../outside.py".into(),
        outside.display().to_string(),
        "link.py".into(),
        "sub/../../outside.py".into(),
    ];
    let mut tasks = vec![t];

    enrich(&mut tasks, &ws, MIN, None).await;

    assert_eq!(tasks[0].code_context, None);
    assert_eq!(clean_rel("../outside.py"), None);
    assert_eq!(clean_rel("/etc/passwd"), None);
    assert_eq!(clean_rel("a/../b"), None);
    assert_eq!(clean_rel("./src//a.py").as_deref(), Some("src/a.py"));
}

#[tokio::test]
async fn an_unusable_answer_leaves_the_task_thin() {
    let ws = tempfile::tempdir().unwrap();
    let (server, client) = scripted(vec![
        Reply::text("You should add validation to the model."),
        Reply::text("```json\n[\"not\", \"an object\"]\n```"),
    ])
    .await;
    let mut tasks = vec![
        task("a", TaskKind::Implement, "Add validation", &[]),
        task("b", TaskKind::Fix, "Fix it", &[]),
    ];
    let before = tasks.clone();

    let report = enrich(&mut tasks, ws.path(), MIN, Some(client.as_ref())).await;

    assert_eq!(server.requests().len(), 2);
    for (t, old) in tasks.iter().zip(&before) {
        assert_eq!(t.description, old.description);
        assert!(t.target_files.is_empty());
        assert!(t.technical_constraints.is_empty());
        assert_eq!(t.modification_instructions, None);
        assert!(t.test_expectations.is_empty());
    }
    assert_eq!(report.still_thin, ["a", "b"]);
    assert!(report.redecompose);
    assert_eq!(report.notes.len(), 2);
    assert!(
        report.notes[0].starts_with("a: the model's answer was not a JSON object: You should"),
        "{:?}",
        report.notes
    );
    // The usage of answers that were not usable still counts.
    assert_eq!(report.usage.input_tokens, 200);
}

#[tokio::test]
async fn a_failed_request_leaves_the_task_thin_with_a_note() {
    let ws = tempfile::tempdir().unwrap();
    // No replies: the server answers with an error.
    let (_server, client) = scripted(Vec::new()).await;
    let mut tasks = vec![task("a", TaskKind::Implement, "Add validation", &[])];

    let report = enrich(&mut tasks, ws.path(), MIN, Some(client.as_ref())).await;

    assert_eq!(report.still_thin, ["a"]);
    assert_eq!(report.notes.len(), 1);
    assert!(
        report.notes[0].starts_with("a: the enrichment request failed"),
        "{:?}",
        report.notes
    );
}

#[tokio::test]
async fn most_thin_tasks_staying_thin_asks_for_a_new_decomposition() {
    let ws = tempfile::tempdir().unwrap();
    let rich = || {
        task(
            "rich",
            TaskKind::Implement,
            "Implement the CSV reader in src/csv.py: read every line, split it on commas and \
             return the fields.",
            &["src/csv.py"],
        )
    };
    let thin = |id: &str| task(id, TaskKind::Implement, "Add parsing", &[]);
    let junk = || Reply::text("no idea");

    // No model: both thin tasks stay thin.
    let mut tasks = vec![thin("a"), thin("b"), rich()];
    let report = enrich(&mut tasks, ws.path(), MIN, None).await;
    assert_eq!(report.thin, ["a", "b"]);
    assert_eq!(report.still_thin, ["a", "b"]);
    assert!(report.redecompose);

    // 2 of 3 thin tasks stay thin.
    let (_s, client) = scripted(vec![good_answer("a.py"), junk(), junk()]).await;
    let mut tasks = vec![thin("a"), thin("b"), thin("c")];
    let report = enrich(&mut tasks, ws.path(), MIN, Some(client.as_ref())).await;
    assert_eq!(report.still_thin, ["b", "c"]);
    assert_eq!(tasks[0].target_files, ["a.py"]);
    assert!(report.redecompose);

    // 1 of 3 does not.
    let (_s, client) = scripted(vec![good_answer("a.py"), junk(), good_answer("c.py")]).await;
    let mut tasks = vec![thin("a"), thin("b"), thin("c")];
    let report = enrich(&mut tasks, ws.path(), MIN, Some(client.as_ref())).await;
    assert_eq!(report.still_thin, ["b"]);
    // b gained criteria but is still thin: reported once, as still thin.
    assert_eq!(report.enriched, ["a", "c"]);
    assert!(!report.redecompose);

    // Exactly half is not more than half.
    let (_s, client) = scripted(vec![good_answer("a.py"), junk()]).await;
    let mut tasks = vec![thin("a"), thin("b")];
    let report = enrich(&mut tasks, ws.path(), MIN, Some(client.as_ref())).await;
    assert_eq!(report.still_thin, ["b"]);
    assert!(!report.redecompose);

    // Nothing thin, or nothing at all.
    let mut tasks = vec![rich()];
    assert!(!enrich(&mut tasks, ws.path(), MIN, None).await.redecompose);
    assert!(!enrich(&mut [], ws.path(), MIN, None).await.redecompose);
}

#[test]
fn thin_reasons_name_what_is_missing() {
    let long = "Implement the CSV reader: read every line, split it on commas and return the \
                fields as lists";
    let no_verb = "The CSV reader module, with each line's fields as arrays of text, for the \
                   import page";
    let short = "description is 14 chars, under 80";
    let no_files = "no target or relevant files";
    /// Description, target files, relevant files, reasons.
    type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a [&'a str]);
    let cases: &[Case<'_>] = &[
        (long, &["csv.py"], &[], &[]),
        (long, &[], &["csv.py"], &[]),
        (long, &[], &[], &[no_files]),
        ("Add validation", &[], &[], &[short, no_files]),
        ("Add validation", &[], &["x.py"], &[short]),
        (no_verb, &["csv.py"], &[], &["no actionable verb"]),
        (
            "REMOVING the old reader",
            &["csv.py"],
            &[],
            &["description is 23 chars, under 80"],
        ),
        (
            "Address book",
            &["a.py"],
            &[],
            &["description is 12 chars, under 80", "no actionable verb"],
        ),
    ];
    for (description, targets, relevant, expected) in cases {
        let mut t = task("t", TaskKind::Implement, description, targets);
        t.relevant_files = relevant.iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(thin_reasons(&t, MIN), *expected, "{description}");
    }
}

#[tokio::test]
async fn criteria_follow_the_task_kind() {
    let ws = tempfile::tempdir().unwrap();
    let file = "File 'a.py' exists and is non-empty";
    let cases: &[(TaskKind, &[&str])] = &[
        (
            TaskKind::Implement,
            &[
                file,
                "Contains described functions/classes",
                "Imports resolve without errors",
                "No syntax errors in modified files",
            ],
        ),
        (
            TaskKind::Test,
            &[
                file,
                "Tests are run and their output shown",
                "New tests pass",
            ],
        ),
        (
            TaskKind::Refactor,
            &[
                file,
                "Behaviour unchanged: existing tests still pass",
                "No syntax errors in modified files",
            ],
        ),
        (
            TaskKind::Document,
            &[file, "Documentation describes the change"],
        ),
        (
            TaskKind::Fix,
            &[
                file,
                "The defect no longer occurs",
                "No syntax errors in modified files",
            ],
        ),
        (TaskKind::Research, &["The result answers the task"]),
        (TaskKind::Review, &["The result answers the task"]),
        (TaskKind::Other, &["The result answers the task"]),
    ];
    for (kind, expected) in cases {
        let mut tasks = vec![task("t", *kind, "Work on a.py", &["a.py"])];
        enrich(&mut tasks, ws.path(), MIN, None).await;
        assert_eq!(tasks[0].acceptance_criteria, *expected, "{kind:?}");
    }
    // Criteria the decomposer wrote are kept as they are.
    let mut t = task("t", TaskKind::Implement, "Work on a.py", &["a.py"]);
    t.acceptance_criteria = vec!["It parses".into()];
    let mut tasks = vec![t];
    enrich(&mut tasks, ws.path(), MIN, None).await;
    assert_eq!(tasks[0].acceptance_criteria, ["It parses"]);
}

#[tokio::test]
async fn a_task_still_thin_is_not_also_reported_enriched() {
    let ws = tempfile::tempdir().unwrap();
    // Without a model only the rule-based criteria are added: changed, but still thin.
    let mut tasks = vec![task("a", TaskKind::Implement, "Add validation", &[])];
    let report = enrich(&mut tasks, ws.path(), MIN, None).await;
    assert_eq!(report.still_thin, ["a"]);
    assert!(report.enriched.is_empty(), "{:?}", report.enriched);
}
