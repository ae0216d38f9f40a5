//! 2026-07-28 `subscriptions/listen`: an acknowledgement naming the honoured subset, then
//! only the opted-in notifications (list changes, updates of subscribed resources), each
//! tagged with the subscription id, until the client cancels or the server closes the
//! stream.
//!
//! | `notifications` member | honoured when | then sent on the stream |
//! |---|---|---|
//! | `toolsListChanged: true` | the server has tools and [`Config::list_changed`](super::Config::list_changed) | `notifications/tools/list_changed` after [`Session::list_changed`] |
//! | `promptsListChanged: true` | the same for prompts (feature `prompts`) | `notifications/prompts/list_changed` |
//! | `resourcesListChanged: true` | the same for resources (feature `resources`; templates included) | `notifications/resources/list_changed` |
//! | `resourceSubscriptions: [uri, ...]` | feature `resources`, [`ResourceSet::subscribable`](crate::model::resources::ResourceSet::subscribable), and the URI is a listed resource or matches a template; at most [`MAX_RESOURCE_SUBSCRIPTIONS`](super::MAX_RESOURCE_SUBSCRIPTIONS) per stream, the first ones in request order | `notifications/resources/updated {uri}` after [`Session::resource_updated_next`] |
//! | `taskIds: [id, ...]` | feature `tasks`, the request's client capabilities list the tasks extension (else -32021), and the id names a live task of [`ServerHandler::tasks`](crate::ServerHandler::tasks); at most [`MAX_TASK_SUBSCRIPTIONS`](super::MAX_TASK_SUBSCRIPTIONS) per stream, the first ones in request order | `notifications/tasks {DetailedTask}`: the current state once, then each change, after [`Session::tasks_changed_next`] (see `session::task_status`) |
//!
//! The acknowledgement (`notifications/subscriptions/acknowledged`, always the first frame
//! of a stream, routed as the reply) echoes what was honoured: the list filters as `true`
//! and `resourceSubscriptions` / `taskIds` as the URIs / task ids kept (each once, as the
//! client spelled them; the member is left out when none was kept). Unknown URIs, URIs beyond the bound,
//! repeats and non-strings are left out silently: the client learns from the
//! acknowledgement which ones it will hear about. Every frame on the stream carries
//! `_meta["io.modelcontextprotocol/subscriptionId"]`, the id of the listen request:
//!
//! ```text
//! → {"jsonrpc":"2.0","id":"s1","method":"subscriptions/listen","params":{"notifications":
//!     {"resourceSubscriptions":["sensor://temperature","sensor://nope"]},"_meta":{...}}}
//! ← {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":
//!     {"notifications":{"resourceSubscriptions":["sensor://temperature"]},
//!      "_meta":{"io.modelcontextprotocol/subscriptionId":"s1"}}}
//! ← {"jsonrpc":"2.0","method":"notifications/resources/updated","params":
//!     {"uri":"sensor://temperature","_meta":{"io.modelcontextprotocol/subscriptionId":"s1"}}}
//! ```
//!
//! The core keeps these subscriptions itself (the application's legacy
//! [`ResourceSet::subscribe`](crate::model::resources::ResourceSet::subscribe) hook is not
//! called), in the stream's call slot and without a heap: each URI as its 64-bit FNV-1a
//! hash (decoded UTF-8 text), 8 bytes per entry, `8 × MAX_RESOURCE_SUBSCRIPTIONS` = 32
//! bytes per slot. Since the URI text is not kept, the application names the URI again
//! when it changes: [`Session::resource_updated_next`] yields one frame per subscribed
//! stream (a cursor over the slots), routed [`Route::Call`] with the stream's token. Two
//! different URIs with the same hash are the only inexactness: a stream subscribed to one
//! also gets the other's `updated` notification, one extra and harmless notification (the
//! client re-reads a resource that did not change); no subscribed update is ever missed.

use super::faults::{Detail, Fault};
#[cfg(feature = "resources")]
use super::MAX_RESOURCE_SUBSCRIPTIONS;
use super::{list_bit, lists, Incoming, Reply, Route, Session, Transmit};
use crate::model::handler::ServerHandler;
use crate::session::error::CallError;
use crate::session::inflight::{CallToken, SlotState};
use crate::token::cursor::ListKind;
use crate::wire::fnv;
#[cfg(feature = "resources")]
use crate::wire::json::JsonStr;
use crate::wire::json::{self, JsonWriter, Kind};
use crate::wire::jsonrpc::{self, code, RequestId, StoredId};
use crate::wire::params::META_SUBSCRIPTION;
use crate::wire::version::ProtocolVersion;
use crate::wire::Params;

