//! The repository map and long tool outputs through the front door: `codebase_overview`
//! on a small repository of every language it reads, the map a small repository's first
//! prompt carries, and a long output kept whole in a file the model pages through.

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, call, calls, stderr};
use crate::context::session;

#[test]
fn codebase_overview_maps_the_repository_and_keeps_its_index_in_the_data_dir() {
    let mut env = Env::new();
    env.write(
        "src/lib.rs",
        "pub struct Engine;\nimpl Engine {\n    pub fn start(&self) {}\n}\n",
    );
    env.write(
        "src/main.rs",
        "fn main() { let e = atto_demo::Engine; e.start(); }\n",
    );
    env.write(
        "tools/gen.py",
        "class Generator:\n    def run(self):\n        pass\n",
    );
    env.write("web/app.ts", "export function render(): void {}\n");
    env.write("cmd/main.go", "package main\nfunc main() {}\n");
    env.serve(Script {
        replies: vec![
            calls(vec![call("codebase_overview", json!({}))]),
            Reply::text("mapped"),
        ],
        ..Script::default()
    });
    let out = env.exec("chat", "map the code");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let map = crate::common::tool_results(&env, 1).join("\n");
    assert!(map.starts_with("Repository map: 5 source files"), "{map}");
    // The most used file leads; every language is read.
    let first = map.lines().nth(1).unwrap();
    assert_eq!(first, "src/lib.rs", "{map}");
    for want in [
        "  struct Engine :1 (1 uses)",
        "  fn start :3",
        "  class Generator :1",
        "  function render :1",
        "  func main :2",
    ] {
        assert!(map.contains(want), "{want}: {map}");
    }
    let cached = std::fs::read_dir(env.dir.path().join("home/atto-data/overview"))
        .unwrap()
        .count();
    assert_eq!(cached, 1, "one index for the workspace");
}

#[test]
fn a_long_tool_output_is_kept_whole_and_the_model_pages_through_it() {
    let mut env = Env::new();
    let text: String = (1..=3000)
        .map(|i| format!("row {i:05}: the quick brown fox jumps over the lazy dog again\n"))
        .collect();
    env.write("big.txt", &text);
    env.serve(Script {
        replies: vec![
            calls(vec![call("read_file", json!({"path": "big.txt"}))]),
            calls(vec![call(
                "read_file",
                json!({"path": ".atto/outputs/call_1_0.txt", "offset": 1500, "limit": 2}),
            )]),
            Reply::text("paged"),
        ],
        ..Script::default()
    });
    let out = env.exec("chat", "read it");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = crate::common::tool_results(&env, 1).pop().unwrap();
    assert!(first.len() < 40_000, "{}", first.len());
    assert!(first.contains("row 00001"), "{first:.100}");
    assert!(first.contains("row 02000"), "the tail is kept");
    assert!(!first.contains("row 01000"), "the middle is cut");
    assert!(
        first.contains("is in .atto/outputs/call_1_0.txt; page through it with read_file"),
        "{}",
        &first[first.len() - 300..]
    );
    // The file holds the whole output read_file gave (2,000 numbered lines).
    let whole = env.read(".atto/outputs/call_1_0.txt");
    assert!(whole.lines().count() >= 2_000, "{}", whole.lines().count());
    assert!(whole.contains("row 01000") && whole.contains("row 02000"));
    let paged = crate::common::tool_results(&env, 2).pop().unwrap();
    assert!(
        paged.contains("row 01500") && paged.contains("row 01501"),
        "{paged}"
    );
    assert!(!paged.contains("row 01502"), "{paged}");
    // Kept out of git: the user's status shows only the file the test wrote.
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(env.repo())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), "?? big.txt\n");
}

