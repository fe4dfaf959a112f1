use atto_quality::{Finding, Stage, TaskKind, Verdict};

use super::*;
use crate::task::{Attempt, SwarmStatus, SwarmTask, TaskStatus};

/// Unix milliseconds of the first dispatch in [`state`].
const T0: i64 = 1_750_000_000_000;

fn timed(number: u32, worker: u32, from_s: i64, to_s: i64) -> Attempt {
    Attempt {
        number,
        model: "gpt-5-mini".into(),
        verdict: Some(Verdict::Pass),
        score: Some(4),
        tokens: 500,
        cost_usd: Some(0.01),
        duration_ms: u64::try_from((to_s - from_s) * 1000).unwrap(),
        started_ms: Some(T0 + from_s * 1000),
        ended_ms: Some(T0 + to_s * 1000),
        worker: Some(worker),
        ..Attempt::default()
    }
}

fn task(id: &str, deps: &[&str], status: TaskStatus, attempts: Vec<Attempt>) -> SwarmTask {
    SwarmTask {
        id: id.into(),
        kind: TaskKind::Implement,
        description: format!("Do {id}."),
        dependencies: deps.iter().map(|d| (*d).to_owned()).collect(),
        status,
        attempts,
        ..SwarmTask::default()
    }
}

/// Three tasks on two workers: task-1 retried after a backoff, task-3 waiting on both.
fn state() -> SwarmState {
    let mut rejected = timed(1, 1, 0, 4);
    rejected.verdict = Some(Verdict::NeedsRetry);
    rejected.score = Some(2);
    rejected.failure_mode = Some("quality".into());
    rejected.error = Some("tests fail: test_parse".into());
    rejected.findings = vec![Finding {
        stage: Stage::Verification,
        code: Some("V11".into()),
        message: "tests fail: test_parse".into(),
        file: Some("tests/test_a.py".into()),
        line: Some(3),
    }];
    rejected.backoff_ms = Some(2_000);
    SwarmState {
        id: "sw-1".into(),
        goal: "Parse the config".into(),
        workspace: "/w".into(),
        status: SwarmStatus::Finished,
        tasks: vec![
            task(
                "task-1",
                &[],
                TaskStatus::Passed,
                vec![rejected, timed(2, 1, 6, 9)],
            ),
            task("task-2", &[], TaskStatus::Passed, vec![timed(1, 2, 0, 3)]),
            task(
                "task-3",
                &["task-1", "task-2"],
                TaskStatus::Passed,
                vec![timed(1, 2, 9, 12)],
            ),
        ],
        coordinator_tokens: 1_000,
        coordinator_cost_usd: Some(0.02),
        created_ms: T0 - 5_000,
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
fn hostile_text_from_the_model_is_escaped_everywhere() {
    let mut s = state();
    s.goal = "<script>alert('goal')</script>".into();
    s.tasks[0].description = "<script>alert(1)</script> & \"quoted\"".into();
    s.tasks[0].attempts[0].error = Some("</svg><img src=x onerror=alert(2)>".into());
    s.tasks[0].attempts[0].findings[0].message = "<iframe src='//evil'>".into();
    s.tasks[1].attempts[0].model = "\"><script>m</script>".into();
    s.error = Some("<b>stopped</b>".into());
    let page = page(&s, &caps());
    for raw in ["<script", "<img", "<iframe", "<b>", "onerror=alert(2)>"] {
        assert!(!page.contains(raw), "{raw} unescaped in the page");
    }
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;"),
        "the description is not shown escaped"
    );
    assert!(page.contains("&lt;/svg&gt;&lt;img src=x onerror=alert(2)&gt;"));
    assert!(page.contains("&lt;iframe src=&#39;//evil&#39;&gt;"));
    assert!(page.contains("&lt;b&gt;stopped&lt;/b&gt;"));
}

#[test]
fn the_page_loads_nothing_from_anywhere() {
    let page = page(&state(), &caps());
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    for outside in ["src=", "href=", "<link", "@import", "url(", "<script"] {
        assert!(!page.contains(outside), "{outside} in the page");
    }
    assert!(page.contains("<style>"), "the CSS is not inline");
    assert!(page.contains("<svg"), "no inline SVG");
}

#[test]
fn the_timeline_has_a_lane_per_worker_with_retries_backoff_and_dependency_waits() {
    let page = page(&state(), &caps());
    let timeline = section(&page, "timeline");
    assert!(timeline.contains(">Timeline</h2>"), "{timeline}");
    assert!(timeline.contains(">worker 1</text>"), "{timeline}");
    assert!(timeline.contains(">worker 2</text>"), "{timeline}");
    assert!(!timeline.contains(">worker 3</text>"), "{timeline}");
    // Five attempts: two of task-1 (the first rejected), one each of the others, in their
    // worker's lane and again on their task's row.
    assert_eq!(
        timeline.matches("class=\"attempt ").count(),
        2 * 4,
        "{timeline}"
    );
    assert_eq!(timeline.matches("class=\"attempt retry\"").count(), 2);
    assert!(timeline.contains("task-1 attempt 1 · worker 1 · 0.0 s – 4.0 s"));
    // The backoff after the rejected attempt: 4 s to 6 s.
    assert_eq!(
        timeline.matches("class=\"backoff\"").count(),
        1,
        "{timeline}"
    );
    assert!(timeline.contains("task-1 backoff · 2.0 s"), "{timeline}");
    // task-3 waited on its dependencies until task-1 passed at 9 s.
    assert_eq!(
        timeline.matches("class=\"depwait\"").count(),
        1,
        "{timeline}"
    );
    assert!(
        timeline.contains("task-3 waits on task-1, task-2 · 0.0 s – 9.0 s"),
        "{timeline}"
    );
}

#[test]
fn the_task_graph_draws_each_dependency_once_left_to_right() {
    let mut s = state();
    s.tasks[2].dependencies.push("task-gone".into());
    let page = page(&s, &caps());
    let graph = section(&page, "graph");
    assert_eq!(graph.matches("class=\"edge\"").count(), 2, "{graph}");
    assert!(graph.contains("<title>task-1 → task-3</title>"), "{graph}");
    assert!(graph.contains("<title>task-2 → task-3</title>"), "{graph}");
    assert!(!graph.contains("task-gone →"), "{graph}");
    let x = |id: &str| -> u32 {
        let at = graph.find(&format!("data-task=\"{id}\"")).unwrap();
        let rest = &graph[at..];
        let x = rest.find(" x=\"").unwrap() + 4;
        rest[x..].split('"').next().unwrap().parse().unwrap()
    };
    assert_eq!(x("task-1"), x("task-2"));
    assert!(x("task-3") > x("task-1"));
}

#[test]
fn scores_checks_and_budget_against_the_caps_are_shown() {
    let page = page(&state(), &caps());
    let tasks = section(&page, "tasks");
    assert!(tasks.contains("V11"), "{tasks}");
    assert!(tasks.contains("tests/test_a.py:3"), "{tasks}");
    assert!(tasks.contains("tests fail: test_parse"), "{tasks}");
    assert!(tasks.contains("<td>4</td>"), "the score: {tasks}");
    let budget = section(&page, "budget");
    assert!(budget.contains("3,000 of 100,000 tokens"), "{budget}");
    assert!(budget.contains("$0.06 of $5.00"), "{budget}");
    let no_caps = page_of(&state(), &Caps::default());
    assert!(section(&no_caps, "budget").contains("3,000 tokens (no cap)"));
}

/// A swarm saved before attempts kept their times: the attempts are shown with unknown
/// times, the timeline says why it is empty, nothing breaks.
#[test]
fn an_older_swarm_without_times_renders_them_as_unknown() {
    let saved = r#"{"id":"old","goal":"g","workspace":"/w","status":"finished","created_ms":1,
        "tasks":[{"id":"task-1","kind":"implement","description":"d","status":"failed",
        "attempts":[{"number":1,"model":"m","tokens":10,"duration_ms":5,"failure_mode":"error"}]},
        {"id":"task-2","kind":"document","description":"e","dependencies":["task-1"],
        "status":"skipped"}]}"#;
    let old: SwarmState = serde_json::from_str(saved).unwrap();
    assert_eq!(old.tasks[0].attempts[0].started_ms, None);
    let page = page(&old, &Caps::default());
    let timeline = section(&page, "timeline");
    assert!(timeline.contains("not recorded"), "{timeline}");
    assert!(!timeline.contains("class=\"attempt "), "{timeline}");
    let tasks = section(&page, "tasks");
    assert!(tasks.contains("worker unknown"), "{tasks}");
    assert!(tasks.contains("started unknown"), "{tasks}");
    assert!(section(&page, "graph").contains("<title>task-1 → task-2</title>"));

    // Some attempts timed and some not: the timed ones are drawn, the others listed.
    let mut mixed = state();
    mixed.tasks[1].attempts[0].started_ms = None;
    mixed.tasks[2].attempts[0].worker = None;
    let page = page_of(&mixed, &caps());
    let timeline = section(&page, "timeline");
    assert!(timeline.contains(">worker unknown</text>"), "{timeline}");
    assert!(
        timeline.contains("1 attempt without recorded times"),
        "{timeline}"
    );
}

