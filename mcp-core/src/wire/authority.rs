//! DNS-rebinding protection for HTTP transports: which `Host`, request-target authority and
//! `Origin` values name an allowed host. Both HTTP servers (mcp-tokio's on hyper,
//! mcp-embedded's on httparse) read the header values their own way (each refuses a repeated
//! `Host` or `Origin` itself) and decide here, so that they cannot disagree about a value.
//!
//! | value | accepted form | refused |
//! |---|---|---|
//! | `Host`, target authority | `host`, `host:port`, `[v6]`, `[v6]:port` (port: digits, may be empty) | userinfo (`@`), a path, query or fragment, `\`, an empty host, a non-digit port, text after `]` |
//! | `Origin` | `http://` or `https://` followed by an authority as above | any other scheme, `null` |
//! | host | `localhost`, `127.0.0.1`, `::1`, or one the caller allows (ASCII case ignored) | any other |
//!
//! ```
//! use mcp_rs_core::wire::authority::{check, host_of};
//!
//! assert_eq!(host_of("[::1]:3000"), Some("::1"));
//! assert_eq!(host_of("127.0.0.1:80@evil.example"), None);
//! let extra = |h: &str| h.eq_ignore_ascii_case("mcp.internal");
//! assert!(check(Some("mcp.internal:9"), None, None, extra).is_ok());
//! assert_eq!(check(Some("localhost"), None, Some("http://evil.example"), extra), Err("Origin not allowed"));
//! assert_eq!(check(None, None, None, extra), Err("missing Host header"));
//! ```

/// The hosts every server allows: the loopback names.
pub const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The host of an authority (`host[:port]`, `[v6][:port]`), or `None` when it is not a
/// plain one (userinfo, a path, an empty or malformed host, a port that is not digits).
pub fn host_of(authority: &str) -> Option<&str> {
    if authority.contains(['@', '/', '?', '#', '\\']) {
        return None;
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']')?;
            let port = match after {
                "" => None,
                a => Some(a.strip_prefix(':')?),
            };
            (host, port)
        }
        None => match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    let port_ok = port.is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit()));
    (!host.is_empty() && port_ok).then_some(host)
}

/// Whether `authority` names a loopback host or one `extra` allows.
pub fn allowed(authority: &str, extra: impl Fn(&str) -> bool) -> bool {
    host_of(authority)
        .is_some_and(|host| LOOPBACK.iter().any(|h| h.eq_ignore_ascii_case(host)) || extra(host))
}

/// The DNS-rebinding check of one request: `host` is the `Host` header's value, `target`
/// the authority of an absolute-form request target, `origin` the `Origin` header's value
/// (each `None` when absent). `Err` carries the reason for the 403's message.
pub fn check(
    host: Option<&str>,
    target: Option<&str>,
    origin: Option<&str>,
    extra: impl Fn(&str) -> bool,
) -> Result<(), &'static str> {
    let host = host.ok_or("missing Host header")?;
    if !allowed(host, &extra) {
        return Err("Host not allowed");
    }
    if target.is_some_and(|a| !allowed(a, &extra)) {
        return Err("request target host not allowed");
    }
    if let Some(origin) = origin {
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .ok_or("Origin not allowed")?;
        if !allowed(authority, &extra) {
            return Err("Origin not allowed");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let host = |h| check(Some(h), None, None, |_: &str| false);
        for ok in [
            "localhost",
            "localhost:8080",
            "localhost:",
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
            ":80",
            "127.0.0.1:80@evil.example",
            "localhost:x",
            "[::1]x",
            "[::1",
            "localhost/x",
            "localhost\\x",
        ] {
            assert!(host(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn targets_origins_and_extra_hosts() {
        let none = |_: &str| false;
        assert!(check(Some("localhost"), Some("127.0.0.1:80"), None, none).is_ok());
        assert_eq!(
            check(Some("localhost"), Some("evil.example"), None, none),
            Err("request target host not allowed")
        );
        for ok in ["http://localhost:5173", "https://[::1]"] {
            assert!(
                check(Some("localhost"), None, Some(ok), none).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "http://evil.example",
            "http://127.0.0.1:1@evil.example",
            "null",
            "ftp://localhost",
        ] {
            assert_eq!(
                check(Some("localhost"), None, Some(bad), none),
                Err("Origin not allowed"),
                "{bad}"
            );
        }
        let extra = |h: &str| h.eq_ignore_ascii_case("mcp.internal");
        assert!(check(
            Some("MCP.internal:9"),
            None,
            Some("https://mcp.internal"),
            extra
        )
        .is_ok());
        assert_eq!(check(None, None, None, extra), Err("missing Host header"));
    }
}
