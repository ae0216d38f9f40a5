//! The `Arbitrary` grammar of the `session` target: the configuration ([`CfgGen`]), the
//! operations ([`SOp`]) and the client messages ([`Msg`]: id, [`Body`], `_meta`, envelope),
//! with how each generated part renders as JSON text.

use super::render::Gen;
use super::server::{RESOURCES, TEMPLATES};
use super::{decode_str, jstr};
use arbitrary::Arbitrary;

#[derive(Arbitrary, Debug, Clone)]
pub enum Rev {
    R0,
    R1,
    R2,
    R3,
    R4,
    Unknown,
    Empty,
    Number,
    /// A long escaped version string: `-32022` truncates it in its message and data.
    Long(LongGen),
}

impl Rev {
    pub(super) fn text(&self) -> String {
        match self {
            Rev::Long(l) => l.text(),
            Rev::R0 => "\"2024-11-05\"".into(),
            Rev::R1 => "\"2025-03-26\"".into(),
            Rev::R2 => "\"2025-06-18\"".into(),
            Rev::R3 => "\"2025-11-25\"".into(),
            Rev::R4 => "\"2026-07-28\"".into(),
            Rev::Unknown => "\"1999-01-01\"".into(),
            Rev::Empty => "\"\"".into(),
            Rev::Number => "20250618".into(),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum IdGen {
    Small(u8),
    Int(i64),
    Str(u8),
    Text(String),
    /// A 65-byte string id: too long to keep for a deferred call.
    Long,
    /// A 600-byte id: too long to echo in a small output buffer.
    Huge,
    Null,
    Float,
    Exp,
    Bool,
    Obj,
    NegZero,
    BigInt,
    /// The id of a call in flight (duplicate ids, cancellation targets).
    Live(u8),
    /// `"\u0072N"`: equal by value to `Str(N)`, different on the wire.
    Escaped(u8),
}

impl IdGen {
    pub(super) fn text(&self, g: &Gen<'_>) -> String {
        match self {
            IdGen::Small(n) => n.to_string(),
            IdGen::Int(i) => i.to_string(),
            IdGen::Str(n) => format!("\"r{n}\""),
            IdGen::Text(s) => {
                serde_json::to_string(&s.chars().take(40).collect::<String>()).unwrap()
            }
            IdGen::Long => format!("\"{}\"", "L".repeat(63)),
            IdGen::Huge => format!("\"{}\"", "H".repeat(600)),
            IdGen::Null => "null".into(),
            IdGen::Float => "1.5".into(),
            IdGen::Exp => "1e3".into(),
            IdGen::Bool => "true".into(),
            IdGen::Obj => "{\"a\":1}".into(),
            IdGen::NegZero => "-0".into(),
            IdGen::BigInt => "123456789012345678901234567890".into(),
            IdGen::Live(k) => match g.live_ids.len() {
                0 => "7".into(),
                n => g.live_ids[usize::from(*k) % n].clone(),
            },
            IdGen::Escaped(n) => format!("\"\\u0072{n}\""),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum LevelGen {
    L(u8),
    Bad(String),
    Number,
}

pub(super) const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

impl LevelGen {
    pub(super) fn text(&self) -> String {
        match self {
            LevelGen::L(n) => format!("\"{}\"", LEVELS[usize::from(*n) % 8]),
            LevelGen::Bad(s) => {
                serde_json::to_string(&s.chars().take(16).collect::<String>()).unwrap()
            }
            LevelGen::Number => "3".into(),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum CursorGen {
    Absent,
    Null,
    Seen(u8),
    Tampered(u8, u8),
    Garbage(String),
    Number,
    Empty,
}

impl CursorGen {
    pub(super) fn text(&self, g: &Gen<'_>) -> Option<String> {
        let seen = |k: &u8| g.cursors.get(usize::from(*k) % g.cursors.len().max(1));
        match self {
            CursorGen::Absent => None,
            CursorGen::Null => Some("null".to_string()),
            CursorGen::Seen(k) => seen(k).map(|c| jstr(c)),
            CursorGen::Tampered(k, at) => seen(k).map(|c| {
                let mut b = c.clone().into_bytes();
                let i = usize::from(*at) % b.len().max(1);
                if let Some(x) = b.get_mut(i) {
                    *x = if *x == b'A' { b'B' } else { b'A' };
                }
                jstr(&String::from_utf8_lossy(&b))
            }),
            CursorGen::Garbage(s) => Some(jstr(s)),
            CursorGen::Number => Some("12".into()),
            CursorGen::Empty => Some("\"\"".into()),
        }
    }
}

/// A tool or prompt name (`names` is the list it is drawn from).
#[derive(Arbitrary, Debug, Clone)]
pub enum ToolGen {
    Known(u8),
    Unknown(String),
    /// A known name with its first character written as a `\u` escape.
    Escaped(u8),
    NotString,
    /// A long unknown name full of escapes: its error message is truncated.
    Long(LongGen),
}

impl ToolGen {
    pub(super) fn text(&self, names: &[&str]) -> String {
        match self {
            ToolGen::Known(i) => jstr(names[usize::from(*i) % names.len()]),
            ToolGen::Unknown(s) => jstr(s),
            ToolGen::Escaped(i) => {
                let n = names[usize::from(*i) % names.len()];
                format!("\"\\u{:04x}{}\"", n.as_bytes()[0], &n[1..])
            }
            ToolGen::NotString => "42".into(),
            ToolGen::Long(l) => l.text(),
        }
    }

    /// The name as sent (quotes included), if it is a string that names nothing in
    /// `names`.
    pub(super) fn unknown(&self, names: &[&str]) -> Option<String> {
        let raw = self.text(names);
        let name = decode_str(&raw)?;
        (!names.contains(&name.as_str())).then_some(raw)
    }

    pub(super) fn known(&self) -> bool {
        matches!(self, ToolGen::Known(_) | ToolGen::Escaped(_))
    }
}

/// A long string of escapes and multi-byte characters (`\uD83D\uDE00`, `\"`, `\\`,
/// ...), so that error messages and `data` must be truncated between characters.
#[derive(Arbitrary, Debug, Clone)]
pub struct LongGen {
    pub unit: u8,
    pub count: u16,
    pub mixed: bool,
}

const UNITS: [&str; 10] = [
    "\\uD83D\\uDE00",
    "\\\"",
    "\\\\",
    "a",
    "\u{e9}",
    "\\n",
    "\\u0000",
    "\\/",
    "\u{1F600}",
    "\\u00e9",
];

impl LongGen {
    /// The JSON string, quotes included: 40 to 439 characters.
    pub(super) fn text(&self) -> String {
        let n = 40 + usize::from(self.count) % 400;
        let mut s = String::from("\"");
        for i in 0..n {
            let u = usize::from(self.unit) + if self.mixed { i } else { 0 };
            s.push_str(UNITS[u % UNITS.len()]);
        }
        s.push('"');
        s
    }
}

/// A resource URI.
#[derive(Arbitrary, Debug, Clone)]
pub enum UriGen {
    Listed(u8),
    /// A template filled with (the alphanumerics of) a string.
    Templated(u8, String),
    /// `test://slow/<seq>`: a templated read the handler defers.
    Slow,
    /// A listed URI with its first character as a `\u` escape.
    Escaped(u8),
    Unknown(String),
    /// Never listed, never matching a template: not found, `data.uri` truncated.
    Long(LongGen),
    NotString,
}

impl UriGen {
    pub(super) fn text(&self, g: &mut Gen<'_>) -> String {
        match self {
            UriGen::Listed(i) => jstr(RESOURCES[usize::from(*i) % RESOURCES.len()].0),
            UriGen::Templated(i, v) => {
                let t = TEMPLATES[usize::from(*i) % TEMPLATES.len()].0;
                let mut v: String = v
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .take(12)
                    .collect();
                if v.is_empty() {
                    v.push('x');
                }
                let mut out = String::new();
                let mut rest = t;
                while let Some(open) = rest.find('{') {
                    out.push_str(&rest[..open]);
                    out.push_str(&v);
                    rest = &rest[rest[open..].find('}').map_or(rest.len(), |c| open + c + 1)..];
                }
                out.push_str(rest);
                jstr(&out)
            }
            UriGen::Slow => {
                g.seq += 1;
                jstr(&format!("test://slow/{}", g.seq))
            }
            UriGen::Escaped(i) => {
                let u = RESOURCES[usize::from(*i) % RESOURCES.len()].0;
                let first = u.chars().next().unwrap_or('x');
                format!(
                    "\"\\u{:04x}{}",
                    u32::from(first),
                    &jstr(u)[1 + first.len_utf8()..]
                )
            }
            UriGen::Unknown(s) => jstr(s),
            UriGen::Long(l) => l.text(),
            UriGen::NotString => "[]".into(),
        }
    }
}

/// `requestState` of a retry.
#[derive(Arbitrary, Debug, Clone)]
pub enum StateGen {
    None,
    /// One the server sealed earlier (valid if it is for this method and target and has
    /// not expired).
    Seen(u8),
    /// One the server sealed, with one character replaced.
    Tampered(u8, u8),
    /// One the server sealed, its first character written as `\u0073`.
    Escaped(u8),
    Garbage(String),
    NotString(bool),
}

impl StateGen {
    pub(super) fn text(&self, g: &Gen<'_>) -> Option<String> {
        let seen = |k: &u8| {
            g.states
                .get(usize::from(*k) % g.states.len().max(1))
                .cloned()
        };
        match self {
            StateGen::None => None,
            StateGen::Seen(k) => Some(jstr(&seen(k).unwrap_or_else(|| "s1.none".into()))),
            StateGen::Tampered(k, at) => {
                let mut b = seen(k).unwrap_or_else(|| "s1.none".into()).into_bytes();
                let i = usize::from(*at) % b.len();
                b[i] = if b[i] == b'A' { b'B' } else { b'A' };
                Some(jstr(&String::from_utf8_lossy(&b)))
            }
            StateGen::Escaped(k) => {
                let s = seen(k).unwrap_or_else(|| "s1.none".into());
                Some(format!("\"\\u0073{}\"", &s[1..]))
            }
            StateGen::Garbage(s) => Some(jstr(s)),
            StateGen::NotString(true) => Some("null".into()),
            StateGen::NotString(false) => Some("5".into()),
        }
    }
}

/// `prompts/get` arguments.
#[derive(Arbitrary, Debug, Clone)]
pub enum PromptArgsGen {
    Absent,
    Full(String),
    MissingRequired,
    NonString,
    NotObject,
    Null,
}

/// `completion/complete` reference.
#[derive(Arbitrary, Debug, Clone)]
pub enum RefGen {
    Prompt(ToolGen),
    Template(u8),
    Listed(u8),
    Uri(UriGen),
    BadType,
    NotObject,
    Missing,
}

/// `completion/complete` argument value.
#[derive(Arbitrary, Debug, Clone)]
pub enum ValueGen {
    Text(String),
    /// More values than a result may carry.
    Many,
    /// `slow<seq>`: deferred by the handler.
    Slow,
    NotString,
}

/// The id a client response answers.
#[derive(Arbitrary, Debug, Clone)]
pub enum OutIdGen {
    /// A server-to-client request still waiting.
    Pending(u8),
    /// One answered, timed out or of a call that ended (late).
    Stale(u8),
    /// Any number (usually wrong).
    Other(u32),
    /// A waiting one written as a string (not an id the server issued).
    Quoted(u8),
    Zero,
}

impl OutIdGen {
    pub(super) fn text(&self, g: &Gen<'_>) -> String {
        let of = |v: &[u32], k: &u8| v.get(usize::from(*k) % v.len().max(1)).copied();
        match self {
            OutIdGen::Pending(k) => of(&g.pending_out, k).unwrap_or(1).to_string(),
            OutIdGen::Stale(k) => of(g.stale_out, k).unwrap_or(2).to_string(),
            OutIdGen::Other(n) => n.to_string(),
            OutIdGen::Quoted(k) => format!("\"{}\"", of(&g.pending_out, k).unwrap_or(1)),
            OutIdGen::Zero => "0".into(),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ArgsGen {
    Absent,
    Null,
    Marker,
    Text(String),
    Big(u16),
    NotObject,
    Deep(u8),
    Add(f64, f64),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum CancelGen {
    Live(u8),
    Id(IdGen),
    Missing,
    NotObject,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Body {
    Initialize {
        rev: Rev,
        caps: u8,
        shape: u8,
    },
    Initialized,
    Ping,
    Discover,
    ToolsList {
        cursor: CursorGen,
    },
    ToolsCall {
        tool: ToolGen,
        args: ArgsGen,
        progress: Option<IdGen>,
        state: StateGen,
        responses: u8,
    },
    SetLevel {
        level: LevelGen,
    },
    Cancel {
        target: CancelGen,
    },
    Other {
        method: u8,
    },
    Reply {
        error: bool,
    },
    /// `tools/list` (0), `prompts/list`, `resources/list`, `resources/templates/list`: a
    /// cursor seen earlier may be of another list.
    List {
        kind: u8,
        cursor: CursorGen,
    },
    Read {
        uri: UriGen,
        state: StateGen,
        responses: u8,
    },
    Subscribe {
        uri: UriGen,
        on: bool,
    },
    GetPrompt {
        prompt: ToolGen,
        args: PromptArgsGen,
        state: StateGen,
        responses: u8,
    },
    Complete {
        reference: RefGen,
        argument: u8,
        value: ValueGen,
        context: Option<u8>,
    },
    /// `subscriptions/listen`: bits 0-2 ask for tools, prompts, resources; bit 3 adds an
    /// explicit `false`, bit 4 an unknown filter, bit 5 makes `notifications` invalid,
    /// bit 6 leaves `params` out.
    Listen {
        filter: u8,
    },
    /// A client response to a server-to-client request (`Session::request`).
    Response {
        to: OutIdGen,
        outcome: u8,
    },
    /// A long method name with escapes (-32601 truncates it).
    LongMethod(LongGen),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum MetaGen {
    None,
    Legacy,
    Modern {
        rev: Rev,
        caps: u8,
        level: Option<LevelGen>,
        shape: u8,
    },
    Modern2 {
        caps: u8,
    },
    NotObject,
    CapsOnly,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Envelope {
    Plain,
    Plain2,
    Plain3,
    Spaced,
    Jsonrpc10,
    NoJsonrpc,
    JsonrpcNumber,
    JsonrpcEscaped,
    ParamsArray,
    ParamsString,
    ParamsNull,
    DupId,
    DupMethod,
    MethodNumber,
    WithResult,
    EscapedMethodKey,
    /// `"\u0069d"`: still the member `id` (see
    /// `fuzz_regressions::escaped_id_key_is_still_a_request`).
    EscapedIdKey,
    ExtraMember,
    Reordered,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Msg {
    pub id: Option<IdGen>,
    pub body: Body,
    pub meta: MetaGen,
    pub env: Envelope,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ResultGen {
    Text(String),
    All,
    Structured(f64),
    StructuredRaw(String),
    Error(String),
    Misuse,
    Big(u16),
    Empty,
    /// `input_required` (2026-07-28): a sealed state or not; bits of `asks`: elicit,
    /// sample, roots, invalid raw JSON.
    InputRequired {
        state: bool,
        asks: u8,
    },
    /// The completer of another kind of request (or `close_subscription`).
    WrongKind(u8),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum SOp {
    Send {
        msg: Msg,
        take: u8,
    },
    Batch {
        msgs: Vec<Msg>,
        take: u8,
    },
    Raw(Vec<u8>),
    Truncated {
        msg: Msg,
        cut: u16,
    },
    Stream {
        msgs: Vec<Msg>,
        chunk: u8,
        max_line: u16,
        take: u8,
    },
    Complete {
        pick: u8,
        result: ResultGen,
    },
    Fail {
        pick: u8,
        code: i32,
        message: String,
    },
    Progress {
        pick: u8,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        pick: Option<u8>,
        level: u8,
        logger: Option<String>,
        data: String,
    },
    ToolsChanged,
    Oversized {
        limit: u16,
    },
    /// `Session::request` from a call: sampling, elicitation or roots.
    Request {
        pick: u8,
        method: u8,
        timeout: u16,
        bad: bool,
    },
    /// Time passes (`handle_timeout`); `far` goes beyond the state TTL.
    Advance {
        ms: u16,
        far: bool,
    },
    /// `Session::list_changed` of a list kind.
    ListChanged {
        kind: u8,
    },
    /// `Session::resource_updated`.
    ResourceUpdated {
        uri: u8,
    },
}

#[derive(Arbitrary, Debug, Clone)]
pub struct CfgGen {
    pub cap: u8,
    pub out: u16,
    pub page: u8,
    pub batch: u8,
    pub depth: u8,
    pub list_changed: bool,
    pub level: u8,
    pub ttl: u32,
    pub private: bool,
    /// `state_ttl_ms` of sealed `requestState`, in 16 ms units (+1).
    pub state_ttl: u16,
    /// 240 and above: a server with tools only (no resources, prompts, completions).
    pub offer: u8,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Input {
    pub cfg: CfgGen,
    pub ops: Vec<SOp>,
}
