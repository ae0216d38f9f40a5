//! The 2026-07-28 request headers that must agree with the body, compared with the
//! session's own view of the body ([`mcp_rs_core::wire::peek`]: its scanner, depth bound
//! and method table), so that a header is checked against exactly what the session acts on.
//!
//! | header | checked against | mismatch |
//! |---|---|---|
//! | `Mcp-Method` | `method` (exact, case-sensitive) | 400, -32020 |
//! | `MCP-Protocol-Version: 2026-07-28` | `params._meta["io.modelcontextprotocol/protocolVersion"]` | 400, -32020 |
//! | `Mcp-Name` (OWS trimmed) | `params.name` (`tools/call`, `prompts/get`), `params.uri` (`resources/read`) | 400, -32020 |
//! | `Mcp-Param-<Name>` | `params.arguments[<param>]` of a tool parameter declaring `x-mcp-header: <Name>`; literal or `=?base64?…?=` (decoded text at most [`MAX_PARAM_HEADER`] bytes) | 400, -32020 |

use mcp_rs_core::client::headers::{param_headers, HeaderMark, PREFIX};
use mcp_rs_core::wire::json::{parse, Limits, RawJson};
use mcp_rs_core::wire::peek::{Peek, Request};
use mcp_rs_core::wire::{Eras, Method, Target};
use mcp_rs_core::ServerHandler;

use super::head::Head;

/// The revision whose requests carry their own version and need no session.
pub const MODERN: &str = "2026-07-28";

/// Longest decoded `=?base64?…?=` value of a `Mcp-Param-*` header; a longer one is a
/// mismatch.
pub const MAX_PARAM_HEADER: usize = 256;

/// A 2026-07-28 request's headers against its body. `Err` names the first disagreement.
/// Only requests are checked (a notification, a response or a body the session refuses
/// names nothing worth checking: the session's own error answers it).
pub(super) fn check_modern(head: &Head<'_, '_>, body: &Peek<'_>) -> Result<(), &'static str> {
    let Peek::Request(request) = body else {
        return Ok(());
    };
    match head.single("mcp-method").map_err(|e| e.0)? {
        None => return Err("missing Mcp-Method header"),
        Some(m) if !request.method.eq_str(m) => {
            return Err("Mcp-Method header does not match the body's method")
        }
        Some(_) => {}
    }
    if request.version.is_some_and(|v| !v.eq_str(MODERN)) {
        return Err("MCP-Protocol-Version header does not match the body's protocolVersion");
    }
    let named = request
        .known
        .filter(|row| row.eras != Eras::Legacy)
        .is_some_and(|row| matches!(row.target, Target::Name | Target::Uri));
    if !named {
        return Ok(());
    }
    match (head.single("mcp-name").map_err(|e| e.0)?, request.target) {
        (None, _) => Err("missing Mcp-Name header"),
        (Some(h), Some(b)) if b.eq_str(h) => Ok(()),
        (Some(_), _) => Err("Mcp-Name header does not match the body's name or uri"),
    }
}

/// SEP-2243: a `tools/call` of a tool whose `inputSchema` marks parameters with
/// `x-mcp-header` carries each such argument in its `Mcp-Param-<Name>` header too.
pub(super) fn check_params<S: ServerHandler + ?Sized>(
    head: &Head<'_, '_>,
    body: &Peek<'_>,
    server: &mut S,
    limits: Limits,
) -> Result<(), &'static str> {
    let Peek::Request(call) = body else {
        return Ok(());
    };
    if call.method() != Some(Method::ToolsCall) {
        return Ok(());
    }
    let (Some(name), Some(tools)) = (call.target, server.tools()) else {
        return Ok(());
    };
    let Some(tool) = (0..tools.len())
        .filter_map(|i| tools.get(i))
        .find(|t| name.eq_str(t.name))
    else {
        return Ok(());
    };
    let Ok(schema) = parse(tool.input_schema.as_bytes(), limits) else {
        return Ok(());
    };
    // A schema whose marks break the rules declares nothing a client would send.
    let Ok(marks) = param_headers(schema) else {
        return Ok(());
    };
    for mark in marks {
        check_param(head, call, mark)?;
    }
    Ok(())
}

fn check_param(
    head: &Head<'_, '_>,
    call: &Request<'_>,
    mark: HeaderMark<'_>,
) -> Result<(), &'static str> {
    let value = argument(call.arguments, mark).filter(|v| !v.is_null());
    let header = mark.header.raw();
    let mut sent = head.headers.iter().filter(|h| {
        h.name.len() == PREFIX.len() + header.len()
            && h.name
                .get(..PREFIX.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(PREFIX))
            && h.name
                .get(PREFIX.len()..)
                .is_some_and(|n| n.eq_ignore_ascii_case(header))
    });
    let first = sent.next();
    if sent.next().is_some() {
        return Err("a Mcp-Param header was sent more than once");
    }
    match (value, first) {
        (None, None) => Ok(()),
        (Some(_), None) => Err("missing Mcp-Param header for an x-mcp-header argument"),
        (None, Some(_)) => Err("Mcp-Param header without its argument"),
        (Some(v), Some(h)) => {
            let raw = core::str::from_utf8(super::head::trim(h.value))
                .map_err(|_| "Mcp-Param header is not valid text")?;
            let mut decoded = [0u8; MAX_PARAM_HEADER];
            let got = param_value(raw, &mut decoded)?;
            let matches = match v.as_string() {
                Some(s) => s.eq_str(got),
                None => v.as_str() == got,
            };
            if matches {
                Ok(())
            } else {
                Err("Mcp-Param header does not match its argument")
            }
        }
    }
}

