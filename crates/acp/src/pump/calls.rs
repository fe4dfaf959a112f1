//! A session's tool calls as ACP shows them: announced (pending while approval is asked,
//! in progress while running), finished with their output and diffs, and plan mode's
//! proposed changes as pending calls.

use agent_client_protocol::v1::schema::{
    SessionUpdate, ToolCall, ToolCallStatus as AcpStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use atto_protocol::{Op, ProposedChange, ToolCallStatus};
use serde_json::Value;

use super::{Call, Pump};
use crate::convert;

impl Pump {
    /// Reads the file a write tool is about to change, while the call cannot run yet.
    pub(super) fn read_before(&self, name: &str, args: &Value) -> Option<String> {
        if name != "write_file" {
            return None;
        }
        let path = args.get("path").and_then(Value::as_str)?;
        std::fs::read_to_string(self.workspace.join(path)).ok()
    }

    /// An approval: the call is shown as pending, and the client asked.
    pub(super) fn ask(&mut self, request: atto_protocol::ApprovalRequest) {
        let call_id = request.call_id.clone();
        if !self.calls.contains_key(&call_id) {
            let tool = ToolCall::new(
                call_id.clone(),
                request.subject.lines().next().unwrap_or(""),
            )
            .kind(convert::kind(&request.tool))
            .status(AcpStatus::Pending);
            self.send(SessionUpdate::ToolCall(tool));
            self.calls.insert(
                call_id.clone(),
                Call {
                    args: Value::Null,
                    before: None,
                },
            );
        }
        let mut reasons = request.reasons.join("; ");
        if request.unsandboxed {
            reasons = format!("runs WITHOUT the sandbox. {reasons}");
        }
        // A subagent's call reaches the user through this session, labelled with the child.
        let title = match &request.subagent {
            Some(child) => format!(
                "subagent ({}): {}",
                child.role.as_str(),
                request.subject.lines().next().unwrap_or("")
            ),
            None => request.subject.lines().next().unwrap_or("").to_owned(),
        };
        let fields = ToolCallUpdateFields::new()
            .title(title)
            .status(AcpStatus::Pending)
            .content(vec![convert::text_content(format!(
                "{}\nrisk: {}\n{}",
                request.subject, request.risk, reasons
            ))]);
        let ask = agent_client_protocol::v1::schema::RequestPermissionRequest::new(
            self.id.clone(),
            ToolCallUpdate::new(call_id, fields),
            convert::permission_options(&request),
        );
        let cx = self.cx.clone();
        let ops = self.ops.clone();
        let deadline = self.deadline;
        tokio::spawn(async move {
            let decision = crate::permission::ask(&cx, ask, deadline).await;
            let _ = ops.submit(Op::Approval {
                id: request.id,
                decision,
            });
        });
    }

    pub(super) fn started(&mut self, call_id: String, name: String, args: Value) {
        // A proposed change is shown by `queued`; plan mode did not run it.
        if self.queued_calls.contains(&call_id) {
            return;
        }
        let before = self.calls.get(&call_id).and_then(|c| c.before.clone());
        let mut content = convert::diffs(&self.workspace, &name, &args, before.as_deref());
        let title = convert::title(&name, &args);
        let locations = convert::locations(&self.workspace, &args);
        if self.calls.contains_key(&call_id) {
            let mut fields = ToolCallUpdateFields::new()
                .title(title)
                .kind(convert::kind(&name))
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
                .kind(convert::kind(&name))
                .status(AcpStatus::InProgress)
                .locations(locations)
                .content(content)
                .raw_input(args.clone());
            self.send(SessionUpdate::ToolCall(tool));
        }
        self.calls.insert(call_id, Call { args, before });
    }

    pub(super) fn finished(
        &mut self,
        call_id: String,
        name: &str,
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
            Some(c) => convert::diffs(&self.workspace, name, &c.args, c.before.as_deref()),
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
        let before = self.read_before(&change.tool, &change.args);
        let content = convert::diffs(
            &self.workspace,
            &change.tool,
            &change.args,
            before.as_deref(),
        );
        let title = format!(
            "proposed change {}: {}",
            change.order,
            convert::title(&change.tool, &change.args)
        );
        let locations = convert::locations(&self.workspace, &change.args);
        if self.calls.contains_key(&call_id) {
            let fields = ToolCallUpdateFields::new()
                .title(title)
                .kind(convert::kind(&change.tool))
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
                .kind(convert::kind(&change.tool))
                .status(AcpStatus::Pending)
                .locations(locations)
                .content(content)
                .raw_input(change.args.clone());
            self.send(SessionUpdate::ToolCall(tool));
        }
        self.queued_calls.insert(call_id.clone());
        self.calls.insert(
            call_id.clone(),
            Call {
                args: change.args.clone(),
                before,
            },
        );
        self.change_calls.insert(change.order, call_id);
        self.proposed.push(change);
    }
}
