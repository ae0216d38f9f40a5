//! The runtime state the drive loops share: the server's [`Shared`] part, the per-message
//! handler ([`Combined`]), list-change counters, and how an accept loop sees a connection
//! ([`Tracker`], [`Policy`]). Below the driver; above the registries and output types.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mcp_rs_core::{Config, ListKind, ServerHandler, Session, ToolSet};
use tokio::sync::watch;

use crate::clock::now_ms;
use crate::config::{Limits, ServerInfo};
use crate::deferred::AsyncHandlers;
use crate::keys::Keys;
use crate::registry::{Snapshot, Tools};

/// A connection's own provider instance.
pub(crate) type OwnProvider = Box<dyn ServerHandler + Send>;

/// The capabilities beyond tools (resources, prompts, completion), answered inside the
/// drive loop.
pub(crate) enum Provider {
    /// One instance for every connection, locked for each message ([`Server::provide`]).
    ///
    /// [`Server::provide`]: crate::Server::provide
    Shared(Arc<std::sync::Mutex<dyn ServerHandler + Send>>),
    /// An instance per connection, made when it starts: no lock
    /// ([`Server::provider_factory`]).
    ///
    /// [`Server::provider_factory`]: crate::Server::provider_factory
    PerConnection(Arc<dyn Fn() -> OwnProvider + Send + Sync>),
}

pub(crate) struct Shared {
    pub(crate) info: ServerInfo,
    /// Session policy; its keys are those of `keys` at creation (see `session_config`).
    pub(crate) config: Config,
    /// The keys new sessions get: replaced by [`Server::set_keys`].
    pub(crate) keys: std::sync::RwLock<Keys>,
    pub(crate) limits: Limits,
    pub(crate) tools: Tools,
    pub(crate) provider: Option<Provider>,
    /// The task table of the tasks extension ([`Server::tasks`](crate::Server::tasks)).
    pub(crate) tasks: Option<crate::context::TaskTableRef>,
    /// Renders the `prompts/get` requests the provider defers.
    pub(crate) async_handlers: AsyncHandlers,
    /// Change counters of the prompt, resource and template lists (tool changes go through
    /// the registry): connections announce each advance.
    pub(crate) lists: watch::Sender<ListCounters>,
    pub(crate) shutdown: watch::Sender<bool>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("info", &self.info)
            .field("limits", &self.limits)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// A new connection's own provider, if the server makes one per connection.
    pub(crate) fn own_provider(&self) -> Option<OwnProvider> {
        match &self.provider {
            Some(Provider::PerConnection(make)) => Some(make()),
            _ => None,
        }
    }

    /// The config of a new session: the policy with the current keys.
    pub(crate) fn session_config(&self) -> Config {
        let mut config = self.config;
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .apply(&mut config);
        config
    }
}

/// The lists whose changes [`Shared::lists`] counts, in its order (tool changes go through
/// the registry).
/// One change counter per list of [`COUNTED_LISTS`].
pub(crate) type ListCounters = [u64; COUNTED_LISTS.len()];

pub(crate) const COUNTED_LISTS: [ListKind; 4] = [
    ListKind::Tools,
    ListKind::Prompts,
    ListKind::Resources,
    ListKind::ResourceTemplates,
];

/// Tells `session` which lists changed between the counters `seen` and `now`, and
/// remembers `now`.
pub(crate) fn note_list_changes(
    session: &mut Session<'_>,
    now: ListCounters,
    seen: &mut ListCounters,
) {
    for ((kind, new), old) in COUNTED_LISTS.into_iter().zip(now).zip(*seen) {
        if new != old {
            session.list_changed(kind);
        }
    }
    *seen = now;
}

/// The tool snapshot of a connection plus the server's other providers, as one handler.
/// The server's shared provider is locked only when the session asks for it (a message
/// for a tool or a list of tools never waits for it), and until this handler drops.
pub(crate) struct Combined<'a> {
    tools: &'a mut Snapshot,
    shared: &'a Shared,
    /// The connection's own provider, if the server makes one per connection.
    own: Option<&'a mut (dyn ServerHandler + Send + 'static)>,
    /// The server's shared provider, once locked.
    locked: Option<std::sync::MutexGuard<'a, dyn ServerHandler + Send + 'static>>,
    /// The task table, once locked.
    tasks: Option<crate::context::Watched<'a>>,
}

