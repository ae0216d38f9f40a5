//! Argument completion (`completion/complete`): the [`Completions`] provider trait and the
//! [`CompletionResult`] builder. Values are capped at [`MAX_VALUES`] as the spec requires;
//! more set `hasMore`.

use crate::model::common::Dispatch;
use crate::model::common::{Envelope, ResultType};
use crate::wire::json::{JsonStr, JsonWriter, RawJson};
use crate::wire::version::ProtocolVersion;

/// Most values in one completion result (the spec's limit).
pub const MAX_VALUES: usize = 100;

/// What is being completed.
#[derive(Clone, Copy, Debug)]
pub enum CompletionRef<'i> {
    /// An argument of the prompt with this name (`ref/prompt`).
    Prompt(JsonStr<'i>),
    /// A variable of the resource template (or URI) given (`ref/resource`).
    Resource(JsonStr<'i>),
}

/// A `completion/complete` request.
#[derive(Clone, Copy, Debug)]
pub struct CompleteRequest<'i> {
    pub(crate) data: Option<crate::model::common::AdapterData<'i>>,
    pub(crate) reference: CompletionRef<'i>,
    pub(crate) argument: JsonStr<'i>,
    pub(crate) value: JsonStr<'i>,
    pub(crate) context: Option<RawJson<'i>>,
    pub(crate) version: ProtocolVersion,
    pub(crate) caps: crate::model::common::ClientCaps,
}

impl<'i> CompleteRequest<'i> {
    /// What the adapter attached to the message (see
    /// [`Session::handle_with`](crate::Session::handle_with)), as a `T`: the authenticated
    /// principal of an HTTP request, for instance. `None` when nothing was attached or it
    /// is not a `T`.
    pub fn adapter_data<T: core::any::Any>(&self) -> Option<&'i T> {
        crate::model::common::downcast(self.data)
    }
    /// The prompt or template whose argument is completed.
    pub fn reference(&self) -> CompletionRef<'i> {
        self.reference
    }
    /// The argument (or template variable) name.
    pub fn argument(&self) -> JsonStr<'i> {
        self.argument
    }
    /// What the user typed so far.
    pub fn value(&self) -> JsonStr<'i> {
        self.value
    }
    /// The `context.arguments` object (values of other arguments already resolved,
    /// 2025-06-18+), raw.
    pub fn context(&self) -> Option<RawJson<'i>> {
        self.context
    }
    /// Values of other arguments already resolved (`context.arguments`, 2025-06-18+).
    pub fn context_argument(&self, name: &str) -> Option<JsonStr<'i>> {
        self.context
            .and_then(|c| c.get(name))
            .and_then(|v| v.as_string())
    }
    /// The protocol revision the request is served under.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }
    /// The client capabilities in force for this request.
    pub fn client_caps(&self) -> crate::model::common::ClientCaps {
        self.caps
    }
}

/// Completes arguments of prompts and resource templates.
pub trait Completions {
    /// Completes now (add values, return [`Dispatch::Done`]) or later
    /// ([`Dispatch::Defer`]). The default answers with no values.
    fn complete(
        &mut self,
        request: &CompleteRequest<'_>,
        result: &mut CompletionResult<'_, '_>,
    ) -> Dispatch {
        let _ = (request, result);
        Dispatch::Done
    }
}

/// Writes a `CompleteResult`: `{"completion":{"values":[...],"total":N,"hasMore":B}}`.
pub struct CompletionResult<'w, 'b> {
    w: &'w mut JsonWriter<'b>,
    env: &'w Envelope<'w>,
    count: usize,
    total: Option<u64>,
    has_more: bool,
}

impl core::fmt::Debug for CompletionResult<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CompletionResult")
            .field("count", &self.count)
            .finish()
    }
}

impl<'w, 'b> CompletionResult<'w, 'b> {
    pub(crate) fn begin(w: &'w mut JsonWriter<'b>, env: &'w Envelope<'w>) -> Self {
        w.begin_object();
        w.key("completion");
        w.begin_object();
        w.key("values");
        w.begin_array();
        CompletionResult {
            w,
            env,
            count: 0,
            total: None,
            has_more: false,
        }
    }

    /// Adds a value; past [`MAX_VALUES`] it is dropped and `hasMore` is set.
    pub fn value(&mut self, value: &str) -> &mut Self {
        if self.count >= MAX_VALUES {
            self.has_more = true;
        } else {
            self.w.string(value);
            self.count += 1;
        }
        self
    }
    /// Sets `total` (all matches, which may exceed the values sent).
    pub fn total(&mut self, total: u64) -> &mut Self {
        self.total = Some(total);
        self
    }
    /// Sets `hasMore`.
    pub fn has_more(&mut self, more: bool) -> &mut Self {
        self.has_more |= more;
        self
    }

    pub(crate) fn finish(self) {
        let w = self.w;
        w.end_array();
        if let Some(t) = self.total {
            w.key("total");
            w.u64(t.max(self.count as u64));
        }
        if self.has_more {
            w.key("hasMore");
            w.bool(true);
        }
        w.end_object();
        self.env.trailer(w, ResultType::Complete);
        w.end_object();
    }
}
