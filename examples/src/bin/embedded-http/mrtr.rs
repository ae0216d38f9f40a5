//! The 2026-07-28 fixtures that need client input (`input_required` results, the core
//! sealing `requestState`): `everything`'s `input::step` without a heap. Each is answered
//! inline from (arguments, the retry's `inputResponses`, the verified state, the client's
//! capabilities), reading the answers with the core's JSON scanner and writing params,
//! states and texts into stack buffers.

use core::fmt::{self, Write as _};

use mcp_rs_core::model::input::{InputContext, InputRequests};
use mcp_rs_core::model::prompts::PromptResult;
use mcp_rs_core::wire::json::{JsonStr, JsonWriter, RawJson};
use mcp_rs_core::{ClientCaps, Content, Role, ToolResult};

use mcp_examples::fixtures::{
    ELICIT_FORM, SEP1034_FORM, SEP1034_MESSAGE, SEP1330_FORM, SEP1330_MESSAGE,
};

use crate::handler::Buf;

/// The prompt that needs input.
pub(crate) const INPUT_PROMPT: &str = "test_input_required_result_prompt";

/// One request for client input.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ask<'a> {
    Elicit {
        key: &'a str,
        message: &'a str,
        form: &'a str,
    },
    /// `params`: a `sampling/createMessage` params object.
    Sample {
        key: &'a str,
        params: &'a str,
    },
    Roots {
        key: &'a str,
    },
}

impl Ask<'_> {
    /// The key its answer goes under.
    pub(crate) fn key(&self) -> &str {
        match *self {
            Ask::Elicit { key, .. } | Ask::Sample { key, .. } | Ask::Roots { key } => key,
        }
    }

    fn write(&self, r: &mut InputRequests<'_, '_>) {
        match *self {
            Ask::Elicit { key, message, form } => r.elicit(key, message, form),
            Ask::Sample { key, params } => r.sample(key, params),
            Ask::Roots { key } => r.list_roots(key),
        };
    }
}

/// Where a fixture's outcome goes: a tool's result or a prompt's.
pub(crate) trait Out {
    fn text(&mut self, text: fmt::Arguments<'_>);
    fn ask(&mut self, state: Option<&str>, asks: &[Ask<'_>]);
}

impl Out for ToolResult<'_, '_> {
    fn text(&mut self, text: fmt::Arguments<'_>) {
        self.text_fmt(text);
    }
    fn ask(&mut self, state: Option<&str>, asks: &[Ask<'_>]) {
        self.input_required(state, |r| asks.iter().for_each(|a| a.write(r)));
    }
}

impl Out for PromptResult<'_, '_> {
    fn text(&mut self, text: fmt::Arguments<'_>) {
        let mut t = Buf::<1024>::new();
        if t.write_fmt(text).is_err() {
            self.fail(&"the prompt's text is too long");
            return;
        }
        self.message(Role::User, &Content::Text(t.as_str()));
    }
    fn ask(&mut self, state: Option<&str>, asks: &[Ask<'_>]) {
        self.input_required(state, |r| asks.iter().for_each(|a| a.write(r)));
    }
}

/// A form with one required field `name` of `ty` (`fixtures::one_field`).
macro_rules! one_field {
    ($name:literal, $ty:literal) => {
        concat!(
            r#"{"type":"object","properties":{""#,
            $name,
            r#"":{"type":""#,
            $ty,
            r#""}},"required":[""#,
            $name,
            r#""]}"#
        )
    };
}

const NAME_FORM: &str = one_field!("name", "string");
const OK_FORM: &str = one_field!("ok", "boolean");
const COLOR_FORM: &str = one_field!("color", "string");
const VALUE_FORM: &str = one_field!("value", "string");
const CONTEXT_FORM: &str = one_field!("context", "string");

/// `fixtures::sampling_params(text, max_tokens)` into `buf`.
fn sampling<'b>(buf: &'b mut [u8], text: &str, max_tokens: u64) -> &'b str {
    let mut w = JsonWriter::new(buf);
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
    w.string(text);
    w.end_object();
    w.end_object();
    w.end_array();
    w.key("maxTokens");
    w.u64(max_tokens);
    w.end_object();
    let n = w.finish().unwrap_or(0);
    core::str::from_utf8(buf.get(..n).unwrap_or_default()).unwrap_or("{}")
}

/// What the client answered so far, and the state this fixture chose last round.
pub(crate) struct Input<'i> {
    pub(crate) responses: Option<RawJson<'i>>,
    pub(crate) state: Option<&'i str>,
    pub(crate) caps: ClientCaps,
}

impl<'i> Input<'i> {
    fn response(&self, key: &str) -> Option<RawJson<'i>> {
        self.responses?.get(key)
    }
    /// An `ElicitResult`'s action and content (absent or null: none).
    fn elicited(&self, key: &str) -> Option<(JsonStr<'i>, Option<RawJson<'i>>)> {
        let r = self.response(key)?;
        let action = r.get("action")?.as_string()?;
        match r.get("content") {
            Some(c) if c.is_null() => Some((action, None)),
            Some(c) if c.members().is_none() => None,
            c => Some((action, c)),
        }
    }
    fn accepted(&self, key: &str, field: &str) -> Option<RawJson<'i>> {
        match self.elicited(key)? {
            (a, Some(c)) if a.eq_str("accept") => c.get(field),
            _ => None,
        }
    }
    fn accepted_str(&self, key: &str, field: &str) -> Option<JsonStr<'i>> {
        self.accepted(key, field)?.as_string()
    }
    fn sampled(&self, key: &str) -> Option<JsonStr<'i>> {
        self.response(key)?.get("content")?.get("text")?.as_string()
    }
    /// The `roots` array of a `ListRootsResult`, each with a string `uri`.
    fn roots(&self, key: &str) -> Option<RawJson<'i>> {
        let roots = self.response(key)?.get("roots")?;
        let mut all = roots.elements()?;
        all.all(|r| r.get("uri").and_then(|u| u.as_string()).is_some())
            .then_some(roots)
    }
    fn state_is(&self, tag: &str) -> bool {
        self.state == Some(tag)
    }
}

