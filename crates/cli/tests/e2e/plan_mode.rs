//! Agent modes through the front door: the line session reads prompts and slash commands
//! from stdin, a scripted model makes the calls, a real temporary git repository takes (or
//! does not take) the writes. Plan mode queues every way to write and leaves the workspace
//! byte-identical, and `/show-plan` lists the queue; every plan command works through plain
//! stdin and `/help` lists it; review and debug refuse and name themselves; bad commands are
//! one line and change nothing. Deciding a plan is in `plan_review`, a plan across processes
//! in `plan_resume`; the helpers all three share live here.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use atto_testkit::{Reply, Script, ScriptToolCall};
use serde_json::{Value, json};

use crate::common::{Env, call, events, of_type, run_line_session, stderr};

pub(crate) fn bash(command: &str) -> ScriptToolCall {
    call("bash", json!({ "command": command }))
}

pub(crate) fn write(path: &str, content: &str) -> ScriptToolCall {
    call("write_file", json!({ "path": path, "content": content }))
}

pub(crate) fn edit(path: &str, old: &str, new: &str) -> ScriptToolCall {
    call(
        "edit_file",
        json!({ "path": path, "old_string": old, "new_string": new }),
    )
}

pub(crate) fn delete(path: &str) -> ScriptToolCall {
    call("delete_file", json!({ "path": path }))
}

/// A reply that says `text` and makes `calls`.
pub(crate) fn calls(text: &str, calls: Vec<ScriptToolCall>) -> Reply {
    Reply {
        text: Some(text.into()),
        tool_calls: calls,
        ..Reply::default()
    }
}

pub(crate) fn serve(env: &mut Env, replies: Vec<Reply>) {
    env.serve(Script {
        replies,
        ..Script::default()
    });
}

/// Commits everything in the workspace, so `.git` holds objects, refs and an index.
fn commit_all(env: &Env) {
    for args in [
        &["add", "-A"][..],
        &["commit", "-q", "--no-gpg-sign", "-m", "init"][..],
    ] {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(env.repo())
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    }
}

