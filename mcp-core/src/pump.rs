//! The pump: one exchange of a drive loop, a frame in and everything it causes out, in
//! the order every transport needs. It is the sequence each adapter used to write for
//! itself (the tokio driver, the blocking loop, the embedded runners); now they share it.
//!
//! | step | what [`Pump::poll`] yields |
//! |---|---|
//! | 1 | the reply to the input, if one is due now ([`Output::Transmit`], route [`Route::Reply`](crate::Route::Reply)) |
//! | 1b | the `subscriptions/listen` stream the input opened, if it did ([`Output::Listen`]) |
//! | 2 | client responses to the server's own requests, one by one ([`Output::Response`], feature `requests`) |
//! | 3 | deferred requests, one by one ([`Output::Call`]): run them now or later, and complete them through the session with their token |
//! | 4 | frames the session queued ([`Output::Transmit`]): list changes, progress, errors of calls abandoned |
//! | 5 | session events ([`Output::Event`]) |
//! | 6 | `None`: the exchange is over; read [`Session::poll_timeout`] and wait for input |
//!
//! Every [`Output::Transmit`] describes bytes in the output buffer passed to that `poll`:
//! send them (with the transport's delimiter) before polling again, since the next `poll`
//! writes over them. An output buffer too small for a queued frame yields
//! `Err(HandleError::OutputTooSmall { required })` and the frame stays queued: poll again
//! with at least `required` bytes (a growable buffer), or end the exchange there (a fixed
//! buffer; the frame is offered again by the next exchange). Polling again with the same
//! small buffer yields the same error.
//!
//! A pump with no input ([`Pump::drain`]) runs steps 4 to 6: what a loop does after
//! completing a call, sending progress or announcing a list change.
//!
//! ```
//! use mcp_rs_core::pump::{Output, Pump};
//! use mcp_rs_core::wire::framing::LineFramer;
//! use mcp_rs_core::{Config, SecretKey, ServerInfo, Session, SessionStorage, Tool, ToolsOnly};
//!
//! static TOOLS: [Tool<'static>; 1] = [Tool::new("echo", r#"{"type":"object"}"#)];
//! let info = ServerInfo { name: "demo", version: "1.0.0", ..Default::default() };
//! let mut storage = SessionStorage::<4>::new();
//! let mut session = Session::new(&info, Config::new(SecretKey([7; 16])), &mut storage);
//! let mut tools = TOOLS; // a `[Tool]` defers every call
//! let (mut rx, mut out) = ([0u8; 512], [0u8; 1024]);
//! let mut framer = LineFramer::new(&mut rx);
//! let mut sent = Vec::new();
//!
//! let input = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"#,
//!     r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
//!     r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#, "\n",
//! );
//! let n = input.len();
//! framer.spare()[..n].copy_from_slice(input.as_bytes());
//! framer.commit(n);
//! let limit = framer.max_len();
//! while let Some(frame) = framer.next_frame() {
//!     let mut pump = Pump::frame(frame, limit, 1_000);
//!     while let Some(output) = pump.poll(&mut session, &mut ToolsOnly(&mut tools[..]), &mut out).unwrap() {
//!         match output {
//!             Output::Transmit(tx) => sent.push(String::from_utf8(out[..tx.len].to_vec()).unwrap()),
//!             Output::Call(call) => {
//!                 // answered at once here; a runtime would run it elsewhere and complete later
//!                 let tx = session.complete(call.token(), &mut out, |r| { r.text("hi"); }).unwrap();
//!                 sent.extend(tx.map(|tx| String::from_utf8(out[..tx.len].to_vec()).unwrap()));
//!             }
//!             _ => {}
//!         }
//!     }
//! }
//! assert!(sent[0].starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]"#));
//! assert_eq!(session.poll_timeout(), None);
//! ```

use crate::model::common::AdapterData;
use crate::model::handler::ServerHandler;
use crate::session::inflight::CallToken;
#[cfg(feature = "requests")]
use crate::session::ClientResponse;
use crate::session::{Call, Event, Incoming, Session, Transmit};
use crate::wire::framing::Frame;
use crate::HandleError;

/// What one exchange brings in.
#[derive(Clone, Copy, Debug)]
enum Input<'i> {
    /// One complete JSON text (a line without its newline, an HTTP body).
    Message(&'i [u8]),
    /// A line longer than the framer's limit: answered once with -32600.
    Oversized { limit: usize },
}

