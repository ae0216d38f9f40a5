//! The fixture tools, in the order the conformance suite relies on (`test_simple_text`
//! first: the suite calls `tools[0]` with `{}`). One page, identical in both eras.
//!
//! Written with `#[mcp_rs_tokio::tools]`: declaration order is list order, the doc comment is
//! the description, and the input schemas come from the argument types (checked below to be
//! byte for byte the fixtures' schemas).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_rs_core::model::common::{ClientCaps, Dispatch};
use mcp_rs_core::typed::{str_eq, ToolArgs as Args};
use mcp_rs_core::wire::json::{JsonStr, RawJson};
use mcp_rs_core::{CallRequest, ListKind, LogLevel, ToolResult};
use mcp_rs_tokio::{Context, Server, ToolArgs, ToolReply, Tools};
use serde_json::{json, Value};

use crate::fixtures::{
    CUSTOM_HEADER_ARGS, ELICITATION_ARGS, EMPTY_SCHEMA, ERROR_TEXT, JSON_SCHEMA_2020_12, LOGGER,
    LOG_STEPS, PNG, RECONNECTION_TEXT, SAMPLING_ARGS, SIMPLE_TEXT, WAV,
};
use crate::input::{self, Input, Outcome, Step};

/// The server, once built (the trigger tools announce list changes through it).
pub(crate) type ServerCell = Arc<OnceLock<Server>>;

/// No arguments are read, and any given are ignored (the suite sends extras to some tools):
/// `{"type":"object","properties":{}}`.
#[derive(ToolArgs)]
#[arg(allow_unknown)]
pub(crate) struct AnyArgs {}

/// `test_sampling`'s arguments.
#[derive(ToolArgs)]
#[arg(allow_unknown)]
pub(crate) struct SamplingArgs<'a> {
    /// The prompt to send to the client's model
    prompt: JsonStr<'a>,
}

/// `test_elicitation`'s arguments.
#[derive(ToolArgs)]
#[arg(allow_unknown)]
pub(crate) struct ElicitationArgs<'a> {
    /// The message to show the user
    message: JsonStr<'a>,
}

/// `test_custom_header`'s arguments: a 2026-07-28 `x-mcp-header` parameter.
#[derive(ToolArgs)]
#[arg(allow_unknown)]
pub(crate) struct RegionArgs<'a> {
    /// Deployment region, mirrored into the Mcp-Param-Region header
    #[arg(header = "Region")]
    region: JsonStr<'a>,
}

// The derived schemas are the fixtures' own, byte for byte (checked at compile time).
const _: () = {
    assert!(str_eq(<AnyArgs as Args>::SCHEMA, EMPTY_SCHEMA));
    assert!(str_eq(
        <SamplingArgs<'static> as Args>::SCHEMA,
        SAMPLING_ARGS
    ));
    assert!(str_eq(
        <ElicitationArgs<'static> as Args>::SCHEMA,
        ELICITATION_ARGS
    ));
    assert!(str_eq(
        <RegionArgs<'static> as Args>::SCHEMA,
        CUSTOM_HEADER_ARGS
    ));
};

/// What the fixture tools share.
pub(crate) struct Fixtures {
    /// The registry (`test_trigger_tool_change` announces a change of it).
    tools: Tools,
    /// The server (`test_trigger_prompt_change` announces prompt changes through it).
    server: ServerCell,
}

/// Every fixture tool, registered in order.
pub(crate) fn register(tools: &Tools, server: &ServerCell) {
    let fixtures = Fixtures {
        tools: tools.clone(),
        server: server.clone(),
    };
    Arc::new(fixtures).register(tools);
}

