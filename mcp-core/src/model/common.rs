//! The vocabulary every concept of the model shares: who the server is ([`ServerInfo`]),
//! what the client can do ([`ClientCaps`]), what a handler did with a request
//! ([`Dispatch`]), why a definition is refused ([`DefinitionError`]), and the envelope that
//! ends every result (`resultType`, cache hints and `_meta` of 2026-07-28).

use core::any::Any;
use core::fmt;

use crate::model::content::{write_icons, Icon};
use crate::wire::json::{JsonWriter, RawJson};
use crate::wire::params::META_SERVER_INFO;
use crate::wire::version::ProtocolVersion;

/// Who the server is: sent in `initialize` and `server/discover` results.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerInfo<'a> {
    /// Programmatic name.
    pub name: &'a str,
    /// Version string.
    pub version: &'a str,
    /// Display title (2025-06-18+).
    pub title: Option<&'a str>,
    /// Description (2025-11-25+).
    pub description: Option<&'a str>,
    /// Website (2025-11-25+).
    pub website_url: Option<&'a str>,
    /// Icons (2025-11-25+).
    pub icons: &'a [Icon<'a>],
    /// Guidance for the model on how to use this server.
    pub instructions: Option<&'a str>,
}

impl ServerInfo<'_> {
    /// Writes the `Implementation` object for `version`, leaving out fields it lacks.
    pub fn write(&self, w: &mut JsonWriter<'_>, version: ProtocolVersion) {
        let f = version.features();
        w.begin_object();
        w.key("name");
        w.string(self.name);
        w.key("version");
        w.string(self.version);
        if let (true, Some(t)) = (f.titles_and_meta, self.title) {
            w.key("title");
            w.string(t);
        }
        if f.icons {
            if let Some(d) = self.description {
                w.key("description");
                w.string(d);
            }
            if let Some(u) = self.website_url {
                w.key("websiteUrl");
                w.string(u);
            }
            if !self.icons.is_empty() {
                w.key("icons");
                write_icons(w, self.icons);
            }
        }
        w.end_object();
    }
}

/// `cacheScope` of cacheable results (2026-07-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// No user-specific data: shared caches may keep it.
    Public,
    /// Per-user data.
    Private,
}

impl CacheScope {
    /// The wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// Data an adapter attaches to one incoming message (see
/// [`Session::handle_with`](crate::Session::handle_with)): request views hand it back,
/// downcast to the adapter's own type, through their `adapter_data` methods.
pub type AdapterData<'i> = &'i (dyn Any + Send + Sync);

/// `adapter_data` of a request view: the attached data as a `T`, if it is one.
pub(crate) fn downcast<'i, T: Any>(data: Option<AdapterData<'i>>) -> Option<&'i T> {
    data.and_then(|d| d.downcast_ref::<T>())
}

/// Client capabilities a tool needs. Calling it without them is refused with -32021 in
/// 2026-07-28; before that revision the call gets an `isError` result naming what is
/// missing (the tool does not run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientCaps(pub u8);

impl ClientCaps {
    /// No capabilities.
    pub const NONE: ClientCaps = ClientCaps(0);
    /// `sampling`.
    pub const SAMPLING: ClientCaps = ClientCaps(1);
    /// `elicitation`.
    pub const ELICITATION: ClientCaps = ClientCaps(2);
    /// `roots`.
    pub const ROOTS: ClientCaps = ClientCaps(4);
    /// The tasks extension (`extensions["io.modelcontextprotocol/tasks"]`, feature `tasks`).
    pub const TASKS: ClientCaps = ClientCaps(8);
    const NAMES: [(ClientCaps, &'static str); 3] = [
        (Self::SAMPLING, "sampling"),
        (Self::ELICITATION, "elicitation"),
        (Self::ROOTS, "roots"),
    ];

    /// Union.
    pub const fn with(self, other: ClientCaps) -> ClientCaps {
        ClientCaps(self.0 | other.0)
    }
    /// Whether every capability in `other` is in `self`.
    pub const fn contains(self, other: ClientCaps) -> bool {
        self.0 & other.0 == other.0
    }
    /// The names of these capabilities (`"sampling"`, ...), in a fixed order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES
            .into_iter()
            .filter(move |(c, _)| self.contains(*c))
            .map(|(_, n)| n)
    }
    /// Reads the known capability keys of a `ClientCapabilities` object.
    pub fn from_json(v: Option<RawJson<'_>>) -> ClientCaps {
        let mut caps = ClientCaps::NONE;
        if let Some(members) = v.and_then(|v| v.members()) {
            for (k, _v) in members {
                if let Some((c, _)) = Self::NAMES.iter().find(|(_, n)| k.eq_str(n)) {
                    caps = caps.with(*c);
                }
                #[cfg(feature = "tasks")]
                if k.eq_str("extensions") && _v.get(crate::model::tasks::EXTENSION).is_some() {
                    caps = caps.with(Self::TASKS);
                }
            }
        }
        caps
    }
    /// Writes these capabilities as a `ClientCapabilities` object (`{"sampling":{}}`).
    pub fn write(self, w: &mut JsonWriter<'_>) {
        w.begin_object();
        // By reference: iterating the array by value copies it (a `memcpy`).
        for &(c, n) in Self::NAMES.iter() {
            if self.contains(c) {
                w.key(n);
                w.raw_value("{}");
            }
        }
        #[cfg(feature = "tasks")]
        if self.contains(Self::TASKS) {
            w.key("extensions");
            w.begin_object();
            w.key(crate::model::tasks::EXTENSION);
            w.raw_value("{}");
            w.end_object();
        }
        w.end_object();
    }
}

