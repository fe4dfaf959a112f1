//! What earlier parts of a command line tell the commands after them:
//! static variable values (`x=/; rm -rf $x`, `for d in / …`), the words a
//! pipeline feeds `xargs`, and the code a shell or interpreter reads from a
//! here-doc or here-string. The structure itself is walked in `walk`.

use tree_sitter::Node;

use super::command::{self, XargsPlan};
use super::walk::{Walker, raise, text};
use super::words::{self, Word};
use super::{block, patterns};

impl Walker<'_> {
    /// Remembers a static value of `name` (a guessable one replaces an
    /// earlier value only when it names a protected path).
    pub(super) fn remember_var(&mut self, name: &str, v: &Word) {
        if v.dynamic || name.is_empty() {
            self.vars.retain(|(n, _)| n != name);
            return;
        }
        let dangerous = block::protected(&v.text, None).is_some();
        match self.vars.iter_mut().find(|(n, _)| n == name) {
            Some((_, old)) if dangerous || block::protected(old, None).is_none() => {
                old.clone_from(&v.text)
            }
            Some(_) => {}
            None => self.vars.push((name.to_string(), v.text.clone())),
        }
    }

    /// `for d in / ~; do …`: the loop variable takes each value.
    pub(super) fn loop_variable(&mut self, node: Node<'_>, src: &[u8]) {
        let Some(var) = node.child_by_field_name("variable") else {
            return;
        };
        let name = text(var, src).to_string();
        self.vars.retain(|(n, _)| *n != name);
        let mut cursor = node.walk();
        let values: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
        for v in values {
            let w = words::eval(v, src);
            for alt in patterns::expand_braces(&w.text, 16) {
                self.remember_var(
                    &name,
                    &Word {
                        text: alt,
                        ..w.clone()
                    },
                );
            }
        }
    }

    /// `$x` / `${x}` as a whole word, where `x` was set earlier in the line.
    pub(super) fn known_vars(&self, words: Vec<Word>) -> Vec<Word> {
        words
            .into_iter()
            .map(|w| {
                if !w.dynamic || w.guessable {
                    return w;
                }
                let name = w
                    .text
                    .strip_prefix("${")
                    .and_then(|t| t.strip_suffix('}'))
                    .or_else(|| w.text.strip_prefix('$'));
                let value = name.and_then(|n| self.vars.iter().find(|(v, _)| v == n));
                match value {
                    Some((_, value)) => Word {
                        text: value.clone(),
                        guessable: true,
                        ..w
                    },
                    None => w,
                }
            })
            .collect()
    }

    /// `echo / | xargs rm -rf`: judge xargs' command with the words it is
    /// fed (each in place of the `-I` string, or appended).
    pub(super) fn rejudge_xargs(&mut self, idx: usize, plan: &XargsPlan, fed: &[String]) {
        let items: Vec<&str> = fed
            .iter()
            .flat_map(|f| f.split(|c: char| c.is_whitespace() || c == '\0'))
            .filter(|s| !s.is_empty())
            .take(16)
            .collect();
        if items.is_empty() {
            return;
        }
        let runs: Vec<Vec<Word>> = match &plan.replace {
            Some(r) => items
                .iter()
                .map(|item| {
                    plan.command
                        .iter()
                        .map(|w| Word {
                            text: w.text.replace(r.as_str(), item),
                            ..w.clone()
                        })
                        .collect()
                })
                .collect(),
            None => {
                let mut run = plan.command.clone();
                run.extend(items.iter().map(|s| Word::literal(s)));
                vec![run]
            }
        };
        for run in runs {
            let inner = command::judge_at(self, &run, 1);
            if inner.risk > self.segs[idx].seg.risk
                && let Some(reason) = inner.reasons.first()
            {
                let reason = format!("with the input it is fed, xargs runs: {reason}");
                raise(&mut self.segs[idx].seg, inner.risk, &reason);
            }
        }
    }

    /// Code a shell or interpreter reads from a here-doc or here-string.
    pub(super) fn run_input(&mut self, direct: &[usize], body: &str) {
        if direct
            .iter()
            .any(|&i| self.segs[i].stdin_code && self.segs[i].shell)
        {
            self.walk_source(body);
        }
        self.scan_stdin_code(direct, body);
    }
}
