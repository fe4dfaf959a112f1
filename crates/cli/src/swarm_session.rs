//! `/swarm "task"` inside a session: what the session keeps to start swarms of its own
//! (its flags, config, provider and workspace), the terminal UI's launcher built from it,
//! and the line session's run of a swarm, which talks to the person like `atto swarm` on a
//! terminal (the plan's y/N, approvals, stuck tasks) over the session's own stdin.
//!
//! The coordinator is the one `atto swarm` runs (`Prepared::launch`). For the terminal UI
//! it is set up and run on a thread of its own (setting up reads swarm.yaml, opens the
//! database and connects the models; running reads files for the checks), so the
//! interface never waits on it.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use atto_line::swarm_front::{Answers, Front, Host};
use atto_line::{InputFormat, OnAsk, OutputFormat};
use atto_llm::ResolvedProvider;
use atto_protocol::swarm::{SwarmEvent, SwarmInput};
use atto_swarm::coordinator::{Options, Start};
use tokio::io::{BufReader, Lines, Stdin};
use tokio::sync::mpsc;

use crate::swarm::{Prepared, Running};
use crate::swarm_trust::UntrustedSwarmFile;
use crate::{Failure, GlobalArgs};
use atto_config::Config;

/// What a session needs to start swarms: the flags, config and provider it was started
/// with, and its workspace. Workers get the same flags, as with `atto swarm`.
#[derive(Clone)]
pub struct SessionSwarm {
    /// The session's flags.
    pub global: GlobalArgs,
    /// The user config, its profile applied.
    pub config: Config,
    /// The session's model.
    pub provider: ResolvedProvider,
    /// The workspace root.
    pub workspace: PathBuf,
}

/// How a session's swarm runs: the plan waits for the person's yes; retries back off in
/// the seed's seconds.
const SESSION_OPTIONS: Options = Options {
    yes: false,
    backoff_unit_ms: 1000,
};

impl SessionSwarm {
    /// Reads swarm.yaml, opens the database and connects the models, on the blocking pool
    /// (for the line session, whose runtime also drives the session).
    async fn prepare(&self) -> Result<Prepared, Failure> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            Prepared::new(&me.global, &me.config, &me.provider, me.workspace)
        })
        .await
        .map_err(|e| Failure::usage(format!("setting up the swarm failed: {e}")))?
    }

    /// The terminal UI's launcher: the channels come back at once; the swarm is set up and
    /// run on a thread and runtime of its own, so nothing it does (reading files for the
    /// checks, writing the report) can hold up the interface. swarm.yaml's warnings and a
    /// failed set-up arrive as `swarm.notice` events (the channel then closes without a
    /// summary).
    pub fn launcher(self) -> atto_tui::SwarmLauncher {
        Arc::new(move |goal: String| {
            let (events_tx, events) = mpsc::unbounded_channel();
            let (input, input_rx) = mpsc::unbounded_channel();
            let me = self.clone();
            std::thread::Builder::new()
                .name("atto-swarm".into())
                .spawn(move || me.run_for_tui(goal, events_tx, input_rx))
                .map_err(|e| format!("cannot start the swarm's thread: {e}"))?;
            Ok((events, input))
        })
    }

    /// The swarm's thread: sets up, runs, and passes events and answers on until the
    /// coordinator ends.
    fn run_for_tui(
        &self,
        goal: String,
        events: mpsc::UnboundedSender<SwarmEvent>,
        mut answers: mpsc::UnboundedReceiver<SwarmInput>,
    ) {
        let say = |text: String| {
            let _ = events.send(SwarmEvent::Notice { text });
        };
        if let Err(why) =
            crate::swarm_trust::ask_over_channels(&self.workspace, &events, &mut answers)
        {
            return say(format!("the swarm did not start: {why}"));
        }
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => return say(format!("the swarm did not start: no async runtime ({e})")),
        };
        // Set-up runs in the runtime's context, as it does for `atto swarm`.
        let context = runtime.enter();
        let prepared = match Prepared::new(
            &self.global,
            &self.config,
            &self.provider,
            self.workspace.clone(),
        ) {
            Ok(prepared) => prepared,
            Err(failure) => return say(format!("the swarm did not start: {}", failure.message)),
        };
        drop(context);
        for warning in &prepared.warnings {
            say(format!("warning: {warning}"));
        }
        say(prepared.worker_launch.clone());
        runtime.block_on(async move {
            let running = prepared.launch(Start::New(goal), SESSION_OPTIONS);
            forward(running, events, answers).await;
        });
    }
}

