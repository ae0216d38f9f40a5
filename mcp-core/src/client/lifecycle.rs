//! The handshake, for both eras.
//!
//! | mode | sent by `connect` | on success | on -32601 / -32022 | otherwise |
//! |---|---|---|---|---|
//! | [`Mode::Auto`] | `server/discover` with 2026-07-28 `_meta` | connected on the newest modern revision listed in `supportedVersions` (none known: as on the left) | `initialize` (queued, written by `poll_transmit`); once, a -32022 whose `data.supported` lists a 2026 revision we speak queues `server/discover` again instead | [`HandshakeError`] |
//! | [`Mode::Legacy`] | `initialize` at [`ClientConfig::legacy_version`](super::ClientConfig::legacy_version) | the server's `protocolVersion` if it is a legacy revision we know; then `notifications/initialized` (queued) | — | [`HandshakeError`] |
//!
//! An accepted answer is reported from its frame as
//! [`Event::Handshake`](super::Event::Handshake) (the server's info and instructions);
//! [`Event::Connected`](super::Event::Connected) is reported by `poll_event` once nothing
//! of the handshake is left to send, so requests sent from then on follow
//! `notifications/initialized` on the wire. Until then requests are refused with
//! [`ClientError::NotConnected`].

use super::error::{ClientError, HandshakeError};
use super::slots::SlotState;
use super::{Client, Sent, Transmit};
use crate::wire::json::{JsonWriter, RawJson};
use crate::wire::jsonrpc::{self, code};
use crate::wire::method::{Method, Notification};
use crate::wire::version::ProtocolVersion;

/// How the client opens a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// 2026-07-28 first (`server/discover`), falling back to `initialize` when the server
    /// does not know the method or the revision.
    Auto,
    /// The legacy `initialize` handshake only.
    Legacy,
}

/// The server capabilities the client read from the handshake result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerCaps(pub u8);

impl ServerCaps {
    /// `tools`
    pub const TOOLS: ServerCaps = ServerCaps(1);
    /// `prompts`
    pub const PROMPTS: ServerCaps = ServerCaps(2);
    /// `resources`
    pub const RESOURCES: ServerCaps = ServerCaps(4);
    /// `resources.subscribe` (legacy)
    pub const SUBSCRIBE: ServerCaps = ServerCaps(8);
    /// `completions`
    pub const COMPLETIONS: ServerCaps = ServerCaps(16);
    /// `logging`
    pub const LOGGING: ServerCaps = ServerCaps(32);
    /// The tasks extension (`extensions["io.modelcontextprotocol/tasks"]`, feature
    /// `tasks`; declared in `server/discover` only).
    pub const TASKS: ServerCaps = ServerCaps(128);
    const NAMES: [(ServerCaps, &'static str); 5] = [
        (Self::TOOLS, "tools"),
        (Self::PROMPTS, "prompts"),
        (Self::RESOURCES, "resources"),
        (Self::COMPLETIONS, "completions"),
        (Self::LOGGING, "logging"),
    ];

    /// Union.
    pub const fn with(self, other: ServerCaps) -> ServerCaps {
        ServerCaps(self.0 | other.0)
    }
    /// Whether every capability in `other` is in `self`.
    pub const fn contains(self, other: ServerCaps) -> bool {
        self.0 & other.0 == other.0
    }

    /// Reads a `ServerCapabilities` object (members that are not objects count as absent).
    pub fn from_json(v: Option<RawJson<'_>>) -> ServerCaps {
        let mut caps = 0;
        for (k, v) in v.and_then(|v| v.members()).into_iter().flatten() {
            if v.members().is_none() {
                continue;
            }
            if let Some((c, _)) = Self::NAMES.iter().find(|(_, n)| k.eq_str(n)) {
                caps |= c.0;
            }
            let subscribe = v.get("subscribe").and_then(|s| s.as_bool()) == Some(true);
            if k.eq_str("resources") && subscribe {
                caps |= Self::SUBSCRIBE.0;
            }
            #[cfg(feature = "tasks")]
            if k.eq_str("extensions") && v.get(crate::model::tasks::EXTENSION).is_some() {
                caps |= Self::TASKS.0;
            }
        }
        ServerCaps(caps)
    }
}

/// Where the handshake stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// `connect` not called yet.
    Idle,
    /// `server/discover` sent.
    Discovering,
    /// `initialize` sent or queued.
    Initializing,
    /// `initialize` answered; `notifications/initialized` queued.
    Initialized(ProtocolVersion),
    /// Requests may be sent.
    Ready(ProtocolVersion),
    /// The handshake failed.
    Failed,
}

/// What `poll_event` owes about the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    Connected(ProtocolVersion),
    Failed(HandshakeError),
}

