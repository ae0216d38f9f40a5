//! What an incoming message owes ([`Expect`]), read from its bytes alone with serde_json and
//! the independent raw reader: the ids it carries, their methods and revisions, the seq
//! markers of deferrable requests, cancellations, client responses, and claims on the
//! `requestState`s it carries.

use super::super::{depth_of, raw, serde_bound};
use super::model::Model;
use super::render::Claim;
use super::runner::Outcome;
use super::{decode_str, MODERN};
use mcp_rs_core::{ProtocolVersion, Request, Session};
use serde_json::Value;
use std::collections::HashMap;

/// Expectations for one incoming message, from its bytes alone.
#[derive(Debug, Default)]
pub(super) struct Expect {
    pub(super) idless: usize,
    pub(super) ids: Vec<String>,
    pub(super) seq: HashMap<u64, String>,
    pub(super) cancels: Vec<String>,
    pub(super) batch: bool,
    /// serde_json, the model's reference reader, rejects this message although it may be
    /// valid JSON that mcp-core accepts: it holds a number beyond `f64` (`1e400`, or an
    /// integer id of 309+ digits). The model then cannot list the message's requests, so
    /// for this one message it checks only what needs no list (each reply's id occurs in
    /// the message text; the calls it starts are counted from the session and owed as
    /// wildcards in `Model::pool_any`, each still answered exactly once). Every other
    /// message, before and after, keeps the full exactly-once accounting.
    pub(super) unreadable: bool,
    /// `(id, method, revision)` of every request, in order.
    pub(super) info: Vec<(String, String, String)>,
    /// Valid responses to server-to-client requests: raw id, and `Ok(raw result)` or
    /// `Err((error.code, error.message))`.
    pub(super) responses: Vec<(String, Outcome)>,
    /// Claims on the replies, by raw id (rendered ones, and the model's about state).
    pub(super) claims: Vec<(String, Claim)>,
}

/// The first member `key` of a raw object (names compare decoded), as the session reads.
pub(super) fn raw_get<'t>(obj: &'t str, key: &str) -> Option<&'t str> {
    raw::members(obj)?
        .into_iter()
        .find(|(k, _)| decode_str(&format!("\"{k}\"")).as_deref() == Some(key))
        .map(|(_, v)| v)
}

