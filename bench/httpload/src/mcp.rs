//! The MCP messages the load generator sends, and the check of every answer.
//!
//! A call is `tools/call` of the tool (default `add`) with `{"a": A, "b": B}`; the answer
//! must be the JSON-RPC response with the request's id, no `error`, no `isError: true`, and
//! the sum in `structuredContent.result` and/or in `content[0].text` (a number, or JSON
//! `{"result": n}`): at least one must be present and none may disagree. The body is
//! either `application/json` (the message) or `text/event-stream` (events; the response is
//! found by its id, priming events and notifications are skipped).

use serde_json::Value;

/// The stateless revision: every request carries its version, no session.
pub(crate) const MODERN: &str = "2026-07-28";

/// The client's name and version, sent as `clientInfo`.
const CLIENT_INFO: &str = r#"{"name":"mcp-httpload","version":"0.1.0"}"#;

/// A 2026-07-28 `tools/call`: version, capabilities and client info in `_meta`.
pub(crate) fn modern_call(id: u64, tool_json: &str, a: i64, b: i64) -> Vec<u8> {
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":{},"#,
            r#""arguments":{{"a":{},"b":{}}},"_meta":{{"#,
            r#""io.modelcontextprotocol/protocolVersion":"{}","#,
            r#""io.modelcontextprotocol/clientCapabilities":{{}},"#,
            r#""io.modelcontextprotocol/clientInfo":{}}}}}}}"#
        ),
        id, tool_json, a, b, MODERN, CLIENT_INFO
    )
    .into_bytes()
}

/// A legacy (session) `tools/call`.
pub(crate) fn legacy_call(id: u64, tool_json: &str, a: i64, b: i64) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{tool_json},"arguments":{{"a":{a},"b":{b}}}}}}}"#
    )
    .into_bytes()
}

/// The `initialize` request of a legacy session asking for `version`.
pub(crate) fn initialize(id: u64, version: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{CLIENT_INFO}}}}}"#
    )
    .into_bytes()
}

/// The notification that completes a legacy handshake.
pub(crate) const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The JSON-RPC response with id `id` in a response body of type `content_type`.
pub(crate) fn response(content_type: Option<&str>, body: &[u8], id: u64) -> Result<Value, String> {
    let ct = content_type.unwrap_or("");
    if ct.starts_with("application/json") {
        let msg: Value = serde_json::from_slice(body)
            .map_err(|e| format!("unparseable JSON body: {e}: {}", preview(body)))?;
        return check_envelope(msg, id);
    }
    if ct.starts_with("text/event-stream") {
        let mut found = None;
        for data in sse_data(body) {
            if data.is_empty() {
                continue; // a priming event
            }
            let msg: Value = serde_json::from_str(&data)
                .map_err(|e| format!("unparseable SSE data: {e}: {}", preview(data.as_bytes())))?;
            let is_response = msg.get("id").is_some()
                && (msg.get("result").is_some() || msg.get("error").is_some());
            if !is_response {
                continue; // a notification or a request to the client: not the answer
            }
            if found.is_some() {
                return Err("more than one response in the SSE stream".into());
            }
            found = Some(check_envelope(msg, id)?);
        }
        return found.ok_or_else(|| format!("no response in the SSE stream: {}", preview(body)));
    }
    Err(format!("unexpected Content-Type {ct:?}: {}", preview(body)))
}

