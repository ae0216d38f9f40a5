//! Fixtures that need input from the client, written once for both protocol eras.
//!
//! Each one is a pure function of (arguments, answers so far, state, client capabilities)
//! that either finishes or asks for more ([`step`]). The eras only differ in who loops:
//!
//! | era | asks by | loop |
//! |---|---|---|
//! | 2026-07-28 | an `input_required` result (the core seals the state) | the client retries with `inputResponses` and the state |
//! | legacy | server-to-client requests, one at a time, from a deferred call ([`drive`]) | this process, feeding the answers back into [`step`] as a retry would |
//!
//! State payloads are plain ASCII tokens (the core's seal accepts no quotes, slashes or
//! `=`): names travel hex-encoded.

use mcp_rs_core::model::common::ClientCaps;
use mcp_rs_core::model::input::{InputContext, InputRequests};
use mcp_rs_core::ClientMethod;
use mcp_rs_tokio::{Context, RequestError};
use serde_json::{Map, Value};

use crate::fixtures::{
    one_field, sampling_params, ELICIT_FORM, SEP1034_FORM, SEP1034_MESSAGE, SEP1330_FORM,
    SEP1330_MESSAGE,
};

/// One request for client input.
#[derive(Clone, Debug)]
pub(crate) enum Ask {
    /// `elicitation/create` (form mode).
    Elicit {
        key: &'static str,
        message: String,
        form: String,
    },
    /// `sampling/createMessage` with these params.
    Sample { key: &'static str, params: String },
    /// `roots/list`.
    Roots { key: &'static str },
}

impl Ask {
    fn elicit(key: &'static str, message: &str, form: &str) -> Ask {
        Ask::Elicit {
            key,
            message: message.to_owned(),
            form: form.to_owned(),
        }
    }
    fn sample(key: &'static str, text: &str, max_tokens: u32) -> Ask {
        Ask::Sample {
            key,
            params: sampling_params(text, max_tokens),
        }
    }
    fn key(&self) -> &'static str {
        match self {
            Ask::Elicit { key, .. } | Ask::Sample { key, .. } | Ask::Roots { key } => key,
        }
    }
    /// Adds this request to an `input_required` result.
    pub(crate) fn write(&self, r: &mut InputRequests<'_, '_>) {
        match self {
            Ask::Elicit { key, message, form } => r.elicit(key, message, form),
            Ask::Sample { key, params } => r.sample(key, params),
            Ask::Roots { key } => r.list_roots(key),
        };
    }
    /// The server-to-client request (legacy era).
    fn request(&self) -> (ClientMethod, Value) {
        match self {
            Ask::Elicit { message, form, .. } => (
                ClientMethod::Elicit,
                serde_json::json!({
                    "message": message,
                    "requestedSchema": serde_json::from_str::<Value>(form).unwrap_or_default(),
                }),
            ),
            Ask::Sample { params, .. } => (
                ClientMethod::CreateMessage,
                serde_json::from_str(params).unwrap_or_default(),
            ),
            Ask::Roots { .. } => (ClientMethod::ListRoots, serde_json::json!({})),
        }
    }
}

/// How a fixture ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// A text result.
    Text(String),
    /// An `isError` result with this text.
    Error(String),
}

/// What a fixture does next.
#[derive(Debug)]
pub(crate) enum Step {
    Done(Outcome),
    /// Ask for these, carrying `state` (sealed by the core in 2026-07-28) to the retry.
    Ask(Vec<Ask>, Option<String>),
}

/// The answers a fixture has: this round's responses, the state it chose last round (verified
/// by the core) and the client's capabilities.
#[derive(Debug, Default)]
pub(crate) struct Input {
    pub responses: Map<String, Value>,
    pub state: Option<String>,
    pub caps: ClientCaps,
}

impl Input {
    /// A 2026-07-28 request's input, as the core checked it.
    pub(crate) fn from_core(input: &InputContext<'_>, caps: ClientCaps) -> Input {
        let responses = input
            .responses()
            .and_then(|r| serde_json::from_str(r.as_str()).ok())
            .unwrap_or_default();
        Input {
            responses,
            state: input.state().map(str::to_owned),
            caps,
        }
    }
    fn has(&self, cap: ClientCaps) -> bool {
        self.caps.contains(cap)
    }
    /// An `ElicitResult`: its action and content (`{}` when absent).
    fn elicited(&self, key: &str) -> Option<(&str, &Map<String, Value>)> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        let r = self.responses.get(key)?.as_object()?;
        let action = r.get("action")?.as_str()?;
        let content = match r.get("content") {
            Some(Value::Object(c)) => c,
            None | Some(Value::Null) => EMPTY.get_or_init(Map::new),
            Some(_) => return None,
        };
        Some((action, content))
    }
    /// A string field of an accepted elicitation.
    fn accepted_str(&self, key: &str, field: &str) -> Option<&str> {
        match self.elicited(key)? {
            ("accept", content) => content.get(field)?.as_str(),
            _ => None,
        }
    }
    /// The text of a `CreateMessageResult`.
    fn sampled(&self, key: &str) -> Option<&str> {
        let r = self.responses.get(key)?.as_object()?;
        r.get("content")?.get("text")?.as_str()
    }
    /// The root URIs of a `ListRootsResult`.
    fn roots(&self, key: &str) -> Option<Vec<&str>> {
        let roots = self.responses.get(key)?.get("roots")?.as_array()?;
        roots.iter().map(|r| r.get("uri")?.as_str()).collect()
    }
    /// Whether the state this fixture chose last round says `tag`.
    fn state_is(&self, tag: &str) -> bool {
        self.state.as_deref() == Some(tag)
    }
}

