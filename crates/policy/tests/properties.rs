//! Property tests: whatever safe pieces surround it, a command substitution,
//! an unknown program or a write redirection is never SAFE; an option that is
//! not on a program's read-only list (an unknown one, or any abbreviation of
//! one that writes) is never SAFE; and no input makes the classifier panic.

// Tests may unwrap: a panic here is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use atto_policy::{BashRisk, classify};
use proptest::prelude::*;

/// Read-only commands the classifier must call SAFE on their own (checked
/// below, so the property cannot pass by accident).
const SAFE_PIECES: &[&str] = &[
    "ls -la",
    "pwd",
    "cat a.txt",
    "grep -rn foo src",
    "git status",
    "git log --oneline -5",
    "echo hi",
    "wc -l f",
    "head -20 README.md",
    "sort -u names",
    "uniq -c",
    "rg TODO",
    "find . -type f",
    "git diff HEAD",
    "sed -n 1,5p f",
    "tail -3 log",
    "cut -d: -f1 f",
    "test -f x",
];

const JOINERS: &[&str] = &[" | ", " && ", " || ", "; ", "\n"];

fn safe_piece() -> impl Strategy<Value = String> {
    prop::sample::select(SAFE_PIECES).prop_map(str::to_string)
}

fn safe_command() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(
        (
            safe_piece(),
            prop::sample::select(JOINERS).prop_map(str::to_string),
        ),
        1..5,
    )
}

/// Something that makes a command not provably read-only, and where it goes.
#[derive(Debug, Clone)]
enum Element {
    /// Appended to one piece as an argument: `$(…)`, backticks, `<(…)`.
    Substitution(String),
    /// A pipeline stage or list member running an unknown program.
    Unknown(String),
    /// Appended to one piece: `> file` and friends.
    Redirect(String),
}

fn element() -> impl Strategy<Value = Element> {
    let subst = (safe_piece(), 0..4usize).prop_map(|(inner, form)| {
        Element::Substitution(match form {
            0 => format!("$({inner})"),
            1 => format!("`{inner}`"),
            2 => format!("<({inner})"),
            _ => format!("\"$({inner})\""),
        })
    });
    let unknown = ("zq[a-z]{1,6}", "[a-z0-9 -]{0,12}")
        .prop_map(|(name, args)| Element::Unknown(format!("{name} {args}")));
    let redirect = (
        prop::sample::select(
            &[
                ">", ">>", "2>", "&>", ">|", "1>", "&>>", "| tee", "| tee -a",
            ][..],
        ),
        "[a-z]{1,8}\\.txt",
    )
        .prop_map(|(op, file)| Element::Redirect(format!("{op} {file}")));
    prop_oneof![subst, unknown, redirect]
}

fn assemble(pieces: &[(String, String)], el: &Element, at: usize, wrap: u8) -> String {
    let at = at % pieces.len();
    let mut out = String::new();
    for (i, (piece, joiner)) in pieces.iter().enumerate() {
        if i > 0 {
            out.push_str(&pieces[i - 1].1);
        }
        out.push_str(piece);
        if i == at {
            match el {
                Element::Substitution(s) => {
                    out.push(' ');
                    out.push_str(s);
                }
                Element::Redirect(r) => {
                    out.push(' ');
                    out.push_str(r);
                }
                Element::Unknown(u) => {
                    out.push_str(joiner);
                    out.push_str(u);
                }
            }
        }
    }
    match wrap {
        0 => out,
        1 => format!("( {out} )"),
        2 => format!("{{ {out}; }}"),
        3 => format!("bash -c '{}'", out.replace('\'', r"'\''")),
        _ => format!(
            "timeout 5 sh -c \"{}\"",
            out.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
                .replace('`', "\\`")
        ),
    }
}

