//! The tool registry: owned definitions, sync and async handlers, and runtime changes.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use mcp_rs_core::model::content::Icon;
use mcp_rs_core::wire::json::DeError;
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::{CallRequest, ClientCaps, Dispatch, Tool, ToolResult, ToolSet};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use crate::context::Context;
use crate::output::ToolReply;

mod task_run;

/// A tool definition: owned text, or text borrowed from a `'static` definition
/// ([`from_static`](Self::from_static), what `#[mcp_rs_tokio::tools]` registers: nothing is
/// copied). Schemas are raw JSON, emitted byte-for-byte.
#[derive(Clone, Debug)]
pub struct ToolDef {
    name: Cow<'static, str>,
    title: Option<Cow<'static, str>>,
    description: Option<Cow<'static, str>>,
    input_schema: Cow<'static, str>,
    output_schema: Option<Cow<'static, str>>,
    annotations: Option<ToolAnnotations>,
    icons: &'static [Icon<'static>],
    meta: Option<Cow<'static, str>>,
    requires: ClientCaps,
    task: mcp_rs_core::model::tasks::TaskSupport,
}

/// Owned behaviour hints (see [`mcp_rs_core::ToolAnnotations`]).
#[derive(Clone, Debug, Default)]
pub struct ToolAnnotations {
    /// Display title.
    pub title: Option<String>,
    /// Does not modify its environment.
    pub read_only: Option<bool>,
    /// May perform destructive updates.
    pub destructive: Option<bool>,
    /// Repeating a call has no further effect.
    pub idempotent: Option<bool>,
    /// Interacts with an open world.
    pub open_world: Option<bool>,
}

fn owned(s: &str) -> Cow<'static, str> {
    Cow::Owned(s.to_owned())
}

impl ToolDef {
    /// A tool with a name and an input schema (raw JSON object text).
    pub fn new(name: impl Into<String>, input_schema: impl Into<String>) -> Self {
        ToolDef {
            name: Cow::Owned(name.into()),
            title: None,
            description: None,
            input_schema: Cow::Owned(input_schema.into()),
            output_schema: None,
            annotations: None,
            icons: &[],
            meta: None,
            requires: ClientCaps::NONE,
            task: Default::default(),
        }
    }
    /// Copies a core definition (its icons are not copied: they borrow from the
    /// definition; use [`from_static`](Self::from_static) for a `'static` one, or
    /// [`icons`](Self::icons)).
    pub fn from_tool(t: &Tool<'_>) -> Self {
        ToolDef {
            name: owned(t.name),
            title: t.title.map(owned),
            description: t.description.map(owned),
            input_schema: owned(t.input_schema),
            output_schema: t.output_schema.map(owned),
            annotations: t.annotations.map(|a| ToolAnnotations::from_core(&a)),
            icons: &[],
            meta: t.meta.map(owned),
            requires: t.requires,
            task: Default::default(),
        }
    }
    /// A `'static` core definition (a `const` table, such as the `TOOLS` that `#[tools]`
    /// and `#[mcp_rs_tokio::tools]` generate), icons included; its text is borrowed, not
    /// copied.
    pub fn from_static(t: &Tool<'static>) -> Self {
        ToolDef {
            name: Cow::Borrowed(t.name),
            title: t.title.map(Cow::Borrowed),
            description: t.description.map(Cow::Borrowed),
            input_schema: Cow::Borrowed(t.input_schema),
            output_schema: t.output_schema.map(Cow::Borrowed),
            annotations: t.annotations.map(|a| ToolAnnotations::from_core(&a)),
            icons: t.icons,
            meta: t.meta.map(Cow::Borrowed),
            requires: t.requires,
            task: Default::default(),
        }
    }
    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(Cow::Owned(title.into()));
        self
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(Cow::Owned(description.into()));
        self
    }
    /// Sets the output schema (raw JSON).
    pub fn output_schema(mut self, schema: impl Into<String>) -> Self {
        self.output_schema = Some(Cow::Owned(schema.into()));
        self
    }
    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
    /// Sets the icons (2025-11-25+).
    pub fn icons(mut self, icons: &'static [Icon<'static>]) -> Self {
        self.icons = icons;
        self
    }
    /// Sets `_meta` (a raw JSON object).
    pub fn meta(mut self, meta: impl Into<String>) -> Self {
        self.meta = Some(Cow::Owned(meta.into()));
        self
    }
    /// Whether the tool runs as a task (tasks extension, served with
    /// [`Server::tasks`](crate::Server::tasks); `#[tool(task)]` sets it): with `Optional` or
    /// `Required`, a call from a client that negotiated the extension is answered with a
    /// `CreateTaskResult` at once, and the handler sees the task's id in
    /// [`CallRequest::task`]. An inline handler that answers becomes the task's result; one
    /// that defers (`Dispatch::Defer`, as an [`Handler::async_fn`] always does) has its async
    /// part run detached as the task: its answer becomes the task's result (a panic an
    /// `isError` one), its [`Context::task`](crate::Context::task) names the task (for input
    /// requests: `TaskStore::ask`), and `tasks/cancel` or the task's expiry resolves
    /// [`Context::cancelled`](crate::Context::cancelled) and drops it (a cancel at once, from
    /// any connection; expiry at the task's deadline). Other
    /// calls run as without a task.
    pub fn task(mut self, support: mcp_rs_core::model::tasks::TaskSupport) -> Self {
        self.task = support;
        self
    }
    /// Client capabilities required to call it.
    pub fn requires(mut self, caps: ClientCaps) -> Self {
        self.requires = caps;
        self
    }
    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// A borrowed core view.
    pub fn as_tool(&self) -> Tool<'_> {
        Tool {
            name: &self.name,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            input_schema: &self.input_schema,
            output_schema: self.output_schema.as_deref(),
            annotations: self
                .annotations
                .as_ref()
                .map(|a| mcp_rs_core::ToolAnnotations {
                    title: a.title.as_deref(),
                    read_only_hint: a.read_only,
                    destructive_hint: a.destructive,
                    idempotent_hint: a.idempotent,
                    open_world_hint: a.open_world,
                }),
            icons: self.icons,
            meta: self.meta.as_deref(),
            requires: self.requires,
        }
    }
}

