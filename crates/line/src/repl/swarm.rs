//! `/swarm "task"` in the line session: which lines ask for a swarm, and the trait through
//! which the binary runs it. Setting a swarm up reads swarm.yaml, opens the database and
//! connects the models, all engine work, so the binary does it and talks to the person over
//! the session's stdin; this crate only recognises the line and hands the task over.

use std::future::Future;
use std::pin::Pin;

use tokio::io::{BufReader, Lines, Stdin};

/// Runs a swarm for the line session, to its end, before the next line is read.
pub trait LineSwarm {
    /// Runs `goal` (empty for a bare `/swarm`: says how to give one), reading the plan's
    /// y/N and other questions from `lines`; with `json`, prints `swarm.*` events as
    /// stream-json instead of text.
    fn run<'a>(
        &'a self,
        goal: String,
        lines: &'a mut Lines<BufReader<Stdin>>,
        json: bool,
    ) -> Pin<Box<dyn Future<Output = ()> + 'a>>;
}

/// The task of a `/swarm` line: `Some("")` for a bare `/swarm`, `None` for other lines.
pub(crate) fn swarm_goal(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("/swarm")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let rest = rest.trim();
    let unquoted = rest
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(rest);
    Some(unquoted.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::swarm_goal;

    #[test]
    fn swarm_lines_and_their_task() {
        for (line, want) in [
            ("/swarm \"add a hello module\"", Some("add a hello module")),
            ("/swarm add it", Some("add it")),
            ("/swarm", Some("")),
            ("/swarmy \"x\"", None),
            ("/spawn \"x\"", None),
        ] {
            assert_eq!(swarm_goal(line).as_deref(), want, "{line}");
        }
    }
}