impl Client<'_> {
    /// Opens the connection at `now_ms` (see the [module docs](self)): writes
    /// `server/discover` or `initialize` into `out`. The handshake ends with
    /// [`Event::Connected`](super::Event::Connected) or
    /// [`Event::HandshakeFailed`](super::Event::HandshakeFailed).
    pub fn connect(&mut self, now_ms: u64, out: &mut [u8]) -> Result<Sent, ClientError> {
        self.advance(now_ms);
        if self.phase != Phase::Idle {
            return Err(ClientError::AlreadyConnected);
        }
        let index = self.free_slot()?;
        let sent = match self.config.mode {
            Mode::Auto => self.write_discover(index, out)?,
            Mode::Legacy => self.write_initialize(index, out)?,
        };
        self.phase = match self.config.mode {
            Mode::Auto => Phase::Discovering,
            Mode::Legacy => Phase::Initializing,
        };
        Ok(sent)
    }

    fn write_discover(&mut self, index: usize, out: &mut [u8]) -> Result<Sent, ClientError> {
        let id = self.next_id;
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_request(&mut w, u64::from(id), Method::Discover.as_str());
        w.key("params");
        w.begin_object();
        self.write_meta(&mut w, ProtocolVersion::LATEST, None, Default::default());
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish()?;
        Ok(Sent {
            handle: self.track_handshake(index, Method::Discover)?,
            len,
        })
    }

    fn write_initialize(&mut self, index: usize, out: &mut [u8]) -> Result<Sent, ClientError> {
        let id = self.next_id;
        let version = match self.config.legacy_version {
            v if v.is_modern() => ProtocolVersion::LATEST_LEGACY,
            v => v,
        };
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_request(&mut w, u64::from(id), Method::Initialize.as_str());
        w.key("params");
        w.begin_object();
        w.key("protocolVersion");
        w.string(version.as_str());
        w.key("capabilities");
        self.config.capabilities.write(&mut w);
        w.key("clientInfo");
        self.config.info.write(&mut w, version);
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish()?;
        Ok(Sent {
            handle: self.track_handshake(index, Method::Initialize)?,
            len,
        })
    }

    /// Marks slot `index` pending for a handshake request just written with `next_id`.
    fn track_handshake(
        &mut self,
        index: usize,
        method: Method,
    ) -> Result<super::RequestHandle, ClientError> {
        let (id, deadline) = (
            self.next_id,
            self.now_ms.saturating_add(self.config.request_timeout_ms),
        );
        let slot = self
            .slots
            .get_mut(index)
            .ok_or(ClientError::UnknownRequest)?;
        slot.state = SlotState::Pending;
        slot.id = id;
        slot.method = method;
        slot.deadline = deadline;
        let handle = slot.handle(index);
        self.bump_id();
        Ok(handle)
    }

    /// The answer to a handshake request in slot `index`.
    pub(super) fn on_handshake(
        &mut self,
        index: usize,
        method: Method,
        outcome: Result<RawJson<'_>, RawJson<'_>>,
    ) {
        let result = match (method, outcome) {
            (_, Ok(result)) => result,
            (Method::Discover, Err(e)) => {
                let code = e.get("code").and_then(|c| c.as_i64());
                if code == Some(i64::from(code::UNSUPPORTED_PROTOCOL_VERSION))
                    && !self.rediscovered
                    && lists_modern(e.get("data").and_then(|d| d.get("supported")))
                {
                    // The server names a 2026 revision we speak: ask once more.
                    self.rediscovered = true;
                    return self.owe_handshake(index, Method::Discover);
                }
                let fallback = [code::METHOD_NOT_FOUND, code::UNSUPPORTED_PROTOCOL_VERSION]
                    .map(i64::from)
                    .into_iter()
                    .any(|c| Some(c) == code);
                return if fallback {
                    self.fall_back(index)
                } else {
                    self.fail(index, refused(code))
                };
            }
            (_, Err(e)) => {
                return self.fail(index, refused(e.get("code").and_then(|c| c.as_i64())))
            }
        };
        let caps = ServerCaps::from_json(result.get("capabilities"));
        if method == Method::Discover {
            let Some(listed) = result.get("supportedVersions").and_then(|v| v.elements()) else {
                return self.fail(index, HandshakeError::Malformed);
            };
            let newest = ProtocolVersion::ALL.iter().rev().copied().find(|v| {
                v.is_modern()
                    && listed
                        .clone()
                        .any(|s| s.as_string().is_some_and(|s| s.eq_str(v.as_str())))
            });
            return match newest {
                Some(v) => {
                    self.server_caps = caps;
                    self.release(index);
                    self.phase = Phase::Ready(v);
                    self.outcome = Some(Outcome::Connected(v));
                }
                None => self.fall_back(index),
            };
        }
        let Some(chosen) = result.get("protocolVersion").and_then(|v| v.as_string()) else {
            return self.fail(index, HandshakeError::Malformed);
        };
        let known = ProtocolVersion::ALL
            .iter()
            .copied()
            .find(|v| !v.is_modern() && chosen.eq_str(v.as_str()));
        match known {
            Some(v) => {
                self.server_caps = caps;
                self.release(index);
                self.phase = Phase::Initialized(v);
            }
            None => self.fail(index, HandshakeError::UnsupportedVersion),
        }
    }

    /// `server/discover` was refused: `initialize` is written by the next `poll_transmit`.
    fn fall_back(&mut self, index: usize) {
        self.owe_handshake(index, Method::Initialize);
        self.phase = Phase::Initializing;
    }

    /// Slot `index` owes the handshake request `method` (written by `poll_transmit`).
    fn owe_handshake(&mut self, index: usize, method: Method) {
        if let Some(slot) = self.slots.get_mut(index) {
            slot.state = SlotState::Owed;
            slot.method = method;
            slot.deadline = u64::MAX;
        }
    }

    /// The handshake failed: the client refuses requests from now on.
    pub(super) fn fail(&mut self, index: usize, e: HandshakeError) {
        self.release(index);
        self.phase = Phase::Failed;
        self.outcome = Some(Outcome::Failed(e));
    }

    /// Handshake frames owed: the fallback `initialize`, then `notifications/initialized`.
    pub(super) fn poll_handshake(
        &mut self,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, ClientError> {
        if let Some((index, slot)) = self
            .slots
            .iter()
            .enumerate()
            .find(|(_, s)| s.state == SlotState::Owed)
        {
            let sent = match slot.method {
                Method::Discover => self.write_discover(index, out)?,
                _ => self.write_initialize(index, out)?,
            };
            return Ok(Some(Transmit { len: sent.len }));
        }
        if let Phase::Initialized(v) = self.phase {
            let mut w = JsonWriter::new(out);
            jsonrpc::begin_notification(&mut w, Notification::Initialized.as_str());
            w.begin_object();
            w.end_object();
            jsonrpc::end_response(&mut w);
            let len = w.finish()?;
            self.phase = Phase::Ready(v);
            self.outcome = Some(Outcome::Connected(v));
            return Ok(Some(Transmit { len }));
        }
        Ok(None)
    }
}

