//! How a swarm talks to its person, for `atto swarm` and `/swarm` in the line session:
//! progress as text lines or `swarm.*` JSON events, the plan's y/N, workers' approvals and
//! stuck tasks asked on a terminal (or answered by JSON lines on stdin, or by `--on-ask`
//! when no one can be asked), and Ctrl-C turned into a resumable stop. The coordinator
//! and its set-up are the binary's (`atto swarm`, and `/swarm` through [`crate::LineSwarm`]).

use std::io::Write as _;

use atto_protocol::ApprovalDecision;
use atto_protocol::swarm::{InterventionAnswer, SwarmEvent, SwarmInput};
use tokio::io::AsyncBufReadExt as _;
use tokio::sync::mpsc;

use crate::headless::{InputFormat, OnAsk, OutputFormat};

mod text;

use text::text_line;

/// The exit code of a run cancelled by the person (DESIGN.md §5), for `atto swarm`'s
/// second Ctrl-C.
const EXIT_CANCELLED: i32 = 130;

/// How this run talks to its person.
pub struct Front {
    pub format: OutputFormat,
    pub input: InputFormat,
    pub on_ask: OnAsk,
    pub interactive: bool,
    pub host: Host,
    /// How workers start and where that came from (`Prepared::worker_launch`), shown with the
    /// plan's question.
    pub worker_launch: String,
}

/// Where the swarm runs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// `atto swarm`: its own process; a second Ctrl-C exits at once.
    Command,
    /// `/swarm` in the line session: the session goes on after it, so Ctrl-C only stops
    /// the swarm.
    Session,
}

/// What a conversation with the coordinator keeps between its events and lines.
struct Conversation {
    /// Whether answers may still come (input has not ended).
    lines_open: bool,
    /// What a terminal answer is for: the oldest question first.
    questions: Questions,
    /// The swarm's `finished` event, printed last with `--output-format json`.
    last: Option<SwarmEvent>,
    /// The swarm's id once it started, for the resume hint.
    swarm_id: Option<String>,
    /// Ctrl-Cs so far.
    interrupts: u32,
}

/// Where a person's answers come from.
pub enum Answers<'a> {
    /// Lines read from stdin by a task of their own (`atto swarm`).
    Spawned(mpsc::UnboundedReceiver<String>),
    /// The line session's stdin, read between its prompts.
    Session(&'a mut tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>),
    /// No one answers.
    Nobody,
}

impl Answers<'_> {
    /// The next line; `None` when input ended. Cancel-safe: a line half read is kept.
    async fn next(&mut self) -> Option<String> {
        match self {
            Answers::Spawned(lines) => lines.recv().await,
            Answers::Session(lines) => lines.next_line().await.ok().flatten(),
            Answers::Nobody => None,
        }
    }
}

impl Front {
    pub fn notice(&self, text: &str) {
        if self.format == OutputFormat::Text {
            eprintln!("atto: {text}");
        } else {
            self.print(&SwarmEvent::Notice { text: text.into() });
        }
    }

    fn print(&self, event: &SwarmEvent) {
        match self.format {
            OutputFormat::StreamJson => {
                let value = serde_json::to_value(event).unwrap_or_default();
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", crate::render::tagged(value));
                let _ = out.flush();
            }
            OutputFormat::Json => {}
            OutputFormat::Text => {
                if let Some(line) = text_line(event) {
                    eprintln!("{line}");
                }
            }
        }
    }

