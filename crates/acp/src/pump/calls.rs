//! A session's tool calls as ACP shows them: announced (pending while approval is asked,
//! in progress while running), finished with their output and diffs, and plan mode's
//! proposed changes as pending calls.

use agent_client_protocol::v1::schema::{
    SessionUpdate, ToolCall, ToolCallStatus as AcpStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use atto_protocol::{ApprovalDecision, Op, ProposedChange, ToolCallStatus, ToolKind};
use serde_json::Value;

use super::{Approval, Call, Front, Pump};
use crate::convert;

impl Pump {
    /// Reads the file a write tool is about to replace, while the call cannot run yet,
    /// through a handle of the workspace: a path leading outside it shows no old text.
    pub(super) fn read_before(&self, args: &Value) -> Option<String> {
        // Only a call that writes a whole `content` shows the file's old text.
        args.get("content")?;
        let path = args.get("path").and_then(Value::as_str)?;
        self.tools.read(&self.workspace, path)
    }

    /// An approval: the call is announced as pending (title, files, diff), and the
    /// client asked with the same diff, so the editor shows the change it approves.
    pub(super) fn ask(&mut self, request: atto_protocol::ApprovalRequest) {
        let call_id = request.call_id.clone();
        let args = request.arguments.clone();
        let before = self.read_before(&args);
        let diffs = convert::diffs(&self.workspace, &args, before.as_deref());
        let locations = convert::locations(&self.workspace, self.tools.paths(&request.tool, &args));
        // A subagent's call reaches the user through this session, labelled with the child.
        let title = match &request.subagent {
            Some(child) => format!(
                "subagent ({}): {}",
                child.role.as_str(),
                convert::approval_title(&request, &*self.tools)
            ),
            None => convert::approval_title(&request, &*self.tools),
        };
        if let Some(call) = self.calls.get_mut(&call_id) {
            call.approval = Approval::Asked;
        } else {
            let mut tool = ToolCall::new(call_id.clone(), title.clone())
                .kind(convert::kind(request.kind))
                .status(AcpStatus::Pending)
                .locations(locations.clone())
                .content(diffs.clone());
            if !args.is_null() {
                tool = tool.raw_input(args.clone());
            }
            self.announce(tool);
            self.calls.insert(
                call_id.clone(),
                Call {
                    args,
                    before,
                    approval: Approval::Asked,
                },
            );
        }
        let mut reasons = request.reasons.join("; ");
        if request.unsandboxed {
            reasons = format!("runs WITHOUT the sandbox. {reasons}");
        }
        // The diff says what changes; the text says why atto asks (and, when there is no
        // diff, exactly what would run).
        let about = if diffs.is_empty() {
            format!("{}\nrisk: {}\n{}", request.subject, request.risk, reasons)
        } else {
            format!("risk: {}\n{}", request.risk, reasons)
        };
        let mut content = diffs;
        content.push(convert::text_content(about));
        let fields = ToolCallUpdateFields::new()
            .title(title)
            .status(AcpStatus::Pending)
            .locations(locations)
            .content(content);
        let ask = agent_client_protocol::v1::schema::RequestPermissionRequest::new(
            self.id.clone(),
            ToolCallUpdate::new(call_id.clone(), fields),
            convert::permission_options(&request),
        );
        let cx = self.cx.clone();
        let ops = self.ops.clone();
        let front = self.front_tx.clone();
        let deadline = self.deadline;
        tokio::spawn(async move {
            let decision = crate::permission::ask(&cx, ask, deadline).await;
            let allowed = matches!(
                decision,
                ApprovalDecision::Yes | ApprovalDecision::Always { .. }
            );
            // Before the gate hears it: the pump then knows the answer when the call
            // starts or is refused.
            let _ = front.send(Front::Answered { call_id, allowed });
            let _ = ops.submit(Op::Approval {
                id: request.id,
                decision,
            });
        });
    }

    /// A call started: announced, or its pending announcement updated, with the kind and
    /// title the tool gave it.
    pub(super) fn started(
        &mut self,
        call_id: String,
        name: String,
        args: Value,
        kind: ToolKind,
        title: String,
    ) {
        // A proposed change is shown by `queued`; plan mode did not run it.
        if self.queued_calls.contains(&call_id) {
            return;
        }
        // An approval's answer may still wait in the front channel; it was sent before
        // the gate let this call start (or refused it).
        self.drain_front();
        let known = self.calls.get(&call_id);
        let before = known.and_then(|c| c.before.clone());
        let approval = known.map_or(Approval::NotAsked, |c| c.approval);
        if approval == Approval::Asked {
            // Not allowed: the call does not run, and goes from pending straight to its
            // end in `finished`.
            if let Some(call) = self.calls.get_mut(&call_id) {
                call.args = args;
            }
            return;
        }
        let mut content = convert::diffs(&self.workspace, &args, before.as_deref());
        let locations = convert::locations(&self.workspace, self.tools.paths(&name, &args));
        if known.is_some() {
            let mut fields = ToolCallUpdateFields::new()
                .title(title)
                .kind(convert::kind(kind))
                .status(AcpStatus::InProgress)
                .locations(locations)
                .raw_input(args.clone());
            if !content.is_empty() {
                fields = fields.content(std::mem::take(&mut content));
            }
            self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.clone(),
                fields,
            )));
        } else {
            let tool = ToolCall::new(call_id.clone(), title)
                .kind(convert::kind(kind))
                .status(AcpStatus::InProgress)
                .locations(locations)
                .content(content)
                .raw_input(args.clone());
            self.announce(tool);
        }
        self.calls.insert(
            call_id,
            Call {
                args,
                before,
                approval,
            },
        );
    }

    pub(super) fn finished(
        &mut self,
        call_id: String,
        status: ToolCallStatus,
        summary: String,
        exit_code: Option<i32>,
        sandboxed: Option<bool>,
    ) {
        if status == ToolCallStatus::Queued && self.queued_calls.contains(&call_id) {
            return;
        }
        let acp = match status {
            ToolCallStatus::Ok => AcpStatus::Completed,
            // Plan mode queued it: it stays pending until the client decides it.
            ToolCallStatus::Queued => AcpStatus::Pending,
            ToolCallStatus::Error
            | ToolCallStatus::InvalidArguments
            | ToolCallStatus::Cancelled
            | ToolCallStatus::Denied => AcpStatus::Failed,
        };
        let call = self.calls.get(&call_id);
        let mut content = match call {
            Some(c) => convert::diffs(&self.workspace, &c.args, c.before.as_deref()),
            None => Vec::new(),
        };
        if status != ToolCallStatus::Queued {
            content.push(convert::text_content(summary.clone()));
        }
        let fields = ToolCallUpdateFields::new()
            .status(acp)
            .content(content)
            .raw_output(serde_json::json!({
                "status": status,
                "summary": summary,
                "exit_code": exit_code,
                "sandboxed": sandboxed,
            }));
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id, fields,
        )));
    }

    /// Plan mode queued a call: shown as a pending tool call with its diff.
    pub(super) fn queued(&mut self, change: ProposedChange) {
        let call_id = change.tool_call_id.clone();
        let before = self.read_before(&change.args);
        let content = convert::diffs(&self.workspace, &change.args, before.as_deref());
        let title = format!(
            "proposed change {}: {}",
            change.order,
            self.tools.title(&change.tool, &change.args)
        );
        let locations = convert::locations(
            &self.workspace,
            self.tools.paths(&change.tool, &change.args),
        );
        if self.calls.contains_key(&call_id) {
            let fields = ToolCallUpdateFields::new()
                .title(title)
                .kind(convert::kind(self.tools.kind(&change.tool)))
                .status(AcpStatus::Pending)
                .locations(locations)
                .content(content)
                .raw_input(change.args.clone());
            self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.clone(),
                fields,
            )));
        } else {
            let tool = ToolCall::new(call_id.clone(), title)
                .kind(convert::kind(self.tools.kind(&change.tool)))
                .status(AcpStatus::Pending)
                .locations(locations)
                .content(content)
                .raw_input(change.args.clone());
            self.announce(tool);
        }
        self.queued_calls.insert(call_id.clone());
        self.calls.insert(
            call_id.clone(),
            Call {
                args: change.args.clone(),
                before,
                approval: Approval::NotAsked,
            },
        );
        self.change_calls.insert(change.order, call_id);
        self.proposed.push(change);
    }
}
