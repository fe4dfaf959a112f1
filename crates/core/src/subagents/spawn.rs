//! Running one child: check it may start (role against the parent's mode, depth, a free
//! slot, a budget), make its session from the tree's template, give it its task, pass
//! its approval requests up (labelled, answers routed back), report its progress, and
//! collect its closure report when it ends, by itself or stopped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use atto_protocol::{
    Event, FinalResult, Op, SpawnRequest, SubagentInfo, SubagentRole, SubagentTag, ToolKind,
    TurnStatus,
};
use atto_tools::CancellationToken;
use tokio::sync::mpsc;

use super::report::{self, Ending};
use super::{
    Approvals, SessionTree, SharedAuthority, TreePosition, child_mode, defs::AgentDef, wrap_up_lead,
};
use crate::limits::Limits;
use crate::session::{SessionOptions, spawn_child};

/// How long past its own time limit a child may take to stop before it is dropped.
const GRACE: Duration = Duration::from_secs(10);

/// What the parent gets back.
pub(crate) struct ChildOutcome {
    /// The closure report.
    pub report: String,
    /// Files the child changed, from the checkpoints.
    pub files: Vec<String>,
}

/// Starts children of one session.
pub(crate) struct Spawner {
    pub tree: SessionTree,
    /// The parent's position.
    pub position: TreePosition,
    pub authority: SharedAuthority,
    /// The parent's approval answers, to route a child's to it.
    pub approvals: Approvals,
    /// The parent's events.
    pub events: mpsc::UnboundedSender<Event>,
}

/// A child about to run: what it is and what it was given.
struct Child {
    id: String,
    tag: SubagentTag,
    info: SubagentInfo,
    files: Vec<String>,
    started: Instant,
    /// Its tool calls as its events told them, for the quality checks.
    actions: std::sync::Mutex<Vec<atto_quality::ToolAction>>,
}

impl Spawner {
    fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Whether `request` asks for a child that writes.
    pub(crate) fn writes(&self, request: &SpawnRequest) -> bool {
        self.role_of(request) == SubagentRole::Implement
    }

    /// Whether the child only reads: explore and review run no command (verify runs the
    /// project's tests, which is project code).
    pub(crate) fn reads_only(&self, request: &SpawnRequest) -> bool {
        matches!(
            self.role_of(request),
            SubagentRole::Explore | SubagentRole::Review
        )
    }

