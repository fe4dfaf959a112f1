//! Just enough HTTP/1.1 for the scripted server: read one request (Content-Length or
//! chunked body), write a plain response or a chunked body that can be cut mid-chunk.
//!
//! Owns framing only. Every response closes the connection, so there is no keep-alive,
//! pipelining or `Expect: 100-continue` support; it does not decide what to answer.

use std::collections::BTreeMap;
use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest request head (request line plus headers) accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest request body accepted; model requests with long histories stay far below.
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;
/// Bound on reading one request, so a silent client cannot hold a task forever.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One parsed HTTP request.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    /// Lowercase header name → value (repeated headers joined with `, `).
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
    /// Wall clock when the head was fully read.
    pub received_at_unix_ns: u128,
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Read one line ending in `\n`, without the terminator, failing past `limit` bytes.
async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R, limit: usize) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = (&mut *r)
        .take(limit as u64 + 1)
        .read_until(b'\n', &mut buf)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if !buf.ends_with(b"\n") {
        return Err(if n > limit {
            bad("request line or header too long")
        } else {
            io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed mid-line")
        });
    }
    buf.pop();
    if buf.ends_with(b"\r") {
        buf.pop();
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| bad("header is not UTF-8"))
}

/// Read one request. `Ok(None)` means the client closed before sending anything.
pub(crate) async fn read_request<R: AsyncBufRead + Unpin>(
    r: &mut R,
) -> io::Result<Option<Request>> {
    let Some(request_line) = read_line(r, MAX_HEAD_BYTES).await? else {
        return Ok(None);
    };
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(format!("malformed request line: {request_line:?}")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad(format!("unsupported HTTP version {version}")));
    }
    let (method, path) = (method.to_owned(), path.to_owned());

    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    let mut head_bytes = request_line.len();
    loop {
        let line = read_line(r, MAX_HEAD_BYTES).await?.ok_or_else(|| {
            io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed in headers")
        })?;
        if line.is_empty() {
            break;
        }
        head_bytes += line.len();
        if head_bytes > MAX_HEAD_BYTES {
            return Err(bad("request head too large"));
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad(format!("malformed header line: {line:?}")));
        };
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim().to_owned();
        headers
            .entry(name)
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let received_at_unix_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);

    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        read_chunked_body(r).await?
    } else if let Some(len) = headers.get("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| bad(format!("bad content-length {len:?}")))?;
        if len > MAX_BODY_BYTES {
            return Err(bad("request body too large"));
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body).await?;
        body
    } else {
        Vec::new()
    };
    Ok(Some(Request {
        method,
        path,
        headers,
        body,
        received_at_unix_ns,
    }))
}

async fn read_chunked_body<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(r, 1024)
            .await?
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "closed in chunk size"))?;
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| bad(format!("bad chunk size {line:?}")))?;
        if size == 0 {
            // Trailers, if any, end with an empty line.
            while let Some(trailer) = read_line(r, MAX_HEAD_BYTES).await? {
                if trailer.is_empty() {
                    break;
                }
            }
            return Ok(body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(bad("request body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..]).await?;
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf).await?;
        if &crlf != b"\r\n" {
            return Err(bad("chunk data not followed by CRLF"));
        }
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn head(status: u16, headers: &[(&str, String)]) -> String {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status));
    for (name, value) in headers {
        out.push_str(name);
        out.push_str(": ");
        out.push_str(value);
        out.push_str("\r\n");
    }
    out.push_str("connection: close\r\n\r\n");
    out
}

/// Write a complete response with a Content-Length body.
pub(crate) async fn write_full<W: AsyncWrite + Unpin>(
    w: &mut W,
    status: u16,
    content_type: &str,
    extra: &[(&str, String)],
    body: &[u8],
) -> io::Result<()> {
    let mut headers = vec![
        ("content-type", content_type.to_owned()),
        ("content-length", body.len().to_string()),
    ];
    headers.extend(extra.iter().cloned());
    w.write_all(head(status, &headers).as_bytes()).await?;
    w.write_all(body).await?;
    w.flush().await
}

/// Write the head of a Content-Length response and only the first part of its body,
/// so the client sees a body shorter than announced.
pub(crate) async fn write_truncated<W: AsyncWrite + Unpin>(
    w: &mut W,
    content_type: &str,
    body: &[u8],
    sent: usize,
) -> io::Result<()> {
    let headers = [
        ("content-type", content_type.to_owned()),
        ("content-length", body.len().to_string()),
    ];
    w.write_all(head(200, &headers).as_bytes()).await?;
    w.write_all(&body[..sent.min(body.len())]).await?;
    w.flush().await
}

/// A `Transfer-Encoding: chunked` response body being written.
pub(crate) struct ChunkedWriter<'a, W> {
    w: &'a mut W,
}

impl<'a, W: AsyncWrite + Unpin> ChunkedWriter<'a, W> {
    /// Send the head of a 200 chunked response.
    pub async fn start(w: &'a mut W, content_type: &str) -> io::Result<ChunkedWriter<'a, W>> {
        let headers = [
            ("content-type", content_type.to_owned()),
            ("cache-control", "no-cache".to_owned()),
            ("transfer-encoding", "chunked".to_owned()),
        ];
        w.write_all(head(200, &headers).as_bytes()).await?;
        w.flush().await?;
        Ok(ChunkedWriter { w })
    }

    /// Send `data` as one flushed chunk (nothing for empty data, which would end the body).
    pub async fn chunk(&mut self, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mut frame = format!("{:x}\r\n", data.len()).into_bytes();
        frame.extend_from_slice(data);
        frame.extend_from_slice(b"\r\n");
        self.w.write_all(&frame).await?;
        self.w.flush().await
    }

    /// Announce a chunk of `announced` bytes but send only `partial`, then stop writing:
    /// the caller closes the connection, leaving the body visibly incomplete.
    pub async fn cut(self, announced: usize, partial: &[u8]) -> io::Result<()> {
        let mut frame = format!("{:x}\r\n", announced.max(partial.len() + 1)).into_bytes();
        frame.extend_from_slice(partial);
        self.w.write_all(&frame).await?;
        self.w.flush().await?;
        self.w.shutdown().await
    }

    /// Send the terminating empty chunk.
    pub async fn finish(self) -> io::Result<()> {
        self.w.write_all(b"0\r\n\r\n").await?;
        self.w.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn parse(raw: &[u8]) -> io::Result<Option<Request>> {
        let mut r = BufReader::new(raw);
        read_request(&mut r).await
    }

    #[tokio::test]
    async fn reads_content_length_body_and_lowercases_headers() {
        let req = parse(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Api-Key: k\r\nContent-Length: 4\r\n\r\nabcdEXTRA")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(req.method, "POST");
        assert_eq!(req.path, "/v1/messages");
        assert_eq!(req.headers["x-api-key"], "k");
        assert_eq!(req.body, b"abcd");
        assert!(req.received_at_unix_ns > 0);
    }

    #[tokio::test]
    async fn reads_chunked_body_with_extensions_and_trailers() {
        let req = parse(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\n{\"a\r\n5\r\n\":1}\n\r\n0\r\nT: v\r\n\r\n")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(req.body, b"{\"a\":1}\n");
    }

    #[tokio::test]
    async fn rejects_garbage_and_reports_clean_close() {
        assert!(parse(b"").await.unwrap().is_none());
        assert!(parse(b"NONSENSE\r\n\r\n").await.is_err());
        assert!(parse(b"GET / HTTP/1.1\r\nno-colon\r\n\r\n").await.is_err());
        assert!(
            parse(b"GET / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc")
                .await
                .is_err()
        );
    }
}
