//! The plain line-oriented session: each line on stdin is a prompt; events print as text.
//! Used when there is no full-screen interface (scripts, pipes, dumb terminals).

use atto_present::commands::{self, Command, State};
use atto_protocol::AgentHandle;
use atto_protocol::{
    AgentMode, ApprovalDecision, ApprovalRequest, Event, FinalResult, GrantScope, Op, ToolKind,
};
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

use crate::render::{self, Facts, TextRenderer};

mod review;
mod swarm;

pub use swarm::LineSwarm;
use swarm::swarm_goal;

/// How the line session shows events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LineFormat {
    /// Readable text: answers on stdout, progress on stderr.
    #[default]
    Text,
    /// One JSON event per line on stdout (the `atto exec` stream-json schema).
    StreamJson,
}

/// Prints events in the chosen format.
struct Printer {
    text: TextRenderer<std::io::Stdout, std::io::Stderr>,
    json: bool,
}

impl Printer {
    fn new(format: LineFormat, facts: Facts) -> Self {
        Printer {
            text: TextRenderer::new(std::io::stdout(), std::io::stderr(), facts),
            json: format == LineFormat::StreamJson,
        }
    }

    fn event(&mut self, event: &Event) {
        if self.json {
            println!("{}", render::event_json(event));
        } else {
            self.text.event(event);
        }
    }
}

/// Runs one prompt to the end, printing it, then shuts the session down. The result of
/// the last turn that completed; `None` when none did.
pub async fn run_one(mut handle: AgentHandle, prompt: String, facts: Facts) -> Option<FinalResult> {
    let ops = handle.op_sender();
    let mut renderer = TextRenderer::new(std::io::stdout(), std::io::stdout(), facts);
    if ops.submit(Op::UserInput { text: prompt }).is_err() || ops.submit(Op::Shutdown).is_err() {
        return None;
    }
    let mut last = None;
    while let Some(event) = handle.next_event().await {
        renderer.event(&event);
        if let Event::TurnCompleted { result, .. } = &event {
            last = Some(result.clone());
        }
    }
    last
}

/// How the line session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Input ended, or `/exit`: the session was shut down.
    Finished,
    /// The session ended while an answer was awaited.
    SessionLost,
}

/// How the line session starts.
pub struct Options {
    /// Whether trust mode starts on (for `/trust` toggling).
    pub trust: bool,
    /// The agent mode it starts in.
    pub mode: AgentMode,
    /// How events are shown.
    pub format: LineFormat,
    /// What `/swarm "task"` runs its swarm with.
    pub swarm: Box<dyn LineSwarm>,
    /// The engine's readings the text needs.
    pub facts: Facts,
}

/// Runs until stdin ends (or `/exit`), then shuts the session down. Lines starting with
/// `/` are slash commands; `/swarm "task"` runs a swarm here ([`LineSwarm`]) before the
/// next line is read.
pub async fn run(mut handle: AgentHandle, first: Option<String>, options: Options) -> Outcome {
    let ops = handle.op_sender();
    let mut state = LineState {
        commands: State {
            trust: options.trust,
            mode: options.mode,
        },
        plan_waiting: false,
        proposals: Vec::new(),
    };
    let mut renderer = Printer::new(options.format, options.facts);
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut pending = first;
    show_start(&mut handle, &mut renderer, &mut state).await;
    loop {
        let prompt = match pending.take() {
            Some(p) => p,
            None => match lines.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            },
        };
        let prompt = prompt.trim().to_owned();
        if prompt.is_empty() {
            continue;
        }
        if let Some(goal) = swarm_goal(&prompt) {
            options.swarm.run(goal, &mut lines, renderer.json).await;
            continue;
        }
        if prompt.starts_with('/') {
            match command(&prompt, &mut handle, &mut lines, &mut renderer, &mut state).await {
                Next::Read => continue,
                Next::Stop => break,
                Next::Failed => return Outcome::SessionLost,
            }
        }
        if ops.submit(Op::UserInput { text: prompt }).is_err() {
            break;
        }
        // A turn, or (while a task plan waits) a refinement of the plan.
        let refining = state_plan_waiting(&state);
        let waited = wait(
            &mut handle,
            &mut lines,
            &mut renderer,
            &mut state,
            |event| ends_turn(refining, event),
        )
        .await;
        if waited.is_none() {
            return Outcome::SessionLost;
        }
        // Learnings the turn proposed wait for the user's word.
        let proposals = std::mem::take(&mut state.proposals);
        if !proposals.is_empty() {
            match review::review(
                &mut handle,
                &mut lines,
                &mut renderer,
                &mut state,
                proposals,
            )
            .await
            {
                review::Reviewed::Done => {}
                review::Reviewed::Next(line) => pending = Some(line),
                review::Reviewed::Ended => return Outcome::SessionLost,
            }
        }
    }
    let _ = ops.submit(Op::Shutdown);
    // What the session still says (a notice after the last command) is shown too.
    while let Some(event) = handle.next_event().await {
        renderer.event(&event);
    }
    Outcome::Finished
}

