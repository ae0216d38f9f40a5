//! Request heads: the request line and headers, parsed by `httparse` into a fixed array
//! of [`MAX_HEADERS`] headers, and what the server reads from them.

use httparse::{Header, Status};
use mcp_rs_core::wire::authority;

/// Most headers a request may carry; one more is answered 431.
pub const MAX_HEADERS: usize = 32;

/// Where the head parser stands on the bytes received so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Parsed {
    /// The head is `len` bytes long (the blank line included).
    Complete(usize),
    /// More bytes are needed.
    Partial,
    /// More than [`MAX_HEADERS`] headers.
    TooManyHeaders,
    /// Not an HTTP/1.x request head.
    Invalid,
}

/// Parses the head at the start of `buf` (nothing kept: see [`Head::parse`]).
pub(super) fn scan(buf: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(Status::Complete(n)) => Parsed::Complete(n),
        Ok(Status::Partial) => Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => Parsed::TooManyHeaders,
        Err(_) => Parsed::Invalid,
    }
}

/// The request method, as far as the server tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verb {
    Post,
    Get,
    Delete,
    Other,
}

/// A parsed head, borrowing the receive buffer and a header array.
#[derive(Debug)]
pub(super) struct Head<'h, 'b> {
    pub(super) verb: Verb,
    /// The request target's path (the query left out).
    pub(super) path: &'b str,
    /// The authority of an absolute-form target (`http://host/path`).
    pub(super) authority: Option<&'b str>,
    /// HTTP/1.`minor`.
    pub(super) minor: u8,
    pub(super) headers: &'h [Header<'b>],
}

/// A header sent more than once where one is allowed, or not visible ASCII.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct BadHeader(pub(super) &'static str);

impl<'h, 'b> Head<'h, 'b> {
    /// Parses a complete head (one [`scan`] reported [`Parsed::Complete`]).
    pub(super) fn parse(buf: &'b [u8], storage: &'h mut [Header<'b>; MAX_HEADERS]) -> Option<Self> {
        let mut req = httparse::Request::new(storage);
        if !matches!(req.parse(buf), Ok(Status::Complete(_))) {
            return None;
        }
        let verb = match req.method? {
            "POST" => Verb::Post,
            "GET" => Verb::Get,
            "DELETE" => Verb::Delete,
            _ => Verb::Other,
        };
        let target = req.path?;
        let (authority, path) = match target
            .strip_prefix("http://")
            .or_else(|| target.strip_prefix("https://"))
        {
            Some(rest) => {
                let at = rest.find(['/', '?']).unwrap_or(rest.len());
                let (authority, path) = rest.split_at(at);
                (Some(authority), if path.is_empty() { "/" } else { path })
            }
            None => (None, target),
        };
        let path = path.split(['?', '#']).next().unwrap_or(path);
        let minor = req.version?;
        Some(Head {
            verb,
            path,
            authority,
            minor,
            headers: req.headers,
        })
    }

    /// Every value of header `name` (ASCII case ignored).
    pub(super) fn all<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'b [u8]> + 's {
        self.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    }

    /// The one value of a header that must not repeat, optional white space trimmed:
    /// `Ok(None)` when absent, `Err` when repeated or not visible ASCII.
    pub(super) fn single(&self, name: &'static str) -> Result<Option<&'b str>, BadHeader> {
        let mut all = self.all(name);
        let Some(first) = all.next() else {
            return Ok(None);
        };
        if all.next().is_some() {
            return Err(BadHeader("a header that may appear once was repeated"));
        }
        text(first)
            .map(Some)
            .ok_or(BadHeader("a header is not visible ASCII"))
    }

    /// The first value of `name` as trimmed text (`None` when absent or not ASCII).
    pub(super) fn text(&self, name: &str) -> Option<&'b str> {
        self.all(name).next().and_then(text)
    }

    /// Whether the `Connection` header (or the HTTP version) lets the connection stay
    /// open after the response.
    pub(super) fn keep_alive(&self) -> bool {
        let has = |token: &str| {
            self.all("connection").any(|v| {
                v.split(|&b| b == b',')
                    .any(|t| trim(t).eq_ignore_ascii_case(token.as_bytes()))
            })
        };
        if self.minor == 0 {
            has("keep-alive")
        } else {
            !has("close")
        }
    }

    /// Whether `Accept` admits `media` (no `Accept` admits everything).
    pub(super) fn accepts(&self, media: &str) -> bool {
        let mut any = false;
        for v in self.all("accept") {
            any = true;
            for range in v.split(|&b| b == b',') {
                let r = range.split(|&b| b == b';').next().unwrap_or_default();
                let r = trim(r);
                if r.eq_ignore_ascii_case(media.as_bytes()) || r == b"*/*" {
                    return true;
                }
            }
        }
        !any
    }

    /// Whether `Content-Type` is `application/json` (parameters allowed).
    pub(super) fn is_json(&self) -> bool {
        self.text("content-type").is_some_and(|v| {
            let media = v.split(';').next().unwrap_or_default().trim();
            media.eq_ignore_ascii_case("application/json")
        })
    }

    /// Whether the client waits for `100 Continue` before sending its body.
    pub(super) fn expects_continue(&self) -> bool {
        self.text("expect")
            .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    }

    /// How the body is framed (RFC 9112 §6.3).
    pub(super) fn body(&self) -> Result<Framing, BadHeader> {
        let mut te = self.all("transfer-encoding");
        if let Some(first) = te.next() {
            if te.next().is_some() || !trim(first).eq_ignore_ascii_case(b"chunked") {
                return Err(BadHeader("only Transfer-Encoding: chunked is supported"));
            }
            if self.all("content-length").next().is_some() {
                return Err(BadHeader(
                    "Content-Length and Transfer-Encoding both present",
                ));
            }
            return Ok(Framing::Chunked);
        }
        let mut len = None;
        for v in self.all("content-length") {
            let n = parse_decimal(trim(v)).ok_or(BadHeader("invalid Content-Length"))?;
            if len.is_some_and(|l| l != n) {
                return Err(BadHeader("conflicting Content-Length headers"));
            }
            len = Some(n);
        }
        Ok(Framing::Length(len.unwrap_or(0)))
    }
}

/// How a request body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Framing {
    /// `Content-Length` (0 without one).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// `v` without surrounding spaces and tabs.
pub(super) fn trim(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|&b| b != b' ' && b != b'\t');
    let Some(start) = start else {
        return &[];
    };
    let end = v
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .unwrap_or(start);
    v.get(start..=end).unwrap_or_default()
}

