//! The swarm's side of project trust: a swarm file whose settings start processes or
//! choose models (`atto_swarm::config::HARMLESS_KEYS` lists those that do not), and the
//! workspace files its launch template runs, are used only once the user trusted their
//! content. Owns the refusal (with the exact `atto trust` command), what a person is shown
//! before trusting, finding the files a template runs, and asking over the terminal UI's
//! swarm channels. Asking on a terminal or a line session's stdin is left to those front
//! ends (`swarm`, `swarm_session`); the trust store is `trust`'s.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use atto_swarm::worker::Pinned;
use atto_swarm::{SwarmConfig, SwarmEvent, SwarmInput};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::Failure;

/// A swarm file, or files its launch template runs, whose content the user has not
/// trusted: nothing from the file is used.
pub struct UntrustedSwarmFile {
    path: PathBuf,
    text: String,
    /// `line 3: worker_command`, … (empty when the file itself is trusted or harmless).
    keys: Vec<String>,
    /// The launch template the file sets, if it sets one.
    template: Vec<String>,
    /// Workspace files the template runs that are not trusted as they are.
    files: Vec<Pinned>,
}

/// The workspace files `words` name (as a program or an argument, relative to the
/// workspace or absolute inside it), with their content read once: workers run outside
/// any sandbox, and the workspace is where sandboxed commands write.
pub fn template_files(words: &[String], workspace: &Path) -> Vec<Pinned> {
    let Ok(root) = std::fs::canonicalize(workspace) else {
        return Vec::new();
    };
    let mut out: Vec<Pinned> = Vec::new();
    for word in words {
        if word.is_empty() || (word.starts_with('{') && word.ends_with('}')) {
            continue;
        }
        let Ok(path) = std::fs::canonicalize(workspace.join(word)) else {
            continue;
        };
        if !path.starts_with(&root) || !path.is_file() || out.iter().any(|p| p.path == path) {
            continue;
        }
        if let Ok(content) = std::fs::read(&path) {
            out.push(Pinned { path, content });
        }
    }
    out
}

impl UntrustedSwarmFile {
    /// The workspace's swarm file when it, or a file its template runs, needs trust and
    /// is not trusted as it is.
    pub fn find(workspace: &Path) -> Result<Option<UntrustedSwarmFile>, Failure> {
        let loaded = SwarmConfig::load(workspace).map_err(|e| Failure::usage(e.to_string()))?;
        let runs = template_files(&loaded.config.worker_command.words, workspace);
        Ok(UntrustedSwarmFile::of(&loaded, &runs))
    }

    /// Judges `loaded` and the files its template runs (`runs`, as read).
    pub fn of(loaded: &atto_swarm::Loaded, runs: &[Pinned]) -> Option<UntrustedSwarmFile> {
        let path = loaded.path.as_ref()?;
        let file_ok =
            loaded.needs_trust.is_empty() || crate::trust::is_trusted(path, loaded.text.as_bytes());
        let files: Vec<Pinned> = runs
            .iter()
            .filter(|f| !crate::trust::is_trusted(&f.path, &f.content))
            .cloned()
            .collect();
        if file_ok && files.is_empty() {
            return None;
        }
        Some(UntrustedSwarmFile {
            path: path.clone(),
            text: loaded.text.clone(),
            keys: if file_ok {
                Vec::new()
            } else {
                loaded.needs_trust.clone()
            },
            template: loaded.config.worker_command.words.clone(),
            files,
        })
    }

    /// The files to trust: the swarm file when it needs it, and the files it runs.
    fn to_trust(&self) -> Vec<&Path> {
        let mut out: Vec<&Path> = Vec::new();
        if !self.keys.is_empty() {
            out.push(&self.path);
        }
        out.extend(self.files.iter().map(|f| f.path.as_path()));
        out
    }

    /// What is not trusted, in one sentence.
    fn what(&self) -> String {
        let mut parts = Vec::new();
        if !self.keys.is_empty() {
            parts.push(format!(
                "{} sets {} (settings that start processes or choose models)",
                self.path.display(),
                self.keys.join(", ")
            ));
        }
        if !self.files.is_empty() {
            let names: Vec<String> = self
                .files
                .iter()
                .map(|f| f.path.display().to_string())
                .collect();
            parts.push(format!(
                "its launch template runs {} from the workspace",
                names.join(", ")
            ));
        }
        format!("{}, and that content is not trusted", parts.join("; "))
    }