/// The filter members of `notifications` and the list each one opts in to.
const FILTERS: [(&str, ListKind); 3] = [
    ("toolsListChanged", ListKind::Tools),
    ("promptsListChanged", ListKind::Prompts),
    ("resourcesListChanged", ListKind::Resources),
];

fn write_subscription_meta(w: &mut JsonWriter<'_>, id: &str) {
    w.key("_meta");
    w.begin_object();
    w.key(META_SUBSCRIPTION);
    w.raw_value(id);
    w.end_object();
}

/// 64-bit FNV-1a of a URI's decoded UTF-8 text; never 0 (0 marks an unused entry). The
/// key a listen stream keeps a resource subscription under; a transport that keeps its
/// own subscription sets (mcp-embedded's HTTP server, for legacy sessions) uses the same
/// one. Two URIs with one hash share their updates: a collision sends an extra
/// `notifications/resources/updated`, never loses one.
pub fn uri_hash(chars: impl Iterator<Item = char>) -> u64 {
    let mut h = fnv::START;
    let mut utf8 = [0u8; 4];
    for c in chars {
        h = fnv::fnv1a(h, c.encode_utf8(&mut utf8).bytes());
    }
    h.max(1)
}

/// The resource subscriptions a listen request's `resourceSubscriptions` gets: the URIs
/// kept (in request order) and their hashes.
#[cfg(feature = "resources")]
type Honoured<'i> = (
    [Option<JsonStr<'i>>; MAX_RESOURCE_SUBSCRIPTIONS],
    [u64; MAX_RESOURCE_SUBSCRIPTIONS],
);

/// The honoured subset of `resourceSubscriptions`: strings naming a listed resource or
/// matching a template of a server that offers subscriptions, each once, at most
/// [`MAX_RESOURCE_SUBSCRIPTIONS`].
#[cfg(feature = "resources")]
fn resource_subscriptions<'i, S: ServerHandler + ?Sized>(
    server: &mut S,
    filter: &json::RawJson<'i>,
) -> Honoured<'i> {
    let mut kept: Honoured<'i> = (
        [None; MAX_RESOURCE_SUBSCRIPTIONS],
        [0; MAX_RESOURCE_SUBSCRIPTIONS],
    );
    let Some(list) = filter
        .get("resourceSubscriptions")
        .and_then(|l| l.elements())
    else {
        return kept;
    };
    let Some(resources) = server.resources().filter(|r| r.subscribable()) else {
        return kept;
    };
    let mut n = 0;
    for uri in list.filter_map(|v| v.as_string()) {
        if n == MAX_RESOURCE_SUBSCRIPTIONS {
            break;
        }
        let hash = uri_hash(uri.chars());
        if kept.1.contains(&hash) || super::resources::locate(resources, uri) == (None, None) {
            continue;
        }
        if let (Some(u), Some(h)) = (kept.0.get_mut(n), kept.1.get_mut(n)) {
            *u = Some(uri);
            *h = hash;
        }
        n += 1;
    }
    kept
}

fn offers<S: ServerHandler + ?Sized>(server: &mut S, kind: ListKind) -> bool {
    match kind {
        ListKind::Tools => server.tools().is_some(),
        #[cfg(feature = "prompts")]
        ListKind::Prompts => server.prompts().is_some(),
        #[cfg(feature = "resources")]
        ListKind::Resources => server.resources().is_some(),
        #[allow(unreachable_patterns)]
        _ => false,
    }
}

