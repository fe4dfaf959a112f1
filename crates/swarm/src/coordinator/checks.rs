//! The checks' commands as the swarm runs them: atto's compile checks and the project's
//! tests, type checks and lint, judged like a session's `bash` and run under the OS sandbox
//! of the directory they check.
//!
//! What runs without a question: atto's own checkers, and project commands the classifier
//! judges SAFE or knows as test runs — each only under the sandbox. A BLOCK command is
//! refused. Everything else, and every command when the directory has no sandbox, goes to
//! the person through the swarm's approval channel (marked `unsandboxed` when it would run
//! without the sandbox, which `--on-ask allow` never approves); where no one can be asked it
//! is refused, with the reason in the check's finding. Nothing runs unsandboxed unasked.
//!
//! Owns the judgement and the question. Does not own: running a command (atto-quality's
//! `LocalRunner`), the sandbox's rules (atto-sandbox, made by the front end), or routing
//! the person's answer (the coordinator's loop).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use atto_policy::bash::{self, BashRisk};
use atto_protocol::{ApprovalDecision, ApprovalRequest};
use atto_quality::{BoxFuture, CommandOutput, CommandRequest, CommandRunner, LocalRunner, Purpose};
use atto_sandbox::Sandbox;
use tokio::sync::{mpsc, oneshot};

/// Makes the OS sandbox of the checks' commands for a directory (the workspace or an
/// attempt's worktree), or says why there is none.
pub type SandboxFor = Arc<dyn Fn(&Path) -> Result<Arc<Sandbox>, String> + Send + Sync>;

/// Longest a check command waits for a person before it counts as refused.
const ASK_DEADLINE: Duration = Duration::from_secs(3600);

/// A question about one check command, for the coordinator to put to the person.
pub(super) struct CheckAsk {
    /// The task whose checks wait.
    pub task_id: String,
    /// What is asked.
    pub request: ApprovalRequest,
    /// Where the person's answer goes.
    pub reply: oneshot::Sender<ApprovalDecision>,
}

/// Who answers a check command's question: the person of one task's checks.
#[derive(Clone)]
pub(super) struct Person {
    /// The task whose checks ask.
    pub task_id: String,
    /// The coordinator's queue of questions.
    pub asks: mpsc::UnboundedSender<CheckAsk>,
}

/// What the judgement of one command says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Judgement {
    /// Run it under the sandbox, unasked.
    Run,
    /// Do not run it; why.
    Refuse(String),
    /// A person decides.
    Ask {
        /// The classifier's label.
        risk: String,
        /// Why it is asked.
        reasons: Vec<String>,
        /// Approving runs it without the sandbox.
        unsandboxed: bool,
    },
}

/// Judges one command: `no_sandbox` is why the directory has no sandbox, if it has none.
fn judge(request: &CommandRequest<'_>, no_sandbox: Option<&str>) -> Judgement {
    let (risk, mut reasons, runs_unasked) = match request.purpose {
        // atto wrote the command and chose its interpreter; it reads the files only.
        Purpose::Check => ("SAFE".to_owned(), Vec::new(), true),
        Purpose::Verification => {
            let verdict = bash::classify(request.command);
            if verdict.risk == BashRisk::Block {
                return Judgement::Refuse(format!(
                    "the classifier judged it BLOCK ({}); the swarm never runs such commands",
                    verdict.reasons.join("; ")
                ));
            }
            let unasked =
                verdict.risk == BashRisk::Safe || atto_policy::is_test_command(request.command);
            (verdict.risk.as_str().to_owned(), verdict.reasons, unasked)
        }
    };
    if let Some(why) = no_sandbox {
        reasons.insert(
            0,
            format!(
                "there is no OS sandbox here ({why}): approving runs this check WITHOUT it, \
                 so it can write anywhere you can"
            ),
        );
        return Judgement::Ask {
            risk,
            reasons,
            unsandboxed: true,
        };
    }
    if runs_unasked {
        return Judgement::Run;
    }
    reasons.push(
        "a quality check that is neither SAFE nor a known test run needs approval".to_owned(),
    );
    Judgement::Ask {
        risk,
        reasons,
        unsandboxed: false,
    }
}

