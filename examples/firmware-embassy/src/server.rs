//! What the image serves: the six shared tools plus the deferred `countdown`, the
//! temperature sensor as a subscribable resource, and one prompt; and the [`Hooks`] that
//! keep the countdowns in flight.
//!
//! Every message's method is logged with `defmt` as it is read ([`LoggedRx`]), and what
//! the handler and hooks do with it (the tool called, the URI read...); the runner logs
//! the session events itself, at debug level.

use core::fmt::Write as _;
use core::sync::atomic::{AtomicI32, Ordering::Relaxed};

use mcp_rs_core::model::prompts::{
    GetPromptRequest, Prompt, PromptArgument, PromptResult, PromptSet,
};
use mcp_rs_core::model::resources::{ReadRequest, ReadResult, Resource, ResourceSet};
use mcp_rs_core::wire::json::{JsonStr, Kind, RawJson};
use mcp_rs_core::{
    Call, CallRequest, CallToken, Content, Dispatch, Event, Role, ServerHandler, Tool,
    ToolAnnotations, ToolResult, ToolSet,
};
use mcp_rs_embedded::{Deferral, Hooks};

use crate::decimal;
use crate::tools::DeviceTools;

/// The temperature sensor's resource.
pub const SENSOR_URI: &str = "sensor://temperature";

/// The latest sample of the (simulated) sensor, in tenths of a degree Celsius; written by
/// the sampler task, read by `resources/read` and the prompt.
pub static TENTHS_C: AtomicI32 = AtomicI32::new(220);

/// A JSON string for the log (`?` when it has escapes: the log keeps to borrowed text).
fn text(s: JsonStr<'_>) -> &str {
    s.as_borrowed().unwrap_or("?")
}

/// `tenths` of a degree as `21.5` into `buf`.
fn degrees(tenths: i32, buf: &mut [u8; decimal::MAX_LEN]) -> &str {
    decimal::format(i64::from(tenths) * (decimal::ONE / 10), buf)
}

// ---- tools ---------------------------------------------------------------------------------

/// The async tool: answered later, by the MCP task, when its embassy timer has run out.
const COUNTDOWN: Tool<'static> = Tool {
    title: Some("Countdown"),
    description: Some(
        "Waits `ms` milliseconds on an embassy timer, in `steps` equal steps, reporting \
         progress after each one (when the request carries a progressToken); cancellable.",
    ),
    annotations: Some(ToolAnnotations {
        title: None,
        read_only_hint: Some(true),
        destructive_hint: Some(false),
        idempotent_hint: Some(true),
        open_world_hint: Some(false),
    }),
    ..Tool::new(
        "countdown",
        concat!(
            r#"{"type":"object","properties":{"#,
            r#""ms":{"type":"integer","minimum":1,"maximum":60000,"description":"How long to wait, in milliseconds"},"#,
            r#""steps":{"type":"integer","minimum":1,"maximum":100,"default":5,"description":"Progress notifications: one per step"}},"#,
            r#""required":["ms"],"additionalProperties":false}"#
        ),
    )
};

/// `countdown`'s arguments, checked against its schema.
#[derive(Clone, Copy)]
struct CountdownArgs {
    ms: u32,
    steps: u32,
}

/// What is wrong with `countdown`'s arguments.
enum Bad<'i> {
    /// A member the schema does not declare.
    Unknown(JsonStr<'i>),
    /// An argument and its problem.
    Field(&'static str, &'static str),
}

