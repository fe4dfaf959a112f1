//! `apply_patch` parse + apply on an in-memory tree, as its preview and the tool run it.
//! Any patch text: a plan or an error, and a plan starts from the files as they were. A
//! patch written from two versions of a file (every old line removed, every new line
//! added): it applies, and gives exactly the new version.
#![no_main]

use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use atto_tools::preview_patch;
use libfuzzer_sys::fuzz_target;

/// Lines a file is made of: repeats, blanks and near-duplicates make matching ambiguous.
const LINES: &[&str] = &[
    "",
    " ",
    "a",
    "a ",
    " a",
    "b",
    "fn f() {",
    "}",
    "    x += 1;",
    "\tx += 1;",
    "@@",
    "-a",
    "+a",
    "é",
    "// *** End of File",
    "#",
];

#[derive(Debug, Arbitrary)]
enum Input {
    /// Any patch text against up to a few files.
    Text {
        files: Vec<(String, String)>,
        patch: String,
    },
    /// Two versions of one file, as indexes into `LINES`.
    Versions { before: Vec<u8>, after: Vec<u8> },
}

fn text(picks: &[u8]) -> String {
    picks
        .iter()
        .map(|i| format!("{}\n", LINES[usize::from(*i) % LINES.len()]))
        .collect()
}

fuzz_target!(|input: Input| match input {
    Input::Text { files, patch } => {
        let tree: BTreeMap<String, String> = files.into_iter().take(4).collect();
        let plan = preview_patch(&patch, |path| Ok(tree.get(path).cloned()));
        if let Ok(plan) = plan {
            for change in &plan.files {
                assert_eq!(change.before, tree.get(&change.path).cloned(), "{change:?}");
            }
            let mut paths: Vec<&str> = plan.files.iter().map(|f| f.path.as_str()).collect();
            paths.sort_unstable();
            let touched = paths.len();
            paths.dedup();
            assert_eq!(paths.len(), touched, "a file planned twice");
        }
    }
    Input::Versions { before, after } => {
        if before.is_empty() {
            return;
        }
        let (old, new) = (text(&before), text(&after));
        let mut patch = String::from("*** Begin Patch\n*** Update File: f.rs\n@@\n");
        for line in old.lines() {
            patch.push_str(&format!("-{line}\n"));
        }
        for line in new.lines() {
            patch.push_str(&format!("+{line}\n"));
        }
        patch.push_str("*** End Patch\n");
        let plan = preview_patch(&patch, |path| Ok((path == "f.rs").then(|| old.clone())));
        match plan {
            Ok(plan) => assert_eq!(
                plan.files[0].after.as_deref(),
                Some(new.as_str()),
                "{patch}"
            ),
            Err(e) => panic!("a whole-file patch did not apply: {e}\n{patch}"),
        }
    }
});
