//! The conformance suite's fixture data: binary payloads, schemas and fixed texts, as
//! `@modelcontextprotocol/conformance@0.2.0-alpha.12` checks them (see
//! `../shared/CONFORMANCE.md`). Raw JSON is kept on one line: the core refuses raw JSON
//! that would split a frame.

use mcp_rs_core::model::prompts::{Prompt, PromptArgument};
use mcp_rs_core::model::resources::{Resource, ResourceTemplate};

/// A 1x1 PNG (base64): the suite's reference image.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny WAV (base64): the suite's reference sound.
pub const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// An object schema without properties (the suite calls most tools with `{}` or nothing).
pub const EMPTY_SCHEMA: &str = r#"{"type":"object","properties":{}}"#;

/// `test_sampling`'s arguments.
pub const SAMPLING_ARGS: &str = r#"{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the client's model"}},"required":["prompt"]}"#;
/// `test_elicitation`'s arguments.
pub const ELICITATION_ARGS: &str = r#"{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}"#;
/// `test_custom_header`'s arguments: a 2026-07-28 `x-mcp-header` parameter.
pub const CUSTOM_HEADER_ARGS: &str = r#"{"type":"object","properties":{"region":{"type":"string","description":"Deployment region, mirrored into the Mcp-Param-Region header","x-mcp-header":"Region"}},"required":["region"]}"#;

/// The suite's `json-schema-2020-12` constant, returned unchanged by `tools/list`.
pub const JSON_SCHEMA_2020_12: &str = concat!(
    r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","#,
    r#""$defs":{"address":{"$anchor":"addressDef","type":"object","#,
    r#""properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"#,
    r##""properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"##,
    r#""contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"#,
    r#""allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"#,
    r#""if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"#,
    r#""then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}"#
);

/// `test_elicitation`'s form.
pub const ELICIT_FORM: &str = r#"{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}"#;

/// `test_elicitation_sep1034_defaults`: one field of each primitive type with a default.
pub const SEP1034_MESSAGE: &str = "Please review and update the form fields with defaults";
/// Its form.
pub const SEP1034_FORM: &str = concat!(
    r#"{"type":"object","properties":{"#,
    r#""name":{"type":"string","description":"User name","default":"John Doe"},"#,
    r#""age":{"type":"integer","description":"User age","default":30},"#,
    r#""score":{"type":"number","description":"User score","default":95.5},"#,
    r#""status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},"#,
    r#""verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}"#
);

/// `test_elicitation_sep1330_enums`: the five enum forms of 2025-11-25.
pub const SEP1330_MESSAGE: &str = "Please select options from the enum fields";
/// Its form.
pub const SEP1330_FORM: &str = concat!(
    r#"{"type":"object","properties":{"#,
    r#""untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},"#,
    r#""titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},"#,
    r#""legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},"#,
    r#""untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},"#,
    r#""titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},"required":[]}"#
);

/// A form with one required field of `type`.
pub fn one_field(name: &str, ty: &str) -> String {
    format!(
        r#"{{"type":"object","properties":{{"{name}":{{"type":"{ty}"}}}},"required":["{name}"]}}"#
    )
}

/// `sampling/createMessage` params: one user text message.
pub fn sampling_params(text: &str, max_tokens: u32) -> String {
    serde_json::json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens,
    })
    .to_string()
}

/// Texts of the content tools.
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
/// `test_error_handling`'s error text.
pub const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";
/// `test_reconnection`'s text.
pub const RECONNECTION_TEXT: &str = "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.";
/// The messages `test_tool_with_logging` logs, 50 ms apart.
pub const LOG_STEPS: [&str; 3] = [
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
];
/// Logger name of every log message.
pub const LOGGER: &str = "everything";

/// Resource texts.
pub const STATIC_TEXT: &str = "This is the content of the static text resource.";
/// `test://watched-resource`'s text.
pub const WATCHED_TEXT: &str = "Watched resource content";
/// The one resource template.
pub const TEMPLATE: &str = "test://template/{id}/data";

/// Completion candidates: (prompt, argument, values).
pub const PROMPT_COMPLETIONS: [(&str, &str, [&str; 3]); 2] = [
    (
        "test_prompt_with_arguments",
        "arg1",
        ["paris", "park", "party"],
    ),
    (
        "test_prompt_with_arguments",
        "arg2",
        ["red", "green", "blue"],
    ),
];
/// Candidates of the template's `id` variable.
pub const TEMPLATE_IDS: [&str; 3] = ["123", "456", "789"];

/// The fixture resources, in list order.
pub const RESOURCES: [Resource<'static>; 3] = [
    Resource {
        title: Some("Static text"),
        description: Some("A static text resource"),
        mime_type: Some("text/plain"),
        ..Resource::new("test://static-text", "static-text")
    },
    Resource {
        title: Some("Static binary"),
        description: Some("A static binary resource (a 1x1 PNG)"),
        mime_type: Some("image/png"),
        ..Resource::new("test://static-binary", "static-binary")
    },
    Resource {
        title: Some("Watched resource"),
        description: Some("A resource clients can subscribe to (it never changes)"),
        mime_type: Some("text/plain"),
        ..Resource::new("test://watched-resource", "watched-resource")
    },
];

/// The one resource template.
pub const TEMPLATES: [ResourceTemplate<'static>; 1] = [ResourceTemplate {
    uri_template: TEMPLATE,
    name: "template",
    title: Some("Templated data"),
    description: Some("JSON data for any id"),
    mime_type: Some("application/json"),
    annotations: None,
    icons: &[],
    meta: None,
}];

/// `test_prompt_with_arguments`'s arguments.
pub const ARGS: [PromptArgument<'static>; 2] = [
    PromptArgument::required("arg1", "First test argument"),
    PromptArgument::required("arg2", "Second test argument"),
];
/// `test_prompt_with_embedded_resource`'s argument.
pub const RESOURCE_ARG: [PromptArgument<'static>; 1] = [PromptArgument::required(
    "resourceUri",
    "URI of the resource to embed",
)];

/// The prompts both fixture servers list first (`everything` adds one that needs client input).
pub const BASE_PROMPTS: [Prompt<'static>; 4] = [
    Prompt::new("test_simple_prompt", "A simple prompt without arguments"),
    Prompt {
        arguments: &ARGS,
        ..Prompt::new(
            "test_prompt_with_arguments",
            "A prompt with two required arguments",
        )
    },
    Prompt {
        arguments: &RESOURCE_ARG,
        ..Prompt::new(
            "test_prompt_with_embedded_resource",
            "A prompt embedding the resource it is given",
        )
    },
    Prompt::new("test_prompt_with_image", "A prompt with an image"),
];