    /// Why the swarm did not start, and the command that trusts what it needs.
    pub fn refusal(&self) -> String {
        let mut out = format!(
            "{}; the swarm did not start and nothing from the file ran.",
            self.what()
        );
        if !self.template.is_empty() {
            out.push_str(&format!(
                " Its workers would start with: {}.",
                shell_words(&self.template)
            ));
        }
        let command = self
            .to_trust()
            .iter()
            .map(|p| crate::trust::command_for(p))
            .collect::<Vec<_>>()
            .join("` and `");
        out.push_str(&format!(
            " Read it, then trust it with `{command}` (until it changes)."
        ));
        out
    }

    /// What a person is shown before being asked: what is not trusted, the launch
    /// template, and the whole text of each file that would be trusted.
    pub fn question(&self) -> Vec<String> {
        let mut out = vec![format!("{}.", self.what())];
        if !self.template.is_empty() {
            out.push(format!(
                "its workers would start with: {}",
                shell_words(&self.template)
            ));
        }
        if !self.keys.is_empty() {
            out.push(format!(
                "--- {}\n{}\n---",
                self.path.display(),
                self.text.trim_end()
            ));
        }
        for file in &self.files {
            out.push(format!(
                "--- {}\n{}\n---",
                file.path.display(),
                String::from_utf8_lossy(&file.content).trim_end()
            ));
        }
        out
    }

    /// Trusts exactly the content that was shown.
    pub fn trust(&self) -> Result<(), Failure> {
        let mut store = crate::trust::Store::open()
            .ok_or_else(|| Failure::usage("no data directory (set ATTO_HOME)"))?;
        if !self.keys.is_empty() {
            store.trust(&self.path, self.text.as_bytes())?;
        }
        for file in &self.files {
            store.trust(&file.path, &file.content)?;
        }
        Ok(())
    }

    /// Shows what would be trusted and asks once on the terminal; trusts exactly that on
    /// yes.
    pub fn ask_on_terminal(&self) -> Result<bool, Failure> {
        for line in self.question() {
            eprintln!("atto: {line}");
        }
        eprint!("Trust this as it is now? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        if !matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            return Ok(false);
        }
        self.trust()?;
        Ok(true)
    }
}

/// For the terminal UI's swarm thread, before the swarm is set up: when the workspace's
/// swarm file (or a file its template runs) is not trusted, asks the person once through
/// the swarm's channels, showing [`UntrustedSwarmFile::question`], and on yes trusts
/// exactly what was shown. `Err` is why the swarm does not start. Blocks the calling
/// thread (not a runtime's) until the answer.
pub fn ask_over_channels(
    workspace: &Path,
    events: &UnboundedSender<SwarmEvent>,
    answers: &mut UnboundedReceiver<SwarmInput>,
) -> Result<(), String> {
    let untrusted = match UntrustedSwarmFile::find(workspace) {
        Ok(None) => return Ok(()),
        Ok(Some(untrusted)) => untrusted,
        Err(failure) => return Err(failure.message),
    };
    let question = SwarmEvent::TrustNeeded {
        question: untrusted.question(),
    };
    if events.send(question).is_err() {
        return Err(untrusted.refusal());
    }
    loop {
        match answers.blocking_recv() {
            Some(SwarmInput::Trust { yes: true }) => {
                return untrusted.trust().map_err(|failure| failure.message);
            }
            Some(SwarmInput::Trust { yes: false } | SwarmInput::Interrupt) | None => {
                return Err(untrusted.refusal());
            }
            // Nothing else is asked before the swarm starts.
            Some(
                SwarmInput::Confirm { .. }
                | SwarmInput::Approval { .. }
                | SwarmInput::Intervention { .. },
            ) => {}
        }
    }
}

/// Words as a shell would need them typed, for showing a command.
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-=:,@{}".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
