//! `/learn` and `/learnings`: the user's say over what the agent remembers.

use atto_protocol::{LearningCommand, LearningField, LearningKind, LearningStatus, Op};

use super::Command;

/// `/learn [KIND] TEXT` and `/learnings [list [STATUS] | STATUS | show|validate|reject|
/// archive|helpful N | edit N [FIELD] TEXT]`. `body` is the line after the `/`.
pub(super) fn parse(name: &str, args: &[&str], body: &str) -> Result<Command, String> {
    let op = |command| Ok(Command::Op(Op::Learning { command }));
    let rest = |skip: usize| -> &str {
        // The text after the command name and `skip` words, as typed.
        let mut text = body.trim_start()[name.len()..].trim_start();
        for _ in 0..skip {
            text = text
                .split_once(char::is_whitespace)
                .map_or("", |(_, after)| after)
                .trim_start();
        }
        unquote(text)
    };
    if name == "learn" {
        let (kind, text) = match args.first().and_then(|w| LearningKind::parse(w)) {
            Some(kind) if args.len() > 1 => (kind, rest(1)),
            _ => (LearningKind::BestPractice, rest(0)),
        };
        if text.is_empty() {
            return Err(LEARN_USAGE.to_owned());
        }
        return op(LearningCommand::Add {
            kind,
            description: text.to_owned(),
        });
    }
    let number = |n: &str| {
        n.trim_start_matches('#')
            .parse::<i64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                format!("/learnings takes a learning's number (see /learnings), not '{n}'")
            })
    };
    match args {
        [] | ["list"] => op(LearningCommand::List { status: None }),
        [status] | ["list", status] if LearningStatus::parse(status).is_some() => {
            op(LearningCommand::List {
                status: LearningStatus::parse(status),
            })
        }
        ["show", n] => op(LearningCommand::Show { id: number(n)? }),
        ["validate", n] => op(LearningCommand::Validate { id: number(n)? }),
        ["reject", n] => op(LearningCommand::Reject { id: number(n)? }),
        ["archive", n] => op(LearningCommand::Archive { id: number(n)? }),
        ["helpful", n] => op(LearningCommand::Helpful { id: number(n)? }),
        ["edit", n, field, _, ..] if field_of(field).is_some() => op(LearningCommand::Edit {
            id: number(n)?,
            field: field_of(field).unwrap_or(LearningField::Description),
            value: rest(3).to_owned(),
        }),
        ["edit", n, _, ..] => op(LearningCommand::Edit {
            id: number(n)?,
            field: LearningField::Description,
            value: rest(2).to_owned(),
        }),
        _ => Err(LEARNINGS_USAGE.to_owned()),
    }
}

const LEARN_USAGE: &str = "usage: /learn [pattern|workaround|antipattern|best_practice|gotcha] \
     \"the lesson in one sentence\"";

const LEARNINGS_USAGE: &str = "usage: /learnings [pending|validated|rejected|archived], \
     /learnings show|validate|reject|archive|helpful N, /learnings edit N \
     [description|details|keywords|kind] TEXT";

fn field_of(word: &str) -> Option<LearningField> {
    Some(match word {
        "description" => LearningField::Description,
        "details" => LearningField::Details,
        "keywords" => LearningField::Keywords,
        "kind" => LearningField::Kind,
        _ => return None,
    })
}

/// Text without one pair of surrounding double quotes.
fn unquote(text: &str) -> &str {
    let text = text.trim();
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text)
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learning(line: &str) -> Result<LearningCommand, String> {
        let body = line.trim_start_matches('/');
        let mut words = body.split_whitespace();
        let name = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        match parse(name, &args, body)? {
            Command::Op(Op::Learning { command }) => Ok(command),
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn learning_commands_parse() {
        use LearningCommand::*;
        let cases: &[(&str, LearningCommand)] = &[
            ("/learnings", List { status: None }),
            (
                "/learnings pending",
                List {
                    status: Some(LearningStatus::Proposed),
                },
            ),
            (
                "/learnings list archived",
                List {
                    status: Some(LearningStatus::Archived),
                },
            ),
            ("/learnings show 3", Show { id: 3 }),
            ("/learnings validate #4", Validate { id: 4 }),
            ("/learnings reject 5", Reject { id: 5 }),
            ("/learnings archive 6", Archive { id: 6 }),
            ("/learnings helpful 7", Helpful { id: 7 }),
            (
                "/learnings edit 8 keywords python, venv",
                Edit {
                    id: 8,
                    field: LearningField::Keywords,
                    value: "python, venv".into(),
                },
            ),
            (
                "/learnings edit 9 \"Use uv, not pip\"",
                Edit {
                    id: 9,
                    field: LearningField::Description,
                    value: "Use uv, not pip".into(),
                },
            ),
            (
                "/learn \"Run migrations before the tests\"",
                Add {
                    kind: LearningKind::BestPractice,
                    description: "Run migrations before the tests".into(),
                },
            ),
            (
                "/learn gotcha the CI image has no python",
                Add {
                    kind: LearningKind::Gotcha,
                    description: "the CI image has no python".into(),
                },
            ),
            // A kind alone is the lesson.
            (
                "/learn gotcha",
                Add {
                    kind: LearningKind::BestPractice,
                    description: "gotcha".into(),
                },
            ),
        ];
        for (line, want) in cases {
            assert_eq!(learning(line).as_ref(), Ok(want), "{line}");
        }
        for bad in [
            "/learn",
            "/learn \"\"",
            "/learnings show",
            "/learnings show x",
            "/learnings validate 0",
            "/learnings frobnicate 2",
        ] {
            assert!(learning(bad).is_err(), "{bad}");
        }
    }
}
