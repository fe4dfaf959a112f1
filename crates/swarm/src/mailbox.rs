//! The seed's permission mailbox: a worker's approval request comes to the coordinator,
//! which answers what it safely can and passes the rest to a person. Three tiers: reads are
//! approved, destructive calls are refused with a reason the worker's model can act on, and
//! everything else is asked. Writes are approved only for tasks that may write.
//!
//! It judges the request as the worker's gate decided it (tool, risk label, and the typed
//! `protected` and `unsandboxed` marks, which always go to a person); it never reads the
//! subject, which is display text. It does not classify commands or paths itself
//! (atto-policy did that in the worker, on the path the kernel resolved) and does not send
//! the answer or talk to the person (the coordinator does).

use atto_protocol::{ApprovalDecision, ApprovalRequest, ToolKind};

/// How the mailbox answers a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tier {
    /// Run it; no person is asked.
    AutoApprove,
    /// Refuse it; the reason goes to the worker's model and says what to do instead.
    AutoDeny(String),
    /// A person decides.
    Ask,
}

impl Tier {
    /// The name used in `swarm.permission` events.
    pub fn as_str(&self) -> &'static str {
        match self {
            Tier::AutoApprove => "auto_approved",
            Tier::AutoDeny(_) => "auto_denied",
            Tier::Ask => "asked",
        }
    }

    /// The answer to send the worker, when the mailbox gives one itself.
    pub fn decision(&self) -> Option<ApprovalDecision> {
        match self {
            Tier::AutoApprove => Some(ApprovalDecision::Yes),
            Tier::AutoDeny(reason) => Some(ApprovalDecision::No {
                reason: Some(reason.clone()),
            }),
            Tier::Ask => None,
        }
    }
}

/// Read-only tool names of the seed's workers, approved by name as well.
const SEED_READ_ONLY: &[&str] = &["list_dir", "search", "ast_query", "view"];

/// Prefixes of read-only tool names; approved only when the worker's gate labels the call
/// `SAFE`, so a `search_and_replace` that writes is not approved by its name.
const READ_ONLY_PREFIXES: &[&str] = &["read", "search"];

/// atto's tools that change only the worker's own session records (its task list, a plan
/// step's result), never the workspace (danger level `SAFE`).
const SESSION_BOOKKEEPING: &[&str] = &[
    "task_create",
    "task_update",
    "task_list",
    "plan_step_result",
];

/// The seed's tools that write files, beyond atto's own (which say so by their kind).
const SEED_WRITES: &[&str] = &["multi_edit"];

/// Decides how to answer `request` from a worker whose task may (`write_access`) or may not
/// change files.
pub fn decide(request: &ApprovalRequest, write_access: bool) -> Tier {
    let tool = request.tool.as_str();
    // atto's built-in tools say what they do; any other tool is known by name only.
    let builtin = atto_tools::builtin_tool(tool);
    let kind = builtin.as_ref().map(|t| t.kind()).unwrap_or_default();
    // Only a person may let a call run without the OS sandbox, or write where the gate
    // protects (repository internals, atto's own files), whatever the call is. Both are the
    // worker's gate's typed judgement of the resolved call: the subject is display text and
    // says nothing here (a symlink's path does not name what it leads to).
    if request.unsandboxed || request.protected {
        return Tier::Ask;
    }
    if kind == ToolKind::Execute {
        return if risk_is(request, "SAFE") {
            Tier::AutoApprove
        } else if risk_is(request, "BLOCK") {
            Tier::AutoDeny(
                "this command was judged BLOCK (destructive or irreversible), and the swarm \
                 never runs such commands; it was not run. Use a narrower command that does \
                 only what the task needs, or say in your final answer what a person should \
                 run and why."
                    .to_owned(),
            )
        } else {
            Tier::Ask
        };
    }
    if kind == ToolKind::Delete {
        return Tier::AutoDeny(
            "the swarm does not delete files on its own; the file was not deleted. Leave it in \
             place and say in your final answer which file should be deleted and why."
                .to_owned(),
        );
    }
    match tool {
        "drop_table" | "rm_rf" => {
            return Tier::AutoDeny(format!(
                "`{tool}` is destructive and the swarm never runs it on its own; it was not \
                 run. Finish the task without it, and say in your final answer what a person \
                 should run and why."
            ));
        }
        _ => {}
    }
    let read_only = builtin
        .as_ref()
        .is_some_and(|t| t.read_only(&request.arguments))
        || SEED_READ_ONLY.contains(&tool)
        || SESSION_BOOKKEEPING.contains(&tool)
        || (READ_ONLY_PREFIXES.iter().any(|p| tool.starts_with(p)) && risk_is(request, "SAFE"));
    if read_only {
        return Tier::AutoApprove;
    }
    if kind == ToolKind::Edit || SEED_WRITES.contains(&tool) {
        if !write_access {
            return Tier::AutoDeny(format!(
                "this worker's task is read-only: it must not change files, so `{tool}` was \
                 not run. Describe the change you would make in your final answer instead."
            ));
        }
        return Tier::AutoApprove;
    }
    Tier::Ask
}

