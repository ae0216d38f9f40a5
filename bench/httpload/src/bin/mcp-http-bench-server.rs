//! The mcp-rs side of `bench/http.sh`: mcp-tokio's Streamable HTTP server (both protocol
//! eras on one URL, `/mcp`) with one tool, `add`, of the same shape as the rmcp baseline's
//! (`bench/rmcp-http`): number arguments `a` and `b`, a derived input and output schema, and
//! the sum returned as `structuredContent: {"result": sum}` plus the same JSON as text.
//!
//! ```text
//! mcp-http-bench-server [--addr 127.0.0.1:0] [--workers N|multi]
//! ```
//!
//! `--workers N` (default 0: one per core): `Server::serve_http_per_core` with N worker
//! threads, each a current-thread runtime; `--workers multi`: `serve_http_with` on the
//! multi-thread runtime of `#[tokio::main]`, as before issue #23.
//!
//! Prints `listening on <addr>` to stderr once bound; runs until killed or Ctrl-C. Settings
//! that differ from the defaults, so that the benchmark measures speed and not a refusal:
//! up to 100,000 legacy sessions (default 1,024), all of which one address may hold (default
//! 256 per peer), and 4,096 connections (default 1,024).

use std::process::ExitCode;

use mcp_rs_core::typed::ToolArgs as _;
use mcp_rs_core::{ToolArgs, ToolOutput};
use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{Handler, Limits, Server, ServerInfo, ToolDef, Tools};

/// The arguments of `add`.
#[derive(ToolArgs)]
struct AddArgs {
    /// first operand
    a: f64,
    /// second operand
    b: f64,
}

/// The result of `add`.
#[derive(ToolOutput)]
struct AddResult {
    /// a + b
    result: f64,
}

fn server() -> Server {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("add", <AddArgs as mcp_rs_core::typed::ToolArgs>::SCHEMA)
            .description("Add two numbers")
            .output_schema(<AddResult as mcp_rs_core::typed::ToolOutput>::SCHEMA),
        Handler::sync(|call, r| match AddArgs::parse(call.args()) {
            Ok(AddArgs { a, b }) => r.structured(&AddResult { result: a + b }),
            Err(e) => {
                r.fail(format_args!("Invalid arguments for tool add: {e}"));
            }
        }),
    );
    let info = ServerInfo {
        name: "mcp-rs-http-bench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..ServerInfo::default()
    };
    let limits = Limits {
        max_connections: 4096,
        ..Limits::default()
    };
    let config = mcp_rs_core::Config::new(mcp_rs_tokio::random_key());
    Server::with(info, config, limits, tools)
}

/// `listening on <addr>` on stderr in one write (`eprintln!` may write the line in pieces,
/// and the bench scripts read it while it is being written).
fn announce(addr: std::net::SocketAddr) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(format!("listening on {addr}\n").as_bytes());
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut addr = "127.0.0.1:0".to_owned();
    let mut per_core = Some(0);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--addr", Some(v)) => addr = v,
            ("--workers", Some(v)) if v == "multi" => per_core = None,
            ("--workers", Some(v)) if v.parse::<usize>().is_ok() => per_core = v.parse().ok(),
            _ => {
                eprintln!("usage: mcp-http-bench-server [--addr 127.0.0.1:0] [--workers N|multi]");
                return ExitCode::from(2);
            }
        }
    }
    let Ok(addr) = addr.parse::<std::net::SocketAddr>() else {
        eprintln!("mcp-http-bench-server: --addr needs IP:PORT, got {addr:?}");
        return ExitCode::from(2);
    };
    let listener = match mcp_rs_tokio::bind_tcp(&addr.to_string()).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mcp-http-bench-server: cannot bind {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(a) => announce(a),
        Err(e) => {
            eprintln!("mcp-http-bench-server: {e}");
            return ExitCode::FAILURE;
        }
    }
    let server = server();
    let stopper = server.shutdown_handle();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stopper.shutdown();
        }
    });
    let mut config = HttpConfig::default();
    config.max_sessions = 100_000;
    // The load generator opens every session from one address.
    config.max_sessions_per_peer = config.max_sessions;
    let served = match per_core {
        Some(threads) => server.serve_http_per_core(listener, config, threads).await,
        None => server.serve_http_with(listener, config).await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-http-bench-server: {e}");
            ExitCode::FAILURE
        }
    }
}
