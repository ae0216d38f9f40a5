//! HTTP-level checks that the Streamable HTTP transport defines on top of JSON-RPC:
//! DNS-rebinding protection (`Host`, `Origin`) and the 2026-07-28 request headers that
//! must agree with the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).
//!
//! | header | checked against | mismatch |
//! |---|---|---|
//! | `Host` | loopback names, or the configured hosts | 403 |
//! | `Origin` (when sent) | `http(s)://` + the same hosts | 403 |
//! | `MCP-Protocol-Version: 2026-07-28` | `params._meta["io.modelcontextprotocol/protocolVersion"]` | 400, -32020 |
//! | `Mcp-Method` | `method` (exact, case-sensitive) | 400, -32020 |
//! | `Mcp-Name` (OWS trimmed) | `params.name` (`tools/call`, `prompts/get`), `params.uri` (`resources/read`) | 400, -32020 |
//! | `Mcp-Param-<Name>` | `params.arguments[<param>]` of a tool parameter declaring `x-mcp-header: <Name>`; the value literal or `=?base64?<standard base64>?=` | 400, -32020 |
//!
//! The body side is never read here: it is the session's view of the body,
//! [`mcp_rs_core::wire::peek`], read with the session's scanner, depth bound and method
//! table, so that a header is compared with exactly what the session will act on, and a
//! body the session refuses is answered by the session alone.

use hyper::header::HeaderMap;
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::wire::peek::{Peek, Request};
use mcp_rs_core::wire::{authority, Eras, Method, Target};

/// The revision whose requests carry their own version and need no session.
pub const MODERN: &str = "2026-07-28";

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
pub fn is_modern(headers: &HeaderMap) -> bool {
    text(headers, "mcp-protocol-version") == Some(MODERN)
}

/// The request or notification a body is, as the session reads it; `None` for a
/// response, a batch (its elements are peeked one by one) or a body the session refuses.
fn message<'a, 'i>(body: &'a Peek<'i>) -> Option<&'a Request<'i>> {
    match body {
        Peek::Request(r) | Peek::Notification(r) => Some(r),
        _ => None,
    }
}

/// The tool a `tools/call` body names (`params.name`), read as the session reads it: the
/// tool the session would call.
pub(crate) fn called_tool<'i>(body: &Peek<'i>) -> Option<JsonStr<'i>> {
    message(body)
        .filter(|r| r.method() == Some(Method::ToolsCall))
        .and_then(|r| r.target)
}

/// A 2026-07-28 request's headers against its body, [`peek`]ed as the session reads it
/// (with the session's depth bound: see [`Config::max_depth`]). `Err` names the first
/// disagreement.
///
/// Only requests are checked: notifications and responses carry no routing headers worth
/// checking, batches are not 2026-07-28 messages, and a body the session refuses
/// ([`Peek::Malformed`]: not JSON, deeper than the bound, not JSON-RPC) names nothing, so
/// the session's own error answers it.
///
/// [`peek`]: mcp_rs_core::wire::peek::peek
/// [`Config::max_depth`]: mcp_rs_core::Config::max_depth
pub fn check_modern(headers: &HeaderMap, body: &Peek<'_>) -> Result<(), String> {
    let Peek::Request(request) = body else {
        return Ok(());
    };
    match single(headers, "mcp-method")? {
        None => return Err("missing Mcp-Method header".into()),
        Some(m) if !request.method.eq_str(m) => {
            return Err(format!(
                "Mcp-Method header {m:?} does not match the body's method {:?}",
                request.method.to_string()
            ))
        }
        Some(_) => {}
    }
    if let Some(v) = request.version.filter(|v| !v.eq_str(MODERN)) {
        return Err(format!(
            "MCP-Protocol-Version header {MODERN:?} does not match the body's {:?}",
            v.to_string()
        ));
    }
    // The method table says which parameter names the target. Legacy-only methods
    // (`resources/subscribe`) are no 2026-07-28 requests: the session refuses them.
    let key = match request.known.filter(|row| row.eras != Eras::Legacy) {
        Some(row) if row.target == Target::Name => "name",
        Some(row) if row.target == Target::Uri => "uri",
        Some(row) if row.target == Target::TaskId => "taskId",
        _ => return Ok(()),
    };
    match (single(headers, "mcp-name")?, request.target) {
        (None, _) => Err("missing Mcp-Name header".into()),
        (Some(h), Some(b)) if b.eq_str(h) => Ok(()),
        (Some(h), b) => Err(format!(
            "Mcp-Name header {h:?} does not match the body's {key} {:?}",
            b.map(|b| b.to_string())
        )),
    }
}

