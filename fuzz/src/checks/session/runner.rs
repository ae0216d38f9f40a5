//! The [`Runner`]: the session, the server and the model together. It renders messages from
//! what the model knows, hands deferred calls to the model, applies one [`SOp`] at a time, and
//! at the end of a run answers everything and checks that every request had its one reply.

use super::calls::attempt;
use super::expect::call_seq;
use super::grammar::{Msg, ResultGen, SOp};
use super::model::{Kind, Model, Tok};
use super::render::{Claim, Gen};
use super::server::{FuzzServer, PROMPT_NAMES, TOOL_NAMES};
use super::MODERN;
use mcp_rs_core::{CallError, CallToken, ListKind, Request, Session};
use serde_json::Value;

pub(super) struct Runner<'s, 'a> {
    pub(super) session: Session<'a>,
    pub(super) server: FuzzServer,
    pub(super) out: Vec<u8>,
    pub(super) m: Model,
    /// Claims of the messages rendered for the next `send` (see `Claim`).
    pub(super) claims: Vec<(String, Claim)>,
    pub(super) _s: std::marker::PhantomData<&'s ()>,
}

/// A deferred request as handed out: its token, seq marker and model entry (id unset).
type Taken = (CallToken, Option<u64>, Tok);

/// What a client response carried: `Ok(raw result)` or `Err((code, message))`.
pub(super) type Outcome = Result<String, (i64, String)>;

