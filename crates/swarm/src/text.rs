//! Cutting text to a bound, for prompts, events and stored records.

/// `text` cut to at most `max` characters, with `…` when cut (for limits counted in
/// characters, like the learning store's).
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` cut to at most `max` bytes on a character boundary, with `…` when cut.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_count_characters_or_bytes_and_never_split_a_character() {
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("héllo", 3), "hé…");
        assert_eq!(bounded("héllo", 2), "h…");
        assert_eq!(bounded("abc", 3), "abc");
    }
}
