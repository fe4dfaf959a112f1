//! Model choice in a session: `--model auto` routes a SIMPLE and a COMPLEX prompt to their
//! configured models, `/model NAME` switches the next request, an unknown name changes
//! nothing, a resume keeps the pinned model, and `/cost` breaks spend down per model.

use atto_testkit::{Reply, Script};

use crate::common::{Env, events, of_type, run_line_session, stderr};

const COMPLEX: &str = "refactor the auth module to use JWT, then migrate all callers in \
                       src/api/ and update the tests";

fn routed(env: &Env) {
    std::fs::write(
        env.dir.path().join("home/.config/atto/config.toml"),
        "[routing]\nsimple = \"small-model\"\ncomplex = { model = \"big-model\", effort = \
         \"high\" }\n",
    )
    .unwrap();
}

fn models_sent(env: &Env) -> Vec<String> {
    env.requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn auto_routes_each_turn_by_its_complexity_and_says_why() {
    let mut env = Env::new();
    routed(&env);
    env.serve(Script::new(vec![
        Reply::text("hello"),
        Reply::text("planned"),
    ]));
    let out = run_line_session(
        &env,
        "auto",
        &[
            "--permission",
            "auto-safe",
            "--output-format",
            "stream-json",
        ],
        &format!("hi\n{COMPLEX}\n/cost\n"),
    );
    assert_eq!(
        models_sent(&env),
        vec!["small-model", "big-model"],
        "{}",
        stderr(&out)
    );
    let ev = events(&out);
    let turns = of_type(&ev, "turn_started");
    assert_eq!(turns[0]["model"], "small-model");
    assert_eq!(turns[0]["route"], "auto: SIMPLE → small-model");
    assert_eq!(turns[1]["model"], "big-model");
    assert_eq!(turns[1]["route"], "auto: COMPLEX → big-model");
    // /cost: one row per model.
    let cost = of_type(&ev, "cost_report");
    let rows = cost[0]["models"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["model"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["small-model", "big-model"]);
    assert_eq!(rows[0]["calls"], 1);
}

#[test]
fn model_switches_the_next_request_an_unknown_name_changes_nothing_and_resume_keeps_it() {
    let mut env = Env::new();
    routed(&env);
    env.serve(Script::new(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
        Reply::text("four"),
    ]));
    let out = run_line_session(
        &env,
        "m",
        &["--permission", "auto-safe"],
        "first\n/model nope-model\nsecond\n/model big-model\nthird\n",
    );
    let err = stderr(&out);
    assert!(err.contains("unknown model 'nope-model'"), "{err}");
    assert!(err.contains("the model stays m"), "{err}");
    assert!(
        err.contains("model: big-model for the following turns"),
        "{err}"
    );
    assert!(
        err.contains("cache"),
        "the switch names its cache miss: {err}"
    );
    assert_eq!(models_sent(&env), vec!["m", "m", "big-model"]);

    // A resume keeps the pinned model.
    let out = run_line_session(&env, "m", &["--permission", "auto-safe", "-c"], "fourth\n");
    let err = stderr(&out);
    assert!(err.contains("resumed with big-model pinned"), "{err}");
    assert_eq!(models_sent(&env)[3], "big-model");
}
