//! What happens inside a turn besides text and tool calls: retries and self-corrections
//! and recalled learnings (as thought chunks), subagents (as tool calls of their own,
//! with their reports), and a step plan's decision points (asked of the client).

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionRequest, SessionUpdate, ToolCall,
    ToolCallLocation, ToolCallStatus as AcpStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use atto_protocol::{Event, Op};

use super::Pump;
use crate::convert;

impl Pump {
    /// Shows a progress event; gives back the events that are not progress.
    pub(super) fn progress(&mut self, event: Event) -> Option<Event> {
        match event {
            Event::Retry(notice) => self.send(convert::thought(format!(
                "\n(the model call failed: {}; attempt {} of {} in {} ms)\n",
                notice.reason,
                notice.attempt + 1,
                notice.max_attempts,
                notice.delay_ms
            ))),
            Event::CorrectionAttempt {
                tool,
                error,
                strategy,
                attempt,
                max,
            } => self.send(convert::thought(format!(
                "\n({tool} failed: {error}; self-correction {attempt} of {max}: {strategy})\n"
            ))),
            Event::CorrectionSuccess { tool, attempts } => self.send(convert::thought(format!(
                "\n({tool} succeeded after {attempts} self-correction attempt(s))\n"
            ))),
            Event::CorrectionFailed { tool, attempts } => self.send(convert::thought(format!(
                "\n({tool} still failing after {attempts} self-correction attempt(s); the model \
                 was told to stop)\n"
            ))),
            Event::LearningsUsed { learnings, .. } => {
                let list: Vec<String> = learnings
                    .iter()
                    .map(|l| format!("- {}", l.description))
                    .collect();
                self.send(convert::thought(format!(
                    "\n(recalled {} learning(s) of this project:\n{})\n",
                    learnings.len(),
                    list.join("\n")
                )));
            }
            Event::SubagentStarted { agent, files } => self.subagent_started(&agent, &files),
            Event::SubagentProgress {
                id,
                tokens_used,
                budget_tokens,
                activity,
                ..
            } => self.subagent_progress(&id, tokens_used, budget_tokens, activity.as_deref()),
            Event::SubagentFinished {
                agent,
                forced_stop,
                files_modified,
                report,
                ..
            } => self.subagent_finished(&agent, forced_stop, &files_modified, report),
            Event::PlanDecisionRequired {
                number,
                question,
                options,
            } => self.decide(number, question, options),
            other => return Some(other),
        }
        None
    }

    /// A subagent shows as a tool call of its own, announced with its task and budget.
    fn subagent_started(&mut self, agent: &atto_protocol::SubagentInfo, files: &[String]) {
        let tool = ToolCall::new(
            subagent_call(&agent.id),
            format!("subagent ({}): {}", agent.role.as_str(), agent.task),
        )
        .kind(ToolKind::Think)
        .status(AcpStatus::InProgress)
        .raw_input(serde_json::json!({
            "task": agent.task,
            "role": agent.role.as_str(),
            "model": agent.model,
            "budget_tokens": agent.budget_tokens,
            "files": files,
        }));
        self.send(SessionUpdate::ToolCall(tool));
    }

    /// What a subagent is doing now and what it spent, as its call's content.
    fn subagent_progress(
        &mut self,
        id: &str,
        tokens_used: u64,
        budget_tokens: u64,
        activity: Option<&str>,
    ) {
        let text = format!(
            "{} ({tokens_used} of {budget_tokens} tokens)",
            activity.unwrap_or("working")
        );
        let fields = ToolCallUpdateFields::new().content(vec![convert::text_content(text)]);
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            subagent_call(id),
            fields,
        )));
    }

    /// A subagent's call ends with its report, the files it changed and what it spent.
    fn subagent_finished(
        &mut self,
        agent: &atto_protocol::SubagentInfo,
        forced_stop: Option<String>,
        files_modified: &[String],
        report: String,
    ) {
        let status = if agent.status == "completed" {
            AcpStatus::Completed
        } else {
            AcpStatus::Failed
        };
        let mut text = report;
        if let Some(why) = forced_stop {
            text = format!("stopped by atto: {why}\n\n{text}");
        }
        let locations: Vec<ToolCallLocation> = files_modified
            .iter()
            .map(|f| ToolCallLocation::new(self.workspace.join(f)))
            .collect();
        let fields = ToolCallUpdateFields::new()
            .status(status)
            .locations(locations)
            .content(vec![convert::text_content(text)])
            .raw_output(serde_json::json!({
                "status": agent.status,
                "tokens_used": agent.tokens_used,
                "cost_usd": agent.cost_usd,
                "files_modified": files_modified,
            }));
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            subagent_call(&agent.id),
            fields,
        )));
    }

    /// A decision point of a step plan: asked as a permission request whose options are
    /// the choices; no answer stops the plan (nobody is there to choose).
    fn decide(&mut self, number: u32, question: String, options: Vec<String>) {
        let call_id = decision_call(number);
        let tool = ToolCall::new(call_id.clone(), format!("step {number}: {question}"))
            .kind(ToolKind::Think)
            .status(AcpStatus::Pending);
        self.send(SessionUpdate::ToolCall(tool));
        self.decisions.insert(number);
        let mut choices: Vec<PermissionOption> = options
            .iter()
            .enumerate()
            .map(|(i, text)| {
                PermissionOption::new(
                    (i + 1).to_string(),
                    text.clone(),
                    PermissionOptionKind::AllowOnce,
                )
            })
            .collect();
        choices.push(PermissionOption::new(
            "stop",
            "Stop the plan",
            PermissionOptionKind::RejectOnce,
        ));
        let ask = RequestPermissionRequest::new(
            self.id.clone(),
            ToolCallUpdate::new(call_id, ToolCallUpdateFields::new()),
            choices,
        );
        let cx = self.cx.clone();
        let ops = self.ops.clone();
        let deadline = self.deadline;
        tokio::spawn(async move {
            let op = match crate::permission::choose(&cx, ask, deadline).await {
                Some(choice) if choice != "stop" => Op::PlanDecision { number, choice },
                _ => Op::Interrupt,
            };
            let _ = ops.submit(op);
        });
    }

    /// A step moved on: its decision, if it had one, was made.
    pub(super) fn decided(&mut self, number: u32) {
        if self.decisions.remove(&number) {
            let fields = ToolCallUpdateFields::new().status(AcpStatus::Completed);
            self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                decision_call(number),
                fields,
            )));
        }
    }
}

fn subagent_call(id: &str) -> String {
    format!("subagent-{id}")
}

fn decision_call(number: u32) -> String {
    format!("decision-{number}")
}
