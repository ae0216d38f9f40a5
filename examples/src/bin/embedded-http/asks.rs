//! The fixtures that need the client's answers while they run (legacy sessions): each
//! sends one request to the client on its POST's SSE response
//! ([`CallContext::request`]) and reports the answer, as `everything`'s do. Params and
//! reports are written into stack buffers (no heap).

use core::fmt::Write as _;

use mcp_examples::fixtures::{
    ELICIT_FORM, SEP1034_FORM, SEP1034_MESSAGE, SEP1330_FORM, SEP1330_MESSAGE,
};
use mcp_rs_core::wire::json::{JsonWriter, RawJson};
use mcp_rs_core::{Call, ClientMethod, Content, Request, Role};
use mcp_rs_embedded::http::{Answer, CallContext, RequestFailed};

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

/// The rounds [`drive`] runs before giving up (a client that keeps declining).
const MAX_ROUNDS: usize = 10;

/// A range of a [`Recorder`]'s arena.
type Span = (usize, usize);

/// What one round of a fixture asked for, copied out of its step.
struct Recorder {
    arena: [u8; 4096],
    used: usize,
    /// (method, key, params) as ranges of `arena`.
    asks: [(ClientMethod, Span, Span); 3],
    n: usize,
    state: Buf<300>,
    has_state: bool,
    text: Buf<1024>,
    done: bool,
    overflow: bool,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            arena: [0; 4096],
            used: 0,
            asks: [(ClientMethod::ListRoots, (0, 0), (0, 0)); 3],
            n: 0,
            state: Buf::new(),
            has_state: false,
            text: Buf::new(),
            done: false,
            overflow: false,
        }
    }
    fn keep(&mut self, s: &str) -> Span {
        let start = self.used;
        match self.arena.get_mut(start..start + s.len()) {
            Some(dst) => {
                dst.copy_from_slice(s.as_bytes());
                self.used += s.len();
            }
            None => self.overflow = true,
        }
        (start, s.len())
    }
    fn get(&self, (start, len): Span) -> &str {
        core::str::from_utf8(self.arena.get(start..start + len).unwrap_or_default()).unwrap_or("")
    }
}

impl crate::mrtr::Out for Recorder {
    fn text(&mut self, text: core::fmt::Arguments<'_>) {
        self.done = true;
        self.overflow |= self.text.write_fmt(text).is_err();
    }
    fn ask(&mut self, state: Option<&str>, asks: &[crate::mrtr::Ask<'_>]) {
        use crate::mrtr::Ask;
        if let Some(s) = state {
            self.has_state = true;
            self.overflow |= self.state.write_str(s).is_err();
        }
        for a in asks.iter().take(self.asks.len()) {
            let key = self.keep(a.key());
            let (method, params) = match *a {
                Ask::Elicit { message, form, .. } => {
                    let mut buf = [0u8; 2048];
                    let mut w = JsonWriter::new(&mut buf);
                    w.begin_object();
                    w.key("message");
                    w.string(message);
                    w.key("requestedSchema");
                    w.raw_value(form);
                    w.end_object();
                    let n = w.finish().unwrap_or(0);
                    let p = core::str::from_utf8(&buf[..n]).unwrap_or("{}");
                    (ClientMethod::Elicit, self.keep(p))
                }
                Ask::Sample { params, .. } => (ClientMethod::CreateMessage, self.keep(params)),
                Ask::Roots { .. } => (ClientMethod::ListRoots, self.keep("{}")),
            };
            if let Some(slot) = self.asks.get_mut(self.n) {
                *slot = (method, key, params);
                self.n += 1;
            }
        }
    }
}

/// Runs an `input_required` fixture (or [`INPUT_PROMPT`](crate::mrtr::INPUT_PROMPT), a
/// deferred `prompts/get`) for a legacy client, as `everything`'s `input::drive`: every
/// round's requests go out one at a time with [`CallContext::request`] and their answers
/// feed the next round; the last round's text completes the tool call or the prompt.
pub(crate) async fn drive<T: embedded_io_async::Write>(
    call: &Call<'_>,
    ctx: &mut CallContext<'_, T>,
) {
    let (caps, args) = match call.request {
        Request::Tool(t) => (t.client_caps(), Some(call.args())),
        Request::Prompt(p) => (p.client_caps(), None),
        _ => return,
    };
    let prompt = args.is_none();
    let mut responses = [0u8; 4096];
    let mut responses_len = 0;
    let mut state = Buf::<300>::new();
    let mut has_state = false;
    let mut why = Buf::<512>::new();
    for _ in 0..MAX_ROUNDS {
        let mut rec = Recorder::new();
        {
            let answers = responses.get(..responses_len).unwrap_or_default();
            let input = crate::mrtr::Input {
                responses: mcp_rs_core::wire::json::parse(answers, Default::default()).ok(),
                state: has_state.then(|| state.as_str()),
                caps,
            };
            crate::mrtr::step_with(call.name(), args, &input, &mut rec);
        }
        if rec.overflow {
            let _ = why.write_str("The fixture's round is too large");
            return finish(ctx, prompt, Err(why.as_str())).await;
        }
        if rec.done {
            return finish(ctx, prompt, Ok(rec.text.as_str())).await;
        }
        state = Buf::new();
        has_state = rec.has_state;
        let _ = state.write_str(rec.state.as_str());
        let mut w = JsonWriter::new(&mut responses);
        w.begin_object();
        for &(method, key, params) in rec.asks.iter().take(rec.n) {
            let mut answer = [0u8; 2048];
            let said = ctx
                .request(method, rec.get(params), TIMEOUT_MS, &mut answer)
                .await;
            let m = method.as_str();
            let failed = match said {
                Ok(Answer::Result(r)) => {
                    w.key(rec.get(key));
                    w.raw_value(r.as_str());
                    continue;
                }
                Ok(Answer::Error { message, .. }) => {
                    write!(why, "The client refused {m}: {message}")
                }
                Err(RequestFailed::Refused(mcp_rs_core::CallError::ClientCapability)) => {
                    write!(
                        why,
                        "{m} needs a client capability the client did not declare"
                    )
                }
                Err(e) => write!(why, "{m} failed: {e:?}"),
            };
            if failed.is_err() {
                why = Buf::new();
                let _ = why.write_str("The client's answer is too long to report");
            }
            return finish(ctx, prompt, Err(why.as_str())).await;
        }
        w.end_object();
        responses_len = w.finish().unwrap_or(0);
    }
    let _ = write!(why, "no usable answer after {MAX_ROUNDS} rounds");
    finish(ctx, prompt, Err(why.as_str())).await;
}

/// Completes [`drive`]'s request: `Ok(text)` as the tool's text or the prompt's user
/// message, `Err(why)` as the tool's error result or the prompt's -32603 error.
async fn finish<T: embedded_io_async::Write>(
    ctx: &mut CallContext<'_, T>,
    prompt: bool,
    outcome: Result<&str, &str>,
) {
    if prompt {
        ctx.complete_prompt(|r| match outcome {
            Ok(text) => {
                r.message(Role::User, &Content::Text(text));
            }
            Err(why) => r.fail(&why),
        })
        .await;
    } else {
        ctx.complete(|r| match outcome {
            Ok(text) => {
                r.text(text);
            }
            Err(why) => {
                r.fail(format_args!("{why}"));
            }
        })
        .await;
    }
}
