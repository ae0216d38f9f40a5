//! The `client` target's input: a client configuration and a sequence of operations, each
//! an application command or something the server sends. Server frames are rendered from
//! small pools of realistic and broken shapes, so most of them reach the client's logic
//! rather than its JSON scanner.

use arbitrary::Arbitrary;

/// One run.
#[derive(Arbitrary, Debug, Clone)]
pub struct Input {
    /// The configuration.
    pub cfg: Cfg,
    /// What happens, in order.
    pub ops: Vec<Op>,
}

/// The client's configuration and buffer.
#[derive(Arbitrary, Debug, Clone)]
pub struct Cfg {
    /// Request slots (`% 6`: none up to 5).
    pub slots: u8,
    /// `Mode::Legacy` (else `Mode::Auto`, discover first).
    pub legacy: bool,
    /// Declared capabilities (`% 8`: sampling, elicitation, roots bits).
    pub caps: u8,
    /// Default request timeout (ms).
    pub timeout: u16,
    /// Max depth of a received frame (`% 40`).
    pub depth: u8,
    /// The output buffer's length (`% 1024`, plus 8): small ones make writes fail.
    pub out: u16,
}

/// One step.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    /// `connect`.
    Connect,
    /// `send` of a request.
    Send {
        /// What.
        request: Req,
        /// Ask for progress.
        progress: bool,
        /// A timeout of its own.
        timeout: Option<u16>,
        /// A 2026-07-28 log level.
        level: bool,
    },
    /// The server answers one of the ids the client used (or another id).
    Answer {
        /// Which id: an index into the ids the client sent (any, answered or not).
        pick: u8,
        /// How the id is written.
        id: IdForm,
        /// The answer.
        body: Body,
    },
    /// The server answers the handshake request in flight.
    Handshake(HandshakeBody),
    /// A notification from the server.
    Notify(Note),
    /// A request from the server.
    ServerRequest {
        /// Which method.
        method: SMethod,
        /// Its id.
        id: SId,
    },
    /// Any bytes as a frame.
    Raw(Vec<u8>),
    /// A batch (JSON array) of answers.
    Batch(Vec<(u8, Body)>),
    /// Time passes (ms), then `handle_timeout`.
    Advance(u16),
    /// `cancel` of a request the client sent (an index into them).
    Cancel(u8),
    /// `retry` of a request waiting for input.
    Retry {
        /// Which request (an index into those sent).
        pick: u8,
        /// Send the same request (else one with another target: refused).
        same: bool,
        /// `inputResponses` text (an index into a pool, some invalid).
        answers: u8,
        /// Echo a `requestState`.
        state: bool,
    },
    /// `respond` (or `respond_error`) to a server request the client reported.
    Respond {
        /// Which (an index into those reported).
        pick: u8,
        /// Answer with an error.
        error: bool,
    },
}

/// A request the application sends.
#[derive(Arbitrary, Debug, Clone)]
pub enum Req {
    ListTools(Option<Text>),
    CallTool(Text, Option<u8>),
    ListPrompts(Option<Text>),
    GetPrompt(Text, Option<u8>),
    ListResources(Option<Text>),
    ListTemplates(Option<Text>),
    Read(Text),
    Subscribe(Text),
    Unsubscribe(Text),
    Complete {
        prompt: bool,
        target: Text,
        argument: Text,
        value: Text,
        context: Option<u8>,
    },
    Ping,
    SetLevel(u8),
}

/// A string: from a pool, or any.
#[derive(Arbitrary, Debug, Clone)]
pub enum Text {
    Pool(u8),
    Any(String),
}

const TEXTS: &[&str] = &[
    "echo",
    "add",
    "file:///a.txt",
    "",
    "a\"b\\c\n",
    "ü😀",
    "x/{id}",
];

impl Text {
    /// The text.
    pub fn get(&self) -> &str {
        match self {
            Text::Pool(i) => TEXTS[usize::from(*i) % TEXTS.len()],
            Text::Any(s) => s,
        }
    }
}

/// Raw JSON members (`arguments`, `context.arguments`, `inputResponses`): mostly valid
/// objects, some not objects or not JSON (the client must refuse those before writing).
pub const RAW: &[&str] = &[
    r#"{"a":1}"#,
    "{}",
    r#"{"text":"hi \u00e9","n":[1,2,{"x":null}]}"#,
    r#"{"k":{"result":{"action":"accept","content":{"name":"n"}}}}"#,
    "[1]",
    "{",
    "1",
    r#"{"a":1}{"b":2}"#,
    "{\"a\":\"line\nbreak\"}",
];

/// How the id of an answer is written.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum IdForm {
    /// As the client sent it (a number).
    Exact,
    /// As a string (another id).
    Quoted,
    /// As a float (another id).
    Float,
    /// Omitted (`null`).
    Null,
}

/// A response's body.
#[derive(Arbitrary, Debug, Clone)]
pub enum Body {
    /// A result from the pool.
    Result(u8),
    /// An error.
    Error(i32, bool),
    /// A result member of any JSON text.
    AnyResult(String),
}

