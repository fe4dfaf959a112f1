//! `LocalRunner`: commands run with `sh -c` in the workspace, in their own process group,
//! killed (the whole group) at the timeout, output bounded. For tests, benchmarks and
//! callers without a gate; a session passes its own runner instead.

use std::path::PathBuf;
use std::process::Stdio;

use tokio::io::AsyncReadExt as _;

use crate::{BoxFuture, CommandOutput, CommandRequest, CommandRunner};

/// Output kept of one command: the start and the end, where test summaries are.
const MAX_OUTPUT: usize = 64 * 1024;

/// Adjusts a command before it starts (a caller applies its OS sandbox here).
pub type Prepare = std::sync::Arc<dyn Fn(&mut tokio::process::Command) + Send + Sync>;

/// Runs commands in one directory, plainly or through the caller's `prepare`.
#[derive(Clone)]
pub struct LocalRunner {
    /// Where commands run.
    pub workspace: PathBuf,
    /// Applied to every command before it starts (`None`: run plainly).
    pub prepare: Option<Prepare>,
}

impl LocalRunner {
    /// Commands run plainly in `workspace`.
    pub fn new(workspace: impl Into<PathBuf>) -> LocalRunner {
        LocalRunner {
            workspace: workspace.into(),
            prepare: None,
        }
    }
}

impl std::fmt::Debug for LocalRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRunner")
            .field("workspace", &self.workspace)
            .field("prepare", &self.prepare.is_some())
            .finish()
    }
}

impl CommandRunner for LocalRunner {
    fn run<'a>(&'a self, request: CommandRequest<'a>) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let mut command = tokio::process::Command::new("sh");
            command
                .arg("-c")
                .arg(request.command)
                .current_dir(&self.workspace)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            if let Some(prepare) = &self.prepare {
                prepare(&mut command);
            }
            let mut child = match command.spawn() {
                Ok(child) => child,
                Err(err) => {
                    return CommandOutput {
                        refused: Some(format!("could not start `{}`: {err}", request.command)),
                        ..CommandOutput::default()
                    };
                }
            };
            let group = child.id();
            let mut stdout = child.stdout.take();
            let mut stderr = child.stderr.take();
            let read = async {
                let (mut out, mut err) = (Vec::new(), Vec::new());
                let o = async {
                    if let Some(s) = stdout.as_mut() {
                        let _ = s.read_to_end(&mut out).await;
                    }
                };
                let e = async {
                    if let Some(s) = stderr.as_mut() {
                        let _ = s.read_to_end(&mut err).await;
                    }
                };
                tokio::join!(o, e);
                (out, err)
            };
            let waited = tokio::time::timeout(request.timeout, async {
                let (out, err) = read.await;
                let status = child.wait().await;
                (out, err, status)
            })
            .await;
            match waited {
                Ok((out, err, status)) => {
                    let mut text = String::from_utf8_lossy(&out).into_owned();
                    text.push_str(&String::from_utf8_lossy(&err));
                    CommandOutput {
                        exit_code: status.ok().and_then(|s| s.code()),
                        output: bound(text),
                        timed_out: false,
                        refused: None,
                    }
                }
                Err(_) => {
                    kill_group(group);
                    CommandOutput {
                        timed_out: true,
                        output: format!(
                            "killed after {} s (the time limit), with every process it started",
                            request.timeout.as_secs()
                        ),
                        ..CommandOutput::default()
                    }
                }
            }
        })
    }
}

/// Kills the process group led by `pid`: the command and whatever it started.
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        // `kill -KILL -PGID` through the shell's kill keeps this crate free of unsafe.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Keeps the first and last halves of a long output, with a note between.
pub(crate) fn bound(text: String) -> String {
    if text.len() <= MAX_OUTPUT {
        return text;
    }
    let half = MAX_OUTPUT / 2;
    let mut start = half;
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = text.len() - half;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    format!(
        "{}\n[… {} bytes cut …]\n{}",
        &text[..start],
        end - start,
        &text[end..]
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::Purpose;

    #[tokio::test]
    async fn a_command_that_never_ends_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let runner = LocalRunner::new(dir.path().to_path_buf());
        let out = runner
            .run(CommandRequest {
                command: "sleep 41.3 & sleep 41.3",
                purpose: Purpose::Verification,
                timeout: Duration::from_millis(300),
            })
            .await;
        assert!(out.timed_out);
        assert!(!out.succeeded());
        tokio::time::sleep(Duration::from_millis(100)).await;
        let left = std::process::Command::new("pgrep")
            .args(["-f", "sleep 41.3"])
            .output()
            .unwrap();
        assert!(left.stdout.is_empty(), "processes outlived the timeout");
    }

    #[tokio::test]
    async fn output_and_exit_code_come_back_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let runner = LocalRunner::new(dir.path().to_path_buf());
        let out = runner
            .run(CommandRequest {
                command: "head -c 200000 /dev/zero | tr '\\0' x; echo; echo oops >&2; exit 3",
                purpose: Purpose::Verification,
                timeout: Duration::from_secs(10),
            })
            .await;
        assert_eq!(out.exit_code, Some(3));
        assert!(out.output.len() < 70_000);
        assert!(out.output.contains("bytes cut"));
        assert!(
            out.output.ends_with("oops\n"),
            "{:?}",
            &out.output[out.output.len() - 20..]
        );
    }
}