#[test]
fn a_small_repository_gets_its_map_with_the_first_prompt_only() {
    let mut env = Env::new();
    env.write("app/models.py", "class User:\n    pass\n");
    env.write(
        "app/views.py",
        "from app.models import User\n\ndef show():\n    return User()\n",
    );
    env.serve(Script {
        replies: vec![Reply::text("one"), Reply::text("two")],
        ..Script::default()
    });
    let out = session(&env, "chat", "m", &[], "first\nsecond\n");
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2, "{}", stderr(&out));
    let users = |n: usize| -> Vec<String> {
        reqs[n].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = &users(0)[0];
    assert!(
        first.starts_with("first\n\n<repository_map>\nRepository map: 2 source files"),
        "{first}"
    );
    assert!(
        first.contains("app/models.py\n  class User :1 (1 uses)"),
        "{first}"
    );
    // Only the first prompt carries it; it stays in the history as sent.
    let later = users(1);
    assert_eq!(&later[0], first);
    assert!(!later[1].contains("repository_map"), "{}", later[1]);

    // A repository past the limit gets none.
    let mut big = Env::new();
    for i in 0..31 {
        big.write(&format!("m{i}.py"), &format!("def f{i}():\n    pass\n"));
    }
    big.serve(Script {
        replies: vec![Reply::text("ok")],
        ..Script::default()
    });
    let out = big.exec("chat", "hello");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !big.requests()[0]
            .body
            .to_string()
            .contains("repository_map")
    );
}

#[test]
fn a_focus_and_the_first_prompt_raise_the_area_they_name() {
    let mut env = Env::new();
    env.write(
        "src/lib.rs",
        "//! Runs [`Engine`].\npub mod engine;\nmod billing;\n",
    );
    env.write(
        "src/engine.rs",
        "/// Runs jobs.\npub struct Engine;\nimpl Engine {\n    pub fn start(&self) {}\n}\n",
    );
    env.write(
        "src/billing.rs",
        "pub(crate) fn invoice_total() -> u64 { 0 }\n",
    );
    for i in 0..6 {
        env.write(
            &format!("src/util{i}.rs"),
            &format!("pub(crate) fn helper{i}() {{}}\n"),
        );
    }
    env.serve(Script {
        replies: vec![
            calls(vec![
                call("codebase_overview", json!({})),
                call("codebase_overview", json!({"focus": "invoice_total"})),
            ]),
            Reply::text("mapped"),
        ],
        ..Script::default()
    });
    let out = env.exec("chat", "fix the rounding in src/billing.rs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = crate::common::tool_results(&env, 1);
    let first_file = |map: &str| map.lines().nth(1).unwrap_or("").to_owned();
    // Unfocused, the crate's documented surface leads; focused, the file defining the name.
    assert_eq!(first_file(&results[0]), "src/engine.rs", "{}", results[0]);
    assert_eq!(first_file(&results[1]), "src/billing.rs", "{}", results[1]);
    // The first prompt's map is raised toward the file the prompt names.
    let prompt = env.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .unwrap();
    let map = prompt.split("<repository_map>\n").nth(1).unwrap();
    assert_eq!(first_file(map), "src/billing.rs", "{prompt}");
}

#[test]
fn the_files_a_session_changed_raise_their_area_in_the_map() {
    let mut env = Env::new();
    env.write("src/lib.rs", "pub mod engine;\nmod billing;\nmod tax;\n");
    env.write(
        "src/engine.rs",
        "/// Runs jobs.\npub struct Engine;\nimpl Engine {\n    pub fn start(&self) {}\n}\n",
    );
    env.write(
        "src/billing.rs",
        "use crate::tax::rate;\npub(crate) fn invoice_total() -> u64 { rate() }\n",
    );
    env.write("src/tax.rs", "pub(crate) fn rate() -> u64 { 0 }\n");
    for i in 0..6 {
        env.write(
            &format!("src/util{i}.rs"),
            &format!("pub(crate) fn helper{i}() {{}}\n"),
        );
    }
    env.serve(Script {
        replies: vec![
            calls(vec![call("codebase_overview", json!({}))]),
            calls(vec![call(
                "edit_file",
                json!({"path": "src/billing.rs", "old_string": "{ rate() }", "new_string": "{ rate() + 1 }"}),
            )]),
            calls(vec![call("codebase_overview", json!({}))]),
            Reply::text("done"),
        ],
        ..Script::default()
    });
    let out = env
        .exec_with(&["--yolo"], "round the totals up")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = crate::common::tool_results(&env, 3);
    let first_file = |map: &str| map.lines().nth(1).unwrap_or("").to_owned();
    assert_eq!(first_file(&results[0]), "src/engine.rs", "{}", results[0]);
    // After the edit, the file the session changed leads, with no focus asked for.
    assert_eq!(first_file(&results[2]), "src/billing.rs", "{}", results[2]);
}