impl CountdownArgs {
    /// The arguments, or what is wrong with them (checked in the shared tools' order:
    /// unknown members first, then the fields in declaration order).
    fn read(args: RawJson<'_>) -> Result<Self, Bad<'_>> {
        if let Some(mut members) = args.members() {
            if let Some((key, _)) = members.find(|(k, _)| !k.eq_str("ms") && !k.eq_str("steps")) {
                return Err(Bad::Unknown(key));
            }
        }
        let int = |key: &'static str, max: u64, default: Option<u32>| {
            let Some(v) = args.get(key) else {
                return default.ok_or(Bad::Field(key, "is required"));
            };
            if v.kind() != Kind::Number {
                return Err(Bad::Field(key, "must be an integer"));
            }
            match v.as_u64() {
                Some(n) if (1..=max).contains(&n) => Ok(n as u32),
                Some(_) => Err(Bad::Field(key, "is out of range")),
                None => Err(Bad::Field(key, "must be an integer")),
            }
        };
        Ok(CountdownArgs {
            ms: int("ms", 60_000, None)?,
            steps: int("steps", 100, Some(5))?,
        })
    }
}

/// The shared tools (`examples/firmware/src/tools.rs`, answered inline) and `countdown`.
pub struct Tools {
    device: DeviceTools,
}

impl ToolSet for Tools {
    fn len(&self) -> usize {
        DeviceTools::TOOLS.len() + 1
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        match DeviceTools::TOOLS.get(index) {
            Some(tool) => Some(*tool),
            None => (index == DeviceTools::TOOLS.len()).then_some(COUNTDOWN),
        }
    }
    fn find(&self, name: JsonStr<'_>) -> Option<usize> {
        DeviceTools::find_tool(name).or_else(|| {
            name.eq_str(COUNTDOWN.name)
                .then_some(DeviceTools::TOOLS.len())
        })
    }
    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        defmt::info!("tool: {=str}", text(request.name()));
        let index = request.tool_index();
        if index < DeviceTools::TOOLS.len() {
            return self.device.call_tool(index, request, result);
        }
        match CountdownArgs::read(request.args()) {
            // Handed to the hooks, which start the timer.
            Ok(_) => Dispatch::Defer,
            Err(Bad::Unknown(key)) => {
                result.fail(format_args!(
                    "Invalid arguments for tool countdown: arguments: unknown member \"{}\"",
                    text(key)
                ));
                Dispatch::Done
            }
            Err(Bad::Field(key, problem)) => {
                result.fail(format_args!(
                    "Invalid arguments for tool countdown: argument `{key}`: {problem}"
                ));
                Dispatch::Done
            }
        }
    }
}

// ---- the sensor resource ---------------------------------------------------------------------

/// The temperature sensor, and whether the (legacy-era) client subscribed to it.
pub struct Sensors {
    /// `resources/subscribe` was received for [`SENSOR_URI`] (and no unsubscribe since).
    pub subscribed: bool,
}

impl ResourceSet for Sensors {
    fn len(&self) -> usize {
        1
    }
    fn get(&self, index: usize) -> Option<Resource<'_>> {
        (index == 0).then_some(Resource {
            uri: SENSOR_URI,
            name: "temperature",
            title: Some("Board temperature"),
            description: Some(
                "The board's temperature in degrees Celsius (simulated), sampled every 500 ms; \
                 subscribe for notifications/resources/updated when it changes",
            ),
            mime_type: Some("text/plain"),
            ..Resource::new(SENSOR_URI, "temperature")
        })
    }
    fn subscribable(&self) -> bool {
        true
    }
    fn subscribe(&mut self, uri: JsonStr<'_>, subscribe: bool) -> bool {
        defmt::info!(
            "resource: {=str} {=str}",
            if subscribe {
                "subscribed"
            } else {
                "unsubscribed"
            },
            text(uri)
        );
        if !uri.eq_str(SENSOR_URI) {
            return false;
        }
        self.subscribed = subscribe;
        true
    }
    fn read(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        defmt::info!("resource: read {=str}", text(request.uri()));
        if request.uri().eq_str(SENSOR_URI) {
            let mut buf = [0u8; decimal::MAX_LEN];
            result.text(
                SENSOR_URI,
                Some("text/plain"),
                degrees(TENTHS_C.load(Relaxed), &mut buf),
            );
        } else {
            result.not_found();
        }
        Dispatch::Done
    }
}

