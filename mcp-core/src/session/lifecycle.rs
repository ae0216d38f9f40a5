//! Lifecycle: `initialize`, `ping`, `server/discover`, `logging/setLevel`, and the
//! capabilities object derived from what the server provides.

use super::faults::{write_supported_versions, Fault};
use super::{Ctx, Phase, Reply, Session, SHORT};
use crate::json::{JsonWriter, RawJson};
use crate::jsonrpc::{self, code, RequestId};
use crate::logging::LogLevel;
use crate::server::{Envelope, ResultType, ServerHandler};
use crate::tools::ClientCaps;
use crate::version::ProtocolVersion;
use crate::wire::Params;

impl<'a> Session<'a> {
    pub(super) fn empty_result<'i>(
        id: RequestId<'i>,
        version: ProtocolVersion,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        if version.features().result_type {
            w.key("resultType");
            w.string("complete");
        }
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }

    pub(super) fn initialize<'i>(
        &mut self,
        server: &mut dyn ServerHandler,
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
    fn write_capabilities(
        &self,
        server: &mut dyn ServerHandler,
        w: &mut JsonWriter<'_>,
        version: ProtocolVersion,
    ) {
        let modern = version.is_modern();
        // 2026-07-28 delivers list changes on `subscriptions/listen` streams only.
        let list_changed = self.config.list_changed && (!modern || cfg!(feature = "listen"));
        let object = |w: &mut JsonWriter<'_>, key: &str, flags: &[(&str, bool)]| {
            w.key(key);
            w.begin_object();
            for (k, on) in flags {
                if *on {
                    w.key(k);
                    w.bool(true);
                }
            }
            w.end_object();
        };
        w.begin_object();
        if server.tools().is_some() {
            object(w, "tools", &[("listChanged", list_changed)]);
        }
        #[cfg(feature = "resources")]
        if let Some(r) = server.resources() {
            let subscribe = !modern && r.subscribable();
            object(
                w,
                "resources",
                &[("subscribe", subscribe), ("listChanged", list_changed)],
            );
        }
        #[cfg(feature = "prompts")]
        if server.prompts().is_some() {
            object(w, "prompts", &[("listChanged", list_changed)]);
        }
        // `completions` exists from 2025-03-26 on.
        #[cfg(feature = "completion")]
        if server.completions().is_some() && version.features().audio {
            object(w, "completions", &[]);
        }
        object(w, "logging", &[]);
        w.end_object();
    }

    pub(super) fn discover<'i>(
        &mut self,
        server: &mut dyn ServerHandler,
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
        ctx: Ctx,
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
        Self::empty_result(id, ctx.version, w)
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