impl Runner<'_, '_> {
    pub(super) fn live_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .m
            .tokens
            .values()
            .filter(|t| t.live)
            .filter_map(|t| t.id.clone())
            .collect();
        ids.sort();
        ids
    }

    fn gen(&self) -> Gen<'_> {
        let mut pending_out: Vec<u32> = self
            .m
            .tokens
            .values()
            .filter(|t| t.live)
            .filter_map(|t| t.out.map(|o| o.id))
            .collect();
        pending_out.sort_unstable();
        Gen {
            live_ids: self.live_ids(),
            cursors: &self.m.cursors,
            states: self.m.states.iter().map(|s| s.text.clone()).collect(),
            pending_out,
            stale_out: &self.m.stale_out,
            initialized: self.session.negotiated_version().is_some(),
            minimal: self.m.minimal,
            seq: self.m.seq,
            claims: Vec::new(),
        }
    }

    pub(super) fn render(&mut self, msg: &Msg) -> String {
        let mut g = self.gen();
        let text = msg.render(&mut g);
        let (seq, claims) = (g.seq, g.claims);
        self.m.seq = seq;
        self.claims.extend(claims);
        text
    }

    pub(super) fn check_in_flight(&self) {
        let n = self.session.calls_in_flight();
        assert!(
            n <= self.m.capacity,
            "{n} calls in flight with capacity {}",
            self.m.capacity
        );
        let live = self.live_count();
        assert!(self.m.untaken >= 0, "untaken {} < 0", self.m.untaken);
        assert_eq!(
            n as isize,
            live + self.m.untaken,
            "calls in flight vs model (live {live}, untaken {})",
            self.m.untaken
        );
    }

    pub(super) fn live_count(&self) -> isize {
        self.m.tokens.values().filter(|t| t.live).count() as isize
    }

    /// After the drain of a message whose new calls the model could not list: the calls
    /// it added to the table and never handed out, from the session's count.
    pub(super) fn settle_untaken(&mut self) -> usize {
        let n = self.session.calls_in_flight() as isize - self.live_count() - self.m.untaken;
        let n = usize::try_from(n)
            .unwrap_or_else(|_| panic!("fewer calls in flight than the model has ({n} new)"));
        self.m.untaken += n as isize;
        n
    }

    /// The session clock reached `m.now` (any `handle_*`): requests past their deadline,
    /// and responses the application did not take, are owed a timeout.
    pub(super) fn model_expire(&mut self) {
        let now = self.m.now;
        self.m.book.borrow_mut().now = now;
        let mut due = Vec::new();
        for (token, t) in self.m.tokens.iter_mut() {
            if let (true, Some(o)) = (t.live, t.out) {
                if o.delivered || o.deadline <= now {
                    due.push((*token, o.id, false));
                    t.out = None;
                }
            }
        }
        self.m.due.extend(due);
    }

    /// The model entry of a deferred request handed out (checks what the handler sees).
    pub(super) fn take_call(&self, call: &mcp_rs_core::Call<'_>) -> Taken {
        let book = self.m.book.borrow();
        let (kind, version, target, wants) = match &call.request {
            Request::Tool(t) => {
                let args: Value = self.m.read(t.args().as_str()).expect("call args are JSON");
                assert!(args.is_object(), "call args are an object");
                let name: String = t.name().chars().collect();
                assert!(
                    TOOL_NAMES.contains(&name.as_str()),
                    "deferred call of unknown tool {name}"
                );
                book.verify("tools/call", t.name().raw(), t.input().state());
                let target = t.name().raw().to_string();
                (Kind::Tool, t.version(), target, Some(t.wants_progress()))
            }
            Request::Read(r) => {
                book.verify("resources/read", r.uri().raw(), r.input().state());
                (Kind::Read, r.version(), r.uri().raw().to_string(), None)
            }
            Request::Prompt(p) => {
                let name: String = p.name().chars().collect();
                assert!(
                    PROMPT_NAMES.contains(&name.as_str()),
                    "deferred prompt {name} is unknown"
                );
                book.verify("prompts/get", p.name().raw(), p.input().state());
                (Kind::Prompt, p.version(), p.name().raw().to_string(), None)
            }
            Request::Complete(c) => (Kind::Complete, c.version(), String::new(), None),
            _ => panic!("deferred request of an unknown kind"),
        };
        let rev = if version.is_modern() {
            MODERN.to_string()
        } else {
            version.as_str().to_string()
        };
        let mut tok = Tok::new(None, kind, rev);
        tok.wants_progress = wants;
        tok.target = target;
        tok.caps = self.session.client_capabilities();
        (call.token(), call_seq(&call.request), tok)
    }

    pub(super) fn op(&mut self, op: &SOp) {
        match op {
            SOp::Send { msg, take } => {
                let text = self.render(msg);
                self.send(text.as_bytes(), *take);
            }
            SOp::Batch { msgs, take } => {
                let items: Vec<String> = msgs.iter().take(24).map(|m| self.render(m)).collect();
                let text = format!("[{}]", items.join(","));
                self.send(text.as_bytes(), *take);
            }
            SOp::Raw(bytes) => self.send(bytes, 0),
            SOp::Truncated { msg, cut } => {
                let text = self.render(msg);
                self.claims.clear();
                let cut = usize::from(*cut) % text.len().max(1);
                self.send(&text.as_bytes()[..cut], 0);
            }
            SOp::Stream {
                msgs,
                chunk,
                max_line,
                take,
            } => self.stream(msgs, *chunk, *max_line, *take),
            SOp::Complete { pick, result } => self.complete(*pick, result),
            SOp::Fail {
                pick,
                code,
                message,
            } => self.fail(*pick, *code, message),
            SOp::Progress {
                pick,
                progress,
                total,
                message,
            } => self.progress(*pick, *progress, *total, message.as_deref()),
            SOp::Log {
                pick,
                level,
                logger,
                data,
            } => self.log(*pick, *level, logger.as_deref(), data),
            SOp::ToolsChanged => self.list_changed(ListKind::Tools),
            SOp::Oversized { limit } => self.oversized(usize::from(*limit)),
            SOp::Request {
                pick,
                method,
                timeout,
                bad,
            } => self.request(*pick, *method, *timeout, *bad),
            SOp::Advance { ms, far } => self.advance(*ms, *far),
            SOp::ListChanged { kind } => {
                let kinds = [
                    ListKind::Tools,
                    ListKind::Prompts,
                    ListKind::Resources,
                    ListKind::ResourceTemplates,
                ];
                self.list_changed(kinds[usize::from(*kind) % kinds.len()]);
            }
            SOp::ResourceUpdated { uri } => self.resource_updated(*uri),
        }
    }

    /// Remembers `nextCursor`s for later requests.
    pub(super) fn harvest_cursors(&mut self) {
        let from = self.m.report.frames.len().saturating_sub(4);
        for f in &self.m.report.frames[from..] {
            if let Some(c) = f
                .value
                .pointer("/result/nextCursor")
                .and_then(Value::as_str)
            {
                if !self.m.cursors.iter().any(|x| x == c) {
                    self.m.cursors.push(c.to_string());
                }
            }
        }
        if self.m.cursors.len() > 16 {
            self.m.cursors.remove(0);
        }
    }

    /// End of the run: answer everything (close listen streams), then every request
    /// must have had its reply.
    pub(super) fn finish(&mut self) {
        let live: Vec<CallToken> = self
            .m
            .order
            .iter()
            .copied()
            .filter(|t| self.m.tokens[t].live)
            .collect();
        let done = ResultGen::Text("done".into());
        for token in live {
            let kind = self.m.tokens[&token].kind;
            let tx = match attempt(&mut self.session, &mut self.out, token, kind, &done, None) {
                Err(CallError::BufferTooSmall { required }) => {
                    let mut bigger = vec![0u8; required];
                    let tx = attempt(&mut self.session, &mut bigger, token, kind, &done, None);
                    let saved = std::mem::replace(&mut self.out, bigger);
                    let tx = tx.expect("retry with the required size");
                    let tx = tx.expect("still in flight");
                    self.answered(token, tx.len, tx.route);
                    self.out = saved;
                    continue;
                }
                tx => tx,
            };
            match tx {
                Ok(Some(tx)) => self.answered(token, tx.len, tx.route),
                other => panic!("completing a live call at the end: {other:?}"),
            }
        }
        // Abandons calls that were never taken; their error replies follow.
        self.send(br#"{"jsonrpc":"2.0","method":"notifications/flush"}"#, 0);
        assert_eq!(self.session.calls_in_flight(), 0, "calls left in flight");
        assert_eq!(
            self.session.poll_timeout(),
            None,
            "a request outlived its call"
        );
        // Every request got exactly one reply, except the excused ones, which got none.
        assert_eq!(
            self.m.pool.len() + self.m.pool_any,
            self.m.excused,
            "deferred requests never answered: {:?} and {} of unreadable messages \
             ({} excused)",
            self.m.pool,
            self.m.pool_any,
            self.m.excused
        );
        let unanswered: Vec<_> = self.m.outstanding.iter().filter(|(_, n)| **n > 0).collect();
        let left = unanswered.iter().map(|(_, n)| **n).sum::<usize>() + self.m.outstanding_any;
        assert_eq!(
            left, self.m.excused,
            "requests never answered: {unanswered:?} and {} of unreadable messages \
             ({} excused)",
            self.m.outstanding_any, self.m.excused
        );
    }
}
