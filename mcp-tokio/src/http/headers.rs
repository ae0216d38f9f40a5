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

use hyper::header::HeaderMap;
use mcp_rs_core::wire::json::{JsonStr, RawJson};

/// The revision whose requests carry their own version and need no session.
pub const MODERN: &str = "2026-07-28";

/// The host of an authority (`host[:port]`, `[v6][:port]`), or `None` when it is not a
/// plain one (userinfo, a path, an empty or malformed host).
fn host_of(authority: &str) -> Option<&str> {
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
    let port_ok = port.is_none_or(|p| p.is_empty() || p.bytes().all(|b| b.is_ascii_digit()));
    (!host.is_empty() && port_ok).then_some(host)
}

/// Whether `host` (without port) is allowed: loopback names, or one of `extra`.
fn allowed(host: &str, extra: &[String]) -> bool {
    ["localhost", "127.0.0.1", "::1"]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(host))
        || extra.iter().any(|h| h.eq_ignore_ascii_case(host))
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
    let host = single(headers, "host")?.ok_or("missing Host header")?;
    if !host_of(host).is_some_and(|h| allowed(h, extra)) {
        return Err("Host not allowed".into());
    }
    if let Some(authority) = target {
        if !host_of(authority).is_some_and(|h| allowed(h, extra)) {
            return Err("request target host not allowed".into());
        }
    }
    if let Some(origin) = single(headers, "origin")? {
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .ok_or("Origin not allowed")?;
        if !host_of(authority).is_some_and(|h| allowed(h, extra)) {
            return Err("Origin not allowed".into());
        }
    }
    Ok(())
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

/// A string member of a JSON object, decoded (escapes resolved).
fn string_of(value: Option<RawJson<'_>>) -> Option<String> {
    value.and_then(|v| v.as_string()).map(|s| s.to_string())
}

/// The first member of `obj` named by each of `keys` (the first of duplicates wins, as the
/// core reads them), in one walk that stops once every key was seen.
fn first_members<'a, const N: usize>(
    obj: Option<RawJson<'a>>,
    keys: [&str; N],
) -> [Option<RawJson<'a>>; N] {
    let mut found = [None; N];
    let Some(members) = obj.and_then(|o| o.members()) else {
        return found;
    };
    let mut missing = N;
    for (key, value) in members {
        // Keys without escapes (all of them in practice) compare as plain text.
        let plain = key.as_borrowed();
        let same = |want: &str| match plain {
            Some(k) => k == want,
            None => key.eq_str(want),
        };
        if let Some(i) = (0..N).find(|&i| found[i].is_none() && same(keys[i])) {
            found[i] = Some(value);
            missing -= 1;
            if missing == 0 {
                break;
            }
        }
    }
    found
}

/// A 2026-07-28 request's headers against its body, read as the core reads it (the first of
/// duplicate members wins). `Err` names the first disagreement.
pub fn check_modern(headers: &HeaderMap, body: RawJson<'_>) -> Result<(), String> {
    check_modern_tool(headers, body).map(|_| ())
}

