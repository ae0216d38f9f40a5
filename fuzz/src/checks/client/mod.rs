//! `client`: operation sequences (application commands and server frames) against a live
//! sans-IO `Client`, checked by a model that knows every request the client wrote.
//!
//! | invariant | how it is checked |
//! |---|---|
//! | nothing panics, whatever the server sends or the application does | the target runs every op |
//! | every frame the client writes is one JSON-RPC 2.0 object | serde_json reads each (requests, answers, notifications) |
//! | request ids are positive and never reused while a request with that id is live | the model's table of ids |
//! | 2026-07-28 requests carry the revision in `_meta` | read from each request written after a modern handshake |
//! | a response to a live request gives exactly one outcome naming its handle and method; any other response `UnknownResponse` | per frame and per batch item |
//! | a frame the scanner refuses is one `Invalid(Json)` event, only if serde_json refuses it too or it is deeper than the bound | per frame |
//! | a request past its deadline gives one `TimedOut` and one `notifications/cancelled`; the handshake gives `HandshakeFailed` | after every op |
//! | `poll_timeout` is the earliest deadline of a pending request; `requests_in_flight` counts the live ones | after every op |
//! | `cancel` writes `notifications/cancelled` for a pending request, nothing for one waiting for input, and forgets both | per op |
//! | `retry` only for a request waiting for input, with the same method and target; it keeps the handle | per op |
//! | a server `ping` (legacy) is answered `{}`, a request for a capability not declared (or any, 2026-07-28) -32601, each once, in order | the answers drained |
//! | a command that fails (buffer too small, invalid JSON, no slot) changes nothing | the model's counts after it |

mod grammar;
mod model;

// The replay test names only some of these; the fuzz target only `Input`.
#[allow(unused_imports)]
pub use grammar::{Body, Cfg, HandshakeBody, IdForm, Input, Note, Op, Req, SId, SMethod, Text};
pub use model::Report;

use mcp_rs_core::client::{Client, ClientConfig, ClientInfo, Mode, RequestSlot};
use mcp_rs_core::ClientCaps;

/// Runs one input; panics on a violated invariant.
pub fn check(input: &Input) -> Report {
    let cfg = &input.cfg;
    let mut slots = vec![RequestSlot::EMPTY; usize::from(cfg.slots % 6)];
    let mut config = ClientConfig::new(ClientInfo::new("fuzz", "1.0.0"));
    config.mode = if cfg.legacy { Mode::Legacy } else { Mode::Auto };
    config.capabilities = ClientCaps(cfg.caps % 8);
    config.request_timeout_ms = u64::from(cfg.timeout);
    config.max_depth = 4 + cfg.depth % 36;
    let client = Client::from_slots(config, &mut slots);
    let mut run = model::Run::new(client, usize::from(cfg.out % 1024) + 8);
    for op in input.ops.iter().take(256) {
        run.op(op);
    }
    run.finish()
}