impl Session<'_> {
    pub(super) fn listen<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: super::Ctx<'i>,
        p: &Params<'i>,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        if incoming.in_batch {
            return Err(Fault::new(
                code::INVALID_REQUEST,
                "subscriptions/listen cannot be batched",
            ));
        }
        let filter = p
            .get("notifications")
            .filter(|n| n.kind() == Kind::Object)
            .ok_or(Fault::new(
                code::INVALID_PARAMS,
                "params.notifications must be an object",
            ))?;
        let mut bits = 0u8;
        if self.config.list_changed {
            for (key, kind) in FILTERS {
                if filter.get(key).and_then(|v| v.as_bool()) == Some(true) && offers(server, kind) {
                    bits |= list_bit(kind);
                    if kind == ListKind::Resources {
                        bits |= list_bit(ListKind::ResourceTemplates);
                    }
                }
            }
        }
        #[cfg(feature = "resources")]
        let (uris, hashes) = resource_subscriptions(server, &filter);
        #[cfg(feature = "tasks")]
        let (task_ids, task_subs) =
            super::task_status::task_subscriptions(server, &filter, ctx.caps, self.now_ms)?;
        #[cfg(not(feature = "tasks"))]
        let _ = ctx;
        let stored = StoredId::new(id.as_raw()).ok_or(
            Fault::new(
                code::INVALID_REQUEST,
                "Request id too long for a subscription",
            )
            .with(Detail::Limit(jsonrpc::MAX_ID_LEN)),
        )?;
        let index = self.free_slot_for(id)?;
        let Some(slot) = self.slots.get_mut(index) else {
            return Err(Fault::new(code::INTERNAL_ERROR, "Too many calls in flight"));
        };
        jsonrpc::begin_notification(w, "notifications/subscriptions/acknowledged");
        w.begin_object();
        w.key("notifications");
        w.begin_object();
        for (key, kind) in FILTERS {
            if bits & list_bit(kind) != 0 {
                w.key(key);
                w.bool(true);
            }
        }
        #[cfg(feature = "resources")]
        if uris.iter().any(Option::is_some) {
            w.key("resourceSubscriptions");
            w.begin_array();
            for uri in uris.iter().flatten() {
                w.string_raw_escaped(uri.raw());
            }
            w.end_array();
        }
        #[cfg(feature = "tasks")]
        super::task_status::write_kept(w, &task_ids);
        w.end_object();
        write_subscription_meta(w, id.as_raw());
        w.end_object();
        jsonrpc::end_response(w);
        slot.state = SlotState::Listening;
        self.occupied += 1;
        slot.id = stored;
        slot.progress_token = StoredId::EMPTY;
        slot.version = ProtocolVersion::LATEST;
        slot.log_level = None;
        slot.listen = bits;
        slot.listen_pending = 0;
        #[cfg(feature = "resources")]
        {
            slot.resource_subs = hashes;
        }
        #[cfg(feature = "tasks")]
        {
            slot.task_subs = task_subs;
        }
        incoming.subscription = Some(slot.token(index));
        Ok(())
    }

    /// The next list change owed to a listen stream.
    pub(super) fn poll_listen(
        &mut self,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, json::BufferTooSmall> {
        let Some((i, slot)) = self
            .slots
            .iter_mut()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .enumerate()
            .find(|(_, s)| s.state == SlotState::Listening && s.listen_pending != 0)
        else {
            return Ok(None);
        };
        let kind = lists::KINDS
            .iter()
            .copied()
            .find(|k| slot.listen_pending & list_bit(*k) != 0)
            .unwrap_or(ListKind::Tools);
        // Templates are announced with the resource list's notification.
        let clear = if matches!(kind, ListKind::Resources | ListKind::ResourceTemplates) {
            list_bit(ListKind::Resources) | list_bit(ListKind::ResourceTemplates)
        } else {
            list_bit(kind)
        };
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_notification(&mut w, lists::changed_method(kind));
        w.begin_object();
        write_subscription_meta(&mut w, slot.id.as_raw());
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish()?;
        slot.listen_pending &= !clear;
        Ok(Some(Transmit {
            len,
            route: Route::Call(slot.token(i)),
        }))
    }

    /// `notifications/resources/updated` for the first stream at slot index `*from` or
    /// later subscribed to `uri` (see [`Session::resource_updated_next`]).
    #[cfg(feature = "resources")]
    pub(super) fn stream_resource_updated(
        &mut self,
        uri: &str,
        from: &mut usize,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, json::BufferTooSmall> {
        if self.occupied == 0 {
            return Ok(None);
        }
        let hash = uri_hash(uri.chars());
        let Some((i, slot)) = self
            .slots
            .iter()
            .enumerate()
            .skip(*from)
            .find(|(_, s)| s.state == SlotState::Listening && s.resource_subs.contains(&hash))
        else {
            *from = self.slots.len();
            return Ok(None);
        };
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_notification(&mut w, "notifications/resources/updated");
        w.begin_object();
        w.key("uri");
        w.string(uri);
        write_subscription_meta(&mut w, slot.id.as_raw());
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish()?;
        *from = i + 1;
        Ok(Some(Transmit {
            len,
            route: Route::Call(slot.token(i)),
        }))
    }

    /// Ends a `subscriptions/listen` stream gracefully (e.g. at shutdown) with its
    /// `{"resultType":"complete"}` response. `Ok(None)` if the client already cancelled it.
    pub fn close_subscription(
        &mut self,
        token: CallToken,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let slot = self
            .slots
            .get_mut(usize::from(token.slot))
            .ok_or(CallError::UnknownCall)?;
        if slot.state != SlotState::Listening || slot.generation != token.generation {
            return if slot.cancelled_generation == Some(token.generation) {
                Ok(None)
            } else {
                Err(CallError::UnknownCall)
            };
        }
        let id = slot.id;
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_result(&mut w, id.as_raw());
        w.begin_object();
        w.key("resultType");
        w.string("complete");
        write_subscription_meta(&mut w, id.as_raw());
        w.end_object();
        jsonrpc::end_response(&mut w);
        self.sent_for_call(w, token, true)
    }
}
