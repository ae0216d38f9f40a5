//! The application answering deferred calls: completing each kind (also with
//! `input_required`, with results it must refuse, and with the completer of another kind),
//! closing listen streams, and failing calls; what each answer must look like.

use super::drain::Cancels;
use super::expect::{huge_numbers, raw_get};
use super::grammar::ResultGen;
use super::model::{Kind, Model, Tok};
use super::runner::Runner;
use super::server::{all_content, asks};
use super::{jstr, MODERN};
use mcp_rs_core::model::completion::CompletionResult;
use mcp_rs_core::model::prompts::PromptResult;
use mcp_rs_core::model::resources::ReadResult;
use mcp_rs_core::{CallError, CallToken, Content, Role, Route, Session, ToolResult, Transmit};
use serde_json::Value;

/// Completes a deferred request of `kind` (a listen stream: closes it) with `result`.
pub(super) fn attempt(
    s: &mut Session<'_>,
    out: &mut [u8],
    token: CallToken,
    kind: Kind,
    result: &ResultGen,
    state: Option<&str>,
) -> Result<Option<Transmit>, CallError> {
    match kind {
        Kind::Tool => s.complete(token, out, |r| write_tool(r, result, state)),
        Kind::Read => s.complete_read(token, out, |r| write_read(r, result, state)),
        Kind::Prompt => s.complete_prompt(token, out, |r| write_prompt(r, result, state)),
        Kind::Complete => s.complete_completion(token, out, |r| write_completion(r, result)),
        Kind::Listen => s.close_subscription(token, out),
    }
}

fn write_tool(r: &mut ToolResult<'_, '_>, result: &ResultGen, state: Option<&str>) {
    match result {
        ResultGen::Text(s) => {
            r.text(s);
        }
        ResultGen::All => all_content(r),
        ResultGen::Structured(x) => r.structured_with(|w| {
            w.begin_object();
            w.key("x");
            w.f64(*x);
            w.end_object();
        }),
        ResultGen::StructuredRaw(s) => {
            if s.len() % 2 == 0 {
                r.structured_raw(&format!("{{\"v\":{}}}", jstr(s)));
            } else {
                r.structured_raw(s);
            }
        }
        ResultGen::Error(s) => {
            r.fail(format_args!("failed: {s}"));
        }
        ResultGen::Misuse => {
            r.structured_raw("{}");
            r.image("AA==", "image/png");
        }
        ResultGen::Big(n) => {
            r.text(&"z".repeat(usize::from(*n) * 4));
        }
        ResultGen::Empty => {}
        ResultGen::InputRequired { asks: a, .. } => r.input_required(state, |q| asks(q, *a)),
        ResultGen::WrongKind(_) => {
            r.text("wrong kind");
        }
    }
}

fn write_read(r: &mut ReadResult<'_, '_>, result: &ResultGen, state: Option<&str>) {
    const URI: &str = "test://done";
    match result {
        ResultGen::Text(s) => {
            r.text(URI, Some("text/plain"), s);
        }
        ResultGen::All => {
            r.text(URI, None, "a")
                .blob(URI, Some("application/octet-stream"), "AAEC");
        }
        ResultGen::Structured(_) | ResultGen::StructuredRaw(_) => {
            r.blob(URI, None, "AAEC");
        }
        ResultGen::Error(_) => r.not_found(),
        ResultGen::Misuse => {
            r.text(URI, None, "x");
            r.input_required(None, |q| asks(q, 7));
        }
        ResultGen::Big(n) => {
            r.text(URI, None, &"z".repeat(usize::from(*n) * 4));
        }
        ResultGen::Empty => {}
        ResultGen::InputRequired { asks: a, .. } => r.input_required(state, |q| asks(q, *a)),
        ResultGen::WrongKind(_) => {
            r.text(URI, None, "w");
        }
    }
}

fn write_prompt(r: &mut PromptResult<'_, '_>, result: &ResultGen, state: Option<&str>) {
    match result {
        ResultGen::Text(s) => {
            r.message(Role::User, &Content::Text(s));
        }
        ResultGen::All => {
            r.description("all")
                .message(Role::User, &Content::Text("a"))
                .message(
                    Role::Assistant,
                    &Content::Image {
                        data: "AA==",
                        mime_type: "image/png",
                    },
                );
        }
        ResultGen::Error(s) => {
            r.description(s);
        }
        ResultGen::Misuse => {
            r.message(Role::User, &Content::Text("a"));
            r.description("too late");
        }
        ResultGen::Big(n) => {
            r.message(Role::User, &Content::Text(&"z".repeat(usize::from(*n) * 4)));
        }
        ResultGen::InputRequired { asks: a, .. } => r.input_required(state, |q| asks(q, *a)),
        ResultGen::Empty
        | ResultGen::Structured(_)
        | ResultGen::StructuredRaw(_)
        | ResultGen::WrongKind(_) => {}
    }
}

