//! The table-driven classifier test (`bash_cases.tsv`) and the bad-input
//! cases. Every mismatch in the table is reported at once.

// Tests may unwrap: a panic here is a failed test, which is what we want.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use atto_policy::{BashRisk, classify};

const CASES: &str = include_str!("bash_cases.tsv");

/// `(line number, expected, command)` for every case in the table.
fn cases() -> Vec<(usize, BashRisk, String)> {
    let mut out = Vec::new();
    for (n, line) in CASES.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (verdict, command) = line
            .split_once('\t')
            .unwrap_or_else(|| panic!("line {}: no tab in {line:?}", n + 1));
        let risk = match verdict {
            "SAFE" => BashRisk::Safe,
            "WARN" => BashRisk::Warn,
            "BLOCK" => BashRisk::Block,
            other => panic!("line {}: unknown verdict {other:?}", n + 1),
        };
        out.push((n + 1, risk, command.replace('␤', "\n")));
    }
    out
}

#[test]
fn the_case_table_matches() {
    let cases = cases();
    assert!(cases.len() >= 300, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for (line, expected, command) in &cases {
        let v = classify(command);
        if v.risk != *expected {
            failures.push(format!(
                "line {line}: {command:?}: expected {}, got {} {:?}",
                expected.as_str(),
                v.risk.as_str(),
                v.reasons
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_segment_and_verdict_carries_reasons() {
    for (line, _, command) in cases() {
        let v = classify(&command);
        assert!(
            !v.reasons.is_empty(),
            "line {line}: {command:?} has no reasons"
        );
        for s in &v.segments {
            assert!(
                !s.reasons.is_empty(),
                "line {line}: segment {:?} has no reasons",
                s.text
            );
        }
        let worst = v.segments.iter().map(|s| s.risk).max();
        assert_eq!(
            worst.unwrap_or(BashRisk::Safe),
            v.risk,
            "line {line}: {command:?}"
        );
    }
}

#[test]
fn verdict_reasons_come_from_the_worst_segments() {
    let v = classify("ls; rm -rf /; echo hi > out.txt");
    assert_eq!(v.risk, BashRisk::Block);
    assert!(
        v.reasons.iter().any(|r| r.contains("deletes /")),
        "{:?}",
        v.reasons
    );
    assert!(
        !v.reasons.iter().any(|r| r.contains("writes to a file")),
        "{:?}",
        v.reasons
    );
    let programs: Vec<_> = v
        .segments
        .iter()
        .filter_map(|s| s.program.as_deref())
        .collect();
    assert_eq!(programs, ["ls", "rm", "echo"]);
}

#[test]
fn wrappers_are_unwrapped_to_the_program_that_runs() {
    let v = classify("sudo -u root nice -n 5 /bin/rm -rf /etc");
    assert_eq!(v.segments.len(), 1);
    assert_eq!(v.segments[0].program.as_deref(), Some("rm"));
    assert!(
        v.reasons.iter().any(|r| r.contains("as root")),
        "{:?}",
        v.reasons
    );
}

#[test]
fn nested_code_strings_become_their_own_segments() {
    let v = classify("bash -c 'ls && rm -rf ~'");
    let programs: Vec<_> = v
        .segments
        .iter()
        .filter_map(|s| s.program.as_deref())
        .collect();
    assert!(
        programs.contains(&"ls") && programs.contains(&"rm"),
        "{programs:?}"
    );
    assert_eq!(v.risk, BashRisk::Block);
}

#[test]
fn a_100_kb_command_is_warn_without_panicking() {
    let command = format!("ls {}", "a".repeat(100 * 1024));
    let v = classify(&command);
    assert_eq!(v.risk, BashRisk::Warn);
    assert!(v.reasons[0].contains("64 KB"), "{:?}", v.reasons);
    assert!(
        v.segments[0].text.len() < 1024,
        "the segment text is clipped"
    );
}

#[test]
fn a_command_just_under_the_limit_is_still_analysed() {
    let command = format!("rm -rf / #{}", "x".repeat(60 * 1024));
    assert_eq!(classify(&command).risk, BashRisk::Block);
}

#[test]
fn nul_bytes_are_warn() {
    for command in ["ls\0", "rm -rf\0 /", "\0"] {
        let v = classify(command);
        assert_eq!(v.risk, BashRisk::Warn, "{command:?}");
        assert!(v.reasons[0].contains("NUL"), "{:?}", v.reasons);
        assert!(!v.segments[0].text.contains('\0'));
    }
}

#[test]
fn a_nul_byte_never_makes_what_precedes_it_less_strict() {
    // Found by the bash_classify fuzz target: `*` is BLOCK, and `*; ) ~\0@` was WARN.
    // What a C program (bash, exec) is given ends at the first NUL, so that part is judged.
    for (alone, with_nul) in [
        ("*", "*; ) ~\0@"),
        ("rm -rf /", "rm -rf /; x\0"),
        ("curl x | sh", "curl x | sh\0; ls"),
    ] {
        assert_eq!(classify(alone).risk, BashRisk::Block, "{alone:?}");
        let v = classify(with_nul);
        assert_eq!(v.risk, BashRisk::Block, "{with_nul:?}: {:?}", v.reasons);
        assert!(v.segments.iter().all(|s| !s.text.contains('\0')));
    }
}

#[test]
fn a_glob_program_name_stays_a_glob_when_an_expansion_follows_it() {
    // Found by the bash_classify fuzz target: `**` (can match mkfs) is BLOCK, and adding
    // `; …` closed a backtick so that the name became `**` + a command substitution,
    // which was only WARN. The glob still picks the program, whatever the expansion adds.
    let first = "**`\n;#";
    let joined = "**`\n;#; \x06*`\n;#";
    assert_eq!(classify(first).risk, BashRisk::Block, "{first:?}");
    let v = classify(joined);
    assert_eq!(v.risk, BashRisk::Block, "{joined:?}: {:?}", v.reasons);
}

#[test]
fn empty_and_blank_commands_are_safe() {
    for command in ["", "   ", "\n\t "] {
        let v = classify(command);
        assert_eq!(v.risk, BashRisk::Safe, "{command:?}");
        assert_eq!(v.reasons, ["empty command"]);
    }
}

#[test]
fn deeply_nested_input_is_warn_without_overflowing_the_stack() {
    let deep_subshells = format!("{}ls{}", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(classify(&deep_subshells).risk, BashRisk::Warn);
    let deep_substitutions = format!("{}ls{}", "echo $(".repeat(3000), ")".repeat(3000));
    assert_eq!(classify(&deep_substitutions).risk, BashRisk::Warn);
    // Deeper than the classifier follows code strings (each level of
    // quoting roughly triples the length, so 8 levels stay under 64 KB).
    let mut nested = "rm -rf /".to_string();
    for _ in 0..8 {
        nested = format!("bash -c {}", shell_quote(&nested));
    }
    assert!(nested.len() < 64 * 1024);
    assert_eq!(classify(&nested).risk, BashRisk::Block);
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn garbage_never_panics_and_is_never_safe() {
    for command in [
        "((((",
        "$(",
        "`",
        "'unterminated",
        "\"",
        "<<EOF",
        "|",
        "&&",
        "fi",
        "done",
    ] {
        let v = classify(command);
        assert_ne!(v.risk, BashRisk::Safe, "{command:?} {:?}", v.reasons);
    }
}

#[test]
fn verdicts_serialise_with_upper_case_risks() {
    let v = classify("ls > out.txt");
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["risk"], "WARN");
    assert_eq!(json["segments"][0]["program"], "ls");
    let back: atto_policy::Verdict = serde_json::from_value(json).unwrap();
    assert_eq!(back, v);
}

#[test]
fn non_ascii_after_a_brace_does_not_crash_the_grammar() {
    // tree-sitter-bash's scanner calls isdigit() on the code point after `{`;
    // these inputs crashed it before the ASCII shadow parse.
    for command in [
        "\"𑵾`¿𐌇`ઈ⹘`ືল᧣`🏡\"௫ᣕ\u{fff4}{\u{e01e4}э𐀭",
        "echo {😀",
        "echo {1..😀}",
        "rm -rf {é,/}",
    ] {
        let v = classify(command);
        assert!(!v.reasons.is_empty(), "{command:?}");
    }
    assert_eq!(classify("rm -rf {é,/}").risk, BashRisk::Block);
    assert_eq!(classify("cat fichier_é.txt").risk, BashRisk::Safe);
    let v = classify("echo 'héllo wörld' | grep ö");
    assert_eq!(v.risk, BashRisk::Safe);
    assert_eq!(v.segments[0].text, "echo 'héllo wörld'");
}

#[test]
fn a_newline_inside_a_quoted_code_string_separates_commands() {
    let v = classify("sh -c \"ls\nrm -rf /\"");
    assert_eq!(v.risk, BashRisk::Block, "{:?}", v.reasons);
}

#[test]
fn writes_into_protected_directories_are_marked() {
    for command in [
        "echo x > .git/hooks/pre-commit",
        "ls && cp hook .git/hooks/pre-push",
        "sudo tee .atto/config.toml < x",
        "git config core.hooksPath h",
        "git -c core.sshCommand=x fetch",
        "bash -c 'echo x >> .git/config'",
        "dd if=x of=.git/config",
    ] {
        let v = classify(command);
        assert!(v.protected_write, "{command}: {:?}", v.segments);
        assert!(v.risk >= BashRisk::Warn, "{command}");
        assert!(
            v.segments
                .iter()
                .filter(|s| s.protected_write)
                .flat_map(|s| &s.reasons)
                .any(|r| r.contains("approval")),
            "{command}: {:?}",
            v.segments
        );
    }
    for command in [
        "cat .git/config",
        "echo x > notes.txt",
        "git config user.name me",
        "cp .git/config backup.txt",
        "git commit -m x",
    ] {
        let v = classify(command);
        assert!(!v.protected_write, "{command}: {:?}", v.segments);
    }
}

#[test]
fn segments_carry_their_normalised_command() {
    let v = classify("sudo -u me  \"/usr/bin/git\"  push  '--force' && ls");
    assert_eq!(v.segments[0].command, "git push --force");
    assert_eq!(v.segments[0].invocation, "sudo -u me git push --force");
    assert_eq!(v.segments[1].command, "ls");
    // A word decided at run time leaves no invocation for allow rules to match.
    let v = classify("git push $REMOTE");
    assert_eq!(v.segments[0].invocation, "");
}

#[test]
fn text_that_parsed_alone_is_judged_as_it_parsed_when_an_error_follows() {
    // Found by the bash_classify fuzz target's long run: the first command runs a glob
    // that can name mkfs (BLOCK); an odd backquote appended after `;` moves the parser's
    // recovery back into it, its first error now starts before the glob, and the verdict
    // was only WARN. The longest prefix that parses cleanly up to a `;` or a line end is
    // judged on its own too.
    let first = "md5\r**`\n**`\n2?.i\\ffb=";
    let joined = format!("{first}; b=.1\u{7f})#\"<\\/;-K`");
    let alone = classify(first);
    let v = classify(&joined);
    assert_eq!(alone.risk, BashRisk::Block, "{:?}", alone.reasons);
    assert!(
        v.risk >= alone.risk,
        "{joined:?} is {:?}, {first:?} is {:?}: {:?}",
        v.risk,
        alone.risk,
        v.reasons
    );
}

#[test]
fn what_precedes_a_parse_error_is_judged_as_it_stands() {
    // Found by the bash_classify fuzz target: `*f"` is BLOCK (the glob can name a
    // destructive program), and adding `; z` let the unclosed quote swallow the rest, so
    // the name became `*f"; z` and the verdict only WARN. The text before the parser's
    // first error is judged on its own too: appending never makes a command less strict.
    for (first, joined) in [("*f\"", "*f\"; z"), ("rm -rf / '", "rm -rf / '; echo hi")] {
        let alone = classify(first);
        let v = classify(joined);
        assert!(
            v.risk >= alone.risk,
            "{joined:?} is {:?}, {first:?} is {:?}: {:?}",
            v.risk,
            alone.risk,
            v.reasons
        );
    }
}
