//! # mcp-embedded
//!
//! Heap-free [Model Context Protocol](https://modelcontextprotocol.io) server runners for
//! microcontrollers: they drive the sans-IO [`mcp_rs_core::Session`] over a byte stream (a
//! UART, a USB CDC-ACM port, a TCP socket) with newline framing
//! ([`mcp_rs_core::wire::framing::LineFramer`]) and caller-owned buffers sized by const generics.
//!
//! - [`blocking::Runner`]: over [`embedded_io::Read`] + [`embedded_io::Write`], for a
//!   superloop or a dedicated thread;
//! - [`asynch::Runner`]: over [`embedded_io_async::Read`] + [`embedded_io_async::Write`],
//!   for embassy or any other executor.
//!
//! Both serve a whole [`ServerHandler`] (tools, resources with subscriptions, prompts,
//! completion: whatever mcp-rs-core features the firmware turns on) in both protocol eras
//! (the legacy `initialize` handshake and the stateless 2026-07-28 revision), through the
//! core's [`Pump`]: every exchange is the core's, the runners add I/O, time and resilience.
//!
//! - **Deferred requests.** A tool, read, prompt or completion that returns
//!   [`Dispatch::Defer`](mcp_rs_core::Dispatch::Defer) is handed to the application's
//!   [`Hooks::deferred`] with its [`CallToken`](mcp_rs_core::CallToken); the application
//!   completes it later (from an interrupt-fed queue, another task) through the runner:
//!   `complete`, `fail`, `progress`, or `command` for any other session command. A client's
//!   cancellation reaches [`Hooks::event`] as [`Event::Cancelled`]. The runner never keeps
//!   the session, server or hooks: each method borrows them for its own duration.
//! - **Time** comes from a [`Clock`] (`fn() -> u64`, milliseconds) given with
//!   `with_clock`; it is passed to every exchange and command, and `handle_timeout` runs
//!   the session's timers when [`Session::poll_timeout`] is due (see each runner's module
//!   docs for how a loop waits for both input and time).
//! - **Notifications when the device says so:** `list_changed` (tools, prompts,
//!   resources) and `resource_updated` (`notifications/resources/updated` for a URI the
//!   client subscribed to: a legacy session's, whose subscriptions the application keeps,
//!   and one per 2026-07-28 `subscriptions/listen` stream whose `resourceSubscriptions`
//!   named it, kept by the core), written with everything else the session queued.
//! - **A receive error never wedges the link.** When the reader fails (a UART overrun,
//!   framing or parity error, a dropped USB packet), the partial line is dropped, the error
//!   is reported ([`Step::RxError`], [`Stats::rx_errors`]) and the runner resyncs: bytes up
//!   to and including the next `\n` are discarded, then framing resumes.
//! - **Oversized lines** (longer than the receive buffer) are answered once with a
//!   JSON-RPC `-32600` and skipped up to their newline. A reply too large for the transmit
//!   buffer is answered -32603 with `data.required`; a completion too large is refused with
//!   [`Error::Call`]`(`[`CallError::BufferTooSmall`]`)` (the call stays in flight, fail it
//!   or complete it with less). Nothing is dropped silently.
//!
//! A server with tools only and answered inline keeps the short entry points
//! (`runner.step(&mut session, &mut tools, ...)`): the smallest image.
//!
//! Optional [`defmt`](https://defmt.ferrous-systems.com) logging of receive errors,
//! oversized lines and session events: enable the `defmt` feature. Feature `requests`
//! lets deferred calls send requests to the client (`command`) and hands their responses
//! to `Hooks::response`.
//!
//! ## Example: a deferred tool call (blocking)
//!
//! ```
//! use mcp_rs_core::{
//!     CallRequest, CallToken, Config, Dispatch, SecretKey, ServerHandler, ServerInfo,
//!     Session, SessionStorage, Tool, ToolResult, ToolSet,
//! };
//! use mcp_rs_embedded::{blocking::Runner, Buffers, Deferral, Hooks};
//!
//! static TOOLS: [Tool<'static>; 1] = [Tool::new("measure", r#"{"type":"object"}"#)];
//!
//! /// The server: one tool, measured by an ADC conversion that finishes later.
//! struct Device;
//! impl ToolSet for Device {
//!     fn len(&self) -> usize { TOOLS.len() }
//!     fn get(&self, i: usize) -> Option<Tool<'_>> { TOOLS.get(i).copied() }
//!     fn call(&mut self, _: &CallRequest<'_>, _: &mut ToolResult<'_, '_>) -> Dispatch {
//!         // start_conversion();
//!         Dispatch::Defer
//!     }
//! }
//! impl ServerHandler for Device {
//!     fn tools(&mut self) -> Option<&mut dyn ToolSet> { Some(self) }
//! }
//!
//! /// The hooks: the one conversion in flight (a bounded queue in general).
//! #[derive(Default)]
//! struct Pending(Option<CallToken>);
//! impl Hooks for Pending {
//!     fn deferred(&mut self, call: mcp_rs_core::Call<'_>) -> Deferral {
//!         match self.0 {
//!             None => { self.0 = Some(call.token()); Deferral::Keep }
//!             Some(_) => Deferral::Refuse, // busy: answered -32603 at once
//!         }
//!     }
//!     fn event(&mut self, event: mcp_rs_core::Event) {
//!         if let mcp_rs_core::Event::Cancelled(token) = event {
//!             if self.0 == Some(token) { self.0 = None; } // stop_conversion();
//!         }
//!     }
//! }
//!
//! fn uptime_ms() -> u64 { 42 } // a SysTick counter, embassy's Instant::now()...
//!
//! let info = ServerInfo { name: "device", version: "1.0.0", ..Default::default() };
//! let mut storage = SessionStorage::<2>::new(); // 2 deferred calls in flight at most
//! let mut session = Session::new(&info, Config::new(SecretKey([0x5a; 16])), &mut storage);
//! let mut buffers = Buffers::<512, 1024>::new(); // 512 B lines in, 1 KiB frames out
//! let mut runner = Runner::new(&mut buffers).with_clock(uptime_ms);
//! let (mut device, mut pending) = (Device, Pending::default());
//!
//! // Any `embedded_io::Read` / `Write`: here byte slices stand in for a UART.
//! let mut rx: &[u8] = concat!(
//!     r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"measure","#,
//!     r#""arguments":{},"_meta":{"progressToken":"p","#,
//!     r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
//!     r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#, "\n",
//! ).as_bytes();
//! let mut wire = [0u8; 1024];
//! let mut tx: &mut [u8] = &mut wire;
//!
//! // The loop: read and answer, then complete what finished (an ISR set a flag, a
//! // channel received a value...). A superloop whose reader implements
//! // `embedded_io::ReadReady` calls `poll_with`, which never blocks.
//! runner.step_with(&mut session, &mut device, &mut pending, &mut rx, &mut tx).unwrap();
//! let token = pending.0.take().expect("the call was handed to the hooks");
//! runner.progress(&mut session, &mut pending, &mut tx, token, 1.0, Some(2.0), None).unwrap();
//! let sent = runner
//!     .complete(&mut session, &mut pending, &mut tx, token, |r| { r.text("21.5 C"); })
//!     .unwrap();
//! assert!(sent);
//!
//! let left = tx.len();
//! let text = core::str::from_utf8(&wire[..1024 - left]).unwrap();
//! let mut lines = text.lines();
//! assert!(lines.next().unwrap().contains(r#""method":"notifications/progress""#));
//! assert!(lines.next().unwrap().starts_with(
//!     r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"21.5 C"}]"#
//! ));
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

