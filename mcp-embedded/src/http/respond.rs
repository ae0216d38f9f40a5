//! Responses: status lines and headers written piece by piece to the socket (no head
//! buffer), JSON bodies with `Content-Length`, SSE streams in chunked transfer encoding (so
//! that the connection stays usable after the stream ends), and the JSON-RPC error bodies
//! of the refusals the transport makes itself.

use embedded_io_async::{Error as _, Write};
use mcp_rs_core::wire::json::JsonWriter;

use crate::ErrorKind;

/// The socket failed (or accepted nothing) while writing a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct WriteFailed(pub(super) ErrorKind);

/// `write_all` that reports a writer accepting zero bytes instead of panicking.
pub(super) async fn write_all<W: Write>(w: &mut W, mut bytes: &[u8]) -> Result<(), WriteFailed> {
    while !bytes.is_empty() {
        match w.write(bytes).await {
            Ok(0) => return Err(WriteFailed(ErrorKind::WriteZero)),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) => return Err(WriteFailed(e.kind())),
        }
    }
    Ok(())
}

/// The reason phrase of the statuses this server sends.
pub(super) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// `n` in decimal (or hexadecimal with `radix` 16) in `buf`.
pub(super) fn digits(mut n: usize, radix: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        let d = (n % radix) as u8;
        buf[i] = if d < 10 { b'0' + d } else { b'a' + d - 10 };
        n /= radix;
        if n == 0 || i == 0 {
            break;
        }
    }
    buf.get(i..).unwrap_or_default()
}

/// What the head of a response carries besides its status.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Extra<'a> {
    /// `Allow` (405).
    pub(super) allow: Option<&'static str>,
    /// `Mcp-Session-Id`.
    pub(super) session: Option<&'a [u8]>,
}

/// The status line and headers of a response. `body`: `Some(len)` for `Content-Length`,
/// `None` for a chunked SSE stream; `content_type` only when there is a body.
pub(super) async fn head<W: Write>(
    w: &mut W,
    status: u16,
    content_type: Option<&str>,
    body: Option<usize>,
    keep_alive: bool,
    extra: Extra<'_>,
) -> Result<(), WriteFailed> {
    let mut num = [0u8; 20];
    write_all(w, b"HTTP/1.1 ").await?;
    write_all(w, digits(usize::from(status), 10, &mut num)).await?;
    write_all(w, b" ").await?;
    write_all(w, reason(status).as_bytes()).await?;
    if let Some(ct) = content_type {
        write_all(w, b"\r\ncontent-type: ").await?;
        write_all(w, ct.as_bytes()).await?;
    }
    match body {
        Some(len) => {
            write_all(w, b"\r\ncontent-length: ").await?;
            write_all(w, digits(len, 10, &mut num)).await?;
        }
        None => {
            write_all(
                w,
                b"\r\ncache-control: no-cache\r\ntransfer-encoding: chunked",
            )
            .await?
        }
    }
    if let Some(allow) = extra.allow {
        write_all(w, b"\r\nallow: ").await?;
        write_all(w, allow.as_bytes()).await?;
    }
    if let Some(id) = extra.session {
        write_all(w, b"\r\nmcp-session-id: ").await?;
        write_all(w, id).await?;
    }
    if !keep_alive {
        write_all(w, b"\r\nconnection: close").await?;
    }
    write_all(w, b"\r\n\r\n").await?;
    w.flush().await.map_err(|e| WriteFailed(e.kind()))
}

/// A complete `application/json` response.
pub(super) async fn json<W: Write>(
    w: &mut W,
    status: u16,
    body: &[u8],
    keep_alive: bool,
    extra: Extra<'_>,
) -> Result<(), WriteFailed> {
    head(
        w,
        status,
        Some("application/json"),
        Some(body.len()),
        keep_alive,
        extra,
    )
    .await?;
    write_all(w, body).await?;
    w.flush().await.map_err(|e| WriteFailed(e.kind()))
}

/// A response without a body (202, 200 to a DELETE).
pub(super) async fn empty<W: Write>(
    w: &mut W,
    status: u16,
    keep_alive: bool,
    extra: Extra<'_>,
) -> Result<(), WriteFailed> {
    head(w, status, None, Some(0), keep_alive, extra).await
}

