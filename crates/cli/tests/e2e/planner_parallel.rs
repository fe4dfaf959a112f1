//! Parallel plan steps through the line session: with `/auto-parallel on`, two ready steps
//! with disjoint files run together (their model requests overlap), their conversations
//! join the history in step order, each step told its sibling and its own files, and the
//! step waiting on both runs after them; a failed step of a batch rolls back only its own
//! files (written by file tools or by `bash`) and stops the plan. Off (the default), the
//! same plan runs one step at a time.
//!
//! The scripted server answers requests in arrival order, so the two steps of a batch may
//! get each other's replies; the scripts and assertions hold for either order.

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use crate::common::{Env, call, calls, events, of_type, stderr};
use crate::planner::{plan_reply, plan_trace, report, run, step, write, writing_step};

/// How long the first reply of each step takes: long enough that overlapping requests
/// are unmistakable.
const DELAY_MS: u64 = 500;

/// Two independent steps (a.txt, b.txt) and a third (c.txt) after both.
fn diamond() -> Value {
    json!({"intent": "three files", "risk": "low", "estimated_duration_secs": 30,
        "steps": [step("sa", "Write a.txt", &[]), step("sb", "Write b.txt", &[]),
                  step("sc", "Write c.txt", &["sa", "sb"])]})
}

/// A step's first reply (its calls), slowed down.
fn slow(reply: Reply) -> Reply {
    Reply {
        delay_ms: DELAY_MS,
        ..reply
    }
}

/// `reply`, served only to a request of plan step `n` (of 3): the steps of a batch send
/// their requests at once, in no fixed order.
fn for_step(n: u32, reply: Reply) -> Reply {
    Reply {
        when: Some(format!("Plan step {n} of 3")),
        ..reply
    }
}

/// The statuses of a `plan_summary`, in step order.
fn statuses(summary: &Value) -> Vec<String> {
    summary["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["status"].as_str().unwrap().to_owned())
        .collect()
}

/// Each message of a chat request as its role, and the step number for a step prompt.
fn layout(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let role = m["role"].as_str().unwrap_or("?").to_owned();
            let text = m["content"].to_string();
            match (1..=3).find(|n| text.contains(&format!("Plan step {n} of 3"))) {
                Some(n) if role == "user" => format!("user:step{n}"),
                _ if role == "assistant" && m["tool_calls"].is_array() => "assistant:calls".into(),
                _ => role,
            }
        })
        .filter(|r| r != "system")
        .collect()
}

