// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::worker::WorkerCommand;

/// The seed's "Full Example Configuration", verbatim.
const SEED_EXAMPLE: &str = "# .attocode/swarm.yaml
swarm:
  # Quality pipeline
  quality_gates: true
  quality_threshold: 3
  enable_concrete_validation: true
  enable_task_enrichment: true
  enrichment_min_description_chars: 80
  enable_verification: true
  max_verification_retries: 2

  # Retry & intervention
  worker_retries: 2
  max_dispatches_per_task: 5
  enable_user_intervention: false
  user_intervention_threshold: 3
";

fn parse(text: &str) -> Loaded {
    SwarmConfig::parse(text, Path::new("swarm.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> String {
    match SwarmConfig::parse(text, Path::new("swarm.yaml")) {
        Ok(loaded) => panic!("{text:?} was accepted: {:?}", loaded.config),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_seeds_full_example_loads_unchanged_without_warnings() {
    let loaded = parse(SEED_EXAMPLE);
    assert_eq!(loaded.warnings, Vec::<String>::new());
    assert_eq!(loaded.path.as_deref(), Some(Path::new("swarm.yaml")));
    // The example spells out the defaults.
    assert_eq!(loaded.config, SwarmConfig::default());

    // The same file with every value changed reads every change.
    let changed = SEED_EXAMPLE
        .replace("quality_gates: true", "quality_gates: false")
        .replace("quality_threshold: 3", "quality_threshold: 4")
        .replace(
            "enable_concrete_validation: true",
            "enable_concrete_validation: false",
        )
        .replace(
            "enable_task_enrichment: true",
            "enable_task_enrichment: false",
        )
        .replace("description_chars: 80", "description_chars: 120")
        .replace("enable_verification: true", "enable_verification: false")
        .replace("max_verification_retries: 2", "max_verification_retries: 1")
        .replace("worker_retries: 2", "worker_retries: 4")
        .replace("max_dispatches_per_task: 5", "max_dispatches_per_task: 9")
        .replace(
            "enable_user_intervention: false",
            "enable_user_intervention: true",
        )
        .replace(
            "user_intervention_threshold: 3",
            "user_intervention_threshold: 2",
        );
    let loaded = parse(&changed);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert!(!c.quality.quality_gates);
    assert_eq!(c.quality.quality_threshold, 4);
    assert!(!c.quality.enable_concrete_validation);
    assert!(!c.enable_task_enrichment);
    assert_eq!(c.enrichment_min_description_chars, 120);
    assert!(!c.quality.enable_verification);
    assert_eq!(c.quality.max_verification_retries, 1);
    assert_eq!(c.worker_retries, 4);
    assert_eq!(c.max_dispatches_per_task, 9);
    assert!(c.enable_user_intervention);
    assert_eq!(c.user_intervention_threshold, 2);
}

#[test]
fn every_swarm_field_is_read() {
    let text = "swarm:
  enable_task_enrichment: false
  enrichment_min_description_chars: 40
  enable_user_intervention: true
  user_intervention_threshold: 5
  worker_retries: 10
  max_dispatches_per_task: 20
  max_workers: 7
  models:
    decomposer: big
    worker: medium
    tester: small
    fallback: [spare-1, \"spare-2\"]
  isolation: worktree
  worker_command:
    - ssh
    - node7
    - atto exec
    - \"{args}\"
  worker_timeout_secs: 90
  worker_max_tokens: 50000
  max_budget_tokens: 2000000
  max_budget_usd: 12.5
  max_tasks: 100
";
    let loaded = parse(text);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let expected = SwarmConfig {
        quality: QualityConfig::default(),
        enable_task_enrichment: false,
        enrichment_min_description_chars: 40,
        enable_user_intervention: true,
        user_intervention_threshold: 5,
        worker_retries: 10,
        max_dispatches_per_task: 20,
        max_workers: 7,
        models: RoleModels {
            decomposer: "big".into(),
            worker: "medium".into(),
            tester: "small".into(),
            fallback: vec!["spare-1".into(), "spare-2".into()],
        },
        isolation: Isolation::Worktree,
        worker_command: WorkerCommand {
            words: vec![
                "ssh".into(),
                "node7".into(),
                "atto exec".into(),
                "{args}".into(),
            ],
            pinned: Vec::new(),
        },
        worker_timeout_secs: 90,
        worker_max_tokens: Some(50_000),
        max_budget_tokens: Some(2_000_000),
        max_budget_usd: Some(12.5),
        max_tasks: 100,
        launcher: crate::remote::launcher::Launcher::Local,
        slurm: crate::remote::launcher::Slurm::default(),
        ssh: crate::remote::launcher::Ssh::default(),
    };
    assert_eq!(loaded.config, expected);

    // Whole dollars are dollars too; an empty value keeps the default.
    let c = parse("max_budget_usd: 3\nmax_workers:\nisolation: shared\n").config;
    assert_eq!(c.max_budget_usd, Some(3.0));
    assert_eq!(c.max_workers, 4);
    assert_eq!(c.isolation, Isolation::Shared);
}

#[test]
fn the_top_level_form_is_read_with_the_quality_fields() {
    let loaded =
        parse("# no swarm: key\nmax_workers: 2\nquality_threshold: 5\nmodels:\n  worker: w\n");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.config.max_workers, 2);
    assert_eq!(loaded.config.models.worker, "w");
    assert_eq!(loaded.config.quality.quality_threshold, 5);
}

#[test]
fn unknown_keys_are_warnings_with_their_lines() {
    let text = "version: 2
swarm:
  max_workers: 3
  # a comment
  max_wrokers: 5
  models:
    worker: w
    judge: j
";
    let loaded = SwarmConfig::parse(text, Path::new(".atto/swarm.yaml")).unwrap();
    assert_eq!(loaded.config.max_workers, 3);
    assert_eq!(loaded.config.models.worker, "w");
    assert_eq!(
        loaded.warnings,
        [
            ".atto/swarm.yaml:1: unknown key 'version' (ignored)",
            ".atto/swarm.yaml:5: unknown key 'max_wrokers' (ignored)",
            ".atto/swarm.yaml:8: unknown key 'models.judge' (ignored)",
        ]
    );

    let loaded = parse("max_workers: 2\n\nflavour: x\n");
    assert_eq!(
        loaded.warnings,
        ["swarm.yaml:3: unknown key 'flavour' (ignored)"]
    );
}

#[test]
fn wrong_types_are_errors_naming_the_key_and_line() {
    let cases: &[(&str, &str)] = &[
        (
            "swarm:\n  max_workers: 2\n\n  worker_retries: two\n",
            "line 4: worker_retries: expected an integer, got \"two\"",
        ),
        (
            "worker_retries: 2.5\n",
            "line 1: worker_retries: expected an integer, got 2.5",
        ),
        (
            "swarm:\n  enable_task_enrichment: \"true\"\n",
            "line 2: enable_task_enrichment: expected true or false, got \"true\"",
        ),
        (
            "swarm:\n  isolation: bubble\n",
            "line 2: isolation: must be shared or worktree, not \"bubble\"",
        ),
        (
            "worker_command: atto exec\n",
            "line 1: worker_command: expected a list of strings, got \"atto exec\"",
        ),
        (
            "worker_command: [ssh, node7, \"cd {workspace} && atto\", exec, \"{args}\"]\n",
            "line 1: worker_command: \"cd {workspace} && atto\" has {workspace} inside it; a \
             placeholder must be an argument of its own",
        ),
        (
            "worker_command: [ssh, node7, atto, exec]\n",
            "line 1: worker_command: [\"ssh\", \"node7\", \"atto\", \"exec\"] has no \"{args}\"",
        ),
        (
            "swarm:\n  models:\n    fallback:\n      - a\n      - 3\n",
            "line 5: models.fallback: expected a list of strings, got 3",
        ),
        (
            "swarm:\n  models: big\n",
            "line 2: models: expected a mapping of decomposer, worker, tester, fallback, got \"big\"",
        ),
        (
            "swarm:\n  max_budget_usd: lots\n",
            "line 2: max_budget_usd: expected a number, got \"lots\"",
        ),
        (
            "swarm: [1, 2]\n",
            "line 1: swarm: expected a mapping, got a list",
        ),
        (
            "- a\n- b\n",
            "line 1: expected a mapping of settings, got a list",
        ),
        // The quality fields' errors are the quality parser's, with the line put first.
        (
            "swarm:\n  max_workers: 2\n  quality_threshold: high\n",
            "line 3: quality_threshold: invalid u8 (got \"high\")",
        ),
        (
            "\nquality_gates: 3\n",
            "line 2: quality_gates: invalid type: integer `3`, expected a boolean (got 3)",
        ),
        (
            "swarm:\n  quality_threshold: 9\n",
            "line 2: quality_threshold must be 1 to 5, not 9",
        ),
        // Not YAML at all.
        ("swarm:\n  max_workers: [1, 2\n", "line 3: "),
        ("a: 1\na: 2\n", "line 2: duplicate mapping key"),
    ];
    for (text, expected) in cases {
        let err = error(text);
        assert!(err.contains(expected), "{text:?}: {err}");
        assert!(
            err.starts_with("invalid swarm.yaml: line "),
            "{text:?}: {err}"
        );
        assert!(
            !err.contains('\n'),
            "{text:?}: one line, not a snippet: {err}"
        );
    }
}

#[test]
fn values_out_of_range_are_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "worker_retries: 11",
            "worker_retries: must be 0 to 10, not 11",
        ),
        (
            "worker_retries: -1",
            "worker_retries: must be 0 to 10, not -1",
        ),
        ("max_workers: 0", "max_workers: must be 1 to 20, not 0"),
        ("max_workers: 21", "max_workers: must be 1 to 20, not 21"),
        (
            "max_dispatches_per_task: 0",
            "max_dispatches_per_task: must be 1 to 20, not 0",
        ),
        ("max_tasks: 101", "max_tasks: must be 1 to 100, not 101"),
        (
            "user_intervention_threshold: 0",
            "user_intervention_threshold: must be at least 1, not 0",
        ),
        (
            "user_intervention_threshold: 5000000000",
            "user_intervention_threshold: must be at most 4294967295",
        ),
        (
            "worker_timeout_secs: 0",
            "worker_timeout_secs: must be at least 1, not 0",
        ),
        (
            "max_budget_usd: 0",
            "max_budget_usd: must be more than 0, not 0",
        ),
        (
            "max_budget_usd: -2.5",
            "max_budget_usd: must be more than 0, not -2.5",
        ),
        (
            "enrichment_min_description_chars: -5",
            "enrichment_min_description_chars: must be at least 0, not -5",
        ),
    ];
    for (line, expected) in cases {
        let err = error(&format!("swarm:\n  {line}\n"));
        assert!(
            err.contains(&format!("line 2: {expected}")),
            "{line}: {err}"
        );
    }
}

#[test]
fn an_empty_file_means_the_defaults() {
    for text in [
        "",
        "\n",
        "# nothing yet\n",
        "swarm:\n",
        "swarm:\n  # later\n",
    ] {
        let loaded = parse(text);
        assert_eq!(loaded.config, SwarmConfig::default(), "{text:?}");
        assert!(loaded.warnings.is_empty(), "{text:?}");
    }
}

#[test]
fn atto_s_file_wins_over_attocode_s() {
    let dir = tempfile::tempdir().unwrap();
    let none = SwarmConfig::load(dir.path()).unwrap();
    assert_eq!(none.path, None);
    assert_eq!(none.config, SwarmConfig::default());

    std::fs::create_dir_all(dir.path().join(".attocode")).unwrap();
    std::fs::write(
        dir.path().join(".attocode/swarm.yaml"),
        "swarm:\n  max_workers: 6\n",
    )
    .unwrap();
    let attocode = SwarmConfig::load(dir.path()).unwrap();
    assert_eq!(attocode.config.max_workers, 6);
    assert_eq!(attocode.path, Some(dir.path().join(".attocode/swarm.yaml")));

    std::fs::create_dir_all(dir.path().join(".atto")).unwrap();
    std::fs::write(dir.path().join(".atto/swarm.yaml"), "max_workers: 2\n").unwrap();
    let atto = SwarmConfig::load(dir.path()).unwrap();
    assert_eq!(atto.config.max_workers, 2);
    assert_eq!(atto.path, Some(dir.path().join(".atto/swarm.yaml")));
}

#[test]
fn the_quality_keys_listed_here_are_the_ones_quality_reads() {
    // A value other than the default for each, so a key quality stopped reading (and
    // that would then be silently ignored instead of warned about) fails here.
    let values: &[(&str, &str)] = &[
        ("quality_gates", "false"),
        ("quality_threshold", "5"),
        ("test_quality_threshold", "2"),
        ("test_require_execution_evidence", "false"),
        ("enable_verification", "false"),
        ("enable_concrete_validation", "false"),
        ("max_verification_retries", "7"),
        ("quality_gate_model", "judge-model"),
        ("verification_timeout_secs", "17"),
    ];
    assert_eq!(
        values.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        QUALITY_KEYS
    );
    for (key, value) in values {
        let q = QualityConfig::parse(&format!("{key}: {value}\n"), Path::new("q.yaml")).unwrap();
        assert_ne!(q, QualityConfig::default(), "{key}");
        let loaded = parse(&format!("swarm:\n  {key}: {value}\n"));
        assert_eq!(loaded.config.quality, q, "{key}");
        assert!(loaded.warnings.is_empty(), "{key}");
    }
}

#[test]
fn what_needs_trust_is_what_starts_a_process_or_chooses_a_model() {
    let harmless = parse("swarm:\n  quality_gates: false\n  max_workers: 2\n  surprise: 1\n");
    assert!(
        harmless.needs_trust.is_empty(),
        "{:?}",
        harmless.needs_trust
    );
    let planted = parse(
        "swarm:\n  max_workers: 2\n  worker_command: [sh, -c, \"touch x\", \"{args}\"]\n  models:\n    worker: big\n  quality_gate_model: judge\n",
    );
    assert_eq!(
        planted.needs_trust,
        vec![
            "line 3: worker_command",
            "line 4: models",
            "line 6: quality_gate_model"
        ]
    );
    assert!(planted.text.contains("touch x"));
}
