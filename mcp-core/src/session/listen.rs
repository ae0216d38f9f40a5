//! 2026-07-28 `subscriptions/listen`: an acknowledgement naming the honoured subset, then
//! only the opted-in list changes, each tagged with the subscription id, until the client
//! cancels or the server closes the stream.

use super::faults::{Detail, Fault};
use super::{list_bit, lists, Incoming, Reply, Route, Session, Transmit};
use crate::model::handler::ServerHandler;
use crate::session::error::CallError;
use crate::session::inflight::{CallToken, SlotState};
use crate::token::cursor::ListKind;
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
