//! The JSON-RPC side: the ACP methods atto answers (`initialize`, `authenticate`,
//! `session/new`, `session/load`, `session/prompt`, `session/set_mode`, `session/cancel`),
//! the table of open sessions, and the orderly end when the client goes away. What a
//! session says is the pump's business (`pump.rs`); this module only routes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, CancelNotification,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionCapabilities, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, Stdio};
use atto_protocol::OpSender;
use atto_protocol::{Event, Op};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::pump::{Front, Pump, PumpSetup};
use crate::{AcpError, AcpOptions, SessionStarter, StartRequest, convert, replay};

/// How long a new or loaded session may take to say it is ready.
const START_WAIT: Duration = Duration::from_secs(30);
/// How long the sessions get to stop and store what they have once the client is gone.
const END_WAIT: Duration = Duration::from_secs(10);

/// One open session, as the request handlers reach it.
struct Link {
    front: mpsc::UnboundedSender<Front>,
    ops: OpSender,
}

/// What every handler shares.
struct Shared {
    starter: Arc<dyn SessionStarter>,
    options: AcpOptions,
    sessions: Mutex<HashMap<String, Link>>,
    pumps: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    fn link(&self, id: &str) -> Option<(mpsc::UnboundedSender<Front>, OpSender)> {
        let sessions = self.sessions.lock().ok()?;
        sessions
            .get(id)
            .map(|link| (link.front.clone(), link.ops.clone()))
    }
}

