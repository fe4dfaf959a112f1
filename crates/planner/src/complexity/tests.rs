//! The complexity classifier against a table of realistic requests, one tier each, and
//! the reasons it gives.

use super::*;
use ComplexityTier::{Complex, DeepResearch, Medium, Simple};

/// Realistic requests and the tier a careful reader would give each.
const TABLE: &[(&str, ComplexityTier)] = &[
    // The `/auto` example of the advanced-features seed: a list of deliverables.
    (
        "Build a REST API with authentication, tests, and documentation",
        Medium,
    ),
    (
        "Create a CLI with config loading, logging, retries, and a man page",
        Medium,
    ),
    // SIMPLE: one step, or a question.
    ("fix the typo in README.md", Simple),
    ("what does parse_args do?", Simple),
    ("rename `foo` to `bar` in src/lib.rs", Simple),
    ("why is the build failing?", Simple),
    ("run the tests", Simple),
    ("explain how the session actor handles cancellation", Simple),
    ("bump serde to 1.0.200", Simple),
    ("where is the config file loaded?", Simple),
    ("add a doc comment to Limits::default", Simple),
    (
        "remove the unused import in crates/core/src/plan.rs",
        Simple,
    ),
    ("hi", Simple),
    ("add tests for parse, render and diff", Simple),
    ("how do I refactor this function?", Simple),
    ("is the prefix check case-sensitive?", Simple),
    ("which crate owns the tool orchestrator?", Simple),
    ("refactor everything", Simple),
    (
        "Can you add a /clear command that resets the conversation?",
        Simple,
    ),
    (
        "show me the diff for node.js support at https://example.com/a/b.rs",
        Simple,
    ),
    // MEDIUM: a few steps, or one substantial change.
    ("add a --verbose flag to the CLI and print timings", Medium),
    (
        "fix the failing test in tests/e2e/main.rs and update the snapshot",
        Medium,
    ),
    (
        "implement a retry with exponential backoff for the HTTP client",
        Medium,
    ),
    ("extract the retry logic into its own module", Medium),
    ("migrate the config loader from toml to yaml", Medium),
    (
        "update src/main.rs and src/cli.rs to use the new Options struct",
        Medium,
    ),
    (
        "first add a failing test for the parser bug, then fix it",
        Medium,
    ),
    (
        "optimize the diff rendering in the TUI so large files scroll smoothly",
        Medium,
    ),
    (
        "rename the `Limits` struct to `TurnLimits` and update every caller",
        Medium,
    ),
    (
        "integrate the new sandbox crate with the tool orchestrator",
        Medium,
    ),
    (
        "implement the /goals command with add and done subcommands",
        Medium,
    ),
    (
        "write a README section for plan mode and link it from docs/index.md",
        Medium,
    ),
    ("1. add a `--json` flag 2. print the result as JSON", Medium),
    (
        "make the spinner configurable via config.toml and document the option",
        Medium,
    ),
    (
        "can you look into why CI is failing on main and fix it",
        Medium,
    ),
    // COMPLEX: significant planning, several files or stages.
    (
        "refactor the auth module to use JWT, then migrate all callers in src/api/ and update the tests",
        Complex,
    ),
    (
        "restructure the tools crate into one module per tool, move the shared helpers into tools/src/util.rs, and update the imports across the workspace",
        Complex,
    ),
    (
        "implement OAuth login: add the callback endpoint in src/server/auth.rs, store tokens in src/store/tokens.rs, and add tests for both",
        Complex,
    ),
    (
        "migrate the store from JSON files to SQLite: first write the schema, then port the readers, and finally delete the old code",
        Complex,
    ),
    (
        "redesign the permission system so grants are scoped per project, and migrate existing grants in the store",
        Complex,
    ),
    (
        "implement rate limiting in src/llm/client.rs and src/llm/retry.rs, then add integration tests in tests/rate_limit.rs",
        Complex,
    ),
    (
        "refactor src/session.rs into smaller modules and update the imports in src/lib.rs and src/handle.rs",
        Complex,
    ),
    (
        "move all the provider code into a new atto-llm crate, then update every crate that depends on it and fix the build",
        Complex,
    ),
    (
        "Please rewrite the markdown renderer in src/render.rs so code blocks are highlighted, and add snapshot tests for it",
        Medium,
    ),
    (
        "- add a `threads` table to the store\n- write the fork and switch commands\n- show the thread name in the status bar",
        Complex,
    ),
    // DEEP_RESEARCH: exploration plus wide, multi-stage change.
    (
        "investigate why builds are slow across the codebase, compare caching strategies, implement the best one in every crate, then benchmark and document the results",
        DeepResearch,
    ),
    (
        "audit every crate for unwrap() calls, replace them with proper errors, add tests for each failure path, then document the conventions in docs/errors.md",
        Complex,
    ),
    (
        "research how other agents implement context compaction, compare three approaches, prototype the best one in crates/core, benchmark it against the current truncation, and write up the findings",
        DeepResearch,
    ),
    (
        "rewrite the TUI on top of ratatui: first port the chat view, then the diff view and the plan panel, migrate all key bindings, update every snapshot test, and finally remove the old renderer from src/tui/",
        DeepResearch,
    ),
    (
        "investigate the memory growth across all long-running sessions, profile the store and the session actor, identify the leaks, fix them in every module involved, and add regression benchmarks",
        DeepResearch,
    ),
    (
        "Architect a plugin system: design the plugin API, implement loading from ~/.atto/plugins/, migrate the built-in tools to plugins across the codebase, then write docs and an example plugin",
        DeepResearch,
    ),
    (
        "migrate the whole workspace from tokio 0.2 to tokio 1.x, refactor every crate that uses the old runtime API, update all tests, then benchmark startup and compare with the old version",
        DeepResearch,
    ),
    (
        "explore the codebase to understand how permissions flow from the CLI through the policy crate to the sandbox, then redesign the flow so every tool call is checked in one place, and migrate all callers",
        DeepResearch,
    ),
    (
        "We need to overhaul error handling.\n1. Audit crates/tools and crates/core for ad-hoc string errors.\n2. Design a ToolError enum.\n3. Migrate every tool to it.\n4. Update the orchestrator in crates/core/src/orchestrator.rs.\n5. Add tests and document the policy in docs/errors.md.",
        DeepResearch,
    ),
    (
        "figure out why the e2e tests are flaky: investigate the timing in tests/e2e/, compare runs with and without the sandbox, identify the race, fix it across all crates, and document the findings in docs/testing.md",
        DeepResearch,
    ),
    (
        "evaluate whether we should replace the JSON session store with SQLite: analyze the access patterns in crates/store, prototype a schema, migrate a copy of real sessions, compare the speed, and write a recommendation",
        DeepResearch,
    ),
];