fn risk_is(request: &ApprovalRequest, label: &str) -> bool {
    request.risk.trim().eq_ignore_ascii_case(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, subject: &str, risk: &str) -> ApprovalRequest {
        ApprovalRequest {
            id: "approval-1".into(),
            call_id: "call-1".into(),
            tool: tool.into(),
            kind: atto_tools::builtin_tool(tool)
                .map(|t| t.kind())
                .unwrap_or_default(),
            subject: subject.into(),
            risk: risk.into(),
            reasons: vec!["decided by: permission matrix: Strict × SAFE".into()],
            suggested_rule: format!("{tool}({subject})"),
            unsandboxed: false,
            protected: false,
            subagent: None,
            arguments: serde_json::Value::Null,
        }
    }

    #[derive(Debug, PartialEq)]
    enum Want {
        Approve,
        Deny,
        Ask,
    }

    fn kind(tier: &Tier) -> Want {
        match tier {
            Tier::AutoApprove => Want::Approve,
            Tier::AutoDeny(_) => Want::Deny,
            Tier::Ask => Want::Ask,
        }
    }

    #[test]
    fn requests_fall_into_their_tiers() {
        use Want::{Approve, Ask, Deny};
        // (tool, subject, risk, write access, tier)
        let cases: &[(&str, &str, &str, bool, Want)] = &[
            // atto's read-only tools, with or without write access.
            ("read_file", "src/a.rs", "SAFE", false, Approve),
            ("list_files", "src", "SAFE", false, Approve),
            ("glob", "**/*.rs", "SAFE", true, Approve),
            ("grep", "fn main", "SAFE", false, Approve),
            // The seed's names, and names by prefix when the gate says SAFE.
            ("list_dir", "src", "SAFE", false, Approve),
            ("search", "x", "SAFE", false, Approve),
            ("ast_query", "x", "SAFE", false, Approve),
            ("view", "x", "SAFE", false, Approve),
            ("read_many_files", "a b", "SAFE", false, Approve),
            ("search_symbols", "Foo", "safe", false, Approve),
            ("search_and_replace", "a -> b", "LOW", true, Ask),
            // The worker's own session records.
            ("task_create", "t", "SAFE", false, Approve),
            ("task_update", "t", "SAFE", false, Approve),
            ("task_list", "", "SAFE", false, Approve),
            ("plan_step_result", "s1", "SAFE", false, Approve),
            // bash: only SAFE is approved, BLOCK refused, the rest asked.
            ("bash", "ls -la", "SAFE", false, Approve),
            ("bash", "pytest -q", "WARN", true, Ask),
            ("bash", "rm -rf /", "BLOCK", true, Deny),
            // Destructive tools, whatever the access.
            ("delete_file", "delete src/a.rs", "LOW", true, Deny),
            ("drop_table", "users", "HIGH", true, Deny),
            ("rm_rf", "build", "HIGH", true, Deny),
            // Writes follow the task's access.
            (
                "write_file",
                "write src/a.rs (3 bytes):\nabc",
                "LOW",
                true,
                Approve,
            ),
            ("edit_file", "edit src/a.rs:\n-a\n+b", "LOW", true, Approve),
            ("apply_patch", "apply_patch {}", "LOW", true, Approve),
            ("multi_edit", "src/a.rs", "LOW", true, Approve),
            (
                "write_file",
                "write src/a.rs (3 bytes):\nabc",
                "LOW",
                false,
                Deny,
            ),
            ("edit_file", "edit src/a.rs:\n-a\n+b", "LOW", false, Deny),
            ("apply_patch", "apply_patch {}", "LOW", false, Deny),
            // Everything else.
            ("spawn_agent", "review", "LOW", true, Ask),
            ("revert_turn", "3", "MEDIUM", true, Ask),
            ("web_fetch", "https://example.com", "MEDIUM", true, Ask),
        ];
        for (tool, subject, risk, write, want) in cases {
            let got = decide(&request(tool, subject, risk), *write);
            assert_eq!(kind(&got), *want, "{tool} {subject:?} {risk} write={write}");
        }
    }

    #[test]
    fn running_without_the_sandbox_is_always_a_persons_call() {
        for (tool, risk) in [
            ("bash", "SAFE"),
            ("bash", "BLOCK"),
            ("read_file", "SAFE"),
            ("write_file", "LOW"),
            ("delete_file", "LOW"),
        ] {
            let mut r = request(tool, "x", risk);
            r.unsandboxed = true;
            assert_eq!(decide(&r, true), Tier::Ask, "{tool} {risk}");
        }
    }

    #[test]
    fn a_write_the_gate_marked_protected_goes_to_a_person_whatever_its_text() {
        // `link` is a symlink to `.git`: the subject names no protected directory, but the
        // worker's gate resolved the path and marked the write protected.
        for subject in [
            "write .git/hooks/pre-commit (9 bytes):\n",
            "edit .atto/config.toml:\n-a\n+b",
            "write link/../config (3 bytes):\nabc",
            "edit src/../../outside/hooks/pre-commit:\n-a\n+b",
        ] {
            for tool in ["write_file", "edit_file", "apply_patch", "multi_edit"] {
                let mut r = request(tool, subject, "LOW");
                r.protected = true;
                assert_eq!(decide(&r, true), Tier::Ask, "{tool} {subject:?}");
                assert_eq!(
                    decide(&r, false),
                    Tier::Ask,
                    "{tool} {subject:?} read-only task"
                );
            }
        }
        // A command the gate marked protected (it writes into `.git/` or makes git run a
        // program) is a person's call even when its label is SAFE.
        let mut r = request("bash", "git -c core.hooksPath=h commit", "SAFE");
        r.protected = true;
        assert_eq!(decide(&r, true), Tier::Ask);
    }

    #[test]
    fn the_subject_text_does_not_make_a_write_protected() {
        // Protection is the gate's typed judgement: a path that merely mentions `.git/` in
        // its text, which the gate did not mark, follows the task's access like any write.
        let r = request(
            "write_file",
            "write docs/.git/notes.md (3 bytes):\nabc",
            "LOW",
        );
        assert_eq!(decide(&r, true), Tier::AutoApprove);
    }

    #[test]
    fn refusals_tell_the_model_what_to_do_instead() {
        let cases = [
            (
                request("bash", "rm -rf /", "BLOCK"),
                true,
                "narrower command",
            ),
            (
                request("delete_file", "delete a", "LOW"),
                true,
                "final answer",
            ),
            (request("rm_rf", "build", "HIGH"), true, "`rm_rf`"),
            (request("write_file", "write a", "LOW"), false, "read-only"),
        ];
        for (r, write, says) in cases {
            let Tier::AutoDeny(reason) = decide(&r, write) else {
                panic!("{} was not refused", r.tool);
            };
            assert!(reason.contains(says), "{}: {reason}", r.tool);
            assert!(reason.contains("not"), "says what was not done: {reason}");
        }
    }

    #[test]
    fn tiers_name_the_event_and_carry_the_answer() {
        assert_eq!(Tier::AutoApprove.as_str(), "auto_approved");
        assert_eq!(Tier::Ask.as_str(), "asked");
        assert_eq!(Tier::AutoApprove.decision(), Some(ApprovalDecision::Yes));
        assert_eq!(Tier::Ask.decision(), None);
        let deny = Tier::AutoDeny("why".into());
        assert_eq!(deny.as_str(), "auto_denied");
        assert_eq!(
            deny.decision(),
            Some(ApprovalDecision::No {
                reason: Some("why".into())
            })
        );
    }
}
