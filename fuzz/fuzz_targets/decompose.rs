//! The swarm's decomposition answer (a model's JSON task list): tasks or the one error the
//! model is re-asked with. Tasks taken are within the cap, with unique ids, dependencies
//! on tasks of the list, no cycle, and only workspace-relative files.
#![no_main]

use std::collections::HashSet;

use arbitrary::Unstructured;
use atto_swarm::decompose::{find_cycle, is_relative_inside, parse};
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "tasks",
    "id",
    "type",
    "description",
    "dependencies",
    "target_files",
    "relevant_files",
    "acceptance_criteria",
    "implement",
    "test",
    "refactor",
    "fix",
    "document",
    "research",
    "review",
    "other",
    "t1",
    "t2",
    "t3",
    " t1 ",
    "T1",
    "a.rs",
    "./a.rs",
    "src/b.rs",
    "../x",
    "/etc/passwd",
    "a/../../b",
    "C:\\x",
    "",
    " ",
];

fuzz_target!(|data: &[u8]| {
    let Some((&cap, rest)) = data.split_first() else {
        return;
    };
    let max_tasks = usize::from(cap % 8) + 1;
    let mut u = Unstructured::new(rest);
    let Ok(value) = atto_fuzz::object(&mut u, WORDS, 0) else {
        return;
    };
    let answer = format!("Here is the plan:\n```json\n{value}\n```");
    let Ok(tasks) = parse(&answer, max_tasks) else {
        return;
    };
    assert!(
        !tasks.is_empty() && tasks.len() <= max_tasks,
        "{} tasks",
        tasks.len()
    );
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), tasks.len(), "an id used twice");
    for t in &tasks {
        for d in &t.dependencies {
            assert!(
                ids.contains(d.as_str()),
                "{} depends on unknown {d:?}",
                t.id
            );
        }
        for f in t.target_files.iter().chain(&t.relevant_files) {
            assert!(is_relative_inside(f), "{} names {f:?}", t.id);
        }
    }
    assert_eq!(find_cycle(&tasks), None);
});