/// Serves ACP on stdin/stdout until the client closes stdin, then stops every session
/// (interrupting a running turn) and waits, bounded, for each to store what it has.
/// Must run inside a tokio runtime: the sessions and their pumps are tokio tasks.
pub async fn serve(starter: Arc<dyn SessionStarter>, options: AcpOptions) -> Result<(), AcpError> {
    let shared = Arc::new(Shared {
        starter,
        options,
        sessions: Mutex::new(HashMap::new()),
        pumps: Mutex::new(Vec::new()),
    });
    let (s1, s2, s3, s4, s5, s6) = (
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
    );
    let served = Agent
        .v1()
        .name("atto")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                responder.respond(initialize(&request, &s1.options.version))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: AuthenticateRequest, responder, _cx| authenticate(responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                new_session(&s2, &cx, request, responder).await
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                load_session(&s3, &cx, request, responder).await
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, _cx| prompt(&s4, request, responder),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                set_mode(&s5, request, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                cancel(&s6, &notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    finish(&shared).await;
    match served {
        Ok(()) => Ok(()),
        // The client closed its end while atto was still writing: it is gone, as when it
        // closes stdin, and the sessions were stopped and stored the same way.
        Err(err) if client_gone(&err) => {
            eprintln!("atto acp: the client closed the connection");
            Ok(())
        }
        Err(err) => Err(AcpError::Connection(err.to_string())),
    }
}

/// The answer to `authenticate`: nothing to do.
fn authenticate(responder: Responder<AuthenticateResponse>) -> Result<(), Error> {
    // atto offers no auth methods: the provider's key comes from atto's own
    // config and environment, and local providers need none.
    eprintln!(
        "atto acp: authenticate is not needed; atto uses the provider credentials of \
         its own config and environment"
    );
    responder.respond(AuthenticateResponse::new())
}

/// `session/new`: starts a session, answers with its id and modes, then runs its pump.
async fn new_session(
    shared: &Shared,
    cx: &ConnectionTo<Client>,
    request: NewSessionRequest,
    responder: Responder<NewSessionResponse>,
) -> Result<(), Error> {
    match open_requested(shared, cx, request.cwd, None, &request.mcp_servers).await {
        Ok(session) => {
            let response =
                NewSessionResponse::new(session.id.clone()).modes(convert::modes(session.mode));
            responder.respond(response)?;
            session.run(shared);
            Ok(())
        }
        Err(err) => responder.respond_with_error(err),
    }
}

/// `session/load`: resumes a stored session not open on this connection, replays its
/// history to the client, answers with its modes, then runs its pump.
async fn load_session(
    shared: &Shared,
    cx: &ConnectionTo<Client>,
    request: LoadSessionRequest,
    responder: Responder<LoadSessionResponse>,
) -> Result<(), Error> {
    let id = request.session_id.0.to_string();
    let session =
        match open_requested(shared, cx, request.cwd, Some(id), &request.mcp_servers).await {
            Ok(session) => session,
            Err(err) => return responder.respond_with_error(err),
        };
    replay::send(cx, &session.id, &session.history, &*shared.options.tools);
    let response = LoadSessionResponse::new().modes(convert::modes(session.mode));
    responder.respond(response)?;
    session.run(shared);
    Ok(())
}

/// Checks what a `session/new` or `session/load` asks for (its MCP servers, then that a
/// session to resume is not open here already), then opens the session.
async fn open_requested(
    shared: &Shared,
    cx: &ConnectionTo<Client>,
    cwd: std::path::PathBuf,
    resume: Option<String>,
    mcp_servers: &[agent_client_protocol::v1::schema::McpServer],
) -> Result<Opened, Error> {
    let servers =
        convert::mcp_servers(mcp_servers).map_err(|err| Error::invalid_params().data(err))?;
    if let Some(id) = &resume
        && shared.link(id).is_some()
    {
        return Err(Error::invalid_params()
            .data(format!("session {id} is already open on this connection")));
    }
    open(shared, cx, cwd, resume, servers).await
}

/// `session/prompt`: hands the prompt to the session's pump, which answers when the turn
/// ends.
fn prompt(
    shared: &Shared,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
) -> Result<(), Error> {
    let id = request.session_id.0.to_string();
    let Some((front, _)) = shared.link(&id) else {
        return responder.respond_with_error(no_session(&id));
    };
    let text = match crate::prompt::text(&request.prompt) {
        Ok(text) => text,
        Err(why) => {
            return responder.respond_with_error(Error::invalid_params().data(why));
        }
    };
    let responder = Box::new(responder);
    if let Err(mpsc::error::SendError(Front::Prompt { responder, .. })) =
        front.send(Front::Prompt { text, responder })
    {
        return responder
            .respond_with_error(Error::internal_error().data(format!("session {id} has ended")));
    }
    Ok(())
}

/// `session/set_mode`: switches the session's agent mode.
fn set_mode(
    shared: &Shared,
    request: SetSessionModeRequest,
    responder: Responder<SetSessionModeResponse>,
) -> Result<(), Error> {
    let id = request.session_id.0.to_string();
    let Some((_, ops)) = shared.link(&id) else {
        return responder.respond_with_error(no_session(&id));
    };
    let Some(mode) = convert::mode_from_id(&request.mode_id.0) else {
        return responder.respond_with_error(Error::invalid_params().data(format!(
            "unknown mode '{}': atto's modes are build, plan, review and debug",
            request.mode_id.0
        )));
    };
    if ops
        .submit(Op::SetMode {
            mode,
            permission: None,
        })
        .is_err()
    {
        return responder
            .respond_with_error(Error::internal_error().data(format!("session {id} has ended")));
    }
    responder.respond(SetSessionModeResponse::new())
}

/// `session/cancel`: tells the pump, then interrupts the running turn.
fn cancel(shared: &Shared, notification: &CancelNotification) {
    let id = notification.session_id.0.to_string();
    match shared.link(&id) {
        Some((front, ops)) => {
            let _ = front.send(Front::Cancel);
            let _ = ops.submit(Op::Interrupt);
        }
        None => eprintln!("atto acp: session/cancel for unknown session {id}"),
    }
}

/// Whether a connection error only says the client went away.
fn client_gone(err: &Error) -> bool {
    agent_client_protocol::is_incoming_transport_closed(err)
        // A write to a closed pipe (EPIPE), whatever the wording's case.
        || err.to_string().to_lowercase().contains("broken pipe")
}

/// The answer to `initialize`: protocol v1 and only what atto really does.
fn initialize(request: &InitializeRequest, version: &str) -> InitializeResponse {
    if request.protocol_version != ProtocolVersion::V1 {
        eprintln!(
            "atto acp: the client asked for protocol {:?}; atto speaks version 1",
            request.protocol_version
        );
    }
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(
                    PromptCapabilities::new()
                        .image(false)
                        .audio(false)
                        .embedded_context(true),
                )
                .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
                .session_capabilities(SessionCapabilities::new()),
        )
        .auth_methods(Vec::new())
        .agent_info(Implementation::new("atto", version).title("atto"))
}

/// The client's MCP servers are not passed on: atto has no MCP client here (the
/// capabilities say so). Said on stderr, where the editor keeps the agent's log.
fn no_session(id: &str) -> Error {
    Error::invalid_params().data(format!(
        "no session '{id}' on this connection: call session/new (or session/load) first"
    ))
}

/// A session started and ready, before its pump runs.
struct Opened {
    id: String,
    mode: atto_protocol::AgentMode,
    history: Vec<atto_protocol::Message>,
    setup: PumpSetup,
}

impl Opened {
    /// Registers the session and starts its pump.
    fn run(self, shared: &Shared) {
        let (front_tx, front_rx) = mpsc::unbounded_channel();
        let ops = self.setup.handle.op_sender();
        if let Ok(mut sessions) = shared.sessions.lock() {
            sessions.insert(
                self.id.clone(),
                Link {
                    front: front_tx.clone(),
                    ops,
                },
            );
        }
        let pump = Pump::new(self.setup, front_rx, front_tx.clone());
        let task = tokio::spawn(pump.run());
        if let Ok(mut pumps) = shared.pumps.lock() {
            pumps.push(task);
        }
    }
}

/// Starts (or resumes) a session and waits, bounded, for it to say it is ready.
async fn open(
    shared: &Shared,
    cx: &agent_client_protocol::v1::ConnectionTo<Client>,
    cwd: std::path::PathBuf,
    resume: Option<String>,
    mcp_servers: std::collections::BTreeMap<String, serde_json::Value>,
) -> Result<Opened, Error> {
    if !cwd.is_absolute() {
        return Err(Error::invalid_params().data(format!(
            "cwd must be an absolute path, not '{}'",
            cwd.display()
        )));
    }
    // Starting opens the database, prepares the sandbox and the checkpoints: disk work,
    // kept off the thread that serves the other sessions.
    let starter = Arc::clone(&shared.starter);
    let started = tokio::task::spawn_blocking(move || {
        starter.start(StartRequest {
            cwd,
            resume,
            mcp_servers,
        })
    })
    .await
    .map_err(|e| Error::internal_error().data(format!("starting the session failed: {e}")))?
    .map_err(|why| Error::internal_error().data(why))?;
    let mut handle = started.handle;
    let mut early = Vec::new();
    let ready = tokio::time::timeout(START_WAIT, async {
        while let Some(event) = handle.next_event().await {
            match event {
                Event::SessionStarted {
                    session_id,
                    workspace,
                    mode,
                    ..
                } => return Some((session_id, workspace, mode)),
                other => early.push(other),
            }
        }
        None
    })
    .await;
    let (id, workspace, mode) = match ready {
        Ok(Some(ready)) => ready,
        Ok(None) => {
            let why = early
                .iter()
                .find_map(|e| match e {
                    Event::Error { message } => Some(message.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| "the session ended before it started".to_owned());
            return Err(Error::internal_error().data(why));
        }
        Err(_) => {
            let _ = handle.submit(Op::Shutdown);
            return Err(Error::internal_error().data(format!(
                "the session did not start within {} s; nothing was run",
                START_WAIT.as_secs()
            )));
        }
    };
    Ok(Opened {
        id: id.clone(),
        mode,
        history: started.history,
        setup: PumpSetup {
            session_id: id,
            workspace: workspace.into(),
            mode,
            handle,
            cx: cx.clone(),
            early,
            approval_deadline: shared.options.approval_deadline,
            trust: started.trust,
            tools: std::sync::Arc::clone(&shared.options.tools),
        },
    })
}

/// The client is gone: interrupt every session, ask it to end, and wait (bounded) for
/// each to finish storing its messages.
async fn finish(shared: &Shared) {
    let links: Vec<OpSender> = match shared.sessions.lock() {
        Ok(mut sessions) => sessions.drain().map(|(_, link)| link.ops).collect(),
        Err(_) => Vec::new(),
    };
    for ops in &links {
        let _ = ops.submit(Op::Interrupt);
        let _ = ops.submit(Op::Shutdown);
    }
    let pumps: Vec<JoinHandle<()>> = match shared.pumps.lock() {
        Ok(mut pumps) => pumps.drain(..).collect(),
        Err(_) => Vec::new(),
    };
    for pump in pumps {
        if tokio::time::timeout(END_WAIT, pump).await.is_err() {
            eprintln!(
                "atto acp: a session did not end within {} s of the client leaving",
                END_WAIT.as_secs()
            );
        }
    }
}