/// The text of a chat request's last user message.
fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn independent_steps_run_together_and_join_the_history_in_step_order() {
    let mut env = Env::new();
    let [a_calls, a_text] = writing_step("a.txt", "a\n", "completed", "wrote a");
    let [b_calls, b_text] = writing_step("b.txt", "b\n", "completed", "wrote b");
    let mut replies = vec![
        plan_reply(&diamond()),
        for_step(1, slow(a_calls)),
        for_step(2, slow(b_calls)),
        for_step(1, a_text),
        for_step(2, b_text),
    ];
    replies.extend(writing_step("c.txt", "c\n", "completed", "wrote c"));
    env.serve(Script::new(replies));

    let out = run(&env, "/auto-parallel on\n/auto \"three files\"\n/approve\n");
    let ev = events(&out);
    let err = stderr(&out);
    let settings = of_type(&ev, "planner_settings_changed");
    assert_eq!(settings.len(), 1, "{err}");
    assert_eq!(settings[0]["parallel"], true);

    assert_eq!(
        plan_trace(&ev),
        [
            "plan_generated",
            "plan_confirmed",
            "plan_step_started:1",
            "plan_step_started:2",
            "plan_step_completed:1",
            "plan_step_completed:2",
            "plan_step_started:3",
            "plan_step_completed:3",
            "plan_summary",
        ],
        "{err}"
    );
    let started = of_type(&ev, "plan_step_started");
    assert_eq!(
        started[0]["checkpoint"], started[1]["checkpoint"],
        "one checkpoint before the batch"
    );
    assert_ne!(started[0]["checkpoint"], started[2]["checkpoint"]);

    let reqs = env.requests();
    assert_eq!(reqs.len(), 7, "{err}");
    // Both first requests arrived before either reply (DELAY_MS each) could be done.
    let (first, second) = (reqs[1].received_at_unix_ns, reqs[2].received_at_unix_ns);
    assert!(
        second < first + u128::from(DELAY_MS) * 1_000_000,
        "the steps' requests did not overlap: {} ms apart",
        (second - first) / 1_000_000
    );
    // Each step's own request shows its prompt, not the other's.
    let own: Vec<Vec<String>> = reqs[1..3].iter().map(|r| layout(&r.body)).collect();
    assert!(own.contains(&vec!["user:step1".to_owned()]), "{own:?}");
    assert!(own.contains(&vec!["user:step2".to_owned()]), "{own:?}");
    // Each is told its sibling runs beside it and which files are its own.
    let told = |step: u32, sibling: u32, file: &str| {
        reqs[1..3].iter().any(|r| {
            let text = last_user_text(&r.body);
            text.starts_with(&format!("Plan step {step} of 3"))
                && text.contains(&format!(
                    "\n\nStep {sibling} runs at the same time as this one, on other files. \
                     This step may change only its own files: {file}"
                ))
        })
    };
    assert!(
        told(1, 2, "a.txt") && told(2, 1, "b.txt"),
        "{}",
        last_user_text(&reqs[1].body)
    );
    assert!(
        !last_user_text(&reqs[5].body).contains("at the same time"),
        "step 3 runs alone"
    );

    // The third step sees both blocks, in step order, each a valid exchange.
    let block = ["assistant:calls", "tool", "tool", "assistant"];
    let mut want = vec!["user:step1".to_owned()];
    want.extend(block.map(str::to_owned));
    want.push("user:step2".to_owned());
    want.extend(block.map(str::to_owned));
    want.push("user:step3".to_owned());
    assert_eq!(layout(&reqs[5].body), want);
    assert!(reqs[5].received_at_unix_ns > reqs[4].received_at_unix_ns);

    assert_eq!(env.read("a.txt"), "a\n");
    assert_eq!(env.read("b.txt"), "b\n");
    assert_eq!(env.read("c.txt"), "c\n");
    let summary = of_type(&ev, "plan_summary");
    assert_eq!(summary[0]["status"], "completed");
    assert_eq!(statuses(summary[0]), ["completed"; 3]);
    let turns = of_type(&ev, "turn_completed");
    assert_eq!(turns.len(), 3, "one turn per step");
}

/// The diamond plan with auto-parallel on: the step writing a.txt completes, the other
/// step of the batch makes `bad`'s calls (and fails); step 3 never runs, so it has no
/// reply. Returns the workspace, the events and stderr.
fn failing_batch(bad: Reply) -> (Env, Vec<Value>, String) {
    let mut env = Env::new();
    env.write("a.txt", "original a\n");
    env.write("b.txt", "original b\n");
    let good = calls(vec![write("a.txt", "a\n"), report("completed", "wrote a")]);
    env.serve(Script::new(vec![
        plan_reply(&diamond()),
        for_step(1, slow(good)),
        for_step(2, slow(bad)),
        Reply::text("Step done."),
        Reply::text("Step done."),
    ]));
    let out = run(&env, "/auto-parallel on\n/auto \"three files\"\n/approve\n");
    (env, events(&out), stderr(&out))
}

