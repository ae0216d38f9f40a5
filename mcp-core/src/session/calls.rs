//! Deferred requests: `tools/call`, `resources/read`, `prompts/get` and
//! `completion/complete` answered later through a `Copy` [`CallToken`], plus progress and
//! logging tied to a call, and cancellation.

use super::faults::Fault;
use super::progress::ProgressValue;
use super::{Ctx, Incoming, Phase, Route, Session, Transmit};
use crate::model::common::Envelope;
use crate::model::logging::LogLevel;
use crate::model::tools::{CallRequest, ToolResult};
use crate::session::error::CallError;
use crate::session::inflight::{CallKind, CallSlot, CallToken, SlotState};
use crate::wire::bytes_eq;
use crate::wire::json::{JsonStr, JsonWriter, RawJson, StrPart};
#[cfg(feature = "deferred")]
use crate::wire::jsonrpc::StoredId;
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::{Method, Params};

/// A deferred request, by kind.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Request<'i> {
    /// `tools/call`: complete with [`Session::complete`].
    Tool(CallRequest<'i>),
    /// `resources/read`: complete with [`Session::complete_read`].
    #[cfg(feature = "resources")]
    Read(crate::model::resources::ReadRequest<'i>),
    /// `prompts/get`: complete with [`Session::complete_prompt`].
    #[cfg(feature = "prompts")]
    Prompt(crate::model::prompts::GetPromptRequest<'i>),
    /// `completion/complete`: complete with [`Session::complete_completion`].
    #[cfg(feature = "completion")]
    Complete(crate::model::completion::CompleteRequest<'i>),
}

/// A deferred request, handed out by [`Incoming::next_call`].
#[derive(Clone, Copy, Debug)]
pub struct Call<'i> {
    /// What was asked.
    pub request: Request<'i>,
    /// Completes the request later.
    pub token: CallToken,
}

impl<'i> Call<'i> {
    /// The tool call, if this is a `tools/call`.
    pub fn tool(&self) -> Option<&CallRequest<'i>> {
        match &self.request {
            Request::Tool(t) => Some(t),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
    /// What the request names, as sent: the tool's name (`tools/call`), the prompt's name
    /// (`prompts/get`), the resource's URI (`resources/read`), or the completed prompt's
    /// name or template's URI (`completion/complete`).
    pub fn name(&self) -> JsonStr<'i> {
        match &self.request {
            Request::Tool(t) => t.name(),
            #[cfg(feature = "resources")]
            Request::Read(r) => r.uri(),
            #[cfg(feature = "prompts")]
            Request::Prompt(p) => p.name(),
            #[cfg(feature = "completion")]
            Request::Complete(c) => match c.reference() {
                crate::model::completion::CompletionRef::Prompt(n)
                | crate::model::completion::CompletionRef::Resource(n) => n,
            },
        }
    }
    /// The tool arguments (`{}` when absent or for other kinds).
    pub fn args(&self) -> RawJson<'i> {
        self.tool().map_or(RawJson { text: "{}" }, |t| t.args())
    }
    /// What the adapter attached to the message (see [`Session::handle_with`]), as a `T`.
    pub fn adapter_data<T: core::any::Any>(&self) -> Option<&'i T> {
        match &self.request {
            Request::Tool(t) => t.adapter_data(),
            #[cfg(feature = "resources")]
            Request::Read(r) => r.adapter_data(),
            #[cfg(feature = "prompts")]
            Request::Prompt(p) => p.adapter_data(),
            #[cfg(feature = "completion")]
            Request::Complete(c) => c.adapter_data(),
        }
    }
    /// The token for completing it.
    pub fn token(&self) -> CallToken {
        self.token
    }
}