    /// Prints events and answers what needs an answer until the coordinator ends.
    pub async fn drive(
        &self,
        events: mpsc::UnboundedReceiver<SwarmEvent>,
        input: mpsc::UnboundedSender<SwarmInput>,
    ) {
        // Lines from stdin: JSON inputs (stream-json) or a person's answers (terminal).
        let answers = if self.interactive || self.input == InputFormat::StreamJson {
            let (lines_tx, lines) = mpsc::unbounded_channel::<String>();
            tokio::spawn(async move {
                let mut reader = tokio::io::BufReader::new(tokio::io::stdin()).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    if lines_tx.send(line).is_err() {
                        break;
                    }
                }
            });
            Answers::Spawned(lines)
        } else {
            Answers::Nobody
        };
        self.converse(events, input, answers).await;
    }

    /// Prints events and answers what needs an answer from `answers` until the
    /// coordinator ends. A person's line is read only while a question waits for it, so
    /// lines typed ahead (and, in a session, the prompts after the swarm) wait their turn.
    pub async fn converse(
        &self,
        mut events: mpsc::UnboundedReceiver<SwarmEvent>,
        input: mpsc::UnboundedSender<SwarmInput>,
        mut answers: Answers<'_>,
    ) {
        let mut talk = Conversation {
            lines_open: !matches!(answers, Answers::Nobody),
            questions: Questions::default(),
            last: None,
            swarm_id: None,
            interrupts: 0,
        };
        // One Ctrl-C listener for the whole conversation (see `signal`).
        let mut sigint = crate::signal::sigint();
        let json_input = self.input == InputFormat::StreamJson;
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { break };
                    self.on_event(&mut talk, event, &input);
                }
                line = answers.next(), if talk.lines_open && (json_input || !talk.questions.is_empty()) => {
                    self.on_line(&mut talk, line, &input);
                }
                Some(()) = sigint.recv() => self.on_interrupt(&mut talk, &input),
            }
        }
        if self.format == OutputFormat::Json
            && let Some(event) = talk.last
        {
            let value = serde_json::to_value(&event).unwrap_or_default();
            println!("{}", crate::render::tagged(value));
        }
    }

    /// Shows a coordinator's event, and puts what it asks to whoever answers.
    fn on_event(
        &self,
        talk: &mut Conversation,
        event: SwarmEvent,
        input: &mpsc::UnboundedSender<SwarmInput>,
    ) {
        if let SwarmEvent::Started { swarm_id: id, .. } = &event {
            talk.swarm_id = Some(id.clone());
        }
        let question = self.question(&event);
        let json_input = self.input == InputFormat::StreamJson;
        match question {
            Some(q) if talk.lines_open && !json_input => {
                // A person answers on the terminal, one question at a time:
                // in text mode a later question's line waits with its prompt.
                let held = if self.format == OutputFormat::Text {
                    text_line(&event)
                } else {
                    self.print(&event);
                    None
                };
                show(&talk.questions.ask(q, held));
            }
            Some(q) => {
                self.print(&event);
                if talk.lines_open {
                    // The driving process answers on stdin; remembered in case
                    // stdin closes first.
                    talk.questions.ask(q, None);
                } else {
                    // No one is left to answer: it follows --on-ask.
                    self.unanswerable(q, input);
                }
            }
            None => self.print(&event),
        }
        if matches!(event, SwarmEvent::Finished { .. }) {
            talk.last = Some(event);
        }
    }

    /// Takes a line of input (`None`: input ended) as a swarm input (stream-json) or as
    /// the answer to the oldest question.
    fn on_line(
        &self,
        talk: &mut Conversation,
        line: Option<String>,
        input: &mpsc::UnboundedSender<SwarmInput>,
    ) {
        let Some(line) = line else {
            talk.lines_open = false;
            // No one is left to answer: what was asked follows --on-ask.
            for q in talk.questions.drain() {
                self.unanswerable(q, input);
            }
            return;
        };
        if self.input == InputFormat::StreamJson {
            match serde_json::from_str::<SwarmInput>(&line) {
                Ok(i) => {
                    talk.questions.retain(|q| !q.answered_by(&i));
                    let _ = input.send(i);
                }
                Err(err) if !line.trim().is_empty() => {
                    self.notice(&format!(
                        "ignoring input line that is not a swarm input ({err}): {line}"
                    ));
                }
                Err(_) => {}
            }
        } else {
            let (given, next) = talk.questions.answer(line.trim());
            if let Some(i) = given {
                let _ = input.send(i);
            }
            show(&next);
        }
    }

    /// Ctrl-C: stops the workers (the swarm stays resumable); a second one exits `atto
    /// swarm` at once, while a session only says the summary follows.
    fn on_interrupt(&self, talk: &mut Conversation, input: &mpsc::UnboundedSender<SwarmInput>) {
        talk.interrupts += 1;
        let resume = match &talk.swarm_id {
            Some(id) => format!("atto swarm --resume {}", id.get(..8).unwrap_or(id)),
            None => "atto swarm --resume".to_owned(),
        };
        match (talk.interrupts, self.host) {
            (1, Host::Command) => eprintln!(
                "atto: stopping the workers; the swarm can be resumed with \
                 {resume} (Ctrl-C again to exit at once)"
            ),
            (_, Host::Command) => {
                eprintln!(
                    "atto: interrupted twice; exiting now (the swarm can be resumed with {resume})"
                );
                std::process::exit(EXIT_CANCELLED);
            }
            (1, Host::Session) => eprintln!(
                "atto: stopping the workers; the swarm can be resumed with \
                 {resume}"
            ),
            (_, Host::Session) => {
                eprintln!("atto: the swarm's workers are stopping; its summary follows")
            }
        }
        let _ = input.send(SwarmInput::Interrupt);
    }

    /// What `event` asks of a person.
    fn question(&self, event: &SwarmEvent) -> Option<Question> {
        let q = match event {
            SwarmEvent::Plan { tasks } => Question::Plan {
                tasks: tasks.len(),
                launch: self.worker_launch.clone(),
            },
            SwarmEvent::Permission {
                task_id,
                request,
                decision: None,
                ..
            } => Question::Approval {
                task_id: task_id.clone(),
                id: request.id.clone(),
                text: format!(
                    "{task_id} wants {} ({}): {}",
                    request.tool,
                    request.risk,
                    request.subject.lines().next().unwrap_or("")
                ),
                // A protected path (.git, .atto …) is put to a person like a command
                // without the sandbox: `--on-ask allow` never approves either.
                person_only: request.unsandboxed || request.protected,
            },
            SwarmEvent::InterventionNeeded { task_id, .. } => Question::Intervention {
                task_id: task_id.clone(),
            },
            // Everything else is told, not asked (a permission the mailbox answered too).
            SwarmEvent::Permission { .. }
            | SwarmEvent::Started { .. }
            | SwarmEvent::Decomposed { .. }
            | SwarmEvent::Enriched { .. }
            | SwarmEvent::TaskStarted { .. }
            | SwarmEvent::TaskActivity { .. }
            | SwarmEvent::TaskChecked { .. }
            | SwarmEvent::TaskRetrying { .. }
            | SwarmEvent::TaskPassed { .. }
            | SwarmEvent::TaskFailed { .. }
            | SwarmEvent::TaskSkipped { .. }
            | SwarmEvent::ModelHealth { .. }
            | SwarmEvent::ModelWaiting { .. }
            | SwarmEvent::Budget { .. }
            | SwarmEvent::Notice { .. }
            | SwarmEvent::TrustNeeded { .. }
            | SwarmEvent::Finished { .. } => return None,
        };
        Some(q)
    }

    /// Answers a question no person can answer.
    fn unanswerable(&self, q: Question, input: &mpsc::UnboundedSender<SwarmInput>) {
        let reply = match q {
            Question::Plan { .. } => SwarmInput::Confirm { yes: true },
            Question::Approval {
                task_id,
                id,
                text,
                person_only,
            } => {
                let decision = match self.on_ask {
                    OnAsk::Allow if !person_only => ApprovalDecision::Yes,
                    OnAsk::Fail => {
                        self.notice(&format!(
                            "{text} needed approval; stopping the swarm (--on-ask fail)"
                        ));
                        let _ = input.send(SwarmInput::Interrupt);
                        ApprovalDecision::No { reason: None }
                    }
                    OnAsk::Allow => ApprovalDecision::No {
                        reason: Some(
                            "only a person may approve this (it writes a protected path or runs \
                             without the sandbox); --on-ask allow never does"
                                .into(),
                        ),
                    },
                    OnAsk::Deny => ApprovalDecision::No {
                        reason: Some(
                            "this swarm runs headless and approvals are denied (--on-ask deny)"
                                .into(),
                        ),
                    },
                };
                SwarmInput::Approval {
                    task_id,
                    id,
                    decision,
                }
            }
            Question::Intervention { task_id } => {
                self.notice(&format!(
                    "{task_id} needs a person's decision and no one can be asked here; skipping it"
                ));
                SwarmInput::Intervention {
                    task_id,
                    answer: InterventionAnswer::Skip,
                }
            }
        };
        let _ = input.send(reply);
    }
}