/// Read-only commands of programs that have a list of read-only options.
const OPTION_PIECES: &[&str] = &[
    "ls -la src",
    "cat -n a.txt",
    "grep -rn foo src",
    "git log --oneline -5",
    "git diff --stat HEAD",
    "git grep -n foo",
    "head -n 5 f",
    "sort -u names",
    "shuf -n 3 f",
    "iconv -f latin1 -t utf-8 f",
    "tar -tzf a.tgz",
    "rg -n TODO",
    "sed -n 1,5p f",
    "less -R f",
    "du -sh .",
    "diff -u a b",
    "uniq -c f",
];

/// `piece` with `option` inserted right after the program (and its git
/// subcommand), where every parser reads it as an option.
fn with_option(piece: &str, option: &str) -> String {
    let words: Vec<&str> = piece.split(' ').collect();
    let at = if words[0] == "git" { 2 } else { 1 };
    let mut out = words[..at].to_vec();
    out.push(option);
    out.extend(&words[at..]);
    out.join(" ")
}

#[test]
fn the_safe_pieces_are_safe() {
    for piece in OPTION_PIECES {
        assert_eq!(classify(piece).risk, BashRisk::Safe, "{piece}");
    }
    for piece in SAFE_PIECES {
        assert_eq!(classify(piece).risk, BashRisk::Safe, "{piece}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn substitutions_unknown_programs_and_writes_are_never_safe(
        pieces in safe_command(),
        el in element(),
        at in 0..8usize,
        wrap in 0..5u8,
    ) {
        let command = assemble(&pieces, &el, at, wrap);
        let v = classify(&command);
        prop_assert_ne!(v.risk, BashRisk::Safe, "{:?} -> {:?}", command, v.reasons);
    }

    #[test]
    fn safe_pieces_alone_stay_safe(pieces in safe_command(), wrap in 0..3u8) {
        let mut command = String::new();
        for (i, (piece, _)) in pieces.iter().enumerate() {
            if i > 0 {
                command.push_str(&pieces[i - 1].1);
            }
            command.push_str(piece);
        }
        if wrap == 1 {
            command = format!("( {command} )");
        }
        let v = classify(&command);
        prop_assert_eq!(v.risk, BashRisk::Safe, "{:?} -> {:?}", command, v.reasons);
    }

    #[test]
    fn options_off_the_list_are_never_safe(
        piece in prop::sample::select(OPTION_PIECES),
        option in "--zq[a-z-]{0,8}(=[a-z]{0,4})?|-\\^[a-z]{0,3}",
    ) {
        let command = with_option(piece, &option);
        let v = classify(&command);
        prop_assert_ne!(v.risk, BashRisk::Safe, "{:?} -> {:?}", command, v.reasons);
    }

    #[test]
    fn abbreviations_of_options_that_write_are_never_safe(
        piece in prop::sample::select(&["sort f", "shuf f", "iconv -f a -t b f", "git log"][..]),
        long in prop::sample::select(&["--output", "--compress-program", "--ext-diff", "--textconv"][..]),
        len in 3..20usize,
        value in "(=[a-z]{1,4})?",
    ) {
        let prefix = &long[..len.min(long.len())];
        // `--text` is itself an option of git log (`-a`), which getopt
        // matches exactly before it tries abbreviations.
        prop_assume!(prefix != "--text");
        let abbreviation = format!("{prefix}{value}");
        let command = with_option(piece, &abbreviation);
        let v = classify(&command);
        prop_assert_ne!(v.risk, BashRisk::Safe, "{:?} -> {:?}", command, v.reasons);
    }

    #[test]
    fn arbitrary_input_never_panics(command in "\\PC{0,300}") {
        let v = classify(&command);
        prop_assert!(!v.reasons.is_empty());
    }

    #[test]
    fn shell_flavoured_noise_never_panics(command in "[a-z $(){}\\[\\]<>|&;'\"`\\\\\n=*?~/.-]{0,200}") {
        let v = classify(&command);
        prop_assert!(!v.reasons.is_empty());
    }
}
