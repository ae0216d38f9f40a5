//! Shared code of the runnable `mcp-rs` example servers.
//!
//! * [`calculator_tools`]: the calculator's tools in an [`mcp_rs_tokio::Tools`] registry, which
//!   the `calculator` (stdio) and `tcp` (TCP/Unix) binaries serve with mcp-tokio: the
//!   synchronous [`CalculatorTools`] handlers plus the async `slow_count`;
//! * [`serve`]: a plain blocking std loop around [`mcp_rs_core::Session`] (newline framing,
//!   one reply per line): the smallest way to drive the core without an async runtime;
//! * [`CalculatorTools`]: the calculator tool set (`add_numbers`, `calculate`, `roll_dice`,
//!   `tell_fortune`, plus optional generated `extra_tool_NNN` echo tools for exercising
//!   `tools/list` pagination), with synchronous handlers and typed arguments;
//! * [`Options`] / [`parse_args`]: the command line of the `calculator` binary;
//! * [`fixtures`]: the conformance suite's fixture data, shared by the `everything` (tokio)
//!   and `embedded-http` (mcp-embedded, no heap) fixture servers.
//!
//! The loop works on any [`Read`] / [`Write`] pair, so it runs in memory too:
//!
//! ```
//! use mcp_examples::{config, serve, server_info, CalculatorTools};
//!
//! let input = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"#,
//!     r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
//!     r#""io.modelcontextprotocol/clientCapabilities":{}},"#,
//!     r#""name":"add_numbers","arguments":{"number1":2,"number2":3}}}"#,
//!     "\n",
//!     r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, // no final newline: still answered
//! );
//! let mut tools = CalculatorTools::new(0, 42);
//! let mut output = Vec::new();
//! serve(&mut tools, &server_info(), config(50), input.as_bytes(), &mut output).unwrap();
//! let output = String::from_utf8(output).unwrap();
//! let lines: Vec<&str> = output.lines().collect();
//! assert!(lines[0].contains(r#""structuredContent":{"sum":5.0}"#));
//! assert_eq!(lines[1], r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
//! ```

pub mod fixtures;

use std::fmt;

use std::io::{self, ErrorKind, Read, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::typed::{OutputValue, SchemaText, ToolArgs as _};
use mcp_rs_core::wire::framing::{Frame, LineFramer};
use mcp_rs_core::wire::json::JsonWriter;
use mcp_rs_core::wire::jsonrpc::code;
use mcp_rs_core::{
    tools, CallRequest, Config, Dispatch, Event, ServerInfo, Session, SessionStorage, Tool,
    ToolAnnotations, ToolArgs, ToolOutput, ToolResult, ToolSet, ToolsOnly,
};

/// Longest accepted input line in bytes (excluding the newline). Longer lines are answered
/// with a -32600 error stating this limit.
pub const LINE_LIMIT: usize = 64 * 1024;

/// Size of the output buffer: the largest reply the server can write.
pub const OUTPUT_LIMIT: usize = 256 * 1024;

/// Bytes read from the input per `read` call.
const READ_CHUNK: usize = 16 * 1024;

/// Most generated extra tools `--extra-tools` accepts.
pub const MAX_EXTRA_TOOLS: usize = 10_000;

/// Default `tools/list` page size.
pub const DEFAULT_PAGE_SIZE: u16 = 50;

/// Usage text of the `calculator` binary.
pub const USAGE: &str = "\
calculator: an MCP server (stdio, newline-delimited JSON-RPC) offering calculator tools

USAGE:
    calculator [--extra-tools N] [--page-size N] [--blocking]

OPTIONS:
    --extra-tools N   also register N generated echo tools extra_tool_001 ... (0-10000),
                      to exercise tools/list pagination [default: 0]
    --page-size N     tools per tools/list page (1-65535) [default: 50]
    --blocking        serve on the main thread without an async runtime
                      (Server::serve_stdio_blocking): only the synchronous tools, so
                      slow_count is not offered
    -h, --help        print this help to stderr and exit

SOCKET LIMITS (the tcp binary; stdio has no connection limit and no timeouts):
    --max-connections N    concurrent connections (1-1000000); further ones get a
                           JSON-RPC error line and are closed, unless a connection idle
                           for 1 s or more can be closed to make room [default: 1024]
    --idle-timeout SECS    close a connection with no request and no call running for
                           this long [default: 300]
    --line-timeout SECS    close a connection whose started line is not complete within
                           this long [default: 30]
    --write-timeout SECS   close a connection whose peer takes in no output for this long
                           [default: 30]
    SECS is a positive number of seconds up to 31536000 (a year); fractions such as 0.5
    are allowed.

Requests are read from stdin, one JSON-RPC message per line; replies are written to stdout.
Logs go to stderr. The server exits with status 0 when stdin is closed.";

/// Longest timeout `--idle-timeout`, `--line-timeout` and `--write-timeout` accept, in
/// seconds (a year).
pub const MAX_TIMEOUT_SECS: f64 = 365.0 * 24.0 * 3600.0;

/// Most connections `--max-connections` accepts.
pub const MAX_CONNECTIONS: usize = 1_000_000;

// ---- command line -------------------------------------------------------------------------

/// Command-line options of the `calculator` and `tcp` binaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Number of generated `extra_tool_NNN` tools.
    pub extra_tools: usize,
    /// `tools/list` page size.
    pub page_size: u16,
    /// Concurrent socket connections ([`mcp_rs_tokio::Limits::max_connections`]).
    pub max_connections: usize,
    /// Sockets: close a connection idle this long ([`mcp_rs_tokio::Limits::idle_timeout`]).
    pub idle_timeout: Duration,
    /// Sockets: a started line must complete within this long
    /// ([`mcp_rs_tokio::Limits::line_timeout`]).
    pub line_timeout: Duration,
    /// Sockets: a write that makes no progress for this long closes the connection
    /// ([`mcp_rs_tokio::Limits::write_timeout`]).
    pub write_timeout: Duration,
    /// Serve stdio without an async runtime (`--blocking`; synchronous tools only).
    pub blocking: bool,
}

