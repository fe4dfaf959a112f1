//! Bounded capture of a command's output: the first and last `HALF` bytes, with a count
//! of what was dropped in between. Memory stays bounded however much a command prints.

use std::collections::VecDeque;

/// Bytes kept from the start and, separately, from the end of the output.
pub(crate) const HALF: usize = 15 * 1024;

/// Head plus rolling tail of a byte stream.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl Capture {
    /// Appends a chunk of output.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < HALF {
            let take = bytes.len().min(HALF - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= HALF {
            self.omitted += (self.tail.len() + bytes.len() - HALF) as u64;
            self.tail.clear();
            bytes = &bytes[bytes.len() - HALF..];
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(HALF);
        if overflow > 0 {
            self.tail.drain(..overflow);
            self.omitted += overflow as u64;
        }
        self.tail.extend(bytes);
    }

    /// Whether nothing was captured.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_empty()
    }

    /// The captured text, lossily decoded, with an omission marker when needed.
    pub(crate) fn render(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            out.push_str(&format!("\n[... {} bytes omitted ...]\n", self.omitted));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(a.len() + b.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_whole() {
        let mut c = Capture::default();
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.render(), "hello world");
    }

    #[test]
    fn keeps_head_and_tail_in_any_chunking() {
        let data: Vec<u8> = (0..100_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for chunk in [1usize, 7, 4096, 40_000, 100_000] {
            let mut c = Capture::default();
            for piece in data.chunks(chunk) {
                c.push(piece);
            }
            let expected = format!(
                "{}\n[... {} bytes omitted ...]\n{}",
                String::from_utf8_lossy(&data[..HALF]),
                100_000 - 2 * HALF,
                String::from_utf8_lossy(&data[100_000 - HALF..])
            );
            assert_eq!(c.render(), expected, "chunk size {chunk}");
        }
    }
}