/// The head of an SSE stream.
pub(super) async fn sse_head<W: Write>(
    w: &mut W,
    keep_alive: bool,
    extra: Extra<'_>,
) -> Result<(), WriteFailed> {
    head(w, 200, Some("text/event-stream"), None, keep_alive, extra).await
}

const EVENT: &[u8] = b"event: message\ndata: ";

/// One SSE event carrying a JSON-RPC frame, as one chunk (`id` when resumable).
pub(super) async fn sse_event<W: Write>(
    w: &mut W,
    id: Option<&[u8]>,
    frame: &[u8],
) -> Result<(), WriteFailed> {
    let mut num = [0u8; 20];
    let id_len = id.map_or(0, |id| 4 + id.len() + 1);
    let len = EVENT.len() + id_len + frame.len() + 2;
    write_all(w, digits(len, 16, &mut num)).await?;
    write_all(w, b"\r\n").await?;
    if let Some(id) = id {
        write_all(w, b"id: ").await?;
        write_all(w, id).await?;
        write_all(w, b"\n").await?;
    }
    write_all(w, EVENT).await?;
    write_all(w, frame).await?;
    write_all(w, b"\n\n\r\n").await?;
    w.flush().await.map_err(|e| WriteFailed(e.kind()))
}

/// Client reconnection delay announced in priming events (SSE `retry`, milliseconds), as
/// mcp-tokio's.
const RETRY: &[u8] = b"retry: 500\ndata: \n\n";

/// The priming event of a resumable stream: its first id, how soon to reconnect, no data.
pub(super) async fn sse_priming<W: Write>(w: &mut W, id: &[u8]) -> Result<(), WriteFailed> {
    let mut num = [0u8; 20];
    let len = 4 + id.len() + 1 + RETRY.len();
    write_all(w, digits(len, 16, &mut num)).await?;
    write_all(w, b"\r\nid: ").await?;
    write_all(w, id).await?;
    write_all(w, b"\n").await?;
    write_all(w, RETRY).await?;
    write_all(w, b"\r\n").await?;
    w.flush().await.map_err(|e| WriteFailed(e.kind()))
}

/// The last chunk of an SSE stream.
pub(super) async fn sse_end<W: Write>(w: &mut W) -> Result<(), WriteFailed> {
    write_all(w, b"0\r\n\r\n").await?;
    w.flush().await.map_err(|e| WriteFailed(e.kind()))
}

/// Writes `{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}` into
/// `out` (the id left out when `None`); `None` if `out` is too small (it never is: the
/// transmit buffer holds at least `MIN_OUTPUT` bytes and ids are bounded by the core).
pub(super) fn rpc_error(
    out: &mut [u8],
    id: Option<&str>,
    code: i32,
    message: &str,
) -> Option<usize> {
    let mut w = JsonWriter::new(out);
    w.begin_object();
    w.key("jsonrpc");
    w.string("2.0");
    if let Some(id) = id {
        w.key("id");
        w.raw_value(id);
    }
    w.key("error");
    w.begin_object();
    w.key("code");
    w.i64(i64::from(code));
    w.key("message");
    w.string(message);
    w.end_object();
    w.end_object();
    w.finish().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn numbers() {
        let mut b = [0u8; 20];
        assert_eq!(digits(0, 10, &mut b), b"0");
        assert_eq!(digits(413, 10, &mut b), b"413");
        assert_eq!(digits(255, 16, &mut b), b"ff");
        assert_eq!(
            digits(usize::MAX, 10, &mut b).len(),
            usize::MAX.to_string().len()
        );
    }

    #[test]
    fn error_bodies() {
        let mut out = [0u8; 128];
        let n = rpc_error(&mut out, Some("7"), -32020, "Mcp-Method \"x\"").unwrap();
        assert_eq!(
            &out[..n],
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"Mcp-Method \"x\""}}"#
        );
        let n = rpc_error(&mut out, None, -32600, "Not found").unwrap();
        assert_eq!(
            &out[..n],
            br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Not found"}}"#
        );
    }
}
