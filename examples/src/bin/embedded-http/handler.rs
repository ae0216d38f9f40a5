//! The fixtures as the core's static providers, answered inline without allocating: the
//! tools in `everything`'s order (the suite calls `tools[0]`), the resources, template,
//! prompts and completions of [`mcp_examples::fixtures`]. Text that needs formatting is
//! written into stack buffers or straight into the result.
//!
//! Fixtures that report while they run (progress, log messages) are deferred and run by
//! [`Runner`] on the connection's slot, and so are those that ask the client while they
//! run in legacy sessions (sampling, elicitation, the `input_required` fixtures driven round
//! by round: [`crate::asks`]); 2026-07-28 calls of those fixtures are answered inline with
//! `input_required` ([`crate::mrtr`]).

use core::fmt::{self, Write as _};
use core::sync::atomic::{AtomicU8, Ordering};

use mcp_examples::fixtures::{
    BASE_PROMPTS, CUSTOM_HEADER_ARGS, ELICITATION_ARGS, EMPTY_SCHEMA, ERROR_TEXT,
    JSON_SCHEMA_2020_12, LOGGER, LOG_STEPS, PNG, PROMPT_COMPLETIONS, RECONNECTION_TEXT, RESOURCES,
    SAMPLING_ARGS, SIMPLE_TEXT, STATIC_TEXT, TEMPLATE, TEMPLATES, TEMPLATE_IDS, WATCHED_TEXT, WAV,
};
use mcp_rs_core::model::completion::{
    CompleteRequest, CompletionRef, CompletionResult, Completions,
};
use mcp_rs_core::model::prompts::{GetPromptRequest, Prompt, PromptResult, PromptSet};
use mcp_rs_core::model::resources::{
    ReadRequest, ReadResult, Resource, ResourceSet, ResourceTemplate,
};
use mcp_rs_core::model::skills::SkillSet;
use mcp_rs_core::model::tasks::{TaskStore, TaskSupport};
use mcp_rs_core::wire::json::{JsonStr, JsonWriter};
use mcp_rs_core::{
    Call, CallRequest, ClientCaps, Content, Dispatch, ListKind, LogLevel, Role, ServerHandler,
    Tool, ToolResult, ToolSet,
};
use mcp_rs_embedded::http::{CallContext, CallRunner};
use mcp_rs_embedded::tasks::{TaskHandler, TaskJobs};

/// List changes the trigger tools asked for (bit 0: tools, bit 1: prompts); the serving
/// loop announces them through the server after each round.
pub(crate) static CHANGED: AtomicU8 = AtomicU8::new(0);

/// The kinds changed since the last call.
pub(crate) fn take_changes() -> impl Iterator<Item = ListKind> {
    let bits = CHANGED.swap(0, Ordering::Relaxed);
    [(1, ListKind::Tools), (2, ListKind::Prompts)]
        .into_iter()
        .filter(move |(bit, _)| bits & bit != 0)
        .map(|(_, kind)| kind)
}

pub(crate) const fn tool(
    name: &'static str,
    description: &'static str,
    schema: &'static str,
) -> Tool<'static> {
    Tool {
        description: Some(description),
        ..Tool::new(name, schema)
    }
}