/// Every directory and file under `root`, `.git` included: path → bytes (directories map
/// to nothing, so an empty new directory shows too).
pub(crate) fn snapshot(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                out.insert(format!("{rel}/"), None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The workspace's files outside `.git`, as text.
pub(crate) fn files(env: &Env) -> BTreeMap<String, String> {
    snapshot(&env.repo())
        .into_iter()
        .filter(|(path, _)| !path.starts_with(".git/"))
        .filter_map(|(path, bytes)| Some((path, String::from_utf8(bytes?).unwrap())))
        .collect()
}

pub(crate) fn expect(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect()
}

/// The line session (`--permission auto-safe`, the chat wire, then `extra`) fed `stdin`,
/// run until stdin ends; it must exit 0.
pub(crate) fn session(env: &Env, extra: &[&str], stdin: &str) -> Output {
    let mut args = vec!["--permission", "auto-safe", "--wire", "chat"];
    args.extend_from_slice(extra);
    run_line_session(env, "m", &args, stdin)
}

/// [`session`] with `--output-format stream-json`; its events.
pub(crate) fn json_session(env: &Env, extra: &[&str], stdin: &str) -> (Vec<Value>, Output) {
    let mut args = vec!["--output-format", "stream-json"];
    args.extend_from_slice(extra);
    let out = session(env, &args, stdin);
    (events(&out), out)
}

/// The tool results a request carries, in order.
fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

/// The last user message of a request, as the model read it.
pub(crate) fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .map(|text| {
            // Without the turn facts every prompt carries (date, model).
            match (text.find("\n<turn_meta>"), text.find("</turn_meta>")) {
                (Some(start), Some(end)) => {
                    format!("{}{}", &text[..start], &text[end + "</turn_meta>".len()..])
                }
                _ => text.to_owned(),
            }
        })
        .unwrap()
}

/// The proposed changes of the (last) `/show-plan` answer.
pub(crate) fn shown_changes(events: &[Value]) -> Vec<Value> {
    let plans = of_type(events, "plan");
    let plan = plans.last().expect("a plan event");
    plan["plan"]["proposed_changes"].as_array().unwrap().clone()
}

/// `(order, status)` of each outcome of the `n`th `/approve` or `/reject`.
pub(crate) fn decided(events: &[Value], n: usize) -> Vec<(u64, String)> {
    of_type(events, "plan_decided")[n]["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["order"].as_u64().unwrap(),
                o["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn plan_mode_queues_every_way_to_write_and_the_workspace_stays_byte_identical() {
    let mut env = Env::new();
    env.write("README.md", "hello world\n");
    env.write("notes.txt", "keep me\n");
    env.write("src/lib.rs", "pub fn f() {}\n");
    commit_all(&env);
    let writes = vec![
        write("new.txt", "fresh\n"),
        edit("README.md", "hello", "goodbye"),
        delete("notes.txt"),
        bash("echo hi > out1.txt"),
        bash("echo hi >> README.md"),
        bash("echo hi | tee out2.txt"),
        bash("sed -i s/hello/bye/ README.md"),
        bash("python3 -c \"open('out3.txt','w').write('y')\""),
        bash("rm notes.txt"),
        bash("mv notes.txt moved.txt"),
        bash("git commit -am x"),
        bash("cat > out4.txt <<'EOF'\nhello\nEOF"),
        call(
            "mcp__fs__write_file",
            json!({ "path": "out5.txt", "content": "z" }),
        ),
    ];
    let mut all = vec![
        bash("ls"),
        call("read_file", json!({ "path": "README.md" })),
    ];
    all.extend(writes.iter().cloned());
    serve(
        &mut env,
        vec![
            calls("Looking, then changing everything.", all),
            Reply::text("Plan: thirteen changes."),
        ],
    );
    let before = snapshot(&env.repo());
    let (events, out) = json_session(&env, &["--mode", "plan"], "change it all\n/show-plan\n");

    assert_eq!(
        snapshot(&env.repo()),
        before,
        "plan mode changed the workspace"
    );
    // /show-plan lists every attempt, in the order the model made them, untouched.
    let shown = shown_changes(&events);
    let listed: Vec<(&Value, &Value)> = shown.iter().map(|c| (&c["tool"], &c["args"])).collect();
    let made: Vec<(Value, Value)> = writes
        .iter()
        .map(|c| (json!(c.name), c.arguments.clone()))
        .collect();
    let made: Vec<(&Value, &Value)> = made.iter().map(|(t, a)| (t, a)).collect();
    assert_eq!(listed, made, "{}", stderr(&out));
    let orders: Vec<u64> = shown.iter().map(|c| c["order"].as_u64().unwrap()).collect();
    assert_eq!(orders, (1..=13).collect::<Vec<_>>());
    assert!(shown.iter().all(|c| c["status"] == "pending"), "{shown:?}");
    assert_eq!(of_type(&events, "change_queued").len(), 13);

    // What the model was told: the two reads ran for real, every write was queued.
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2);
    let results = tool_results(&reqs[1].body);
    assert_eq!(results.len(), 15, "{results:#?}");
    assert!(
        results[0].contains("README.md")
            && results[0].contains("notes.txt")
            && results[0].contains("src"),
        "ls did not run: {}",
        results[0]
    );
    assert!(
        results[1].contains("hello world"),
        "read_file did not run: {}",
        results[1]
    );
    for (i, result) in results[2..].iter().enumerate() {
        assert!(
            result.starts_with("[PLAN MODE] Change queued for approval"),
            "write {i} was not queued: {result}"
        );
    }
    assert!(
        last_user(&reqs[0].body).ends_with(
            "[atto] Agent mode: PLAN (writes and non-read-only commands are queued for \
             approval, not run)"
        ),
        "{}",
        last_user(&reqs[0].body)
    );
}

#[test]
fn review_and_debug_refuse_with_the_mode_named() {
    let mut env = Env::new();
    env.write("a.txt", "alpha\n");
    env.write("Makefile", "test:\n\t@echo debug-test-ran\n");
    commit_all(&env);
    serve(
        &mut env,
        vec![
            calls(
                "Trying everything.",
                vec![
                    write("new.txt", "x"),
                    edit("a.txt", "alpha", "beta"),
                    bash("ls"),
                    call("read_file", json!({ "path": "a.txt" })),
                ],
            ),
            Reply::text("Reviewed."),
            calls(
                "Debugging.",
                vec![
                    bash("make test"),
                    bash("pytest; rm -rf x"),
                    bash("make"),
                    write("a.txt", "fixed"),
                    call("read_file", json!({ "path": "a.txt" })),
                ],
            ),
            Reply::text("Diagnosed."),
            calls("Now writing.", vec![write("built.txt", "built\n")]),
            Reply::text("Written."),
        ],
    );
    let before = snapshot(&env.repo());
    session(&env, &["--mode", "review"], "review it\n");
    assert_eq!(snapshot(&env.repo()), before);
    let reqs = env.requests();
    let review = tool_results(&reqs[1].body);
    assert_eq!(review.len(), 4, "{review:#?}");
    for refused in &review[..3] {
        assert!(refused.starts_with("REVIEW mode is read-only"), "{refused}");
    }
    assert!(review[3].contains("alpha"), "read_file ran: {}", review[3]);

    let (events, out) = json_session(
        &env,
        &["--mode", "debug"],
        "debug it\n/mode yolo\n/mode build\nwrite it\n",
    );
    let reqs = env.requests();
    let debug = tool_results(&reqs[3].body);
    assert_eq!(debug.len(), 5, "{debug:#?}");
    assert!(
        debug[0].contains("debug-test-ran"),
        "the whitelisted test command ran: {}",
        debug[0]
    );
    for refused in &debug[1..4] {
        assert!(refused.starts_with("DEBUG mode"), "{refused}");
    }
    assert!(debug[4].contains("alpha"), "read_file ran: {}", debug[4]);
    assert!(
        last_user(&reqs[2].body)
            .ends_with("[atto] Agent mode: DEBUG (reads and test commands only)")
    );
    let modes: Vec<(&Value, &Value)> = of_type(&events, "mode_changed")
        .iter()
        .map(|e| (&e["mode"], &e["permission"]))
        .collect();
    assert_eq!(
        modes,
        [
            (&json!("build"), &json!("yolo")),
            (&json!("build"), &json!("auto-safe"))
        ],
        "{}",
        stderr(&out)
    );
    // Back in build, writes run.
    assert!(last_user(&reqs[4].body).ends_with("[atto] Agent mode: BUILD"));
    let mut after = before.clone();
    after.insert("built.txt".into(), Some(b"built\n".to_vec()));
    assert_eq!(snapshot(&env.repo()), after);
}

#[test]
fn every_plan_command_works_through_plain_stdin_and_help_lists_it() {
    let mut env = Env::new();
    serve(
        &mut env,
        vec![
            calls("One file.", vec![write("one.txt", "1\n")]),
            Reply::text("Queued."),
        ],
    );
    let (events, out) = json_session(
        &env,
        &[],
        "/plan\nqueue one\n/show-plan\n/reject not now\n/plan\n/help\n",
    );
    let modes: Vec<&Value> = of_type(&events, "mode_changed")
        .iter()
        .map(|e| &e["mode"])
        .collect();
    assert_eq!(modes, [&json!("plan"), &json!("build")]);
    assert_eq!(of_type(&events, "turn_started")[0]["mode"], "plan");
    let plan = of_type(&events, "plan");
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0]["plan"]["task"], "queue one");
    assert_eq!(plan[0]["plan"]["proposed_changes"][0]["path"], "one.txt");
    assert!(
        plan[0]["previews"][0]
            .as_str()
            .unwrap()
            .contains("+++ b/one.txt"),
        "{:?}",
        plan[0]["previews"]
    );
    let decided = of_type(&events, "plan_decided");
    assert_eq!(decided.len(), 1);
    assert_eq!(decided[0]["status"], "rejected");
    assert_eq!(
        decided[0]["outcomes"][0]["detail"],
        "rejected by the user: not now"
    );
    assert!(!env.repo().join("one.txt").exists());
    // Every stdout line is an event; the help text is for people, on stderr.
    let help = stderr(&out);
    for name in ["/mode NAME", "/plan", "/show-plan", "/approve", "/reject"] {
        assert!(help.contains(name), "{name} missing from /help: {help}");
    }
}

