//! `session`: operation sequences (client messages and application commands) against a live
//! `Session` serving [`FuzzServer`], checked by a model that owes every request exactly one
//! reply and checks every frame, reply and event (the invariants are listed in
//! `fuzz/README.md`).
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | the entry points ([`check`], [`check_messages`]), a run's setup, shared helpers |
//! | `grammar.rs` | the `Arbitrary` grammar ([`Input`], [`SOp`], [`Msg`], [`Body`], ...) and how its parts render |
//! | `render.rs` | [`Msg::render`]: a message as one line of JSON, and the [`Claim`]s its reply must meet |
//! | `server.rs` | [`FuzzServer`]: its tools, resources, prompts and completions; the [`Book`] of sealed `requestState`s |
//! | `model.rs` | the model's bookkeeping: `Model`, call tokens (`Tok`), [`Report`], [`Frame`] |
//! | `expect.rs` | what an incoming message owes, read from its bytes alone (`Expect`) |
//! | `frames.rs` | reading and recording what the server writes: frames, replies, sealed states, notifications |
//! | `runner.rs` | `Runner` (session, server and model together): one [`SOp`] at a time, the end-of-run accounting |
//! | `incoming.rs` | a client message in: its immediate reply, the calls handed out, routed client responses, claims, listen acknowledgements; framed streams |
//! | `drain.rs` | `poll_transmit` and `poll_event`: session and call frames, cancellations, timeouts |
//! | `calls.rs` | the application answering calls: complete (each kind, misuse, the wrong kind), fail |
//! | `notify.rs` | the application's other commands: progress, log, server-to-client requests, time passing, list changes, resource updates |
//! | `tests.rs` | tests of the model's own accounting (run by the replay test) |

mod calls;
mod drain;
mod expect;
mod frames;
mod grammar;
mod incoming;
mod model;
mod notify;
mod render;
mod runner;
mod server;
#[cfg(test)]
mod tests;

// What the fuzz target, the replay test and the seeds (`fuzz/src/seeds.rs`) name.
pub use grammar::{
    ArgsGen, Body, CancelGen, CfgGen, CursorGen, Envelope, IdGen, Input, LevelGen, LongGen,
    MetaGen, Msg, OutIdGen, PromptArgsGen, RefGen, ResultGen, Rev, SOp, StateGen, ToolGen, UriGen,
    ValueGen,
};
pub use model::{Frame, Report};
// The replay test's crate names neither `Gen`, `INVALID_STATE` nor all of the server's
// parts, and exports nothing: there these re-exports would be unused imports.
#[allow(unused_imports)]
pub use render::{Claim, Gen, INVALID_STATE};
#[allow(unused_imports)]
pub use server::{
    Book, FuzzCompletions, FuzzPrompts, FuzzResources, FuzzServer, FuzzTools, PROMPT_NAMES,
    RESOURCES, TEMPLATES, TOOL_NAMES,
};

use grammar::LEVELS;
use mcp_rs_core::{CacheScope, Config, LogLevel, ServerInfo, Session, SessionStorage};
use model::Model;
use runner::Runner;

pub const MODERN: &str = "2026-07-28";

fn jstr(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn decode_str(raw_with_quotes: &str) -> Option<String> {
    serde_json::from_str::<String>(raw_with_quotes).ok()
}

fn config(c: &CfgGen) -> Config {
    Config {
        max_depth: if c.depth < 200 { 32 } else { 1 + c.depth % 100 },
        page_size: if c.page < 128 {
            50
        } else {
            1 + u16::from(c.page % 8)
        },
        max_batch: u16::from(c.batch % 20),
        list_ttl_ms: c.ttl,
        cache_scope: if c.private {
            CacheScope::Private
        } else {
            CacheScope::Public
        },
        list_changed: c.list_changed,
        log_level: LogLevel::from_wire(LEVELS[usize::from(c.level) % 8]).unwrap(),
        state_ttl_ms: 1 + u64::from(c.state_ttl) * 16,
        ..Config::new(mcp_rs_core::SecretKey([0x5a; 16]))
    }
}

fn run<const N: usize>(input: &Input) -> Report {
    let info = ServerInfo {
        name: "fuzz-server",
        version: "0.1.0",
        title: Some("Fuzz Server"),
        description: Some("Under test"),
        website_url: Some("https://example.com"),
        icons: &[],
        instructions: if input.cfg.list_changed {
            Some("Use the tools.")
        } else {
            None
        },
    };
    let config = config(&input.cfg);
    let out_len = if input.cfg.out & 3 == 0 {
        mcp_rs_core::MIN_OUTPUT + usize::from(input.cfg.out) % 4096
    } else {
        65536
    };
    let minimal = input.cfg.offer >= 240;
    let server = FuzzServer::new(minimal, config.state_ttl_ms);
    let book = server.book.clone();
    let mut storage = SessionStorage::<N>::new();
    let session = Session::new(&info, config, &mut storage);
    let mut r = Runner {
        session,
        server,
        out: vec![0u8; out_len],
        m: Model::new(out_len, &config, N, book, minimal),
        claims: Vec::new(),
        _s: std::marker::PhantomData,
    };
    let trace = std::env::var_os("MCP_FUZZ_TRACE").is_some();
    for op in input.ops.iter().take(64) {
        if trace {
            eprintln!("op: {op:?}");
        }
        r.op(op);
        if trace {
            eprintln!(
                "  in flight {}, live {:?}, untaken {}, pool {:?}, now {}",
                r.session.calls_in_flight(),
                r.live_ids(),
                r.m.untaken,
                r.m.pool,
                r.m.now
            );
        }
        r.harvest_cursors();
    }
    r.finish();
    std::mem::take(&mut r.m.report)
}

/// Runs one operation sequence against a fresh session, checking every invariant.
pub fn check(input: &Input) -> Report {
    match input.cfg.cap % 4 {
        0 => run::<1>(input),
        1 => run::<2>(input),
        2 => run::<4>(input),
        _ => run::<8>(input),
    }
}

/// Drives a fixed list of messages (corpus seeds, replay) through a fresh session with
/// default settings and the same checks; deferred calls are completed at the end.
pub fn check_messages(messages: &[&[u8]]) -> Report {
    with_runner(65536, |r| {
        for m in messages {
            r.send(m, 0);
        }
        r.finish();
        std::mem::take(&mut r.m.report)
    })
}

/// Runs `f` on a fresh session (default settings, 8 call slots, `out_len` bytes of
/// output) wrapped in the checking runner.
fn with_runner<R>(out_len: usize, f: impl FnOnce(&mut Runner<'_, '_>) -> R) -> R {
    let info = ServerInfo {
        name: "fuzz-server",
        version: "0.1.0",
        ..Default::default()
    };
    let mut storage = SessionStorage::<8>::new();
    let config = Config::new(mcp_rs_core::SecretKey([0x5a; 16]));
    let server = FuzzServer::new(false, config.state_ttl_ms);
    let book = server.book.clone();
    let session = Session::new(&info, config, &mut storage);
    let mut r = Runner {
        session,
        server,
        out: vec![0u8; out_len],
        m: Model::new(out_len, &config, 8, book, false),
        claims: Vec::new(),
        _s: std::marker::PhantomData,
    };
    f(&mut r)
}