const fn needs(t: Tool<'static>, caps: ClientCaps) -> Tool<'static> {
    Tool {
        requires: caps,
        ..t
    }
}

const E: &str = EMPTY_SCHEMA;

/// `everything`'s tools, in its order, with its descriptions and schemas.
static TOOLS: [Tool<'static>; 28] = [
    tool("test_simple_text", "Returns a simple text response", E),
    tool("test_image_content", "Returns an image (a 1x1 PNG)", E),
    tool("test_audio_content", "Returns audio (a short WAV)", E),
    tool(
        "test_embedded_resource",
        "Returns an embedded text resource",
        E,
    ),
    tool(
        "test_multiple_content_types",
        "Returns text, an image and a resource",
        E,
    ),
    tool(
        "test_tool_with_logging",
        "Logs three messages while it runs",
        E,
    ),
    tool(
        "test_tool_with_progress",
        "Reports progress 0, 50 and 100 of 100",
        E,
    ),
    tool("test_error_handling", "Always fails (an isError result)", E),
    tool(
        "test_reconnection",
        "Closes its HTTP response stream, then answers on the resumed stream",
        E,
    ),
    needs(
        tool(
            "test_sampling",
            "Asks the client's model to complete the prompt",
            SAMPLING_ARGS,
        ),
        ClientCaps::SAMPLING,
    ),
    needs(
        tool(
            "test_elicitation",
            "Asks the user for a username and an email",
            ELICITATION_ARGS,
        ),
        ClientCaps::ELICITATION,
    ),
    needs(
        tool(
            "test_elicitation_sep1034_defaults",
            "Elicitation with defaults (SEP-1034)",
            E,
        ),
        ClientCaps::ELICITATION,
    ),
    needs(
        tool(
            "test_elicitation_sep1330_enums",
            "Elicitation with enum forms (SEP-1330)",
            E,
        ),
        ClientCaps::ELICITATION,
    ),
    tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        JSON_SCHEMA_2020_12,
    ),
    tool(
        "test_custom_header",
        "Echoes the region it is given (an x-mcp-header parameter)",
        CUSTOM_HEADER_ARGS,
    ),
    needs(
        tool(
            "test_missing_capability",
            "Needs the client's sampling capability",
            E,
        ),
        ClientCaps::SAMPLING,
    ),
    needs(
        tool(
            "test_streaming_elicitation",
            "Asks the user for a value while it runs",
            E,
        ),
        ClientCaps::ELICITATION,
    ),
    tool("test_logging_tool", "Logs one message (at info)", E),
    tool(
        "test_trigger_tool_change",
        "Announces a tool list change",
        E,
    ),
    tool(
        "test_trigger_prompt_change",
        "Announces a prompt list change",
        E,
    ),
    needs(
        tool(
            "test_input_required_result_elicitation",
            "Asks for the user's name",
            E,
        ),
        ClientCaps::ELICITATION,
    ),
    needs(
        tool(
            "test_input_required_result_sampling",
            "Asks the client's model a question",
            E,
        ),
        ClientCaps::SAMPLING,
    ),
    needs(
        tool(
            "test_input_required_result_list_roots",
            "Asks for the client's roots",
            E,
        ),
        ClientCaps::ROOTS,
    ),
    needs(
        tool(
            "test_input_required_result_request_state",
            "Asks for a confirmation, keeping state",
            E,
        ),
        ClientCaps::ELICITATION,
    ),
    needs(
        tool(
            "test_input_required_result_multiple_inputs",
            "Asks for a name, a greeting and the roots at once",
            E,
        ),
        ClientCaps::ELICITATION
            .with(ClientCaps::SAMPLING)
            .with(ClientCaps::ROOTS),
    ),
    needs(
        tool(
            "test_input_required_result_multi_round",
            "Asks two questions, one after the other",
            E,
        ),
        ClientCaps::ELICITATION,
    ),
    needs(
        tool(
            "test_input_required_result_tampered_state",
            "Rejects a requestState that was altered",
            E,
        ),
        ClientCaps::ELICITATION,
    ),
    tool(
        "test_input_required_result_capabilities",
        "Asks only for what the client declared",
        E,
    ),
];

/// A fixed buffer that `write!` fills (an error once it is full).
pub(crate) struct Buf<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Buf<N> {
    pub(crate) fn new() -> Self {
        Buf {
            bytes: [0; N],
            len: 0,
        }
    }
    pub(crate) fn as_str(&self) -> &str {
        core::str::from_utf8(self.bytes.get(..self.len).unwrap_or_default()).unwrap_or("")
    }
}

impl<const N: usize> fmt::Write for Buf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self
            .len
            .checked_add(s.len())
            .filter(|&e| e <= N)
            .ok_or(fmt::Error)?;
        self.bytes
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The fixture server's handler: the tasks fixtures' host besides the static fixtures.
#[derive(Debug)]
pub(crate) struct Fixtures {
    pub(crate) tasks: &'static mut crate::tasks::Host,
}

impl TaskHandler for Fixtures {
    fn task_jobs(&mut self) -> Option<&mut dyn TaskJobs> {
        Some(&mut *self.tasks)
    }
}

impl ServerHandler for Fixtures {
    fn tasks(&mut self) -> Option<&mut dyn TaskStore> {
        Some(&mut *self.tasks)
    }
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(self)
    }
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        Some(self)
    }
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(self)
    }
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        Some(self)
    }
    fn skills(&mut self) -> Option<&dyn SkillSet> {
        Some(crate::skills::skills())
    }
}

