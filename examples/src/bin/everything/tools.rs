//! The fixture tools, in the order the conformance suite relies on (`test_simple_text`
//! first: the suite calls `tools[0]` with `{}`). One page, identical in both eras.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_core::tools::{ClientCaps, Dispatch};
use mcp_core::{CallRequest, ListKind, LogLevel, ToolResult};
use mcp_tokio::{Context, Handler, Server, ToolDef, ToolOutput, Tools};
use serde_json::Value;

use crate::fixtures::{
    CUSTOM_HEADER_ARGS, ELICITATION_ARGS, EMPTY_SCHEMA, ERROR_TEXT, JSON_SCHEMA_2020_12, LOGGER,
    LOG_STEPS, PNG, RECONNECTION_TEXT, SAMPLING_ARGS, SIMPLE_TEXT, WAV,
};
use crate::input::{self, Input, Outcome, Step};

/// The server, once built (the trigger tools announce list changes through it).
pub type ServerCell = Arc<OnceLock<Server>>;

fn def(name: &str, description: &str) -> ToolDef {
    ToolDef::new(name, EMPTY_SCHEMA).description(description)
}

/// Every fixture tool, registered in order.
pub fn register(tools: &Tools, server: &ServerCell) {
    let sync = |f: fn(&mut ToolResult<'_, '_>)| Handler::sync(move |_, r| f(r));
    tools.add(
        def("test_simple_text", "Returns a simple text response"),
        sync(|r| {
            r.text(SIMPLE_TEXT);
        }),
    );
    tools.add(
        def("test_image_content", "Returns an image (a 1x1 PNG)"),
        sync(|r| {
            r.image(PNG, "image/png");
        }),
    );
    tools.add(
        def("test_audio_content", "Returns audio (a short WAV)"),
        sync(|r| {
            r.audio(WAV, "audio/wav");
        }),
    );
    tools.add(
        def(
            "test_embedded_resource",
            "Returns an embedded text resource",
        ),
        sync(|r| {
            r.embedded_text(
                "test://embedded-resource",
                Some("text/plain"),
                "This is an embedded resource content.",
            );
        }),
    );
    tools.add(
        def(
            "test_multiple_content_types",
            "Returns text, an image and a resource",
        ),
        sync(|r| {
            r.text("Multiple content types test:")
                .image(PNG, "image/png")
                .embedded_text(
                    "test://mixed-content-resource",
                    Some("application/json"),
                    r#"{"test":"data","value":123}"#,
                );
        }),
    );
    tools.add(
        def(
            "test_tool_with_logging",
            "Logs three messages while it runs",
        ),
        Handler::async_fn(|_, ctx: Context| async move {
            for (i, step) in LOG_STEPS.into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.log(LogLevel::Info, Some(LOGGER), step).await;
            }
            ToolOutput::text("Tool with logging executed successfully")
        }),
    );
    tools.add(
        def(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100",
        ),
        Handler::async_fn(|_, ctx: Context| async move {
            for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.progress(p, Some(100.0), None).await;
            }
            ToolOutput::text("Progress test completed")
        }),
    );
    tools.add(
        def("test_error_handling", "Always fails (an isError result)"),
        sync(|r| {
            r.error().text(ERROR_TEXT);
        }),
    );
    tools.add(
        def(
            "test_reconnection",
            "Closes its HTTP response stream, then answers on the resumed stream",
        ),
        Handler::async_fn(|_, ctx: Context| async move {
            // Streamable HTTP (legacy sessions): the client reconnects with Last-Event-ID
            // and gets the result there (SEP-1699). Elsewhere this changes nothing.
            ctx.close_stream().await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            ToolOutput::text(RECONNECTION_TEXT)
        }),
    );
    interactive(
        tools,
        ToolDef::new("test_sampling", SAMPLING_ARGS)
            .description("Asks the client's model to complete the prompt")
            .requires(ClientCaps::SAMPLING),
    );
    interactive(
        tools,
        ToolDef::new("test_elicitation", ELICITATION_ARGS)
            .description("Asks the user for a username and an email")
            .requires(ClientCaps::ELICITATION),
    );
    interactive(
        tools,
        def(
            "test_elicitation_sep1034_defaults",
            "Elicitation with defaults (SEP-1034)",
        )
        .requires(ClientCaps::ELICITATION),
    );
    interactive(
        tools,
        def(
            "test_elicitation_sep1330_enums",
            "Elicitation with enum forms (SEP-1330)",
        )
        .requires(ClientCaps::ELICITATION),
    );
    tools.add(
        ToolDef::new("json_schema_2020_12_tool", JSON_SCHEMA_2020_12)
            .description("Tool with JSON Schema 2020-12 features"),
        Handler::sync(|call, r| {
            let args: Value = serde_json::from_str(call.args().as_str()).unwrap_or_default();
            r.text(&format!("JSON Schema 2020-12 tool called with: {args}"));
        }),
    );
    tools.add(
        ToolDef::new("test_custom_header", CUSTOM_HEADER_ARGS)
            .description("Echoes the region it is given (an x-mcp-header parameter)"),
        Handler::sync(|call, r| {
            let region = call.args().get("region").and_then(|v| v.as_string());
            match region {
                Some(region) => r.text(&format!("Region: {region}")),
                None => r.error().text("region must be a string"),
            };
        }),
    );
    tools.add(
        def(
            "test_missing_capability",
            "Needs the client's sampling capability",
        )
        .requires(ClientCaps::SAMPLING),
        sync(|r| {
            r.text("Success");
        }),
    );
    interactive(
        tools,
        def(
            "test_streaming_elicitation",
            "Asks the user for a value while it runs",
        )
        .requires(ClientCaps::ELICITATION),
    );
    tools.add(
        def("test_logging_tool", "Logs one message (at info)"),
        Handler::async_fn(|_, ctx: Context| async move {
            let data = "Diagnostic trace logging activated";
            ctx.log(LogLevel::Info, Some(LOGGER), data).await;
            ToolOutput::text("Logging evaluated")
        }),
    );
    let registry = tools.clone();
    tools.add(
        def("test_trigger_tool_change", "Announces a tool list change"),
        Handler::async_fn(move |_, _| {
            let registry = registry.clone();
            async move {
                // The list itself stays the same (clients compare it across calls).
                registry.notify_changed();
                ToolOutput::text("Tool list change triggered")
            }
        }),
    );
    let cell = server.clone();
    tools.add(
        def(
            "test_trigger_prompt_change",
            "Announces a prompt list change",
        ),
        Handler::async_fn(move |_, _| {
            let cell = cell.clone();
            async move {
                if let Some(server) = cell.get() {
                    server.list_changed(ListKind::Prompts);
                }
                ToolOutput::text("Prompt list change triggered")
            }
        }),
    );
    let mrtr = [
        (
            "elicitation",
            "Asks for the user's name",
            ClientCaps::ELICITATION,
        ),
        (
            "sampling",
            "Asks the client's model a question",
            ClientCaps::SAMPLING,
        ),
        (
            "list_roots",
            "Asks for the client's roots",
            ClientCaps::ROOTS,
        ),
        (
            "request_state",
            "Asks for a confirmation, keeping state",
            ClientCaps::ELICITATION,
        ),
        (
            "multiple_inputs",
            "Asks for a name, a greeting and the roots at once",
            ClientCaps::ELICITATION
                .with(ClientCaps::SAMPLING)
                .with(ClientCaps::ROOTS),
        ),
        (
            "multi_round",
            "Asks two questions, one after the other",
            ClientCaps::ELICITATION,
        ),
        (
            "tampered_state",
            "Rejects a requestState that was altered",
            ClientCaps::ELICITATION,
        ),
        (
            "capabilities",
            "Asks only for what the client declared",
            ClientCaps::NONE,
        ),
    ];
    for (suffix, description, caps) in mrtr {
        let name = format!("test_input_required_result_{suffix}");
        interactive(tools, def(&name, description).requires(caps));
    }
}

