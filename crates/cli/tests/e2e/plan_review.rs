//! Deciding a plan through the line session: `/approve` (everything, the first N, picks
//! and ranges) and `/reject` with a reason leave exactly the expected files and tell the
//! model why; two queued edits to one file apply in order; a file changed outside atto
//! before approval is a conflict, and approving again applies to the file as it is now.

use atto_testkit::Reply;

use crate::common::{Env, of_type, stderr};
use crate::plan_mode::{
    bash, calls, decided, delete, edit, expect, files, json_session, last_user, serve, session,
    shown_changes, snapshot, write,
};

#[test]
fn approving_first_n_then_all_then_rejecting_gives_exactly_the_expected_files() {
    let mut env = Env::new();
    env.write("old.txt", "old\n");
    env.write("keep.txt", "keep\n");
    let five = |p: &str| {
        calls(
            "Five files.",
            (1..=5)
                .map(|i| write(&format!("{p}{i}.txt"), &format!("{p}{i}\n")))
                .collect(),
        )
    };
    serve(
        &mut env,
        vec![
            calls(
                "Creating a and b, then fixing a, making c, dropping old.",
                vec![
                    write("a.txt", "alpha\n"),
                    write("b.txt", "beta\n"),
                    edit("a.txt", "alpha", "ALPHA"),
                    bash("echo x > c.txt"),
                    delete("old.txt"),
                ],
            ),
            Reply::text("Five changes queued."),
            calls("One more file.", vec![write("d.txt", "delta\n")]),
            Reply::text("d queued."),
            Reply::text("Understood, I will use the helper."),
            five("p"),
            Reply::text("Queued."),
            five("q"),
            Reply::text("Queued."),
        ],
    );
    // /approve 2: the first two changes, nothing else.
    let out = session(&env, &["--mode", "plan"], "make the changes\n/approve 2\n");
    assert_eq!(
        files(&env),
        expect(&[
            ("a.txt", "alpha\n"),
            ("b.txt", "beta\n"),
            ("keep.txt", "keep\n"),
            ("old.txt", "old\n"),
        ]),
        "{}",
        stderr(&out)
    );
    // /approve (in a later run: the plan was stored): the other three, in order.
    let out = session(&env, &["-c"], "/approve\n");
    assert_eq!(
        files(&env),
        expect(&[
            ("a.txt", "ALPHA\n"),
            ("b.txt", "beta\n"),
            ("c.txt", "x\n"),
            ("keep.txt", "keep\n"),
        ]),
        "{}",
        stderr(&out)
    );
    let err = stderr(&out);
    assert!(err.contains("plan closed: 5 applied"), "{err}");

    // A new plan, rejected with a reason: nothing changes and the model hears why.
    let before = snapshot(&env.repo());
    let (events, _) = json_session(
        &env,
        &["-c", "--mode", "plan"],
        "add d\n/reject use the helper instead\nwhat now?\n",
    );
    assert_eq!(snapshot(&env.repo()), before);
    assert_eq!(decided(&events, 0), [(1, "rejected".to_owned())]);
    assert_eq!(of_type(&events, "plan_decided")[0]["status"], "rejected");
    let reqs = env.requests();
    let told = last_user(&reqs.last().unwrap().body);
    assert!(told.starts_with("what now?\n\n[PLAN REVIEW]"), "{told}");
    assert!(
        told.contains("change 1 (write_file d.txt): rejected"),
        "{told}"
    );
    assert!(told.contains("use the helper instead"), "{told}");
    assert!(told.ends_with("[atto] Agent mode: PLAN (writes and non-read-only commands are queued for approval, not run)"), "{told}");

    // Picks: /approve 2,4 runs exactly those; a pick list naming a decided change is refused
    // whole; /approve 3-5 on a fresh plan runs exactly 3, 4 and 5.
    let done = files(&env);
    let with = |extra: &[(&str, &str)]| {
        let mut m = done.clone();
        m.extend(expect(extra));
        m
    };
    let out = session(&env, &["-c", "--mode", "plan"], "five p\n/approve 2,4\n");
    assert_eq!(
        files(&env),
        with(&[("p2.txt", "p2\n"), ("p4.txt", "p4\n")]),
        "{}",
        stderr(&out)
    );
    let out = session(&env, &["-c"], "/approve 3-5\n/reject\n");
    let err = stderr(&out);
    assert!(err.contains("change 4 is already applied"), "{err}");
    assert_eq!(files(&env), with(&[("p2.txt", "p2\n"), ("p4.txt", "p4\n")]));
    let (events, out) = json_session(&env, &["-c", "--mode", "plan"], "five q\n/approve 3-5\n");
    assert_eq!(
        files(&env),
        with(&[
            ("p2.txt", "p2\n"),
            ("p4.txt", "p4\n"),
            ("q3.txt", "q3\n"),
            ("q4.txt", "q4\n"),
            ("q5.txt", "q5\n"),
        ]),
        "{}",
        stderr(&out)
    );
    let applied = |o: u64| (o, "applied".to_owned());
    assert_eq!(decided(&events, 0), [applied(3), applied(4), applied(5)]);
    assert_eq!(
        of_type(&events, "plan_decided")[0]["status"],
        "partially_approved"
    );
}

