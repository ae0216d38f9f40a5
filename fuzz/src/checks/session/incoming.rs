//! A client message in: its immediate reply (or batch of replies, or id-less errors), the
//! calls handed out, the client responses routed to calls, the claims on its replies, and the
//! acknowledgement of `subscriptions/listen`; framed streams and oversized lines.

use super::super::raw;
use super::drain::Cancels;
use super::expect::{huge_numbers, raw_get, Expect};
use super::grammar::Msg;
use super::model::{remove_one, Kind, Model, Tok};
use super::render::{Claim, INVALID_STATE};
use super::runner::{Outcome, Runner};
use super::MODERN;
use mcp_rs_core::wire::framing::{Frame as LineFrame, LineFramer};
use mcp_rs_core::{CallToken, ClientOutcome, Route, Transmit};
use serde_json::Value;

impl Runner<'_, '_> {
    /// Sends one message and checks its replies, calls, routed responses and the output
    /// that follows.
    pub(super) fn send(&mut self, bytes: &[u8], take: u8) {
        if std::env::var_os("MCP_FUZZ_TRACE").is_some() {
            eprintln!("  send {}", String::from_utf8_lossy(bytes));
        }
        self.m.report.messages += 1;
        let rendered = std::mem::take(&mut self.claims);
        let mut e = self.m.expect(&self.session, bytes);
        if e.unreadable {
            self.m.report.unreadable_messages += 1;
            let text = std::str::from_utf8(bytes).expect("serde_json read it as UTF-8");
            for r in huge_numbers(text) {
                self.m.unreadable_numbers.insert(text[r].to_string());
            }
        } else {
            e.claims.extend(rendered);
        }
        for id in &e.ids {
            self.m.owe(id);
        }
        // Responses to server-to-client requests are taken with the calls (always when
        // the model cannot read the message: it could not tell which were delivered).
        let take_responses = take < 200 || e.unreadable;
        let take = if take < 200 {
            usize::MAX
        } else {
            usize::from(take - 200)
        };
        self.model_expire();
        let mut incoming = self
            .session
            .handle(&mut self.server, self.m.now, bytes, &mut self.out)
            .expect("handle");
        let transmit = incoming.transmit();
        let subscription = incoming.subscription();
        let mut taken = Vec::new();
        while taken.len() < take {
            let Some(call) = incoming.next_call(&mut self.session) else {
                break;
            };
            taken.push(self.take_call(&call));
        }
        let mut responses: Vec<(CallToken, Outcome)> = Vec::new();
        if take_responses {
            while let Some(r) = incoming.next_response(&mut self.session) {
                let outcome = match r.outcome {
                    ClientOutcome::Result(v) => Ok(v.as_str().to_string()),
                    ClientOutcome::Error { code, message } => {
                        Err((code, message.chars().collect()))
                    }
                };
                responses.push((r.call, outcome));
                assert!(responses.len() <= 4096, "next_response does not terminate");
            }
        }
        drop(incoming);

        // The immediate reply.
        let mut owed = e.ids.clone();
        let mut idless = 0usize;
        let mut batch_overflow = false;
        let mut replied: Vec<(String, Value)> = Vec::new();
        let reply_text = transmit
            .map(|tx| String::from_utf8_lossy(&self.out[..tx.len]).into_owned())
            .unwrap_or_default();
        if let (Some(tx), Some(sub)) = (transmit, subscription) {
            self.listen_ack(&e, bytes, tx, sub, &mut owed);
        } else if let Some(tx) = transmit {
            assert_eq!(tx.route, Route::Reply);
            let (v, text) = self.m.frame(&self.out[..tx.len]);
            let items: Vec<(Value, String)> = match &v {
                Value::Array(a) => {
                    assert!(e.batch, "array reply to a single message");
                    assert!(!a.is_empty(), "empty batch reply");
                    let raws = raw::elements(&text).unwrap();
                    a.iter()
                        .cloned()
                        .zip(raws.into_iter().map(String::from))
                        .collect()
                }
                _ => vec![(v.clone(), text.clone())],
            };
            if e.batch && !v.is_array() && v.pointer("/error/code") == Some(&Value::from(-32603)) {
                batch_overflow = v.get("id").is_none();
            }
            for (item, itext) in items {
                let id = Model::response_id(&item, &itext);
                self.m
                    .record_reply(&self.session, &mut e, &item, id.as_deref());
                match id {
                    // The message's ids are unknown: the server echoes ids raw, so the
                    // reply's id must at least occur in the message.
                    Some(id) if e.unreadable => {
                        assert!(
                            bytes.windows(id.len()).any(|w| w == id.as_bytes()),
                            "reply {item} to id {id}, which the message does not contain"
                        );
                        self.m.report.replies += 1;
                    }
                    Some(id) => {
                        if !remove_one(&mut owed, &id) {
                            panic!("reply {item} to id {id} which this message did not carry (expected {:?})", e.ids);
                        }
                        self.m.pay(&id, "immediate reply");
                        replied.push((id, item));
                    }
                    None => idless += 1,
                }
            }
        }
        // Documented (`handle_batch`): replies of a batch that do not fit are replaced by
        // one id-less error; its deferred calls go on. Settled after the drain below.
        let batch_overflow = batch_overflow && !e.unreadable;
        if !e.unreadable && !batch_overflow {
            assert!(
                idless >= e.idless,
                "expected {} id-less error(s), got {idless} for {}",
                e.idless,
                String::from_utf8_lossy(bytes)
            );
            for _ in 0..idless - e.idless {
                // A reply whose id was too long to echo in the output buffer.
                let i = owed
                    .iter()
                    .position(|id| self.m.is_long(id))
                    .unwrap_or_else(|| {
                        panic!(
                            "unexpected id-less reply to {}: {reply_text}",
                            String::from_utf8_lossy(bytes)
                        )
                    });
                let id = owed.remove(i);
                self.m.pay(&id, "id-less reply");
            }
        }
        self.check_claims(&e, &replied, batch_overflow || e.unreadable);

        // Deferred calls: `owed` now holds the ids still waiting for an answer.
        let mut unmarked = Vec::new();
        for (token, seq, mut tok) in taken {
            assert!(
                !self.m.tokens.get(&token).is_some_and(|t| t.live),
                "token handed out twice"
            );
            let by_marker = seq
                .and_then(|s| e.seq.get(&s))
                .filter(|id| owed.contains(id))
                .cloned();
            match by_marker {
                Some(id) => {
                    remove_one(&mut owed, &id);
                    tok.id = Some(id);
                }
                None => unmarked.push(token),
            }
            self.m.tokens.insert(token, tok);
            self.m.order.push(token);
        }
        self.check_responses(&e, bytes, responses, take_responses);
        if e.unreadable {
            // Its calls (handed out or not) are owed as wildcards: each is answered once.
            self.drain_unchecked(Cancels::Unknown);
            let n = unmarked.len() + self.settle_untaken();
            self.m.pool_any += n;
            self.m.outstanding_any += n;
            self.check_in_flight();
        } else if batch_overflow {
            // The ids left are deferred calls (handed out or not) or requests whose
            // immediate reply the overflow dropped: all wait in the pool, and the dropped
            // ones (their number is known once the new calls are counted) are excused.
            self.m.report.overflowed_batches += 1;
            let waiting = owed.len();
            self.m.pool.append(&mut owed);
            self.drain_unchecked(Cancels::Known(&e.cancels));
            let calls = unmarked.len() + self.settle_untaken();
            let dropped = waiting.checked_sub(calls).unwrap_or_else(|| {
                panic!("{calls} calls from an overflowed batch with {waiting} ids left")
            });
            self.excuse(dropped);
            self.check_in_flight();
        } else {
            if unmarked.len() == 1 && owed.len() == 1 {
                self.m.tokens.get_mut(&unmarked[0]).unwrap().id = owed.pop();
                unmarked.clear();
            }
            assert!(
                owed.len() >= unmarked.len(),
                "more calls handed out than requests left unanswered"
            );
            self.m.untaken += (owed.len() - unmarked.len()) as isize;
            self.m.pool.append(&mut owed);
            self.drain(Cancels::Known(&e.cancels));
        }
    }

