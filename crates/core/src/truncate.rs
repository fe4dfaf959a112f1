//! Cutting long text for the model and for display without splitting a character, and
//! keeping a long tool output whole in a file the model can page through.

use std::path::Path;

/// Where whole tool outputs are kept, relative to the workspace (ignored by git through
/// its own `.gitignore`).
pub(crate) const OUTPUTS_DIR: &str = ".atto/outputs";

/// Keeps the head and tail of `text` so that it fits in about `max` bytes, with a note
/// in the middle saying how much was left out.
pub(crate) fn head_and_tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let head_len = text.floor_char_boundary(max * 2 / 3);
    let tail_start = text.ceil_char_boundary(text.len() - (max - head_len).min(text.len()));
    let tail_start = tail_start.max(head_len);
    let omitted = tail_start - head_len;
    format!(
        "{}\n[... output truncated: {omitted} bytes omitted; narrow the request to see them ...]\n{}",
        &text[..head_len],
        &text[tail_start..]
    )
}

/// `text` cut to about `max` bytes for the model. A longer text is first written whole to
/// `.atto/outputs/<call id>.txt` in `workspace`, and the cut names that file so the model
/// can page through it with `read_file`; when it cannot be written, the cut says so.
pub(crate) fn for_model(text: &str, max: usize, workspace: &Path, call_id: &str) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let name: String = call_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let rel = format!("{OUTPUTS_DIR}/{name}.txt");
    let dir = workspace.join(OUTPUTS_DIR);
    let saved = std::fs::create_dir_all(&dir)
        .and_then(|()| {
            let ignore = dir.join(".gitignore");
            if ignore.exists() {
                Ok(())
            } else {
                std::fs::write(ignore, "*\n")
            }
        })
        .and_then(|()| std::fs::write(workspace.join(&rel), text));
    let cut = head_and_tail(text, max);
    match saved {
        Ok(()) => format!(
            "{cut}\n[atto: the whole output ({} bytes, {} lines) is in {rel}; page through it \
             with read_file and offset/limit rather than running this again]",
            text.len(),
            text.lines().count()
        ),
        Err(_) => cut,
    }
}

/// The first `max` bytes of `text` on one line, for event summaries.
pub(crate) fn summary(text: &str, max: usize) -> String {
    let cut = text.floor_char_boundary(max);
    let mut out = text[..cut].to_owned();
    if cut < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(head_and_tail("abc", 10), "abc");
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_says_what_was_cut() {
        let text = format!("{}{}", "a".repeat(1000), "z".repeat(1000));
        let out = head_and_tail(&text, 300);
        assert!(out.starts_with(&"a".repeat(200)));
        assert!(out.ends_with(&"z".repeat(100)));
        assert!(out.contains("1700 bytes omitted"), "{out}");
    }

    #[test]
    fn a_long_output_is_kept_whole_in_a_file_the_cut_names() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let out = for_model(&text, 500, dir.path(), "call/1");
        assert!(out.contains(".atto/outputs/call_1.txt"), "{out}");
        assert!(out.len() < 800, "{}", out.len());
        let kept = std::fs::read_to_string(dir.path().join(".atto/outputs/call_1.txt")).unwrap();
        assert_eq!(kept, text);
        let ignore = std::fs::read_to_string(dir.path().join(".atto/outputs/.gitignore")).unwrap();
        assert_eq!(ignore, "*\n");
        assert_eq!(for_model("short", 500, dir.path(), "c2"), "short");
    }

    #[test]
    fn never_splits_a_character() {
        let text = "é".repeat(500);
        let out = head_and_tail(&text, 101);
        assert!(out.contains("omitted"));
        assert_eq!(summary("ééé", 3), "é…");
    }
}