#[test]
fn a_failed_step_of_a_batch_rolls_back_only_its_own_files_and_stops_the_plan() {
    let (env, ev, err) = failing_batch(calls(vec![
        write("b.txt", "broken\n"),
        report("failed", "b cannot be written"),
    ]));
    let failed = of_type(&ev, "plan_step_failed");
    assert_eq!(failed.len(), 1, "{err}");
    assert_eq!(failed[0]["rolled_back"], true);
    assert_eq!(failed[0]["error"], "b cannot be written");
    assert_eq!(
        env.read("b.txt"),
        "original b\n",
        "the failed step's file is back"
    );
    assert_eq!(env.read("a.txt"), "a\n", "the sibling's file stays written");
    let restored = of_type(&ev, "restored");
    assert_eq!(restored.len(), 1);
    assert_eq!(restored[0]["restored"], json!(["b.txt"]));
    assert_eq!(restored[0]["deleted"], json!([]));

    let summary = of_type(&ev, "plan_summary");
    assert_eq!(summary[0]["status"], "failed");
    let mut first_two = statuses(summary[0])[..2].to_vec();
    first_two.sort();
    assert_eq!(first_two, ["completed", "failed"]);
    assert_eq!(statuses(summary[0])[2], "pending", "the plan stopped");
    assert!(!env.repo().join("c.txt").exists());
    assert_eq!(env.requests().len(), 5, "no request for step 3: {err}");
}

#[test]
fn a_failed_step_of_a_batch_rolls_back_what_its_commands_changed_too() {
    // The failing step changes its file and creates another through bash, which reports
    // no paths; the sibling's write_file runs in the same round.
    let (env, ev, err) = failing_batch(calls(vec![
        call(
            "bash",
            json!({"command": "printf x > b.txt && mkdir -p out && printf y > out/made.txt"}),
        ),
        report("failed", "b cannot be written"),
    ]));
    let bash = of_type(&ev, "tool_call_finished")
        .into_iter()
        .find(|e| e["name"] == "bash")
        .cloned();
    assert_eq!(
        bash.as_ref().map(|e| e["status"].clone()),
        Some(json!("ok")),
        "{bash:?} {err}"
    );
    let failed = of_type(&ev, "plan_step_failed");
    assert_eq!(failed.len(), 1, "{err}");
    assert_eq!(failed[0]["rolled_back"], true);
    assert_eq!(env.read("b.txt"), "original b\n", "bash's change is undone");
    // out/made.txt is not one of the step's files: undone as soon as its command ran.
    assert!(
        !env.repo().join("out/made.txt").exists(),
        "what bash created outside the step's files is gone: {err}"
    );
    let warned = of_type(&ev, "warning");
    assert!(
        warned.iter().any(|w| w["message"]
            .as_str()
            .unwrap()
            .contains("also changed out/made.txt, and those changes were undone")),
        "{warned:?}"
    );
    assert_eq!(env.read("a.txt"), "a\n", "the sibling's file stays written");
    let restored = of_type(&ev, "restored");
    assert_eq!(restored.len(), 1);
    assert_eq!(restored[0]["restored"], json!(["b.txt"]));
    assert_eq!(restored[0]["deleted"], json!([]));
}

#[test]
fn without_auto_parallel_the_same_plan_runs_one_step_at_a_time() {
    let mut env = Env::new();
    let mut replies = vec![plan_reply(&diamond())];
    for (path, content) in [("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")] {
        let [step_calls, text] = writing_step(path, content, "completed", "ok");
        replies.extend([slow(step_calls), text]);
    }
    env.serve(Script::new(replies));

    let out = run(&env, "/auto \"three files\"\n/approve\n");
    let ev = events(&out);
    let err = stderr(&out);
    assert_eq!(
        plan_trace(&ev),
        [
            "plan_generated",
            "plan_confirmed",
            "plan_step_started:1",
            "plan_step_completed:1",
            "plan_step_started:2",
            "plan_step_completed:2",
            "plan_step_started:3",
            "plan_step_completed:3",
            "plan_summary",
        ],
        "{err}"
    );
    let reqs = env.requests();
    assert_eq!(reqs.len(), 7, "{err}");
    // Each request waits for the reply before it, which takes DELAY_MS after a step's
    // first request.
    for pair in [(1, 2), (3, 4), (5, 6)] {
        let gap = reqs[pair.1].received_at_unix_ns - reqs[pair.0].received_at_unix_ns;
        assert!(
            gap >= u128::from(DELAY_MS) * 1_000_000,
            "requests {pair:?} overlapped: {} ms apart",
            gap / 1_000_000
        );
    }
    let step2 = layout(&reqs[3].body);
    assert_eq!(step2.first().map(String::as_str), Some("user:step1"));
    assert_eq!(step2.last().map(String::as_str), Some("user:step2"));
}

