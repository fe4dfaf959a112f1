//! Slash commands: the one parser every front end shares. It turns `/name args` into an
//! `Op` for the session, or into an action the front end handles itself (help, exit).
//! Unknown names get a "did you mean".

use atto_protocol::Op;

/// What a slash command asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Send this op to the session.
    Op(Op),
    /// Show the command list.
    Help,
    /// Leave the session.
    Exit,
}

/// One command, for `/help` and for suggestions.
pub struct CommandInfo {
    /// Name with its arguments, as typed.
    pub usage: &'static str,
    /// What it does.
    pub about: &'static str,
}

/// Every command, in `/help` order.
pub const COMMANDS: &[CommandInfo] = &[
    CommandInfo {
        usage: "/grants",
        about: "list the grants in force (scope, rule, created, last used, uses)",
    },
    CommandInfo {
        usage: "/grants revoke N",
        about: "remove grant N (saved or this session's; config rules live in the config)",
    },
    CommandInfo {
        usage: "/fork [label]",
        about: "branch the conversation here into a new thread and continue in it",
    },
    CommandInfo {
        usage: "/threads",
        about: "show the thread tree (ids, labels, message counts, current marker)",
    },
    CommandInfo {
        usage: "/switch ID",
        about: "continue in another thread (id, unique prefix, or main)",
    },
    CommandInfo {
        usage: "/rollback",
        about: "go back to this thread's fork point, in a new sibling thread",
    },
    CommandInfo {
        usage: "/trust [on|off]",
        about: "let file tools reach outside the workspace (toggles without an argument)",
    },
    CommandInfo {
        usage: "/help",
        about: "show this list",
    },
    CommandInfo {
        usage: "/exit",
        about: "end the session (also /quit)",
    },
];

/// Parses a line that starts with `/`. `trust` is the current trust state, for the
/// toggle. Errors are one line and change nothing.
pub fn parse(line: &str, trust: bool) -> Result<Command, String> {
    let line = line.trim();
    let body = line.strip_prefix('/').unwrap_or(line);
    let mut words = body.split_whitespace();
    let name = words.next().unwrap_or("");
    let args: Vec<&str> = words.collect();
    match (name, args.as_slice()) {
        ("grants", []) => Ok(Command::Op(Op::ListGrants)),
        ("grants", ["revoke", n]) => match n.parse::<u32>() {
            Ok(number) if number > 0 => Ok(Command::Op(Op::RevokeGrant { number })),
            _ => Err(format!(
                "/grants revoke takes a grant number from /grants, not '{n}'"
            )),
        },
        ("grants", _) => Err("usage: /grants, or /grants revoke N".to_owned()),
        ("trust", []) => Ok(Command::Op(Op::SetTrust { on: !trust })),
        ("trust", ["on"]) => Ok(Command::Op(Op::SetTrust { on: true })),
        ("trust", ["off"]) => Ok(Command::Op(Op::SetTrust { on: false })),
        ("trust", _) => Err("usage: /trust, /trust on or /trust off".to_owned()),
        ("fork", []) => Ok(Command::Op(Op::Fork { label: None })),
        ("fork", _) => {
            let label = body["fork".len()..].trim().trim_matches('"').to_owned();
            Ok(Command::Op(Op::Fork { label: Some(label) }))
        }
        ("threads", []) => Ok(Command::Op(Op::ListThreads)),
        ("switch", [id]) => Ok(Command::Op(Op::SwitchThread {
            id: (*id).to_owned(),
        })),
        ("switch", _) => Err("usage: /switch ID (see /threads)".to_owned()),
        ("rollback", []) => Ok(Command::Op(Op::Rollback)),
        ("help", _) => Ok(Command::Help),
        ("exit" | "quit", _) => Ok(Command::Exit),
        _ => Err(unknown(name)),
    }
}

/// `/help` text.
pub fn help() -> String {
    let width = COMMANDS.iter().map(|c| c.usage.len()).max().unwrap_or(0);
    COMMANDS
        .iter()
        .map(|c| format!("  {:<width$}  {}\n", c.usage, c.about))
        .collect()
}

fn unknown(name: &str) -> String {
    let best = COMMANDS
        .iter()
        .filter_map(|c| {
            let candidate = c.usage.trim_start_matches('/').split(' ').next()?;
            Some((distance(name, candidate), candidate))
        })
        .min();
    match best {
        Some((d, candidate)) if d <= 2 && !name.is_empty() => {
            format!("unknown command /{name}; did you mean /{candidate}? (/help lists them)")
        }
        _ => format!("unknown command /{name}; /help lists the commands"),
    }
}

/// Edit distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_into_ops() {
        assert_eq!(parse("/grants", false), Ok(Command::Op(Op::ListGrants)));
        assert_eq!(
            parse("/grants revoke 3", false),
            Ok(Command::Op(Op::RevokeGrant { number: 3 }))
        );
        assert_eq!(
            parse("/trust", false),
            Ok(Command::Op(Op::SetTrust { on: true }))
        );
        assert_eq!(
            parse("/trust off", true),
            Ok(Command::Op(Op::SetTrust { on: false }))
        );
        assert_eq!(parse("/quit", false), Ok(Command::Exit));
        assert_eq!(
            parse("/fork \"Try React\"", false),
            Ok(Command::Op(Op::Fork {
                label: Some("Try React".into())
            }))
        );
        assert_eq!(
            parse("/switch fork-a1", false),
            Ok(Command::Op(Op::SwitchThread {
                id: "fork-a1".into()
            }))
        );
        assert!(parse("/switch", false).is_err());
    }

    #[test]
    fn bad_input_is_one_line_and_suggests() {
        let err = parse("/grnts", false).unwrap_err();
        assert!(err.contains("did you mean /grants"), "{err}");
        assert!(
            parse("/grants revoke x", false)
                .unwrap_err()
                .contains("'x'")
        );
        assert!(parse("/grants revoke 0", false).is_err());
        assert!(parse("/zzzzzz", false).unwrap_err().contains("/help"));
        assert!(help().contains("/grants revoke N"));
    }
}