impl ToolAnnotations {
    fn from_core(a: &mcp_rs_core::ToolAnnotations<'_>) -> Self {
        ToolAnnotations {
            title: a.title.map(Into::into),
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
            idempotent: a.idempotent_hint,
            open_world: a.open_world_hint,
        }
    }
}

/// The arguments of an async call, owned (copied out of the input line once).
#[derive(Clone, Debug)]
pub struct Args {
    raw: String,
}

impl Args {
    pub(crate) fn new(raw: String) -> Self {
        Args { raw }
    }
    /// The raw JSON object text.
    pub fn raw(&self) -> &str {
        &self.raw
    }
    /// Deserializes into `T` with the core's deserializer, so the rules are those of the
    /// derives and of `CallRequest::parse_args`: a whole number written `2.0` or `1e3` is an
    /// integer (JSON Schema's rule), `2.5` is not.
    #[allow(clippy::result_large_err)] // the core's fixed-size error: no allocation
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, DeError> {
        use mcp_rs_core::wire::json::{self, Limits, MAX_DEPTH_LIMIT};
        let limits = Limits {
            max_depth: MAX_DEPTH_LIMIT,
        };
        let value = json::parse(self.raw.as_bytes(), limits)
            .map_err(|e| DeError::from_fmt(format_args!("invalid arguments: {e}")))?;
        // Decoded (escaped) strings need room; none is longer than the text itself.
        let mut scratch = vec![0u8; self.raw.len()];
        json::from_json(value, &mut scratch)
    }
    /// As a `serde_json::Value`.
    pub fn value(&self) -> serde_json::Value {
        serde_json::from_str(&self.raw).unwrap_or(serde_json::Value::Null)
    }
}