#[test]
fn an_interrupt_cancels_every_step_of_a_batch_and_the_session_goes_on() {
    let mut env = Env::new();
    // The steps' replies would take a minute; the interrupt must not wait for them.
    let stuck = |path: &str| Reply {
        delay_ms: 60_000,
        ..calls(vec![write(path, "x\n"), report("completed", "ok")])
    };
    env.serve(Script::new(vec![
        plan_reply(&diamond()),
        stuck("a.txt"),
        stuck("b.txt"),
        Reply::text("still here"),
    ]));
    let (out, took) = crate::planner::interrupted(
        &env,
        "/auto-parallel on\n/auto \"three files\"\n/approve\n",
        3,
        300,
        "say hi\n",
    );
    let err = stderr(&out);
    assert!(
        took < std::time::Duration::from_secs(15),
        "the interrupt waited for the model: {took:?}"
    );
    let ev = events(&out);
    let summary = of_type(&ev, "plan_summary");
    assert_eq!(summary.len(), 1, "{err}");
    assert_eq!(summary[0]["status"], "cancelled");
    assert_eq!(statuses(summary[0]), ["failed", "failed", "pending"]);
    assert!(!env.repo().join("a.txt").exists() && !env.repo().join("b.txt").exists());
    // The next prompt is a normal turn over a history holding both step prompts.
    let turns = of_type(&ev, "turn_completed");
    assert_eq!(turns.last().unwrap()["text"], "still here", "{err}");
    let reqs = env.requests();
    assert_eq!(reqs.len(), 4);
    let last = layout(&reqs[3].body);
    assert_eq!(last, ["user:step1", "user:step2", "user"], "{last:?}");
}

#[test]
fn a_step_of_a_batch_cannot_change_a_siblings_files() {
    // Step 2 tries to write step 1's file with a file tool and with a command; both are
    // kept from it, and step 1's change stands.
    let mut env = Env::new();
    env.write("a.txt", "original a\n");
    let good = calls(vec![write("a.txt", "a\n"), report("completed", "wrote a")]);
    let intruder = calls(vec![
        write("a.txt", "stolen\n"),
        call(
            "bash",
            json!({"command": "printf b > b.txt && printf x > c.txt"}),
        ),
        report("completed", "wrote b"),
    ]);
    let mut replies = vec![
        plan_reply(&diamond()),
        for_step(1, slow(good)),
        for_step(2, slow(intruder)),
        Reply::text("Step done."),
        Reply::text("Step done."),
    ];
    replies.extend(writing_step("c.txt", "c\n", "completed", "wrote c"));
    env.serve(Script::new(replies));
    let out = run(&env, "/auto-parallel on\n/auto \"three files\"\n/approve\n");
    let ev = events(&out);
    let err = stderr(&out);
    assert_eq!(
        env.read("a.txt"),
        "a\n",
        "a sibling overwrote step 1's file: {err}"
    );
    assert_eq!(env.read("b.txt"), "b", "step 2's own file is written");
    let refused = of_type(&ev, "tool_call_finished")
        .into_iter()
        .filter(|e| e["name"] == "write_file" && e["status"] == "denied")
        .count();
    assert_eq!(refused, 1, "{err}");
    // c.txt belongs to step 3: step 2's command's write to it was undone before step 3.
    assert_eq!(env.read("c.txt"), "c\n");
    assert_eq!(statuses(of_type(&ev, "plan_summary")[0]), ["completed"; 3]);
}