/// Registers a tool run by [`input::step`]: answered inline in 2026-07-28 (a result or
/// `input_required`), deferred to [`input::drive`] for legacy clients.
fn interactive(tools: &Tools, def: ToolDef) {
    let name: Arc<str> = def.name().into();
    let async_name = name.clone();
    tools.add(
        def,
        Handler::mixed(
            move |call: &CallRequest<'_>, r: &mut ToolResult<'_, '_>| {
                if !call.version().is_modern() {
                    return Dispatch::Defer;
                }
                let args: Value = serde_json::from_str(call.args().as_str()).unwrap_or_default();
                let input = Input::from_core(call.input(), call.client_caps());
                match input::step(&name, &args, &input) {
                    Step::Done(outcome) => write(r, &outcome),
                    Step::Ask(asks, state) => {
                        r.input_required(state.as_deref(), |req| {
                            asks.iter().for_each(|a| a.write(req))
                        });
                    }
                }
                Dispatch::Done
            },
            move |args, ctx| {
                let name = async_name.clone();
                async move {
                    match input::drive(&name, &args.value(), &ctx).await {
                        Outcome::Text(t) => ToolOutput::text(t),
                        Outcome::Error(e) => ToolOutput::error(e),
                    }
                }
            },
        ),
    );
}

fn write(r: &mut ToolResult<'_, '_>, outcome: &Outcome) {
    match outcome {
        Outcome::Text(t) => r.text(t),
        Outcome::Error(e) => r.error().text(e),
    };
}