impl<'i> Incoming<'i> {
    /// The next deferred request of this message (a batch may carry several). Requests not
    /// taken before the next `handle_*` are answered with an internal error.
    pub fn next_call(&mut self, session: &mut Session<'_>) -> Option<Call<'i>> {
        if self.deferred == 0 || cfg!(not(feature = "deferred")) {
            return None;
        }
        let config = session.config;
        let now = session.now_ms;
        for (i, slot) in session.slots.iter_mut().enumerate() {
            if slot.state != SlotState::Fresh {
                continue;
            }
            slot.state = SlotState::Active;
            self.deferred -= 1;
            let params = match slot.params {
                (u32::MAX, _) => None,
                (start, len) => {
                    let start = start as usize;
                    self.msg
                        .get(start..start.saturating_add(len as usize))
                        .map(|text| RawJson { text })
                }
            };
            let p = Params::read(params);
            let ctx = Ctx {
                data: self.data,
                version: slot.version,
                caps: slot.caps,
                log_level: slot.log_level,
            };
            let Ok(request) = rebuild(slot, &p, ctx, &config, now) else {
                slot.state = SlotState::Abandoned;
                continue;
            };
            return Some(Call {
                request,
                token: slot.token(i),
            });
        }
        self.deferred = 0;
        None
    }
}

/// The request view of a fresh slot, from its message's `params` (as first read).
fn rebuild<'i>(
    slot: &CallSlot,
    p: &Params<'i>,
    ctx: Ctx<'i>,
    config: &super::Config,
    now: u64,
) -> Result<Request<'i>, Fault<'i>> {
    let _ = (config, now);
    Ok(match slot.kind {
        CallKind::Tool => Request::Tool(super::tools::tool_request(
            p,
            ctx,
            usize::from(slot.index.0),
            config,
            now,
        )?),
        #[cfg(feature = "resources")]
        CallKind::Read => Request::Read(super::resources::read_request(
            p, ctx, slot.index, config, now,
        )?),
        #[cfg(feature = "prompts")]
        CallKind::Prompt => Request::Prompt(super::prompts::prompt_request(
            p,
            ctx,
            usize::from(slot.index.0),
            config,
            now,
        )?),
        #[cfg(feature = "completion")]
        CallKind::Complete => Request::Complete(super::completion::complete_request_view(p, ctx)?),
        #[allow(unreachable_patterns)]
        _ => return Err(Fault::new(code::INTERNAL_ERROR, "unsupported deferral")),
    })
}

impl<'a> Session<'a> {
    /// Frees the slot of the call or listen stream with this id (client cancellation).
    pub(super) fn cancel_by_id(&mut self, id: RequestId<'_>) {
        let live = |s: &CallSlot| {
            matches!(
                s.state,
                SlotState::Fresh | SlotState::Active | SlotState::Listening
            )
        };
        if let Some(slot) = self
            .slots
            .iter_mut()
            .find(|s| live(s) && bytes_eq(s.id.as_raw().as_bytes(), id.as_raw().as_bytes()))
        {
            slot.cancelled_generation = Some(slot.generation);
            if !slot.cancel_unreported {
                self.unreported_cancels += 1;
            }
            slot.cancel_unreported = true;
            slot.free();
            self.occupied = self.occupied.saturating_sub(1);
        }
    }

