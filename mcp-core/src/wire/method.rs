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
//! | `skills/list` | both | refused | skills extension (with resources) | — |
//! | `skills/get` | both | refused | skills extension (with resources) | — |
//! | `resources/directory/read` | both | refused | skills extension (with resources) | — |
//! | `subscriptions/listen` | modern | — | — | — |
//! | `tasks/get` | modern | — | tasks extension (a task table) | `taskId` |
//! | `tasks/update` | modern | — | tasks extension (a task table) | `taskId` |
//! | `tasks/cancel` | modern | — | tasks extension (a task table) | `taskId` |
//!
//! `tasks/result` and `tasks/list` (tasks v1) are not in the table: -32601.
//!
//! The skills extension's methods name no target: `Mcp-Name` is defined for the base
//! protocol's methods only, and SDK clients (the TypeScript SDK 2.4) send none for them.
//!
//! Notifications from the client: `notifications/initialized`, `notifications/cancelled`,
//! `notifications/roots/list_changed` (all others are ignored, as the spec asks).
//!
//! The other direction, for the client: requests a server sends ([`ServerMethod`]) and
//! its notifications ([`ServerNotification`]).

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
    /// `skills/list` (skills extension)
    SkillsList,
    /// `skills/get` (skills extension)
    SkillsGet,
    /// `resources/directory/read` (skills extension)
    DirectoryRead,
    /// `tasks/get` (tasks extension)
    TasksGet,
    /// `tasks/update` (tasks extension)
    TasksUpdate,
    /// `tasks/cancel` (tasks extension)
    TasksCancel,
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
    /// The `io.modelcontextprotocol/skills` extension (it needs `resources` as well).
    Skills,
    /// The `io.modelcontextprotocol/tasks` extension (a task table).
    Tasks,
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
    /// `params.taskId` (the tasks extension's methods, SEP-2663 "Routing Headers")
    TaskId,
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

const fn row(method: Method, needs_init: bool, capability: Capability, target: Target) -> Row {
    Row {
        method,
        name: method.as_str(),
        eras: method.eras(),
        needs_init,
        capability,
        target,
    }
}

use Capability as C;
use Method as M;

/// The table. Rows of capabilities a build leaves out (features `resources`, `prompts`,
/// `completion`, `listen`) are not in it: those methods are unknown there (-32601), and a
/// microcontroller image does not carry their names.
pub const METHODS: &[Row] = &[
    row(M::Initialize, false, C::None, Target::None),
    row(M::Ping, false, C::None, Target::None),
    row(M::Discover, false, C::None, Target::None),
    row(M::SetLevel, true, C::Logging, Target::None),
    row(M::ToolsList, true, C::Tools, Target::None),
    row(M::ToolsCall, true, C::Tools, Target::Name),
    #[cfg(feature = "resources")]
    row(M::ResourcesList, true, C::Resources, Target::None),
    #[cfg(feature = "resources")]
    row(M::TemplatesList, true, C::Resources, Target::None),
    #[cfg(feature = "resources")]
    row(M::ResourcesRead, true, C::Resources, Target::Uri),
    // Legacy-only: kept in every build so that 2026-07-28 requests for them get the
    // "not available in this protocol" message.
    row(M::Subscribe, true, C::ResourceSubscribe, Target::Uri),
    row(M::Unsubscribe, true, C::ResourceSubscribe, Target::Uri),
    #[cfg(feature = "prompts")]
    row(M::PromptsList, true, C::Prompts, Target::None),
    #[cfg(feature = "prompts")]
    row(M::PromptsGet, true, C::Prompts, Target::Name),
    #[cfg(feature = "completion")]
    row(M::Complete, true, C::Completions, Target::None),
    #[cfg(feature = "listen")]
    row(M::Listen, true, C::None, Target::None),
    #[cfg(feature = "skills")]
    row(M::SkillsList, true, C::Skills, Target::None),
    #[cfg(feature = "skills")]
    row(M::SkillsGet, true, C::Skills, Target::None),
    #[cfg(feature = "skills")]
    row(M::DirectoryRead, true, C::Skills, Target::None),
    #[cfg(feature = "tasks")]
    row(M::TasksGet, true, C::Tasks, Target::TaskId),
    #[cfg(feature = "tasks")]
    row(M::TasksUpdate, true, C::Tasks, Target::TaskId),
    #[cfg(feature = "tasks")]
    row(M::TasksCancel, true, C::Tasks, Target::TaskId),
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
        METHODS
            .iter()
            .find(|r| super::bytes_eq(r.name.as_bytes(), name.as_bytes()))
    }
    /// The table row of a method name as sent (escapes decoded; a name longer than any in
    /// the table matches nothing). The session dispatches with it and adapters peek with it
    /// ([`peek`](crate::wire::peek)), so both always name the same method.
    pub fn lookup_json(name: crate::wire::json::JsonStr<'_>) -> Option<&'static Row> {
        let mut buf = [0u8; 64];
        name.text_in(&mut buf).and_then(Self::lookup)
    }
    /// Which eras serve the method (the table's eras come from here; the client reads it
    /// too, in every build, whatever rows the server features leave out).
    pub const fn eras(self) -> Eras {
        match self {
            Method::Initialize
            | Method::Ping
            | Method::SetLevel
            | Method::Subscribe
            | Method::Unsubscribe => Eras::Legacy,
            Method::Listen | Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                Eras::Modern
            }
            _ => Eras::Both,
        }
    }
    /// The wire name (the table's names come from here).
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::Discover => "server/discover",
            Method::SetLevel => "logging/setLevel",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ResourcesList => "resources/list",
            Method::TemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::Subscribe => "resources/subscribe",
            Method::Unsubscribe => "resources/unsubscribe",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::Complete => "completion/complete",
            Method::Listen => "subscriptions/listen",
            Method::SkillsList => "skills/list",
            Method::SkillsGet => "skills/get",
            Method::DirectoryRead => "resources/directory/read",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
        }
    }
}

