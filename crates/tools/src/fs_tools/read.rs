//! `read_file`: a window of a text file with `cat -n` style line numbers.
//!
//! Guards against binary files, huge files read whole, and very long lines; says how to
//! continue when more lines remain. Does not interpret encodings beyond lossy UTF-8.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use atto_protocol::{DangerLevel, ToolKind};
use serde::Deserialize;
use serde_json::json;

use super::{existing_file, human_bytes};
use crate::beneath::{Target, Workspace};
use crate::support::{blocking, lenient_u64, parse_args, target, title_arg, truncate_line};
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};

const DEFAULT_LIMIT: u64 = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// Files larger than this need an explicit offset or limit.
const MAX_WHOLE_FILE: u64 = 10 * 1024 * 1024;
/// The binary check looks for a NUL byte in this many leading bytes.
const BINARY_SNIFF: usize = 8 * 1024;
/// Stop adding lines once the output passes this many bytes.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Bytes scanned after the window to count remaining lines.
const COUNT_REST_LIMIT: u64 = 16 * 1024 * 1024;

/// Reads a text file with line numbers.
#[derive(Debug, Default)]
pub struct ReadFileTool;

#[derive(Deserialize)]
struct Args {
    path: String,
    #[serde(default, deserialize_with = "lenient_u64")]
    offset: Option<u64>,
    #[serde(default, deserialize_with = "lenient_u64")]
    limit: Option<u64>,
}

impl Tool for ReadFileTool {
    fn name(&self) -> &'static str {
        crate::names::READ_FILE
    }

    fn description(&self) -> &'static str {
        "Read a text file; lines are numbered. Use offset/limit for large files."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace"},
                "offset": {"type": "integer", "description": "First line to read (1-based)"},
                "limit": {"type": "integer", "description": "Number of lines (default 2000)"},
                "pending": {"type": "boolean", "description": "Plan mode: the file with its queued changes applied"}
            },
            "required": ["path"]
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }

    fn mutates(&self, _args: &serde_json::Value) -> bool {
        false
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn read_only(&self, _args: &serde_json::Value) -> bool {
        true
    }

    fn target(&self, args: &serde_json::Value) -> Option<String> {
        target(args, "path")
    }

    fn title(&self, args: &serde_json::Value) -> String {
        format!("Read {}", title_arg(args, "path"))
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            if args.limit == Some(0) {
                return Err(ToolError::InvalidArguments(
                    "limit must be at least 1".into(),
                ));
            }
            let root = Workspace::for_ctx(ctx)?;
            blocking(ctx, move || {
                read(root.path(), &root.resolve(&args.path)?, &args)
            })
            .await
        })
    }
}

fn read(ws: &Path, target: &Target, args: &Args) -> Result<ToolOutput, ToolError> {
    let rel = target.rel().to_owned();
    let size = existing_file(ws, target)?;
    if size > MAX_WHOLE_FILE && args.offset.is_none() && args.limit.is_none() {
        return Err(ToolError::TooLarge { path: rel, size });
    }
    let io_err = |source| ToolError::Io {
        action: "read",
        path: rel.clone(),
        source,
    };
    let mut reader = BufReader::with_capacity(64 * 1024, target.open_read().map_err(io_err)?);
    let head = reader.fill_buf().map_err(io_err)?;
    if head[..head.len().min(BINARY_SNIFF)].contains(&0) {
        return Err(ToolError::Binary { path: rel, size });
    }

    let first = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    let mut out = String::new();
    let mut line_no: u64 = 0;
    let mut shown: u64 = 0;
    let mut buf = Vec::new();
    let mut stopped_for_size = false;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io_err)? == 0 {
            break;
        }
        line_no += 1;
        if line_no < first {
            continue;
        }
        if shown == limit || out.len() >= MAX_OUTPUT_BYTES {
            stopped_for_size = shown < limit;
            line_no -= 1;
            break;
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        out.push_str(&format!(
            "{line_no:>6}\t{}\n",
            truncate_line(text, MAX_LINE_CHARS)
        ));
        shown += 1;
    }
    if shown == 0 {
        let total = line_no;
        return if total == 0 {
            Ok(ToolOutput::text(format!("({rel} is empty)")))
        } else {
            Err(ToolError::InvalidArguments(format!(
                "offset {first} is past the end of {rel}, which has {total} lines"
            )))
        };
    }
    let last = first + shown - 1;
    // `buf` holds the first line after the window when we stopped early.
    if !buf.is_empty() {
        let rest = 1 + count_lines(&mut reader, COUNT_REST_LIMIT).map_err(io_err)?;
        let why = if stopped_for_size {
            format!(
                " (output capped at {})",
                human_bytes(MAX_OUTPUT_BYTES as u64)
            )
        } else {
            String::new()
        };
        let more = match rest {
            Count::Exact(n) => format!("{n} more lines"),
            Count::AtLeast(n) => format!("at least {n} more lines"),
        };
        out.push_str(&format!(
            "\n({more}{why}; use offset={} to continue)\n",
            last + 1
        ));
    }
    Ok(ToolOutput::text(out))
}

enum Count {
    Exact(u64),
    AtLeast(u64),
}

impl std::ops::Add<Count> for u64 {
    type Output = Count;
    fn add(self, rhs: Count) -> Count {
        match rhs {
            Count::Exact(n) => Count::Exact(self + n),
            Count::AtLeast(n) => Count::AtLeast(self + n),
        }
    }
}

/// Counts the lines left in `reader` (a final line without a newline counts), scanning
/// at most `budget` bytes.
fn count_lines(reader: &mut impl Read, budget: u64) -> std::io::Result<Count> {
    let mut chunk = vec![0u8; 64 * 1024];
    let mut newlines = 0u64;
    let mut scanned = 0u64;
    let mut last_byte = b'\n';
    loop {
        let n = reader.read(&mut chunk)?;
        if n == 0 {
            let unterminated = u64::from(scanned > 0 && last_byte != b'\n');
            return Ok(Count::Exact(newlines + unterminated));
        }
        newlines += chunk[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last_byte = chunk[n - 1];
        scanned += n as u64;
        if scanned >= budget {
            return Ok(Count::AtLeast(newlines));
        }
    }
}
