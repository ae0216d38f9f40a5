//! The 2026-07-28 request headers that must agree with the body: decided by mcp-core
//! ([`mcp_rs_core::wire::headers`], shared with mcp-tokio, whose module docs hold the table
//! of checks and replies), compared with the session's own view of the body
//! ([`mcp_rs_core::wire::peek`]). Here only how a [`Head`] feeds it (in place, no copies)
//! and how the called tool's schema is found.

use mcp_rs_core::wire::headers::{called_tool, check_params_text, check_request, Headers};
use mcp_rs_core::wire::json::Limits;
use mcp_rs_core::wire::peek::Peek;
use mcp_rs_core::ServerHandler;

use super::head::Head;

/// The revision whose requests carry their own version and need no session.
pub use mcp_rs_core::wire::headers::MODERN;

impl Headers for Head<'_, '_> {
    fn each(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.headers.iter().map(|h| (h.name.as_bytes(), h.value))
    }
}

/// A 2026-07-28 request's `Mcp-Method`, `MCP-Protocol-Version` and `Mcp-Name` against its
/// body. `Err` is the reply's message (400, [`mcp_rs_core::wire::headers::CODE`]).
pub(super) fn check_modern(head: &Head<'_, '_>, body: &Peek<'_>) -> Result<(), &'static str> {
    check_request(head, body).map_err(|r| r.error.message())
}

/// SEP-2243: the `Mcp-Param-*` headers of a `tools/call` of one of `server`'s tools whose
/// `inputSchema` marks parameters with `x-mcp-header`.
pub(super) fn check_params<S: ServerHandler + ?Sized>(
    head: &Head<'_, '_>,
    body: &Peek<'_>,
    server: &mut S,
    limits: Limits,
) -> Result<(), &'static str> {
    let (Some(name), Some(tools)) = (called_tool(body), server.tools()) else {
        return Ok(());
    };
    let Some(tool) = (0..tools.len())
        .filter_map(|i| tools.get(i))
        .find(|t| name.eq_str(t.name))
    else {
        return Ok(());
    };
    check_params_text(head, body, tool.input_schema, limits).map_err(|r| r.error.message())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_rs_core::wire::headers;
    use mcp_rs_core::wire::peek::peek;

    fn with<R>(raw: &str, f: impl FnOnce(&Head<'_, '_>) -> R) -> R {
        let mut storage = [httparse::EMPTY_HEADER; super::super::head::MAX_HEADERS];
        let head = Head::parse(raw.as_bytes(), &mut storage).unwrap();
        f(&head)
    }

    #[test]
    fn heads_reach_the_core() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        let call = peek(body, Limits::default());
        let ok = "POST / HTTP/1.1\r\nmcp-method: tools/call\r\nMCP-NAME:  t\t\r\n\r\n";
        assert_eq!(with(ok, |h| check_modern(h, &call)), Ok(()));
        let twice = "POST / HTTP/1.1\r\nMcp-Method: tools/call\r\nMcp-Method: tools/call\r\nMcp-Name: t\r\n\r\n";
        assert_eq!(
            with(twice, |h| check_modern(h, &call)),
            Err(headers::HeaderError::Repeated.message())
        );
        // httparse passes bytes past ASCII through; the core refuses them.
        let raw = "POST / HTTP/1.1\r\nMcp-Method: tools/call\r\nMcp-Name: t\u{e9}\r\n\r\n";
        assert_eq!(
            with(raw, |h| check_modern(h, &call)),
            Err(headers::HeaderError::NotText.message())
        );
    }
}