impl Notification {
    /// The notification of a wire name.
    pub fn lookup(name: &str) -> Option<Notification> {
        NOTIFICATIONS
            .iter()
            .find(|(_, n)| super::bytes_eq(n.as_bytes(), name.as_bytes()))
            .map(|(m, _)| *m)
    }
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        NOTIFICATIONS
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("", |(_, n)| n)
    }
}

/// A request a server sends to a client (the client's side of the table).
///
/// | method | eras | client capability |
/// |---|---|---|
/// | `ping` | legacy | — (answered by the client itself) |
/// | `sampling/createMessage` | legacy | `sampling` |
/// | `elicitation/create` | legacy (2025-06-18+) | `elicitation` |
/// | `roots/list` | legacy | `roots` |
///
/// 2026-07-28 servers send no requests: they ask with `input_required` results, whose
/// `inputRequests` name the last three methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerMethod {
    /// `ping`
    Ping,
    /// `sampling/createMessage`
    CreateMessage,
    /// `elicitation/create`
    Elicit,
    /// `roots/list`
    ListRoots,
}

const SERVER_METHODS: [(ServerMethod, &str); 4] = [
    (ServerMethod::Ping, "ping"),
    (ServerMethod::CreateMessage, "sampling/createMessage"),
    (ServerMethod::Elicit, "elicitation/create"),
    (ServerMethod::ListRoots, "roots/list"),
];

impl ServerMethod {
    /// The method of a wire name.
    pub fn lookup(name: &str) -> Option<ServerMethod> {
        SERVER_METHODS
            .iter()
            .find(|(_, n)| super::bytes_eq(n.as_bytes(), name.as_bytes()))
            .map(|(m, _)| *m)
    }
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        SERVER_METHODS
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("", |(_, n)| n)
    }
}

/// A notification a server sends to a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/tools/list_changed`
    ToolsListChanged,
    /// `notifications/prompts/list_changed`
    PromptsListChanged,
    /// `notifications/resources/list_changed`
    ResourcesListChanged,
    /// `notifications/resources/updated`
    ResourceUpdated,
    /// `notifications/message` (a log message)
    Message,
    /// `notifications/progress`
    Progress,
    /// `notifications/cancelled` (the server withdraws a request it sent)
    Cancelled,
    /// `notifications/subscriptions/acknowledged` (2026-07-28: a `subscriptions/listen`
    /// stream is open)
    SubscriptionsAcknowledged,
}

const SERVER_NOTIFICATIONS: [(ServerNotification, &str); 8] = [
    (
        ServerNotification::ToolsListChanged,
        "notifications/tools/list_changed",
    ),
    (
        ServerNotification::PromptsListChanged,
        "notifications/prompts/list_changed",
    ),
    (
        ServerNotification::ResourcesListChanged,
        "notifications/resources/list_changed",
    ),
    (
        ServerNotification::ResourceUpdated,
        "notifications/resources/updated",
    ),
    (ServerNotification::Message, "notifications/message"),
    (ServerNotification::Progress, "notifications/progress"),
    (ServerNotification::Cancelled, "notifications/cancelled"),
    (
        ServerNotification::SubscriptionsAcknowledged,
        "notifications/subscriptions/acknowledged",
    ),
];

impl ServerNotification {
    /// The notification of a wire name.
    pub fn lookup(name: &str) -> Option<ServerNotification> {
        SERVER_NOTIFICATIONS
            .iter()
            .find(|(_, n)| super::bytes_eq(n.as_bytes(), name.as_bytes()))
            .map(|(m, _)| *m)
    }
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        SERVER_NOTIFICATIONS
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("", |(_, n)| n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_round_trips() {
        for r in METHODS.iter().copied() {
            assert_eq!(Method::lookup(r.name).map(|x| x.method), Some(r.method));
            assert_eq!(r.method.as_str(), r.name);
        }
        assert!(Method::lookup("tools/List").is_none());
        assert_eq!(
            Notification::lookup("notifications/cancelled"),
            Some(Notification::Cancelled)
        );
        for (n, name) in NOTIFICATIONS {
            assert_eq!(n.as_str(), name);
        }
        for (m, name) in SERVER_METHODS {
            assert_eq!(ServerMethod::lookup(name), Some(m));
            assert_eq!(m.as_str(), name);
        }
        for (n, name) in SERVER_NOTIFICATIONS {
            assert_eq!(ServerNotification::lookup(name), Some(n));
            assert_eq!(n.as_str(), name);
        }
        assert_eq!(ServerMethod::lookup("tools/list"), None);
    }

    #[test]
    fn eras_of_the_table_come_from_the_method() {
        use Method as M;
        assert_eq!(M::Ping.eras(), Eras::Legacy);
        assert_eq!(M::SetLevel.eras(), Eras::Legacy);
        assert_eq!(M::Discover.eras(), Eras::Both);
        assert_eq!(M::ToolsCall.eras(), Eras::Both);
        assert_eq!(M::Listen.eras(), Eras::Modern);
        for r in METHODS {
            assert_eq!(r.eras, r.method.eras());
        }
    }
}
