//! A session's tasks and goals in use: the rules of `tasks` plus persistence through the
//! store, shared between the session (slash commands, goal accounting, continuing toward
//! a goal) and the model's task tools. A store that fails is reported; the session goes on
//! with what it holds in memory.

use std::sync::Arc;

use atto_protocol::{Event, GoalStatus, Task, TaskState};
use atto_store::Store;
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc};

use crate::tasks::{GoalBook, TaskGraph};

/// Tasks and goals of one session.
pub struct GoalsAndTasks {
    store: Option<Store>,
    session: String,
    pub tasks: TaskGraph,
    pub goals: GoalBook,
    events: mpsc::UnboundedSender<Event>,
}

/// Shared between the session and the tools.
pub type SharedGoalsAndTasks = Arc<Mutex<GoalsAndTasks>>;

impl GoalsAndTasks {
    pub fn new(
        store: Option<Store>,
        session: String,
        events: mpsc::UnboundedSender<Event>,
    ) -> Self {
        Self {
            store,
            session,
            tasks: TaskGraph::new(),
            goals: GoalBook::new(),
            events,
        }
    }

    /// Reads the session's tasks and goals back (after a resume).
    pub async fn load(&mut self) {
        let Some(store) = self.store.clone() else {
            return;
        };
        let tasks = store.tasks(&self.session).await;
        let goals = store.goals(&self.session).await;
        match tasks
            .map_err(|e| e.to_string())
            .and_then(|t| TaskGraph::from_tasks(t).map_err(|e| e.to_string()))
        {
            Ok(graph) => self.tasks = graph,
            Err(err) => self.warn(format!("the session's tasks could not be loaded: {err}")),
        }
        match goals
            .map_err(|e| e.to_string())
            .and_then(|g| GoalBook::from_goals(g).map_err(|e| e.to_string()))
        {
            Ok(book) => self.goals = book,
            Err(err) => self.warn(format!("the session's goals could not be loaded: {err}")),
        }
    }

    /// Writes what changed since the last save.
    pub async fn save(&mut self) {
        let tasks = self.tasks.take_changed();
        let goals = self.goals.take_changes();
        let Some(store) = self.store.clone() else {
            return;
        };
        let mut failed = None;
        for task in &tasks {
            if let Err(err) = store.save_task(task, &self.session).await {
                failed = Some(err.to_string());
            }
        }
        for goal in &goals.saved {
            if let Err(err) = store.save_goal(goal, &self.session).await {
                failed = Some(err.to_string());
            }
        }
        for id in &goals.removed {
            if let Err(err) = store.delete_goal(id, &self.session).await {
                failed = Some(err.to_string());
            }
        }
        if let Some(err) = failed {
            self.warn(format!("tasks and goals could not be saved: {err}"));
        }
    }

    fn warn(&self, message: String) {
        let _ = self.events.send(Event::Warning { message });
    }

    /// The current goal's objective, if it is active (it asks for more work).
    pub fn active_goal(&self) -> Option<String> {
        self.goals
            .current()
            .filter(|g| g.status == GoalStatus::Active)
            .map(|g| g.objective.clone())
    }

    /// The goals event: every goal, current first among the open ones.
    pub fn goals_event(&self) -> Event {
        Event::Goals {
            goals: self.goals.list().to_vec(),
            current: self.goals.current().map(|g| g.id.clone()),
        }
    }
}

