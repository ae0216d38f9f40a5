//! Reading what the server writes: each frame is one line of valid JSON; replies are matched
//! to their requests and recorded (with the revision and method schema validation needs);
//! sealed `requestState`s are harvested; notifications are checked.

use super::super::{raw, serde_bound};
use super::expect::{huge_numbers, Expect};
use super::model::{Frame, Model, StateRec};
use mcp_rs_core::{ProtocolVersion, Session};
use serde_json::Value;

/// Decodes 11 characters of unpadded base64url into 8 bytes.
fn base64url_u64(text: &str) -> Option<u64> {
    let mut acc: u128 = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u128::from(v);
    }
    // 11 characters carry 66 bits: 64 bits of data, then 2 zero bits.
    (text.len() == 11 && acc & 3 == 0).then_some((acc >> 2) as u64)
}

impl Model {
    /// Parses a frame: one line, valid JSON. The only text serde_json may fail on is an
    /// echo of a number it cannot read that the server was given (`unreadable_numbers`);
    /// such numbers read as `0` in the returned value (the text keeps them, and raw ids
    /// come from it).
    pub(super) fn frame(&self, bytes: &[u8]) -> (Value, String) {
        assert!(
            !bytes.contains(&b'\n') && !bytes.contains(&b'\r'),
            "frame contains a raw line break"
        );
        let text = std::str::from_utf8(bytes)
            .expect("frame is UTF-8")
            .to_string();
        match self.read(&text) {
            Ok(v) => (v, text),
            Err(e) => panic!("server emitted invalid JSON ({e}): {text}"),
        }
    }

    /// Reads JSON text the server wrote, where numbers of `unreadable_numbers` (echoed
    /// from the client) read as `0`; any other number serde_json cannot read is an error.
    pub(super) fn read(&self, text: &str) -> serde_json::Result<Value> {
        match serde_json::from_str::<Value>(text) {
            Err(e) if serde_bound(&e) == Some("number") && !self.unreadable_numbers.is_empty() => {
                let mut clean = text.to_string();
                for r in huge_numbers(text).into_iter().rev() {
                    if self.unreadable_numbers.contains(&text[r.clone()]) {
                        clean.replace_range(r, "0");
                    }
                }
                serde_json::from_str::<Value>(&clean).map_err(|_| e)
            }
            other => other,
        }
    }

    pub(super) fn record(&mut self, value: Value, rev: String, method: Option<String>) {
        if let Some(state) = value
            .pointer("/result/requestState")
            .and_then(Value::as_str)
        {
            self.harvest_state(state);
        }
        self.report.frames.push(Frame { value, rev, method });
    }