/// Results: valid ones of each kind, `input_required` rounds, broken ones.
const RESULTS: &[&str] = &[
    "{}",
    r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c1"}"#,
    r#"{"content":[{"type":"text","text":"hi"}],"structuredContent":{"x":1},"isError":false}"#,
    r#"{"prompts":[],"nextCursor":"\u0063"}"#,
    r#"{"messages":[{"role":"user","content":{"type":"text","text":"m"}}]}"#,
    r#"{"contents":[{"uri":"file:///a.txt","text":"t"}]}"#,
    r#"{"completion":{"values":["a","b"],"hasMore":false}}"#,
    r#"{"resultType":"complete","content":[]}"#,
    r#"{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m"}}},"requestState":"s1"}"#,
    r#"{"resultType":"input_required","requestState":"only-state"}"#,
    r#"{"resultType":"input_required","inputRequests":{"k":1}}"#,
    r#"{"resultType":"input_required"}"#,
    r#"{"resultType":"other"}"#,
    r#"{"resultType":7}"#,
    r#"{"tools":"not a list"}"#,
    "[]",
    "null",
    "\"text\"",
];

impl Body {
    /// Whether the body's result or error is one JSON value (any text may add members).
    pub fn is_one_value(&self) -> bool {
        match self {
            Body::AnyResult(s) => serde_json::from_str::<serde_json::Value>(s).is_ok(),
            _ => true,
        }
    }

    /// The body's members after the id (`"result":…` or `"error":…`).
    pub fn render(&self) -> String {
        match self {
            Body::Result(i) => format!(r#""result":{}"#, RESULTS[usize::from(*i) % RESULTS.len()]),
            Body::Error(code, true) => {
                format!(r#""error":{{"code":{code},"message":"refused","data":{{"x":1}}}}"#)
            }
            Body::Error(_, false) => r#""error":{"code":"x"}"#.to_string(),
            Body::AnyResult(s) => format!(r#""result":{s}"#),
        }
    }
}

/// An answer to the handshake.
#[derive(Arbitrary, Debug, Clone)]
pub enum HandshakeBody {
    /// `server/discover`'s result, listing versions from a pool.
    Discover(Vec<u8>),
    /// `initialize`'s result with a version from the pool.
    Initialize(u8, bool),
    /// An error with this code (-32601 and -32022 make a discover fall back).
    Error(i32, bool),
    /// A result of any JSON text.
    Any(String),
}

const VERSIONS: &[&str] = &[
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "1999-01-01",
    "DRAFT-2026-v1",
];

impl HandshakeBody {
    /// The body's members after the id.
    pub fn render(&self) -> String {
        match self {
            HandshakeBody::Discover(picks) => {
                let listed: Vec<String> = picks
                    .iter()
                    .take(4)
                    .map(|p| format!("\"{}\"", VERSIONS[usize::from(*p) % VERSIONS.len()]))
                    .collect();
                format!(
                    r#""result":{{"supportedVersions":[{}],"capabilities":{{"tools":{{"listChanged":true}},"resources":{{"subscribe":true}}}},"serverInfo":{{"name":"s","version":"1"}},"instructions":"hi"}}"#,
                    listed.join(",")
                )
            }
            HandshakeBody::Initialize(p, caps) => format!(
                r#""result":{{"protocolVersion":"{}","capabilities":{},"serverInfo":{{"name":"s","version":"1"}}}}"#,
                VERSIONS[usize::from(*p) % VERSIONS.len()],
                if *caps {
                    r#"{"prompts":{},"logging":{}}"#
                } else {
                    "7"
                }
            ),
            HandshakeBody::Error(code, pick) => {
                let code = match (code % 4, pick) {
                    (0, _) => -32601,
                    (1, _) => -32022,
                    (_, true) => -32602,
                    _ => *code,
                };
                format!(r#""error":{{"code":{code},"message":"no"}}"#)
            }
            HandshakeBody::Any(s) => format!(r#""result":{s}"#),
        }
    }
}

/// A notification from the server.
#[derive(Arbitrary, Debug, Clone)]
pub enum Note {
    /// `notifications/progress` for the id at this index of those sent (or a stray token).
    Progress(u8, bool),
    /// A list changed (`% 3`: tools, prompts, resources).
    ListChanged(u8),
    /// `notifications/resources/updated`.
    Updated(Text),
    /// `notifications/message`.
    Log(u8),
    /// `notifications/cancelled`.
    Cancelled(SId),
    /// Another method, or broken params.
    Other(Text, Option<String>),
}

/// A server request's method.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum SMethod {
    Ping,
    Sampling,
    Elicit,
    Roots,
    Unknown,
}

impl SMethod {
    /// The method name.
    pub fn name(self) -> &'static str {
        match self {
            SMethod::Ping => "ping",
            SMethod::Sampling => "sampling/createMessage",
            SMethod::Elicit => "elicitation/create",
            SMethod::Roots => "roots/list",
            SMethod::Unknown => "tools/list",
        }
    }
}

/// A server request's id.
#[derive(Arbitrary, Debug, Clone)]
pub enum SId {
    Number(i64),
    Text(String),
}

impl SId {
    /// The id as JSON text.
    pub fn render(&self) -> String {
        match self {
            SId::Number(n) => n.to_string(),
            SId::Text(s) => serde_json::to_string(s).unwrap(),
        }
    }
}
