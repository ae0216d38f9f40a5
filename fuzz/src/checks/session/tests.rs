//! The model's own accounting: messages it cannot read, overflowed batches and
//! cancellations it cannot attribute relax nothing beyond themselves (run by the replay
//! test, which includes this file).

use super::expect::Expect;
use super::runner::Runner;
use super::*;
use mcp_rs_core::CallToken;
use std::panic::{catch_unwind, AssertUnwindSafe};

const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const READY: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// A deferred call serde_json cannot read (`1e400`), so its id is unknown to the model.
const UNREADABLE_CALL: &[u8] = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"x":1e400}}}"#;
const PING_7: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

fn panic_message(f: impl FnOnce()) -> String {
    let e = catch_unwind(AssertUnwindSafe(f)).expect_err("the model must catch this");
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_default()
}

/// An unreadable call, then a ping: the call is owed once (a wildcard), the ping
/// exactly (its reply was matched to its id).
fn unreadable_then_ping(r: &mut Runner<'_, '_>) {
    for m in [INIT, READY, UNREADABLE_CALL, PING_7] {
        r.send(m, 0);
    }
    assert_eq!(r.m.report.unreadable_messages, 1);
    assert_eq!((r.m.pool_any, r.m.outstanding_any), (1, 1));
    assert_eq!(r.m.outstanding.get("7"), Some(&0));
    assert_eq!(r.live_count(), 1, "the unreadable call was handed out");
}

#[test]
fn unreadable_message_is_answered_exactly_once() {
    let report = with_runner(65536, |r| {
        unreadable_then_ping(r);
        r.finish();
        std::mem::take(&mut r.m.report)
    });
    assert_eq!((report.completions, report.excused), (1, 0));
}

#[test]
fn duplicate_reply_after_an_unreadable_message_is_caught() {
    let msg = with_runner(65536, |r| {
        unreadable_then_ping(r);
        // A second reply to ping 7 (a server bug) can only take the wildcard...
        r.m.pay("7", "duplicate reply");
        // ...so the unreadable call's own completion finds nothing owed.
        panic_message(|| r.finish())
    });
    assert!(msg.contains("nobody is waiting"), "{msg}");
}

#[test]
fn unanswered_request_after_an_unreadable_message_is_caught() {
    let msg = with_runner(65536, |r| {
        unreadable_then_ping(r);
        r.m.owe("8"); // as if a later request had never been answered
        panic_message(|| r.finish())
    });
    assert!(msg.contains("requests never answered"), "{msg}");
}

#[test]
fn echoed_unreadable_id_is_read() {
    let id = "9".repeat(400);
    let ping = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    let report = with_runner(65536, |r| {
        r.send(INIT, 0);
        r.send(READY, 0);
        r.send(ping.as_bytes(), 0);
        r.finish();
        std::mem::take(&mut r.m.report)
    });
    assert_eq!(report.unreadable_messages, 1);
    let last = report.frames.last().expect("the ping's reply");
    assert_eq!(last.value.get("result"), Some(&serde_json::json!({})));
}

#[test]
fn unreadable_cancellations() {
    // Of a call whose id the model knows: that id is paid, nothing is excused.
    let call = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#;
    let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","n":1e400}}"#;
    let report = with_runner(65536, |r| {
        for m in [INIT, READY, &call[..], &cancel[..], PING_7] {
            r.send(m, 0);
        }
        r.finish();
        std::mem::take(&mut r.m.report)
    });
    assert_eq!((report.cancels, report.unreadable_messages), (1, 1));
    assert_eq!((report.completions, report.excused), (0, 0));
    // Of an unreadable call (its id unknown): its wildcard is excused, exactly once.
    let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"n":1e400}}"#;
    let report = with_runner(65536, |r| {
        for m in [INIT, READY, UNREADABLE_CALL, &cancel[..], PING_7] {
            r.send(m, 0);
        }
        assert_eq!((r.m.pool_any, r.m.excused), (1, 1));
        r.finish();
        std::mem::take(&mut r.m.report)
    });
    assert_eq!((report.cancels, report.unreadable_messages), (1, 2));
    assert_eq!((report.completions, report.excused), (0, 1));
}

/// 2025-03-26 batch whose replies exceed a small output buffer: one id-less error
/// replaces them; the deferred call goes on.
fn overflowed_batch(r: &mut Runner<'_, '_>) {
    let mut items = vec![
        r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"slow"}}"#
            .to_string(),
    ];
    for i in 0..12 {
        items.push(format!(
            r#"{{"jsonrpc":"2.0","id":"ping-{i}-{}","method":"ping"}}"#,
            "p".repeat(40)
        ));
    }
    r.send(INIT, 0);
    r.send(READY, 0);
    r.send(format!("[{}]", items.join(",")).as_bytes(), 0);
    assert_eq!(r.m.report.overflowed_batches, 1);
    assert_eq!(r.m.excused, 12, "the 12 pings' replies were dropped");
    assert_eq!(r.live_count(), 1, "the call was handed out");
}

#[test]
fn overflowed_batch_excuses_exactly_its_dropped_replies() {
    let report = with_runner(MIN_OUTPUT_FOR_TESTS, |r| {
        overflowed_batch(r);
        r.send(PING_7, 0);
        r.finish();
        std::mem::take(&mut r.m.report)
    });
    assert_eq!((report.completions, report.excused), (1, 12));
}