impl Default for Options {
    fn default() -> Self {
        let limits = mcp_rs_tokio::Limits::default();
        Options {
            extra_tools: 0,
            page_size: DEFAULT_PAGE_SIZE,
            max_connections: limits.max_connections,
            idle_timeout: limits.idle_timeout,
            line_timeout: limits.line_timeout,
            write_timeout: limits.write_timeout,
            blocking: false,
        }
    }
}

/// Parses a timeout in seconds: a positive decimal number (fractions allowed) up to
/// [`MAX_TIMEOUT_SECS`].
fn parse_seconds(flag: &str, v: &str) -> Result<Duration, String> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_TIMEOUT_SECS)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            format!(
                "{flag}: expected a positive number of seconds up to {MAX_TIMEOUT_SECS} \
                 (e.g. 30 or 0.5), got {v:?}"
            )
        })
}

/// What the command line asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Serve over stdio with these options.
    Serve(Options),
    /// Print [`USAGE`] and exit.
    Help,
}

/// Parses the command-line arguments (without the program name). The error is a message
/// for the user.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg, None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--extra-tools" => {
                let v = value("--extra-tools")?;
                options.extra_tools = v
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n <= MAX_EXTRA_TOOLS)
                    .ok_or_else(|| {
                        format!("--extra-tools: expected 0 to {MAX_EXTRA_TOOLS}, got {v:?}")
                    })?;
            }
            "--page-size" => {
                let v = value("--page-size")?;
                options.page_size = v
                    .parse::<u16>()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| format!("--page-size: expected 1 to 65535, got {v:?}"))?;
            }
            "--max-connections" => {
                let v = value("--max-connections")?;
                options.max_connections = v
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_CONNECTIONS).contains(n))
                    .ok_or_else(|| {
                        format!("--max-connections: expected 1 to {MAX_CONNECTIONS}, got {v:?}")
                    })?;
            }
            "--idle-timeout" => {
                options.idle_timeout = parse_seconds(&flag, &value("--idle-timeout")?)?;
            }
            "--line-timeout" => {
                options.line_timeout = parse_seconds(&flag, &value("--line-timeout")?)?;
            }
            "--write-timeout" => {
                options.write_timeout = parse_seconds(&flag, &value("--write-timeout")?)?;
            }
            "--blocking" if inline.is_none() => options.blocking = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Serve(options))
}

// ---- server identity and configuration ----------------------------------------------------

/// The calculator server's identity.
pub fn server_info() -> ServerInfo<'static> {
    ServerInfo {
        name: "mcp-rs-calculator",
        version: env!("CARGO_PKG_VERSION"),
        title: Some("Calculator"),
        description: Some("Arithmetic, dice rolls and fortunes: an example server of mcp-rs"),
        instructions: Some(
            "Use add_numbers or calculate for arithmetic (results are IEEE 754 doubles), \
             roll_dice for tabletop dice notation such as 2d6+3, and tell_fortune for fun.",
        ),
        ..Default::default()
    }
}

/// The session configuration: a fresh random key (from the OS), `page_size` tools per page,
/// and no `listChanged` (the tool list never changes while the process runs).
pub fn config(page_size: u16) -> Config {
    Config {
        page_size: page_size.max(1),
        list_changed: false,
        ..Config::new(mcp_rs_tokio::random_key())
    }
}

/// A PRNG seed from the current time and the process id.
pub fn time_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut s =
        (nanos as u64) ^ ((nanos >> 64) as u64) ^ u64::from(std::process::id()).rotate_left(32);
    splitmix64(&mut s)
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A small xorshift64* generator (not cryptographic; good enough for dice).
#[derive(Clone, Debug)]
pub struct XorShift64 {
    state: u64,
}

impl XorShift64 {
    /// A generator from any seed (zero included).
    pub fn new(seed: u64) -> Self {
        let mut s = seed;
        let state = splitmix64(&mut s);
        XorShift64 {
            state: if state == 0 {
                0x2545_f491_4f6c_dd1d
            } else {
                state
            },
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A uniformly distributed number in `0..n` (`n` > 0), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let n = n.max(1);
        // 2^64 mod n: the size of the biased tail to reject.
        let tail = (u64::MAX % n + 1) % n;
        loop {
            let x = self.next_u64();
            if x <= u64::MAX - tail {
                return x % n;
            }
        }
    }
}

// ---- the stdio loop -----------------------------------------------------------------------

/// Serves one MCP session: reads newline-delimited JSON-RPC from `input` until end of input
/// and writes each outgoing message plus `\n` to `output`, flushing after each.
///
/// Lines longer than [`LINE_LIMIT`] get a -32600 reply; a last line without a newline is
/// still handled at end of input. Tool calls the tool set defers are run synchronously
/// through [`ToolSet::call`] inside [`Session::complete`]. Returns `Ok(())` at end of input,
/// or the first I/O error.
pub fn serve<T, R, W>(
    tools: &mut T,
    info: &ServerInfo<'_>,
    config: Config,
    mut input: R,
    mut output: W,
) -> io::Result<()>
where
    T: ToolSet + ?Sized,
    R: Read,
    W: Write,
{
    let mut storage = SessionStorage::<16>::new();
    let mut session = Session::new(info, config, &mut storage);
    let mut line_buf = vec![0u8; LINE_LIMIT];
    let mut framer = LineFramer::new(&mut line_buf);
    let limit = framer.max_len();
    let mut out = vec![0u8; OUTPUT_LIMIT];
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut rest = chunk.get(..n).unwrap_or_default();
        while !rest.is_empty() {
            let taken = framer.push(rest);
            rest = rest.get(taken..).unwrap_or_default();
            while let Some(frame) = framer.next_frame() {
                handle_frame(&mut session, tools, frame, limit, &mut out, &mut output)?;
            }
        }
    }
    while let Some(frame) = framer.finish() {
        handle_frame(&mut session, tools, frame, limit, &mut out, &mut output)?;
    }
    Ok(())
}