/// Whether `supported` (an array of revisions) lists a 2026 revision this client speaks.
fn lists_modern(supported: Option<RawJson<'_>>) -> bool {
    let Some(listed) = supported.and_then(|s| s.elements()) else {
        return false;
    };
    listed.filter_map(|v| v.as_string()).any(|v| {
        ProtocolVersion::ALL
            .iter()
            .any(|k| k.is_modern() && v.eq_str(k.as_str()))
    })
}

fn refused(code: Option<i64>) -> HandshakeError {
    match code {
        Some(code) => HandshakeError::Refused { code },
        None => HandshakeError::Malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, Limits};

    #[test]
    fn a_32022_naming_a_2026_revision_asks_discover_again_once() {
        use crate::client::{ClientConfig, ClientInfo, ClientStorage, Event};
        let mut storage = ClientStorage::<2>::new();
        let config = ClientConfig::new(ClientInfo::new("c", "1"));
        let mut client = Client::new(config, &mut storage);
        let mut out = [0u8; 1024];
        let _ = client.connect(0, &mut out).unwrap();
        let refusal = |id: u32| {
            std::format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32022,"message":"no","data":{{"supported":["2026-07-28"]}}}}}}"#
            )
        };
        let frame = refusal(1);
        let mut rx = client.handle(1, frame.as_bytes());
        while rx.next_event(&mut client).is_some() {}
        let tx = client.poll_transmit(&mut out).unwrap().unwrap();
        let again = core::str::from_utf8(&out[..tx.len]).unwrap();
        assert!(
            again.contains(r#""id":2,"method":"server/discover""#),
            "{again}"
        );
        // A second refusal falls back to `initialize`.
        let frame = refusal(2);
        let mut rx = client.handle(2, frame.as_bytes());
        while rx.next_event(&mut client).is_some() {}
        let tx = client.poll_transmit(&mut out).unwrap().unwrap();
        let init = core::str::from_utf8(&out[..tx.len]).unwrap();
        assert!(init.contains(r#""method":"initialize""#), "{init}");
        assert!(!matches!(
            client.poll_event(),
            Some(Event::HandshakeFailed(_))
        ));
    }

    #[test]
    fn server_caps_read_objects_only() {
        let v = parse(
            br#"{"tools":{"listChanged":true},"resources":{"subscribe":true},"prompts":true,"logging":{}}"#,
            Limits::default(),
        )
        .unwrap();
        let caps = ServerCaps::from_json(Some(v));
        assert!(caps.contains(ServerCaps::TOOLS));
        assert!(caps.contains(ServerCaps::RESOURCES.with(ServerCaps::SUBSCRIBE)));
        assert!(caps.contains(ServerCaps::LOGGING));
        assert!(!caps.contains(ServerCaps::PROMPTS));
        assert!(!caps.contains(ServerCaps::COMPLETIONS));
        assert_eq!(ServerCaps::from_json(None), ServerCaps::default());
    }
}
