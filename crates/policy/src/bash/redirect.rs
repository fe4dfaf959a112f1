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
        let mut r = self.redirections(node, src);
        let doc = match r.heredoc {
            Some(h) => self.heredoc(h, src, &mut r.floor),
            None => HereDoc::default(),
        };
        let direct: Vec<usize> = body_range
            .clone()
            .filter(|&i| self.segs[i].level == level)
            .collect();
        r.protected_write = self.protected_redirects > hits;
        self.apply_redirections(node, src, &direct, &r, doc.body_text.as_ref());
        // `bash <<EOF … EOF` and `bash <<< 'code'` run their input as code.
        if let Some(body) = &doc.body_text {
            self.run_input(&direct, body);
        }
        if let Some(h) = self.herestring.take() {
            self.run_input(&direct, &h);
        }
        if let Some(p) = doc.pipe {
            let mut c = p.walk();
            let stages: Vec<Node<'_>> = p.named_children(&mut c).collect();
            let mut ranges = vec![body_range];
            for s in stages {
                ranges.push(self.walk_range(s, src));
            }
            self.link_pipeline(ranges);
        }
        for t in doc.tail {
            self.walk(t, src);
        }
    }

    /// Judges the statement's own redirections (all but the body and the
    /// here-doc, which is returned for `heredoc`).
    fn redirections<'t>(&mut self, node: Node<'t>, src: &[u8]) -> Redirections<'t> {
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
        Redirections {
            floor,
            heredoc,
            input_fetch,
            input_decode,
            protected_write: false,
        }
    }

    /// Walks a here-doc: its own redirections join `floor`; its body, the
    /// pipeline it starts and the commands after it are returned.
    fn heredoc<'t>(
        &mut self,
        h: Node<'t>,
        src: &[u8],
        floor: &mut Vec<(BashRisk, String)>,
    ) -> HereDoc<'t> {
        let mut doc = HereDoc::default();
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
                (Some("right"), _) => doc.tail.push(part),
                (_, "pipeline") => doc.pipe = Some(part),
                (_, "heredoc_body") => {
                    doc.body_text = Some(text(part, src).to_string());
                    // Unquoted here-docs expand `$(…)` before the
                    // command reads them.
                    self.walk(part, src);
                }
                _ => {}
            }
        }
        doc
    }

    /// Raises the commands the redirections apply to (`direct`) to what the
    /// redirections risk; with no such command, notes the risks on the
    /// statement itself.
    fn apply_redirections(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        direct: &[usize],
        r: &Redirections<'_>,
        body_text: Option<&String>,
    ) {
        let floor = &r.floor;
        let (input_fetch, input_decode, protected_write) =
            (r.input_fetch, r.input_decode, r.protected_write);
        for &i in direct {
            for (risk, reason) in floor {
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
            if let Some(body) = body_text {
                self.segs[i].feeds = Some(body.clone());
            }
        }
        if direct.is_empty() && !floor.is_empty() {
            for (risk, reason) in floor {
                self.note(text(node, src), *risk, reason);
                if let Some(last) = self.segs.last_mut() {
                    last.seg.protected_write |= protected_write;
                }
            }
        }
    }
}

/// What the redirections of one `redirected_statement` mean for the
/// command they apply to.
struct Redirections<'t> {
    /// The risk of each redirection that writes or uses a substitution.
    floor: Vec<(BashRisk, String)>,
    heredoc: Option<Node<'t>>,
    /// The input comes from a substitution that fetches from the network.
    input_fetch: bool,
    /// The input comes from a substitution that decodes.
    input_decode: bool,
    /// A redirection (here-doc's included) writes to a protected path.
    protected_write: bool,
}

/// A here-doc's parts.
#[derive(Default)]
struct HereDoc<'t> {
    /// Commands after the here-doc's start (`cat <<EOF && make`).
    tail: Vec<Node<'t>>,
    /// The pipeline the here-doc's command feeds (`cat <<EOF | bash`).
    pipe: Option<Node<'t>>,
    body_text: Option<String>,
}