/// Checks an optional raw `_meta` object (see [`crate::wire::json::check_embedded`]).
pub(crate) fn check_meta(meta: Option<&str>) -> Result<(), DefinitionError> {
    match meta.map(|m| crate::wire::json::check_embedded(m, true)) {
        Some(Err(crate::wire::json::EmbedError::LineBreak)) => Err(DefinitionError::LineBreak),
        Some(Err(_)) => Err(DefinitionError::Meta),
        _ => Ok(()),
    }
}

/// A definition (tool, prompt, resource, template) that does not pass its `validate`
/// ([`Tool::validate`](crate::Tool::validate), ...).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefinitionError {
    /// The name is empty, longer than 64 bytes, or has characters outside `[A-Za-z0-9_.-/]`.
    Name,
    /// `input_schema` is not a JSON object.
    InputSchema,
    /// `output_schema` is not valid JSON.
    OutputSchema,
    /// `meta` is not a JSON object.
    Meta,
    /// A resource template is not an RFC 6570 level-1 template.
    UriTemplate,
    /// Raw JSON contains a line break outside strings (it would split a stdio frame).
    LineBreak,
}

impl fmt::Display for DefinitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DefinitionError::Name => "tool name must be 1-64 characters of [A-Za-z0-9_.-/]",
            DefinitionError::InputSchema => "inputSchema must be a JSON object",
            DefinitionError::OutputSchema => "outputSchema must be valid JSON",
            DefinitionError::Meta => "_meta must be a JSON object",
            DefinitionError::UriTemplate => "uriTemplate must be an RFC 6570 level-1 template",
            DefinitionError::LineBreak => "raw JSON must not contain line breaks",
        })
    }
}

impl core::error::Error for DefinitionError {}

/// What a handler did with a request inside [`ToolSet::call`](crate::ToolSet::call) (and
/// the prompt, resource and completion providers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// The result was written into the [`ToolResult`](crate::ToolResult); the session replies now.
    Done,
    /// The call runs elsewhere (a task, an interrupt, a later loop iteration): the session
    /// hands it out as a [`Call`](crate::Call) with a token to complete later.
    Defer,
}

/// `resultType` of a result (2026-07-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResultType {
    Complete,
    #[cfg_attr(not(feature = "input-required"), allow(dead_code))]
    InputRequired,
    /// A `CreateTaskResult` (tasks extension).
    #[cfg(feature = "tasks")]
    Task,
}

/// The fields every result of a revision ends with: `resultType`, the cache hints of
/// cacheable results and `_meta` serverInfo (2026-07-28; nothing before). One writer for
/// every result kind.
#[derive(Clone, Copy)]
pub(crate) struct Envelope<'s> {
    pub(crate) version: ProtocolVersion,
    pub(crate) info: &'s ServerInfo<'s>,
    /// `ttlMs` and `cacheScope`, for cacheable results.
    pub(crate) cache: Option<(u32, CacheScope)>,
    /// Seals `requestState` of `input_required` results.
    #[cfg(feature = "input-required")]
    pub(crate) seal: Option<SealCtx<'s>>,
}

impl core::fmt::Debug for Envelope<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Envelope")
            .field("version", &self.version)
            .finish()
    }
}

impl<'s> Envelope<'s> {
    pub(crate) fn new(version: ProtocolVersion, info: &'s ServerInfo<'s>) -> Self {
        Envelope {
            version,
            info,
            cache: None,
            #[cfg(feature = "input-required")]
            seal: None,
        }
    }

    /// Writes the trailing members of a result object (before its closing brace).
    pub(crate) fn trailer(&self, w: &mut JsonWriter<'_>, kind: ResultType) {
        if !self.version.features().result_type {
            return;
        }
        w.key("resultType");
        w.string(match kind {
            #[cfg(feature = "input-required")]
            ResultType::InputRequired => "input_required",
            #[cfg(feature = "tasks")]
            ResultType::Task => "task",
            _ => "complete",
        });
        if let (ResultType::Complete, Some((ttl, scope))) = (kind, self.cache) {
            w.key("ttlMs");
            w.u64(u64::from(ttl));
            w.key("cacheScope");
            w.string(scope.as_str());
        }
        w.key("_meta");
        w.begin_object();
        w.key(META_SERVER_INFO);
        self.info.write(w, ProtocolVersion::LATEST);
        w.end_object();
    }
}

#[cfg(feature = "input-required")]
/// How the session seals the `requestState` of one request's results.
#[derive(Clone, Copy)]
pub(crate) struct SealCtx<'s> {
    pub(crate) key: &'s crate::token::mac::SecretKey,
    pub(crate) method: &'static str,
    pub(crate) target: &'s str,
    pub(crate) expires_at_ms: u64,
    pub(crate) caps: ClientCaps,
}
