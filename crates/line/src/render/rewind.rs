//! Backtracking as text: `/rewind`'s list of prompts and what a rewind went back to. The
//! terminal UI shows the same events as a picker and as the composer's text.

use atto_protocol::{Event, RewindScope};

/// The text for a rewind event; `None` for other events.
pub(super) fn text(event: &Event) -> Option<String> {
    match event {
        Event::PromptList { prompts } if prompts.is_empty() => {
            Some("no prompts in this conversation yet: nothing to rewind to\n".to_owned())
        }
        Event::PromptList { prompts } => {
            let mut out = String::from(
                "prompts (/rewind N [conversation|code|both] goes back to just before one):\n",
            );
            for p in prompts {
                let first = p.text.lines().next().unwrap_or("");
                let more = if p.text.lines().nth(1).is_some() {
                    " …"
                } else {
                    ""
                };
                let files = match p.checkpoint {
                    Some(id) => format!("  (files since: checkpoint {id})"),
                    None => String::new(),
                };
                out.push_str(&format!("  {:>3}  {first}{more}{files}\n", p.number));
            }
            Some(out)
        }
        Event::Rewound {
            prompt,
            scope,
            text,
        } => {
            let what = match scope {
                RewindScope::Conversation => "the conversation",
                RewindScope::Code => "the files",
                RewindScope::Both => "the conversation and the files",
            };
            let mut out = format!("rewound {what} to just before prompt {prompt}\n");
            if *scope != RewindScope::Code {
                out.push_str("the prompt, to edit and send again:\n");
                for line in text.lines() {
                    out.push_str(&format!("  {line}\n"));
                }
            }
            Some(out)
        }
        _ => None,
    }
}
