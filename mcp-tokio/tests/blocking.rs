//! `Server::serve_blocking` (no async runtime): synchronous tools are answered, async ones
//! get -32603, a sync handler that panics becomes an error result, an oversized line gets
//! -32600, a tool added between reads is announced, the last unterminated line is answered,
//! and replies are written once per read (not per request).

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use mcp_rs_tokio::{Handler, Limits, Server, ServerInfo, ToolDef, ToolReply, Tools};
use serde_json::{json, Value};

const OBJECT: &str = r#"{"type":"object"}"#;

/// Yields one chunk per `read`; `before(k)` runs before chunk `k` is handed out.
struct Chunks<F: FnMut(usize)> {
    chunks: Vec<Vec<u8>>,
    next: usize,
    before: F,
}

impl<F: FnMut(usize)> Read for Chunks<F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(chunk) = self.chunks.get_mut(self.next) else {
            return Ok(0);
        };
        if buf.len() < chunk.len() {
            let rest = chunk.split_off(buf.len());
            buf.copy_from_slice(chunk);
            *chunk = rest;
            return Ok(buf.len());
        }
        (self.before)(self.next);
        buf[..chunk.len()].copy_from_slice(chunk);
        self.next += 1;
        Ok(chunk.len())
    }
}

/// Records each `write_all` batch.
#[derive(Clone, Default)]
struct Batches(Arc<Mutex<Vec<Vec<u8>>>>);

impl Write for Batches {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().push(buf.to_vec());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn line(v: Value) -> Vec<u8> {
    let mut l = serde_json::to_vec(&v).unwrap();
    l.push(b'\n');
    l
}

#[test]
fn serves_synchronous_tools_without_a_runtime() {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("echo", OBJECT),
        Handler::sync(|req, r| {
            r.text(req.args().as_str());
        }),
    );
    tools.add(
        ToolDef::new("later", OBJECT),
        Handler::async_fn(|_, _| async { ToolReply::text("never") }),
    );
    tools.add(
        ToolDef::new("boom", OBJECT),
        Handler::sync(|_, _| panic!("sync kaboom")),
    );
    let limits = Limits {
        max_frame: 1024,
        ..Limits::default()
    };
    let info = ServerInfo {
        name: "blocking".into(),
        version: "0".into(),
        ..Default::default()
    };
    let config = mcp_rs_core::Config::new(mcp_rs_tokio::random_key());
    let server = Server::with(info, config, limits, tools.clone());

    let call = |id: u64, name: &str| {
        line(
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":{"x":id}}}),
        )
    };
    let mut first = line(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    first.extend(line(
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ));
    first.extend(call(2, "echo"));
    first.extend(call(3, "later"));
    first.extend(call(4, "boom"));
    let mut second = format!("{{\"pad\":\"{}\"}}\n", "x".repeat(2000)).into_bytes();
    second.extend(call(5, "echo"));
    let third = br#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#.to_vec();
    let added = tools.clone();
    let input = Chunks {
        chunks: vec![first, second, third],
        next: 0,
        // Between the first and second read another thread adds a tool.
        before: move |k| {
            if k == 1 {
                added.add(
                    ToolDef::new("new", OBJECT),
                    Handler::sync(|_, r| {
                        r.text("new");
                    }),
                );
            }
        },
    };
    let out = Batches::default();
    server
        .serve_blocking(input, out.clone())
        .expect("served to the end of input");

    let batches = out.0.lock().unwrap().clone();
    assert_eq!(batches.len(), 3, "one write per read: {batches:?}");
    let msgs: Vec<Value> = batches
        .concat()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("JSON line"))
        .collect();
    let by_id = |id: u64| {
        msgs.iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no reply {id}: {msgs:?}"))
    };
    assert_eq!(by_id(1)["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(by_id(2)["result"]["content"][0]["text"], r#"{"x":2}"#);
    let refused = &by_id(3)["error"];
    assert_eq!(refused["code"], -32603, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("without an async runtime"),
        "{refused}"
    );
    assert_eq!(by_id(4)["result"]["isError"], true, "{}", by_id(4));
    assert_eq!(by_id(5)["result"]["content"][0]["text"], r#"{"x":5}"#);
    assert_eq!(by_id(6)["result"], json!({}), "the unterminated last line");
    let oversized = msgs
        .iter()
        .find(|m| m["error"]["code"] == -32600)
        .expect("-32600 for the oversized line");
    assert_eq!(oversized["error"]["data"]["limit"], 1024, "{oversized}");
    let changed = msgs
        .iter()
        .position(|m| m["method"] == "notifications/tools/list_changed")
        .expect("the added tool is announced");
    let reply5 = msgs.iter().position(|m| m["id"] == 5).unwrap();
    assert!(
        changed < reply5,
        "announced before the next reply: {msgs:?}"
    );
}