/// Runs the checks' commands of one directory through the judgement above.
pub(super) struct GatedRunner {
    /// Commands under the directory's sandbox; `Err`: why there is none. Made when the
    /// first command is judged, when it was not given.
    sandboxed: std::sync::OnceLock<Result<LocalRunner, String>>,
    /// Makes the directory's sandbox for `sandboxed`.
    sandbox_for: Option<SandboxFor>,
    dir: std::path::PathBuf,
    /// The same directory without the sandbox, only for what a person approved so.
    plain: LocalRunner,
    /// Who is asked; `None`: what would ask is refused.
    person: Option<Person>,
    next: AtomicU32,
}

impl GatedRunner {
    /// A runner for `dir` with its sandbox (or why there is none) and its person.
    pub(super) fn new(
        dir: &Path,
        sandbox: Result<Arc<Sandbox>, String>,
        person: Option<Person>,
    ) -> GatedRunner {
        let runner = GatedRunner::unprepared(dir, None, person);
        let _ = runner.sandboxed.set(sandboxed(dir, sandbox));
        runner
    }

    /// A runner for `dir` whose sandbox `sandbox_for` makes when a command first needs
    /// it: preparing one reads the mount table and makes its directories, and an
    /// attempt whose checks run no command (quality gates off) needs none.
    pub(super) fn lazy(dir: &Path, sandbox_for: SandboxFor, person: Option<Person>) -> GatedRunner {
        GatedRunner::unprepared(dir, Some(sandbox_for), person)
    }

    fn unprepared(
        dir: &Path,
        sandbox_for: Option<SandboxFor>,
        person: Option<Person>,
    ) -> GatedRunner {
        GatedRunner {
            sandboxed: std::sync::OnceLock::new(),
            sandbox_for,
            dir: dir.to_path_buf(),
            plain: LocalRunner::new(dir.to_path_buf()),
            person,
            next: AtomicU32::new(1),
        }
    }

    /// The runner under the directory's sandbox, made now if it was not yet.
    fn sandboxed(&self) -> &Result<LocalRunner, String> {
        self.sandboxed.get_or_init(|| {
            let sandbox = match &self.sandbox_for {
                Some(make) => make(&self.dir),
                None => Err("no sandbox was made for this directory".to_owned()),
            };
            sandboxed(&self.dir, sandbox)
        })
    }

    /// Puts the question to the person; `Ok(())` when they approved it.
    async fn ask(
        &self,
        request: &CommandRequest<'_>,
        risk: String,
        reasons: Vec<String>,
        unsandboxed: bool,
    ) -> Result<(), String> {
        let Some(person) = &self.person else {
            return Err(format!(
                "it needs a person's approval ({}) and no one can be asked here",
                reasons.join("; ")
            ));
        };
        let id = format!(
            "check-{}-{}",
            person.task_id,
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        let (reply, answer) = oneshot::channel();
        let ask = CheckAsk {
            task_id: person.task_id.clone(),
            request: ApprovalRequest {
                id: id.clone(),
                call_id: id,
                tool: atto_tools::names::BASH.to_owned(),
                kind: atto_protocol::ToolKind::Execute,
                subject: request.command.to_owned(),
                risk,
                reasons,
                // Nothing is saved: each check command is asked about once.
                suggested_rule: String::new(),
                unsandboxed,
                protected: false,
                subagent: None,
                arguments: serde_json::json!({ "command": request.command }),
            },
            reply,
        };
        if person.asks.send(ask).is_err() {
            return Err("the swarm stopped before anyone answered".to_owned());
        }
        match tokio::time::timeout(ASK_DEADLINE, answer).await {
            Ok(Ok(ApprovalDecision::Yes | ApprovalDecision::Always { .. })) => Ok(()),
            Ok(Ok(ApprovalDecision::No { reason })) => Err(match reason {
                Some(r) if !r.trim().is_empty() => format!("the person declined it: {r}"),
                _ => "the person declined it".to_owned(),
            }),
            Ok(Ok(ApprovalDecision::Edit { .. })) => {
                Err("a check command cannot be edited at its approval".to_owned())
            }
            Ok(Err(_)) => Err("the swarm stopped before anyone answered".to_owned()),
            Err(_) => Err(format!(
                "no one answered within {} s",
                ASK_DEADLINE.as_secs()
            )),
        }
    }
}

/// A runner of `dir`'s commands under `sandbox` (or why there is none).
fn sandboxed(dir: &Path, sandbox: Result<Arc<Sandbox>, String>) -> Result<LocalRunner, String> {
    sandbox.map(|sandbox| {
        let mut runner = LocalRunner::new(dir.to_path_buf());
        // `apply` restricts the child between fork and exec; a child the kernel will not
        // restrict does not start, so the command fails rather than run free.
        runner.prepare = Some(Arc::new(move |cmd: &mut tokio::process::Command| {
            let _applied = sandbox.apply(cmd);
        }));
        runner
    })
}

impl CommandRunner for GatedRunner {
    fn run<'a>(&'a self, request: CommandRequest<'a>) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let sandboxed = self.sandboxed();
            let no_sandbox = sandboxed.as_ref().err().map(String::as_str);
            let runner = match judge(&request, no_sandbox) {
                Judgement::Run => sandboxed,
                Judgement::Refuse(why) => return refused(why),
                Judgement::Ask {
                    risk,
                    reasons,
                    unsandboxed,
                } => {
                    if let Err(why) = self.ask(&request, risk, reasons, unsandboxed).await {
                        return refused(why);
                    }
                    if unsandboxed {
                        return self.plain.run(request).await;
                    }
                    sandboxed
                }
            };
            match runner {
                Ok(runner) => runner.run(request).await,
                // `judge` asks whenever there is no sandbox; kept total for the type.
                Err(why) => refused(format!("there is no OS sandbox here ({why})")),
            }
        })
    }
}

