//! What an adapter needs to know of a message before the session sees it: its method,
//! target and protocol version, read with the same scanner, the same depth bound and the
//! same method table as the session itself. An HTTP transport checks its headers
//! (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) and scopes against this view, so
//! that the transport and the session can never disagree about a body: a body the
//! session would refuse is reported as [`Peek::Malformed`], never half-read.
//!
//! | field | read from | the session's use |
//! |---|---|---|
//! | [`Request::id`] | `id` | echoed in the reply (an adapter's refusal echoes it too) |
//! | [`Request::method`] | `method` | dispatch through the method table |
//! | [`Request::known`] | the method table's row of `method` | era, capability, target |
//! | [`Request::target`] | `params.name` or `params.uri`, as the row says | which tool, prompt or resource |
//! | [`Request::version`] | `params._meta["io.modelcontextprotocol/protocolVersion"]` | the 2026-07-28 era |
//! | [`Request::arguments`] | `params.arguments` | tool and prompt arguments |
//!
//! ```
//! use mcp_rs_core::wire::json::Limits;
//! use mcp_rs_core::wire::peek::{peek, Peek};
//! use mcp_rs_core::wire::Method;
//!
//! let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
//! let Peek::Request(r) = peek(body, Limits::default()) else { panic!() };
//! assert_eq!(r.known.map(|row| row.method), Some(Method::ToolsCall));
//! assert!(r.target.is_some_and(|t| t.eq_str("add")));
//! assert!(r.version.is_some_and(|v| v.eq_str("2026-07-28")));
//!
//! // deeper than the bound: the session answers -32700, and so the adapter knows nothing
//! let deep = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":[[[[1]]]]}}"#;
//! assert!(matches!(peek(deep, Limits { max_depth: 4 }), Peek::Malformed));
//! ```

use crate::wire::json::{self, JsonStr, Kind, Limits, RawJson};
use crate::wire::jsonrpc::{self, Message, RequestId};
use crate::wire::method::{Method, Row, Target};
use crate::wire::params::{pick, META_VERSION};

/// A message as an adapter sees it.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Peek<'i> {
    /// A request (has `method` and `id`).
    Request(Request<'i>),
    /// A notification (`method`, no `id`).
    Notification(Request<'i>),
    /// A response to a request the server sent.
    Response,
    /// A JSON array (a batch, 2025-03-26): peek at each element's text.
    Batch(RawJson<'i>),
    /// Not valid JSON within the depth bound, or not a JSON-RPC message: the session
    /// answers it with an error (or ignores it), and it names nothing.
    Malformed,
}

/// The parts of a request (or notification) an adapter checks.
#[derive(Clone, Copy, Debug)]
pub struct Request<'i> {
    /// `id`, as the reply echoes it; `None` for a notification.
    pub id: Option<RequestId<'i>>,
    /// `method`, as sent.
    pub method: JsonStr<'i>,
    /// The method table's row, when the method is one the server knows.
    pub known: Option<&'static Row>,
    /// `params.name` or `params.uri` (per the row's [`Target`]), when it is a string.
    pub target: Option<JsonStr<'i>>,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`, when it is a string.
    pub version: Option<JsonStr<'i>>,
    /// `params.arguments`, when present.
    pub arguments: Option<RawJson<'i>>,
}

impl Request<'_> {
    /// The method, when the table knows it.
    pub fn method(&self) -> Option<Method> {
        self.known.map(|r| r.method)
    }
}

/// Reads `body` (one JSON text) with the session's scanner and the depth bound `limits`
/// (pass the session's [`Config::max_depth`](crate::Config::max_depth)).
pub fn peek(body: &[u8], limits: Limits) -> Peek<'_> {
    let Ok(value) = json::parse(body, limits) else {
        return Peek::Malformed;
    };
    peek_value(value)
}

