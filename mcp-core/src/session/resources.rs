//! `resources/read` (listed resources, templates, unlisted URIs) and legacy
//! `resources/subscribe` / `resources/unsubscribe`.

use super::faults::{Detail, Fault};
use super::{Ctx, Incoming, Reply, Session};
use crate::model::common::Dispatch;
use crate::model::handler::ServerHandler;
use crate::model::resources::{ReadOutcome, ReadRequest, ReadResult, ResourceSet};
use crate::session::inflight::CallKind;
use crate::wire::json::{JsonStr, JsonWriter};
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::version::ProtocolVersion;
use crate::wire::{Method, Params};

/// Longest escaped URI the session decodes to match templates.
const URI_BUF: usize = 512;

/// The revision's not-found error: -32002 before 2026-07-28 (which removed it), -32602
/// after; `data.uri` names the URI when known.
pub(super) fn not_found(version: ProtocolVersion, uri: JsonStr<'_>) -> Fault<'_> {
    let f = if version.is_modern() {
        Fault::new(code::INVALID_PARAMS, "Resource not found")
    } else {
        Fault::new(code::RESOURCE_NOT_FOUND, "Resource not found")
    };
    if uri.raw().is_empty() {
        f
    } else {
        f.with(Detail::Uri(uri))
    }
}

fn uri_param<'i>(p: &Params<'i>) -> Result<JsonStr<'i>, Fault<'i>> {
    p.uri.and_then(|u| u.as_string()).ok_or(Fault::new(
        code::INVALID_PARAMS,
        "params.uri must be a string",
    ))
}

/// The listed resource or first matching template of a URI.
pub(super) fn locate(
    resources: &dyn ResourceSet,
    uri: JsonStr<'_>,
) -> (Option<usize>, Option<usize>) {
    if let Some(i) =
        (0..resources.len()).find(|&i| resources.get(i).is_some_and(|r| uri.eq_str(r.uri)))
    {
        return (Some(i), None);
    }
    let mut buf = [0u8; URI_BUF];
    let Some(text) = super::target_text(uri, &mut buf) else {
        return (None, None);
    };
    let template = (0..resources.templates_len()).find(|&i| {
        resources
            .template(i)
            .is_some_and(|t| t.template().matches(text).is_some())
    });
    (None, template)
}

/// The `resources/read` view of checked params.
pub(super) fn read_request<'i>(
    p: &Params<'i>,
    ctx: Ctx<'i>,
    index: (u16, u16),
    config: &super::Config,
    now: u64,
) -> Result<ReadRequest<'i>, Fault<'i>> {
    let uri = uri_param(p)?;
    #[cfg(feature = "input-required")]
    let input = super::rounds::input_context(p, Method::ResourcesRead, uri.raw(), config, now)?;
    #[cfg(not(feature = "input-required"))]
    let _ = (config, now);
    let opt = |i: u16| (i != u16::MAX).then_some(usize::from(i));
    Ok(ReadRequest {
        data: ctx.data,
        uri,
        resource: opt(index.0),
        template: opt(index.1),
        version: ctx.version,
        caps: ctx.caps,
        #[cfg(feature = "input-required")]
        input,
    })
}

impl Session<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_resource<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        let Some(resources) = server.resources() else {
            return Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found"));
        };
        let uri = uri_param(p)?;
        let (resource, template) = locate(resources, uri);
        let small = |i: Option<usize>| i.map_or(u16::MAX, |i| u16::try_from(i).unwrap_or(u16::MAX));
        let index = (small(resource), small(template));
        let request = read_request(p, ctx, index, &self.config, self.now_ms)?;
        let mut target = super::rounds::Target::of(&self.config.key, uri.raw());
        let digest = target.digest;
        let before = w.checkpoint();
        jsonrpc::begin_result(w, id.as_raw());
        let env = self.target_envelope(ctx, true, Method::ResourcesRead, &mut target);
        let mut result = ReadResult::begin(w, &env);
        match resources.read(&request, &mut result) {
            Dispatch::Done => match result.finish() {
                Ok(()) => {
                    jsonrpc::end_response(w);
                    Ok(())
                }
                Err(ReadOutcome::NotFound) => Err(not_found(ctx.version, uri)),
                Err(ReadOutcome::Failed) => {
                    Err(Fault::new(code::INTERNAL_ERROR, "Resource read failed"))
                }
                Err(ReadOutcome::Misused) => Err(Fault::new(
                    code::INTERNAL_ERROR,
                    "Resource handler misused the result builder",
                )),
            },
            Dispatch::Defer => {
                w.rewind(before);
                self.defer(CallKind::Read, index, id, p, ctx, digest, text, incoming)
            }
        }
    }

    pub(super) fn subscribe<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        on: bool,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        let uri = uri_param(p)?;
        let Some(resources) = server.resources() else {
            return Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found"));
        };
        if !resources.subscribe(uri, on) {
            return Err(not_found(ctx.version, uri));
        }
        Self::empty_result(id, w)
    }
}
