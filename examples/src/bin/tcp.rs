//! `tcp`: the calculator's tools served over TCP (and optionally a Unix socket), one MCP
//! session per connection, newline-delimited JSON-RPC.
//!
//! ```text
//! cargo run -p mcp-examples --bin tcp -- [--listen 127.0.0.1:7878] [--unix PATH] [--extra-tools N] [--page-size N]
//!     [--max-connections N] [--idle-timeout SECS] [--line-timeout SECS] [--write-timeout SECS]
//! ```
//!
//! Prints `listening on <addr>` (and `listening on unix:<path>`) to stderr once bound;
//! `--listen 127.0.0.1:0` picks a free port. Stops gracefully on Ctrl-C (SIGINT) or
//! SIGTERM: no new connections, every connection closes after writing the replies it owes,
//! and the process exits with status 0.

use std::process::ExitCode;

use mcp_examples::{calculator_server, init_logging, parse_args, Command, USAGE};

const TCP_USAGE: &str = "\
usage: tcp [--listen ADDR] [--unix PATH] [calculator options] [socket limits]

  --listen ADDR   TCP address to bind (default 127.0.0.1:7878; port 0 picks one)
  --unix PATH     also serve on a Unix socket at PATH (removed first if it exists)

Socket limits: --max-connections N, --idle-timeout SECS, --line-timeout SECS,
--write-timeout SECS (see below). Stops gracefully on Ctrl-C (SIGINT) or SIGTERM.
";

#[tokio::main]
async fn main() -> ExitCode {
    let mut listen = "127.0.0.1:7878".to_string();
    let mut unix: Option<String> = None;
    let mut rest = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => listen = args.next().unwrap_or_default(),
            "--unix" => unix = args.next(),
            _ => rest.push(a),
        }
    }
    let options = match parse_args(rest) {
        Ok(Command::Serve(options)) => options,
        Ok(Command::Help) => {
            eprintln!("{TCP_USAGE}\n{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tcp: {e}\n\n{TCP_USAGE}");
            return ExitCode::from(2);
        }
    };
    init_logging();
    let server = calculator_server(&options);
    // The signal handlers are installed before the address is printed: a signal sent as soon
    // as the server announces itself stops it gracefully instead of killing it.
    let signal = match mcp_examples::stop_signal() {
        Ok(signal) => signal,
        Err(e) => {
            eprintln!("tcp: cannot handle SIGINT/SIGTERM: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stopper = server.shutdown_handle();
    tokio::spawn(async move {
        signal.await;
        stopper.shutdown();
    });
    let listener = match mcp_rs_tokio::bind_tcp(&listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("tcp: cannot bind {listen}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(addr) => eprintln!("listening on {addr}"),
        Err(e) => eprintln!("tcp: {e}"),
    }
    let mut tasks = tokio::task::JoinSet::new();
    #[cfg(unix)]
    if let Some(path) = unix {
        let _ = std::fs::remove_file(&path);
        match tokio::net::UnixListener::bind(&path) {
            Ok(l) => {
                eprintln!("listening on unix:{path}");
                let server = server.clone();
                tasks.spawn(async move { server.serve_unix(l).await });
            }
            Err(e) => {
                eprintln!("tcp: cannot bind unix:{path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let tcp = server.serve_tcp(listener).await;
    while tasks.join_next().await.is_some() {}
    match tcp {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcp: {e}");
            ExitCode::FAILURE
        }
    }
}
