//! The tree-object parser on any bytes: what it parses, written back in git's order and
//! parsed again, is the same set of entries, and writing is then stable.
#![no_main]

use atto_checkpoint::fuzzing::tree_round_trip;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(written) = tree_round_trip(data) {
        let again = tree_round_trip(&written);
        assert_eq!(
            again.as_deref(),
            Some(written.as_slice()),
            "a written tree reads back differently"
        );
    }
});