/// Runs one frame through the core's pump: the reply, deferred calls (run at once), queued
/// frames and events.
fn handle_frame<T, W>(
    session: &mut Session<'_>,
    tools: &mut T,
    frame: Frame<'_>,
    limit: usize,
    out: &mut [u8],
    output: &mut W,
) -> io::Result<()>
where
    T: ToolSet + ?Sized,
    W: Write,
{
    if let Frame::Oversized { len } = frame {
        eprintln!("calculator: rejecting an input line longer than {limit} bytes ({len}+ bytes)");
    }
    // 0: the session clock stays where it is (this loop has no timers).
    let mut pump = Pump::frame(frame, limit, 0);
    while let Some(step) = pump
        .poll(session, &mut ToolsOnly(&mut *tools), out)
        .map_err(io::Error::other)?
    {
        match step {
            Output::Transmit(tx) => send(output, out, tx.len)?,
            // The calculator answers every call inside `ToolSet::call`, so nothing is
            // normally deferred; a tool set that defers is still served, synchronously.
            Output::Call(call) => {
                let completed = session.complete(call.token(), out, |result| {
                    let ran = call.tool().map(|request| tools.call(request, result));
                    if ran != Some(Dispatch::Done) {
                        result.fail(format_args!("Tool could not be run"));
                    }
                });
                match completed {
                    Ok(Some(tx)) => send(output, out, tx.len)?,
                    Ok(None) => {} // Cancelled meanwhile: nothing to send.
                    Err(e) => {
                        eprintln!("calculator: could not complete a call: {e}");
                        let failed =
                            session.fail(call.token(), code::INTERNAL_ERROR, "Internal error", out);
                        if let Ok(Some(tx)) = failed {
                            send(output, out, tx.len)?;
                        }
                    }
                }
            }
            Output::Event(Event::Initialized(v)) => {
                eprintln!("calculator: client initialized (protocol {v})")
            }
            Output::Event(Event::Cancelled(_)) => eprintln!("calculator: a call was cancelled"),
            Output::Event(Event::LogLevel(level)) => {
                eprintln!("calculator: client set log level {}", level.as_str())
            }
            _ => {}
        }
    }
    Ok(())
}

/// Writes `out[..len]` and a newline, then flushes.
fn send<W: Write>(output: &mut W, out: &[u8], len: usize) -> io::Result<()> {
    output.write_all(out.get(..len).unwrap_or_default())?;
    output.write_all(b"\n")?;
    output.flush()
}

// ---- tool definitions ---------------------------------------------------------------------

/// Pure arithmetic: read-only, idempotent, closed world, not destructive.
const PURE: ToolAnnotations<'static> = ToolAnnotations {
    title: None,
    read_only_hint: Some(true),
    destructive_hint: Some(false),
    idempotent_hint: Some(true),
    open_world_hint: Some(false),
};

/// Random but harmless: read-only, not idempotent, closed world, not destructive.
const RANDOM: ToolAnnotations<'static> = ToolAnnotations {
    idempotent_hint: Some(false),
    ..PURE
};

/// The four seed tools, in `tools/list` order (generated by `#[tools]`).
const SEED_TOOLS: &[Tool<'static>] = CalculatorTools::TOOLS;

/// A generated echo tool; [`CalculatorTools::get`](ToolSet::get) lends its strings.
#[derive(Clone, Debug)]
struct ExtraTool {
    name: String,
    title: String,
    description: String,
    input_schema: String,
}

impl ExtraTool {
    fn new(number: usize, count: usize) -> Self {
        let name = format!("extra_tool_{number:03}");
        ExtraTool {
            title: format!("Extra tool {number:03}"),
            description: format!(
                "Generated tool {number} of {count}: echoes its `value` argument back as text \
                 (exists to exercise tools/list pagination)."
            ),
            input_schema: format!(
                concat!(
                    r#"{{"type":"object","properties":{{"value":{{"type":"string","#,
                    r#""description":"Text for {name} to echo back"}}}},"#,
                    r#""required":["value"],"additionalProperties":false}}"#,
                ),
                name = name
            ),
            name,
        }
    }
}

// ---- typed arguments and results ----------------------------------------------------------
// Schemas and parsers come from the derives: what a struct says is what the schema says.

#[derive(ToolArgs)]
struct AddArgs {
    /// The first addend
    number1: f64,
    /// The second addend
    number2: f64,
}

#[derive(ToolOutput)]
struct Sum {
    /// number1 + number2
    sum: f64,
}

#[derive(ToolArgs, Clone, Copy, Debug, PartialEq, Eq)]
#[arg(rename_all = "lowercase")]
enum Operation {
    Add,
    Subtract,
    Multiply,
    Divide,
}

#[derive(ToolArgs)]
struct CalculateArgs {
    /// The operation to apply
    operation: Operation,
    /// The left operand
    a: f64,
    /// The right operand
    b: f64,
}

#[derive(ToolOutput)]
struct Calculated {
    /// a <operation> b
    result: f64,
}

#[derive(ToolArgs)]
struct DiceArgs {
    /// Dice notation NdS, NdS+M or NdS-M, e.g. 2d6+3, d20, 4d8-1
    #[arg(
        pattern = r"^\s*[0-9]*[dD][0-9]+\s*([+-]\s*[0-9]+)?\s*$",
        examples = ["2d6+3", "d20", "4d8-1"]
    )]
    notation: String,
}