/// [`check_modern`], also returning the tool a `tools/call` names (what [`called_tool`]
/// returns): the body is walked once for both.
pub(crate) fn check_modern_tool<'a>(
    headers: &HeaderMap,
    body: RawJson<'a>,
) -> Result<Option<JsonStr<'a>>, String> {
    let [method, id, params] = first_members(Some(body), ["method", "id", "params"]);
    // Responses and notifications carry no routing headers worth checking.
    let Some(method) = method.and_then(|m| m.as_string()) else {
        return Ok(None);
    };
    // `params.name` (or `params.uri`) names the target; the walk stops once it and `_meta`
    // were seen.
    let target = if method.eq_str("tools/call") || method.eq_str("prompts/get") {
        Some("name")
    } else if method.eq_str("resources/read") {
        Some("uri")
    } else {
        None
    };
    let (named, meta) = match target {
        Some(key) => {
            let [named, meta] = first_members(params, [key, "_meta"]);
            (named, meta)
        }
        None => {
            let [meta] = first_members(params, ["_meta"]);
            (None, meta)
        }
    };
    let tool = named
        .and_then(|n| n.as_string())
        .filter(|_| method.eq_str("tools/call"));
    if id.is_none() {
        return Ok(tool);
    }
    match single(headers, "mcp-method")? {
        None => return Err("missing Mcp-Method header".into()),
        Some(m) if !method.eq_str(m) => {
            return Err(format!(
                "Mcp-Method header {m:?} does not match the body's method {:?}",
                method.to_string()
            ))
        }
        Some(_) => {}
    }
    let [version] = first_members(meta, ["io.modelcontextprotocol/protocolVersion"]);
    if let Some(v) = version.and_then(|v| v.as_string()) {
        if !v.eq_str(MODERN) {
            return Err(format!(
                "MCP-Protocol-Version header {MODERN:?} does not match the body's {:?}",
                v.to_string()
            ));
        }
    }
    let Some(target) = target else {
        return Ok(tool);
    };
    let want = named.and_then(|w| w.as_string());
    match (single(headers, "mcp-name")?, want) {
        (None, _) => Err("missing Mcp-Name header".into()),
        (Some(h), Some(b)) if b.eq_str(h) => Ok(tool),
        (Some(h), b) => Err(format!(
            "Mcp-Name header {h:?} does not match the body's {target} {:?}",
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
/// too, with the same value. The body is read as the core reads it, so a duplicated
/// argument cannot show the header one value and the tool another.
pub fn check_params(
    headers: &HeaderMap,
    body: RawJson<'_>,
    declared: &[(String, String)],
) -> Result<(), String> {
    if declared.is_empty() {
        return Ok(()); // most tools: nothing to compare, the body is not walked
    }
    let args = body.get("params").and_then(|p| p.get("arguments"));
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

/// The tool a `tools/call` body names, if it is one.
pub fn called_tool(body: RawJson<'_>) -> Option<String> {
    let [method, params] = first_members(Some(body), ["method", "params"]);
    if !method?.as_string()?.eq_str("tools/call") {
        return None;
    }
    let [name] = first_members(params, ["name"]);
    string_of(name)
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

    fn parsed(text: &str) -> RawJson<'_> {
        mcp_rs_core::wire::json::parse(text.as_bytes(), mcp_rs_core::wire::json::Limits::default())
            .unwrap()
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
        let call = parsed(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        let good = headers(&[("mcp-method", "tools/call"), ("mcp-name", "  t\t")]);
        assert_eq!(check_modern(&good, call), Ok(()));
        let upper = headers(&[("mcp-method", "TOOLS/CALL"), ("mcp-name", "t")]);
        assert!(check_modern(&upper, call).is_err());
        assert!(check_modern(&headers(&[("mcp-method", "tools/call")]), call).is_err());
        let other = headers(&[("mcp-method", "tools/call"), ("mcp-name", "u")]);
        assert!(check_modern(&other, call).is_err());
        let repeated = headers(&[
            ("mcp-method", "tools/call"),
            ("mcp-method", "tools/list"),
            ("mcp-name", "t"),
        ]);
        assert!(check_modern(&repeated, call).is_err());
        let list = parsed(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert!(check_modern(&headers(&[]), list).is_err());
        assert_eq!(
            check_modern(&headers(&[("mcp-method", "tools/list")]), list),
            Ok(())
        );
        let read = parsed(
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"a://b"}}"#,
        );
        let h = headers(&[("mcp-method", "resources/read"), ("mcp-name", "a://b")]);
        assert_eq!(check_modern(&h, read), Ok(()));
        let note = parsed(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        assert_eq!(check_modern(&headers(&[]), note), Ok(()));
        // The first of duplicate members, as the core reads it.
        let dup = parsed(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","method":"tools/list","params":{"name":"t"}}"#,
        );
        let h = headers(&[("mcp-method", "tools/call"), ("mcp-name", "t")]);
        assert_eq!(check_modern(&h, dup), Ok(()));
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
        let declared = vec![("region".to_string(), "Region".to_string())];
        let h = headers(&[("mcp-param-region", "good")]);
        // The first of duplicate members is what the tool sees, so it is what is checked.
        let smuggled = parsed(r#"{"params":{"arguments":{"region":"evil","region":"good"}}}"#);
        assert!(check_params(&h, smuggled, &declared).is_err());
        let fine = parsed(r#"{"params":{"arguments":{"region":"go\u006fd"}}}"#);
        assert_eq!(check_params(&h, fine, &declared), Ok(()));
        let twice = headers(&[("mcp-param-region", "good"), ("mcp-param-region", "evil")]);
        assert!(check_params(&twice, fine, &declared).is_err());
        let number = parsed(r#"{"params":{"arguments":{"region":12}}}"#);
        let h12 = headers(&[("mcp-param-region", "12")]);
        assert_eq!(check_params(&h12, number, &declared), Ok(()));
        let absent = parsed(r#"{"params":{"arguments":{}}}"#);
        assert_eq!(check_params(&headers(&[]), absent, &declared), Ok(()));
        assert!(check_params(&h, absent, &declared).is_err());
        let call = parsed(r#"{"method":"tools/call","params":{"name":"x\u0079"}}"#);
        assert_eq!(called_tool(call).as_deref(), Some("xy"));
    }
}