#[mcp_rs_tokio::tools]
impl Fixtures {
    /// Returns a simple text response
    #[tool]
    fn test_simple_text(&self, _: AnyArgs) -> &'static str {
        SIMPLE_TEXT
    }

    /// Returns an image (a 1x1 PNG)
    #[tool]
    fn test_image_content(&self, _: AnyArgs, r: &mut ToolResult<'_, '_>) {
        r.image(PNG, "image/png");
    }

    /// Returns audio (a short WAV)
    #[tool]
    fn test_audio_content(&self, _: AnyArgs, r: &mut ToolResult<'_, '_>) {
        r.audio(WAV, "audio/wav");
    }

    /// Returns an embedded text resource
    #[tool]
    fn test_embedded_resource(&self, _: AnyArgs, r: &mut ToolResult<'_, '_>) {
        let text = "This is an embedded resource content.";
        r.embedded_text("test://embedded-resource", Some("text/plain"), text);
    }

    /// Returns text, an image and a resource
    #[tool]
    fn test_multiple_content_types(&self, _: AnyArgs, r: &mut ToolResult<'_, '_>) {
        let json = r#"{"test":"data","value":123}"#;
        r.text("Multiple content types test:")
            .image(PNG, "image/png")
            .embedded_text(
                "test://mixed-content-resource",
                Some("application/json"),
                json,
            );
    }

    /// Logs three messages while it runs
    #[tool]
    async fn test_tool_with_logging(&self, _: AnyArgs, ctx: Context) -> &'static str {
        for (i, step) in LOG_STEPS.into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ctx.log(LogLevel::Info, Some(LOGGER), step).await;
        }
        "Tool with logging executed successfully"
    }

    /// Reports progress 0, 50 and 100 of 100
    #[tool]
    async fn test_tool_with_progress(&self, _: AnyArgs, ctx: Context) -> &'static str {
        for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ctx.progress(p, Some(100.0), None).await;
        }
        "Progress test completed"
    }

    /// Always fails (an isError result)
    #[tool]
    fn test_error_handling(&self, _: AnyArgs) -> Result<(), &'static str> {
        Err(ERROR_TEXT)
    }

    /// Closes its HTTP response stream, then answers on the resumed stream
    #[tool]
    async fn test_reconnection(&self, _: AnyArgs, ctx: Context) -> &'static str {
        // Streamable HTTP (legacy sessions): the client reconnects with Last-Event-ID and
        // gets the result there (SEP-1699). Elsewhere this changes nothing.
        ctx.close_stream().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        RECONNECTION_TEXT
    }

    /// Asks the client's model to complete the prompt
    #[tool(requires = ClientCaps::SAMPLING, inline = Self::answer)]
    async fn test_sampling(&self, args: SamplingArgs<'_>, ctx: Context) -> ToolReply {
        let args = json!({ "prompt": args.prompt.to_string() });
        legacy("test_sampling", &args, &ctx).await
    }

    /// Asks the user for a username and an email
    #[tool(requires = ClientCaps::ELICITATION, inline = Self::answer)]
    async fn test_elicitation(&self, args: ElicitationArgs<'_>, ctx: Context) -> ToolReply {
        let args = json!({ "message": args.message.to_string() });
        legacy("test_elicitation", &args, &ctx).await
    }

    /// Elicitation with defaults (SEP-1034)
    #[tool(requires = ClientCaps::ELICITATION, inline = Self::answer)]
    async fn test_elicitation_sep1034_defaults(&self, _: AnyArgs, ctx: Context) -> ToolReply {
        legacy("test_elicitation_sep1034_defaults", &Value::Null, &ctx).await
    }

    /// Elicitation with enum forms (SEP-1330)
    #[tool(requires = ClientCaps::ELICITATION, inline = Self::answer)]
    async fn test_elicitation_sep1330_enums(&self, _: AnyArgs, ctx: Context) -> ToolReply {
        legacy("test_elicitation_sep1330_enums", &Value::Null, &ctx).await
    }

    /// Tool with JSON Schema 2020-12 features
    #[tool(input_schema = JSON_SCHEMA_2020_12)]
    fn json_schema_2020_12_tool(&self, args: RawJson<'_>) -> String {
        // Calls are not validated against the schema (the suite only lists it).
        let args: Value = serde_json::from_str(args.as_str()).unwrap_or_default();
        format!("JSON Schema 2020-12 tool called with: {args}")
    }

    /// Echoes the region it is given (an x-mcp-header parameter)
    #[tool]
    fn test_custom_header(&self, args: RegionArgs<'_>) -> String {
        format!("Region: {}", args.region)
    }

    /// Needs the client's sampling capability
    #[tool(requires = ClientCaps::SAMPLING)]
    fn test_missing_capability(&self, _: AnyArgs) -> &'static str {
        "Success"
    }

    /// Asks the user for a value while it runs
    #[tool(requires = ClientCaps::ELICITATION, inline = Self::answer)]
    async fn test_streaming_elicitation(&self, _: AnyArgs, ctx: Context) -> ToolReply {
        legacy("test_streaming_elicitation", &Value::Null, &ctx).await
    }

    /// Logs one message (at info)
    #[tool]
    async fn test_logging_tool(&self, _: AnyArgs, ctx: Context) -> &'static str {
        let data = "Diagnostic trace logging activated";
        ctx.log(LogLevel::Info, Some(LOGGER), data).await;
        "Logging evaluated"
    }

    /// Announces a tool list change
    #[tool]
    async fn test_trigger_tool_change(&self, _: AnyArgs) -> &'static str {
        // The list itself stays the same (clients compare it across calls). A task, so
        // that the change is announced before the answer.
        self.tools.notify_changed();
        "Tool list change triggered"
    }

    /// Announces a prompt list change
    #[tool]
    async fn test_trigger_prompt_change(&self, _: AnyArgs) -> &'static str {
        if let Some(server) = self.server.get() {
            server.list_changed(ListKind::Prompts);
        }
        "Prompt list change triggered"
    }

    /// Asks for the user's name
    #[tool(requires = ClientCaps::ELICITATION, inline = Self::answer)]
    async fn test_input_required_result_elicitation(&self, _: AnyArgs, ctx: Context) -> ToolReply {
        legacy("test_input_required_result_elicitation", &Value::Null, &ctx).await
    }

    /// Asks the client's model a question
    #[tool(requires = ClientCaps::SAMPLING, inline = Self::answer)]
    async fn test_input_required_result_sampling(&self, _: AnyArgs, ctx: Context) -> ToolReply {
        legacy("test_input_required_result_sampling", &Value::Null, &ctx).await
    }

    /// Asks for the client's roots
    #[tool(requires = ClientCaps::ROOTS, inline = Self::answer)]
    async fn test_input_required_result_list_roots(&self, _: AnyArgs, ctx: Context) -> ToolReply {
        legacy("test_input_required_result_list_roots", &Value::Null, &ctx).await
    }

    /// Asks for a confirmation, keeping state
    #[tool(requires = ClientCaps::ELICITATION, inline = Self::answer)]
    async fn test_input_required_result_request_state(
        &self,
        _: AnyArgs,
        ctx: Context,
    ) -> ToolReply {
        legacy(
            "test_input_required_result_request_state",
            &Value::Null,
            &ctx,
        )
        .await
    }

    /// Asks for a name, a greeting and the roots at once
    #[tool(requires = ALL_INPUTS, inline = Self::answer)]
    async fn test_input_required_result_multiple_inputs(
        &self,
        _: AnyArgs,
        ctx: Context,
    ) -> ToolReply {
        legacy(
            "test_input_required_result_multiple_inputs",
            &Value::Null,
            &ctx,
        )
        .await
    }

    /// Asks two questions, one after the other
    #[tool(requires = ClientCaps::ELICITATION, inline = Self::answer)]
    async fn test_input_required_result_multi_round(&self, _: AnyArgs, ctx: Context) -> ToolReply {
        legacy("test_input_required_result_multi_round", &Value::Null, &ctx).await
    }

    /// Rejects a requestState that was altered
    #[tool(requires = ClientCaps::ELICITATION, inline = Self::answer)]
    async fn test_input_required_result_tampered_state(
        &self,
        _: AnyArgs,
        ctx: Context,
    ) -> ToolReply {
        legacy(
            "test_input_required_result_tampered_state",
            &Value::Null,
            &ctx,
        )
        .await
    }

    /// Asks only for what the client declared
    #[tool(inline = Self::answer)]
    async fn test_input_required_result_capabilities(&self, _: AnyArgs, ctx: Context) -> ToolReply {
        legacy(
            "test_input_required_result_capabilities",
            &Value::Null,
            &ctx,
        )
        .await
    }

    /// The inline part of the fixtures run by [`input::step`]: 2026-07-28 calls are answered
    /// here (a result or `input_required`); legacy ones go to the tool's task
    /// ([`input::drive`], server-to-client requests).
    fn answer(&self, call: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
        if !call.version().is_modern() {
            return Dispatch::Defer;
        }
        let args: Value = serde_json::from_str(call.args().as_str()).unwrap_or_default();
        let input = Input::from_core(call.input(), call.client_caps());
        match input::step(&call.name().to_string(), &args, &input) {
            Step::Done(Outcome::Text(t)) => drop(r.text(&t)),
            Step::Done(Outcome::Error(e)) => drop(r.error().text(&e)),
            Step::Ask(asks, state) => r.input_required(state.as_deref(), |req| {
                asks.iter().for_each(|a| a.write(req))
            }),
        }
        Dispatch::Done
    }
}

/// What `test_input_required_result_multiple_inputs` needs.
const ALL_INPUTS: ClientCaps = ClientCaps::ELICITATION
    .with(ClientCaps::SAMPLING)
    .with(ClientCaps::ROOTS);

/// The legacy era of an interactive fixture: [`input::drive`] on the call's task.
async fn legacy(name: &str, args: &Value, ctx: &Context) -> ToolReply {
    match input::drive(name, args, ctx).await {
        Outcome::Text(t) => ToolReply::text(t),
        Outcome::Error(e) => ToolReply::error(e),
    }
}