impl ToolSet for Fixtures {
    fn len(&self) -> usize {
        TOOLS.len() + crate::tasks::TOOLS.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        TOOLS.get(index).copied().or_else(|| {
            let i = index.checked_sub(TOOLS.len())?;
            crate::tasks::TOOLS.get(i).copied()
        })
    }
    fn task_support(&self, index: usize) -> TaskSupport {
        index
            .checked_sub(TOOLS.len())
            .map_or(TaskSupport::Forbidden, crate::tasks::support)
    }
    fn call(&mut self, request: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
        let Some(tool) = TOOLS.get(request.tool_index()) else {
            let Some(i) = request.tool_index().checked_sub(TOOLS.len()) else {
                return Dispatch::Defer;
            };
            return crate::tasks::call(self.tasks, i, request, r, crate::clock());
        };
        if request.version().is_modern()
            && crate::mrtr::step(
                request.name(),
                Some(request.args()),
                request.input(),
                request.client_caps(),
                r,
            )
        {
            return Dispatch::Done;
        }
        match tool.name {
            "test_simple_text" => {
                r.text(SIMPLE_TEXT);
            }
            "test_image_content" => {
                r.image(PNG, "image/png");
            }
            "test_audio_content" => {
                r.audio(WAV, "audio/wav");
            }
            "test_embedded_resource" => {
                let text = "This is an embedded resource content.";
                r.embedded_text("test://embedded-resource", Some("text/plain"), text);
            }
            "test_multiple_content_types" => {
                let json = r#"{"test":"data","value":123}"#;
                r.text("Multiple content types test:")
                    .image(PNG, "image/png")
                    .embedded_text(
                        "test://mixed-content-resource",
                        Some("application/json"),
                        json,
                    );
            }
            "test_error_handling" => {
                r.error().text(ERROR_TEXT);
            }
            "json_schema_2020_12_tool" => {
                let args = request.args();
                r.text_fmt(format_args!(
                    "JSON Schema 2020-12 tool called with: {}",
                    args.as_str()
                ));
            }
            "test_custom_header" => {
                match request.args().get("region").and_then(|v| v.as_string()) {
                    Some(region) => {
                        r.text_fmt(format_args!("Region: {region}"));
                    }
                    None => {
                        r.fail(format_args!("region is required"));
                    }
                }
            }
            "test_missing_capability" => {
                r.text("Success");
            }
            "test_trigger_tool_change" => {
                CHANGED.fetch_or(1, Ordering::Relaxed);
                r.text("Tool list change triggered");
            }
            "test_trigger_prompt_change" => {
                CHANGED.fetch_or(2, Ordering::Relaxed);
                r.text("Prompt list change triggered");
            }
            _ => return Dispatch::Defer,
        }
        Dispatch::Done
    }
}

impl ResourceSet for Fixtures {
    fn len(&self) -> usize {
        RESOURCES.len() + 1
    }
    fn get(&self, index: usize) -> Option<Resource<'_>> {
        // After the fixtures, the skill's entry point (as `everything` lists it).
        RESOURCES
            .get(index)
            .copied()
            .or((index == RESOURCES.len()).then_some(crate::skills::SKILL_RESOURCE))
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
        RESOURCES.iter().any(|r| uri.eq_str(r.uri))
    }
    fn read(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        let mut uri_buf = [0u8; 256];
        let Ok(uri) = request.uri().decode_into(&mut uri_buf) else {
            result.not_found();
            return Dispatch::Done;
        };
        match request.resource_index() {
            Some(0) => {
                result.text(uri, Some("text/plain"), STATIC_TEXT);
            }
            Some(1) => {
                result.blob(uri, Some("image/png"), PNG);
            }
            Some(2) => {
                result.text(uri, Some("text/plain"), WATCHED_TEXT);
            }
            _ => {
                let template = TEMPLATES[0].template();
                let id = template.matches(uri).and_then(|c| c.get("id"));
                match id {
                    Some(id) if request.template_index() == Some(0) => {
                        // serde_json's key order in `everything`: data, id, templateTest.
                        let mut data = Buf::<128>::new();
                        let mut out = [0u8; 512];
                        let mut w = JsonWriter::new(&mut out);
                        w.begin_object();
                        w.key("data");
                        if write!(data, "Data for ID: {id}").is_err() {
                            result.not_found();
                            return Dispatch::Done;
                        }
                        w.string(data.as_str());
                        w.key("id");
                        let mut idbuf = Buf::<128>::new();
                        let _ = write!(idbuf, "{id}");
                        w.string(idbuf.as_str());
                        w.key("templateTest");
                        w.bool(true);
                        w.end_object();
                        match w.finish() {
                            Ok(n) => {
                                let text = core::str::from_utf8(&out[..n]).unwrap_or("{}");
                                result.text(uri, Some("application/json"), text);
                            }
                            Err(_) => result.not_found(),
                        }
                    }
                    // The skill's files (SKILL.md is listed, the others are not).
                    _ => match crate::skills::file(uri) {
                        Some((mime, text)) => {
                            result.text(uri, Some(mime), text);
                        }
                        None => result.not_found(),
                    },
                }
            }
        }
        Dispatch::Done
    }
}

/// `everything`'s prompts: the base ones and the one that needs input.
static PROMPTS: [Prompt<'static>; 5] = [
    BASE_PROMPTS[0],
    BASE_PROMPTS[1],
    BASE_PROMPTS[2],
    BASE_PROMPTS[3],
    Prompt {
        requires: ClientCaps::ELICITATION,
        ..Prompt::new(
            crate::mrtr::INPUT_PROMPT,
            "A prompt that asks the user for context first",
        )
    },
];