// ---- the prompt ------------------------------------------------------------------------------

static REPORT_ARGS: [PromptArgument<'static>; 1] = [PromptArgument::required(
    "unit",
    "celsius or fahrenheit: the unit of the report",
)];
static PROMPTS: [Prompt<'static>; 1] = [Prompt {
    title: Some("Temperature report"),
    arguments: &REPORT_ARGS,
    ..Prompt::new(
        "temperature_report",
        "Asks for a one-line status report of the board's temperature",
    )
}];

/// The prompts.
pub struct Prompts;

impl PromptSet for Prompts {
    fn len(&self) -> usize {
        PROMPTS.len()
    }
    fn get(&self, index: usize) -> Option<Prompt<'_>> {
        PROMPTS.get(index).copied()
    }
    fn get_prompt(
        &mut self,
        request: &GetPromptRequest<'_>,
        result: &mut PromptResult<'_, '_>,
    ) -> Dispatch {
        defmt::info!("prompt: {=str}", text(request.name()));
        let unit = request.argument("unit");
        let tenths_c = TENTHS_C.load(Relaxed);
        let (tenths, symbol) = match unit {
            Some(u) if u.eq_str("celsius") => (tenths_c, "C"),
            Some(u) if u.eq_str("fahrenheit") => ((tenths_c * 9 + 2) / 5 + 320, "F"),
            _ => {
                result.fail(&"argument `unit`: must be \"celsius\" or \"fahrenheit\"");
                return Dispatch::Done;
            }
        };
        let mut buf = [0u8; decimal::MAX_LEN];
        // Fits: the fixed text is 120 bytes, the number at most 24.
        let mut message = heapless::String::<160>::new();
        let _ = write!(
            message,
            "The board's temperature sensor ({SENSOR_URI}) reads {} {symbol}. \
             Write a one-line status report of it.",
            degrees(tenths, &mut buf)
        );
        result
            .description("The board's temperature, for a status report")
            .message(Role::User, &Content::Text(&message));
        Dispatch::Done
    }
}

// ---- the server and its hooks ----------------------------------------------------------------

/// The whole server.
pub struct Device {
    tools: Tools,
    /// The sensor resource (its subscription flag is read by the MCP task).
    pub sensors: Sensors,
    prompts: Prompts,
}

impl Device {
    /// The server with no subscription.
    pub const fn new() -> Self {
        Device {
            tools: Tools {
                device: DeviceTools::new(),
            },
            sensors: Sensors { subscribed: false },
            prompts: Prompts,
        }
    }
}

impl ServerHandler for Device {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(&mut self.tools)
    }
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        Some(&mut self.sensors)
    }
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(&mut self.prompts)
    }
}

/// Countdowns running at once (each also holds one of the session's call slots).
pub const COUNTDOWNS: usize = 2;

/// A `countdown` call in flight.
#[derive(Clone, Copy)]
pub struct Countdown {
    /// Completes the call.
    pub token: CallToken,
    /// Milliseconds a step.
    pub step_ms: u64,
    /// Steps in all.
    pub steps: u32,
    /// Steps done.
    pub done: u32,
    /// When the next step is done (embassy-time milliseconds).
    pub next_at: u64,
}

/// The application's side of the runner: the countdowns in flight, in a fixed-capacity
/// [`heapless::Vec`] (a third concurrent countdown is refused: answered -32603 at once).
pub struct Pending {
    /// The countdowns, in no particular order.
    pub countdowns: heapless::Vec<Countdown, COUNTDOWNS>,
}

impl Pending {
    /// When the earliest countdown step is due.
    pub fn next_deadline(&self) -> Option<u64> {
        self.countdowns.iter().map(|c| c.next_at).min()
    }
}

