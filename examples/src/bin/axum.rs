//! `axum`: the calculator's tools mounted in an axum app that has routes of its own: the MCP
//! server (Streamable HTTP, both eras) at `/api/mcp`, beside `/health` and `/`.
//!
//! ```text
//! cargo run -p mcp-examples --bin axum -- [--listen 127.0.0.1:3000]
//! ```
//!
//! Prints `listening on <addr>` to stderr once bound (`--listen 127.0.0.1:0` picks a free
//! port). The service comes from [`Server::http_service`] and is nested with
//! `Router::nest_service`: it keeps its per-request protections (Host/Origin checks, body
//! limit, session table and per-peer quota, 2026-07-28 header checks, SSE keep-alive); the
//! client's address reaches the quota through `ConnectInfo`, copied into a [`PeerAddr`].
//! Socket-level limits (connection cap, header and write timeouts) are the host's job:
//! `axum::serve` gives hyper no timer (no head timeout), keeps its default head buffer and
//! has no write timeout or connection cap, so a server exposed beyond loopback would serve its router
//! with hyper's `http1::Builder` (`header_read_timeout`, `max_buf_size`) and a bounded
//! accept loop instead. Stops gracefully on SIGTERM or SIGINT (exit status 0): the MCP
//! sessions end, then axum closes its connections; those still open 2 s later (a client
//! that stopped reading: `axum::serve` has no write timeout) are cut.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request};
use mcp_examples::{calculator_server, init_logging, Options};
use mcp_rs_tokio::http::{HttpConfig, PeerAddr};
use mcp_rs_tokio::Server;

const USAGE: &str = "\
usage: axum [--listen ADDR]

  --listen ADDR   TCP address to bind (default 127.0.0.1:3000; port 0 picks one)

Serves an axum app: GET /health, GET /, and the MCP server (Streamable HTTP) at /api/mcp.
Stops gracefully on Ctrl-C (SIGINT) or SIGTERM.
";

/// How long connections get to close once the server stops, before the process exits.
const DRAIN: Duration = Duration::from_secs(2);

/// The app: the host's own routes and the MCP service nested at `/api/mcp`.
fn app(server: &Server) -> axum::Router {
    axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route(
            "/",
            axum::routing::get(|| async { "an axum app; MCP at /api/mcp\n" }),
        )
        .nest_service("/api/mcp", server.http_service(HttpConfig::default()))
        // The client's address, for the MCP session quota per peer.
        .layer(axum::middleware::map_request(
            |mut req: Request| async move {
                let addr = req
                    .extensions()
                    .get::<ConnectInfo<SocketAddr>>()
                    .map(|c| c.0);
                if let Some(addr) = addr {
                    req.extensions_mut().insert(PeerAddr(addr));
                }
                req
            },
        ))
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut listen = "127.0.0.1:3000".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => match args.next() {
                Some(addr) => listen = addr,
                None => {
                    eprintln!("axum: --listen needs an address\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                eprintln!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("axum: unknown argument {other:?}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    init_logging();
    let server = calculator_server(&Options::default());
    let stopper = server.shutdown_handle();
    // Installed before the address is printed: a signal sent as soon as the server announces
    // itself stops it gracefully.
    let stopped = match mcp_examples::stop_signal() {
        Ok(signal) => signal,
        Err(e) => {
            eprintln!("axum: cannot handle SIGINT/SIGTERM: {e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match mcp_rs_tokio::bind_tcp(&listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("axum: cannot bind {listen}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(bound) => eprintln!("listening on {bound}"),
        Err(e) => eprintln!("axum: {e}"),
    }
    let (signalled, mut signal_seen) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        stopped.await;
        // The MCP sessions end first (their streams close), then axum stops accepting and
        // closes its connections once idle.
        stopper.shutdown();
        let _ = signalled.send(true);
    });
    let mut graceful = signal_seen.clone();
    let serve = axum::serve(
        listener,
        app(&server).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        let _ = graceful.wait_for(|s| *s).await;
    });
    let drained = async {
        let _ = signal_seen.wait_for(|s| *s).await;
        tokio::time::sleep(DRAIN).await;
    };
    tokio::select! {
        served = serve => match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("axum: {e}");
                ExitCode::FAILURE
            }
        },
        () = drained => {
            tracing::warn!("connections still open after {DRAIN:?}: exiting");
            ExitCode::SUCCESS
        }
    }
}
