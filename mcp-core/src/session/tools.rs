//! `tools/call`: argument and capability checks, then the tool answers inline or defers.

use super::faults::{Detail, Fault};
use super::rounds::Target;
use super::{Ctx, Incoming, Reply, Session};
use crate::model::common::{ClientCaps, Dispatch};
use crate::model::handler::ServerHandler;
use crate::model::tools::{CallRequest, ToolResult};
use crate::session::inflight::CallKind;
use crate::wire::json::{JsonStr, JsonWriter, Kind, RawJson, StrPart};
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::{Method, Params};

/// `params.name` (`tools/call`, `prompts/get`) as a string.
#[inline]
pub(super) fn name_param<'i>(p: &Params<'i>) -> Result<JsonStr<'i>, Fault<'i>> {
    p.name.and_then(|n| n.as_string()).ok_or(Fault::new(
        code::INVALID_PARAMS,
        "params.name must be a string",
    ))
}

/// `params.arguments` (`tools/call`, `prompts/get`): an object, `{}` when absent or null.
#[inline]
pub(super) fn arguments_param<'i>(p: &Params<'i>) -> Result<RawJson<'i>, Fault<'i>> {
    match p.arguments {
        None => Ok(RawJson { text: "{}" }),
        Some(a) if a.is_null() => Ok(RawJson { text: "{}" }),
        Some(a) if a.kind() == Kind::Object => Ok(a),
        Some(_) => Err(Fault::new(
            code::INVALID_PARAMS,
            "params.arguments must be an object",
        )),
    }
}

/// The `tools/call` view of checked params, for the tool at `index`.
pub(super) fn tool_request<'i>(
    p: &Params<'i>,
    ctx: Ctx<'i>,
    index: usize,
    config: &super::Config,
    now: u64,
) -> Result<CallRequest<'i>, Fault<'i>> {
    let name = name_param(p)?;
    let args = arguments_param(p)?;
    #[cfg(feature = "input-required")]
    let input = super::rounds::input_context(p, Method::ToolsCall, name.raw(), config, now)?;
    #[cfg(not(feature = "input-required"))]
    let _ = (config, now);
    Ok(CallRequest {
        data: ctx.data,
        tool: index,
        name,
        args,
        version: ctx.version,
        has_progress: p.meta.progress.and_then(RequestId::from_json).is_some(),
        caps: ctx.caps,
        #[cfg(feature = "input-required")]
        input,
        #[cfg(feature = "tasks")]
        task: None,
    })
}

/// The fault for a request that needs client capabilities it did not declare.
pub(super) fn missing_caps<'i>(ctx: Ctx<'i>, required: ClientCaps) -> Result<(), Fault<'i>> {
    if ctx.caps.contains(required) {
        return Ok(());
    }
    let missing = ClientCaps(required.0 & !ctx.caps.0);
    Err(if ctx.version.is_modern() {
        Fault::new(
            code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
        )
        .with(Detail::Caps(missing))
    } else {
        Fault::new(code::INVALID_PARAMS, "Missing client capability").with(Detail::Caps(missing))
    })
}

impl Session<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_tool<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        let Some(tools) = server.tools() else {
            return Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found"));
        };
        if p.raw.is_none() {
            return Err(Fault::new(
                code::INVALID_PARAMS,
                "tools/call requires params",
            ));
        }
        let name = name_param(p)?;
        let index = tools
            .find(name)
            .ok_or(Fault::new(code::INVALID_PARAMS, "Unknown tool").with(Detail::Name(name)))?;
        let request = tool_request(p, ctx, index, &self.config, self.now_ms)?;
        let required = tools.get(index).map_or(ClientCaps::NONE, |t| t.requires);
        #[cfg(feature = "tasks")]
        let support = tools.task_support(index);
        // Before 2026-07-28 there is no error code for it: the tool fails visibly instead.
        let refused = !ctx.caps.contains(required) && !ctx.version.is_modern();
        if !refused {
            missing_caps(ctx, required)?;
        }
        #[cfg(feature = "tasks")]
        if let Some(reply) = self.call_as_task(server, support, id, ctx, &request, w) {
            return reply;
        }
        #[cfg(feature = "tasks")]
        let Some(tools) = server.tools() else {
            return Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found"));
        };

        let mut target = Target::of(&self.config.key, name.raw());
        let digest = target.digest;
        let before = w.checkpoint();
        jsonrpc::begin_result(w, id.as_raw());
        let env = self.target_envelope(ctx, false, Method::ToolsCall, &mut target);
        let mut result = ToolResult::begin(w, &env);
        if refused {
            // Without `fmt`: this path is in every tools build, the firmware's included.
            let mut names = ClientCaps(required.0 & !ctx.caps.0).names();
            let (first, second, third) = (names.next(), names.next(), names.next());
            let comma = |n: Option<&str>| if n.is_some() { ", " } else { "" };
            result.error().text_parts(&[
                StrPart::Text("Missing client capability: "),
                StrPart::Text(first.unwrap_or("")),
                StrPart::Text(comma(second)),
                StrPart::Text(second.unwrap_or("")),
                StrPart::Text(comma(third)),
                StrPart::Text(third.unwrap_or("")),
            ]);
            result.finish();
            jsonrpc::end_response(w);
            return Ok(());
        }
        match tools.call(&request, &mut result) {
            Dispatch::Done => {
                if result.misused() {
                    return Err(Fault::new(
                        code::INTERNAL_ERROR,
                        "Tool handler misused the result builder",
                    ));
                }
                result.finish();
                jsonrpc::end_response(w);
                Ok(())
            }
            Dispatch::Defer => {
                w.rewind(before);
                let index = (u16::try_from(index).unwrap_or(u16::MAX), 0);
                self.defer(CallKind::Tool, index, id, p, ctx, digest, text, incoming)
            }
        }
    }
}