impl Hooks for Pending {
    fn deferred(&mut self, call: Call<'_>) -> Deferral {
        let Ok(args) = CountdownArgs::read(call.args()) else {
            return Deferral::Refuse; // not deferred by `Tools::call`: cannot happen
        };
        let step_ms = u64::from((args.ms / args.steps).max(1));
        let countdown = Countdown {
            token: call.token(),
            step_ms,
            steps: args.steps,
            done: 0,
            next_at: crate::board::uptime_ms() + step_ms,
        };
        if self.countdowns.push(countdown).is_err() {
            defmt::warn!("countdown refused: {=usize} already running", COUNTDOWNS);
            return Deferral::Refuse;
        }
        defmt::info!(
            "countdown started: {=u32} ms in {=u32} steps",
            args.ms,
            args.steps
        );
        Deferral::Keep
    }

    fn event(&mut self, event: Event) {
        if let Event::Cancelled(token) = event {
            let before = self.countdowns.len();
            self.countdowns.retain(|c| c.token != token);
            if self.countdowns.len() != before {
                defmt::info!("countdown cancelled");
            }
        }
    }
}

// ---- the request log -------------------------------------------------------------------------

/// The reader the runner reads through: logs the `method` of every message as its bytes
/// go by (so `initialize`, the lists, `ping`... appear in the log too, not only what
/// reaches the handler). A small scanner for `"method"` `:` `"<name>"`, restarted at every
/// mismatch; a `"method"` key nested in params would be logged too (harmless here).
/// Cancel-safe as the inner reader is: it looks at bytes only once a read completed.
pub struct LoggedRx<R> {
    inner: R,
    state: Scan,
    /// The method name so far; its length is in [`Scan::Name`], so a plain array (no
    /// `heapless::String`: the name is checked as UTF-8 once, when it ends).
    name: [u8; 40],
}

#[derive(Clone, Copy)]
enum Scan {
    /// This many bytes of `"method"` matched.
    Key(usize),
    /// Before the `:`.
    Colon,
    /// Before the value's opening quote.
    Quote,
    /// This many bytes of the name read.
    Name(usize),
}

const METHOD_KEY: &[u8] = b"\"method\"";

impl<R> LoggedRx<R> {
    /// Logs what `inner` reads.
    pub const fn new(inner: R) -> Self {
        LoggedRx {
            inner,
            state: Scan::Key(0),
            name: [0; 40],
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        for &b in bytes {
            let space = matches!(b, b' ' | b'\t' | b'\r' | b'\n');
            self.state = match self.state {
                Scan::Key(i) if METHOD_KEY.get(i) == Some(&b) => {
                    if i + 1 == METHOD_KEY.len() {
                        Scan::Colon
                    } else {
                        Scan::Key(i + 1)
                    }
                }
                Scan::Key(_) => Scan::Key(usize::from(b == b'"')),
                Scan::Colon if b == b':' => Scan::Quote,
                Scan::Quote if b == b'"' => Scan::Name(0),
                Scan::Colon | Scan::Quote if space => self.state,
                Scan::Name(n) if b == b'"' => {
                    let name = self.name.get(..n).unwrap_or_default();
                    defmt::info!("request: {=str}", core::str::from_utf8(name).unwrap_or("?"));
                    Scan::Key(0)
                }
                Scan::Name(n) if b != b'\\' && n < self.name.len() => {
                    if let Some(slot) = self.name.get_mut(n) {
                        *slot = b;
                    }
                    Scan::Name(n + 1)
                }
                _ => Scan::Key(0),
            };
        }
    }
}

impl<R: embedded_io_async::ErrorType> embedded_io_async::ErrorType for LoggedRx<R> {
    type Error = R::Error;
}

impl<R: embedded_io_async::Read> embedded_io_async::Read for LoggedRx<R> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, R::Error> {
        let n = self.inner.read(buf).await?;
        self.scan(buf.get(..n).unwrap_or_default());
        Ok(n)
    }
}
