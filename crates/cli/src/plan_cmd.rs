//! `atto plan show|approve|reject`: reviews a saved session's pending plan from a script or
//! another terminal. It resumes the session's engine, sends one plan op (`ShowPlan`,
//! `ApprovePlan`, `RejectPlan`), prints the answer and shuts the session down.
//!
//! It needs no model: the engine runs with [`NoModel`], a client that never connects, so
//! no provider, key or base URL has to be configured. Approving runs the changes exactly
//! as `/approve` does (conflict check, the gate as an approved call where BLOCK and deny
//! rules still refuse, the OS sandbox), and the model hears of the decisions on the
//! session's next turn. This module does not queue changes (plan mode does) and decides
//! nothing about them (the engine does).

use std::io::Write as _;
use std::sync::Arc;

use atto_line::render;
use atto_llm::{
    BoxFuture, ModelClient, ModelError, ModelInfo, ModelRequest, ModelResponse, ResolvedProvider,
    StreamUpdate, Wire,
};
use atto_present::commands::parse_picks;
use atto_protocol::{AgentMode, ChangeOutcome, ChangeStatus, Event, Op, PlanSelection};
use atto_store::SessionRef;
use clap::{Args, Subcommand, ValueEnum};

use crate::setup::{self, Launch, LimitFlags};
use crate::{ExitCode, Failure, GlobalArgs};
use atto_config::Config;

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The session's options (model, permissions, modes), also accepted here.
    #[command(flatten)]
    pub session: crate::GlobalArgs,
    #[command(subcommand)]
    pub action: PlanAction,
}

#[derive(Debug, Subcommand)]
pub enum PlanAction {
    /// List the proposed changes in order: tool, target, reason, status and a diff of each.
    Show(PlanOptions),
    /// Run pending changes in order: all of them, the first N, or picks like 2,4 or 3-5.
    Approve {
        /// `N` (the first N pending), `2,4` or `3-5` (these by number); none: all pending.
        selection: Option<String>,
        #[command(flatten)]
        options: PlanOptions,
    },
    /// Discard pending changes: all of them, or picks like 3, 2,4 or 3-5.
    Reject {
        /// `3`, `2,4` or `3-5` (these by number); none: all pending.
        selection: Option<String>,
        /// Why: kept with each rejected change; the model reads it on the session's next turn.
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        #[command(flatten)]
        options: PlanOptions,
    },
}

/// What every `atto plan` action takes: which session's plan, and how to print.
#[derive(Debug, Args)]
pub struct PlanOptions {
    /// The session: its id, a unique prefix of it, or `latest` (the most recent session of
    /// this workspace, the default).
    #[arg(long, value_name = "ID", default_value = "latest")]
    pub session: String,
    /// Text for people, or one JSON object (the `plan` or `plan_decided` event).
    #[arg(long, value_enum, default_value_t = PlanFormat::Text)]
    pub output_format: PlanFormat,
}

/// How `atto plan` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// The plan or the outcomes as readable text, on stdout.
    Text,
    /// The engine's `plan` or `plan_decided` event as one JSON line, on stdout.
    Json,
}