/// What the line loop does after a slash command.
enum Next {
    /// Read the next line.
    Read,
    /// Leave the session (`/exit`, or it ended).
    Stop,
    /// The session ended while its answer was awaited.
    Failed,
}

/// Runs a slash command and shows its answer before the next line is read.
async fn command(
    prompt: &str,
    handle: &mut AgentHandle,
    lines: &mut Lines<BufReader<Stdin>>,
    renderer: &mut Printer,
    state: &mut LineState,
) -> Next {
    match commands::parse(prompt, &state.commands) {
        Ok(Command::Exit) => return Next::Stop,
        Ok(Command::Help) => eprint!("{}", commands::help()),
        Ok(Command::Op(op)) => {
            // A rewind answers with several events (files, thread) before the one that
            // says it is done.
            let mut answer = CommandAnswer {
                rewinding: matches!(op, Op::Rewind { .. }),
                running: false,
            };
            if handle.submit(op).is_err() {
                return Next::Stop;
            }
            if wait(handle, lines, renderer, state, |e| answer.ends_with(e))
                .await
                .is_none()
            {
                return Next::Failed;
            }
        }
        Err(message) => eprintln!("{message}"),
    }
    Next::Read
}

/// Shows what the session says as it starts (a resumed plan, warnings) before the first
/// line is read, so later answers line up with the commands that asked for them.
async fn show_start(handle: &mut AgentHandle, renderer: &mut Printer, state: &mut LineState) {
    while let Some(event) = handle.next_event().await {
        renderer.event(&event);
        if matches!(event, Event::TaskPlanShown { .. }) {
            state.plan_waiting = true;
        }
        if let Event::SessionStarted { mode, .. } = &event {
            // A resumed session may come back in the mode it last ran in.
            state.commands.mode = *mode;
            break;
        }
    }
}

/// Where the answer to a slash command's op ends. An approved task plan answers with its
/// whole run, up to the summary.
struct CommandAnswer {
    /// The op was a rewind: it ends with `rewound` (or an error).
    rewinding: bool,
    /// A task plan was approved and runs.
    running: bool,
}

impl CommandAnswer {
    fn ends_with(&mut self, event: &Event) -> bool {
        if self.rewinding {
            return matches!(event, Event::Rewound { .. } | Event::Error { .. });
        }
        if matches!(event, Event::PlanConfirmed { .. }) {
            self.running = true;
        }
        if self.running {
            return matches!(event, Event::PlanSummary { .. });
        }
        // `/spawn` ends with its subagent (its own children are deeper).
        if let Event::SubagentFinished { agent, .. } = event {
            return agent.depth == 1;
        }
        answers_command(event)
    }
}

/// The events that answer a slash command.
fn answers_command(event: &Event) -> bool {
    matches!(
        event,
        Event::ModeChanged { .. }
            | Event::Plan { .. }
            | Event::CheckpointList { .. }
            | Event::Goals { .. }
            | Event::Restored { .. }
            | Event::PlanDecided { .. }
            | Event::GrantList { .. }
            | Event::ThreadList { .. }
            | Event::PromptList { .. }
            | Event::ThreadSwitched { .. }
            | Event::Notice { .. }
            | Event::Error { .. }
            | Event::TrustChanged { .. }
            | Event::EffortChanged { .. }
            | Event::PlanGenerated { .. }
            | Event::PlanGenerationFailed { .. }
            | Event::PlanGenerationCancelled { .. }
            | Event::TaskPlanShown { .. }
            | Event::PlanRejected { .. }
            | Event::PlannerSettingsChanged { .. }
            | Event::SubagentList { .. }
            | Event::ModelChanged { .. }
            | Event::ModelList { .. }
            | Event::CostReport { .. }
            | Event::ContextReport { asked: true, .. }
            | Event::ContextCompacted(_)
            | Event::McpServers { .. }
            | Event::LearningList { .. }
            | Event::LearningUpdated { .. }
            | Event::LearningProposed { .. }
    )
}