type SyncFn = dyn Fn(&CallRequest<'_>, &mut ToolResult<'_, '_>) + Send + Sync;
/// A boxed future returned by async handlers.
pub type BoxFuture = Pin<Box<dyn Future<Output = ToolReply> + Send>>;
pub(crate) type AsyncFn = dyn Fn(Args, Context) -> BoxFuture + Send + Sync;

/// How a tool runs.
#[derive(Clone)]
pub enum Handler {
    /// Runs inside the connection's drive loop and answers at once: for cheap, pure tools.
    Sync(Arc<SyncFn>),
    /// Runs as its own tokio task; calls complete out of order, can report progress and
    /// are aborted on cancellation.
    Async(Arc<AsyncFn>),
    /// Tries inline first; a [`Dispatch::Defer`] hands the call to the async handler (e.g.
    /// answer a 2026-07-28 call with `input_required` at once, but await a real request to
    /// a legacy client).
    Mixed(Arc<MixedFn>, Arc<AsyncFn>),
}

type MixedFn = dyn Fn(&CallRequest<'_>, &mut ToolResult<'_, '_>) -> Dispatch + Send + Sync;

impl fmt::Debug for Handler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Handler::Sync(_) => "Handler::Sync",
            Handler::Async(_) => "Handler::Async",
            Handler::Mixed(..) => "Handler::Mixed",
        })
    }
}

impl Handler {
    /// A synchronous handler writing straight into the core's result builder.
    pub fn sync(
        f: impl Fn(&CallRequest<'_>, &mut ToolResult<'_, '_>) + Send + Sync + 'static,
    ) -> Self {
        Handler::Sync(Arc::new(f))
    }
    /// An async handler.
    pub fn async_fn<F, Fut>(f: F) -> Self
    where
        F: Fn(Args, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolReply> + Send + 'static,
    {
        Handler::Async(Arc::new(move |args, ctx| Box::pin(f(args, ctx))))
    }
    /// An inline handler that answers what it can (returning [`Dispatch::Done`]) and hands
    /// the rest ([`Dispatch::Defer`], nothing written) to an async handler.
    pub fn mixed<S, F, Fut>(inline: S, f: F) -> Self
    where
        S: Fn(&CallRequest<'_>, &mut ToolResult<'_, '_>) -> Dispatch + Send + Sync + 'static,
        F: Fn(Args, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolReply> + Send + 'static,
    {
        Handler::Mixed(
            Arc::new(inline),
            Arc::new(move |args, ctx| Box::pin(f(args, ctx))),
        )
    }
    /// The async part, if any.
    pub(crate) fn async_part(&self) -> Option<&Arc<AsyncFn>> {
        match self {
            Handler::Async(f) | Handler::Mixed(_, f) => Some(f),
            Handler::Sync(_) => None,
        }
    }
}

/// A registered tool.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) def: ToolDef,
    pub(crate) handler: Handler,
}

impl Entry {
    /// The tool's `inputSchema` text (the HTTP transport checks `Mcp-Param-*` headers
    /// against its `x-mcp-header` marks).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn input_schema(&self) -> &str {
        &self.def.input_schema
    }
}

/// The shared, changeable tool set of a server. Cloning shares it. Every change bumps a
/// version that connected sessions watch: they mark cursors stale and send
/// `notifications/tools/list_changed`.
#[derive(Clone, Debug)]
pub struct Tools {
    inner: Arc<RwLock<Arc<Vec<Arc<Entry>>>>>,
    version: Arc<watch::Sender<u64>>,
}

impl Default for Tools {
    fn default() -> Self {
        Tools {
            inner: Arc::default(),
            version: Arc::new(watch::channel(0).0),
        }
    }
}

impl Tools {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool, replacing one with the same name (keeping its position).
    pub fn add(&self, def: ToolDef, handler: Handler) {
        let entry = Arc::new(Entry { def, handler });
        self.modify(
            |v| match v.iter().position(|e| e.def.name == entry.def.name) {
                Some(i) => v[i] = entry,
                None => v.push(entry),
            },
        );
    }

    /// Removes the tool called `name`; returns whether it existed.
    pub fn remove(&self, name: &str) -> bool {
        let mut found = false;
        self.modify(|v| {
            let before = v.len();
            v.retain(|e| e.def.name != name);
            found = v.len() != before;
        });
        found
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.snapshot().0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Announces a change of the tool list without changing it (for tools whose
    /// definitions depend on state the registry does not see): connected sessions mark
    /// their cursors stale and notify their clients, as after [`add`](Self::add).
    pub fn notify_changed(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    fn modify(&self, f: impl FnOnce(&mut Vec<Arc<Entry>>)) {
        {
            let mut guard = self.inner.write().unwrap_or_else(|e| e.into_inner());
            let mut next: Vec<Arc<Entry>> = guard.as_ref().clone();
            f(&mut next);
            *guard = Arc::new(next);
        }
        self.version.send_modify(|v| *v += 1);
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot(
            self.inner.read().unwrap_or_else(|e| e.into_inner()).clone(),
            None,
        )
    }

    /// The tool called `name`, if it exists.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn entry(&self, name: &str) -> Option<Arc<Entry>> {
        let snapshot = self.snapshot();
        snapshot.0.iter().find(|e| e.def.name == name).cloned()
    }

    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }
}

/// An immutable view of the registry, used as the core's [`ToolSet`], and the task table
/// its task tools run against (set by the handler that serves it: [`Server::tasks`]).
///
/// [`Server::tasks`]: crate::Server::tasks
#[derive(Clone)]
pub(crate) struct Snapshot(
    pub(crate) Arc<Vec<Arc<Entry>>>,
    pub(crate) Option<crate::context::TaskTableRef>,
);

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Snapshot").field(&self.0).finish()
    }
}

impl Snapshot {
    pub(crate) fn entry(&self, index: usize) -> Option<&Arc<Entry>> {
        self.0.get(index)
    }
}

impl ToolSet for Snapshot {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        self.0.get(index).map(|e| e.def.as_tool())
    }
    fn find(&self, name: JsonStr<'_>) -> Option<usize> {
        self.0.iter().position(|e| name.eq_str(&e.def.name))
    }
    fn task_support(&self, index: usize) -> mcp_rs_core::model::tasks::TaskSupport {
        self.0.get(index).map(|e| e.def.task).unwrap_or_default()
    }
    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        let dispatch = self.call_inline(request, result);
        // A call the session made a task of was answered already: a deferral runs the
        // async part detached, reporting to the table, instead of in the drive loop.
        if let (Dispatch::Defer, Some(_), Some(tasks)) = (dispatch, request.task(), &self.1) {
            let entry = self.0.get(request.tool_index());
            if let Some(f) = entry.and_then(|e| e.handler.async_part()) {
                task_run::spawn(f, request, tasks);
            }
        }
        dispatch
    }
}

