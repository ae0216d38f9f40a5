//! # mcp-embedded
//!
//! Heap-free [Model Context Protocol](https://modelcontextprotocol.io) server runners for
//! microcontrollers: they drive the sans-IO [`mcp_rs_core::Session`] over a byte stream (a
//! UART, a USB CDC-ACM port, a TCP socket) with newline framing
//! ([`mcp_rs_core::wire::framing::LineFramer`]) and caller-owned buffers sized by const generics.
//!
//! - [`blocking::Runner`]: over [`embedded_io::Read`] + [`embedded_io::Write`], for a
//!   superloop (`loop { runner.step(...) }`) or a dedicated thread;
//! - [`asynch::Runner`]: over [`embedded_io_async::Read`] + [`embedded_io_async::Write`],
//!   for embassy or any other executor.
//!
//! Both serve both protocol eras (the legacy `initialize` handshake and the stateless
//! 2026-07-28 revision) exactly as the core does; they add only I/O and resilience:
//!
//! - **A receive error never wedges the link.** When the reader fails (a UART overrun,
//!   framing or parity error, a dropped USB packet), the partial line is dropped, the error
//!   is reported ([`Step::RxError`], [`Stats::rx_errors`]) and the runner resyncs: bytes up
//!   to and including the next `\n` are discarded, then framing resumes.
//! - **Oversized lines** (longer than the receive buffer) are answered once with a
//!   JSON-RPC `-32600` and skipped up to their newline.
//! - Tool calls run synchronously inside [`ToolSet::call`]. A call
//!   the tool set defers ([`Dispatch::Defer`](mcp_rs_core::Dispatch::Defer)) is answered at
//!   once with a JSON-RPC internal error, since these runners have nowhere to run it.
//!
//! Optional [`defmt`](https://defmt.ferrous-systems.com) logging of receive errors,
//! oversized lines and session events: enable the `defmt` feature.
//!
//! ## Example (blocking)
//!
//! ```
//! use mcp_rs_core::{Config, ServerInfo, Session, SessionStorage, Tool};
//! use mcp_rs_embedded::{blocking::Runner, Buffers};
//!
//! static TOOLS: [Tool<'static>; 1] = [Tool::new("noop", r#"{"type":"object"}"#)];
//! let info = ServerInfo { name: "demo", version: "1.0.0", ..Default::default() };
//! let mut storage = SessionStorage::<1>::new();
//! let mut session = Session::new(&info, Config::new(mcp_rs_core::SecretKey([0x5a; 16])), &mut storage);
//! let mut buffers = Buffers::<512, 1024>::new(); // 512 B lines in, 1 KiB frames out
//! let mut runner = Runner::new(&mut buffers);
//!
//! // Any `embedded_io::Read` / `Write`: here byte slices stand in for a UART.
//! let mut rx: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
//! let mut tx = [0u8; 128];
//! let mut out: &mut [u8] = &mut tx;
//! runner.run(&mut session, &mut TOOLS.clone()[..], &mut rx, &mut out).unwrap(); // until EOF
//! let left = out.len();
//! assert_eq!(&tx[..128 - left], b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use core::fmt;

use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::wire::framing::{Frame, LineFramer};
use mcp_rs_core::wire::jsonrpc::code;
use mcp_rs_core::{Session, ToolSet, ToolsOnly, MIN_OUTPUT};

pub use embedded_io::ErrorKind;

pub mod asynch;
pub mod blocking;

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

/// The message of the error reply to a call that a [`ToolSet`] deferred.
pub const DEFERRED_CALL_MESSAGE: &str = "Deferred tool calls are not supported by this runner";

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
    /// Frames the core could not write into the transmit buffer (dropped).
    pub tx_overflows: u32,
}

/// What one [`blocking::Runner::step`] or [`asynch::Runner::step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// This many bytes were read and every complete line among them was answered.
    Received(usize),
    /// The reader reported end of input; a final line without newline was answered.
    Eof,
    /// The reader failed. The partial line was dropped and input up to and including the
    /// next `\n` will be discarded; the runner stays usable.
    RxError(ErrorKind),
}

/// A fatal runner error: the output side failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error<E> {
    /// The writer returned an error.
    Write(E),
    /// The writer accepted zero bytes of a non-empty frame.
    WriteZero,
}

impl<E: fmt::Debug> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Write(e) => write!(f, "MCP transport write failed: {e:?}"),
            Error::WriteZero => f.write_str("MCP transport writer accepted zero bytes"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for Error<E> {}

/// The I/O-free state shared by both runners: framer, transmit buffer, resync flag, stats.
#[derive(Debug)]
struct Core<'b> {
    framer: LineFramer<'b>,
    tx: &'b mut [u8],
    /// Discarding input up to and including the next `\n` after a receive error.
    resync: bool,
    stats: Stats,
}

impl<'b> Core<'b> {
    fn new<const RX: usize, const TX: usize>(buffers: &'b mut Buffers<RX, TX>) -> Self {
        Core {
            framer: LineFramer::new(&mut buffers.rx),
            tx: &mut buffers.tx,
            resync: false,
            stats: Stats::default(),
        }
    }

    /// Where the next read goes.
    fn read_buf(&mut self) -> &mut [u8] {
        self.framer.spare()
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
}

/// One exchange through the core's [`Pump`]: the runners' policy on top of it (deferred
/// calls are failed: these runners answer tools inline) and their statistics.
struct Exchange<'i> {
    pump: Pump<'i>,
}

impl<'i> Exchange<'i> {
    /// An exchange for `frame`, counted in `stats` (and logged when oversized).
    fn new(frame: Frame<'i>, limit: usize, stats: &mut Stats) -> Self {
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
            pump: Pump::frame(frame, limit, 0),
        }
    }

    /// The length of the next frame to send from `tx`, or `None` when the exchange is over.
    fn next<T: ToolSet + ?Sized>(
        &mut self,
        session: &mut Session<'_>,
        tools: &mut T,
        tx: &mut [u8],
        stats: &mut Stats,
    ) -> Option<usize> {
        loop {
            match self.pump.poll(session, &mut ToolsOnly(tools), tx) {
                Ok(Some(Output::Transmit(t))) => return Some(t.len),
                Ok(Some(Output::Call(call))) => {
                    match session.fail(
                        call.token(),
                        code::INTERNAL_ERROR,
                        DEFERRED_CALL_MESSAGE,
                        tx,
                    ) {
                        Ok(Some(t)) => return Some(t.len),
                        Ok(None) => {}
                        Err(_) => stats.tx_overflows = stats.tx_overflows.saturating_add(1),
                    }
                }
                Ok(Some(Output::Event(event))) => {
                    log_debug!("mcp: session event {=str}", event_name(&event));
                    let _ = event;
                }
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