    /// A free slot for a call or subscription with this id: refuses an id already in
    /// flight (-32600) and a full table (-32603 with `data.limit`).
    #[cfg(any(feature = "deferred", feature = "listen"))]
    pub(super) fn free_slot_for<'i>(&mut self, id: RequestId<'i>) -> Result<usize, Fault<'i>> {
        if self.slots.iter().any(|s| {
            s.state != SlotState::Free && bytes_eq(s.id.as_raw().as_bytes(), id.as_raw().as_bytes())
        }) {
            return Err(Fault::new(
                code::INVALID_REQUEST,
                "Request id is already in use by a call in flight",
            ));
        }
        let free = self.slots.iter().position(|s| s.state == SlotState::Free);
        free.or_else(|| self.slots.grow()).ok_or(
            Fault::new(code::INTERNAL_ERROR, "Too many calls in flight")
                .with(super::faults::Detail::Limit(self.slots.limit())),
        )
    }

    /// Takes a slot for a deferred request: `params` is the request's `params` (a slice of
    /// the message `text`), re-read when the request is handed out.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn defer<'i>(
        &mut self,
        kind: CallKind,
        index: (u16, u16),
        id: RequestId<'i>,
        p: &Params<'i>,
        ctx: Ctx<'i>,
        digest: u64,
        text: &'i str,
        incoming: &mut Incoming<'i>,
    ) -> Result<(), Fault<'i>> {
        #[cfg(not(feature = "deferred"))]
        {
            let _ = (kind, index, id, p, ctx, digest, text, incoming);
            Err(Fault::new(
                code::INTERNAL_ERROR,
                "Deferred requests unsupported",
            ))
        }
        #[cfg(feature = "deferred")]
        {
            let stored = StoredId::new(id.as_raw()).ok_or(
                Fault::new(
                    code::INVALID_REQUEST,
                    "Request id too long for a deferred call",
                )
                .with(super::faults::Detail::Limit(jsonrpc::MAX_ID_LEN)),
            )?;
            let token = match p.meta.progress.and_then(RequestId::from_json) {
                Some(t) => StoredId::new(t.as_raw()).ok_or(
                    Fault::new(code::INVALID_PARAMS, "progressToken too long")
                        .with(super::faults::Detail::Limit(jsonrpc::MAX_ID_LEN)),
                )?,
                None => StoredId::EMPTY,
            };
            let index_of_slot = self.free_slot_for(id)?;
            let Some(slot) = self.slots.get_mut(index_of_slot) else {
                return Err(Fault::new(code::INTERNAL_ERROR, "Too many calls in flight"));
            };
            slot.params = match p.raw {
                Some(raw) => {
                    let start = (raw.text.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
                    (
                        u32::try_from(start).unwrap_or(u32::MAX),
                        u32::try_from(raw.text.len()).unwrap_or(0),
                    )
                }
                None => (u32::MAX, 0),
            };
            slot.state = SlotState::Fresh;
            self.occupied += 1;
            slot.id = stored;
            slot.progress_token = token;
            slot.last_progress = f64::NEG_INFINITY;
            slot.version = ctx.version;
            slot.caps = ctx.caps;
            slot.log_level = ctx.log_level;
            slot.kind = kind;
            slot.index = index;
            slot.target_digest = digest;
            #[cfg(feature = "resources")]
            {
                slot.uri = match (kind, p.uri.and_then(|u| u.as_string())) {
                    (CallKind::Read, Some(uri)) => {
                        StoredId::new(uri.raw()).unwrap_or(StoredId::EMPTY)
                    }
                    _ => StoredId::EMPTY,
                };
            }
            incoming.deferred += 1;
            Ok(())
        }
    }

    pub(super) fn live_slot(
        &mut self,
        token: CallToken,
    ) -> Result<Option<&mut CallSlot>, CallError> {
        let slot = self
            .slots
            .get_mut(usize::from(token.slot))
            .ok_or(CallError::UnknownCall)?;
        if slot.state == SlotState::Active && slot.generation == token.generation {
            return Ok(Some(slot));
        }
        if slot.cancelled_generation == Some(token.generation) {
            return Ok(None);
        }
        Err(CallError::UnknownCall)
    }

    /// Writes the response of a deferred request of `kind`: `write` writes the result
    /// object with the call's envelope, or refuses (nothing is sent, the call stays).
    fn answer(
        &mut self,
        token: CallToken,
        kind: CallKind,
        method: Method,
        out: &mut [u8],
        write: &mut dyn FnMut(&mut JsonWriter<'_>, &Envelope<'_>) -> Result<(), CallError>,
    ) -> Result<Option<Transmit>, CallError> {
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        if slot.kind != kind {
            return Err(CallError::WrongKind);
        }
        let (id, version, digest, caps) = (slot.id, slot.version, slot.target_digest, slot.caps);
        let mut hex = [0u8; 16];
        let cacheable = kind == CallKind::Read;
        let env = self.call_envelope(version, cacheable, method, digest, caps, &mut hex);
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_result(&mut w, id.as_raw());
        write(&mut w, &env)?;
        jsonrpc::end_response(&mut w);
        self.sent_for_call(w, token, true)
    }

    /// Completes a deferred `tools/call`: `write` fills the result. Returns `Ok(None)` if the
    /// client cancelled the call meanwhile (nothing is sent). On `BufferTooSmall` the call
    /// stays in flight: retry with a buffer of `required` bytes.
    pub fn complete(
        &mut self,
        token: CallToken,
        out: &mut [u8],
        write: impl FnOnce(&mut ToolResult<'_, '_>),
    ) -> Result<Option<Transmit>, CallError> {
        let mut write = Some(write);
        self.answer(
            token,
            CallKind::Tool,
            Method::ToolsCall,
            out,
            &mut |w, env| {
                let mut result = ToolResult::begin(w, env);
                if let Some(f) = write.take() {
                    f(&mut result);
                }
                if result.misused() {
                    return Err(CallError::ResultMisused);
                }
                result.finish();
                Ok(())
            },
        )
    }

    /// Completes a deferred `resources/read`. A read that writes nothing or calls
    /// `not_found` is answered with the revision's not-found error, whose `data.uri` names
    /// the URI when it was at most [`MAX_ID_LEN`](crate::wire::jsonrpc::MAX_ID_LEN) bytes of JSON.
    #[cfg(feature = "resources")]
    pub fn complete_read(
        &mut self,
        token: CallToken,
        out: &mut [u8],
        write: impl FnOnce(&mut crate::model::resources::ReadResult<'_, '_>),
    ) -> Result<Option<Transmit>, CallError> {
        let mut write = Some(write);
        let mut not_found = false;
        let mut failed = false;
        let done = self.answer(
            token,
            CallKind::Read,
            Method::ResourcesRead,
            out,
            &mut |w, env| {
                let mut result = crate::model::resources::ReadResult::begin(w, env);
                if let Some(f) = write.take() {
                    f(&mut result);
                }
                match result.finish() {
                    Ok(()) => Ok(()),
                    Err(crate::model::resources::ReadOutcome::Misused) => {
                        Err(CallError::ResultMisused)
                    }
                    Err(crate::model::resources::ReadOutcome::NotFound) => {
                        not_found = true;
                        Err(CallError::ResultMisused)
                    }
                    Err(crate::model::resources::ReadOutcome::Failed) => {
                        failed = true;
                        Err(CallError::ResultMisused)
                    }
                }
            },
        );
        if failed {
            let Some(slot) = self.live_slot(token)? else {
                return Ok(None);
            };
            let id = slot.id;
            let mut w = JsonWriter::new(out);
            let f = super::faults::Fault::new(
                crate::wire::jsonrpc::code::INTERNAL_ERROR,
                "Resource read failed",
            );
            super::faults::write_fault(&mut w, Some(id.as_raw()), &f);
            return self.sent_for_call(w, token, true);
        }
        if !not_found {
            return done;
        }
        // Not found: an error reply naming the URI (kept in the slot; the request's message
        // is gone by now).
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        let (id, version, uri) = (slot.id, slot.version, slot.uri);
        let mut w = JsonWriter::new(out);
        let f = super::resources::not_found(version, JsonStr { raw: uri.as_raw() });
        super::faults::write_fault(&mut w, Some(id.as_raw()), &f);
        self.sent_for_call(w, token, true)
    }

    /// Completes a deferred `prompts/get`.
    #[cfg(feature = "prompts")]
    pub fn complete_prompt(
        &mut self,
        token: CallToken,
        out: &mut [u8],
        write: impl FnOnce(&mut crate::model::prompts::PromptResult<'_, '_>),
    ) -> Result<Option<Transmit>, CallError> {
        let mut write = Some(write);
        let mut rejected = None;
        let done = self.answer(
            token,
            CallKind::Prompt,
            Method::PromptsGet,
            out,
            &mut |w, env| {
                let mut result = crate::model::prompts::PromptResult::begin(w, env);
                if let Some(f) = write.take() {
                    f(&mut result);
                }
                match result.finish() {
                    Ok(()) => Ok(()),
                    Err(crate::model::prompts::PromptOutcome::Misused) => {
                        Err(CallError::ResultMisused)
                    }
                    Err(crate::model::prompts::PromptOutcome::Rejected(r)) => {
                        rejected = Some(r);
                        Err(CallError::ResultMisused)
                    }
                }
            },
        );
        let Some(r) = rejected else {
            return done;
        };
        // `invalid_arguments` or `fail`: an error reply instead of a result.
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        let id = slot.id;
        let mut w = JsonWriter::new(out);
        let f = super::faults::Fault::new(r.code, r.message);
        let f = if r.detail().is_empty() {
            f
        } else {
            f.with(super::faults::Detail::Text(super::faults::InlineText::new(
                r.detail(),
            )))
        };
        super::faults::write_fault(&mut w, Some(id.as_raw()), &f);
        self.sent_for_call(w, token, true)
    }

    /// Completes a deferred `completion/complete`.
    #[cfg(feature = "completion")]
    pub fn complete_completion(
        &mut self,
        token: CallToken,
        out: &mut [u8],
        write: impl FnOnce(&mut crate::model::completion::CompletionResult<'_, '_>),
    ) -> Result<Option<Transmit>, CallError> {
        let mut write = Some(write);
        self.answer(
            token,
            CallKind::Complete,
            Method::Complete,
            out,
            &mut |w, env| {
                let mut result = crate::model::completion::CompletionResult::begin(w, env);
                if let Some(f) = write.take() {
                    f(&mut result);
                }
                result.finish();
                Ok(())
            },
        )
    }

    /// Answers a deferred request with a JSON-RPC error instead of a result (for
    /// protocol-level failures; tool failures belong in an `isError` result).
    pub fn fail(
        &mut self,
        token: CallToken,
        code: i32,
        message: &str,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        let id = slot.id;
        let mut w = JsonWriter::new(out);
        jsonrpc::write_error(
            &mut w,
            Some(id.as_raw()),
            code,
            &[StrPart::Text(message)],
            None,
        );
        self.sent_for_call(w, token, true)
    }

    /// Completes a frame written for a call: its size (or the size it needed), releasing the
    /// call's slot when the frame ends the call.
    pub(super) fn sent_for_call(
        &mut self,
        w: JsonWriter<'_>,
        token: CallToken,
        release: bool,
    ) -> Result<Option<Transmit>, CallError> {
        let len = w.finish().map_err(|e| CallError::BufferTooSmall {
            required: e.required,
        })?;
        if release {
            self.release(token);
        }
        Ok(Some(Transmit {
            len,
            route: Route::Call(token),
        }))
    }

    fn release(&mut self, token: CallToken) {
        if let Some(slot) = self.slots.get_mut(usize::from(token.slot)) {
            if slot.state != SlotState::Free {
                slot.free();
                self.occupied = self.occupied.saturating_sub(1);
            }
        }
    }

    /// Sends `notifications/progress` for a deferred call, if the client asked for progress
    /// (`Ok(None)` otherwise, or if the call was cancelled). `progress` must increase.
    ///
    /// `P` is any [`ProgressValue`]: integers (`u32`, `u64`, ...) are written as integers
    /// and link no float formatting; `f64`/`f32` are written in shortest round-trip form.
    pub fn progress<P: ProgressValue>(
        &mut self,
        token: CallToken,
        progress: P,
        total: Option<P>,
        message: Option<&str>,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        if slot.progress_token.is_empty() {
            return Ok(None);
        }
        let value = progress.as_f64();
        if value.partial_cmp(&slot.last_progress) != Some(core::cmp::Ordering::Greater)
            || !value.is_finite()
        {
            return Err(CallError::ProgressNotIncreasing);
        }
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_notification(&mut w, "notifications/progress");
        w.begin_object();
        w.key("progressToken");
        w.raw_value(slot.progress_token.as_raw());
        w.key("progress");
        progress.write(&mut w);
        // A non-finite total has no JSON form; it is left out (it is optional).
        if let Some(t) = total.filter(|t| t.as_f64().is_finite()) {
            w.key("total");
            t.write(&mut w);
        }
        if let (true, Some(m)) = (slot.version.features().progress_message, message) {
            w.key("message");
            w.string(m);
        }
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish().map_err(|e| CallError::BufferTooSmall {
            required: e.required,
        })?;
        slot.last_progress = value;
        Ok(Some(Transmit {
            len,
            route: Route::Call(token),
        }))
    }

    /// Sends `notifications/message` if the client wants this level: session-wide
    /// (`call: None`, legacy sessions, filtered by `logging/setLevel`) or tied to a call
    /// (2026-07-28 requests log only when they carried a `logLevel`, whatever the
    /// capability). `data` is written as a JSON string.
    pub fn log(
        &mut self,
        call: Option<CallToken>,
        level: LogLevel,
        logger: Option<&str>,
        data: &str,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let (threshold, route) = match call {
            None => match self.phase {
                Phase::Fresh => return Ok(None),
                _ => (Some(self.log_level), Route::Session),
            },
            Some(token) => {
                let session_level = self.log_level;
                let Some(slot) = self.live_slot(token)? else {
                    return Ok(None);
                };
                let threshold = if slot.version.is_modern() {
                    slot.log_level
                } else {
                    Some(session_level)
                };
                (threshold, Route::Call(token))
            }
        };
        if threshold.is_none_or(|t| level < t) {
            return Ok(None);
        }
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_notification(&mut w, "notifications/message");
        w.begin_object();
        w.key("level");
        w.string(level.as_str());
        if let Some(l) = logger {
            w.key("logger");
            w.string(l);
        }
        w.key("data");
        w.string(data);
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish().map_err(|e| CallError::BufferTooSmall {
            required: e.required,
        })?;
        Ok(Some(Transmit { len, route }))
    }
}