use core::fmt;

use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::wire::framing::{Frame, LineFramer};
use mcp_rs_core::wire::jsonrpc::code;
use mcp_rs_core::{Call, CallError, Event, ServerHandler, Session, Transmit, MIN_OUTPUT};

pub use embedded_io::ErrorKind;

pub mod asynch;
pub mod blocking;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
#[cfg(feature = "tasks")]
#[cfg_attr(docsrs, doc(cfg(feature = "tasks")))]
pub mod tasks;

#[cfg(feature = "defmt")]
macro_rules! log_warn {
    ($($t:tt)*) => { defmt::warn!($($t)*) };
}
#[cfg(not(feature = "defmt"))]
macro_rules! log_warn {
    ($($t:tt)*) => {{}};
}
#[cfg(feature = "defmt")]
macro_rules! log_debug {
    ($($t:tt)*) => { defmt::debug!($($t)*) };
}
#[cfg(not(feature = "defmt"))]
macro_rules! log_debug {
    ($($t:tt)*) => {{}};
}

/// The message of the error reply (-32603) to a deferred request the [`Hooks`] refused
/// (the `()` hooks of the tools-only entry points refuse every one).
pub const DEFERRED_CALL_MESSAGE: &str = "Deferred requests are not taken by this server";

/// A clock: milliseconds on a counter that never goes backwards (uptime is fine).
///
/// A plain function pointer, because a microcontroller's time is global: embassy-time's
/// `|| Instant::now().as_millis()`, an RTIC monotonic's `now()`, or a SysTick counter read
/// from a `static` all coerce to it. It keeps the runners non-generic over the clock (the
/// embassy habit: handles stay non-generic) and costs one indirect call per exchange; a
/// virtual clock for host tests is a `static` (or thread-local) behind a `fn`. A clock
/// that needs state of its own (a driver handle) does not fit; read such a timer into a
/// `static` from its interrupt instead.
pub type Clock = fn() -> u64;

