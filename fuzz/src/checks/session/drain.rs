//! Draining the session after every step: `poll_transmit` (session frames, and the frames of
//! calls: cancelled server-to-client requests, list changes on listen streams) and
//! `poll_event` (cancellations, timeouts), checked against the model; `poll_timeout`.

use super::expect::raw_get;
use super::model::{Kind, Model, Tok};
use super::runner::Runner;
use super::MODERN;
use mcp_rs_core::{CallToken, Event, Route};
use serde_json::Value;

/// What the model knows about the ids a message's cancellations named.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cancels<'a> {
    Known(&'a [String]),
    /// The message was unreadable for the model (`Expect::unreadable`).
    Unknown,
}

impl Runner<'_, '_> {
    pub(super) fn push_stale(&mut self, id: u32) {
        self.m.stale_out.push(id);
        if self.m.stale_out.len() > 32 {
            self.m.stale_out.remove(0);
        }
    }

    pub(super) fn excuse(&mut self, n: usize) {
        self.m.excused += n;
        self.m.report.excused += n;
    }

    /// Drains `poll_transmit` and `poll_event`, then checks the calls in flight.
    pub(super) fn drain(&mut self, cancels: Cancels<'_>) {
        self.drain_unchecked(cancels);
        self.check_in_flight();
    }

    pub(super) fn drain_unchecked(&mut self, cancels: Cancels<'_>) {
        let mut n = 0;
        while let Some(tx) = self
            .session
            .poll_transmit(&mut self.out)
            .expect("poll_transmit buffer")
        {
            n += 1;
            assert!(n <= 4096, "poll_transmit does not terminate");
            let (v, text) = self.m.frame(&self.out[..tx.len]);
            match tx.route {
                Route::Session => self.session_frame(v, &text),
                Route::Call(token) => self.call_frame(token, v, &text),
                Route::Reply => panic!("poll_transmit with route Reply: {v}"),
            }
        }
        let mut n = 0;
        while let Some(ev) = self.session.poll_event() {
            n += 1;
            assert!(n <= 4096, "poll_event does not terminate");
            match ev {
                Event::Cancelled(token) => {
                    self.m.report.cancels += 1;
                    self.cancelled(token, cancels);
                }
                Event::RequestTimedOut(token) => {
                    let i = self
                        .m
                        .due
                        .iter()
                        .position(|d| d.0 == token && d.2)
                        .unwrap_or_else(|| {
                            panic!("RequestTimedOut({token:?}) without a due, cancelled request")
                        });
                    let (_, id, _) = self.m.due.remove(i);
                    assert!(
                        self.m.tokens.get(&token).is_some_and(|t| t.live),
                        "timeout reported for a call not in flight"
                    );
                    self.push_stale(id);
                    self.m.report.timeouts += 1;
                }
                _ => {}
            }
        }
        // Every timeout owed was reported, except those of calls cancelled meanwhile
        // (their requests are forgotten with them).
        for (token, id, sent) in std::mem::take(&mut self.m.due) {
            let live = self.m.tokens.get(&token).is_some_and(|t| t.live);
            assert!(
                !live && !sent,
                "request {id} of {token:?} timed out, but it was not reported (cancellation sent: {sent})"
            );
            self.push_stale(id);
        }
        for (token, method) in std::mem::take(&mut self.m.listen_owed) {
            assert!(
                !self.m.tokens.get(&token).is_some_and(|t| t.live),
                "{method} was not sent on listen stream {token:?}"
            );
        }
        let next = self
            .m
            .tokens
            .values()
            .filter(|t| t.live)
            .filter_map(|t| t.out)
            .filter(|o| !o.delivered)
            .map(|o| o.deadline)
            .min();
        assert_eq!(
            self.session.poll_timeout(),
            next,
            "poll_timeout is the earliest deadline of a waiting request"
        );
    }

    /// A session frame: a legacy list change, or the error reply to a call never taken.
    fn session_frame(&mut self, v: Value, text: &str) {
        if v.get("method").is_some() {
            self.m.nurse_notification(&v, None);
            let rev = Model::legacy_rev(&self.session);
            self.m.record(v, rev, None);
            return;
        }
        let id = Model::response_id(&v, text)
            .unwrap_or_else(|| panic!("abandoned-call reply without id: {v}"));
        assert_eq!(v.pointer("/error/code"), Some(&Value::from(-32603)), "{v}");
        self.m.record_response(&self.session, &v, Some(&id));
        assert!(
            self.m.take_pool(&id),
            "abandoned reply to {id}, which was not waiting"
        );
        self.m.untaken -= 1;
        self.m.pay(&id, "abandoned-call reply");
    }