    /// A sealed `requestState` in a result: its payload names the handler's record
    /// (method, target, expiry); the sealed expiry must be the issue time plus the TTL.
    fn harvest_state(&mut self, state: &str) {
        assert!(state.starts_with("s1."), "requestState format: {state}");
        let payload = state.get(27..).expect("requestState header");
        let n: usize = payload
            .strip_prefix('k')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("requestState payload {payload} was not sealed here"));
        let (method, target, expiry) = self.book.borrow().issued[n].clone();
        let sealed = base64url_u64(&state[3..14]).expect("requestState expiry field");
        assert_eq!(
            sealed, expiry,
            "sealed expiry is the issue time plus state_ttl_ms"
        );
        self.report.states += 1;
        if !self.states.iter().any(|s| s.text == state) {
            self.states.push(StateRec {
                text: state.to_string(),
                method: method.to_string(),
                target,
                expiry,
            });
        }
        if self.states.len() > 16 {
            self.states.remove(0);
        }
    }

    /// Records a reply to a request of this message: the request is found by id, and
    /// among requests sharing an id by the shape of the result.
    pub(super) fn record_reply(
        &mut self,
        session: &Session<'_>,
        e: &mut Expect,
        v: &Value,
        id: Option<&str>,
    ) {
        let shape = v.get("result").map(|r| {
            if r.get("content").is_some() {
                "tools/call"
            } else if r.get("tools").is_some() {
                "tools/list"
            } else if r.get("prompts").is_some() {
                "prompts/list"
            } else if r.get("resources").is_some() {
                "resources/list"
            } else if r.get("resourceTemplates").is_some() {
                "resources/templates/list"
            } else if r.get("contents").is_some() {
                "resources/read"
            } else if r.get("messages").is_some() {
                "prompts/get"
            } else if r.get("completion").is_some() {
                "completion/complete"
            } else if r.get("protocolVersion").is_some() {
                "initialize"
            } else if r.get("supportedVersions").is_some() {
                "server/discover"
            } else {
                "ping"
            }
        });
        let same = |m: &str, s: &str| {
            m == s
                || (s == "ping"
                    && [
                        "logging/setLevel",
                        "resources/subscribe",
                        "resources/unsubscribe",
                    ]
                    .contains(&m))
        };
        let candidates: Vec<usize> = (0..e.info.len())
            .filter(|&i| Some(e.info[i].0.as_str()) == id)
            .collect();
        let pick = match candidates.as_slice() {
            [] => None,
            [one] => Some(*one),
            many => Some(
                many.iter()
                    .copied()
                    .find(|&i| shape.is_some_and(|s| same(&e.info[i].1, s)))
                    .unwrap_or(many[0]),
            ),
        };
        match pick {
            Some(i) => {
                let (_, method, rev) = e.info.remove(i);
                self.record(v.clone(), rev, Some(method));
            }
            None => self.record_response(session, v, id),
        }
    }

    pub(super) fn record_response(&mut self, session: &Session<'_>, v: &Value, id: Option<&str>) {
        let (method, rev) = match id.and_then(|i| self.info.get(i)) {
            Some((m, r)) => (Some(m.clone()), r.clone()),
            None => match (session.negotiated_version(), v.get("error").is_some()) {
                (Some(ver), false) => (None, ver.as_str().to_string()),
                _ => (None, ProtocolVersion::LATEST_LEGACY.as_str().to_string()),
            },
        };
        self.record(v.clone(), rev, method);
    }

    /// A response object: `Some(raw id)` or `None` for an id-less error.
    pub(super) fn response_id(v: &Value, text: &str) -> Option<String> {
        assert!(v.is_object(), "response is not an object: {v}");
        assert!(
            v.get("result").is_some() != v.get("error").is_some(),
            "response needs exactly one of result/error: {v}"
        );
        assert_eq!(v.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
        if let Some(e) = v.get("error") {
            assert!(e.get("code").is_some_and(Value::is_i64), "error code: {v}");
            assert!(
                e.get("message").is_some_and(Value::is_string),
                "error message: {v}"
            );
        }
        let members = raw::members(text).expect("members");
        members
            .iter()
            .find(|(k, _)| *k == "id")
            .map(|(_, id)| id.to_string())
    }

    pub(super) fn nurse_notification(&self, v: &Value, total_given: Option<f64>) {
        assert!(v.get("id").is_none(), "notification with an id: {v}");
        let method = v
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("not a notification: {v}"));
        assert!(
            [
                "notifications/progress",
                "notifications/message",
                "notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed",
            ]
            .contains(&method),
            "unexpected notification {v}"
        );
        let p = v.get("params").unwrap_or_else(|| panic!("no params: {v}"));
        if method == "notifications/progress" {
            assert!(
                p.get("progress").is_some_and(Value::is_number),
                "progress must be a number: {v}"
            );
            // A non-finite total has no JSON form: it is left out.
            match (p.get("total"), total_given.filter(|t| t.is_finite())) {
                (Some(t), Some(given)) => {
                    assert_eq!(t.as_f64().map(f64::to_bits), Some(given.to_bits()), "{v}")
                }
                (None, None) => {}
                (t, given) => panic!("total {t:?} for {given:?}: {v}"),
            }
        }
    }
}