    /// The reply to `subscriptions/listen`: the acknowledgement (a notification carrying
    /// the request id as `subscriptionId`) naming exactly the honoured filter. The
    /// request stays owed its one response (the close) unless it is cancelled.
    fn listen_ack(
        &mut self,
        e: &Expect,
        bytes: &[u8],
        tx: Transmit,
        token: CallToken,
        owed: &mut Vec<String>,
    ) {
        assert_eq!(tx.route, Route::Reply);
        let (v, text) = self.m.frame(&self.out[..tx.len]);
        assert_eq!(
            v.get("method").and_then(Value::as_str),
            Some("notifications/subscriptions/acknowledged"),
            "listen acknowledgement: {v}"
        );
        assert!(v.get("id").is_none(), "acknowledgement with an id: {v}");
        let sub = raw_get(&text, "params")
            .and_then(|p| raw_get(p, "_meta"))
            .and_then(|m| raw_get(m, "io.modelcontextprotocol/subscriptionId"))
            .unwrap_or_else(|| panic!("acknowledgement without subscriptionId: {v}"))
            .to_string();
        assert!(
            !self.m.tokens.get(&token).is_some_and(|t| t.live),
            "listen token handed out twice"
        );
        let filter = v
            .pointer("/params/notifications")
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("acknowledgement without notifications: {v}"));
        let keys = [
            ("toolsListChanged", 1u8, true),
            ("promptsListChanged", 2, !self.m.minimal),
            ("resourcesListChanged", 4, !self.m.minimal),
        ];
        let honoured: u8 = keys
            .iter()
            .filter(|(k, _, _)| filter.get(*k) == Some(&Value::Bool(true)))
            .map(|(_, b, _)| b)
            .sum();
        assert_eq!(
            filter.len(),
            honoured.count_ones() as usize,
            "acknowledged filter names only honoured lists, as true: {v}"
        );
        let mut tok = Tok::new(None, Kind::Listen, MODERN.into());
        if e.unreadable {
            assert!(bytes.windows(sub.len()).any(|w| w == sub.as_bytes()));
            // Owed as a wildcard, like the calls of an unreadable message.
            self.m.pool_any += 1;
            self.m.outstanding_any += 1;
        } else {
            assert!(
                remove_one(owed, &sub),
                "acknowledgement for {sub}, which this message did not carry"
            );
            let text = std::str::from_utf8(bytes).expect("readable message");
            let asked = raw_get(text, "params").and_then(|p| raw_get(p, "notifications"));
            let want: u8 = keys
                .iter()
                .filter(|(k, _, offered)| {
                    *offered
                        && self.m.list_changed
                        && asked.and_then(|n| raw_get(n, k)) == Some("true")
                })
                .map(|(_, b, _)| b)
                .sum();
            assert_eq!(honoured, want, "acknowledged filter {v} for {text}");
            tok.id = Some(sub);
        }
        tok.listen = honoured | if honoured & 4 != 0 { 8 } else { 0 };
        self.m.record(v, MODERN.into(), None);
        self.m.tokens.insert(token, tok);
        self.m.order.push(token);
        self.m.report.listens += 1;
    }

    /// Checks the claims on this message's immediate replies.
    pub(super) fn check_claims(&mut self, e: &Expect, replied: &[(String, Value)], excused: bool) {
        for (id, claim) in &e.claims {
            if e.ids.iter().filter(|i| *i == id).count() != 1 {
                continue; // which reply answers which request is ambiguous
            }
            let strict = e
                .claims
                .iter()
                .any(|(i, c)| i == id && matches!(c, Claim::StrictState));
            let Some(v) = replied.iter().find(|(i, _)| i == id).map(|(_, v)| v) else {
                let at_once = matches!(claim, Claim::BadState | Claim::Fault { .. });
                assert!(
                    !at_once || excused || self.m.is_long(id),
                    "request {id} ({claim:?}) was not answered at once"
                );
                continue;
            };
            self.m.report.claims += 1;
            let err = v.get("error");
            let code = err.and_then(|e| e.get("code")).and_then(Value::as_i64);
            let msg = err.and_then(|e| e.get("message")).and_then(Value::as_str);
            match claim {
                Claim::StrictState => {}
                Claim::BadState => {
                    self.m.report.bad_states += 1;
                    assert!(err.is_some(), "a refused requestState got a result: {v}");
                    if strict {
                        assert_eq!(
                            (code, msg),
                            (Some(-32602), Some(INVALID_STATE)),
                            "refused requestState: {v}"
                        );
                    }
                }
                Claim::GoodState => {
                    assert_ne!(
                        msg,
                        Some(INVALID_STATE),
                        "a valid requestState was refused: {v}"
                    )
                }
                Claim::Fault {
                    code: c,
                    full,
                    bare,
                    data,
                } => {
                    assert_eq!(code, Some(*c), "expected error {c} ({full}): {v}");
                    assert!(
                        msg == Some(full.as_str()) || msg == Some(bare.as_str()),
                        "message {msg:?}, expected {full:?} or {bare:?}: {v}"
                    );
                    if let (Some((ptr, want)), Some(d)) = (data, err.and_then(|e| e.get("data"))) {
                        assert_eq!(
                            d.pointer(ptr).and_then(Value::as_str),
                            Some(want.as_str()),
                            "error data {ptr}: {v}"
                        );
                    }
                }
            }
        }
    }

    /// Client responses the session routed (`got`, taken with `next_response` when
    /// `taken`): exactly those naming a request still waiting, each once, with what the
    /// client sent. Wrong, repeated and late ids route nothing.
    fn check_responses(
        &mut self,
        e: &Expect,
        bytes: &[u8],
        got: Vec<(CallToken, Outcome)>,
        taken: bool,
    ) {
        // (call, request id, outcome, may be lost with a call cancelled alongside)
        let mut expected: Vec<(CallToken, u32, Outcome, bool)> = Vec::new();
        if !e.unreadable {
            for (raw_id, outcome) in &e.responses {
                let Ok(id) = raw_id.parse::<u32>() else {
                    continue;
                };
                if expected.iter().any(|x| x.1 == id) {
                    continue; // a repeat in the same batch
                }
                let hit = self
                    .m
                    .tokens
                    .iter()
                    .find(|(_, t)| t.live && t.out.is_some_and(|o| o.id == id && !o.delivered));
                if let Some((token, t)) = hit {
                    let optional = !e.cancels.is_empty()
                        && t.id.as_ref().is_none_or(|c| e.cancels.contains(c));
                    expected.push((*token, id, outcome.clone(), optional));
                }
            }
        }
        for (token, outcome) in got {
            let t = self
                .m
                .tokens
                .get(&token)
                .unwrap_or_else(|| panic!("response routed to an unknown call {token:?}"));
            assert!(t.live, "response routed to a call not in flight: {t:?}");
            let o = t
                .out
                .unwrap_or_else(|| panic!("response routed to a call with no request: {t:?}"));
            assert!(
                !o.delivered && o.deadline > self.m.now,
                "late response routed: {o:?} at {}",
                self.m.now
            );
            if e.unreadable {
                let id = o.id.to_string();
                assert!(
                    bytes.windows(id.len()).any(|w| w == id.as_bytes()),
                    "response routed for request {id}, which the message does not name"
                );
            } else {
                let i = expected
                    .iter()
                    .position(|x| x.0 == token)
                    .unwrap_or_else(|| {
                        panic!(
                            "response routed to {token:?} (request {}), but none in {} answers it",
                            o.id,
                            String::from_utf8_lossy(bytes)
                        )
                    });
                let (_, _, want, _) = expected.remove(i);
                assert_eq!(want, outcome, "routed response differs from the one sent");
            }
            self.m.report.routed += 1;
            self.m.tokens.get_mut(&token).unwrap().out = None;
            self.push_stale(o.id);
        }
        for (token, id, _, optional) in expected {
            assert!(
                !taken || optional,
                "response to request {id} of {token:?} was not routed"
            );
            // Not taken (or lost with a cancelled call): it times out at the next handle.
            if let Some(o) = self.m.tokens.get_mut(&token).and_then(|t| t.out.as_mut()) {
                if o.id == id {
                    o.delivered = true;
                }
            }
        }
    }

    pub(super) fn stream(&mut self, msgs: &[Msg], chunk: u8, max_line: u16, take: u8) {
        let mut data = Vec::new();
        for m in msgs.iter().take(16) {
            data.extend_from_slice(self.render(m).as_bytes());
            data.extend_from_slice(if chunk & 1 == 0 { b"\n" } else { b"\r\n" });
        }
        // Lines may be cut or merged by the framer: no claims.
        self.claims.clear();
        let mut storage = vec![0u8; 64 + usize::from(max_line) % 2048];
        let mut framer = LineFramer::new(&mut storage);
        let size = usize::from(chunk).max(1);
        let mut lines: Vec<Result<Vec<u8>, usize>> = Vec::new();
        for piece in data.chunks(size) {
            let mut input = piece;
            while !input.is_empty() {
                let n = framer.push(input);
                input = &input[n..];
                while let Some(f) = framer.next_frame() {
                    lines.push(match f {
                        LineFrame::Line(l) => Ok(l.to_vec()),
                        LineFrame::Oversized { len } => Err(len),
                    });
                }
            }
        }
        while let Some(f) = framer.finish() {
            lines.push(match f {
                LineFrame::Line(l) => Ok(l.to_vec()),
                LineFrame::Oversized { len } => Err(len),
            });
        }
        let limit = framer.max_len();
        for line in lines {
            match line {
                Ok(l) => self.send(&l, take),
                Err(len) => {
                    assert!(len > limit);
                    self.oversized(limit);
                }
            }
        }
    }

    pub(super) fn oversized(&mut self, limit: usize) {
        let tx = self
            .session
            .handle_oversized(limit, &mut self.out)
            .expect("handle_oversized");
        assert_eq!(tx.route, Route::Reply);
        let (v, text) = self.m.frame(&self.out[..tx.len]);
        assert_eq!(Model::response_id(&v, &text), None);
        assert_eq!(v.pointer("/error/code"), Some(&Value::from(-32600)));
        self.m.record_response(&self.session, &v, None);
    }
}
