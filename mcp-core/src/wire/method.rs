//! The method table: every JSON-RPC method the server knows, in one place.
//!
//! Dispatch is one admission check (era, initialization, capability) driven by a row of
//! [`METHODS`] plus one `match` on [`Method`]; no method string is compared anywhere else.
//!
//! | method | eras | before `initialize` | capability | target param |
//! |---|---|---|---|---|
//! | `initialize` | legacy | allowed | — | — |
//! | `ping` | legacy | allowed | — | — |
//! | `server/discover` | both | allowed | — | — |
//! | `logging/setLevel` | legacy | refused | logging | — |
//! | `tools/list` | both | refused | tools | — |
//! | `tools/call` | both | refused | tools | `name` |
//! | `resources/list` | both | refused | resources | — |
//! | `resources/templates/list` | both | refused | resources | — |
//! | `resources/read` | both | refused | resources | `uri` |
//! | `resources/subscribe` | legacy | refused | resources.subscribe | `uri` |
//! | `resources/unsubscribe` | legacy | refused | resources.subscribe | `uri` |
//! | `prompts/list` | both | refused | prompts | — |
//! | `prompts/get` | both | refused | prompts | `name` |
//! | `completion/complete` | both | refused | completions | — |
//! | `subscriptions/listen` | modern | — | — | — |
//!
//! Notifications from the client: `notifications/initialized`, `notifications/cancelled`,
//! `notifications/roots/list_changed` (all others are ignored, as the spec asks).

/// A request method the server knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `initialize`
    Initialize,
    /// `ping`
    Ping,
    /// `server/discover`
    Discover,
    /// `logging/setLevel`
    SetLevel,
    /// `tools/list`
    ToolsList,
    /// `tools/call`
    ToolsCall,
    /// `resources/list`
    ResourcesList,
    /// `resources/templates/list`
    TemplatesList,
    /// `resources/read`
    ResourcesRead,
    /// `resources/subscribe`
    Subscribe,
    /// `resources/unsubscribe`
    Unsubscribe,
    /// `prompts/list`
    PromptsList,
    /// `prompts/get`
    PromptsGet,
    /// `completion/complete`
    Complete,
    /// `subscriptions/listen`
    Listen,
}

/// A notification method the server acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Notification {
    /// `notifications/initialized`
    Initialized,
    /// `notifications/cancelled`
    Cancelled,
    /// `notifications/roots/list_changed`
    RootsListChanged,
}

/// Which eras serve a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eras {
    /// Only sessions opened with `initialize` (2024-11-05 .. 2025-11-25).
    Legacy,
    /// Only stateless 2026-07-28 requests.
    Modern,
    /// Both.
    Both,
}

/// The server capability a method needs; without it the method is answered -32601.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// Always available.
    None,
    /// `logging`
    Logging,
    /// `tools`
    Tools,
    /// `resources`
    Resources,
    /// `resources.subscribe`
    ResourceSubscribe,
    /// `prompts`
    Prompts,
    /// `completions`
    Completions,
}

/// Which request parameter names the method's target (mirrored by HTTP's `Mcp-Name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// No target.
    None,
    /// `params.name`
    Name,
    /// `params.uri`
    Uri,
}

/// One row of the method table.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The method.
    pub method: Method,
    /// Its wire name.
    pub name: &'static str,
    /// Which eras serve it.
    pub eras: Eras,
    /// Whether a legacy session must have been initialized first.
    pub needs_init: bool,
    /// The capability it needs.
    pub capability: Capability,
    /// Which parameter names its target.
    pub target: Target,
}

const fn row(
    method: Method,
    name: &'static str,
    eras: Eras,
    needs_init: bool,
    capability: Capability,
    target: Target,
) -> Row {
    Row {
        method,
        name,
        eras,
        needs_init,
        capability,
        target,
    }
}

use Capability as C;
use Eras::{Both, Legacy, Modern};
use Method as M;

/// The table.
pub const METHODS: [Row; 15] = [
    row(
        M::Initialize,
        "initialize",
        Legacy,
        false,
        C::None,
        Target::None,
    ),
    row(M::Ping, "ping", Legacy, false, C::None, Target::None),
    row(
        M::Discover,
        "server/discover",
        Both,
        false,
        C::None,
        Target::None,
    ),
    row(
        M::SetLevel,
        "logging/setLevel",
        Legacy,
        true,
        C::Logging,
        Target::None,
    ),
    row(
        M::ToolsList,
        "tools/list",
        Both,
        true,
        C::Tools,
        Target::None,
    ),
    row(
        M::ToolsCall,
        "tools/call",
        Both,
        true,
        C::Tools,
        Target::Name,
    ),
    row(
        M::ResourcesList,
        "resources/list",
        Both,
        true,
        C::Resources,
        Target::None,
    ),
    row(
        M::TemplatesList,
        "resources/templates/list",
        Both,
        true,
        C::Resources,
        Target::None,
    ),
    row(
        M::ResourcesRead,
        "resources/read",
        Both,
        true,
        C::Resources,
        Target::Uri,
    ),
    row(
        M::Subscribe,
        "resources/subscribe",
        Legacy,
        true,
        C::ResourceSubscribe,
        Target::Uri,
    ),
    row(
        M::Unsubscribe,
        "resources/unsubscribe",
        Legacy,
        true,
        C::ResourceSubscribe,
        Target::Uri,
    ),
    row(
        M::PromptsList,
        "prompts/list",
        Both,
        true,
        C::Prompts,
        Target::None,
    ),
    row(
        M::PromptsGet,
        "prompts/get",
        Both,
        true,
        C::Prompts,
        Target::Name,
    ),
    row(
        M::Complete,
        "completion/complete",
        Both,
        true,
        C::Completions,
        Target::None,
    ),
    row(
        M::Listen,
        "subscriptions/listen",
        Modern,
        true,
        C::None,
        Target::None,
    ),
];

const NOTIFICATIONS: [(Notification, &str); 3] = [
    (Notification::Initialized, "notifications/initialized"),
    (Notification::Cancelled, "notifications/cancelled"),
    (
        Notification::RootsListChanged,
        "notifications/roots/list_changed",
    ),
];

impl Method {
    /// The table row of a wire name.
    pub fn lookup(name: &str) -> Option<&'static Row> {
        METHODS.iter().find(|r| r.name == name)
    }
    /// This method's row.
    pub fn row(self) -> &'static Row {
        // Every variant has a row (checked by a test); the fallback is never taken.
        METHODS
            .iter()
            .find(|r| r.method == self)
            .unwrap_or(&METHODS[0])
    }
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        self.row().name
    }
}

impl Notification {
    /// The notification of a wire name.
    pub fn lookup(name: &str) -> Option<Notification> {
        NOTIFICATIONS
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(m, _)| *m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_round_trips() {
        for r in METHODS {
            assert_eq!(Method::lookup(r.name).map(|x| x.method), Some(r.method));
            assert_eq!(r.method.as_str(), r.name);
        }
        assert!(Method::lookup("tools/List").is_none());
        assert_eq!(
            Notification::lookup("notifications/cancelled"),
            Some(Notification::Cancelled)
        );
    }
}