/// Whether `event` ends a turn, or (while a task plan waits, `refining`) the revision of
/// the plan a line asked for.
fn ends_turn(refining: bool, event: &Event) -> bool {
    if refining {
        matches!(
            event,
            Event::PlanRevised { .. }
                | Event::Error { .. }
                | Event::PlanGenerationFailed { .. }
                | Event::PlanGenerationCancelled { .. }
        )
    } else {
        matches!(
            event,
            Event::TurnCompleted { .. }
                | Event::PlanGenerated { .. }
                | Event::PlanGenerationCancelled { .. }
        )
    }
}

/// Whether a task plan waits for confirmation (plain lines refine it).
fn state_plan_waiting(state: &LineState) -> bool {
    state.plan_waiting
}

/// What the line session tracks between lines.
struct LineState {
    commands: State,
    plan_waiting: bool,
    /// Learnings proposed during the turn, reviewed when it ends.
    proposals: Vec<atto_protocol::Learning>,
}

/// Shows events until `done` says one ends the wait, answering approval and plan decision
/// prompts from stdin and passing Ctrl-C on as an interrupt. `None`: the session ended.
async fn wait(
    handle: &mut AgentHandle,
    lines: &mut Lines<BufReader<Stdin>>,
    renderer: &mut Printer,
    state: &mut LineState,
    mut done: impl FnMut(&Event) -> bool,
) -> Option<()> {
    let ops = handle.op_sender();
    // One Ctrl-C listener for the whole wait, prompts inside it included (see `signal`).
    let mut sigint = crate::signal::sigint();
    loop {
        let event = tokio::select! {
            event = handle.next_event() => event,
            Some(()) = sigint.recv() => {
                let _ = ops.submit(Op::Interrupt);
                continue;
            }
        };
        let event = event?;
        renderer.event(&event);
        match &event {
            Event::TrustChanged { on } => state.commands.trust = *on,
            Event::ModeChanged { mode, .. } => state.commands.mode = *mode,
            Event::PlanGenerated { .. } | Event::PlanRevised { .. } => state.plan_waiting = true,
            Event::PlanConfirmed { .. } | Event::PlanRejected { .. } => state.plan_waiting = false,
            Event::LearningProposed { learning }
                if learning.status == atto_protocol::LearningStatus::Proposed =>
            {
                state.proposals.push(learning.clone());
            }
            Event::ApprovalRequired(request) => {
                let decision = ask_approval(request, lines, &mut sigint).await;
                let _ = ops.submit(match decision {
                    Some(decision) => Op::Approval {
                        id: request.id.clone(),
                        decision,
                    },
                    None => Op::Interrupt,
                });
            }
            Event::PlanDecisionRequired { number, .. } => {
                eprintln!("  answer with an option's number or text");
                match answer(lines, &mut sigint).await {
                    Answer::Line(choice) => {
                        let _ = ops.submit(Op::PlanDecision {
                            number: *number,
                            choice: choice.trim().to_owned(),
                        });
                    }
                    // Input ended: nobody is left to answer, so the plan stops here rather
                    // than asking again forever.
                    Answer::Ended => {
                        eprintln!("  no answer (input ended): stopping the plan");
                        let _ = ops.submit(Op::Interrupt);
                    }
                    Answer::Interrupted => {
                        let _ = ops.submit(Op::Interrupt);
                    }
                }
            }
            _ => {}
        }
        if done(&event) {
            return Some(());
        }
    }
}

/// What came back at a prompt inside a running turn or plan.
enum Answer {
    /// A line was typed.
    Line(String),
    /// Input ended (or could not be read).
    Ended,
    /// Ctrl-C: stop what runs rather than answer.
    Interrupted,
}

/// Reads one answer, or Ctrl-C while waiting for it.
async fn answer(
    lines: &mut Lines<BufReader<Stdin>>,
    sigint: &mut tokio::sync::mpsc::UnboundedReceiver<()>,
) -> Answer {
    tokio::select! {
        // Ctrl-C first: when it and a line are both ready, stopping wins over answering.
        biased;
        Some(()) = sigint.recv() => Answer::Interrupted,
        // `next_line` is cancel-safe: a line half read when Ctrl-C wins is not lost.
        line = lines.next_line() => match line {
            Ok(Some(line)) => Answer::Line(line),
            Ok(None) | Err(_) => Answer::Ended,
        },
    }
}