/// The roots' URIs, comma-separated.
struct Uris<'i>(RawJson<'i>);

impl fmt::Display for Uris<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.elements().into_iter().flatten().enumerate() {
            let uri = r.get("uri").and_then(|u| u.as_string());
            if let Some(uri) = uri {
                write!(f, "{}{uri}", if i > 0 { ", " } else { "" })?;
            }
        }
        Ok(())
    }
}

/// The fixture `name` (a tool or [`INPUT_PROMPT`]) of a 2026-07-28 request: a result or
/// `input_required`. `false` when `name` is not one of them.
pub(crate) fn step(
    name: JsonStr<'_>,
    args: Option<RawJson<'_>>,
    input: &InputContext<'_>,
    caps: ClientCaps,
    out: &mut dyn Out,
) -> bool {
    let input = Input {
        responses: input.responses(),
        state: input.state(),
        caps,
    };
    step_with(name, args, &input, out)
}

/// [`step`] with the answers gathered by the caller (a legacy call's driver).
pub(crate) fn step_with(
    name: JsonStr<'_>,
    args: Option<RawJson<'_>>,
    input: &Input<'_>,
    out: &mut dyn Out,
) -> bool {
    let name_request = Ask::Elicit {
        key: "user_name",
        message: "What is your name?",
        form: NAME_FORM,
    };
    let mut params = [0u8; 1024];
    let mut arg_buf = [0u8; 512];
    let elicitation_report = |out: &mut dyn Out, prefix: &str| match input.elicited("elicitation") {
        Some((action, content)) => {
            let content = content.map_or("{}", |c| c.as_str());
            out.text(format_args!("{prefix}: action={action}, content={content}"));
            true
        }
        None => false,
    };
    if name.eq_str("test_sampling") {
        match input.sampled("sampling") {
            Some(t) => out.text(format_args!("LLM response: {t}")),
            None => {
                let params = sampling(&mut params, arg(args, "prompt", &mut arg_buf), 100);
                out.ask(
                    None,
                    &[Ask::Sample {
                        key: "sampling",
                        params,
                    }],
                );
            }
        }
    } else if name.eq_str("test_elicitation") {
        if !elicitation_report(out, "User response") {
            let message = arg(args, "message", &mut arg_buf);
            let (key, form) = ("elicitation", ELICIT_FORM);
            out.ask(None, &[Ask::Elicit { key, message, form }]);
        }
    } else if name.eq_str("test_elicitation_sep1034_defaults")
        || name.eq_str("test_elicitation_sep1330_enums")
    {
        if !elicitation_report(out, "Elicitation completed") {
            let (message, form) = if name.eq_str("test_elicitation_sep1034_defaults") {
                (SEP1034_MESSAGE, SEP1034_FORM)
            } else {
                (SEP1330_MESSAGE, SEP1330_FORM)
            };
            let key = "elicitation";
            out.ask(None, &[Ask::Elicit { key, message, form }]);
        }
    } else if name.eq_str("test_streaming_elicitation") {
        match input.accepted_str("user_input", "value") {
            Some(v) => out.text(format_args!("Streaming elicitation complete: {v}")),
            None => out.ask(
                None,
                &[Ask::Elicit {
                    key: "user_input",
                    message: "Streaming elicitation: please provide a value",
                    form: VALUE_FORM,
                }],
            ),
        }
    } else if name.eq_str("test_input_required_result_elicitation") {
        match input.accepted_str("user_name", "name") {
            Some(n) => out.text(format_args!("Hello, {n}!")),
            None => out.ask(None, &[name_request]),
        }
    } else if name.eq_str("test_input_required_result_sampling") {
        match input.sampled("capital_question") {
            Some(t) => out.text(format_args!("Sampling result: {t}")),
            None => {
                let params = sampling(&mut params, "What is the capital of France?", 100);
                let key = "capital_question";
                out.ask(None, &[Ask::Sample { key, params }]);
            }
        }
    } else if name.eq_str("test_input_required_result_list_roots") {
        match input.roots("client_roots") {
            Some(roots) => {
                let n = roots.elements().map_or(0, Iterator::count);
                if n == 0 {
                    out.text(format_args!("Found 0 root(s)"));
                } else {
                    out.text(format_args!("Found {n} root(s): {}", Uris(roots)));
                }
            }
            None => out.ask(
                None,
                &[Ask::Roots {
                    key: "client_roots",
                }],
            ),
        }
    } else if name.eq_str("test_input_required_result_request_state") {
        let confirmed = input.accepted("confirm", "ok").and_then(|v| v.as_bool()) == Some(true);
        if input.state_is("confirm") && confirmed {
            out.text(format_args!("state-ok: requestState validated"));
        } else {
            let (key, message, form) = ("confirm", "Please confirm", OK_FORM);
            out.ask(Some("confirm"), &[Ask::Elicit { key, message, form }]);
        }
    } else if name.eq_str("test_input_required_result_multiple_inputs") {
        let name = input.accepted_str("user_name", "name");
        let greeting = input.sampled("greeting");
        let roots = input.roots("client_roots");
        let retry = input.state_is("multiple");
        match (retry, name, greeting, roots) {
            (true, Some(n), Some(g), Some(r)) => {
                let count = r.elements().map_or(0, Iterator::count);
                out.text(format_args!("Name: {n}; Greeting: {g}; Roots: {count}"));
            }
            _ => {
                // Ask again for what is missing (everything on a first request).
                let mut asks = [name_request; 3];
                let mut n = 0;
                if !retry || name.is_none() {
                    n += 1;
                }
                if !retry || greeting.is_none() {
                    let params = sampling(&mut params, "Generate a greeting", 50);
                    asks[n] = Ask::Sample {
                        key: "greeting",
                        params,
                    };
                    n += 1;
                }
                if !retry || roots.is_none() {
                    asks[n] = Ask::Roots {
                        key: "client_roots",
                    };
                    n += 1;
                }
                out.ask(Some("multiple"), asks.get(..n).unwrap_or_default());
            }
        }
    } else if name.eq_str("test_input_required_result_multi_round") {
        let step1 = Ask::Elicit {
            key: "step1",
            message: "Step 1: What is your name?",
            form: NAME_FORM,
        };
        let step2 = Ask::Elicit {
            key: "step2",
            message: "Step 2: What is your favorite color?",
            form: COLOR_FORM,
        };
        let state = input.state.unwrap_or("");
        let mut name_buf = [0u8; 128];
        if state == "round1" {
            let mut name = [0u8; 128];
            match input
                .accepted_str("step1", "name")
                .and_then(|n| n.decode_into(&mut name).ok())
            {
                Some(n) => {
                    let mut next = Buf::<300>::new();
                    let hexed = write!(next, "round2-").is_ok()
                        && n.bytes().all(|b| write!(next, "{b:02x}").is_ok());
                    if hexed {
                        out.ask(Some(next.as_str()), &[step2]);
                    } else {
                        out.text(format_args!("The name is too long"));
                    }
                }
                None => out.ask(Some("round1"), &[step1]),
            }
        } else if let Some(n) = state
            .strip_prefix("round2-")
            .and_then(|h| unhex(h, &mut name_buf))
        {
            match input.accepted_str("step2", "color") {
                Some(c) => out.text(format_args!("Multi-round complete for {n} who likes {c}")),
                None => out.ask(Some(state), &[step2]),
            }
        } else {
            out.ask(Some("round1"), &[step1]);
        }
    } else if name.eq_str("test_input_required_result_tampered_state") {
        if input.state_is("tamper-test") && input.elicited("confirm").is_some() {
            out.text(format_args!("integrity-ok: state verified"));
        } else {
            let (key, message, form) = ("confirm", "Please confirm", OK_FORM);
            out.ask(Some("tamper-test"), &[Ask::Elicit { key, message, form }]);
        }
    } else if name.eq_str("test_input_required_result_capabilities") {
        let mut asks = [Ask::Roots { key: "" }; 2];
        let mut n = 0;
        if input.caps.contains(ClientCaps::ELICITATION) {
            asks[n] = Ask::Elicit {
                key: "elicit_input",
                message: "Elicitation input",
                form: VALUE_FORM,
            };
            n += 1;
        }
        if input.caps.contains(ClientCaps::SAMPLING) {
            let params = sampling(&mut params, "Sample request", 50);
            asks[n] = Ask::Sample {
                key: "sample_input",
                params,
            };
            n += 1;
        }
        let answered = input.responses.and_then(|r| r.members()).map(|m| {
            // The keys, sorted (at most 8 reported).
            let mut keys: [&str; 8] = [""; 8];
            let mut k = 0;
            for (key, _) in m {
                if let Some(slot) = keys.get_mut(k) {
                    *slot = key.raw();
                    k += 1;
                }
            }
            (keys, k)
        });
        match answered {
            _ if n == 0 => out.text(format_args!("No supported capabilities declared")),
            Some((mut keys, k)) if k > 0 => {
                let keys = keys.get_mut(..k).unwrap_or_default();
                keys.sort_unstable();
                out.text(format_args!("capabilities-ok: received {}", Joined(keys)));
            }
            _ => out.ask(Some("caps"), asks.get(..n).unwrap_or_default()),
        }
    } else if name.eq_str(INPUT_PROMPT) {
        match input.accepted_str("user_context", "context") {
            Some(c) => out.text(format_args!("Prompt with context: {c}")),
            None => out.ask(
                None,
                &[Ask::Elicit {
                    key: "user_context",
                    message: "What context should the prompt use?",
                    form: CONTEXT_FORM,
                }],
            ),
        }
    } else {
        return false;
    }
    true
}

/// A string argument, decoded into `buf` (empty when absent or too long).
fn arg<'b>(args: Option<RawJson<'_>>, key: &str, buf: &'b mut [u8]) -> &'b str {
    match args.and_then(|a| a.get(key)).and_then(|v| v.as_string()) {
        Some(s) => s.decode_into(buf).unwrap_or(""),
        None => "",
    }
}

/// Keys joined with commas.
struct Joined<'a>(&'a [&'a str]);

impl fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.0.iter().enumerate() {
            write!(f, "{}{k}", if i > 0 { "," } else { "" })?;
        }
        Ok(())
    }
}

/// Hex digits back to text, into `buf`.
fn unhex<'b>(hex: &str, buf: &'b mut [u8]) -> Option<&'b str> {
    let bytes = hex.as_bytes();
    if bytes.len() % 2 != 0 || bytes.len() / 2 > buf.len() {
        return None;
    }
    for (i, pair) in bytes.chunks(2).enumerate() {
        let s = core::str::from_utf8(pair).ok()?;
        *buf.get_mut(i)? = u8::from_str_radix(s, 16).ok()?;
    }
    core::str::from_utf8(buf.get(..bytes.len() / 2)?).ok()
}