#[test]
fn bad_plan_commands_are_one_line_errors_and_change_nothing() {
    let mut env = Env::new();
    env.write("a.txt", "alpha\n");
    serve(
        &mut env,
        vec![
            calls(
                "Three changes.",
                vec![
                    write("x.txt", "x\n"),
                    edit("a.txt", "alpha", "beta"),
                    bash("echo y > y.txt"),
                ],
            ),
            Reply::text("Queued."),
        ],
    );
    let out = session(&env, &["--mode", "plan"], "three changes\n");
    assert!(
        stderr(&out).contains("plan: change 3 queued (bash echo y > y.txt)"),
        "{}",
        stderr(&out)
    );
    let before = snapshot(&env.repo());
    let bad = [
        ("/approve 99", "/approve N takes 1 to 3"),
        ("/approve x", "'x'"),
        ("/approve 0", "/approve 0"),
        ("/reject 9", "there is no change 9"),
        ("/switch nothing", "no thread 'nothing'"),
        ("/mode nonsense", "unknown mode 'nonsense'"),
    ];
    let mut stdin: String = bad.iter().map(|(line, _)| format!("{line}\n")).collect();
    stdin.push_str("/show-plan\n");
    let out = session(&env, &["-c"], &stdin);
    assert_eq!(snapshot(&env.repo()), before);
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = stderr(&out);
    // The session comes back in plan mode, as it last ran, and says so.
    assert!(err.contains("resumed in plan mode"), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("resumed in plan mode"))
        .collect();
    // The resume notice, one line per bad command, then the plan.
    assert!(
        lines[0].starts_with("this session has a pending plan with 3 change(s)"),
        "{err}"
    );
    let plan_at = lines
        .iter()
        .position(|l| l.starts_with("plan "))
        .expect("a /show-plan answer");
    assert_eq!(plan_at, 1 + bad.len(), "one line per bad command:\n{err}");
    for ((command, says), line) in bad.iter().zip(&lines[1..plan_at]) {
        assert!(line.contains(says), "{command} answered {line:?}");
    }
    assert!(
        lines[plan_at].ends_with("[pending] — 3 change(s), 3 pending"),
        "{err}"
    );
    for expected in [
        "1. write_file x.txt [pending]",
        "2. edit_file a.txt [pending]",
        "3. bash echo y > y.txt [pending]",
    ] {
        assert!(err.contains(expected), "{expected}: {err}");
    }
}