/// Number tokens of `text` that serde_json cannot read (beyond `f64`). Scans every run
/// of number characters, inside strings too: over-approximating is harmless here.
pub(super) fn huge_numbers(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'-' || b[i].is_ascii_digit() {
            let start = i;
            i += 1;
            while i < b.len() && matches!(b[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                i += 1;
            }
            if text[start..i].parse::<f64>().is_ok_and(f64::is_infinite) {
                out.push(start..i);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The marker a rendered deferrable request carries: `arguments.__seq` (a number for
/// tools, a string for prompts), a `test://slow/<seq>` URI, a `slow<seq>` completion.
fn seq_of(v: &Value) -> Option<u64> {
    let args = v.pointer("/params/arguments/__seq");
    args.and_then(Value::as_u64)
        .or_else(|| args.and_then(Value::as_str).and_then(|s| s.parse().ok()))
        .or_else(|| {
            v.pointer("/params/uri")
                .and_then(Value::as_str)
                .and_then(|u| u.strip_prefix("test://slow/"))
                .and_then(|n| n.parse().ok())
        })
        .or_else(|| {
            v.pointer("/params/argument/value")
                .and_then(Value::as_str)
                .and_then(|u| u.strip_prefix("slow"))
                .and_then(|n| n.parse().ok())
        })
}

/// The seq marker of a deferred request as the application sees it.
pub(super) fn call_seq(request: &Request<'_>) -> Option<u64> {
    match request {
        Request::Tool(t) => t.args().get("__seq").and_then(|v| v.as_u64()),
        Request::Read(r) => r
            .uri()
            .chars()
            .collect::<String>()
            .strip_prefix("test://slow/")
            .and_then(|n| n.parse().ok()),
        Request::Prompt(p) => p
            .argument("__seq")
            .and_then(|s| s.chars().collect::<String>().parse().ok()),
        Request::Complete(c) => c
            .value()
            .chars()
            .collect::<String>()
            .strip_prefix("slow")
            .and_then(|n| n.parse().ok()),
        _ => None,
    }
}

impl Model {
    pub(super) fn legacy_rev(session: &Session<'_>) -> String {
        session
            .negotiated_version()
            .unwrap_or(ProtocolVersion::LATEST_LEGACY)
            .as_str()
            .to_string()
    }

    fn rev_of(session: &Session<'_>, v: &Value) -> String {
        let modern = v
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .is_some()
            || v.get("method").and_then(Value::as_str) == Some("server/discover");
        if modern {
            return MODERN.into();
        }
        if v.get("method").and_then(Value::as_str) == Some("initialize") {
            let requested = v
                .pointer("/params/protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            return ProtocolVersion::negotiate_legacy(ProtocolVersion::from_wire(requested))
                .as_str()
                .into();
        }
        Self::legacy_rev(session)
    }

    /// One element of a message (or the whole message).
    fn element(&mut self, session: &Session<'_>, text: &str, v: &Value, e: &mut Expect) {
        if !v.is_object() {
            e.idless += 1;
            return;
        }
        let members = raw::members(text).expect("raw members of a valid object");
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut last: HashMap<&str, &str> = HashMap::new();
        for (k, val) in &members {
            // Member names compare after unescaping (RFC 8259): `"\u0069d"` is `id`.
            let name = decode_str(&format!("\"{k}\"")).unwrap_or_default();
            let known = ["jsonrpc", "id", "method", "params", "result", "error"];
            if let Some(k) = known.iter().find(|n| **n == name) {
                *seen.entry(k).or_default() += 1;
                last.insert(k, val);
            }
        }
        let dup = seen.values().any(|&n| n > 1);
        let id = last.get("id").copied();
        let method = last.get("method").copied();
        if method.is_some() && id.is_none() {
            // A notification: never answered. Remember cancellation targets.
            if method.and_then(decode_str).as_deref() == Some("notifications/cancelled") {
                if let Some(p) = last.get("params").and_then(|p| raw::members(p)) {
                    for (k, t) in p {
                        if decode_str(&format!("\"{k}\"")).as_deref() == Some("requestId") {
                            e.cancels.push(t.to_string());
                        }
                    }
                }
            }
            return;
        }
        let Some(id) = id else {
            e.idless += 1;
            return;
        };
        if !raw::is_id(id) {
            e.idless += 1;
            return;
        }
        if method.is_none() {
            let valid_response = !dup
                && last.get("jsonrpc").copied().and_then(decode_str).as_deref() == Some("2.0")
                && last.contains_key("result") != last.contains_key("error");
            if valid_response {
                let outcome = match (v.get("result"), v.get("error")) {
                    (Some(_), _) => Ok(last["result"].to_string()),
                    (_, e) => Err((
                        e.and_then(|e| e.get("code"))
                            .and_then(Value::as_i64)
                            .unwrap_or(0),
                        e.and_then(|e| e.get("message"))
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    )),
                };
                e.responses.push((id.to_string(), outcome));
                return;
            }
        }
        e.ids.push(id.to_string());
        let m = v
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let rev = Self::rev_of(session, v);
        e.info.push((id.to_string(), m.clone(), rev.clone()));
        self.info.insert(id.to_string(), (m.clone(), rev));
        if let Some(seq) = seq_of(v) {
            e.seq.insert(seq, id.to_string());
        }
        if let Some(c) = self.state_claim(&m, last.get("params").copied()) {
            e.claims.push((id.to_string(), c));
        }
    }

    /// Whether a request's `requestState` is one the server must accept: exactly the
    /// text of a state it sealed for this method and raw target, not expired (`None`:
    /// no state, or a method that takes none).
    fn state_claim(&self, method: &str, params: Option<&str>) -> Option<Claim> {
        if !["tools/call", "prompts/get", "resources/read"].contains(&method) {
            return None;
        }
        let params = params?;
        let state = raw_get(params, "requestState")?;
        let key = if method == "resources/read" {
            "uri"
        } else {
            "name"
        };
        let target = raw_get(params, key)
            .and_then(|t| t.strip_prefix('"'))
            .and_then(|t| t.strip_suffix('"'));
        let text = state
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .filter(|t| !t.contains('\\'));
        let good = match (text, target) {
            (Some(text), Some(target)) => self.states.iter().any(|s| {
                s.text == text && s.method == method && s.target == target && self.now <= s.expiry
            }),
            _ => false,
        };
        Some(if good {
            Claim::GoodState
        } else {
            Claim::BadState
        })
    }

    pub(super) fn expect(&mut self, session: &Session<'_>, bytes: &[u8]) -> Expect {
        let mut e = Expect::default();
        let Ok(text) = std::str::from_utf8(bytes) else {
            e.idless = 1;
            return e;
        };
        let v: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            // Nesting beyond serde_json's 127 levels is beyond `max_depth` too (at most
            // 100 here): rejected as a whole, like any message deeper than `max_depth`.
            Err(err) if serde_bound(&err) == Some("depth") && self.max_depth < 128 => {
                e.idless = 1;
                return e;
            }
            Err(err) if serde_bound(&err).is_some() => {
                e.unreadable = true;
                e.batch = raw::trim(text).starts_with('[');
                return e;
            }
            Err(_) => {
                e.idless = 1;
                return e;
            }
        };
        if depth_of(&v) > self.max_depth {
            e.idless = 1;
            return e;
        }
        match &v {
            Value::Array(items) => {
                e.batch = true;
                let allowed = session.negotiated_version() == Some(ProtocolVersion::V2025_03_26);
                if !allowed || items.is_empty() || items.len() > self.max_batch {
                    e.idless = 1;
                    return e;
                }
                let raws = raw::elements(text).expect("raw elements of a valid array");
                assert_eq!(raws.len(), items.len());
                for (r, item) in raws.iter().zip(items) {
                    self.element(session, r, item, &mut e);
                }
            }
            _ => self.element(session, text, &v, &mut e),
        }
        e
    }
}
