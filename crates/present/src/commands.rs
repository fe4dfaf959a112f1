//! Slash commands: the one parser every front end shares. It turns `/name args` into an
//! `Op` for the session, or into an action the front end handles itself (help, exit).
//! Unknown names get a "did you mean".

mod learnings;

use atto_protocol::{
    AgentMode, GoalCommand, Op, PermissionMode, PlanSelection, RewindScope, SpawnRequest,
    parse_agent_mode, parse_effort, parse_role,
};

/// What a slash command asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Send this op to the session.
    Op(Op),
    /// Show the command list.
    Help,
    /// Leave the session.
    Exit,
}

/// One command, for `/help` and for suggestions.
pub struct CommandInfo {
    /// Name with its arguments, as typed.
    pub usage: &'static str,
    /// What it does.
    pub about: &'static str,
}

/// Every command, in `/help` order.
pub const COMMANDS: &[CommandInfo] = &[
    CommandInfo {
        usage: "/grants",
        about: "list the grants in force (scope, rule, created, last used, uses)",
    },
    CommandInfo {
        usage: "/grants revoke N",
        about: "remove grant N (saved or this session's; config rules live in the config)",
    },
    CommandInfo {
        usage: "/spawn [--model M] [--role R] [--files a,b] \"task\"",
        about: "run a subagent on a task with its own budget; its report comes back here",
    },
    CommandInfo {
        usage: "/model [NAME|PROVIDER/NAME|auto]",
        about: "show the models and routes, pin one for the following turns, or route by complexity",
    },
    CommandInfo {
        usage: "/config [KEY VALUE [confirm]]",
        about: "show or change session settings (permission, approval, mode, model, effort, trust, limits)",
    },
    CommandInfo {
        usage: "/cost",
        about: "tokens in/out/cached, cache hit rate and cost so far, per model",
    },
    CommandInfo {
        usage: "/context",
        about: "how full the model's context window is (system prompt, tools, conversation)",
    },
    CommandInfo {
        usage: "/compact [focus]",
        about: "summarise the older conversation now, keeping plan, tasks, goals and constraints verbatim",
    },
    CommandInfo {
        usage: "/mcp",
        about: "MCP servers: state, tools and their annotations, last error",
    },
    CommandInfo {
        usage: "/agents",
        about: "list this session's subagents (task, tokens of budget, time, status)",
    },
    CommandInfo {
        usage: "/swarm [\"TASK\"]",
        about: "split TASK among worker processes (like atto swarm; asks before it runs); bare: show or hide the swarm (terminal UI)",
    },
    CommandInfo {
        usage: "/fork [label]",
        about: "branch the conversation here into a new thread and continue in it",
    },
    CommandInfo {
        usage: "/threads",
        about: "show the thread tree (ids, labels, message counts, current marker)",
    },
    CommandInfo {
        usage: "/switch ID",
        about: "continue in another thread (id, unique prefix, or main)",
    },
    CommandInfo {
        usage: "/rollback",
        about: "go back to this thread's fork point, in a new sibling thread",
    },
    CommandInfo {
        usage: "/rewind [N [conversation|code|both]]",
        about: "list the prompts, or go back to just before prompt N (default: the conversation; the old one stays for /rollback)",
    },
    CommandInfo {
        usage: "/mode NAME",
        about: "switch agent mode: build (agent), plan, review, debug; yolo; or 1 plan, 2 agent, 3 yolo",
    },
    CommandInfo {
        usage: "/plan",
        about: "toggle plan mode (writes are queued as proposed changes, not run)",
    },
    CommandInfo {
        usage: "/show-plan",
        about: "list the proposed changes in order: tool, path, reason and a diff of each",
    },
    CommandInfo {
        usage: "/approve [N | 2,4 | 3-5]",
        about: "run all pending changes, the first N, or the ones picked by number",
    },
    CommandInfo {
        usage: "/reject [N | 2,4 | 3-5] [reason]",
        about: "discard all pending changes, or the ones picked; the reason goes to the model",
    },
    CommandInfo {
        usage: "/auto \"TASK\"",
        about: "ask the model for a step plan of TASK; refine it in plain words, then /approve or /reject",
    },
    CommandInfo {
        usage: "/auto-rollback on|off",
        about: "on a failed plan step: roll its files back and stop (on), or skip its dependents (off)",
    },
    CommandInfo {
        usage: "/auto-parallel on|off",
        about: "run ready plan steps with disjoint files together, up to three at a time (off: one by one)",
    },
    CommandInfo {
        usage: "/auto-plan on|off [THRESHOLD]",
        about: "plan prompts whose complexity score reaches THRESHOLD (default 1.5) before running them",
    },
    CommandInfo {
        usage: "/effort low|medium|high|default",
        about: "how hard a reasoning model thinks; default leaves it to the provider",
    },
    CommandInfo {
        usage: "/goal [TEXT [--budget TOKENS]]",
        about: "show the goal, or set the session's objective: atto keeps working until it is met",
    },
    CommandInfo {
        usage: "/goal pause|resume|complete|blocked|clear",
        about: "change the current goal's status, or remove it",
    },
    CommandInfo {
        usage: "/goal budget N|none",
        about: "change the current goal's token budget (then /goal resume a budget-limited one)",
    },
    CommandInfo {
        usage: "/goals [add \"TEXT\" | done N]",
        about: "list the goals, add one, or mark the N-th open goal done",
    },
    CommandInfo {
        usage: "/learn [KIND] \"TEXT\"",
        about: "keep a lesson of your own for later sessions in this project (validated as written)",
    },
    CommandInfo {
        usage: "/learnings [pending|validated|rejected|archived]",
        about: "list the learnings recalled into prompts here, or those with one status",
    },
    CommandInfo {
        usage: "/learnings show|validate|reject|archive|helpful N",
        about: "show one whole, decide a proposal, retire one, or mark it helpful (+0.05)",
    },
    CommandInfo {
        usage: "/learnings edit N [description|details|keywords|kind] TEXT",
        about: "change a learning's words",
    },
    CommandInfo {
        usage: "/restore list [all] [N]",
        about: "list file checkpoints, newest first: turn, tool, files changed",
    },
    CommandInfo {
        usage: "/restore N",
        about: "bring the files back to checkpoint N (the current state is saved first)",
    },
    CommandInfo {
        usage: "/undo",
        about: "undo the file changes of the last turn that changed files",
    },
    CommandInfo {
        usage: "/trust [on|off]",
        about: "let file tools reach outside the workspace (toggles without an argument)",
    },
    CommandInfo {
        usage: "/help",
        about: "show this list",
    },
    CommandInfo {
        usage: "/queue",
        about: "the messages typed while a turn runs, waiting to be sent (terminal UI)",
    },
    CommandInfo {
        usage: "/exit",
        about: "end the session (also /quit)",
    },
];

