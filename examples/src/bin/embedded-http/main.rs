//! `embedded-http`: the conformance fixtures served by mcp-embedded's heap-free HTTP server
//! ([`mcp_rs_embedded::http`]) on host TCP sockets, to test on a PC what a microcontroller
//! serves over embassy-net.
//!
//! ```text
//! embedded-http [--listen ADDR | --http ADDR] [--report PATH] [--watch-every MS]
//! ```
//!
//! Everything the server uses is set up before it serves: its [`Slot`]s, the legacy
//! session table, the sockets' event buffer ([`mio`], edge-triggered, preallocated
//! events) and one waker per slot. A small executor polls the slot futures when their
//! socket or a list change wakes them. The global allocator counts allocations from the
//! moment serving starts; `--report PATH` writes that count to `PATH` after every
//! connection (`allocations_after_start=N`), and the tests assert that it stays 0.
//!
//! `--watch-every MS`: `test://watched-resource` changes every `MS` milliseconds (the
//! fixture "updates periodically"): subscribed streams get `notifications/resources/updated`
//! ([`Server::resource_updated`](mcp_rs_embedded::http::Server::resource_updated)). Off by
//! default.
//!
//! Prints `listening on ADDR` on stdout and stderr once it accepts connections (the
//! conformance script and the interop suites read it). Limits: [`SLOTS`] connections at once (the next one is answered 503), [`SESSIONS`]
//! legacy sessions, [`RX`]/[`TX`] bytes per request and frame, [`REPLAY`] bytes of events kept
//! per legacy session for resumption; tasks (the tasks extension's fixtures): the
//! [`tasks::Host`] (64 tasks of 4 KiB, 8 queued jobs of 1 KiB) and [`tasks::WORKERS`] task
//! workers, futures of the executor beside the slots.

mod alloc_count;
mod asks;
mod handler;
mod mrtr;
mod net;
// `everything`'s skill (SEP-2640): the same file, so that both servers serve one definition.
#[path = "../everything/skills.rs"]
mod skills;
mod tasks;

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Instant;

use mcp_rs_core::{CallSlot, Config, SecretKey, ServerInfo};
use mcp_rs_embedded::http::{HttpConfig, Server, Slot, TaskWorker};

/// Connection slots (connections served at once). Clients keep connections and GET streams
/// open: idle ones are evicted for new connections.
pub(crate) const SLOTS: usize = 16;
/// Bytes of a legacy session's mailbox for the client's answers (sampling, elicitation,
/// roots) to a running call.
pub(crate) const MAILBOX: usize = 4096;
/// Bytes of a legacy session's replay ring (the events of its SSE responses, for
/// resumption with `Last-Event-ID`).
pub(crate) const REPLAY: usize = 8192;
/// Legacy sessions kept at once (the conformance suite opens one per scenario and ends
/// none; they expire after 10 idle minutes).
pub(crate) const SESSIONS: usize = 128;
/// Bytes of a request (head and body).
pub(crate) const RX: usize = 16 * 1024;
/// Bytes of the largest frame sent.
pub(crate) const TX: usize = 16 * 1024;
/// Calls in flight per session.
pub(crate) const CALLS: usize = 4;

/// One connection's memory.
pub(crate) type HttpSlot = Slot<RX, TX, CALLS>;
/// The server.
pub(crate) type FixtureServer = Server<'static, handler::Fixtures, SESSIONS, SLOTS>;

static INFO: ServerInfo<'static> = ServerInfo {
    name: "mcp-rs-embedded-http",
    version: env!("CARGO_PKG_VERSION"),
    title: Some("mcp-rs embedded HTTP fixtures"),
    description: Some(
        "The MCP conformance suite's fixtures through mcp-embedded's heap-free HTTP server",
    ),
    website_url: None,
    icons: &[],
    instructions: None,
};

/// The start-up instant and the wall clock then (ms since the UNIX epoch).
static EPOCH: OnceLock<(Instant, u64)> = OnceLock::new();

/// Milliseconds since the UNIX epoch (tasks show `createdAt` from it), advanced from
/// start-up by the monotonic clock.
fn clock() -> u64 {
    EPOCH.get().map_or(0, |(start, wall)| {
        let since = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        wall.saturating_add(since)
    })
}

