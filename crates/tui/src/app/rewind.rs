//! The rewind picker (Esc Esc, `/rewind`): the conversation's prompts as `prompt_list`
//! gave them, then what goes back — the conversation, the code, or both. It only chooses:
//! the session rewinds (`Op::Rewind`) and answers `rewound`, whose prompt the composer
//! then takes for editing (see `run`).

use atto_protocol::{Event, Op, PromptInfo, RewindScope};

use super::App;

/// The choices of the second step, in the order shown.
pub const SCOPES: [RewindScope; 3] = [
    RewindScope::Both,
    RewindScope::Conversation,
    RewindScope::Code,
];

/// The picker's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindDialog {
    /// The prompts, oldest first.
    pub prompts: Vec<PromptInfo>,
    /// Index into `prompts` of the highlighted one.
    pub selected: usize,
    /// Once a prompt is chosen: its index, and the highlighted entry of [`SCOPES`].
    pub scope: Option<(usize, usize)>,
}

impl RewindDialog {
    /// The prompt chosen or highlighted.
    pub fn prompt(&self) -> Option<&PromptInfo> {
        let at = self.scope.map_or(self.selected, |(chosen, _)| chosen);
        self.prompts.get(at)
    }
}

/// How a scope reads in the picker.
pub fn scope_label(scope: RewindScope) -> &'static str {
    match scope {
        RewindScope::Both => "conversation and code: both go back to before this prompt",
        RewindScope::Conversation => "conversation only: the files stay as they are",
        RewindScope::Code => "code only: the files go back, the conversation stays",
    }
}

impl App {
    /// `prompt_list` opens the picker on the newest prompt; `rewound` closes it.
    pub(super) fn rewind_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::PromptList { prompts } if prompts.is_empty() => {
                self.push_notice("no prompts in this conversation yet: nothing to rewind to");
            }
            Event::PromptList { prompts } => {
                self.rewind = Some(RewindDialog {
                    prompts: prompts.clone(),
                    selected: prompts.len() - 1,
                    scope: None,
                });
            }
            Event::Rewound { prompt, scope, .. } => {
                self.rewind = None;
                let what = match scope {
                    RewindScope::Conversation => "the conversation",
                    RewindScope::Code => "the files",
                    RewindScope::Both => "the conversation and the files",
                };
                self.quiet(format!("rewound {what} to just before prompt {prompt}"));
            }
            _ => return None,
        }
        Some(())
    }

    /// ↑/↓ in the picker: another prompt, or another scope once a prompt is chosen.
    pub fn rewind_move(&mut self, delta: i32) {
        let Some(d) = &mut self.rewind else {
            return;
        };
        match &mut d.scope {
            Some((_, at)) => *at = super::add(*at, delta).min(SCOPES.len() - 1),
            None => d.selected = super::add(d.selected, delta).min(d.prompts.len() - 1),
        }
    }

    /// Enter: chooses the highlighted prompt, then the highlighted scope. Returns the op
    /// to send once both are chosen (and closes the picker).
    pub fn rewind_enter(&mut self) -> Option<Op> {
        let d = self.rewind.as_mut()?;
        let Some((chosen, at)) = d.scope else {
            d.scope = Some((d.selected, 0));
            return None;
        };
        let prompt = d.prompts.get(chosen)?.number;
        let scope = *SCOPES.get(at)?;
        self.rewind = None;
        Some(Op::Rewind { prompt, scope })
    }

    /// Esc: from the scopes back to the prompts; from the prompts, closes the picker.
    pub fn rewind_back(&mut self) {
        match &mut self.rewind {
            Some(d) if d.scope.is_some() => d.scope = None,
            _ => self.rewind = None,
        }
    }
}
