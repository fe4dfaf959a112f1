//! The watch daemon's answer format as the process reads it: any bytes are an answer or
//! malformed, and a whole answer stays whole when bytes follow its last path.
#![no_main]

use atto_checkpoint::fuzzing::daemon_answer_is_whole;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let whole = daemon_answer_is_whole(data);
    // The head line alone is the whole answer for `unknown`; a truncated `ok` body
    // missing its final NUL must not pass as whole.
    if whole && data.starts_with(b"ok ") && data.last() != Some(&b'\n') {
        assert_eq!(
            data.last(),
            Some(&0),
            "an ok answer cut inside a path was taken as whole"
        );
    }
});