/// One step of an exchange (see the [module docs](self) for the order).
#[derive(Debug)]
#[non_exhaustive]
pub enum Output<'i> {
    /// A frame is in the output buffer: send `out[..len]` (its `route` says which stream
    /// it belongs to) before polling again.
    Transmit(Transmit),
    /// A deferred request: run it now or later and complete it through the session with
    /// its token (or fail it).
    Call(Call<'i>),
    /// A client response to a request a call sent (legacy era, feature `requests`).
    #[cfg(feature = "requests")]
    Response(ClientResponse<'i>),
    /// Something the application may want to know.
    Event(Event),
    /// The input opened a `subscriptions/listen` stream (2026-07-28); its acknowledgement
    /// was the reply. Later list changes go out as transmits routed to this token until it
    /// is cancelled or closed ([`Session::close_subscription`]), and so do the updates of
    /// the resources it subscribed to, which the application writes with
    /// [`Session::resource_updated_next`] when one changes: a transport that keeps one
    /// response per stream (HTTP) ties that response to it.
    Listen(CallToken),
}

/// One exchange of a drive loop; see the [module docs](self).
#[derive(Debug)]
#[must_use = "a pump does nothing until it is polled to `None`"]
pub struct Pump<'i> {
    input: Option<Input<'i>>,
    /// Handed to the session with the input ([`Session::handle_with`]).
    data: Option<AdapterData<'i>>,
    now_ms: u64,
    incoming: Option<Incoming<'i>>,
    /// A listen stream the input opened, not yet yielded.
    listen: Option<CallToken>,
}

impl<'i> Pump<'i> {
    /// An exchange for one complete message at `now_ms` on the session clock (0 leaves
    /// the clock where it is: the clock never goes backwards).
    pub fn message(msg: &'i [u8], now_ms: u64) -> Self {
        Pump {
            input: Some(Input::Message(msg)),
            data: None,
            now_ms,
            incoming: None,
            listen: None,
        }
    }

    /// Attaches adapter data to the input (the principal of an HTTP request): every
    /// request view it produces, inline or deferred, hands it back through `adapter_data`
    /// (see [`Session::handle_with`]).
    pub fn with_data(mut self, data: AdapterData<'i>) -> Self {
        self.data = Some(data);
        self
    }

    /// An exchange for a frame of the line framer, whose buffer holds `limit` bytes
    /// ([`LineFramer::max_len`](crate::wire::framing::LineFramer::max_len)): a line is
    /// handled, an oversized line answered once with -32600 naming the limit.
    pub fn frame(frame: Frame<'i>, limit: usize, now_ms: u64) -> Self {
        Pump {
            input: Some(match frame {
                Frame::Line(line) => Input::Message(line),
                Frame::Oversized { .. } => Input::Oversized { limit },
            }),
            data: None,
            now_ms,
            incoming: None,
            listen: None,
        }
    }

    /// An exchange without input: drains what the session queued (after a completion,
    /// progress, a log message or a list change).
    pub fn drain() -> Self {
        Pump {
            input: None,
            data: None,
            now_ms: 0,
            incoming: None,
            listen: None,
        }
    }

    /// The next thing to do, or `None` when the exchange is over. `out` is where frames
    /// are written; it must hold at least [`MIN_OUTPUT`](crate::MIN_OUTPUT) bytes.
    #[must_use = "a transmit holds a frame to send, a call a request to answer"]
    pub fn poll<S: ServerHandler + ?Sized>(
        &mut self,
        session: &mut Session<'_>,
        server: &mut S,
        out: &mut [u8],
    ) -> Result<Option<Output<'i>>, HandleError> {
        match self.input.take() {
            Some(Input::Message(msg)) => {
                let incoming = session.handle_with(server, self.now_ms, msg, self.data, out)?;
                let reply = incoming.transmit();
                self.listen = incoming.subscription();
                self.incoming = Some(incoming);
                if let Some(tx) = reply {
                    return Ok(Some(Output::Transmit(tx)));
                }
            }
            Some(Input::Oversized { limit }) => {
                return session
                    .handle_oversized(limit, out)
                    .map(|tx| Some(Output::Transmit(tx)));
            }
            None => {}
        }
        if let Some(token) = self.listen.take() {
            return Ok(Some(Output::Listen(token)));
        }
        if let Some(incoming) = self.incoming.as_mut() {
            #[cfg(feature = "requests")]
            if let Some(response) = incoming.next_response(session) {
                return Ok(Some(Output::Response(response)));
            }
            if let Some(call) = incoming.next_call(session) {
                return Ok(Some(Output::Call(call)));
            }
            self.incoming = None;
        }
        match session.poll_transmit(out) {
            Ok(Some(tx)) => return Ok(Some(Output::Transmit(tx))),
            Ok(None) => {}
            Err(e) => {
                return Err(HandleError::OutputTooSmall {
                    required: e.required,
                })
            }
        }
        Ok(session.poll_event().map(Output::Event))
    }
}