fn text(t: impl Into<String>) -> Step {
    Step::Done(Outcome::Text(t.into()))
}

fn ask(asks: Vec<Ask>, state: Option<&str>) -> Step {
    Step::Ask(asks, state.map(str::to_owned))
}

fn elicitation_report(prefix: &str, action: &str, content: &Map<String, Value>) -> Step {
    let content = Value::Object(content.clone());
    text(format!("{prefix}: action={action}, content={content}"))
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<String> {
    let bytes: Option<Vec<u8>> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// The prompt that needs input.
pub(crate) const INPUT_PROMPT: &str = "test_input_required_result_prompt";

/// One step of fixture `name`.
pub(crate) fn step(name: &str, args: &Value, input: &Input) -> Step {
    let arg = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let name_request = || {
        Ask::elicit(
            "user_name",
            "What is your name?",
            &one_field("name", "string"),
        )
    };
    match name {
        "test_sampling" => match input.sampled("sampling") {
            Some(t) => text(format!("LLM response: {t}")),
            None => ask(vec![Ask::sample("sampling", &arg("prompt"), 100)], None),
        },
        "test_elicitation" => match input.elicited("elicitation") {
            Some((action, content)) => elicitation_report("User response", action, content),
            None => ask(
                vec![Ask::elicit("elicitation", &arg("message"), ELICIT_FORM)],
                None,
            ),
        },
        "test_elicitation_sep1034_defaults" | "test_elicitation_sep1330_enums" => {
            match input.elicited("elicitation") {
                Some((action, content)) => {
                    elicitation_report("Elicitation completed", action, content)
                }
                None if name.contains("1034") => ask(
                    vec![Ask::elicit("elicitation", SEP1034_MESSAGE, SEP1034_FORM)],
                    None,
                ),
                None => ask(
                    vec![Ask::elicit("elicitation", SEP1330_MESSAGE, SEP1330_FORM)],
                    None,
                ),
            }
        }
        "test_streaming_elicitation" => match input.accepted_str("user_input", "value") {
            Some(v) => text(format!("Streaming elicitation complete: {v}")),
            None => ask(
                vec![Ask::elicit(
                    "user_input",
                    "Streaming elicitation: please provide a value",
                    &one_field("value", "string"),
                )],
                None,
            ),
        },
        "test_input_required_result_elicitation" => match input.accepted_str("user_name", "name") {
            Some(n) => text(format!("Hello, {n}!")),
            None => ask(vec![name_request()], None),
        },
        "test_input_required_result_sampling" => match input.sampled("capital_question") {
            Some(t) => text(format!("Sampling result: {t}")),
            None => ask(
                vec![Ask::sample(
                    "capital_question",
                    "What is the capital of France?",
                    100,
                )],
                None,
            ),
        },
        "test_input_required_result_list_roots" => match input.roots("client_roots") {
            Some(roots) if roots.is_empty() => text("Found 0 root(s)"),
            Some(roots) => text(format!(
                "Found {} root(s): {}",
                roots.len(),
                roots.join(", ")
            )),
            None => ask(
                vec![Ask::Roots {
                    key: "client_roots",
                }],
                None,
            ),
        },
        "test_input_required_result_request_state" => {
            let confirmed = matches!(
                input.elicited("confirm"),
                Some(("accept", c)) if c.get("ok") == Some(&Value::Bool(true))
            );
            if input.state_is("confirm") && confirmed {
                text("state-ok: requestState validated")
            } else {
                let form = one_field("ok", "boolean");
                ask(
                    vec![Ask::elicit("confirm", "Please confirm", &form)],
                    Some("confirm"),
                )
            }
        }
        "test_input_required_result_multiple_inputs" => {
            let name = input.accepted_str("user_name", "name");
            let greeting = input.sampled("greeting");
            let roots = input.roots("client_roots");
            match (input.state_is("multiple"), name, greeting, &roots) {
                (true, Some(n), Some(g), Some(r)) => {
                    text(format!("Name: {n}; Greeting: {g}; Roots: {}", r.len()))
                }
                _ => {
                    // Ask again for what is missing (everything on a first request).
                    let retry = input.state_is("multiple");
                    let mut asks = Vec::new();
                    if !retry || name.is_none() {
                        asks.push(name_request());
                    }
                    if !retry || greeting.is_none() {
                        asks.push(Ask::sample("greeting", "Generate a greeting", 50));
                    }
                    if !retry || roots.is_none() {
                        asks.push(Ask::Roots {
                            key: "client_roots",
                        });
                    }
                    ask(asks, Some("multiple"))
                }
            }
        }
        "test_input_required_result_multi_round" => {
            let step1 = || {
                let form = one_field("name", "string");
                ask(
                    vec![Ask::elicit("step1", "Step 1: What is your name?", &form)],
                    Some("round1"),
                )
            };
            let state = input.state.as_deref().unwrap_or("");
            if state == "round1" {
                match input.accepted_str("step1", "name") {
                    Some(n) => {
                        let form = one_field("color", "string");
                        let q = "Step 2: What is your favorite color?";
                        let next = format!("round2-{}", hex(n));
                        ask(vec![Ask::elicit("step2", q, &form)], Some(&next))
                    }
                    None => step1(),
                }
            } else if let Some(n) = state.strip_prefix("round2-").and_then(unhex) {
                match input.accepted_str("step2", "color") {
                    Some(c) => text(format!("Multi-round complete for {n} who likes {c}")),
                    None => {
                        let form = one_field("color", "string");
                        let q = "Step 2: What is your favorite color?";
                        ask(vec![Ask::elicit("step2", q, &form)], Some(state))
                    }
                }
            } else {
                step1()
            }
        }
        "test_input_required_result_tampered_state" => {
            if input.state_is("tamper-test") && input.elicited("confirm").is_some() {
                text("integrity-ok: state verified")
            } else {
                let form = one_field("ok", "boolean");
                ask(
                    vec![Ask::elicit("confirm", "Please confirm", &form)],
                    Some("tamper-test"),
                )
            }
        }
        "test_input_required_result_capabilities" => {
            let mut asks = Vec::new();
            if input.has(ClientCaps::ELICITATION) {
                asks.push(Ask::elicit(
                    "elicit_input",
                    "Elicitation input",
                    &one_field("value", "string"),
                ));
            }
            if input.has(ClientCaps::SAMPLING) {
                asks.push(Ask::sample("sample_input", "Sample request", 50));
            }
            if asks.is_empty() {
                text("No supported capabilities declared")
            } else if !input.responses.is_empty() {
                let mut keys: Vec<&str> = input.responses.keys().map(String::as_str).collect();
                keys.sort_unstable();
                text(format!("capabilities-ok: received {}", keys.join(",")))
            } else {
                ask(asks, Some("caps"))
            }
        }
        INPUT_PROMPT => match input.accepted_str("user_context", "context") {
            Some(c) => text(format!("Prompt with context: {c}")),
            None => ask(
                vec![Ask::elicit(
                    "user_context",
                    "What context should the prompt use?",
                    &one_field("context", "string"),
                )],
                None,
            ),
        },
        _ => Step::Done(Outcome::Error(format!("no interactive fixture {name}"))),
    }
}

/// Rounds [`drive`] runs before giving up (a client that keeps declining).
const MAX_ROUNDS: usize = 10;

/// Runs fixture `name` against a legacy client: every round's requests go out as
/// server-to-client requests, one at a time, and their answers feed the next round.
pub(crate) async fn drive(name: &str, args: &Value, ctx: &Context) -> Outcome {
    let mut input = Input {
        caps: ctx.client_caps(),
        ..Input::default()
    };
    for _ in 0..MAX_ROUNDS {
        let (asks, state) = match step(name, args, &input) {
            Step::Done(outcome) => return outcome,
            Step::Ask(asks, state) => (asks, state),
        };
        input.responses.clear();
        input.state = state;
        for a in &asks {
            let (method, params) = a.request();
            match ctx.request(method, params).await {
                Ok(answer) => {
                    input.responses.insert(a.key().to_owned(), answer);
                }
                Err(e) => return Outcome::Error(refusal(method, e)),
            }
        }
    }
    Outcome::Error(format!(
        "{name}: no usable answer after {MAX_ROUNDS} rounds"
    ))
}

/// The tool error for a request the client did not answer.
fn refusal(method: ClientMethod, e: RequestError) -> String {
    let method = method.as_str();
    match e {
        RequestError::Client { message, .. } => {
            format!("The client refused {method}: {message}")
        }
        RequestError::Refused(mcp_rs_core::CallError::ClientCapability) => {
            format!("{method} needs a client capability the client did not declare")
        }
        other => format!("{method} failed: {other}"),
    }
}