/// Passes the coordinator's events to the front end and its answers back, until the
/// coordinator ends. A front end that went away stops the swarm (resumable).
async fn forward(
    mut running: Running,
    events: mpsc::UnboundedSender<SwarmEvent>,
    mut answers: mpsc::UnboundedReceiver<SwarmInput>,
) {
    let mut answers_open = true;
    loop {
        tokio::select! {
            event = running.events.recv() => match event {
                Some(event) => {
                    if events.send(event).is_err() {
                        let _ = running.input.send(SwarmInput::Interrupt);
                    }
                }
                None => break,
            },
            answer = answers.recv(), if answers_open => match answer {
                Some(answer) => {
                    let _ = running.input.send(answer);
                }
                None => answers_open = false,
            },
        }
    }
    // The coordinator's final state is saved; nothing more to pass on.
    let _ = running.done.await;
}

impl atto_line::LineSwarm for SessionSwarm {
    fn run<'a>(
        &'a self,
        goal: String,
        lines: &'a mut Lines<BufReader<Stdin>>,
        json: bool,
    ) -> Pin<Box<dyn Future<Output = ()> + 'a>> {
        Box::pin(run_in_line_session(self, goal, lines, json))
    }
}

/// `/swarm "task"` in the line session: progress as `atto swarm` prints it (or its
/// `swarm.*` events with stream-json), the plan's y/N and the other questions read from
/// the session's stdin. Runs to the swarm's end before the next line is read; with no task,
/// says how to give one.
async fn run_in_line_session(
    setup: &SessionSwarm,
    goal: String,
    lines: &mut Lines<BufReader<Stdin>>,
    json: bool,
) {
    if goal.is_empty() {
        eprintln!(
            "usage: /swarm \"task\" (atto swarm status shows the latest swarm; the overlay is \
             the terminal UI's)"
        );
        return;
    }
    let mut front = Front {
        format: if json {
            OutputFormat::StreamJson
        } else {
            OutputFormat::Text
        },
        input: InputFormat::Text,
        // Approvals are asked on stdin; these apply only once it has ended.
        on_ask: OnAsk::Deny,
        interactive: true,
        host: Host::Session,
        worker_launch: String::new(),
    };
    if !swarm_file_trusted(&front, setup.workspace.clone(), lines).await {
        return;
    }
    let prepared = match setup.prepare().await {
        Ok(prepared) => prepared,
        Err(failure) => {
            front.notice(&format!("the swarm did not start: {}", failure.message));
            return;
        }
    };
    for warning in &prepared.warnings {
        front.notice(&format!("warning: {warning}"));
    }
    front.worker_launch = prepared.worker_launch.clone();
    front.notice(&prepared.worker_launch);
    let running = prepared.launch(Start::New(goal), SESSION_OPTIONS);
    front
        .converse(running.events, running.input, Answers::Session(lines))
        .await;
    let _ = running.done.await;
}

/// Whether the workspace's swarm.yaml may run: trusted already (or absent), or trusted now
/// by the person's yes on the session's stdin. A refusal or a failure is said as why the
/// swarm did not start.
async fn swarm_file_trusted(
    front: &Front,
    workspace: PathBuf,
    lines: &mut Lines<BufReader<Stdin>>,
) -> bool {
    let found = tokio::task::spawn_blocking(move || UntrustedSwarmFile::find(&workspace)).await;
    match found {
        Ok(Ok(None)) => {}
        Ok(Ok(Some(untrusted))) => {
            // Asked once on the session's stdin, showing exactly what would run.
            for line in untrusted.question() {
                front.notice(&line);
            }
            eprint!("Trust this as it is now? [y/N] ");
            let yes = matches!(
                lines
                    .next_line()
                    .await
                    .ok()
                    .flatten()
                    .map(|l| l.trim().to_ascii_lowercase())
                    .as_deref(),
                Some("y" | "yes")
            );
            if !yes {
                front.notice(&format!("the swarm did not start: {}", untrusted.refusal()));
                return false;
            }
            if let Err(failure) = untrusted.trust() {
                front.notice(&format!("the swarm did not start: {}", failure.message));
                return false;
            }
        }
        Ok(Err(failure)) => {
            front.notice(&format!("the swarm did not start: {}", failure.message));
            return false;
        }
        Err(e) => {
            front.notice(&format!("the swarm did not start: {e}"));
            return false;
        }
    }
    true
}
