//! The model's bookkeeping: what each call token stands for ([`Tok`]), the requests owed a
//! reply, the deferred requests waiting, and what a run did ([`Report`]).

use super::server::SharedBook;
use mcp_rs_core::{CallToken, ClientCaps, Config, ListKind};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// One server frame with what schema validation needs.
#[derive(Debug, Clone)]
pub struct Frame {
    pub value: Value,
    /// Revision the frame was emitted under.
    pub rev: String,
    /// Method of the request it answers (responses only).
    pub method: Option<String>,
}

/// What a run did (for the replay test).
#[derive(Debug, Default)]
pub struct Report {
    pub frames: Vec<Frame>,
    pub messages: usize,
    pub replies: usize,
    pub completions: usize,
    pub cancels: usize,
    /// Messages whose requests the model could not list (numbers only serde_json cannot
    /// read; see `Expect::unreadable`). Only their own immediate replies went unmatched.
    pub unreadable_messages: usize,
    /// Batches whose replies did not fit and were replaced by one error (documented).
    pub overflowed_batches: usize,
    /// Requests that legitimately got no reply the model could attribute (see
    /// `Model::excused`); the end-of-run check accounts for each of them.
    pub excused: usize,
    /// Server-to-client requests sent, client responses routed to their call, and
    /// requests that timed out (cancelled and reported).
    pub out_requests: usize,
    pub routed: usize,
    pub timeouts: usize,
    /// `subscriptions/listen` streams opened, and list changes sent on them.
    pub listens: usize,
    pub listen_changes: usize,
    /// Sealed `requestState`s seen, and requests that carried a bad one (all refused).
    pub states: usize,
    pub bad_states: usize,
    /// Claims (`Claim`) checked against a reply.
    pub claims: usize,
}

/// What a call token stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Tool,
    Read,
    Prompt,
    Complete,
    /// A `subscriptions/listen` stream.
    Listen,
}

impl Kind {
    pub(super) fn method(self) -> &'static str {
        match self {
            Kind::Tool => "tools/call",
            Kind::Read => "resources/read",
            Kind::Prompt => "prompts/get",
            Kind::Complete => "completion/complete",
            Kind::Listen => "subscriptions/listen",
        }
    }
}

/// A call's server-to-client request.
#[derive(Debug, Clone, Copy)]
pub(super) struct Out {
    pub(super) id: u32,
    pub(super) deadline: u64,
    /// The client's response came in a message whose responses were not taken: it
    /// times out at the next `handle_*`.
    pub(super) delivered: bool,
}

#[derive(Debug, Clone)]
pub(super) struct Tok {
    /// The request id (raw), when known.
    pub(super) id: Option<String>,
    pub(super) live: bool,
    pub(super) cancelled: bool,
    /// Whether the call has a progress token (`None`: unknown, for non-tool calls).
    pub(super) wants_progress: Option<bool>,
    pub(super) last_progress: f64,
    pub(super) rev: String,
    pub(super) kind: Kind,
    /// The raw target (tool or prompt name, URI) its `requestState` is sealed to.
    pub(super) target: String,
    /// Client capabilities of a legacy call (the session's).
    pub(super) caps: ClientCaps,
    pub(super) out: Option<Out>,
    /// Listen stream: the list bits it opted in to.
    pub(super) listen: u8,
}

impl Tok {
    pub(super) fn new(id: Option<String>, kind: Kind, rev: String) -> Tok {
        Tok {
            id,
            live: true,
            cancelled: false,
            wants_progress: Some(false),
            last_progress: f64::NEG_INFINITY,
            rev,
            kind,
            target: String::new(),
            caps: ClientCaps::NONE,
            out: None,
            listen: 0,
        }
    }
}

/// A `requestState` the server sealed.
#[derive(Debug, Clone)]
pub(super) struct StateRec {
    pub(super) text: String,
    pub(super) method: String,
    pub(super) target: String,
    pub(super) expiry: u64,
}

/// Bits of list kinds (as `subscriptions/listen` opts in to them).
pub(super) fn list_bit(kind: ListKind) -> u8 {
    match kind {
        ListKind::Tools => 1,
        ListKind::Prompts => 2,
        ListKind::Resources => 4,
        _ => 8,
    }
}

pub(super) fn changed_method(kind: ListKind) -> &'static str {
    match kind {
        ListKind::Tools => "notifications/tools/list_changed",
        ListKind::Prompts => "notifications/prompts/list_changed",
        _ => "notifications/resources/list_changed",
    }
}

