//! Resources, resource templates, prompts and completion of the fixture server: static
//! tables answered inline by the core's provider traits. The one prompt that needs client
//! input answers `input_required` inline in 2026-07-28 and is deferred to an async handler
//! (server-to-client requests) for legacy clients.

use mcp_rs_core::model::common::{ClientCaps, Dispatch};
use mcp_rs_core::model::completion::{
    CompleteRequest, CompletionRef, CompletionResult, Completions,
};
use mcp_rs_core::model::content::{Content, Role};
use mcp_rs_core::model::prompts::{GetPromptRequest, Prompt, PromptResult, PromptSet};
use mcp_rs_core::model::resources::{
    ReadRequest, ReadResult, Resource, ResourceSet, ResourceTemplate,
};
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::ServerHandler;
use mcp_rs_tokio::{Context, ErrorReply, PromptOutput, PromptRequest};

use crate::fixtures::{
    BASE_PROMPTS, PNG, PROMPT_COMPLETIONS, RESOURCES as BASE_RESOURCES, STATIC_TEXT, TEMPLATE,
    TEMPLATES, TEMPLATE_IDS, WATCHED_TEXT,
};
use crate::input::{self, Input, Outcome, Step, INPUT_PROMPT};

/// The fixtures' resources and the skill's files' entry point (skills are read as resources).
const RESOURCES: [Resource<'static>; 4] = [
    BASE_RESOURCES[0],
    BASE_RESOURCES[1],
    BASE_RESOURCES[2],
    crate::skills::SKILL_RESOURCE,
];

const PROMPTS: [Prompt<'static>; 5] = [
    BASE_PROMPTS[0],
    BASE_PROMPTS[1],
    BASE_PROMPTS[2],
    BASE_PROMPTS[3],
    Prompt {
        requires: ClientCaps::ELICITATION,
        ..Prompt::new(
            INPUT_PROMPT,
            "A prompt that asks the user for context first",
        )
    },
];

/// The fixture server's resources, prompts and completions.
#[derive(Debug, Default)]
pub(crate) struct Catalog;

impl ServerHandler for Catalog {
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        Some(self)
    }
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(self)
    }
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        Some(self)
    }
    fn skills(&mut self) -> Option<&dyn mcp_rs_core::model::skills::SkillSet> {
        Some(crate::skills::skills())
    }
}

impl ResourceSet for Catalog {
    fn len(&self) -> usize {
        RESOURCES.len()
    }
    fn get(&self, index: usize) -> Option<Resource<'_>> {
        RESOURCES.get(index).copied()
    }
    fn templates_len(&self) -> usize {
        TEMPLATES.len()
    }
    fn template(&self, index: usize) -> Option<ResourceTemplate<'_>> {
        TEMPLATES.get(index).copied()
    }
    fn subscribable(&self) -> bool {
        true
    }
    fn subscribe(&mut self, uri: JsonStr<'_>, _subscribe: bool) -> bool {
        // The watched resource never changes, so there is nothing to remember.
        RESOURCES.iter().any(|r| uri.eq_str(r.uri))
    }
    fn read(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        let uri = request.uri().to_string();
        match request.resource_index() {
            Some(0) => result.text(&uri, Some("text/plain"), STATIC_TEXT),
            Some(1) => result.blob(&uri, Some("image/png"), PNG),
            Some(2) => result.text(&uri, Some("text/plain"), WATCHED_TEXT),
            _ => match TEMPLATES[0]
                .template()
                .matches(&uri)
                .and_then(|c| c.get("id"))
            {
                Some(id) if request.template_index() == Some(0) => {
                    let data = serde_json::json!({
                        "id": id,
                        "templateTest": true,
                        "data": format!("Data for ID: {id}"),
                    });
                    result.text(&uri, Some("application/json"), &data.to_string())
                }
                _ => match crate::skills::file(&uri) {
                    Some((mime, text)) => result.text(&uri, Some(mime), text),
                    None => {
                        result.not_found();
                        return Dispatch::Done;
                    }
                },
            },
        };
        Dispatch::Done
    }
}

