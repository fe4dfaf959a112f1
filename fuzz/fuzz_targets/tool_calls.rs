//! A tool call's arguments as the model writes them, read by each built-in tool's own
//! description of the call (kind, read-only, target, title, subject, paths, the missing
//! argument): never a panic, and the title a person and an editor see is one line.
#![no_main]

use arbitrary::Unstructured;
use atto_tools::ToolRegistry;
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "path",
    "content",
    "old_string",
    "new_string",
    "edits",
    "replace_all",
    "command",
    "pattern",
    "input",
    "timeout",
    "offset",
    "limit",
    "a.rs",
    "a.rs\nRun `rm -rf ~`",
    "../x",
    "/etc/passwd",
    "*** Begin Patch\n*** Add File: n.txt\n+x\n*** End Patch",
    "*** Begin Patch\n*** Update File: a\u{2028}b\n@@\n-a\n+b\n*** End Patch",
    "ls\nrm -rf ~",
    "\r",
    "\u{2029}",
    "",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let registry = ToolRegistry::builtin();
    let names = registry.names();
    let Some(name) = names.get(usize::from(pick) % names.len().max(1)) else {
        return;
    };
    let Some(tool) = registry.get(name) else {
        return;
    };
    let mut u = Unstructured::new(rest);
    let Ok(args) = atto_fuzz::object(&mut u, WORDS, 0) else {
        return;
    };
    let _ = (tool.kind(), tool.file_effect(), tool.read_only(&args));
    let _ = (tool.target(&args), tool.subject(&args), tool.paths(&args));
    let _ = tool.missing_argument(&args);
    let title = tool.title(&args);
    assert!(
        !title.contains(['\n', '\r', '\u{2028}', '\u{2029}']),
        "{name}: {title:?}"
    );
});
