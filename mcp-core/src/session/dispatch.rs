//! Admission and routing: one check per request against its row of the method table
//! ([`crate::wire::method`]), then one `match` on the method.

use super::faults::{write_fault, Detail, Fault};
use super::{Ctx, Incoming, Phase, Reply, Session, SHORT};
use crate::model::common::ClientCaps;
use crate::model::handler::ServerHandler;
use crate::model::logging::LogLevel;
use crate::wire::json::{self, JsonStr, JsonWriter, Kind, Limits, RawJson};
use crate::wire::jsonrpc::{self, code, Invalid, Message, RequestId};
use crate::wire::method::{Capability, Eras, Method, Notification, Row};
use crate::wire::version::ProtocolVersion;
use crate::wire::Params;

impl Session<'_> {
    /// Parses one message (or batch) and appends its replies to `w`.
    pub(super) fn dispatch<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        msg: &'i [u8],
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) {
        let limits = Limits {
            max_depth: self.config.max_depth,
        };
        match json::parse(msg, limits) {
            Err(e) => {
                let f = Fault::new(code::PARSE_ERROR, "Parse error").with(Detail::Scan(e));
                write_fault(w, None, &f);
            }
            #[cfg(feature = "batch")]
            Ok(v) if v.kind() == Kind::Array => self.handle_batch(server, v, text, w, incoming),
            #[cfg(not(feature = "batch"))]
            Ok(v) if v.kind() == Kind::Array => {
                let f = Fault::new(
                    code::INVALID_REQUEST,
                    "JSON-RPC batches are not supported by this server",
                );
                write_fault(w, None, &f);
            }
            Ok(v) => self.handle_one(server, v, text, w, incoming),
        }
    }

    #[cfg(feature = "batch")]
    fn handle_batch<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        batch: RawJson<'i>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) {
        let allowed = self
            .negotiated_version()
            .is_some_and(|v| v.features().batching);
        let count = batch.elements().map_or(0, |e| e.count());
        let fault = if !allowed {
            Some(Fault::new(
                code::INVALID_REQUEST,
                "JSON-RPC batches are only accepted on protocol 2025-03-26",
            ))
        } else if count == 0 {
            Some(Fault::new(code::INVALID_REQUEST, "Empty batch"))
        } else if count > usize::from(self.config.max_batch) {
            Some(
                Fault::new(code::INVALID_REQUEST, "Batch too large")
                    .with(Detail::Limit(usize::from(self.config.max_batch))),
            )
        } else {
            None
        };
        if let Some(f) = fault {
            write_fault(w, None, &f);
            return;
        }
        let initial = w.checkpoint();
        w.begin_array();
        let start = w.len();
        incoming.in_batch = true;
        for element in batch.elements().into_iter().flatten() {
            self.handle_one(server, element, text, w, incoming);
        }
        if w.len() == start {
            // Only notifications: no reply at all.
            w.rewind(initial);
            return;
        }
        w.end_array();
        // A reply that had to drop its id cannot be matched to its request: answer the
        // whole batch with one error instead (`required` is then a lower bound).
        if w.overflowed() || incoming.batch_required > 0 {
            let required = w.len().max(incoming.batch_required);
            w.rewind(initial);
            let f = Fault::new(
                code::INTERNAL_ERROR,
                "Batch replies exceed the output buffer",
            )
            .with(Detail::Required(required));
            write_fault(w, None, &f);
        }
    }

    /// Handles one message; appends its reply (if any) to `w`.
    fn handle_one<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        v: RawJson<'i>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) {
        match jsonrpc::classify(v) {
            Err(Invalid { id, reply, reason }) => {
                if reply {
                    let f = Fault::new(code::INVALID_REQUEST, reason);
                    let lost = write_fault(w, id.map(|i| i.as_raw()), &f);
                    incoming.note_lost_id(lost);
                }
            }
            Ok(Message::Notification { method, params }) => {
                self.handle_notification(method, params)
            }
            #[cfg(feature = "requests")]
            Ok(Message::Response { id, outcome }) => {
                self.handle_response(id, outcome, text, incoming)
            }
            // Without server-to-client requests every response is stray: ignored.
            #[cfg(not(feature = "requests"))]
            Ok(Message::Response { .. }) => {}
            Ok(Message::Request { id, method, params }) => {
                let before = w.checkpoint();
                let result = self.handle_request(server, id, method, params, text, w, incoming);
                if let Err(f) = result {
                    w.rewind(before);
                    let lost = write_fault(w, Some(id.as_raw()), &f);
                    incoming.note_lost_id(lost);
                } else if w.overflowed() {
                    let required = w.len() - before.len();
                    w.rewind(before);
                    let f = Fault::new(code::INTERNAL_ERROR, "Response exceeds the output buffer")
                        .with(Detail::Required(required));
                    let lost = write_fault(w, Some(id.as_raw()), &f);
                    incoming.note_lost_id(lost.map(|n| n.max(before.len() + required)));
                }
            }
        }
    }

    fn handle_notification(&mut self, method: JsonStr<'_>, params: Option<RawJson<'_>>) {
        let mut buf = [0u8; SHORT];
        let Some(which) = method.text_in(&mut buf).and_then(Notification::lookup) else {
            return; // Unknown notifications are ignored.
        };
        match which {
            Notification::Initialized => {
                if let Phase::Initializing(v) = self.phase {
                    self.phase = Phase::Ready(v);
                    self.initialized_event = Some(v);
                }
            }
            Notification::Cancelled => {
                // Malformed cancellations are ignored, as the spec asks.
                if let Some(id) = params
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_json)
                {
                    self.cancel_by_id(id);
                }
            }
            Notification::RootsListChanged => {
                if self.phase != Phase::Fresh {
                    self.roots_event = true;
                }
            }
        }
    }

    /// Reads the 2026-07-28 per-request `_meta`. `Ok(None)`: not a modern request.
    fn modern_ctx<'i>(p: &Params<'i>) -> Result<Option<Ctx<'i>>, Fault<'i>> {
        let Some(meta) = p.meta.raw else {
            return Ok(None);
        };
        if meta.kind() != Kind::Object {
            return Err(Fault::new(code::INVALID_PARAMS, "_meta must be an object"));
        }
        let Some(version) = p.meta.version else {
            if p.meta.caps.is_some() {
                return Err(Fault::new(
                    code::INVALID_PARAMS,
                    "Missing _meta[\"io.modelcontextprotocol/protocolVersion\"]",
                ));
            }
            return Ok(None);
        };
        let Some(vs) = version.as_string() else {
            return Err(Fault::new(
                code::INVALID_PARAMS,
                "_meta protocolVersion must be a string",
            ));
        };
        let mut buf = [0u8; SHORT];
        let version = match ProtocolVersion::from_wire(vs.text_in(&mut buf).unwrap_or("")) {
            Some(v) if v.is_modern() => v,
            _ => {
                return Err(Fault::new(
                    code::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                )
                .with(Detail::Version(vs.raw())))
            }
        };
        let caps = match p.meta.caps {
            Some(c) if c.kind() == Kind::Object => ClientCaps::from_json(Some(c)),
            _ => {
                return Err(Fault::new(
                    code::INVALID_PARAMS,
                    "Missing _meta[\"io.modelcontextprotocol/clientCapabilities\"] object",
                ))
            }
        };
        let log_level = match p.meta.log_level {
            None => None,
            Some(l) => match l
                .as_string()
                .and_then(|s| LogLevel::from_wire(s.text_in(&mut [0u8; SHORT])?))
            {
                Some(level) => Some(level),
                None => return Err(Fault::new(code::INVALID_PARAMS, "Invalid _meta logLevel")),
            },
        };
        Ok(Some(Ctx {
            data: None,
            version,
            caps,
            log_level,
        }))
    }

    /// Whether the server offers the capability a method needs.
    fn offers<S: ServerHandler + ?Sized>(server: &mut S, capability: Capability) -> bool {
        match capability {
            Capability::None | Capability::Logging => true,
            Capability::Tools => server.tools().is_some(),
            #[cfg(feature = "resources")]
            Capability::Resources => server.resources().is_some(),
            #[cfg(feature = "resources")]
            Capability::ResourceSubscribe => server.resources().is_some_and(|r| r.subscribable()),
            #[cfg(feature = "prompts")]
            Capability::Prompts => server.prompts().is_some(),
            #[cfg(feature = "completion")]
            Capability::Completions => server.completions().is_some(),
            #[cfg(feature = "skills")]
            Capability::Skills => server.skills().is_some() && server.resources().is_some(),
            #[cfg(feature = "tasks")]
            Capability::Tasks => server.tasks().is_some(),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// Admission: the revision the request is served under, or the fault that refuses it.
    fn admit<'i>(
        &self,
        row: Option<&'static Row>,
        method: JsonStr<'i>,
        modern: Option<Ctx<'i>>,
    ) -> Result<(Method, Ctx<'i>), Fault<'i>> {
        let not_found =
            || Fault::new(code::METHOD_NOT_FOUND, "Method not found").with(Detail::Name(method));
        let Some(row) = row else {
            return Err(not_found());
        };
        if let Some(ctx) = modern {
            if row.eras == Eras::Legacy {
                return Err(Fault::new(
                    code::METHOD_NOT_FOUND,
                    "Method not available in protocol 2026-07-28",
                )
                .with(Detail::Name(method)));
            }
            return Ok((row.method, ctx));
        }
        // Without `_meta`: a legacy session. `server/discover` is a 2026-07-28 request and
        // carries its version and capabilities like every other one.
        let version = match (self.phase, row.method) {
            (_, Method::Discover) => {
                return Err(Fault::new(
                    code::INVALID_PARAMS,
                    "Missing _meta[\"io.modelcontextprotocol/protocolVersion\"]",
                ))
            }
            (Phase::Fresh, Method::Initialize | Method::Ping) => ProtocolVersion::LATEST_LEGACY,
            (Phase::Fresh, _) if row.needs_init => {
                return Err(Fault::new(
                    code::INVALID_REQUEST,
                    "Server not initialized: send initialize first, or use protocol 2026-07-28 with per-request _meta",
                ))
            }
            (Phase::Fresh, _) => return Err(not_found()),
            (Phase::Initializing(v) | Phase::Ready(v), _) => v,
        };
        if row.eras == Eras::Modern && row.method != Method::Discover {
            return Err(not_found());
        }
        Ok((
            row.method,
            Ctx {
                data: None,
                version,
                caps: self.client_caps,
                log_level: None,
            },
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn handle_request<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        method: JsonStr<'i>,
        params: Option<RawJson<'i>>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        if params.is_some_and(|p| p.kind() != Kind::Object) {
            return Err(Fault::new(code::INVALID_PARAMS, "params must be an object"));
        }
        // Escaped names (`"tools\/list"`) are decoded; over-long ones match nothing.
        let row = Method::lookup_json(method);
        let p = Params::read(params);
        let modern = Self::modern_ctx(&p)?;
        // A capability the server does not offer is -32601 in every phase and era.
        if row.is_some_and(|r| !Self::offers(server, r.capability)) {
            return Err(
                Fault::new(code::METHOD_NOT_FOUND, "Method not found").with(Detail::Name(method))
            );
        }
        let (m, mut ctx) = self.admit(row, method, modern)?;
        ctx.data = incoming.data;
        match m {
            Method::Initialize => self.initialize(server, id, params, w),
            Method::Ping => Self::empty_result(id, w),
            Method::Discover => self.discover(server, id, w),
            Method::SetLevel => self.set_level(id, &p, w),
            Method::ToolsList => self.list(
                server,
                crate::token::cursor::ListKind::Tools,
                id,
                ctx,
                &p,
                w,
            ),
            Method::ToolsCall => self.call_tool(server, id, ctx, &p, text, w, incoming),
            #[cfg(feature = "resources")]
            Method::ResourcesList => self.list(
                server,
                crate::token::cursor::ListKind::Resources,
                id,
                ctx,
                &p,
                w,
            ),
            #[cfg(feature = "resources")]
            Method::TemplatesList => self.list(
                server,
                crate::token::cursor::ListKind::ResourceTemplates,
                id,
                ctx,
                &p,
                w,
            ),
            #[cfg(feature = "resources")]
            Method::ResourcesRead => self.read_resource(server, id, ctx, &p, text, w, incoming),
            #[cfg(feature = "resources")]
            Method::Subscribe | Method::Unsubscribe => {
                self.subscribe(server, id, ctx, &p, m == Method::Subscribe, w)
            }
            #[cfg(feature = "prompts")]
            Method::PromptsList => self.list(
                server,
                crate::token::cursor::ListKind::Prompts,
                id,
                ctx,
                &p,
                w,
            ),
            #[cfg(feature = "prompts")]
            Method::PromptsGet => self.get_prompt(server, id, ctx, &p, text, w, incoming),
            #[cfg(feature = "completion")]
            Method::Complete => self.complete_request(server, id, ctx, &p, text, w, incoming),
            #[cfg(feature = "listen")]
            Method::Listen => self.listen(server, id, ctx, &p, w, incoming),
            #[cfg(feature = "skills")]
            Method::SkillsList => self.skills_list(server, id, ctx, &p, w),
            #[cfg(feature = "skills")]
            Method::SkillsGet => self.skills_get(server, id, ctx, &p, w),
            #[cfg(feature = "skills")]
            Method::DirectoryRead => self.directory_read(server, id, ctx, &p, w),
            #[cfg(feature = "tasks")]
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                self.tasks_request(server, m, id, ctx, &p, w)
            }
            #[allow(unreachable_patterns)]
            _ => {
                Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found")
                    .with(Detail::Name(method)))
            }
        }
    }
}
