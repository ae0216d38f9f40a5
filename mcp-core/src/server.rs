//! What a server is and offers: its identity ([`ServerInfo`]), the [`ServerHandler`] trait
//! with one optional provider per capability, and the result envelope every result shares.
//!
//! Capabilities in `initialize` and `server/discover` are derived from the providers a
//! handler returns: a server with no [`PromptSet`] declares no `prompts`, and `prompts/*`
//! requests are answered -32601.

use crate::content::{write_icons, Icon};
use crate::json::JsonWriter;
use crate::tools::ToolSet;
use crate::version::ProtocolVersion;
use crate::wire::params::META_SERVER_INFO;

#[cfg(feature = "completion")]
use crate::completion::Completions;
#[cfg(feature = "prompts")]
use crate::prompts::PromptSet;
#[cfg(feature = "resources")]
use crate::resources::ResourceSet;

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

/// What a server offers: one optional provider per capability. Every method defaults to
/// `None` (capability absent). A plain [`ToolSet`] is served by
/// [`Session::handle_message`](crate::Session::handle_message) without implementing this.
///
/// ```
/// use mcp_rs_core::{ServerHandler, Tool, ToolSet};
/// static TOOLS: [Tool<'static>; 1] = [Tool::new("echo", r#"{"type":"object"}"#)];
/// struct Echo;
/// impl ToolSet for Echo {
///     fn len(&self) -> usize { TOOLS.len() }
///     fn get(&self, i: usize) -> Option<Tool<'_>> { TOOLS.get(i).copied() }
/// }
/// struct Demo { tools: Echo }
/// impl ServerHandler for Demo {
///     fn tools(&mut self) -> Option<&mut dyn ToolSet> { Some(&mut self.tools) }
/// }
/// ```
pub trait ServerHandler {
    /// The tools, if the server has the `tools` capability.
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        None
    }
    /// The resources, if the server has the `resources` capability.
    #[cfg(feature = "resources")]
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        None
    }
    /// The prompts, if the server has the `prompts` capability.
    #[cfg(feature = "prompts")]
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        None
    }
    /// Argument completion, if the server has the `completions` capability.
    #[cfg(feature = "completion")]
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        None
    }
}

/// Serves a bare [`ToolSet`] (what `handle_message` wraps its argument in).
pub(crate) struct ToolsOnly<'t, T: ?Sized>(pub(crate) &'t mut T);

impl<T: ToolSet + ?Sized> ToolSet for ToolsOnly<'_, T> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, index: usize) -> Option<crate::Tool<'_>> {
        self.0.get(index)
    }
    fn find(&self, name: crate::json::JsonStr<'_>) -> Option<usize> {
        self.0.find(name)
    }
    fn call(
        &mut self,
        request: &crate::CallRequest<'_>,
        result: &mut crate::ToolResult<'_, '_>,
    ) -> crate::Dispatch {
        self.0.call(request, result)
    }
}

impl<T: ToolSet + ?Sized> ServerHandler for ToolsOnly<'_, T> {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(self)
    }
}

/// `resultType` of a result (2026-07-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResultType {
    Complete,
    #[cfg_attr(not(feature = "mrtr"), allow(dead_code))]
    InputRequired,
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
    #[cfg(feature = "mrtr")]
    pub(crate) seal: Option<crate::mrtr::SealCtx<'s>>,
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
            #[cfg(feature = "mrtr")]
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
            #[cfg(feature = "mrtr")]
            ResultType::InputRequired => "input_required",
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
