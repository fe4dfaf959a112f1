//! `atto demo`: the whole agent loop, offline. A small project is made in a temporary
//! directory, the scripted model server (atto-testkit) is started in-process, and atto
//! reads a file, fixes it, runs it and reports, exactly as it would with a real model.

use std::path::{Path, PathBuf};

use atto_llm::{ResolvedProvider, Wire};
use atto_testkit::{Reply, Script, ScriptToolCall, ScriptedServer};
use atto_tools::names;
use clap::Args;
use serde_json::json;

use crate::permissions::PermissionFlags;
use crate::setup::{self, Launch, LimitFlags};
use crate::{ExitCode, Failure, exec};
use atto_config::Config;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to make the demo project (default: a new directory under the temp dir).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

const GREET_PY: &str = "def greet(name):\n    return \"Hello, \" + nam + \"!\"\n\n\nif __name__ == \"__main__\":\n    print(greet(\"world\"))\n";

/// The model's side of the demo, scripted.
fn script() -> Script {
    let call = |name: &str, arguments| ScriptToolCall {
        id: None,
        name: name.to_owned(),
        arguments,
        raw_arguments: None,
    };
    let reply = |text: &str, calls: Vec<ScriptToolCall>| Reply {
        text: Some(text.to_owned()),
        tool_calls: calls,
        ..Reply::default()
    };
    Script {
        replies: vec![
            reply(
                "Let me look at greet.py first.",
                vec![call(names::READ_FILE, json!({"path": "greet.py"}))],
            ),
            reply(
                "Line 2 uses `nam`, which is not defined; it should be `name`. Fixing it.",
                vec![call(
                    names::EDIT_FILE,
                    json!({"path": "greet.py", "old_string": "+ nam +", "new_string": "+ name +"}),
                )],
            ),
            reply(
                "Now I'll run it to check.",
                vec![call(names::BASH, json!({"command": "python3 greet.py"}))],
            ),
            reply(
                "Fixed the NameError in greet.py (`nam` → `name`). Running it prints \
                 `Hello, world!`.",
                Vec::new(),
            ),
        ],
        ..Script::default()
    }
}

pub async fn run(args: DemoArgs, wire: Option<Wire>) -> Result<ExitCode, Failure> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => std::env::temp_dir().join(format!("atto-demo-{}", std::process::id())),
    };
    make_project(&dir)?;
    let server = ScriptedServer::start(script())
        .await
        .map_err(|e| Failure::usage(format!("cannot start the scripted model server: {e}")))?;
    let wire = wire.unwrap_or(Wire::Chat);
    let base_url = match wire {
        Wire::Anthropic => server.base_url(),
        Wire::Chat | Wire::Responses => format!("{}/v1", server.base_url()),
    };
    let provider = ResolvedProvider {
        name: "atto-testkit".to_owned(),
        base_url,
        wire,
        model: "scripted-demo".to_owned(),
        api_key: None,
        api_key_env: None,
    };
    println!("atto demo — the model here is SCRIPTED (atto-testkit on 127.0.0.1, {wire} wire):");
    println!(
        "its replies are fixed, but every tool call really runs in {}",
        dir.display()
    );
    println!("(permission mode auto-safe: edits and sandboxed commands run without asking)");
    println!();
    let workspace = dir
        .canonicalize()
        .map_err(|e| Failure::usage(format!("cannot use {}: {e}", dir.display())))?;
    let config = Config::default();
    let (handle, _) = setup::start(Launch {
        provider: &provider,
        config: &config,
        workspace: workspace.clone(),
        cwd: workspace.clone(),
        limits: LimitFlags::default(),
        // The demo edits and runs code unattended, as an `auto-safe` session would.
        permissions: PermissionFlags {
            permission: Some("auto-safe".to_owned()),
            yolo: false,
            trust: false,
        },
        resume: None,
        mode: Some(atto_protocol::AgentMode::Build),
        unsandboxed_commands: Vec::new(),
        debug: false,
        budget: setup::BudgetFlags::default(),
    })?;
    let prompt = "greet.py crashes when I run it. Fix it and check that it works.";
    println!("> {prompt}");
    let code = atto_line::run_one(handle, prompt.to_owned(), exec::FACTS)
        .await
        .map_or(ExitCode::Failed, |result| exec::exit_code(&result));
    server.shutdown().await;
    println!();
    println!("The demo project is at {}", workspace.display());
    println!(
        "To use a real model: export ANTHROPIC_API_KEY or OPENAI_API_KEY (or see README.md) \
         and run `atto exec --permission auto-safe \"your task\"` in your repository."
    );
    Ok(code)
}

fn make_project(dir: &Path) -> Result<(), Failure> {
    let fail = |e: std::io::Error| {
        Failure::usage(format!(
            "cannot create the demo project in {}: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    std::fs::write(dir.join("greet.py"), GREET_PY).map_err(fail)?;
    std::fs::write(
        dir.join("README.md"),
        "A tiny project made by `atto demo`. greet.py has a bug.\n",
    )
    .map_err(fail)?;
    Ok(())
}