/// The task list as the model sees it.
pub fn task_lines(tasks: &[Task]) -> String {
    if tasks.is_empty() {
        return "no tasks yet".to_owned();
    }
    let number_of = |id: &str| {
        tasks
            .iter()
            .find(|t| t.id == id)
            .map_or_else(|| "?".to_owned(), |t| t.number.to_string())
    };
    tasks
        .iter()
        .map(|t| {
            let deps: Vec<String> = t.depends_on.iter().map(|d| number_of(d)).collect();
            let deps = if deps.is_empty() {
                String::new()
            } else {
                format!(" (after {})", deps.join(", "))
            };
            format!("{}. [{}] {}{deps}", t.number, t.state.as_str(), t.title)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn arg_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn bad(message: impl Into<String>) -> ToolError {
    ToolError::InvalidArguments(message.into())
}

/// Which task tool.
#[derive(Clone, Copy)]
enum Kind {
    Create,
    Update,
    List,
    Goal,
}

/// The model's task and goal tools: `task_create`, `task_update`, `task_list`,
/// `goal_update`. They track work; they change no file.
pub struct WorkTool {
    work: SharedGoalsAndTasks,
    kind: Kind,
}

impl WorkTool {
    /// All four tools over one session's work.
    pub fn all(work: &SharedGoalsAndTasks) -> Vec<Arc<dyn Tool>> {
        [Kind::Create, Kind::Update, Kind::List, Kind::Goal]
            .into_iter()
            .map(|kind| {
                Arc::new(WorkTool {
                    work: Arc::clone(work),
                    kind,
                }) as Arc<dyn Tool>
            })
            .collect()
    }
}

impl Tool for WorkTool {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Create => "task_create",
            Kind::Update => "task_update",
            Kind::List => "task_list",
            Kind::Goal => "goal_update",
        }
    }

    fn description(&self) -> &'static str {
        match self.kind {
            Kind::Create => {
                "Add a task to this session's task list (for multi-step work); it stays \
                 blocked until the tasks it depends on are done."
            }
            Kind::Update => "Set a task's state, with what came of it.",
            Kind::List => "Show the session's tasks with their states and dependencies.",
            Kind::Goal => {
                "Report on the user's session goal: complete when met, blocked when you \
                 cannot go on without the user."
            }
        }
    }

    fn parameters(&self) -> Value {
        match self.kind {
            Kind::Create => json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "detail": {"type": "string"},
                    "depends_on": {"type": "array", "items": {"type": "integer"}, "description": "Numbers of tasks that must finish first"}
                },
                "required": ["title"]
            }),
            Kind::Update => json!({
                "type": "object",
                "properties": {
                    "number": {"type": "integer"},
                    "state": {"type": "string", "enum": ["in_progress", "completed", "failed", "skipped"]},
                    "result": {"type": "string"}
                },
                "required": ["number", "state"]
            }),
            Kind::List => json!({"type": "object", "properties": {}}),
            Kind::Goal => json!({
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": ["complete", "blocked"]},
                    "note": {"type": "string", "description": "What was achieved, or what blocks it"}
                },
                "required": ["status"]
            }),
        }
    }

    fn danger(&self) -> atto_protocol::DangerLevel {
        atto_protocol::DangerLevel::Safe
    }

    fn mutates(&self, _args: &Value) -> bool {
        false
    }

    fn run<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let mut work = self.work.lock().await;
            let text = match self.kind {
                Kind::Create => create_task(&mut work, &args)?,
                Kind::Update => update_task(&mut work, &args)?,
                Kind::List => task_lines(work.tasks.list()),
                Kind::Goal => update_goal(&mut work, &args)?,
            };
            if !matches!(self.kind, Kind::List) {
                work.save().await;
            }
            Ok(ToolOutput::text(text))
        })
    }
}

/// `task_create`: adds a task after the ones it depends on.
fn create_task(work: &mut GoalsAndTasks, args: &Value) -> Result<String, ToolError> {
    let title = arg_str(args, "title").ok_or_else(|| bad("missing `title`"))?;
    let detail = arg_str(args, "detail").unwrap_or("");
    let deps: Vec<u32> = args
        .get("depends_on")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_u64().and_then(|n| u32::try_from(n).ok()))
                .collect()
        })
        .unwrap_or_default();
    let task = work
        .tasks
        .add(title, detail, &deps)
        .map_err(|e| bad(e.to_string()))?;
    Ok(format!(
        "task {} added ({})",
        task.number,
        task.state.as_str()
    ))
}

/// `task_update`: starts or finishes a task, and says what that unblocked or stranded.
fn update_task(work: &mut GoalsAndTasks, args: &Value) -> Result<String, ToolError> {
    let number = args
        .get("number")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| bad("missing task `number`"))?;
    let state = arg_str(args, "state")
        .and_then(TaskState::parse)
        .ok_or_else(|| bad("`state` must be in_progress, completed, failed or skipped"))?;
    let result = arg_str(args, "result").map(str::to_owned);
    if state == TaskState::InProgress {
        work.tasks.start(number).map_err(|e| bad(e.to_string()))?;
        return Ok(format!("task {number} in progress"));
    }
    let done = work
        .tasks
        .finish(number, state, result)
        .map_err(|e| bad(e.to_string()))?;
    let mut text = format!("task {number} {}", state.as_str());
    if !done.unblocked.is_empty() {
        text.push_str(&format!("; now ready: {:?}", done.unblocked));
    }
    if !done.stranded.is_empty() {
        text.push_str(&format!(
            "; blocked by this failure: {:?} (retry it or skip them)",
            done.stranded
        ));
    }
    Ok(text)
}

/// `goal_update`: the model marks the current goal complete or blocked.
fn update_goal(work: &mut GoalsAndTasks, args: &Value) -> Result<String, ToolError> {
    let note = arg_str(args, "note").unwrap_or("");
    let goal = match arg_str(args, "status") {
        Some("complete") => work.goals.complete(),
        Some("blocked") => work.goals.block(),
        _ => return Err(bad("`status` must be complete or blocked")),
    }
    .map_err(|e| bad(e.to_string()))?;
    Ok(format!(
        "goal \"{}\" is now {}{}",
        goal.objective,
        goal.status.as_str(),
        if note.is_empty() {
            String::new()
        } else {
            format!(": {note}")
        }
    ))
}