/// Asks at an approval prompt until the answer is one it offers; `None` is Ctrl-C (stop
/// what runs). End of input is a "no": nobody is left to approve.
async fn ask_approval(
    request: &ApprovalRequest,
    lines: &mut Lines<BufReader<Stdin>>,
    sigint: &mut tokio::sync::mpsc::UnboundedReceiver<()>,
) -> Option<ApprovalDecision> {
    let offer = choices(request);
    eprintln!("  {offer}");
    loop {
        match answer(lines, sigint).await {
            Answer::Line(line) => match approval_answer(&line, request) {
                Some(decision) => return Some(decision),
                None => eprintln!("  not an answer here: {offer}"),
            },
            Answer::Ended => return Some(ApprovalDecision::No { reason: None }),
            Answer::Interrupted => return None,
        }
    }
}

/// The answers an approval prompt offers: editing only for commands, and only a plain
/// yes or no for running without the sandbox (no rule can grant that).
fn choices(request: &ApprovalRequest) -> String {
    if request.unsandboxed {
        return "[y] yes, run it once WITHOUT the sandbox  [n reason] no".to_owned();
    }
    let mut offer = format!(
        "[y] yes  [n reason] no  [a] always, this session  [A] always, this project ({})",
        request.suggested_rule
    );
    if request.kind == ToolKind::Execute {
        offer.push_str("  [e command] edit and run");
    }
    offer
}

/// Reads an answer typed at an approval prompt; `None` when it is not one of the answers
/// this prompt offers (the prompt asks again).
fn approval_answer(line: &str, request: &ApprovalRequest) -> Option<ApprovalDecision> {
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    let decision = match word {
        "y" | "yes" => ApprovalDecision::Yes,
        "n" | "no" => ApprovalDecision::No {
            reason: Some(rest.to_owned()).filter(|r| !r.is_empty()),
        },
        "a" if !request.unsandboxed => ApprovalDecision::Always {
            scope: GrantScope::Session,
            rule: None,
        },
        "A" if !request.unsandboxed => ApprovalDecision::Always {
            scope: GrantScope::Project,
            rule: None,
        },
        "e" if !rest.is_empty() && request.kind == ToolKind::Execute && !request.unsandboxed => {
            ApprovalDecision::Edit {
                command: rest.to_owned(),
            }
        }
        _ => return None,
    };
    Some(decision)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, unsandboxed: bool) -> ApprovalRequest {
        ApprovalRequest {
            id: "approval-1".into(),
            call_id: "c".into(),
            tool: tool.into(),
            kind: if tool == "bash" {
                ToolKind::Execute
            } else {
                ToolKind::Edit
            },
            subject: "x".into(),
            risk: "WARN".into(),
            reasons: Vec::new(),
            suggested_rule: "bash(x)".into(),
            unsandboxed,
            protected: false,
            subagent: None,
            arguments: serde_json::Value::Null,
        }
    }

    #[test]
    fn approval_answers() {
        let bash = request("bash", false);
        let answer = |line: &str| approval_answer(line, &bash);
        assert_eq!(answer("y"), Some(ApprovalDecision::Yes));
        assert_eq!(
            answer("n use rg instead"),
            Some(ApprovalDecision::No {
                reason: Some("use rg instead".into())
            })
        );
        assert_eq!(
            answer("A"),
            Some(ApprovalDecision::Always {
                scope: GrantScope::Project,
                rule: None
            })
        );
        assert_eq!(
            answer("e ls -la"),
            Some(ApprovalDecision::Edit {
                command: "ls -la".into()
            })
        );
        // Unclear answers are asked again, never taken as "no".
        assert_eq!(answer(""), None);
        assert_eq!(answer("maybe"), None);
        assert_eq!(answer("e"), None);
        // Editing is offered for commands only.
        let write = request("write_file", false);
        assert_eq!(approval_answer("e ls", &write), None);
        assert!(!choices(&write).contains("[e"));
        assert!(choices(&bash).contains("[e command]"));
        // Running without the sandbox: yes or no, never a rule.
        let unsandboxed = request("bash", true);
        assert_eq!(approval_answer("a", &unsandboxed), None);
        assert_eq!(approval_answer("A", &unsandboxed), None);
        assert_eq!(
            approval_answer("y", &unsandboxed),
            Some(ApprovalDecision::Yes)
        );
        assert!(choices(&unsandboxed).contains("WITHOUT the sandbox"));
    }
}
