//! Invariants of the Streamable HTTP header checks (`mcp_rs_tokio::http::headers`): the code
//! that maps HTTP headers onto the core's view of a request (HTTP parsing itself is
//! hyper's). Shared by the `http_headers` fuzz target and
//! `mcp-tokio/tests/http_fuzz_replay.rs` (included with `#[path]`, so free of libFuzzer).

use arbitrary::Arbitrary;
use base64::Engine as _;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use mcp_rs_core::wire::json::{self, RawJson};
use mcp_rs_core::wire::peek::{peek, Peek};
use mcp_rs_tokio::http::headers;

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
    let peeked = peek(&input.body, json::Limits::default());
    let declared = [("region".to_string(), "region".to_string())];
    if let Peek::Malformed | Peek::Batch(_) | Peek::Response = peeked {
        assert_eq!(headers::check_modern(&map, &peeked), Ok(()));
        assert_eq!(headers::check_params(&map, &peeked, &declared), Ok(()));
    }
    // Deeper than a small bound: nothing to check, whatever the headers.
    let shallow = peek(&input.body, json::Limits { max_depth: 2 });
    if let Peek::Malformed = shallow {
        assert_eq!(headers::check_modern(&map, &shallow), Ok(()));
        assert_eq!(headers::check_params(&map, &shallow, &declared), Ok(()));
    }
    if let Ok(body) = json::parse(&input.body, json::Limits::default()) {
        let method = string_at(body.get("method"));
        let is_request = matches!(peeked, Peek::Request(_));
        if headers::check_modern(&map, &peeked).is_ok() && is_request {
            let method = method.unwrap_or_default();
            assert_eq!(only(&map, "mcp-method").as_deref(), Some(method.as_str()));
            let target = match method.as_str() {
                "tools/call" | "prompts/get" => Some("name"),
                "resources/read" => Some("uri"),
                _ => None,
            };
            if let Some(target) = target {
                let want = string_at(body.get("params").and_then(|p| p.get(target)));
                assert_eq!(only(&map, "mcp-name"), want, "Mcp-Name accepted");
            }
        }
        // x-mcp-header parameters: accepting a request or notification means the header
        // decodes to the argument the tool will see.
        let message = matches!(peeked, Peek::Request(_) | Peek::Notification(_));
        if headers::check_params(&map, &peeked, &declared).is_ok() && message {
            let arg = body
                .get("params")
                .and_then(|p| p.get("arguments"))
                .and_then(|a| a.get("region"))
                .filter(|v| !v.is_null());
            let sent = only(&map, "mcp-param-region");
            match (arg, sent) {
                (None, None) => {}
                (Some(v), Some(h)) => {
                    let decoded = headers::param_value(&h).expect("accepted an undecodable value");
                    match v.as_string() {
                        Some(s) => assert!(s.eq_str(&decoded), "{decoded:?} vs {}", s.raw()),
                        None => assert_eq!(v.as_str(), decoded),
                    }
                }
                (arg, sent) => panic!("accepted argument {arg:?} with header {sent:?}"),
            }
        }
    }

    // The base64 form round-trips any text; the literal form is itself.
    let encoded = base64::engine::general_purpose::STANDARD.encode(&input.param);
    assert_eq!(
        headers::param_value(&format!("=?base64?{encoded}?=")).as_deref(),
        Ok(input.param.as_str())
    );
    if !(input.param.starts_with("=?base64?") && input.param.ends_with("?=")) {
        assert_eq!(
            headers::param_value(&input.param).as_deref(),
            Ok(input.param.as_str())
        );
    } else {
        let _ = headers::param_value(&input.param);
    }
}