impl<'a> Combined<'a> {
    /// The handler of one message: `tools` and the connection's own provider (`own`, from
    /// [`Shared::own_provider`]), or else the server's shared one.
    pub(crate) fn new(
        shared: &'a Shared,
        tools: &'a mut Snapshot,
        own: Option<&'a mut (dyn ServerHandler + Send + 'static)>,
    ) -> Self {
        Combined {
            tools,
            shared,
            own,
            locked: None,
            tasks: None,
        }
    }

    fn provider(&mut self) -> Option<&mut (dyn ServerHandler + Send + 'static)> {
        if self.own.is_some() {
            return self.own.as_deref_mut();
        }
        if self.locked.is_none() {
            if let Some(Provider::Shared(p)) = &self.shared.provider {
                // A provider that panicked keeps serving: its state is plain data.
                self.locked = Some(p.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
            }
        }
        self.locked.as_deref_mut()
    }
}

impl ServerHandler for Combined<'_> {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        // A tool may report to the task table from its inline handler: never call one
        // with the table locked.
        self.tasks = None;
        // Task tools run detached against the table (only a fresh snapshot lacks it).
        if self.tools.1.is_none() && self.shared.tasks.is_some() {
            self.tools.1 = self.shared.tasks.clone();
        }
        Some(self.tools)
    }
    fn resources(&mut self) -> Option<&mut dyn mcp_rs_core::model::resources::ResourceSet> {
        self.provider()?.resources()
    }
    fn prompts(&mut self) -> Option<&mut dyn mcp_rs_core::model::prompts::PromptSet> {
        self.provider()?.prompts()
    }
    fn completions(&mut self) -> Option<&mut dyn mcp_rs_core::model::completion::Completions> {
        self.provider()?.completions()
    }
    fn skills(&mut self) -> Option<&dyn mcp_rs_core::model::skills::SkillSet> {
        self.provider()?.skills()
    }
    fn tasks(&mut self) -> Option<&mut dyn mcp_rs_core::model::tasks::TaskStore> {
        if self.tasks.is_none() {
            let shared = self.shared;
            self.tasks = Some(shared.tasks.as_ref()?.lock());
        }
        match self.tasks.as_mut() {
            Some(t) => Some(t),
            None => None,
        }
    }
}

/// Timeouts of a byte-stream connection (`None`: no limit), and how its accept loop sees it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Policy {
    pub(crate) write: Option<std::time::Duration>,
    pub(crate) idle: Option<std::time::Duration>,
    pub(crate) line: Option<std::time::Duration>,
    /// Set by an accept loop that may shed this connection while it is idle.
    pub(crate) tracker: Option<Arc<Tracker>>,
    /// Becomes `true` when the input has ended although not all of it is read yet (stdio,
    /// which reads ahead on a thread): the writes still owed then get `close_timeout`.
    pub(crate) input_ended: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Policy {
    /// The socket timeouts of `limits`.
    pub(crate) fn sockets(limits: &Limits) -> Policy {
        Policy {
            write: Some(limits.write_timeout),
            idle: Some(limits.idle_timeout),
            line: Some(limits.line_timeout),
            tracker: None,
            input_ended: None,
        }
    }
}

/// How long a connection must have been idle before it may be shed to make room for a new
/// one at the connection limit.
#[cfg_attr(not(feature = "socket"), allow(dead_code))]
pub(crate) const SHED_MIN_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

/// One connection as its accept loop sees it: whether it is idle (nothing buffered, asked
/// or running) and since when, and a way to ask it to close.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    /// Session-clock ms when it became idle; 0 while busy; [`Tracker::SHEDDING`] once chosen.
    idle_since: AtomicU64,
    pub(crate) shed: tokio::sync::Notify,
}

impl Tracker {
    const SHEDDING: u64 = u64::MAX;

    /// Records a change between busy and idle (the clock is read on a transition only).
    pub(crate) fn set_idle(&self, idle: bool) {
        let current = self.idle_since.load(Ordering::Relaxed);
        if idle && current == 0 {
            let _ = self.idle_since.compare_exchange(
                0,
                now_ms().max(1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        } else if !idle && current != 0 && current != Self::SHEDDING {
            let _ =
                self.idle_since
                    .compare_exchange(current, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// When it became idle, if it is idle and not already being shed.
    #[cfg_attr(not(feature = "socket"), allow(dead_code))]
    pub(crate) fn idle_since(&self) -> Option<u64> {
        match self.idle_since.load(Ordering::Relaxed) {
            0 | Self::SHEDDING => None,
            t => Some(t),
        }
    }

    /// Asks the connection to close (it finishes what it is writing first). False if it
    /// stopped being idle or was already chosen meanwhile.
    #[cfg_attr(not(feature = "socket"), allow(dead_code))]
    pub(crate) fn shed(&self, since: u64) -> bool {
        let chosen = self
            .idle_since
            .compare_exchange(since, Self::SHEDDING, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        if chosen {
            self.shed.notify_one();
        }
        chosen
    }
}
