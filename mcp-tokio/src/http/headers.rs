//! HTTP-level checks that the Streamable HTTP transport defines on top of JSON-RPC, read
//! from hyper's [`HeaderMap`] in place and decided in mcp-core, which mcp-embedded's server
//! shares: DNS-rebinding protection ([`mcp_rs_core::wire::authority`]: `Host`, `Origin`,
//! answered 403) and the 2026-07-28 request headers that must agree with the body
//! ([`mcp_rs_core::wire::headers`]: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`, answered 400 with -32020; its module docs hold the table).

use hyper::header::HeaderMap;
use mcp_rs_core::wire::{authority, headers};

/// The revision whose requests carry their own version and need no session.
pub use mcp_rs_core::wire::headers::MODERN;

/// hyper's headers as the core reads them (every value of every name, in place).
pub struct Hyper<'a>(pub &'a HeaderMap);

impl headers::Headers for Hyper<'_> {
    fn each(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.0
            .iter()
            .map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes()))
    }
}

/// The one value of a header that must not repeat: `Ok(None)` when absent, `Err` when sent
/// more than once or not visible ASCII.
pub fn single<'h>(headers: &'h HeaderMap, name: &str) -> Result<Option<&'h str>, String> {
    let mut all = headers.get_all(name).iter();
    let Some(first) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err(format!("{name} header sent more than once"));
    }
    let value = first
        .to_str()
        .map_err(|_| format!("{name} header is not visible ASCII"))?;
    Ok(Some(value.trim_matches(|c| c == ' ' || c == '\t')))
}

/// DNS-rebinding protection: `Err(reason)` when `Host` (or the authority of an
/// absolute-form target) or `Origin` names a host that is not allowed, is ambiguous
/// (repeated, userinfo) or missing.
pub fn check_host(
    headers: &HeaderMap,
    target: Option<&str>,
    extra: &[String],
) -> Result<(), String> {
    let host = single(headers, "host")?;
    let origin = single(headers, "origin")?;
    authority::check(host, target, origin, |h| {
        extra.iter().any(|e| e.eq_ignore_ascii_case(h))
    })
    .map_err(String::from)
}

/// A header's value as text, surrounding optional white space removed (first value).
pub fn text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_matches(|c| c == ' ' || c == '\t'))
}

/// Whether the request declares the stateless revision.
pub fn is_modern(map: &HeaderMap) -> bool {
    headers::declares_modern(&Hyper(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn hosts() {
        let host = |h| check_host(&headers(&[("host", h)]), None, &[]);
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:3000",
            "[::1]",
            "LOCALHOST",
        ] {
            assert!(host(ok).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "127.0.0.2",
            "[::2]:1",
            "",
            "127.0.0.1:80@evil.example",
            "localhost:x",
            "[::1]x",
            "localhost/x",
        ] {
            assert!(host(bad).is_err(), "{bad}");
        }
        let extra = vec!["mcp.internal".to_string()];
        assert!(check_host(&headers(&[("host", "mcp.internal:9")]), None, &extra).is_ok());
        let origin = |o| check_host(&headers(&[("host", "localhost"), ("origin", o)]), None, &[]);
        assert!(origin("http://localhost:5173").is_ok());
        assert!(origin("https://[::1]").is_ok());
        assert!(origin("http://evil.example").is_err());
        assert!(origin("http://127.0.0.1:1@evil.example").is_err());
        assert!(origin("null").is_err());
        let local = headers(&[("host", "localhost")]);
        assert!(check_host(&local, Some("evil.example"), &[]).is_err());
        assert!(check_host(&local, Some("127.0.0.1:80"), &[]).is_ok());
        let twice = headers(&[("host", "localhost"), ("host", "evil.example")]);
        assert!(check_host(&twice, None, &[]).is_err());
        let two_origins = headers(&[
            ("host", "localhost"),
            ("origin", "http://localhost"),
            ("origin", "http://evil.example"),
        ]);
        assert!(check_host(&two_origins, None, &[]).is_err());
        assert!(check_host(&HeaderMap::new(), None, &[]).is_err());
    }

    #[test]
    fn hyper_headers_reach_the_core() {
        use mcp_rs_core::wire::headers::{check_request, HeaderError};
        use mcp_rs_core::wire::json::Limits;
        use mcp_rs_core::wire::peek::peek;
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        let body = peek(body, Limits::default());
        let good = headers(&[("mcp-method", "tools/call"), ("mcp-name", "  t\t")]);
        assert_eq!(check_request(&Hyper(&good), &body), Ok(()));
        let twice = headers(&[
            ("mcp-method", "tools/call"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "t"),
        ]);
        let refused = check_request(&Hyper(&twice), &body).map_err(|r| r.error);
        assert_eq!(refused, Err(HeaderError::Repeated));
        assert!(is_modern(&headers(&[(
            "mcp-protocol-version",
            "2026-07-28"
        )])));
        assert!(!is_modern(&headers(&[(
            "mcp-protocol-version",
            "2025-11-25"
        )])));
    }
}
