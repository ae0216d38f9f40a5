//! Lifecycle: `initialize`, `ping`, `server/discover`, `logging/setLevel`, and the
//! capabilities object derived from what the server provides.

use super::faults::{write_supported_versions, Fault};
use super::{Phase, Reply, Session, SHORT};
use crate::model::common::ClientCaps;
use crate::model::common::{Envelope, ResultType};
use crate::model::handler::ServerHandler;
use crate::model::logging::LogLevel;
use crate::wire::json::{JsonWriter, RawJson};
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::version::ProtocolVersion;
use crate::wire::Params;

impl<'a> Session<'a> {
    /// `{}`: the result of `ping`, `logging/setLevel` and `resources/(un)subscribe`, which
    /// exist only in the legacy era (so never with `resultType`).
    pub(super) fn empty_result<'i>(id: RequestId<'i>, w: &mut JsonWriter<'_>) -> Reply<'i> {
        jsonrpc::begin_result(w, id.as_raw());
        w.raw_value("{}");
        jsonrpc::end_response(w);
        Ok(())
    }

    pub(super) fn initialize<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        params: Option<RawJson<'i>>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        if self.phase != Phase::Fresh {
            return Err(Fault::new(
                code::INVALID_REQUEST,
                "Session already initialized",
            ));
        }
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(|v| v.as_string())
            .ok_or(Fault::new(
                code::INVALID_PARAMS,
                "initialize requires params.protocolVersion (a string)",
            ))?;
        let version = ProtocolVersion::negotiate_legacy(
            requested
                .text_in(&mut [0u8; SHORT])
                .and_then(ProtocolVersion::from_wire),
        );
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key("protocolVersion");
        w.string(version.as_str());
        w.key("capabilities");
        self.write_capabilities(server, w, version);
        w.key("serverInfo");
        self.info.write(w, version);
        if let Some(i) = self.info.instructions {
            w.key("instructions");
            w.string(i);
        }
        w.end_object();
        jsonrpc::end_response(w);
        if !w.overflowed() {
            self.phase = Phase::Initializing(version);
            self.client_caps = ClientCaps::from_json(params.and_then(|p| p.get("capabilities")));
        }
        Ok(())
    }

    /// `ServerCapabilities`, derived from the providers `server` returns.
    fn write_capabilities<S: ServerHandler + ?Sized>(
        &self,
        server: &mut S,
        w: &mut JsonWriter<'_>,
        version: ProtocolVersion,
    ) {
        let modern = version.is_modern();
        // 2026-07-28 delivers list changes on `subscriptions/listen` streams only.
        let list_changed = self.config.list_changed && (!modern || cfg!(feature = "listen"));
        w.begin_object();
        if server.tools().is_some() {
            caps_object(w, "tools", false, list_changed);
        }
        #[cfg(feature = "resources")]
        if let Some(r) = server.resources() {
            // Resource updates likewise: legacy `resources/subscribe`, or in 2026-07-28 a
            // listen stream's `resourceSubscriptions`.
            let subscribe = r.subscribable() && (!modern || cfg!(feature = "listen"));
            caps_object(w, "resources", subscribe, list_changed);
        }
        #[cfg(feature = "prompts")]
        if server.prompts().is_some() {
            caps_object(w, "prompts", false, list_changed);
        }
        // `completions` exists from 2025-03-26 on.
        #[cfg(feature = "completion")]
        if server.completions().is_some() && version.features().audio {
            caps_object(w, "completions", false, false);
        }
        caps_object(w, "logging", false, false);
        // Extensions (SEP-2133): settings inline under the identifier.
        #[cfg(feature = "skills")]
        let skills = server
            .skills()
            .map(|s| s.directory_read())
            .filter(|_| server.resources().is_some());
        #[cfg(not(feature = "skills"))]
        let skills: Option<bool> = None;
        // Tasks v2 is a 2026-07-28 wire: legacy sessions are not offered it.
        #[cfg(feature = "tasks")]
        let tasks = modern && server.tasks().is_some();
        #[cfg(not(feature = "tasks"))]
        let tasks = false;
        if skills.is_some() || tasks {
            w.key("extensions");
            w.begin_object();
            #[cfg(feature = "skills")]
            if let Some(directory_read) = skills {
                w.key(crate::model::skills::EXTENSION);
                w.begin_object();
                if directory_read {
                    w.key("directoryRead");
                    w.bool(true);
                }
                w.end_object();
            }
            #[cfg(feature = "tasks")]
            if tasks {
                w.key(crate::model::tasks::EXTENSION);
                w.begin_object();
                w.end_object();
            }
            w.end_object();
        }
        w.end_object();
    }

    pub(super) fn discover<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key("supportedVersions");
        write_supported_versions(w);
        w.key("capabilities");
        self.write_capabilities(server, w, ProtocolVersion::LATEST);
        if let Some(i) = self.info.instructions {
            w.key("instructions");
            w.string(i);
        }
        self.envelope(ProtocolVersion::LATEST, true)
            .trailer(w, ResultType::Complete);
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }

    pub(super) fn set_level<'i>(
        &mut self,
        id: RequestId<'i>,
        p: &Params<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        let level = p
            .get("level")
            .and_then(|l| l.as_string())
            .and_then(|s| LogLevel::from_wire(s.text_in(&mut [0u8; SHORT])?))
            .ok_or(Fault::new(
                code::INVALID_PARAMS,
                "params.level must be a log level",
            ))?;
        self.log_level = level;
        self.level_event = true;
        Self::empty_result(id, w)
    }

    /// The envelope of results of `version`; `cacheable` adds `ttlMs`/`cacheScope`.
    pub(super) fn envelope(&self, version: ProtocolVersion, cacheable: bool) -> Envelope<'a> {
        let mut env = Envelope::new(version, self.info);
        if cacheable {
            env.cache = Some((self.config.list_ttl_ms, self.config.cache_scope));
        }
        env
    }
}

/// One member of `ServerCapabilities`: `"key":{...}` with the flags that are set.
fn caps_object(w: &mut JsonWriter<'_>, key: &str, subscribe: bool, list_changed: bool) {
    w.key(key);
    w.begin_object();
    if subscribe {
        w.key("subscribe");
        w.bool(true);
    }
    if list_changed {
        w.key("listChanged");
        w.bool(true);
    }
    w.end_object();
}
