//! `prompts/get`: the prompt is looked up and its declared arguments checked, then it is
//! rendered inline or deferred.

use super::faults::{Detail, Fault, InlineText};
use super::tools::{arguments_param, name_param};
use super::{Ctx, Incoming, Reply, Session};
use crate::model::common::Dispatch;
use crate::model::handler::ServerHandler;
use crate::model::prompts::{GetPromptRequest, Prompt, PromptOutcome, PromptResult};
use crate::session::inflight::CallKind;
use crate::wire::json::{JsonWriter, Kind, RawJson};
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::{Method, Params};

/// The `prompts/get` view of checked params, for the prompt at `index`.
pub(super) fn prompt_request<'i>(
    p: &Params<'i>,
    ctx: Ctx<'i>,
    index: usize,
    config: &super::Config,
    now: u64,
) -> Result<GetPromptRequest<'i>, Fault<'i>> {
    let name = name_param(p)?;
    let arguments = arguments_param(p)?;
    #[cfg(feature = "input-required")]
    let input = super::rounds::input_context(p, Method::PromptsGet, name.raw(), config, now)?;
    #[cfg(not(feature = "input-required"))]
    let _ = (config, now);
    Ok(GetPromptRequest {
        data: ctx.data,
        index,
        name,
        arguments,
        version: ctx.version,
        caps: ctx.caps,
        #[cfg(feature = "input-required")]
        input,
    })
}

/// Every declared required argument is present and every value is a string.
fn check_arguments<'i>(prompt: &Prompt<'_>, arguments: RawJson<'i>) -> Result<(), Fault<'i>> {
    for (k, v) in arguments.members().into_iter().flatten() {
        if v.kind() != Kind::String {
            return Err(Fault::new(
                code::INVALID_PARAMS,
                "Prompt argument values must be strings",
            )
            .with(Detail::Name(k)));
        }
    }
    for a in prompt.arguments.iter().filter(|a| a.required) {
        if arguments.get(a.name).is_none() {
            return Err(
                Fault::new(code::INVALID_PARAMS, "Missing required argument")
                    .with(Detail::Text(InlineText::new(a.name))),
            );
        }
    }
    Ok(())
}

impl Session<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn get_prompt<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        let Some(prompts) = server.prompts() else {
            return Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found"));
        };
        let name = name_param(p)?;
        let index = prompts
            .find(name)
            .ok_or(Fault::new(code::INVALID_PARAMS, "Unknown prompt").with(Detail::Name(name)))?;
        let request = prompt_request(p, ctx, index, &self.config, self.now_ms)?;
        if let Some(prompt) = prompts.get(index) {
            check_arguments(&prompt, request.arguments)?;
            super::tools::missing_caps(ctx, prompt.requires)?;
        }
        let mut target = super::rounds::Target::of(&self.config.key, name.raw());
        let digest = target.digest;
        let before = w.checkpoint();
        jsonrpc::begin_result(w, id.as_raw());
        let env = self.target_envelope(ctx, false, Method::PromptsGet, &mut target);
        let mut result = PromptResult::begin(w, &env);
        match prompts.get_prompt(&request, &mut result) {
            Dispatch::Done => {
                match result.finish() {
                    Ok(()) => {
                        jsonrpc::end_response(w);
                        Ok(())
                    }
                    Err(PromptOutcome::Misused) => Err(Fault::new(
                        code::INTERNAL_ERROR,
                        "Prompt handler misused the result builder",
                    )),
                    Err(PromptOutcome::Rejected(r)) if r.detail().is_empty() => {
                        Err(Fault::new(r.code, r.message))
                    }
                    Err(PromptOutcome::Rejected(r)) => Err(Fault::new(r.code, r.message)
                        .with(Detail::Text(InlineText::new(r.detail())))),
                }
            }
            Dispatch::Defer => {
                w.rewind(before);
                let index = (u16::try_from(index).unwrap_or(u16::MAX), 0);
                self.defer(CallKind::Prompt, index, id, p, ctx, digest, text, incoming)
            }
        }
    }
}