/// [`peek`] of a value already scanned (an element of a batch).
pub fn peek_value(value: RawJson<'_>) -> Peek<'_> {
    if value.kind() == Kind::Array {
        return Peek::Batch(value);
    }
    match jsonrpc::classify(value) {
        Ok(Message::Request { id, method, params }) => {
            Peek::Request(request(Some(id), method, params))
        }
        Ok(Message::Notification { method, params }) => {
            Peek::Notification(request(None, method, params))
        }
        Ok(Message::Response { .. }) => Peek::Response,
        #[allow(unreachable_patterns)]
        Ok(_) => Peek::Malformed,
        Err(_) => Peek::Malformed,
    }
}

fn request<'i>(
    id: Option<RequestId<'i>>,
    method: JsonStr<'i>,
    params: Option<RawJson<'i>>,
) -> Request<'i> {
    let known = Method::lookup_json(method);
    let params = params.filter(|p| p.kind() == Kind::Object);
    let [name, uri, arguments, meta] = pick(params, ["name", "uri", "arguments", "_meta"]);
    let target = match known.map(|r| r.target) {
        Some(Target::Name) => name,
        Some(Target::Uri) => uri,
        // Only tasks rows name this target: a build without them never looks for it.
        Some(Target::TaskId) => params.and_then(|p| p.get("taskId")),
        _ => None,
    };
    let [version] = pick(meta.filter(|m| m.kind() == Kind::Object), [META_VERSION]);
    Request {
        id,
        method,
        known,
        target: target.and_then(|t| t.as_string()),
        version: version.and_then(|v| v.as_string()),
        arguments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;

    fn req(body: &str) -> Request<'_> {
        match peek(body.as_bytes(), Limits::default()) {
            Peek::Request(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn targets_follow_the_method_table() {
        let r = req(
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"name":"x","uri":"file:///a"}}"#,
        );
        assert!(r.target.is_some_and(|t| t.eq_str("file:///a")));
        let r = req(
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","uri":"u"}}"#,
        );
        assert!(r.target.is_some_and(|t| t.eq_str("p")));
        let r = req(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"p"}}"#);
        assert!(r.target.is_none());
        let r = req(r#"{"jsonrpc":"2.0","id":1,"method":"no/such","params":{"name":"p"}}"#);
        assert!(r.known.is_none() && r.target.is_none() && r.method.eq_str("no/such"));
    }

    #[test]
    fn escaped_names_compare_unescaped_and_first_member_wins() {
        let r = req(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"n\u0061me":"a\u0064d","name":"other"}}"#,
        );
        assert!(r.target.is_some_and(|t| t.eq_str("add")));
        assert_eq!(r.method(), Some(Method::ToolsCall));
    }

    #[test]
    fn ids_as_the_reply_echoes_them() {
        let r = req(r#"{"jsonrpc":"2.0","id":"a\u0062","method":"ping"}"#);
        assert_eq!(r.id.map(|id| id.as_raw()), Some(r#""a\u0062""#));
        let r = req(r#"{"jsonrpc":"2.0","id":-7,"method":"ping"}"#);
        assert_eq!(r.id.map(|id| id.as_raw()), Some("-7"));
        let note = peek(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            Limits::default(),
        );
        assert!(matches!(note, Peek::Notification(Request { id: None, .. })));
    }

    #[test]
    fn non_strings_name_nothing() {
        let r = req(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"_meta":{"io.modelcontextprotocol/protocolVersion":1}}}"#,
        );
        assert!(r.target.is_none() && r.version.is_none());
        let r = req(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#);
        assert!(r.target.is_none());
    }

    #[test]
    fn the_depth_bound_is_the_sessions() {
        let nested = |n: usize| {
            let mut s = String::from(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":"#,
            );
            s.push_str(&"[".repeat(n));
            s.push_str(&"]".repeat(n));
            s.push_str("}}");
            s
        };
        // the message object, params: depth 2, then n arrays
        let ok = nested(38);
        let deep = nested(39);
        let limits = Limits { max_depth: 40 };
        assert!(matches!(peek(ok.as_bytes(), limits), Peek::Request(_)));
        assert!(matches!(peek(deep.as_bytes(), limits), Peek::Malformed));
    }

    #[test]
    fn other_shapes() {
        let p = |s: &'static str| peek(s.as_bytes(), Limits::default());
        assert!(matches!(
            p(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Peek::Batch(_)
        ));
        assert!(matches!(
            p(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Peek::Notification(_)
        ));
        assert!(matches!(
            p(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Peek::Response
        ));
        assert!(matches!(p(r#"{"jsonrpc":"2.0","id":1"#), Peek::Malformed));
        assert!(matches!(p(r#"{"id":1}"#), Peek::Malformed));
    }
}