#[test]
fn two_queued_edits_to_one_file_apply_in_order_and_an_external_change_is_a_conflict() {
    let mut env = Env::new();
    env.write("f.txt", "one\n");
    env.write("g.txt", "base\n");
    serve(
        &mut env,
        vec![
            // The second edit's old_string exists only once the first has applied.
            calls(
                "Two steps.",
                vec![edit("f.txt", "one", "two"), edit("f.txt", "two", "three")],
            ),
            Reply::text("Both edits queued."),
            calls(
                "Changing g, creating h.",
                vec![
                    edit("g.txt", "base", "planned"),
                    write("h.txt", "planned h\n"),
                ],
            ),
            Reply::text("Queued."),
        ],
    );
    let (events, out) = json_session(&env, &["--mode", "plan"], "two edits\n/approve\n");
    assert_eq!(
        of_type(&events, "change_queued").len(),
        2,
        "{}",
        stderr(&out)
    );
    let applied = |o: u64| (o, "applied".to_owned());
    assert_eq!(decided(&events, 0), [applied(1), applied(2)]);
    assert_eq!(env.read("f.txt"), "three\n");

    // Queued, then the files change outside atto before the (resumed) approval.
    let out = session(&env, &["-c", "--mode", "plan"], "g and h\n");
    assert_eq!(env.read("g.txt"), "base\n", "{}", stderr(&out));
    env.write("g.txt", "external\n");
    env.write("h.txt", "external h\n");
    let (events, out) = json_session(&env, &["-c"], "/approve\n/show-plan\n/approve\n");
    let conflict = |o: u64| (o, "conflict".to_owned());
    assert_eq!(
        decided(&events, 0),
        [conflict(1), conflict(2)],
        "{}",
        stderr(&out)
    );
    let detail = of_type(&events, "plan_decided")[0]["outcomes"][0]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(detail.contains("g.txt was modified"), "{detail}");
    // /show-plan after the conflict: both still open, the plan still pending.
    let shown = shown_changes(&events);
    assert_eq!(shown.len(), 2);
    assert!(shown.iter().all(|c| c["status"] == "conflict"), "{shown:?}");
    assert_eq!(of_type(&events, "plan")[0]["plan"]["status"], "pending");
    // Approved again, each applies to the file as it is now: the edit no longer matches,
    // the write replaces the external file.
    assert_eq!(
        decided(&events, 1),
        [(1, "failed".to_owned()), applied(2)],
        "{}",
        stderr(&out)
    );
    assert_eq!(env.read("g.txt"), "external\n");
    assert_eq!(env.read("h.txt"), "planned h\n");
}

#[test]
fn rejecting_the_rest_closes_the_plan_and_says_what_became_of_it() {
    let mut env = Env::new();
    let write = |path: &str| {
        crate::common::call(
            "write_file",
            serde_json::json!({"path": path, "content": "x\n"}),
        )
    };
    env.serve(atto_testkit::Script::new(vec![
        crate::common::calls(vec![write("a.txt"), write("b.txt"), write("c.txt")]),
        atto_testkit::Reply::text("queued"),
    ]));
    let out = crate::common::run_line_session(
        &env,
        "m",
        &["--mode", "plan", "--permission", "auto-safe"],
        "plan three files\n/approve 1\n/reject\n",
    );
    let err = crate::common::stderr(&out);
    assert!(err.contains("plan: 1 applied, 2 pending"), "{err}");
    assert!(err.contains("plan closed: 1 applied, 2 rejected"), "{err}");
    assert!(!err.contains("plan is now approved"), "{err}");
}
