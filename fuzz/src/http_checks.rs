//! Invariants of the Streamable HTTP header checks: mcp-core's `wire::headers` (the
//! 2026-07-28 headers against the core's view of a request) read from hyper's `HeaderMap`
//! through `mcp_rs_tokio::http::headers` (HTTP parsing itself is hyper's). Shared by the `http_headers` fuzz target and
//! `mcp-tokio/tests/http_fuzz_replay.rs` (included with `#[path]`, so free of libFuzzer).

use arbitrary::Arbitrary;
use base64::Engine as _;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use mcp_rs_core::wire::headers::{check_params_text, check_request};
use mcp_rs_core::wire::json::{self, RawJson};
use mcp_rs_core::wire::peek::{peek, Peek};
use mcp_rs_tokio::http::headers::{self, Hyper};

/// Header names the checks look at (and one they must ignore).
const NAMES: [&str; 8] = [
    "host",
    "origin",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-param-region",
    "mcp-session-id",
    "x-other",
];

/// One request as the HTTP layer sees it.
#[derive(Arbitrary, Debug)]
pub struct Input {
    /// (index into the header names, value bytes); repeats allowed.
    pub headers: Vec<(u8, Vec<u8>)>,
    /// The body (often not JSON).
    pub body: Vec<u8>,
    /// The authority of an absolute-form request target, if any.
    pub target: Option<String>,
    /// A value to round-trip through `Mcp-Param-*` base64 encoding.
    pub param: String,
}

fn header_map(input: &Input) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (i, value) in &input.headers {
        let name = NAMES[usize::from(*i) % NAMES.len()];
        if let Ok(v) = HeaderValue::from_bytes(value) {
            map.append(HeaderName::from_static(name), v);
        }
    }
    map
}

/// The one value of `name` if it was sent exactly once as visible ASCII, trimmed.
fn only(map: &HeaderMap, name: &str) -> Option<String> {
    let mut all = map.get_all(name).iter();
    let first = all.next()?;
    if all.next().is_some() {
        return None;
    }
    Some(first.to_str().ok()?.trim_matches([' ', '\t']).to_owned())
}

/// A header value as the spec defines it, decoded independently of the core (the base64
/// crate's strict standard engine): `None` when the `=?base64?…?=` form is not valid.
fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        None => Some(value.to_owned()),
        Some(e) => base64::engine::general_purpose::STANDARD
            .decode(e)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
    }
}

/// An integer's sign and digits without leading zeros (`-0` is `0`); `None` for other text.
fn integer(text: &str) -> Option<(bool, &str)> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    Some((negative && !digits.is_empty(), digits))
}

/// The schema of a tool with one `x-mcp-header` argument.
const SCHEMA: &str =
    r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"region"}}}"#;

fn string_at(v: Option<RawJson<'_>>) -> Option<String> {
    v.and_then(|v| v.as_string()).map(|s| s.to_string())
}

/// Runs every check on `input`; panics on a broken invariant.
pub fn check(input: &Input) {
    let map = header_map(input);

    // Host/Origin: accepting means exactly one Host, naming a loopback host.
    if headers::check_host(&map, input.target.as_deref(), &[]).is_ok() {
        let host = only(&map, "host").expect("accepted without a single Host");
        let lower = host.to_ascii_lowercase();
        assert!(
            lower.starts_with("localhost")
                || lower.starts_with("127.0.0.1")
                || lower.starts_with("[::1]"),
            "accepted Host {host:?}"
        );
        assert!(!host.contains('@'), "accepted userinfo in {host:?}");
        assert!(map.get_all("origin").iter().count() <= 1);
    }

    // 2026 routing headers agree with the body, as the session reads it (`wire::peek`:
    // first duplicate, the session's depth bound); a body the session refuses is not
    // checked (the session answers it).
    let sent = Hyper(&map);
    let limits = json::Limits::default();
    let peeked = peek(&input.body, limits);
    if let Peek::Malformed | Peek::Batch(_) | Peek::Response = peeked {
        assert_eq!(check_request(&sent, &peeked), Ok(()));
        assert_eq!(check_params_text(&sent, &peeked, SCHEMA, limits), Ok(()));
    }
    // Deeper than a small bound: nothing to check, whatever the headers.
    let shallow = peek(&input.body, json::Limits { max_depth: 2 });
    if let Peek::Malformed = shallow {
        assert_eq!(check_request(&sent, &shallow), Ok(()));
        assert_eq!(check_params_text(&sent, &shallow, SCHEMA, limits), Ok(()));
    }
    if let Ok(body) = json::parse(&input.body, limits) {
        let method = string_at(body.get("method"));
        let is_request = matches!(peeked, Peek::Request(_));
        if check_request(&sent, &peeked).is_ok() && is_request {
            let method = method.clone().unwrap_or_default();
            let got = only(&map, "mcp-method").and_then(|m| decode(&m));
            assert_eq!(got.as_deref(), Some(method.as_str()));
            let target = match method.as_str() {
                "tools/call" | "prompts/get" => Some("name"),
                "resources/read" => Some("uri"),
                _ => None,
            };
            if let Some(target) = target {
                let want = string_at(body.get("params").and_then(|p| p.get(target)));
                let got = only(&map, "mcp-name").and_then(|n| decode(&n));
                assert_eq!(got, want, "Mcp-Name accepted");
            }
        }
        // x-mcp-header parameters: accepting a tools/call request means the header decodes
        // to the argument the tool will see.
        let call = matches!(peeked, Peek::Request(_)) && method.as_deref() == Some("tools/call");
        if check_params_text(&sent, &peeked, SCHEMA, limits).is_ok() && call {
            let arg = body
                .get("params")
                .and_then(|p| p.get("arguments"))
                .and_then(|a| a.get("region"))
                .filter(|v| !v.is_null());
            let sent = only(&map, "mcp-param-region");
            match (arg, sent) {
                (None, None) => {}
                (Some(v), Some(h)) => {
                    let decoded = decode(&h).expect("accepted an undecodable value");
                    match (v.as_string(), integer(v.as_str())) {
                        (Some(s), _) => assert!(s.eq_str(&decoded), "{decoded:?} vs {}", s.raw()),
                        (None, Some(n)) => assert_eq!(integer(&decoded), Some(n)),
                        (None, None) => assert_eq!(v.as_str(), decoded),
                    }
                }
                (arg, sent) => panic!("accepted argument {arg:?} with header {sent:?}"),
            }
        }
    }

    // The base64 form of any text is accepted for it as an argument.
    let encoded = base64::engine::general_purpose::STANDARD.encode(&input.param);
    let value = format!("=?base64?{encoded}?=");
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "t", "arguments": {"region": input.param}},
    })
    .to_string();
    let mut map = HeaderMap::new();
    map.insert(
        "mcp-param-region",
        HeaderValue::from_str(&value).expect("base64 is ASCII"),
    );
    let peeked = peek(call.as_bytes(), limits);
    assert_eq!(
        check_params_text(&Hyper(&map), &peeked, SCHEMA, limits),
        Ok(()),
        "{value}"
    );
}