#[derive(ToolOutput)]
struct Rolled {
    /// Each die, in order
    #[arg(min_length = 1, max_length = 100)]
    rolls: Vec<Roll>,
    /// Added to the sum of the rolls
    #[arg(minimum = -1000, maximum = 1000)]
    modifier: i32,
    /// Sum of the rolls plus the modifier
    #[arg(minimum = -999, maximum = 101000)]
    total: i32,
}

/// One die's face. Written by hand: an array item's bounds are not a field attribute.
#[derive(Clone, Copy, Debug)]
struct Roll(u32);

impl OutputValue for Roll {
    const SCHEMA_BODY: SchemaText =
        SchemaText::Text(r#""type":"integer","minimum":1,"maximum":1000"#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.u64(u64::from(self.0));
    }
}

#[derive(ToolArgs, ToolOutput, Clone, Copy, Debug, PartialEq, Eq)]
#[arg(rename_all = "lowercase")]
enum Category {
    Love,
    Career,
    Health,
    Wealth,
    General,
}

impl Category {
    fn as_str(self) -> &'static str {
        match self {
            Category::Love => "love",
            Category::Career => "career",
            Category::Health => "health",
            Category::Wealth => "wealth",
            Category::General => "general",
        }
    }

    fn fortunes(self) -> &'static [&'static str] {
        match self {
            Category::Love => &[
                "a conversation you almost skip will turn out to matter most.",
                "someone is quietly hoping you will reach out first.",
                "an old kindness you showed will find its way back to you.",
                "patience with yourself opens the door for someone else.",
            ],
            Category::Career => &[
                "the task everyone avoids is the one that gets you noticed.",
                "a question you ask in a meeting will change the plan.",
                "your next opportunity arrives disguised as extra work.",
                "a colleague's idea and yours are two halves of the same solution.",
            ],
            Category::Health => &[
                "an earlier night will do more than any remedy this week.",
                "a walk without a destination clears what the screen cannot.",
                "the glass of water you keep forgetting is waiting for you.",
                "your body is telling you something; this week you will listen.",
            ],
            Category::Wealth => &[
                "a small expense you cancel today pays for a good day later.",
                "the best investment in sight is a skill, not a stock.",
                "an unexpected refund or rebate is closer than you think.",
                "counting what you already have reveals more than you expected.",
            ],
            Category::General => &[
                "a door you thought was locked was only stuck.",
                "the answer you seek is in the second idea, not the first.",
                "a detour will show you something the straight road hides.",
                "what you start on a Tuesday will outlast your expectations.",
            ],
        }
    }
}

#[derive(ToolArgs, ToolOutput, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[arg(rename_all = "lowercase")]
enum Mood {
    Optimistic,
    #[default]
    Mysterious,
    Cautious,
}

impl Mood {
    fn as_str(self) -> &'static str {
        match self {
            Mood::Optimistic => "optimistic",
            Mood::Mysterious => "mysterious",
            Mood::Cautious => "cautious",
        }
    }

    fn openings(self) -> &'static [&'static str] {
        match self {
            Mood::Optimistic => &["Good news:", "The stars are smiling:", "Bright days ahead:"],
            Mood::Mysterious => &[
                "The mists part and reveal that",
                "An ancient voice whispers:",
                "The cards are strange tonight:",
            ],
            Mood::Cautious => &[
                "Tread carefully, for",
                "Heed this gentle warning:",
                "Look twice before you leap:",
            ],
        }
    }
}

#[derive(ToolArgs)]
struct FortuneArgs {
    /// What the fortune is about
    category: Category,
    /// The tone of the fortune
    #[arg(default = "mysterious")]
    mood: Option<Mood>,
}

#[derive(ToolOutput)]
struct Fortune {
    category: Category,
    mood: Mood,
    fortune: String,
}

#[derive(ToolArgs)]
struct EchoArgs {
    value: String,
}

// ---- dice ---------------------------------------------------------------------------------

/// A parsed dice roll: `count` dice with `sides` sides, plus `modifier`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dice {
    /// Number of dice (1-100).
    pub count: u32,
    /// Sides per die (2-1000).
    pub sides: u32,
    /// Added to the sum (-1000 to 1000).
    pub modifier: i32,
}

/// Why dice notation was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiceError {
    /// Not of the form `NdS`, `NdS+M` or `NdS-M`.
    Syntax,
    /// The number of dice is outside 1-100 (saturated at `u64::MAX`).
    Count(u64),
    /// The number of sides is outside 2-1000 (saturated at `u64::MAX`).
    Sides(u64),
    /// The modifier is outside -1000 to 1000 (the magnitude, saturated, and whether negative).
    Modifier(bool, u64),
}