/// The call's argument a mark names (the first of duplicate members, as the session
/// reads it).
fn argument<'i>(args: Option<RawJson<'i>>, mark: HeaderMark<'_>) -> Option<RawJson<'i>> {
    args?
        .members()?
        .find(|(k, _)| match mark.property.as_borrowed() {
            Some(p) => k.eq_str(p),
            None => k.raw() == mark.property.raw(),
        })
        .map(|(_, v)| v)
}

/// A `Mcp-Param-*` value: literal, or `=?base64?...?=` (standard alphabet, padded)
/// decoded into `buf`.
fn param_value<'a>(
    raw: &'a str,
    buf: &'a mut [u8; MAX_PARAM_HEADER],
) -> Result<&'a str, &'static str> {
    let Some(encoded) = raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    else {
        return Ok(raw);
    };
    let bad = "Mcp-Param header is not valid base64 of UTF-8 text";
    let n = base64_decode(encoded.as_bytes(), buf).ok_or(bad)?;
    core::str::from_utf8(buf.get(..n).unwrap_or_default()).map_err(|_| bad)
}

/// Standard, padded base64 into `out`; `None` when invalid or too long.
fn base64_decode(input: &[u8], out: &mut [u8]) -> Option<usize> {
    fn sextet(b: u8) -> Option<u32> {
        Some(u32::from(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    }
    if input.len() % 4 != 0 {
        return None;
    }
    let mut n = 0;
    let quads = input.len() / 4;
    for (i, quad) in input.chunks_exact(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&b| b == b'=').count();
        if pad > 2 || (pad > 0 && i + 1 != quads) {
            return None;
        }
        let mut v = 0u32;
        for &b in quad.get(..4 - pad)? {
            v = (v << 6) | sextet(b)?;
        }
        v <<= 6 * pad as u32;
        let bytes = v.to_be_bytes();
        for &b in bytes.get(1..4 - pad)? {
            *out.get_mut(n)? = b;
            n += 1;
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_rs_core::wire::peek::peek;

    fn with<R>(raw: &str, f: impl FnOnce(&Head<'_, '_>) -> R) -> R {
        let mut storage = [httparse::EMPTY_HEADER; super::super::head::MAX_HEADERS];
        let head = Head::parse(raw.as_bytes(), &mut storage).unwrap();
        f(&head)
    }

    #[test]
    fn base64() {
        let mut out = [0u8; 16];
        assert_eq!(base64_decode(b"SGk=", &mut out), Some(2));
        assert_eq!(&out[..2], b"Hi");
        assert_eq!(base64_decode(b"SGVsbG8h", &mut out), Some(6));
        assert_eq!(&out[..6], b"Hello!");
        assert_eq!(base64_decode(b"SGk", &mut out), None);
        assert_eq!(base64_decode(b"S=k=", &mut out), None);
        assert_eq!(base64_decode(b"SGk=SGk=", &mut out), None);
        assert_eq!(base64_decode(b"SGVsbG8hSGVsbG8hSGVsbG8h", &mut out), None);
    }

    #[test]
    fn modern_headers() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let call = peek(body, Limits::default());
        let ok = "POST / HTTP/1.1\r\nMcp-Method: tools/call\r\nMcp-Name:  t\t\r\n\r\n";
        assert_eq!(with(ok, |h| check_modern(h, &call)), Ok(()));
        for bad in [
            "POST / HTTP/1.1\r\nMcp-Method: TOOLS/CALL\r\nMcp-Name: t\r\n\r\n",
            "POST / HTTP/1.1\r\nMcp-Method: tools/call\r\n\r\n",
            "POST / HTTP/1.1\r\nMcp-Method: tools/call\r\nMcp-Name: u\r\n\r\n",
            "POST / HTTP/1.1\r\nMcp-Name: t\r\n\r\n",
            "POST / HTTP/1.1\r\nMcp-Method: tools/call\r\nMcp-Method: tools/call\r\nMcp-Name: t\r\n\r\n",
        ] {
            assert!(with(bad, |h| check_modern(h, &call)).is_err(), "{bad}");
        }
        let list = peek(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            Limits::default(),
        );
        assert_eq!(
            with("POST / HTTP/1.1\r\nMcp-Method: tools/list\r\n\r\n", |h| {
                check_modern(h, &list)
            }),
            Ok(())
        );
    }
}
