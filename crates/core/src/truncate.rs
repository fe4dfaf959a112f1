//! Cutting long text for the model and for display without splitting a character.

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
    fn never_splits_a_character() {
        let text = "é".repeat(500);
        let out = head_and_tail(&text, 101);
        assert!(out.contains("omitted"));
        assert_eq!(summary("ééé", 3), "é…");
    }
}
