//! `Session::with_growing_slots` (feature `alloc`): call slots allocated on demand up to a
//! maximum. Invariants: the limit answered when full is the maximum (not the slots
//! allocated so far); tokens handed out before the storage grew stay valid after; a freed
//! slot is reused before the storage grows again.
#[cfg(not(feature = "alloc"))]
compile_error!("needs feature `alloc`: the self dev-dependency in mcp-core/Cargo.toml turns it on");

use mcp_rs_core::{Config, ServerInfo, Session, Tool};
use serde_json::Value;

static TOOLS: [Tool<'static>; 1] = [Tool::new("slow", r#"{"type":"object"}"#)];
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn call(s: &mut Session<'_>, id: u32, out: &mut [u8]) -> Result<mcp_rs_core::CallToken, Value> {
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow",{META}}}}}"#
    );
    let mut tools = TOOLS;
    let mut incoming = s
        .handle_message(&mut tools[..], msg.as_bytes(), out)
        .expect("handle_message");
    if let Some(tx) = incoming.transmit() {
        return Err(serde_json::from_slice(&out[..tx.len]).expect("JSON reply"));
    }
    Ok(incoming.next_call(s).expect("a deferred call").token())
}

#[test]
fn slots_grow_to_the_maximum_and_tokens_survive_growth() {
    let info = ServerInfo {
        name: "s",
        version: "1",
        ..Default::default()
    };
    let mut s = Session::with_growing_slots(&info, Config::new(mcp_rs_core::SecretKey([7; 16])), 5);
    let mut out = [0u8; 4096];
    // 5 calls in flight: the storage grows 0 -> 4 -> 5 on the way.
    let tokens: Vec<_> = (1..=5)
        .map(|id| call(&mut s, id, &mut out).expect("room for 5 calls"))
        .collect();
    assert_eq!(s.calls_in_flight(), 5);
    let full = call(&mut s, 6, &mut out).expect_err("the sixth call is refused");
    assert_eq!(full["id"], 6, "{full}");
    assert_eq!(full["error"]["code"], -32603, "{full}");
    assert_eq!(
        full["error"]["data"]["limit"], 5,
        "the maximum is reported: {full}"
    );
    // The first token (handed out before the storage grew) completes its call.
    let tx = s
        .complete(tokens[0], &mut out, |r| {
            r.text("done");
        })
        .expect("complete")
        .expect("the call was in flight");
    let v: Value = serde_json::from_slice(&out[..tx.len]).expect("JSON");
    assert_eq!(v["id"], 1, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "done", "{v}");
    // Its slot is reused: a new call fits again, the next one does not.
    call(&mut s, 7, &mut out).expect("the freed slot is reused");
    let full = call(&mut s, 8, &mut out).expect_err("full again");
    assert_eq!(full["error"]["data"]["limit"], 5, "{full}");
    for t in &tokens[1..] {
        assert!(s
            .complete(*t, &mut out, |r| {
                r.text("ok");
            })
            .expect("complete")
            .is_some());
    }
    assert_eq!(s.calls_in_flight(), 1);
}