fn write_completion(r: &mut CompletionResult<'_, '_>, result: &ResultGen) {
    match result {
        ResultGen::Text(s) => {
            r.value(s);
        }
        ResultGen::Big(n) => {
            for i in 0..usize::from(*n) % 300 {
                r.value(&format!("v{i}"));
            }
            r.total(u64::from(*n));
        }
        ResultGen::All => {
            r.value("a").value("b").has_more(true);
        }
        _ => {}
    }
}

/// Whether completing a live call of `kind` with `result` must be refused as a misuse
/// (`Some(true)`), must succeed (`Some(false)`), or either (`None`: it depends on the
/// client capabilities an `input_required` could ask for, or on raw JSON validity).
fn misuse(kind: Kind, result: &ResultGen, modern: bool) -> Option<bool> {
    match (kind, result) {
        (Kind::Complete | Kind::Listen, _) => Some(false),
        (_, ResultGen::InputRequired { state, asks }) => {
            if !modern || asks & 8 != 0 {
                Some(true)
            } else if *state {
                Some(false)
            } else {
                None
            }
        }
        (Kind::Tool, ResultGen::StructuredRaw(_)) => None,
        (_, ResultGen::Misuse) => Some(true),
        _ => Some(false),
    }
}

impl Runner<'_, '_> {
    pub(super) fn pick(&self, pick: u8) -> Option<CallToken> {
        let live: Vec<CallToken> = self
            .m
            .order
            .iter()
            .copied()
            .filter(|t| self.m.tokens[t].live)
            .collect();
        if pick < 200 && !live.is_empty() {
            return Some(live[usize::from(pick) % live.len()]);
        }
        if self.m.order.is_empty() {
            return None;
        }
        Some(self.m.order[usize::from(pick) % self.m.order.len()])
    }

    /// A response the application sent for `token` (a listen stream: its close).
    pub(super) fn answered(&mut self, token: CallToken, len: usize, route: Route) {
        assert_eq!(route, Route::Call(token));
        let t = self.m.tokens.get(&token).cloned().expect("known token");
        assert!(t.live, "a call that is not in flight was answered");
        let (v, text) = self.m.frame(&self.out[..len]);
        let id = Model::response_id(&v, &text).expect("completion carries an id");
        match &t.id {
            Some(known) => assert_eq!(&id, known, "completion answered the wrong request"),
            None => assert!(
                self.m.take_pool(&id),
                "completion for {id}, which is not waiting"
            ),
        }
        if t.kind == Kind::Listen {
            let sub = raw_get(&text, "result")
                .and_then(|r| raw_get(r, "_meta"))
                .and_then(|m| raw_get(m, "io.modelcontextprotocol/subscriptionId"));
            assert_eq!(
                sub,
                Some(id.as_str()),
                "listen close tagged with its id: {v}"
            );
        }
        self.m
            .record(v.clone(), t.rev.clone(), Some(t.kind.method().into()));
        self.m.pay(&id, "completion");
        self.m.report.completions += 1;
        let t = self.m.tokens.get_mut(&token).unwrap();
        t.live = false;
        if let Some(o) = t.out.take() {
            self.push_stale(o.id);
        }
    }

    pub(super) fn dead_call(&self, token: CallToken, r: &Result<Option<Transmit>, CallError>) {
        let t = &self.m.tokens[&token];
        match r {
            Ok(None) => assert!(
                t.cancelled || (t.live && t.wants_progress != Some(true)),
                "Ok(None) for {t:?}"
            ),
            Err(CallError::UnknownCall) => assert!(
                !t.live || t.kind == Kind::Listen,
                "live call reported unknown: {t:?}"
            ),
            _ => {}
        }
    }