impl Snapshot {
    /// The inline part of a call: a sync or mixed handler's answer, or a deferral.
    fn call_inline(&self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        match self.0.get(request.tool_index()).map(|e| &e.handler) {
            Some(Handler::Sync(f)) => {
                if std::panic::catch_unwind(AssertUnwindSafe(|| f(request, result))).is_err() {
                    result.fail(format_args!("tool {} panicked", request.name()));
                }
                Dispatch::Done
            }
            Some(Handler::Mixed(f, _)) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| f(request, result))) {
                    Ok(dispatch) => dispatch,
                    Err(_) => {
                        result.fail(format_args!("tool {} panicked", request.name()));
                        Dispatch::Done
                    }
                }
            }
            _ => Dispatch::Defer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Args;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Count {
        n: u8,
        label: String,
    }

    #[test]
    #[allow(clippy::result_large_err)]
    fn args_follow_the_number_rule_of_the_derives() {
        let parse = |raw: &str| Args::new(raw.to_string()).parse::<Count>();
        let ok = Count {
            n: 2,
            label: "a\"b".into(),
        };
        assert_eq!(parse(r#"{"n":2,"label":"a\"b"}"#).unwrap(), ok);
        assert_eq!(parse(r#"{"n":2.0,"label":"a\"b"}"#).unwrap(), ok);
        assert_eq!(parse(r#"{"n":0.2e1,"label":"a\u0022b"}"#).unwrap(), ok);
        assert!(parse(r#"{"n":2.5,"label":""}"#).is_err());
        assert!(parse(r#"{"n":256,"label":""}"#).is_err());
        assert!(parse(r#"{"n":1"#)
            .unwrap_err()
            .message()
            .starts_with("invalid arguments"));
    }
}