/// What [`Hooks::deferred`] does with a deferred request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Deferral {
    /// The application took the token and completes the request later through the
    /// runner (`complete`, `fail`, ..., or `command` for any other kind).
    Keep,
    /// The runner answers at once with -32603 [`DEFERRED_CALL_MESSAGE`].
    Refuse,
}

/// What the application hears from a runner while it serves: deferred requests, client
/// responses and session events. Every method has a default; `()` is the hooks of a server
/// that answers everything inline (it refuses deferred requests).
///
/// The hooks are called synchronously from inside a runner method, between two frames:
/// they must not block. Keep what a deferred request needs (its [`CallToken`](mcp_rs_core::CallToken),
/// arguments parsed into owned values) in a bounded queue of your own and complete it
/// later through the runner. The hooks are a separate object from the [`ServerHandler`],
/// so the handler can stay a description of the server while the hooks own the work queue.
pub trait Hooks {
    /// A request the handler deferred ([`Dispatch::Defer`](mcp_rs_core::Dispatch::Defer)
    /// from a tool, a prompt, a resource read or a completion). The view borrows the input
    /// line: copy what you need before returning. The default refuses.
    fn deferred(&mut self, call: Call<'_>) -> Deferral {
        let _ = call;
        Deferral::Refuse
    }
    /// A session event: [`Event::Cancelled`] means the client cancelled a deferred request
    /// (drop its work; completing it later sends nothing), [`Event::RequestTimedOut`] that
    /// a request to the client got no answer in time.
    fn event(&mut self, event: Event) {
        let _ = event;
    }
    /// The client's response to a request a deferred call sent (feature `requests`; the
    /// view borrows the input line). Responses are dropped by default.
    #[cfg(feature = "requests")]
    #[cfg_attr(docsrs, doc(cfg(feature = "requests")))]
    fn response(&mut self, response: mcp_rs_core::ClientResponse<'_>) {
        let _ = response;
    }
}

/// Refuses every deferred request and ignores events: the hooks of a server that answers
/// everything inline.
impl Hooks for () {}

/// Caller-owned memory of a runner: `RX` bytes for the longest incoming line (excluding its
/// newline) and `TX` bytes for the longest outgoing frame.
///
/// `TX` must be at least [`MIN_OUTPUT`] and `RX` at least 1 (checked at compile time). Put
/// it in a `static` (with `static_cell` or `cortex_m::singleton!`) to have it show up in
/// the static RAM budget rather than on the stack.
#[derive(Debug)]
pub struct Buffers<const RX: usize, const TX: usize> {
    rx: [u8; RX],
    tx: [u8; TX],
}

impl<const RX: usize, const TX: usize> Buffers<RX, TX> {
    const VALID: () = {
        assert!(RX >= 1, "the receive buffer needs at least one byte");
        assert!(
            TX >= MIN_OUTPUT,
            "the transmit buffer must hold at least mcp_rs_core::MIN_OUTPUT bytes"
        );
    };

