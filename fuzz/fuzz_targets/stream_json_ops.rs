//! Stream-json ops on stdin (`atto exec --input-format stream-json`), parsed as the
//! binary parses each line: an op or an error; an op written back reads back the same.
#![no_main]

use atto_protocol::Op;
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "type",
    "user_input",
    "approval",
    "interrupt",
    "shutdown",
    "text",
    "id",
    "decision",
    "yes",
    "no",
    "always",
    "yes_for_session",
    "deny",
    "reason",
    "mode",
    "set_mode",
];

fuzz_target!(|data: &[u8]| {
    let Some(line) = atto_fuzz::text(data, |u| Ok(atto_fuzz::object(u, WORDS, 0)?.to_string()))
    else {
        return;
    };
    if let Ok(op) = serde_json::from_str::<Op>(&line) {
        let Ok(written) = serde_json::to_string(&op) else {
            panic!("an op that cannot be written back: {op:?}");
        };
        let again: Op = match serde_json::from_str(&written) {
            Ok(again) => again,
            Err(e) => panic!("{written} does not read back: {e}"),
        };
        assert_eq!(format!("{op:?}"), format!("{again:?}"));
    }
});