impl fmt::Display for DiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DiceError::Syntax => f.write_str(
                "expected NdS with an optional +M or -M modifier, for example 2d6+3, d20 or 4d8-1",
            ),
            DiceError::Count(n) => {
                write!(f, "{n} dice is out of range: roll between 1 and 100 dice")
            }
            DiceError::Sides(n) => {
                write!(f, "{n} sides is out of range: dice need 2 to 1000 sides")
            }
            DiceError::Modifier(neg, m) => {
                let sign = if neg { '-' } else { '+' };
                write!(
                    f,
                    "modifier {sign}{m} is out of range: it must be between -1000 and +1000"
                )
            }
        }
    }
}

/// Parses dice notation: `[N]d S [(+|-) M]`, case-insensitive `d`, surrounding spaces
/// allowed (also around the sign). A space is what ECMAScript's `\s` matches (Unicode
/// white space and U+FEFF, not U+0085), as in the `pattern` of the tool's schema.
pub fn parse_dice(notation: &str) -> Result<Dice, DiceError> {
    fn space(c: char) -> bool {
        (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
    }
    /// A non-empty run of ASCII digits, saturating at `u64::MAX`.
    fn number(s: &str) -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(s.bytes().fold(0u64, |n, b| {
            n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
        }))
    }
    let s = notation.trim_matches(space);
    let (count, rest) = s.split_once(['d', 'D']).ok_or(DiceError::Syntax)?;
    let count = if count.is_empty() {
        1
    } else {
        number(count).ok_or(DiceError::Syntax)?
    };
    let (sides, modifier) = match rest.find(['+', '-']) {
        Some(i) => {
            let (sides, m) = rest.split_at(i);
            let neg = m.starts_with('-');
            let magnitude = number(m.get(1..).unwrap_or_default().trim_matches(space))
                .ok_or(DiceError::Syntax)?;
            (sides.trim_end_matches(space), Some((neg, magnitude)))
        }
        None => (rest, None),
    };
    let sides = number(sides).ok_or(DiceError::Syntax)?;
    let count = u32::try_from(count)
        .ok()
        .filter(|c| (1..=100).contains(c))
        .ok_or(DiceError::Count(count))?;
    let sides = u32::try_from(sides)
        .ok()
        .filter(|s| (2..=1000).contains(s))
        .ok_or(DiceError::Sides(sides))?;
    let modifier = match modifier {
        None => 0,
        Some((neg, m)) if m <= 1000 => {
            let m = i32::try_from(m).unwrap_or(0);
            if neg {
                -m
            } else {
                m
            }
        }
        Some((neg, m)) => return Err(DiceError::Modifier(neg, m)),
    };
    Ok(Dice {
        count,
        sides,
        modifier,
    })
}

impl fmt::Display for Dice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}d{}", self.count, self.sides)?;
        if self.modifier != 0 {
            write!(f, "{:+}", self.modifier)?;
        }
        Ok(())
    }
}

// ---- the tool set -------------------------------------------------------------------------

/// The calculator's tools: the four seed tools, then `extra_tool_001` ... `extra_tool_NNN`.
/// Every call is answered synchronously in [`ToolSet::call`].
#[derive(Debug)]
pub struct CalculatorTools {
    extra: Vec<ExtraTool>,
    rng: XorShift64,
}

impl CalculatorTools {
    /// The seed tools plus `extra_tools` generated echo tools; `seed` seeds the dice and
    /// fortune PRNG (use [`time_seed`]).
    pub fn new(extra_tools: usize, seed: u64) -> Self {
        CalculatorTools {
            extra: (1..=extra_tools)
                .map(|i| ExtraTool::new(i, extra_tools))
                .collect(),
            rng: XorShift64::new(seed),
        }
    }

    /// A generated tool: echoes `value`.
    fn echo(request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) {
        match EchoArgs::parse(request.args()) {
            Ok(EchoArgs { value }) => {
                result.text(&value);
            }
            Err(e) => {
                let name = request.name();
                result.fail(format_args!("Invalid arguments for tool {name}: {e}"));
            }
        }
    }
}

