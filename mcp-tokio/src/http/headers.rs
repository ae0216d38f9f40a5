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
use serde_json::Value;

/// The revision whose requests carry their own version and need no session.
pub const MODERN: &str = "2026-07-28";

/// The host part of a `Host` header value or an origin's authority (port removed).
fn host_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        // [::1]:8080
        return rest.split(']').next().map_or("", |h| h);
    }
    authority.split(':').next().unwrap_or("")
}

/// Whether `host` (without port) is allowed: loopback names, or one of `extra`.
fn allowed(host: &str, extra: &[String]) -> bool {
    let host = host.to_ascii_lowercase();
    matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1")
        || extra.iter().any(|h| h.eq_ignore_ascii_case(&host))
}

/// DNS-rebinding protection: `Err(reason)` when `Host` or `Origin` names a host that is
/// not allowed.
pub fn check_host(headers: &HeaderMap, extra: &[String]) -> Result<(), &'static str> {
    let host = headers
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or("missing or unreadable Host header")?;
    if !allowed(host_of(host), extra) {
        return Err("Host not allowed");
    }
    if let Some(origin) = headers.get(hyper::header::ORIGIN) {
        let origin = origin.to_str().map_err(|_| "unreadable Origin header")?;
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .ok_or("Origin not allowed")?;
        if !allowed(host_of(authority), extra) {
            return Err("Origin not allowed");
        }
    }
    Ok(())
}

/// A header's value as text, surrounding optional white space removed.
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

/// A 2026-07-28 request's headers against its body. `Err` names the first disagreement.
pub fn check_modern(headers: &HeaderMap, body: &Value) -> Result<(), String> {
    // Responses and notifications carry no routing headers worth checking.
    let Some(method) = body.get("method").and_then(Value::as_str) else {
        return Ok(());
    };
    if body.get("id").is_none() {
        return Ok(());
    }
    match text(headers, "mcp-method") {
        None => return Err("missing Mcp-Method header".into()),
        Some(m) if m != method => {
            return Err(format!(
                "Mcp-Method header {m:?} does not match the body's method {method:?}"
            ))
        }
        Some(_) => {}
    }
    let params = body.get("params");
    if let Some(v) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str)
    {
        if v != MODERN {
            return Err(format!(
                "MCP-Protocol-Version header {MODERN:?} does not match the body's {v:?}"
            ));
        }
    }
    let target = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return Ok(()),
    };
    let want = params.and_then(|p| p.get(target)).and_then(Value::as_str);
    match (text(headers, "mcp-name"), want) {
        (None, _) => Err("missing Mcp-Name header".into()),
        (Some(h), Some(b)) if h == b => Ok(()),
        (Some(h), b) => Err(format!(
            "Mcp-Name header {h:?} does not match the body's {target} {b:?}"
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

/// SEP-2243: a `tools/call` whose tool declares `x-mcp-header` parameters carries each
/// argument given in its `Mcp-Param-<Name>` header too, with the same value.
pub fn check_params(
    headers: &HeaderMap,
    body: &Value,
    server: &crate::Server,
) -> Result<(), String> {
    if body.get("method").and_then(Value::as_str) != Some("tools/call") {
        return Ok(());
    }
    let params = body.get("params");
    let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
        return Ok(());
    };
    let Some(declared) = server.tools().header_params(name) else {
        return Ok(());
    };
    let args = params.and_then(|p| p.get("arguments"));
    for (param, header) in declared {
        let value = args.and_then(|a| a.get(&param));
        let sent = text(headers, &format!("mcp-param-{header}"));
        match (value, sent) {
            (None | Some(Value::Null), None) => {}
            (Some(_), None) => return Err(format!("missing Mcp-Param-{header} header")),
            (None | Some(Value::Null), Some(_)) => {
                return Err(format!(
                    "Mcp-Param-{header} header without the argument {param:?}"
                ))
            }
            (Some(v), Some(raw)) => {
                let got = param_value(raw)?;
                let want = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                if got != want {
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
    use serde_json::json;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn hosts() {
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:3000",
            "LOCALHOST",
        ] {
            assert!(check_host(&headers(&[("host", ok)]), &[]).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "127.0.0.2",
            "[::2]:1",
            "",
        ] {
            assert!(
                check_host(&headers(&[("host", bad)]), &[]).is_err(),
                "{bad}"
            );
        }
        let extra = vec!["mcp.internal".to_string()];
        assert!(check_host(&headers(&[("host", "mcp.internal:9")]), &extra).is_ok());
        let with_origin = |o| headers(&[("host", "localhost"), ("origin", o)]);
        assert!(check_host(&with_origin("http://localhost:5173"), &[]).is_ok());
        assert!(check_host(&with_origin("https://[::1]"), &[]).is_ok());
        assert!(check_host(&with_origin("http://evil.example"), &[]).is_err());
        assert!(check_host(&with_origin("null"), &[]).is_err());
    }

    #[test]
    fn modern_headers() {
        let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}});
        let good = headers(&[("mcp-method", "tools/call"), ("mcp-name", "  t\t")]);
        assert_eq!(check_modern(&good, &call), Ok(()));
        let upper = headers(&[("mcp-method", "TOOLS/CALL"), ("mcp-name", "t")]);
        assert!(check_modern(&upper, &call).is_err());
        assert!(check_modern(&headers(&[("mcp-method", "tools/call")]), &call).is_err());
        let other = headers(&[("mcp-method", "tools/call"), ("mcp-name", "u")]);
        assert!(check_modern(&other, &call).is_err());
        let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
        assert!(check_modern(&headers(&[]), &list).is_err());
        assert_eq!(
            check_modern(&headers(&[("mcp-method", "tools/list")]), &list),
            Ok(())
        );
        let read =
            json!({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"a://b"}});
        let h = headers(&[("mcp-method", "resources/read"), ("mcp-name", "a://b")]);
        assert_eq!(check_modern(&h, &read), Ok(()));
        let note = json!({"jsonrpc":"2.0","method":"notifications/cancelled"});
        assert_eq!(check_modern(&headers(&[]), &note), Ok(()));
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
}