struct Options {
    listen: SocketAddr,
    report: Option<std::path::PathBuf>,
    watch: Option<std::time::Duration>,
}

fn options() -> Result<Options, String> {
    let mut listen: SocketAddr = ([127, 0, 0, 1], 8000).into();
    let mut report = None;
    let mut watch = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" | "--http" => {
                let v = args.next().ok_or("--listen needs an address")?;
                listen = v.parse().map_err(|e| format!("--listen {v}: {e}"))?;
            }
            "--report" => report = Some(args.next().ok_or("--report needs a path")?.into()),
            "--watch-every" => {
                let v = args.next().ok_or("--watch-every needs milliseconds")?;
                let ms: u64 = v.parse().map_err(|e| format!("--watch-every {v}: {e}"))?;
                watch = Some(std::time::Duration::from_millis(ms.max(1)));
            }
            "-h" | "--help" => {
                return Err(
                    "usage: embedded-http [--listen ADDR] [--report PATH] [--watch-every MS]"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Options {
        listen,
        report,
        watch,
    })
}

fn main() {
    let options = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    EPOCH.get_or_init(|| {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        (Instant::now(), wall)
    });
    let listener = match mio::net::TcpListener::bind(options.listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("embedded-http: cannot listen on {}: {e}", options.listen);
            std::process::exit(1);
        }
    };
    let addr = listener.local_addr().unwrap_or(options.listen);
    // Start-up: every piece of memory the server will use, allocated once.
    let key = SecretKey(seed());
    let host: &'static mut tasks::Host = Box::leak(Box::new(tasks::host(key)));
    let storage: &'static mut [[CallSlot; CALLS]; SESSIONS] =
        Box::leak(Box::new([[CallSlot::EMPTY; CALLS]; SESSIONS]));
    let server: &'static FixtureServer = Box::leak(Box::new(
        Server::new(&INFO, Config::new(key), handler::Fixtures { tasks: host })
            .with_http(HttpConfig::new())
            .with_clock(clock)
            .with_sessions(storage)
            .with_responses(Box::leak(Box::new([[0u8; MAILBOX]; SESSIONS])))
            .with_replay(Box::leak(Box::new([[0u8; REPLAY]; SESSIONS]))),
    ));
    let slots: &'static mut [HttpSlot] = Box::leak(
        (0..SLOTS)
            .map(|_| HttpSlot::new())
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let workers: &'static mut [TaskWorker<{ tasks::JOB }>] = Box::leak(
        (0..tasks::WORKERS)
            .map(|_| TaskWorker::new())
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let mut executor = match net::Executor::new(listener, server, slots, workers) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("embedded-http: {e}");
            std::process::exit(1);
        }
    };
    if let Some(period) = options.watch {
        executor.watch_every(period);
    }
    // On stdout and on stderr (where `everything` prints it: the interop suites read it there).
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    eprintln!("listening on {addr}");
    // The skill's manifest (its files' digests) is computed on first use: now, before
    // allocations are counted.
    let _ = skills::skills();
    alloc_count::start();
    let report = options.report;
    let mut served = 0u64;
    let result = executor.run(|ended| {
        served += 1;
        if let Some(path) = &report {
            write_report(path, served, ended);
        }
    });
    if let Err(e) = result {
        eprintln!("embedded-http: {e}");
        std::process::exit(1);
    }
}

/// Writes the allocation count (what the writing itself allocates is not counted).
fn write_report(path: &std::path::Path, connections: u64, _ended: mcp_rs_embedded::http::Ended) {
    let count = alloc_count::since_start();
    alloc_count::excluding(|| {
        let text = format!("allocations_after_start={count}\nconnections={connections}\n");
        // Written aside, then renamed over the report: a reader (or a kill) never finds it
        // half written.
        let aside = path.with_extension("partial");
        if std::fs::write(&aside, text).is_ok() {
            let _ = std::fs::rename(&aside, path);
        }
    });
}

/// A per-run key for cursors and session ids.
fn seed() -> [u8; 16] {
    let t = mcp_examples::time_seed();
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&t.to_le_bytes());
    k[8..].copy_from_slice(&u64::from(std::process::id()).to_le_bytes());
    k
}
