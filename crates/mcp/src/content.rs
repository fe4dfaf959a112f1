//! What an MCP tool's result becomes for the model: text as it is, images and audio as a
//! one-line note (the wires carry text tool results only), embedded resources by
//! reference with their text when they have some, resource links by reference, and
//! structured content as JSON when there is no text. The whole is capped here so a
//! hostile server cannot flood memory further down; the engine then truncates it to the
//! session's tool-output limit like any tool result.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Bytes of text kept from one result before the engine's own truncation.
pub const MAX_RESULT_BYTES: usize = 256 * 1024;

/// The result as text, and whether the server flagged it as an error.
pub fn render(result: &CallToolResult) -> (String, bool) {
    let mut parts: Vec<String> = Vec::with_capacity(result.content.len());
    for block in &result.content {
        parts.push(match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!(
                "[image: {}, {} bytes, not shown to the model]",
                i.mime_type,
                decoded_len(&i.data)
            ),
            ContentBlock::Audio(a) => format!(
                "[audio: {}, {} bytes, not shown to the model]",
                a.mime_type,
                decoded_len(&a.data)
            ),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    format!("[resource {uri}]\n{text}")
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => format!(
                    "[resource {uri}: {}, {} bytes, not shown]",
                    mime_type.as_deref().unwrap_or("binary"),
                    decoded_len(blob)
                ),
                _ => "[an embedded resource of a kind atto does not show]".to_owned(),
            },
            ContentBlock::ResourceLink(link) => {
                format!("[resource link {}: {}]", link.uri, link.name)
            }
            _ => "[content of a kind atto does not show]".to_owned(),
        });
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let mut text = parts.join("\n");
    if text.len() > MAX_RESULT_BYTES {
        let total = text.len();
        let mut cut = MAX_RESULT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(&format!(
            "\n[atto: the server's result was {total} bytes; only the first {cut} are kept]"
        ));
    }
    (text, result.is_error == Some(true))
}

/// Bytes a base64 text decodes to (without decoding it).
fn decoded_len(b64: &str) -> usize {
    let padding = b64.bytes().rev().take_while(|b| *b == b'=').count();
    (b64.len() / 4 * 3).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_images_and_resources() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::embedded_text("file:///a.txt", "inside"),
        ]);
        let (text, error) = render(&result);
        assert!(!error);
        assert_eq!(
            text,
            "hello\n[image: image/png, 5 bytes, not shown to the model]\n[resource file:///a.txt]\ninside"
        );
    }

    #[test]
    fn a_flood_is_capped_and_says_so() {
        let result =
            CallToolResult::error(vec![ContentBlock::text("x".repeat(MAX_RESULT_BYTES * 2))]);
        let (text, error) = render(&result);
        assert!(error);
        assert!(text.len() < MAX_RESULT_BYTES + 200);
        assert!(text.ends_with(&format!("only the first {MAX_RESULT_BYTES} are kept]")));
    }
}
