//! A small driver around a real `mcp_rs_core::Session` for any `ServerHandler` (the prompt
//! and resource macros' tests).

use mcp_rs_core::{Config, SecretKey, ServerHandler, ServerInfo, Session, SessionStorage};
use serde_json::{json, Value};

/// Initializes a session at `version`, then feeds it `requests` (each a whole JSON-RPC
/// message) and returns every message the server sent after the `initialize` response.
pub(crate) fn run<S: ServerHandler + ?Sized>(
    server: &mut S,
    version: &str,
    requests: &[Value],
) -> Vec<Value> {
    let info = ServerInfo {
        name: "t",
        version: "1",
        ..Default::default()
    };
    let mut storage = SessionStorage::<4>::new();
    let mut session = Session::new(&info, Config::new(SecretKey([7; 16])), &mut storage);
    let mut out = vec![0u8; 8192];
    let mut replies = Vec::new();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":version,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let lines: Vec<String> = [init, initialized]
        .iter()
        .chain(requests)
        .map(|v| v.to_string())
        .collect();
    for line in &lines {
        let incoming = session
            .handle(server, 0, line.as_bytes(), &mut out)
            .unwrap();
        if let Some(tx) = incoming.transmit() {
            replies.push(serde_json::from_slice(&out[..tx.len]).unwrap());
        }
        while let Some(tx) = session.poll_transmit(&mut out).unwrap() {
            replies.push(serde_json::from_slice(&out[..tx.len]).unwrap());
        }
    }
    replies.remove(0);
    replies
}