/// How far inside its tier a table entry must score, so that one small weight change
/// does not silently flip it.
const MARGIN: f64 = 0.05;

#[test]
fn table_of_requests_gets_the_expected_tiers_with_a_margin() {
    let mut wrong = Vec::new();
    for (request, expected) in TABLE {
        let c = classify(request);
        let (low, high) = match expected {
            Simple => (f64::NEG_INFINITY, MEDIUM_FROM),
            Medium => (MEDIUM_FROM, COMPLEX_FROM),
            Complex => (COMPLEX_FROM, COMPLEX_UP_TO),
            DeepResearch => (COMPLEX_UP_TO, f64::INFINITY),
        };
        let margin = (c.score - low).min(high - c.score);
        if c.tier != *expected || margin < MARGIN - 1e-9 {
            wrong.push(format!(
                "{request:?}: {} at {}, expected {} (reasons: {:?})",
                c.tier.as_str(),
                c.score,
                expected.as_str(),
                c.reasons
            ));
        }
    }
    assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
}

#[test]
fn table_covers_every_tier() {
    for tier in [Simple, Medium, Complex, DeepResearch] {
        let n = TABLE.iter().filter(|(_, t)| *t == tier).count();
        assert!(n >= 10, "{} has only {n} examples", tier.as_str());
    }
}

#[test]
fn plans_exactly_the_complex_and_deep_requests_by_default() {
    for (request, tier) in TABLE {
        let c = classify(request);
        let expected = matches!(tier, Complex | DeepResearch);
        assert_eq!(
            should_create_plan(&c, DEFAULT_PLAN_THRESHOLD),
            expected,
            "{request:?} at {}",
            c.score
        );
    }
}

fn with_score(score: f64) -> Complexity {
    Complexity {
        score,
        tier: tier_for(score),
        reasons: Vec::new(),
    }
}

#[test]
fn plan_threshold_is_inclusive() {
    assert!(should_create_plan(&with_score(1.5), DEFAULT_PLAN_THRESHOLD));
    assert!(!should_create_plan(
        &with_score(1.49),
        DEFAULT_PLAN_THRESHOLD
    ));
    assert!(should_create_plan(&with_score(0.5), 0.5));
    assert!(!should_create_plan(&with_score(2.5), 3.0));
    assert!(should_create_plan(&with_score(0.0), 0.0));
}

