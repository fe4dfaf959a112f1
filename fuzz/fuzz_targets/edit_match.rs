//! `edit_file`'s matching of `old_string`: when the exact text occurs, the edit is the
//! literal replacement (once when unique, everywhere with replace_all), never a fuzzy one;
//! a fuzzy match only when it does not occur, and it replaces something.
#![no_main]

use arbitrary::Arbitrary;
use atto_tools::fuzzing::edit;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input {
    text: String,
    old: String,
    new: String,
    replace_all: bool,
}

fuzz_target!(|i: Input| {
    let result = edit(&i.text, &i.old, &i.new, i.replace_all);
    let count = if i.old.is_empty() {
        0
    } else {
        i.text.matches(i.old.as_str()).count()
    };
    match (&result, count) {
        (Ok((text, n)), 1) => {
            assert_eq!(*n, 1);
            assert_eq!(*text, i.text.replacen(&i.old, &i.new, 1));
        }
        (Ok((text, n)), c) if c > 1 => {
            assert!(i.replace_all, "{c} matches replaced without replace_all");
            assert_eq!(*n, c);
            assert_eq!(*text, i.text.replace(&i.old, &i.new));
        }
        (Ok((_, n)), _) => assert!(*n >= 1, "an edit that replaced nothing"),
        (Err(_), 1) => assert!(i.old == i.new, "a unique match refused: {result:?}"),
        (Err(_), _) => {}
    }
});
