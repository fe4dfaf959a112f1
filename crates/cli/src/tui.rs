//! Starting the full-screen interface: the resume picker for a bare `-r`, the session, and
//! what the status line shows before the engine says more. The interface itself lives in
//! the `atto-tui` crate.

use std::path::PathBuf;

use atto_llm::ResolvedProvider;
use atto_protocol::PermissionMode;
use atto_tui::app::AppInfo;
use atto_tui::picker::SessionChoice;

use crate::setup::{self, Launch, LimitFlags, SetupError};
use crate::{Cli, ExitCode, Failure, block_on, permissions};
use atto_config::{Config, ProjectConfig};

/// Most sessions the picker lists.
const PICKER_SESSIONS: u32 = 50;

/// How the interface is entered.
pub enum Entry {
    /// `atto` (a bare `-r` opens the resume picker first).
    Session,
    /// `atto fork` with no id: pick a saved session, copy it, continue in the copy.
    Fork {
        /// A label for the new session.
        label: Option<String>,
    },
}

/// Runs the terminal UI until the user leaves.
pub fn start(
    cli: &Cli,
    config: &Config,
    provider: &ResolvedProvider,
    workspace: PathBuf,
    cwd: PathBuf,
    entry: Entry,
) -> Result<ExitCode, Failure> {
    let flags = cli.global.permission_flags();
    let project = ProjectConfig::load(&workspace)?;
    let permission = permissions::setting(&flags, config, &project)?.mode;
    let info = app_info(cli, provider, permission, &workspace);
    let picking = match &entry {
        Entry::Fork { .. } => Some("Fork"),
        Entry::Session if cli.global.wants_picker() => Some("Resume"),
        Entry::Session => None,
    };
    let sessions = match picking {
        Some(_) => Some(session_choices(&workspace)?),
        None => None,
    };
    block_on(async {
        let (resume, notice) = match (sessions, picking) {
            (Some(choices), Some(verb)) => {
                let Some(picked) = pick_session(&workspace, verb, choices, entry).await? else {
                    return Ok(ExitCode::Ok);
                };
                (Some(picked.session), picked.notice)
            }
            _ => (cli.global.resume_ref()?, None),
        };
        let (handle, _) = setup::start(Launch {
            provider,
            config,
            workspace: workspace.clone(),
            cwd,
            limits: LimitFlags::default(),
            permissions: flags.clone(),
            resume,
            mode: cli.global.mode.map(|(mode, _)| mode),
            unsandboxed_commands: Vec::new(),
            debug: cli.global.debug,
            budget: cli.global.budget_flags(),
        })?;
        let swarm = crate::swarm_session::SessionSwarm {
            global: cli.global.clone(),
            config: config.clone(),
            provider: provider.clone(),
            workspace: workspace.clone(),
        };
        let options = atto_tui::TuiOptions {
            first_prompt: cli.prompt.clone(),
            trust: flags.trust || permission == PermissionMode::Yolo,
            info,
            workspace,
            notice,
            swarm: Some(swarm.launcher()),
        };
        atto_tui::run(handle, options).await.map_err(tui_failure)?;
        Ok(ExitCode::Ok)
    })
}

/// What the status line shows before the engine says more.
fn app_info(
    cli: &Cli,
    provider: &ResolvedProvider,
    permission: PermissionMode,
    workspace: &std::path::Path,
) -> AppInfo {
    AppInfo {
        provider: provider.name.clone(),
        model: provider.model.clone(),
        mode: cli.global.agent_mode(),
        permission,
        sandbox: permission != PermissionMode::Yolo
            && atto_sandbox::Sandbox::probe()
                .landlock_unavailable
                .is_none(),
        workspace: workspace.display().to_string(),
        change_target: atto_core::change_target,
    }
}

/// A session picked to continue in.
struct Picked {
    /// The session (for a fork, its new copy).
    session: atto_store::SessionRef,
    /// What to say first (a fork says what it copied).
    notice: Option<String>,
}

/// The picker's session to resume (`verb` says why it is picked), copied first for a
/// fork, with the notice that says so; `None` when the person closed the picker.
async fn pick_session(
    workspace: &std::path::Path,
    verb: &str,
    choices: Vec<SessionChoice>,
    entry: Entry,
) -> Result<Option<Picked>, Failure> {
    if choices.is_empty() {
        return Err(Failure::usage(format!(
            "no saved sessions in {}; run atto without -r to start one",
            workspace.display()
        )));
    }
    let title = format!("{verb} a session in {}", workspace.display());
    let Some(id) = atto_tui::picker::pick(&title, choices)
        .await
        .map_err(tui_failure)?
    else {
        return Ok(None);
    };
    let mut notice = None;
    let id = match entry {
        Entry::Fork { label } => {
            let forked =
                crate::admin::fork_session(workspace, &atto_store::SessionRef::Id(id), label)?;
            notice = Some(forked.to_string());
            forked.id
        }
        Entry::Session => id,
    };
    Ok(Some(Picked {
        session: atto_store::SessionRef::Id(id),
        notice,
    }))
}

/// This workspace's saved sessions, newest first, as the picker lists them.
fn session_choices(workspace: &std::path::Path) -> Result<Vec<SessionChoice>, Failure> {
    let store = permissions::open_store().map_err(|e| {
        Failure::from(SetupError::fix(format!(
            "cannot list saved sessions: {e}; give a session id to -r instead"
        )))
    })?;
    let here = workspace.display().to_string();
    let rows = store
        .sessions_blocking(&here, PICKER_SESSIONS)
        .map_err(|e| Failure::usage(e.to_string()))?;
    Ok(rows
        .into_iter()
        .map(|r| SessionChoice {
            updated: atto_protocol::time::utc_minute(r.updated_at),
            messages: r.messages,
            title: r.title.unwrap_or_else(|| "(no prompt yet)".to_owned()),
            id: r.id,
        })
        .collect())
}

fn tui_failure(err: atto_tui::TuiError) -> Failure {
    Failure {
        code: ExitCode::Failed,
        message: err.to_string(),
    }
}