fn page_of(state: &SwarmState, caps: &Caps) -> String {
    page(state, caps)
}

/// The text of `<section id="{id}">` up to its end.
fn section<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let len = page[start..].find("</section>").unwrap();
    &page[start..start + len]
}

/// A task a person fixed passed without a passing attempt: its dependents waited on it until
/// then, as the time it passed says.
#[test]
fn a_dependency_fixed_by_a_person_ends_the_wait_when_it_passed() {
    let mut s = state();
    s.tasks[0].attempts.truncate(1);
    s.tasks[0].attempts[0].backoff_ms = None;
    s.tasks[0].passed_ms = Some(T0 + 7_000);
    s.tasks[2].attempts[0].started_ms = Some(T0 + 8_000);
    let page = page(&s, &caps());
    let timeline = section(&page, "timeline");
    assert!(
        timeline.contains("task-3 waits on task-1, task-2 · 0.0 s – 7.0 s"),
        "{timeline}"
    );
}

/// Every text the state holds, ids and paths included (a saved state is only as
/// trustworthy as the disk it was read from), stays text: no tag opens and no attribute
/// value ends where one of them is shown.
#[test]
fn no_recorded_text_can_open_a_tag_or_leave_an_attribute() {
    const BAD: &str = "\"q-attr'><q-tag>";
    let mut s = state();
    s.id = BAD.into();
    s.goal = BAD.into();
    s.workspace = BAD.into();
    s.error = Some(BAD.into());
    s.tasks[2].dependencies = vec![BAD.into(), "task-1".into()];
    for t in &mut s.tasks {
        t.id = format!("{}{BAD}", t.id);
        t.description = BAD.into();
        t.target_files = vec![BAD.into()];
        t.reason = Some(BAD.into());
        t.status = TaskStatus::Failed;
        for a in &mut t.attempts {
            a.model = BAD.into();
            a.session_id = Some(BAD.into());
            a.failure_mode = Some(BAD.into());
            a.error = Some(BAD.into());
            a.summary = BAD.into();
            a.files = vec![BAD.into()];
            a.findings.push(Finding {
                stage: Stage::Judge,
                code: Some(BAD.into()),
                message: BAD.into(),
                file: Some(BAD.into()),
                line: None,
            });
        }
    }
    // task-3 still waits on task-1, under its new id.
    s.tasks[2].dependencies[1] = s.tasks[0].id.clone();
    s.tasks[0].status = TaskStatus::Passed;
    let page = page(&s, &caps());
    assert!(!page.contains("<q-tag"), "a tag opened");
    assert!(!page.contains("\"q-attr"), "an attribute ended");
    assert!(!page.contains("'>"), "an attribute ended");
    assert!(
        page.matches("&quot;q-attr&#39;&gt;&lt;q-tag&gt;").count() > 20,
        "the texts are not shown"
    );
}
