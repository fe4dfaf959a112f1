//! What the gate knows about one call: its tool, target paths (as rules write them), the
//! classifier's verdict for commands, exactly what would happen (for the approval prompt)
//! and the rule an "always" answer would save; and the message a refusal gives the model.

use std::path::{Component, Path, PathBuf};

use atto_policy::bash::{self, Verdict};
use atto_policy::gate::Decision;
use atto_protocol::{DangerLevel, ToolCall, ToolKind};
use atto_tools::Tool;
use atto_tools::beneath::Workspace;
use serde_json::Value;

/// What the gate and the approval prompt need to know about one call.
pub(super) struct GateInput {
    pub tool: String,
    /// What kind of work the tool does: commands are judged, saved and edited as commands.
    pub kind: ToolKind,
    /// How dangerous this call is, from its tool and arguments.
    pub level: DangerLevel,
    pub mutates: bool,
    pub verdict: Option<Verdict>,
    /// Workspace-relative target paths.
    pub paths: Vec<String>,
    /// Exactly what would happen, for the prompt.
    pub subject: String,
    pub command: Option<String>,
    /// The arguments judged, handed to the approval request as they are.
    pub arguments: Value,
}

impl GateInput {
    pub(super) fn of(
        call: &ToolCall,
        tool: &dyn Tool,
        args: &Value,
        workspace: &Path,
    ) -> GateInput {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // Commands are judged by the parsed classifier.
        let verdict = (tool.kind() == ToolKind::Execute)
            .then(|| bash::classify(command.as_deref().unwrap_or("")));
        // A patch names its files inside its text: rules and protected paths see them all.
        let named: Vec<String> = tool.paths(args).unwrap_or_default();
        let paths: Vec<String> = named.iter().map(|p| rule_path(workspace, p)).collect();
        // Where a path really leads comes first when a link makes it differ from the text.
        let mut leads = String::new();
        for (given, real) in named.iter().zip(&paths) {
            if lexical_path(workspace, given) != *real {
                leads.push_str(&format!("{} leads to {real}\n", given.trim()));
            }
        }
        GateInput {
            tool: call.name.clone(),
            kind: tool.kind(),
            level: tool.danger_of(args),
            mutates: tool.mutates(args),
            subject: leads + &tool.subject(args),
            verdict,
            paths,
            command,
            arguments: args.clone(),
        }
    }

    /// One line for the audit log.
    pub(super) fn subject_line(&self) -> String {
        match (&self.command, self.paths.first()) {
            (Some(c), _) => c.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => String::new(),
        }
    }

    /// The rule an "always allow" answer saves: this exact command or path.
    pub(super) fn suggested_rule(&self) -> String {
        match (&self.command, self.paths.first()) {
            (Some(c), _) if self.kind == ToolKind::Execute => {
                format!("{}({})", self.tool, escape_glob(c))
            }
            (_, Some(p)) => format!("{}({})", self.tool, escape_glob(p)),
            _ => self.tool.clone(),
        }
    }
}

/// A path argument in the form rules use, as the kernel resolves it: workspace-relative
/// when it leads inside the workspace, absolute when it leads outside (trust mode).
/// Symlinks and `..` are followed in the kernel's order (`link/..` is the parent of the
/// link's target), a symlink at the end counts where it points (dangling or not), so
/// neither can disguise where a write lands. A path the kernel cannot resolve (it would
/// fail to open in the tool too) falls back to its text with `..` removed.
fn rule_path(workspace: &Path, path: &str) -> String {
    match Workspace::anywhere(workspace).and_then(|root| root.resolve(path)) {
        Ok(target) => target.rel().to_owned(),
        Err(_) => lexical_path(workspace, path),
    }
}

fn lexical_path(workspace: &Path, path: &str) -> String {
    let joined = workspace.join(path.trim());
    let mut clean = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    match clean.strip_prefix(workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => clean.display().to_string(),
    }
}

/// Escapes glob metacharacters so a saved rule matches only this text.
fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub(super) fn denial_message(tool: &str, d: &Decision) -> String {
    let mut message = format!(
        "policy refused this {tool} call ({}); it was not run.",
        d.decided_by
    );
    if !d.reasons.is_empty() {
        message.push_str(" Why: ");
        message.push_str(&d.reasons.join("; "));
        message.push('.');
    }
    if d.risk == "BLOCK" {
        message.push_str(
            " Commands judged BLOCK are refused in every mode but yolo; find a safer way to do \
             this, or ask the user to run it themselves.",
        );
    } else {
        message.push_str(" Do not retry it as is; try another way or ask the user.");
    }
    message
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn paths_are_judged_where_the_kernel_resolves_them() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        symlink(".git/objects", ws.join("gobj")).unwrap();
        symlink(".git/hooks/pre-commit", ws.join("hook")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let outside = outside.path().canonicalize().unwrap();
        symlink(&outside, ws.join("out")).unwrap();
        let cases = [
            ("gobj/../config", ".git/config".to_owned()),
            ("gobj/../hooks/pre-push", ".git/hooks/pre-push".to_owned()),
            ("hook", ".git/hooks/pre-commit".to_owned()),
            ("./src/../src/a.rs", "src/a.rs".to_owned()),
            ("new/dir/f.txt", "new/dir/f.txt".to_owned()),
            (".", ".".to_owned()),
            ("out/x", outside.join("x").display().to_string()),
        ];
        for (given, want) in cases {
            assert_eq!(rule_path(&ws, given), want, "{given}");
        }

        // The prompt says where the link leads, and "always" would save that path.
        let args = serde_json::json!({"path": "gobj/../config", "content": "x"});
        let call = ToolCall {
            id: "1".into(),
            name: "write_file".into(),
            arguments: args.to_string(),
        };
        let input = GateInput::of(&call, &atto_tools::WriteFileTool, &args, &ws);
        assert_eq!(input.paths, vec![".git/config".to_owned()]);
        assert!(
            input
                .subject
                .starts_with("gobj/../config leads to .git/config\nwrite gobj/../config"),
            "{}",
            input.subject
        );
        assert_eq!(input.suggested_rule(), "write_file(.git/config)");
        let args = serde_json::json!({"path": "./src/a.rs", "content": "x"});
        let input = GateInput::of(&call, &atto_tools::WriteFileTool, &args, &ws);
        assert!(
            input.subject.starts_with("write ./src/a.rs"),
            "{}",
            input.subject
        );
    }
}
