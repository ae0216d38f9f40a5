//! Rendering a [`Msg`] as one line of JSON text, from what the running model knows ([`Gen`]),
//! and the [`Claim`]s about its reply that only the rendered message can justify.

use super::grammar::{
    ArgsGen, Body, CancelGen, Envelope, IdGen, MetaGen, Msg, PromptArgsGen, RefGen, Rev, StateGen,
    ToolGen, UriGen, ValueGen,
};
use super::server::{PROMPT_NAMES, RESOURCES, TEMPLATES, TOOL_NAMES};
use super::{decode_str, jstr, MODERN};

/// What rendering needs from the running model.
pub struct Gen<'a> {
    pub(super) live_ids: Vec<String>,
    pub(super) cursors: &'a [String],
    /// `requestState`s the server sealed.
    pub(super) states: Vec<String>,
    /// Ids of server-to-client requests waiting for a response, and of earlier ones.
    pub(super) pending_out: Vec<u32>,
    pub(super) stale_out: &'a [u32],
    /// The session negotiated a legacy revision (legacy requests are admitted).
    pub(super) initialized: bool,
    /// The server offers tools only.
    pub(super) minimal: bool,
    pub(super) seq: u64,
    /// What the replies to the rendered requests must be, by raw id (see [`Claim`]).
    pub(super) claims: Vec<(String, Claim)>,
}

/// A property of the reply to one request, checked when that reply comes.
#[derive(Debug, Clone)]
pub enum Claim {
    /// Rendered valid up to its `requestState` (envelope, id, `_meta`, target, arguments
    /// and `inputResponses`): if the state is refused, the error is exactly -32602
    /// [`INVALID_STATE`].
    StrictState,
    /// Exactly this error: the code, and the message in full or (when the detail did not
    /// fit the output) without its detail; `data` at a pointer, if `data` is present.
    Fault {
        code: i64,
        full: String,
        bare: String,
        data: Option<(&'static str, String)>,
    },
    /// The request carries a `requestState` the server must refuse (tampered, foreign,
    /// expired, escaped, not a string): never a result, never deferred.
    BadState,
    /// The request carries a valid `requestState`: never refused for it.
    GoodState,
}

/// The message of the -32602 for a refused `requestState`.
pub const INVALID_STATE: &str =
    "Invalid requestState: tampered, expired or not issued by this server";

/// A detail as the server truncates a JSON string (`raw`, quotes included): at most
/// `max` characters (an escape, or an escaped surrogate pair, is one) and at most
/// `4 * max` bytes of escaped text, decoded, after `prefix`, then `...` if cut.
fn truncated(prefix: &str, raw: &str, max: usize, dots: bool) -> String {
    let content = &raw[1..raw.len() - 1];
    let b = content.as_bytes();
    let (mut i, mut count, mut cut) = (0, 0, false);
    while i < b.len() {
        let step = match (b[i], b.get(i + 1)) {
            (b'\\', Some(b'u'))
                if matches!(b[i + 2], b'd' | b'D')
                    && matches!(b[i + 3].to_ascii_lowercase(), b'8'..=b'b') =>
            {
                12
            }
            (b'\\', Some(b'u')) => 6,
            (b'\\', _) => 2,
            (c, _) if c < 0x80 => 1,
            (c, _) if c < 0xE0 => 2,
            (c, _) if c < 0xF0 => 3,
            _ => 4,
        };
        if count == max || i + step > 4 * max {
            cut = true;
            break;
        }
        i += step;
        count += 1;
    }
    let head = decode_str(&format!("\"{}\"", &content[..i])).expect("a whole-character prefix");
    format!("{prefix}{head}{}", if cut && dots { "..." } else { "" })
}

fn caps_obj(bits: u8) -> String {
    let names = ["sampling", "elicitation", "roots", "experimental"];
    let items: Vec<String> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, n)| format!("\"{n}\":{{}}"))
        .collect();
    format!("{{{}}}", items.join(","))
}

fn obj(members: &[(String, String)]) -> String {
    let items: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("\"{k}\":{v}"))
        .collect();
    format!("{{{}}}", items.join(","))
}

