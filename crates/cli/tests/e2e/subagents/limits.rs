//! A subagent tree's limits end to end: the session cap holds over a tree three deep, a
//! child near its time or token limit is told to wrap up, and one past its time is stopped
//! with its processes.

use super::*;

/// Every reply reports 400 tokens in and 100 out: less than any request here sends, so
/// atto's estimate of a call never falls below what it really costs.
fn costing(reply: Reply) -> Reply {
    Reply {
        usage: Some(ScriptUsage {
            input_tokens: 400,
            output_tokens: 100,
            ..ScriptUsage::default()
        }),
        ..reply
    }
}

#[test]
fn a_tree_three_deep_never_crosses_the_session_cap_by_even_one_call() {
    let mut env = Env::new();
    env.write("a.txt", "a\n");
    std::fs::write(
        env.dir.path().join("home/.config/atto/config.toml"),
        "[subagents]\nmin_tokens = 6000\n",
    )
    .unwrap();
    let cap: u64 = 40_000;
    let mut replies = vec![
        spawn(json!({"task": "middle one", "role": "explore"})),
        spawn(json!({"task": "middle two", "role": "explore"})),
        spawn(json!({"task": "the leaf", "role": "explore"})),
    ];
    // The leaf never stops reading on its own.
    for _ in 0..40 {
        replies.push(when(
            calls(vec![call("read_file", json!({"path": "a.txt"}))]),
            "the leaf",
        ));
    }
    replies.extend([text("two done"), text("one done"), text("all done")]);
    env.serve(Script {
        replies: replies.into_iter().map(costing).collect(),
        ..Script::default()
    });
    let cap_flag = cap.to_string();
    let out = run(
        &env,
        &[
            "--permission",
            "auto-safe",
            "--max-budget-tokens",
            &cap_flag,
        ],
        "go deep",
    );
    let evs = events(&out);
    let depths: Vec<u64> = of_type(&evs, "subagent_started")
        .iter()
        .map(|e| e["depth"].as_u64().unwrap())
        .collect();
    assert_eq!(
        depths,
        vec![1, 2, 3],
        "{}\n{}",
        stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
    let requests = env.requests();
    let spent = 500 * requests.len() as u64;
    assert!(
        spent <= cap,
        "{} calls of 500 tokens crossed the {cap} cap",
        requests.len()
    );
    // The leaf was stopped by a budget, and its report says so.
    let leaf = of_type(&evs, "subagent_finished")
        .into_iter()
        .find(|e| e["depth"] == 3)
        .cloned()
        .unwrap();
    let why = leaf["forced_stop"].as_str().unwrap();
    assert!(
        why.contains("not sent") && why.contains("would cross"),
        "{why}"
    );
    assert!(leaf["report"].as_str().unwrap().contains("STOPPED BY ATTO"));
    // Every request's output limit was bounded by what was left.
    for (i, r) in requests.iter().enumerate() {
        let max = r.body["max_tokens"].as_u64().unwrap();
        assert!(max <= cap, "request {i} asked for {max} output tokens");
    }
}

#[test]
fn a_child_is_told_to_wrap_up_then_stopped_at_its_time_limit_and_its_processes_are_gone() {
    let mut env = Env::new();
    std::fs::write(
        env.dir.path().join("home/.config/atto/config.toml"),
        "[subagents]\ntimeout_secs = 8\n",
    )
    .unwrap();
    // Unique so the check below finds only this test's process.
    let lingering = "sleep 31.7";
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "slow work", "role": "implement"})),
            // Ends past the wrap-up point (0.8 s before the 8 s limit).
            calls(vec![call("bash", json!({"command": "sleep 7.4"}))]),
            calls(vec![call("bash", json!({"command": lingering}))]),
            text("the child was stopped"),
        ],
        ..Script::default()
    });
    let started = std::time::Instant::now();
    let out = run(
        &env,
        &["--permission", "auto-safe"],
        "delegate the slow work",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(20));
    let requests = env.requests();
    assert_eq!(requests.len(), 4, "{}", stderr(&out));
    let wrap = body_text(&requests[2]);
    assert!(
        wrap.contains("Wrap up:"),
        "the wrap-up must reach the child: {wrap}"
    );
    let evs = events(&out);
    let finished = of_type(&evs, "subagent_finished");
    assert_eq!(finished[0]["status"], "stopped");
    assert!(
        finished[0]["forced_stop"]
            .as_str()
            .unwrap()
            .contains("time limit"),
        "{:?}",
        finished[0]
    );
    assert!(crate::common::tool_results(&env, 3)[0].contains("STOPPED BY ATTO"));
    let ps = std::process::Command::new("pgrep")
        .args(["-f", lingering])
        .output()
        .unwrap();
    assert!(
        ps.stdout.is_empty(),
        "the child's command outlived it: {}",
        String::from_utf8_lossy(&ps.stdout)
    );
}

/// Every reply reports 8,000 tokens in and 100 out: a child with 30,000 tokens can make
/// three calls, and its fourth would cross its budget before it reached 90 % of it.
fn heavy(reply: Reply) -> Reply {
    Reply {
        usage: Some(ScriptUsage {
            input_tokens: 8_000,
            output_tokens: 100,
            ..ScriptUsage::default()
        }),
        ..reply
    }
}

#[test]
fn a_child_whose_calls_are_large_still_gets_the_wrap_up_and_reports() {
    let mut env = Env::new();
    env.write("a.txt", "a\n");
    let mut replies = vec![
        spawn(json!({"task": "heavy reading", "role": "explore", "budget_tokens": 30_000})),
        // The child answers the wrap-up with its report, whenever it comes.
        Reply {
            when: Some("Wrap up:".to_owned()),
            ..text(REPORT)
        },
    ];
    for _ in 0..6 {
        replies.push(when(
            calls(vec![call("read_file", json!({"path": "a.txt"}))]),
            "heavy reading",
        ));
    }
    replies.push(text("the child reported"));
    env.serve(Script {
        replies: replies
            .into_iter()
            .map(|r| match &r.when {
                Some(_) => heavy(r),
                None => r,
            })
            .collect(),
        ..Script::default()
    });
    let out = run(
        &env,
        &["--permission", "auto-safe"],
        "delegate the heavy reading",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
    let evs = events(&out);
    let finished = of_type(&evs, "subagent_finished");
    assert_eq!(finished.len(), 1, "{evs:?}");
    assert_eq!(
        finished[0]["status"], "completed",
        "the wrap-up call must fit in what is left: {:?}",
        finished[0]
    );
    let report = finished[0]["report"].as_str().unwrap();
    assert!(!report.contains("STOPPED BY ATTO"), "{report}");
    assert!(report.contains("The greeting is hello."), "{report}");
}