    /// A frame `poll_transmit` sent for a call: the cancellation of its timed-out request,
    /// or a list change on a listen stream. Never a response.
    fn call_frame(&mut self, token: CallToken, v: Value, text: &str) {
        let t = self
            .m
            .tokens
            .get(&token)
            .cloned()
            .unwrap_or_else(|| panic!("frame for an unknown call: {v}"));
        assert!(t.live, "frame for a call not in flight: {v}");
        assert!(v.get("id").is_none(), "poll_transmit answered a call: {v}");
        let method = v
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if method == "notifications/cancelled" {
            let id = v
                .pointer("/params/requestId")
                .and_then(Value::as_u64)
                .unwrap_or_else(|| panic!("cancellation without a numeric request id: {v}"));
            let d = self
                .m
                .due
                .iter_mut()
                .find(|d| d.0 == token && u64::from(d.1) == id && !d.2)
                .unwrap_or_else(|| panic!("cancelled request {id} of {token:?}, not due: {v}"));
            d.2 = true;
            self.m.record(v, t.rev, None);
            return;
        }
        assert_eq!(t.kind, Kind::Listen, "list change on a call: {v}");
        let i = self
            .m
            .listen_owed
            .iter()
            .position(|(k, m)| *k == token && *m == method)
            .unwrap_or_else(|| panic!("{method} not owed to listen stream {token:?}: {v}"));
        self.m.listen_owed.remove(i);
        let sub = raw_get(text, "params")
            .and_then(|p| raw_get(p, "_meta"))
            .and_then(|m| raw_get(m, "io.modelcontextprotocol/subscriptionId"));
        if let Some(id) = &t.id {
            assert_eq!(
                sub,
                Some(id.as_str()),
                "list change tagged with another id: {v}"
            );
        }
        self.m.report.listen_changes += 1;
        self.m.record(v, MODERN.into(), None);
    }

    fn cancelled(&mut self, token: CallToken, cancels: Cancels<'_>) {
        // The waiting request a known cancellation names: an exact pool entry, else a
        // request of an unreadable message (any id).
        let from_pool = |m: &mut Model, cancels: &[String]| -> String {
            if let Some(i) = m.pool.iter().position(|id| cancels.contains(id)) {
                return m.pool.remove(i);
            }
            assert!(
                m.pool_any > 0 && !cancels.is_empty(),
                "cancel event without a matching cancellation"
            );
            m.pool_any -= 1;
            cancels[0].clone()
        };
        match self.m.tokens.get(&token).cloned() {
            Some(t) => {
                assert!(t.live, "cancel event for a call that is not in flight");
                match (t.id, cancels) {
                    (Some(id), Cancels::Known(c)) => {
                        assert!(
                            c.contains(&id),
                            "call {id} cancelled, but no cancellation named it"
                        );
                        self.m.pay(&id, "cancellation");
                    }
                    (Some(id), Cancels::Unknown) => self.m.pay(&id, "cancellation"),
                    (None, Cancels::Known(c)) => {
                        let id = from_pool(&mut self.m, c);
                        self.m.pay(&id, "cancellation");
                    }
                    // Which waiting request it was is unknown: its entry stays, excused.
                    (None, Cancels::Unknown) => self.excuse(1),
                }
                let t = self.m.tokens.get_mut(&token).unwrap();
                t.live = false;
                t.cancelled = true;
                // Its server-to-client request is forgotten with it.
                if let Some(o) = t.out.take() {
                    self.push_stale(o.id);
                }
            }
            None => {
                // A call cancelled before it was handed out.
                self.m.untaken -= 1;
                match cancels {
                    Cancels::Known(c) => {
                        let id = from_pool(&mut self.m, c);
                        self.m.pay(&id, "cancellation");
                    }
                    Cancels::Unknown => self.excuse(1),
                }
                let mut t = Tok::new(None, Kind::Tool, MODERN.into());
                t.live = false;
                t.cancelled = true;
                self.m.tokens.insert(token, t);
                self.m.order.push(token);
            }
        }
    }
}