/// The `data` of every complete SSE event (WHATWG rules: lines end with LF, CRLF or CR; an
/// event ends at an empty line; `data:` lines are joined with LF; one leading space of a
/// value is dropped).
pub(crate) fn sse_data(body: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(body);
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    for line in normalized.split('\n') {
        if line.is_empty() {
            if let Some(d) = data.take() {
                events.push(d);
            }
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    events
}

/// `jsonrpc`, `id` and no `error`: the message's `result`.
fn check_envelope(msg: Value, id: u64) -> Result<Value, String> {
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(format!("not JSON-RPC 2.0: {}", short(&msg)));
    }
    if msg.get("id").and_then(Value::as_u64) != Some(id) {
        return Err(format!("response id is not {id}: {}", short(&msg)));
    }
    if let Some(e) = msg.get("error") {
        return Err(format!("JSON-RPC error {}", short(e)));
    }
    let mut msg = msg;
    msg.get_mut("result")
        .map(Value::take)
        .ok_or_else(|| format!("no result: {}", short(&msg)))
}

/// A `tools/call` result carrying `sum`.
pub(crate) fn check_sum(result: &Value, sum: f64) -> Result<(), String> {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(format!("isError result: {}", short(result)));
    }
    let mut seen = 0;
    if let Some(structured) = result.get("structuredContent") {
        match structured.get("result").and_then(Value::as_f64) {
            Some(v) if v == sum => seen += 1,
            _ => {
                return Err(format!(
                    "structuredContent is not {{\"result\": {sum}}}: {}",
                    short(result)
                ))
            }
        }
    }
    let text = result
        .get("content")
        .and_then(|c| c.get(0))
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|c| c.get("text"))
        .and_then(Value::as_str);
    if let Some(text) = text {
        let value = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| match v {
                Value::Number(n) => n.as_f64(),
                Value::Object(o) => o.get("result").and_then(Value::as_f64),
                _ => None,
            });
        match value {
            Some(v) if v == sum => seen += 1,
            _ => return Err(format!("text content is not the sum {sum}: {text:?}")),
        }
    }
    if seen == 0 {
        return Err(format!(
            "neither structuredContent nor text content: {}",
            short(result)
        ));
    }
    Ok(())
}

/// The negotiated version of an `initialize` result.
pub(crate) fn negotiated(result: &Value) -> Result<String, String> {
    result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "initialize result without protocolVersion: {}",
                short(result)
            )
        })
}

fn short(v: &Value) -> String {
    preview(v.to_string().as_bytes())
}

/// The first 200 bytes of a body, for error messages.
pub(crate) fn preview(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
    if body.len() > 200 {
        s + "..."
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_json() {
        let tool = serde_json::to_string("add").unwrap();
        let v: Value = serde_json::from_slice(&modern_call(7, &tool, 1, 2)).unwrap();
        assert_eq!(v["params"]["arguments"]["b"], 2);
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
        let v: Value = serde_json::from_slice(&legacy_call(7, &tool, 1, 2)).unwrap();
        assert_eq!(v["id"], 7);
        let v: Value = serde_json::from_slice(&initialize(0, "2025-11-25")).unwrap();
        assert_eq!(v["params"]["protocolVersion"], "2025-11-25");
        let _: Value = serde_json::from_slice(INITIALIZED).unwrap();
    }

    #[test]
    fn json_and_sse_answers() {
        let ok = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"result\":5.0}"}],"structuredContent":{"result":5.0}}}"#;
        let r = response(Some("application/json"), ok, 3).unwrap();
        check_sum(&r, 5.0).unwrap();
        assert!(check_sum(&r, 6.0).is_err());
        assert!(response(Some("application/json"), ok, 4).is_err());
        let mut sse = b"id: 0-0\r\nretry: 500\r\ndata: \r\n\r\nevent: message\ndata: ".to_vec();
        sse.extend_from_slice(ok);
        sse.extend_from_slice(b"\n\n");
        let r = response(Some("text/event-stream"), &sse, 3).unwrap();
        check_sum(&r, 5.0).unwrap();
        // The same response twice is an error; so is none.
        let mut twice = sse.clone();
        twice.extend_from_slice(b"data: ");
        twice.extend_from_slice(ok);
        twice.extend_from_slice(b"\n\n");
        assert!(response(Some("text/event-stream"), &twice, 3).is_err());
        assert!(response(Some("text/event-stream"), b"data: \n\n", 3).is_err());
        assert!(response(Some("text/plain"), ok, 3).is_err());
    }

    #[test]
    fn wrong_results_are_errors() {
        let err = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool"}}"#;
        assert!(response(Some("application/json"), err, 1).is_err());
        let is_error: Value =
            serde_json::from_str(r#"{"content":[{"type":"text","text":"3"}],"isError":true}"#)
                .unwrap();
        assert!(check_sum(&is_error, 3.0).is_err());
        let disagree: Value = serde_json::from_str(
            r#"{"content":[{"type":"text","text":"3"}],"structuredContent":{"result":4}}"#,
        )
        .unwrap();
        assert!(check_sum(&disagree, 3.0).is_err());
        let text_only: Value =
            serde_json::from_str(r#"{"content":[{"type":"text","text":"3"}]}"#).unwrap();
        check_sum(&text_only, 3.0).unwrap();
        let empty: Value = serde_json::from_str(r#"{"content":[]}"#).unwrap();
        assert!(check_sum(&empty, 3.0).is_err());
    }
}