/// Runs `atto plan`. Exit codes: 0 done, 1 a change failed or conflicted, 2 bad usage (a
/// bad selection, no such session, no pending plan).
pub fn run(args: PlanArgs, global: &GlobalArgs) -> Result<ExitCode, Failure> {
    if global.resume.is_some() || global.continue_latest {
        return Err(Failure::usage(
            "atto plan picks its session with --session ID (an id, a unique prefix or \
             latest), not --resume or --continue",
        ));
    }
    // A malformed selection is refused before any session starts: nothing is touched.
    let op = plan_op(&args.action)?;
    let (PlanAction::Show(options)
    | PlanAction::Approve { options, .. }
    | PlanAction::Reject { options, .. }) = args.action;
    let config = Config::load(global.config.as_deref())?;
    let (workspace, cwd) = setup::workspace(global.workspace.as_deref())?;
    let session = match options.session.as_str() {
        "latest" => SessionRef::Latest,
        id => SessionRef::Id(id.to_owned()),
    };
    // `Launch` names a provider to connect to; this one says there is none, and
    // `start_with_client` uses `NoModel` instead of connecting to it.
    let provider = ResolvedProvider {
        name: NoModel::NAME.to_owned(),
        base_url: String::new(),
        wire: Wire::Chat,
        model: NoModel::NAME.to_owned(),
        api_key: None,
        api_key_env: None,
    };
    let client = Arc::new(NoModel::new(&provider));
    crate::block_on(async {
        let (handle, _) = setup::start_with_client(
            Launch {
                provider: &provider,
                config: &config,
                workspace,
                cwd,
                limits: LimitFlags::default(),
                permissions: global.permission_flags(),
                resume: Some(session),
                mode: Some(AgentMode::Plan),
                unsandboxed_commands: Vec::new(),
                debug: false,
                budget: setup::BudgetFlags::default(),
            },
            client,
        )?;
        Ok(run_op(handle, op, options.output_format).await)
    })
}

/// The op an action sends; a selection that cannot be read is a usage error.
fn plan_op(action: &PlanAction) -> Result<Op, Failure> {
    Ok(match action {
        PlanAction::Show(_) => Op::ShowPlan,
        PlanAction::Approve { selection, .. } => Op::ApprovePlan {
            selection: approve_selection(selection.as_deref())?,
        },
        PlanAction::Reject {
            selection, reason, ..
        } => Op::RejectPlan {
            selection: reject_selection(selection.as_deref())?,
            reason: reason.clone(),
        },
    })
}

/// As `/approve`: a plain number N is the first N pending changes, `2,4` and `3-5` pick
/// changes by number, nothing is all of them.
fn approve_selection(text: Option<&str>) -> Result<PlanSelection, Failure> {
    let Some(text) = text else {
        return Ok(PlanSelection::All);
    };
    match text.trim().parse::<u32>() {
        Ok(0) => Err(Failure::usage(
            "atto plan approve 0 approves nothing; give N ≥ 1 for the first N changes, or no \
             selection for all",
        )),
        Ok(n) => Ok(PlanSelection::First { n }),
        Err(_) => parse_picks(text).map_err(|e| Failure::usage(format!("atto plan approve: {e}"))),
    }
}

/// As `/reject`: `3`, `2,4` and `3-5` pick changes by number, nothing is all of them.
fn reject_selection(text: Option<&str>) -> Result<PlanSelection, Failure> {
    match text {
        None => Ok(PlanSelection::All),
        Some(text) => {
            parse_picks(text).map_err(|e| Failure::usage(format!("atto plan reject: {e}")))
        }
    }
}

/// Sends `op`, then `Shutdown`, and reads events until the session ends: prints the
/// answer and turns it into the exit code.
async fn run_op(mut handle: atto_core::AgentHandle, op: Op, format: PlanFormat) -> ExitCode {
    if handle.submit(op).is_err() || handle.submit(Op::Shutdown).is_err() {
        eprintln!("atto: the session ended before the plan could be reviewed; nothing changed");
        return ExitCode::Failed;
    }
    let mut code = None;
    while let Some(event) = handle.next_event().await {
        match &event {
            Event::Plan { plan, previews } => {
                print(format, &event, || {
                    render::plan_view(plan.as_ref(), previews, atto_core::change_target)
                });
                code.get_or_insert(ExitCode::Ok);
            }
            Event::PlanDecided {
                outcomes, tally, ..
            } => {
                print(format, &event, || render::plan_outcomes(outcomes, tally));
                code.get_or_insert(decided_code(outcomes));
            }
            // The engine refused the selection (or there is no pending plan): nothing ran.
            Event::Error { message } => {
                eprintln!("atto: {message}");
                code.get_or_insert(ExitCode::Usage);
            }
            Event::Warning { message } => eprintln!("atto: warning: {message}"),
            // Nothing here asks: an approved change goes through the gate as approved.
            _ => {}
        }
    }
    code.unwrap_or_else(|| {
        eprintln!("atto: the session ended without answering; the plan was not reviewed");
        ExitCode::Failed
    })
}