/// What the front end knows of the session, for commands that toggle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State {
    /// Trust mode is on.
    pub trust: bool,
    /// The current agent mode.
    pub mode: AgentMode,
}

/// Parses a line that starts with `/`. Errors are one line and change nothing.
pub fn parse(line: &str, state: &State) -> Result<Command, String> {
    let line = line.trim();
    let body = line.strip_prefix('/').unwrap_or(line);
    let mut words = body.split_whitespace();
    let name = words.next().unwrap_or("");
    let args: Vec<&str> = words.collect();
    let input = Input {
        name,
        args: &args,
        body,
        state,
    };
    match name {
        "grants" | "trust" | "fork" | "threads" | "switch" | "rollback" | "rewind" => {
            session_command(&input)
        }
        "mode" | "plan" => mode_command(&input),
        "restore" | "undo" => checkpoints_command(&input),
        "goal" | "goals" => goals_command(&input),
        "auto" | "effort" | "auto-rollback" | "auto-parallel" | "auto-plan" => {
            planner_command(&input)
        }
        "show-plan" | "approve" | "reject" => review_command(&input),
        "spawn" => spawn_command(body),
        "learn" | "learnings" => learnings::parse(name, &args, body),
        "agents" if args.is_empty() => Ok(Command::Op(Op::ListAgents)),
        "model" => match args.as_slice() {
            [] => Ok(Command::Op(Op::ListModels)),
            [name] => Ok(Command::Op(Op::SetModel {
                model: (*name).to_owned(),
            })),
            _ => Err("usage: /model, /model NAME, /model PROVIDER/NAME or /model auto".to_owned()),
        },
        "cost" if args.is_empty() => Ok(Command::Op(Op::ShowCost)),
        "context" if args.is_empty() => Ok(Command::Op(Op::ShowContext)),
        "context" => Err("usage: /context".to_owned()),
        "compact" => {
            let focus = body["compact".len()..].trim().trim_matches('"');
            Ok(Command::Op(Op::Compact {
                focus: (!focus.is_empty()).then(|| focus.to_owned()),
            }))
        }
        "mcp" if args.is_empty() => Ok(Command::Op(Op::ListMcp)),
        "mcp" => Err("usage: /mcp".to_owned()),
        "config" => match args.as_slice() {
            [] => Ok(Command::Op(Op::Configure {
                key: None,
                value: String::new(),
                confirm: false,
            })),
            [key, value] | [key, value, "confirm"] => Ok(Command::Op(Op::Configure {
                key: Some((*key).to_owned()),
                value: (*value).to_owned(),
                confirm: args.len() == 3,
            })),
            _ => Err("usage: /config, or /config KEY VALUE [confirm]".to_owned()),
        },
        "cost" => Err("usage: /cost".to_owned()),
        "agents" => Err("usage: /agents".to_owned()),
        _ => match (name, args.as_slice()) {
            ("help", _) => Ok(Command::Help),
            // The front ends run swarms themselves (the engine knows nothing of them).
            ("swarm", _) => Err(
                "/swarm runs in the terminal UI and the line session; headless, run \
                 atto swarm \"task\""
                    .to_owned(),
            ),
            ("queue", _) => Err(
                "/queue lists the messages typed while a turn runs in the terminal \
                             UI; here each line waits for the answer before it is read, so \
                             nothing is queued"
                    .to_owned(),
            ),
            ("exit" | "quit", _) => Ok(Command::Exit),
            _ => Err(unknown(name)),
        },
    }
}

