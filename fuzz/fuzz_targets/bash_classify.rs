//! The bash classifier on any text: it returns a verdict in bounded time (libFuzzer's
//! `-timeout` holds the bound), and adding a segment with `;` never makes it less strict.
#![no_main]

use arbitrary::Arbitrary;
use atto_policy::classify;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input {
    first: String,
    second: String,
}

fuzz_target!(|input: Input| {
    let first = classify(&input.first);
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