/// 1 when a change failed or was not applied because its file changed meanwhile.
fn decided_code(outcomes: &[ChangeOutcome]) -> ExitCode {
    let troubled = outcomes
        .iter()
        .any(|o| matches!(o.status, ChangeStatus::Failed | ChangeStatus::Conflict));
    if troubled {
        ExitCode::Failed
    } else {
        ExitCode::Ok
    }
}

/// Writes the answer to stdout as text or as the event's JSON line. A closed pipe is
/// ignored: what was decided is in the store either way.
fn print(format: PlanFormat, event: &Event, text: impl FnOnce() -> String) {
    let mut out = std::io::stdout().lock();
    let _ = match format {
        PlanFormat::Text => write!(out, "{}", text()),
        PlanFormat::Json => writeln!(out, "{}", render::event_json(event)),
    };
    let _ = out.flush();
}

/// The model client of a plan review: it never connects. `atto plan` starts no turn, so
/// `stream` is not called; were it called, the turn would fail with this error instead of
/// reaching a provider.
struct NoModel {
    info: ModelInfo,
}

impl NoModel {
    /// The provider and model name a review session reports.
    const NAME: &str = "none";

    fn new(provider: &ResolvedProvider) -> Self {
        Self {
            info: ModelInfo {
                provider: provider.name.clone(),
                model: provider.model.clone(),
                wire: provider.wire,
                base_url: provider.base_url.clone(),
            },
        }
    }
}

impl ModelClient for NoModel {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn stream<'a>(
        &'a self,
        _req: &'a ModelRequest<'a>,
        _on_update: &'a mut (dyn FnMut(StreamUpdate) + Send),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(std::future::ready(Err(ModelError::Setup(
            "atto plan does not call the model; continue the conversation with `atto -r ID` \
             and a configured provider"
                .to_owned(),
        ))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_mean_what_the_slash_commands_mean() {
        let approve = |text| approve_selection(text).map_err(|f| f.message);
        assert_eq!(approve(None), Ok(PlanSelection::All));
        assert_eq!(approve(Some("3")), Ok(PlanSelection::First { n: 3 }));
        assert_eq!(
            approve(Some("2,4")),
            Ok(PlanSelection::Picks { orders: vec![2, 4] })
        );
        assert_eq!(
            approve(Some("3-5")),
            Ok(PlanSelection::Picks {
                orders: vec![3, 4, 5]
            })
        );
        assert!(approve(Some("0")).unwrap_err().contains("approves nothing"));
        assert!(approve(Some("x")).unwrap_err().contains("'x'"));
        assert!(approve(Some("5-3")).is_err());

        let reject = |text| reject_selection(text).map_err(|f| f.message);
        assert_eq!(reject(None), Ok(PlanSelection::All));
        // `/reject 3` discards change 3, not the first three.
        assert_eq!(
            reject(Some("3")),
            Ok(PlanSelection::Picks { orders: vec![3] })
        );
        assert!(reject(Some("0")).unwrap_err().contains("start at 1"));
        assert!(reject(Some("keep it")).is_err());
    }

    #[test]
    fn failed_or_conflicting_changes_exit_1() {
        let outcome = |status| ChangeOutcome {
            order: 1,
            tool: "write_file".into(),
            target: "a.txt".into(),
            status,
            detail: String::new(),
        };
        assert_eq!(
            decided_code(&[outcome(ChangeStatus::Applied)]),
            ExitCode::Ok
        );
        assert_eq!(
            decided_code(&[outcome(ChangeStatus::Rejected)]),
            ExitCode::Ok
        );
        for bad in [ChangeStatus::Failed, ChangeStatus::Conflict] {
            assert_eq!(
                decided_code(&[outcome(ChangeStatus::Applied), outcome(bad)]),
                ExitCode::Failed
            );
        }
    }
}
