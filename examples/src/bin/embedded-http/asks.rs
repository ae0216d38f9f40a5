//! The fixtures that need the client's answers while they run (legacy sessions): each
//! sends one request to the client on its POST's SSE response
//! ([`CallContext::request`]) and reports the answer, as `everything`'s do. Params and
//! reports are written into stack buffers (no heap).

use core::fmt::Write as _;

use mcp_examples::fixtures::{
    ELICIT_FORM, SEP1034_FORM, SEP1034_MESSAGE, SEP1330_FORM, SEP1330_MESSAGE,
};
use mcp_rs_core::wire::json::{JsonWriter, RawJson};
use mcp_rs_core::{Call, ClientMethod};
use mcp_rs_embedded::http::{Answer, CallContext};

use crate::handler::Buf;

/// The fixtures this module runs.
pub(crate) const ASKS: [&str; 5] = [
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_streaming_elicitation",
];

/// How long the client has to answer (checked by the session when it next handles a
/// message).
const TIMEOUT_MS: u64 = 60_000;

/// The form of `test_streaming_elicitation` (`fixtures::one_field("value", "string")`).
const VALUE_FORM: &str =
    r#"{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}"#;

/// Runs fixture `call` (one of [`ASKS`]) to its end.
pub(crate) async fn run<T: embedded_io_async::Write>(
    call: &Call<'_>,
    ctx: &mut CallContext<'_, T>,
) {
    let name = call.name();
    let args = call.args();
    let arg = |k: &str| args.get(k).and_then(|v| v.as_string());
    let mut params = [0u8; 2048];
    let mut w = JsonWriter::new(&mut params);
    let method = if name.eq_str("test_sampling") {
        // `fixtures::sampling_params(prompt, 100)`.
        w.begin_object();
        w.key("messages");
        w.begin_array();
        w.begin_object();
        w.key("role");
        w.string("user");
        w.key("content");
        w.begin_object();
        w.key("type");
        w.string("text");
        w.key("text");
        match arg("prompt") {
            Some(p) => w.string_raw_escaped(p.raw()),
            None => w.string(""),
        }
        w.end_object();
        w.end_object();
        w.end_array();
        w.key("maxTokens");
        w.u64(100);
        w.end_object();
        ClientMethod::CreateMessage
    } else {
        let (message, form) = if name.eq_str("test_elicitation") {
            (None, ELICIT_FORM)
        } else if name.eq_str("test_elicitation_sep1034_defaults") {
            (Some(SEP1034_MESSAGE), SEP1034_FORM)
        } else if name.eq_str("test_elicitation_sep1330_enums") {
            (Some(SEP1330_MESSAGE), SEP1330_FORM)
        } else {
            (
                Some("Streaming elicitation: please provide a value"),
                VALUE_FORM,
            )
        };
        w.begin_object();
        w.key("message");
        match (message, arg("message")) {
            (Some(m), _) => w.string(m),
            (None, Some(m)) => w.string_raw_escaped(m.raw()),
            (None, None) => w.string(""),
        }
        w.key("requestedSchema");
        w.raw_value(form);
        w.end_object();
        ClientMethod::Elicit
    };
    let Ok(len) = w.finish() else {
        ctx.complete(|r| {
            r.fail(format_args!("arguments too long"));
        })
        .await;
        return;
    };
    let params = core::str::from_utf8(params.get(..len).unwrap_or_default()).unwrap_or("{}");
    let mut answer = [0u8; 4096];
    let result = match ctx.request(method, params, TIMEOUT_MS, &mut answer).await {
        Ok(Answer::Result(r)) => r,
        Ok(Answer::Error { code, message }) => {
            ctx.complete(|r| {
                r.fail(format_args!("The client answered error {code}: {message}"));
            })
            .await;
            return;
        }
        Err(e) => {
            ctx.complete(|r| {
                r.fail(format_args!("No answer from the client: {e:?}"));
            })
            .await;
            return;
        }
    };
    let mut text = Buf::<4096>::new();
    let written = if name.eq_str("test_sampling") {
        let said = result
            .get("content")
            .and_then(|c| c.get("text"))
            .and_then(|t| t.as_string());
        match said {
            Some(t) => write!(text, "LLM response: {t}"),
            None => write!(text, "LLM response: {}", result.as_str()),
        }
    } else if name.eq_str("test_streaming_elicitation") {
        let value = accepted(result).and_then(|c| c.get("value")?.as_string());
        match value {
            Some(v) => write!(text, "Streaming elicitation complete: {v}"),
            None => write!(text, "Streaming elicitation declined"),
        }
    } else {
        let prefix = if name.eq_str("test_elicitation") {
            "User response"
        } else {
            "Elicitation completed"
        };
        let action = result.get("action").and_then(|a| a.as_string());
        let content = result.get("content").map_or("{}", |c| c.as_str());
        match action {
            Some(a) => write!(text, "{prefix}: action={a}, content={content}"),
            None => write!(text, "{prefix}: {}", result.as_str()),
        }
    };
    ctx.complete(|r| {
        if written.is_ok() {
            r.text(text.as_str());
        } else {
            r.fail(format_args!("The client's answer is too long to report"));
        }
    })
    .await;
}

/// The content of an accepted elicitation.
fn accepted(result: RawJson<'_>) -> Option<RawJson<'_>> {
    let action = result.get("action")?.as_string()?;
    if !action.eq_str("accept") {
        return None;
    }
    result.get("content")
}
