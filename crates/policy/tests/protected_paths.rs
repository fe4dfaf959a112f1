//! One protected-path list: the gate (file tools) and the classifier (bash)
//! protect the same directories, `.git`, `.atto` and `.attocode` wherever
//! they sit in the workspace, and atto's own config and data directories.

// Tests may unwrap: a panic here is a failed test, which is what we want.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use atto_policy::classify;
use atto_policy::gate::{Action, CallFacts, GateContext, PermissionSetting, decide};
use atto_protocol::DangerLevel;

/// Paths the one list protects, as a file tool would name them.
const PROTECTED: &[&str] = &[
    ".git/config",
    ".git",
    "./.git/hooks/pre-commit",
    ".atto/config.toml",
    ".attocode/swarm.yaml",
    "vendor/lib/.git/hooks/post-checkout",
    "sub/.attocode/swarm.yaml",
];

/// Near misses that are ordinary project files.
const ORDINARY: &[&str] = &[
    ".gitignore",
    ".github/workflows/ci.yml",
    "src/git/mod.rs",
    ".attocoderc",
    "docs/.atto.md",
];

fn yolo_write(path: &str) -> Action {
    let paths = [path.to_owned()];
    let ctx = GateContext {
        permission: PermissionSetting {
            mode: atto_policy::gate::parse_permission("yolo").unwrap().mode,
            deny_asks: false,
        },
        grants: &[],
        protected_dirs: &[],
    };
    let facts = CallFacts {
        tool: "write_file",
        level: DangerLevel::Low,
        mutates: true,
        bash: None,
        paths: &paths,
    };
    decide(&ctx, &facts).action
}

#[test]
fn the_gate_asks_for_every_protected_path_even_in_yolo() {
    for p in PROTECTED {
        assert_eq!(yolo_write(p), Action::Ask, "{p}");
    }
    for p in ORDINARY {
        assert_eq!(yolo_write(p), Action::Allow, "{p}");
    }
}

#[test]
fn the_classifier_marks_writes_to_every_protected_path() {
    for p in PROTECTED {
        for cmd in [
            format!("echo x > {p}"),
            format!("cp a {p}"),
            format!("tee {p}"),
        ] {
            assert!(classify(&cmd).protected_write, "{cmd}");
        }
        assert!(!classify(&format!("cat {p}")).protected_write, "cat {p}");
    }
    for p in ORDINARY {
        assert!(!classify(&format!("echo x > {p}")).protected_write, "{p}");
    }
}