fn refused(why: String) -> CommandOutput {
    CommandOutput {
        refused: Some(why),
        ..CommandOutput::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(command: &str, purpose: Purpose) -> CommandRequest<'_> {
        CommandRequest {
            command,
            purpose,
            timeout: Duration::from_secs(10),
        }
    }

    #[derive(Debug, PartialEq)]
    enum Want {
        Run,
        Refuse,
        Ask,
        AskUnsandboxed,
    }

    fn kind(j: &Judgement) -> Want {
        match j {
            Judgement::Run => Want::Run,
            Judgement::Refuse(_) => Want::Refuse,
            Judgement::Ask {
                unsandboxed: false, ..
            } => Want::Ask,
            Judgement::Ask {
                unsandboxed: true, ..
            } => Want::AskUnsandboxed,
        }
    }

    #[test]
    fn check_commands_are_judged_like_a_sessions_bash() {
        use Purpose::{Check, Verification};
        use Want::{Ask, AskUnsandboxed, Refuse, Run};
        // (command, purpose, sandboxed, judgement)
        let cases: &[(&str, Purpose, bool, Want)] = &[
            // Known test runs and SAFE commands run under the sandbox, unasked.
            ("python3 -m pytest --tb=short -q", Verification, true, Run),
            ("npm test -- --passWithNoTests", Verification, true, Run),
            ("go test ./...", Verification, true, Run),
            ("cargo test", Verification, true, Run),
            ("ls", Verification, true, Run),
            ("mypy .", Verification, true, Run),
            (
                "ruff check --output-format concise .",
                Verification,
                true,
                Run,
            ),
            // atto's own checker, with the machine's interpreter.
            (
                "PATH='/usr/bin' '/usr/bin/python3' -I -B -c 'x'",
                Check,
                true,
                Run,
            ),
            // Anything else goes to a person: `npx` runs whatever the project installed.
            ("npx --no -- tsc --noEmit", Verification, true, Ask),
            ("npx --no -- eslint .", Verification, true, Ask),
            ("make deploy", Verification, true, Ask),
            // BLOCK is refused.
            ("rm -rf /", Verification, true, Refuse),
            ("rm -rf /", Verification, false, Refuse),
            // Without a sandbox nothing runs unasked, atto's own checker included.
            (
                "python3 -m pytest --tb=short -q",
                Verification,
                false,
                AskUnsandboxed,
            ),
            ("ls", Verification, false, AskUnsandboxed),
            ("mypy .", Verification, false, AskUnsandboxed),
            (
                "PATH='/usr/bin' '/usr/bin/python3' -I -B -c 'x'",
                Check,
                false,
                AskUnsandboxed,
            ),
        ];
        for (command, purpose, sandboxed, want) in cases {
            let no_sandbox = (!sandboxed).then_some("Landlock not supported");
            let got = judge(&request(command, *purpose), no_sandbox);
            assert_eq!(
                kind(&got),
                *want,
                "{command} {purpose:?} sandboxed={sandboxed}"
            );
        }
    }

    #[test]
    fn an_unsandboxed_question_says_so() {
        let got = judge(
            &request("python3 -m pytest -q", Purpose::Verification),
            Some("Landlock not supported"),
        );
        let Judgement::Ask { reasons, .. } = got else {
            panic!("not asked: {got:?}");
        };
        assert!(reasons[0].contains("WITHOUT"), "{reasons:?}");
        assert!(reasons[0].contains("Landlock not supported"), "{reasons:?}");
    }

    #[tokio::test]
    async fn a_check_that_runs_unasked_runs_under_the_sandbox() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let config = atto_sandbox::SandboxConfig {
            writable: vec![dir.path().to_path_buf()],
            ..atto_sandbox::SandboxConfig::default()
        };
        let sandbox = match Sandbox::prepare(&config) {
            Ok(sandbox) => Arc::new(sandbox),
            Err(err) => {
                atto_testkit::skipped("swarm checks under the sandbox", &err.to_string());
                return;
            }
        };
        let runner = GatedRunner::new(dir.path(), Ok(sandbox), None);
        let command = format!(
            "touch '{}'; touch '{}'",
            dir.path().join("inside").display(),
            outside.path().join("escaped").display()
        );
        let out = runner.run(request(&command, Purpose::Check)).await;
        assert!(out.refused.is_none(), "{out:?}");
        assert!(
            dir.path().join("inside").exists(),
            "it did not run: {out:?}"
        );
        assert!(
            !outside.path().join("escaped").exists(),
            "it wrote outside its directory: it ran unsandboxed"
        );
    }

    /// A directory's sandbox is made when a check first runs a command there, once: an
    /// attempt whose checks run none (quality gates off) makes none.
    #[tokio::test]
    async fn a_sandbox_is_made_only_when_a_check_runs_a_command() {
        let dir = tempfile::tempdir().unwrap();
        let made = Arc::new(AtomicU32::new(0));
        let counted = made.clone();
        let sandbox_for: SandboxFor = Arc::new(move |_: &Path| {
            counted.fetch_add(1, Ordering::SeqCst);
            Err("none here".to_owned())
        });
        let runner = GatedRunner::lazy(dir.path(), sandbox_for, None);
        assert_eq!(made.load(Ordering::SeqCst), 0);
        for _ in 0..2 {
            let out = runner
                .run(request(&marker_command(dir.path()), Purpose::Check))
                .await;
            // No sandbox and no one to ask: refused, and it says why.
            assert!(
                out.refused
                    .as_deref()
                    .is_some_and(|r| r.contains("none here")),
                "{out:?}"
            );
        }
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert!(!dir.path().join("ran").exists());
    }

    fn marker_command(dir: &Path) -> String {
        format!("touch '{}'", dir.join("ran").display())
    }

    #[tokio::test]
    async fn without_a_sandbox_a_check_runs_only_when_a_person_approves() {
        let dir = tempfile::tempdir().unwrap();
        let command = format!("python3 -m pytest -q; {}", marker_command(dir.path()));
        // No one to ask: refused, nothing ran.
        let runner = GatedRunner::new(dir.path(), Err("no Landlock".into()), None);
        let out = runner.run(request(&command, Purpose::Verification)).await;
        assert!(out.refused.is_some(), "{out:?}");
        assert!(!dir.path().join("ran").exists(), "ran unsandboxed unasked");

        // A person is asked, with the request marked unsandboxed; a "no" refuses it.
        let (asks, mut questions) = mpsc::unbounded_channel();
        let person = Person {
            task_id: "t1".into(),
            asks,
        };
        let runner = GatedRunner::new(dir.path(), Err("no Landlock".into()), Some(person));
        let answer = tokio::spawn(async move {
            let ask: CheckAsk = questions.recv().await.unwrap();
            assert!(ask.request.unsandboxed);
            assert_eq!(ask.task_id, "t1");
            let _ = ask.reply.send(ApprovalDecision::No { reason: None });
            let ask: CheckAsk = questions.recv().await.unwrap();
            let _ = ask.reply.send(ApprovalDecision::Yes);
        });
        let out = runner.run(request(&command, Purpose::Verification)).await;
        assert!(
            out.refused
                .as_deref()
                .is_some_and(|r| r.contains("declined")),
            "{out:?}"
        );
        assert!(!dir.path().join("ran").exists(), "ran after a no");
        let out = runner
            .run(request(&marker_command(dir.path()), Purpose::Verification))
            .await;
        assert!(out.refused.is_none(), "{out:?}");
        assert!(dir.path().join("ran").exists(), "did not run after a yes");
        answer.await.unwrap();
    }
}