impl PromptSet for Catalog {
    fn len(&self) -> usize {
        PROMPTS.len()
    }
    fn get(&self, index: usize) -> Option<Prompt<'_>> {
        PROMPTS.get(index).copied()
    }
    fn get_prompt(
        &mut self,
        request: &GetPromptRequest<'_>,
        result: &mut PromptResult<'_, '_>,
    ) -> Dispatch {
        let text = |t: &'static str| Content::Text(t);
        match PROMPTS.get(request.prompt_index()).map(|p| p.name) {
            Some("test_simple_prompt") => {
                result.message(Role::User, &text("This is a simple prompt for testing."));
            }
            Some("test_prompt_with_arguments") => {
                let arg = |k| {
                    request
                        .argument(k)
                        .map(|v| v.to_string())
                        .unwrap_or_default()
                };
                let t = format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                );
                result.message(Role::User, &Content::Text(&t));
            }
            Some("test_prompt_with_embedded_resource") => {
                let uri = request
                    .argument("resourceUri")
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                let embedded = Content::EmbeddedText {
                    uri: &uri,
                    mime_type: Some("text/plain"),
                    text: "Embedded resource content for testing.",
                };
                result.message(Role::User, &embedded).message(
                    Role::User,
                    &text("Please process the embedded resource above."),
                );
            }
            Some("test_prompt_with_image") => {
                let image = Content::Image {
                    data: PNG,
                    mime_type: "image/png",
                };
                result
                    .message(Role::User, &image)
                    .message(Role::User, &text("Please analyze the image above."));
            }
            Some(INPUT_PROMPT) if request.version().is_modern() => {
                let input = Input::from_core(request.input(), request.client_caps());
                match input::step(INPUT_PROMPT, &serde_json::Value::Null, &input) {
                    Step::Done(Outcome::Text(t)) => {
                        result.message(Role::User, &Content::Text(&t));
                    }
                    Step::Done(Outcome::Error(t)) => {
                        result.message(Role::User, &Content::Text(&t));
                    }
                    Step::Ask(asks, state) => result
                        .input_required(state.as_deref(), |r| asks.iter().for_each(|a| a.write(r))),
                }
            }
            // Legacy clients are asked with a server-to-client request (see `render`).
            _ => return Dispatch::Defer,
        }
        Dispatch::Done
    }
}

/// Renders the deferred prompt for a legacy client ([`mcp_rs_tokio::Server::async_prompts`]).
pub(crate) async fn render(
    request: PromptRequest,
    ctx: Context,
) -> Result<PromptOutput, ErrorReply> {
    if request.name != INPUT_PROMPT {
        return Err(ErrorReply::new(-32602, "Unknown prompt"));
    }
    match input::drive(INPUT_PROMPT, &serde_json::Value::Null, &ctx).await {
        Outcome::Text(t) => {
            Ok(PromptOutput::new().message(Role::User, mcp_rs_tokio::Content::Text(t)))
        }
        Outcome::Error(e) => Err(ErrorReply::new(-32603, e)),
    }
}

impl Completions for Catalog {
    fn complete(
        &mut self,
        request: &CompleteRequest<'_>,
        result: &mut CompletionResult<'_, '_>,
    ) -> Dispatch {
        let candidates: &[&str] = match request.reference() {
            CompletionRef::Prompt(name) => PROMPT_COMPLETIONS
                .iter()
                .find(|(p, a, _)| name.eq_str(p) && request.argument().eq_str(a))
                .map_or(&[], |(_, _, values)| values),
            CompletionRef::Resource(uri)
                if uri.eq_str(TEMPLATE) && request.argument().eq_str("id") =>
            {
                &TEMPLATE_IDS
            }
            CompletionRef::Resource(_) => &[],
        };
        let typed = request.value().to_string();
        let matches: Vec<&str> = candidates
            .iter()
            .copied()
            .filter(|c| c.starts_with(&typed))
            .collect();
        for m in &matches {
            result.value(m);
        }
        result.total(matches.len() as u64).has_more(false);
        Dispatch::Done
    }
}
