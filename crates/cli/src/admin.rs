//! Subcommands that inspect or change atto's policy outside a session:
//! `atto policy explain` and `atto grants`.

use std::io::Write;

use atto_protocol::{AssistantPart, GrantInfo, Message};
use atto_store::Store;
use clap::{Args, Subcommand};

use crate::{ExitCode, Failure};

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the classifier's verdict on a command as JSON (risk, reasons, segments).
    Explain(ExplainArgs),
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Read `{"id","cmd"}` lines on stdin and write `{"id","verdict","reasons"}` lines.
    #[arg(long)]
    pub jsonl: bool,
    /// The command to judge (after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct GrantsArgs {
    /// Workspace root (default: the enclosing git repository, else the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub action: Option<GrantsAction>,
}

#[derive(Debug, Subcommand)]
pub enum GrantsAction {
    /// List saved grants for this workspace and the user (the default).
    List,
    /// Remove a saved grant by its number.
    Revoke {
        /// The grant's number, as listed.
        id: i64,
    },
}

pub fn policy(command: PolicyCommand) -> Result<ExitCode, Failure> {
    match command {
        PolicyCommand::Explain(args) => explain(args),
    }
}

fn explain(args: ExplainArgs) -> Result<ExitCode, Failure> {
    if args.jsonl {
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        atto_policy::explain_jsonl(stdin.lock(), stdout.lock())
            .map_err(|e| Failure::usage(format!("cannot read or write the JSON lines: {e}")))?;
        return Ok(ExitCode::Ok);
    }
    if args.command.is_empty() {
        return Err(Failure::usage(
            "give a command to explain: atto policy explain -- 'rm -rf build'",
        ));
    }
    let command = args.command.join(" ");
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", atto_policy::explain_json(&command));
    Ok(ExitCode::Ok)
}

pub fn grants(args: GrantsArgs, workspace: &std::path::Path) -> Result<ExitCode, Failure> {
    let store = open_store()?;
    match args.action.unwrap_or(GrantsAction::List) {
        GrantsAction::List => {
            let rows = store
                .grants_for_blocking(&workspace.display().to_string())
                .map_err(|e| Failure::usage(e.to_string()))?;
            let grants: Vec<GrantInfo> = rows
                .iter()
                .map(|r| GrantInfo {
                    number: u32::try_from(r.id).unwrap_or(u32::MAX),
                    scope: r.scope.clone(),
                    decision: r.decision.clone(),
                    rule: r.rule.clone(),
                    created_at: Some(r.created_at),
                    last_used_at: r.last_used_at,
                    uses: u64::try_from(r.uses).unwrap_or(0),
                    revocable: true,
                })
                .collect();
            print!("{}", atto_line::render::grant_table(&grants));
            Ok(ExitCode::Ok)
        }
        GrantsAction::Revoke { id } => {
            if store
                .revoke_grant_blocking(id)
                .map_err(|e| Failure::usage(e.to_string()))?
            {
                println!("revoked grant #{id}");
                Ok(ExitCode::Ok)
            } else {
                Err(Failure::usage(format!(
                    "no grant #{id}; `atto grants` lists them"
                )))
            }
        }
    }
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Workspace root (default: the enclosing git repository, else the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub action: Option<SessionsAction>,
}

#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// List this workspace's sessions, newest first (the default).
    List,
    /// Show one session's conversation.
    Show {
        /// Its id, a unique prefix, or `latest`.
        id: String,
    },
    /// Write one session as Markdown (default) or JSON to stdout.
    Export {
        /// Its id, a unique prefix, or `latest`.
        id: String,
        /// `md` or `json`.
        #[arg(long, default_value = "md", value_parser = ["md", "json"])]
        format: String,
    },
}

#[derive(Debug, Args)]
pub struct ForkArgs {
    /// The session's options (model, permissions, modes), also accepted here.
    #[command(flatten)]
    pub session: crate::GlobalArgs,
    /// The session to copy: its id or a unique prefix (none: pick one in the terminal UI).
    pub id: Option<String>,
    /// Fork the latest session of this workspace.
    #[arg(long, conflicts_with = "id")]
    pub last: bool,
    /// A label for the new session.
    #[arg(long)]
    pub label: Option<String>,
}