#[test]
fn late_reply_to_a_dropped_request_is_caught() {
    let msg = with_runner(MIN_OUTPUT_FOR_TESTS, |r| {
        overflowed_batch(r);
        // As if the server answered a request whose reply the overflow dropped.
        assert!(r
            .m
            .take_pool("\"ping-3-pppppppppppppppppppppppppppppppppppppppp\""));
        r.m.pay(
            "\"ping-3-pppppppppppppppppppppppppppppppppppppppp\"",
            "late reply",
        );
        panic_message(|| r.finish())
    });
    assert!(msg.contains("never answered"), "{msg}");
}

#[test]
fn application_numbers_serde_cannot_read_are_tolerated() {
    let init = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let call = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#;
    let report = with_runner(65536, |r| {
        for m in [&init[..], READY, &call[..]] {
            r.send(m, 0);
        }
        // Odd length: passed to `structured_raw` as is, so 1e999 reaches the frame.
        r.complete(0, &ResultGen::StructuredRaw(r#"{"a":1e999}"#.into()));
        r.finish();
        std::mem::take(&mut r.m.report)
    });
    assert_eq!((report.completions, report.unreadable_messages), (1, 0));
    let last = report.frames.last().expect("the completion");
    assert_eq!(
        last.value.pointer("/result/structuredContent"),
        Some(&serde_json::json!({"a": 0}))
    );
}

const MIN_OUTPUT_FOR_TESTS: usize = mcp_rs_core::MIN_OUTPUT;

/// A 2025-06-18 session whose client declared sampling, with one deferred call that
/// sent `sampling/createMessage` (request id 1, deadline 1000).
fn call_with_request(r: &mut Runner<'_, '_>) -> CallToken {
    let init = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
    let call = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#;
    for m in [&init[..], READY, &call[..]] {
        r.send(m, 0);
    }
    r.request(0, 0, 1000, false);
    assert_eq!(r.m.report.out_requests, 1);
    *r.m.order.last().expect("the call")
}

const RESPONSE_1: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}"#;

#[test]
fn responses_are_routed_once() {
    let report = with_runner(65536, |r| {
        call_with_request(r);
        r.send(RESPONSE_1, 0);
        r.send(RESPONSE_1, 0); // a repeat: ignored
        r.finish();
        std::mem::take(&mut r.m.report)
    });
    assert_eq!((report.routed, report.timeouts), (1, 0));
}

#[test]
fn a_response_routed_to_a_call_without_request_is_caught() {
    let msg = with_runner(65536, |r| {
        let token = call_with_request(r);
        // As if the server routed a response the call is not waiting for.
        r.m.tokens.get_mut(&token).unwrap().out = None;
        panic_message(|| r.send(RESPONSE_1, 0))
    });
    assert!(msg.contains("no request"), "{msg}");
}

#[test]
fn a_response_not_routed_is_caught() {
    let msg = with_runner(65536, |r| {
        let token = call_with_request(r);
        // As if the server ignored a response to a request that is waiting.
        r.m.tokens.get_mut(&token).unwrap().out.as_mut().unwrap().id = 2;
        let response = br#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
        panic_message(|| r.send(response, 0))
    });
    assert!(msg.contains("was not routed"), "{msg}");
}

#[test]
fn a_timeout_not_reported_is_caught() {
    let msg = with_runner(65536, |r| {
        let token = call_with_request(r);
        // As if the server kept a request past its deadline.
        r.m.tokens
            .get_mut(&token)
            .unwrap()
            .out
            .as_mut()
            .unwrap()
            .deadline = 10;
        panic_message(|| r.advance(10, false))
    });
    assert!(msg.contains("was not reported"), "{msg}");
    let report = with_runner(65536, |r| {
        call_with_request(r);
        r.advance(999, false);
        assert_eq!(r.m.report.timeouts, 0);
        r.advance(1, false);
        r.send(RESPONSE_1, 0); // late: ignored
        r.finish();
        std::mem::take(&mut r.m.report)
    });
    assert_eq!((report.routed, report.timeouts), (0, 1));
}

#[test]
fn a_refused_state_answered_with_a_result_is_caught() {
    let msg = with_runner(65536, |r| {
        let e = Expect {
            ids: vec!["1".into()],
            claims: vec![("1".into(), Claim::BadState)],
            ..Expect::default()
        };
        let reply = serde_json::json!({"jsonrpc":"2.0","id":1,"result":{"content":[]}});
        panic_message(|| r.check_claims(&e, &[("1".into(), reply)], false))
    });
    assert!(msg.contains("got a result"), "{msg}");
}

#[test]
fn a_handler_given_a_foreign_state_is_caught() {
    let book = Book {
        now: 5,
        ttl: 10,
        ..Book::default()
    };
    let mut book = book;
    let k = book.issue("tools/call", "wizard");
    book.verify("tools/call", "wizard", Some(&k));
    let msg = panic_message(|| book.verify("tools/call", "echo", Some(&k)));
    assert!(msg.contains("another method or target"), "{msg}");
    book.now = 16;
    let msg = panic_message(|| book.verify("tools/call", "wizard", Some(&k)));
    assert!(msg.contains("expired"), "{msg}");
}