    fn definition(&self, request: &SpawnRequest) -> Result<Option<AgentDef>, String> {
        let Some(name) = &request.agent else {
            return Ok(None);
        };
        let agents = &self.tree.settings.agents;
        match agents.iter().find(|d| &d.name == name) {
            Some(def) => Ok(Some(def.clone())),
            None => Err(format!(
                "there is no custom agent named '{name}'; {}",
                if agents.is_empty() {
                    "none are defined (.atto/agents/*.md)".to_owned()
                } else {
                    format!(
                        "defined: {}",
                        agents
                            .iter()
                            .map(|d| d.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            )),
        }
    }

    fn role_of(&self, request: &SpawnRequest) -> SubagentRole {
        let def_role = request.agent.as_ref().and_then(|name| {
            self.tree
                .settings
                .agents
                .iter()
                .find(|d| &d.name == name)
                .and_then(|d| d.role)
        });
        request.role.or(def_role).unwrap_or_default()
    }

    /// Runs a child to its end and returns its report; `Err` says why it did not start.
    pub(crate) async fn run(
        &self,
        request: SpawnRequest,
        cancel: &CancellationToken,
    ) -> Result<ChildOutcome, String> {
        let settings = Arc::clone(&self.tree.settings);
        let task = request.task.trim().to_owned();
        if task.is_empty() {
            return Err("a subagent needs a task: say what it should do".to_owned());
        }
        let def = self.definition(&request)?;
        let role = self.role_of(&request);
        let authority = *self
            .authority
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mode = child_mode(role, authority.mode)?;
        let depth = self.child_depth()?;
        let files = self.declared_files(&request, role)?;
        let model = request
            .model
            .clone()
            .or_else(|| def.as_ref().and_then(|d| d.model.clone()));
        let raw_client = self.client_for(model.as_deref())?;
        let _permit = self.running_slot(cancel).await?;
        let id = uuid::Uuid::now_v7().to_string();
        let budget = self.tree.budget.allot(
            &self.position.node,
            &id,
            request.budget_tokens,
            &settings.share,
        )?;
        // Its calls are checked against its budget by the session (`spawn_in`).
        let client = raw_client;
        let model_name = client.info().model.clone();
        let mut options = self.child_options(&id, client, mode, authority);
        options.limits = self.child_limits(&request);
        let position = TreePosition {
            node: id.clone(),
            depth,
            parent: Some(self.position.node.clone()),
            scope: (role == SubagentRole::Implement && !files.is_empty()).then(|| files.clone()),
            tools: def.as_ref().and_then(|d| d.tools.clone()),
        };
        let info = SubagentInfo {
            id: id.clone(),
            parent: self.position.node.clone(),
            depth,
            task: task.clone(),
            role,
            model: model_name,
            budget_tokens: budget,
            tokens_used: 0,
            cost_usd: None,
            elapsed_ms: 0,
            status: "running".to_owned(),
        };
        let child = Child {
            tag: SubagentTag {
                id: id.clone(),
                role,
                task: crate::plan_queue::one_paragraph(&task, 60),
            },
            id,
            info,
            files,
            started: Instant::now(),
            actions: std::sync::Mutex::default(),
        };
        let handle = spawn_child(options, self.tree.clone(), position);
        self.tree.record(child.info.clone());
        self.emit(Event::SubagentStarted {
            agent: child.info.clone(),
            files: child.files.clone(),
        });
        let prompt = prompt(&task, role, &request, def.as_ref(), &child.files);
        let result = self.drive(handle, &child, prompt, cancel).await;
        Ok(self.finish(child, result))
    }

    /// The depth a child of this session has, within the nesting limit.
    fn child_depth(&self) -> Result<u32, String> {
        let depth = self.position.depth + 1;
        let max_depth = self.tree.settings.max_depth;
        if depth > max_depth {
            return Err(format!(
                "subagents may nest {max_depth} deep and this one would be {depth} deep; do the \
                 work here instead"
            ));
        }
        Ok(depth)
    }

    /// The client of the model a child asked for; the session's when it named none.
    fn client_for(&self, model: Option<&str>) -> Result<Arc<dyn atto_llm::ModelClient>, String> {
        let settings = &self.tree.settings;
        Ok(match model {
            None => Arc::clone(&self.tree.template.client),
            Some(name) => match &settings.connect {
                Some(connect) => connect(name)?,
                None => {
                    return Err(format!(
                        "cannot use model '{name}' for a subagent here; leave the model out to \
                         use the session's"
                    ));
                }
            },
        })
    }

    /// A free slot first (the session the user talks to waits for one; a subagent
    /// does not, so a tree of waiting parents cannot lock itself up).
    async fn running_slot(
        &self,
        cancel: &CancellationToken,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, String> {
        let running = Arc::clone(&self.tree.running);
        if self.position.depth == 0 {
            tokio::select! {
                permit = running.acquire_owned() => permit.ok(),
                () = cancel.cancelled() => None,
            }
        } else {
            running.try_acquire_owned().ok()
        }
        .ok_or_else(|| {
            format!(
                "no subagent was started: {} already run at once (--max-subagents); wait for \
                 one to finish, or do the work here",
                self.tree.settings.max_running
            )
        })
    }

    /// A child's limits: its rounds (as asked, within the settings), the subagent time
    /// limit and the wrap-up before it, the rest the template's.
    fn child_limits(&self, request: &SpawnRequest) -> Limits {
        let settings = &self.tree.settings;
        Limits {
            max_rounds: request
                .max_iterations
                .unwrap_or(settings.max_iterations)
                .clamp(1, settings.max_iterations.max(1)),
            max_tokens: None,
            max_duration: Some(settings.timeout),
            wrap_up_before: Some(wrap_up_lead(settings.timeout)),
            ..self.tree.template.limits.clone()
        }
    }

    /// The files a writing child may change, normalized; read-only roles take none.
    fn declared_files(
        &self,
        request: &SpawnRequest,
        role: SubagentRole,
    ) -> Result<Vec<String>, String> {
        if role != SubagentRole::Implement {
            if !request.files.is_empty() {
                return Err(format!(
                    "a {} subagent writes nothing, so it takes no files; use role implement \
                     for one that changes {}",
                    role.as_str(),
                    request.files.join(", ")
                ));
            }
            return Ok(Vec::new());
        }
        let workspace = &self.tree.template.workspace;
        let mut files = Vec::new();
        for file in &request.files {
            let abs = atto_tools::paths::resolve(workspace, file)
                .map_err(|e| format!("cannot give the subagent {file}: {e}"))?;
            files.push(atto_tools::paths::relative(workspace, &abs));
        }
        // A parent limited to some files hands down no more than those.
        if let Some(own) = &self.position.scope {
            let outside: Vec<&String> = files
                .iter()
                .filter(|f| !atto_planner::plan::execute::in_scope(own, f))
                .collect();
            if !outside.is_empty() || files.is_empty() {
                return Err(format!(
                    "this subagent may change only {}, so its child may not be given {}",
                    own.join(", "),
                    if files.is_empty() {
                        "the whole workspace".to_owned()
                    } else {
                        outside
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ));
            }
        }
        Ok(files)
    }

    /// The child's session options: the template's, with the parent's authority now.
    fn child_options(
        &self,
        id: &str,
        client: Arc<dyn atto_llm::ModelClient>,
        mode: atto_protocol::AgentMode,
        authority: super::CallAuthority,
    ) -> SessionOptions {
        let t = &self.tree.template;
        SessionOptions {
            session_id: id.to_owned(),
            workspace: t.workspace.clone(),
            client,
            tools: t.tools.clone(),
            limits: t.limits.clone(),
            instructions: t.instructions.clone(),
            permission: authority.permission,
            // The child decides by the tree's grant table (`SessionTree::grants`), not a copy.
            grants: Vec::new(),
            store: t.store.clone(),
            sandbox: t.sandbox.clone(),
            trust: authority.trust,
            protected_dirs: t.protected_dirs.clone(),
            resume: None,
            thread: None,
            mode,
            checkpoints: t.checkpoints.as_ref().map(|c| Arc::new(c.for_session(id))),
            planner: t.planner,
            approval_deadline: t.approval_deadline,
            unsandboxed_commands: t.unsandboxed_commands.clone(),
            start_notices: Vec::new(),
            sandbox_off_reason: t.sandbox_off_reason.clone(),
            subagents: super::SubagentSettings::default(),
            models: crate::models::ModelSettings::default(),
            learning: t.learning,
            context: t.context.clone(),
            external_tools: t.external_tools.clone(),
        }
    }

    /// Gives the child its task and follows it to its end.
    async fn drive(
        &self,
        mut handle: crate::AgentHandle,
        child: &Child,
        prompt: String,
        cancel: &CancellationToken,
    ) -> Option<FinalResult> {
        let ops = handle.op_sender();
        if ops.submit(Op::UserInput { text: prompt }).is_err() {
            return None;
        }
        let mut result = None;
        let mut interrupted = false;
        // The child stops itself at its time limit; this bounds a child that does not.
        let overdue = tokio::time::sleep(self.tree.settings.timeout + GRACE);
        tokio::pin!(overdue);
        loop {
            tokio::select! {
                event = handle.next_event() => match event {
                    None | Some(Event::SessionEnded) => break,
                    Some(Event::TurnCompleted { result: r, .. }) => {
                        result = Some(r);
                        let _ = ops.submit(Op::Shutdown);
                    }
                    Some(Event::ApprovalRequired(mut request)) => {
                        let asked_as = request.id.clone();
                        request.id = format!("{}/{asked_as}", short(&child.id));
                        request.subagent.get_or_insert_with(|| child.tag.clone());
                        self.approvals.route(request.id.clone(), ops.clone(), asked_as);
                        self.emit(Event::ApprovalRequired(request));
                    }
                    Some(Event::Usage { .. }) => self.progress(child, None),
                    Some(Event::ToolCallFinished { call_id, summary, .. }) => {
                        child.finished_call(&call_id, summary);
                    }
                    Some(Event::ToolCallStarted { name, arguments, call_id, kind, .. }) => {
                        child.started_call(&call_id, &name, kind, &arguments);
                        let what = crate::plan_queue::one_paragraph(&format!("{name} {}", brief(&arguments)), 80);
                        self.progress(child, Some(what));
                    }
                    // Its own children, passed up so the user sees the whole tree.
                    Some(e @ (Event::SubagentStarted { .. }
                        | Event::SubagentProgress { .. }
                        | Event::SubagentFinished { .. })) => self.emit(e),
                    Some(Event::Error { message }) => self.emit(Event::Warning {
                        message: format!("subagent {}: {message}", short(&child.id)),
                    }),
                    Some(_) => {}
                },
                () = cancel.cancelled(), if !interrupted => {
                    interrupted = true;
                    let _ = ops.submit(Op::Interrupt);
                }
                () = &mut overdue => {
                    let _ = ops.submit(Op::Interrupt);
                    // Whatever it has not said by now is lost with it.
                    if tokio::time::timeout(GRACE, async {
                        while let Some(event) = handle.next_event().await {
                            if let Event::TurnCompleted { result: r, .. } = event {
                                return Some(r);
                            }
                        }
                        None
                    }).await.ok().flatten().map(|r| result = Some(r)).is_none() {
                        break;
                    }
                    let _ = ops.submit(Op::Shutdown);
                    break;
                }
            }
        }
        result
    }

    fn progress(&self, child: &Child, activity: Option<String>) {
        let (used, budget) = self.tree.budget.spent(&child.id);
        let mut info = child.info.clone();
        info.tokens_used = used;
        info.elapsed_ms = elapsed_ms(child.started);
        self.tree.record(info);
        self.emit(Event::SubagentProgress {
            id: child.id.clone(),
            tokens_used: used,
            budget_tokens: budget.unwrap_or(child.info.budget_tokens),
            elapsed_ms: elapsed_ms(child.started),
            activity,
        });
    }

    /// Hands the unspent budget back and turns the ending into the report.
    fn finish(&self, child: Child, result: Option<FinalResult>) -> ChildOutcome {
        let spend = self.tree.budget.finish(&self.position.node, &child.id);
        let forced = match &result {
            None => Some("it ended without a result".to_owned()),
            Some(r) => match r.status {
                TurnStatus::Completed => None,
                TurnStatus::LimitReached => Some(
                    r.error
                        .clone()
                        .unwrap_or_else(|| "it reached a limit".to_owned()),
                ),
                TurnStatus::Failed => Some(format!(
                    "it failed: {}",
                    r.error.as_deref().unwrap_or("an error")
                )),
                TurnStatus::Cancelled => {
                    Some("it was cancelled (the parent's work was interrupted)".to_owned())
                }
            },
        };
        let files = result
            .as_ref()
            .map(|r| r.files_changed.clone())
            .unwrap_or_default();
        let mut info = child.info.clone();
        info.tokens_used = spend.tokens;
        info.cost_usd = spend.cost;
        info.elapsed_ms = elapsed_ms(child.started);
        info.status = match (&result, &forced) {
            (_, None) => "completed",
            (Some(r), Some(_)) if r.status == TurnStatus::Failed => "failed",
            _ => "stopped",
        }
        .to_owned();
        let header = format!(
            "Subagent {} ({}, model {}) {}: {} of {} tokens used, cost {}, {:.1} s.",
            short(&child.id),
            child.info.role.as_str(),
            info.model,
            info.status,
            info.tokens_used,
            info.budget_tokens,
            info.cost_usd
                .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}")),
            Duration::from_millis(info.elapsed_ms).as_secs_f64(),
        );
        let text = result.as_ref().map_or("", |r| r.text.as_str());
        let mut report = report::render(&Ending {
            text,
            files: &files,
            forced: forced.as_deref(),
            header,
        });
        let quality = self.check(&child, text, &files);
        report.push_str(&format!(
            "\n\n## Quality check (by atto)\n{}",
            if quality.findings.is_empty() {
                "passed: the report and the files it names hold up".to_owned()
            } else {
                format!("FAILED: {}", quality.findings.join("; "))
            }
        ));
        self.tree.record(info.clone());
        self.emit(Event::SubagentFinished {
            agent: info,
            forced_stop: forced,
            files_modified: files.clone(),
            report: report.clone(),
            quality: Some(quality),
        });
        ChildOutcome { report, files }
    }
}

impl Child {
    fn started_call(&self, id: &str, name: &str, kind: ToolKind, arguments: &serde_json::Value) {
        let mut action = atto_quality::action::started(name, kind, arguments.clone());
        // Kept with its call id, so its end finds it.
        action.arguments = serde_json::json!({"call_id": id, "args": arguments});
        self.actions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(action);
    }

    fn finished_call(&self, id: &str, summary: String) {
        let mut actions = self
            .actions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(action) = actions.iter_mut().find(|a| a.arguments["call_id"] == id) {
            action.output = summary;
        }
    }
}

impl Spawner {
    /// The quality checks a closure report passes (pre-flight: V6 budget excuses, V10
    /// nothing done; concrete checks of the files it changed).
    fn check(&self, child: &Child, text: &str, files: &[String]) -> atto_protocol::QualityCheck {
        use atto_quality::{QualityConfig, QualityTask, TaskKind, WorkerResult};
        let workspace = &self.tree.template.workspace;
        let config = QualityConfig::load(workspace).unwrap_or_default();
        let task = QualityTask {
            id: child.id.clone(),
            kind: match child.info.role {
                SubagentRole::Implement => TaskKind::Implement,
                SubagentRole::Verify => TaskKind::Test,
                SubagentRole::Explore | SubagentRole::Review => TaskKind::Research,
            },
            description: child.info.task.clone(),
            target_files: child.files.clone(),
            acceptance: Vec::new(),
        };
        let actions: Vec<atto_quality::ToolAction> = child
            .actions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|a| atto_quality::ToolAction {
                arguments: a.arguments["args"].clone(),
                ..a.clone()
            })
            .collect();
        let result = WorkerResult {
            text: text.to_owned(),
            closure_report: Some(text.to_owned()),
            actions,
            model: Some(child.info.model.clone()),
        };
        let mut findings = Vec::new();
        // A file the report says it changed that the checkpoints show untouched is a
        // claim the parent would otherwise build on.
        let unchanged = report::unchanged_claims(text, files);
        if !unchanged.is_empty() {
            findings.push(format!(
                "the report names {} as modified, but the checkpoints show no change to it",
                unchanged.join(", ")
            ));
        }
        if let Some(r) = atto_quality::preflight::check(&task, &result, files, workspace, &config) {
            findings.push(format!("{}: {}", r.code, r.message));
        }
        let before = std::collections::BTreeMap::new();
        for f in atto_quality::concrete::check(&task, files, workspace, &before) {
            findings.push(match &f.file {
                Some(file) => format!("{file}: {}", f.message),
                None => f.message,
            });
        }
        atto_protocol::QualityCheck {
            verdict: if findings.is_empty() { "pass" } else { "fail" }.to_owned(),
            score: None,
            attempt: 1,
            findings,
            checks: Vec::new(),
        }
    }
}

/// The child's first prompt.
fn prompt(
    task: &str,
    role: SubagentRole,
    request: &SpawnRequest,
    def: Option<&AgentDef>,
    files: &[String],
) -> String {
    let mut out = String::new();
    if let Some(def) = def.filter(|d| !d.instructions.is_empty()) {
        out.push_str(&def.instructions);
        out.push_str("\n\n");
    }
    out.push_str(
        "You are a subagent: another agent session gave you one task. Your history starts \
         here and nobody will answer questions, so do what you can with your tools, then \
         report. ",
    );
    out.push_str(match role {
        SubagentRole::Explore => "Your role is explore: read and search only.",
        SubagentRole::Review => "Your role is review: read and judge only; change nothing.",
        SubagentRole::Verify => "Your role is verify: read, and run test commands only.",
        SubagentRole::Implement => "Your role is implement: make the change the task asks for.",
    });
    out.push_str("\n\nTask: ");
    out.push_str(task);
    if let Some(notes) = request.notes.as_deref().filter(|n| !n.trim().is_empty()) {
        out.push_str("\n\nNotes from the session that started you:\n");
        out.push_str(notes.trim());
    }
    if !files.is_empty() {
        out.push_str("\n\nYou may change only these files (writes to others are refused): ");
        out.push_str(&files.join(", "));
    }
    out.push_str("\n\n");
    out.push_str(report::INSTRUCTIONS);
    out
}

/// The first argument worth showing for a progress line.
fn brief(arguments: &serde_json::Value) -> String {
    ["command", "path", "pattern", "task"]
        .iter()
        .find_map(|k| arguments.get(*k).and_then(serde_json::Value::as_str))
        .unwrap_or("")
        .to_owned()
}

/// The id as front ends show it.
pub(crate) fn short(id: &str) -> &str {
    // uuid v7 ids start with the time: the last characters tell siblings apart.
    id.get(id.len().saturating_sub(8)..).unwrap_or(id)
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