    /// Zeroed buffers (usable in a `static`).
    pub const fn new() -> Self {
        let () = Self::VALID;
        Buffers {
            rx: [0; RX],
            tx: [0; TX],
        }
    }
}

impl<const RX: usize, const TX: usize> Default for Buffers<RX, TX> {
    fn default() -> Self {
        Self::new()
    }
}

/// Counters of what a runner has seen since it was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Stats {
    /// Complete lines handed to the session.
    pub messages: u32,
    /// Frames written (replies and notifications).
    pub frames_sent: u32,
    /// Errors returned by the reader (overruns, framing or parity errors...).
    pub rx_errors: u32,
    /// Bytes discarded while resyncing after a receive error.
    pub discarded: u32,
    /// Lines longer than the receive buffer (each answered with `-32600`).
    pub oversized: u32,
    /// Frames that did not fit the transmit buffer and were not sent: a frame the session
    /// queued stays queued (offered again by the next exchange), a command's frame is
    /// refused with [`Error::Call`]`(`[`CallError::BufferTooSmall`]`)`. (A reply too large
    /// for the buffer never gets here: the core answers -32603 with `data.required`.)
    pub tx_overflows: u32,
    /// Deferred requests the hooks kept.
    pub deferred: u32,
}

/// What one runner step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// This many bytes were read and every complete line among them was answered.
    Received(usize),
    /// The reader reported end of input; a final line without newline was answered.
    Eof,
    /// The reader failed. The partial line was dropped and input up to and including the
    /// next `\n` will be discarded; the runner stays usable.
    RxError(ErrorKind),
    /// Nothing to read yet ([`blocking::Runner::poll_with`]); a due timeout was handled.
    Idle,
}

/// A runner error. `Write` and `WriteZero` are fatal (the link is broken); `Call` is not
/// (nothing was sent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error<E> {
    /// The writer returned an error.
    Write(E),
    /// The writer accepted zero bytes of a non-empty frame.
    WriteZero,
    /// The session refused a command (an unknown or finished call, a call of another kind,
    /// progress not increasing, or a frame larger than the transmit buffer:
    /// [`CallError::BufferTooSmall`], after which the call is still in flight and can be
    /// failed or completed with less). Nothing was sent.
    Call(CallError),
}

impl<E: fmt::Debug> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Write(e) => write!(f, "MCP transport write failed: {e:?}"),
            Error::WriteZero => f.write_str("MCP transport writer accepted zero bytes"),
            Error::Call(e) => write!(f, "MCP command refused: {e}"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for Error<E> {}

/// The I/O-free state shared by both runners: framer, transmit buffer, resync flag, clock,
/// stats.
#[derive(Debug)]
struct Core<'b> {
    framer: LineFramer<'b>,
    tx: &'b mut [u8],
    /// Discarding input up to and including the next `\n` after a receive error.
    resync: bool,
    /// The reader reported end of input; the next answer ends the stream.
    eof: bool,
    clock: Option<Clock>,
    stats: Stats,
}

impl<'b> Core<'b> {
    fn new<const RX: usize, const TX: usize>(buffers: &'b mut Buffers<RX, TX>) -> Self {
        Core {
            framer: LineFramer::new(&mut buffers.rx),
            tx: &mut buffers.tx,
            resync: false,
            eof: false,
            clock: None,
            stats: Stats::default(),
        }
    }

    /// The time to pass in: the clock's, or 0 (the session clock stays where it is).
    fn now(&self) -> u64 {
        self.clock.map_or(0, |clock| clock())
    }

    /// Where the next read goes (empty only while a complete line waits to be answered).
    fn read_buf(&mut self) -> &mut [u8] {
        self.framer.spare()
    }

    /// Takes the outcome of a read into [`read_buf`](Self::read_buf).
    fn received(&mut self, read: Result<usize, ErrorKind>) -> Step {
        match read {
            Ok(0) => {
                self.eof = true;
                Step::Eof
            }
            Ok(n) => {
                self.accept(n);
                Step::Received(n)
            }
            Err(kind) => self.rx_error(kind),
        }
    }