/// `inputResponses` of a retry: absent, an object of result objects, or invalid (null,
/// not an object, an entry that is not an object).
fn responses_text(r: u8) -> Option<String> {
    match r % 8 {
        1 => Some(r#"{"q":{"action":"accept","content":{"name":"x"}}}"#.into()),
        2 => Some("null".into()),
        3 => Some("[1]".into()),
        4 => Some(r#"{"q":12345}"#.into()),
        _ => None,
    }
}

/// Whether `responses_text` gives something the server accepts (absent, or an object
/// of objects).
fn responses_ok(r: u8) -> bool {
    !matches!(r % 8, 2..=4)
}

const LIST_METHODS: [&str; 4] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

const COMPLETE_ARGS: [&str; 6] = ["name", "style", "date", "id", "n", "x"];

const OTHER_METHODS: [&str; 10] = [
    "resources/list",
    "prompts/list",
    "completion/complete",
    "resources/subscribe",
    "tools\\/list",
    "",
    "TOOLS/LIST",
    "notifications/progress",
    "notifications/unknown",
    "initialize ",
];

impl Msg {
    /// The message as one line of JSON text (never contains a raw newline).
    pub fn render(&self, g: &mut Gen<'_>) -> String {
        let mut params: Vec<(String, String)> = Vec::new();
        let mut meta: Vec<(String, String)> = Vec::new();
        let mut has_params = true;
        // A response instead of a request: its member and value, and its id.
        let mut is_reply: Option<(&str, String)> = None;
        let mut reply_id: Option<String> = None;
        let mut raw_method: Option<String> = None;
        // Claims about the reply, kept if the envelope and id are valid (see `Claim`).
        let mut pending: Vec<Claim> = Vec::new();
        // The era a valid request is served in: 2026-07-28 (`true`), the negotiated
        // legacy revision (`false`), or `None` when `_meta` or the phase refuse it.
        let era = match &self.meta {
            MetaGen::Modern2 { .. } => Some(true),
            MetaGen::None | MetaGen::Legacy if g.initialized => Some(false),
            _ => None,
        };
        let method = match &self.body {
            Body::Initialize { rev, caps, shape } => {
                match shape % 4 {
                    1 => {}
                    2 => has_params = false,
                    3 => params.push(("protocolVersion".into(), rev.text())),
                    _ => params.push(("protocolVersion".into(), rev.text())),
                }
                let c = if shape % 4 == 3 {
                    "5".to_string()
                } else {
                    caps_obj(*caps)
                };
                params.push(("capabilities".into(), c));
                params.push((
                    "clientInfo".into(),
                    r#"{"name":"fuzz","version":"1.0"}"#.into(),
                ));
                "initialize".to_string()
            }
            Body::Initialized => {
                has_params = false;
                "notifications/initialized".into()
            }
            Body::Ping => {
                has_params = false;
                "ping".into()
            }
            Body::Discover => "server/discover".into(),
            Body::ToolsList { cursor } => {
                if let Some(c) = cursor.text(g) {
                    params.push(("cursor".into(), c));
                }
                "tools/list".into()
            }
            Body::List { kind, cursor } => {
                if let Some(c) = cursor.text(g) {
                    params.push(("cursor".into(), c));
                }
                LIST_METHODS[usize::from(*kind) % LIST_METHODS.len()].into()
            }
            Body::ToolsCall {
                tool,
                args,
                progress,
                state,
                responses,
            } => {
                params.push(("name".into(), tool.text(&TOOL_NAMES)));
                g.seq += 1;
                let seq = g.seq;
                let a = match args {
                    ArgsGen::Absent => None,
                    ArgsGen::Null => Some("null".to_string()),
                    ArgsGen::Marker => Some(format!("{{\"__seq\":{seq}}}")),
                    ArgsGen::Text(s) => Some(format!("{{\"__seq\":{seq},\"text\":{}}}", jstr(s))),
                    ArgsGen::Big(n) => Some(format!(
                        "{{\"__seq\":{seq},\"text\":\"{}\"}}",
                        "x".repeat(usize::from(*n) % 3000)
                    )),
                    ArgsGen::NotObject => Some("[1,2]".into()),
                    ArgsGen::Deep(d) => {
                        let d = usize::from(*d) % 48;
                        Some(format!(
                            "{{\"__seq\":{seq},\"deep\":{}{}}}",
                            "[".repeat(d),
                            "]".repeat(d)
                        ))
                    }
                    ArgsGen::Add(a, b) => Some(format!(
                        "{{\"__seq\":{seq},\"a\":{},\"b\":{}}}",
                        serde_json::to_string(a).unwrap(),
                        serde_json::to_string(b).unwrap()
                    )),
                };
                if let Some(a) = a {
                    params.push(("arguments".into(), a));
                }
                if let Some(p) = progress {
                    meta.push(("progressToken".into(), p.text(g)));
                }
                if let Some(st) = state.text(g) {
                    params.push(("requestState".into(), st));
                }
                if let Some(r) = responses_text(*responses) {
                    params.push(("inputResponses".into(), r));
                }
                if era.is_some() {
                    if let Some(name) = tool.unknown(&TOOL_NAMES) {
                        pending.push(Claim::Fault {
                            code: -32602,
                            full: truncated("Unknown tool: ", &name, 64, true),
                            bare: "Unknown tool".into(),
                            data: None,
                        });
                    } else if tool.known()
                        && !matches!(args, ArgsGen::NotObject | ArgsGen::Deep(_))
                        && responses_ok(*responses)
                    {
                        pending.push(Claim::StrictState);
                    }
                }
                "tools/call".into()
            }
            Body::SetLevel { level } => {
                params.push(("level".into(), level.text()));
                "logging/setLevel".into()
            }
            Body::Cancel { target } => {
                match target {
                    CancelGen::Live(k) => {
                        params.push(("requestId".into(), IdGen::Live(*k).text(g)))
                    }
                    CancelGen::Id(id) => params.push(("requestId".into(), id.text(g))),
                    CancelGen::Missing => {}
                    CancelGen::NotObject => has_params = false,
                }
                params.push(("reason".into(), "\"fuzz\"".into()));
                "notifications/cancelled".into()
            }
            Body::Other { method } => {
                OTHER_METHODS[usize::from(*method) % OTHER_METHODS.len()].into()
            }
            Body::Reply { error } => {
                is_reply = Some(if *error {
                    (
                        "error",
                        r#"{"code":-1,"message":"client error"}"#.to_string(),
                    )
                } else {
                    ("result", "{}".to_string())
                });
                String::new()
            }
            Body::Response { to, outcome } => {
                reply_id = Some(to.text(g));
                is_reply = Some(match outcome % 6 {
                    0 => (
                        "result",
                        r#"{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}"#
                            .to_string(),
                    ),
                    1 => ("result", "{}".to_string()),
                    2 => ("result", r#"{"roots":[{"uri":"file:///x"}]}"#.to_string()),
                    3 => (
                        "error",
                        r#"{"code":-1,"message":"User rejected"}"#.to_string(),
                    ),
                    4 => (
                        "error",
                        r#"{"code":-32601,"message":"caf\u00e9 \"q\"","data":[1]}"#.to_string(),
                    ),
                    _ => (
                        "result",
                        r#"{"action":"accept","content":{"name":"x"}}"#.to_string(),
                    ),
                });
                String::new()
            }
            Body::Read {
                uri,
                state,
                responses,
            } => {
                let text = uri.text(g);
                params.push(("uri".into(), text.clone()));
                if let Some(st) = state.text(g) {
                    params.push(("requestState".into(), st));
                }
                if let Some(r) = responses_text(*responses) {
                    params.push(("inputResponses".into(), r));
                }
                if let (Some(modern), false) = (era, g.minimal) {
                    let ok = responses_ok(*responses);
                    if !matches!(uri, UriGen::NotString) && ok {
                        pending.push(Claim::StrictState);
                    }
                    if let (UriGen::Long(_), StateGen::None, true) = (uri, state, ok) {
                        pending.push(Claim::Fault {
                            code: if modern { -32602 } else { -32002 },
                            full: "Resource not found".into(),
                            bare: "Resource not found".into(),
                            data: Some(("/uri", truncated("", &text, 256, false))),
                        });
                    }
                }
                "resources/read".into()
            }
            Body::Subscribe { uri, on } => {
                params.push(("uri".into(), uri.text(g)));
                if *on {
                    "resources/subscribe".into()
                } else {
                    "resources/unsubscribe".into()
                }
            }
            Body::GetPrompt {
                prompt,
                args,
                state,
                responses,
            } => {
                params.push(("name".into(), prompt.text(&PROMPT_NAMES)));
                g.seq += 1;
                let seq = g.seq;
                let a = match args {
                    PromptArgsGen::Absent => None,
                    PromptArgsGen::Null => Some("null".to_string()),
                    PromptArgsGen::Full(s) => Some(format!(
                        "{{\"name\":{},\"style\":\"short\",\"__seq\":\"{seq}\"}}",
                        jstr(&s.chars().take(20).collect::<String>())
                    )),
                    PromptArgsGen::MissingRequired => {
                        Some(format!("{{\"style\":\"x\",\"__seq\":\"{seq}\"}}"))
                    }
                    PromptArgsGen::NonString => Some("{\"name\":5}".into()),
                    PromptArgsGen::NotObject => Some("[1]".into()),
                };
                if let Some(a) = a {
                    params.push(("arguments".into(), a));
                }
                if let Some(st) = state.text(g) {
                    params.push(("requestState".into(), st));
                }
                if let Some(r) = responses_text(*responses) {
                    params.push(("inputResponses".into(), r));
                }
                if let (Some(_), false) = (era, g.minimal) {
                    let ok = responses_ok(*responses);
                    let greet = match prompt {
                        ToolGen::Known(i) | ToolGen::Escaped(i) => {
                            PROMPT_NAMES[usize::from(*i) % PROMPT_NAMES.len()] == "greet"
                        }
                        _ => false,
                    };
                    let stateless = matches!(state, StateGen::None);
                    if let Some(name) = prompt.unknown(&PROMPT_NAMES) {
                        pending.push(Claim::Fault {
                            code: -32602,
                            full: truncated("Unknown prompt: ", &name, 64, true),
                            bare: "Unknown prompt".into(),
                            data: None,
                        });
                    } else if prompt.known() && !matches!(args, PromptArgsGen::NotObject) && ok {
                        pending.push(Claim::StrictState);
                        let missing = matches!(
                            args,
                            PromptArgsGen::Absent
                                | PromptArgsGen::Null
                                | PromptArgsGen::MissingRequired
                        );
                        if greet && stateless && missing {
                            pending.push(Claim::Fault {
                                code: -32602,
                                full: "Missing required argument: name".into(),
                                bare: "Missing required argument".into(),
                                data: None,
                            });
                        }
                        if stateless && matches!(args, PromptArgsGen::NonString) {
                            pending.push(Claim::Fault {
                                code: -32602,
                                full: "Prompt argument values must be strings: name".into(),
                                bare: "Prompt argument values must be strings".into(),
                                data: None,
                            });
                        }
                    }
                }
                "prompts/get".into()
            }
            Body::Complete {
                reference,
                argument,
                value,
                context,
            } => {
                let r = match reference {
                    RefGen::Prompt(t) => Some(format!(
                        "{{\"type\":\"ref/prompt\",\"name\":{}}}",
                        t.text(&PROMPT_NAMES)
                    )),
                    RefGen::Template(i) => Some(format!(
                        "{{\"type\":\"ref/resource\",\"uri\":{}}}",
                        jstr(TEMPLATES[usize::from(*i) % TEMPLATES.len()].0)
                    )),
                    RefGen::Listed(i) => Some(format!(
                        "{{\"type\":\"ref/resource\",\"uri\":{}}}",
                        jstr(RESOURCES[usize::from(*i) % RESOURCES.len()].0)
                    )),
                    RefGen::Uri(u) => Some(format!(
                        "{{\"type\":\"ref/resource\",\"uri\":{}}}",
                        u.text(g)
                    )),
                    RefGen::BadType => Some(r#"{"type":"ref/tool","name":"echo"}"#.into()),
                    RefGen::NotObject => Some("\"greet\"".into()),
                    RefGen::Missing => None,
                };
                if let Some(r) = r {
                    params.push(("ref".into(), r));
                }
                let v = match value {
                    ValueGen::Text(s) => jstr(&s.chars().take(20).collect::<String>()),
                    ValueGen::Many => "\"many\"".into(),
                    ValueGen::Slow => {
                        g.seq += 1;
                        format!("\"slow{}\"", g.seq)
                    }
                    ValueGen::NotString => "3".into(),
                };
                let name = jstr(COMPLETE_ARGS[usize::from(*argument) % COMPLETE_ARGS.len()]);
                params.push((
                    "argument".into(),
                    format!("{{\"name\":{name},\"value\":{v}}}"),
                ));
                match context.map(|c| c % 3) {
                    Some(0) => {
                        params.push(("context".into(), r#"{"arguments":{"name":"ctx"}}"#.into()))
                    }
                    Some(1) => params.push(("context".into(), r#"{"arguments":5}"#.into())),
                    Some(_) => params.push(("context".into(), "\"nope\"".into())),
                    None => {}
                }
                if let (Some(_), false, false) =
                    (era, g.minimal, matches!(value, ValueGen::NotString))
                {
                    match reference {
                        RefGen::Prompt(t) => {
                            if let Some(name) = t.unknown(&PROMPT_NAMES) {
                                pending.push(Claim::Fault {
                                    code: -32602,
                                    full: truncated("Unknown prompt: ", &name, 64, true),
                                    bare: "Unknown prompt".into(),
                                    data: None,
                                });
                            }
                        }
                        RefGen::Uri(UriGen::Long(l)) => {
                            pending.push(Claim::Fault {
                                code: -32602,
                                full: "Unknown resource template".into(),
                                bare: "Unknown resource template".into(),
                                data: Some(("/uri", truncated("", &l.text(), 256, false))),
                            });
                        }
                        _ => {}
                    }
                }
                "completion/complete".into()
            }
            Body::Listen { filter } => {
                let keys = [
                    "toolsListChanged",
                    "promptsListChanged",
                    "resourcesListChanged",
                ];
                let mut n: Vec<(String, String)> = Vec::new();
                for (i, k) in keys.iter().enumerate() {
                    if filter & (1 << i) != 0 {
                        n.push((k.to_string(), "true".into()));
                    } else if filter & 8 != 0 {
                        n.push((k.to_string(), "false".into()));
                    }
                }
                if filter & 16 != 0 {
                    n.push(("fooListChanged".into(), "true".into()));
                }
                let notifications = if filter & 32 != 0 {
                    "[]".to_string()
                } else {
                    obj(&n)
                };
                if filter & 64 != 0 {
                    has_params = false;
                } else {
                    params.push(("notifications".into(), notifications));
                }
                "subscriptions/listen".into()
            }
            Body::LongMethod(l) => {
                if matches!(
                    self.meta,
                    MetaGen::None | MetaGen::Legacy | MetaGen::Modern2 { .. }
                ) {
                    pending.push(Claim::Fault {
                        code: -32601,
                        full: truncated("Method not found: ", &l.text(), 64, true),
                        bare: "Method not found".into(),
                        data: None,
                    });
                }
                raw_method = Some(l.text());
                String::new()
            }
        };
        match &self.meta {
            MetaGen::None | MetaGen::Legacy => {}
            MetaGen::Modern {
                rev,
                caps,
                level,
                shape,
            } => {
                let s = shape % 6;
                let v = if s == 3 {
                    "20260728".to_string()
                } else {
                    rev.text()
                };
                if let (Rev::Long(l), false) = (rev, s == 3) {
                    let requested = l.text();
                    pending = vec![Claim::Fault {
                        code: -32022,
                        full: truncated("Unsupported protocol version: ", &requested, 32, true),
                        bare: "Unsupported protocol version".into(),
                        data: Some(("/requested", truncated("", &requested, 32, false))),
                    }];
                }
                meta.push(("io.modelcontextprotocol/protocolVersion".into(), v));
                match s {
                    1 => {}
                    2 => meta.push((
                        "io.modelcontextprotocol/clientCapabilities".into(),
                        "[]".into(),
                    )),
                    _ => meta.push((
                        "io.modelcontextprotocol/clientCapabilities".into(),
                        caps_obj(*caps),
                    )),
                }
                if let Some(l) = level {
                    meta.push(("io.modelcontextprotocol/logLevel".into(), l.text()));
                }
            }
            MetaGen::Modern2 { caps } => {
                meta.push((
                    "io.modelcontextprotocol/protocolVersion".into(),
                    format!("\"{MODERN}\""),
                ));
                meta.push((
                    "io.modelcontextprotocol/clientCapabilities".into(),
                    caps_obj(*caps),
                ));
            }
            MetaGen::NotObject => meta.push(("\u{0}".into(), String::new())),
            MetaGen::CapsOnly => meta.push((
                "io.modelcontextprotocol/clientCapabilities".into(),
                "{}".into(),
            )),
        }
        if !meta.is_empty() {
            has_params = true;
            let m = if meta.iter().any(|(k, _)| k == "\u{0}") {
                "7".to_string()
            } else {
                obj(&meta)
            };
            params.push(("_meta".into(), m));
        }

        let id = match reply_id {
            Some(r) => Some(r),
            None => self.id.as_ref().map(|i| i.text(g)),
        };
        let mut members: Vec<(String, String)> = vec![("jsonrpc".into(), "\"2.0\"".into())];
        if let Some(id) = &id {
            members.push(("id".into(), id.clone()));
        }
        let reply = is_reply.is_some();
        match is_reply {
            Some((member, value)) => members.push((member.into(), value)),
            None => {
                members.push(("method".into(), raw_method.unwrap_or_else(|| jstr(&method))));
                if has_params {
                    members.push(("params".into(), obj(&params)));
                }
            }
        }
        let valid_env = matches!(
            self.env,
            Envelope::Plain
                | Envelope::Plain2
                | Envelope::Plain3
                | Envelope::Spaced
                | Envelope::ExtraMember
                | Envelope::Reordered
        );
        let valid_id = matches!(
            self.id,
            Some(
                IdGen::Small(_)
                    | IdGen::Int(_)
                    | IdGen::Str(_)
                    | IdGen::Text(_)
                    | IdGen::Escaped(_)
            )
        );
        if let (true, true, false, Some(id)) = (valid_env, valid_id, reply, &id) {
            g.claims
                .extend(pending.into_iter().map(|c| (id.clone(), c)));
        }
        let set = |members: &mut Vec<(String, String)>, k: &str, v: &str| {
            if let Some(m) = members.iter_mut().find(|(mk, _)| mk == k) {
                m.1 = v.into();
            }
        };
        let mut spaced = false;
        match self.env {
            Envelope::Plain | Envelope::Plain2 | Envelope::Plain3 => {}
            Envelope::Spaced => spaced = true,
            Envelope::Jsonrpc10 => set(&mut members, "jsonrpc", "\"1.0\""),
            Envelope::NoJsonrpc => {
                members.remove(0);
            }
            Envelope::JsonrpcNumber => set(&mut members, "jsonrpc", "2.0"),
            Envelope::JsonrpcEscaped => set(&mut members, "jsonrpc", "\"2\\u002e0\""),
            Envelope::ParamsArray => set(&mut members, "params", "[1]"),
            Envelope::ParamsString => set(&mut members, "params", "\"p\""),
            Envelope::ParamsNull => set(&mut members, "params", "null"),
            Envelope::DupId => members.push(("id".into(), "99".into())),
            Envelope::DupMethod => members.push(("method".into(), "\"ping\"".into())),
            Envelope::MethodNumber => set(&mut members, "method", "7"),
            Envelope::WithResult => members.push(("result".into(), "{}".into())),
            Envelope::EscapedMethodKey => {
                if let Some(m) = members.iter_mut().find(|(k, _)| k == "method") {
                    m.0 = "\\u006dethod".into();
                }
            }
            Envelope::EscapedIdKey => {
                if let Some(m) = members.iter_mut().find(|(k, _)| k == "id") {
                    m.0 = "\\u0069d".into();
                }
            }
            Envelope::ExtraMember => members.push(("extra".into(), "[{\"x\":null}]".into())),
            Envelope::Reordered => members.reverse(),
        }
        let items: Vec<String> = members
            .iter()
            .map(|(k, v)| {
                if spaced {
                    format!(" \"{k}\" :\t{v} ")
                } else {
                    format!("\"{k}\":{v}")
                }
            })
            .collect();
        format!("{{{}}}", items.join(","))
    }
}