#[test]
fn tier_bounds_follow_the_seed() {
    let cases = [
        (f64::NEG_INFINITY, Simple),
        (-1.0, Simple),
        (0.0, Simple),
        (0.49, Simple),
        (0.5, Medium),
        (1.0, Medium),
        (1.49, Medium),
        (1.5, Complex),
        (2.0, Complex),
        (2.5, Complex),
        (2.51, DeepResearch),
        (f64::INFINITY, DeepResearch),
        (f64::NAN, Simple),
    ];
    for (score, tier) in cases {
        assert_eq!(tier_for(score), tier, "score {score}");
    }
}

/// The signed point values at the end of the reason lines.
fn reason_points(reasons: &[String]) -> Vec<f64> {
    reasons
        .iter()
        .filter_map(|r| r.rsplit_once(" ("))
        .filter_map(|(_, p)| p.strip_suffix(')')?.parse::<f64>().ok())
        .collect()
}

#[test]
fn every_signal_leaves_a_reason_and_the_reasons_add_up() {
    let request = "We must overhaul logging and investigate the slow startup:\n\
                   1. refactor src/log.rs and crates/core/src/session.rs,\n\
                   2. then benchmark every crate,\n\
                   3. finally update all files that match src/**/*.rs.";
    let c = classify(request);
    let joined = c.reasons.join("\n");
    for needle in [
        "words (+",
        "change keywords: overhaul, refactor (+0.85)",
        "research keywords: investigate, benchmark (+0.8)",
        "separate actions (+",
        "2 sequencing markers (then, finally) (+0.4)",
        "3 list items (+0.75)",
        "mentions 2 file paths (+0.5)",
        "broad scope: \"every … crate\", \"all … files\", glob pattern (+0.7)",
    ] {
        assert!(joined.contains(needle), "no {needle:?} in:\n{joined}");
    }
    let sum: f64 = reason_points(&c.reasons).iter().sum();
    assert!(
        (sum - c.score).abs() < 1e-9,
        "{sum} != {}:\n{joined}",
        c.score
    );
    assert_eq!(c.tier, DeepResearch);
}

#[test]
fn questions_and_short_requests_say_why_they_score_low() {
    let c = classify("how should we restructure the plugin loader?");
    assert!(
        c.reasons.iter().any(|r| r.starts_with("asks a question")),
        "{c:?}"
    );
    assert!(c.reasons.iter().any(|r| r.contains("restructure")), "{c:?}");
    assert_eq!(c.tier, Simple);

    let c = classify("refactor, migrate, redesign");
    assert_eq!(c.score, 0.4);
    assert!(
        c.reasons
            .iter()
            .any(|r| r == "very short request (3 words): score capped at 0.4"),
        "{c:?}"
    );

    let c = classify("");
    assert_eq!((c.score, c.tier), (0.0, Simple));
    assert_eq!(c.reasons, ["no complexity signals"]);
}

#[test]
fn word_lists_are_sorted_for_binary_search() {
    for list in [PLACES, QUESTION_WORDS] {
        assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
    }
}

#[test]
fn keywords_match_whole_words_only() {
    let found = |text: &str| {
        let lowered = text.to_ascii_lowercase();
        let (change, research) = keywords(&scan_words(&lowered));
        [change, research].concat()
    };
    assert!(found("fix the prefix and the suffix").is_empty());
    assert!(found("transport layer, reimplemented, portable, movement").is_empty());
    assert!(found("the profiler and comparator").is_empty());
    assert_eq!(found("Refactoring the REFACTOR"), ["refactor"]);
    assert_eq!(
        found("the migration; (implementation)"),
        ["migrate", "implement"]
    );
    assert!(found("integration tests").is_empty());
}

#[test]
fn paths_are_told_from_words_and_urls() {
    let cases = [
        ("README.md", Some("readme.md")),
        ("`src/lib.rs`,", Some("src/lib.rs")),
        ("src/api/", Some("src/api/")),
        ("crates/llm", Some("crates/llm")),
        ("./run.sh", Some("./run.sh")),
        ("~/.atto/plugins/", Some("~/.atto/plugins/")),
        ("/etc/hosts", Some("/etc/hosts")),
        ("foo.rs:12", Some("foo.rs")),
        ("(docs/errors.md).", Some("docs/errors.md")),
        ("a/b/c", Some("a/b/c")),
        ("and/or", None),
        ("client/server", None),
        ("/fork", None),
        ("https://example.com/a/b.rs", None),
        ("www.example.com", None),
        ("node.js", None),
        ("1.0.200", None),
        ("e.g.", None),
        ("limits::default", None),
        ("*.rs", None),
        ("someone@example.md", None),
        ("/", None),
        ("//", None),
    ];
    for (token, expected) in cases {
        let lowered = token.to_ascii_lowercase();
        assert_eq!(as_path(&lowered), expected, "{token:?}");
    }
}

