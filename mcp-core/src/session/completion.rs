//! `completion/complete`: the reference and argument are checked, then the server's
//! [`Completions`](crate::model::completion::Completions) answers inline or defers.

use super::faults::Fault;
use super::{Ctx, Incoming, Reply, Session};
use crate::model::common::Dispatch;
use crate::model::completion::{CompleteRequest, CompletionRef, CompletionResult};
use crate::model::handler::ServerHandler;
use crate::session::inflight::CallKind;
use crate::wire::json::{JsonWriter, Kind};
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::{Method, Params};

/// The `completion/complete` view of params.
pub(super) fn complete_request_view<'i>(
    p: &Params<'i>,
    ctx: Ctx<'i>,
) -> Result<CompleteRequest<'i>, Fault<'i>> {
    let invalid = |m| Fault::new(code::INVALID_PARAMS, m);
    let reference = p
        .get("ref")
        .filter(|r| r.kind() == Kind::Object)
        .ok_or(invalid("params.ref must be an object"))?;
    let kind = reference.get("type").and_then(|t| t.as_string());
    let reference = if kind.is_some_and(|k| k.eq_str("ref/prompt")) {
        CompletionRef::Prompt(
            reference
                .get("name")
                .and_then(|n| n.as_string())
                .ok_or(invalid("ref/prompt needs a name"))?,
        )
    } else if kind.is_some_and(|k| k.eq_str("ref/resource")) {
        CompletionRef::Resource(
            reference
                .get("uri")
                .and_then(|n| n.as_string())
                .ok_or(invalid("ref/resource needs a uri"))?,
        )
    } else {
        return Err(invalid(
            "params.ref.type must be ref/prompt or ref/resource",
        ));
    };
    let argument = p
        .get("argument")
        .filter(|a| a.kind() == Kind::Object)
        .ok_or(invalid("params.argument must be an object"))?;
    let name = argument
        .get("name")
        .and_then(|n| n.as_string())
        .ok_or(invalid("params.argument.name must be a string"))?;
    let value = argument
        .get("value")
        .and_then(|n| n.as_string())
        .ok_or(invalid("params.argument.value must be a string"))?;
    let context = p
        .get("context")
        .and_then(|c| c.get("arguments"))
        .filter(|a| a.kind() == Kind::Object);
    Ok(CompleteRequest {
        data: ctx.data,
        reference,
        argument: name,
        value,
        context,
        version: ctx.version,
        caps: ctx.caps,
    })
}

impl Session<'_> {
    /// Checks that the reference names something the server has.
    fn check_reference<'i, S: ServerHandler + ?Sized>(
        server: &mut S,
        request: &CompleteRequest<'i>,
    ) -> Result<(), Fault<'i>> {
        let _ = &server;
        match request.reference {
            #[cfg(feature = "prompts")]
            CompletionRef::Prompt(name) => {
                let prompts = server.prompts();
                let known = prompts.is_some_and(|p| p.find(name).is_some());
                if !known {
                    return Err(Fault::new(code::INVALID_PARAMS, "Unknown prompt")
                        .with(super::faults::Detail::Name(name)));
                }
            }
            #[cfg(feature = "resources")]
            CompletionRef::Resource(uri) => {
                let known = server.resources().is_some_and(|r| {
                    (0..r.templates_len())
                        .any(|i| r.template(i).is_some_and(|t| uri.eq_str(t.uri_template)))
                        || (0..r.len()).any(|i| r.get(i).is_some_and(|x| uri.eq_str(x.uri)))
                });
                if !known {
                    return Err(
                        Fault::new(code::INVALID_PARAMS, "Unknown resource template")
                            .with(super::faults::Detail::Uri(uri)),
                    );
                }
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete_request<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        let request = complete_request_view(p, ctx)?;
        Self::check_reference(server, &request)?;
        let Some(completions) = server.completions() else {
            return Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found"));
        };
        let before = w.checkpoint();
        jsonrpc::begin_result(w, id.as_raw());
        let mut target = super::rounds::Target::digest(0);
        let env = self.target_envelope(ctx, false, Method::Complete, &mut target);
        let mut result = CompletionResult::begin(w, &env);
        match completions.complete(&request, &mut result) {
            Dispatch::Done => {
                result.finish();
                jsonrpc::end_response(w);
                Ok(())
            }
            Dispatch::Defer => {
                w.rewind(before);
                self.defer(CallKind::Complete, (0, 0), id, p, ctx, 0, text, incoming)
            }
        }
    }
}