pub(super) struct Model {
    out_len: usize,
    pub(super) max_depth: usize,
    pub(super) max_batch: usize,
    pub(super) capacity: usize,
    pub(super) outstanding: HashMap<String, usize>,
    pub(super) tokens: HashMap<CallToken, Tok>,
    pub(super) order: Vec<CallToken>,
    /// Ids of requests waiting for a deferred answer whose call token is not known yet.
    pub(super) pool: Vec<String>,
    /// Requests of unreadable messages (`Expect::unreadable`) waiting for a deferred
    /// answer: their ids are unknown, so each may be answered under any id, once.
    pub(super) pool_any: usize,
    /// Calls in the session's table never handed out. Signed: inside the drain of a
    /// message whose new calls are counted only afterwards (unreadable messages,
    /// overflowed batches) a cancellation of such a call is subtracted first.
    pub(super) untaken: isize,
    /// `outstanding` for the requests counted in `pool_any`.
    pub(super) outstanding_any: usize,
    /// Requests that legitimately get no reply the model can attribute: requests of an
    /// overflowed batch whose immediate replies were dropped, and calls cancelled by an
    /// unreadable message (the model cannot tell which pool entry was cancelled). Each
    /// leaves exactly one entry in `pool`/`pool_any` and `outstanding`, and `finish`
    /// requires exactly this many left over.
    pub(super) excused: usize,
    /// Number tokens serde_json cannot read that the server was given, by unreadable
    /// messages (ids, progress tokens) or by the application (`structured_raw`): the
    /// server may echo them, and only those are tolerated in its frames.
    pub(super) unreadable_numbers: std::collections::HashSet<String>,
    pub(super) info: HashMap<String, (String, String)>,
    pub(super) cursors: Vec<String>,
    pub(super) seq: u64,
    pub(super) report: Report,
    /// The session clock (every `handle`/`handle_timeout` passes it).
    pub(super) now: u64,
    pub(super) ttl: u64,
    pub(super) book: SharedBook,
    /// Sealed states seen in results (the latest 16).
    pub(super) states: Vec<StateRec>,
    /// Every server-to-client request id issued (they must be unique), and the ids of
    /// those no longer waiting (late responses name them).
    pub(super) out_seen: HashSet<u32>,
    pub(super) stale_out: Vec<u32>,
    /// Requests whose timeout is owed now: call, id, whether `notifications/cancelled`
    /// was sent for it.
    pub(super) due: Vec<(CallToken, u32, bool)>,
    /// List changes owed to listen streams (call, method).
    pub(super) listen_owed: Vec<(CallToken, &'static str)>,
    pub(super) list_changed: bool,
    pub(super) minimal: bool,
}

pub(super) fn remove_one(v: &mut Vec<String>, x: &str) -> bool {
    match v.iter().position(|y| y == x) {
        Some(i) => {
            v.remove(i);
            true
        }
        None => false,
    }
}

impl Model {
    pub(super) fn new(
        out_len: usize,
        config: &Config,
        capacity: usize,
        book: SharedBook,
        minimal: bool,
    ) -> Model {
        Model {
            now: 0,
            ttl: config.state_ttl_ms,
            book,
            states: Vec::new(),
            out_seen: HashSet::new(),
            stale_out: Vec::new(),
            due: Vec::new(),
            listen_owed: Vec::new(),
            list_changed: config.list_changed,
            minimal,
            out_len,
            max_depth: usize::from(config.max_depth),
            max_batch: usize::from(config.max_batch),
            capacity,
            outstanding: HashMap::new(),
            tokens: HashMap::new(),
            order: Vec::new(),
            pool: Vec::new(),
            pool_any: 0,
            untaken: 0,
            outstanding_any: 0,
            excused: 0,
            unreadable_numbers: Default::default(),
            info: HashMap::new(),
            cursors: Vec::new(),
            seq: 0,
            report: Report::default(),
        }
    }

    pub(super) fn owe(&mut self, id: &str) {
        *self.outstanding.entry(id.to_string()).or_default() += 1;
    }

    /// One reply (of any kind) to a request with this id: exactly one was owed. A request
    /// of an unreadable message (`outstanding_any`) may be answered under any id.
    pub(super) fn pay(&mut self, id: &str, what: &str) {
        match self.outstanding.get_mut(id) {
            Some(n) if *n > 0 => *n -= 1,
            _ if self.outstanding_any > 0 => self.outstanding_any -= 1,
            _ => panic!("{what} with id {id} that nobody is waiting for"),
        }
        self.report.replies += 1;
    }

    /// Takes the request with this id off the pool of deferred requests (an exact entry
    /// first, else one of an unreadable message); false if none is waiting.
    pub(super) fn take_pool(&mut self, id: &str) -> bool {
        if remove_one(&mut self.pool, id) {
            true
        } else if self.pool_any > 0 {
            self.pool_any -= 1;
            true
        } else {
            false
        }
    }

    pub(super) fn is_long(&self, id: &str) -> bool {
        id.chars().count() * 6 + 200 > self.out_len
    }
}