impl PromptSet for Fixtures {
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
        let name = PROMPTS.get(request.prompt_index()).map(|p| p.name);
        if name == Some(crate::mrtr::INPUT_PROMPT) && request.version().is_modern() {
            let input = request.input();
            let caps = request.client_caps();
            if crate::mrtr::step(request.name(), None, input, caps, result) {
                return Dispatch::Done;
            }
        }
        match name {
            Some("test_simple_prompt") => {
                result.message(Role::User, &text("This is a simple prompt for testing."));
            }
            Some("test_prompt_with_arguments") => {
                let arg = |k| request.argument(k);
                let mut t = Buf::<1024>::new();
                let written = write!(
                    t,
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    Show(arg("arg1")),
                    Show(arg("arg2"))
                );
                if written.is_err() {
                    result.fail(&"arguments too long");
                    return Dispatch::Done;
                }
                result.message(Role::User, &Content::Text(t.as_str()));
            }
            Some("test_prompt_with_embedded_resource") => {
                let mut uri = Buf::<512>::new();
                if write!(uri, "{}", Show(request.argument("resourceUri"))).is_err() {
                    result.fail(&"resourceUri too long");
                    return Dispatch::Done;
                }
                let embedded = Content::EmbeddedText {
                    uri: uri.as_str(),
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
            _ => return Dispatch::Defer,
        }
        Dispatch::Done
    }
}

/// An optional argument as text (empty when absent).
struct Show<'i>(Option<JsonStr<'i>>);

impl fmt::Display for Show<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) => write!(f, "{s}"),
            None => Ok(()),
        }
    }
}

impl Completions for Fixtures {
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
        let typed = request.value();
        let prefix = |c: &str| {
            let mut cs = c.chars();
            typed.chars().all(|t| cs.next() == Some(t))
        };
        let mut total = 0u64;
        for c in candidates.iter().filter(|c| prefix(c)) {
            result.value(c);
            total += 1;
        }
        result.total(total).has_more(false);
        Dispatch::Done
    }
}

/// Runs the deferred fixtures that report while they run (progress, log messages) or ask
/// the client (legacy sampling and elicitation) on the connection's slot.
pub(crate) struct Runner {
    /// The slot's timer (`slow_compute` without a task sleeps on it).
    pub(crate) timer: crate::net::Timer,
}

const RUNS: [&str; 4] = [
    "test_tool_with_progress",
    "test_tool_with_logging",
    "test_logging_tool",
    "test_reconnection",
];

impl<T: embedded_io_async::Write> CallRunner<T> for Runner {
    fn takes(&self, call: &Call<'_>) -> bool {
        RUNS.iter()
            .chain(&crate::asks::ASKS)
            .any(|name| call.name().eq_str(name))
            || call.name().raw().starts_with("test_input_required_result_")
            || call.name().eq_str("slow_compute")
    }

    async fn run<'c>(&'c mut self, call: Call<'c>, ctx: &'c mut CallContext<'_, T>) {
        if crate::asks::ASKS.iter().any(|n| call.name().eq_str(n)) {
            crate::asks::run(&call, ctx).await;
        } else if call.name().raw().starts_with("test_input_required_result_") {
            crate::asks::drive(&call, ctx).await;
        } else if call.name().eq_str("slow_compute") {
            // Called without a task: the sleep runs on the slot, then the result goes out.
            let args = call.args();
            self.timer
                .sleep(std::time::Duration::from_secs_f64(crate::tasks::seconds(
                    args,
                )))
                .await;
            let mut text = Buf::<512>::new();
            crate::tasks::computed(args, &mut text);
            ctx.complete(|r| {
                r.text(text.as_str());
            })
            .await;
        } else if call.name().eq_str("test_reconnection") {
            // Legacy sessions: the POST's stream ends here and the result goes to the
            // session's replay ring; the client resumes with GET and Last-Event-ID (as
            // `everything`'s). Elsewhere the result goes out as usual.
            ctx.close_stream().await;
            ctx.complete(|r| {
                r.text(RECONNECTION_TEXT);
            })
            .await;
        } else if call.name().eq_str("test_tool_with_progress") {
            for p in [0.0, 50.0, 100.0] {
                ctx.progress(p, Some(100.0), None).await;
            }
            ctx.complete(|r| {
                r.text("Progress test completed");
            })
            .await;
        } else if call.name().eq_str("test_tool_with_logging") {
            for step in LOG_STEPS {
                ctx.log(LogLevel::Info, Some(LOGGER), step).await;
            }
            ctx.complete(|r| {
                r.text("Tool with logging executed successfully");
            })
            .await;
        } else {
            let data = "Diagnostic trace logging activated";
            ctx.log(LogLevel::Info, Some(LOGGER), data).await;
            ctx.complete(|r| {
                r.text("Logging evaluated");
            })
            .await;
        }
    }
}