/// Something the person is asked on the terminal.
enum Question {
    Plan {
        tasks: usize,
        launch: String,
    },
    Approval {
        task_id: String,
        id: String,
        text: String,
        /// Only a person may approve it: it runs without the sandbox or writes a
        /// protected path.
        person_only: bool,
    },
    Intervention {
        task_id: String,
    },
}

impl Question {
    /// Whether `input` answers this question.
    fn answered_by(&self, input: &SwarmInput) -> bool {
        match (self, input) {
            (Question::Plan { .. }, SwarmInput::Confirm { .. }) => true,
            (Question::Approval { id, .. }, SwarmInput::Approval { id: answered, .. }) => {
                id == answered
            }
            (
                Question::Intervention { task_id },
                SwarmInput::Intervention {
                    task_id: answered, ..
                },
            ) => task_id == answered,
            _ => false,
        }
    }
}

/// The questions waiting for an answer, oldest first. On the terminal only the oldest is
/// shown: a later one (its event line and its prompt) is held until every one before it
/// is answered, so a prompt is never printed over another that waits.
#[derive(Default)]
struct Questions {
    waiting: std::collections::VecDeque<(Question, Option<String>)>,
}

impl Questions {
    /// Adds `q`, whose event line is `held` (`None`: already printed). Returns what to
    /// print now: its line and prompt when nothing else waits, otherwise nothing.
    fn ask(&mut self, q: Question, held: Option<String>) -> Vec<String> {
        let first = self.waiting.is_empty();
        self.waiting.push_back((q, held));
        if first { self.front() } else { Vec::new() }
    }