/// A `Mcp-Param-*` header value: literal, or `=?base64?...?=` (standard alphabet, padded).
pub fn param_value(raw: &str) -> Result<String, String> {
    use base64::Engine as _;
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        None => Ok(raw.to_owned()),
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| format!("header value {raw:?} is not valid base64 of UTF-8 text")),
    }
}

/// SEP-2243: a `tools/call` whose tool declares `x-mcp-header` parameters (`declared`:
/// `(argument, header name)`) carries each argument given in its `Mcp-Param-<Name>` header
/// too, with the same value. The arguments are those the session reads
/// ([`Request::arguments`]: the first of duplicate members), so a duplicated argument
/// cannot show the header one value and the tool another. A body that is no request or
/// notification (a batch, a response, a body the session refuses) is not checked.
pub fn check_params(
    headers: &HeaderMap,
    body: &Peek<'_>,
    declared: &[(String, String)],
) -> Result<(), String> {
    // Most tools declare nothing; a body that is no call (a batch, a body the session
    // refuses) has no arguments to compare.
    let Some(call) = message(body).filter(|_| !declared.is_empty()) else {
        return Ok(());
    };
    let args = call.arguments;
    for (param, header) in declared {
        let value = args.and_then(|a| a.get(param)).filter(|v| !v.is_null());
        let sent = single(headers, &format!("mcp-param-{header}"))?;
        match (value, sent) {
            (None, None) => {}
            (Some(_), None) => return Err(format!("missing Mcp-Param-{header} header")),
            (None, Some(_)) => {
                return Err(format!(
                    "Mcp-Param-{header} header without the argument {param:?}"
                ))
            }
            (Some(v), Some(raw)) => {
                let got = param_value(raw)?;
                let matches = match v.as_string() {
                    Some(s) => s.eq_str(&got),
                    None => v.as_str() == got,
                };
                if !matches {
                    return Err(format!(
                        "Mcp-Param-{header} header {got:?} does not match the argument {param:?}"
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;
    use mcp_rs_core::wire::json::Limits;
    use mcp_rs_core::wire::peek::peek;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    /// `text` as the session reads it, with the default depth bound.
    fn peeked(text: &str) -> Peek<'_> {
        peek(text.as_bytes(), Limits::default())
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
    fn modern_headers() {
        let call = peeked(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        let good = headers(&[("mcp-method", "tools/call"), ("mcp-name", "  t\t")]);
        assert_eq!(check_modern(&good, &call), Ok(()));
        let upper = headers(&[("mcp-method", "TOOLS/CALL"), ("mcp-name", "t")]);
        assert!(check_modern(&upper, &call).is_err());
        assert!(check_modern(&headers(&[("mcp-method", "tools/call")]), &call).is_err());
        let other = headers(&[("mcp-method", "tools/call"), ("mcp-name", "u")]);
        assert!(check_modern(&other, &call).is_err());
        let repeated = headers(&[
            ("mcp-method", "tools/call"),
            ("mcp-method", "tools/list"),
            ("mcp-name", "t"),
        ]);
        assert!(check_modern(&repeated, &call).is_err());
        let list = peeked(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert!(check_modern(&headers(&[]), &list).is_err());
        assert_eq!(
            check_modern(&headers(&[("mcp-method", "tools/list")]), &list),
            Ok(())
        );
        let read = peeked(
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"a://b"}}"#,
        );
        let h = headers(&[("mcp-method", "resources/read"), ("mcp-name", "a://b")]);
        assert_eq!(check_modern(&h, &read), Ok(()));
        let h = headers(&[("mcp-method", "resources/read"), ("mcp-name", "a://c")]);
        assert!(check_modern(&h, &read).is_err());
        let get = peeked(
            r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p","uri":"u"}}"#,
        );
        let h = headers(&[("mcp-method", "prompts/get"), ("mcp-name", "p")]);
        assert_eq!(check_modern(&h, &get), Ok(()));
        assert!(check_modern(&headers(&[("mcp-method", "prompts/get")]), &get).is_err());
        // A target that is not a string matches no header.
        let numbered =
            peeked(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#);
        let h = headers(&[("mcp-method", "tools/call"), ("mcp-name", "5")]);
        assert!(check_modern(&h, &numbered).is_err());
        // Escapes compare decoded, in the method, the target and the version alike.
        let escaped = peeked(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools\/call","params":{"name":"\u0074","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-2\u0038"}}}"#,
        );
        let h = headers(&[("mcp-method", "tools/call"), ("mcp-name", "t")]);
        assert_eq!(check_modern(&h, &escaped), Ok(()));
        // A body naming another revision than the header.
        let older = peeked(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}"#,
        );
        assert!(check_modern(&headers(&[("mcp-method", "tools/list")]), &older).is_err());
        // Unknown methods compare as sent and name no target.
        let unknown = peeked(r#"{"jsonrpc":"2.0","id":2,"method":"x/y","params":{"name":"n"}}"#);
        assert_eq!(
            check_modern(&headers(&[("mcp-method", "x/y")]), &unknown),
            Ok(())
        );
        // Legacy-only methods are no 2026-07-28 requests (the session refuses them): their
        // target is not asked for.
        let subscribe = peeked(
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"a://b"}}"#,
        );
        let h = headers(&[("mcp-method", "resources/subscribe")]);
        assert_eq!(check_modern(&h, &subscribe), Ok(()));
        let note = peeked(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        assert_eq!(check_modern(&headers(&[]), &note), Ok(()));
    }

    #[test]
    fn bodies_the_session_refuses_are_its_to_answer() {
        // Duplicate members: -32600 from the session, nothing for the headers to match.
        let dup = peeked(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","method":"tools/list","params":{"name":"t"}}"#,
        );
        assert!(matches!(dup, Peek::Malformed));
        assert_eq!(check_modern(&headers(&[]), &dup), Ok(()));
        for text in [
            "{",
            "[1,",
            r#"{"id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
        ] {
            let body = peeked(text);
            assert!(matches!(body, Peek::Malformed), "{text}");
            assert_eq!(check_modern(&headers(&[]), &body), Ok(()), "{text}");
            assert_eq!(called_tool(&body), None, "{text}");
        }
        // Deeper than the session's bound: malformed, whatever the headers say.
        let deep = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[[[1]]]}}}"#;
        let h = headers(&[("mcp-method", "tools/list"), ("mcp-name", "u")]);
        let shallow = peek(deep.as_bytes(), Limits { max_depth: 6 });
        assert!(check_modern(&h, &shallow).is_err());
        let refused = peek(deep.as_bytes(), Limits { max_depth: 5 });
        assert!(matches!(refused, Peek::Malformed));
        assert_eq!(check_modern(&h, &refused), Ok(()));
        let declared = vec![("a".to_string(), "A".to_string())];
        let sent = headers(&[("mcp-param-a", "1")]);
        assert!(check_params(&sent, &shallow, &declared).is_err());
        assert_eq!(check_params(&sent, &refused, &declared), Ok(()));
    }

    #[test]
    fn param_values() {
        assert_eq!(param_value("=?base64?SGVsbG8=?="), Ok("Hello".into()));
        assert_eq!(param_value("SGVsbG8="), Ok("SGVsbG8=".into()));
        assert_eq!(
            param_value("=?base64?SGVsbG8="),
            Ok("=?base64?SGVsbG8=".into())
        );
        assert!(param_value("=?base64?SGVsbG8?=").is_err());
        assert!(param_value("=?base64?SGVs!!!bG8=?=").is_err());
    }

    #[test]
    fn params_read_like_the_core() {
        let call = |arguments: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{arguments}}}}}"#
            )
        };
        let declared = vec![("region".to_string(), "Region".to_string())];
        let h = headers(&[("mcp-param-region", "good")]);
        // The first of duplicate members is what the tool sees, so it is what is checked.
        let smuggled = call(r#"{"region":"evil","region":"good"}"#);
        assert!(check_params(&h, &peeked(&smuggled), &declared).is_err());
        let fine = call(r#"{"region":"go\u006fd"}"#);
        assert_eq!(check_params(&h, &peeked(&fine), &declared), Ok(()));
        let twice = headers(&[("mcp-param-region", "good"), ("mcp-param-region", "evil")]);
        assert!(check_params(&twice, &peeked(&fine), &declared).is_err());
        let number = call(r#"{"region":12}"#);
        let h12 = headers(&[("mcp-param-region", "12")]);
        assert_eq!(check_params(&h12, &peeked(&number), &declared), Ok(()));
        let absent = call("{}");
        assert_eq!(
            check_params(&headers(&[]), &peeked(&absent), &declared),
            Ok(())
        );
        assert!(check_params(&h, &peeked(&absent), &declared).is_err());
        let null = call(r#"{"region":null}"#);
        assert_eq!(
            check_params(&headers(&[]), &peeked(&null), &declared),
            Ok(())
        );
        // Nothing declared: nothing to compare.
        assert_eq!(check_params(&h, &peeked(&absent), &[]), Ok(()));
    }

    #[test]
    fn called_tools() {
        let call =
            peeked(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x\u0079"}}"#);
        assert!(called_tool(&call).is_some_and(|t| t.eq_str("xy")));
        // A notification names its tool too (the scope and parameter checks see it).
        let note = peeked(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#);
        assert!(called_tool(&note).is_some_and(|t| t.eq_str("x")));
        let get =
            peeked(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x"}}"#);
        assert_eq!(called_tool(&get), None);
        let batch =
            peeked(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}]"#);
        assert_eq!(called_tool(&batch), None);
    }
}