    /// Accepts `n` bytes just read into [`read_buf`](Self::read_buf); while resyncing, the
    /// framer discards them up to and including the next newline.
    fn accept(&mut self, n: usize) {
        let before = self.framer.buffered();
        self.framer.commit(n);
        if self.resync {
            let kept = self.framer.buffered().saturating_sub(before);
            let dropped = u32::try_from(n.saturating_sub(kept)).unwrap_or(u32::MAX);
            self.stats.discarded = self.stats.discarded.saturating_add(dropped);
            if !self.framer.is_discarding() {
                self.resync = false;
                log_debug!("mcp: resynced");
            }
        }
    }

    /// The reader failed: drop the partial line and resync at the next newline.
    fn rx_error(&mut self, kind: ErrorKind) -> Step {
        self.framer.resync();
        self.resync = true;
        self.stats.rx_errors = self.stats.rx_errors.saturating_add(1);
        log_warn!(
            "mcp: receive error ({}), resyncing at the next newline",
            kind
        );
        Step::RxError(kind)
    }

    /// After the last frame of a stream that ended: ready for a new one.
    fn end_of_input(&mut self) {
        self.framer.reset();
        self.resync = false;
        self.eof = false;
    }
}

/// The next frame to answer: complete lines, then (at the end of input, unless resyncing)
/// a final line without newline.
fn next_frame<'f>(framer: &'f mut LineFramer<'_>, ending: bool) -> Option<Frame<'f>> {
    if ending {
        framer.finish()
    } else {
        framer.next_frame()
    }
}

/// A server with nothing: what a drain (no input) polls the pump with.
struct NoServer;

impl ServerHandler for NoServer {}

/// One exchange through the core's [`Pump`], with the runners' policy on top of it
/// (deferred requests go to the hooks, refused ones are failed) and their statistics.
struct Exchange<'i> {
    pump: Pump<'i>,
}

impl<'i> Exchange<'i> {
    /// An exchange for `frame` at `now_ms`, counted in `stats` (and logged when oversized).
    fn new(frame: Frame<'i>, limit: usize, now_ms: u64, stats: &mut Stats) -> Self {
        match frame {
            Frame::Oversized { len } => {
                stats.oversized = stats.oversized.saturating_add(1);
                log_warn!(
                    "mcp: line of at least {=usize} bytes exceeds the {=usize}-byte buffer",
                    len,
                    limit
                );
                let _ = len;
            }
            Frame::Line(_) => stats.messages = stats.messages.saturating_add(1),
        }
        Exchange {
            pump: Pump::frame(frame, limit, now_ms),
        }
    }

    /// An exchange without input: what the session queued (after a command or a timeout).
    fn drain() -> Self {
        Exchange {
            pump: Pump::drain(),
        }
    }

    /// The length of the next frame to send from `tx`, or `None` when the exchange is over.
    fn next<S: ServerHandler + ?Sized, H: Hooks + ?Sized>(
        &mut self,
        session: &mut Session<'_>,
        server: &mut S,
        hooks: &mut H,
        tx: &mut [u8],
        stats: &mut Stats,
    ) -> Option<usize> {
        loop {
            match self.pump.poll(session, server, tx) {
                Ok(Some(Output::Transmit(t))) => return Some(t.len),
                Ok(Some(Output::Call(call))) => {
                    let token = call.token();
                    if hooks.deferred(call) == Deferral::Keep {
                        stats.deferred = stats.deferred.saturating_add(1);
                        continue;
                    }
                    match session.fail(token, code::INTERNAL_ERROR, DEFERRED_CALL_MESSAGE, tx) {
                        Ok(Some(t)) => return Some(t.len),
                        Ok(None) => {}
                        Err(_) => stats.tx_overflows = stats.tx_overflows.saturating_add(1),
                    }
                }
                Ok(Some(Output::Event(event))) => {
                    log_debug!("mcp: session event {=str}", event_name(&event));
                    hooks.event(event);
                }
                #[cfg(feature = "requests")]
                Ok(Some(Output::Response(response))) => hooks.response(response),
                // A `subscriptions/listen` stream: on a byte stream its notifications
                // simply follow on the same link.
                Ok(Some(_)) => {}
                Ok(None) => return None,
                // A queued frame larger than the transmit buffer stays queued: counted, and
                // the exchange ends (the buffer cannot grow).
                Err(_) => {
                    stats.tx_overflows = stats.tx_overflows.saturating_add(1);
                    return None;
                }
            }
        }
    }
}