/// A slash command split up: its name, its words, the text after the `/`.
struct Input<'a> {
    name: &'a str,
    args: &'a [&'a str],
    body: &'a str,
    state: &'a State,
}

/// `/grants`, `/trust`, and the thread commands `/fork`, `/threads`, `/switch`, `/rollback`,
/// `/rewind`.
fn session_command(i: &Input<'_>) -> Result<Command, String> {
    let (name, body, state) = (i.name, i.body, i.state);
    match (name, i.args) {
        ("grants", []) => Ok(Command::Op(Op::ListGrants)),
        ("grants", ["revoke", n]) => match n.parse::<u32>() {
            Ok(number) if number > 0 => Ok(Command::Op(Op::RevokeGrant { number })),
            _ => Err(format!(
                "/grants revoke takes a grant number from /grants, not '{n}'"
            )),
        },
        ("grants", _) => Err("usage: /grants, or /grants revoke N".to_owned()),
        ("trust", []) => Ok(Command::Op(Op::SetTrust { on: !state.trust })),
        ("trust", ["on"]) => Ok(Command::Op(Op::SetTrust { on: true })),
        ("trust", ["off"]) => Ok(Command::Op(Op::SetTrust { on: false })),
        ("trust", _) => Err("usage: /trust, /trust on or /trust off".to_owned()),
        ("fork", []) => Ok(Command::Op(Op::Fork { label: None })),
        ("fork", _) => {
            let label = body["fork".len()..].trim().trim_matches('"').to_owned();
            Ok(Command::Op(Op::Fork { label: Some(label) }))
        }
        ("threads", []) => Ok(Command::Op(Op::ListThreads)),
        ("switch", []) => Err("usage: /switch ID or LABEL (see /threads)".to_owned()),
        // A label may have spaces: everything after the command names the thread.
        ("switch", _) => Ok(Command::Op(Op::SwitchThread {
            id: body["switch".len()..].trim().trim_matches('"').to_owned(),
        })),
        ("rollback", []) => Ok(Command::Op(Op::Rollback)),
        ("rewind", []) => Ok(Command::Op(Op::ListPrompts)),
        ("rewind", [n, rest @ ..]) if rest.len() <= 1 => {
            let prompt = match n.parse::<u32>() {
                Ok(prompt) if prompt > 0 => prompt,
                _ => {
                    return Err(format!(
                        "/rewind takes a prompt number from /rewind, not '{n}'"
                    ));
                }
            };
            let scope = match rest.first().copied() {
                None | Some("conversation") => RewindScope::Conversation,
                Some("code") => RewindScope::Code,
                Some("both") => RewindScope::Both,
                Some(other) => {
                    return Err(format!(
                        "/rewind N takes conversation, code or both, not '{other}'"
                    ));
                }
            };
            Ok(Command::Op(Op::Rewind { prompt, scope }))
        }
        ("rewind", _) => Err("usage: /rewind, or /rewind N [conversation|code|both]".to_owned()),
        _ => Err(unknown(name)),
    }
}

