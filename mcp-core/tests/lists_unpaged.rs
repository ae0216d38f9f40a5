//! Lists without the `pagination` feature (what the firmware builds): every list is answered
//! whole whatever `page_size` says, no `nextCursor` is ever written, a `cursor` is -32602
//! "Invalid cursor" (`null` is no cursor), and a list larger than the output buffer is
//! -32603 "Response exceeds the output buffer" with `data.required`, in both eras.
//!
//! Only compiled without the feature: run it with
//! `cargo test -p mcp-rs-core --no-default-features --test lists_unpaged` (scripts/test.sh
//! does); with `pagination` (the default) tests/lists.rs covers paging.
#![cfg(not(feature = "pagination"))]

use mcp_rs_core::{
    CallRequest, Config, Dispatch, SecretKey, ServerInfo, Session, SessionStorage, Tool,
    ToolResult, ToolSet, ToolsOnly,
};
use serde_json::{json, Value};

const OBJECT: &str = r#"{"type":"object"}"#;
/// Twenty tools, about 0.9 KiB listed: more than `MIN_OUTPUT` (512).
const NAMES: [&str; 20] = [
    "t00", "t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10", "t11", "t12",
    "t13", "t14", "t15", "t16", "t17", "t18", "t19",
];

struct Twenty;

impl ToolSet for Twenty {
    fn len(&self) -> usize {
        NAMES.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        NAMES.get(index).map(|n| Tool::new(n, OBJECT))
    }
    fn call(&mut self, _: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
        r.text("ok");
        Dispatch::Done
    }
}

static INFO: ServerInfo<'static> = ServerInfo {
    name: "unpaged",
    version: "1.0.0",
    title: None,
    description: None,
    website_url: None,
    icons: &[],
    instructions: None,
};

/// A session with `page_size` 1 (ignored without `pagination`), initialized in 2025-11-25
/// when `legacy`.
fn session(legacy: bool) -> Session<'static> {
    let storage: &'static mut SessionStorage<1> = Box::leak(Box::new(SessionStorage::new()));
    let config = Config {
        page_size: 1,
        ..Config::new(SecretKey([9; 16]))
    };
    let mut s = Session::new(&INFO, config, storage);
    if legacy {
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"t","version":"0"}}});
        assert!(ask(&mut s, &init, 4096)["result"].is_object());
        let done = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let mut out = [0u8; 4096];
        let mut tools = Twenty;
        let r = s.handle(&mut ToolsOnly(&mut tools), 0, done, &mut out);
        assert!(r.expect("handle").transmit().is_none());
    }
    s
}

/// `tools/list` with `params` (plus the 2026-07-28 `_meta` unless `legacy`).
fn list(legacy: bool, params: Value) -> Value {
    let mut params = params;
    if !legacy {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
    }
    json!({"jsonrpc":"2.0","id":7,"method":"tools/list","params":params})
}

/// Sends `msg` and returns its one reply, written into an `out_len`-byte buffer.
fn ask(s: &mut Session<'static>, msg: &Value, out_len: usize) -> Value {
    let text = msg.to_string();
    let mut out = vec![0u8; out_len];
    let mut tools = Twenty;
    let incoming = s
        .handle(&mut ToolsOnly(&mut tools), 0, text.as_bytes(), &mut out)
        .expect("handle");
    let tx = incoming.transmit().expect("a reply");
    serde_json::from_slice(&out[..tx.len]).expect("JSON reply")
}

#[test]
fn every_list_is_one_page_without_a_cursor() {
    for legacy in [true, false] {
        let mut s = session(legacy);
        let r = ask(&mut s, &list(legacy, json!({})), 4096);
        let names: Vec<&str> = r["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(names, NAMES, "legacy {legacy}: {r}");
        assert!(r["result"].get("nextCursor").is_none(), "{r}");
        // `null` is no cursor.
        let r = ask(&mut s, &list(legacy, json!({"cursor": null})), 4096);
        assert_eq!(
            r["result"]["tools"].as_array().map(Vec::len),
            Some(20),
            "{r}"
        );
    }
}

#[test]
fn any_cursor_is_invalid_params() {
    for legacy in [true, false] {
        let mut s = session(legacy);
        // A cursor as a paging server would mint it, garbage, and a non-string.
        for cursor in [
            json!("AgEAAAAAAgAAAJelOIpkLxgb"),
            json!("x"),
            json!(""),
            json!(3),
        ] {
            let r = ask(&mut s, &list(legacy, json!({ "cursor": cursor })), 4096);
            assert_eq!(r["error"]["code"], -32602, "{cursor}: {r}");
            assert_eq!(r["error"]["message"], "Invalid cursor", "{cursor}: {r}");
            assert_eq!(r["id"], 7);
        }
    }
}

#[test]
fn a_list_larger_than_the_buffer_is_an_internal_error_with_the_size() {
    for legacy in [true, false] {
        let mut s = session(legacy);
        let whole = ask(&mut s, &list(legacy, json!({})), 4096).to_string();
        // Too small for the twenty tools, large enough for the error (and `MIN_OUTPUT`).
        assert!(whole.len() > 800, "{whole}");
        let r = ask(&mut s, &list(legacy, json!({})), 600);
        assert_eq!(r["error"]["code"], -32603, "{r}");
        assert_eq!(r["error"]["message"], "Response exceeds the output buffer");
        let required = r["error"]["data"]["required"].as_u64().unwrap_or(0);
        assert!(required as usize > 600, "{r}");
        assert!(
            required as usize <= whole.len() + 64,
            "{required} vs {whole}"
        );
        // One byte more than the list needs answers it whole.
        let r = ask(&mut s, &list(legacy, json!({})), whole.len() + 1);
        assert_eq!(
            r["result"]["tools"].as_array().map(Vec::len),
            Some(20),
            "{r}"
        );
    }
}