/// Runs a command on the session with the transmit buffer: `Ok(Some(len))` when it wrote
/// a frame. A frame too large for the buffer is counted.
fn run_command(
    session: &mut Session<'_>,
    tx: &mut [u8],
    stats: &mut Stats,
    command: impl FnOnce(&mut Session<'_>, &mut [u8]) -> Result<Option<Transmit>, CallError>,
) -> Result<Option<usize>, CallError> {
    match command(session, tx) {
        Ok(t) => Ok(t.map(|t| t.len)),
        Err(e) => {
            if matches!(e, CallError::BufferTooSmall { .. }) {
                stats.tx_overflows = stats.tx_overflows.saturating_add(1);
                log_warn!("mcp: a command's frame exceeds the transmit buffer");
            }
            Err(e)
        }
    }
}

/// A resource changed, as a command run until it writes nothing: each run writes one
/// `notifications/resources/updated`, a legacy session's first
/// ([`Session::resource_updated`]), then one per 2026-07-28 `subscriptions/listen` stream
/// subscribed to `uri` ([`Session::resource_updated_next`]). `next` is where the runs are:
/// `None` before the first, then the cursor over the streams (start at `Some(0)` to skip
/// the legacy session).
fn resource_updated(
    session: &mut Session<'_>,
    uri: &str,
    next: &mut Option<usize>,
    tx: &mut [u8],
) -> Result<Option<Transmit>, CallError> {
    let too_small = |e: mcp_rs_core::wire::json::BufferTooSmall| CallError::BufferTooSmall {
        required: e.required,
    };
    if next.is_none() {
        let legacy = session.resource_updated(uri, tx).map_err(too_small)?;
        *next = Some(0);
        if legacy.is_some() {
            return Ok(legacy);
        }
    }
    let from = next.get_or_insert(0);
    session
        .resource_updated_next(uri, from, tx)
        .map_err(too_small)
}

#[cfg(feature = "defmt")]
fn event_name(event: &mcp_rs_core::Event) -> &'static str {
    match event {
        mcp_rs_core::Event::Initialized(_) => "initialized",
        mcp_rs_core::Event::Cancelled(_) => "cancelled",
        mcp_rs_core::Event::LogLevel(_) => "log level",
        _ => "other",
    }
}

/// Appends the newline to a frame in place when there is room, so most frames go out in a
/// single write. Returns the bytes to write and whether a separate `\n` must follow.
fn frame_bytes(tx: &mut [u8], len: usize) -> (&[u8], bool) {
    match tx.get_mut(len) {
        Some(slot) => {
            *slot = b'\n';
            (tx.get(..=len).unwrap_or_default(), false)
        }
        None => (tx.get(..len).unwrap_or_default(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_bytes_appends_newline_when_room() {
        let mut tx = [b'x'; 4];
        assert_eq!(frame_bytes(&mut tx, 2), (&b"xx\n"[..], false));
        assert_eq!(frame_bytes(&mut tx, 4), (&b"xx\nx"[..], true));
    }

    #[test]
    fn resync_keeps_bytes_after_newline() {
        let mut buffers = Buffers::<16, { mcp_rs_core::MIN_OUTPUT }>::new();
        let mut core = Core::new(&mut buffers);
        assert_eq!(
            core.rx_error(ErrorKind::Other),
            Step::RxError(ErrorKind::Other)
        );
        let n = {
            let buf = core.read_buf();
            buf[..5].copy_from_slice(b"ab\ncd");
            5
        };
        core.accept(n);
        assert!(!core.resync);
        assert_eq!(core.stats.discarded, 3);
        core.framer.commit(0);
        let buf = core.read_buf();
        buf[..1].copy_from_slice(b"\n");
        core.accept(1);
        assert_eq!(core.framer.next_frame(), Some(Frame::Line(b"cd")));
    }
}
