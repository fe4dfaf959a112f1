//! Redirections and here-docs: which ones write (and where), and how a
//! here-doc feeds code to a shell (`bash <<EOF`, `cat <<EOF | bash`).
//!
//! Owns the `redirected_statement` shape of the tree; what a destination
//! means (`/dev/null` vs `/dev/sda` vs `/etc/passwd`) is `block`'s call.

use tree_sitter::Node;

use super::BashRisk;
use super::block;
use super::command::Judge;
use super::interp;
use super::protected;
use super::walk::{Walker, raise, text};
use super::words;

impl Walker<'_> {
    /// Judges one redirection; `None` when it neither writes nor matters.
    pub(super) fn redirect(&mut self, node: Node<'_>, src: &[u8]) -> Option<(BashRisk, String)> {
        let subst = self.substitutions_in(node, src);
        if node.kind() == "herestring_redirect" {
            let mut cursor = node.walk();
            let word = node.named_children(&mut cursor).next();
            self.herestring = word.map(|w| words::eval(w, src).text);
        }
        if node.kind() != "file_redirect" {
            return subst.then(|| {
                (
                    BashRisk::Warn,
                    "uses the output of a command substitution".into(),
                )
            });
        }
        let mut cursor = node.walk();
        let op = node
            .children(&mut cursor)
            .find(|c| !c.is_named())
            .map(|c| c.kind())
            .unwrap_or("");
        let dest = node.child_by_field_name("destination");
        let dest_word = dest.map(|d| words::eval(d, src)).unwrap_or_default();
        let mut judged = block::redirect_risk(op, &dest_word, dest.map(|d| d.kind()));
        if let Some((risk, _)) = &judged
            && protected::is_protected_path(&dest_word.text)
        {
            self.protected_redirects += 1;
            let reason =
                protected::protected_reason(&format!("the redirection {op}"), &dest_word.text);
            judged = Some(((*risk).max(BashRisk::Warn), reason));
        }
        match (judged, subst) {
            (Some(j), _) => Some(j),
            (None, true) => Some((
                BashRisk::Warn,
                "uses the output of a command substitution".into(),
            )),
            (None, false) => None,
        }
    }

    /// `python3 - <<EOF`: an interpreter reading a here-doc runs it.
    pub(super) fn scan_stdin_code(&mut self, direct: &[usize], body: &str) {
        for &i in direct {
            let Some(lang) = self.segs[i].stdin_lang.clone() else {
                continue;
            };
            let mut j = Judge::warn(Some(&lang), &format!("{lang} runs the here-doc as code"));
            interp::scan(self, &lang, body, &mut j);
            if j.risk > self.segs[i].seg.risk
                && let Some(reason) = j.reasons.first()
            {
                raise(&mut self.segs[i].seg, j.risk, reason);
            }
        }
    }

    pub(super) fn redirected(&mut self, node: Node<'_>, src: &[u8]) {
        let level = self.level;
        let start = self.segs.len();
        if let Some(body) = node.child_by_field_name("body") {
            self.walk(body, src);
        }
        let body_range = start..self.segs.len();
        let hits = self.protected_redirects;
        let mut floor: Vec<(BashRisk, String)> = Vec::new();
        let mut heredoc: Option<Node<'_>> = None;
        let mut input_fetch = false;
        let mut input_decode = false;
        let mut cursor = node.walk();
        let kids: Vec<(Option<&str>, Node<'_>)> = node
            .children(&mut cursor)
            .enumerate()
            .map(|(i, c)| (node.field_name_for_child(i as u32), c))
            .collect();
        for (field, child) in kids {
            if field == Some("body") || !child.is_named() {
                continue;
            }
            if child.kind() == "heredoc_redirect" {
                heredoc = Some(child);
                continue;
            }
            let before = self.segs.len();
            if let Some(f) = self.redirect(child, src) {
                floor.push(f);
            }
            // `bash < <(curl …)`: what the substitution prints is the input.
            input_fetch |= self.segs[before..].iter().any(|s| s.fetch);
            input_decode |= self.segs[before..].iter().any(|s| s.decode);
        }
        let mut tail: Vec<Node<'_>> = Vec::new();
        let mut pipe: Option<Node<'_>> = None;
        let mut body_text: Option<String> = None;
        if let Some(h) = heredoc {
            let mut c = h.walk();
            let parts: Vec<(Option<&str>, Node<'_>)> = h
                .children(&mut c)
                .enumerate()
                .map(|(i, ch)| (h.field_name_for_child(i as u32), ch))
                .collect();
            for (field, part) in parts {
                match (field, part.kind()) {
                    (Some("redirect"), _) => {
                        if let Some(f) = self.redirect(part, src) {
                            floor.push(f);
                        }
                    }
                    (Some("right"), _) => tail.push(part),
                    (_, "pipeline") => pipe = Some(part),
                    (_, "heredoc_body") => {
                        body_text = Some(text(part, src).to_string());
                        // Unquoted here-docs expand `$(…)` before the
                        // command reads them.
                        self.walk(part, src);
                    }
                    _ => {}
                }
            }
        }
        let direct: Vec<usize> = body_range
            .clone()
            .filter(|&i| self.segs[i].level == level)
            .collect();
        let protected_write = self.protected_redirects > hits;
        for &i in &direct {
            for (risk, reason) in &floor {
                raise(&mut self.segs[i].seg, *risk, reason);
            }
            self.segs[i].seg.protected_write |= protected_write;
            if self.segs[i].stdin_code && input_fetch {
                raise(
                    &mut self.segs[i].seg,
                    BashRisk::Block,
                    "runs code fetched from the network",
                );
            }
            if self.segs[i].stdin_code && input_decode {
                raise(
                    &mut self.segs[i].seg,
                    BashRisk::Block,
                    "runs decoded (obfuscated) code",
                );
            }
            if body_text.is_some() {
                self.segs[i].feeds.clone_from(&body_text);
            }
        }
        if direct.is_empty() && !floor.is_empty() {
            for (risk, reason) in &floor {
                self.note(text(node, src), *risk, reason);
                if let Some(last) = self.segs.last_mut() {
                    last.seg.protected_write |= protected_write;
                }
            }
        }
        // `bash <<EOF … EOF` and `bash <<< 'code'` run their input as code.
        if let Some(body) = &body_text {
            self.run_input(&direct, body);
        }
        if let Some(h) = self.herestring.take() {
            self.run_input(&direct, &h);
        }
        if let Some(p) = pipe {
            let mut c = p.walk();
            let stages: Vec<Node<'_>> = p.named_children(&mut c).collect();
            let mut ranges = vec![body_range];
            for s in stages {
                ranges.push(self.walk_range(s, src));
            }
            self.link_pipeline(ranges);
        }
        for t in tail {
            self.walk(t, src);
        }
    }
}