/// `atto fork ID` or `atto fork --last`: copies a saved session into a new one that
/// records its parent. (With neither, on a terminal, the fork picker runs instead.)
pub fn fork(args: ForkArgs, workspace: &std::path::Path) -> Result<ExitCode, Failure> {
    let which = match (args.id, args.last) {
        (Some(id), _) => atto_store::SessionRef::Id(id),
        (None, true) => atto_store::SessionRef::Latest,
        (None, false) => {
            return Err(Failure::usage(
                "give a session id (or a unique prefix) or --last; with neither, `atto fork` \
                 opens a picker, which needs a terminal"
                    .to_owned(),
            ));
        }
    };
    let forked = fork_session(workspace, &which, args.label)?;
    println!("{}", forked.id);
    eprintln!("{forked}; continue it with `atto -r {}`", forked.short);
    if let Some(prompt) = piped_prompt() {
        eprintln!(
            "atto: note: atto fork only copies the session; the text on stdin ({} bytes) was \
             not sent. Continue the copy with: atto exec --resume {} \"…\"",
            prompt.len(),
            forked.short
        );
    }
    Ok(ExitCode::Ok)
}

/// Text piped to a command that takes none, so it can be named rather than dropped.
fn piped_prompt() -> Option<String> {
    use std::io::{IsTerminal, Read};
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return None;
    }
    let mut text = String::new();
    stdin.lock().read_to_string(&mut text).ok()?;
    (!text.trim().is_empty()).then_some(text)
}

/// A session copied by `fork_session`.
pub struct Forked {
    /// The new session's id.
    pub id: String,
    /// Its shortest unique prefix, as `atto -r` takes it.
    pub short: String,
    /// The session it copies.
    pub source: String,
    /// Messages copied.
    pub copied: i64,
}

impl std::fmt::Display for Forked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "forked {} ({} messages) into {}; the original stays as it was",
            self.source, self.copied, self.id
        )
    }
}

/// Copies the saved session `which` of `workspace` into a new session.
pub fn fork_session(
    workspace: &std::path::Path,
    which: &atto_store::SessionRef,
    label: Option<String>,
) -> Result<Forked, Failure> {
    let store = open_store()?;
    let here = workspace.display().to_string();
    let source = store
        .find_session_blocking(&here, which)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let id = uuid::Uuid::now_v7().to_string();
    let copied = store
        .fork_session_blocking(&source.id, &id, label)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let short = store
        .short_id_blocking(atto_store::IdKind::Session, &id)
        .unwrap_or_else(|_| id.clone());
    Ok(Forked {
        id,
        short,
        source: source.id,
        copied,
    })
}

/// The database, opened as sessions open it (a damaged one is offered to be moved aside).
fn open_store() -> Result<Store, Failure> {
    crate::permissions::open_store().map_err(|e| Failure::usage(e.to_string()))
}

/// A saved session (by id, prefix or `latest`) and its current thread's messages as
/// stored JSON.
fn load_session(
    store: &Store,
    here: &str,
    id: &str,
) -> Result<(atto_store::SessionRow, Vec<String>), Failure> {
    let row = store
        .find_session_blocking(here, &session_ref(id))
        .map_err(|e| Failure::usage(e.to_string()))?;
    let bodies = store
        .thread_history_blocking(&row.current_thread)
        .map_err(|e| Failure::usage(e.to_string()))?;
    Ok((row, bodies))
}

fn session_ref(id: &str) -> atto_store::SessionRef {
    match id {
        "latest" => atto_store::SessionRef::Latest,
        other => atto_store::SessionRef::Id(other.to_owned()),
    }
}

pub fn sessions(args: SessionsArgs, workspace: &std::path::Path) -> Result<ExitCode, Failure> {
    let store = open_store()?;
    let here = workspace.display().to_string();
    match args.action.unwrap_or(SessionsAction::List) {
        SessionsAction::List => list_sessions(&store, &here),
        SessionsAction::Export { id, format } => export_session(&store, &here, &id, &format),
        SessionsAction::Show { id } => show_session(&store, &here, &id),
    }
}

/// `atto sessions`: this workspace's saved sessions with a conversation, newest first.
fn list_sessions(store: &Store, here: &str) -> Result<ExitCode, Failure> {
    let rows = store
        .sessions_blocking(here, 50)
        .map_err(|e| Failure::usage(e.to_string()))?;
    // A session of slash commands only holds no conversation: not listed.
    let rows: Vec<_> = rows.into_iter().filter(|r| r.messages > 0).collect();
    if rows.is_empty() {
        println!("no saved sessions in {here}");
    }
    for r in rows {
        let size = if r.answered {
            format!("{:>4} messages", r.messages)
        } else {
            "never answered".to_owned()
        };
        let label = r
            .label
            .as_deref()
            .map(|l| format!("[{l}] "))
            .unwrap_or_default();
        let short = |p: &str| {
            store
                .short_id_blocking(atto_store::IdKind::Session, p)
                .unwrap_or_else(|_| p.to_owned())
        };
        let fork = match (&r.parent_session, &r.spawned_by) {
            (Some(p), _) => format!("  (fork of {})", short(p)),
            (None, Some(p)) => format!("  (subagent of {})", short(p)),
            (None, None) => String::new(),
        };
        println!(
            "{:<10}  {}  {size}  {label}{}{fork}",
            r.short_id,
            atto_protocol::time::utc_minute(r.updated_at),
            r.title.as_deref().unwrap_or("(no prompt yet)")
        );
    }
    Ok(ExitCode::Ok)
}