#[test]
fn a_path_mentioned_twice_counts_once() {
    let tokens = ["src/a.rs", "and", "`src/a.rs`", "src/b.rs"];
    assert_eq!(file_paths(&tokens), 2);
}

#[test]
fn numbered_items_count_only_as_an_ordered_run() {
    let items = |text: &str| {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        list_items(text, &tokens)
    };
    assert_eq!(items("1. add x 2. fix y 3) test z"), 3);
    assert_eq!(items("(1) a (2) b"), 2);
    assert_eq!(items("bump to version 2. then done"), 0);
    assert_eq!(items("3. a 1. b"), 0);
    assert_eq!(items("- one\n  * two\nthree"), 2);
    assert_eq!(items("-    let x = 1;\n+    let x = 2;\n-\n- "), 0);
}

#[test]
fn actions_open_clauses() {
    let count = |text: &str| {
        let lowered = text.to_ascii_lowercase();
        actions(&scan_words(&lowered))
    };
    assert_eq!(count("fix the failing test"), 1);
    assert_eq!(count("add a flag and print timings"), 2);
    assert_eq!(
        count("Can you add X, then update Y. Finally, run the tests."),
        3
    );
    assert_eq!(count("I want to add X and document it"), 2);
    assert_eq!(count("the build and the test and the release"), 0);
}

#[test]
fn polite_requests_are_not_questions() {
    let question = |text: &str| {
        let lowered = text.to_ascii_lowercase();
        let words = scan_words(&lowered);
        is_question(text, &words, actions(&words))
    };
    assert!(question("what does parse_args do?"));
    assert!(question("Does it build"));
    assert!(question("the tests pass?"));
    assert!(question("can you explain the orchestrator?"));
    assert!(!question("can you add a /clear command?"));
    assert!(!question("Could you please update the docs?"));
    assert!(!question("please fix the build"));
    assert!(!question("fix this?"));
    assert!(!question(""));
}

#[test]
fn odd_inputs_get_a_sane_classification() {
    let max = f64::from(
        70 + CHANGE_KEYWORDS.cap
            + RESEARCH_KEYWORDS.cap
            + ACTIONS.cap
            + SEQUENCE.cap
            + LIST_ITEMS.cap
            + PATHS.cap
            + SCOPE.cap,
    ) / 100.0;
    let huge_words = "refactor src/a.rs then migrate every crate, ".repeat(2_500);
    let many_files = "x.rs ".repeat(20_000);
    let inputs = [
        String::new(),
        " \n\t ".to_owned(),
        "?".to_owned(),
        "....////----''''".to_owned(),
        "\u{0}\u{7f}\u{feff}".to_owned(),
        "réfactor ünd migrâte — 修复所有文件 🦀🦀 then ✓".to_owned(),
        "e\u{301}\u{301}\u{301} \u{202e}txet desrever".to_owned(),
        "1. 2. 3. 4. 5. 6. 7. 8. 9. 10. 11. 12.".to_owned(),
        "/".repeat(100_000),
        "a".repeat(100_000),
        "🦀".repeat(25_000),
        huge_words.clone(),
        many_files.clone(),
    ];
    for input in &inputs {
        let c = classify(input);
        let shown: String = input.chars().take(40).collect();
        assert!(
            c.score.is_finite() && c.score >= 0.0,
            "{shown:?}: {}",
            c.score
        );
        assert!(c.score <= max, "{shown:?}: {} above {max}", c.score);
        assert_eq!(c.tier, tier_for(c.score), "{shown:?}");
        assert!(!c.reasons.is_empty(), "{shown:?}");
        assert_eq!(classify(input), c, "{shown:?} is not deterministic");
    }
    assert_eq!(classify(&huge_words).tier, DeepResearch);
    // Only one distinct path, however often it is repeated.
    let repeated = classify(&many_files);
    assert!(
        repeated
            .reasons
            .iter()
            .any(|r| r == "mentions 1 file path (+0.2)"),
        "{repeated:?}"
    );
}