/// `/spawn [--model M] [--role R] [--agent NAME] [--files a,b] [--budget N] "task"`.
fn spawn_command(body: &str) -> Result<Command, String> {
    const USAGE: &str = "usage: /spawn [--model M] [--role explore|review|implement|verify] \
                         [--agent NAME] [--files a,b] [--budget TOKENS] \"task\"";
    let mut rest = body["spawn".len()..].trim_start();
    let mut request = SpawnRequest::default();
    while let Some(flag) = rest.strip_prefix("--") {
        let (name, after) = flag.split_once(char::is_whitespace).ok_or(USAGE)?;
        let after = after.trim_start();
        let (value, after) = after.split_once(char::is_whitespace).unwrap_or((after, ""));
        match name {
            "model" => request.model = Some(value.to_owned()),
            "agent" => request.agent = Some(value.to_owned()),
            "role" => request.role = Some(parse_role(value)?),
            "files" => {
                request.files = value
                    .split(',')
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            "budget" => {
                request.budget_tokens =
                    Some(value.parse().map_err(|_| {
                        format!("--budget takes a number of tokens, not '{value}'")
                    })?);
            }
            other => return Err(format!("unknown option --{other}; {USAGE}")),
        }
        rest = after.trim_start();
    }
    let task = rest.trim().trim_matches('"').trim();
    if task.is_empty() {
        return Err(USAGE.to_owned());
    }
    request.task = task.to_owned();
    Ok(Command::Op(Op::Spawn { request }))
}

/// `/mode NAME` and `/plan`.
fn mode_command(i: &Input<'_>) -> Result<Command, String> {
    let (name, state) = (i.name, i.state);
    match (name, i.args) {
        ("mode", [name]) => {
            let (mode, yolo) = parse_agent_mode(name)?;
            Ok(Command::Op(Op::SetMode {
                mode,
                permission: yolo.then_some(PermissionMode::Yolo),
            }))
        }
        ("mode", []) => Err(format!(
            "the mode is {}; /mode NAME switches (build, plan, review, debug, yolo)",
            state.mode.as_str()
        )),
        ("mode", _) => Err("usage: /mode NAME (build, plan, review, debug, yolo)".to_owned()),
        ("plan", []) => Ok(Command::Op(Op::SetMode {
            mode: if state.mode == AgentMode::Plan {
                AgentMode::Build
            } else {
                AgentMode::Plan
            },
            permission: None,
        })),
        ("plan", _) => Err("/plan takes no arguments (it toggles plan mode)".to_owned()),
        _ => Err(unknown(name)),
    }
}

/// `/restore list [N]`, `/restore N`, `/undo`.
fn checkpoints_command(i: &Input<'_>) -> Result<Command, String> {
    let name = i.name;
    match (name, i.args) {
        ("restore", [] | ["list"]) => Ok(Command::Op(Op::ListCheckpoints {
            limit: None,
            all: false,
        })),
        ("restore", ["list", "all"]) => Ok(Command::Op(Op::ListCheckpoints {
            limit: None,
            all: true,
        })),
        ("restore", ["list", "all", n]) => match n.parse::<u32>() {
            Ok(limit) if limit > 0 => Ok(Command::Op(Op::ListCheckpoints {
                limit: Some(limit),
                all: true,
            })),
            _ => Err(format!("/restore list all takes a count, not '{n}'")),
        },
        ("restore", ["list", n]) => match n.parse::<u32>() {
            Ok(limit) if limit > 0 => Ok(Command::Op(Op::ListCheckpoints {
                limit: Some(limit),
                all: false,
            })),
            _ => Err(format!("/restore list takes a count, not '{n}'")),
        },
        ("restore", [n]) => match n.parse::<u32>() {
            Ok(id) if id > 0 => Ok(Command::Op(Op::RestoreCheckpoint { id })),
            _ => Err(format!(
                "/restore takes a checkpoint number from /restore list, not '{n}'"
            )),
        },
        ("restore", _) => Err("usage: /restore list [N], or /restore N".to_owned()),
        ("undo", []) => Ok(Command::Op(Op::Undo)),
        ("undo", _) => Err("/undo takes no arguments".to_owned()),
        _ => Err(unknown(name)),
    }
}

/// `/goal …` and `/goals …`.
fn goals_command(i: &Input<'_>) -> Result<Command, String> {
    let (name, body) = (i.name, i.body);
    match (name, i.args) {
        ("goal", []) | ("goals", []) => Ok(goal(GoalCommand::List)),
        ("goal", [word]) if GOAL_WORDS.contains(word) => Ok(goal(match *word {
            "pause" => GoalCommand::Pause,
            "resume" => GoalCommand::Resume,
            "complete" => GoalCommand::Complete,
            "blocked" => GoalCommand::Blocked,
            _ => GoalCommand::Clear,
        })),
        ("goal", ["budget", n]) => {
            let tokens = match *n {
                "none" | "off" => None,
                n => match n.replace('_', "").parse::<u64>() {
                    Ok(n) => Some(n),
                    Err(_) => {
                        return Err(format!(
                            "/goal budget takes a number of tokens (or none), not '{n}'"
                        ));
                    }
                },
            };
            Ok(goal(GoalCommand::Budget { tokens }))
        }
        ("goal", _) => {
            let text = body["goal".len()..].trim();
            let (objective, budget) = match text.rsplit_once("--budget") {
                Some((objective, n)) => match n.trim().replace('_', "").parse::<u64>() {
                    Ok(n) => (objective.trim(), Some(n)),
                    Err(_) => {
                        return Err(format!(
                            "--budget takes a number of tokens, not '{}'",
                            n.trim()
                        ));
                    }
                },
                None => (text, None),
            };
            let objective = objective.trim_matches('"').trim();
            if objective.is_empty() {
                return Err("usage: /goal TEXT [--budget TOKENS]".to_owned());
            }
            Ok(goal(GoalCommand::Set {
                objective: objective.to_owned(),
                budget,
            }))
        }
        ("goals", ["add", ..]) => {
            let objective = body["goals".len()..].trim()["add".len()..]
                .trim()
                .trim_matches('"')
                .trim();
            if objective.is_empty() {
                return Err("usage: /goals add \"TEXT\"".to_owned());
            }
            Ok(goal(GoalCommand::Add {
                objective: objective.to_owned(),
            }))
        }
        ("goals", ["done", n]) => match n.parse::<u32>() {
            Ok(number) if number > 0 => Ok(goal(GoalCommand::Done { number })),
            _ => Err(format!(
                "/goals done takes a goal number from /goals, not '{n}'"
            )),
        },
        ("goals", _) => Err("usage: /goals, /goals add \"TEXT\" or /goals done N".to_owned()),
        _ => Err(unknown(name)),
    }
}

/// The step planner: `/auto`, `/effort`, `/auto-rollback`, `/auto-parallel`, `/auto-plan`.
fn planner_command(i: &Input<'_>) -> Result<Command, String> {
    let (name, body) = (i.name, i.body);
    match (name, i.args) {
        ("auto", []) => Err("usage: /auto \"TASK\"".to_owned()),
        ("auto", _) => Ok(Command::Op(Op::AutoPlan {
            task: body["auto".len()..]
                .trim()
                .trim_matches('"')
                .trim()
                .to_owned(),
        })),
        ("effort", [level]) => Ok(Command::Op(Op::SetEffort {
            effort: parse_effort(level).map_err(|e| format!("/{e}"))?,
        })),
        ("effort", _) => Err("usage: /effort low|medium|high|default".to_owned()),
        ("auto-rollback", [on @ ("on" | "off")]) => Ok(Command::Op(Op::PlannerSettings {
            auto_rollback_on_failure: Some(*on == "on"),
            detect: None,
            threshold: None,
            parallel: None,
        })),
        ("auto-rollback", _) => Err("usage: /auto-rollback on|off".to_owned()),
        ("auto-parallel", [on @ ("on" | "off")]) => Ok(Command::Op(Op::PlannerSettings {
            auto_rollback_on_failure: None,
            detect: None,
            threshold: None,
            parallel: Some(*on == "on"),
        })),
        ("auto-parallel", _) => Err("usage: /auto-parallel on|off".to_owned()),
        ("auto-plan", [on @ ("on" | "off"), rest @ ..]) if rest.len() <= 1 => {
            let threshold = match rest.first() {
                Some(t) => Some(
                    t.parse::<f64>()
                        .ok()
                        .filter(|t| t.is_finite() && *t >= 0.0)
                        .ok_or_else(|| {
                            format!("/auto-plan takes a score such as 1.5, not '{t}'")
                        })?,
                ),
                None => None,
            };
            Ok(Command::Op(Op::PlannerSettings {
                auto_rollback_on_failure: None,
                detect: Some(*on == "on"),
                threshold,
                parallel: None,
            }))
        }
        ("auto-plan", _) => Err("usage: /auto-plan on|off [THRESHOLD]".to_owned()),
        _ => Err(unknown(name)),
    }
}

/// Plan review: `/show-plan`, `/approve [picks]`, `/reject [picks] [reason]`.
fn review_command(i: &Input<'_>) -> Result<Command, String> {
    let (name, body) = (i.name, i.body);
    match (name, i.args) {
        ("show-plan", []) => Ok(Command::Op(Op::ShowPlan)),
        ("show-plan", _) => Err("/show-plan takes no arguments".to_owned()),
        ("approve", []) => Ok(Command::Op(Op::ApprovePlan {
            selection: PlanSelection::All,
        })),
        ("approve", [picks]) => {
            let selection = match picks.parse::<u32>() {
                Ok(n) => PlanSelection::First { n },
                Err(_) => parse_picks(picks).map_err(|e| format!("/approve: {e}"))?,
            };
            if selection == (PlanSelection::First { n: 0 }) {
                return Err("/approve 0 approves nothing; give N ≥ 1, or no number for all".into());
            }
            Ok(Command::Op(Op::ApprovePlan { selection }))
        }
        ("approve", _) => Err("usage: /approve, /approve N, /approve 2,4 or /approve 3-5".into()),
        ("reject", []) => Ok(Command::Op(Op::RejectPlan {
            selection: PlanSelection::All,
            reason: None,
        })),
        ("reject", [first, ..]) => {
            let rest = body["reject".len()..].trim();
            let (selection, reason) = match parse_picks(first) {
                Ok(selection) => (selection, rest[first.len()..].trim()),
                // Starts like a number but is not a valid pick list: an error, not a reason.
                Err(e) if first.starts_with(|c: char| c.is_ascii_digit()) => {
                    return Err(format!("/reject: {e}"));
                }
                Err(_) => (PlanSelection::All, rest),
            };
            Ok(Command::Op(Op::RejectPlan {
                selection,
                reason: (!reason.is_empty()).then(|| reason.to_owned()),
            }))
        }
        _ => Err(unknown(name)),
    }
}

/// Words `/goal` takes instead of an objective.
const GOAL_WORDS: &[&str] = &["pause", "resume", "complete", "blocked", "clear"];

fn goal(command: GoalCommand) -> Command {
    Command::Op(Op::Goal { command })
}

/// Reads `2`, `2,4`, `3-5` or `1,3-5` as change numbers (ascending, no repeats).
pub fn parse_picks(text: &str) -> Result<PlanSelection, String> {
    let mut orders = std::collections::BTreeSet::new();
    for part in text.split(',') {
        let part = part.trim();
        let bad = || format!("'{part}' is not a change number or a range like 3-5");
        let (from, to) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<u32>().map_err(|_| bad())?,
                b.trim().parse::<u32>().map_err(|_| bad())?,
            ),
            None => {
                let n = part.parse::<u32>().map_err(|_| bad())?;
                (n, n)
            }
        };
        if from == 0 || to < from {
            return Err(format!(
                "'{part}' is not a range of change numbers (they start at 1)"
            ));
        }
        if to - from > 10_000 {
            return Err(format!("'{part}' is far larger than any plan"));
        }
        orders.extend(from..=to);
    }
    Ok(PlanSelection::Picks {
        orders: orders.into_iter().collect(),
    })
}

/// `/help` text.
pub fn help() -> String {
    let width = COMMANDS.iter().map(|c| c.usage.len()).max().unwrap_or(0);
    COMMANDS
        .iter()
        .map(|c| format!("  {:<width$}  {}\n", c.usage, c.about))
        .collect()
}

fn unknown(name: &str) -> String {
    let best = COMMANDS
        .iter()
        .filter_map(|c| {
            let candidate = c.usage.trim_start_matches('/').split(' ').next()?;
            Some((distance(name, candidate), candidate))
        })
        .min();
    match best {
        Some((d, candidate)) if d <= 2 && !name.is_empty() => {
            format!("unknown command /{name}; did you mean /{candidate}? (/help lists them)")
        }
        _ => format!("unknown command /{name}; /help lists the commands"),
    }
}

/// Edit distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