/// `atto sessions export`: a session as JSON, or as Markdown to read.
fn export_session(store: &Store, here: &str, id: &str, format: &str) -> Result<ExitCode, Failure> {
    let (row, bodies) = load_session(store, here, id)?;
    let messages: Vec<serde_json::Value> = bodies
        .iter()
        .map(|b| serde_json::from_str(b).unwrap_or(serde_json::Value::String(b.clone())))
        .collect();
    if format == "json" {
        let doc = serde_json::json!({"session": row, "messages": messages});
        println!("{doc}");
    } else {
        println!("# {}\n", row.title.as_deref().unwrap_or("atto session"));
        println!(
            "Session `{}` · workspace `{}` · model `{}`\n",
            row.id,
            row.workspace,
            row.model.as_deref().unwrap_or("?")
        );
        for body in &bodies {
            if let Ok(message) = serde_json::from_str::<Message>(body) {
                print!("{}", markdown(&message));
            }
        }
    }
    Ok(ExitCode::Ok)
}

/// `atto sessions show`: a session's transcript.
fn show_session(store: &Store, here: &str, id: &str) -> Result<ExitCode, Failure> {
    let (row, bodies) = load_session(store, here, id)?;
    println!(
        "session {} · {} · {} · {} messages",
        row.id,
        row.workspace,
        row.model.as_deref().unwrap_or("?"),
        bodies.len()
    );
    for body in bodies {
        match serde_json::from_str::<Message>(&body) {
            Ok(message) => print!("{}", transcript(&message)),
            Err(e) => println!("[unreadable message: {e}]"),
        }
    }
    Ok(ExitCode::Ok)
}

/// One message as readable text.
fn transcript(message: &Message) -> String {
    match message {
        Message::User { text, .. } => format!("\n> {text}\n"),
        Message::Assistant { parts } => {
            let mut out = String::new();
            for part in parts {
                match part {
                    AssistantPart::Text { text } => out.push_str(&format!("{text}\n")),
                    AssistantPart::Thinking { .. } | AssistantPart::RedactedThinking { .. } => {}
                    AssistantPart::ToolCall(call) => {
                        out.push_str(&format!("→ {} {}\n", call.name, call.arguments));
                    }
                }
            }
            out
        }
        Message::ToolResult(result) => {
            let first = result.content.lines().next().unwrap_or("");
            let mark = if result.is_error { "error" } else { "ok" };
            format!("  {mark}: {first}\n")
        }
    }
}

/// One message as Markdown, for `atto sessions export`.
fn markdown(message: &Message) -> String {
    match message {
        Message::User { text, .. } => format!("## User\n\n{text}\n\n"),
        Message::Assistant { parts } => {
            let mut out = String::from("## Assistant\n\n");
            for part in parts {
                match part {
                    AssistantPart::Text { text } => out.push_str(&format!("{text}\n\n")),
                    AssistantPart::Thinking { .. } | AssistantPart::RedactedThinking { .. } => {}
                    AssistantPart::ToolCall(call) => out.push_str(&format!(
                        "Tool call `{}`:\n\n```json\n{}\n```\n\n",
                        call.name, call.arguments
                    )),
                }
            }
            out
        }
        Message::ToolResult(result) => format!(
            "Result of `{}`{}:\n\n```\n{}\n```\n\n",
            result.name,
            if result.is_error { " (error)" } else { "" },
            result.content
        ),
    }
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Rename a damaged database (and its -wal/-shm files) so atto starts a fresh one;
    /// nothing is deleted.
    MoveAside,
}

pub fn store(command: StoreCommand) -> Result<ExitCode, Failure> {
    match command {
        StoreCommand::MoveAside => {
            let path = atto_store::default_path().map_err(|e| Failure::usage(e.to_string()))?;
            let moved = atto_store::move_aside(&path).map_err(|e| Failure::usage(e.to_string()))?;
            println!("{}", moved.display());
            eprintln!(
                "moved {} to {}; the next run starts a fresh database",
                path.display(),
                moved.display()
            );
            Ok(ExitCode::Ok)
        }
    }
}
