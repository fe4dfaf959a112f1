//! The bash classifier on any text: it returns a verdict in bounded time (libFuzzer's
//! `-timeout` holds the bound), and adding a segment with `;` never makes it less strict.
//! A segment is added only after a command that is complete: after `*f"` (an open quote)
//! the `;` of `; bf"` is inside a string, and `*f"; bf"` is one other command, not two.
#![no_main]

use arbitrary::Arbitrary;
use atto_policy::classify;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input {
    first: String,
    second: String,
}

/// Whether bash's grammar reads `command` to its end without an error.
fn complete(command: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_ok()
        && parser
            .parse(format!("{command}\n"), None)
            .is_some_and(|tree| !tree.root_node().has_error())
}

fuzz_target!(|input: Input| {
    let first = classify(&input.first);
    if !complete(&input.first) {
        return;
    }
    let joined = classify(&format!("{}; {}", input.first, input.second));
    assert!(
        joined.risk >= first.risk,
        "adding `; {}` made {:?} less strict: {:?} -> {:?}",
        input.second,
        input.first,
        first.risk,
        joined.risk
    );
});