    /// Answers a call (by its kind, or with the completer of `WrongKind`).
    pub(super) fn complete(&mut self, pick: u8, result: &ResultGen) {
        let Some(token) = self.pick(pick) else { return };
        let t = self.m.tokens[&token].clone();
        let kinds = [
            Kind::Tool,
            Kind::Read,
            Kind::Prompt,
            Kind::Complete,
            Kind::Listen,
        ];
        let kind = match result {
            ResultGen::WrongKind(k) => kinds[usize::from(*k) % kinds.len()],
            _ => t.kind,
        };
        if let ResultGen::StructuredRaw(s) = result {
            for r in huge_numbers(s) {
                self.m.unreadable_numbers.insert(s[r].to_string());
            }
        }
        let state = match result {
            ResultGen::InputRequired { state: true, .. } if t.live => {
                Some(self.m.book.borrow_mut().issue(t.kind.method(), &t.target))
            }
            _ => None,
        };
        let state = state.as_deref();
        let res = attempt(&mut self.session, &mut self.out, token, kind, result, state);
        let modern = t.rev == MODERN;
        // A call completed as a listen stream or the other way round: unknown.
        let one_listen = (kind == Kind::Listen) != (t.kind == Kind::Listen);
        if !one_listen {
            self.dead_call(token, &res);
        }
        match res {
            Ok(Some(tx)) => {
                assert!(t.live && kind == t.kind, "completed {t:?} as {kind:?}");
                assert_ne!(
                    misuse(kind, result, modern),
                    Some(true),
                    "{result:?} accepted for {t:?}"
                );
                self.check_result(&t, result, tx.len);
                self.answered(token, tx.len, tx.route);
            }
            Ok(None) => {}
            Err(CallError::BufferTooSmall { required }) => {
                assert!(t.live && kind == t.kind);
                assert!(
                    required > self.out.len(),
                    "BufferTooSmall but {required} fits {}",
                    self.out.len()
                );
                let mut bigger = vec![0u8; required];
                let tx = attempt(&mut self.session, &mut bigger, token, kind, result, state)
                    .expect("retry with the required size")
                    .expect("still in flight");
                assert_eq!(tx.len, required, "required size is exact");
                let saved = std::mem::replace(&mut self.out, bigger);
                self.check_result(&t, result, tx.len);
                self.answered(token, tx.len, tx.route);
                self.out = saved;
            }
            Err(CallError::ResultMisused) => {
                assert!(t.live && kind == t.kind, "misuse on {t:?} as {kind:?}");
                assert_ne!(
                    misuse(kind, result, modern),
                    Some(false),
                    "misuse for {result:?} on {t:?}"
                );
            }
            Err(CallError::WrongKind) => assert!(
                t.live && kind != t.kind && !one_listen,
                "WrongKind for {kind:?} on {t:?}"
            ),
            Err(CallError::UnknownCall) => {
                assert!(!t.live || one_listen, "UnknownCall for {kind:?} on {t:?}")
            }
            Err(e) => panic!("complete: {e:?}"),
        }
        self.drain(Cancels::Known(&[]));
    }

    /// What a completion wrote, by kind.
    fn check_result(&self, t: &Tok, result: &ResultGen, len: usize) {
        let (v, _) = self.m.frame(&self.out[..len]);
        let modern = t.rev == MODERN;
        match (t.kind, result) {
            (Kind::Read, ResultGen::Empty | ResultGen::Error(_)) => assert_eq!(
                v.pointer("/error/code").and_then(Value::as_i64),
                Some(if modern { -32602 } else { -32002 }),
                "a read with no contents is not found: {v}"
            ),
            (Kind::Tool | Kind::Read | Kind::Prompt, ResultGen::InputRequired { state, .. }) => {
                assert_eq!(
                    v.pointer("/result/resultType").and_then(Value::as_str),
                    Some("input_required"),
                    "{v}"
                );
                assert_eq!(
                    v.pointer("/result/requestState").is_some(),
                    *state,
                    "requestState iff one was given: {v}"
                );
            }
            (Kind::Complete, _) => {
                let values = v
                    .pointer("/result/completion/values")
                    .and_then(Value::as_array)
                    .unwrap_or_else(|| panic!("completion values: {v}"));
                assert!(values.len() <= 100, "more than 100 completion values: {v}");
                if let ResultGen::Big(n) = result {
                    let more = usize::from(*n) % 300 > 100;
                    assert_eq!(
                        v.pointer("/result/completion/hasMore") == Some(&Value::Bool(true)),
                        more,
                        "hasMore: {v}"
                    );
                }
            }
            _ => {}
        }
    }

    pub(super) fn fail(&mut self, pick: u8, code: i32, message: &str) {
        let Some(token) = self.pick(pick) else { return };
        let res = self.session.fail(token, code, message, &mut self.out);
        self.dead_call(token, &res);
        match res {
            Ok(Some(tx)) => {
                let (v, _) = self.m.frame(&self.out[..tx.len]);
                assert_eq!(
                    v.pointer("/error/code").and_then(Value::as_i64),
                    Some(i64::from(code))
                );
                assert_eq!(
                    v.pointer("/error/message").and_then(Value::as_str),
                    Some(message)
                );
                self.answered(token, tx.len, tx.route);
            }
            Ok(None) | Err(CallError::UnknownCall) => {}
            Err(CallError::BufferTooSmall { required }) => assert!(required > self.out.len()),
            Err(e) => panic!("fail: {e:?}"),
        }
        self.drain(Cancels::Known(&[]));
    }
}