/// A header value as trimmed visible-ASCII text.
fn text(v: &[u8]) -> Option<&str> {
    let v = trim(v);
    if v.iter().all(|&b| b == b'\t' || (b' '..=b'~').contains(&b)) {
        core::str::from_utf8(v).ok()
    } else {
        None
    }
}

/// A non-empty run of ASCII digits as a number (`None` on overflow).
fn parse_decimal(v: &[u8]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    v.iter().try_fold(0u64, |n, &b| {
        if b.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// DNS-rebinding protection: `Err(reason)` when `Host` (or the authority of an
/// absolute-form target) or `Origin` names a host that is not allowed, is ambiguous
/// (repeated, userinfo) or missing.
pub(super) fn check_host(head: &Head<'_, '_>, extra: &[&str]) -> Result<(), &'static str> {
    let host = head.single("host").map_err(|e| e.0)?;
    let origin = head.single("origin").map_err(|e| e.0)?;
    authority::check(host, head.authority, origin, |h| {
        extra.iter().any(|e| e.eq_ignore_ascii_case(h))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::string::String;

    fn with_head<R>(raw: &str, f: impl FnOnce(&Head<'_, '_>) -> R) -> R {
        let mut storage = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let head = Head::parse(raw.as_bytes(), &mut storage).expect("a complete head");
        f(&head)
    }

    #[test]
    fn partial_invalid_and_too_many() {
        assert_eq!(scan(b"POST /mcp HTTP/1.1\r\nHost: a"), Parsed::Partial);
        assert_eq!(scan(b"POST /mcp HTTP/1.1\r\n\r\n"), Parsed::Complete(22));
        assert_eq!(scan(b"POST /mcp HTTP/9.1\r\n\r\n"), Parsed::Invalid);
        let mut many = String::from("GET / HTTP/1.1\r\n");
        for i in 0..=MAX_HEADERS {
            many.push_str(&format!("x-{i}: 1\r\n"));
        }
        many.push_str("\r\n");
        assert_eq!(scan(many.as_bytes()), Parsed::TooManyHeaders);
    }

    #[test]
    fn framing() {
        let body = |raw: &str| with_head(raw, |h| h.body());
        assert_eq!(
            body("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n"),
            Ok(Framing::Length(12))
        );
        assert_eq!(body("POST / HTTP/1.1\r\n\r\n"), Ok(Framing::Length(0)));
        assert_eq!(
            body("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"),
            Ok(Framing::Chunked)
        );
        for bad in [
            "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n",
        ] {
            assert!(body(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hosts() {
        let host = |h: &str, extra: &[&str]| {
            let raw = format!("GET / HTTP/1.1\r\nHost: {h}\r\n\r\n");
            with_head(&raw, |head| check_host(head, extra))
        };
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:3000",
            "LOCALHOST",
        ] {
            assert!(host(ok, &[]).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example",
            "127.0.0.2",
            "127.0.0.1:80@evil.example",
            "localhost:x",
            "[::1]x",
        ] {
            assert!(host(bad, &[]).is_err(), "{bad}");
        }
        assert!(host("192.168.1.9:80", &["192.168.1.9"]).is_ok());
        let origin = |o: &str| {
            let raw = format!("GET / HTTP/1.1\r\nHost: localhost\r\nOrigin: {o}\r\n\r\n");
            with_head(&raw, |head| check_host(head, &[]))
        };
        assert!(origin("http://localhost:5173").is_ok());
        assert!(origin("http://evil.example").is_err());
        assert!(origin("null").is_err());
        assert!(with_head("GET / HTTP/1.1\r\n\r\n", |h| check_host(h, &[])).is_err());
        assert!(with_head(
            "GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil\r\n\r\n",
            |h| { check_host(h, &[]) }
        )
        .is_err());
        assert!(with_head(
            "GET http://evil.example/mcp HTTP/1.1\r\nHost: localhost\r\n\r\n",
            |h| { check_host(h, &[]) }
        )
        .is_err());
    }

    #[test]
    fn connection_accept_and_type() {
        with_head("GET /mcp?x=1 HTTP/1.1\r\nConnection: Close\r\n\r\n", |h| {
            assert!(!h.keep_alive());
            assert_eq!(h.path, "/mcp");
        });
        with_head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", |h| {
            assert!(h.keep_alive())
        });
        with_head("GET / HTTP/1.0\r\n\r\n", |h| assert!(!h.keep_alive()));
        with_head(
            "POST / HTTP/1.1\r\nAccept: application/json;q=0.9, text/event-stream\r\nContent-Type: application/json; charset=utf-8\r\n\r\n",
            |h| {
                assert!(h.accepts("text/event-stream") && h.accepts("application/json"));
                assert!(h.is_json());
            },
        );
        with_head("POST / HTTP/1.1\r\nAccept: application/json\r\n\r\n", |h| {
            assert!(!h.accepts("text/event-stream"))
        });
    }
}