    /// The oldest question's held line and its prompt (taking the line: it is shown once).
    fn front(&mut self) -> Vec<String> {
        let Some((q, held)) = self.waiting.front_mut() else {
            return Vec::new();
        };
        let mut out: Vec<String> = held.take().map(|l| format!("{l}\n")).into_iter().collect();
        out.push(prompt_text(q));
        out
    }

    /// A person's line for the oldest question: the input it gives (`None`: not an
    /// answer, asked again) and what to print next.
    fn answer(&mut self, line: &str) -> (Option<SwarmInput>, Vec<String>) {
        let Some((q, held)) = self.waiting.pop_front() else {
            return (None, Vec::new());
        };
        let given = answer(&q, line);
        if given.is_none() {
            self.waiting.push_front((q, held));
        }
        (given, self.front())
    }

    /// Drops the questions `input` answers (stream-json answers come in any order).
    fn retain(&mut self, keep: impl Fn(&Question) -> bool) {
        self.waiting.retain(|(q, _)| keep(q));
    }

    /// Every question still waiting, oldest first.
    fn drain(&mut self) -> impl Iterator<Item = Question> + '_ {
        self.waiting.drain(..).map(|(q, _)| q)
    }

    fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

fn show(texts: &[String]) {
    for text in texts {
        eprint!("{text}");
    }
    let _ = std::io::stderr().flush();
}

fn prompt_text(q: &Question) -> String {
    match q {
        Question::Plan { tasks, launch } => format!("{launch}\nRun these {tasks} tasks? [y/N] "),
        Question::Approval { text, .. } => format!("{text}\nAllow? [y/N] "),
        Question::Intervention { task_id } => format!(
            "{task_id} is stuck. [g]uidance TEXT (retry with it), [f]ixed (I fixed it: check \
             again), [s]kip: "
        ),
    }
}

/// The input a terminal answer gives; `None` when it is not an answer (asked again).
fn answer(q: &Question, line: &str) -> Option<SwarmInput> {
    let yes = matches!(line.to_ascii_lowercase().as_str(), "y" | "yes");
    match q {
        Question::Plan { .. } => Some(SwarmInput::Confirm { yes }),
        Question::Approval { task_id, id, .. } => Some(SwarmInput::Approval {
            task_id: task_id.clone(),
            id: id.clone(),
            decision: if yes {
                ApprovalDecision::Yes
            } else {
                ApprovalDecision::No { reason: None }
            },
        }),
        Question::Intervention { task_id } => {
            let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
            let answer = match word.to_ascii_lowercase().as_str() {
                "g" | "guidance" if !rest.trim().is_empty() => InterventionAnswer::Guidance {
                    text: rest.trim().to_owned(),
                },
                "f" | "fixed" => InterventionAnswer::Fixed,
                "s" | "skip" => InterventionAnswer::Skip,
                _ => return None,
            };
            Some(SwarmInput::Intervention {
                task_id: task_id.clone(),
                answer,
            })
        }
    }
}

#[cfg(test)]
mod tests;
