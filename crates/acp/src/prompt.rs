//! A `session/prompt`'s content blocks as the one text atto's turn takes: text as given,
//! resource links named, embedded text resources quoted whole. Images, audio and binary
//! resources are refused (the capabilities say atto takes none).

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

/// The prompt text, or why the prompt cannot be taken.
pub(crate) fn text(blocks: &[ContentBlock]) -> Result<String, String> {
    let mut parts: Vec<String> = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::ResourceLink(link) => {
                parts.push(format!("[{}]({})", link.name, link.uri));
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    parts.push(format!(
                        "<resource uri=\"{}\">\n{}\n</resource>",
                        r.uri, r.text
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    return Err(format!(
                        "atto takes text only; the binary resource {} was not sent",
                        r.uri
                    ));
                }
                _ => return Err("atto does not know this kind of embedded resource".to_owned()),
            },
            ContentBlock::Image(_) => {
                return Err("atto takes no images (promptCapabilities.image is false)".to_owned());
            }
            ContentBlock::Audio(_) => {
                return Err("atto takes no audio (promptCapabilities.audio is false)".to_owned());
            }
            _ => return Err("atto does not know this kind of content block".to_owned()),
        }
    }
    let text = parts.join("\n\n");
    if text.trim().is_empty() {
        return Err("the prompt is empty: send at least one text block".to_owned());
    }
    Ok(text)
}