#[tools(no_tool_set)]
impl CalculatorTools {
    /// Adds two numbers and returns their sum.
    #[tool(title = "Add numbers", annotations = PURE)]
    fn add_numbers(
        &mut self,
        AddArgs { number1, number2 }: AddArgs,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<Sum, String> {
        let sum = number1 + number2;
        if !sum.is_finite() {
            return Err(format!(
                "The sum of {number1} and {number2} is too large to represent"
            ));
        }
        result.text_fmt(format_args!("{number1} + {number2} = {sum}"));
        Ok(Sum { sum })
    }

    /// Applies a basic arithmetic operation (add, subtract, multiply, divide) to a and b.
    /// Dividing by zero is reported as a tool error.
    #[tool(title = "Calculate", annotations = PURE)]
    fn calculate(
        &mut self,
        CalculateArgs { operation, a, b }: CalculateArgs,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<Calculated, String> {
        let (symbol, value) = match operation {
            Operation::Add => ('+', a + b),
            Operation::Subtract => ('-', a - b),
            Operation::Multiply => ('*', a * b),
            Operation::Divide if b == 0.0 => return Err("Division by zero".into()),
            Operation::Divide => ('/', a / b),
        };
        if !value.is_finite() {
            return Err(format!(
                "The result of {a} {symbol} {b} is too large to represent"
            ));
        }
        result.text_fmt(format_args!("{a} {symbol} {b} = {value}"));
        Ok(Calculated { result: value })
    }

    /// Rolls dice in tabletop notation NdS+M: N dice (1-100, default 1) with S sides
    /// (2-1000) and an optional modifier M (-1000 to +1000), e.g. 2d6+3, d20, 4d8-1.
    /// Returns every roll and the total.
    #[tool(title = "Roll dice", annotations = RANDOM)]
    fn roll_dice(
        &mut self,
        DiceArgs { notation }: DiceArgs,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<Rolled, String> {
        let dice = parse_dice(&notation).map_err(|e| {
            let shown: String = notation.chars().take(40).collect();
            let more = if notation.chars().nth(40).is_some() {
                "..."
            } else {
                ""
            };
            format!("Invalid dice notation \"{shown}{more}\": {e}")
        })?;
        let rolls: Vec<Roll> = (0..dice.count)
            // `below(sides)` < 1000: the face fits.
            .map(|_| Roll(1 + self.rng.below(u64::from(dice.sides)) as u32))
            .collect();
        // At most 100 x 1000 + 1000: no overflow.
        let total = rolls.iter().map(|r| r.0 as i32).sum::<i32>() + dice.modifier;
        let list = rolls
            .iter()
            .map(|r| r.0.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let modifier = match dice.modifier {
            0 => String::new(),
            m => format!(", modifier {m:+}"),
        };
        result.text_fmt(format_args!(
            "Rolled {dice}: [{list}]{modifier}, total {total}"
        ));
        Ok(Rolled {
            rolls,
            modifier: dice.modifier,
            total,
        })
    }

    /// Tells a (random, purely for fun) fortune for a life category, in the requested mood.
    #[tool(title = "Tell fortune", annotations = RANDOM)]
    fn tell_fortune(
        &mut self,
        FortuneArgs { category, mood }: FortuneArgs,
        result: &mut ToolResult<'_, '_>,
    ) -> Fortune {
        let mood = mood.unwrap_or_default();
        let openings = mood.openings();
        let fortunes = category.fortunes();
        let opening = openings[self.rng.below(openings.len() as u64) as usize];
        let fortune = fortunes[self.rng.below(fortunes.len() as u64) as usize];
        let fortune = format!("{opening} {fortune}");
        result.text_fmt(format_args!(
            "Your {} fortune ({}): {fortune}",
            category.as_str(),
            mood.as_str()
        ));
        Fortune {
            category,
            mood,
            fortune,
        }
    }
}

impl ToolSet for CalculatorTools {
    fn len(&self) -> usize {
        SEED_TOOLS.len() + self.extra.len()
    }

    fn get(&self, index: usize) -> Option<Tool<'_>> {
        if let Some(tool) = SEED_TOOLS.get(index) {
            return Some(*tool);
        }
        let extra = self.extra.get(index - SEED_TOOLS.len())?;
        Some(Tool {
            title: Some(&extra.title),
            description: Some(&extra.description),
            annotations: Some(PURE),
            ..Tool::new(&extra.name, &extra.input_schema)
        })
    }

    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        // By name, not index: the same handlers also serve from a registry with other
        // tools in it (see `calculator_tools`).
        match CalculatorTools::find_tool(request.name()) {
            Some(index) => self.call_tool(index, request, result),
            None => {
                Self::echo(request, result);
                Dispatch::Done
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dice_notation() {
        let ok = |s: &str, count, sides, modifier| {
            assert_eq!(
                parse_dice(s),
                Ok(Dice {
                    count,
                    sides,
                    modifier
                }),
                "{s}"
            )
        };
        ok("2d6+3", 2, 6, 3);
        ok("d20", 1, 20, 0);
        ok("4d8-1", 4, 8, -1);
        ok(" 3D10 + 5 ", 3, 10, 5);
        ok("100d1000-1000", 100, 1000, -1000);
        ok("1d2+1000", 1, 2, 1000);
        for bad in [
            "", "d", "2d", "dd6", "2x6", "2d6+", "2d6+-1", "-2d6", "2d6*2", "2d6+3+1", "1.5d6",
        ] {
            assert_eq!(parse_dice(bad), Err(DiceError::Syntax), "{bad:?}");
        }
        assert_eq!(parse_dice("0d6"), Err(DiceError::Count(0)));
        assert_eq!(parse_dice("101d6"), Err(DiceError::Count(101)));
        assert_eq!(
            parse_dice("99999999999999999999999d6"),
            Err(DiceError::Count(u64::MAX))
        );
        assert_eq!(parse_dice("2d1"), Err(DiceError::Sides(1)));
        assert_eq!(parse_dice("2d1001"), Err(DiceError::Sides(1001)));
        assert_eq!(parse_dice("2d6-1001"), Err(DiceError::Modifier(true, 1001)));
        assert_eq!(
            parse_dice("2d6+5000"),
            Err(DiceError::Modifier(false, 5000))
        );
    }

    /// The schema's `pattern` (enforced by the derived parser) and `parse_dice` agree on
    /// the syntax, spaces included: what the pattern lets through only fails on ranges.
    #[test]
    fn pattern_and_dice_parser_agree() {
        use mcp_rs_core::wire::json::{parse, Limits};
        for notation in [
            "2d6",
            "d20",
            " 4D8 - 1 ",
            "2d6 +3",
            "\u{feff}2d6",
            "2d6\u{3000}",
            "\u{a0}d4+\u{2003}1",
            "\u{85}2d6",
            "2d6\u{85}",
            "2 d6",
            "2d 6",
            "2d6+",
            "2x6",
            "",
            "d",
            "+3",
            "2d6+3+1",
            "1.5d6",
            "0d6",
            "2d1",
            "2d6+5000",
            "2d6\n",
            "\t2d6",
        ] {
            let json = serde_json::json!({ "notation": notation }).to_string();
            let raw = parse(json.as_bytes(), Limits::default()).unwrap();
            let by_pattern = DiceArgs::parse(raw).is_ok();
            let by_parser = !matches!(parse_dice(notation), Err(DiceError::Syntax));
            assert_eq!(by_pattern, by_parser, "{notation:?}");
        }
    }

    #[test]
    fn rng_in_range_and_covers_all_faces() {
        let mut rng = XorShift64::new(0);
        let mut seen = [false; 6];
        for _ in 0..1000 {
            let r = rng.below(6);
            seen[r as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(rng.below(1), 0);
    }

    #[test]
    fn every_definition_validates() {
        let tools = CalculatorTools::new(12, 1);
        assert_eq!(tools.len(), 16);
        for i in 0..tools.len() {
            let tool = tools.get(i).unwrap();
            tool.validate()
                .unwrap_or_else(|e| panic!("{}: {e}", tool.name));
        }
        assert_eq!(tools.get(4).unwrap().name, "extra_tool_001");
        assert_eq!(tools.get(15).unwrap().name, "extra_tool_012");
        assert!(tools.get(16).is_none());
    }

    #[test]
    fn command_line() {
        let args = |a: &[&str]| parse_args(a.iter().map(|s| s.to_string()));
        assert_eq!(args(&[]), Ok(Command::Serve(Options::default())));
        assert_eq!(
            args(&["--extra-tools", "120", "--page-size=7"]),
            Ok(Command::Serve(Options {
                extra_tools: 120,
                page_size: 7,
                ..Options::default()
            }))
        );
        assert_eq!(args(&["--help"]), Ok(Command::Help));
        assert!(args(&["--page-size", "0"]).is_err());
        assert!(args(&["--extra-tools"]).is_err());
        assert!(args(&["--bogus"]).is_err());
    }

    #[test]
    fn socket_limits_on_the_command_line() {
        let args = |a: &[&str]| parse_args(a.iter().map(|s| s.to_string()));
        let limits = mcp_rs_tokio::Limits::default();
        let defaults = Options::default();
        assert_eq!(defaults.max_connections, limits.max_connections);
        assert_eq!(defaults.idle_timeout, limits.idle_timeout);
        assert_eq!(defaults.line_timeout, limits.line_timeout);
        assert_eq!(defaults.write_timeout, limits.write_timeout);
        // The defaults USAGE states are the library's.
        for (flag, default) in [
            ("--max-connections N", limits.max_connections as u64),
            ("--idle-timeout SECS", limits.idle_timeout.as_secs()),
            ("--line-timeout SECS", limits.line_timeout.as_secs()),
            ("--write-timeout SECS", limits.write_timeout.as_secs()),
        ] {
            let text = USAGE.split_once(flag).expect(flag).1;
            let stated = text.split_once("[default: ").expect(flag).1;
            assert!(
                stated.starts_with(&format!("{default}]")),
                "USAGE states another default for {flag} than {default}"
            );
        }
        assert_eq!(
            args(&[
                "--max-connections",
                "50",
                "--idle-timeout=0.5",
                "--line-timeout",
                "2",
                "--write-timeout",
                "1.25",
                "--page-size",
                "9",
            ]),
            Ok(Command::Serve(Options {
                page_size: 9,
                max_connections: 50,
                idle_timeout: Duration::from_millis(500),
                line_timeout: Duration::from_secs(2),
                write_timeout: Duration::from_millis(1250),
                ..Options::default()
            }))
        );
        assert_eq!(
            args(&["--idle-timeout", "31536000", "--max-connections=1000000"]),
            Ok(Command::Serve(Options {
                idle_timeout: Duration::from_secs(31_536_000),
                max_connections: 1_000_000,
                ..Options::default()
            }))
        );
        // The tiniest positive value that is still a duration.
        assert_eq!(
            args(&["--line-timeout", "0.001"]),
            Ok(Command::Serve(Options {
                line_timeout: Duration::from_millis(1),
                ..Options::default()
            }))
        );
        let error = |a: &[&str]| args(a).expect_err(&format!("{a:?} should be refused"));
        for bad in [
            "0", "-1", "", "abc", "nan", "inf", "-inf", "1e400", "31536001", "1s", "0x10", "1e-10",
        ] {
            for flag in ["--idle-timeout", "--line-timeout", "--write-timeout"] {
                let e = error(&[flag, bad]);
                assert!(
                    e.starts_with(&format!("{flag}: expected a positive number of seconds")),
                    "{flag} {bad:?}: {e}"
                );
                assert!(e.contains(&format!("{bad:?}")), "{flag} {bad:?}: {e}");
            }
        }
        for bad in ["0", "-1", "1000001", "many", "1.5", ""] {
            let e = error(&["--max-connections", bad]);
            assert_eq!(
                e,
                format!("--max-connections: expected 1 to 1000000, got {bad:?}")
            );
        }
        assert_eq!(error(&["--write-timeout"]), "--write-timeout needs a value");
        assert_eq!(
            error(&["--max-connections"]),
            "--max-connections needs a value"
        );
    }
}

// ---- the mcp-tokio registry ---------------------------------------------------------------

/// `slow_count`'s arguments.
#[derive(mcp_rs_tokio::ToolArgs)]
pub struct SlowCountArgs {
    /// Count from 1 to n
    #[arg(minimum = 1, maximum = 1000)]
    pub n: u32,
    /// Pause before each step, in milliseconds
    #[arg(minimum = 0, maximum = 10000, default = 100)]
    pub delay_ms: u64,
}

/// `slow_count`'s structured result.
#[derive(mcp_rs_tokio::ToolOutput)]
pub struct Counted {
    /// The last number counted.
    pub count: u32,
}

/// The calculator's async tool (see [`calculator_tools`]).
pub struct SlowCount;

#[mcp_rs_tokio::tools]
impl SlowCount {
    /// Counts from 1 to n, pausing delay_ms (default 100) before each step and reporting
    /// progress; honours cancellation.
    #[tool(
        title = "Slow count",
        read_only,
        destructive = false,
        idempotent,
        open_world = false
    )]
    async fn slow_count(
        &self,
        args: SlowCountArgs,
        ctx: mcp_rs_tokio::Context,
        out: &mut mcp_rs_tokio::ToolReply,
    ) -> Counted {
        let SlowCountArgs { n, delay_ms } = args;
        // A progress notification per step when the client asked for progress; a
        // cancelled call's task is dropped at its next await.
        for i in 1..=n {
            tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
            ctx.progress(f64::from(i), Some(f64::from(n)), Some(format!("{i}/{n}")))
                .await;
        }
        out.push(mcp_rs_tokio::Content::Text(format!("Counted to {n}")));
        Counted { count: n }
    }
}

/// The calculator's registry: the four seed tools, `slow_count`, then `extra_tools`
/// generated echo tools. The synchronous tools share one [`CalculatorTools`] (its PRNG)
/// behind a mutex; they run inside the connection's drive loop.
pub fn calculator_tools(extra_tools: usize, seed: u64) -> mcp_rs_tokio::Tools {
    use std::sync::{Arc, Mutex};
    let calc = CalculatorTools::new(extra_tools, seed);
    let defs: Vec<mcp_rs_tokio::ToolDef> = (0..calc.len())
        .filter_map(|i| calc.get(i))
        .map(|t| mcp_rs_tokio::ToolDef::from_tool(&t))
        .collect();
    let shared = Arc::new(Mutex::new(calc));
    let tools = mcp_rs_tokio::Tools::new();
    let sync = |shared: &Arc<Mutex<CalculatorTools>>| {
        let shared = Arc::clone(shared);
        mcp_rs_tokio::Handler::sync(move |req, result| {
            let mut calc = shared.lock().unwrap_or_else(|e| e.into_inner());
            calc.call(req, result);
        })
    };
    let mut defs = defs.into_iter();
    for def in defs.by_ref().take(SEED_TOOLS.len()) {
        tools.add(def, sync(&shared));
    }
    Arc::new(SlowCount).register(&tools);
    for def in defs {
        tools.add(def, sync(&shared));
    }
    tools
}

/// The calculator's server: identity, session config (page size, cursor key) and
/// generous connection limits (the socket limits and timeouts from `options`).
pub fn calculator_server(options: &Options) -> mcp_rs_tokio::Server {
    let info = server_info();
    let info = mcp_rs_tokio::ServerInfo {
        name: info.name.into(),
        version: info.version.into(),
        title: info.title.map(Into::into),
        description: info.description.map(Into::into),
        website_url: None,
        instructions: info.instructions.map(Into::into),
    };
    let limits = mcp_rs_tokio::Limits {
        max_frame: LINE_LIMIT,
        max_connections: options.max_connections,
        idle_timeout: options.idle_timeout,
        line_timeout: options.line_timeout,
        write_timeout: options.write_timeout,
        ..Default::default()
    };
    let tools = calculator_tools(options.extra_tools, time_seed());
    if options.blocking {
        // No runtime to run it on (`--blocking`): not offered.
        tools.remove("slow_count");
    }
    mcp_rs_tokio::Server::with(info, config(options.page_size), limits, tools)
}

/// Logs to stderr (never stdout, which carries protocol frames), filtered by `RUST_LOG`
/// (default `info`). `RUST_LOG` takes a level and/or `target=level` directives separated by
/// commas (`warn,mcp_rs_tokio=debug`); an invalid value falls back to `info` with a warning.
/// (`tracing_subscriber::filter::Targets` rather than `EnvFilter`: the same directives
/// without span and field filters, and without a regex engine in every example binary:
/// about 0.3 MiB less code.)
pub fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let default = || tracing_subscriber::filter::Targets::new().with_default(tracing::Level::INFO);
    let (filter, invalid) = match std::env::var("RUST_LOG") {
        Ok(value) if !value.trim().is_empty() => match value.parse() {
            Ok(filter) => (filter, None),
            Err(e) => (default(), Some((value, e))),
        },
        _ => (default(), None),
    };
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false),
        )
        .with(filter)
        .try_init();
    if let Some((value, e)) = invalid {
        tracing::warn!(rust_log = %value, error = %e, "RUST_LOG not understood, logging at info");
    }
}

/// The README's Rust code blocks, compiled by `cargo test -p mcp-examples --doc` (this crate
/// is not published, so the README's path stays inside the repository).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// Installs the handlers of the signals that stop a server gracefully (SIGINT and SIGTERM on
/// Unix, Ctrl-C elsewhere) and returns a future that completes, after logging which one,
/// when one arrives. Call it before announcing the server's address: a signal sent as soon
/// as the server announces itself then stops it gracefully instead of killing it.
pub fn stop_signal() -> io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            let name = tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
            };
            tracing::info!("{name}: shutting down");
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                tracing::info!("Ctrl-C: shutting down");
            } else {
                std::future::pending::<()>().await;
            }
        })
    }
}
